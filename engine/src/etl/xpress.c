/* etl/xpress.c: MS-XCA Plain LZ77 decoder and greedy hash-chain encoder; see xpress.h. */
#include "etl/xpress.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Written from [MS-XCA] 2.3 (compression) and 2.4 (decompression). The stream
 * is a 32-bit little-endian flag word, read from its top bit down, then the 32
 * items it describes, then the next flag word. Flag 0: one literal byte.
 * Flag 1: a 16-bit little-endian match word, offset-1 in its top 13 bits and
 * a length code in its low 3; code 7 continues in a length nibble (two matches
 * share one byte: the low nibble for the first, the high for the next), nibble
 * 15 in a byte, byte 255 in a 16-bit word, word 0 in a 32-bit word.
 */

#define XP_MIN_MATCH 3u
/* 13 offset bits, stored minus one. */
#define XP_MAX_OFFSET 8192u
/* The 16- and 32-bit extended lengths count from here (15 + 7, in the spec's words). */
#define XP_EXT_BIAS 22u
#define XP_TOP_FLAG 0x80000000u
/* Fixed copy size for short literal runs and matches when both buffers have room to spare. */
#define XP_CHUNK 16u

static inline uint32_t rd16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* x != 0. Counting zero flags at once is what lets literal runs go by memcpy. */
static inline unsigned lead_zeros32(uint32_t x)
{
#if defined(__GNUC__) || defined(__clang__)
	return (unsigned)__builtin_clz(x);
#else
	unsigned n = 0;
	while (!(x & XP_TOP_FLAG)) {
		x <<= 1;
		n++;
	}
	return n;
#endif
}

/*
 * Copies a match of len bytes from off bytes back; the caller checked both
 * ends. When the match overlaps its own output (off < len) the spec copies one
 * byte at a time so the pattern repeats; copying in chunks that are whole
 * multiples of off gives the same bytes: each chunk reads only bytes already
 * written, and its distance back is a multiple of the period.
 */
static inline void copy_match(uint8_t *op, size_t off, size_t len)
{
	const uint8_t *src = op - off;
	if (off >= len) {
		memcpy(op, src, len);
		return;
	}
	if (off == 1) {
		memset(op, *src, len);
		return;
	}
	size_t done = 0;
	while (done < len) {
		/* done + off is off times a power of two, so src is a period behind op + done. */
		size_t n = done + off;
		if (n > len - done)
			n = len - done;
		memcpy(op + done, src, n);
		done += n;
	}
}

hs_status hs_xpress_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap, size_t *out_len)
{
	if (!out_len)
		return HS_EINVAL;
	*out_len = 0;
	/* An empty stream has no flag word, so it is malformed too. */
	if (!in || (!out && out_cap))
		return HS_EINVAL;
	uint8_t none;
	if (!out)
		out = &none;

	hs_status st = HS_EINVAL;
	const uint8_t *ip = in;
	const uint8_t *const iend = in + in_len;
	uint8_t *op = out;
	uint8_t *const oend = out + out_cap;
	/* The byte whose high nibble the next code-7 match uses; the spec's LastLengthHalfByte. */
	const uint8_t *half = NULL;

	for (;;) {
		if (iend - ip < 4)
			goto fail;
		/* Kept so the next flag is always the top bit; left counts the real ones. */
		uint32_t flags = rd32(ip);
		ip += 4;
		unsigned left = 32;
		while (left) {
			if (!(flags & XP_TOP_FLAG)) {
				unsigned run = flags ? lead_zeros32(flags) : 32;
				if (run > left)
					run = left;
				size_t in_avail = (size_t)(iend - ip), out_avail = (size_t)(oend - op);
				if (run <= XP_CHUNK && in_avail >= XP_CHUNK && out_avail >= XP_CHUNK) {
					/* Most runs are short: one fixed-size copy, the excess overwritten later. */
					memcpy(op, ip, XP_CHUNK);
				} else if (run > in_avail || run > out_avail) {
					/* The spec reads each literal before it writes it: name the first byte that fails. */
					st = in_avail <= out_avail ? HS_EINVAL : HS_ELIMIT;
					goto fail;
				} else {
					memcpy(op, ip, run);
				}
				op += run;
				ip += run;
				flags = run < 32 ? flags << run : 0;
				left -= run;
				continue;
			}
			flags <<= 1;
			left--;
			/* The only way the stream ends: a match flag with no input left. */
			if (ip == iend) {
				*out_len = (size_t)(op - out);
				return HS_OK;
			}
			if (iend - ip < 2)
				goto fail;
			uint32_t word = rd16(ip);
			ip += 2;
			size_t off = (word >> 3) + 1;
			/* 64 bits: a 32-bit extended length plus 3 must not wrap. */
			uint64_t len = word & 7;
			if (len == 7) {
				if (!half) {
					if (ip == iend)
						goto fail;
					half = ip++;
					len = *half & 15;
				} else {
					len = *half >> 4;
					half = NULL;
				}
				if (len == 15) {
					if (ip == iend)
						goto fail;
					len = *ip++;
					if (len == 255) {
						if (iend - ip < 2)
							goto fail;
						len = rd16(ip);
						ip += 2;
						if (len == 0) {
							if (iend - ip < 4)
								goto fail;
							len = rd32(ip);
							ip += 4;
						}
						/* Shorter lengths have shorter encodings; the spec calls these invalid. */
						if (len < XP_EXT_BIAS)
							goto fail;
						len -= XP_EXT_BIAS;
					}
					len += 15;
				}
				len += 7;
			}
			len += XP_MIN_MATCH;
			/* A 32-bit length field that wraps when 3 is added is corrupt, not long. */
			if (len > UINT32_MAX)
				goto fail;
			if (off > (size_t)(op - out))
				goto fail;
			if (len > (uint64_t)(oend - op)) {
				st = HS_ELIMIT;
				goto fail;
			}
			if (off >= XP_CHUNK && (size_t)(oend - op) - len >= XP_CHUNK) {
				/* Whole chunks, each reading only bytes before it, may run past the match into the slack. */
				for (size_t done = 0; done < len; done += XP_CHUNK)
					memcpy(op + done, op + done - off, XP_CHUNK);
			} else {
				copy_match(op, off, (size_t)len);
			}
			op += len;
		}
	}

fail:
	*out_len = (size_t)(op - out);
	return st;
}

/* ---- Compression ---- */

/* Hash table sizes: scaled down with the input, so small inputs do not pay for a big table. */
#define XP_HASH_MIN_BITS 8u
#define XP_HASH_MAX_BITS 15u
/* Candidates tried per position: enough for a fair ratio, bounded time on any input. */
#define XP_CHAIN_DEPTH 32u
#define XP_NONE SIZE_MAX

typedef struct {
	uint8_t *out;
	size_t cap;
	size_t pos;
	/* Where the current flag word goes once its 32 items are known. */
	size_t flag_pos;
	uint32_t flags;
	unsigned nflags;
	/* The length byte whose high nibble is still free; 0 (always a flag word) means none. */
	size_t half;
} xp_writer;

static bool put8(xp_writer *w, uint32_t v)
{
	if (w->cap - w->pos < 1)
		return false;
	w->out[w->pos++] = (uint8_t)v;
	return true;
}

static bool put16(xp_writer *w, uint32_t v)
{
	if (w->cap - w->pos < 2)
		return false;
	w->out[w->pos++] = (uint8_t)v;
	w->out[w->pos++] = (uint8_t)(v >> 8);
	return true;
}

static bool put32(xp_writer *w, uint32_t v)
{
	if (w->cap - w->pos < 4)
		return false;
	wr32(w->out + w->pos, v);
	w->pos += 4;
	return true;
}

/* Records one item's flag; after the 32nd, writes the word and reserves the
 * next one straight away, as the spec's encoder does, so a stream that ends
 * here still has a flag word to carry its end mark. */
static bool put_flag(xp_writer *w, uint32_t bit)
{
	w->flags = w->flags << 1 | bit;
	if (++w->nflags < 32)
		return true;
	wr32(w->out + w->flag_pos, w->flags);
	w->flags = 0;
	w->nflags = 0;
	w->flag_pos = w->pos;
	return put32(w, 0);
}

/* len in [3, UINT32_MAX], off in [1, 8192]. */
static bool put_match(xp_writer *w, size_t off, size_t len)
{
	uint32_t word = (uint32_t)(off - 1) << 3;
	uint32_t v = (uint32_t)(len - XP_MIN_MATCH);
	if (v < 7)
		return put16(w, word | v) && put_flag(w, 1);
	if (!put16(w, word | 7))
		return false;
	uint32_t rest = v - 7;
	uint32_t nibble = rest < 15 ? rest : 15;
	if (!w->half) {
		w->half = w->pos;
		if (!put8(w, nibble))
			return false;
	} else {
		w->out[w->half] |= (uint8_t)(nibble << 4);
		w->half = 0;
	}
	if (rest >= 15) {
		rest -= 15;
		if (rest < 255) {
			if (!put8(w, rest))
				return false;
		} else {
			/* The wide forms hold the whole length minus 3, not what is left of it. */
			if (!put8(w, 255))
				return false;
			if (v <= 0xFFFFu) {
				if (!put16(w, v))
					return false;
			} else if (!put16(w, 0) || !put32(w, v)) {
				return false;
			}
		}
	}
	return put_flag(w, 1);
}

static inline uint32_t hash3(const uint8_t *p, unsigned bits)
{
	uint32_t x = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
	return (x * 2654435761u) >> (32u - bits);
}

static inline size_t match_len(const uint8_t *a, const uint8_t *b, size_t max)
{
	size_t n = 0;
	while (n < max && a[n] == b[n])
		n++;
	return n;
}

size_t hs_xpress_compress_bound(size_t in_len)
{
	/* One flag word per 32 items plus the one that carries the end mark; a
	 * match (one flag, at most 10 bytes, for at least 3 bytes of input) never
	 * costs more than the literals it replaces. */
	size_t words = in_len / 32 + 1;
	if (words > (SIZE_MAX - in_len) / 4)
		return SIZE_MAX;
	return in_len + words * 4;
}

hs_status hs_xpress_compress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap, size_t *out_len)
{
	if (!out_len)
		return HS_EINVAL;
	*out_len = 0;
	if ((!in && in_len) || (!out && out_cap))
		return HS_EINVAL;

	hs_status st = HS_ELIMIT;
	size_t *head = NULL, *prev = NULL;
	xp_writer w = {.out = out, .cap = out_cap};
	if (!put32(&w, 0))
		goto fail;
	unsigned bits = XP_HASH_MIN_BITS;
	while (bits < XP_HASH_MAX_BITS && ((size_t)1 << bits) < in_len)
		bits++;
	/* Chains only need the last window: a ring indexed by position, no bigger than the input. */
	size_t ring = 1;
	while (ring < XP_MAX_OFFSET && ring < in_len)
		ring <<= 1;
	const size_t ring_mask = ring - 1;
	head = malloc(((size_t)1 << bits) * sizeof *head);
	prev = malloc(ring * sizeof *prev);
	if (!head || !prev) {
		st = HS_ENOMEM;
		goto fail;
	}
	for (size_t h = 0; h < ((size_t)1 << bits); h++)
		head[h] = XP_NONE;

	/* Keeps every match length within the 32-bit field the decoder accepts. */
	const size_t max_len = (size_t)UINT32_MAX < SIZE_MAX ? (size_t)UINT32_MAX : SIZE_MAX;
	size_t i = 0;
	while (i < in_len) {
		size_t best_len = 0, best_off = 0;
		if (in_len - i >= XP_MIN_MATCH) {
			uint32_t h = hash3(in + i, bits);
			size_t limit = in_len - i < max_len ? in_len - i : max_len;
			size_t c = head[h];
			for (unsigned depth = XP_CHAIN_DEPTH; depth && c != XP_NONE && i - c <= XP_MAX_OFFSET; depth--) {
				size_t n = match_len(in + c, in + i, limit);
				if (n > best_len) {
					best_len = n;
					best_off = i - c;
					if (n == limit)
						break;
				}
				/* Ring slots are reused after a window; a link that does not go back is stale. */
				size_t p = prev[c & ring_mask];
				if (p == XP_NONE || p >= c)
					break;
				c = p;
			}
			prev[i & ring_mask] = head[h];
			head[h] = i;
		}
		if (best_len >= XP_MIN_MATCH) {
			if (!put_match(&w, best_off, best_len))
				goto fail;
			/* Index the covered positions too, so later data can match into them. */
			for (size_t k = i + 1; k < i + best_len && in_len - k >= XP_MIN_MATCH; k++) {
				uint32_t h = hash3(in + k, bits);
				prev[k & ring_mask] = head[h];
				head[h] = k;
			}
			i += best_len;
		} else {
			if (!put8(&w, in[i]) || !put_flag(&w, 0))
				goto fail;
			i++;
		}
	}
	/* Unused flags are ones: the decoder meets a match flag with no input left and stops. */
	uint32_t unused = 32 - w.nflags;
	uint32_t last = unused == 32 ? UINT32_MAX : w.flags << unused | ((UINT32_C(1) << unused) - 1);
	wr32(w.out + w.flag_pos, last);
	*out_len = w.pos;
	st = HS_OK;

fail:
	free(head);
	free(prev);
	return st;
}
