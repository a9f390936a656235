/* hindsight/rules.h: the loaded rules model (catalogs + one profile) and the loader shared by engine and tools. */
#ifndef HINDSIGHT_RULES_H
#define HINDSIGHT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/diag.h"
#include "hindsight/guid.h"
#include "hindsight/status.h"

/*
 * Ownership: hs_rules_load returns a ruleset that owns every object and string
 * reachable from it; all of it is freed by hs_rules_free. hs_pos.file strings
 * belong to the hs_diags passed to the load, which must outlive the ruleset.
 * The model is read-only for callers.
 */

typedef enum { HS_PLATFORM_NONE = 0, HS_PLATFORM_WINDOWS, HS_PLATFORM_LINUX } hs_platform;
#define HS_PLATFORM_COUNT 3

typedef enum { HS_PKIND_MANIFEST, HS_PKIND_TRACELOGGING, HS_PKIND_SYSTEM, HS_PKIND_FTRACE } hs_provider_kind;

typedef enum { HS_MODE_FILE_CIRCULAR, HS_MODE_BUFFERING, HS_MODE_SAMPLING } hs_session_mode;

typedef enum { HS_CALLGRAPH_NONE, HS_CALLGRAPH_FP } hs_call_graph;

typedef struct {
	const char *name;
	uint64_t mask;
	hs_pos pos;
} hs_keyword;

/* What a catalog event means to the readers beyond its story (`means:`), so
 * which events a report decodes as what is data, not provider GUIDs in C. */
typedef enum {
	HS_MEANS_NONE = 0,
	HS_MEANS_PROCESS_EXIT, /* "process-exit": a process ended; its payload is Kernel-Process ProcessStop's */
	HS_MEANS_MARKER,       /* "marker": the engine's own trigger marker (a string-only event it writes) */
	HS_MEANS_PRESENT,      /* "present": an app's Present call; frame_time `source: present` measures start to start */
} hs_event_means;

/* One payload field of an ftrace event as the kernel's format file declares
 * it (events/<system>/<event>/format), from a catalog's `formats:` section
 * (written by tools/catalogsync from a running kernel); of an ETW event as
 * its manifest template declares it (rules/providers/windows-formats.yaml). */
typedef struct {
	const char *name;
	/* the declaration's type: "pid_t", "char[16]", "__data_loc char[]", "const char *"; on Windows the
	 * template's inType: "win:UInt32", "win:UnicodeString", "win:Pointer" */
	const char *type;
	unsigned size; /* bytes in the record; 0 for variable-size ETW types (strings, SIDs, pointers) */
	bool is_signed;
	hs_pos pos;
} hs_cat_field;

/* The kernel's filter typing: a string field (char arrays, __data_loc and
 * __rel_loc char[], char pointers) compares with ==, != and ~ against a quoted
 * string; everything else is a number of `size` bytes. ETW: the string
 * inTypes (win:UnicodeString, win:AnsiString and their counted forms). */
bool hs_cat_field_is_string(const hs_cat_field *f);

/* Windows: one template version of an event's payload (`Provider/id/vN` in
 * formats; version -1 when the one template holds for every version). */
typedef struct {
	int version;
	const hs_cat_field *fields;
	size_t n_fields;
} hs_cat_fields_version;

typedef struct {
	int id;            /* -1 for ftrace events */
	const char *name;
	const char *story;
	bool name_guessed;
	const char *alert; /* what seeing it means for a report: "crash", "gpu-reset", ... or NULL */
	hs_event_means means;
	/* ftrace: the payload fields (without the common_* ones) when a catalog's
	 * `formats:` lists the event; has_fields false when nothing is known.
	 * Windows: the fields of the newest template version formats gives, and
	 * every version in `versions` (oldest first), which rulecheck names when a
	 * field is missing from an older one. */
	const hs_cat_field *fields;
	size_t n_fields;
	bool has_fields;
	const hs_cat_fields_version *versions;
	size_t n_versions;
	const char **keywords; /* names, resolved against the provider */
	hs_pos *keyword_pos;
	size_t n_keywords;
	bool has_classic_guid;
	bool classic_guid_given; /* present in the file, even if malformed */
	hs_guid classic_guid;
	hs_pos pos;
} hs_cat_event;

typedef struct {
	const char *name;
	hs_provider_kind kind;
	hs_platform platform; /* from the catalog file */
	bool has_guid;
	hs_guid guid;
	const char *system; /* ftrace */
	const char *description;
	hs_keyword *keywords;
	size_t n_keywords;
	hs_cat_event *events;
	size_t n_events;
	hs_pos pos, guid_pos;
} hs_provider;

/* One whitelist (or stack list) entry in a session. */
typedef struct {
	int id;             /* -1 when given by name */
	const char *name;   /* NULL when given by id */
	const char *story;  /* the entry's own story, NULL to use the catalog's */
	/* Generated evidence (rulegen: why the event was kept), NULL if none. It
	 * stands in for the story, with a warning, while no human has written one. */
	const char *evidence;
	const char *filter; /* ftrace filter expression or NULL */
	const void *filter_node; /* private: the YAML scalar, to place a caret inside it */
	/* The event may be missing from the kernel (or refuse the filter) on some
	 * machines: the engine then skips it and says so instead of refusing the
	 * rules. */
	bool optional;
	hs_pos pos, filter_pos, evidence_pos, optional_pos;
} hs_wl_entry;

typedef enum { HS_STACKS_NONE, HS_STACKS_ALL, HS_STACKS_LIST } hs_stacks_kind;

typedef struct {
	const char *provider; /* exactly one of provider / match */
	const char *match;
	hs_pos pos, provider_pos, match_pos;
	const void *match_node; /* private: the YAML scalar, to place a caret inside it */
	bool has_level;
	int level;
	hs_pos level_pos;
	bool keywords_given, keywords_any_all; /* "keywords: all" */
	hs_pos keywords_pos;
	const char **keywords;
	hs_pos *keyword_pos;
	size_t n_keywords;
	const char **keywords_all;
	hs_pos *keywords_all_pos;
	size_t n_keywords_all;
	bool ignore_keyword_0, capture_state;
	hs_pos ignore_keyword_0_pos, capture_state_pos;
	hs_stacks_kind stacks;
	hs_wl_entry *stack_events;
	size_t n_stack_events;
	hs_pos stacks_pos;
	bool has_events;
	hs_wl_entry *events;
	size_t n_events;
	hs_pos events_pos;
} hs_session_provider;

typedef struct {
	const char *name;
	const char *logger_name;
	hs_session_mode mode;
	bool has_mode; /* false when the mode was missing or not a known one */
	const char *clock;
	const char *output;
	/* 0 means "not given": every size the language accepts is >= 1. */
	uint64_t buffer_size_kb, min_buffers, max_buffers, max_file_mb, flush_interval_s, ring_mb, sample_hz;
	/* Buffering only: the event rate (events/s) the ring is sized for, e.g.
	 * from `engine --estimate`; 0 when not given. With it, a ring's history is
	 * ring bytes / (rate x the measured bytes per event), and triggers'
	 * post_delay_ms is checked against it. */
	uint64_t expected_rate_eps;
	bool has_call_graph;
	hs_call_graph call_graph;
	hs_session_provider *providers;
	size_t n_providers;
	hs_pos pos, name_pos, logger_pos, clock_pos, output_pos, mode_pos;
	hs_pos buffer_size_pos, min_buffers_pos, max_buffers_pos, max_file_pos, flush_pos, ring_pos, sample_pos,
		call_graph_pos, expected_rate_pos;
} hs_session;

/* ---- triggers (docs/triggers.md): when the engine takes a snapshot by itself ---- */

typedef enum {
	HS_TRIGGER_EVENT,      /* a whitelisted key event, optionally with field conditions */
	HS_TRIGGER_REGEX,      /* a PCRE2 pattern on one payload field of a key event */
	HS_TRIGGER_FRAME_TIME, /* a frame-time hitch over a frame source */
	HS_TRIGGER_MANUAL,     /* SIGUSR1 (Ctrl+Break on Windows), engine ctl */
	HS_TRIGGER_DEADLINE,   /* a frame source or heartbeat that stops for deadline_ms, fired while it is stopped */
	HS_TRIGGER_COUNTER,    /* a counter (PSI, CPU, RSS, free disk, ring fill, losses) beyond a threshold for for_s */
} hs_trigger_kind;

/* The counters a counter trigger reads (docs/triggers.md, "Counters"): the
 * run layer reads them (run/counters_*.c), the trigger engine judges them. */
typedef enum {
	HS_COUNTER_PSI_CPU_SOME,      /* Linux PSI: share of for_s in which some task waited for a CPU, % */
	HS_COUNTER_PSI_MEMORY_SOME,   /* ... some task stalled on memory (reclaim, swap-in, thrashing), % */
	HS_COUNTER_PSI_MEMORY_FULL,   /* ... every non-idle task stalled on memory at once, % */
	HS_COUNTER_PSI_IO_SOME,       /* ... some task waited for I/O, % */
	HS_COUNTER_PSI_IO_FULL,       /* ... every non-idle task waited for I/O at once, % */
	HS_COUNTER_CPU_PERCENT,       /* the machine's CPU busy (all CPUs), % */
	HS_COUNTER_PROCESS_CPU_PERCENT, /* a process's CPU, % of one CPU */
	HS_COUNTER_PROCESS_RSS_MB,    /* a process's resident memory (Windows: working set), MB */
	HS_COUNTER_DISK_FREE_MB,      /* free space of the run folder's file system for the engine's user, MB */
	HS_COUNTER_RING_FILL_PERCENT, /* a session's kernel ring fill, % */
	HS_COUNTER_KEY_DROP_RATE,     /* a file-circular session's key events lost per second */
	HS_COUNTER__COUNT
} hs_counter_kind;

/* What a counter is, one row each (rules/counters.c): the checker, the plan
 * and the run layer's readers all take it from here. */
typedef struct {
	const char *name;    /* in the rules (`counter:`) */
	const char *unit;    /* of thresholds and values: "%", "MB", "events/s" */
	const char *what;    /* one line, for --plan */
	const char *psi;     /* Linux PSI resource read through the kernel's trigger file, or NULL */
	bool psi_full;       /* the PSI "full" line (else "some") */
	bool per_process;    /* one series per process whose name matches `process` */
	bool per_session;    /* the value of the session `session` names */
	bool on_linux, on_windows; /* the OS has it (rulecheck refuses it elsewhere, HS115) */
	double max;          /* the largest value it can have (0: no bound; process CPU: 100 x CPUs, unbounded here) */
	/* What the run layer reads, for --plan (NULL: not on that OS). */
	const char *linux_read, *windows_read;
} hs_counter_info;

/* One field condition of an event trigger (`where:` field: value or [values]):
 * the payload field's value is one of the values, all numbers or all strings. */
typedef struct {
	const char *field;
	bool strings;       /* values are strings (strs), else integers (nums) */
	int64_t *nums;
	const char **strs;
	size_t n_values;
	hs_pos pos;         /* the field's key */
} hs_trigger_cond;

/* An event named in a trigger's list as "provider/event" (exit_events,
 * suspend_events, cancel_on); on Windows the event may be an id. */
typedef struct {
	const char *provider;
	const char *event; /* NULL when given by id */
	int event_id;      /* -1 unless given by id */
	hs_pos pos;
} hs_trigger_evref;

typedef struct {
	const char *name;   /* ident; names the snapshot folders (NNN-<name>) */
	hs_trigger_kind kind;
	bool has_kind;
	const char *description; /* optional one line */
	/* The file-circular session whose stream the trigger watches (name from
	 * the rules; NULL when not given: the loader resolves the session that
	 * whitelists the event). */
	const char *session;
	/* counter with cancel_on: the file-circular session that streams the
	 * cancel events (the checker resolves it; `session` is the counter's). */
	const char *cancel_session;
	/* event, regex: one provider + event (name, or id on Windows: event_id >= 0),
	 * or every whitelisted event whose catalog alert is one of `alerts`. */
	const char *provider;
	const char *event;
	int event_id;       /* -1 unless given by id */
	const char **alerts;
	hs_pos *alert_pos;
	size_t n_alerts;
	hs_trigger_cond *where;
	size_t n_where;
	/* regex: the payload field the pattern runs on, and the pattern. */
	const char *field;
	const char *pattern;
	const void *pattern_node, *slice_node; /* private: the YAML scalars, to place a caret inside them */
	/* frame_time: the frame source ("trace_marker" on Linux: atrace slices
	 * B|pid|Name written to tracefs trace_marker; "present" on Windows), the
	 * PCRE2 pattern a slice name must match, and the hitch rule: a frame
	 * (start to start, one process) is a hitch when it is longer than
	 * threshold_ms and than ratio x the median of the last median_frames
	 * frames, and shorter than ceiling_ms (longer gaps are alt-tab, loading). */
	const char *source;
	const char *slice;
	double threshold_ms, ratio, ceiling_ms;
	uint64_t median_frames;
	/* deadline: a process whose frames (source trace_marker or present) or
	 * heartbeats (source heartbeat: provider + event, per pid) stop for
	 * deadline_ms is hung, if it made at least active_frames of them in the
	 * active_s seconds before its last one. Not hung: it exited (an
	 * exit_events event with its pid), the machine suspended (any
	 * suspend_events event restarts every deadline), it is under a debugger
	 * (ignore_debugger: the run layer's probe says so). resume_snapshot: a
	 * second snapshot when it makes a frame again. */
	double deadline_ms;
	uint64_t active_frames;
	double active_s;
	hs_trigger_evref *exit_events, *suspend_events;
	size_t n_exit_events, n_suspend_events;
	bool ignore_debugger, resume_snapshot;
	/* counter: the counter, the direction, one threshold or escalating
	 * steps (each fires once per incident), held for for_s; sampled every
	 * sample_ms (not PSI: the kernel wakes the engine); per process (a PCRE2
	 * on its name) or per session; only_if_worse: a snapshot only when the
	 * value is worse than at the series' previous snapshot. */
	hs_counter_kind counter;
	bool has_counter, below, has_direction;
	double *thresholds; /* [n_thresholds], in order of escalation */
	size_t n_thresholds;
	double for_s;
	uint64_t sample_ms;
	const char *process;
	bool only_if_worse;
	/* Sampling and arming (every kind but manual): chance (0..1] that a hit
	 * becomes a snapshot (its weight is 1/chance); arm_while: a PCRE2 on
	 * process names, the trigger is armed only while one matches;
	 * cancel_on: events that drop a pending snapshot; cancel_marker
	 * (Linux): a PCRE2 on trace_marker text that does the same. */
	double chance;
	bool has_chance;
	const char *arm_while;
	hs_trigger_evref *cancel_on;
	size_t n_cancel_on;
	const char *cancel_marker;
	const void *process_node, *arm_while_node, *cancel_marker_node; /* private: the YAML scalars, for carets */
	/* Behaviour (from the trigger or the platform's trigger_defaults). */
	uint64_t warmup_s;     /* after start, hits are ignored (counted) this long */
	uint64_t clear_ms;     /* re-arm once the condition has been clear this long */
	uint64_t post_delay_ms; /* keep recording this long after the hit, then snapshot */
	uint64_t cooldown_s;   /* after a snapshot, hits join it (no new one) this long */
	uint64_t max_per_hour; /* rate cap: snapshots of this trigger in any hour */
	uint64_t keep;         /* retention: the newest `keep` snapshots of this trigger */
	hs_pos pos, name_pos, kind_pos, session_pos, provider_pos, event_pos, field_pos, pattern_pos, source_pos,
		slice_pos, threshold_pos, ratio_pos, ceiling_pos, post_delay_pos;
	/* Where the other keys were written (line 0: not given). A behaviour
	 * value taken from trigger_defaults has the default's position. */
	hs_pos alerts_pos, where_pos, description_pos, median_pos, warmup_pos, clear_pos, cooldown_pos,
		max_per_hour_pos, keep_pos;
	bool has_source, has_threshold, has_ratio; /* given in the rules */
	hs_pos deadline_pos, active_frames_pos, active_s_pos, exit_events_pos, suspend_events_pos, ignore_debugger_pos,
		resume_pos, counter_pos, direction_pos, threshold1_pos, thresholds_pos, for_pos, sample_pos, process_pos,
		only_if_worse_pos, chance_pos, arm_while_pos, cancel_on_pos, cancel_marker_pos;
} hs_trigger;

typedef struct {
	bool present;
	hs_session *sessions;
	size_t n_sessions;
	hs_trigger *triggers; /* `triggers:` of this platform, in file order */
	size_t n_triggers;
	/* `trigger_defaults:` (behaviour values only; position line 0 where a
	 * key is not given). The checker copies them into each trigger that
	 * does not give its own, so every trigger has all six afterwards. */
	hs_trigger trigger_defaults;
	bool has_trigger_defaults;
	hs_pos pos, triggers_pos, trigger_defaults_pos;
} hs_platform_rules;

typedef struct {
	const char *dir, *name_format, *log, *manifest;
	uint64_t stats_interval_s;
	/* Disk cap for all triggered snapshots of a run (0: not given); the
	 * oldest snapshot of the trigger that fired goes first, then the oldest. */
	uint64_t snapshots_max_mb;
	/* The engine writes each snapshot's report (report.txt/json/html) into its folder as soon as it is
	 * complete, and the final rings' into the run folder (run/capture.h). On unless `capture_report: false`
	 * (capture_report_pos.line is 0 when the key is not given). */
	bool capture_report;
	hs_pos dir_pos, name_format_pos, log_pos, manifest_pos, snapshots_max_pos, capture_report_pos;
} hs_run_rules;

/* Whether a run makes capture-time reports (the key's default is on). */
#define HS_RUN_CAPTURE_REPORT(run) ((run)->capture_report_pos.line == 0 || (run)->capture_report)

/*
 * The report's cause vocabulary (a catalog's `causes:`, rules/causes.yaml;
 * docs/rules-language.md "Causes"): the closed list of reasons a report may
 * give for a hitched or hung thread's time, each with its words. The report's
 * classifiers decide from the kernel's facts which reason a stretch of time
 * is; everything said about it (title, story, the verdict's sentence, what to
 * look at next) and every threshold is here. A verdict or next template names
 * values in braces: {time} {share} {culprit} {cpu} {what} {chain} {thread}.
 */
typedef struct {
	const char *name;
	double value;
	hs_pos pos;
} hs_cause_param;

typedef struct {
	const char *id;      /* "cpu-contention" */
	const char *title;   /* "CPU contention" */
	const char *story;   /* one line: what the reason means */
	const char *verdict; /* the verdict's clause, a template */
	const char *next;    /* what to look at next, a template; NULL when not given */
	const char *chain;   /* how it reads as one step of another thread's wake-up chain, a template; NULL: title */
	const char *match;   /* a PCRE2 pattern the reason's classifier reads, or NULL */
	const hs_cause_param *params;
	size_t n_params;
	/* Windows: the thread wait reasons (KWAIT_REASON values, hindsight/wait_reason.h) this reason claims a wait by */
	const int *windows_wait_reasons;
	const hs_pos *windows_wait_reasons_pos;
	size_t n_windows_wait_reasons;
	/* reasons this one explains when both are found (a fork storm starves its CPU's old tasks' victims too):
	 * it takes the verdict from them when it has at least params.outrank_ratio of their time */
	const char **outranks;
	const hs_pos *outranks_pos;
	size_t n_outranks;
	hs_pos pos, id_pos, match_pos;
} hs_cause_def;

typedef struct {
	bool present;          /* some catalog has `causes:` */
	uint64_t version;      /* the vocabulary's version: a change of ids or their meaning bumps it */
	uint64_t lookback_ms;  /* how far before a window the analysis reads (a sleep's timer, a fault's start) */
	uint64_t mention_pct;  /* a reason below this share of the window is listed, not in the verdict */
	uint64_t chain_hops;   /* how many wakers deep the wake-up chain is followed */
	const hs_cause_def *reasons;
	size_t n_reasons;
	hs_pos pos;
} hs_cause_vocab;

/* The reason id (NULL when the vocabulary has none of that id). */
const hs_cause_def *hs_cause_vocab_find(const hs_cause_vocab *v, const char *id);
/* A reason's param, or def when it has none of that name. */
double hs_cause_param_get(const hs_cause_def *d, const char *name, double def);

/*
 * Fleet signatures (a catalog's `fleet:`, rules/fleet.yaml; docs/fleet.md): how a report names its incident so
 * that the same incident on another machine, run, pid or path groups with it. Each symptom says which finding
 * kinds (or, when no finding is strong enough, which trigger kinds) it is, and which fields after the symptom
 * make its signature; names of culprits that name no one in particular are rewritten or dropped; interpreters
 * are apps that run a script. `version` is report.json's sig_version: a change of grouping bumps it.
 */
typedef enum {
	HS_FLEET_FIELD_APP,     /* the executable of the process the verdict is about */
	HS_FLEET_FIELD_DETAIL,  /* the symptom's own word: a crash's signal or NTSTATUS */
	HS_FLEET_FIELD_CAUSE,   /* the cause id of the explained finding */
	HS_FLEET_FIELD_CULPRIT, /* the normalized culprit */
	HS_FLEET_FIELD_OS,      /* linux or windows */
	HS_FLEET_FIELD_COUNT
} hs_fleet_field;

/* The fields' names in the rules and in report.json, indexed by hs_fleet_field; NULL-terminated. */
extern const char *const hs_fleet_field_names[];

typedef struct {
	const char *id;    /* report.json's signature.symptom: "crash" */
	const char *story; /* one line: what the symptom is */
	const char **findings; /* report finding kinds ("crash", "oom-kill", ...) whose strongest is this symptom */
	const hs_pos *findings_pos;
	size_t n_findings;
	const char **triggers; /* trigger kinds ("manual", "counter") for a snapshot whose findings are all weak */
	const hs_pos *triggers_pos;
	size_t n_triggers;
	hs_fleet_field fields[HS_FLEET_FIELD_COUNT]; /* after the symptom, in order, each once */
	size_t n_fields;
	hs_pos pos, id_pos;
} hs_fleet_symptom;

typedef struct {
	const char *match; /* a PCRE2 pattern over the culprit's normalized name (digits as N, no paths) */
	const char *as;    /* the name it becomes; NULL: it names no culprit (the signature says none) */
	const char *story;
	hs_pos pos, match_pos;
} hs_fleet_culprit;

typedef struct {
	bool present;        /* some catalog has `fleet:` */
	uint64_t version;    /* sig_version */
	uint64_t min_impact; /* a strongest finding under this impact names no symptom: the trigger's kind does */
	uint64_t covered_pct; /* quality "complete" needs the explained window covered at least this much */
	const char *otherwise; /* the symptom when neither a finding nor the trigger names one */
	const hs_fleet_symptom *symptoms;
	size_t n_symptoms;
	const hs_fleet_culprit *culprits; /* first match wins */
	size_t n_culprits;
	const char **interpreters; /* PCRE2 patterns over an app's name: an interpreter in front of a script */
	const hs_pos *interpreters_pos;
	size_t n_interpreters;
	hs_pos pos, otherwise_pos;
} hs_fleet_rules;

typedef struct hs_ruleset hs_ruleset;

struct hs_ruleset {
	const char *path;      /* the top file as given */
	bool is_profile;       /* false: the top file is a catalog */
	bool kind_known;       /* the top file said `kind: catalog` or `kind: profile` */
	const char *name;      /* profile name (NULL for a catalog) */
	const char *description;
	hs_run_rules run;
	hs_platform_rules platforms[HS_PLATFORM_COUNT];
	hs_provider *providers; /* from every loaded catalog, in load order */
	size_t n_providers;
	const char **files; /* every file loaded, top first */
	size_t n_files;
	/* Linux: the kernel the catalogs' `formats:` were read from (uname -r),
	 * and the common_* fields every ftrace event has; NULL/0 when no catalog
	 * has formats. */
	const char *formats_kernel;
	const hs_cat_field *common_fields;
	size_t n_common_fields;
	bool has_formats; /* some catalog carries `formats:` (Linux or Windows) */
	hs_cause_vocab causes; /* the report's cause vocabulary, from a catalog's `causes:` */
	hs_fleet_rules fleet;  /* the report's fleet signature rules, from a catalog's `fleet:` */
	void *priv; /* arena and regex state */
};

/*
 * Loads a rules file and everything it includes, checks it (structure and
 * semantics, all problems collected in one pass into diags) and returns the
 * model in *out even when there were errors, so tools can report and go on.
 * Returns HS_OK when no error-severity diagnostic was added, HS_ERULES when
 * some were, HS_ENOENT/HS_EIO/HS_ELIMIT when the top file cannot be read
 * (a diagnostic says so too), HS_ENOMEM on OOM. *out must be freed with
 * hs_rules_free in every case (it may be NULL on OOM).
 */
hs_status hs_rules_load(const char *path, hs_diags *diags, hs_ruleset **out);

/* Same, from a buffer (for tests and the fuzzer); `name` is used in positions.
 * Includes are resolved relative to `name`. */
hs_status hs_rules_load_buffer(const char *name, const char *text, size_t len, hs_diags *diags,
			       hs_ruleset **out);

/* Same as hs_rules_load_buffer but never reads an include (the fuzzer uses it,
 * since includes would open files the input names). */
hs_status hs_rules_load_buffer_isolated(const char *name, const char *text, size_t len, hs_diags *diags,
					hs_ruleset **out);

void hs_rules_free(hs_ruleset *rs);

/* Finds a catalog provider by exact name, or NULL. Borrowed from rs. */
const hs_provider *hs_rules_find_provider(const hs_ruleset *rs, const char *name);
/* Finds a catalog event by id (id >= 0) or by name. Borrowed. */
const hs_cat_event *hs_provider_find_event(const hs_provider *p, int id, const char *name);
const hs_keyword *hs_provider_find_keyword(const hs_provider *p, const char *name);
/* A payload field of an ftrace catalog event by name: its own fields, then the
 * common_* ones. NULL when the event has no field list or no such field. */
const hs_cat_field *hs_cat_event_field(const hs_ruleset *rs, const hs_cat_event *e, const char *name);

/* The alert kinds a catalog event may carry (NULL-terminated): reports flag
 * such events (crash, hang, gpu-reset, device-removed, disconnect, oom-kill,
 * io-error). */
extern const char *const hs_alert_names[];

/* The trigger kinds' names in the rules, indexed by hs_trigger_kind
 * (NULL-terminated): the loader's `kind:` values, the plan, snapshot.json. */
extern const char *const hs_trigger_kind_names[];
/* hs_trigger_kind_names[k], or "?" for a value out of range. */
const char *hs_trigger_kind_name(hs_trigger_kind k);
/* The counters' names in the rules, indexed by hs_counter_kind (NULL-terminated). */
extern const char *const hs_counter_names[];
/* Counter k's row; NULL for a value out of range. */
const hs_counter_info *hs_counter_info_of(hs_counter_kind k);

/* Text forms used in output and messages (static strings). */
const char *hs_platform_name(hs_platform p);
const char *hs_mode_name(hs_session_mode m);
const char *hs_provider_kind_name(hs_provider_kind k);
/* "windows" / "linux" -> platform; HS_PLATFORM_NONE if unknown. */
hs_platform hs_platform_parse(const char *s);
/* The platform this binary was built for. */
hs_platform hs_platform_host(void);

/* The catalog providers that provider entry e of session s names on platform p (one for `provider:`, any number
 * for `match:`), as the checker resolved them when the rules were loaded, so the planner means what the checker
 * checked. Sets *n; NULL with *n 0 when the entry names none. Owned by the ruleset. */
const hs_provider *const *hs_rules_selected_providers(const hs_ruleset *rs, hs_platform p, size_t s, size_t e,
						       size_t *n);


#endif
