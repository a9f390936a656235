/* run/record.h: the engine's normal mode: record with a backend (the platform's, or replay) until stopped, into a run folder. */
#ifndef HS_RUN_RECORD_H
#define HS_RUN_RECORD_H

#include <stdint.h>

#include "hindsight/backend.h"
#include "hindsight/msg.h"
#include "hindsight/plan.h"

/* How to run (engine --estimate records this way too). */
typedef struct {
	unsigned duration_s;     /* 0: until a stop request */
	const char *option;      /* the option that set the duration, for the messages ("--duration-sec") */
	const char *dir_suffix;  /* appended to the run folder's name ("-estimate"), or NULL */
	/* The backend to record with: NULL for the build's kernel backend
	 * (hs_backend_native); &hs_backend_replay with input and speed replays a
	 * recorded trace (no privilege needed; the run ends with the input). */
	const hs_backend_ops *backend;
	const char *input;
	double speed;
	/* Called once the sessions are stopped and their files written, before
	 * the backend is freed, so the statuses are final. Times are ms from the
	 * sessions' start to the ring snapshots (where buffering sessions stop
	 * taking events) and to the backend's stop (where streaming ones do). Not
	 * called when the sessions never started. */
	void (*stopped)(void *ctx, const char *run_dir, const hs_backend_ops *ops, hs_backend *b, uint64_t snapshot_ms,
			uint64_t stop_ms);
	void *ctx;
	/* Where the messages go (hindsight/msg.h): the run's own (sources "run"
	 * and "trigger") and the backend's. The program decides the prefix and
	 * the streams (the engine: progress on stdout, failures on stderr, and
	 * the backend's all on stdout, as they always were). NULL: stderr. */
	const hs_msg *msg;
	const hs_msg *backend_msg;
	/* What the terminal shows (docs/live.md). quiet_plan: the plan goes to
	 * main.log only, and a short header to the messages. live: the live view,
	 * full screen (live_curses, when stdout is a terminal and the build has
	 * ncurses) or plain "live:"/"event:" lines on stdout; while full screen
	 * the messages go to main.log and the view (msg_prefix: their prefix
	 * there). events_jsonl: the JSONL tap's PATH, or "-" for stdout (then the
	 * program keeps its own lines off stdout). */
	bool quiet_plan, live, live_curses;
	const char *events_jsonl;
	const char *msg_prefix;
} hs_record_opts;

/* Runs the plan until a stop request (signal, console event) or, when
 * duration_s is not 0, for that many seconds. Borrows everything; prints the
 * plan itself on stdout (after main.log is set up, so the log has it), or
 * into main.log only with quiet_plan.
 * Returns the process exit status (hindsight/exitcodes.h): HS_EXIT_OK on a
 * clean run, HS_EXIT_RUN_FAILED or HS_EXIT_NOT_PRIVILEGED otherwise. */
int hs_record_run_opts(const hs_ruleset *rs, const hs_plan *plan, const char *rules_path, const hs_record_opts *o);

#endif
