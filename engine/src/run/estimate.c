/* run/estimate.c: engine --estimate: a short recording made by the recording mode itself, then its files and counters as rates and projections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <io.h>
#define est_dup _dup
#define est_dup2 _dup2
#define est_fileno _fileno
#else
#include <unistd.h>
#define est_dup dup
#define est_dup2 dup2
#define est_fileno fileno
#endif

#include "hindsight/backend.h"
#include "hindsight/estimate.h"
#include "hindsight/exitcodes.h"
#include "run/estimate.h"
#include "run/record.h"
#include "util/compat.h"
#include "util/strbuf.h"

typedef struct {
	const hs_plan *plan;
	hs_estimate_session *sessions; /* [plan->n_sessions] */
	uint64_t **cpu_kernel;         /* [plan->n_sessions], owned: the sessions point into them */
	char *run_dir;
	uint64_t snapshot_ms, stop_ms;
	bool stopped;
} live_ctx;

/* Final statuses, copied while the backend still exists. */
static void on_stopped(void *vctx, const char *run_dir, const hs_backend_ops *ops, hs_backend *b, uint64_t snapshot_ms,
		       uint64_t stop_ms)
{
	live_ctx *c = vctx;
	c->stopped = true;
	c->run_dir = strdup(run_dir);
	c->snapshot_ms = snapshot_ms;
	c->stop_ms = stop_ms;
	for (size_t i = 0; i < ops->n_sessions(b) && i < c->plan->n_sessions; i++) {
		const hs_session_status *st;
		if (ops->session_status(b, i, &st) != HS_OK)
			continue;
		hs_estimate_session *s = &c->sessions[i];
		s->has_counters = true;
		uint64_t entries = 0, read = 0;
		uint64_t *per_cpu = st->cpu && st->cpus ? calloc(st->cpus, sizeof(*per_cpu)) : NULL;
		c->cpu_kernel[i] = per_cpu;
		s->cpu_kernel_events = per_cpu;
		s->n_cpu_kernel = per_cpu ? st->cpus : 0;
		for (unsigned k = 0; st->cpu && k < st->cpus; k++) {
			const hs_cpu_stats *cs = &st->cpu[k];
			if (per_cpu)
				per_cpu[k] = cs->entries + cs->read + cs->overrun + cs->dropped;
			entries += st->cpu[k].entries;
			read += st->cpu[k].read;
			s->overrun += st->cpu[k].overrun;
			s->dropped += st->cpu[k].dropped;
			s->commit_overrun += st->cpu[k].commit_overrun;
		}
		/* tracefs: everything the ring took is still in it, was read (drained
		 * by the snapshot or streamed), was overwritten, or was refused. */
		s->kernel_events = st->cpus ? entries + read + s->overrun + s->dropped : 0;
		s->bytes_streamed = st->mode == HS_MODE_FILE_CIRCULAR ? st->bytes_streamed : 0;
		s->chunks_dropped = st->chunks_dropped;
		s->bytes_in_file = st->bytes_in_file;
		s->pool = st->pool;
		s->pool_events_lost = st->pool_events_lost;
		s->pool_buffers_lost = st->pool_buffers_lost;
		s->pool_buffers = st->pool_buffers;
		s->pool_free_buffers = st->pool_free_buffers;
	}
}

static char *join(const char *dir, const char *name)
{
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s/%s", dir, name);
	return hs_sb_take(&sb);
}

int hs_estimate_live(const hs_ruleset *rs, const hs_plan *plan, const char *rules_path, unsigned seconds, bool json,
		     const hs_msg *msg, const hs_msg *backend_msg)
{
	size_t n = plan->n_sessions;
	live_ctx c = {.plan = plan,
		      .sessions = calloc(n ? n : 1, sizeof(hs_estimate_session)),
		      .cpu_kernel = calloc(n ? n : 1, sizeof(uint64_t *))};
	hs_estimate_trace **traces = calloc(n ? n : 1, sizeof(*traces));
	char **paths = calloc(n ? n : 1, sizeof(*paths));
	if (!c.sessions || !c.cpu_kernel || !traces || !paths) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "out of memory");
		free(c.sessions);
		free(c.cpu_kernel);
		free(traces);
		free(paths);
		return HS_EXIT_RUN_FAILED;
	}

	/* The recording talks on stdout (and into main.log); the report is what
	 * stdout is for here, so the recording's lines go to stderr meanwhile. */
	fflush(stdout);
	int saved = est_dup(est_fileno(stdout));
	if (saved >= 0)
		est_dup2(est_fileno(stderr), est_fileno(stdout));
	hs_record_opts o = {.duration_s = seconds,
			    .option = "--estimate",
			    .dir_suffix = "-estimate",
			    .stopped = on_stopped,
			    .ctx = &c,
			    .msg = msg,
			    .backend_msg = backend_msg};
	int rc = hs_record_run_opts(rs, plan, rules_path, &o);
	fflush(stdout);
	if (saved >= 0) {
		est_dup2(saved, est_fileno(stdout));
		hs_close(saved);
	}
	if (!c.stopped) {
		/* The sessions never ran: the recording said why. */
		free(c.sessions); /* no counters were copied */
		free(c.cpu_kernel);
		free(traces);
		free(paths);
		return rc ? rc : HS_EXIT_RUN_FAILED;
	}

	hs_estimate_session *out = calloc(n ? n : 1, sizeof(*out));
	size_t m = 0;
	hs_estimate_read_opts ro = {.rules = rs, .probe = false};
	for (size_t i = 0; out && i < n; i++) {
		const hs_plan_session *ps = &plan->sessions[i];
		const hs_session *ss = ps->session;
		if (ss->mode == HS_MODE_SAMPLING) {
			hs_msg_say(msg, HS_MSG_WARN, "run",
				   "session %s samples CPUs (launch mode); it has no rate to estimate here", ss->name);
			continue;
		}
		hs_estimate_session *s = &out[m++];
		*s = c.sessions[i];
		s->name = ss->name;
		s->has_mode = true;
		s->mode = ss->mode;
		/* A ring stops taking events at its snapshot, a stream at the stop. */
		s->window_s = (double)(ss->mode == HS_MODE_BUFFERING ? c.snapshot_ms : c.stop_ms) / 1000.0;
		s->split_cpus = hs_plan_session_split_cpus(plan, ps);
		if (ss->mode == HS_MODE_FILE_CIRCULAR) {
			s->project_file = true;
			s->max_file_mb = ss->max_file_mb;
			s->file_session = ss->name;
		} else {
			s->project_ring = true;
			s->ring_mb = ss->ring_mb;
			s->ring_session = ss->name;
		}
		paths[i] = join(c.run_dir ? c.run_dir : ".", ss->output);
		s->file = paths[i];
		s->read_status = paths[i] ? hs_estimate_read(paths[i], &ro, &traces[i]) : HS_ENOMEM;
		s->trace = traces[i];
		if (s->read_status != HS_OK) {
			hs_msg_say(msg, HS_MSG_ERROR, "run", "%s: %s", paths[i] ? paths[i] : ss->output,
				   hs_strerror(s->read_status));
			if (!rc)
				rc = HS_EXIT_RUN_FAILED;
		}
	}
	hs_estimate_report r = {.live = true,
				.profile = rs->name,
				.rules_path = rules_path,
				.run_dir = c.run_dir,
				.platform = plan->platform,
				.requested_s = seconds,
				.sessions = out,
				.n_sessions = m};
	hs_status st = out ? (json ? hs_estimate_print_json(&r, stdout) : hs_estimate_print_text(&r, stdout)) : HS_ENOMEM;
	if (st != HS_OK) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot print the estimate: %s", hs_strerror(st));
		rc = HS_EXIT_RUN_FAILED;
	}
	fflush(stdout);
	/* main.log keeps the report after the recording's own lines, next to
	 * the files it was made from. */
	char *lpath = c.run_dir && out ? join(c.run_dir, rs->run.log) : NULL;
	FILE *lf = lpath ? hs_fopen(lpath, "a") : NULL;
	if (lf) {
		fputc('\n', lf);
		if (hs_estimate_print_text(&r, lf) != HS_OK)
			hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot add the estimate to %s", lpath);
		fclose(lf);
	}
	free(lpath);
	for (size_t i = 0; i < n; i++) {
		hs_estimate_trace_free(traces[i]);
		free(paths[i]);
	}
	free(out);
	free(traces);
	free(paths);
	for (size_t i = 0; i < n; i++)
		free(c.cpu_kernel[i]);
	free(c.cpu_kernel);
	free(c.sessions);
	free(c.run_dir);
	return rc;
}
