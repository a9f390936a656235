/* run/estimate.h: engine --estimate: record the profile's sessions for a while, then report their rates and what the sizes hold. */
#ifndef HS_RUN_ESTIMATE_H
#define HS_RUN_ESTIMATE_H

#include <stdbool.h>

#include "hindsight/msg.h"
#include "hindsight/plan.h"

/* Records the plan for `seconds` exactly as recording mode does (same backend
 * calls, same files, in a run folder named <stamp>-estimate), then reads the
 * files it wrote and prints the estimate on stdout, as text or as JSON; the
 * recording's stdout goes to stderr meanwhile (and to main.log), and the
 * folder keeps the report as estimate.json. Messages go to the sinks as in
 * hs_record_opts; stdout is the report's, so the engine gives sinks that
 * print on stderr. Borrows everything. Returns the exit status
 * (hindsight/exitcodes.h), as hs_record_run_opts does. */
int hs_estimate_live(const hs_ruleset *rs, const hs_plan *plan, const char *rules_path, unsigned seconds, bool json,
		     const hs_msg *msg, const hs_msg *backend_msg);

#endif
