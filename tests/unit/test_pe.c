/* test_pe.c: the PE identity reader on synthetic PE32/PE32+ images (every truncation, damaged fields, mutations) and on real mingw-w64 images against objdump. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "hindsight/pe.h"

/*
 * test_pe                      synthetic images only (unit:pe)
 * test_pe DIR IMAGE...         also each DIR/IMAGE against DIR/IMAGE.objdump,
 *                              the output of x86_64-w64-mingw32-objdump -p (pe:mingw)
 */

/* ---- a synthetic image ---- */

typedef struct {
	bool pe32plus;
	bool debug;        /* a debug directory (a POGO entry, then CodeView) */
	const char *cv;    /* CodeView signature: "RSDS" or "NB10" */
	bool cv_by_rva;    /* PointerToRawData 0: found through AddressOfRawData */
	bool cv_no_nul;    /* SizeOfData ends right after the path (no terminator) */
	const char *pdb;
	bool version;      /* an RT_VERSION resource */
	bool two_tables;   /* a German table first, the Translation names the English one */
	bool translation;  /* a VarFileInfo Translation */
	bool rsrc_last;    /* .rsrc after .rdata in the file */
} spec;

typedef struct {
	size_t len;
	size_t rdata, rsrc;   /* file offsets of the sections */
	size_t cv_end;        /* end of the CodeView data */
	size_t blob_end;      /* end of the version blob */
	size_t lfanew, opt, dirs, sect;
} layout;

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

/* VS_VERSIONINFO writer: nodes with a UTF-16 key (ASCII here), a value and children. */
typedef struct {
	uint8_t *b;
	size_t o;
} vw;

static void vw_align(vw *w)
{
	while (w->o % 4)
		w->b[w->o++] = 0;
}

static size_t vw_begin(vw *w, const char *key, uint16_t value_len, uint16_t type)
{
	vw_align(w);
	size_t at = w->o;
	put16(w->b + at + 2, value_len);
	put16(w->b + at + 4, type);
	w->o += 6;
	for (const char *k = key; *k; k++, w->o += 2)
		put16(w->b + w->o, (uint8_t)*k);
	put16(w->b + w->o, 0);
	w->o += 2;
	vw_align(w);
	return at;
}

static void vw_end(vw *w, size_t at)
{
	put16(w->b + at, (uint16_t)(w->o - at));
}

static void vw_string(vw *w, const char *key, const char *value)
{
	size_t n = strlen(value) + 1;
	size_t at = vw_begin(w, key, (uint16_t)n, 1);
	for (size_t i = 0; i < n; i++, w->o += 2)
		put16(w->b + w->o, (uint8_t)value[i]);
	vw_end(w, at);
}

static size_t version_blob(uint8_t *b, const spec *s)
{
	vw w = {b, 0};
	size_t root = vw_begin(&w, "VS_VERSION_INFO", 52, 0);
	put32(w.b + w.o, 0xFEEF04BDu); /* VS_FIXEDFILEINFO signature; the rest zero */
	memset(w.b + w.o + 4, 0, 48);
	w.o += 52;
	size_t sfi = vw_begin(&w, "StringFileInfo", 0, 1);
	if (s->two_tables) {
		size_t t = vw_begin(&w, "040704b0", 0, 1);
		vw_string(&w, "FileDescription", "Testbild");
		vw_string(&w, "OriginalFilename", "Falsch.dll");
		vw_end(&w, t);
	}
	size_t t = vw_begin(&w, "040904b0", 0, 1);
	vw_string(&w, "FileDescription", "test image");
	vw_string(&w, "OriginalFilename", "Right.DLL");
	vw_end(&w, t);
	vw_end(&w, sfi);
	if (s->translation) {
		size_t vfi = vw_begin(&w, "VarFileInfo", 0, 1);
		size_t tr = vw_begin(&w, "Translation", 4, 0);
		put16(w.b + w.o, 0x0409);
		put16(w.b + w.o + 2, 1200);
		w.o += 4;
		vw_end(&w, tr);
		vw_end(&w, vfi);
	}
	vw_end(&w, root);
	return w.o;
}

enum { FILE_ALIGN = 0x200, SEC_RDATA_VA = 0x2000, SEC_RSRC_VA = 0x3000 };

static const uint8_t test_guid[16] = {0x42, 0xb0, 0x86, 0x15, 0x2f, 0x54, 0x8f, 0xe6,
				      0x5e, 0xf6, 0x62, 0x23, 0x23, 0xe1, 0x24, 0xf0};

/* Builds the image into b (zeroed, cap bytes) and returns its length. */
static size_t build(const spec *s, uint8_t *b, size_t cap, layout *L)
{
	memset(b, 0, cap);
	memset(L, 0, sizeof *L);
	b[0] = 'M';
	b[1] = 'Z';
	L->lfanew = 0x80;
	put32(b + 0x3C, (uint32_t)L->lfanew);
	uint8_t *nt = b + L->lfanew;
	memcpy(nt, "PE\0\0", 4);
	uint16_t opt_len = s->pe32plus ? 0xF0 : 0xE0;
	put16(nt + 4, s->pe32plus ? 0x8664 : 0x14c);
	put16(nt + 6, 3);
	put32(nt + 8, 0x5F00AA11u);
	put16(nt + 20, opt_len);
	put16(nt + 22, 0x2022);
	L->opt = L->lfanew + 24;
	uint8_t *opt = b + L->opt;
	put16(opt, s->pe32plus ? 0x20b : 0x10b);
	put32(opt + 32, 0x1000); /* SectionAlignment */
	put32(opt + 36, FILE_ALIGN);
	put32(opt + 56, 0x4000); /* SizeOfImage */
	put32(opt + 60, 0x200);  /* SizeOfHeaders */
	put32(opt + 64, 0x0001ABCDu);
	put32(opt + (s->pe32plus ? 108 : 92), 16);
	L->dirs = L->opt + (s->pe32plus ? 112 : 96);
	L->sect = L->opt + opt_len;

	L->rdata = s->rsrc_last ? 0x400 : 0x800;
	L->rsrc = s->rsrc_last ? 0x600 : 0x400;
	size_t rsrc_raw = 0x400, rdata_raw = 0x200;
	struct {
		const char *name;
		uint32_t va, vsize, raw, ptr;
	} sec[3] = {{".text", 0x1000, 0x10, 0x200, 0x200},
		    {".rdata", SEC_RDATA_VA, 0x100, (uint32_t)rdata_raw, (uint32_t)L->rdata},
		    {".rsrc", SEC_RSRC_VA, 0x0 /* 0: the raw size counts */, (uint32_t)rsrc_raw, (uint32_t)L->rsrc}};
	for (int i = 0; i < 3; i++) {
		uint8_t *h = b + L->sect + 40 * i;
		memcpy(h, sec[i].name, strlen(sec[i].name));
		put32(h + 8, sec[i].vsize);
		put32(h + 12, sec[i].va);
		put32(h + 16, sec[i].raw);
		put32(h + 20, sec[i].ptr);
	}
	b[0x200] = 0xC3; /* ret */

	/* .rdata: the debug directory (POGO, then CodeView) and the CodeView data at +0x40. */
	if (s->debug) {
		put32(b + L->dirs + 8 * 6, SEC_RDATA_VA);
		put32(b + L->dirs + 8 * 6 + 4, 2 * 28);
		uint8_t *e = b + L->rdata;
		put32(e + 12, 13); /* IMAGE_DEBUG_TYPE_POGO */
		e += 28;
		size_t plen = strlen(s->pdb);
		size_t cv_len = 24 + plen + (s->cv_no_nul ? 0 : 1);
		put32(e + 12, 2);
		put32(e + 16, (uint32_t)cv_len);
		put32(e + 20, SEC_RDATA_VA + 0x40);
		put32(e + 24, s->cv_by_rva ? 0 : (uint32_t)(L->rdata + 0x40));
		uint8_t *cv = b + L->rdata + 0x40;
		memcpy(cv, s->cv, 4);
		memcpy(cv + 4, test_guid, 16);
		put32(cv + 20, 7);
		memcpy(cv + 24, s->pdb, plen);
		L->cv_end = L->rdata + 0x40 + cv_len;
	} else {
		L->cv_end = 0;
	}

	/* .rsrc: root -> 16 -> 1 -> 0x409 -> data entry -> blob */
	if (s->version) {
		put32(b + L->dirs + 8 * 2, SEC_RSRC_VA);
		put32(b + L->dirs + 8 * 2 + 4, (uint32_t)rsrc_raw);
		uint8_t *r = b + L->rsrc;
		put16(r + 14, 1);
		put32(r + 16, 16);
		put32(r + 20, 0x80000000u | 0x18);
		put16(r + 0x18 + 14, 1);
		put32(r + 0x18 + 16, 1);
		put32(r + 0x18 + 20, 0x80000000u | 0x30);
		put16(r + 0x30 + 14, 1);
		put32(r + 0x30 + 16, 0x409);
		put32(r + 0x30 + 20, 0x48);
		size_t n = version_blob(r + 0x58, s);
		put32(r + 0x48, SEC_RSRC_VA + 0x58);
		put32(r + 0x48 + 4, (uint32_t)n);
		L->blob_end = L->rsrc + 0x58 + n;
	}
	size_t end = L->rdata + rdata_raw > L->rsrc + rsrc_raw ? L->rdata + rdata_raw : L->rsrc + rsrc_raw;
	L->len = end;
	return end;
}

static spec full_spec(bool pe32plus)
{
	spec s = {.pe32plus = pe32plus, .debug = true, .cv = "RSDS", .pdb = "C:\\build\\obj\\Release\\test.pdb",
		  .version = true, .translation = true};
	return s;
}

/* Parses len bytes from an exact-size copy, so an over-read is a sanitizer error. */
static hs_status parse_copy(const uint8_t *b, size_t len, hs_pe_identity *id)
{
	uint8_t *c = malloc(len ? len : 1);
	memcpy(c, b, len);
	hs_status st = hs_pe_read_identity_memory(c, len, id);
	free(c);
	return st;
}

static bool strings_terminated(const hs_pe_identity *id)
{
	return memchr(id->pdb_path, 0, sizeof id->pdb_path) && memchr(id->original_filename, 0, sizeof id->original_filename) &&
	       memchr(id->message, 0, sizeof id->message);
}

static void check_full(const hs_pe_identity *id, bool pe32plus)
{
	CHECK_EQ_INT(id->machine, pe32plus ? 0x8664 : 0x14c);
	CHECK(id->pe32plus == pe32plus);
	CHECK_EQ_INT(id->characteristics, 0x2022);
	CHECK_EQ_INT(id->time_date_stamp, 0x5F00AA11u);
	CHECK_EQ_INT(id->size_of_image, 0x4000);
	CHECK_EQ_INT(id->checksum, 0x0001ABCD);
	CHECK(id->has_rsds);
	CHECK_EQ_INT(id->pdb_guid.data1, 0x1586b042u);
	CHECK_EQ_INT(id->pdb_guid.data2, 0x542f);
	CHECK_EQ_INT(id->pdb_guid.data3, 0xe68f);
	CHECK(memcmp(id->pdb_guid.data4, test_guid + 8, 8) == 0);
	CHECK_EQ_INT(id->pdb_age, 7);
	CHECK_EQ_STR(id->pdb_path, "C:\\build\\obj\\Release\\test.pdb");
	CHECK_EQ_STR(id->original_filename, "Right.DLL");
	CHECK(!id->version_damaged);
	CHECK_EQ_INT(id->why, HS_PE_OK);
}

static uint8_t img[0x1000];

static void test_well_formed(void)
{
	layout L;
	hs_pe_identity id;
	for (int plus = 0; plus < 2; plus++) {
		spec s = full_spec(plus);
		size_t n = build(&s, img, sizeof img, &L);
		CHECK_EQ_INT(parse_copy(img, n, &id), HS_OK);
		check_full(&id, plus);
		s.rsrc_last = true;
		n = build(&s, img, sizeof img, &L);
		CHECK_EQ_INT(parse_copy(img, n, &id), HS_OK);
		check_full(&id, plus);
		s.cv_by_rva = true;
		n = build(&s, img, sizeof img, &L);
		CHECK_EQ_INT(parse_copy(img, n, &id), HS_OK);
		check_full(&id, plus);
	}
	/* Table choice: the one the Translation names, else the first. */
	spec s = full_spec(true);
	s.two_tables = true;
	size_t n = build(&s, img, sizeof img, &L);
	CHECK_EQ_INT(parse_copy(img, n, &id), HS_OK);
	CHECK_EQ_STR(id.original_filename, "Right.DLL");
	s.translation = false;
	n = build(&s, img, sizeof img, &L);
	CHECK_EQ_INT(parse_copy(img, n, &id), HS_OK);
	CHECK_EQ_STR(id.original_filename, "Falsch.dll");
	/* No version resource: no name, nothing damaged. */
	s = full_spec(true);
	s.version = false;
	n = build(&s, img, sizeof img, &L);
	CHECK_EQ_INT(parse_copy(img, n, &id), HS_OK);
	CHECK_EQ_STR(id.original_filename, "");
	CHECK(!id.version_damaged);
	/* A path without its terminator runs to the end of the entry. */
	s = full_spec(false);
	s.cv_no_nul = true;
	n = build(&s, img, sizeof img, &L);
	CHECK_EQ_INT(parse_copy(img, n, &id), HS_OK);
	CHECK_EQ_STR(id.pdb_path, "C:\\build\\obj\\Release\\test.pdb");
	/* An empty PDB name (ld --build-id without --pdb). */
	s.cv_no_nul = false;
	s.pdb = "";
	n = build(&s, img, sizeof img, &L);
	CHECK_EQ_INT(parse_copy(img, n, &id), HS_OK);
	CHECK(id.has_rsds);
	CHECK_EQ_STR(id.pdb_path, "");
}

static void test_no_identity(void)
{
	layout L;
	hs_pe_identity id;
	spec s = full_spec(true);
	s.debug = false;
	size_t n = build(&s, img, sizeof img, &L);
	CHECK_EQ_INT(parse_copy(img, n, &id), HS_ENOENT);
	CHECK_EQ_INT(id.why, HS_PE_NO_DEBUG_DIR);
	CHECK(!id.has_rsds);
	/* The header fields and the name are still there. */
	CHECK_EQ_INT(id.time_date_stamp, 0x5F00AA11u);
	CHECK_EQ_INT(id.size_of_image, 0x4000);
	CHECK_EQ_INT(id.checksum, 0x0001ABCD);
	CHECK_EQ_STR(id.original_filename, "Right.DLL");
	CHECK_CONTAINS(id.message, "debug directory");

	s = full_spec(false);
	s.cv = "NB10";
	n = build(&s, img, sizeof img, &L);
	CHECK_EQ_INT(parse_copy(img, n, &id), HS_ENOENT);
	CHECK_EQ_INT(id.why, HS_PE_NO_RSDS);
	CHECK_EQ_INT(id.size_of_image, 0x4000);
	CHECK_CONTAINS(id.message, "not RSDS");

	/* Only the POGO entry. */
	s = full_spec(true);
	n = build(&s, img, sizeof img, &L);
	put32(img + L.dirs + 8 * 6 + 4, 28);
	CHECK_EQ_INT(parse_copy(img, n, &id), HS_ENOENT);
	CHECK_EQ_INT(id.why, HS_PE_NO_RSDS);
	CHECK_CONTAINS(id.message, "no CodeView entry");

	CHECK(strcmp(hs_pe_why_name(HS_PE_NO_RSDS), "no RSDS") == 0);
}

/* Every prefix of the image: nothing is read past the end, and each result
 * is what that cut allows. */
static void test_truncations(void)
{
	for (int variant = 0; variant < 4; variant++) {
		spec s = full_spec(variant & 1);
		s.rsrc_last = variant & 2;
		layout L;
		size_t n = build(&s, img, sizeof img, &L);
		hs_pe_identity id;
		unsigned bad = 0;
		for (size_t len = 0; len < n; len++) {
			hs_status st = parse_copy(img, len, &id);
			bool ok;
			if (!strings_terminated(&id))
				ok = false;
			else if (len < 2)
				ok = st == HS_EINVAL && id.why == HS_PE_NOT_PE;
			else if (len < L.cv_end)
				ok = st == HS_EINVAL && id.why == HS_PE_TRUNCATED && id.message[0];
			else if (len < L.blob_end) /* only with .rsrc last: the name is lost, the rest stays */
				ok = st == HS_OK && id.has_rsds && id.version_damaged && !id.original_filename[0];
			else
				ok = st == HS_OK && strcmp(id.original_filename, "Right.DLL") == 0 && id.has_rsds;
			if (!ok && bad++ < 5)
				fprintf(stderr, "variant %d, cut at %zu of %zu: status %d, %s: %s\n", variant, len, n, st,
					hs_pe_why_name(id.why), id.message);
		}
		CHECK_EQ_INT(bad, 0);
	}
}

/* One damaged field at a time. */
static void test_damage(void)
{
	layout L;
	hs_pe_identity id;
	spec s = full_spec(true);
	size_t n = build(&s, img, sizeof img, &L);
	uint8_t *c = malloc(n);

#define DAMAGE(setup, want_st, want_why)                                  \
	do {                                                              \
		memcpy(c, img, n);                                        \
		setup;                                                    \
		CHECK_EQ_INT(hs_pe_read_identity_memory(c, n, &id), want_st); \
		CHECK_EQ_INT(id.why, want_why);                           \
		CHECK(id.message[0] != '\0');                             \
	} while (0)

	DAMAGE(c[1] = 'X', HS_EINVAL, HS_PE_NOT_PE);
	DAMAGE(put32(c + 0x3C, 0xFFFFFFF0u), HS_EINVAL, HS_PE_TRUNCATED);
	DAMAGE(c[L.lfanew + 1] = 'X', HS_EINVAL, HS_PE_NOT_PE);
	DAMAGE(put16(c + L.opt, 0x107), HS_EINVAL, HS_PE_NOT_PE);
	DAMAGE(put16(c + L.lfanew + 20, 0), HS_EINVAL, HS_PE_NOT_PE);        /* no optional header: an object file */
	DAMAGE(put16(c + L.lfanew + 20, 0x40), HS_EINVAL, HS_PE_CORRUPT);    /* shorter than its fixed part */
	DAMAGE(put16(c + L.lfanew + 6, 0xFFFF), HS_EINVAL, HS_PE_TRUNCATED); /* 65535 sections */
	DAMAGE(put32(c + L.dirs + 8 * 6, 0x9000), HS_EINVAL, HS_PE_CORRUPT); /* debug directory outside every section */
	DAMAGE(put32(c + L.dirs + 8 * 6 + 4, 10), HS_EINVAL, HS_PE_CORRUPT); /* not one whole entry */
	DAMAGE(put32(c + L.dirs + 8 * 6, 0x2100), HS_EINVAL, HS_PE_CORRUPT); /* past the section's file data */
	DAMAGE(put32(c + L.rdata + 28 + 16, 20), HS_EINVAL, HS_PE_CORRUPT);  /* RSDS shorter than 24 bytes */
	DAMAGE(put32(c + L.rdata + 28 + 24, 0x7FFFFFF0u), HS_EINVAL, HS_PE_TRUNCATED); /* CodeView past the end */
	DAMAGE((put32(c + L.rdata + 28 + 24, 0), put32(c + L.rdata + 28 + 20, 0x7000)), HS_EINVAL, HS_PE_CORRUPT);
	/* A huge debug directory is read up to a bound, not trusted. */
	DAMAGE(put32(c + L.dirs + 8 * 6 + 4, 0xFFFFFFF0u), HS_EINVAL, HS_PE_CORRUPT);

	/* Damaged resources: the identity stands, the name is dropped. */
	const size_t r = L.rsrc;
	struct {
		size_t at;
		uint32_t v;
		bool v16;
	} res_damage[] = {
		{r + 14, 0xFFFF, true},          /* 65535 root entries */
		{r + 20, 0x18, false},           /* RT_VERSION entry is a leaf */
		{r + 0x18 + 20, 0x80000000u | 0x30000, false}, /* subdirectory far outside */
		{r + 0x30 + 20, 0x80000000u, false},           /* language entry loops back to the root */
		{r + 0x48, SEC_RSRC_VA + 0x3F0, false},        /* blob runs past the section */
		{r + 0x48 + 4, 0x00FFFFFF, false},             /* blob larger than any VS_VERSIONINFO */
		{r + 0x58, 3, true},                            /* wLength below a node header */
		{r + 0x58 + 6, 'W', true},                      /* not VS_VERSION_INFO */
	};
	for (size_t i = 0; i < sizeof res_damage / sizeof res_damage[0]; i++) {
		memcpy(c, img, n);
		if (res_damage[i].v16)
			put16(c + res_damage[i].at, (uint16_t)res_damage[i].v);
		else
			put32(c + res_damage[i].at, res_damage[i].v);
		hs_status st = hs_pe_read_identity_memory(c, n, &id);
		CHECK_EQ_INT(st, HS_OK);
		CHECK(id.has_rsds);
		CHECK(id.version_damaged);
		CHECK_EQ_STR(id.original_filename, "");
	}
	free(c);
#undef DAMAGE
}

/* Random damage: 1-8 bytes changed, in the headers or anywhere. Whatever
 * comes out, the result is consistent and nothing is read out of bounds. */
static void test_mutations(void)
{
	uint32_t seed = 12345;
	unsigned counts[3] = {0};
	for (int round = 0; round < 20000; round++) {
		spec s = full_spec(round & 1);
		s.rsrc_last = round & 2;
		layout L;
		size_t n = build(&s, img, sizeof img, &L);
		int k = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 8;
		for (int j = 0; j < k; j++) {
			seed = seed * 1103515245u + 12345u;
			size_t span = (round & 4) ? n : L.sect + 3 * 40;
			size_t at = (seed >> 8) % span;
			seed = seed * 1103515245u + 12345u;
			img[at] = (uint8_t)(seed >> 16);
		}
		size_t len = (round & 8) ? n - ((seed >> 4) % 64) : n;
		hs_pe_identity id;
		hs_status st = parse_copy(img, len, &id);
		bool ok = strings_terminated(&id) && (st == HS_OK || st == HS_EINVAL || st == HS_ENOENT);
		if (st == HS_OK)
			ok = ok && id.why == HS_PE_OK && id.has_rsds;
		else if (st == HS_ENOENT)
			ok = ok && (id.why == HS_PE_NO_DEBUG_DIR || id.why == HS_PE_NO_RSDS) && !id.has_rsds;
		else
			ok = ok && (id.why == HS_PE_NOT_PE || id.why == HS_PE_TRUNCATED || id.why == HS_PE_CORRUPT);
		if (!ok) {
			CHECK(ok);
			fprintf(stderr, "mutation round %d: status %d, why %d\n", round, st, id.why);
			break;
		}
		counts[st == HS_OK ? 0 : st == HS_ENOENT ? 1 : 2]++;
	}
	printf("mutations: %u identified, %u without PDB identity, %u rejected\n", counts[0], counts[1], counts[2]);
	CHECK(counts[0] > 0 && counts[2] > 0);
}

static void test_files(void)
{
	hs_pe_identity id;
	CHECK_EQ_INT(hs_pe_read_identity("/nonexistent/dir/x.dll", &id), HS_ENOENT);
	CHECK_EQ_INT(id.why, HS_PE_IO);
	CHECK_EQ_INT(hs_pe_read_identity(NULL, &id), HS_EINVAL);
	CHECK_EQ_INT(hs_pe_read_identity_memory(NULL, 0, &id), HS_EINVAL);
	/* The file reader and the memory reader agree. */
	char path[] = "test_pe_synthetic.dll";
	layout L;
	spec s = full_spec(true);
	size_t n = build(&s, img, sizeof img, &L);
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_EQ_INT(fwrite(img, 1, n, f), n);
	fclose(f);
	CHECK_EQ_INT(hs_pe_read_identity(path, &id), HS_OK);
	check_full(&id, true);
	remove(path);
}

/* ---- real images against objdump -p ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	if (b) {
		b[n] = '\0';
		*len = (size_t)n;
	}
	return b;
}

/* The value after "key" on its line, e.g. field(dump, "\nSizeOfImage") -> "00022000". */
static const char *field(const char *dump, const char *key, char *out, size_t cap)
{
	const char *p = strstr(dump, key);
	if (!p)
		return NULL;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strcspn(p, "\n");
	if (n >= cap)
		n = cap - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return out;
}

static void check_real(const char *dir, const char *name)
{
	char path[1024], dpath[1100];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(dpath, sizeof dpath, "%s.objdump", path);
	size_t dlen, ilen;
	char *dump = slurp(dpath, &dlen);
	uint8_t *bytes = (uint8_t *)slurp(path, &ilen);
	CHECK(dump != NULL && bytes != NULL);
	if (!dump || !bytes) {
		free(dump);
		free(bytes);
		return;
	}
	hs_pe_identity id;
	hs_status st = hs_pe_read_identity(path, &id);
	char v[256];
	printf("%s: status %d (%s), machine 0x%x, TimeDateStamp 0x%08x, SizeOfImage 0x%x, CheckSum 0x%x, pdb '%s' age %u, "
	       "OriginalFilename '%s'\n",
	       name, st, hs_pe_why_name(id.why), id.machine, id.time_date_stamp, id.size_of_image, id.checksum,
	       id.pdb_path, id.pdb_age, id.original_filename);
	CHECK(strstr(dump, "file format pei-x86-64") != NULL);
	CHECK_EQ_INT(id.machine, 0x8664);
	CHECK(field(dump, "\nMagic", v, sizeof v) && strncmp(v, "020b", 4) == 0);
	CHECK(id.pe32plus);
	CHECK(field(dump, "\nCharacteristics", v, sizeof v) && strtoul(v, NULL, 16) == id.characteristics);
	CHECK(field(dump, "\nSizeOfImage", v, sizeof v) && strtoul(v, NULL, 16) == id.size_of_image);
	CHECK(field(dump, "\nCheckSum", v, sizeof v) && strtoul(v, NULL, 16) == id.checksum);
	/* objdump prints the stamp with ctime(); the test runs with TZ=UTC. */
	time_t t = (time_t)id.time_date_stamp;
	char want[64];
	const struct tm *tm = gmtime(&t);
	static const char days[] = "SunMonTueWedThuFriSat", months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	snprintf(want, sizeof want, "%.3s %.3s %2d %02d:%02d:%02d %d", days + 3 * tm->tm_wday, months + 3 * tm->tm_mon,
		 tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec, tm->tm_year + 1900);
	CHECK(field(dump, "\nTime/Date", v, sizeof v) != NULL);
	CHECK_EQ_STR(v, want);

	const char *rsds = strstr(dump, "(format RSDS signature ");
	if (rsds) {
		CHECK_EQ_INT(st, HS_OK);
		char sig[33] = "", pdb[512] = "";
		unsigned age = 0;
		CHECK(sscanf(rsds, "(format RSDS signature %32s age %u", sig, &age) == 2);
		/* The name runs to the ")" that ends the line; "(none)" when empty. */
		const char *p = strstr(rsds, " pdb ");
		CHECK(p != NULL);
		if (p) {
			p += 5;
			size_t n = strcspn(p, "\n");
			if (n > 0 && p[n - 1] == ')')
				n--;
			snprintf(pdb, sizeof pdb, "%.*s", (int)n, p);
		}
		/* objdump prints the GUID's fields in their natural (big-endian) order. */
		char ours[33];
		snprintf(ours, sizeof ours, "%08x%04x%04x%02x%02x%02x%02x%02x%02x%02x%02x", (unsigned)id.pdb_guid.data1,
			 id.pdb_guid.data2, id.pdb_guid.data3, id.pdb_guid.data4[0], id.pdb_guid.data4[1],
			 id.pdb_guid.data4[2], id.pdb_guid.data4[3], id.pdb_guid.data4[4], id.pdb_guid.data4[5],
			 id.pdb_guid.data4[6], id.pdb_guid.data4[7]);
		CHECK_EQ_STR(ours, sig);
		CHECK_EQ_INT(id.pdb_age, age);
		CHECK_EQ_STR(id.pdb_path[0] ? id.pdb_path : "(none)", pdb);
	} else if (strstr(dump, "There is a debug directory")) {
		CHECK_EQ_INT(st, HS_ENOENT);
		CHECK_EQ_INT(id.why, HS_PE_NO_RSDS);
	} else {
		CHECK_EQ_INT(st, HS_ENOENT);
		CHECK_EQ_INT(id.why, HS_PE_NO_DEBUG_DIR);
	}
	/* The DLL carries the version resource of tests/etl/imageid.cmake. */
	CHECK_EQ_STR(id.original_filename, strstr(name, ".dll") ? "TinyOrig.DLL" : "");
	CHECK(!id.version_damaged);

	/* The memory reader agrees; cuts of the real file never read past it. */
	hs_pe_identity m;
	CHECK_EQ_INT(hs_pe_read_identity_memory(bytes, ilen, &m), st);
	CHECK(memcmp(&m.pdb_guid, &id.pdb_guid, sizeof m.pdb_guid) == 0 && strcmp(m.pdb_path, id.pdb_path) == 0 &&
	      strcmp(m.original_filename, id.original_filename) == 0);
	unsigned bad = 0;
	for (size_t len = 0; len < ilen; len += len < 0x1000 ? 1 : 509) {
		hs_status cs = parse_copy(bytes, len, &m);
		if (!strings_terminated(&m) || (cs != HS_OK && cs != HS_EINVAL && cs != HS_ENOENT))
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	free(dump);
	free(bytes);
}

int main(int argc, char **argv)
{
	test_well_formed();
	test_no_identity();
	test_truncations();
	test_damage();
	test_mutations();
	test_files();
	if (argc >= 3) {
		for (int i = 2; i < argc; i++)
			check_real(argv[1], argv[i]);
	} else if (argc == 2) {
		fprintf(stderr, "usage: test_pe [DIR IMAGE...]\n");
		return 2;
	}
	return hs_test_done("test_pe");
}
