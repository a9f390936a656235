/* pe/pe.c: reads a PE image's identity (headers, CodeView RSDS, OriginalFilename) from untrusted bytes, checking every offset. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/pe.h"
#include "util/text.h"

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif

/*
 * Layouts: Microsoft's PE/COFF specification (DOS stub e_lfanew at 0x3C,
 * "PE\0\0", the 20-byte COFF header, optional header magic 0x10b/0x20b, data
 * directories 2 (resources) and 6 (debug), 40-byte section headers, 28-byte
 * IMAGE_DEBUG_DIRECTORY entries, 16-byte resource directories with 8-byte
 * entries, and the VS_VERSIONINFO node layout). Notes and evidence:
 * docs/imageid-notes.md.
 */

enum {
	PE_DOS_HEADER_LEN = 64,
	PE_COFF_LEN = 20,
	PE_SECTION_LEN = 40,
	PE_DEBUG_ENTRY_LEN = 28,
	PE_DEBUG_TYPE_CODEVIEW = 2,
	PE_RSDS_FIXED_LEN = 24, /* "RSDS", GUID, age */
	PE_DIR_RESOURCE = 2,
	PE_DIR_DEBUG = 6,
	PE_RT_VERSION = 16,
	/* Bounds on what an identity read will look at; a real image is far below. */
	PE_MAX_DEBUG_ENTRIES = 64,
	PE_MAX_RES_ENTRIES = 4096,
	PE_MAX_VERSION_LEN = 65535, /* VS_VERSIONINFO.wLength is 16 bits */
	PE_MAX_CODEVIEW_LEN = 4096,
};

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Where the bytes come from: memory, or a file read piecewise. */
typedef struct {
	const uint8_t *mem;
	FILE *f;
	uint64_t len;
	bool io_error;
} src;

/* Reads n bytes at off; false when they are not all inside the file. */
static bool src_read(src *s, uint64_t off, void *buf, size_t n)
{
	if (off > s->len || n > s->len - off)
		return false;
	if (n == 0)
		return true;
	if (s->mem) {
		memcpy(buf, s->mem + off, n);
		return true;
	}
	if (off > (uint64_t)LONG_MAX || fseek(s->f, (long)off, SEEK_SET) != 0 || fread(buf, 1, n, s->f) != n) {
		s->io_error = true;
		return false;
	}
	return true;
}

typedef struct {
	uint32_t va, vsize, raw_size, raw_ptr;
} section;

typedef struct {
	src *s;
	hs_pe_identity *out;
	uint32_t size_of_headers;
	section *sec;
	size_t nsec;
} pe;

#if defined(__GNUC__)
HS_PRINTF_FMT(4, 5)
#endif
static hs_status fail(pe *p, hs_status st, hs_pe_why why, const char *fmt, ...)
{
	if (p->s->io_error) { /* a failed read of a file is not the file's fault */
		p->out->why = HS_PE_IO;
		snprintf(p->out->message, sizeof p->out->message, "read error");
		return HS_EIO;
	}
	p->out->why = why;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->out->message, sizeof p->out->message, fmt, ap);
	va_end(ap);
	return st;
}

/* Maps an RVA to a file offset with room for n bytes in the same section
 * (or in the headers); false when the range is not backed by file data.
 * Sizes are as declared: a file cut short fails later, in src_read. */
static bool rva_to_off(const pe *p, uint32_t rva, uint32_t n, uint64_t *off)
{
	if (rva < p->size_of_headers && (uint64_t)rva + n <= p->size_of_headers) {
		*off = rva;
		return true;
	}
	for (size_t i = 0; i < p->nsec; i++) {
		const section *sc = &p->sec[i];
		uint32_t span = sc->vsize ? sc->vsize : sc->raw_size;
		if (rva < sc->va || rva - sc->va >= span)
			continue;
		uint32_t in = rva - sc->va;
		if ((uint64_t)in + n > sc->raw_size) /* past the file-backed part */
			return false;
		*off = (uint64_t)sc->raw_ptr + in;
		return true;
	}
	return false;
}

/* ---- debug directory: CodeView RSDS ---- */

static hs_status read_rsds(pe *p, uint32_t dir_rva, uint32_t dir_size)
{
	hs_pe_identity *out = p->out;
	if (dir_rva == 0 || dir_size == 0)
		return fail(p, HS_ENOENT, HS_PE_NO_DEBUG_DIR, "no debug directory");
	size_t n = dir_size / PE_DEBUG_ENTRY_LEN;
	if (n == 0)
		return fail(p, HS_EINVAL, HS_PE_CORRUPT, "debug directory of %u bytes holds no whole 28-byte entry",
			    (unsigned)dir_size);
	if (n > PE_MAX_DEBUG_ENTRIES)
		n = PE_MAX_DEBUG_ENTRIES;
	uint64_t off;
	if (!rva_to_off(p, dir_rva, (uint32_t)(n * PE_DEBUG_ENTRY_LEN), &off))
		return fail(p, HS_EINVAL, HS_PE_CORRUPT, "debug directory at RVA 0x%x (%zu entries) is not in the file",
			    (unsigned)dir_rva, n);
	bool saw_codeview = false;
	for (size_t i = 0; i < n; i++) {
		uint8_t e[PE_DEBUG_ENTRY_LEN];
		if (!src_read(p->s, off + i * PE_DEBUG_ENTRY_LEN, e, sizeof e))
			return fail(p, HS_EINVAL, HS_PE_TRUNCATED, "debug directory entry %zu at 0x%llx is cut short", i,
				    (unsigned long long)(off + i * PE_DEBUG_ENTRY_LEN));
		if (le32(e + 12) != PE_DEBUG_TYPE_CODEVIEW)
			continue;
		saw_codeview = true;
		uint32_t size = le32(e + 16), rva = le32(e + 20), ptr = le32(e + 24);
		if (size < 4)
			continue;
		uint64_t doff;
		if (ptr != 0) {
			doff = ptr;
		} else if (!rva_to_off(p, rva, size, &doff)) {
			return fail(p, HS_EINVAL, HS_PE_CORRUPT, "CodeView entry at RVA 0x%x is not in the file",
				    (unsigned)rva);
		}
		uint8_t cv[PE_MAX_CODEVIEW_LEN];
		size_t want = size < sizeof cv ? size : sizeof cv;
		if (!src_read(p->s, doff, cv, want))
			return fail(p, HS_EINVAL, HS_PE_TRUNCATED,
				    "CodeView data at 0x%llx (%u bytes) runs past the end of the file",
				    (unsigned long long)doff, (unsigned)size);
		if (memcmp(cv, "RSDS", 4) != 0)
			continue; /* NB10 and other old formats carry no GUID */
		if (want < PE_RSDS_FIXED_LEN)
			return fail(p, HS_EINVAL, HS_PE_CORRUPT, "CodeView RSDS entry of %u bytes is shorter than 24",
				    (unsigned)size);
		out->pdb_guid.data1 = le32(cv + 4);
		out->pdb_guid.data2 = le16(cv + 8);
		out->pdb_guid.data3 = le16(cv + 10);
		memcpy(out->pdb_guid.data4, cv + 12, 8);
		out->pdb_age = le32(cv + 20);
		/* The path runs to its NUL or the end of the entry. */
		size_t plen = 0, room = want - PE_RSDS_FIXED_LEN;
		while (plen < room && cv[PE_RSDS_FIXED_LEN + plen] != 0)
			plen++;
		if (plen >= sizeof out->pdb_path) {
			plen = sizeof out->pdb_path - 1;
			out->pdb_path_truncated = true;
		}
		memcpy(out->pdb_path, cv + PE_RSDS_FIXED_LEN, plen);
		out->pdb_path[plen] = '\0';
		out->has_rsds = true;
		return HS_OK;
	}
	if (saw_codeview)
		return fail(p, HS_ENOENT, HS_PE_NO_RSDS, "the CodeView debug entry is not RSDS (an old NB10 one?)");
	return fail(p, HS_ENOENT, HS_PE_NO_RSDS, "no CodeView entry among %zu debug entries", n);
}

/* ---- version resource: OriginalFilename ---- */

/* One VS_VERSIONINFO-style node inside blob [0, lim). */
typedef struct {
	size_t end;       /* one past the node (start + wLength) */
	uint16_t value_len;
	uint16_t type;    /* 1 text, 0 binary */
	size_t key;       /* offset of the UTF-16 key */
	size_t key_units; /* without the NUL */
	size_t value;     /* offset of the value (4-aligned after the key) */
	size_t children;  /* offset of the first child */
} vnode;

static size_t align4(size_t x)
{
	return (x + 3) & ~(size_t)3;
}

static bool vnode_at(const uint8_t *b, size_t lim, size_t off, vnode *n)
{
	if (off > lim || lim - off < 6)
		return false;
	uint16_t len = le16(b + off);
	if (len < 6 || len > lim - off)
		return false;
	n->end = off + len;
	n->value_len = le16(b + off + 2);
	n->type = le16(b + off + 4);
	n->key = off + 6;
	size_t k = n->key;
	while (k + 2 <= n->end && le16(b + k) != 0)
		k += 2;
	if (k + 2 > n->end)
		return false; /* key without its terminator */
	n->key_units = (k - n->key) / 2;
	n->value = align4(k + 2);
	if (n->value > n->end)
		n->value = n->end;
	size_t vbytes = n->type == 1 ? (size_t)n->value_len * 2 : n->value_len;
	n->children = n->value + vbytes > n->end ? n->end : align4(n->value + vbytes);
	if (n->children > n->end)
		n->children = n->end;
	return true;
}

/* Case-insensitive match of a node's key against ASCII text. */
static bool key_is(const uint8_t *b, const vnode *n, const char *text)
{
	size_t len = strlen(text);
	if (n->key_units != len)
		return false;
	for (size_t i = 0; i < len; i++) {
		uint16_t c = le16(b + n->key + 2 * i);
		uint16_t t = (uint8_t)text[i];
		if (c >= 'A' && c <= 'Z')
			c = (uint16_t)(c + 32);
		if (t >= 'A' && t <= 'Z')
			t = (uint16_t)(t + 32);
		if (c != t)
			return false;
	}
	return true;
}

/* Iterates the children of parent: *pos starts at parent->children. */
static bool vnode_next(const uint8_t *b, const vnode *parent, size_t *pos, vnode *child)
{
	if (*pos >= parent->end || !vnode_at(b, parent->end, *pos, child))
		return false;
	*pos = align4(child->end);
	return true;
}

/* The next child from *pos whose key is `key` (any child when key is NULL). */
static bool vnode_find(const uint8_t *b, const vnode *parent, size_t *pos, const char *key, vnode *child)
{
	while (vnode_next(b, parent, pos, child))
		if (!key || key_is(b, child, key))
			return true;
	return false;
}

/* The StringTable key ("040904b0") of the first Translation in VarFileInfo, or "". */
static void first_translation(const uint8_t *b, const vnode *root, char key[9])
{
	key[0] = '\0';
	size_t pos = root->children;
	vnode fi, var;
	while (vnode_find(b, root, &pos, "VarFileInfo", &fi)) {
		size_t p2 = fi.children;
		while (vnode_find(b, &fi, &p2, "Translation", &var)) {
			if (var.value + 4 <= var.end && var.value_len >= 4) {
				snprintf(key, 9, "%04x%04x", (unsigned)le16(b + var.value), (unsigned)le16(b + var.value + 2));
				return;
			}
		}
	}
}

/* Finds OriginalFilename in the version blob; false if the blob is not a
 * VS_VERSIONINFO at all (a missing string is not an error). */
static bool version_original_filename(const uint8_t *b, size_t len, hs_pe_identity *out)
{
	vnode root;
	if (!vnode_at(b, len, 0, &root) || !key_is(b, &root, "VS_VERSION_INFO"))
		return false;
	char want[9];
	first_translation(b, &root, want);
	/* Two rounds: the table the Translation names, then any table. */
	for (int round = 0; round < 2; round++) {
		if (round == 0 && !want[0])
			continue;
		size_t pos = root.children;
		vnode sfi;
		while (vnode_find(b, &root, &pos, "StringFileInfo", &sfi)) {
			size_t p2 = sfi.children;
			vnode table;
			while (vnode_find(b, &sfi, &p2, round == 0 ? want : NULL, &table)) {
				size_t p3 = table.children;
				vnode str;
				if (vnode_find(b, &table, &p3, "OriginalFilename", &str)) {
					/* The value runs to its NUL or the node's end (wValueLength is
					 * in characters by the format, in bytes by some tools). */
					hs_utf16le_to_utf8(b + str.value, (str.end - str.value) / 2, out->original_filename,
						      sizeof out->original_filename, &out->original_filename_truncated, NULL);
					return true;
				}
			}
		}
	}
	return true;
}

/* Reads the resource directory at dir (an offset inside the resource
 * directory) and gives the OffsetToData of the wanted entry: the id entry
 * with that id, or the first entry of any kind when any. Bit 31 of *to is
 * the subdirectory flag. Returns 1 found, 0 absent, -1 damaged. */
static int res_entry(pe *p, uint32_t res_rva, uint32_t res_size, uint32_t dir, bool any, uint32_t id, uint32_t *to)
{
	uint8_t h[16];
	uint64_t off;
	if (dir > res_size || res_size - dir < sizeof h || (uint64_t)res_rva + dir > UINT32_MAX ||
	    !rva_to_off(p, res_rva + dir, sizeof h, &off) || !src_read(p->s, off, h, sizeof h))
		return -1;
	uint32_t named = le16(h + 12), ids = le16(h + 14), total = named + ids;
	if (total > PE_MAX_RES_ENTRIES || (uint64_t)dir + 16 + 8ull * total > res_size)
		return -1;
	for (uint32_t i = 0; i < total; i++) {
		uint8_t e[8];
		if (!src_read(p->s, off + 16 + 8ull * i, e, sizeof e))
			return -1;
		uint32_t name = le32(e);
		if (any || (!(name & 0x80000000u) && name == id)) {
			*to = le32(e + 4);
			return 1;
		}
	}
	return any ? -1 : 0;
}

/* Fills original_filename from the RT_VERSION resource, if there is one:
 * root -> RT_VERSION -> its first name -> its first language -> data entry. */
static void read_version(pe *p, uint32_t res_rva, uint32_t res_size)
{
	hs_pe_identity *out = p->out;
	if (res_rva == 0 && res_size == 0)
		return;
	uint32_t to = 0;
	int found = res_entry(p, res_rva, res_size, 0, false, PE_RT_VERSION, &to);
	if (found == 0)
		return; /* no version resource */
	for (int depth = 0; depth < 2 && found == 1; depth++) {
		if (!(to & 0x80000000u))
			found = -1; /* a leaf where a directory belongs */
		else
			found = res_entry(p, res_rva, res_size, to & 0x7FFFFFFFu, true, 0, &to);
	}
	uint8_t d[16];
	uint64_t off;
	if (found != 1 || (to & 0x80000000u) || to > res_size || res_size - to < sizeof d ||
	    (uint64_t)res_rva + to > UINT32_MAX || !rva_to_off(p, res_rva + to, sizeof d, &off) ||
	    !src_read(p->s, off, d, sizeof d)) {
		out->version_damaged = true;
		return;
	}
	uint32_t data_rva = le32(d), size = le32(d + 4);
	if (size > PE_MAX_VERSION_LEN)
		size = PE_MAX_VERSION_LEN;
	uint8_t *blob = malloc(size ? size : 1);
	if (!blob || !rva_to_off(p, data_rva, size, &off) || !src_read(p->s, off, blob, size) ||
	    !version_original_filename(blob, size, out))
		out->version_damaged = true;
	free(blob);
}

/* ---- headers ---- */

static hs_status parse(src *s, hs_pe_identity *out)
{
	memset(out, 0, sizeof *out);
	pe p = {.s = s, .out = out};
	uint8_t dos[PE_DOS_HEADER_LEN];
	if (s->len < 2 || !src_read(s, 0, dos, 2) || dos[0] != 'M' || dos[1] != 'Z')
		return fail(&p, HS_EINVAL, HS_PE_NOT_PE, "not a PE file: no MZ signature");
	if (!src_read(s, 0, dos, sizeof dos))
		return fail(&p, HS_EINVAL, HS_PE_TRUNCATED, "truncated: %llu bytes, shorter than the 64-byte DOS header",
			    (unsigned long long)s->len);
	uint32_t lfanew = le32(dos + 0x3C);
	uint8_t nt[4 + PE_COFF_LEN];
	/* A header that e_lfanew places past the end means the file was cut
	 * short; bytes that are there but are not "PE\0\0" mean another format. */
	if (!src_read(s, lfanew, nt, sizeof nt)) {
		if (src_read(s, lfanew, nt, 4) && memcmp(nt, "PE\0\0", 4) != 0)
			return fail(&p, HS_EINVAL, HS_PE_NOT_PE, "not a PE file: no PE signature at 0x%x", (unsigned)lfanew);
		return fail(&p, HS_EINVAL, HS_PE_TRUNCATED,
			    "truncated: the PE header at 0x%x (e_lfanew) needs %u bytes, the file has %llu",
			    (unsigned)lfanew, (unsigned)sizeof nt, (unsigned long long)s->len);
	}
	if (memcmp(nt, "PE\0\0", 4) != 0)
		return fail(&p, HS_EINVAL, HS_PE_NOT_PE, "not a PE file: no PE signature at 0x%x (an MS-DOS or NE/LE image?)",
			    (unsigned)lfanew);
	const uint8_t *coff = nt + 4;
	out->machine = le16(coff);
	uint16_t nsec = le16(coff + 2);
	out->time_date_stamp = le32(coff + 4);
	uint16_t opt_len = le16(coff + 16);
	out->characteristics = le16(coff + 18);

	uint64_t opt_off = (uint64_t)lfanew + 4 + PE_COFF_LEN;
	uint8_t opt[240]; /* PE32+ fixed part (112) + 16 directories (128) */
	if (opt_len < 2)
		return fail(&p, HS_EINVAL, HS_PE_NOT_PE, "no optional header (an object file, not an image)");
	size_t take = opt_len < sizeof opt ? opt_len : sizeof opt;
	if (!src_read(s, opt_off, opt, take))
		return fail(&p, HS_EINVAL, HS_PE_TRUNCATED, "truncated in the optional header at 0x%llx",
			    (unsigned long long)opt_off);
	uint16_t magic = le16(opt);
	size_t fixed, nrva_at;
	if (magic == 0x10b) {
		fixed = 96;
		nrva_at = 92;
	} else if (magic == 0x20b) {
		fixed = 112;
		nrva_at = 108;
		out->pe32plus = true;
	} else {
		return fail(&p, HS_EINVAL, HS_PE_NOT_PE, "unknown optional header magic 0x%x", (unsigned)magic);
	}
	if (take < fixed)
		return fail(&p, HS_EINVAL, HS_PE_CORRUPT, "optional header of %u bytes, shorter than the %zu its magic needs",
			    (unsigned)opt_len, fixed);
	out->size_of_image = le32(opt + 56);
	p.size_of_headers = le32(opt + 60);
	out->checksum = le32(opt + 64);
	uint32_t nrva = le32(opt + nrva_at);
	uint32_t dir_rva[16] = {0}, dir_size[16] = {0};
	for (uint32_t i = 0; i < 16 && i < nrva; i++) {
		size_t at = fixed + 8 * i;
		if (at + 8 > take)
			break;
		dir_rva[i] = le32(opt + at);
		dir_size[i] = le32(opt + at + 4);
	}

	/* Section table, right after the optional header. */
	uint64_t sec_off = opt_off + opt_len;
	if (nsec > 0) {
		p.sec = malloc(nsec * sizeof *p.sec);
		if (!p.sec)
			return fail(&p, HS_ENOMEM, HS_PE_IO, "out of memory for %u section headers", (unsigned)nsec);
	}
	hs_status st = HS_OK;
	for (uint16_t i = 0; i < nsec; i++) {
		uint8_t sh[PE_SECTION_LEN];
		if (!src_read(s, sec_off + (uint64_t)i * PE_SECTION_LEN, sh, sizeof sh)) {
			st = fail(&p, HS_EINVAL, HS_PE_TRUNCATED, "truncated in section header %u of %u at 0x%llx",
				  (unsigned)i, (unsigned)nsec, (unsigned long long)(sec_off + (uint64_t)i * PE_SECTION_LEN));
			goto out;
		}
		section *sc = &p.sec[p.nsec++];
		sc->vsize = le32(sh + 8);
		sc->va = le32(sh + 12);
		sc->raw_size = le32(sh + 16);
		sc->raw_ptr = le32(sh + 20);
	}

	read_version(&p, dir_rva[PE_DIR_RESOURCE], dir_size[PE_DIR_RESOURCE]);
	if (s->io_error) {
		st = fail(&p, HS_EIO, HS_PE_IO, "read error");
		goto out;
	}
	st = read_rsds(&p, dir_rva[PE_DIR_DEBUG], dir_size[PE_DIR_DEBUG]);
	if (st == HS_OK)
		out->message[0] = '\0';
out:
	free(p.sec);
	return st;
}

hs_status hs_pe_read_identity_memory(const uint8_t *data, size_t len, hs_pe_identity *out)
{
	src s = {.mem = data ? data : (const uint8_t *)"", .len = data ? len : 0};
	return parse(&s, out);
}

static FILE *open_utf8(const char *path)
{
#ifdef _WIN32
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
	if (n <= 0)
		return NULL;
	wchar_t *w = malloc((size_t)n * sizeof *w);
	if (!w)
		return NULL;
	MultiByteToWideChar(CP_UTF8, 0, path, -1, w, n);
	FILE *f = _wfopen(w, L"rb");
	free(w);
	return f;
#else
	return fopen(path, "rb");
#endif
}

hs_status hs_pe_read_identity(const char *path, hs_pe_identity *out)
{
	memset(out, 0, sizeof *out);
	out->why = HS_PE_IO;
	if (!path) {
		snprintf(out->message, sizeof out->message, "no path");
		return HS_EINVAL;
	}
	FILE *f = open_utf8(path);
	if (!f) {
		int e = errno;
		snprintf(out->message, sizeof out->message, "cannot open: %s", strerror(e));
		return e == EACCES ? HS_EPERM : e == ENOENT ? HS_ENOENT : HS_EIO;
	}
	src s = {.f = f};
	long end = -1;
	if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0) {
		fclose(f);
		snprintf(out->message, sizeof out->message, "cannot find the file's size (not a regular file?)");
		return HS_EIO;
	}
	s.len = (uint64_t)end;
	hs_status st = parse(&s, out);
	fclose(f);
	return st;
}

const char *hs_pe_why_name(hs_pe_why why)
{
	switch (why) {
	case HS_PE_OK: return "ok";
	case HS_PE_IO: return "cannot read";
	case HS_PE_NOT_PE: return "not a PE image";
	case HS_PE_TRUNCATED: return "truncated";
	case HS_PE_CORRUPT: return "corrupt";
	case HS_PE_NO_DEBUG_DIR: return "no debug directory";
	case HS_PE_NO_RSDS: return "no RSDS";
	}
	return "unknown";
}
