/* perf/tree_events.h: launch mode's tracefs side: the session's events for the launched process tree, to a trace.dat. */
#ifndef HS_PERF_TREE_EVENTS_H
#define HS_PERF_TREE_EVENTS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "hindsight/msg.h"
#include "hindsight/plan.h"
#include "hindsight/status.h"

/* The events file is the perf.data's name with this extension: trace-cmd's
 * format, not a run-file name (that one, perf.data, comes from the rules). */
#define HS_TREE_EVENTS_EXT ".dat"

typedef struct hs_tree_events hs_tree_events;

/*
 * Makes the session's tracefs instance (a stale one of that name removed
 * first), sized, clocked and filtered as the plan says, scoped to `pid` and
 * the children it forks, and turns it on. Call it before the program is
 * released. *out stays NULL (HS_OK) when the session names no tracefs
 * providers. On failure nothing is left in tracefs. Borrows ps and dat_path
 * until hs_tree_events_free.
 */
hs_status hs_tree_events_start(const hs_plan_session *ps, pid_t pid, const char *dat_path, const hs_msg *msg,
			       hs_tree_events **out);

/* Moves the full pages of every CPU to their scratch files, without blocking,
 * so a busy tree does not fill the ring while the program runs. */
void hs_tree_events_drain(hs_tree_events *t);

/* Stops the ring, drains every CPU to the last event and writes the trace.dat
 * (temporary name, then rename). *events: the events in the file; *lost: the
 * ones the kernel dropped or overwrote. */
hs_status hs_tree_events_finish(hs_tree_events *t, uint64_t *events, uint64_t *lost);

/* Removes the instance and the scratch files, on every path. NULL is fine. */
void hs_tree_events_free(hs_tree_events *t);

#endif
