/* diag/diag.c: the diagnostic list, its code table and the text/JSON/SARIF/GitHub renderers. */
#include "hindsight/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/vec.h"
#include "util/json.h"
#include "util/strbuf.h"

typedef struct {
	char *path;
	char *text; /* NULL when only interned */
	size_t len;
} source;

struct hs_diags {
	hs_diag *v;
	size_t n, cap;
	source *src;
	size_t nsrc, capsrc;
	bool truncated;
};

static const struct {
	const char *code, *slug, *text;
	hs_severity sev;
	hs_diag_class cls;
} code_table[] = {
#define HS_DIAG_ROW(e, code, sev, cls, slug, text) \
	[e] = {code, slug, text, HS_SEV_##sev, HS_CLASS_##cls},
	HS_DIAG_CODES(HS_DIAG_ROW)
#undef HS_DIAG_ROW
};
_Static_assert(sizeof(code_table) / sizeof(code_table[0]) == HS_D__COUNT,
	       "every diagnostic code needs a row");

const char *hs_diag_code_str(hs_diag_code c) { return code_table[c].code; }
const char *hs_diag_code_slug(hs_diag_code c) { return code_table[c].slug; }
const char *hs_diag_code_text(hs_diag_code c) { return code_table[c].text; }
hs_diag_class hs_diag_code_class(hs_diag_code c) { return code_table[c].cls; }
hs_severity hs_diag_code_severity(hs_diag_code c) { return code_table[c].sev; }

hs_diags *hs_diags_new(void)
{
	return calloc(1, sizeof(hs_diags));
}

void hs_diags_free(hs_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].message);
		free(d->v[i].hint);
	}
	for (size_t i = 0; i < d->nsrc; i++) {
		free(d->src[i].path);
		free(d->src[i].text);
	}
	free(d->v);
	free(d->src);
	free(d);
}

static source *find_source(const hs_diags *d, const char *path)
{
	for (size_t i = 0; i < d->nsrc; i++)
		if (strcmp(d->src[i].path, path) == 0)
			return &d->src[i];
	return NULL;
}

static source *add_source(hs_diags *d, const char *path)
{
	source *s = find_source(d, path);
	if (s)
		return s;
	source *p = hs_array_grow(d->src, sizeof(*p), d->nsrc, &d->capsrc, 8);
	if (!p)
		return NULL;
	d->src = p;
	s = &d->src[d->nsrc];
	s->path = strdup(path);
	s->text = NULL;
	s->len = 0;
	if (!s->path)
		return NULL;
	d->nsrc++;
	return s;
}

const char *hs_diags_intern(hs_diags *d, const char *path)
{
	source *s = add_source(d, path);
	return s ? s->path : "<out of memory>";
}

const char *hs_diags_add_source(hs_diags *d, const char *path, const char *text, size_t len)
{
	source *s = add_source(d, path);
	if (!s)
		return "<out of memory>";
	if (!s->text && text) {
		s->text = malloc(len + 1);
		if (s->text) {
			memcpy(s->text, text, len);
			s->text[len] = '\0';
			s->len = len;
		}
	}
	return s->path;
}

void hs_diag_add(hs_diags *d, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, ...)
{
	if (!d)
		return;
	va_list ap;
	va_start(ap, fmt);
	char tmp[1];
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char *msg = malloc((size_t)n + 1);
	if (!msg)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);

	for (size_t i = 0; i < d->n; i++) {
		hs_diag *o = &d->v[i];
		if (o->code == code && o->pos.line == pos.line && o->pos.col == pos.col &&
		    ((o->pos.file == NULL && pos.file == NULL) ||
		     (o->pos.file && pos.file && strcmp(o->pos.file, pos.file) == 0)) &&
		    strcmp(o->message, msg) == 0) {
			free(msg);
			return;
		}
	}
	if (d->n >= HS_MAX_DIAGNOSTICS) {
		free(msg);
		d->truncated = true;
		return;
	}
	hs_diag *p = hs_array_grow(d->v, sizeof(*p), d->n, &d->cap, 16);
	if (!p) {
		free(msg);
		return;
	}
	d->v = p;
	hs_diag *g = &d->v[d->n++];
	g->code = code;
	g->severity = code_table[code].sev;
	g->pos = pos;
	g->message = msg;
	g->hint = hint ? strdup(hint) : NULL;
}

void hs_diags_merge(hs_diags *dst, const hs_diags *src)
{
	for (size_t i = 0; i < src->nsrc; i++)
		hs_diags_add_source(dst, src->src[i].path, src->src[i].text, src->src[i].len);
	for (size_t i = 0; i < src->n; i++) {
		const hs_diag *g = &src->v[i];
		hs_pos pos = g->pos;
		if (pos.file)
			pos.file = hs_diags_intern(dst, pos.file);
		hs_diag_add(dst, g->code, pos, g->hint, "%s", g->message);
	}
	dst->truncated |= src->truncated;
}

size_t hs_diags_count(const hs_diags *d) { return d->n; }
const hs_diag *hs_diags_at(const hs_diags *d, size_t i) { return &d->v[i]; }

size_t hs_diags_errors(const hs_diags *d)
{
	size_t n = d->truncated ? 1 : 0;
	for (size_t i = 0; i < d->n; i++)
		n += d->v[i].severity == HS_SEV_ERROR;
	return n;
}

size_t hs_diags_warnings(const hs_diags *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n; i++)
		n += d->v[i].severity == HS_SEV_WARNING;
	return n;
}

static int cmp_diag(const void *a, const void *b)
{
	const hs_diag *x = a, *y = b;
	int c = strcmp(x->pos.file ? x->pos.file : "", y->pos.file ? y->pos.file : "");
	if (c)
		return c;
	if (x->pos.line != y->pos.line)
		return x->pos.line < y->pos.line ? -1 : 1;
	if (x->pos.col != y->pos.col)
		return x->pos.col < y->pos.col ? -1 : 1;
	return 0;
}

void hs_diags_sort(hs_diags *d)
{
	/* qsort is not stable; insertion sort keeps equal positions in emission
	 * order, which is the order a reader expects (cause before effect). */
	for (size_t i = 1; i < d->n; i++) {
		hs_diag t = d->v[i];
		size_t j = i;
		while (j > 0 && cmp_diag(&d->v[j - 1], &t) > 0) {
			d->v[j] = d->v[j - 1];
			j--;
		}
		d->v[j] = t;
	}
}

/* Finds line `line` (1-based) of a source; sets *len. NULL if unknown. */
static const char *source_line(const hs_diags *d, const char *file, unsigned line, size_t *len)
{
	if (!file || line == 0)
		return NULL;
	source *s = find_source(d, file);
	if (!s || !s->text)
		return NULL;
	const char *p = s->text, *end = s->text + s->len;
	for (unsigned l = 1; l < line; l++) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			return NULL;
		p++;
	}
	const char *e = memchr(p, '\n', (size_t)(end - p));
	*len = (size_t)((e ? e : end) - p);
	if (*len && p[*len - 1] == '\r')
		(*len)--;
	return p;
}

static const char *sev_name(hs_severity s)
{
	return s == HS_SEV_ERROR ? "error" : "warning";
}

static void render_text(const hs_diags *d, hs_strbuf *sb)
{
	for (size_t i = 0; i < d->n; i++) {
		const hs_diag *g = &d->v[i];
		const char *file = g->pos.file ? g->pos.file : "<input>";
		if (g->pos.line)
			hs_sb_printf(sb, "%s:%u:%u: ", file, g->pos.line, g->pos.col);
		else
			hs_sb_printf(sb, "%s: ", file);
		hs_sb_printf(sb, "%s[%s]: %s\n", sev_name(g->severity), code_table[g->code].code, g->message);
		size_t len = 0;
		const char *line = source_line(d, g->pos.file, g->pos.line, &len);
		if (line) {
			hs_sb_printf(sb, "%5u | ", g->pos.line);
			/* Tabs are kept so the caret below lines up in a terminal. */
			hs_sb_appendn(sb, line, len);
			hs_sb_append(sb, "\n      | ");
			for (unsigned c = 1; c < g->pos.col && c <= len; c++)
				hs_sb_putc(sb, line[c - 1] == '\t' ? '\t' : ' ');
			hs_sb_append(sb, "^\n");
		}
		if (g->hint)
			hs_sb_printf(sb, "      = hint: %s\n", g->hint);
	}
	if (d->truncated)
		hs_sb_printf(sb, "error: more than %d diagnostics; the rest were dropped\n", HS_MAX_DIAGNOSTICS);
}

static void render_json(const hs_diags *d, hs_strbuf *sb)
{
	hs_json j;
	hs_json_init(&j, sb);
	hs_json_obj_begin(&j);
	hs_json_kuint(&j, "errors", hs_diags_errors(d));
	hs_json_kuint(&j, "warnings", hs_diags_warnings(d));
	hs_json_kbool(&j, "truncated", d->truncated);
	hs_json_key(&j, "diagnostics");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < d->n; i++) {
		const hs_diag *g = &d->v[i];
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "file", g->pos.file);
		hs_json_kuint(&j, "line", g->pos.line);
		hs_json_kuint(&j, "col", g->pos.col);
		hs_json_kstr(&j, "severity", sev_name(g->severity));
		hs_json_kstr(&j, "code", code_table[g->code].code);
		hs_json_kstr(&j, "name", code_table[g->code].slug);
		hs_json_kstr(&j, "class", code_table[g->code].cls == HS_CLASS_STRUCTURAL ? "structural" : "semantic");
		hs_json_kstr(&j, "message", g->message);
		hs_json_kstr(&j, "hint", g->hint);
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	hs_json_obj_end(&j);
}

/* "key": { — SARIF nests its objects deep. */
static void kobj(hs_json *j, const char *key)
{
	hs_json_key(j, key);
	hs_json_obj_begin(j);
}

static void render_sarif(const hs_diags *d, hs_strbuf *sb)
{
	hs_json j;
	hs_json_init(&j, sb);
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
	hs_json_kstr(&j, "version", "2.1.0");
	hs_json_key(&j, "runs");
	hs_json_arr_begin(&j);
	hs_json_obj_begin(&j);
	kobj(&j, "tool");
	kobj(&j, "driver");
	hs_json_kstr(&j, "name", "rulecheck");
	hs_json_kstr(&j, "informationUri", "docs/diagnostics.md");
	hs_json_key(&j, "rules");
	hs_json_arr_begin(&j);
	for (int c = 0; c < HS_D__COUNT; c++) {
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "id", code_table[c].code);
		hs_json_kstr(&j, "name", code_table[c].slug);
		kobj(&j, "shortDescription");
		hs_json_kstr(&j, "text", code_table[c].text);
		hs_json_obj_end(&j);
		kobj(&j, "defaultConfiguration");
		hs_json_kstr(&j, "level", sev_name(code_table[c].sev));
		hs_json_obj_end(&j);
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	hs_json_obj_end(&j);
	hs_json_obj_end(&j);
	hs_json_key(&j, "results");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < d->n; i++) {
		const hs_diag *g = &d->v[i];
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "ruleId", code_table[g->code].code);
		hs_json_kint(&j, "ruleIndex", g->code);
		hs_json_kstr(&j, "level", sev_name(g->severity));
		kobj(&j, "message");
		hs_strbuf m = {0};
		hs_sb_append(&m, g->message);
		if (g->hint)
			hs_sb_printf(&m, " (hint: %s)", g->hint);
		hs_json_kstr(&j, "text", hs_sb_cstr(&m));
		hs_sb_free(&m);
		hs_json_obj_end(&j);
		hs_json_key(&j, "locations");
		hs_json_arr_begin(&j);
		hs_json_obj_begin(&j);
		kobj(&j, "physicalLocation");
		kobj(&j, "artifactLocation");
		hs_json_kstr(&j, "uri", g->pos.file ? g->pos.file : "");
		hs_json_obj_end(&j);
		if (g->pos.line) {
			kobj(&j, "region");
			hs_json_kuint(&j, "startLine", g->pos.line);
			hs_json_kuint(&j, "startColumn", g->pos.col ? g->pos.col : 1);
			hs_json_obj_end(&j);
		}
		hs_json_obj_end(&j);
		hs_json_obj_end(&j);
		hs_json_arr_end(&j);
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	hs_json_obj_end(&j);
	hs_json_arr_end(&j);
	hs_json_obj_end(&j);
}

/* GitHub workflow commands need %, CR and LF escaped in the message, and also
 * ':' and ',' in properties. */
static void gh_escape(hs_strbuf *sb, const char *s, bool property)
{
	for (; *s; s++) {
		switch (*s) {
		case '%': hs_sb_append(sb, "%25"); break;
		case '\r': hs_sb_append(sb, "%0D"); break;
		case '\n': hs_sb_append(sb, "%0A"); break;
		case ':': property ? hs_sb_append(sb, "%3A") : hs_sb_putc(sb, ':'); break;
		case ',': property ? hs_sb_append(sb, "%2C") : hs_sb_putc(sb, ','); break;
		default: hs_sb_putc(sb, *s);
		}
	}
}

static void render_github(const hs_diags *d, hs_strbuf *sb)
{
	for (size_t i = 0; i < d->n; i++) {
		const hs_diag *g = &d->v[i];
		hs_sb_printf(sb, "::%s file=", sev_name(g->severity));
		gh_escape(sb, g->pos.file ? g->pos.file : "", true);
		if (g->pos.line)
			hs_sb_printf(sb, ",line=%u,col=%u", g->pos.line, g->pos.col);
		hs_sb_printf(sb, ",title=%s %s::", code_table[g->code].code, code_table[g->code].slug);
		gh_escape(sb, g->message, false);
		if (g->hint) {
			hs_sb_append(sb, " (hint: ");
			gh_escape(sb, g->hint, false);
			hs_sb_putc(sb, ')');
		}
		hs_sb_putc(sb, '\n');
	}
}

hs_status hs_diags_render(const hs_diags *d, FILE *out, hs_diag_format fmt)
{
	hs_strbuf sb = {0};
	switch (fmt) {
	case HS_FMT_TEXT: render_text(d, &sb); break;
	case HS_FMT_JSON: render_json(d, &sb); break;
	case HS_FMT_SARIF: render_sarif(d, &sb); break;
	case HS_FMT_GITHUB: render_github(d, &sb); break;
	}
	return hs_sb_write_free(&sb, out);
}

hs_status hs_diag_format_parse(const char *s, hs_diag_format *out)
{
	static const struct {
		const char *name;
		hs_diag_format f;
	} names[] = {{"text", HS_FMT_TEXT}, {"json", HS_FMT_JSON}, {"sarif", HS_FMT_SARIF}, {"github", HS_FMT_GITHUB}};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].f;
			return HS_OK;
		}
	return HS_EINVAL;
}
