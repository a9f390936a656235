/* test_etl_writer.c: the .etl writer against the reader: fixture round trips, synthetic header kinds, loss flags, wrapped files, damage. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit/check.h"
#include "etl/etl_format.h"
#include "hindsight/etl.h"
#include "hindsight/etl_writer.h"
#include "util/compat.h"

/*
 * Synthetic files cover what no public sample has (etl-format.md section 11):
 * compact, instance and WPP headers, loss flags, a wrapped circular file and
 * damage. Each is written by the writer and read back by the reader, so a
 * shared misunderstanding of the format would pass here; the fixture round
 * trips (real Windows files, read -> write -> read, byte-compared) and the
 * header-byte comparison against the real 32- and 64-bit headers guard that.
 */

#ifndef HS_TEST_FIXTURES_DIR
#error "HS_TEST_FIXTURES_DIR must name the shared ETL fixtures"
#endif

static char tmpdir[256];

static void tmp_path(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", tmpdir, name);
}

/* ---- collected records ---- */

typedef struct {
	uint8_t *raw;
	size_t len;
	uint16_t cpu;
	uint32_t buffer_index, offset_in_buffer;
	uint64_t buffer_offset;
	hs_etl_kind kind;
	uint8_t header_type, group, opcode;
	int64_t ts;
	uint64_t filetime;
	size_t order; /* position in the walk */
} rec;

typedef struct {
	rec *v;
	size_t n, cap;
} recs;

static int collect(const hs_etl_record *r, void *ctx)
{
	recs *rs = ctx;
	if (rs->n == rs->cap) {
		size_t nc = rs->cap ? rs->cap * 2 : 256;
		rec *v = realloc(rs->v, nc * sizeof(*v));
		if (!v)
			abort();
		rs->v = v;
		rs->cap = nc;
	}
	rec *x = &rs->v[rs->n];
	x->raw = malloc(r->raw_len ? r->raw_len : 1);
	if (!x->raw)
		abort();
	memcpy(x->raw, r->raw, r->raw_len);
	x->len = r->raw_len;
	x->cpu = r->cpu;
	x->buffer_index = r->buffer_index;
	x->offset_in_buffer = r->offset_in_buffer;
	x->buffer_offset = r->buffer_offset;
	x->kind = r->kind;
	x->header_type = r->header_type;
	x->group = r->group;
	x->opcode = r->opcode;
	x->ts = r->timestamp;
	x->filetime = r->filetime;
	x->order = rs->n++;
	return 0;
}

static void recs_free(recs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].raw);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static void walk(hs_etl *e, hs_etl_order order, recs *out)
{
	memset(out, 0, sizeof(*out));
	CHECK_EQ_INT(hs_etl_foreach(e, order, collect, out), HS_OK);
}

static bool is_logfile_header(const rec *r)
{
	return r->buffer_index == 0 && r->offset_in_buffer == HS_ETL_BUFFER_HEADER_SIZE && r->kind == HS_ETL_SYSTEM &&
	       r->group == 0 && r->opcode == 0;
}

/* Header-buffer records first, then per processor, each in walk order. */
static int lane_key(const rec *r)
{
	return r->buffer_index == 0 ? -1 : (int)r->cpu;
}

static int cmp_lane(const void *a, const void *b)
{
	const rec *x = a, *y = b;
	int kx = lane_key(x), ky = lane_key(y);
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* ---- fixtures ---- */

typedef struct {
	char **v;
	size_t n, cap;
} names;

static void find_etl(const char *dir, names *out)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "expected"))
			continue;
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(p, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			find_etl(p, out);
			continue;
		}
		size_t n = strlen(de->d_name);
		if (n < 4 || strcmp(de->d_name + n - 4, ".etl") != 0)
			continue;
		if (out->n == out->cap) {
			out->cap = out->cap ? out->cap * 2 : 32;
			out->v = realloc(out->v, out->cap * sizeof(char *));
			if (!out->v)
				abort();
		}
		out->v[out->n++] = strdup(p);
	}
	closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
	hs_etl_writer *w;
	hs_status st;
} copy_ctx;

static int copy_cb(const hs_etl_record *r, void *ctx)
{
	copy_ctx *c = ctx;
	c->st = hs_etl_writer_copy(c->w, r);
	return c->st != HS_OK;
}

/* The writer puts the header fields into the logfile header at these
 * payload ranges; everything else (name pointers, time zone) is zero. */
static void compare_header_bytes(const char *name, const rec *a, const rec *b, bool p64)
{
	const uint8_t *pa = a->raw + 0x20, *pb = b->raw + 0x20;
	uint32_t bt = p64 ? 0xF8 : 0xF0;
	bool ok = a->len == b->len && !memcmp(pa, pb, 0x24) && !memcmp(pa + 0x28, pb + 0x28, 0x38 - 0x28) &&
		  !memcmp(pa + bt, pb + bt, 32);
	/* The names after the struct, byte for byte. */
	uint32_t fixed = p64 ? 0x118 : 0x110;
	ok = ok && a->len >= 0x20 + fixed && !memcmp(pa + fixed, pb + fixed, a->len - 0x20 - fixed);
	if (!ok)
		fprintf(stderr, "%s: logfile header bytes differ from the source's\n", name);
	CHECK(ok);
}

static void round_trip(const char *path, bool compress, size_t *records_seen)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char label[512], out[512];
	snprintf(label, sizeof label, "%s (%s)", base, compress ? "compressed" : "plain");
	tmp_path(out, sizeof out, compress ? "rt-z.etl" : "rt.etl");

	hs_etl *in = NULL, *o = NULL;
	hs_status st = hs_etl_open(path, &in);
	CHECK_EQ_INT(st, HS_OK);
	if (st != HS_OK)
		return;
	const hs_etl_header *hi = hs_etl_get_header(in);
	CHECK(hi->valid);
	hs_etl_writer_opts opts;
	hs_etl_writer_opts_from(hi, &opts);
	bool same_mode = opts.compress == compress;
	opts.compress = compress;
	hs_etl_writer *w = NULL;
	CHECK_EQ_INT(hs_etl_writer_open(out, &opts, &w), HS_OK);
	if (!w) {
		hs_etl_close(in);
		return;
	}
	copy_ctx cc = {w, HS_OK};
	hs_etl_foreach(in, HS_ETL_FILE_ORDER, copy_cb, &cc);
	if (cc.st != HS_OK)
		fprintf(stderr, "%s: copy failed: %s\n", label, hs_strerror(cc.st));
	CHECK_EQ_INT(cc.st, HS_OK);
	CHECK_EQ_INT(hs_etl_writer_close(w), HS_OK);

	st = hs_etl_open(out, &o);
	CHECK_EQ_INT(st, HS_OK);
	if (st != HS_OK) {
		hs_etl_close(in);
		return;
	}
	/* The copy itself must be clean, whatever the source had. */
	for (size_t i = 0; i < hs_etl_problem_count(o); i++)
		fprintf(stderr, "%s: output problem at 0x%" PRIx64 ": %s\n", label, hs_etl_problem_at(o, i)->offset,
			hs_etl_problem_at(o, i)->message);
	CHECK_EQ_INT(hs_etl_problem_count(o), 0);

	const hs_etl_header *ho = hs_etl_get_header(o);
	CHECK(ho->valid);
	CHECK_EQ_INT(ho->buffer_size, opts.buffer_size);
	CHECK_EQ_INT(ho->buffer_size, hi->buffer_size);
	CHECK(!memcmp(ho->version, hi->version, 2));
	if (same_mode)
		CHECK(!memcmp(ho->version, hi->version, 4));
	CHECK_EQ_INT(ho->provider_version, hi->provider_version);
	CHECK_EQ_INT(ho->cpus, hi->cpus);
	CHECK_EQ_INT(ho->end_time, hi->end_time);
	CHECK_EQ_INT(ho->timer_resolution, hi->timer_resolution);
	CHECK_EQ_INT(ho->maximum_file_size, hi->maximum_file_size);
	CHECK_EQ_INT(ho->log_file_mode & ~0x04000000u, hi->log_file_mode & ~0x04000000u);
	CHECK_EQ_INT((ho->log_file_mode & 0x04000000u) != 0, compress);
	CHECK_EQ_INT(ho->buffers_written, hs_etl_buffer_count(o));
	CHECK_EQ_INT(ho->start_buffers, hi->start_buffers);
	CHECK_EQ_INT(ho->pointer_size, hi->pointer_size);
	CHECK_EQ_INT(ho->events_lost, hi->events_lost);
	CHECK_EQ_INT(ho->cpu_mhz, hi->cpu_mhz);
	CHECK_EQ_INT(ho->boot_time, hi->boot_time);
	CHECK_EQ_INT(ho->perf_freq, hi->perf_freq);
	CHECK_EQ_INT(ho->start_time, hi->start_time);
	CHECK_EQ_INT(ho->clock_type, hi->clock_type);
	CHECK_EQ_INT(ho->buffers_lost, hi->buffers_lost);
	CHECK_EQ_INT(ho->start_ts, hi->start_ts);
	CHECK_EQ_STR(ho->logger_name, hi->logger_name);
	CHECK_EQ_STR(ho->log_file_name, hi->log_file_name);

	/* Buffer layout: header first, then flushed per-CPU data buffers. */
	CHECK_EQ_INT(hs_etl_buffer_at(o, 0)->type, HS_ETL_BUFFER_TYPE_HEADER);
	CHECK(!hs_etl_buffer_at(o, 0)->compressed);
	for (size_t i = 1; i < hs_etl_buffer_count(o); i++) {
		const hs_etl_buffer *b = hs_etl_buffer_at(o, i);
		CHECK_EQ_INT(b->type, HS_ETL_BUFFER_TYPE_GENERIC);
		CHECK_EQ_INT(b->compressed, compress);
		CHECK_EQ_INT(b->sequence, i);
		CHECK(b->flags & HS_ETL_BUFFER_FLAG_PROC_INDEX);
		CHECK_EQ_INT(b->data_end % 8, 0);
	}

	recs a, b;
	walk(in, HS_ETL_FILE_ORDER, &a);
	walk(o, HS_ETL_FILE_ORDER, &b);
	CHECK_EQ_INT(a.n, b.n);
	*records_seen += a.n;
	if (a.n && b.n) {
		CHECK(is_logfile_header(&a.v[0]));
		CHECK(is_logfile_header(&b.v[0]));
		/* SYS32 vs SYS64 follows the logger's pointer size. */
		CHECK_EQ_INT(b.v[0].header_type, hi->pointer_size == 4 ? HS_ETL_HT_SYSTEM32 : HS_ETL_HT_SYSTEM64);
		CHECK_EQ_INT(a.v[0].header_type, b.v[0].header_type);
		if (same_mode)
			compare_header_bytes(label, &a.v[0], &b.v[0], hi->pointer_size != 4);
	}
	/* Every other record, byte for byte, in the same order per processor
	 * (header-buffer records stay in the header buffer). */
	if (a.n == b.n && a.n > 1) {
		qsort(a.v + 1, a.n - 1, sizeof(rec), cmp_lane);
		qsort(b.v + 1, b.n - 1, sizeof(rec), cmp_lane);
		size_t bad = 0;
		for (size_t i = 1; i < a.n; i++) {
			const rec *x = &a.v[i], *y = &b.v[i];
			if (lane_key(x) != lane_key(y) || x->len != y->len || memcmp(x->raw, y->raw, x->len) != 0 ||
			    x->filetime != y->filetime) {
				if (!bad)
					fprintf(stderr, "%s: record %zu (cpu %u) differs after the round trip\n", label, i,
						x->cpu);
				bad++;
			}
		}
		CHECK_EQ_INT(bad, 0);
	}
	recs_free(&a);
	recs_free(&b);

	/* Time order sees the same number of records in both. */
	recs ta, tb;
	walk(in, HS_ETL_TIME_ORDER, &ta);
	walk(o, HS_ETL_TIME_ORDER, &tb);
	CHECK_EQ_INT(ta.n, tb.n);
	recs_free(&ta);
	recs_free(&tb);
	hs_etl_close(in);
	hs_etl_close(o);
	unlink(out);
}

static void test_fixture_round_trips(void)
{
	names n = {0};
	struct stat st;
	if (stat(HS_TEST_FIXTURES_DIR, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "FAIL: the ETL fixtures are missing: %s (they live in ../shared/fixtures/etl)\n",
			HS_TEST_FIXTURES_DIR);
		CHECK(!"fixture directory present");
		return;
	}
	find_etl(HS_TEST_FIXTURES_DIR, &n);
	qsort(n.v, n.n, sizeof(char *), cmp_str);
	/* README.md lists 14 files; fewer means the fixtures are incomplete. */
	CHECK(n.n >= 14);
	size_t seen = 0, seen_z = 0;
	bool saw_32 = false;
	for (size_t i = 0; i < n.n; i++) {
		round_trip(n.v[i], false, &seen);
		round_trip(n.v[i], true, &seen_z);
		if (strstr(n.v[i], "smallEtlFile"))
			saw_32 = true;
		free(n.v[i]);
	}
	free(n.v);
	CHECK(saw_32);
	CHECK_EQ_INT(seen, seen_z);
	printf("round trips: %zu fixtures, %zu records each way\n", n.n, seen);
}

/* ---- synthetic records ---- */

static const hs_guid G1 = {0x11223344, 0x5566, 0x7788, {0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xF0, 0x01}};
static const hs_guid G2 = {0xCAFEF00D, 0x0102, 0x0304, {1, 2, 3, 4, 5, 6, 7, 8}};

static void put_guid(uint8_t *p, const hs_guid *g)
{
	hs_put32(p, g->data1);
	hs_put16(p + 4, g->data2);
	hs_put16(p + 6, g->data3);
	memcpy(p + 8, g->data4, 8);
}

static bool guid_eq(const hs_guid *a, const hs_guid *b)
{
	return a->data1 == b->data1 && a->data2 == b->data2 && a->data3 == b->data3 &&
	       !memcmp(a->data4, b->data4, 8);
}

static void fill_payload(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31u + i * 7u + 1u);
}

/* SYSTEM (1/2) and compact (3/4) kernel headers. */
static size_t mk_sys(uint8_t *p, uint8_t ht, uint8_t group, uint8_t opcode, uint16_t version, uint32_t tid,
		     uint32_t pid, int64_t ts, size_t plen, uint32_t seed)
{
	size_t hdr = (ht == HS_ETL_HT_COMPACT32 || ht == HS_ETL_HT_COMPACT64) ? 0x18 : 0x20;
	memset(p, 0, hdr);
	hs_put16(p, version);
	p[2] = ht;
	p[3] = 0xC0;
	hs_put16(p + 4, (uint16_t)(hdr + plen));
	p[6] = opcode;
	p[7] = group;
	hs_put32(p + 8, tid);
	hs_put32(p + 12, pid);
	hs_put64(p + 16, (uint64_t)ts);
	fill_payload(p + hdr, plen, seed);
	if (plen >= 4)
		hs_put32(p + hdr, seed);
	return hdr + plen;
}

static size_t mk_perf(uint8_t *p, uint8_t ht, uint16_t version, uint8_t group, uint8_t opcode, int64_t ts,
		      size_t plen, uint32_t seed)
{
	size_t hdr = 0x10 + ((version & 0x8000) ? 8 : 0) + 8 * ((version & 0x0700) >> 8);
	memset(p, 0, hdr);
	hs_put16(p, version);
	p[2] = ht;
	p[3] = 0xC0;
	hs_put16(p + 4, (uint16_t)(hdr + plen));
	p[6] = opcode;
	p[7] = group;
	hs_put64(p + 8, (uint64_t)ts);
	fill_payload(p + hdr, plen, seed);
	return hdr + plen;
}

typedef struct {
	uint16_t id;
	uint8_t version, channel, level, opcode;
	uint16_t task;
	uint64_t keywords;
} desc;

/* EVENT_HEADER with n_ext extended items of ext_size data bytes each. */
static size_t mk_eh(uint8_t *p, uint8_t ht, const hs_guid *g, desc d, uint32_t tid, uint32_t pid, int64_t ts,
		    int n_ext, size_t ext_size, size_t plen, uint32_t seed)
{
	memset(p, 0, 0x50);
	p[2] = ht;
	p[3] = 0xC0;
	hs_put16(p + 4, n_ext ? HS_ETL_EH_FLAG_EXTENDED_INFO : 0);
	hs_put32(p + 8, tid);
	hs_put32(p + 12, pid);
	hs_put64(p + 16, (uint64_t)ts);
	put_guid(p + 0x18, g);
	hs_put16(p + 0x28, d.id);
	p[0x2A] = d.version;
	p[0x2B] = d.channel;
	p[0x2C] = d.level;
	p[0x2D] = d.opcode;
	hs_put16(p + 0x2E, d.task);
	hs_put64(p + 0x30, d.keywords);
	size_t n = 0x50;
	for (int i = 0; i < n_ext; i++) {
		size_t isz = (8 + ext_size + 7) & ~(size_t)7;
		memset(p + n, 0, isz);
		hs_put16(p + n, (uint16_t)isz);
		hs_put16(p + n + 2, HS_ETL_EXT_EVENT_SCHEMA_TL);
		hs_put16(p + n + 4, i + 1 < n_ext ? 1 : 0);
		hs_put16(p + n + 6, (uint16_t)ext_size);
		fill_payload(p + n + 8, ext_size, seed + 100);
		n += isz;
	}
	fill_payload(p + n, plen, seed);
	n += plen;
	hs_put16(p, (uint16_t)n);
	return n;
}

/* EVENT_TRACE_HEADER (0x0A/0x14) or EVENT_INSTANCE_GUID_HEADER (0x0B/0x15). */
static size_t mk_classic(uint8_t *p, uint8_t ht, const hs_guid *g, uint8_t opcode, uint8_t level, uint16_t version,
			 uint32_t tid, uint32_t pid, int64_t ts, size_t plen, uint32_t seed)
{
	bool inst = ht == HS_ETL_HT_INSTANCE32 || ht == HS_ETL_HT_INSTANCE64;
	size_t hdr = inst ? 0x48 : 0x30;
	memset(p, 0, hdr);
	hs_put16(p, (uint16_t)(hdr + plen));
	p[2] = ht;
	p[3] = 0xC0;
	p[4] = opcode;
	p[5] = level;
	hs_put16(p + 6, version);
	hs_put32(p + 8, tid);
	hs_put32(p + 12, pid);
	hs_put64(p + 16, (uint64_t)ts);
	put_guid(p + 0x18, g);
	if (inst) {
		hs_put32(p + 0x30, 77);       /* InstanceId */
		hs_put32(p + 0x34, 76);       /* ParentInstanceId */
		put_guid(p + 0x38, &G2);      /* ParentGuid */
	}
	fill_payload(p + hdr, plen, seed);
	return hdr + plen;
}

/* WPP MESSAGE_TRACE_HEADER with the optional fields OptionFlags asks for. */
static size_t mk_msg(uint8_t *p, uint16_t opts, uint16_t msgnum, const hs_guid *g, int64_t ts, uint32_t tid,
		     uint32_t pid, size_t plen, uint32_t seed, size_t *hdr_out)
{
	size_t n = 8;
	p[2] = 0;
	p[3] = 0x90;
	hs_put16(p + 4, msgnum);
	hs_put16(p + 6, opts);
	if (opts & HS_ETL_MSG_SEQUENCE) {
		hs_put32(p + n, 4242);
		n += 4;
	}
	if (opts & HS_ETL_MSG_GUID) {
		put_guid(p + n, g);
		n += 16;
	} else if (opts & HS_ETL_MSG_COMPONENTID) {
		hs_put32(p + n, 9);
		n += 4;
	}
	if (opts & HS_ETL_MSG_TIMESTAMP) {
		hs_put64(p + n, (uint64_t)ts);
		n += 8;
	}
	if (opts & HS_ETL_MSG_SYSTEMINFO) {
		hs_put32(p + n, tid);
		hs_put32(p + n + 4, pid);
		n += 8;
	}
	*hdr_out = n;
	fill_payload(p + n, plen, seed);
	n += plen;
	hs_put16(p, (uint16_t)n);
	return n;
}

/* What a synthetic record must decode to. */
typedef struct {
	hs_etl_kind kind;
	uint8_t header_type;
	bool ptr64;
	uint8_t group, opcode, version, level;
	bool has_guid;
	hs_guid guid;
	uint16_t id;
	uint64_t keywords;
	uint32_t tid, pid;
	int64_t ts;
	size_t hdr, ext_len, plen;
	uint8_t bytes[600];
	size_t len;
	uint16_t cpu;
} expect;

static expect ex[64];
static size_t n_ex;

static expect *next_ex(void)
{
	expect *e = &ex[n_ex++];
	memset(e, 0, sizeof(*e));
	e->tid = e->pid = UINT32_MAX;
	return e;
}

static void build_kinds(void)
{
	n_ex = 0;
	expect *e;
	static const uint8_t sys_types[] = {HS_ETL_HT_SYSTEM32, HS_ETL_HT_SYSTEM64, HS_ETL_HT_COMPACT32,
					    HS_ETL_HT_COMPACT64};
	for (size_t i = 0; i < 4; i++) {
		e = next_ex();
		uint8_t ht = sys_types[i];
		bool compact = ht == HS_ETL_HT_COMPACT32 || ht == HS_ETL_HT_COMPACT64;
		/* CSwitch is the usual compact event (Thread group 5, opcode 36). */
		size_t len = mk_sys(e->bytes, ht, 0x05, 36, 2, 100 + (uint32_t)i, 200, 1000 + (int64_t)i, 24 + i,
				    (uint32_t)i);
		expect t = {.kind = compact ? HS_ETL_COMPACT : HS_ETL_SYSTEM, .header_type = ht,
			    .ptr64 = ht == HS_ETL_HT_SYSTEM64 || ht == HS_ETL_HT_COMPACT64, .group = 5, .opcode = 36,
			    .version = 2, .tid = 100 + (uint32_t)i, .pid = 200, .ts = 1000 + (int64_t)i,
			    .hdr = compact ? 0x18 : 0x20, .plen = 24 + i, .len = len, .cpu = (uint16_t)(i % 3)};
		memcpy(t.bytes, e->bytes, len);
		*e = t;
	}
	/* PERFINFO plain, with a PEBS index, with two PMC counters. */
	static const uint16_t pv[] = {2, 0x8000 | 3, 0x0200 | 4};
	for (size_t i = 0; i < 3; i++) {
		e = next_ex();
		uint8_t ht = i ? HS_ETL_HT_PERFINFO64 : HS_ETL_HT_PERFINFO32;
		size_t len = mk_perf(e->bytes, ht, pv[i], 0x0F, 46, 2000 + (int64_t)i, 16, 10 + (uint32_t)i);
		size_t hdr = 0x10 + ((pv[i] & 0x8000) ? 8 : 0) + 8 * ((pv[i] & 0x0700) >> 8);
		expect t = {.kind = HS_ETL_PERFINFO, .header_type = ht, .ptr64 = i != 0, .group = 0x0F, .opcode = 46,
			    .version = (uint8_t)(pv[i] & 0xFF), .ts = 2000 + (int64_t)i, .hdr = hdr, .plen = 16,
			    .len = len, .cpu = (uint16_t)i, .tid = UINT32_MAX, .pid = UINT32_MAX};
		memcpy(t.bytes, e->bytes, len);
		*e = t;
	}
	/* EVENT_HEADER: plain, one extended item, two chained items. */
	for (int i = 0; i < 3; i++) {
		e = next_ex();
		desc d = {.id = (uint16_t)(7 + i), .version = 1, .channel = 16, .level = (uint8_t)(2 + i), .opcode = 11,
			  .task = 300, .keywords = 0x8000000000000010ull << i};
		uint8_t ht = i == 1 ? HS_ETL_HT_EVENT_HEADER32 : HS_ETL_HT_EVENT_HEADER64;
		size_t len = mk_eh(e->bytes, ht, &G1, d, 55, 66, 3000 + i, i, 13, 40, 20 + (uint32_t)i);
		size_t ext = (size_t)i * ((8 + 13 + 7) & ~7);
		expect t = {.kind = HS_ETL_EVENT, .header_type = ht, .ptr64 = ht == HS_ETL_HT_EVENT_HEADER64,
			    .opcode = 11, .version = 1, .level = d.level, .has_guid = true, .guid = G1, .id = d.id,
			    .keywords = d.keywords, .tid = 55, .pid = 66, .ts = 3000 + i, .hdr = 0x50 + ext,
			    .ext_len = ext, .plen = 40, .len = len, .cpu = (uint16_t)(i % 2)};
		memcpy(t.bytes, e->bytes, len);
		*e = t;
	}
	/* Classic FULL and INSTANCE, both pointer sizes. */
	static const uint8_t ct[] = {HS_ETL_HT_FULL_HEADER32, HS_ETL_HT_FULL_HEADER64, HS_ETL_HT_INSTANCE32,
				     HS_ETL_HT_INSTANCE64};
	for (size_t i = 0; i < 4; i++) {
		e = next_ex();
		bool inst = i >= 2;
		size_t len = mk_classic(e->bytes, ct[i], &G2, (uint8_t)(30 + i), 4, 3, 7, 8, 4000 + (int64_t)i, 33,
					30 + (uint32_t)i);
		expect t = {.kind = inst ? HS_ETL_INSTANCE : HS_ETL_FULL, .header_type = ct[i],
			    .ptr64 = ct[i] == HS_ETL_HT_FULL_HEADER64 || ct[i] == HS_ETL_HT_INSTANCE64,
			    .opcode = (uint8_t)(30 + i), .level = 4, .version = 3, .has_guid = true, .guid = G2,
			    .tid = 7, .pid = 8, .ts = 4000 + (int64_t)i, .hdr = inst ? 0x48 : 0x30, .plen = 33,
			    .len = len, .cpu = 2};
		memcpy(t.bytes, e->bytes, len);
		*e = t;
	}
	/* WPP messages: every optional field, none, and the component-id form. */
	static const uint16_t mo[] = {
		HS_ETL_MSG_GUID | HS_ETL_MSG_TIMESTAMP | HS_ETL_MSG_SYSTEMINFO,
		HS_ETL_MSG_SEQUENCE | HS_ETL_MSG_GUID | HS_ETL_MSG_TIMESTAMP | HS_ETL_MSG_SYSTEMINFO |
			HS_ETL_MSG_POINTER64,
		0,
		HS_ETL_MSG_SEQUENCE | HS_ETL_MSG_COMPONENTID | HS_ETL_MSG_TIMESTAMP,
	};
	for (size_t i = 0; i < 4; i++) {
		e = next_ex();
		size_t hdr = 0;
		size_t len = mk_msg(e->bytes, mo[i], (uint16_t)(10 + i), &G1, 5000 + (int64_t)i, 31, 32, 12 + i,
				    40 + (uint32_t)i, &hdr);
		expect t = {.kind = HS_ETL_MESSAGE, .header_type = 0, .ptr64 = (mo[i] & HS_ETL_MSG_POINTER64) != 0,
			    .has_guid = (mo[i] & HS_ETL_MSG_GUID) != 0, .guid = G1, .id = (uint16_t)(10 + i),
			    .tid = (mo[i] & HS_ETL_MSG_SYSTEMINFO) ? 31 : UINT32_MAX,
			    .pid = (mo[i] & HS_ETL_MSG_SYSTEMINFO) ? 32 : UINT32_MAX,
			    .ts = (mo[i] & HS_ETL_MSG_TIMESTAMP) ? 5000 + (int64_t)i : 0, .hdr = hdr, .plen = 12 + i,
			    .len = len, .cpu = (uint16_t)i};
		if (!t.has_guid)
			memset(&t.guid, 0, sizeof t.guid);
		memcpy(t.bytes, e->bytes, len);
		*e = t;
	}
}

typedef struct {
	size_t next, bad;
} kinds_ctx;

static int check_kind(const hs_etl_record *r, void *ctx)
{
	kinds_ctx *k = ctx;
	if (r->buffer_index == 0)
		return 0;
	if (k->next >= n_ex) {
		k->bad++;
		return 0;
	}
	const expect *e = &ex[k->next++];
	bool ok = r->kind == e->kind && r->ptr64 == e->ptr64 && r->raw_len == e->len &&
		  !memcmp(r->raw, e->bytes, e->len) && r->tid == e->tid && r->pid == e->pid && r->timestamp == e->ts &&
		  r->payload == r->raw + e->hdr && r->payload_len == e->plen && r->ext_len == e->ext_len &&
		  r->has_guid == e->has_guid && r->cpu == e->cpu;
	if (e->kind != HS_ETL_MESSAGE)
		ok = ok && r->header_type == e->header_type;
	switch (e->kind) {
	case HS_ETL_SYSTEM:
	case HS_ETL_COMPACT:
	case HS_ETL_PERFINFO:
		ok = ok && r->group == e->group && r->opcode == e->opcode && r->version == e->version;
		break;
	case HS_ETL_EVENT:
		ok = ok && guid_eq(&r->guid, &e->guid) && r->id == e->id && r->level == e->level &&
		     r->keywords == e->keywords && r->opcode == e->opcode && r->version == e->version &&
		     (e->ext_len == 0 ? r->ext == NULL : r->ext == r->raw + 0x50);
		break;
	case HS_ETL_FULL:
	case HS_ETL_INSTANCE:
		ok = ok && guid_eq(&r->guid, &e->guid) && r->opcode == e->opcode && r->level == e->level &&
		     r->version == e->version;
		break;
	case HS_ETL_MESSAGE:
		ok = ok && r->id == e->id && (!e->has_guid || guid_eq(&r->guid, &e->guid));
		break;
	}
	if (!ok) {
		fprintf(stderr, "synthetic record %zu (%s) decoded wrongly\n", k->next - 1,
			hs_etl_header_type_name(e->header_type));
		k->bad++;
	}
	return 0;
}

/* Every header kind no sample has, on three processors, plain and compressed. */
static void test_synthetic_kinds(void)
{
	build_kinds();
	for (int z = 0; z < 2; z++) {
		char path[512];
		tmp_path(path, sizeof path, "kinds.etl");
		hs_etl_writer_opts o;
		hs_etl_writer_opts_default(&o);
		o.compress = z;
		o.logger_name = "kinds";
		hs_etl_writer *w = NULL;
		CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_OK);
		if (!w)
			return;
		for (size_t i = 0; i < n_ex; i++)
			CHECK_EQ_INT(hs_etl_writer_add_raw(w, ex[i].cpu, ex[i].bytes, ex[i].len), HS_OK);
		CHECK_EQ_INT(hs_etl_writer_close(w), HS_OK);
		hs_etl *e = NULL;
		CHECK_EQ_INT(hs_etl_open(path, &e), HS_OK);
		if (!e)
			return;
		CHECK_EQ_INT(hs_etl_problem_count(e), 0);
		/* One buffer per processor, flushed in processor order at close:
		 * file order is cpu 0's records, then cpu 1's, then cpu 2's and 3's. */
		kinds_ctx k = {0};
		expect saved[64];
		memcpy(saved, ex, sizeof saved);
		size_t m = 0;
		for (uint16_t cpu = 0; cpu < 4; cpu++)
			for (size_t i = 0; i < n_ex; i++)
				if (saved[i].cpu == cpu)
					ex[m++] = saved[i];
		hs_etl_foreach(e, HS_ETL_FILE_ORDER, check_kind, &k);
		CHECK_EQ_INT(k.bad, 0);
		CHECK_EQ_INT(k.next, n_ex);
		memcpy(ex, saved, sizeof saved);
		CHECK_EQ_INT(hs_etl_buffer_count(e), 5);
		CHECK_EQ_INT(hs_etl_get_header(e)->cpus, 4);
		CHECK_EQ_STR(hs_etl_get_header(e)->logger_name, "kinds");
		CHECK_EQ_STR(hs_etl_header_type_name(HS_ETL_HT_COMPACT64), "COMPACT64");
		CHECK_EQ_STR(hs_etl_header_type_name(HS_ETL_HT_INSTANCE32), "INSTANCE32");
		hs_etl_close(e);
		unlink(path);
	}
}

/* ---- loss flags ---- */

static void test_lost_flags(void)
{
	char path[512];
	tmp_path(path, sizeof path, "lost.etl");
	hs_etl_writer_opts o;
	hs_etl_writer_opts_default(&o);
	o.buffer_size = 1024;
	o.events_lost = 5;
	o.buffers_lost = 2;
	hs_etl_writer *w = NULL;
	CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_OK);
	if (!w)
		return;
	uint8_t b[256];
	/* cpu 0: flag only the second of three buffers; cpu 1: its first. */
	CHECK_EQ_INT(hs_etl_writer_set_buffer_flags(w, 1, HS_ETL_BUFFER_FLAG_BUFFER_LOST), HS_OK);
	for (int buf = 0; buf < 3; buf++) {
		if (buf == 1)
			CHECK_EQ_INT(hs_etl_writer_set_buffer_flags(w, 0, HS_ETL_BUFFER_FLAG_EVENTS_LOST), HS_OK);
		for (int i = 0; i < 4; i++) {
			size_t n = mk_sys(b, HS_ETL_HT_SYSTEM64, 3, 1, 2, 1, 1, buf * 10 + i, 40, (uint32_t)i);
			CHECK_EQ_INT(hs_etl_writer_add_raw(w, 0, b, n), HS_OK);
			CHECK_EQ_INT(hs_etl_writer_add_raw(w, 1, b, n), HS_OK);
		}
		CHECK_EQ_INT(hs_etl_writer_flush(w, 0), HS_OK);
		CHECK_EQ_INT(hs_etl_writer_flush(w, 1), HS_OK);
	}
	CHECK_EQ_INT(hs_etl_writer_buffers(w), 6);
	CHECK_EQ_INT(hs_etl_writer_close(w), HS_OK);
	hs_etl *e = NULL;
	CHECK_EQ_INT(hs_etl_open(path, &e), HS_OK);
	if (!e)
		return;
	CHECK_EQ_INT(hs_etl_problem_count(e), 0);
	CHECK_EQ_INT(hs_etl_lost_flagged_buffers(e), 2);
	CHECK_EQ_INT(hs_etl_get_header(e)->events_lost, 5);
	CHECK_EQ_INT(hs_etl_get_header(e)->buffers_lost, 2);
	CHECK_EQ_INT(hs_etl_buffer_count(e), 7);
	int events_lost = 0, buffer_lost = 0;
	for (size_t i = 1; i < hs_etl_buffer_count(e); i++) {
		const hs_etl_buffer *bb = hs_etl_buffer_at(e, i);
		if (bb->flags & HS_ETL_BUFFER_FLAG_EVENTS_LOST) {
			events_lost++;
			CHECK_EQ_INT(bb->cpu, 0);
			CHECK_EQ_INT(bb->sequence, 3); /* cpu 0's second buffer */
		}
		if (bb->flags & HS_ETL_BUFFER_FLAG_BUFFER_LOST) {
			buffer_lost++;
			CHECK_EQ_INT(bb->cpu, 1);
			CHECK_EQ_INT(bb->sequence, 2); /* cpu 1's first buffer */
		}
	}
	CHECK_EQ_INT(events_lost, 1);
	CHECK_EQ_INT(buffer_lost, 1);
	hs_etl_close(e);
	unlink(path);
}

/* ---- wrapped circular file ---- */

static void test_wrapped_circular(void)
{
	for (int z = 0; z < 2; z++) {
		char path[512];
		tmp_path(path, sizeof path, "wrapped.etl");
		hs_etl_writer_opts o;
		hs_etl_writer_opts_default(&o);
		o.buffer_size = 1024;
		o.cpus = 3;
		o.log_file_mode = 0x2; /* EVENT_TRACE_FILE_MODE_CIRCULAR */
		o.compress = z;
		o.file_order_rotate = 7;
		hs_etl_writer *w = NULL;
		CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_OK);
		if (!w)
			return;
		/* Unique, increasing timestamps spread over three processors with
		 * uneven rates, so per-CPU buffers fill at different times. */
		enum { N = 400 };
		uint8_t b[256];
		for (uint32_t i = 0; i < N; i++) {
			uint16_t cpu = (uint16_t)(i % 7 < 4 ? 0 : i % 7 < 6 ? 1 : 2);
			size_t n = mk_sys(b, HS_ETL_HT_SYSTEM64, 5, 36, 2, cpu, 4, 1000 + 10 * (int64_t)i, 8 + i % 50, i);
			CHECK_EQ_INT(hs_etl_writer_add_raw(w, cpu, b, n), HS_OK);
		}
		uint32_t data = hs_etl_writer_buffers(w);
		CHECK_EQ_INT(hs_etl_writer_close(w), HS_OK);
		hs_etl *e = NULL;
		CHECK_EQ_INT(hs_etl_open(path, &e), HS_OK);
		if (!e)
			return;
		CHECK_EQ_INT(hs_etl_problem_count(e), 0);
		size_t nb = hs_etl_buffer_count(e);
		uint32_t total = (uint32_t)nb - 1;
		CHECK(total > data); /* the buffers flushed at close come last */
		CHECK(total > 7);
		/* File position p (1..) holds sequence ((p - 1 + 7) mod n) + 1. */
		CHECK_EQ_INT(hs_etl_buffer_at(e, 0)->sequence, 0);
		for (size_t p = 1; p < nb; p++)
			CHECK_EQ_INT(hs_etl_buffer_at(e, p)->sequence, ((p - 1 + 7) % total) + 1);

		recs f, t;
		walk(e, HS_ETL_FILE_ORDER, &f);
		walk(e, HS_ETL_TIME_ORDER, &t);
		CHECK_EQ_INT(f.n, N + 1);
		CHECK_EQ_INT(t.n, N + 1);
		/* FILE_ORDER is the layout: buffer indexes never go back, and the
		 * timestamps do go back somewhere (otherwise nothing wrapped). */
		size_t back = 0;
		for (size_t i = 1; i < f.n; i++) {
			CHECK(f.v[i].buffer_index >= f.v[i - 1].buffer_index);
			if (f.v[i].ts < f.v[i - 1].ts)
				back++;
		}
		CHECK(back > 0);
		/* TIME_ORDER: nondecreasing, and since every timestamp is unique,
		 * exactly the order the records were written in. */
		size_t bad = 0;
		for (size_t i = 1; i < t.n; i++) {
			if (t.v[i].ts < t.v[i - 1].ts)
				bad++;
			if (t.v[i].ts != 1000 + 10 * (int64_t)(i - 1))
				bad++;
		}
		CHECK_EQ_INT(bad, 0);
		recs_free(&f);
		recs_free(&t);
		hs_etl_close(e);
		unlink(path);
	}
}

/* ---- 32-bit logger ---- */

static void test_pointer32(void)
{
	for (int z = 0; z < 2; z++) {
		char path[512];
		tmp_path(path, sizeof path, "p32.etl");
		hs_etl_writer_opts o;
		hs_etl_writer_opts_default(&o);
		o.pointer_size = 4;
		o.compress = z;
		o.perf_freq = 3579545;
		o.start_time = 133000000000000000ull;
		o.boot_time = 132999000000000000ull;
		o.start_ts = 123456789;
		o.clock_type = 1;
		o.buffers_lost = 9;
		o.events_lost = 8;
		o.cpu_mhz = 2400;
		o.logger_name = "Logger \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* é € and an astral character */
		o.log_file_name = "C:\\t\\x.etl";
		hs_etl_writer *w = NULL;
		CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_OK);
		if (!w)
			return;
		uint8_t b[128];
		size_t n = mk_sys(b, HS_ETL_HT_SYSTEM32, 3, 1, 2, 1, 2, 123456789 + 3579545, 16, 1);
		CHECK_EQ_INT(hs_etl_writer_add_raw(w, 0, b, n), HS_OK);
		CHECK_EQ_INT(hs_etl_writer_close(w), HS_OK);
		hs_etl *e = NULL;
		CHECK_EQ_INT(hs_etl_open(path, &e), HS_OK);
		if (!e)
			return;
		CHECK_EQ_INT(hs_etl_problem_count(e), 0);
		const hs_etl_header *h = hs_etl_get_header(e);
		CHECK(h->valid);
		CHECK_EQ_INT(h->pointer_size, 4);
		CHECK_EQ_INT(h->perf_freq, 3579545);
		CHECK_EQ_INT(h->start_time, 133000000000000000ull);
		CHECK_EQ_INT(h->boot_time, 132999000000000000ull);
		CHECK_EQ_INT(h->start_ts, 123456789);
		CHECK_EQ_INT(h->buffers_lost, 9);
		CHECK_EQ_INT(h->events_lost, 8);
		CHECK_EQ_INT(h->cpu_mhz, 2400);
		CHECK_EQ_INT(h->version[2], z ? 2 : 1);
		CHECK_EQ_STR(h->logger_name, o.logger_name);
		CHECK_EQ_STR(h->log_file_name, o.log_file_name);
		recs r;
		walk(e, HS_ETL_FILE_ORDER, &r);
		CHECK_EQ_INT(r.n, 2);
		if (r.n == 2) {
			/* SYS32 header event with the 0x110-byte struct, then the names:
			 * "Logger " + 2 BMP chars + a surrogate pair + NUL = 12 units,
			 * "C:\t\x.etl" + NUL = 11 units. */
			CHECK_EQ_INT(r.v[0].header_type, HS_ETL_HT_SYSTEM32);
			CHECK_EQ_INT(r.v[0].len, 0x20 + 0x110 + 2 * (12 + 11));
			const uint8_t *p = r.v[0].raw + 0x20;
			CHECK_EQ_INT(hs_le32(p + 0x2C), 4);
			CHECK_EQ_INT(hs_le64(p + 0xF0), 132999000000000000ull);
			CHECK_EQ_INT(hs_le64(p + 0xF8), 3579545);
			CHECK_EQ_INT(hs_le64(p + 0x100), 133000000000000000ull);
			CHECK_EQ_INT(hs_le32(p + 0x108), 1);
			CHECK_EQ_INT(hs_le32(p + 0x10C), 9);
			/* One second after start, in FILETIME. */
			CHECK_EQ_INT(r.v[1].filetime, 133000000000000000ull + 10000000u);
		}
		recs_free(&r);
		hs_etl_close(e);
		unlink(path);
	}
}

/* ---- API edges ---- */

static void test_api_edges(void)
{
	char path[512];
	tmp_path(path, sizeof path, "edges.etl");
	hs_etl_writer_opts o;
	hs_etl_writer *w = NULL;
	hs_etl_writer_opts_default(&o);
	o.buffer_size = 1000; /* not a multiple of 8 */
	CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_EINVAL);
	o.buffer_size = 512;
	CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_EINVAL);
	hs_etl_writer_opts_default(&o);
	o.pointer_size = 2;
	CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_EINVAL);
	/* Names too long for the header buffer. */
	hs_etl_writer_opts_default(&o);
	o.buffer_size = 1024;
	char longname[800];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	o.logger_name = longname;
	CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_ELIMIT);
	/* A directory that does not exist. */
	hs_etl_writer_opts_default(&o);
	CHECK_EQ_INT(hs_etl_writer_open("/nonexistent-dir-hs/x.etl", &o, &w), HS_ENOENT);

	hs_etl_writer_opts_default(&o);
	o.buffer_size = 1024;
	CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_OK);
	if (!w)
		return;
	uint8_t big[1024];
	size_t n = mk_sys(big, HS_ETL_HT_SYSTEM64, 3, 1, 2, 1, 2, 5, 1024 - 0x48 - 0x20, 1);
	CHECK_EQ_INT(n, 1024 - 0x48);
	CHECK_EQ_INT(hs_etl_writer_add_raw(w, 0, big, n), HS_OK); /* exactly one buffer's room */
	n = mk_sys(big, HS_ETL_HT_SYSTEM64, 3, 1, 2, 1, 2, 5, 1024 - 0x48 - 0x20 + 1, 1);
	CHECK_EQ_INT(hs_etl_writer_add_raw(w, 0, big, n), HS_ELIMIT);
	CHECK_EQ_INT(hs_etl_writer_add_raw(w, 2048, big, 40), HS_EINVAL);
	CHECK_EQ_INT(hs_etl_writer_add_raw(w, 0, big, 0), HS_EINVAL);
	memset(big, 0xFF, 8);
	CHECK_EQ_INT(hs_etl_writer_add_raw(w, 0, big, 8), HS_EINVAL);
	/* The final name appears only at close. */
	CHECK(access(path, F_OK) != 0);
	n = mk_sys(big, HS_ETL_HT_SYSTEM64, 0, 5, 2, 1, 2, 5, 16, 1);
	CHECK_EQ_INT(hs_etl_writer_add_header_raw(w, big, n), HS_OK);
	CHECK_EQ_INT(hs_etl_writer_close(w), HS_OK);
	CHECK(access(path, F_OK) == 0);
	hs_etl *e = NULL;
	CHECK_EQ_INT(hs_etl_open(path, &e), HS_OK);
	if (e) {
		recs r;
		walk(e, HS_ETL_FILE_ORDER, &r);
		CHECK_EQ_INT(r.n, 3);
		if (r.n == 3) {
			CHECK_EQ_INT(r.v[1].buffer_index, 0); /* the extension record stays in buffer 0 */
			CHECK_EQ_INT(r.v[1].opcode, 5);
			CHECK_EQ_INT(r.v[2].len, 1024 - 0x48);
		}
		CHECK_EQ_INT(hs_etl_problem_count(e), 0);
		recs_free(&r);
		hs_etl_close(e);
	}
	unlink(path);

	/* discard leaves nothing behind, not even the temporary file. */
	CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_OK);
	if (w) {
		CHECK_EQ_INT(hs_etl_writer_add_raw(w, 0, big, n), HS_OK);
		hs_etl_writer_discard(w);
	}
	CHECK(access(path, F_OK) != 0);
	DIR *d = opendir(tmpdir);
	size_t leftovers = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".tmp-"))
			leftovers++;
	if (d)
		closedir(d);
	CHECK_EQ_INT(leftovers, 0);
}

/* ---- damage ---- */

/* A record of the damage tests: payload starts with a unique id. */
typedef struct {
	uint32_t id;
	uint32_t buffer_index, offset_in_buffer;
	uint64_t buffer_offset;
	size_t len;
} placed;

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)n);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

typedef struct {
	uint32_t *ids;
	size_t n;
	bool foreign; /* a record that is not one of ours */
	size_t n_base;
} id_walk;

static int collect_id(const hs_etl_record *r, void *ctx)
{
	id_walk *w = ctx;
	if (r->buffer_index == 0 && r->offset_in_buffer == HS_ETL_BUFFER_HEADER_SIZE)
		return 0; /* the logfile header */
	if (r->kind != HS_ETL_SYSTEM || r->payload_len < 4 || hs_le32(r->payload) >= w->n_base) {
		w->foreign = true;
		return 0;
	}
	w->ids[w->n++] = hs_le32(r->payload);
	return 0;
}

enum { DAMAGE_N = 300 };

/* How strictly check_damaged judges what came back. */
enum {
	LENIENT, /* only: every wanted id is there (garbage may decode as anything) */
	STRICT,  /* also: no unwanted id, none twice */
	EXACT,   /* also: no record that is not one of ours */
};
#define ANY_OFFSET UINT64_MAX

/* Reads damaged bytes in both orders. `want` says which ids must come back
 * (1), must not (0) or may (2). A problem must be reported at `problem_at`. */
static void check_damaged(const char *what, const uint8_t *bytes, size_t len, const uint8_t *want, int mode,
			  uint64_t problem_at)
{
	hs_etl *e = NULL;
	hs_status st = hs_etl_open_memory(bytes, len, &e);
	CHECK_EQ_INT(st, HS_OK);
	if (!e) {
		fprintf(stderr, "damage '%s': not opened\n", what);
		return;
	}
	for (int order = 0; order < 2; order++) {
		id_walk iw = {calloc(4 * DAMAGE_N, sizeof(uint32_t)), 0, false, DAMAGE_N};
		hs_etl_foreach(e, order ? HS_ETL_TIME_ORDER : HS_ETL_FILE_ORDER, collect_id, &iw);
		uint8_t got[DAMAGE_N] = {0};
		size_t dup = 0, missing = 0, extra = 0;
		for (size_t i = 0; i < iw.n; i++) {
			if (got[iw.ids[i]])
				dup++;
			got[iw.ids[i]] = 1;
		}
		for (size_t i = 0; i < DAMAGE_N; i++) {
			if (want[i] == 1 && !got[i])
				missing++;
			if (want[i] == 0 && got[i])
				extra++;
		}
		if (mode == LENIENT)
			dup = extra = 0;
		bool foreign = mode == EXACT && iw.foreign;
		if (missing || extra || dup || foreign)
			fprintf(stderr, "damage '%s' (%s order): %zu missing, %zu unexpected, %zu twice%s\n", what,
				order ? "time" : "file", missing, extra, dup, foreign ? ", foreign records" : "");
		CHECK_EQ_INT(missing, 0);
		CHECK_EQ_INT(extra, 0);
		CHECK_EQ_INT(dup, 0);
		CHECK(!foreign);
		free(iw.ids);
	}
	bool found = problem_at == ANY_OFFSET && hs_etl_problem_count(e) > 0;
	for (size_t i = 0; i < hs_etl_problem_count(e); i++)
		if (hs_etl_problem_at(e, i)->offset == problem_at)
			found = true;
	if (!found) {
		fprintf(stderr, "damage '%s': no problem reported at 0x%" PRIx64 "; got:\n", what, problem_at);
		for (size_t i = 0; i < hs_etl_problem_count(e); i++)
			fprintf(stderr, "  0x%" PRIx64 ": %s\n", hs_etl_problem_at(e, i)->offset,
				hs_etl_problem_at(e, i)->message);
	}
	CHECK(found);
	hs_etl_close(e);
}

static void write_damage_base(const char *path, bool compress, placed *pl)
{
	hs_etl_writer_opts o;
	hs_etl_writer_opts_default(&o);
	o.buffer_size = 1024;
	o.cpus = 2;
	o.compress = compress;
	hs_etl_writer *w = NULL;
	CHECK_EQ_INT(hs_etl_writer_open(path, &o, &w), HS_OK);
	if (!w)
		return;
	uint8_t b[256];
	for (uint32_t i = 0; i < DAMAGE_N; i++) {
		size_t n = mk_sys(b, HS_ETL_HT_SYSTEM64, 3, 1, 2, 1, 2, 100 + (int64_t)i, 4 + (i * 13) % 90, i);
		CHECK_EQ_INT(hs_etl_writer_add_raw(w, (uint16_t)(i % 3 == 0), b, n), HS_OK);
	}
	CHECK_EQ_INT(hs_etl_writer_close(w), HS_OK);
	hs_etl *e = NULL;
	CHECK_EQ_INT(hs_etl_open(path, &e), HS_OK);
	if (!e)
		return;
	CHECK_EQ_INT(hs_etl_problem_count(e), 0);
	recs r;
	walk(e, HS_ETL_FILE_ORDER, &r);
	CHECK_EQ_INT(r.n, DAMAGE_N + 1);
	for (size_t i = 1; i < r.n; i++) {
		uint32_t id = hs_le32(r.v[i].raw + 0x20);
		if (id < DAMAGE_N)
			pl[id] = (placed){id, r.v[i].buffer_index, r.v[i].offset_in_buffer, r.v[i].buffer_offset, r.v[i].len};
	}
	recs_free(&r);
	hs_etl_close(e);
}

/* want[i] = 1 for records in buffers other than `skip_buffer`, and for
 * those in it before offset `keep_before` (in-buffer offset). */
static void want_all_but(const placed *pl, uint8_t *want, uint32_t skip_buffer, uint32_t keep_before, uint8_t other)
{
	for (size_t i = 0; i < DAMAGE_N; i++) {
		if (pl[i].buffer_index != skip_buffer)
			want[i] = 1;
		else
			want[i] = pl[i].offset_in_buffer < keep_before ? 1 : other;
	}
}

static void test_damage(void)
{
	char path[512];
	tmp_path(path, sizeof path, "damage.etl");
	placed pl[DAMAGE_N];
	memset(pl, 0, sizeof pl);
	write_damage_base(path, false, pl);
	size_t len = 0;
	uint8_t *base = slurp(path, &len);
	CHECK(base != NULL);
	if (!base)
		return;
	uint8_t *d = malloc(len);
	uint8_t want[DAMAGE_N];
	const uint32_t B = 1024;
	uint32_t nbuf = (uint32_t)(len / B);
	CHECK(nbuf > 10);
	CHECK_EQ_INT(len % B, 0);

	/* Pick buffer k in the middle and its third record. */
	uint32_t k = nbuf / 2;
	size_t j = DAMAGE_N, j_prev = DAMAGE_N;
	uint32_t seen = 0;
	for (size_t i = 0; i < DAMAGE_N; i++)
		if (pl[i].buffer_index == k && seen++ == 2)
			j = i;
	for (size_t i = 0; i < DAMAGE_N; i++)
		if (pl[i].buffer_index == k && pl[i].offset_in_buffer < pl[j].offset_in_buffer &&
		    (j_prev == DAMAGE_N || pl[i].offset_in_buffer > pl[j_prev].offset_in_buffer))
			j_prev = i;
	CHECK(j < DAMAGE_N);
	if (j >= DAMAGE_N)
		goto out;
	uint64_t koff = (uint64_t)k * B;
	uint64_t joff = koff + pl[j].offset_in_buffer;

	/* Not an .etl at all (text): refused, not read as one damaged buffer. */
	static const char text[] = "# yaml-language-server: this is a rules file, not a trace, and long enough "
				   "to hold a buffer header";
	hs_etl *t = NULL;
	CHECK_EQ_INT(hs_etl_open_memory((const uint8_t *)text, sizeof text, &t), HS_EINVAL);
	CHECK(t == NULL);

	/* Truncated inside the header buffer: nothing but a problem at 0. */
	memset(want, 0, sizeof want);
	check_damaged("truncated in buffer 0", base, 0x100, want, EXACT, 0);

	/* Truncated at the end of buffer k: buffers up to k, and the header's
	 * BuffersWritten no longer matches (reported at 0). */
	for (size_t i = 0; i < DAMAGE_N; i++)
		want[i] = pl[i].buffer_index <= k;
	check_damaged("truncated at a buffer boundary", base, koff + B, want, EXACT, 0);

	/* Truncated in the middle of record j of buffer k: the records of k
	 * before j are whole and must come back; the cut is reported at k. */
	for (size_t i = 0; i < DAMAGE_N; i++)
		want[i] = pl[i].buffer_index < k || (pl[i].buffer_index == k && pl[i].offset_in_buffer < pl[j].offset_in_buffer);
	check_damaged("truncated mid-record", base, joff + pl[j].len / 2, want, EXACT, koff);
	/* ... and the record cut in two is reported where it starts. */
	check_damaged("truncated mid-record (record offset)", base, joff + pl[j].len / 2, want, EXACT, joff);

	/* Truncated inside buffer k's header. */
	for (size_t i = 0; i < DAMAGE_N; i++)
		want[i] = pl[i].buffer_index < k;
	check_damaged("truncated in a buffer header", base, koff + 0x20, want, EXACT, koff);

	/* Record j's size made huge: the rest of buffer k is skipped. */
	memcpy(d, base, len);
	hs_put16(d + joff + 4, 0xFFF0);
	want_all_but(pl, want, k, pl[j].offset_in_buffer, 0);
	check_damaged("record size too large", d, len, want, EXACT, joff);

	/* Record j's size made smaller than its header. */
	memcpy(d, base, len);
	hs_put16(d + joff + 4, 8);
	check_damaged("record size too small", d, len, want, EXACT, joff);

	/* Record j's marker byte cleared: not a trace header. */
	memcpy(d, base, len);
	d[joff + 3] = 0x00;
	check_damaged("record marker cleared", d, len, want, EXACT, joff);

	/* Record j_prev's size grown by 8 (stays in the buffer): j_prev now
	 * swallows the start of j, so records of k from j on may be garbage
	 * or gone, but never other buffers'. */
	memcpy(d, base, len);
	hs_put16(d + koff + pl[j_prev].offset_in_buffer + 4, (uint16_t)(pl[j_prev].len + 8));
	want_all_but(pl, want, k, pl[j].offset_in_buffer, 2);
	want[j_prev] = 1;
	check_damaged("record size off by 8", d, len, want, STRICT, koff + pl[j].offset_in_buffer + 8);

	/* Buffer k's Offset (end of data) past its size: the reader reads k up
	 * to its end (the 0xFF filler stops it), so k's records may come back. */
	memcpy(d, base, len);
	hs_put32(d + koff + 0x30, 0xFFFF);
	want_all_but(pl, want, k, 0, 2);
	check_damaged("buffer data end too large", d, len, want, EXACT, koff);

	/* Buffer k's Offset below the header size: k is skipped. */
	memcpy(d, base, len);
	hs_put32(d + koff + 0x30, 0x10);
	want_all_but(pl, want, k, 0, 0);
	check_damaged("buffer data end too small", d, len, want, EXACT, koff);

	/* Buffer k's BufferSize damaged four ways: the reader must still find
	 * every other buffer, and since the header says what size the buffers
	 * have, k itself is read too. */
	static const uint32_t bad_sizes[] = {0, 0x7FFFFFF0u, 1024 + 0x100, 1024 - 0x100};
	for (size_t s = 0; s < sizeof bad_sizes / sizeof bad_sizes[0]; s++) {
		memcpy(d, base, len);
		hs_put32(d + koff, bad_sizes[s]);
		memset(want, 1, sizeof want);
		char what[64];
		snprintf(what, sizeof what, "buffer size 0x%x", bad_sizes[s]);
		check_damaged(what, d, len, want, EXACT, koff);
	}

	/* The logfile header event damaged: no header, but every event. */
	memcpy(d, base, len);
	d[0x48 + 7] = 0x33; /* HookId group */
	memset(want, 1, sizeof want);
	check_damaged("logfile header event damaged", d, len, want, STRICT, 0);

	/* The header buffer's own BufferSize damaged. */
	memcpy(d, base, len);
	hs_put32(d, 3);
	memset(want, 1, sizeof want);
	check_damaged("header buffer size damaged", d, len, want, STRICT, 0);

	/* Compressed file: a buffer whose Offset no longer matches what its
	 * stream decompresses to is skipped; one whose stream is damaged may
	 * yield garbage but must not hide any other buffer. */
	write_damage_base(path, true, pl);
	free(base);
	base = slurp(path, &len);
	free(d);
	d = base ? malloc(len) : NULL;
	if (!base || !d)
		goto out;
	{
		hs_etl *e = NULL;
		CHECK_EQ_INT(hs_etl_open_memory(base, len, &e), HS_OK);
		if (!e)
			goto out;
		size_t nb = hs_etl_buffer_count(e);
		CHECK(nb > 10);
		const hs_etl_buffer *bk = hs_etl_buffer_at(e, nb / 2);
		uint32_t kz = (uint32_t)(nb / 2);
		uint64_t kzoff = bk->offset;
		uint32_t kzsize = bk->size;
		hs_etl_close(e);

		memcpy(d, base, len);
		hs_put32(d + kzoff + 0x30, hs_le32(d + kzoff + 0x30) + 8);
		want_all_but(pl, want, kz, 0, 0);
		check_damaged("compressed: data end changed", d, len, want, EXACT, kzoff);

		memcpy(d, base, len);
		d[kzoff + 0x48 + kzsize / 2] ^= 0x5A;
		want_all_but(pl, want, kz, 0, 2);
		check_damaged("compressed: stream damaged", d, len, want, LENIENT, ANY_OFFSET);

		/* Truncated in the middle of a compressed buffer. */
		for (size_t i = 0; i < DAMAGE_N; i++)
			want[i] = pl[i].buffer_index < kz;
		check_damaged("compressed: truncated", base, kzoff + kzsize / 2, want, EXACT, kzoff);
	}
out:
	free(d);
	free(base);
	unlink(path);
}

/* ---- input for the `analyze filter` test ---- */

/*
 * Writes the records filter-synthetic.yaml is judged on; the comment on each
 * says what the profile must do with it, and filter-synthetic.counts lists
 * what must remain. Test-Filter's keywords: A 1, B 2, C 4, D 8.
 */
static int make_filter_input(const char *path)
{
	hs_guid tf, tc, unknown = G2;
	if (!hs_guid_parse("7A3F0C11-5D2B-4E8A-9C41-0B6E2D7F9A13", &tf) ||
	    !hs_guid_parse("5C1B9E20-3F44-4A7D-8B2E-6D0A1F3C7E55", &tc))
		return 1;
	hs_etl_writer_opts o;
	hs_etl_writer_opts_default(&o);
	o.cpus = 2;
	o.logger_name = "filter-input";
	hs_etl_writer *w = NULL;
	if (hs_etl_writer_open(path, &o, &w) != HS_OK)
		return 1;
	uint8_t b[512];
	size_t n, hdr;
	int64_t ts = 100;
	hs_status st = HS_OK;
#define ADD(times, expr)                                                         \
	for (int i_ = 0; i_ < (times) && st == HS_OK; i_++) {                    \
		n = (expr);                                                      \
		st = hs_etl_writer_add_raw(w, (uint16_t)(ts % 2), b, n);         \
		ts += 10;                                                        \
	}
#define EH(ID, LEVEL, KW) \
	mk_eh(b, HS_ETL_HT_EVENT_HEADER64, &tf, (desc){.id = (ID), .level = (LEVEL), .keywords = (KW)}, 1, 2, ts, 0, 0, 8, 0)
	/* s1: level <= 3, any of A|B, all of C (keyword 0 passes);
	 * s2: level <= 5, any of D, keyword 0 ignored, ids 20 and 21 only. */
	ADD(2, EH(1, 2, 0x1 | 0x4));         /* s1 keeps */
	ADD(3, EH(2, 2, 0x1));               /* C missing; no D: dropped */
	ADD(1, EH(3, 4, 0x1 | 0x4));         /* level 4 > 3; id 3 not on s2's list: dropped */
	ADD(4, EH(4, 0, 0x2 | 0x4));         /* level 0 passes any level: s1 keeps */
	ADD(5, EH(5, 3, 0));                 /* keyword 0 passes s1 */
	ADD(1, EH(20, 5, 0));                /* s1 level fails; s2 ignores keyword 0: dropped */
	ADD(2, EH(20, 5, 0x8));              /* s2 keeps */
	ADD(3, EH(21, 5, 0x8 | 0x1));        /* s2 keeps */
	ADD(1, EH(22, 1, 0x8));              /* s1 wants A|B; s2 has no 22: dropped */
	ADD(2, EH(6, 3, 0x4));               /* C alone is not A|B: dropped */
	ADD(1, EH(7, 3, 0xF));               /* s1 keeps */
	ADD(1, EH(20, 6, 0x8));              /* level 6 > 5: dropped */
	ADD(2, mk_eh(b, HS_ETL_HT_EVENT_HEADER64, &unknown, (desc){.id = 1, .level = 1}, 1, 2, ts, 0, 0, 8, 0)); /* not enabled */
	/* Test-Classic in s1: level <= 4, opcodes 10 and 11. */
	ADD(2, mk_classic(b, HS_ETL_HT_FULL_HEADER64, &tc, 10, 4, 0, 1, 2, ts, 8, 0));  /* kept */
	ADD(1, mk_classic(b, HS_ETL_HT_FULL_HEADER64, &tc, 11, 5, 0, 1, 2, ts, 8, 0));  /* level 5 > 4 */
	ADD(1, mk_classic(b, HS_ETL_HT_FULL_HEADER32, &tc, 12, 1, 0, 1, 2, ts, 8, 0));  /* not listed */
	ADD(3, mk_classic(b, HS_ETL_HT_INSTANCE64, &tc, 11, 2, 0, 1, 2, ts, 8, 0));     /* kept */
	ADD(1, mk_classic(b, HS_ETL_HT_FULL_HEADER64, &tc, 10, 0, 0, 1, 2, ts, 8, 0));  /* level 0: kept */
	/* Kernel, through Test-SystemProcess in s3 (GENERAL only, no whitelist). */
	ADD(2, mk_sys(b, HS_ETL_HT_SYSTEM64, 0x03, 1, 3, 1, 2, ts, 8, 0));    /* ProcessStart: kept */
	ADD(1, mk_sys(b, HS_ETL_HT_SYSTEM64, 0x03, 2, 3, 1, 2, ts, 8, 0));    /* ProcessEnd: kept */
	ADD(1, mk_sys(b, HS_ETL_HT_SYSTEM64, 0x03, 39, 3, 1, 2, ts, 8, 0));   /* in no catalog, Process group: kept */
	ADD(2, mk_sys(b, HS_ETL_HT_SYSTEM64, 0x05, 1, 3, 1, 2, ts, 8, 0));    /* ThreadStart: THREAD keyword off */
	ADD(3, mk_sys(b, HS_ETL_HT_COMPACT64, 0x05, 36, 3, 1, 2, ts, 8, 0));  /* CSwitch: scheduler not enabled */
	ADD(2, mk_perf(b, HS_ETL_HT_PERFINFO64, 2, 0x0F, 46, ts, 16, 0));      /* SampledProfile: not enabled */
	ADD(1, mk_sys(b, HS_ETL_HT_SYSTEM64, 0x03, 10, 3, 1, 2, ts, 8, 0));   /* image load: LOADER keyword off */
	ADD(1, mk_sys(b, HS_ETL_HT_SYSTEM64, 0x14, 4, 3, 1, 2, ts, 8, 0));    /* ImageLoad group, unlisted: kept */
	ADD(1, mk_sys(b, HS_ETL_HT_SYSTEM64, 0x09, 1, 3, 1, 2, ts, 8, 0));    /* Registry: no system provider */
	ADD(1, mk_sys(b, HS_ETL_HT_SYSTEM64, 0x00, 5, 2, 1, 2, ts, 8, 0));    /* header group: always kept */
	/* WPP: kept only when its message GUID is an enabled provider without
	 * a whitelist (Test-Filter in s1). */
	ADD(1, mk_msg(b, HS_ETL_MSG_GUID | HS_ETL_MSG_TIMESTAMP, 5, &tf, ts, 0, 0, 4, 0, &hdr));
	ADD(1, mk_msg(b, HS_ETL_MSG_GUID | HS_ETL_MSG_TIMESTAMP, 6, &unknown, ts, 0, 0, 4, 0, &hdr));
	ADD(1, mk_msg(b, HS_ETL_MSG_TIMESTAMP, 7, NULL, ts, 0, 0, 4, 0, &hdr));
#undef EH
#undef ADD
	n = mk_sys(b, HS_ETL_HT_SYSTEM64, 0x00, 8, 2, 1, 2, 0, 8, 0); /* header group, in the header buffer */
	if (st == HS_OK)
		st = hs_etl_writer_add_header_raw(w, b, n);
	if (st != HS_OK) {
		hs_etl_writer_discard(w);
		return 1;
	}
	return hs_etl_writer_close(w) == HS_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--make-filter-input"))
		return make_filter_input(argv[2]);
	const char *t = getenv("TMPDIR");
	if (!t || !*t)
		t = getenv("TEMP"); /* Windows */
	snprintf(tmpdir, sizeof tmpdir, "%s/hs-etl-writer-XXXXXX", t && *t ? t : "/tmp");
	if (!hs_mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_api_edges();
	test_synthetic_kinds();
	test_lost_flags();
	test_wrapped_circular();
	test_pointer32();
	test_damage();
	test_fixture_round_trips();
	rmdir(tmpdir);
	return hs_test_done("etl:writer");
}
