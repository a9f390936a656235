/* util/strbuf.h: growable string with a sticky out-of-memory flag, for building output and messages. */
#ifndef HS_UTIL_STRBUF_H
#define HS_UTIL_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

/* After the first allocation failure every append is a no-op and `oom` stays
 * set, so callers check once at the end instead of after every append. */
typedef struct {
	char *buf; /* owned; NUL-terminated when len > 0 or after sb_cstr */
	size_t len, cap;
	bool oom;
} hs_strbuf;

void sb_append(hs_strbuf *sb, const char *s);
void sb_appendn(hs_strbuf *sb, const char *s, size_t n);
void sb_putc(hs_strbuf *sb, char c);
void sb_printf(hs_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the text (never NULL; "" when empty or after OOM). Owned by sb. */
const char *sb_cstr(hs_strbuf *sb);
/* Hands the buffer to the caller (free with free()); NULL on OOM. Resets sb. */
char *sb_take(hs_strbuf *sb);
void sb_free(hs_strbuf *sb);

#endif
