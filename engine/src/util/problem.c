/* util/problem.c: the readers' problem list and its one text (see problem.h). */
#include "hindsight/problem.h"
#include "hindsight/vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First allocation: most traces have no problems, a damaged one a handful. */
#define PROBLEMS_MIN_CAP 16u

static hs_status add(hs_problems *l, const hs_problem *p)
{
	/* A second walk over the same file finds the same problems: keep one. */
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].offset == p->offset && strcmp(l->items[i].message, p->message) == 0)
			return HS_OK;
	if (l->limit && l->n >= l->limit) {
		l->dropped++;
		return HS_OK;
	}
	hs_problem *items = hs_array_grow(l->items, sizeof *items, l->n, &l->cap, PROBLEMS_MIN_CAP);
	if (!items)
		return HS_ENOMEM;
	l->items = items;
	l->items[l->n++] = *p;
	return HS_OK;
}

hs_status hs_problems_vadd(hs_problems *l, hs_problem_kind kind, uint64_t offset, int cpu, const char *fmt, va_list ap)
{
	hs_problem p;
	p.kind = kind;
	p.offset = offset;
	p.cpu = cpu;
	vsnprintf(p.message, sizeof p.message, fmt, ap);
	return add(l, &p);
}

hs_status hs_problems_add(hs_problems *l, hs_problem_kind kind, uint64_t offset, int cpu, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_status st = hs_problems_vadd(l, kind, offset, cpu, fmt, ap);
	va_end(ap);
	return st;
}

hs_status hs_problems_push(hs_problems *l, const hs_problem *p)
{
	hs_problem c = *p;
	c.message[sizeof c.message - 1] = '\0';
	return add(l, &c);
}

size_t hs_problems_count(const hs_problems *l)
{
	return l->n;
}

const hs_problem *hs_problems_at(const hs_problems *l, size_t i)
{
	return i < l->n ? &l->items[i] : NULL;
}

void hs_problems_free(hs_problems *l)
{
	free(l->items);
	l->items = NULL;
	l->n = l->cap = 0;
	l->dropped = 0;
}

char *hs_problem_format(const hs_problem *p, char *buf, size_t cap)
{
	if (!cap)
		return buf;
	if (p->offset != UINT64_MAX)
		snprintf(buf, cap, "at file offset 0x%llx: %s", (unsigned long long)p->offset, p->message);
	else
		snprintf(buf, cap, "%s", p->message);
	return buf;
}

const char *hs_problem_kind_name(hs_problem_kind kind)
{
	switch (kind) {
	case HS_PROBLEM_DAMAGED: return "damaged";
	case HS_PROBLEM_UNREADABLE: return "unreadable";
	case HS_PROBLEM_LOST: return "lost";
	case HS_PROBLEM_NAME_UNKNOWN: return "name unknown";
	}
	return "?";
}
