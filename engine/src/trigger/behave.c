/* trigger/behave.c: one hit's way through a trigger's behaviour: warm-up, arm_while, joining a pending snapshot, cool-down, re-arm (clear_ms or a reading within the condition), chance, the rate cap; and the kinds' per-process slot tables and rings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "hindsight/strbuf.h"
#include "trigger/trigger_int.h"

/* The rate cap's window: max_per_hour counts snapshots in any sliding hour. */
#define RATE_WINDOW_NS (3600ull * HS_NS_PER_S)

/* A uniform draw in [0, 1) (splitmix64: small, and the same sequence for a seed). */
static double draw(hs_trigger_engine *te)
{
	uint64_t z = (te->rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* The evidence of a hit that becomes pending (NULL on OOM: the fire goes out without it). */
static char *evidence(hs_trigger_engine *te, hs_trig *t, const hs_hit *h)
{
	hs_strbuf sb = {0};
	hs_json j;
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_trig_evidence_begin(te, t, h->ev, &j);
	if (!h->ev)
		hs_json_kuint(&j, HS_RUNDOC_HIT_TS, h->ts);
	if (h->reason)
		hs_json_kstr(&j, HS_RUNDOC_HIT_REASON, h->reason);
	if (t->pt && t->pt->trigger->has_chance) {
		hs_json_key(&j, "chance");
		hs_json_double(&j, t->pt->trigger->chance, 6);
	}
	if (h->extra)
		h->extra(t, h->ctx, &j);
	else if (h->ev)
		hs_trig_cond_evidence(t, h->ev, &j);
	hs_json_obj_end(&j);
	return hs_sb_take(&sb);
}

/* Room under the rate cap for a snapshot at `now` (the window is (now - 1 h, now]). */
static bool rate_allows(const hs_trig *t, uint64_t now)
{
	if (!t->rate_cap || t->n_fire_times < t->rate_cap)
		return true;
	uint64_t oldest = t->fire_times[t->fire_next]; /* full ring: the next slot holds the oldest */
	return hs_trig_add_sat(oldest, RATE_WINDOW_NS) <= now;
}

/* The pending snapshot is due: decided at its due time, in the sessions'
 * clock, whenever the caller asks (next) or a later hit shows the time has
 * passed. The rate cap's hour and the cool-down count from the due time. */
void hs_trig_decide(hs_trig *t)
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
	t->cooldown_end_ns = hs_trig_add_sat(at, t->cooldown_ns);
	t->ready[(t->ready_head + t->n_ready++) % HS_TRIGGER_MAX_READY] = *p;
	p->evidence_json = NULL;
	t->st.pending = true;
}

/* One hit at event time h->ts (detected at h->now): the behaviour state machine. */
hs_hit_outcome hs_trig_hit(hs_trigger_engine *te, hs_trig *t, const hs_hit *h)
{
	uint64_t ts = h->ts, now = h->now;
	t->st.hits++;
	if (t->pend_active && ts > t->pend.due_ns)
		hs_trig_decide(t); /* the pending one was due before this hit: it does not join it */
	if (ts < t->warmup_end_ns) {
		t->st.ignored_warmup++;
		return HS_HIT_WARMUP;
	}
	if (!t->running) {
		/* arm_while: the program it watches for is not running. */
		t->st.ignored_disarmed++;
		return HS_HIT_DISARMED;
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
		return HS_HIT_JOINED;
	}
	if (!h->force && t->fired_once && ts < t->cooldown_end_ns) {
		t->st.joined++;
		return HS_HIT_JOINED;
	}
	if (waited && !h->force) {
		/* frame_time, deadline and sampled counters clear only on a
		 * reading within the condition (hs_trig_clear); the others when
		 * no hit came for clear_ms. */
		bool clear = !t->clear_by_samples && ts >= prev && ts - prev >= t->clear_ns;
		if (!clear) {
			t->st.ignored_unarmed++;
			return HS_HIT_UNARMED;
		}
	}
	if (t->pt && t->pt->trigger->has_chance && !(draw(te) < t->pt->trigger->chance)) {
		/* One draw per incident: the trigger still waits to clear. */
		t->st.sampled_out++;
		return HS_HIT_SAMPLED_OUT;
	}
	t->pend.first_hit_ns = ts;
	t->pend.last_hit_ns = ts;
	if (!now && te->clock)
		now = te->clock(te->clock_ctx);
	t->pend.detect_ns = now ? now : ts;
	t->pend.due_ns = hs_trig_add_sat(ts, t->post_delay_ns);
	t->pend.hits = 1;
	t->pend.weight = t->weight;
	free(t->pend.evidence_json);
	t->pend.evidence_json = evidence(te, t, h);
	t->pend_active = true;
	t->st.pending = true;
	t->st.armed = false;
	return HS_HIT_PENDING;
}

void hs_trig_clear(hs_trig *t, uint64_t ts)
{
	if (t->need_clear && ts >= t->last_hit_ns && ts - t->last_hit_ns >= t->clear_ns)
		t->need_clear = false;
}

void *hs_trig_slot(void *slots, size_t n, size_t size, int pid)
{
	char *free_slot = NULL, *oldest = NULL;
	uint64_t oldest_seen = 0;
	for (size_t i = 0; i < n; i++) {
		char *s = (char *)slots + i * size;
		const hs_trig_proc *p = (const hs_trig_proc *)s;
		if (!p->seen) {
			if (!free_slot)
				free_slot = s;
		} else if (p->pid == pid) {
			return s;
		} else if (!oldest || p->seen < oldest_seen) {
			oldest = s;
			oldest_seen = p->seen;
		}
	}
	char *s = free_slot ? free_slot : oldest;
	memset(s, 0, size);
	((hs_trig_proc *)s)->pid = pid;
	return s;
}

hs_status hs_trig_rings_init(hs_trig_rings *r, const hs_trigger *tr, uint64_t want, uint64_t lo, uint64_t hi)
{
	r->cap = (size_t)(want < lo ? lo : want > hi ? hi : want);
	r->present = tr->source && strcmp(tr->source, "present") == 0;
	r->scratch = malloc(r->cap * sizeof(*r->scratch));
	return r->scratch ? HS_OK : HS_ENOMEM;
}

void hs_trig_kind_free(hs_trig *t)
{
	free(t->frame);
	free(t->dl);
	free(t->ctr);
	for (size_t i = 0; i < HS_TRIGGER_FRAME_PIDS; i++)
		free(t->rings.rings[i]);
	free(t->rings.scratch);
}

void *hs_trig_ring(hs_trig_rings *r, size_t i, size_t size)
{
	if (!r->rings[i])
		r->rings[i] = malloc(r->cap * size);
	return r->rings[i];
}

size_t hs_trig_ring_push(const hs_trig_rings *r, size_t *n, size_t *next)
{
	size_t at = *next;
	*next = (at + 1) % r->cap;
	if (*n < r->cap)
		(*n)++;
	return at;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double hs_trig_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool hs_trig_via(char *system, size_t cap, const char *sys)
{
	if (!system[0]) {
		snprintf(system, cap, "%s", sys);
		return true;
	}
	return strncmp(system, sys, cap - 1) == 0;
}
