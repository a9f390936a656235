/* report/cause/r_memory.c: reason "memory-stall": the thread reclaimed memory itself (direct or at its memory cgroup's limit), or reclaim or dirty-page throttling put it to sleep. */
#include <inttypes.h>
#include <stdio.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const cm_model *m = c->m;
	ca_culprit k;
	ca_culprit_thing(&k, "memory pressure");
	/* reclaim spans of the thread that overlap the stretch: from its begin (maybe before the stretch) */
	uint64_t look = c->vocab->lookback_ms * 1000000ull;
	size_t i = ca_rec_at(m, s->t0 > look ? s->t0 - look : 0);
	uint64_t in_at = 0;
	for (; i < m->n && m->recs[i].ts < s->t1; i++) {
		const cm_rec *r = &m->recs[i];
		if (r->pid != c->tid)
			continue;
		if (r->kind == CM_RECLAIM_IN) {
			in_at = r->ts;
		} else if (r->kind == CM_RECLAIM_OUT && in_at) {
			if (r->ts > s->t0) {
				char ev[240], t[32];
				ca_fmt_ns(r->ts - in_at, t, sizeof t);
				snprintf(ev, sizeof ev, "the thread reclaimed memory itself for %s (%" PRId64 " pages freed)", t,
					 r->y);
				ca_claim(c, in_at, r->ts, def->id, &k, "reclaiming memory itself", ev);
			}
			in_at = 0;
		}
	}
	if (in_at && s->st != CM_ST_RUN) {
		/* reclaim still going at the stretch's end */
		ca_claim(c, in_at, s->t1, def->id, &k, "reclaiming memory itself",
			 "the thread was still reclaiming memory when the window ended");
	}
	/* a sleep reclaim or dirty-page throttling put it into */
	if (s->st != CM_ST_SLEEP && s->st != CM_ST_DISK)
		return;
	uint64_t from = s->run_from ? s->run_from : (s->t0 > look ? s->t0 - look : 0);
	size_t th = ca_last_by(m, CM_MEM_THROTTLE, c->tid, from, s->t0 + 1);
	size_t dp = ca_last_by(m, CM_DIRTY_PAUSE, c->tid, from, s->t0 + 1);
	if (th != SIZE_MAX) {
		char ev[240];
		snprintf(ev, sizeof ev, "reclaim throttled the thread (%" PRId64 " us delayed)", m->recs[th].y);
		ca_claim(c, s->t0, s->t1, def->id, &k, "reclaim throttling", ev);
	} else if (dp != SIZE_MAX) {
		char ev[240];
		snprintf(ev, sizeof ev, "the thread was paused %" PRId64 " ms for writing faster than the disk takes dirty pages",
			 m->recs[dp].y);
		ca_claim(c, s->t0, s->t1, def->id, &k, "dirty-page throttling", ev);
	}
}

const ca_classifier ca_r_memory = {"memory-stall",
				   1u << CM_ST_RUN | 1u << CM_ST_READY | 1u << CM_ST_SLEEP | 1u << CM_ST_DISK, classify};
