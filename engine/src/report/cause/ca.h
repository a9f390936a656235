/* report/cause/ca.h: what the cause classifiers share: the thread's stretches, each CPU's tasks and interrupts over the window, the claim an explanation makes, and queries on the records. */
#ifndef HS_REPORT_CAUSE_CA_H
#define HS_REPORT_CAUSE_CA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cause.h"
#include "model.h"

/* One stretch of the thread in one state. */
typedef struct {
	uint64_t t0, t1;
	cm_state st;
	int cpu;          /* where it ran, or the CPU whose queue it waited in (runnable); -1 unknown */
	size_t begin_rec; /* the record that began it (its switch away, its wake-up), SIZE_MAX: before the records */
	size_t end_rec;   /* the record that ended it, SIZE_MAX: it lasted to the window's end */
	bool after_wake;  /* runnable because a wake-up made it so (not a preemption) */
	int prev_state;   /* the state before this one (cm_state), -1 */
	uint64_t run_from;/* for a wait (S, D, T): when the thread last woke before it (its previous wait ended;
			     preemptions since included), else its first time on a CPU (0 unknown) */
} ca_seg;

/* A task on a CPU, or interrupt handling on it. */
typedef struct {
	uint64_t t0, t1;
	int32_t tid;
	uint32_t comm;
	int32_t prio;
} ca_run;

typedef struct {
	uint64_t t0, t1;
	bool soft;
	int32_t num;   /* irq number or softirq vec */
	uint32_t name; /* handler name (hard) */
} ca_irq;

/* A culprit as a classifier sees it (ca_culprit_task fills it from the records). */
typedef hs_cause_culprit ca_culprit;

/* One (reason, culprit) sum. */
typedef struct ca_acc {
	const char *id;
	ca_culprit who;
	bool has_who;
	char key[96]; /* the culprit's name, or its thing */
	uint64_t ns;
	int32_t tids[8];
	size_t n_tids;
	uint64_t biggest; /* the largest single claim, whose `what` is kept */
	char what[160];
	char ev[HS_CAUSE_MAX_EVIDENCE][240];
	uint64_t ev_ns[HS_CAUSE_MAX_EVIDENCE]; /* the claim each line came with: the largest are kept */
	size_t n_ev;
	uint64_t claims;
	char chain[400];
} ca_acc;
typedef struct ca_ctx ca_ctx;

struct ca_ctx {
	cm_model *m;
	const hs_cause_vocab *vocab;
	int32_t tid, tgid;
	uint64_t cov0, cov1;
	bool no_cpu_quota; /* hs_cause_input's: the thread's cgroups have no CPU quota */
	int depth; /* 0: the thread; 1..: a waker in its chain */
	/* each CPU's tasks and interrupts (shared by a chain's contexts) */
	ca_run **runs;
	size_t *n_runs;
	ca_irq **irqs;
	size_t *n_irqs;
	unsigned unrecorded;
	/* the thread's stretches */
	ca_seg *segs;
	size_t n_segs;
	/* the pieces of the current stretch nobody has explained yet */
	uint64_t *f0, *f1;
	size_t n_free, cap_free;
	const ca_seg *cur;
	/* claims, summed by reason and culprit */
	ca_acc *acc;
	size_t n_acc, cap_acc;
	/* what was claimed when (for drawing): [t0, t1) of a stretch -> reason id */
	struct ca_claim_span {
		uint64_t t0, t1;
		const char *id;
		uint8_t st;
		int16_t cpu;
	} *cspans;
	size_t n_cspans, cap_cspans;
	bool oom;
	struct ca_rx *rx; /* compiled `match:` patterns, shared by a chain's contexts */
	/* runs the classifiers over the context's stretches (attribute.c's; a chain's context calls it through this,
	 * so the files the classifiers call never call the table back) */
	void (*run_all)(struct ca_ctx *c);
};

/* A classifier: the reason it gives and the states of the thread it looks at (1u << cm_state). It claims, from
 * the stretch's unexplained pieces, what the records say is its reason. */
typedef struct {
	const char *id;
	unsigned states;
	void (*fn)(ca_ctx *c, const ca_seg *s, const hs_cause_def *def);
} ca_classifier;

extern const ca_classifier *const ca_table[];

/* ---- claims (attribute.c) ---- */
/* Explains [t0, t1) of the current stretch (the parts still unexplained) as reason id; who may be NULL.
 * what: the reason's object for this claim ("fsync(fd 3)"); evidence: one line for the report. Returns the ns
 * claimed. */
uint64_t ca_claim(ca_ctx *c, uint64_t t0, uint64_t t1, const char *id, const ca_culprit *who, const char *what,
		  const char *evidence);
/* Unexplained ns of the current stretch inside [t0, t1). */
uint64_t ca_free_in(const ca_ctx *c, uint64_t t0, uint64_t t1);
/* What the waker did while the thread waited, as one clause ("it ran its own code for 110 ms (92 %)"), going
 * deeper while the vocabulary's chain_hops allows; "" when nothing is known. */
void ca_chain(ca_ctx *c, int32_t waker, uint64_t t0, uint64_t t1, char *out, size_t cap);
/* The vocabulary's reason of that id; the accumulators' order (most time first); a context's arrays freed. */
const hs_cause_def *ca_def_of(const ca_ctx *c, const char *id);
int ca_acc_cmp(const void *a, const void *b);
void ca_free_ctx(ca_ctx *c);
/* Keeps chain as the wake-up chain of the (id, who) claims (the first one given stays). */
void ca_set_chain(ca_ctx *c, const char *id, const ca_culprit *who, const char *chain);

/* ---- queries (timeline.c) ---- */
/* The first record at or after ts (binary search). */
size_t ca_rec_at(const cm_model *m, uint64_t ts);
/* The newest record of kind by task tid (pid) in [from, before), or SIZE_MAX. tid < 0: any task. */
size_t ca_last_by(const cm_model *m, cm_kind kind, int32_t tid, uint64_t from, uint64_t before);
/* A task as a culprit, named as the records named it around ts. */
void ca_culprit_task(const ca_ctx *c, int32_t tid, uint64_t ts, ca_culprit *out);
/* A culprit that is not a task. */
void ca_culprit_thing(ca_culprit *out, const char *what);
/* The CPU occupancy lists of cpu (runs) and its interrupts. */
void ca_cpu_runs(const ca_ctx *c, int cpu, const ca_run **v, size_t *n);
void ca_cpu_irqs(const ca_ctx *c, int cpu, const ca_irq **v, size_t *n);
/* The tasks on the stretch's CPU during it: start with *i = 0; each call returns the next run that overlaps
 * [s->t0, s->t1), NULL after the last. */
const ca_run *ca_seg_run_next(const ca_ctx *c, const ca_seg *s, size_t *i);
/* "12.3 ms" / "1.204 s" / "340 us". */
void ca_fmt_ns(uint64_t ns, char *buf, size_t cap);
/* The number of a reason's param, NAN when the vocabulary does not give it (the classifier then claims nothing
 * that depends on it). */
double ca_param(const hs_cause_def *def, const char *name);

/* Does the reason's `match:` pattern match s? False when it has none or it does not compile. */
bool ca_match(ca_ctx *c, const hs_cause_def *def, const char *s);
struct ca_rx *ca_rx_new(void);
void ca_rx_free(struct ca_rx *rx);

/* The analysis of a model a reader filled (after cm_finish); hs_cause_analyse reads the files and calls it.
 * out must be zeroed with its tid and window set (hs_cause_analyse does that). */
hs_status ca_analyse_model(cm_model *m, const hs_cause_input *in, hs_cause_result *out);

/* Builds each CPU's runs and interrupts over the records (once per analysis). */
hs_status ca_build_cpus(ca_ctx *c);
void ca_free_cpus(ca_ctx *c, unsigned ncpu);
/* The stretches of c->tid over [c->cov0, c->cov1]. */
hs_status ca_build_segs(ca_ctx *c);

#endif
