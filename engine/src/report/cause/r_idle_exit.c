/* report/cause/r_power.c: reason "idle-exit": woken onto an idle CPU, the thread waited for that CPU to leave its idle state. */
#include <stdio.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	if (!s->after_wake)
		return;
	ca_culprit k;
	ca_culprit_thing(&k, "the CPU's idle exit");
	size_t it = 0;
	for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));) {
		if (r->tid != 0)
			continue;
		char ev[240];
		snprintf(ev, sizeof ev, "CPU %d was idle when the thread was woken onto it", s->cpu);
		ca_claim(c, r->t0, r->t1, def->id, &k, "an idle CPU waking up", ev);
	}
}

const ca_classifier ca_r_idle_exit = {"idle-exit", 1u << CM_ST_READY, classify};
