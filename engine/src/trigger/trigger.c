/* trigger/trigger.c: the trigger engine's behaviour: event dispatch, warm-up, pending, cool-down, re-arm, rate cap, manual requests. */
#include <stdlib.h>
#include <string.h>

#include "hindsight/strbuf.h"
#include "trigger/trigger_int.h"

/* The rate cap's window: max_per_hour counts snapshots in any sliding hour. */
#define RATE_WINDOW_NS (3600ull * HS_NS_PER_S)

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static void trig_free(hs_trig *t)
{
	hs_regex_free(t->re);
	hs_frame_free(t);
	free(t->fire_times);
	free(t->pend.evidence_json);
	for (size_t k = 0; k < t->n_ready; k++)
		free(t->ready[(t->ready_head + k) % HS_TRIGGER_MAX_READY].evidence_json);
}

void hs_trigger_engine_free(hs_trigger_engine *te)
{
	if (!te)
		return;
	for (size_t i = 0; i < te->n; i++)
		trig_free(&te->trigs[i]);
	free(te->trigs);
	trig_free(&te->builtin);
	for (size_t i = 0; i < te->n_refs; i++)
		free(te->refs[i].refs);
	free(te->refs);
	hs_hmap_free(&te->by_name);
	free(te);
}

/* Registers trigger i's interest in (system, name). */
static hs_status add_ref(hs_trigger_engine *te, size_t i, const char *system, const char *name)
{
	bool added;
	uint64_t *v = hs_hmap_put_bytes(&te->by_name, name, strlen(name), &added);
	if (!v)
		return HS_ENOMEM;
	if (added) {
		hs_trig_refs *r = realloc(te->refs, (te->n_refs + 1) * sizeof(*r));
		if (!r)
			return HS_ENOMEM;
		te->refs = r;
		te->refs[te->n_refs] = (hs_trig_refs){0};
		*v = te->n_refs++;
	}
	hs_trig_refs *list = &te->refs[*v];
	for (size_t k = 0; k < list->n; k++)
		if (list->refs[k].trig == i && strcmp(list->refs[k].system ? list->refs[k].system : "",
						      system ? system : "") == 0)
			return HS_OK; /* the same event listed twice */
	hs_trig_ref *nr = realloc(list->refs, (list->n + 1) * sizeof(*nr));
	if (!nr)
		return HS_ENOMEM;
	list->refs = nr;
	list->refs[list->n++] = (hs_trig_ref){.trig = i, .system = system};
	return HS_OK;
}

static hs_status trig_init(hs_trigger_engine *te, size_t i, uint64_t start_ns)
{
	hs_trig *t = &te->trigs[i];
	const hs_plan_trigger *pt = &te->plan->triggers[i];
	const hs_trigger *tr = pt->trigger;
	if (!tr)
		return HS_EINVAL;
	t->pt = pt;
	t->name = tr->name;
	t->kind = tr->kind;
	t->warmup_end_ns = add_sat(start_ns, mul_sat(tr->warmup_s, HS_NS_PER_S));
	t->clear_ns = mul_sat(tr->clear_ms, HS_NS_PER_MS);
	t->post_delay_ns = mul_sat(tr->post_delay_ms, HS_NS_PER_MS);
	t->cooldown_ns = mul_sat(tr->cooldown_s, HS_NS_PER_S);
	t->rate_cap = tr->max_per_hour > HS_TRIGGER_MAX_PER_HOUR ? HS_TRIGGER_MAX_PER_HOUR : (size_t)tr->max_per_hour;
	if (t->rate_cap && !(t->fire_times = calloc(t->rate_cap, sizeof(*t->fire_times))))
		return HS_ENOMEM;
	t->st.armed = tr->warmup_s == 0;
	t->pend.trigger = i;
	t->pend.name = t->name;
	t->pend.kind = t->kind;

	const char *pattern = NULL;
	if (tr->kind == HS_TRIGGER_REGEX) {
		if (!tr->pattern || !tr->field)
			return HS_EINVAL;
		pattern = tr->pattern;
	} else if (tr->kind == HS_TRIGGER_FRAME_TIME) {
		pattern = tr->slice; /* NULL: every slice is a frame */
		hs_status st = hs_frame_new(t);
		if (st != HS_OK)
			return st;
	}
	if (pattern) {
		char err[256];
		size_t off;
		hs_status st = hs_regex_compile_opts(pattern, &(hs_regex_opts){.jit = true}, &t->re, err, sizeof err, &off);
		if (st != HS_OK)
			return st;
	}
	if (tr->kind == HS_TRIGGER_MANUAL) {
		te->has_manual = true;
		return HS_OK;
	}
	for (size_t k = 0; k < pt->n_events; k++) {
		/* Events known only by id cannot be told apart through hs_key_event
		 * (it carries names): such an entry watches nothing. */
		if (!pt->events[k].name)
			continue;
		hs_status st = add_ref(te, i, pt->events[k].system, pt->events[k].name);
		if (st != HS_OK)
			return st;
		te->wants_events = true;
	}
	return HS_OK;
}

hs_status hs_trigger_engine_new(const hs_plan *plan, uint64_t start_ns, hs_trigger_engine **out)
{
	*out = NULL;
	hs_trigger_engine *te = calloc(1, sizeof(*te));
	if (!te)
		return HS_ENOMEM;
	te->plan = plan;
	te->start_ns = start_ns;
	te->builtin.name = "manual";
	te->builtin.kind = HS_TRIGGER_MANUAL;
	te->builtin.pend.trigger = SIZE_MAX;
	te->builtin.pend.name = "manual";
	te->builtin.pend.kind = HS_TRIGGER_MANUAL;
	te->builtin.st.armed = true;
	te->n = plan->n_triggers;
	if (te->n && !(te->trigs = calloc(te->n, sizeof(*te->trigs)))) {
		free(te);
		return HS_ENOMEM;
	}
	for (size_t i = 0; i < te->n; i++) {
		hs_status st = trig_init(te, i, start_ns);
		if (st != HS_OK) {
			hs_trigger_engine_free(te);
			return st;
		}
	}
	*out = te;
	return HS_OK;
}

void hs_trigger_engine_set_clock(hs_trigger_engine *te, uint64_t (*clock)(void *ctx), void *ctx)
{
	te->clock = clock;
	te->clock_ctx = ctx;
}

bool hs_trigger_engine_wants_events(const hs_trigger_engine *te) { return te->wants_events; }

/* The evidence of a hit that becomes pending (NULL on OOM: the fire goes out without it). */
static char *evidence(hs_trigger_engine *te, hs_trig *t, const hs_key_event *ev, uint64_t ts,
		      const hs_frame_hit *fh, const char *reason)
{
	hs_strbuf sb = {0};
	hs_json j;
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_trig_evidence_begin(te, t, ev, &j);
	if (!ev)
		hs_json_kuint(&j, "ts_ns", ts);
	if (reason)
		hs_json_kstr(&j, "reason", reason);
	if (fh)
		hs_frame_evidence(t, fh, &j);
	else if (ev)
		hs_trig_cond_evidence(t, ev, &j);
	hs_json_obj_end(&j);
	return hs_sb_take(&sb);
}

/* Room under the rate cap for a snapshot at `now` (the window is (now - 1 h, now]). */
static bool rate_allows(const hs_trig *t, uint64_t now)
{
	if (!t->rate_cap || t->n_fire_times < t->rate_cap)
		return true;
	uint64_t oldest = t->fire_times[t->fire_next]; /* full ring: the next slot holds the oldest */
	return add_sat(oldest, RATE_WINDOW_NS) <= now;
}

/* The pending snapshot is due: decided at its due time, in the sessions'
 * clock, whenever the caller asks (next) or a later hit shows the time has
 * passed. The rate cap's hour and the cool-down count from the due time. */
static void decide(hs_trig *t)
{
	hs_trigger_fire *p = &t->pend;
	uint64_t at = p->due_ns;
	t->pend_active = false;
	t->st.pending = t->n_ready > 0;
	if (!rate_allows(t, at)) {
		t->st.dropped_rate++;
		free(p->evidence_json);
		p->evidence_json = NULL;
		return;
	}
	if (t->n_ready == HS_TRIGGER_MAX_READY) {
		/* The caller is far behind: these hits join the newest snapshot waiting. */
		hs_trigger_fire *last = &t->ready[(t->ready_head + t->n_ready - 1) % HS_TRIGGER_MAX_READY];
		last->hits += p->hits;
		if (p->last_hit_ns > last->last_hit_ns)
			last->last_hit_ns = p->last_hit_ns;
		t->st.joined += p->hits;
		free(p->evidence_json);
		p->evidence_json = NULL;
		return;
	}
	if (t->rate_cap) {
		t->fire_times[t->fire_next] = at;
		t->fire_next = (t->fire_next + 1) % t->rate_cap;
		if (t->n_fire_times < t->rate_cap)
			t->n_fire_times++;
	}
	t->fired_once = true;
	t->cooldown_end_ns = add_sat(at, t->cooldown_ns);
	t->ready[(t->ready_head + t->n_ready++) % HS_TRIGGER_MAX_READY] = *p;
	p->evidence_json = NULL;
	t->st.pending = true;
}

/* One hit at event time ts (detected at now): the behaviour state machine. */
static void hit(hs_trigger_engine *te, hs_trig *t, const hs_key_event *ev, uint64_t ts, uint64_t now,
		const hs_frame_hit *fh, const char *reason)
{
	t->st.hits++;
	if (t->pend_active && ts > t->pend.due_ns)
		decide(t); /* the pending one was due before this hit: it does not join it */
	if (ts < t->warmup_end_ns) {
		t->st.ignored_warmup++;
		return;
	}
	bool waited = t->need_clear;
	uint64_t prev = t->last_hit_ns;
	if (ts > t->last_hit_ns)
		t->last_hit_ns = ts;
	t->need_clear = true;
	if (t->pend_active) {
		t->st.joined++;
		t->pend.hits++;
		if (ts > t->pend.last_hit_ns)
			t->pend.last_hit_ns = ts;
		return;
	}
	if (t->fired_once && ts < t->cooldown_end_ns) {
		t->st.joined++;
		return;
	}
	if (waited) {
		/* frame_time clears only on a frame that is not a hitch (frame.c);
		 * the others when no hit came for clear_ms. */
		bool clear = t->kind != HS_TRIGGER_FRAME_TIME && ts >= prev && ts - prev >= t->clear_ns;
		if (!clear) {
			t->st.ignored_unarmed++;
			return;
		}
	}
	t->pend.first_hit_ns = ts;
	t->pend.last_hit_ns = ts;
	if (!now && te->clock)
		now = te->clock(te->clock_ctx);
	t->pend.detect_ns = now ? now : ts;
	t->pend.due_ns = add_sat(ts, t->post_delay_ns);
	t->pend.hits = 1;
	free(t->pend.evidence_json);
	t->pend.evidence_json = evidence(te, t, ev, ts, fh, reason);
	t->pend_active = true;
	t->st.pending = true;
	t->st.armed = false;
}

/* A frame that is not a hitch: the frame_time condition is clear. */
static void frame_clear(hs_trig *t, uint64_t ts)
{
	if (t->need_clear && ts >= t->last_hit_ns && ts - t->last_hit_ns >= t->clear_ns)
		t->need_clear = false;
}

void hs_trigger_engine_feed(hs_trigger_engine *te, const hs_key_event *ev, uint64_t now_ns)
{
	if (!te->n_refs || !ev->name)
		return;
	uint64_t *v = hs_hmap_get_bytes(&te->by_name, ev->name, strlen(ev->name));
	if (!v)
		return; /* the fast path: no trigger watches this name */
	const hs_trig_refs *list = &te->refs[*v];
	for (size_t k = 0; k < list->n; k++) {
		const hs_trig_ref *r = &list->refs[k];
		if (strcmp(r->system ? r->system : "", ev->system ? ev->system : "") != 0)
			continue;
		hs_trig *t = &te->trigs[r->trig];
		if (t->pt->session != ev->session)
			continue;
		if (t->kind == HS_TRIGGER_FRAME_TIME) {
			char buf[HS_TRIGGER_FIELD_BYTES];
			hs_frame_hit fh;
			int f = hs_frame_feed(te, t, ev, buf, sizeof buf, &fh);
			if (f > 0)
				hit(te, t, ev, ev->ts_ns, now_ns, &fh, NULL);
			else if (f == 0)
				frame_clear(t, ev->ts_ns);
		} else if (hs_trig_cond_match(t, ev)) {
			hit(te, t, ev, ev->ts_ns, now_ns, NULL, NULL);
		}
	}
}

void hs_trigger_engine_manual(hs_trigger_engine *te, uint64_t now_ns, const char *reason)
{
	if (!te->has_manual) {
		hit(te, &te->builtin, NULL, now_ns, now_ns, NULL, reason);
		return;
	}
	for (size_t i = 0; i < te->n; i++)
		if (te->trigs[i].kind == HS_TRIGGER_MANUAL)
			hit(te, &te->trigs[i], NULL, now_ns, now_ns, NULL, reason);
}

/* The trigger's armed flag for the stats, as of now. */
static void update_armed(hs_trig *t, uint64_t now)
{
	bool clear = !t->need_clear || (t->kind != HS_TRIGGER_FRAME_TIME && now >= t->last_hit_ns &&
					now - t->last_hit_ns >= t->clear_ns);
	t->st.armed = now >= t->warmup_end_ns && clear && !t->st.pending;
}

static void due_now(hs_trig *t, uint64_t now)
{
	if (t->pend_active && t->pend.due_ns <= now)
		decide(t);
	update_armed(t, now);
}

bool hs_trigger_engine_next(hs_trigger_engine *te, uint64_t now_ns, hs_trigger_fire *out)
{
	due_now(&te->builtin, now_ns);
	for (size_t i = 0; i < te->n; i++)
		due_now(&te->trigs[i], now_ns);
	/* The earliest due of all decided snapshots goes first. */
	hs_trig *best = te->builtin.n_ready ? &te->builtin : NULL;
	for (size_t i = 0; i < te->n; i++) {
		hs_trig *t = &te->trigs[i];
		if (t->n_ready && (!best || t->ready[t->ready_head].due_ns < best->ready[best->ready_head].due_ns))
			best = t;
	}
	if (!best)
		return false;
	*out = best->ready[best->ready_head];
	best->ready[best->ready_head].evidence_json = NULL;
	best->ready_head = (best->ready_head + 1) % HS_TRIGGER_MAX_READY;
	best->n_ready--;
	best->st.pending = best->pend_active || best->n_ready;
	best->st.fired++;
	best->st.last_fire_ns = now_ns;
	return true;
}

static uint64_t trig_due(const hs_trig *t)
{
	if (t->n_ready)
		return t->ready[t->ready_head].due_ns; /* earlier than the pending one */
	return t->pend_active ? t->pend.due_ns : UINT64_MAX;
}

uint64_t hs_trigger_engine_next_due(const hs_trigger_engine *te)
{
	uint64_t due = trig_due(&te->builtin);
	for (size_t i = 0; i < te->n; i++) {
		uint64_t d = trig_due(&te->trigs[i]);
		if (d < due)
			due = d;
	}
	return due;
}

size_t hs_trigger_engine_count(const hs_trigger_engine *te) { return te->n; }

const hs_trigger_stats *hs_trigger_engine_stats(const hs_trigger_engine *te, size_t i)
{
	if (i == SIZE_MAX)
		return &te->builtin.st;
	return i < te->n ? &te->trigs[i].st : NULL;
}
