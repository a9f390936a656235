/* run/record.c: the normal recording mode over any backend's table: run folder, main.log tee, run.json, periodic stats, triggered and Ctrl+C snapshots. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#include "hindsight/backend.h"
#include "hindsight/exitcodes.h"
#include "hindsight/limits.h"
#include "hindsight/trigger.h"
#include "run/capture.h"
#include "run/counters.h"
#include "run/ctl.h"
#include "run/jsonl.h"
#include "run/live.h"
#include "run/live_event.h"
#include "run/manifest.h"
#include "run/os.h"
#include "run/record.h"
#include "run/snapshots.h"
#include "run/status.h"
#include "util/compat.h"
#include "util/json.h"
#include "util/strbuf.h"

/* ---- run folder and run.json ---- */

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++)
		if (*p == '/' || *p == '\\') {
			char sep = *p;
			*p = 0;
			int rc = hs_os_mkdir(path);
			*p = sep;
			if (rc && errno != EEXIST)
				return -1;
		}
	return hs_os_mkdir(path) && errno != EEXIST ? -1 : 0;
}

/* logs/runs/<name_format><suffix>, with -2, -3... when a run started in the same second. */
static char *make_run_dir(const hs_run_rules *run, const char *suffix)
{
	char stamp[128];
	struct tm tm;
	hs_os_localtime(time(NULL), &tm);
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
		hs_sb_printf(&sb, "%s/%s%s", par, stamp, suffix ? suffix : "");
		if (i > 1)
			hs_sb_printf(&sb, "-%d", i);
		char *dir = hs_sb_take(&sb);
		if (!dir)
			break;
		if (!hs_os_mkdir(dir)) {
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

/* ---- the run ---- */

typedef struct {
	uint64_t observed;
	hs_trigger_engine *te;
	const hs_backend_ops *ops;
	hs_backend *b;
	/* [n_copies]: session i has a trigger-detection instance
	 * (hs_session_status.trigger_copies): its events reach the observer twice,
	 * and the trigger engine takes the early copies only. */
	bool *copies;
	size_t n_copies;
	/* The live view and the JSONL tap (NULL when off): each streamed event
	 * is copied once (catalog: fields, story) and handed to both. */
	hs_live_catalog *cat;
	hs_live *live;
	hs_jsonl *jsonl;
	const hs_plan *plan;
	hs_strbuf line; /* the JSONL line being made, reused */
} observer_ctx;

/* Which sessions send trigger copies, asked once after start. */
static void observer_learn_copies(observer_ctx *oc)
{
	size_t n = oc->ops->n_sessions(oc->b);
	if (!n || !(oc->copies = calloc(n, sizeof(*oc->copies))))
		return; /* no array: every event feeds the triggers, as before */
	oc->n_copies = n;
	for (size_t i = 0; i < n; i++) {
		const hs_session_status *st;
		oc->copies[i] = oc->ops->session_status(oc->b, i, &st) == HS_OK && st->trigger_copies;
	}
}

static void observe_key_event(void *ctx, const hs_key_event *ev)
{
	observer_ctx *oc = ctx;
	/* Counters count what the sessions stream; the triggers take each event
	 * once: the copy where the session has a detection instance, else the event. */
	bool copies = ev->session < oc->n_copies && oc->copies[ev->session];
	if (!ev->trigger_copy)
		oc->observed++;
	if (oc->te && (ev->trigger_copy || !copies))
		hs_trigger_engine_feed(oc->te, ev, 0); /* the engine reads the clock only on a hit */
	if (ev->trigger_copy || !oc->cat || (!oc->live && !oc->jsonl))
		return;
	/* On the poll path: copies only; drawing and writing happen elsewhere. */
	hs_live_event le;
	hs_live_event_fill(oc->cat, ev, oc->ops->now_ns ? oc->ops->now_ns(oc->b) : 0, &le);
	if (oc->live)
		hs_live_push(oc->live, &le);
	if (oc->jsonl) {
		oc->line.len = 0;
		hs_live_event_jsonl(&le, oc->plan, &oc->line);
		if (!oc->line.oom && oc->line.len <= HS_JSONL_MAX_LINE_BYTES)
			hs_jsonl_push(oc->jsonl, oc->line.buf, oc->line.len);
		else
			hs_jsonl_push(oc->jsonl, "", HS_JSONL_QUEUE_BYTES + 1); /* counted as dropped */
	}
}

/* While the live view owns the terminal its messages go to the view and
 * main.log; before and after, to the program's sink as always. */
typedef struct {
	const hs_msg *inner;
	hs_live *live;
} live_sink;

static void live_sink_fn(void *ctx, hs_msg_level level, const char *source, const char *text)
{
	live_sink *ls = ctx;
	if (!hs_live_say(ls->live, level, source, text))
		hs_msg_say(ls->inner, level, source, "%s", text);
}

/* The header a terminal gets instead of the plan: what is recorded, what it pins. */
static void say_header(const hs_msg *msg, const hs_plan *plan, const char *rules_path, const char *log_path)
{
	hs_strbuf sb = {0};
	for (size_t i = 0; i < plan->n_sessions; i++) {
		const hs_plan_session *ps = &plan->sessions[i];
		hs_sb_printf(&sb, "%s%s (%s", i ? ", " : "", ps->session->name, hs_mode_name(ps->session->mode));
		if (ps->session->mode == HS_MODE_FILE_CIRCULAR && ps->session->max_file_mb)
			hs_sb_printf(&sb, ", key-event file up to %" PRIu64 " MB", ps->session->max_file_mb);
		else if (ps->memory_bytes)
			hs_sb_printf(&sb, ", %.0f MiB ring", (double)ps->memory_bytes / 1048576.0);
		hs_sb_putc(&sb, ')');
	}
	hs_msg_say(msg, HS_MSG_INFO, "run", "profile %s (%s): %zu session%s: %s; %zu trigger%s; %.0f MiB of kernel memory pinned",
		   plan->rules->name, rules_path, plan->n_sessions, plan->n_sessions == 1 ? "" : "s",
		   sb.oom ? "?" : hs_sb_cstr(&sb), plan->n_triggers, plan->n_triggers == 1 ? "" : "s",
		   (double)plan->memory_bytes / 1048576.0);
	hs_msg_say(msg, HS_MSG_INFO, "run", "the full plan is in %s (--verbose prints it here)", log_path);
	hs_sb_free(&sb);
}

/* The sessions' clock, or the monotonic clock where the backend has none
 * (then only manual triggers run, and they only need a consistent clock). */
static uint64_t clock_now(const hs_backend_ops *ops, hs_backend *b)
{
	return ops->now_ns ? ops->now_ns(b) : hs_os_monotonic_ms() * 1000000ull;
}

/* The trigger engine's clock: detection times of hits. */
static uint64_t observer_clock(void *ctx)
{
	observer_ctx *oc = ctx;
	return clock_now(oc->ops, oc->b);
}

/* One run, from the claim of its session names to the last free: what it was given, and what it made (each NULL
 * or false until made; run_free releases what was). */
typedef struct {
	const hs_ruleset *rs;
	const hs_plan *plan;
	const char *rules_path;
	const hs_record_opts *o;
	const hs_backend_ops *ops;
	const hs_msg *msg, *backend_msg; /* the live view's sinks while it is on */
	hs_backend *b;
	char *dir, *log_path, *manifest;
	bool tee, claimed, observing, ok;
	bool fresh; /* the status was refreshed at this wake-up */
	time_t start;
	char rules_hash[17];
	observer_ctx oc;
	hs_trigger_engine *te;
	hs_snapshots *sn;
	hs_capture *capture;
	hs_counters *counters;
	hs_run_status status;
	hs_live_catalog *cat;
	hs_live *live;
	hs_jsonl *jsonl;
	live_sink run_ls, backend_ls;
	hs_msg run_live_msg, backend_live_msg;
	hs_ctl *ctl;
	volatile int *stop;
	int manual_seen; /* snapshot requests (SIGUSR1, Ctrl+Break) taken so far */
	int wake_ms;     /* the loop's longest sleep */
	uint64_t began, last_stats; /* monotonic ms */
} run;

/* Every snapshot that is due now: manual requests first, then triggers.
 * With `all` (the replayed input has ended: no time passes any more) the
 * pending ones too, as if their post_delay had passed. */
static void take_due_snapshots(run *R, bool all)
{
	volatile int *req = hs_os_snapshot_requests();
	int n = *req;
	while (R->manual_seen != n) {
		R->manual_seen++;
		hs_trigger_engine_manual(R->te, clock_now(R->ops, R->b), hs_os_snapshot_hint());
	}
	hs_trigger_fire f;
	for (;;) {
		uint64_t now = clock_now(R->ops, R->b), due = hs_trigger_engine_next_due(R->te);
		if (all && due != UINT64_MAX && due > now)
			now = due;
		if (!hs_trigger_engine_next(R->te, now, &f))
			break;
		/* engine ctl snapshot --name N: the manual snapshot's folder is <NNN>-N. */
		const char *named = f.kind == HS_TRIGGER_MANUAL ? hs_ctl_snapshot_name(R->ctl) : NULL;
		if (named)
			f.name = named;
		hs_os_set_busy("taking a triggered snapshot");
		if (hs_snapshots_take(R->sn, R->ops, R->b, &f) == HS_OK)
			R->status.snapshots_taken++;
		else
			R->status.snapshots_failed++;
		hs_os_set_busy(NULL);
		free(f.evidence_json);
	}
}

/* engine ctl status: the status document (run/ctl.h), as of the last refresh. */
static char *ctl_status(void *ctx)
{
	hs_strbuf sb = {0};
	hs_json j;
	hs_json_init(&j, &sb);
	hs_run_status_json(ctx, &j);
	return hs_sb_take(&sb);
}

static void print_stats(const run *R, uint64_t elapsed_ms)
{
	const hs_backend_ops *ops = R->ops;
	hs_backend *b = R->b;
	uint64_t observed = R->oc.observed;
	bool observing = R->observing;
	const hs_msg *msg = R->msg;
	hs_strbuf sb = {0};
	hs_sb_append(&sb, "stats:");
	for (size_t i = 0; i < ops->n_sessions(b); i++) {
		const hs_session_status *s;
		if (ops->session_status(b, i, &s) != HS_OK)
			continue;
		if (s->pool) {
			/* One pool of buffers for the session; the kernel counts losses. */
			if (s->mode == HS_MODE_FILE_CIRCULAR)
				hs_sb_printf(&sb, " %s: file %.1f MB, lost %" PRIu64 " events and %" PRIu64 " buffers;",
					     s->name, (double)s->bytes_in_file / 1048576.0, s->pool_events_lost,
					     s->pool_buffers_lost);
			else {
				hs_sb_printf(&sb, " %s: ring of %" PRIu32 " buffers, %" PRIu32 " still free, lost %" PRIu64
						  " events",
					     s->name, s->pool_buffers, s->pool_free_buffers, s->pool_events_lost);
				/* Coverage: while the ring fills, the rate so far says how
				 * much history a full ring will hold. */
				uint32_t used = s->pool_buffers - s->pool_free_buffers;
				if (s->pool_buffers && s->pool_free_buffers && used && elapsed_ms)
					hs_sb_printf(&sb, ", at this rate it will hold about %.0f s",
						     (double)elapsed_ms / 1000.0 * s->pool_buffers / used);
				else if (s->pool_buffers && !s->pool_free_buffers)
					hs_sb_printf(&sb, ", full (it holds less than the %.0f s recorded so far)",
						     (double)elapsed_ms / 1000.0);
				hs_sb_putc(&sb, ';');
			}
			continue;
		}
		uint64_t entries = 0, overrun = 0, dropped = 0;
		for (unsigned c = 0; c < s->cpus; c++) {
			entries += s->cpu[c].entries;
			overrun += s->cpu[c].overrun;
			dropped += s->cpu[c].dropped;
		}
		if (s->mode == HS_MODE_FILE_CIRCULAR) {
			hs_sb_printf(&sb, " %s:", s->name);
			if (observing)
				hs_sb_printf(&sb, " %" PRIu64 " key events seen,", observed);
			hs_sb_printf(&sb, " file %.1f MB, %" PRIu64 " chunks dropped, lost %" PRIu64 ";",
				     (double)s->bytes_in_file / 1048576.0, s->chunks_dropped, dropped + overrun);
		} else {
			hs_sb_printf(&sb, " %s: ring holds %" PRIu64 " events, %" PRIu64 " overwritten;", s->name,
				     entries, overrun);
		}
	}
	hs_msg_say(msg, HS_MSG_INFO, "run", "%s", sb.oom ? "stats: out of memory" : hs_sb_cstr(&sb));
	hs_sb_free(&sb);
}

/* ---- the services the loop hosts ---- */

/* What the recording loop runs beside the backend's poll, each time it wakes, in this order: the counters feed the
 * triggers before their snapshots are due; a snapshot's report is queued before the status counts it; the status is
 * refreshed before the live view draws it and engine ctl answers with it. wait_ms: how long the service lets the
 * loop sleep from now (NULL: as long as the loop likes); tick: its work, true when it asks the run to stop. */
typedef struct {
	const char *name;
	int (*wait_ms)(const run *R, uint64_t now_ms);
	bool (*tick)(run *R, uint64_t now_ms);
} loop_service;

static int counters_wait(const run *R, uint64_t now_ms)
{
	return hs_counters_wait_ms(R->counters, now_ms);
}

static bool counters_tick(run *R, uint64_t now_ms)
{
	hs_counters_poll(R->counters, R->te, now_ms, clock_now(R->ops, R->b), &R->status);
	return false;
}

/* No longer than the next pending post_delay (or a deadline). */
static int triggers_wait(const run *R, uint64_t now_ms)
{
	(void)now_ms;
	uint64_t due = hs_trigger_engine_next_due(R->te), now_ns = clock_now(R->ops, R->b);
	if (due == UINT64_MAX)
		return R->wake_ms;
	if (due <= now_ns)
		return 0;
	uint64_t ms = (due - now_ns) / 1000000u;
	return ms < (uint64_t)R->wake_ms ? (int)ms + 1 : R->wake_ms;
}

static bool triggers_tick(run *R, uint64_t now_ms)
{
	(void)now_ms;
	if (!*R->stop)
		take_due_snapshots(R, false);
	return false;
}

static bool capture_tick(run *R, uint64_t now_ms)
{
	(void)now_ms;
	hs_capture_tick(R->capture, R->sn, &R->status, R->jsonl);
	return false;
}

/* The status (run/status.h) as of now, for the live view and engine ctl. */
static bool status_tick(run *R, uint64_t now_ms)
{
	R->fresh = !R->status.updates || now_ms - R->status.last_ms >= HS_STATUS_INTERVAL_MS;
	if (!R->fresh)
		return false;
	R->status.key_events_observed = R->oc.observed;
	R->status.jsonl = R->oc.jsonl != NULL;
	if (R->oc.jsonl)
		hs_jsonl_counts(R->oc.jsonl, &R->status.jsonl_lines, &R->status.jsonl_dropped);
	hs_run_status_update(&R->status, R->ops, R->b, R->te, now_ms, clock_now(R->ops, R->b));
	return false;
}

static bool live_tick(run *R, uint64_t now_ms)
{
	(void)now_ms;
	hs_live_tick(R->live, &R->status, R->fresh);
	return false;
}

/* engine ctl, after the refresh: answered between two wake-ups (a snapshot request is taken at the next, at once);
 * stop leaves as Ctrl+C does. */
static bool ctl_tick(run *R, uint64_t now_ms)
{
	(void)now_ms;
	hs_ctl_loop cl = {.status_json = ctl_status, .ctx = &R->status, .te = R->te, .now_ns = clock_now(R->ops, R->b)};
	return !*R->stop && hs_ctl_serve(R->ctl, &cl);
}

static bool stats_tick(run *R, uint64_t now_ms)
{
	uint64_t interval_ms = R->rs->run.stats_interval_s * 1000u;
	if (interval_ms && now_ms - R->last_stats >= interval_ms) {
		print_stats(R, now_ms - R->began);
		R->last_stats = now_ms;
	}
	return false;
}

static const loop_service g_services[] = {
	{"counters", counters_wait, counters_tick},
	{"triggers", triggers_wait, triggers_tick},
	{"capture", NULL, capture_tick},
	{"status", NULL, status_tick},
	{"live", NULL, live_tick},
	{"ctl", NULL, ctl_tick},
	{"stats", NULL, stats_tick},
};

/* ---- the run's phases, in order ---- */

/* Kernel sessions need the privilege and their names; a replay needs neither. Before the run folder: a second
 * engine refuses without leaving an empty one. */
static int run_claim(run *R)
{
	if (!R->ops) {
		hs_msg_say(R->msg, HS_MSG_ERROR, "run", "this build has no capture backend");
		return HS_EXIT_RUN_FAILED;
	}
	if (!R->ops->kernel)
		return 0;
	int denied = hs_os_check_privilege(R->msg);
	if (denied)
		return denied;
	if (R->ops->claim && R->ops->claim(R->plan, R->msg) != HS_OK) {
		hs_msg_say(R->msg, HS_MSG_ERROR, "run", "nothing was started");
		return HS_EXIT_RUN_FAILED;
	}
	R->claimed = true;
	return 0;
}

/* The run folder, the tap and the live view (on the stdout the engine was given), main.log's tee and the plan in
 * it, the stop handlers, and run.json at start (end null, so a killed run still has one). */
static int run_prepare(run *R)
{
	const hs_ruleset *rs = R->rs;
	const hs_record_opts *o = R->o;
	if (!rs->run.dir || !rs->run.name_format || !rs->run.log || !rs->run.manifest) {
		/* The loader lets a profile leave them out (--plan needs none); a recording does. */
		hs_msg_say(R->msg, HS_MSG_ERROR, "run",
			   "%s has no complete run section (dir, name_format, log, manifest); a recording needs one",
			   R->rules_path);
		return HS_EXIT_RUN_FAILED;
	}
	hs_os_private_files(); /* traces hold command lines, paths and addresses */
	if (!(R->dir = make_run_dir(&rs->run, o->dir_suffix))) {
		hs_msg_say(R->msg, HS_MSG_ERROR, "run", "cannot create the run folder under %s: %s", rs->run.dir,
			   strerror(errno));
		return HS_EXIT_RUN_FAILED;
	}
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s/%s", R->dir, rs->run.log);
	R->log_path = hs_sb_take(&sb);
	hs_sb_printf(&sb, "%s/%s", R->dir, rs->run.manifest);
	R->manifest = hs_sb_take(&sb);
	/* Before the tee takes stdout over: "-" and the live view's terminal are the stdout the engine was given. */
	if (o->events_jsonl && hs_jsonl_open(o->events_jsonl, R->msg, &R->jsonl) != HS_OK)
		return HS_EXIT_RUN_FAILED;
	if (o->live) {
		hs_live_opts lo = {.plan = R->plan, .curses = o->live_curses, .tty_fd = -1, .out = stdout,
				   .log_path = R->log_path, .prefix = o->msg_prefix};
#ifndef _WIN32
		if (lo.curses)
			lo.tty_fd = dup(1);
#endif
		if (!(R->live = hs_live_new(&lo))) {
			hs_msg_say(R->msg, HS_MSG_ERROR, "run", "cannot set up the live view: out of memory");
			return HS_EXIT_RUN_FAILED;
		}
		R->run_ls = (live_sink){.inner = R->msg, .live = R->live};
		R->backend_ls = (live_sink){.inner = o->backend_msg, .live = R->live};
		/* a wrapper passes its inner sink's debug on (hs_msg_vsay drops DEBUG before any sink sees it) */
		R->run_live_msg = (hs_msg){.fn = live_sink_fn, .ctx = &R->run_ls, .debug = R->msg && R->msg->debug};
		R->backend_live_msg = (hs_msg){.fn = live_sink_fn,
					       .ctx = &R->backend_ls,
					       .debug = o->backend_msg && o->backend_msg->debug};
		R->msg = &R->run_live_msg;
		R->backend_msg = &R->backend_live_msg;
	}
	if ((R->live || R->jsonl) && !(R->cat = hs_live_catalog_new(R->plan, R->ops->task_name))) {
		hs_msg_say(R->msg, HS_MSG_ERROR, "run", "cannot set up the live view: out of memory");
		return HS_EXIT_RUN_FAILED;
	}
	if (o->quiet_plan && R->log_path) {
		/* The plan is a document for main.log; the terminal gets a header. */
		FILE *lf = fopen(R->log_path, "a");
		if (!lf || hs_plan_print_text(R->plan, lf) != HS_OK) {
			hs_msg_say(R->msg, HS_MSG_ERROR, "run", "cannot write the plan into %s: %s", R->log_path,
				   strerror(errno));
			if (lf)
				fclose(lf);
			return HS_EXIT_RUN_FAILED;
		}
		fclose(lf);
	}
	if (!R->log_path || !R->manifest || !(R->tee = hs_os_tee_start(R->log_path))) {
		hs_msg_say(R->msg, HS_MSG_ERROR, "run", "cannot set up %s/%s: %s", R->dir, rs->run.log, strerror(errno));
		return HS_EXIT_RUN_FAILED;
	}
	hs_os_stop_handlers_install();
	R->stop = hs_os_stop_requests();
	hs_msg_say(R->msg, HS_MSG_INFO, "run", "run folder %s (pid %lu)", R->dir, hs_getpid());
	if (R->claimed && R->ops->adopt)
		R->ops->adopt(R->plan, R->dir, R->backend_msg);
	if (o->quiet_plan)
		say_header(R->msg, R->plan, R->rules_path, R->log_path);
	else if (hs_plan_print_text(R->plan, stdout) != HS_OK)
		return HS_EXIT_RUN_FAILED;
	fflush(stdout);
	hs_run_manifest man = {.path = R->manifest, .rs = rs, .plan = R->plan, .rules_path = R->rules_path,
			       .start = R->start, .ops = R->ops};
	hs_run_manifest_write(&man);
	return 0;
}

/* engine ctl's channel (before the sessions start any thread: the socket's mode comes from a umask), then the
 * sessions. */
static int run_start(run *R)
{
	R->ctl = hs_ctl_open(R->rs->run.dir, R->rs->name, R->dir, R->msg);
	hs_os_set_busy(R->ops->kernel ? "starting the kernel sessions" : "reading the input");
	hs_backend_opts opts = {.msg = R->backend_msg, .interrupts = R->stop, .input = R->o->input, .speed = R->o->speed};
	hs_status st = R->ops->start(R->plan, R->dir, &opts, &R->b);
	if (st == HS_ERULES) {
		/* The kernel refused events or filters the rules need: the rules are wrong for this machine, and
		 * recording without them would lose that coverage silently. */
		hs_msg_say(R->msg, HS_MSG_ERROR, "run",
			   "the kernel refused what the rules ask for (see above); nothing is being recorded");
		return HS_EXIT_RULES;
	}
	if (st != HS_OK) {
		hs_msg_say(R->msg, HS_MSG_ERROR, "run", "the sessions could not be started (%s); nothing is being recorded",
			   hs_strerror(st));
		return HS_EXIT_RUN_FAILED;
	}
	return 0;
}

/* The triggers (the engine decides, snapshots.c writes the folders, a worker below the loop writes each complete
 * snapshot's report: run/capture.h, said when it cannot and the snapshots are taken as before), the status, the
 * counters (counter triggers, arm_while, the deadline probe: run/counters.h), and the observer that feeds them. */
static int run_arm(run *R)
{
	const hs_msg *msg = R->msg;
	hs_snapshots_rules_hash(R->rs, R->rules_hash);
	uint64_t start_ns = clock_now(R->ops, R->b);
	hs_status tst = hs_trigger_engine_new(R->plan, start_ns, &R->te);
	if (tst == HS_OK && !(R->sn = hs_snapshots_new(R->plan, R->dir, R->rules_hash, msg)))
		tst = HS_ENOMEM;
	if (tst == HS_OK &&
	    (R->capture = hs_capture_new(R->rs, R->rules_path, HS_RUN_CAPTURE_REPORT(&R->rs->run), msg)))
		hs_capture_attach(R->capture, R->sn);
	if (tst == HS_OK)
		tst = hs_run_status_init(&R->status, R->plan, hs_os_monotonic_ms(), start_ns);
	if (tst == HS_OK &&
	    (tst = hs_counters_new(R->plan, R->dir, R->ops->kernel, msg, &R->counters)) == HS_EUNSUPPORTED)
		return HS_EXIT_RULES;
	if (tst != HS_OK) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot set up the triggers (%s); nothing is being recorded",
			   hs_strerror(tst));
		return HS_EXIT_RUN_FAILED;
	}
	hs_counters_attach(R->counters, R->te, hs_os_monotonic_ms());
	/* A deadline is judged only once a frame could no longer be on its way. */
	if (R->ops->delivery_lag_ms)
		hs_trigger_engine_set_lag(R->te, (uint64_t)R->ops->delivery_lag_ms * 1000000u);
	R->status.run_dir = R->dir;
	R->oc = (observer_ctx){.te = R->te, .ops = R->ops, .b = R->b, .cat = R->cat, .live = R->live,
			       .jsonl = R->jsonl, .plan = R->plan};
	hs_trigger_engine_set_clock(R->te, observer_clock, &R->oc);
	observer_learn_copies(&R->oc); /* trigger detection instances (hs_key_event.trigger_copy) */
	R->observing = R->ops->set_observer(R->b, observe_key_event, &R->oc) == HS_OK;
	if (!R->observing && hs_trigger_engine_wants_events(R->te))
		hs_msg_say(msg, HS_MSG_WARN, "run",
			   "WARNING: the %s backend cannot watch events as they happen; only manual triggers "
			   "(%s) will take snapshots",
			   R->ops->name, hs_os_snapshot_hint());
	if (!R->observing && (R->live || R->jsonl))
		hs_msg_say(msg, HS_MSG_WARN, "run",
			   "WARNING: the %s backend streams no key event as it happens in this run: the live view "
			   "shows the status only and the tap stays empty (the events still go to the key-event files)",
			   R->ops->name);
	return 0;
}

/* Records until a stop request, the duration, the end of the input or engine ctl stop: the backend's poll, then
 * each service (g_services). */
static void run_loop(run *R)
{
	const hs_plan *plan = R->plan;
	const hs_backend_ops *ops = R->ops;
	unsigned duration_s = R->o->duration_s;
	const char *option = R->o->option ? R->o->option : "--duration-sec";
	hs_os_set_busy(NULL);
	hs_msg_say(R->msg, HS_MSG_INFO, "run", "recording; %s saves the rings and stops", hs_os_stop_hint());
	hs_msg_say(R->msg, HS_MSG_INFO, "run",
		   "%zu trigger(s) armed after their warm-up; %s %lu takes a snapshot and goes on", plan->n_triggers,
		   hs_os_snapshot_hint(), hs_getpid());
	if (duration_s)
		hs_msg_say(R->msg, HS_MSG_INFO, "run", "stopping by itself after %u s (%s)", duration_s, option);

	uint64_t interval_ms = R->rs->run.stats_interval_s * 1000u;
	R->last_stats = R->began = hs_os_monotonic_ms();
	/* Only backends whose poll moves events (tracefs streaming file-circular sessions, replay) need the loop awake
	 * every few tens of ms; otherwise sleep until the next stats line or a stop request (which cuts the sleep
	 * short), so an idle recorder costs no CPU. */
	bool streams = false;
	for (size_t i = 0; i < plan->n_sessions; i++)
		streams |= ops->wake == HS_BACKEND_WAKE_STREAMING &&
			   plan->sessions[i].session->mode == HS_MODE_FILE_CIRCULAR;
	R->wake_ms = ops->wake == HS_BACKEND_WAKE_ALWAYS || streams ? ops->wake_ms
								    : (int)(interval_ms ? interval_ms : 60000u);
	if (R->wake_ms > HS_TRIGGER_WAKE_MS)
		R->wake_ms = HS_TRIGGER_WAKE_MS;
	if (duration_s && (uint64_t)R->wake_ms > duration_s * 1000ull)
		R->wake_ms = (int)(duration_s * 1000u);
	R->manual_seen = *hs_os_snapshot_requests();
	while (!*R->stop) {
		if (duration_s && hs_os_monotonic_ms() - R->began >= duration_s * 1000ull) {
			hs_msg_say(R->msg, HS_MSG_INFO, "run", "%u s are up (%s)", duration_s, option);
			break;
		}
		if (ops->finished && ops->finished(R->b)) {
			hs_msg_say(R->msg, HS_MSG_INFO, "run", "the input has ended, %" PRIu64 " ms into the recording loop",
				   hs_os_monotonic_ms() - R->began);
			take_due_snapshots(R, true);
			break;
		}
		int wait_ms = R->wake_ms;
		for (size_t i = 0; i < sizeof g_services / sizeof g_services[0]; i++) {
			int w = g_services[i].wait_ms ? g_services[i].wait_ms(R, hs_os_monotonic_ms()) : wait_ms;
			if (w < wait_ms)
				wait_ms = w;
		}
		if (ops->poll(R->b, wait_ms) != HS_OK && R->ok) {
			hs_msg_say(R->msg, HS_MSG_ERROR, "run", "streaming failed; see above. Still recording the rings.");
			R->ok = false;
		}
		bool leave = false;
		for (size_t i = 0; i < sizeof g_services / sizeof g_services[0] && !leave; i++)
			leave = g_services[i].tick(R, hs_os_monotonic_ms());
		if (leave)
			break;
	}
}

/* The final rings, the sessions stopped (the key-event file written), the tap closed after the backend's final
 * flush, the snapshots' reports waited for, run.json with the end, and the final rings' report. */
static int run_finish(run *R)
{
	const hs_plan *plan = R->plan;
	const hs_msg *msg = R->msg;
	uint64_t snapshot_ms = hs_os_monotonic_ms() - R->began;
	hs_live_end(R->live); /* the terminal is the messages' again */
	hs_msg_say(msg, HS_MSG_INFO, "run", "stopping; saving the rings");
	hs_os_set_busy("saving the in-memory rings to disk");
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == HS_MODE_BUFFERING && R->ops->snapshot(R->b, i, NULL, true) != HS_OK)
			R->ok = false;
	hs_os_set_busy("writing the key-event file and removing the kernel sessions");
	uint64_t stop_ms = hs_os_monotonic_ms() - R->began;
	if (R->ops->stop(R->b) != HS_OK)
		R->ok = false;
	if (R->jsonl) {
		/* After stop: its final flush streams the last key events. */
		uint64_t lines = 0, dropped = 0;
		hs_jsonl_close(R->jsonl, &lines, &dropped);
		R->jsonl = R->oc.jsonl = NULL;
		hs_msg_say(msg, dropped ? HS_MSG_WARN : HS_MSG_INFO, "run",
			   "--events-jsonl: %" PRIu64 " key events written, %" PRIu64 " dropped%s", lines, dropped,
			   dropped ? " (the reader did not keep up; the recording did not wait)" : "");
	}
	print_stats(R, hs_os_monotonic_ms() - R->began);
	hs_capture_drain(R->capture, R->sn); /* the snapshots' reports are in run.json too */
	hs_os_set_busy("writing the run manifest");
	hs_run_manifest man = {.path = R->manifest, .rs = R->rs, .plan = plan, .rules_path = R->rules_path,
			       .start = R->start, .end = time(NULL), .exit_code = R->ok ? HS_EXIT_OK : HS_EXIT_RUN_FAILED,
			       .ops = R->ops, .b = R->b, .observed = R->oc.observed, .te = R->te, .sn = R->sn};
	if (hs_run_manifest_write(&man) != HS_OK) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot write %s", R->manifest);
		R->ok = false;
	}
	/* The final rings' report, into the run folder, and run.json says so (run/capture.h). */
	hs_rundoc_report final;
	hs_capture_finish(R->capture, R->dir, &final);
	if (R->capture) {
		man.report = &final;
		if (hs_run_manifest_write(&man) != HS_OK)
			hs_msg_say(msg, HS_MSG_WARN, "run", "cannot write the final report's state into %s", R->manifest);
	}
	hs_msg_say(msg, R->ok ? HS_MSG_INFO : HS_MSG_WARN, "run", "%s; run folder %s",
		   R->ok ? "DONE, all files written" : "FAILED, see the messages above", R->dir);
	if (R->o->stopped)
		R->o->stopped(R->o->ctx, R->dir, R->ops, R->b, snapshot_ms, stop_ms);
	return R->ok ? HS_EXIT_OK : HS_EXIT_RUN_FAILED;
}

static void run_free(run *R)
{
	hs_os_set_busy(NULL);
	if (R->b)
		R->ops->free(R->b);
	hs_counters_free(R->counters);
	hs_trigger_engine_free(R->te);
	hs_run_status_free(&R->status);
	if (R->jsonl) {
		uint64_t lines, dropped;
		hs_jsonl_close(R->jsonl, &lines, &dropped);
	}
	hs_live_catalog_free(R->cat);
	hs_sb_free(&R->oc.line);
	free(R->oc.copies);
	hs_capture_free(R->capture); /* before the snapshots: its worker is done with them */
	hs_snapshots_free(R->sn);
	hs_ctl_close(R->ctl); /* after run.json and the snapshots (their names are its); a stop client sees the end */
	if (R->claimed && R->ops->release)
		R->ops->release(R->plan);
	if (R->tee)
		hs_os_tee_stop();
	hs_os_run_finished();
	free(R->dir);
	free(R->log_path);
	free(R->manifest);
	hs_live_free(R->live); /* last: msg is its sink until here */
}

int hs_record_run_opts(const hs_ruleset *rs, const hs_plan *plan, const char *rules_path, const hs_record_opts *o)
{
	run R = {.rs = rs, .plan = plan, .rules_path = rules_path, .o = o, .msg = o->msg, .backend_msg = o->backend_msg,
		 .ops = o->backend ? o->backend : hs_backend_native(), .start = time(NULL), .ok = true};
	int rc = run_claim(&R);
	if (rc)
		return rc;
	if (!(rc = run_prepare(&R)) && !(rc = run_start(&R)) && !(rc = run_arm(&R))) {
		run_loop(&R);
		rc = run_finish(&R);
	}
	run_free(&R);
	return rc;
}
