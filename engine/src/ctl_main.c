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
#include "hindsight/strbuf.h"
#include "run/ctl.h"
#include "run/ctl_json.h"

#ifndef _WIN32
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#endif

static void ctl_usage(FILE *f)
{
	fputs("usage: engine ctl [--rules PROFILE | --socket PATH] status [--json]\n"
	      "       engine ctl [--rules PROFILE | --socket PATH] snapshot [--name N]\n"
	      "       engine ctl [--rules PROFILE | --socket PATH] stop\n"
	      "\n"
	      "Asks the engine recording PROFILE (default stutter.yaml) through its control socket,\n"
	      "<run.dir>/.ctl-<profile>.sock under the working directory (docs/ctl.md):\n"
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

#ifdef _WIN32

int hs_ctl_main(int argc, char **argv, const char *argv0, const hs_msg *msg)
{
	(void)argv0;
	g_msg = msg;
	if (argc > 0 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
		ctl_usage(stdout);
		return HS_EXIT_OK;
	}
	say(HS_MSG_ERROR, "engine ctl is not supported on Windows yet (the named-pipe channel is not built); "
			  "Ctrl+Break takes a snapshot, Ctrl+C stops");
	return HS_EXIT_NO_BACKEND;
}

#else

/* The socket of the profile's engine: <run.dir>/.ctl-<name>.sock, from the rules. */
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
	if ((sock = hs_ctl_socket_path(rs->run.dir, rs->name)))
		*rc = HS_EXIT_OK;
out:
	hs_rules_free(rs);
	hs_diags_free(d);
	free(path);
	free(tried);
	return sock;
}

static int connect_to(const char *path)
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
	if (!connect(fd, (struct sockaddr *)&sa, sizeof sa))
		return fd;
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

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* One reply line (without its newline) into line; false (said) on the end of
 * the stream, a timeout or a line past HS_CTL_MAX_REPLY_BYTES. */
static bool read_line(int fd, hs_strbuf *line, int wait_ms)
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
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = now >= until ? 0 : poll(&p, 1, (int)(until - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			say(HS_MSG_ERROR, "the engine did not answer within %d s", wait_ms / 1000);
			return false;
		}
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
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
static hs_ctl_val *ask(int fd, const char *request, int *rc)
{
	hs_strbuf line = {0};
	hs_ctl_val *reply = NULL;
	char why[128] = "";
	size_t len = strlen(request), off = 0;
	*rc = HS_EXIT_RUN_FAILED;
	while (off < len) {
		ssize_t n = send(fd, request + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			say(HS_MSG_ERROR, "cannot send the request: %s", strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	if (!read_line(fd, &line, HS_CTL_REPLY_WAIT_MS))
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

static int do_status(int fd, bool json)
{
	int rc;
	hs_ctl_val *reply = ask(fd, "{\"id\":1,\"cmd\":\"status\"}\n", &rc);
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
static bool folder_is_ours(const char *dir, const char *entry, const char *name, const struct timespec *t0)
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
	if (st.st_mtim.tv_sec < t0->tv_sec || (st.st_mtim.tv_sec == t0->tv_sec && st.st_mtim.tv_nsec < t0->tv_nsec))
		return false;
	snprintf(path, sizeof path, "%s/%s/snapshot.json", dir, entry);
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	char buf[65536];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, "engine ctl snapshot") != NULL;
}

static int do_snapshot(int fd, const char *name, const char *sock)
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
	/* File times are the realtime clock's; a folder older than this is not ours. */
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	t0.tv_sec -= 1; /* file systems with coarse timestamps (ext4 jiffies) may round down */
	hs_ctl_val *reply = ask(fd, req.oom ? "" : hs_sb_cstr(&req), &rc);
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
		struct stat st;
		if (!found[0] && stat(sock, &st)) {
			say(HS_MSG_ERROR, "the engine stopped before the snapshot folder was complete");
			break;
		}
		if (!found[0])
			usleep(100000);
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

static int do_stop(int fd)
{
	int rc;
	hs_ctl_val *reply = ask(fd, "{\"id\":1,\"cmd\":\"stop\"}\n", &rc);
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
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = now >= until ? 0 : poll(&p, 1, (int)(until - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			say(HS_MSG_ERROR, "the engine (pid %lu) has not finished within %d s", pid, HS_CTL_STOP_WAIT_S);
			hs_ctl_val_free(reply);
			return HS_EXIT_RUN_FAILED;
		}
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
	}
	while (pid && process_alive(pid) && now_ms() < until)
		usleep(50000);
	if (pid && process_alive(pid)) {
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
		} else if (!strcmp(a, "--socket") && has_val && !cmd) {
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
		say(HS_MSG_ERROR, "%s", !cmd ? "ctl needs status, snapshot or stop" : "ctl takes --rules or --socket, not both");
		ctl_usage(stderr);
		return HS_EXIT_USAGE;
	}
	int rc = HS_EXIT_OK;
	char *sock = sock_arg ? strdup(sock_arg) : socket_of_rules(rules ? rules : "stutter.yaml", argv0, &rc);
	if (!sock)
		return rc != HS_EXIT_OK ? rc : HS_EXIT_RUN_FAILED;
	/* A reader that goes away must not kill the client mid-write either. */
	signal(SIGPIPE, SIG_IGN);
	int fd = connect_to(sock);
	if (fd < 0) {
		free(sock);
		return -fd;
	}
	if (!strcmp(cmd, "status"))
		rc = do_status(fd, json);
	else if (!strcmp(cmd, "snapshot"))
		rc = do_snapshot(fd, name, sock);
	else
		rc = do_stop(fd);
	close(fd);
	free(sock);
	return rc;
}

#endif
