/* test_xpress.c: Plain LZ77 (MS-XCA) tests: spec examples, length forms, bad streams, round trips, .etl fixtures. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "etl/xpress.h"

#ifndef HS_TEST_FIXTURES_DIR
#error "HS_TEST_FIXTURES_DIR must name the shared .etl fixtures directory"
#endif

/* ---- helpers ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint32_t rng(void)
{
	/* xorshift64*: fixed seed, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545F4914F6CDD1Du) >> 32);
}

static uint32_t rd16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		perror("malloc");
		exit(2);
	}
	return p;
}

/*
 * The [MS-XCA] 2.4.4 pseudocode as written: one byte at a time, every read
 * and write checked. The decoder under test must agree with it on every
 * stream: the same status, and the same bytes when it succeeds.
 */
static hs_status ref_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t cap, size_t *out_len)
{
	uint32_t flags = 0;
	unsigned nflags = 0;
	size_t ip = 0, op = 0, half = 0;
	hs_status st = HS_EINVAL;
	for (;;) {
		if (nflags == 0) {
			if (in_len - ip < 4)
				goto done;
			flags = rd32(in + ip);
			ip += 4;
			nflags = 32;
		}
		nflags--;
		if ((flags & (UINT32_C(1) << nflags)) == 0) {
			if (ip >= in_len)
				goto done;
			if (op >= cap) {
				st = HS_ELIMIT;
				goto done;
			}
			out[op++] = in[ip++];
			continue;
		}
		if (ip == in_len) {
			st = HS_OK;
			goto done;
		}
		if (in_len - ip < 2)
			goto done;
		uint32_t bytes = rd16(in + ip);
		ip += 2;
		uint64_t len = bytes % 8;
		size_t off = bytes / 8 + 1;
		if (len == 7) {
			if (half == 0) {
				if (ip >= in_len)
					goto done;
				len = in[ip] % 16;
				half = ip;
				ip += 1;
			} else {
				len = in[half] / 16;
				half = 0;
			}
			if (len == 15) {
				if (ip >= in_len)
					goto done;
				len = in[ip];
				ip += 1;
				if (len == 255) {
					if (in_len - ip < 2)
						goto done;
					len = rd16(in + ip);
					ip += 2;
					if (len == 0) {
						if (in_len - ip < 4)
							goto done;
						len = rd32(in + ip);
						ip += 4;
					}
					if (len < 15 + 7)
						goto done;
					len -= 15 + 7;
				}
				len += 15;
			}
			len += 7;
		}
		len += 3;
		if (len > UINT32_MAX || off > op)
			goto done;
		for (uint64_t i = 0; i < len; i++) {
			if (op >= cap) {
				st = HS_ELIMIT;
				goto done;
			}
			out[op] = out[op - off];
			op++;
		}
	}
done:
	*out_len = op;
	return st;
}

/*
 * A stream builder independent of the encoder under test, able to write the
 * non-canonical length forms the decoder must also accept (a 16- or 32-bit
 * length where a shorter form would do).
 */
enum { FORM_SHORT, FORM_WIDE16, FORM_WIDE32 };

typedef struct {
	uint8_t *b;
	size_t n, cap;
	size_t flag_pos;
	unsigned nflags;
	uint32_t flags;
	size_t half;
	size_t produced;
} tb;

static void tb_byte(tb *t, uint32_t v)
{
	if (t->n >= t->cap) {
		fprintf(stderr, "test stream buffer too small\n");
		exit(2);
	}
	t->b[t->n++] = (uint8_t)v;
}

static void tb_word16(tb *t, uint32_t v)
{
	tb_byte(t, v);
	tb_byte(t, v >> 8);
}

static void tb_word32(tb *t, uint32_t v)
{
	tb_word16(t, v);
	tb_word16(t, v >> 16);
}

static void tb_init(tb *t, uint8_t *buf, size_t cap)
{
	*t = (tb){.b = buf, .cap = cap};
	tb_word32(t, 0);
}

static void tb_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void tb_flag(tb *t, uint32_t bit)
{
	t->flags = t->flags << 1 | bit;
	if (++t->nflags == 32) {
		tb_put32(t->b + t->flag_pos, t->flags);
		t->flags = 0;
		t->nflags = 0;
		t->flag_pos = t->n;
		tb_word32(t, 0);
	}
}

static void tb_lit(tb *t, uint8_t c)
{
	tb_byte(t, c);
	tb_flag(t, 0);
	t->produced++;
}

/* len >= 3; the wide forms need len - 3 >= 22. */
static void tb_match(tb *t, size_t off, uint64_t len, int form)
{
	uint64_t v = len - 3;
	uint32_t word = (uint32_t)(off - 1) << 3;
	if (form == FORM_SHORT && v < 7) {
		tb_word16(t, word | (uint32_t)v);
	} else {
		tb_word16(t, word | 7);
		uint64_t rest = v - 7;
		uint32_t nib = form != FORM_SHORT || rest >= 15 ? 15 : (uint32_t)rest;
		if (!t->half) {
			t->half = t->n;
			tb_byte(t, nib);
		} else {
			t->b[t->half] |= (uint8_t)(nib << 4);
			t->half = 0;
		}
		if (nib == 15) {
			if (form == FORM_SHORT && rest - 15 < 255) {
				tb_byte(t, (uint32_t)(rest - 15));
			} else {
				tb_byte(t, 255);
				if (form != FORM_WIDE32 && v <= 0xFFFF) {
					tb_word16(t, (uint32_t)v);
				} else {
					tb_word16(t, 0);
					tb_word32(t, (uint32_t)v);
				}
			}
		}
	}
	tb_flag(t, 1);
	t->produced += (size_t)len;
}

/* Fills the unused flags with ones (the end mark); returns the stream length. */
static size_t tb_end(tb *t)
{
	unsigned unused = 32 - t->nflags;
	uint32_t last = unused == 32 ? UINT32_MAX : (t->flags << unused) | ((UINT32_C(1) << unused) - 1);
	tb_put32(t->b + t->flag_pos, last);
	return t->n;
}

/* Decodes with both decoders into a buffer of cap; checks they agree and returns the status. */
static hs_status decode_both(const uint8_t *in, size_t in_len, size_t cap, uint8_t **out, size_t *out_len)
{
	uint8_t *a = xmalloc(cap), *b = xmalloc(cap);
	size_t na = 0, nb = 0;
	hs_status sa = hs_xpress_decompress(in, in_len, a, cap, &na);
	hs_status sb = ref_decompress(in, in_len, b, cap, &nb);
	CHECK_EQ_INT(sa, sb);
	CHECK(na <= cap);
	if (sa == HS_OK && sb == HS_OK) {
		CHECK_EQ_INT(na, nb);
		CHECK(na == nb && memcmp(a, b, na) == 0);
	}
	free(b);
	if (out)
		*out = a;
	else
		free(a);
	if (out_len)
		*out_len = na;
	return sa;
}

/* Decodes a stream expected to give exactly want[0, want_len); also checks that one byte less of room is HS_ELIMIT. */
static void expect_decode(const uint8_t *in, size_t in_len, const uint8_t *want, size_t want_len)
{
	uint8_t *got = NULL;
	size_t n = 0;
	hs_status st = decode_both(in, in_len, want_len + 16, &got, &n);
	CHECK_EQ_INT(st, HS_OK);
	CHECK_EQ_INT(n, want_len);
	CHECK(n == want_len && memcmp(got, want, want_len) == 0);
	free(got);
	st = decode_both(in, in_len, want_len, NULL, &n);
	CHECK_EQ_INT(st, HS_OK);
	CHECK_EQ_INT(n, want_len);
	if (want_len) {
		st = decode_both(in, in_len, want_len - 1, NULL, NULL);
		CHECK_EQ_INT(st, HS_ELIMIT);
	}
}

static hs_status decode_status(const uint8_t *in, size_t in_len, size_t cap)
{
	return decode_both(in, in_len, cap, NULL, NULL);
}

/* "abc" repeated out to n bytes: what "abc" plus a distance-3 match gives. */
static uint8_t *abc_repeat(size_t n)
{
	uint8_t *p = xmalloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)("abc"[i % 3]);
	return p;
}

/* ---- the spec's examples ([MS-XCA] 3.1) and the 2.4.4 "aaaaaa" ---- */

static void test_spec_examples(void)
{
	static const uint8_t alpha_z[] = {0x3f, 0x00, 0x00, 0x00, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j',
					  'k',  'l',  'm',  'n',  'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x',
					  'y',  'z'};
	const char *alpha = "abcdefghijklmnopqrstuvwxyz";
	expect_decode(alpha_z, sizeof alpha_z, (const uint8_t *)alpha, 26);

	/* abc[match: distance 3, length 297]: nibble 15, byte 255, 16-bit length 294. */
	static const uint8_t abc300_z[] = {0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63, 0x17, 0x00, 0x0f, 0xff, 0x26, 0x01};
	uint8_t *abc300 = abc_repeat(300);
	expect_decode(abc300_z, sizeof abc300_z, abc300, 300);

	/* The encoder reproduces both examples byte for byte. */
	uint8_t z[64];
	size_t zn = 0;
	CHECK_EQ_INT(hs_xpress_compress((const uint8_t *)alpha, 26, z, sizeof z, &zn), HS_OK);
	CHECK(zn == sizeof alpha_z && memcmp(z, alpha_z, zn) == 0);
	CHECK_EQ_INT(hs_xpress_compress(abc300, 300, z, sizeof z, &zn), HS_OK);
	CHECK(zn == sizeof abc300_z && memcmp(z, abc300_z, zn) == 0);
	free(abc300);

	/* [literal: "a"][match: offset=1, length=5]: the overlap case in 2.4.4. */
	static const uint8_t a6_z[] = {0xff, 0xff, 0xff, 0x7f, 'a', 0x02, 0x00};
	expect_decode(a6_z, sizeof a6_z, (const uint8_t *)"aaaaaa", 6);
}

/* ---- flag words and the end condition ---- */

static void test_flags_and_end(void)
{
	/* An empty output is one all-ones flag word. */
	static const uint8_t empty_z[] = {0xff, 0xff, 0xff, 0xff};
	size_t n = 99;
	CHECK_EQ_INT(hs_xpress_decompress(empty_z, 4, NULL, 0, &n), HS_OK);
	CHECK_EQ_INT(n, 0);
	expect_decode(empty_z, 4, (const uint8_t *)"", 0);
	uint8_t z[8];
	CHECK_EQ_INT(hs_xpress_compress(NULL, 0, z, sizeof z, &n), HS_OK);
	CHECK(n == 4 && memcmp(z, empty_z, 4) == 0);

	/* Exactly 32 literals fill a flag word; the end mark needs a second one. */
	uint8_t s[4 + 32 + 4], want[32];
	memset(s, 0, 4);
	for (int i = 0; i < 32; i++)
		want[i] = s[4 + i] = (uint8_t)('A' + i);
	memset(s + 36, 0xff, 4);
	expect_decode(s, sizeof s, want, 32);
	/* Without it the stream is truncated, not finished. */
	CHECK_EQ_INT(decode_status(s, 36, 64), HS_EINVAL);
	CHECK_EQ_INT(decode_status(s, 37, 64), HS_EINVAL);
	CHECK_EQ_INT(decode_status(s, 39, 64), HS_EINVAL);

	/* Flags are read from the top bit down: 0x80000000 is a match first (an error: no output yet). */
	static const uint8_t top_z[] = {0x00, 0x00, 0x00, 0x80, 0x00, 0x00};
	CHECK_EQ_INT(decode_status(top_z, sizeof top_z, 64), HS_EINVAL);

	/* Bits after the end mark are never looked at. */
	static const uint8_t early_z[] = {0x00, 0x00, 0x00, 0x40, 'q'};
	expect_decode(early_z, sizeof early_z, (const uint8_t *)"q", 1);

	/* Literal, match, literal across a flag-word boundary: 31 literals, a match, then the next word. */
	tb t;
	uint8_t buf[256], exp[64];
	tb_init(&t, buf, sizeof buf);
	for (int i = 0; i < 31; i++)
		tb_lit(&t, exp[i] = (uint8_t)('a' + i % 26));
	tb_match(&t, 5, 4, FORM_SHORT);
	for (int i = 0; i < 4; i++)
		exp[31 + i] = exp[26 + i];
	tb_lit(&t, exp[35] = '!');
	size_t len = tb_end(&t);
	expect_decode(buf, len, exp, 36);
}

/* ---- match lengths: every encoding, and the shared length nibble ---- */

/* "abc" then one distance-3 match written with the given length bytes after the match word 0x0017. */
static size_t abc_stream(uint8_t *s, const uint8_t *ext, size_t ext_len)
{
	static const uint8_t head[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', 0x17, 0x00};
	memcpy(s, head, sizeof head);
	memcpy(s + sizeof head, ext, ext_len);
	return sizeof head + ext_len;
}

static void expect_abc(const uint8_t *ext, size_t ext_len, size_t match_len)
{
	uint8_t s[32];
	size_t n = abc_stream(s, ext, ext_len);
	uint8_t *want = abc_repeat(3 + match_len);
	expect_decode(s, n, want, 3 + match_len);
	free(want);
	/* Every strict prefix is truncated, except the one that stops right at
	 * the match flag: to the decoder that is a finished stream of "abc". */
	for (size_t k = 4; k < n; k++) {
		size_t got = 0;
		hs_status st = decode_both(s, k, 3 + match_len, NULL, &got);
		if (k == 7) {
			CHECK_EQ_INT(st, HS_OK);
			CHECK_EQ_INT(got, 3);
		} else {
			CHECK_EQ_INT(st, HS_EINVAL);
		}
	}
}

static void test_lengths(void)
{
	/* Codes 0..6: lengths 3..9, no more bytes. */
	for (uint32_t code = 0; code < 7; code++) {
		uint8_t s[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', (uint8_t)(0x10 | code), 0x00};
		uint8_t *want = abc_repeat(3 + 3 + code);
		expect_decode(s, sizeof s, want, 6 + code);
		free(want);
	}
	/* Code 7, nibble 0..14: lengths 10..24. */
	for (uint8_t nib = 0; nib < 15; nib++)
		expect_abc(&nib, 1, 10u + nib);
	/* Nibble 15 then a byte 0..254: lengths 25..279. */
	expect_abc((const uint8_t[]){0x0f, 0x00}, 2, 25);
	expect_abc((const uint8_t[]){0x0f, 0x01}, 2, 26);
	expect_abc((const uint8_t[]){0x0f, 0xfe}, 2, 279);
	/* Byte 255 then 16 bits: the whole length minus 3 (at least 22). */
	expect_abc((const uint8_t[]){0x0f, 0xff, 0x16, 0x00}, 4, 25);
	expect_abc((const uint8_t[]){0x0f, 0xff, 0x14, 0x01}, 4, 279);
	expect_abc((const uint8_t[]){0x0f, 0xff, 0x15, 0x01}, 4, 280);
	expect_abc((const uint8_t[]){0x0f, 0xff, 0xff, 0xff}, 4, 65538);
	/* 16 bits of 0 then 32 bits: the length minus 3 again. */
	expect_abc((const uint8_t[]){0x0f, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00}, 8, 65539);
	expect_abc((const uint8_t[]){0x0f, 0xff, 0x00, 0x00, 0x70, 0x11, 0x01, 0x00}, 8, 70000 + 3);
	expect_abc((const uint8_t[]){0x0f, 0xff, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00}, 8, 25);
	/* Extended lengths below the minimum are invalid: 16-bit 21 and 1, 32-bit 21 and 0. */
	uint8_t s[32];
	size_t n = abc_stream(s, (const uint8_t[]){0x0f, 0xff, 0x15, 0x00}, 4);
	CHECK_EQ_INT(decode_status(s, n, 1 << 20), HS_EINVAL);
	n = abc_stream(s, (const uint8_t[]){0x0f, 0xff, 0x01, 0x00}, 4);
	CHECK_EQ_INT(decode_status(s, n, 1 << 20), HS_EINVAL);
	n = abc_stream(s, (const uint8_t[]){0x0f, 0xff, 0x00, 0x00, 0x15, 0x00, 0x00, 0x00}, 8);
	CHECK_EQ_INT(decode_status(s, n, 1 << 20), HS_EINVAL);
	n = abc_stream(s, (const uint8_t[]){0x0f, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, 8);
	CHECK_EQ_INT(decode_status(s, n, 1 << 20), HS_EINVAL);
	/* 0xFFFFFFFC + 3 still fits in 32 bits: only too long for the buffer. 0xFFFFFFFD + 3 wraps: invalid. */
	n = abc_stream(s, (const uint8_t[]){0x0f, 0xff, 0x00, 0x00, 0xfc, 0xff, 0xff, 0xff}, 8);
	CHECK_EQ_INT(decode_status(s, n, 1 << 20), HS_ELIMIT);
	n = abc_stream(s, (const uint8_t[]){0x0f, 0xff, 0x00, 0x00, 0xfd, 0xff, 0xff, 0xff}, 8);
	CHECK_EQ_INT(decode_status(s, n, 1 << 20), HS_EINVAL);
	n = abc_stream(s, (const uint8_t[]){0x0f, 0xff, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff}, 8);
	CHECK_EQ_INT(decode_status(s, n, 1 << 20), HS_EINVAL);
}

static void test_half_byte(void)
{
	/*
	 * abc, M1 (distance 3, length 10: low nibble 0 of a new byte), M2
	 * (distance 3, length 3), 'x', M3 (distance 3, length 14: the high nibble,
	 * 4, of M1's byte, which comes right after M1's match word).
	 */
	static const uint8_t z[] = {0xff, 0xff, 0xff, 0x1b, 'a', 'b', 'c', 0x17, 0x00, 0x40, 0x10, 0x00, 'x', 0x17, 0x00};
	const char *want = "abcabcabcabca"
			   "bca"
			   "x"
			   "caxcaxcaxcaxca";
	expect_decode(z, sizeof z, (const uint8_t *)want, strlen(want));

	/* Three code-7 matches: the third opens a new byte. Lengths 12, 15 then 10 + 9 = 19. */
	static const uint8_t z3[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', 0x17, 0x00, 0x52, 0x17, 0x00, 0x17, 0x00, 0x09};
	uint8_t *w3 = abc_repeat(3 + 12 + 15 + 19);
	expect_decode(z3, sizeof z3, w3, 3 + 12 + 15 + 19);
	free(w3);

	/* A high nibble of 15 goes on to the extra byte like a low one: 25 + 7 = 32. */
	static const uint8_t z4[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', 0x17, 0x00, 0xf0, 0x17, 0x00, 0x07};
	uint8_t *w4 = abc_repeat(3 + 10 + 32);
	expect_decode(z4, sizeof z4, w4, 3 + 10 + 32);
	free(w4);
	/* Cut just before that extra byte: truncated. */
	CHECK_EQ_INT(decode_status(z4, sizeof z4 - 1, 64), HS_EINVAL);

	/* Built streams: nibble bytes shared across flag words and between long and short matches. */
	tb t;
	uint8_t buf[4096];
	tb_init(&t, buf, sizeof buf);
	uint8_t *want2 = xmalloc(1 << 16);
	size_t wn = 0;
	for (int i = 0; i < 8; i++)
		tb_lit(&t, want2[wn++] = (uint8_t)(i * 37));
	for (int k = 0; k < 200; k++) {
		uint32_t len = k % 3 == 0 ? 3 + (uint32_t)(k % 7) : 10 + (uint32_t)(k * 7 % 300);
		size_t off = 1 + (size_t)(k * 13 % 8);
		tb_match(&t, off, len, FORM_SHORT);
		for (uint32_t j = 0; j < len; j++, wn++)
			want2[wn] = want2[wn - off];
		if (k % 5 == 0)
			tb_lit(&t, want2[wn++] = (uint8_t)k);
	}
	size_t len = tb_end(&t);
	expect_decode(buf, len, want2, wn);
	free(want2);
}

/* ---- overlapping and boundary copies ---- */

static void test_overlap(void)
{
	static const size_t offs[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1000, 8191, 8192};
	static const size_t lens[] = {3, 4, 9, 10, 24, 25, 100, 279, 280, 1000, 4096, 8193, 65538, 70000};
	uint8_t *buf = xmalloc(1 << 16), *want = xmalloc(1 << 18);
	for (size_t a = 0; a < sizeof offs / sizeof offs[0]; a++) {
		for (size_t b = 0; b < sizeof lens / sizeof lens[0]; b++) {
			size_t off = offs[a], len = lens[b];
			tb t;
			tb_init(&t, buf, 1 << 16);
			size_t wn = 0;
			/* Distinct literals, so a wrong source byte shows. */
			for (size_t i = 0; i < off; i++)
				tb_lit(&t, want[wn++] = (uint8_t)(i * 151 + 7));
			tb_match(&t, off, len, FORM_SHORT);
			for (size_t j = 0; j < len; j++, wn++)
				want[wn] = want[wn - off];
			tb_lit(&t, want[wn++] = 0xEE);
			size_t n = tb_end(&t);
			expect_decode(buf, n, want, wn);
		}
	}
	free(buf);
	free(want);
}

/* ---- malformed input and arguments ---- */

static void test_malformed(void)
{
	/* Nothing, or less than a flag word. */
	static const uint8_t ff[] = {0xff, 0xff, 0xff, 0xff};
	for (size_t k = 0; k < 4; k++)
		CHECK_EQ_INT(decode_status(ff, k, 16), HS_EINVAL);
	size_t n = 7;
	uint8_t out[16];
	CHECK_EQ_INT(hs_xpress_decompress(NULL, 0, out, sizeof out, &n), HS_EINVAL);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(hs_xpress_decompress(NULL, 4, out, sizeof out, &n), HS_EINVAL);
	CHECK_EQ_INT(hs_xpress_decompress(ff, 4, NULL, 16, &n), HS_EINVAL);
	CHECK_EQ_INT(hs_xpress_decompress(ff, 4, out, sizeof out, NULL), HS_EINVAL);
	CHECK_EQ_INT(hs_xpress_compress(NULL, 5, out, sizeof out, &n), HS_EINVAL);
	CHECK_EQ_INT(hs_xpress_compress(ff, 4, NULL, 5, &n), HS_EINVAL);
	CHECK_EQ_INT(hs_xpress_compress(ff, 4, out, sizeof out, NULL), HS_EINVAL);

	/* Literals promised but missing. */
	static const uint8_t lit_short[] = {0x00, 0x00, 0x00, 0x00, 'a', 'b'};
	CHECK_EQ_INT(decode_status(lit_short, sizeof lit_short, 64), HS_EINVAL);
	/* ... and with too little room as well: the missing input is found first. */
	CHECK_EQ_INT(decode_status(lit_short, sizeof lit_short, 2), HS_EINVAL);
	CHECK_EQ_INT(decode_status(lit_short, sizeof lit_short, 1), HS_ELIMIT);

	/* Match offsets reaching before the output: first item, one past, and the largest offset. */
	static const uint8_t first_match[] = {0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00};
	CHECK_EQ_INT(decode_status(first_match, sizeof first_match, 64), HS_EINVAL);
	static const uint8_t off4[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', 0x18, 0x00};
	CHECK_EQ_INT(decode_status(off4, sizeof off4, 64), HS_EINVAL);
	static const uint8_t off3[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', 0x10, 0x00};
	expect_decode(off3, sizeof off3, (const uint8_t *)"abcabc", 6);
	static const uint8_t off8192[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', 0xf8, 0xff};
	CHECK_EQ_INT(decode_status(off8192, sizeof off8192, 64), HS_EINVAL);

	/* A match word cut in half. */
	static const uint8_t half_word[] = {0xff, 0xff, 0xff, 0x7f, 'a', 0x00};
	CHECK_EQ_INT(decode_status(half_word, sizeof half_word, 64), HS_EINVAL);

	/* Output limits: matches and literals that do not fit. */
	static const uint8_t abc300_z[] = {0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63, 0x17, 0x00, 0x0f, 0xff, 0x26, 0x01};
	CHECK_EQ_INT(decode_status(abc300_z, sizeof abc300_z, 299), HS_ELIMIT);
	CHECK_EQ_INT(decode_status(abc300_z, sizeof abc300_z, 3), HS_ELIMIT);
	CHECK_EQ_INT(decode_status(abc300_z, sizeof abc300_z, 2), HS_ELIMIT);
	CHECK_EQ_INT(decode_status(abc300_z, sizeof abc300_z, 0), HS_ELIMIT);
	CHECK_EQ_INT(hs_xpress_decompress(abc300_z, sizeof abc300_z, NULL, 0, &n), HS_ELIMIT);

	/* Random bytes: only the three outcomes, never a crash (the sanitizer build checks the "never"). */
	uint8_t junk[512];
	for (int round = 0; round < 20000; round++) {
		size_t jn = rng() % sizeof junk;
		for (size_t i = 0; i < jn; i++)
			junk[i] = (uint8_t)rng();
		/* Favour flag words with matches, which is where the length forms live. */
		if (jn >= 4 && round % 2)
			junk[3] |= 0xF0;
		hs_status st = decode_status(junk, jn, rng() % 4096);
		CHECK(st == HS_OK || st == HS_EINVAL || st == HS_ELIMIT);
	}
}

/* ---- random streams against the reference decoder ---- */

static void test_differential(void)
{
	size_t cap = 1 << 20;
	uint8_t *buf = xmalloc(cap);
	int ok = 0, bad = 0, limit = 0;
	for (int round = 0; round < 3000; round++) {
		tb t;
		tb_init(&t, buf, cap);
		/* One stream in ten may point matches before the start of the output. */
		bool poison = rng() % 10 == 0;
		int items = (int)(rng() % 200);
		for (int i = 0; i < items && t.produced < 200000; i++) {
			uint32_t r = rng() % 100;
			if (t.produced == 0 || r < 45) {
				tb_lit(&t, (uint8_t)rng());
				continue;
			}
			size_t maxoff = t.produced < 8192 ? t.produced : 8192;
			size_t off = 1 + rng() % maxoff;
			if (poison && r < 48)
				off = t.produced + 1 > 8192 ? 8192 : t.produced + 1;
			uint64_t len;
			uint32_t c = rng() % 10;
			if (c < 4)
				len = 3 + rng() % 7;
			else if (c < 6)
				len = 10 + rng() % 15;
			else if (c < 8)
				len = 25 + rng() % 255;
			else
				len = 280 + rng() % 3000;
			int form = FORM_SHORT;
			if (len >= 25 && rng() % 4 == 0)
				form = rng() % 2 ? FORM_WIDE16 : FORM_WIDE32;
			tb_match(&t, off, len, form);
		}
		size_t n = tb_end(&t);
		/* Half the streams damaged: bytes changed, or the end cut off. */
		uint32_t m = rng() % 6;
		if (m == 1 || m == 2) {
			for (uint32_t k = 0, hits = 1 + rng() % 4; k < hits && n; k++)
				buf[rng() % n] = (uint8_t)rng();
		} else if (m == 3 && n) {
			n = rng() % n;
		}
		size_t caps[3] = {t.produced, t.produced / 2, t.produced + 1 + rng() % 100};
		for (int k = 0; k < 3; k++) {
			hs_status st = decode_status(buf, n, caps[k]);
			ok += st == HS_OK;
			bad += st == HS_EINVAL;
			limit += st == HS_ELIMIT;
		}
	}
	/* Each outcome must actually have been exercised. */
	CHECK(ok > 500);
	CHECK(bad > 200);
	CHECK(limit > 500);
	printf("differential: %d ok, %d invalid, %d over the limit\n", ok, bad, limit);
	free(buf);
}

/* ---- round trips through the encoder ---- */

enum { DATA_RANDOM, DATA_ZEROS, DATA_PERIOD, DATA_TEXT, DATA_MIXED, DATA_KINDS };
static const char *const data_names[DATA_KINDS] = {"random", "zeros", "period", "text", "mixed"};

static void fill(uint8_t *p, size_t n, int kind)
{
	static const char *const words[] = {"the ", "event ", "buffer ", "of ", "trace ", "a ", "kernel ", "0x1f ",
					    "provider ", "\r\n", "stack ", "sample "};
	size_t i = 0;
	switch (kind) {
	case DATA_RANDOM:
		for (; i < n; i++)
			p[i] = (uint8_t)rng();
		break;
	case DATA_ZEROS:
		memset(p, 0, n);
		break;
	case DATA_PERIOD:
		for (; i < n; i++)
			p[i] = (uint8_t)(i % 7 * 31 + (i / 5000));
		break;
	case DATA_TEXT:
		while (i < n) {
			const char *w = words[rng() % (sizeof words / sizeof words[0])];
			for (; *w && i < n; w++)
				p[i++] = (uint8_t)*w;
		}
		break;
	default:
		/* Random runs and copies from up to 10000 back: offsets at, under and over the window. */
		while (i < n) {
			size_t run = 1 + rng() % 300;
			if (run > n - i)
				run = n - i;
			if (i > 0 && rng() % 2) {
				size_t back = 1 + rng() % (i < 10000 ? i : 10000);
				for (size_t k = 0; k < run; k++, i++)
					p[i] = p[i - back];
			} else {
				for (size_t k = 0; k < run; k++)
					p[i++] = (uint8_t)rng();
			}
		}
		break;
	}
}

static void test_round_trips(void)
{
	static const size_t sizes[] = {0, 1, 2, 3, 4, 31, 32, 33, 4096, 65536, 1 << 20};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		for (int kind = 0; kind < DATA_KINDS; kind++) {
			size_t n = sizes[s];
			uint8_t *data = xmalloc(n);
			fill(data, n, kind);
			size_t bound = hs_xpress_compress_bound(n);
			uint8_t *z = xmalloc(bound);
			size_t zn = 0;
			hs_status st = hs_xpress_compress(data, n, z, bound, &zn);
			CHECK_EQ_INT(st, HS_OK);
			CHECK(zn <= bound);
			if (st != HS_OK) {
				fprintf(stderr, "compress %s %zu: %s\n", data_names[kind], n, hs_strerror(st));
			} else {
				uint8_t *back = NULL;
				size_t bn = 0;
				st = decode_both(z, zn, n, &back, &bn);
				CHECK_EQ_INT(st, HS_OK);
				CHECK_EQ_INT(bn, n);
				if (st != HS_OK || bn != n || memcmp(back, data, n) != 0) {
					fprintf(stderr, "round trip %s %zu: %s\n", data_names[kind], n, hs_strerror(st));
					CHECK(0);
				}
				free(back);
				/* Repetitive data must actually compress: the matcher works. */
				if (n >= 4096 && (kind == DATA_ZEROS || kind == DATA_PERIOD || kind == DATA_TEXT))
					CHECK(zn < n / 2);
				/* One byte less room is a limit, not a broken stream. */
				if (zn > 0) {
					size_t zn2 = 0;
					CHECK_EQ_INT(hs_xpress_compress(data, n, z, zn - 1, &zn2), HS_ELIMIT);
				}
			}
			free(z);
			free(data);
		}
	}
	/* All-literal worst case meets the bound exactly. */
	CHECK_EQ_INT(hs_xpress_compress_bound(0), 4);
	CHECK_EQ_INT(hs_xpress_compress_bound(31), 35);
	CHECK_EQ_INT(hs_xpress_compress_bound(32), 40);
	CHECK_EQ_INT(hs_xpress_compress_bound(SIZE_MAX), SIZE_MAX);
	uint8_t lits[64], z[80];
	for (int i = 0; i < 64; i++)
		lits[i] = (uint8_t)(i * 97);
	size_t zn = 0;
	CHECK_EQ_INT(hs_xpress_compress(lits, 64, z, sizeof z, &zn), HS_OK);
	CHECK_EQ_INT(zn, hs_xpress_compress_bound(64));
}

/* ---- the real compressed buffers ---- */

static uint8_t *read_all(const char *path, size_t *len)
{
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	uint8_t *p = xmalloc(cap);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			uint8_t *q = realloc(p, cap);
			if (!q) {
				perror("realloc");
				exit(2);
			}
			p = q;
		}
		size_t r = fread(p + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		free(p);
		return NULL;
	}
	*len = n;
	return p;
}

#define ETL_HEADER 0x48u
#define ETL_FLAG_COMPRESSED 0x40u

/* Walks every buffer of one fixture; every compressed one must decode to exactly its Offset - 0x48 bytes. */
static void test_fixture(const char *name, size_t want_compressed)
{
	char path[512];
	snprintf(path, sizeof path, "%s/microsoft_perfview/%s", HS_TEST_FIXTURES_DIR, name);
	size_t len = 0;
	uint8_t *d = read_all(path, &len);
	if (!d) {
		/* Missing fixtures fail the test: a skipped decoder check proves nothing. */
		fprintf(stderr, "%s: cannot read the fixture\n", path);
		CHECK(d != NULL);
		return;
	}
	size_t pos = 0, compressed = 0, buffers = 0, in_total = 0, out_total = 0;
	while (len - pos >= ETL_HEADER) {
		const uint8_t *b = d + pos;
		uint32_t size = rd32(b), data_end = rd32(b + 0x30), flags = rd16(b + 0x34);
		if (size < ETL_HEADER || size > len - pos) {
			fprintf(stderr, "%s: buffer at %zu has size %u\n", name, pos, size);
			CHECK(0);
			break;
		}
		buffers++;
		if (flags & ETL_FLAG_COMPRESSED) {
			compressed++;
			CHECK(data_end >= ETL_HEADER);
			size_t want = data_end - ETL_HEADER, zn = size - ETL_HEADER;
			const uint8_t *z = b + ETL_HEADER;
			uint8_t *out = NULL;
			size_t got = 0;
			/* Room to spare, so a stream that ran on would show. */
			hs_status st = decode_both(z, zn, want + 4096, &out, &got);
			CHECK_EQ_INT(st, HS_OK);
			CHECK_EQ_INT(got, want);
			if (st != HS_OK || got != want)
				fprintf(stderr, "%s: buffer at %zu: %s, %zu of %zu bytes\n", name, pos, hs_strerror(st), got,
					want);
			/* The first record's header word has the event-trace bits in its top byte. */
			CHECK(got >= 4 && out[3] == 0xC0);
			/* Exactly enough room works; one byte less is a limit; one input byte less is truncated. */
			CHECK_EQ_INT(hs_xpress_decompress(z, zn, out, want, &got), HS_OK);
			if (want)
				CHECK_EQ_INT(hs_xpress_decompress(z, zn, out, want - 1, &got), HS_ELIMIT);
			CHECK_EQ_INT(hs_xpress_decompress(z, zn - 1, out, want + 4096, &got), HS_EINVAL);
			/* Our encoder round-trips real ETW data too. */
			size_t bound = hs_xpress_compress_bound(want), rn = 0;
			uint8_t *re = xmalloc(bound), *back = xmalloc(want);
			CHECK_EQ_INT(hs_xpress_decompress(z, zn, out, want, &got), HS_OK);
			CHECK_EQ_INT(hs_xpress_compress(out, want, re, bound, &rn), HS_OK);
			CHECK_EQ_INT(hs_xpress_decompress(re, rn, back, want, &got), HS_OK);
			CHECK(got == want && memcmp(back, out, want) == 0);
			free(re);
			free(back);
			free(out);
			in_total += zn;
			out_total += want;
		}
		pos += size;
	}
	CHECK_EQ_INT(pos, len);
	CHECK_EQ_INT(compressed, want_compressed);
	printf("%s: %zu buffers, %zu compressed, all verified (%zu bytes in, %zu out)\n", name, buffers, compressed,
	       in_total, out_total);
	free(d);
}

int main(void)
{
	test_spec_examples();
	test_flags_and_end();
	test_lengths();
	test_half_byte();
	test_overlap();
	test_malformed();
	test_differential();
	test_round_trips();
	test_fixture("smallEtlFile.etl", 1);
	test_fixture("SelfDescribingSingleEvent.etl", 2);
	test_fixture("net.4.5.2.x86.etl", 275);
	return hs_test_done("test_xpress");
}
