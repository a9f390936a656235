/* rules/ftfilter.c: checks an ftrace filter expression offline, with the kernel's grammar and the catalog's field types, so rulecheck reports what the kernel would refuse. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/text.h"
#include "rules/rules_int.h"

/*
 * The grammar is the one kernel/trace/trace_events_filter.c accepts (Linux
 * 4.17 on, still so in 6.x), restated:
 *
 *   filter := or
 *   or     := and { "||" and }
 *   and    := unary { "&&" unary }
 *   unary  := "!" unary | "(" or ")" | pred
 *   pred   := FIELD OP VALUE
 *   FIELD  := [A-Za-z0-9_]+            looked up in the event, then CPU/cpu/common_cpu/COMM/comm, then common_*
 *   OP     := "~" "!=" "==" "<=" "<" ">=" ">" "&"   (tried in this order)
 *   VALUE  := '...' | "..." | [-]?[0-9][A-Za-z0-9]*
 *
 * with the kernel's typing: a quoted value needs a string field and ==, !=
 * or ~; a number needs a number field, not ~, parsed like kstrto(u)ll with
 * base 0 (a minus sign only for signed fields), and a field of 1, 2, 4 or 8
 * bytes; any other value is "did you forget quotes?". tests/ftrace/filter-agree-test.sh holds
 * this file to the running kernel with a corpus of right and wrong filters.
 */

typedef struct {
	const char *s;
	size_t i;
	const hs_ruleset *rs;
	const hs_cat_event *ev; /* NULL or without fields: the syntax and values only */
	hs_ftfilter_error *err;
	bool failed;
} fparser;

static bool fail(fparser *p, hs_diag_code code, size_t off, const char *hint, const char *fmt, ...)
	HS_PRINTF_FMT(5, 6);
static bool fail(fparser *p, hs_diag_code code, size_t off, const char *hint, const char *fmt, ...)
{
	if (p->failed)
		return false;
	p->failed = true;
	p->err->code = code;
	p->err->off = off;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
	va_end(ap);
	snprintf(p->err->hint, sizeof p->err->hint, "%s", hint ? hint : "");
	return false;
}

static void skip_space(fparser *p)
{
	while (isspace((unsigned char)p->s[p->i]))
		p->i++;
}

/* The kernel's generic fields: any event has them, after its own. */
static const hs_cat_field generic_fields[] = {
	{.name = "CPU", .type = "int", .size = 4, .is_signed = true},
	{.name = "cpu", .type = "int", .size = 4, .is_signed = true},
	{.name = "common_cpu", .type = "int", .size = 4, .is_signed = true},
	{.name = "COMM", .type = "char *", .size = 8},
	{.name = "comm", .type = "char *", .size = 8},
};

static const hs_cat_field *find_field(const fparser *p, const char *name)
{
	for (size_t i = 0; i < p->ev->n_fields; i++)
		if (strcmp(p->ev->fields[i].name, name) == 0)
			return &p->ev->fields[i];
	for (size_t i = 0; i < sizeof generic_fields / sizeof generic_fields[0]; i++)
		if (strcmp(generic_fields[i].name, name) == 0)
			return &generic_fields[i];
	for (size_t i = 0; i < p->rs->n_common_fields; i++)
		if (strcmp(p->rs->common_fields[i].name, name) == 0)
			return &p->rs->common_fields[i];
	return NULL;
}

/* "did you mean" over the event's own and the common fields. */
static const char *closest_field(const fparser *p, const char *name)
{
	size_t n = p->ev->n_fields + p->rs->n_common_fields;
	const char **cands = calloc(n + 1, sizeof(*cands));
	const char *best = NULL;
	if (!cands)
		return NULL;
	for (size_t i = 0; i < p->ev->n_fields; i++)
		cands[i] = p->ev->fields[i].name;
	for (size_t i = 0; i < p->rs->n_common_fields; i++)
		cands[p->ev->n_fields + i] = p->rs->common_fields[i].name;
	best = hs_closest(name, cands);
	free(cands);
	return best;
}

static void list_fields(const fparser *p, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < p->ev->n_fields && used + 1 < cap; i++) {
		int k = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", p->ev->fields[i].name);
		if (k < 0 || (size_t)k >= cap - used) {
			snprintf(buf + cap - 4, 4, "...");
			return;
		}
		used += (size_t)k;
	}
}

enum { OP_GLOB, OP_NE, OP_EQ, OP_LE, OP_LT, OP_GE, OP_GT, OP_BAND };
static const char *const ops[] = {"~", "!=", "==", "<=", "<", ">=", ">", "&", NULL};

static bool pred(fparser *p)
{
	skip_space(p);
	size_t fs = p->i;
	while (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_')
		p->i++;
	if (p->i == fs)
		return fail(p, HS_D_FILTER_SYNTAX, fs, "a comparison is FIELD OP VALUE, e.g. pid == 1",
			    p->s[fs] ? "expected a field name here" : "the filter ends where a comparison should follow");
	char name[HS_MAX_IDENT_CHARS + 1];
	size_t nlen = p->i - fs < HS_MAX_IDENT_CHARS ? p->i - fs : HS_MAX_IDENT_CHARS;
	memcpy(name, p->s + fs, nlen);
	name[nlen] = 0;
	const hs_cat_field *f = NULL;
	if (p->ev && p->ev->has_fields) {
		f = find_field(p, name);
		if (!f) {
			char hint[160], list[120];
			const char *near = closest_field(p, name);
			list_fields(p, list, sizeof list);
			if (near)
				snprintf(hint, sizeof hint, "did you mean '%s'?", near);
			else
				snprintf(hint, sizeof hint, "its fields: %s", list[0] ? list : "only the common_* ones");
			return fail(p, HS_D_FILTER_FIELD, fs, hint, "event '%s' has no field '%s'", p->ev->name, name);
		}
	}
	skip_space(p);
	int op = -1;
	for (int k = 0; ops[k]; k++)
		if (strncmp(p->s + p->i, ops[k], strlen(ops[k])) == 0) {
			op = k;
			break;
		}
	if (op < 0)
		return fail(p, HS_D_FILTER_SYNTAX, p->i, "the operators are ==, !=, <, <=, >, >=, & (numbers) and ~ (glob)",
			    "expected an operator after '%s'", name);
	size_t op_at = p->i;
	p->i += strlen(ops[op]);
	skip_space(p);
	size_t vs = p->i;
	char c = p->s[vs];
	if (c == '\'' || c == '"') {
		if (op != OP_EQ && op != OP_NE && op != OP_GLOB)
			return fail(p, HS_D_FILTER_TYPE, op_at, "strings compare with ==, != or ~ (a glob)",
				    "'%s' cannot compare strings", ops[op]);
		if (f && !hs_cat_field_is_string(f))
			return fail(p, HS_D_FILTER_TYPE, vs, "compare it with a number, without quotes",
				    "'%s' is a number (%s), not a string", name, f->type);
		const char *close = strchr(p->s + vs + 1, c);
		if (!close) /* calc_stack found every quote closed; kept for safety */
			return fail(p, HS_D_FILTER_SYNTAX, vs, NULL, "this quote is never closed");
		size_t len = (size_t)(close - (p->s + vs + 1));
		if (len > HS_FTRACE_FILTER_MAX_STR)
			return fail(p, HS_D_FILTER_SYNTAX, vs, NULL, "a string operand has %zu characters; the kernel takes %d",
				    len, HS_FTRACE_FILTER_MAX_STR);
		p->i = (size_t)(close - p->s) + 1;
		return true;
	}
	if (isdigit((unsigned char)c) || c == '-') {
		if (f && hs_cat_field_is_string(f))
			return fail(p, HS_D_FILTER_TYPE, vs, "put the value in quotes: comm == \"bash\"",
				    "'%s' is a string (%s), compared with a number", name, f->type);
		if (op == OP_GLOB)
			return fail(p, HS_D_FILTER_TYPE, op_at, "~ matches strings; use ==, !=, <, <=, >, >= or &",
				    "'~' (glob) cannot compare numbers");
		if (c == '-')
			p->i++;
		while (isalnum((unsigned char)p->s[p->i]))
			p->i++;
		size_t len = p->i - vs;
		if (len > HS_FTRACE_FILTER_MAX_NUM)
			return fail(p, HS_D_FILTER_SYNTAX, vs, NULL, "a number operand has %zu characters; the kernel takes %d",
				    len, HS_FTRACE_FILTER_MAX_NUM);
		char num[HS_FTRACE_FILTER_MAX_NUM + 1];
		memcpy(num, p->s + vs, len);
		num[len] = 0;
		char *end = NULL;
		errno = 0;
		bool is_signed = f ? f->is_signed : true;
		if (is_signed)
			(void)strtoll(num, &end, 0);
		else if (num[0] != '-')
			(void)strtoull(num, &end, 0);
		if (!end || *end || errno || end == num) {
			if (!is_signed && num[0] == '-')
				return fail(p, HS_D_FILTER_TYPE, vs, NULL, "'%s' is unsigned (%s); '%s' is negative", name,
					    f->type, num);
			return fail(p, HS_D_FILTER_SYNTAX, vs, "numbers are decimal, 0x hex or 0 octal",
				    "'%s' is not an integer", num);
		}
		if (f && f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8 && strcmp(f->name, "CPU") &&
		    strcmp(f->name, "cpu") && strcmp(f->name, "common_cpu"))
			return fail(p, HS_D_FILTER_TYPE, fs, NULL, "'%s' (%s, %u bytes) cannot be compared as a number",
				    name, f->type, f->size);
		return true;
	}
	return fail(p, HS_D_FILTER_SYNTAX, vs, "a value is a number or a quoted string: comm == \"bash\"",
		    c ? "expected a number or a quoted string (did you forget quotes?)"
		      : "the filter ends where a value should follow");
}

/* The kernel's first pass: quotes and parentheses balance, and there is at
 * least one comparison. */
static bool balanced(fparser *p)
{
	const char *s = p->s;
	int open = 0;
	size_t last_quote = 0, last_open[HS_FTRACE_FILTER_MAX_DEPTH];
	char quote = 0;
	bool any = false;
	for (size_t i = 0; s[i]; i++) {
		if (quote) {
			if (s[i] == quote)
				quote = 0;
			continue;
		}
		if (s[i] == '\'' || s[i] == '"') {
			quote = s[i];
			last_quote = i;
		} else if (s[i] == '(') {
			if (open < HS_FTRACE_FILTER_MAX_DEPTH)
				last_open[open] = i;
			open++;
		} else if (s[i] == ')') {
			if (!open)
				return fail(p, HS_D_FILTER_SYNTAX, i, NULL, "this ')' closes nothing");
			open--;
		} else if (!isspace((unsigned char)s[i]) && s[i] != '!' && s[i] != '&' && s[i] != '|') {
			any = true;
		}
	}
	if (quote)
		return fail(p, HS_D_FILTER_SYNTAX, last_quote, NULL, "this quote is never closed");
	if (open)
		return fail(p, HS_D_FILTER_SYNTAX, open <= HS_FTRACE_FILTER_MAX_DEPTH ? last_open[open - 1] : 0, NULL,
			    "this '(' is never closed");
	if (!any)
		return fail(p, HS_D_FILTER_SYNTAX, 0, "leave 'filter' out to record every instance of the event",
			    "the filter has no comparison");
	return true;
}

static bool expr(fparser *p, int depth);

static bool unary(fparser *p, int depth)
{
	skip_space(p);
	if (p->s[p->i] == '!' && p->s[p->i + 1] != '=' && p->s[p->i + 1] != '~') {
		p->i++;
		return unary(p, depth);
	}
	if (p->s[p->i] == '(') {
		if (depth >= HS_FTRACE_FILTER_MAX_DEPTH)
			return fail(p, HS_D_FILTER_SYNTAX, p->i, NULL, "parentheses nest deeper than %d",
				    HS_FTRACE_FILTER_MAX_DEPTH);
		p->i++;
		if (!expr(p, depth + 1))
			return false;
		skip_space(p);
		if (p->s[p->i] != ')') /* balanced() makes this unreachable */
			return fail(p, HS_D_FILTER_SYNTAX, p->i, NULL, "expected ')'");
		p->i++;
		return true;
	}
	return pred(p);
}

static bool expr(fparser *p, int depth)
{
	for (;;) {
		if (!unary(p, depth))
			return false;
		skip_space(p);
		const char *t = p->s + p->i;
		if ((t[0] == '&' && t[1] == '&') || (t[0] == '|' && t[1] == '|')) {
			p->i += 2;
			continue;
		}
		if (!t[0] || t[0] == ')')
			return true;
		return fail(p, HS_D_FILTER_SYNTAX, p->i, "join comparisons with && or ||",
			    "expected &&, || or the end of the filter here");
	}
}

bool hs_ftfilter_check(const char *filter, const hs_ruleset *rs, const hs_cat_event *ev, hs_ftfilter_error *err)
{
	memset(err, 0, sizeof(*err));
	fparser p = {.s = filter, .rs = rs, .ev = ev, .err = err};
	if (!balanced(&p))
		return false;
	if (!expr(&p, 0))
		return false;
	skip_space(&p);
	if (p.s[p.i]) /* a ')' with nothing open: balanced() reports it first */
		return fail(&p, HS_D_FILTER_SYNTAX, p.i, NULL, "unexpected '%c'", p.s[p.i]);
	return true;
}
