/* run/snapshots.h: triggered snapshots of a running recording: their folders, snapshot.json and retention. */
#ifndef HS_RUN_SNAPSHOTS_H
#define HS_RUN_SNAPSHOTS_H

#include <stdint.h>

#include "hindsight/backend.h"
#include "hindsight/json.h"
#include "hindsight/plan.h"
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

/* The "snapshots" array of run.json: every snapshot taken, kept or deleted. */
void hs_snapshots_json(const hs_snapshots *sn, hs_json *j);

/* A 64-bit FNV-1a of every rules file in load order, as 16 hex digits into
 * out[17] (snapshot.json: which rules were in force). "" if a file cannot be read. */
void hs_snapshots_rules_hash(const hs_ruleset *rs, char out[17]);

#endif
