/* tests/ftrace/trgbe.c: what triggers need from the tracefs backend (root): decoded fields, copied trace_marker writes, mark, now_ns, and ring snapshots that keep the key events streaming. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hindsight/backend.h"
#include "hindsight/diag.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"

static int fail;
#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                                                         \
			fputc('\n', stderr);                                                                           \
			fail = 1;                                                                                      \
		}                                                                                                      \
	} while (0)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct {
	pid_t child;
	char frame[64], mark[96];
	bool frame_seen, mark_seen, frame_is_print;
	int sig_seen; /* the decoded sig of the child's signal_generate */
	int64_t sig_pid;
	uint64_t fsync, newest_ts;
	/* During one snapshot call: when it began, the last fsync event the
	 * observer had by then, and the longest stretch without one. */
	bool in_snap;
	double snap_t0, snap_until, snap_last, snap_gap;
	int field_errors;
} seen;

static void on_event(void *ctx, const hs_key_event *ev)
{
	seen *s = ctx;
	if (ev->ts_ns > s->newest_ts)
		s->newest_ts = ev->ts_ns;
	if (!ev->fields) {
		s->field_errors++;
		return;
	}
	if (!strcmp(ev->system, "ftrace") && !strcmp(ev->name, "print")) {
		char buf[256];
		if (!ev->fields->str(ev, "buf", buf, sizeof buf)) {
			s->field_errors++;
			return;
		}
		if (!strcmp(buf, s->frame))
			s->frame_seen = true;
		if (!strcmp(buf, s->mark))
			s->mark_seen = true;
		return;
	}
	if (!strcmp(ev->name, "signal_generate") && ev->pid == s->child) {
		int64_t sig = 0, pid = 0;
		char comm[16];
		if (!ev->fields->num(ev, "sig", &sig) || !ev->fields->num(ev, "pid", &pid) ||
		    !ev->fields->str(ev, "comm", comm, sizeof comm))
			s->field_errors++;
		s->sig_seen = (int)sig;
		s->sig_pid = pid;
		return;
	}
	if (!strncmp(ev->name, "sys_e", 5) && ev->pid == s->child) {
		double t = now_s();
		s->fsync++;
		if (s->in_snap && s->snap_last < s->snap_until) {
			double from = s->snap_last > s->snap_t0 ? s->snap_last : s->snap_t0;
			double to = t < s->snap_until ? t : s->snap_until;
			if (to - from > s->snap_gap)
				s->snap_gap = to - from;
			s->snap_last = t;
		}
	}
}

/* The child: forked before the backend starts (the engine leaves itself and
 * what it forks later out of its sessions). Commands on a pipe: f = write a
 * frame marker to the top-level trace_marker, k = SIGUSR1 to itself, l = fsync
 * load for LOAD_S (p ends it sooner, l again extends it). */
#define LOAD_S 8.0
static void on_usr1(int sig)
{
	(void)sig;
}

static void child_main(int cmd)
{
	/* Caught, not ignored: the kernel does not trace a signal it discards at once. */
	signal(SIGUSR1, on_usr1);
	char c;
	while (read(cmd, &c, 1) == 1) {
		if (c == 'f') {
			int fd = open("/sys/kernel/tracing/trace_marker", O_WRONLY);
			char text[64];
			int n = snprintf(text, sizeof text, "B|%d|Frame", (int)getpid());
			if (fd < 0)
				_exit(3);
			/* With the top-level buffer off (tracing_on 0) the kernel
			 * answers EBADF for it, after it copied the text into every
			 * instance with copy_trace_marker: the result says nothing. */
			ssize_t w = write(fd, text, (size_t)n);
			(void)w;
			close(fd);
		} else if (c == 'k') {
			kill(getpid(), SIGUSR1);
		} else if (c == 'l') {
			/* At most LOAD_S: a snapshot starved under stress-ng takes a
			 * minute, and the key file (16 MB) must keep the mark. */
			fcntl(cmd, F_SETFL, O_NONBLOCK);
			double until = now_s() + LOAD_S;
			for (;;) {
				/* About 20k events/s: 10k calls of two events, in 1 ms slices. */
				for (int i = 0; i < 10; i++)
					if (fsync(-1) == 0)
						_exit(4);
				struct timespec ts = {0, 1000000};
				nanosleep(&ts, NULL);
				ssize_t r = read(cmd, &c, 1);
				if (r == 0)
					_exit(0);
				if (r == 1 && c == 'l')
					until = now_s() + LOAD_S;
				if ((r == 1 && c == 'p') || now_s() > until)
					break;
			}
			fcntl(cmd, F_SETFL, 0);
		}
	}
	_exit(0);
}

/* The ring's filler, forked before the backend starts (so it is recorded):
 * two processes on CPU `cpu` bouncing a byte through pipes, each bounce a
 * switch, a waking and a wakeup in that CPU's ring (unpinned, a pair shares
 * one CPU anyway: the other CPU's ring would not fill). *state: FILL_RUN or
 * FILL_PAUSE (both sleep in 1 ms steps); state[1] counts bounces. Waits for a
 * byte on go[0] first (EOF: exits); killed as a process group at the end. */
enum { FILL_RUN, FILL_PAUSE };
static pid_t pingpong(atomic_int *state, const int go[2], int cpu)
{
	int ab[2], ba[2];
	if (pipe(ab) || pipe(ba))
		return -1;
	pid_t p = fork();
	if (p != 0) {
		close(ab[0]);
		close(ab[1]);
		close(ba[0]);
		close(ba[1]);
		return p;
	}
	close(go[1]);
	setpgid(0, 0); /* the cleanup kills the pair as a group */
	cpu_set_t on;
	CPU_ZERO(&on);
	CPU_SET(cpu, &on);
	if (sched_setaffinity(0, sizeof on, &on))
		_exit(6);
	char c;
	if (read(go[0], &c, 1) != 1)
		_exit(0);
	pid_t q = fork();
	int in = q == 0 ? ab[0] : ba[0], out = q == 0 ? ba[1] : ab[1];
	if (q != 0 && write(out, "x", 1) != 1)
		_exit(5);
	for (;;) {
		if (atomic_load(state) == FILL_PAUSE) {
			usleep(1000);
			continue;
		}
		if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
			_exit(7);
		atomic_fetch_add(&state[1], 1);
	}
}

/* Pauses the fillers HOLD_S after it starts (see step 4). */
#define HOLD_S 0.6
static void *pause_later(void *arg)
{
	struct timespec ts = {0, (long)(HOLD_S * 1e9)};
	nanosleep(&ts, NULL);
	atomic_store((atomic_int *)arg, FILL_PAUSE);
	return NULL;
}

static void poll_for(const hs_backend_ops *ops, hs_backend *b, double secs, bool *until)
{
	double end = now_s() + secs;
	while (now_s() < end && !(until && *until))
		ops->poll(b, 50);
}

/* 0 when trace-cmd reads `file` and its report has a line with `text`. */
static int report_has(const char *file, const char *text)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "trace-cmd report '%s' 2>/dev/null | grep -qF '%s'", file, text);
	return system(cmd);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress in order with stderr's */
	if (argc != 3) {
		fputs("usage: test_trgbe RULES WORKDIR\n", stderr);
		return 2;
	}
	if (geteuid() != 0) {
		puts("SKIP: tracefs needs root");
		return 77;
	}
	if (access("/sys/kernel/tracing/options/copy_trace_marker", F_OK)) {
		puts("SKIP: this kernel has no copy_trace_marker (Linux 6.17+)");
		return 77;
	}
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_plan *plan = NULL;
	if (!d || hs_rules_load(argv[1], d, &rs) != HS_OK || hs_plan_build(rs, HS_PLATFORM_LINUX, NULL, &plan) != HS_OK) {
		fprintf(stderr, "FAIL: cannot load %s\n", argv[1]);
		return 1;
	}
	size_t keys = SIZE_MAX, ring = SIZE_MAX;
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == HS_MODE_FILE_CIRCULAR)
			keys = i;
		else
			ring = i;
	if (keys == SIZE_MAX || ring == SIZE_MAX) {
		fputs("FAIL: the profile needs a file-circular and a buffering session\n", stderr);
		return 1;
	}
	/* What a frame_time trigger puts in the plan; and ftrace:print on a
	 * whitelist, which has no enable file and must not be refused. */
	hs_plan_session *ps = &plan->sessions[keys];
	ps->linux_.copy_trace_marker = true;
	static hs_provider ftrace_pr = {.name = "ftrace", .system = "ftrace"};
	static hs_plan_event print_ev = {.id = -1, .name = "print", .story = "trace_marker writes"};
	hs_plan_provider *provs = calloc(ps->n_providers + 1, sizeof(*provs));
	hs_plan_provider *old_provs = ps->providers;
	memcpy(provs, ps->providers, ps->n_providers * sizeof(*provs));
	provs[ps->n_providers] = (hs_plan_provider){.provider = &ftrace_pr, .whitelist = true, .events = &print_ev,
						    .n_events = 1};
	ps->providers = provs;
	ps->n_providers++;

	char dir[4096];
	snprintf(dir, sizeof dir, "%s/trgbe-XXXXXX", argv[2]);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	int cmd[2], go[2];
	if (pipe(go))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	atomic_int *fill = mmap(NULL, 2 * sizeof(atomic_int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fill == MAP_FAILED)
		return 1;
	atomic_init(fill, FILL_PAUSE);
	atomic_init(&fill[1], 0); /* bounces so far */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t filler[64];
	int nfill = 0;
	for (int c = 0; c < ncpu && c < 64; c++)
		if ((filler[nfill] = pingpong(fill, go, c)) > 0)
			nfill++;
	close(go[0]);
	if ((nfill < ncpu && nfill < 64) || pipe(cmd))
		return 1;
	seen s = {0};
	s.child = fork();
	if (s.child == 0) {
		close(cmd[1]);
		close(go[1]);
		child_main(cmd[0]);
	}
	close(cmd[0]);
	snprintf(s.frame, sizeof s.frame, "B|%d|Frame", (int)s.child);
	snprintf(s.mark, sizeof s.mark, "hindsight trgbe mark %d", (int)getpid());

	const hs_backend_ops *ops = &hs_backend_ftrace;
	hs_backend_opts opts = {.msg = NULL}; /* NULL: messages on stderr */
	hs_backend *b = NULL;
	hs_status st = ops->start(plan, dir, &opts, &b);
	CHECK(st == HS_OK, "start: %s", hs_strerror(st));
	if (st != HS_OK)
		goto out;
	const hs_session_status *ks, *rst;
	ops->session_status(b, keys, &ks);
	CHECK(ks->events_skipped == 0, "the key session skipped %zu events (ftrace:print refused?)", ks->events_skipped);
	ops->set_observer(b, on_event, &s);
	CHECK(ops->now_ns && ops->mark, "the tracefs backend has no now_ns or mark");

	/* 1. A frame marker an application writes to the top-level trace_marker,
	 * and a signal: both through the observer, their fields decoded. */
	if (write(cmd[1], "fk", 2) != 2)
		return 1;
	poll_for(ops, b, 3, &s.frame_seen);
	poll_for(ops, b, 0.2, NULL);
	CHECK(s.frame_seen, "the child's \"%s\" did not arrive as ftrace:print with that buf", s.frame);
	CHECK(s.sig_seen == SIGUSR1 && s.sig_pid == s.child, "signal_generate: sig %d pid %" PRId64 " (want %d, %d)",
	      s.sig_seen, s.sig_pid, SIGUSR1, (int)s.child);

	/* 2. now_ns: the session's clock is mono. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, bn = ops->now_ns(b);
	CHECK(bn >= s.newest_ts && (bn > mono ? bn - mono : mono - bn) < 100000000u,
	      "now_ns %" PRIu64 ", CLOCK_MONOTONIC %" PRIu64 ", newest event %" PRIu64, bn, mono, s.newest_ts);

	/* 3. mark: the engine's own write, recorded although its pid is left out of the events. */
	CHECK(ops->mark(b, s.mark) == HS_OK, "mark");
	poll_for(ops, b, 2, &s.mark_seen);
	CHECK(s.mark_seen, "the mark did not come back through the observer");

	/* 4. Two ring snapshots under a key-event load: the stream goes on during
	 * them. The observer hears of key events only when the backend drains the
	 * key ring (every HS_LINUX_STREAM_WAKE_MS, 50 ms); a backend that stopped
	 * streaming for a snapshot would deliver them all after it, leaving a hole
	 * as long as the snapshot. So each snapshot is of a full ring (the filler
	 * runs until every CPU's ring has wrapped: 256 MB, 0.65-0.8 s to save here
	 * on an idle machine), must take at least twice the longest hole allowed
	 * (the fillers bounce on every CPU for its first HOLD_S, as a game would
	 * beside it, and the nice-19 snapshot waits for them), and may leave no
	 * hole longer than that in its first watch_s (the key load lasts LOAD_S;
	 * under stress-ng --cpu 2 the nice-19 snapshot takes 10-55 s): 250 ms,
	 * five stream wakes (measured: 54-58 ms here, 76-152 ms under stress-ng
	 * --cpu 2). */
	const double max_hole_s = 0.25, watch_s = LOAD_S - 2;
	CHECK(write(cmd[1], "l", 1) == 1, "the child is gone: %s", strerror(errno));
	poll_for(ops, b, 1, NULL);
	char snap[2][4200];
	for (int k = 0; k < 2; k++) {
		snprintf(snap[k], sizeof snap[k], "%s/snap%d.dat", dir, k + 1);
		/* Fill the ring (the first snapshot emptied it), the key load paused
		 * meanwhile so the key file keeps what step 6 looks for. */
		CHECK(write(cmd[1], "p", 1) == 1, "the child is gone: %s", strerror(errno));
		atomic_store(fill, FILL_RUN);
		for (int f = 0; k == 0 && f < nfill; f++)
			CHECK(write(go[1], "g", 1) == 1, "the ring filler is gone");
		double fill0 = now_s();
		uint64_t overrun0[64] = {0};
		ops->session_status(b, ring, &rst);
		for (unsigned c = 0; c < rst->cpus && c < 64; c++)
			overrun0[c] = rst->cpu[c].overrun;
		bool full = false;
		while (!full && now_s() - fill0 < 60) {
			poll_for(ops, b, 0.2, NULL);
			ops->session_status(b, ring, &rst);
			full = true;
			for (unsigned c = 0; c < rst->cpus && c < 64; c++)
				full = full && rst->cpu[c].overrun > overrun0[c];
		}
		double fill_s = now_s() - fill0;
		CHECK(full, "the ring did not wrap on every CPU in 60 s of filling");
		/* The filler stops (a ring being saved is frozen anyway, and pinned
		 * bouncers would starve the snapshot's nice-19 thread for tens of
		 * seconds); the key load goes on. */
		atomic_store(fill, FILL_PAUSE);
		CHECK(write(cmd[1], "l", 1) == 1, "the child is gone: %s", strerror(errno));
		poll_for(ops, b, 0.3, NULL);
		uint64_t before = s.fsync;
		pthread_t hold;
		atomic_store(fill, FILL_RUN);
		bool holding = !pthread_create(&hold, NULL, pause_later, fill);
		if (!holding)
			atomic_store(fill, FILL_PAUSE);
		s.snap_t0 = now_s();
		s.snap_until = s.snap_t0 + watch_s;
		s.snap_last = 0;
		s.snap_gap = 0;
		s.in_snap = true;
		st = ops->snapshot(b, ring, snap[k], false);
		double end = now_s(), took = end - s.snap_t0;
		s.in_snap = false;
		if (holding)
			pthread_join(hold, NULL);
		if (s.snap_last < s.snap_until) {
			double to = end < s.snap_until ? end : s.snap_until;
			double tail = to - (s.snap_last > s.snap_t0 ? s.snap_last : s.snap_t0);
			if (tail > s.snap_gap)
				s.snap_gap = tail;
		}
		CHECK(st == HS_OK, "snapshot %d: %s", k + 1, hs_strerror(st));
		ops->session_status(b, ring, &rst);
		printf("snapshot %d: ring filled in %.1f s (%d bounces so far), %" PRIu64 " events; the snapshot took "
		       "%.3f s, %" PRIu64 " key events streamed during it, the longest time without one %.0f ms (in its "
		       "first %.0f s)\n",
		       k + 1, fill_s, atomic_load(&fill[1]), rst->snapshot_events, took, s.fsync - before, s.snap_gap * 1e3,
		       watch_s);
		CHECK(took >= 2 * max_hole_s,
		      "snapshot %d of a full ring took %.3f s, too short to tell streaming from a burst after it "
		      "(at least %.2f s needed: a larger ring_mb in the test's rules)",
		      k + 1, took, 2 * max_hole_s);
		CHECK(s.fsync > before, "no key event was streamed during the %.3f s snapshot %d", took, k + 1);
		CHECK(s.snap_gap <= max_hole_s, "snapshot %d: %.0f ms without a key event (at most %.0f ms allowed)",
		      k + 1, s.snap_gap * 1e3, max_hole_s * 1e3);
		poll_for(ops, b, 0.5, NULL);
	}
	ops->session_status(b, ring, &rst);
	CHECK(rst->snapshots == 2 && rst->snapshot_events > 0 && rst->snapshot_events == rst->snapshot_entries,
	      "ring status: snapshots %" PRIu64 ", events %" PRIu64 " of entries %" PRIu64, rst->snapshots,
	      rst->snapshot_events, rst->snapshot_entries);
	/* 5. A copy of the key-event file to another path; the session's own file is left alone. */
	char own[4200], copy[4200];
	snprintf(own, sizeof own, "%s/%s", dir, ps->session->output);
	snprintf(copy, sizeof copy, "%s/keys-copy.dat", dir);
	struct stat o1, o2;
	bool had = !stat(own, &o1);
	CHECK(ops->snapshot(b, keys, copy, false) == HS_OK, "key-event snapshot to %s", copy);
	bool has = !stat(own, &o2);
	CHECK(had == has && (!had || (o1.st_ino == o2.st_ino && o1.st_mtim.tv_sec == o2.st_mtim.tv_sec &&
				      o1.st_mtim.tv_nsec == o2.st_mtim.tv_nsec)),
	      "the key snapshot to another path touched %s", own);
	poll_for(ops, b, 0.5, NULL);
	close(cmd[1]);
	cmd[1] = -1;
	poll_for(ops, b, 0.2, NULL);
	ops->session_status(b, keys, &ks);
	uint64_t lost = 0;
	for (unsigned c = 0; c < ks->cpus; c++)
		lost += ks->cpu[c].dropped + ks->cpu[c].overrun;
	printf("key events: %" PRIu64 " fsync, lost %" PRIu64 "\n", s.fsync, lost);
	CHECK(lost == 0, "%" PRIu64 " key events lost while snapshots ran", lost);
	CHECK(s.field_errors == 0, "%d events without decodable fields", s.field_errors);
	CHECK(ops->stop(b) == HS_OK, "stop");

	/* 6. The files: the mark and the frame in the key file, both snapshots readable. */
	CHECK(report_has(own, s.mark) == 0, "the mark is not in trace-cmd report %s", own);
	CHECK(report_has(own, s.frame) == 0, "the frame marker is not in trace-cmd report %s", own);
	CHECK(report_has(copy, s.frame) == 0, "the frame marker is not in the key copy %s", copy);
	for (int k = 0; k < 2; k++)
		CHECK(report_has(snap[k], "sched_") == 0, "trace-cmd cannot read %s or it has no sched events", snap[k]);
out:
	if (cmd[1] >= 0)
		close(cmd[1]);
	/* The filler: killed, or never started (its go pipe closes). */
	close(go[1]);
	for (int f = 0; f < nfill; f++) {
		kill(-filler[f], SIGKILL);
		kill(filler[f], SIGKILL); /* before its setpgid */
		waitpid(filler[f], NULL, 0);
	}
	if (s.child > 0) {
		int ws = 0;
		for (int i = 0; i < 100 && !waitpid(s.child, &ws, WNOHANG); i++)
			usleep(10000);
		if (!kill(s.child, SIGKILL))
			waitpid(s.child, &ws, 0);
		else if (WIFEXITED(ws) ? WEXITSTATUS(ws) != 0 : !WIFSIGNALED(ws) || WTERMSIG(ws) != SIGKILL)
			CHECK(0, "the child ended with status 0x%x", ws);
	}
	if (b)
		ops->free(b);
	ps->providers = old_provs;
	ps->n_providers--;
	free(provs);
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	char rm[4200];
	snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
	if (!fail && system(rm) != 0)
		fail = 1;
	else if (fail)
		fprintf(stderr, "files kept in %s\n", dir);
	puts(fail ? "FAIL" : "PASS");
	return fail;
}
