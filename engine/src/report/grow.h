/* report/grow.h: room for one more element in the arrays the report layer grows by doubling (grow.c). */
#ifndef HS_REPORT_GROW_H
#define HS_REPORT_GROW_H

#include <stddef.h>

/* arr (n elements of elem bytes in use, room for *cap) with room for one more: arr itself while n < *cap, else arr
 * reallocated to twice *cap elements (first when *cap is 0) and *cap updated. NULL when that fails: arr and *cap
 * are as they were. */
void *hs_rpt_grow(void *arr, size_t elem, size_t n, size_t *cap, size_t first);

#endif
