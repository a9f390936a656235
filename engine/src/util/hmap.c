/* util/hmap.c: the open-addressing hash map (see hmap.h for the layout and why). */
#include "util/hmap.h"

#include <stdlib.h>
#include <string.h>

/* Smallest table: 16 slots (8 entries at half load) costs 640 bytes. */
#define HMAP_MIN_CAP 16u

uint64_t hs_hash_more(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull; /* the FNV-1a 64 prime */
	}
	return h;
}

uint64_t hs_hash_bytes(const void *p, size_t n)
{
	return hs_hash_more(HS_HASH_START, p, n); /* from the FNV-1a offset basis */
}

/* Slot hashes are never 0, which marks an empty slot. */
static uint64_t nonzero(uint64_t h)
{
	return h ? h : 1;
}

uint64_t hs_hash_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static uint64_t hash_u64(uint64_t x)
{
	return nonzero(hs_hash_mix(x));
}

static bool slot_is(const hs_hmap_slot *s, uint64_t h, uint64_t ukey, const void *bkey, size_t len)
{
	if (s->hash != h)
		return false;
	if (!bkey)
		return s->ukey == ukey;
	return s->bkey_len == len && (len == 0 || memcmp(s->bkey, bkey, len) == 0);
}

/* The slot holding the key, or the empty slot where it would go. Needs cap > 0. */
static hs_hmap_slot *probe(const hs_hmap *m, uint64_t h, uint64_t ukey, const void *bkey, size_t len)
{
	size_t mask = m->cap - 1, j = (size_t)h & mask;
	while (m->slots[j].hash && !slot_is(&m->slots[j], h, ukey, bkey, len))
		j = (j + 1) & mask;
	return &m->slots[j];
}

static bool grow(hs_hmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : HMAP_MIN_CAP;
	if (ncap < m->cap || ncap > SIZE_MAX / sizeof(hs_hmap_slot))
		return false;
	hs_hmap_slot *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].hash)
			continue;
		size_t j = (size_t)m->slots[i].hash & (ncap - 1);
		while (ns[j].hash)
			j = (j + 1) & (ncap - 1);
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return true;
}

static uint64_t *put(hs_hmap *m, uint64_t h, uint64_t ukey, const void *bkey, size_t len, bool *added)
{
	if (added)
		*added = false;
	/* At most half full: linear probing stays short. */
	if ((m->count + 1) * 2 > m->cap && !grow(m))
		return NULL;
	hs_hmap_slot *s = probe(m, h, ukey, bkey, len);
	if (s->hash)
		return &s->value;
	if (bkey) {
		if (len > SIZE_MAX / 2)
			return NULL;
		/* One spare byte so an empty key still gets a distinct, non-NULL copy. */
		unsigned char *copy = hs_arena_alloc(&m->keys, len + 1);
		if (!copy)
			return NULL;
		if (len)
			memcpy(copy, bkey, len);
		s->bkey = copy;
		s->bkey_len = len;
	} else {
		s->ukey = ukey;
	}
	s->hash = h;
	s->value = 0;
	m->count++;
	if (added)
		*added = true;
	return &s->value;
}

uint64_t *hs_hmap_put_u64(hs_hmap *m, uint64_t key, bool *added)
{
	return put(m, hash_u64(key), key, NULL, 0, added);
}

uint64_t *hs_hmap_put_bytes(hs_hmap *m, const void *key, size_t len, bool *added)
{
	/* A NULL pointer with len 0 is the empty key, not a u64 lookup. */
	static const unsigned char empty = 0;
	return put(m, nonzero(hs_hash_bytes(key, len)), 0, key ? key : &empty, len, added);
}

uint64_t *hs_hmap_get_u64(const hs_hmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	hs_hmap_slot *s = probe(m, hash_u64(key), key, NULL, 0);
	return s->hash ? &s->value : NULL;
}

uint64_t *hs_hmap_get_bytes(const hs_hmap *m, const void *key, size_t len)
{
	static const unsigned char empty = 0;
	if (!m->cap)
		return NULL;
	hs_hmap_slot *s = probe(m, nonzero(hs_hash_bytes(key, len)), 0, key ? key : &empty, len);
	return s->hash ? &s->value : NULL;
}

const hs_hmap_slot *hs_hmap_next(const hs_hmap *m, size_t *pos)
{
	while (*pos < m->cap) {
		const hs_hmap_slot *s = &m->slots[(*pos)++];
		if (s->hash)
			return s;
	}
	return NULL;
}

void hs_hmap_free(hs_hmap *m)
{
	free(m->slots);
	hs_arena_free(&m->keys);
	memset(m, 0, sizeof(*m));
}
