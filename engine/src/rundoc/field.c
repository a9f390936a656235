/* rundoc/field.c: writing and reading a document through its table of fields (rundoc/field.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "rundoc/field.h"

#define AT(obj, off, type) ((type *)((char *)(obj) + (off)))
#define CAT(obj, off, type) ((const type *)((const char *)(obj) + (off)))

void rd_write(hs_json *j, const rd_table *t, const void *obj)
{
	hs_json_obj_begin(j);
	for (size_t i = 0; i < t->n; i++) {
		const rd_field *f = &t->fields[i];
		if (f->when_off && !*CAT(obj, f->when_off - 1, bool))
			continue;
		if (f->type == RD_MAPTEXT)
			continue; /* read only */
		if (f->type == RD_STR && !*CAT(obj, f->off, char *) && !f->nullable)
			continue;
		hs_json_key(j, f->key);
		switch (f->type) {
		case RD_STR: hs_json_str(j, *CAT(obj, f->off, char *)); break;
		case RD_U64: hs_json_uint(j, *CAT(obj, f->off, uint64_t)); break;
		case RD_I64: {
			int64_t v = *CAT(obj, f->off, int64_t);
			if (v < 0 && f->nullable)
				hs_json_null(j);
			else
				hs_json_int(j, v);
			break;
		}
		case RD_UINT: hs_json_uint(j, *CAT(obj, f->off, unsigned)); break;
		case RD_INT: hs_json_int(j, *CAT(obj, f->off, int)); break;
		case RD_BOOL: hs_json_bool(j, *CAT(obj, f->off, bool)); break;
		case RD_DOUBLE: hs_json_double(j, *CAT(obj, f->off, double), f->digits); break;
		case RD_STRS: {
			const char *const *v = *(const char *const *const *)((const char *)obj + f->off);
			size_t n = *CAT(obj, f->n_off, size_t);
			hs_json_arr_begin(j);
			for (size_t k = 0; k < n; k++)
				hs_json_str(j, v[k]);
			hs_json_arr_end(j);
			break;
		}
		case RD_OBJ: rd_write(j, f->sub, CAT(obj, f->off, char)); break;
		case RD_ARR: {
			const char *v = *(const char *const *)((const char *)obj + f->off);
			size_t n = *CAT(obj, f->n_off, size_t);
			hs_json_arr_begin(j);
			for (size_t k = 0; k < n; k++)
				rd_write(j, f->sub, v + k * f->sub->size);
			hs_json_arr_end(j);
			break;
		}
		case RD_RAW: {
			const char *raw = *CAT(obj, f->off, char *);
			if (raw)
				hs_json_raw(j, raw);
			else
				hs_json_null(j);
			break;
		}
		case RD_MAPTEXT: break;
		}
	}
	hs_json_obj_end(j);
}

static const char *scalar(const hs_ynode *v)
{
	return v && v->type == HS_Y_SCALAR && hs_ynode_value(v) != HS_YV_NULL ? v->str : NULL;
}

/* A node back as JSON text (the document was JSON: a plain scalar is a number, a boolean or null). */
static void node_json(hs_json *j, const hs_ynode *n)
{
	if (n->type == HS_Y_MAP) {
		hs_json_obj_begin(j);
		for (size_t i = 0; i < n->n; i++) {
			hs_json_key(j, n->keys[i]->str);
			node_json(j, n->items[i]);
		}
		hs_json_obj_end(j);
	} else if (n->type == HS_Y_SEQ) {
		hs_json_arr_begin(j);
		for (size_t i = 0; i < n->n; i++)
			node_json(j, n->items[i]);
		hs_json_arr_end(j);
	} else {
		switch (n->plain ? hs_ynode_value(n) : HS_YV_STR) {
		case HS_YV_NULL: hs_json_null(j); break;
		case HS_YV_BOOL: hs_json_bool(j, n->str[0] == 't' || n->str[0] == 'T'); break;
		case HS_YV_INT:
		case HS_YV_FLOAT: hs_json_raw(j, n->str); break;
		default: hs_json_str(j, n->str); break;
		}
	}
}

/* "k=v, k=v" of an object of scalars (nested values as "..."). */
static char *map_text(hs_arena *a, const hs_ynode *w)
{
	char buf[512];
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; w && w->type == HS_Y_MAP && i < w->n && o < sizeof buf; i++) {
		const hs_ynode *val = w->items[i];
		int n = snprintf(buf + o, sizeof buf - o, "%s%s=%s", i ? ", " : "", w->keys[i]->str,
				 val->type == HS_Y_SCALAR ? val->str : "...");
		o = n < 0 ? sizeof buf : o + (size_t)n;
	}
	return hs_arena_strdup(a, buf);
}

bool rd_read(hs_arena *a, const hs_ynode *n, const rd_table *t, void *obj)
{
	if (!n || n->type != HS_Y_MAP)
		return false;
	for (size_t i = 0; i < t->n; i++) {
		const rd_field *f = &t->fields[i];
		const hs_ynode *v = hs_ymap_get(n, f->key);
		if (!v)
			continue;
		if (f->when_off)
			*AT(obj, f->when_off - 1, bool) = true;
		const char *s = scalar(v);
		char *end = NULL;
		switch (f->type) {
		case RD_STR:
			if (s && !(*AT(obj, f->off, char *) = hs_arena_strdup(a, s)))
				return false;
			break;
		case RD_U64:
			if (s)
				*AT(obj, f->off, uint64_t) = strtoull(s, &end, 10);
			break;
		case RD_I64:
			*AT(obj, f->off, int64_t) = s ? strtoll(s, &end, 10) : -1;
			break;
		case RD_UINT:
			if (s)
				*AT(obj, f->off, unsigned) = (unsigned)strtoul(s, &end, 10);
			break;
		case RD_INT:
			if (s)
				*AT(obj, f->off, int) = (int)strtol(s, &end, 10);
			break;
		case RD_BOOL: *AT(obj, f->off, bool) = s && !strcmp(s, "true"); break;
		case RD_DOUBLE:
			if (s)
				*AT(obj, f->off, double) = strtod(s, &end);
			break;
		case RD_STRS: {
			if (v->type != HS_Y_SEQ)
				break;
			const char **arr = hs_arena_alloc(a, (v->n ? v->n : 1) * sizeof *arr);
			if (!arr)
				return false;
			for (size_t k = 0; k < v->n; k++)
				arr[k] = scalar(v->items[k]) ? hs_arena_strdup(a, scalar(v->items[k])) : NULL;
			*AT(obj, f->off, const char **) = arr;
			*AT(obj, f->n_off, size_t) = v->n;
			break;
		}
		case RD_OBJ:
			if (v->type == HS_Y_MAP && !rd_read(a, v, f->sub, AT(obj, f->off, char)))
				return false;
			break;
		case RD_ARR: {
			if (v->type != HS_Y_SEQ)
				break;
			char *arr = hs_arena_alloc(a, (v->n ? v->n : 1) * f->sub->size);
			if (!arr)
				return false;
			memset(arr, 0, (v->n ? v->n : 1) * f->sub->size);
			size_t m = 0;
			for (size_t k = 0; k < v->n; k++)
				if (v->items[k]->type == HS_Y_MAP && rd_read(a, v->items[k], f->sub, arr + m * f->sub->size))
					m++;
			*AT(obj, f->off, char *) = arr;
			*AT(obj, f->n_off, size_t) = m;
			break;
		}
		case RD_RAW: {
			/* kept as JSON text, so a reader can write the document again as it was */
			hs_strbuf sb = {0};
			hs_json j;
			hs_json_init(&j, &sb);
			if (!s && v->type == HS_Y_SCALAR) {
				hs_sb_free(&sb);
				break; /* null */
			}
			node_json(&j, v);
			char *raw = sb.oom ? NULL : hs_arena_strdup(a, hs_sb_cstr(&sb));
			hs_sb_free(&sb);
			if (!raw)
				return false;
			*AT(obj, f->off, char *) = raw;
			if (f->sub && v->type == HS_Y_MAP && !rd_read(a, v, f->sub, AT(obj, f->view_off, char)))
				return false;
			break;
		}
		case RD_MAPTEXT:
			if (v->type == HS_Y_MAP && !(*AT(obj, f->off, char *) = map_text(a, v)))
				return false;
			break;
		}
		(void)end;
	}
	return true;
}

const hs_ynode *rd_parse(hs_arena *a, const char *path, const char *text, size_t len)
{
	hs_diags *d = hs_diags_new();
	if (!d)
		return NULL;
	bool syntax = false;
	const hs_ynode *root = hs_yaml_parse(a, path, text, len, d, &syntax);
	/* the nodes are in the arena; the diagnostics (a syntax error) are not needed past this */
	hs_diags_free(d);
	return root && root->type == HS_Y_MAP ? root : NULL;
}
