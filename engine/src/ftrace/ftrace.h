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
hs_status hs_dat_write(const char *path, const char *clock, int ncpu, char *const *cpu_files,
		       struct hs_dat_event_list *events, bool kallsyms, const hs_msg *msg);

/* One CPU's data in trace.dat v7's compressed chunk layout (datz.c): the
 * chunk count, then per chunk its compressed and raw sizes and one zstd frame. */
typedef struct {
	unsigned char *data;
	size_t len, cap;
	uint64_t raw; /* uncompressed bytes (whole pages) */
} hs_datz;

/* Compresses `bytes` of ring pages into `z` (reused: its buffer grows), in
 * chunks of HS_LINUX_DAT_CHUNK_PAGES pages at zstd `level`. Thread-safe. */
hs_status hs_datz_compress(const unsigned char *pages, uint64_t bytes, size_t subbuf, int level, hs_datz *z);
void hs_datz_free(hs_datz *z);

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
	const hs_msg *msg;
	int err;               /* out: errno of the failure, 0 on success */
	uint64_t header_bytes; /* out: bytes before the CPU data (headers, kallsyms, comms) */
	uint64_t file_bytes;   /* out: the finished file's size */
} hs_dat_opts;
hs_status hs_dat_write_opts(const char *path, int ncpu, char *const *cpu_files, hs_dat_opts *o);

/* HS_ELIMIT (and a sentence in `why`) when a CPU's data is more than
 * libtracecmd can write into one .dat (HS_LINUX_DAT_MAX_CPU_BYTES). */
hs_status hs_dat_check_cpu_bytes(uint64_t per_cpu_bytes, char *why, size_t why_len);

/* Compressed bytes per raw byte for `len` bytes of `fd` from `off`, with the
 * compression hs_dat_write_opts uses; 1.0 when there is none. */
double hs_dat_compression_ratio(int fd, uint64_t off, uint64_t len, size_t subbuf);

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
