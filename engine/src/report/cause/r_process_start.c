/* report/cause/r_process_start.c: reason "process-start": the thread waited for its CPU while new processes (born in the window) ran on it; the culprit is the one that started most of them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ca.h"

/* A run of a new process: its process was born inside the window (a task that started before it and kept running
 * is contention, not a start). */
static bool is_new_process(const ca_ctx *c, const ca_run *r)
{
	if (r->tid <= 0)
		return false;
	const cm_task *t = cm_task_find(c->m, r->tid);
	if (!t || !t->born)
		return false;
	const cm_task *lead = t->tgid >= 0 ? cm_task_find(c->m, t->tgid) : t;
	return lead && lead->born >= c->cov0;
}

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	double min_tasks = ca_param(def, "min_tasks");
	if (isnan(min_tasks))
		return;
	const cm_model *m = c->m;
	/* who started them: the parent of the most new processes that ran here */
	enum { MAXP = 16 };
	int32_t par[MAXP], kids[MAXP][8];
	unsigned cnt[MAXP], nk[MAXP];
	size_t np = 0;
	unsigned distinct = 0;
	size_t it = 0;
	for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));) {
		if (!is_new_process(c, r))
			continue;
		const cm_task *t = cm_task_find(m, r->tid);
		const cm_task *lead = t->tgid >= 0 && t->tgid != t->tid ? cm_task_find(m, t->tgid) : t;
		int32_t p = lead && lead->parent >= 0 ? cm_tgid(m, lead->parent) : -1;
		size_t k = 0;
		while (k < np && par[k] != p)
			k++;
		if (k == np && np < MAXP) {
			par[np] = p;
			cnt[np] = 0;
			nk[np] = 0;
			np++;
		}
		if (k < np) {
			bool seen = false;
			for (unsigned j = 0; j < nk[k] && !seen; j++)
				seen = kids[k][j] == r->tid;
			if (!seen) {
				if (nk[k] < 8)
					kids[k][nk[k]++] = r->tid;
				cnt[k]++;
				distinct++;
			}
		}
	}
	if ((double)distinct < min_tasks)
		return;
	size_t best = 0;
	for (size_t k = 1; k < np; k++)
		if (cnt[k] > cnt[best])
			best = k;
	ca_culprit who;
	if (np && par[best] > 0)
		ca_culprit_task(c, par[best], s->t0, &who);
	else
		ca_culprit_thing(&who, "new processes");
	char what[96];
	snprintf(what, sizeof what, "%u new processes", distinct);
	it = 0;
	for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));) {
		if (!is_new_process(c, r))
			continue;
		char ev[240], t[32];
		ca_fmt_ns(r->t1 - r->t0, t, sizeof t);
		snprintf(ev, sizeof ev, "CPU %d ran %s (pid %d), a process started %.1f ms before, for %s", s->cpu,
			 cm_str(m, r->comm), (int)r->tid, (double)(r->t0 - cm_task_find(m, r->tid)->born) / 1e6, t);
		ca_claim(c, r->t0, r->t1, def->id, &who, what, ev);
	}
}

const ca_classifier ca_r_process_start = {"process-start", 1u << CM_ST_READY, classify};
