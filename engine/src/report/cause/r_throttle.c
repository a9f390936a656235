/* report/cause/r_throttle.c: reason "cgroup-throttle": the thread was runnable, but the scheduler did not run it: its CPU stayed idle, or a task of no higher priority kept the CPU far longer than fair sharing allows, as when the thread's cgroup has spent its CPU quota. */
#include <math.h>
#include <stdio.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	double idle_ms = ca_param(def, "idle_ms"), unfair_ms = ca_param(def, "unfair_ms");
	if (isnan(idle_ms) || isnan(unfair_ms))
		return;
	const ca_run *r;
	size_t n;
	ca_cpu_runs(c, s->cpu, &r, &n);
	const cm_task *me = cm_task_find(c->m, c->tid);
	int32_t my_prio = me ? me->prio : -1;
	/* idle while it was runnable: a CPU that could have run it did not */
	uint64_t idle = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].t1 <= s->t0)
			continue;
		if (r[i].t0 >= s->t1)
			break;
		if (r[i].tid == 0)
			idle += ca_free_in(c, r[i].t0, r[i].t1);
	}
	ca_culprit k;
	ca_culprit_thing(&k, "its cgroup's CPU quota");
	if ((double)idle >= idle_ms * 1e6) {
		char ev[240], t[32];
		ca_fmt_ns(idle, t, sizeof t);
		snprintf(ev, sizeof ev, "CPU %d was idle for %s while the thread was runnable there", s->cpu, t);
		for (size_t i = 0; i < n; i++) {
			if (r[i].t1 <= s->t0)
				continue;
			if (r[i].t0 >= s->t1)
				break;
			if (r[i].tid == 0)
				ca_claim(c, r[i].t0, r[i].t1, def->id, &k, "its CPU idle while it was runnable", ev);
		}
	}
	/* a task of the same or a weaker priority that held the CPU longer than a fair share allows: the thread
	 * was not eligible to run */
	if (my_prio < 100)
		return; /* real-time threads are not bandwidth-throttled this way; their waits are contention */
	for (size_t i = 0; i < n; i++) {
		if (r[i].t1 <= s->t0)
			continue;
		if (r[i].t0 >= s->t1)
			break;
		if (r[i].tid <= 0 || r[i].tid == c->tid || r[i].prio < my_prio)
			continue;
		uint64_t a = r[i].t0 > s->t0 ? r[i].t0 : s->t0, b = r[i].t1 < s->t1 ? r[i].t1 : s->t1;
		if ((double)(b - a) < unfair_ms * 1e6)
			continue;
		char ev[240], t[32];
		ca_fmt_ns(b - a, t, sizeof t);
		snprintf(ev, sizeof ev,
			 "CPU %d ran %s (pid %d, prio %d, no higher than the thread's %d) for %s without giving the runnable "
			 "thread a turn",
			 s->cpu, cm_str(c->m, r[i].comm), (int)r[i].tid, (int)r[i].prio, (int)my_prio, t);
		ca_claim(c, a, b, def->id, &k, "held back while a task of no higher priority ran", ev);
	}
}

const ca_classifier ca_r_throttle = {"cgroup-throttle", 1u << CM_ST_READY, classify};
