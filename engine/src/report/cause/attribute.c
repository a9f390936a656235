/* report/cause/attribute.c: the thread's window split into reasons: each stretch offered to the classifiers in the table's order, what they claim summed by reason and culprit, the wake-up chain, the result. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ca.h"
#include "hindsight/tracedat.h"
#include "hindsight/vec.h"
#include "report/order.h"







/* Offers one stretch to the classifiers; whatever is left unexplained is insufficient data. */
static void classify(ca_ctx *c, const ca_seg *s)
{
	c->cur = s;
	c->n_free = 0;
	if (!c->cap_free) {
		c->f0 = malloc(64 * sizeof *c->f0);
		c->f1 = malloc(64 * sizeof *c->f1);
		if (!c->f0 || !c->f1) {
			c->oom = true;
			return;
		}
		c->cap_free = 64;
	}
	c->f0[0] = s->t0;
	c->f1[0] = s->t1;
	c->n_free = 1;
	for (size_t i = 0; ca_table[i] && c->n_free; i++) {
		const ca_classifier *k = ca_table[i];
		if (!(k->states & (1u << s->st)))
			continue;
		/* a classifier without an id claims for the reasons the vocabulary points it at (r_wait.c) */
		const hs_cause_def *d = k->id ? ca_def_of(c, k->id) : NULL;
		if (!d && k->id)
			continue; /* the vocabulary has no such reason: its classifier is off */
		k->fn(c, s, d);
	}
}


/* Sums per reason: its time, its biggest culprit, its object, its evidence. */
static uint64_t reason_ns(const void *r)
{
	return ((const hs_cause_reason *)r)->ns;
}

static void summarise(ca_ctx *c, hs_cause_result *out)
{
	if (c->n_acc > 1)
		qsort(c->acc, c->n_acc, sizeof *c->acc, ca_acc_cmp);
	uint64_t cov = c->cov1 > c->cov0 ? c->cov1 - c->cov0 : 0;
	out->n_reasons = 0;
	for (size_t i = 0; i < c->n_acc; i++) {
		const ca_acc *a = &c->acc[i];
		hs_cause_reason *r = NULL;
		for (size_t k = 0; k < out->n_reasons && !r; k++)
			if (out->reasons[k].id == a->id)
				r = &out->reasons[k];
		if (!r) {
			if (out->n_reasons == HS_CAUSE_MAX_REASONS)
				continue;
			r = &out->reasons[out->n_reasons++];
			memset(r, 0, sizeof *r);
			r->id = a->id;
			r->def = ca_def_of(c, a->id);
			/* the accumulators are sorted: the first of a reason is its biggest culprit */
			if (a->has_who) {
				r->has_culprit = true;
				r->culprit = a->who;
			}
			snprintf(r->what, sizeof r->what, "%s", a->what);
			snprintf(r->chain, sizeof r->chain, "%s", a->chain);
		}
		r->ns += a->ns;
		/* its largest claims first, in their time order among themselves is not kept: size says more */
		size_t ord[HS_CAUSE_MAX_EVIDENCE];
		for (size_t e = 0; e < a->n_ev; e++)
			ord[e] = e;
		for (size_t x = 0; x < a->n_ev; x++)
			for (size_t y = x + 1; y < a->n_ev; y++)
				if (a->ev_ns[ord[y]] > a->ev_ns[ord[x]]) {
					size_t t = ord[x];
					ord[x] = ord[y];
					ord[y] = t;
				}
		size_t room = HS_CAUSE_MAX_EVIDENCE - r->n_evidence;
		size_t show = a->n_ev < room ? a->n_ev : room;
		bool more = a->claims > show && show > 0;
		if (more && show > 1)
			show--; /* the last line says how many more */
		for (size_t e = 0; e < show; e++)
			snprintf(r->evidence[r->n_evidence++], sizeof r->evidence[0], "%s", a->ev[ord[e]]);
		if (more && r->n_evidence < HS_CAUSE_MAX_EVIDENCE)
			snprintf(r->evidence[r->n_evidence++], sizeof r->evidence[0], "... and %" PRIu64 " more like these",
				 a->claims - show);
		if (!r->what[0] && a->what[0])
			snprintf(r->what, sizeof r->what, "%s", a->what);
	}
	for (size_t k = 0; k < out->n_reasons; k++)
		out->reasons[k].share = cov ? (double)out->reasons[k].ns / (double)cov : 0;
	/* the largest first */
	hs_rpt_order_most(out->reasons, out->n_reasons, sizeof *out->reasons, reason_ns);
}

/* The CPUs a reason's stretches were on. */
static void reason_cpus(const ca_ctx *c, hs_cause_reason *r)
{
	bool seen[64] = {0};
	size_t o = 0;
	unsigned n = 0;
	for (size_t i = 0; i < c->n_cspans; i++)
		if (c->cspans[i].id == r->id && c->cspans[i].cpu >= 0 && c->cspans[i].cpu < 64)
			seen[c->cspans[i].cpu] = true;
	for (int k = 0; k < 64; k++)
		n += seen[k];
	if (!n)
		return;
	o += (size_t)snprintf(r->cpus + o, sizeof r->cpus - o, "CPU%s ", n > 1 ? "s" : "");
	bool first = true;
	for (int k = 0; k < 64 && o < sizeof r->cpus; k++)
		if (seen[k]) {
			o += (size_t)snprintf(r->cpus + o, sizeof r->cpus - o, "%s%d", first ? "" : ", ", k);
			first = false;
		}
}


/* Runs the classifiers over c's stretches. */
static void run_all(ca_ctx *c)
{
	for (size_t i = 0; i < c->n_segs && !c->oom; i++)
		classify(c, &c->segs[i]);
}



static void copy_spans(ca_ctx *c, hs_cause_result *out)
{
	out->spans = calloc(c->n_cspans ? c->n_cspans : 1, sizeof *out->spans);
	if (!out->spans)
		return;
	for (size_t i = 0; i < c->n_cspans; i++) {
		const struct ca_claim_span *s = &c->cspans[i];
		int16_t ri = -1;
		for (size_t k = 0; k < out->n_reasons; k++)
			if (out->reasons[k].id == s->id)
				ri = (int16_t)k;
		out->spans[out->n_spans++] = (hs_cause_span){.t0 = s->t0, .t1 = s->t1, .state = s->st, .reason = ri, .cpu = s->cpu};
	}
	/* the CPUs the thread used or waited for, what ran on them over the covered window */
	bool use[64] = {0};
	for (size_t i = 0; i < c->n_segs; i++)
		if (c->segs[i].cpu >= 0 && c->segs[i].cpu < 64 && (c->segs[i].st == CM_ST_RUN || c->segs[i].st == CM_ST_READY))
			use[c->segs[i].cpu] = true;
	size_t n = 0, capn = 0;
	for (int k = 0; k < 64; k++) {
		if (!use[k])
			continue;
		const ca_run *v;
		size_t nv;
		ca_cpu_runs(c, k, &v, &nv);
		for (size_t i = 0; i < nv; i++) {
			if (v[i].t1 <= c->cov0 || v[i].t0 >= c->cov1)
				continue;
			hs_cause_cpu_span *w = hs_array_grow(out->cpu_spans, sizeof *w, n, &capn, 256);
			if (!w)
				return;
			out->cpu_spans = w;
			hs_cause_cpu_span *d = &out->cpu_spans[n++];
			d->t0 = v[i].t0 > c->cov0 ? v[i].t0 : c->cov0;
			d->t1 = v[i].t1 < c->cov1 ? v[i].t1 : c->cov1;
			d->cpu = (int16_t)k;
			d->tid = v[i].tid;
			d->prio = v[i].prio;
			d->is_target = v[i].tid == c->tid;
			snprintf(d->name, sizeof d->name, "%s", v[i].tid == 0 ? "idle" : cm_str(c->m, v[i].comm));
			out->n_cpu_spans = n;
		}
	}
	/* the thread's wake-ups */
	for (size_t i = 0, capw = 0; i < c->n_segs; i++) {
		const ca_seg *s = &c->segs[i];
		if (!s->after_wake || s->begin_rec == SIZE_MAX)
			continue;
		const cm_rec *r = &c->m->recs[s->begin_rec];
		hs_cause_wake *ws = hs_array_grow(out->wakes, sizeof *ws, out->n_wakes, &capw, 32);
		if (!ws)
			return;
		out->wakes = ws;
		hs_cause_wake *w = &out->wakes[out->n_wakes++];
		w->ts = r->ts;
		w->ctx = r->ctx;
		w->cpu = (int16_t)r->cpu;
		w->waker = r->ctx == CM_CTX_TASK ? r->pid : -1;
		snprintf(w->name, sizeof w->name, "%s", r->ctx == CM_CTX_TASK ? cm_str(c->m, cm_task_find(c->m, r->pid) ? cm_task_find(c->m, r->pid)->comm : 0) : r->ctx == CM_CTX_HARDIRQ ? "interrupt" : "softirq");
	}
}

const hs_cause_reason *hs_cause_top(const hs_cause_result *r)
{
	return r && r->analysed && r->n_reasons ? &r->reasons[0] : NULL;
}

void hs_cause_result_free(hs_cause_result *r)
{
	if (!r)
		return;
	free(r->spans);
	free(r->cpu_spans);
	free(r->wakes);
	r->spans = NULL;
	r->cpu_spans = NULL;
	r->wakes = NULL;
}

/* The analysis proper, on a model a reader filled (cm_finish done). */
hs_status ca_analyse_model(cm_model *m, const hs_cause_input *in, hs_cause_result *out)
{
	if (!m->has_switch) {
		snprintf(out->why, sizeof out->why,
			 "the ring has no scheduler switch records: where the thread's time went cannot be told");
		return HS_OK;
	}
	ca_ctx c = {.m = m, .vocab = in->vocab, .tid = in->tid, .run_all = run_all, .no_cpu_quota = in->no_cpu_quota};
	c.tgid = cm_tgid(m, in->tid);
	/* where the records can be trusted: from the kept records' start, and on a ring that wrapped or lost events
	 * from the latest first record of its CPUs (each CPU's older records are gone) */
	uint64_t from = m->kept_from_ts > m->keep_from ? m->kept_from_ts : m->keep_from;
	if (in->ring_wrapped || m->lost)
		for (unsigned k = 0; k < m->ncpu; k++)
			if (m->cpu_first[k] > from)
				from = m->cpu_first[k];
	c.cov0 = in->w0 > from ? in->w0 : from;
	c.cov1 = in->w1;
	if (m->n && m->recs[m->n - 1].ts < c.cov1)
		c.cov1 = m->recs[m->n - 1].ts > c.cov0 ? m->recs[m->n - 1].ts : c.cov0;
	if (c.cov1 <= c.cov0) {
		snprintf(out->why, sizeof out->why, "the ring's records do not cover the window (they %s)",
			 m->first_ts > in->w1 ? "begin after it" : "end before it");
		return HS_OK;
	}
	if (!cm_task_find(m, in->tid)) {
		snprintf(out->why, sizeof out->why, "the ring has no record of thread %d", (int)in->tid);
		return HS_OK;
	}
	c.rx = ca_rx_new();
	hs_status st = c.rx ? ca_build_cpus(&c) : HS_ENOMEM;
	if (st == HS_OK)
		st = ca_build_segs(&c);
	if (st == HS_OK) {
		out->cov0 = c.cov0;
		out->cov1 = c.cov1;
		run_all(&c);
		summarise(&c, out);
		for (size_t k = 0; k < out->n_reasons; k++)
			reason_cpus(&c, &out->reasons[k]);
		for (size_t i = 0; i < c.n_segs; i++)
			if (c.segs[i].st < 8)
				out->state_ns[c.segs[i].st] += c.segs[i].t1 - c.segs[i].t0;
		copy_spans(&c, out);
		out->analysed = !c.oom;
		out->tgid = c.tgid;
		out->lost = m->lost;
		out->dropped = m->dropped;
		out->unrecorded_switches = c.unrecorded;
		ca_culprit me;
		ca_culprit_task(&c, in->tid, in->w1, &me);
		snprintf(out->comm, sizeof out->comm, "%s", me.name);
		snprintf(out->process, sizeof out->process, "%s", me.process);
		const hs_cause_reason *top = hs_cause_top(out);
		if (top && top->def && top->def->verdict)
			hs_cause_fill(out, top, top->def->verdict, out->clause, sizeof out->clause);
		if (c.oom)
			snprintf(out->why, sizeof out->why, "out of memory while explaining the window");
	}
	ca_free_cpus(&c, m->ncpu);
	ca_rx_free(c.rx);
	ca_free_ctx(&c);
	return st;
}

/* A file by its magic: a trace.dat starts with its own; anything else is read as an .etl, whose reader refuses what
 * is not one (its name's extension is not asked). */
/* A reason that explains the dominant one takes the verdict from it (the vocabulary's outranks and
 * params.outrank_ratio): reasons[k] moves to the front, the spans' indexes follow. */
static void outrank(hs_cause_result *out, const hs_cause_vocab *voc)
{
	if (out->n_reasons < 2)
		return;
	const hs_cause_reason *top = &out->reasons[0];
	for (size_t k = 1; k < out->n_reasons; k++) {
		const hs_cause_reason *a = &out->reasons[k];
		if (!a->def || !a->def->n_outranks || 100.0 * a->share < (double)voc->mention_pct)
			continue;
		double ratio = hs_cause_param_get(a->def, "outrank_ratio", -1);
		bool names = false;
		for (size_t x = 0; x < a->def->n_outranks && !names; x++)
			names = !strcmp(a->def->outranks[x], top->id);
		if (!names || ratio < 0 || (double)a->ns < ratio * (double)top->ns)
			continue;
		hs_cause_reason t = out->reasons[k];
		memmove(&out->reasons[1], &out->reasons[0], k * sizeof out->reasons[0]);
		out->reasons[0] = t;
		for (size_t i = 0; i < out->n_spans; i++) {
			int16_t ri = out->spans[i].reason;
			if (ri == (int16_t)k)
				out->spans[i].reason = 0;
			else if (ri >= 0 && (size_t)ri < k)
				out->spans[i].reason = (int16_t)(ri + 1);
		}
		if (out->reasons[0].def && out->reasons[0].def->verdict)
			hs_cause_fill(out, &out->reasons[0], out->reasons[0].def->verdict, out->clause, sizeof out->clause);
		return;
	}
}

/* What is usual for the thread: the same analysis over the window before (its normal frames), per unit (a frame).
 * The reasons are then ordered by what the window had beyond that, so the verdict names what was different (a
 * loaded machine's usual waits for the CPU do not hide the fork storm that made this frame long). */
static hs_status usual(cm_model *m, const hs_cause_input *in, hs_cause_result *out)
{
	hs_cause_input b = *in;
	b.w1 = in->baseline_end_ns ? in->baseline_end_ns : in->w0;
	b.w0 = in->w0 - in->baseline_ns;
	hs_cause_result *br = calloc(1, sizeof *br);
	if (!br)
		return HS_ENOMEM;
	br->tid = in->tid;
	br->w0 = b.w0;
	br->w1 = b.w1;
	hs_status st = ca_analyse_model(m, &b, br);
	if (st == HS_OK && br->analysed && br->cov1 > br->cov0) {
		/* the units the covered part of the baseline holds */
		double units = in->baseline_units * (double)(br->cov1 - br->cov0) / (double)(b.w1 - b.w0);
		out->has_usual = units > 0;
		for (size_t i = 0; i < out->n_reasons && units > 0; i++)
			for (size_t k = 0; k < br->n_reasons; k++)
				if (br->reasons[k].id == out->reasons[i].id)
					out->reasons[i].usual_ns = (uint64_t)((double)br->reasons[k].ns / units);
		/* by excess, the largest first (ties: by time); the spans name reasons by index, so they follow */
		const char *old_ids[HS_CAUSE_MAX_REASONS];
		for (size_t i = 0; i < out->n_reasons; i++)
			old_ids[i] = out->reasons[i].id;
		for (size_t a = 0; a < out->n_reasons; a++)
			for (size_t z = a + 1; z < out->n_reasons; z++) {
				const hs_cause_reason *x = &out->reasons[a], *y = &out->reasons[z];
				int64_t ex = (int64_t)x->ns - (int64_t)x->usual_ns, ey = (int64_t)y->ns - (int64_t)y->usual_ns;
				if (ey > ex || (ey == ex && y->ns > x->ns)) {
					hs_cause_reason t = out->reasons[a];
					out->reasons[a] = out->reasons[z];
					out->reasons[z] = t;
				}
			}
		for (size_t i = 0; i < out->n_spans; i++) {
			int16_t ri = out->spans[i].reason;
			if (ri < 0 || (size_t)ri >= out->n_reasons)
				continue;
			for (size_t k = 0; k < out->n_reasons; k++)
				if (out->reasons[k].id == old_ids[ri])
					out->spans[i].reason = (int16_t)k;
		}
		const hs_cause_reason *top = hs_cause_top(out);
		if (top && top->def && top->def->verdict)
			hs_cause_fill(out, top, top->def->verdict, out->clause, sizeof out->clause);
	}
	hs_cause_result_free(br);
	free(br);
	return st == HS_ENOMEM ? HS_ENOMEM : HS_OK;
}

static hs_status read_any(cm_model *m, const char *path, bool side, char *why, size_t cap)
{
	return hs_tracedat_sniff(path) ? cm_read_tracedat(m, path, side, why, cap) : cm_read_etl(m, path, side, why, cap);
}

hs_status hs_cause_analyse(const hs_cause_input *in, hs_cause_result *out)
{
	memset(out, 0, sizeof *out);
	out->tid = in->tid;
	out->w0 = in->w0;
	out->w1 = in->w1;
	if (!in->vocab || !in->vocab->present || !in->vocab->n_reasons) {
		snprintf(out->why, sizeof out->why, "no cause vocabulary in the rules (causes.yaml): the time is not explained");
		return HS_OK;
	}
	uint64_t look = in->vocab->lookback_ms * 1000000ull + in->baseline_ns;
	cm_model m;
	cm_init(&m, in->w0 > look ? in->w0 - look : 0, in->w1);
	char why[256] = "";
	hs_status st = read_any(&m, in->ring, false, why, sizeof why);
	if (st != HS_OK) {
		snprintf(out->why, sizeof out->why, "%s", why);
		cm_free(&m);
		return st == HS_ENOMEM ? HS_ENOMEM : HS_OK;
	}
	for (size_t i = 0; i < in->n_side; i++) {
		char w2[256];
		(void)read_any(&m, in->side[i], true, w2, sizeof w2); /* a side file that fails costs names only */
	}
	cm_finish(&m);
	for (size_t i = 0; i < in->n_tgids; i++) {
		cm_task *t = (cm_task *)cm_task_find(&m, in->tgids[i][0]);
		if (t && t->tgid < 0)
			t->tgid = in->tgids[i][1];
	}
	st = ca_analyse_model(&m, in, out);
	if (st == HS_OK && out->analysed && in->baseline_ns && in->baseline_units > 0 && in->w0 > in->baseline_ns)
		st = usual(&m, in, out);
	if (st == HS_OK && out->analysed)
		outrank(out, in->vocab);
	cm_free(&m);
	return st;
}
