/* report/cause/timeline.c: the thread's stretches of running, waiting for a CPU and blocking, each CPU's tasks and interrupts, and the record queries the classifiers ask. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ca.h"
#include "hindsight/regex.h"
#include "hindsight/vec.h"

size_t ca_rec_at(const cm_model *m, uint64_t ts)
{
	return hs_lower_bound_u64(m->recs, m->n, sizeof *m->recs, offsetof(cm_rec, ts), ts);
}

size_t ca_last_by(const cm_model *m, cm_kind kind, int32_t tid, uint64_t from, uint64_t before)
{
	for (size_t i = ca_rec_at(m, before); i-- > 0;) {
		const cm_rec *r = &m->recs[i];
		if (r->ts < from)
			break;
		if (r->kind == kind && (tid < 0 || r->pid == tid))
			return i;
	}
	return SIZE_MAX;
}

void ca_fmt_ns(uint64_t ns, char *buf, size_t cap)
{
	if (ns >= 1000000000ull)
		snprintf(buf, cap, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, cap, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, cap, "%" PRIu64 " us", ns / 1000u);
}

double ca_param(const hs_cause_def *def, const char *name)
{
	return def ? hs_cause_param_get(def, name, NAN) : NAN;
}

void ca_culprit_thing(ca_culprit *out, const char *what)
{
	memset(out, 0, sizeof *out);
	out->tid = out->tgid = -1;
	out->prio = -1;
	snprintf(out->what, sizeof out->what, "%s", what);
	out->tasks = 0;
}

/* The name a task had at ts: the switch records around it carry it (after a prctl or an exec, the new one). */
static uint32_t name_at(const cm_model *m, int32_t tid, uint64_t ts)
{
	size_t i = ca_rec_at(m, ts);
	for (size_t k = i; k < m->n && k < i + 20000; k++) {
		const cm_rec *r = &m->recs[k];
		if (r->kind == CM_SWITCH && r->a == tid && r->s)
			return r->s;
		if (r->kind == CM_SWITCH && r->b == tid && r->s2)
			return r->s2;
	}
	for (size_t k = i; k-- > 0 && k + 20000 > i;) {
		const cm_rec *r = &m->recs[k];
		if (r->kind == CM_SWITCH && r->b == tid && r->s2)
			return r->s2;
		if (r->kind == CM_SWITCH && r->a == tid && r->s)
			return r->s;
	}
	const cm_task *t = cm_task_find(m, tid);
	return t ? t->comm : 0;
}

void ca_culprit_task(const ca_ctx *c, int32_t tid, uint64_t ts, ca_culprit *out)
{
	memset(out, 0, sizeof *out);
	const cm_model *m = c->m;
	const cm_task *t = cm_task_find(m, tid);
	out->is_task = true;
	out->tid = tid;
	out->tgid = cm_tgid(m, tid);
	out->tasks = 1;
	snprintf(out->name, sizeof out->name, "%s", cm_str(m, name_at(m, tid, ts)));
	if (!out->name[0])
		snprintf(out->name, sizeof out->name, "tid %d", (int)tid);
	if (out->tgid != tid) {
		const cm_task *lead = cm_task_find(m, out->tgid);
		if (lead && lead->comm && strcmp(cm_str(m, lead->comm), out->name) != 0)
			snprintf(out->process, sizeof out->process, "%s", cm_str(m, lead->comm));
	}
	out->prio = t ? t->prio : -1;
	/* the prio the kernel logged: deadline tasks -1, real-time 0..99 (99 - rt priority), normal 100..139 */
	if (out->prio >= 0 && out->prio < 100) {
		snprintf(out->policy, sizeof out->policy, "real-time");
		out->priority = 99 - out->prio;
	} else if (out->prio >= 100 && out->prio < 140) {
		snprintf(out->policy, sizeof out->policy, "normal");
		out->priority = out->prio - 120;
	}
}

void ca_cpu_runs(const ca_ctx *c, int cpu, const ca_run **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	if (cpu >= 0 && (unsigned)cpu < c->m->ncpu && c->runs) {
		*v = c->runs[cpu];
		*n = c->n_runs[cpu];
	}
}

void ca_cpu_irqs(const ca_ctx *c, int cpu, const ca_irq **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	if (cpu >= 0 && (unsigned)cpu < c->m->ncpu && c->irqs) {
		*v = c->irqs[cpu];
		*n = c->n_irqs[cpu];
	}
}

/* The list is in start order: a run that ends before the stretch is passed over, one that starts after it ends the
 * walk. */
const ca_run *ca_seg_run_next(const ca_ctx *c, const ca_seg *s, size_t *i)
{
	const ca_run *v;
	size_t n;
	ca_cpu_runs(c, s->cpu, &v, &n);
	for (; *i < n && v[*i].t0 < s->t1; ++*i)
		if (v[*i].t1 > s->t0)
			return &v[(*i)++];
	return NULL;
}

static bool push_run(ca_run **v, size_t *n, size_t *cap, ca_run r)
{
	if (r.t1 <= r.t0)
		return true;
	ca_run *w = hs_array_grow(*v, sizeof *w, *n, cap, 256);
	if (!w)
		return false;
	*v = w;
	w[(*n)++] = r;
	return true;
}

static bool push_irq(ca_irq **v, size_t *n, size_t *cap, ca_irq r)
{
	if (r.t1 <= r.t0)
		return true;
	ca_irq *w = hs_array_grow(*v, sizeof *w, *n, cap, 256);
	if (!w)
		return false;
	*v = w;
	w[(*n)++] = r;
	return true;
}

hs_status ca_build_cpus(ca_ctx *c)
{
	cm_model *m = c->m;
	unsigned nc = m->ncpu;
	c->runs = calloc(nc ? nc : 1, sizeof *c->runs);
	c->n_runs = calloc(nc ? nc : 1, sizeof *c->n_runs);
	c->irqs = calloc(nc ? nc : 1, sizeof *c->irqs);
	c->n_irqs = calloc(nc ? nc : 1, sizeof *c->n_irqs);
	size_t *cap_r = calloc(nc ? nc : 1, sizeof *cap_r), *cap_i = calloc(nc ? nc : 1, sizeof *cap_i);
	ca_run *cur = calloc(nc ? nc : 1, sizeof *cur);
	uint64_t *irq_at = calloc(nc ? nc : 1, sizeof *irq_at), *soft_at = calloc(nc ? nc : 1, sizeof *soft_at);
	int32_t *irq_num = calloc(nc ? nc : 1, sizeof *irq_num), *soft_vec = calloc(nc ? nc : 1, sizeof *soft_vec);
	uint32_t *irq_name = calloc(nc ? nc : 1, sizeof *irq_name);
	uint64_t *seen = calloc(nc ? nc : 1, sizeof *seen); /* each CPU's last record in its current task's name */
	hs_status st = HS_OK;
	if (!c->runs || !c->n_runs || !c->irqs || !c->n_irqs || !cap_r || !cap_i || !cur || !irq_at || !soft_at ||
	    !irq_num || !soft_vec || !irq_name || !seen) {
		st = HS_ENOMEM;
		goto done;
	}
	uint64_t start = m->kept_from_ts;
	for (unsigned k = 0; k < nc; k++) {
		int32_t t = m->cpu_task0[k];
		const cm_task *tk = t >= 0 ? cm_task_find(m, t) : NULL;
		cur[k] = (ca_run){.t0 = start, .tid = t, .comm = tk ? tk->comm : 0, .prio = tk ? tk->prio : -1};
		seen[k] = start;
	}
	for (size_t i = 0; i < m->n; i++) {
		const cm_rec *r = &m->recs[i];
		unsigned k = r->cpu;
		if (k >= nc)
			continue;
		/* a record logged in a task's own context (on trace.dat also an interrupt's, which names the task it
		 * interrupted) names the task on its CPU: when no switch to it was recorded, it is taken to have
		 * started there now. Switches go missing: the kernel drops one between two tasks the session leaves
		 * out (set_event_notrace_pid: the engine's own threads), and a VM's kernel was seen to log no switch-out of its
		 * agent's threads at all. */
		bool names_cur = r->ctx == CM_CTX_TASK || m->irq_pid_current;
		if (names_cur && r->pid >= 0 && cur[k].tid == r->pid)
			seen[k] = r->ts;
		if (names_cur && r->pid >= 0 && cur[k].tid != r->pid && r->kind != CM_SWITCH) {
			ca_run done = cur[k];
			done.t1 = r->ts;
			if (cur[k].tid >= 0 && !push_run(&c->runs[k], &c->n_runs[k], &cap_r[k], done)) {
				st = HS_ENOMEM;
				goto done;
			}
			const cm_task *tk = cm_task_find(m, r->pid);
			cur[k] = (ca_run){.t0 = r->ts, .tid = r->pid, .comm = tk ? tk->comm : 0, .prio = tk ? tk->prio : -1};
			seen[k] = r->ts;
			if (r->pid != 0)
				c->unrecorded++;
		}
		switch ((cm_kind)r->kind) {
		case CM_SWITCH: {
			if (cur[k].tid >= 0 && r->a >= 0 && r->a != cur[k].tid) {
				/* the switch to the task leaving now is not in the ring: the one before ran to its last
				 * record, this one from there (not from its own switch-in: a task spinning in user space
				 * logs nothing, and its whole spin would go to the task before it) */
				ca_run before = cur[k];
				before.t1 = seen[k];
				if (!push_run(&c->runs[k], &c->n_runs[k], &cap_r[k], before)) {
					st = HS_ENOMEM;
					goto done;
				}
				cur[k] = (ca_run){.t0 = seen[k], .tid = r->a, .comm = r->s, .prio = (int32_t)r->y};
				if (r->a != 0)
					c->unrecorded++;
			}
			ca_run done = cur[k];
			done.t1 = r->ts;
			if (done.tid < 0)
				done.tid = r->a, done.comm = r->s, done.prio = (int32_t)r->y;
			if (done.tid == r->a && r->s)
				done.comm = r->s; /* its name at the time */
			/* its prio when it left: a task that made itself real-time while it ran (sched_setscheduler)
			 * switched in with its old prio */
			if (done.tid == r->a && r->y >= 0 && (done.prio < 0 || r->y < done.prio))
				done.prio = (int32_t)r->y;
			if (!push_run(&c->runs[k], &c->n_runs[k], &cap_r[k], done)) {
				st = HS_ENOMEM;
				goto done;
			}
			cur[k] = (ca_run){.t0 = r->ts, .tid = r->b, .comm = r->s2, .prio = r->z};
			seen[k] = r->ts;
			break;
		}
		case CM_IRQ_IN:
			irq_at[k] = r->ts;
			irq_num[k] = r->a;
			irq_name[k] = r->s;
			break;
		case CM_IRQ_OUT:
			if (irq_at[k]) {
				ca_irq q = {.t0 = irq_at[k], .t1 = r->ts, .soft = false, .num = irq_num[k], .name = irq_name[k]};
				if (!push_irq(&c->irqs[k], &c->n_irqs[k], &cap_i[k], q)) {
					st = HS_ENOMEM;
					goto done;
				}
				irq_at[k] = 0;
			}
			break;
		case CM_SOFT_IN:
			soft_at[k] = r->ts;
			soft_vec[k] = r->a;
			break;
		case CM_SOFT_OUT:
			if (soft_at[k]) {
				ca_irq q = {.t0 = soft_at[k], .t1 = r->ts, .soft = true, .num = soft_vec[k]};
				if (!push_irq(&c->irqs[k], &c->n_irqs[k], &cap_i[k], q)) {
					st = HS_ENOMEM;
					goto done;
				}
				soft_at[k] = 0;
			}
			break;
		default: break;
		}
	}
	for (unsigned k = 0; k < nc; k++) {
		ca_run done = cur[k];
		done.t1 = m->end_ts > done.t0 ? m->end_ts : done.t0;
		if (done.tid >= 0 && !push_run(&c->runs[k], &c->n_runs[k], &cap_r[k], done)) {
			st = HS_ENOMEM;
			goto done;
		}
	}
done:
	free(cap_r);
	free(cap_i);
	free(cur);
	free(irq_at);
	free(soft_at);
	free(irq_num);
	free(soft_vec);
	free(irq_name);
	free(seen);
	return st;
}

void ca_free_cpus(ca_ctx *c, unsigned ncpu)
{
	for (unsigned k = 0; c->runs && k < ncpu; k++)
		free(c->runs[k]);
	for (unsigned k = 0; c->irqs && k < ncpu; k++)
		free(c->irqs[k]);
	free(c->runs);
	free(c->n_runs);
	free(c->irqs);
	free(c->n_irqs);
	c->runs = NULL;
	c->irqs = NULL;
}

typedef struct {
	ca_ctx *c;
	size_t cap;
	cm_state st;
	uint64_t since;
	int cpu;
	size_t begin;
	bool after_wake;
	int prev;
	uint64_t last_run;
	bool woke; /* a wait of the thread has ended */
} seg_b;

static bool seg_to(seg_b *b, cm_state st, uint64_t ts, int cpu, size_t rec, bool after_wake)
{
	ca_ctx *c = b->c;
	uint64_t a = b->since > c->cov0 ? b->since : c->cov0, z = ts < c->cov1 ? ts : c->cov1;
	if (z > a) {
		ca_seg *v = hs_array_grow(c->segs, sizeof *v, c->n_segs, &b->cap, 64);
		if (!v)
			return false;
		c->segs = v;
		c->segs[c->n_segs++] = (ca_seg){.t0 = a,
						 .t1 = z,
						 .st = b->st,
						 .cpu = b->cpu,
						 .begin_rec = b->begin,
						 .end_rec = rec,
						 .after_wake = b->after_wake,
						 .prev_state = b->prev,
						 .run_from = b->last_run};
	}
	/* run_from: since the thread last woke (its previous wait ended), preemptions included: a fault, a timer or a
	 * lock taken before a preemption belongs to the wait that follows it (under load, a thread preempted between
	 * its page fault and its D sleep lost the fault). Before the first wait seen, its first time on a CPU. */
	if (b->st == CM_ST_SLEEP || b->st == CM_ST_DISK || b->st == CM_ST_STOPPED || b->st == CM_ST_TRACED) {
		b->last_run = ts;
		b->woke = true;
	} else if (b->st == CM_ST_RUN && !b->woke && !b->last_run) {
		b->last_run = b->since;
	}
	b->prev = (int)b->st;
	b->st = st;
	b->since = ts;
	b->cpu = cpu;
	b->begin = rec;
	b->after_wake = after_wake;
	return true;
}

hs_status ca_build_segs(ca_ctx *c)
{
	cm_model *m = c->m;
	const cm_task *t = cm_task_find(m, c->tid);
	seg_b b = {.c = c, .st = t ? t->st0 : CM_ST_UNKNOWN, .since = m->kept_from_ts, .cpu = t ? t->cpu0 : -1,
		   .begin = SIZE_MAX, .prev = -1};
	free(c->segs);
	c->segs = NULL;
	c->n_segs = 0;
	for (size_t i = 0; i < m->n && m->recs[i].ts <= c->cov1; i++) {
		const cm_rec *r = &m->recs[i];
		bool ok = true;
		/* its own record on a CPU while not known to run there: a switch to it the ring lost */
		if (r->ctx == CM_CTX_TASK && r->pid == c->tid && r->kind != CM_SWITCH &&
		    (b.st != CM_ST_RUN || b.cpu != (int)r->cpu) && r->kind != CM_FORK && r->kind != CM_NEWTASK)
			ok = seg_to(&b, CM_ST_RUN, r->ts, r->cpu, i, false);
		switch ((cm_kind)r->kind) {
		case CM_SWITCH:
			if (r->a == c->tid && r->b != c->tid)
				ok = seg_to(&b, cm_state_of(r->x), r->ts, r->cpu, i, false);
			else if (r->b == c->tid && r->a != c->tid)
				ok = seg_to(&b, CM_ST_RUN, r->ts, r->cpu, i, false);
			else if (b.st == CM_ST_RUN && b.cpu == (int)r->cpu && r->a != c->tid && r->b != c->tid)
				ok = seg_to(&b, CM_ST_UNKNOWN, r->ts, -1, i, false); /* it left this CPU unseen */
			break;
		case CM_WAKE:
		case CM_WAKE_NEW:
			if (r->a == c->tid && b.st != CM_ST_RUN && b.st != CM_ST_READY)
				ok = seg_to(&b, CM_ST_READY, r->ts, r->b, i, true);
			break;
		case CM_MIGRATE:
			if (r->a == c->tid && b.st == CM_ST_READY)
				b.cpu = r->b; /* it waits in another CPU's queue now */
			break;
		case CM_EXIT:
			if (r->a == c->tid)
				ok = seg_to(&b, CM_ST_DEAD, r->ts, -1, i, false);
			break;
		case CM_FORK:
			if (r->b == c->tid && r->ts >= c->cov0) {
				/* born here: nothing before counts (its stretches so far are its parent's business) */
				c->n_segs = 0;
				b.st = CM_ST_READY;
				b.since = r->ts;
				b.cpu = r->cpu;
				b.begin = i;
				c->cov0 = r->ts;
			}
			break;
		default: break;
		}
		if (!ok)
			return HS_ENOMEM;
	}
	if (!seg_to(&b, b.st, c->cov1, b.cpu, SIZE_MAX, false))
		return HS_ENOMEM;
	return HS_OK;
}

struct ca_rx {
	const hs_cause_def *def;
	hs_regex *re;
	bool bad;
};

bool ca_match(ca_ctx *c, const hs_cause_def *def, const char *s)
{
	if (!def || !def->match || !c->rx)
		return false;
	size_t i = 0;
	for (; i < HS_CAUSE_MAX_REASONS && c->rx[i].def && c->rx[i].def != def; i++)
		;
	if (i == HS_CAUSE_MAX_REASONS)
		return false;
	if (!c->rx[i].def) {
		char err[128];
		size_t off = 0;
		c->rx[i].def = def;
		if (hs_regex_compile(def->match, &c->rx[i].re, err, sizeof err, &off) != HS_OK)
			c->rx[i].bad = true; /* rulecheck refuses such a pattern; a report goes on without it */
	}
	return !c->rx[i].bad && c->rx[i].re && hs_regex_match(c->rx[i].re, s);
}

struct ca_rx *ca_rx_new(void)
{
	return calloc(HS_CAUSE_MAX_REASONS, sizeof(struct ca_rx));
}

void ca_rx_free(struct ca_rx *rx)
{
	for (size_t i = 0; rx && i < HS_CAUSE_MAX_REASONS; i++)
		hs_regex_free(rx[i].re);
	free(rx);
}
