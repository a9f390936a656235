/* run/manifest.h: run.json from the run's state (run/manifest.c). */
#ifndef HS_RUN_MANIFEST_H
#define HS_RUN_MANIFEST_H

#include <stdint.h>
#include <time.h>

#include "hindsight/backend.h"
#include "hindsight/plan.h"
#include "hindsight/rundoc.h"
#include "hindsight/trigger.h"
#include "run/snapshots.h"

/* What run.json is made of; everything borrowed for the call. b, te, sn and report may be NULL (the first
 * run.json, written before the sessions start); end 0 while the run goes on. */
typedef struct {
	const char *path;
	const hs_ruleset *rs;
	const hs_plan *plan;
	const char *rules_path;
	time_t start, end;
	int exit_code;
	const hs_backend_ops *ops;
	hs_backend *b;
	uint64_t observed;
	const hs_trigger_engine *te;
	const hs_snapshots *sn;
	const hs_rundoc_report *report; /* the final rings' report */
} hs_run_manifest;

/* Writes run.json (synced). */
hs_status hs_run_manifest_write(const hs_run_manifest *m);

#endif
