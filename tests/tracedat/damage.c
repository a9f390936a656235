/* tests/tracedat/damage.c: byte flips and truncations of real trace.dat files: each is read or refused, never a crash. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hindsight/tracedat.h"
#include "fieldcheck.h"

/*
 * For each file given: the original is read (it must read with no problem),
 * then a fixed set of mutations (the same every run: a seeded generator) is
 * written to a memory file and read through hs_tracedat_open and two walks
 * that touch every payload byte and a few fields; the first walk also reads
 * every field of every record by name and through a location on a payload
 * copy of exactly its size (fieldcheck.h). Each mutation must:
 *   - be refused (HS_EINVAL/ENOMEM...) with a first problem that names the file, or
 *   - open and walk to its end, the second walk seeing what the first did;
 *   - a truncation that loses records must list a problem (nothing is lost silently);
 *   - read each field the same both ways (a damaged format or payload included).
 * Each uncompressed seed also gets field declarations libtraceevent leaks on
 * (hostile_formats). Once per run, an uncompressed v7 seed also gets an appended options section
 * with 5 x 4096 CPU ranges: it must be read within HS_TRACEDAT_MAX_STREAMS and
 * HS_TRACEDAT_MAX_WALK_BYTES, both named among its problems.
 * Crashes, overreads and leaks are the sanitizer build's to catch (this test
 * runs there too). --write DIR N writes the first N mutations of each file as
 * DIR/<file>.<i>.dat for tests/tracedat/check-damaged.sh (analyze on them).
 * usage: damage [--flips N] [--write DIR N] FILE.dat...
 */

typedef struct {
	size_t records;
	uint64_t sink;
	fc_tally *fields; /* the first walk: every field read by name and through a location, on exact-size copies */
} walk;

static int visit(const hs_tracedat_record *r, void *vctx)
{
	walk *w = vctx;
	const uint8_t *p = r->data;
	for (size_t i = 0; i < r->size; i++)
		w->sink += p[i];
	w->sink += (uint64_t)strlen(r->comm) + strlen(r->system) + strlen(r->name) + strlen(r->buffer);
	int64_t v;
	char buf[32];
	if (hs_tracedat_field_int(r, "pid", &v) || hs_tracedat_field_int(r, "prev_pid", &v))
		w->sink += (uint64_t)v;
	if (hs_tracedat_field_str(r, "comm", buf, sizeof buf) || hs_tracedat_field_str(r, "filename", buf, sizeof buf))
		w->sink += (uint64_t)buf[0];
	if (w->fields)
		fc_record(w->fields, r, r->size, NULL);
	w->records++;
	return 0;
}

typedef struct {
	size_t tried, opened, opened_with_problems, refused, failures;
	uint64_t field_reads; /* compared by fieldcheck.h */
} tally;

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

/* Problem texts of the last read_one, for the checks that look for one. */
static char g_texts[8192];

/* Reads data[0..len) as a file; returns records walked, or -1 when refused. Checks the rules above. */
static long read_one(const char *label, const uint8_t *data, size_t len, tally *t, size_t *problems)
{
	g_texts[0] = '\0';
	int fd = memfd_create("damage", MFD_CLOEXEC);
	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len)) {
		perror("damage: memfd");
		exit(2);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open(path, &td);
	long result = -1;
	*problems = td ? hs_tracedat_problem_count(td) : 0;
	if (st != HS_OK) {
		const hs_problem *p = td ? hs_tracedat_problem_at(td, 0) : NULL;
		if (!p || !strstr(p->message, path)) {
			printf("FAIL %s: refused (%s) without a problem naming the file\n", label, hs_strerror(st));
			t->failures++;
		}
		t->refused++;
	} else {
		fc_tally fields = {.label = label};
		walk a = {.fields = &fields}, b = {0};
		hs_status s1 = hs_tracedat_foreach(td, visit, &a);
		size_t after_first = hs_tracedat_problem_count(td);
		hs_status s2 = hs_tracedat_foreach(td, visit, &b);
		if (s1 != HS_OK || s2 != HS_OK || a.records != b.records || a.sink != b.sink) {
			printf("FAIL %s: the walks disagree (%s/%s, %zu/%zu records)\n", label, hs_strerror(s1),
			       hs_strerror(s2), a.records, b.records);
			t->failures++;
		}
		if (fields.mismatches) {
			printf("FAIL %s: %llu field reads through locations differ from reads by name\n", label,
			       (unsigned long long)fields.mismatches);
			t->failures++;
		}
		t->field_reads += fields.compared;
		if (hs_tracedat_problem_count(td) != after_first && after_first < HS_TRACEDAT_MAX_PROBLEMS) {
			printf("FAIL %s: the second walk listed new problems\n", label);
			t->failures++;
		}
		*problems = hs_tracedat_problem_count(td);
		t->opened++;
		t->opened_with_problems += *problems != 0;
		result = (long)a.records;
	}
	for (size_t i = 0; td && i < hs_tracedat_problem_count(td); i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text);
		if (getenv("HS_DAMAGE_VERBOSE"))
			printf("  %s: %s\n", label, text);
		size_t used = strlen(g_texts);
		snprintf(g_texts + used, sizeof g_texts - used, "%s\n", text);
		if (!text[0]) {
			printf("FAIL %s: an empty problem\n", label);
			t->failures++;
		}
	}
	hs_tracedat_close(td);
	close(fd);
	t->tried++;
	return result;
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		fprintf(stderr, "damage: %s: %s\n", path, strerror(errno));
		return -1;
	}
	*len = (size_t)sb.st_size;
	*out = malloc(*len ? *len : 1);
	if (!*out || read(fd, *out, *len) != (ssize_t)*len) {
		fprintf(stderr, "damage: %s: cannot read\n", path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Mutation i of a file: a deterministic mix of truncations, byte flips and number-sized overwrites. */
static size_t mutate(const uint8_t *orig, size_t len, size_t i, uint8_t *buf, char *what, size_t cap)
{
	memcpy(buf, orig, len);
	uint32_t kind = i % 4, r = rnd();
	size_t at = len ? (size_t)(rnd() % len) : 0;
	switch (kind) {
	case 0: /* truncation: every part of the file gets cut in turn */
		at = len ? (size_t)(((uint64_t)(i / 4) * 7919u + r % 97u) % len) : 0;
		snprintf(what, cap, "cut at %zu", at);
		return at;
	case 1: { /* one byte flipped with a mask */
		static const uint8_t masks[] = {0xff, 0x80, 0x01, 0x10, 0x7f, 0x40};
		uint8_t m = masks[r % sizeof masks];
		buf[at] ^= m;
		snprintf(what, cap, "byte %zu ^= 0x%02x", at, m);
		return len;
	}
	case 2: { /* a 4- or 8-byte number made huge, zero or off by a little (sizes, offsets, counts) */
		size_t w = r & 1 ? 8 : 4;
		at &= ~(size_t)3;
		if (at + w > len)
			at = len >= w ? len - w : 0;
		static const uint64_t vals[] = {0xffffffffffffffffull, 0, 0x7fffffff, 0x80000000ull, 1, 0x100000000ull};
		uint64_t v = vals[(r >> 1) % (sizeof vals / sizeof vals[0])];
		if (at + w <= len)
			memcpy(buf + at, &v, w);
		snprintf(what, cap, "%zu bytes at %zu = 0x%llx", w, at, (unsigned long long)v);
		return len;
	}
	default: { /* a run of bytes scrambled */
		size_t n = 1 + r % 64;
		for (size_t k = 0; k < n && at + k < len; k++)
			buf[at + k] = (uint8_t)rnd();
		snprintf(what, cap, "%zu bytes at %zu scrambled", n, at);
		return len;
	}
	}
}

/* A hostile v7 file made from an uncompressed one: an options section appended (the last DONE option patched to
 * point to it) with nbuf BUFFER options of ncpu CPUs each, every CPU's range the same 64 KB of empty pages after
 * it. It must open, walk and be bounded: the ranges past HS_TRACEDAT_MAX_STREAMS and the windows past HS_TRACEDAT_MAX_WALK_BYTES are
 * refused with problems. Returns 0 when the file could be made and read as expected, 1 on a failure, -1 when
 * the input is not an uncompressed v7 file. */
static int hostile_buffers(const char *base, const uint8_t *orig, size_t len, unsigned nbuf, unsigned ncpu, tally *t)
{
	if (len < 32 || memcmp(orig + 10, "7\0", 2) != 0)
		return -1;
	size_t at = 10 + 2 + 2 + 4;
	const uint8_t *nul = memchr(orig + at, 0, len - at);
	if (!nul || memcmp(orig + at, "none", 5) != 0)
		return -1;
	at = (size_t)(nul - orig) + 1;
	nul = memchr(orig + at, 0, len - at);
	if (!nul)
		return -1;
	at = (size_t)(nul - orig) + 1;
	uint64_t off, done_at = 0, buffer_sec = 0;
	memcpy(&off, orig + at, 8);
	for (int n = 0; off && n < 16; n++) { /* follow the options chain to its last DONE */
		uint16_t flags;
		uint64_t size;
		if (off + 16 > len)
			return -1;
		memcpy(&flags, orig + off + 2, 2);
		memcpy(&size, orig + off + 8, 8);
		if ((flags & 1) || size > len - off - 16)
			return -1;
		size_t p = (size_t)off + 16, end = p + (size_t)size;
		uint64_t next = 0;
		while (p + 6 <= end) {
			uint16_t id;
			uint32_t osz;
			memcpy(&id, orig + p, 2);
			memcpy(&osz, orig + p + 2, 4);
			if (id == 3 && osz >= 8)
				memcpy(&buffer_sec, orig + p + 6, 8);
			if (id == 0 && osz >= 8) {
				done_at = p + 6;
				memcpy(&next, orig + p + 6, 8);
				break;
			}
			p += 6 + osz;
		}
		off = next;
	}
	if (!done_at || !buffer_sec)
		return -1;
	size_t opt_bytes = (size_t)nbuf * (6 + 8 + 16 + 5 + 8 + (size_t)ncpu * 20) + 6 + 8;
	enum { EMPTY = 64 * 1024 };
	size_t out_len = len + 16 + opt_bytes + EMPTY;
	uint8_t *out = calloc(1, out_len), *p = out + len + 16;
	if (!out)
		return 1;
	memcpy(out, orig, len);
	uint64_t appended = len, size64 = opt_bytes;
	memcpy(out + done_at, &appended, 8);
	memcpy(out + len + 8, &size64, 8); /* section: id 0 (options), flags 0, string 0, size */
	for (unsigned b = 0; b < nbuf; b++) {
		char name[16];
		snprintf(name, sizeof name, "hostile_buf_%03u", b % 1000); /* 15 characters + NUL, as opt_bytes counts */
		uint16_t id = 3;
		uint32_t osz = 8 + 16 + 5 + 8 + ncpu * 20, page = 4096;
		memcpy(p, &id, 2);
		memcpy(p + 2, &osz, 4);
		p += 6;
		memcpy(p, &buffer_sec, 8);
		memcpy(p + 8, name, 16);
		memcpy(p + 24, "mono", 5);
		memcpy(p + 29, &page, 4);
		memcpy(p + 33, &ncpu, 4);
		p += 37;
		for (uint32_t c = 0; c < ncpu; c++) {
			uint64_t empty_at = len + 16 + opt_bytes, empty = EMPTY;
			memcpy(p, &c, 4);
			memcpy(p + 4, &empty_at, 8);
			memcpy(p + 12, &empty, 8);
			p += 20;
		}
	}
	uint32_t eight = 8;
	memcpy(p + 2, &eight, 4); /* DONE, the last section */
	char label[128];
	snprintf(label, sizeof label, "%s + %u buffers x %u CPUs of 64 KB each", base, nbuf, ncpu);
	size_t problems = 0;
	size_t refused = t->refused, failures = t->failures;
	long got = read_one(label, out, out_len, t, &problems);
	free(out);
	int rc = t->failures != failures;
	if (got < 0 || t->refused != refused) {
		printf("FAIL %s: refused; it should be read as far as the limits go\n", label);
		return 1;
	}
	if (!strstr(g_texts, "CPU data ranges in all buffers") || !strstr(g_texts, "the walk's buffers past")) {
		printf("FAIL %s: the range and memory limits are not among its problems\n", label);
		return 1;
	}
	printf("%s: read, %ld records, %zu problems\n", label, got, problems);
	return rc;
}

/* Declarations libtraceevent 1.7 mishandles, each written over a real one of the same length in an uncompressed
 * seed (fuzz:tracedat found them: it leaks what it parsed of them, which LeakSanitizer reports): a [..] group
 * after the first word, and the words its tokenizer turns into strings anywhere (LOCAL_PR_FMT, STA_PR_FMT).
 * The reader must refuse that event's format with a problem and read the rest; under ASan, leak nothing. */
static int hostile_formats(const char *base, const uint8_t *orig, size_t len, tally *t)
{
	static const char *const edits[][2] = {
		{"field:char prev_comm[16];", "field:char[16] prev_comm;"},
		{"field:__data_loc char[] filename;", "field:__data_loc []char filename;"},
		{"field:long prev_state;", "field:long STA_PR_FMT;"},
		{"field:u64 nmi_total_ts;", "field:u64 LOCAL_PR_FMT;"},
	};
	int rc = 0, made = 0;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return 1;
	for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
		size_t n = strlen(edits[e][0]);
		const uint8_t *at = len >= n ? memmem(orig, len, edits[e][0], n) : NULL;
		if (!at)
			continue; /* compressed formats, or an event this seed does not have */
		memcpy(buf, orig, len);
		memcpy(buf + (at - orig), edits[e][1], n);
		char label[160];
		snprintf(label, sizeof label, "%s with '%s'", base, edits[e][1]);
		size_t problems = 0, refused = t->refused;
		long got = read_one(label, buf, len, t, &problems);
		made++;
		if (got < 0 || t->refused != refused || !strstr(g_texts, "format")) {
			printf("FAIL %s: %s; it should be read with a problem about the event's format\n", label,
			       got < 0 ? "refused" : "no problem names the format");
			t->failures++;
			rc = 1;
		}
	}
	free(buf);
	if (made)
		printf("%s: %d hostile field declarations: format refused, the rest read\n", base, made);
	return rc;
}

int main(int argc, char **argv)
{
	size_t flips = 1000, write_n = 0;
	const char *write_dir = NULL;
	int first = 1;
	while (first < argc && argv[first][0] == '-') {
		if (strcmp(argv[first], "--flips") == 0 && first + 1 < argc) {
			flips = strtoul(argv[first + 1], NULL, 10);
			first += 2;
		} else if (strcmp(argv[first], "--write") == 0 && first + 2 < argc) {
			write_dir = argv[first + 1];
			write_n = strtoul(argv[first + 2], NULL, 10);
			first += 3;
		} else {
			fprintf(stderr, "usage: damage [--flips N] [--write DIR N] FILE.dat...\n");
			return 2;
		}
	}
	if (first >= argc) {
		fprintf(stderr, "usage: damage [--flips N] [--write DIR N] FILE.dat...\n");
		return 2;
	}
	tally t = {0};
	for (int f = first; f < argc; f++) {
		uint8_t *orig, *buf;
		size_t len, problems;
		if (read_file(argv[f], &orig, &len) != 0 || !(buf = malloc(len ? len : 1)))
			return 2;
		const char *base = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
		long whole = read_one(base, orig, len, &t, &problems);
		if (whole < 0 || problems) {
			printf("FAIL %s: the undamaged file does not read cleanly (%ld records, %zu problems)\n", base,
			       whole, problems);
			return 1;
		}
		/* Past the stream and memory limits: 5 x 4096 CPU ranges of 64 KB (once: it reads 256 MB). */
		static bool hostile_done;
		if (!hostile_done) {
			int h = hostile_buffers(base, orig, len, 5, 4096, &t);
			t.failures += h > 0;
			hostile_done = h >= 0;
		}
		hostile_formats(base, orig, len, &t);
		rng_state = 0x9e3779b97f4a7c15ull ^ len;
		size_t refused = t.refused, opened = t.opened, fails = t.failures;
		for (size_t i = 0; i < flips; i++) {
			char what[96], label[256];
			size_t n = mutate(orig, len, i, buf, what, sizeof what);
			snprintf(label, sizeof label, "%s, mutation %zu (%s)", base, i, what);
			if (write_dir && i < write_n) {
				char out[4096];
				snprintf(out, sizeof out, "%s/%s.%03zu.dat", write_dir, base, i);
				FILE *o = fopen(out, "wb");
				if (!o || fwrite(buf, 1, n, o) != n || fclose(o) != 0) {
					fprintf(stderr, "damage: %s: cannot write\n", out);
					return 2;
				}
			}
			long got = read_one(label, buf, n, &t, &problems);
			/* A cut that loses records says so. */
			if (n < len && got >= 0 && got < whole && problems == 0) {
				printf("FAIL %s: %ld of %ld records and no problem listed\n", label, got, whole);
				t.failures++;
			}
			if (n < len && got > whole) {
				printf("FAIL %s: a cut file gave more records (%ld) than the whole one (%ld)\n", label, got,
				       whole);
				t.failures++;
			}
		}
		printf("%s: %ld records; %zu mutations: %zu read (with or without problems), %zu refused with a "
		       "reason, %zu failures\n",
		       base, whole, flips, t.opened - opened, t.refused - refused, t.failures - fails);
		free(orig);
		free(buf);
	}
	printf("total: %zu reads, %zu opened (%zu listing problems), %zu refused, %zu failures; %llu field reads "
	       "compared by name and by location\n",
	       t.tried, t.opened, t.opened_with_problems, t.refused, t.failures, (unsigned long long)t.field_reads);
	return t.failures ? 1 : 0;
}
