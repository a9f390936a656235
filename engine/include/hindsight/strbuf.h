/* hindsight/strbuf.h: growable string with a sticky out-of-memory flag, for building output and messages. */
#ifndef HINDSIGHT_STRBUF_H
#define HINDSIGHT_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hindsight/status.h"

/*
 * Ownership: the hs_strbuf owns buf (hs_sb_free releases it; hs_sb_take hands
 * it to the caller, who frees it); appended strings are copied. A zeroed
 * hs_strbuf is empty.
 */

/* After the first allocation failure every append is a no-op and `oom` stays
 * set, so callers check once at the end instead of after every append. */
typedef struct {
	char *buf; /* owned; NUL-terminated when len > 0 or after hs_sb_cstr */
	size_t len, cap;
	bool oom;
} hs_strbuf;

void hs_sb_append(hs_strbuf *sb, const char *s);
void hs_sb_appendn(hs_strbuf *sb, const char *s, size_t n);
void hs_sb_putc(hs_strbuf *sb, char c);
void hs_sb_printf(hs_strbuf *sb, const char *fmt, ...) HS_PRINTF_FMT(2, 3);
void hs_sb_vprintf(hs_strbuf *sb, const char *fmt, va_list ap) HS_PRINTF_FMT(2, 0);
/* Returns the text (never NULL; "" when empty or after OOM). Owned by sb. */
const char *hs_sb_cstr(hs_strbuf *sb);
/* Hands the buffer to the caller (free with free()); NULL on OOM. Resets sb. */
char *hs_sb_take(hs_strbuf *sb);
void hs_sb_free(hs_strbuf *sb);
/* Writes the text to out and frees sb: HS_ENOMEM if an append had failed,
 * HS_EIO if the write did, else HS_OK. */
hs_status hs_sb_write_free(hs_strbuf *sb, FILE *out);

#endif
