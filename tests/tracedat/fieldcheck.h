/* tests/tracedat/fieldcheck.h: a record's fields read by name and through located fields must agree, on a payload copy of exactly its size. */
#ifndef HS_TESTS_TRACEDAT_FIELDCHECK_H
#define HS_TESTS_TRACEDAT_FIELDCHECK_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/tracedat.h"

/*
 * Shared by tests/tracedat/fieldloc.c (the seeds, every record, every cut of
 * a payload), damage.c (damaged copies) and tests/fuzz/fuzz_tracedat.c. The
 * reader hands out payloads inside its larger read window, so a read past a
 * payload's end would touch the window's next bytes and no sanitizer would
 * see it: here the first `keep` bytes of the payload are copied into a heap
 * block of exactly that size and both ways of reading are run on it, so
 * under ASan any read outside the payload is a report. A location is made per
 * record unless `locs` gives one per name (made from another record of the
 * same event: the point of locating once).
 */

enum { FC_MAX_FIELDS = 256 };

typedef struct {
	uint64_t compared;   /* reads compared */
	uint64_t mismatches;
	uint64_t ints, negatives, strings, dynamic, relative, trailing; /* reads that gave a value, by kind */
	const char *label;   /* when set, the first mismatches are printed under it */
} fc_tally;

static inline void fc_mismatch(fc_tally *t, const hs_tracedat_record *r, const char *name, size_t keep,
			       const char *what)
{
	if (t->label && t->mismatches < 20)
		fprintf(stderr, "%s: %s/%s id %d field %s (%zu of %zu bytes): %s\n", t->label, r->system, r->name,
			r->id, name, keep, r->size, what);
	t->mismatches++;
}

/* Compares field i of the copy `c` (a record whose payload is the exact-size copy) both ways. */
static inline void fc_one(fc_tally *t, const hs_tracedat_record *r, const hs_tracedat_record *c, size_t keep,
			  const char *name, const hs_tracedat_field_loc *loc)
{
	static const size_t caps[] = {0, 1, 2, 7, 16, 4096};
	char a[4096], b[4096];
	int64_t va = 0, vb = 0;
	bool ia = hs_tracedat_field_int(c, name, &va), ib = hs_tracedat_loc_int(c, loc, &vb);
	t->compared++;
	if (ia != ib || (ia && va != vb)) {
		char what[128];
		snprintf(what, sizeof what, "int by name %d %" PRId64 ", located %d %" PRId64, ia, va, ib, vb);
		fc_mismatch(t, r, name, keep, what);
	} else if (ia) {
		t->ints++;
		t->negatives += va < 0;
	}
	for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
		memset(a, 'x', sizeof a);
		memset(b, 'y', sizeof b);
		bool sa = hs_tracedat_field_str(c, name, a, caps[k]), sb = hs_tracedat_loc_str(c, loc, b, caps[k]);
		t->compared++;
		if (sa != sb || (caps[k] && strcmp(a, b) != 0)) {
			char what[160];
			snprintf(what, sizeof what, "string (cap %zu) by name %d '%.40s', located %d '%.40s'", caps[k], sa,
				 caps[k] ? a : "", sb, caps[k] ? b : "");
			fc_mismatch(t, r, name, keep, what);
		} else if (sa && caps[k] == sizeof a) {
			t->strings++;
			t->dynamic += loc->dynamic;
			t->relative += loc->relative;
			t->trailing += loc->trailing;
		}
	}
	/* The kept-payload pair: by id and name against a location made from the id. */
	const hs_tracedat *td = (const hs_tracedat *)r->priv[0];
	hs_tracedat_field_loc el;
	hs_tracedat_event_field_locate(td, r->id, name, &el);
	ia = hs_tracedat_event_field_int(td, r->id, c->data, keep, name, &va);
	ib = hs_tracedat_loc_int_data(&el, c->data, keep, &vb);
	bool sa = hs_tracedat_event_field_str(td, r->id, c->data, keep, name, a, sizeof a);
	bool sb = hs_tracedat_loc_str_data(&el, c->data, keep, b, sizeof b);
	t->compared += 2;
	if (ia != ib || (ia && va != vb) || sa != sb || strcmp(a, b) != 0)
		fc_mismatch(t, r, name, keep, "kept-payload accessors disagree");
}

/* Every field of r (and three names no event has among its own fields) on a copy of its first `keep` bytes.
 * locs: one per name of hs_tracedat_field_names(r), made for r's event, or NULL to locate here. */
static inline void fc_record(fc_tally *t, const hs_tracedat_record *r, size_t keep, const hs_tracedat_field_loc *locs)
{
	const char *names[FC_MAX_FIELDS + 3];
	size_t n = hs_tracedat_field_names(r, names, FC_MAX_FIELDS);
	if (n > FC_MAX_FIELDS)
		n = FC_MAX_FIELDS;
	size_t own = n;
	names[n++] = "common_pid"; /* the common fields are not an event's own, for either way */
	names[n++] = "common_type";
	names[n++] = "no_such_field";
	uint8_t *copy = malloc(keep ? keep : 1);
	if (!copy) {
		fc_mismatch(t, r, "-", keep, "out of memory");
		return;
	}
	memcpy(copy, r->data, keep);
	hs_tracedat_record c = *r;
	c.data = copy;
	c.size = keep;
	for (size_t i = 0; i < n; i++) {
		hs_tracedat_field_loc here;
		const hs_tracedat_field_loc *loc = locs && i < own ? &locs[i] : &here;
		bool found = loc == &here ? hs_tracedat_field_locate(r, names[i], &here) : loc->id >= 0;
		if (found != (i < own) || (found && loc->id != r->id))
			fc_mismatch(t, r, names[i], keep, found ? "located a field the event does not have as its own"
							     : "did not locate one of the event's fields");
		fc_one(t, r, &c, keep, names[i], loc);
	}
	free(copy);
}

#endif
