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

/* Every snapshot that is due now: manual requests first, then triggers.
 * With `all` (the replayed input has ended: no time passes any more) the
 * pending ones too, as if their post_delay had passed. */
static void take_due_snapshots(const hs_backend_ops *ops, hs_backend *b, hs_trigger_engine *te, hs_snapshots *sn,
			       int *manual_seen, bool all, hs_run_status *status, hs_ctl *ctl)
{
	volatile int *req = hs_os_snapshot_requests();
	int n = *req;
	while (*manual_seen != n) {
		(*manual_seen)++;
		hs_trigger_engine_manual(te, clock_now(ops, b), hs_os_snapshot_hint());
	}
	hs_trigger_fire f;
	for (;;) {
		uint64_t now = clock_now(ops, b), due = hs_trigger_engine_next_due(te);
		if (all && due != UINT64_MAX && due > now)
			now = due;
		if (!hs_trigger_engine_next(te, now, &f))
			break;
		/* engine ctl snapshot --name N: the manual snapshot's folder is <NNN>-N. */
		const char *named = f.kind == HS_TRIGGER_MANUAL ? hs_ctl_snapshot_name(ctl) : NULL;
		if (named)
			f.name = named;
		hs_os_set_busy("taking a triggered snapshot");
		if (hs_snapshots_take(sn, ops, b, &f) == HS_OK)
			status->snapshots_taken++;
		else
			status->snapshots_failed++;
		hs_os_set_busy(NULL);
		free(f.evidence_json);
	}
}

/* The status (run/status.h) as of now, for the live view and engine ctl. */
static void status_refresh(hs_run_status *status, const hs_backend_ops *ops, hs_backend *b,
			   const hs_trigger_engine *te, const observer_ctx *oc, uint64_t now_ms)
{
	status->key_events_observed = oc->observed;
	status->jsonl = oc->jsonl != NULL;
	if (oc->jsonl)
		hs_jsonl_counts(oc->jsonl, &status->jsonl_lines, &status->jsonl_dropped);
	hs_run_status_update(status, ops, b, te, now_ms, clock_now(ops, b));
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

static void print_stats(const hs_msg *msg, const hs_backend_ops *ops, hs_backend *b, uint64_t observed, bool observing,
			uint64_t elapsed_ms)
{
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

int hs_record_run_opts(const hs_ruleset *rs, const hs_plan *plan, const char *rules_path, const hs_record_opts *o)
{
	unsigned duration_s = o->duration_s;
	const hs_msg *msg = o->msg;
	const char *option = o->option ? o->option : "--duration-sec";
	const hs_backend_ops *ops = o->backend ? o->backend : hs_backend_native();
	int rc = HS_EXIT_RUN_FAILED;
	hs_backend *b = NULL;
	char *dir = NULL, *log_path = NULL, *manifest = NULL;
	bool tee = false, claimed = false;
	observer_ctx oc = {0};
	hs_trigger_engine *te = NULL;
	hs_snapshots *sn = NULL;
	hs_capture *capture = NULL;
	hs_counters *counters = NULL;
	hs_run_status status = {0};
	hs_live_catalog *cat = NULL;
	hs_live *live = NULL;
	hs_jsonl *jsonl = NULL;
	live_sink run_ls = {0}, backend_ls = {0};
	hs_msg run_live_msg, backend_live_msg;
	const hs_msg *backend_msg = o->backend_msg;
	hs_ctl *ctl = NULL;
	char rules_hash[17];
	time_t start = time(NULL);

	if (!ops) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "this build has no capture backend");
		return HS_EXIT_RUN_FAILED;
	}
	/* Kernel sessions need the privilege and their names; a replay needs neither. */
	if (ops->kernel) {
		int denied = hs_os_check_privilege(msg);
		if (denied)
			return denied;
		/* Before the run folder: a second engine refuses without leaving an empty one. */
		if (ops->claim && ops->claim(plan, msg) != HS_OK) {
			hs_msg_say(msg, HS_MSG_ERROR, "run", "nothing was started");
			return HS_EXIT_RUN_FAILED;
		}
		claimed = true;
	}
	rc = HS_EXIT_RUN_FAILED;
	if (!rs->run.dir || !rs->run.name_format || !rs->run.log || !rs->run.manifest) {
		/* The loader lets a profile leave them out (--plan needs none); a recording does. */
		hs_msg_say(msg, HS_MSG_ERROR, "run",
			   "%s has no complete run section (dir, name_format, log, manifest); a recording needs one",
			   rules_path);
		goto fail;
	}
	hs_os_private_files(); /* traces hold command lines, paths and addresses */
	dir = make_run_dir(&rs->run, o->dir_suffix);
	if (!dir) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot create the run folder under %s: %s", rs->run.dir,
			   strerror(errno));
		goto fail;
	}
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s/%s", dir, rs->run.log);
	log_path = hs_sb_take(&sb);
	hs_sb_printf(&sb, "%s/%s", dir, rs->run.manifest);
	manifest = hs_sb_take(&sb);
	/* Before the tee takes stdout over: "-" and the live view's terminal
	 * are the stdout the engine was given. */
	if (o->events_jsonl && hs_jsonl_open(o->events_jsonl, msg, &jsonl) != HS_OK)
		goto fail;
	if (o->live) {
		hs_live_opts lo = {.plan = plan, .curses = o->live_curses, .tty_fd = -1, .out = stdout,
				   .log_path = log_path, .prefix = o->msg_prefix};
#ifndef _WIN32
		if (lo.curses)
			lo.tty_fd = dup(1);
#endif
		if (!(live = hs_live_new(&lo))) {
			hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot set up the live view: out of memory");
			goto fail;
		}
		run_ls = (live_sink){.inner = msg, .live = live};
		backend_ls = (live_sink){.inner = o->backend_msg, .live = live};
		run_live_msg = (hs_msg){live_sink_fn, &run_ls};
		backend_live_msg = (hs_msg){live_sink_fn, &backend_ls};
		msg = &run_live_msg;
		backend_msg = &backend_live_msg;
	}
	if ((live || jsonl) && !(cat = hs_live_catalog_new(plan, ops->task_name))) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot set up the live view: out of memory");
		goto fail;
	}
	if (o->quiet_plan && log_path) {
		/* The plan is a document for main.log; the terminal gets a header. */
		FILE *lf = fopen(log_path, "a");
		if (!lf || hs_plan_print_text(plan, lf) != HS_OK) {
			hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot write the plan into %s: %s", log_path, strerror(errno));
			if (lf)
				fclose(lf);
			goto fail;
		}
		fclose(lf);
	}
	if (!log_path || !manifest || !(tee = hs_os_tee_start(log_path))) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot set up %s/%s: %s", dir, rs->run.log, strerror(errno));
		goto fail;
	}
	hs_os_stop_handlers_install();
	volatile int *stop = hs_os_stop_requests();

	hs_msg_say(msg, HS_MSG_INFO, "run", "run folder %s (pid %lu)", dir, hs_getpid());
	if (claimed && ops->adopt)
		ops->adopt(plan, dir, backend_msg);
	if (o->quiet_plan)
		say_header(msg, plan, rules_path, log_path);
	else if (hs_plan_print_text(plan, stdout) != HS_OK)
		goto fail;
	fflush(stdout);
	/* run.json at start (end null), so a killed run still has one; again at the end (run/manifest.h) */
	hs_run_manifest man = {.path = manifest, .rs = rs, .plan = plan, .rules_path = rules_path, .start = start,
			       .ops = ops};
	hs_run_manifest_write(&man);

	/* Before the sessions start any thread: the socket's mode comes from a umask. */
	ctl = hs_ctl_open(rs->run.dir, rs->name, dir, msg);
	hs_os_set_busy(ops->kernel ? "starting the kernel sessions" : "reading the input");
	hs_backend_opts opts = {.msg = backend_msg, .interrupts = stop, .input = o->input, .speed = o->speed};
	hs_status st = ops->start(plan, dir, &opts, &b);
	if (st == HS_ERULES) {
		/* The kernel refused events or filters the rules need: the rules are
		 * wrong for this machine, and recording without them would lose that
		 * coverage silently. */
		hs_msg_say(msg, HS_MSG_ERROR, "run",
			   "the kernel refused what the rules ask for (see above); nothing is being recorded");
		rc = HS_EXIT_RULES;
		goto fail;
	}
	if (st != HS_OK) {
		hs_msg_say(msg, HS_MSG_ERROR, "run",
			   "the sessions could not be started (%s); nothing is being recorded", hs_strerror(st));
		goto fail;
	}
	/* Triggers: the engine decides, snapshots.c writes the folders. */
	hs_snapshots_rules_hash(rs, rules_hash);
	uint64_t start_ns = clock_now(ops, b);
	hs_status tst = hs_trigger_engine_new(plan, start_ns, &te);
	if (tst == HS_OK && !(sn = hs_snapshots_new(plan, dir, rules_hash, msg)))
		tst = HS_ENOMEM;
	/* Each complete snapshot gets its report from a worker below the loop (run/capture.h); without the
	 * worker (said) the snapshots are taken as before. */
	if (tst == HS_OK && (capture = hs_capture_new(rs, rules_path, HS_RUN_CAPTURE_REPORT(&rs->run), msg)))
		hs_capture_attach(capture, sn);
	if (tst == HS_OK)
		tst = hs_run_status_init(&status, plan, hs_os_monotonic_ms(), start_ns);
	/* Counter triggers, arm_while and the deadline probe read the machine (run/counters.h). */
	if (tst == HS_OK && (tst = hs_counters_new(plan, dir, ops->kernel, msg, &counters)) == HS_EUNSUPPORTED) {
		rc = HS_EXIT_RULES;
		goto fail;
	}
	if (tst == HS_OK) {
		hs_counters_attach(counters, te, hs_os_monotonic_ms());
		/* A deadline is judged only once a frame could no longer be on its way. */
		if (ops->delivery_lag_ms)
			hs_trigger_engine_set_lag(te, (uint64_t)ops->delivery_lag_ms * 1000000u);
	}
	if (tst != HS_OK) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot set up the triggers (%s); nothing is being recorded",
			   hs_strerror(tst));
		goto fail;
	}
	status.run_dir = dir;
	oc = (observer_ctx){.te = te, .ops = ops, .b = b, .cat = cat, .live = live, .jsonl = jsonl, .plan = plan};
	hs_trigger_engine_set_clock(te, observer_clock, &oc);
	observer_learn_copies(&oc); /* trigger detection instances (hs_key_event.trigger_copy) */
	bool observing = ops->set_observer(b, observe_key_event, &oc) == HS_OK;
	if (!observing && hs_trigger_engine_wants_events(te))
		hs_msg_say(msg, HS_MSG_WARN, "run",
			   "WARNING: the %s backend cannot watch events as they happen; only manual triggers "
			   "(%s) will take snapshots",
			   ops->name, hs_os_snapshot_hint());
	if (!observing && (live || jsonl))
		hs_msg_say(msg, HS_MSG_WARN, "run",
			   "WARNING: the %s backend streams no key event as it happens in this run: the live view "
			   "shows the status only and the tap stays empty (the events still go to the key-event files)",
			   ops->name);
	hs_os_set_busy(NULL);
	hs_msg_say(msg, HS_MSG_INFO, "run", "recording; %s saves the rings and stops", hs_os_stop_hint());
	hs_msg_say(msg, HS_MSG_INFO, "run",
		   "%zu trigger(s) armed after their warm-up; %s %lu takes a snapshot and goes on", plan->n_triggers,
		   hs_os_snapshot_hint(), hs_getpid());
	if (duration_s)
		hs_msg_say(msg, HS_MSG_INFO, "run", "stopping by itself after %u s (%s)", duration_s, option);

	uint64_t interval_ms = rs->run.stats_interval_s * 1000u;
	uint64_t last = hs_os_monotonic_ms(), began = last;
	bool ok = true;
	/* Only backends whose poll moves events (tracefs streaming file-circular
	 * sessions, replay) need the loop awake every few tens of ms; otherwise
	 * sleep until the next stats line or a stop request (which cuts the sleep
	 * short), so an idle recorder costs no CPU. */
	bool streams = false;
	for (size_t i = 0; i < plan->n_sessions; i++)
		streams |= ops->wake == HS_BACKEND_WAKE_STREAMING &&
			   plan->sessions[i].session->mode == HS_MODE_FILE_CIRCULAR;
	int wake_ms = ops->wake == HS_BACKEND_WAKE_ALWAYS || streams ? ops->wake_ms
								      : (int)(interval_ms ? interval_ms : 60000u);
	if (wake_ms > HS_TRIGGER_WAKE_MS)
		wake_ms = HS_TRIGGER_WAKE_MS;
	if (duration_s && (uint64_t)wake_ms > duration_s * 1000ull)
		wake_ms = (int)(duration_s * 1000u);
	int manual_seen = *hs_os_snapshot_requests();
	while (!*stop) {
		if (duration_s && hs_os_monotonic_ms() - began >= duration_s * 1000ull) {
			hs_msg_say(msg, HS_MSG_INFO, "run", "%u s are up (%s)", duration_s, option);
			break;
		}
		if (ops->finished && ops->finished(b)) {
			hs_msg_say(msg, HS_MSG_INFO, "run", "the input has ended");
			take_due_snapshots(ops, b, te, sn, &manual_seen, true, &status, ctl);
			break;
		}
		/* Sleep no longer than the next pending post_delay. */
		int wait_ms = wake_ms;
		uint64_t due = hs_trigger_engine_next_due(te), now_ns = clock_now(ops, b);
		if (due != UINT64_MAX)
			wait_ms = due <= now_ns ? 0 : (due - now_ns) / 1000000u < (uint64_t)wake_ms
								 ? (int)((due - now_ns) / 1000000u) + 1
								 : wake_ms;
		int cw = hs_counters_wait_ms(counters, hs_os_monotonic_ms());
		if (cw < wait_ms)
			wait_ms = cw;
		if (ops->poll(b, wait_ms) != HS_OK && ok) {
			hs_msg_say(msg, HS_MSG_ERROR, "run", "streaming failed; see above. Still recording the rings.");
			ok = false;
		}
		hs_counters_poll(counters, te, hs_os_monotonic_ms(), clock_now(ops, b), &status);
		if (!*stop)
			take_due_snapshots(ops, b, te, sn, &manual_seen, false, &status, ctl);
		hs_capture_tick(capture, sn, &status, jsonl);
		uint64_t now = hs_os_monotonic_ms();
		bool fresh = !status.updates || now - status.last_ms >= HS_STATUS_INTERVAL_MS;
		if (fresh)
			status_refresh(&status, ops, b, te, &oc, now);
		hs_live_tick(live, &status, fresh);
		/* engine ctl, after the refresh: answered between two wake-ups (a
		 * snapshot request is taken at the next, at once); stop leaves as Ctrl+C does. */
		hs_ctl_loop cl = {.status_json = ctl_status, .ctx = &status, .te = te, .now_ns = clock_now(ops, b)};
		if (!*stop && hs_ctl_serve(ctl, &cl))
			break;
		if (interval_ms && now - last >= interval_ms) {
			print_stats(msg, ops, b, oc.observed, observing, now - began);
			last = now;
		}
	}

	uint64_t snapshot_ms = hs_os_monotonic_ms() - began;
	hs_live_end(live); /* the terminal is the messages' again */
	hs_msg_say(msg, HS_MSG_INFO, "run", "stopping; saving the rings");
	hs_os_set_busy("saving the in-memory rings to disk");
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == HS_MODE_BUFFERING && ops->snapshot(b, i, NULL, true) != HS_OK)
			ok = false;
	hs_os_set_busy("writing the key-event file and removing the kernel sessions");
	uint64_t stop_ms = hs_os_monotonic_ms() - began;
	if (ops->stop(b) != HS_OK)
		ok = false;
	if (jsonl) {
		/* After stop: its final flush streams the last key events. */
		uint64_t lines = 0, dropped = 0;
		hs_jsonl_close(jsonl, &lines, &dropped);
		jsonl = oc.jsonl = NULL;
		hs_msg_say(msg, dropped ? HS_MSG_WARN : HS_MSG_INFO, "run",
			   "--events-jsonl: %" PRIu64 " key events written, %" PRIu64 " dropped%s", lines, dropped,
			   dropped ? " (the reader did not keep up; the recording did not wait)" : "");
	}
	print_stats(msg, ops, b, oc.observed, observing, hs_os_monotonic_ms() - began);
	hs_capture_drain(capture, sn); /* the snapshots' reports are in run.json too */
	hs_os_set_busy("writing the run manifest");
	man = (hs_run_manifest){.path = manifest, .rs = rs, .plan = plan, .rules_path = rules_path, .start = start,
				.end = time(NULL), .exit_code = ok ? HS_EXIT_OK : HS_EXIT_RUN_FAILED, .ops = ops, .b = b,
				.observed = oc.observed, .te = te, .sn = sn};
	if (hs_run_manifest_write(&man) != HS_OK) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot write %s", manifest);
		ok = false;
	}
	/* The final rings' report, into the run folder, and run.json says so (run/capture.h). */
	hs_rundoc_report final;
	hs_capture_finish(capture, dir, &final);
	if (capture) {
		man.report = &final;
		if (hs_run_manifest_write(&man) != HS_OK)
			hs_msg_say(msg, HS_MSG_WARN, "run", "cannot write the final report's state into %s", manifest);
	}
	hs_msg_say(msg, ok ? HS_MSG_INFO : HS_MSG_WARN, "run", "%s; run folder %s",
		   ok ? "DONE, all files written" : "FAILED, see the messages above", dir);
	if (o->stopped)
		o->stopped(o->ctx, dir, ops, b, snapshot_ms, stop_ms);
	rc = ok ? HS_EXIT_OK : HS_EXIT_RUN_FAILED;
fail:
	hs_os_set_busy(NULL);
	if (b)
		ops->free(b);
	hs_counters_free(counters);
	hs_trigger_engine_free(te);
	hs_run_status_free(&status);
	if (jsonl) {
		uint64_t lines, dropped;
		hs_jsonl_close(jsonl, &lines, &dropped);
	}
	hs_live_catalog_free(cat);
	hs_sb_free(&oc.line);
	free(oc.copies);
	hs_capture_free(capture); /* before the snapshots: its worker is done with them */
	hs_snapshots_free(sn);
	hs_ctl_close(ctl); /* after run.json and the snapshots (their names are its); a stop client sees the end */
	if (claimed && ops->release)
		ops->release(plan);
	if (tee)
		hs_os_tee_stop();
	hs_os_run_finished();
	free(dir);
	free(log_path);
	free(manifest);
	hs_live_free(live); /* last: msg is its sink until here */
	return rc;
}
