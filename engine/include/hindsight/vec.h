/* hindsight/vec.h: one growable array for the library and tools: elements of one size, contiguous, doubling; and a lower bound over sorted arrays. */
#ifndef HINDSIGHT_VEC_H
#define HINDSIGHT_VEC_H

#include <stddef.h>
#include <stdint.h>

#include "hindsight/status.h"

/*
 * Elements are plain bytes of `elem` size each, so any struct fits; the array
 * doubles when full, so pushing n elements copies O(n) bytes in all.
 *
 * Ownership: the vec owns `data`; hs_vec_free releases it (not what the
 * elements point to). A pointer to an element is valid until the next push or
 * reserve, which may move the array; keep indexes across those.
 * `hs_vec v = HS_VEC_INIT(sizeof(T));` is an empty vec of T.
 */

typedef struct {
	void *data;
	size_t len, cap; /* in elements */
	size_t elem;     /* bytes per element, > 0 */
} hs_vec;

#define HS_VEC_INIT(elem_size) {NULL, 0, 0, (elem_size)}

/* Room for at least n elements in all. HS_ENOMEM (the vec unchanged) when it cannot. */
hs_status hs_vec_reserve(hs_vec *v, size_t n);
/* A new zeroed element at the end, or NULL on OOM (the vec unchanged). */
void *hs_vec_push(hs_vec *v);
/* Element i (< len). */
void *hs_vec_at(const hs_vec *v, size_t i);
/* Hands the array to the caller (free() it) and leaves the vec empty; NULL when empty. */
void *hs_vec_take(hs_vec *v);
void hs_vec_free(hs_vec *v);

/* Room for one more element in a plain malloc'd array of *cap elements of
 * elem bytes, n of them in use: arr itself while n < *cap, else the array
 * realloc'd to twice the capacity (first when it had none) and *cap updated;
 * NULL when out of memory, arr and *cap untouched (the caller still owns arr).
 * For arrays kept as a pointer and two counts; the heap's hs_arena_grow. */
void *hs_array_grow(void *arr, size_t elem, size_t n, size_t *cap, size_t first);

/* The first of n elements (stride bytes apart from base) whose uint64_t at byte
 * key_off is key or more, or n when none is: a lower bound by binary search over
 * elements sorted by that key (records by timestamp, chunks by their last time). */
size_t hs_lower_bound_u64(const void *base, size_t n, size_t stride, size_t key_off, uint64_t key);

#endif
