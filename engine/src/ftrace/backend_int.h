/* ftrace/backend_int.h: the tracefs backend's private state, shared by its streaming (backend.c) and ring-snapshot (snapshot.c) halves. */
#ifndef HS_FTRACE_BACKEND_INT_H
#define HS_FTRACE_BACKEND_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "ftrace/instance.h"
#include "hindsight/backend.h"

/* A file-circular session's per-CPU reader: appends sub-buffers to the current
 * chunk file; chunks [first, cur] exist on disk and hold cpu_bytes together. */
typedef struct {
	struct tracefs_cpu *tcpu;
	int fd;
	unsigned first, cur;
	uint64_t cur_bytes, *chunk_bytes; /* [HS_LINUX_STREAM_CHUNKS], by seq % N */
	uint64_t cpu_bytes;               /* all chunks of this CPU: at most the session's cpu_budget */
} stream_cpu;

/* A watched key session's trigger-detection instance (detect.c). */
typedef struct hs_ftrace_detect hs_ftrace_detect;

typedef struct {
	const hs_plan_session *ps;
	struct tracefs_instance *inst;
	hs_session_status st;
	hs_cpu_stats *cpu;
	uint64_t *snap_first_ns, *snap_last_ns; /* buffering: [cpus], the last snapshot's window per CPU */
	char *output;    /* run_dir/output */
	char *chunk_dir; /* file-circular: run_dir/.<output>.chunks */
	stream_cpu *sc;  /* file-circular: [cpus] */
	uint64_t chunk_limit, cpu_budget; /* file-circular: bytes per chunk, per CPU */
	bool dirty;      /* data streamed since the file was last rebuilt */
	double next_flush;
	double next_rebuild; /* the periodic rewrite of the output file waits until then */
	struct rebuild_job *rebuild; /* a periodic rewrite running in rebuild_tid, or NULL */
	pthread_t rebuild_tid;
	atomic_bool rebuild_done;
	hs_ftrace_events ev;
	int marker_fd; /* the instance's trace_marker, for mark(); -1 when closed */
	hs_ftrace_detect *det; /* file-circular a trigger watches: its detection instance, or NULL */
	struct hs_snap_prep *prep; /* buffering: the next snapshot's headers, being or already written (snapshot.c) */
} session;

struct hs_backend {
	const hs_plan *plan;
	const char *run_dir;
	const hs_msg *msg; /* opts->msg, borrowed; NULL: stderr */
	volatile int *interrupts;
	unsigned cpus;
	size_t subbuf;
	session *s;
	size_t n;
	struct tep_handle *tep;
	struct kbuffer *kb;
	void *page;
	hs_key_event_fn fn;
	void *fn_ctx;
	bool stopped;
	/* now_ns: the key sessions' trace clock as a POSIX clock, when it maps to
	 * one; else the newest event time the observer saw. */
	bool clock_posix;
	clockid_t clock_id;
	uint64_t newest_ts;
	/* A thread that works while the caller keeps streaming (a rewrite, a ring
	 * snapshot) sets its done flag and broadcasts wait_cv under wait_mu. */
	pthread_mutex_t wait_mu;
	pthread_cond_t wait_cv;
	bool wait_init;
	/* The cheap path of the poll for every file-circular session (backend.c),
	 * for hs_ftrace_stream_until (common.c), which must not call back into
	 * backend.c: set at start. */
	hs_status (*drain_streams)(hs_backend *b);
	/* Bytes before the CPU data in a ring snapshot's .dat (headers, kernel
	 * symbols, comms), measured the first time a disk is too full for the
	 * whole ring; 0 until then. Snapshot threads share it. */
	_Atomic uint64_t dat_header_bytes;
};

/* common.c: messages for the user, through the sink the backend was started with (source "ftrace"). */
void hs_ftrace_say(hs_backend *b, hs_msg_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
double hs_ftrace_now_s(void);
/* "a/b", malloc'd; NULL when out of memory. */
char *hs_ftrace_path_join(const char *a, const char *b);
/* Reads per_cpu/cpuN/stats of every CPU into s->cpu. */
void hs_ftrace_read_stats(hs_backend *b, session *s);
/* The same for any instance, into cpu[b->cpus]. */
void hs_ftrace_read_cpu_stats(hs_backend *b, struct tracefs_instance *inst, hs_cpu_stats *cpu);
/* observe.c: hands every event of one sub-buffer to the observer, as session si's;
 * `copy`: from its trigger-detection instance (hs_key_event.trigger_copy). */
void hs_ftrace_observe(hs_backend *b, size_t si, unsigned cpu, void *page, bool copy);
/* common.c: the events the CPUs' stats say the session's ring holds. */
uint64_t hs_ftrace_sum_entries(const session *s, unsigned cpus);

/* Wakes hs_ftrace_stream_until: call after setting its done flag. */
void hs_ftrace_wake(hs_backend *b);
/* Keeps the file-circular sessions streaming (the cheap path: full pages to
 * their chunks and the observer, no flush, no rewrite) every
 * HS_LINUX_STREAM_WAKE_MS until *done, so work the caller waits for (a ring
 * snapshot, a rewrite) never stops the key-event stream. Calling thread only. */
void hs_ftrace_stream_until(hs_backend *b, atomic_bool *done);

/* Drains a frozen buffering session's ring (the caller turned it off and read
 * its stats) losslessly into `path` (a trace.dat, through a temporary name)
 * and resumes it unless `final`; the key-event sessions keep streaming
 * meanwhile. `reserve` is what the disk must keep free for the key-event
 * files' rewrites and the manifest (computed by the caller, which owns those
 * sessions' counters). */
hs_status hs_ftrace_snapshot_ring(hs_backend *b, session *s, const char *path, bool final, uint64_t reserve);
/* Writes buffering session s's next snapshot headers in the background, at
 * the snapshot threads' priority, after `delay_s` unless a snapshot wants them
 * sooner; nothing when some are already prepared. Calling thread: the one
 * that takes snapshots (a snapshot prepares the next itself). */
void hs_ftrace_snapshot_prepare(hs_backend *b, session *s, double delay_s);
/* Waits for and frees what hs_ftrace_snapshot_prepare started (stop, free). */
void hs_ftrace_snapshot_unprepare(session *s);
/* Free bytes on the file system of `path`, less `reserve` (0 when not more). */
uint64_t hs_ftrace_room_for(const char *path, uint64_t reserve);

/* ---- trigger detection (detect.c, docs/triggers.md "Detection latency") ---- */
/* For file-circular session si that a trigger watches
 * (hs_plan_session_has_trigger_copy): a second instance, <logger_name>
 * HS_LINUX_DETECT_SUFFIX, recording only the watched events (the session's
 * filters, clock, self-exclusion, copy_trace_marker) in a small ring that does
 * not overwrite; sets s->det and st.trigger_copies. A stale one of that name is
 * removed first (also for a session no trigger watches now). Failures other
 * than HS_ENOMEM are said and leave the session without one (its events then
 * reach the triggers as they stream). Off until hs_ftrace_detect_trace_on. */
hs_status hs_ftrace_detect_setup(hs_backend *b, size_t si);
void hs_ftrace_detect_trace_on(session *s);
void hs_ftrace_detect_trace_off(session *s);
/* Reads everything the instance holds, partly filled pages too (the reader
 * never waits), and hands it to the observer as copies; nothing is written. */
hs_status hs_ftrace_detect_drain(hs_backend *b, size_t si);
/* Its per-CPU stats: the events it lost go to st.trigger_events_lost. */
void hs_ftrace_detect_read_stats(hs_backend *b, session *s);
/* Removes the instance (its readers closed first). */
void hs_ftrace_detect_close(hs_backend *b, session *s);
/* Releases the name's lock and frees s->det. */
void hs_ftrace_detect_free(session *s);

#endif
