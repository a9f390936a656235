/* report/cause/r_app.c: reason "app-cpu": what is left of the thread's running time is its own code. */
#include <stdio.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	ca_culprit k;
	ca_culprit_task(c, c->tid, s->t0, &k);
	char what[64], ev[240], t[32];
	snprintf(what, sizeof what, "its own code on CPU %d", s->cpu);
	ca_fmt_ns(s->t1 - s->t0, t, sizeof t);
	snprintf(ev, sizeof ev, "the thread ran on CPU %d for %s", s->cpu, t);
	ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
}

const ca_classifier ca_r_app = {"app-cpu", 1u << CM_ST_RUN, classify};
