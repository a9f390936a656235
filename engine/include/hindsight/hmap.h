/* hindsight/hmap.h: one hash map for the library and tools: open addressing, u64 or byte-string keys, u64 values. */
#ifndef HINDSIGHT_HMAP_H
#define HINDSIGHT_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/arena.h"

/*
 * Linear probing over a power-of-two table kept at most half full, so a
 * lookup touches one or two slots. The value is one u64: an index into a
 * caller's array (hs_vec) or a number; callers that need more keep their
 * records in an array and map keys to indexes, which also keeps those records
 * in insertion order and at stable indexes while the map grows.
 *
 * A map holds either u64 keys (hs_hmap_*_u64) or byte-string keys
 * (hs_hmap_*_bytes), never both. There is no removal: every user so far only
 * adds; removal would need backward-shift deletion.
 *
 * Ownership: the map owns its slots and a copy of every byte-string key (in
 * its arena); hs_hmap_free releases both. A value pointer returned by put/get
 * is valid until the next put. `hs_hmap m = {0};` is an empty map.
 */

typedef struct {
	uint64_t hash;             /* 0: empty slot (hashes are made non-zero) */
	uint64_t value;
	uint64_t ukey;             /* u64 keys */
	const unsigned char *bkey; /* byte-string keys: the map's copy */
	size_t bkey_len;
} hs_hmap_slot;

typedef struct {
	hs_hmap_slot *slots; /* [cap]; private */
	size_t cap, count;
	hs_arena keys; /* byte-string key copies; private */
} hs_hmap;

/* FNV-1a (64 bit) over n bytes: the hash every byte key uses. */
uint64_t hs_hash_bytes(const void *p, size_t n);
/* The same, continued over more bytes (a file read in pieces): h from HS_HASH_START or an earlier call. */
#define HS_HASH_START 0xcbf29ce484222325ull
uint64_t hs_hash_more(uint64_t h, const void *p, size_t n);
/* splitmix64's finaliser: every bit of x reaches every bit of the result, so
 * sequential ids (pids, addresses) spread over a power-of-two table. */
uint64_t hs_hash_mix(uint64_t x);

/* The value for key, added as 0 when absent (*added says which; may be NULL).
 * NULL on OOM, the map unchanged. */
uint64_t *hs_hmap_put_u64(hs_hmap *m, uint64_t key, bool *added);
uint64_t *hs_hmap_put_bytes(hs_hmap *m, const void *key, size_t len, bool *added);
/* The value for key, or NULL when absent. */
uint64_t *hs_hmap_get_u64(const hs_hmap *m, uint64_t key);
uint64_t *hs_hmap_get_bytes(const hs_hmap *m, const void *key, size_t len);

/* Walks the entries in table order (not insertion order): start with *pos = 0;
 * returns false after the last. The slot is borrowed from the map. */
const hs_hmap_slot *hs_hmap_next(const hs_hmap *m, size_t *pos);

void hs_hmap_free(hs_hmap *m);

#endif
