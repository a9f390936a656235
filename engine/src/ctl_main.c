/* ctl_main.c: `engine ctl status|snapshot|stop`: asks a running recorder over its control channel and waits for the answer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_main.h"
#include "hindsight/diag.h"
#include "hindsight/exitcodes.h"
#include "hindsight/json.h"
#include "hindsight/limits.h"
#include "hindsight/msg.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"
#include "hindsight/rundoc.h"
#include "hindsight/strbuf.h"
#include "run/ctl.h"
#include "run/ctl_json.h"
#include "run/os.h"

#include <dirent.h>
#include <sys/stat.h>
#ifdef _WIN32
#include "etw/etw.h"
#include "etw/etw_api.h"
#else
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#endif

/* The option that names the channel instead of the profile. */
#ifdef _WIN32
#define CHAN_OPT "--pipe"
#define CHAN_ARG "NAME"
#else
#define CHAN_OPT "--socket"
#define CHAN_ARG "PATH"
#endif

static void ctl_usage(FILE *f)
{
	fputs("usage: engine ctl [--rules PROFILE | " CHAN_OPT " " CHAN_ARG "] status [--json]\n"
	      "       engine ctl [--rules PROFILE | " CHAN_OPT " " CHAN_ARG "] snapshot [--name N]\n"
	      "       engine ctl [--rules PROFILE | " CHAN_OPT " " CHAN_ARG "] stop\n"
	      "\n"
#ifdef _WIN32
	      "Asks the engine recording PROFILE (default stutter.yaml) through its control pipe,\n"
	      "\\\\.\\pipe\\hindsight-ctl-<profile>-<hash of the full run.dir> (docs/ctl.md):\n"
#else
	      "Asks the engine recording PROFILE (default stutter.yaml) through its control socket,\n"
	      "<run.dir>/.ctl-<profile>.sock under the working directory (docs/ctl.md):\n"
#endif
	      "  status      what it records now (--json: the status document)\n"
	      "  snapshot    take a snapshot as SIGUSR1 does and wait for its folder (--name N: the folder\n"
	      "              is <NNN>-N); prints the folder's path; recording goes on\n"
	      "  stop        stop as Ctrl+C does (final snapshot, run.json) and wait until it has exited\n"
	      "\n"
	      "Exit status: 0 done, 2 no engine answers, a bad reply or usage, 4 permission refused.\n",
	      f);
}

/* The program's sink (main.c prefixes each line with the program's name, errors on stderr); data goes to stdout. */
static const hs_msg *g_msg;

static void say(hs_msg_level level, const char *fmt, ...) HS_PRINTF_FMT(2, 3);
static void say(hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_msg_vsay(g_msg, level, "ctl", fmt, ap);
	va_end(ap);
}

/* The channel of the profile's engine, from the rules: <run.dir>/.ctl-<name>.sock
 * (Linux), \\.\pipe\hindsight-ctl-<name>-<hash> (Windows). */
static char *socket_of_rules(const char *rules, const char *argv0, int *rc)
{
	char *tried = NULL, *path = hs_rules_resolve(rules, argv0, &tried), *sock = NULL;
	hs_diags *d = NULL;
	hs_ruleset *rs = NULL;
	*rc = HS_EXIT_USAGE;
	if (!path) {
		say(HS_MSG_ERROR, "rules '%s' not found; looked at:", rules);
		fputs(tried ? tried : "", stderr);
		goto out;
	}
	if (!(d = hs_diags_new()))
		goto out;
	if (hs_rules_load(path, d, &rs) != HS_OK) {
		hs_diags_render(d, stderr, HS_FMT_TEXT);
		say(HS_MSG_ERROR, "cannot read %s; nothing was asked", path);
		goto out;
	}
	if (!rs->is_profile || !rs->run.dir) {
		say(HS_MSG_ERROR, "%s is not a profile with a run folder (run.dir); give the engine's --rules", path);
		goto out;
	}
	if ((sock = hs_ctl_channel_name(rs->run.dir, rs->name)))
		*rc = HS_EXIT_OK;
out:
	hs_rules_free(rs);
	hs_diags_free(d);
	free(path);
	free(tried);
	return sock;
}

/* ---- The channel: a connected socket or pipe, and the few things the
 * commands need from the platform. Everything else is shared. ---- */

static uint64_t now_ms(void)
{
	return hs_os_monotonic_ms();
}

#ifdef _WIN32

typedef struct {
	HANDLE pipe;
	OVERLAPPED ov;
} chan;

/* Opens the pipe; on failure the exit status, negated (said). */
static int chan_open(const char *name, chan *ch)
{
	const hs_etw_api *api = hs_etw_api_get();
	WCHAR w[512];
	char eb[40];
	DWORD err;
	memset(ch, 0, sizeof(*ch));
	if (hs_etw_widen(name, w, sizeof(w) / sizeof(w[0])) != HS_OK) {
		say(HS_MSG_ERROR, "the pipe name %s is too long", name);
		return -HS_EXIT_USAGE;
	}
	uint64_t until = now_ms() + HS_CTL_PIPE_BUSY_WAIT_MS;
	for (;;) {
		err = api->pipe_open(w, &ch->pipe);
		if (err != ERROR_PIPE_BUSY)
			break;
		/* Every instance is taken: wait for one (learn.microsoft.com,
		 * WaitNamedPipeW), then race for it again. */
		uint64_t now = now_ms();
		if (now >= until)
			break;
		DWORD werr = api->pipe_wait(w, (DWORD)(until - now));
		if (werr && werr != ERROR_SEM_TIMEOUT) {
			err = werr;
			break;
		}
	}
	if (!err && (err = api->event_create(&ch->ov.hEvent))) {
		api->close_handle(ch->pipe);
		ch->pipe = NULL;
	}
	if (!err)
		return 0;
	if (err == ERROR_FILE_NOT_FOUND)
		say(HS_MSG_ERROR, "no engine is running for this profile (no control pipe %s)", name);
	else if (err == ERROR_PIPE_BUSY)
		say(HS_MSG_ERROR, "no engine answers on %s (every instance stayed busy for %d s)", name,
		    HS_CTL_PIPE_BUSY_WAIT_MS / 1000);
	else if (err == ERROR_ACCESS_DENIED)
		say(HS_MSG_ERROR, "permission denied on %s: only the engine's user at the engine's integrity level (or "
				  "LocalSystem) may control it",
		    name);
	else
		say(HS_MSG_ERROR, "cannot open %s: %s", name, hs_etw_error_label(err, eb, sizeof eb));
	return err == ERROR_ACCESS_DENIED ? -HS_EXIT_NOT_PRIVILEGED : -HS_EXIT_RUN_FAILED;
}

static void chan_close(chan *ch)
{
	const hs_etw_api *api = hs_etw_api_get();
	api->close_handle(ch->pipe);
	api->close_handle(ch->ov.hEvent);
}

/* Writes all of buf; false (said) when the engine is gone. */
static bool chan_send(chan *ch, const char *buf, size_t len)
{
	const hs_etw_api *api = hs_etw_api_get();
	char eb[40];
	DWORD n, err = api->io_write(ch->pipe, buf, (DWORD)len, &ch->ov, &n);
	if (err == ERROR_IO_PENDING && !(err = api->wait_object(ch->ov.hEvent, HS_CTL_REPLY_WAIT_MS)))
		err = api->io_result(ch->pipe, &ch->ov, &n, FALSE);
	if (err == WAIT_TIMEOUT) {
		api->io_cancel(ch->pipe, &ch->ov);
		api->io_result(ch->pipe, &ch->ov, &n, TRUE);
	}
	if (!err && n == len)
		return true;
	say(HS_MSG_ERROR, "cannot send the request: %s", hs_etw_error_label(err ? err : ERROR_WRITE_FAULT, eb, sizeof eb));
	return false;
}

/* > 0 bytes read, 0 the end of the stream, -1 nothing within wait_ms, -2 an error. */
static ptrdiff_t chan_read(chan *ch, char *buf, size_t len, uint64_t wait_ms)
{
	const hs_etw_api *api = hs_etw_api_get();
	DWORD n, err = api->io_read(ch->pipe, buf, (DWORD)len, &ch->ov, &n);
	if (err == ERROR_IO_PENDING) {
		err = api->wait_object(ch->ov.hEvent, wait_ms > 0xfffffffeu ? 0xfffffffeu : (DWORD)wait_ms);
		if (err == WAIT_TIMEOUT) {
			/* The buffer is the kernel's until the cancel is done (CancelIoEx). */
			api->io_cancel(ch->pipe, &ch->ov);
			api->io_result(ch->pipe, &ch->ov, &n, TRUE);
			return -1;
		}
		if (!err)
			err = api->io_result(ch->pipe, &ch->ov, &n, FALSE);
	}
	if (err == ERROR_BROKEN_PIPE || err == ERROR_PIPE_NOT_CONNECTED)
		return 0; /* the engine closed its end */
	if (err)
		return -2;
	return n;
}

/* Whether the engine still serves the pipe: WaitNamedPipeW says
 * ERROR_FILE_NOT_FOUND once its last instance is gone. */
static bool engine_alive(const char *name)
{
	WCHAR w[512];
	if (hs_etw_widen(name, w, sizeof(w) / sizeof(w[0])) != HS_OK)
		return false;
	return hs_etw_api_get()->pipe_wait(w, 1) != ERROR_FILE_NOT_FOUND;
}

/* Waits up to ms for the process to exit: true when it has (or is not there). */
static bool process_exited(unsigned long pid, uint64_t ms)
{
	const hs_etw_api *api = hs_etw_api_get();
	HANDLE h;
	if (api->open_process((DWORD)pid, &h))
		return true; /* ERROR_INVALID_PARAMETER: no such process any more */
	DWORD err = api->wait_process(h, (DWORD)ms);
	api->close_handle(h);
	return err != WAIT_TIMEOUT;
}

static void sleep_ms(unsigned ms)
{
	hs_etw_api_get()->sleep(ms);
}

/* File times: whole seconds are enough against a start taken a second early. */
typedef time_t stamp;

static stamp stamp_now(void)
{
	return time(NULL) - 1;
}

static bool changed_since(const struct stat *st, const stamp *t0)
{
	return st->st_mtime >= *t0;
}

#else

typedef struct {
	int fd;
} chan;

static int chan_open(const char *path, chan *ch)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		say(HS_MSG_ERROR, "the socket path %s is too long for a Unix socket", path);
		return -HS_EXIT_USAGE;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		say(HS_MSG_ERROR, "socket: %s", strerror(errno));
		return -HS_EXIT_RUN_FAILED;
	}
	if (!connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
		ch->fd = fd;
		return 0;
	}
	int e = errno;
	close(fd);
	if (e == ENOENT)
		say(HS_MSG_ERROR, "no engine is running for this profile (no control socket %s)", path);
	else if (e == ECONNREFUSED)
		say(HS_MSG_ERROR, "no engine answers on %s (its engine has died; the next one replaces it)", path);
	else if (e == EACCES || e == EPERM)
		say(HS_MSG_ERROR, "permission denied on %s: only the engine's user (or root) may control it", path);
	else
		say(HS_MSG_ERROR, "cannot connect to %s: %s", path, strerror(e));
	return e == EACCES || e == EPERM ? -HS_EXIT_NOT_PRIVILEGED : -HS_EXIT_RUN_FAILED;
}

static void chan_close(chan *ch)
{
	close(ch->fd);
}

static bool chan_send(chan *ch, const char *buf, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = send(ch->fd, buf + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			say(HS_MSG_ERROR, "cannot send the request: %s", strerror(errno));
			return false;
		}
		off += (size_t)n;
	}
	return true;
}

static ptrdiff_t chan_read(chan *ch, char *buf, size_t len, uint64_t wait_ms)
{
	uint64_t until = now_ms() + wait_ms;
	for (;;) {
		uint64_t now = now_ms();
		struct pollfd p = {.fd = ch->fd, .events = POLLIN};
		int r = now >= until ? 0 : poll(&p, 1, (int)(until - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		ssize_t n = read(ch->fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? 0 : n; /* an error ends the stream as its end does */
	}
}

static bool engine_alive(const char *sock)
{
	struct stat st;
	return !stat(sock, &st);
}

/* True while pid is a process that has not exited (a zombie has). */
static bool process_alive(unsigned long pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%lu/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return kill((pid_t)pid, 0) == 0 || errno == EPERM;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *paren = strrchr(buf, ')');
	return !(paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'));
}

static bool process_exited(unsigned long pid, uint64_t ms)
{
	uint64_t until = now_ms() + ms;
	while (process_alive(pid) && now_ms() < until)
		usleep(50000);
	return !process_alive(pid);
}

static void sleep_ms(unsigned ms)
{
	usleep(ms * 1000u);
}

/* File times are the realtime clock's; a folder older than this is not ours. */
typedef struct timespec stamp;

static stamp stamp_now(void)
{
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	t0.tv_sec -= 1; /* file systems with coarse timestamps (ext4 jiffies) may round down */
	return t0;
}

static bool changed_since(const struct stat *st, const stamp *t0)
{
	return !(st->st_mtim.tv_sec < t0->tv_sec || (st->st_mtim.tv_sec == t0->tv_sec && st->st_mtim.tv_nsec < t0->tv_nsec));
}

#endif

/* One reply line (without its newline) into line; false (said) on the end of
 * the stream, a timeout or a line past HS_CTL_MAX_REPLY_BYTES. */
static bool read_line(chan *ch, hs_strbuf *line, int wait_ms)
{
	uint64_t until = now_ms() + (uint64_t)wait_ms;
	char buf[4096];
	for (;;) {
		char *nl = line->len ? memchr(line->buf, '\n', line->len) : NULL;
		if (nl) {
			*nl = 0;
			line->len = (size_t)(nl - line->buf);
			return true;
		}
		uint64_t now = now_ms();
		ptrdiff_t n = now >= until ? -1 : chan_read(ch, buf, sizeof buf, until - now);
		if (n == -1) {
			say(HS_MSG_ERROR, "the engine did not answer within %d s", wait_ms / 1000);
			return false;
		}
		if (n <= 0) {
			say(HS_MSG_ERROR, "the engine closed the connection without a complete reply");
			return false;
		}
		hs_sb_appendn(line, buf, (size_t)n);
		if (line->oom || line->len > HS_CTL_MAX_REPLY_BYTES) {
			say(HS_MSG_ERROR, "the reply is longer than %d bytes; not an engine's", HS_CTL_MAX_REPLY_BYTES);
			return false;
		}
	}
}

/* Sends one request and reads its reply: the parsed object, or NULL with rc set. */
static hs_ctl_val *ask(chan *ch, const char *request, int *rc)
{
	hs_strbuf line = {0};
	hs_ctl_val *reply = NULL;
	char why[128] = "";
	*rc = HS_EXIT_RUN_FAILED;
	if (!chan_send(ch, request, strlen(request)))
		goto out;
	if (!read_line(ch, &line, HS_CTL_REPLY_WAIT_MS))
		goto out;
	reply = hs_ctl_val_parse(line.buf, line.len, why, sizeof why);
	const hs_ctl_val *ok = hs_ctl_val_get(reply, "ok");
	if (!reply || reply->type != HS_CTL_OBJ || !ok || ok->type != HS_CTL_BOOL) {
		say(HS_MSG_ERROR, "the reply is not an engine's (%s): %.200s", reply ? "no \"ok\"" : why,
		    line.len ? line.buf : "");
		goto bad;
	}
	if (!ok->b) {
		const char *err = hs_ctl_val_str(reply, "error"), *code = hs_ctl_val_str(reply, "code");
		say(HS_MSG_ERROR, "the engine refused: %s", err ? err : "(no reason given)");
		if (code && !strcmp(code, "permission"))
			*rc = HS_EXIT_NOT_PRIVILEGED;
		goto bad;
	}
	*rc = HS_EXIT_OK;
	goto out;
bad:
	hs_ctl_val_free(reply);
	reply = NULL;
out:
	hs_sb_free(&line);
	return reply;
}

/* The tree back as JSON through the project's writer (numbers as they were written). */
static void write_json(hs_json *j, const hs_ctl_val *v)
{
	switch (v->type) {
	case HS_CTL_NULL: hs_json_null(j); break;
	case HS_CTL_BOOL: hs_json_bool(j, v->b); break;
	case HS_CTL_NUM: hs_json_raw(j, v->str); break;
	case HS_CTL_STR: hs_json_str(j, v->str); break;
	case HS_CTL_ARR:
	case HS_CTL_OBJ:
		if (v->type == HS_CTL_ARR)
			hs_json_arr_begin(j);
		else
			hs_json_obj_begin(j);
		for (const hs_ctl_val *m = v->child; m; m = m->next) {
			if (v->type == HS_CTL_OBJ)
				hs_json_key(j, m->key);
			write_json(j, m);
		}
		if (v->type == HS_CTL_ARR)
			hs_json_arr_end(j);
		else
			hs_json_obj_end(j);
		break;
	}
}

static bool is_scalar(const hs_ctl_val *v)
{
	return v->type != HS_CTL_ARR && v->type != HS_CTL_OBJ;
}

static void print_scalar(const hs_ctl_val *v)
{
	switch (v->type) {
	case HS_CTL_NULL: fputs("-", stdout); break;
	case HS_CTL_BOOL: fputs(v->b ? "yes" : "no", stdout); break;
	case HS_CTL_NUM:
		/* Rates and fractions keep one decimal; counters print whole. */
		if (strchr(v->str, '.') || strchr(v->str, 'e') || strchr(v->str, 'E'))
			printf("%.1f", v->num);
		else
			fputs(v->str, stdout);
		break;
	case HS_CTL_STR: fputs(v->str, stdout); break;
	default: break;
	}
}

/* The status as indented "key: value" lines: scalars of an object on one
 * line each, its objects and arrays below it, an array's objects headed by
 * their name. Readable whatever fields the status grows. */
static void print_text(const hs_ctl_val *v, int indent, bool named)
{
	for (const hs_ctl_val *m = v->child; m; m = m->next) {
		if (is_scalar(m) && !(named && !strcmp(m->key, "name"))) {
			printf("%*s%s: ", indent, "", m->key ? m->key : "-");
			print_scalar(m);
			putchar('\n');
		}
	}
	for (const hs_ctl_val *m = v->child; m; m = m->next) {
		if (is_scalar(m))
			continue;
		if (m->type == HS_CTL_OBJ) {
			printf("%*s%s:\n", indent, "", m->key ? m->key : "-");
			print_text(m, indent + 2, false);
			continue;
		}
		printf("%*s%s:%s\n", indent, "", m->key ? m->key : "-", m->child ? "" : " none");
		for (const hs_ctl_val *e = m->child; e; e = e->next) {
			if (is_scalar(e)) {
				printf("%*s- ", indent + 2, "");
				print_scalar(e);
				putchar('\n');
				continue;
			}
			const char *name = hs_ctl_val_str(e, "name");
			printf("%*s- %s\n", indent + 2, "", name ? name : "");
			print_text(e, indent + 4, name != NULL);
		}
	}
}

static int do_status(chan *ch, bool json)
{
	int rc;
	hs_ctl_val *reply = ask(ch, "{\"id\":1,\"cmd\":\"status\"}\n", &rc);
	if (!reply)
		return rc;
	const hs_ctl_val *st = hs_ctl_val_get(reply, "status");
	if (!st || st->type != HS_CTL_OBJ) {
		say(HS_MSG_ERROR, "the reply has no status object");
		hs_ctl_val_free(reply);
		return HS_EXIT_RUN_FAILED;
	}
	if (json) {
		hs_strbuf sb = {0};
		hs_json j;
		hs_json_init(&j, &sb);
		write_json(&j, st);
		hs_sb_putc(&sb, '\n');
		if (hs_sb_write_free(&sb, stdout) != HS_OK)
			rc = HS_EXIT_RUN_FAILED;
	} else {
		print_text(st, 0, false);
	}
	hs_ctl_val_free(reply);
	return rc;
}

/* A snapshot folder this request made: a final name (no leading '.'), ending
 * in -<name> when one was given, changed since the request (t0) and whose
 * snapshot.json says engine ctl asked for it. */
static bool folder_is_ours(const char *dir, const char *entry, const char *name, const stamp *t0)
{
	if (entry[0] < '0' || entry[0] > '9')
		return false;
	if (name) {
		size_t ln = strlen(name), le = strlen(entry);
		if (le <= ln || entry[le - ln - 1] != '-' || strcmp(entry + le - ln, name))
			return false;
	}
	char path[4096];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, entry);
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return false;
	if (!changed_since(&st, t0))
		return false;
	snprintf(path, sizeof path, "%s/%s/snapshot.json", dir, entry);
	/* read through its one reader (hindsight/rundoc.h): the manual hit's reason names who asked */
	hs_arena a = {0};
	hs_rundoc_snapshot d = {0};
	bool ours = hs_rundoc_snapshot_read(path, &a, &d) == HS_OK && d.hit.reason &&
		    strstr(d.hit.reason, "engine ctl snapshot") != NULL;
	hs_arena_free(&a);
	return ours;
}

static int do_snapshot(chan *ch, const char *name, const char *sock)
{
	int rc;
	char clean[HS_CTL_MAX_NAME_CHARS + 1];
	if (name && !hs_ctl_name_clean(name, clean)) {
		say(HS_MSG_ERROR, "--name takes 1 to %d characters", HS_CTL_MAX_NAME_CHARS);
		return HS_EXIT_USAGE;
	}
	hs_strbuf req = {0};
	hs_sb_append(&req, "{\"id\":1,\"cmd\":\"snapshot\"");
	if (name) {
		hs_sb_append(&req, ",\"name\":");
		hs_json_escape(&req, name);
	}
	hs_sb_append(&req, "}\n");
	stamp t0 = stamp_now();
	hs_ctl_val *reply = ask(ch, req.oom ? "" : hs_sb_cstr(&req), &rc);
	hs_sb_free(&req);
	if (!reply)
		return rc;
	const hs_ctl_val *snap = hs_ctl_val_get(reply, "snapshot");
	const char *dir = hs_ctl_val_str(snap, "snapshots_dir"), *got = hs_ctl_val_str(snap, "name");
	if (!dir) {
		say(HS_MSG_ERROR, "the reply does not say where the snapshot goes");
		hs_ctl_val_free(reply);
		return HS_EXIT_RUN_FAILED;
	}
	/* The folder gets its final name only when complete (snapshots.h), so
	 * the first one seen is whole. The newest of ours wins a tie. */
	char found[4096] = "";
	for (unsigned i = 0; i < HS_CTL_SNAPSHOT_WAIT_S * 10u && !found[0]; i++) {
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (folder_is_ours(dir, e->d_name, got, &t0) &&
			    (!found[0] || strcmp(e->d_name, strrchr(found, '/') + 1) > 0))
				snprintf(found, sizeof found, "%s/%s", dir, e->d_name);
		if (d)
			closedir(d);
		if (!found[0] && !engine_alive(sock)) {
			say(HS_MSG_ERROR, "the engine stopped before the snapshot folder was complete");
			break;
		}
		if (!found[0])
			sleep_ms(100);
	}
	hs_ctl_val_free(reply);
	if (!found[0]) {
		say(HS_MSG_ERROR,
		    "no complete snapshot folder appeared in %s within %d s; the run's log says why (a full disk, or the "
		    "manual trigger's max_per_hour)",
		    dir, HS_CTL_SNAPSHOT_WAIT_S);
		return HS_EXIT_RUN_FAILED;
	}
	printf("%s\n", found);
	return HS_EXIT_OK;
}

static int do_stop(chan *ch)
{
	int rc;
	hs_ctl_val *reply = ask(ch, "{\"id\":1,\"cmd\":\"stop\"}\n", &rc);
	if (!reply)
		return rc;
	const hs_ctl_val *pv = hs_ctl_val_get(reply, "pid");
	unsigned long pid = pv && pv->type == HS_CTL_NUM ? strtoul(pv->str, NULL, 10) : 0;
	const char *run_dir = hs_ctl_val_str(reply, "run_dir");
	say(HS_MSG_INFO, "stopping the engine (pid %lu); waiting until its files are written", pid);
	fflush(stdout);
	/* The engine holds this connection until run.json is written, then exits. */
	uint64_t until = now_ms() + HS_CTL_STOP_WAIT_S * 1000ull;
	char buf[256];
	for (;;) {
		uint64_t now = now_ms();
		ptrdiff_t n = now >= until ? -1 : chan_read(ch, buf, sizeof buf, until - now);
		if (n == -1) {
			say(HS_MSG_ERROR, "the engine (pid %lu) has not finished within %d s", pid, HS_CTL_STOP_WAIT_S);
			hs_ctl_val_free(reply);
			return HS_EXIT_RUN_FAILED;
		}
		if (n <= 0)
			break;
	}
	uint64_t now = now_ms();
	if (pid && !process_exited(pid, until > now ? until - now : 0)) {
		say(HS_MSG_ERROR, "the engine (pid %lu) closed its channel but has not exited", pid);
		hs_ctl_val_free(reply);
		return HS_EXIT_RUN_FAILED;
	}
	say(HS_MSG_INFO, "stopped; run folder %s", run_dir ? run_dir : "?");
	hs_ctl_val_free(reply);
	return HS_EXIT_OK;
}

int hs_ctl_main(int argc, char **argv, const char *argv0, const hs_msg *msg)
{
	const char *rules = NULL, *sock_arg = NULL, *cmd = NULL, *name = NULL;
	bool json = false;
	g_msg = msg;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;
		if (!strcmp(a, "--rules") && has_val && !cmd) {
			rules = argv[++i];
		} else if (!strcmp(a, CHAN_OPT) && has_val && !cmd) {
			sock_arg = argv[++i];
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			ctl_usage(stdout);
			return HS_EXIT_OK;
		} else if (!cmd && (!strcmp(a, "status") || !strcmp(a, "snapshot") || !strcmp(a, "stop"))) {
			cmd = a;
		} else if (cmd && !strcmp(cmd, "status") && !strcmp(a, "--json")) {
			json = true;
		} else if (cmd && !strcmp(cmd, "snapshot") && !strcmp(a, "--name") && has_val) {
			name = argv[++i];
		} else {
			say(HS_MSG_ERROR, "ctl: unknown or incomplete argument '%s'", a);
			ctl_usage(stderr);
			return HS_EXIT_USAGE;
		}
	}
	if (!cmd || (rules && sock_arg)) {
		say(HS_MSG_ERROR, "%s", !cmd ? "ctl needs status, snapshot or stop" : "ctl takes --rules or " CHAN_OPT ", not both");
		ctl_usage(stderr);
		return HS_EXIT_USAGE;
	}
	int rc = HS_EXIT_OK;
	char *sock = sock_arg ? strdup(sock_arg) : socket_of_rules(rules ? rules : "stutter.yaml", argv0, &rc);
	if (!sock)
		return rc != HS_EXIT_OK ? rc : HS_EXIT_RUN_FAILED;
#ifndef _WIN32
	/* A reader that goes away must not kill the client mid-write either. */
	signal(SIGPIPE, SIG_IGN);
#endif
	chan ch;
	int orc = chan_open(sock, &ch);
	if (orc < 0) {
		free(sock);
		return -orc;
	}
	if (!strcmp(cmd, "status"))
		rc = do_status(&ch, json);
	else if (!strcmp(cmd, "snapshot"))
		rc = do_snapshot(&ch, name, sock);
	else
		rc = do_stop(&ch);
	chan_close(&ch);
	free(sock);
	return rc;
}
