/* analyze/analyze.h: shared pieces of the `analyze` subcommands (options, opening traces, problem reports). */
#ifndef HS_ANALYZE_H
#define HS_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>

#include "hindsight/diag.h"
#include "hindsight/etl.h"
#include "hindsight/event_counts.h"
#include "hindsight/exitcodes.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"
#include "hindsight/tracedat.h"
#include "hindsight/json.h"

typedef struct {
	const char *file;       /* the trace */
	bool json;              /* --json: one JSON document on stdout */
	const char *rules;      /* --rules R: a profile (names, stories, whitelists) */
	const char *process;    /* --process PCRE2 (cpu) */
	const char *speedscope; /* --speedscope OUT.json (cpu) */
	const char *folded;     /* --folded OUT.txt (cpu) */
	const char *output;     /* -o OUT (filter) */
	const char *argv0;      /* to find rules next to the binary */
} analyze_opts;

/* Opens an .etl, printing a clear error on failure; returns 0 or an exit code. */
int analyze_open_etl(const char *path, hs_etl **out);

/* Shows how far a long walk has got, on stderr when it is a terminal (a
 * percentage of the file every 64k records); analyze_progress_done clears it. */
void analyze_progress(const hs_etl *etl, const hs_etl_record *r);
void analyze_progress_done(void);

/* Prints the reader's problems to stderr (file offsets and what was skipped);
 * returns HS_EXIT_FINDINGS if there were any, else 0. */
int analyze_report_problems(const hs_problems *pl);

/* Starts a command's JSON document in sb: its object, "file", and "format" when given (trace.dat). */
void analyze_json_begin(hs_json *j, hs_strbuf *sb, const char *file, const char *format);

/* Adds "problems": [...] to an open JSON object: {offset, message} objects,
 * or (_texts, for trace.dat) each problem's formatted line. */
void analyze_json_problems(hs_json *j, const hs_problems *pl);
void analyze_json_problem_texts(hs_json *j, const hs_problems *pl);

/* ---- names.c: the rules catalogs as a dictionary for trace records ---- */

typedef struct {
	hs_ruleset *rules; /* owned */
	hs_diags *diags;   /* owned; the rules' positions point into it */
	char *path;        /* owned: the resolved rules file */
} analyze_rules;

/* Loads o->rules (default stutter.yaml) with its catalogs; prints diagnostics
 * and returns an exit code when it cannot. */
int analyze_load_rules(const analyze_opts *o, analyze_rules *out);
void analyze_free_rules(analyze_rules *r);
/* analyze_load_rules, then the plan for the platform whose whitelists are the
 * key events (crash); says so and returns an exit code when the rules have no
 * section for it. Free the plan with hs_plan_free, then the rules. */
int analyze_load_plan(const analyze_opts *o, hs_platform platform, analyze_rules *rules, hs_plan **plan);

/* ---- trace.c: counts, summary and crash over either format ---- */

/* Opens a trace.dat, printing the reader's problems on failure; returns 0 or an exit code. */
int analyze_open_tracedat(const char *path, hs_tracedat **out);

/* A trace of either format: one of the two is open. */
typedef struct {
	hs_etl *etl;
	hs_tracedat *td;
} analyze_trace;

/* What a command's walk over a trace is given. */
typedef struct {
	const analyze_opts *o;
	const analyze_rules *rules; /* summary, crash */
	const hs_plan *plan;        /* crash */
} analyze_cmd;

/* Writes a command's output for the open trace into sb; returns 0 or an exit code (said on stderr). */
typedef int (*analyze_cmd_fn)(const analyze_cmd *c, const analyze_trace *t, hs_strbuf *sb);

/* Opens c->o->file as what its magic says (saying why not) and runs fn on it; when fn returns 0,
 * writes its output to stdout and returns the exit code for the trace's problems (said on stderr). */
int analyze_trace_run(const analyze_cmd *c, analyze_cmd_fn fn);
/* "problems": [...] of either format (analyze_json_problems, or _texts for trace.dat). */
void analyze_json_trace_problems(hs_json *j, const analyze_trace *t);

/* Records per identity (hs_event.key) and the time they span, from one walk. */
typedef struct {
	hs_event_counts *counts;          /* owned */
	hs_event_count all;               /* every record as one entry: first..last time (.etl: FILETIME of the
					     events, the session header left out; trace.dat: trace clock ns) */
	const hs_tracedat_info *info;     /* trace.dat */
	uint64_t *per_buffer;             /* trace.dat: events per buffer, in info's instance order ([0]: top) */
} analyze_tally;

/* Walks the trace into t (an .etl in file order, with progress); by_id: the counts format's identity for
 * .etl, TraceLogging events by id and without names. False when memory ran out (t is incomplete); free t
 * either way. */
bool analyze_tally_trace(const analyze_trace *tr, bool by_id, analyze_tally *t);
void analyze_tally_free(analyze_tally *t);

/* ---- tracedat.c: summary of trace.dat files (tracedat_crash.c: crash) ---- */

/* The JSON documents' "format" for a trace.dat (analyze_json_begin). */
extern const char analyze_tracedat_format[];
/* "5186.883371000": seconds.nanoseconds of a trace clock. */
void analyze_format_clock_ns(uint64_t ns, char *buf, size_t cap);
/* The trace.dat halves of summary and crash (analyze_cmd_fn). */
int analyze_summary_tracedat(const analyze_cmd *c, const analyze_trace *t, hs_strbuf *sb);
int analyze_crash_tracedat(const analyze_cmd *c, const analyze_trace *t, hs_strbuf *sb);

/* Subcommands, one file each. Each returns the process exit status. */
int analyze_counts(const analyze_opts *o);
int analyze_summary(const analyze_opts *o);
int analyze_crash(const analyze_opts *o);
int analyze_cpu(const analyze_opts *o);
int analyze_filter(const analyze_opts *o);
int analyze_estimate(const analyze_opts *o);
int analyze_report(const analyze_opts *o); /* report.c */
/* fleet.c: `analyze fleet PATH...` parses its own arguments (several paths, --ndjson). */
int analyze_fleet(int argc, char **argv, const char *argv0);

#endif
