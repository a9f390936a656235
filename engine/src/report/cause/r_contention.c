/* report/cause/r_contention.c: reason "cpu-contention": the thread was runnable while other tasks had its CPU; the culprit is the one that had it longest (its priority says why the scheduler chose it). */
#include <stdio.h>
#include <string.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	size_t it = 0;
	for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));) {
		if (r->tid <= 0 || r->tid == c->tid)
			continue;
		ca_culprit k;
		ca_culprit_task(c, r->tid, r->t0, &k);
		if (r->comm)
			snprintf(k.name, sizeof k.name, "%s", cm_str(c->m, r->comm)); /* its name then */
		if (r->prio >= 0) {
			k.prio = r->prio;
			if (k.prio < 100) {
				snprintf(k.policy, sizeof k.policy, "real-time");
				k.priority = 99 - k.prio;
			} else if (k.prio < 140) {
				snprintf(k.policy, sizeof k.policy, "normal");
				k.priority = k.prio - 120;
			}
		}
		char what[64], ev[240], t[32];
		snprintf(what, sizeof what, "CPU %d", s->cpu);
		uint64_t a = r->t0 > s->t0 ? r->t0 : s->t0, b = r->t1 < s->t1 ? r->t1 : s->t1;
		ca_fmt_ns(b - a, t, sizeof t);
		snprintf(ev, sizeof ev, "CPU %d ran %s (pid %d, prio %d) for %s while the thread was runnable there", s->cpu,
			 k.name, (int)r->tid, (int)r->prio, t);
		ca_claim(c, r->t0, r->t1, def->id, &k, what, ev);
	}
	/* what is left: the scheduler's own latency, on a CPU about to run it */
	ca_claim(c, s->t0, s->t1, def->id, NULL, "the scheduler's latency", NULL);
}

const ca_classifier ca_r_contention = {"cpu-contention", 1u << CM_ST_READY, classify};
