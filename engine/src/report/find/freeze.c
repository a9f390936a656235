/* report/find/freeze.c: the application hang detector: a deadline trigger's freeze (snapshot.json's hit: a process that stopped making frames or heartbeats), its start, how long so far or in all, and the thread that made its last frame. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/find/common.h"

/* The thread that wrote pid's last frame start (an atrace "B|pid|" marker) at or before ts, or -1. */
static int last_frame_thread(const hs_report *r, int64_t pid, uint64_t ts, size_t *at)
{
	int tid = -1;
	for (size_t i = 0; i < r->n_events && r->events[i].ts <= ts + 1000000u; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_MARKER || !e->v[0] || strncmp(e->detail, "B|", 2) != 0)
			continue;
		if (strtoll(e->detail + 2, NULL, 10) != pid)
			continue;
		tid = e->pid;
		*at = i;
	}
	return tid;
}

static void find_freeze(hs_report *r)
{
	const hs_rpt_trigger *t = &r->trig;
	if (!t->present || !t->freeze || t->hit_pid <= 0)
		return;
	size_t last = SIZE_MAX;
	int tid = last_frame_thread(r, t->hit_pid, t->freeze_start_ns, &last);
	const char *comm = hs_rpt_comm_at(r, tid > 0 ? tid : (int)t->hit_pid, t->first_hit_ns);
	hs_rpt_finding *f = hs_rpt_new_finding(r, "app-hang", 99, t->first_hit_ns, (int)t->hit_pid);
	if (!f)
		return;
	f->tid = tid > 0 ? tid : (int)t->hit_pid;
	if (last != SIZE_MAX)
		hs_rpt_add_ev(r, f, last);
	char from[32];
	hs_rpt_fmt_ts(t->freeze_start_ns, from, sizeof from);
	uint64_t end = t->freeze_ended ? t->freeze_end_ns : t->first_hit_ns;
	double s = end > t->freeze_start_ns ? (double)(end - t->freeze_start_ns) / 1e9 : 0;
	if (t->freeze_ended)
		snprintf(f->verdict, sizeof f->verdict,
			 "%s%s(pid %" PRId64 ") hung: it made no frame for %.2f s, from %s s until it recovered (deadline %.0f "
			 "ms, its median frame %.1f ms).",
			 comm ? comm : "", comm ? " " : "", t->hit_pid, s, from, t->deadline_ms, t->median_frame_ms);
	else
		snprintf(f->verdict, sizeof f->verdict,
			 "%s%s(pid %" PRId64 ") hung: it made no frame after %s s and was still frozen %.2f s later, when "
			 "the deadline of %.0f ms passed (its median frame %.1f ms).",
			 comm ? comm : "", comm ? " " : "", t->hit_pid, from, s, t->deadline_ms, t->median_frame_ms);
	snprintf(f->title, sizeof f->title, "Hang: %s%s(pid %" PRId64 ") made no frame for %s%.2f s", comm ? comm : "",
		 comm ? " " : "", t->hit_pid, t->freeze_ended ? "" : "at least ", s);
	snprintf(f->text, sizeof f->text,
		 "The process had been making frames (median %.1f ms) and then made none for longer than the trigger's "
		 "deadline of %.0f ms; the trigger fired from its clock while the process %s.",
		 t->median_frame_ms, t->deadline_ms, t->freeze_ended ? "was frozen, and again when it recovered" : "was still frozen");
	snprintf(f->next, sizeof f->next,
		 "where the frozen thread's time went (WHY: running its own code in a loop, blocked and on what, or "
		 "runnable behind whom); a stack of it taken while it hangs (gdb -p, eu-stack)");
}

const hs_rpt_detector hs_rpt_find_freeze = {"app-hang", 99, HS_RPT_LINUX | HS_RPT_WINDOWS, NULL, .find = find_freeze};
