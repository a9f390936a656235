/* report/cause/cause.h: why a thread's time in a window went where it went: its time split into the cause vocabulary's reasons, each with its culprit, evidence and wake-up chain. */
#ifndef HS_REPORT_CAUSE_H
#define HS_REPORT_CAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/limits.h"
#include "hindsight/rules.h"
#include "hindsight/status.h"

/*
 * The report asks: over [w0, w1] (a hitched frame, the freeze of a hang so
 * far, the second before a crash), where did thread `tid`'s time go? The
 * answer splits the covered part of the window into the vocabulary's reasons
 * (hs_cause_vocab, from the rules): the thread ran its own code, waited for a
 * CPU that another task had (which, at what priority), was held back by its
 * cgroup's CPU quota, lost its CPU to interrupts, waited for I/O (which call,
 * which device), for page faults, for memory, for a lock another thread of its
 * process held (who), for another process (who), slept on its own timer, was
 * stopped (by whom), waited on a new process starting, or the trace does not
 * say (insufficient data). Every nanosecond of the covered window goes to one
 * reason, so the shares sum to 1.
 *
 * How a stretch is decided is the classifiers' table (table.c, one file per
 * reason, r_*.c): for each stretch of the thread's state (running, runnable,
 * S, D, stopped) they claim, in the table's order, the parts they can explain
 * from the kernel's records; the words are the vocabulary's.
 *
 * Ownership: the result owns its arrays (hs_cause_result_free); strings in it
 * are copies, except `def` pointers, borrowed from the vocabulary (the rules).
 */

typedef struct {
	bool is_task;      /* a task; else `what` names it (an interrupt, a cgroup quota, the network) */
	int32_t tid, tgid; /* the task and its process (tgid = tid when the trace did not say) */
	char name[32];     /* the task's name at that time */
	char process[32];  /* its process's name when it differs from name, else "" */
	int32_t prio;      /* kernel prio: < 100 real-time (99 - rt priority), 100..139 nice -20..19; -1 unknown */
	char policy[16];   /* "real-time", "normal", "deadline" or "" */
	int32_t priority;  /* real-time priority 1..99, or the nice value */
	char what[96];     /* a culprit that is not a task, or a note on the task ("3 tasks") */
	unsigned tasks;    /* tasks of that name that took part */
} hs_cause_culprit;

typedef struct {
	const char *id;           /* the reason id */
	const hs_cause_def *def;  /* its words, NULL when the vocabulary lacks it */
	uint64_t ns;
	double share;             /* of the covered window */
	uint64_t usual_ns;        /* what the thread usually spends so per unit (a frame) before the window, 0 unknown */
	bool has_culprit;
	hs_cause_culprit culprit; /* the one that took most of this reason's time */
	char what[160];           /* what it waited on: "fsync(fd 3), 12 writes to dev 254:0", "SIGSTOP", ... */
	char cpus[32];            /* "CPU 0" / "CPUs 0, 1": where a CPU reason happened */
	char chain[400];          /* the wake-up chain, for lock and IPC waits: what the waker did meanwhile */
	char evidence[HS_CAUSE_MAX_EVIDENCE][240];
	size_t n_evidence;
} hs_cause_reason;

/* Stretches for drawing (the report's HTML lanes). */
typedef struct {
	uint64_t t0, t1;
	uint8_t state;  /* cm_state */
	int16_t reason; /* index into reasons[], -1 */
	int16_t cpu;
} hs_cause_span;

typedef struct {
	uint64_t t0, t1;
	int16_t cpu;
	int32_t tid;    /* 0: idle */
	char name[16];
	int32_t prio;
	bool is_target;
} hs_cause_cpu_span;

typedef struct {
	uint64_t ts;
	int32_t waker; /* tid, or -1 for an interrupt */
	uint8_t ctx;
	int16_t cpu;
	char name[32];
} hs_cause_wake;

typedef struct {
	bool analysed;        /* the records were read and the thread found */
	char why[300];        /* why there is no split, or a caveat; "" */
	int32_t tid, tgid;
	char comm[32], process[32];
	uint64_t w0, w1;      /* the window asked for */
	uint64_t cov0, cov1;  /* the part of it the records cover (and the thread lived in) */
	uint64_t lost;        /* events the ring lost inside the covered part */
	uint64_t dropped;     /* records past the analysis's cap (the oldest of the window) */
	unsigned unrecorded_switches;
	uint64_t state_ns[8]; /* by cm_state */
	hs_cause_reason reasons[HS_CAUSE_MAX_REASONS];
	size_t n_reasons;     /* the largest first */
	char clause[700];     /* the dominant reason's verdict clause, the vocabulary's template filled in */
	bool has_usual;       /* a baseline was analysed: reasons are ordered by their excess over usual_ns */
	hs_cause_span *spans;
	size_t n_spans;
	hs_cause_cpu_span *cpu_spans; /* the thread's CPUs while it waited or ran */
	size_t n_cpu_spans;
	hs_cause_wake *wakes;
	size_t n_wakes;
} hs_cause_result;

typedef struct {
	const char *ring;        /* the trace.dat with the scheduler's records */
	const char *const *side; /* other files of the same recording (the key-event file): names, processes, syscalls */
	size_t n_side;
	bool ring_wrapped;       /* its older events were overwritten: its CPUs' first records bound the coverage */
	int32_t tid;
	uint64_t w0, w1;
	const hs_cause_vocab *vocab; /* required */
	/* tid -> tgid pairs the system gave at capture time (a snapshot's tasks.json), for threads whose creation
	 * the trace does not hold; the trace's own say wins. NULL: none. */
	const int32_t (*tgids)[2];
	size_t n_tgids;
	/* The thread's usual: the window of baseline_ns before w0, holding baseline_units units (frames), analysed
	 * the same way; the reasons are then ordered by what the window had beyond one unit's usual (0: not done). */
	uint64_t baseline_ns;
	double baseline_units;
	uint64_t baseline_end_ns; /* the baseline ends here (its last unit's end), 0: at w0 */
	/* The system said (tasks.json) that neither the thread's CPU cgroup nor any above it has a CPU quota: a task
	 * of no higher priority keeping its CPU is then contention (many tasks, group weights), not a spent quota.
	 * false: not known. */
	bool no_cpu_quota;
} hs_cause_input;

/* HS_OK with out->analysed or out->why saying why not; HS_ENOMEM. */
hs_status hs_cause_analyse(const hs_cause_input *in, hs_cause_result *out);
void hs_cause_result_free(hs_cause_result *r);

/* The dominant reason (reasons[0]: the largest, or with a baseline the largest beyond its usual) or NULL. */
const hs_cause_reason *hs_cause_top(const hs_cause_result *r);

/* Fills a vocabulary template: {time} {share} {culprit} {cpu} {what} {chain} {thread} from reason k (r gives
 * {thread}; NULL keeps it as written, as a wake-up chain's step has no thread of its own). */
void hs_cause_fill(const hs_cause_result *r, const hs_cause_reason *k, const char *tmpl, char *out, size_t cap);
/* "12.3 ms", "1.204 s", "340 us". */
void hs_cause_fmt_ns(uint64_t ns, char *buf, size_t cap);
/* "cpuhog (pid 9970, real-time priority 50)". */
void hs_cause_culprit_text(const hs_cause_culprit *c, char *out, size_t cap);

#endif
