/* bench/linux_backend.c: the tracefs backend against trace-cmd extract, key-event streaming cost, and idle ring cost, in one run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "hindsight/backend.h"
#include "hindsight/diag.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"
#include "hindsight/tracedat.h"

#ifndef HS_BENCH_BUILD_TYPE
#define HS_BENCH_BUILD_TYPE "unknown"
#endif

/* Every instance this run makes starts with this prefix plus our pid, so the
 * cleanup (and a later run, for a SIGKILLed one) finds exactly ours. */
#define PREFIX "hindsight_bench_"

static volatile sig_atomic_t g_stop;
static char g_dir[4096];
static char g_prefix[64];
static pid_t g_load_pgid; /* a load generator's process group, 0 when none runs */
static FILE *g_log;       /* the backend's messages: shown only on failure or with -v */

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static void cpu_split(double *user, double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Sleeps up to `s` seconds, returning early on a stop request. */
static void nap(double s)
{
	double end = now_s() + s;
	while (!g_stop && now_s() < end) {
		struct timespec ts = {0, 20 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/* ---- cleanup: load generators, instances, files ---- */

static void stop_load(void)
{
	if (g_load_pgid > 0) {
		kill(-g_load_pgid, SIGKILL);
		while (waitpid(-g_load_pgid, NULL, 0) > 0 || errno == EINTR)
			;
		g_load_pgid = 0;
	}
}

/* Removes instances matching `regex`; with only_dead, those whose owner pid is gone. */
static void sweep_instances(const char *regex, bool only_dead)
{
	char **names = tracefs_instances(regex);
	for (char **n = names; n && *n; n++) {
		if (only_dead) {
			long pid = strtol(*n + strlen(PREFIX), NULL, 10);
			if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			fprintf(stderr, "bench: removing instance %s left by a dead benchmark run\n", *n);
		}
		struct tracefs_instance *i = tracefs_instance_alloc(NULL, *n);
		if (i) {
			tracefs_instance_destroy(i);
			tracefs_instance_free(i);
		}
	}
	tracefs_list_free(names);
}

static void remove_dir(void)
{
	if (!g_dir[0])
		return;
	DIR *d = opendir(g_dir);
	if (d) {
		struct dirent *e;
		char p[8192];
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", g_dir, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(g_dir);
	g_dir[0] = 0;
}

static void cleanup(void)
{
	char re[96];
	stop_load();
	snprintf(re, sizeof(re), "^%s", g_prefix);
	sweep_instances(re, false);
	remove_dir();
}

static void dump_log(void)
{
	if (!g_log || g_log == stderr)
		return;
	fflush(g_log);
	rewind(g_log);
	char buf[4096];
	size_t n;
	fputs("bench: backend messages:\n", stderr);
	while ((n = fread(buf, 1, sizeof(buf), g_log)) > 0)
		fwrite(buf, 1, n, stderr);
}

/* ---- load generators (each in its own process group, killed by id) ---- */

static void child_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

/* Starts argv in a new process group; returns its pid. */
static pid_t spawn_group(char *const argv[], bool quiet)
{
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		child_signals();
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0) {
		setpgid(pid, pid); /* both sides, so a kill right after fork hits the group */
		g_load_pgid = pid;
	}
	return pid;
}

/* A fork/exec storm: `procs` workers each fork+exec /bin/true back to back
 * until `secs` pass (or, with a period, once per `period_ms`), then report how
 * many they ran through `fd`. */
static pid_t start_exec_loop(unsigned procs, double secs, int period_ms, int fd)
{
	pid_t leader = fork();
	if (leader != 0) {
		if (leader > 0) {
			setpgid(leader, leader);
			g_load_pgid = leader;
		}
		return leader;
	}
	setpgid(0, 0);
	child_signals();
	for (unsigned w = 0; w < procs; w++) {
		if (fork() != 0)
			continue;
		double end = now_s() + secs;
		uint64_t n = 0;
		while (now_s() < end) {
			pid_t p = fork();
			if (p == 0) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(127);
			}
			if (p > 0) {
				waitpid(p, NULL, 0);
				n++;
			}
			if (period_ms > 0) {
				struct timespec ts = {period_ms / 1000, (long)(period_ms % 1000) * 1000000L};
				nanosleep(&ts, NULL);
			}
		}
		if (write(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
			_exit(1);
		_exit(0);
	}
	while (wait(NULL) > 0)
		;
	_exit(0);
}

/* Waits for the exec loop to end and sums its workers' counts. */
static uint64_t finish_exec_loop(pid_t leader, int rfd)
{
	while (waitpid(leader, NULL, 0) < 0 && errno == EINTR && !g_stop)
		;
	if (g_stop)
		stop_load();
	g_load_pgid = 0;
	uint64_t total = 0, n;
	int fl = fcntl(rfd, F_GETFL);
	fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
	while (read(rfd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		total += n;
	return total;
}

/* ---- helpers on instances and files ---- */

typedef struct {
	uint64_t entries, overrun, dropped;
} ring_totals;

static ring_totals instance_totals(const char *name, unsigned cpus)
{
	ring_totals t = {0, 0, 0};
	struct tracefs_instance *i = tracefs_instance_alloc(NULL, name);
	for (unsigned c = 0; i && c < cpus; c++) {
		char file[64];
		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", c);
		char *text = tracefs_instance_file_read(i, file, NULL);
		for (char *l = text ? strtok(text, "\n") : NULL; l; l = strtok(NULL, "\n")) {
			if (!strncmp(l, "entries:", 8))
				t.entries += strtoull(l + 8, NULL, 10);
			else if (!strncmp(l, "overrun:", 8))
				t.overrun += strtoull(l + 8, NULL, 10);
			else if (!strncmp(l, "dropped events:", 15))
				t.dropped += strtoull(l + 15, NULL, 10);
		}
		free(text);
	}
	tracefs_instance_free(i);
	return t;
}

/* True when every CPU's ring has overwritten something: the ring is full. */
static bool wrapped(const char *name, unsigned cpus)
{
	struct tracefs_instance *i = tracefs_instance_alloc(NULL, name);
	bool all = i != NULL;
	for (unsigned c = 0; i && all && c < cpus; c++) {
		char file[64];
		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", c);
		char *text = tracefs_instance_file_read(i, file, NULL);
		char *o = text ? strstr(text, "\noverrun:") : NULL;
		all = o && strtoull(o + 9, NULL, 10) > 0;
		free(text);
	}
	tracefs_instance_free(i);
	return all;
}

static ring_totals session_totals(hs_backend *b)
{
	ring_totals t = {0, 0, 0};
	const hs_session_status *s;
	if (hs_backend_session_status(b, 0, &s) != HS_OK)
		return t;
	for (unsigned c = 0; c < s->cpus; c++) {
		t.entries += s->cpu[c].entries;
		t.overrun += s->cpu[c].overrun;
		t.dropped += s->cpu[c].dropped;
	}
	return t;
}

static int count_one(const hs_tracedat_record *r, void *ctx)
{
	(void)r;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* Events in a trace.dat, every buffer, read back through libtracecmd: the same
 * reader for both writers' files. UINT64_MAX when it cannot be read. */
static uint64_t dat_events(const char *path)
{
	hs_tracedat *td = NULL;
	uint64_t n = 0;
	hs_status st = hs_tracedat_open_ex(path, false, &td);
	if (st == HS_OK)
		st = hs_tracedat_foreach(td, count_one, &n);
	hs_tracedat_close(td);
	return st == HS_OK ? n : UINT64_MAX;
}

static uint64_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) ? 0 : (uint64_t)sb.st_size;
}

/* A one-session plan whose session is a copy of `src` under another instance
 * name: the rules' numbers and events exactly, never a real recorder's name. */
typedef struct {
	hs_session session;
	hs_plan_session ps;
	hs_plan plan;
	char name[64];
} one_session;

static void one_session_init(one_session *o, const hs_plan *plan, size_t i, const char *tag)
{
	o->session = *plan->sessions[i].session;
	snprintf(o->name, sizeof(o->name), "%s%s", g_prefix, tag);
	o->session.logger_name = o->name;
	o->ps = plan->sessions[i];
	o->ps.session = &o->session;
	o->plan = *plan;
	o->plan.sessions = &o->ps;
	o->plan.n_sessions = 1;
	/* Triggers name sessions by their index in the whole plan: none here. */
	o->plan.triggers = NULL;
	o->plan.n_triggers = 0;
}

static hs_backend *start(one_session *o)
{
	hs_backend *b = NULL;
	/* The backend's messages as the engine prints them, into the log; static:
	 * the backend borrows the sink until it is freed. */
	static hs_msg_file sink;
	static hs_msg msg = {hs_msg_file_fn, &sink};
	sink = (hs_msg_file){.f = g_log, .prefix = "engine"};
	hs_backend_opts opts = {.msg = &msg, .interrupts = NULL};
	if (hs_backend_start(&o->plan, g_dir, &opts, &b) != HS_OK) {
		fprintf(stderr, "bench: cannot start session %s\n", o->name);
		return NULL;
	}
	return b;
}

static size_t find_session(const hs_plan *plan, hs_session_mode mode)
{
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == mode)
			return i;
	return SIZE_MAX;
}

/* ---- 1. snapshot of a full ring: the backend vs trace-cmd extract ---- */

static bool have_stress_ng(void)
{
	return !system("command -v stress-ng >/dev/null 2>&1");
}

static int bench_snapshot(const hs_plan *plan, size_t si, double fill_s)
{
	int rc = 1;
	one_session eng, tcmd;
	one_session_init(&eng, plan, si, "snap_engine");
	one_session_init(&tcmd, plan, si, "snap_tracecmd");
	hs_backend *be = NULL, *bt = NULL;
	unsigned cpus = plan->sessions[si].linux_.cpus;
	char engine_out[8192], tcmd_out[8192];
	snprintf(engine_out, sizeof(engine_out), "%s/snap.dat", g_dir);
	snprintf(tcmd_out, sizeof(tcmd_out), "%s/extract.dat", g_dir);

	/* Both rings record the same load at the same time: identical in size,
	 * events and history, each drained by its own writer afterwards. The load
	 * starts before the backends: the engine leaves its own process and every
	 * child it forks later out of its instances (set_event_notrace_pid with
	 * event-fork), and this process is the engine here. */
	char secs[32];
	snprintf(secs, sizeof(secs), "%.0fs", fill_s);
	bool stress = have_stress_ng();
	int fds[2] = {-1, -1};
	pid_t loop = -1;
	if (stress) {
		/* Two of each, so both CPUs' rings fill (one of each left CPU 1's ring
		 * half empty after 60 s here). */
		char *argv[] = {"stress-ng", "--switch", "2", "--fork", "2", "-t", secs, "--quiet", NULL};
		printf("snapshot: filling two %" PRIu64 " MB rings (%s and %s) under stress-ng --switch 2 --fork 2 "
		       "until both wrap (at most %s)\n",
		       (uint64_t)plan->sessions[si].session->ring_mb, eng.name, tcmd.name, secs);
		fflush(stdout);
		if (spawn_group(argv, true) < 0)
			goto out;
	} else {
		if (pipe(fds))
			goto out;
		printf("snapshot: stress-ng not found (apt-get install -y stress-ng); filling under a fork/exec loop "
		       "for %s\n",
		       secs);
		fflush(stdout);
		loop = start_exec_loop(cpus, fill_s, 0, fds[1]);
		close(fds[1]);
	}
	be = start(&eng);
	bt = be ? start(&tcmd) : NULL;
	if (stress) {
		/* Until both rings have wrapped on every CPU: a snapshot of a full ring
		 * is what the engine does on Ctrl+C, and a half-empty one is cheaper. */
		pid_t p = g_load_pgid;
		double t0 = now_s();
		while (bt && !g_stop && waitpid(p, NULL, WNOHANG) == 0 &&
		       !(wrapped(eng.name, cpus) && wrapped(tcmd.name, cpus)))
			nap(0.2);
		stop_load();
		printf("snapshot: load ran %.1f s\n", now_s() - t0);
	} else {
		finish_exec_loop(loop, fds[0]);
		close(fds[0]);
	}
	if (!bt)
		goto out;
	if (g_stop)
		goto out;

	/* Freeze the trace-cmd ring now; the backend freezes its own as its first step. */
	struct tracefs_instance *ti = tracefs_instance_alloc(NULL, tcmd.name);
	if (ti) {
		tracefs_trace_off(ti);
		tracefs_instance_free(ti);
	}
	ring_totals tt = instance_totals(tcmd.name, cpus);

	double t0 = now_s();
	hs_status st = hs_backend_snapshot(be, 0, engine_out, true);
	double t_engine = now_s() - t0;
	if (st != HS_OK) {
		fprintf(stderr, "bench: the backend's snapshot failed (%s)\n", hs_strerror(st));
		goto out;
	}
	const hs_session_status *es;
	hs_backend_session_status(be, 0, &es);
	for (unsigned c = 0; c < es->cpus; c++)
		printf("  engine ring CPU %u: overrun %" PRIu64 " -> %s\n", c, es->cpu[c].overrun,
		       es->cpu[c].overrun ? "full (wrapped)" : "NOT wrapped: the ring was not full");
	/* The backend's own line splits the time into drain and trace.dat writing. */
	if (g_log != stderr) {
		char line[1024], last[1024] = "";
		fflush(g_log);
		rewind(g_log);
		while (fgets(line, sizeof(line), g_log))
			if (strstr(line, " wrote "))
				snprintf(last, sizeof(last), "%s", line);
		fseek(g_log, 0, SEEK_END);
		if (last[0])
			printf("  backend: %s", last);
	}

	char *argv[] = {"trace-cmd", "extract", "-B", tcmd.name, "-o", tcmd_out, NULL};
	t0 = now_s();
	pid_t p = spawn_group(argv, true);
	int ws = 0;
	while (p > 0 && waitpid(p, &ws, 0) < 0 && errno == EINTR)
		;
	g_load_pgid = 0;
	double t_tcmd = now_s() - t0;
	if (p < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws)) {
		fprintf(stderr, "bench: trace-cmd extract -B %s failed (status %d)\n", tcmd.name, ws);
		goto out;
	}
	bool tcmd_removed = !tracefs_instance_exists(tcmd.name);

	uint64_t e_file = dat_events(engine_out), t_file = dat_events(tcmd_out);
	printf("snapshot: ring %" PRIu64 " KB per CPU x %u CPUs, %zu events/systems enabled\n", es->real_per_cpu_kb,
	       es->cpus, es->events_enabled);
	printf("  engine backend:     %.3f s (drain + trace.dat), %" PRIu64 " events in snap.dat (%.1f MB), ring "
	       "entries %" PRIu64 " -> %s\n",
	       t_engine, e_file, (double)file_size(engine_out) / 1048576.0, es->snapshot_entries,
	       e_file == es->snapshot_entries ? "equal" : "MISMATCH");
	printf("  trace-cmd extract:  %.3f s (process, drain, compressed trace.dat, rmdir), %" PRIu64
	       " events in extract.dat (%.1f MB), ring entries %" PRIu64 " (overrun %" PRIu64 ") -> %s%s\n",
	       t_tcmd, t_file, (double)file_size(tcmd_out) / 1048576.0, tt.entries, tt.overrun,
	       t_file == tt.entries ? "equal" : "MISMATCH", tcmd_removed ? "" : "; instance NOT removed by it");
	printf("  ratio trace-cmd / engine: %.2fx (engine %s)\n", t_tcmd / t_engine,
	       t_engine <= t_tcmd ? "faster or equal" : "SLOWER");
	if (!tt.overrun)
		printf("  NOTE: the rings did not wrap (overrun 0): raise --fill-sec to measure a full ring\n");
	rc = e_file == es->snapshot_entries && t_file == tt.entries ? 0 : 1;
	if (rc)
		fprintf(stderr, "bench: event counts do not match the ring entries\n");
out:
	stop_load();
	hs_backend_free(bt); /* its instance is normally gone already (extract removes it) */
	hs_backend_free(be);
	unlink(engine_out);
	unlink(tcmd_out);
	return g_stop ? 1 : rc;
}

/* ---- 2. key-event streaming under a fork/exec storm ---- */

static void count_event(void *ctx, const hs_key_event *ev)
{
	(void)ev;
	(*(uint64_t *)ctx)++;
}

static int bench_stream(const hs_plan *plan, size_t si, double secs, unsigned procs)
{
	int rc = 1;
	one_session keys;
	one_session_init(&keys, plan, si, "keys");
	hs_backend *b = NULL;
	uint64_t observed = 0;
	int fds[2] = {-1, -1};
	if (pipe(fds))
		goto out;
	printf("streaming: session %s (%s, %" PRIu64 " KB per CPU, file-circular), fork/exec storm of %u "
	       "process%s for %.0f s\n",
	       keys.name, plan->sessions[si].session->name, plan->sessions[si].linux_.per_cpu_kb, procs,
	       procs == 1 ? "" : "es", secs);
	fflush(stdout);

	/* The storm starts before the session: the backend leaves its own process
	 * out of its instances with event-fork, so a storm forked after it would
	 * be left out too. Its first milliseconds go unrecorded. */
	double kids0 = cpu_s(RUSAGE_CHILDREN), ts0 = now_s();
	pid_t p = start_exec_loop(procs, secs, 0, fds[1]);
	close(fds[1]);
	fds[1] = -1;
	if (p < 0 || !(b = start(&keys)))
		goto out;
	hs_backend_set_observer(b, count_event, &observed);
	double c0 = cpu_s(RUSAGE_SELF), t0 = now_s();
	/* The engine's own loop: record.c polls at HS_LINUX_STREAM_WAKE_MS. */
	bool ok = true;
	while (!g_stop && waitpid(p, NULL, WNOHANG) == 0)
		if (hs_backend_poll(b, 50) != HS_OK)
			ok = false;
	double wall = now_s() - t0, swall = now_s() - ts0;
	uint64_t execs = finish_exec_loop(p, fds[0]);
	/* The fork+execs of the recorded stretch, assuming an even storm. */
	double rec_execs = (double)execs * wall / swall;
	double kids = cpu_s(RUSAGE_CHILDREN) - kids0;
	/* Whatever the ring still holds, as the engine's next wake-up would. */
	if (hs_backend_poll(b, 0) != HS_OK)
		ok = false;
	double engine = cpu_s(RUSAGE_SELF) - c0;
	double t_stop = now_s();
	if (hs_backend_stop(b) != HS_OK)
		ok = false;
	t_stop = now_s() - t_stop;
	if (g_stop)
		goto out;
	ring_totals t = session_totals(b);
	const hs_session_status *s;
	hs_backend_session_status(b, 0, &s);
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", g_dir, plan->sessions[si].session->output);
	uint64_t in_file = dat_events(path);

	printf("  storm: %" PRIu64 " exec'd children in %.1f s = %.0f fork+exec/s, storm CPU %.0f%% of one CPU; the "
	       "session started %.2f s into it\n",
	       execs, swall, (double)execs / swall, 100.0 * kids / swall, swall - wall);
	printf("  streamed: %" PRIu64 " key events = %.0f events/s (%.1f per fork+exec), %.2f MB raw; "
	       "keyevents.dat holds %" PRIu64 " (%s)\n",
	       observed, (double)observed / wall, rec_execs > 0 ? (double)observed / rec_execs : 0.0,
	       (double)s->bytes_streamed / 1048576.0, in_file,
	       in_file == observed ? "equal" : (s->chunks_dropped ? "circular bound reached" : "MISMATCH"));
	printf("  drops: instance dropped %" PRIu64 ", overrun %" PRIu64 " -> %s\n", t.dropped, t.overrun,
	       t.dropped + t.overrun ? "LOST EVENTS" : "none");
	printf("  engine CPU: %.0f ms in %.1f s = %.2f%% of one CPU (storm %.0f%%; engine/storm %.4f); "
	       "%.2f us per event; final stop+file %.3f s\n",
	       engine * 1e3, wall, 100.0 * engine / wall, 100.0 * kids / swall,
	       kids > 0 ? engine / (kids * wall / swall) : 0.0,
	       observed ? engine * 1e6 / (double)observed : 0.0, t_stop);
	rc = ok && !t.dropped && !t.overrun && in_file == observed ? 0 : 1;
	if (rc)
		fprintf(stderr, "bench: streaming lost events, failed, or the file does not hold what was streamed\n");
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	stop_load();
	hs_backend_free(b);
	return g_stop ? 1 : rc;
}

/* ---- 3. the engine's CPU while only a ring records ---- */

static int bench_idle(const hs_plan *plan, size_t si, double secs)
{
	int rc = 1;
	one_session ring;
	one_session_init(&ring, plan, si, "ring");
	hs_backend *b = start(&ring);
	int fds[2] = {-1, -1};
	if (!b || pipe(fds))
		goto out;
	printf("ring only: session %s (%" PRIu64 " MB), light load (one fork+exec every 100 ms) for %.0f s\n",
	       ring.name, (uint64_t)plan->sessions[si].session->ring_mb, secs);
	fflush(stdout);
	/* Baseline, same process and ring: a bare 50 ms sleep loop, the floor any
	 * loop that wakes 20 times a second pays on this machine. */
	double u0, s0, u1, s1;
	cpu_split(&u0, &s0);
	double t0 = now_s();
	unsigned bare = 0;
	while (!g_stop && now_s() - t0 < secs) {
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
		bare++;
	}
	double bwall = now_s() - t0;
	cpu_split(&u1, &s1);
	double bms = (u1 - u0 + s1 - s0) * 1e3;
	printf("  baseline (bare 50 ms sleep loop, no load): user %.1f ms + sys %.1f ms = %.1f ms in %.1f s = %.3f%% "
	       "of one CPU (%u wake-ups, %.0f us each)\n",
	       (u1 - u0) * 1e3, (s1 - s0) * 1e3, bms, bwall, bms / 10.0 / bwall, bare, bare ? bms * 1e3 / bare : 0.0);
	cpu_split(&u0, &s0);
	t0 = now_s();
	pid_t p = start_exec_loop(1, secs, 100, fds[1]);
	close(fds[1]);
	fds[1] = -1;
	unsigned polls = 0;
	/* The engine's loop as record.c runs a plan of rings only: asleep until
	 * the next stats line (30 s in stutter.yaml, longer than this run) or a
	 * signal; so here one sleep for the length of the load. */
	while (!g_stop && waitpid(p, NULL, WNOHANG) == 0) {
		double left = secs - (now_s() - t0);
		hs_backend_poll(b, left > 0.05 ? (int)(left * 1000) : 50);
		polls++;
	}
	double wall = now_s() - t0;
	cpu_split(&u1, &s1);
	finish_exec_loop(p, fds[0]);
	if (g_stop)
		goto out;
	ring_totals t = session_totals(b);
	double ms = (u1 - u0 + s1 - s0) * 1e3;
	printf("  ring holds %" PRIu64 " events (%.0f events/s)\n", t.entries, (double)t.entries / wall);
	printf("  engine loop (ring-only plan: asleep until the stats interval, light load): user %.1f ms + sys %.1f ms = %.1f ms in %.1f s "
	       "= %.3f%% of one CPU (%u wake-ups, %.0f us each; target ~0); ratio to baseline %.2fx\n",
	       (u1 - u0) * 1e3, (s1 - s0) * 1e3, ms, wall, ms / 10.0 / wall, polls, polls ? ms * 1e3 / polls : 0.0,
	       bms > 0 ? (ms / wall) / (bms / bwall) : 0.0);
	rc = 0;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	stop_load();
	hs_backend_free(b);
	return g_stop ? 1 : rc;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fputs("usage: bench_linux_backend [--rules FILE] [--fill-sec N] [--storm-sec N] [--storm-procs N]\n"
	      "                           [--idle-sec N] [--only snapshot|stream|idle] [--dir DIR] [-v]\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *rules = HS_BENCH_RULES_DIR "/stutter.yaml", *only = NULL, *dir = NULL;
	double fill_s = 30, storm_s = 10, idle_s = 10;
	unsigned procs = 2;
	bool verbose = false;
	static const struct option lo[] = {{"rules", 1, 0, 'r'},	  {"fill-sec", 1, 0, 'f'},
					   {"storm-sec", 1, 0, 's'},	  {"storm-procs", 1, 0, 'p'},
					   {"idle-sec", 1, 0, 'i'},	  {"only", 1, 0, 'o'},
					   {"dir", 1, 0, 'd'},		  {"verbose", 0, 0, 'v'},
					   {"help", 0, 0, 'h'},		  {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (c) {
		case 'r': rules = optarg; break;
		case 'f': fill_s = atof(optarg); break;
		case 's': storm_s = atof(optarg); break;
		case 'p': procs = (unsigned)atoi(optarg); break;
		case 'i': idle_s = atof(optarg); break;
		case 'o': only = optarg; break;
		case 'd': dir = optarg; break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (fill_s < 1 || storm_s < 1 || idle_s < 1 || !procs ||
	    (only && strcmp(only, "snapshot") && strcmp(only, "stream") && strcmp(only, "idle"))) {
		usage(stderr);
		return 2;
	}
	if (geteuid() != 0) {
		fputs("bench: tracefs is root-only; run it as root (sudo)\n", stderr);
		return 1;
	}
	printf("bench_linux_backend (build %s), rules %s\n", HS_BENCH_BUILD_TYPE, rules);

	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_plan *plan = NULL;
	int rc = 1;
	if (!d || hs_rules_load(rules, d, &rs) != HS_OK || hs_plan_build(rs, HS_PLATFORM_LINUX, NULL, &plan) != HS_OK) {
		fprintf(stderr, "bench: cannot load %s or build its Linux plan (check it with rulecheck)\n", rules);
		goto done;
	}
	size_t ring_i = find_session(plan, HS_MODE_BUFFERING), keys_i = find_session(plan, HS_MODE_FILE_CIRCULAR);
	if (ring_i == SIZE_MAX || keys_i == SIZE_MAX) {
		fprintf(stderr, "bench: %s needs a buffering and a file-circular Linux session\n", rules);
		goto done;
	}

	snprintf(g_prefix, sizeof(g_prefix), PREFIX "%d_", (int)getpid());
	snprintf(g_dir, sizeof(g_dir), "%s/hindsight-bench-XXXXXX",
		 dir ? dir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_dir)) {
		fprintf(stderr, "bench: cannot create a directory under %s: %s\n", dir ? dir : "TMPDIR", strerror(errno));
		g_dir[0] = 0;
		goto done;
	}
	g_log = verbose ? stderr : tmpfile();
	if (!g_log)
		g_log = stderr;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* A killed earlier run cannot have cleaned up: its pid-named instances go now. */
	if (tracefs_tracing_dir())
		sweep_instances("^" PREFIX "[0-9]+_", true);

	rc = 0;
	if (!only || !strcmp(only, "snapshot"))
		rc |= bench_snapshot(plan, ring_i, fill_s);
	if (!g_stop && (!only || !strcmp(only, "stream")))
		rc |= bench_stream(plan, keys_i, storm_s, procs);
	if (!g_stop && (!only || !strcmp(only, "idle")))
		rc |= bench_idle(plan, ring_i, idle_s);
	if (g_stop) {
		fputs("bench: interrupted; cleaning up\n", stderr);
		rc = 1;
	}
	if (rc)
		dump_log();
done:
	cleanup();
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	return rc ? 1 : 0;
}
