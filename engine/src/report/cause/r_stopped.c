/* report/cause/r_stopped.c: reason "stopped": the thread was stopped by a stop signal (who sent it) or by a debugger. */
#include <stdio.h>

#include "ca.h"
#include "hindsight/event_decode.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const cm_model *m = c->m;
	uint64_t look = c->vocab->lookback_ms * 1000000ull;
	/* the stop signal aimed at it or its process, the newest before it stopped */
	const cm_rec *sig = NULL;
	for (size_t k = ca_rec_at(m, s->t0 + 1); k-- > 0 && !sig;) {
		const cm_rec *r = &m->recs[k];
		if (s->t0 - r->ts > look && r->ts < s->t0)
			break;
		if (r->kind == CM_SIGNAL && (r->b == c->tid || r->b == c->tgid) &&
		    hs_linux_signal_action(r->a) == HS_SIGACT_STOP)
			sig = r;
	}
	char what[96], ev[240], t[32], sb[24];
	ca_fmt_ns(s->t1 - s->t0, t, sizeof t);
	if (sig) {
		ca_culprit k;
		if (sig->ctx == CM_CTX_TASK && sig->pid > 0)
			ca_culprit_task(c, sig->pid, sig->ts, &k);
		else
			ca_culprit_thing(&k, "the kernel");
		snprintf(what, sizeof what, "%s", hs_linux_signal_name(sig->a, sb, sizeof sb));
		snprintf(ev, sizeof ev, "%s (pid %d) sent %s to the thread's process; it stayed stopped for %s", k.name,
			 (int)k.tgid, what, t);
		ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
		return;
	}
	ca_culprit k;
	ca_culprit_thing(&k, s->st == CM_ST_TRACED ? "a debugger (ptrace)" : "a stop signal the trace does not hold");
	snprintf(ev, sizeof ev, "the thread was stopped (%s) for %s", s->st == CM_ST_TRACED ? "traced" : "T", t);
	ca_claim(c, s->t0, s->t1, def->id, &k, s->st == CM_ST_TRACED ? "a debugger" : "a stop signal", ev);
}

const ca_classifier ca_r_stopped = {"stopped", 1u << CM_ST_STOPPED | 1u << CM_ST_TRACED, classify};
