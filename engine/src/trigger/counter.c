/* trigger/counter.c: counter triggers: a reading at or beyond a threshold for for_s, escalating steps once each, only_if_worse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trigger/trigger_int.h"

hs_status hs_ctr_new(hs_trig *t)
{
	const hs_trigger *tr = t->pt->trigger;
	const hs_counter_info *ci = hs_counter_info_of(tr->counter);
	if (!ci || !tr->n_thresholds || tr->n_thresholds > HS_RULES_MAX_THRESHOLDS)
		return HS_EINVAL;
	hs_ctr_state *c = calloc(1, sizeof(*c));
	if (!c)
		return HS_ENOMEM;
	c->per_process = ci->per_process;
	c->psi = ci->psi != NULL;
	c->n_series = c->per_process ? HS_TRIGGER_COUNTER_SERIES : 1;
	t->ctr = c;
	return HS_OK;
}

/* The series of pid: found, a free one, or the least recently sampled one emptied. */
static hs_ctr_series *series(hs_ctr_state *c, int pid)
{
	return hs_trig_slot(c->series, c->n_series, sizeof(hs_ctr_series), c->per_process ? pid : 0);
}

/* "At or beyond": PSI's kernel trigger fires when the stall reaches the threshold. */
static bool beyond(const hs_trigger *tr, double v, double threshold)
{
	return tr->below ? v <= threshold : v >= threshold;
}

static bool worse(const hs_trigger *tr, double v, double than)
{
	return tr->below ? v < than : v > than;
}

typedef struct {
	const hs_counter_sample *s;
	const hs_ctr_series *se;
	size_t step;
	uint64_t since_ns;
} ctr_hit;

static void ctr_evidence(const hs_trig *t, const void *ctx, hs_json *j)
{
	const ctr_hit *h = ctx;
	const hs_trigger *tr = t->pt->trigger;
	const hs_counter_info *ci = hs_counter_info_of(tr->counter);
	hs_json_kstr(j, "counter", ci->name);
	hs_json_kstr(j, "unit", ci->unit);
	hs_json_kdouble(j, "value", h->s->value, 3);
	if (h->s->crossing)
		hs_json_kbool(j, "crossing", true); /* PSI: the value is the threshold the kernel saw reached */
	hs_json_kstr(j, "direction", tr->below ? "below" : "above");
	hs_json_kdouble(j, "threshold", tr->thresholds[h->step], 3);
	hs_json_kuint(j, "step", h->step + 1);
	hs_json_kuint(j, "steps", tr->n_thresholds);
	hs_json_kdouble(j, "for_s", tr->for_s, 3);
	hs_json_kdouble(j, "held_s", (double)(h->s->ts_ns - h->since_ns) / (double)HS_NS_PER_S, 3);
	if (h->se->proc.pid)
		hs_json_kint(j, "pid", h->se->proc.pid);
	if (h->se->process[0])
		hs_json_kstr(j, "process", h->se->process);
	if (tr->only_if_worse && h->se->fired) {
		hs_json_kdouble(j, "previous_value", h->se->fired_value, 3);
	}
	if (h->s->detail)
		hs_json_kstr(j, "detail", h->s->detail);
}

void hs_ctr_sample(hs_trigger_engine *te, hs_trig *t, const hs_counter_sample *s, uint64_t now)
{
	const hs_trigger *tr = t->pt->trigger;
	hs_ctr_state *c = t->ctr;
	hs_ctr_series *se = series(c, s->pid);
	se->proc.seen = ++te->seq;
	if (s->process && s->process[0])
		snprintf(se->process, sizeof se->process, "%s", s->process);
	if (c->psi) {
		/* The kernel signals crossings only, at most once a window while
		 * the stall lasts: no signal for clear_ms ends the incident. */
		if (se->last_ts && s->ts_ns >= se->last_ts && s->ts_ns - se->last_ts >= t->clear_ns)
			se->step = 0;
		se->last_ts = s->ts_ns;
	}
	uint64_t from = s->ts_ns > s->window_ns ? s->ts_ns - s->window_ns : 1;
	uint64_t for_ns = (uint64_t)(tr->for_s * (double)HS_NS_PER_S);
	/* How long the value has been beyond each threshold; the highest held for for_s is the step. */
	size_t held = SIZE_MAX;
	for (size_t k = 0; k < tr->n_thresholds; k++) {
		if (!beyond(tr, s->value, tr->thresholds[k])) {
			se->since[k] = 0;
			continue;
		}
		if (!se->since[k] || from < se->since[k])
			se->since[k] = from;
		if (s->ts_ns >= se->since[k] && s->ts_ns - se->since[k] >= for_ns)
			held = k;
	}
	if (!se->since[0]) {
		/* Within the first threshold: the incident is over, steps start again. */
		se->step = 0;
		hs_trig_clear(t, s->ts_ns);
		return;
	}
	if (held == SIZE_MAX)
		return; /* not held for for_s yet */
	bool new_step = held >= se->step;
	if (!new_step && !c->psi)
		return; /* still beyond a step that fired: nothing new (a reading within re-arms) */
	if (new_step && tr->only_if_worse && se->fired && !worse(tr, s->value, se->fired_value)) {
		t->st.not_worse++;
		se->step = held + 1; /* judged for this incident */
		return;
	}
	ctr_hit h = {.s = s, .se = se, .step = held, .since_ns = se->since[held]};
	/* A higher step of the same incident is a new snapshot past the cool-down;
	 * a PSI signal of a step that fired is a hit like a repeated event. */
	hs_hit_outcome o = hs_trig_hit(te, t,
				       &(hs_hit){.ts = s->ts_ns,
						 .now = now,
						 .force = new_step && se->step > 0,
						 .extra = ctr_evidence,
						 .ctx = &h});
	if (!new_step || o == HS_HIT_WARMUP || o == HS_HIT_DISARMED)
		return; /* not judged: the step may fire once the trigger arms */
	se->step = held + 1;
	if (o == HS_HIT_PENDING) {
		se->fired = true;
		se->fired_value = s->value;
	}
}
