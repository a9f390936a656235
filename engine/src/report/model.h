/* report/model.h: the report's model (input, files read, kept events, findings, the thread, the verdict) and the helpers every part of the report layer shares. */
#ifndef HS_REPORT_MODEL_H
#define HS_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/event_decode.h"
#include "hindsight/json.h"
#include "hindsight/limits.h"
#include "hindsight/problem.h"
#include "hindsight/report.h"
#include "hindsight/rules.h"
#include "hindsight/strbuf.h"
#include "hindsight/vec.h"
#include "hindsight/arena.h"
#include "hindsight/ynode.h"
#include "report/cause/cause.h"

/*
 * The layer's files and who calls whom (no two files call each other):
 *   report.c (the public API) -> input.c, walk_tracedat.c, walk_etl.c, settle.c, find.c, thread.c, why.c,
 *                                signature.c, render_*.c, write.c
 *   find.c (the detector table, ranking, verdict) -> find/<kind>.c -> find/common.c
 *   render_html.c -> render_common.c; render_text.c -> render_common.c; render_json.c
 *   everything -> model.c (this header's functions)
 * The walks turn each format's records into one normalized event stream (hs_rpt_event): a detector reads
 * hs_decoded_kind shapes (the event layer's vocabulary, hindsight/event_decode.h) and how a process ended
 * (hs_rpt_end), never the format. The .etl walk maps its records onto the same shapes: a process start is
 * HS_DEC_EXEC, a process exit HS_DEC_EXIT with its status, an event with a catalog alert tag the shape the
 * tag gives (hang, io-error, disconnect, or another alert).
 */

/* The report.json schema's version (schemas/report.schema.json, docs/report.md). */
#define HS_RPT_SCHEMA_VERSION 2

/* Where a file or event comes from: a detector's platforms (bits). */
enum { HS_RPT_LINUX = 1, HS_RPT_WINDOWS = 2 };

/* One trace file read: what it covers and what it lost. */
typedef struct {
	char *path;    /* as opened */
	char *name;    /* base name */
	char *session; /* the session it belongs to (snapshot.json), or NULL */
	bool opened;
	unsigned cpus;
	uint64_t events;
	uint64_t first_ns, last_ns;             /* UINT64_MAX / 0 when empty */
	uint64_t *cpu_first, *cpu_last, *cpu_n; /* [cpus] */
	uint64_t missed;                        /* events the ring said it lost before some record */
	uint64_t missed_unknown;                /* records after a loss of unknown size */
	uint64_t *cpu_missed;                   /* [cpus] */
	/* Where a CPU's ring lost events: between its record before the loss and
	 * the first after it (the timeline draws them as holes); the first
	 * HS_REPORT_MAX_HOLES per file, the rest only counted in cpu_missed. */
	struct hs_rpt_hole {
		unsigned cpu;
		uint64_t from, to;
		int64_t missed; /* -1: the ring said "some", not how many */
	} *holes;
	size_t n_holes;
	uint64_t n_switch, n_irq, n_softirq; /* scheduler and interrupt records (aggregated, not kept) */
	/* from snapshot.json / run.json for this session, -1 when not said */
	int wrapped;
	int64_t overwritten, chunks_dropped, events_lost, bytes_lost_disk, ring_dropped;
	char **problems;
	size_t n_problems;
	bool etl;     /* a Windows .etl (walk_etl.c), else a trace.dat */
	char **notes; /* what the .etl header says about the session: its clock, mode, losses */
	size_t n_notes;
} hs_rpt_file;

/* How a process ended (shape HS_DEC_EXIT), whatever the format said it with. */
typedef enum {
	HS_RPT_END_UNKNOWN, /* no exit_group, fatal signal or OOM choice seen (Linux) */
	HS_RPT_END_STATUS,  /* its own exit status: end_code (Linux exit_group's status, a Windows exit code) */
	HS_RPT_END_SIGNAL,  /* killed by signal end_code (Linux) */
	HS_RPT_END_OOM,     /* killed by the OOM killer (Linux) */
	HS_RPT_END_CRASH,   /* an exit status that says it crashed: end_code an NTSTATUS error (Windows) */
} hs_rpt_end;

/* An event kept for the report (a copy: the record is gone after its callback), normalized. */
typedef struct {
	uint64_t ts;
	int cpu, pid;
	int file; /* index into files */
	char comm[32];
	char system[64]; /* the ftrace system, or the .etl provider's catalog name */
	char name[64];
	char detail[320];  /* decoded payload, one line */
	const char *story; /* borrowed from the rules, or NULL */
	const char *alert; /* catalog alert tag, or NULL */
	int lane;          /* timeline lane (hs_rpt_lane) */
	/* What it is: the event layer's shapes (hindsight/event_decode.h) for every format. An .etl process start
	 * is HS_DEC_EXEC (v0 pid, v1 its parent, subject its image), an .etl exit HS_DEC_EXIT (v0 pid, v1 1). */
	hs_decoded_kind shape;
	int64_t v[3];     /* decoded numbers, by shape */
	char subject[64]; /* decoded name: exec file, victim comm, child comm */
	hs_rpt_end end;   /* HS_DEC_EXIT: how it ended */
	int64_t end_code;
	unsigned platform; /* HS_RPT_LINUX or HS_RPT_WINDOWS: the format it was read from */
	bool marker_text;  /* HS_DEC_MARKER whose detail is the engine's marker text (an .etl Hindsight-Marker) */
	/* an .etl manifest event: guid, id and version name it (for WPA's regions) */
	bool has_id;
	hs_guid guid;
	uint16_t id;
	uint8_t version;
} hs_rpt_event;

/* A task's name changed (Linux task_rename: an exec, or prctl(PR_SET_NAME)): from was to now at ts. */
typedef struct {
	uint64_t ts;
	int pid;
	char was[16], now[16]; /* TASK_COMM_LEN */
} hs_rpt_rename;

typedef enum { LANE_CRASH, LANE_MEMORY, LANE_PROCESS, LANE_IO, LANE_NET, LANE_OTHER, LANE_N } hs_rpt_lane;

typedef struct {
	const char *kind; /* the detector's kind (find.c's table), "trigger", ... */
	int impact;       /* 0..100: the order of findings */
	char title[256];
	char verdict[1024]; /* the sentence the verdict uses when this finding is the strongest */
	char text[1024];
	char next[512]; /* what to look at next */
	uint64_t ts;    /* the finding's moment (trace clock ns) */
	int pid;
	int tid; /* the thread it is about when not pid's main thread (a frame's writer), else 0 */
	bool background; /* not tied to the moment (why.c): listed below every finding that is */
	size_t *ev; /* evidence: indices into events */
	size_t n_ev;
	char **notes; /* collapsed repetitions and extra evidence lines */
	size_t n_notes;
} hs_rpt_finding;

/* The thread the verdict names, over the window before the moment, from the ring's scheduler records. */
typedef enum { TS_RUNNING, TS_RUNNABLE, TS_SLEEP, TS_DISK, TS_OTHER, TS_UNKNOWN, TS_N } hs_rpt_tstate;
typedef struct {
	int pid, cpu, context; /* context: 0 a task, 1 a hard interrupt, 2 a softirq (hs_decoded_kind WAKE's v2) */
	char comm[32];         /* tasks are grouped by name: a shell loop's children each wake it once */
	unsigned n, tasks;     /* wake-ups; tasks of that name (pid and cpu are the first's) */
	int last_pid;
} hs_rpt_waker;
typedef struct {
	char name[32];
	uint64_t ns;
	unsigned n, threads;
	bool soft;
} hs_rpt_share;
typedef struct {
	bool present;        /* a thread was chosen */
	bool analysed;       /* its scheduler records were read */
	char why[256];       /* why there is no split, or "" */
	int pid;             /* a thread id (ftrace records name threads) */
	char comm[32];
	const char *basis;   /* the finding kind it comes from */
	int file;            /* the file read (index into files), -1 */
	uint64_t w0, w1;     /* the window: the frame for a hitch, else HS_RPT_THREAD_WINDOW_NS before the moment */
	uint64_t cov0, cov1; /* the part of it every CPU of the ring covers */
	int cov_cpu;         /* the CPU whose lost or overwritten events cut it short, or -1 (the ring's start) */
	uint64_t born;       /* its fork, when in the covered part (else 0) */
	uint64_t ns[TS_N];   /* the covered part of its life, by state; they sum to cov1 - max(cov0, born) */
	unsigned preemptions, wakeups, switches_in;
	unsigned unrecorded_switches; /* switches the ring lacks, inferred from the task its records run in */
	uint64_t max_wake_wait;       /* longest wake-up -> switch-in */
	hs_rpt_waker wakers[6];
	size_t n_wakers;
	hs_rpt_share users[8]; /* CPU time by task name, the busiest first */
	size_t n_users;
	unsigned cpus;
	uint64_t idle_ns, busy_ns;
	bool irq_recorded, softirq_recorded;
	uint64_t irq_ns, softirq_ns, irq_on_thread_ns;
	hs_rpt_share irqs[8]; /* hard and soft interrupts, the longest first */
	size_t n_irqs;
	uint64_t lost_in_window, lost_unknown_in_window;
} hs_rpt_thread;

/* The window before the moment a crash, kill, OOM kill or stall is looked at over (a hitch uses its frame). */
#define HS_RPT_THREAD_WINDOW_NS 1000000000ull

/* The trigger, from snapshot.json or (a lone .etl) from the engine's marker. */
typedef struct {
	bool present;
	bool from_marker; /* no snapshot.json: the fields come from the marker's text */
	char name[64], kind[32], hit_system[64], hit_event[64], hit_where[128], slice[64];
	int64_t hit_pid, snapshot_no, hits;
	uint64_t first_hit_ns, hit_ts;
	double detect_ms, frame_ms, median_ms;
	char taken_at[48];
	int64_t hit_tid; /* the thread the hit was logged in (a frame's writer), -1 */
	/* a deadline trigger's freeze: its start (the last frame or heartbeat), its end when it ended (else 0) */
	bool freeze, freeze_ended;
	uint64_t freeze_start_ns, freeze_end_ns;
	double deadline_ms, median_frame_ms;
} hs_rpt_trigger;

/* signature.c: the fleet signature, report.json's flat `signature` block (docs/fleet.md); "" is null. */
typedef struct {
	bool present;            /* fleet rules were found (the rules' own, else the shipped fleet.yaml) */
	char note[200];          /* why there is none, or "" */
	uint64_t sig_version;
	char symptom[64];
	char cause[64], culprit[96], detail[96];
	char app[96], app_version[96], app_note[200];
	char os[16], os_build[64], os_note[200];
	char machine[24], host[72]; /* the machine that recorded it (an opaque id) and its name, when known */
	char seen_at[48];        /* wall time of the incident (a snapshot's taken_at) */
	double weight;           /* 1 / the trigger's chance */
	char quality[16];        /* complete, partial, lossy, damaged */
	uint64_t lost_events;
	bool lost_unknown;       /* a ring lost events it could not count */
	double covered_share;    /* of the explained window; < 0 when nothing was explained */
	char signature[HS_FLEET_SIGNATURE_MAX + 1];
	char bucket_id[17];      /* 16 hex digits */
} hs_rpt_signature;

struct hs_report {
	hs_report_opts opts; /* strings borrowed for the build only; msg and progress until free */
	char *input;         /* PATH as given */
	const char *input_kind; /* "snapshot", "run", "folder", "trace" */
	char *outdir;
	char generator[64]; /* report.json's "generator" */
	hs_rpt_trigger trig;
	/* rules */
	char *rules_path;     /* the rules used for stories, or NULL */
	hs_ruleset *owned_rules; /* loaded by the report (the events' stories point into them), or NULL */
	hs_diags *owned_diags;
	char rules_note[256]; /* why there are no stories, or "" */
	/* run.json / snapshot.json counters that are not per file */
	char run_notes[8][200];
	size_t n_run_notes;
	/* what was read */
	hs_rpt_file *files; /* [HS_REPORT_MAX_FILES] */
	size_t n_files;
	unsigned platforms; /* HS_RPT_LINUX | HS_RPT_WINDOWS of the files opened */
	hs_rpt_event *events;
	size_t n_events, cap_events;
	uint64_t events_not_kept; /* past the cap */
	hs_vec execs; /* uint64_t: times of every exec the walks saw (kept or not), for storms */
	/* hs_rpt_rename: every task rename the walks saw (an exec's or a prctl's), in the order read; settle.c names
	 * events by it */
	hs_vec renames;
	hs_rpt_finding *findings;
	size_t n_findings;
	uint64_t moment; /* the reference time (ns): the trigger's first hit, else the strongest finding */
	uint64_t win_first, win_last;
	char verdict[2][1100];
	/* "crash, kill, OOM kill, hang, I/O error or disconnect": what the detectors for the platforms read look
	 * for, in the words a verdict says they found none of (find.c, before the detectors run) */
	char absent[256];
	hs_rpt_thread thread;
	/* why.c: where the thread's time went (its cause analysis), the finding it explains (-1), the vocabulary
	 * used (the rules' or causes_rules, loaded for it) */
	hs_cause_result why;
	int why_finding;
	const hs_cause_vocab *why_vocab;
	hs_ruleset *causes_rules;
	hs_diags *causes_diags;
	/* tasks.c: the snapshot's tasks.json, parsed (NULL when none) */
	const hs_ynode *tasks_root;
	hs_arena *tasks_arena;
	hs_diags *tasks_diags;
	hs_rpt_signature sig; /* signature.c */
	bool damaged;
	bool oom; /* an allocation failed somewhere: hs_report_build returns HS_ENOMEM */
	char clock[32];
	char regions[4][256]; /* the WPA Regions of Interest files (one per .etl read), named before rendering */
	size_t n_regions;
};

/* ---- model.c ---- */

/* Seconds of the trace clock, "516.135512". */
void hs_rpt_fmt_ts(uint64_t ns, char *buf, size_t cap);
/* Relative to the moment: "  -18.204 ms" within a second of it, else "   -2.351 s ". */
void hs_rpt_fmt_rel(const hs_report *r, uint64_t ns, char *buf, size_t cap);
/* "4 ms", "350 us": b - a. */
void hs_rpt_ms_after(uint64_t a, uint64_t b, char *buf, size_t cap);
/* A line of report text into a fixed buffer: what does not fit ends in "..." (at a
 * character's start), so a cut line says it was cut. False when it was. */
bool hs_rpt_text(char *buf, size_t cap, const char *fmt, ...) HS_PRINTF_FMT(3, 4);
/* A copy of s ("" for NULL), or NULL with r->oom set. */
char *hs_rpt_strdup(hs_report *r, const char *s);
/* calloc that records a failure in r->oom. */
void *hs_rpt_calloc(hs_report *r, size_t n, size_t size);
/* Messages to the caller's sink, source "report". */
void hs_rpt_say(const hs_report *r, hs_msg_level level, const char *fmt, ...) HS_PRINTF_FMT(3, 4);

/* A new finding (NULL past memory: r->oom is set). */
hs_rpt_finding *hs_rpt_new_finding(hs_report *r, const char *kind, int impact, uint64_t ts, int pid);
/* Adds event i as evidence (at most 40, each once). */
void hs_rpt_add_ev(hs_report *r, hs_rpt_finding *f, size_t i);
void hs_rpt_add_note(hs_report *r, hs_rpt_finding *f, const char *fmt, ...) HS_PRINTF_FMT(3, 4);
void hs_rpt_file_problem(hs_report *r, hs_rpt_file *f, const char *prefix, const char *text);
/* A file its reader refused (st): "cannot be read: " and its reader's first problem (NULL: st's words); the report is
 * damaged. */
void hs_rpt_file_unreadable(hs_report *r, hs_rpt_file *f, const hs_problem *first, hs_status st);
void hs_rpt_file_note(hs_report *r, hs_rpt_file *f, const char *fmt, ...) HS_PRINTF_FMT(3, 4);
void hs_rpt_run_note(hs_report *r, const char *fmt, ...) HS_PRINTF_FMT(2, 3);
/* A slot for one more kept event (zeroed, not yet counted: the caller increments n_events when it keeps it),
 * or NULL past HS_REPORT_MAX_KEPT (counted in events_not_kept). */
hs_rpt_event *hs_rpt_event_slot(hs_report *r);
/* Records an exec's time for storms (every exec, kept or not). */
void hs_rpt_exec_seen(hs_report *r, uint64_t ts);
/* The name task pid had at ts: its kept event's at or last before ts, else its first after (settled events: each
 * carries the name its task had then); NULL when no kept event is the task's. */
const char *hs_rpt_comm_at(const hs_report *r, int pid, uint64_t ts);
/* Records that task pid was renamed from was to now at ts (copied; past HS_REPORT_MAX_RENAMES dropped). */
void hs_rpt_rename_seen(hs_report *r, uint64_t ts, int pid, const char *was, const char *now);
/* A file the input names: path and base name copied; -1 counters (not said). NULL past HS_REPORT_MAX_FILES. */
hs_rpt_file *hs_rpt_add_file(hs_report *r, const char *path, const char *name);
/* Whether path names an .etl (by its extension, as Windows names them), not a trace.dat named so. */
bool hs_rpt_is_etl(const char *path);
/* The process's name for an event: its exit's or start's subject when it has one, else its comm. */
const char *hs_rpt_who(const hs_rpt_event *e);
void hs_rpt_model_free(hs_report *r);

/* ---- the pieces report.c runs in order (each file's own header line says more) ---- */

/* input.c: what PATH is, the files it names, snapshot.json's trigger and run.json's counters and rules. */
hs_status hs_rpt_input_resolve(hs_report *r);
/* walk_tracedat.c / walk_etl.c: reads files[fi]: its coverage and the events a finding can use. */
void hs_rpt_walk_tracedat(hs_report *r, size_t fi, const hs_ruleset *rules);
void hs_rpt_walk_etl(hs_report *r, size_t fi, const hs_ruleset *rules);
/* settle.c: after every walk: the window, time order, one copy of an event two files hold, how each process
 * ended, names for tasks the trace forgot, timeline lanes. */
void hs_rpt_settle(hs_report *r);
/* find.c: every detector of the table, the ranking, the moment and the verdict. */
void hs_rpt_find(hs_report *r);
/* thread.c: fills r->thread from the file with the most scheduler records (a second, windowed read of it). */
void hs_rpt_thread_build(hs_report *r);
/* tasks.c: a snapshot folder's tasks.json: read (kept in r), its tid -> tgid pairs (for threads the trace cannot
 * put in their process), and joined to r->why: culprits' exact policies, the thread's cgroup limits. */
bool hs_rpt_tasks_load(hs_report *r, const char *dir);
size_t hs_rpt_tasks_tgids(const hs_report *r, int32_t (*out)[2], size_t cap);
void hs_rpt_tasks_join(hs_report *r);
/* true when tasks.json lists thread tid's CPU cgroup and every one above it, none with a CPU quota */
bool hs_rpt_tasks_no_cpu_quota(const hs_report *r, int32_t tid);
/* model.c: a shipped rules file (name, found as every rules file is found) loaded, for a part the report's own rules lack;
 * NULL when it is not found or does not load. *diags gets the load's diagnostics (NULL when not found; the caller
 * frees them, and the rules). */
hs_ruleset *hs_rpt_shipped_rules(hs_report *r, const char *name, hs_diags **diags);
/* why.c: the cause analysis of r->thread over its window; the finding's cause and next step, and the verdict. */
void hs_rpt_why_build(hs_report *r, const hs_ruleset *rules);
/* signature.c: the fleet signature of what was found (after why.c: it reads the cause), with the rules' fleet: or
 * the shipped fleet.yaml. */
void hs_rpt_signature_build(hs_report *r, const hs_ruleset *rules);
/* signature.c: report.json's `signature` member (its key and value: the block, or null without fleet rules). */
void hs_rpt_signature_json(const hs_report *r, hs_json *j);
/* signature.c: report.txt's closing line ("signature: crash | hs_segv | SIGSEGV  (bucket ..., sig_version 1)"), or
 * "" without fleet rules. */
void hs_rpt_signature_line(const hs_report *r, char *out, size_t cap);

#endif
