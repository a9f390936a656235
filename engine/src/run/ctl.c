/* run/ctl.c: the control channel's server: a Unix socket in the run root, served by the recording loop without blocking. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/strbuf.h"
#include "run/ctl.h"
#include "run/ctl_json.h"
#include "run/os.h"
#include "util/compat.h"
#include "util/json.h"

#ifndef _WIN32
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#endif

char *hs_ctl_socket_path(const char *run_root, const char *profile)
{
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s/.ctl-", run_root);
	for (const char *p = profile; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			  c == '_' || c == '-';
		hs_sb_putc(&sb, ok ? c : '_');
	}
	hs_sb_append(&sb, ".sock");
	return hs_sb_take(&sb);
}

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

#ifdef _WIN32

/* The Windows channel (a named pipe with an owner-only DACL) is not built yet:
 * engine ctl says so, and the engine records without one. */
hs_ctl *hs_ctl_open(const char *run_root, const char *profile, const char *run_dir, const hs_msg *msg)
{
	(void)run_root;
	(void)profile;
	(void)run_dir;
	hs_msg_say(msg, HS_MSG_DEBUG, "run", "no control channel: engine ctl is not supported on Windows yet");
	return NULL;
}

bool hs_ctl_serve(hs_ctl *c, const hs_ctl_loop *loop)
{
	(void)c;
	(void)loop;
	return false;
}

const char *hs_ctl_snapshot_name(hs_ctl *c)
{
	(void)c;
	return NULL;
}

void hs_ctl_close(hs_ctl *c)
{
	(void)c;
}

#else

typedef struct {
	int fd; /* -1: a free slot */
	char in[HS_CTL_MAX_REQUEST_BYTES];
	size_t in_len;
	hs_strbuf out;
	size_t out_off;
	uint64_t last_ms; /* the last time it sent a byte or took one */
	bool closing;     /* close once out is sent */
	bool hold;        /* asked to stop: kept open until hs_ctl_close, so its end means the files are written */
} client;

struct hs_ctl {
	int fd;
	char *path, *run_dir;
	dev_t dev;
	ino_t ino;
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

static int sockaddr_for(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* True when a live process accepts connections on path. */
static bool socket_alive(const char *path)
{
	struct sockaddr_un sa;
	if (sockaddr_for(path, &sa))
		return false;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	/* A full backlog (EAGAIN) is a live listener too; only ECONNREFUSED
	 * (nobody listens: its engine died) makes the file stale. */
	bool alive = !connect(fd, (struct sockaddr *)&sa, sizeof sa) || errno != ECONNREFUSED;
	close(fd);
	return alive;
}

hs_ctl *hs_ctl_open(const char *run_root, const char *profile, const char *run_dir, const hs_msg *msg)
{
	hs_ctl *c = calloc(1, sizeof(*c));
	char *tmp = NULL;
	struct sockaddr_un sa;
	struct stat st;
	if (!c)
		goto oom;
	c->fd = -1;
	c->msg = msg;
	for (size_t i = 0; i < HS_CTL_MAX_CLIENTS; i++)
		c->clients[i].fd = -1;
	if (!(c->path = hs_ctl_socket_path(run_root, profile)) || !(c->run_dir = strdup(run_dir)))
		goto oom;
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s.%lu.tmp", c->path, hs_getpid());
	if (!(tmp = hs_sb_take(&sb)))
		goto oom;
	if (sockaddr_for(tmp, &sa)) {
		hs_msg_say(msg, HS_MSG_WARN, "run", "no control channel (engine ctl): the path %s is too long for a socket",
			   c->path);
		goto fail;
	}
	if (!lstat(c->path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			hs_msg_say(msg, HS_MSG_WARN, "run", "no control channel (engine ctl): %s is there and is not a socket",
				   c->path);
			goto fail;
		}
		if (socket_alive(c->path)) {
			hs_msg_say(msg, HS_MSG_WARN, "run",
				   "no control channel (engine ctl): another engine of profile %s answers on %s", profile,
				   c->path);
			goto fail;
		}
	}
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		goto sys_fail;
	unlink(tmp); /* a leftover of a process with our pid that died here */
	/* Owner-only from the moment it exists: the mode comes from the umask
	 * at bind, so there is no window a chmod afterwards would leave open. */
	mode_t old = umask(0177);
	int brc = bind(c->fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (brc || listen(c->fd, HS_CTL_MAX_CLIENTS))
		goto sys_fail;
	/* Made under a private name, then renamed over the stale one: the path
	 * always names a socket, ours once this returns. */
	if (rename(tmp, c->path)) {
		unlink(tmp);
		goto sys_fail;
	}
	if (lstat(c->path, &st))
		goto sys_fail;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	free(tmp);
	hs_msg_say(msg, HS_MSG_INFO, "run", "control channel %s (engine ctl status | snapshot | stop)", c->path);
	return c;
sys_fail:
	hs_msg_say(msg, HS_MSG_WARN, "run", "no control channel (engine ctl): %s: %s", c->path, strerror(errno));
	goto fail;
oom:
	hs_msg_say(msg, HS_MSG_WARN, "run", "no control channel (engine ctl): out of memory");
fail:
	free(tmp);
	if (c) {
		if (c->fd >= 0)
			close(c->fd);
		free(c->path);
		free(c->run_dir);
		free(c);
	}
	return NULL;
}

static void client_drop(client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	hs_sb_free(&cl->out);
	cl->fd = -1;
	cl->in_len = 0;
	cl->out_off = 0;
	cl->closing = cl->hold = false;
}

/* The start of a reply: {"id":<id>,"ok":<ok> */
static void reply_begin(hs_strbuf *out, const hs_ctl_val *id, bool ok)
{
	hs_sb_append(out, "{\"id\":");
	if (id && id->type == HS_CTL_NUM)
		hs_sb_append(out, id->str);
	else if (id && id->type == HS_CTL_STR)
		hs_json_escape(out, id->str);
	else
		hs_sb_append(out, "null");
	hs_sb_append(out, ok ? ",\"ok\":true" : ",\"ok\":false");
}

static void reply_error(hs_strbuf *out, const hs_ctl_val *id, const char *code, const char *fmt, ...)
	HS_PRINTF_FMT(4, 5);
static void reply_error(hs_strbuf *out, const hs_ctl_val *id, const char *code, const char *fmt, ...)
{
	hs_strbuf text = {0};
	va_list ap;
	va_start(ap, fmt);
	hs_sb_vprintf(&text, fmt, ap);
	va_end(ap);
	reply_begin(out, id, false);
	hs_sb_append(out, ",\"code\":");
	hs_json_escape(out, code);
	hs_sb_append(out, ",\"error\":");
	hs_json_escape(out, hs_sb_cstr(&text));
	hs_sb_append(out, "}\n");
	hs_sb_free(&text);
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
	reply_begin(out, id, true);
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
			reply_begin(out, id, true);
			hs_sb_append(out, ",\"status\":");
			append_one_line(out, doc);
			hs_sb_append(out, "}\n");
			free(doc);
		}
	} else if (!strcmp(cmd, "snapshot")) {
		do_snapshot(c, l, req, id, out);
	} else if (!strcmp(cmd, "stop")) {
		reply_begin(out, id, true);
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
		ssize_t n = recv(cl->fd, cl->in + cl->in_len, sizeof(cl->in) - cl->in_len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
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
static bool client_write(client *cl, uint64_t now)
{
	while (cl->out_off < cl->out.len) {
		ssize_t n = send(cl->fd, cl->out.buf + cl->out_off, cl->out.len - cl->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return cl->out.len - cl->out_off <= HS_CTL_MAX_PENDING_REPLY;
		if (n <= 0)
			return false; /* EPIPE, ECONNRESET: it hung up mid-reply */
		cl->out_off += (size_t)n;
		cl->last_ms = now;
	}
	hs_sb_free(&cl->out);
	cl->out_off = 0;
	return !cl->out.oom;
}

/* The peer's uid must be this engine's euid or root. */
static bool peer_allowed(int fd, unsigned long *uid)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || len != sizeof cred) {
		*uid = (unsigned long)-1;
		return false;
	}
	*uid = cred.uid;
	return cred.uid == geteuid() || cred.uid == 0;
}

static void accept_new(hs_ctl *c, uint64_t now)
{
	for (size_t i = 0; i < HS_CTL_MAX_CLIENTS; i++) {
		client *cl = &c->clients[i];
		if (cl->fd >= 0)
			continue;
		int fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN: nobody waiting; anything else is the client's problem, not the loop's */
		unsigned long uid;
		if (!peer_allowed(fd, &uid)) {
			hs_strbuf out = {0};
			reply_error(&out, NULL, "permission", "permission denied: uid %lu is neither the engine's (%lu) nor root",
				    uid, (unsigned long)geteuid());
			if (!out.oom && send(fd, out.buf, out.len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
				/* best effort: it is refused either way */
			}
			hs_sb_free(&out);
			close(fd);
			hs_msg_say(c->msg, HS_MSG_WARN, "run", "engine ctl: refused a connection from uid %lu", uid);
			i--; /* the slot is still free */
			continue;
		}
		*cl = (client){.fd = fd, .last_ms = now};
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
		if (cl->fd < 0)
			continue;
		client_read(c, cl, loop, now);
		bool alive = client_write(cl, now);
		if (alive && !cl->hold && now - cl->last_ms >= HS_CTL_CLIENT_IDLE_MS) {
			/* Connected and silent (or not reading its reply): it loses its slot. */
			if (!cl->out.len) {
				reply_error(&cl->out, NULL, "timeout", "no complete request within %d ms",
					    HS_CTL_CLIENT_IDLE_MS);
				client_write(cl, now);
			}
			alive = false;
		}
		if (!alive || (cl->closing && !cl->out.len))
			client_drop(cl);
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
		client_drop(&c->clients[i]);
	close(c->fd);
	/* Only our own socket: an engine that replaced it (ours looked stale
	 * to it) keeps its own. */
	struct stat st;
	if (!lstat(c->path, &st) && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
	for (size_t i = 0; i < c->n_names; i++)
		free(c->names[i]);
	free(c->path);
	free(c->run_dir);
	free(c);
}

#endif
