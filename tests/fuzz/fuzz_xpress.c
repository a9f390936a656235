/* fuzz_xpress.c: libFuzzer target for the Plain LZ77 decoder; whatever decodes must fit exactly and survive re-encoding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etl/xpress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Room for long matches to matter, small enough that every input runs fast. */
#define OUT_CAP (64u * 1024u)
/* hs_xpress_compress_bound(OUT_CAP), as a constant for the static buffer. */
#define Z_CAP (OUT_CAP + 4u * (OUT_CAP / 32u + 1u))

static uint8_t out[OUT_CAP], back[OUT_CAP], z[Z_CAP];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0, n2 = 0, zn = 0;
	hs_status st = hs_xpress_decompress(data, size, out, OUT_CAP, &n);
	if (n > OUT_CAP)
		abort();
	if (st != HS_OK) {
		if (st != HS_EINVAL && st != HS_ELIMIT)
			abort();
		return 0;
	}
	/* A stream that decodes needs exactly its output's room: n works, n - 1 is a limit, not an error. */
	if (hs_xpress_decompress(data, size, back, n, &n2) != HS_OK || n2 != n || memcmp(back, out, n) != 0)
		abort();
	if (n && hs_xpress_decompress(data, size, back, n - 1, &n2) != HS_ELIMIT)
		abort();
	/* The encoder must fit in its bound and give the same bytes back. */
	if (hs_xpress_compress_bound(n) > Z_CAP || hs_xpress_compress(out, n, z, Z_CAP, &zn) != HS_OK)
		abort();
	if (hs_xpress_decompress(z, zn, back, n, &n2) != HS_OK || n2 != n || memcmp(back, out, n) != 0)
		abort();
	return 0;
}
