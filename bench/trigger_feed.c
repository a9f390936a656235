/* bench/trigger_feed.c: events per second through hs_trigger_engine_feed: the fast path (no trigger watches the event) and a frame_time marker stream. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hindsight/trigger.h"

#define N_TRIGGERS 8
#define N_EVENTS 20000000u

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool marker_str(const hs_key_event *ev, const char *field, char *buf, size_t cap)
{
	(void)field;
	snprintf(buf, cap, "%s", (const char *)ev->fields->ctx);
	return true;
}

int main(void)
{
	/* A plan by hand: event triggers on names the stream never has, and one
	 * frame_time trigger on the marker event. */
	static const char *const names[N_TRIGGERS] = {"w0", "w1", "w2", "w3", "w4", "w5", "w6", "marker"};
	hs_session sess = {.name = "keys"};
	hs_plan_session ps = {.session = &sess};
	hs_trigger tr[N_TRIGGERS];
	hs_plan_trigger pt[N_TRIGGERS];
	hs_plan_trigger_event pe[N_TRIGGERS];
	memset(tr, 0, sizeof tr);
	memset(pt, 0, sizeof pt);
	for (size_t i = 0; i < N_TRIGGERS; i++) {
		tr[i].name = names[i];
		tr[i].kind = i + 1 < N_TRIGGERS ? HS_TRIGGER_EVENT : HS_TRIGGER_FRAME_TIME;
		tr[i].slice = "^Frame";
		tr[i].threshold_ms = 50;
		tr[i].ratio = 3;
		tr[i].ceiling_ms = 1000;
		tr[i].median_frames = 240;
		pe[i] = (hs_plan_trigger_event){.system = "bench", .name = names[i], .id = -1};
		pt[i] = (hs_plan_trigger){.trigger = &tr[i], .events = &pe[i], .n_events = 1};
	}
	hs_plan plan = {.sessions = &ps, .n_sessions = 1, .triggers = pt, .n_triggers = N_TRIGGERS};
	hs_trigger_engine *te;
	if (hs_trigger_engine_new(&plan, 1, &te) != HS_OK) {
		fprintf(stderr, "trigger_feed: hs_trigger_engine_new failed\n");
		return 1;
	}

	/* 1. The fast path: 16 event names no trigger watches. */
	static const char *const other[16] = {"sched_switch", "sched_wakeup", "irq_handler_entry", "softirq_entry",
					      "sys_enter", "sys_exit", "page_fault_user", "block_rq_issue",
					      "block_rq_complete", "net_dev_xmit", "kmalloc", "kfree",
					      "workqueue_execute_start", "timer_expire_entry", "cpu_idle", "task_rename"};
	hs_key_event ev = {.system = "bench", .pid = 1};
	double t0 = now_s();
	for (uint32_t i = 0; i < N_EVENTS; i++) {
		ev.name = other[i & 15];
		ev.ts_ns = 1000 + i;
		hs_trigger_engine_feed(te, &ev, 0);
	}
	double fast = N_EVENTS / (now_s() - t0);

	/* 2. Frame markers at 240 Hz (B and E lines) through the frame_time trigger. */
	hs_key_fields kf = {.str = marker_str};
	ev.name = "marker";
	ev.fields = &kf;
	uint32_t n_frames = N_EVENTS / 10;
	t0 = now_s();
	for (uint32_t i = 0; i < n_frames; i++) {
		kf.ctx = i & 1 ? (void *)"E|4242" : (void *)"B|4242|Frame 17\n";
		ev.ts_ns = 1000000000ull + (uint64_t)i * 2083333;
		hs_trigger_engine_feed(te, &ev, 0);
	}
	double frames = n_frames / (now_s() - t0);
	/* The rates mean something only if the markers went through the frame
	 * path: one frame of 300 ms (over the 50 ms threshold and 3x the 2 ms
	 * median) after the timed ones must be its one hit, and the event
	 * triggers, which watch names the stream never has, must have none. */
	uint64_t ts = 1000000000ull + (uint64_t)n_frames * 2083333;
	kf.ctx = (void *)"B|4242|Frame 18\n";
	ev.ts_ns = ts;
	hs_trigger_engine_feed(te, &ev, 0);
	ev.ts_ns = ts + 300000000ull; /* a frame is start to start */
	hs_trigger_engine_feed(te, &ev, 0);
	uint64_t other_hits = 0;
	for (size_t i = 0; i + 1 < N_TRIGGERS; i++)
		other_hits += hs_trigger_engine_stats(te, i)->hits;
	uint64_t hits = hs_trigger_engine_stats(te, N_TRIGGERS - 1)->hits;
	if (hits != 1 || other_hits) {
		fprintf(stderr,
			"trigger_feed: INVALID: the 300 ms frame made %" PRIu64 " frame_time hits (1 expected) and the "
			"event triggers %" PRIu64 " (0 expected): the feed did not take the measured paths; no rates\n",
			hits, other_hits);
		hs_trigger_engine_free(te);
		return 1;
	}
	printf("trigger_feed: %d triggers; no trigger watches the event: %.1f M events/s; frame_time markers: %.2f M "
	       "events/s (a 300 ms frame after them: %" PRIu64 " hit, as expected)\n",
	       N_TRIGGERS, fast / 1e6, frames / 1e6, hits);
	hs_trigger_engine_free(te);
	return 0;
}
