/* report/cause/r_runtime.c: reason "runtime-pause": the thread was inside one of its own runtime's slices (garbage collection, JIT, shader compiles: atrace slice names the vocabulary's `match:` picks). */
#include <stdio.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	if (!def->match)
		return;
	const cm_model *m = c->m;
	uint64_t look = c->vocab->lookback_ms * 1000000ull;
	/* the thread's open slices, innermost last */
	enum { DEPTH = 16 };
	uint64_t at[DEPTH];
	uint32_t name[DEPTH];
	size_t d = 0;
	for (size_t i = ca_rec_at(m, s->t0 > look ? s->t0 - look : 0); i < m->n && m->recs[i].ts < s->t1; i++) {
		const cm_rec *r = &m->recs[i];
		if (r->pid != c->tid || (r->kind != CM_SLICE_IN && r->kind != CM_SLICE_OUT))
			continue;
		if (r->kind == CM_SLICE_IN) {
			if (d < DEPTH) {
				at[d] = r->ts;
				name[d] = r->s;
			}
			d++;
			continue;
		}
		if (!d)
			continue;
		d--;
		if (d < DEPTH && r->ts > s->t0 && ca_match(c, def, cm_str(m, name[d]))) {
			char ev[240], t[32];
			ca_culprit k;
			ca_culprit_thing(&k, cm_str(m, name[d]));
			ca_fmt_ns(r->ts - at[d], t, sizeof t);
			snprintf(ev, sizeof ev, "the thread's slice %s lasted %s", cm_str(m, name[d]), t);
			ca_claim(c, at[d], r->ts, def->id, &k, cm_str(m, name[d]), ev);
		}
	}
	for (size_t k = 0; k < d && k < DEPTH; k++)
		if (ca_match(c, def, cm_str(m, name[k]))) {
			ca_culprit w;
			ca_culprit_thing(&w, cm_str(m, name[k]));
			ca_claim(c, at[k], s->t1, def->id, &w, cm_str(m, name[k]), "a runtime slice still open at the window's end");
		}
}

const ca_classifier ca_r_runtime = {"runtime-pause", 1u << CM_ST_RUN | 1u << CM_ST_READY | 1u << CM_ST_SLEEP, classify};
