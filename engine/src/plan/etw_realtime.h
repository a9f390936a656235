/* plan/etw_realtime.h: which ETW sessions also run in real-time mode (a consumer in the engine feeds the triggers); a plan-level decision the backend follows, on any host. */
#ifndef HS_PLAN_ETW_REALTIME_H
#define HS_PLAN_ETW_REALTIME_H

#include <stdbool.h>
#include <stddef.h>

#include "hindsight/plan.h"
#include "plan/etw_defs.h"

/*
 * A file-circular session runs with EVENT_TRACE_REAL_TIME_MODE as well (the
 * events still go to its file, and a real-time consumer in the engine sees
 * them ~1 s later) exactly when a trigger of the plan watches its events:
 * kind event, regex or frame_time with that session, or any trigger with
 * events there (a deadline's frames, a cancel_on event). Otherwise nothing
 * changes: real-time mode without a consumer makes the providers' writes fail
 * once the buffers are full (Logging Mode Constants), and with a file it
 * flushes every buffer once a second (docs/windows-backend.md, "Real-time
 * consumer").
 *
 * hs_plan_build ORs HS_EVENT_TRACE_REAL_TIME_MODE into the session's
 * hs_plan_etw.log_file_mode (so `engine --plan` shows it) for these sessions,
 * and for every file-circular one when the run streams key events to the
 * live view or the tap (hs_plan_opts.stream_key_events); the backend follows
 * the plan's flag.
 */
static inline bool hs_etw_session_wants_realtime(const hs_plan *plan, size_t i)
{
	if (!plan || i >= plan->n_sessions || plan->sessions[i].session->mode != HS_MODE_FILE_CIRCULAR)
		return false;
	for (size_t t = 0; t < plan->n_triggers; t++) {
		const hs_plan_trigger *pt = &plan->triggers[t];
		if (pt->session != i || !pt->trigger)
			continue;
		hs_trigger_kind k = pt->trigger->kind;
		if (k == HS_TRIGGER_EVENT || k == HS_TRIGGER_REGEX || k == HS_TRIGGER_FRAME_TIME || pt->n_events)
			return true;
	}
	return false;
}

#endif
