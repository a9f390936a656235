/* report/find/activity.c: what ran, when nothing else stands out: programs started in the window grouped by file with how they ended ("6 x /bin/true exec -> exit 0 in 0.4 s"), and processes that ended whose start is before the window. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/find/common.h"
#include "report/order.h"

typedef struct {
	char file[64];
	unsigned platform;
	size_t n, status_n[4];
	int64_t status[4];
	size_t other, killed, crashed, open;
	uint64_t first, last;
	size_t ev;
} start_group;

/* An exit code as each platform writes it: a status number, or the Windows code in hex. */
static void code_text(unsigned platform, int64_t code, char *buf, size_t cap)
{
	if (platform == HS_RPT_WINDOWS)
		snprintf(buf, cap, "0x%08" PRIX32, (uint32_t)code);
	else
		snprintf(buf, cap, "%" PRId64, code);
}

/* How a program start is called where it comes from: an exec on Linux, a process start on Windows. */
static const char *start_verb(unsigned platform)
{
	return platform == HS_RPT_WINDOWS ? "start" : "exec";
}

/* The starts, grouped; the number of starts. */
static uint64_t group_starts_n(const void *g)
{
	return ((const start_group *)g)->n;
}

static size_t group_starts(hs_report *r, start_group *g, size_t *ng, bool *started)
{
	size_t total = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_EXEC)
			continue;
		total++;
		size_t k = 0;
		while (k < *ng && strcmp(g[k].file, e->subject) != 0)
			k++;
		if (k == *ng) {
			if (*ng == HS_REPORT_MAX_EXEC_GROUPS)
				continue;
			memset(&g[k], 0, sizeof g[k]);
			snprintf(g[k].file, sizeof g[k].file, "%s", e->subject);
			g[k].platform = e->platform;
			g[k].first = e->ts;
			g[k].ev = i;
			(*ng)++;
		}
		start_group *p = &g[k];
		p->n++;
		p->last = e->ts;
		size_t x = hs_rpt_exit_after(r, i, e->v[0]);
		if (x == SIZE_MAX) {
			p->open++;
			continue;
		}
		started[x] = true;
		p->last = r->events[x].ts;
		switch (r->events[x].end) {
		case HS_RPT_END_STATUS: {
			int64_t st = r->events[x].end_code;
			size_t s = 0;
			while (s < 4 && p->status_n[s] && p->status[s] != st)
				s++;
			if (s < 4) {
				p->status[s] = st;
				p->status_n[s]++;
			} else {
				p->other++;
			}
			break;
		}
		case HS_RPT_END_SIGNAL:
		case HS_RPT_END_OOM: p->killed++; break;
		case HS_RPT_END_CRASH: p->crashed++; break;
		default: p->other++; break;
		}
	}
	return total;
}

static void note_group(hs_report *r, hs_rpt_finding *f, const start_group *p)
{
	hs_strbuf sb = {0};
	char span[32], code[32];
	hs_rpt_ms_after(p->first, p->last, span, sizeof span);
	hs_sb_printf(&sb, "%zu x %s %s ->", p->n, p->file, start_verb(p->platform));
	const char *sep = " ";
	for (size_t s = 0; s < 4 && p->status_n[s]; s++) {
		code_text(p->platform, p->status[s], code, sizeof code);
		hs_sb_printf(&sb, "%sexit %s", sep, code);
		if (p->status_n[s] != p->n)
			hs_sb_printf(&sb, " (%zu)", p->status_n[s]);
		sep = ", ";
	}
	const struct {
		size_t n;
		const char *what;
	} ends[] = {{p->killed, "killed"},
		    {p->crashed, "crashed"},
		    {p->open, "still running or exit not seen"},
		    {p->other, "ended otherwise"}};
	for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++)
		if (ends[k].n) {
			hs_sb_printf(&sb, "%s%s (%zu)", sep, ends[k].what, ends[k].n);
			sep = ", ";
		}
	hs_sb_printf(&sb, " in %s", span);
	if (sb.oom)
		r->oom = true;
	else
		hs_rpt_add_note(r, f, "%s", hs_sb_cstr(&sb));
	hs_sb_free(&sb);
	hs_rpt_add_ev(r, f, p->ev);
}

/* Processes that ended whose start is not in the window, by name and ending. */
typedef struct {
	const char *who;
	hs_rpt_end end;
	int64_t code;
	size_t n, ev;
} end_group;

static void find_activity(hs_report *r)
{
	start_group *g = hs_rpt_calloc(r, HS_REPORT_MAX_EXEC_GROUPS, sizeof *g);
	bool *started = hs_rpt_calloc(r, r->n_events, sizeof *started);
	end_group ends[16];
	size_t ng = 0, n_ends = 0, ended = 0;
	if (!g || !started)
		goto out;
	size_t total = group_starts(r, g, &ng, started);
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_EXIT || !e->v[1] || started[i] || e->end == HS_RPT_END_UNKNOWN)
			continue;
		ended++;
		const char *who = hs_rpt_who(e);
		size_t k = 0;
		while (k < n_ends && (strcmp(ends[k].who, who) || ends[k].end != e->end || ends[k].code != e->end_code))
			k++;
		if (k == n_ends && n_ends < sizeof ends / sizeof ends[0])
			ends[n_ends++] = (end_group){who, e->end, e->end_code, 0, i};
		if (k < n_ends)
			ends[k].n++;
	}
	if (!total && !ended)
		goto out;
	hs_rpt_finding *f = hs_rpt_new_finding(r, "activity", 5, total ? g[0].first : r->win_first, -1);
	if (!f)
		goto out;
	char more[64] = "";
	if (ended)
		snprintf(more, sizeof more, "; %zu more ended", ended);
	snprintf(f->title, sizeof f->title, "%zu program%s started in the window%s", total, total == 1 ? "" : "s", more);
	snprintf(f->verdict, sizeof f->verdict,
		 "Nothing went wrong that this report recognises: no %s in the window; %zu program%s started%s.",
		 r->absent, total, total == 1 ? "" : "s", more);
	snprintf(f->text, sizeof f->text, "Programs started%s, grouped by file, with how they ended%s.",
		 r->platforms & HS_RPT_LINUX ? " (exec)" : "", ended ? "; then processes that ended, started before the window" : "");
	snprintf(f->next, sizeof f->next,
		 "nothing here points at a fault; the ring session's file (analyze summary) has the rest");
	/* the most frequent first: the notes are capped */
	hs_rpt_order_most(g, ng, sizeof *g, group_starts_n);
	for (size_t k = 0; k < ng; k++)
		note_group(r, f, &g[k]);
	if (ng > 20 || ng == HS_REPORT_MAX_EXEC_GROUPS)
		hs_rpt_add_note(r, f, "(%s programs than the 20 most frequent shown)",
				ng == HS_REPORT_MAX_EXEC_GROUPS ? "more than 512" : "more");
	for (size_t k = 0; k < n_ends && f->n_notes < 20; k++) {
		const hs_rpt_event *e = &r->events[ends[k].ev];
		char how[96], code[32];
		code_text(e->platform, ends[k].code, code, sizeof code);
		if (ends[k].end == HS_RPT_END_SIGNAL) {
			char sb[24];
			snprintf(how, sizeof how, "was killed by %s", hs_linux_signal_name(ends[k].code, sb, sizeof sb));
		} else if (ends[k].end == HS_RPT_END_OOM) {
			snprintf(how, sizeof how, "was killed by the OOM killer");
		} else {
			snprintf(how, sizeof how, "exited with %s%s", e->platform == HS_RPT_WINDOWS ? "" : "status ", code);
		}
		hs_rpt_add_note(r, f, "%zu x %s %s", ends[k].n, ends[k].who, how);
		hs_rpt_add_ev(r, f, ends[k].ev);
	}
out:
	free(g);
	free(started);
}

const hs_rpt_detector hs_rpt_find_activity = {"activity", 5, HS_RPT_LINUX | HS_RPT_WINDOWS, NULL,
					      .find = find_activity};
