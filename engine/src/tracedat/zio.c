/* tracedat/zio.c: bounded reads of a trace.dat (from the file or from decompressed memory) and zstd decompression. */
#if defined(__linux__) /* libtraceevent and libzstd: the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "tracedat/td_int.h"

void td_problem(const td_file *f, hs_problem_kind kind, uint64_t at, int cpu, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* Dropped on out of memory, counted past the limit: reading goes on either way. */
	hs_problems_vadd(f->problems, kind, at, cpu, fmt, ap);
	va_end(ap);
}

bool td_pread(const td_file *f, uint64_t off, void *buf, size_t n)
{
	if (off > f->size || n > f->size - off)
		return false;
	uint8_t *p = buf;
	while (n) {
		ssize_t got = pread(f->fd, p, n, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		p += got;
		off += (uint64_t)got;
		n -= (size_t)got;
	}
	return true;
}

void td_cur_file(td_cur *c, const td_file *f, uint64_t off, uint64_t end)
{
	*c = (td_cur){.f = f, .pos = off, .end = end < f->size ? end : f->size, .at = off};
	if (c->pos > c->end)
		c->pos = c->end;
}

void td_cur_mem(td_cur *c, const td_file *f, const void *mem, size_t len, uint64_t at)
{
	*c = (td_cur){.f = f, .mem = mem, .pos = 0, .end = len, .at = at};
}

uint64_t td_cur_left(const td_cur *c)
{
	return c->bad ? 0 : c->end - c->pos;
}

uint64_t td_cur_at(const td_cur *c)
{
	return c->mem ? c->at : c->pos;
}

bool td_cur_get(td_cur *c, void *dst, size_t n)
{
	if (c->bad || n > c->end - c->pos) {
		c->bad = true;
		return false;
	}
	if (c->mem)
		memcpy(dst, c->mem + c->pos, n);
	else if (!td_pread(c->f, c->pos, dst, n)) {
		c->bad = true;
		return false;
	}
	c->pos += n;
	return true;
}

bool td_cur_skip(td_cur *c, uint64_t n)
{
	if (c->bad || n > c->end - c->pos) {
		c->bad = true;
		return false;
	}
	c->pos += n;
	return true;
}

/* The fixed-width little-endian reads, one per C type (a function cannot take the type). */
#define TD_CUR_LE(name, type, load)              \
	bool name(td_cur *c, type *v)            \
	{                                        \
		uint8_t b[sizeof *v];            \
		if (!td_cur_get(c, b, sizeof b)) \
			return false;            \
		*v = load(b);                    \
		return true;                     \
	}
TD_CUR_LE(td_cur_u16, uint16_t, td_rd16)
TD_CUR_LE(td_cur_u32, uint32_t, td_rd32)
TD_CUR_LE(td_cur_u64, uint64_t, td_rd64)
#undef TD_CUR_LE

char *td_cur_str(td_cur *c, size_t max, bool *oom)
{
	*oom = false;
	if (c->bad)
		return NULL;
	uint64_t left = c->end - c->pos;
	size_t look = left < (uint64_t)max + 1 ? (size_t)left : max + 1;
	char *s = malloc(look + 1);
	if (!s) {
		*oom = true;
		return NULL;
	}
	bool got = c->mem ? (memcpy(s, c->mem + c->pos, look), true) : td_pread(c->f, c->pos, s, look);
	const char *nul = got ? memchr(s, '\0', look) : NULL;
	if (!nul) {
		free(s);
		c->bad = true;
		return NULL;
	}
	c->pos += (uint64_t)(nul - s) + 1;
	return s;
}

char *td_cur_blob(td_cur *c, uint64_t n, bool *oom)
{
	*oom = false;
	if (c->bad || n > HS_TRACEDAT_MAX_META_BYTES || n > c->end - c->pos)
		return NULL;
	char *b = malloc((size_t)n + 1);
	if (!b) {
		*oom = true;
		return NULL;
	}
	if (!td_cur_get(c, b, (size_t)n)) {
		free(b);
		return NULL;
	}
	b[n] = '\0';
	return b;
}

void *td_znew(void)
{
	return ZSTD_createDCtx();
}

void td_zfree(void *dctx)
{
	ZSTD_freeDCtx(dctx);
}

hs_status td_unzip(void *dctx, const void *in, size_t in_len, void *out, size_t cap, size_t *got)
{
	*got = 0;
	size_t r = dctx ? ZSTD_decompressDCtx(dctx, out, cap, in, in_len) : ZSTD_decompress(out, cap, in, in_len);
	if (ZSTD_isError(r))
		return HS_EINVAL;
	*got = r;
	return HS_OK;
}

#else
typedef int hs_tracedat_zio_unused; /* ISO C wants a declaration in every file */
#endif
