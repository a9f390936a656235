/* report/thread.c: the thread a report's verdict names, over the window before the moment: running, waiting for a CPU and blocked, who woke it, the busiest tasks and interrupt time, from the ring's scheduler records. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/event.h"
#include "hindsight/limits.h"
#include "hindsight/tracedat.h"
#include "report/model.h"
#include "report/order.h"

/* Threads counted one by one: HS_REPORT_MAX_TIDS (hindsight/limits.h says why); event ids are 16 bits. */
enum { MAX_TIDS = HS_REPORT_MAX_TIDS, N_IDS = 65536 };

typedef struct {
	int tid; /* -1 free */
	char comm[16];
	uint64_t ns;
} tid_slot;

typedef struct {
	hs_report *r;
	hs_rpt_thread *t;
	const hs_rpt_file *f;
	uint8_t *seen;
	hs_decoded_kind *shape;
	/* the thread */
	int st;          /* hs_rpt_tstate, or -1 before its first record */
	uint64_t since;  /* when st began */
	bool woken;      /* runnable because of a wake-up (not a preemption) */
	uint64_t woken_at;
	/* per CPU */
	unsigned ncpu;
	int *cur; /* the task on it, -1 unknown */
	uint64_t *cur_since;
	char (*cur_comm)[16];
	uint64_t *irq_at, *soft_at;
	char (*irq_name)[32];
	int64_t *soft_vec;
	tid_slot *tids;
	uint64_t others_ns;
} thr_ctx;

static uint64_t clip(const hs_rpt_thread *t, uint64_t a, uint64_t b)
{
	if (a < t->cov0)
		a = t->cov0;

	if (b > t->cov1)
		b = t->cov1;
	return b > a ? b - a : 0;
}

/* The thread's own time: from its birth when it was born in the window. */
static uint64_t clip_thread(const hs_rpt_thread *t, uint64_t a, uint64_t b)
{
	return clip(t, a < t->born ? t->born : a, b);
}

static void credit_task(thr_ctx *c, int tid, const char *comm, uint64_t a, uint64_t b)
{
	uint64_t d = clip(c->t, a, b);
	if (!d)
		return;
	if (tid == 0) {
		c->t->idle_ns += d;
		return;
	}
	c->t->busy_ns += d;
	uint32_t h = ((uint32_t)tid * 2654435761u) & (MAX_TIDS - 1);
	for (unsigned k = 0; k < MAX_TIDS; k++, h = (h + 1) & (MAX_TIDS - 1)) {
		tid_slot *s = &c->tids[h];
		if (s->tid == tid) {
			s->ns += d;
			/* its latest name: after an exec, the program's */
			snprintf(s->comm, sizeof s->comm, "%s", comm);
			return;
		}
		if (s->tid < 0) {
			s->tid = tid;
			snprintf(s->comm, sizeof s->comm, "%s", comm);
			s->ns = d;
			return;
		}
	}
	c->others_ns += d;
}

/* The thread enters state st at ts; its first record also says what it was doing before (it left a CPU: it ran;
 * it got one: it was runnable; it was woken: it was blocked, how is not known). */
static void thread_to(thr_ctx *c, int st, int before, uint64_t ts)
{
	hs_rpt_thread *t = c->t;
	if (c->st < 0) {
		c->st = before;
		c->since = 0;
	}
	t->ns[c->st] += clip_thread(t, c->since, ts);
	c->st = st;
	c->since = ts;
}

static void add_waker(hs_rpt_thread *t, const hs_tracedat_record *rec, int context)
{
	int pid = context ? -1 : rec->pid;
	char comm[32];
	hs_utf8_clean(context ? "" : rec->comm ? rec->comm : "?", comm, sizeof comm);
	for (size_t i = 0; i < t->n_wakers; i++) {
		hs_rpt_waker *w = &t->wakers[i];
		if (w->context == context && !strcmp(w->comm, comm)) {
			w->n++;
			w->tasks += w->last_pid != pid; /* counts changes: distinct enough for a loop's children */
			w->last_pid = pid;
			return;
		}
	}
	if (t->n_wakers == sizeof t->wakers / sizeof t->wakers[0])
		return;
	hs_rpt_waker *w = &t->wakers[t->n_wakers++];
	w->pid = w->last_pid = pid;
	w->cpu = rec->cpu;
	w->context = context;
	w->n = w->tasks = 1;
	memcpy(w->comm, comm, sizeof comm);
}

static void add_irq(hs_rpt_thread *t, const char *name, bool soft, uint64_t d)
{
	size_t i = 0;
	while (i < t->n_irqs && (t->irqs[i].soft != soft || strcmp(t->irqs[i].name, name)))
		i++;
	if (i == t->n_irqs) {
		if (i == sizeof t->irqs / sizeof t->irqs[0])
			return;
		t->n_irqs++;
		snprintf(t->irqs[i].name, sizeof t->irqs[i].name, "%.31s", name);
		t->irqs[i].soft = soft;
	}
	t->irqs[i].ns += d;
	t->irqs[i].n++;
}

static uint64_t waker_n(const void *w)
{
	return ((const hs_rpt_waker *)w)->n;
}

/* Interrupt (soft: softirq) work on cpu since *at ended at ts: its time, by name, and what of it the thread lost. */
static void irq_done(thr_ctx *c, unsigned cpu, uint64_t *at, const char *name, bool soft, uint64_t ts)
{
	hs_rpt_thread *t = c->t;
	uint64_t dur = clip(t, *at, ts);
	if (soft)
		t->softirq_ns += dur;
	else
		t->irq_ns += dur;
	if (dur)
		add_irq(t, name, soft, dur);
	if (c->cur[cpu] == t->pid && c->st == TS_RUNNING)
		t->irq_on_thread_ns += dur;
	*at = 0;
}

/* The thread goes on its CPU at ts, from runnable: the time since its wake-up is a wait for the CPU. */
static void thread_runs(thr_ctx *c, uint64_t ts)
{
	hs_rpt_thread *t = c->t;
	/* both ends inside the covered part: a wake-up before a gap says nothing of the wait */
	if (c->woken && c->woken_at >= t->cov0 && ts - c->woken_at > t->max_wake_wait)
		t->max_wake_wait = ts - c->woken_at;
	thread_to(c, TS_RUNNING, TS_RUNNABLE, ts);
	c->woken = false;
	if (ts >= t->cov0)
		t->switches_in++;
}

/* The task of rec runs on cpu, though no switch to it was recorded. */
static void implicit_switch(thr_ctx *c, unsigned cpu, const hs_tracedat_record *rec, const hs_event *ev)
{
	hs_rpt_thread *t = c->t;
	(void)ev;
	credit_task(c, c->cur[cpu], c->cur_comm[cpu], c->cur_since[cpu], rec->ts);
	if (c->cur[cpu] == t->pid && c->st == TS_RUNNING)
		thread_to(c, TS_UNKNOWN, TS_RUNNING, rec->ts); /* it left unseen: how is not known */
	c->cur[cpu] = rec->pid;
	c->cur_since[cpu] = rec->ts;
	snprintf(c->cur_comm[cpu], sizeof c->cur_comm[cpu], "%s", rec->comm ? rec->comm : "?");
	if (rec->ts > t->cov0)
		t->unrecorded_switches++;
	if (rec->pid == t->pid && c->st != TS_RUNNING)
		thread_runs(c, rec->ts);
}

static int on_sched(const hs_tracedat_record *rec, void *vctx)
{
	thr_ctx *c = vctx;
	hs_rpt_thread *t = c->t;
	if (rec->ts > t->w1)
		return 1; /* merged in time order: nothing after the moment matters */
	/* a loss is before the record that reports it: the first record of a CPU whose older events are gone starts
	 * the covered part, its loss is outside */
	if (rec->ts > t->cov0 && rec->missed_events) {
		if (rec->missed_events > 0)
			t->lost_in_window += (uint64_t)rec->missed_events;
		else
			t->lost_unknown_in_window++;
	}
	unsigned id = (unsigned)rec->id & (N_IDS - 1);
	hs_event ev;
	hs_event_from_tracedat(rec, &ev);
	if (!c->seen[id]) {
		c->seen[id] = 1;
		c->shape[id] = hs_event_decode_kind(&ev, NULL);
	}
	hs_decoded_kind sh = c->shape[id];
	unsigned cpu = rec->cpu >= 0 && (unsigned)rec->cpu < c->ncpu ? (unsigned)rec->cpu : 0;
	/* Every record is logged in the context of the task on its CPU (a switch's, in the context of prev): when that
	 * is not the task the last switch named, a switch to it was not recorded. Measured: an engine's ring holds a
	 * third of the switches away from the idle task it holds to it (ftrace:report's snapshots, 6.18). It is taken
	 * to have happened at this record, the first sign of the task (a tick's or an interrupt's record follows
	 * within milliseconds of it). */
	if (c->cur[cpu] >= 0 && rec->pid >= 0 && rec->pid != c->cur[cpu])
		implicit_switch(c, cpu, rec, &ev);
	if (sh != HS_DEC_SWITCH && sh != HS_DEC_WAKE && sh != HS_DEC_IRQ_ENTRY && sh != HS_DEC_IRQ_EXIT &&
	    sh != HS_DEC_SOFTIRQ_ENTRY && sh != HS_DEC_SOFTIRQ_EXIT && sh != HS_DEC_FORK)
		return 0;
	hs_event_decoded d;
	if (!hs_event_decode(&ev, sh, NULL, rec->comm ? rec->comm : "?", &d))
		return 0;
	switch (sh) {
	case HS_DEC_SWITCH: {
		int prev = (int)d.v[0], next = (int)d.v[1];
		if (c->cur[cpu] >= 0) {
			credit_task(c, c->cur[cpu], c->cur_comm[cpu], c->cur_since[cpu], rec->ts);
		} else {
			/* the first switch of this CPU: prev ran since the CPU's data starts */
			char pc[16] = "";
			hs_event_field_str(&ev, "prev_comm", pc, sizeof pc);
			credit_task(c, prev, pc, c->f->cpu_first[cpu], rec->ts);
		}
		c->cur[cpu] = next;
		c->cur_since[cpu] = rec->ts;
		hs_event_field_str(&ev, "next_comm", c->cur_comm[cpu], sizeof c->cur_comm[cpu]);
		if (prev == t->pid && prev != next) {
			hs_task_state s = hs_linux_task_state(d.v[2]);
			int st = s == HS_TASK_RUNNABLE || s == HS_TASK_PREEMPTED ? TS_RUNNABLE
				 : s == HS_TASK_SLEEP				   ? TS_SLEEP
				 : s == HS_TASK_DISK				   ? TS_DISK
										   : TS_OTHER;
			thread_to(c, st, TS_RUNNING, rec->ts);
			c->woken = false;
			if (st == TS_RUNNABLE && rec->ts >= t->cov0)
				t->preemptions++;
		}
		if (next == t->pid && prev != next)
			thread_runs(c, rec->ts);
		break;
	}
	case HS_DEC_WAKE:
		if ((int)d.v[0] != t->pid)
			break;
		/* the first wake record of a blocked thread is the wake-up; a second one (the same wake-up's
		 * later tracepoint) or one of a runnable thread changes nothing */
		if (c->st < 0 || (c->st != TS_RUNNING && c->st != TS_RUNNABLE)) {
			thread_to(c, TS_RUNNABLE, TS_UNKNOWN, rec->ts);
			c->woken = true;
			c->woken_at = rec->ts;
			if (rec->ts >= t->cov0) {
				t->wakeups++;
				add_waker(t, rec, (int)d.v[2]);
			}
		}
		break;
	case HS_DEC_FORK:
		/* born in the window: its split covers its life, nothing before it */
		if ((int)d.v[1] == t->pid && rec->ts > t->cov0) {
			memset(t->ns, 0, sizeof t->ns);
			t->born = rec->ts;
			c->st = TS_RUNNABLE; /* a new task waits for its first CPU */
			c->since = rec->ts;
		}
		break;
	case HS_DEC_IRQ_ENTRY:
		c->irq_at[cpu] = rec->ts;
		snprintf(c->irq_name[cpu], sizeof c->irq_name[cpu], "%.31s", d.subject);
		break;
	case HS_DEC_IRQ_EXIT:
		if (c->irq_at[cpu])
			irq_done(c, cpu, &c->irq_at[cpu], c->irq_name[cpu], false, rec->ts);
		break;
	case HS_DEC_SOFTIRQ_ENTRY:
		c->soft_at[cpu] = rec->ts;
		c->soft_vec[cpu] = d.v[0];
		break;
	case HS_DEC_SOFTIRQ_EXIT:
		if (c->soft_at[cpu])
			irq_done(c, cpu, &c->soft_at[cpu], d.subject, true, rec->ts);
		break;
	default: break;
	}
	return 0;
}

static int slot_cmp(const void *a, const void *b)
{
	const tid_slot *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);
	return c ? c : (x->tid > y->tid) - (x->tid < y->tid);
}

static int share_cmp(const void *a, const void *b)
{
	const hs_rpt_share *x = a, *y = b;
	return (x->ns < y->ns) - (x->ns > y->ns);
}

/* CPU time by task name: ftrace records carry thread ids only, so a process's threads of one name are one row
 * (threads that name themselves, like a browser's, are rows of their own). */
static void users_by_comm(thr_ctx *c)
{
	hs_rpt_thread *t = c->t;
	size_t n = 0;
	for (size_t i = 0; i < MAX_TIDS; i++)
		if (c->tids[i].tid >= 0)
			c->tids[n++] = c->tids[i];
	if (n > 1)
		qsort(c->tids, n, sizeof *c->tids, slot_cmp);
	hs_rpt_share all[64];
	size_t na = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		hs_rpt_share s = {0};
		hs_utf8_clean(c->tids[i].comm, s.name, sizeof s.name);
		while (j < n && !strcmp(c->tids[j].comm, c->tids[i].comm)) {
			s.ns += c->tids[j].ns;
			s.threads++;
			j++;
		}
		i = j;
		/* keep the 64 largest */
		if (na < 64) {
			all[na++] = s;
		} else {
			size_t m = 0;
			for (size_t k = 1; k < na; k++)
				if (all[k].ns < all[m].ns)
					m = k;
			if (s.ns > all[m].ns)
				all[m] = s;
		}
	}
	if (na > 1)
		qsort(all, na, sizeof *all, share_cmp);
	t->n_users = na < 8 ? na : 8;
	memcpy(t->users, all, t->n_users * sizeof *all);
}

static const char *const basis_kinds[] = {"crash",        "killed",       "oom-kill", "frame-hitch", "app-hang",
					  "hang",         "memory-stall", "slow-syscall", NULL};

void hs_rpt_thread_build(hs_report *r)
{
	hs_rpt_thread *t = &r->thread;
	memset(t, 0, sizeof *t);
	t->file = -1;
	/* the thread: the strongest finding that is about one task */
	const hs_rpt_finding *top = NULL;
	for (size_t k = 0; k < r->n_findings && !top; k++) {
		const hs_rpt_finding *f = &r->findings[k];
		for (size_t b = 0; basis_kinds[b] && !top; b++)
			if (!strcmp(f->kind, basis_kinds[b]) && f->pid > 0 && f->impact >= 20)
				top = f;
		if (f->impact >= 20 && !top && k == 0)
			break; /* the verdict is about something else (a storm, a reset) */
	}
	if (!top)
		return;
	t->present = true;
	t->pid = top->tid > 0 ? top->tid : top->pid;
	t->basis = top->kind;
	/* a hang's finding is the watchdog's record: the hung task is its subject */
	if (!strcmp(top->kind, "hang") && top->n_ev && r->events[top->ev[0]].v[0] > 0)
		t->pid = (int)r->events[top->ev[0]].v[0];
	/* its name at the moment (a thread that renamed itself after its exec is named as it then was) */
	const char *at = hs_rpt_comm_at(r, t->pid, r->moment);
	if (at && at[0])
		snprintf(t->comm, sizeof t->comm, "%s", at);
	for (size_t i = 0; i < r->n_events && !t->comm[0]; i++)
		if (r->events[i].pid == t->pid)
			snprintf(t->comm, sizeof t->comm, "%s", r->events[i].comm);
	t->w1 = r->moment;
	uint64_t span = !strcmp(top->kind, "frame-hitch") && r->trig.frame_ms > 0 ? (uint64_t)(r->trig.frame_ms * 1e6)
									     : HS_RPT_THREAD_WINDOW_NS;
	t->w0 = t->w1 > span ? t->w1 - span : 0;
	if (!strcmp(top->kind, "app-hang") && r->trig.freeze_start_ns) {
		/* the freeze: from its last frame to its end, or, still frozen, as far as the recording goes */
		t->w0 = r->trig.freeze_start_ns;
		t->w1 = r->trig.freeze_ended ? r->trig.freeze_end_ns : r->win_last > r->moment ? r->win_last : r->moment;
		/* still frozen when it fired: it may have recovered before the recording ended, at its next frame */
		for (size_t i = 0; i < r->n_events && !r->trig.freeze_ended; i++) {
			const hs_rpt_event *e = &r->events[i];
			if (e->shape == HS_DEC_MARKER && e->v[0] && e->ts > t->w0 + 1000000u && e->ts < t->w1 &&
			    !strncmp(e->detail, "B|", 2) && strtoll(e->detail + 2, NULL, 10) == top->pid) {
				t->w1 = e->ts;
				break;
			}
		}
	}
	/* the file with the scheduler's records */
	for (size_t i = 0; i < r->n_files; i++)
		if (r->files[i].opened && r->files[i].n_switch &&
		    (t->file < 0 || r->files[i].n_switch > r->files[t->file].n_switch))
			t->file = (int)i;
	if (t->file < 0) {
		bool etl = false;
		for (size_t i = 0; i < r->n_files; i++)
			etl |= r->files[i].etl;
		snprintf(t->why, sizeof t->why, "%s",
			 etl ? "not for .etl files: this split reads trace.dat's scheduler records; the WHY section reads their CSwitch and ReadyThread records"
			     : "no file here records the scheduler's switches (the profile's ring session keeps none)");
		return;
	}
	const hs_rpt_file *f = &r->files[t->file];
	t->irq_recorded = f->n_irq > 0;
	t->softirq_recorded = f->n_softirq > 0;
	t->cpus = f->cpus;
	/* Where the ring's data begins: its first record (a snapshot's ring starts empty after the previous one), or
	 * later on a CPU that lost events or whose ring wrapped (its older events are gone; an idle CPU of a ring
	 * that did not wrap merely had nothing to say) */
	t->cov0 = t->w0 > f->first_ns ? t->w0 : f->first_ns;
	t->cov_cpu = -1;
	for (unsigned cpu = 0; cpu < f->cpus; cpu++)
		if (f->cpu_n[cpu] && (f->cpu_missed[cpu] || f->wrapped == 1) && f->cpu_first[cpu] > t->cov0) {
			t->cov0 = f->cpu_first[cpu];
			t->cov_cpu = (int)cpu;
		}
	t->cov1 = t->w1 < f->last_ns ? t->w1 : f->last_ns;
	if (t->cov1 <= t->cov0) {
		snprintf(t->why, sizeof t->why, "%s does not cover the window: its events %s", f->name,
			 f->first_ns > t->w1 ? "begin after the moment" : "end before the window");
		t->cov0 = t->cov1 = 0;
		return;
	}
	hs_tracedat *td = NULL;
	if (hs_tracedat_open_ex(f->path, !r->opts.own_files, &td) != HS_OK) {
		snprintf(t->why, sizeof t->why, "%s could not be read a second time", f->name);
		hs_tracedat_close(td);
		return;
	}
	thr_ctx c = {.r = r, .t = t, .f = f, .st = -1, .ncpu = f->cpus ? f->cpus : 1};
	c.seen = calloc(N_IDS, 1);
	c.shape = calloc(N_IDS, sizeof *c.shape);
	c.cur = malloc(c.ncpu * sizeof *c.cur);
	c.cur_since = calloc(c.ncpu, sizeof *c.cur_since);
	c.cur_comm = calloc(c.ncpu, sizeof *c.cur_comm);
	c.irq_at = calloc(c.ncpu, sizeof *c.irq_at);
	c.soft_at = calloc(c.ncpu, sizeof *c.soft_at);
	c.irq_name = calloc(c.ncpu, sizeof *c.irq_name);
	c.soft_vec = calloc(c.ncpu, sizeof *c.soft_vec);
	c.tids = malloc(MAX_TIDS * sizeof *c.tids);
	if (!c.seen || !c.shape || !c.cur || !c.cur_since || !c.cur_comm || !c.irq_at || !c.soft_at || !c.irq_name ||
	    !c.soft_vec || !c.tids) {
		snprintf(t->why, sizeof t->why, "out of memory");
		goto done;
	}
	for (unsigned i = 0; i < c.ncpu; i++)
		c.cur[i] = -1;
	for (size_t i = 0; i < MAX_TIDS; i++)
		c.tids[i].tid = -1;
	hs_tracedat_foreach(td, on_sched, &c);
	/* to the end of the covered part */
	for (unsigned i = 0; i < c.ncpu; i++)
		if (c.cur[i] >= 0)
			credit_task(&c, c.cur[i], c.cur_comm[i], c.cur_since[i], t->cov1);
	if (c.st < 0) {
		/* no record of it at all: it neither left nor got a CPU nor was woken */
		t->ns[TS_UNKNOWN] = t->cov1 - t->cov0;
	} else {
		t->ns[c.st] += clip_thread(t, c.since, t->cov1);
	}
	t->analysed = true;
	users_by_comm(&c);
	if (t->n_irqs > 1)
		qsort(t->irqs, t->n_irqs, sizeof *t->irqs, share_cmp);
	hs_rpt_order_most(t->wakers, t->n_wakers, sizeof *t->wakers, waker_n);
	if (c.st < 0)
		snprintf(t->why, sizeof t->why,
			 "%s has no scheduler record of pid %d: it neither left nor got a CPU nor was woken in what the "
			 "ring holds",
			 f->name, t->pid);
done:
	free(c.seen);
	free(c.shape);
	free(c.cur);
	free(c.cur_since);
	free(c.cur_comm);
	free(c.irq_at);
	free(c.soft_at);
	free(c.irq_name);
	free(c.soft_vec);
	free(c.tids);
	hs_tracedat_close(td);
}
