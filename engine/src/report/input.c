/* report/input.c: what a report's PATH is (snapshot, run folder, folder of traces, one trace file), the files it names, and what snapshot.json and run.json say about them. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hindsight/arena.h"
#include "hindsight/tracedat.h"
#include "hindsight/ynode.h"
#include "report/model.h"

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join(const char *dir, const char *name)
{
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s/%s", dir, name);
	return hs_sb_take(&sb);
}

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	hs_strbuf sb = {0};
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		hs_sb_appendn(&sb, buf, n);
	fclose(f);
	*len = sb.len;
	return hs_sb_take(&sb);
}

/* ---- JSON files (snapshot.json, run.json), read as the YAML 1.2 they also are ---- */

typedef struct {
	hs_arena arena;
	hs_diags *diags;
	hs_ynode *root;
	char *text;
} jdoc;

static bool jdoc_load(const char *path, jdoc *d)
{
	memset(d, 0, sizeof *d);
	size_t len = 0;
	d->text = read_text(path, &len);
	if (!d->text)
		return false;
	d->diags = hs_diags_new();
	bool syntax = false;
	d->root = d->diags ? hs_yaml_parse(&d->arena, path, d->text, len, d->diags, &syntax) : NULL;
	return d->root && d->root->type == HS_Y_MAP;
}

static void jdoc_free(jdoc *d)
{
	hs_arena_free(&d->arena);
	hs_diags_free(d->diags);
	free(d->text);
	memset(d, 0, sizeof *d);
}

static const char *jstr(const hs_ynode *n, const char *key)
{
	const hs_ynode *v = hs_ymap_get(n, key);
	return v && v->type == HS_Y_SCALAR && hs_ynode_value(v) != HS_YV_NULL ? v->str : NULL;
}

static bool jint(const hs_ynode *n, const char *key, int64_t *out)
{
	const char *s = jstr(n, key);
	if (!s)
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s)
		return false;
	*out = v;
	return true;
}

static bool jdouble(const hs_ynode *n, const char *key, double *out)
{
	const char *s = jstr(n, key);
	if (!s)
		return false;
	char *end;
	double v = strtod(s, &end);
	if (end == s)
		return false;
	*out = v;
	return true;
}

static int jbool(const hs_ynode *n, const char *key)
{
	const char *s = jstr(n, key);
	return !s ? -1 : strcmp(s, "true") == 0;
}

static void read_snapshot_json(hs_report *r, const char *path, const char *dir)
{
	jdoc d;
	hs_rpt_trigger *t = &r->trig;
	if (!jdoc_load(path, &d)) {
		hs_rpt_run_note(r, "snapshot.json could not be read: no trigger, hit or session counters");
		r->damaged = true;
		jdoc_free(&d);
		return;
	}
	const hs_ynode *tr = hs_ymap_get(d.root, "trigger"), *hit = hs_ymap_get(d.root, "hit");
	t->present = true;
	snprintf(t->name, sizeof t->name, "%s", jstr(tr, "name") ? jstr(tr, "name") : "?");
	snprintf(t->kind, sizeof t->kind, "%s", jstr(tr, "kind") ? jstr(tr, "kind") : "?");
	int64_t v = 0;
	if (jint(d.root, "snapshot", &v))
		t->snapshot_no = v;
	if (jint(d.root, "hits", &v))
		t->hits = v;
	if (jint(d.root, "first_hit_ns", &v))
		t->first_hit_ns = (uint64_t)v;
	jdouble(d.root, "detection_latency_ms", &t->detect_ms);
	snprintf(t->taken_at, sizeof t->taken_at, "%s", jstr(d.root, "taken_at") ? jstr(d.root, "taken_at") : "");
	t->hit_pid = -1;
	if (hit) {
		if (jint(hit, "ts_ns", &v))
			t->hit_ts = (uint64_t)v;
		if (jint(hit, "pid", &v))
			t->hit_pid = v;
		if (jint(hit, "frame_pid", &v))
			t->hit_pid = v;
		snprintf(t->hit_system, sizeof t->hit_system, "%s", jstr(hit, "system") ? jstr(hit, "system") : "");
		snprintf(t->hit_event, sizeof t->hit_event, "%s", jstr(hit, "event") ? jstr(hit, "event") : "");
		snprintf(t->slice, sizeof t->slice, "%s", jstr(hit, "slice") ? jstr(hit, "slice") : "");
		jdouble(hit, "frame_ms", &t->frame_ms);
		jdouble(hit, "median_ms", &t->median_ms);
		const hs_ynode *w = hs_ymap_get(hit, "where");
		size_t o = 0;
		for (size_t i = 0; w && w->type == HS_Y_MAP && i < w->n; i++) {
			const hs_ynode *val = w->items[i];
			o += (size_t)snprintf(t->hit_where + o, sizeof t->hit_where - o, "%s%s=%s", i ? ", " : "",
					      w->keys[i]->str, val->type == HS_Y_SCALAR ? val->str : "...");
			if (o >= sizeof t->hit_where)
				break;
		}
	}
	if (!t->first_hit_ns)
		t->first_hit_ns = t->hit_ts;
	/* the sessions: their files and what they lost */
	const hs_ynode *ss = hs_ymap_get(d.root, "sessions");
	for (size_t i = 0; ss && ss->type == HS_Y_SEQ && i < ss->n; i++) {
		const hs_ynode *s = ss->items[i];
		const char *file = jstr(s, "file");
		if (!file || strchr(file, '/'))
			continue;
		char *p = join(dir, file);
		hs_rpt_file *f = p ? hs_rpt_add_file(r, p, file) : NULL;
		free(p);
		if (!f)
			break;
		f->session = hs_rpt_strdup(r, jstr(s, "name"));
		f->wrapped = jbool(s, "wrapped");
		jint(s, "overwritten_since_previous", &f->overwritten);
		jint(s, "chunks_dropped", &f->chunks_dropped);
		jint(s, "events_lost", &f->events_lost);
		jint(s, "bytes_lost_disk", &f->bytes_lost_disk);
		jint(s, "events_dropped_for_disk", &f->ring_dropped);
	}
	jdoc_free(&d);
}

/* run.json: the rules it ran with, and the counters of the whole run. */
static void read_run_json(hs_report *r, const char *path, bool whole_run)
{
	jdoc d;
	if (!jdoc_load(path, &d)) {
		jdoc_free(&d);
		return;
	}
	const char *rules = jstr(d.root, "rules");
	if (rules && !r->rules_path)
		r->rules_path = hs_rpt_strdup(r, rules);
	/* Events the rules asked for that this kernel would not record (optional
	 * ones the engine skipped): coverage the report must not pretend to have. */
	const hs_ynode *all = hs_ymap_get(d.root, "sessions");
	for (size_t i = 0; all && all->type == HS_Y_SEQ && i < all->n; i++) {
		const hs_ynode *sk = hs_ymap_get(all->items[i], "skipped");
		if (!sk || sk->type != HS_Y_SEQ || !sk->n)
			continue;
		/* One line per session (the notes are few): the names; run.json says why. */
		char names[160] = "";
		size_t used = 0;
		for (size_t k = 0; k < sk->n && used < sizeof names; k++) {
			const char *ev = jstr(sk->items[k], "event");
			int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "", ev ? ev : "?");
			used = w < 0 ? sizeof names : used + (size_t)w;
		}
		if (used >= sizeof names)
			memcpy(names + sizeof names - 4, "...", 4);
		hs_rpt_run_note(r,
				"session %s does not record %zu event%s the rules mark optional (not on this kernel): %s",
				jstr(all->items[i], "name") ? jstr(all->items[i], "name") : "?", sk->n,
				sk->n == 1 ? "" : "s", names);
	}
	if (whole_run) {
		const hs_ynode *ss = hs_ymap_get(d.root, "sessions");
		for (size_t i = 0; ss && ss->type == HS_Y_SEQ && i < ss->n; i++) {
			const hs_ynode *s = ss->items[i];
			int64_t chunks = 0, lost = 0, dropped = 0, overrun = 0, full = 0;
			jint(s, "chunks_dropped", &chunks);
			jint(s, "bytes_lost_disk", &lost);
			jint(s, "snapshot_events_dropped", &dropped);
			const hs_ynode *cpus = hs_ymap_get(s, "cpus");
			for (size_t c = 0; cpus && cpus->type == HS_Y_SEQ && c < cpus->n; c++) {
				int64_t v = 0;
				if (jint(cpus->items[c], "overrun", &v))
					overrun += v;
				/* A ring that does not overwrite (file-circular) drops new events
				 * when full, and marks no page: only this count says so. */
				if (jint(cpus->items[c], "dropped", &v))
					full += v;
			}
			hs_rpt_run_note(r,
					"session %s (%s): ring overwrote %" PRId64
					" events over the run%s; key-file chunks dropped %" PRId64
					", bytes lost to disk %" PRId64 ", events dropped writing the ring %" PRId64,
					jstr(s, "name") ? jstr(s, "name") : "?", jstr(s, "mode") ? jstr(s, "mode") : "?",
					overrun, overrun ? " (it wrapped: only its newest part is here)" : "", chunks, lost,
					dropped);
			if (full) {
				hs_rpt_run_note(r,
						"WARNING: session %s lost %" PRId64
						" events over the run: its kernel buffer was full "
						"(the kernel marks no place in the file, so gaps may be anywhere)",
						jstr(s, "name") ? jstr(s, "name") : "?", full);
			}
		}
		const hs_ynode *sn = hs_ymap_get(d.root, "snapshots");
		for (size_t i = 0; sn && sn->type == HS_Y_SEQ && i < sn->n; i++) {
			const char *folder = jstr(sn->items[i], "snapshot");
			const char *trig = jstr(sn->items[i], "trigger");
			const char *del = jstr(sn->items[i], "deleted");
			hs_rpt_run_note(r, "snapshot %s by trigger %s%s%s: report it with `analyze report` on its folder",
					folder ? folder : "?", trig ? trig : "?", del ? ", deleted: " : "", del ? del : "");
		}
	}
	jdoc_free(&d);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every trace.dat (by magic) and .etl in a folder, names sorted. */
static void add_folder_traces(hs_report *r, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char *names[HS_REPORT_MAX_FILES];
	size_t n = 0;
	while ((de = readdir(d)) && n < HS_REPORT_MAX_FILES) {
		if (de->d_name[0] == '.')
			continue;
		char *p = join(dir, de->d_name);
		bool trace = p && is_file(p) && (hs_tracedat_sniff(p) || hs_rpt_is_etl(p));
		free(p);
		if (trace && (names[n] = hs_rpt_strdup(r, de->d_name)))
			n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof *names, name_cmp);
	for (size_t i = 0; i < n; i++) {
		char *p = join(dir, names[i]);
		if (p)
			hs_rpt_add_file(r, p, names[i]);
		free(p);
		free(names[i]);
	}
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
	if (is_dir(in)) {
		char *snapjson = join(in, "snapshot.json"), *runjson = join(in, "run.json");
		if (!snapjson || !runjson) {
			free(snapjson);
			free(runjson);
			return HS_ENOMEM;
		}
		if (is_file(snapjson)) {
			r->input_kind = "snapshot";
			read_snapshot_json(r, snapjson, in);
			/* the run's run.json, two folders up, names the rules */
			char *up = join(in, "../../run.json");
			if (up && is_file(up))
				read_run_json(r, up, false);
			free(up);
			if (!r->n_files)
				add_folder_traces(r, in);
		} else if (is_file(runjson)) {
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
	} else if (is_file(in)) {
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
