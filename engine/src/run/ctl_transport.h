/* run/ctl_transport.h: what the control channel's protocol (ctl.c) needs from a transport: the Unix socket (ctl_posix.c) or the named pipe (ctl_win.c). */
#ifndef HS_RUN_CTL_TRANSPORT_H
#define HS_RUN_CTL_TRANSPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/msg.h"
#include "hindsight/strbuf.h"
#include "util/compat.h"

/*
 * ctl.c owns the clients (line buffering, the requests, the replies, idle
 * drop, the stop hold, the snapshot-name queue); a transport only moves
 * bytes, and nothing it does may wait. One transport is built per platform,
 * so these are plain functions, not a table.
 *
 * Ownership: hs_ctl_tp_open returns a listener that hs_ctl_tp_close frees;
 * a connection from hs_ctl_tp_accept is the caller's until hs_ctl_tp_drop.
 * msg is borrowed until hs_ctl_tp_close.
 */

typedef struct hs_ctl_tp hs_ctl_tp;
typedef struct hs_ctl_conn hs_ctl_conn;

/* Listens on the profile's channel; NULL (said on msg as a warning) when it
 * cannot. *name is the channel's name for the "control channel" message
 * (borrowed until hs_ctl_tp_close). */
hs_ctl_tp *hs_ctl_tp_open(const char *run_root, const char *profile, const hs_msg *msg, const char **name);

/* The next client waiting, or NULL when none is. A client the transport
 * refuses (another user) is answered with one "permission" line, closed
 * and logged here; the transport takes the next. */
hs_ctl_conn *hs_ctl_tp_accept(hs_ctl_tp *t);

/* Bytes the client sent: > 0 taken into buf, 0 none now, -1 its end (or an
 * error: either way nothing more will come). */
ptrdiff_t hs_ctl_tp_recv(hs_ctl_tp *t, hs_ctl_conn *c, char *buf, size_t len);

/* Bytes of buf handed to the system for the client: > 0 that many (the
 * caller drops them and calls again with the rest), 0 none now (it is not
 * reading), -1 it is gone. */
ptrdiff_t hs_ctl_tp_send(hs_ctl_tp *t, hs_ctl_conn *c, const char *buf, size_t len);

/* Closes the connection; what was handed over before is still delivered. */
void hs_ctl_tp_drop(hs_ctl_tp *t, hs_ctl_conn *c);

/* Stops listening and removes the channel's name (only if still its own). */
void hs_ctl_tp_close(hs_ctl_tp *t);

/* ctl_reply.c: the reply lines, for ctl.c and the transports. */
struct hs_ctl_val;
/* The start of a reply: {"id":<id>,"ok":<ok> (id NULL: null). */
void hs_ctl_reply_begin(hs_strbuf *out, const struct hs_ctl_val *id, bool ok);
/* One error reply line with id, code and the formatted message. */
void hs_ctl_reply_verror(hs_strbuf *out, const struct hs_ctl_val *id, const char *code, const char *fmt, va_list ap)
	HS_PRINTF_FMT(4, 0);
/* The same without an id (a transport's refusals). */
void hs_ctl_reply_error(hs_strbuf *out, const char *code, const char *fmt, ...) HS_PRINTF_FMT(3, 4);

#endif
