/* test_etw_realtime.c: the Windows backend's real-time consumer under Wine, through the recorder: units, delivery to the observer and the triggers, the marker, Present frames, event fields, clocks and failures. */
#include "etw_test.h"

/* What the observer saw, copied (the event is borrowed for the call). */
typedef struct {
	size_t session;
	unsigned cpu;
	uint64_t ts_ns;
	char system[96], name[96];
	int pid;
	size_t raw_len;
	unsigned char raw0;
	bool fields;
} seen_event;

static struct {
	seen_event ev[8];
	size_t n;      /* every call */
	size_t kept;   /* in ev[] (the first 8) */
} seen;

static void observer(void *ctx, const hs_key_event *ev)
{
	(void)ctx;
	if (seen.kept < sizeof(seen.ev) / sizeof(seen.ev[0])) {
		seen_event *s = &seen.ev[seen.kept++];
		s->session = ev->session;
		s->cpu = ev->cpu;
		s->ts_ns = ev->ts_ns;
		snprintf(s->system, sizeof s->system, "%s", ev->system ? ev->system : "(null)");
		snprintf(s->name, sizeof s->name, "%s", ev->name ? ev->name : "(null)");
		s->pid = ev->pid;
		s->raw_len = ev->raw_len;
		s->raw0 = ev->raw_len ? ((const unsigned char *)ev->raw)[0] : 0;
		s->fields = ev->fields != NULL;
	}
	seen.n++;
}

static void seen_reset(void)
{
	memset(&seen, 0, sizeof(seen));
}

/* An EVENT_RECORD as ProcessTrace hands it over (raw timestamp: QPC ticks). */
static EVENT_RECORD mk_event(const hs_guid *provider, USHORT id, ULONG pid, ULONGLONG ts, UCHAR cpu, const void *data,
			     USHORT len)
{
	EVENT_RECORD r;
	memset(&r, 0, sizeof(r));
	r.EventHeader.Size = sizeof(EVENT_HEADER);
	hs_etw_guid(&r.EventHeader.ProviderId, provider);
	r.EventHeader.EventDescriptor.Id = id;
	r.EventHeader.EventDescriptor.Version = 1;
	r.EventHeader.EventDescriptor.Level = 4;
	r.EventHeader.ProcessId = pid;
	r.EventHeader.ThreadId = pid + 1;
	r.EventHeader.TimeStamp.QuadPart = (LONGLONG)ts;
	r.BufferContext.ProcessorNumber = cpu;
	r.UserDataLength = len;
	r.UserData = (PVOID)data;
	return r;
}

static size_t session_index(const hs_plan *plan, hs_session_mode mode)
{
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == mode)
			return i;
	return SIZE_MAX;
}

static void test_realtime_units(const hs_plan *plan)
{
	/* Only the file-circular session a trigger watches runs in real time. */
	CHECK(hs_etw_session_wants_realtime(plan, session_index(plan, HS_MODE_FILE_CIRCULAR)));
	CHECK(!hs_etw_session_wants_realtime(plan, session_index(plan, HS_MODE_BUFFERING)));
	CHECK(!hs_etw_session_wants_realtime(plan, plan->n_sessions));
	CHECK(!hs_etw_session_wants_realtime(NULL, 0));
	/* The same plan without its triggers: nothing in real time. */
	hs_plan bare = *plan;
	bare.n_triggers = 0;
	CHECK(!hs_etw_session_wants_realtime(&bare, session_index(plan, HS_MODE_FILE_CIRCULAR)));
	/* Modes and clocks. */
	CHECK_EQ_INT(hs_etw_rt_trace_mode(HS_ETW_CLOCK_QPC), 0x10001100);
	CHECK_EQ_INT(hs_etw_rt_trace_mode(HS_ETW_CLOCK_SYSTEM), 0x10001100);
	CHECK_EQ_INT(hs_etw_rt_trace_mode(HS_ETW_CLOCK_CYCLE), 0x10000100); /* ETW converts to system time */
	CHECK_EQ_INT(hs_etw_event_ns(HS_ETW_CLOCK_QPC, 12345678901ull, 10000000ull), 1234567890100ull);
	CHECK_EQ_INT(hs_etw_event_ns(0, 3000000ull, 3000000ull), 1000000000ull);
	/* No overflow at days of uptime on a 3 GHz-class counter. */
	CHECK_EQ_INT(hs_etw_event_ns(HS_ETW_CLOCK_QPC, 3000000000ull * 86400ull * 30 + 1500000000ull, 3000000000ull),
		     86400ull * 30 * 1000000000ull + 500000000ull);
	CHECK_EQ_INT(hs_etw_event_ns(HS_ETW_CLOCK_SYSTEM, 7ull, 0), 700ull);
	CHECK_EQ_INT(hs_etw_event_ns(HS_ETW_CLOCK_QPC, 5, 0), 0); /* no frequency: no time rather than a wrong one */
	rec_reset();
	REC.qpc_now = 20000000; /* 2 s at 10 MHz */
	REC.system_now = 5;
	CHECK_EQ_INT(hs_etw_now_ns(&rec_api, HS_ETW_CLOCK_QPC), 2000000000ull);
	CHECK_EQ_INT(hs_etw_now_ns(&rec_api, HS_ETW_CLOCK_SYSTEM), 500ull);
}

/* A key-event cut (hs_etw_rt_write_cut) as test_realtime's events made it. */
typedef struct {
	size_t n, p0, p1;
	int64_t last_ts;
	bool ordered;
	uint32_t first_pid;
	uint16_t first_id;
} cut_count;

static int cut_record(const hs_etl_record *r, void *ctx)
{
	cut_count *c = ctx;
	if (r->kind != HS_ETL_EVENT)
		return 0; /* the logfile header */
	if (!c->n) {
		c->first_pid = r->pid;
		c->first_id = r->id;
	}
	c->n++;
	c->ordered &= r->timestamp >= c->last_ts;
	c->last_ts = r->timestamp;
	return 0;
}

static int cut_provider(const hs_etl_record *r, void *ctx)
{
	const hs_guid **g = ctx;
	size_t *counts = (size_t *)(g + 2);
	if (r->kind == HS_ETL_EVENT && r->has_guid) {
		counts[0] += !memcmp(&r->guid, g[0], sizeof(hs_guid));
		counts[1] += !memcmp(&r->guid, g[1], sizeof(hs_guid));
	}
	return 0;
}

static void check_cut(const char *path, const hs_plan_provider *p0, const hs_plan_provider *p1)
{
	hs_etl *etl = NULL;
	CHECK_EQ_INT(hs_etl_open(path, &etl), HS_OK);
	if (!etl)
		return;
	const hs_etl_header *h = hs_etl_get_header(etl);
	CHECK_EQ_INT(h->clock_type, 1);
	CHECK_EQ_INT(h->perf_freq, 10000000u);
	cut_count c = {.ordered = true};
	CHECK_EQ_INT(hs_etl_foreach(etl, HS_ETL_TIME_ORDER, cut_record, &c), HS_OK);
	CHECK_EQ_INT(c.n, 4);
	CHECK(c.ordered);
	CHECK_EQ_INT(c.first_pid, 4242);
	CHECK_EQ_INT(c.first_id, p0->events[0].id);
	CHECK_EQ_INT(c.last_ts, 60000000); /* the event delivered while recording */
	struct {
		const hs_guid *g[2];
		size_t counts[2];
	} pc = {{&p0->provider->guid, &p1->provider->guid}, {0, 0}};
	CHECK_EQ_INT(hs_etl_foreach(etl, HS_ETL_FILE_ORDER, cut_provider, &pc), HS_OK);
	CHECK_EQ_INT(pc.counts[0], 3);
	CHECK_EQ_INT(pc.counts[1], 1);
	CHECK_EQ_INT(hs_etl_problem_count(etl), 0);
	hs_etl_close(etl);
}

static void test_realtime(const hs_plan *plan)
{
	const hs_backend_ops *ops = hs_backend_native();
	size_t ki = session_index(plan, HS_MODE_FILE_CIRCULAR), ri = session_index(plan, HS_MODE_BUFFERING);
	const hs_plan_session *keys = &plan->sessions[ki];
	CHECK(keys->n_providers >= 2 && keys->providers[0].n_events > 0 && keys->providers[1].n_events > 0);
	if (keys->n_providers < 2 || !keys->providers[0].n_events || !keys->providers[1].n_events)
		return;
	const hs_plan_provider *p0 = &keys->providers[0], *p1 = &keys->providers[1];
	const char *logger = keys->session->logger_name;
	/* The session's header event (EventTraceGuid), which is not a key event. */
	hs_guid header;
	CHECK(hs_guid_parse("68FDD900-4A3E-11D1-84F4-0000F80464E3", &header));
	static unsigned char payload[1000];
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (unsigned char)(i + 1);
	EVENT_RECORD first[4] = {
		mk_event(&header, 0, 4, 1000, 0, NULL, 0),
		mk_event(&p0->provider->guid, (USHORT)p0->events[0].id, 4242, 30000000ull, 1, payload, 24),
		mk_event(&p1->provider->guid, (USHORT)p1->events[0].id, 77, 30000001ull, 0, payload + 5, 8),
		mk_event(&p0->provider->guid, 9999, 5, 30000002ull, 1, payload, 1000), /* not in the plan; long */
	};
	first[2].EventHeader.Flags |= EVENT_HEADER_FLAG_PROCESSOR_INDEX;
	first[2].BufferContext.ProcessorIndex = 300;

	rec_reset();
	seen_reset();
	REC.qpc_now = 45000000ull; /* 4.5 s */
	REC.rt_events = first;
	REC.n_rt_events = 4;
	FILE *m = msg_open();
	static volatile int interrupts;
	interrupts = 0;
	hs_backend_opts o = {.msg = msg_sink(m), .interrupts = &interrupts};
	hs_backend *b = NULL;
	CreateDirectoryW(L"rec-run", NULL);
	CHECK_EQ_INT(hs_backend_etw.start(plan, "rec-run", &o, &b), HS_OK);
	if (!b) {
		free(msg_take(m));
		return;
	}
	CHECK_EQ_INT(rec_rt_running(), 1);
	CHECK(ops->now_ns != NULL);
	if (ops->now_ns)
		CHECK_EQ_INT(ops->now_ns(b), 4500000000ull); /* the sessions' QPC clock, in ns */
	CHECK(ops->mark != NULL);
	CHECK_EQ_INT(rec_registered(), 1); /* the marker provider, before the sessions enabled it */
	CHECK_EQ_INT(hs_backend_etw.set_observer(b, observer, NULL), HS_OK);
	CHECK_EQ_INT(hs_backend_etw.poll(b, 250), HS_OK);
	/* The header event is not handed on; the rest in order, with the plan's names. */
	CHECK_EQ_INT(seen.n, 3);
	if (seen.kept >= 3) {
		CHECK_EQ_INT(seen.ev[0].session, ki);
		CHECK_EQ_STR(seen.ev[0].system, p0->provider->name);
		CHECK_EQ_STR(seen.ev[0].name, p0->events[0].name ? p0->events[0].name : "?");
		CHECK_EQ_INT(seen.ev[0].pid, 4242);
		CHECK_EQ_INT(seen.ev[0].cpu, 1);
		CHECK_EQ_INT(seen.ev[0].ts_ns, 3000000000ull); /* 30M ticks at 10 MHz */
		CHECK_EQ_INT(seen.ev[0].raw_len, 24);
		CHECK_EQ_INT(seen.ev[0].raw0, 1);
		CHECK(seen.ev[0].fields); /* TDH behind them; this observer reads none */
		CHECK_EQ_STR(seen.ev[1].system, p1->provider->name);
		CHECK_EQ_STR(seen.ev[1].name, p1->events[0].name ? p1->events[0].name : "?");
		CHECK_EQ_INT(seen.ev[1].pid, 77);
		CHECK_EQ_INT(seen.ev[1].cpu, 300); /* ProcessorIndex when the header says so */
		CHECK_EQ_INT(seen.ev[1].ts_ns, 3000000100ull);
		CHECK_EQ_INT(seen.ev[1].raw0, 6);
		CHECK_EQ_STR(seen.ev[2].name, "?"); /* id 9999 is not in the plan */
		CHECK_EQ_INT(seen.ev[2].raw_len, HS_ETW_RT_MAX_USERDATA); /* cut */
	}
	/* Nothing queued: poll sleeps its time and calls nobody. */
	CHECK_EQ_INT(hs_backend_etw.poll(b, 250), HS_OK);
	CHECK_EQ_INT(seen.n, 3);

	/* An event while recording reaches the observer at the next poll. */
	EVENT_RECORD later = mk_event(&p0->provider->guid, (USHORT)p0->events[0].id, 9, 60000000ull, 0, payload, 4);
	CHECK(rec_rt_deliver(logger, &later, 1));
	hs_backend_etw.poll(b, 250);
	CHECK_EQ_INT(seen.n, 4);
	CHECK_EQ_INT(seen.kept >= 4 ? seen.ev[3].ts_ns : 0, 6000000000ull);

	/* A manual snapshot of the ring (CAPTURE_STATE + FLUSH to a new file)
	 * while both sessions and the consumer go on, after its marker (as the
	 * run loop does: the marker first, then the rings). */
	if (ops->mark)
		CHECK_EQ_INT(ops->mark(b, "hindsight: trigger manual fired; snapshot 001"), HS_OK);
	CHECK_EQ_INT(hs_backend_etw.snapshot(b, ri, "rec-run\\manual-001.etl", false), HS_OK);
	CHECK_EQ_INT(rec_rt_running(), 1);
	CHECK_EQ_INT(rec_running(), 2);
	/* ... and the key-event session's cut: the 4 events the consumer saw, as
	 * an .etl our reader opens, in the session's QPC clock. */
	CHECK_EQ_INT(hs_backend_etw.snapshot(b, ki, "rec-run/keys-001.etl", false), HS_OK);
	check_cut("rec-run/keys-001.etl", p0, p1);
	CHECK(rec_rt_deliver(logger, &later, 1));
	hs_backend_etw.poll(b, 250);
	CHECK_EQ_INT(seen.n, 5);

	/* A burst larger than the queue: the callback never waits (the delivery
	 * returns), the excess is counted as dropped, the queue drains whole. */
	size_t burst = HS_ETW_RT_QUEUE_EVENTS + 10;
	EVENT_RECORD *many = calloc(burst, sizeof(*many));
	CHECK(many != NULL);
	if (many) {
		for (size_t i = 0; i < burst; i++)
			many[i] = mk_event(&p0->provider->guid, (USHORT)p0->events[0].id, 1, 70000000ull + i, 0, payload, 4);
		CHECK(rec_rt_deliver(logger, many, burst));
		hs_backend_etw.poll(b, 250);
		CHECK_EQ_INT(seen.n, 5 + HS_ETW_RT_QUEUE_EVENTS);
	}

	/* Stop: CloseTrace, ProcessTrace returns, its thread is joined, then the sessions stop. */
	CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
	CHECK_EQ_INT(rec_rt_running(), 0);
	CHECK_EQ_INT(rec_running(), 0);
	hs_backend_etw.free(b);
	free(many);
	char *text = msg_take(m);
	CHECK_CONTAINS(text, "real-time consumer attached");
	CHECK_CONTAINS(text, "10 dropped (queue full), 1 cut");
	CHECK_CONTAINS(text, "trigger markers: Hindsight-Marker {9D25ED02-4122-4CBE-9969-A0C1501F3F79} (EventWriteString, "
			     "level 4, keyword 0x1) into keyevents, snap");
	CHECK_EQ_INT(rec_registered(), 0); /* EventUnregister at stop */
	hs_test_golden(golden_dir, "stutter-rt-snapshot", rec_log());
	free(text);
	DeleteFileW(L"rec-run\\manual-001.etl");
	DeleteFileW(L"rec-run\\keys-001.etl");
	DeleteFileW(L"rec-run\\keyevents.etl");
}

/* A profile no trigger watches: with --live or --events-jsonl on the command
 * line (hs_plan_opts.stream_key_events) its key-event session runs in real
 * time for the view and the tap; without them the observer is refused and
 * says which session's events go to its file only. */
static void test_realtime_view(void)
{
	FILE *f = fopen("view-profile.yaml", "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f,
		"schema_version: 1\nkind: profile\nname: view\ndescription: A key-event session no trigger watches.\n"
		"include: [\"%s/providers/windows.yaml\"]\nplatforms:\n  windows:\n    sessions:\n"
		"      - name: keys\n        logger_name: HindsightViewKeys\n        mode: file-circular\n"
		"        clock: qpc\n        buffer_size_kb: 64\n        min_buffers: 4\n        max_buffers: 8\n"
		"        max_file_mb: 16\n        output: keys.etl\n        providers:\n"
		"          - provider: Microsoft-Windows-Kernel-Process\n            level: 4\n"
		"            keywords: all\n            events: [2]\n",
		rules_dir);
	fclose(f);
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	CHECK_EQ_INT(hs_rules_load("view-profile.yaml", d, &rs), HS_OK);
	hs_diags_free(d);
	if (!rs)
		return;
	static volatile int interrupts;
	for (int stream = 0; stream < 2; stream++) {
		hs_plan *plan = NULL;
		hs_plan_opts po = {.cpus = 2, .stream_key_events = stream};
		CHECK_EQ_INT(hs_plan_build(rs, HS_PLATFORM_WINDOWS, &po, &plan), HS_OK);
		if (!plan)
			continue;
		const hs_plan_provider *p = &plan->sessions[0].providers[0];
		EVENT_RECORD ev = mk_event(&p->provider->guid, (USHORT)p->events[0].id, 321, 20000000ull, 0, NULL, 0);
		rec_reset();
		seen_reset();
		REC.rt_events = &ev;
		REC.n_rt_events = 1;
		FILE *m = msg_open();
		hs_backend_opts o = {.msg = msg_sink(m), .interrupts = &interrupts};
		hs_backend *b = NULL;
		CreateDirectoryW(L"rec-run", NULL);
		CHECK_EQ_INT(hs_backend_etw.start(plan, "rec-run", &o, &b), HS_OK);
		if (b) {
			CHECK_EQ_INT(rec_rt_running(), stream);
			CHECK_EQ_INT(hs_backend_etw.set_observer(b, observer, NULL), stream ? HS_OK : HS_EUNSUPPORTED);
			hs_backend_etw.poll(b, 100);
			CHECK_EQ_INT(seen.n, stream ? 1u : 0u);
			if (stream && seen.kept)
				CHECK_EQ_INT(seen.ev[0].pid, 321);
			CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
		}
		hs_backend_etw.free(b);
		char *text = msg_take(m);
		const char *log = rec_log();
		if (stream) {
			CHECK_CONTAINS(text, "session keys: real-time consumer attached; the live view and the tap see");
			CHECK_CONTAINS(log, "Mode=0x00000102 FlushTimer=1 "); /* circular | real time */
		} else {
			CHECK_CONTAINS(text, "session keys: its key events go to its file only");
			CHECK_CONTAINS(log, "Mode=0x00000002 FlushTimer=0 ");
			CHECK(!strstr(log, "OpenTraceW"));
		}
		free(text);
		hs_plan_free(plan);
		DeleteFileW(L"rec-run\\keys.etl");
	}
	hs_rules_free(rs);
	DeleteFileW(L"view-profile.yaml");
}

/* The trigger marker (marker.c): what lets it into a session, the
 * failures, the cut, and the marker coming back through the consumer. */
static void test_marker(const hs_plan *plan)
{
	const hs_backend_ops *ops = hs_backend_native();
	hs_etw_marker mk;
	hs_etw_marker_plan(&mk, plan);
	CHECK(mk.provider && mk.event);
	if (!mk.provider || !mk.event || !ops->mark)
		return;
	CHECK_EQ_STR(mk.provider->name, "Hindsight-Marker");
	CHECK_EQ_INT(mk.event->id, 0); /* EventWriteString's descriptor is zero but for level and keyword */
	CHECK_EQ_INT(mk.level, 4);
	CHECK_EQ_INT(mk.keyword, 0x1);
	CHECK_EQ_INT(mk.sessions, 2);
	CHECK_EQ_INT(mk.blocked, 0);
	/* The filters of a session that enables the provider. */
	const hs_plan_provider *mp = NULL;
	size_t ki = session_index(plan, HS_MODE_FILE_CIRCULAR);
	for (size_t i = 0; i < plan->sessions[ki].n_providers; i++)
		if (plan->sessions[ki].providers[i].provider == mk.provider)
			mp = &plan->sessions[ki].providers[i];
	CHECK(mp && mp->whitelist);
	if (!mp)
		return;
	CHECK(hs_etw_marker_passes(&mk, mp));
	hs_plan_provider pp = *mp;
	pp.level = 0; /* no level limit */
	CHECK(hs_etw_marker_passes(&mk, &pp));
	pp.level = 2; /* error and worse only */
	CHECK(!hs_etw_marker_passes(&mk, &pp));
	pp = *mp;
	pp.match_any = 0; /* every keyword */
	CHECK(hs_etw_marker_passes(&mk, &pp));
	pp.match_any = 0x2;
	CHECK(!hs_etw_marker_passes(&mk, &pp));
	pp = *mp;
	pp.match_all = 0x3;
	CHECK(!hs_etw_marker_passes(&mk, &pp));
	pp = *mp;
	hs_plan_event other = {.id = 5};
	pp.events = &other;
	pp.n_events = 1; /* a whitelist without id 0 */
	CHECK(!hs_etw_marker_passes(&mk, &pp));
	pp.whitelist = false;
	CHECK(hs_etw_marker_passes(&mk, &pp));
	hs_etw_marker zero = mk;
	zero.keyword = 0; /* passes any masks, unless the session ignores keyword 0 */
	pp = *mp;
	pp.match_any = 0x2;
	CHECK(hs_etw_marker_passes(&zero, &pp));
	pp.enable_property |= HS_EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0;
	CHECK(!hs_etw_marker_passes(&zero, &pp));

	/* EventRegister fails: the recording goes on, snapshots without a marker. */
	rec_reset();
	rec_fail("EventRegister", 1, ERROR_ACCESS_DENIED);
	FILE *m = msg_open();
	hs_backend_opts o = {.msg = msg_sink(m)};
	hs_backend *b = NULL;
	CreateDirectoryW(L"rec-run", NULL);
	CHECK_EQ_INT(hs_backend_etw.start(plan, "rec-run", &o, &b), HS_OK);
	if (b) {
		CHECK_EQ_INT(ops->mark(b, "hindsight: x"), HS_EUNSUPPORTED);
		CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
		hs_backend_etw.free(b);
	}
	char *text = msg_take(m);
	CHECK_CONTAINS(text, "EventRegister(Hindsight-Marker {9D25ED02-4122-4CBE-9969-A0C1501F3F79}) failed");
	CHECK_CONTAINS(text, "snapshots are taken without a marker");
	CHECK_CONTAINS(text, "no trigger marker on Windows");
	CHECK(!strstr(rec_log(), "EventWriteString"));
	CHECK(!strstr(rec_log(), "EventUnregister"));
	free(text);

	/* EventWriteString fails (a session's buffer too small): said, not fatal;
	 * a long text is cut; the marker reaches the consumer like any key event. */
	rec_reset();
	seen_reset();
	rec_fail("EventWriteString", 1, ERROR_MORE_DATA);
	m = msg_open();
	o = (hs_backend_opts){.msg = msg_sink(m)};
	b = NULL;
	CHECK_EQ_INT(hs_backend_etw.start(plan, "rec-run", &o, &b), HS_OK);
	if (b) {
		CHECK(ops->mark(b, "hindsight: too big") != HS_OK);
		static char big[HS_ETW_MARKER_MAX_CHARS + 100];
		memset(big, 'a', sizeof(big) - 1);
		memcpy(big + HS_ETW_MARKER_MAX_CHARS - 2, "\xc3\xa9", 2); /* an e-acute across the cut */
		CHECK_EQ_INT(ops->mark(b, big), HS_OK);
		CHECK_CONTAINS(rec_log(), "chars=2046 text=");
		CHECK_EQ_INT(ops->mark(b, "bad \xff utf-8"), HS_EINVAL);
		CHECK_EQ_INT(hs_backend_etw.set_observer(b, observer, NULL), HS_OK);
		static const WCHAR wtext[] = L"hindsight: marker";
		EVENT_RECORD ev = mk_event(&mk.provider->guid, 0, 1234, 50000000ull, 0, wtext, sizeof(wtext));
		ev.EventHeader.Flags |= EVENT_HEADER_FLAG_STRING_ONLY;
		ev.EventHeader.EventDescriptor.Level = 4;
		ev.EventHeader.EventDescriptor.Keyword = 0x1;
		CHECK(rec_rt_deliver(plan->sessions[ki].session->logger_name, &ev, 1));
		hs_backend_etw.poll(b, 100);
		CHECK_EQ_INT(seen.n, 1);
		CHECK_EQ_STR(seen.ev[0].system, "Hindsight-Marker");
		CHECK_EQ_STR(seen.ev[0].name, "Marker");
		CHECK_EQ_INT(seen.ev[0].raw_len, sizeof(wtext));
		CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
		hs_backend_etw.free(b);
	}
	text = msg_take(m);
	CHECK_CONTAINS(text, "EventWriteString(Hindsight-Marker) (the snapshot has no marker) failed: ERROR_MORE_DATA");
	CHECK_CONTAINS(text, "not valid UTF-8");
	CHECK_EQ_INT(rec_registered(), 0);
	CHECK_EQ_INT(rec_rt_running(), 0);
	free(text);
	DeleteFileW(L"rec-run\\keyevents.etl");
}

/* The observer of a real recording: the trigger engine, fed at the backend's now_ns. */
typedef struct {
	hs_trigger_engine *te;
	const hs_backend_ops *ops;
	hs_backend *b;
	size_t fed;
} feed_ctx;

static void feed(void *ctx, const hs_key_event *ev)
{
	feed_ctx *f = ctx;
	hs_trigger_engine_feed(f->te, ev, f->ops->now_ns(f->b));
	f->fed++;
}

/* End to end through the consumer: a DxgKrnl TDR event delivered by
 * ProcessTrace reaches the trigger engine under the names the plan's trigger
 * lists, fires gpu-reset after its post_delay in the sessions' clock, and
 * the ring is flushed to the snapshot while everything keeps running. */
static void test_realtime_trigger(const hs_plan *plan)
{
	const hs_backend_ops *ops = hs_backend_native();
	size_t ki = session_index(plan, HS_MODE_FILE_CIRCULAR), ri = session_index(plan, HS_MODE_BUFFERING);
	const hs_plan_trigger *gpu = NULL;
	size_t gi = 0;
	for (size_t t = 0; t < plan->n_triggers; t++)
		if (!strcmp(plan->triggers[t].trigger->name, "gpu-reset")) {
			gpu = &plan->triggers[t];
			gi = t;
		}
	CHECK(gpu && gpu->session == ki && gpu->n_events > 0);
	if (!gpu || !gpu->n_events || !ops->now_ns)
		return;
	const hs_plan_trigger_event *want = &gpu->events[0];
	const hs_plan_provider *pp = NULL;
	for (size_t i = 0; i < plan->sessions[ki].n_providers; i++)
		if (!strcmp(plan->sessions[ki].providers[i].provider->name, want->system))
			pp = &plan->sessions[ki].providers[i];
	CHECK(pp != NULL);
	if (!pp)
		return;

	rec_reset();
	const ULONGLONG t0 = 1000ull * REC_QPC_PER_SECOND; /* the machine has been up 1000 s */
	REC.qpc_now = t0;
	FILE *m = msg_open();
	static volatile int interrupts;
	interrupts = 0;
	hs_backend_opts o = {.msg = msg_sink(m), .interrupts = &interrupts};
	hs_backend *b = NULL;
	CHECK_EQ_INT(hs_backend_etw.start(plan, "rec-run", &o, &b), HS_OK);
	if (!b) {
		free(msg_take(m));
		return;
	}
	feed_ctx f = {.ops = ops, .b = b};
	CHECK_EQ_INT(hs_trigger_engine_new(plan, ops->now_ns(b), &f.te), HS_OK);
	CHECK(hs_trigger_engine_wants_events(f.te));
	CHECK_EQ_INT(hs_backend_etw.set_observer(b, feed, &f), HS_OK);

	/* After the warm-up: the TDR at t0 + warmup + 1 s, seen 1 s later. */
	uint64_t warm = gpu->trigger->warmup_s, post_ms = gpu->trigger->post_delay_ms;
	ULONGLONG hit = t0 + (warm + 1) * REC_QPC_PER_SECOND;
	static unsigned char tdr[16];
	EVENT_RECORD ev = mk_event(&pp->provider->guid, (USHORT)want->id, 4, hit, 0, tdr, sizeof(tdr));
	REC.qpc_now = hit + REC_QPC_PER_SECOND;
	CHECK(rec_rt_deliver(plan->sessions[ki].session->logger_name, &ev, 1));
	hs_backend_etw.poll(b, 100);
	CHECK_EQ_INT(f.fed, 1);
	const hs_trigger_stats *ts = hs_trigger_engine_stats(f.te, gi);
	CHECK(ts && ts->hits == 1 && ts->pending);
	hs_trigger_fire fire;
	memset(&fire, 0, sizeof(fire));
	/* Not yet: post_delay runs in the sessions' clock from the event's time. */
	CHECK(!hs_trigger_engine_next(f.te, ops->now_ns(b), &fire));
	REC.qpc_now = hit + post_ms * (REC_QPC_PER_SECOND / 1000) + 1;
	bool fired = hs_trigger_engine_next(f.te, ops->now_ns(b), &fire);
	CHECK(fired);
	if (fired) {
		CHECK_EQ_INT(fire.trigger, gi);
		CHECK_EQ_STR(fire.name, "gpu-reset");
		CHECK_EQ_INT(fire.first_hit_ns, hit * (1000000000ull / REC_QPC_PER_SECOND));
		CHECK_EQ_INT(fire.detect_ns - fire.first_hit_ns, 1000000000ull);
		free(fire.evidence_json);
	}
	/* The snapshot the loop then takes: the ring to a new file while
	 * recording goes on; the key-event file is ETW's, so the snapshot gets
	 * the consumer's cut (the TDR events that fired the trigger). */
	CHECK_EQ_INT(ops->mark(b, "hindsight: trigger gpu-reset fired; snapshot 001"), HS_OK);
	CHECK_CONTAINS(rec_log(), "EventWriteString handle=201 level=4 keyword=0x1 chars=48 "
				  "text=\"hindsight: trigger gpu-reset fired; snapshot 001\" -> ok");
	CHECK_EQ_INT(ops->snapshot(b, ri, "rec-run\\trig-001.etl", false), HS_OK);
	CHECK_EQ_INT(ops->snapshot(b, ki, "rec-run\\trig-001-keys.etl", false), HS_OK);
	CHECK(GetFileAttributesW(L"rec-run\\trig-001-keys.etl") != INVALID_FILE_ATTRIBUTES);
	CHECK_EQ_INT(rec_rt_running(), 1);
	CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
	hs_backend_etw.free(b);
	hs_trigger_engine_free(f.te);
	free(msg_take(m));
	CHECK_EQ_INT(rec_rt_running(), 0);
	DeleteFileW(L"rec-run\\trig-001.etl");
	DeleteFileW(L"rec-run\\trig-001-keys.etl");
	DeleteFileW(L"rec-run\\keyevents.etl");
}

/* Frames through the consumer: DXGI PresentStart events of one process at
 * 240 Hz, delivered by the fake ProcessTrace, reach the trigger engine under
 * the plan's names; one 100 ms gap fires stutter's frame-hitch trigger. */
static void test_realtime_present(const hs_plan *plan)
{
	const hs_backend_ops *ops = hs_backend_native();
	size_t ki = session_index(plan, HS_MODE_FILE_CIRCULAR);
	const hs_plan_trigger *fh = NULL;
	size_t fi = 0;
	for (size_t t = 0; t < plan->n_triggers; t++)
		if (!strcmp(plan->triggers[t].trigger->name, "frame-hitch")) {
			fh = &plan->triggers[t];
			fi = t;
		}
	CHECK(fh && fh->session == ki && fh->n_events >= 1);
	if (!fh || !fh->n_events || !ops->now_ns)
		return;
	/* The plan's first present event: DXGI PresentStart (42). */
	const hs_plan_trigger_event *want = &fh->events[0];
	CHECK_EQ_STR(want->system, "Microsoft-Windows-DXGI");
	CHECK_EQ_INT(want->id, 42);
	const hs_plan_provider *pp = NULL;
	for (size_t i = 0; i < plan->sessions[ki].n_providers; i++)
		if (!strcmp(plan->sessions[ki].providers[i].provider->name, want->system))
			pp = &plan->sessions[ki].providers[i];
	CHECK(pp != NULL);
	if (!pp)
		return;

	rec_reset();
	const ULONGLONG t0 = 2000ull * REC_QPC_PER_SECOND;
	REC.qpc_now = t0;
	FILE *m = msg_open();
	hs_backend_opts o = {.msg = msg_sink(m)};
	hs_backend *b = NULL;
	CreateDirectoryW(L"rec-run", NULL);
	CHECK_EQ_INT(hs_backend_etw.start(plan, "rec-run", &o, &b), HS_OK);
	if (!b) {
		free(msg_take(m));
		return;
	}
	feed_ctx f = {.ops = ops, .b = b};
	CHECK_EQ_INT(hs_trigger_engine_new(plan, ops->now_ns(b), &f.te), HS_OK);
	CHECK_EQ_INT(hs_backend_etw.set_observer(b, feed, &f), HS_OK);
	/* After the warm-up: 2 s of frames, one of 100 ms, 1 s more. */
	enum { BEFORE = 480, AFTER = 240, N = BEFORE + AFTER };
	const ULONGLONG period = REC_QPC_PER_SECOND / 240; /* 41666 ticks: 4.1666 ms */
	static EVENT_RECORD ev[N];
	ULONGLONG ts = t0 + (fh->trigger->warmup_s + 1) * REC_QPC_PER_SECOND, hit = 0;
	for (int i = 0; i < N; i++) {
		if (i == BEFORE) {
			ts += 100 * (REC_QPC_PER_SECOND / 1000) - period;
			hit = ts;
		}
		ev[i] = mk_event(&pp->provider->guid, (USHORT)want->id, 4242, ts, (UCHAR)(i % 4), NULL, 0);
		ts += period;
	}
	REC.qpc_now = ts;
	CHECK(rec_rt_deliver(plan->sessions[ki].session->logger_name, ev, N));
	for (int k = 0; k < 10 && f.fed < N; k++)
		hs_backend_etw.poll(b, 100);
	CHECK_EQ_INT(f.fed, N);
	const hs_trigger_stats *ts_ = hs_trigger_engine_stats(f.te, fi);
	CHECK(ts_ && ts_->hits == 1 && ts_->unreadable == 0);
	REC.qpc_now = hit + fh->trigger->post_delay_ms * (REC_QPC_PER_SECOND / 1000) + 1;
	hs_trigger_fire fire;
	memset(&fire, 0, sizeof(fire));
	bool fired = hs_trigger_engine_next(f.te, ops->now_ns(b), &fire);
	CHECK(fired);
	if (fired) {
		CHECK_EQ_STR(fire.name, "frame-hitch");
		CHECK_EQ_INT(fire.first_hit_ns, hit * (1000000000ull / REC_QPC_PER_SECOND));
		CHECK_CONTAINS(fire.evidence_json, "\"frame_pid\": 4242");
		CHECK_CONTAINS(fire.evidence_json, "\"present\": \"Microsoft-Windows-DXGI/PresentStart\"");
		CHECK_CONTAINS(fire.evidence_json, "\"frame_ms\": 100.000");
		free(fire.evidence_json);
	}
	CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
	hs_backend_etw.free(b);
	hs_trigger_engine_free(f.te);
	free(msg_take(m));
	CHECK_EQ_INT(rec_rt_running(), 0);
	DeleteFileW(L"rec-run\\keyevents.etl");
}

/* Fields by name through TDH, on the copy the consumer queued. */
static struct {
	bool ok[8];
	int64_t v[8];
	bool str_ok, str2_ok, str_num_ok, ansi_ok;
	char str[16], str2[2], ansi[16];
	size_t n;
} got;

static void read_fields(void *ctx, const hs_key_event *ev)
{
	(void)ctx;
	static const char *const names[] = {"Status", "Count", "Big", "Huge", "Flag", "Name", "Missing", "Array"};
	for (int i = 0; i < 8; i++)
		got.ok[i] = ev->fields && ev->fields->num(ev, names[i], &got.v[i]);
	got.str_ok = ev->fields && ev->fields->str(ev, "Name", got.str, sizeof got.str);
	got.str2_ok = ev->fields && ev->fields->str(ev, "Name", got.str2, sizeof got.str2);
	char buf[16];
	got.str_num_ok = ev->fields && ev->fields->str(ev, "Status", buf, sizeof buf);
	got.ansi_ok = ev->fields && ev->fields->str(ev, "Ansi", got.ansi, sizeof got.ansi);
	got.n++;
}

static void test_realtime_fields(const hs_plan *plan)
{
	const hs_plan_session *keys = session_of(plan, HS_MODE_FILE_CIRCULAR);
	const hs_plan_provider *pp = &keys->providers[0];
	static const rec_tdh_prop schema[] = {
		{L"Status", HS_TDH_INTYPE_INT32, 0, 4, 0, 0},   {L"Count", HS_TDH_INTYPE_UINT16, 4, 2, 0, 0},
		{L"Big", HS_TDH_INTYPE_UINT64, 8, 8, 0, 0},     {L"Huge", HS_TDH_INTYPE_UINT64, 16, 8, 0, 0},
		{L"Flag", HS_TDH_INTYPE_BOOLEAN, 24, 4, 0, 0},  {L"Name", HS_TDH_INTYPE_UNICODESTRING, 28, 8, 0, 0},
		{L"Array", HS_TDH_INTYPE_UINT32, 36, 4, 0x4 /* PropertyParamCount */, 2},
		{L"Ansi", HS_TDH_INTYPE_ANSISTRING, 44, 4, 0, 0},
	};
	static unsigned char data[48];
	int32_t status = -5;
	uint16_t count = 7;
	uint64_t big = 0x1122334455667788ull, huge = ~0ull;
	uint32_t flag = 1;
	memcpy(data, &status, 4);
	memcpy(data + 4, &count, 2);
	memcpy(data + 8, &big, 8);
	memcpy(data + 16, &huge, 8);
	memcpy(data + 24, &flag, 4);
	memcpy(data + 28, L"h\u00e9y", 8); /* "héy" and its terminator, UTF-16 */
	memcpy(data + 44, "abc", 4);
	EVENT_RECORD ev = mk_event(&pp->provider->guid, (USHORT)pp->events[0].id, 1, 10, 0, data, sizeof data);
	static unsigned char longer[HS_ETW_RT_MAX_USERDATA + 10];
	memcpy(longer, data, sizeof data);
	EVENT_RECORD cut = mk_event(&pp->provider->guid, (USHORT)pp->events[0].id, 1, 11, 0, longer, sizeof longer);

	rec_reset();
	memset(&got, 0, sizeof got);
	REC.tdh_props = schema;
	REC.n_tdh_props = sizeof(schema) / sizeof(schema[0]);
	FILE *m = msg_open();
	static volatile int interrupts;
	hs_backend_opts o = {.msg = msg_sink(m), .interrupts = &interrupts};
	hs_backend *b = NULL;
	CHECK_EQ_INT(hs_backend_etw.start(plan, "rec-run", &o, &b), HS_OK);
	if (!b) {
		free(msg_take(m));
		return;
	}
	CHECK_EQ_INT(hs_backend_etw.set_observer(b, read_fields, NULL), HS_OK);
	CHECK(rec_rt_deliver(keys->session->logger_name, &ev, 1));
	hs_backend_etw.poll(b, 100);
	CHECK_EQ_INT(got.n, 1);
	CHECK(got.ok[0] && got.v[0] == -5);                    /* INT32, sign-extended */
	CHECK(got.ok[1] && got.v[1] == 7);                     /* UINT16 */
	CHECK(got.ok[2] && got.v[2] == 0x1122334455667788ll); /* UINT64 */
	CHECK(!got.ok[3]);                                     /* a UINT64 above INT64_MAX does not fit */
	CHECK(got.ok[4] && got.v[4] == 1);                     /* BOOLEAN: a 4-byte BOOL */
	CHECK(!got.ok[5]);                                     /* a string is not a number */
	CHECK(!got.ok[6]);                                     /* no such field */
	CHECK(!got.ok[7]);                                     /* arrays are not read */
	CHECK(got.str_ok);                                     /* UTF-16 -> UTF-8 */
	CHECK_EQ_STR(got.str, "h\xc3\xa9y");
	CHECK(got.str2_ok);                                    /* cut at cap - 1 bytes */
	CHECK_EQ_STR(got.str2, "h");
	CHECK(!got.str_num_ok);                                /* a number is not a string (num reads it) */
	CHECK(got.ansi_ok);
	CHECK_EQ_STR(got.ansi, "abc");
	/* The schema is asked once per event, the value by size then bytes. */
	const char *log = rec_log();
	size_t infos = 0;
	for (const char *p = log; (p = strstr(p, "TdhGetEventInformation")); p++)
		infos++;
	CHECK_EQ_INT(infos, 1);
	CHECK_CONTAINS(log, "TdhGetEventInformation id=");
	CHECK_CONTAINS(log, "extended=0 size=16384 -> ok");
	CHECK_CONTAINS(log, "TdhGetProperty ctx=0 n=1 name=\"Status\" index=0xffffffff size=4 -> ok");
	/* An event whose payload was cut is never decoded (TDH would read past it). */
	got.n = 0;
	CHECK(rec_rt_deliver(keys->session->logger_name, &cut, 1));
	hs_backend_etw.poll(b, 100);
	CHECK_EQ_INT(got.n, 1);
	CHECK(!got.ok[0] && !got.ok[1]);
	CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
	hs_backend_etw.free(b);
	free(msg_take(m));
	DeleteFileW(L"rec-run\\keyevents.etl");
}

/* The other clocks: system time stays raw (100 ns units since 1601), a cycle
 * counter is converted to system time by ETW (no raw mode); now_ns agrees. */
static void test_realtime_clocks(const hs_plan *plan)
{
	const hs_backend_ops *ops = hs_backend_native();
	size_t ki = session_index(plan, HS_MODE_FILE_CIRCULAR);
	static const ULONG clocks[] = {HS_ETW_CLOCK_SYSTEM, HS_ETW_CLOCK_CYCLE};
	for (size_t c = 0; c < 2; c++) {
		hs_plan copy = *plan;
		hs_plan_session *ss = calloc(plan->n_sessions, sizeof(*ss));
		CHECK(ss != NULL);
		if (!ss)
			return;
		memcpy(ss, plan->sessions, plan->n_sessions * sizeof(*ss));
		ss[ki].etw.client_context = clocks[c];
		copy.sessions = ss;
		const hs_plan_provider *pp = &ss[ki].providers[0];
		rec_reset();
		seen_reset();
		REC.system_now = 133000000000000000ull; /* 2022, in 100 ns units since 1601 */
		EVENT_RECORD ev = mk_event(&pp->provider->guid, (USHORT)pp->events[0].id, 3, REC.system_now - 10000000ull,
					   0, NULL, 0);
		REC.rt_events = &ev;
		REC.n_rt_events = 1;
		FILE *m = msg_open();
		static volatile int interrupts;
		hs_backend_opts o = {.msg = msg_sink(m), .interrupts = &interrupts};
		hs_backend *b = NULL;
		CHECK_EQ_INT(hs_backend_etw.start(&copy, "rec-run", &o, &b), HS_OK);
		if (b) {
			CHECK_EQ_INT(hs_backend_etw.set_observer(b, observer, NULL), HS_OK);
			hs_backend_etw.poll(b, 100);
			CHECK_EQ_INT(seen.n, 1);
			CHECK_EQ_INT(seen.ev[0].ts_ns, (REC.system_now - 10000000ull) * 100u);
			CHECK_EQ_INT(ops->now_ns(b), REC.system_now * 100u);
			CHECK_EQ_INT(ops->now_ns(b) - seen.ev[0].ts_ns, 1000000000ull); /* 1 s ago */
			hs_backend_etw.stop(b);
		}
		hs_backend_etw.free(b);
		free(msg_take(m));
		CHECK_CONTAINS(rec_log(), clocks[c] == HS_ETW_CLOCK_CYCLE ? "mode=0x10000100" : "mode=0x10001100");
		CHECK_CONTAINS(rec_log(), clocks[c] == HS_ETW_CLOCK_CYCLE ? "Clock=3" : "Clock=2");
		free(ss);
		DeleteFileW(L"rec-run\\keyevents.etl");
	}
}

/* A fresh message sink and backend for the next failure case: the backend started on the recorder. */
static hs_status start_fresh(const hs_plan *plan, hs_backend_opts *o, FILE **m, hs_backend **b)
{
	*m = msg_open();
	o->msg = msg_sink(*m);
	*b = NULL;
	return hs_backend_etw.start(plan, "rec-run", o, b);
}

static void test_realtime_failures(const hs_plan *plan)
{
	const hs_plan_session *keys = session_of(plan, HS_MODE_FILE_CIRCULAR);
	FILE *m;
	hs_backend *b;
	static volatile int interrupts;
	hs_backend_opts o = {.interrupts = &interrupts};
	char *text;

	/* No consumer (what Wine's OpenTraceW says): the session is started
	 * again without real-time mode, recording goes on, the observer is refused. */
	rec_reset();
	rec_fail("OpenTraceW", 1, ERROR_ACCESS_DENIED);
	CHECK_EQ_INT(start_fresh(plan, &o, &m, &b), HS_OK);
	CHECK_EQ_INT(hs_backend_etw.set_observer(b, observer, NULL), HS_EUNSUPPORTED);
	CHECK_EQ_INT(hs_backend_etw.set_observer(b, NULL, NULL), HS_OK);
	CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
	hs_backend_etw.free(b);
	text = msg_take(m);
	CHECK_CONTAINS(text, "OpenTraceW(");
	CHECK_CONTAINS(text, "ERROR_ACCESS_DENIED");
	CHECK_CONTAINS(text, "starting it again without real-time mode");
	CHECK_EQ_INT(rec_running(), 0);
	hs_test_golden(golden_dir, "stutter-rt-denied", rec_log());
	free(text);
	DeleteFileW(L"rec-run\\keyevents.etl");

	/* The thread cannot be made: the trace is closed again, same fallback. */
	rec_reset();
	rec_fail("create_thread", 1, ERROR_NOT_ENOUGH_MEMORY);
	CHECK_EQ_INT(start_fresh(plan, &o, &m, &b), HS_OK);
	CHECK_CONTAINS(rec_log(), "CloseTrace handle=101 -> ok");
	CHECK_EQ_INT(hs_backend_etw.stop(b), HS_OK);
	hs_backend_etw.free(b);
	free(msg_take(m));
	CHECK_EQ_INT(rec_running(), 0);
	CHECK_EQ_INT(rec_rt_running(), 0);
	DeleteFileW(L"rec-run\\keyevents.etl");

	/* Someone stops the session under us (logman stop): ProcessTrace
	 * returns, the next poll says so once and closes the consumer. */
	rec_reset();
	seen_reset();
	CHECK_EQ_INT(start_fresh(plan, &o, &m, &b), HS_OK);
	CHECK_EQ_INT(hs_backend_etw.set_observer(b, observer, NULL), HS_OK);
	CHECK(rec_rt_end(keys->session->logger_name));
	hs_backend_etw.poll(b, 100);
	hs_backend_etw.poll(b, 100);
	hs_backend_etw.stop(b);
	hs_backend_etw.free(b);
	text = msg_take(m);
	CHECK_CONTAINS(text, "the real-time consumer ended");
	CHECK_EQ_INT(rec_rt_running(), 0);
	free(text);
	DeleteFileW(L"rec-run\\keyevents.etl");

	/* A failed start after the consumer opened (access denied on the ring):
	 * the consumer is closed and joined before the sessions are stopped. */
	rec_reset();
	rec_fail("StartTraceW", 2, ERROR_ACCESS_DENIED);
	CHECK_EQ_INT(start_fresh(plan, &o, &m, &b), HS_EPERM);
	free(msg_take(m));
	CHECK_EQ_INT(rec_rt_running(), 0);
	CHECK_EQ_INT(rec_running(), 0);
	CHECK_CONTAINS(rec_log(), "join_thread thread=1 ms=5000 -> ok");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_etw_realtime RULES_DIR GOLDEN_DIR\n");
		return 2;
	}
	rules_dir = argv[1];
	golden_dir = argv[2];
	hs_etw_api_set(&rec_api);

	test_realtime_view();
	hs_ruleset *rs = hs_test_load(rules_dir, "stutter.yaml");
	hs_plan *plan = hs_test_plan(rs, HS_PLATFORM_WINDOWS, 2);
	CHECK(plan != NULL);
	if (plan) {
		test_realtime_units(plan);
		test_realtime(plan);
		test_realtime_trigger(plan);
		test_marker(plan);
		test_realtime_present(plan);
		test_realtime_fields(plan);
		test_realtime_clocks(plan);
		test_realtime_failures(plan);
	}
	hs_plan_free(plan);
	hs_rules_free(rs);
	rec_reset();
	return hs_test_done("test_etw_realtime");
}
