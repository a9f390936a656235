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

size_t hs_trigger_engine_count(const hs_trigger_engine *te); /* == plan->n_triggers */
/* Trigger i's counters (NULL past the end); SIZE_MAX: the built-in manual trigger's. */
const hs_trigger_stats *hs_trigger_engine_stats(const hs_trigger_engine *te, size_t i);

#endif
