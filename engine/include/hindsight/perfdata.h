/* hindsight/perfdata.h: reader for perf.data files (PERFILE2): attrs, build-ids and the records of the data section. */
#ifndef HINDSIGHT_PERFDATA_H
#define HINDSIGHT_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/problem.h"
#include "hindsight/status.h"

/*
 * The file format of the kernel's tools/perf/Documentation/perf.data-file-format.txt,
 * little-endian, as `perf record` and launch mode (engine/src/perf/perf_file.c)
 * write it: the header, the attrs with their ids, the data section's records
 * in file order, and the feature table after the data (HEADER_BUILD_ID is
 * read; the other features are only checked to lie inside the file). It reads
 * on every platform (no kernel header is needed).
 *
 * Records: PERF_RECORD_SAMPLE is decoded by its attr's sample_type up to and
 * including the callchain (the fields before it: IDENTIFIER, IP, TID, TIME,
 * ADDR, ID, STREAM_ID, CPU, PERIOD, READ); MMAP, MMAP2, COMM, FORK, EXIT and
 * LOST are decoded with their sample_id trailer (time, cpu) when the attr has
 * sample_id_all; every other record is handed over by type and size only.
 *
 * Damage: every size, offset and count is checked against the file before it
 * is used. A file whose header or attrs cannot be read is refused (HS_EINVAL)
 * with a first problem saying why; a damaged record stops the walk with a
 * problem at its offset (what came before it was delivered); a sample whose
 * layout the reader cannot know is skipped with a problem. Problems are kept
 * up to HS_PERFDATA_MAX_PROBLEMS.
 *
 * Ownership: hs_perfdata_open returns a reader that owns its file descriptor,
 * its read window, the attrs, ids, build-ids and problems; free it with
 * hs_perfdata_close. hs_perfdata_open_mem borrows the bytes, which must
 * outlive the reader. A record handed to the walk's callback, and every
 * pointer in it (callchain, filename, comm), is valid only during that call.
 */

typedef struct hs_perfdata hs_perfdata;

/* Record types (the kernel's enum perf_event_type): format facts. */
enum {
	HS_PERFDATA_MMAP = 1,
	HS_PERFDATA_LOST = 2,
	HS_PERFDATA_COMM = 3,
	HS_PERFDATA_EXIT = 4,
	HS_PERFDATA_FORK = 7,
	HS_PERFDATA_SAMPLE = 9,
	HS_PERFDATA_MMAP2 = 10,
};

/* sample_type bits the reader decodes (PERF_SAMPLE_*). */
enum {
	HS_PERFDATA_S_IP = 1u << 0,
	HS_PERFDATA_S_TID = 1u << 1,
	HS_PERFDATA_S_TIME = 1u << 2,
	HS_PERFDATA_S_ADDR = 1u << 3,
	HS_PERFDATA_S_READ = 1u << 4,
	HS_PERFDATA_S_CALLCHAIN = 1u << 5,
	HS_PERFDATA_S_ID = 1u << 6,
	HS_PERFDATA_S_CPU = 1u << 7,
	HS_PERFDATA_S_PERIOD = 1u << 8,
	HS_PERFDATA_S_STREAM_ID = 1u << 9,
	HS_PERFDATA_S_IDENTIFIER = 1u << 16,
};

/* Callchain context markers (PERF_CONTEXT_*): the frames after one are of that context. */
#define HS_PERFDATA_CONTEXT_HV ((uint64_t)-32)
#define HS_PERFDATA_CONTEXT_KERNEL ((uint64_t)-128)
#define HS_PERFDATA_CONTEXT_USER ((uint64_t)-512)
#define HS_PERFDATA_CONTEXT_GUEST ((uint64_t)-2048)
#define HS_PERFDATA_CONTEXT_MAX ((uint64_t)-4095) /* addresses at or above this are markers */

/* header.misc's cpumode (PERF_RECORD_MISC_*) and COMM's exec flag. */
enum {
	HS_PERFDATA_MISC_CPUMODE_MASK = 7,
	HS_PERFDATA_MISC_KERNEL = 1,
	HS_PERFDATA_MISC_USER = 2,
	HS_PERFDATA_MISC_COMM_EXEC = 1u << 13,
};

typedef struct {
	uint32_t type;        /* PERF_TYPE_* */
	uint64_t config;      /* the event within the type */
	uint64_t sample_type; /* PERF_SAMPLE_* bits */
	uint64_t read_format;
	bool freq; /* sample_freq (Hz) rather than sample_period (events) */
	uint64_t sample_freq_or_period;
	bool sample_id_all;  /* non-sample records carry the sample_id trailer */
	bool decodable;      /* false: its samples are skipped (a problem says why) */
	const uint64_t *ids; /* the sample ids of this attr's events (one per CPU or thread) */
	size_t nids;
} hs_perfdata_attr;

typedef struct {
	int32_t pid; /* -1: the kernel */
	uint16_t misc;
	uint8_t id[20];
	size_t len;
	const char *filename;
} hs_perfdata_build_id;

typedef struct {
	uint32_t type; /* HS_PERFDATA_* or any other record type */
	uint16_t misc;
	uint16_t size;
	uint64_t offset; /* of the record in the file */
	int attr;        /* index of its attr, -1 when unknown (several attrs, no id) */
	uint64_t has;    /* which HS_PERFDATA_S_* fields below were in the record */
	/* SAMPLE (and the sample_id trailer of the others: TID, TIME, ID, STREAM_ID, CPU) */
	uint64_t ip, time, addr, id, stream_id, period;
	uint32_t pid, tid, cpu;    /* pid, tid also MMAP, MMAP2, COMM, FORK, EXIT */
	const uint64_t *callchain; /* markers included, leaf first */
	size_t ncallchain;
	/* MMAP, MMAP2 */
	uint64_t start, len, pgoff;
	const char *filename;
	/* COMM */
	const char *comm;
	bool exec;
	/* FORK, EXIT: pid, tid are the child's (FORK) or the exiting task's */
	uint32_t ppid, ptid;
	/* LOST */
	uint64_t lost;
} hs_perfdata_record;

typedef struct {
	uint64_t file_size, data_offset, data_size;
	uint64_t records, samples, mmaps, comms, forks, exits, others;
	uint64_t lost_records; /* LOST records */
	uint64_t lost;         /* the events they say were lost */
	uint64_t undecoded_samples;
} hs_perfdata_stats;

/* True when the file starts with "PERFILE2". */
bool hs_perfdata_sniff(const char *path);

/* Opens and reads the header, attrs and features. HS_EINVAL (with problems,
 * which hs_perfdata_problem_at still gives when *out is set) for a file this
 * reader refuses; HS_EIO, HS_ENOENT, HS_ENOMEM. On HS_EINVAL *out is the
 * reader, for its problems; close it in every case where *out is not NULL. */
hs_status hs_perfdata_open(const char *path, hs_perfdata **out);
hs_status hs_perfdata_open_mem(const void *data, size_t size, hs_perfdata **out);
void hs_perfdata_close(hs_perfdata *pd);

size_t hs_perfdata_attr_count(const hs_perfdata *pd);
const hs_perfdata_attr *hs_perfdata_attr_at(const hs_perfdata *pd, size_t i);
size_t hs_perfdata_build_id_count(const hs_perfdata *pd);
const hs_perfdata_build_id *hs_perfdata_build_id_at(const hs_perfdata *pd, size_t i);

/* Returns nonzero to stop the walk. */
typedef int (*hs_perfdata_record_fn)(const hs_perfdata_record *r, void *ctx);

/* Walks the data section in file order until its end, the callback stops it
 * or damage does (a problem says where); HS_OK in each case. The stats count
 * what the last walk saw. */
hs_status hs_perfdata_foreach(hs_perfdata *pd, hs_perfdata_record_fn fn, void *ctx);
const hs_perfdata_stats *hs_perfdata_get_stats(const hs_perfdata *pd);

size_t hs_perfdata_problem_count(const hs_perfdata *pd);
const hs_problem *hs_perfdata_problem_at(const hs_perfdata *pd, size_t i);
const hs_problems *hs_perfdata_problems(const hs_perfdata *pd);

#endif
