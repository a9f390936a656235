/* hindsight/ynode.h: libyaml events turned into a node tree where every node keeps its 1-based file:line:col. */
#ifndef HINDSIGHT_YNODE_H
#define HINDSIGHT_YNODE_H

#include <stdbool.h>
#include <stddef.h>

#include "hindsight/diag.h"
#include "hindsight/arena.h"

/*
 * Ownership: the node tree, its strings and its arrays live in the arena given
 * to hs_yaml_parse and die with it; `file` is borrowed (an interned path that
 * must outlive the tree). Lookups return pointers into the tree.
 */

typedef enum { HS_Y_SCALAR, HS_Y_SEQ, HS_Y_MAP } hs_ytype;

/* YAML 1.2 core-schema reading of a scalar; quoted and block scalars are
 * always strings, as in the JSON Schema tools we agree with. */
typedef enum { HS_YV_NULL, HS_YV_BOOL, HS_YV_INT, HS_YV_FLOAT, HS_YV_STR } hs_yvalue;

typedef struct hs_ynode hs_ynode;
struct hs_ynode {
	hs_ytype type;
	hs_pos pos;
	/* scalar */
	const char *str;
	size_t len;
	bool plain;
	char quote;      /* '\'' or '"' for flow-quoted scalars, else 0 */
	bool alias;      /* stands in for a rejected alias: already reported, stay quiet */
	const char *raw; /* quoted scalars: the source text from the opening quote on */
	/* seq: items[n]; map: keys[n] (scalars) and items[n] (values) */
	hs_ynode **keys;
	hs_ynode **items;
	size_t n;
};

/*
 * Parses one YAML document. Problems are reported to diags with positions in
 * `file` (an interned path). Anchors, aliases, tags, duplicate keys, non-scalar
 * keys and extra documents are errors. Returns the root (owned by arena) or
 * NULL when the text could not be parsed at all; an empty document yields NULL
 * without a diagnostic (the caller reports the missing keys).
 */
hs_ynode *hs_yaml_parse(hs_arena *arena, const char *file, const char *text, size_t len, hs_diags *diags,
			bool *syntax_error);

hs_yvalue hs_ynode_value(const hs_ynode *n);
/* The 1-based column in the source of byte `offset` of a scalar's decoded
 * text, undoing quote escapes (\\, \x41, '') so that a caret lands under the
 * character the user wrote. Stays on the scalar's first line. */
unsigned hs_ynode_col_of(const hs_ynode *n, size_t offset);

/* The name of a node's type for messages: "a mapping", "a string", ... */
const char *hs_ynode_type_name(const hs_ynode *n);
/* Looks up a key in a mapping; NULL if absent or n is not a mapping. */
hs_ynode *hs_ymap_get(const hs_ynode *n, const char *key);
/* The key node itself (for positions that point at the key). */
hs_ynode *hs_ymap_key(const hs_ynode *n, const char *key);

#endif
