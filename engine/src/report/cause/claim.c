/* report/cause/claim.c: what classifiers call: a claim cut out of a stretch's unexplained pieces and summed by reason and culprit, and the wake-up chain (the waker's own time, classified through the context's run_all). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ca.h"
#include "hindsight/vec.h"

uint64_t ca_free_in(const ca_ctx *c, uint64_t t0, uint64_t t1)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < c->n_free; i++) {
		uint64_t a = c->f0[i] > t0 ? c->f0[i] : t0, b = c->f1[i] < t1 ? c->f1[i] : t1;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

static bool span_add(ca_ctx *c, uint64_t t0, uint64_t t1, const char *id)
{
	if (c->depth)
		return true;
	if (c->n_cspans == c->cap_cspans) {
		size_t nc = c->cap_cspans ? c->cap_cspans * 2 : 128;
		struct ca_claim_span *v = realloc(c->cspans, nc * sizeof *v);
		if (!v)
			return false;
		c->cspans = v;
		c->cap_cspans = nc;
	}
	c->cspans[c->n_cspans++] =
		(struct ca_claim_span){.t0 = t0, .t1 = t1, .id = id, .st = (uint8_t)c->cur->st, .cpu = (int16_t)c->cur->cpu};
	return true;
}

static ca_acc *acc_for(ca_ctx *c, const char *id, const ca_culprit *who)
{
	char key[96];
	snprintf(key, sizeof key, "%s", who ? (who->is_task ? who->name : who->what) : "");
	for (size_t i = 0; i < c->n_acc; i++)
		if (c->acc[i].id == id && !strcmp(c->acc[i].key, key) && c->acc[i].has_who == (who != NULL))
			return &c->acc[i];
	ca_acc *v = hs_array_grow(c->acc, sizeof *v, c->n_acc, &c->cap_acc, 16);
	if (!v)
		return NULL;
	c->acc = v;
	ca_acc *a = &c->acc[c->n_acc++];
	memset(a, 0, sizeof *a);
	a->id = id;
	snprintf(a->key, sizeof a->key, "%s", key);
	if (who) {
		a->who = *who;
		a->has_who = true;
	}
	return a;
}

uint64_t ca_claim(ca_ctx *c, uint64_t t0, uint64_t t1, const char *id, const ca_culprit *who, const char *what,
		  const char *evidence)
{
	if (t1 <= t0 || !c->n_free)
		return 0;
	uint64_t got = 0;
	/* cut [t0, t1) out of every free piece */
	size_t n = c->n_free;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = c->f0[i], b = c->f1[i];
		uint64_t x = a > t0 ? a : t0, y = b < t1 ? b : t1;
		if (y <= x)
			continue;
		got += y - x;
		if (!span_add(c, x, y, id))
			c->oom = true;
		/* what is left of the piece: [a, x) and [y, b) */
		if (x > a && y < b) {
			if (c->n_free == c->cap_free) {
				size_t nc = c->cap_free * 2;
				uint64_t *v0 = realloc(c->f0, nc * sizeof *v0);
				if (!v0) {
					c->oom = true;
					continue;
				}
				c->f0 = v0;
				uint64_t *v1 = realloc(c->f1, nc * sizeof *v1);
				if (!v1) {
					c->oom = true;
					continue;
				}
				c->f1 = v1;
				c->cap_free = nc;
			}
			c->f1[i] = x;
			c->f0[c->n_free] = y;
			c->f1[c->n_free] = b;
			c->n_free++;
		} else if (x > a) {
			c->f1[i] = x;
		} else if (y < b) {
			c->f0[i] = y;
		} else {
			c->f0[i] = c->f1[i] = a; /* empty, dropped below */
		}
	}
	/* drop empty pieces */
	size_t o = 0;
	for (size_t i = 0; i < c->n_free; i++)
		if (c->f1[i] > c->f0[i]) {
			c->f0[o] = c->f0[i];
			c->f1[o] = c->f1[i];
			o++;
		}
	c->n_free = o;
	if (!got)
		return 0;
	ca_acc *a = acc_for(c, id, who);
	if (!a) {
		c->oom = true;
		return got;
	}
	a->ns += got;
	if (who && who->is_task) {
		bool seen = false;
		for (size_t i = 0; i < a->n_tids && !seen; i++)
			seen = a->tids[i] == who->tid;
		if (!seen && a->n_tids < sizeof a->tids / sizeof a->tids[0])
			a->tids[a->n_tids++] = who->tid;
		if (!seen)
			a->who.tasks = (unsigned)a->n_tids;
	}
	if (what && what[0] && got >= a->biggest) {
		a->biggest = got;
		snprintf(a->what, sizeof a->what, "%s", what);
	}
	a->claims++;
	if (evidence && evidence[0]) {
		bool dup = false;
		for (size_t i = 0; i < a->n_ev && !dup; i++)
			dup = !strcmp(a->ev[i], evidence);
		size_t slot = a->n_ev;
		if (!dup && slot == HS_CAUSE_MAX_EVIDENCE) {
			/* full: the smallest claim's line makes room for a larger one */
			size_t m = 0;
			for (size_t i = 1; i < a->n_ev; i++)
				if (a->ev_ns[i] < a->ev_ns[m])
					m = i;
			slot = a->ev_ns[m] < got ? m : SIZE_MAX;
		} else if (!dup) {
			a->n_ev++;
		}
		if (!dup && slot != SIZE_MAX) {
			snprintf(a->ev[slot], sizeof a->ev[0], "%s", evidence);
			a->ev_ns[slot] = got;
		}
	}
	return got;
}

const hs_cause_def *ca_def_of(const ca_ctx *c, const char *id)
{
	return hs_cause_vocab_find(c->vocab, id);
}

int ca_acc_cmp(const void *a, const void *b)
{
	const ca_acc *x = a, *y = b;
	return (x->ns < y->ns) - (x->ns > y->ns);
}

void ca_free_ctx(ca_ctx *c)
{
	free(c->segs);
	free(c->f0);
	free(c->f1);
	free(c->acc);
	free(c->cspans);
}

void ca_chain(ca_ctx *c, int32_t waker, uint64_t t0, uint64_t t1, char *out, size_t cap)
{
	out[0] = '\0';
	if (waker <= 0 || t1 <= t0 || (uint64_t)c->depth >= c->vocab->chain_hops || c->depth + 1 >= HS_CAUSE_MAX_HOPS)
		return;
	ca_ctx d = *c;
	d.depth = c->depth + 1;
	d.tid = waker;
	d.tgid = cm_tgid(c->m, waker);
	d.cov0 = t0;
	d.cov1 = t1;
	d.segs = NULL;
	d.n_segs = 0;
	d.f0 = d.f1 = NULL;
	d.n_free = d.cap_free = 0;
	d.acc = NULL;
	d.n_acc = d.cap_acc = 0;
	d.cspans = NULL;
	d.n_cspans = d.cap_cspans = 0;
	d.oom = false;
	if (ca_build_segs(&d) != HS_OK) {
		ca_free_ctx(&d);
		return;
	}
	d.run_all(&d); /* through the context: the classifiers call this file, never the reverse */
	if (d.n_acc > 1)
		qsort(d.acc, d.n_acc, sizeof *d.acc, ca_acc_cmp);
	uint64_t span = t1 - t0, sum = 0;
	for (size_t i = 0; i < d.n_acc; i++)
		sum += d.acc[i].ns;
	/* the waker's own reasons over that time (summed by reason, each with its biggest culprit), the largest
	 * first, those worth mentioning (at least one) */
	struct {
		const char *id;
		uint64_t ns;
		const ca_acc *top;
	} rs[HS_CAUSE_MAX_REASONS];
	size_t nr = 0;
	for (size_t i = 0; i < d.n_acc; i++) {
		size_t k = 0;
		while (k < nr && rs[k].id != d.acc[i].id)
			k++;
		if (k == nr) {
			if (nr == HS_CAUSE_MAX_REASONS)
				continue;
			rs[nr].id = d.acc[i].id;
			rs[nr].ns = 0;
			rs[nr].top = &d.acc[i]; /* sorted: the first of a reason is its biggest */
			nr++;
		}
		rs[k].ns += d.acc[i].ns;
	}
	for (size_t a = 0; a < nr; a++)
		for (size_t b = a + 1; b < nr; b++)
			if (rs[b].ns > rs[a].ns) {
				__typeof__(rs[0]) t = rs[a];
				rs[a] = rs[b];
				rs[b] = t;
			}
	size_t o = 0;
	ca_culprit me;
	ca_culprit_task(&d, waker, t1, &me);
	for (size_t i = 0; i < nr && sum && o + 1 < cap; i++) {
		const ca_acc *a = rs[i].top;
		double pct = 100.0 * (double)rs[i].ns / (double)span;
		if (i && (pct < (double)c->vocab->mention_pct || i >= 3))
			break;
		const hs_cause_def *def = ca_def_of(&d, a->id);
		/* the step in the vocabulary's words (its chain template: who the waker waited on, for how long) */
		hs_cause_reason k;
		memset(&k, 0, sizeof k);
		k.id = a->id;
		k.def = def;
		k.ns = rs[i].ns;
		k.share = (double)rs[i].ns / (double)span;
		k.has_culprit = a->has_who && (!a->who.is_task || a->who.tid != waker);
		if (k.has_culprit)
			k.culprit = a->who;
		snprintf(k.what, sizeof k.what, "%s", a->what);
		char step[480], t[32];
		if (def && def->chain)
			hs_cause_fill(NULL, &k, def->chain, step, sizeof step);
		else {
			ca_fmt_ns(rs[i].ns, t, sizeof t);
			snprintf(step, sizeof step, "%s %s (%.0f %%)", def && def->title ? def->title : a->id, t, pct);
		}
		int w = snprintf(out + o, cap - o, "%s%s%s", i ? ", " : me.name, i ? "" : ": ", step);
		o = w < 0 ? cap : o + (size_t)w;
		if (a->chain[0] && o + 1 < cap) {
			w = snprintf(out + o, cap - o, " (and it: %s)", a->chain);
			o = w < 0 ? cap : o + (size_t)w;
		}
	}
	c->oom |= d.oom;
	ca_free_ctx(&d);
}

void ca_set_chain(ca_ctx *c, const char *id, const ca_culprit *who, const char *chain)
{
	ca_acc *a = acc_for(c, id, who);
	if (a && chain[0] && !a->chain[0])
		snprintf(a->chain, sizeof a->chain, "%s", chain);
}

