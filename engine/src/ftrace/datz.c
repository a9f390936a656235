/* ftrace/datz.c: compresses one CPU's ring pages into trace.dat v7's chunked CPU-data layout (zstd), per thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "ftrace/ftrace.h"
#include "hindsight/limits.h"

/*
 * The layout libtracecmd writes and reads for a compressed BUFFER section's
 * CPU data (trace-cmd.dat.v7(5), "COMPRESSION FORMAT OF THE TRACE DATA"):
 *   u32 chunk count, then per chunk: u32 compressed size, u32 uncompressed
 *   size (whole pages), the compressed bytes (one zstd frame).
 * Numbers are in the file's endianness, which is the host's: the writer's
 * headers come from this machine too. Each frame is independent, so CPUs and
 * chunks compress in any thread; a reader decompresses one chunk at a time.
 */

static int grow(hs_datz *z, size_t need)
{
	if (z->len + need <= z->cap)
		return 0;
	size_t cap = z->cap ? z->cap : (size_t)1 << 20;
	while (cap < z->len + need)
		cap *= 2;
	unsigned char *d = realloc(z->data, cap);
	if (!d)
		return -1;
	z->data = d;
	z->cap = cap;
	return 0;
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

hs_status hs_datz_compress(const unsigned char *pages, uint64_t bytes, size_t subbuf, int level, hs_datz *z)
{
	hs_status st = HS_ENOMEM;
	size_t chunk = subbuf * HS_LINUX_DAT_CHUNK_PAGES;
	size_t bound = ZSTD_compressBound(chunk);
	uint32_t chunks = 0;
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	z->len = 0;
	z->raw = 0;
	if (!cc)
		goto fail;
	/* As libtracecmd's zstd: no content size in each frame (the chunk header
	 * has it); the level is ours (HS_LINUX_DAT_ZSTD_LEVEL: speed over size). */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level))) {
		st = HS_EINVAL;
		goto fail;
	}
	if (grow(z, 4))
		goto fail;
	z->len = 4; /* the count, filled in at the end */
	for (uint64_t off = 0; off < bytes; off += chunk) {
		size_t in = bytes - off < chunk ? (size_t)(bytes - off) : chunk;
		if (grow(z, 8 + bound))
			goto fail;
		size_t n = ZSTD_compress2(cc, z->data + z->len + 8, bound, pages + off, in);
		if (ZSTD_isError(n)) {
			st = HS_EIO;
			goto fail;
		}
		put_u32(z->data + z->len, (uint32_t)n);
		put_u32(z->data + z->len + 4, (uint32_t)in);
		z->len += 8 + n;
		chunks++;
	}
	put_u32(z->data, chunks);
	z->raw = bytes;
	ZSTD_freeCCtx(cc);
	return HS_OK;
fail:
	ZSTD_freeCCtx(cc);
	z->len = 0;
	return st;
}

void hs_datz_free(hs_datz *z)
{
	free(z->data);
	*z = (hs_datz){0};
}
