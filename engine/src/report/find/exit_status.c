/* report/find/exit_status.c: the exit status detector: processes that ended with a non-zero status of their own (a Linux exit_group's status, a Windows exit code that is no crash), the first with its start, the rest counted by program and status. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/find/common.h"

/* What a non-zero status means and where to look, in each platform's terms (the status between next's parts). */
static const struct {
	unsigned platform;
	const char *text, *next, *next_after;
} platform_words[] = {
	{HS_RPT_LINUX, "A non-zero exit status is the program's own report of a failure.",
	 "the program's own log or stderr for what ", " means"},
	{HS_RPT_WINDOWS,
	 "A non-zero exit status is the program's own report of a failure; 1 is also what TerminateProcess gives by "
	 "default, and 0xC000013A a Ctrl+C or a closed console.",
	 "the program's own log for what ", " means; who ended it (a parent, a service manager, an updater)"},
};

/* Exits of one program with one status after the first. */
typedef struct {
	const char *who, *file;
	int64_t code, pid;
	size_t n, ev;
} exit_group;

static void find_exit_status(hs_report *r)
{
	hs_rpt_finding *bad = NULL;
	exit_group groups[16];
	size_t n_groups = 0, n_more = 0;
	for (size_t x = 0; x < r->n_events; x++) {
		const hs_rpt_event *e = &r->events[x];
		if (e->shape != HS_DEC_EXIT || !e->v[1] || e->end != HS_RPT_END_STATUS || e->end_code == 0)
			continue;
		size_t s = hs_rpt_start_before(r, x, e->v[0]);
		const char *who = hs_rpt_who(e), *file = s != SIZE_MAX ? r->events[s].subject : NULL;
		if (file && !strcmp(file, who))
			file = NULL; /* an image names itself */
		char st[96];
		hs_rpt_status_text(e, st, sizeof st);
		if (!bad) {
			if (!(bad = hs_rpt_new_finding(r, "exit-status", 20, e->ts, (int)e->v[0])))
				return;
			char when[32];
			hs_rpt_fmt_ts(e->ts, when, sizeof when);
			snprintf(bad->title, sizeof bad->title, "%s (pid %" PRId64 ") exited with %s", who, e->v[0], st);
			snprintf(bad->verdict, sizeof bad->verdict,
				 "No %s in this window; %s (pid %" PRId64 "%s%s) exited with %s at %s s.", r->absent, who,
				 e->v[0], file ? ", " : "", file ? file : "", st, when);
			for (size_t k = 0; k < sizeof platform_words / sizeof platform_words[0]; k++)
				if (platform_words[k].platform == e->platform) {
					snprintf(bad->text, sizeof bad->text, "%s", platform_words[k].text);
					snprintf(bad->next, sizeof bad->next, "%s%s%s", platform_words[k].next, st,
						 platform_words[k].next_after);
				}
		} else {
			/* repeats of one program and status are counted, not listed */
			size_t g = 0;
			while (g < n_groups && (strcmp(groups[g].who, who) || groups[g].code != e->end_code))
				g++;
			if (g == n_groups && n_groups < sizeof groups / sizeof groups[0])
				groups[n_groups++] = (exit_group){who, file, e->end_code, e->v[0], 0, x};
			if (g < n_groups)
				groups[g].n++;
			n_more++;
		}
		if (bad->n_ev < 6) {
			if (s != SIZE_MAX)
				hs_rpt_add_ev(r, bad, s);
			hs_rpt_add_ev(r, bad, x);
		}
	}
	for (size_t g = 0; g < n_groups && bad; g++) {
		char st[96];
		hs_rpt_status_text(&r->events[groups[g].ev], st, sizeof st);
		hs_rpt_add_note(r, bad, "also: %zu x %s%s%s%s exited with %s%s%" PRId64 ")", groups[g].n, groups[g].who,
				groups[g].file ? " (" : "", groups[g].file ? groups[g].file : "", groups[g].file ? ")" : "",
				st, groups[g].n == 1 ? " (pid " : " (the first pid ", groups[g].pid);
	}
	if (bad && n_more) {
		char t[sizeof bad->title + 64];
		snprintf(t, sizeof t, "%s, and %zu more non-zero exit%s", bad->title, n_more, n_more == 1 ? "" : "s");
		snprintf(bad->title, sizeof bad->title, "%.*s", (int)(sizeof bad->title - 1), t);
	}
}

const hs_rpt_detector hs_rpt_find_exit_status = {"exit-status", 20, HS_RPT_LINUX | HS_RPT_WINDOWS, NULL,
						 .find = find_exit_status};
