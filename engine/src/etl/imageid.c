/* etl/imageid.c: adds KernelTraceControl-style ImageID / DbgID records (PE identities) before each kernel image event of an .etl file. */
#include <stdlib.h>
#include <string.h>

#include "etl/etl_format.h"
#include "hindsight/etl_writer.h"
#include "hindsight/hmap.h"
#include "hindsight/imageid.h"
#include "util/text.h"

/*
 * Layouts and placement follow what xperf's merge wrote into the fixture
 * net.4.5.2.x86.etl, byte for byte (docs/imageid-notes.md): a classic FULL
 * header (0x30 bytes) with the ImageID class GUID, Class.Type = opcode,
 * Class.Level 0, Class.Version 2, the image event's thread, process (the
 * payload's ProcessId), timestamp and kernel/user times; then the payload.
 */

enum {
	OP_IMAGE_ID = 0,
	OP_DBGID_NONE = 32,
	OP_DBGID_RSDS = 36,
	ID_VERSION = 2,
	FULL_HEADER_LEN = 0x30,
	HT_FULL32 = 0x0A,
	HT_FULL64 = 0x14,
	MARKER = 0xC0,
	MAX_RECORD = 4096, /* a header, a few fields and two strings of at most ~1 KiB each */
};

/* KernelTraceControl's ImageID class (the same value etl/kernel.c matches),
 * spelled as fields because the project keeps GUID text out of engine sources. */
static const hs_guid image_id_class = {0xb3e675d7u, 0x2554u, 0x4f18u, {0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde}};

/* ---- record builders ---- */

static void put_header(uint8_t *p, const hs_imageid_header *h, uint8_t opcode, size_t total)
{
	hs_put16(p, (uint16_t)total);
	p[2] = h->ptr64 ? HT_FULL64 : HT_FULL32;
	p[3] = MARKER;
	p[4] = opcode;
	p[5] = 0; /* Class.Level */
	hs_put16(p + 6, ID_VERSION);
	hs_put32(p + 8, h->tid);
	hs_put32(p + 12, h->pid);
	hs_put64(p + 16, (uint64_t)h->timestamp);
	hs_put32(p + 24, image_id_class.data1);
	hs_put16(p + 28, image_id_class.data2);
	hs_put16(p + 30, image_id_class.data3);
	memcpy(p + 32, image_id_class.data4, 8);
	hs_put32(p + 40, h->kernel_time);
	hs_put32(p + 44, h->user_time);
}

static size_t put_ptr(uint8_t *p, bool ptr64, uint64_t v)
{
	if (ptr64) {
		hs_put64(p, v);
		return 8;
	}
	hs_put32(p, (uint32_t)v);
	return 4;
}

/* Decodes one UTF-8 code point at s[*i]; invalid bytes give U+FFFD. */
static uint32_t utf8_next(const char *s, size_t *i)
{
	const unsigned char *u = (const unsigned char *)s + *i;
	uint32_t c = u[0];
	size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
	if (n == 0) {
		(*i)++;
		return 0xFFFD;
	}
	if (n == 1) {
		(*i)++;
		return c;
	}
	c &= 0x3Fu >> (n - 1);
	for (size_t k = 1; k < n; k++) {
		if ((u[k] & 0xC0) != 0x80) {
			*i += k;
			return 0xFFFD;
		}
		c = c << 6 | (u[k] & 0x3F);
	}
	*i += n;
	static const uint32_t min_for[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (c < min_for[n] || c > 0x10FFFF || (c >= 0xD800 && c < 0xE000))
		return 0xFFFD;
	return c;
}

/* Writes s as NUL-terminated UTF-16LE at p (room bytes); returns the bytes
 * written or 0 when it does not fit. */
static size_t put_utf16z(uint8_t *p, size_t room, const char *s)
{
	size_t o = 0, i = 0;
	while (s[i]) {
		uint32_t c = utf8_next(s, &i);
		if (c >= 0x10000) {
			if (room - o < 4)
				return 0;
			c -= 0x10000;
			hs_put16(p + o, (uint16_t)(0xD800 + (c >> 10)));
			hs_put16(p + o + 2, (uint16_t)(0xDC00 + (c & 0x3FF)));
			o += 4;
		} else {
			if (room - o < 2)
				return 0;
			hs_put16(p + o, (uint16_t)c);
			o += 2;
		}
	}
	if (room - o < 2)
		return 0;
	hs_put16(p + o, 0);
	return o + 2;
}

size_t hs_imageid_build_image_id(const hs_imageid_header *h, uint64_t image_base, uint64_t image_size,
				 uint32_t time_date_stamp, const char *original_file_name, uint8_t *out, size_t cap)
{
	size_t fixed = FULL_HEADER_LEN + (h->ptr64 ? 16 : 8) + 8;
	if (cap < fixed)
		return 0;
	uint8_t *p = out + FULL_HEADER_LEN;
	p += put_ptr(p, h->ptr64, image_base);
	p += put_ptr(p, h->ptr64, image_size);
	hs_put32(p, h->pid);
	hs_put32(p + 4, time_date_stamp);
	p += 8;
	size_t room = cap - fixed;
	if (room > 0xFFFF - fixed)
		room = 0xFFFF - fixed; /* Size is 16 bits */
	size_t n = put_utf16z(p, room, original_file_name ? original_file_name : "");
	if (n == 0)
		return 0;
	size_t total = fixed + n;
	put_header(out, h, OP_IMAGE_ID, total);
	return total;
}

size_t hs_imageid_build_dbgid_rsds(const hs_imageid_header *h, uint64_t image_base, const hs_guid *guid,
				   uint32_t age, const char *pdb_file_name, uint8_t *out, size_t cap)
{
	size_t fixed = FULL_HEADER_LEN + (h->ptr64 ? 8 : 4) + 4 + 16 + 4;
	const char *name = pdb_file_name ? pdb_file_name : "";
	size_t n = strlen(name) + 1; /* the bytes as the image stores them */
	if (cap < fixed || n > cap - fixed || fixed + n > 0xFFFF)
		return 0;
	uint8_t *p = out + FULL_HEADER_LEN;
	p += put_ptr(p, h->ptr64, image_base);
	hs_put32(p, h->pid);
	hs_put32(p + 4, guid->data1);
	hs_put16(p + 8, guid->data2);
	hs_put16(p + 10, guid->data3);
	memcpy(p + 12, guid->data4, 8);
	hs_put32(p + 20, age);
	memcpy(p + 24, name, n);
	put_header(out, h, OP_DBGID_RSDS, fixed + n);
	return fixed + n;
}

size_t hs_imageid_build_dbgid_none(const hs_imageid_header *h, uint64_t image_base, uint8_t *out, size_t cap)
{
	size_t total = FULL_HEADER_LEN + (h->ptr64 ? 8 : 4) + 4;
	if (cap < total)
		return 0;
	uint8_t *p = out + FULL_HEADER_LEN;
	p += put_ptr(p, h->ptr64, image_base);
	hs_put32(p, h->pid);
	put_header(out, h, OP_DBGID_NONE, total);
	return total;
}

void hs_imageid_header_for(const hs_etl_record *r, const hs_etl_image *img, bool ptr64, hs_imageid_header *h)
{
	memset(h, 0, sizeof *h);
	h->ptr64 = ptr64;
	/* The payload's ProcessId (0 for kernel images, whatever process the
	 * rundown ran in); version 0 events have none, so the header's. */
	h->pid = img->version >= 1 ? img->pid : r->pid != UINT32_MAX ? r->pid : 0;
	h->tid = r->tid; /* UINT32_MAX for PERFINFO headers, as the merge writes it */
	h->timestamp = r->timestamp;
	if (r->kind == HS_ETL_SYSTEM && r->raw_len >= 0x20) {
		h->kernel_time = hs_le32(r->raw + 0x18);
		h->user_time = hs_le32(r->raw + 0x1C);
	}
}

/* ---- the copy ---- */

/* One distinct kernel path and what its file said. */
typedef struct {
	char *kpath;       /* owned */
	hs_status st;
	hs_pe_identity id;
	bool usable;       /* ImageID can be written (st OK, or a valid image without RSDS) */
	bool mismatch_listed;
	size_t problem;    /* index in the report's list, SIZE_MAX when none */
} img_entry;

typedef struct {
	img_entry **slots;
	size_t cap, n;
} path_map;

typedef struct {
	uint64_t *keys; /* (timestamp, base) pairs, 2 per slot; slot empty when both are 0 */
	size_t cap, n;
} pair_set;

typedef struct {
	const hs_imageid_opts *opts;
	hs_imageid_report *rep;
	hs_etl_writer *w;
	bool ptr64;
	path_map paths;
	pair_set existing;
	hs_status st; /* first failure; stops the walk */
	size_t problems_cap;
} run;

static uint64_t hash_str(const char *s)
{
	return hs_hash_bytes(s, strlen(s));
}

static uint64_t hash_pair(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
	return h ^ (h >> 31);
}

static bool pair_grow(pair_set *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 1024;
	uint64_t *k = calloc(ncap * 2, sizeof *k);
	if (!k)
		return false;
	for (size_t i = 0; i < s->cap; i++) {
		uint64_t a = s->keys[2 * i], b = s->keys[2 * i + 1];
		if (!a && !b)
			continue;
		size_t j = hash_pair(a, b) & (ncap - 1);
		while (k[2 * j] || k[2 * j + 1])
			j = (j + 1) & (ncap - 1);
		k[2 * j] = a;
		k[2 * j + 1] = b;
	}
	free(s->keys);
	s->keys = k;
	s->cap = ncap;
	return true;
}

static bool pair_add(pair_set *s, uint64_t a, uint64_t b)
{
	if (!a && !b)
		b = 1; /* (0, 0) marks an empty slot; no real image is at base 1 */
	if ((s->n + 1) * 2 > s->cap && !pair_grow(s))
		return false;
	size_t j = hash_pair(a, b) & (s->cap - 1);
	while (s->keys[2 * j] || s->keys[2 * j + 1]) {
		if (s->keys[2 * j] == a && s->keys[2 * j + 1] == b)
			return true;
		j = (j + 1) & (s->cap - 1);
	}
	s->keys[2 * j] = a;
	s->keys[2 * j + 1] = b;
	s->n++;
	return true;
}

static bool pair_has(const pair_set *s, uint64_t a, uint64_t b)
{
	if (!s->cap)
		return false;
	if (!a && !b)
		b = 1;
	size_t j = hash_pair(a, b) & (s->cap - 1);
	while (s->keys[2 * j] || s->keys[2 * j + 1]) {
		if (s->keys[2 * j] == a && s->keys[2 * j + 1] == b)
			return true;
		j = (j + 1) & (s->cap - 1);
	}
	return false;
}

static img_entry **path_slot(path_map *m, const char *k)
{
	size_t j = hash_str(k) & (m->cap - 1);
	while (m->slots[j] && strcmp(m->slots[j]->kpath, k) != 0)
		j = (j + 1) & (m->cap - 1);
	return &m->slots[j];
}

static bool path_grow(path_map *m)
{
	path_map n = {.cap = m->cap ? m->cap * 2 : 256};
	n.slots = calloc(n.cap, sizeof *n.slots);
	if (!n.slots)
		return false;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i])
			*path_slot(&n, m->slots[i]->kpath) = m->slots[i];
	n.n = m->n;
	free(m->slots);
	*m = n;
	return true;
}

static void path_free(path_map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i]) {
			free(m->slots[i]->kpath);
			free(m->slots[i]);
		}
	}
	free(m->slots);
}

static void copy_cut(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap) {
		n = cap - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80) /* keep whole UTF-8 characters */
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Lists a problem for e; returns false when out of memory. */
static bool list_problem(run *R, img_entry *e, const char *local, hs_status st, hs_pe_why why, hs_problem_kind kind,
			 const char *msg)
{
	hs_imageid_report *rep = R->rep;
	if (rep->n_problems == R->problems_cap) {
		size_t ncap = R->problems_cap ? R->problems_cap * 2 : 8;
		hs_imageid_problem *p = realloc(rep->problems, ncap * sizeof *p);
		if (!p)
			return false;
		rep->problems = p;
		R->problems_cap = ncap;
	}
	hs_imageid_problem *p = &rep->problems[rep->n_problems];
	memset(p, 0, sizeof *p);
	copy_cut(p->kernel_path, sizeof p->kernel_path, e->kpath);
	copy_cut(p->local_path, sizeof p->local_path, local ? local : "");
	p->status = st;
	p->why = why;
	p->problem.kind = kind;
	p->problem.offset = UINT64_MAX;
	p->problem.cpu = -1;
	copy_cut(p->problem.message, sizeof p->problem.message, msg);
	e->problem = rep->n_problems++;
	if (R->opts->log)
		fprintf(R->opts->log, "image id: %s%s%s: %s\n", e->kpath, local && *local ? " -> " : "",
			local ? local : "", msg);
	return true;
}

/* Finds or reads the identity of an image's file. NULL on out of memory. */
static img_entry *lookup(run *R, const char *kpath)
{
	if ((R->paths.n + 1) * 2 > R->paths.cap && !path_grow(&R->paths))
		return NULL;
	img_entry **slot = path_slot(&R->paths, kpath);
	if (*slot)
		return *slot;
	img_entry *e = calloc(1, sizeof *e);
	if (!e || !(e->kpath = malloc(strlen(kpath) + 1))) {
		free(e);
		return NULL;
	}
	strcpy(e->kpath, kpath);
	e->problem = SIZE_MAX;
	*slot = e;
	R->paths.n++;
	R->rep->images++;

	char local[1024];
	bool mapped = true;
	if (R->opts->map)
		mapped = R->opts->map(kpath, local, sizeof local, R->opts->map_ctx);
	else
		copy_cut(local, sizeof local, kpath);
	if (!mapped) {
		local[0] = '\0';
		e->st = HS_ENOENT;
		R->rep->images_failed++;
		return list_problem(R, e, "", HS_ENOENT, HS_PE_IO, HS_PROBLEM_UNREADABLE,
				    "the path could not be mapped to a local file")
			       ? e
			       : NULL;
	}
	local[sizeof local - 1] = '\0';
	e->st = hs_pe_read_identity(local, &e->id);
	if (e->st == HS_OK) {
		e->usable = true;
		R->rep->images_rsds++;
		return e;
	}
	char msg[256];
	snprintf(msg, sizeof msg, "%s: %s", hs_pe_why_name(e->id.why), e->id.message);
	if (e->id.why == HS_PE_NO_DEBUG_DIR || e->id.why == HS_PE_NO_RSDS) {
		e->usable = true; /* ImageID + DbgID None, as the merge does for such images */
		R->rep->images_no_rsds++;
	} else {
		R->rep->images_failed++;
	}
	hs_problem_kind kind = e->usable ? HS_PROBLEM_NAME_UNKNOWN : HS_PROBLEM_UNREADABLE;
	return list_problem(R, e, local, e->st, e->id.why, kind, msg) ? e : NULL;
}

static hs_status add_raw(run *R, const hs_etl_record *r, const uint8_t *b, size_t n)
{
	/* Records of the source's buffer 0 are copied into the header buffer; the
	 * identities of an image event there go with it. */
	if (r->buffer_index == 0)
		return hs_etl_writer_add_header_raw(R->w, b, n);
	return hs_etl_writer_add_raw(R->w, r->cpu, b, n);
}

/* The identity records for one image event, before it. */
static hs_status identify(run *R, const hs_etl_record *r, const hs_etl_image *img)
{
	hs_imageid_report *rep = R->rep;
	if (pair_has(&R->existing, (uint64_t)r->timestamp, img->base)) {
		rep->already_identified++;
		return HS_OK;
	}
	img_entry *e = lookup(R, img->file_name);
	if (!e)
		return HS_ENOMEM;
	if (e->problem != SIZE_MAX)
		rep->problems[e->problem].events++;
	if (!e->usable)
		return HS_OK;
	/* A file that is not what was loaded (updated since) would give wrong
	 * symbols: the kernel logs the loaded image's CheckSum (and, for
	 * kernel images, its TimeDateStamp); both must match when logged. */
	const hs_pe_identity *id = &e->id;
	bool differs = (img->checksum && img->checksum != id->checksum) ||
		       (img->time_date_stamp && img->time_date_stamp != id->time_date_stamp);
	if (differs && !R->opts->ignore_mismatch) {
		rep->mismatched_events++;
		if (!e->mismatch_listed) {
			char msg[192];
			snprintf(msg, sizeof msg,
				 "the file is not the loaded image: CheckSum 0x%08x / TimeDateStamp 0x%08x, the trace logged 0x%08x / 0x%08x",
				 (unsigned)id->checksum, (unsigned)id->time_date_stamp, (unsigned)img->checksum,
				 (unsigned)img->time_date_stamp);
			e->mismatch_listed = true;
			if (!list_problem(R, e, "", HS_EINVAL, HS_PE_OK, HS_PROBLEM_NAME_UNKNOWN, msg))
				return HS_ENOMEM;
		}
		return HS_OK;
	}
	hs_imageid_header h;
	hs_imageid_header_for(r, img, R->ptr64, &h);
	uint8_t b[MAX_RECORD];
	const char *orig = id->original_filename[0] ? id->original_filename : hs_path_base(img->file_name);
	size_t n = hs_imageid_build_image_id(&h, img->base, id->size_of_image, id->time_date_stamp, orig, b, sizeof b);
	hs_status st = n ? add_raw(R, r, b, n) : HS_ELIMIT;
	if (st != HS_OK)
		return st;
	rep->added_image_id++;
	if (id->has_rsds) {
		n = hs_imageid_build_dbgid_rsds(&h, img->base, &id->pdb_guid, id->pdb_age, id->pdb_path, b, sizeof b);
		rep->added_dbgid_rsds++;
	} else {
		n = hs_imageid_build_dbgid_none(&h, img->base, b, sizeof b);
		rep->added_dbgid_none++;
	}
	return n ? add_raw(R, r, b, n) : HS_ELIMIT;
}

/* Pass 1: the (timestamp, ImageBase) of every ImageID already in the file. */
static int on_existing(const hs_etl_record *r, void *ctx)
{
	run *R = ctx;
	hs_etl_image_id id;
	if (hs_etlk_classify(r) == HS_ETLK_IMAGE_ID && hs_etl_decode_image_id(r, &id) &&
	    !pair_add(&R->existing, (uint64_t)r->timestamp, id.base)) {
		R->st = HS_ENOMEM;
		return 1;
	}
	return 0;
}

/* Pass 2: copy, with the identities before each image event. */
static int on_copy(const hs_etl_record *r, void *ctx)
{
	run *R = ctx;
	R->rep->records_in++;
	hs_etl_image img;
	if (hs_etlk_classify(r) == HS_ETLK_IMAGE && hs_etl_decode_image(r, &img)) {
		R->rep->image_events++;
		hs_status st = identify(R, r, &img);
		if (st != HS_OK) {
			R->st = st;
			return 1;
		}
	}
	hs_status st = hs_etl_writer_copy(R->w, r);
	if (st != HS_OK) {
		R->st = st;
		return 1;
	}
	return 0;
}

hs_status hs_etl_add_image_ids(const char *in_etl, const char *out_etl, const hs_imageid_opts *opts,
			       hs_imageid_report *rep)
{
	hs_imageid_opts no_opts = {0};
	hs_imageid_report scratch;
	if (!opts)
		opts = &no_opts;
	if (!rep)
		rep = &scratch;
	memset(rep, 0, sizeof *rep);
	if (!in_etl || !out_etl || strcmp(in_etl, out_etl) == 0)
		return HS_EINVAL;
	hs_etl *etl;
	hs_status st = hs_etl_open(in_etl, &etl);
	if (st != HS_OK)
		return st;
	const hs_etl_header *hdr = hs_etl_get_header(etl);
	run R = {.opts = opts, .rep = rep, .ptr64 = !hdr->valid || hdr->pointer_size != 4};
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_existing, &R);
	if (R.st == HS_OK) {
		hs_etl_writer_opts wo;
		hs_etl_writer_opts_from(hdr, &wo);
		st = hs_etl_writer_open(out_etl, &wo, &R.w);
		if (st == HS_OK) {
			/* Time order walks each processor's buffers by sequence number,
			 * so a wrapped circular file keeps each processor's order. */
			hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_copy, &R);
			if (R.st == HS_OK)
				R.st = hs_etl_writer_close(R.w);
			else
				hs_etl_writer_discard(R.w);
		} else {
			R.st = st;
		}
	}
	rep->input_problems = hs_etl_problem_count(etl);
	hs_etl_close(etl);
	path_free(&R.paths);
	free(R.existing.keys);
	if (opts->log && R.st == HS_OK)
		fprintf(opts->log,
			"image id: %u image events (%u already identified); %u images: %u with RSDS, %u without, %u not identified; added %u ImageID, %u DbgID_RSDS, %u DbgID None\n",
			(unsigned)rep->image_events, (unsigned)rep->already_identified, (unsigned)rep->images,
			(unsigned)rep->images_rsds, (unsigned)rep->images_no_rsds, (unsigned)rep->images_failed,
			(unsigned)rep->added_image_id, (unsigned)rep->added_dbgid_rsds, (unsigned)rep->added_dbgid_none);
	if (rep == &scratch || R.st != HS_OK)
		hs_imageid_report_free(rep);
	return R.st;
}

void hs_imageid_report_free(hs_imageid_report *rep)
{
	if (!rep)
		return;
	free(rep->problems);
	rep->problems = NULL;
	rep->n_problems = 0;
}
