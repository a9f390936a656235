/* hindsight/keys.h: YAML mappings described by static key tables, and the one strict reader that walks a mapping against its table. */
#ifndef HINDSIGHT_KEYS_H
#define HINDSIGHT_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/diag.h"
#include "hindsight/rules.h"
#include "hindsight/ynode.h"
#include "hindsight/arena.h"

/*
 * A mapping's keys are written down once, as a table: name, type, range or
 * values, required, a doc line, and where the value goes. The reader reports
 * unknown keys (with "did you mean"), missing required keys, wrong types and
 * out-of-range values with the loader's codes and messages; what only a
 * person can say (one key depends on another, several shapes) goes in a
 * key's `fn`. The same tables are printed as JSON (hs_keys_dump_json) so a
 * test can hold the JSON Schema and docs/rules-language.md to them.
 *
 * Ownership: tables are static and never freed. Strings the reader stores in
 * the caller's object point into the YAML node tree (owned by the arena the
 * tree was parsed into); lists it allocates come from hs_keyread.arena.
 */

typedef enum {
	HS_KEY_STR,    /* a string of one non-empty line */
	HS_KEY_IDENT,  /* a name: 1..HS_MAX_IDENT_CHARS of A-Z a-z 0-9 _ - */
	HS_KEY_STORY,  /* one line of 1..HS_MAX_STORY_CHARS characters */
	HS_KEY_UINT,   /* an integer in min..max (decimal, 0x or 0o) */
	HS_KEY_BOOL,   /* true or false */
	HS_KEY_ENUM,   /* one of `values`; stores the index */
	HS_KEY_GUID,   /* XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX; stores an hs_guid */
	HS_KEY_LIST,   /* a list; its items are read by fn (`sub`: the table of mapping items) */
	HS_KEY_MAP,    /* a mapping; read by fn (`sub`: its table, NULL for name -> value maps) */
	HS_KEY_CUSTOM, /* several shapes (e.g. 'all' or a list): read by fn alone */
	HS_KEY_NUMBER, /* a real number (integer or decimal, finite) in min..max; stores a double */
} hs_key_type;

enum {
	HS_KEY_REQUIRED = 1u << 0,
	/* Declared here (known key, schema, docs) but read by the caller's own code,
	 * e.g. 'include', which must be followed before the body is read. */
	HS_KEY_MANUAL = 1u << 1,
	/* An ENUM whose value may also be an integer in min..max ('level'). */
	HS_KEY_OR_UINT = 1u << 2,
	/* LIST items are strings (the dump says so; fn still reads them). */
	HS_KEY_OF_STR = 1u << 3,
	/* LIST items are a bare id, a bare name or a `sub` mapping. */
	HS_KEY_OF_EVENT = 1u << 4,
};

typedef struct hs_keyread hs_keyread;
typedef struct hs_key hs_key;
typedef struct hs_keytable hs_keytable;

/* Called after the key's typed reading, also when the key is absent (v NULL).
 * ok says whether the typed reading succeeded (always true for CUSTOM). */
typedef void (*hs_key_fn)(hs_keyread *r, const hs_key *k, const hs_ynode *map, const hs_ynode *v, bool ok, void *obj);

struct hs_keyread {
	hs_diags *d;
	hs_arena *arena;
	void *ctx; /* the caller's state, for fn */
	bool oom;
	/* The value just read, for fn: ENUM index (-1 if none), UINT value, NUMBER value. */
	int index;
	uint64_t u;
	double num;
};

struct hs_key {
	const char *name;
	hs_key_type type;
	unsigned flags;
	uint64_t min, max;         /* UINT, NUMBER, and ENUM with HS_KEY_OR_UINT */
	const char *const *values; /* ENUM, NULL-terminated */
	const hs_keytable *sub;    /* LIST of mappings, MAP */
	size_t at, size;           /* where the value goes: HS_AT(type, field); at 0 = nowhere */
	size_t pos_at;             /* where the value's position goes: HS_POS_AT(type, field) */
	hs_key_fn fn;
	const char *doc;
	/* Who "needs" the key in the missing-key message, when it is not the
	 * table's `what`: a program may say why the key is required ("a keep
	 * entry (why no scenario shows it) needs 'reason'"). NULL: `what`. */
	const char *needs;
	/* Where `true` goes when the key is given and its typed reading succeeded: HS_HAS_AT(type, field); 0 = nowhere.
	 * The checker tells "given" from a zero value by it (has_level, has_kind). */
	size_t has_at;
};

struct hs_keytable {
	const char *name;   /* for the dump: "session" */
	const char *what;   /* in messages: "unknown key 'x' in a session", "a session needs 'name'" */
	const char *schema; /* JSON pointer of its object in schemas/rules.schema.json ("" for none) */
	const char *doc;    /* the section of docs/rules-language.md that lists its keys ("" for none) */
	const hs_keytable *base; /* keys this mapping shares (known here, read by the base's reader) */
	const hs_key *keys;      /* ends with a {0} entry */
};

/* offset + 1, so that 0 means "stored nowhere" in a table written with designated initializers. */
#define HS_AT(T, f) .at = offsetof(T, f) + 1, .size = sizeof(((T *)0)->f)
#define HS_POS_AT(T, f) .pos_at = offsetof(T, f) + 1
#define HS_HAS_AT(T, f) .has_at = offsetof(T, f) + 1

/* Reports every key of map that neither t nor its bases define. */
void hs_keys_check_unknown(hs_keyread *r, const hs_ynode *map, const hs_keytable *t);
/* Reads t's own keys (not its bases'), in table order, into obj. */
void hs_keys_read(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, void *obj);
/* Reads one key of t (a MANUAL one, when the caller decides the moment). */
void hs_keys_read_one(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, const char *name, void *obj);
/* The value of t's own key `name` in map, or NULL; a REQUIRED key that is
 * absent is reported missing, as hs_keys_read would. For a program that
 * declares its keys in a table but reads the values with its own wording
 * (rulegen's config), one key at a time and in its own order. */
const hs_ynode *hs_keys_get(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, const char *name);
/* Both: the usual way to read a mapping. */
void hs_keys_load(hs_keyread *r, const hs_ynode *map, const hs_keytable *t, void *obj);
/* Says whether the item just read (items[n]) is kept; it may report (a duplicate) or read more of node. */
typedef bool (*hs_keys_keep_fn)(hs_keyread *r, const hs_ynode *node, void *items, size_t n);
/* A list of `t` mappings, read into a new arena array of `size`-byte items (one more than the list has): each
 * mapping is read (hs_keys_load) into the next item, zeroed first, with its position at pos_off (offsetof), and
 * kept when keep says so (NULL: always); an item that is no mapping is reported as `what` and skipped. Returns
 * the array and *n its items kept; NULL with r->oom set when out of memory. */
void *hs_keys_load_list(hs_keyread *r, const hs_ynode *seq, const hs_keytable *t, size_t size, size_t pos_off,
			const char *what, hs_keys_keep_fn keep, size_t *n);

/* Every item of a list into its own slot of a new arena array (one more zeroed item of `size` than the list has),
 * each read by fn; an item fn finds wrong keeps its slot (the checker counts entries). Returns the array and *n
 * the list's length; NULL with r->oom set when out of memory. */
typedef void (*hs_keys_item_fn)(hs_keyread *r, const hs_ynode *item, void *slot);
void *hs_keys_each(hs_keyread *r, const hs_ynode *seq, size_t size, hs_keys_item_fn fn, size_t *n);

/* The typed readers the table reader uses, for fn and for list items. Each
 * reports its own diagnostic; `key` names the value in messages. */
bool hs_key_want(hs_keyread *r, const hs_ynode *n, hs_ytype t, const char *key);
const char *hs_key_str(hs_keyread *r, const hs_ynode *n, const char *key);  /* any string */
const char *hs_key_line(hs_keyread *r, const hs_ynode *n, const char *key); /* one non-empty line */
const char *hs_key_story(hs_keyread *r, const hs_ynode *n, const char *key);
bool hs_key_uint(hs_keyread *r, const hs_ynode *n, const char *key, uint64_t min, uint64_t max, uint64_t *out);
/* A finite real number (YAML int or float) in min..max. */
bool hs_key_number(hs_keyread *r, const hs_ynode *n, const char *key, double min, double max, double *out);
int hs_key_enum(hs_keyread *r, const hs_ynode *n, const char *key, const char *const *values);
bool hs_key_guid(hs_keyread *r, const hs_ynode *n, const char *key, hs_guid *out);
bool hs_key_missing(hs_keyread *r, const hs_ynode *map, const char *key, const char *what);
/* A name: 1..max of letters, digits, '_' (and '-' if allow_dash); first_alpha: no digit first. */
bool hs_key_ident_ok(const char *s, size_t max, bool allow_dash, bool first_alpha);
/* A zeroed arena array of n items of size (room for one when n is 0); NULL with r->oom set. */
void *hs_key_alloc(hs_keyread *r, size_t n, size_t size);
/* s is none of the NULL-terminated names all: an HS_D_ENUM at pos whose message is fmt's text followed by the
 * names, ", " between them, and whose hint is "did you mean 'x'?" for the closest name, else hint_else. */
void hs_key_not_in(hs_keyread *r, hs_pos pos, const char *s, const char *const *all, const char *hint_else,
		   const char *fmt, ...) HS_PRINTF_FMT(6, 7);
/* A mapping only one catalog may carry (causes:, fleet:): true when v is one (ok) and the first; a second is
 * reported with code, hint and "a second <what>; the first is at file:line" (first: the first one's position). */
bool hs_key_once(hs_keyread *r, bool ok, const hs_ynode *v, bool present, hs_pos first, hs_diag_code code,
		 const char *hint, const char *what);
/* Strings of a list (non-strings reported and skipped); count, 0 on error (r->oom on OOM). */
size_t hs_key_strlist(hs_keyread *r, const hs_ynode *seq, const char *key, const char ***out, hs_pos **pos);

/* Prints tables (and the tables they reach) as one JSON document: {"tables": [...]}. */
void hs_keys_dump_json(FILE *out, const hs_keytable *const *tables);

/* The rules language's tables (rules/load.c), roots first. NULL-terminated. */
extern const hs_keytable *const hs_rules_keytables[];

#endif
