/* event/counts.c: the counting table: a hash map from event key to an entry in an array kept in first-seen order. */
#include "hindsight/event_counts.h"

#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/hmap.h"
#include "util/vec.h"

struct hs_event_counts {
	hs_hmap index;   /* key bytes -> entry index */
	hs_vec entries;  /* hs_event_count, first-seen order */
	hs_arena names;  /* the entries' name copies */
	uint64_t total;
	bool failed;
};

hs_status hs_event_counts_new(hs_event_counts **out)
{
	hs_event_counts *c = calloc(1, sizeof(*c));
	*out = c;
	if (!c)
		return HS_ENOMEM;
	c->entries = (hs_vec)HS_VEC_INIT(sizeof(hs_event_count));
	return HS_OK;
}

void hs_event_counts_free(hs_event_counts *c)
{
	if (!c)
		return;
	hs_hmap_free(&c->index);
	hs_vec_free(&c->entries);
	hs_arena_free(&c->names);
	free(c);
}

/* A copy in the table's arena; false when s was there and could not be copied. */
static bool keep_name(hs_event_counts *c, const char *s, const char **out)
{
	*out = s ? hs_arena_strdup(&c->names, s) : NULL;
	return !s || *out;
}

hs_event_count *hs_event_counts_add(hs_event_counts *c, const hs_event_key *k, const hs_event *e)
{
	c->total++;
	bool added;
	uint64_t *idx = hs_hmap_put_bytes(&c->index, k, sizeof *k, &added);
	if (!idx)
		goto fail;
	if (added) {
		/* The map entry exists from here on: until the array has its entry it
		 * points nowhere, so a key whose entry could not be made stays uncounted. */
		*idx = UINT64_MAX;
		hs_event_count *n = hs_vec_push(&c->entries);
		if (!n)
			goto fail;
		*idx = c->entries.len - 1;
		n->key = *k;
		if (e && (!keep_name(c, e->provider, &n->provider) || !keep_name(c, e->name, &n->name)))
			goto fail;
	}
	if (*idx == UINT64_MAX)
		goto fail; /* an earlier add of this key ran out of memory */
	hs_event_count *n = hs_vec_at(&c->entries, (size_t)*idx);
	n->count++;
	return n;
fail:
	c->failed = true;
	return NULL;
}

void hs_event_count_time(hs_event_count *n, uint64_t t)
{
	if (!n->timed || t < n->first)
		n->first = t;
	if (!n->timed || t > n->last)
		n->last = t;
	n->timed = true;
}

size_t hs_event_counts_len(const hs_event_counts *c)
{
	return c->entries.len;
}

hs_event_count *hs_event_counts_at(const hs_event_counts *c, size_t i)
{
	return i < c->entries.len ? hs_vec_at(&c->entries, i) : NULL;
}

hs_event_count *hs_event_counts_find(const hs_event_counts *c, const hs_event_key *k)
{
	uint64_t *idx = hs_hmap_get_bytes(&c->index, k, sizeof *k);
	return idx ? hs_event_counts_at(c, (size_t)*idx) : NULL;
}

uint64_t hs_event_counts_total(const hs_event_counts *c)
{
	return c->total;
}

bool hs_event_counts_failed(const hs_event_counts *c)
{
	return c->failed;
}
