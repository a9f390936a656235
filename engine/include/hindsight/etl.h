/* hindsight/etl.h: portable reader for Windows ETW trace files (.etl): logfile header, buffers and records. */
#ifndef HINDSIGHT_ETL_H
#define HINDSIGHT_ETL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/problem.h"
#include "hindsight/guid.h"
#include "hindsight/status.h"

/*
 * The format is described in the project's shared notes (etl-format.md): a
 * file is a run of buffers, each a 0x48-byte WMI_BUFFER_HEADER followed by
 * 8-byte aligned records; buffer 0 starts with the logfile header event.
 *
 * Ownership: hs_etl_open returns a reader that keeps the file open and reads
 * buffers through a reused window (not mmap: on these VMs first-touch page
 * faults cost more than the copy; see docs/etl-notes.md); hs_etl_open_memory
 * reads in place. Every pointer in a record handed to a callback is borrowed
 * and valid only during that callback (compressed buffers are decompressed
 * into scratch memory that the next buffer reuses). Free with hs_etl_close.
 *
 * The reader never trusts a length: a malformed buffer or record is reported
 * as a problem (an hs_problem, problem.h, with its file offset) and reading
 * continues at the next buffer.
 */

typedef struct hs_etl hs_etl;

/* TRACE_LOGFILE_HEADER, decoded for either pointer size. */
typedef struct {
	uint32_t buffer_size;
	uint8_t version[4]; /* OS major, minor, log layout major, minor */
	uint32_t provider_version; /* Windows build number */
	uint32_t cpus;
	uint64_t end_time; /* FILETIME */
	uint32_t timer_resolution;
	uint32_t maximum_file_size;
	uint32_t log_file_mode;
	uint32_t buffers_written;
	uint32_t start_buffers;
	uint32_t pointer_size;
	uint32_t events_lost;
	uint32_t cpu_mhz;
	uint64_t boot_time;  /* FILETIME */
	uint64_t perf_freq;
	uint64_t start_time; /* FILETIME */
	uint32_t clock_type; /* 1 QPC, 2 system time, 3 CPU cycles */
	uint32_t buffers_lost;
	int64_t start_ts;    /* the header event's raw clock value at start_time */
	char logger_name[256];    /* UTF-8 */
	char log_file_name[1024]; /* UTF-8 */
	bool valid;               /* false when buffer 0 had no usable header event */
} hs_etl_header;

typedef enum {
	HS_ETL_SYSTEM,   /* SYSTEM_TRACE_HEADER (kernel) */
	HS_ETL_COMPACT,  /* compact system header (kernel) */
	HS_ETL_PERFINFO, /* PERFINFO_TRACE_HEADER (kernel) */
	HS_ETL_EVENT,    /* EVENT_HEADER (manifest, TraceLogging, EventSource) */
	HS_ETL_FULL,     /* EVENT_TRACE_HEADER (classic) */
	HS_ETL_INSTANCE, /* EVENT_INSTANCE_GUID_HEADER (classic) */
	HS_ETL_MESSAGE,  /* WPP MESSAGE_TRACE_HEADER */
} hs_etl_kind;

typedef struct {
	hs_etl_kind kind;
	uint8_t header_type; /* the raw HeaderType byte */
	bool ptr64;          /* logged by 64-bit code: pointer-sized payload fields are 8 bytes */
	/* identity: kernel events by group/opcode; the others by GUID and id/opcode */
	uint8_t group;       /* kernel: HookId >> 8 */
	bool has_guid;
	hs_guid guid;        /* EVENT: provider; FULL/INSTANCE: event class; MESSAGE: message GUID if present */
	uint16_t id;         /* EVENT: descriptor id; MESSAGE: message number */
	uint8_t opcode, version, level, channel;
	uint16_t task;
	uint64_t keywords;
	uint32_t pid, tid;   /* UINT32_MAX when the header has none (PERFINFO) */
	int64_t timestamp;   /* raw clock of the session */
	uint64_t filetime;   /* absolute time, 100 ns since 1601 (0 if the header is unusable) */
	uint16_t cpu;        /* the buffer's processor */
	const uint8_t *ext;  /* EVENT: extended data items (file layout), else NULL */
	size_t ext_len;
	const uint8_t *payload;
	size_t payload_len;
	const uint8_t *raw; /* the whole record, header included */
	size_t raw_len;
	uint64_t buffer_offset; /* file offset of the record's buffer */
	uint32_t offset_in_buffer;
	uint32_t buffer_index;
} hs_etl_record;

typedef struct {
	uint64_t offset; /* file offset of the buffer */
	uint32_t size;   /* BufferSize on disk */
	uint32_t data_end; /* Offset: end of records, header included */
	uint64_t sequence;
	uint16_t cpu;
	uint16_t flags;
	uint16_t type;
	bool compressed;
} hs_etl_buffer;

typedef enum { HS_ETL_FILE_ORDER, HS_ETL_TIME_ORDER } hs_etl_order;

/* Return non-zero to stop the walk early (hs_etl_foreach then returns HS_OK). */
typedef int (*hs_etl_record_fn)(const hs_etl_record *r, void *ctx);

/* Opens and indexes a file (buffers and the logfile header). HS_ENOENT, HS_EIO,
 * HS_EINVAL (not an .etl: no buffer could be read, or the file starts with
 * neither a plausible buffer header nor the logfile header event), HS_ENOMEM. */
hs_status hs_etl_open(const char *path, hs_etl **out);
/* Same over memory the caller keeps alive until hs_etl_close (fuzzing, tests). */
hs_status hs_etl_open_memory(const uint8_t *data, size_t len, hs_etl **out);
void hs_etl_close(hs_etl *etl);

const hs_etl_header *hs_etl_get_header(const hs_etl *etl);
size_t hs_etl_buffer_count(const hs_etl *etl);
const hs_etl_buffer *hs_etl_buffer_at(const hs_etl *etl, size_t i);
size_t hs_etl_file_size(const hs_etl *etl);

/* Walks every record. FILE_ORDER is the fastest; TIME_ORDER groups buffers per
 * processor by sequence number and merges them by timestamp. */
hs_status hs_etl_foreach(hs_etl *etl, hs_etl_order order, hs_etl_record_fn fn, void *ctx);

/* Problems found so far (by open and by walks), in the order found, each once
 * (a second walk finds the same damage again); at most 1000. Every one has
 * the file offset it is at (0 for the file as a whole) and, once the buffer
 * header could be read, the buffer's CPU. The pointer is the reader's: valid
 * until the next walk or hs_etl_close. */
size_t hs_etl_problem_count(const hs_etl *etl);
const hs_problem *hs_etl_problem_at(const hs_etl *etl, size_t i);
/* The same list as a whole (the reader's; valid until hs_etl_close). */
const hs_problems *hs_etl_problems(const hs_etl *etl);

/* Buffers whose flags say events or whole buffers were lost. */
size_t hs_etl_lost_flagged_buffers(const hs_etl *etl);

/* Converts a raw session timestamp to FILETIME with the header's clock. */
uint64_t hs_etl_to_filetime(const hs_etl *etl, int64_t ts);
/* A raw session timestamp in ns of the session's own clock: QPC ticks or CPU cycles by the header's rates, else
 * 100 ns of system time (also when the header lacks the rate); 0 for a negative one. The scale the report's events
 * and the engine's real-time hit times share. */
uint64_t hs_etl_clock_ns(const hs_etl_header *h, int64_t ts);
/* FILETIME (100 ns since 1601) as ISO 8601 UTC with 100 ns digits ("2026-12-04T09:38:15.1234567Z"); "-" for 0,
 * the number itself when the calendar cannot hold it. */
void hs_etl_filetime_text(uint64_t ft, char *buf, size_t cap);

/* ---- TraceLogging self-describing metadata (extended items of EVENT records) ---- */

typedef struct {
	const char *name; /* borrowed from the record, NUL-terminated UTF-8 */
	uint8_t in_type;  /* TlgIn* type (low 5 bits of InMeta) */
	uint8_t out_type; /* TlgOut* type, 0 when absent */
	uint8_t count_kind; /* 0 scalar, 1 constant count, 2 variable count, 3 custom */
	uint16_t count;   /* constant count */
} hs_etl_tl_field;

typedef struct {
	const char *provider_name; /* from PROV_TRAITS, or NULL */
	const char *event_name;    /* from EVENT_SCHEMA_TL, or NULL */
	size_t n_fields;
	hs_etl_tl_field fields[64]; /* the first 64 fields; n_fields counts them all */
} hs_etl_tl_info;

/* Decodes the TraceLogging names of an EVENT record. Returns false when the
 * record has no (well-formed) TraceLogging metadata. Strings are borrowed
 * from the record and valid while it is. */
bool hs_etl_tl_decode(const hs_etl_record *r, hs_etl_tl_info *out);

/* Short name of a record's header type for listings ("SYS64", "EH32", ...). */
const char *hs_etl_header_type_name(uint8_t header_type);

#endif
