/* report/order.c: the "most first" ordering (order.h). */
#include "report/order.h"

static void swap(unsigned char *a, unsigned char *b, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		unsigned char t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

void hs_rpt_order_most(void *v, size_t n, size_t size, uint64_t (*key)(const void *e))
{
	unsigned char *p = v;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			if (key(p + b * size) > key(p + a * size))
				swap(p + a * size, p + b * size, size);
}
