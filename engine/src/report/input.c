/* report/input.c: what a report's PATH is (snapshot, run folder, folder of traces, one trace file), the files it names, and what snapshot.json and run.json say about them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hindsight/arena.h"
#include "hindsight/etl.h"
#include "hindsight/rundoc.h"
#include "hindsight/text.h"
#include "hindsight/tracedat.h"
#include "report/model.h"

/* ---- snapshot.json and run.json, through their one reader (hindsight/rundoc.h) ---- */

static void read_snapshot_json(hs_report *r, const char *path, const char *dir)
{
	hs_arena a = {0};
	hs_rundoc_snapshot d = {0};
	hs_rpt_trigger *t = &r->trig;
	if (hs_rundoc_snapshot_read(path, &a, &d) != HS_OK) {
		hs_rpt_run_note(r, "snapshot.json could not be read: no trigger, hit or session counters");
		r->damaged = true;
		hs_arena_free(&a);
		return;
	}
	t->present = true;
	snprintf(t->name, sizeof t->name, "%s", d.trigger.name ? d.trigger.name : "?");
	snprintf(t->kind, sizeof t->kind, "%s", d.trigger.kind ? d.trigger.kind : "?");
	t->snapshot_no = d.snapshot;
	t->hits = (int64_t)d.hits;
	t->first_hit_ns = d.first_hit_ns;
	t->detect_ms = d.detection_latency_ms;
	snprintf(t->taken_at, sizeof t->taken_at, "%s", d.taken_at ? d.taken_at : "");
	const hs_rundoc_hit_view *h = &d.hit;
	t->hit_ts = h->ts_ns;
	t->hit_pid = h->has_frame_pid ? h->frame_pid : h->has_pid ? h->pid : -1;
	snprintf(t->hit_system, sizeof t->hit_system, "%s", h->system ? h->system : "");
	snprintf(t->hit_event, sizeof t->hit_event, "%s", h->event ? h->event : "");
	snprintf(t->slice, sizeof t->slice, "%s", h->slice ? h->slice : "");
	snprintf(t->hit_where, sizeof t->hit_where, "%s", h->where ? h->where : "");
	t->frame_ms = h->frame_ms;
	t->median_ms = h->median_ms;
	t->hit_tid = h->has_pid ? h->pid : -1;
	if (h->freeze_start_ns) {
		t->freeze = true;
		t->freeze_start_ns = h->freeze_start_ns;
		t->freeze_ended = h->phase && !strcmp(h->phase, "ended") && h->freeze_end_ns;
		t->freeze_end_ns = t->freeze_ended ? h->freeze_end_ns : 0;
		t->deadline_ms = h->deadline_ms;
		t->median_frame_ms = h->median_frame_ms;
	}
	if (!t->first_hit_ns)
		t->first_hit_ns = t->hit_ts;
	/* the sessions: their files and what they lost */
	for (size_t i = 0; i < d.n_sessions; i++) {
		const hs_rundoc_snap_session *s = &d.sessions[i];
		if (!s->file || strchr(s->file, '/'))
			continue;
		char *p = hs_path_join(dir, s->file);
		hs_rpt_file *f = p ? hs_rpt_add_file(r, p, s->file) : NULL;
		free(p);
		if (!f)
			break;
		f->session = hs_rpt_strdup(r, s->name);
		f->wrapped = s->has_wrapped ? s->wrapped : -1;
		if (s->ring) {
			f->overwritten = (int64_t)s->overwritten_since_previous;
			f->ring_dropped = (int64_t)s->events_dropped_for_disk;
		}
		if (s->key_file) {
			f->chunks_dropped = (int64_t)s->chunks_dropped;
			f->events_lost = (int64_t)s->events_lost;
			f->bytes_lost_disk = (int64_t)s->bytes_lost_disk;
		}
	}
	hs_arena_free(&a);
}

/* run.json: the rules it ran with, and the counters of the whole run. */
static void read_run_json(hs_report *r, const char *path, bool whole_run)
{
	hs_arena a = {0};
	hs_rundoc_run d = {0};
	if (hs_rundoc_run_read(path, &a, &d) != HS_OK) {
		hs_arena_free(&a);
		return;
	}
	if (d.rules && !r->rules_path)
		r->rules_path = hs_rpt_strdup(r, d.rules);
	/* Events the rules asked for that this kernel would not record (optional
	 * ones the engine skipped): coverage the report must not pretend to have. */
	for (size_t i = 0; i < d.n_sessions; i++) {
		const hs_rundoc_run_session *s = &d.sessions[i];
		if (!s->n_skipped)
			continue;
		/* One line per session (the notes are few): the names; run.json says why. */
		char names[160] = "";
		size_t used = 0;
		for (size_t k = 0; k < s->n_skipped && used < sizeof names; k++) {
			const char *ev = s->skipped[k].event;
			int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "", ev ? ev : "?");
			used = w < 0 ? sizeof names : used + (size_t)w;
		}
		if (used >= sizeof names)
			memcpy(names + sizeof names - 4, "...", 4);
		hs_rpt_run_note(r,
				"session %s does not record %zu event%s the rules mark optional (not on this kernel): %s",
				s->name ? s->name : "?", s->n_skipped, s->n_skipped == 1 ? "" : "s", names);
	}
	for (size_t i = 0; whole_run && i < d.n_sessions; i++) {
		const hs_rundoc_run_session *s = &d.sessions[i];
		uint64_t overrun = 0, full = 0;
		for (size_t c = 0; c < s->n_cpus; c++) {
			overrun += s->cpus[c].overrun;
			/* A ring that does not overwrite (file-circular) drops new events
			 * when full, and marks no page: only this count says so. */
			full += s->cpus[c].dropped;
		}
		hs_rpt_run_note(r,
				"session %s (%s): ring overwrote %" PRIu64
				" events over the run%s; key-file chunks dropped %" PRIu64 ", bytes lost to disk %" PRIu64
				", events dropped writing the ring %" PRIu64,
				s->name ? s->name : "?", s->mode ? s->mode : "?", overrun,
				overrun ? " (it wrapped: only its newest part is here)" : "", s->chunks_dropped,
				s->bytes_lost_disk, s->snapshot_events_dropped);
		if (full)
			hs_rpt_run_note(r,
					"WARNING: session %s lost %" PRIu64
					" events over the run: its kernel buffer was full "
					"(the kernel marks no place in the file, so gaps may be anywhere)",
					s->name ? s->name : "?", full);
	}
	for (size_t i = 0; whole_run && i < d.n_snapshots; i++) {
		const hs_rundoc_snapshot_entry *e = &d.snapshots[i];
		if (e->has_report && e->report.verdict && !e->deleted)
			hs_rpt_run_note(r, "snapshot %u by trigger %s: %s", e->snapshot, e->trigger ? e->trigger : "?",
					e->report.verdict);
		else
			hs_rpt_run_note(r, "snapshot %u by trigger %s%s%s: report it with `analyze report` on its folder",
					e->snapshot, e->trigger ? e->trigger : "?", e->deleted ? ", deleted: " : "",
					e->deleted ? e->deleted : "");
	}
	hs_arena_free(&a);
}

/* A trace a report can read: a trace.dat by its magic, an .etl the reader opens (a replay names its JSON lines
 * .etl on Windows). */
static bool readable_trace(const char *path)
{
	if (hs_tracedat_sniff(path))
		return true;
	if (!hs_rpt_is_etl(path))
		return false;
	hs_etl *etl = NULL;
	bool ok = hs_etl_open(path, &etl) == HS_OK;
	hs_etl_close(etl);
	return ok;
}

/* hs_dir_list's filter: a regular file that is a trace, by its magic or .etl name, or, when *ctx (a bool) says
 * open, one readable_trace accepts. */
static bool trace_file(const char *dir, const char *name, void *ctx)
{
	const bool *open = ctx;
	char *p = hs_path_join(dir, name);
	bool trace = p && hs_path_is_file(p) && (*open ? readable_trace(p) : hs_tracedat_sniff(p) || hs_rpt_is_etl(p));
	free(p);
	return trace;
}

/* Every trace.dat (by magic) and .etl in a folder, names sorted. */
static void add_folder_traces(hs_report *r, const char *dir)
{
	char **names;
	size_t n;
	if (hs_dir_list(dir, trace_file, &(bool){false}, HS_REPORT_MAX_FILES, &names, &n) == HS_ENOMEM)
		r->oom = true;
	for (size_t i = 0; i < n; i++) {
		char *p = hs_path_join(dir, names[i]);
		if (p)
			hs_rpt_add_file(r, p, names[i]);
		free(p);
	}
	hs_dir_list_free(names, n);
}

static char *dir_of(hs_report *r, const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return hs_rpt_strdup(r, ".");
	if (s == path)
		return hs_rpt_strdup(r, "/");
	char *d = hs_rpt_strdup(r, path);
	if (d)
		d[s - path] = '\0';
	return d;
}

hs_status hs_rpt_input_resolve(hs_report *r)
{
	const char *in = r->input;
	const char *out = r->opts.outdir;
	if (hs_path_is_dir(in)) {
		char *snapjson = hs_path_join(in, "snapshot.json"), *runjson = hs_path_join(in, "run.json");
		if (!snapjson || !runjson) {
			free(snapjson);
			free(runjson);
			return HS_ENOMEM;
		}
		if (hs_path_is_file(snapjson)) {
			r->input_kind = "snapshot";
			read_snapshot_json(r, snapjson, in);
			/* the run's run.json, two folders up, names the rules */
			char *up = hs_path_join(in, "../../run.json");
			if (up && hs_path_is_file(up))
				read_run_json(r, up, false);
			free(up);
			if (!r->n_files)
				add_folder_traces(r, in);
		} else if (hs_path_is_file(runjson)) {
			r->input_kind = "run";
			read_run_json(r, runjson, true);
			add_folder_traces(r, in);
		} else {
			r->input_kind = "folder";
			add_folder_traces(r, in);
		}
		free(snapjson);
		free(runjson);
		if (!r->n_files) {
			hs_rpt_say(r, HS_MSG_ERROR,
				   "%s has no snapshot.json, run.json or trace file (trace-cmd's, or an .etl): nothing to "
				   "report on",
				   in);
			return HS_EINVAL;
		}
		r->outdir = hs_rpt_strdup(r, out ? out : in);
	} else if (hs_path_is_file(in)) {
		bool etl = hs_rpt_is_etl(in);
		if (!etl && !hs_tracedat_sniff(in)) {
			hs_rpt_say(r, HS_MSG_ERROR,
				   "%s is neither a trace-cmd file nor an .etl (report reads snapshot folders, run folders, "
				   "trace-cmd files and .etl files)",
				   in);
			return HS_EINVAL;
		}
		r->input_kind = "trace";
		const char *b = strrchr(in, '/');
		hs_rpt_add_file(r, in, b ? b + 1 : in);
		r->outdir = out ? hs_rpt_strdup(r, out) : dir_of(r, in);
	} else {
		hs_rpt_say(r, HS_MSG_ERROR, "%s: no such file or folder", in);
		return HS_ENOENT;
	}
	return r->oom ? HS_ENOMEM : HS_OK;
}

bool hs_report_has_input(const char *path)
{
	if (hs_path_is_file(path))
		return readable_trace(path);
	char **names;
	size_t n;
	hs_dir_list(path, trace_file, &(bool){true}, 1, &names, &n); /* one is enough */
	hs_dir_list_free(names, n);
	return n > 0;
}
