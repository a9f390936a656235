/* hindsight/problem.h: the one shape in which readers (.etl, trace.dat, the estimator, image ids) report damage. */
#ifndef HINDSIGHT_PROBLEM_H
#define HINDSIGHT_PROBLEM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/limits.h"
#include "hindsight/status.h"

/*
 * A reader that meets something it cannot use does not stop: it reads what it
 * can and lists a problem saying what it skipped, where in the file, and why.
 * Programs decide what to do with the list (print it, put it in JSON, exit 1);
 * hs_problem_format gives the one text they all print.
 *
 * Ownership: an hs_problem is plain data (its message is an array, no
 * pointers), so it can be copied by value. An hs_problems list owns its array;
 * hs_problems_free releases it. A pointer from hs_problems_at (and from the
 * readers' hs_etl_problem_at / hs_tracedat_problem_at) is borrowed: valid
 * until the next add to that list or until the list (or the reader that owns
 * it) is freed. `hs_problems l = {0};` is an empty list without a limit.
 */

/* What kind of trouble; a small set, so programs can count or filter by kind. */
typedef enum {
	HS_PROBLEM_DAMAGED,     /* bytes that contradict the format: a bad size, a cut record, bad compression */
	HS_PROBLEM_UNREADABLE,  /* a part that cannot be read or is not supported: I/O, not this format, a
				   buffer instance libtracecmd refuses, a filter that does not compile, a file
				   that cannot be found or mapped */
	HS_PROBLEM_LOST,        /* the trace itself says events were lost, or the reader stopped early */
	HS_PROBLEM_NAME_UNKNOWN /* readable, but nothing says what it is: no event format, no image identity */
} hs_problem_kind;

typedef struct {
	hs_problem_kind kind;
	uint64_t offset; /* file offset the problem is at; UINT64_MAX when none (trace.dat: libtracecmd hides it) */
	int cpu;         /* the CPU of the buffer or ring the problem is in; -1 when none or unknown */
	char message[HS_PROBLEM_MESSAGE_MAX]; /* what and why, NUL-terminated, cut to fit; no offset in it */
} hs_problem;

typedef struct {
	hs_problem *items;
	size_t n, cap;
	size_t limit;   /* at most this many are kept (0: no limit); more are counted in dropped */
	size_t dropped; /* problems not kept because of the limit */
} hs_problems;

/* Lists a problem. One equal to a listed one (same offset and message) is not
 * listed again: a second walk over the same file finds the same damage.
 * HS_OK also when it was a duplicate or dropped at the limit; HS_ENOMEM (the
 * list unchanged) when the array cannot grow. */
hs_status hs_problems_add(hs_problems *l, hs_problem_kind kind, uint64_t offset, int cpu, const char *fmt, ...)
	HS_PRINTF_FMT(5, 6);
/* The same with the arguments as a va_list: a reader's own problem() wrapper
 * passes its arguments on. */
hs_status hs_problems_vadd(hs_problems *l, hs_problem_kind kind, uint64_t offset, int cpu, const char *fmt,
			   va_list ap) HS_PRINTF_FMT(5, 0);
/* The same with a copy of a problem (from another list or reader). */
hs_status hs_problems_push(hs_problems *l, const hs_problem *p);
size_t hs_problems_count(const hs_problems *l);
/* Problem i, or NULL when i >= count. */
const hs_problem *hs_problems_at(const hs_problems *l, size_t i);
/* Frees the array; the list is empty (and keeps its limit) afterwards. */
void hs_problems_free(hs_problems *l);

/* The text every program prints for p: "at file offset 0x1f000: <message>"
 * when it has an offset, else the message alone (the CPU is data for programs
 * that want it, not part of the text). Always NUL-terminates buf when cap > 0;
 * returns buf. */
char *hs_problem_format(const hs_problem *p, char *buf, size_t cap);

/* A short name for a kind ("damaged", "unreadable", "lost", "name unknown"). */
const char *hs_problem_kind_name(hs_problem_kind kind);

#endif
