/* report/cause/r_lock.c: reason "lock-wait": the thread waited until another thread of its own process woke it (a mutex, a condition, a futex: the waker held what it waited for), or for a contended kernel lock; the waker is the culprit and its own time meanwhile is the chain. */
#include <stdio.h>
#include <string.h>

#include "wake.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const cm_model *m = c->m;
	const cm_rec *w = ca_wake_of(c, s);
	uint64_t look = c->vocab->lookback_ms * 1000000ull;
	uint64_t from = s->run_from ? s->run_from : (s->t0 > look ? s->t0 - look : 0);
	size_t klock = ca_last_by(m, CM_LOCK_IN, c->tid, from, s->t0 + 1);
	if (klock != SIZE_MAX && ca_last_by(m, CM_LOCK_OUT, c->tid, m->recs[klock].ts, s->t0 + 1) != SIZE_MAX)
		klock = SIZE_MAX; /* that contention ended before it blocked */
	bool sibling = w && w->ctx == CM_CTX_TASK && w->pid != c->tid && w->pid > 0 && cm_tgid(m, w->pid) == c->tgid;
	if (s->st == CM_ST_DISK && klock == SIZE_MAX)
		return; /* a D wait is a lock wait only when the kernel said it contended one */
	if (!sibling && klock == SIZE_MAX)
		return;
	char what[96] = "", ev[240], t[32];
	size_t sc = ca_last_by(m, CM_SYSCALL_IN, c->tid, from, s->t0 + 1);
	if (klock != SIZE_MAX)
		snprintf(what, sizeof what, "a contended kernel lock");
	else if (sc != SIZE_MAX && ca_match(c, def, cm_str(m, m->recs[sc].s)))
		snprintf(what, sizeof what, "%s() (a mutex or condition variable)", cm_str(m, m->recs[sc].s));
	else
		snprintf(what, sizeof what, "a lock or event of its own process");
	ca_fmt_ns(s->t1 - s->t0, t, sizeof t);
	if (w && w->ctx == CM_CTX_TASK && w->pid > 0) {
		ca_culprit k;
		ca_culprit_task(c, w->pid, w->ts, &k);
		snprintf(ev, sizeof ev, "the thread waited %s in %s until %s (tid %d) woke it on CPU %d", t, what, k.name,
			 (int)w->pid, w->cpu);
		ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
		char chain[400];
		ca_chain(c, w->pid, s->t0, w->ts, chain, sizeof chain);
		ca_set_chain(c, def->id, &k, chain);
	} else {
		snprintf(ev, sizeof ev, "the thread waited %s for %s", t, what);
		ca_claim(c, s->t0, s->t1, def->id, NULL, what, ev);
	}
}

const ca_classifier ca_r_lock = {"lock-wait", 1u << CM_ST_SLEEP | 1u << CM_ST_DISK, classify};
