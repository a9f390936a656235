/* bench/tracedat_read.c: times the trace.dat reader's walk against libtracecmd's own iteration of the same file. */
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

#include <trace-cmd/trace-cmd.h>

#include "hindsight/tracedat.h"

#ifndef HS_BENCH_BUILD_TYPE
#define HS_BENCH_BUILD_TYPE ""
#endif

extern char **environ;

/*
 * Each measure runs in a child process of its own, so its peak RSS (from
 * wait4) is its own and not the largest of all before it; the child sends its
 * wall time and record count back through a pipe. The rounds interleave the
 * measures, so load from other processes on this shared machine hits them
 * alike; the best wall time of each is reported, with the largest peak RSS.
 */

typedef struct {
	double seconds;
	uint64_t records;
	uint64_t problems;
	uint64_t reads, sum; /* the scheduler-field measures: fields read and a digest of their values */
	int ok;
} child_result;

typedef struct {
	const char *name;
	int (*run)(const char *path, child_result *res);
	double best;
	long max_rss_kb;
	uint64_t records;
	uint64_t problems;
	uint64_t reads, sum;
	bool failed;
} measure;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libtracecmd: open (headers, formats, comms) and walk every buffer's records merged by time, as
 * hs_tracedat did before it read the format itself and as `trace-cmd report` does without printing. */
static int count_tracecmd(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *ctx)
{
	(void)h, (void)rec, (void)cpu;
	++*(uint64_t *)ctx;
	return 0;
}

static int run_libtracecmd(const char *path, child_result *res)
{
	double t0 = now();
	struct tracecmd_input *top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!top)
		return -1;
	int n = tracecmd_buffer_instances(top);
	struct tracecmd_input **hs = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof(*hs));
	if (!hs)
		return -1;
	int nh = 0;
	hs[nh++] = top;
	for (int i = 0; i < n; i++) {
		struct tracecmd_input *h = tracecmd_buffer_instance_handle(top, i);
		if (h)
			hs[nh++] = h;
	}
	uint64_t count = 0;
	tracecmd_iterate_events_multi(hs, nh, count_tracecmd, &count);
	res->seconds = now() - t0;
	res->records = count;
	for (int i = nh; i-- > 1;)
		tracecmd_close(hs[i]);
	tracecmd_close(top);
	free(hs);
	return 0;
}

static int count_record(const hs_tracedat_record *r, void *ctx)
{
	(void)r;
	++*(uint64_t *)ctx;
	return 0;
}

/* What a consumer like analyze's report reads of every record: the identity,
 * the task, and a field by name (the walk itself is what the report repeats). */
typedef struct {
	uint64_t count, sum;
} fields_ctx;

static int touch_fields(const hs_tracedat_record *r, void *vctx)
{
	fields_ctx *c = vctx;
	c->count++;
	c->sum += (uint64_t)r->pid + (uint64_t)(unsigned char)r->comm[0] + (uint64_t)(unsigned char)r->name[0];
	int64_t v;
	if (r->name[0] == 's' && hs_tracedat_field_int(r, "prev_pid", &v))
		c->sum += (uint64_t)v;
	return 0;
}

static int run_hs(const char *path, child_result *res, bool fields)
{
	double t0 = now();
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open(path, &td);
	if (st != HS_OK) {
		for (size_t i = 0; td && i < hs_tracedat_problem_count(td); i++) {
			char text[HS_PROBLEM_TEXT_MAX];
			fprintf(stderr, "bench_tracedat_read: %s\n",
				hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text));
		}
		hs_tracedat_close(td);
		return -1;
	}
	uint64_t count = 0;
	fields_ctx fc = {0};
	st = fields ? hs_tracedat_foreach(td, touch_fields, &fc) : hs_tracedat_foreach(td, count_record, &count);
	res->seconds = now() - t0;
	res->records = fields ? fc.count : count;
	res->problems = hs_tracedat_problem_count(td);
	hs_tracedat_close(td);
	return st == HS_OK ? 0 : -1;
}

static int run_hs_walk(const char *path, child_result *res)
{
	return run_hs(path, res, false);
}

static int run_hs_fields(const char *path, child_result *res)
{
	return run_hs(path, res, true);
}

/* What the cause analysis reads of every scheduler record (report/cause/model_dat.c): a switch's seven fields, a
 * wake-up's four; by name on every record (hs_tracedat_field_int/_str: a lookup in the event's format each
 * time), or through locations made once per event id. Both find out once per id which of the names its event
 * has, so they read the same fields; the digests of the values must be equal. */
static const char *const sched_names[] = {"prev_pid", "next_pid", "prev_state", "prev_prio", "next_prio",
					  "prev_comm", "next_comm", "pid", "target_cpu", "prio", "comm"};
enum { N_SCHED = sizeof sched_names / sizeof sched_names[0], BENCH_IDS = 65536 };

typedef struct {
	bool located;
	bool *seen;                   /* [BENCH_IDS] */
	hs_tracedat_field_loc *locs;  /* [BENCH_IDS][N_SCHED]; id -1 where the event has no such field */
	uint64_t count, reads, sum;
} sched_ctx;

static int read_sched(const hs_tracedat_record *r, void *vctx)
{
	sched_ctx *c = vctx;
	c->count++;
	if (r->id < 0 || r->id >= BENCH_IDS || r->system[0] != 's' || strcmp(r->system, "sched") != 0)
		return 0;
	hs_tracedat_field_loc *l = &c->locs[(size_t)r->id * N_SCHED];
	if (!c->seen[r->id]) {
		c->seen[r->id] = true;
		for (size_t i = 0; i < N_SCHED; i++)
			hs_tracedat_field_locate(r, sched_names[i], &l[i]);
	}
	for (size_t i = 0; i < N_SCHED; i++) {
		if (l[i].id < 0)
			continue;
		int64_t v;
		char b[32];
		bool ok;
		if (l[i].is_string) {
			ok = c->located ? hs_tracedat_loc_str(r, &l[i], b, sizeof b)
					: hs_tracedat_field_str(r, sched_names[i], b, sizeof b);
			v = ok ? (int64_t)strlen(b) * 256 + (unsigned char)b[0] : 0;
		} else {
			ok = c->located ? hs_tracedat_loc_int(r, &l[i], &v) : hs_tracedat_field_int(r, sched_names[i], &v);
		}
		if (ok) {
			c->reads++;
			c->sum = (c->sum ^ (uint64_t)v) * 1099511628211ull;
		}
	}
	return 0;
}

static int run_sched(const char *path, child_result *res, bool located)
{
	double t0 = now();
	sched_ctx c = {.located = located};
	c.seen = calloc(BENCH_IDS, sizeof *c.seen);
	c.locs = calloc((size_t)BENCH_IDS * N_SCHED, sizeof *c.locs);
	hs_tracedat *td = NULL;
	hs_status st = c.seen && c.locs ? hs_tracedat_open(path, &td) : HS_ENOMEM;
	if (st == HS_OK)
		st = hs_tracedat_foreach(td, read_sched, &c);
	res->seconds = now() - t0;
	res->records = c.count;
	res->reads = c.reads;
	res->sum = c.sum;
	res->problems = td ? hs_tracedat_problem_count(td) : 0;
	hs_tracedat_close(td);
	free(c.seen);
	free(c.locs);
	return st == HS_OK ? 0 : -1;
}

static int run_sched_by_name(const char *path, child_result *res)
{
	return run_sched(path, res, false);
}

static int run_sched_located(const char *path, child_result *res)
{
	return run_sched(path, res, true);
}

/* `trace-cmd report FILE > /dev/null`: the tool's whole job, printing included (opt-in: it is slow). */
static int run_report(const char *path, child_result *res)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[] = {"trace-cmd", "report", (char *)path, NULL};
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

/* Runs one measure in a child; its peak RSS comes from wait4 (trace-cmd's, for the report measure: a
 * grandchild's RSS is in the child's RUSAGE_CHILDREN, which the child sends back). */
static int run_child(measure *m, const char *path)
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
		res.ok = m->run(path, &res) == 0;
		struct rusage ru;
		long kids = getrusage(RUSAGE_CHILDREN, &ru) == 0 ? ru.ru_maxrss : 0;
		long both[2] = {0, kids};
		ssize_t w1 = write(fds[1], &res, sizeof res);
		ssize_t w2 = write(fds[1], both, sizeof both);
		_exit(w1 == (ssize_t)sizeof res && w2 == (ssize_t)sizeof both ? 0 : 1);
	}
	close(fds[1]);
	child_result res = {0};
	long both[2] = {0, 0};
	bool got = read(fds[0], &res, sizeof res) == (ssize_t)sizeof res &&
		   read(fds[0], both, sizeof both) == (ssize_t)sizeof both;
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
	long rss = ru.ru_maxrss > both[1] ? ru.ru_maxrss : both[1];
	if (m->best == 0 || res.seconds < m->best)
		m->best = res.seconds;
	if (rss > m->max_rss_kb)
		m->max_rss_kb = rss;
	m->records = res.records;
	m->problems = res.problems;
	m->reads = res.reads;
	m->sum = res.sum;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_tracedat_read [--runs N] [--trace-cmd-report] FILE.dat\n"
		   "  --runs N             timed rounds; the best time of each measure is reported (default 3)\n"
		   "  --trace-cmd-report   also time `trace-cmd report FILE > /dev/null` (slow: seconds per M events)\n"
		   "  FILE.dat             a trace.dat, e.g. a full-ring snapshot (docs/tracedat-notes.md says how to\n"
		   "                       record one); read from the page cache after a first warming read\n");
}

int main(int argc, char **argv)
{
	int runs = 3;
	bool report = false;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
			if (runs < 1 || runs > 100) {
				usage(stderr);
				return 2;
			}
		} else if (strcmp(argv[i], "--trace-cmd-report") == 0) {
			report = true;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] != '-' && !path) {
			path = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "bench_tracedat_read: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* Warm the page cache: every measure then reads from memory. */
	{
		int fd = open(path, O_RDONLY);
		char buf[1 << 16];
		while (fd >= 0 && read(fd, buf, sizeof buf) > 0)
			;
		if (fd >= 0)
			close(fd);
	}
	printf("bench_tracedat_read (%s build): %s, %.1f MB\n", HS_BENCH_BUILD_TYPE, path,
	       (double)st.st_size / (1024.0 * 1024.0));
	measure ms[] = {
		{.name = "libtracecmd iterate (baseline)", .run = run_libtracecmd},
		{.name = "hs_tracedat walk", .run = run_hs_walk},
		{.name = "hs_tracedat walk + fields", .run = run_hs_fields},
		{.name = "walk + sched fields by name", .run = run_sched_by_name},
		{.name = "walk + sched fields located", .run = run_sched_located},
		{.name = "trace-cmd report > /dev/null", .run = run_report},
	};
	size_t n_ms = sizeof ms / sizeof ms[0] - (report ? 0 : 1);
	for (int r = 0; r < runs; r++)
		for (size_t i = 0; i < n_ms; i++)
			if (!ms[i].failed)
				run_child(&ms[i], path);
	int rc = 0;
	const measure *base = &ms[0];
	for (size_t i = 0; i < n_ms; i++) {
		const measure *m = &ms[i];
		if (m->failed) {
			printf("%-32s FAILED\n", m->name);
			rc = 1;
			continue;
		}
		printf("%-32s %7.3f s  %6.1f MB peak RSS", m->name, m->best, (double)m->max_rss_kb / 1024.0);
		if (m->records)
			printf("  %9llu records  %6.1f M records/s", (unsigned long long)m->records,
			       (double)m->records / m->best / 1e6);
		if (m != base && !base->failed && base->best > 0)
			printf("  %.2fx the baseline's time", m->best / base->best);
		if (m->problems)
			printf("  (%llu problems)", (unsigned long long)m->problems);
		printf("\n");
	}
	/* Every walk of the same file must see the same records. */
	for (size_t i = 1; i < n_ms; i++)
		if (!ms[i].failed && ms[i].records && !base->failed && ms[i].records != base->records) {
			printf("MISMATCH: %s saw %llu records, libtracecmd %llu\n", ms[i].name,
			       (unsigned long long)ms[i].records, (unsigned long long)base->records);
			rc = 1;
		}
	/* Located against by-name: a ratio only when both read the same values of a file that has scheduler records. */
	const measure *byname = &ms[3], *located = &ms[4];
	if (byname->failed || located->failed) {
		printf("located fields: INVALID: a measure failed\n");
		rc = 1;
	} else if (!byname->reads) {
		printf("located fields: INVALID: the file has no sched records with the cause analysis's fields\n");
		rc = 1;
	} else if (byname->reads != located->reads || byname->sum != located->sum) {
		printf("located fields: INVALID: %llu reads by name, %llu located, digests %016llx and %016llx differ\n",
		       (unsigned long long)byname->reads, (unsigned long long)located->reads,
		       (unsigned long long)byname->sum, (unsigned long long)located->sum);
		rc = 1;
	} else {
		double walk = ms[1].failed ? 0 : ms[1].best;
		printf("located fields: %llu field reads, the same values both ways; walk + reads %.2fx the by-name time",
		       (unsigned long long)located->reads, located->best / byname->best);
		if (walk > 0 && byname->best > walk && located->best > walk)
			printf(", the reads alone %.2fx (%.1f ns a read against %.1f)", (located->best - walk) / (byname->best - walk),
			       (located->best - walk) * 1e9 / (double)located->reads,
			       (byname->best - walk) * 1e9 / (double)byname->reads);
		printf("\n");
	}
	return rc;
}
