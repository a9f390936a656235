/* test_imageid.c: ImageID / DbgID records against the ones xperf wrote into a real fixture, and hs_etl_add_image_ids round trips on real traces. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/etl_writer.h"
#include "hindsight/imageid.h"
#include "hindsight/pe.h"

/*
 * Modes (each a ctest entry, see tests/etl/imageid.cmake):
 *   agree FIXTURES            every ImageID / DbgID_RSDS / DbgID None record of
 *                             net.4.5.2.x86.etl (merged by xperf) is rebuilt by
 *                             our builders from the decoded fields and the image
 *                             event it precedes, and must equal it byte for byte.
 *   roundtrip FIXTURES WORK PEDIR
 *                             hs_etl_add_image_ids on an unmerged fixture and on
 *                             the merged one stripped of its ImageID records,
 *                             with kernel paths mapped to the PE files in PEDIR.
 */

static const char *fixtures;

static char *fixture(const char *rel)
{
	static char buf[4][1024];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", fixtures, rel);
	return buf[k];
}

/* ---- agree ---- */

typedef struct {
	hs_etl_record rec; /* the record, its pointers moved to raw below */
	uint8_t raw[4096];
	size_t len;
	int64_t ts;
	uint8_t opcode;
} pending_rec;

#define MAX_CPUS 64
#define MAX_PENDING 8

typedef struct {
	pending_rec pend[MAX_CPUS][MAX_PENDING];
	size_t npend[MAX_CPUS];
	bool ptr64;
	uint32_t n_id, n_rsds, n_none, n_other, compared[64], mismatched, unmatched, records_id;
	uint32_t images_with_ids;
} agree_ctx;

static bool is_id_class(const hs_etl_record *r)
{
	/* The class is matched through the decoders' own classification. */
	return r->kind == HS_ETL_FULL && r->has_guid && r->guid.data1 == 0xb3e675d7u;
}

static void hexdiff(const char *what, const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i] != b[i]) {
			fprintf(stderr, "  %s: first difference at +0x%zx: xperf %02x, ours %02x\n", what, i, a[i], b[i]);
			return;
		}
	}
}

static void compare_one(agree_ctx *c, const pending_rec *p, const hs_etl_record *img_rec, const hs_etl_image *img)
{
	hs_imageid_header h;
	hs_imageid_header_for(img_rec, img, c->ptr64, &h);
	hs_etl_record r = p->rec;
	r.raw = p->raw;
	r.payload = p->raw + (p->rec.payload - p->rec.raw);
	r.ext = NULL;
	uint8_t ours[4096];
	size_t n = 0;
	if (p->opcode == 0) {
		hs_etl_image_id id;
		CHECK(hs_etl_decode_image_id(&r, &id));
		n = hs_imageid_build_image_id(&h, id.base, id.size, id.time_date_stamp, id.original_file_name, ours,
					      sizeof ours);
		CHECK(id.base == img->base);
	} else if (p->opcode == 36) {
		hs_etl_dbgid d;
		CHECK(hs_etl_decode_dbgid(&r, &d));
		n = hs_imageid_build_dbgid_rsds(&h, d.base, &d.guid, d.age, d.pdb_file_name, ours, sizeof ours);
		CHECK(d.base == img->base);
	} else if (p->opcode == 32) {
		uint64_t base = 0;
		for (int i = 7; i >= 0; i--)
			base = base << 8 | p->raw[0x30 + i];
		n = hs_imageid_build_dbgid_none(&h, base, ours, sizeof ours);
	} else {
		c->n_other++; /* FileVersion (64), DbgID_ILRSDS (37): not written by us */
		return;
	}
	c->compared[p->opcode]++;
	if (n != p->len || memcmp(ours, p->raw, n) != 0) {
		if (c->mismatched++ < 5) {
			fprintf(stderr, "opcode %u at ts %" PRId64 ": xperf %zu bytes, ours %zu\n", p->opcode, p->ts, p->len,
				n);
			hexdiff("record", p->raw, ours, n < p->len ? n : p->len);
		}
	}
}

static int on_agree(const hs_etl_record *r, void *ctx)
{
	agree_ctx *c = ctx;
	if (r->cpu >= MAX_CPUS)
		return 0;
	if (is_id_class(r)) {
		c->records_id++;
		size_t *np = &c->npend[r->cpu];
		if (*np > 0 && c->pend[r->cpu][0].ts != r->timestamp) {
			c->unmatched += (uint32_t)*np; /* ids with no image event at their timestamp */
			*np = 0;
		}
		if (*np < MAX_PENDING && r->raw_len <= sizeof c->pend[0][0].raw) {
			pending_rec *p = &c->pend[r->cpu][(*np)++];
			p->rec = *r;
			memcpy(p->raw, r->raw, r->raw_len);
			p->len = r->raw_len;
			p->ts = r->timestamp;
			p->opcode = r->opcode;
		}
		return 0;
	}
	hs_etl_image img;
	if (hs_etlk_classify(r) == HS_ETLK_IMAGE && hs_etl_decode_image(r, &img)) {
		size_t *np = &c->npend[r->cpu];
		if (*np && c->pend[r->cpu][0].ts == r->timestamp) {
			c->images_with_ids++;
			for (size_t i = 0; i < *np; i++)
				compare_one(c, &c->pend[r->cpu][i], r, &img);
		} else {
			c->unmatched += (uint32_t)*np;
		}
		*np = 0;
	}
	return 0;
}

static void test_agree(void)
{
	const char *path = fixture("microsoft_perfview/net.4.5.2.x86.etl");
	hs_etl *etl;
	hs_status st = hs_etl_open(path, &etl);
	CHECK_EQ_INT(st, HS_OK);
	if (st != HS_OK)
		return;
	agree_ctx *c = calloc(1, sizeof *c);
	c->ptr64 = hs_etl_get_header(etl)->pointer_size == 8;
	CHECK(c->ptr64);
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_agree, c);
	hs_etl_close(etl);
	printf("agree: %u ImageID-class records; %u image events preceded by them; compared %u ImageID, %u DbgID_RSDS, "
	       "%u DbgID None; %u others (FileVersion, ILRSDS); %u without an image event; %u differ\n",
	       c->records_id, c->images_with_ids, c->compared[0], c->compared[36], c->compared[32], c->n_other,
	       c->unmatched, c->mismatched);
	/* The fixture's independent counts: 3728 ImageID, 3680 DbgID_RSDS, 6 None. */
	CHECK(c->compared[0] >= 3720);
	CHECK(c->compared[36] >= 3675);
	CHECK_EQ_INT(c->compared[32], 6);
	CHECK(c->unmatched <= 4);
	CHECK_EQ_INT(c->mismatched, 0);
	free(c);
}

/* ---- builders on their own: sizes, 32-bit layout, limits ---- */

static void test_builders(void)
{
	hs_imageid_header h = {.ptr64 = true, .pid = 0x1234, .tid = 0x5678, .timestamp = 0x1122334455667788ll,
			       .kernel_time = 7, .user_time = 9};
	uint8_t b[512];
	size_t n = hs_imageid_build_image_id(&h, 0x7ff800000000ull, 0x21000, 0x6b102bae, "Ab\xc3\xa9.dll", b, sizeof b);
	/* 0x30 header + base 8 + size 8 + pid 4 + stamp 4 + "Abé.dll\0" in UTF-16 (16 bytes) */
	CHECK_EQ_INT(n, 0x30 + 24 + 16);
	CHECK_EQ_INT(b[0] | b[1] << 8, n);
	CHECK_EQ_INT(b[2], 0x14);
	CHECK_EQ_INT(b[3], 0xC0);
	CHECK_EQ_INT(b[4], 0);
	CHECK_EQ_INT(b[6], 2);
	CHECK_EQ_INT(b[0x30 + 24 + 4], 0xE9); /* é as one UTF-16 unit */
	CHECK_EQ_INT(hs_imageid_build_image_id(&h, 1, 2, 3, "Ab\xc3\xa9.dll", b, n - 1), 0);
	CHECK_EQ_INT(hs_imageid_build_image_id(&h, 1, 2, 3, "Ab\xc3\xa9.dll", b, n), n);

	h.ptr64 = false;
	n = hs_imageid_build_dbgid_rsds(&h, 0x400000, &(hs_guid){1, 2, 3, {4, 5, 6, 7, 8, 9, 10, 11}}, 3, "a.pdb", b,
					sizeof b);
	CHECK_EQ_INT(n, 0x30 + 4 + 4 + 16 + 4 + 6);
	CHECK_EQ_INT(b[2], 0x0A); /* FULL32 */
	CHECK_EQ_INT(b[4], 36);
	CHECK_EQ_INT(b[0x30 + 8], 1); /* GUID right after base (4) and pid (4) */
	CHECK_EQ_INT(hs_imageid_build_dbgid_none(&h, 0x400000, b, sizeof b), 0x30 + 8);
	CHECK_EQ_INT(b[4], 32);
	CHECK_EQ_INT(hs_imageid_build_dbgid_none(&h, 0x400000, b, 0x30 + 7), 0);
}

/* ---- roundtrip ---- */

typedef struct {
	const char *exe, *dll, *none; /* PE files: RSDS exe, RSDS dll with version resource, no debug directory */
	uint32_t calls;
} mapping;

/* Stand-in mapping: ntdll -> the dll, kernel32 -> the image without a debug
 * directory, a few others -> the exe, "missing" names -> a file that does not
 * exist, everything else unmapped. */
static bool map_fake(const char *kpath, char *out, size_t cap, void *ctx)
{
	mapping *m = ctx;
	m->calls++;
	const char *b = strrchr(kpath, '\\');
	b = b ? b + 1 : kpath;
	const char *to = NULL;
	if (strcmp(b, "ntdll.dll") == 0)
		to = m->dll;
	else if (strcmp(b, "kernel32.dll") == 0 || strcmp(b, "KERNEL32.DLL") == 0)
		to = m->none;
	else if (strcmp(b, "KernelBase.dll") == 0 || strcmp(b, "ntoskrnl.exe") == 0 || strcmp(b, "hal.dll") == 0)
		to = m->exe;
	else if (strcmp(b, "user32.dll") == 0)
		to = "/nonexistent/user32.dll";
	if (!to)
		return false;
	snprintf(out, cap, "%s", to);
	return true;
}

/* Counts per (kind/identity) of a file, and checks every added record. */
typedef struct {
	uint64_t total;
	uint64_t by_key[4096]; /* hash of (kind, group/guid, opcode) */
	uint32_t image_events, with_id, id_records, rsds_records, none_records, bad;
	bool ptr64;
	const hs_pe_identity *dll, *exe, *none;
	/* pending per cpu: the last ImageID-class records at a timestamp */
	int64_t last_ts[MAX_CPUS];
	int last_kind[MAX_CPUS]; /* 0 none, 1 ImageID seen, 2 ImageID + DbgID seen */
	hs_etl_image_id last_id[MAX_CPUS];
	hs_etl_dbgid last_dbg[MAX_CPUS];
	bool last_none[MAX_CPUS];
	uint32_t rsds_ok, none_ok, orig_from_resource;
} tally;

static size_t key_of(const hs_etl_record *r)
{
	uint64_t h = (uint64_t)r->kind * 1000003u + r->group * 131u + r->opcode + (uint64_t)r->id * 7919u;
	if (r->has_guid)
		h = h * 31 + r->guid.data1;
	return (size_t)(h % 4096);
}

static const hs_pe_identity *expect_for(const tally *t, const char *kpath)
{
	const char *b = strrchr(kpath, '\\');
	b = b ? b + 1 : kpath;
	if (strcmp(b, "ntdll.dll") == 0)
		return t->dll;
	if (strcmp(b, "kernel32.dll") == 0 || strcmp(b, "KERNEL32.DLL") == 0)
		return t->none;
	if (strcmp(b, "KernelBase.dll") == 0 || strcmp(b, "ntoskrnl.exe") == 0 || strcmp(b, "hal.dll") == 0)
		return t->exe;
	return NULL;
}

static int on_tally(const hs_etl_record *r, void *ctx)
{
	tally *t = ctx;
	t->total++;
	t->by_key[key_of(r)]++;
	if (r->cpu >= MAX_CPUS)
		return 0;
	hs_etlk_kind k = hs_etlk_classify(r);
	if (k == HS_ETLK_IMAGE_ID) {
		t->id_records++;
		t->last_ts[r->cpu] = r->timestamp;
		t->last_kind[r->cpu] = hs_etl_decode_image_id(r, &t->last_id[r->cpu]) ? 1 : -1;
		return 0;
	}
	if (k == HS_ETLK_DBGID_RSDS || (is_id_class(r) && r->opcode == 32)) {
		if (k == HS_ETLK_DBGID_RSDS)
			t->rsds_records++;
		else
			t->none_records++;
		if (t->last_kind[r->cpu] != 1 || t->last_ts[r->cpu] != r->timestamp) {
			t->bad++; /* a DbgID not right after its ImageID */
			return 0;
		}
		t->last_none[r->cpu] = k != HS_ETLK_DBGID_RSDS;
		if (k == HS_ETLK_DBGID_RSDS && !hs_etl_decode_dbgid(r, &t->last_dbg[r->cpu]))
			t->bad++;
		t->last_kind[r->cpu] = 2;
		return 0;
	}
	hs_etl_image img;
	if (k != HS_ETLK_IMAGE || !hs_etl_decode_image(r, &img)) {
		t->last_kind[r->cpu] = 0; /* the identity must come right before its image event */
		return 0;
	}
	{
		t->image_events++;
		const hs_pe_identity *want = expect_for(t, img.file_name);
		bool has = t->last_kind[r->cpu] == 2 && t->last_ts[r->cpu] == r->timestamp;
		t->last_kind[r->cpu] = 0;
		if (!has) {
			if (want)
				t->bad++; /* a mapped image without its identity */
			return 0;
		}
		t->with_id++;
		const hs_etl_image_id *id = &t->last_id[r->cpu];
		if (!want || id->base != img.base || id->size != want->size_of_image ||
		    id->time_date_stamp != want->time_date_stamp || id->pid != (img.version ? img.pid : id->pid)) {
			t->bad++;
			return 0;
		}
		/* OriginalFileName: the version resource's, else the kernel path's base name. */
		const char *b = strrchr(img.file_name, '\\');
		b = b ? b + 1 : img.file_name;
		if (strcmp(id->original_file_name, want->original_filename[0] ? want->original_filename : b) != 0)
			t->bad++;
		else if (want->original_filename[0])
			t->orig_from_resource++;
		if (want->has_rsds) {
			const hs_etl_dbgid *d = &t->last_dbg[r->cpu];
			if (t->last_none[r->cpu] || d->base != img.base || d->age != want->pdb_age ||
			    memcmp(&d->guid, &want->pdb_guid, sizeof d->guid) != 0 ||
			    strcmp(d->pdb_file_name, want->pdb_path) != 0)
				t->bad++;
			else
				t->rsds_ok++;
		} else if (!t->last_none[r->cpu]) {
			t->bad++;
		} else {
			t->none_ok++;
		}
	}
	return 0;
}

static bool tally_file(const char *path, tally *t)
{
	hs_etl *etl;
	if (hs_etl_open(path, &etl) != HS_OK)
		return false;
	t->ptr64 = hs_etl_get_header(etl)->pointer_size == 8;
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_tally, t);
	bool clean = hs_etl_problem_count(etl) == 0;
	hs_etl_close(etl);
	return clean;
}

/* A copy of the merged fixture without its ImageID-class records. */
typedef struct {
	hs_etl_writer *w;
	hs_status st;
	uint32_t dropped;
} strip_ctx;

static int on_strip(const hs_etl_record *r, void *ctx)
{
	strip_ctx *s = ctx;
	if (is_id_class(r)) {
		s->dropped++;
		return 0;
	}
	s->st = hs_etl_writer_copy(s->w, r);
	return s->st != HS_OK;
}

static bool strip_ids(const char *in, const char *out, uint32_t *dropped)
{
	hs_etl *etl;
	if (hs_etl_open(in, &etl) != HS_OK)
		return false;
	hs_etl_writer_opts wo;
	hs_etl_writer_opts_from(hs_etl_get_header(etl), &wo);
	strip_ctx s = {0};
	if (hs_etl_writer_open(out, &wo, &s.w) != HS_OK) {
		hs_etl_close(etl);
		return false;
	}
	hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_strip, &s);
	hs_etl_close(etl);
	if (s.st != HS_OK) {
		hs_etl_writer_discard(s.w);
		return false;
	}
	*dropped = s.dropped;
	return hs_etl_writer_close(s.w) == HS_OK;
}

static void roundtrip_one(const char *name, const char *in, const char *out, mapping *m, const hs_pe_identity ids[3],
			  bool expect_existing)
{
	hs_imageid_opts o = {.map = map_fake, .map_ctx = m, .log = NULL, .ignore_mismatch = true};
	hs_imageid_report rep;
	hs_status st = hs_etl_add_image_ids(in, out, &o, &rep);
	CHECK_EQ_INT(st, HS_OK);
	if (st != HS_OK)
		return;
	printf("%s: %u image events, %u already identified, %u images (%u RSDS, %u no RSDS, %u failed); added %u "
	       "ImageID, %u DbgID_RSDS, %u None; %zu problems listed\n",
	       name, rep.image_events, rep.already_identified, rep.images, rep.images_rsds, rep.images_no_rsds,
	       rep.images_failed, rep.added_image_id, rep.added_dbgid_rsds, rep.added_dbgid_none, rep.n_problems);
	tally *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
	a->dll = b->dll = &ids[1];
	a->exe = b->exe = &ids[0];
	a->none = b->none = &ids[2];
	CHECK(tally_file(in, a));
	CHECK(tally_file(out, b));
	/* Every original record is still there: equal counts per identity, plus the added ones. */
	CHECK_EQ_INT(b->total, a->total + rep.added_image_id + rep.added_dbgid_rsds + rep.added_dbgid_none);
	uint32_t key_diffs = 0;
	for (size_t i = 0; i < 4096; i++)
		if (a->by_key[i] != b->by_key[i])
			key_diffs++;
	CHECK(key_diffs <= 3); /* only the keys of the ImageID class's opcodes 0, 32, 36 change */
	CHECK_EQ_INT(b->image_events, a->image_events);
	CHECK_EQ_INT(rep.image_events, a->image_events);
	CHECK_EQ_INT(b->bad, 0);
	CHECK_EQ_INT(b->id_records - a->id_records, rep.added_image_id);
	CHECK_EQ_INT(rep.added_image_id, rep.added_dbgid_rsds + rep.added_dbgid_none);
	if (!expect_existing) {
		CHECK_EQ_INT(b->with_id, rep.added_image_id);
		CHECK_EQ_INT(b->rsds_ok, rep.added_dbgid_rsds);
		CHECK_EQ_INT(b->none_ok, rep.added_dbgid_none);
	}
	CHECK(rep.added_dbgid_rsds > 0);
	CHECK(rep.added_dbgid_none > 0);
	CHECK(b->orig_from_resource > 0);
	/* Listed: the no-RSDS image, the missing file; unmapped ones too. */
	CHECK_EQ_INT(rep.n_problems, rep.images_no_rsds + rep.images_failed);
	CHECK_EQ_INT(rep.images, rep.images_rsds + rep.images_no_rsds + rep.images_failed);
	CHECK_EQ_INT(rep.images, m->calls);
	bool saw_missing = false;
	for (size_t i = 0; i < rep.n_problems; i++)
		if (strstr(rep.problems[i].kernel_path, "\\user32.dll") && rep.problems[i].status == HS_ENOENT &&
		    rep.problems[i].why == HS_PE_IO && rep.problems[i].events > 0)
			saw_missing = true;
	CHECK(saw_missing);
	if (expect_existing)
		CHECK(rep.already_identified > 0);
	else
		CHECK_EQ_INT(rep.already_identified, 0);
	hs_imageid_report_free(&rep);

	/* Run again on the output: every image event is identified already. */
	char again[1100];
	snprintf(again, sizeof again, "%s.again", out);
	m->calls = 0;
	st = hs_etl_add_image_ids(out, again, &o, &rep);
	CHECK_EQ_INT(st, HS_OK);
	CHECK_EQ_INT(rep.added_image_id, 0);
	CHECK_EQ_INT(rep.already_identified, b->with_id);
	hs_imageid_report_free(&rep);
	remove(again);
	free(a);
	free(b);
}

static void test_roundtrip(const char *work, const char *pedir)
{
	char exe[1024], dll[1024], none[1024];
	snprintf(exe, sizeof exe, "%s/tiny.exe", pedir);
	snprintf(dll, sizeof dll, "%s/tinyver.dll", pedir);
	snprintf(none, sizeof none, "%s/nodebug.exe", pedir);
	hs_pe_identity ids[3];
	CHECK_EQ_INT(hs_pe_read_identity(exe, &ids[0]), HS_OK);
	CHECK_EQ_INT(hs_pe_read_identity(dll, &ids[1]), HS_OK);
	CHECK_EQ_INT(hs_pe_read_identity(none, &ids[2]), HS_ENOENT);
	CHECK(ids[1].original_filename[0] != '\0');
	mapping m = {.exe = exe, .dll = dll, .none = none};

	/* 1. An unmerged kernel rundown trace (image DCStart/DCEnd, loads, unloads). */
	char out[1024];
	snprintf(out, sizeof out, "%s/diaghub-ids.etl", work);
	roundtrip_one("diaghub.kernel.1", fixture("microsoft_perfview/diaghub.kernel.1.etl"), out, &m, ids, false);
	remove(out);

	/* 2. The merged fixture with its xperf records removed. */
	char stripped[1024];
	snprintf(stripped, sizeof stripped, "%s/net-stripped.etl", work);
	uint32_t dropped = 0;
	CHECK(strip_ids(fixture("microsoft_perfview/net.4.5.2.x86.etl"), stripped, &dropped));
	CHECK_EQ_INT(dropped, 3728 + 6 + 3680 + 42 + 680);
	m.calls = 0;
	snprintf(out, sizeof out, "%s/net-ids.etl", work);
	roundtrip_one("net.4.5.2.x86 stripped", stripped, out, &m, ids, false);
	remove(out);
	remove(stripped);

	/* 3. The merged fixture as it is: xperf's records stay, nothing is added twice. */
	m.calls = 0;
	hs_imageid_opts o = {.map = map_fake, .map_ctx = &m, .ignore_mismatch = true};
	hs_imageid_report rep;
	snprintf(out, sizeof out, "%s/net-merged.etl", work);
	CHECK_EQ_INT(hs_etl_add_image_ids(fixture("microsoft_perfview/net.4.5.2.x86.etl"), out, &o, &rep), HS_OK);
	CHECK_EQ_INT(rep.already_identified, 3728);
	CHECK(rep.image_events - rep.already_identified <= 8);
	printf("net.4.5.2.x86 merged: %u of %u image events already identified, %u added\n", rep.already_identified,
	       rep.image_events, rep.added_image_id);
	hs_imageid_report_free(&rep);
	remove(out);

	/* 4. Without ignore_mismatch, a stand-in file whose CheckSum differs from the
	 *    one the kernel logged is refused (diaghub logs checksums). */
	m.calls = 0;
	o.ignore_mismatch = false;
	FILE *log = tmpfile();
	o.log = log;
	snprintf(out, sizeof out, "%s/diaghub-strict.etl", work);
	CHECK_EQ_INT(hs_etl_add_image_ids(fixture("microsoft_perfview/diaghub.kernel.1.etl"), out, &o, &rep), HS_OK);
	CHECK(rep.mismatched_events > 0);
	CHECK_EQ_INT(rep.added_image_id, 0);
	bool listed = false;
	for (size_t i = 0; i < rep.n_problems; i++)
		if (strstr(rep.problems[i].problem.message, "not the loaded image"))
			listed = true;
	CHECK(listed);
	if (log) {
		rewind(log);
		char line[512];
		bool summary = false;
		while (fgets(line, sizeof line, log))
			if (strstr(line, "image events"))
				summary = true;
		CHECK(summary);
		fclose(log);
	}
	hs_imageid_report_free(&rep);
	remove(out);

	/* 5. Errors: same path, missing input. */
	CHECK_EQ_INT(hs_etl_add_image_ids(out, out, NULL, NULL), HS_EINVAL);
	CHECK_EQ_INT(hs_etl_add_image_ids("/nonexistent/x.etl", out, NULL, NULL), HS_ENOENT);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_imageid agree FIXTURES | roundtrip FIXTURES WORKDIR PEDIR\n");
		return 2;
	}
	fixtures = argv[2];
	if (strcmp(argv[1], "agree") == 0) {
		test_builders();
		test_agree();
	} else if (strcmp(argv[1], "roundtrip") == 0 && argc == 5) {
		test_roundtrip(argv[3], argv[4]);
	} else {
		fprintf(stderr, "test_imageid: unknown mode %s\n", argv[1]);
		return 2;
	}
	return hs_test_done("test_imageid");
}
