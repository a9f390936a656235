/* tracefs_recorder.h: an hs_tracefs_api that stands in for the kernel's tracefs without root or a mount, writes every call as one line and injects the kernel's refusals. */
#ifndef HS_TEST_TRACEFS_RECORDER_H
#define HS_TEST_TRACEFS_RECORDER_H

#include <stdbool.h>

#include "ftrace/tracefs_api.h"
#include "hindsight/plan.h"

/*
 * The fake behaves like tracefs where the backend depends on it: instances
 * exist after instance_create and not after instance_destroy; a file reads
 * back what was written to it (trace_clock as the kernel lists it, the
 * current clock in brackets; an event's filter file the filter); per-CPU
 * stats say the ring is empty; the per-CPU readers and the descriptors of
 * instance_file_open (/dev/null) return no data. The event formats
 * (local_events_system) and a tracing directory on disk (header_page,
 * header_event, each event's format: what libtracecmd reads for a .dat's
 * headers) hold the events the plan names, less the ones a test declares
 * missing.
 *
 * Each call is one line of the log: the function, the arguments that matter
 * (instance, file, the bytes written, sizes, event system/name, filters) and
 * the result. Normalized: the engine's thread ids written to
 * set_event_notrace_pid, and the fake's tracing directory ("<tracefs>").
 * Reads of a ring that return no data are not logged (their number depends on
 * how long the caller waited, not on what it asked). Calls made on threads
 * other than the one that called trec_reset (the snapshot's and the file
 * rewrites' workers, the header preparer) have no order against the caller's:
 * they are listed after its calls, sorted.
 *
 * Ownership: the recorder is process-global; trec_reset frees what the last
 * test left; trec_log's text is the recorder's until the next call.
 */

/* The table to hs_tracefs_api_set. */
extern hs_tracefs_api trec_api;

/* Starts over: no instance, tracefs mounted, `cpus` CPUs, the events of
 * `plan` (its sessions' and its triggers') and ftrace:print known, the fake
 * tracing directory and lock folder made under `workdir` (absolute). */
void trec_reset(const hs_plan *plan, unsigned cpus, const char *workdir);
/* The Nth call (1-based; 0: every one) of function `fn` (a table entry's name)
 * whose logged arguments contain `match` (NULL: any) fails with errno `err`.
 * event_filter_apply's failure leaves the kernel's parse error in the event's
 * filter file and in error_last, as the kernel does. */
void trec_fail(const char *fn, const char *match, int nth, int err);
/* The kernel lacks this event (name NULL: the whole system). */
void trec_missing(const char *sys, const char *name);
/* tracefs is not mounted: tracing_dir is NULL until mount succeeds. */
void trec_unmounted(void);
/* An instance of this name exists before the test (a dead engine's). */
void trec_add_instance(const char *name);
/* The instances that exist now. */
int trec_instances(void);
bool trec_instance_exists(const char *name);
/* The call log (see above). */
const char *trec_log(void);

#endif
