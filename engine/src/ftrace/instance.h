/* ftrace/instance.h: tracefs instance helpers shared by the backend and launch mode (stale removal, formats, filtered enables). */
#ifndef HS_FTRACE_INSTANCE_H
#define HS_FTRACE_INSTANCE_H

#include <stddef.h>
#include <stdio.h>

#include <traceevent/event-parse.h>
#include <tracefs/tracefs.h>

#include "ftrace/ftrace.h"
#include "hindsight/plan.h"
#include "hindsight/status.h"

/* What a session enabled: the event list hs_dat_write needs for the format
 * section (owned here, freed by hs_ftrace_events_free) and the counts. */
typedef struct {
	struct hs_dat_event_list *list;
	char **globs;
	size_t n_globs;
	size_t enabled, skipped;
} hs_ftrace_events;

/* Messages go to `msg` as "<who>: ...". */

/* Removes an instance of that name left by an engine that died (and says so).
 * HS_EIO when it exists and cannot be removed. */
hs_status hs_ftrace_remove_stale(const char *name, const char *who, FILE *msg);

/* Event formats of every system the sessions name (to verify filters and to
 * name records). NULL on failure, with a message. Free with tep_free. */
struct tep_handle *hs_ftrace_load_formats(const hs_plan_session *sessions, size_t n, const char *who, FILE *msg);

/* Enables the session's providers on `inst`: whitelisted events with their
 * filters verified, written and read back (filter before enable), or whole
 * systems. Events the kernel lacks or whose filter it refuses stay disabled
 * and are counted as skipped; only HS_ENOMEM fails. */
hs_status hs_ftrace_enable_events(struct tracefs_instance *inst, struct tep_handle *tep, const hs_plan_session *ps,
				  const char *who, FILE *msg, hs_ftrace_events *ev);
void hs_ftrace_events_free(hs_ftrace_events *ev);

#endif
