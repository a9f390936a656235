/* rules/keys.c: the table-driven reader of YAML mappings (unknown, missing, typed keys) and the tables' JSON dump. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/rules.h"
#include "rules/keys.h"
#include "util/strbuf.h"
#include "util/text.h"

/* ---- typed readers; each reports its own diagnostic ---- */

bool hs_key_want(hs_keyread *r, const hs_ynode *n, hs_ytype t, const char *key)
{
	if (n->type == t)
		return true;
	if (n->alias)
		return false;
	const char *need = t == HS_Y_MAP ? "a mapping" : t == HS_Y_SEQ ? "a list" : "a scalar";
	hs_diag_add(r->d, HS_D_TYPE, n->pos, NULL, "'%s' must be %s, not %s", key, need, hs_ynode_type_name(n));
	return false;
}

const char *hs_key_str(hs_keyread *r, const hs_ynode *n, const char *key)
{
	if (n->alias)
		return NULL;
	if (n->type != HS_Y_SCALAR || hs_ynode_value(n) != HS_YV_STR) {
		hs_diag_add(r->d, HS_D_TYPE, n->pos, n->type == HS_Y_SCALAR ? "quote it to make it a string" : NULL,
			    "'%s' must be a string, not %s", key, hs_ynode_type_name(n));
		return NULL;
	}
	return n->str;
}

const char *hs_key_line(hs_keyread *r, const hs_ynode *n, const char *key)
{
	const char *s = hs_key_str(r, n, key);
	if (s && (s[0] == '\0' || strchr(s, '\n'))) {
		hs_diag_add(r->d, HS_D_TYPE, n->pos, NULL, "'%s' must be one non-empty line", key);
		return NULL;
	}
	return s;
}

/* A story, or an entry's generated `evidence`, which stands in for one and so
 * has the same shape: one line of 1..HS_MAX_STORY_CHARS characters. */
const char *hs_key_story(hs_keyread *r, const hs_ynode *n, const char *key)
{
	const char *s = hs_key_str(r, n, key);
	if (!s)
		return NULL;
	size_t len = hs_utf8_len(s);
	/* A block scalar keeps its final newline; a story still must be one line. */
	if (len == 0 || strchr(s, '\n') || strchr(s, '\r')) {
		hs_diag_add(r->d, HS_D_STORY_FORMAT, n->pos, "write one line a person can read next to the event",
			    len == 0 ? "%s is empty" : "%s spans more than one line", key);
		return NULL;
	}
	if (len > HS_MAX_STORY_CHARS) {
		hs_diag_add(r->d, HS_D_STORY_FORMAT, n->pos, "shorten it; details belong in docs/",
			    "%s is %zu characters long; the limit is %d", key, len, HS_MAX_STORY_CHARS);
		return NULL;
	}
	return s;
}

static bool parse_uint(const char *s, uint64_t *out)
{
	int base = 10;
	if (s[0] == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
		base = s[1] == 'x' ? 16 : 8;
		s += 2;
	}
	if (*s == '-' || *s == '\0')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

bool hs_key_uint(hs_keyread *r, const hs_ynode *n, const char *key, uint64_t min, uint64_t max, uint64_t *out)
{
	if (n->alias)
		return false;
	if (n->type != HS_Y_SCALAR || hs_ynode_value(n) != HS_YV_INT) {
		hs_diag_add(r->d, HS_D_TYPE, n->pos, NULL, "'%s' must be an integer, not %s", key,
			    hs_ynode_type_name(n));
		return false;
	}
	uint64_t v;
	if (!parse_uint(n->str, &v) || v < min || v > max) {
		hs_diag_add(r->d, HS_D_RANGE, n->pos, NULL, "'%s' is %s; it must be %llu..%llu", key, n->str,
			    (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	*out = v;
	return true;
}

bool hs_key_number(hs_keyread *r, const hs_ynode *n, const char *key, double min, double max, double *out)
{
	if (n->alias)
		return false;
	hs_yvalue yv = n->type == HS_Y_SCALAR ? hs_ynode_value(n) : HS_YV_STR;
	if (n->type != HS_Y_SCALAR || (yv != HS_YV_INT && yv != HS_YV_FLOAT)) {
		hs_diag_add(r->d, HS_D_TYPE, n->pos, NULL, "'%s' must be a number, not %s", key, hs_ynode_type_name(n));
		return false;
	}
	uint64_t u;
	double v;
	char *end = NULL;
	if (yv == HS_YV_INT) {
		/* 0x and 0o forms, as integers are read everywhere else. */
		if (!parse_uint(n->str, &u)) {
			hs_diag_add(r->d, HS_D_RANGE, n->pos, NULL, "'%s' is %s; it must be %g..%g", key, n->str, min,
				    max);
			return false;
		}
		v = (double)u;
	} else {
		errno = 0;
		v = strtod(n->str, &end);
		if (errno || !end || *end || !isfinite(v)) {
			hs_diag_add(r->d, HS_D_RANGE, n->pos, "write a finite decimal number such as 2.5",
				    "'%s' is %s; it must be %g..%g", key, n->str, min, max);
			return false;
		}
	}
	if (v < min || v > max) {
		hs_diag_add(r->d, HS_D_RANGE, n->pos, NULL, "'%s' is %s; it must be %g..%g", key, n->str, min, max);
		return false;
	}
	*out = v;
	return true;
}

int hs_key_enum(hs_keyread *r, const hs_ynode *n, const char *key, const char *const *values)
{
	const char *s = hs_key_str(r, n, key);
	if (!s)
		return -1;
	for (int i = 0; values[i]; i++)
		if (strcmp(s, values[i]) == 0)
			return i;
	hs_key_not_in(r, n->pos, s, values, NULL, "'%s' is '%s'; it must be one of: ", key, s);
	return -1;
}

void hs_key_not_in(hs_keyread *r, hs_pos pos, const char *s, const char *const *all, const char *hint_else,
		   const char *fmt, ...)
{
	hs_strbuf msg = {0};
	va_list ap;
	va_start(ap, fmt);
	hs_sb_vprintf(&msg, fmt, ap);
	va_end(ap);
	for (size_t i = 0; all[i]; i++)
		hs_sb_printf(&msg, "%s%s", i ? ", " : "", all[i]);
	const char *near = hs_closest(s, all);
	char hint[160];
	if (near)
		snprintf(hint, sizeof hint, "did you mean '%s'?", near);
	hs_diag_add(r->d, HS_D_ENUM, pos, near ? hint : hint_else, "%s", hs_sb_cstr(&msg));
	hs_sb_free(&msg);
}

bool hs_key_guid(hs_keyread *r, const hs_ynode *n, const char *key, hs_guid *out)
{
	const char *s = hs_key_str(r, n, key);
	if (!s)
		return false;
	if (s[0] == '{' || !hs_guid_parse(s, out)) {
		hs_diag_add(r->d, HS_D_GUID, n->pos, "write it as XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX (hex digits)",
			    "'%s' is not a valid GUID", s);
		return false;
	}
	return true;
}

bool hs_key_missing(hs_keyread *r, const hs_ynode *map, const char *key, const char *what)
{
	if (hs_ymap_get(map, key))
		return false;
	hs_diag_add(r->d, HS_D_MISSING_KEY, map->pos, NULL, "%s needs '%s'", what, key);
	return true;
}

bool hs_key_ident_ok(const char *s, size_t max, bool allow_dash, bool first_alpha)
{
	size_t n = strlen(s);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (c >= '0' && c <= '9' && !(i == 0 && first_alpha)) || (allow_dash && c == '-');
		if (!ok)
			return false;
	}
	return true;
}

void *hs_key_alloc(hs_keyread *r, size_t n, size_t size)
{
	void *p = hs_arena_alloc(r->arena, (n ? n : 1) * size);
	if (!p)
		r->oom = true;
	return p;
}

bool hs_key_once(hs_keyread *r, bool ok, const hs_ynode *v, bool present, hs_pos first, hs_diag_code code,
		 const char *hint, const char *what)
{
	if (!ok || !v || v->type != HS_Y_MAP)
		return false;
	if (present)
		hs_diag_add(r->d, code, v->pos, hint, "a second %s; the first is at %s:%u", what,
			    first.file ? first.file : "?", first.line);
	return !present;
}

size_t hs_key_strlist(hs_keyread *r, const hs_ynode *seq, const char *key, const char ***out, hs_pos **pos)
{
	*out = hs_key_alloc(r, seq->n + 1, sizeof(char *));
	*pos = hs_key_alloc(r, seq->n + 1, sizeof(hs_pos));
	if (!*out || !*pos)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < seq->n; i++) {
		const char *s = hs_key_str(r, seq->items[i], key);
		if (s) {
			(*pos)[n] = seq->items[i]->pos;
			(*out)[n++] = s;
		}
	}
	return n;
}

/* ---- the table reader ---- */

static bool table_has(const hs_keytable *t, const char *name)
{
	for (; t; t = t->base)
		for (const hs_key *k = t->keys; k->name; k++)
			if (strcmp(k->name, name) == 0)
				return true;
	return false;
}

/* Candidates for "did you mean", in the order the loader always offered them:
 * the bases' keys first, then the table's own. */
static const char **table_names(hs_arena *a, const hs_keytable *t)
{
	size_t n = 0, depth = 0;
	const hs_keytable *chain[8];
	for (const hs_keytable *b = t; b && depth < sizeof chain / sizeof chain[0]; b = b->base) {
		chain[depth++] = b;
		for (const hs_key *k = b->keys; k->name; k++)
			n++;
	}
	const char **names = hs_arena_alloc(a, (n + 1) * sizeof(*names));
	if (!names)
		return NULL;
	n = 0;
	while (depth--)
		for (const hs_key *k = chain[depth]->keys; k->name; k++)
			names[n++] = k->name;
	names[n] = NULL;
	return names;
}

void hs_keys_check_unknown(hs_keyread *r, const hs_ynode *map, const hs_keytable *t)
{
	const char **names = NULL;
	for (size_t i = 0; i < map->n; i++) {
		const hs_ynode *k = map->keys[i];
		if (k->type != HS_Y_SCALAR || k->alias || hs_ynode_value(k) != HS_YV_STR)
			continue; /* reported by the YAML layer */
		if (table_has(t, k->str))
			continue;
		if (!names && !(names = table_names(r->arena, t))) {
			r->oom = true;
			return;
		}
		const char *near = hs_closest(k->str, names);
		char hint[128];
		if (near)
			snprintf(hint, sizeof hint, "did you mean '%s'?", near);
		hs_diag_add(r->d, HS_D_UNKNOWN_KEY, k->pos, near ? hint : NULL, "unknown key '%s' in %s", k->str,
			    t->what);
	}
}

static void store(void *obj, const hs_key *k, const void *v, size_t vsize)
{
	if (!k->at || !obj)
		return;
	memcpy((char *)obj + k->at - 1, v, vsize < k->size ? vsize : k->size);
}

/* Integers go into whatever width the field has (int ids, uint64_t sizes, enums). */
static void store_int(void *obj, const hs_key *k, uint64_t v)
{
	if (!k->at || !obj)
		return;
	char *p = (char *)obj + k->at - 1;
	if (k->size == 1) {
		uint8_t x = (uint8_t)v;
		memcpy(p, &x, 1);
	} else if (k->size == 2) {
		uint16_t x = (uint16_t)v;
		memcpy(p, &x, 2);
	} else if (k->size == 4) {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, 4);
	} else if (k->size == 8) {
		memcpy(p, &v, 8);
	}
}

static bool read_value(hs_keyread *r, const hs_key *k, const hs_ynode *v, void *obj)
{
	switch (k->type) {
	case HS_KEY_STR:
	case HS_KEY_IDENT:
	case HS_KEY_STORY: {
		const char *s = k->type == HS_KEY_STORY ? hs_key_story(r, v, k->name) : hs_key_line(r, v, k->name);
		if (s && k->type == HS_KEY_IDENT && !hs_key_ident_ok(s, HS_MAX_IDENT_CHARS, true, false)) {
			hs_diag_add(r->d, HS_D_NAME, v->pos, "use 1 to 64 letters, digits, '_' or '-'",
				    "'%s' is not a valid %s", s, k->name);
			s = NULL;
		}
		store(obj, k, &s, sizeof s);
		return s != NULL;
	}
	case HS_KEY_UINT:
		if (!hs_key_uint(r, v, k->name, k->min, k->max, &r->u))
			return false;
		store_int(obj, k, r->u);
		return true;
	case HS_KEY_NUMBER:
		if (!hs_key_number(r, v, k->name, (double)k->min, (double)k->max, &r->num))
			return false;
		store(obj, k, &r->num, sizeof r->num);
		return true;
	case HS_KEY_BOOL: {
		if (v->alias)
			return false;
		if (v->type != HS_Y_SCALAR || hs_ynode_value(v) != HS_YV_BOOL) {
			hs_diag_add(r->d, HS_D_TYPE, v->pos, NULL, "'%s' must be true or false, not %s", k->name,
				    hs_ynode_type_name(v));
			return false;
		}
		bool b = v->str[0] == 't' || v->str[0] == 'T';
		store(obj, k, &b, sizeof b);
		return true;
	}
	case HS_KEY_ENUM:
		if ((k->flags & HS_KEY_OR_UINT) && v->type == HS_Y_SCALAR && hs_ynode_value(v) == HS_YV_INT) {
			if (!hs_key_uint(r, v, k->name, k->min, k->max, &r->u))
				return false;
			r->index = (int)r->u;
		} else if ((r->index = hs_key_enum(r, v, k->name, k->values)) < 0) {
			return false;
		}
		store_int(obj, k, (uint64_t)r->index);
		return true;
	case HS_KEY_GUID: {
		hs_guid g;
		if (!hs_key_guid(r, v, k->name, &g))
			return false;
		store(obj, k, &g, sizeof g);
		return true;
	}
	case HS_KEY_LIST:
		return hs_key_want(r, v, HS_Y_SEQ, k->name);
	case HS_KEY_MAP:
		return hs_key_want(r, v, HS_Y_MAP, k->name);
	case HS_KEY_CUSTOM:
		return true;
	}
	return false;
}

static void read_key(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, const hs_key *k, void *obj)
{
	const hs_ynode *v = hs_ymap_get(map, k->name);
	r->index = -1;
	r->u = 0;
	if (!v) {
		if (k->flags & HS_KEY_REQUIRED)
			hs_key_missing(r, map, k->name, k->needs ? k->needs : t->what);
		if (k->fn)
			k->fn(r, k, map, NULL, false, obj);
		return;
	}
	if (k->pos_at && obj)
		memcpy((char *)obj + k->pos_at - 1, &v->pos, sizeof v->pos);
	bool ok = read_value(r, k, v, obj);
	if (ok && k->has_at && obj)
		memcpy((char *)obj + k->has_at - 1, &ok, sizeof ok);
	if (k->fn)
		k->fn(r, k, map, v, ok, obj);
}

void hs_keys_read(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, void *obj)
{
	for (const hs_key *k = t->keys; k->name; k++)
		if (!(k->flags & HS_KEY_MANUAL))
			read_key(r, map, t, k, obj);
}

void hs_keys_read_one(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, const char *name, void *obj)
{
	for (const hs_key *k = t->keys; k->name; k++)
		if (strcmp(k->name, name) == 0)
			read_key(r, map, t, k, obj);
}

const hs_ynode *hs_keys_get(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, const char *name)
{
	const hs_ynode *v = hs_ymap_get(map, name);
	if (v)
		return v;
	for (const hs_key *k = t->keys; k->name; k++)
		if (strcmp(k->name, name) == 0 && (k->flags & HS_KEY_REQUIRED))
			hs_key_missing(r, map, k->name, k->needs ? k->needs : t->what);
	return NULL;
}

void hs_keys_load(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, void *obj)
{
	hs_keys_check_unknown(r, map, t);
	hs_keys_read(r, map, t, obj);
}

void *hs_keys_each(hs_keyread *r, const hs_ynode *seq, size_t size, hs_keys_item_fn fn, size_t *n)
{
	*n = 0;
	char *items = hs_key_alloc(r, seq->n + 1, size);
	if (!items)
		return NULL;
	for (; *n < seq->n; (*n)++)
		fn(r, seq->items[*n], items + *n * size);
	return items;
}

void *hs_keys_load_list(hs_keyread *r, const hs_ynode *seq, const hs_keytable *t, size_t size, size_t pos_off,
			const char *what, hs_keys_keep_fn keep, size_t *n)
{
	*n = 0;
	char *items = hs_key_alloc(r, seq->n + 1, size);
	if (!items)
		return NULL;
	for (size_t i = 0; i < seq->n; i++) {
		const hs_ynode *it = seq->items[i];
		if (!hs_key_want(r, it, HS_Y_MAP, what))
			continue;
		char *item = items + *n * size;
		memset(item, 0, size);
		memcpy(item + pos_off, &it->pos, sizeof it->pos);
		hs_keys_load(r, it, t, item);
		if (!keep || keep(r, it, items, *n))
			(*n)++;
	}
	return items;
}

/* ---- the dump ---- */

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static const char *type_name(const hs_key *k)
{
	static const char *const names[] = {"string", "ident", "story", "uint",   "bool",  "enum",
					    "guid",   "list",  "map",   "custom", "number"};
	return names[k->type];
}

void hs_keys_dump_json(FILE *out, const hs_keytable *const *tables)
{
	fputs("{\"tables\": [", out);
	for (size_t i = 0; tables[i]; i++) {
		const hs_keytable *t = tables[i];
		fprintf(out, "%s\n {\"name\": ", i ? "," : "");
		json_str(out, t->name);
		fputs(", \"what\": ", out);
		json_str(out, t->what);
		fputs(", \"schema\": ", out);
		json_str(out, t->schema);
		fputs(", \"doc\": ", out);
		json_str(out, t->doc);
		fputs(", \"base\": ", out);
		if (t->base)
			json_str(out, t->base->name);
		else
			fputs("null", out);
		fputs(", \"keys\": [", out);
		for (const hs_key *k = t->keys; k->name; k++) {
			fprintf(out, "%s\n  {\"name\": ", k == t->keys ? "" : ",");
			json_str(out, k->name);
			fputs(", \"type\": ", out);
			json_str(out, type_name(k));
			fprintf(out, ", \"required\": %s", k->flags & HS_KEY_REQUIRED ? "true" : "false");
			if (k->type == HS_KEY_UINT || k->type == HS_KEY_NUMBER || (k->flags & HS_KEY_OR_UINT))
				fprintf(out, ", \"min\": %llu, \"max\": %llu", (unsigned long long)k->min,
					(unsigned long long)k->max);
			if (k->values) {
				fputs(", \"values\": [", out);
				for (size_t v = 0; k->values[v]; v++) {
					fputs(v ? ", " : "", out);
					json_str(out, k->values[v]);
				}
				fputc(']', out);
			}
			if (k->flags & (HS_KEY_OF_STR | HS_KEY_OF_EVENT))
				fprintf(out, ", \"items\": \"%s\"", k->flags & HS_KEY_OF_STR ? "string" : "event");
			if (k->sub) {
				fputs(", \"sub\": ", out);
				json_str(out, k->sub->name);
			}
			fputs(", \"doc\": ", out);
			json_str(out, k->doc);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputs("\n]}\n", out);
}
