/* run/capture.h: the verdict at capture time: each complete snapshot gets report.txt, report.json and report.html from a low-priority worker thread, off the recording path; the final rings get theirs when the run stops. */
#ifndef HS_RUN_CAPTURE_H
#define HS_RUN_CAPTURE_H

#include <stdbool.h>

#include "hindsight/msg.h"
#include "hindsight/rules.h"
#include "hindsight/rundoc.h"
#include "run/jsonl.h"
#include "run/live.h"
#include "run/snapshots.h"
#include "run/status.h"

/*
 * The recording loop never waits for a report: a complete snapshot is queued
 * (hs_capture_on_taken, called by the snapshot writer; at most
 * HS_CAPTURE_MAX_QUEUED wait, later ones are refused and say so), and one
 * worker thread at HS_CAPTURE_NICE builds and writes one report at a time
 * (hindsight/report.h, reading the files the engine itself wrote), then
 * rewrites the folder's snapshot.json with the report's state and says the
 * verdict in main.log. A report that fails leaves the snapshot as it is:
 * snapshot.json and main.log say why. The loop picks the results up
 * (hs_capture_tick) for run.json, the status (engine ctl status, the live
 * view's pinned verdict) and the JSONL tap's `snapshot` record.
 *
 * Ownership: new borrows the ruleset, its path and the sink until free; the
 * status's last_snapshot strings are the capture's until its next tick or free.
 */

typedef struct hs_capture hs_capture;

/* on: the rules' run.capture_report. NULL when out of memory or the worker cannot start (said). Off, nothing
 * runs: snapshot.json says "off". */
hs_capture *hs_capture_new(const hs_ruleset *rs, const char *rules_path, bool on, const hs_msg *msg);

/* Tells the snapshot writer what to do with each complete snapshot. */
void hs_capture_attach(hs_capture *c, hs_snapshots *sn);

/* hs_snapshots_taken_fn: queues the report of a complete snapshot folder (the snapshot writer's thread). */
void hs_capture_on_taken(void *ctx, unsigned seq, const char *trigger, const char *folder);

/* The results since the last tick into run.json's records, the status, the live view and the tap (NULL ones
 * are skipped). The loop's thread. */
void hs_capture_tick(hs_capture *c, hs_snapshots *sn, hs_run_status *st, hs_jsonl *jsonl);

/* At the end: waits for the queued snapshot reports (HS_CAPTURE_FINISH_WAIT_MS at most) and puts their results
 * into run.json's records. */
void hs_capture_drain(hs_capture *c, hs_snapshots *sn);

/* Then the final rings: reports the run folder into it on the caller's thread and says where and what it
 * concluded. *out (strings the capture's until free) is for run.json; HS_OK when the report was written. */
hs_status hs_capture_finish(hs_capture *c, const char *run_dir, hs_rundoc_report *out);

void hs_capture_free(hs_capture *c);

#endif
