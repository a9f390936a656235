/* run/record.c: the normal recording mode: run folder, main.log tee, run.json, periodic stats, Ctrl+C snapshot. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hindsight/backend.h"
#include "hindsight/limits.h"
#include "run/record.h"
#include "util/json.h"
#include "util/strbuf.h"

enum { EXIT_RUN_FAILED = 2, EXIT_NOT_ROOT = 4 };

/* ---- signals: the first stops the run; later ones only say what is going on ---- */

static volatile sig_atomic_t g_signals;
static const char *volatile g_busy; /* static text, read by the handler */

static void on_signal(int sig)
{
	(void)sig;
	g_signals++;
	const char *busy = g_busy;
	if (g_signals > 1 && busy) {
		/* write() is async-signal-safe; stdio is not. */
		static const char pre[] = "\nengine: still ";
		static const char post[] = "; please wait, the files would be left incomplete otherwise\n";
		if (write(STDERR_FILENO, pre, sizeof(pre) - 1) < 0 || write(STDERR_FILENO, busy, strlen(busy)) < 0 ||
		    write(STDERR_FILENO, post, sizeof(post) - 1) < 0)
			return;
	}
}

/* ---- main.log: a thread copies stdout and stderr to the terminal and the log ---- */

typedef struct {
	int pipe_out[2], pipe_err[2];
	int orig_out, orig_err, log;
	pthread_t thread;
	bool running;
} log_tee;

static void write_all(int fd, const char *buf, ssize_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, (size_t)n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= w;
	}
}

static void *tee_main(void *arg)
{
	log_tee *t = arg;
	struct pollfd p[2] = {{.fd = t->pipe_out[0], .events = POLLIN}, {.fd = t->pipe_err[0], .events = POLLIN}};
	int open_ends = 2;
	char buf[8192];
	while (open_ends > 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				p[i].fd = -1;
				open_ends--;
				continue;
			}
			write_all(i ? t->orig_err : t->orig_out, buf, n);
			write_all(t->log, buf, n);
		}
	}
	return NULL;
}

static bool tee_start(log_tee *t, const char *log_path)
{
	memset(t, 0, sizeof(*t));
	t->log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (t->log < 0)
		return false;
	if (pipe(t->pipe_out) || pipe(t->pipe_err))
		return false;
	fflush(stdout);
	fflush(stderr);
	t->orig_out = dup(STDOUT_FILENO);
	t->orig_err = dup(STDERR_FILENO);
	if (t->orig_out < 0 || t->orig_err < 0 || dup2(t->pipe_out[1], STDOUT_FILENO) < 0 ||
	    dup2(t->pipe_err[1], STDERR_FILENO) < 0)
		return false;
	close(t->pipe_out[1]);
	close(t->pipe_err[1]);
	/* Line-buffered so the log and the terminal see lines as they happen. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	setvbuf(stderr, NULL, _IOLBF, 0);
	/* The copier must not take the stop signals meant for the main loop. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	t->running = !pthread_create(&t->thread, NULL, tee_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return t->running;
}

static void tee_stop(log_tee *t)
{
	if (!t->running)
		return;
	fflush(stdout);
	fflush(stderr);
	dup2(t->orig_out, STDOUT_FILENO);
	dup2(t->orig_err, STDERR_FILENO);
	pthread_join(t->thread, NULL);
	close(t->pipe_out[0]);
	close(t->pipe_err[0]);
	close(t->orig_out);
	close(t->orig_err);
	close(t->log);
	t->running = false;
}

/* ---- run folder and run.json ---- */

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			int rc = mkdir(path, 0700);
			*p = '/';
			if (rc && errno != EEXIST)
				return -1;
		}
	return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

/* logs/runs/<name_format>, with -2, -3... when a run started in the same second. */
static char *make_run_dir(const hs_run_rules *run)
{
	char stamp[128];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	/* The folder name format is the rules' (checked by the loader), by design. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	size_t len = strftime(stamp, sizeof(stamp), run->name_format, &tm);
#pragma GCC diagnostic pop
	if (!len)
		return NULL;
	hs_strbuf parent = {0};
	hs_sb_append(&parent, run->dir);
	char *par = hs_sb_take(&parent);
	if (!par || mkdir_p(par)) {
		free(par);
		return NULL;
	}
	for (int i = 1; i < 1000; i++) {
		hs_strbuf sb = {0};
		hs_sb_printf(&sb, "%s/%s", par, stamp);
		if (i > 1)
			hs_sb_printf(&sb, "-%d", i);
		char *dir = hs_sb_take(&sb);
		if (!dir)
			break;
		if (!mkdir(dir, 0700)) {
			free(par);
			return dir;
		}
		free(dir);
		if (errno != EEXIST)
			break;
	}
	free(par);
	return NULL;
}

static void iso_time(char *buf, size_t n, time_t t)
{
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

static char *plan_json(const hs_plan *plan)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	hs_status st = hs_plan_print_json(plan, f);
	fclose(f);
	if (st != HS_OK) {
		free(text);
		return NULL;
	}
	return text;
}

/* Written at start (end null) so a killed run still has one, and again at the end. */
static hs_status write_manifest(const char *path, const hs_ruleset *rs, const hs_plan *plan, const char *rules_path,
				time_t start, time_t end, hs_backend *b, uint64_t observed, int exit_code)
{
	hs_strbuf sb = {0};
	hs_json j;
	char ts[64];
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "profile", rs->name);
	hs_json_kstr(&j, "rules", rules_path);
	hs_json_key(&j, "rules_files");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < rs->n_files; i++)
		hs_json_str(&j, rs->files[i]);
	hs_json_arr_end(&j);
	iso_time(ts, sizeof(ts), start);
	hs_json_kstr(&j, "start", ts);
	if (end) {
		iso_time(ts, sizeof(ts), end);
		hs_json_kstr(&j, "end", ts);
		hs_json_kint(&j, "exit_code", exit_code);
	} else {
		hs_json_key(&j, "end");
		hs_json_null(&j);
	}
	hs_json_kuint(&j, "key_events_observed", observed);
	hs_json_key(&j, "sessions");
	hs_json_arr_begin(&j);
	for (size_t i = 0; b && i < hs_backend_n_sessions(b); i++) {
		const hs_session_status *s;
		if (hs_backend_session_status(b, i, &s) != HS_OK)
			continue;
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "name", s->name);
		hs_json_kstr(&j, "instance", s->kernel_name);
		hs_json_kstr(&j, "mode", hs_mode_name(s->mode));
		hs_json_kuint(&j, "real_per_cpu_kb", s->real_per_cpu_kb);
		hs_json_kuint(&j, "events_enabled", s->events_enabled);
		hs_json_kuint(&j, "events_skipped", s->events_skipped);
		if (s->mode == HS_MODE_FILE_CIRCULAR) {
			hs_json_kuint(&j, "bytes_streamed", s->bytes_streamed);
			hs_json_kuint(&j, "bytes_in_file", s->bytes_in_file);
			hs_json_kuint(&j, "chunks_dropped", s->chunks_dropped);
		} else {
			hs_json_kuint(&j, "snapshots", s->snapshots);
			hs_json_kuint(&j, "snapshot_events", s->snapshot_events);
			hs_json_kuint(&j, "snapshot_entries", s->snapshot_entries);
			hs_json_key(&j, "snapshot_s");
			hs_json_double(&j, s->snapshot_s, 3);
		}
		hs_json_key(&j, "cpus");
		hs_json_arr_begin(&j);
		for (unsigned c = 0; c < s->cpus; c++) {
			const hs_cpu_stats *cs = &s->cpu[c];
			hs_json_obj_begin(&j);
			hs_json_kuint(&j, "cpu", c);
			hs_json_kuint(&j, "entries", cs->entries);
			hs_json_kuint(&j, "overrun", cs->overrun);
			hs_json_kuint(&j, "commit_overrun", cs->commit_overrun);
			hs_json_kuint(&j, "dropped", cs->dropped);
			hs_json_kuint(&j, "read", cs->read);
			hs_json_kuint(&j, "bytes", cs->bytes);
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	/* The resolved plan as `engine --plan --json` prints it, placed last. */
	char *pj = plan_json(plan);
	hs_json_key(&j, "plan");
	hs_sb_append(&sb, pj ? pj : "null");
	free(pj);
	/* hs_json_obj_end would see the key without a value it wrote: close by hand. */
	hs_sb_append(&sb, "\n}\n");
	if (sb.oom) {
		hs_sb_free(&sb);
		return HS_ENOMEM;
	}
	hs_strbuf tmp = {0};
	hs_sb_printf(&tmp, "%s.tmp", path);
	char *tpath = hs_sb_take(&tmp);
	FILE *f = tpath ? fopen(tpath, "w") : NULL;
	hs_status st = f ? hs_sb_write_free(&sb, f) : HS_EIO;
	if (!f)
		hs_sb_free(&sb);
	if (f && (fflush(f) || fsync(fileno(f))))
		st = HS_EIO;
	if (f && fclose(f))
		st = HS_EIO;
	if (st == HS_OK && rename(tpath, path))
		st = HS_EIO;
	free(tpath);
	return st;
}

/* ---- the run ---- */

static void count_key_event(void *ctx, const hs_key_event *ev)
{
	(void)ev;
	(*(uint64_t *)ctx)++;
}

static void print_stats(hs_backend *b, uint64_t observed)
{
	hs_strbuf sb = {0};
	hs_sb_append(&sb, "engine: stats:");
	for (size_t i = 0; i < hs_backend_n_sessions(b); i++) {
		const hs_session_status *s;
		if (hs_backend_session_status(b, i, &s) != HS_OK)
			continue;
		uint64_t entries = 0, overrun = 0, dropped = 0;
		for (unsigned c = 0; c < s->cpus; c++) {
			entries += s->cpu[c].entries;
			overrun += s->cpu[c].overrun;
			dropped += s->cpu[c].dropped;
		}
		if (s->mode == HS_MODE_FILE_CIRCULAR)
			hs_sb_printf(&sb, " %s: %" PRIu64 " key events seen, file %.1f MB, %" PRIu64
					  " chunks dropped, lost %" PRIu64 ";",
				     s->name, observed, (double)s->bytes_in_file / 1048576.0, s->chunks_dropped,
				     dropped + overrun);
		else
			hs_sb_printf(&sb, " %s: ring holds %" PRIu64 " events, %" PRIu64 " overwritten;", s->name,
				     entries, overrun);
	}
	puts(hs_sb_cstr(&sb));
	hs_sb_free(&sb);
}

int hs_record_run(const hs_ruleset *rs, const hs_plan *plan, const char *rules_path)
{
	int rc = EXIT_RUN_FAILED;
	hs_backend *b = NULL;
	char *dir = NULL, *log_path = NULL, *manifest = NULL;
	log_tee t = {.running = false};
	uint64_t observed = 0;
	time_t start = time(NULL);

	if (geteuid() != 0) {
		fputs("engine: recording needs root: tracefs and its rings are root-only.\n"
		      "engine: run it as root (sudo ./run.sh, or sudo engine --rules ...); `engine --plan` works "
		      "without root.\n",
		      stderr);
		return EXIT_NOT_ROOT;
	}
	umask(077); /* traces hold command lines, paths and addresses: owner-only files */
	dir = make_run_dir(&rs->run);
	if (!dir) {
		fprintf(stderr, "engine: cannot create the run folder under %s: %s\n", rs->run.dir, strerror(errno));
		goto fail;
	}
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s/%s", dir, rs->run.log);
	log_path = hs_sb_take(&sb);
	hs_sb_printf(&sb, "%s/%s", dir, rs->run.manifest);
	manifest = hs_sb_take(&sb);
	if (!log_path || !manifest || !tee_start(&t, log_path)) {
		fprintf(stderr, "engine: cannot set up %s/%s: %s\n", dir, rs->run.log, strerror(errno));
		goto fail;
	}
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	printf("engine: run folder %s (pid %d)\n", dir, (int)getpid());
	if (hs_plan_print_text(plan, stdout) != HS_OK)
		goto fail;
	fflush(stdout);
	write_manifest(manifest, rs, plan, rules_path, start, 0, NULL, 0, 0);

	g_busy = "starting the kernel sessions";
	hs_backend_opts opts = {.msg = stdout, .interrupts = NULL}; /* one stream keeps the log in order */
	hs_status st = hs_backend_start(plan, dir, &opts, &b);
	if (st != HS_OK) {
		fprintf(stderr, "engine: the sessions could not be started (%s); nothing is being recorded\n",
			hs_strerror(st));
		goto fail;
	}
	hs_backend_set_observer(b, count_key_event, &observed);
	g_busy = NULL;
	printf("engine: recording; Ctrl+C (SIGINT) or SIGTERM saves the rings and stops\n");
	fflush(stdout);

	uint64_t interval = rs->run.stats_interval_s;
	struct timespec last;
	clock_gettime(CLOCK_MONOTONIC, &last);
	bool ok = true;
	/* Only streamed sessions need the reader awake every few tens of ms; a
	 * plan of rings alone sleeps until the next stats line or a signal
	 * (which cuts the sleep short), so an idle ring costs no CPU. */
	bool streams = false;
	for (size_t i = 0; i < plan->n_sessions; i++)
		streams |= plan->sessions[i].session->mode == HS_MODE_FILE_CIRCULAR;
	int wake_ms = streams ? HS_LINUX_STREAM_WAKE_MS : (int)(interval ? interval * 1000u : 60000u);
	while (!g_signals) {
		if (hs_backend_poll(b, wake_ms) != HS_OK && ok) {
			fputs("engine: streaming failed; see above. Still recording the rings.\n", stderr);
			ok = false;
		}
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (interval && (uint64_t)(now.tv_sec - last.tv_sec) >= interval) {
			print_stats(b, observed);
			last = now;
		}
	}

	printf("engine: stopping; saving the rings\n");
	fflush(stdout);
	g_busy = "saving the in-memory rings to disk";
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == HS_MODE_BUFFERING &&
		    hs_backend_snapshot(b, i, NULL, true) != HS_OK)
			ok = false;
	g_busy = "writing the key-event file and removing the kernel sessions";
	if (hs_backend_stop(b) != HS_OK)
		ok = false;
	print_stats(b, observed);
	g_busy = "writing the run manifest";
	if (write_manifest(manifest, rs, plan, rules_path, start, time(NULL), b, observed, ok ? 0 : EXIT_RUN_FAILED) !=
	    HS_OK) {
		fprintf(stderr, "engine: cannot write %s\n", manifest);
		ok = false;
	}
	printf("engine: %s; run folder %s\n", ok ? "DONE, all files written" : "FAILED, see the messages above",
	       dir);
	rc = ok ? 0 : EXIT_RUN_FAILED;
fail:
	g_busy = NULL;
	hs_backend_free(b);
	tee_stop(&t);
	free(dir);
	free(log_path);
	free(manifest);
	return rc;
}
