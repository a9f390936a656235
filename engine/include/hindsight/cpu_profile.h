/* hindsight/cpu_profile.h: CPU samples of an .etl or a perf.data joined to their stacks, resolved to modules and aggregated per process, thread and stack. */
#ifndef HINDSIGHT_CPU_PROFILE_H
#define HINDSIGHT_CPU_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/etl.h"
#include "hindsight/perfdata.h"
#include "hindsight/regex.h"
#include "hindsight/status.h"

/*
 * One walk of a trace in time order builds the model: processes and threads
 * from their kernel events, images (with their ImageId / DbgID names) for
 * symbolisation, and every SampledProfile sample with its kernel and user
 * stack halves, joined from stack walk events, stack keys and their
 * definitions. Then each sample shown (its process name matches the filter)
 * becomes one stack of frame names ("module!+0xoffset" or "0xaddress"), and
 * equal stacks are summed. The program renders the result; the library
 * prints nothing.
 *
 * A perf.data gives the same view (hs_cpu_profile_build_perf): processes and
 * threads from its samples' pid/tid and its COMM and FORK records, images
 * from MMAP/MMAP2, each sample's callchain split at the kernel/user context
 * markers; user frames are "<file's base name>!+0x<file offset>" and kernel
 * frames "[kernel]!+0x<address>" (docs/perfdata-notes.md).
 *
 * Ownership: hs_cpu_profile_build allocates the profile; free it with
 * hs_cpu_profile_free. The view, the processes, threads, orders, stacks and
 * frame names it gives out all belong to the profile and are valid until it
 * is freed; callers only read them. The trace and the filter are only read
 * during the build (walked with hs_etl_foreach) and may be closed after it;
 * so is the perf.data reader.
 */

/* What the sampling interval was taken from. */
typedef enum {
	HS_CPU_INTERVAL_DEFAULT,          /* no interval event: Windows' default 1 ms */
	HS_CPU_INTERVAL_COLLECTION_START, /* the interval at collection start */
	HS_CPU_INTERVAL_SET_INTERVAL,     /* a SetInterval event */
	HS_CPU_INTERVAL_COLLECTION_END,   /* the interval at collection end */
	HS_CPU_INTERVAL_PERF_FREQ,        /* perf.data: the attr's sample_freq (Hz) */
	HS_CPU_INTERVAL_PERF_PERIOD,      /* perf.data: the sample_period of a clock event (ns) */
	HS_CPU_INTERVAL_PERF_EVENTS,      /* perf.data: a period of events that are not time (interval 0) */
} hs_cpu_interval_source;

typedef struct {
	uint32_t pid;     /* UINT32_MAX for the bucket of samples whose thread was never seen */
	char *name;       /* NULL until an event names the process */
	char *cmdline;    /* or NULL */
	uint64_t samples; /* weighted */
	uint64_t stacked; /* of which with a stack */
	bool shown;       /* passes the filter */
} hs_cpu_process;

typedef struct {
	uint32_t process; /* index into the view's processes */
	uint32_t tid;
	uint64_t samples;
	char *name; /* or NULL */
} hs_cpu_thread;

typedef struct {
	uint32_t interval; /* 100 ns units */
	hs_cpu_interval_source interval_source;
	uint64_t total_weight;    /* every sample */
	uint64_t shown_weight;    /* samples of shown processes */
	uint64_t stacked_weight;  /* shown samples with a stack */
	uint64_t frames_total;    /* weighted frame instances of shown samples */
	uint64_t frames_resolved; /* of which resolved to a module */
	uint64_t undecodable;     /* kernel events too short or garbled to decode */
	uint64_t unresolved_keys; /* samples whose stack key was never defined */
	const hs_cpu_process *processes;
	size_t nprocesses;
	const hs_cpu_thread *threads;
	size_t nthreads;
	/* Shown processes with samples, most samples first (then pid, then index). */
	const uint32_t *order;
	size_t norder;
	/* Thread indexes grouped by process, most samples first within one;
	 * first_thread[process] is where its group starts, or SIZE_MAX. */
	const uint32_t *thread_order;
	const size_t *first_thread;
	size_t nstacks; /* distinct stacks, in order of first appearance */
	size_t nframes; /* distinct frame names */
} hs_cpu_view;

typedef struct hs_cpu_profile hs_cpu_profile;

/* Called for every record the build walks (to show progress). */
typedef void (*hs_cpu_progress_fn)(const hs_etl *etl, const hs_etl_record *r, void *ctx);

/* Builds the profile of etl; process (or NULL for all) picks the processes
 * shown by name. HS_ENOMEM when memory ran out (nothing is returned). */
hs_status hs_cpu_profile_build(hs_etl *etl, const hs_regex *process, hs_cpu_progress_fn progress, void *ctx,
			       hs_cpu_profile **out);
void hs_cpu_profile_free(hs_cpu_profile *p);

/* The same from a perf.data (walked with hs_perfdata_foreach; its problems
 * stay with the reader). A sample weighs 1; in period mode (no sample_freq)
 * a sample whose period is k times the attr's weighs k. HS_ENOMEM. */
hs_status hs_cpu_profile_build_perf(hs_perfdata *pd, const hs_regex *process, hs_cpu_profile **out);

const hs_cpu_view *hs_cpu_profile_view(const hs_cpu_profile *p);

/* Stack sid (< nstacks): its frame ids leaf first, their count, its process
 * index and its summed weight. */
const uint32_t *hs_cpu_profile_stack(const hs_cpu_profile *p, size_t sid, size_t *nframes, uint32_t *process,
				     uint64_t *weight);
/* The name of frame id f (< nframes). */
const char *hs_cpu_profile_frame(const hs_cpu_profile *p, uint32_t f);

/* A process's name for display: its own, "(unnamed)" or "(unknown thread)". */
const char *hs_cpu_process_name(const hs_cpu_process *p);

#endif
