/* etl/etl_format.h: on-disk constants of the .etl format and little-endian field readers (shared by reader and writer). */
#ifndef HS_ETL_FORMAT_H
#define HS_ETL_FORMAT_H

#include <stdint.h>
#include <string.h>

/* WMI_BUFFER_HEADER is 0x48 bytes on every architecture. */
#define HS_ETL_BUFFER_HEADER_SIZE 0x48u

/* ETW buffers are at most 16 MiB (BufferSize 16384 KB): a compressed buffer
 * claiming more data than that is corrupt, not large. */
#define HS_ETL_MAX_BUFFER_BYTES (16u * 1024u * 1024u)

/* WMI_BUFFER_HEADER.BufferFlag */
#define HS_ETL_BUFFER_FLAG_FLUSH_MARKER 0x0001u
#define HS_ETL_BUFFER_FLAG_EVENTS_LOST 0x0002u
#define HS_ETL_BUFFER_FLAG_BUFFER_LOST 0x0004u
#define HS_ETL_BUFFER_FLAG_PROC_INDEX 0x0020u
#define HS_ETL_BUFFER_FLAG_COMPRESSED 0x0040u
#define HS_ETL_PROCESSOR_INDEX_MASK 0x07FFu

/* WMI_BUFFER_HEADER.BufferType */
#define HS_ETL_BUFFER_TYPE_GENERIC 0u
#define HS_ETL_BUFFER_TYPE_HEADER 4u

/* The top byte of a record's first word. */
#define HS_ETL_TRACE_HEADER_FLAG 0x80u
#define HS_ETL_TRACE_HEADER_EVENT_TRACE 0x40u
#define HS_ETL_TRACE_MESSAGE 0x10u

/* HeaderType (byte 2) */
#define HS_ETL_HT_SYSTEM32 0x01u
#define HS_ETL_HT_SYSTEM64 0x02u
#define HS_ETL_HT_COMPACT32 0x03u
#define HS_ETL_HT_COMPACT64 0x04u
#define HS_ETL_HT_FULL_HEADER32 0x0Au
#define HS_ETL_HT_INSTANCE32 0x0Bu
#define HS_ETL_HT_PERFINFO32 0x10u
#define HS_ETL_HT_PERFINFO64 0x11u
#define HS_ETL_HT_EVENT_HEADER32 0x12u
#define HS_ETL_HT_EVENT_HEADER64 0x13u
#define HS_ETL_HT_FULL_HEADER64 0x14u
#define HS_ETL_HT_INSTANCE64 0x15u

/* PERFINFO Version extension bits. */
#define HS_ETL_PEBS_INDEX_FLAG 0x8000u
#define HS_ETL_PMC_COUNTERS_MASK 0x0700u

/* EVENT_HEADER.Flags */
#define HS_ETL_EH_FLAG_EXTENDED_INFO 0x0001u

/* EVENT_HEADER extended item types we decode. */
#define HS_ETL_EXT_STACK_TRACE32 5u
#define HS_ETL_EXT_STACK_TRACE64 6u
#define HS_ETL_EXT_EVENT_SCHEMA_TL 11u
#define HS_ETL_EXT_PROV_TRAITS 12u

/* MESSAGE_TRACE_HEADER OptionFlags (TRACE_MESSAGE_*). */
#define HS_ETL_MSG_SEQUENCE 0x0001u
#define HS_ETL_MSG_GUID 0x0002u
#define HS_ETL_MSG_COMPONENTID 0x0004u
#define HS_ETL_MSG_TIMESTAMP 0x0008u
#define HS_ETL_MSG_SYSTEMINFO 0x0020u
#define HS_ETL_MSG_POINTER64 0x0080u

/* Kernel groups and opcodes the tools decode (HookId = group << 8 | opcode). */
#define HS_ETL_GROUP_HEADER 0x00u
#define HS_ETL_GROUP_PROCESS 0x03u
#define HS_ETL_GROUP_THREAD 0x05u
#define HS_ETL_GROUP_PERFINFO 0x0Fu
#define HS_ETL_GROUP_IMAGE 0x14u
#define HS_ETL_GROUP_STACKWALK 0x18u

static inline uint16_t hs_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t hs_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t hs_le64(const uint8_t *p)
{
	return (uint64_t)hs_le32(p) | (uint64_t)hs_le32(p + 4) << 32;
}

static inline void hs_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void hs_put32(uint8_t *p, uint32_t v)
{
	hs_put16(p, (uint16_t)v);
	hs_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void hs_put64(uint8_t *p, uint64_t v)
{
	hs_put32(p, (uint32_t)v);
	hs_put32(p + 4, (uint32_t)(v >> 32));
}

#endif
