/* report/cause/r_throttle.c: reason "cgroup-throttle": the thread was runnable, but the scheduler did not run it: its CPU stayed idle, or a task of no higher priority kept the CPU far longer than fair sharing allows, as when the thread's cgroup has spent its CPU quota. */
#include <math.h>
#include <stdio.h>

#include "ca.h"

/* Another task of the same or a weaker priority than the thread's (my_prio), on its CPU. */
static bool holds_back(const ca_ctx *c, const ca_run *r, int32_t my_prio)
{
	return r->tid > 0 && r->tid != c->tid && r->prio >= my_prio;
}

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	double idle_ms = ca_param(def, "idle_ms"), unfair_ms = ca_param(def, "unfair_ms");
	if (isnan(idle_ms) || isnan(unfair_ms))
		return;
	const cm_task *me = cm_task_find(c->m, c->tid);
	int32_t my_prio = me ? me->prio : -1;
	/* idle while it was runnable: a CPU that could have run it did not */
	uint64_t idle = 0;
	size_t it = 0;
	for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));)
		if (r->tid == 0)
			idle += ca_free_in(c, r->t0, r->t1);
	ca_culprit k;
	ca_culprit_thing(&k, "its cgroup's CPU quota");
	if ((double)idle >= idle_ms * 1e6) {
		char ev[240], t[32];
		ca_fmt_ns(idle, t, sizeof t);
		snprintf(ev, sizeof ev, "CPU %d was idle for %s while the thread was runnable there", s->cpu, t);
		it = 0;
		for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));)
			if (r->tid == 0)
				ca_claim(c, r->t0, r->t1, def->id, &k, "its CPU stayed idle while it was ready", ev);
	}
	/* a task of the same or a weaker priority that had the CPU, in all, longer than fair sharing lets one task
	 * run while another of its weight waits (the scheduler gives the waiting one a turn within a slice or two):
	 * the thread was not eligible. Then every such task's time in the stretch is the hold-back. */
	if (my_prio < 100)
		return; /* real-time threads are not bandwidth-throttled this way; their waits are contention */
	if (c->no_cpu_quota && !c->depth)
		return; /* no quota on its cgroup path (tasks.json): dozens of equal tasks or a busier cgroup's weight
			 * keep it waiting that long too, which cpu-contention names by the tasks */
	enum { MAXT = 32 };
	int32_t tids[MAXT];
	uint64_t ns[MAXT];
	size_t nt = 0;
	it = 0;
	for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));) {
		if (!holds_back(c, r, my_prio))
			continue;
		uint64_t d = ca_free_in(c, r->t0, r->t1);
		size_t x = 0;
		while (x < nt && tids[x] != r->tid)
			x++;
		if (x == nt && nt < MAXT) {
			tids[nt] = r->tid;
			ns[nt++] = 0;
		}
		if (x < nt)
			ns[x] += d;
	}
	size_t top = 0;
	for (size_t x = 1; x < nt; x++)
		if (ns[x] > ns[top])
			top = x;
	if (!nt || (double)ns[top] < unfair_ms * 1e6)
		return;
	char ev[240], t[32];
	ca_fmt_ns(ns[top], t, sizeof t);
	const cm_task *hog = cm_task_find(c->m, tids[top]);
	snprintf(ev, sizeof ev,
		 "CPU %d ran %s (pid %d, of no higher priority than the thread's %d) for %s in all while the thread "
		 "waited, never giving it a turn",
		 s->cpu, hog ? cm_str(c->m, hog->comm) : "?", (int)tids[top], (int)my_prio, t);
	it = 0;
	for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));)
		if (holds_back(c, r, my_prio))
			ca_claim(c, r->t0, r->t1, def->id, &k, "a task of no higher priority kept its CPU", ev);
}

const ca_classifier ca_r_throttle = {"cgroup-throttle", 1u << CM_ST_READY, classify};
