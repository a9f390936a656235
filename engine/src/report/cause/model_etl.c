/* report/cause/model_etl.c: a Windows .etl's context switches (CSwitch) and wake-ups (ReadyThread) as the cause model's compact records, with each thread's process and name from the kernel's thread and process records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/hmap.h"
#include "hindsight/vec.h"
#include "hindsight/wait_reason.h"
#include "model.h"

/*
 * Windows onto the model (docs/etl-notes.md, "Wait analysis"), so the analysis above is the one Linux has:
 *
 * - CSwitch is CM_SWITCH: a = OldThreadId, b = NewThreadId, pid = the old thread (the CPU ran it up to here), y and
 *   z their priorities on the model's scale (prio_of), s and s2 their names. x holds the old thread's state as the
 *   prev_state bits the timeline reads, with the wait reason + 1 in its upper 32 bits (0: none), for the classifier
 *   that names Windows waits (r_wait.c): Ready, Standby, DeferredReady (preempted or yielding) are runnable (0); a
 *   wait for a suspension is stopped (0x04, T); a kernel-mode wait for the memory manager (a page read, a free
 *   page, pool, a swap-in) is uninterruptible (0x02, D); every other wait is a sleep (0x01, S); Terminated is dead
 *   (0x10). No wait reason names I/O as such: a thread in a synchronous read waits as Executive or UserRequest, an
 *   S whose waker (a DPC, another process) tells the rest.
 * - ReadyThread is CM_WAKE: a = the thread made ready, pid = the readying thread (the record's own), ctx TASK; a
 *   DPC's readying is CM_CTX_SOFTIRQ (deferred interrupt work, the softirq's counterpart) and one logged on the
 *   idle thread without the DPC flag CM_CTX_HARDIRQ (an interrupt on an idle CPU). ReadyThread does not say which
 *   CPU's queue the thread joins: b is the CPU it ran on next (found once the file is read), else its last one.
 * - A ReadyThread can come before its target's own switch-out (the waker on another CPU readies it while its CPU
 *   is still switching away: tracy PR 1021 saw it too). In time order the wake would fall while the thread still
 *   runs, where a wake-up means nothing, and its wait would end without one. So it is held until that switch-out
 *   and given 1 ns after it, still logged on the waker's CPU. When by then the waker has left every CPU (it waited
 *   itself), a record in its name would make it seem to run there again: the switch-out is then written runnable
 *   (the wait had ended before the thread left the CPU) and the wake-up is dropped.
 * - Thread End is CM_EXIT. A thread's process (its tgid) and its name come from the thread and process records
 *   (Start, End and their rundowns DCStart and DCEnd): a thread's own name where the event carries one, else its
 *   process's image name, as a Linux thread is named after its program. Process ids are tasks too, named after
 *   their image: Windows gives processes and threads ids from one table (client ids), so a process id is never a
 *   thread's, and a culprit's process name is found as a Linux thread group leader's is.
 * - Names and processes known only after a record (the rundown at the end of a circular session) are filled in
 *   once the file is read.
 */

/* What the read knows of a thread. */
typedef struct {
	uint32_t tid;
	uint32_t pid;    /* UINT32_MAX: unknown */
	uint32_t name;   /* its own name (interned), 0 */
	int32_t cpu;     /* the CPU it runs on per the switches, -1 */
	int32_t last_cpu;
	bool pending;    /* a ReadyThread that came while it still ran */
	cm_rec wake;
} thr;

typedef struct {
	cm_model *m;
	bool side;
	const hs_etl_header *h;
	hs_hmap tix; /* tid -> index into t */
	thr *t;
	size_t n, cap;
	hs_hmap pix; /* pid -> interned image name */
	int32_t *cur; /* [ncur]: the thread each CPU runs per the switches, -1 */
	unsigned ncur;
	hs_status st;
	bool oom;
} etl_ctx;

/*
 * A Windows priority (0..31) on the model's scale, where lower is stronger (the kernel prio of Linux): the
 * real-time class 16..31 is real-time priority 16..31 (prio 99 - p), the dynamic class 1..15 and the zero-page
 * thread's 0 are prio 128 - p (the normal priority 8 is 120, Linux's nice 0). The order is kept, so "a task of
 * higher priority" means the same on both systems.
 */
static int32_t prio_of(int8_t p)
{
	if (p < 0 || p > 31)
		return -1;
	return p >= 16 ? 99 - p : 128 - p;
}

static thr *thr_get(etl_ctx *c, uint32_t tid)
{
	bool added = false;
	uint64_t *v = hs_hmap_put_u64(&c->tix, tid, &added);
	if (!v) {
		c->oom = true;
		return NULL;
	}
	if (!added)
		return &c->t[*v];
	thr *w = hs_array_grow(c->t, sizeof *w, c->n, &c->cap, 256);
	if (!w) {
		c->oom = true;
		*v = 0;
		return NULL;
	}
	c->t = w;
	thr *t = &c->t[c->n];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->pid = tid == 0 ? 0 : UINT32_MAX;
	t->cpu = t->last_cpu = -1;
	*v = c->n++;
	return t;
}

static thr *thr_find(const etl_ctx *c, uint32_t tid)
{
	uint64_t *v = hs_hmap_get_u64(&c->tix, tid);
	return v && *v < c->n && c->t[*v].tid == tid ? &c->t[*v] : NULL;
}

static uint32_t image_of(const etl_ctx *c, uint32_t pid)
{
	uint64_t *v = pid == UINT32_MAX ? NULL : hs_hmap_get_u64(&c->pix, pid);
	return v ? (uint32_t)*v : 0;
}

/* A thread's name now: its own, else its process's image. */
static uint32_t name_of(const etl_ctx *c, uint32_t tid)
{
	const thr *t = thr_find(c, tid);
	if (!t)
		return 0;
	return t->name ? t->name : image_of(c, t->pid);
}

static bool grow_cur(etl_ctx *c, unsigned cpu)
{
	if (cpu < c->ncur)
		return true;
	if (cpu >= HS_CAUSE_MAX_CPUS)
		return false;
	int32_t *w = realloc(c->cur, (cpu + 1) * sizeof *w);
	if (!w) {
		c->oom = true;
		return false;
	}
	for (unsigned k = c->ncur; k <= cpu; k++)
		w[k] = -1;
	c->cur = w;
	c->ncur = cpu + 1;
	return true;
}

static void emit(etl_ctx *c, const cm_rec *r)
{
	cm_model *m = c->m;
	switch ((cm_kind)r->kind) {
	case CM_SWITCH: m->has_switch = true; break;
	case CM_WAKE: m->has_wake = true; break;
	default: break;
	}
	hs_status st = c->side ? cm_add_side(m, r) : cm_add(m, r);
	if (st != HS_OK && st != HS_ELIMIT) /* a CPU past the model's limit costs that CPU's records only */
		c->st = st;
}

/* Whether a wait reason is the memory manager's: the thread waits for a page, for memory, for a swap-in. */
static bool paging_wait(int reason)
{
	switch (reason) {
	case HS_WAIT_FREE_PAGE:
	case HS_WAIT_PAGE_IN:
	case HS_WAIT_POOL_ALLOCATION:
	case HS_WAIT_WR_FREE_PAGE:
	case HS_WAIT_WR_PAGE_IN:
	case HS_WAIT_WR_POOL_ALLOCATION:
	case HS_WAIT_WR_VIRTUAL_MEMORY:
	case HS_WAIT_WR_PAGE_OUT:
	case HS_WAIT_WR_PROCESS_IN_SWAP:
	case HS_WAIT_WR_PHYSICAL_FAULT:
	case HS_WAIT_WR_MDL_CACHE: return true;
	default: return false;
	}
}

/* The old thread's state as prev_state bits, its wait reason + 1 above them. */
static int64_t prev_state(const hs_etl_cswitch *cs)
{
	int64_t bits = 0;
	int reason = cs->old_wait_reason;
	switch (cs->old_state) {
	case HS_ETL_THREAD_WAITING:
	case HS_ETL_THREAD_GATE_WAIT:
		if (reason == HS_WAIT_SUSPENDED || reason == HS_WAIT_WR_SUSPENDED)
			bits = 0x04;
		else if (cs->old_wait_mode == HS_ETL_WAIT_KERNEL_MODE && paging_wait(reason))
			bits = 0x02;
		else
			bits = 0x01;
		break;
	case HS_ETL_THREAD_TRANSITION: /* ready, but its kernel stack comes back from the page file first */
	case HS_ETL_THREAD_WAITING_FOR_PROCESS_IN_SWAP: bits = 0x02; break;
	case HS_ETL_THREAD_TERMINATED: bits = 0x10; break;
	default: bits = 0; break; /* Ready, Standby, DeferredReady: preempted or yielding, still runnable */
	}
	if (reason >= 0)
		bits |= (int64_t)(reason + 1) << 32;
	return bits;
}

static void on_cswitch(etl_ctx *c, const hs_etl_record *rec, const hs_etl_cswitch *csw, uint64_t ts)
{
	hs_etl_cswitch cs = *csw;
	if (cs.old_tid == cs.new_tid)
		return;
	unsigned cpu = rec->cpu;
	cm_rec r = {.ts = ts, .kind = CM_SWITCH, .ctx = CM_CTX_TASK, .cpu = (uint16_t)cpu, .pid = (int32_t)cs.old_tid};
	r.a = (int32_t)cs.old_tid;
	r.b = (int32_t)cs.new_tid;
	r.x = prev_state(&cs);
	r.y = prio_of(cs.old_priority);
	r.z = prio_of(cs.new_priority);
	r.s = name_of(c, cs.old_tid);
	r.s2 = name_of(c, cs.new_tid);
	/* a wake-up that came while the old thread still ran belongs right after this */
	thr *ot = thr_get(c, cs.old_tid);
	cm_rec wake;
	bool wake_after = false;
	if (ot && ot->pending) {
		ot->pending = false;
		wake = ot->wake;
		const thr *wt = wake.ctx == CM_CTX_TASK ? thr_find(c, (uint32_t)wake.pid) : NULL;
		if (!(r.x & 0xff)) {
			/* it left runnable: the wake-up changed nothing */
		} else if (wake.ctx != CM_CTX_TASK) {
			wake_after = true;
		} else if (wt && wt->cpu >= 0) {
			wake.cpu = (uint16_t)wt->cpu; /* where the waker runs now */
			wake_after = true;
		} else {
			r.x &= ~(int64_t)0xff; /* the waker is on no CPU any more: the thread left runnable */
		}
		wake.ts = ts + 1;
	}
	thr *nt = thr_get(c, cs.new_tid);
	if (nt)
		nt->pending = false; /* it runs: a held wake-up missed its switch-out (the ring lost it) */
	emit(c, &r);
	if (wake_after)
		emit(c, &wake);
	/* who runs where now (the idle thread is on every idle CPU at once: not followed) */
	if (!grow_cur(c, cpu))
		return;
	ot = thr_find(c, cs.old_tid);
	if (ot && ot->cpu == (int32_t)cpu)
		ot->cpu = -1;
	if (c->cur[cpu] > 0 && (uint32_t)c->cur[cpu] != cs.new_tid) {
		thr *was = thr_find(c, (uint32_t)c->cur[cpu]);
		if (was && was->cpu == (int32_t)cpu)
			was->cpu = -1; /* it left this CPU unrecorded */
	}
	c->cur[cpu] = (int32_t)cs.new_tid;
	nt = thr_find(c, cs.new_tid);
	if (nt && cs.new_tid != 0) {
		nt->cpu = (int32_t)cpu;
		nt->last_cpu = (int32_t)cpu;
	}
}

static void on_ready(etl_ctx *c, const hs_etl_record *rec, const hs_etl_ready_thread *rtp, uint64_t ts)
{
	hs_etl_ready_thread rt = *rtp;
	unsigned cpu = rec->cpu;
	int32_t readier = rt.readier != UINT32_MAX ? (int32_t)rt.readier
			  : cpu < c->ncur && c->cur[cpu] >= 0 ? c->cur[cpu]
							      : -1;
	cm_rec r = {.ts = ts, .kind = CM_WAKE, .cpu = (uint16_t)cpu, .pid = readier, .y = -1};
	r.ctx = (rt.flags & HS_ETL_READY_FROM_DPC) ? CM_CTX_SOFTIRQ : readier <= 0 ? CM_CTX_HARDIRQ : CM_CTX_TASK;
	r.a = (int32_t)rt.tid;
	r.s = name_of(c, rt.tid);
	thr *t = thr_get(c, rt.tid);
	r.b = t && t->last_cpu >= 0 ? t->last_cpu : (int32_t)cpu;
	if (t && t->cpu >= 0) {
		if (!t->pending) {
			t->pending = true; /* it still runs: given after its switch-out */
			t->wake = r;
		}
		return;
	}
	emit(c, &r);
}

/* The records that name threads and processes; a thread's end. */
static void on_thread(etl_ctx *c, const hs_etl_record *rec, uint64_t ts)
{
	hs_etl_thread th;
	if (!hs_etl_decode_thread(rec, &th))
		return;
	thr *t = thr_get(c, th.tid);
	if (!t)
		return;
	t->pid = th.pid;
	if (th.name[0])
		t->name = cm_intern(c->m, th.name);
	cm_task *k = th.tid ? cm_task_get(c->m, (int32_t)th.tid) : NULL;
	if (k) {
		k->tgid = (int32_t)th.pid;
		if (th.opcode == HS_ETLK_OP_START && ts >= c->m->keep_from && ts <= c->m->end_ts)
			k->born = ts;
	}
	if (th.opcode == HS_ETLK_OP_END && th.tid) {
		cm_rec r = {.ts = ts, .kind = CM_EXIT, .ctx = CM_CTX_TASK, .cpu = rec->cpu, .a = (int32_t)th.tid};
		r.pid = rec->tid != UINT32_MAX ? (int32_t)rec->tid : (int32_t)th.tid;
		emit(c, &r);
	}
}

static void on_process(etl_ctx *c, const hs_etl_record *rec, uint64_t ts)
{
	hs_etl_process p;
	if (!hs_etl_decode_process(rec, &p) || !p.image_file_name[0])
		return;
	uint32_t name = cm_intern(c->m, p.image_file_name);
	uint64_t *v = hs_hmap_put_u64(&c->pix, p.pid, NULL);
	if (!v) {
		c->oom = true;
		return;
	}
	*v = name;
	cm_task *k = cm_task_get(c->m, (int32_t)p.pid);
	if (!k)
		return;
	k->comm = name;
	k->tgid = (int32_t)p.pid;
	if (p.opcode == HS_ETLK_OP_START && ts >= c->m->keep_from && ts <= c->m->end_ts)
		k->born = ts;
}

static int on_rec(const hs_etl_record *rec, void *vctx)
{
	etl_ctx *c = vctx;
	if (rec->kind != HS_ETL_SYSTEM && rec->kind != HS_ETL_COMPACT && rec->kind != HS_ETL_PERFINFO)
		return 0;
	uint64_t ts = hs_etl_clock_ns(c->h, rec->timestamp);
	bool in_time = ts <= c->m->end_ts; /* later records still name threads (the rundown at the session's end) */
	hs_etl_cswitch cs;
	hs_etl_ready_thread rt;
	if (in_time && hs_etl_decode_cswitch(rec, &cs))
		on_cswitch(c, rec, &cs, ts);
	else if (in_time && hs_etl_decode_ready_thread(rec, &rt))
		on_ready(c, rec, &rt, ts);
	else if (hs_etlk_classify(rec) == HS_ETLK_THREAD)
		on_thread(c, rec, ts);
	else if (hs_etlk_classify(rec) == HS_ETLK_PROCESS)
		on_process(c, rec, ts);
	return c->oom || c->st != HS_OK;
}

/* After the read: a wake-up's CPU is the one its thread ran on next; names and processes learned late. */
static void fix_up(etl_ctx *c, size_t from)
{
	cm_model *m = c->m;
	hs_hmap open = {0}; /* tid -> 1 + index of its latest wake-up not yet followed by a switch to it */
	for (size_t i = from; i < m->n; i++) {
		cm_rec *r = &m->recs[i];
		if (r->kind == CM_WAKE) {
			uint64_t *v = hs_hmap_put_u64(&open, (uint32_t)r->a, NULL);
			if (v)
				*v = i + 1;
			if (!r->s)
				r->s = name_of(c, (uint32_t)r->a);
		} else if (r->kind == CM_SWITCH) {
			uint64_t *v = hs_hmap_get_u64(&open, (uint32_t)r->b);
			if (v && *v) {
				m->recs[*v - 1].b = r->cpu;
				*v = 0;
			}
			if (!r->s)
				r->s = name_of(c, (uint32_t)r->a);
			if (!r->s2)
				r->s2 = name_of(c, (uint32_t)r->b);
		}
	}
	hs_hmap_free(&open);
	for (size_t i = 0; i < c->n; i++) {
		const thr *t = &c->t[i];
		if (!t->tid)
			continue;
		cm_task *k = cm_task_get(m, (int32_t)t->tid);
		if (!k)
			continue;
		if (k->tgid < 0 && t->pid != UINT32_MAX)
			k->tgid = (int32_t)t->pid;
		if (!k->comm)
			k->comm = name_of(c, t->tid);
	}
}

hs_status cm_read_etl(cm_model *m, const char *path, bool side, char *why, size_t why_cap)
{
	hs_etl *etl = NULL;
	hs_status st = hs_etl_open(path, &etl);
	if (st != HS_OK) {
		char text[HS_PROBLEM_TEXT_MAX] = "";
		if (etl && hs_etl_problem_count(etl))
			hs_problem_format(hs_etl_problem_at(etl, 0), text, sizeof text);
		if (st == HS_EINVAL && !text[0])
			snprintf(why, why_cap, "%s is neither a trace.dat nor an .etl file", path);
		else
			snprintf(why, why_cap, "%s could not be read: %s", path, text[0] ? text : hs_strerror(st));
		hs_etl_close(etl);
		return st;
	}
	etl_ctx c = {.m = m, .side = side, .h = hs_etl_get_header(etl), .st = HS_OK};
	if (!side && c.h->valid && c.h->cpus)
		cm_set_cpus(m, c.h->cpus); /* every CPU of the session, also one that logged nothing */
	size_t from = m->n;
	uint64_t dropped0 = m->dropped;
	st = hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_rec, &c);
	if (st == HS_OK && c.oom)
		st = HS_ENOMEM;
	if (st == HS_OK && c.st != HS_OK)
		st = c.st;
	if (st == HS_OK) {
		/* the cap may have moved the records this read added towards the front */
		uint64_t moved = m->dropped - dropped0;
		fix_up(&c, from > moved ? from - (size_t)moved : 0);
		if (c.oom)
			st = HS_ENOMEM;
	}
	if (st == HS_OK && !side) {
		/* lost events: the session's own counts and damaged buffers; where they were is not known, so the
		 * analysis trusts each CPU's records only from its first one */
		uint64_t lost = (uint64_t)c.h->events_lost + c.h->buffers_lost + hs_etl_lost_flagged_buffers(etl) +
				hs_etl_problem_count(etl);
		m->lost += lost;
	}
	if (st != HS_OK)
		snprintf(why, why_cap, "%s: %s", path, hs_strerror(st));
	hs_hmap_free(&c.tix);
	hs_hmap_free(&c.pix);
	free(c.t);
	free(c.cur);
	hs_etl_close(etl);
	return st;
}
