/* analyze/counts.c: `analyze counts`: events per (provider, id/opcode), in the fixtures' .counts format. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/json.h"

typedef struct {
	tally t;
	const hs_etl *etl;
} counts_ctx;

static int on_record(const hs_etl_record *r, void *vctx)
{
	counts_ctx *ctx = vctx;
	analyze_progress(ctx->etl, r);
	tally_key k;
	tally_key_of(r, &k);
	tally_add(&ctx->t, &k);
	return 0;
}

typedef struct {
	char provider[48];
	const char *keyname;
	uint32_t num;
	uint64_t count;
} row;

static void format_row(const tally_slot *s, row *out)
{
	const tally_key *k = &s->key;
	switch (k->cls) {
	case CLS_KERNEL:
		snprintf(out->provider, sizeof out->provider, "kernel:0x%02x", k->group);
		out->keyname = "opcode";
		break;
	case CLS_WPP:
		snprintf(out->provider, sizeof out->provider, "wpp");
		out->keyname = "msg";
		break;
	default:
		hs_guid_format_lower(&k->guid, out->provider);
		out->keyname = k->cls == CLS_ID ? "id" : "opcode";
	}
	out->num = k->num;
	out->count = s->count;
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
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_record, &ctx);
	tally t = ctx.t;
	analyze_progress_done();
	row *rows = calloc(t.used + 1, sizeof(*rows));
	if (t.oom || !rows) {
		fprintf(stderr, "analyze: out of memory counting events\n");
		free(rows);
		tally_free(&t);
		hs_etl_close(etl);
		return ANALYZE_EXIT_USAGE;
	}
	size_t n = 0;
	for (size_t i = 0; i < t.cap; i++)
		if (t.slots[i].used)
			format_row(&t.slots[i], &rows[n++]);
	qsort(rows, n, sizeof(*rows), cmp_row);
	if (o->json) {
		hs_strbuf sb = {0};
		hs_json j;
		hs_json_init(&j, &sb);
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "file", o->file);
		hs_json_kuint(&j, "events", t.total);
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
		analyze_json_problems(&j, etl);
		hs_json_obj_end(&j);
		hs_sb_write_free(&sb, stdout);
	} else {
		for (size_t i = 0; i < n; i++)
			printf("%s\t%s=%" PRIu32 "\t%" PRIu64 "\n", rows[i].provider, rows[i].keyname, rows[i].num,
			       rows[i].count);
		printf("TOTAL\t%" PRIu64 "\n", t.total);
	}
	rc = analyze_report_problems(etl);
	free(rows);
	tally_free(&t);
	hs_etl_close(etl);
	return rc;
}
