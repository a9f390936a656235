/* hindsight/json.h: a minimal streaming JSON writer (pretty-printed, correct escaping) over hs_strbuf. */
#ifndef HINDSIGHT_JSON_H
#define HINDSIGHT_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "hindsight/strbuf.h"

/*
 * Ownership: the writer borrows its hs_strbuf (the caller owns and frees it)
 * and holds nothing else; strings are copied into the buffer, never kept.
 */

enum { HS_JSON_MAX_DEPTH = 32 };

/* The writer tracks commas and indentation; callers only say what comes next.
 * Keys are given with hs_json_key before each member value inside an object. */
typedef struct {
	hs_strbuf *out;            /* borrowed */
	int depth;
	bool first[HS_JSON_MAX_DEPTH];
	bool after_key;
} hs_json;

void hs_json_init(hs_json *j, hs_strbuf *out);
void hs_json_obj_begin(hs_json *j);
void hs_json_obj_end(hs_json *j);
void hs_json_arr_begin(hs_json *j);
void hs_json_arr_end(hs_json *j);
void hs_json_key(hs_json *j, const char *key);
void hs_json_str(hs_json *j, const char *s); /* NULL writes null */
void hs_json_int(hs_json *j, int64_t v);
void hs_json_uint(hs_json *j, uint64_t v);
void hs_json_bool(hs_json *j, bool v);
void hs_json_null(hs_json *j);
/* A value that is already JSON text (another writer's document), written as given. */
void hs_json_raw(hs_json *j, const char *json);
/* A finite double with up to `digits` decimals (NaN and infinities write null). */
void hs_json_double(hs_json *j, double v, int digits);
/* Shorthands for "key": value. */
void hs_json_kstr(hs_json *j, const char *key, const char *s);
void hs_json_kint(hs_json *j, const char *key, int64_t v);
void hs_json_kuint(hs_json *j, const char *key, uint64_t v);
void hs_json_kbool(hs_json *j, const char *key, bool v);
void hs_json_kdouble(hs_json *j, const char *key, double v, int digits);
/* "key": an array of one object per element of items (n of them, size bytes
 * apart), put writing each object's members. */
void hs_json_kobjects(hs_json *j, const char *key, const void *items, size_t n, size_t size,
		      void (*put)(hs_json *j, const void *item));
/* Appends s as a JSON string literal (with quotes) to sb. */
void hs_json_escape(hs_strbuf *sb, const char *s);

#endif
