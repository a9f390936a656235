/* util/strbuf.c: growable string; see strbuf.h. */
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(hs_strbuf *sb, size_t extra)
{
	if (sb->oom)
		return false;
	if (sb->len + extra + 1 <= sb->cap)
		return true;
	size_t ncap = sb->cap ? sb->cap : 64;
	while (ncap < sb->len + extra + 1)
		ncap *= 2;
	char *p = realloc(sb->buf, ncap);
	if (!p) {
		sb->oom = true;
		return false;
	}
	sb->buf = p;
	sb->cap = ncap;
	return true;
}

void hs_sb_appendn(hs_strbuf *sb, const char *s, size_t n)
{
	if (!reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void hs_sb_append(hs_strbuf *sb, const char *s)
{
	hs_sb_appendn(sb, s, strlen(s));
}

void hs_sb_putc(hs_strbuf *sb, char c)
{
	hs_sb_appendn(sb, &c, 1);
}

void hs_sb_vprintf(hs_strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !reserve(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void hs_sb_printf(hs_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

const char *hs_sb_cstr(hs_strbuf *sb)
{
	return (sb->buf && !sb->oom) ? sb->buf : "";
}

char *hs_sb_take(hs_strbuf *sb)
{
	char *p = NULL;
	if (!sb->oom) {
		p = sb->buf ? sb->buf : calloc(1, 1);
		sb->buf = NULL;
	}
	hs_sb_free(sb);
	return p;
}

hs_status hs_sb_write_free(hs_strbuf *sb, FILE *out)
{
	hs_status st = sb->oom ? HS_ENOMEM : HS_OK;
	if (st == HS_OK && sb->len && fwrite(sb->buf, 1, sb->len, out) != sb->len)
		st = HS_EIO;
	hs_sb_free(sb);
	return st;
}

void hs_sb_free(hs_strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = false;
}
