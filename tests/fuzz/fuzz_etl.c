/* fuzz_etl.c: libFuzzer target for the .etl reader: index, both walk orders and TraceLogging decoding. */
#include <stddef.h>
#include <stdint.h>

#include "hindsight/etl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int visit(const hs_etl_record *r, void *ctx)
{
	/* Touch every byte the reader hands out, so ASan sees any overread. */
	volatile uint8_t sink = 0;
	for (size_t i = 0; i < r->raw_len; i++)
		sink ^= r->raw[i];
	for (size_t i = 0; i < r->payload_len; i++)
		sink ^= r->payload[i];
	hs_etl_tl_info tl;
	if (hs_etl_tl_decode(r, &tl)) {
		for (size_t i = 0; tl.event_name && tl.event_name[i]; i++)
			sink ^= (uint8_t)tl.event_name[i];
	}
	(*(size_t *)ctx)++;
	(void)sink;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hs_etl *etl = NULL;
	if (hs_etl_open_memory(data, size, &etl) != HS_OK)
		return 0;
	size_t a = 0, b = 0;
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, visit, &a);
	hs_etl_foreach(etl, HS_ETL_TIME_ORDER, visit, &b);
	/* Both orders must see the same records. */
	if (a != b)
		__builtin_trap();
	hs_etl_close(etl);
	return 0;
}
