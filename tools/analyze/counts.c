/* analyze/counts.c: `analyze counts`: events per (provider, id/opcode), in the fixtures' .counts format. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/event.h"
#include "hindsight/event_counts.h"
#include "hindsight/event_names.h"
#include "hindsight/json.h"

typedef struct {
	char provider[48];
	const char *keyname;
	uint32_t num;
	uint64_t count;
} row;

static void format_row(const hs_event_count *n, row *out)
{
	out->keyname = hs_event_key_counts_id(&n->key, NULL, out->provider, sizeof out->provider);
	out->num = n->key.num;
	out->count = n->count;
}

static int cmp_row(const void *a, const void *b)
{
	const row *x = a, *y = b;
	int c = strcmp(x->provider, y->provider);
	if (c)
		return c;
	c = strcmp(x->keyname, y->keyname);
	if (c)
		return c;
	return x->num < y->num ? -1 : x->num > y->num;
}

/* The .etl's counts into sb; 0 or an exit code (said on stderr). */
static int counts_etl(const analyze_opts *o, hs_etl *etl, hs_strbuf *sb)
{
	analyze_tally t;
	row *rows = NULL;
	size_t n = 0;
	if (!analyze_tally_etl(etl, true, &t))
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
		analyze_json_begin(&j, sb, o->file, NULL);
		hs_json_kuint(&j, "events", hs_event_counts_total(t.counts));
		hs_json_key(&j, "counts");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i < n; i++) {
			hs_json_obj_begin(&j);
			hs_json_kstr(&j, "provider", rows[i].provider);
			hs_json_kstr(&j, "key", rows[i].keyname);
			hs_json_kuint(&j, "value", rows[i].num);
			hs_json_kuint(&j, "count", rows[i].count);
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		analyze_json_problems(&j, hs_etl_problems(etl));
		hs_json_obj_end(&j);
	} else {
		for (size_t i = 0; i < n; i++)
			hs_sb_printf(sb, "%s\t%s=%" PRIu32 "\t%" PRIu64 "\n", rows[i].provider, rows[i].keyname, rows[i].num,
				     rows[i].count);
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
	analyze_trace t;
	int rc = analyze_trace_open(o->file, &t);
	if (rc)
		return rc;
	hs_strbuf sb = {0};
	rc = t.td ? analyze_counts_tracedat(o, t.td, &sb) : counts_etl(o, t.etl, &sb);
	return analyze_trace_finish(&t, &sb, rc);
}
