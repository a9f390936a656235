/* hindsight/estimate.h: I/O and coverage estimates: event and byte rates per provider and event, and what they mean for the rules' file and ring sizes. */
#ifndef HINDSIGHT_ESTIMATE_H
#define HINDSIGHT_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/problem.h"
#include "hindsight/rules.h"
#include "hindsight/status.h"

/*
 * Two steps. hs_estimate_read walks one trace (.dat or .etl) and tallies
 * events and bytes per (provider, event) and per CPU. The caller then
 * describes each trace as a session (the rules' sizes, the time the rates are
 * over, what the backend lost) in an hs_estimate_report, and the renderers
 * compute the rates and projections from that. `engine --estimate` fills the
 * report from a recording it just made, `analyze estimate` from a file.
 *
 * Bytes are record sizes as the trace stores them: for trace.dat the ring
 * buffer event (its 4 or 8 byte header and the payload, libtraceevent's
 * record_size; the 16-byte page headers, time-extend records and page tail
 * padding are not records); for .etl the record's own size field (header,
 * extended items and payload; the 8-byte alignment padding and the buffer
 * headers are not). docs/estimator.md has every formula.
 *
 * Ownership: a trace from hs_estimate_read owns everything in it; free it with
 * hs_estimate_trace_free (its problems list included). A report borrows its
 * traces and strings.
 */

typedef enum { HS_ESTIMATE_TRACEDAT = 1, HS_ESTIMATE_ETL = 2 } hs_estimate_format;

/* One event kind: a (provider, event) pair as the report names it. */
typedef struct {
	char provider[128]; /* catalog provider name, ftrace system, TraceLogging name or {guid} */
	char event[96];     /* event name, "name (id N)", "id N", "opcode N" */
	uint64_t events, bytes;
} hs_estimate_kind;

/* Records per CPU (the file's processor index). */
typedef struct {
	uint64_t events, bytes;
	uint64_t first_ns, last_ns; /* valid when events > 0 */
} hs_estimate_cpu;

typedef struct {
	hs_estimate_format format;
	uint64_t file_bytes;
	uint64_t events, bytes; /* every record (ETL: the logfile header record too, as `analyze counts` counts) */
	/* First and last event time in ns: trace clock (trace.dat) or since 1601
	 * (ETL; the logfile header record is left out, as `analyze summary` does). */
	bool has_span;
	uint64_t first_ns, last_ns;
	hs_estimate_cpu *cpu; /* [n_cpu], indexed by CPU number */
	unsigned n_cpu;
	hs_estimate_kind *kinds; /* providers by bytes (largest first), events by bytes within each */
	size_t n_kinds;
	/* ETL: the logfile header's own loss counters */
	uint64_t etl_events_lost, etl_buffers_lost;
	/* trace.dat: events the ring pages say were lost before a record, and how
	 * many times a page said so without a count */
	uint64_t dat_missed_events, dat_missed_unknown;
	hs_problems problems; /* what the reader found damaged or could not name, copied from it */
} hs_estimate_trace;

typedef struct {
	const hs_ruleset *rules; /* catalogs for provider and event names; may be NULL */
	/* trace.dat: passed to hs_tracedat_open_ex, which ignores it since the
	 * reader checks what it reads (no forked probe child any more). */
	bool probe;
} hs_estimate_read_opts;

/* Reads `path` (trace.dat or .etl, by content). HS_ENOENT, HS_EIO, HS_EINVAL
 * (neither format), HS_EUNSUPPORTED (trace.dat without libtracecmd),
 * HS_ENOMEM. On failure *out is still set when the reader saw something, so
 * its problems can be printed; free it. */
hs_status hs_estimate_read(const char *path, const hs_estimate_read_opts *opts, hs_estimate_trace **out);
void hs_estimate_trace_free(hs_estimate_trace *t);

/* One trace as a session of the rules. */
typedef struct {
	const char *name;   /* the rules' session name, or NULL when no session matched */
	bool has_mode;
	hs_session_mode mode;
	const char *file;   /* the path read */
	hs_status read_status; /* HS_OK, or why the file could not be read */
	const hs_estimate_trace *trace; /* NULL when unreadable */
	/* Seconds the rates are over: the recording's length (live), or 0 for the
	 * trace's first-to-last event span (offline). */
	double window_s;
	/* Which projections to show: live the one of the session's mode, offline
	 * both. The rules' sizes they use (0 when the rules have none) and the
	 * sessions those come from: this one live; offline the file session and
	 * the ring of the file's platform, the trace standing in for either. */
	bool project_file, project_ring;
	uint64_t max_file_mb, ring_mb;
	const char *file_session, *ring_session;
	/* Per-CPU buffers (tracefs): the sizes split evenly over this many CPUs,
	 * so the busiest CPU wraps first. 0: one pool shared by all CPUs (ETW). */
	unsigned split_cpus;
	/* Live: the backend's counters at the end of the recording. */
	bool has_counters;
	uint64_t kernel_events;               /* tracefs: read + entries + overrun + dropped */
	uint64_t overrun, dropped, commit_overrun; /* tracefs, summed over CPUs */
	const uint64_t *cpu_kernel_events; /* tracefs: [n_cpu_kernel], kernel_events per CPU */
	unsigned n_cpu_kernel;
	uint64_t bytes_streamed, chunks_dropped;   /* tracefs file-circular: ring pages taken */
	bool pool; /* one pool of buffers for the session (ETW), its kernel counters: */
	uint64_t pool_events_lost, pool_buffers_lost;
	uint32_t pool_buffers, pool_free_buffers;
	uint64_t bytes_in_file; /* the output file's size at the end (0 unknown) */
} hs_estimate_session;

typedef struct {
	bool live;            /* engine --estimate (else analyze estimate) */
	const char *profile;  /* rules profile name, or NULL */
	const char *rules_path;
	const char *run_dir;  /* live: the estimate's run folder */
	hs_platform platform;
	double requested_s;   /* live: --estimate SECONDS */
	hs_estimate_session *sessions;
	size_t n_sessions;
} hs_estimate_report;

/* Projections need at least this much: a shorter or sparser capture gives no
 * rate worth extrapolating to days and years (the report says why). */
#define HS_ESTIMATE_MIN_SECONDS 1.0
#define HS_ESTIMATE_MIN_EVENTS 10u

/* The ring sizes every report shows history for, in MB (2^20 bytes). */
extern const uint64_t hs_estimate_ring_sizes_mb[];
extern const size_t hs_estimate_n_ring_sizes;

/* The report as text, or as one JSON document. HS_ENOMEM or HS_EIO. */
hs_status hs_estimate_print_text(const hs_estimate_report *r, FILE *out);
hs_status hs_estimate_print_json(const hs_estimate_report *r, FILE *out);

#endif
