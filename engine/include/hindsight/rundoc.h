/* hindsight/rundoc.h: the run folder's documents (run.json, snapshot.json) as typed structs with one writer and one reader each. */
#ifndef HINDSIGHT_RUNDOC_H
#define HINDSIGHT_RUNDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/arena.h"
#include "hindsight/json.h"
#include "hindsight/status.h"
#include "hindsight/strbuf.h"

/*
 * A run folder (docs/run-folder.md) holds run.json (the run: rules, sessions, counters, triggers, snapshots),
 * and per snapshot snapshots/<NNN>-<trigger>/snapshot.json (the trigger, its hit, each session's file and
 * losses, the capture-time report). Their JSON Schemas are schemas/run.schema.json and
 * schemas/snapshot.schema.json; each document carries its version (run_version, snapshot_version). Each
 * document is one table of fields inside rundoc/ that both writes and reads it, so no key is typed twice.
 * Two parts are written by other layers and embedded as JSON text: a snapshot's `trigger` (the plan's, as
 * `engine --plan --json` prints it) and its `hit` (the trigger engine's evidence); the reader gives the keys
 * a report needs from them (HS_RUNDOC_* below, which those writers use too).
 *
 * Ownership: a writer borrows the struct for the call and appends to the caller's strbuf. A reader fills the
 * caller's zeroed struct with strings and arrays allocated in the caller's arena (free the arena to free them).
 */

/* The documents' versions (a reader checks it; keys may be added within a version). */
#define HS_RUNDOC_RUN_VERSION 1
#define HS_RUNDOC_SNAPSHOT_VERSION 1

/* Keys inside the embedded parts: the plan's trigger object and the trigger engine's hit evidence. */
#define HS_RUNDOC_TRIGGER_NAME "name"
#define HS_RUNDOC_TRIGGER_KIND "kind"
#define HS_RUNDOC_HIT_TS "ts_ns"
#define HS_RUNDOC_HIT_PID "pid"
#define HS_RUNDOC_HIT_SYSTEM "system"
#define HS_RUNDOC_HIT_EVENT "event"
#define HS_RUNDOC_HIT_WHERE "where"
#define HS_RUNDOC_HIT_FRAME_PID "frame_pid"
#define HS_RUNDOC_HIT_SLICE "slice"
#define HS_RUNDOC_HIT_FRAME_MS "frame_ms"
#define HS_RUNDOC_HIT_MEDIAN_MS "median_ms"
#define HS_RUNDOC_HIT_REASON "reason"
/* a deadline trigger's hit (a process that stopped making frames or heartbeats) */
#define HS_RUNDOC_HIT_PHASE "phase"
#define HS_RUNDOC_HIT_FREEZE_START "freeze_start_ns"
#define HS_RUNDOC_HIT_FREEZE_END "freeze_end_ns"
#define HS_RUNDOC_HIT_HANG_MS "hang_ms"
#define HS_RUNDOC_HIT_DEADLINE_MS "deadline_ms"
#define HS_RUNDOC_HIT_MEDIAN_FRAME_MS "median_frame_ms"

/* The capture-time report of a snapshot (snapshot.json's and run.json's snapshots[] `report`). */
typedef struct {
	const char *state;   /* "written", "failed", "pending" (being made), "off" (the rules turn it off), "none" (no
			      * trace file to read: a replay's sessions write JSON lines) */
	const char *path;    /* the folder holding report.txt, report.json and report.html, or NULL */
	const char *verdict; /* the verdict's first line, or NULL */
	const char *verdict_more; /* its second line (the trigger), or NULL */
	const char *kind;    /* the strongest finding's kind, or NULL */
	int64_t pid;         /* its task, -1 when none */
	const char *comm;    /* its task's name, or NULL */
	bool damaged;        /* part of the snapshot could not be read */
	double seconds;      /* how long the report took */
	const char *error;   /* "failed": why */
} hs_rundoc_report;

/* ---- run.json ---- */

typedef struct {
	const char *event; /* "system:name" */
	bool optional;
	const char *why;
} hs_rundoc_skipped;

typedef struct {
	unsigned cpu;
	uint64_t entries, overrun, commit_overrun, dropped, read, bytes;
} hs_rundoc_cpu;

typedef struct {
	const char *name, *instance, *mode;
	uint64_t real_per_cpu_kb, events_enabled, events_skipped;
	hs_rundoc_skipped *skipped; /* events the kernel would not record */
	size_t n_skipped;
	bool has_skipped;
	bool key_file; /* a file-circular session: the next five */
	uint64_t bytes_streamed, bytes_in_file, chunks_dropped, bytes_lost_disk, trigger_events_lost;
	bool ring; /* a buffering session: the next eight */
	uint64_t snapshots, snapshot_events, snapshot_entries, snapshot_events_dropped, snapshot_raw_bytes,
		snapshot_bytes_dropped, snapshot_file_bytes;
	double snapshot_s;
	bool pool; /* a session with one pool of buffers (ETW): its kernel counters, under their etw_* keys */
	uint64_t pool_buffers, pool_buffer_kb, pool_free_buffers, pool_events_lost, pool_buffers_lost, pool_buffers_written;
	hs_rundoc_cpu *cpus;
	size_t n_cpus;
} hs_rundoc_run_session;

typedef struct {
	const char *name;
	bool armed;
	uint64_t hits, fired, joined, ignored_warmup, ignored_unarmed, dropped_rate, sampled_out, cancelled,
		ignored_disarmed, not_worse, excused, last_fire_ns;
} hs_rundoc_trigger_stats;

typedef struct {
	unsigned snapshot;
	const char *trigger;
	const char *folder;
	bool complete;
	uint64_t bytes;
	const char *deleted; /* "keep", "snapshots_max_mb", "failed", or NULL */
	bool has_report;
	hs_rundoc_report report;
} hs_rundoc_snapshot_entry;

typedef struct {
	unsigned run_version;
	const char *profile, *rules;
	const char **rules_files;
	size_t n_rules_files;
	const char *start;
	const char *end; /* NULL while the run goes on (written as null) */
	bool ended;      /* end and exit_code are set */
	int exit_code;
	const char *backend;
	uint64_t key_events_observed;
	hs_rundoc_run_session *sessions;
	size_t n_sessions;
	hs_rundoc_trigger_stats *triggers;
	size_t n_triggers;
	hs_rundoc_snapshot_entry *snapshots;
	size_t n_snapshots;
	bool has_report; /* the report of the run's final rings, made when it stopped */
	hs_rundoc_report report;
	const char *plan_json; /* the resolved plan as `engine --plan --json` prints it */
} hs_rundoc_run;

hs_status hs_rundoc_run_write(const hs_rundoc_run *d, hs_strbuf *out);
/* HS_ENOENT (no such file), HS_EINVAL (not a run.json), HS_ENOMEM. */
hs_status hs_rundoc_run_read(const char *path, hs_arena *a, hs_rundoc_run *out);

/* ---- snapshot.json ---- */

typedef struct {
	unsigned cpu;
	uint64_t first_ns, last_ns;
} hs_rundoc_cpu_window;

typedef struct {
	const char *name, *mode;
	const char *file;  /* NULL: not saved (error says why) */
	const char *error;
	bool ring; /* a buffering session's ring: the next ones */
	uint64_t events, ring_entries, events_dropped_for_disk, raw_bytes, file_bytes;
	double seconds;
	hs_rundoc_cpu_window *cpu_windows;
	size_t n_cpu_windows;
	bool has_cpu_windows;
	bool has_wrapped;
	bool wrapped;
	uint64_t overwritten_since_previous;
	bool key_file; /* a file-circular session's copy: the next four */
	uint64_t bytes_in_file, chunks_dropped, bytes_lost_disk, events_lost;
} hs_rundoc_snap_session;

/* What a reader needs of the embedded trigger and hit (HS_RUNDOC_TRIGGER_*, HS_RUNDOC_HIT_*). */
typedef struct {
	const char *name, *kind;
} hs_rundoc_trigger_view;
typedef struct {
	uint64_t ts_ns;
	bool has_pid, has_frame_pid;
	int64_t pid, frame_pid;
	const char *system, *event, *slice;
	const char *where; /* its where object as "field=value, ..." */
	const char *reason; /* a manual snapshot's: who asked ("engine ctl snapshot", a signal) */
	double frame_ms, median_ms;
	/* deadline: "frozen" (still frozen when it fired) or "ended"; the freeze's start (the last frame or
	 * heartbeat) and, ended, its end; 0 when not said */
	const char *phase;
	uint64_t freeze_start_ns, freeze_end_ns;
	double hang_ms, deadline_ms, median_frame_ms;
} hs_rundoc_hit_view;

typedef struct {
	unsigned snapshot_version;
	unsigned snapshot;
	const char *trigger_json; /* written as it is (NULL: null); read back as JSON text */
	hs_rundoc_trigger_view trigger; /* read */
	const char *hit_json;
	hs_rundoc_hit_view hit;
	const char *clock;
	uint64_t first_hit_ns, last_hit_ns, hits;
	double weight;
	uint64_t detect_ns;
	double detection_latency_ms;
	uint64_t due_ns, taken_ns;
	const char *taken_at;
	bool marker_written;
	const char *rules_hash, *backend;
	hs_rundoc_snap_session *sessions;
	size_t n_sessions;
	const char **files;
	size_t n_files;
	bool has_report;
	hs_rundoc_report report;
} hs_rundoc_snapshot;

hs_status hs_rundoc_snapshot_write(const hs_rundoc_snapshot *d, hs_strbuf *out);
hs_status hs_rundoc_snapshot_read(const char *path, hs_arena *a, hs_rundoc_snapshot *out);

/* Writes the report status as a JSON object into j (the status document and the JSONL tap embed it). */
void hs_rundoc_report_json(hs_json *j, const hs_rundoc_report *rep);

#endif
