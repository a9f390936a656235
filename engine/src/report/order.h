/* report/order.h: the report layer's "most first" ordering of small arrays (order.c). */
#ifndef HS_REPORT_ORDER_H
#define HS_REPORT_ORDER_H

#include <stddef.h>
#include <stdint.h>

/* Orders the n elements (size bytes each) of v by key, the largest first, by exchanges (a selection sort: ties end
 * in the order it leaves them, the same every time; the arrays are a few dozen elements). */
void hs_rpt_order_most(void *v, size_t n, size_t size, uint64_t (*key)(const void *e));

#endif
