/* etl/xpress.h: MS-XCA "Plain LZ77" (COMPRESSION_FORMAT_XPRESS) decoder and encoder, as used by compressed ETW buffers. */
#ifndef HS_ETL_XPRESS_H
#define HS_ETL_XPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "hindsight/status.h"

/*
 * Decompresses the whole stream in[0, in_len) into out[0, out_cap) and sets
 * *out_len to the bytes produced. The stream carries no length of its own: it
 * ends where the spec says ([MS-XCA] 2.4.4), at a match flag with no input left.
 *
 * Never reads outside the input or writes outside out[0, out_cap), whatever
 * the input. HS_EINVAL: malformed or truncated stream (a read past the input,
 * a match reaching before the start of the output, an extended length below
 * its minimum or a match length beyond 32 bits) or a bad argument. HS_ELIMIT:
 * the output would be longer than out_cap. On failure *out_len still holds
 * the bytes written before the error, for diagnostics only. Bytes of out past
 * *out_len (but within out_cap) may be overwritten: short copies are done in
 * fixed-size chunks when there is room, for speed.
 */
hs_status hs_xpress_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap, size_t *out_len);

/* Output capacity that hs_xpress_compress never needs more than for in_len
 * bytes of input (all literals plus their flag words); SIZE_MAX if that does
 * not fit in a size_t. */
size_t hs_xpress_compress_bound(size_t in_len);

/*
 * Compresses in[0, in_len) into a Plain LZ77 stream that hs_xpress_decompress
 * (and Windows) reads back; sets *out_len to its length. A greedy hash-chain
 * matcher: deterministic, correct on any input, not tuned for ratio.
 * HS_ELIMIT when out_cap is too small (hs_xpress_compress_bound is always
 * enough), HS_ENOMEM, HS_EINVAL for bad arguments.
 */
hs_status hs_xpress_compress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap, size_t *out_len);

#endif
