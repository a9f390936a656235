/* util/vec.c: the growable array and the lower bound (see vec.h). */
#include "util/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* First allocation: a handful of elements, so small arrays stay small. */
#define VEC_MIN_CAP 8u

hs_status hs_vec_reserve(hs_vec *v, size_t n)
{
	if (n <= v->cap)
		return HS_OK;
	size_t ncap = v->cap ? v->cap : VEC_MIN_CAP;
	while (ncap < n) {
		if (ncap > SIZE_MAX / 2)
			return HS_ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / v->elem)
		return HS_ENOMEM;
	void *p = realloc(v->data, ncap * v->elem);
	if (!p)
		return HS_ENOMEM;
	v->data = p;
	v->cap = ncap;
	return HS_OK;
}

void *hs_vec_push(hs_vec *v)
{
	if (v->len == SIZE_MAX || hs_vec_reserve(v, v->len + 1) != HS_OK)
		return NULL;
	void *e = (unsigned char *)v->data + v->len * v->elem;
	memset(e, 0, v->elem);
	v->len++;
	return e;
}

void *hs_vec_at(const hs_vec *v, size_t i)
{
	return (unsigned char *)v->data + i * v->elem;
}

void *hs_vec_take(hs_vec *v)
{
	void *p = v->data;
	v->data = NULL;
	v->len = v->cap = 0;
	return p;
}

void hs_vec_free(hs_vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}

void *hs_array_grow(void *arr, size_t elem, size_t n, size_t *cap, size_t first)
{
	if (n < *cap)
		return arr;
	size_t ncap = *cap ? *cap * 2 : first;
	if (ncap < *cap || ncap > SIZE_MAX / elem)
		return NULL;
	void *p = realloc(arr, ncap * elem);
	if (p)
		*cap = ncap;
	return p;
}

size_t hs_lower_bound_u64(const void *base, size_t n, size_t stride, size_t key_off, uint64_t key)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, b + mid * stride + key_off, sizeof k); /* the key's alignment is the caller's struct's */
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
