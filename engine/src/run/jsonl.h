/* run/jsonl.h: the JSONL event tap (--events-jsonl PATH|-): one line per key event, written by a thread of its own, never blocking the recording. */
#ifndef HS_RUN_JSONL_H
#define HS_RUN_JSONL_H

#include <stddef.h>
#include <stdint.h>

#include "hindsight/msg.h"
#include "hindsight/status.h"

/*
 * The observer queues each line (hs_jsonl_push: a copy into a fixed byte ring
 * of HS_JSONL_QUEUE_BYTES under a lock held for the copy only); the writer
 * thread hands the queue to the file. A reader that falls behind fills the
 * queue, and then new lines are dropped and counted, never waited for: the
 * recording goes on at its own pace. The writer opens PATH itself (a FIFO
 * blocks until a reader opens it; it retries every HS_JSONL_POLL_MS) and
 * writes without blocking where the output is a pipe or socket, so it always
 * notices the end. At the end it has HS_JSONL_DRAIN_MS to hand over what is
 * queued; the rest counts as dropped.
 *
 * "-" is the engine's standard output as it is when hs_jsonl_open is called:
 * open before the main.log tee takes stdout over, so the lines go to the
 * reader only (and the program sends its messages to stderr).
 *
 * Ownership: open copies the path; msg is borrowed until close.
 */

typedef struct hs_jsonl hs_jsonl;

hs_status hs_jsonl_open(const char *path, const hs_msg *msg, hs_jsonl **out);

/* Queues one line (newline included); a full queue drops it (counted). Any thread. */
void hs_jsonl_push(hs_jsonl *j, const char *line, size_t len);

/* Queues one record that is not a key event (a snapshot's: {"type": "snapshot", ...}); any thread. */
void hs_jsonl_push_record(hs_jsonl *j, const char *line, size_t len);

/* Key-event lines written (records not counted), and lines dropped (both), so far. */
void hs_jsonl_counts(hs_jsonl *j, uint64_t *lines, uint64_t *dropped);

/* Hands over what is queued (at most HS_JSONL_DRAIN_MS), stops the writer,
 * closes the output, says what was written and dropped, and frees. */
void hs_jsonl_close(hs_jsonl *j, uint64_t *lines, uint64_t *dropped);

#endif
