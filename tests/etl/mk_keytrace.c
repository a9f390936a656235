/* mk_keytrace.c: writes a synthetic key-event .etl (process start, a crash, a GPU TDR, a TCP abort, noise) for analyze tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl_format.h"
#include "hindsight/etl_writer.h"

/* Provider GUIDs as the catalogs give them (test data, not engine policy). */
static const uint8_t kernel_process[16] = {0xD6, 0x2C, 0xFB, 0x22, 0x7B, 0x0E, 0x2B, 0x42,
					   0xA0, 0xC7, 0x2F, 0xAD, 0x1F, 0xD0, 0xE7, 0x16};
static const uint8_t dxgkrnl[16] = {0x5A, 0xC4, 0x2E, 0x80, 0x99, 0x1E, 0x83, 0x4B,
				    0x99, 0x20, 0x87, 0xC9, 0x82, 0x77, 0xBA, 0x9D};
static const uint8_t tcpip[16] = {0xEE, 0xE2, 0x07, 0x2F, 0xDB, 0x15, 0xF1, 0x40,
				  0x90, 0xEF, 0x9D, 0x7B, 0xA2, 0x82, 0x18, 0x8A};

/* An EVENT_HEADER (64-bit) record with the given payload. */
static size_t eh64(uint8_t *out, const uint8_t guid[16], uint16_t id, uint8_t version, uint32_t pid, int64_t ts,
		   const uint8_t *payload, size_t n)
{
	size_t size = 0x50 + n;
	memset(out, 0, 0x50);
	hs_put16(out, (uint16_t)size);
	out[2] = HS_ETL_HT_EVENT_HEADER64;
	out[3] = 0xC0;
	hs_put32(out + 8, pid + 1);
	hs_put32(out + 12, pid);
	hs_put64(out + 16, (uint64_t)ts);
	memcpy(out + 0x18, guid, 16);
	hs_put16(out + 0x28, id);
	out[0x2A] = version;
	out[0x2C] = 4; /* level information */
	memcpy(out + 0x50, payload, n);
	return size;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mk_keytrace OUT.etl\n");
		return 2;
	}
	hs_etl_writer_opts o;
	hs_etl_writer_opts_default(&o);
	o.logger_name = "HindsightStutterKeys";
	o.log_file_name = "keyevents.etl";
	o.log_file_mode = 0x2; /* circular, as the key session writes */
	o.start_time = 133300000000000000ull;
	o.start_ts = 1000;
	hs_etl_writer *w = NULL;
	if (hs_etl_writer_open(argv[1], &o, &w) != HS_OK)
		return 1;
	uint8_t rec[512], pl[256];
	int64_t t = 1000;
	int rc = 0;
	/* ProcessStart v0: pid, CreateTime, ParentProcessID, SessionID, ImageName (UTF-16). */
	memset(pl, 0, sizeof pl);
	hs_put32(pl, 4242);
	hs_put32(pl + 12, 4);
	const char *img = "game.exe";
	for (size_t i = 0; img[i]; i++)
		hs_put16(pl + 20 + 2 * i, (uint16_t)img[i]);
	size_t n = eh64(rec, kernel_process, 1, 0, 4242, t += 10000000, pl, 20 + 2 * 9);
	rc |= hs_etl_writer_add_raw(w, 0, rec, n);
	/* Noise that the whitelist leaves out: ThreadWorkOnBehalfUpdate (21). */
	memset(pl, 0, 8);
	n = eh64(rec, kernel_process, 21, 0, 4242, t += 100, pl, 8);
	rc |= hs_etl_writer_add_raw(w, 1, rec, n);
	/* A GPU TDR on CPU 1, then a TCP abort, then the crash on CPU 0. */
	n = eh64(rec, dxgkrnl, 540, 0, 4, t += 20000000, pl, 8);
	rc |= hs_etl_writer_add_raw(w, 1, rec, n);
	n = eh64(rec, tcpip, 1039, 0, 4242, t += 5000000, pl, 8);
	rc |= hs_etl_writer_add_raw(w, 1, rec, n);
	/* ProcessStop v1: pid, Create, Exit, ExitCode at 20, ... ImageName (ANSI) at 76. */
	memset(pl, 0, sizeof pl);
	hs_put32(pl, 4242);
	hs_put32(pl + 20, 0xC0000005u);
	memcpy(pl + 76, "game.exe", 9);
	n = eh64(rec, kernel_process, 2, 1, 4242, t += 1000000, pl, 85);
	rc |= hs_etl_writer_add_raw(w, 0, rec, n);
	if (rc != HS_OK) {
		hs_etl_writer_discard(w);
		fprintf(stderr, "mk_keytrace: cannot add records\n");
		return 1;
	}
	return hs_etl_writer_close(w) == HS_OK ? 0 : 1;
}
