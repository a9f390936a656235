/* bench/bench_tracefs.h: what the tracefs benches (frame pacing, key-event streaming) share: clocks, clean-up of their own instances, files and load generators, and plans copied under bench-only instance names. */
#ifndef HS_BENCH_TRACEFS_H
#define HS_BENCH_TRACEFS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "hindsight/backend.h"
#include "hindsight/diag.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"

#ifndef HS_BENCH_BUILD_TYPE
#define HS_BENCH_BUILD_TYPE "unknown"
#endif

/* Every instance a bench makes starts with this prefix plus its pid, so its
 * clean-up (and a later run, for a SIGKILLed one) finds exactly its own. The
 * same prefix as bench_linux_backend: each sweeps the other's dead runs too. */
#define BENCH_PREFIX "hindsight_bench_"
#define BENCH_MAX_SESSIONS 8

extern volatile sig_atomic_t g_stop; /* set by SIGINT, SIGTERM, SIGHUP */
extern char g_dir[4096];             /* this run's files; removed by bench_cleanup */
extern char g_prefix[64];            /* BENCH_PREFIX "<pid>_" */
extern pid_t g_load_pgid;            /* a load generator's process group, 0 when none runs */
extern FILE *g_log;                  /* the backend's messages: shown only on failure or with -v */

double bench_now_s(void);
/* User + system CPU seconds of RUSAGE_SELF, RUSAGE_THREAD or RUSAGE_CHILDREN. */
double bench_cpu_s(int who);
/* Sleeps up to `s` seconds, returning early on a stop request. */
void bench_nap(double s);

/* Signal handlers, the prefix, the run directory (under dir, $TMPDIR or /tmp),
 * the log, and the sweep of instances left by SIGKILLed runs. 0 on success. */
int bench_setup(const char *dir, bool verbose);
/* Kills the load generator, removes this run's instances and its directory. */
void bench_cleanup(void);
void bench_stop_load(void);
void bench_dump_log(void);
/* Restores default signal dispositions in a forked child. */
void bench_child_signals(void);
/* Starts argv in a new process group (g_load_pgid); returns its pid. */
pid_t bench_spawn_group(char *const argv[], bool quiet);
/* The same, its output into the file `log` (NULL: nowhere). */
pid_t bench_spawn_group_log(char *const argv[], const char *log);
/* True (and why, in words) when the load generator g_load_pgid has ended;
 * false while it runs. */
bool bench_load_ended(char *why, size_t len);
/* The last 4 KB of a file on stderr (a load generator's log, on failure). */
void bench_print_tail(const char *path);
bool bench_have_stress_ng(void);

/* True when every CPU's ring of instance `name` has overwritten something: the ring is full. */
bool bench_ring_wrapped(const char *name, unsigned cpus);

/* A plan holding copies of some of a real plan's sessions, each under the
 * instance name <g_prefix><tag>_<session name>: the rules' numbers and events
 * exactly, never a real recorder's instance. */
typedef struct {
	hs_session session[BENCH_MAX_SESSIONS];
	hs_plan_session ps[BENCH_MAX_SESSIONS];
	char name[BENCH_MAX_SESSIONS][96];
	hs_plan plan;
} bench_plan;

/* idx: n indices into plan->sessions (n <= BENCH_MAX_SESSIONS). */
void bench_plan_init(bench_plan *o, const hs_plan *plan, const size_t *idx, size_t n, const char *tag);
/* Index in plan->sessions of the first session with this mode, or SIZE_MAX. */
size_t bench_find_session(const hs_plan *plan, hs_session_mode mode);
/* The tracefs backend's start on the plan, in g_dir; NULL (and a message) on failure. */
hs_backend *bench_backend_start(const bench_plan *o);

/* Loads the rules and builds their Linux plan; false (and a message) on failure. */
bool bench_load_plan(const char *rules, hs_diags **d, hs_ruleset **rs, hs_plan **plan);

#endif
