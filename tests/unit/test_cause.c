/* test_cause.c: the cause analysis (engine/src/report/cause/) on hand-built scheduler records, one scenario per classifier: the reason it must give, its share and its culprit, with the shipped vocabulary (rules/causes.yaml). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/rules.h"
#include "report/cause/ca.h"
#include "report/cause/cause.h"
#include "report/cause/model.h"

static int failures, checks;
#define CHECK(c, ...)                                                                                                  \
	do {                                                                                                           \
		checks++;                                                                                              \
		if (!(c)) {                                                                                            \
			failures++;                                                                                    \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                    \
			printf(__VA_ARGS__);                                                                           \
			printf("\n");                                                                                  \
		}                                                                                                      \
	} while (0)

static const hs_cause_vocab *vocab;

#define MS 1000000ull
enum { S_STATE = 0x01, D_STATE = 0x02, T_STATE = 0x04, R_PREEMPT = 0x100, CLONE_THREAD = 0x10000 };

/* A scenario: records in time order (ts in ms from 1000 ms) and the window asked about. */
static cm_model m;
static uint64_t base = 1000 * MS;

static void begin(void)
{
	cm_init(&m, base - 200 * MS, base + 1000 * MS);
	cm_set_cpus(&m, 2);
}

static void rec(double ms, cm_kind kind, int cpu, int pid, int a, int b, int64_t x, int64_t y, int z, int ctx,
		const char *s, const char *s2)
{
	cm_rec r = {.ts = (uint64_t)((int64_t)base + (int64_t)(ms * 1e6)), .kind = (uint8_t)kind, .cpu = (uint16_t)cpu, .pid = pid, .a = a,
		    .b = b, .x = x, .y = y, .z = z, .ctx = (uint8_t)ctx};
	r.s = cm_intern(&m, s);
	r.s2 = cm_intern(&m, s2);
	CHECK(cm_add(&m, &r) == HS_OK, "cm_add");
}

/* a switch on cpu from prev (leaving in state) to next */
static void sw(double ms, int cpu, int prev, const char *pc, int pprio, int64_t state, int next, const char *nc, int nprio)
{
	rec(ms, CM_SWITCH, cpu, prev, prev, next, state, pprio, nprio, 0, pc, nc);
}

static void wake(double ms, int cpu, int waker, int ctx, int woken, const char *wc)
{
	rec(ms, CM_WAKE, cpu, waker, woken, cpu, 0, 120, 0, ctx, wc, NULL);
}

/* thread 100 "game" (its own process) made before the window, on cpu 0 */
static void game(void)
{
	rec(-150, CM_NEWTASK, 0, 1, 100, 0, 0, 0, 0, 0, "game", NULL);
	sw(-100, 0, 0, "swapper/0", 120, 0, 100, "game", 120);
}

static hs_cause_result res;
static bool no_quota; /* the scenario's tasks.json said: no CPU quota on the thread's cgroups */

static const hs_cause_reason *analyse(int tid, double w0, double w1)
{
	cm_finish(&m);
	hs_cause_input in = {.tid = tid, .w0 = (uint64_t)((int64_t)base + (int64_t)(w0 * 1e6)), .w1 = (uint64_t)((int64_t)base + (int64_t)(w1 * 1e6)),
			     .vocab = vocab, .no_cpu_quota = no_quota};
	memset(&res, 0, sizeof res);
	res.tid = tid;
	res.w0 = in.w0;
	res.w1 = in.w1;
	CHECK(ca_analyse_model(&m, &in, &res) == HS_OK, "analyse");
	CHECK(res.analysed, "not analysed: %s", res.why);
	double sum = 0;
	for (size_t i = 0; i < res.n_reasons; i++)
		sum += res.reasons[i].share;
	CHECK(res.n_reasons == 0 || fabs(sum - 1.0) < 1e-6, "shares sum to %f", sum);
	return hs_cause_top(&res);
}

static void done(void)
{
	hs_cause_result_free(&res);
	cm_free(&m);
}

static void expect(const char *name, const hs_cause_reason *top, const char *id, double min_share, int culprit_tid)
{
	CHECK(top && !strcmp(top->id, id), "%s: top reason %s, want %s", name, top ? top->id : "(none)", id);
	if (top) {
		CHECK(top->share >= min_share, "%s: share %.3f < %.3f", name, top->share, min_share);
		if (culprit_tid > 0)
			CHECK(top->has_culprit && top->culprit.is_task && top->culprit.tid == culprit_tid,
			      "%s: culprit tid %d, want %d", name, top->has_culprit ? (int)top->culprit.tid : -1, culprit_tid);
	}
	if (failures) {
		printf("  %s: clause: %s\n", name, res.clause);
		for (size_t i = 0; i < res.n_reasons; i++)
			printf("    %s %.3f %s\n", res.reasons[i].id, res.reasons[i].share, res.reasons[i].what);
	}
}

/* A real-time task preempts the thread on its CPU for 98 ms. */
static void t_contention(void)
{
	begin();
	game();
	rec(1, CM_NEWTASK, 0, 100, 200, 0, 0, 0, 0, 0, "hog", NULL); /* a process of its own... */
	rec(1.5, CM_SWITCH, 0, 100, 100, 200, R_PREEMPT, 120, 49, 0, "game", "hog");
	sw(99.5, 0, 200, "hog", 49, 0x10, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, 100);
	expect("contention", top, "cpu-contention", 0.95, 200);
	if (top) {
		CHECK(!strcmp(top->culprit.policy, "real-time") && top->culprit.priority == 50, "policy %s %d",
		      top->culprit.policy, top->culprit.priority);
		CHECK(strstr(res.clause, "hog") && strstr(res.clause, "real-time priority 50"), "clause: %s", res.clause);
	}
	done();
}

/* The same, with the switch from the task before (an agent thread, 300) to the hog not in the ring: this machine's
 * kernel logs no switch-out of its agent's threads, and none between two tasks set_event_notrace_pid leaves out
 * (the engine's own threads). The hog spinning in user space logs only interrupts over it (with_irqs), or nothing
 * until its own switch-out (not): either way the CPU's time is the hog's, not the agent's (a CI run named
 * tokio-rt-worker for a SCHED_FIFO hog's 235 ms). */
static void t_contention_unlogged(bool with_irqs)
{
	const char *name = with_irqs ? "contention, unlogged switch, irqs" : "contention, unlogged switch";
	begin();
	m.irq_pid_current = true; /* trace.dat: an interrupt's record names the task it interrupted */
	game();
	rec(-140, CM_NEWTASK, 1, 1, 300, 0, 0, 0, 0, 0, "agent", NULL);
	rec(1, CM_NEWTASK, 0, 100, 200, 0, 0, 0, 0, 0, "hog", NULL);
	sw(1.5, 0, 100, "game", 120, R_PREEMPT, 300, "agent", 110);
	rec(1.8, CM_SYSCALL_IN, 0, 300, 7, 0, 3, 0, 0, 0, "read", NULL);
	/* 2 ms: agent -> hog, not logged */
	for (int i = 0; with_irqs && i < 9; i++) {
		rec(4 + i * 10, CM_SOFT_IN, 0, 200, 9, 0, 0, 0, 0, 2, NULL, NULL);
		rec(4.01 + i * 10, CM_SOFT_OUT, 0, 200, 9, 0, 0, 0, 0, 2, NULL, NULL);
	}
	sw(99.5, 0, 200, "hog", 49, 0x10, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, 100);
	expect(name, top, "cpu-contention", 0.9, 200);
	if (top)
		CHECK(!strcmp(top->culprit.name, "hog") && !strcmp(top->culprit.policy, "real-time"), "%s: culprit %s %s",
		      name, top->culprit.name, top->culprit.policy);
	done();
}

/* The thread sleeps on the timer it armed; the timer's interrupt wakes it. */
static void t_sleep(void)
{
	begin();
	game();
	rec(1, CM_TIMER_START, 0, 100, 1, 0, 0xabc0, 0x1111, 0, 0, NULL, NULL);
	sw(1.1, 0, 100, "game", 120, S_STATE, 0, "swapper/0", 120);
	rec(90, CM_TIMER_FIRE, 0, 0, 1, 0, 0xabc0, 0x1111, 0, 1, NULL, NULL);
	wake(90.001, 0, 0, 1, 100, "game");
	sw(90.01, 0, 0, "swapper/0", 120, 0, 100, "game", 120);
	expect("sleep", analyse(100, 0, 100), "sleep", 0.85, 0);
	done();
}

/* A timer that is not its own wakes it: not a sleep (another process's doing, or a device). */
static void t_other_timer(void)
{
	begin();
	game();
	rec(1, CM_TIMER_START, 0, 100, 1, 0, 0xabc0, 0x1111, 0, 0, NULL, NULL);
	sw(1.1, 0, 100, "game", 120, S_STATE, 0, "swapper/0", 120);
	rec(90, CM_TIMER_FIRE, 0, 0, 1, 0, 0xdef0, 0x2222, 0, 1, NULL, NULL);
	wake(90.001, 0, 0, 1, 100, "game");
	sw(90.01, 0, 0, "swapper/0", 120, 0, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, 100);
	CHECK(top && strcmp(top->id, "sleep") != 0, "a foreign timer is not its sleep: %s", top ? top->id : "-");
	done();
}

/* A thread of its own process holds what it waits for, running meanwhile; its wake-up ends the wait. */
static void t_lock(void)
{
	begin();
	game();
	rec(-140, CM_NEWTASK, 1, 100, 101, 0, CLONE_THREAD, 0, 0, 0, "loader", NULL);
	sw(1, 0, 100, "game", 120, S_STATE, 101, "loader", 120);
	wake(95, 0, 101, 0, 100, "game");
	sw(95.1, 0, 101, "loader", 120, S_STATE, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, 100);
	expect("lock", top, "lock-wait", 0.9, 101);
	if (top)
		CHECK(strstr(top->chain, "loader: running its own code 94.0 ms (100 %)"), "chain: %s", top->chain);
	done();
}

/* Another process wakes it. */
static void t_ipc(void)
{
	begin();
	game();
	rec(-140, CM_NEWTASK, 1, 1, 300, 0, 0, 0, 0, 0, "server", NULL);
	sw(1, 0, 100, "game", 120, S_STATE, 0, "swapper/0", 120);
	sw(2, 1, 0, "swapper/1", 120, 0, 300, "server", 120);
	wake(80, 1, 300, 0, 100, "game");
	sw(80.1, 0, 0, "swapper/0", 120, 0, 100, "game", 120);
	expect("ipc", analyse(100, 0, 100), "ipc-wait", 0.75, 300);
	done();
}

/* Another process stops it with SIGSTOP and continues it. */
static void t_stopped(void)
{
	begin();
	game();
	rec(-140, CM_NEWTASK, 1, 1, 300, 0, 0, 0, 0, 0, "stopper", NULL);
	rec(1, CM_SIGNAL, 1, 300, 19, 100, 0, 0, 0, 0, "game", NULL);
	sw(1.05, 0, 100, "game", 120, T_STATE, 0, "swapper/0", 120);
	wake(99, 1, 300, 0, 100, "game");
	sw(99.1, 0, 0, "swapper/0", 120, 0, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, 100);
	expect("stopped", top, "stopped", 0.95, 300);
	if (top)
		CHECK(strstr(top->what, "SIGSTOP") != NULL, "what: %s", top->what);
	done();
}

/* It calls fsync, queues writes and blocks in D until the disk is done. */
static void t_io(void)
{
	begin();
	game();
	rec(0.5, CM_SYSCALL_IN, 0, 100, 74, 0, 3, 0, 0, 0, "fsync", NULL);
	rec(0.6, CM_BLOCK, 0, 100, (254 << 20) | 1, 0, 1000, 65536, 0, 0, "WS", NULL);
	sw(0.7, 0, 100, "game", 120, D_STATE, 0, "swapper/0", 120);
	wake(95, 0, 0, 2, 100, "game");
	sw(95.1, 0, 0, "swapper/0", 120, 0, 100, "game", 120);
	rec(95.2, CM_SYSCALL_OUT, 0, 100, 74, 0, 0, 0, 0, 0, "fsync", NULL);
	const hs_cause_reason *top = analyse(100, 0, 100);
	expect("io", top, "io-wait", 0.9, 0);
	if (top)
		CHECK(strstr(top->what, "fsync(fd 3)") && strstr(top->what, "254:1"), "what: %s", top->what);
	done();
}

/* A fault on a mapped file, a read, D until it is in. */
static void t_fault(void)
{
	begin();
	game();
	rec(0.5, CM_FILE_FAULT, 0, 100, (254 << 20) | 1, 0, 4242, 17, 0, 0, NULL, NULL);
	rec(0.6, CM_BLOCK, 0, 100, (254 << 20) | 1, 0, 2000, 131072, 0, 0, "RA", NULL);
	sw(0.7, 0, 100, "game", 120, D_STATE, 0, "swapper/0", 120);
	wake(90, 0, 0, 1, 100, "game");
	sw(90.1, 0, 0, "swapper/0", 120, 0, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, 100);
	expect("fault", top, "fault-io", 0.85, 0);
	if (top)
		CHECK(strstr(top->what, "4242") != NULL, "what: %s", top->what);
	done();
}

/* Preempted, then its CPU idles while it is runnable: the bandwidth limit holds it back. */
static void t_throttle_idle(void)
{
	begin();
	game();
	sw(1, 0, 100, "game", 120, R_PREEMPT, 0, "swapper/0", 120);
	sw(95, 0, 0, "swapper/0", 120, 0, 100, "game", 120);
	expect("throttle idle", analyse(100, 0, 100), "cgroup-throttle", 0.9, 0);
	done();
}

/* Preempted by a task of its own priority that then keeps the CPU for 90 ms: not fair sharing. With tasks.json
 * saying no cgroup above the thread has a CPU quota (quota false), that is contention: the nice-hogs scenario, run
 * beside other engineers' builds, had 8 equal hogs and dozens of build tasks keep a game in the root cgroup
 * waiting 79 ms, and the report blamed "its cgroup's CPU quota". */
static void t_throttle_unfair(bool quota)
{
	begin();
	game();
	rec(-140, CM_NEWTASK, 1, 1, 400, 0, 0, 0, 0, 0, "stress", NULL);
	sw(1, 0, 100, "game", 120, R_PREEMPT, 400, "stress", 120);
	sw(95, 0, 400, "stress", 120, R_PREEMPT, 100, "game", 120);
	no_quota = !quota;
	if (quota)
		expect("throttle unfair", analyse(100, 0, 100), "cgroup-throttle", 0.9, 0);
	else
		expect("unfair, no quota", analyse(100, 0, 100), "cpu-contention", 0.9, 400);
	no_quota = false;
	done();
}

/* Several tasks of its priority take turns on its CPU: contention, not throttling. */
static void t_fair_turns(void)
{
	begin();
	game();
	for (int k = 0; k < 6; k++)
		rec(-140 + k, CM_NEWTASK, 1, 1, 400 + k, 0, 0, 0, 0, 0, "hogs", NULL);
	double t = 1;
	int prev = 100;
	const char *pc = "game";
	for (int i = 0; i < 30; i++) {
		int next = 400 + i % 6;
		sw(t, 0, prev, pc, 120, R_PREEMPT, next, "hogs", 120);
		prev = next;
		pc = "hogs";
		t += 3;
	}
	sw(t, 0, prev, pc, 120, R_PREEMPT, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, t);
	expect("fair turns", top, "cpu-contention", 0.9, 0);
	if (top)
		CHECK(top->culprit.is_task && !strcmp(top->culprit.name, "hogs") && top->culprit.tasks == 6,
		      "culprit %s, %u tasks", top->culprit.name, top->culprit.tasks);
	done();
}

/* It reclaims memory itself while it runs. */
static void t_memory(void)
{
	begin();
	game();
	rec(1, CM_RECLAIM_IN, 0, 100, 0, 0, 0, 0, 0, 0, NULL, NULL);
	rec(90, CM_RECLAIM_OUT, 0, 100, 0, 0, 0, 32, 0, 0, NULL, NULL);
	sw(99, 0, 100, "game", 120, S_STATE, 0, "swapper/0", 120);
	expect("memory", analyse(100, 0, 100), "memory-stall", 0.85, 0);
	done();
}

/* Interrupt work on its CPU while it runs. */
static void t_interrupts(void)
{
	begin();
	game();
	for (int i = 0; i < 10; i++) {
		rec(1 + i * 10, CM_SOFT_IN, 0, 100, 3, 0, 0, 0, 0, 2, NULL, NULL);
		rec(9 + i * 10, CM_SOFT_OUT, 0, 100, 3, 0, 0, 0, 0, 2, NULL, NULL);
	}
	const hs_cause_reason *top = analyse(100, 0, 100);
	expect("interrupts", top, "interrupts", 0.75, 0);
	if (top)
		CHECK(strstr(top->what, "NET_RX") != NULL, "what: %s", top->what);
	done();
}

/* New processes, started by one spawner, take its CPU while it is runnable. */
static void t_process_start(void)
{
	begin();
	game();
	rec(-140, CM_NEWTASK, 1, 1, 600, 0, 0, 0, 0, 0, "spawner", NULL);
	double t = 1;
	int prev = 100;
	const char *pc = "game";
	for (int i = 0; i < 8; i++) {
		rec(t - 0.2, CM_NEWTASK, 1, 600, 700 + i, 0, 0, 0, 0, 0, "true", NULL);
		sw(t, 0, prev, pc, 120, prev == 100 ? R_PREEMPT : 0x10, 700 + i, "true", 120);
		prev = 700 + i;
		pc = "true";
		t += 11;
	}
	sw(t, 0, prev, pc, 120, 0x10, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, t);
	expect("process start", top, "process-start", 0.9, 600);
	done();
}

/* Its own runtime's slice (the vocabulary's match: GC) while it runs. */
static void t_runtime(void)
{
	begin();
	game();
	rec(1, CM_SLICE_IN, 0, 100, 100, 0, 0, 0, 0, 0, "GC young", NULL);
	rec(91, CM_SLICE_OUT, 0, 100, 100, 0, 0, 0, 0, 0, NULL, NULL);
	expect("runtime", analyse(100, 0, 100), "runtime-pause", 0.85, 0);
	done();
}

/* No record of the thread in the window but its start state: it ran (no switch away), so app-cpu; a thread
 * nobody mentions at all is not found. */
static void t_unknown(void)
{
	begin();
	game();
	sw(1, 1, 0, "swapper/1", 120, 0, 500, "other", 120);
	cm_finish(&m);
	hs_cause_input in = {.tid = 999, .w0 = base, .w1 = base + 100 * MS, .vocab = vocab};
	memset(&res, 0, sizeof res);
	CHECK(ca_analyse_model(&m, &in, &res) == HS_OK, "analyse");
	CHECK(!res.analysed && strstr(res.why, "no record of thread 999"), "why: %s", res.why);
	done();
}

/* The chain: the lock's holder itself waited for its CPU behind a real-time task. */
static void t_chain(void)
{
	begin();
	game();
	rec(-140, CM_NEWTASK, 1, 100, 101, 0, CLONE_THREAD, 0, 0, 0, "loader", NULL);
	rec(-130, CM_NEWTASK, 1, 1, 200, 0, 0, 0, 0, 0, "hog", NULL);
	sw(1, 0, 100, "game", 120, S_STATE, 101, "loader", 120);
	sw(5, 0, 101, "loader", 120, R_PREEMPT, 200, "hog", 49);
	sw(90, 0, 200, "hog", 49, S_STATE, 101, "loader", 120);
	wake(95, 0, 101, 0, 100, "game");
	sw(95.1, 0, 101, "loader", 120, S_STATE, 100, "game", 120);
	const hs_cause_reason *top = analyse(100, 0, 100);
	expect("chain", top, "lock-wait", 0.9, 101);
	if (top)
		CHECK(strstr(top->chain, "loader: waiting ") && strstr(top->chain, "for its CPU behind hog (pid 200"),
		      "chain: %s", top->chain);
	done();
}

int main(void)
{
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_status st = hs_rules_load(HS_TEST_RULES_DIR "/causes.yaml", d, &rs);
	if (st != HS_OK || !rs || !rs->causes.present) {
		hs_diags_render(d, stdout, 0);
		printf("FAIL: rules/causes.yaml does not load\n");
		return 1;
	}
	vocab = &rs->causes;
	t_contention();
	t_contention_unlogged(true);
	t_contention_unlogged(false);
	t_sleep();
	t_other_timer();
	t_lock();
	t_ipc();
	t_stopped();
	t_io();
	t_fault();
	t_throttle_idle();
	t_throttle_unfair(true);
	t_throttle_unfair(false);
	t_fair_turns();
	t_memory();
	t_interrupts();
	t_process_start();
	t_runtime();
	t_unknown();
	t_chain();
	hs_rules_free(rs);
	hs_diags_free(d);
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
