/* fuzz_perfdata.c: libFuzzer target for the perf.data reader: open, the walk (samples, callchains, mmaps, comms), build-ids and the CPU profile over it. */
#include <stddef.h>
#include <stdint.h>

#include "../perfdata/read_all.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t records = 0;
	/* Refused, clean or with problems are all fine; anything else is a bug. */
	if (hs_test_perfdata_read_all(data, size, &records, true) < 0)
		__builtin_trap();
	return 0;
}
