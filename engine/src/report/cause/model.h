/* report/cause/model.h: the scheduler's story of a time window, read once from a trace's files into compact records, with every task's state at the window's start: what the cause analysis queries. */
#ifndef HS_REPORT_CAUSE_MODEL_H
#define HS_REPORT_CAUSE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/status.h"

/*
 * A source format's reader turns its records into cm_rec (model_dat.c for
 * trace.dat; an .etl reader does the same from CSwitch and ReadyThread), so
 * the analysis above it is written once. Records are kept from `keep_from`
 * (the window's start less a look-back) to the window's end, in time order,
 * at most HS_CAUSE_MAX_RECORDS (the newest are kept: the end of a window is
 * where a hitch or a crash is); every record before keep_from only moves the
 * state machine that gives each task's state at the start of the records.
 *
 * Ownership: the model owns its records, tasks and strings; cm_free releases
 * them. Strings are interned: a cm_rec holds an index (cm_str turns it into
 * text, valid until cm_free).
 */

typedef enum {
	CM_SWITCH,       /* a=prev tid, b=next tid, x=prev_state (raw), y=prev prio, z=next prio; s=prev comm, s2=next comm */
	CM_WAKE,         /* a=woken tid, b=target cpu, y=its prio; s=its comm; ctx says who woke it */
	CM_WAKE_NEW,     /* the same for a new task's first wake-up */
	CM_IRQ_IN,       /* a=irq number (-1 unknown); s=handler name */
	CM_IRQ_OUT,      /* b=ret */
	CM_SOFT_IN,      /* a=vec */
	CM_SOFT_OUT,     /* a=vec */
	CM_TIMER_START,  /* x=timer address, y=function address, a=1 hrtimer */
	CM_TIMER_FIRE,   /* x=timer address, y=function address, a=1 hrtimer */
	CM_BLOCK,        /* a=dev, b=1 a request (0 a bio), x=sector, y=bytes; s=rwbs: I/O queued in pid's context */
	CM_SIGNAL,       /* a=sig, b=target tid, y=result; s=target comm: pid sent it */
	CM_RECLAIM_IN,   /* pid reclaims memory itself (direct or in its memory cgroup) */
	CM_RECLAIM_OUT,  /* y=pages reclaimed */
	CM_MEM_THROTTLE, /* y=us delayed (reclaim throttling) */
	CM_DIRTY_PAUSE,  /* y=ms paused (dirty page throttling) */
	CM_FORK,         /* a=parent tid, b=child tid; s=child comm */
	CM_NEWTASK,      /* a=new tid, x=clone_flags; s=its comm; pid made it */
	CM_EXEC,         /* a=tid; s=file */
	CM_RENAME,       /* a=tid; s=new name */
	CM_EXIT,         /* a=tid, b=group_dead */
	CM_SYSCALL_IN,   /* a=nr, x=first argument (fd of the sync calls, futex op); s=name */
	CM_SYSCALL_OUT,  /* a=nr, x=ret; s=name */
	CM_MIGRATE,      /* a=tid, b=dest cpu, x=orig cpu */
	CM_FILE_FAULT,   /* a=dev, x=inode, y=page index */
	CM_LOCK_IN,      /* x=lock address */
	CM_LOCK_OUT,     /* x=lock address */
	CM_SLICE_IN,     /* a=the pid the marker names; s=slice name (atrace "B|pid|name") */
	CM_SLICE_OUT,    /* a=the pid ("E|pid") */
	CM_KINDS
} cm_kind;

/* Where a record was logged (the record header's flags): a task's own context, or an interrupt over it. */
enum { CM_CTX_TASK = 0, CM_CTX_HARDIRQ = 1, CM_CTX_SOFTIRQ = 2 };

typedef struct {
	uint64_t ts;
	uint8_t kind, ctx;
	uint16_t cpu;
	int32_t pid; /* the task the record was logged in (for an interrupt context: the one it interrupted) */
	int32_t a, b;
	int64_t x, y;
	int32_t z;
	uint32_t s, s2; /* interned strings, 0 = none */
} cm_rec;

/* A task's scheduler state (as the analysis names it). */
typedef enum {
	CM_ST_UNKNOWN = 0, /* no record said */
	CM_ST_RUN,         /* on a CPU */
	CM_ST_READY,       /* runnable, not on a CPU (preempted, or woken and not yet given one) */
	CM_ST_SLEEP,       /* S: waits for an event, a timer, a lock, input */
	CM_ST_DISK,        /* D: uninterruptible: I/O, a kernel lock */
	CM_ST_STOPPED,     /* T: stopped by a signal */
	CM_ST_TRACED,      /* t: stopped by a debugger (ptrace) */
	CM_ST_DEAD,        /* exited */
	CM_ST_N
} cm_state;

/* A task as the trace knew it. */
typedef struct {
	int32_t tid;
	int32_t tgid;   /* its process: -1 when no record said (the tgid map, a CLONE_THREAD, a fork) */
	int32_t parent; /* the task that made it, -1 when unknown */
	uint32_t comm;  /* its latest name in the records (interned) */
	int32_t prio;   /* its latest kernel prio (switch records): < 100 real-time, 100..139 nice -20..19; -1 */
	uint64_t born;  /* its fork inside the records, else 0 */
	/* its state at the first kept record */
	cm_state st0;
	uint64_t st0_since;
	int32_t cpu0; /* its CPU then (running or runnable), -1 */
} cm_task;

typedef struct {
	cm_rec *recs;
	size_t n, cap;
	uint64_t keep_from;   /* records kept from here */
	uint64_t first_ts;    /* the first record of the files (their data start) */
	uint64_t end_ts;      /* the window's end */
	uint64_t kept_from_ts; /* the first kept record (later than keep_from when the cap dropped older ones) */
	uint64_t dropped;     /* records of the window not kept (the cap) */
	uint64_t lost;        /* events the rings said they lost inside the kept records' span */
	unsigned ncpu;
	int32_t *cpu_task0;   /* [ncpu] the task on each CPU at the first kept record, -1 unknown */
	uint64_t *cpu_first;  /* [ncpu] each CPU's first record in the files (0: none) */
	bool has_switch, has_wake, has_irq, has_softirq, has_timer, has_block, has_syscall, has_fault, has_lock;
	/* an interrupt's record names the task it interrupted, the one on its CPU (ftrace's common_pid is always
	 * current's); an ETW DPC or ISR record's thread is not reliable enough to place a task on a CPU */
	bool irq_pid_current;
	cm_task *tasks;       /* sorted by tid after cm_finish */
	size_t n_tasks, cap_tasks;
	/* strings */
	char **strs;
	size_t n_strs, cap_strs;
	void *str_index; /* private */
	void *task_index; /* private */
} cm_model;

/* Empty model for the window [w0 - lookback, w1]. */
void cm_init(cm_model *m, uint64_t keep_from, uint64_t w1);
void cm_free(cm_model *m);

/* The trace has n CPUs (some may have no record). */
void cm_set_cpus(cm_model *m, unsigned n);
/* A switch's prev_state as the analysis's state (TASK_REPORT bits; 0x100 and above: preempted, runnable). */
cm_state cm_state_of(int64_t prev_state);

/* Interns s; 0 for NULL or "" (and on OOM). */
uint32_t cm_intern(cm_model *m, const char *s);
static inline const char *cm_str(const cm_model *m, uint32_t s)
{
	return s && s < m->n_strs ? m->strs[s] : "";
}

/* The task of tid, added when new (NULL on OOM). Pointers are valid until the next cm_task_get. */
cm_task *cm_task_get(cm_model *m, int32_t tid);
const cm_task *cm_task_find(const cm_model *m, int32_t tid);

/* A reader hands records in time order; cm_add keeps or only plays them (before keep_from). */
hs_status cm_add(cm_model *m, const cm_rec *r);
/* Records of a second file (the key-event file) merged in, after the first is read: kept when in the window,
 * used for tasks' names and processes always. */
hs_status cm_add_side(cm_model *m, const cm_rec *r);
/* After every file: sorts what cm_add_side merged in. */
void cm_finish(cm_model *m);

/* The process of tid (its tgid, else tid itself when unknown). */
int32_t cm_tgid(const cm_model *m, int32_t tid);

/* Reads a trace.dat file into m: the scheduler's records, interrupts, timers, block I/O queued, signals,
 * reclaim, system calls, file faults, kernel lock contention, atrace slices, tasks' births, names and
 * processes. side: the file is not the ring (a key-event file): its records are merged as cm_add_side.
 * why gets a sentence when the file cannot be read. */
hs_status cm_read_tracedat(cm_model *m, const char *path, bool side, char *why, size_t why_cap);
/* The same for a Windows .etl (model_etl.c): context switches (CSwitch, the old thread's state as prev_state bits
 * with its wait reason + 1 in x's upper 32 bits) and wake-ups (ReadyThread, the readying thread as the waker),
 * thread exits, threads' processes and names from the kernel's thread and process records. */
hs_status cm_read_etl(cm_model *m, const char *path, bool side, char *why, size_t why_cap);

#endif
