/* run/ctl.c: the control channel's protocol, served by the recording loop without blocking over a transport (ctl_posix.c: Unix socket; ctl_win.c: named pipe). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/strbuf.h"
#include "run/ctl.h"
#include "run/ctl_json.h"
#include "run/ctl_transport.h"
#include "run/os.h"
#include "util/compat.h"
#include "util/json.h"

bool hs_ctl_name_clean(const char *name, char *out)
{
	size_t n = strlen(name);
	if (!n || n > HS_CTL_MAX_NAME_CHARS)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			  c == '-' || (c == '.' && i > 0);
		out[i] = ok ? c : '_';
	}
	out[n] = 0;
	return true;
}

typedef struct {
	hs_ctl_conn *conn; /* NULL: a free slot */
	char in[HS_CTL_MAX_REQUEST_BYTES];
	size_t in_len;
	hs_strbuf out;
	size_t out_off;
	uint64_t last_ms; /* the last time it sent a byte or took one */
	bool closing;     /* close once out is sent */
	bool hold;        /* asked to stop: kept open until hs_ctl_close, so its end means the files are written */
} client;

struct hs_ctl {
	hs_ctl_tp *tp;
	char *run_dir;
	const hs_msg *msg;
	client clients[HS_CTL_MAX_CLIENTS];
	/* Snapshot names: interned (snapshots.c keeps the folder's name until
	 * the run ends), and a queue of the requests waiting for their folder. */
	char *names[HS_CTL_MAX_NAMES];
	size_t n_names;
	const char *queue[HS_CTL_MAX_NAMES];
	size_t q_head, q_len;
	bool stop;
};

hs_ctl *hs_ctl_open(const char *run_root, const char *profile, const char *run_dir, const hs_msg *msg)
{
	hs_ctl *c = calloc(1, sizeof(*c));
	const char *name = NULL;
	if (!c || !(c->run_dir = strdup(run_dir))) {
		hs_msg_say(msg, HS_MSG_WARN, "run", "no control channel (engine ctl): out of memory");
		goto fail;
	}
	c->msg = msg;
	if (!(c->tp = hs_ctl_tp_open(run_root, profile, msg, &name)))
		goto fail; /* said */
	hs_msg_say(msg, HS_MSG_INFO, "run", "control channel %s (engine ctl status | snapshot | stop)", name);
	return c;
fail:
	if (c)
		free(c->run_dir);
	free(c);
	return NULL;
}

static void client_drop(hs_ctl *c, client *cl)
{
	if (cl->conn)
		hs_ctl_tp_drop(c->tp, cl->conn);
	hs_sb_free(&cl->out);
	cl->conn = NULL;
	cl->in_len = 0;
	cl->out_off = 0;
	cl->closing = cl->hold = false;
}

static void reply_error(hs_strbuf *out, const hs_ctl_val *id, const char *code, const char *fmt, ...)
	HS_PRINTF_FMT(4, 5);
static void reply_error(hs_strbuf *out, const hs_ctl_val *id, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_ctl_reply_verror(out, id, code, fmt, ap);
	va_end(ap);
}

/* JSON text as one line: the writer's newlines and indentation are outside
 * strings (a newline inside one is written \n), so they can all go. */
static void append_one_line(hs_strbuf *out, const char *json)
{
	for (const char *p = json; *p; p++) {
		if (*p == '\n') {
			while (p[1] == ' ' || p[1] == '\t')
				p++;
			continue;
		}
		hs_sb_putc(out, *p);
	}
}

static const char *intern_name(hs_ctl *c, const char *clean)
{
	for (size_t i = 0; i < c->n_names; i++)
		if (!strcmp(c->names[i], clean))
			return c->names[i];
	if (c->n_names == HS_CTL_MAX_NAMES)
		return NULL;
	char *s = strdup(clean);
	if (s)
		c->names[c->n_names++] = s;
	return s;
}

/* A manual hit through the trigger engine, as SIGUSR1's; the reply says
 * whether a snapshot is coming, or why not: a manual trigger of the rules
 * still in its warm-up, waiting for clear_ms after the last request, or in
 * its cool-down (the request joins the snapshot it just took). */
static void do_snapshot(hs_ctl *c, const hs_ctl_loop *l, const hs_ctl_val *req, const hs_ctl_val *id, hs_strbuf *out)
{
	const hs_ctl_val *nv = hs_ctl_val_get(req, "name");
	char clean[HS_CTL_MAX_NAME_CHARS + 1];
	const char *name = NULL;
	if (nv && nv->type != HS_CTL_NULL) {
		if (nv->type != HS_CTL_STR || !hs_ctl_name_clean(nv->str, clean)) {
			reply_error(out, id, "bad_name", "a snapshot name is a string of 1 to %d characters",
				    HS_CTL_MAX_NAME_CHARS);
			return;
		}
		if (!(name = intern_name(c, clean))) {
			reply_error(out, id, "too_many_names",
				    "this run has had %d snapshot names already; ask without a name", HS_CTL_MAX_NAMES);
			return;
		}
	}
	if (c->q_len == HS_CTL_MAX_NAMES) {
		reply_error(out, id, "busy", "%d snapshot requests are waiting already", HS_CTL_MAX_NAMES);
		return;
	}
	/* Which triggers the hit made (or kept) pending: their hits grow and
	 * they are pending after it. Only manual triggers take the hit, so the
	 * counters that grow say why there is none. */
	size_t n = hs_trigger_engine_count(l->te);
	uint64_t *before = calloc(n + 1, sizeof(*before)), warmup = 0, unarmed = 0, warmup1 = 0, unarmed1 = 0;
	if (!before) {
		reply_error(out, id, "internal", "out of memory");
		return;
	}
	for (size_t i = 0; i <= n; i++) {
		const hs_trigger_stats *st = hs_trigger_engine_stats(l->te, i == n ? SIZE_MAX : i);
		before[i] = st->hits;
		warmup += st->ignored_warmup;
		unarmed += st->ignored_unarmed;
	}
	hs_trigger_engine_manual(l->te, l->now_ns, name ? "engine ctl snapshot --name" : "engine ctl snapshot");
	bool coming = false;
	for (size_t i = 0; i <= n; i++) {
		const hs_trigger_stats *st = hs_trigger_engine_stats(l->te, i == n ? SIZE_MAX : i);
		coming |= st->hits != before[i] && st->pending;
		warmup1 += st->ignored_warmup;
		unarmed1 += st->ignored_unarmed;
	}
	free(before);
	warmup = warmup1 - warmup;
	unarmed = unarmed1 - unarmed;
	if (!coming && warmup) {
		reply_error(out, id, "warming_up", "the rules' manual trigger is still in its warm-up (warmup_s): no snapshot");
		return;
	}
	if (!coming && unarmed) {
		reply_error(out, id, "rearming",
			    "the rules' manual trigger re-arms clear_ms after the last request: no snapshot; ask again a "
			    "moment later");
		return;
	}
	if (!coming) {
		reply_error(out, id, "cooling_down",
			    "the rules' manual trigger is in its cool-down: the request joined the snapshot it took last "
			    "(no new folder); ask again after cooldown_s");
		return;
	}
	c->queue[(c->q_head + c->q_len++) % HS_CTL_MAX_NAMES] = name;
	hs_ctl_reply_begin(out, id, true);
	hs_sb_append(out, ",\"snapshot\":{\"snapshots_dir\":");
	hs_strbuf sd = {0};
	hs_sb_printf(&sd, "%s/snapshots", c->run_dir);
	hs_json_escape(out, hs_sb_cstr(&sd));
	hs_sb_free(&sd);
	hs_sb_append(out, ",\"name\":");
	if (name)
		hs_json_escape(out, name);
	else
		hs_sb_append(out, "null");
	hs_sb_append(out, "}}\n");
}

/* One request line (without its newline). */
static void handle_line(hs_ctl *c, client *cl, const hs_ctl_loop *l, const char *line, size_t len)
{
	char why[128] = "";
	hs_strbuf *out = &cl->out;
	if (len && line[len - 1] == '\r')
		len--;
	hs_ctl_val *req = hs_ctl_val_parse(line, len, why, sizeof why);
	const hs_ctl_val *id = hs_ctl_val_get(req, "id");
	const char *cmd = hs_ctl_val_str(req, "cmd");
	if (!req || req->type != HS_CTL_OBJ) {
		reply_error(out, NULL, "malformed", "not a request: %s", req ? "not a JSON object" : why);
	} else if (!cmd) {
		reply_error(out, id, "malformed", "the request has no \"cmd\" string (status, snapshot or stop)");
	} else if (!strcmp(cmd, "status")) {
		char *doc = l->status_json ? l->status_json(l->ctx) : NULL;
		if (!doc) {
			reply_error(out, id, "internal", "no status (out of memory)");
		} else {
			hs_ctl_reply_begin(out, id, true);
			hs_sb_append(out, ",\"status\":");
			append_one_line(out, doc);
			hs_sb_append(out, "}\n");
			free(doc);
		}
	} else if (!strcmp(cmd, "snapshot")) {
		do_snapshot(c, l, req, id, out);
	} else if (!strcmp(cmd, "stop")) {
		hs_ctl_reply_begin(out, id, true);
		hs_sb_printf(out, ",\"stopping\":true,\"pid\":%lu,\"run_dir\":", hs_getpid());
		hs_json_escape(out, c->run_dir);
		hs_sb_append(out, "}\n");
		hs_msg_say(c->msg, HS_MSG_INFO, "run", "stop asked for (engine ctl stop)");
		c->stop = true;
		cl->hold = true;
	} else {
		reply_error(out, id, "unknown", "unknown request '%.64s' (status, snapshot or stop)", cmd);
	}
	hs_ctl_val_free(req);
}

/* Reads what the client sent and answers each complete line. */
static void client_read(hs_ctl *c, client *cl, const hs_ctl_loop *l, uint64_t now)
{
	for (;;) {
		if (cl->closing || cl->hold)
			return; /* nothing more is read from it */
		ptrdiff_t n = hs_ctl_tp_recv(c->tp, cl->conn, cl->in + cl->in_len, sizeof(cl->in) - cl->in_len);
		if (n == 0)
			return;
		if (n < 0) {
			/* Its end (or an error): what is queued for it is still sent. */
			cl->closing = true;
			return;
		}
		cl->last_ms = now;
		cl->in_len += (size_t)n;
		char *nl;
		while (!cl->closing && !cl->hold && (nl = memchr(cl->in, '\n', cl->in_len))) {
			size_t len = (size_t)(nl - cl->in);
			handle_line(c, cl, l, cl->in, len);
			memmove(cl->in, nl + 1, cl->in_len - len - 1);
			cl->in_len -= len + 1;
		}
		if (cl->in_len == sizeof(cl->in)) {
			/* The line's end is lost: answer once and hang up. */
			reply_error(&cl->out, NULL, "too_long", "a request line is at most %d bytes",
				    HS_CTL_MAX_REQUEST_BYTES);
			cl->in_len = 0;
			cl->closing = true;
		}
	}
}

/* Sends what is queued without waiting; false when the client is gone. */
static bool client_write(hs_ctl *c, client *cl, uint64_t now)
{
	while (cl->out_off < cl->out.len) {
		ptrdiff_t n = hs_ctl_tp_send(c->tp, cl->conn, cl->out.buf + cl->out_off, cl->out.len - cl->out_off);
		if (n == 0)
			return cl->out.len - cl->out_off <= HS_CTL_MAX_PENDING_REPLY;
		if (n < 0)
			return false; /* it hung up mid-reply */
		cl->out_off += (size_t)n;
		cl->last_ms = now;
	}
	hs_sb_free(&cl->out);
	cl->out_off = 0;
	return !cl->out.oom;
}

/* Takes waiting clients into the free slots (the transport refuses other users). */
static void accept_new(hs_ctl *c, uint64_t now)
{
	for (size_t i = 0; i < HS_CTL_MAX_CLIENTS; i++) {
		client *cl = &c->clients[i];
		if (cl->conn)
			continue;
		hs_ctl_conn *conn = hs_ctl_tp_accept(c->tp);
		if (!conn)
			return; /* nobody waiting */
		*cl = (client){.conn = conn, .last_ms = now};
	}
}

bool hs_ctl_serve(hs_ctl *c, const hs_ctl_loop *loop)
{
	if (!c)
		return false;
	uint64_t now = hs_os_monotonic_ms();
	accept_new(c, now);
	for (size_t i = 0; i < HS_CTL_MAX_CLIENTS; i++) {
		client *cl = &c->clients[i];
		if (!cl->conn)
			continue;
		client_read(c, cl, loop, now);
		bool alive = client_write(c, cl, now);
		if (alive && !cl->hold && now - cl->last_ms >= HS_CTL_CLIENT_IDLE_MS) {
			/* Connected and silent (or not reading its reply): it loses its slot. */
			if (!cl->out.len) {
				reply_error(&cl->out, NULL, "timeout", "no complete request within %d ms",
					    HS_CTL_CLIENT_IDLE_MS);
				client_write(c, cl, now);
			}
			alive = false;
		}
		if (!alive || (cl->closing && !cl->out.len))
			client_drop(c, cl);
	}
	/* Slots freed above take the next waiting connections at once. */
	accept_new(c, now);
	return c->stop;
}

const char *hs_ctl_snapshot_name(hs_ctl *c)
{
	if (!c || !c->q_len)
		return NULL;
	const char *name = c->queue[c->q_head];
	c->q_head = (c->q_head + 1) % HS_CTL_MAX_NAMES;
	c->q_len--;
	return name;
}

void hs_ctl_close(hs_ctl *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < HS_CTL_MAX_CLIENTS; i++)
		client_drop(c, &c->clients[i]);
	hs_ctl_tp_close(c->tp);
	for (size_t i = 0; i < c->n_names; i++)
		free(c->names[i]);
	free(c->run_dir);
	free(c);
}
