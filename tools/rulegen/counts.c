/* rulegen/counts.c: reads event counts: the counts text format (analyze counts plus a `# key: value` header) or a .dat/.etl trace. */
#include <ctype.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/etl.h"
#include "hindsight/event.h"
#include "hindsight/event_counts.h"
#include "hindsight/event_names.h"
#include "hindsight/tracedat.h"
#include "rulegen.h"
#include "hindsight/text.h"
#include "hindsight/vec.h"

/* A counts file lists one line per event kind; even every syscall event of
 * every system is a few thousand lines. Larger is not a counts file. */
#define RG_MAX_COUNTS_BYTES (64u * 1024u * 1024u)

int rg_row_cmp(const rg_row *a, const rg_row *b)
{
	int c = strcmp(a->provider, b->provider);
	if (c)
		return c;
	c = strcmp(a->key, b->key);
	if (c)
		return c;
	/* Numbers in numeric order, as analyze counts prints them. */
	if (hs_all_digits(a->value) && hs_all_digits(b->value)) {
		size_t la = strlen(a->value), lb = strlen(b->value);
		if (la != lb)
			return la < lb ? -1 : 1;
	}
	return strcmp(a->value, b->value);
}

static int row_qsort(const void *a, const void *b)
{
	return rg_row_cmp(a, b);
}

/* Frees a row's strings (not the row, which lives in an array). */
static void row_free(rg_row *r)
{
	free(r->provider);
	free(r->key);
	free(r->value);
}

/* Sorts and merges equal rows (their counts add up). */
void rg_counts_sort(rg_counts *c)
{
	if (!c->n)
		return;
	qsort(c->rows, c->n, sizeof(*c->rows), row_qsort);
	size_t w = 0;
	for (size_t i = 1; i < c->n; i++) {
		if (rg_row_cmp(&c->rows[w], &c->rows[i]) == 0) {
			c->rows[w].count += c->rows[i].count;
			row_free(&c->rows[i]);
		} else {
			c->rows[++w] = c->rows[i];
		}
	}
	c->n = w + 1;
}

static bool push_row(rg_counts *c, const char *provider, const char *key, const char *value, uint64_t count,
		     unsigned line)
{
	rg_row *rows = hs_array_grow(c->rows, sizeof *rows, c->n, &c->cap, 64);
	if (!rows)
		return false;
	c->rows = rows;
	rg_row *r = &c->rows[c->n];
	r->provider = strdup(provider);
	r->key = strdup(key);
	r->value = strdup(value);
	r->count = count;
	r->line = line;
	if (!r->provider || !r->key || !r->value) {
		row_free(r);
		return false;
	}
	c->n++;
	return true;
}

const rg_row *rg_counts_find(const rg_counts *c, const char *provider, const char *key, const char *value)
{
	rg_row k = {.provider = (char *)provider, .key = (char *)key, .value = (char *)value};
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int r = rg_row_cmp(&c->rows[mid], &k);
		if (r == 0)
			return &c->rows[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void rg_counts_free(rg_counts *c)
{
	for (size_t i = 0; i < c->n; i++)
		row_free(&c->rows[i]);
	free(c->rows);
	memset(c, 0, sizeof(*c));
}

void rg_counts_print(const rg_counts *c, FILE *out)
{
	fprintf(out, "# seconds: %.3f\n", c->seconds);
	for (size_t i = 0; i < c->n; i++)
		fprintf(out, "%s\t%s=%s\t%" PRIu64 "\n", c->rows[i].provider, c->rows[i].key, c->rows[i].value,
			c->rows[i].count);
	fprintf(out, "TOTAL\t%" PRIu64 "\n", c->total);
}

/* ---- the text format ---- */

typedef struct {
	const char *file; /* interned */
	hs_diags *d;
	bool failed;
} parse_ctx;

static void err(parse_ctx *p, hs_diag_code code, unsigned line, unsigned col, const char *hint, const char *fmt, ...)
	HS_PRINTF_FMT(6, 7);

void rg_vdiag(hs_diags *d, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	hs_diag_add(d, code, pos, hint, "%s", msg);
}

static void err(parse_ctx *p, hs_diag_code code, unsigned line, unsigned col, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rg_vdiag(p->d, code, (hs_pos){p->file, line, col}, hint, fmt, ap);
	va_end(ap);
	p->failed = true;
}

/* Column (1-based, in characters) of byte `off` of a line. */
static unsigned col_of(const char *line, size_t off)
{
	unsigned col = 1;
	/* The parser has put NULs where the tabs were: count them as characters. */
	for (size_t i = 0; i < off; i++)
		if (((unsigned char)line[i] & 0xC0) != 0x80)
			col++;
	return col;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	if (!hs_all_digits(s) || strlen(s) > 19)
		return false;
	*out = strtoull(s, NULL, 10);
	return true;
}

/* "# key: value" -> key and value (trimmed), or false for a plain comment. */
static bool header_kv(char *s, char **key, char **val)
{
	s++; /* '#' */
	while (*s == ' ' || *s == '\t')
		s++;
	char *k = s;
	while (isalnum((unsigned char)*s) || *s == '_' || *s == '-')
		s++;
	if (s == k || *s != ':')
		return false;
	*s++ = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	*key = k;
	*val = s;
	return true;
}

static const char *const row_keys[] = {"event", "id", "opcode", "msg", NULL};

static bool parse_text(rg_counts *c, const char *path, char *text, size_t len, const char *expect_scenario,
		       const char *expect_capture, hs_diags *d)
{
	parse_ctx p = {hs_diags_add_source(d, path, text, len), d, false};
	rg_counts mine = {0};
	bool have_seconds = false, seconds_given = false, have_total = false, oom = false;
	unsigned seconds_line = 0, total_line = 0, first_data = 0, line_no = 0;
	double seconds = 0;
	uint64_t total = 0, sum = 0;
	char *s = text;
	while (*s) {
		line_no++;
		char *nl = strchr(s, '\n');
		char *next = nl ? nl + 1 : s + strlen(s);
		if (nl)
			*nl = '\0';
		size_t l = strlen(s);
		if (l && s[l - 1] == '\r')
			s[--l] = '\0';
		char *t = s;
		while (*t == ' ')
			t++;
		if (!*t) {
			s = next;
			continue;
		}
		if (*t == '#') {
			char *k, *v;
			if (header_kv(t, &k, &v)) {
				unsigned vcol = col_of(s, (size_t)(v - s));
				if (!strcmp(k, "seconds")) {
					char *end;
					double x = strtod(v, &end);
					if (have_seconds)
						err(&p, HS_D_DUP_KEY, line_no, col_of(s, (size_t)(k - s)), NULL,
						    "'seconds' is already given at line %u", seconds_line);
					seconds_given = true;
					if (!*v || *end || !isfinite(x) || x <= 0)
						err(&p, HS_D_RANGE, line_no, vcol, "the capture's length in seconds, e.g. 31.2",
						    "seconds '%s' is not a positive number", v);
					else if (!have_seconds) {
						seconds = x;
						have_seconds = true;
						seconds_line = line_no;
					}
				} else if (!strcmp(k, "scenario")) {
					if (expect_scenario && strcmp(v, expect_scenario) != 0)
						err(&p, HS_D_ENUM, line_no, vcol, "the config names this file for another scenario",
						    "this file holds scenario '%s', not '%s'", v, expect_scenario);
				} else if (!strcmp(k, "capture")) {
					if (strcmp(v, "full") != 0 && strcmp(v, "filtered") != 0)
						err(&p, HS_D_ENUM, line_no, vcol, NULL, "capture '%s' must be full or filtered", v);
					else if (expect_capture && strcmp(v, expect_capture) != 0)
						err(&p, HS_D_ENUM, line_no, vcol, "swap the config's full and filtered files",
						    "this file is a %s capture, listed as %s", v, expect_capture);
				}
				/* Other keys (host, kernel, date, ...) are the runner's notes. */
			}
			s = next;
			continue;
		}
		if (!first_data)
			first_data = line_no;
		if (have_total) {
			err(&p, HS_D_TYPE, line_no, 1, "TOTAL is the last line", "a line after TOTAL (line %u)", total_line);
			s = next;
			continue;
		}
		char *f1 = s, *f2 = strchr(f1, '\t');
		if (f2)
			*f2++ = '\0';
		if (!strcmp(f1, "TOTAL")) {
			uint64_t n;
			if (!f2 || strchr(f2, '\t') || !parse_u64(f2, &n))
				err(&p, HS_D_TYPE, line_no, f2 ? col_of(s, (size_t)(f2 - s)) : 1, NULL,
				    "expected 'TOTAL<TAB>N'");
			else {
				total = n;
				have_total = true;
				total_line = line_no;
			}
			s = next;
			continue;
		}
		char *f3 = f2 ? strchr(f2, '\t') : NULL;
		if (f3)
			*f3++ = '\0';
		if (!f2 || !f3 || strchr(f3, '\t') || !*f1) {
			err(&p, HS_D_TYPE, line_no, 1, "write PROVIDER<TAB>KEY=N<TAB>COUNT, as analyze counts does",
			    "expected three tab-separated fields");
			s = next;
			continue;
		}
		char *eq = strchr(f2, '=');
		unsigned c2 = col_of(s, (size_t)(f2 - s));
		if (!eq) {
			err(&p, HS_D_TYPE, line_no, c2, "event=NAME (trace.dat), id=N, opcode=N or msg=N (.etl)",
			    "'%s' is not KEY=VALUE", f2);
			s = next;
			continue;
		}
		*eq = '\0';
		const char *val = eq + 1;
		bool key_ok = false;
		for (size_t i = 0; row_keys[i]; i++)
			key_ok |= !strcmp(f2, row_keys[i]);
		if (!key_ok) {
			err(&p, HS_D_ENUM, line_no, c2, "event=NAME (trace.dat), id=N, opcode=N or msg=N (.etl)",
			    "key '%s' must be one of event, id, opcode, msg", f2);
		} else if (strcmp(f2, "event") ? !hs_all_digits(val) : !*val) {
			err(&p, HS_D_TYPE, line_no, col_of(s, (size_t)(val - s)), NULL, "'%s=%s' has no valid value", f2,
			    val);
		} else {
			uint64_t n;
			if (!parse_u64(f3, &n)) {
				err(&p, HS_D_TYPE, line_no, col_of(s, (size_t)(f3 - s)), NULL,
				    "count '%s' is not a whole number", f3);
			} else if (!push_row(&mine, f1, f2, val, n, line_no)) {
				oom = true;
				break;
			} else {
				sum += n;
			}
		}
		s = next;
	}
	if (!oom) {
		/* Duplicate rows would be summed silently by a merge; in one file they mean damage. */
		if (mine.n)
			qsort(mine.rows, mine.n, sizeof(*mine.rows), row_qsort);
		for (size_t i = 1; i < mine.n; i++)
			if (rg_row_cmp(&mine.rows[i - 1], &mine.rows[i]) == 0) {
				const rg_row *a = &mine.rows[i - 1], *b = &mine.rows[i];
				unsigned first = a->line < b->line ? a->line : b->line, second = a->line ^ b->line ^ first;
				err(&p, HS_D_DUP_ID, second, 1, NULL, "%s %s=%s is already counted at line %u", a->provider,
				    a->key, a->value, first);
			}
	}
	if (!seconds_given && !oom)
		err(&p, HS_D_MISSING_KEY, first_data ? first_data : (line_no ? line_no : 1), 1,
		    "the scenario runner writes '# seconds: N' (the capture's length) before the counts",
		    "no '# seconds:' header line");
	if (!have_total && !oom)
		err(&p, HS_D_MISSING_KEY, line_no ? line_no : 1, 1, "the file may be truncated",
		    "no 'TOTAL<TAB>N' line at the end");
	else if (have_total && total != sum && !p.failed) {
		err(&p, HS_D_TYPE, total_line, 7, "the file is damaged or was edited by hand",
		    "TOTAL is %" PRIu64 " but the rows add up to %" PRIu64, total, sum);
	}
	if (oom) {
		rg_counts_free(&mine);
		hs_diag_add(d, HS_D_LIMIT, (hs_pos){p.file, 0, 0}, NULL, "out of memory reading counts");
		return false;
	}
	if (p.failed) {
		rg_counts_free(&mine);
		return false;
	}
	for (size_t i = 0; i < mine.n; i++) {
		if (!push_row(c, mine.rows[i].provider, mine.rows[i].key, mine.rows[i].value, mine.rows[i].count,
			      mine.rows[i].line)) {
			rg_counts_free(&mine);
			return false;
		}
	}
	rg_counts_free(&mine);
	c->seconds += seconds;
	c->total += total;
	c->n_files++;
	rg_counts_sort(c);
	return true;
}

/* ---- traces ---- */

/* One walk: records per identity in the library's counting table, and the span they cover. */
typedef struct {
	hs_event_counts *counts;
	hs_event_count all; /* the whole trace as one entry: its first..last (trace.dat: trace clock ns; ETL: FILETIME) */
} trace_ctx;

/* Counts one record of either format under k (names from e, may be NULL); `timed`: ts is its time. Out of
 * memory stops the walk; the table remembers it (hs_event_counts_failed). */
static int count(trace_ctx *t, const hs_event_key *k, const hs_event *e, uint64_t ts, bool timed)
{
	hs_event_count *n = hs_event_counts_add(t->counts, k, e);
	if (n && timed)
		hs_event_count_time(&t->all, ts);
	return !n;
}

static int on_td(const hs_tracedat_record *r, void *vctx)
{
	hs_event e;
	hs_event_from_tracedat(r, &e);
	return count(vctx, &e.key, &e, r->ts, true);
}

static int on_etl(const hs_etl_record *r, void *vctx)
{
	hs_event e;
	hs_event_from_etl(r, &e);
	/* Counts files name ETW events by id, as analyze counts prints them. */
	hs_event_key k = e.key;
	k.name_hash = 0;
	return count(vctx, &k, NULL, r->filetime, r->filetime != 0);
}

/* The table's entries as counts rows: PROVIDER, KEY, VALUE (a number or an ftrace event name). */
static bool push_counts(rg_counts *c, const hs_event_counts *counts)
{
	for (size_t i = 0; i < hs_event_counts_len(counts); i++) {
		const hs_event_count *n = hs_event_counts_at(counts, i);
		char provider[256], num[16]; /* an ftrace system is a tracefs directory name: at most 255 bytes */
		const char *key = hs_event_key_counts_id(&n->key, n->provider, provider, sizeof provider);
		const char *value = num;
		if (n->key.cls == HS_EVCLS_FTRACE)
			value = n->name ? n->name : "?";
		else
			snprintf(num, sizeof num, "%u", n->key.num);
		if (!push_row(c, provider, key, value, n->count, 0))
			return false;
	}
	return true;
}

/* Adds the walk's rows, seconds and total to c, or says why not. `ticks_per_s`: the trace clock's rate. */
static bool add_trace(rg_counts *c, trace_ctx *t, const char *path, double ticks_per_s, hs_pos at, hs_diags *d)
{
	bool ok = t->counts && !hs_event_counts_failed(t->counts) && push_counts(c, t->counts);
	uint64_t total = t->counts ? hs_event_counts_total(t->counts) : 0;
	hs_event_counts_free(t->counts);
	t->counts = NULL;
	if (!ok) {
		hs_diag_add(d, HS_D_LIMIT, at, NULL, "out of memory counting '%s'", path);
		return false;
	}
	if (t->all.last <= t->all.first) {
		hs_diag_add(d, HS_D_RANGE, at, "a rate needs at least two events at different times",
			    "trace '%s' spans no time (%" PRIu64 " events)", path, total);
		return false;
	}
	c->seconds += (double)(t->all.last - t->all.first) / ticks_per_s;
	c->total += total;
	c->n_files++;
	rg_counts_sort(c);
	return true;
}

/* The reader's problems on stderr, one line each, naming the trace. */
static void say_problems(const char *path, const hs_problems *pl)
{
	for (size_t i = 0; i < hs_problems_count(pl); i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		fprintf(stderr, "rulegen: %s: %s\n", path, hs_problem_format(hs_problems_at(pl, i), text, sizeof text));
	}
}

static bool count_tracedat(rg_counts *c, const char *path, hs_pos at, hs_diags *d)
{
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open(path, &td);
	if (st != HS_OK) {
		char text[HS_PROBLEM_TEXT_MAX];
		const char *why = st == HS_EUNSUPPORTED ? "this build has no libtracecmd (Linux only)"
				  : td && hs_tracedat_problem_count(td)
					  ? hs_problem_format(hs_tracedat_problem_at(td, 0), text, sizeof text)
					  : hs_strerror(st);
		hs_diag_add(d, HS_D_INCLUDE, at, NULL, "cannot read trace '%s': %s", path, why);
		hs_tracedat_close(td);
		return false;
	}
	trace_ctx t = {0};
	if (hs_event_counts_new(&t.counts) == HS_OK)
		hs_tracedat_foreach(td, on_td, &t);
	say_problems(path, hs_tracedat_problems(td));
	hs_tracedat_close(td);
	return add_trace(c, &t, path, 1e9, at, d);
}

static bool count_etl(rg_counts *c, const char *path, hs_pos at, hs_diags *d)
{
	hs_etl *etl = NULL;
	hs_status st = hs_etl_open(path, &etl);
	if (st != HS_OK) {
		hs_diag_add(d, HS_D_INCLUDE, at, NULL, "cannot read trace '%s': %s", path, hs_strerror(st));
		hs_etl_close(etl);
		return false;
	}
	trace_ctx t = {0};
	if (hs_event_counts_new(&t.counts) == HS_OK)
		hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_etl, &t);
	say_problems(path, hs_etl_problems(etl));
	hs_etl_close(etl);
	return add_trace(c, &t, path, 1e7, at, d); /* FILETIME: 100 ns */
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	if (a < b)
		return false;
	for (size_t i = 0; i < b; i++)
		if (tolower((unsigned char)s[a - b + i]) != suffix[i])
			return false;
	return true;
}

bool rg_counts_from_trace(rg_counts *c, const char *path, hs_pos at, hs_diags *d)
{
	if (hs_tracedat_sniff(path))
		return count_tracedat(c, path, at, d);
	return count_etl(c, path, at, d);
}

bool rg_counts_load(rg_counts *c, const char *path, const char *expect_scenario, const char *expect_capture,
		    hs_pos at, hs_diags *d)
{
	if (hs_tracedat_sniff(path) || ends_with(path, ".etl"))
		return rg_counts_from_trace(c, path, at, d);
	char *text = NULL;
	size_t len = 0;
	hs_status st = hs_read_file(path, RG_MAX_COUNTS_BYTES, &text, &len);
	if (st != HS_OK) {
		hs_diag_add(d, HS_D_INCLUDE, at, NULL, "cannot read counts file '%s': %s", path, hs_strerror(st));
		return false;
	}
	bool ok = parse_text(c, path, text, len, expect_scenario, expect_capture, d);
	free(text);
	return ok;
}
