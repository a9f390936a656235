/* etl/reader.c: maps an .etl file, indexes its buffers, decodes the logfile header and walks records. */
#include "hindsight/etl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etl/etl_format.h"
#include "etl/xpress.h"
#include "hindsight/vec.h"
#include "util/compat.h"
#include "util/text.h"

enum { MAX_PROBLEMS = 1000 };

struct hs_etl {
	const uint8_t *data;
	size_t len;
	bool owned;
	int fd; /* >= 0: data is NULL and buffers are read from the file on demand */
	hs_vec buffers; /* of hs_etl_buffer, in file order */
	hs_etl_header header;
	hs_problems problems;
	size_t lost_flagged;
};

static void problem(hs_etl *e, hs_problem_kind kind, uint64_t offset, int cpu, const char *fmt, ...)
	HS_PRINTF_FMT(5, 6);
static void problem(hs_etl *e, hs_problem_kind kind, uint64_t offset, int cpu, const char *fmt, ...)
{
	if (hs_problems_count(&e->problems) >= MAX_PROBLEMS)
		return;
	va_list ap;
	va_start(ap, fmt);
	/* Dropped on out of memory: the walk goes on without the note. */
	hs_problems_vadd(&e->problems, kind, offset, cpu, fmt, ap);
	va_end(ap);
}

static hs_guid read_guid(const uint8_t *p)
{
	hs_guid g;
	g.data1 = hs_le32(p);
	g.data2 = hs_le16(p + 4);
	g.data3 = hs_le16(p + 6);
	memcpy(g.data4, p + 8, 8);
	return g;
}

/* ---- records ---- */

/*
 * Decodes the record at data[off] of a buffer whose records end at `end`.
 * Returns the unpadded record size, 0 at the end-of-data marker, or -1 (with
 * *why set) when the bytes are not a record: the caller stops that buffer.
 */
static long parse_record(const uint8_t *data, uint32_t off, uint32_t end, hs_etl_record *r, const char **why)
{
	if (end - off < 4) {
		*why = "a record header does not fit before the end of the buffer's data";
		return -1;
	}
	const uint8_t *p = data + off;
	if (hs_le32(p) == 0xFFFFFFFFu)
		return 0;
	uint8_t marker = p[3], type = p[2];
	memset(r, 0, sizeof(*r));
	r->raw = p;
	r->header_type = type;
	r->pid = r->tid = UINT32_MAX;
	if (!(marker & HS_ETL_TRACE_HEADER_FLAG)) {
		*why = "not a trace header (marker bit 0x80 clear)";
		return -1;
	}
	uint32_t size, hdr;
	if (marker & HS_ETL_TRACE_MESSAGE) {
		/* WPP: no public sample; decoded from the documented layout. */
		if (end - off < 8) {
			*why = "truncated message header";
			return -1;
		}
		size = hs_le16(p);
		uint16_t opts = hs_le16(p + 6);
		r->kind = HS_ETL_MESSAGE;
		r->id = hs_le16(p + 4);
		hdr = 8;
		if (opts & HS_ETL_MSG_SEQUENCE)
			hdr += 4;
		if (opts & HS_ETL_MSG_GUID) {
			if (size >= hdr + 16 && end - off >= hdr + 16) {
				r->has_guid = true;
				r->guid = read_guid(p + hdr);
			}
			hdr += 16;
		} else if (opts & HS_ETL_MSG_COMPONENTID) {
			hdr += 4;
		}
		if (opts & HS_ETL_MSG_TIMESTAMP) {
			if (size >= hdr + 8 && end - off >= hdr + 8)
				r->timestamp = (int64_t)hs_le64(p + hdr);
			hdr += 8;
		}
		if (opts & HS_ETL_MSG_SYSTEMINFO) {
			if (size >= hdr + 8 && end - off >= hdr + 8) {
				r->tid = hs_le32(p + hdr);
				r->pid = hs_le32(p + hdr + 4);
			}
			hdr += 8;
		}
		r->ptr64 = (opts & HS_ETL_MSG_POINTER64) != 0;
	} else if (marker & HS_ETL_TRACE_HEADER_EVENT_TRACE) {
		switch (type) {
		case HS_ETL_HT_SYSTEM32:
		case HS_ETL_HT_SYSTEM64:
		case HS_ETL_HT_COMPACT32:
		case HS_ETL_HT_COMPACT64: {
			bool compact = type == HS_ETL_HT_COMPACT32 || type == HS_ETL_HT_COMPACT64;
			hdr = compact ? 0x18 : 0x20;
			if (end - off < hdr) {
				*why = "truncated system header";
				return -1;
			}
			size = hs_le16(p + 4);
			r->kind = compact ? HS_ETL_COMPACT : HS_ETL_SYSTEM;
			r->ptr64 = type == HS_ETL_HT_SYSTEM64 || type == HS_ETL_HT_COMPACT64;
			r->version = (uint8_t)hs_le16(p);
			r->opcode = p[6];
			r->group = p[7];
			r->tid = hs_le32(p + 8);
			r->pid = hs_le32(p + 12);
			r->timestamp = (int64_t)hs_le64(p + 16);
			break;
		}
		case HS_ETL_HT_PERFINFO32:
		case HS_ETL_HT_PERFINFO64: {
			if (end - off < 0x10) {
				*why = "truncated perfinfo header";
				return -1;
			}
			uint16_t ver = hs_le16(p);
			hdr = 0x10 + ((ver & HS_ETL_PEBS_INDEX_FLAG) ? 8u : 0u) +
			      8u * ((ver & HS_ETL_PMC_COUNTERS_MASK) >> 8);
			size = hs_le16(p + 4);
			r->kind = HS_ETL_PERFINFO;
			r->ptr64 = type == HS_ETL_HT_PERFINFO64;
			r->version = (uint8_t)(ver & ~(HS_ETL_PEBS_INDEX_FLAG | HS_ETL_PMC_COUNTERS_MASK));
			r->opcode = p[6];
			r->group = p[7];
			r->timestamp = (int64_t)hs_le64(p + 8);
			break;
		}
		case HS_ETL_HT_EVENT_HEADER32:
		case HS_ETL_HT_EVENT_HEADER64: {
			hdr = 0x50;
			if (end - off < hdr) {
				*why = "truncated event header";
				return -1;
			}
			size = hs_le16(p);
			r->kind = HS_ETL_EVENT;
			r->ptr64 = type == HS_ETL_HT_EVENT_HEADER64;
			r->tid = hs_le32(p + 8);
			r->pid = hs_le32(p + 12);
			r->timestamp = (int64_t)hs_le64(p + 16);
			r->has_guid = true;
			r->guid = read_guid(p + 0x18);
			r->id = hs_le16(p + 0x28);
			r->version = p[0x2A];
			r->channel = p[0x2B];
			r->level = p[0x2C];
			r->opcode = p[0x2D];
			r->task = hs_le16(p + 0x2E);
			r->keywords = hs_le64(p + 0x30);
			if (size < hdr || size > end - off) {
				*why = "event record size runs past the buffer's data";
				return -1;
			}
			if (hs_le16(p + 4) & HS_ETL_EH_FLAG_EXTENDED_INFO) {
				/* Items: u16 ItemSize (8 + data, 8-aligned), u16 type,
				 * u16 linkage (bit 0: another follows), u16 data size. */
				uint32_t x = hdr;
				for (;;) {
					if (size - x < 8) {
						*why = "extended data item runs past the record";
						return -1;
					}
					uint16_t isz = hs_le16(p + x);
					uint16_t link = hs_le16(p + x + 4);
					if (isz < 8 || isz > size - x) {
						*why = "extended data item has an impossible size";
						return -1;
					}
					x += isz;
					if (!(link & 1))
						break;
				}
				r->ext = p + hdr;
				r->ext_len = x - hdr;
				hdr = x;
			}
			break;
		}
		case HS_ETL_HT_FULL_HEADER32:
		case HS_ETL_HT_FULL_HEADER64:
		case HS_ETL_HT_INSTANCE32:
		case HS_ETL_HT_INSTANCE64: {
			bool inst = type == HS_ETL_HT_INSTANCE32 || type == HS_ETL_HT_INSTANCE64;
			hdr = inst ? 0x48 : 0x30;
			if (end - off < hdr) {
				*why = "truncated classic header";
				return -1;
			}
			size = hs_le16(p);
			r->kind = inst ? HS_ETL_INSTANCE : HS_ETL_FULL;
			r->ptr64 = type == HS_ETL_HT_FULL_HEADER64 || type == HS_ETL_HT_INSTANCE64;
			r->opcode = p[4];
			r->level = p[5];
			r->version = (uint8_t)hs_le16(p + 6);
			r->tid = hs_le32(p + 8);
			r->pid = hs_le32(p + 12);
			r->timestamp = (int64_t)hs_le64(p + 16);
			r->has_guid = true;
			r->guid = read_guid(p + 0x18);
			break;
		}
		default:
			*why = "unknown header type";
			return -1;
		}
	} else {
		*why = "unknown marker byte";
		return -1;
	}
	if (size < hdr) {
		*why = "record size is smaller than its header";
		return -1;
	}
	if (size > end - off) {
		*why = "record size runs past the buffer's data";
		return -1;
	}
	r->raw_len = size;
	r->payload = p + hdr;
	r->payload_len = size - hdr;
	return (long)size;
}

/* ---- logfile header ---- */

static void decode_logfile_header(hs_etl *e, const hs_etl_record *r)
{
	hs_etl_header *h = &e->header;
	const uint8_t *p = r->payload;
	size_t n = r->payload_len;
	/* The header event's own header type tells the logger's pointer size,
	 * which moves every field after the two name pointers. */
	bool p64 = r->ptr64;
	size_t need = p64 ? 0x118 : 0x110;
	if (n < need) {
		problem(e, HS_PROBLEM_DAMAGED, r->buffer_offset + r->offset_in_buffer, r->cpu,
			"logfile header is %zu bytes, expected %zu", n, need);
		return;
	}
	h->buffer_size = hs_le32(p);
	memcpy(h->version, p + 4, 4);
	h->provider_version = hs_le32(p + 8);
	h->cpus = hs_le32(p + 0x0C);
	h->end_time = hs_le64(p + 0x10);
	h->timer_resolution = hs_le32(p + 0x18);
	h->maximum_file_size = hs_le32(p + 0x1C);
	h->log_file_mode = hs_le32(p + 0x20);
	h->buffers_written = hs_le32(p + 0x24);
	h->start_buffers = hs_le32(p + 0x28);
	h->pointer_size = hs_le32(p + 0x2C);
	h->events_lost = hs_le32(p + 0x30);
	h->cpu_mhz = hs_le32(p + 0x34);
	size_t b = p64 ? 0xF8 : 0xF0; /* BootTime; the 8/4-byte name pointers shift it */
	h->boot_time = hs_le64(p + b);
	h->perf_freq = hs_le64(p + b + 8);
	h->start_time = hs_le64(p + b + 16);
	h->clock_type = hs_le32(p + b + 24);
	h->buffers_lost = hs_le32(p + b + 28);
	h->start_ts = r->timestamp;
	h->valid = true;
	size_t units = (n - need) / 2;
	size_t used = hs_utf16le_to_utf8(p + need, units, h->logger_name, sizeof h->logger_name, NULL, NULL);
	if (used < units)
		hs_utf16le_to_utf8(p + need + 2 * used, units - used, h->log_file_name, sizeof h->log_file_name, NULL,
				   NULL);
}

uint64_t hs_etl_clock_ns(const hs_etl_header *h, int64_t ts)
{
	if (ts < 0)
		return 0;
	uint64_t t = (uint64_t)ts, f = 0;
	if (h->valid && h->clock_type == 1)
		f = h->perf_freq;
	else if (h->valid && h->clock_type == 3)
		f = (uint64_t)h->cpu_mhz * 1000000u;
	if (!f)
		return t * 100u;
	/* split so that t * 1e9 cannot overflow (f below 1.8e10 Hz) */
	return (t / f) * 1000000000ull + (t % f) * 1000000000ull / f;
}

void hs_etl_filetime_text(uint64_t ft, char *buf, size_t cap)
{
	if (!ft) {
		snprintf(buf, cap, "-");
		return;
	}
	/* FILETIME counts 100 ns since 1601-01-01; Unix time starts 11644473600 s later. */
	time_t secs = (time_t)(ft / 10000000u) - (time_t)11644473600LL;
	unsigned frac = (unsigned)(ft % 10000000u);
	struct tm tm;
	if (!hs_gmtime(secs, &tm)) {
		snprintf(buf, cap, "%llu", (unsigned long long)ft);
		return;
	}
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%07uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

uint64_t hs_etl_to_filetime(const hs_etl *etl, int64_t ts)
{
	/* Damaged records carry any timestamp: every step is overflow-checked
	 * and an impossible time becomes 0 ("unknown"), never wrapped garbage. */
	const hs_etl_header *h = &etl->header;
	if (!h->valid)
		return 0;
	int64_t d, delta;
	switch (h->clock_type) {
	case 2:
		return ts < 0 ? 0 : (uint64_t)ts;
	case 3:
		if (!h->cpu_mhz || __builtin_sub_overflow(ts, h->start_ts, &d) || __builtin_mul_overflow(d, 10, &delta))
			return 0;
		delta /= (int64_t)h->cpu_mhz;
		break;
	default: {
		int64_t f = (int64_t)h->perf_freq, whole, part;
		if (f <= 0 || __builtin_sub_overflow(ts, h->start_ts, &d))
			return 0;
		/* Split so that ticks x 1e7 cannot overflow on long traces. */
		if (__builtin_mul_overflow(d / f, 10000000, &whole))
			return 0;
		int64_t rest = d % f;
		if (rest > INT64_MAX / 10000000 || rest < INT64_MIN / 10000000)
			return 0; /* only with a clock faster than any real one */
		part = rest * 10000000 / f;
		if (__builtin_add_overflow(whole, part, &delta))
			return 0;
		break;
	}
	}
	uint64_t t;
	if (delta >= 0 ? __builtin_add_overflow(h->start_time, (uint64_t)delta, &t)
		       : __builtin_sub_overflow(h->start_time, (uint64_t)(-(delta + 1)) + 1u, &t))
		return 0;
	return t;
}

/* ---- buffers ---- */

/* Reads a whole range of a file opened by hs_etl_open; false when the file
 * has shrunk since open or cannot be read. */
static bool read_at(hs_etl *e, uint8_t *dst, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		int64_t r = hs_pread(e->fd, dst + got, len - got, off + got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* How far past the bytes asked for a window reads: one read then serves many
 * small buffers (4 KiB ones are common), where a read per buffer would cost
 * more in system calls than mmap did. Buffers up to SMALL_BUFFER count as small. */
enum { READ_AHEAD = 256 * 1024, SMALL_BUFFER = 16 * 1024 };

/* The file's bytes [start, start + len), read for a file opened by hs_etl_open. */
typedef struct {
	uint8_t *buf;
	size_t cap, len;
	uint64_t start;
	size_t ahead; /* how much to read at a miss: READ_AHEAD where the next bytes wanted follow */
} window;

/* want bytes at off (off + want <= the file size); NULL when out of memory or
 * the file cannot be read. */
static const uint8_t *window_get(hs_etl *e, window *w, uint64_t off, size_t want)
{
	if (w->len && off >= w->start && off - w->start <= w->len && want <= w->len - (off - w->start))
		return w->buf + (off - w->start);
	size_t n = want;
	if (n < w->ahead)
		n = e->len - off < w->ahead ? e->len - off : w->ahead;
	if (n < want)
		n = want;
	if (w->cap < n) {
		uint8_t *nb = realloc(w->buf, n);
		if (!nb)
			return NULL;
		w->buf = nb;
		w->cap = n;
	}
	w->len = 0;
	bool ok = read_at(e, w->buf, n, off);
	if (!ok && n > want) {
		/* A file that shrank since open may still hold what is wanted, if not the read-ahead. */
		n = want;
		ok = read_at(e, w->buf, n, off);
	}
	if (!ok)
		return NULL;
	w->start = off;
	w->len = n;
	return w->buf;
}

static hs_etl_buffer *buffer_at(const hs_etl *e, size_t i)
{
	return hs_vec_at(&e->buffers, i);
}

static bool push_buffer(hs_etl *e, const hs_etl_buffer *b)
{
	hs_etl_buffer *slot = hs_vec_push(&e->buffers);
	if (slot)
		*slot = *b;
	return slot != NULL;
}

/* The 0x48 header bytes at off, from memory or read into tmp; NULL when
 * fewer are left or they cannot be read. */
static const uint8_t *header_at(hs_etl *e, uint64_t off, uint8_t *tmp)
{
	if (off > e->len || e->len - off < HS_ETL_BUFFER_HEADER_SIZE)
		return NULL;
	if (e->data)
		return e->data + off;
	return read_at(e, tmp, HS_ETL_BUFFER_HEADER_SIZE, off) ? tmp : NULL;
}

/* Whether a buffer header's fields are within what any ETW buffer has. Only
 * used to tell a damaged BufferSize from a good one; the size is not compared
 * with the bytes left, so a truncated last buffer still looks plausible. */
static bool plausible_header(const uint8_t *p)
{
	uint32_t size = hs_le32(p), end = hs_le32(p + 0x30);
	bool compressed = (hs_le16(p + 0x34) & HS_ETL_BUFFER_FLAG_COMPRESSED) != 0;
	return size >= HS_ETL_BUFFER_HEADER_SIZE && size - HS_ETL_BUFFER_HEADER_SIZE <= HS_ETL_MAX_BUFFER_BYTES &&
	       end >= HS_ETL_BUFFER_HEADER_SIZE && end <= HS_ETL_MAX_BUFFER_BYTES && (compressed || end <= size) &&
	       hs_le16(p + 0x36) <= 7u; /* ETW_BUFFER_TYPE_DBG_INFO is the last type */
}

/* Whether `size` bytes from off end exactly at the end of the file or at a
 * plausible buffer header. */
static bool size_leads_on(hs_etl *e, uint64_t off, uint32_t size)
{
	uint8_t tmp[HS_ETL_BUFFER_HEADER_SIZE];
	if (size < HS_ETL_BUFFER_HEADER_SIZE || off + size > e->len)
		return false;
	if (off + size == e->len)
		return true;
	const uint8_t *p = header_at(e, off + size, tmp);
	return p && plausible_header(p);
}

/* The logfile header event's BufferSize, peeked before indexing: the size the
 * data buffers have (buffer 0 itself can be short in relogged files). 0 when
 * buffer 0 does not start with the header event. */
static uint32_t peek_usual_buffer_size(hs_etl *e)
{
	enum { NEED = HS_ETL_BUFFER_HEADER_SIZE + 0x20 + 4 };
	uint8_t tmp[NEED];
	const uint8_t *p = e->data;
	if (e->len < NEED)
		return 0;
	if (!p) {
		if (!read_at(e, tmp, NEED, 0))
			return 0;
		p = tmp;
	}
	const uint8_t *r = p + HS_ETL_BUFFER_HEADER_SIZE;
	if (r[3] != (HS_ETL_TRACE_HEADER_FLAG | HS_ETL_TRACE_HEADER_EVENT_TRACE) ||
	    (r[2] != HS_ETL_HT_SYSTEM32 && r[2] != HS_ETL_HT_SYSTEM64) || hs_le16(r + 6) != 0)
		return 0;
	uint32_t size = hs_le32(r + 0x20);
	return size >= HS_ETL_BUFFER_HEADER_SIZE && size <= HS_ETL_MAX_BUFFER_BYTES ? size : 0;
}

static hs_status index_buffers(hs_etl *e)
{
	uint64_t off = 0;
	window w = {0};
	uint32_t usual = peek_usual_buffer_size(e);
	bool peeked = usual != 0, last_resized = false;
	/* Any file of 0x48 bytes or more would otherwise open as one damaged
	 * buffer. An .etl starts with a buffer header, or, when that is what got
	 * damaged, has the logfile header event right after it. */
	uint8_t first_tmp[HS_ETL_BUFFER_HEADER_SIZE];
	const uint8_t *first = header_at(e, 0, first_tmp);
	if (!peeked && (!first || !plausible_header(first)))
		return HS_EINVAL;
	while (off < e->len) {
		size_t left = e->len - off;
		if (left < HS_ETL_BUFFER_HEADER_SIZE) {
			problem(e, HS_PROBLEM_DAMAGED, off, -1, "%zu trailing bytes are too few for a buffer header",
				left);
			break;
		}
		const uint8_t *p = e->data ? e->data + off : window_get(e, &w, off, HS_ETL_BUFFER_HEADER_SIZE);
		if (!p) {
			problem(e, HS_PROBLEM_UNREADABLE, off, -1,
				"cannot read the buffer header; the rest of the file is unreadable");
			break;
		}
		hs_etl_buffer b = {0};
		b.offset = off;
		b.size = hs_le32(p);
		b.data_end = hs_le32(p + 0x30);
		b.sequence = hs_le64(p + 0x18);
		b.flags = hs_le16(p + 0x34);
		b.type = hs_le16(p + 0x36);
		b.cpu = (b.flags & HS_ETL_BUFFER_FLAG_PROC_INDEX) ? (uint16_t)(hs_le16(p + 0x28) & HS_ETL_PROCESSOR_INDEX_MASK) : 0;
		b.compressed = (b.flags & HS_ETL_BUFFER_FLAG_COMPRESSED) != 0;
		/* A damaged BufferSize would send the walk into the middle of a
		 * buffer and lose every buffer after it. When no plausible header
		 * is here but the previous buffer, stepped by the usual size, is
		 * followed by one, the previous size was the damage. Header
		 * buffers are left alone: relogged files have short ones. */
		hs_etl_buffer *last = e->buffers.len ? buffer_at(e, e->buffers.len - 1) : NULL;
		if (usual && last && !last_resized && !plausible_header(p) && last->type != HS_ETL_BUFFER_TYPE_HEADER &&
		    last->size != usual && size_leads_on(e, last->offset, usual)) {
			uint8_t tmp[HS_ETL_BUFFER_HEADER_SIZE];
			const uint8_t *lp = header_at(e, last->offset, tmp);
			problem(e, HS_PROBLEM_DAMAGED, last->offset, last->cpu,
				"buffer size %u is damaged (no buffer header follows it); read as %u bytes, the usual size",
				last->size, usual);
			last->size = usual;
			last->data_end = lp ? hs_le32(lp + 0x30) : HS_ETL_BUFFER_HEADER_SIZE;
			if (last->data_end < HS_ETL_BUFFER_HEADER_SIZE)
				last->data_end = HS_ETL_BUFFER_HEADER_SIZE;
			else if (!last->compressed && last->data_end > usual)
				last->data_end = usual;
			last_resized = true;
			off = last->offset + usual;
			continue;
		}
		last_resized = false;
		if ((b.size < HS_ETL_BUFFER_HEADER_SIZE || b.size > left) && usual && usual != b.size &&
		    size_leads_on(e, off, usual)) {
			problem(e, HS_PROBLEM_DAMAGED, off, -1,
				"buffer size %u is damaged; read as %u bytes, the usual size", b.size, usual);
			b.size = usual;
			last_resized = true;
		}
		/* Without a header to say it, the last whole data buffer's size. */
		if (!peeked && !b.compressed && b.type != HS_ETL_BUFFER_TYPE_HEADER && b.size >= HS_ETL_BUFFER_HEADER_SIZE &&
		    b.size <= left)
			usual = b.size;
		if (b.size < HS_ETL_BUFFER_HEADER_SIZE) {
			problem(e, HS_PROBLEM_DAMAGED, off, -1,
				"buffer size %u is smaller than a buffer header; the rest of the file is unreadable",
				b.size);
			break;
		}
		if (b.size > left) {
			problem(e, HS_PROBLEM_DAMAGED, off, b.cpu,
				"buffer of %u bytes is cut short by the end of the file (%zu bytes left)", b.size,
				left);
			b.size = (uint32_t)left;
		}
		if (b.data_end < HS_ETL_BUFFER_HEADER_SIZE) {
			problem(e, HS_PROBLEM_DAMAGED, off, b.cpu,
				"buffer data end %u lies inside the buffer header; buffer skipped", b.data_end);
			b.data_end = HS_ETL_BUFFER_HEADER_SIZE;
		} else if (!b.compressed && b.data_end > b.size) {
			/* Truncated file or damaged header: read what is there; a
			 * record cut in half is reported when the walk reaches it. */
			problem(e, HS_PROBLEM_DAMAGED, off, b.cpu,
				"buffer data end %u lies past the buffer's %u bytes; reading up to the end", b.data_end,
				b.size);
			b.data_end = b.size;
		}
		if (b.flags & (HS_ETL_BUFFER_FLAG_EVENTS_LOST | HS_ETL_BUFFER_FLAG_BUFFER_LOST))
			e->lost_flagged++;
		if (!push_buffer(e, &b)) {
			free(w.buf);
			return HS_ENOMEM;
		}
		/* Headers of small buffers are read many per call; of large ones, one by one. */
		w.ahead = b.size <= SMALL_BUFFER ? READ_AHEAD : 0;
		off += b.size;
	}
	free(w.buf);
	return e->buffers.len ? HS_OK : HS_EINVAL;
}

/* Scratch space for buffers read from the file and for decompressed buffers,
 * reused buffer to buffer. */
typedef struct {
	uint8_t *buf;
	size_t cap;
	window raw;
} scratch;

static void scratch_free(scratch *s)
{
	free(s->buf);
	free(s->raw.buf);
}

/* The buffer's bytes as stored in the file: borrowed from memory, or read
 * into s (only up to the end of the records when uncompressed). */
static const uint8_t *stored_bytes(hs_etl *e, const hs_etl_buffer *b, scratch *s)
{
	if (e->data)
		return e->data + b->offset;
	size_t want = b->compressed ? b->size : b->data_end;
	const uint8_t *p = window_get(e, &s->raw, b->offset, want);
	if (!p)
		problem(e, HS_PROBLEM_UNREADABLE, b->offset, b->cpu,
			"cannot read the buffer's %zu bytes (out of memory, or the file changed since open)", want);
	return p;
}

/* Returns the buffer's bytes with records at [0x48, data_end), decompressing
 * into s when needed; NULL (problem recorded) when it cannot be read. */
static const uint8_t *buffer_bytes(hs_etl *e, const hs_etl_buffer *b, scratch *s)
{
	const uint8_t *p = stored_bytes(e, b, s);
	if (!p || !b->compressed)
		return p;
	size_t want = b->data_end;
	if (want > HS_ETL_MAX_BUFFER_BYTES) {
		problem(e, HS_PROBLEM_DAMAGED, b->offset, b->cpu,
			"compressed buffer claims %zu bytes of data; more than any ETW buffer", want);
		return NULL;
	}
	if (s->cap < want) {
		uint8_t *n = realloc(s->buf, want);
		if (!n) {
			problem(e, HS_PROBLEM_UNREADABLE, b->offset, b->cpu, "out of memory decompressing a buffer");
			return NULL;
		}
		s->buf = n;
		s->cap = want;
	}
	memcpy(s->buf, p, HS_ETL_BUFFER_HEADER_SIZE);
	size_t got = 0;
	hs_status st = hs_xpress_decompress(p + HS_ETL_BUFFER_HEADER_SIZE, b->size - HS_ETL_BUFFER_HEADER_SIZE,
					    s->buf + HS_ETL_BUFFER_HEADER_SIZE, want - HS_ETL_BUFFER_HEADER_SIZE, &got);
	if (st != HS_OK || got != want - HS_ETL_BUFFER_HEADER_SIZE) {
		problem(e, HS_PROBLEM_DAMAGED, b->offset, b->cpu,
			"compressed buffer does not decompress to its %zu bytes of data (%s, got %zu)",
			want - HS_ETL_BUFFER_HEADER_SIZE, hs_strerror(st), got);
		return NULL;
	}
	return s->buf;
}

/* Cursor over one buffer's records. */
typedef struct {
	hs_etl *e;
	const hs_etl_buffer *b;
	uint32_t index;
	const uint8_t *bytes;
	uint32_t off;
	bool done;
	hs_etl_record rec;
} cursor;

static void cursor_start(cursor *c, hs_etl *e, uint32_t index, scratch *s)
{
	c->e = e;
	c->index = index;
	c->b = buffer_at(e, index);
	c->bytes = buffer_bytes(e, c->b, s);
	c->off = HS_ETL_BUFFER_HEADER_SIZE;
	c->done = c->bytes == NULL;
}

/* Loads the next record into c->rec; false at the end of the buffer. */
static bool cursor_next(cursor *c)
{
	while (!c->done && c->off < c->b->data_end) {
		const char *why = NULL;
		long size = parse_record(c->bytes, c->off, c->b->data_end, &c->rec, &why);
		if (size <= 0) {
			if (size < 0)
				problem(c->e, HS_PROBLEM_DAMAGED, c->b->offset + c->off, c->b->cpu,
					"%s; rest of buffer %u skipped", why, c->index);
			break;
		}
		hs_etl_record *r = &c->rec;
		r->cpu = c->b->cpu;
		r->buffer_offset = c->b->offset;
		r->offset_in_buffer = c->off;
		r->buffer_index = c->index;
		r->filetime = hs_etl_to_filetime(c->e, r->timestamp);
		c->off += ((uint32_t)size + 7u) & ~7u;
		return true;
	}
	c->done = true;
	return false;
}

static void find_header(hs_etl *e)
{
	scratch s = {0};
	cursor c;
	cursor_start(&c, e, 0, &s);
	/* The first record of buffer 0: a system header with HookId 0. */
	if (cursor_next(&c) && (c.rec.kind == HS_ETL_SYSTEM) && c.rec.group == 0 && c.rec.opcode == 0)
		decode_logfile_header(e, &c.rec);
	else
		problem(e, HS_PROBLEM_DAMAGED, 0, -1,
			"buffer 0 does not start with the logfile header event; times are raw clock values");
	scratch_free(&s);
}

static hs_status finish_open(hs_etl *e, hs_etl **out)
{
	e->buffers = (hs_vec)HS_VEC_INIT(sizeof(hs_etl_buffer));
	hs_status st = index_buffers(e);
	if (st != HS_OK) {
		hs_etl_close(e);
		return st;
	}
	find_header(e);
	if (e->header.valid && e->header.buffers_written && e->header.buffers_written != e->buffers.len)
		problem(e, e->header.buffers_written > e->buffers.len ? HS_PROBLEM_LOST : HS_PROBLEM_DAMAGED, 0, -1,
			"the header says %u buffers were written; the file holds %zu", e->header.buffers_written,
			e->buffers.len);
	*out = e;
	return HS_OK;
}

hs_status hs_etl_open_memory(const uint8_t *data, size_t len, hs_etl **out)
{
	*out = NULL;
	hs_etl *e = calloc(1, sizeof(*e));
	if (!e)
		return HS_ENOMEM;
	e->data = data;
	e->len = len;
	e->fd = -1;
	return finish_open(e, out);
}

hs_status hs_etl_open(const char *path, hs_etl **out)
{
	*out = NULL;
	int fd = hs_open_read(path);
	if (fd < 0)
		return errno == ENOENT ? HS_ENOENT : HS_EIO;
	uint64_t size;
	if (hs_fd_size(fd, &size) != 0 || size > SIZE_MAX) {
		hs_close(fd);
		return HS_EIO;
	}
	hs_etl *e = calloc(1, sizeof(*e));
	if (!e) {
		hs_close(fd);
		return HS_ENOMEM;
	}
	e->fd = -1;
	e->len = (size_t)size;
	if (e->len == 0) {
		hs_close(fd);
		free(e);
		return HS_EINVAL;
	}
	/* Not mmap: every page of a fresh mapping faults on first touch (in a VM
	 * with shadow paging, a hypervisor exit per 4 KiB), which made a walk of a
	 * cached file 5-6x slower than cat. pread copies through the kernel's own
	 * mapping into scratch that stays in cache (bench/etl_parse.c measures it). */
	hs_fadvise_sequential(fd);
	e->fd = fd;
	return finish_open(e, out);
}

void hs_etl_close(hs_etl *e)
{
	if (!e)
		return;
	if (e->fd >= 0)
		hs_close(e->fd);
	if (e->owned)
		free((void *)e->data);
	hs_vec_free(&e->buffers);
	hs_problems_free(&e->problems);
	free(e);
}

const hs_etl_header *hs_etl_get_header(const hs_etl *e) { return &e->header; }
size_t hs_etl_buffer_count(const hs_etl *e) { return e->buffers.len; }
const hs_etl_buffer *hs_etl_buffer_at(const hs_etl *e, size_t i) { return buffer_at(e, i); }
size_t hs_etl_file_size(const hs_etl *e) { return e->len; }
size_t hs_etl_problem_count(const hs_etl *e)
{
	return hs_problems_count(&e->problems);
}
const hs_problem *hs_etl_problem_at(const hs_etl *e, size_t i)
{
	return hs_problems_at(&e->problems, i);
}
const hs_problems *hs_etl_problems(const hs_etl *e) { return &e->problems; }
size_t hs_etl_lost_flagged_buffers(const hs_etl *e) { return e->lost_flagged; }

/* ---- walks ---- */

static hs_status walk_file_order(hs_etl *e, hs_etl_record_fn fn, void *ctx)
{
	scratch s = {0};
	s.raw.ahead = READ_AHEAD;
	for (uint32_t i = 0; i < e->buffers.len; i++) {
		cursor c;
		cursor_start(&c, e, i, &s);
		while (cursor_next(&c))
			if (fn(&c.rec, ctx))
				goto out;
	}
out:
	scratch_free(&s);
	return HS_OK;
}

/* One processor's buffers in sequence order, read one record ahead. */
typedef struct {
	uint64_t sequence, offset;
	uint32_t index;
} lane_entry;

typedef struct {
	lane_entry *order;
	size_t n, next;
	cursor cur;
	scratch s;
	bool has;
} lane;

static int cmp_lane_entry(const void *a, const void *b)
{
	const lane_entry *x = a, *y = b;
	if (x->sequence != y->sequence)
		return x->sequence < y->sequence ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static bool lane_advance(hs_etl *e, lane *l)
{
	for (;;) {
		if (l->has && cursor_next(&l->cur))
			return true;
		if (l->next >= l->n) {
			l->has = false;
			return false;
		}
		cursor_start(&l->cur, e, l->order[l->next++].index, &l->s);
		l->has = true;
	}
}

static hs_status walk_time_order(hs_etl *e, hs_etl_record_fn fn, void *ctx)
{
	uint16_t max_cpu = 0;
	for (size_t i = 0; i < e->buffers.len; i++)
		if (buffer_at(e, i)->cpu > max_cpu)
			max_cpu = buffer_at(e, i)->cpu;
	size_t nl = (size_t)max_cpu + 1;
	lane *lanes = calloc(nl, sizeof(*lanes));
	if (!lanes)
		return HS_ENOMEM;
	hs_status st = HS_OK;
	/* Size each lane by its own buffers: a damaged processor index must not
	 * make every lane as large as the whole file. */
	for (size_t i = 0; i < e->buffers.len; i++)
		lanes[buffer_at(e, i)->cpu].n++;
	for (size_t l = 0; l < nl; l++) {
		lanes[l].order = malloc((lanes[l].n + 1) * sizeof(lane_entry));
		if (!lanes[l].order) {
			st = HS_ENOMEM;
			goto out;
		}
		lanes[l].n = 0;
	}
	for (uint32_t i = 0; i < e->buffers.len; i++) {
		const hs_etl_buffer *b = buffer_at(e, i);
		lane *l = &lanes[b->cpu];
		l->order[l->n++] = (lane_entry){b->sequence, b->offset, i};
	}
	for (size_t l = 0; l < nl; l++) {
		qsort(lanes[l].order, lanes[l].n, sizeof(lane_entry), cmp_lane_entry);
		/* One processor's buffers follow one another in the file; with
		 * several, a lane's read-ahead would mostly hold the other lanes'. */
		if (nl == 1)
			lanes[l].s.raw.ahead = READ_AHEAD;
		lane_advance(e, &lanes[l]);
	}
	/* k-way merge by timestamp; ties keep processor order. Processor counts
	 * are small (tens), so a linear scan beats a heap's bookkeeping. */
	for (;;) {
		lane *best = NULL;
		for (size_t l = 0; l < nl; l++)
			if (lanes[l].has && (!best || lanes[l].cur.rec.timestamp < best->cur.rec.timestamp))
				best = &lanes[l];
		if (!best)
			break;
		if (fn(&best->cur.rec, ctx))
			break;
		lane_advance(e, best);
	}
out:
	for (size_t l = 0; l < nl; l++) {
		free(lanes[l].order);
		scratch_free(&lanes[l].s);
	}
	free(lanes);
	return st;
}

hs_status hs_etl_foreach(hs_etl *e, hs_etl_order order, hs_etl_record_fn fn, void *ctx)
{
	return order == HS_ETL_TIME_ORDER ? walk_time_order(e, fn, ctx) : walk_file_order(e, fn, ctx);
}

const char *hs_etl_header_type_name(uint8_t t)
{
	switch (t) {
	case HS_ETL_HT_SYSTEM32: return "SYS32";
	case HS_ETL_HT_SYSTEM64: return "SYS64";
	case HS_ETL_HT_COMPACT32: return "COMPACT32";
	case HS_ETL_HT_COMPACT64: return "COMPACT64";
	case HS_ETL_HT_PERFINFO32: return "PERF32";
	case HS_ETL_HT_PERFINFO64: return "PERF64";
	case HS_ETL_HT_EVENT_HEADER32: return "EH32";
	case HS_ETL_HT_EVENT_HEADER64: return "EH64";
	case HS_ETL_HT_FULL_HEADER32: return "FULL32";
	case HS_ETL_HT_FULL_HEADER64: return "FULL64";
	case HS_ETL_HT_INSTANCE32: return "INSTANCE32";
	case HS_ETL_HT_INSTANCE64: return "INSTANCE64";
	}
	return "MESSAGE";
}
