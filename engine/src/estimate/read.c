/* estimate/read.c: walks a trace (.dat or .etl) and tallies events and stored bytes per (provider, event) and per CPU. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/estimate_int.h"
#include "etl/etl_format.h"
#include "hindsight/etl.h"
#include "hindsight/event.h"
#include "hindsight/tracedat.h"
#include "util/compat.h"

/* ---- the tally: open addressing over a record's identity ---- */

enum { CLS_DAT, CLS_KERNEL, CLS_ID, CLS_OPCODE, CLS_WPP };

typedef struct {
	uint8_t cls, group;
	hs_guid guid;
	uint32_t num;
	uint32_t name_hash; /* TraceLogging event name (0 otherwise) */
} kind_key;

typedef struct {
	kind_key key;
	bool used;
	hs_estimate_kind kind;
} slot;

typedef struct {
	slot *slots;
	size_t cap, used;
	hs_estimate_trace *t;
	const hs_estimate_read_opts *opts;
	const hs_etl *etl;
	bool oom;
} tally;

static uint64_t hash_key(const kind_key *k)
{
	/* FNV-1a over the fields (the struct has padding). */
	uint64_t h = 1469598103934665603ull;
	uint8_t b[2 + 16 + 8];
	b[0] = k->cls;
	b[1] = k->group;
	memcpy(b + 2, &k->guid.data1, 4);
	memcpy(b + 6, &k->guid.data2, 2);
	memcpy(b + 8, &k->guid.data3, 2);
	memcpy(b + 10, k->guid.data4, 8);
	memcpy(b + 18, &k->num, 4);
	memcpy(b + 22, &k->name_hash, 4);
	for (size_t i = 0; i < sizeof b; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}

static bool key_eq(const kind_key *a, const kind_key *b)
{
	return a->cls == b->cls && a->group == b->group && a->num == b->num && a->name_hash == b->name_hash &&
	       memcmp(&a->guid, &b->guid, sizeof a->guid) == 0;
}

static bool grow(tally *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256;
	slot *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return false;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].used)
			continue;
		size_t j = hash_key(&t->slots[i].key) & (ncap - 1);
		while (ns[j].used)
			j = (j + 1) & (ncap - 1);
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return true;
}

/* The slot for k; *fresh says it was just made (the caller names it). */
static slot *find_or_add(tally *t, const kind_key *k, bool *fresh)
{
	*fresh = false;
	if ((t->used + 1) * 2 > t->cap && !grow(t)) {
		t->oom = true;
		return NULL;
	}
	size_t j = hash_key(k) & (t->cap - 1);
	while (t->slots[j].used && !key_eq(&t->slots[j].key, k))
		j = (j + 1) & (t->cap - 1);
	if (!t->slots[j].used) {
		t->slots[j].used = true;
		t->slots[j].key = *k;
		t->used++;
		*fresh = true;
	}
	return &t->slots[j];
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

void hs_estimate_problem(hs_estimate_trace *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char **p = realloc(t->problems, (t->n_problems + 1) * sizeof(*p));
	if (!p)
		return;
	t->problems = p;
	if ((p[t->n_problems] = strdup(buf)))
		t->n_problems++;
}

/* ---- trace.dat ---- */

static const hs_provider *find_system(const hs_ruleset *rs, const char *system)
{
	for (size_t i = 0; rs && i < rs->n_providers; i++) {
		const hs_provider *p = &rs->providers[i];
		if (p->kind == HS_PKIND_FTRACE && p->system && strcmp(p->system, system) == 0)
			return p;
	}
	return NULL;
}

static int on_dat(const hs_tracedat_record *r, void *vctx)
{
	tally *t = vctx;
	hs_estimate_trace *tr = t->t;
	kind_key k = {.cls = CLS_DAT, .num = (uint32_t)r->id & 0xFFFFu};
	bool fresh;
	slot *s = find_or_add(t, &k, &fresh);
	if (!s)
		return 1;
	if (fresh) {
		const hs_provider *p = find_system(t->opts->rules, r->system);
		snprintf(s->kind.provider, sizeof s->kind.provider, "%s", p ? p->name : r->system);
		snprintf(s->kind.event, sizeof s->kind.event, "%s", r->name);
	}
	uint64_t bytes = r->record_size;
	if (r->missed_events > 0)
		tr->dat_missed_events += (uint64_t)r->missed_events;
	else if (r->missed_events < 0)
		tr->dat_missed_unknown++;
	s->kind.events++;
	s->kind.bytes += bytes;
	tr->events++;
	tr->bytes += bytes;
	count_span(tr, r->ts);
	if (!count_cpu(tr, r->cpu >= 0 ? (unsigned)r->cpu : 0, bytes, true, r->ts)) {
		t->oom = true;
		return 1;
	}
	return 0;
}

static hs_status read_dat(const char *path, tally *t)
{
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open_ex(path, t->opts->probe, &td);
	if (td)
		for (size_t i = 0; i < hs_tracedat_problem_count(td); i++)
			hs_estimate_problem(t->t, "%s", hs_tracedat_problem_at(td, i));
	if (st != HS_OK) {
		hs_tracedat_close(td);
		return st;
	}
	size_t seen = hs_tracedat_problem_count(td);
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	t->t->file_bytes = info->file_size;
	st = hs_tracedat_foreach(td, on_dat, t);
	for (size_t i = seen; i < hs_tracedat_problem_count(td); i++)
		hs_estimate_problem(t->t, "%s", hs_tracedat_problem_at(td, i));
	/* CPUs the file has data slots for, even the ones without events. */
	if (info->cpus && info->cpus <= HS_ESTIMATE_MAX_CPUS && !ensure_cpus(t->t, info->cpus))
		t->oom = true;
	hs_tracedat_close(td);
	return st == HS_OK && t->oom ? HS_ENOMEM : st;
}

/* ---- .etl ---- */

static uint32_t fnv32(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h ? h : 1;
}

static const hs_provider *find_guid(const hs_ruleset *rs, const hs_guid *g)
{
	for (size_t i = 0; rs && i < rs->n_providers; i++) {
		const hs_provider *p = &rs->providers[i];
		if (p->has_guid && memcmp(&p->guid, g, sizeof *g) == 0)
			return p;
	}
	return NULL;
}

/* The names `analyze summary` shows for the same record. */
static void name_etl(tally *t, const kind_key *k, const hs_etl_tl_info *tl, hs_estimate_kind *out)
{
	char g[37];
	switch (k->cls) {
	case CLS_KERNEL: {
		const char *gn = t->opts->kernel_group_name ? t->opts->kernel_group_name(k->group) : NULL;
		if (gn)
			snprintf(out->provider, sizeof out->provider, "kernel %s (0x%02x)", gn, k->group);
		else
			snprintf(out->provider, sizeof out->provider, "kernel group 0x%02x", k->group);
		snprintf(out->event, sizeof out->event, "opcode %u", k->num);
		return;
	}
	case CLS_WPP:
		snprintf(out->provider, sizeof out->provider, "WPP");
		snprintf(out->event, sizeof out->event, "message %u", k->num);
		return;
	default:
		break;
	}
	hs_guid_format_lower(&k->guid, g);
	const hs_provider *p = find_guid(t->opts->rules, &k->guid);
	if (p)
		snprintf(out->provider, sizeof out->provider, "%s", p->name);
	else if (tl && tl->provider_name)
		snprintf(out->provider, sizeof out->provider, "%s {%s}", tl->provider_name, g);
	else
		snprintf(out->provider, sizeof out->provider, "{%s}", g);
	const hs_cat_event *ce = p && k->cls == CLS_ID ? hs_provider_find_event(p, (int)k->num, NULL) : NULL;
	if (tl && tl->event_name)
		snprintf(out->event, sizeof out->event, "%s (id %u)", tl->event_name, k->num);
	else if (ce && ce->name)
		snprintf(out->event, sizeof out->event, "%s (id %u)", ce->name, k->num);
	else
		snprintf(out->event, sizeof out->event, "%s %u", k->cls == CLS_ID ? "id" : "opcode", k->num);
}

static int on_etl(const hs_etl_record *r, void *vctx)
{
	tally *t = vctx;
	hs_estimate_trace *tr = t->t;
	kind_key k = {0};
	switch (r->kind) {
	case HS_ETL_SYSTEM:
	case HS_ETL_COMPACT:
	case HS_ETL_PERFINFO:
		k.cls = CLS_KERNEL;
		k.group = r->group;
		k.num = r->opcode;
		break;
	case HS_ETL_EVENT:
		k.cls = CLS_ID;
		k.guid = r->guid;
		k.num = r->id;
		break;
	case HS_ETL_FULL:
	case HS_ETL_INSTANCE:
		k.cls = CLS_OPCODE;
		k.guid = r->guid;
		k.num = r->opcode;
		break;
	case HS_ETL_MESSAGE:
		k.cls = CLS_WPP;
		k.num = r->id;
		break;
	}
	hs_etl_tl_info tl;
	bool is_tl = r->kind == HS_ETL_EVENT && hs_etl_tl_decode(r, &tl) && tl.event_name;
	if (is_tl)
		k.name_hash = fnv32(tl.event_name);
	bool fresh;
	slot *s = find_or_add(t, &k, &fresh);
	if (!s)
		return 1;
	if (fresh)
		name_etl(t, &k, is_tl ? &tl : NULL, &s->kind);
	uint64_t bytes = r->raw_len;
	s->kind.events++;
	s->kind.bytes += bytes;
	tr->events++;
	tr->bytes += bytes;
	/* The logfile header record carries the session's start, not an event's time. */
	bool header = r->kind == HS_ETL_SYSTEM && r->group == HS_ETL_GROUP_HEADER && r->opcode == 0;
	bool timed = r->filetime && !header;
	uint64_t ns = r->filetime * 100u;
	if (timed)
		count_span(tr, ns);
	if (!count_cpu(tr, r->cpu, bytes, timed, ns)) {
		t->oom = true;
		return 1;
	}
	return 0;
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
	for (size_t i = 0; i < hs_etl_problem_count(etl); i++) {
		const hs_etl_problem *p = hs_etl_problem_at(etl, i);
		hs_estimate_problem(t->t, "at file offset 0x%llx: %s", (unsigned long long)p->offset, p->message);
	}
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
	size_t n = t->used;
	sort_row *rows = calloc(n + 1, sizeof(*rows));
	if (!rows)
		return HS_ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].used)
			rows[m++].k = t->slots[i].kind;
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
	FILE *f = hs_fopen(path, "rb");
	if (!f) {
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
	free(t.slots);
	if (st == HS_OK)
		st = fs;
	if (st != HS_OK && !tr->events && !tr->n_problems) {
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
	for (size_t i = 0; i < t->n_problems; i++)
		free(t->problems[i]);
	free(t->problems);
	free(t->kinds);
	free(t->cpu);
	free(t);
}
