/* util/arena.c: bump allocator; see arena.h. */
#include "util/arena.h"

#include <stdlib.h>
#include <string.h>

struct hs_arena_block {
	hs_arena_block *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

enum { BLOCK_MIN = 64 * 1024 };

void *hs_arena_alloc(hs_arena *a, size_t size)
{
	size = (size + 15u) & ~(size_t)15u;
	if (size == 0)
		size = 16;
	hs_arena_block *b = a->head;
	if (!b || b->size - b->used < size) {
		size_t bs = size > BLOCK_MIN ? size : BLOCK_MIN;
		b = malloc(sizeof(*b) + bs);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->size = bs;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += size;
	memset(p, 0, size);
	return p;
}

char *hs_arena_strndup(hs_arena *a, const char *s, size_t n)
{
	if (!s)
		return NULL;
	char *p = hs_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *hs_arena_strdup(hs_arena *a, const char *s)
{
	return s ? hs_arena_strndup(a, s, strlen(s)) : NULL;
}

void *hs_arena_grow(hs_arena *a, void *arr, size_t elem, size_t n, size_t *cap)
{
	if (n < *cap)
		return arr;
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p = hs_arena_alloc(a, ncap * elem);
	if (!p)
		return NULL;
	if (arr && n)
		memcpy(p, arr, n * elem);
	*cap = ncap;
	return p;
}

void hs_arena_free(hs_arena *a)
{
	hs_arena_block *b = a->head;
	while (b) {
		hs_arena_block *n = b->next;
		free(b);
		b = n;
	}
	a->head = NULL;
}
