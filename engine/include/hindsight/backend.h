/* hindsight/backend.h: the capture backend interface: one table of operations that tracefs, ETW and replay implement. */
#ifndef HINDSIGHT_BACKEND_H
#define HINDSIGHT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/launch.h"
#include "hindsight/msg.h"
#include "hindsight/plan.h"
#include "hindsight/status.h"

/*
 * A backend is a table of operations (hs_backend_ops) and the state its start
 * made (hs_backend, which each implementation defines for itself). The
 * recording loop (engine/src/run/record.c) only calls through the table, so a
 * recorded trace replayed by hs_backend_replay drives the same loop, observer
 * and snapshots as the kernel backends (docs/backends.md). A build has at
 * most one kernel backend (hs_backend_native: tracefs on Linux, ETW on
 * Windows) and always the replay backend. Calls come from one thread.
 *
 * Ownership: start borrows the plan (and through it the rules), run_dir and
 * the opts' strings until free; the backend owns the kernel sessions it made
 * (or the input it replays) and removes them in stop (or free if stop was not
 * called). Status structs returned by session_status point into the backend
 * and stay valid until free. Messages for the user go to the sink opts->msg
 * (hindsight/msg.h; borrowed until free; its source is the backend's name),
 * which the engine prints and tees to main.log. A handle goes back only to
 * the table that made it.
 */

typedef struct hs_backend hs_backend;

typedef struct hs_key_event hs_key_event;

/* Decodes a key event's payload fields by name (the backend's event formats:
 * libtraceevent for tracefs and trace.dat input). Both return false when the
 * event has no such field or it has another type. */
typedef struct {
	/* Integer fields of any width and sign, widened. */
	bool (*num)(const hs_key_event *ev, const char *field, int64_t *out);
	/* String fields (char arrays, __data_loc strings): NUL-terminated into
	 * buf, cut at cap - 1 bytes. */
	bool (*str)(const hs_key_event *ev, const char *field, char *buf, size_t cap);
	/* The event's payload fields in its format's order (common_* left out): up to cap names into names, each
	 * with whether str reads it; returns how many it gave. NULL when the backend has no formats of its own to
	 * say (ETW: the catalog's `formats:` name them). A live event's fields are named by the event itself, never
	 * by the host: a replayed trace.dat from another kernel says its own. */
	size_t (*names)(const hs_key_event *ev, char (*names)[32], bool *is_str, size_t cap);
	void *ctx;
} hs_key_fields;

/* One key event seen while streaming: borrowed for the callback's duration. */
struct hs_key_event {
	size_t session;     /* index in plan->sessions */
	unsigned cpu;
	uint64_t ts_ns;     /* in the session's clock */
	const char *system; /* provider (ftrace system) */
	const char *name;   /* event name */
	int pid;
	const void *raw;    /* the event's payload as the kernel wrote it */
	size_t raw_len;
	const hs_key_fields *fields; /* NULL when the backend cannot decode fields */
	/* An early second copy of an event the session also streams, from its
	 * trigger-detection instance (tracefs; hs_session_status.trigger_copies):
	 * the trigger engine takes these, counters take the streamed originals. */
	bool trigger_copy;
};

/* Called from the backend's poll (or a snapshot, which keeps streaming) for
 * every event a file-circular session streams; must not call back into the
 * backend, except now_ns. */
typedef void (*hs_key_event_fn)(void *ctx, const hs_key_event *ev);

typedef struct {
	/* Progress, warnings and failures (hindsight/msg.h), called from the
	 * backend's threads too; NULL: "source: text" lines on stderr. */
	const hs_msg *msg;
	/* Set by a signal handler; long operations check it to say they are busy. */
	volatile int *interrupts;
	/* Replay only (the kernel backends ignore them): the recorded trace.dat or
	 * .etl to feed through the plan's sessions, and the pace: 1 = as recorded,
	 * 10 = ten times faster, 0 = as fast as possible. */
	const char *input;
	double speed;
} hs_backend_opts;

typedef struct {
	uint64_t entries, overrun, commit_overrun, bytes, dropped, read;
	/* The ring's oldest event (page-exact) and the ring's clock when the
	 * counters were read, both in the session's trace clock: now_ns -
	 * oldest_ns is the history the CPU's ring holds. 0: unknown (no events,
	 * a counter clock that is not in ns, or a backend that cannot say). */
	uint64_t oldest_ns, now_ns;
} hs_cpu_stats;

/* An event (or, without a name, a whole system) the rules ask for that a
 * session does not record: the kernel lacks it or refused its filter. Only
 * optional ones (the rules' `optional: true`) are skipped while recording
 * goes on; any other makes start fail with HS_ERULES. */
typedef struct {
	const char *system;
	const char *name; /* NULL: the whole system */
	const char *why;  /* the kernel's word: "not in this kernel", the filter error */
	bool optional;
} hs_skipped_event;

typedef struct {
	const char *name;       /* session name (rules) */
	const char *kernel_name; /* tracefs instance / ETW logger name */
	hs_session_mode mode;
	uint64_t real_per_cpu_kb; /* read back from the kernel after sizing */
	unsigned cpus;
	const hs_cpu_stats *cpu; /* [cpus], last read (final after stop) */
	uint64_t bytes_streamed;  /* file-circular: raw bytes taken from the ring */
	uint64_t bytes_in_file;   /* file-circular: raw bytes the output file holds now */
	uint64_t chunks_dropped;  /* file-circular: chunks removed to stay under max_file_mb */
	uint64_t bytes_lost_disk; /* file-circular: raw bytes not written, the disk full and nothing left to drop */
	/* file-circular, tracefs: the session has a trigger-detection instance whose
	 * events reach the observer as trigger_copy events (feed triggers only
	 * those), and the watched events that instance lost (its ring full: a
	 * detection that may have come late, at the session's flush, or never). */
	bool trigger_copies;
	uint64_t trigger_events_lost;
	uint64_t snapshots, snapshot_events, snapshot_entries; /* buffering: last snapshot */
	double snapshot_s;        /* buffering: last snapshot's wall time, drain + write */
	/* buffering, last snapshot, per CPU [cpus]: the trace-clock times of the
	 * oldest and newest event it kept (both 0: the CPU kept none). NULL where
	 * the backend does not know (ETW). */
	const uint64_t *snapshot_cpu_first_ns, *snapshot_cpu_last_ns;
	/* buffering, last snapshot: raw ring bytes drained, the .dat's size, and
	 * what was left out (the oldest) because the disk was full or a CPU held
	 * more than libtracecmd can write (snapshot_events counts what was kept:
	 * snapshot_events + snapshot_events_dropped = the ring's entries). */
	uint64_t snapshot_raw_bytes, snapshot_file_bytes, snapshot_bytes_dropped, snapshot_events_dropped;
	size_t events_enabled, events_skipped; /* skipped: missing in this kernel or bad filter */
	const hs_skipped_event *skipped;       /* [events_skipped] which, and why (tracefs; NULL on ETW) */
	/* A session whose kernel keeps one pool of buffers for all CPUs instead of
	 * per-CPU rings (pool true, cpus 0; ETW), from the kernel's own query
	 * (ETW: EVENT_TRACE_CONTROL_QUERY): the buffers it really gave the session,
	 * their size, how many are free, and what it lost and wrote. */
	bool pool;
	uint32_t pool_buffers, pool_buffer_kb, pool_free_buffers;
	uint64_t pool_events_lost, pool_buffers_lost, pool_buffers_written;
	/* A session whose events a consumer counts as they come (ETW real time):
	 * the events of its plan's providers handed over so far (queued or dropped
	 * for a full queue), for the status's events/s where the kernel says
	 * nothing of what its buffers hold. */
	bool events_counted;
	uint64_t events_seen;
	/* file-circular, pool: the file's cap in bytes. A file that overwrites
	 * nothing before it reaches its cap holds everything since the start
	 * while bytes_in_file plus a buffer stays under it. 0: no such cap. */
	uint64_t file_max_bytes;
} hs_session_status;

/* How often poll must run for the backend to keep up: the loop's wake interval. */
typedef enum {
	HS_BACKEND_WAKE_IDLE,      /* the kernel writes every file; poll only waits (ETW) */
	HS_BACKEND_WAKE_STREAMING, /* poll moves file-circular sessions' data: every few tens of ms while one exists (tracefs) */
	HS_BACKEND_WAKE_ALWAYS,    /* every event arrives through poll, on time only if it runs often (replay) */
} hs_backend_wake;

/* The name of a task of this machine (pid), as it is now; false when unknown. */
typedef bool (*hs_task_name_fn)(int pid, char *out, size_t cap);

typedef struct hs_backend_ops {
	const char *name; /* "ftrace", "etw", "replay": for messages and hs_backend_find */
	/* Makes kernel sessions: the recording mode checks privilege and claims
	 * the plan's session names first. false: runs as any user. */
	bool kernel;
	hs_backend_wake wake;
	int wake_ms; /* wake STREAMING or ALWAYS: the loop's wake interval while poll moves data */
	/* How late an event may reach the observer after it happened (ETW real
	 * time: buffers come when full or at the flush timer), ms; triggers judge
	 * a deadline that much later. 0: at once. */
	uint32_t delivery_lag_ms;

	/* Kernel backends whose session names are the machine's to share: claims
	 * them for this run before anything is made (tracefs: a lock per instance
	 * name that dies with the process), so a second engine with the same
	 * names stops here instead of removing the first one's sessions. HS_OK,
	 * or an error after saying on msg who holds them. NULL: nothing to claim. */
	hs_status (*claim)(const hs_plan *plan, const hs_msg *msg);
	/* The run folder is made: leaves it with the claims, then deals with what
	 * an engine that died holding them left in its own run folder (tracefs:
	 * the key-event file rebuilt from its chunks), saying so on msg. */
	void (*adopt)(const hs_plan *plan, const char *run_dir, const hs_msg *msg);
	/* Lets the names go (the run stopped, or never started). */
	void (*release)(const hs_plan *plan);
	/* The name of a task of this machine as it is now, for an event that
	 * names none (tracefs: /proc, then the kernel's saved_cmdlines); false
	 * when unknown. NULL: the backend's pids are not this machine's tasks
	 * (replay: another time's) or it has no way to ask. */
	hs_task_name_fn task_name;
	/* Launch mode (hindsight/launch.h, hs_launch_run): runs one program under
	 * the CPU sampler (Linux: perf_event_open; Windows: an ETW sampling
	 * session). NULL: the backend cannot (replay). */
	hs_status (*launch)(const hs_plan *plan, const hs_launch_opts *o, const hs_msg *msg, hs_launch_result *res);

	/* Creates and starts every session of the plan. Kernel backends remove
	 * stale sessions with the plan's names (left by a dead engine) first and
	 * tell the user. HS_EPERM when not privileged, HS_EIO on kernel refusals,
	 * HS_EINVAL on input the backend cannot use (message printed). */
	hs_status (*start)(const hs_plan *plan, const char *run_dir, const hs_backend_opts *opts, hs_backend **out);

	/* Waits up to timeout_ms, then moves whatever the streaming sessions have
	 * produced to their files (and the observer), and flushes them to disk when a
	 * session's flush interval is due. Returns early on a signal. */
	hs_status (*poll)(hs_backend *b, int timeout_ms);

	/* Writes session `session`'s current contents to `path` (NULL: the run
	 * directory's output name from the rules), through a temporary name and a
	 * rename. Buffering: freezes the ring, drains it losslessly and resumes it
	 * unless `final`. File-circular: flushes and rebuilds its file. */
	hs_status (*snapshot)(hs_backend *b, size_t session, const char *path, bool final);

	/* Registers the key-event observer (NULL to remove); HS_EUNSUPPORTED when
	 * the backend cannot see events as they happen. */
	hs_status (*set_observer)(hs_backend *b, hs_key_event_fn fn, void *ctx);

	/* Reads the counters now (before stop) and returns the session's status. */
	hs_status (*session_status)(hs_backend *b, size_t session, const hs_session_status **out);
	size_t (*n_sessions)(const hs_backend *b);

	/* True once there is nothing more to record (replay: the input ended).
	 * NULL for live backends, which record until told to stop. */
	bool (*finished)(const hs_backend *b);

	/* The sessions' clock now, in the units of hs_key_event.ts_ns (tracefs:
	 * the plan's trace clock; replay: the recorded time the replay has
	 * reached). Triggers time post_delay and cool-downs with it. NULL: unknown. */
	uint64_t (*now_ns)(hs_backend *b);

	/* Writes `text` (one line) as a marker into every session's trace, so a
	 * snapshot shows where a trigger fired (tracefs: each instance's
	 * trace_marker). HS_EUNSUPPORTED when the backend cannot; NULL likewise. */
	hs_status (*mark)(hs_backend *b, const char *text);

	/* Final flush of streaming sessions, final counters, kernel sessions removed. */
	hs_status (*stop)(hs_backend *b);
	void (*free)(hs_backend *b);
} hs_backend_ops;

/* The backends. hs_backend_ftrace exists in Linux builds with libtracefs,
 * hs_backend_etw in Windows builds (the hindsight_etw library); replay in every build. */
extern const hs_backend_ops hs_backend_ftrace;
extern const hs_backend_ops hs_backend_etw;
extern const hs_backend_ops hs_backend_replay;

/* This build's kernel backend (ftrace or etw), or NULL when it has none. */
const hs_backend_ops *hs_backend_native(void);
/* A backend of this build by name ("ftrace", "etw", "replay"), or NULL. */
const hs_backend_ops *hs_backend_find(const char *name);

#endif
