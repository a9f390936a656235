/* ftrace/instance.h: tracefs instance helpers shared by the backend and launch mode (stale removal, formats, filtered enables). */
#ifndef HS_FTRACE_INSTANCE_H
#define HS_FTRACE_INSTANCE_H

#include <stddef.h>
#include <stdio.h>

#include <traceevent/event-parse.h>

#include "ftrace/ftrace.h"
#include "ftrace/tracefs_api.h"
#include "hindsight/backend.h"
#include "hindsight/plan.h"
#include "hindsight/status.h"

/* What a session enabled: the event list hs_dat_write needs for the format
 * section (owned here, freed by hs_ftrace_events_free) and the counts. */
typedef struct {
	struct hs_dat_event_list *list;
	char **globs;
	size_t n_globs;
	size_t enabled, skipped;
	hs_skipped_event *skipped_list; /* [skipped], strings owned here */
	size_t refused;                 /* of them, not optional: the rules cannot be recorded as written */
} hs_ftrace_events;

/* Messages go to the sink `msg` with `who` as their source (hindsight/msg.h; NULL: stderr). */

/* A file-circular session's chunks: run_dir/.<output>.chunks/cpu<N>.<seq>,
 * seq growing as the stream rotates. The backend writes them; a later engine
 * rescues what a killed one left (hs_ftrace_rescue_chunks). */
#define HS_FTRACE_CHUNK_DIR_FMT ".%s.chunks"
#define HS_FTRACE_CHUNK_FMT "cpu%u.%u"
/* A .dat writer's private tracing folder (dat.c: links to tracefs but a
 * saved_cmdlines of its own), made in the run folder; a later engine removes
 * the ones a killed one left (hs_ftrace_rescue_chunks). */
#define HS_FTRACE_TRACING_DIR_PREFIX ".hs-tracing."

/* The backend table's claim, adopt and release (hindsight/backend.h) over
 * every instance name of the plan, each session's trigger-detection instance
 * included (ftrace/host.c). */
hs_status hs_ftrace_sessions_claim(const hs_plan *plan, const hs_msg *msg);
void hs_ftrace_sessions_adopt(const hs_plan *plan, const char *run_dir, const hs_msg *msg);
void hs_ftrace_sessions_release(const hs_plan *plan);
/* The backend table's task_name: /proc/<pid>/comm, else tracefs saved_cmdlines (ftrace/host.c). */
bool hs_ftrace_task_name(int pid, char *out, size_t cap);

/*
 * Claims the instance name for this process: a POSIX lock on a file per name
 * under /run/hindsight, held until hs_ftrace_release or the process ends
 * (kill -9 included), so it never outlives its owner. HS_OK when this process
 * already holds it. HS_EIO, after saying which pid holds it, when a live
 * engine does. When the lock files cannot be made at all, says so and returns
 * HS_OK (the lock protects; recording does not need it). *prev_pid and
 * *prev_note (malloc'd, or NULL) are what an owner that died holding the name
 * left with hs_ftrace_claim_note; either pointer may be NULL.
 */
hs_status hs_ftrace_claim(const char *name, const char *who, const hs_msg *msg, long *prev_pid, char **prev_note);
/* Leaves a one-line note (the run folder) with a claimed name for whoever
 * claims it after this process dies without releasing it. */
hs_status hs_ftrace_claim_note(const char *name, const char *note);
/* Lets the name go as stopped cleanly: the lock file is removed (a file left
 * behind, with its note, is what an owner that died leaves). */
void hs_ftrace_release(const char *name);

/* Claims the name (see hs_ftrace_claim; fails while a live engine holds it),
 * then removes an instance of that name, which can only be left by an engine
 * that died (and says so). HS_EIO when it exists and cannot be removed. */
hs_status hs_ftrace_remove_stale(const char *name, const char *who, const hs_msg *msg);

/* For a file-circular session: the chunks an engine (pid) killed while
 * recording into run_dir left behind. Their events are newer than the .dat it
 * last rebuilt, so the .dat is rebuilt from them (and the event counts said);
 * then the chunk folder is removed, also when the rebuild fails (which is
 * said, and leaves the old .dat as it was). HS_OK when there is none. */
hs_status hs_ftrace_rescue_chunks(const hs_plan_session *ps, const char *run_dir, long pid, const char *who,
				  const hs_msg *msg);

/* Event formats of every system the sessions name (to verify filters and to
 * name records). NULL on failure, with a message. Free with tep_free. */
struct tep_handle *hs_ftrace_load_formats(const hs_plan_session *sessions, size_t n, const char *who,
					  const hs_msg *msg);

/* Enables the session's providers on `inst`: whitelisted events with their
 * filters verified, written and read back (filter before enable), or whole
 * systems. Events the kernel lacks or whose filter it refuses stay disabled
 * and are listed in ev->skipped_list with the kernel's reason; when any of
 * them is not optional the result is HS_ERULES (after trying every event, so
 * the user hears of all of them at once). HS_ENOMEM on OOM. */
hs_status hs_ftrace_enable_events(struct tracefs_instance *inst, struct tep_handle *tep, const hs_plan_session *ps,
				  const char *who, const hs_msg *msg, hs_ftrace_events *ev);
void hs_ftrace_events_free(hs_ftrace_events *ev);

/* options/copy_trace_marker when the plan asks for it (hs_plan_linux): the
 * applications' writes to the top-level trace_marker (a frame source: atrace
 * "B|pid|Name") are copied into this instance. HS_EIO, after saying so, when
 * the kernel lacks the option (Linux 6.17+) or refuses it. */
hs_status hs_ftrace_copy_trace_marker(struct tracefs_instance *inst, const hs_plan_session *ps, const char *who,
				      const hs_msg *msg);

#endif
