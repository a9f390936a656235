/* sched_records.h: builds the kernel's scheduler and naming records (CSwitch, ReadyThread, Thread and Process rundowns) as raw .etl records, for the tests that write synthetic traces. */
#ifndef HS_TEST_SCHED_RECORDS_H
#define HS_TEST_SCHED_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "etl/etl_format.h"

/*
 * Layouts from the MOF classes (docs/etl-notes.md, "Wait analysis"), written here independently of the decoders
 * (byte offsets spelled out, not the decoders' structs). Headers: SYSTEM64 (0x20 bytes), COMPACT64 (0x18) or
 * PERFINFO64 (0x10, no thread or process id); every record is 64-bit.
 */

/* A kernel record of group/opcode with the payload; returns its size. out needs 0x20 + n bytes. */
static inline size_t sr_kernel(uint8_t *out, uint8_t header_type, uint8_t group, uint8_t opcode, uint16_t version,
			       uint32_t tid, uint32_t pid, int64_t ts, const uint8_t *payload, size_t n)
{
	size_t hdr = header_type == HS_ETL_HT_SYSTEM64	  ? 0x20
		     : header_type == HS_ETL_HT_COMPACT64 ? 0x18
							  : 0x10;
	memset(out, 0, hdr);
	hs_put16(out, version);
	out[2] = header_type;
	out[3] = 0xC0;
	hs_put16(out + 4, (uint16_t)(hdr + n));
	out[6] = opcode;
	out[7] = group;
	if (header_type == HS_ETL_HT_PERFINFO64) {
		hs_put64(out + 8, (uint64_t)ts);
	} else {
		hs_put32(out + 8, tid);
		hs_put32(out + 12, pid);
		hs_put64(out + 16, (uint64_t)ts);
	}
	if (n)
		memcpy(out + hdr, payload, n);
	return hdr + n;
}

/* CSwitch v2-v4 payload (24 bytes). */
static inline size_t sr_cswitch(uint8_t *p, uint32_t new_tid, uint32_t old_tid, int8_t new_pri, int8_t old_pri,
				int8_t wait_reason, int8_t wait_mode, int8_t old_state)
{
	memset(p, 0, 24);
	hs_put32(p, new_tid);
	hs_put32(p + 4, old_tid);
	p[8] = (uint8_t)new_pri;
	p[9] = (uint8_t)old_pri;
	p[10] = 1;    /* PreviousCState */
	p[12] = (uint8_t)wait_reason;
	p[13] = (uint8_t)wait_mode;
	p[14] = (uint8_t)old_state;
	p[15] = 0;    /* OldThreadWaitIdealProcessor */
	hs_put32(p + 16, 1234); /* NewThreadWaitTime */
	hs_put32(p + 20, 0);    /* Reserved */
	return 24;
}

/* ReadyThread payload (8 bytes). */
static inline size_t sr_ready(uint8_t *p, uint32_t tid, int8_t adjust_reason, int8_t adjust_increment, uint8_t flag)
{
	memset(p, 0, 8);
	hs_put32(p, tid);
	p[4] = (uint8_t)adjust_reason;
	p[5] = (uint8_t)adjust_increment;
	p[6] = flag;
	return 8;
}

/* UTF-16LE of an ASCII string, NUL-terminated; returns the new offset. */
static inline size_t sr_wstr(uint8_t *p, size_t o, const char *s)
{
	for (; *s; s++, o += 2)
		hs_put16(p + o, (uint16_t)(unsigned char)*s);
	hs_put16(p + o, 0);
	return o + 2;
}

/* Thread v3 payload (64-bit): ProcessId, TThreadId, 7 pointers, SubProcessTag, 4 priority bytes, then ThreadName
 * when name is not NULL. */
static inline size_t sr_thread_v3(uint8_t *p, uint32_t pid, uint32_t tid, uint8_t base_priority, const char *name)
{
	size_t o = 0;
	hs_put32(p + o, pid);
	o += 4;
	hs_put32(p + o, tid);
	o += 4;
	for (int i = 0; i < 7; i++, o += 8)
		hs_put64(p + o, 0xFFFF800000100000ull + (uint64_t)i * 0x1000);
	hs_put32(p + o, 0); /* SubProcessTag */
	o += 4;
	p[o++] = base_priority;
	p[o++] = 5; /* PagePriority */
	p[o++] = 2; /* IoPriority */
	p[o++] = 0; /* ThreadFlags */
	if (name)
		o = sr_wstr(p, o, name);
	return o;
}

/* Process v4 payload (64-bit): UniqueProcessKey, ProcessId, ParentId, SessionId, ExitStatus, DirectoryTableBase,
 * Flags, no SID, ImageFileName (8-bit), CommandLine, PackageFullName, ApplicationId (UTF-16). */
static inline size_t sr_process_v4(uint8_t *p, uint32_t pid, uint32_t parent, const char *image)
{
	size_t o = 0;
	hs_put64(p + o, 0xFFFFA00000000000ull + pid);
	o += 8;
	hs_put32(p + o, pid);
	o += 4;
	hs_put32(p + o, parent);
	o += 4;
	hs_put32(p + o, 1); /* SessionId */
	o += 4;
	hs_put32(p + o, 259); /* ExitStatus: STATUS_PENDING while it runs */
	o += 4;
	hs_put64(p + o, 0x1ab000);
	o += 8;
	hs_put32(p + o, 0); /* Flags */
	o += 4;
	hs_put32(p + o, 0); /* UserSID: none */
	o += 4;
	size_t n = strlen(image) + 1;
	memcpy(p + o, image, n);
	o += n;
	o = sr_wstr(p, o, image); /* CommandLine */
	o = sr_wstr(p, o, "");
	o = sr_wstr(p, o, "");
	return o;
}

#endif
