/* tests/tracedat/fieldloc.c: fields read through locations equal fields read by name, on every field of every record. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hindsight/tracedat.h"
#include "fieldcheck.h"

/*
 * For each file given, every record's every field (and three names that are
 * not an event's own) is read with hs_tracedat_field_int/_str and through an
 * hs_tracedat_field_loc made from the FIRST record of the same event id (the
 * way a caller locates once per id), on a copy of the payload of exactly its
 * size (fieldcheck.h): ints, strings at six buffer sizes, and the kept-payload
 * pair. The first CUTS records of each event id are also read cut to every
 * length from 0 to their size, so every field is tried lying wholly, partly and
 * not at all inside the payload, and so are copies whose bytes past the common
 * fields are all ones (negative numbers, __data_loc strings far outside), all
 * 0x80, or noise; each dynamic field also gets every small place and length.
 * A file with __data_loc strings in plain text is also read as its __rel_loc
 * twin (the formats' word changed in a temporary copy: no recorded file has a
 * __rel_loc field). A location of another event must read
 * nothing. The files together must give every kind of read (numbers, a
 * negative one, char arrays, __data_loc strings, ftrace/print's trailing
 * text), so the test cannot pass by
 * comparing nothing.
 * usage: fieldloc FILE.dat...   (exit 0 when every read agrees)
 */

enum { N_IDS = 65536, CUTS = 3 };

typedef struct {
	hs_tracedat_field_loc *locs; /* per id: one per name of hs_tracedat_field_names, NULL until its first record */
	size_t n;
	unsigned cut; /* records of this id read at every cut so far */
} per_id;

typedef struct {
	per_id *ids; /* [N_IDS] */
	fc_tally t;
	uint64_t records, foreign_reads, oom;
	uint64_t rng;
	hs_tracedat_field_loc last; /* a location of the previous record's event, for the foreign read */
} ctx;

static uint8_t noise(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull; /* Knuth's MMIX generator: same every run */
	return (uint8_t)(*state >> 56);
}

static int visit(const hs_tracedat_record *r, void *vctx)
{
	ctx *c = vctx;
	c->records++;
	if (r->id < 0 || r->id >= N_IDS)
		return 0;
	per_id *p = &c->ids[r->id];
	if (!p->locs) {
		const char *names[FC_MAX_FIELDS];
		size_t n = hs_tracedat_field_names(r, names, FC_MAX_FIELDS);
		if (n > FC_MAX_FIELDS)
			n = FC_MAX_FIELDS;
		p->locs = calloc(n ? n : 1, sizeof *p->locs);
		if (!p->locs) {
			c->oom++;
			return 1;
		}
		p->n = n;
		for (size_t i = 0; i < n; i++)
			hs_tracedat_field_locate(r, names[i], &p->locs[i]);
	}
	fc_record(&c->t, r, r->size, p->locs);
	if (p->cut < CUTS) {
		p->cut++;
		for (size_t keep = 0; keep < r->size; keep++)
			fc_record(&c->t, r, keep, p->locs);
		/* The same event with other bytes past its common fields: all ones (every signed field -1, every
		 * __data_loc pointing far outside), all 0x80, and noise; whole and cut. */
		uint8_t *b = malloc(r->size ? r->size : 1);
		if (!b) {
			c->oom++;
			return 1;
		}
		for (int pat = 0; pat < 3; pat++) {
			memcpy(b, r->data, r->size);
			for (size_t i = 8; i < r->size; i++)
				b[i] = pat == 0 ? 0xff : pat == 1 ? 0x80 : noise(&c->rng);
			hs_tracedat_record m = *r;
			m.data = b;
			for (size_t keep = 0; keep <= r->size; keep++)
				fc_record(&c->t, &m, keep, p->locs);
		}
		free(b);
		/* Every small place and length in each dynamic field's u32, so a string is read from each byte of
		 * the payload (and just past it), __rel_loc's place counted from the field's end. */
		b = malloc(r->size ? r->size : 1);
		if (!b) {
			c->oom++;
			return 1;
		}
		for (size_t f = 0; f < p->n; f++) {
			const hs_tracedat_field_loc *l = &p->locs[f];
			if (!l->dynamic || l->offset > r->size || r->size - l->offset < 4)
				continue;
			const uint32_t lens[] = {0, 1, 3, (uint32_t)r->size};
			for (uint32_t at = 0; at <= r->size + 4; at++)
				for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
					memcpy(b, r->data, r->size);
					uint32_t loc = lens[k] << 16 | at;
					memcpy(b + l->offset, &loc, 4);
					hs_tracedat_record m = *r;
					m.data = b;
					fc_record(&c->t, &m, r->size, p->locs);
				}
		}
		free(b);
	}
	/* Another event's location reads nothing here, whatever its offset. */
	if (c->last.id >= 0 && c->last.id != r->id) {
		int64_t v;
		char b[64];
		c->foreign_reads++;
		if (hs_tracedat_loc_int(r, &c->last, &v) || hs_tracedat_loc_str(r, &c->last, b, sizeof b))
			fc_mismatch(&c->t, r, "(another event's)", r->size, "a location of another event read a value");
	}
	if (p->n)
		c->last = p->locs[p->n - 1];
	return 0;
}

/* A twin of `path` whose event formats say __rel_loc where they said __data_loc (same length, so an uncompressed
 * file stays whole): no recorded file has a __rel_loc field, this makes some. The twin's path in out; false when
 * the file has no __data_loc string in plain text (compressed formats) or cannot be written. */
static bool rel_twin(const char *path, char *out, size_t cap)
{
	static const char from[] = "__data_loc char[]", to[] = "__rel_loc  char[]";
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	char *buf = NULL;
	size_t len = 0, got;
	char chunk[65536];
	while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
		char *nb = realloc(buf, len + got);
		if (!nb) {
			free(buf);
			fclose(f);
			return false;
		}
		buf = nb;
		memcpy(buf + len, chunk, got);
		len += got;
	}
	fclose(f);
	size_t n = 0;
	for (size_t i = 0; i + sizeof from - 1 <= len; i++)
		if (!memcmp(buf + i, from, sizeof from - 1)) {
			memcpy(buf + i, to, sizeof to - 1);
			n++;
		}
	const char *tmp = getenv("TMPDIR");
	snprintf(out, cap, "%s/fieldloc-rel-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = n ? mkstemp(out) : -1;
	bool ok = fd >= 0;
	FILE *w = ok ? fdopen(fd, "wb") : NULL;
	ok = w && fwrite(buf, 1, len, w) == len;
	if (w)
		ok = fclose(w) == 0 && ok;
	else if (fd >= 0)
		close(fd);
	if (!ok && fd >= 0)
		unlink(out);
	free(buf);
	return ok;
}

/* One file: every record compared; the tallies added to all. 0 when it read and agreed. */
static int check_file(const char *path, fc_tally *all, uint64_t *records, uint64_t *foreign)
{
	int failed = 0;
	ctx c = {.t = {.label = path}};
	c.last.id = -1;
	c.ids = calloc(N_IDS, sizeof *c.ids);
	hs_tracedat *td = NULL;
	hs_status st = c.ids ? hs_tracedat_open(path, &td) : HS_ENOMEM;
	if (st == HS_OK)
		st = hs_tracedat_foreach(td, visit, &c);
	if (st != HS_OK || c.oom || !c.records) {
		fprintf(stderr, "%s: not read (%s, %llu records)\n", path, hs_strerror(st), (unsigned long long)c.records);
		failed = 1;
	}
	printf("%s: %llu records, %llu reads compared, %llu mismatches\n", path, (unsigned long long)c.records,
	       (unsigned long long)c.t.compared, (unsigned long long)c.t.mismatches);
	if (c.t.mismatches)
		failed = 1;
	all->compared += c.t.compared, all->mismatches += c.t.mismatches, all->ints += c.t.ints;
	all->negatives += c.t.negatives, all->strings += c.t.strings, all->dynamic += c.t.dynamic;
	all->trailing += c.t.trailing, all->relative += c.t.relative;
	*records += c.records, *foreign += c.foreign_reads;
	for (size_t i = 0; c.ids && i < N_IDS; i++)
		free(c.ids[i].locs);
	free(c.ids);
	hs_tracedat_close(td);
	return failed;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fieldloc FILE.dat...\n");
		return 2;
	}
	fc_tally all = {0};
	uint64_t records = 0, foreign = 0;
	int failed = 0;
	for (int a = 1; a < argc; a++) {
		failed |= check_file(argv[a], &all, &records, &foreign);
		char twin[4096];
		if (rel_twin(argv[a], twin, sizeof twin)) {
			printf("(%s: its __rel_loc twin)\n", argv[a]);
			failed |= check_file(twin, &all, &records, &foreign);
			unlink(twin);
		}
	}
	printf("all: %llu records, %llu reads compared: %llu numbers (%llu negative), %llu strings (%llu dynamic, "
	       "%llu of them __rel_loc, %llu trailing), %llu foreign locations; %llu mismatches\n",
	       (unsigned long long)records, (unsigned long long)all.compared, (unsigned long long)all.ints,
	       (unsigned long long)all.negatives, (unsigned long long)all.strings, (unsigned long long)all.dynamic,
	       (unsigned long long)all.relative, (unsigned long long)all.trailing, (unsigned long long)foreign,
	       (unsigned long long)all.mismatches);
	if (!all.ints || !all.negatives || !all.strings || !all.dynamic || !all.relative || !all.trailing || !foreign) {
		fprintf(stderr, "fieldloc: the files do not cover every kind of read (see the line above)\n");
		failed = 1;
	}
	return failed;
}
