/* trigger/trigger.c: the trigger engine: set-up, event dispatch to the kinds, cancels, due times, manual requests (a hit's behaviour is behave.c). */
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "hindsight/strbuf.h"
#include "trigger/trigger_int.h"

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

static void trig_free(hs_trig *t)
{
	hs_regex_free(t->re);
	hs_regex_free(t->cancel_re);
	hs_trig_kind_free(t);
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
static hs_status add_ref(hs_trigger_engine *te, size_t i, const char *system, const char *name, hs_trigger_role role)
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
		if (list->refs[k].trig == i && list->refs[k].role == role &&
		    strcmp(list->refs[k].system ? list->refs[k].system : "", system ? system : "") == 0)
			return HS_OK; /* the same event listed twice */
	hs_trig_ref *nr = realloc(list->refs, (list->n + 1) * sizeof(*nr));
	if (!nr)
		return HS_ENOMEM;
	list->refs = nr;
	list->refs[list->n++] = (hs_trig_ref){.trig = i, .system = system, .role = role};
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
	t->warmup_end_ns = hs_trig_add_sat(start_ns, mul_sat(tr->warmup_s, HS_NS_PER_S));
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
	t->running = !tr->arm_while;
	/* A chance outside (0, 1] is refused by the checker; 1 without one. */
	t->weight = tr->has_chance && tr->chance > 0 ? 1.0 / tr->chance : 1.0;
	t->pend.weight = t->weight;

	const char *pattern = NULL;
	hs_status st = HS_OK;
	if (tr->kind == HS_TRIGGER_REGEX) {
		if (!tr->pattern || !tr->field)
			return HS_EINVAL;
		pattern = tr->pattern;
	} else if (tr->kind == HS_TRIGGER_FRAME_TIME) {
		pattern = tr->slice; /* NULL: every slice is a frame */
		st = hs_frame_new(t);
		t->clear_by_samples = true;
	} else if (tr->kind == HS_TRIGGER_DEADLINE) {
		pattern = tr->slice;
		st = hs_dl_new(t);
		t->clear_by_samples = true; /* a frame after the freeze re-arms */
	} else if (tr->kind == HS_TRIGGER_COUNTER) {
		st = hs_ctr_new(t);
		t->clear_by_samples = st == HS_OK && !t->ctr->psi;
	}
	if (st != HS_OK)
		return st;
	char err[256];
	size_t off;
	if (pattern && (st = hs_regex_compile_opts(pattern, &(hs_regex_opts){.jit = true}, &t->re, err, sizeof err,
						   &off)) != HS_OK)
		return st;
	if (tr->cancel_marker &&
	    (st = hs_regex_compile_opts(tr->cancel_marker, &(hs_regex_opts){.jit = true}, &t->cancel_re, err,
					sizeof err, &off)) != HS_OK)
		return st;
	if (tr->kind == HS_TRIGGER_MANUAL) {
		te->has_manual = true;
		return HS_OK;
	}
	for (size_t k = 0; k < pt->n_events; k++) {
		/* Events known only by id cannot be told apart through hs_key_event
		 * (it carries names): such an entry watches nothing. */
		if (!pt->events[k].name)
			continue;
		if ((st = add_ref(te, i, pt->events[k].system, pt->events[k].name, pt->events[k].role)) != HS_OK)
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
	te->builtin.running = true;
	te->builtin.weight = te->builtin.pend.weight = 1.0;
	te->rng = 0x9E3779B97F4A7C15ull ^ start_ns;
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

void hs_trigger_engine_set_probe(hs_trigger_engine *te, hs_trigger_probe_fn probe, void *ctx)
{
	te->probe = probe;
	te->probe_ctx = ctx;
}

void hs_trigger_engine_set_lag(hs_trigger_engine *te, uint64_t lag_ns) { te->lag_ns = lag_ns; }

void hs_trigger_engine_set_seed(hs_trigger_engine *te, uint64_t seed) { te->rng = seed; }

void hs_trigger_engine_set_running(hs_trigger_engine *te, size_t i, bool running)
{
	if (i < te->n)
		te->trigs[i].running = running || !te->trigs[i].pt->trigger->arm_while;
}

static void frame_extra(const hs_trig *t, const void *ctx, hs_json *j) { hs_frame_evidence(t, ctx, j); }

/* A cancel event or marker at ts: the pending snapshot is dropped (a
 * loading screen began); a deadline's freezes in progress are no hangs. */
static void cancel(hs_trig *t, const hs_key_event *ev, char *buf, size_t cap)
{
	/* cancel_marker: the text written to trace_marker. */
	if (t->cancel_re && strcmp(ev->name, "print") == 0 &&
	    !(hs_trig_marker(t, ev, buf, cap) && hs_trig_regex(t, t->cancel_re, buf)))
		return;
	if (t->pend_active && ev->ts_ns <= t->pend.due_ns) {
		t->pend_active = false;
		t->st.pending = t->n_ready > 0;
		t->st.cancelled++;
		free(t->pend.evidence_json);
		t->pend.evidence_json = NULL;
	}
	if (t->dl)
		hs_dl_cancel(t, ev->ts_ns);
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
		char buf[HS_TRIGGER_FIELD_BYTES];
		if (r->role == HS_TRIGGER_ROLE_CANCEL) {
			cancel(t, ev, buf, sizeof buf);
		} else if (t->kind == HS_TRIGGER_DEADLINE) {
			hs_dl_feed(te, t, ev, r->role, buf, sizeof buf);
		} else if (t->kind == HS_TRIGGER_FRAME_TIME) {
			hs_frame_hit fh;
			int f = hs_frame_feed(te, t, ev, buf, sizeof buf, &fh);
			if (f > 0)
				hs_trig_hit(te, t,
					    &(hs_hit){.ev = ev, .ts = ev->ts_ns, .now = now_ns, .extra = frame_extra, .ctx = &fh});
			else if (f == 0)
				hs_trig_clear(t, ev->ts_ns);
		} else if (hs_trig_cond_match(t, ev)) {
			hs_trig_hit(te, t, &(hs_hit){.ev = ev, .ts = ev->ts_ns, .now = now_ns});
		}
	}
}

void hs_trigger_engine_manual(hs_trigger_engine *te, uint64_t now_ns, const char *reason)
{
	hs_hit h = {.ts = now_ns, .now = now_ns, .reason = reason};
	if (!te->has_manual) {
		hs_trig_hit(te, &te->builtin, &h);
		return;
	}
	for (size_t i = 0; i < te->n; i++)
		if (te->trigs[i].kind == HS_TRIGGER_MANUAL)
			hs_trig_hit(te, &te->trigs[i], &h);
}

void hs_trigger_engine_sample(hs_trigger_engine *te, size_t i, const hs_counter_sample *s, uint64_t now_ns)
{
	if (i < te->n && te->trigs[i].ctr)
		hs_ctr_sample(te, &te->trigs[i], s, now_ns);
}

/* The trigger's armed flag for the stats, as of now. */
static void update_armed(hs_trig *t, uint64_t now)
{
	bool clear = !t->need_clear ||
		     (!t->clear_by_samples && now >= t->last_hit_ns && now - t->last_hit_ns >= t->clear_ns);
	t->st.armed = now >= t->warmup_end_ns && clear && !t->st.pending && t->running;
}

static void due_now(hs_trigger_engine *te, hs_trig *t, uint64_t now)
{
	/* A deadline passes by the clock: judged here while the process is
	 * still frozen (events arrive up to lag_ns late). */
	if (t->dl && now > te->lag_ns)
		hs_dl_advance(te, t, now - te->lag_ns, now);
	if (t->pend_active && t->pend.due_ns <= now)
		hs_trig_decide(t);
	update_armed(t, now);
}

bool hs_trigger_engine_next(hs_trigger_engine *te, uint64_t now_ns, hs_trigger_fire *out)
{
	due_now(te, &te->builtin, now_ns);
	for (size_t i = 0; i < te->n; i++)
		due_now(te, &te->trigs[i], now_ns);
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
		const hs_trig *t = &te->trigs[i];
		uint64_t d = trig_due(t);
		if (d < due)
			due = d;
		/* The next deadline, seen lag_ns after it passes. */
		if (t->dl && (d = hs_dl_next(t)) != UINT64_MAX && hs_trig_add_sat(d, te->lag_ns) < due)
			due = hs_trig_add_sat(d, te->lag_ns);
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
