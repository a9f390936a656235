/* perfdata/reader.c: reads perf.data (PERFILE2): header, attrs and ids, build-ids, and the data section's records, every length checked. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/compat.h"
#include "hindsight/limits.h"
#include "hindsight/perfdata.h"

/* The format's constants (perf.data-file-format.txt, util/header.h, perf_event.h). */
#define MAGIC "PERFILE2"
enum {
	HEADER_BYTES = 104,            /* magic, size, attr_size, attrs, data, event_types, 256 feature bits */
	ATTR_MIN_BYTES = 64,           /* PERF_ATTR_SIZE_VER0: through the flags and wakeup fields we read */
	FEAT_BITS = 256,               /* HEADER_FEAT_BITS */
	FEAT_BUILD_ID = 2,             /* HEADER_BUILD_ID */
	BUILD_ID_HEAD = 8 + 4 + 24,    /* header, pid, build_id[24] (the 20-byte id, its size byte, padding) */
	MISC_BUILD_ID_SIZE = 1u << 15, /* build_id_event says its id's length in data[20] */
	REC_AUXTRACE = 71,             /* PERF_RECORD_AUXTRACE: its aux data follows the record, sized in its body */
	REC_COMPRESSED = 81,           /* PERF_RECORD_COMPRESSED (perf record -z): zstd frames of records */
	FMT_TOTAL_TIME_ENABLED = 1,    /* read_format bits */
	FMT_TOTAL_TIME_RUNNING = 2,
	FMT_ID = 4,
	FMT_GROUP = 8,
	FMT_LOST = 16,
	FMT_KNOWN = 31,
	FLAG_FREQ = 10, /* attr flag bits */
	FLAG_SAMPLE_ID_ALL = 18,
};

struct hs_perfdata {
	int fd;             /* -1 for a memory reader */
	const uint8_t *mem; /* the whole file (memory reader) */
	uint64_t size;
	uint8_t *win; /* the read window (file reader) */
	uint64_t win_off;
	size_t win_len;
	bool io_error;
	uint64_t attr_size;
	hs_perfdata_attr *attrs;
	size_t nattrs;
	uint64_t *ids; /* every attr's ids, in attr order */
	size_t nids;
	hs_perfdata_build_id *bids;
	size_t nbids;
	char *bid_names; /* the build-ids' filenames, NUL-separated */
	uint64_t data_off, data_size;
	uint64_t features[4];
	/* How samples say their attr: 0 one attr; IDENTIFIER first/last u64; ID at a fixed place; -1 never. */
	enum { BY_ONLY, BY_IDENTIFIER, BY_ID, BY_NONE } attr_by;
	uint64_t common_type; /* the sample_type every attr shares (BY_ID, BY_NONE) */
	uint64_t *chain;      /* the current sample's callchain */
	char text[HS_PERFDATA_MAX_NAME + 1]; /* the current record's filename or comm, NUL-terminated */
	hs_perfdata_stats stats;
	hs_problems problems;
};

static void problem(hs_perfdata *pd, hs_problem_kind kind, uint64_t at, const char *fmt, ...) HS_PRINTF_FMT(4, 5);
static void problem(hs_perfdata *pd, hs_problem_kind kind, uint64_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* Dropped on out of memory, counted past the limit: reading goes on either way. */
	hs_problems_vadd(&pd->problems, kind, at, -1, fmt, ap);
	va_end(ap);
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* True when [off, off+len) lies inside the file. */
static bool inside(const hs_perfdata *pd, uint64_t off, uint64_t len)
{
	return off <= pd->size && len <= pd->size - off;
}

/*
 * len bytes at off (len <= HS_PERFDATA_WINDOW_BYTES), or NULL when they are
 * not all in the file or cannot be read. The pointer is valid until the next
 * call: the window moves.
 */
static const uint8_t *at(hs_perfdata *pd, uint64_t off, size_t len)
{
	if (!inside(pd, off, len) || len > HS_PERFDATA_WINDOW_BYTES)
		return NULL;
	if (pd->mem)
		return pd->mem + off;
	if (off >= pd->win_off && off - pd->win_off + len <= pd->win_len)
		return pd->win + (off - pd->win_off);
	uint64_t want = pd->size - off < HS_PERFDATA_WINDOW_BYTES ? pd->size - off : HS_PERFDATA_WINDOW_BYTES;
	int64_t got = hs_pread(pd->fd, pd->win, (size_t)want, off);
	if (got < 0 || (uint64_t)got < len) {
		pd->win_len = 0;
		pd->io_error = true;
		return NULL;
	}
	pd->win_off = off;
	pd->win_len = (size_t)got;
	return pd->win;
}

bool hs_perfdata_sniff(const char *path)
{
	char head[8];
	int fd = hs_open_read(path);
	if (fd < 0)
		return false;
	bool ok = hs_pread(fd, head, sizeof head, 0) == (int64_t)sizeof head && memcmp(head, MAGIC, sizeof head) == 0;
	hs_close(fd);
	return ok;
}

/* A refused file: its first problem becomes "not readable as a perf.data: <why>". */
static hs_status refuse(hs_perfdata *pd, uint64_t off, const char *why)
{
	problem(pd, HS_PROBLEM_UNREADABLE, off, "not readable as a perf.data: %s", why);
	return HS_EINVAL;
}

static size_t popcount64(uint64_t x)
{
	size_t n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

/* The attrs section: each attr (attr_size - 16 bytes of perf_event_attr) and its ids' section. */
static hs_status read_attrs(hs_perfdata *pd, uint64_t off, uint64_t size)
{
	if (pd->attr_size < ATTR_MIN_BYTES + 16 || pd->attr_size > HS_PERFDATA_WINDOW_BYTES)
		return refuse(pd, 16, "attr_size out of range");
	if (size % pd->attr_size)
		return refuse(pd, 32, "the attrs section is not a whole number of attrs");
	uint64_t n = size / pd->attr_size;
	if (n == 0)
		return refuse(pd, 32, "no attrs");
	if (n > HS_PERFDATA_MAX_ATTRS)
		return refuse(pd, 32, "more attrs than HS_PERFDATA_MAX_ATTRS");
	if (!inside(pd, off, size))
		return refuse(pd, 24, "the attrs section runs past the end of the file");
	pd->attrs = calloc((size_t)n, sizeof *pd->attrs);
	if (!pd->attrs)
		return HS_ENOMEM;
	pd->nattrs = (size_t)n;
	/* First the counts, then one array for every attr's ids. */
	uint64_t total = 0;
	for (size_t i = 0; i < pd->nattrs; i++) {
		uint64_t ao = off + i * pd->attr_size;
		const uint8_t *a = at(pd, ao, (size_t)pd->attr_size);
		if (!a)
			return refuse(pd, ao, "cannot read an attr");
		hs_perfdata_attr *t = &pd->attrs[i];
		t->type = rd32(a);
		t->config = rd64(a + 8);
		t->sample_freq_or_period = rd64(a + 16);
		t->sample_type = rd64(a + 24);
		t->read_format = rd64(a + 32);
		uint64_t flags = rd64(a + 40);
		t->freq = (flags >> FLAG_FREQ) & 1;
		t->sample_id_all = (flags >> FLAG_SAMPLE_ID_ALL) & 1;
		t->decodable = true;
		uint64_t ids_off = rd64(a + pd->attr_size - 16), ids_size = rd64(a + pd->attr_size - 8);
		if (ids_size % 8 || !inside(pd, ids_off, ids_size) || ids_size / 8 > HS_PERFDATA_MAX_IDS - total)
			return refuse(pd, ao + pd->attr_size - 16,
				      "an attr's ids lie outside the file or are too many");
		t->nids = (size_t)(ids_size / 8);
		total += t->nids;
		if (t->sample_type & HS_PERFDATA_S_READ && (t->read_format & ~(uint64_t)FMT_KNOWN)) {
			t->decodable = false;
			problem(pd, HS_PROBLEM_UNREADABLE, ao + 32,
				"attr %zu: read_format 0x%" PRIx64
				" has bits this reader does not know; its samples are skipped",
				i, t->read_format);
		}
	}
	pd->ids = malloc((size_t)(total ? total : 1) * sizeof *pd->ids);
	if (!pd->ids)
		return HS_ENOMEM;
	for (size_t i = 0; i < pd->nattrs; i++) {
		uint64_t ao = off + i * pd->attr_size;
		const uint8_t *a = at(pd, ao, (size_t)pd->attr_size);
		if (!a)
			return refuse(pd, ao, "cannot read an attr");
		uint64_t ids_off = rd64(a + pd->attr_size - 16);
		hs_perfdata_attr *t = &pd->attrs[i];
		t->ids = pd->ids + pd->nids;
		for (size_t k = 0; k < t->nids; k++) {
			const uint8_t *p = at(pd, ids_off + 8 * k, 8);
			if (!p)
				return refuse(pd, ids_off + 8 * k, "cannot read an attr's ids");
			pd->ids[pd->nids++] = rd64(p);
		}
	}
	/* How a sample names its attr (util/evlist.c's perf_evlist__id_pos). */
	bool all_identifier = true, same = true;
	for (size_t i = 0; i < pd->nattrs; i++) {
		all_identifier &= (pd->attrs[i].sample_type & HS_PERFDATA_S_IDENTIFIER) != 0;
		same &= pd->attrs[i].sample_type == pd->attrs[0].sample_type;
	}
	pd->common_type = pd->attrs[0].sample_type;
	if (pd->nattrs == 1)
		pd->attr_by = BY_ONLY;
	else if (all_identifier)
		pd->attr_by = BY_IDENTIFIER;
	else if (same && (pd->common_type & HS_PERFDATA_S_ID))
		pd->attr_by = BY_ID;
	else if (same)
		pd->attr_by = BY_NONE;
	else {
		for (size_t i = 0; i < pd->nattrs; i++)
			pd->attrs[i].decodable = false;
		problem(pd, HS_PROBLEM_UNREADABLE, off,
			"%zu events with different sample layouts and no PERF_SAMPLE_IDENTIFIER: samples cannot be told "
			"apart and are skipped",
			pd->nattrs);
	}
	return HS_OK;
}

/* HEADER_BUILD_ID: build_id_event records, each with its filename. */
static hs_status read_build_ids(hs_perfdata *pd, uint64_t off, uint64_t size)
{
	/* Two passes: count and size the names, then fill. */
	size_t n = 0, names = 0;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t p = off;
		size_t k = 0, nm = 0;
		while (p < off + size) {
			const uint8_t *h = at(pd, p, 8);
			uint16_t rsize = h ? rd16(h + 6) : 0;
			if (!h || rsize < BUILD_ID_HEAD || rsize > off + size - p) {
				if (pass == 0)
					problem(pd, HS_PROBLEM_DAMAGED, p,
						"a build-id entry of %u bytes does not fit its section", rsize);
				break;
			}
			if (n >= HS_PERFDATA_MAX_BUILD_IDS && pass == 0) {
				problem(pd, HS_PROBLEM_LOST, p,
					"more build-ids than HS_PERFDATA_MAX_BUILD_IDS; the rest are not read");
				break;
			}
			if (pass == 1 && k == n)
				break;
			const uint8_t *r = at(pd, p, rsize);
			if (!r)
				break;
			size_t fn = strnlen((const char *)r + BUILD_ID_HEAD, rsize - BUILD_ID_HEAD);
			if (pass == 1) {
				hs_perfdata_build_id *b = &pd->bids[k];
				b->misc = rd16(r + 4);
				b->pid = (int32_t)rd32(r + 8);
				b->len = (b->misc & MISC_BUILD_ID_SIZE) && r[12 + 20] <= 20 ? r[12 + 20] : 20;
				memcpy(b->id, r + 12, 20);
				memcpy(pd->bid_names + nm, r + BUILD_ID_HEAD, fn);
				pd->bid_names[nm + fn] = '\0';
				b->filename = pd->bid_names + nm;
			}
			nm += fn + 1;
			k++;
			p += rsize;
		}
		if (pass == 0) {
			n = k;
			names = nm;
			if (!n)
				return HS_OK;
			pd->bids = calloc(n, sizeof *pd->bids);
			pd->bid_names = malloc(names + 1);
			if (!pd->bids || !pd->bid_names)
				return HS_ENOMEM;
		} else {
			pd->nbids = k;
		}
	}
	return HS_OK;
}

static hs_status read_features(hs_perfdata *pd)
{
	uint64_t table = pd->data_off + pd->data_size;
	uint64_t p = table;
	for (int bit = 0; bit < FEAT_BITS; bit++) {
		if (!((pd->features[bit / 64] >> (bit % 64)) & 1))
			continue;
		const uint8_t *s = at(pd, p, 16);
		if (!s) {
			problem(pd, HS_PROBLEM_DAMAGED, p, "the feature table is cut by the end of the file");
			return HS_OK;
		}
		uint64_t off = rd64(s), size = rd64(s + 8);
		if (!inside(pd, off, size))
			problem(pd, HS_PROBLEM_DAMAGED, p, "feature %d's section lies outside the file", bit);
		else if (bit == FEAT_BUILD_ID) {
			hs_status st = read_build_ids(pd, off, size);
			if (st != HS_OK)
				return st;
		}
		p += 16;
	}
	return HS_OK;
}

static hs_status read_header(hs_perfdata *pd)
{
	const uint8_t *h = at(pd, 0, HEADER_BYTES);
	if (!h || memcmp(h, MAGIC, 8) != 0) {
		if (h && memcmp(h, "2ELIFREP", 8) == 0)
			return refuse(pd, 0, "a big-endian file");
		return refuse(pd, 0, h ? "no PERFILE2 magic" : "shorter than the perf.data header");
	}
	uint64_t hsize = rd64(h + 8);
	if (hsize == 16)
		return refuse(pd, 8, "a pipe-mode file (perf record -o -): its attrs are records; not supported");
	if (hsize < HEADER_BYTES)
		return refuse(pd, 8, "header size too small");
	pd->attr_size = rd64(h + 16);
	uint64_t attrs_off = rd64(h + 24), attrs_size = rd64(h + 32);
	pd->data_off = rd64(h + 40);
	pd->data_size = rd64(h + 48);
	for (int i = 0; i < 4; i++)
		pd->features[i] = rd64(h + 72 + 8 * i);
	hs_status st = read_attrs(pd, attrs_off, attrs_size);
	if (st != HS_OK)
		return st;
	if (pd->data_off > pd->size)
		return refuse(pd, 40, "the data section starts past the end of the file");
	if (pd->data_size > pd->size - pd->data_off) {
		/* A copy cut short or a disk that filled: read what is there (the features would follow it). */
		problem(pd, HS_PROBLEM_DAMAGED, 48,
			"the data section says %" PRIu64 " bytes, the file holds %" PRIu64
			" after its start; reading those",
			pd->data_size, pd->size - pd->data_off);
		pd->data_size = pd->size - pd->data_off;
		memset(pd->features, 0, sizeof pd->features);
	}
	pd->stats.file_size = pd->size;
	pd->stats.data_offset = pd->data_off;
	pd->stats.data_size = pd->data_size;
	pd->chain = malloc(HS_PERFDATA_MAX_CALLCHAIN * sizeof *pd->chain);
	if (!pd->chain)
		return HS_ENOMEM;
	return read_features(pd);
}

/* Reads the header; *out is the reader when it was read or refused (for its problems), else it is freed. */
static hs_status open_common(hs_perfdata *pd, hs_perfdata **out)
{
	hs_status st = read_header(pd);
	if (st == HS_EINVAL || st == HS_OK)
		*out = pd;
	else
		hs_perfdata_close(pd);
	return st;
}

static hs_perfdata *new_reader(void)
{
	hs_perfdata *pd = calloc(1, sizeof *pd);
	if (!pd)
		return NULL;
	pd->fd = -1;
	pd->problems.limit = HS_PERFDATA_MAX_PROBLEMS;
	return pd;
}

hs_status hs_perfdata_open(const char *path, hs_perfdata **out)
{
	*out = NULL;
	hs_perfdata *pd = new_reader();
	if (!pd)
		return HS_ENOMEM;
	pd->fd = hs_open_read(path);
	if (pd->fd < 0) {
		hs_status st = errno == ENOENT ? HS_ENOENT : HS_EIO;
		hs_perfdata_close(pd);
		return st;
	}
	pd->win = malloc(HS_PERFDATA_WINDOW_BYTES);
	if (!pd->win || hs_fd_size(pd->fd, &pd->size) != 0) {
		hs_status st = pd->win ? HS_EIO : HS_ENOMEM;
		hs_perfdata_close(pd);
		return st;
	}
	hs_fadvise_sequential(pd->fd);
	return open_common(pd, out);
}

hs_status hs_perfdata_open_mem(const void *data, size_t size, hs_perfdata **out)
{
	*out = NULL;
	hs_perfdata *pd = new_reader();
	if (!pd)
		return HS_ENOMEM;
	static const uint8_t empty[1];
	pd->mem = size ? data : empty;
	pd->size = size;
	return open_common(pd, out);
}

void hs_perfdata_close(hs_perfdata *pd)
{
	if (!pd)
		return;
	if (pd->fd >= 0)
		hs_close(pd->fd);
	free(pd->win);
	free(pd->attrs);
	free(pd->ids);
	free(pd->bids);
	free(pd->bid_names);
	free(pd->chain);
	hs_problems_free(&pd->problems);
	free(pd);
}

size_t hs_perfdata_attr_count(const hs_perfdata *pd)
{
	return pd->nattrs;
}

const hs_perfdata_attr *hs_perfdata_attr_at(const hs_perfdata *pd, size_t i)
{
	return i < pd->nattrs ? &pd->attrs[i] : NULL;
}

size_t hs_perfdata_build_id_count(const hs_perfdata *pd)
{
	return pd->nbids;
}

const hs_perfdata_build_id *hs_perfdata_build_id_at(const hs_perfdata *pd, size_t i)
{
	return i < pd->nbids ? &pd->bids[i] : NULL;
}

const hs_perfdata_stats *hs_perfdata_get_stats(const hs_perfdata *pd)
{
	return &pd->stats;
}

size_t hs_perfdata_problem_count(const hs_perfdata *pd)
{
	return hs_problems_count(&pd->problems);
}

const hs_problem *hs_perfdata_problem_at(const hs_perfdata *pd, size_t i)
{
	return hs_problems_at(&pd->problems, i);
}

const hs_problems *hs_perfdata_problems(const hs_perfdata *pd)
{
	return &pd->problems;
}

/* ---- records ---- */

/* The attr whose ids hold id, or -1. */
static int attr_of_id(const hs_perfdata *pd, uint64_t id)
{
	for (size_t i = 0; i < pd->nattrs; i++)
		for (size_t k = 0; k < pd->attrs[i].nids; k++)
			if (pd->attrs[i].ids[k] == id)
				return (int)i;
	return -1;
}

/* A bounded cursor over one record's body. */
typedef struct {
	const uint8_t *p;
	size_t left;
} cur;

static bool take(cur *c, size_t n, const uint8_t **out)
{
	if (n > c->left)
		return false;
	*out = c->p;
	c->p += n;
	c->left -= n;
	return true;
}

static bool take64(cur *c, uint64_t *v)
{
	const uint8_t *p;
	if (!take(c, 8, &p))
		return false;
	*v = rd64(p);
	return true;
}

/* The bytes of a read_format value block (PERF_SAMPLE_READ). */
static bool skip_read(cur *c, uint64_t fmt)
{
	uint64_t per = 1 + !!(fmt & FMT_ID) + !!(fmt & FMT_LOST);
	uint64_t times = !!(fmt & FMT_TOTAL_TIME_ENABLED) + !!(fmt & FMT_TOTAL_TIME_RUNNING);
	const uint8_t *p;
	if (!(fmt & FMT_GROUP))
		return take(c, (size_t)(8 * (per + times)), &p);
	uint64_t nr;
	if (!take64(c, &nr) || nr > c->left / 8 / per)
		return false;
	return take(c, (size_t)(8 * (times + nr * per)), &p);
}

/* A u64 the sample type has (bit set in t) is read into *v; one it has not
 * is not there to read. False only when a field that is there is cut. */
static bool opt64(cur *c, uint64_t t, uint64_t bit, uint64_t *v)
{
	return !(t & bit) || take64(c, v);
}

/* Decodes a sample's fields up to its callchain. False when the record is too short for them. */
static bool decode_sample(hs_perfdata *pd, hs_perfdata_record *r, cur c, uint64_t t, uint64_t read_format)
{
	uint64_t v = 0;
	if (!opt64(&c, t, HS_PERFDATA_S_IDENTIFIER, &r->id) || !opt64(&c, t, HS_PERFDATA_S_IP, &r->ip) ||
	    !opt64(&c, t, HS_PERFDATA_S_TID, &v))
		return false;
	if (t & HS_PERFDATA_S_TID) {
		r->pid = (uint32_t)v;
		r->tid = (uint32_t)(v >> 32);
	}
	if (!opt64(&c, t, HS_PERFDATA_S_TIME, &r->time) || !opt64(&c, t, HS_PERFDATA_S_ADDR, &r->addr) ||
	    !opt64(&c, t, HS_PERFDATA_S_ID, &r->id) || !opt64(&c, t, HS_PERFDATA_S_STREAM_ID, &r->stream_id) ||
	    !opt64(&c, t, HS_PERFDATA_S_CPU, &v))
		return false;
	if (t & HS_PERFDATA_S_CPU)
		r->cpu = (uint32_t)v;
	if (!opt64(&c, t, HS_PERFDATA_S_PERIOD, &r->period))
		return false;
	if ((t & HS_PERFDATA_S_READ) && !skip_read(&c, read_format))
		return false;
	if (t & HS_PERFDATA_S_CALLCHAIN) {
		uint64_t nr;
		const uint8_t *p;
		if (!take64(&c, &nr) || nr > c.left / 8 || nr > HS_PERFDATA_MAX_CALLCHAIN ||
		    !take(&c, (size_t)nr * 8, &p))
			return false;
		for (size_t i = 0; i < nr; i++)
			pd->chain[i] = rd64(p + 8 * i);
		r->callchain = pd->chain;
		r->ncallchain = (size_t)nr;
	}
	r->has = t & (HS_PERFDATA_S_IDENTIFIER | HS_PERFDATA_S_IP | HS_PERFDATA_S_TID | HS_PERFDATA_S_TIME |
		      HS_PERFDATA_S_ADDR | HS_PERFDATA_S_ID | HS_PERFDATA_S_STREAM_ID | HS_PERFDATA_S_CPU |
		      HS_PERFDATA_S_PERIOD | HS_PERFDATA_S_CALLCHAIN);
	return true;
}

/* The sample_id trailer of a non-sample record (at its end): TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
static size_t trailer_size(uint64_t t)
{
	return 8 * popcount64(t & (HS_PERFDATA_S_TID | HS_PERFDATA_S_TIME | HS_PERFDATA_S_ID | HS_PERFDATA_S_STREAM_ID |
				   HS_PERFDATA_S_CPU | HS_PERFDATA_S_IDENTIFIER));
}

static void decode_trailer(hs_perfdata_record *r, const uint8_t *p, size_t n, uint64_t t)
{
	cur c = {p, n};
	uint64_t v;
	/* pid/tid of the body win over the trailer's: they are the record's subject. */
	if (t & HS_PERFDATA_S_TID)
		take64(&c, &v);
	if ((t & HS_PERFDATA_S_TIME) && take64(&c, &r->time))
		r->has |= HS_PERFDATA_S_TIME;
	if ((t & HS_PERFDATA_S_ID) && take64(&c, &r->id))
		r->has |= HS_PERFDATA_S_ID;
	if ((t & HS_PERFDATA_S_STREAM_ID) && take64(&c, &r->stream_id))
		r->has |= HS_PERFDATA_S_STREAM_ID;
	if ((t & HS_PERFDATA_S_CPU) && take64(&c, &v)) {
		r->cpu = (uint32_t)v;
		r->has |= HS_PERFDATA_S_CPU;
	}
	if ((t & HS_PERFDATA_S_IDENTIFIER) && take64(&c, &r->id))
		r->has |= HS_PERFDATA_S_ID;
}

/* Copies a NUL-terminated (or cut) string of at most n bytes into pd->text. */
static const char *text_of(hs_perfdata *pd, const uint8_t *p, size_t n)
{
	size_t k = strnlen((const char *)p, n < sizeof pd->text - 1 ? n : sizeof pd->text - 1);
	memcpy(pd->text, p, k);
	pd->text[k] = '\0';
	return pd->text;
}

/* The attr of a non-sample record (needed for its trailer's layout), or -1. */
static int attr_of_other(hs_perfdata *pd, const uint8_t *rec, size_t size)
{
	switch (pd->attr_by) {
	case BY_ONLY: return 0;
	case BY_IDENTIFIER: return size >= 16 ? attr_of_id(pd, rd64(rec + size - 8)) : -1;
	case BY_ID:
	case BY_NONE: break;
	}
	return -1;
}

/* Decodes one known record type's body; false when it is too short. */
static bool decode_other(hs_perfdata *pd, hs_perfdata_record *r, const uint8_t *rec)
{
	size_t size = r->size;
	int a = attr_of_other(pd, rec, size);
	uint64_t t = 0;
	if (a >= 0 && pd->attrs[a].sample_id_all)
		t = pd->attrs[a].sample_type;
	else if (a < 0 && pd->attr_by != BY_IDENTIFIER && pd->attrs[0].sample_id_all)
		t = pd->common_type; /* same layout for every attr */
	r->attr = a;
	size_t tr = trailer_size(t);
	if (size < 8 + tr)
		return false;
	size_t body = size - 8 - tr;
	const uint8_t *b = rec + 8;
	switch (r->type) {
	case HS_PERFDATA_MMAP:
	case HS_PERFDATA_MMAP2: {
		size_t fixed = r->type == HS_PERFDATA_MMAP ? 32 : 64;
		if (body < fixed)
			return false;
		r->pid = rd32(b);
		r->tid = rd32(b + 4);
		r->start = rd64(b + 8);
		r->len = rd64(b + 16);
		r->pgoff = rd64(b + 24);
		r->filename = text_of(pd, b + fixed, body - fixed);
		break;
	}
	case HS_PERFDATA_COMM:
		if (body < 8)
			return false;
		r->pid = rd32(b);
		r->tid = rd32(b + 4);
		r->comm = text_of(pd, b + 8, body - 8);
		r->exec = (r->misc & HS_PERFDATA_MISC_COMM_EXEC) != 0;
		break;
	case HS_PERFDATA_FORK:
	case HS_PERFDATA_EXIT:
		if (body < 24)
			return false;
		r->pid = rd32(b);
		r->ppid = rd32(b + 4);
		r->tid = rd32(b + 8);
		r->ptid = rd32(b + 12);
		r->time = rd64(b + 16);
		r->has |= HS_PERFDATA_S_TIME;
		break;
	case HS_PERFDATA_LOST:
		if (body < 16)
			return false;
		r->id = rd64(b);
		r->lost = rd64(b + 8);
		break;
	}
	r->has |= HS_PERFDATA_S_TID;
	if (tr)
		decode_trailer(r, rec + size - tr, tr, t);
	return true;
}

static const char *type_name(uint32_t type)
{
	switch (type) {
	case HS_PERFDATA_MMAP: return "MMAP";
	case HS_PERFDATA_MMAP2: return "MMAP2";
	case HS_PERFDATA_COMM: return "COMM";
	case HS_PERFDATA_FORK: return "FORK";
	case HS_PERFDATA_EXIT: return "EXIT";
	case HS_PERFDATA_LOST: return "LOST";
	}
	return "SAMPLE";
}

/* A sample: its attr, then its fields. False (with a problem) when it cannot be decoded. */
static bool sample(hs_perfdata *pd, hs_perfdata_record *r, const uint8_t *rec)
{
	cur c = {rec + 8, (size_t)r->size - 8};
	int a = -1;
	uint64_t t = pd->common_type;
	switch (pd->attr_by) {
	case BY_ONLY: a = 0; break;
	case BY_IDENTIFIER:
		a = r->size >= 16 ? attr_of_id(pd, rd64(rec + 8)) : -1;
		if (a < 0) {
			problem(pd, HS_PROBLEM_DAMAGED, r->offset, "a sample's id names no attr; skipped");
			return false;
		}
		t = pd->attrs[a].sample_type;
		break;
	case BY_ID:
	case BY_NONE: break;
	}
	if (a >= 0 && !pd->attrs[a].decodable)
		return false;
	if (a < 0 && !pd->attrs[0].decodable)
		return false;
	uint64_t rf = pd->attrs[a >= 0 ? a : 0].read_format;
	if (!decode_sample(pd, r, c, t, rf)) {
		problem(pd, HS_PROBLEM_DAMAGED, r->offset,
			"a sample of %u bytes is too short for its sample_type 0x%" PRIx64 "; skipped", r->size, t);
		return false;
	}
	if (pd->attr_by == BY_ID)
		a = attr_of_id(pd, r->id);
	r->attr = a;
	return true;
}

hs_status hs_perfdata_foreach(hs_perfdata *pd, hs_perfdata_record_fn fn, void *ctx)
{
	memset(&pd->stats, 0, sizeof pd->stats);
	pd->stats.file_size = pd->size;
	pd->stats.data_offset = pd->data_off;
	pd->stats.data_size = pd->data_size;
	uint64_t end = pd->data_off + pd->data_size;
	uint64_t off = pd->data_off;
	unsigned warned_compressed = 0;
	while (off < end) {
		if (end - off < 8) {
			problem(pd, HS_PROBLEM_DAMAGED, off,
				"%" PRIu64 " bytes at the end of the data section are no record", end - off);
			break;
		}
		const uint8_t *h = at(pd, off, 8);
		if (!h) {
			problem(pd, HS_PROBLEM_UNREADABLE, off, "%s",
				pd->io_error ? "the file could not be read here (an I/O error): the records after it are missing"
					     : "cannot read a record header");
			break;
		}
		hs_perfdata_record r = {
			.type = rd32(h), .misc = rd16(h + 4), .size = rd16(h + 6), .offset = off, .attr = -1};
		if (r.size < 8) {
			problem(pd, HS_PROBLEM_DAMAGED, off,
				"a record of type %" PRIu32 " says it has %u bytes; the rest of "
				"the data section cannot be read",
				r.type, r.size);
			break;
		}
		if (r.size > end - off) {
			problem(pd, HS_PROBLEM_DAMAGED, off,
				"a record of type %" PRIu32 " (%u bytes) is cut by the end of the "
				"data section",
				r.type, r.size);
			break;
		}
		const uint8_t *rec = at(pd, off, r.size);
		if (!rec) {
			problem(pd, HS_PROBLEM_UNREADABLE, off, "cannot read a record of %u bytes", r.size);
			break;
		}
		uint64_t next = off + r.size;
		pd->stats.records++;
		bool deliver = true;
		switch (r.type) {
		case HS_PERFDATA_SAMPLE:
			deliver = sample(pd, &r, rec);
			if (deliver)
				pd->stats.samples++;
			else
				pd->stats.undecoded_samples++;
			break;
		case HS_PERFDATA_MMAP:
		case HS_PERFDATA_MMAP2:
		case HS_PERFDATA_COMM:
		case HS_PERFDATA_FORK:
		case HS_PERFDATA_EXIT:
		case HS_PERFDATA_LOST:
			deliver = decode_other(pd, &r, rec);
			if (!deliver) {
				problem(pd, HS_PROBLEM_DAMAGED, off, "a %s record of %u bytes is too short; skipped",
					type_name(r.type), r.size);
				break;
			}
			pd->stats.mmaps += r.type == HS_PERFDATA_MMAP || r.type == HS_PERFDATA_MMAP2;
			pd->stats.comms += r.type == HS_PERFDATA_COMM;
			pd->stats.forks += r.type == HS_PERFDATA_FORK;
			pd->stats.exits += r.type == HS_PERFDATA_EXIT;
			if (r.type == HS_PERFDATA_LOST) {
				pd->stats.lost_records++;
				pd->stats.lost += r.lost;
			}
			break;
		case REC_AUXTRACE:
			/* u64 size of the aux data that follows the record, outside its header's size. */
			if (r.size >= 16) {
				uint64_t aux = rd64(rec + 8);
				if (aux > end - next) {
					problem(pd, HS_PROBLEM_DAMAGED, off,
						"an AUXTRACE record's data runs past the data section");
					goto done; /* the LOST summary still belongs in the problems */
				}
				next += aux;
			}
			pd->stats.others++;
			break;
		case REC_COMPRESSED:
			if (!warned_compressed++)
				problem(pd, HS_PROBLEM_UNREADABLE, off,
					"compressed records (perf record -z) are not read: their samples are missing");
			pd->stats.others++;
			break;
		default: pd->stats.others++; break;
		}
		if (deliver && fn && fn(&r, ctx))
			break;
		off = next;
	}
done:
	if (pd->stats.lost)
		problem(pd, HS_PROBLEM_LOST, UINT64_MAX,
			"%" PRIu64 " LOST records: the kernel dropped %" PRIu64 " events while recording",
			pd->stats.lost_records, pd->stats.lost);
	return HS_OK;
}
