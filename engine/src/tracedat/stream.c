/* tracedat/stream.c: one CPU's ring pages of a trace.dat (raw or zstd chunks) decoded to records, bounds-checked. */
#if defined(__linux__) /* libtraceevent and libzstd: the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <stdlib.h>
#include <string.h>

#include "tracedat/td_int.h"

/*
 * A ring page (the kernel's buffer_data_page, laid out by header_page): u64
 * timestamp, a long "commit" (bytes of records, and in bits 31/30 "events were
 * lost before this page" / "their count is stored after the records"), then
 * the records. A record starts with a u32: type_len (5 bits) and time_delta
 * (27 bits). type_len 1..28: a payload of type_len*4 bytes follows; 0: a u32
 * length (payload + 4) then the payload; 29: padding (delta 0: the rest of the
 * page; else a discarded record, u32 length); 30: a time extend (u32: delta
 * bits 27 and up); 31: an absolute timestamp (u32: bits 27..58). Decoding is
 * the kernel's and libtraceevent's kbuffer's; every length is checked against
 * the commit, and the commit against the page, before anything is read.
 */

enum {
	TYPE_PADDING = 29,
	TYPE_TIME_EXTEND = 30,
	TYPE_TIME_STAMP = 31,
	COMMIT_MASK = (1 << 27) - 1,
	TS_SHIFT = 27,
};
#define MISSED_EVENTS (1u << 31)
#define MISSED_STORED (1u << 30)
#define TS_MSB (0xf8ull << 56)

static void stop(td_stream *s)
{
	s->done = true;
	s->pdata = NULL;
	s->pcommit = s->ppos = 0;
}

/* Raw data: the next window of whole pages. */
static bool load_window(td_stream *s)
{
	unsigned page = s->buf->page_size;
	uint64_t left = s->end - s->pos;
	size_t n = (size_t)(left < s->win_cap ? left : s->win_cap);
	n -= n % page;
	if (n == 0) {
		if (left)
			td_problem(s->f, HS_PROBLEM_DAMAGED, s->pos, s->cpu,
				   "buffer '%s', CPU %d: its data ends with %llu bytes, less than a %u-byte page: ignored",
				   s->buf->name, s->cpu, (unsigned long long)left, page);
		return false;
	}
	if (!td_pread(s->f, s->pos, s->win, n)) {
		td_problem(s->f, HS_PROBLEM_UNREADABLE, s->pos, s->cpu, "buffer '%s', CPU %d: its data cannot be read",
			   s->buf->name, s->cpu);
		return false;
	}
	s->win_at = s->pos;
	s->win_len = n;
	s->page_at = 0;
	s->pos += n;
	return true;
}

/* Grows a buffer to need bytes within the walk's budget (HS_TRACEDAT_MAX_WALK_BYTES over every stream's
 * buffers): false on out of memory or when the budget would be passed, with a problem saying which. */
static bool grow(td_stream *s, uint8_t **p, size_t *cap, size_t need, uint64_t at)
{
	if (need <= *cap)
		return true;
	if (*s->held - *cap + need > HS_TRACEDAT_MAX_WALK_BYTES) {
		td_problem(s->f, HS_PROBLEM_UNREADABLE, at, s->cpu,
			   "buffer '%s', CPU %d: its data would take the walk's buffers past %u MB: the rest is not read",
			   s->buf->name, s->cpu, HS_TRACEDAT_MAX_WALK_BYTES >> 20);
		return false;
	}
	uint8_t *n = malloc(need);
	if (!n) {
		td_problem(s->f, HS_PROBLEM_UNREADABLE, at, s->cpu, "buffer '%s', CPU %d: out of memory", s->buf->name,
			   s->cpu);
		return false;
	}
	free(*p);
	*s->held = *s->held - *cap + need;
	*p = n;
	*cap = need;
	return true;
}

/* Compressed data: the next chunk (u32 compressed size, u32 size, one zstd frame), decompressed. A chunk
 * that does not decompress is skipped (its neighbours are whole); a chunk header that does not fit ends
 * the stream, since the next chunk cannot be found. */
static bool load_chunk(td_stream *s)
{
	unsigned page = s->buf->page_size;
	while (s->chunks_left) {
		uint64_t at = s->pos;
		uint8_t h[8];
		if (s->end - s->pos < sizeof h || !td_pread(s->f, s->pos, h, sizeof h)) {
			td_problem(s->f, HS_PROBLEM_DAMAGED, at, s->cpu,
				   "buffer '%s', CPU %d: cut before the header of its chunk %u from the end", s->buf->name,
				   s->cpu, s->chunks_left);
			return false;
		}
		uint32_t zsize = td_rd32(h), usize = td_rd32(h + 4);
		s->chunks_left--;
		if (zsize > s->end - s->pos - sizeof h) {
			td_problem(s->f, HS_PROBLEM_DAMAGED, at, s->cpu,
				   "buffer '%s', CPU %d: a compressed chunk of %u bytes runs past its data (%llu left)",
				   s->buf->name, s->cpu, zsize, (unsigned long long)(s->end - s->pos - sizeof h));
			return false;
		}
		s->pos += sizeof h + zsize;
		if (usize == 0)
			continue;
		if (usize > HS_TRACEDAT_MAX_CHUNK_BYTES || usize % page) {
			td_problem(s->f, HS_PROBLEM_DAMAGED, at, s->cpu,
				   "buffer '%s', CPU %d: a chunk says it holds %u bytes, not whole %u-byte pages under "
				   "%u: skipped",
				   s->buf->name, s->cpu, usize, page, HS_TRACEDAT_MAX_CHUNK_BYTES);
			continue;
		}
		if (!grow(s, &s->zin, &s->zin_cap, zsize ? zsize : 1, at) || !grow(s, &s->win, &s->win_cap, usize, at))
			return false;
		size_t got = 0;
		if (!td_pread(s->f, at + sizeof h, s->zin, zsize)) {
			td_problem(s->f, HS_PROBLEM_UNREADABLE, at, s->cpu, "buffer '%s', CPU %d: a chunk cannot be read",
				   s->buf->name, s->cpu);
			return false;
		}
		if (td_unzip(s->dctx, s->zin, zsize, s->win, usize, &got) != HS_OK || got != usize) {
			td_problem(s->f, HS_PROBLEM_DAMAGED, at, s->cpu,
				   "buffer '%s', CPU %d: a chunk does not decompress to its %u bytes: its %u pages are "
				   "skipped",
				   s->buf->name, s->cpu, usize, usize / page);
			continue;
		}
		s->win_at = at;
		s->win_len = usize;
		s->page_at = 0;
		return true;
	}
	return false;
}

/* The next page with records: its header checked, the stream's page state set. */
static bool load_page(td_stream *s)
{
	unsigned page = s->buf->page_size, klong = s->f->klong, hdr = 8 + klong;
	long long carried = 0; /* lost events told by empty pages: the next record carries them */
	for (;;) {
		if (s->page_at + page > s->win_len) {
			bool more = s->buf->compressed ? load_chunk(s) : load_window(s);
			if (!more)
				return false;
		}
		const uint8_t *p = s->win + s->page_at;
		uint64_t at = s->buf->compressed ? s->win_at : s->win_at + s->page_at;
		s->page_at += page;
		uint32_t flags = (uint32_t)(klong == 8 ? td_rd64(p + 8) : td_rd32(p + 8));
		uint32_t commit = flags & COMMIT_MASK;
		if (commit > page - hdr) {
			td_problem(s->f, HS_PROBLEM_DAMAGED, at, s->cpu,
				   "buffer '%s', CPU %d: a ring page says it holds %u bytes, more than its %u: skipped",
				   s->buf->name, s->cpu, commit, page - hdr);
			continue;
		}
		long long missed = 0;
		if (flags & MISSED_EVENTS) {
			missed = -1;
			if ((flags & MISSED_STORED) && commit + klong <= page - hdr)
				missed = klong == 8 ? (long long)td_rd64(p + hdr + commit) : (long long)td_rd32(p + hdr + commit);
		}
		if (commit == 0) {
			if (missed)
				carried = missed;
			continue;
		}
		s->pts = td_rd64(p);
		s->pdata = p + hdr;
		s->pcommit = commit;
		s->ppos = 0;
		s->pmissed = missed ? missed : carried;
		s->pfirst = true;
		return true;
	}
}

static void page_damage(td_stream *s, const char *what)
{
	uint64_t at = s->buf->compressed ? s->win_at : s->win_at + s->page_at - s->buf->page_size;
	td_problem(s->f, HS_PROBLEM_DAMAGED, at, s->cpu,
		   "buffer '%s', CPU %d: %s at byte %u of a ring page (%u committed): the rest of the page is skipped",
		   s->buf->name, s->cpu, what, s->ppos, s->pcommit);
	s->ppos = s->pcommit;
}

bool td_stream_next(td_stream *s)
{
	while (!s->done) {
		if (s->ppos + 4 > s->pcommit) {
			if (!load_page(s)) {
				stop(s);
				return false;
			}
			continue;
		}
		const uint8_t *e = s->pdata + s->ppos;
		uint32_t h = td_rd32(e), type = h & 31, delta = h >> 5;
		uint32_t left = s->pcommit - s->ppos, data, len;
		switch (type) {
		case TYPE_PADDING:
			/* delta 0: the rest of the page is empty; else a discarded record whose delta still counts
			 * (as kbuffer reads it); one that claims more than the commit ends the page. */
			if (delta == 0 || left < 8 || td_rd32(e + 4) > left - 4) {
				s->ppos = s->pcommit;
				continue;
			}
			s->pts += delta;
			s->ppos += 4 + td_rd32(e + 4);
			continue;
		case TYPE_TIME_EXTEND:
			if (left < 8) {
				page_damage(s, "a cut time extend");
				continue;
			}
			s->pts += ((uint64_t)td_rd32(e + 4) << TS_SHIFT) + delta;
			s->ppos += 8;
			continue;
		case TYPE_TIME_STAMP:
			if (left < 8) {
				page_damage(s, "a cut timestamp");
				continue;
			}
			s->pts = (((uint64_t)td_rd32(e + 4) << TS_SHIFT) | delta) | (s->pts & TS_MSB);
			s->ppos += 8;
			continue;
		case 0: {
			uint32_t l = left >= 8 ? td_rd32(e + 4) : 0;
			if (left < 8 || l < 4) {
				page_damage(s, "a record of impossible length");
				continue;
			}
			data = 8;
			/* The kernel stores payload + 4 and pads the payload to 4 bytes. */
			len = (l - 4 + 3) & ~3u;
			if (len > left - data) {
				page_damage(s, "a record longer than the page");
				continue;
			}
			break;
		}
		default:
			data = 4;
			len = type * 4;
			if (len > left - data) {
				page_damage(s, "a record longer than the page");
				continue;
			}
			break;
		}
		s->pts += delta;
		s->cur.ts = s->pts;
		s->cur.data = e + data;
		s->cur.size = len;
		s->cur.record_size = data + len;
		s->cur.missed = s->pfirst ? s->pmissed : 0;
		s->pfirst = false;
		s->ppos += data + len;
		return true;
	}
	return false;
}

hs_status td_stream_init(td_stream *s, const td_file *f, const td_buffer *buf, size_t cpu_index, uint64_t *held)
{
	memset(s, 0, sizeof(*s));
	s->held = held;
	const td_cpu_range *r = &buf->cpus[cpu_index];
	s->f = f;
	s->buf = buf;
	s->cpu = r->cpu;
	s->pos = r->off;
	s->end = r->off + r->size;
	if (r->size == 0) {
		s->done = true;
		return HS_OK;
	}
	if (buf->compressed) {
		/* libtracecmd before 3.2 (trace-cmd 3.1.6, and the engine, which writes as it does) gives the
		 * size without the 4-byte chunk count, later ones with it: the chunks delimit themselves, so
		 * allow the 4 bytes either way (the file's end still bounds them). */
		s->end = r->off + r->size + 4 <= f->size ? r->off + r->size + 4 : f->size;
		uint8_t h[4];
		if (s->end - s->pos < 4 || !td_pread(f, s->pos, h, sizeof h)) {
			td_problem(f, HS_PROBLEM_DAMAGED, s->pos, s->cpu, "buffer '%s', CPU %d: its chunk count is cut",
				   buf->name, s->cpu);
			s->done = true;
			return HS_OK;
		}
		s->chunks_left = td_rd32(h);
		s->pos += 4;
		s->dctx = td_znew();
		if (!s->dctx)
			return HS_ENOMEM;
		return HS_OK;
	}
	/* A read window of whole pages, no larger than the range's whole pages (a part page is not read: the
	 * first load says so). */
	size_t page = buf->page_size, want = HS_TRACEDAT_READ_WINDOW_BYTES - HS_TRACEDAT_READ_WINDOW_BYTES % page;
	if (want < page)
		want = page;
	if (r->size < want)
		want = (size_t)(r->size / page * page);
	if (want && !grow(s, &s->win, &s->win_cap, want, r->off))
		s->done = true;
	return HS_OK;
}

void td_stream_free(td_stream *s)
{
	if (s->held)
		*s->held -= s->win_cap + s->zin_cap;
	free(s->win);
	free(s->zin);
	if (s->dctx)
		td_zfree(s->dctx);
	memset(s, 0, sizeof(*s));
}

#else
typedef int hs_tracedat_stream_unused; /* ISO C wants a declaration in every file */
#endif
