/* analyze/report.h: the model `analyze report` builds from a snapshot, run folder or trace.dat, and its three renderers. */
#ifndef HS_ANALYZE_REPORT_H
#define HS_ANALYZE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/event_decode.h"
#include "hindsight/rules.h"
#include "hindsight/strbuf.h"
#include "hindsight/tracedat.h"

/* The report.json schema's version (schemas/report.schema.json, docs/report.md). */
#define RPT_SCHEMA_VERSION 1

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
	struct rpt_hole {
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
	bool etl;     /* a Windows .etl (report_etl.c), else a trace.dat */
	char **notes; /* what the .etl header says about the session: its clock, mode, losses */
	size_t n_notes;
} rpt_file;

/* An event kept for the report (a copy: the record is gone after its callback). */
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
	int lane;          /* timeline lane (rpt_lane) */
	hs_decoded_kind shape;
	int64_t v[3];     /* decoded numbers, by kind (hindsight/event_decode.h) */
	char subject[64]; /* decoded name: exec file, victim comm, child comm */
	/* .etl records (shape HS_DEC_NONE): what the catalog says the event is, and its identity for WPA's regions */
	int wk;       /* rpt_wkind */
	bool has_id;  /* a manifest event: guid, id and version name it */
	hs_guid guid; /* the provider */
	uint16_t id;
	uint8_t version;
} rpt_event;

typedef enum {
	RPT_W_NONE,   /* a Linux record */
	RPT_W_EXIT,   /* a process exit: v0 pid, v1 exit code, v2 1 when it died of an NTSTATUS error; subject image */
	RPT_W_START,  /* a process start (kernel group records): v0 pid, v1 parent; subject image */
	RPT_W_ALERT,  /* an event with a catalog alert tag */
	RPT_W_MARKER, /* the engine's trigger marker (catalog means: marker): the text in detail */
} rpt_wkind;

typedef enum { LANE_CRASH, LANE_MEMORY, LANE_PROCESS, LANE_IO, LANE_NET, LANE_OTHER, LANE_N } rpt_lane;

typedef struct {
	const char *kind; /* "crash", "killed", "oom-kill", "frame-hitch", "hang", "io-error", "disconnect",
			       "process-storm", "exit-status", "trigger"; .etl: "gpu-reset", "device-removed" */
	int impact;       /* 0..100: the order of findings */
	char title[256];
	char verdict[1024]; /* the sentence the verdict uses when this finding is the strongest */
	char text[1024];
	char next[512]; /* what to look at next */
	uint64_t ts;    /* the finding's moment (trace clock ns) */
	int pid;
	size_t *ev; /* evidence: indices into events */
	size_t n_ev;
	char **notes; /* collapsed repetitions and extra evidence lines */
	size_t n_notes;
} rpt_finding;

/* The thread the verdict names, over the window before the moment, from the ring's scheduler records. */
typedef enum { TS_RUNNING, TS_RUNNABLE, TS_SLEEP, TS_DISK, TS_OTHER, TS_UNKNOWN, TS_N } rpt_tstate;
typedef struct {
	int pid, cpu, context; /* context: 0 a task, 1 a hard interrupt, 2 a softirq (hs_decoded_kind WAKE's v2) */
	char comm[32];         /* tasks are grouped by name: a shell loop's children each wake it once */
	unsigned n, tasks;     /* wake-ups; tasks of that name (pid and cpu are the first's) */
	int last_pid;
} rpt_waker;
typedef struct {
	char name[32];
	uint64_t ns;
	unsigned n, threads;
	bool soft;
} rpt_share;
typedef struct {
	bool present;        /* a thread was chosen */
	bool analysed;       /* its scheduler records were read */
	char why[256];       /* why there is no split, or "" */
	int pid;             /* a thread id (ftrace records name threads) */
	char comm[32];
	const char *basis;   /* the finding kind it comes from */
	int file;            /* the file read (index into files), -1 */
	uint64_t w0, w1;     /* the window: the frame for a hitch, else RPT_THREAD_WINDOW_NS before the moment */
	uint64_t cov0, cov1; /* the part of it every CPU of the ring covers */
	int cov_cpu;         /* the CPU whose lost or overwritten events cut it short, or -1 (the ring's start) */
	uint64_t born;       /* its fork, when in the covered part (else 0) */
	uint64_t ns[TS_N];   /* the covered part of its life, by state; they sum to cov1 - max(cov0, born) */
	unsigned preemptions, wakeups, switches_in;
	unsigned unrecorded_switches; /* switches the ring lacks, inferred from the task its records run in */
	uint64_t max_wake_wait; /* longest wake-up -> switch-in */
	rpt_waker wakers[6];
	size_t n_wakers;
	rpt_share users[8]; /* CPU time by task name, the busiest first */
	size_t n_users;
	unsigned cpus;
	uint64_t idle_ns, busy_ns;
	bool irq_recorded, softirq_recorded;
	uint64_t irq_ns, softirq_ns, irq_on_thread_ns;
	rpt_share irqs[8]; /* hard and soft interrupts, the longest first */
	size_t n_irqs;
	uint64_t lost_in_window, lost_unknown_in_window;
} rpt_thread;

/* The window before the moment a crash, kill, OOM kill or stall is looked at over (a hitch uses its frame). */
#define RPT_THREAD_WINDOW_NS 1000000000ull

typedef struct {
	const char *input;      /* PATH as given */
	const char *input_kind; /* "snapshot", "run", "trace" */
	char *outdir;
	/* snapshot.json */
	bool has_trigger;
	char trig_name[64], trig_kind[32], hit_system[64], hit_event[64], hit_where[128], slice[64];
	int64_t hit_pid, snapshot_no, hits;
	uint64_t first_hit_ns, hit_ts;
	double detect_ms, frame_ms, median_ms;
	char taken_at[48];
	/* rules */
	char *rules_path;     /* the rules used for stories, or NULL */
	char rules_note[256]; /* why there are no stories, or "" */
	/* run.json / snapshot.json counters that are not per file */
	char run_notes[8][200];
	size_t n_run_notes;
	/* what was read */
	rpt_file *files;
	size_t n_files;
	rpt_event *events;
	size_t n_events, cap_events;
	uint64_t events_not_kept; /* past the cap */
	rpt_finding *findings;
	size_t n_findings;
	uint64_t moment; /* the reference time (ns): the trigger's first hit, else the strongest finding */
	uint64_t win_first, win_last;
	char verdict[2][1100];
	rpt_thread thread;
	bool damaged;
	char clock[32];
	bool trigger_from_marker; /* no snapshot.json: the trigger fields come from the marker's text */
	char regions[4][256];     /* the WPA Regions of Interest files written (report_etl.c) */
	size_t n_regions;
} rpt;

/* Seconds of the trace clock, "516.135512". */
void rpt_fmt_ts(uint64_t ns, char *buf, size_t cap);
/* Relative to the moment: "  -18.204 ms" within a second of it, else "   -2.351 s ". */
void rpt_fmt_rel(const rpt *r, uint64_t ns, char *buf, size_t cap);

/* Fills r->thread from the file with the most scheduler records (a second, windowed read of it). */
void rpt_thread_build(rpt *r);

/* report.c's pieces the .etl reader shares. */
rpt_finding *rpt_new_finding(rpt *r, const char *kind, int impact, uint64_t ts, int pid);
void rpt_add_ev(rpt_finding *f, size_t i);
/* s with < > & " ' as character references, for HTML and XML (report.html, the WPA regions file). */
void rpt_markup_esc(hs_strbuf *sb, const char *s);
void rpt_add_note(rpt_finding *f, const char *fmt, ...) HS_PRINTF_FMT(2, 3);
void rpt_file_problem(rpt_file *f, const char *prefix, const char *text);
void rpt_file_note(rpt_file *f, const char *fmt, ...) HS_PRINTF_FMT(2, 3);
/* A process storm among these start times (250 ms bins against the window's median). */
void rpt_find_storm(rpt *r, const uint64_t *starts, size_t n);
/* Writes DIR/NAME through a temporary file; refuses to replace a file without marker in its first bytes. */
int rpt_write_out(const char *dir, const char *name, const char *marker, hs_strbuf *sb);

/* ---- report_etl.c: Windows .etl files ---- */

/* Whether path names an .etl (by its extension, as Windows names them). */
bool rpt_etl_is_etl(const char *path);
/* Reads files[fi] (an .etl): its coverage, and the events the catalogs say mean something (alerts, exits, the
 * marker), with kernel process starts for storms; names, alert tags and stories from rules (may be NULL). */
void rpt_etl_walk(rpt *r, size_t fi, const hs_ruleset *rules);
/* After the events are sorted: lanes, and the image names of pids an event did not name. */
void rpt_etl_settle(rpt *r);
/* Findings of the .etl events: crash exits, GPU resets, device removals, disconnects, storms, exit statuses. */
void rpt_etl_findings(rpt *r);
/* For each .etl read: OUTDIR/<name>.regions.xml, WPA Regions of Interest marking the moment and the findings'
 * events; recorded in r->regions. Returns 0 or an exit code. */
int rpt_etl_write_regions(rpt *r);

void rpt_render_text(const rpt *r, hs_strbuf *sb);
void rpt_render_json(const rpt *r, hs_strbuf *sb);
void rpt_render_html(const rpt *r, hs_strbuf *sb);

#endif
