/* test_etw.c: the Windows backend under Wine: parameter blocks, GUIDs, errors, quoting, and the recording, launch and engine ctl call sequences through the recorder (the real-time consumer's: test_etw_realtime.c). */
#include "etw_test.h"
#include "etw/cmdline.h"
#include "hindsight/launch.h"
#include "ctl_main.h"
#include "hindsight/exitcodes.h"
#include "run/ctl.h"

static const char *fixture;

/* ---- parameter blocks ---- */

static void test_props(const hs_plan *plan)
{
	const hs_plan_session *keys = session_of(plan, HS_MODE_FILE_CIRCULAR);
	const hs_plan_session *ring = session_of(plan, HS_MODE_BUFFERING);
	CHECK(keys && ring);
	if (!keys || !ring)
		return;
	static hs_etw_props pr;
	hs_etw_props_for_start(&pr, &keys->etw, L"C:\\runs\\1\\keyevents.etl");
	CHECK_EQ_INT(pr.p.Wnode.BufferSize, keys->etw.wnode_buffer_size);
	CHECK_EQ_INT(pr.p.Wnode.BufferSize, 120 + 2 * 1024 * 2);
	CHECK_EQ_INT(pr.p.Wnode.Flags, WNODE_FLAG_TRACED_GUID);
	CHECK_EQ_INT(pr.p.Wnode.ClientContext, 1); /* qpc */
	CHECK(IsEqualGUID(&pr.p.Wnode.Guid, &GUID_NULL));
	CHECK_EQ_INT(pr.p.BufferSize, keys->session->buffer_size_kb);
	CHECK_EQ_INT(pr.p.MinimumBuffers, keys->session->min_buffers);
	CHECK_EQ_INT(pr.p.MaximumBuffers, keys->session->max_buffers);
	CHECK_EQ_INT(pr.p.MaximumFileSize, keys->session->max_file_mb);
	CHECK(pr.p.MaximumFileSize > 0); /* circular needs a size */
	/* Real time (a trigger watches this session) comes from the plan once it
	 * carries it, else the backend adds it (session.c; the goldens pin the result). */
	CHECK_EQ_INT(pr.p.LogFileMode & ~(ULONG)EVENT_TRACE_REAL_TIME_MODE, EVENT_TRACE_FILE_MODE_CIRCULAR);
	CHECK_EQ_INT(pr.p.LogFileMode, keys->etw.log_file_mode);
	CHECK_EQ_INT(pr.p.FlushTimer, keys->etw.flush_timer);
	CHECK(pr.p.FlushTimer == keys->session->flush_interval_s || (pr.p.LogFileMode & EVENT_TRACE_REAL_TIME_MODE));
	CHECK_EQ_INT(pr.p.EnableFlags, 0);
	CHECK_EQ_INT(pr.p.LoggerNameOffset, 120);
	CHECK_EQ_INT(pr.p.LogFileNameOffset, 120 + 2048);
	/* The file name is where the offset says, the session name comes first
	 * (StartTraceW copies it there itself, so it is left zero). */
	CHECK(!wcscmp((const WCHAR *)((const char *)&pr + pr.p.LogFileNameOffset), L"C:\\runs\\1\\keyevents.etl"));
	CHECK(pr.p.LoggerNameOffset < pr.p.LogFileNameOffset);
	CHECK_EQ_INT(pr.logger_name[0], 0);
	CHECK_EQ_INT(pr.p.NumberOfBuffers, 0);
	CHECK_EQ_INT(pr.p.AgeLimit, 0);

	hs_etw_props_for_start(&pr, &ring->etw, NULL);
	CHECK_EQ_INT(pr.p.LogFileMode, EVENT_TRACE_BUFFERING_MODE);
	CHECK_EQ_INT(pr.p.LogFileNameOffset, 0); /* no file until FLUSH */
	CHECK_EQ_INT(pr.p.MinimumBuffers, pr.p.MaximumBuffers);
	CHECK_EQ_INT((uint64_t)pr.p.MinimumBuffers * pr.p.BufferSize, ring->session->ring_mb * 1024);
	CHECK_EQ_INT(pr.p.LogFileMode & 0x01000000, 0); /* never paged memory: kernel providers */
	CHECK_EQ_INT(pr.p.FlushTimer, 0);

	hs_etw_props_for_control(&pr, L"C:\\runs\\1\\snap.etl");
	CHECK_EQ_INT(pr.p.Wnode.BufferSize, sizeof(hs_etw_props));
	CHECK_EQ_INT(pr.p.LoggerNameOffset, 120);
	CHECK_EQ_INT(pr.p.LogFileNameOffset, 2168);
	CHECK_EQ_INT(pr.p.BufferSize, 0);
	CHECK(!wcscmp(pr.log_file_name, L"C:\\runs\\1\\snap.etl"));
	hs_etw_props_for_control(&pr, NULL);
	CHECK_EQ_INT(pr.log_file_name[0], 0);
}

static void test_enable(const hs_plan *plan)
{
	const hs_plan_session *keys = session_of(plan, HS_MODE_FILE_CIRCULAR);
	static hs_etw_enable en;
	for (size_t i = 0; keys && i < keys->n_providers; i++) {
		const hs_plan_provider *pp = &keys->providers[i];
		CHECK_EQ_INT(hs_etw_enable_build(&en, pp), HS_OK);
		CHECK_EQ_INT(en.params.Version, 2);
		CHECK_EQ_INT(en.params.EnableProperty, pp->enable_property);
		CHECK_EQ_INT(en.params.ControlFlags, 0);
		CHECK(pp->whitelist);
		CHECK_EQ_INT(en.params.FilterDescCount, 1);
		CHECK(en.params.EnableFilterDesc == en.desc);
		CHECK_EQ_INT(en.desc[0].Type, 0x80000200u);
		const EVENT_FILTER_EVENT_ID *f = (const EVENT_FILTER_EVENT_ID *)(uintptr_t)en.desc[0].Ptr;
		CHECK(f == &en.ids.f);
		CHECK_EQ_INT(f->FilterIn, TRUE);
		CHECK_EQ_INT(f->Reserved, 0);
		CHECK_EQ_INT(f->Count, pp->n_events);
		CHECK_EQ_INT(en.desc[0].Size, 4 + 2 * pp->n_events);
		for (size_t k = 0; k < pp->n_events; k++)
			CHECK_EQ_INT(f->Events[k], pp->events[k].id);
	}
	/* The 64-id limit: 64 fits exactly, 65 is refused before Windows sees it. */
	static hs_plan_event ev[65];
	for (int i = 0; i < 65; i++)
		ev[i].id = 1000 + i;
	hs_provider prov = {.name = "Test", .kind = HS_PKIND_MANIFEST, .has_guid = true};
	hs_plan_provider pp = {.provider = &prov, .whitelist = true, .events = ev, .n_events = 64};
	CHECK_EQ_INT(hs_etw_enable_build(&en, &pp), HS_OK);
	CHECK_EQ_INT(en.desc[0].Size, 4 + 128);
	USHORT last;
	memcpy(&last, en.ids.bytes + 4 + 2 * 63, sizeof(last)); /* Events[] is declared [1] */
	CHECK_EQ_INT(last, 1063);
	pp.n_events = 65;
	CHECK_EQ_INT(hs_etw_enable_build(&en, &pp), HS_ELIMIT);
	/* A stack list on a manifest provider is a second (STACKWALK) filter. */
	pp.n_events = 2;
	pp.stack_events = ev + 10;
	pp.n_stack_events = 3;
	CHECK_EQ_INT(hs_etw_enable_build(&en, &pp), HS_OK);
	CHECK_EQ_INT(en.params.FilterDescCount, 2);
	CHECK_EQ_INT(en.desc[1].Type, 0x80001000u);
	CHECK_EQ_INT(en.stack_ids.f.Count, 3);
	CHECK_EQ_INT(en.stack_ids.f.Events[0], 1010);
	/* No whitelist, no filter. */
	pp.whitelist = false;
	pp.n_stack_events = 0;
	CHECK_EQ_INT(hs_etw_enable_build(&en, &pp), HS_OK);
	CHECK_EQ_INT(en.params.FilterDescCount, 0);
	CHECK(en.params.EnableFilterDesc == NULL);
}

static void test_guid(void)
{
	/* SystemTraceControlGuid as evntrace.h's DEFINE_GUID spells it, against our parse. */
	static const GUID sdk = {0x9e814aad, 0x3204, 0x11d2, {0x9a, 0x82, 0x00, 0x60, 0x08, 0xa8, 0x69, 0x39}};
	hs_guid g;
	CHECK(hs_guid_parse("9E814AAD-3204-11D2-9A82-006008A86939", &g));
	GUID w;
	hs_etw_guid(&w, &g);
	CHECK(IsEqualGUID(&w, &sdk));
	/* And the bytes as the kernel reads them: Data1..3 little-endian, Data4 as is. */
	static const unsigned char bytes[16] = {0xAD, 0x4A, 0x81, 0x9E, 0x04, 0x32, 0xD2, 0x11,
						0x9A, 0x82, 0x00, 0x60, 0x08, 0xA8, 0x69, 0x39};
	CHECK(!memcmp(&w, bytes, 16));
}

static void test_errors(void)
{
	static const ULONG named[] = {ERROR_ACCESS_DENIED, ERROR_ALREADY_EXISTS, ERROR_BAD_LENGTH, ERROR_MORE_DATA,
				      ERROR_INVALID_PARAMETER, ERROR_DISK_FULL, ERROR_NO_SYSTEM_RESOURCES,
				      ERROR_BAD_PATHNAME, ERROR_PATH_NOT_FOUND, ERROR_WMI_INSTANCE_NOT_FOUND,
				      ERROR_NOT_SUPPORTED, ERROR_CALL_NOT_IMPLEMENTED, ERROR_NOT_ALL_ASSIGNED,
				      ERROR_PRIVILEGE_NOT_HELD, ERROR_OUTOFMEMORY, ERROR_TIMEOUT, ERROR_MOD_NOT_FOUND};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		CHECK(hs_etw_error_name(named[i]) != NULL);
		CHECK(strlen(hs_etw_error_advice(named[i])) > 20);
		CHECK(hs_etw_error_status(named[i]) != HS_OK);
	}
	CHECK_EQ_INT(hs_etw_error_status(ERROR_SUCCESS), HS_OK);
	CHECK_EQ_INT(hs_etw_error_status(ERROR_ACCESS_DENIED), HS_EPERM);
	CHECK_EQ_INT(hs_etw_error_status(ERROR_NOT_ALL_ASSIGNED), HS_EPERM);
	CHECK_EQ_INT(hs_etw_error_status(ERROR_WMI_INSTANCE_NOT_FOUND), HS_ENOENT);
	CHECK(hs_etw_error_name(12345) == NULL);
	CHECK_CONTAINS(hs_etw_error_advice(12345), "certutil -error");
	CHECK_CONTAINS(hs_etw_error_advice(ERROR_ACCESS_DENIED), "Run as administrator");
	CHECK_CONTAINS(hs_etw_error_advice(ERROR_DISK_FULL), "200 MB");
	CHECK_CONTAINS(hs_etw_error_advice(ERROR_NO_SYSTEM_RESOURCES), "logman query -ets");
	FILE *m = msg_open();
	CHECK_EQ_INT(hs_etw_report(msg_sink(m), ERROR_DISK_FULL, "StartTraceW(%s)", "X"), HS_EIO);
	char *text = msg_take(m);
	CHECK_CONTAINS(text, "engine: StartTraceW(X) failed: ERROR_DISK_FULL (112): not enough free disk space");
	free(text);
}

/* Quoting round trip through Windows' own splitter (Wine's shell32). */
static void test_cmdline(void)
{
	static const char *const words[] = {"plain", "two words", "", "tab\there", "quote\"inside",
					     "trailing\\", "C:\\dir with space\\", "back\\\\\"slash", "\\\\server\\share",
					     "ünïcödé", NULL};
	char *cmd = hs_win_cmdline("C:\\Program Files\\game\\game.exe", (char *const *)words);
	CHECK(cmd != NULL);
	if (!cmd)
		return;
	WCHAR wcmd[2048];
	CHECK_EQ_INT(hs_etw_widen(cmd, wcmd, 2048), HS_OK);
	int argc = 0;
	LPWSTR *argv = CommandLineToArgvW(wcmd, &argc);
	CHECK(argv != NULL);
	CHECK_EQ_INT(argc, 11);
	if (argv && argc == 11) {
		char *a0 = hs_etw_narrow(argv[0]);
		CHECK_EQ_STR(a0, "C:\\Program Files\\game\\game.exe");
		free(a0);
		for (int i = 1; i < argc; i++) {
			char *a = hs_etw_narrow(argv[i]);
			CHECK_EQ_STR(a, words[i - 1]);
			free(a);
		}
	}
	LocalFree(argv);
	free(cmd);
	CHECK_EQ_STR(hs_win_cmdline("game.exe", NULL), "game.exe"); /* leaks a few bytes: a test */
	CHECK(hs_win_cmdline("bad\"name.exe", NULL) == NULL);
}

/* ---- recording-mode call sequences ---- */

typedef struct {
	hs_status start, snap, stop;
	char *messages;
	hs_session_status ring, keys;
} run_result;

static run_result run_backend(const hs_plan *plan, bool snapshot)
{
	run_result r = {.start = -100, .snap = -100, .stop = -100};
	FILE *m = msg_open();
	static volatile int interrupts;
	interrupts = 0;
	hs_backend_opts o = {.msg = msg_sink(m), .interrupts = &interrupts};
	hs_backend *b = NULL;
	CreateDirectoryW(L"rec-run", NULL);
	r.start = hs_backend_etw.start(plan, "rec-run", &o, &b);
	if (r.start == HS_OK) {
		CHECK_EQ_INT(hs_backend_etw.set_observer(b, NULL, NULL), HS_OK);
		hs_backend_etw.poll(b, 250);
		for (size_t i = 0; i < hs_backend_etw.n_sessions(b); i++) {
			const hs_session_status *s;
			CHECK_EQ_INT(hs_backend_etw.session_status(b, i, &s), HS_OK);
			if (snapshot && s->mode == HS_MODE_BUFFERING)
				r.snap = hs_backend_etw.snapshot(b, i, NULL, true);
		}
		r.stop = hs_backend_etw.stop(b);
		for (size_t i = 0; i < hs_backend_etw.n_sessions(b); i++) {
			const hs_session_status *s;
			hs_backend_etw.session_status(b, i, &s);
			if (s->mode == HS_MODE_BUFFERING)
				r.ring = *s;
			else
				r.keys = *s;
		}
	}
	hs_backend_etw.free(b);
	r.messages = msg_take(m);
	DeleteFileW(L"rec-run\\snap.etl");
	DeleteFileW(L"rec-run\\keyevents.etl");
	return r;
}

static void test_record_sequence(const hs_plan *plan)
{
	rec_reset();
	run_result r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.snap, HS_OK);
	CHECK_EQ_INT(r.stop, HS_OK);
	CHECK_EQ_INT(rec_running(), 0);
	CHECK_CONTAINS(r.messages, "running: 16 buffers x 256 KB");
	CHECK_CONTAINS(r.messages, "the ring keeps the newest");
	CHECK_CONTAINS(r.messages, "saved to rec-run\\snap.etl");
	CHECK_EQ_INT(r.ring.snapshots, 1);
	CHECK(r.ring.pool_buffers > 0);
	CHECK(r.keys.events_enabled > 0);
	CHECK_EQ_INT(r.keys.events_skipped, 0);
	hs_test_golden(golden_dir, "stutter-record", rec_log());
	free(r.messages);
}

static void test_record_failures(const hs_plan *plan)
{
	run_result r;

	/* Not elevated: nothing is started at all. */
	rec_reset();
	REC.admin = FALSE;
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_EPERM);
	CHECK(!strstr(rec_log(), "StartTraceW"));
	CHECK_CONTAINS(r.messages, "Run as administrator");
	free(r.messages);

	/* A dead engine's session of the same name: stopped by name, then started afresh. */
	rec_reset();
	rec_add_preexisting(session_of(plan, HS_MODE_BUFFERING)->session->logger_name);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.stop, HS_OK);
	CHECK_CONTAINS(r.messages, "is still running");
	hs_test_golden(golden_dir, "stutter-stale", rec_log());
	CHECK_EQ_INT(rec_running(), 0);
	free(r.messages);

	/* ... and when that stop is refused, the start fails with its reason. */
	rec_reset();
	rec_add_preexisting(session_of(plan, HS_MODE_FILE_CIRCULAR)->session->logger_name);
	rec_fail("ControlTraceW:STOP", 1, ERROR_ACCESS_DENIED);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_EPERM);
	CHECK_CONTAINS(r.messages, "stopping the old session");
	CHECK_EQ_INT(rec_running(), 1); /* only the foreign one we could not stop */
	free(r.messages);

	/* Access denied on the second session: the first is stopped again. */
	rec_reset();
	rec_fail("StartTraceW", 2, ERROR_ACCESS_DENIED);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_EPERM);
	CHECK_EQ_INT(rec_running(), 0);
	CHECK_CONTAINS(r.messages, "ERROR_ACCESS_DENIED");
	hs_test_golden(golden_dir, "stutter-denied", rec_log());
	free(r.messages);

	/* Out of sessions / nonpaged memory. */
	rec_reset();
	rec_fail("StartTraceW", 1, ERROR_NO_SYSTEM_RESOURCES);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_EIO);
	CHECK_CONTAINS(r.messages, "logman query -ets");
	CHECK_EQ_INT(rec_running(), 0);
	free(r.messages);

	/* Disk full for the circular file. */
	rec_reset();
	rec_fail("StartTraceW", 1, ERROR_DISK_FULL);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_EIO);
	CHECK_CONTAINS(r.messages, "lower max_file_mb");
	free(r.messages);

	/* One provider refused: reported, skipped, the rest records. */
	rec_reset();
	rec_fail("EnableTraceEx2", 2, ERROR_INVALID_PARAMETER);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.stop, HS_OK);
	CHECK_CONTAINS(r.messages, "is skipped; the session records the other providers");
	CHECK(r.keys.events_skipped > 0);
	free(r.messages);

	/* Access denied while enabling: the whole start fails, nothing left running. */
	rec_reset();
	rec_fail("EnableTraceEx2", 3, ERROR_ACCESS_DENIED);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_EPERM);
	CHECK_EQ_INT(rec_running(), 0);
	free(r.messages);

	/* QUERY refused. */
	rec_reset();
	rec_fail("ControlTraceW:QUERY", 1, ERROR_INVALID_HANDLE);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_EINVAL);
	CHECK_CONTAINS(r.messages, "querying session");
	CHECK_EQ_INT(rec_running(), 0);
	free(r.messages);

	/* FLUSH fails: the snapshot fails and says why; the sessions still stop. */
	rec_reset();
	rec_fail("ControlTraceW:FLUSH", 1, ERROR_DISK_FULL);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.snap, HS_EIO);
	CHECK_CONTAINS(r.messages, "flushing session");
	CHECK_EQ_INT(r.stop, HS_OK);
	CHECK_EQ_INT(rec_running(), 0);
	free(r.messages);

	/* Capture state refused: a warning, the snapshot is still written. */
	rec_reset();
	rec_fail("EnableTraceEx2:CAPTURE_STATE", 0, ERROR_TIMEOUT);
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.snap, HS_OK);
	free(r.messages);

	/* Every call "succeeds" but no file appears (Wine): never claimed as success. */
	rec_reset();
	REC.etw_writes_files = false;
	REC.buffers_override = 0;
	r = run_backend(plan, true);
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.snap, HS_EIO);
	CHECK_EQ_INT(r.stop, HS_EIO);
	CHECK_CONTAINS(r.messages, "the ring snapshot was not written");
	CHECK_CONTAINS(r.messages, "the key-event file was not written");
	free(r.messages);

	/* Someone else stopped our session (logman stop): said at stop. */
	rec_reset();
	rec_fail("ControlTraceW:STOP", 1, ERROR_WMI_INSTANCE_NOT_FOUND);
	r = run_backend(plan, false);
	CHECK_EQ_INT(r.stop, HS_EIO);
	CHECK_CONTAINS(r.messages, "already stopped by someone else");
	free(r.messages);

	/* ETW gave the ring fewer buffers than asked: the coverage is reported. */
	rec_reset();
	REC.buffers_override = 8;
	r = run_backend(plan, true);
	CHECK_CONTAINS(r.messages, "of the planned history");
	free(r.messages);
}

/* ---- launch mode ---- */

typedef struct {
	hs_status st;
	hs_launch_result res;
	char *messages;
} launch_result;

static launch_result run_launch(const hs_plan *plan, const char *out, unsigned timeout)
{
	static volatile int interrupts;
	interrupts = 0;
	REC.interrupts = &interrupts;
	char *argv[] = {"--level", "two words", NULL};
	hs_launch_opts o = {.prog = "C:\\Games\\game.exe", .argv = argv, .cwd = "C:\\Games", .out = out,
			    .timeout_sec = timeout, .interrupts = &interrupts};
	launch_result r;
	FILE *m = msg_open();
	o.detail = m;
	r.st = hs_launch_run(plan, &o, msg_sink(m), &r.res);
	r.messages = msg_take(m);
	return r;
}

static void test_launch(const hs_plan *plan)
{
	launch_result r;

	/* KernelTraceControl present: merged by it. */
	rec_reset();
	REC.merge_available = true;
	REC.wait_timeouts = 3;
	REC.exit_code = 0xC0000005;
	r = run_launch(plan, "launch-out.etl", 600);
	CHECK_EQ_INT(r.st, HS_OK);
	CHECK_EQ_INT(r.res.exit_code, (int)0xC0000005);
	CHECK(!r.res.timed_out);
	CHECK_EQ_INT(rec_running(), 0);
	CHECK_CONTAINS(r.messages, "merged with KernelTraceControl.dll");
	CHECK_CONTAINS(r.messages, "CPU sample interval 10000 x 100 ns (1000 Hz)");
	hs_test_golden(golden_dir, "cpu-sample-launch", rec_log());
	free(r.messages);
	DeleteFileW(L"launch-out.etl");

	/* Without it: the project's own image identities, on a real kernel trace. */
	if (fixture) {
		rec_reset();
		REC.stop_writes = fixture;
		r = run_launch(plan, "launch-own.etl", 600);
		CHECK_EQ_INT(r.st, HS_OK);
		CHECK_CONTAINS(r.messages, "is not installed; adding the image identities");
		CHECK_CONTAINS(r.messages, "image identities:");
		CHECK(r.res.samples > 0);
		CHECK(r.res.file_bytes > 0);
		CHECK(strstr(rec_log(), "delete_file") != NULL); /* the unmerged file is removed */
		free(r.messages);
		DeleteFileW(L"launch-own.etl");
	}

	/* Timeout: the program is terminated and the trace still written. */
	rec_reset();
	REC.merge_available = true;
	REC.wait_timeouts = 1000000;
	r = run_launch(plan, "launch-out.etl", 2);
	CHECK_EQ_INT(r.st, HS_OK);
	CHECK(r.res.timed_out);
	CHECK_CONTAINS(rec_log(), "terminate_process");
	CHECK_CONTAINS(r.messages, "still runs after 2 s");
	free(r.messages);
	DeleteFileW(L"launch-out.etl");

	/* Ctrl+C twice: the second ends the program. */
	rec_reset();
	REC.merge_available = true;
	REC.wait_timeouts = 1000000;
	REC.interrupt_at_wait = 2;
	REC.interrupt_at_wait2 = 4;
	r = run_launch(plan, "launch-out.etl", 600);
	CHECK_EQ_INT(r.st, HS_OK);
	CHECK_CONTAINS(r.messages, "press again to end it");
	CHECK_CONTAINS(rec_log(), "terminate_process");
	free(r.messages);
	DeleteFileW(L"launch-out.etl");

	/* The program cannot be started: the session is stopped, the interval restored. */
	rec_reset();
	rec_fail("create_process", 1, ERROR_FILE_NOT_FOUND);
	r = run_launch(plan, "launch-out.etl", 600);
	CHECK_EQ_INT(r.st, HS_ENOENT);
	CHECK_EQ_INT(rec_running(), 0);
	CHECK_CONTAINS(rec_log(), "interval=1221"); /* put back what it was */
	hs_test_golden(golden_dir, "cpu-sample-launch-noexe", rec_log());
	free(r.messages);

	/* Not elevated / no profile privilege: nothing starts. */
	rec_reset();
	REC.admin = FALSE;
	r = run_launch(plan, "launch-out.etl", 600);
	CHECK_EQ_INT(r.st, HS_EPERM);
	CHECK(!strstr(rec_log(), "StartTraceW"));
	free(r.messages);
	rec_reset();
	rec_fail("enable_privilege", 1, ERROR_NOT_ALL_ASSIGNED);
	r = run_launch(plan, "launch-out.etl", 600);
	CHECK_EQ_INT(r.st, HS_EPERM);
	CHECK(!strstr(rec_log(), "StartTraceW"));
	CHECK_CONTAINS(r.messages, "SeSystemProfilePrivilege");
	free(r.messages);

	/* The interval cannot be set (older Windows, Wine): sampled at the current rate. */
	rec_reset();
	REC.merge_available = true;
	rec_fail("TraceSetInformation", 1, ERROR_CALL_NOT_IMPLEMENTED);
	r = run_launch(plan, "launch-out.etl", 600);
	CHECK_EQ_INT(r.st, HS_OK);
	CHECK_CONTAINS(r.messages, "sampling at this machine's current rate");
	CHECK(!strstr(rec_log(), "interval=1221")); /* nothing to restore */
	free(r.messages);
	DeleteFileW(L"launch-out.etl");

	/* A stale sampler session of ours: replaced. */
	rec_reset();
	REC.merge_available = true;
	rec_add_preexisting(session_of(plan, HS_MODE_SAMPLING)->session->logger_name);
	r = run_launch(plan, "launch-out.etl", 600);
	CHECK_EQ_INT(r.st, HS_OK);
	CHECK_CONTAINS(r.messages, "is still running");
	free(r.messages);
	DeleteFileW(L"launch-out.etl");

	/* No file from ETW (Wine): FAILED, never success. */
	rec_reset();
	REC.etw_writes_files = false;
	r = run_launch(plan, "launch-out.etl", 600);
	CHECK_EQ_INT(r.st, HS_EIO);
	CHECK_CONTAINS(r.messages, "the kernel trace was not written");
	free(r.messages);
}

/* ---- engine ctl's named pipe (run/ctl_win.c) ---- */

static char *ctl_fake_status(void *ctx)
{
	(void)ctx;
	return strdup("{\n  \"version\": 1,\n  \"run_dir\": \"logs/runs/x\"\n}");
}

/* The server's whole life on the recorder's fake pipe: the name from the run
 * root and profile, the SDDL (owner and LocalSystem, protected, the token's
 * integrity label), the first instance made with FILE_FLAG_FIRST_PIPE_INSTANCE,
 * a client connected, its status request read, the reply written, the client
 * gone, and the listening instance cancelled and closed. Then the name
 * already taken (the engine records without a channel and says so), and
 * the client's "no engine" (exit 2) and "access denied" (exit 4). */
static void test_ctl_pipe(void)
{
	rec_reset();
	REC.ctl_request = "{\"id\":7,\"cmd\":\"status\"}\n";
	FILE *mf = msg_open();
	hs_ctl *c = hs_ctl_open("logs/runs", "stutter", "logs/runs/x", msg_sink(mf));
	CHECK(c != NULL);
	hs_ctl_loop l = {.status_json = ctl_fake_status};
	for (int i = 0; i < 3; i++)
		CHECK(!hs_ctl_serve(c, &l));
	hs_ctl_close(c);
	char *m = msg_take(mf);
	CHECK(m && strstr(m, "engine: control channel \\\\.\\pipe\\hindsight-ctl-stutter-"));
	free(m);
	const char *log = rec_log();
	/* The status document goes out as one line (the writer's layout gone). */
	CHECK(strstr(log, "io_write 0000000000007001 len=68 \"{\"id\":7,\"ok\":true,\"status\":{\"version\": 1,\"run_dir\""));
	CHECK(strstr(log, "close_handle 0000000000007001") && strstr(log, "close_handle 0000000000007002"));
	CHECK(!strstr(log, "first=yes max=9 bytes=65536 = 0000000000007002"));
	hs_test_golden(golden_dir, "ctl-pipe", rec_log());

	/* The name is there already (a live engine's, or someone's who made it
	 * first): WaitNamedPipeW finds it (every instance busy), or, made in
	 * between, FILE_FLAG_FIRST_PIPE_INSTANCE refuses it. */
	for (int k = 0; k < 2; k++) {
		rec_reset();
		rec_fail(k ? "pipe_create" : "pipe_wait", 1, k ? ERROR_ACCESS_DENIED : ERROR_SEM_TIMEOUT);
		mf = msg_open();
		c = hs_ctl_open("logs/runs", "stutter", "logs/runs/x", msg_sink(mf));
		CHECK(c == NULL);
		m = msg_take(mf);
		CHECK(m && strstr(m, "no control channel (engine ctl): \\\\.\\pipe\\hindsight-ctl-stutter-") &&
		      strstr(m, "exists already"));
		free(m);
		CHECK(!strstr(rec_log(), "pipe_connect"));
		CHECK(!strstr(rec_log(), "pipe_create") == !k);
	}

	/* A client that came and went before the listening instance's
	 * ConnectNamedPipe (ERROR_NO_DATA): the same instance is disconnected
	 * and listens again, so the name never lapses, and the client of the
	 * first instance is still served. */
	rec_reset();
	REC.ctl_request = "{\"id\":7,\"cmd\":\"status\"}\n";
	rec_fail("pipe_connect", 2, ERROR_NO_DATA);
	mf = msg_open();
	c = hs_ctl_open("logs/runs", "stutter", "logs/runs/x", msg_sink(mf));
	CHECK(c != NULL);
	for (int i = 0; i < 3; i++)
		CHECK(!hs_ctl_serve(c, &l));
	hs_ctl_close(c);
	free(msg_take(mf));
	CHECK(strstr(rec_log(), "pipe_connect 0000000000007002 -> ERROR_NO_DATA\npipe_disconnect 0000000000007002 -> "
				"ok\npipe_connect 0000000000007002 -> ERROR_IO_PENDING\n"));
	CHECK(strstr(rec_log(), "io_write 0000000000007001 len=68"));
	CHECK(!strstr(rec_log(), "= 0000000000007003"));

	/* The client: no pipe is exit 2; the DACL's refusal exit 4. */
	rec_reset();
	mf = msg_open();
	char *argv1[] = {"--pipe", "\\\\.\\pipe\\hindsight-ctl-none-0", "status"};
	CHECK(hs_ctl_main(3, argv1, "engine", msg_sink(mf)) == HS_EXIT_RUN_FAILED);
	rec_fail("pipe_open", 0, ERROR_ACCESS_DENIED);
	CHECK(hs_ctl_main(3, argv1, "engine", msg_sink(mf)) == HS_EXIT_NOT_PRIVILEGED);
	m = msg_take(mf);
	CHECK(m && strstr(m, "no engine is running for this profile (no control pipe") &&
	      strstr(m, "permission denied on"));
	free(m);
	rec_reset();
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_etw RULES_DIR GOLDEN_DIR [KERNEL_TRACE.etl]\n");
		return 2;
	}
	rules_dir = argv[1];
	golden_dir = argv[2];
	fixture = argc > 3 ? argv[3] : NULL;
	hs_etw_api_set(&rec_api);

	test_guid();
	test_errors();
	test_cmdline();
	hs_ruleset *rs = hs_test_load(rules_dir, "stutter.yaml");
	hs_plan *plan = hs_test_plan(rs, HS_PLATFORM_WINDOWS, 2);
	CHECK(plan != NULL);
	if (plan) {
		test_props(plan);
		test_enable(plan);
		test_record_sequence(plan);
		test_record_failures(plan);
	}
	hs_plan_free(plan);
	hs_rules_free(rs);
	rs = hs_test_load(rules_dir, "cpu-sample.yaml");
	plan = hs_test_plan(rs, HS_PLATFORM_WINDOWS, 2);
	CHECK(plan != NULL);
	if (plan)
		test_launch(plan);
	hs_plan_free(plan);
	hs_rules_free(rs);
	test_ctl_pipe();
	rec_reset();
	return hs_test_done("test_etw");
}
