/* analyze/counts.c: `analyze counts`: events per (provider, id/opcode), in the fixtures' .counts format. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "util/json.h"

/* The identity a record is counted under. */
typedef struct {
	uint8_t cls; /* CLS_* */
	uint8_t group;
	hs_guid guid;
	uint32_t num;
} count_key;

enum { CLS_KERNEL, CLS_ID, CLS_OPCODE, CLS_WPP };

typedef struct {
	count_key key;
	uint64_t count;
	bool used;
} slot;

typedef struct {
	slot *slots;
	size_t cap, used;
	uint64_t total;
	bool oom;
} table;

static uint64_t hash_key(const count_key *k)
{
	/* FNV-1a over the fields (not the struct: it has padding). */
	uint64_t h = 1469598103934665603ull;
	const uint8_t bytes[] = {k->cls, k->group};
#define MIX(ptr, n)                                   \
	for (size_t i_ = 0; i_ < (n); i_++) {         \
		h ^= ((const uint8_t *)(ptr))[i_];    \
		h *= 1099511628211ull;                \
	}
	MIX(bytes, 2);
	MIX(&k->guid.data1, 4);
	MIX(&k->guid.data2, 2);
	MIX(&k->guid.data3, 2);
	MIX(k->guid.data4, 8);
	MIX(&k->num, 4);
#undef MIX
	return h;
}

static bool key_eq(const count_key *a, const count_key *b)
{
	return a->cls == b->cls && a->group == b->group && a->num == b->num &&
	       memcmp(&a->guid, &b->guid, sizeof a->guid) == 0;
}

static bool grow(table *t)
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

static void add(table *t, const count_key *k)
{
	t->total++;
	if ((t->used + 1) * 2 > t->cap && !grow(t)) {
		t->oom = true;
		return;
	}
	size_t j = hash_key(k) & (t->cap - 1);
	while (t->slots[j].used && !key_eq(&t->slots[j].key, k))
		j = (j + 1) & (t->cap - 1);
	if (!t->slots[j].used) {
		t->slots[j].used = true;
		t->slots[j].key = *k;
		t->used++;
	}
	t->slots[j].count++;
}

static int on_record(const hs_etl_record *r, void *ctx)
{
	count_key k = {0};
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
	add(ctx, &k);
	return 0;
}

typedef struct {
	char provider[48];
	const char *keyname;
	uint32_t num;
	uint64_t count;
} row;

static void format_row(const slot *s, row *out)
{
	const count_key *k = &s->key;
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
	hs_etl *etl = NULL;
	int rc = analyze_open_etl(o->file, &etl);
	if (rc)
		return rc;
	table t = {0};
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_record, &t);
	row *rows = calloc(t.used + 1, sizeof(*rows));
	if (t.oom || !rows) {
		fprintf(stderr, "analyze: out of memory counting events\n");
		free(rows);
		free(t.slots);
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
	free(t.slots);
	hs_etl_close(etl);
	return rc;
}
