/* report/cause/r_sleep.c: reason "sleep": the thread slept on its own timer (a sleep call, a timed wait that timed out): the timer it started before it slept is the one whose interrupt woke it. */
#include <stdio.h>
#include <string.h>

#include "wake.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const cm_model *m = c->m;
	const cm_rec *w = ca_wake_of(c, s);
	ca_culprit k;
	ca_culprit_task(c, c->tid, s->t0, &k);
	if (w && w->ctx != CM_CTX_TASK) {
		const cm_rec *tm = ca_timer_before(c, w);
		if (tm && ca_own_timer(c, s, tm->x) != SIZE_MAX) {
			char ev[240], t[32];
			ca_fmt_ns(s->t1 - s->t0, t, sizeof t);
			snprintf(ev, sizeof ev, "the thread slept %s until the timer it had started fired on CPU %d", t, w->cpu);
			ca_claim(c, s->t0, s->t1, def->id, &k, "its own timer", ev);
			return;
		}
	}
	/* a sleep call the profile records (the vocabulary's `match:` names the calls) */
	uint64_t look = c->vocab->lookback_ms * 1000000ull;
	uint64_t from = s->run_from ? s->run_from : (s->t0 > look ? s->t0 - look : 0);
	size_t sc = ca_last_by(m, CM_SYSCALL_IN, c->tid, from, s->t0 + 1);
	if (sc != SIZE_MAX && ca_match(c, def, cm_str(m, m->recs[sc].s)) &&
	    (!w || w->ctx != CM_CTX_TASK)) {
		char what[64], ev[240];
		snprintf(what, sizeof what, "%s()", cm_str(m, m->recs[sc].s));
		snprintf(ev, sizeof ev, "the thread called %s and slept", what);
		ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
		return;
	}
	/* still asleep at the window's end on a timer it started and that has not fired */
	if (!w && s->end_rec == SIZE_MAX) {
		size_t st = ca_last_by(m, CM_TIMER_START, c->tid, from, s->t0 + 1);
		if (st == SIZE_MAX)
			return;
		for (size_t i = ca_rec_at(m, s->t0); i < m->n && m->recs[i].ts <= s->t1; i++)
			if (m->recs[i].kind == CM_TIMER_FIRE && m->recs[i].x == m->recs[st].x)
				return; /* it fired and did not wake it: not this */
		ca_claim(c, s->t0, s->t1, def->id, &k, "its own timer, not yet due",
			 "the thread is asleep on a timer it started, due after the window's end");
	}
}

const ca_classifier ca_r_sleep = {"sleep", 1u << CM_ST_SLEEP, classify};
