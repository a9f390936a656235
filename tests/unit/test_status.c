/* test_status.c: unit tests for what a running recorder says about itself (run/status.h) and how the live view names an event's fields (Windows and Linux) (run/live_event.h), over hand-built plans, a fake backend and stutter.yaml. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"
#include "hindsight/diag.h"
#include "hindsight/rules.h"
#include "run/live_event.h"
#include "run/status.h"

/* The fake backend: each session's status as the test sets it. */
static hs_session_status fake[2];

static size_t fake_n_sessions(const hs_backend *b)
{
	(void)b;
	return 2;
}

static hs_status fake_session_status(hs_backend *b, size_t i, const hs_session_status **out)
{
	(void)b;
	*out = &fake[i];
	return HS_OK;
}

/* ETW: no per-CPU rings. A key session with a real-time consumer gets
 * events/s from the consumer's count, and the whole uptime as history while
 * its circular file is a buffer short of MaximumFileSize (nothing overwritten
 * yet), unknown once it is that full; a buffering ring's history and rate stay
 * unknown (ETW says nothing of its oldest event), its fill from the buffers. */
static void test_etw(void)
{
	hs_session sess[2] = {{.name = "keys", .mode = HS_MODE_FILE_CIRCULAR}, {.name = "snap", .mode = HS_MODE_BUFFERING}};
	hs_plan_session ps[2] = {{.session = &sess[0]}, {.session = &sess[1]}};
	hs_plan plan = {.sessions = ps, .n_sessions = 2};
	hs_backend_ops ops = {.name = "etw", .n_sessions = fake_n_sessions, .session_status = fake_session_status};
	int dummy;
	hs_backend *b = (hs_backend *)&dummy;
	memset(fake, 0, sizeof fake);
	fake[0] = (hs_session_status){.name = "keys", .mode = HS_MODE_FILE_CIRCULAR, .pool = true, .pool_buffers = 8,
				      .pool_buffer_kb = 64, .pool_free_buffers = 6, .bytes_in_file = 1 << 20,
				      .file_max_bytes = 16u << 20, .events_counted = true, .events_seen = 1000};
	fake[1] = (hs_session_status){.name = "snap", .mode = HS_MODE_BUFFERING, .pool = true, .pool_buffers = 100,
				      .pool_buffer_kb = 1024, .pool_free_buffers = 25, .pool_events_lost = 7};
	hs_run_status s;
	CHECK_EQ_INT(hs_run_status_init(&s, &plan, 1000, 0), HS_OK);
	hs_run_status_update(&s, &ops, b, NULL, 3000, 0);
	CHECK(s.sessions[0].events_per_s < 0); /* the first update has no interval */
	CHECK(s.sessions[0].history_s > 1.99 && s.sessions[0].history_s < 2.01);
	CHECK(s.sessions[0].ring_fill > 0.24 && s.sessions[0].ring_fill < 0.26);
	CHECK(s.sessions[1].history_s < 0 && s.sessions[1].events_per_s < 0);
	CHECK(s.sessions[1].ring_fill > 0.74 && s.sessions[1].ring_fill < 0.76);
	CHECK_EQ_INT(s.sessions[1].lost_events, 7);

	fake[0].events_seen = 3000; /* 2000 events in 2 s */
	fake[0].bytes_in_file = (16u << 20) - (64u << 10); /* exactly a buffer short: still everything */
	hs_run_status_update(&s, &ops, b, NULL, 5000, 0);
	CHECK(s.sessions[0].events_per_s > 999.9 && s.sessions[0].events_per_s < 1000.1);
	CHECK(s.sessions[0].history_s > 3.99 && s.sessions[0].history_s < 4.01);

	fake[0].bytes_in_file += 1; /* the circular file may have wrapped: unknown */
	fake[0].events_counted = false; /* the consumer went (the session was stopped under us): no rate */
	hs_run_status_update(&s, &ops, b, NULL, 6000, 0);
	CHECK(s.sessions[0].history_s < 0 && s.sessions[0].history_max_s < 0);
	CHECK(s.sessions[0].events_per_s < 0);
	hs_run_status_free(&s);
}

/* A Windows key event's fields as TDH would read them (hs_key_fields). */
static bool fake_num(const hs_key_event *ev, const char *name, int64_t *out)
{
	(void)ev;
	if (!strcmp(name, "ExitCode"))
		*out = 0xC0000005;
	else if (!strcmp(name, "ProcessID"))
		*out = 4242;
	else
		*out = 1;
	return true;
}

static bool fake_str(const hs_key_event *ev, const char *name, char *buf, size_t cap)
{
	(void)ev;
	if (strcmp(name, "ImageName"))
		return false;
	snprintf(buf, cap, "%s", "C:\\Games\\LongNamedGame-Win64-Shipping.exe");
	return true;
}

/* stutter.yaml's plan for a platform (2 CPUs), or NULL (checked; then nothing is left to free). */
static hs_plan *stutter_plan(hs_platform platform, hs_ruleset **rs)
{
	*rs = hs_test_load(HS_TEST_RULES_DIR, "stutter.yaml");
	hs_plan *plan = hs_test_plan(*rs, platform, 2);
	CHECK(plan != NULL);
	if (!plan)
		hs_rules_free(*rs);
	return plan;
}

/* The file-circular (key-event) session whose provider lists the event, and the provider's system; SIZE_MAX when none. */
static size_t key_session(const hs_plan *plan, const char *event, const char **system)
{
	for (size_t i = 0; i < plan->n_sessions; i++)
		for (size_t p = 0; p < plan->sessions[i].n_providers; p++) {
			const hs_plan_provider *pp = &plan->sessions[i].providers[p];
			for (size_t k = 0; k < pp->n_events; k++)
				if (plan->sessions[i].session->mode == HS_MODE_FILE_CIRCULAR && pp->events[k].name &&
				    !strcmp(pp->events[k].name, event)) {
					*system = pp->provider->system ? pp->provider->system : pp->provider->name;
					return i;
				}
		}
	return SIZE_MAX;
}

/* The live view and the tap on Windows: field names from the catalog's
 * formats (the newest template of Kernel-Process ProcessStop), strings first
 * so the cap keeps the image name, numbers and strings of the types TDH reads
 * (not the FILETIMEs), the task named after its image (not cut to 15). */
static void test_windows_live_fields(void)
{
	hs_ruleset *rs = NULL;
	hs_plan *plan = stutter_plan(HS_PLATFORM_WINDOWS, &rs);
	if (!plan)
		return;
	const char *system = NULL;
	size_t session = key_session(plan, "ProcessStop", &system);
	CHECK(session != SIZE_MAX);
	hs_live_catalog *cat = hs_live_catalog_new(plan, NULL);
	CHECK(cat != NULL);
	hs_key_fields kf = {.num = fake_num, .str = fake_str};
	hs_key_event ev = {.session = session, .ts_ns = 5, .system = system, .name = "ProcessStop", .pid = 4242,
			   .fields = &kf};
	hs_live_event le;
	if (cat && session != SIZE_MAX) {
		hs_live_event_fill(cat, &ev, 0, &le);
		CHECK_EQ_INT(le.n_fields, HS_LIVE_MAX_FIELDS);
		CHECK_EQ_STR(le.fields[0].name, "ImageName");
		CHECK(le.fields[0].is_str);
		bool exit_code = false, filetime = false;
		for (size_t i = 0; i < le.n_fields; i++) {
			exit_code |= !strcmp(le.fields[i].name, "ExitCode") && le.fields[i].num == 0xC0000005;
			filetime |= !strcmp(le.fields[i].name, "CreateTime");
		}
		CHECK(exit_code);
		CHECK(!filetime);
		CHECK_EQ_STR(le.comm, "LongNamedGame-Win64-Shi"); /* the image's name to 23 bytes, not 15 */
		CHECK(le.story && strstr(le.story, "ExitCode"));
	}
	hs_live_catalog_free(cat);
	hs_plan_free(plan);
	hs_rules_free(rs);
}

static bool linux_num(const hs_key_event *ev, const char *name, int64_t *out)
{
	(void)ev;
	*out = !strcmp(name, "pid") ? 777 : 3;
	return true;
}

static bool linux_str(const hs_key_event *ev, const char *name, char *buf, size_t cap)
{
	(void)ev;
	if (strcmp(name, "filename"))
		return false;
	snprintf(buf, cap, "%s", "/usr/bin/game");
	return true;
}

static size_t linux_names(const hs_key_event *ev, char (*names)[32], bool *is_str, size_t cap)
{
	(void)ev;
	if (cap < 1)
		return 0;
	snprintf(names[0], 32, "%s", "pid");
	is_str[0] = false;
	return 1;
}

/* The live view on Linux: until an event names its own fields (a backend without
 * hs_key_fields.names), the catalog's formats (linux-formats.yaml, matched by the
 * ftrace event's name, strings first) name them; once it does, its own names win. */
static void test_linux_live_fields(void)
{
	hs_ruleset *rs = NULL;
	hs_plan *plan = stutter_plan(HS_PLATFORM_LINUX, &rs);
	if (!plan)
		return;
	const char *system = NULL;
	size_t session = key_session(plan, "sched_process_exec", &system);
	CHECK(session != SIZE_MAX);
	hs_live_catalog *cat = hs_live_catalog_new(plan, NULL);
	CHECK(cat != NULL);
	hs_key_fields kf = {.num = linux_num, .str = linux_str};
	hs_key_event ev = {.session = session, .ts_ns = 5, .system = system, .name = "sched_process_exec", .pid = 777,
			   .fields = &kf};
	hs_live_event le;
	if (cat && session != SIZE_MAX) {
		hs_live_event_fill(cat, &ev, 0, &le);
		CHECK_EQ_INT(le.n_fields, 3);
		CHECK_EQ_STR(le.fields[0].name, "filename");
		CHECK(le.fields[0].is_str);
		CHECK_EQ_STR(le.fields[0].str, "/usr/bin/game");
		CHECK_EQ_STR(le.fields[1].name, "pid");
		CHECK(le.fields[1].num == 777);
		CHECK_EQ_STR(le.fields[2].name, "old_pid");
		CHECK_EQ_STR(le.comm, "game");
		/* the event's own format replaces the catalog's */
		kf.names = linux_names;
		hs_live_event_fill(cat, &ev, 0, &le);
		CHECK_EQ_INT(le.n_fields, 1);
		CHECK_EQ_STR(le.fields[0].name, "pid");
	}
	hs_live_catalog_free(cat);
	hs_plan_free(plan);
	hs_rules_free(rs);
}

int main(void)
{
	test_etw();
	test_windows_live_fields();
	test_linux_live_fields();
	return hs_test_done("test_status");
}
