/* tracedat/format.c: event format texts checked line by line and rewritten in the kernel's layout before libtraceevent parses them. */
#if defined(__linux__) /* the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracedat/td_int.h"

/*
 * libtraceevent's format parser trusts its input: damaged format text (a NUL,
 * a cut line) crashed it in the damage test. So a format is read here first,
 * against the layout every kernel since 2.6.31 prints:
 *
 *   name: IDENT
 *   ID: NUMBER
 *   format:
 *   \tfield:DECL;\toffset:N;\tsize:N;\tsigned:0|1;     (the common fields)
 *                                                       (an empty line)
 *   \tfield:...                                        (the event's fields)
 *
 *   print fmt: ...
 *
 * DECL is type words, '*' and [..] groups ending in the field's name. What
 * reaches libtraceevent is a text written here from what was read, with an
 * empty print format: the reader decodes fields and never prints through
 * libtraceevent, and the print format is the parser's largest part. A format
 * that does not follow the layout is not parsed (its records are "?").
 */

enum { MAX_FIELDS = 512, MAX_DECL = 160, MAX_NAME = 128, MAX_FIELD_BYTES = 65536 };

typedef struct {
	const char *p, *end;
} span;

static bool next_line(span *s, span *line)
{
	if (s->p >= s->end)
		return false;
	const char *nl = memchr(s->p, '\n', (size_t)(s->end - s->p));
	line->p = s->p;
	line->end = nl ? nl : s->end;
	s->p = nl ? nl + 1 : s->end;
	return true;
}

static void skip_blanks(span *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t'))
		s->p++;
}

static bool blank(span s)
{
	skip_blanks(&s);
	return s.p == s.end;
}

static bool eat(span *s, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return false;
	s->p += n;
	return true;
}

static bool is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Words libtraceevent's tokenizer turns into quoted strings wherever they stand (its workaround for old mac80211
 * print formats): as a type or a field's name it leaks what it parsed of the declaration (fuzz:tracedat under
 * LeakSanitizer), as an event's name the format fails. No kernel names a field or an event so. */
static bool tep_rewritten_word(const char *w, size_t n)
{
	static const char *const words[] = {"LOCAL_PR_FMT", "STA_PR_FMT", "VIF_PR_FMT"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strlen(words[i]) == n && !memcmp(words[i], w, n))
			return true;
	return false;
}

/* An identifier that fills the rest of the span (blanks around it allowed). */
static bool ident_line(span s, char *out, size_t cap)
{
	skip_blanks(&s);
	const char *b = s.p;
	while (s.p < s.end && is_ident_char(*s.p))
		s.p++;
	size_t n = (size_t)(s.p - b);
	if (n == 0 || n >= cap || !blank(s) || tep_rewritten_word(b, n))
		return false;
	memcpy(out, b, n);
	out[n] = '\0';
	return true;
}

static bool number(span *s, unsigned long max, unsigned long *v)
{
	skip_blanks(s);
	const char *b = s->p;
	unsigned long n = 0;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		n = n * 10 + (unsigned long)(*s->p - '0');
		if (n > max)
			return false;
		s->p++;
	}
	*v = n;
	return s->p > b;
}

/* DECL: tokens (identifiers, '*', a [..] group of identifier characters, blanks and balanced parentheses),
 * at least a type and a name, the last identifier the name, only [..] groups after it. A group before the
 * name only as the kernel prints a dynamic array ("__data_loc char[] name", "__rel_loc u8[] buf"): right
 * before the name, after the keyword and a type. libtraceevent 1.7 leaks what it parsed of a declaration with
 * a group after its first word ("char[16] comm", "__data_loc [] x": fuzz:tracedat under LeakSanitizer). */
static bool decl_ok(const char *d)
{
	enum { ID = 'i', STAR = '*', GROUP = '[' };
	char kinds[MAX_DECL];
	size_t n = 0;
	int idents = 0;
	const char *first = NULL; /* the first identifier and its length */
	size_t first_len = 0;
	for (const char *p = d; *p;) {
		if (*p == ' ') {
			p++;
			continue;
		}
		if (n == sizeof kinds)
			return false;
		if (*p == '*') {
			p++;
			kinds[n++] = STAR;
		} else if (is_ident_char(*p)) {
			const char *b = p;
			while (is_ident_char(*p))
				p++;
			if (tep_rewritten_word(b, (size_t)(p - b)))
				return false;
			if (!idents++)
				first = b, first_len = (size_t)(p - b);
			kinds[n++] = ID;
		} else if (*p == '[') {
			int depth = 0;
			for (p++; *p != ']'; p++) {
				if (*p == '(')
					depth++;
				else if (*p == ')' && --depth < 0)
					return false;
				else if (!is_ident_char(*p) && *p != ' ' && *p != '(' && *p != '*' && *p != '+' && *p != '-')
					return false;
			}
			if (depth)
				return false;
			p++;
			kinds[n++] = GROUP;
		} else {
			return false;
		}
	}
	if (idents < 2)
		return false;
	size_t name = n;
	while (name-- > 0 && kinds[name] != ID) /* the last identifier; after it, groups only */
		if (kinds[name] != GROUP)
			return false;
	size_t group = n; /* a group before the name */
	int before = 0;   /* identifiers before it */
	for (size_t i = 0, ids = 0; i < name; i++) {
		ids += kinds[i] == ID;
		if (kinds[i] == GROUP) {
			if (group != n)
				return false; /* two */
			group = i, before = (int)ids;
		}
	}
	if (group == n)
		return true;
	bool dynamic = (first_len == 10 && !memcmp(first, "__data_loc", 10)) ||
		       (first_len == 9 && !memcmp(first, "__rel_loc", 9));
	return dynamic && before >= 2 && group + 1 == name && name + 1 == n;
}

/* One field line: "field:DECL;" then "offset:N;", "size:N;" and maybe "signed:N;", written canonically to out. */
static bool field_line(span s, char *out, size_t cap, char *why, size_t why_cap)
{
	skip_blanks(&s);
	if (!eat(&s, "field:")) {
		snprintf(why, why_cap, "a line that is not a field");
		return false;
	}
	const char *semi = memchr(s.p, ';', (size_t)(s.end - s.p));
	size_t n = semi ? (size_t)(semi - s.p) : 0;
	char decl[MAX_DECL];
	if (!semi || n == 0 || n >= sizeof decl) {
		snprintf(why, why_cap, "a field declaration that is cut or too long");
		return false;
	}
	memcpy(decl, s.p, n);
	decl[n] = '\0';
	if (!decl_ok(decl)) {
		snprintf(why, why_cap, "a field declaration with unexpected characters");
		return false;
	}
	s.p = semi + 1;
	unsigned long off = 0, size = 0, sign = 0;
	bool have_off = false, have_size = false, have_sign = false;
	for (;;) {
		skip_blanks(&s);
		if (s.p == s.end)
			break;
		unsigned long *dst;
		bool *seen;
		unsigned long max = MAX_FIELD_BYTES;
		if (eat(&s, "offset:"))
			dst = &off, seen = &have_off;
		else if (eat(&s, "size:"))
			dst = &size, seen = &have_size;
		else if (eat(&s, "signed:"))
			dst = &sign, seen = &have_sign, max = 1;
		else {
			snprintf(why, why_cap, "a field attribute that is not offset, size or signed");
			return false;
		}
		if (*seen || !number(&s, max, dst) || !eat(&s, ";")) {
			snprintf(why, why_cap, "a field attribute without its number");
			return false;
		}
		*seen = true;
	}
	if (!have_off || !have_size || off + size > MAX_FIELD_BYTES) {
		snprintf(why, why_cap, "a field without an offset and size inside a record");
		return false;
	}
	int w = have_sign ? snprintf(out, cap, "\tfield:%s;\toffset:%lu;\tsize:%lu;\tsigned:%lu;\n", decl, off, size, sign)
			  : snprintf(out, cap, "\tfield:%s;\toffset:%lu;\tsize:%lu;\n", decl, off, size);
	return w > 0 && (size_t)w < cap;
}

hs_status td_format_clean(const char *text, size_t len, char **out, char *why, size_t why_cap)
{
	*out = NULL;
	why[0] = '\0';
	span s = {text, text + len}, line;
	char name[MAX_NAME];
	unsigned long id;
	if (memchr(text, '\0', len)) {
		snprintf(why, why_cap, "a NUL byte in the text");
		return HS_EINVAL;
	}
	if (!next_line(&s, &line) || !eat(&line, "name:") || !ident_line(line, name, sizeof name)) {
		snprintf(why, why_cap, "no 'name:' line with an event name");
		return HS_EINVAL;
	}
	if (!next_line(&s, &line) || !eat(&line, "ID:") || !number(&line, HS_MAX_EVENT_ID, &id) || !blank(line)) {
		snprintf(why, why_cap, "no 'ID:' line with a number up to %d", HS_MAX_EVENT_ID);
		return HS_EINVAL;
	}
	if (!next_line(&s, &line) || !eat(&line, "format:") || !blank(line)) {
		snprintf(why, why_cap, "no 'format:' line");
		return HS_EINVAL;
	}
	/* Room for the header, every field line at its longest, the separators and the print format. */
	size_t cap = 64 + MAX_NAME + (size_t)MAX_FIELDS * (MAX_DECL + 64) + 32, at = 0;
	char *buf = malloc(cap);
	if (!buf)
		return HS_ENOMEM;
	at += (size_t)snprintf(buf, cap, "name: %s\nID: %lu\nformat:\n", name, id);
	/* group 0: the common fields, 1: the event's, 2: past them; an empty line closes a group with fields. */
	int group = 0, in_group = 0, fields = 0;
	while (next_line(&s, &line)) {
		span probe = line;
		skip_blanks(&probe);
		if (eat(&probe, "print fmt:"))
			break;
		if (blank(line)) {
			if (in_group && group < 2) {
				buf[at++] = '\n';
				group++;
				in_group = 0;
			}
			continue;
		}
		if (group == 2 || fields == MAX_FIELDS) {
			snprintf(why, why_cap, "%s", group == 2 ? "fields after the event's fields" : "too many fields");
			free(buf);
			return HS_EINVAL;
		}
		if (!field_line(line, buf + at, cap - at, why, why_cap)) {
			free(buf);
			return HS_EINVAL;
		}
		at += strlen(buf + at);
		fields++;
		in_group++;
	}
	for (; group < 2; group++)
		buf[at++] = '\n';
	at += (size_t)snprintf(buf + at, cap - at, "print fmt: \"\"\n");
	*out = buf;
	return HS_OK;
}

hs_status td_header_page(const char *text, size_t len, unsigned *klong)
{
	/* header_page's lines are field lines too; the commit field's size is the kernel's long. */
	span s = {text, text + len}, line;
	if (memchr(text, '\0', len))
		return HS_EINVAL;
	while (next_line(&s, &line)) {
		char buf[MAX_DECL + 64], why[64];
		if (blank(line))
			continue;
		if (!field_line(line, buf, sizeof buf, why, sizeof why))
			return HS_EINVAL;
		/* "\tfield:local_t commit;\toffset:8;\tsize:8;..." */
		const char *decl = buf + strlen("\tfield:");
		const char *semi = strchr(decl, ';');
		size_t n = (size_t)(semi - decl);
		if (n >= 7 && memcmp(semi - 7, " commit", 7) == 0) {
			const char *sz = strstr(semi, "size:");
			unsigned long v = sz ? strtoul(sz + 5, NULL, 10) : 0;
			if (v != 4 && v != 8)
				return HS_EINVAL;
			*klong = (unsigned)v;
			return HS_OK;
		}
	}
	return HS_EINVAL;
}

#else
typedef int hs_tracedat_format_unused; /* ISO C wants a declaration in every file */
#endif
