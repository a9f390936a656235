/* analyze/counts.c: `analyze counts`: events per (provider, id/opcode) of an .etl, per (system, event) of a trace.dat, in the fixtures' .counts format. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/event.h"
#include "hindsight/event_counts.h"
#include "hindsight/event_names.h"
#include "hindsight/json.h"

/* One counts line: PROVIDER<TAB>KEY=VALUE<TAB>COUNT. */
typedef struct {
	char provider[48];  /* .etl: "kernel:0x03", a GUID, "wpp" */
	const char *system; /* trace.dat: the ftrace system (PROVIDER), whole; NULL for .etl */
	const char *keyname;
	const char *name;   /* trace.dat: the event name (VALUE); NULL for .etl, whose VALUE is num */
	uint32_t num;
	uint64_t count;
} row;

static void format_row(const hs_event_count *n, row *out)
{
	out->keyname = hs_event_key_counts_id(&n->key, n->provider, out->provider, sizeof out->provider);
	if (n->key.cls == HS_EVCLS_FTRACE) {
		out->system = n->provider ? n->provider : "?";
		out->name = n->name ? n->name : "?";
	}
	out->num = n->key.num;
	out->count = n->count;
}

static const char *provider_of(const row *r)
{
	return r->system ? r->system : r->provider;
}

static int cmp_row(const void *a, const void *b)
{
	const row *x = a, *y = b;
	int c = strcmp(provider_of(x), provider_of(y));
	if (c)
		return c;
	c = strcmp(x->keyname, y->keyname);
	if (!c && x->name && y->name)
		c = strcmp(x->name, y->name);
	/* trace.dat rows whose names tie (a damaged file) have always come in event id order. */
	return c ? c : x->num < y->num ? -1 : x->num > y->num;
}

/* The counts into sb (analyze_cmd_fn). */
static int counts(const analyze_cmd *cmd, const analyze_trace *tr, hs_strbuf *sb)
{
	const analyze_opts *o = cmd->o;
	analyze_tally t;
	row *rows = NULL;
	size_t n = 0;
	if (!analyze_tally_trace(tr, true, &t))
		goto oom;
	n = hs_event_counts_len(t.counts);
	rows = calloc(n + 1, sizeof(*rows));
	if (!rows)
		goto oom;
	for (size_t i = 0; i < n; i++)
		format_row(hs_event_counts_at(t.counts, i), &rows[i]);
	qsort(rows, n, sizeof(*rows), cmp_row);
	if (o->json) {
		hs_json j;
		analyze_json_begin(&j, sb, o->file, tr->td ? analyze_tracedat_format : NULL);
		hs_json_kuint(&j, "events", hs_event_counts_total(t.counts));
		hs_json_key(&j, "counts");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i < n; i++) {
			const row *r = &rows[i];
			hs_json_obj_begin(&j);
			/* trace.dat's rows have always been named by system and event. */
			hs_json_kstr(&j, r->name ? "system" : "provider", provider_of(r));
			if (r->name) {
				hs_json_kstr(&j, "event", r->name);
			} else {
				hs_json_kstr(&j, "key", r->keyname);
				hs_json_kuint(&j, "value", r->num);
			}
			hs_json_kuint(&j, "count", r->count);
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		analyze_json_trace_problems(&j, tr);
		hs_json_obj_end(&j);
	} else {
		for (size_t i = 0; i < n; i++) {
			const row *r = &rows[i];
			if (r->name)
				hs_sb_printf(sb, "%s\t%s=%s\t%" PRIu64 "\n", provider_of(r), r->keyname, r->name, r->count);
			else
				hs_sb_printf(sb, "%s\t%s=%" PRIu32 "\t%" PRIu64 "\n", provider_of(r), r->keyname, r->num,
					     r->count);
		}
		hs_sb_printf(sb, "TOTAL\t%" PRIu64 "\n", hs_event_counts_total(t.counts));
	}
	free(rows);
	analyze_tally_free(&t);
	return 0;
oom:
	fprintf(stderr, "analyze: out of memory counting events\n");
	free(rows);
	analyze_tally_free(&t);
	return HS_EXIT_USAGE;
}

int analyze_counts(const analyze_opts *o)
{
	return analyze_trace_run(&(analyze_cmd){.o = o}, counts);
}
