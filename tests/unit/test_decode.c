/* test_decode.c: unit tests for the event layer's decoder (hindsight/event_decode.h): its Linux tables, hs_utf8_clean, and every kind it decodes from two recorded trace.dat fixtures. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hindsight/event.h"
#include "hindsight/event_decode.h"
#include "hindsight/tracedat.h"

enum { N_KINDS = 64 };

static void test_tables(void)
{
	char b[24];
	CHECK_EQ_STR(hs_linux_signal_name(11, b, sizeof b), "SIGSEGV");
	CHECK_EQ_STR(hs_linux_signal_name(6, b, sizeof b), "SIGABRT");
	CHECK_EQ_STR(hs_linux_signal_name(40, b, sizeof b), "signal 40");
	CHECK_EQ_STR(hs_linux_signal_name(-1, b, sizeof b), "signal -1");
	CHECK_EQ_INT(hs_linux_signal_action(11), HS_SIGACT_CORE);
	CHECK_EQ_INT(hs_linux_signal_action(9), HS_SIGACT_TERM);
	CHECK_EQ_INT(hs_linux_signal_action(17), HS_SIGACT_IGNORE);
	CHECK_EQ_INT(hs_linux_signal_action(19), HS_SIGACT_STOP);
	CHECK_EQ_INT(hs_linux_signal_action(40), HS_SIGACT_TERM); /* a real-time signal */
	CHECK_EQ_INT(hs_linux_signal_action(0), HS_SIGACT_IGNORE);

	/* prev_state: TASK_REPORT bits, and TASK_REPORT_MAX (0x100) for a preemption */
	CHECK_EQ_INT(hs_linux_task_state(0), HS_TASK_RUNNABLE);
	CHECK_EQ_INT(hs_linux_task_state(0x100), HS_TASK_PREEMPTED);
	CHECK_EQ_INT(hs_linux_task_state(0x01), HS_TASK_SLEEP);
	CHECK_EQ_INT(hs_linux_task_state(0x80), HS_TASK_SLEEP); /* I: an idle kernel thread */
	CHECK_EQ_INT(hs_linux_task_state(0x02), HS_TASK_DISK);
	CHECK_EQ_INT(hs_linux_task_state(0x04), HS_TASK_STOPPED);
	CHECK_EQ_INT(hs_linux_task_state(0x08), HS_TASK_STOPPED);
	CHECK_EQ_INT(hs_linux_task_state(0x10), HS_TASK_DEAD);
	CHECK_EQ_INT(hs_linux_task_state(0x20), HS_TASK_DEAD);
	CHECK_EQ_INT(hs_linux_task_state(0x40), HS_TASK_OTHER);

	CHECK_EQ_STR(hs_linux_softirq_name(1, b, sizeof b), "TIMER");
	CHECK_EQ_STR(hs_linux_softirq_name(3, b, sizeof b), "NET_RX");
	CHECK_EQ_STR(hs_linux_softirq_name(9, b, sizeof b), "RCU");
	CHECK_EQ_STR(hs_linux_softirq_name(10, b, sizeof b), "softirq 10");
}

static void test_utf8(void)
{
	char b[64];
	hs_utf8_clean("plain", b, sizeof b);
	CHECK_EQ_STR(b, "plain");
	hs_utf8_clean("a\xff" "b", b, sizeof b);
	CHECK_EQ_STR(b, "a\xEF\xBF\xBD" "b");
	hs_utf8_clean("a\tb\n", b, sizeof b); /* a control character is a space; the final newline goes */
	CHECK_EQ_STR(b, "a b");
	hs_utf8_clean("\xC0\x80", b, sizeof b); /* an overlong NUL: two bad bytes */
	CHECK_EQ_STR(b, "\xEF\xBF\xBD\xEF\xBF\xBD");
	hs_utf8_clean("\xED\xA0\x80", b, sizeof b); /* a UTF-16 surrogate */
	CHECK_EQ_STR(b, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	hs_utf8_clean("\xF4\x90\x80\x80", b, sizeof b); /* above U+10FFFF */
	CHECK(strncmp(b, "\xEF\xBF\xBD", 3) == 0);
	hs_utf8_clean("h\xC3\xA9llo", b, 6); /* cut on a character boundary */
	CHECK_EQ_STR(b, "h\xC3\xA9");
	hs_utf8_clean("\xE2\x82\xAC ok", b, sizeof b);
	CHECK_EQ_STR(b, "\xE2\x82\xAC ok");
}

/* A record without named fields (ETL today) is nothing, unless its catalog entry tags it. */
static void test_no_fields(void)
{
	hs_event e = {.format = HS_EVENT_ETL};
	CHECK_EQ_INT(hs_event_decode_kind(&e, NULL), HS_DEC_NONE);
	CHECK_EQ_INT(hs_event_decode_kind(&e, "gpu-reset"), HS_DEC_ALERT);
	CHECK_EQ_INT(hs_event_decode_kind(&e, "hang"), HS_DEC_HANG);
	hs_event_decoded d;
	CHECK(hs_event_decode(&e, HS_DEC_ALERT, "gpu-reset", "dwm.exe", &d));
	CHECK_EQ_STR(d.detail, "gpu-reset event (catalog alert)");
	CHECK(!hs_event_decode(&e, HS_DEC_NONE, NULL, "x", &d));
}

typedef struct {
	unsigned n[N_KINDS];    /* decoded, by kind */
	unsigned kinds[N_KINDS]; /* recognised (decode may still refuse), by kind */
	int pid;                 /* the fixture's workload */
	/* replay fixture */
	unsigned true_execs, fsync_enters, fsync_ok_exits, exit3;
	/* thread fixture */
	unsigned segv_delivered, segv_sent, wakes_by_sleep, wake_ctx_bad, sleeps, switch_bad, soft_named;
	unsigned irq_named;
} walk;

static int on_record(const hs_tracedat_record *rec, void *ctx)
{
	walk *w = ctx;
	hs_event ev;
	hs_event_from_tracedat(rec, &ev);
	hs_decoded_kind k = hs_event_decode_kind(&ev, NULL);
	if ((unsigned)k >= N_KINDS)
		return 1;
	w->kinds[k]++;
	hs_event_decoded d;
	if (k == HS_DEC_NONE || !hs_event_decode(&ev, k, NULL, rec->comm ? rec->comm : "?", &d))
		return 0;
	CHECK_EQ_INT(d.kind, k);
	CHECK(d.detail[0] || k == HS_DEC_EXIT); /* an exit's line needs its past: the report writes it */
	w->n[k]++;
	switch (k) {
	case HS_DEC_EXEC: w->true_execs += !strcmp(d.subject, "/bin/true") && d.v[0] == rec->pid; break;
	case HS_DEC_EXIT_GROUP: w->exit3 += d.v[0] == 3 && strstr(d.detail, "exits with status 3") != NULL; break;
	case HS_DEC_SYSCALL_ENTER:
		w->fsync_enters += !strcmp(d.subject, "fsync") && d.v[1] == 3 && strstr(d.detail, "calls fsync(fd 3)");
		break;
	case HS_DEC_SYSCALL_EXIT: w->fsync_ok_exits += !strcmp(d.subject, "fsync") && d.v[1] == 0; break;
	case HS_DEC_SIG_DELIVER: w->segv_delivered += d.v[0] == 11 && d.v[1] == 1 && rec->pid == w->pid; break;
	case HS_DEC_SIG_GENERATE: w->segv_sent += d.v[0] == 11 && d.v[1] == w->pid; break;
	case HS_DEC_WAKE:
		w->wake_ctx_bad += d.v[2] < 0 || d.v[2] > 2;
		w->wakes_by_sleep += d.v[0] == w->pid && d.v[2] == 0 && rec->comm && !strcmp(rec->comm, "sleep");
		break;
	case HS_DEC_SWITCH:
		w->switch_bad += d.v[0] == d.v[1] && d.v[0] != 0;
		/* the workload waits for its sleep child in wait4: it leaves the CPU in S */
		w->sleeps += d.v[0] == w->pid && hs_linux_task_state(d.v[2]) == HS_TASK_SLEEP;
		break;
	case HS_DEC_SOFTIRQ_ENTRY:
	case HS_DEC_SOFTIRQ_EXIT: w->soft_named += strncmp(d.subject, "softirq ", 8) != 0; break;
	case HS_DEC_IRQ_ENTRY: w->irq_named += d.subject[0] != '\0'; break;
	default: break;
	}
	return 0;
}

static bool walk_file(const char *name, walk *w)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", HS_TEST_SOURCE_DIR, name);
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open(path, &td);
	if (st == HS_EUNSUPPORTED) {
		hs_tracedat_close(td);
		return false;
	}
	CHECK_EQ_INT(st, HS_OK);
	if (st == HS_OK)
		CHECK_EQ_INT(hs_tracedat_foreach(td, on_record, w), HS_OK);
	hs_tracedat_close(td);
	return st == HS_OK;
}

/* tests/replay/fixture.dat: 6 x (/bin/true, sync FILE, sleep 0.2), sh -c 'exit 3' (tests/replay/make-fixture.sh) */
static void test_replay_fixture(void)
{
	walk w = {.pid = -1};
	if (!walk_file("tests/replay/fixture.dat", &w)) {
		printf("test_decode: note: no trace.dat reader on this platform, fixtures skipped\n");
		return;
	}
	CHECK_EQ_INT(w.true_execs, 6);
	CHECK_EQ_INT(w.exit3, 1);
	CHECK_EQ_INT(w.fsync_enters, 6);
	CHECK_EQ_INT(w.fsync_ok_exits, 6);
	CHECK(w.n[HS_DEC_FORK] >= 19);
	CHECK(w.n[HS_DEC_EXIT] >= 19);
	CHECK(w.n[HS_DEC_SWITCH] > 0 && w.n[HS_DEC_WAKE] > 0);
	CHECK_EQ_INT(w.switch_bad, 0);
	/* nothing of a crash, a kill or a stall in it */
	CHECK_EQ_INT(w.n[HS_DEC_SIG_DELIVER] + w.n[HS_DEC_OOM_VICTIM] + w.n[HS_DEC_RECLAIM_BEGIN], 0);
}

/* tests/analyze/thread-fixture.dat: bash (pid 1358) spins, waits 0.6 s for a sleep child, spins, raises SIGSEGV
 * (tests/analyze/make-thread-fixture.sh): signals, switches, wake-ups from tasks and interrupts, softirqs */
static void test_thread_fixture(void)
{
	walk w = {.pid = 1358};
	if (!walk_file("tests/analyze/thread-fixture.dat", &w))
		return;
	CHECK_EQ_INT(w.segv_delivered, 1);
	CHECK_EQ_INT(w.segv_sent, 1);
	CHECK(w.wakes_by_sleep >= 1);
	CHECK_EQ_INT(w.wake_ctx_bad, 0);
	CHECK(w.sleeps >= 1);
	CHECK_EQ_INT(w.switch_bad, 0);
	CHECK(w.n[HS_DEC_SOFTIRQ_ENTRY] > 0 && w.n[HS_DEC_SOFTIRQ_EXIT] > 0);
	CHECK_EQ_INT(w.soft_named, w.n[HS_DEC_SOFTIRQ_ENTRY] + w.n[HS_DEC_SOFTIRQ_EXIT]);
	CHECK_EQ_INT(w.irq_named, w.n[HS_DEC_IRQ_ENTRY]);
	/* a softirq's raise has the same layout as its entry and exit: it is not decoded */
	CHECK_EQ_INT(w.kinds[HS_DEC_SOFTIRQ_ENTRY], w.n[HS_DEC_SOFTIRQ_ENTRY]);
	/* the page fault of the NULL access is not in this recording; a signal kill (SIGKILL) neither */
	CHECK_EQ_INT(w.n[HS_DEC_FAULT], 0);
}

int main(void)
{
	test_tables();
	test_utf8();
	test_no_fields();
	test_replay_fixture();
	test_thread_fixture();
	return hs_test_done("test_decode");
}
