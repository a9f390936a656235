/* analyze/report.c: `analyze report PATH`: what went wrong in a snapshot, run folder or trace.dat, as a verdict, findings and a coverage box in text, JSON and HTML. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze.h"
#include "hindsight/arena.h"
#include "hindsight/compat.h"
#include "hindsight/event.h"
#include "hindsight/event_names.h"
#include "hindsight/limits.h"
#include "hindsight/ynode.h"
#include "report.h"

enum { MAX_KEPT = HS_REPORT_MAX_KEPT, MAX_FILES = HS_REPORT_MAX_FILES }; /* reasons: hindsight/limits.h */

/* ---- small helpers ---- */

void rpt_fmt_ts(uint64_t ns, char *buf, size_t cap)
{
	snprintf(buf, cap, "%" PRIu64 ".%06" PRIu64, ns / 1000000000u, (ns % 1000000000u) / 1000u);
}

void rpt_fmt_rel(const rpt *r, uint64_t ns, char *buf, size_t cap)
{
	double d = ((double)ns - (double)r->moment) / 1e9;
	if (d > -1 && d < 1)
		snprintf(buf, cap, "%+9.3f ms", d * 1e3); /* an incident's own events are microseconds apart */
	else
		snprintf(buf, cap, "%+9.3f s ", d);
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d) {
		fputs("analyze: out of memory\n", stderr);
		exit(HS_EXIT_USAGE);
	}
	return d;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		fputs("analyze: out of memory\n", stderr);
		exit(HS_EXIT_USAGE);
	}
	return p;
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

/* A problem of this file: prefix + text. */
static void add_problem(rpt_file *f, const char *prefix, const char *a)
{
	char **v = realloc(f->problems, (f->n_problems + 1) * sizeof *v);
	if (!v)
		return;
	f->problems = v;
	hs_strbuf sb = {0};
	hs_sb_append(&sb, prefix);
	hs_sb_append(&sb, a);
	v[f->n_problems++] = hs_sb_take(&sb);
}

void rpt_file_problem(rpt_file *f, const char *prefix, const char *text)
{
	add_problem(f, prefix, text);
}

/* Appends one formatted note to a growing list; a note that cannot be kept (OOM) is dropped. */
static void push_note(char ***notes, size_t *n, const char *fmt, va_list ap) HS_PRINTF_FMT(3, 0);
static void push_note(char ***notes, size_t *n, const char *fmt, va_list ap)
{
	char **v = realloc(*notes, (*n + 1) * sizeof *v);
	if (!v)
		return;
	*notes = v;
	hs_strbuf sb = {0};
	hs_sb_vprintf(&sb, fmt, ap);
	v[(*n)++] = hs_sb_take(&sb);
}

void rpt_file_note(rpt_file *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	push_note(&f->notes, &f->n_notes, fmt, ap);
	va_end(ap);
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

static void run_note(rpt *r, const char *fmt, ...) HS_PRINTF_FMT(2, 3);
static void run_note(rpt *r, const char *fmt, ...)
{
	if (r->n_run_notes >= sizeof r->run_notes / sizeof r->run_notes[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->run_notes[r->n_run_notes++], sizeof r->run_notes[0], fmt, ap);
	va_end(ap);
}

static void read_snapshot_json(rpt *r, const char *path, const char *dir)
{
	jdoc d;
	if (!jdoc_load(path, &d)) {
		run_note(r, "snapshot.json could not be read: no trigger, hit or session counters");
		r->damaged = true;
		jdoc_free(&d);
		return;
	}
	const hs_ynode *t = hs_ymap_get(d.root, "trigger"), *hit = hs_ymap_get(d.root, "hit");
	r->has_trigger = true;
	snprintf(r->trig_name, sizeof r->trig_name, "%s", jstr(t, "name") ? jstr(t, "name") : "?");
	snprintf(r->trig_kind, sizeof r->trig_kind, "%s", jstr(t, "kind") ? jstr(t, "kind") : "?");
	int64_t v = 0;
	if (jint(d.root, "snapshot", &v))
		r->snapshot_no = v;
	if (jint(d.root, "hits", &v))
		r->hits = v;
	if (jint(d.root, "first_hit_ns", &v))
		r->first_hit_ns = (uint64_t)v;
	jdouble(d.root, "detection_latency_ms", &r->detect_ms);
	snprintf(r->taken_at, sizeof r->taken_at, "%s", jstr(d.root, "taken_at") ? jstr(d.root, "taken_at") : "");
	r->hit_pid = -1;
	if (hit) {
		if (jint(hit, "ts_ns", &v))
			r->hit_ts = (uint64_t)v;
		if (jint(hit, "pid", &v))
			r->hit_pid = v;
		if (jint(hit, "frame_pid", &v))
			r->hit_pid = v;
		snprintf(r->hit_system, sizeof r->hit_system, "%s", jstr(hit, "system") ? jstr(hit, "system") : "");
		snprintf(r->hit_event, sizeof r->hit_event, "%s", jstr(hit, "event") ? jstr(hit, "event") : "");
		snprintf(r->slice, sizeof r->slice, "%s", jstr(hit, "slice") ? jstr(hit, "slice") : "");
		jdouble(hit, "frame_ms", &r->frame_ms);
		jdouble(hit, "median_ms", &r->median_ms);
		const hs_ynode *w = hs_ymap_get(hit, "where");
		size_t o = 0;
		for (size_t i = 0; w && w->type == HS_Y_MAP && i < w->n; i++) {
			const hs_ynode *val = w->items[i];
			o += (size_t)snprintf(r->hit_where + o, sizeof r->hit_where - o, "%s%s=%s", i ? ", " : "",
					      w->keys[i]->str, val->type == HS_Y_SCALAR ? val->str : "...");
			if (o >= sizeof r->hit_where)
				break;
		}
	}
	if (!r->first_hit_ns)
		r->first_hit_ns = r->hit_ts;
	/* the sessions: their files and what they lost */
	const hs_ynode *ss = hs_ymap_get(d.root, "sessions");
	for (size_t i = 0; ss && ss->type == HS_Y_SEQ && i < ss->n && r->n_files < MAX_FILES; i++) {
		const hs_ynode *s = ss->items[i];
		const char *file = jstr(s, "file");
		if (!file || strchr(file, '/'))
			continue;
		rpt_file *f = &r->files[r->n_files++];
		memset(f, 0, sizeof *f);
		f->path = join(dir, file);
		f->name = xstrdup(file);
		f->etl = rpt_etl_is_etl(f->path);
		f->session = xstrdup(jstr(s, "name"));
		f->wrapped = jbool(s, "wrapped");
		f->overwritten = f->chunks_dropped = f->events_lost = f->bytes_lost_disk = f->ring_dropped = -1;
		jint(s, "overwritten_since_previous", &f->overwritten);
		jint(s, "chunks_dropped", &f->chunks_dropped);
		jint(s, "events_lost", &f->events_lost);
		jint(s, "bytes_lost_disk", &f->bytes_lost_disk);
		jint(s, "events_dropped_for_disk", &f->ring_dropped);
	}
	jdoc_free(&d);
}

/* run.json: the rules it ran with, and the counters of the whole run. */
static void read_run_json(rpt *r, const char *path, bool whole_run)
{
	jdoc d;
	if (!jdoc_load(path, &d)) {
		jdoc_free(&d);
		return;
	}
	const char *rules = jstr(d.root, "rules");
	if (rules && !r->rules_path)
		r->rules_path = xstrdup(rules);
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
		run_note(r, "session %s does not record %zu event%s the rules mark optional (not on this kernel): %s",
			 jstr(all->items[i], "name") ? jstr(all->items[i], "name") : "?", sk->n, sk->n == 1 ? "" : "s",
			 names);
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
			run_note(r,
				 "session %s (%s): ring overwrote %" PRId64
				 " events over the run%s; key-file chunks dropped %" PRId64
				 ", bytes lost to disk %" PRId64 ", events dropped writing the ring %" PRId64,
				 jstr(s, "name") ? jstr(s, "name") : "?", jstr(s, "mode") ? jstr(s, "mode") : "?",
				 overrun, overrun ? " (it wrapped: only its newest part is here)" : "", chunks, lost,
				 dropped);
			if (full) {
				run_note(r,
					 "WARNING: session %s lost %" PRId64 " events over the run: its kernel buffer was full "
					 "(the kernel marks no place in the file, so gaps may be anywhere)",
					 jstr(s, "name") ? jstr(s, "name") : "?", full);
			}
		}
		const hs_ynode *sn = hs_ymap_get(d.root, "snapshots");
		for (size_t i = 0; sn && sn->type == HS_Y_SEQ && i < sn->n; i++) {
			const char *folder = jstr(sn->items[i], "snapshot");
			const char *trig = jstr(sn->items[i], "trigger");
			const char *del = jstr(sn->items[i], "deleted");
			run_note(r, "snapshot %s by trigger %s%s%s: report it with `analyze report` on its folder",
				 folder ? folder : "?", trig ? trig : "?", del ? ", deleted: " : "", del ? del : "");
		}
	}
	jdoc_free(&d);
}

/* ---- the walk ---- */

enum { N_IDS = 65536 };
typedef struct {
	rpt *r;
	size_t fi;
	const hs_ruleset *rules;
	uint8_t *seen;            /* [N_IDS]: shape cached */
	hs_decoded_kind *shape;   /* [N_IDS] */
	const hs_cat_event **cat; /* [N_IDS] */
	uint64_t *execs;          /* times of execs and forks, for storms */
	size_t n_execs, cap_execs;
} walk_ctx;

static int on_record(const hs_tracedat_record *rec, void *vctx)
{
	walk_ctx *c = vctx;
	rpt *r = c->r;
	rpt_file *f = &r->files[c->fi];
	f->events++;
	if (rec->ts < f->first_ns)
		f->first_ns = rec->ts;
	if (rec->ts > f->last_ns)
		f->last_ns = rec->ts;
	if (rec->cpu >= 0 && (unsigned)rec->cpu < f->cpus) {
		if (rec->missed_events != 0 && f->cpu_n[rec->cpu] && f->n_holes < HS_REPORT_MAX_HOLES) {
			if (!f->holes)
				f->holes = xcalloc(HS_REPORT_MAX_HOLES, sizeof(*f->holes));
			f->holes[f->n_holes++] = (struct rpt_hole){.cpu = (unsigned)rec->cpu,
								   .from = f->cpu_last[rec->cpu],
								   .to = rec->ts,
								   .missed = rec->missed_events > 0 ? rec->missed_events : -1};
		}
		if (!f->cpu_n[rec->cpu]++)
			f->cpu_first[rec->cpu] = rec->ts;
		f->cpu_last[rec->cpu] = rec->ts;
		if (rec->missed_events > 0)
			f->cpu_missed[rec->cpu] += (uint64_t)rec->missed_events;
	}
	if (rec->missed_events > 0)
		f->missed += (uint64_t)rec->missed_events;
	else if (rec->missed_events < 0)
		f->missed_unknown++;
	unsigned id = (unsigned)rec->id & (N_IDS - 1);
	hs_event ev;
	hs_event_from_tracedat(rec, &ev);
	if (!c->seen[id]) {
		c->seen[id] = 1;
		const hs_provider *p = hs_event_find_provider_system(c->rules, rec->system);
		c->cat[id] = p ? hs_provider_find_event(p, -1, rec->name) : NULL;
		c->shape[id] = hs_event_decode_kind(&ev, c->cat[id] ? c->cat[id]->alert : NULL);
	}
	hs_decoded_kind sh = c->shape[id];
	if (sh == HS_DEC_NONE)
		return 0;
	/* the scheduler's and the interrupts' records are many: counted here, read again for the thread's split */
	if (sh == HS_DEC_SWITCH || sh == HS_DEC_WAKE) {
		f->n_switch += sh == HS_DEC_SWITCH;
		return 0;
	}
	if (sh == HS_DEC_IRQ_ENTRY || sh == HS_DEC_IRQ_EXIT || sh == HS_DEC_SOFTIRQ_ENTRY || sh == HS_DEC_SOFTIRQ_EXIT) {
		if (sh == HS_DEC_IRQ_ENTRY || sh == HS_DEC_IRQ_EXIT)
			f->n_irq++;
		else
			f->n_softirq++;
		return 0;
	}
	if ((sh == HS_DEC_EXEC || sh == HS_DEC_FORK) && c->n_execs < 4000000) {
		if (c->n_execs == c->cap_execs) {
			size_t cap = c->cap_execs ? c->cap_execs * 2 : 1024;
			uint64_t *v = realloc(c->execs, cap * sizeof *v);
			if (v) {
				c->execs = v;
				c->cap_execs = cap;
			}
		}
		if (c->n_execs < c->cap_execs && sh == HS_DEC_EXEC)
			c->execs[c->n_execs++] = rec->ts;
	}
	if (r->n_events >= MAX_KEPT) {
		r->events_not_kept++;
		return 0;
	}
	if (r->n_events == r->cap_events) {
		size_t cap = r->cap_events ? r->cap_events * 2 : 256;
		rpt_event *v = realloc(r->events, cap * sizeof *v);
		if (!v) {
			r->events_not_kept++;
			return 0;
		}
		r->events = v;
		r->cap_events = cap;
	}
	rpt_event *e = &r->events[r->n_events];
	memset(e, 0, sizeof *e);
	e->ts = rec->ts;
	e->cpu = rec->cpu;
	e->pid = rec->pid;
	e->file = (int)c->fi;
	hs_utf8_clean(rec->comm ? rec->comm : "?", e->comm, sizeof e->comm);
	snprintf(e->system, sizeof e->system, "%s", rec->system);
	snprintf(e->name, sizeof e->name, "%s", rec->name);
	e->story = c->cat[id] ? c->cat[id]->story : NULL;
	e->alert = c->cat[id] ? c->cat[id]->alert : NULL;
	hs_event_decoded d;
	if (!hs_event_decode(&ev, sh, e->alert, e->comm, &d))
		return 0;
	e->shape = d.kind;
	memcpy(e->v, d.v, sizeof e->v);
	memcpy(e->subject, d.subject, sizeof e->subject);
	memcpy(e->detail, d.detail, sizeof e->detail);
	r->n_events++;
	return 0;
}

static void walk_file(rpt *r, size_t fi, const hs_ruleset *rules, walk_ctx *c)
{
	rpt_file *f = &r->files[fi];
	f->first_ns = UINT64_MAX;
	hs_tracedat *td = NULL;
	if (!is_file(f->path)) {
		add_problem(f, f->name, " is missing: nothing of this session can be shown");
		r->damaged = true;
		return;
	}
	if (f->etl) {
		rpt_etl_walk(r, fi, rules);
		return;
	}
	hs_status st = hs_tracedat_open(f->path, &td);
	if (td) {
		size_t n = hs_tracedat_problem_count(td);
		for (size_t i = 0; i < n && st == HS_OK; i++) {
			char text[HS_PROBLEM_TEXT_MAX];
			add_problem(f, "", hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text));
		}
	}
	if (st != HS_OK) {
		char text[HS_PROBLEM_TEXT_MAX] = "";
		if (td && hs_tracedat_problem_count(td))
			hs_problem_format(hs_tracedat_problem_at(td, 0), text, sizeof text);
		add_problem(f, "cannot be read: ", text[0] ? text : hs_strerror(st));
		r->damaged = true;
		hs_tracedat_close(td);
		return;
	}
	f->opened = true;
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	if (!r->clock[0])
		snprintf(r->clock, sizeof r->clock, "%s", info->clock);
	f->cpus = info->cpus;
	f->cpu_first = xcalloc(f->cpus, sizeof(uint64_t));
	f->cpu_last = xcalloc(f->cpus, sizeof(uint64_t));
	f->cpu_n = xcalloc(f->cpus, sizeof(uint64_t));
	f->cpu_missed = xcalloc(f->cpus, sizeof(uint64_t));
	size_t before = hs_tracedat_problem_count(td);
	memset(c->seen, 0, N_IDS);
	c->fi = fi;
	c->rules = rules;
	hs_tracedat_foreach(td, on_record, c);
	size_t n = hs_tracedat_problem_count(td);
	for (size_t i = before; i < n; i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		add_problem(f, "", hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text));
	}
	if (f->n_problems)
		r->damaged = true;
	hs_tracedat_close(td);
}

static int ev_cmp(const void *a, const void *b)
{
	const rpt_event *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	int c = strcmp(x->system, y->system);
	if (c)
		return c;
	c = strcmp(x->name, y->name);
	return c ? c : x->file - y->file;
}

static bool comm_unknown(const char *c)
{
	return !c[0] || !strcmp(c, "<...>") || !strcmp(c, "?");
}

/* Does o's subject name task pid: its exit, a signal or OOM kill aimed at it, its fork? */
static bool names_task(const rpt_event *o, int pid)
{
	switch (o->shape) {
	case HS_DEC_EXIT:
	case HS_DEC_OOM_VICTIM: return o->v[0] == pid;
	case HS_DEC_SIG_GENERATE:
	case HS_DEC_FORK: return o->v[1] == pid;
	default: return false;
	}
}

/* A task the trace's comm list no longer knew ("<...>": the kernel's
 * saved_cmdlines is small and a busy machine recycles it before the snapshot
 * is written) takes its name from the events that carry it in their payload:
 * its own exit or fork (comm), a signal sent to it (the target's comm), its
 * exec (the file's base name, as the kernel names the task). O(n * unknown). */
static void fill_unknown_comms(rpt *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		rpt_event *e = &r->events[i];
		if (!comm_unknown(e->comm))
			continue;
		const char *best = NULL;
		for (size_t k = 0; k < r->n_events && !best; k++) {
			const rpt_event *o = &r->events[k];
			if (o->pid == e->pid && !comm_unknown(o->comm))
				best = o->comm;
			else if (o->subject[0] && !comm_unknown(o->subject) && names_task(o, e->pid))
				best = o->subject;
			else if (o->shape == HS_DEC_EXEC && o->v[0] == e->pid && o->subject[0]) {
				const char *slash = strrchr(o->subject, '/');
				best = slash ? slash + 1 : o->subject;
			}
		}
		if (best)
			snprintf(e->comm, sizeof e->comm, "%.15s", best);
	}
}

/* Sorts, drops the copies a second file holds of one event, writes the exits' details. */
static void settle_events(rpt *r)
{
	if (r->n_events > 1) /* qsort's base must not be NULL, even for no elements */
		qsort(r->events, r->n_events, sizeof *r->events, ev_cmp);
	size_t o = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		rpt_event *e = &r->events[i];
		/* Two sessions that record one event stamp it a few microseconds apart. */
		bool dup = false;
		for (size_t k = o; k-- > 0 && e->ts - r->events[k].ts < 200000u && !dup;) {
			const rpt_event *p = &r->events[k];
			dup = p->file != e->file && p->pid == e->pid && !strcmp(p->name, e->name) &&
			      !strcmp(p->system, e->system) && !strcmp(p->detail, e->detail);
		}
		if (!dup)
			r->events[o++] = *e;
	}
	r->n_events = o;
	for (size_t i = 0; i < r->n_events; i++) {
		rpt_event *e = &r->events[i];
		switch (e->shape) {
		case HS_DEC_SIG_DELIVER:
		case HS_DEC_SIG_GENERATE:
		case HS_DEC_FAULT: e->lane = LANE_CRASH; break;
		case HS_DEC_OOM_VICTIM:
		case HS_DEC_RECLAIM_BEGIN:
		case HS_DEC_RECLAIM_END:
		case HS_DEC_THROTTLE:
		case HS_DEC_DIRTY_PAUSE: e->lane = LANE_MEMORY; break;
		case HS_DEC_SYSCALL_ENTER:
		case HS_DEC_SYSCALL_EXIT: e->lane = LANE_IO; break;
		case HS_DEC_EXEC:
		case HS_DEC_FORK:
		case HS_DEC_EXIT:
		case HS_DEC_EXIT_GROUP: e->lane = LANE_PROCESS; break;
		case HS_DEC_IO_ERROR:
		case HS_DEC_HANG: e->lane = LANE_IO; break;
		case HS_DEC_DISCONNECT:
		case HS_DEC_RETRANSMIT: e->lane = LANE_NET; break;
		default: e->lane = LANE_OTHER; break;
		}
		if (e->shape != HS_DEC_EXIT)
			continue;
		/* How it ended: the last exit_group, fatal signal or OOM choice for this pid before it. */
		const char *how = NULL;
		char buf[96], sb[24];
		for (size_t j = i; j-- > 0 && e->ts - r->events[j].ts < 5000000000ull;) {
			const rpt_event *p = &r->events[j];
			if (p->shape == HS_DEC_EXIT && p->v[0] == e->v[0])
				break;
			if (p->shape == HS_DEC_EXIT_GROUP && p->pid == (int)e->v[0]) {
				snprintf(buf, sizeof buf, "status %" PRId64, p->v[0]);
				e->v[2] = 1 + p->v[0];
				how = buf;
				break;
			}
			if (p->shape == HS_DEC_SIG_DELIVER && p->pid == (int)e->v[0] && p->v[1]) {
				snprintf(buf, sizeof buf, "killed by %s", hs_linux_signal_name(p->v[0], sb, sizeof sb));
				e->v[2] = -p->v[0];
				how = buf;
				break;
			}
			if (p->shape == HS_DEC_OOM_VICTIM && p->v[0] == e->v[0]) {
				snprintf(buf, sizeof buf, "killed by the OOM killer");
				e->v[2] = -9;
				how = buf;
				break;
			}
		}
		snprintf(e->detail, sizeof e->detail, "%s (pid %" PRId64 ") %s%s", e->subject[0] ? e->subject : e->comm,
			 e->v[0], e->v[1] ? "ended" : "thread ended",
			 how       ? ""
			 : e->v[1] ? ", no exit_group or fatal signal seen (killed, or its start is before the window)"
				   : "");
		if (how) {
			size_t l = strlen(e->detail);
			snprintf(e->detail + l, sizeof e->detail - l, ": %s", how);
		}
	}
}

/* ---- findings ---- */

static rpt_finding *new_finding(rpt *r, const char *kind, int impact, uint64_t ts, int pid)
{
	rpt_finding *v = realloc(r->findings, (r->n_findings + 1) * sizeof *v);
	if (!v)
		return NULL;
	r->findings = v;
	rpt_finding *f = &v[r->n_findings++];
	memset(f, 0, sizeof *f);
	f->kind = kind;
	f->impact = impact;
	f->ts = ts;
	f->pid = pid;
	return f;
}

static void add_ev(rpt_finding *f, size_t i)
{
	if (f->n_ev >= 40)
		return;
	size_t *v = realloc(f->ev, (f->n_ev + 1) * sizeof *v);
	if (!v)
		return;
	f->ev = v;
	for (size_t k = 0; k < f->n_ev; k++)
		if (v[k] == i)
			return;
	v[f->n_ev++] = i;
}

rpt_finding *rpt_new_finding(rpt *r, const char *kind, int impact, uint64_t ts, int pid)
{
	return new_finding(r, kind, impact, ts, pid);
}

void rpt_add_ev(rpt_finding *f, size_t i)
{
	add_ev(f, i);
}

void rpt_add_note(rpt_finding *f, const char *fmt, ...)
{
	if (f->n_notes >= 20)
		return;
	va_list ap;
	va_start(ap, fmt);
	push_note(&f->notes, &f->n_notes, fmt, ap);
	va_end(ap);
}

static int cmp_ev_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/* The exit of pid after event i, or SIZE_MAX. */
static size_t exit_after(const rpt *r, size_t i, int64_t pid)
{
	for (size_t j = i + 1; j < r->n_events && r->events[j].ts - r->events[i].ts < 10000000000ull; j++)
		if (r->events[j].shape == HS_DEC_EXIT && r->events[j].v[0] == pid && r->events[j].v[1])
			return j;
	return SIZE_MAX;
}

/* Kernel log lines around event i that name pid (as "[pid]" or "process pid"), or any when pid < 0 and the line contains one of words. */
static void console_near(const rpt *r, rpt_finding *f, size_t i, int64_t pid, const char *const *words)
{
	char tag1[32], tag2[48];
	snprintf(tag1, sizeof tag1, "[%" PRId64 "]", pid);
	snprintf(tag2, sizeof tag2, "process %" PRId64 " ", pid);
	for (size_t j = 0; j < r->n_events; j++) {
		const rpt_event *e = &r->events[j];
		if (e->shape != HS_DEC_CONSOLE)
			continue;
		uint64_t d = e->ts > r->events[i].ts ? e->ts - r->events[i].ts : r->events[i].ts - e->ts;
		if (d > 2000000000ull)
			continue;
		bool hit = strstr(e->detail, tag1) || strstr(e->detail, tag2);
		for (size_t w = 0; !hit && words && words[w]; w++)
			hit = strstr(e->detail, words[w]) != NULL;
		if (hit)
			add_ev(f, j);
	}
}

static void ms_after(uint64_t a, uint64_t b, char *buf, size_t cap)
{
	double ms = ((double)b - (double)a) / 1e6;
	if (ms < 1)
		snprintf(buf, cap, "%.0f us", ms * 1000);
	else
		snprintf(buf, cap, "%.0f ms", ms);
}

static void find_crashes(rpt *r)
{
	bool any_generate = false;
	for (size_t i = 0; i < r->n_events && !any_generate; i++)
		any_generate = r->events[i].shape == HS_DEC_SIG_GENERATE;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_SIG_DELIVER || !e->v[1])
			continue;
		bool core = hs_linux_signal_action(e->v[0]) == HS_SIGACT_CORE;
		char sb[24], when[32];
		const char *sig = hs_linux_signal_name(e->v[0], sb, sizeof sb);
		/* one finding per program and signal: repeats become notes; the trigger's own hit always has its own */
		rpt_finding *same = NULL;
		bool the_hit = r->has_trigger && e->pid == r->hit_pid && e->ts + 1000000u >= r->first_hit_ns &&
			       e->ts <= r->first_hit_ns + 1000000u;
		for (size_t k = 0; k < r->n_findings && !the_hit; k++)
			if (!strcmp(r->findings[k].kind, core ? "crash" : "killed") && r->findings[k].ev &&
			    !strcmp(r->events[r->findings[k].ev[0]].comm, e->comm) &&
			    r->events[r->findings[k].ev[0]].v[0] == e->v[0])
				same = &r->findings[k];
		rpt_fmt_ts(e->ts, when, sizeof when);
		if (same) {
			same->impact += same->impact < (core ? 99 : 79);
			rpt_add_note(same, "again: %s (pid %d) at %s s", e->comm, e->pid, when);
			continue;
		}
		/* a SIGKILL the OOM killer sent is the OOM finding's */
		bool oom = false;
		for (size_t j = 0; j < r->n_events; j++)
			if (r->events[j].shape == HS_DEC_OOM_VICTIM && r->events[j].v[0] == e->pid)
				oom = true;
		if (oom)
			continue;
		/* A kill is sent (signal_generate to this pid). The SIGKILL the kernel gives the other threads of a
		 * process that calls exit_group, or that crashes, is delivered without one: no finding, when the
		 * trace records signal_generate at all. */
		if (!core && any_generate) {
			bool sent = false;
			for (size_t j = i; j-- > 0 && e->ts - r->events[j].ts < 5000000000ull && !sent;)
				sent = r->events[j].shape == HS_DEC_SIG_GENERATE && r->events[j].v[1] == e->pid &&
				       r->events[j].v[0] == e->v[0];
			if (!sent)
				continue;
		}
		rpt_finding *f = new_finding(r, core ? "crash" : "killed",
					     core           ? 100
					     : any_generate ? 70
							    : 40,
					     e->ts, e->pid);
		if (!f)
			return;
		add_ev(f, i);
		const rpt_event *fault = NULL, *gen = NULL, *log = NULL;
		for (size_t j = i; j-- > 0 && e->ts - r->events[j].ts < 2000000000ull;) {
			const rpt_event *p = &r->events[j];
			if (p->shape == HS_DEC_FAULT && p->pid == e->pid && !fault) {
				fault = p;
				add_ev(f, j);
			}
			if (p->shape == HS_DEC_SIG_GENERATE && p->v[1] == e->pid && p->v[0] == e->v[0] && !gen) {
				gen = p;
				add_ev(f, j);
			}
		}
		static const char *const words[] = {NULL};
		console_near(r, f, i, e->pid, words);
		for (size_t k = 0; k < f->n_ev; k++)
			if (r->events[f->ev[k]].shape == HS_DEC_CONSOLE && !log)
				log = &r->events[f->ev[k]];
		size_t x = exit_after(r, i, e->pid);
		char later[32] = "";
		if (x != SIZE_MAX) {
			add_ev(f, x);
			ms_after(e->ts, r->events[x].ts, later, sizeof later);
		}
		char how[300] = "";
		if (fault)
			snprintf(how, sizeof how,
				 ": a NULL-pointer access (page fault at 0x%" PRIx64 ", ip 0x%" PRIx64 ")",
				 (uint64_t)fault->v[0], (uint64_t)fault->v[1]);
		else if (gen && gen->pid != e->pid)
			snprintf(how, sizeof how, ": sent by %s (pid %d)", gen->comm, gen->pid);
		else if (gen && e->v[0] != 11)
			snprintf(how, sizeof how, ": raised by the process itself (abort(), kill or raise)");
		char tail[64] = "";
		if (later[0])
			snprintf(tail, sizeof tail, "; it exited %s later", later);
		snprintf(f->verdict, sizeof f->verdict, "%s (pid %d) %s %s at %s s%s%s.", e->comm, e->pid,
			 core ? "crashed with" : "was killed by", sig, when, how, tail);
		snprintf(f->title, sizeof f->title, "%s: %s (pid %d) %s %s", core ? "Crash" : "Killed", e->comm, e->pid,
			 core ? "died of" : "was killed by", sig);
		snprintf(f->text, sizeof f->text, "%s took the default action of %s%s%s%s", e->comm, sig,
			 core ? " (terminate with a core dump)" : " (terminate)", log ? ". The kernel logged: " : "",
			 log ? log->detail : "");
		if (core)
			snprintf(
				f->next, sizeof f->next,
				"the core dump (coredumpctl list %s / core_pattern) and the faulting ip%s; what %s did just "
				"before (its exec and the ring's scheduler events for pid %d)",
				e->comm, log ? " in the kernel line (the library and offset)" : "", e->comm, e->pid);
		else
			snprintf(
				f->next, sizeof f->next,
				"who sent %s (the signal_generate sender, or a supervisor/systemd log)%s", sig,
				any_generate
					? ""
					: "; no signal_generate is recorded, so this may also be the SIGKILL the kernel "
					  "gives the other threads of a process that exits or crashes");
	}
}

static void find_oom(rpt *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_OOM_VICTIM)
			continue;
		char when[32], later[32] = "";
		rpt_fmt_ts(e->ts, when, sizeof when);
		rpt_finding *f = new_finding(r, "oom-kill", 95, e->ts, (int)e->v[0]);
		if (!f)
			return;
		add_ev(f, i);
		static const char *const words[] = {"Out of memory", "out of memory", "oom-kill", "Killed process",
						    NULL};
		console_near(r, f, i, e->v[0], words);
		for (size_t j = 0; j < r->n_events; j++)
			if (r->events[j].shape == HS_DEC_SIG_GENERATE && r->events[j].v[1] == e->v[0] &&
			    r->events[j].ts + 1000000000ull > e->ts && r->events[j].ts < e->ts + 1000000000ull)
				add_ev(f, j);
		size_t x = exit_after(r, i, e->v[0]);
		if (x != SIZE_MAX) {
			add_ev(f, x);
			ms_after(e->ts, r->events[x].ts, later, sizeof later);
		}
		bool memcg = false;
		const char *killed_line = NULL;
		for (size_t k = 0; k < f->n_ev; k++) {
			const rpt_event *p = &r->events[f->ev[k]];
			if (p->shape == HS_DEC_CONSOLE && strstr(p->detail, "Memory cgroup"))
				memcg = true;
			if (p->shape == HS_DEC_CONSOLE && strstr(p->detail, "Killed process") && !killed_line)
				killed_line = p->detail;
		}
		double mb = (double)e->v[1] /
			    1024.0; /* mark_victim's rss fields are kB (the kernel converts the page counts) */
		char tail[64] = "";
		if (later[0])
			snprintf(tail, sizeof tail, "; it exited %s later", later);
		snprintf(f->verdict, sizeof f->verdict,
			 "The OOM killer killed %s (pid %" PRId64 ") at %s s%s: it held %.1f MB of anonymous memory%s.",
			 e->subject, e->v[0], when,
			 memcg ? ", its memory cgroup was at its limit" : ", memory had run out", mb, tail);
		snprintf(f->title, sizeof f->title, "OOM kill: %s (pid %" PRId64 ")%s", e->subject, e->v[0],
			 memcg ? " in a memory cgroup" : "");
		snprintf(f->text, sizeof f->text, "%s%s%s", e->detail, killed_line ? ". The kernel logged: " : "",
			 killed_line ? killed_line : "");
		snprintf(
			f->next, sizeof f->next,
			"%s; which process grew (rss_stat, the ring's memory events) and whether reclaim stalled others "
			"before the kill (vmscan direct/memcg reclaim)",
			memcg ? "the cgroup's memory.max / memory.limit_in_bytes and memory.events"
			      : "free memory and swap");
	}
}

static void find_simple(rpt *r, hs_decoded_kind sh, const char *kind, int impact, const char *what, const char *next)
{
	rpt_finding *f = NULL;
	size_t n = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape != sh)
			continue;
		if (!f) {
			f = new_finding(r, kind, impact, e->ts, e->pid);
			if (!f)
				return;
			snprintf(f->next, sizeof f->next, "%s", next);
		}
		add_ev(f, i);
		n++;
	}
	if (!f)
		return;
	const rpt_event *e = &r->events[f->ev[0]];
	char when[32];
	rpt_fmt_ts(e->ts, when, sizeof when);
	snprintf(f->title, sizeof f->title, "%zu %s%s", n, what, n == 1 ? "" : "s");
	snprintf(f->verdict, sizeof f->verdict, "%zu %s%s, the first at %s s: %s.", n, what, n == 1 ? "" : "s", when,
		 e->detail);
	snprintf(f->text, sizeof f->text, "%s%s", e->detail, n > 1 ? " (the first; the others are below)" : "");
}

/* Retransmits of one connection (its port pair) in bursts: at least 5 within a second. */
static void find_retransmits(rpt *r)
{
	rpt_finding *f = NULL;
	size_t bursts = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_RETRANSMIT)
			continue;
		size_t n = 0, last = i;
		for (size_t j = i; j < r->n_events && r->events[j].ts - e->ts <= 1000000000ull; j++)
			if (r->events[j].shape == HS_DEC_RETRANSMIT && r->events[j].v[0] == e->v[0] &&
			    r->events[j].v[1] == e->v[1]) {
				n++;
				last = j;
			}
		if (n < 5)
			continue;
		bursts++;
		char span[32];
		ms_after(e->ts, r->events[last].ts, span, sizeof span);
		if (!f) {
			f = new_finding(r, "disconnect", 55, e->ts, e->pid);
			if (!f)
				return;
			char when[32];
			rpt_fmt_ts(e->ts, when, sizeof when);
			snprintf(f->verdict, sizeof f->verdict,
				 "A TCP connection (local port %" PRId64 ", remote port %" PRId64
				 ") retransmitted %zu times in %s from "
				 "%s s: packets were lost or the peer stalled.",
				 e->v[0], e->v[1], n, span, when);
			snprintf(
				f->text, sizeof f->text,
				"Retransmits come in bursts when the path drops packets or the peer stops acknowledging; the "
				"application sees a stalled transfer, then maybe a reset or a timeout.");
			snprintf(
				f->next, sizeof f->next,
				"the link (ip -s link, the NIC's drops), the peer's health, and whether a reset or a socket error "
				"followed (inet_sk_error_report)");
		}
		rpt_add_note(f, "%zu retransmits in %s on local port %" PRId64 ", remote port %" PRId64, n, span, e->v[0],
			 e->v[1]);
		add_ev(f, i);
		add_ev(f, last);
		/* skip the rest of this burst */
		while (i + 1 <= last)
			i++;
	}
	if (f)
		snprintf(f->title, sizeof f->title, "%zu retransmit burst%s", bursts, bursts == 1 ? "" : "s");
}

typedef struct {
	const char *file;
	size_t n, ev;
} storm_top;

/* Execs far above the window's own baseline: bins of 250 ms, peak against the median. */
static void find_storm(rpt *r, const uint64_t *execs, size_t n)
{
	if (n < 30 || r->win_last <= r->win_first)
		return;
	const uint64_t bin = 250000000ull;
	size_t nb = (size_t)((r->win_last - r->win_first) / bin) + 1;
	if (nb > 100000)
		return;
	uint32_t *cnt = xcalloc(nb, sizeof *cnt), *sorted = xcalloc(nb, sizeof *sorted);
	for (size_t i = 0; i < n; i++)
		if (execs[i] >= r->win_first && execs[i] <= r->win_last)
			cnt[(execs[i] - r->win_first) / bin]++;
	size_t peak = 0;
	for (size_t i = 0; i < nb; i++) {
		sorted[i] = cnt[i];
		if (cnt[i] > cnt[peak])
			peak = i;
	}
	/* median by counting sort on small values */
	uint32_t med = 0;
	{
		size_t below = 0;
		for (uint32_t v = 0; v <= cnt[peak]; v++) {
			size_t k = 0;
			for (size_t i = 0; i < nb; i++)
				k += sorted[i] == v;
			below += k;
			if (below * 2 >= nb) {
				med = v;
				break;
			}
		}
	}
	if (cnt[peak] >= 20 && cnt[peak] >= 5 * (med ? med : 1) && nb >= 4) {
		uint64_t ts = r->win_first + peak * bin;
		char when[32];
		rpt_fmt_ts(ts, when, sizeof when);
		rpt_finding *f = new_finding(r, "process-storm", 50, ts, -1);
		if (f) {
			snprintf(f->title, sizeof f->title,
				 "Process storm: %u execs in 250 ms (the window's median: %u)", cnt[peak], med);
			snprintf(
				f->verdict, sizeof f->verdict,
				"A process storm at %s s: %u programs started in 250 ms, %ux the window's median rate.",
				when, cnt[peak], cnt[peak] / (med ? med : 1));
			snprintf(f->text, sizeof f->text,
				 "%zu execs in the window; the busiest 250 ms had %u. Something is spawning in a loop "
				 "(a crash-restart loop, a shell loop, a build).",
				 n, cnt[peak]);
			snprintf(
				f->next, sizeof f->next,
				"the parent that forks them (the fork events' parent_pid) and why each child ends (the "
				"exit statuses below)");
			/* what ran in the busiest bin, most frequent first */
			storm_top top[8];
			size_t nt = 0;
			for (size_t i = 0; i < r->n_events; i++) {
				const rpt_event *e = &r->events[i];
				if (e->shape != HS_DEC_EXEC || e->ts < ts || e->ts >= ts + bin)
					continue;
				size_t k = 0;
				while (k < nt && strcmp(top[k].file, e->subject))
					k++;
				if (k == nt && nt < 8)
					top[nt++] = (storm_top){e->subject, 0, i};
				if (k < nt)
					top[k].n++;
			}
			for (size_t a = 0; a < nt; a++)
				for (size_t b = a + 1; b < nt; b++)
					if (top[b].n > top[a].n) {
						storm_top t = top[a];
						top[a] = top[b];
						top[b] = t;
					}
			for (size_t a = 0; a < nt && a < 4; a++) {
				rpt_add_note(f, "%zu x %s in the busiest 250 ms", top[a].n, top[a].file);
				add_ev(f, top[a].ev);
			}
		}
	}
	free(cnt);
	free(sorted);
}

void rpt_find_storm(rpt *r, const uint64_t *starts, size_t n)
{
	find_storm(r, starts, n);
}

/* Programs started in the window, collapsed by file ("6 x /bin/true exec -> exit 0 in 0.4 s"); non-zero exits. */
static void find_activity(rpt *r)
{
	typedef struct {
		char file[64];
		size_t n, status_n[4];
		int64_t status[4];
		size_t other, killed, open;
		uint64_t first, last;
		size_t ev;
	} grp;
	enum { MAX_GROUPS = HS_REPORT_MAX_EXEC_GROUPS };
	grp *g = xcalloc(MAX_GROUPS, sizeof *g);
	size_t ng = 0, total = 0;
	rpt_finding *bad = NULL;
	struct {
		char who[64], file[64];
		int64_t st, pid;
		size_t n;
	} bads[16];
	size_t n_bads = 0, n_bad_more = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_EXEC)
			continue;
		total++;
		size_t k = 0;
		while (k < ng && strcmp(g[k].file, e->subject) != 0)
			k++;
		if (k == ng) {
			if (ng == MAX_GROUPS)
				continue;
			memset(&g[ng], 0, sizeof g[ng]);
			snprintf(g[ng].file, sizeof g[ng].file, "%s", e->subject);
			g[ng].first = e->ts;
			g[ng].ev = i;
			ng++;
		}
		grp *p = &g[k];
		p->n++;
		p->last = e->ts;
		size_t x = exit_after(r, i, e->v[0]);
		if (x == SIZE_MAX) {
			p->open++;
			continue;
		}
		p->last = r->events[x].ts;
		int64_t how = r->events[x].v[2];
		if (how > 0) {
			int64_t st = how - 1;
			size_t s = 0;
			while (s < 4 && p->status_n[s] && p->status[s] != st)
				s++;
			if (s < 4) {
				p->status[s] = st;
				p->status_n[s]++;
			} else {
				p->other++;
			}
			if (st != 0) {
				if (!bad) {
					bad = new_finding(r, "exit-status", 20, r->events[x].ts, (int)e->v[0]);
					if (!bad) {
						free(g);
						return;
					}
					char when[32];
					rpt_fmt_ts(r->events[x].ts, when, sizeof when);
					snprintf(bad->title, sizeof bad->title,
						 "%s (pid %" PRId64 ") exited with status %" PRId64,
						 r->events[x].subject[0] ? r->events[x].subject : e->comm, e->v[0], st);
					snprintf(
						bad->verdict, sizeof bad->verdict,
						"No crash, kill, OOM kill, hang or I/O error in this window; %s (pid %" PRId64
						", %s) exited with status %" PRId64 " at %s s.",
						r->events[x].subject[0] ? r->events[x].subject : e->comm, e->v[0],
						e->subject, st, when);
					snprintf(bad->text, sizeof bad->text,
						 "A non-zero exit status is the program's own report of a failure.");
					snprintf(bad->next, sizeof bad->next,
						 "the program's own log or stderr for what status %" PRId64 " means",
						 st);
				} else {
					/* repeats of one program and status are counted, not listed */
					const char *who = r->events[x].subject[0] ? r->events[x].subject : e->comm;
					size_t b = 0;
					while (b < n_bads && (strcmp(bads[b].who, who) || bads[b].st != st))
						b++;
					if (b == n_bads && n_bads < 16) {
						snprintf(bads[b].who, sizeof bads[b].who, "%s", who);
						snprintf(bads[b].file, sizeof bads[b].file, "%s", e->subject);
						bads[b].st = st;
						bads[b].pid = e->v[0];
						bads[b].n = 0;
						n_bads++;
					}
					if (b < n_bads)
						bads[b].n++;
					n_bad_more++;
				}
				if (bad->n_ev < 6) {
					add_ev(bad, i);
					add_ev(bad, x);
				}
			}
		} else if (how < 0) {
			p->killed++;
		} else {
			p->other++;
		}
	}
	for (size_t b = 0; b < n_bads && bad; b++)
		rpt_add_note(bad, "also: %zu x %s (%s) exited with status %" PRId64 "%s%" PRId64 ")", bads[b].n,
			 bads[b].who, bads[b].file, bads[b].st, bads[b].n == 1 ? " (pid " : " (the first pid ",
			 bads[b].pid);
	if (bad && n_bad_more) {
		char t[sizeof bad->title + 64];
		snprintf(t, sizeof t, "%s, and %zu more non-zero exit%s", bad->title, n_bad_more,
			 n_bad_more == 1 ? "" : "s");
		snprintf(bad->title, sizeof bad->title, "%.*s", (int)(sizeof bad->title - 1), t);
	}
	rpt_finding *f = total ? new_finding(r, "activity", 5, g[0].first, -1) : NULL;
	if (!f) {
		free(g);
		return;
	}
	snprintf(f->title, sizeof f->title, "%zu program%s started in the window", total, total == 1 ? "" : "s");
	snprintf(
		f->verdict, sizeof f->verdict,
		"Nothing went wrong that this report recognises: no crash, kill, OOM kill, hang, I/O error or disconnect "
		"in the window; %zu program%s started.",
		total, total == 1 ? "" : "s");
	snprintf(f->text, sizeof f->text, "Programs started (exec), grouped by file, with how they ended.");
	snprintf(f->next, sizeof f->next,
		 "nothing here points at a fault; the ring session's file (analyze summary) has the rest");
	/* the most frequent first: the notes are capped */
	for (size_t a = 0; a < ng; a++)
		for (size_t b = a + 1; b < ng; b++)
			if (g[b].n > g[a].n) {
				grp t = g[a];
				g[a] = g[b];
				g[b] = t;
			}
	for (size_t k = 0; k < ng; k++) {
		grp *p = &g[k];
		hs_strbuf sb = {0};
		char span[32];
		ms_after(p->first, p->last, span, sizeof span);
		hs_sb_printf(&sb, "%zu x %s exec ->", p->n, p->file);
		const char *sep = " ";
		for (size_t s = 0; s < 4 && p->status_n[s]; s++) {
			hs_sb_printf(&sb, "%sexit %" PRId64 "%s", sep, p->status[s], p->status_n[s] == p->n ? "" : "");
			if (p->status_n[s] != p->n)
				hs_sb_printf(&sb, " (%zu)", p->status_n[s]);
			sep = ", ";
		}
		if (p->killed) {
			hs_sb_printf(&sb, "%skilled (%zu)", sep, p->killed);
			sep = ", ";
		}
		if (p->open) {
			hs_sb_printf(&sb, "%sstill running or exit not seen (%zu)", sep, p->open);
			sep = ", ";
		}
		if (p->other)
			hs_sb_printf(&sb, "%sended otherwise (%zu)", sep, p->other);
		hs_sb_printf(&sb, " in %s", span);
		rpt_add_note(f, "%s", hs_sb_cstr(&sb));
		hs_sb_free(&sb);
		add_ev(f, p->ev);
	}
	if (ng > 20 || ng == MAX_GROUPS)
		rpt_add_note(f, "(%s programs than the 20 most frequent shown)",
			 ng == MAX_GROUPS ? "more than 512" : "more");
	free(g);
}

/* Processes that started in the window and ended with neither exit_group nor a fatal signal, in a file that
 * records exit_group: something killed them without a trace of why (a signal the profile does not keep). */
static void find_silent_deaths(rpt *r)
{
	bool has_group[MAX_FILES] = {0};
	for (size_t i = 0; i < r->n_events; i++)
		if (r->events[i].shape == HS_DEC_EXIT_GROUP && r->events[i].file < MAX_FILES)
			has_group[r->events[i].file] = true;
	rpt_finding *f = NULL;
	size_t n = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_EXEC || e->file >= MAX_FILES || !has_group[e->file])
			continue;
		size_t x = exit_after(r, i, e->v[0]);
		if (x == SIZE_MAX || r->events[x].v[2] != 0)
			continue;
		n++;
		if (!f) {
			f = new_finding(r, "killed", 40, r->events[x].ts, (int)e->v[0]);
			if (!f)
				return;
			char when[32];
			rpt_fmt_ts(r->events[x].ts, when, sizeof when);
			snprintf(f->verdict, sizeof f->verdict,
				 "%s (pid %" PRId64
				 ", %s) ended at %s s without exit_group and without a recorded fatal signal: "
				 "it was most likely killed.",
				 r->events[x].subject[0] ? r->events[x].subject : e->comm, e->v[0], e->subject, when);
			snprintf(
				f->text, sizeof f->text,
				"A process that exits on its own calls exit_group; one that dies of a signal shows the signal's "
				"delivery, when the profile keeps it. Neither was recorded here, while other processes' exit_group "
				"calls were.");
			snprintf(
				f->next, sizeof f->next,
				"which signals the profile's key-event session keeps (its signal filter), and who could kill it "
				"(a supervisor, a watchdog, a cgroup being removed)");
		} else {
			rpt_add_note(f, "also: %s (pid %" PRId64 ", %s)",
				 r->events[x].subject[0] ? r->events[x].subject : e->comm, e->v[0], e->subject);
		}
		if (f->n_ev < 8) {
			add_ev(f, i);
			add_ev(f, x);
		}
	}
	if (f)
		snprintf(f->title, sizeof f->title, "%zu process%s ended without exit_group or a recorded fatal signal",
			 n, n == 1 ? "" : "es");
}

static void find_hitch(rpt *r)
{
	if (!r->has_trigger || strcmp(r->trig_kind, "frame_time") != 0)
		return;
	char when[32];
	rpt_fmt_ts(r->first_hit_ns, when, sizeof when);
	const char *comm = NULL;
	for (size_t i = 0; i < r->n_events && !comm; i++)
		if (r->events[i].pid == r->hit_pid)
			comm = r->events[i].comm;
	rpt_finding *f = new_finding(r, "frame-hitch", 99, r->first_hit_ns, (int)r->hit_pid);
	if (!f)
		return;
	/* the slice starts that bound the long frame, and the engine's marker */
	uint64_t from = r->first_hit_ns - (uint64_t)(r->frame_ms * 1e6) - 2000000u;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape == HS_DEC_MARKER && e->ts >= from && e->ts <= r->first_hit_ns + 2000000000ull &&
		    ((e->v[0] && e->pid == r->hit_pid && e->ts <= r->first_hit_ns + 1000000u) || !e->v[0]))
			add_ev(f, i);
	}
	double x = r->median_ms > 0 ? r->frame_ms / r->median_ms : 0;
	snprintf(f->verdict, sizeof f->verdict,
		 "A frame of %s in %s%s(pid %" PRId64 ") took %.1f ms at %s s (median %.1f ms, %.0fx).",
		 r->slice[0] ? r->slice : "?", comm ? comm : "", comm ? " " : "", r->hit_pid, r->frame_ms, when,
		 r->median_ms, x);
	snprintf(f->title, sizeof f->title, "Frame hitch: %.1f ms frame of %s (median %.1f ms)", r->frame_ms,
		 r->slice[0] ? r->slice : "?", r->median_ms);
	snprintf(
		f->text, sizeof f->text,
		"The frame that ended at the moment took %.1f ms against a median of %.1f ms over the previous frames; "
		"the trigger fired on the frame marker that ended it.",
		r->frame_ms, r->median_ms);
	snprintf(f->next, sizeof f->next,
		 "what pid %" PRId64
		 " did in the %.0f ms before the moment: the ring's sched_switch/sched_waking for it "
		 "(running, waiting for a CPU, or blocked) and who else ran on its CPU",
		 r->hit_pid, r->frame_ms);
}

/* A begin..end span of one task: a reclaim stall or a system call. */
typedef struct {
	size_t b, e; /* event indices */
	uint64_t ns;
} span;

static int span_cmp(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return (x->ns < y->ns) - (x->ns > y->ns);
}

/* Pairs begin and end events of one task (same pid and, for system calls, same call) in time order. */
static size_t pair_spans(const rpt *r, hs_decoded_kind begin, hs_decoded_kind end, span **out)
{
	size_t n = 0, cap = 0;
	span *v = NULL;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape != end)
			continue;
		for (size_t k = i; k-- > 0;) {
			const rpt_event *p = &r->events[k];
			if (p->pid != e->pid || p->file != e->file || strcmp(p->subject, e->subject))
				continue;
			if (p->shape == end)
				break; /* the task's previous span ended here: this end has no begin in the window */
			if (p->shape != begin)
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				span *w = realloc(v, cap * sizeof *w);
				if (!w)
					goto out;
				v = w;
			}
			v[n++] = (span){k, i, e->ts - p->ts};
			break;
		}
	}
out:
	if (n > 1)
		qsort(v, n, sizeof *v, span_cmp);
	*out = v;
	return n;
}

/* Tasks that stalled because memory was short: reclaim they did themselves (direct or in their memory cgroup),
 * reclaim throttling and dirty-page pauses. */
static void find_memory_stalls(rpt *r)
{
	span *sp = NULL;
	size_t n = pair_spans(r, HS_DEC_RECLAIM_BEGIN, HS_DEC_RECLAIM_END, &sp);
	size_t n_thr = 0, n_dirty = 0, first_thr = SIZE_MAX, first_dirty = SIZE_MAX, max_thr = SIZE_MAX;
	uint64_t thr_us = 0, dirty_ms = 0, total = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->shape == HS_DEC_THROTTLE) {
			n_thr++;
			thr_us += (uint64_t)(e->v[1] > 0 ? e->v[1] : 0);
			if (first_thr == SIZE_MAX)
				first_thr = i;
			if (max_thr == SIZE_MAX || e->v[1] > r->events[max_thr].v[1])
				max_thr = i;
		} else if (e->shape == HS_DEC_DIRTY_PAUSE && e->v[0] > 0) {
			n_dirty++;
			dirty_ms += (uint64_t)e->v[0];
			if (first_dirty == SIZE_MAX || e->v[0] > r->events[first_dirty].v[0])
				first_dirty = i;
		}
	}
	if (!n && !n_thr && !n_dirty) {
		free(sp);
		return;
	}
	for (size_t i = 0; i < n; i++)
		total += sp[i].ns;
	uint64_t worst = n ? sp[0].ns : 0;
	if (n_thr && (uint64_t)r->events[max_thr].v[1] * 1000u > worst)
		worst = (uint64_t)r->events[max_thr].v[1] * 1000u;
	if (n_dirty && (uint64_t)r->events[first_dirty].v[0] * 1000000u > worst)
		worst = (uint64_t)r->events[first_dirty].v[0] * 1000000u;
	uint64_t all = total + thr_us * 1000u + dirty_ms * 1000000u;
	const rpt_event *who = n ? &r->events[sp[0].b] : n_thr ? &r->events[max_thr] : &r->events[first_dirty];
	int impact = worst >= 50000000u || all >= 100000000u ? 65 : worst >= 10000000u ? 35 : 15;
	rpt_finding *f = new_finding(r, "memory-stall", impact, who->ts, who->pid);
	if (!f) {
		free(sp);
		return;
	}
	char when[32];
	rpt_fmt_ts(who->ts, when, sizeof when);
	snprintf(f->title, sizeof f->title,
		 "Memory pressure: %zu reclaim stall%s (the longest %.1f ms, %s pid %d), %zu throttle%s, %zu dirty-page "
		 "pause%s",
		 n, n == 1 ? "" : "s", n ? (double)sp[0].ns / 1e6 : 0.0, n ? r->events[sp[0].b].comm : "-",
		 n ? r->events[sp[0].b].pid : 0, n_thr, n_thr == 1 ? "" : "s", n_dirty, n_dirty == 1 ? "" : "s");
	snprintf(f->verdict, sizeof f->verdict,
		 "Tasks stalled for memory: %s (pid %d) at %s s, the longest stall %.1f ms; %.1f ms in all (%zu reclaim "
		 "stalls, %zu throttles, %zu dirty-page pauses).",
		 who->comm, who->pid, when, (double)worst / 1e6, (double)all / 1e6, n, n_thr, n_dirty);
	snprintf(f->text, sizeof f->text,
		 "A task that cannot get memory reclaims pages itself (direct reclaim, or inside its memory cgroup at "
		 "the cgroup's limit) and runs none of its own code meanwhile: %.1f ms in %zu reclaim stalls, %.1f ms "
		 "of reclaim throttling (%zu), %" PRIu64 " ms of dirty-page pauses (%zu).",
		 (double)total / 1e6, n, (double)thr_us / 1e3, n_thr, dirty_ms, n_dirty);
	snprintf(f->next, sizeof f->next,
		 "who holds the memory (the OOM finding, rss_stat, the cgroup's memory.current and memory.events), "
		 "whether the limit is too tight for the workload, swap and kswapd; for dirty-page pauses the disk's "
		 "write speed and vm.dirty_ratio");
	/* per task, the most stalled first */
	struct stalled {
		int pid;
		char comm[32];
		uint64_t ns;
		size_t n;
	} per[8];
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		const rpt_event *b = &r->events[sp[i].b];
		size_t k = 0;
		while (k < np && per[k].pid != b->pid)
			k++;
		if (k == np && np < 8) {
			per[np].pid = b->pid;
			snprintf(per[np].comm, sizeof per[np].comm, "%s", b->comm);
			per[np].ns = 0;
			per[np].n = 0;
			np++;
		}
		if (k < np) {
			per[k].ns += sp[i].ns;
			per[k].n++;
		}
	}
	for (size_t a = 0; a < np; a++)
		for (size_t b = a + 1; b < np; b++)
			if (per[b].ns > per[a].ns) {
				struct stalled x = per[a];
				per[a] = per[b];
				per[b] = x;
			}
	for (size_t k = 0; k < np && k < 4; k++)
		rpt_add_note(f, "%s (pid %d): %zu reclaim stall%s, %.1f ms", per[k].comm, per[k].pid, per[k].n,
			 per[k].n == 1 ? "" : "s", (double)per[k].ns / 1e6);
	size_t empty = 0;
	for (size_t i = 0; i < n; i++)
		empty += r->events[sp[i].e].v[0] == 0;
	if (empty)
		rpt_add_note(f, "%zu of the %zu reclaim stalls freed no page: nothing was left to reclaim (no swap, or all of "
			    "it in use), which is how an OOM kill begins", empty, n);
	for (size_t i = 0; i < n && i < 3; i++) {
		rpt_add_note(f, "stall of %.1f ms: %s/%s to %s/%s", (double)sp[i].ns / 1e6, r->events[sp[i].b].system,
			 r->events[sp[i].b].name, r->events[sp[i].e].system, r->events[sp[i].e].name);
		add_ev(f, sp[i].b);
		add_ev(f, sp[i].e);
	}
	if (max_thr != SIZE_MAX)
		add_ev(f, max_thr);
	if (first_dirty != SIZE_MAX)
		add_ev(f, first_dirty);
	free(sp);
}

/* System calls the profile records as enter/exit pairs (the sync calls: fsync, fdatasync): how long each task
 * waited in them, the longest first, and the calls that failed (ret < 0: for a sync call an I/O error). */
static void find_syscalls(rpt *r)
{
	span *sp = NULL;
	size_t n = pair_spans(r, HS_DEC_SYSCALL_ENTER, HS_DEC_SYSCALL_EXIT, &sp);
	/* one finding per call: the names, in the order of their longest span */
	for (size_t i = 0; i < n; i++) {
		const char *call = r->events[sp[i].e].subject;
		bool done = false;
		for (size_t k = 0; k < i && !done; k++)
			done = !strcmp(r->events[sp[k].e].subject, call);
		if (done)
			continue;
		size_t cnt = 0, failed = 0, first_fail = SIZE_MAX;
		uint64_t total = 0;
		for (size_t k = i; k < n; k++) {
			if (strcmp(r->events[sp[k].e].subject, call))
				continue;
			cnt++;
			total += sp[k].ns;
			if (r->events[sp[k].e].v[1] < 0) {
				failed++;
				if (first_fail == SIZE_MAX)
					first_fail = k;
			}
		}
		const rpt_event *b = &r->events[sp[i].b], *e = &r->events[sp[i].e];
		/* EIO, ENOSPC, EROFS, EDQUOT: the data may not be on disk; another error is the caller's (EBADF,
		 * EINVAL) */
		int64_t err = first_fail != SIZE_MAX ? -r->events[sp[first_fail].e].v[1] : 0;
		bool lost = err == 5 || err == 28 || err == 30 || err == 122;
		int impact = lost ? 80 : failed ? 40 : sp[i].ns >= 100000000u ? 45 : sp[i].ns >= 20000000u ? 30 : 10;
		rpt_finding *f = new_finding(r, "slow-syscall", impact, b->ts, b->pid);
		if (!f)
			break;
		char when[32], fails[64] = "";
		rpt_fmt_ts(b->ts, when, sizeof when);
		if (failed)
			snprintf(fails, sizeof fails, ", %zu failed", failed);
		snprintf(f->title, sizeof f->title, "%s: %zu call%s, the longest %.1f ms (%s pid %d)%s", call, cnt,
			 cnt == 1 ? "" : "s", (double)sp[i].ns / 1e6, b->comm, b->pid, fails);
		if (failed) {
			const rpt_event *x = &r->events[sp[first_fail].e];
			rpt_fmt_ts(x->ts, when, sizeof when);
			/* the trace's errno numbers are Linux's, and so are this tool's (it reads Linux traces only) */
			snprintf(f->verdict, sizeof f->verdict,
				 "%s failed %zu time%s: %s (pid %d) got %" PRId64 " (%s) at %s s%s.", call, failed,
				 failed == 1 ? "" : "s", x->comm, x->pid, x->v[1], strerror((int)err), when,
				 lost ? ": the data may not be on disk"
				      : ", an error of the call itself, not of the disk");
		} else {
			snprintf(f->verdict, sizeof f->verdict,
				 "%s (pid %d) waited %.1f ms in %s from %s s (%zu call%s, %.1f ms in all).", b->comm,
				 b->pid, (double)sp[i].ns / 1e6, call, when, cnt, cnt == 1 ? "" : "s",
				 (double)total / 1e6);
		}
		snprintf(f->text, sizeof f->text,
			 "%zu %s call%s returned in the window, %.1f ms in all, the longest %.1f ms; the task can do "
			 "nothing else until the call returns%s.",
			 cnt, call, cnt == 1 ? "" : "s", (double)total / 1e6, (double)sp[i].ns / 1e6,
			 failed ? "; a negative return is the error number (-5 is EIO)" : "");
		snprintf(f->next, sizeof f->next,
			 "the disk behind the file (the block events' issue-to-complete time, the device's queue and "
			 "health), what else wrote at the time (writeback, dirty-page pauses), and the file (fd %" PRId64
			 " of pid %d)",
			 b->v[1], b->pid);
		if (first_fail != SIZE_MAX) {
			add_ev(f, sp[first_fail].b);
			add_ev(f, sp[first_fail].e);
		}
		for (size_t k = i, shown = 0; k < n && shown < 3; k++) {
			if (strcmp(r->events[sp[k].e].subject, call))
				continue;
			rpt_add_note(f, "%.1f ms: %s (pid %d), fd %" PRId64 ", returned %" PRId64, (double)sp[k].ns / 1e6,
				 r->events[sp[k].b].comm, r->events[sp[k].b].pid, r->events[sp[k].b].v[1],
				 r->events[sp[k].e].v[1]);
			add_ev(f, sp[k].b);
			add_ev(f, sp[k].e);
			shown++;
		}
		(void)e;
	}
	free(sp);
}

static int finding_cmp(const void *a, const void *b)
{
	const rpt_finding *x = a, *y = b;
	if (x->impact != y->impact)
		return y->impact - x->impact;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void build_findings(rpt *r, const uint64_t *execs, size_t n_execs)
{
	find_hitch(r);
	find_oom(r);
	find_crashes(r);
	find_simple(r, HS_DEC_HANG, "hang", 85, "hung task",
		    "what the task waits on: its kernel stack (/proc/PID/stack, echo w > /proc/sysrq-trigger) and the "
		    "storage or lock behind it");
	find_simple(r, HS_DEC_IO_ERROR, "io-error", 80, "I/O error",
		    "the device's health (dmesg, smartctl, the hypervisor's disk) and which files sit on it");
	find_simple(r, HS_DEC_DISCONNECT, "disconnect", 60, "connection reset",
		    "which side reset it (send vs receive) and the application's ports; a firewall or a peer that "
		    "crashed or closed early");
	find_simple(r, HS_DEC_ALERT, "alert", 75, "catalog alert event",
		    "the events' stories below and the catalog entry for them");
	/* one exec recorded by two sessions counts once: the settled events, unless some were not kept */
	uint64_t *own = NULL;
	size_t n_own = 0;
	if (!r->events_not_kept) {
		own = xcalloc(r->n_events, sizeof *own);
		for (size_t i = 0; i < r->n_events; i++)
			if (r->events[i].shape == HS_DEC_EXEC)
				own[n_own++] = r->events[i].ts;
		execs = own;
		n_execs = n_own;
	}
	find_storm(r, execs, n_execs);
	free(own);
	find_retransmits(r);
	find_memory_stalls(r);
	find_syscalls(r);
	find_silent_deaths(r);
	find_activity(r);
	rpt_etl_findings(r);
	/* A snapshot's trigger says which finding the moment is about (its hit's time and pid).
	 * A snapshot's key-event file may hold the whole run so far: findings well
	 * before the moment are earlier history and rank below it. */
	for (size_t k = 0; k < r->n_findings && r->has_trigger && r->first_hit_ns; k++) {
		rpt_finding *f = &r->findings[k];
		if (f->impact < 20 || !f->ts)
			continue;
		bool near = f->ts + 2000000000ull >= r->first_hit_ns && f->ts <= r->first_hit_ns + 2000000000ull;
		bool at = f->ts + 1000000u >= r->first_hit_ns && f->ts <= r->first_hit_ns + 1000000u;
		if (near && (at || (r->hit_pid >= 0 && f->pid == r->hit_pid))) {
			f->impact = f->impact < 101 ? 101 : f->impact;
		} else if (f->ts + 2000000000ull < r->first_hit_ns) {
			char t[sizeof f->title + 64];
			snprintf(t, sizeof t, "Earlier (%.1f s before the moment): %s",
				 (double)(r->first_hit_ns - f->ts) / 1e9, f->title);
			snprintf(f->title, sizeof f->title, "%.*s", (int)(sizeof f->title - 1), t);
			f->impact = f->impact > 60 ? f->impact - 50 : 10;
		}
	}
	for (size_t k = 0; k < r->n_findings; k++) {
		rpt_finding *f = &r->findings[k];
		if (f->n_ev > 1)
			qsort(f->ev, f->n_ev, sizeof *f->ev, cmp_ev_index);
	}
	/* sorted before the cap: the trigger's own finding (101) leads another program's crash (100) near the moment */
	if (r->n_findings > 1)
		qsort(r->findings, r->n_findings, sizeof *r->findings, finding_cmp);
	for (size_t k = 0; k < r->n_findings; k++)
		if (r->findings[k].impact > 100)
			r->findings[k].impact = 100;
}

static void build_verdict(rpt *r)
{
	const rpt_finding *top = r->n_findings ? &r->findings[0] : NULL;
	size_t opened = 0, unread = 0;
	for (size_t i = 0; i < r->n_files; i++) {
		opened += r->files[i].opened;
		unread += !r->files[i].opened;
	}
	if (!opened) {
		snprintf(r->verdict[0], sizeof r->verdict[0],
			 "No verdict: none of the %zu trace file%s could be read (COVERAGE says why).", r->n_files,
			 r->n_files == 1 ? "" : "s");
		return;
	}
	uint64_t read = 0;
	bool all_etl = true;
	for (size_t i = 0; i < r->n_files; i++) {
		read += r->files[i].events;
		all_etl &= r->files[i].etl;
	}
	if (top)
		snprintf(r->verdict[0], sizeof r->verdict[0], "%s", top->verdict);
	else if (all_etl)
		snprintf(r->verdict[0], sizeof r->verdict[0],
			 "Nothing went wrong that this report recognises: none of the %" PRIu64 " events read is a "
			 "crash exit, a GPU reset, a device removal or a disconnect (the catalogs' alert and means "
			 "tags), and no hindsight marker.",
			 read);
	else
		snprintf(r->verdict[0], sizeof r->verdict[0],
			 "Nothing went wrong that this report recognises: no crash, kill, OOM kill, hang, I/O error or "
			 "disconnect among the %zu key events read.",
			 r->n_events);
	if (r->has_trigger) {
		char where[300] = "";
		if (r->hit_event[0])
			snprintf(where, sizeof where, " on %s/%s%s%s%s", r->hit_system, r->hit_event,
				 r->hit_where[0] ? " (" : "", r->hit_where, r->hit_where[0] ? ")" : "");
		snprintf(r->verdict[1], sizeof r->verdict[1],
			 "Snapshot %03" PRId64 " was taken by trigger %s (kind %s)%s, %" PRId64
			 " hit%s, detected %.1f ms after "
			 "the hit%s%s.",
			 r->snapshot_no, r->trig_name, r->trig_kind, where, r->hits, r->hits == 1 ? "" : "s",
			 r->detect_ms, r->taken_at[0] ? ", taken " : "", r->taken_at);
	} else if (unread) {
		snprintf(r->verdict[1], sizeof r->verdict[1],
			 "Only part of the input was read: %zu of %zu trace files could not be (COVERAGE says which).",
			 unread, r->n_files);
	} else if (r->n_findings > 1 && top && top->impact >= 20) {
		snprintf(r->verdict[1], sizeof r->verdict[1], "%zu more finding%s below.", r->n_findings - 1,
			 r->n_findings == 2 ? "" : "s");
	}
}

/* ---- output files ---- */

/* A file we may replace: absent, or one of ours (its first line says so). */
static bool ours_or_absent(const char *path, const char *marker)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT;
	char head[256] = "";
	size_t n = fread(head, 1, sizeof head - 1, f);
	head[n] = '\0';
	fclose(f);
	return n == 0 || strstr(head, marker) != NULL;
}

static int write_out(const char *dir, const char *name, const char *marker, hs_strbuf *sb)
{
	char *path = join(dir, name);
	int rc = 0;
	if (!ours_or_absent(path, marker)) {
		fprintf(stderr, "analyze: %s exists and is not a report; not overwriting it\n", path);
		free(path);
		return HS_EXIT_USAGE;
	}
	hs_strbuf tmp = {0};
	hs_sb_printf(&tmp, "%s/.%s.%ld.tmp", dir, name, (long)getpid());
	const char *tp = hs_sb_cstr(&tmp);
	FILE *f = fopen(tp, "wb");
	/* hs_rename: Windows' own rename refuses to replace the previous report */
	if (!f || fwrite(hs_sb_cstr(sb), 1, sb->len, f) != sb->len || fclose(f) != 0 || hs_rename(tp, path) != 0) {
		fprintf(stderr, "analyze: cannot write %s: %s\n", path, strerror(errno));
		if (f)
			remove(tp);
		rc = HS_EXIT_USAGE;
	}
	hs_sb_free(&tmp);
	free(path);
	return rc;
}

int rpt_write_out(const char *dir, const char *name, const char *marker, hs_strbuf *sb)
{
	return write_out(dir, name, marker, sb);
}

static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return xstrdup(".");
	if (s == path)
		return xstrdup("/");
	char *d = xstrdup(path);
	d[s - path] = '\0';
	return d;
}

/* Every trace.dat in a folder (by magic), names sorted. */
static void add_folder_traces(rpt *r, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char *names[MAX_FILES];
	size_t n = 0;
	while ((de = readdir(d)) && n < MAX_FILES) {
		if (de->d_name[0] == '.')
			continue;
		char *p = join(dir, de->d_name);
		if (is_file(p) && (hs_tracedat_sniff(p) || rpt_etl_is_etl(p)))
			names[n++] = xstrdup(de->d_name);
		free(p);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	for (size_t i = 0; i < n && r->n_files < MAX_FILES; i++) {
		rpt_file *f = &r->files[r->n_files++];
		memset(f, 0, sizeof *f);
		f->path = join(dir, names[i]);
		f->name = names[i];
		f->etl = rpt_etl_is_etl(f->path);
		f->wrapped = -1;
		f->overwritten = f->chunks_dropped = f->events_lost = f->bytes_lost_disk = f->ring_dropped = -1;
	}
}

static void rpt_free(rpt *r)
{
	for (size_t i = 0; i < r->n_files; i++) {
		rpt_file *f = &r->files[i];
		free(f->path);
		free(f->name);
		free(f->session);
		free(f->cpu_first);
		free(f->cpu_last);
		free(f->cpu_n);
		free(f->cpu_missed);
		free(f->holes);
		for (size_t p = 0; p < f->n_problems; p++)
			free(f->problems[p]);
		free(f->problems);
		for (size_t p = 0; p < f->n_notes; p++)
			free(f->notes[p]);
		free(f->notes);
	}
	for (size_t k = 0; k < r->n_findings; k++) {
		free(r->findings[k].ev);
		for (size_t i = 0; i < r->findings[k].n_notes; i++)
			free(r->findings[k].notes[i]);
		free(r->findings[k].notes);
	}
	free(r->findings);
	free(r->files);
	free(r->events);
	free(r->outdir);
	free(r->rules_path);
	free(r);
}

int analyze_report(const analyze_opts *o)
{
	rpt *r = xcalloc(1, sizeof *r);
	r->files = xcalloc(MAX_FILES, sizeof *r->files);
	r->input = o->file;
	char *snapjson = NULL, *runjson = NULL;
	if (is_dir(o->file)) {
		snapjson = join(o->file, "snapshot.json");
		runjson = join(o->file, "run.json");
		if (is_file(snapjson)) {
			r->input_kind = "snapshot";
			read_snapshot_json(r, snapjson, o->file);
			/* the run's run.json, two folders up, names the rules */
			char *up = join(o->file, "../../run.json");
			if (is_file(up))
				read_run_json(r, up, false);
			free(up);
			if (!r->n_files)
				add_folder_traces(r, o->file);
		} else if (is_file(runjson)) {
			r->input_kind = "run";
			read_run_json(r, runjson, true);
			add_folder_traces(r, o->file);
		} else {
			r->input_kind = "folder";
			add_folder_traces(r, o->file);
		}
		if (!r->n_files) {
			fprintf(stderr,
				"analyze: %s has no snapshot.json, run.json or trace file (trace-cmd's, or an .etl): "
				"nothing to report on\n",
				o->file);
			free(snapjson);
			free(runjson);
			rpt_free(r);
			return HS_EXIT_USAGE;
		}
		r->outdir = xstrdup(o->output ? o->output : o->file);
	} else if (is_file(o->file)) {
		bool etl = rpt_etl_is_etl(o->file);
		if (!etl && !hs_tracedat_sniff(o->file)) {
			fprintf(stderr,
				"analyze: %s is neither a trace-cmd file nor an .etl (report reads snapshot folders, "
				"run folders, trace-cmd files and .etl files)\n",
				o->file);
			rpt_free(r);
			return HS_EXIT_USAGE;
		}
		r->input_kind = "trace";
		rpt_file *f = &r->files[r->n_files++];
		f->path = xstrdup(o->file);
		const char *b = strrchr(o->file, '/');
		f->name = xstrdup(b ? b + 1 : o->file);
		f->etl = etl;
		f->wrapped = -1;
		f->overwritten = f->chunks_dropped = f->events_lost = f->bytes_lost_disk = f->ring_dropped = -1;
		r->outdir = o->output ? xstrdup(o->output) : dir_of(o->file);
	} else {
		fprintf(stderr, "analyze: %s: no such file or folder\n", o->file);
		rpt_free(r);
		return HS_EXIT_USAGE;
	}
	free(snapjson);
	free(runjson);
	if (o->output && !is_dir(o->output)) {
		fprintf(stderr, "analyze: -o %s: not a folder\n", o->output);
		rpt_free(r);
		return HS_EXIT_USAGE;
	}

	/* The rules the recording used give the stories and alert tags; without them the report still reads the trace. */
	analyze_rules rules = {0};
	analyze_opts ro = *o;
	if (!o->rules && r->rules_path && is_file(r->rules_path))
		ro.rules = r->rules_path;
	else if (!o->rules && r->rules_path)
		snprintf(r->rules_note, sizeof r->rules_note, "the run's rules %s are not here; ", r->rules_path);
	if (analyze_load_rules(&ro, &rules) != 0) {
		size_t l = strlen(r->rules_note);
		snprintf(r->rules_note + l, sizeof r->rules_note - l,
			 "no rules could be loaded: no stories, and no catalog alert tags (hangs, I/O errors and "
			 "disconnects are recognised only by their tags)");
		free(r->rules_path);
		r->rules_path = NULL;
	} else {
		free(r->rules_path);
		r->rules_path = xstrdup(rules.path);
	}

	walk_ctx c = {.r = r};
	c.seen = xcalloc(N_IDS, 1);
	c.shape = xcalloc(N_IDS, sizeof *c.shape);
	c.cat = xcalloc(N_IDS, sizeof *c.cat);
	for (size_t i = 0; i < r->n_files; i++)
		walk_file(r, i, rules.rules, &c);
	r->win_first = UINT64_MAX;
	for (size_t i = 0; i < r->n_files; i++) {
		if (!r->files[i].events)
			continue;
		if (r->files[i].first_ns < r->win_first)
			r->win_first = r->files[i].first_ns;
		if (r->files[i].last_ns > r->win_last)
			r->win_last = r->files[i].last_ns;
	}
	if (r->win_first == UINT64_MAX)
		r->win_first = r->win_last = 0;
	settle_events(r);
	fill_unknown_comms(r);
	rpt_etl_settle(r);
	build_findings(r, c.execs, c.n_execs);
	r->moment = r->has_trigger && r->first_hit_ns              ? r->first_hit_ns
		    : r->n_findings && r->findings[0].impact >= 20 ? r->findings[0].ts
								   : r->win_last;
	build_verdict(r);
	rpt_thread_build(r);

	/* before rendering: the report names the regions files it wrote */
	int rrc = rpt_etl_write_regions(r);
	hs_strbuf txt = {0}, js = {0}, html = {0};
	rpt_render_text(r, &txt);
	rpt_render_json(r, &js);
	rpt_render_html(r, &html);
	int rc = rrc ? rrc : write_out(r->outdir, "report.txt", "hindsight report", &txt);
	if (!rc)
		rc = write_out(r->outdir, "report.json", "\"report_version\"", &js);
	if (!rc)
		rc = write_out(r->outdir, "report.html", "<!-- hindsight report -->", &html);
	if (o->json)
		fputs(hs_sb_cstr(&js), stdout);
	else
		fputs(hs_sb_cstr(&txt), stdout);
	if (!rc && r->damaged)
		rc = HS_EXIT_FINDINGS;
	hs_sb_free(&txt);
	hs_sb_free(&js);
	hs_sb_free(&html);
	free(c.seen);
	free(c.shape);
	free(c.cat);
	free(c.execs);
	analyze_free_rules(&rules);
	rpt_free(r);
	return rc;
}
