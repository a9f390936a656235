/* run/capture.c: the capture-time reports (run/capture.h): a queue of complete snapshot folders, one low-priority worker that reports them, results for the loop, and the final rings' report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#endif

#include "hindsight/limits.h"
#include "hindsight/report.h"
#include "run/capture.h"
#include "run/live_lock.h"
#include "run/os.h"
#include "util/compat.h"

typedef struct {
	unsigned seq;
	char *trigger, *folder;
} job;

/* A report's outcome, its strings owned (freed when the next one is taken or at free). */
typedef struct {
	unsigned seq;
	char *trigger, *folder;
	hs_rundoc_report rep;
	char *strs[6]; /* the strings of rep */
} result;

struct hs_capture {
	const hs_ruleset *rs;
	const char *rules_path;
	const hs_msg *msg;
	bool on;
	hs_mutex mu;
	hs_cond cv;
	job jobs[HS_CAPTURE_MAX_QUEUED];
	size_t j_head, j_len;
	bool busy; /* the worker is reporting one */
	result done[HS_CAPTURE_MAX_QUEUED];
	size_t d_head, d_len;
	bool stop;
	bool running;
	hs_thread thread;
	result shown; /* the status's last snapshot (the loop's thread) */
	result final; /* the final rings' report */
};

static void say(const hs_capture *c, hs_msg_level level, const char *fmt, ...) HS_PRINTF_FMT(3, 4);
static void say(const hs_capture *c, hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_msg_vsay(c->msg, level, "report", fmt, ap);
	va_end(ap);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void result_free(result *r)
{
	free(r->trigger);
	free(r->folder);
	for (size_t i = 0; i < sizeof r->strs / sizeof r->strs[0]; i++)
		free(r->strs[i]);
	memset(r, 0, sizeof *r);
}

/* rep's strings as copies owned by r (an allocation that fails leaves that string NULL). */
static void result_own(result *r, const hs_rundoc_report *rep)
{
	r->rep = *rep;
	const char **fields[] = {&r->rep.state, &r->rep.path, &r->rep.verdict, &r->rep.verdict_more, &r->rep.kind,
				 &r->rep.comm};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		*fields[i] = r->strs[i] = dup_or_null(*fields[i]);
	/* error is one of hs_strerror's or the report's static words: kept as it is */
}

/* Builds and writes the report of folder into it; rep's strings stay valid until *rpt is freed. */
static hs_status report_folder(hs_capture *c, const char *folder, hs_report **rpt, hs_rundoc_report *rep)
{
	uint64_t t0 = hs_os_monotonic_ms();
	hs_report_opts o = {
		.input = folder,
		.ruleset = c->rs,
		.ruleset_path = c->rules_path,
		.generator = "hindsight engine (capture-time report)",
		.own_files = true,
		.msg = c->msg,
	};
	*rep = (hs_rundoc_report){.state = "failed", .path = folder, .pid = -1};
	if (!hs_report_has_input(folder)) {
		rep->state = "none";
		rep->path = NULL;
		rep->error = "its sessions wrote no file a report reads (trace.dat or .etl)";
		return HS_EINVAL;
	}
	hs_status st = hs_report_build(&o, rpt);
	if (st == HS_OK)
		st = hs_report_write(*rpt);
	rep->seconds = (double)(hs_os_monotonic_ms() - t0) / 1000.0;
	if (st != HS_OK) {
		rep->error = hs_strerror(st);
		return st;
	}
	rep->state = "written";
	rep->verdict = hs_report_verdict(*rpt, 0);
	rep->verdict_more = hs_report_verdict(*rpt, 1)[0] ? hs_report_verdict(*rpt, 1) : NULL;
	int pid = -1;
	if (hs_report_lead(*rpt, &rep->kind, &pid, &rep->comm)) {
		rep->pid = pid;
		if (rep->comm && !rep->comm[0])
			rep->comm = NULL;
	}
	rep->damaged = hs_report_damaged(*rpt);
	return HS_OK;
}

/* snapshot.json again, with its report's state (its one reader and writer: nothing else changes). */
static void update_snapshot_json(hs_capture *c, const char *folder, const hs_rundoc_report *rep)
{
	hs_arena a = {0};
	hs_rundoc_snapshot d = {0};
	hs_strbuf path = {0}, sb = {0};
	hs_sb_printf(&path, "%s/snapshot.json", folder);
	hs_status st = path.oom ? HS_ENOMEM : hs_rundoc_snapshot_read(hs_sb_cstr(&path), &a, &d);
	if (st == HS_OK) {
		d.has_report = true;
		d.report = *rep;
		st = hs_rundoc_snapshot_write(&d, &sb);
		st = st == HS_OK ? hs_os_write_file_synced(hs_sb_cstr(&path), &sb) : st;
	}
	if (st != HS_OK)
		say(c, HS_MSG_WARN, "cannot update %s with the report's state: %s", path.oom ? folder : hs_sb_cstr(&path),
		    hs_strerror(st));
	hs_sb_free(&sb);
	hs_sb_free(&path);
	hs_arena_free(&a);
}

/* One snapshot: its report, snapshot.json, main.log, and the result for the loop. */
static void run_job(hs_capture *c, const job *jb)
{
	hs_report *rpt = NULL;
	hs_rundoc_report rep;
	hs_status st = report_folder(c, jb->folder, &rpt, &rep);
	update_snapshot_json(c, jb->folder, &rep);
	if (st == HS_OK)
		say(c, HS_MSG_INFO, "snapshot %03u-%s: %s (report.txt, report.json, report.html in %s, %.1f s)", jb->seq,
		    jb->trigger, rep.verdict, jb->folder, rep.seconds);
	else if (!strcmp(rep.state, "none"))
		say(c, HS_MSG_INFO, "snapshot %03u-%s: no report: %s", jb->seq, jb->trigger, rep.error);
	else
		say(c, HS_MSG_WARN, "snapshot %03u-%s: no report (%s); the snapshot itself is complete in %s", jb->seq,
		    jb->trigger, rep.error, jb->folder);
	hs_mutex_lock(&c->mu);
	if (c->d_len == HS_CAPTURE_MAX_QUEUED) { /* the loop is far behind: the oldest result goes */
		result_free(&c->done[c->d_head]);
		c->d_head = (c->d_head + 1) % HS_CAPTURE_MAX_QUEUED;
		c->d_len--;
	}
	result *r = &c->done[(c->d_head + c->d_len++) % HS_CAPTURE_MAX_QUEUED];
	memset(r, 0, sizeof *r);
	r->seq = jb->seq;
	r->trigger = dup_or_null(jb->trigger);
	r->folder = dup_or_null(jb->folder);
	result_own(r, &rep);
	hs_mutex_unlock(&c->mu);
	hs_report_free(rpt);
}

/* The worker runs below the recording loop: its CPU and disk time go to the recording first. */
static void lower_priority(void)
{
#ifdef _WIN32
	SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
#elif defined(__linux__)
	/* Linux's nice and I/O priority are per thread: this one only. I/O: best effort, the lowest level (7). */
	pid_t tid = (pid_t)syscall(SYS_gettid);
	setpriority(PRIO_PROCESS, (id_t)tid, HS_CAPTURE_NICE);
	syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, tid, (2 << 13) | 7 /* IOPRIO_CLASS_BE, level 7 */);
#endif
}

static HS_THREAD_MAIN(worker_main, arg)
{
	hs_capture *c = arg;
	lower_priority();
	hs_mutex_lock(&c->mu);
	for (;;) {
		while (!c->j_len && !c->stop)
			hs_cond_wait_ms(&c->cv, &c->mu, 1000);
		if (c->stop)
			break; /* what is left keeps "pending" (hs_capture_finish waited for it as long as it may) */
		job jb = c->jobs[c->j_head];
		c->j_head = (c->j_head + 1) % HS_CAPTURE_MAX_QUEUED;
		c->j_len--;
		c->busy = true;
		hs_mutex_unlock(&c->mu);
		run_job(c, &jb);
		free(jb.trigger);
		free(jb.folder);
		hs_mutex_lock(&c->mu);
		c->busy = false;
	}
	hs_mutex_unlock(&c->mu);
	return HS_THREAD_DONE;
}

hs_capture *hs_capture_new(const hs_ruleset *rs, const char *rules_path, bool on, const hs_msg *msg)
{
	hs_capture *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->rs = rs;
	c->rules_path = rules_path;
	c->msg = msg;
	c->on = on;
	if (!on)
		return c;
	c->running = hs_worker_start(&c->mu, &c->cv, &c->thread, worker_main, c);
	if (!c->running) {
		hs_msg_say(msg, HS_MSG_ERROR, "report", "cannot start the capture-time report thread");
		free(c);
		return NULL;
	}
	return c;
}

void hs_capture_attach(hs_capture *c, hs_snapshots *sn)
{
	hs_snapshots_set_reports(sn, c->on ? "pending" : "off", c->on ? hs_capture_on_taken : NULL, c);
}

void hs_capture_on_taken(void *ctx, unsigned seq, const char *trigger, const char *folder)
{
	hs_capture *c = ctx;
	if (!c->on)
		return;
	job jb = {seq, dup_or_null(trigger), dup_or_null(folder)};
	bool queued = false;
	hs_mutex_lock(&c->mu);
	if (jb.trigger && jb.folder && c->j_len < HS_CAPTURE_MAX_QUEUED) {
		c->jobs[(c->j_head + c->j_len++) % HS_CAPTURE_MAX_QUEUED] = jb;
		queued = true;
		hs_cond_signal(&c->cv);
	}
	hs_mutex_unlock(&c->mu);
	if (queued)
		return;
	/* A burst outran the worker: the snapshot is complete, its snapshot.json and main.log say why it has no report. */
	hs_rundoc_report rep = {.state = "failed", .path = folder, .pid = -1,
				.error = jb.trigger && jb.folder ? "too many snapshots waiting for their report"
								 : "out of memory"};
	say(c, HS_MSG_WARN, "snapshot %03u-%s: no report (%s: %d); the snapshot itself is complete in %s", seq, trigger,
	    rep.error, HS_CAPTURE_MAX_QUEUED, folder);
	update_snapshot_json(c, folder, &rep);
	free(jb.trigger);
	free(jb.folder);
}

/* One JSONL line for the tap: {"type":"snapshot", ...} (docs/live.md). */
static void tap_line(hs_jsonl *jsonl, const result *r)
{
	hs_strbuf sb = {0};
	hs_json j;
	char when[40];
	struct tm tm;
	time_t now = time(NULL);
	hs_gmtime(now, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "type", "snapshot");
	hs_json_kstr(&j, "time", when);
	hs_json_kuint(&j, "snapshot", r->seq);
	hs_json_kstr(&j, "trigger", r->trigger);
	hs_json_kstr(&j, "folder", r->folder);
	hs_json_key(&j, "report");
	hs_rundoc_report_json(&j, &r->rep);
	hs_json_obj_end(&j);
	/* one line: the writer's newlines and their indentation out (strings hold no raw newline) */
	hs_strbuf line = {0};
	for (size_t i = 0; i < sb.len; i++) {
		if (sb.buf[i] != '\n') {
			hs_sb_putc(&line, sb.buf[i]);
			continue;
		}
		while (i + 1 < sb.len && (sb.buf[i + 1] == ' ' || sb.buf[i + 1] == '\t'))
			i++;
	}
	hs_sb_putc(&line, '\n');
	if (!line.oom && line.len <= HS_JSONL_MAX_LINE_BYTES)
		hs_jsonl_push_record(jsonl, line.buf, line.len);
	else
		hs_jsonl_push_record(jsonl, "", HS_JSONL_QUEUE_BYTES + 1); /* counted as dropped */
	hs_sb_free(&line);
	hs_sb_free(&sb);
}

void hs_capture_tick(hs_capture *c, hs_snapshots *sn, hs_run_status *st, hs_jsonl *jsonl)
{
	if (!c || !c->on)
		return;
	for (;;) {
		result r;
		hs_mutex_lock(&c->mu);
		bool have = c->d_len > 0;
		if (have) {
			r = c->done[c->d_head];
			memset(&c->done[c->d_head], 0, sizeof r);
			c->d_head = (c->d_head + 1) % HS_CAPTURE_MAX_QUEUED;
			c->d_len--;
		}
		hs_mutex_unlock(&c->mu);
		if (!have)
			return;
		if (sn)
			hs_snapshots_set_report(sn, r.seq, &r.rep);
		if (jsonl)
			tap_line(jsonl, &r);
		/* the newest one is the status's (engine ctl status, the live view's pinned line) */
		result_free(&c->shown);
		c->shown = r;
		if (st) {
			st->last_snapshot.present = true;
			st->last_snapshot.seq = r.seq;
			st->last_snapshot.trigger = r.trigger;
			st->last_snapshot.folder = r.folder;
			st->last_snapshot.report = r.rep;
		}
	}
}

/* Waits until nothing is queued or being reported, at most ms. */
static bool drain(hs_capture *c, uint64_t ms)
{
	uint64_t end = hs_os_monotonic_ms() + ms;
	hs_mutex_lock(&c->mu);
	while ((c->j_len || c->busy) && hs_os_monotonic_ms() < end)
		hs_cond_wait_ms(&c->cv, &c->mu, 100);
	bool empty = !c->j_len && !c->busy;
	hs_mutex_unlock(&c->mu);
	return empty;
}

void hs_capture_drain(hs_capture *c, hs_snapshots *sn)
{
	if (!c || !c->on)
		return;
	hs_os_set_busy("writing the snapshots' reports");
	if (!drain(c, HS_CAPTURE_FINISH_WAIT_MS))
		say(c, HS_MSG_WARN, "snapshot reports still running after %d s: those left say \"pending\"",
		    HS_CAPTURE_FINISH_WAIT_MS / 1000);
	hs_capture_tick(c, sn, NULL, NULL);
	hs_os_set_busy(NULL);
}

hs_status hs_capture_finish(hs_capture *c, const char *run_dir, hs_rundoc_report *out)
{
	*out = (hs_rundoc_report){.state = "off", .pid = -1};
	if (!c || !c->on)
		return HS_OK;
	hs_os_set_busy("writing the report of the final rings");
	hs_report *rpt = NULL;
	hs_rundoc_report rep;
	hs_status st = report_folder(c, run_dir, &rpt, &rep);
	result_free(&c->final);
	result_own(&c->final, &rep);
	*out = c->final.rep;
	if (st == HS_OK) {
		say(c, HS_MSG_INFO, "the final rings: %s", rep.verdict);
		if (rep.verdict_more)
			say(c, HS_MSG_INFO, "  %s", rep.verdict_more);
		say(c, HS_MSG_INFO, "report of the run: %s/report.txt (also .json and .html), %.1f s", run_dir,
		    rep.seconds);
	} else if (!strcmp(rep.state, "none")) {
		say(c, HS_MSG_INFO, "no report of the final rings: %s", rep.error);
	} else {
		say(c, HS_MSG_WARN, "no report of the final rings (%s); the run folder is complete: %s", rep.error, run_dir);
	}
	hs_report_free(rpt);
	hs_os_set_busy(NULL);
	return st;
}

void hs_capture_free(hs_capture *c)
{
	if (!c)
		return;
	if (c->on && c->running) {
		hs_mutex_lock(&c->mu);
		c->stop = true;
		hs_cond_signal(&c->cv);
		hs_mutex_unlock(&c->mu);
		hs_thread_join(c->thread, HS_THREAD_FOREVER);
		for (size_t i = 0; i < c->j_len; i++) {
			free(c->jobs[(c->j_head + i) % HS_CAPTURE_MAX_QUEUED].trigger);
			free(c->jobs[(c->j_head + i) % HS_CAPTURE_MAX_QUEUED].folder);
		}
		for (size_t i = 0; i < c->d_len; i++)
			result_free(&c->done[(c->d_head + i) % HS_CAPTURE_MAX_QUEUED]);
		hs_mutex_destroy(&c->mu);
		hs_cond_destroy(&c->cv);
	}
	result_free(&c->shown);
	result_free(&c->final);
	free(c);
}
