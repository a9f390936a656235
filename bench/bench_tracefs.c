/* bench/bench_tracefs.c: helpers shared by the tracefs benches (see bench_tracefs.h); the same clean-up rules as bench_linux_backend. */
#include "bench_tracefs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

volatile sig_atomic_t g_stop;
char g_dir[4096];
char g_prefix[64];
pid_t g_load_pgid;
FILE *g_log;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double bench_cpu_s(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

void bench_nap(double s)
{
	double end = bench_now_s() + s;
	while (!g_stop && bench_now_s() < end) {
		struct timespec ts = {0, 20 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/* ---- clean-up ---- */

void bench_stop_load(void)
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
			long pid = strtol(*n + strlen(BENCH_PREFIX), NULL, 10);
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

/* Deletes the run directory with one level of subdirectories (the backend's chunk folders). */
static void remove_tree(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		char p[8192];
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			struct stat sb;
			if (depth > 0 && !lstat(p, &sb) && S_ISDIR(sb.st_mode))
				remove_tree(p, depth - 1);
			else
				unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

void bench_cleanup(void)
{
	char re[96];
	bench_stop_load();
	if (g_prefix[0]) {
		snprintf(re, sizeof(re), "^%s", g_prefix);
		sweep_instances(re, false);
	}
	if (g_dir[0])
		remove_tree(g_dir, 1);
	g_dir[0] = 0;
}

void bench_dump_log(void)
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

int bench_setup(const char *dir, bool verbose)
{
	snprintf(g_prefix, sizeof(g_prefix), BENCH_PREFIX "%d_", (int)getpid());
	snprintf(g_dir, sizeof(g_dir), "%s/hindsight-bench-XXXXXX",
		 dir ? dir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_dir)) {
		fprintf(stderr, "bench: cannot create a directory under %s: %s\n", dir ? dir : "TMPDIR", strerror(errno));
		g_dir[0] = 0;
		return 1;
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
		sweep_instances("^" BENCH_PREFIX "[0-9]+_", true);
	return 0;
}

/* ---- load generators (each in its own process group, killed by id) ---- */

void bench_child_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

pid_t bench_spawn_group_log(char *const argv[], const char *log)
{
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		bench_child_signals();
		int fd = open(log ? log : "/dev/null", log ? O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC : O_WRONLY, 0600);
		if (fd >= 0) {
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

pid_t bench_spawn_group(char *const argv[], bool quiet)
{
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		bench_child_signals();
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

bool bench_load_ended(char *why, size_t len)
{
	int ws = 0;
	pid_t r = g_load_pgid > 0 ? waitpid(g_load_pgid, &ws, WNOHANG) : -1;
	if (r == 0)
		return false;
	if (r < 0)
		snprintf(why, len, "no load is running");
	else if (WIFEXITED(ws))
		snprintf(why, len, "the load ended with exit status %d", WEXITSTATUS(ws));
	else if (WIFSIGNALED(ws))
		snprintf(why, len, "the load was killed by signal %d", WTERMSIG(ws));
	else
		snprintf(why, len, "the load ended (status 0x%x)", ws);
	return true;
}

void bench_print_tail(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char buf[4096];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	if (n == sizeof(buf) - 1 && !fseek(f, -(long)(sizeof(buf) - 1), SEEK_END))
		n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	fprintf(stderr, "bench: %s:\n%s%s", path, buf, n && buf[n - 1] != '\n' ? "\n" : "");
}

bool bench_have_stress_ng(void)
{
	return !system("command -v stress-ng >/dev/null 2>&1");
}

bool bench_ring_wrapped(const char *name, unsigned cpus)
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

/* ---- plans under bench-only names ---- */

void bench_plan_init(bench_plan *o, const hs_plan *plan, const size_t *idx, size_t n, const char *tag)
{
	memset(o, 0, sizeof(*o));
	if (n > BENCH_MAX_SESSIONS)
		n = BENCH_MAX_SESSIONS;
	for (size_t k = 0; k < n; k++) {
		o->session[k] = *plan->sessions[idx[k]].session;
		snprintf(o->name[k], sizeof(o->name[k]), "%s%s_%s", g_prefix, tag, o->session[k].name);
		o->session[k].logger_name = o->name[k];
		o->ps[k] = plan->sessions[idx[k]];
		o->ps[k].session = &o->session[k];
	}
	o->plan = *plan;
	o->plan.sessions = o->ps;
	o->plan.n_sessions = n;
	/* The rules' triggers name sessions by their index in the whole plan,
	 * which means other sessions (or none) in this subset: no triggers here. */
	o->plan.triggers = NULL;
	o->plan.n_triggers = 0;
}

size_t bench_find_session(const hs_plan *plan, hs_session_mode mode)
{
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == mode)
			return i;
	return SIZE_MAX;
}

hs_backend *bench_backend_start(const bench_plan *o)
{
	hs_backend *b = NULL;
	/* The backend's messages as the engine prints them, into the log; static:
	 * the backend borrows the sink until it is freed. */
	static hs_msg_file sink;
	static hs_msg msg = {.fn = hs_msg_file_fn, .ctx = &sink};
	sink = (hs_msg_file){.f = g_log, .prefix = "engine"};
	hs_backend_opts opts = {.msg = &msg, .interrupts = NULL};
	if (hs_backend_ftrace.start(&o->plan, g_dir, &opts, &b) != HS_OK) {
		fprintf(stderr, "bench: cannot start the sessions (%s...)\n", o->name[0]);
		return NULL;
	}
	return b;
}

bool bench_load_plan(const char *rules, hs_diags **d, hs_ruleset **rs, hs_plan **plan)
{
	*d = hs_diags_new();
	if (!*d || hs_rules_load(rules, *d, rs) != HS_OK || hs_plan_build(*rs, HS_PLATFORM_LINUX, NULL, plan) != HS_OK) {
		fprintf(stderr, "bench: cannot load %s or build its Linux plan (check it with rulecheck)\n", rules);
		return false;
	}
	return true;
}
