/* analyze/fleet_row.c: reads a report.json's first members (report_version, input, verdict) and its flat signature block into a fleet row, without reading the findings after it: a fleet of 10,000 reports is scanned in their first kilobytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

/* A strict JSON scanner over [p, end): what it reads it checks (RFC 8259 strings, numbers and literals, nesting
 * at most 64 deep); `cut` is set when the text ends inside a value, which is not an error when only the start of
 * the file was read. */
typedef struct {
	const char *p, *end;
	bool cut, bad;
	const char *why;
	hs_arena *a;
} scan;

static void fail(scan *s, const char *why)
{
	if (!s->bad && !s->cut) {
		s->bad = true;
		s->why = why;
	}
}

static bool more(scan *s)
{
	if (s->p < s->end)
		return true;
	s->cut = true;
	return false;
}

static void ws(scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
		s->p++;
}

/* After white space: past c when it is next (1), 0 when something else is, -1 at the end of the input. */
static int next_is(scan *s, char c)
{
	ws(s);
	if (!more(s))
		return -1;
	if (*s->p != c)
		return 0;
	s->p++;
	return 1;
}

static bool want(scan *s, char c)
{
	int got = next_is(s, c);
	if (got == 0)
		fail(s, c == ':' ? "a ':' is missing" : c == '{' ? "not a JSON object" : "malformed JSON");
	return got > 0;
}
static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
}

static void put_utf8(char *o, size_t *n, uint32_t c)
{
	if (c < 0x80) {
		o[(*n)++] = (char)c;
	} else if (c < 0x800) {
		o[(*n)++] = (char)(0xC0 | (c >> 6));
		o[(*n)++] = (char)(0x80 | (c & 0x3F));
	} else if (c < 0x10000) {
		o[(*n)++] = (char)(0xE0 | (c >> 12));
		o[(*n)++] = (char)(0x80 | ((c >> 6) & 0x3F));
		o[(*n)++] = (char)(0x80 | (c & 0x3F));
	} else {
		o[(*n)++] = (char)(0xF0 | (c >> 18));
		o[(*n)++] = (char)(0x80 | ((c >> 12) & 0x3F));
		o[(*n)++] = (char)(0x80 | ((c >> 6) & 0x3F));
		o[(*n)++] = (char)(0x80 | (c & 0x3F));
	}
}

static bool read_u4(scan *s, uint32_t *u)
{
	if (s->end - s->p < 4) {
		s->cut = true;
		return false;
	}
	*u = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(s->p[i]);
		if (h < 0) {
			fail(s, "a bad \\u escape");
			return false;
		}
		*u = *u << 4 | (uint32_t)h;
	}
	s->p += 4;
	return true;
}

/* A string after its opening quote; *out (when out is not NULL) gets it unescaped, in the arena. */
static bool string_body(scan *s, const char **out)
{
	const char *start = s->p;
	bool escapes = false;
	while (s->p < s->end && *s->p != '"') {
		if ((unsigned char)*s->p < 0x20) {
			fail(s, "a control character in a string");
			return false;
		}
		if (*s->p == '\\') {
			escapes = true;
			s->p++;
		}
		s->p++;
	}
	if (s->p >= s->end) {
		s->cut = true;
		return false;
	}
	const char *stop = s->p++;
	if (!out)
		return true;
	if (!escapes) {
		*out = hs_arena_strndup(s->a, start, (size_t)(stop - start));
		return *out != NULL;
	}
	char *o = hs_arena_alloc(s->a, (size_t)(stop - start) + 1);
	if (!o)
		return false;
	size_t n = 0;
	scan e = {.p = start, .end = stop, .a = s->a};
	while (e.p < e.end) {
		if (*e.p != '\\') {
			o[n++] = *e.p++;
			continue;
		}
		e.p++;
		char c = *e.p++;
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		const char *k = strchr(from, c);
		if (c && k) {
			o[n++] = to[k - from];
			continue;
		}
		uint32_t u = 0, lo = 0;
		if (c != 'u' || !read_u4(&e, &u)) {
			fail(s, "a bad escape in a string");
			return false;
		}
		/* a surrogate pair is one character; a lone surrogate is U+FFFD (the report writes none) */
		if (u >= 0xD800 && u < 0xDC00 && e.end - e.p >= 6 && e.p[0] == '\\' && e.p[1] == 'u') {
			e.p += 2;
			if (read_u4(&e, &lo) && lo >= 0xDC00 && lo < 0xE000)
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
			else
				u = 0xFFFD;
		} else if (u >= 0xD800 && u < 0xE000) {
			u = 0xFFFD;
		}
		put_utf8(o, &n, u);
	}
	o[n] = '\0';
	*out = o;
	return true;
}

static bool string(scan *s, const char **out)
{
	return want(s, '"') && string_body(s, out);
}

/* A number: its value as a double (exact for the integers a report writes). */
static bool number(scan *s, double *v)
{
	const char *b = s->p;
	if (s->p < s->end && *s->p == '-')
		s->p++;
	while (s->p < s->end && ((*s->p >= '0' && *s->p <= '9') || *s->p == '.' || *s->p == 'e' || *s->p == 'E' ||
				 *s->p == '+' || *s->p == '-'))
		s->p++;
	if (s->p >= s->end) {
		s->cut = true;
		return false;
	}
	char buf[64];
	size_t n = (size_t)(s->p - b);
	if (!n || n >= sizeof buf) {
		fail(s, "a bad number");
		return false;
	}
	memcpy(buf, b, n);
	buf[n] = '\0';
	char *e = NULL;
	*v = strtod(buf, &e);
	if (!e || *e) {
		fail(s, "a bad number");
		return false;
	}
	return true;
}

static bool literal(scan *s, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(s->end - s->p) < n) {
		s->cut = true;
		return false;
	}
	if (memcmp(s->p, word, n) != 0) {
		fail(s, "a bad literal");
		return false;
	}
	s->p += n;
	return true;
}

/* A number, true, false or null. */
static bool scalar(scan *s)
{
	char c = *s->p;
	double d;
	if (c == '"') {
		s->p++;
		return string_body(s, NULL);
	}
	if (c == 't')
		return literal(s, "true");
	if (c == 'f')
		return literal(s, "false");
	if (c == 'n')
		return literal(s, "null");
	if (c == '-' || (c >= '0' && c <= '9'))
		return number(s, &d);
	fail(s, "malformed JSON");
	return false;
}

/* Skips one value of any kind; the containers it is inside are bits of a word (an object 1, an array 0), so
 * nesting costs no stack and stops at 64. */
static bool skip_value(scan *s)
{
	uint64_t is_obj = 0;
	int depth = 0;
	for (;;) {
		ws(s);
		if (!more(s))
			return false;
		char c = *s->p;
		if (c == '{' || c == '[') {
			if (depth == 64) {
				fail(s, "nested too deep");
				return false;
			}
			s->p++;
			is_obj = c == '{' ? is_obj | (1ull << depth) : is_obj & ~(1ull << depth);
			depth++;
			ws(s);
			if (!more(s))
				return false;
			if (*s->p == (c == '{' ? '}' : ']')) {
				s->p++;
				depth--;
			} else {
				if (c == '{' && (!string(s, NULL) || !want(s, ':')))
					return false;
				continue; /* the container's first value */
			}
		} else if (!scalar(s)) {
			return false;
		}
		/* after a value: the next one of its container, or the container's end */
		for (;;) {
			if (!depth)
				return true;
			ws(s);
			if (!more(s))
				return false;
			bool obj = (is_obj >> (depth - 1)) & 1;
			if (*s->p == ',') {
				s->p++;
				if (obj && (!string(s, NULL) || !want(s, ':')))
					return false;
				break;
			}
			if (*s->p == (obj ? '}' : ']')) {
				s->p++;
				depth--;
				continue;
			}
			fail(s, "malformed JSON");
			return false;
		}
	}
}

/* A string or null into *out. */
static bool str_or_null(scan *s, const char **out)
{
	ws(s);
	if (!more(s))
		return false;
	if (*s->p == 'n') {
		*out = NULL;
		return literal(s, "null");
	}
	return string(s, out);
}

static bool num_or_null(scan *s, double *v, bool *has)
{
	ws(s);
	if (!more(s))
		return false;
	*has = *s->p != 'n';
	if (!*has)
		return literal(s, "null");
	return number(s, v);
}

static bool boolean(scan *s, bool *v)
{
	ws(s);
	if (!more(s))
		return false;
	*v = *s->p == 't';
	return literal(s, *v ? "true" : "false");
}

/* The members of an object, each handed to fn (which reads or skips its value); false when the scan stopped. */
typedef bool (*member_fn)(scan *s, const char *key, void *ctx);

static bool object(scan *s, member_fn fn, void *ctx)
{
	if (!want(s, '{'))
		return false;
	int end = next_is(s, '}');
	if (end)
		return end > 0;
	for (;;) {
		const char *key = NULL;
		if (!string(s, &key) || !want(s, ':') || !fn(s, key, ctx))
			return false;
		if ((end = next_is(s, '}')))
			return end > 0;
		if (!want(s, ','))
			return false;
	}
}

static bool m_input(scan *s, const char *key, void *ctx)
{
	fleet_row *r = ctx;
	if (!strcmp(key, "kind"))
		return str_or_null(s, &r->input_kind);
	return skip_value(s);
}

static bool m_verdict(scan *s, const char *key, void *ctx)
{
	fleet_row *r = ctx;
	if (!strcmp(key, "text"))
		return str_or_null(s, &r->verdict);
	return skip_value(s);
}

static bool m_signature(scan *s, const char *key, void *ctx)
{
	fleet_row *r = ctx;
	static const struct {
		const char *key;
		size_t at;
	} strs[] = {
#define F(k) {#k, offsetof(fleet_row, k)}
		F(signature), F(bucket_id), F(symptom), F(cause),   F(culprit), F(detail),  F(app),
		F(app_version), F(os),      F(os_build), F(machine), F(host),   F(seen_at), F(quality),
#undef F
	};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		if (!strcmp(key, strs[i].key))
			return str_or_null(s, (const char **)((char *)r + strs[i].at));
	double v = 0;
	bool has = false;
	if (!strcmp(key, "sig_version")) {
		bool ok = num_or_null(s, &v, &has);
		r->sig_version = has ? (int64_t)v : 0;
		return ok;
	}
	if (!strcmp(key, "weight")) {
		bool ok = num_or_null(s, &v, &has);
		r->weight = has ? v : 1;
		return ok;
	}
	if (!strcmp(key, "lost_events")) {
		bool ok = num_or_null(s, &v, &has);
		r->lost_events = has && v > 0 ? (uint64_t)v : 0;
		return ok;
	}
	if (!strcmp(key, "covered_share"))
		return num_or_null(s, &r->covered_share, &r->has_covered);
	if (!strcmp(key, "lost_unknown"))
		return boolean(s, &r->lost_unknown);
	return skip_value(s); /* notes, and keys a later version adds */
}

typedef struct {
	fleet_row *row;
	bool done; /* the signature member was read: nothing after it is needed */
	bool seen_version;
} top_ctx;

static bool m_top(scan *s, const char *key, void *ctx)
{
	top_ctx *t = ctx;
	fleet_row *r = t->row;
	if (!strcmp(key, "report_version")) {
		double v = 0;
		bool has = false;
		bool ok = num_or_null(s, &v, &has);
		r->report_version = has ? (int64_t)v : 0;
		t->seen_version = true;
		return ok;
	}
	if (!strcmp(key, "input"))
		return object(s, m_input, r);
	if (!strcmp(key, "verdict")) {
		ws(s);
		if (s->p < s->end && *s->p == '{')
			return object(s, m_verdict, r);
		return skip_value(s);
	}
	if (!strcmp(key, "signature")) {
		ws(s);
		if (!more(s))
			return false;
		if (*s->p == 'n') {
			t->done = literal(s, "null");
			return false; /* stop: nothing after it is needed */
		}
		r->weight = 1;
		r->has_signature = object(s, m_signature, r);
		t->done = r->has_signature;
		return false;
	}
	return skip_value(s);
}

fleet_row_status fleet_row_read(const char *text, size_t len, bool whole, hs_arena *a, fleet_row *row, char *err,
				size_t errcap)
{
	memset(row, 0, sizeof *row);
	row->weight = 1;
	scan s = {.p = text, .end = text + len, .a = a};
	top_ctx t = {.row = row};
	bool complete = object(&s, m_top, &t);
	if (t.done || (complete && t.seen_version)) {
		if (!t.seen_version || row->report_version < 1) {
			snprintf(err, errcap, "no report_version before the signature: not a hindsight report.json");
			return FLEET_ROW_BAD;
		}
		return FLEET_ROW_OK;
	}
	if (s.cut && !s.bad && !whole)
		return FLEET_ROW_NEED_MORE;
	snprintf(err, errcap, "%s", s.bad ? s.why : s.cut ? "the JSON ends early" : "no report_version: not a hindsight report.json");
	return FLEET_ROW_BAD;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

bool fleet_parse_time(const char *s, int64_t *out)
{
	if (!s)
		return false;
	int y, mo, d, h, mi, sec, n = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	const char *z = s + 19;
	if (*z == '.') /* fractions of a second are not needed */
		while (*++z >= '0' && *z <= '9')
			;
	int off = 0;
	if (*z == 'Z' && !z[1]) {
		off = 0;
	} else if ((*z == '+' || *z == '-') && strlen(z) >= 5) {
		int oh = 0, om = 0;
		if (z[3] == ':' ? sscanf(z + 1, "%2d:%2d", &oh, &om) != 2 : sscanf(z + 1, "%2d%2d", &oh, &om) != 2)
			return false;
		off = (*z == '-' ? -1 : 1) * (oh * 3600 + om * 60);
	} else {
		return false;
	}
	*out = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec - off;
	return true;
}
