/* perf/perf_file.h: writes perf.data (PERFILE2) from raw ring records, plus build-id readers. */
#ifndef HS_PERF_FILE_H
#define HS_PERF_FILE_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/limits.h"
#include "hindsight/msg.h"
#include "hindsight/status.h"

/*
 * Ownership: hs_perf_file owns its temporary file, its copy of the attr and
 * ids, and the set of DSO names seen in MMAP/MMAP2 records. Records passed to
 * hs_perf_file_write are copied out before it returns. hs_perf_file_finish
 * renames the temporary file to the final name and frees the writer;
 * hs_perf_file_abort unlinks it and frees the writer. Exactly one of the two
 * must be called.
 */
typedef struct hs_perf_file hs_perf_file;

/* Creates `<path>.tmp.<pid>` and writes the attr section (one attr named
 * `event_name`, `n_ids` ids) so records can be appended right away. All
 * arguments are copied. `msg` may be NULL (silent). */
hs_status hs_perf_file_create(const char *path, const struct perf_event_attr *attr, const char *event_name,
			      const uint64_t *ids, size_t n_ids, const hs_msg *msg, hs_perf_file **out);

/* Appends one record as the kernel wrote it (header.size bytes). */
hs_status hs_perf_file_write(hs_perf_file *f, const struct perf_event_header *rec);

/* Appends a PERF_RECORD_MMAP for the running kernel ([kernel.kallsyms]_text),
 * as perf record synthesises it, so kernel frames resolve through kallsyms.
 * Silently does nothing when kallsyms hides addresses. */
hs_status hs_perf_file_write_kernel_mmap(hs_perf_file *f);

/* Appends PERF_RECORD_FINISHED_ROUND: everything before it may be sorted and
 * delivered by the reader, which bounds perf report's memory. */
hs_status hs_perf_file_round(hs_perf_file *f);

/* Writes the feature sections (build-ids of every DSO seen, host facts) and
 * the final header, flushes, fsyncs and renames. On failure the temporary file
 * is removed. `build_ids` (may be NULL) receives how many build-ids went in and
 * `data_bytes`/`file_bytes` the sizes. Frees f in every case. */
hs_status hs_perf_file_finish(hs_perf_file *f, uint64_t *build_ids, uint64_t *data_bytes, uint64_t *file_bytes);
void hs_perf_file_abort(hs_perf_file *f);

/* Build-ids: the GNU build-id note of an ELF file (from PT_NOTE segments, else
 * SHT_NOTE sections) or of the running kernel (/sys/kernel/notes). `id` must
 * hold 20 bytes (the longest build-id toolchains emit, SHA-1); *len is its
 * length. HS_ENOENT when there is none, HS_EIO when unreadable. */
hs_status hs_elf_build_id(const char *path, uint8_t id[HS_BUILD_ID_MAX], size_t *len);
hs_status hs_kernel_build_id(uint8_t id[HS_BUILD_ID_MAX], size_t *len);

#endif
