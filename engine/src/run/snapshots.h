/* run/snapshots.h: triggered snapshots of a running recording: their folders, snapshot.json and retention. */
#ifndef HS_RUN_SNAPSHOTS_H
#define HS_RUN_SNAPSHOTS_H

#include <stdint.h>

#include "hindsight/backend.h"
#include "hindsight/json.h"
#include "hindsight/plan.h"
#include "hindsight/rundoc.h"
#include "hindsight/trigger.h"

/*
 * Each snapshot is a folder <run>/snapshots/<NNN>-<trigger>/ holding every
 * session's file (the rings drained as the Ctrl+C snapshot drains them, a
 * copy of each key-event file) and snapshot.json (docs/triggers.md). It is
 * written under a hidden ".<NNN>-<trigger>.partial" name and renamed when
 * complete, so a folder with a final name is never half written. Retention:
 * the newest `keep` of each trigger, and all of them under the run's
 * snapshots_max_mb (the oldest of the trigger that just fired goes first).
 *
 * snapshot.json is written through its one writer (hindsight/rundoc.h,
 * schemas/snapshot.schema.json).
 *
 * Ownership: new borrows the plan, the run folder, rules_hash and the message
 * sink (hindsight/msg.h; source "trigger") until free.
 */

typedef struct hs_snapshots hs_snapshots;

hs_snapshots *hs_snapshots_new(const hs_plan *plan, const char *run_dir, const char *rules_hash, const hs_msg *msg);
void hs_snapshots_free(hs_snapshots *sn);

/* Takes the snapshot `f` asks for: marker into the trace, every session's
 * file, snapshot.json, then retention. Messages go to the sink. Recording goes on
 * whatever happens; HS_OK only when the folder is complete. */
hs_status hs_snapshots_take(hs_snapshots *sn, const hs_backend_ops *ops, hs_backend *b, const hs_trigger_fire *f);

/* run.json's snapshots[]: every snapshot taken, kept or deleted, with its report; the array in the arena,
 * its strings borrowed from sn. Returns the count. */
size_t hs_snapshots_entries(const hs_snapshots *sn, hs_arena *a, hs_rundoc_snapshot_entry **out);

/* The capture-time reports: snapshot.json of every complete snapshot gets report.state `state` ("pending"
 * when one is made, "off" when the rules turn them off; NULL: no report key), and fn (NULL: none) is told of
 * each complete snapshot, on the thread that takes it. */
typedef void (*hs_snapshots_taken_fn)(void *ctx, unsigned seq, const char *trigger, const char *folder);
void hs_snapshots_set_reports(hs_snapshots *sn, const char *state, hs_snapshots_taken_fn fn, void *ctx);

/* Snapshot seq's report as it now stands, for run.json (copied). */
void hs_snapshots_set_report(hs_snapshots *sn, unsigned seq, const hs_rundoc_report *rep);

/* A 64-bit FNV-1a of every rules file in load order, as 16 hex digits into
 * out[17] (snapshot.json: which rules were in force). "" if a file cannot be read. */
void hs_snapshots_rules_hash(const hs_ruleset *rs, char out[17]);

#endif
