/* hindsight/plan.h: the fully resolved plan: exact session parameters and provider enables for one platform. */
#ifndef HINDSIGHT_PLAN_H
#define HINDSIGHT_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/json.h"
#include "hindsight/rules.h"

/*
 * A plan is what a backend executes and what `engine --plan` prints: every
 * number the platform API will receive, derived from the rules alone (plus the
 * CPU count on Linux). Ownership: hs_plan_build returns a plan that owns its
 * arrays; strings and providers are borrowed from the ruleset, which must
 * outlive the plan. Free with hs_plan_free.
 */

typedef struct {
	int id;             /* windows event id / classic opcode; -1 on linux */
	const char *name;   /* catalog or entry name; may be NULL for unknown ids */
	const char *story;  /* never NULL in a plan built from error-free rules */
	const char *filter; /* linux ftrace filter or NULL */
	/* linux: skipped (and reported) where the kernel lacks the event or
	 * refuses its filter; otherwise that stops the engine before recording. */
	bool optional;
	bool story_from_catalog;
	bool story_from_evidence; /* the story is the entry's generated evidence (no human story yet) */
	bool name_guessed;
	const char *alert; /* the catalog's alert kind, or NULL */
	bool has_classic_guid;
	hs_guid classic_guid;
} hs_plan_event;

typedef struct {
	const hs_provider *provider;
	/* windows: EnableTraceEx2 */
	uint8_t level;
	uint64_t match_any, match_all;
	uint32_t enable_property; /* EVENT_ENABLE_PROPERTY_* */
	bool capture_state;
	/* whitelist: EVENT_FILTER_TYPE_EVENT_ID (windows) or enabled events (linux) */
	bool whitelist;
	hs_plan_event *events;
	size_t n_events;
	/* stacks: all events (stacks_all) or this list */
	bool stacks_all;
	hs_plan_event *stack_events;
	size_t n_stack_events;
} hs_plan_provider;

typedef struct {
	/* EVENT_TRACE_PROPERTIES as StartTraceW will receive it. */
	uint32_t wnode_buffer_size, wnode_flags, client_context;
	uint32_t buffer_size_kb, min_buffers, max_buffers, max_file_mb, log_file_mode, flush_timer, enable_flags;
	uint32_t logger_name_offset, log_file_name_offset;
	/* TraceSetInformation(TraceSampledProfileIntervalInfo), 100 ns units; 0 if none. */
	uint32_t sample_interval_100ns;
	/* log_file_mode has EVENT_TRACE_REAL_TIME_MODE only because the run shows
	 * or taps every key event (hs_plan_opts.stream_key_events), no trigger
	 * watches the session. */
	bool realtime_for_view;
} hs_plan_etw;

typedef struct {
	uint64_t per_cpu_kb; /* buffer_size_kb written to the instance */
	bool overwrite;
	unsigned cpus;
	uint64_t sample_hz;
	bool call_graph_fp;
	/* options/copy_trace_marker: the applications' writes to the top-level
	 * trace_marker reach this instance too (a trace_marker frame source). */
	bool copy_trace_marker;
} hs_plan_linux;

typedef struct {
	const hs_session *session;
	hs_plan_etw etw;
	hs_plan_linux linux_;
	uint64_t memory_bytes; /* kernel memory the session pins at most */
	hs_plan_provider *providers;
	size_t n_providers;
} hs_plan_session;

/* What a key event means to the trigger that watches it. */
typedef enum {
	HS_TRIGGER_ROLE_HIT,     /* the condition's event: a hit, a frame, a heartbeat */
	HS_TRIGGER_ROLE_EXIT,    /* deadline: the event's pid exited (exit_events) */
	HS_TRIGGER_ROLE_SUSPEND, /* deadline: the machine suspends or resumes (suspend_events) */
	HS_TRIGGER_ROLE_CANCEL,  /* drops a pending snapshot (cancel_on; ftrace/print: cancel_marker) */
} hs_trigger_role;

/* One key event a trigger fires on (system = ftrace system or provider name). */
typedef struct {
	const char *system;
	const char *name; /* NULL when only the id is known */
	int id;           /* windows event id; -1 on linux */
	hs_trigger_role role;
} hs_plan_trigger_event;

/* A trigger resolved against the plan's sessions (docs/triggers.md). */
typedef struct {
	const hs_trigger *trigger;      /* every threshold and behaviour value, from the rules */
	size_t session; /* index in sessions: the file-circular session it watches; SIZE_MAX for manual */
	/* event, regex: what it fires on (alert: every event with one of the
	 * alerts that the session enables); frame_time trace_marker: the marker
	 * event, system "ftrace", name "print" (and that session's
	 * copy_trace_marker is set); manual: none. */
	hs_plan_trigger_event *events;
	size_t n_events;
	/* deadline: also exit_events and suspend_events; every kind: cancel_on
	 * (and ftrace/print for cancel_marker, which sets copy_trace_marker)
	 * with their roles. A counter's events (cancel_on only) come from the
	 * session its cancel events stream in (session), and the session a
	 * per-session counter reads is counter_session (SIZE_MAX: none). */
	size_t counter_session;
	/* What one snapshot of this trigger costs and holds: the rings' history at
	 * the buffering sessions' expected rate (0 when no rate is given), and an
	 * upper bound of the disk one snapshot takes (rings + key-event files). */
	double ring_history_s;
	uint64_t snapshot_bytes_max;
} hs_plan_trigger;

typedef struct {
	const hs_ruleset *rules;
	hs_platform platform;
	hs_plan_session *sessions;
	size_t n_sessions;
	uint64_t memory_bytes;
	size_t n_whitelisted; /* whitelist entries across all sessions */
	hs_plan_trigger *triggers;
	size_t n_triggers;
	uint64_t snapshots_max_bytes; /* run.snapshots_max_mb; 0: no cap */
} hs_plan;

/* How many per-CPU rings share the session's buffer size and file (tracefs:
 * one a CPU, each with its share of the file); 0 where the session has one
 * pool of buffers for all CPUs (ETW). */
static inline unsigned hs_plan_session_split_cpus(const hs_plan *plan, const hs_plan_session *ps)
{
	return plan->platform == HS_PLATFORM_LINUX ? ps->linux_.cpus : 0;
}

typedef struct {
	unsigned cpus; /* 0: this machine's CPU count (only used for linux) */
	/* The run shows every key event as it happens (--live, --events-jsonl
	 * given on the command line). Windows: every file-circular session then
	 * runs in real time too, not only those a trigger watches, at the cost
	 * of a buffer flushed to its file every second (docs/live.md). Linux
	 * streams every file-circular session anyway. */
	bool stream_key_events;
} hs_plan_opts;

/* Builds the plan for `platform` from rules that loaded without errors.
 * HS_EINVAL if the rules have no section for the platform, HS_ENOMEM. */
hs_status hs_plan_build(const hs_ruleset *rs, hs_platform platform, const hs_plan_opts *opts, hs_plan **out);
void hs_plan_free(hs_plan *plan);

/* The name of an ETW clock (Wnode.ClientContext, and an .etl logfile header's ClockType): 1 "QPC", 2 "system
 * time", 3 "CPU cycle counter"; any other value "clock N" into buf. The one wording the plan, the reports and
 * analyze summary use. */
const char *hs_etw_clock_name(uint32_t client_context, char *buf, size_t cap);

/* Human-readable plan with every parameter and story. */
hs_status hs_plan_print_text(const hs_plan *plan, FILE *out);
/* The same as one JSON document. */
hs_status hs_plan_print_json(const hs_plan *plan, FILE *out);
/* One trigger as the JSON plan shows it (name, kind, session, events,
 * conditions, thresholds, behaviour, costs): also snapshot.json's "trigger". */
void hs_plan_trigger_json(const hs_plan *plan, const hs_plan_trigger *pt, hs_json *j);
/* The same document as a new string (free()); NULL on OOM. */
char *hs_plan_json(const hs_plan *plan);

/*
 * Resolves a --rules argument. A value with a '/' (or an existing file) is used
 * as given; a bare name ("stutter" or "stutter.yaml") is looked up in the rules
 * directories: $HINDSIGHT_RULES_DIR, <dir of argv0>/rules, <dir of argv0>/../share/hindsight/rules,
 * the install prefix, then the source tree. Returns a new string (free()) or NULL
 * when not found; `tried` (may be NULL) receives a new string listing where it looked.
 */
char *hs_rules_resolve(const char *arg, const char *argv0, char **tried);

#endif
