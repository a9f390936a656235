/* run/record.h: the engine's normal mode: record with the platform backend until SIGINT/SIGTERM, into a run folder. */
#ifndef HS_RUN_RECORD_H
#define HS_RUN_RECORD_H

#include "hindsight/plan.h"

/* Runs the plan until a stop request (signal, console event) or, when
 * duration_s is not 0, for that many seconds. Borrows everything; prints the
 * plan itself (after main.log is set up, so the log has it). Returns the
 * process exit status: 0 on a clean run. */
int hs_record_run(const hs_ruleset *rs, const hs_plan *plan, const char *rules_path, unsigned duration_s);

#endif
