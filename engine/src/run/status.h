/* run/status.h: what a running recorder says about itself (sessions, triggers, its own cost), for the live view, engine ctl status and docs/live.md. */
#ifndef HS_RUN_STATUS_H
#define HS_RUN_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/backend.h"
#include "hindsight/json.h"
#include "hindsight/plan.h"
#include "hindsight/rundoc.h"
#include "hindsight/trigger.h"

/*
 * The recording loop (record.c) gathers a status at most once a second
 * (HS_STATUS_INTERVAL_MS) from the backend's table (session_status) and the
 * trigger engine (hs_trigger_engine_stats); the live view draws it and engine
 * ctl status sends it as JSON (hs_run_status_json, schemas/status.schema.json).
 * Counters that run.json also has carry the same names there and here.
 *
 * Rates and the recorder's CPU are over the interval since the previous
 * update; the first update has none (-1). Unknown values are -1: a backend
 * that cannot say (ETW has no per-CPU ring times, replay no ring clock).
 *
 * Ownership: strings are borrowed from the plan, the backend (valid until its
 * free) and the loop (run folder); the arrays belong to the status (new, free).
 * Only the loop's thread updates or reads it.
 */

/* What a trigger is doing now, in the order a state wins when several hold. */
typedef enum {
	HS_TRIGGER_STATE_WARMING_UP, /* warmup_s since start not over: hits only count */
	HS_TRIGGER_STATE_PENDING,    /* hit; the snapshot is due after post_delay_ms */
	HS_TRIGGER_STATE_CAPPED,     /* max_per_hour snapshots in the last hour: a due one would be dropped */
	HS_TRIGGER_STATE_COOLING_DOWN, /* cooldown_s after a snapshot: hits join it */
	HS_TRIGGER_STATE_REARMING,   /* after a hit, waiting for the condition to clear (clear_ms) */
	HS_TRIGGER_STATE_ARMED,      /* the next hit takes a snapshot */
} hs_trigger_state;

/* "warming_up", "pending", "capped", "cooling_down", "rearming", "armed". */
const char *hs_trigger_state_name(hs_trigger_state s);

typedef struct {
	const char *name;        /* rules */
	const char *kernel_name; /* tracefs instance / ETW logger ("instance" in the JSON, as in run.json) */
	hs_session_mode mode;
	unsigned cpus;           /* 0: the backend has no per-CPU rings (ETW) */
	/* Events the kernel wrote per second over the last interval (entries +
	 * overrun + read, all CPUs); -1 unknown. */
	double events_per_s;
	/* How full the ring is, 0..1 (tracefs: bytes / per-CPU size, all CPUs;
	 * ETW: buffers in use); -1 unknown. */
	double ring_fill;
	/* Seconds of history now: a ring (buffering), from the oldest event still in
	 * it to now, on the CPU whose oldest event is newest (all CPUs hold at least
	 * this much; history_max_s: the CPU that holds the most); a file-circular
	 * session, its key-event file, which holds everything since the start while
	 * no chunk was dropped. -1 unknown. */
	double history_s, history_max_s;
	/* Summed over CPUs, as run.json's sessions[].cpus[] count them. */
	uint64_t entries, overrun, dropped, read;
	uint64_t lost_events; /* overrun + dropped (tracefs); etw_events_lost (ETW) */
	/* file-circular, as in run.json */
	uint64_t bytes_streamed, bytes_in_file, chunks_dropped, bytes_lost_disk, trigger_events_lost;
	size_t events_enabled, events_skipped;
	/* the previous update's total, for events_per_s */
	uint64_t prev_total;
} hs_run_session_status;

typedef struct {
	const char *name;
	hs_trigger_kind kind;
	hs_trigger_state state;
	hs_trigger_stats st; /* the engine's counters (run.json's triggers[]) */
	double last_fire_s_ago; /* -1: never fired */
	/* When the last snapshots were handed out (the sessions' clock), as the
	 * loop saw fired grow: the rate cap's hour ([cap] ring). */
	uint64_t *fire_ns;
	size_t cap, n_fire, fire_next;
	uint64_t seen_fired;
} hs_run_trigger_status;

typedef struct {
	/* the recorder */
	unsigned long pid;
	const char *profile, *backend, *run_dir;
	double uptime_s;
	double cpu_percent; /* its own CPU (user + system, all threads) over the last interval, % of one CPU; -1 unknown */
	uint64_t key_events_observed; /* as run.json's key_events_observed */
	uint64_t snapshots_taken;     /* snapshot folders completed (manual ones too) */
	uint64_t snapshots_failed;
	/* the JSONL tap (--events-jsonl), when there is one */
	bool jsonl;
	uint64_t jsonl_lines, jsonl_dropped;
	uint64_t updates; /* how many times gathered (0: never) */
	/* The newest snapshot whose capture-time report is done (run/capture.h): the live view pins its verdict,
	 * engine ctl status says it. Strings borrowed from the capture module until its next result. */
	struct {
		bool present;
		unsigned seq;
		const char *trigger, *folder;
		hs_rundoc_report report;
	} last_snapshot;

	hs_run_session_status *sessions;
	size_t n_sessions;
	hs_run_trigger_status *triggers;
	size_t n_triggers;

	/* private: the previous update, for rates */
	uint64_t start_ms, last_ms, last_cpu_us;
	uint64_t start_ns; /* the sessions' clock at the start (warm-up) */
	const hs_plan *plan;
} hs_run_status;

/* Sizes the arrays for the plan. start_ms: hs_os_monotonic_ms() at the start;
 * start_ns: the sessions' clock then (the triggers' warm-up counts from it).
 * HS_ENOMEM. */
hs_status hs_run_status_init(hs_run_status *s, const hs_plan *plan, uint64_t start_ms, uint64_t start_ns);
void hs_run_status_free(hs_run_status *s);

/* Gathers everything now (the loop fills the recorder's own counters:
 * key_events_observed, snapshots_*, jsonl_*). now_ms: hs_os_monotonic_ms();
 * now_ns: the sessions' clock. te may be NULL. */
void hs_run_status_update(hs_run_status *s, const hs_backend_ops *ops, hs_backend *b, const hs_trigger_engine *te,
			  uint64_t now_ms, uint64_t now_ns);

/* The status as one JSON object (schemas/status.schema.json). */
void hs_run_status_json(const hs_run_status *s, hs_json *j);

#endif
