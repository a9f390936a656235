/* run/snapshots.c: triggered snapshots of a running recording: folder, marker, session files, snapshot.json, retention. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "hindsight/hmap.h"
#include "hindsight/limits.h"
#include "hindsight/rundoc.h"
#include "hindsight/vec.h"
#include "run/os.h"
#include "run/snapshots.h"
#include "run/tasks.h"
#include "util/compat.h"
#include "util/strbuf.h"

typedef struct {
	unsigned seq;
	const char *trigger; /* borrowed from the plan (or "manual") */
	size_t trigger_i;    /* SIZE_MAX: the built-in manual trigger */
	char *folder;        /* <run>/snapshots/<NNN>-<trigger> */
	char **files;        /* names inside it */
	size_t n_files;
	uint64_t bytes;
	bool ok, deleted;
	const char *deleted_why; /* "keep" or "snapshots_max_mb" */
	bool has_report;
	hs_rundoc_report report; /* its capture-time report (strings in `arena`) */
} snap_rec;

struct hs_snapshots {
	const hs_plan *plan;
	const char *run_dir;
	const char *rules_hash;
	char *dir; /* <run>/snapshots */
	bool dir_made;
	snap_rec *recs;
	size_t n, cap;
	uint64_t *overrun_at_last; /* per session: ring overruns counted at the previous snapshot */
	const hs_msg *msg;         /* borrowed */
	/* the capture-time reports: snapshot.json's report state when taken, and who is told of a complete one */
	const char *report_state;
	hs_snapshots_taken_fn on_taken;
	void *on_taken_ctx;
	hs_arena arena; /* the records' report strings */
};

/* Messages for the user (source "trigger"). */
static void say(const hs_snapshots *sn, hs_msg_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(const hs_snapshots *sn, hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_msg_vsay(sn->msg, level, "trigger", fmt, ap);
	va_end(ap);
}

static char *printf_new(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *printf_new(const char *fmt, ...)
{
	hs_strbuf sb = {0};
	va_list ap;
	va_start(ap, fmt);
	hs_sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	return hs_sb_take(&sb);
}

hs_snapshots *hs_snapshots_new(const hs_plan *plan, const char *run_dir, const char *rules_hash, const hs_msg *msg)
{
	hs_snapshots *sn = calloc(1, sizeof(*sn));
	if (!sn)
		return NULL;
	sn->plan = plan;
	sn->run_dir = run_dir;
	sn->rules_hash = rules_hash;
	sn->msg = msg;
	sn->dir = printf_new("%s/snapshots", run_dir);
	sn->overrun_at_last = calloc(plan->n_sessions ? plan->n_sessions : 1, sizeof(*sn->overrun_at_last));
	if (!sn->dir || !sn->overrun_at_last) {
		hs_snapshots_free(sn);
		return NULL;
	}
	return sn;
}

static void rec_free(snap_rec *r)
{
	for (size_t i = 0; i < r->n_files; i++)
		free(r->files[i]);
	free(r->files);
	free(r->folder);
}

void hs_snapshots_free(hs_snapshots *sn)
{
	if (!sn)
		return;
	for (size_t i = 0; i < sn->n; i++)
		rec_free(&sn->recs[i]);
	free(sn->recs);
	free(sn->dir);
	free(sn->overrun_at_last);
	hs_arena_free(&sn->arena);
	free(sn);
}

void hs_snapshots_rules_hash(const hs_ruleset *rs, char out[17])
{
	uint64_t h = HS_HASH_START;
	out[0] = 0;
	for (size_t i = 0; i < rs->n_files; i++) {
		FILE *f = fopen(rs->files[i], "rb");
		if (!f)
			return;
		unsigned char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			h = hs_hash_more(h, buf, n);
		fclose(f);
	}
	snprintf(out, 17, "%016" PRIx64, h);
}

/* Removes the files we wrote into `folder`, then the folder. */
static void remove_folder(const char *folder, char **files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *p = printf_new("%s/%s", folder, files[i]);
		if (p)
			remove(p);
		free(p);
	}
	/* A partial ring file (the backend writes through NAME.tmp) may be left. */
	for (size_t i = 0; i < n; i++) {
		char *p = printf_new("%s/%s.tmp", folder, files[i]);
		if (p)
			remove(p);
		free(p);
	}
	hs_os_rmdir(folder);
}

static uint64_t file_bytes(const char *path)
{
	struct stat st;
	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* One session's part of snapshot.json: its file and what the snapshot holds (cpu_windows borrowed from s). */
static void fill_session(hs_snapshots *sn, hs_rundoc_snap_session *o, size_t i, const hs_session_status *s,
			 const char *file, hs_status st, hs_rundoc_cpu_window *windows)
{
	memset(o, 0, sizeof *o);
	o->name = s->name;
	o->mode = hs_mode_name(s->mode);
	o->file = st == HS_OK ? file : NULL;
	o->error = st != HS_OK ? hs_strerror(st) : NULL;
	uint64_t overrun = 0, lost = 0;
	for (unsigned c = 0; c < s->cpus; c++) {
		overrun += s->cpu[c].overrun;
		lost += s->cpu[c].dropped + s->cpu[c].commit_overrun;
	}
	if (s->mode == HS_MODE_BUFFERING) {
		o->ring = true;
		o->events = s->snapshot_events;
		o->ring_entries = s->snapshot_entries;
		o->events_dropped_for_disk = s->snapshot_events_dropped;
		o->raw_bytes = s->snapshot_raw_bytes;
		o->file_bytes = s->snapshot_file_bytes;
		o->seconds = s->snapshot_s;
		/* The window each CPU's part of the ring covers (trace clock, ns). */
		if (s->snapshot_cpu_first_ns && s->snapshot_cpu_last_ns && windows) {
			for (unsigned c = 0; c < s->cpus; c++)
				windows[c] = (hs_rundoc_cpu_window){c, s->snapshot_cpu_first_ns[c], s->snapshot_cpu_last_ns[c]};
			o->cpu_windows = windows;
			o->n_cpu_windows = s->cpus;
			o->has_cpu_windows = true;
		}
		/* The ring overwrote its oldest events since the previous snapshot:
		 * its window starts later than that snapshot's end. */
		o->has_wrapped = true;
		o->wrapped = overrun > sn->overrun_at_last[i] || s->pool_buffers_lost;
		o->overwritten_since_previous = overrun - sn->overrun_at_last[i];
		sn->overrun_at_last[i] = overrun;
	} else {
		o->key_file = true;
		o->bytes_in_file = s->bytes_in_file;
		o->chunks_dropped = s->chunks_dropped;
		o->bytes_lost_disk = s->bytes_lost_disk;
		o->events_lost = lost + overrun + s->pool_events_lost;
	}
}

/* Deletes snapshot r (retention) and says so. */
static void retire(const hs_snapshots *sn, snap_rec *r, const char *why)
{
	remove_folder(r->folder, r->files, r->n_files);
	r->deleted = true;
	r->deleted_why = why;
	say(sn, HS_MSG_INFO, "snapshot %s deleted (%s)", r->folder, why);
}

static void retention(hs_snapshots *sn, const snap_rec *now)
{
	/* keep: the newest `keep` of this trigger. */
	if (now->trigger_i != SIZE_MAX) {
		uint64_t keep = sn->plan->triggers[now->trigger_i].trigger->keep, seen = 0;
		for (size_t i = sn->n; i-- > 0;) {
			snap_rec *r = &sn->recs[i];
			if (r->deleted || !r->ok || r->trigger_i != now->trigger_i)
				continue;
			if (++seen > keep)
				retire(sn, r, "keep");
		}
	}
	/* The disk cap over all of them: the oldest of this trigger first (never
	 * the one just taken), then the oldest of any. */
	uint64_t cap = sn->plan->snapshots_max_bytes;
	if (!cap)
		return;
	for (;;) {
		uint64_t total = 0;
		snap_rec *same = NULL, *any = NULL;
		for (size_t i = 0; i < sn->n; i++) {
			snap_rec *r = &sn->recs[i];
			if (r->deleted || !r->ok)
				continue;
			total += r->bytes;
			if (r == now)
				continue;
			if (!same && r->trigger_i == now->trigger_i)
				same = r;
			if (!any)
				any = r;
		}
		if (total <= cap)
			return;
		snap_rec *victim = same ? same : any;
		if (!victim) {
			say(sn, HS_MSG_WARN,
			    "snapshot %s alone is %.1f MB, over snapshots_max_mb (%.1f MB); kept, nothing "
			    "older is left to delete",
			    now->folder, (double)now->bytes / 1048576.0, (double)cap / 1048576.0);
			return;
		}
		retire(sn, victim, "snapshots_max_mb");
	}
}

static bool add_file(snap_rec *r, const char *name)
{
	char **n = realloc(r->files, (r->n_files + 1) * sizeof(*n));
	if (!n)
		return false;
	r->files = n;
	if (!(r->files[r->n_files] = strdup(name)))
		return false;
	r->n_files++;
	return true;
}

hs_status hs_snapshots_take(hs_snapshots *sn, const hs_backend_ops *ops, hs_backend *b, const hs_trigger_fire *f)
{
	const hs_plan *plan = sn->plan;
	snap_rec *recs = hs_array_grow(sn->recs, sizeof *recs, sn->n, &sn->cap, 16);
	if (!recs)
		return HS_ENOMEM;
	sn->recs = recs;
	snap_rec *r = &sn->recs[sn->n];
	*r = (snap_rec){.seq = (unsigned)sn->n + 1, .trigger = f->name, .trigger_i = f->trigger};
	char *partial = NULL, *json_path = NULL;
	hs_status st = HS_ENOMEM;
	uint64_t t_start = hs_os_monotonic_ms();
	uint64_t taken_ns = ops->now_ns ? ops->now_ns(b) : 0;
	if (!sn->dir_made) {
		if (hs_os_mkdir(sn->dir) && errno != EEXIST) {
			say(sn, HS_MSG_WARN, "trigger %s: cannot create %s: %s; no snapshot", f->name, sn->dir,
			    strerror(errno));
			return HS_EIO;
		}
		sn->dir_made = true;
	}
	r->folder = printf_new("%s/%03u-%s", sn->dir, r->seq, f->name);
	partial = printf_new("%s/.%03u-%s.partial", sn->dir, r->seq, f->name);
	if (!r->folder || !partial) {
		free(r->folder);
		free(partial);
		return HS_ENOMEM;
	}
	sn->n++; /* recorded from here on, even when it fails (run.json says so) */
	if (hs_os_mkdir(partial) && errno != EEXIST) {
		say(sn, HS_MSG_WARN, "trigger %s: cannot create %s: %s; no snapshot", f->name, partial,
		    strerror(errno));
		st = HS_EIO;
		goto fail;
	}

	/* The marker first, so every file of the snapshot shows the moment. */
	hs_strbuf msb = {0};
	hs_sb_printf(&msb, "hindsight: trigger %s fired; snapshot %03u; hit at %" PRIu64 " ns, detected at %" PRIu64
			   " ns, %" PRIu64 " hits",
		     f->name, r->seq, f->first_hit_ns, f->detect_ns, f->hits);
	hs_status mst = ops->mark ? ops->mark(b, hs_sb_cstr(&msb)) : HS_EUNSUPPORTED;
	hs_sb_free(&msb);

	/* Rings first (their window ends now), then the key-event files. */
	hs_status *sst = calloc(plan->n_sessions ? plan->n_sessions : 1, sizeof(*sst));
	if (!sst)
		goto fail;
	bool ok = true;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < plan->n_sessions; i++) {
			const hs_session *s = plan->sessions[i].session;
			bool ring = s->mode == HS_MODE_BUFFERING;
			if (s->mode == HS_MODE_SAMPLING || ring != (pass == 0) || !s->output)
				continue;
			char *path = printf_new("%s/%s", partial, s->output);
			if (!path || !add_file(r, s->output)) {
				free(path);
				sst[i] = HS_ENOMEM;
				ok = false;
				continue;
			}
			sst[i] = ops->snapshot(b, i, path, false);
			if (sst[i] != HS_OK) {
				say(sn, HS_MSG_WARN, "trigger %s: %s could not be saved (%s); recording goes on",
				    f->name, s->name, hs_strerror(sst[i]));
				/* A ring is the snapshot's point; a key file the ETW kernel owns is not copyable
				 * (the backend writes a cut of it only where a real-time consumer saw its events). */
				if (ring || sst[i] != HS_EINVAL)
					ok = false;
			} else {
				r->bytes += file_bytes(path);
			}
			free(path);
		}

	/* tasks.json: what the system says now of the tasks and cgroups the report will name (run/tasks.h); a
	 * snapshot without it is still whole, the report then names culprits from the trace alone. Only of a live
	 * backend (one that records until told to stop): a replayed trace's pids are not this system's tasks, and
	 * this system's task of the same pid would lend the report a wrong policy or cgroup. */
	char *tasks_path = ops->finished ? NULL : printf_new("%s/tasks.json", partial);
	if (tasks_path) {
		hs_status tst = hs_tasks_write(tasks_path, taken_ns);
		if (tst == HS_OK && add_file(r, "tasks.json"))
			r->bytes += file_bytes(tasks_path);
		else if (tst != HS_OK && tst != HS_EUNSUPPORTED)
			say(sn, HS_MSG_WARN, "trigger %s: tasks.json not written (%s); the snapshot is complete without it",
			    f->name, hs_strerror(tst));
		free(tasks_path);
	}

	/* snapshot.json, through its one writer (hindsight/rundoc.h) */
	hs_strbuf sb = {0}, tj = {0};
	hs_json j;
	char iso[64];
	if (f->trigger != SIZE_MAX) {
		hs_json_init(&j, &tj);
		hs_plan_trigger_json(plan, &plan->triggers[f->trigger], &j);
	}
	hs_rundoc_snapshot d = {
		.snapshot = r->seq,
		.trigger_json = f->trigger != SIZE_MAX ? hs_sb_cstr(&tj) : NULL,
		.hit_json = f->evidence_json,
		.clock = "the sessions' trace clock (ns)",
		.first_hit_ns = f->first_hit_ns,
		.last_hit_ns = f->last_hit_ns,
		.hits = f->hits,
		/* How many incidents it stands for: 1 / the trigger's chance (issue 22). */
		.weight = f->weight > 0 ? f->weight : 1.0,
		.detect_ns = f->detect_ns,
		.detection_latency_ms =
			f->detect_ns >= f->first_hit_ns ? (double)(f->detect_ns - f->first_hit_ns) / 1e6 : 0.0,
		.due_ns = f->due_ns,
		.taken_ns = taken_ns,
		.taken_at = iso,
		.marker_written = mst == HS_OK,
		.rules_hash = sn->rules_hash,
		.backend = ops->name,
		.has_report = sn->report_state != NULL,
		.report = {.state = sn->report_state, .pid = -1},
	};
	if (f->trigger == SIZE_MAX) { /* the built-in manual trigger: nothing in the rules */
		hs_json_init(&j, &tj);
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, HS_RUNDOC_TRIGGER_NAME, f->name);
		hs_json_kstr(&j, HS_RUNDOC_TRIGGER_KIND, hs_trigger_kind_name(f->kind));
		hs_json_obj_end(&j);
		d.trigger_json = hs_sb_cstr(&tj);
	}
	hs_os_iso_time(iso, sizeof(iso), time(NULL));
	hs_rundoc_snap_session *ss_doc = calloc(plan->n_sessions ? plan->n_sessions : 1, sizeof *ss_doc);
	const char **names = calloc(r->n_files + 2, sizeof *names);
	if (!ss_doc || !names) {
		free(ss_doc);
		free(names);
		hs_sb_free(&tj);
		goto fail;
	}
	for (size_t i = 0; i < plan->n_sessions; i++) {
		const hs_session *s = plan->sessions[i].session;
		const hs_session_status *ss;
		if (s->mode == HS_MODE_SAMPLING || !s->output || ops->session_status(b, i, &ss) != HS_OK)
			continue;
		hs_rundoc_cpu_window *w = ss->cpus ? calloc(ss->cpus, sizeof *w) : NULL;
		fill_session(sn, &ss_doc[d.n_sessions++], i, ss, s->output, sst[i], w);
		if (w && !ss_doc[d.n_sessions - 1].cpu_windows)
			free(w); /* the others are freed with the document below */
	}
	d.sessions = ss_doc;
	for (size_t i = 0; i < r->n_files; i++)
		names[d.n_files++] = r->files[i];
	names[d.n_files++] = "snapshot.json";
	d.files = names;
	hs_status wst = hs_rundoc_snapshot_write(&d, &sb);
	for (size_t i = 0; i < d.n_sessions; i++)
		free(ss_doc[i].cpu_windows);
	free(ss_doc);
	free(names);
	hs_sb_free(&tj);
	if (wst != HS_OK) {
		hs_sb_free(&sb);
		free(sst);
		goto fail;
	}
	free(sst);
	json_path = printf_new("%s/snapshot.json", partial);
	if (!json_path || !add_file(r, "snapshot.json")) {
		hs_sb_free(&sb);
		goto fail;
	}
	if ((st = hs_os_write_file_synced(json_path, &sb)) != HS_OK) {
		say(sn, HS_MSG_WARN, "trigger %s: cannot write %s; recording goes on", f->name, json_path);
		goto fail;
	}
	r->bytes += file_bytes(json_path);
	if (!ok) {
		st = HS_EIO;
		goto fail;
	}
	if (hs_rename(partial, r->folder)) {
		say(sn, HS_MSG_WARN, "trigger %s: cannot rename %s to %s: %s", f->name, partial, r->folder,
		    strerror(errno));
		st = HS_EIO;
		goto fail;
	}
	r->ok = true;
	if (sn->report_state) {
		r->has_report = true;
		r->report = (hs_rundoc_report){.state = sn->report_state, .pid = -1};
	}
	say(sn, HS_MSG_INFO, "trigger %s fired: snapshot %s (%.1f MB, %" PRIu64 " hits, %.2f s); recording goes on",
	    f->name, r->folder, (double)r->bytes / 1048576.0, f->hits,
	    (double)(hs_os_monotonic_ms() - t_start) / 1000.0);
	free(partial);
	free(json_path);
	retention(sn, r);
	/* retention never deletes the one just taken; its report is made from here (the capture-time report) */
	if (sn->on_taken)
		sn->on_taken(sn->on_taken_ctx, r->seq, r->trigger, r->folder);
	return HS_OK;
fail:
	/* Nothing half written keeps a final name: the partial folder goes. */
	if (partial)
		remove_folder(partial, r->files, r->n_files);
	say(sn, HS_MSG_WARN, "trigger %s: snapshot %03u FAILED (%s); recording goes on", f->name, r->seq,
	    hs_strerror(st));
	r->deleted = true;
	r->deleted_why = "failed";
	free(partial);
	free(json_path);
	return st;
}

size_t hs_snapshots_entries(const hs_snapshots *sn, hs_arena *a, hs_rundoc_snapshot_entry **out)
{
	*out = hs_arena_alloc(a, (sn && sn->n ? sn->n : 1) * sizeof **out);
	for (size_t i = 0; *out && sn && i < sn->n; i++) {
		const snap_rec *r = &sn->recs[i];
		(*out)[i] = (hs_rundoc_snapshot_entry){
			.snapshot = r->seq,
			.trigger = r->trigger,
			.folder = r->folder,
			.complete = r->ok,
			.bytes = r->bytes,
			.deleted = r->deleted ? r->deleted_why : NULL,
			.has_report = r->has_report,
			.report = r->report,
		};
	}
	return *out && sn ? sn->n : 0;
}

void hs_snapshots_set_reports(hs_snapshots *sn, const char *state, hs_snapshots_taken_fn fn, void *ctx)
{
	sn->report_state = state;
	sn->on_taken = fn;
	sn->on_taken_ctx = ctx;
}

static const char *keep_str(hs_snapshots *sn, const char *s)
{
	return s ? hs_arena_strdup(&sn->arena, s) : NULL;
}

void hs_snapshots_set_report(hs_snapshots *sn, unsigned seq, const hs_rundoc_report *rep)
{
	for (size_t i = 0; i < sn->n; i++) {
		snap_rec *r = &sn->recs[i];
		if (r->seq != seq)
			continue;
		r->has_report = true;
		r->report = *rep;
		r->report.state = keep_str(sn, rep->state);
		r->report.path = keep_str(sn, rep->path);
		r->report.verdict = keep_str(sn, rep->verdict);
		r->report.verdict_more = keep_str(sn, rep->verdict_more);
		r->report.kind = keep_str(sn, rep->kind);
		r->report.comm = keep_str(sn, rep->comm);
		r->report.error = keep_str(sn, rep->error);
		return;
	}
}
