/* hindsight/report.h: the diagnosis of a snapshot, run folder or trace file: a verdict, findings with evidence and a coverage box, rendered as text, JSON and HTML. */
#ifndef HINDSIGHT_REPORT_H
#define HINDSIGHT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/msg.h"
#include "hindsight/rules.h"
#include "hindsight/status.h"
#include "hindsight/strbuf.h"

/*
 * One report is built from one input (docs/report.md, "PATH"): a snapshot
 * folder (snapshot.json and the files it names, the run's run.json two
 * folders up), a run folder (run.json and its trace files), a folder of
 * trace files, or one trace.dat or .etl. Building reads every file once
 * (twice for the scheduler's records of the thread the verdict names), keeps
 * only the events a finding can use (at most HS_REPORT_MAX_KEPT) and never
 * writes; rendering only reads what was built; writing puts report.txt,
 * report.json, report.html (and a WPA regions file per .etl) into the output
 * folder, each through a temporary name renamed into place.
 *
 * Damage in the input is not a failure: the report says what could not be
 * read (COVERAGE) and hs_report_damaged is true. A failure is an input that
 * does not exist or holds nothing to report on (HS_ENOENT, HS_EINVAL), a
 * folder that cannot be written or a report.* that is not a report
 * (HS_EIO, HS_EPERM), or memory (HS_ENOMEM); the message sink says which.
 * Library code: nothing is printed and nothing exits.
 *
 * Ownership: the options' strings are borrowed for the duration of
 * hs_report_build; the sink, the progress callback and a ruleset given in
 * the options until hs_report_free (the report's events point at the rules'
 * stories; hs_report_write speaks through the sink). The report owns what it
 * read and the rules it loaded itself; strings it returns live until
 * hs_report_free. A report may be built on one
 * thread and used on another, not by two at once.
 */

typedef struct hs_report hs_report;

/* How far a build has got: fraction of the current file read (0..1), the
 * file's base name; done is true once when the build is over (clear a
 * terminal line then). Called at most every 65536 records. */
typedef void (*hs_report_progress_fn)(void *ctx, const char *file, double fraction, bool done);

typedef struct {
	const char *input; /* PATH (required); shown as given */
	/* Stories and alert tags: `rules` (a path, or a name hs_rules_resolve finds beside argv0), else the run's
	 * own rules (run.json), else default_rules; a ruleset already loaded is used as it is and named by
	 * ruleset_path. When none loads the report goes on without stories and says so. */
	const char *rules;
	const char *default_rules;
	const char *argv0;
	const hs_ruleset *ruleset;
	const char *ruleset_path;
	const char *outdir;    /* where hs_report_write puts the files (made when missing); NULL: beside the input */
	const char *generator; /* report.json's "generator"; NULL: "hindsight report" */
	/* The trace.dat files were written by the caller itself (a running engine's snapshot): they are opened
	 * without the reader's forked probe (hindsight/tracedat.h, hs_tracedat_open_ex). */
	bool own_files;
	const hs_msg *msg; /* source "report"; NULL: stderr */
	hs_report_progress_fn progress;
	void *progress_ctx;
} hs_report_opts;

/* Whether PATH holds something to report on (a trace.dat, or an .etl the reader opens: the file itself, or one
 * in the folder), without saying anything: a recorder whose sessions write other files (a replay's JSON lines)
 * has none. */
bool hs_report_has_input(const char *path);

/* Reads the input and builds the report: HS_OK (also for damaged input), or a status the sink explains. */
hs_status hs_report_build(const hs_report_opts *o, hs_report **out);

typedef enum { HS_REPORT_TEXT, HS_REPORT_JSON, HS_REPORT_HTML } hs_report_format;

/* Appends the report in that format (report.txt, report.json per schemas/report.schema.json, report.html). */
hs_status hs_report_render(const hs_report *r, hs_report_format fmt, hs_strbuf *sb);

/* Writes report.txt, report.json, report.html and each .etl's <name>.regions.xml into the output folder,
 * making it when it does not exist. A report.* whose first bytes are not a report's is never replaced
 * (HS_EPERM). */
hs_status hs_report_write(hs_report *r);

/* The folder hs_report_write writes into. */
const char *hs_report_outdir(const hs_report *r);

/* The verdict's lines: 0 the strongest finding's sentence, 1 the trigger or what else to know ("" when none). */
const char *hs_report_verdict(const hs_report *r, int line);

/* The finding the verdict is about (the strongest), or false when there is none: its kind
 * ("crash", "oom-kill", ...), its task (pid, -1 when it is about no task, and its name, "" when unknown). */
bool hs_report_lead(const hs_report *r, const char **kind, int *pid, const char **comm);

/* Part of the input could not be read (COVERAGE says what). */
bool hs_report_damaged(const hs_report *r);

/* Events past HS_REPORT_MAX_KEPT that were counted but not examined. */
uint64_t hs_report_events_not_kept(const hs_report *r);

void hs_report_free(hs_report *r);

#endif
