/* analyze/fleet.c: `analyze fleet PATH...`: every report under run folders, snapshot folders or a store of report.json files, grouped by their fleet signature (docs/fleet.md): the top buckets with their counts, sample weights, machines, first and last seen, an example and its verdict; one flat NDJSON row per report for DuckDB, ClickHouse or BigQuery. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "analyze.h"
#include "fleet.h"
#include "hindsight/compat.h"
#include "hindsight/hmap.h"
#include "hindsight/limits.h"
#include "hindsight/report.h"
#include "hindsight/text.h"

typedef struct {
	const char *argv0, *rules, *ndjson;
	bool json;
	size_t top; /* 0: every bucket */
} fleet_opts;

typedef struct {
	const char *path, *why;
} fleet_skip;

typedef struct {
	const fleet_opts *o;
	hs_arena a; /* every string of the rows and skips */
	fleet_row *rows;
	size_t n_rows, cap_rows;
	fleet_skip *skips;
	size_t n_skips, cap_skips;
	hs_hmap seen;      /* real paths of the reports and folders read */
	size_t built;      /* snapshots reported here (no report.json, or one without a signature) */
	size_t run_reports; /* run folders' own reports (their final rings), left out */
	bool oom;
	/* progress on a terminal, once the scan has taken a second */
	int tty;
	time_t start;
	bool shown;
} fleet;

/* ---- progress ---- */

static void progress(fleet *f, const char *what)
{
	if (f->tty < 0)
		f->tty = hs_isatty(2);
	if (!f->tty || time(NULL) - f->start < 1)
		return;
	fprintf(stderr, "\ranalyze: fleet: %zu reports read, %zu skipped%s%s\033[K", f->n_rows, f->n_skips,
		what ? "; " : "", what ? what : "");
	fflush(stderr);
	f->shown = true;
}

static void progress_done(fleet *f)
{
	if (f->shown)
		fputs("\r\033[K", stderr);
	f->shown = false;
}

typedef struct {
	fleet *f;
	const char *folder;
} build_progress;

static void on_report_progress(void *ctx, const char *file, double fraction, bool done)
{
	build_progress *b = ctx;
	if (done)
		return;
	char what[512];
	snprintf(what, sizeof what, "reporting %s: %s %3.0f%%", b->folder, file, fraction * 100.0);
	progress(b->f, what);
}

/* ---- the rows ---- */

static const char *keep(fleet *f, const char *s)
{
	const char *c = s ? hs_arena_strdup(&f->a, s) : NULL;
	if (s && !c)
		f->oom = true;
	return c;
}

static void skip(fleet *f, const char *path, const char *fmt, ...) HS_PRINTF_FMT(3, 4);
static void skip(fleet *f, const char *path, const char *fmt, ...)
{
	char why[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	fleet_skip *s = hs_arena_grow(&f->a, f->skips, sizeof *f->skips, f->n_skips, &f->cap_skips);
	if (!s) {
		f->oom = true;
		return;
	}
	f->skips = s;
	f->skips[f->n_skips++] = (fleet_skip){keep(f, path), keep(f, why)};
}

static fleet_row *new_row(fleet *f)
{
	if (f->n_rows == f->cap_rows) {
		size_t cap = f->cap_rows ? f->cap_rows * 2 : 1024;
		fleet_row *r = realloc(f->rows, cap * sizeof *r);
		if (!r) {
			f->oom = true;
			return NULL;
		}
		f->rows = r;
		f->cap_rows = cap;
	}
	return &f->rows[f->n_rows];
}

/* Fills the command's part of a row read from `report` about `folder` and keeps it. */
static void add_row(fleet *f, fleet_row *r, const char *report, const char *folder)
{
	r->report = keep(f, report);
	r->folder = keep(f, folder);
	int64_t t = 0;
	struct stat st;
	if (fleet_parse_time(r->seen_at, &t)) {
		r->seen_s = t;
	} else if (stat(report, &st) == 0) {
		r->seen_s = (int64_t)st.st_mtime; /* a lone trace's report: when the report was made */
		r->seen_from_file = true;
	}
	f->n_rows++;
}

/* Whether path (a report or a folder) was read already (the same snapshot named twice, a link): its real path. */
static bool seen_before(fleet *f, const char *path)
{
	char *real = hs_realpath(path);
	const char *key = real ? real : path;
	bool added = false;
	if (!hs_hmap_put_bytes(&f->seen, key, strlen(key), &added))
		f->oom = true;
	free(real);
	return !added;
}

/* Reads report.json's row: its first HS_FLEET_HEAD_BYTES, the whole file when the block lies further.
 * FLEET_ROW_BAD with *why when it cannot be read or is not a report. */
static fleet_row_status read_report(fleet *f, const char *path, fleet_row *r, char *why, size_t cap)
{
	FILE *fp = hs_fopen(path, "rb");
	if (!fp) {
		snprintf(why, cap, "cannot be opened");
		return FLEET_ROW_BAD;
	}
	static char head[HS_FLEET_HEAD_BYTES];
	size_t n = fread(head, 1, sizeof head, fp);
	bool whole = n < sizeof head;
	fclose(fp);
	fleet_row_status st = fleet_row_read(head, n, whole, &f->a, r, why, cap);
	if (st != FLEET_ROW_NEED_MORE)
		return st;
	char *all = NULL;
	size_t len = 0;
	hs_status rs = hs_read_file(path, HS_FLEET_MAX_REPORT_BYTES, &all, &len);
	if (rs != HS_OK) {
		snprintf(why, cap, "cannot be read: %s", hs_strerror(rs));
		return FLEET_ROW_BAD;
	}
	st = fleet_row_read(all, len, true, &f->a, r, why, cap);
	free(all);
	return st;
}

/* A snapshot without a usable report.json: its report through the report layer, written into the folder (as
 * `analyze report` would) when it can be; its row from the JSON either way. */
static void build_snapshot(fleet *f, const char *dir, const char *report_path)
{
	hs_msg_file mf = {.f = stderr, .prefix = "analyze: fleet"};
	hs_msg msg = {.fn = hs_msg_file_fn, .ctx = &mf};
	build_progress bp = {f, dir};
	hs_report_opts ro = {
		.input = dir,
		.rules = f->o->rules,
		.default_rules = "stutter.yaml",
		.argv0 = f->o->argv0,
		.generator = "hindsight analyze fleet",
		.msg = &msg,
		.progress = on_report_progress,
		.progress_ctx = &bp,
	};
	if (!hs_report_has_input(dir)) {
		skip(f, dir, "a snapshot without a report and without a trace a report reads (a replay's JSON lines)");
		return;
	}
	hs_report *rep = NULL;
	hs_status st = hs_report_build(&ro, &rep);
	if (st != HS_OK) {
		skip(f, dir, "its report could not be made: %s", hs_strerror(st));
		return;
	}
	f->built++;
	bool written = hs_report_write(rep) == HS_OK;
	hs_strbuf sb = {0};
	hs_report_render(rep, HS_REPORT_JSON, &sb);
	hs_report_free(rep);
	fleet_row *r = new_row(f);
	char why[200];
	if (!r || sb.oom) {
		hs_sb_free(&sb);
		f->oom = true;
		return;
	}
	const char *json = hs_sb_cstr(&sb);
	if (fleet_row_read(json, strlen(json), true, &f->a, r, why, sizeof why) != FLEET_ROW_OK || !r->has_signature)
		skip(f, dir, "its new report has no signature (no fleet rules could be loaded)");
	else
		add_row(f, r, written ? report_path : dir, dir);
	hs_sb_free(&sb);
}

static void snapshot(fleet *f, const char *dir)
{
	char *rp = hs_path_join(dir, "report.json");
	if (!rp) {
		f->oom = true;
		return;
	}
	if (seen_before(f, dir)) {
		free(rp);
		return;
	}
	if (hs_path_is_file(rp)) {
		fleet_row *r = new_row(f);
		char why[200];
		if (!r) {
			free(rp);
			return;
		}
		if (read_report(f, rp, r, why, sizeof why) == FLEET_ROW_OK && r->has_signature) {
			add_row(f, r, rp, dir);
			free(rp);
			return;
		}
		/* made before reports had signatures, or not a report: the snapshot's report is made again */
	}
	build_snapshot(f, dir, rp);
	free(rp);
}

/* The folder of a file's path ("." for a bare name). */
static char *dir_of(const char *path)
{
	const char *sep = hs_path_last_sep(path);
	if (!sep)
		return strdup(".");
	size_t n = sep == path ? 1 : (size_t)(sep - path);
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, path, n);
		d[n] = '\0';
	}
	return d;
}

/* A report.json not inside a snapshot folder: named on the command line (any kind), or found in a store. */
static void loose_report(fleet *f, const char *path, bool named)
{
	if (seen_before(f, path))
		return;
	fleet_row *r = new_row(f);
	char why[200];
	if (!r)
		return;
	fleet_row_status st = read_report(f, path, r, why, sizeof why);
	if (st != FLEET_ROW_OK) {
		skip(f, path, "%s", why);
		return;
	}
	if (!r->has_signature) {
		skip(f, path, "made before reports had fleet signatures (or without fleet rules): run analyze report on "
			      "its folder");
		return;
	}
	if (!named && r->input_kind && !strcmp(r->input_kind, "run")) {
		f->run_reports++; /* a run's final rings are not an incident */
		return;
	}
	char *dir = dir_of(path);
	add_row(f, r, path, dir ? dir : ".");
	free(dir);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk(fleet *f, const char *dir, int depth)
{
	char *sj = hs_path_join(dir, "snapshot.json"), *rj = hs_path_join(dir, "run.json");
	bool snap = sj && hs_path_is_file(sj), run = rj && hs_path_is_file(rj);
	free(sj);
	free(rj);
	if (snap) {
		snapshot(f, dir);
		return;
	}
	if (depth >= HS_FLEET_MAX_DEPTH) {
		skip(f, dir, "deeper than %d folders below the path given: not read", HS_FLEET_MAX_DEPTH);
		return;
	}
	if (seen_before(f, dir)) /* a link back to a folder read already */
		return;
	char **names;
	size_t n;
	hs_status st = hs_dir_list(dir, NULL, NULL, 0, &names, &n);
	if (st == HS_ENOENT) {
		skip(f, dir, "cannot be listed");
		return;
	}
	if (st == HS_ENOMEM)
		f->oom = true;
	for (size_t i = 0; i < n; i++) {
		char *p = hs_path_join(dir, names[i]);
		if (p && hs_path_is_dir(p)) {
			walk(f, p, depth + 1);
		} else if (p && !strcmp(names[i], "report.json")) {
			if (run)
				f->run_reports++; /* the run's final rings: not an incident */
			else
				loose_report(f, p, false);
		}
		free(p);
		if ((f->n_rows & 255) == 0)
			progress(f, NULL);
	}
	hs_dir_list_free(names, n);
}

/* ---- grouping ---- */

typedef struct {
	const fleet_row *first; /* the bucket's rows are rows[first..first+n) once sorted */
	size_t n;
	double weight;
	size_t machines, unknown_machines;
	int64_t first_s, last_s;
	const fleet_row *example; /* the latest */
} bucket;

static int cmp_str(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

static int row_cmp(const void *pa, const void *pb)
{
	const fleet_row *a = pa, *b = pb;
	int c = cmp_str(a->bucket_id, b->bucket_id);
	if (!c)
		c = (a->sig_version > b->sig_version) - (a->sig_version < b->sig_version);
	if (!c)
		c = cmp_str(a->machine, b->machine);
	if (!c)
		c = (a->seen_s > b->seen_s) - (a->seen_s < b->seen_s);
	if (!c)
		c = cmp_str(a->report, b->report);
	return c;
}

static int bucket_cmp(const void *pa, const void *pb)
{
	const bucket *a = pa, *b = pb;
	if (a->weight != b->weight)
		return a->weight < b->weight ? 1 : -1;
	if (a->n != b->n)
		return a->n < b->n ? 1 : -1;
	if (a->last_s != b->last_s)
		return a->last_s < b->last_s ? 1 : -1;
	return cmp_str(a->first->bucket_id, b->first->bucket_id);
}

static size_t group(fleet *f, bucket **out)
{
	*out = NULL;
	if (!f->n_rows)
		return 0;
	qsort(f->rows, f->n_rows, sizeof *f->rows, row_cmp);
	bucket *bs = calloc(f->n_rows, sizeof *bs);
	if (!bs) {
		f->oom = true;
		return 0;
	}
	size_t nb = 0;
	for (size_t i = 0; i < f->n_rows; i++) {
		const fleet_row *r = &f->rows[i];
		bucket *b = nb ? &bs[nb - 1] : NULL;
		if (!b || cmp_str(b->first->bucket_id, r->bucket_id) || b->first->sig_version != r->sig_version) {
			b = &bs[nb++];
			*b = (bucket){.first = r, .first_s = r->seen_s, .last_s = r->seen_s, .example = r};
		}
		const fleet_row *prev = i && b->n ? r - 1 : NULL;
		if (!r->machine)
			b->unknown_machines++;
		else if (!prev || cmp_str(prev->machine, r->machine))
			b->machines++;
		b->n++;
		b->weight += r->weight;
		b->first_s = r->seen_s < b->first_s ? r->seen_s : b->first_s;
		if (r->seen_s >= b->last_s) {
			b->last_s = r->seen_s;
			b->example = r;
		}
	}
	qsort(bs, nb, sizeof *bs, bucket_cmp);
	*out = bs;
	return nb;
}

static size_t distinct_machines(const fleet *f, size_t *unknown)
{
	const char **m = malloc((f->n_rows + 1) * sizeof *m);
	size_t n = 0, d = 0;
	*unknown = 0;
	for (size_t i = 0; m && i < f->n_rows; i++) {
		if (f->rows[i].machine)
			m[n++] = f->rows[i].machine;
		else
			++*unknown;
	}
	if (m && n > 1)
		qsort(m, n, sizeof *m, name_cmp);
	for (size_t i = 0; m && i < n; i++)
		d += !i || strcmp(m[i], m[i - 1]);
	free(m);
	return d;
}

/* ---- output ---- */

static void fmt_time(int64_t s, char *buf, size_t cap)
{
	struct tm tm;
	if (!hs_gmtime((time_t)s, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, cap, "?");
}

static void machines_text(const bucket *b, char *buf, size_t cap)
{
	if (!b->unknown_machines)
		snprintf(buf, cap, "%zu", b->machines);
	else if (!b->machines)
		snprintf(buf, cap, "?");
	else
		snprintf(buf, cap, "%zu+?", b->machines);
}

static void print_text(fleet *f, const bucket *bs, size_t nb, FILE *out)
{
	size_t unknown = 0, machines = distinct_machines(f, &unknown);
	fprintf(out, "analyze fleet: %zu report%s, %zu bucket%s, %zu machine%s", f->n_rows, f->n_rows == 1 ? "" : "s", nb,
		nb == 1 ? "" : "s", machines, machines == 1 ? "" : "s");
	if (unknown)
		fprintf(out, " (%zu report%s name%s no machine)", unknown, unknown == 1 ? "" : "s", unknown == 1 ? "s" : "");
	if (f->built)
		fprintf(out, "; %zu snapshot%s reported here", f->built, f->built == 1 ? "" : "s");
	fputc('\n', out);
	int64_t v0 = 0, v1 = 0;
	for (size_t i = 0; i < f->n_rows; i++) {
		int64_t v = f->rows[i].sig_version;
		v0 = !i || v < v0 ? v : v0;
		v1 = !i || v > v1 ? v : v1;
	}
	if (v0 != v1)
		fprintf(out, "note: the reports carry sig_version %" PRId64 " to %" PRId64
			     ": buckets of two versions never merge (docs/fleet.md)\n",
			v0, v1);
	if (f->run_reports)
		fprintf(out, "note: %zu run report%s (a run's final rings, not an incident) left out; name one to count it\n",
			f->run_reports, f->run_reports == 1 ? "" : "s");
	if (!nb)
		return;
	size_t show = f->o->top && f->o->top < nb ? f->o->top : nb;
	fprintf(out, "\n   #  COUNT    WEIGHT  MACHINES  FIRST SEEN            LAST SEEN             BUCKET            "
		     "SIGNATURE\n");
	for (size_t i = 0; i < show; i++) {
		const bucket *b = &bs[i];
		char t0[32], t1[32], mc[32];
		fmt_time(b->first_s, t0, sizeof t0);
		fmt_time(b->last_s, t1, sizeof t1);
		machines_text(b, mc, sizeof mc);
		fprintf(out, "%4zu  %5zu  %8.1f  %8s  %-20s  %-20s  %s  %s\n", i + 1, b->n, b->weight, mc, t0, t1,
			b->first->bucket_id, b->first->signature);
		fprintf(out, "        example: %s\n", b->example->folder);
		fprintf(out, "        verdict: %s\n", b->example->verdict ? b->example->verdict : "(none)");
	}
	if (show < nb)
		fprintf(out, "\n%zu more bucket%s (--top 0 lists every one)\n", nb - show, nb - show == 1 ? "" : "s");
}

/* One bucket's object in the JSON (its rows start at b->first). */
static void put_bucket(hs_json *j, const void *item)
{
	const bucket *b = item;
	const fleet_row *r = b->first;
	char t0[32], t1[32];
	fmt_time(b->first_s, t0, sizeof t0);
	fmt_time(b->last_s, t1, sizeof t1);
	hs_json_kstr(j, "bucket_id", r->bucket_id);
	hs_json_kint(j, "sig_version", r->sig_version);
	hs_json_kstr(j, "signature", r->signature);
	hs_json_kstr(j, "symptom", r->symptom);
	hs_json_kuint(j, "count", b->n);
	hs_json_kdouble(j, "weight", b->weight, 3);
	hs_json_kuint(j, "machines", b->machines);
	hs_json_kuint(j, "reports_without_machine", b->unknown_machines);
	hs_json_kstr(j, "first_seen", t0);
	hs_json_kstr(j, "last_seen", t1);
	hs_json_kstr(j, "example", b->example->folder);
	hs_json_kstr(j, "example_report", b->example->report);
	hs_json_kstr(j, "verdict", b->example->verdict);
}

/* One skipped place's object in the JSON. */
static void put_skip(hs_json *j, const void *item)
{
	const fleet_skip *s = item;
	hs_json_kstr(j, "path", s->path);
	hs_json_kstr(j, "why", s->why);
}

static void print_json(fleet *f, const bucket *bs, size_t nb, FILE *out)
{
	size_t unknown = 0, machines = distinct_machines(f, &unknown);
	hs_strbuf sb = {0};
	hs_json j;
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_json_kint(&j, "fleet_version", 1);
	hs_json_kuint(&j, "reports", f->n_rows);
	hs_json_kuint(&j, "machines", machines);
	hs_json_kuint(&j, "reports_without_machine", unknown);
	hs_json_kuint(&j, "reported_here", f->built);
	hs_json_kuint(&j, "run_reports_left_out", f->run_reports);
	size_t show = f->o->top && f->o->top < nb ? f->o->top : nb;
	hs_json_kobjects(&j, "buckets", bs, show, sizeof *bs, put_bucket);
	hs_json_kobjects(&j, "skipped", f->skips, f->n_skips, sizeof *f->skips, put_skip);
	hs_json_obj_end(&j);
	hs_sb_putc(&sb, '\n');
	hs_sb_write_free(&sb, out);
}

/* NDJSON members, compact (the JSON writer pretty-prints): `,"key":value`, the first without its comma. */
static void nd_key(hs_strbuf *sb, const char *k)
{
	if (sb->len && sb->buf[sb->len - 1] != '{')
		hs_sb_putc(sb, ',');
	hs_json_escape(sb, k);
	hs_sb_putc(sb, ':');
}

static void nd_str(hs_strbuf *sb, const char *k, const char *v)
{
	nd_key(sb, k);
	if (v)
		hs_json_escape(sb, v);
	else
		hs_sb_append(sb, "null");
}

/* The signature block's strings from symptom to host, in the row's column order. */
static const struct {
	const char *key;
	size_t at;
} sig_strs[] = {
#define F(k) {#k, offsetof(fleet_row, k)}
	F(symptom), F(cause), F(culprit), F(detail), F(app), F(app_version), F(os), F(os_build), F(machine), F(host),
#undef F
};

/* One flat row per report: the signature block's keys, where the report is, its verdict. */
static bool write_ndjson(fleet *f, FILE *out)
{
	hs_strbuf sb = {0};
	bool ok = true;
	for (size_t i = 0; i < f->n_rows && ok; i++) {
		const fleet_row *r = &f->rows[i];
		char t[32];
		fmt_time(r->seen_s, t, sizeof t);
		hs_sb_putc(&sb, '{');
		nd_str(&sb, "bucket_id", r->bucket_id);
		nd_key(&sb, "sig_version");
		hs_sb_printf(&sb, "%" PRId64, r->sig_version);
		nd_str(&sb, "signature", r->signature);
		for (size_t k = 0; k < sizeof sig_strs / sizeof sig_strs[0]; k++)
			nd_str(&sb, sig_strs[k].key, *(const char *const *)((const char *)r + sig_strs[k].at));
		nd_str(&sb, "seen_at", t);
		nd_key(&sb, "seen_from_file");
		hs_sb_append(&sb, r->seen_from_file ? "true" : "false");
		nd_key(&sb, "weight"); /* always with decimals: a column of one type for read_json_auto's sampling */
		hs_sb_printf(&sb, "%.6f", r->weight);
		nd_str(&sb, "quality", r->quality);
		nd_key(&sb, "lost_events");
		hs_sb_printf(&sb, "%" PRIu64, r->lost_events);
		nd_key(&sb, "lost_unknown");
		hs_sb_append(&sb, r->lost_unknown ? "true" : "false");
		nd_key(&sb, "covered_share");
		if (r->has_covered)
			hs_sb_printf(&sb, "%.4f", r->covered_share);
		else
			hs_sb_append(&sb, "null");
		nd_key(&sb, "report_version");
		hs_sb_printf(&sb, "%" PRId64, r->report_version);
		nd_str(&sb, "input_kind", r->input_kind);
		nd_str(&sb, "folder", r->folder);
		nd_str(&sb, "report", r->report);
		nd_str(&sb, "verdict", r->verdict);
		hs_sb_append(&sb, "}\n");
		if (sb.len > (1u << 20) || i + 1 == f->n_rows) {
			ok = !sb.oom && fwrite(sb.buf, 1, sb.len, out) == sb.len;
			sb.len = 0;
		}
	}
	hs_sb_free(&sb);
	return ok;
}

/* ---- the command ---- */

static int usage_error(const char *fmt, ...) HS_PRINTF_FMT(1, 2);
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "analyze: fleet: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: analyze fleet PATH... [--ndjson FILE|-] [--json] [--top N] [--rules R]\n", stderr);
	return HS_EXIT_USAGE;
}

int analyze_fleet(int argc, char **argv, const char *argv0)
{
	fleet_opts o = {.argv0 = argv0, .top = 20};
	bool top_given = false;
	const char **paths = calloc((size_t)argc + 1, sizeof *paths);
	size_t n_paths = 0;
	if (!paths)
		return HS_EXIT_USAGE;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool val = i + 1 < argc;
		if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--ndjson") && val) {
			o.ndjson = argv[++i];
		} else if (!strcmp(a, "--rules") && val) {
			o.rules = argv[++i];
		} else if (!strcmp(a, "--top") && val) {
			char *e = NULL;
			long v = strtol(argv[++i], &e, 10);
			if (!e || *e || v < 0) {
				free(paths);
				return usage_error("--top wants a count (0: every bucket), not '%s'", argv[i]);
			}
			o.top = (size_t)v;
			top_given = true;
		} else if (a[0] == '-' && a[1]) {
			free(paths);
			return usage_error("unknown option '%s'", a);
		} else {
			paths[n_paths++] = a;
		}
	}
	if (!n_paths) {
		free(paths);
		return usage_error("name run folders, snapshot folders or report.json files");
	}
	if (o.json && !top_given)
		o.top = 0;
	fleet f = {.o = &o, .tty = -1, .start = time(NULL)};
	int rc = HS_EXIT_OK;
	for (size_t i = 0; i < n_paths && !f.oom; i++) {
		const char *p = paths[i];
		if (hs_path_is_dir(p)) {
			walk(&f, p, 0);
		} else if (hs_path_is_file(p)) {
			size_t l = strlen(p);
			if (l >= 5 && !strcmp(p + l - 5, ".json")) {
				loose_report(&f, p, true);
			} else {
				progress_done(&f);
				fprintf(stderr, "analyze: fleet: %s is not a report.json (fleet reads run folders, snapshot folders "
						"and report.json files)\n",
					p);
				rc = HS_EXIT_USAGE;
			}
		} else {
			progress_done(&f);
			fprintf(stderr, "analyze: fleet: %s: no such file or folder\n", p);
			rc = HS_EXIT_USAGE;
		}
	}
	progress_done(&f);
	free(paths);
	if (rc != HS_EXIT_OK) /* a path that names nothing: said, and no partial answer that looks whole */
		goto fail;
	if (f.oom) {
		fprintf(stderr, "analyze: fleet: out of memory\n");
		rc = HS_EXIT_USAGE;
		goto fail;
	}
	for (size_t i = 0; i < f.n_skips; i++)
		fprintf(stderr, "analyze: fleet: %s: left out: %s\n", f.skips[i].path, f.skips[i].why);
	if (!f.n_rows) {
		fprintf(stderr, "analyze: fleet: no report with a fleet signature under the paths given\n");
		rc = HS_EXIT_USAGE;
		goto fail;
	}
	bucket *bs = NULL;
	size_t nb = group(&f, &bs);
	if (o.ndjson) {
		bool dash = !strcmp(o.ndjson, "-");
		FILE *out = dash ? stdout : hs_fopen(o.ndjson, "wb");
		bool ok = out && write_ndjson(&f, out);
		if (!dash && out)
			ok = fclose(out) == 0 && ok;
		if (!ok) {
			fprintf(stderr, "analyze: fleet: %s: cannot be written\n", o.ndjson);
			rc = HS_EXIT_USAGE;
		}
		if (dash && !o.json) /* stdout holds the rows: the table goes to stderr */
			print_text(&f, bs, nb, stderr);
	}
	if (o.json)
		print_json(&f, bs, nb, stdout);
	else if (!o.ndjson || strcmp(o.ndjson, "-") != 0)
		print_text(&f, bs, nb, stdout);
	free(bs);
	if (rc == HS_EXIT_OK && f.n_skips)
		rc = HS_EXIT_FINDINGS;
fail:
	free(f.rows);
	hs_hmap_free(&f.seen);
	hs_arena_free(&f.a);
	return rc;
}
