/* tracedat/td_int.h: the trace.dat reader's private model, shared by its parser, its CPU streams and the public API. */
#ifndef HS_TRACEDAT_TD_INT_H
#define HS_TRACEDAT_TD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/problem.h"
#include "hindsight/status.h"
#include "hindsight/tracedat.h"

/*
 * The reader reads the file format itself (trace-cmd.dat.v6(5) and .v7(5)):
 * libtracecmd 3.1 trusts the offsets, sizes and counts a file states, so a
 * damaged file crashed it (issue 24), and its per-record path took ~1 us a
 * record (docs/tracedat-notes.md). libtraceevent stays the parser of the event
 * formats and the saved comms, and the field decoder.
 *
 * Every number the file gives is checked before it is used: offsets and sizes
 * against the file's size, counts and allocations against limits.h, each ring
 * page's commit against the page and each record against the commit. What is
 * wrong becomes an hs_problem with the file offset where it is (compressed data:
 * the offset of its chunk or section), and reading goes on with what is sound.
 *
 * Files, each calling only those after it: reader.c (the public API: open,
 * the time-ordered merge of the streams, fields, filters) -> meta.c and its
 * parts (meta_int.h: headers, options, sections, buffers: a td_meta) and
 * stream.c (one CPU's ring pages to records) -> format.c (event formats
 * checked and rewritten for libtraceevent) and zio.c (bounded reads, zstd).
 */

struct tep_handle;

typedef enum { TD_COMP_NONE, TD_COMP_ZSTD } td_comp;

/* The open file and what every part of the reader needs to know of it. */
typedef struct {
	int fd;
	uint64_t size;
	unsigned version;     /* 6 or 7 */
	unsigned page_size;   /* the file header's (v6: every buffer's) */
	unsigned user_long;   /* the file header's long size: 4 or 8 */
	unsigned klong;       /* the kernel's long (the ring page's commit field): 4 or 8 */
	td_comp comp;         /* v7: the compression of flagged sections and CPU data */
	hs_problems *problems;
} td_file;

/* One CPU's data in one buffer: where it is in the file. */
typedef struct {
	int cpu;
	uint64_t off, size; /* the file's range; size cut to the file's end when it was truncated */
} td_cpu_range;

/* One buffer instance (the top one has the name ""). */
typedef struct {
	char *name;
	char *clock;        /* v7: the clock the buffer says it used; NULL when it does not */
	unsigned page_size; /* the ring's sub-buffer size */
	bool compressed;    /* v7: its CPU data is in compressed chunks */
	size_t n_cpus;
	td_cpu_range *cpus;
} td_buffer;

typedef struct {
	struct tep_handle *tep;
	td_buffer *buffers; /* the top buffer first when the file has one, then the instances in file order */
	size_t n_buffers;
	size_t n_ranges;      /* CPU ranges of all buffers (at most HS_TRACEDAT_MAX_STREAMS) */
	char clock[32];       /* the trace clock in force, "" when the file does not say */
	unsigned cpus;        /* CPUs the file has data slots for (CPUCOUNT, or the v6 header's count) */
	int64_t ts_offset;    /* ns added to every timestamp (DATE and OFFSET options), as libtracecmd does */
	uint32_t tsc_mult, tsc_shift; /* TSC2NSEC: ts = ts * mult >> shift when mult != 0 */
} td_meta;

/* Problems: the list is the caller's; at = UINT64_MAX when no offset applies. */
void td_problem(const td_file *f, hs_problem_kind kind, uint64_t at, int cpu, const char *fmt, ...)
	HS_PRINTF_FMT(5, 6);

/* --- zio.c ------------------------------------------------------------ */

/* Reads exactly n bytes at off; false (no problem listed) when the file has fewer. */
bool td_pread(const td_file *f, uint64_t off, void *buf, size_t n);

/* A bounded reader over memory or over a range of the file. `at` is the file
 * offset problems name: the read position for the file, the section's offset
 * for memory (decompressed bytes have no file offset of their own). */
typedef struct {
	const td_file *f;
	const uint8_t *mem; /* NULL: read the file */
	uint64_t pos, end;
	uint64_t at;
	bool bad; /* a read went past end: every later read fails too */
} td_cur;

void td_cur_file(td_cur *c, const td_file *f, uint64_t off, uint64_t end);
void td_cur_mem(td_cur *c, const td_file *f, const void *mem, size_t len, uint64_t at);
uint64_t td_cur_left(const td_cur *c);
/* The file offset to name in a problem about what comes next. */
uint64_t td_cur_at(const td_cur *c);
bool td_cur_get(td_cur *c, void *dst, size_t n);
bool td_cur_skip(td_cur *c, uint64_t n);
bool td_cur_u16(td_cur *c, uint16_t *v);
bool td_cur_u32(td_cur *c, uint32_t *v);
bool td_cur_u64(td_cur *c, uint64_t *v);
/* A NUL-terminated string of at most max bytes (NUL excluded), malloc'ed; NULL
 * when it is longer, cut by the end, or memory is short (*oom then). */
char *td_cur_str(td_cur *c, size_t max, bool *oom);
/* n bytes as a malloc'ed NUL-terminated copy; NULL when n is over
 * HS_TRACEDAT_MAX_META_BYTES or past the end (no bytes consumed then), or on
 * out of memory (*oom). */
char *td_cur_blob(td_cur *c, uint64_t n, bool *oom);

/* Decompresses in[0..in_len) (one zstd frame, as trace-cmd and the engine
 * write) into out[0..cap); the decompressed size in *got. HS_EINVAL when the
 * data is not valid or does not fit. */
hs_status td_unzip(void *dctx, const void *in, size_t in_len, void *out, size_t cap, size_t *got);
/* A reusable decompression context (NULL on out of memory); freed with td_zfree. */
void *td_znew(void);
void td_zfree(void *dctx);

/* --- format.c --------------------------------------------------------- */

/* A format text checked against the kernel's layout and rewritten in it (with
 * an empty print format) for tep_parse_event: HS_OK and *out (malloc'ed,
 * NUL-terminated), or HS_EINVAL with a reason in why, HS_ENOMEM. */
hs_status td_format_clean(const char *text, size_t len, char **out, char *why, size_t why_cap);
/* header_page: the size of its commit field (the kernel's long, 4 or 8); HS_EINVAL when it has none. */
hs_status td_header_page(const char *text, size_t len, unsigned *klong);

/* --- meta.c ----------------------------------------------------------- */

/* Reads the headers, options and metadata sections of an open file (f->fd,
 * f->size set), fills f's format fields and m. HS_EINVAL (a problem says why)
 * when the file cannot be read at all; damage that leaves data readable is a
 * problem and HS_OK. m is freed by td_meta_free also after a failure. */
hs_status td_meta_read(td_file *f, td_meta *m);
void td_meta_free(td_meta *m);

/* --- stream.c --------------------------------------------------------- */

/* The record a stream is at. data points into the stream's buffer: valid
 * until the stream moves on. */
typedef struct {
	uint64_t ts;          /* the ring's timestamp, before the file's offsets */
	const uint8_t *data;  /* the payload, common fields first */
	uint32_t size;        /* payload bytes (a multiple of 4, as the ring stores it) */
	uint32_t record_size; /* event header + payload */
	long long missed;     /* lost just before (first record of a page): count, -1 unknown, 0 none */
} td_rec;

/* One CPU of one buffer, read in file order a window (or compressed chunk) at a time. */
typedef struct {
	const td_file *f;
	const td_buffer *buf;
	int cpu;
	uint64_t pos, end;      /* the part of the CPU's file range not read yet */
	uint32_t chunks_left;   /* compressed: chunks not read yet */
	void *dctx;
	uint8_t *zin;           /* compressed: one chunk's compressed bytes */
	size_t zin_cap;
	uint8_t *win;           /* whole ring pages: a read window, or one decompressed chunk */
	size_t win_cap, win_len;
	uint64_t win_at;        /* file offset for problems in win: of win[0], or of the compressed chunk */
	size_t page_at;         /* offset in win of the next page to load */
	const uint8_t *pdata;   /* the current page's data, pcommit bytes */
	uint32_t pcommit, ppos;
	uint64_t pts;
	long long pmissed;
	bool pfirst;            /* no record of the page delivered yet */
	uint64_t *held;         /* bytes of buffers the whole walk holds (every stream's win and zin) */
	bool done;
	td_rec cur;
} td_stream;

/* HS_OK (also when the range is empty, or its buffer is past the walk's budget: the stream is then done,
 * with a problem for the latter), HS_ENOMEM. held counts the walk's buffer bytes (shared by its streams). */
hs_status td_stream_init(td_stream *s, const td_file *f, const td_buffer *buf, size_t cpu_index, uint64_t *held);
/* Moves to the next record: true when there is one (in s->cur). */
bool td_stream_next(td_stream *s);
void td_stream_free(td_stream *s);

/* Little-endian loads (the reader refuses files of the other endianness, so
 * these are the host's byte order on every platform we build for). */
static inline uint16_t td_rd16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline uint32_t td_rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline uint64_t td_rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

#endif
