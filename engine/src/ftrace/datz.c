/* ftrace/datz.c: compresses one CPU's ring pages into trace.dat v7's chunked CPU-data layout (zstd), per thread, counting events as it goes. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zstd.h>

#include <traceevent/kbuffer.h>

#include "ftrace/ftrace.h"
#include "hindsight/limits.h"
#include "hindsight/vec.h"

/*
 * The layout libtracecmd writes and reads for a compressed BUFFER section's
 * CPU data (trace-cmd.dat.v7(5), "COMPRESSION FORMAT OF THE TRACE DATA"):
 *   u32 chunk count, then per chunk: u32 compressed size, u32 uncompressed
 *   size (whole pages), the compressed bytes (one zstd frame).
 * hs_datz keeps the chunks without the count, with an index, so a snapshot
 * that must fit a nearly full disk can keep only the newest chunks without
 * compressing again; the writer (dat.c) puts the count in front.
 * Numbers are in the file's endianness, which is the host's: the writer's
 * headers come from this machine too. Each frame is independent, so CPUs and
 * chunks compress in any thread; a reader decompresses one chunk at a time.
 */

/* The compressed data lives in its own mapping, grown with mremap: no copy
 * when it grows. Its pages fault in as zstd writes them, only those used (a
 * tenth of the raw data: ~10 MB for a 128 MB CPU ring). Asking for huge pages
 * and populating each doubling in one call, as before, cost a CPU thread up
 * to 38 ms of a 0.17 s snapshot on the 2026-12 VM (huge pages come from memory
 * the host had not backed yet), and populated pages never used (16 MB for
 * 10); 4 KB faults cost ~1.3 us each there (docs/snapshots.md). */
static int grow(hs_datz *z, size_t need)
{
	if (z->len + need <= z->cap)
		return 0;
	size_t cap = z->cap ? z->cap : (size_t)4 << 20;
	while (cap < z->len + need)
		cap *= 2;
	void *d = z->data ? mremap(z->data, z->cap, cap, MREMAP_MAYMOVE)
			  : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (d == MAP_FAILED)
		return -1;
	z->data = d;
	z->cap = cap;
	return 0;
}

static int grow_index(hs_datz *z)
{
	hs_datz_chunk *c = hs_array_grow(z->chunks, sizeof *c, z->n, &z->ncap, 256);
	if (!c)
		return -1;
	z->chunks = c;
	return 0;
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* The 5-bit type_len of a ring event header (struct ring_buffer_event's first
 * bitfield: the low bits on a little-endian kernel, the high ones on a big-endian). */
static unsigned type_len(uint32_t h)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return h >> 27;
#else
	return h & 31u;
#endif
}

/*
 * Events in one sub-buffer, counted the way libtraceevent's kbuffer walks it
 * (kbuffer-parse.c: load_subbuffer, translate_data, __next_event), without its
 * per-event calls and timestamp arithmetic: 17x less CPU on a full 128 MB CPU
 * ring here (0.011 s against 0.185 s, the same 2,711,972 events; counting with
 * kbuffer cost as much as compressing). The page: u64 timestamp, a long of
 * commit (data bytes in the low 27 bits, missed-event flags above), then the
 * events; type_len 29 is padding (its length in the next word), 30 and 31 a
 * time extension or stamp (8 bytes), 0 an event whose length (plus 4) is in
 * the next word, 1-28 an event of type_len words. Offsets are unsigned 32-bit
 * as in kbuffer; a walk that would not move forward ends the page (kbuffer
 * would loop on such a page; the kernel never writes one).
 */
unsigned hs_dat_page_events(const unsigned char *page, size_t subbuf)
{
	size_t start = 8 + sizeof(long);
	if (subbuf < start + 4)
		return 0;
	unsigned long commit;
	memcpy(&commit, page + 8, sizeof(commit));
	uint32_t size = (uint32_t)commit & ((1u << 27) - 1);
	const unsigned char *d = page + start;
	size_t room = subbuf - start; /* bytes a read may touch */
	uint32_t next = 0;
	unsigned n = 0;
	while (next < size && (size_t)next + 8 <= room) {
		uint32_t curr = next, h = get_u32(d + curr), index = curr + 4;
		unsigned t = type_len(h);
		int32_t length;
		switch (t) {
		case 29: /* padding */
			length = (int32_t)get_u32(d + index);
			break;
		case 30: /* time extend */
		case 31: /* time stamp */
			index += 4;
			length = 0;
			break;
		case 0:
			length = ((int32_t)get_u32(d + index) - 4 + 3) & ~3;
			index += 4;
			n++;
			break;
		default:
			length = (int32_t)(t * 4);
			n++;
			break;
		}
		next = index + (uint32_t)length;
		if (next <= curr)
			break;
	}
	return n;
}

hs_status hs_datz_begin(hs_datz *z, int level)
{
	z->len = 0;
	z->raw = 0;
	z->n = 0;
	z->first = 0;
	z->events = 0;
	if (!z->cctx && !(z->cctx = ZSTD_createCCtx()))
		return HS_ENOMEM;
	if (!z->kb && !(z->kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST)))
		return HS_ENOMEM;
	/* As libtracecmd's zstd: no content size in each frame (the chunk header
	 * has it); the level is ours (HS_LINUX_DAT_ZSTD_LEVEL: speed over size). */
	if (ZSTD_isError(ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_and_parameters)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level)))
		return HS_EINVAL;
	return HS_OK;
}

/* The first event's time in the page at `page`, or its last event's. */
static bool page_event_ts(struct kbuffer *kb, const unsigned char *page, bool last, uint64_t *ts)
{
	unsigned long long t;
	bool any = false;
	if (kbuffer_load_subbuffer(kb, (void *)page) < 0)
		return false;
	for (void *d = kbuffer_read_event(kb, &t); d; d = last ? kbuffer_next_event(kb, &t) : NULL) {
		*ts = t;
		any = true;
	}
	return any;
}

size_t hs_datz_bound(size_t bytes)
{
	return 8 + ZSTD_compressBound(bytes);
}

hs_status hs_datz_pack(hs_datz *ctx, const unsigned char *pages, size_t bytes, size_t subbuf, unsigned char *out,
		       size_t cap, hs_datz_chunk *c)
{
	if (!ctx->cctx || !ctx->kb || !bytes || bytes % subbuf || bytes > UINT32_MAX || cap < hs_datz_bound(bytes))
		return HS_EINVAL;
	size_t n = ZSTD_compress2(ctx->cctx, out + 8, cap - 8, pages, bytes);
	if (ZSTD_isError(n))
		return HS_EIO;
	*c = (hs_datz_chunk){.zlen = (uint32_t)n, .raw = (uint32_t)bytes};
	/* Counted after the compression read the pages: they are in the cache. */
	size_t first = bytes, last = 0;
	for (size_t p = 0; p < bytes; p += subbuf) {
		unsigned e = hs_dat_page_events(pages + p, subbuf);
		if (e && first == bytes)
			first = p;
		if (e)
			last = p;
		c->events += e;
	}
	if (c->events && page_event_ts(ctx->kb, pages + first, false, &c->first_ts))
		page_event_ts(ctx->kb, pages + last, true, &c->last_ts);
	put_u32(out, (uint32_t)n);
	put_u32(out + 4, (uint32_t)bytes);
	return HS_OK;
}

/* The chunk at z->len (its header and frame written there) joins the index. */
static void index_add(hs_datz *z, hs_datz_chunk c)
{
	c.off = z->len;
	z->chunks[z->n++] = c;
	z->events += c.events;
	z->raw += c.raw;
	z->len += 8 + c.zlen;
}

hs_status hs_datz_add(hs_datz *z, const unsigned char *pages, size_t bytes, size_t subbuf)
{
	hs_datz_chunk c;
	if (!z->cctx || !z->kb || !bytes || bytes % subbuf)
		return HS_EINVAL;
	if (grow(z, hs_datz_bound(bytes)) || grow_index(z))
		return HS_ENOMEM;
	hs_status st = hs_datz_pack(z, pages, bytes, subbuf, z->data + z->len, z->cap - z->len, &c);
	if (st == HS_OK)
		index_add(z, c);
	return st;
}

hs_status hs_datz_put(hs_datz *z, const unsigned char *packed, const hs_datz_chunk *c)
{
	if (get_u32(packed) != c->zlen || get_u32(packed + 4) != c->raw)
		return HS_EINVAL;
	if (grow(z, 8 + (size_t)c->zlen) || grow_index(z))
		return HS_ENOMEM;
	memcpy(z->data + z->len, packed, 8 + (size_t)c->zlen);
	index_add(z, *c);
	return HS_OK;
}

hs_status hs_datz_compress(const unsigned char *pages, uint64_t bytes, size_t subbuf, int level, hs_datz *z)
{
	size_t chunk = subbuf * HS_LINUX_DAT_CHUNK_PAGES;
	hs_status st = hs_datz_begin(z, level);
	for (uint64_t off = 0; st == HS_OK && off < bytes; off += chunk)
		st = hs_datz_add(z, pages + off, bytes - off < chunk ? (size_t)(bytes - off) : chunk, subbuf);
	if (st != HS_OK) {
		z->len = 0;
		z->n = 0;
		z->raw = 0;
	}
	return st;
}

uint64_t hs_datz_kept_bytes(const hs_datz *z)
{
	return z->first < z->n ? z->len - z->chunks[z->first].off : 0;
}

uint64_t hs_datz_kept_raw(const hs_datz *z)
{
	uint64_t raw = 0;
	for (size_t i = z->first; i < z->n; i++)
		raw += z->chunks[i].raw;
	return raw;
}

uint64_t hs_datz_kept_events(const hs_datz *z)
{
	uint64_t n = 0;
	for (size_t i = z->first; i < z->n; i++)
		n += z->chunks[i].events;
	return n;
}

void hs_datz_free(hs_datz *z)
{
	ZSTD_freeCCtx(z->cctx);
	if (z->kb)
		kbuffer_free(z->kb);
	if (z->data)
		munmap(z->data, z->cap);
	free(z->chunks);
	*z = (hs_datz){0};
}
