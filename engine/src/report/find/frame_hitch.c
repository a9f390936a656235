/* report/find/frame_hitch.c: the frame hitch detector: the long frame a frame_time trigger fired on (snapshot.json's hit), with the slice starts that bound it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/find/common.h"

static void find_hitch(hs_report *r)
{
	const hs_rpt_trigger *t = &r->trig;
	if (!t->present || strcmp(t->kind, "frame_time") != 0)
		return;
	char when[32];
	hs_rpt_fmt_ts(t->first_hit_ns, when, sizeof when);
	/* its name at the hit: a game started by a script was the shell until its exec */
	const char *comm = hs_rpt_comm_at(r, (int)t->hit_pid, t->first_hit_ns);
	hs_rpt_finding *f = hs_rpt_new_finding(r, "frame-hitch", 99, t->first_hit_ns, (int)t->hit_pid);
	if (!f)
		return;
	f->tid = t->hit_tid > 0 ? (int)t->hit_tid : 0;
	/* the slice starts that bound the long frame, and the engine's marker */
	uint64_t from = t->first_hit_ns - (uint64_t)(t->frame_ms * 1e6) - 2000000u;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape == HS_DEC_MARKER && e->ts >= from && e->ts <= t->first_hit_ns + 2000000000ull &&
		    ((e->v[0] && e->pid == t->hit_pid && e->ts <= t->first_hit_ns + 1000000u) || !e->v[0]))
			hs_rpt_add_ev(r, f, i);
	}
	double x = t->median_ms > 0 ? t->frame_ms / t->median_ms : 0;
	snprintf(f->verdict, sizeof f->verdict,
		 "A frame of %s in %s%s(pid %" PRId64 ") took %.1f ms at %s s (median %.1f ms, %.0fx).",
		 t->slice[0] ? t->slice : "?", comm ? comm : "", comm ? " " : "", t->hit_pid, t->frame_ms, when,
		 t->median_ms, x);
	snprintf(f->title, sizeof f->title, "Frame hitch: %.1f ms frame of %s (median %.1f ms)", t->frame_ms,
		 t->slice[0] ? t->slice : "?", t->median_ms);
	snprintf(f->text, sizeof f->text,
		 "The frame that ended at the moment took %.1f ms against a median of %.1f ms over the previous frames; "
		 "the trigger fired on the frame marker that ended it.",
		 t->frame_ms, t->median_ms);
	snprintf(f->next, sizeof f->next,
		 "what pid %" PRId64
		 " did in the %.0f ms before the moment: the ring's sched_switch/sched_waking for it (running, waiting "
		 "for a CPU, or blocked) and who else ran on its CPU",
		 t->hit_pid, t->frame_ms);
}

const hs_rpt_detector hs_rpt_find_frame_hitch = {"frame-hitch", 99, HS_RPT_LINUX | HS_RPT_WINDOWS, NULL,
						 .find = find_hitch};
