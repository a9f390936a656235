/* hindsight/arena.h: bump allocator that owns every object of one loaded ruleset or plan. */
#ifndef HINDSIGHT_ARENA_H
#define HINDSIGHT_ARENA_H

#include <stddef.h>

/*
 * Ownership: the arena owns every block and everything allocated from it;
 * hs_arena_free releases them all at once (no single object is ever freed).
 * A zeroed hs_arena is an empty one.
 */

typedef struct hs_arena_block hs_arena_block;
typedef struct {
	hs_arena_block *head;
} hs_arena;

/* Zeroed memory owned by the arena; NULL on OOM. Freed only by hs_arena_free. */
void *hs_arena_alloc(hs_arena *a, size_t size);
/* Copies of strings owned by the arena; NULL on OOM (or when s is NULL). */
char *hs_arena_strdup(hs_arena *a, const char *s);
char *hs_arena_strndup(hs_arena *a, const char *s, size_t n);
/* Grows an array owned by the arena to hold at least n+1 elements; returns the
 * (possibly moved) array or NULL on OOM, leaving the old one valid. */
void *hs_arena_grow(hs_arena *a, void *arr, size_t elem, size_t n, size_t *cap);
void hs_arena_free(hs_arena *a);

#endif
