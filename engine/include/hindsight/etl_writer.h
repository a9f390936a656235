/* hindsight/etl_writer.h: writes Windows ETW trace files (.etl) that hs_etl and Windows' own tools can read. */
#ifndef HINDSIGHT_ETL_WRITER_H
#define HINDSIGHT_ETL_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/etl.h"
#include "hindsight/status.h"

/*
 * The layout is the "minimal valid file" of the shared format notes
 * (etl-format.md section 10): buffer 0 is a HEADER buffer whose first record
 * is the logfile header event; every other buffer holds the records of one
 * processor, 8-byte aligned, filled with 0xFF to the buffer size (or XPRESS
 * compressed, with the 0x48-byte buffer header left plain).
 *
 * Records are copied as raw bytes (any header kind), so read -> write -> read
 * gives back every record byte for byte. The writer does not reorder: each
 * processor's records land in the file in the order they were added.
 *
 * Ownership: hs_etl_writer_open copies the options, including both name
 * strings, so the caller's opts may go away after the call. Every record added
 * is copied before the call returns. The writer owns a temporary file next to
 * the final path; hs_etl_writer_close renames it to the final path only when
 * every write succeeded, so a half-written file never carries the final name.
 * close and discard free the writer whatever happens.
 *
 * Errors are sticky: after a failed write every later call returns the same
 * status and close removes the temporary file.
 */

typedef struct hs_etl_writer hs_etl_writer;

typedef struct {
	uint32_t buffer_size;   /* bytes per buffer: a multiple of 8, 1 KiB .. 16 MiB */
	uint32_t pointer_size;  /* 8: SYS64 header event, 64-bit TRACE_LOGFILE_HEADER; 4: SYS32 and the 0x110 layout */
	uint32_t cpus;          /* NumberOfProcessors; raised at close to 1 + the highest processor written */
	uint8_t version[4];     /* OS major, minor, log layout major, minor; compress forces layout 2.0 */
	uint32_t provider_version; /* Windows build number */
	uint64_t end_time, boot_time, start_time; /* FILETIME */
	uint32_t timer_resolution;  /* 100 ns units */
	uint32_t maximum_file_size; /* MB */
	uint32_t log_file_mode; /* EVENT_TRACE_*_MODE; the COMPRESSED bit follows `compress` */
	uint32_t start_buffers;
	uint32_t cpu_mhz;
	uint32_t clock_type;    /* 1 QPC (perf_freq), 2 system time, 3 CPU cycles (cpu_mhz) */
	uint64_t perf_freq;
	int64_t start_ts;       /* raw clock value at start_time: the header event's timestamp */
	uint32_t events_lost, buffers_lost;
	const char *logger_name;   /* UTF-8; NULL is "" */
	const char *log_file_name; /* UTF-8; NULL is "" */
	bool compress;          /* XPRESS data buffers (EVENT_TRACE_COMPRESSED_MODE) */
	/* Test aid: write the data buffers rotated by this many positions in
	 * the file (sequence numbers unchanged), the way a wrapped circular file
	 * lies on disk. Holds every data buffer in memory until close. */
	uint32_t file_order_rotate;
} hs_etl_writer_opts;

/* Defaults: 64 KiB buffers, 64-bit logger, 1 CPU, Windows 10 layout 1.5,
 * sequential mode, QPC clock at 10 MHz, start buffers 1. */
void hs_etl_writer_opts_default(hs_etl_writer_opts *opts);

/* Defaults overlaid with every field of a read file's header (when valid),
 * compression included, so a copy keeps the source's clock and identity.
 * The name pointers borrow from h. A header buffer size the writer cannot
 * use (not a multiple of 8, too small or too large) keeps the default. */
void hs_etl_writer_opts_from(const hs_etl_header *h, hs_etl_writer_opts *opts);

/* Creates PATH's temporary sibling. HS_EINVAL for bad options, HS_ELIMIT
 * when the names do not fit the header buffer, HS_EPERM / HS_ENOENT / HS_EIO
 * when the temporary file cannot be created, HS_ENOMEM. */
hs_status hs_etl_writer_open(const char *path, const hs_etl_writer_opts *opts, hs_etl_writer **out);

/* Appends r->raw[0, r->raw_len) to processor r->cpu's open buffer, flushing
 * it first when the record does not fit. HS_ELIMIT for a record larger than a
 * buffer can hold, HS_EINVAL for an empty record, a processor above 2047 or
 * bytes starting with the 0xFFFFFFFF end-of-data marker. */
hs_status hs_etl_writer_add(hs_etl_writer *w, const hs_etl_record *r);

/* The same for bytes the caller built (synthetic records). */
hs_status hs_etl_writer_add_raw(hs_etl_writer *w, uint16_t cpu, const uint8_t *bytes, size_t len);

/* Appends a record to the header buffer, after the logfile header event
 * (where Windows puts the header-group records: extension, build lab, ...).
 * HS_ELIMIT when the header buffer is full. */
hs_status hs_etl_writer_add_header_raw(hs_etl_writer *w, const uint8_t *bytes, size_t len);

/* Copies a record read from another file to where it was: the source's own
 * logfile header event (first record of buffer 0) is skipped, since close
 * writes a fresh one; other records of the source's buffer 0 go to the header
 * buffer; everything else goes through hs_etl_writer_add. */
hs_status hs_etl_writer_copy(hs_etl_writer *w, const hs_etl_record *r);

/* Writes processor cpu's open buffer now (nothing if it is empty), as a
 * flush timer would. */
hs_status hs_etl_writer_flush(hs_etl_writer *w, uint16_t cpu);

/* ORs BufferFlag bits (e.g. HS_ETL_BUFFER_FLAG_EVENTS_LOST 0x2, BUFFER_LOST
 * 0x4) into the next buffer flushed for cpu: lets tests build what a lossy
 * session leaves behind. */
hs_status hs_etl_writer_set_buffer_flags(hs_etl_writer *w, uint16_t cpu, uint16_t flags);

/* Flushes every open buffer (processor order), writes the header buffer,
 * syncs and renames the temporary file to the final path. On failure the
 * temporary file is removed and the final path is left as it was. Frees w. */
hs_status hs_etl_writer_close(hs_etl_writer *w);

/* Drops everything written and removes the temporary file. Frees w. */
void hs_etl_writer_discard(hs_etl_writer *w);

/* Buffers written so far (header buffer excluded until close). */
uint32_t hs_etl_writer_buffers(const hs_etl_writer *w);

#endif
