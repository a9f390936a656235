/* estimate/read.c: walks a trace (.dat or .etl) and tallies events and stored bytes per (provider, event) and per CPU. */
#include <stdlib.h>
#include <string.h>

#include "estimate/estimate_int.h"
#include "hindsight/etl.h"
#include "hindsight/event.h"
#include "hindsight/event_counts.h"
#include "hindsight/event_names.h"
#include "hindsight/tracedat.h"
#include "util/compat.h"

/* One walk: events and bytes per identity in the library's counting table, named at the end. */
typedef struct {
	hs_event_counts *counts;
	hs_estimate_trace *t;
	const hs_estimate_read_opts *opts;
	const hs_etl *etl;
	bool oom;
} tally;

/* Counts one record of e with its stored size; NULL on OOM (which stops the walk). */
static hs_event_count *count_kind(tally *t, const hs_event *e, uint64_t bytes)
{
	hs_event_count *n = hs_event_counts_add(t->counts, &e->key, e);
	if (!n) {
		t->oom = true;
		return NULL;
	}
	n->bytes += bytes;
	return n;
}

/* Grows the per-CPU table to n entries (new ones zero). */
static bool ensure_cpus(hs_estimate_trace *t, unsigned n)
{
	if (n <= t->n_cpu)
		return true;
	hs_estimate_cpu *c = realloc(t->cpu, n * sizeof(*c));
	if (!c)
		return false;
	memset(c + t->n_cpu, 0, (n - t->n_cpu) * sizeof(*c));
	t->cpu = c;
	t->n_cpu = n;
	return true;
}

static bool count_cpu(hs_estimate_trace *t, unsigned cpu, uint64_t bytes, bool timed, uint64_t ns)
{
	if (cpu >= HS_ESTIMATE_MAX_CPUS || !ensure_cpus(t, cpu + 1))
		return cpu >= HS_ESTIMATE_MAX_CPUS; /* an absurd CPU number is not counted per CPU */
	hs_estimate_cpu *c = &t->cpu[cpu];
	bool first = c->events == 0;
	c->events++;
	c->bytes += bytes;
	if (timed) {
		if (first || ns < c->first_ns)
			c->first_ns = ns;
		if (first || ns > c->last_ns)
			c->last_ns = ns;
	}
	return true;
}

static void count_span(hs_estimate_trace *t, uint64_t ns)
{
	if (!t->has_span || ns < t->first_ns)
		t->first_ns = ns;
	if (!t->has_span || ns > t->last_ns)
		t->last_ns = ns;
	t->has_span = true;
}

/* Copies a reader's problem into the trace (dropped silently on OOM). */
static void copy_problem(hs_estimate_trace *t, const hs_problem *p)
{
	if (p)
		hs_problems_push(&t->problems, p);
}

/* One record of either format: its kind, the totals, the span (timed: ns is an event's time) and its CPU's share.
 * 1 stops the walk (out of memory), as the readers' callbacks return. */
static int count_record(tally *t, const hs_event *e, uint64_t bytes, unsigned cpu, bool timed, uint64_t ns)
{
	hs_estimate_trace *tr = t->t;
	if (!count_kind(t, e, bytes))
		return 1;
	tr->events++;
	tr->bytes += bytes;
	if (timed)
		count_span(tr, ns);
	if (!count_cpu(tr, cpu, bytes, timed, ns)) {
		t->oom = true;
		return 1;
	}
	return 0;
}

/* ---- trace.dat ---- */

static int on_dat(const hs_tracedat_record *r, void *vctx)
{
	tally *t = vctx;
	hs_event e;
	hs_event_from_tracedat(r, &e);
	if (count_record(t, &e, r->record_size, r->cpu >= 0 ? (unsigned)r->cpu : 0, true, r->ts))
		return 1;
	if (r->missed_events > 0)
		t->t->dat_missed_events += (uint64_t)r->missed_events;
	else if (r->missed_events < 0)
		t->t->dat_missed_unknown++;
	return 0;
}

static hs_status read_dat(const char *path, tally *t)
{
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open_ex(path, t->opts->probe, &td);
	if (td)
		for (size_t i = 0; i < hs_tracedat_problem_count(td); i++)
			copy_problem(t->t, hs_tracedat_problem_at(td, i));
	if (st != HS_OK) {
		hs_tracedat_close(td);
		return st;
	}
	size_t seen = hs_tracedat_problem_count(td);
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	t->t->file_bytes = info->file_size;
	st = hs_tracedat_foreach(td, on_dat, t);
	for (size_t i = seen; i < hs_tracedat_problem_count(td); i++)
		copy_problem(t->t, hs_tracedat_problem_at(td, i));
	/* CPUs the file has data slots for, even the ones without events. */
	if (info->cpus && info->cpus <= HS_ESTIMATE_MAX_CPUS && !ensure_cpus(t->t, info->cpus))
		t->oom = true;
	hs_tracedat_close(td);
	return st == HS_OK && t->oom ? HS_ENOMEM : st;
}

/* ---- .etl ---- */

static int on_etl(const hs_etl_record *r, void *vctx)
{
	hs_event e;
	hs_event_from_etl(r, &e);
	/* The logfile header record carries the session's start, not an event's time. */
	return count_record(vctx, &e, r->raw_len, r->cpu, r->filetime && !e.session_header, r->filetime * 100u);
}

static hs_status read_etl(const char *path, tally *t)
{
	hs_etl *etl = NULL;
	hs_status st = hs_etl_open(path, &etl);
	if (st != HS_OK)
		return st;
	t->etl = etl;
	const hs_etl_header *h = hs_etl_get_header(etl);
	t->t->file_bytes = hs_etl_file_size(etl);
	t->t->etl_events_lost = h->events_lost;
	t->t->etl_buffers_lost = h->buffers_lost;
	st = hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_etl, t);
	for (size_t i = 0; i < hs_etl_problem_count(etl); i++)
		copy_problem(t->t, hs_etl_problem_at(etl, i));
	/* Processors without records still count for the per-CPU view. */
	if (h->cpus && h->cpus <= HS_ESTIMATE_MAX_CPUS && !ensure_cpus(t->t, h->cpus))
		t->oom = true;
	hs_etl_close(etl);
	return st == HS_OK && t->oom ? HS_ENOMEM : st;
}

/* ---- the result ---- */

typedef struct {
	hs_estimate_kind k;
	uint64_t provider_bytes;
} sort_row;

static int cmp_row(const void *a, const void *b)
{
	const sort_row *x = a, *y = b;
	if (x->provider_bytes != y->provider_bytes)
		return x->provider_bytes > y->provider_bytes ? -1 : 1;
	int c = strcmp(x->k.provider, y->k.provider);
	if (c)
		return c;
	if (x->k.bytes != y->k.bytes)
		return x->k.bytes > y->k.bytes ? -1 : 1;
	if (x->k.events != y->k.events)
		return x->k.events > y->k.events ? -1 : 1;
	return strcmp(x->k.event, y->k.event);
}

static hs_status finish(tally *t)
{
	size_t m = hs_event_counts_len(t->counts);
	sort_row *rows = calloc(m + 1, sizeof(*rows));
	if (!rows)
		return HS_ENOMEM;
	/* The names `analyze summary` shows for the same events. */
	hs_event_names names = {t->opts->rules};
	for (size_t i = 0; i < m; i++) {
		const hs_event_count *n = hs_event_counts_at(t->counts, i);
		hs_event_label lab;
		hs_event_names_label(&names, &n->key, n->provider, n->name, &lab);
		hs_estimate_kind *k = &rows[i].k;
		/* Cut to the report's columns (a label may be longer). */
		snprintf(k->provider, sizeof k->provider, "%.*s", (int)sizeof k->provider - 1, lab.provider);
		snprintf(k->event, sizeof k->event, "%.*s", (int)sizeof k->event - 1, lab.event);
		k->events = n->count;
		k->bytes = n->bytes;
	}
	/* A provider's total over its events (names repeat across identities). */
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < m; j++)
			if (strcmp(rows[i].k.provider, rows[j].k.provider) == 0)
				rows[i].provider_bytes += rows[j].k.bytes;
	qsort(rows, m, sizeof(*rows), cmp_row);
	hs_estimate_kind *kinds = calloc(m + 1, sizeof(*kinds));
	if (!kinds) {
		free(rows);
		return HS_ENOMEM;
	}
	for (size_t i = 0; i < m; i++)
		kinds[i] = rows[i].k;
	free(rows);
	t->t->kinds = kinds;
	t->t->n_kinds = m;
	return HS_OK;
}

hs_status hs_estimate_read(const char *path, const hs_estimate_read_opts *opts, hs_estimate_trace **out)
{
	static const hs_estimate_read_opts none = {0};
	*out = NULL;
	hs_estimate_trace *tr = calloc(1, sizeof(*tr));
	if (!tr)
		return HS_ENOMEM;
	tally t = {.t = tr, .opts = opts ? opts : &none};
	hs_status st;
	if (hs_event_counts_new(&t.counts) != HS_OK) {
		free(tr);
		return HS_ENOMEM;
	}
	FILE *f = hs_fopen(path, "rb");
	if (!f) {
		hs_event_counts_free(t.counts);
		free(tr);
		return HS_ENOENT;
	}
	fclose(f);
	if (hs_tracedat_sniff(path)) {
		tr->format = HS_ESTIMATE_TRACEDAT;
		st = read_dat(path, &t);
	} else {
		tr->format = HS_ESTIMATE_ETL;
		st = read_etl(path, &t);
	}
	hs_status fs = t.oom ? HS_ENOMEM : finish(&t);
	hs_event_counts_free(t.counts);
	if (st == HS_OK)
		st = fs;
	if (st != HS_OK && !tr->events && !hs_problems_count(&tr->problems)) {
		hs_estimate_trace_free(tr);
		return st;
	}
	*out = tr;
	return st;
}

void hs_estimate_trace_free(hs_estimate_trace *t)
{
	if (!t)
		return;
	hs_problems_free(&t->problems);
	free(t->kinds);
	free(t->cpu);
	free(t);
}
