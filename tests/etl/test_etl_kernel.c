/* test_etl_kernel.c: kernel event decoders checked on the real fixtures, on synthetic 32-bit payloads and on every truncation; `--top-process FILE` is an independent sample tally for the cpu test. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"

#ifndef HS_TEST_FIXTURES_DIR
#error "HS_TEST_FIXTURES_DIR must name the shared .etl fixtures directory"
#endif

/* ---- helpers ---- */

static bool printable(const char *s)
{
	if (!*s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7F)
			return false;
	return true;
}

/* Image names are PE files: the extensions the fixtures' images have. */
static bool pe_name(const char *s)
{
	static const char *const ext[] = {".dll", ".exe", ".sys", ".drv", ".cpl", ".winmd", ".node", ".acm", ".ocx"};
	const char *dot = strrchr(s, '.');
	if (!dot || !printable(s))
		return false;
	char low[8];
	size_t n = strlen(dot);
	if (n >= sizeof low)
		return false;
	/* Bounded by the array, not by n: gcc 12 at -O3 cannot see n < 8 here
	 * (-Wstringop-overflow); the NUL at dot[n] ends the copy. */
	for (size_t i = 0; i < sizeof low; i++)
		if (!(low[i] = (char)tolower((unsigned char)dot[i])))
			break;
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
		if (!strcmp(low, ext[i]))
			return true;
	return false;
}

static bool ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	if (n < m)
		return false;
	for (size_t i = 0; i < m; i++)
		if (tolower((unsigned char)s[n - m + i]) != tolower((unsigned char)suffix[i]))
			return false;
	return true;
}

static void fixture_path(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/microsoft_perfview/%s", HS_TEST_FIXTURES_DIR, name);
}

/* Small open-addressing set/map of u64 keys for the tallies. */
typedef struct {
	uint64_t *keys;
	uint32_t *vals;
	bool *used;
	size_t cap;
} u64map;

static void map_init(u64map *m, size_t cap)
{
	m->cap = cap;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	m->used = calloc(cap, sizeof(*m->used));
	if (!m->keys || !m->vals || !m->used) {
		perror("calloc");
		exit(2);
	}
}

static uint32_t *map_slot(u64map *m, uint64_t k, bool create)
{
	size_t i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) % m->cap;
	for (size_t n = 0; n < m->cap; n++, i = (i + 1) % m->cap) {
		if (m->used[i] && m->keys[i] == k)
			return &m->vals[i];
		if (!m->used[i]) {
			if (!create)
				return NULL;
			m->used[i] = true;
			m->keys[i] = k;
			m->vals[i] = 0;
			return &m->vals[i];
		}
	}
	fprintf(stderr, "test map full\n");
	exit(2);
}

static void map_free(u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
}

/* A copy of one real record, to replay through the decoders. */
typedef struct {
	hs_etl_record r;
	uint8_t *bytes;
	bool have;
} saved;

static void save(saved *s, const hs_etl_record *r)
{
	if (s->have)
		return;
	s->r = *r;
	s->bytes = malloc(r->payload_len ? r->payload_len : 1);
	if (!s->bytes) {
		perror("malloc");
		exit(2);
	}
	memcpy(s->bytes, r->payload, r->payload_len);
	s->r.payload = s->bytes;
	s->r.raw = NULL;
	s->r.ext = NULL;
	s->have = true;
}

/* ---- net.4.5.2.x86.etl: samples, stacks, merged image ids ---- */

typedef struct {
	u64map threads;   /* tid -> pid + 1 */
	u64map sample_at; /* tid ^ ts -> 1: samples a stack can belong to */
	uint64_t n[16], bad[16];
	uint64_t samples_unknown_thread, samples_count_not_1;
	uint32_t unknown_tids[16];
	size_t n_unknown_tids;
	uint64_t stacks_zero_frame, stacks_matched, stacks_late, frames;
	uint64_t key_matched;
	uint64_t names_not_pe, pdb_not_pdb, kernel_pid_mismatch, id_zero_guid;
	uint32_t test_pid, test_start_seen, test_thread_pid;
	uint32_t interval_new;
	bool interval_seen;
	char bad_name[1100];
	saved first[16];
} net_ctx;

static uint64_t sample_key(uint32_t tid, uint64_t ts)
{
	return ts * 0x100000001B3ull ^ tid;
}

static int on_net(const hs_etl_record *r, void *vctx)
{
	net_ctx *c = vctx;
	hs_etlk_kind k = hs_etlk_classify(r);
	if (k == HS_ETLK_OTHER)
		return 0;
	c->n[k]++;
	save(&c->first[k], r);
	bool ok = false;
	switch (k) {
	case HS_ETLK_PROCESS: {
		hs_etl_process p;
		ok = hs_etl_decode_process(r, &p);
		if (ok && !printable(p.image_file_name))
			snprintf(c->bad_name, sizeof c->bad_name, "process name '%s'", p.image_file_name);
		if (ok && !strcmp(p.image_file_name, "Test.x86.exe") && p.opcode == HS_ETLK_OP_START) {
			c->test_pid = p.pid;
			c->test_start_seen++;
			CHECK_EQ_STR(p.command_line, "Test.x86.exe");
			CHECK_EQ_INT(p.parent_pid, 3508); /* cmd.exe in the rundown */
			CHECK(p.user_sid != NULL && p.user_sid[0] == 1);
		}
		break;
	}
	case HS_ETLK_THREAD: {
		hs_etl_thread t;
		ok = hs_etl_decode_thread(r, &t);
		if (ok)
			*map_slot(&c->threads, t.tid, true) = t.pid + 1;
		if (ok && t.tid == 3708)
			c->test_thread_pid = t.pid;
		break;
	}
	case HS_ETLK_IMAGE: {
		hs_etl_image im;
		ok = hs_etl_decode_image(r, &im);
		if (ok && !pe_name(strrchr(im.file_name, '\\') ? strrchr(im.file_name, '\\') + 1 : im.file_name)) {
			c->names_not_pe++;
			snprintf(c->bad_name, sizeof c->bad_name, "image '%s'", im.file_name);
		}
		if (ok && hs_etl_kernel_address(im.base, r->ptr64) != (im.pid == 0))
			c->kernel_pid_mismatch++;
		break;
	}
	case HS_ETLK_SAMPLE: {
		hs_etl_sample s;
		ok = hs_etl_decode_sample(r, &s);
		if (!ok)
			break;
		if (s.tid != 0 && !map_slot(&c->threads, s.tid, false)) {
			c->samples_unknown_thread++;
			if (c->n_unknown_tids < 16)
				c->unknown_tids[c->n_unknown_tids++] = s.tid;
		}
		if (s.count != 1)
			c->samples_count_not_1++;
		*map_slot(&c->sample_at, sample_key(s.tid, (uint64_t)r->timestamp), true) = 1;
		break;
	}
	case HS_ETLK_INTERVAL: {
		hs_etl_interval iv;
		ok = hs_etl_decode_interval(r, &iv);
		if (ok && r->opcode == HS_ETLK_OP_COLLECTION_START && iv.source == 0) {
			c->interval_seen = true;
			c->interval_new = iv.new_interval;
		}
		break;
	}
	case HS_ETLK_STACK: {
		hs_etl_stack st;
		ok = hs_etl_decode_stack(r, &st);
		if (!ok)
			break;
		c->frames += st.frames.count;
		for (size_t i = 0; i < st.frames.count; i++)
			if (hs_etl_stack_frame(&st.frames, i) == 0)
				c->stacks_zero_frame++;
		/* A stack is logged after the event it describes. */
		if (st.event_ts > (uint64_t)r->timestamp)
			c->stacks_late++;
		if (map_slot(&c->sample_at, sample_key(st.tid, st.event_ts), false))
			c->stacks_matched++;
		break;
	}
	case HS_ETLK_STACK_KEY: {
		hs_etl_stack_key sk;
		ok = hs_etl_decode_stack_key(r, &sk) && sk.key != 0;
		if (ok && map_slot(&c->sample_at, sample_key(sk.tid, sk.event_ts), false))
			c->key_matched++;
		break;
	}
	case HS_ETLK_STACK_DEF: {
		hs_etl_stack_def sd;
		ok = hs_etl_decode_stack_def(r, &sd) && sd.key != 0 && hs_etl_stack_frame(&sd.frames, 0) != 0;
		break;
	}
	case HS_ETLK_IMAGE_ID: {
		hs_etl_image_id id;
		ok = hs_etl_decode_image_id(r, &id) && id.size != 0;
		if (ok && !pe_name(id.original_file_name)) {
			c->names_not_pe++;
			snprintf(c->bad_name, sizeof c->bad_name, "image id '%s'", id.original_file_name);
		}
		if (ok && hs_etl_kernel_address(id.base, r->ptr64) != (id.pid == 0))
			c->kernel_pid_mismatch++;
		break;
	}
	case HS_ETLK_DBGID_RSDS: {
		hs_etl_dbgid d;
		ok = hs_etl_decode_dbgid(r, &d) && d.age >= 1;
		if (ok && !ends_with_ci(d.pdb_file_name, ".pdb"))
			c->pdb_not_pdb++;
		if (ok && d.guid.data1 == 0 && d.guid.data2 == 0 && d.guid.data3 == 0)
			c->id_zero_guid++;
		break;
	}
	case HS_ETLK_OTHER:
		break;
	}
	if (!ok)
		c->bad[k]++;
	return 0;
}

/*
 * Every truncation of a real payload must be rejected, except at lengths that
 * end a whole record of that kind (a stack cut after a frame is a shorter
 * stack). The prefix is copied into a buffer of exactly its length, so a read
 * past it is a sanitizer error.
 */
static bool decode_any(hs_etlk_kind k, const hs_etl_record *r)
{
	union {
		hs_etl_process p;
		hs_etl_thread t;
		hs_etl_image i;
		hs_etl_sample s;
		hs_etl_interval iv;
		hs_etl_stack st;
		hs_etl_stack_key sk;
		hs_etl_stack_def sd;
		hs_etl_image_id id;
		hs_etl_dbgid d;
	} u;
	switch (k) {
	case HS_ETLK_PROCESS: return hs_etl_decode_process(r, &u.p);
	case HS_ETLK_THREAD: return hs_etl_decode_thread(r, &u.t);
	case HS_ETLK_IMAGE: return hs_etl_decode_image(r, &u.i);
	case HS_ETLK_SAMPLE: return hs_etl_decode_sample(r, &u.s);
	case HS_ETLK_INTERVAL: return hs_etl_decode_interval(r, &u.iv);
	case HS_ETLK_STACK: return hs_etl_decode_stack(r, &u.st);
	case HS_ETLK_STACK_KEY: return hs_etl_decode_stack_key(r, &u.sk);
	case HS_ETLK_STACK_DEF: return hs_etl_decode_stack_def(r, &u.sd);
	case HS_ETLK_IMAGE_ID: return hs_etl_decode_image_id(r, &u.id);
	case HS_ETLK_DBGID_RSDS: return hs_etl_decode_dbgid(r, &u.d);
	case HS_ETLK_OTHER: break;
	}
	return false;
}

static void test_truncations(saved *first)
{
	for (int k = HS_ETLK_PROCESS; k <= HS_ETLK_DBGID_RSDS; k++) {
		saved *s = &first[k];
		if (!s->have)
			continue;
		CHECK(decode_any((hs_etlk_kind)k, &s->r));
		size_t full = s->r.payload_len, ps = s->r.ptr64 ? 8 : 4;
		for (size_t len = 0; len < full; len++) {
			uint8_t *buf = malloc(len ? len : 1);
			if (!buf)
				exit(2);
			memcpy(buf, s->bytes, len);
			hs_etl_record r = s->r;
			r.payload = len ? buf : NULL;
			r.payload_len = len;
			bool ok = decode_any((hs_etlk_kind)k, &r);
			bool whole = false;
			if (k == HS_ETLK_STACK)
				whole = len > 16 && (len - 16) % ps == 0;
			else if (k == HS_ETLK_PROCESS && s->r.version >= 4)
				/* PackageFullName and ApplicationId (empty in the fixtures,
				 * two bytes each) are optional: v3 ended before them. */
				whole = len == full - 4 || len == full - 2;
			else if (k == HS_ETLK_STACK_DEF)
				whole = len > ps && len % ps == 0;
			else if (k == HS_ETLK_INTERVAL)
				whole = len >= 12; /* newer versions append a source name */
			if (ok != whole) {
				fprintf(stderr, "kind %d cut to %zu of %zu bytes: decode %s\n", k, len, full,
					ok ? "accepted" : "rejected");
				hs_test_failures++;
			}
			hs_test_checks++;
			free(buf);
		}
		/* A decoder never accepts another kind's record. */
		for (int other = HS_ETLK_PROCESS; other <= HS_ETLK_DBGID_RSDS; other++)
			if (other != k)
				CHECK(!decode_any((hs_etlk_kind)other, &s->r));
	}
}

static void test_net(void)
{
	char path[1024];
	fixture_path(path, sizeof path, "net.4.5.2.x86.etl");
	hs_etl *etl = NULL;
	hs_status st = hs_etl_open(path, &etl);
	if (st != HS_OK) {
		/* A missing fixture fails: a skipped decoder check proves nothing. */
		fprintf(stderr, "%s: cannot open the fixture (%s)\n", path, hs_strerror(st));
		hs_test_failures++;
		return;
	}
	net_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		exit(2);
	map_init(&c->threads, 1 << 14);
	map_init(&c->sample_at, 1 << 18);
	CHECK_EQ_INT(hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_net, c), HS_OK);
	/* Counts from the fixture's independent .counts file. */
	CHECK_EQ_INT(c->n[HS_ETLK_SAMPLE], 88809);
	CHECK_EQ_INT(c->n[HS_ETLK_STACK], 229);
	CHECK_EQ_INT(c->n[HS_ETLK_STACK_KEY], 3640 + 8532);
	CHECK_EQ_INT(c->n[HS_ETLK_STACK_DEF], 3049 + 1024);
	CHECK_EQ_INT(c->n[HS_ETLK_IMAGE_ID], 3728);
	CHECK_EQ_INT(c->n[HS_ETLK_DBGID_RSDS], 3680);
	CHECK_EQ_INT(c->n[HS_ETLK_PROCESS], 1 + 1 + 35 + 35 + 2);
	CHECK_EQ_INT(c->n[HS_ETLK_THREAD], 16 + 29 + 705 + 692);
	CHECK_EQ_INT(c->n[HS_ETLK_IMAGE], 47 + 1810 + 1820 + 57);
	CHECK_EQ_INT(c->n[HS_ETLK_INTERVAL], 2);
	for (int k = HS_ETLK_PROCESS; k <= HS_ETLK_DBGID_RSDS; k++)
		if (c->bad[k]) {
			fprintf(stderr, "kind %d: %llu of %llu records did not decode\n", k, (unsigned long long)c->bad[k],
				(unsigned long long)c->n[k]);
			hs_test_failures++;
		}
	if (c->bad_name[0])
		fprintf(stderr, "e.g. %s\n", c->bad_name);
	CHECK_EQ_INT(c->names_not_pe, 0);
	CHECK_EQ_INT(c->pdb_not_pdb, 0);
	CHECK_EQ_INT(c->id_zero_guid, 0);
	CHECK_EQ_INT(c->kernel_pid_mismatch, 0);
	/* Every sampled thread is announced by a thread event (tid 0 is each
	 * processor's idle thread). Four samples come before their thread's
	 * rundown: PerfView's own thread 2784, sampled while it wrote the rundown. */
	CHECK_EQ_INT(c->samples_unknown_thread, 4);
	for (size_t i = 0; i < c->n_unknown_tids; i++) {
		CHECK_EQ_INT(c->unknown_tids[i], 2784);
		uint32_t *pid = map_slot(&c->threads, c->unknown_tids[i], false);
		CHECK(pid && *pid == 3988 + 1);
	}
	/* Count is 1 on this Windows 8 trace. */
	CHECK_EQ_INT(c->samples_count_not_1, 0);
	CHECK(c->interval_seen);
	CHECK_EQ_INT(c->interval_new, 10000);
	CHECK_EQ_INT(c->stacks_zero_frame, 0);
	CHECK_EQ_INT(c->stacks_late, 0);
	CHECK(c->frames >= c->n[HS_ETLK_STACK]);
	/* Most stacks belong to a sample on the same thread at the same time;
	 * the others to other kernel events (disk, file, page faults). */
	CHECK_EQ_INT(c->stacks_matched, 224);
	CHECK_EQ_INT(c->key_matched, 781 + 6362);
	/* Test.x86.exe started during the trace and its hot thread belongs to it. */
	CHECK_EQ_INT(c->test_start_seen, 1);
	CHECK_EQ_INT(c->test_pid, 3644);
	CHECK_EQ_INT(c->test_thread_pid, 3644);
	test_truncations(c->first);
	for (int k = 0; k < 16; k++)
		free(c->first[k].bytes);
	map_free(&c->threads);
	map_free(&c->sample_at);
	free(c);
	hs_etl_close(etl);
}

/* ---- diaghub.kernel.1.etl: process and image rundown (this file has no thread events) ---- */

typedef struct {
	uint64_t n[16], bad[16];
	uint64_t names_not_pe, kernel_pid_mismatch, v3_images;
	bool system_seen, idle_seen;
	char bad_name[1100];
	saved first[16];
} dh_ctx;

static int on_dh(const hs_etl_record *r, void *vctx)
{
	dh_ctx *c = vctx;
	hs_etlk_kind k = hs_etlk_classify(r);
	if (k == HS_ETLK_OTHER)
		return 0;
	c->n[k]++;
	save(&c->first[k], r);
	bool ok = false;
	if (k == HS_ETLK_PROCESS) {
		hs_etl_process p;
		ok = hs_etl_decode_process(r, &p) && p.version >= 4;
		/* Defunct (zombie) processes are logged without a name. */
		if (ok && p.opcode != HS_ETLK_OP_DEFUNCT && !printable(p.image_file_name))
			snprintf(c->bad_name, sizeof c->bad_name, "process %u name '%s'", p.pid, p.image_file_name);
		if (ok && p.pid == 4 && !strcmp(p.image_file_name, "System"))
			c->system_seen = true;
		if (ok && p.pid == 0 && !strcmp(p.image_file_name, "Idle"))
			c->idle_seen = true;
	} else if (k == HS_ETLK_IMAGE) {
		hs_etl_image im;
		ok = hs_etl_decode_image(r, &im);
		const char *base = ok ? strrchr(im.file_name, '\\') : NULL;
		if (ok && !pe_name(base ? base + 1 : im.file_name)) {
			c->names_not_pe++;
			snprintf(c->bad_name, sizeof c->bad_name, "image '%s'", im.file_name);
		}
		if (ok && hs_etl_kernel_address(im.base, r->ptr64) != (im.pid == 0))
			c->kernel_pid_mismatch++;
		if (ok && im.version == 3)
			c->v3_images++;
	} else {
		ok = true;
	}
	if (!ok)
		c->bad[k]++;
	return 0;
}

static void test_diaghub(void)
{
	char path[1024];
	fixture_path(path, sizeof path, "diaghub.kernel.1.etl");
	hs_etl *etl = NULL;
	hs_status st = hs_etl_open(path, &etl);
	if (st != HS_OK) {
		fprintf(stderr, "%s: cannot open the fixture (%s)\n", path, hs_strerror(st));
		hs_test_failures++;
		return;
	}
	dh_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		exit(2);
	CHECK_EQ_INT(hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_dh, c), HS_OK);
	CHECK_EQ_INT(c->n[HS_ETLK_PROCESS], 18 + 3 + 223 + 223 + 9);
	CHECK_EQ_INT(c->n[HS_ETLK_IMAGE], 87 + 143 + 187 + 14830 + 187);
	CHECK_EQ_INT(c->n[HS_ETLK_THREAD], 0);
	CHECK_EQ_INT(c->bad[HS_ETLK_PROCESS], 0);
	CHECK_EQ_INT(c->bad[HS_ETLK_IMAGE], 0);
	if (c->bad_name[0])
		fprintf(stderr, "e.g. %s\n", c->bad_name);
	CHECK(!c->bad_name[0]);
	CHECK_EQ_INT(c->names_not_pe, 0);
	CHECK_EQ_INT(c->kernel_pid_mismatch, 0);
	CHECK_EQ_INT(c->v3_images, c->n[HS_ETLK_IMAGE]);
	CHECK(c->system_seen);
	CHECK(c->idle_seen);
	test_truncations(c->first);
	for (int k = 0; k < 16; k++)
		free(c->first[k].bytes);
	free(c);
	hs_etl_close(etl);
}

/* ---- synthetic payloads: 32-bit layouts and garbled fields ---- */

static hs_etl_record kernel_record(uint8_t group, uint8_t opcode, uint8_t version, bool ptr64, const uint8_t *p,
				   size_t n)
{
	hs_etl_record r;
	memset(&r, 0, sizeof r);
	r.kind = HS_ETL_SYSTEM;
	r.group = group;
	r.opcode = opcode;
	r.version = version;
	r.ptr64 = ptr64;
	r.pid = r.tid = UINT32_MAX;
	r.payload = p;
	r.payload_len = n;
	return r;
}

static size_t put32(uint8_t *p, size_t o, uint32_t v)
{
	p[o] = (uint8_t)v;
	p[o + 1] = (uint8_t)(v >> 8);
	p[o + 2] = (uint8_t)(v >> 16);
	p[o + 3] = (uint8_t)(v >> 24);
	return o + 4;
}

static size_t put_wstr(uint8_t *p, size_t o, const char *s)
{
	for (;; s++) {
		p[o++] = (uint8_t)*s;
		p[o++] = 0;
		if (!*s)
			return o;
	}
}

static void test_synthetic(void)
{
	uint8_t b[256];
	size_t o;

	/* Process v4 from a 32-bit kernel: 4-byte pointers, TOKEN_USER of 8. */
	o = 0;
	o = put32(b, o, 0x8a001000); /* UniqueProcessKey */
	o = put32(b, o, 1234);       /* ProcessId */
	o = put32(b, o, 99);         /* ParentId */
	o = put32(b, o, 1);          /* SessionId */
	o = put32(b, o, 0);          /* ExitStatus */
	o = put32(b, o, 0x1ab000);   /* DirectoryTableBase */
	o = put32(b, o, 0);          /* Flags */
	o = put32(b, o, 0x8a002000); /* TOKEN_USER.Sid */
	o = put32(b, o, 0);          /* TOKEN_USER.Attributes */
	size_t sid_at = o;
	b[o++] = 1; /* Revision */
	b[o++] = 2; /* SubAuthorityCount */
	memcpy(b + o, "\0\0\0\0\0\5", 6);
	o += 6;
	o = put32(b, o, 21);
	o = put32(b, o, 500);
	memcpy(b + o, "app.exe", 8);
	o += 8;
	o = put_wstr(b, o, "app.exe -x");
	hs_etl_record r = kernel_record(0x03, HS_ETLK_OP_START, 4, false, b, o);
	hs_etl_process p;
	CHECK(hs_etl_decode_process(&r, &p));
	CHECK_EQ_INT(p.pid, 1234);
	CHECK_EQ_INT(p.parent_pid, 99);
	CHECK_EQ_INT(p.directory_table_base, 0x1ab000);
	CHECK_EQ_INT(p.user_sid_len, 16);
	CHECK_EQ_STR(p.image_file_name, "app.exe");
	CHECK_EQ_STR(p.command_line, "app.exe -x");
	/* A SID with an impossible revision or too many sub-authorities is garbage. */
	b[sid_at] = 7;
	CHECK(!hs_etl_decode_process(&r, &p));
	b[sid_at] = 1;
	b[sid_at + 1] = 200;
	CHECK(!hs_etl_decode_process(&r, &p));
	b[sid_at + 1] = 2;
	/* Invalid UTF-8 in the ANSI name becomes '?', never raw bytes. */
	b[sid_at + 16] = 0xE9;
	CHECK(hs_etl_decode_process(&r, &p));
	CHECK_EQ_STR(p.image_file_name, "?pp.exe");

	/* Image v2 from a 32-bit kernel. */
	o = 0;
	o = put32(b, o, 0x10000000); /* ImageBase */
	o = put32(b, o, 0x5000);     /* ImageSize */
	o = put32(b, o, 1234);       /* ProcessId */
	o = put32(b, o, 0xabcd);     /* ImageChecksum */
	o = put32(b, o, 0x5f000000); /* TimeDateStamp */
	o = put32(b, o, 0);          /* Reserved0 */
	o = put32(b, o, 0x10000000); /* DefaultBase */
	memset(b + o, 0, 16);        /* Reserved1..4 */
	o += 16;
	o = put_wstr(b, o, "\\Device\\HarddiskVolume1\\x\\lib.dll");
	r = kernel_record(0x14, HS_ETLK_OP_LOAD, 2, false, b, o);
	hs_etl_image im;
	CHECK(hs_etl_decode_image(&r, &im));
	CHECK_EQ_INT(im.base, 0x10000000);
	CHECK_EQ_INT(im.size, 0x5000);
	CHECK_EQ_INT(im.pid, 1234);
	CHECK_EQ_INT(im.time_date_stamp, 0x5f000000);
	CHECK_EQ_STR(im.file_name, "\\Device\\HarddiskVolume1\\x\\lib.dll");
	/* The process group's opcode 10 is the same image load. */
	r = kernel_record(0x03, HS_ETLK_OP_LOAD, 2, false, b, o);
	CHECK_EQ_INT(hs_etlk_classify(&r), HS_ETLK_IMAGE);
	CHECK(hs_etl_decode_image(&r, &im));
	/* An image of size 0 describes nothing. */
	put32(b, 4, 0);
	CHECK(!hs_etl_decode_image(&r, &im));

	/* SampledProfile and StackWalk with 4-byte pointers. */
	o = 0;
	o = put32(b, o, 0x77001234);
	o = put32(b, o, 42);
	o = put32(b, o, 0x00480001); /* Count 1; flags byte: priority 9 */
	r = kernel_record(0x0F, 46, 2, false, b, o);
	hs_etl_sample s;
	CHECK(hs_etl_decode_sample(&r, &s));
	CHECK_EQ_INT(s.ip, 0x77001234);
	CHECK_EQ_INT(s.tid, 42);
	CHECK_EQ_INT(s.count, 1);
	CHECK_EQ_INT(s.priority, 9);
	CHECK(!s.dpc && !s.isr);
	o = 0;
	o = put32(b, o, 0x1000);
	o = put32(b, o, 0); /* EventTimeStamp 0x1000 */
	o = put32(b, o, 1234);
	o = put32(b, o, 42);
	o = put32(b, o, 0x77001234);
	o = put32(b, o, 0x77000100);
	o = put32(b, o, 0x81000000);
	r = kernel_record(0x18, 32, 2, false, b, o);
	hs_etl_stack stk;
	CHECK(hs_etl_decode_stack(&r, &stk));
	CHECK_EQ_INT(stk.event_ts, 0x1000);
	CHECK_EQ_INT(stk.frames.count, 3);
	CHECK_EQ_INT(hs_etl_stack_frame(&stk.frames, 1), 0x77000100);
	CHECK_EQ_INT(hs_etl_stack_frame(&stk.frames, 3), 0); /* past the end */
	CHECK(!hs_etl_kernel_address(hs_etl_stack_frame(&stk.frames, 0), false));
	CHECK(hs_etl_kernel_address(hs_etl_stack_frame(&stk.frames, 2), false));
	r.payload_len = o - 1; /* not whole frames */
	CHECK(!hs_etl_decode_stack(&r, &stk));
	r.payload_len = 16; /* no frames at all */
	CHECK(!hs_etl_decode_stack(&r, &stk));

	/* A thread v3 that carries a name after the priorities. */
	memset(b, 0, sizeof b);
	o = 0;
	o = put32(b, o, 1234);
	o = put32(b, o, 42);
	o += 7 * 8 + 4; /* 64-bit stack and start addresses, TEB, SubProcessTag */
	b[o++] = 8;
	b[o++] = 5;
	b[o++] = 2;
	b[o++] = 0;
	o = put_wstr(b, o, "worker");
	r = kernel_record(0x05, HS_ETLK_OP_START, 3, true, b, o);
	hs_etl_thread t;
	CHECK(hs_etl_decode_thread(&r, &t));
	CHECK_EQ_INT(t.pid, 1234);
	CHECK_EQ_INT(t.tid, 42);
	CHECK_EQ_INT(t.base_priority, 8);
	CHECK_EQ_STR(t.name, "worker");
	/* A lone surrogate decodes as U+FFFD, so the name stays valid UTF-8. */
	b[o - 4] = 0x00;
	b[o - 3] = 0xD8;
	CHECK(hs_etl_decode_thread(&r, &t));
	CHECK_EQ_STR(t.name, "worke\xEF\xBF\xBD");

	/* Records that are not kernel events are never classified as such. */
	r = kernel_record(0x0F, 46, 2, true, b, 16);
	r.kind = HS_ETL_EVENT;
	CHECK_EQ_INT(hs_etlk_classify(&r), HS_ETLK_OTHER);
	CHECK(!hs_etl_decode_sample(&r, &s));

	/* Long names are cut at a character boundary and flagged. */
	memset(b, 0, sizeof b);
	o = 0;
	o = put32(b, o, 0x1000);
	o = put32(b, o, 0x1000);
	o = put32(b, o, 7);
	size_t name_at = o;
	uint8_t *big = malloc(4096);
	if (!big)
		exit(2);
	memcpy(big, b, name_at);
	o = name_at;
	for (int i = 0; i < 700; i++) { /* U+00E9, two UTF-8 bytes each */
		big[o++] = 0xE9;
		big[o++] = 0x00;
	}
	big[o++] = 0;
	big[o++] = 0;
	r = kernel_record(0x14, HS_ETLK_OP_LOAD, 1, false, big, o);
	CHECK(hs_etl_decode_image(&r, &im));
	CHECK(im.truncated);
	CHECK_EQ_INT(strlen(im.file_name) % 2, 0);
	CHECK(strlen(im.file_name) < sizeof im.file_name);
	free(big);
}

/* ---- an independent tally for the cpu test ---- */

typedef struct {
	int pass;
	u64map thread_pid;   /* tid -> pid + 1, first mapping wins */
	u64map pid_samples;  /* pid -> samples */
	u64map pid_name;     /* pid -> index into names */
	char names[4096][256];
	uint32_t nnames;
} tally_ctx;

static int on_tally(const hs_etl_record *r, void *vctx)
{
	tally_ctx *c = vctx;
	hs_etlk_kind k = hs_etlk_classify(r);
	if (c->pass == 0 && k == HS_ETLK_THREAD) {
		hs_etl_thread t;
		if (hs_etl_decode_thread(r, &t)) {
			uint32_t *v = map_slot(&c->thread_pid, t.tid, true);
			if (!*v)
				*v = t.pid + 1;
		}
	} else if (c->pass == 0 && k == HS_ETLK_PROCESS) {
		hs_etl_process p;
		if (hs_etl_decode_process(r, &p) && p.image_file_name[0] && c->nnames < 4096) {
			uint32_t *v = map_slot(&c->pid_name, p.pid, true);
			*v = c->nnames + 1;
			snprintf(c->names[c->nnames++], sizeof c->names[0], "%s", p.image_file_name);
		}
	} else if (c->pass == 1 && k == HS_ETLK_SAMPLE) {
		hs_etl_sample s;
		if (hs_etl_decode_sample(r, &s)) {
			uint32_t *t = map_slot(&c->thread_pid, s.tid, false);
			uint64_t pid = t ? *t - 1 : UINT32_MAX;
			*map_slot(&c->pid_samples, pid, true) += s.count ? s.count : 1;
		}
	}
	return 0;
}

/* Prints "PID<TAB>NAME<TAB>SAMPLES" for the process with the most samples. */
static int top_process(const char *path)
{
	hs_etl *etl = NULL;
	if (hs_etl_open(path, &etl) != HS_OK) {
		fprintf(stderr, "%s: cannot open\n", path);
		return 2;
	}
	tally_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		exit(2);
	map_init(&c->thread_pid, 1 << 16);
	map_init(&c->pid_samples, 1 << 14);
	map_init(&c->pid_name, 1 << 14);
	for (c->pass = 0; c->pass < 2; c->pass++)
		hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_tally, c);
	uint64_t best = 0, best_pid = 0;
	for (size_t i = 0; i < c->pid_samples.cap; i++)
		if (c->pid_samples.used[i] && (c->pid_samples.vals[i] > best ||
					       (c->pid_samples.vals[i] == best && c->pid_samples.keys[i] < best_pid))) {
			best = c->pid_samples.vals[i];
			best_pid = c->pid_samples.keys[i];
		}
	uint32_t *ni = map_slot(&c->pid_name, best_pid, false);
	printf("%llu\t%s\t%llu\n", (unsigned long long)best_pid, ni ? c->names[*ni - 1] : "?",
	       (unsigned long long)best);
	map_free(&c->thread_pid);
	map_free(&c->pid_samples);
	map_free(&c->pid_name);
	free(c);
	hs_etl_close(etl);
	return best ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--top-process"))
		return top_process(argv[2]);
	test_synthetic();
	test_net();
	test_diaghub();
	return hs_test_done("test_etl_kernel");
}
