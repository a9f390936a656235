/* bench/report_speed.c: times a report (the library's hs_report_build + the three files) of a trace or snapshot against `trace-cmd report` of the same trace, in the same run. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hindsight/report.h"

#ifndef HS_BENCH_BUILD_TYPE
#define HS_BENCH_BUILD_TYPE ""
#endif
#ifndef HS_BENCH_RULES
#define HS_BENCH_RULES ""
#endif

/* The targets for a full 256 MB ring (about 5 M events) on this 2-CPU machine (docs/report.md "Speed"). */
#define TARGET_S 3.0
#define TARGET_RSS_MB 200.0

extern char **environ;

/*
 * Each measure runs in a child process of its own, so its peak RSS (from
 * wait4) is its own; the child sends its wall time back through a pipe. The
 * rounds interleave the measures, so load from other processes on this shared
 * machine hits them alike; the best wall time of each is reported, with the
 * largest peak RSS. The input is read once first, so every measure reads it
 * from the page cache.
 */

typedef struct {
	double seconds;
	int ok;
	char verdict[160];
} child_result;

typedef struct {
	const char *name;
	int (*run)(const char *input, const char *trace, const char *out, child_result *res);
	double best;
	long max_rss_kb;
	bool failed;
	char verdict[160];
} measure;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* `trace-cmd report TRACE > /dev/null`: what a person runs today to read the ring. */
static int run_trace_cmd(const char *input, const char *trace, const char *out, child_result *res)
{
	(void)input, (void)out;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[] = {"trace-cmd", "report", (char *)trace, NULL};
	double t0 = now();
	pid_t pid;
	int rc = posix_spawnp(&pid, "trace-cmd", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	res->seconds = now() - t0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The report: build (every file read, the thread's second pass), render and write report.txt, report.json and
 * report.html, as `analyze report` and the engine's capture-time report do. */
static int run_report(const char *input, const char *trace, const char *out, child_result *res)
{
	(void)trace;
	hs_report_opts o = {.input = input, .default_rules = HS_BENCH_RULES[0] ? HS_BENCH_RULES : NULL, .outdir = out,
			    .own_files = true};
	double t0 = now();
	hs_report *r = NULL;
	hs_status st = hs_report_build(&o, &r);
	if (st == HS_OK)
		st = hs_report_write(r);
	res->seconds = now() - t0;
	if (r)
		snprintf(res->verdict, sizeof res->verdict, "%s", hs_report_verdict(r, 0));
	hs_report_free(r);
	return st == HS_OK ? 0 : -1;
}

static int run_child(measure *m, const char *input, const char *trace, const char *out)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[0]);
		child_result res = {0};
		res.ok = m->run(input, trace, out, &res) == 0;
		struct rusage ru;
		long kids = getrusage(RUSAGE_CHILDREN, &ru) == 0 ? ru.ru_maxrss : 0;
		ssize_t w1 = write(fds[1], &res, sizeof res);
		ssize_t w2 = write(fds[1], &kids, sizeof kids);
		_exit(w1 == (ssize_t)sizeof res && w2 == (ssize_t)sizeof kids ? 0 : 1);
	}
	close(fds[1]);
	child_result res = {0};
	long kids = 0;
	bool got = read(fds[0], &res, sizeof res) == (ssize_t)sizeof res &&
		   read(fds[0], &kids, sizeof kids) == (ssize_t)sizeof kids;
	close(fds[0]);
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return -1;
	if (!got || !res.ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		m->failed = true;
		return -1;
	}
	long rss = ru.ru_maxrss > kids ? ru.ru_maxrss : kids;
	if (m->best == 0 || res.seconds < m->best)
		m->best = res.seconds;
	if (rss > m->max_rss_kb)
		m->max_rss_kb = rss;
	snprintf(m->verdict, sizeof m->verdict, "%s", res.verdict);
	return 0;
}

/* The trace trace-cmd reads: INPUT itself, or the largest trace.dat in a snapshot or run folder (the ring). */
static bool pick_trace(const char *input, char *trace, size_t cap, off_t *size)
{
	struct stat st;
	if (stat(input, &st) != 0)
		return false;
	if (S_ISREG(st.st_mode)) {
		snprintf(trace, cap, "%s", input);
		*size = st.st_size;
		return true;
	}
	static const char *const names[] = {"snap.dat", "keyevents.dat"};
	*size = -1;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char p[4096];
		snprintf(p, sizeof p, "%s/%s", input, names[i]);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > *size) {
			snprintf(trace, cap, "%s", p);
			*size = st.st_size;
		}
	}
	return *size >= 0;
}

static void warm(const char *path)
{
	int fd = open(path, O_RDONLY);
	char buf[1 << 16];
	while (fd >= 0 && read(fd, buf, sizeof buf) > 0)
		;
	if (fd >= 0)
		close(fd);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_report_speed [--runs N] [--no-trace-cmd] INPUT\n"
		   "  INPUT           a trace.dat, or a snapshot or run folder (trace-cmd reads its snap.dat);\n"
		   "                  bench/report_ring.sh (root) records a full stutter.yaml ring with a crash\n"
		   "  --runs N        timed rounds; the best time of each measure is reported (default 3)\n"
		   "  --no-trace-cmd  skip `trace-cmd report` (it takes seconds per million events)\n");
}

int main(int argc, char **argv)
{
	int runs = 3;
	bool trace_cmd = true;
	const char *input = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
			if (runs < 1 || runs > 100) {
				usage(stderr);
				return 2;
			}
		} else if (strcmp(argv[i], "--no-trace-cmd") == 0) {
			trace_cmd = false;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] != '-' && !input) {
			input = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!input) {
		usage(stderr);
		return 2;
	}
	char trace[4096];
	off_t size;
	if (!pick_trace(input, trace, sizeof trace, &size)) {
		fprintf(stderr, "bench_report_speed: %s: no trace.dat there\n", input);
		return 1;
	}
	char out[] = "/tmp/hs-bench-report-XXXXXX";
	if (!mkdtemp(out)) {
		fprintf(stderr, "bench_report_speed: cannot make a scratch folder: %s\n", strerror(errno));
		return 1;
	}
	warm(trace);
	if (strcmp(trace, input) != 0)
		warm(input); /* the folder's other files */
	printf("bench_report_speed (%s build): %s (trace-cmd reads %s, %.1f MB)\n", HS_BENCH_BUILD_TYPE, input, trace,
	       (double)size / (1024.0 * 1024.0));
	measure ms[] = {
		{.name = "trace-cmd report > /dev/null", .run = run_trace_cmd},
		{.name = "report (build + 3 files)", .run = run_report},
	};
	for (int r = 0; r < runs; r++)
		for (size_t i = trace_cmd ? 0 : 1; i < sizeof ms / sizeof ms[0]; i++)
			if (!ms[i].failed)
				run_child(&ms[i], input, trace, out);
	int rc = 0;
	const measure *base = trace_cmd ? &ms[0] : NULL;
	for (size_t i = trace_cmd ? 0 : 1; i < sizeof ms / sizeof ms[0]; i++) {
		const measure *m = &ms[i];
		if (m->failed) {
			printf("%-30s FAILED\n", m->name);
			rc = 1;
			continue;
		}
		printf("%-30s %7.3f s  %6.1f MB peak RSS", m->name, m->best, (double)m->max_rss_kb / 1024.0);
		if (base && m != base && !base->failed && base->best > 0)
			printf("  %.2fx trace-cmd's time", m->best / base->best);
		if (m == &ms[1]) {
			bool over = m->best > TARGET_S || (double)m->max_rss_kb / 1024.0 > TARGET_RSS_MB;
			printf("  (target <= %.0f s, <= %.0f MB%s)", TARGET_S, TARGET_RSS_MB, over ? ": OVER" : "");
		}
		putchar('\n');
	}
	if (!ms[1].failed)
		printf("verdict: %s\n", ms[1].verdict);
	/* the scratch folder's three reports */
	static const char *const files[] = {"report.txt", "report.json", "report.html"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char p[4200];
		snprintf(p, sizeof p, "%s/%s", out, files[i]);
		unlink(p);
	}
	rmdir(out);
	return rc;
}
