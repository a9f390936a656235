/* report/grow.c: the report layer's doubling arrays (grow.h). */
#include "report/grow.h"

#include <stdint.h>
#include <stdlib.h>

void *hs_rpt_grow(void *arr, size_t elem, size_t n, size_t *cap, size_t first)
{
	if (n < *cap)
		return arr;
	size_t nc = *cap ? *cap * 2 : first;
	if (nc < *cap || nc > SIZE_MAX / elem)
		return NULL;
	void *v = realloc(arr, nc * elem);
	if (v)
		*cap = nc;
	return v;
}
