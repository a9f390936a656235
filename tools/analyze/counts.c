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
	hs_event_counts *counts;
	const hs_etl *etl;
} counts_ctx;

static int on_record(const hs_etl_record *r, void *vctx)
{
	counts_ctx *ctx = vctx;
	analyze_progress(ctx->etl, r);
	hs_event e;
	hs_event_from_etl(r, &e);
	/* The counts format names events by id: TraceLogging names do not split them. */
	hs_event_key k = e.key;
	k.name_hash = 0;
	hs_event_counts_add(ctx->counts, &k, NULL);
	return 0;
}

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

int analyze_counts(const analyze_opts *o)
{
	if (hs_tracedat_sniff(o->file))
		return analyze_counts_tracedat(o);
	hs_etl *etl = NULL;
	int rc = analyze_open_etl(o->file, &etl);
	if (rc)
		return rc;
	counts_ctx ctx = {.etl = etl};
	row *rows = NULL;
	size_t n = 0;
	if (hs_event_counts_new(&ctx.counts) != HS_OK)
		goto oom;
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_record, &ctx);
	analyze_progress_done();
	n = hs_event_counts_len(ctx.counts);
	rows = calloc(n + 1, sizeof(*rows));
	if (hs_event_counts_failed(ctx.counts) || !rows)
		goto oom;
	for (size_t i = 0; i < n; i++)
		format_row(hs_event_counts_at(ctx.counts, i), &rows[i]);
	qsort(rows, n, sizeof(*rows), cmp_row);
	if (o->json) {
		hs_strbuf sb = {0};
		hs_json j;
		analyze_json_begin(&j, &sb, o->file, NULL);
		hs_json_kuint(&j, "events", hs_event_counts_total(ctx.counts));
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
		hs_sb_write_free(&sb, stdout);
	} else {
		for (size_t i = 0; i < n; i++)
			printf("%s\t%s=%" PRIu32 "\t%" PRIu64 "\n", rows[i].provider, rows[i].keyname, rows[i].num,
			       rows[i].count);
		printf("TOTAL\t%" PRIu64 "\n", hs_event_counts_total(ctx.counts));
	}
	rc = analyze_report_problems(hs_etl_problems(etl));
	free(rows);
	hs_event_counts_free(ctx.counts);
	hs_etl_close(etl);
	return rc;
oom:
	analyze_progress_done();
	fprintf(stderr, "analyze: out of memory counting events\n");
	free(rows);
	hs_event_counts_free(ctx.counts);
	hs_etl_close(etl);
	return HS_EXIT_USAGE;
}
