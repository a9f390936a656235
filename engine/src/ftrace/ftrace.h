/* ftrace/ftrace.h: private helpers of the Linux tracefs backend (trace.dat writing, raw page counting). */
#ifndef HS_FTRACE_H
#define HS_FTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/msg.h"
#include "hindsight/status.h"

/* libtracecmd's event list for the format section (same layout as its private
 * struct tracecmd_event_list). Strings are owned by whoever built the list. */
struct hs_dat_event_list {
	struct hs_dat_event_list *next;
	const char *glob;
};

/*
 * Writes a trace.dat (version 7, top buffer) at `path` from one raw per-CPU
 * file per CPU (sub-buffers as trace_pipe_raw returns them), through
 * "<path>.tmp" and a rename, fsync'd. `kallsyms` false leaves kernel symbols
 * out (5 MB here; key events carry no kernel addresses). Borrows everything.
 * Comm names come from every saved_cmdlines this process has read, so a pid
 * the kernel has since forgotten keeps its name.
 */
/* The name the kernel's saved_cmdlines gives pid, merged into the table of names the .dat writers keep (a task
 * already gone keeps its last known name; the kernel's "<...>" is no name); false when none is known. */
bool hs_ftrace_comm_lookup(int pid, char *out, size_t cap);

hs_status hs_dat_write(const char *path, const char *clock, int ncpu, char *const *cpu_files,
		       struct hs_dat_event_list *events, bool kallsyms, const hs_msg *msg);

/* One CPU's data in trace.dat v7's compressed chunk layout (datz.c): per
 * chunk its compressed and raw sizes and one zstd frame, back to back (the
 * writer puts the chunk count in front), with an index. */
typedef struct {
	uint64_t off;              /* in data: the chunk's 8-byte header */
	uint32_t zlen, raw;        /* its zstd frame's bytes; raw bytes (whole pages) */
	uint32_t events;           /* ring events in its pages */
	uint64_t first_ts, last_ts; /* its first and last event's time (0 without events) */
} hs_datz_chunk;

typedef struct {
	unsigned char *data;
	size_t len, cap;
	uint64_t raw;          /* uncompressed bytes (whole pages) */
	uint64_t events;       /* in all chunks */
	hs_datz_chunk *chunks; /* [n] */
	size_t n, ncap;
	size_t first;          /* the first chunk written (a cut keeps the newest); 0 after compressing */
	void *cctx;            /* the compressor (ZSTD_CCtx), kept for the next chunk */
	struct kbuffer *kb;    /* to read the chunks' event times */
} hs_datz;

/* Starts `z` over (reused: its buffers stay) for chunks at zstd `level`. */
hs_status hs_datz_begin(hs_datz *z, int level);
/* Compresses one chunk of whole sub-buffers (`bytes` a multiple of `subbuf`,
 * at most HS_LINUX_DAT_CHUNK_PAGES of them but for a last, shorter one), and
 * counts its events (hs_dat_page_events). One thread per hs_datz. */
hs_status hs_datz_add(hs_datz *z, const unsigned char *pages, size_t bytes, size_t subbuf);
/* The same in two steps, for a CPU whose chunks several threads compress
 * (snapshot.c): hs_datz_pack compresses a chunk as hs_datz_add would, with
 * ctx's compressor (an hs_datz begun by, and used only in, the calling
 * thread), into `out` (cap at least hs_datz_bound(bytes)): its 8-byte header,
 * then the frame; *c gets its index entry but the offset. hs_datz_put appends
 * such a chunk to `z` (in the CPU's order; `z`'s own compressor unused). */
size_t hs_datz_bound(size_t bytes);
hs_status hs_datz_pack(hs_datz *ctx, const unsigned char *pages, size_t bytes, size_t subbuf, unsigned char *out,
		       size_t cap, hs_datz_chunk *c);
hs_status hs_datz_put(hs_datz *z, const unsigned char *packed, const hs_datz_chunk *c);
/* hs_datz_begin, then `bytes` of ring pages in chunks of HS_LINUX_DAT_CHUNK_PAGES. */
hs_status hs_datz_compress(const unsigned char *pages, uint64_t bytes, size_t subbuf, int level, hs_datz *z);
/* Compressed bytes (chunk headers included, the count not), raw bytes and
 * events of the chunks kept, [first, n). */
uint64_t hs_datz_kept_bytes(const hs_datz *z);
uint64_t hs_datz_kept_raw(const hs_datz *z);
uint64_t hs_datz_kept_events(const hs_datz *z);
void hs_datz_free(hs_datz *z);

/* Events in one ring sub-buffer of `subbuf` bytes, the way libtraceevent's
 * kbuffer counts them (datz.c says why not through it). */
unsigned hs_dat_page_events(const unsigned char *page, size_t subbuf);

/* A .dat's headers written ahead of time (dat.c): see hs_dat_opts.prep. */
typedef struct hs_dat_prep hs_dat_prep;

/* hs_dat_write with every knob; the outputs are filled on failure too. */
typedef struct {
	const char *clock;
	struct hs_dat_event_list *events;
	bool kallsyms;
	bool compress;      /* libtracecmd's best available compression (zstd on Debian) */
	bool quiet_enospc;  /* the caller reports a full disk itself */
	/* When set, the CPU data is these already compressed sections (one per
	 * CPU, `cpu_files` unused), written by our own BUFFER-section writer
	 * instead of libtracecmd's single-threaded copy; `compress` must be set
	 * and `page_size` is the ring's sub-buffer size. */
	const hs_datz *zcpu;
	size_t page_size;
	/* Writes only the headers (formats, kernel symbols, comms) into memory and
	 * stops, to learn header_bytes before deciding how much ring data fits a
	 * nearly full disk; nothing is created at `path`. */
	bool header_only;
	/* Headers prepared by hs_dat_prep_new, used instead of writing them now
	 * (zcpu and compress required, not header_only). Consumed by
	 * hs_dat_write_opts, success or not: it frees it and sets this NULL. */
	hs_dat_prep *prep;
	const hs_msg *msg;
	int err;               /* out: errno of the failure, 0 on success */
	uint64_t header_bytes; /* out: bytes before the CPU data (headers, kallsyms, comms) */
	uint64_t file_bytes;   /* out: the finished file's size */
	double sync_s;         /* out: seconds in the final fdatasync */
	bool prepared;         /* out: `prep` was used (else the headers were written then) */
} hs_dat_opts;
hs_status hs_dat_write_opts(const char *path, int ncpu, char *const *cpu_files, hs_dat_opts *o);

/* The same write in parts, for CPU data compressed by datz.c that arrives CPU
 * by CPU from several threads: hs_dat_open writes everything before the CPU
 * data into "<path>.tmp" (o as for hs_dat_write_opts, with `compress` and
 * `page_size` set and `zcpu` NULL; it consumes o->prep and fills
 * header_bytes and prepared); hs_dat_put_cpu writes one CPU's kept chunks
 * (each CPU at most once, from any thread, in any order; the caller keeps `z`
 * until then); hs_dat_close writes what follows the data, syncs and renames
 * (filling err, file_bytes, sync_s), hs_dat_abort removes the .tmp. Both free
 * the file. A failed put makes hs_dat_close fail with its errno. */
typedef struct hs_dat_file hs_dat_file;
hs_status hs_dat_open(const char *path, int ncpu, hs_dat_opts *o, hs_dat_file **out);
hs_status hs_dat_put_cpu(hs_dat_file *f, unsigned cpu, const hs_datz *z);
hs_status hs_dat_close(hs_dat_file *f, hs_dat_opts *o);
void hs_dat_abort(hs_dat_file *f);

/* Writes what hs_dat_write_opts writes before the comms (file header, event
 * formats, kernel symbols, printk formats; zstd-compressed) into memory, for
 * a later write of o->clock, o->events and o->kallsyms (the other fields are
 * unused; o->msg hears of a failure). `near`: a folder for the private tracing
 * directory libtracecmd reads the comms from (NULL: $TMPDIR or /tmp). The
 * result holds a memfd, that directory and a handle until freed or used. */
hs_status hs_dat_prep_new(const char *near, const hs_dat_opts *o, hs_dat_prep **out);
/* The prepared bytes (0 for NULL). */
uint64_t hs_dat_prep_bytes(const hs_dat_prep *p);
void hs_dat_prep_free(hs_dat_prep *p);

/* HS_ELIMIT (and a sentence in `why`) when a CPU's data is more than
 * libtracecmd can write into one .dat (HS_LINUX_DAT_MAX_CPU_BYTES). */
hs_status hs_dat_check_cpu_bytes(uint64_t per_cpu_bytes, char *why, size_t why_len);

/* Removes a directory and the files (links) directly in it. */
void hs_dat_remove_dir(const char *dir);

/* Counts the events in a buffer of whole sub-buffers of `subbuf` bytes. */
uint64_t hs_dat_count_events(const void *buf, size_t len, size_t subbuf);

/* Counts the events of one sub-buffer with a caller's kbuffer (no allocation). */
struct kbuffer;
unsigned hs_dat_count_page(struct kbuffer *kb, void *page);

/* libtracecmd's library version this was built against (pkg-config). */
#ifndef HS_LIBTRACECMD_VERSION
#define HS_LIBTRACECMD_VERSION "unknown"
#endif

#endif
