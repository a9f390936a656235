/* bench/key_stream.c: the highest key-event rate the streaming session records with zero loss, and the recorder's CPU per million events, in stepped rates; optionally with ring snapshots taken meanwhile (the key stream must not stop for them). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_tracefs.h"
#include "hindsight/tracedat.h"

#define MAX_PROCS 8
#define MAX_STEPS 32
#define TICK_NS 1000000LL /* the generator tops its count up once per ms */

/* fsync(-1) fails with EBADF at once, but the syscall tracepoints fire on
 * entry and exit whatever the result: two whitelisted key events for the
 * price of one cheap syscall, and nothing else (no fork, no disk). */
#define EV_ENTER "sys_enter_fsync"
#define EV_EXIT "sys_exit_fsync"
#define EVENTS_PER_CALL 2

/* The generators' counts, in shared memory (they are separate processes). */
typedef struct {
	uint64_t calls[MAX_PROCS];
	pid_t pid[MAX_PROCS];
} gen_shared;

typedef struct {
	const pid_t *pid;
	unsigned procs;
	uint64_t ours, other; /* fsync events of the generators; every other key event */
	/* Wall time between two of the generators' events reaching the observer:
	 * with events every few microseconds, the longest gap is the longest time
	 * the key rings went undrained (a poll's sleep, or a snapshot that held the
	 * loop up). */
	double last_s, max_gap_s;
} counter;

static double gap_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void count_event(void *ctx, const hs_key_event *ev)
{
	counter *c = ctx;
	if (!strcmp(ev->name, EV_ENTER) || !strcmp(ev->name, EV_EXIT))
		for (unsigned i = 0; i < c->procs; i++)
			if (ev->pid == c->pid[i]) {
				double t = gap_now_s();
				if (c->last_s > 0 && t - c->last_s > c->max_gap_s)
					c->max_gap_s = t - c->last_s;
				c->last_s = t;
				c->ours++;
				return;
			}
	c->other++;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One generator: from t0 to t1 (CLOCK_MONOTONIC ns), keeps its call count at
 * rate x elapsed, topped up every tick; a late tick catches up, so the mean
 * rate is exact unless the process cannot keep up at all. */
static uint64_t generate(double calls_per_s, int64_t t0, int64_t t1)
{
	uint64_t done = 0;
	int64_t tick = t0;
	for (;;) {
		struct timespec ts = {(time_t)(tick / 1000000000LL), (long)(tick % 1000000000LL)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		int64_t t = now_ns();
		if (t >= t1)
			break;
		uint64_t target = (uint64_t)((double)(t - t0) * calls_per_s / 1e9);
		while (done < target) {
			if (fsync(-1) == 0)
				_exit(3); /* cannot happen; keeps the call from being optimised out */
			done++;
		}
		tick += TICK_NS;
		if (tick < t)
			tick = t;
	}
	return done;
}

static uint64_t dat_count;
static int count_one(const hs_tracedat_record *r, void *ctx)
{
	(void)r;
	(void)ctx;
	dat_count++;
	return 0;
}

/* Events in a trace.dat through libtracecmd; UINT64_MAX when unreadable. */
static uint64_t dat_events(const char *path)
{
	hs_tracedat *td = NULL;
	dat_count = 0;
	hs_status st = hs_tracedat_open_ex(path, false, &td);
	if (st == HS_OK)
		st = hs_tracedat_foreach(td, count_one, NULL);
	hs_tracedat_close(td);
	return st == HS_OK ? dat_count : UINT64_MAX;
}

typedef struct {
	double target, achieved; /* events/s */
	uint64_t generated, recorded, other, dropped, overrun, chunks_dropped, in_file;
	double cpu_s, wall_s, stop_s, gen_cpu_s;
	double max_poll_s, bytes_per_event, ring_kb;
	double max_gap_s;             /* longest wall time between two streamed generator events */
	unsigned snaps, snaps_failed; /* --snapshot-every: ring snapshots taken in the step */
	unsigned snaps_not_full;      /* of them, of a ring not every CPU of which had wrapped */
	double max_snap_s;
	bool lost, ring_lost, short_of_rate, file_ok;
} step_result;

/* --snapshot-every: a ring snapshot (non-final) this often during a step, of
 * this buffering session of the plan (session 1 of the bench plan). */
static double g_snap_every;
static size_t g_ring_i = SIZE_MAX;

static int run_step(const hs_plan *plan, size_t keys_i, double rate, double secs, unsigned procs, double flush_s,
		    gen_shared *gs, step_result *res)
{
	int rc = 1;
	memset(gs, 0, sizeof(*gs));
	/* The generators are forked before the recorder starts and wait for `go`
	 * to close: the backend leaves its own process out of its sessions with
	 * event-fork, so children forked later would be left out too (and a real
	 * storm does not come from the recorder's children either). */
	int go[2];
	if (pipe2(go, O_CLOEXEC))
		return 1;
	double per_proc = rate / EVENTS_PER_CALL / procs;
	double kids0 = bench_cpu_s(RUSAGE_CHILDREN);
	pid_t first = 0;
	for (unsigned w = 0; w < procs; w++) {
		pid_t p = fork();
		if (p == 0) {
			setpgid(0, first);
			bench_child_signals();
			close(go[1]);
			char ch;
			while (read(go[0], &ch, 1) < 0 && errno == EINTR)
				;
			int64_t t0 = now_ns();
			gs->calls[w] = generate(per_proc, t0, t0 + (int64_t)(secs * 1e9));
			_exit(0);
		}
		if (p < 0)
			break;
		if (!first)
			first = p;
		setpgid(p, first); /* both sides, so a kill right after fork hits the group */
		gs->pid[w] = p;
		g_load_pgid = first;
	}
	close(go[0]);
	bench_plan bp;
	size_t idx[2] = {keys_i, g_ring_i};
	bench_plan_init(&bp, plan, idx, g_snap_every > 0 ? 2 : 1, "ks");
	if (flush_s > 0)
		bp.session[0].flush_interval_s = (uint64_t)flush_s;
	hs_backend *b = bench_backend_start(&bp);
	if (!b || !first) {
		close(go[1]);
		bench_stop_load();
		hs_backend_ftrace.free(b);
		return 1;
	}
	counter cnt = {gs->pid, procs, 0, 0, 0, 0};
	hs_backend_ftrace.set_observer(b, count_event, &cnt);
	hs_backend_ftrace.poll(b, 0); /* whatever the start-up produced is not part of the step */
	cnt.other = 0;
	close(go[1]);
	double c0 = bench_cpu_s(RUSAGE_SELF), w0 = bench_now_s();
	/* The engine's loop: record.c polls at HS_LINUX_STREAM_WAKE_MS. */
	bool ok = true;
	unsigned alive = procs;
	double next_snap = w0 + g_snap_every;
	while (!g_stop && alive) {
		/* The sleep of hs_backend_ftrace.poll(b, 50), taken here so that the work
		 * after it can be timed: the ring is not drained while it runs. */
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
		double p0 = bench_now_s();
		if (hs_backend_ftrace.poll(b, 0) != HS_OK)
			ok = false;
		double pd = bench_now_s() - p0;
		if (pd > res->max_poll_s)
			res->max_poll_s = pd;
		if (g_snap_every > 0 && bench_now_s() >= next_snap) {
			/* As a trigger would: a non-final ring snapshot from the loop's
			 * thread. The key rings must go on draining meanwhile. */
			char snap[8192];
			snprintf(snap, sizeof snap, "%s/snap%u.dat", g_dir, res->snaps);
			/* A ring that is not full snapshots quickly and proves little. */
			if (!bench_ring_wrapped(bp.name[1], bp.ps[1].linux_.cpus))
				res->snaps_not_full++;
			double t0 = bench_now_s();
			if (hs_backend_ftrace.snapshot(b, 1, snap, false) != HS_OK)
				res->snaps_failed++;
			double sd = bench_now_s() - t0;
			if (sd > res->max_snap_s)
				res->max_snap_s = sd;
			res->snaps++;
			unlink(snap);
			next_snap = bench_now_s() + g_snap_every;
		}
		pid_t r;
		while (alive && (r = waitpid(-first, NULL, WNOHANG)) > 0)
			alive--;
	}
	if (g_stop)
		goto out;
	g_load_pgid = 0;
	/* Whatever the ring still holds, as the engine's next wake-up would. */
	if (hs_backend_ftrace.poll(b, 0) != HS_OK)
		ok = false;
	res->cpu_s = bench_cpu_s(RUSAGE_SELF) - c0;
	res->wall_s = bench_now_s() - w0;
	res->gen_cpu_s = bench_cpu_s(RUSAGE_CHILDREN) - kids0;
	double s0 = bench_now_s();
	if (hs_backend_ftrace.stop(b) != HS_OK)
		ok = false;
	res->stop_s = bench_now_s() - s0;

	const hs_session_status *s;
	hs_backend_ftrace.session_status(b, 0, &s);
	res->target = rate;
	res->generated = 0;
	for (unsigned w = 0; w < procs; w++)
		res->generated += gs->calls[w] * EVENTS_PER_CALL;
	res->achieved = (double)res->generated / secs;
	res->recorded = cnt.ours;
	res->other = cnt.other;
	res->max_gap_s = cnt.max_gap_s;
	res->dropped = res->overrun = 0;
	for (unsigned c = 0; c < s->cpus; c++) {
		res->dropped += s->cpu[c].dropped;
		res->overrun += s->cpu[c].overrun;
	}
	res->chunks_dropped = s->chunks_dropped;
	res->ring_kb = (double)s->real_per_cpu_kb;
	res->bytes_per_event = cnt.ours + cnt.other ? (double)s->bytes_streamed / (double)(cnt.ours + cnt.other) : 0;
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", g_dir, bp.session[0].output);
	res->in_file = dat_events(path);
	unlink(path);
	/* The file holds everything streamed, unless the circular bound evicted chunks. */
	res->file_ok = res->in_file == cnt.ours + cnt.other || (s->chunks_dropped && res->in_file != UINT64_MAX);
	/* Two kinds of loss: the recorder fell behind the ring (what limits the
	 * rate), or the file it leaves does not hold what it streamed (a defect
	 * at any rate). Both fail the step. */
	res->ring_lost = res->recorded != res->generated || res->dropped || res->overrun;
	res->lost = res->ring_lost || !res->file_ok;
	res->short_of_rate = res->achieved < 0.95 * rate;
	rc = ok ? 0 : 1;
	if (!ok)
		fprintf(stderr, "bench: the backend reported an error while streaming\n");
out:
	bench_stop_load();
	hs_backend_ftrace.free(b);
	return g_stop ? 1 : rc;
}

static void usage(FILE *f)
{
	fputs("usage: bench_key_stream [--rates R1,R2,...] [--step-sec S] [--procs N] [--all] [--flush-sec S]\n"
	      "                        [--snapshot-every S] [--rules FILE] [--dir DIR] [-v]\n"
	      "  --snapshot-every S: also take a ring snapshot (the rules' first buffering session) every S s\n"
	      "                      of each step; the key stream must lose nothing meanwhile\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *rules = HS_BENCH_RULES_DIR "/stutter.yaml", *dir = NULL;
	const char *rates_arg = "10000,20000,50000,100000,200000,500000,1000000,2000000";
	double secs = 12, flush_s = 0;
	unsigned procs = 1;
	bool verbose = false, all = false;
	static const struct option lo[] = {
		{"rates", 1, 0, 'R'}, {"step-sec", 1, 0, 's'}, {"procs", 1, 0, 'p'}, {"all", 0, 0, 'a'},
		{"flush-sec", 1, 0, 'F'}, {"snapshot-every", 1, 0, 'S'}, {"rules", 1, 0, 'r'}, {"dir", 1, 0, 'd'}, {"verbose", 0, 0, 'v'},
		{"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (c) {
		case 'R': rates_arg = optarg; break;
		case 's': secs = atof(optarg); break;
		case 'p': procs = (unsigned)atoi(optarg); break;
		case 'a': all = true; break;
		case 'F': flush_s = atof(optarg); break;
		case 'S': g_snap_every = atof(optarg); break;
		case 'r': rules = optarg; break;
		case 'd': dir = optarg; break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	double rates[MAX_STEPS];
	size_t n_rates = 0;
	for (const char *p = rates_arg; *p && n_rates < MAX_STEPS;) {
		char *e;
		double r = strtod(p, &e);
		if (e == p || r < 1) {
			n_rates = 0;
			break;
		}
		if (*e == 'k' || *e == 'K')
			r *= 1e3, e++;
		else if (*e == 'M')
			r *= 1e6, e++;
		rates[n_rates++] = r;
		p = *e == ',' ? e + 1 : e;
		if (*e && *e != ',') {
			n_rates = 0;
			break;
		}
	}
	if (!n_rates || secs < 1 || flush_s < 0 || !procs || procs > MAX_PROCS || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (geteuid() != 0) {
		fputs("bench: tracefs is root-only; run it as root (sudo)\n", stderr);
		return 1;
	}
	printf("bench_key_stream (build %s), rules %s\n", HS_BENCH_BUILD_TYPE, rules);

	hs_diags *d = NULL;
	hs_ruleset *rs = NULL;
	hs_plan *plan = NULL;
	gen_shared *gs = MAP_FAILED;
	step_result res[MAX_STEPS];
	size_t done = 0;
	unsigned lossy_run = 0;
	int rc = 1;
	if (!bench_load_plan(rules, &d, &rs, &plan))
		goto out;
	size_t keys_i = bench_find_session(plan, HS_MODE_FILE_CIRCULAR);
	if (keys_i == SIZE_MAX) {
		fprintf(stderr, "bench: %s has no file-circular Linux session\n", rules);
		goto out;
	}
	if (g_snap_every > 0 && (g_ring_i = bench_find_session(plan, HS_MODE_BUFFERING)) == SIZE_MAX) {
		fprintf(stderr, "bench: %s has no buffering Linux session to snapshot\n", rules);
		goto out;
	}
	/* The generator's events must be whitelisted, or nothing is measured. */
	bool enter = false, exit_ = false;
	const hs_plan_session *ps = &plan->sessions[keys_i];
	for (size_t i = 0; i < ps->n_providers; i++)
		for (size_t e = 0; e < ps->providers[i].n_events; e++) {
			const char *nm = ps->providers[i].events[e].name;
			enter |= nm && !strcmp(nm, EV_ENTER);
			exit_ |= nm && !strcmp(nm, EV_EXIT);
		}
	if (!enter || !exit_) {
		fprintf(stderr, "bench: session %s does not whitelist syscalls %s and %s\n", ps->session->name, EV_ENTER,
			EV_EXIT);
		goto out;
	}
	if (bench_setup(dir, verbose))
		goto out;
	gs = mmap(NULL, sizeof(*gs), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (gs == MAP_FAILED)
		goto out;
	printf("streaming: session %s (%" PRIu64 " KB ring per CPU, non-overwrite, max_file_mb %" PRIu64
	       ", flush every %" PRIu64 " s) under %sks_*; %u generator process%s calling fsync(-1) (%s + %s) at "
	       "stepped rates, %.0f s per step; the recorder polls every 50 ms like the engine\n",
	       ps->session->name, ps->linux_.per_cpu_kb, ps->session->max_file_mb,
	       flush_s > 0 ? (uint64_t)flush_s : ps->session->flush_interval_s,
	       g_prefix, procs, procs == 1 ? "" : "es", EV_ENTER, EV_EXIT, secs);
	if (g_snap_every > 0)
		printf("snapshots: session %s (%" PRIu64 " KB ring per CPU) every %.1f s, non-final, from the polling "
		       "thread\n",
		       plan->sessions[g_ring_i].session->name, plan->sessions[g_ring_i].linux_.per_cpu_kb, g_snap_every);
	printf("  %10s %10s %10s %10s %8s %8s %7s %7s %9s %8s %8s %8s %7s\n", "target/s", "achieved/s", "generated",
	       "recorded", "dropped", "overrun", "chunks-", "rec CPU", "ms CPU/M", "gen us/c", "max poll", "max gap",
	       "result");
	fflush(stdout);
	rc = 0;
	for (size_t k = 0; k < n_rates && !g_stop; k++) {
		step_result *r = &res[k];
		memset(r, 0, sizeof(*r));
		if (run_step(plan, keys_i, rates[k], secs, procs, flush_s, gs, r)) {
			rc = 1;
			break;
		}
		done = k + 1;
		double events = (double)(r->recorded + r->other);
		printf("  %10.0f %10.0f %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %7" PRIu64 " %6.2f%% %9.1f "
		       "%8.2f %6.0fms %6.0fms %7s%s\n",
		       r->target, r->achieved, r->generated, r->recorded, r->dropped, r->overrun, r->chunks_dropped,
		       100.0 * r->cpu_s / r->wall_s, events > 0 ? r->cpu_s * 1e3 / (events / 1e6) : 0.0,
		       r->generated ? r->gen_cpu_s * 1e6 / ((double)r->generated / EVENTS_PER_CALL) : 0.0,
		       r->max_poll_s * 1e3, r->max_gap_s * 1e3,
		       r->ring_lost ? (r->file_ok ? "LOSS" : "LOSS+file") : r->file_ok ? "ok" : "file",
		       r->short_of_rate ? " (generator short of the rate)" : "");
		/* How long one CPU's ring lasts at this rate if the generator stays on
		 * that CPU: a poll (plus its 50 ms sleep) longer than this loses events. */
		double ring_ms = r->achieved > 0 && r->bytes_per_event > 0
					 ? r->ring_kb * 1024.0 / (r->achieved * r->bytes_per_event) * 1e3
					 : 0.0;
		if (g_snap_every > 0)
			printf("             %u ring snapshots (%u failed, %u of a ring that was NOT full), the longest %.3f s; "
			       "key events lost meanwhile: %" PRIu64 "\n",
			       r->snaps, r->snaps_failed, r->snaps_not_full, r->max_snap_s,
			       r->generated > r->recorded ? r->generated - r->recorded : 0);
		if (g_snap_every > 0 && (r->snaps_not_full || r->snaps_failed || !r->snaps)) {
			/* The claim is that the key stream goes on during a full ring's
			 * snapshot: without one, this step does not test it. */
			fprintf(stderr,
				"bench: INVALID: --snapshot-every: %u snapshots, %u failed, %u of a ring not every CPU of "
				"which had wrapped (run a load that fills it beside the bench, e.g. stress-ng --switch 1)\n",
				r->snaps, r->snaps_failed, r->snaps_not_full);
			rc = 1;
			break;
		}
		if (verbose || r->lost)
			printf("             other key events %" PRIu64 ", keyevents.dat holds %" PRIu64 "%s, %.1f bytes per "
			       "event, one CPU's ring holds %.0f ms of this rate, final stop %.3f s\n",
			       r->other, r->in_file, r->file_ok ? "" : " (NOT what was streamed)", r->bytes_per_event, ring_ms,
			       r->stop_s);
		fflush(stdout);
		/* One lossy step can be a stall from other load on the machine; two
		 * in a row (or a generator that cannot keep up) end the climb. */
		lossy_run = r->ring_lost ? lossy_run + 1 : 0;
		if ((lossy_run >= 2 || r->short_of_rate) && !all)
			break;
	}
	if (g_stop) {
		fputs("bench: interrupted; cleaning up\n", stderr);
		rc = 1;
	}
	if (done && !rc) {
		const step_result *best = NULL;
		unsigned bad_files = 0;
		for (size_t k = 0; k < done; k++) {
			if (!res[k].ring_lost && (!best || res[k].achieved > best->achieved))
				best = &res[k];
			bad_files += !res[k].file_ok;
		}
		printf("\nresult (LOSS = the recorder fell behind: recorded < generated, or dropped or overrun > 0; file = "
		       "keyevents.dat does not hold what was streamed;\n        ms CPU/M = the recorder's user+sys CPU per million events it streamed; rec CPU = %% of "
		       "one CPU; gen us/c = the generator's CPU per fsync call, tracepoints included; max poll = the "
		       "longest poll after its 50 ms sleep, while the ring is not drained; max gap = the longest wall time between "
		       "two generator events reaching the observer, i.e. the longest the key rings went undrained):\n");
		if (best) {
			double ev = (double)(best->recorded + best->other);
			printf("  highest sustained rate with zero loss (the recorder kept up): %.0f events/s (step %.0f/s), "
			       "recorder CPU %.1f ms per million events (%.2f%% of one CPU at that rate)\n",
			       best->achieved, best->target, ev > 0 ? best->cpu_s * 1e3 / (ev / 1e6) : 0.0,
			       100.0 * best->cpu_s / best->wall_s);
		} else
			printf("  no step was free of loss\n");
		if (bad_files)
			printf("  keyevents.dat did NOT hold every streamed event after the stop in %u of %zu steps (result "
			       "'file'): the recorder kept up, but the file it left lost events; an engine defect\n",
			       bad_files, done);
		if (done == n_rates && !res[done - 1].ring_lost)
			printf("  every step was lossless: add higher --rates to find the limit\n");
	}
	if (rc)
		bench_dump_log();
out:
	bench_cleanup();
	if (gs != MAP_FAILED)
		munmap(gs, sizeof(*gs));
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	return rc ? 1 : 0;
}
