/* hindsight/msg.h: the one channel through which library code tells the user what it does: progress, warnings, failures. */
#ifndef HINDSIGHT_MSG_H
#define HINDSIGHT_MSG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "hindsight/status.h"

/*
 * Library code never prints: it hands each message to a sink (hs_msg) with a
 * level and the component it comes from, and the program decides the prefix
 * and where it goes (the engine: "engine: " on stdout/stderr, teed to
 * main.log; later a live view or a JSON status stream). Problems in input
 * files are not messages but data (hindsight/problem.h, hindsight/diag.h).
 *
 * Levels: INFO is progress (a session started, a file written); WARN is
 * something lost, skipped or refused while the work goes on (dropped data, an
 * event the kernel lacks, a snapshot not taken); ERROR is a step the caller
 * asked for that failed (a session would not start, a file was not written);
 * DEBUG is detail nobody needs unless looking for a bug.
 *
 * Ownership: an hs_msg is borrowed by whoever it is given to, for as long as
 * that object lives (a backend: from start to free); the sink's fn may be
 * called from any thread of the library (the snapshot and file-rewrite
 * threads speak while the loop does), so it must be thread-safe, as
 * hs_msg_file_fn is. `text` and `source` are borrowed for the call only.
 */

typedef enum { HS_MSG_DEBUG, HS_MSG_INFO, HS_MSG_WARN, HS_MSG_ERROR } hs_msg_level;

/* One message: `text` has no prefix and no trailing newline; `source` names
 * the component ("ftrace", "etw", "replay", "run", "launch", "trigger"). */
typedef void (*hs_msg_fn)(void *ctx, hs_msg_level level, const char *source, const char *text);

/* debug: DEBUG messages reach fn only when set (the engine's --verbose); hs_msg_vsay drops them otherwise, before
 * formatting, whatever the sink (a file, the live view, main.log) or none. A wrapper passes its inner's on. */
typedef struct hs_msg {
	hs_msg_fn fn;
	void *ctx;
	bool debug;
} hs_msg;

/* Formats and hands one message to m. A NULL m (or m->fn) writes
 * "source: text\n" to stderr, so a caller that did not set a sink still sees
 * failures. */
void hs_msg_say(const hs_msg *m, hs_msg_level level, const char *source, const char *fmt, ...) HS_PRINTF_FMT(4, 5);
void hs_msg_vsay(const hs_msg *m, hs_msg_level level, const char *source, const char *fmt, va_list ap)
	HS_PRINTF_FMT(4, 0);

/* A ready-made sink for programs: "prefix: text\n" on f, one whole line at a
 * time under the stream's lock and flushed, so lines from several threads
 * never mix. ERROR messages go to err instead when it is not NULL (the engine:
 * progress on stdout, failures on stderr). A NULL prefix prints the source. */
typedef struct {
	FILE *f;
	FILE *err;
	const char *prefix;
} hs_msg_file;
/* ctx: an hs_msg_file, borrowed for as long as the hs_msg that holds it. */
void hs_msg_file_fn(void *ctx, hs_msg_level level, const char *source, const char *text);

#endif
