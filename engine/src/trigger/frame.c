/* trigger/frame.c: frame_time triggers: frame times from atrace slices in trace_marker text or from Present events, per process, against a running median. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "trigger/trigger_int.h"

hs_status hs_frame_new(hs_trig *t)
{
	const hs_trigger *tr = t->pt->trigger;
	if (!(t->frame = calloc(1, sizeof(*t->frame))) ||
	    hs_trig_rings_init(&t->rings, tr, tr->median_frames, 1, HS_TRIGGER_MAX_MEDIAN_FRAMES) != HS_OK)
		return HS_ENOMEM;
	/* A median of half the window is already a fair one; before that the
	 * process's first frames (loading, warming caches) judge nothing. */
	t->frame->warm = (t->rings.cap + 1) / 2;
	return HS_OK;
}

static double median(hs_trig_rings *r, const hs_frame_pid *p, const double *ring)
{
	memcpy(r->scratch, ring, p->n * sizeof(*ring));
	return hs_trig_median(r->scratch, p->n);
}

int hs_frame_feed(hs_trigger_engine *te, hs_trig *t, const hs_key_event *ev, char *buf, size_t cap,
		  hs_frame_hit *hit)
{
	const hs_trigger *tr = t->pt->trigger;
	hs_frame_state *f = t->frame;
	hs_trig_rings *r = &t->rings;
	int pid;
	const char *name = NULL;
	const char *sys = ev->system ? ev->system : "";
	if (r->present) {
		/* The plan routes only the catalog's present events here: each is
		 * one Present call of the process that made it. */
		if (ev->pid <= 0) {
			t->st.unreadable++;
			return -1;
		}
		pid = ev->pid;
	} else if (!hs_trig_slice_begin(t, ev, buf, cap, &pid, &name)) {
		return -1;
	}
	hs_frame_pid *p = hs_trig_slot(f->pids, HS_TRIGGER_FRAME_PIDS, sizeof *p, pid);
	if (r->present && !hs_trig_via(p->system, sizeof p->system, sys))
		return -1; /* the process's frames are measured through another provider */
	p->proc.seen = ++te->seq;
	double *ring = hs_trig_ring(r, (size_t)(p - f->pids), sizeof(*ring));
	if (!ring)
		return -1;
	bool had_start = p->last_start_ns != 0;
	uint64_t prev = p->last_start_ns;
	p->last_start_ns = ev->ts_ns ? ev->ts_ns : 1;
	if (!had_start || ev->ts_ns <= prev)
		return -1; /* the first frame's start, or out of order */
	double frame_ms = (double)(ev->ts_ns - prev) / (double)HS_NS_PER_MS;
	/* Past the ceiling the process was not drawing (alt-tab, loading): no
	 * frame at all, not even for the median. ceiling_ms <= 0: no ceiling. */
	if (tr->ceiling_ms > 0 && frame_ms >= tr->ceiling_ms)
		return -1;
	bool hitch = false;
	double med = 0;
	if (p->frames >= f->warm && frame_ms > tr->threshold_ms) {
		med = median(r, p, ring);
		hitch = frame_ms > tr->ratio * med;
	}
	ring[hs_trig_ring_push(r, &p->n, &p->next)] = frame_ms;
	p->frames++;
	if (!hitch)
		return 0;
	if (r->present)
		snprintf(buf, cap, "%s/%s", sys, ev->name ? ev->name : "?");
	*hit = (hs_frame_hit){.pid = pid,
			      .slice = name,
			      .present = r->present ? buf : NULL,
			      .frame_ms = frame_ms,
			      .median_ms = med,
			      .frames = p->frames};
	return 1;
}

void hs_frame_evidence(const hs_trig *t, const hs_frame_hit *hit, hs_json *j)
{
	const hs_trigger *tr = t->pt->trigger;
	hs_json_kint(j, HS_RUNDOC_HIT_FRAME_PID, hit->pid); /* keys a report reads: hindsight/rundoc.h */
	if (hit->present)
		hs_json_kstr(j, "present", hit->present); /* provider/event: no slice name */
	else
		hs_json_kstr(j, HS_RUNDOC_HIT_SLICE, hit->slice);
	hs_json_kdouble(j, HS_RUNDOC_HIT_FRAME_MS, hit->frame_ms, 3);
	hs_json_kdouble(j, HS_RUNDOC_HIT_MEDIAN_MS, hit->median_ms, 3);
	hs_json_kdouble(j, "threshold_ms", tr->threshold_ms, 3);
	hs_json_kdouble(j, "ratio", tr->ratio, 3);
	hs_json_kdouble(j, "ceiling_ms", tr->ceiling_ms, 3);
	hs_json_kuint(j, "median_frames", t->rings.cap);
	hs_json_kuint(j, "frames", hit->frames);
}
