/* util/json.c: minimal JSON writer; see json.h. */
#include "util/json.h"

#include <inttypes.h>
#include <string.h>
#include <stdio.h>

void hs_json_init(hs_json *j, hs_strbuf *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = true;
	j->after_key = false;
}

static void indent(hs_json *j)
{
	hs_sb_putc(j->out, '\n');
	for (int i = 0; i < j->depth; i++)
		hs_sb_append(j->out, "  ");
}

/* Called before every value or key: writes the separator and indentation. */
static void pre(hs_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0) {
		if (!j->first[j->depth])
			hs_sb_putc(j->out, ',');
		j->first[j->depth] = false;
		indent(j);
	}
}

static void open(hs_json *j, char c)
{
	pre(j);
	hs_sb_putc(j->out, c);
	if (j->depth + 1 < HS_JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void close(hs_json *j, char c)
{
	bool empty = j->first[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (!empty)
		indent(j);
	hs_sb_putc(j->out, c);
	if (j->depth == 0)
		hs_sb_putc(j->out, '\n');
}

void hs_json_obj_begin(hs_json *j) { open(j, '{'); }
void hs_json_obj_end(hs_json *j) { close(j, '}'); }
void hs_json_arr_begin(hs_json *j) { open(j, '['); }
void hs_json_arr_end(hs_json *j) { close(j, ']'); }

void hs_json_escape(hs_strbuf *sb, const char *s)
{
	hs_sb_putc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': hs_sb_append(sb, "\\\""); break;
		case '\\': hs_sb_append(sb, "\\\\"); break;
		case '\n': hs_sb_append(sb, "\\n"); break;
		case '\r': hs_sb_append(sb, "\\r"); break;
		case '\t': hs_sb_append(sb, "\\t"); break;
		default:
			if (*p < 0x20)
				hs_sb_printf(sb, "\\u%04x", *p);
			else
				hs_sb_putc(sb, (char)*p);
		}
	}
	hs_sb_putc(sb, '"');
}

void hs_json_key(hs_json *j, const char *key)
{
	pre(j);
	hs_json_escape(j->out, key);
	hs_sb_append(j->out, ": ");
	j->after_key = true;
}

void hs_json_raw(hs_json *j, const char *json)
{
	pre(j);
	if (!json) {
		hs_sb_append(j->out, "null");
		return;
	}
	/* Indented to this depth, without the other writer's final newline. */
	size_t n = strlen(json);
	while (n && (json[n - 1] == '\n' || json[n - 1] == ' '))
		n--;
	for (size_t i = 0; i < n; i++) {
		if (json[i] == '\n')
			indent(j);
		else
			hs_sb_putc(j->out, json[i]);
	}
}

void hs_json_str(hs_json *j, const char *s)
{
	pre(j);
	if (s)
		hs_json_escape(j->out, s);
	else
		hs_sb_append(j->out, "null");
}

void hs_json_int(hs_json *j, int64_t v)
{
	pre(j);
	hs_sb_printf(j->out, "%" PRId64, v);
}

void hs_json_uint(hs_json *j, uint64_t v)
{
	pre(j);
	hs_sb_printf(j->out, "%" PRIu64, v);
}

void hs_json_bool(hs_json *j, bool v)
{
	pre(j);
	hs_sb_append(j->out, v ? "true" : "false");
}

void hs_json_double(hs_json *j, double v, int digits)
{
	pre(j);
	if (v != v || v > 1e300 || v < -1e300)
		hs_sb_append(j->out, "null");
	else
		hs_sb_printf(j->out, "%.*f", digits, v);
}

void hs_json_null(hs_json *j)
{
	pre(j);
	hs_sb_append(j->out, "null");
}

void hs_json_kstr(hs_json *j, const char *k, const char *s) { hs_json_key(j, k); hs_json_str(j, s); }
void hs_json_kint(hs_json *j, const char *k, int64_t v) { hs_json_key(j, k); hs_json_int(j, v); }
void hs_json_kuint(hs_json *j, const char *k, uint64_t v) { hs_json_key(j, k); hs_json_uint(j, v); }
void hs_json_kbool(hs_json *j, const char *k, bool v) { hs_json_key(j, k); hs_json_bool(j, v); }

void hs_json_kdouble(hs_json *j, const char *k, double v, int digits)
{
	hs_json_key(j, k);
	hs_json_double(j, v, digits);
}

void hs_json_kobjects(hs_json *j, const char *key, const void *items, size_t n, size_t size,
		      void (*put)(hs_json *j, const void *item))
{
	hs_json_key(j, key);
	hs_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		hs_json_obj_begin(j);
		put(j, (const char *)items + i * size);
		hs_json_obj_end(j);
	}
	hs_json_arr_end(j);
}
