/* hindsight/detect.h: which sessions get a trigger-detection instance on Linux, and its name (one rule for the backend and the name locks). */
#ifndef HINDSIGHT_DETECT_H
#define HINDSIGHT_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hindsight/limits.h"
#include "hindsight/plan.h"

/*
 * A file-circular session that an event, regex or frame_time trigger watches
 * gets, on Linux (tracefs), a second small instance that records only the
 * watched events and is read with partial pages on every wake-up; its events
 * reach the observer as early copies (hs_key_event.trigger_copy), so a
 * trigger does not wait for the session's flush (docs/triggers.md,
 * "Detection latency"). The tracefs backend makes these instances and the
 * recording mode locks their names before it starts, so both ask here.
 *
 * Ownership: both functions borrow the plan; hs_plan_detect_name writes into
 * the caller's buffer.
 */

/* True when session i of a Linux plan is file-circular and some event, regex
 * or frame_time trigger watches it with at least one event. */
static inline bool hs_plan_session_has_trigger_copy(const hs_plan *plan, size_t i)
{
	if (!plan || plan->platform != HS_PLATFORM_LINUX || i >= plan->n_sessions ||
	    plan->sessions[i].session->mode != HS_MODE_FILE_CIRCULAR || !plan->sessions[i].session->logger_name)
		return false;
	for (size_t t = 0; t < plan->n_triggers; t++) {
		const hs_plan_trigger *pt = &plan->triggers[t];
		if (pt->session == i && pt->n_events && pt->trigger->kind != HS_TRIGGER_MANUAL)
			return true;
	}
	return false;
}

/* The detection instance's name for a session's logger_name: <logger_name>
 * HS_LINUX_DETECT_SUFFIX. False (buf empty) when it does not fit in cap. */
static inline bool hs_plan_detect_name(const char *logger_name, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s%s", logger_name ? logger_name : "", HS_LINUX_DETECT_SUFFIX);
	if (!logger_name || n < 0 || (size_t)n >= cap) {
		if (cap)
			buf[0] = '\0';
		return false;
	}
	return true;
}

#endif
