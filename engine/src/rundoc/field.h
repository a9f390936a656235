/* rundoc/field.h: a document as a table of fields (key, type, where in the struct): one table is both the writer and the reader of a run-folder document, so no key is typed twice. */
#ifndef HS_RUNDOC_FIELD_H
#define HS_RUNDOC_FIELD_H

#include <stdbool.h>
#include <stddef.h>

#include "hindsight/arena.h"
#include "hindsight/json.h"
#include "hindsight/ynode.h"

typedef enum {
	RD_STR,    /* const char *: NULL is omitted, or null when the field is `nullable` */
	RD_U64,    /* uint64_t */
	RD_I64,    /* int64_t: a negative value is null when `nullable` */
	RD_UINT,   /* unsigned */
	RD_INT,    /* int */
	RD_BOOL,   /* bool */
	RD_DOUBLE, /* double, `digits` after the point */
	RD_STRS,   /* const char **, count at n_off (size_t) */
	RD_OBJ,    /* an embedded struct described by sub */
	RD_ARR,    /* a pointer to an array of sub's structs, count at n_off (size_t) */
	RD_RAW,    /* const char *: JSON text another layer wrote (the plan's trigger, the trigger's hit); read back as JSON
		      text, and through `sub`, a view of the keys a reader needs, into the struct at view_off */
	RD_MAPTEXT, /* read only: a JSON object of scalars as "k=v, k=v" (const char *) */
} rd_type;

typedef struct rd_table rd_table;

typedef struct {
	const char *key;
	rd_type type;
	size_t off;
	size_t n_off;        /* RD_STRS, RD_ARR: where the count is */
	const rd_table *sub; /* RD_OBJ, RD_ARR, RD_RAW (its view) */
	size_t view_off;     /* RD_RAW: where the view struct is */
	size_t when_off;     /* 0: always written; else 1 + the offset of a bool that says whether it is (set when read) */
	int digits;          /* RD_DOUBLE */
	bool nullable;
} rd_field;

struct rd_table {
	size_t size; /* sizeof the struct (RD_ARR elements) */
	const rd_field *fields;
	size_t n;
};

#define RD_TABLE(type, arr) {sizeof(type), arr, sizeof arr / sizeof arr[0]}
/* A field written when the bool member `flag` is true (read: set when the key is there). */
#define RD_WHEN(type, flag) (1 + offsetof(type, flag))

/* Writes obj as a JSON object (the members in the table's order). */
void rd_write(hs_json *j, const rd_table *t, const void *obj);
/* Fills obj (zeroed by the caller) from the object n; strings and arrays go into the arena. False only when n is
 * not an object or memory ran out; a key that is missing leaves its member zero (or NULL). */
bool rd_read(hs_arena *a, const hs_ynode *n, const rd_table *t, void *obj);
/* Parses a JSON document (read as the YAML 1.2 it also is) into the arena; NULL when it is not an object. */
const hs_ynode *rd_parse(hs_arena *a, const char *path, const char *text, size_t len);

#endif
