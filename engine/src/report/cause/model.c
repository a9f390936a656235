/* report/cause/model.c: the window's compact records and every task's state at their start: kept in a bounded ring while a reader streams a file, the dropped ones playing a state machine. */
#include <stdlib.h>
#include <string.h>

#include "hindsight/hmap.h"
#include "hindsight/limits.h"
#include "hindsight/vec.h"
#include "model.h"

enum { CLONE_THREAD_FLAG = 0x00010000 }; /* include/uapi/linux/sched.h: the new task shares the caller's process */

void cm_init(cm_model *m, uint64_t keep_from, uint64_t w1)
{
	memset(m, 0, sizeof *m);
	m->keep_from = keep_from;
	m->end_ts = w1;
	m->first_ts = UINT64_MAX;
	m->kept_from_ts = UINT64_MAX;
}

void cm_free(cm_model *m)
{
	free(m->recs);
	free(m->tasks);
	for (size_t i = 0; i < m->n_strs; i++)
		free(m->strs[i]);
	free(m->strs);
	free(m->cpu_task0);
	free(m->cpu_first);
	if (m->str_index) {
		hs_hmap_free(m->str_index);
		free(m->str_index);
	}
	if (m->task_index) {
		hs_hmap_free(m->task_index);
		free(m->task_index);
	}
	memset(m, 0, sizeof *m);
}

uint32_t cm_intern(cm_model *m, const char *s)
{
	if (!s || !*s)
		return 0;
	if (!m->str_index) {
		m->str_index = calloc(1, sizeof(hs_hmap));
		if (!m->str_index)
			return 0;
	}
	if (!m->n_strs) {
		/* index 0 is "none" */
		m->strs = calloc(16, sizeof *m->strs);
		if (!m->strs)
			return 0;
		m->cap_strs = 16;
		m->strs[0] = NULL;
		m->n_strs = 1;
	}
	size_t len = strlen(s);
	bool added = false;
	uint64_t *v = hs_hmap_put_bytes(m->str_index, s, len, &added);
	if (!v)
		return 0;
	if (!added)
		return (uint32_t)*v;
	if (m->n_strs == m->cap_strs) {
		char **n = realloc(m->strs, m->cap_strs * 2 * sizeof *n);
		if (!n)
			return 0; /* the map now says index 0 for it: "none", harmless */
		m->strs = n;
		m->cap_strs *= 2;
	}
	char *d = malloc(len + 1);
	if (!d)
		return 0;
	memcpy(d, s, len + 1);
	m->strs[m->n_strs] = d;
	*v = m->n_strs;
	return (uint32_t)m->n_strs++;
}

cm_task *cm_task_get(cm_model *m, int32_t tid)
{
	if (!m->task_index) {
		m->task_index = calloc(1, sizeof(hs_hmap));
		if (!m->task_index)
			return NULL;
	}
	if (m->n_tasks >= HS_CAUSE_MAX_TASKS) {
		uint64_t *v = hs_hmap_get_u64(m->task_index, (uint64_t)(uint32_t)tid);
		return v ? &m->tasks[*v] : NULL;
	}
	bool added = false;
	uint64_t *v = hs_hmap_put_u64(m->task_index, (uint64_t)(uint32_t)tid, &added);
	if (!v)
		return NULL;
	if (!added)
		return &m->tasks[*v];
	cm_task *n = hs_array_grow(m->tasks, sizeof *n, m->n_tasks, &m->cap_tasks, 256);
	if (!n) {
		*v = 0; /* points at task 0 (or nothing): tolerable after OOM, the analysis says so */
		return NULL;
	}
	m->tasks = n;
	cm_task *t = &m->tasks[m->n_tasks];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->tgid = tid == 0 ? 0 : -1;
	t->parent = -1;
	t->prio = -1;
	t->cpu0 = -1;
	*v = m->n_tasks++;
	return t;
}

const cm_task *cm_task_find(const cm_model *m, int32_t tid)
{
	if (!m->task_index)
		return NULL;
	uint64_t *v = hs_hmap_get_u64(m->task_index, (uint64_t)(uint32_t)tid);
	return v && *v < m->n_tasks && m->tasks[*v].tid == tid ? &m->tasks[*v] : NULL;
}

int32_t cm_tgid(const cm_model *m, int32_t tid)
{
	const cm_task *t = cm_task_find(m, tid);
	return t && t->tgid >= 0 ? t->tgid : tid;
}

static bool grow_cpus(cm_model *m, unsigned cpu)
{
	if (cpu < m->ncpu)
		return true;
	if (cpu >= HS_CAUSE_MAX_CPUS)
		return false;
	unsigned n = cpu + 1;
	int32_t *t = realloc(m->cpu_task0, n * sizeof *t);
	if (!t)
		return false;
	m->cpu_task0 = t;
	uint64_t *f = realloc(m->cpu_first, n * sizeof *f);
	if (!f)
		return false;
	m->cpu_first = f;
	for (unsigned i = m->ncpu; i < n; i++) {
		m->cpu_task0[i] = -1;
		m->cpu_first[i] = 0;
	}
	m->ncpu = n;
	return true;
}

void cm_set_cpus(cm_model *m, unsigned n)
{
	if (n)
		grow_cpus(m, n - 1);
}

cm_state cm_state_of(int64_t s)
{
	if (!(s & 0xff))
		return CM_ST_READY;
	if (s & 0x02)
		return CM_ST_DISK;
	if (s & 0x81)
		return CM_ST_SLEEP;
	if (s & 0x04)
		return CM_ST_STOPPED;
	if (s & 0x08)
		return CM_ST_TRACED;
	if (s & 0x30)
		return CM_ST_DEAD;
	return CM_ST_UNKNOWN;
}

/* Which kinds of records the files hold (what the analysis can and cannot tell). */
static void note_kind(cm_model *m, const cm_rec *r)
{
	switch ((cm_kind)r->kind) {
	case CM_SWITCH: m->has_switch = true; break;
	case CM_WAKE:
	case CM_WAKE_NEW: m->has_wake = true; break;
	case CM_IRQ_IN: m->has_irq = true; break;
	case CM_SOFT_IN: m->has_softirq = true; break;
	case CM_TIMER_START:
	case CM_TIMER_FIRE: m->has_timer = true; break;
	case CM_BLOCK: m->has_block = true; break;
	case CM_SYSCALL_IN: m->has_syscall = true; break;
	case CM_FILE_FAULT: m->has_fault = true; break;
	case CM_LOCK_IN: m->has_lock = true; break;
	default: break;
	}
}

/* What every record says of tasks whatever its time: names, processes, parents, priorities. */
static void learn(cm_model *m, const cm_rec *r)
{
	cm_task *t;
	switch ((cm_kind)r->kind) {
	case CM_SWITCH:
		if ((t = cm_task_get(m, r->a))) {
			if (r->s)
				t->comm = r->s;
			t->prio = (int32_t)r->y;
		}
		if ((t = cm_task_get(m, r->b))) {
			if (r->s2)
				t->comm = r->s2;
			t->prio = r->z;
		}
		break;
	case CM_WAKE:
	case CM_WAKE_NEW:
		if ((t = cm_task_get(m, r->a))) {
			if (r->s && !t->comm)
				t->comm = r->s;
			if (t->prio < 0)
				t->prio = (int32_t)r->y;
		}
		break;
	case CM_FORK:
		if ((t = cm_task_get(m, r->b))) {
			t->parent = r->a;
			if (r->ts >= m->keep_from)
				t->born = r->ts;
			if (r->s)
				t->comm = r->s;
		}
		break;
	case CM_NEWTASK: {
		int32_t maker = cm_tgid(m, r->pid);
		if ((t = cm_task_get(m, r->a))) {
			t->parent = r->pid;
			t->tgid = (r->x & CLONE_THREAD_FLAG) ? maker : r->a;
			if (r->ts >= m->keep_from && !t->born)
				t->born = r->ts;
			if (r->s)
				t->comm = r->s;
		}
		break;
	}
	case CM_EXEC:
		if ((t = cm_task_get(m, r->a ? r->a : r->pid))) {
			/* the kernel names the task after the file's base name (15 bytes); switches say it next */
			const char *f = cm_str(m, r->s), *sl = strrchr(f, '/');
			char base[16];
			size_t n = strlen(sl ? sl + 1 : f);
			n = n > 15 ? 15 : n;
			memcpy(base, sl ? sl + 1 : f, n);
			base[n] = '\0';
			t->comm = cm_intern(m, base);
			t->tgid = t->tid; /* an exec leaves one thread, the leader */
		}
		break;
	case CM_RENAME:
		if ((t = cm_task_get(m, r->a ? r->a : r->pid)) && r->s)
			t->comm = r->s;
		break;
	default: break;
	}
}

/* The state machine the records before the kept ones play: each task's state and CPU, each CPU's task. */
static void play(cm_model *m, const cm_rec *r)
{
	cm_task *t;
	switch ((cm_kind)r->kind) {
	case CM_SWITCH:
		if ((t = cm_task_get(m, r->a)) && r->a != r->b) {
			t->st0 = cm_state_of(r->x);
			t->st0_since = r->ts;
			t->cpu0 = r->cpu;
		}
		if ((t = cm_task_get(m, r->b))) {
			t->st0 = CM_ST_RUN;
			t->st0_since = r->ts;
			t->cpu0 = r->cpu;
		}
		if (r->cpu < m->ncpu)
			m->cpu_task0[r->cpu] = r->b;
		break;
	case CM_WAKE:
	case CM_WAKE_NEW:
		if ((t = cm_task_get(m, r->a)) && t->st0 != CM_ST_RUN && t->st0 != CM_ST_READY) {
			t->st0 = CM_ST_READY;
			t->st0_since = r->ts;
			t->cpu0 = r->b;
		}
		break;
	case CM_EXIT:
		if ((t = cm_task_get(m, r->a)) && t->st0 != CM_ST_RUN) {
			t->st0 = CM_ST_DEAD;
			t->st0_since = r->ts;
		}
		break;
	default: break;
	}
}

hs_status cm_add(cm_model *m, const cm_rec *r)
{
	if (r->cpu != UINT16_MAX && !grow_cpus(m, r->cpu))
		return HS_ELIMIT;
	if (r->ts < m->first_ts)
		m->first_ts = r->ts;
	if (r->cpu < m->ncpu && !m->cpu_first[r->cpu])
		m->cpu_first[r->cpu] = r->ts ? r->ts : 1;
	note_kind(m, r);
	learn(m, r);
	if (r->ts < m->keep_from) {
		play(m, r);
		return HS_OK;
	}
	if (r->ts > m->end_ts)
		return HS_OK;
	if (m->n == m->cap) {
		if (m->cap >= HS_CAUSE_MAX_RECORDS) {
			/* full: the oldest half leaves (played into the start states), the newest are what matter */
			size_t drop = m->n / 2;
			for (size_t i = 0; i < drop; i++)
				play(m, &m->recs[i]);
			memmove(m->recs, m->recs + drop, (m->n - drop) * sizeof *m->recs);
			m->n -= drop;
			m->dropped += drop;
		} else {
			size_t cap = m->cap ? m->cap * 2 : 4096;
			if (cap > HS_CAUSE_MAX_RECORDS)
				cap = HS_CAUSE_MAX_RECORDS;
			cm_rec *n = realloc(m->recs, cap * sizeof *n);
			if (!n)
				return HS_ENOMEM;
			m->recs = n;
			m->cap = cap;
		}
	}
	m->recs[m->n++] = *r;
	return HS_OK;
}

hs_status cm_add_side(cm_model *m, const cm_rec *r)
{
	note_kind(m, r);
	learn(m, r);
	if (r->ts < m->keep_from || r->ts > m->end_ts)
		return HS_OK;
	if (m->n == m->cap) {
		if (m->cap >= HS_CAUSE_MAX_RECORDS)
			return HS_OK; /* the ring's own records come first */
		cm_rec *n = hs_array_grow(m->recs, sizeof *n, m->n, &m->cap, 4096);
		if (!n)
			return HS_ENOMEM;
		m->recs = n;
	}
	cm_rec *d = &m->recs[m->n++];
	*d = *r;
	d->cpu = r->cpu; /* a side file's CPU numbers are the same machine's */
	return HS_OK;
}

static int rec_cmp(const void *a, const void *b)
{
	const cm_rec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->kind - y->kind;
}

void cm_finish(cm_model *m)
{
	if (m->n > 1) {
		/* a stable order: records of one CPU at one time keep their file order (a switch before the wake-up
		 * it logged), so sort a copy's indexes by (ts, cpu, position) */
		size_t *ix = malloc(m->n * sizeof *ix);
		cm_rec *tmp = malloc(m->n * sizeof *tmp);
		if (ix && tmp) {
			memcpy(tmp, m->recs, m->n * sizeof *tmp);
			for (size_t i = 0; i < m->n; i++)
				ix[i] = i;
			/* insertion-friendly: the ring part is already in time order; a merge sort by (ts, cpu, i) */
			size_t n = m->n;
			size_t *buf = malloc(n * sizeof *buf);
			if (buf) {
				for (size_t w = 1; w < n; w *= 2) {
					for (size_t lo = 0; lo < n; lo += 2 * w) {
						size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
						size_t i = lo, j = mid, k = lo;
						while (i < mid && j < hi) {
							const cm_rec *p = &tmp[ix[i]], *q = &tmp[ix[j]];
							bool take_j = q->ts < p->ts || (q->ts == p->ts && q->cpu < p->cpu);
							buf[k++] = take_j ? ix[j++] : ix[i++];
						}
						while (i < mid)
							buf[k++] = ix[i++];
						while (j < hi)
							buf[k++] = ix[j++];
					}
					memcpy(ix, buf, n * sizeof *ix);
				}
				free(buf);
				for (size_t i = 0; i < n; i++)
					m->recs[i] = tmp[ix[i]];
			} else {
				qsort(m->recs, m->n, sizeof *m->recs, rec_cmp);
			}
		} else {
			qsort(m->recs, m->n, sizeof *m->recs, rec_cmp);
		}
		free(ix);
		free(tmp);
		/* one event recorded by both files (the ring and the key-event file) is kept once: every field alike
		 * (two faults of one thread on two pages of one file 140 us apart differ only in the page, y) */
		size_t o = 0;
		for (size_t i = 0; i < m->n; i++) {
			const cm_rec *r = &m->recs[i];
			bool dup = false;
			for (size_t k = o; k-- > 0 && r->ts - m->recs[k].ts < 200000u && !dup;) {
				const cm_rec *p = &m->recs[k];
				dup = p->kind == r->kind && p->pid == r->pid && p->a == r->a && p->b == r->b && p->x == r->x &&
				      p->y == r->y && p->z == r->z && p->s == r->s && p->s2 == r->s2 &&
				      (r->kind != CM_SWITCH && r->kind != CM_WAKE);
			}
			if (!dup)
				m->recs[o++] = *r;
		}
		m->n = o;
	}
	m->kept_from_ts = m->n ? m->recs[0].ts : m->end_ts;
	if (m->first_ts == UINT64_MAX)
		m->first_ts = 0;
}
