/* run/ctl_json.h: a small JSON reader for the control channel's requests and replies (engine ctl). */
#ifndef HS_RUN_CTL_JSON_H
#define HS_RUN_CTL_JSON_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The project writes JSON (hindsight/json.h) but had nothing to read it; the
 * control channel reads one line per request and per reply, so a strict
 * reader of RFC 8259 text into a tree is all it needs. Depth is bounded
 * (HS_CTL_JSON_MAX_DEPTH) so a hostile line cannot exhaust the stack.
 *
 * Ownership: hs_ctl_val_parse returns a tree the caller frees with
 * hs_ctl_val_free; every string in it is owned by the tree.
 */

typedef enum { HS_CTL_NULL, HS_CTL_BOOL, HS_CTL_NUM, HS_CTL_STR, HS_CTL_ARR, HS_CTL_OBJ } hs_ctl_type;

typedef struct hs_ctl_val hs_ctl_val;
struct hs_ctl_val {
	hs_ctl_type type;
	char *key;          /* the member's name inside an object, else NULL */
	char *str;          /* STR: the decoded text (NUL inside is refused); NUM: the number as written */
	double num;         /* NUM */
	bool b;             /* BOOL */
	hs_ctl_val *child;  /* ARR, OBJ: the first element or member */
	hs_ctl_val *next;   /* the next sibling */
};

/* Parses text[0..len) (one value, whitespace around it allowed). NULL on a
 * syntax error, too deep a nesting or out of memory, with why in err. */
hs_ctl_val *hs_ctl_val_parse(const char *text, size_t len, char *err, size_t err_size);
void hs_ctl_val_free(hs_ctl_val *v);
/* The member `key` of object v (the first of that name), or NULL. */
const hs_ctl_val *hs_ctl_val_get(const hs_ctl_val *v, const char *key);
/* The member's string, or NULL when absent or not a string. */
const char *hs_ctl_val_str(const hs_ctl_val *v, const char *key);

#endif
