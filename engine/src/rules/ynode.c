/* rules/ynode.c: builds the position-keeping YAML tree with libyaml's event parser. */
#include "rules/ynode.h"

#include <stdint.h>
#include <string.h>
#include <yaml.h>

#include "hindsight/limits.h"

typedef struct {
	yaml_parser_t parser;
	const char *text;
	size_t len;
	hs_arena *arena;
	const char *file;
	hs_diags *diags;
	bool failed;
} ctx;

static hs_pos mark_pos(const ctx *c, yaml_mark_t m)
{
	/* libyaml marks are 0-based; everything after this file is 1-based. */
	return (hs_pos){c->file, (unsigned)m.line + 1, (unsigned)m.column + 1};
}

static bool next_event(ctx *c, yaml_event_t *ev)
{
	if (yaml_parser_parse(&c->parser, ev))
		return true;
	yaml_parser_t *p = &c->parser;
	hs_pos pos = mark_pos(c, p->problem_mark);
	if (p->error == YAML_READER_ERROR) {
		/* Reader errors (bad encoding) have a byte offset, not a mark. */
		unsigned line = 1, col = 1;
		for (size_t i = 0; i < p->problem_offset && i < c->len; i++) {
			if (c->text[i] == '\n') {
				line++;
				col = 1;
			} else if (((unsigned char)c->text[i] & 0xC0) != 0x80) {
				col++;
			}
		}
		pos = (hs_pos){c->file, line, col};
	}
	if (p->context)
		hs_diag_add(c->diags, HS_D_YAML_SYNTAX, pos, NULL, "%s %s", p->problem ? p->problem : "syntax error",
			    p->context);
	else
		hs_diag_add(c->diags, HS_D_YAML_SYNTAX, pos, NULL, "%s", p->problem ? p->problem : "syntax error");
	c->failed = true;
	return false;
}

static bool reject_features(ctx *c, const yaml_event_t *ev, const unsigned char *anchor, const unsigned char *tag,
			    bool implicit)
{
	if (anchor) {
		hs_diag_add(c->diags, HS_D_YAML_FEATURE, mark_pos(c, ev->start_mark), "write the value out in full",
			    "anchors (&%s) are not allowed in rules files", (const char *)anchor);
		return false;
	}
	if (tag && !implicit) {
		static const char core[] = "tag:yaml.org,2002:";
		const char *t = (const char *)tag;
		bool short_form = strncmp(t, core, sizeof core - 1) == 0;
		hs_diag_add(c->diags, HS_D_YAML_FEATURE, mark_pos(c, ev->start_mark), "remove the tag; values take their type from the key",
			    "tags (%s%s) are not allowed in rules files", short_form ? "!!" : "",
			    short_form ? t + sizeof core - 1 : t);
		return false;
	}
	return true;
}

static hs_ynode *new_node(ctx *c, hs_ytype t, yaml_mark_t m)
{
	hs_ynode *n = hs_arena_alloc(c->arena, sizeof(*n));
	if (n) {
		n->type = t;
		n->pos = mark_pos(c, m);
	}
	return n;
}

static hs_ynode *parse_node(ctx *c, yaml_event_t *ev, int depth);

static bool push(ctx *c, hs_ynode *parent, hs_ynode *key, hs_ynode *val, size_t *cap, size_t *kcap)
{
	hs_ynode **items = hs_arena_grow(c->arena, parent->items, sizeof(*items), parent->n, cap);
	if (!items)
		return false;
	parent->items = items;
	if (key) {
		hs_ynode **keys = hs_arena_grow(c->arena, parent->keys, sizeof(*keys), parent->n, kcap);
		if (!keys)
			return false;
		parent->keys = keys;
		keys[parent->n] = key;
	}
	items[parent->n++] = val;
	return true;
}

/* Parses the body of a sequence or mapping whose start event was `ev`. */
static hs_ynode *parse_collection(ctx *c, yaml_event_t *start, int depth, bool is_map)
{
	hs_ynode *n = new_node(c, is_map ? HS_Y_MAP : HS_Y_SEQ, start->start_mark);
	if (!n)
		return NULL;
	size_t cap = 0, kcap = 0;
	for (;;) {
		yaml_event_t ev;
		if (!next_event(c, &ev))
			return NULL;
		if (ev.type == (is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT)) {
			yaml_event_delete(&ev);
			return n;
		}
		hs_ynode *key = NULL;
		if (is_map) {
			key = parse_node(c, &ev, depth + 1);
			yaml_event_delete(&ev);
			if (!key)
				return NULL;
			if (key->type != HS_Y_SCALAR) {
				hs_diag_add(c->diags, HS_D_TYPE, key->pos, NULL, "mapping keys must be plain names");
				c->failed = true;
			} else if (!key->alias && hs_ynode_value(key) != HS_YV_STR) {
				/* JSON has only string keys; `true:` or `10:` would mean
				 * something else to every other YAML tool. */
				hs_diag_add(c->diags, HS_D_TYPE, key->pos, "quote it if a name is meant",
					    "mapping key '%s' is %s, not a name", key->str, hs_ynode_type_name(key));
			}
			if (!next_event(c, &ev))
				return NULL;
		}
		hs_ynode *val = parse_node(c, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!val)
			return NULL;
		if (key && key->type == HS_Y_SCALAR) {
			for (size_t i = 0; i < n->n; i++) {
				const hs_ynode *k = n->keys[i];
				if (k->type == HS_Y_SCALAR && k->len == key->len && memcmp(k->str, key->str, k->len) == 0) {
					hs_diag_add(c->diags, HS_D_DUP_KEY, key->pos, NULL,
						    "key '%s' is already given at line %u", key->str, k->pos.line);
					break;
				}
			}
		}
		if (!push(c, n, key, val, &cap, &kcap))
			return NULL;
	}
}

static hs_ynode *parse_node(ctx *c, yaml_event_t *ev, int depth)
{
	if (depth > HS_MAX_YAML_DEPTH) {
		hs_diag_add(c->diags, HS_D_DEPTH, mark_pos(c, ev->start_mark), NULL,
			    "nesting deeper than %d levels", HS_MAX_YAML_DEPTH);
		c->failed = true;
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		reject_features(c, ev, ev->data.scalar.anchor, ev->data.scalar.tag,
				ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit);
		hs_ynode *n = new_node(c, HS_Y_SCALAR, ev->start_mark);
		if (!n)
			return NULL;
		n->str = hs_arena_strndup(c->arena, (const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->len = ev->data.scalar.length;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
		    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
			size_t a = ev->start_mark.index, b = ev->end_mark.index;
			if (a < b && b <= c->len) {
				n->quote = c->text[a];
				n->raw = hs_arena_strndup(c->arena, c->text + a, b - a);
			}
		}
		return n->str ? n : NULL;
	}
	case YAML_SEQUENCE_START_EVENT:
		reject_features(c, ev, ev->data.sequence_start.anchor, ev->data.sequence_start.tag,
				ev->data.sequence_start.implicit);
		return parse_collection(c, ev, depth, false);
	case YAML_MAPPING_START_EVENT:
		reject_features(c, ev, ev->data.mapping_start.anchor, ev->data.mapping_start.tag,
				ev->data.mapping_start.implicit);
		return parse_collection(c, ev, depth, true);
	case YAML_ALIAS_EVENT:
		hs_diag_add(c->diags, HS_D_YAML_FEATURE, mark_pos(c, ev->start_mark), "write the value out in full",
			    "aliases (*%s) are not allowed in rules files", (const char *)ev->data.alias.anchor);
		/* Keep going with a null in its place so later problems are found too. */
		{
			hs_ynode *n = new_node(c, HS_Y_SCALAR, ev->start_mark);
			if (n) {
				n->str = "";
				n->plain = true;
				n->alias = true;
			}
			return n;
		}
	default:
		hs_diag_add(c->diags, HS_D_YAML_SYNTAX, mark_pos(c, ev->start_mark), NULL, "unexpected YAML event");
		c->failed = true;
		return NULL;
	}
}

hs_ynode *hs_yaml_parse(hs_arena *arena, const char *file, const char *text, size_t len, hs_diags *diags,
			bool *syntax_error)
{
	ctx c = {.arena = arena, .file = file, .diags = diags, .text = text, .len = len};
	hs_ynode *root = NULL;
	*syntax_error = false;
	if (!yaml_parser_initialize(&c.parser))
		return NULL;
	yaml_parser_set_input_string(&c.parser, (const unsigned char *)text, len);
	yaml_event_t ev;
	bool in_doc = false;
	int docs = 0;
	while (!c.failed && next_event(&c, &ev)) {
		yaml_event_type_t t = ev.type;
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_DOCUMENT_START_EVENT) {
			if (++docs == 2)
				hs_diag_add(diags, HS_D_YAML_FEATURE, mark_pos(&c, ev.start_mark),
					    "put each rules file in its own file", "a rules file holds one YAML document");
			in_doc = true;
		} else if (t == YAML_DOCUMENT_END_EVENT) {
			in_doc = false;
		} else if (in_doc && t != YAML_STREAM_START_EVENT) {
			hs_ynode *n = parse_node(&c, &ev, 0);
			if (docs == 1)
				root = n;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&c.parser);
	*syntax_error = c.failed;
	return c.failed ? NULL : root;
}

static bool all_of(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

/* YAML 1.2 core schema int: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ */
static bool is_core_int(const char *s)
{
	if (s[0] == '0' && s[1] == 'o')
		return all_of(s + 2, "01234567");
	if (s[0] == '0' && s[1] == 'x')
		return all_of(s + 2, "0123456789abcdefABCDEF");
	if (*s == '-' || *s == '+')
		s++;
	return all_of(s, "0123456789");
}

/* YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, .inf, .nan */
static bool is_core_float(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!strcmp(s, ".inf") || !strcmp(s, ".Inf") || !strcmp(s, ".INF"))
		return true;
	if (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))
		return true;
	size_t digits = strspn(s, "0123456789");
	s += digits;
	if (*s == '.') {
		s++;
		size_t frac = strspn(s, "0123456789");
		if (!digits && !frac)
			return false;
		s += frac;
	} else if (!digits) {
		return false;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		size_t e = strspn(s, "0123456789");
		if (!e)
			return false;
		s += e;
	}
	return *s == '\0';
}

hs_yvalue hs_ynode_value(const hs_ynode *n)
{
	if (n->type != HS_Y_SCALAR)
		return HS_YV_STR;
	if (!n->plain)
		return HS_YV_STR;
	const char *s = n->str;
	if (n->len == 0 || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
		return HS_YV_NULL;
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "false") ||
	    !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return HS_YV_BOOL;
	if (is_core_int(s))
		return HS_YV_INT;
	if (is_core_float(s))
		return HS_YV_FLOAT;
	return HS_YV_STR;
}

/* Source bytes that one decoded byte came from, for a double-quoted escape. */
static size_t escape_len(const char *p)
{
	switch (p[1]) {
	case 'x': return 4;
	case 'u': return 6;
	case 'U': return 10;
	default: return 2;
	}
}

/* UTF-8 bytes a \x, \u or \U escape decodes to (libyaml already validated it). */
static size_t escape_out(const char *p)
{
	size_t digits = p[1] == 'x' ? 2 : p[1] == 'u' ? 4 : p[1] == 'U' ? 8 : 0;
	if (!digits)
		return 1;
	unsigned long v = 0;
	for (size_t i = 0; i < digits; i++) {
		char ch = p[2 + i];
		int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
		if (d < 0)
			break;
		v = v * 16 + (unsigned long)d;
	}
	return v < 0x80 ? 1 : v < 0x800 ? 2 : v < 0x10000 ? 3 : 4;
}

unsigned hs_ynode_col_of(const hs_ynode *n, size_t offset)
{
	if (!n->raw)
		return n->pos.col + (unsigned)offset;
	const char *p = n->raw + 1;
	unsigned col = n->pos.col + 1;
	size_t out = 0;
	while (*p && *p != '\n' && out < offset) {
		size_t in = 1, produced = 1;
		if (n->quote == '"' && *p == '\\' && p[1]) {
			in = escape_len(p);
			produced = escape_out(p);
		} else if (n->quote == '\'' && *p == '\'' && p[1] == '\'') {
			in = 2;
		} else if (*p == n->quote) {
			break;
		}
		for (size_t i = 0; i < in && p[i]; i++)
			if (((unsigned char)p[i] & 0xC0) != 0x80)
				col++;
		p += in;
		out += produced;
	}
	return col;
}

const char *hs_ynode_type_name(const hs_ynode *n)
{
	if (n->type == HS_Y_MAP)
		return "a mapping";
	if (n->type == HS_Y_SEQ)
		return "a list";
	switch (hs_ynode_value(n)) {
	case HS_YV_NULL: return "null";
	case HS_YV_BOOL: return "a boolean";
	case HS_YV_INT: return "an integer";
	case HS_YV_FLOAT: return "a number";
	case HS_YV_STR: break;
	}
	return "a string";
}

/* The index of key in mapping n; SIZE_MAX when it has none or is no mapping. */
static size_t ymap_find(const hs_ynode *n, const char *key)
{
	if (!n || n->type != HS_Y_MAP)
		return SIZE_MAX;
	size_t i = 0;
	while (i < n->n && !(n->keys[i]->type == HS_Y_SCALAR && strcmp(n->keys[i]->str, key) == 0))
		i++;
	return i < n->n ? i : SIZE_MAX;
}

hs_ynode *hs_ymap_key(const hs_ynode *n, const char *key)
{
	size_t i = ymap_find(n, key);
	return i == SIZE_MAX ? NULL : n->keys[i];
}

hs_ynode *hs_ymap_get(const hs_ynode *n, const char *key)
{
	size_t i = ymap_find(n, key);
	return i == SIZE_MAX ? NULL : n->items[i];
}
