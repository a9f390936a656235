/* report/cause/wake.h: the wake-up that ended a wait of the thread, and the timer behind it: what the sleep, lock and IPC classifiers share. */
#ifndef HS_REPORT_CAUSE_WAKE_H
#define HS_REPORT_CAUSE_WAKE_H

#include "ca.h"

/* The wake-up record that ended stretch s (a wait), or NULL when it lasted to the window's end or ended
 * otherwise. */
static inline const cm_rec *ca_wake_of(const ca_ctx *c, const ca_seg *s)
{
	if (s->end_rec == SIZE_MAX || s->end_rec >= c->m->n)
		return NULL;
	const cm_rec *r = &c->m->recs[s->end_rec];
	return (r->kind == CM_WAKE || r->kind == CM_WAKE_NEW) && r->a == c->tid ? r : NULL;
}

/* The timer that fired just before wake-up w on w's CPU (the interrupt that woke it), or NULL. */
static inline const cm_rec *ca_timer_before(const ca_ctx *c, const cm_rec *w)
{
	const cm_model *m = c->m;
	size_t i = (size_t)(w - m->recs);
	for (size_t k = i; k-- > 0;) {
		const cm_rec *r = &m->recs[k];
		if (w->ts - r->ts > 2000000u) /* the wake-up is logged within microseconds of its timer */
			break;
		if (r->cpu == w->cpu && r->kind == CM_TIMER_FIRE)
			return r;
	}
	return NULL;
}

/* The thread's own timer start of that timer (x = address) before it slept, or SIZE_MAX. */
static inline size_t ca_own_timer(const ca_ctx *c, const ca_seg *s, int64_t timer)
{
	const cm_model *m = c->m;
	uint64_t look = c->vocab->lookback_ms * 1000000ull;
	uint64_t from = s->run_from ? s->run_from : (s->t0 > look ? s->t0 - look : 0);
	for (size_t k = ca_rec_at(m, s->t0 + 1); k-- > 0;) {
		const cm_rec *r = &m->recs[k];
		if (r->ts < from)
			break;
		if (r->kind == CM_TIMER_START && r->pid == c->tid && r->x == timer)
			return k;
	}
	return SIZE_MAX;
}

#endif
