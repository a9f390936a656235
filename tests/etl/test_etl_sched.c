/* test_etl_sched.c: the scheduler decoders (CSwitch, ReadyThread) on synthetic payloads of every documented version and header kind, their truncations, a written and read-back file, and the real fixtures (none logs a context switch; FileIo's opcode 36 must not read as one); the wait reason names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "etl/etl_format.h"
#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/etl_writer.h"
#include "hindsight/wait_reason.h"
#include "sched_records.h"
#include "hindsight/compat.h"

#ifdef _WIN32
#include <direct.h>
#define rm_dir _rmdir
#else
#include <unistd.h>
#define rm_dir rmdir
#endif

#ifndef HS_TEST_FIXTURES_DIR
#error "HS_TEST_FIXTURES_DIR must point at the shared .etl fixtures"
#endif

/* Reads the one record sr_kernel built (the reader's own header decoding, through a one-buffer file in memory
 * would be heavier: the record's fields are set as the reader sets them, checked against it in test_file). */
static hs_etl_record rec_of(const uint8_t *raw, uint8_t header_type, uint8_t group, uint8_t opcode, uint8_t version,
			    uint32_t tid, const uint8_t *payload, size_t n)
{
	hs_etl_record r;
	memset(&r, 0, sizeof r);
	r.kind = header_type == HS_ETL_HT_SYSTEM64	? HS_ETL_SYSTEM
		 : header_type == HS_ETL_HT_COMPACT64 ? HS_ETL_COMPACT
							: HS_ETL_PERFINFO;
	r.header_type = header_type;
	r.ptr64 = true;
	r.group = group;
	r.opcode = opcode;
	r.version = version;
	r.pid = r.tid = UINT32_MAX;
	if (header_type != HS_ETL_HT_PERFINFO64) {
		r.tid = tid;
		r.pid = 77;
	}
	r.payload = payload;
	r.payload_len = n;
	r.raw = raw;
	return r;
}

static void test_cswitch(void)
{
	uint8_t p[64], raw[128];
	size_t n = sr_cswitch(p, 0x1111, 0x2222, 15, 8, HS_WAIT_WR_PUSH_LOCK, HS_ETL_WAIT_KERNEL_MODE, HS_ETL_THREAD_WAITING);
	CHECK_EQ_INT(n, 24);
	const uint8_t hts[] = {HS_ETL_HT_SYSTEM64, HS_ETL_HT_COMPACT64, HS_ETL_HT_PERFINFO64};
	for (int v = 2; v <= 5; v++)
		for (size_t h = 0; h < 3; h++) {
			(void)sr_kernel(raw, hts[h], 0x05, 36, (uint16_t)v, 0x2222, 77, 1000, p, n);
			hs_etl_record r = rec_of(raw, hts[h], 0x05, 36, (uint8_t)v, 0x2222, p, n);
			hs_etl_cswitch cs;
			CHECK(hs_etl_decode_cswitch(&r, &cs));
			CHECK_EQ_INT(cs.version, v);
			CHECK_EQ_INT(cs.new_tid, 0x1111);
			CHECK_EQ_INT(cs.old_tid, 0x2222);
			CHECK_EQ_INT(cs.new_priority, 15);
			CHECK_EQ_INT(cs.old_priority, 8);
			CHECK_EQ_INT(cs.previous_cstate, 1);
			CHECK_EQ_INT(cs.old_wait_reason, HS_WAIT_WR_PUSH_LOCK);
			CHECK_EQ_INT(cs.old_wait_mode, HS_ETL_WAIT_KERNEL_MODE);
			CHECK_EQ_INT(cs.old_state, HS_ETL_THREAD_WAITING);
			CHECK_EQ_INT(cs.new_wait_time, 1234);
			/* not a kind of the classifier: its callers' switches stay whole */
			CHECK_EQ_INT(hs_etlk_classify(&r), HS_ETLK_OTHER);
		}
	/* Signed bytes: a priority and a reason above 127 read negative, as the MOF's sint8 says. */
	p[8] = 0xFF;
	p[12] = 0x80;
	hs_etl_record r = rec_of(raw, HS_ETL_HT_COMPACT64, 0x05, 36, 2, 1, p, n);
	hs_etl_cswitch cs;
	CHECK(hs_etl_decode_cswitch(&r, &cs));
	CHECK_EQ_INT(cs.new_priority, -1);
	CHECK_EQ_INT(cs.old_wait_reason, -128);
	p[8] = 15;
	p[12] = HS_WAIT_WR_PUSH_LOCK;

	/* Every cut of a v2 payload fails; the prefix is copied to a buffer of its exact size (a sanitizer catches a
	 * read past it). Trailing bytes a newer version appends are ignored. */
	for (size_t len = 0; len < 24; len++) {
		uint8_t *cut = malloc(len ? len : 1);
		memcpy(cut, p, len);
		r = rec_of(raw, HS_ETL_HT_COMPACT64, 0x05, 36, 4, 1, cut, len);
		CHECK(!hs_etl_decode_cswitch(&r, &cs));
		free(cut);
	}
	uint8_t longer[32];
	memcpy(longer, p, 24);
	memset(longer + 24, 0xAB, 8);
	r = rec_of(raw, HS_ETL_HT_COMPACT64, 0x05, 36, 6, 1, longer, 32);
	CHECK(hs_etl_decode_cswitch(&r, &cs));
	CHECK_EQ_INT(cs.old_wait_reason, HS_WAIT_WR_PUSH_LOCK);

	/* Version 1 (Windows XP): 20 bytes, quanta where v2 has PreviousCState and SpareByte. */
	uint8_t v1[20];
	memcpy(v1, p, 20);
	v1[10] = 6; /* NewThreadQuantum */
	v1[11] = 3; /* OldThreadQuantum */
	for (size_t len = 0; len < 20; len++) {
		uint8_t *cut = malloc(len ? len : 1);
		memcpy(cut, v1, len);
		r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 36, 1, 1, cut, len);
		CHECK(!hs_etl_decode_cswitch(&r, &cs));
		free(cut);
	}
	uint8_t *exact = malloc(20);
	memcpy(exact, v1, 20);
	r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 36, 1, 1, exact, 20);
	CHECK(hs_etl_decode_cswitch(&r, &cs));
	CHECK_EQ_INT(cs.previous_cstate, 0); /* a quantum, not a C-state */
	CHECK_EQ_INT(cs.old_state, HS_ETL_THREAD_WAITING);
	CHECK_EQ_INT(cs.new_wait_time, 1234);
	/* ... but a v2 record of 20 bytes is cut */
	r.version = 2;
	CHECK(!hs_etl_decode_cswitch(&r, &cs));
	free(exact);

	/* Not a context switch: no version 0; another group's opcode 36 (FileIo's FileRundown, 2917 of them in
	 * net.4.5.2.x86.etl; StackWalk's KeyRundown); the thread group's other opcodes; a manifest event. */
	r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 36, 0, 1, p, n);
	CHECK(!hs_etl_decode_cswitch(&r, &cs));
	r = rec_of(raw, HS_ETL_HT_PERFINFO64, 0x04, 36, 2, 1, p, n);
	CHECK(!hs_etl_decode_cswitch(&r, &cs));
	r = rec_of(raw, HS_ETL_HT_PERFINFO64, 0x18, 36, 2, 1, p, n);
	CHECK(!hs_etl_decode_cswitch(&r, &cs));
	r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 50, 2, 1, p, n);
	CHECK(!hs_etl_decode_cswitch(&r, &cs));
	r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 36, 2, 1, p, n);
	r.kind = HS_ETL_EVENT;
	CHECK(!hs_etl_decode_cswitch(&r, &cs));
	r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 36, 2, 1, NULL, 0);
	CHECK(!hs_etl_decode_cswitch(&r, &cs));
}

static void test_ready_thread(void)
{
	uint8_t p[16], raw[64];
	size_t n = sr_ready(p, 0x3333, 1, 2, HS_ETL_READY_FROM_DPC | HS_ETL_READY_STACK_SWAPPED);
	CHECK_EQ_INT(n, 8);
	(void)sr_kernel(raw, HS_ETL_HT_SYSTEM64, 0x05, 50, 2, 0x4444, 77, 1000, p, n);
	hs_etl_record r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 50, 2, 0x4444, p, n);
	hs_etl_ready_thread rt;
	CHECK(hs_etl_decode_ready_thread(&r, &rt));
	CHECK_EQ_INT(rt.tid, 0x3333);
	CHECK_EQ_INT(rt.readier, 0x4444); /* the record's own thread is the waker */
	CHECK_EQ_INT(rt.adjust_reason, 1);
	CHECK_EQ_INT(rt.adjust_increment, 2);
	CHECK_EQ_INT(rt.flags, HS_ETL_READY_FROM_DPC | HS_ETL_READY_STACK_SWAPPED);
	CHECK_EQ_INT(hs_etlk_classify(&r), HS_ETLK_OTHER);
	/* A PERFINFO header names no thread. */
	r = rec_of(raw, HS_ETL_HT_PERFINFO64, 0x05, 50, 2, 0, p, n);
	CHECK(hs_etl_decode_ready_thread(&r, &rt));
	CHECK_EQ_INT(rt.readier, UINT32_MAX);
	for (size_t len = 0; len < 8; len++) {
		uint8_t *cut = malloc(len ? len : 1);
		memcpy(cut, p, len);
		r = rec_of(raw, HS_ETL_HT_COMPACT64, 0x05, 50, 2, 1, cut, len);
		CHECK(!hs_etl_decode_ready_thread(&r, &rt));
		free(cut);
	}
	/* Versions before the dispatcher events (Vista's v2), other opcodes and groups are not ReadyThread. */
	r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 50, 1, 1, p, n);
	CHECK(!hs_etl_decode_ready_thread(&r, &rt));
	r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x05, 36, 2, 1, p, n);
	CHECK(!hs_etl_decode_ready_thread(&r, &rt));
	r = rec_of(raw, HS_ETL_HT_SYSTEM64, 0x03, 50, 2, 1, p, n);
	CHECK(!hs_etl_decode_ready_thread(&r, &rt));
}

typedef struct {
	unsigned cswitch, ready, other;
	uint32_t first_old, last_new, readier;
	int64_t last_ts;
	bool ordered;
} walk;

static int on_written(const hs_etl_record *r, void *vctx)
{
	walk *w = vctx;
	hs_etl_cswitch cs;
	hs_etl_ready_thread rt;
	bool sched = hs_etl_decode_cswitch(r, &cs) || hs_etl_decode_ready_thread(r, &rt);
	if (sched && r->timestamp < w->last_ts)
		w->ordered = false; /* the logfile header's own time is the session's start, not among these */
	if (sched)
		w->last_ts = r->timestamp;
	if (hs_etl_decode_cswitch(r, &cs)) {
		if (!w->cswitch++)
			w->first_old = cs.old_tid;
		w->last_new = cs.new_tid;
	} else if (hs_etl_decode_ready_thread(r, &rt)) {
		w->ready++;
		w->readier = rt.readier;
	} else {
		w->other++;
	}
	return 0;
}

/* The records through the writer and the reader: the reader's header decoding gives the decoders what they need. */
static void test_file(const char *dir)
{
	char path[512];
	snprintf(path, sizeof path, "%s/sched.etl", dir);
	hs_etl_writer_opts o;
	hs_etl_writer_opts_default(&o);
	o.cpus = 2;
	hs_etl_writer *w = NULL;
	CHECK(hs_etl_writer_open(path, &o, &w) == HS_OK);
	if (!w)
		return;
	uint8_t p[64], raw[128];
	size_t n;
	/* CPU 0: compact CSwitch records (how Windows 8+ logs them); CPU 1: SYSTEM ones and a ReadyThread. */
	n = sr_cswitch(p, 100, 0, 9, 0, 0, 0, HS_ETL_THREAD_READY);
	n = sr_kernel(raw, HS_ETL_HT_COMPACT64, 0x05, 36, 4, 0, 0, 2000, p, n);
	CHECK(hs_etl_writer_add_raw(w, 0, raw, n) == HS_OK);
	n = sr_cswitch(p, 0, 100, 0, 9, HS_WAIT_USER_REQUEST, HS_ETL_WAIT_USER_MODE, HS_ETL_THREAD_WAITING);
	n = sr_kernel(raw, HS_ETL_HT_COMPACT64, 0x05, 36, 4, 100, 10, 3000, p, n);
	CHECK(hs_etl_writer_add_raw(w, 0, raw, n) == HS_OK);
	/* CPU 1's records come after CPU 0's in the file, before them in time: the time order merges */
	n = sr_cswitch(p, 200, 0, 10, 0, 0, 0, HS_ETL_THREAD_READY);
	n = sr_kernel(raw, HS_ETL_HT_SYSTEM64, 0x05, 36, 2, 0, 0, 1000, p, n);
	CHECK(hs_etl_writer_add_raw(w, 1, raw, n) == HS_OK);
	n = sr_ready(p, 100, 0, 0, 0);
	n = sr_kernel(raw, HS_ETL_HT_SYSTEM64, 0x05, 50, 2, 200, 20, 2500, p, n);
	CHECK(hs_etl_writer_add_raw(w, 1, raw, n) == HS_OK);
	CHECK(hs_etl_writer_close(w) == HS_OK);
	hs_etl *etl = NULL;
	CHECK(hs_etl_open(path, &etl) == HS_OK);
	if (!etl)
		return;
	walk wk = {.ordered = true};
	CHECK(hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_written, &wk) == HS_OK);
	CHECK_EQ_INT(wk.cswitch, 3);
	CHECK_EQ_INT(wk.ready, 1);
	CHECK_EQ_INT(wk.other, 1); /* the logfile header */
	CHECK(wk.ordered);
	CHECK_EQ_INT(wk.first_old, 0);  /* CPU 1's switch at 1000 first */
	CHECK_EQ_INT(wk.last_new, 0);   /* CPU 0's switch to idle at 3000 last */
	CHECK_EQ_INT(wk.readier, 200);
	CHECK_EQ_INT(hs_etl_problem_count(etl), 0);
	hs_etl_close(etl);
	remove(path);
}

/* The real files: none logs a context switch or a ready thread (their .counts have no kernel:0x05 opcode 36 or
 * 50), so nothing may decode as one; net.4.5.2.x86.etl's 2917 FileIo FileRundown records (kernel:0x04 opcode=36)
 * share CSwitch's opcode and must not. */
typedef struct {
	uint64_t cswitch, ready, thread_group_36_50, fileio_36;
} fx_walk;

static int on_fixture(const hs_etl_record *r, void *vctx)
{
	fx_walk *w = vctx;
	hs_etl_cswitch cs;
	hs_etl_ready_thread rt;
	w->cswitch += hs_etl_decode_cswitch(r, &cs);
	w->ready += hs_etl_decode_ready_thread(r, &rt);
	bool kernel = r->kind == HS_ETL_SYSTEM || r->kind == HS_ETL_COMPACT || r->kind == HS_ETL_PERFINFO;
	w->thread_group_36_50 += kernel && r->group == 0x05 && (r->opcode == 36 || r->opcode == 50);
	w->fileio_36 += kernel && r->group == 0x04 && r->opcode == 36;
	return 0;
}

/* The count the independent parser gives for "kernel:0xGG opcode=N" in a .counts file; 0 when absent, -1 when the
 * file cannot be read. */
static long long expected_count(const char *counts, unsigned group, unsigned opcode)
{
	FILE *f = hs_fopen(counts, "rb");
	if (!f)
		return -1;
	char want[64], line[256];
	snprintf(want, sizeof want, "kernel:0x%02x\topcode=%u\t", group, opcode);
	long long n = 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, want, strlen(want)))
			n = atoll(line + strlen(want));
	fclose(f);
	return n;
}

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
	uint64_t fileio_36 = 0;
	for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
		char path[1024], counts[1100];
		snprintf(path, sizeof path, "%s/%s", HS_TEST_FIXTURES_DIR, fixtures[i]);
		snprintf(counts, sizeof counts, "%s/expected/%s.counts", HS_TEST_FIXTURES_DIR, fixtures[i]);
		hs_etl *etl = NULL;
		if (hs_etl_open(path, &etl) != HS_OK) {
			fprintf(stderr, "missing fixture %s\n", path);
			CHECK(!"fixture present");
			continue;
		}
		fx_walk w = {0};
		CHECK(hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_fixture, &w) == HS_OK);
		hs_etl_close(etl);
		long long e36 = expected_count(counts, 0x05, 36), e50 = expected_count(counts, 0x05, 50);
		long long f36 = expected_count(counts, 0x04, 36);
		CHECK(e36 >= 0 && e50 >= 0 && f36 >= 0);
		CHECK_EQ_INT(w.thread_group_36_50, e36 + e50);
		CHECK_EQ_INT(w.cswitch, e36);
		CHECK_EQ_INT(w.ready, e50);
		CHECK_EQ_INT(w.fileio_36, f36);
		fileio_36 += w.fileio_36;
	}
	CHECK_EQ_INT(fileio_36, 2917); /* all in net.4.5.2.x86.etl */
}

static void test_wait_reasons(void)
{
	CHECK_EQ_STR(hs_wait_reason_name(HS_WAIT_EXECUTIVE), "Executive");
	CHECK_EQ_STR(hs_wait_reason_name(4), "DelayExecution");
	CHECK_EQ_STR(hs_wait_reason_name(5), "Suspended");
	CHECK_EQ_STR(hs_wait_reason_name(9), "WrPageIn");
	CHECK_EQ_STR(hs_wait_reason_name(14), "WrEventPair");
	CHECK_EQ_STR(hs_wait_reason_name(24), "WrCpuRateControl");
	CHECK_EQ_STR(hs_wait_reason_name(28), "WrPushLock");
	CHECK_EQ_STR(hs_wait_reason_name(36), "WrRundown"); /* the last the CSwitch class documents */
	CHECK_EQ_STR(hs_wait_reason_name(37), "WrAlertByThreadId");
	CHECK_EQ_STR(hs_wait_reason_name(42), "WrRcu");
	CHECK(hs_wait_reason_name(43) == NULL);
	CHECK(hs_wait_reason_name(-1) == NULL);
	CHECK_EQ_INT(hs_wait_reason_find("WrSpare0"), 14);
	CHECK_EQ_INT(hs_wait_reason_find("WrCpuRateControl"), HS_WAIT_WR_CPU_RATE_CONTROL);
	CHECK_EQ_INT(hs_wait_reason_find("delayexecution"), -1); /* Windows' spelling, case and all */
	CHECK_EQ_INT(hs_wait_reason_find("WrAlpcReceive"), -1);  /* no such KWAIT_REASON: ALPC waits as WrLpc* */
	CHECK_EQ_INT(hs_wait_reason_find(NULL), -1);
	const char *const *all = hs_wait_reason_names();
	int n = 0;
	for (; all[n]; n++) {
		CHECK_EQ_INT(hs_wait_reason_find(all[n]), n);
		for (int k = 0; k < n; k++)
			CHECK(strcmp(all[k], all[n]) != 0);
	}
	CHECK_EQ_INT(n, HS_WAIT_REASONS);
}

int main(void)
{
	char dir[256];
	const char *t = getenv("TMPDIR");
	if (!t || !*t)
		t = getenv("TEMP");
	snprintf(dir, sizeof dir, "%s/hs-sched-XXXXXX", t && *t ? t : "/tmp");
	if (!hs_mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	test_cswitch();
	test_ready_thread();
	test_file(dir);
	test_fixtures();
	test_wait_reasons();
	if (rm_dir(dir) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return hs_test_done("etl:sched");
}
