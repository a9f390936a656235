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
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ftrace/ftrace.h"
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
#define BENCH_CPUS 256 /* per-CPU arrays of the snapshot measure */

static volatile sig_atomic_t g_stop;
static char g_dir[4096];
static char g_prefix[64];
static pid_t g_load_pgid; /* a load generator's process group, 0 when none runs */
static FILE *g_log;       /* the backend's messages (a temporary file the bench reads back): shown on failure */
static bool g_verbose;    /* -v: each message on stderr too, as it comes */
static bool g_keep;       /* --keep: the run directory and its files stay */

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

/* This thread's user and system CPU seconds. */
static void cpu_split(double *user, double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* What else kept the machine busy during a measure: every CPU's busy time
 * (/proc/stat: user, nice, system, irq, softirq) less this process's and its
 * waited-for children's, as a share of all CPUs. Both sides of a comparison
 * run at nice 19 and wait while others run, so a ratio taken beside heavy
 * other load is noisier: the run says how much there was. */
typedef struct {
	double t, busy, own;
} load_mark;

static load_mark load_now(void)
{
	load_mark m = {now_s(), 0, cpu_s(RUSAGE_SELF) + cpu_s(RUSAGE_CHILDREN)};
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	long hz = sysconf(_SC_CLK_TCK);
	if (f &&
	    fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
		   &v[7]) == 8 &&
	    hz > 0)
		m.busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / (double)hz;
	if (f)
		fclose(f);
	return m;
}

/* The other load between a and b, in % of all CPUs (at least 0: the
 * kernel's ticks are coarser than rusage). */
static double other_load(load_mark a, load_mark b)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	double wall = (b.t - a.t) * (double)(n > 0 ? n : 1), other = (b.busy - a.busy) - (b.own - a.own);
	return wall > 0 && other > 0 ? 100.0 * other / wall : 0;
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
	if (g_keep && g_dir[0])
		fprintf(stderr, "bench: --keep: the files stay in %s\n", g_dir);
	else
		remove_dir();
}

/* The backend's messages into the log, which the bench reads its numbers back from, and with -v to stderr too
 * (-v had sent them to stderr only, and the snapshot's time split printed as -1). */
static void log_msg(void *ctx, hs_msg_level level, const char *source, const char *text)
{
	hs_msg_file_fn(ctx, level, source, text);
	if (g_verbose && ((hs_msg_file *)ctx)->f != stderr) {
		hs_msg_file echo = *(hs_msg_file *)ctx;
		echo.f = stderr;
		hs_msg_file_fn(&echo, level, source, text);
	}
}

static void dump_log(void)
{
	if (!g_log || g_log == stderr || g_verbose)
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

/* Starts argv in a new process group; returns its pid. Its output goes to
 * `log` (NULL: nowhere); `gentle`: at the snapshot threads' priority (nice
 * 19, best-effort I/O level 7), so a baseline competes for the machine as they do. */
static pid_t spawn_group_prio(char *const argv[], const char *log, bool gentle)
{
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		child_signals();
		int fd = open(log ? log : "/dev/null", log ? O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC : O_WRONLY, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		if (gentle) {
			setpriority(PRIO_PROCESS, 0, 19);
			syscall(SYS_ioprio_set, 1, 0, 2 << 13 | 7); /* IOPRIO_CLASS_BE, level 7 */
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

static pid_t spawn_group(char *const argv[], const char *log)
{
	return spawn_group_prio(argv, log, false);
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

static ring_totals session_totals(hs_backend *b)
{
	ring_totals t = {0, 0, 0};
	const hs_session_status *s;
	if (hs_backend_ftrace.session_status(b, 0, &s) != HS_OK)
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
	static hs_msg msg = {.fn = log_msg, .ctx = &sink, .debug = true};
	sink = (hs_msg_file){.f = g_log, .prefix = "engine"};
	hs_backend_opts opts = {.msg = &msg, .interrupts = NULL};
	if (hs_backend_ftrace.start(&o->plan, g_dir, &opts, &b) != HS_OK) {
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

/* ---- 1. snapshot of a full ring: the backend vs a raw drain and trace-cmd extract ---- */

static bool have_stress_ng(void)
{
	return !system("command -v stress-ng >/dev/null 2>&1");
}

/* Per-CPU entries and overrun of an instance's ring; false when unreadable. */
static bool ring_stats(const char *name, unsigned cpus, uint64_t *entries, uint64_t *overrun)
{
	struct tracefs_instance *i = tracefs_instance_alloc(NULL, name);
	bool ok = i != NULL;
	for (unsigned c = 0; ok && c < cpus; c++) {
		char file[64];
		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", c);
		char *text = tracefs_instance_file_read(i, file, NULL);
		char *e = text ? strstr(text, "entries:") : NULL, *o = text ? strstr(text, "\noverrun:") : NULL;
		ok = e && o;
		entries[c] = e ? strtoull(e + 8, NULL, 10) : 0;
		overrun[c] = o ? strtoull(o + 9, NULL, 10) : 0;
		free(text);
	}
	tracefs_instance_free(i);
	return ok;
}

/* The last lines of a load generator's output, for a failure message. */
static void print_log_tail(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char buf[4096];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	if (n == sizeof(buf) - 1) {
		fseek(f, -(long)(sizeof(buf) - 1), SEEK_END);
		n = fread(buf, 1, sizeof(buf) - 1, f);
	}
	fclose(f);
	buf[n] = 0;
	fprintf(stderr, "bench: its output (%s):\n%s%s", path, buf, n && buf[n - 1] != '\n' ? "\n" : "");
}

static void describe_status(int ws, char *out, size_t len)
{
	if (WIFEXITED(ws))
		snprintf(out, len, "exit status %d", WEXITSTATUS(ws));
	else if (WIFSIGNALED(ws))
		snprintf(out, len, "killed by signal %d", WTERMSIG(ws));
	else
		snprintf(out, len, "status 0x%x", ws);
}

/* The raw drain the snapshot is measured against: what libtracefs gives any
 * recorder (tracefs_cpu_flush, one sub-buffer per call, as trace-cmd's
 * recorder and the engine before did), every sub-buffer kept in memory (a
 * memfd) and nothing else: no counting, no compression, no file. One thread
 * per CPU at the snapshot threads' priority, so that on a loaded machine both
 * wait alike. */
typedef struct {
	const char *name;
	unsigned cpu;
	size_t subbuf;
	int fd;
	uint64_t bytes;
	double cpu_s;
	int err;
} raw_job;

/* The snapshot threads' priority (snapshot.c, be_gentle): nice 19, best-effort I/O at level 7. */
static void gentle(void)
{
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	syscall(SYS_ioprio_set, 1, 0, 2 << 13 | 7); /* this thread, IOPRIO_CLASS_BE, level 7 */
}

static void *raw_drain_cpu(void *arg)
{
	raw_job *j = arg;
	gentle();
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	struct tracefs_instance *i = tracefs_instance_alloc(NULL, j->name);
	struct tracefs_cpu *tc = i ? tracefs_cpu_open(i, (int)j->cpu, true) : NULL;
	char *buf = malloc(j->subbuf);
	j->fd = memfd_create("bench-raw-drain", MFD_CLOEXEC);
	int n = 0;
	if (!tc || !buf || j->fd < 0)
		j->err = errno ? errno : EIO;
	while (!j->err && (n = tracefs_cpu_flush(tc, buf)) > 0) {
		if ((size_t)n < j->subbuf)
			memset(buf + n, 0, j->subbuf - (size_t)n);
		if (write(j->fd, buf, j->subbuf) != (ssize_t)j->subbuf)
			j->err = errno ? errno : EIO;
		j->bytes += j->subbuf;
	}
	if (n < 0 && !j->err)
		j->err = errno ? errno : EIO;
	tracefs_cpu_close(tc);
	tracefs_instance_free(i);
	free(buf);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	j->cpu_s = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	return NULL;
}

/* Drains ring `name` raw; returns the wall time, or -1 (and says why). */
static double raw_drain(const char *name, unsigned cpus, uint64_t *bytes, uint64_t *events, double *cpu_s,
			double *other)
{
	raw_job jobs[BENCH_CPUS];
	pthread_t tids[BENCH_CPUS];
	bool started[BENCH_CPUS];
	size_t subbuf = (size_t)getpagesize();
	load_mark l0 = load_now();
	double t0 = now_s();
	for (unsigned c = 0; c < cpus; c++) {
		jobs[c] = (raw_job){.name = name, .cpu = c, .subbuf = subbuf, .fd = -1};
		if (!(started[c] = !pthread_create(&tids[c], NULL, raw_drain_cpu, &jobs[c])))
			jobs[c].err = EAGAIN;
	}
	for (unsigned c = 0; c < cpus; c++)
		if (started[c])
			pthread_join(tids[c], NULL);
	double wall = now_s() - t0;
	*other = other_load(l0, load_now());
	*bytes = *events = 0;
	*cpu_s = 0;
	for (unsigned c = 0; c < cpus; c++) {
		raw_job *j = &jobs[c];
		if (j->err) {
			fprintf(stderr, "bench: the raw drain of %s CPU %u failed: %s\n", name, c, strerror(j->err));
			wall = -1;
		}
		/* Counted after the clock stopped, with libtraceevent's kbuffer: an
		 * independent check of the engine's own count. */
		void *m = j->bytes ? mmap(NULL, j->bytes, PROT_READ, MAP_SHARED, j->fd, 0) : NULL;
		if (m && m != MAP_FAILED) {
			*events += hs_dat_count_events(m, j->bytes, subbuf);
			munmap(m, j->bytes);
		}
		*bytes += j->bytes;
		*cpu_s += j->cpu_s;
		if (j->fd >= 0)
			close(j->fd);
	}
	return wall;
}

/* Events of a trace.dat per buffer: `in` counts those of buffer `buffer`
 * ("" the top one), `other` the rest. False when the project's reader cannot
 * read it or found damage. */
typedef struct {
	const char *buffer;
	uint64_t in, other;
} buffer_count;

static int count_buffer(const hs_tracedat_record *r, void *ctx)
{
	buffer_count *bc = ctx;
	if (!strcmp(r->buffer, bc->buffer))
		bc->in++;
	else
		bc->other++;
	return 0;
}

static bool dat_count(const char *path, buffer_count *bc)
{
	hs_tracedat *td = NULL;
	bc->in = bc->other = 0;
	hs_status st = hs_tracedat_open_ex(path, false, &td);
	if (st == HS_OK)
		st = hs_tracedat_foreach(td, count_buffer, bc);
	size_t problems = td ? hs_tracedat_problem_count(td) : 0;
	for (size_t i = 0; i < problems && i < 3; i++) {
		const hs_problem *p = hs_tracedat_problem_at(td, i);
		fprintf(stderr, "bench: %s: %s\n", path, p ? p->message : "a problem");
	}
	hs_tracedat_close(td);
	return st == HS_OK && !problems;
}

/* `key X s` in the backend's "wrote" line. */
static double log_number(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	return p ? atof(p + strlen(key)) : -1;
}

static int bench_snapshot(const hs_plan *plan, size_t si, double fill_s, bool tcmd_normal)
{
	int rc = 1;
	one_session eng, rawa, rawb, tcmd;
	one_session_init(&eng, plan, si, "snap_engine");
	one_session_init(&rawa, plan, si, "snap_raw_a");
	one_session_init(&rawb, plan, si, "snap_raw_b");
	one_session_init(&tcmd, plan, si, "snap_tracecmd");
	enum { ENG, RAWA, RAWB, TCMD, NRINGS };
	const one_session *rings[NRINGS] = {&eng, &rawa, &rawb, &tcmd};
	const char *what[NRINGS] = {"engine", "raw drain A", "raw drain B", "trace-cmd"};
	hs_backend *be = NULL, *bra = NULL, *brb = NULL, *bt = NULL;
	unsigned cpus = plan->sessions[si].linux_.cpus;
	char engine_out[8192], tcmd_out[8192], load_log[8192];
	snprintf(engine_out, sizeof(engine_out), "%s/snap.dat", g_dir);
	snprintf(tcmd_out, sizeof(tcmd_out), "%s/extract.dat", g_dir);
	snprintf(load_log, sizeof(load_log), "%s/load.log", g_dir);
	if (cpus > BENCH_CPUS) {
		fprintf(stderr, "bench: %u CPUs; this bench handles %d\n", cpus, BENCH_CPUS);
		return 1;
	}

	/* Four copies of the ring record the same load at the same time:
	 * identical in size, events and history. The bench drains two raw, the
	 * baseline, one before and one after the engine snapshots the third
	 * (their mean cancels a load on the machine that grows or fades during
	 * the measures); trace-cmd extracts the fourth. The load starts before
	 * the backends: the engine leaves its own process and every child it
	 * forks later out of its instances (set_event_notrace_pid with
	 * event-fork), and this process is the engine here. */
	/* The load's own bound, only for a bench that dies without stopping it: the bench stops it once the rings
	 * wrapped. Sizing four rings under this load took 1-62 s each here (the kernel allocates the pages while
	 * the load runs), and a bound of fill_s + 60 from the load's start ended it before the last ring filled. */
	char secs[32];
	snprintf(secs, sizeof(secs), "%.0fs", fill_s + 600);
	bool stress = have_stress_ng();
	int fds[2] = {-1, -1};
	pid_t load = -1;
	double t_load = now_s();
	if (stress) {
		/* Two of each, so both CPUs' rings fill (one of each left CPU 1's ring
		 * half empty after 60 s here). Its temporary files go to our
		 * directory, its output to a log shown if it fails. */
		char *argv[] = {"stress-ng", "--switch", "2", "--fork", "2", "-t", secs, "--temp-path", g_dir, NULL};
		printf("snapshot: filling four %" PRIu64 " MB rings (%s, %s, %s, %s) under stress-ng --switch 2 --fork 2 "
		       "until every CPU of each has wrapped (at most %.0f s)\n",
		       (uint64_t)plan->sessions[si].session->ring_mb, eng.name, rawa.name, rawb.name, tcmd.name, fill_s);
		fflush(stdout);
		load = spawn_group(argv, load_log);
	} else {
		if (pipe(fds))
			goto out;
		printf("snapshot: stress-ng not found (apt-get install -y stress-ng); filling under a fork/exec loop "
		       "(at most %.0f s)\n",
		       fill_s);
		fflush(stdout);
		load = start_exec_loop(cpus, fill_s + 600, 0, fds[1]);
		close(fds[1]);
		fds[1] = -1;
	}
	if (load < 0) {
		fprintf(stderr, "bench: cannot start the load: %s\n", strerror(errno));
		goto out;
	}
	/* A load that dies at once (a stress-ng that cannot run here) is caught
	 * before four rings are sized for nothing. */
	nap(0.3);
	int ws = 0;
	if (waitpid(load, &ws, WNOHANG) == load) {
		char why[64];
		describe_status(ws, why, sizeof(why));
		fprintf(stderr, "bench: INVALID: the load ended at once (%s)\n", why);
		g_load_pgid = 0;
		if (stress)
			print_log_tail(load_log);
		goto out;
	}
	if (!(be = start(&eng)) || !(bra = start(&rawa)) || !(brb = start(&rawb)) || !(bt = start(&tcmd)))
		goto out;

	/* Watched until every CPU of every ring has wrapped: a snapshot of a full
	 * ring is what the engine does on Ctrl+C, and a half-empty one is cheaper. */
	uint64_t entries[NRINGS][BENCH_CPUS], overrun[NRINGS][BENCH_CPUS];
	double t_rings = now_s(), deadline = t_rings + fill_s;
	bool full = false;
	const char *why_not = NULL;
	while (!g_stop && !full) {
		full = true;
		for (int r = 0; r < NRINGS; r++) {
			if (!ring_stats(rings[r]->name, cpus, entries[r], overrun[r])) {
				why_not = "a ring's stats cannot be read";
				break;
			}
			for (unsigned c = 0; c < cpus; c++)
				full = full && overrun[r][c] > 0;
		}
		if (why_not || full)
			break;
		if (waitpid(load, &ws, WNOHANG) != 0) {
			why_not = "the load ended";
			break;
		}
		if (now_s() > deadline) {
			why_not = "--fill-sec passed";
			break;
		}
		nap(0.2);
	}
	double t_stop = now_s();
	stop_load();
	/* Frozen all at once, right after the load: the rings hold the same stretch. */
	for (int r = 0; r < NRINGS; r++) {
		struct tracefs_instance *ti = tracefs_instance_alloc(NULL, rings[r]->name);
		if (ti) {
			tracefs_trace_off(ti);
			tracefs_instance_free(ti);
		}
	}
	if (!stress) {
		finish_exec_loop(load, fds[0]);
		close(fds[0]);
		fds[0] = -1;
	}
	if (g_stop)
		goto out;
	bool stats_ok = true;
	for (int r = 0; r < NRINGS; r++)
		stats_ok = stats_ok && ring_stats(rings[r]->name, cpus, entries[r], overrun[r]);
	printf("snapshot: load ran %.1f s (the rings recorded for %.1f s of it)\n", t_stop - t_load, t_stop - t_rings);
	uint64_t ring_entries[NRINGS] = {0};
	bool valid = stats_ok && !why_not;
	for (int r = 0; r < NRINGS && stats_ok; r++)
		for (unsigned c = 0; c < cpus; c++) {
			ring_entries[r] += entries[r][c];
			if (!overrun[r][c] || !entries[r][c]) {
				printf("  %s ring CPU %u: entries %" PRIu64 ", overrun %" PRIu64 ": NOT full\n", what[r], c,
				       entries[r][c], overrun[r][c]);
				valid = false;
			}
		}
	if (!valid) {
		char st[64] = "";
		if (why_not && !strcmp(why_not, "the load ended"))
			describe_status(ws, st, sizeof(st));
		fprintf(stderr,
			"bench: INVALID: not every CPU of the four rings wrapped (%s%s%s): no comparison. %s\n",
			why_not ? why_not : "the stats say so", st[0] ? ", " : "", st,
			why_not && !strcmp(why_not, "--fill-sec passed") ? "Raise --fill-sec or stop other tracing."
									 : "");
		if (stress && why_not && !strcmp(why_not, "the load ended"))
			print_log_tail(load_log);
		goto out;
	}
	for (int r = 0; r < NRINGS; r++) {
		uint64_t least = UINT64_MAX;
		for (unsigned c = 0; c < cpus; c++)
			least = overrun[r][c] < least ? overrun[r][c] : least;
		printf("  %-11s ring: %" PRIu64 " events, every CPU wrapped (overrun at least %" PRIu64 " per CPU)\n",
		       what[r], ring_entries[r], least);
	}

	/* 1. The baseline, first half: a raw drain. */
	uint64_t raw_bytes[2], raw_events[2];
	double raw_cpu[2], t_raw[2], other[4];
	if ((t_raw[0] = raw_drain(rawa.name, cpus, &raw_bytes[0], &raw_events[0], &raw_cpu[0], &other[0])) < 0)
		goto out;

	/* 2. The engine's snapshot, final (as on Ctrl+C); its CPU is every
	 * thread of this process while it runs (the backend's threads). */
	load_mark l0 = load_now();
	double c0 = cpu_s(RUSAGE_SELF), t0 = now_s();
	hs_status st = hs_backend_ftrace.snapshot(be, 0, engine_out, true);
	double t_engine = now_s() - t0, engine_cpu = cpu_s(RUSAGE_SELF) - c0;
	other[1] = other_load(l0, load_now());

	/* 3. The baseline, second half. */
	if ((t_raw[1] = raw_drain(rawb.name, cpus, &raw_bytes[1], &raw_events[1], &raw_cpu[1], &other[2])) < 0)
		goto out;
	if (st != HS_OK) {
		fprintf(stderr, "bench: the backend's snapshot failed (%s)\n", hs_strerror(st));
		goto out;
	}
	const hs_session_status *es;
	hs_backend_ftrace.session_status(be, 0, &es);
	/* The backend's own line splits its time. */
	char line[2048] = "";
	if (g_log != stderr) {
		char l[2048];
		fflush(g_log);
		rewind(g_log);
		while (fgets(l, sizeof(l), g_log))
			if (strstr(l, " wrote "))
				snprintf(line, sizeof(line), "%s", l);
		fseek(g_log, 0, SEEK_END);
	}

	/* 4. trace-cmd extract, a process of its own. */
	char *argv[] = {"trace-cmd", "extract", "-B", tcmd.name, "-o", tcmd_out, NULL};
	l0 = load_now();
	t0 = now_s();
	pid_t p = spawn_group_prio(argv, NULL, !tcmd_normal);
	ws = 0;
	while (p > 0 && waitpid(p, &ws, 0) < 0 && errno == EINTR)
		;
	g_load_pgid = 0;
	double t_tcmd = now_s() - t0;
	other[3] = other_load(l0, load_now());
	if (p < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws)) {
		char why[64];
		describe_status(ws, why, sizeof(why));
		fprintf(stderr, "bench: trace-cmd extract -B %s failed (%s)\n", tcmd.name, why);
		goto out;
	}

	/* Valid only when each side holds exactly what its ring held. */
	buffer_count ec = {.buffer = ""}, tc = {.buffer = tcmd.name};
	bool e_read = dat_count(engine_out, &ec), t_read = dat_count(tcmd_out, &tc);
	uint64_t e_size = file_size(engine_out), t_size = file_size(tcmd_out);
	printf("snapshot: ring %" PRIu64 " KB per CPU x %u CPUs, %zu events/systems enabled\n", es->real_per_cpu_kb,
	       es->cpus, es->events_enabled);
	double t_base = (t_raw[0] + t_raw[1]) / 2, cpu_base = (raw_cpu[0] + raw_cpu[1]) / 2;
	printf("  raw drain:          %.3f s (CPU %.3f s), the mean of A %.3f s (CPU %.3f s) before the engine and B %.3f s "
	       "(CPU %.3f s) after it: libtracefs's tracefs_cpu_flush per sub-buffer into memory, one thread per CPU at "
	       "nice 19 and best-effort I/O 7; %.1f MB, %" PRIu64 " events (ring: %" PRIu64 ")\n",
	       t_base, cpu_base, t_raw[0], raw_cpu[0], t_raw[1], raw_cpu[1], (double)raw_bytes[0] / 1048576.0,
	       raw_events[0], ring_entries[RAWA]);
	printf("  engine snapshot:    %.3f s (CPU %.3f s): %.1f MB raw -> snap.dat %.1f MB, %" PRIu64 " events read back "
	       "(ring: %" PRIu64 "); its drain and compression %.3f s, write %.3f s (%s headers, sync %.3f s); CPU "
	       "reading %.3f s, compression %.3f s\n",
	       t_engine, engine_cpu, (double)es->snapshot_raw_bytes / 1048576.0, (double)e_size / 1048576.0,
	       ec.in + ec.other,
	       ring_entries[ENG], log_number(line, "drain "), log_number(line, "write "),
	       strstr(line, "(prepared headers") ? "prepared" : "written-now", log_number(line, "sync "),
	       log_number(line, "CPU: reading "), log_number(line, "compression "));
	printf("  trace-cmd extract:  %.3f s (%s; its process, drain, compression and file): extract.dat %.1f MB, %" PRIu64
	       " events of its buffer read back (ring: %" PRIu64 ")%s\n",
	       t_tcmd, tcmd_normal ? "nice 0" : "nice 19 and best-effort I/O 7, as the engine's threads", (double)t_size / 1048576.0,
	       tc.in, ring_entries[TCMD], tc.other ? " and events of other buffers" : "");
	printf("  other load (CPUs busy with neither side, %% of all): raw drain A %.0f%%, engine %.0f%%, raw drain B "
	       "%.0f%%, trace-cmd %.0f%%\n",
	       other[0], other[1], other[2], other[3]);
	const char *invalid = NULL;
	if (!e_read || !t_read)
		invalid = "a file the project's reader cannot read cleanly";
	else if (raw_events[0] != ring_entries[RAWA] || raw_events[1] != ring_entries[RAWB])
		invalid = "a raw drain did not hold its ring's events";
	else if (ec.in + ec.other != ring_entries[ENG] || es->snapshot_events != ring_entries[ENG])
		invalid = "snap.dat does not hold its ring's events";
	else if (tc.in != ring_entries[TCMD])
		invalid = "extract.dat does not hold its ring's events";
	else if (!ring_entries[ENG] || !ring_entries[RAWA] || !ring_entries[RAWB] || !ring_entries[TCMD])
		invalid = "a ring held no events";
	if (invalid) {
		fprintf(stderr, "bench: INVALID: %s: no comparison\n", invalid);
		goto out;
	}
	/* The rings held the same load, not the same event count to the event:
	 * sizes are compared per event too. */
	double e_per = (double)e_size / (double)ring_entries[ENG], t_per = (double)t_size / (double)tc.in;
	double r_drain = t_engine / t_base, r_tcmd = t_engine / t_tcmd, r_size = e_per / t_per;
	printf("  engine / raw drain: %.2fx (target <= 1.5: %s); CPU %.2fx\n", r_drain, r_drain <= 1.5 ? "met" : "MISSED",
	       engine_cpu / cpu_base);
	printf("  engine / trace-cmd: time %.2fx (target <= 1: %s); size %.2fx per event, %.1f against %.1f MB (target <= 1: "
	       "%s)\n",
	       r_tcmd, r_tcmd <= 1.0 ? "met" : "MISSED", r_size, (double)e_size / 1048576.0, (double)t_size / 1048576.0,
	       r_size <= 1.0 ? "met" : "MISSED");
	rc = 0;
out:
	stop_load();
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	hs_backend_ftrace.free(bt);
	hs_backend_ftrace.free(brb);
	hs_backend_ftrace.free(bra);
	hs_backend_ftrace.free(be);
	if (!g_keep) {
		unlink(engine_out);
		unlink(tcmd_out);
	}
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
	hs_backend_ftrace.set_observer(b, count_event, &observed);
	double c0 = cpu_s(RUSAGE_SELF), t0 = now_s();
	/* The engine's own loop: record.c polls at HS_LINUX_STREAM_WAKE_MS. */
	bool ok = true;
	while (!g_stop && waitpid(p, NULL, WNOHANG) == 0)
		if (hs_backend_ftrace.poll(b, 50) != HS_OK)
			ok = false;
	double wall = now_s() - t0, swall = now_s() - ts0;
	uint64_t execs = finish_exec_loop(p, fds[0]);
	/* The fork+execs of the recorded stretch, assuming an even storm. */
	double rec_execs = (double)execs * wall / swall;
	double kids = cpu_s(RUSAGE_CHILDREN) - kids0;
	/* Whatever the ring still holds, as the engine's next wake-up would. */
	if (hs_backend_ftrace.poll(b, 0) != HS_OK)
		ok = false;
	double engine = cpu_s(RUSAGE_SELF) - c0;
	double t_stop = now_s();
	if (hs_backend_ftrace.stop(b) != HS_OK)
		ok = false;
	t_stop = now_s() - t_stop;
	if (g_stop)
		goto out;
	ring_totals t = session_totals(b);
	const hs_session_status *s;
	hs_backend_ftrace.session_status(b, 0, &s);
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", g_dir, plan->sessions[si].session->output);
	uint64_t in_file = dat_events(path);
	/* No rates from a storm that did not run or a session that saw none of it. */
	if (!execs || !observed || wall < 0.5 * secs) {
		fprintf(stderr,
			"bench: INVALID: the storm ran %" PRIu64 " fork+execs and the session streamed %" PRIu64
			" key events in %.1f s of %.0f: no rates\n",
			execs, observed, wall, secs);
		goto out;
	}

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
	hs_backend_ftrace.free(b);
	return g_stop ? 1 : rc;
}

/* ---- 3. the engine's CPU while only a ring records ---- */

static int bench_idle(const hs_plan *plan, size_t si, double secs)
{
	int rc = 1;
	one_session ring;
	one_session_init(&ring, plan, si, "ring");
	hs_backend *b = NULL;
	int fds[2] = {-1, -1};
	pid_t p = -1;
	if (pipe(fds))
		goto out;
	printf("ring only: session %s (%" PRIu64 " MB), light load (one fork+exec every 100 ms) for %.0f s\n",
	       ring.name, (uint64_t)plan->sessions[si].session->ring_mb, secs);
	fflush(stdout);
	/* Baseline, same thread, before anything runs: a bare 50 ms sleep loop,
	 * the floor any loop that wakes 20 times a second pays on this machine.
	 * Both sides count this thread's CPU only: the engine loop is this
	 * thread, and the backend's start-up work (the first snapshot's headers,
	 * in a thread of its own) is not the steady state measured here. */
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
	/* The load starts before the ring, so the ring records it (the backend
	 * leaves what this process forks later out), and lasts the measure plus
	 * the ring's start. */
	p = start_exec_loop(1, secs + 5, 100, fds[1]);
	close(fds[1]);
	fds[1] = -1;
	if (p < 0 || !(b = start(&ring)))
		goto out;
	cpu_split(&u0, &s0);
	t0 = now_s();
	unsigned polls = 0;
	/* The engine's loop as record.c runs a plan of rings only: asleep until
	 * the next stats line (30 s in stutter.yaml, longer than this run) or a
	 * signal; so here one sleep for the length of the measure. */
	while (!g_stop && now_s() - t0 < secs) {
		double left = secs - (now_s() - t0);
		hs_backend_ftrace.poll(b, left > 0.05 ? (int)(left * 1000) : 50);
		polls++;
	}
	double wall = now_s() - t0;
	cpu_split(&u1, &s1);
	ring_totals t = session_totals(b);
	uint64_t forks = finish_exec_loop(p, fds[0]);
	p = -1;
	if (g_stop)
		goto out;
	/* The comparison holds only if the light load ran and the ring recorded. */
	if (!forks || !t.entries || !bare) {
		fprintf(stderr,
			"bench: INVALID: the light load ran %" PRIu64 " fork+execs, the ring holds %" PRIu64
			" events, the baseline woke %u times: no ratio\n",
			forks, t.entries, bare);
		goto out;
	}
	double ms = (u1 - u0 + s1 - s0) * 1e3;
	printf("  baseline (bare 50 ms sleep loop, no load): user %.1f ms + sys %.1f ms = %.1f ms in %.1f s = %.3f%% "
	       "of one CPU (%u wake-ups, %.0f us each)\n",
	       (u1 - u0) * 1e3, (s1 - s0) * 1e3, bms, bwall, bms / 10.0 / bwall, bare, bare ? bms * 1e3 / bare : 0.0);
	printf("  ring holds %" PRIu64 " events (%.0f events/s); the light load ran %" PRIu64 " fork+execs\n", t.entries,
	       (double)t.entries / wall, forks);
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
	hs_backend_ftrace.free(b);
	return g_stop ? 1 : rc;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fputs("usage: bench_linux_backend [--rules FILE] [--fill-sec N] [--storm-sec N] [--storm-procs N]\n"
	      "                           [--idle-sec N] [--only snapshot|stream|idle] [--dir DIR] [--keep]\n"
	      "                           [--tracecmd-normal] [-v]\n"
	      "  --keep: leave the run directory (snap.dat, extract.dat, the load's log) for a look\n"
	      "  --tracecmd-normal: run trace-cmd extract at nice 0 (default: at the snapshot threads' nice 19)\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *rules = HS_BENCH_RULES_DIR "/stutter.yaml", *only = NULL, *dir = NULL;
	double fill_s = 60, storm_s = 10, idle_s = 10;
	unsigned procs = 2;
	bool verbose = false, tcmd_normal = false;
	static const struct option lo[] = {{"rules", 1, 0, 'r'},	  {"fill-sec", 1, 0, 'f'},
					   {"keep", 0, 0, 'k'},		  {"tracecmd-normal", 0, 0, 'n'},
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
		case 'k': g_keep = true; break;
		case 'n': tcmd_normal = true; break;
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
	g_verbose = verbose;
	g_log = tmpfile();
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
		rc |= bench_snapshot(plan, ring_i, fill_s, tcmd_normal);
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
