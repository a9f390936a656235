/* mk_report_etl.c: writes the synthetic .etl files `analyze report` is tested on (a GPU TDR, a device removal, a crash exit code), each ending in hindsight's marker. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl_format.h"
#include "hindsight/etl_writer.h"
#include "hindsight/rules.h"

/*
 * usage: mk_report_etl OUT.etl KIND KERNEL_PROCESS DXGKRNL KERNEL_PNP MARKER TCPIP
 * KIND is tdr, removal, crash or disconnect; the five GUIDs are the catalog's (the test reads them from
 * rules/providers/windows.yaml), so a test file names its providers the way the rules do.
 * The clock is QPC at 10 MHz, started at tick 1000: a tick is 100 ns.
 */

/* An EVENT_HEADER (64-bit) record; flags 0x0004 marks a string-only event (the marker). */
static size_t eh64(uint8_t *out, const hs_guid *g, uint16_t id, uint8_t version, uint16_t flags, uint32_t pid,
		   int64_t ts, const uint8_t *payload, size_t n)
{
	size_t size = 0x50 + n;
	memset(out, 0, 0x50);
	hs_put16(out, (uint16_t)size);
	out[2] = HS_ETL_HT_EVENT_HEADER64;
	out[3] = 0xC0;
	hs_put16(out + 4, flags);
	hs_put32(out + 8, pid + 1);
	hs_put32(out + 12, pid);
	hs_put64(out + 16, (uint64_t)ts);
	hs_put32(out + 0x18, g->data1);
	hs_put16(out + 0x1C, g->data2);
	hs_put16(out + 0x1E, g->data3);
	memcpy(out + 0x20, g->data4, 8);
	hs_put16(out + 0x28, id);
	out[0x2A] = version;
	out[0x2C] = 4; /* level information */
	memcpy(out + 0x50, payload, n);
	return size;
}

static size_t utf16(uint8_t *out, const char *s)
{
	size_t i = 0;
	for (; s[i]; i++)
		hs_put16(out + 2 * i, (uint16_t)(unsigned char)s[i]);
	hs_put16(out + 2 * i, 0);
	return 2 * i + 2;
}

int main(int argc, char **argv)
{
	hs_guid proc, dxg, pnp, mark, tcp;
	if (argc != 8 || !hs_guid_parse(argv[3], &proc) || !hs_guid_parse(argv[4], &dxg) ||
	    !hs_guid_parse(argv[5], &pnp) || !hs_guid_parse(argv[6], &mark) || !hs_guid_parse(argv[7], &tcp)) {
		fprintf(stderr, "usage: mk_report_etl OUT.etl tdr|removal|crash|disconnect KERNEL_PROCESS DXGKRNL "
				"KERNEL_PNP MARKER TCPIP\n");
		return 2;
	}
	const char *kind = argv[2];
	hs_etl_writer_opts o;
	hs_etl_writer_opts_default(&o);
	o.logger_name = "HindsightStutterRing";
	o.clock_type = 1;
	o.perf_freq = 10000000;
	o.start_time = 133300000000000000ull;
	o.start_ts = 1000;
	o.cpus = 2;
	hs_etl_writer *w = NULL;
	if (hs_etl_writer_open(argv[1], &o, &w) != HS_OK)
		return 1;
	uint8_t rec[2048], pl[1024];
	int64_t t = 1000 + 10000000; /* 1 s after the start */
	int rc = 0;
	size_t n;
	/* A game starts (ProcessStart v0: pid, CreateTime, ParentProcessID, SessionID, ImageName UTF-16). */
	memset(pl, 0, sizeof pl);
	hs_put32(pl, 4242);
	hs_put32(pl + 12, 4);
	n = eh64(rec, &proc, 1, 0, 0, 4242, t, pl, 20 + utf16(pl + 20, "game.exe"));
	rc |= hs_etl_writer_add_raw(w, 0, rec, n);
	/* A harmless exit of another program, status 0 (ProcessStop v1: ExitCode at 20, ImageName ANSI at 76). */
	memset(pl, 0, sizeof pl);
	hs_put32(pl, 5000);
	memcpy(pl + 76, "helper.exe", 11);
	n = eh64(rec, &proc, 2, 1, 0, 5000, t += 5000000, pl, 87);
	rc |= hs_etl_writer_add_raw(w, 1, rec, n);
	int64_t hit = 0;
	if (!strcmp(kind, "tdr")) {
		/* DxgKrnl TdrPayloadEngineTimeout (540) logged in the System process, then the dump pair (547, 548) */
		memset(pl, 0, 16);
		n = eh64(rec, &dxg, 540, 0, 0, 4, hit = t += 20000000, pl, 16);
		rc |= hs_etl_writer_add_raw(w, 1, rec, n);
		n = eh64(rec, &dxg, 547, 0, 0, 4, t += 1000000, pl, 16);
		rc |= hs_etl_writer_add_raw(w, 1, rec, n);
		n = eh64(rec, &dxg, 548, 0, 0, 4, t += 15000000, pl, 16);
		rc |= hs_etl_writer_add_raw(w, 0, rec, n);
	} else if (!strcmp(kind, "removal")) {
		/* Kernel-PnP DeviceRemovalStart (831): the device instance path as UTF-16 text */
		memset(pl, 0, sizeof pl);
		size_t len = utf16(pl + 8, "USB\\VID_046D&PID_C52B\\5&2B5E5D0B&0&2");
		n = eh64(rec, &pnp, 831, 0, 0, 4, hit = t += 20000000, pl, 8 + len);
		rc |= hs_etl_writer_add_raw(w, 0, rec, n);
	} else if (!strcmp(kind, "crash")) {
		/* game.exe dies of an access violation */
		memset(pl, 0, sizeof pl);
		hs_put32(pl, 4242);
		hs_put64(pl + 4, o.start_time + 10000000u);  /* CreateTime: 1 s after the session's start */
		hs_put64(pl + 12, o.start_time + 35000000u); /* ExitTime: it ran 2.5 s */
		hs_put32(pl + 20, 0xC0000005u);
		memcpy(pl + 76, "game.exe", 9);
		n = eh64(rec, &proc, 2, 1, 0, 4242, hit = t += 20000000, pl, 85);
		rc |= hs_etl_writer_add_raw(w, 0, rec, n);
	} else if (!strcmp(kind, "disconnect")) {
		/* TCPIP: the local side aborts a connection of game.exe (1039), then one times out (1046) */
		memset(pl, 0, 32);
		n = eh64(rec, &tcp, 1039, 0, 0, 4242, hit = t += 20000000, pl, 32);
		rc |= hs_etl_writer_add_raw(w, 0, rec, n);
		n = eh64(rec, &tcp, 1046, 0, 0, 4, t += 2000000, pl, 32);
		rc |= hs_etl_writer_add_raw(w, 1, rec, n);
	} else {
		hs_etl_writer_discard(w);
		fprintf(stderr, "mk_report_etl: unknown kind %s\n", kind);
		return 2;
	}
	/* hindsight's marker, 30 ms after the hit, in the engine's words (engine/src/run/snapshots.c); times are
	 * the session clock in ns: a QPC tick of 10 MHz is 100 ns */
	char text[256];
	snprintf(text, sizeof text,
		 "hindsight: trigger %s fired; snapshot 001; hit at %lld ns, detected at %lld ns, 1 hits", kind,
		 (long long)hit * 100, (long long)(hit + 300000) * 100);
	n = eh64(rec, &mark, 0, 0, 0x0004, 777, hit + 300000, pl, utf16(pl, text));
	rc |= hs_etl_writer_add_raw(w, 1, rec, n);
	if (rc != HS_OK) {
		hs_etl_writer_discard(w);
		fprintf(stderr, "mk_report_etl: cannot add records\n");
		return 1;
	}
	return hs_etl_writer_close(w) == HS_OK ? 0 : 1;
}
