/* test_cause_etl.c: the cause analysis on Windows traces: a synthetic .etl per cause written with the ETL writer (preemption, a sleep, lock and IPC waits by waker and by wait reason, a page read, a suspension, a job's CPU rate limit, a ReadyThread before its target's switch-out), each asserting reason, share and culprit, and the real fixtures read without error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "check.h"
#include "fixture.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/etl_writer.h"
#include "hindsight/wait_reason.h"
#include "model.h"
#include "sched_records.h"

#ifndef HS_TEST_RULES_DIR
#error "HS_TEST_RULES_DIR must point at rules/"
#endif
#ifndef HS_TEST_FIXTURES_DIR
#error "HS_TEST_FIXTURES_DIR must point at the shared .etl fixtures"
#endif
#ifndef HS_TEST_SOURCE_DIR
#error "HS_TEST_SOURCE_DIR must point at the project"
#endif

/*
 * The cast of every scenario: game.exe (pid 100) with its frame thread 101 and a worker 102, all at Windows'
 * normal priority 8; hog.exe (200, thread 201) at 15; server.exe (300, thread 301); debugger.exe (400, thread
 * 401); rt.exe (500, thread 501) in the real-time class at 24. The session clock is QPC at 10 MHz (the writer's
 * default), so 1 ms is 10000 ticks and the analysis's ns are ticks x 100.
 */
enum { GAME = 100, FRAME = 101, WORKER = 102, HOG = 201, SERVER = 301, DEBUGGER = 401, RT = 501 };

typedef struct {
	hs_etl_writer *w;
	bool bad;
	char path[600];
} scene;

static int64_t ticks(double ms)
{
	return (int64_t)(ms * 10000.0 + 0.5);
}

static double dist(double a, double b)
{
	return a > b ? a - b : b - a;
}

static void add(scene *s, uint16_t cpu, const uint8_t *raw, size_t n)
{
	if (hs_etl_writer_add_raw(s->w, cpu, raw, n) != HS_OK)
		s->bad = true;
}

static void proc(scene *s, uint32_t pid, const char *image)
{
	uint8_t p[512], raw[600];
	size_t n = sr_process_v4(p, pid, 4, image);
	n = sr_kernel(raw, HS_ETL_HT_SYSTEM64, 0x03, HS_ETLK_OP_DCSTART, 4, 0, 0, ticks(0.1), p, n);
	add(s, 0, raw, n);
}

static void thread(scene *s, uint32_t pid, uint32_t tid)
{
	uint8_t p[256], raw[320];
	size_t n = sr_thread_v3(p, pid, tid, 8, NULL);
	n = sr_kernel(raw, HS_ETL_HT_SYSTEM64, 0x05, HS_ETLK_OP_DCSTART, 3, 0, 0, ticks(0.2), p, n);
	add(s, 0, raw, n);
}

/* A context switch on cpu at ms: old leaves in state (with a wait reason and mode when it waits), new comes. */
static void sw(scene *s, uint16_t cpu, double ms, uint32_t old, int8_t old_pri, int8_t state, int8_t reason,
	       int8_t mode, uint32_t new_tid, int8_t new_pri)
{
	uint8_t p[32], raw[64];
	size_t n = sr_cswitch(p, new_tid, old, new_pri, old_pri, reason, mode, state);
	n = sr_kernel(raw, HS_ETL_HT_COMPACT64, 0x05, HS_ETLK_OP_CSWITCH, 4, old, 0, ticks(ms), p, n);
	add(s, cpu, raw, n);
}

/* A wait's switch-out: old waits for reason (user- or kernel-mode), the CPU goes to new. */
static void wait_out(scene *s, uint16_t cpu, double ms, uint32_t old, int8_t reason, int8_t mode, uint32_t new_tid,
		     int8_t new_pri)
{
	sw(s, cpu, ms, old, 8, HS_ETL_THREAD_WAITING, reason, mode, new_tid, new_pri);
}

/* readier (the record's own thread, on cpu) makes target ready; flag HS_ETL_READY_FROM_DPC for a DPC. */
static void ready(scene *s, uint16_t cpu, double ms, uint32_t readier, uint32_t target, uint8_t flag)
{
	uint8_t p[16], raw[64];
	size_t n = sr_ready(p, target, 1, 1, flag);
	n = sr_kernel(raw, HS_ETL_HT_SYSTEM64, 0x05, HS_ETLK_OP_READY_THREAD, 2, readier, 0, ticks(ms), p, n);
	add(s, cpu, raw, n);
}

static void scene_open(scene *s, const char *name)
{
	memset(s, 0, sizeof *s);
	snprintf(s->path, sizeof s->path, "%s", fixture_path(name));
	hs_etl_writer_opts o;
	hs_etl_writer_opts_default(&o);
	o.cpus = 2;
	o.logger_name = "NT Kernel Logger";
	if (hs_etl_writer_open(s->path, &o, &s->w) != HS_OK) {
		fprintf(stderr, "cannot write %s\n", s->path);
		exit(2);
	}
	proc(s, 0, "Idle");
	proc(s, 4, "System");
	proc(s, GAME, "game.exe");
	proc(s, 200, "hog.exe");
	proc(s, 300, "server.exe");
	proc(s, 400, "debugger.exe");
	proc(s, 500, "rt.exe");
	thread(s, GAME, FRAME);
	thread(s, GAME, WORKER);
	thread(s, 200, HOG);
	thread(s, 300, SERVER);
	thread(s, 400, DEBUGGER);
	thread(s, 500, RT);
}

static void scene_close(scene *s)
{
	CHECK(!s->bad);
	CHECK(hs_etl_writer_close(s->w) == HS_OK);
}

static const hs_cause_vocab *vocab;

static hs_status analyse(const char *path, int32_t tid, double w0_ms, double w1_ms, hs_cause_result *out)
{
	hs_cause_input in = {.ring = path, .tid = tid, .vocab = vocab};
	in.w0 = (uint64_t)(w0_ms * 1e6 + 0.5);
	in.w1 = (uint64_t)(w1_ms * 1e6 + 0.5);
	return hs_cause_analyse(&in, out);
}

static const hs_cause_reason *reason(const hs_cause_result *r, const char *id)
{
	for (size_t i = 0; i < r->n_reasons; i++)
		if (!strcmp(r->reasons[i].id, id))
			return &r->reasons[i];
	return NULL;
}

/* Analysed, every ns of the covered window given to one reason (shares sum to 1), the top one id with ms of it.
 * The covered window ends at the window's last record (what the records can vouch for). */
static const hs_cause_reason *expect_top(const char *scene_name, const hs_cause_result *r, const char *id, double ms)
{
	CHECK(r->analysed);
	if (!r->analysed) {
		fprintf(stderr, "%s: not analysed: %s\n", scene_name, r->why);
		return NULL;
	}
	double sum = 0;
	for (size_t i = 0; i < r->n_reasons; i++)
		sum += r->reasons[i].share;
	CHECK(dist(sum, 1.0) < 1e-9);
	const hs_cause_reason *top = hs_cause_top(r);
	CHECK(top != NULL);
	if (!top)
		return NULL;
	double cov = (double)(r->cov1 - r->cov0);
	if (strcmp(top->id, id) != 0 || dist((double)top->ns, ms * 1e6) > 2000 || dist(top->share, ms * 1e6 / cov) > 1e-6) {
		fprintf(stderr, "%s: top reason %s %.3f ms (%.4f of %.3f ms), expected %s %.3f ms; all:\n", scene_name,
			top->id, (double)top->ns / 1e6, top->share, cov / 1e6, id, ms);
		for (size_t i = 0; i < r->n_reasons; i++)
			fprintf(stderr, "  %s %.4f %s\n", r->reasons[i].id, r->reasons[i].share, r->reasons[i].what);
	}
	CHECK_EQ_STR(top->id, id);
	CHECK(dist((double)top->ns, ms * 1e6) <= 2000);
	CHECK(dist(top->share, ms * 1e6 / cov) <= 1e-6);
	return top;
}

static void expect_task(const hs_cause_reason *k, int32_t tid, int32_t tgid, const char *name)
{
	CHECK(k && k->has_culprit && k->culprit.is_task);
	if (!k || !k->has_culprit)
		return;
	CHECK_EQ_INT(k->culprit.tid, tid);
	CHECK_EQ_INT(k->culprit.tgid, tgid);
	CHECK_EQ_STR(k->culprit.name, name);
}

static void expect_thing(const hs_cause_reason *k, const char *what)
{
	CHECK(k && k->has_culprit && !k->culprit.is_task);
	if (k && k->has_culprit)
		CHECK_EQ_STR(k->culprit.what, what);
}

/* The frame thread is preempted by a thread of higher priority for 150 ms of a 160 ms window. */
static void test_contention(int8_t hog_pri, uint32_t hog)
{
	scene s;
	scene_open(&s, hog == RT ? "contention-rt.etl" : "contention.etl");
	sw(&s, 0, 1, 0, 0, HS_ETL_THREAD_READY, 0, 0, FRAME, 8);
	sw(&s, 0, 10, FRAME, 8, HS_ETL_THREAD_READY, HS_WAIT_WR_PREEMPTED, HS_ETL_WAIT_KERNEL_MODE, hog, hog_pri);
	sw(&s, 0, 160, hog, hog_pri, HS_ETL_THREAD_WAITING, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, FRAME, 8);
	wait_out(&s, 0, 170, FRAME, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0, 0);
	scene_close(&s);
	hs_cause_result r;
	CHECK(analyse(s.path, FRAME, 5, 165, &r) == HS_OK);
	const hs_cause_reason *k = expect_top("contention", &r, "cpu-contention", 150);
	expect_task(k, (int32_t)hog, (int32_t)(hog - 1), hog == RT ? "rt.exe" : "hog.exe");
	if (k && hog == RT) {
		/* the real-time class keeps its number */
		CHECK_EQ_STR(k->culprit.policy, "real-time");
		CHECK_EQ_INT(k->culprit.priority, 24);
	} else if (k) {
		CHECK_EQ_STR(k->culprit.policy, "normal");
		CHECK(k->culprit.prio < 120); /* stronger than the frame thread's normal priority */
	}
	const hs_cause_reason *app = reason(&r, "app-cpu");
	CHECK(app && dist((double)app->ns, 5e6) < 2000);
	CHECK_EQ_INT(r.cov1 - r.cov0, 155000000u); /* the records vouch for the window up to its last one, at 160 ms */
	CHECK_CONTAINS(r.clause, hog == RT ? "rt.exe" : "hog.exe");
	CHECK_EQ_STR(r.comm, "game.exe");
	CHECK_EQ_INT(r.tgid, GAME);
	hs_cause_result_free(&r);
}

/* Sleep(100): a DelayExecution wait a timer DPC ends. */
static void test_sleep(void)
{
	scene s;
	scene_open(&s, "sleep.etl");
	sw(&s, 0, 1, 0, 0, HS_ETL_THREAD_READY, 0, 0, FRAME, 8);
	wait_out(&s, 0, 10, FRAME, HS_WAIT_DELAY_EXECUTION, HS_ETL_WAIT_USER_MODE, 0, 0);
	ready(&s, 0, 110, 0, FRAME, HS_ETL_READY_FROM_DPC);
	sw(&s, 0, 110.05, 0, 0, HS_ETL_THREAD_READY, 0, 0, FRAME, 10);
	wait_out(&s, 0, 120, FRAME, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0, 0);
	scene_close(&s);
	hs_cause_result r;
	CHECK(analyse(s.path, FRAME, 5, 115, &r) == HS_OK);
	const hs_cause_reason *k = expect_top("sleep", &r, "sleep", 100);
	expect_task(k, FRAME, GAME, "game.exe"); /* its own */
	if (k)
		CHECK_CONTAINS(k->what, "DelayExecution");
	CHECK(r.n_wakes == 1 && r.wakes[0].waker == -1); /* a DPC, not a task */
	hs_cause_result_free(&r);
}

/* A 100 ms wait of the frame thread that waker (on CPU 1) ends; reason and mode of the wait given. */
static void waited_for(scene *s, uint32_t waker, int8_t reason, int8_t mode, uint8_t flag)
{
	sw(s, 0, 1, 0, 0, HS_ETL_THREAD_READY, 0, 0, FRAME, 8);
	if (waker)
		sw(s, 1, 1, 0, 0, HS_ETL_THREAD_READY, 0, 0, waker, 8);
	wait_out(s, 0, 10, FRAME, reason, mode, 0, 0);
	ready(s, 1, 110, waker, FRAME, flag);
	sw(s, 0, 110.02, 0, 0, HS_ETL_THREAD_READY, 0, 0, FRAME, 9);
	if (waker)
		wait_out(s, 1, 111, waker, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0, 0);
	wait_out(s, 0, 120, FRAME, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0, 0);
}

static hs_cause_result wait_scene(const char *name, uint32_t waker, int8_t reason, int8_t mode, uint8_t flag)
{
	scene s;
	scene_open(&s, name);
	waited_for(&s, waker, reason, mode, flag);
	scene_close(&s);
	hs_cause_result r;
	CHECK(analyse(s.path, FRAME, 5, 115, &r) == HS_OK);
	return r;
}

static void test_waits(void)
{
	/* A UserRequest wait (an event, a critical section's fallback) a thread of its own process ends: the waker
	 * classifiers say lock wait, culprit the releaser, and what the releaser did meanwhile. */
	hs_cause_result r = wait_scene("lock.etl", WORKER, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0);
	const hs_cause_reason *k = expect_top("lock (UserRequest)", &r, "lock-wait", 100);
	expect_task(k, WORKER, GAME, "game.exe");
	if (k)
		CHECK(k->chain[0] != '\0');
	hs_cause_result_free(&r);

	/* The same wait ended by another process: IPC. */
	r = wait_scene("ipc.etl", SERVER, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0);
	k = expect_top("ipc (UserRequest)", &r, "ipc-wait", 100);
	expect_task(k, SERVER, 300, "server.exe");
	hs_cause_result_free(&r);

	/* A push lock is a lock wait by its reason, even when another process's thread released it. */
	r = wait_scene("pushlock.etl", SERVER, HS_WAIT_WR_PUSH_LOCK, HS_ETL_WAIT_KERNEL_MODE, 0);
	k = expect_top("lock (WrPushLock)", &r, "lock-wait", 100);
	expect_task(k, SERVER, 300, "server.exe");
	if (k)
		CHECK_CONTAINS(k->what, "WrPushLock");
	hs_cause_result_free(&r);

	/* A push lock still held when the window ends: its reason says lock wait; nobody is named yet (not the
	 * waiting thread itself, as a sleep would name). */
	{
		scene s;
		scene_open(&s, "pushlock-open.etl");
		sw(&s, 0, 1, 0, 0, HS_ETL_THREAD_READY, 0, 0, FRAME, 8);
		sw(&s, 1, 1, 0, 0, HS_ETL_THREAD_READY, 0, 0, WORKER, 8);
		wait_out(&s, 0, 10, FRAME, HS_WAIT_WR_PUSH_LOCK, HS_ETL_WAIT_KERNEL_MODE, 0, 0);
		wait_out(&s, 1, 50, WORKER, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0, 0);
		scene_close(&s);
		CHECK(analyse(s.path, FRAME, 5, 60, &r) == HS_OK);
		k = expect_top("lock (WrPushLock, still waiting)", &r, "lock-wait", 40);
		expect_thing(k, "nothing yet: the wait had not ended");
		hs_cause_result_free(&r);
	}

	/* An ALPC reply is IPC by its reason. */
	r = wait_scene("alpc.etl", SERVER, HS_WAIT_WR_LPC_REPLY, HS_ETL_WAIT_USER_MODE, 0);
	k = expect_top("ipc (WrLpcReply)", &r, "ipc-wait", 100);
	expect_task(k, SERVER, 300, "server.exe");
	if (k)
		CHECK_CONTAINS(k->what, "WrLpcReply");
	hs_cause_result_free(&r);

	/* A page read: a kernel-mode PageIn wait (D) the disk's completion DPC ends. */
	r = wait_scene("pagein.etl", 0, HS_WAIT_PAGE_IN, HS_ETL_WAIT_KERNEL_MODE, HS_ETL_READY_FROM_DPC);
	k = expect_top("fault-io", &r, "fault-io", 100);
	expect_thing(k, "the disk");
	CHECK(r.state_ns[CM_ST_DISK] > 99000000u);
	hs_cause_result_free(&r);

	/* SuspendThread, and the debugger's thread that resumed it. */
	r = wait_scene("suspend.etl", DEBUGGER, HS_WAIT_SUSPENDED, HS_ETL_WAIT_KERNEL_MODE, 0);
	k = expect_top("stopped", &r, "stopped", 100);
	expect_task(k, DEBUGGER, 400, "debugger.exe");
	CHECK(r.state_ns[CM_ST_STOPPED] > 99000000u);
	hs_cause_result_free(&r);

	/* A job object's CPU rate control parks the thread until its next interval. */
	r = wait_scene("ratecontrol.etl", 0, HS_WAIT_WR_CPU_RATE_CONTROL, HS_ETL_WAIT_KERNEL_MODE, HS_ETL_READY_FROM_DPC);
	k = expect_top("cgroup-throttle", &r, "cgroup-throttle", 100);
	expect_thing(k, "its job object's CPU rate limit");
	hs_cause_result_free(&r);

	/* A user-mode PageIn wait is not uninterruptible: S, and still the page read by its reason. */
	r = wait_scene("pagein-user.etl", 0, HS_WAIT_PAGE_IN, HS_ETL_WAIT_USER_MODE, HS_ETL_READY_FROM_DPC);
	expect_top("fault-io (user mode)", &r, "fault-io", 100);
	CHECK(r.state_ns[CM_ST_SLEEP] > 99000000u);
	hs_cause_result_free(&r);
}

/*
 * The worker on CPU 1 readies the frame thread 3 us before CPU 0 logs the frame thread's switch-out (a wait's
 * end that came while the thread was still switching away). The wake-up belongs after the switch-out: the thread
 * then waits runnable for CPU 0, which hog.exe has; without that the wait would have no end and its 30 ms no
 * explanation. With waker_leaves, the worker itself waits between the two records: no record may then make it
 * seem to run again, and the thread counts as runnable from its switch-out.
 */
static void test_ready_before_switch_out(bool waker_leaves)
{
	scene s;
	scene_open(&s, waker_leaves ? "early-wake-gone.etl" : "early-wake.etl");
	sw(&s, 0, 1, 0, 0, HS_ETL_THREAD_READY, 0, 0, FRAME, 8);
	sw(&s, 1, 1, 0, 0, HS_ETL_THREAD_READY, 0, 0, WORKER, 8);
	ready(&s, 1, 10.000, WORKER, FRAME, 0);
	if (waker_leaves)
		wait_out(&s, 1, 10.001, WORKER, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0, 0);
	wait_out(&s, 0, 10.003, FRAME, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, HOG, 15);
	wait_out(&s, 0, 40, HOG, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, FRAME, 9);
	if (!waker_leaves)
		wait_out(&s, 1, 50, WORKER, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0, 0);
	wait_out(&s, 0, 50, FRAME, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0, 0);
	scene_close(&s);
	hs_cause_result r;
	CHECK(analyse(s.path, FRAME, 5, 45, &r) == HS_OK);
	const char *name = waker_leaves ? "early wake, waker gone" : "early wake";
	const hs_cause_reason *k = expect_top(name, &r, "cpu-contention", 29.997);
	expect_task(k, HOG, 200, "hog.exe");
	const hs_cause_reason *none = reason(&r, "insufficient-data");
	CHECK(!none || none->ns < 1000);
	CHECK(r.state_ns[CM_ST_READY] > 29990000u);
	CHECK_EQ_INT(r.unrecorded_switches, 0);
	if (waker_leaves) {
		CHECK_EQ_INT(r.n_wakes, 0);
	} else {
		CHECK_EQ_INT(r.n_wakes, 1);
		if (r.n_wakes) {
			CHECK_EQ_INT(r.wakes[0].waker, WORKER);
			CHECK_EQ_INT(r.wakes[0].cpu, 1);
			CHECK_EQ_INT(r.wakes[0].ts, 10003001u); /* 1 ns after the switch-out */
		}
	}
	hs_cause_result_free(&r);
}

/* The reader itself: threads' processes and names, a ReadyThread's CPU, the encoded state of a switch. */
static void test_model(void)
{
	scene s;
	scene_open(&s, "model.etl");
	waited_for(&s, WORKER, HS_WAIT_WR_PUSH_LOCK, HS_ETL_WAIT_KERNEL_MODE, 0);
	scene_close(&s);
	cm_model m;
	cm_init(&m, 0, UINT64_MAX / 2);
	char why[300] = "";
	CHECK(cm_read_etl(&m, s.path, false, why, sizeof why) == HS_OK);
	cm_finish(&m);
	CHECK(m.has_switch && m.has_wake);
	CHECK_EQ_INT(m.ncpu, 2);
	const cm_task *t = cm_task_find(&m, FRAME);
	CHECK(t && t->tgid == GAME && !strcmp(cm_str(&m, t->comm), "game.exe"));
	const cm_task *p = cm_task_find(&m, 300);
	CHECK(p && !strcmp(cm_str(&m, p->comm), "server.exe"));
	unsigned switches = 0, wakes = 0;
	for (size_t i = 0; i < m.n; i++) {
		const cm_rec *r = &m.recs[i];
		if (r->kind == CM_SWITCH && r->a == FRAME && (r->x & 0xff)) {
			switches++;
			/* PushLock in kernel mode: a sleep (not a paging wait), its reason + 1 above */
			if (r->ts == 10000000u) {
				CHECK_EQ_INT(r->x & 0xff, 0x01);
				CHECK_EQ_INT(r->x >> 32, HS_WAIT_WR_PUSH_LOCK + 1);
				CHECK_EQ_INT(r->y, 120); /* priority 8 on the model's scale */
				CHECK_EQ_STR(cm_str(&m, r->s), "game.exe");
			}
		}
		if (r->kind == CM_WAKE && r->a == FRAME) {
			wakes++;
			CHECK_EQ_INT(r->pid, WORKER);
			CHECK_EQ_INT(r->ctx, CM_CTX_TASK);
			CHECK_EQ_INT(r->cpu, 1);
			CHECK_EQ_INT(r->b, 0); /* the CPU it ran on next */
		}
	}
	CHECK_EQ_INT(switches, 2);
	CHECK_EQ_INT(wakes, 1);
	cm_free(&m);
}

/* Every real fixture is read without error; none logs a context switch, so none can be split, and the analysis
 * says so rather than guess. net.4.5.2.x86.etl's thread and process rundowns name thread 3708 (Test.x86.exe,
 * pid 3644, as tests/etl/test_etl_kernel.c finds independently). */
static const char *const fixtures[] = {
	"airbus-cert_etl-parser/AMSITrace.etl",
	"airbus-cert_etl-parser/lxcore_kernel.etl",
	"microsoft_perfview/smallEtlFile.etl",
	"microsoft_perfview/SelfDescribingSingleEvent.etl",
	"microsoft_perfview/primitive-types.etl",
	"microsoft_perfview/gcevents_PerfViewData.etl",
	"microsoft_perfview/gcrundownevents_PerfViewData.clrRundown.etl",
	"microsoft_perfview/diaghub.user_injected.1.etl",
	"microsoft_perfview/diaghub.kernel.1.etl",
	"microsoft_perfview/net.4.5.2.x86.etl",
	"microsoft_krabsetw/powershell.etl",
	"rbeesley_hw3d/trace.etl",
	"jtmoon79_super-speedy-syslog-searcher/SIH.20230422.034724.362.1.etl",
	"jtmoon79_super-speedy-syslog-searcher/WindowsUpdate.20251008.140245.443.8.etl",
};

static void test_fixtures(void)
{
	for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", HS_TEST_FIXTURES_DIR, fixtures[i]);
		cm_model m;
		cm_init(&m, 0, UINT64_MAX / 2);
		char why[300] = "";
		hs_status st = cm_read_etl(&m, path, false, why, sizeof why);
		if (st != HS_OK)
			fprintf(stderr, "%s: %s\n", fixtures[i], why);
		CHECK(st == HS_OK);
		cm_finish(&m);
		CHECK(!m.has_switch && !m.has_wake);
		if (strstr(fixtures[i], "net.4.5.2")) {
			const cm_task *t = cm_task_find(&m, 3708);
			CHECK(t && t->tgid == 3644);
			const cm_task *p = cm_task_find(&m, 3644);
			CHECK(p && !strcmp(cm_str(&m, p->comm), "Test.x86.exe"));
			CHECK(t && !strcmp(cm_str(&m, t->comm), "Test.x86.exe"));
		}
		if (strstr(fixtures[i], "diaghub.kernel")) {
			const cm_task *p = cm_task_find(&m, 4);
			CHECK(p && !strcmp(cm_str(&m, p->comm), "System"));
		}
		cm_free(&m);
		hs_cause_result r;
		CHECK(analyse(path, 3708, 0, 1e12, &r) == HS_OK); /* 31 years of ns: past any fixture */
		CHECK(!r.analysed);
		CHECK_CONTAINS(r.why, "no scheduler switch records");
		hs_cause_result_free(&r);
	}
}

/* The ring is read by what it is, not by its name: a trace.dat goes to its reader, anything else to the .etl
 * reader, which refuses what is not one. */
static void test_sniffing(void)
{
	hs_cause_result r;
	CHECK(analyse(HS_TEST_RULES_DIR "/causes.yaml", 1, 0, 1000, &r) == HS_OK);
	CHECK(!r.analysed);
	CHECK_CONTAINS(r.why, "neither a trace.dat nor an .etl file");
	hs_cause_result_free(&r);
	/* a trace.dat goes to its own reader (which, in a build without libtracecmd, says it cannot read one) */
	CHECK(analyse(HS_TEST_SOURCE_DIR "/tests/analyze/thread-fixture.dat", 1, 0, 1e12, &r) == HS_OK);
	CHECK(!strstr(r.why, "neither a trace.dat nor an .etl"));
	CHECK(!strstr(r.why, "no scheduler switch records")); /* it has them */
	hs_cause_result_free(&r);
	/* an .etl named like a trace.dat is still an .etl */
	scene s;
	scene_open(&s, "named-wrong.dat");
	waited_for(&s, WORKER, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, 0);
	scene_close(&s);
	CHECK(analyse(s.path, FRAME, 5, 115, &r) == HS_OK);
	expect_top("named .dat", &r, "lock-wait", 100);
	hs_cause_result_free(&r);
}

int main(void)
{
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	if (hs_rules_load(HS_TEST_RULES_DIR "/causes.yaml", d, &rs) != HS_OK || !rs || !rs->causes.present) {
		fprintf(stderr, "cannot load %s/causes.yaml\n", HS_TEST_RULES_DIR);
		return 2;
	}
	vocab = &rs->causes;
	fixture_init();
	test_contention(15, HOG);
	test_contention(24, RT);
	test_sleep();
	test_waits();
	test_ready_before_switch_out(false);
	test_ready_before_switch_out(true);
	test_model();
	test_fixtures();
	test_sniffing();
	fixture_cleanup();
	hs_rules_free(rs);
	hs_diags_free(d);
	return hs_test_done("unit:cause_etl");
}
