/* test_trigger.c: unit tests for the trigger engine (hindsight/trigger.h) over hand-built plans and synthetic key events. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hindsight/limits.h"
#include "hindsight/regex.h"
#include "hindsight/trigger.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (1000 * SEC) /* recording start */

/* ---- a plan built by hand: up to 4 triggers over 2 sessions ---- */

typedef struct {
	hs_session sess[2];
	hs_plan_session psess[2];
	hs_trigger tr[4];
	hs_plan_trigger pt[4];
	hs_plan_trigger_event ev[4];
	hs_plan plan;
} fixture;

static void fx_init(fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->sess[0].name = "keys";
	f->sess[1].name = "other";
	f->psess[0].session = &f->sess[0];
	f->psess[1].session = &f->sess[1];
	f->plan.sessions = f->psess;
	f->plan.n_sessions = 2;
	f->plan.triggers = f->pt;
}

/* Adds a trigger on (system, name) in session 0 with no warm-up, clear, delay, cool-down or cap. */
static hs_trigger *fx_add(fixture *f, hs_trigger_kind kind, const char *name, const char *system, const char *event)
{
	size_t i = f->plan.n_triggers++;
	hs_trigger *t = &f->tr[i];
	t->name = name;
	t->kind = kind;
	t->has_kind = true;
	t->event_id = -1;
	f->pt[i].trigger = t;
	f->pt[i].session = 0;
	if (event) {
		f->ev[i] = (hs_plan_trigger_event){.system = system, .name = event, .id = -1};
		f->pt[i].events = &f->ev[i];
		f->pt[i].n_events = 1;
	}
	return t;
}

/* ---- fake payload fields ---- */

typedef struct {
	const char *name;
	const char *str; /* NULL: an integer field */
	int64_t num;
} fake_field;

typedef struct {
	fake_field f[4];
	size_t n;
} fake_payload;

static const fake_field *fake_find(const hs_key_event *ev, const char *field)
{
	const fake_payload *p = ev->fields->ctx;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->f[i].name, field) == 0)
			return &p->f[i];
	return NULL;
}

static bool fake_num(const hs_key_event *ev, const char *field, int64_t *out)
{
	const fake_field *f = fake_find(ev, field);
	if (!f || f->str)
		return false;
	*out = f->num;
	return true;
}

static bool fake_str(const hs_key_event *ev, const char *field, char *buf, size_t cap)
{
	const fake_field *f = fake_find(ev, field);
	if (!f || !f->str || !cap)
		return false;
	snprintf(buf, cap, "%s", f->str);
	return true;
}

/* Feeds one event with the given payload (p NULL: the backend decodes no fields). */
static void feed(hs_trigger_engine *te, size_t session, const char *system, const char *name, uint64_t ts,
		 fake_payload *p)
{
	hs_key_fields kf = {.num = fake_num, .str = fake_str, .ctx = p};
	hs_key_event ev = {.session = session, .cpu = 1, .ts_ns = ts, .system = system, .name = name, .pid = 42,
			   .fields = p ? &kf : NULL};
	hs_trigger_engine_feed(te, &ev, 0);
}

static void feed_plain(hs_trigger_engine *te, uint64_t ts) { feed(te, 0, "signal", "signal_generate", ts, NULL); }

/* One atrace line through the marker event. */
static void marker(hs_trigger_engine *te, uint64_t ts, const char *text)
{
	fake_payload p = {.f = {{.name = "buf", .str = text}}, .n = 1};
	feed(te, 0, "ftrace", "print", ts, &p);
}

static int next_fire(hs_trigger_engine *te, uint64_t now, hs_trigger_fire *out)
{
	memset(out, 0, sizeof(*out));
	return hs_trigger_engine_next(te, now, out);
}

/* ---- behaviour ---- */

static void test_warmup(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	t->warmup_s = 10;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	CHECK(hs_trigger_engine_wants_events(te));
	CHECK_EQ_INT(hs_trigger_engine_count(te), 1);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	CHECK(!st->armed);
	feed_plain(te, T0 + 5 * SEC);
	feed_plain(te, T0 + 9 * SEC);
	hs_trigger_fire fire;
	CHECK(!next_fire(te, T0 + 9 * SEC, &fire));
	CHECK_EQ_INT(st->ignored_warmup, 2);
	CHECK(!st->pending);
	/* Warm-up hits do not delay the arming. */
	CHECK(!next_fire(te, T0 + 10 * SEC, &fire));
	CHECK(st->armed);
	feed_plain(te, T0 + 10 * SEC);
	CHECK(st->pending);
	CHECK(next_fire(te, T0 + 10 * SEC, &fire));
	CHECK_EQ_INT(fire.trigger, 0);
	CHECK_EQ_STR(fire.name, "crash");
	CHECK_EQ_INT(fire.first_hit_ns, T0 + 10 * SEC);
	CHECK_CONTAINS(fire.evidence_json, "\"trigger\": \"crash\"");
	CHECK_CONTAINS(fire.evidence_json, "\"session\": \"keys\"");
	CHECK_CONTAINS(fire.evidence_json, "\"event\": \"signal_generate\"");
	free(fire.evidence_json);
	CHECK_EQ_INT(st->hits, 3);
	CHECK_EQ_INT(st->fired, 1);
	CHECK_EQ_INT(st->last_fire_ns, T0 + 10 * SEC);
	hs_trigger_engine_free(te);
}

static void test_post_delay_and_join(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	t->post_delay_ms = 500;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	CHECK(hs_trigger_engine_next_due(te) == UINT64_MAX);
	uint64_t h = T0 + 20 * SEC;
	hs_key_event ev = {.session = 0, .ts_ns = h, .system = "signal", .name = "signal_generate", .pid = 7};
	hs_trigger_engine_feed(te, &ev, h + 3 * MS); /* seen 3 ms after it happened */
	CHECK(hs_trigger_engine_next_due(te) == h + 500 * MS);
	feed_plain(te, h + 100 * MS);
	feed_plain(te, h + 200 * MS);
	hs_trigger_fire fire;
	CHECK(!next_fire(te, h + 499 * MS, &fire));
	CHECK(next_fire(te, h + 500 * MS, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, h);
	CHECK_EQ_INT(fire.last_hit_ns, h + 200 * MS);
	CHECK_EQ_INT(fire.detect_ns, h + 3 * MS);
	CHECK_EQ_INT(fire.due_ns, h + 500 * MS);
	CHECK_EQ_INT(fire.hits, 3);
	CHECK_CONTAINS(fire.evidence_json, "\"pid\": 7");
	CHECK_CONTAINS(fire.evidence_json, "\"post_delay_ms\": 500");
	free(fire.evidence_json);
	CHECK(!next_fire(te, h + 600 * MS, &fire));
	CHECK(hs_trigger_engine_next_due(te) == UINT64_MAX);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	CHECK_EQ_INT(st->joined, 2);
	CHECK_EQ_INT(st->fired, 1);
	CHECK(hs_trigger_engine_stats(te, 1) == NULL);
	hs_trigger_engine_free(te);
}

/* The engine reads the clock it was given only when a hit makes a snapshot pending. */
static uint64_t counting_clock(void *ctx)
{
	uint64_t *calls = ctx;
	(*calls)++;
	return T0 + 30 * SEC + 7 * MS;
}

static void test_clock_read_on_hits_only(void)
{
	fixture f;
	fx_init(&f);
	fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate")->post_delay_ms = 500;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	uint64_t calls = 0;
	hs_trigger_engine_set_clock(te, counting_clock, &calls);
	for (int i = 0; i < 100; i++)
		feed(te, 0, "sched", "sched_process_exec", T0 + 30 * SEC, NULL); /* watched by nothing */
	CHECK_EQ_INT(calls, 0);
	feed_plain(te, T0 + 30 * SEC);
	CHECK_EQ_INT(calls, 1);
	feed_plain(te, T0 + 30 * SEC + MS); /* joins the pending one: no new detection time */
	CHECK_EQ_INT(calls, 1);
	hs_trigger_fire fire;
	CHECK(next_fire(te, T0 + 31 * SEC, &fire));
	CHECK_EQ_INT(fire.detect_ns, T0 + 30 * SEC + 7 * MS);
	free(fire.evidence_json);
	hs_trigger_engine_free(te);
}

static void test_cooldown(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	t->cooldown_s = 10;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	hs_trigger_fire fire;
	feed_plain(te, T0 + SEC);
	CHECK(next_fire(te, T0 + SEC, &fire));
	free(fire.evidence_json);
	feed_plain(te, T0 + 5 * SEC);
	feed_plain(te, T0 + 10 * SEC);
	CHECK(!next_fire(te, T0 + 10 * SEC, &fire));
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	CHECK_EQ_INT(st->joined, 2);
	CHECK(!st->pending);
	feed_plain(te, T0 + 11 * SEC); /* the cool-down ended at T0 + 11 s */
	CHECK(st->pending);
	CHECK(next_fire(te, T0 + 11 * SEC, &fire));
	free(fire.evidence_json);
	CHECK_EQ_INT(st->fired, 2);
	hs_trigger_engine_free(te);
}

static void test_rearm(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	t->clear_ms = 1000;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	hs_trigger_fire fire;
	feed_plain(te, T0);
	CHECK(next_fire(te, T0, &fire));
	free(fire.evidence_json);
	feed_plain(te, T0 + 500 * MS);  /* 500 ms after the hit: unarmed */
	feed_plain(te, T0 + 1200 * MS); /* 700 ms after the last: still unarmed */
	CHECK(!next_fire(te, T0 + 1200 * MS, &fire));
	CHECK_EQ_INT(st->ignored_unarmed, 2);
	CHECK(!st->armed);
	CHECK(!next_fire(te, T0 + 2200 * MS, &fire)); /* clear for 1000 ms: armed */
	CHECK(st->armed);
	feed_plain(te, T0 + 2300 * MS);
	CHECK(st->pending);
	CHECK(next_fire(te, T0 + 2300 * MS, &fire));
	free(fire.evidence_json);
	CHECK_EQ_INT(st->fired, 2);
	CHECK_EQ_INT(st->hits, 4);
	hs_trigger_engine_free(te);
}

static void test_rate_cap(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	t->max_per_hour = 6;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	/* A crash loop: a hit every 3.6 s for two hours (2000 hits). */
	uint64_t fires[64];
	size_t n = 0;
	for (unsigned i = 0; i < 2000; i++) {
		uint64_t ts = T0 + (uint64_t)i * 3600 * MS;
		feed_plain(te, ts);
		hs_trigger_fire fire;
		while (next_fire(te, ts, &fire)) {
			if (n < 64)
				fires[n] = ts;
			n++;
			free(fire.evidence_json);
		}
	}
	CHECK_EQ_INT(n, 12);
	/* Never more than 6 in any hour, exactly 6 in the first. */
	size_t first_hour = 0;
	for (size_t i = 0; i < n && i < 64; i++) {
		size_t in = 0;
		for (size_t k = i; k < n && k < 64 && fires[k] < fires[i] + 3600 * SEC; k++)
			in++;
		CHECK(in <= 6);
		if (fires[i] < T0 + 3600 * SEC)
			first_hour++;
	}
	CHECK_EQ_INT(first_hour, 6);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	CHECK_EQ_INT(st->fired, 12);
	CHECK_EQ_INT(st->dropped_rate, 2000 - 12);
	CHECK_EQ_INT(st->hits, 2000);
	hs_trigger_engine_free(te);
}

/* The caller asks late (a replay at full speed): the same decisions, in the trace's time. */
static void test_late_caller(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *capped = fx_add(&f, HS_TRIGGER_EVENT, "fsync", "syscalls", "sys_enter_fsync");
	capped->post_delay_ms = 100;
	capped->max_per_hour = 3;
	hs_trigger *cool = fx_add(&f, HS_TRIGGER_EVENT, "exec", "sched", "sched_process_exec");
	cool->cooldown_s = 3600;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	/* Six hits of each, 206 ms apart, all fed before next is called once. */
	for (unsigned i = 0; i < 6; i++) {
		feed(te, 0, "syscalls", "sys_enter_fsync", T0 + SEC + i * 206 * MS, NULL);
		feed(te, 0, "sched", "sched_process_exec", T0 + SEC + i * 206 * MS + MS, NULL);
	}
	CHECK(hs_trigger_engine_next_due(te) == T0 + SEC + MS); /* exec's, decided by its second hit */
	uint64_t end = T0 + 10 * SEC;
	hs_trigger_fire fire;
	uint64_t last_due = 0;
	unsigned n_fsync = 0, n_exec = 0;
	while (next_fire(te, end, &fire)) {
		CHECK(fire.due_ns >= last_due); /* handed out in due order */
		last_due = fire.due_ns;
		if (fire.trigger == 0) {
			CHECK_EQ_INT(fire.first_hit_ns, T0 + SEC + n_fsync * 206 * MS);
			CHECK_EQ_INT(fire.hits, 1);
			n_fsync++;
		} else {
			CHECK_EQ_INT(fire.first_hit_ns, T0 + SEC + MS);
			n_exec++;
		}
		free(fire.evidence_json);
	}
	CHECK_EQ_INT(n_fsync, 3);
	CHECK_EQ_INT(n_exec, 1);
	const hs_trigger_stats *a = hs_trigger_engine_stats(te, 0), *b = hs_trigger_engine_stats(te, 1);
	CHECK_EQ_INT(a->hits, 6);
	CHECK_EQ_INT(a->fired, 3);
	CHECK_EQ_INT(a->dropped_rate, 3);
	CHECK_EQ_INT(b->hits, 6);
	CHECK_EQ_INT(b->fired, 1);
	CHECK_EQ_INT(b->joined, 5);
	CHECK(!a->pending && !b->pending);
	CHECK(hs_trigger_engine_next_due(te) == UINT64_MAX);
	hs_trigger_engine_free(te);

	/* A caller that never asks: at most HS_TRIGGER_MAX_READY wait, later hits join the newest. */
	fx_init(&f);
	fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	for (unsigned i = 0; i < HS_TRIGGER_MAX_READY + 12; i++)
		feed_plain(te, T0 + i * SEC);
	unsigned n = 0;
	uint64_t hits = 0;
	while (next_fire(te, T0 + 100 * SEC, &fire)) {
		n++;
		hits += fire.hits;
		free(fire.evidence_json);
	}
	CHECK_EQ_INT(n, HS_TRIGGER_MAX_READY);
	CHECK_EQ_INT(hits, HS_TRIGGER_MAX_READY + 12);
	CHECK_EQ_INT(hs_trigger_engine_stats(te, 0)->joined, 12);
	hs_trigger_engine_free(te);

	/* Fires still waiting at free are freed with the engine (the sanitizer build checks). */
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	feed_plain(te, T0);
	feed_plain(te, T0 + SEC);
	hs_trigger_engine_free(te);
}

/* ---- conditions ---- */

static void test_where(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_EVENT, "fatal", "signal", "signal_generate");
	int64_t sigs[] = {9, 11};
	const char *comms[] = {"game", "launcher"};
	hs_trigger_cond conds[2] = {
		{.field = "sig", .nums = sigs, .n_values = 2},
		{.field = "comm", .strings = true, .strs = comms, .n_values = 2},
	};
	t->where = conds;
	t->n_where = 2;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	fake_payload out_num = {.f = {{.name = "sig", .num = 15}, {.name = "comm", .str = "game"}}, .n = 2};
	fake_payload out_str = {.f = {{.name = "sig", .num = 11}, {.name = "comm", .str = "bash"}}, .n = 2};
	fake_payload missing = {.f = {{.name = "comm", .str = "game"}}, .n = 1};
	fake_payload in = {.f = {{.name = "sig", .num = 11}, {.name = "comm", .str = "launcher"}}, .n = 2};
	feed(te, 0, "signal", "signal_generate", T0 + 1 * SEC, &out_num);
	feed(te, 0, "signal", "signal_generate", T0 + 2 * SEC, &out_str);
	CHECK_EQ_INT(st->hits, 0);
	CHECK_EQ_INT(st->unreadable, 0);
	feed(te, 0, "signal", "signal_generate", T0 + 3 * SEC, NULL);
	feed(te, 0, "signal", "signal_generate", T0 + 4 * SEC, &missing);
	CHECK_EQ_INT(st->hits, 0);
	CHECK_EQ_INT(st->unreadable, 2);
	/* Another session, another system: not this trigger's events. */
	feed(te, 1, "signal", "signal_generate", T0 + 5 * SEC, &in);
	feed(te, 0, "other", "signal_generate", T0 + 5 * SEC, &in);
	CHECK_EQ_INT(st->hits, 0);
	feed(te, 0, "signal", "signal_generate", T0 + 6 * SEC, &in);
	CHECK_EQ_INT(st->hits, 1);
	hs_trigger_fire fire;
	CHECK(next_fire(te, T0 + 6 * SEC, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"where\"");
	CHECK_CONTAINS(fire.evidence_json, "\"sig\": 11");
	CHECK_CONTAINS(fire.evidence_json, "\"comm\": \"launcher\"");
	free(fire.evidence_json);
	hs_trigger_engine_free(te);
}

static void test_regex(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_REGEX, "oops", "ftrace", "print");
	t->field = "buf";
	t->pattern = "^panic: .*overflow";
	hs_trigger *bad = fx_add(&f, HS_TRIGGER_REGEX, "hostile", "ftrace", "print");
	bad->field = "buf";
	bad->pattern = "(a+)+$";
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0), *bst = hs_trigger_engine_stats(te, 1);
	marker(te, T0 + SEC, "all good");
	CHECK_EQ_INT(st->hits, 0);
	marker(te, T0 + 2 * SEC, "panic: stack overflow in main");
	CHECK_EQ_INT(st->hits, 1);
	feed(te, 0, "ftrace", "print", T0 + 3 * SEC, NULL);
	CHECK_EQ_INT(st->unreadable, 1);
	hs_trigger_fire fire;
	CHECK(next_fire(te, T0 + 2 * SEC, &fire));
	CHECK_EQ_STR(fire.name, "oops");
	CHECK_CONTAINS(fire.evidence_json, "\"field\": \"buf\"");
	CHECK_CONTAINS(fire.evidence_json, "\"value\": \"panic: stack overflow in main\"");
	CHECK_CONTAINS(fire.evidence_json, "\"pattern\"");
	free(fire.evidence_json);

	/* Catastrophic backtracking: the bounded match gives up and says so. */
	static char evil[HS_TRIGGER_FIELD_BYTES];
	memset(evil, 'a', sizeof evil - 2);
	evil[sizeof evil - 2] = 'b';
	evil[sizeof evil - 1] = '\0';
	marker(te, T0 + 4 * SEC, evil);
	CHECK_EQ_INT(bst->regex_limit_hits, 1);
	CHECK_EQ_INT(bst->hits, 0);
	marker(te, T0 + 5 * SEC, "aaaa");
	CHECK_EQ_INT(bst->hits, 1);
	hs_trigger_engine_free(te);
}

static void test_regex_api(void)
{
	hs_regex *re;
	char err[128];
	size_t off;
	CHECK(hs_regex_compile_opts("(a+)+$", &(hs_regex_opts){.jit = false}, &re, err, sizeof err, &off) == HS_OK);
	CHECK(!hs_regex_jitted(re));
	char s[64];
	memset(s, 'a', 40);
	strcpy(s + 40, "b");
	CHECK(hs_regex_match_limited(re, s, strlen(s)) == HS_REGEX_LIMIT); /* interpreter: match limit */
	CHECK(hs_regex_match_limited(re, "aaa", 3) == HS_REGEX_MATCH);
	CHECK(hs_regex_match_limited(re, "aaab", 3) == HS_REGEX_MATCH); /* only len bytes */
	CHECK(hs_regex_match_limited(re, "b", 1) == HS_REGEX_NOMATCH);
	CHECK(!hs_regex_match(re, s));
	hs_regex_free(re);
	CHECK(hs_regex_compile("(a+)+$", &re, err, sizeof err, &off) == HS_OK); /* JIT where available */
	CHECK(hs_regex_match_limited(re, s, strlen(s)) == HS_REGEX_LIMIT);
	hs_regex_free(re);
	CHECK(hs_regex_compile("(unclosed", &re, err, sizeof err, &off) == HS_EINVAL);
}

/* ---- frame_time ---- */

static hs_trigger *frame_trigger(fixture *f)
{
	hs_trigger *t = fx_add(f, HS_TRIGGER_FRAME_TIME, "stutter", "ftrace", "print");
	t->source = "trace_marker";
	t->slice = "^DrawFrame";
	t->threshold_ms = 50;
	t->ratio = 3;
	t->ceiling_ms = 1000;
	t->median_frames = 120;
	return t;
}

/* 240 Hz frames of pid from *ts for n frames, with E lines, counters and other slices between. */
static void frames(hs_trigger_engine *te, int pid, uint64_t *ts, unsigned n)
{
	const uint64_t period = 4166667; /* 240 Hz */
	char line[64];
	for (unsigned i = 0; i < n; i++) {
		snprintf(line, sizeof line, "B|%d|DrawFrame\n", pid);
		marker(te, *ts, line);
		marker(te, *ts + 1 * MS, "B|1|Other"); /* not a frame slice */
		snprintf(line, sizeof line, "C|%d|fps|240", pid);
		marker(te, *ts + 1 * MS, line);
		marker(te, *ts + 2 * MS, i % 2 ? "E\n" : "E");
		snprintf(line, sizeof line, "E|%d", pid);
		marker(te, *ts + 3 * MS, line);
		*ts += period;
	}
}

static void test_frame_hitch(void)
{
	fixture f;
	fx_init(&f);
	frame_trigger(&f);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	uint64_t ts = T0 + SEC;
	frames(te, 100, &ts, 480); /* 2 s at 240 Hz */
	CHECK_EQ_INT(st->hits, 0);
	uint64_t before = ts - 4166667; /* the last start */
	ts = before + 100 * MS;         /* one 100 ms frame */
	uint64_t after = ts;
	frames(te, 100, &ts, 480);
	CHECK_EQ_INT(st->hits, 1);
	CHECK_EQ_INT(st->unreadable, 0);
	hs_trigger_fire fire;
	CHECK(next_fire(te, ts, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, after);
	CHECK_EQ_STR(fire.name, "stutter");
	CHECK_CONTAINS(fire.evidence_json, "\"frame_ms\": 100.000");
	CHECK_CONTAINS(fire.evidence_json, "\"median_ms\": 4.167");
	CHECK_CONTAINS(fire.evidence_json, "\"frame_pid\": 100");
	CHECK_CONTAINS(fire.evidence_json, "\"slice\": \"DrawFrame\"");
	CHECK_CONTAINS(fire.evidence_json, "\"threshold_ms\": 50.000");
	CHECK_CONTAINS(fire.evidence_json, "\"frames\": 480");
	free(fire.evidence_json);
	CHECK(!next_fire(te, ts, &fire));

	/* Frames at or above the ceiling are no frame (alt-tab): no hit. */
	ts = ts - 4166667 + 2000 * MS;
	frames(te, 100, &ts, 10);
	CHECK_EQ_INT(st->hits, 1);
	/* The non-hitch frames since re-armed it: another 100 ms frame hits again. */
	ts = ts - 4166667 + 100 * MS;
	frames(te, 100, &ts, 10);
	CHECK_EQ_INT(st->hits, 2);
	CHECK(next_fire(te, ts, &fire));
	free(fire.evidence_json);
	CHECK_EQ_INT(st->fired, 2);
	hs_trigger_engine_free(te);
}

/* One Present event of a process (source present: the pid is the event's, no fields). */
static void present(hs_trigger_engine *te, const char *system, int pid, uint64_t ts)
{
	hs_key_event ev = {.session = 0, .cpu = 1, .ts_ns = ts, .system = system, .name = "PresentStart", .pid = pid};
	hs_trigger_engine_feed(te, &ev, 0);
}

/* Windows: frames are Present events at 240 Hz; one 100 ms gap is one hitch.
 * A second provider's Presents of the same process (D3D9 next to DXGI) are
 * not frames of their own, and other processes keep their own medians. */
static void test_frame_present(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_FRAME_TIME, "frame-hitch", NULL, NULL);
	t->source = "present";
	t->threshold_ms = 50;
	t->ratio = 2.5;
	t->ceiling_ms = 5000;
	t->median_frames = 120;
	static hs_plan_trigger_event evs[2] = {
		{.system = "Microsoft-Windows-DXGI", .name = "PresentStart", .id = 42},
		{.system = "Microsoft-Windows-D3D9", .name = "PresentStart", .id = 1},
	};
	f.pt[0].events = evs;
	f.pt[0].n_events = 2;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	const uint64_t period = 4166667; /* 240 Hz */
	uint64_t ts = T0 + SEC;
	for (int i = 0; i < 480; i++, ts += period) { /* 2 s */
		present(te, "Microsoft-Windows-DXGI", 4242, ts);
		present(te, "Microsoft-Windows-D3D9", 4242, ts + 1 * MS); /* the same frame seen twice */
		present(te, "Microsoft-Windows-DXGI", 77, ts + 2 * MS);   /* another game at 240 Hz */
	}
	CHECK_EQ_INT(st->hits, 0);
	ts += 100 * MS - period; /* one 100 ms frame of pid 4242 */
	uint64_t hit_at = ts;
	for (int i = 0; i < 480; i++, ts += period)
		present(te, "Microsoft-Windows-DXGI", 4242, ts);
	CHECK_EQ_INT(st->hits, 1);
	CHECK_EQ_INT(st->unreadable, 0);
	present(te, "Microsoft-Windows-DXGI", 0, ts); /* no process: not a frame */
	CHECK_EQ_INT(st->unreadable, 1);
	hs_trigger_fire fire;
	CHECK(next_fire(te, ts, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, hit_at);
	CHECK_CONTAINS(fire.evidence_json, "\"frame_ms\": 100.000");
	CHECK_CONTAINS(fire.evidence_json, "\"median_ms\": 4.167");
	CHECK_CONTAINS(fire.evidence_json, "\"frame_pid\": 4242");
	CHECK_CONTAINS(fire.evidence_json, "\"present\": \"Microsoft-Windows-DXGI/PresentStart\"");
	CHECK(!strstr(fire.evidence_json, "\"slice\""));
	free(fire.evidence_json);
	CHECK(!next_fire(te, ts, &fire));
	hs_trigger_engine_free(te);
}

static void test_frame_warm_and_rearm(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = frame_trigger(&f);
	t->clear_ms = 500;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	uint64_t ts = T0;
	/* A long frame before the process has half the median window is no hitch. */
	frames(te, 5, &ts, 30);
	ts = ts - 4166667 + 100 * MS;
	frames(te, 5, &ts, 60);
	CHECK_EQ_INT(st->hits, 0);
	/* Two hitches 180 ms apart: the second is within clear_ms of the first. */
	ts = ts - 4166667 + 100 * MS;
	frames(te, 5, &ts, 20);
	CHECK_EQ_INT(st->hits, 1);
	hs_trigger_fire fire;
	CHECK(next_fire(te, ts, &fire));
	free(fire.evidence_json);
	ts = ts - 4166667 + 100 * MS;
	frames(te, 5, &ts, 200);
	CHECK_EQ_INT(st->hits, 2);
	CHECK_EQ_INT(st->ignored_unarmed, 1);
	CHECK(!next_fire(te, ts, &fire));
	CHECK(st->armed); /* 200 good frames, 830 ms: clear */
	ts = ts - 4166667 + 100 * MS;
	frames(te, 5, &ts, 2);
	CHECK_EQ_INT(st->hits, 3);
	CHECK(next_fire(te, ts, &fire));
	free(fire.evidence_json);
	CHECK_EQ_INT(st->fired, 2);
	hs_trigger_engine_free(te);
}

static void test_frame_pids(void)
{
	fixture f;
	fx_init(&f);
	frame_trigger(&f);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	/* Two processes at 240 Hz, 1.3 ms apart; process 200 stalls 100 ms once. */
	uint64_t a = T0, b = T0 + 1300000, hitch_at = 0;
	for (unsigned i = 0; i < 1000; i++) {
		char line[64];
		snprintf(line, sizeof line, "B|100|DrawFrame");
		marker(te, a, line);
		snprintf(line, sizeof line, "B|200|DrawFrame");
		marker(te, b, line);
		a += 4166667;
		b += i == 500 ? 100 * MS : 4166667;
		if (i == 500)
			hitch_at = b;
	}
	CHECK_EQ_INT(st->hits, 1);
	hs_trigger_fire fire;
	CHECK(next_fire(te, b, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, hitch_at);
	CHECK_CONTAINS(fire.evidence_json, "\"frame_pid\": 200");
	free(fire.evidence_json);

	/* More processes than the table holds: the least recently seen are forgotten, nothing grows. */
	for (int pid = 1000; pid < 1000 + 3 * HS_TRIGGER_FRAME_PIDS; pid++) {
		char line[64];
		snprintf(line, sizeof line, "B|%d|DrawFrame", pid);
		marker(te, b, line);
		marker(te, b + 4166667, line);
	}
	CHECK_EQ_INT(st->hits, 1);
	hs_trigger_engine_free(te);
}

/* ---- manual ---- */

static void test_manual_builtin(void)
{
	fixture f;
	fx_init(&f);
	fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate")->cooldown_s = 60;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	hs_trigger_engine_manual(te, T0 + SEC, "SIGUSR1");
	CHECK(hs_trigger_engine_next_due(te) == T0 + SEC);
	hs_trigger_fire fire;
	CHECK(next_fire(te, T0 + SEC, &fire));
	CHECK(fire.trigger == SIZE_MAX);
	CHECK_EQ_STR(fire.name, "manual");
	CHECK(fire.kind == HS_TRIGGER_MANUAL);
	CHECK_EQ_INT(fire.due_ns, T0 + SEC);
	CHECK_CONTAINS(fire.evidence_json, "\"reason\": \"SIGUSR1\"");
	free(fire.evidence_json);
	/* No cool-down or cap: the next request goes out too. */
	hs_trigger_engine_manual(te, T0 + 2 * SEC, "ctl");
	CHECK(next_fire(te, T0 + 2 * SEC, &fire));
	free(fire.evidence_json);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, SIZE_MAX);
	CHECK(st && st->fired == 2);
	CHECK_EQ_INT(hs_trigger_engine_stats(te, 0)->hits, 0);
	hs_trigger_engine_free(te);
}

static void test_manual_rules(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *m = fx_add(&f, HS_TRIGGER_MANUAL, "by-hand", NULL, NULL);
	m->post_delay_ms = 1000;
	m->cooldown_s = 30;
	hs_trigger *e = fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	e->post_delay_ms = 3000;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	feed_plain(te, T0 + 5 * SEC);
	hs_trigger_engine_manual(te, T0 + 6 * SEC, "SIGUSR1");
	CHECK(hs_trigger_engine_next_due(te) == T0 + 7 * SEC); /* the earlier of 7 s and 8 s */
	hs_trigger_fire fire;
	CHECK(!next_fire(te, T0 + 6 * SEC, &fire));
	CHECK(next_fire(te, T0 + 7 * SEC, &fire));
	CHECK_EQ_INT(fire.trigger, 0);
	CHECK_EQ_STR(fire.name, "by-hand");
	CHECK_CONTAINS(fire.evidence_json, "\"reason\": \"SIGUSR1\"");
	free(fire.evidence_json);
	CHECK(hs_trigger_engine_next_due(te) == T0 + 8 * SEC);
	hs_trigger_engine_manual(te, T0 + 20 * SEC, "again"); /* in cool-down: joins */
	CHECK_EQ_INT(hs_trigger_engine_stats(te, 0)->joined, 1);
	CHECK(next_fire(te, T0 + 20 * SEC, &fire));
	CHECK_EQ_INT(fire.trigger, 1);
	free(fire.evidence_json);
	CHECK(!next_fire(te, T0 + 21 * SEC, &fire));
	CHECK(hs_trigger_engine_stats(te, SIZE_MAX)->hits == 0);
	hs_trigger_engine_free(te);
}

static void test_no_event_triggers(void)
{
	fixture f;
	fx_init(&f);
	fx_add(&f, HS_TRIGGER_MANUAL, "by-hand", NULL, NULL);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	CHECK(!hs_trigger_engine_wants_events(te));
	feed_plain(te, T0);
	CHECK_EQ_INT(hs_trigger_engine_stats(te, 0)->hits, 0);
	hs_trigger_engine_free(te);
	fx_init(&f);
	hs_trigger *bad = fx_add(&f, HS_TRIGGER_REGEX, "bad", "ftrace", "print");
	bad->field = "buf";
	bad->pattern = "(unclosed";
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_EINVAL);
}

/* ---- deadline ---- */

/* Extra events of trigger i besides its condition's (up to 4), each with a role. */
typedef struct {
	hs_plan_trigger_event ev[6];
} extra_events;

static void fx_events(fixture *f, size_t i, extra_events *x, const hs_plan_trigger_event *more, size_t n)
{
	x->ev[0] = f->ev[i];
	for (size_t k = 0; k < n; k++)
		x->ev[1 + k] = more[k];
	f->pt[i].events = x->ev;
	f->pt[i].n_events = 1 + n;
}

static hs_trigger *deadline_trigger(fixture *f)
{
	hs_trigger *t = fx_add(f, HS_TRIGGER_DEADLINE, "hang", "ftrace", "print");
	t->source = "trace_marker";
	t->slice = "^DrawFrame";
	t->deadline_ms = 2000;
	t->active_frames = 20;
	t->active_s = 10;
	return t;
}

/* The last frame start frames() wrote (ts is one period past it). */
#define LAST(ts) ((ts) - 4166667)

static void test_deadline_timer(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = deadline_trigger(&f);
	t->resume_snapshot = true;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	CHECK(hs_trigger_engine_wants_events(te));
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	uint64_t ts = T0 + SEC;
	frames(te, 100, &ts, 480); /* 2 s at 240 Hz, then nothing */
	uint64_t last = LAST(ts);
	hs_trigger_fire fire;
	CHECK_EQ_INT(hs_trigger_engine_next_due(te), last + 2000 * MS); /* the caller wakes when it passes */
	CHECK(!next_fire(te, last + 1999 * MS, &fire));
	CHECK_EQ_INT(st->hits, 0);
	/* The deadline passes while the process is still frozen: decided by the clock, not by a frame. */
	CHECK(next_fire(te, last + 2010 * MS, &fire));
	CHECK_EQ_INT(st->hits, 1);
	CHECK_EQ_INT(fire.first_hit_ns, last + 2000 * MS);
	CHECK_EQ_INT(fire.detect_ns, last + 2010 * MS);
	CHECK(fire.kind == HS_TRIGGER_DEADLINE);
	CHECK(fire.weight == 1.0);
	CHECK_CONTAINS(fire.evidence_json, "\"phase\": \"frozen\"");
	CHECK_CONTAINS(fire.evidence_json, "\"pid\": 100");
	CHECK_CONTAINS(fire.evidence_json, "\"frames\": 480");
	CHECK_CONTAINS(fire.evidence_json, "\"median_frame_ms\": 4.167");
	CHECK_CONTAINS(fire.evidence_json, "\"probe\": \"unknown\"");
	char want[64];
	snprintf(want, sizeof want, "\"freeze_start_ns\": %" PRIu64, last);
	CHECK_CONTAINS(fire.evidence_json, want);
	free(fire.evidence_json);
	/* Once per freeze: it stays frozen, nothing more. */
	CHECK(!next_fire(te, last + 30 * SEC, &fire));
	CHECK_EQ_INT(hs_trigger_engine_next_due(te), UINT64_MAX);
	CHECK_EQ_INT(st->hits, 1);
	/* It draws again after 12.4 s: the resume snapshot, past the cool-down. */
	t->cooldown_s = 0;
	ts = last + 12400 * MS;
	frames(te, 100, &ts, 1);
	CHECK(next_fire(te, ts, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"phase\": \"ended\"");
	CHECK_CONTAINS(fire.evidence_json, "\"ended_by\": \"frame\"");
	CHECK_CONTAINS(fire.evidence_json, "\"hang_ms\": 12400.000");
	free(fire.evidence_json);
	CHECK_EQ_INT(st->fired, 2);
	hs_trigger_engine_free(te);
}

/* A replay at full speed: no next while frozen, the resuming frame shows the deadline passed; same decision. */
static void test_deadline_replay(void)
{
	fixture f;
	fx_init(&f);
	deadline_trigger(&f);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	uint64_t ts = T0 + SEC;
	frames(te, 100, &ts, 480);
	uint64_t last = LAST(ts);
	ts = last + 6 * SEC;
	frames(te, 100, &ts, 480);
	hs_trigger_fire fire;
	CHECK(next_fire(te, ts, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, last + 2000 * MS);
	free(fire.evidence_json);
	CHECK(!next_fire(te, ts, &fire));
	hs_trigger_engine_free(te);
}

/* Not watched: too few frames, or too slow for the arming rule. */
static void test_deadline_inactive(void)
{
	fixture f;
	fx_init(&f);
	deadline_trigger(&f);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	uint64_t ts = T0 + SEC;
	frames(te, 100, &ts, 19); /* one short of active_frames */
	hs_trigger_fire fire;
	CHECK(!next_fire(te, ts + 5 * SEC, &fire));
	/* 30 frames one a second: 20 of them span 19 s, more than active_s. */
	ts += 5 * SEC;
	for (int i = 0; i < 30; i++, ts += SEC)
		marker(te, ts, "B|200|DrawFrame");
	CHECK(!next_fire(te, ts + 10 * SEC, &fire));
	CHECK_EQ_INT(st->hits, 0);
	CHECK_EQ_INT(st->excused, 0);
	hs_trigger_engine_free(te);
}

/* exit_events and suspend_events. */
static void test_deadline_exit_suspend(void)
{
	fixture f;
	fx_init(&f);
	deadline_trigger(&f);
	f.tr[0].resume_snapshot = true;
	extra_events x;
	hs_plan_trigger_event more[] = {
		{.system = "sched", .name = "sched_process_exit", .id = -1, .role = HS_TRIGGER_ROLE_EXIT},
		{.system = "power", .name = "suspend_resume", .id = -1, .role = HS_TRIGGER_ROLE_SUSPEND},
	};
	fx_events(&f, 0, &x, more, 2);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	hs_trigger_fire fire;
	/* Exits 1 s after its last frame (the event's pid is the process): no hang. */
	uint64_t ts = T0 + SEC;
	frames(te, 42, &ts, 100);
	uint64_t last = LAST(ts);
	feed(te, 0, "sched", "sched_process_exit", last + SEC, NULL);
	CHECK(!next_fire(te, last + 10 * SEC, &fire));
	CHECK_EQ_INT(st->hits, 0);
	/* The machine suspends 1.5 s into a stop: the deadline counts from the event. */
	ts = last + 20 * SEC;
	frames(te, 300, &ts, 100);
	last = LAST(ts);
	feed(te, 0, "power", "suspend_resume", last + 1500 * MS, NULL);
	CHECK(!next_fire(te, last + 3 * SEC, &fire));
	CHECK_EQ_INT(hs_trigger_engine_next_due(te), last + 3500 * MS);
	CHECK(next_fire(te, last + 3500 * MS, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, last + 3500 * MS);
	free(fire.evidence_json);
	/* An exit after the deadline passed (a replay learns of both together): the hang was
	 * real; its end is the exit (pid 42's frames, then its exit). */
	f.tr[0].cooldown_s = 0;
	ts = last + 60 * SEC;
	frames(te, 42, &ts, 100);
	last = LAST(ts);
	feed(te, 0, "sched", "sched_process_exit", last + 5 * SEC, NULL);
	CHECK(next_fire(te, last + 5 * SEC, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, last + 2 * SEC);
	free(fire.evidence_json);
	CHECK(next_fire(te, last + 5 * SEC, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"ended_by\": \"exit\"");
	CHECK_CONTAINS(fire.evidence_json, "\"hang_ms\": 5000.000");
	free(fire.evidence_json);
	hs_trigger_engine_free(te);
}

typedef struct {
	hs_trigger_probe answer;
	int asked, pid;
} probe_ctx;

static hs_trigger_probe probe(void *ctx, int pid)
{
	probe_ctx *p = ctx;
	p->asked++;
	p->pid = pid;
	return p->answer;
}

static void test_deadline_probe(void)
{
	for (int ignore = 0; ignore < 2; ignore++) {
		fixture f;
		fx_init(&f);
		deadline_trigger(&f)->ignore_debugger = ignore;
		hs_trigger_engine *te;
		CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
		probe_ctx pc = {.answer = HS_PROBE_GONE};
		hs_trigger_engine_set_probe(te, probe, &pc);
		const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
		hs_trigger_fire fire;
		uint64_t ts = T0 + SEC;
		frames(te, 7, &ts, 100);
		/* Gone when its deadline passes (no exit event seen): no hang. */
		CHECK(!next_fire(te, LAST(ts) + 3 * SEC, &fire));
		CHECK_EQ_INT(pc.asked, 1);
		CHECK_EQ_INT(pc.pid, 7);
		CHECK_EQ_INT(st->excused, 1);
		/* A debugger holds it: a hang only without ignore_debugger; asked again a deadline later. */
		pc.answer = HS_PROBE_DEBUGGED;
		ts = LAST(ts) + 10 * SEC;
		frames(te, 7, &ts, 100);
		uint64_t last = LAST(ts);
		bool fired = next_fire(te, last + 2 * SEC, &fire);
		CHECK(fired == !ignore);
		if (fired) {
			CHECK_CONTAINS(fire.evidence_json, "\"probe\": \"debugged\"");
			free(fire.evidence_json);
		} else {
			CHECK_EQ_INT(st->excused, 2);
			CHECK_EQ_INT(hs_trigger_engine_next_due(te), last + 4 * SEC);
			/* Still held at +4 s: the deadline counts from then. */
			CHECK(!next_fire(te, last + 4 * SEC, &fire));
			CHECK_EQ_INT(hs_trigger_engine_next_due(te), last + 6 * SEC);
			/* Let go before +6 s (when, nobody saw): a whole deadline from +6 s to draw again. */
			pc.answer = HS_PROBE_RUNNING;
			CHECK(!next_fire(te, last + 6 * SEC, &fire));
			CHECK_EQ_INT(hs_trigger_engine_next_due(te), last + 8 * SEC);
			/* Still no frame: now it is a hang, its own. */
			CHECK(next_fire(te, last + 8 * SEC, &fire));
			CHECK_EQ_INT(fire.first_hit_ns, last + 8 * SEC);
			CHECK_CONTAINS(fire.evidence_json, "\"probe\": \"running\"");
			CHECK_EQ_INT(pc.asked, 5);
			CHECK_EQ_INT(st->excused, 2);
			free(fire.evidence_json);
			/* A debugger's hold that ends with a frame: no hang. */
			ts = last + 20 * SEC;
			frames(te, 7, &ts, 100);
			last = LAST(ts);
			pc.answer = HS_PROBE_DEBUGGED;
			CHECK(!next_fire(te, last + 2 * SEC, &fire));
			ts = last + 5 * SEC;
			frames(te, 7, &ts, 10);
			pc.answer = HS_PROBE_RUNNING;
			CHECK(!next_fire(te, ts + SEC, &fire));
			CHECK_EQ_INT(st->fired, 1);
		}
		hs_trigger_engine_free(te);
	}
}

/* A heartbeat (any event, per pid), and events that arrive late (lag). */
static void test_deadline_heartbeat_lag(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_DEADLINE, "beat", "syscalls", "sys_enter_fsync");
	t->source = "heartbeat";
	t->deadline_ms = 500;
	t->active_frames = 5;
	t->active_s = 2;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	hs_trigger_engine_set_lag(te, SEC);
	uint64_t ts = T0;
	for (int i = 0; i < 10; i++, ts += 100 * MS)
		feed(te, 0, "syscalls", "sys_enter_fsync", ts, NULL); /* pid 42 */
	uint64_t last = ts - 100 * MS;
	hs_trigger_fire fire;
	CHECK_EQ_INT(hs_trigger_engine_next_due(te), last + 1500 * MS);
	CHECK(!next_fire(te, last + 1400 * MS, &fire)); /* a heartbeat may still be on its way */
	CHECK(next_fire(te, last + 1500 * MS, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, last + 500 * MS);
	CHECK_CONTAINS(fire.evidence_json, "\"pid\": 42");
	CHECK_CONTAINS(fire.evidence_json, "\"source\": \"heartbeat\"");
	free(fire.evidence_json);
	hs_trigger_engine_free(te);
}

/* cancel_marker: a loading screen's marker; the stop that follows is no hang, and a pending snapshot goes. */
static void test_deadline_cancel(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = deadline_trigger(&f);
	t->cancel_marker = "^B\\|[0-9]+\\|Loading";
	t->post_delay_ms = 1000;
	extra_events x;
	hs_plan_trigger_event more[] = {{.system = "ftrace", .name = "print", .id = -1, .role = HS_TRIGGER_ROLE_CANCEL}};
	fx_events(&f, 0, &x, more, 1);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	hs_trigger_fire fire;
	uint64_t ts = T0 + SEC;
	frames(te, 100, &ts, 100);
	marker(te, LAST(ts) + 10 * MS, "B|100|Loading");
	CHECK(!next_fire(te, LAST(ts) + 5 * SEC, &fire));
	CHECK_EQ_INT(st->hits, 0);
	/* Frames again, a real stop: pending 1 s; a loading marker during post_delay drops it. */
	ts = LAST(ts) + 20 * SEC;
	frames(te, 100, &ts, 100);
	uint64_t last = LAST(ts);
	CHECK(!next_fire(te, last + 2100 * MS, &fire));
	CHECK(st->pending);
	marker(te, last + 2500 * MS, "B|100|Loading");
	CHECK(!st->pending);
	CHECK_EQ_INT(st->cancelled, 1);
	CHECK(!next_fire(te, last + 10 * SEC, &fire));
	CHECK_EQ_INT(st->fired, 0);
	hs_trigger_engine_free(te);
}

/* ---- counter ---- */

static double thr_buf[4][8];

static hs_trigger *counter_trigger(fixture *f, hs_counter_kind k, const double *thr, size_t n, double for_s)
{
	size_t i = f->plan.n_triggers;
	hs_trigger *t = fx_add(f, HS_TRIGGER_COUNTER, "ctr", NULL, NULL);
	f->pt[i].session = SIZE_MAX;
	f->pt[i].counter_session = SIZE_MAX;
	t->counter = k;
	t->has_counter = t->has_direction = true;
	memcpy(thr_buf[i], thr, n * sizeof(*thr));
	t->thresholds = thr_buf[i];
	t->n_thresholds = n;
	t->for_s = for_s;
	t->sample_ms = 100;
	return t;
}

static void sample(hs_trigger_engine *te, size_t i, uint64_t ts, uint64_t window, double v, int pid)
{
	hs_counter_sample s = {.ts_ns = ts, .window_ns = window, .value = v, .pid = pid, .process = pid ? "game" : NULL};
	hs_trigger_engine_sample(te, i, &s, 0);
}

static void test_counter_hold(void)
{
	fixture f;
	fx_init(&f);
	double thr[] = {90};
	counter_trigger(&f, HS_COUNTER_CPU_PERCENT, thr, 1, 1.0);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	CHECK(!hs_trigger_engine_wants_events(te));
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	hs_trigger_fire fire;
	uint64_t ts = T0 + 100 * MS;
	/* 95% for 0.9 s, one dip, then 95% on: held 1 s only from the dip's end. */
	for (int i = 0; i < 9; i++, ts += 100 * MS)
		sample(te, 0, ts, 100 * MS, 95, 0);
	sample(te, 0, ts, 100 * MS, 50, 0);
	uint64_t dip = ts;
	ts += 100 * MS;
	for (int i = 0; i < 9; i++, ts += 100 * MS)
		sample(te, 0, ts, 100 * MS, 97, 0);
	CHECK_EQ_INT(st->hits, 0);
	sample(te, 0, ts, 100 * MS, 99, 0); /* 1 s since dip: each rate sample covers the 100 ms before it */
	CHECK_EQ_INT(st->hits, 1);
	CHECK(next_fire(te, ts, &fire));
	CHECK_EQ_INT(fire.first_hit_ns, dip + SEC);
	CHECK_CONTAINS(fire.evidence_json, "\"counter\": \"cpu_percent\"");
	CHECK_CONTAINS(fire.evidence_json, "\"value\": 99.000");
	CHECK_CONTAINS(fire.evidence_json, "\"held_s\": 1.000");
	CHECK_CONTAINS(fire.evidence_json, "\"threshold\": 90.000");
	free(fire.evidence_json);
	/* Still beyond: nothing new. Back within, then beyond for 1 s again: a new incident. */
	for (int i = 0; i < 20; i++)
		sample(te, 0, ts += 100 * MS, 100 * MS, 99, 0);
	CHECK_EQ_INT(st->hits, 1);
	sample(te, 0, ts += 100 * MS, 100 * MS, 10, 0);
	for (int i = 0; i < 10; i++)
		sample(te, 0, ts += 100 * MS, 100 * MS, 99, 0);
	CHECK_EQ_INT(st->hits, 2);
	CHECK(next_fire(te, ts, &fire));
	free(fire.evidence_json);
	CHECK_EQ_INT(st->fired, 2);
	hs_trigger_engine_free(te);
}

/* Escalating steps (ProcDump -m): once each per incident, past the cool-down; below; only_if_worse. */
static void test_counter_steps(void)
{
	fixture f;
	fx_init(&f);
	double thr[] = {1024, 2048, 4096};
	hs_trigger *t = counter_trigger(&f, HS_COUNTER_PROCESS_RSS_MB, thr, 3, 0.5);
	t->cooldown_s = 3600;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	hs_trigger_fire fire;
	uint64_t ts = T0;
	for (int i = 0; i < 6; i++)
		sample(te, 0, ts += 100 * MS, 0, 1500, 9);
	CHECK(next_fire(te, ts, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"step\": 1");
	CHECK_CONTAINS(fire.evidence_json, "\"pid\": 9");
	CHECK_CONTAINS(fire.evidence_json, "\"process\": \"game\"");
	free(fire.evidence_json);
	/* Another process is its own series. */
	for (int i = 0; i < 6; i++)
		sample(te, 0, ts += 100 * MS, 0, 1100, 10);
	CHECK_EQ_INT(st->joined, 1); /* the cool-down holds for a step 1 */
	/* Up to 5000 at once: the highest step held fires, past the cool-down; once. */
	for (int i = 0; i < 12; i++)
		sample(te, 0, ts += 100 * MS, 0, 5000, 9);
	CHECK(next_fire(te, ts, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"step\": 3");
	CHECK_CONTAINS(fire.evidence_json, "\"threshold\": 4096.000");
	free(fire.evidence_json);
	CHECK(!next_fire(te, ts + SEC, &fire));
	CHECK_EQ_INT(st->fired, 2);
	hs_trigger_engine_free(te);

	/* Below: free disk under 500 MB, then worse only. */
	fx_init(&f);
	double low[] = {500};
	t = counter_trigger(&f, HS_COUNTER_DISK_FREE_MB, low, 1, 0);
	t->below = true;
	t->only_if_worse = true;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	st = hs_trigger_engine_stats(te, 0);
	ts = T0;
	sample(te, 0, ts += SEC, 0, 400, 0);
	CHECK(next_fire(te, ts, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"direction\": \"below\"");
	free(fire.evidence_json);
	sample(te, 0, ts += SEC, 0, 900, 0); /* within: re-armed */
	sample(te, 0, ts += SEC, 0, 450, 0); /* not worse than 400 */
	CHECK_EQ_INT(st->not_worse, 1);
	CHECK(!next_fire(te, ts, &fire));
	sample(te, 0, ts += SEC, 0, 900, 0);
	sample(te, 0, ts += SEC, 0, 300, 0);
	CHECK(next_fire(te, ts, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"previous_value\": 400.000");
	free(fire.evidence_json);
	hs_trigger_engine_free(te);
}

/* PSI: the kernel signals crossings (the value is the step's threshold, the window is for_s). */
static void test_counter_psi(void)
{
	fixture f;
	fx_init(&f);
	double thr[] = {10, 40};
	hs_trigger *t = counter_trigger(&f, HS_COUNTER_PSI_MEMORY_SOME, thr, 2, 1.0);
	t->clear_ms = 3000;
	t->cooldown_s = 0;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	hs_trigger_fire fire;
	hs_counter_sample s = {.ts_ns = T0 + SEC, .window_ns = SEC, .value = 10, .crossing = true,
			       .detail = "some avg10=12.00 avg60=3.00 avg300=0.50 total=123456"};
	hs_trigger_engine_sample(te, 0, &s, 0);
	CHECK(next_fire(te, s.ts_ns, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"crossing\": true");
	CHECK_CONTAINS(fire.evidence_json, "avg10=12.00");
	free(fire.evidence_json);
	/* The stall goes on: a signal a window: hits that wait for the re-arm. */
	s.ts_ns += SEC;
	hs_trigger_engine_sample(te, 0, &s, 0);
	CHECK_EQ_INT(st->ignored_unarmed, 1);
	/* It worsens past 40 %: the second step, at once. */
	s.ts_ns += SEC;
	s.value = 40;
	hs_trigger_engine_sample(te, 0, &s, 0);
	CHECK(next_fire(te, s.ts_ns, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"step\": 2");
	free(fire.evidence_json);
	/* No signal for clear_ms: the episode is over; the next crossing is a new one. */
	s.ts_ns += 5 * SEC;
	s.value = 10;
	hs_trigger_engine_sample(te, 0, &s, 0);
	CHECK(next_fire(te, s.ts_ns, &fire));
	CHECK_CONTAINS(fire.evidence_json, "\"step\": 1");
	free(fire.evidence_json);
	CHECK_EQ_INT(st->fired, 3);
	hs_trigger_engine_free(te);
}

/* ---- chance, arm_while, cancel_on ---- */

static void test_chance(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	t->chance = 0.25;
	t->has_chance = true;
	t->clear_ms = 10;
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	hs_trigger_engine_set_seed(te, 12345);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	hs_trigger_fire fire;
	unsigned taken = 0;
	uint64_t ts = T0;
	for (int i = 0; i < 400; i++) {
		feed_plain(te, ts += SEC);
		feed_plain(te, ts + MS); /* the same incident: one draw */
		while (next_fire(te, ts + 2 * MS, &fire)) {
			taken++;
			CHECK(fire.weight == 4.0);
			CHECK_CONTAINS(fire.evidence_json, "\"chance\": 0.250000");
			free(fire.evidence_json);
		}
	}
	/* 400 incidents at 1/4: 100 expected; 3 sigma is 26. */
	CHECK(taken >= 74 && taken <= 126);
	CHECK_EQ_INT(st->sampled_out + taken, 400);
	CHECK_EQ_INT(st->hits, 800);
	hs_trigger_engine_free(te);
}

static void test_arm_while_cancel_on(void)
{
	fixture f;
	fx_init(&f);
	hs_trigger *t = fx_add(&f, HS_TRIGGER_EVENT, "crash", "signal", "signal_generate");
	t->arm_while = "^game$";
	t->post_delay_ms = 1000;
	extra_events x;
	hs_plan_trigger_event more[] = {
		{.system = "sched", .name = "sched_process_exec", .id = -1, .role = HS_TRIGGER_ROLE_CANCEL}};
	fx_events(&f, 0, &x, more, 1);
	hs_trigger_engine *te;
	CHECK(hs_trigger_engine_new(&f.plan, T0, &te) == HS_OK);
	const hs_trigger_stats *st = hs_trigger_engine_stats(te, 0);
	hs_trigger_fire fire;
	feed_plain(te, T0 + SEC); /* no game running: disarmed */
	CHECK_EQ_INT(st->ignored_disarmed, 1);
	CHECK(!next_fire(te, T0 + 5 * SEC, &fire));
	CHECK(!st->armed);
	hs_trigger_engine_set_running(te, 0, true);
	feed_plain(te, T0 + 10 * SEC);
	CHECK(st->pending);
	feed(te, 0, "sched", "sched_process_exec", T0 + 10500 * MS, NULL); /* the cancel event */
	CHECK(!st->pending);
	CHECK_EQ_INT(st->cancelled, 1);
	CHECK(!next_fire(te, T0 + 12 * SEC, &fire));
	/* Not pending: a cancel event changes nothing; the next incident fires. */
	feed_plain(te, T0 + 20 * SEC);
	feed(te, 0, "sched", "sched_process_exec", T0 + 22 * SEC, NULL);
	CHECK(next_fire(te, T0 + 22 * SEC, &fire));
	free(fire.evidence_json);
	CHECK_EQ_INT(st->cancelled, 1);
	hs_trigger_engine_free(te);
}

int main(void)
{
	test_warmup();
	test_post_delay_and_join();
	test_clock_read_on_hits_only();
	test_cooldown();
	test_rearm();
	test_rate_cap();
	test_late_caller();
	test_where();
	test_regex();
	test_regex_api();
	test_frame_hitch();
	test_frame_present();
	test_frame_warm_and_rearm();
	test_frame_pids();
	test_manual_builtin();
	test_manual_rules();
	test_no_event_triggers();
	test_deadline_timer();
	test_deadline_replay();
	test_deadline_inactive();
	test_deadline_exit_suspend();
	test_deadline_probe();
	test_deadline_heartbeat_lag();
	test_deadline_cancel();
	test_counter_hold();
	test_counter_steps();
	test_counter_psi();
	test_chance();
	test_arm_while_cancel_on();
	return hs_test_done("test_trigger");
}
