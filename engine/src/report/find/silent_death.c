/* report/find/silent_death.c: processes that started in the window and ended with neither exit_group nor a recorded fatal signal, in a file that records exit_group: something killed them without a trace of why. */
#include <inttypes.h>
#include <stdio.h>

#include "report/find/common.h"

static void find_silent_deaths(hs_report *r)
{
	bool has_group[HS_REPORT_MAX_FILES] = {0};
	for (size_t i = 0; i < r->n_events; i++)
		if (r->events[i].shape == HS_DEC_EXIT_GROUP && r->events[i].file < HS_REPORT_MAX_FILES)
			has_group[r->events[i].file] = true;
	hs_rpt_finding *f = NULL;
	size_t n = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_EXEC || e->file >= HS_REPORT_MAX_FILES || !has_group[e->file])
			continue;
		size_t x = hs_rpt_exit_after(r, i, e->v[0]);
		if (x == SIZE_MAX || r->events[x].end != HS_RPT_END_UNKNOWN)
			continue;
		n++;
		const char *who = hs_rpt_who(&r->events[x]);
		if (!f) {
			if (!(f = hs_rpt_new_finding(r, "killed", 40, r->events[x].ts, (int)e->v[0])))
				return;
			char when[32];
			hs_rpt_fmt_ts(r->events[x].ts, when, sizeof when);
			snprintf(f->verdict, sizeof f->verdict,
				 "%s (pid %" PRId64
				 ", %s) ended at %s s without exit_group and without a recorded fatal signal: it was most "
				 "likely killed.",
				 who, e->v[0], e->subject, when);
			snprintf(f->text, sizeof f->text,
				 "A process that exits on its own calls exit_group; one that dies of a signal shows the signal's "
				 "delivery, when the profile keeps it. Neither was recorded here, while other processes' "
				 "exit_group calls were.");
			snprintf(f->next, sizeof f->next,
				 "which signals the profile's key-event session keeps (its signal filter), and who could kill it "
				 "(a supervisor, a watchdog, a cgroup being removed)");
		} else {
			hs_rpt_add_note(r, f, "also: %s (pid %" PRId64 ", %s)", who, e->v[0], e->subject);
		}
		if (f->n_ev < 8) {
			hs_rpt_add_ev(r, f, i);
			hs_rpt_add_ev(r, f, x);
		}
	}
	if (f)
		snprintf(f->title, sizeof f->title, "%zu process%s ended without exit_group or a recorded fatal signal", n,
			 n == 1 ? "" : "es");
}

const hs_rpt_detector hs_rpt_find_silent_death = {"killed", 40, HS_RPT_LINUX, NULL, .find = find_silent_deaths};
