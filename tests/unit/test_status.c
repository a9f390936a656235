/* test_status.c: unit tests for the recorder's status (run/status.h) over a hand-built plan and a fake backend: what it can say of ETW sessions. */
#include <stdint.h>
#include <string.h>

#include "check.h"
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
	hs_plan_session ps[2] = {{.session = &sess[0], .etw = {.max_file_mb = 16, .buffer_size_kb = 64}},
				 {.session = &sess[1], .etw = {.buffer_size_kb = 1024}}};
	hs_plan plan = {.sessions = ps, .n_sessions = 2};
	hs_backend_ops ops = {.name = "etw", .n_sessions = fake_n_sessions, .session_status = fake_session_status};
	int dummy;
	hs_backend *b = (hs_backend *)&dummy;
	memset(fake, 0, sizeof fake);
	fake[0] = (hs_session_status){.name = "keys", .mode = HS_MODE_FILE_CIRCULAR, .etw_buffers = 8,
				      .etw_buffer_kb = 64, .etw_free_buffers = 6, .bytes_in_file = 1 << 20,
				      .etw_realtime = true, .etw_rt_events = 1000};
	fake[1] = (hs_session_status){.name = "snap", .mode = HS_MODE_BUFFERING, .etw_buffers = 100,
				      .etw_buffer_kb = 1024, .etw_free_buffers = 25, .etw_events_lost = 7};
	hs_run_status s;
	CHECK_EQ_INT(hs_run_status_init(&s, &plan, 1000, 0), HS_OK);
	hs_run_status_update(&s, &ops, b, NULL, 3000, 0);
	CHECK(s.sessions[0].events_per_s < 0); /* the first update has no interval */
	CHECK(s.sessions[0].history_s > 1.99 && s.sessions[0].history_s < 2.01);
	CHECK(s.sessions[0].ring_fill > 0.24 && s.sessions[0].ring_fill < 0.26);
	CHECK(s.sessions[1].history_s < 0 && s.sessions[1].events_per_s < 0);
	CHECK(s.sessions[1].ring_fill > 0.74 && s.sessions[1].ring_fill < 0.76);
	CHECK_EQ_INT(s.sessions[1].lost_events, 7);

	fake[0].etw_rt_events = 3000; /* 2000 events in 2 s */
	fake[0].bytes_in_file = (16u << 20) - (64u << 10); /* exactly a buffer short: still everything */
	hs_run_status_update(&s, &ops, b, NULL, 5000, 0);
	CHECK(s.sessions[0].events_per_s > 999.9 && s.sessions[0].events_per_s < 1000.1);
	CHECK(s.sessions[0].history_s > 3.99 && s.sessions[0].history_s < 4.01);

	fake[0].bytes_in_file += 1; /* the circular file may have wrapped: unknown */
	fake[0].etw_realtime = false; /* the consumer went (the session was stopped under us): no rate */
	hs_run_status_update(&s, &ops, b, NULL, 6000, 0);
	CHECK(s.sessions[0].history_s < 0 && s.sessions[0].history_max_s < 0);
	CHECK(s.sessions[0].events_per_s < 0);
	hs_run_status_free(&s);
}

int main(void)
{
	test_etw();
	return hs_test_done("test_status");
}
