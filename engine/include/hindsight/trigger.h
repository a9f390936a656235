/* hindsight/trigger.h: the trigger engine: decides from streamed key events (and manual requests) when to take a snapshot. */
#ifndef HINDSIGHT_TRIGGER_H
#define HINDSIGHT_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/backend.h"
#include "hindsight/plan.h"
#include "hindsight/status.h"

/*
 * The engine is pure logic over a clock it is told: it never reads a clock,
 * touches a file or calls a backend, so a replayed trace and a live kernel
 * drive it the same way and tests feed it synthetic events. All times are ns
 * in the sessions' clock (hs_key_event.ts_ns, hs_backend_ops.now_ns).
 *
 * Life of a hit (docs/triggers.md): a trigger is unarmed during its warm-up
 * (warmup_s after start); an armed trigger hit by an event becomes pending,
 * due post_delay_ms after the hit; hits while pending join it. When it is due,
 * hs_trigger_engine_next hands it out (unless the rate cap, max_per_hour in
 * any hour, is used up: then it is dropped and counted) and the cool-down
 * (cooldown_s) starts, during which hits join the snapshot just taken
 * (counted, no new one). After a hit the trigger re-arms only once its
 * condition has been clear for clear_ms (frame_time: a frame that is not a
 * hitch; event, regex: no hit for clear_ms).
 *
 * Details (docs/triggers.md, "The trigger engine"):
 * - An event is a trigger's when its session is the trigger's session and its
 *   (system, name) is one of the trigger's events. hs_key_event carries names
 *   only, so a plan event known only by its id (name NULL) matches nothing.
 * - Decisions are made in the sessions' clock, not when the caller asks:
 *   hit times are event times (ts_ns; manual hits happen at now_ns), and a
 *   pending snapshot is decided at its due time (rate cap, then cool-down,
 *   both counted from the due time), by next at a later now_ns or by a hit
 *   after the due time (which then does not join it). So a caller that calls
 *   next late (a replay at full speed) gets the same snapshots; next hands
 *   the decided ones out in due order (at most HS_TRIGGER_MAX_READY waiting
 *   per trigger: past that, hits join the newest waiting).
 * - A hit in warm-up only counts (ignored_warmup) and does not delay the
 *   re-arm; every later hit (joined or ignored too) restarts clear_ms.
 * - max_per_hour 0: no cap (more than HS_TRIGGER_MAX_PER_HOUR counts as it).
 *   A due snapshot refused by the cap is dropped; no cool-down follows.
 * - The built-in manual trigger has no warm-up, clear_ms, post-delay,
 *   cool-down or cap: every request is a snapshot, due at once.
 * - Conditions read fields through ev->fields (string fields for string
 *   values, integers for numbers; an integer field compares as decimal text
 *   and a string holding one number as a number). No fields, or no such
 *   field: the condition cannot hold and the event counts as unreadable.
 * - regex and frame_time patterns are JIT-compiled when PCRE2 can and every
 *   match is bounded (limits.h, regex.h): a bounded-out match is no match and
 *   counts in regex_limit_hits.
 * - frame_time reads the marker event's string field "buf" (atrace text):
 *   "B|<pid>|<name>" whose name matches `slice` (any when NULL) starts a
 *   frame of process <pid>; a frame is start to start; E, C, S, F lines and
 *   other text are ignored. A process's frames can be hitches once it has
 *   (median_frames + 1) / 2 of them below the ceiling; frames of ceiling_ms or
 *   more (ceiling_ms <= 0: none) are skipped and do not enter the median. The
 *   hit's time is the start that ended the long frame.
 *
 * deadline (deadline.c): per process, the frames (trace_marker slices, present
 * events) or heartbeats (any event, by pid) it makes; a process that made
 * active_frames of them in the active_s seconds before its last one and then
 * none for deadline_ms is hung. This is decided from the clock: next (and
 * next_due, so the caller wakes in time) judges a freeze once now - lag is
 * past its deadline, while the process is still frozen; an event of the
 * trigger later than a deadline judges it too (a replay at full speed), at
 * the same time, the deadline's. Once per freeze: the process's next frame
 * ends it (and, with resume_snapshot, makes a second snapshot past the
 * cool-down). Not a hang: an exit_events event with its pid (before the
 * deadline), any suspend_events event (every deadline restarts from it),
 * the probe saying gone, or a debugger with ignore_debugger.
 *
 * counter (counter.c): readings from the run layer (sample); a value at or
 * beyond a threshold since ts - window for for_s is a hit; escalating
 * thresholds fire once each per incident (past the cool-down); the incident
 * ends, and the trigger re-arms, on a reading within the first threshold
 * clear_ms after the last hit (PSI, which signals crossings only: no hit for
 * clear_ms). only_if_worse: a hit whose value is no worse than the series'
 * last snapshot's counts as not_worse.
 *
 * Every kind but manual: arm_while (disarmed hits count ignored_disarmed),
 * chance (a hit that would make a snapshot pending draws; the fire's weight
 * is 1/chance), cancel_on and cancel_marker (drop the pending snapshot;
 * a deadline's freezes in progress are not hangs).
 *
 * Ownership: new borrows the plan (and its rules) until free. Strings in an
 * hs_trigger_fire are borrowed from the plan except evidence_json, which
 * belongs to the caller (free(); NULL if it could not be built, out of memory).
 * Memory is bounded: per trigger one pending fire, the rate cap's ring and,
 * for frame_time, HS_TRIGGER_FRAME_PIDS processes of median_frames times.
 * Calls come from one thread.
 */

typedef struct hs_trigger_engine hs_trigger_engine;

/* One snapshot to take now. */
typedef struct {
	size_t trigger;        /* index in plan->triggers; SIZE_MAX for a manual request with no manual trigger */
	const char *name;      /* the trigger's name ("manual" for the built-in one) */
	hs_trigger_kind kind;
	uint64_t first_hit_ns; /* the event time of the hit that made it pending */
	uint64_t last_hit_ns;
	uint64_t detect_ns;    /* the clock when the first hit was seen (its detection latency: detect - first_hit) */
	uint64_t due_ns;       /* first_hit + post_delay */
	uint64_t hits;         /* hits joined into it, the first included */
	/* How many incidents it stands for: 1 / the trigger's chance (1 without
	 * one), so counts over many machines can be scaled back (snapshot.json). */
	double weight;
	/* The first hit as one JSON object: session, cpu, pid, system, event,
	 * the fields the condition read and their values, the thresholds in
	 * force; frame_time also frame_ms, median_ms, the slice and pid. */
	char *evidence_json;
} hs_trigger_fire;

/* Counters per trigger (run.json, status). */
typedef struct {
	uint64_t hits;                /* every matching event, wherever it went */
	uint64_t fired;               /* snapshots handed out */
	uint64_t joined;              /* hits that joined a pending snapshot or one in cool-down */
	uint64_t ignored_warmup;      /* hits before the trigger armed */
	uint64_t ignored_unarmed;     /* hits while waiting for the condition to clear */
	uint64_t dropped_rate;        /* due snapshots refused by max_per_hour */
	uint64_t unreadable;          /* events whose condition could not be read (no fields, no such field): no hit */
	uint64_t regex_limit_hits;    /* matches stopped by a regex limit (counted as no match) */
	uint64_t sampled_out;         /* hits that chance did not take (a new snapshot otherwise) */
	uint64_t cancelled;           /* pending snapshots dropped by cancel_on / cancel_marker */
	uint64_t ignored_disarmed;    /* hits while no process matched arm_while */
	uint64_t not_worse;           /* counter, only_if_worse: held values no worse than the last snapshot's */
	uint64_t excused;             /* deadline: stops judged not a hang (exited, gone, a debugger held it) */
	uint64_t last_fire_ns;        /* 0: never */
	bool armed;                   /* warmed up, condition clear, nothing pending (as of the last next or hit) */
	bool pending;
} hs_trigger_stats;

/* start_ns: the sessions' clock when recording began (warm-up counts from it). */
hs_status hs_trigger_engine_new(const hs_plan *plan, uint64_t start_ns, hs_trigger_engine **out);
void hs_trigger_engine_free(hs_trigger_engine *te);

/* The sessions' clock, for the detection time of hits fed with now_ns 0 (the
 * one place the engine reads a clock: it is told how). NULL: none. */
void hs_trigger_engine_set_clock(hs_trigger_engine *te, uint64_t (*clock)(void *ctx), void *ctx);

/* True when some trigger watches streamed events (the caller then sets an observer). */
bool hs_trigger_engine_wants_events(const hs_trigger_engine *te);

/* Feeds one streamed key event (call from the backend's observer). now_ns is
 * the clock when it was seen (for detection latency); 0 asks the clock set
 * with hs_trigger_engine_set_clock, only when the event makes a snapshot
 * pending (so the observer reads no clock per event), else means ev->ts_ns. */
void hs_trigger_engine_feed(hs_trigger_engine *te, const hs_key_event *ev, uint64_t now_ns);

/* A manual request (SIGUSR1, Ctrl+Break, engine ctl): a hit on every manual
 * trigger of the rules, or on a built-in one (no post-delay, cool-down or
 * cap) when the rules have none. `reason` goes into the evidence. */
void hs_trigger_engine_manual(hs_trigger_engine *te, uint64_t now_ns, const char *reason);

/* Hands out one snapshot that is due at now_ns (post_delay passed) and
 * returns true; false when none is. Call until false. last_fire_ns in the
 * stats is this now_ns. */
bool hs_trigger_engine_next(hs_trigger_engine *te, uint64_t now_ns, hs_trigger_fire *out);

/* The earliest due time of a pending snapshot, or UINT64_MAX: how long the
 * caller may sleep. A manual request is due at once (its now_ns). */
uint64_t hs_trigger_engine_next_due(const hs_trigger_engine *te);

/* ---- deadline, counter, sampling and arming (docs/triggers.md) ---- */

/* What the run layer sees of a process whose deadline just passed. */
typedef enum {
	HS_PROBE_UNKNOWN,  /* cannot tell (no such look on this OS): judged a hang */
	HS_PROBE_RUNNING,  /* there, not under a debugger (SIGSTOP from another process included) */
	HS_PROBE_GONE,     /* exited (or its pid is free): not a hang */
	HS_PROBE_DEBUGGED, /* a debugger holds it (Linux: TracerPid): not a hang when the rules say so */
} hs_trigger_probe;
typedef hs_trigger_probe (*hs_trigger_probe_fn)(void *ctx, int pid);

/* The look at a process, asked once per freeze when its deadline passes (and
 * again each deadline while a debugger holds it). NULL (a replay): none, the
 * key events alone decide. */
void hs_trigger_engine_set_probe(hs_trigger_engine *te, hs_trigger_probe_fn probe, void *ctx);

/* Events reach the engine up to lag_ns after they happened (Windows real
 * time: the consumer's flush). A deadline passes only once now - lag_ns is
 * past it, so a frame still on its way is never taken for a freeze. */
void hs_trigger_engine_set_lag(hs_trigger_engine *te, uint64_t lag_ns);

/* The seed of chance's draws (a fixed one makes a test repeatable). */
void hs_trigger_engine_set_seed(hs_trigger_engine *te, uint64_t seed);

/* arm_while: whether a process matching trigger i's pattern runs now (the
 * run layer scans; a trigger with arm_while is disarmed until told). */
void hs_trigger_engine_set_running(hs_trigger_engine *te, size_t i, bool running);

/* One reading of counter trigger i (the run layer's readers). */
typedef struct {
	uint64_t ts_ns;     /* the sessions' clock when read */
	/* The span the value describes, ending at ts_ns: a rate's interval, the
	 * PSI window; 0: a value at ts_ns (RSS, free disk). A value beyond the
	 * threshold has been so since ts_ns - window_ns. */
	uint64_t window_ns;
	double value;       /* in the counter's unit (hs_counter_info.unit) */
	int pid;            /* per-process counters: the process; else 0 */
	const char *process; /* its name (copied into the evidence), or NULL */
	/* PSI: the kernel signalled that the stall reached the step's threshold
	 * (value is that threshold: it says crossings, not amounts); detail is
	 * its summary line at the time ("some avg10=... total=..."), or NULL. */
	bool crossing;
	const char *detail;
} hs_counter_sample;
void hs_trigger_engine_sample(hs_trigger_engine *te, size_t i, const hs_counter_sample *s, uint64_t now_ns);

size_t hs_trigger_engine_count(const hs_trigger_engine *te); /* == plan->n_triggers */
/* Trigger i's counters (NULL past the end); SIZE_MAX: the built-in manual trigger's. */
const hs_trigger_stats *hs_trigger_engine_stats(const hs_trigger_engine *te, size_t i);

#endif
