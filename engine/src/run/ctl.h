/* run/ctl.h: the control channel of a running recorder (engine ctl): a local socket or named pipe the recording loop serves without blocking. */
#ifndef HS_RUN_CTL_H
#define HS_RUN_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include "hindsight/msg.h"
#include "hindsight/trigger.h"

/*
 * The protocol (docs/ctl.md): one JSON object per line each way. A request is
 * {"id": any, "cmd": "status" | "snapshot" | "stop", "name": "..."} (name:
 * snapshot only, optional); the reply echoes the id with "ok": true and the
 * answer, or "ok": false with "error" (a sentence) and "code" (a word a
 * script can branch on). Linux: a Unix stream socket in the profile's run
 * root, <run.dir>/.ctl-<profile>.sock, mode 0600 from the umask it is made
 * under, every connection's peer checked with SO_PEERCRED (the engine's euid
 * or root). Windows: a named pipe whose DACL admits the engine's user and
 * LocalSystem only, labelled with the engine's integrity level (ctl_win.c).
 *
 * Nothing here blocks: hs_ctl_serve accepts, reads and writes what is ready
 * and returns. A line longer than HS_CTL_MAX_REQUEST_BYTES, a line that is
 * not a request, a connection idle for HS_CTL_CLIENT_IDLE_MS and a peer that
 * went away each cost the loop one error reply at most.
 *
 * Ownership: hs_ctl_open copies what it is given except msg (borrowed until
 * hs_ctl_close). hs_ctl_serve borrows the loop's objects for the call.
 * Only the loop's thread calls these.
 */

typedef struct hs_ctl hs_ctl;

/* What hs_ctl_serve answers with, lent by the loop for the call. */
typedef struct {
	/* The status document, one JSON object in any layout (malloc'd; NULL:
	 * out of memory); ctx is the status_json's. */
	char *(*status_json)(void *ctx);
	void *ctx;
	/* Snapshot requests go to hs_trigger_engine_manual, as SIGUSR1 does. */
	hs_trigger_engine *te;
	uint64_t now_ns; /* the sessions' clock now */
} hs_ctl_loop;

/* "<run_root>/.ctl-<profile>.sock" with the profile's characters outside
 * [A-Za-z0-9._-] as '_' (malloc'd; NULL out of memory). The engine and the
 * client both find the socket this way. */
char *hs_ctl_socket_path(const char *run_root, const char *profile);

/* The channel's name for the engine and the client: the socket path on
 * Linux; on Windows the pipe "\\.\pipe\hindsight-ctl-<profile>-<hash>", the
 * hash (FNV-1a 64) of the run root's full path without case (malloc'd; NULL:
 * out of memory or no full path). */
char *hs_ctl_channel_name(const char *run_root, const char *profile);

/* A snapshot name as it goes into a folder name: [A-Za-z0-9._-] kept, other
 * bytes '_', a leading '.' '_' (hidden names are partial folders). false
 * when it is empty or longer than HS_CTL_MAX_NAME_CHARS. out has
 * HS_CTL_MAX_NAME_CHARS + 1 bytes. */
bool hs_ctl_name_clean(const char *name, char *out);

/* Opens the channel for this run (run_dir goes into the replies). NULL when
 * it cannot, said on msg as a warning: recording goes on without it. A socket
 * left by an engine that died is replaced; one a live engine answers on is
 * not (this engine then has none). */
hs_ctl *hs_ctl_open(const char *run_root, const char *profile, const char *run_dir, const hs_msg *msg);

/* Serves what is ready now and returns; true when a client asked to stop
 * (the loop then stops as on Ctrl+C). c may be NULL. */
bool hs_ctl_serve(hs_ctl *c, const hs_ctl_loop *loop);

/* The name the oldest snapshot request still waiting for its folder asked
 * for, taken off the queue (NULL: none, or it gave no name): the loop names a
 * manual trigger's folder after it. Borrowed until hs_ctl_close. */
const char *hs_ctl_snapshot_name(hs_ctl *c);

/* Closes every connection (a client waiting on its stop request sees the end
 * of the stream: the run's files are written) and removes the socket (a
 * pipe's name goes with its last instance). */
void hs_ctl_close(hs_ctl *c);

#endif
