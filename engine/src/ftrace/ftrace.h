/* ftrace/ftrace.h: private helpers of the Linux tracefs backend (trace.dat writing, raw page counting). */
#ifndef HS_FTRACE_H
#define HS_FTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
 */
hs_status hs_dat_write(const char *path, const char *clock, int ncpu, char *const *cpu_files,
		       struct hs_dat_event_list *events, bool kallsyms, FILE *msg);

/* Counts the events in a buffer of whole sub-buffers of `subbuf` bytes. */
uint64_t hs_dat_count_events(const void *buf, size_t len, size_t subbuf);

/* libtracecmd's library version this was built against (pkg-config). */
#ifndef HS_LIBTRACECMD_VERSION
#define HS_LIBTRACECMD_VERSION "unknown"
#endif

#endif
