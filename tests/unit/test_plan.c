/* test_plan.c: unit tests for the planner: every number handed to ETW or tracefs, derived from the rules. */
#include "check.h"
#include "fixture.h"
#include "hindsight/limits.h"
#include "hindsight/plan.h"
#include "plan/etw_defs.h"
#include <stdint.h>

static const char *const profile =
	"schema_version: 1\n"
	"kind: profile\n"
	"name: t\n"
	"include: [win.yaml, linux.yaml]\n"
	"platforms:\n"
	"  windows:\n"
	"    sessions:\n"
	"      - name: keys\n"
	"        logger_name: TestKeys\n"
	"        mode: file-circular\n"
	"        clock: system\n"
	"        buffer_size_kb: 256\n"
	"        min_buffers: 16\n"
	"        max_buffers: 32\n"
	"        max_file_mb: 500\n"
	"        flush_interval_s: 60\n"
	"        output: keys.etl\n"
	"        providers:\n"
	"          - provider: Test-Alpha\n"
	"            level: information\n"
	"            keywords: [A, B, C]\n"
	"            keywords_all: [C]\n"
	"            ignore_keyword_0: true\n"
	"            capture_state: true\n"
	"            stacks: [2]\n"
	"            events: [1, {id: 2, story: Overridden story.}]\n"
	"      - name: ring\n"
	"        logger_name: TestRing\n"
	"        mode: buffering\n"
	"        clock: qpc\n"
	"        buffer_size_kb: 1024\n"
	"        ring_mb: 256\n"
	"        output: snap.etl\n"
	"        providers:\n"
	"          - { match: \"Alpha|USB\", level: 5, keywords: all }\n"
	"      - name: cpu\n"
	"        logger_name: TestCpu\n"
	"        mode: sampling\n"
	"        clock: qpc\n"
	"        buffer_size_kb: 1024\n"
	"        min_buffers: 64\n"
	"        max_buffers: 256\n"
	"        sample_hz: 1000\n"
	"        output: cpu.etl\n"
	"        providers:\n"
	"          - { provider: Test-Sys, level: 4, keywords: [PROFILE], stacks: [SampledProfile] }\n"
	"  linux:\n"
	"    sessions:\n"
	"      - name: ring\n"
	"        logger_name: test_ring\n"
	"        mode: buffering\n"
	"        clock: mono\n"
	"        ring_mb: 256\n"
	"        output: snap.dat\n"
	"        providers: [{provider: sched}]\n"
	"      - name: keys\n"
	"        logger_name: test_keys\n"
	"        mode: file-circular\n"
	"        clock: mono\n"
	"        buffer_size_kb: 1024\n"
	"        max_file_mb: 64\n"
	"        flush_interval_s: 5\n"
	"        output: keys.dat\n"
	"        providers:\n"
	"          - provider: sched\n"
	"            events: [{name: sched_process_exit, filter: \"group_dead == 1\"}]\n";

static void test_windows(const hs_ruleset *rs)
{
	hs_plan *plan = NULL;
	CHECK(hs_plan_build(rs, HS_PLATFORM_WINDOWS, NULL, &plan) == HS_OK);
	if (!plan)
		return;
	CHECK_EQ_INT(plan->n_sessions, 3);
	const hs_plan_session *k = &plan->sessions[0];
	CHECK_EQ_INT(k->etw.wnode_buffer_size, 120 + 4096);
	CHECK_EQ_INT(k->etw.logger_name_offset, 120);
	CHECK_EQ_INT(k->etw.log_file_name_offset, 120 + 2048);
	CHECK_EQ_INT(k->etw.wnode_flags, HS_WNODE_FLAG_TRACED_GUID);
	CHECK_EQ_INT(k->etw.client_context, HS_ETW_CLOCK_SYSTEM);
	CHECK_EQ_INT(k->etw.log_file_mode, HS_EVENT_TRACE_FILE_MODE_CIRCULAR);
	CHECK_EQ_INT(k->etw.buffer_size_kb, 256);
	CHECK_EQ_INT(k->etw.min_buffers, 16);
	CHECK_EQ_INT(k->etw.max_buffers, 32);
	CHECK_EQ_INT(k->etw.max_file_mb, 500);
	CHECK_EQ_INT(k->etw.flush_timer, 60);
	CHECK_EQ_INT(k->memory_bytes, 32ull * 256 * 1024);
	CHECK_EQ_INT(k->n_providers, 1);
	const hs_plan_provider *p = &k->providers[0];
	CHECK_EQ_INT(p->level, 4);
	CHECK_EQ_INT(p->match_any, 0x103);
	CHECK_EQ_INT(p->match_all, 0x100);
	CHECK_EQ_INT(p->enable_property, HS_EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 | HS_EVENT_ENABLE_PROPERTY_STACK_TRACE);
	CHECK(p->capture_state && p->whitelist);
	CHECK_EQ_INT(p->n_events, 2);
	CHECK_EQ_INT(HS_EVENT_FILTER_EVENT_ID_SIZE(p->n_events), 8);
	CHECK_EQ_STR(p->events[0].story, "First event.");
	CHECK(p->events[0].story_from_catalog);
	CHECK_EQ_STR(p->events[1].story, "Overridden story.");
	CHECK(!p->events[1].story_from_catalog);
	CHECK_EQ_INT(p->n_stack_events, 1);

	const hs_plan_session *r = &plan->sessions[1];
	CHECK_EQ_INT(r->etw.log_file_mode, HS_EVENT_TRACE_BUFFERING_MODE);
	CHECK_EQ_INT(r->etw.min_buffers, 256);
	CHECK_EQ_INT(r->etw.max_buffers, 256);
	CHECK_EQ_INT(r->etw.flush_timer, 0);
	CHECK_EQ_INT(r->etw.max_file_mb, 0);
	CHECK_EQ_INT(r->memory_bytes, 256ull << 20);
	CHECK_EQ_INT(r->n_providers, 2); /* the pattern selected two catalog providers */
	CHECK_EQ_INT(r->providers[0].match_any, 0);
	CHECK_EQ_INT(r->providers[0].level, 5);

	const hs_plan_session *c = &plan->sessions[2];
	CHECK_EQ_INT(c->etw.log_file_mode, HS_EVENT_TRACE_SYSTEM_LOGGER_MODE | HS_EVENT_TRACE_FILE_MODE_SEQUENTIAL);
	CHECK_EQ_INT(c->etw.sample_interval_100ns, 10000);
	CHECK_EQ_INT(c->providers[0].enable_property, 0); /* system stacks go through TraceStackTracingInfo */
	CHECK_EQ_INT(c->providers[0].n_stack_events, 1);
	CHECK(c->providers[0].stack_events[0].has_classic_guid && c->providers[0].stack_events[0].id == 46);
	CHECK_EQ_INT(plan->n_whitelisted, 2);
	CHECK_EQ_INT(plan->memory_bytes, 32ull * 256 * 1024 + (256ull << 20) + 256ull * 1024 * 1024);
	hs_plan_free(plan);
}

/* --live / --events-jsonl on the command line: every Windows file-circular
 * session runs in real time (no trigger watches these), flushing each second;
 * the buffering ring and the sampling session do not change. */
static void test_windows_streamed(const hs_ruleset *rs)
{
	hs_plan *plan = NULL;
	CHECK(hs_plan_build(rs, HS_PLATFORM_WINDOWS, &(hs_plan_opts){.stream_key_events = true}, &plan) == HS_OK);
	if (!plan)
		return;
	const hs_plan_session *k = &plan->sessions[0];
	CHECK_EQ_INT(k->etw.log_file_mode, HS_EVENT_TRACE_FILE_MODE_CIRCULAR | HS_EVENT_TRACE_REAL_TIME_MODE);
	CHECK_EQ_INT(k->etw.flush_timer, HS_ETW_REALTIME_FLUSH_S);
	CHECK(k->etw.realtime_for_view);
	for (size_t i = 1; i < plan->n_sessions; i++) {
		CHECK(!(plan->sessions[i].etw.log_file_mode & HS_EVENT_TRACE_REAL_TIME_MODE));
		CHECK(!plan->sessions[i].etw.realtime_for_view);
	}
	hs_plan_free(plan);
}

static void test_linux(const hs_ruleset *rs)
{
	hs_plan *plan = NULL;
	hs_plan_opts opts = {.cpus = 3};
	CHECK(hs_plan_build(rs, HS_PLATFORM_LINUX, &opts, &plan) == HS_OK);
	if (!plan)
		return;
	const hs_plan_session *r = &plan->sessions[0];
	/* 256 MB over 3 CPUs, rounded down to whole 4 KB pages. */
	CHECK_EQ_INT(r->linux_.per_cpu_kb, 87380);
	CHECK(r->linux_.overwrite);
	CHECK_EQ_INT(r->memory_bytes, 87380ull * 1024 * 3);
	CHECK(!r->providers[0].whitelist);
	const hs_plan_session *k = &plan->sessions[1];
	CHECK_EQ_INT(k->linux_.per_cpu_kb, 1024);
	CHECK(!k->linux_.overwrite);
	CHECK(k->providers[0].whitelist && k->providers[0].n_events == 1);
	CHECK_EQ_STR(k->providers[0].events[0].filter, "group_dead == 1");
	CHECK_EQ_STR(k->providers[0].events[0].story, "A task ended.");
	hs_plan_free(plan);
}

/* Triggers: alerts resolve to the events the watched session really enables,
 * a trace_marker frame source sets copy_trace_marker on its session, and the
 * ring history and snapshot bound come from the sessions. */
static const char *const trigger_catalog =
	"schema_version: 1\n"
	"kind: catalog\n"
	"platform: linux\n"
	"providers:\n"
	"  - name: oom\n"
	"    kind: ftrace\n"
	"    system: oom\n"
	"    events:\n"
	"      - { name: mark_victim, alert: oom-kill, story: The OOM killer chose a victim. }\n"
	"      - { name: oom_other, alert: oom-kill, story: Not whitelisted anywhere. }\n"
	"  - name: blk\n"
	"    kind: ftrace\n"
	"    system: block\n"
	"    events:\n"
	"      - { name: block_rq_error, alert: io-error, story: A block request failed. }\n"
	"      - { name: block_rq_issue, story: A request went to the device. }\n";

static const char *const trigger_profile =
	"schema_version: 1\n"
	"kind: profile\n"
	"name: trg\n"
	"include: [linux.yaml, tcat.yaml]\n"
	"run: {snapshots_max_mb: 512}\n"
	"platforms:\n"
	"  linux:\n"
	"    sessions:\n"
	"      - {name: ring, logger_name: r, mode: buffering, clock: mono, ring_mb: 100, expected_rate_eps: 20000,\n"
	"         output: snap.dat, providers: [{provider: sched}]}\n"
	"      - name: keys\n"
	"        logger_name: k\n"
	"        mode: file-circular\n"
	"        clock: mono\n"
	"        buffer_size_kb: 64\n"
	"        max_file_mb: 8\n"
	"        output: keys.dat\n"
	"        providers:\n"
	"          - {provider: oom, events: [mark_victim]}\n"
	"          - {provider: blk}\n"
	"    trigger_defaults: {warmup_s: 5, clear_ms: 500, post_delay_ms: 1500, cooldown_s: 30, max_per_hour: 6, keep: 2}\n"
	"    triggers:\n"
	"      - {name: oom, kind: event, alert: oom-kill}\n"
	"      - {name: io, kind: event, alert: [io-error, hang]}\n"
	"      - {name: exit, kind: regex, provider: sched, event: sched_process_exit, field: comm, pattern: \"^game\"}\n"
	"      - {name: hitch, kind: frame_time, session: keys, source: trace_marker, slice: \"^Frame\",\n"
	"         threshold_ms: 33.5, ratio: 2.5, ceiling_ms: 5000, median_frames: 60, cooldown_s: 10}\n"
	"      - {name: manual, kind: manual, post_delay_ms: 0}\n";

static void test_triggers(void)
{
	fixture_write("tcat.yaml", trigger_catalog);
	/* sched_process_exit is streamed by no file-circular session yet: HS131. */
	fixture_write("trg.yaml", trigger_profile);
	hs_diags *d;
	hs_ruleset *rs;
	CHECK(fixture_load("trg.yaml", &d, &rs) == HS_ERULES);
	const hs_diag *e = fixture_find(d, HS_D_TRIGGER_EVENT);
	CHECK(e != NULL && hs_diags_errors(d) == 1);
	hs_rules_free(rs);
	hs_diags_free(d);

	char *fixed = strdup(trigger_profile);
	char *at = strstr(fixed, "          - {provider: blk}\n");
	CHECK(at != NULL);
	size_t len = strlen(fixed) + 64;
	char *text = malloc(len);
	snprintf(text, len, "%.*s          - {provider: sched, events: [sched_process_exit]}\n%s", (int)(at - fixed),
		 fixed, at);
	fixture_write("trg.yaml", text);
	free(text);
	free(fixed);
	CHECK(fixture_load("trg.yaml", &d, &rs) == HS_OK);
	CHECK_EQ_INT(hs_diags_count(d), 0);
	if (hs_diags_count(d))
		hs_diags_render(d, stderr, HS_FMT_TEXT);
	hs_plan *plan = NULL;
	CHECK(hs_plan_build(rs, HS_PLATFORM_LINUX, &(hs_plan_opts){.cpus = 2}, &plan) == HS_OK);
	if (plan) {
		CHECK_EQ_INT(plan->n_triggers, 5);
		CHECK_EQ_INT(plan->snapshots_max_bytes, 512ull << 20);
		const hs_plan_trigger *oom = &plan->triggers[0], *io = &plan->triggers[1], *ex = &plan->triggers[2],
				      *hitch = &plan->triggers[3], *man = &plan->triggers[4];
		/* The alert resolves to the whitelisted event only, not oom_other. */
		CHECK_EQ_INT(oom->session, 1);
		CHECK_EQ_INT(oom->n_events, 1);
		if (oom->n_events) {
			CHECK_EQ_STR(oom->events[0].system, "oom");
			CHECK_EQ_STR(oom->events[0].name, "mark_victim");
			CHECK_EQ_INT(oom->events[0].id, -1);
		}
		/* A whole-system provider enables every catalog event with the alert. */
		CHECK_EQ_INT(io->n_events, 1);
		if (io->n_events)
			CHECK_EQ_STR(io->events[0].name, "block_rq_error");
		CHECK_EQ_INT(ex->n_events, 1);
		if (ex->n_events)
			CHECK_EQ_STR(ex->events[0].system, "sched");
		/* Behaviour from trigger_defaults, and a trigger's own value over it. */
		CHECK_EQ_INT(oom->trigger->post_delay_ms, 1500);
		CHECK_EQ_INT(oom->trigger->keep, 2);
		CHECK_EQ_INT(hitch->trigger->cooldown_s, 10);
		CHECK_EQ_INT(man->trigger->post_delay_ms, 0);
		/* frame_time on trace_marker: ftrace/print, copy_trace_marker on keys only. */
		CHECK_EQ_INT(hitch->session, 1);
		CHECK(hitch->trigger->threshold_ms == 33.5 && hitch->trigger->ratio == 2.5);
		CHECK_EQ_INT(hitch->n_events, 1);
		if (hitch->n_events) {
			CHECK_EQ_STR(hitch->events[0].system, "ftrace");
			CHECK_EQ_STR(hitch->events[0].name, "print");
		}
		CHECK(plan->sessions[1].linux_.copy_trace_marker);
		CHECK(!plan->sessions[0].linux_.copy_trace_marker);
		/* manual watches no session. */
		CHECK(man->session == SIZE_MAX && man->n_events == 0);
		/* 100 MB over 2 CPUs = 104857600 bytes at 20000 events/s of 51 B. */
		double want = 104857600.0 / (20000.0 * HS_LINUX_RING_BYTES_PER_EVENT);
		CHECK(oom->ring_history_s > want - 0.01 && oom->ring_history_s < want + 0.01);
		CHECK_EQ_INT(oom->snapshot_bytes_max, 104857600ull + (8ull << 20));
		char *json = hs_plan_json(plan);
		CHECK_CONTAINS(json, "\"copy_trace_marker\": true");
		CHECK_CONTAINS(json, "\"ring_history_s\": 102.8");
		free(json);
	}
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
}

int main(void)
{
	fixture_init();
	fixture_write("win.yaml", fixture_win_catalog);
	fixture_write("linux.yaml", fixture_linux_catalog);
	fixture_write("p.yaml", profile);
	hs_diags *d;
	hs_ruleset *rs;
	hs_status st = fixture_load("p.yaml", &d, &rs);
	CHECK(st == HS_OK);
	CHECK_EQ_INT(hs_diags_count(d), 0);
	if (hs_diags_count(d))
		hs_diags_render(d, stderr, HS_FMT_TEXT);
	if (st == HS_OK) {
		test_windows(rs);
		test_windows_streamed(rs);
		test_linux(rs);
	}
	hs_plan *plan = NULL;
	hs_rules_free(rs);
	hs_diags_free(d);
	/* A profile without a section for the platform has no plan. */
	fixture_write("w.yaml", "schema_version: 1\nkind: profile\nname: w\ninclude: [linux.yaml]\nplatforms:\n  linux:\n"
				"    sessions:\n      - {name: a, logger_name: a, mode: buffering, clock: mono, ring_mb: 8, "
				"output: a.dat, providers: [{provider: sched}]}\n");
	st = fixture_load("w.yaml", &d, &rs);
	CHECK(st == HS_OK);
	CHECK(hs_plan_build(rs, HS_PLATFORM_WINDOWS, NULL, &plan) == HS_EINVAL && plan == NULL);
	hs_rules_free(rs);
	hs_diags_free(d);
	/* rulegen's evidence stands in for a missing story (HS129, a warning),
	 * and never hides a human one. */
	fixture_write("e.yaml", "schema_version: 1\nkind: profile\nname: e\ninclude: [linux.yaml]\nplatforms:\n  linux:\n"
				"    sessions:\n      - {name: a, logger_name: a, mode: file-circular, clock: mono, "
				"buffer_size_kb: 64, max_file_mb: 8, output: a.dat, providers: [{provider: sched, events: ["
				"{name: sched_other, evidence: \"crash only: 12/min vs 0/min elsewhere\"}, "
				"{name: sched_process_exit, evidence: \"stale\"}]}]}\n");
	st = fixture_load("e.yaml", &d, &rs);
	CHECK(st == HS_OK);
	CHECK_EQ_INT(hs_diags_errors(d), 0);
	bool stub = false;
	for (size_t i = 0; i < hs_diags_count(d); i++)
		stub |= hs_diags_at(d, i)->code == HS_D_STORY_STUB;
	CHECK(stub);
	CHECK(hs_plan_build(rs, HS_PLATFORM_LINUX, &(hs_plan_opts){.cpus = 2}, &plan) == HS_OK);
	if (plan) {
		const hs_plan_provider *pp = &plan->sessions[0].providers[0];
		CHECK_EQ_STR(pp->events[0].story, "crash only: 12/min vs 0/min elsewhere");
		CHECK(pp->events[0].story_from_evidence && !pp->events[0].story_from_catalog);
		CHECK_EQ_STR(pp->events[1].story, "A task ended.");
		CHECK(!pp->events[1].story_from_evidence && pp->events[1].story_from_catalog);
	}
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	test_triggers();
	fixture_cleanup();
	return hs_test_done("test_plan");
}
