/* damage.c: every cut and thousands of byte flips of a real perf.data: each is refused, read cleanly or read with problems, never a crash (run it under ASan too). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_all.h"

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Counts one read's outcome; false (said on stderr) when it was none of the three. */
static bool tally(int rc, uint64_t outcome[3], const char *what, long at)
{
	if (rc >= 0) {
		outcome[rc]++;
		return true;
	}
	fprintf(stderr, "damage: %s %ld: unexpected status\n", what, at);
	return false;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: damage PERF.DATA FLIPS\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		fprintf(stderr, "damage: cannot open %s\n", argv[1]);
		return 2;
	}
	static uint8_t orig[1 << 20], buf[1 << 20];
	size_t n = fread(orig, 1, sizeof orig, f);
	fclose(f);
	long flips = atol(argv[2]);
	uint64_t outcome[3] = {0}, records = 0;
	int bad = 0;
	/* The whole file must read cleanly, or nothing else means much. */
	if (hs_test_perfdata_read_all(orig, n, &records, true) != 1) {
		fprintf(stderr, "damage: %s does not read cleanly\n", argv[1]);
		return 1;
	}
	uint64_t whole = records;
	/* Every cut in the header, attrs and first records; then every 5th byte. The profile is built on
	 * every 8th cut and every 4th flip (the fuzzer builds it on every input). */
	for (size_t cut = 0; cut < n; cut += cut < 1024 ? 1 : 5) {
		memcpy(buf, orig, cut);
		if (!tally(hs_test_perfdata_read_all(buf, cut, &records, cut % 8 == 0), outcome, "cut at", (long)cut))
			bad = 1;
	}
	/* Flips: one to four random bytes each, a fixed seed so a failure repeats. */
	uint64_t seed = 24;
	for (long i = 0; i < flips; i++) {
		memcpy(buf, orig, n);
		int k = 1 + (int)(lcg(&seed) % 4);
		for (int j = 0; j < k; j++) {
			/* Half the flips hit the first 512 bytes: the header and attrs, where sizes and offsets are. */
			size_t at = (lcg(&seed) & 1) ? lcg(&seed) % (n < 512 ? n : 512) : lcg(&seed) % n;
			buf[at] ^= (uint8_t)(1 + lcg(&seed) % 255);
		}
		if (!tally(hs_test_perfdata_read_all(buf, n, &records, i % 4 == 0), outcome, "flip", i))
			bad = 1;
	}
	printf("damage: %zu bytes, %" PRIu64 " records whole; %" PRIu64 " refused, %" PRIu64 " clean, %" PRIu64
	       " with problems\n",
	       n, whole, outcome[0], outcome[1], outcome[2]);
	return bad;
}
