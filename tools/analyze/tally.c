/* analyze/tally.c: counts records per identity (kernel group/opcode, provider GUID and id/opcode, WPP message). */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

static uint64_t hash_key(const tally_key *k)
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
	MIX(&k->name_hash, 4);
#undef MIX
	return h;
}

static bool key_eq(const tally_key *a, const tally_key *b)
{
	return a->cls == b->cls && a->group == b->group && a->num == b->num && a->name_hash == b->name_hash &&
	       memcmp(&a->guid, &b->guid, sizeof a->guid) == 0;
}

static bool grow(tally *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256;
	tally_slot *ns = calloc(ncap, sizeof(*ns));
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

tally_slot *tally_add(tally *t, const tally_key *k)
{
	t->total++;
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
	}
	t->slots[j].count++;
	return &t->slots[j];
}

void tally_key_of(const hs_etl_record *r, tally_key *out)
{
	tally_key k = {0};
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
	*out = k;
}


void tally_free(tally *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->used = 0;
}
