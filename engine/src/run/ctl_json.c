/* run/ctl_json.c: a strict, depth-bounded JSON reader into a tree, for the control channel's one-line messages. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/strbuf.h"
#include "run/ctl_json.h"

typedef struct {
	const char *p, *end;
	char *err;
	size_t err_size;
	bool failed;
} reader;

static void fail_at(reader *r, const char *why)
{
	if (!r->failed && r->err && r->err_size)
		snprintf(r->err, r->err_size, "%s", why);
	r->failed = true;
}

static void skip_ws(reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int hex4(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static void put_utf8(hs_strbuf *sb, uint32_t cp)
{
	if (cp < 0x80) {
		hs_sb_putc(sb, (char)cp);
	} else if (cp < 0x800) {
		hs_sb_putc(sb, (char)(0xC0 | cp >> 6));
		hs_sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		hs_sb_putc(sb, (char)(0xE0 | cp >> 12));
		hs_sb_putc(sb, (char)(0x80 | (cp >> 6 & 0x3F)));
		hs_sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
	} else {
		hs_sb_putc(sb, (char)(0xF0 | cp >> 18));
		hs_sb_putc(sb, (char)(0x80 | (cp >> 12 & 0x3F)));
		hs_sb_putc(sb, (char)(0x80 | (cp >> 6 & 0x3F)));
		hs_sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
	}
}

/* At the opening quote; returns the decoded string (malloc'd) or NULL. */
static char *read_string(reader *r)
{
	hs_strbuf sb = {0};
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		unsigned char c = (unsigned char)*r->p;
		if (c < 0x20) {
			fail_at(r, "a control character inside a string");
			goto fail;
		}
		if (c != '\\') {
			hs_sb_putc(&sb, (char)c);
			r->p++;
			continue;
		}
		if (r->end - r->p < 2) {
			fail_at(r, "a string ends inside an escape");
			goto fail;
		}
		char e = r->p[1];
		r->p += 2;
		switch (e) {
		case '"': hs_sb_putc(&sb, '"'); break;
		case '\\': hs_sb_putc(&sb, '\\'); break;
		case '/': hs_sb_putc(&sb, '/'); break;
		case 'b': hs_sb_putc(&sb, '\b'); break;
		case 'f': hs_sb_putc(&sb, '\f'); break;
		case 'n': hs_sb_putc(&sb, '\n'); break;
		case 'r': hs_sb_putc(&sb, '\r'); break;
		case 't': hs_sb_putc(&sb, '\t'); break;
		case 'u': {
			int hi = r->end - r->p >= 4 ? hex4(r->p) : -1;
			if (hi < 0) {
				fail_at(r, "a bad \\u escape");
				goto fail;
			}
			r->p += 4;
			uint32_t cp = (uint32_t)hi;
			if (hi >= 0xD800 && hi < 0xDC00) {
				/* A high surrogate must be followed by its low half. */
				int lo = r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u' ? hex4(r->p + 2) : -1;
				if (lo < 0xDC00 || lo > 0xDFFF) {
					fail_at(r, "an unpaired surrogate in a \\u escape");
					goto fail;
				}
				r->p += 6;
				cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
			} else if (hi >= 0xDC00 && hi <= 0xDFFF) {
				fail_at(r, "an unpaired surrogate in a \\u escape");
				goto fail;
			}
			if (!cp) {
				fail_at(r, "a NUL character inside a string");
				goto fail;
			}
			put_utf8(&sb, cp);
			break;
		}
		default:
			fail_at(r, "an unknown escape in a string");
			goto fail;
		}
	}
	if (r->p >= r->end) {
		fail_at(r, "a string without its closing quote");
		goto fail;
	}
	r->p++;
	hs_sb_cstr(&sb); /* "" for an empty string */
	if (sb.oom) {
		fail_at(r, "out of memory");
		goto fail;
	}
	return sb.buf ? hs_sb_take(&sb) : calloc(1, 1);
fail:
	hs_sb_free(&sb);
	return NULL;
}

static hs_ctl_val *read_value(reader *r, int depth);

static bool read_number(reader *r, hs_ctl_val *v)
{
	const char *s = r->p;
	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p >= r->end || *r->p < '0' || *r->p > '9')
		return false;
	if (*r->p == '0')
		r->p++;
	else
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9')
			return false;
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9')
			return false;
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	size_t n = (size_t)(r->p - s);
	if (!(v->str = malloc(n + 1)))
		return false;
	memcpy(v->str, s, n);
	v->str[n] = 0;
	v->num = strtod(v->str, NULL);
	v->type = HS_CTL_NUM;
	return true;
}

static bool read_word(reader *r, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n))
		return false;
	r->p += n;
	return true;
}

/* Elements or members until `close`; objects read a key before each. */
static bool read_items(reader *r, hs_ctl_val *v, char close, int depth)
{
	hs_ctl_val **tail = &v->child;
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return true;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(r);
		if (close == '}') {
			if (r->p >= r->end || *r->p != '"') {
				fail_at(r, "an object member without a quoted name");
				return false;
			}
			if (!(key = read_string(r)))
				return false;
			skip_ws(r);
			if (r->p >= r->end || *r->p != ':') {
				free(key);
				fail_at(r, "a member name without ':'");
				return false;
			}
			r->p++;
		}
		hs_ctl_val *item = read_value(r, depth + 1);
		if (!item) {
			free(key);
			return false;
		}
		item->key = key;
		*tail = item;
		tail = &item->next;
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			return true;
		}
		fail_at(r, close == '}' ? "an object without ',' or '}'" : "an array without ',' or ']'");
		return false;
	}
}

static hs_ctl_val *read_value(reader *r, int depth)
{
	if (depth > HS_CTL_JSON_MAX_DEPTH) {
		fail_at(r, "nested too deeply");
		return NULL;
	}
	hs_ctl_val *v = calloc(1, sizeof(*v));
	if (!v) {
		fail_at(r, "out of memory");
		return NULL;
	}
	skip_ws(r);
	if (r->p >= r->end) {
		fail_at(r, "a value is missing");
		goto fail;
	}
	switch (*r->p) {
	case '{':
		v->type = HS_CTL_OBJ;
		if (!read_items(r, v, '}', depth))
			goto fail;
		break;
	case '[':
		v->type = HS_CTL_ARR;
		if (!read_items(r, v, ']', depth))
			goto fail;
		break;
	case '"':
		v->type = HS_CTL_STR;
		if (!(v->str = read_string(r)))
			goto fail;
		break;
	case 't':
	case 'f':
		v->type = HS_CTL_BOOL;
		v->b = *r->p == 't';
		if (!read_word(r, v->b ? "true" : "false")) {
			fail_at(r, "not a JSON value");
			goto fail;
		}
		break;
	case 'n':
		if (!read_word(r, "null")) {
			fail_at(r, "not a JSON value");
			goto fail;
		}
		break;
	default:
		if (!read_number(r, v)) {
			fail_at(r, "not a JSON value");
			goto fail;
		}
	}
	return v;
fail:
	hs_ctl_val_free(v);
	return NULL;
}

hs_ctl_val *hs_ctl_val_parse(const char *text, size_t len, char *err, size_t err_size)
{
	reader r = {.p = text, .end = text + len, .err = err, .err_size = err_size};
	hs_ctl_val *v = read_value(&r, 0);
	if (!v)
		return NULL;
	skip_ws(&r);
	if (r.p != r.end) {
		fail_at(&r, "text after the value");
		hs_ctl_val_free(v);
		return NULL;
	}
	return v;
}

void hs_ctl_val_free(hs_ctl_val *v)
{
	while (v) {
		hs_ctl_val *next = v->next;
		hs_ctl_val_free(v->child); /* depth is bounded by the parser */
		free(v->key);
		free(v->str);
		free(v);
		v = next;
	}
}

const hs_ctl_val *hs_ctl_val_get(const hs_ctl_val *v, const char *key)
{
	if (!v || v->type != HS_CTL_OBJ)
		return NULL;
	for (const hs_ctl_val *m = v->child; m; m = m->next)
		if (!strcmp(m->key, key))
			return m;
	return NULL;
}

const char *hs_ctl_val_str(const hs_ctl_val *v, const char *key)
{
	const hs_ctl_val *m = hs_ctl_val_get(v, key);
	return m && m->type == HS_CTL_STR ? m->str : NULL;
}
