/* run/ctl_posix.c: the control channel's transport on Linux: a Unix socket in the run root, mode 0600, peers checked with SO_PEERCRED. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hindsight/limits.h"
#include "run/ctl.h"
#include "run/ctl_transport.h"

struct hs_ctl_tp {
	int fd;
	char *path;
	dev_t dev;
	ino_t ino;
	const hs_msg *msg;
};

/* A connection is its descriptor; the struct only gives it a type. */
struct hs_ctl_conn {
	int fd;
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

hs_ctl_tp *hs_ctl_tp_open(const char *run_root, const char *profile, const hs_msg *msg, const char **name)
{
	hs_ctl_tp *c = calloc(1, sizeof(*c));
	char *tmp = NULL;
	struct sockaddr_un sa;
	struct stat st;
	if (!c)
		goto oom;
	c->fd = -1;
	c->msg = msg;
	if (!(c->path = hs_ctl_socket_path(run_root, profile)))
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
	*name = c->path;
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
		free(c);
	}
	return NULL;
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

hs_ctl_conn *hs_ctl_tp_accept(hs_ctl_tp *t)
{
	for (;;) {
		int fd = accept4(t->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return NULL; /* EAGAIN: nobody waiting; anything else is the client's problem, not the loop's */
		unsigned long uid;
		if (!peer_allowed(fd, &uid)) {
			hs_strbuf out = {0};
			hs_ctl_reply_error(&out, "permission", "permission denied: uid %lu is neither the engine's (%lu) nor root",
					   uid, (unsigned long)geteuid());
			if (!out.oom && send(fd, out.buf, out.len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
				/* best effort: it is refused either way */
			}
			hs_sb_free(&out);
			close(fd);
			hs_msg_say(t->msg, HS_MSG_WARN, "run", "engine ctl: refused a connection from uid %lu", uid);
			continue;
		}
		hs_ctl_conn *c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			return NULL;
		}
		c->fd = fd;
		return c;
	}
}

ptrdiff_t hs_ctl_tp_recv(hs_ctl_tp *t, hs_ctl_conn *c, char *buf, size_t len)
{
	(void)t;
	for (;;) {
		ssize_t n = recv(c->fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return n > 0 ? n : -1;
	}
}

ptrdiff_t hs_ctl_tp_send(hs_ctl_tp *t, hs_ctl_conn *c, const char *buf, size_t len)
{
	(void)t;
	for (;;) {
		/* MSG_NOSIGNAL: a client that hung up mid-reply is an EPIPE, never a SIGPIPE. */
		ssize_t n = send(c->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return n > 0 ? n : -1; /* EPIPE, ECONNRESET */
	}
}

void hs_ctl_tp_drop(hs_ctl_tp *t, hs_ctl_conn *c)
{
	(void)t;
	close(c->fd);
	free(c);
}

void hs_ctl_tp_close(hs_ctl_tp *t)
{
	if (!t)
		return;
	close(t->fd);
	/* Only our own socket: an engine that replaced it (ours looked stale
	 * to it) keeps its own. */
	struct stat st;
	if (!lstat(t->path, &st) && st.st_dev == t->dev && st.st_ino == t->ino)
		unlink(t->path);
	free(t->path);
	free(t);
}

char *hs_ctl_channel_name(const char *run_root, const char *profile)
{
	return hs_ctl_socket_path(run_root, profile);
}
