/* hindsight/launch.h: launch mode: run one program under the CPU sampler and write a self-contained perf.data. */
#ifndef HINDSIGHT_LAUNCH_H
#define HINDSIGHT_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/limits.h"
#include "hindsight/msg.h"
#include "hindsight/plan.h"
#include "hindsight/status.h"

/*
 * Ownership: every pointer in hs_launch_opts is borrowed for the duration of
 * hs_launch_run only. hs_launch_result holds copies (fixed buffers), so the
 * caller frees nothing in it. The plan must be a Linux plan with one sampling
 * session; its rate, call-graph choice, per-CPU ring size and output name are
 * the only policy the sampler uses.
 */

typedef struct {
	const char *prog;        /* program to run; looked up in PATH when it has no '/' */
	char *const *argv;       /* arguments after argv[0] (NULL-terminated), or NULL for none */
	const char *cwd;         /* directory the program runs in, or NULL for ours */
	const char *out;         /* output path, or NULL: next to the program, named from the session's output */
	unsigned timeout_sec;    /* then the process group is killed; 0: none (the CLI passes its default, 600) */
	bool quiet;              /* no progress messages, only the summary */
	/* Optional: a counter the caller's SIGINT/SIGTERM handler increments. The
	 * program runs in its own process group, so a terminal's Ctrl+C reaches
	 * only the engine: the first increment forwards SIGINT to the group, a
	 * second one SIGKILL. */
	const volatile int *interrupts;
	/* Optional: where readers write their per-item detail lines as they are,
	 * not messages (Windows: the image identities it could not add, one line
	 * each); NULL: nowhere. */
	FILE *detail;
} hs_launch_opts;

typedef struct {
	char out_path[HS_LAUNCH_MAX_PATH_CHARS]; /* the file written (final name) */
	/* The session's tracefs events of the process tree: out_path with a .dat
	 * extension; "" when the session names no tracefs providers (or not root). */
	char events_path[HS_LAUNCH_MAX_PATH_CHARS];
	uint64_t events, events_lost;        /* in that file; dropped by the ring */
	int exit_code;                       /* -1 when the program died by a signal */
	int term_signal;                     /* 0 when it exited normally */
	bool timed_out;                      /* killed by us after timeout_sec */
	uint64_t samples, lost, lost_samples, throttled, unthrottled;
	uint64_t mmaps, comms, tasks;         /* records that let samples be symbolised */
	uint64_t build_ids;                  /* DSOs whose build-id went into the file */
	uint64_t data_bytes, file_bytes;
	uint64_t child_cpu_ns;               /* user+system time of the program and its reaped children */
	uint64_t wall_ns;
	unsigned cpus;                       /* events opened (one per online CPU) */
	uint64_t ring_bytes;                 /* per-CPU mmap ring (data part) */
	bool kernel_excluded;                /* kernel frames were refused (not root) */
} hs_launch_result;

/*
 * Runs opts->prog under a cpu-clock sampler (one event per CPU, inherited by
 * the whole process tree, enabled at exec), stops when it exits or after the
 * timeout (then the process group is killed and res->timed_out says so), and
 * writes perf.data (temporary name, then rename). The sampling session's
 * tracefs events (if it names providers) are recorded for the same tree in
 * their own instance and written as a trace.dat next to it (events_path); the
 * instance is removed on every path. Progress and problems go to the sink
 * `msg` (hindsight/msg.h, source "launch"; NULL: silent). Returns HS_OK when the file was written, whatever the
 * program's fate; HS_ENOENT when the program cannot be executed, HS_EPERM when
 * perf_event_open is refused, HS_EIO for I/O failures, HS_EINVAL for a plan
 * without a sampling session.
 */
hs_status hs_launch_run(const hs_plan *plan, const hs_launch_opts *o, const hs_msg *msg, hs_launch_result *res);

/*
 * Splits an --args string into words the way a POSIX shell would for plain
 * words: blanks separate, '...' is literal, "..." allows \" \\ \$ \`, and a
 * backslash outside quotes escapes the next character. No expansion. On HS_OK
 * *out is a NULL-terminated array the caller frees with hs_launch_free_args.
 * HS_EINVAL for an unterminated quote or a trailing backslash.
 */
hs_status hs_launch_split_args(const char *s, char ***out, size_t *n_out);
void hs_launch_free_args(char **argv);

/* The parts both platforms' launch modes share (perf/args.c): the plan's
 * sampling session (NULL when it has none); the sink a NULL msg means (launch
 * mode is silent then, where the session helpers' NULL would be stderr); one
 * message of launch mode's own (source "launch"). */
const hs_plan_session *hs_launch_sampling_session(const hs_plan *plan);
const hs_msg *hs_launch_msg(const hs_msg *msg);
void hs_launch_say(const hs_msg *msg, hs_msg_level level, const char *fmt, ...) HS_PRINTF_FMT(3, 4);

#endif
