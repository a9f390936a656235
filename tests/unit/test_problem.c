/* test_problem.c: unit tests for the readers' problem list (problem.h): dedup, growth, limit, the text. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "hindsight/problem.h"

static void test_add_and_dedup(void)
{
	hs_problems l = {0};
	CHECK_EQ_INT(hs_problems_count(&l), 0);
	CHECK(hs_problems_at(&l, 0) == NULL);
	CHECK(hs_problems_add(&l, HS_PROBLEM_DAMAGED, 0x1f000, 3, "buffer size %u is damaged", 7u) == HS_OK);
	/* The same offset and message again (a second walk): listed once. */
	CHECK(hs_problems_add(&l, HS_PROBLEM_DAMAGED, 0x1f000, 3, "buffer size %u is damaged", 7u) == HS_OK);
	CHECK_EQ_INT(hs_problems_count(&l), 1);
	/* Another offset or another message is another problem. */
	hs_problems_add(&l, HS_PROBLEM_DAMAGED, 0x20000, 3, "buffer size %u is damaged", 7u);
	hs_problems_add(&l, HS_PROBLEM_DAMAGED, 0x1f000, 3, "buffer size %u is damaged", 8u);
	hs_problems_add(&l, HS_PROBLEM_NAME_UNKNOWN, UINT64_MAX, -1, "records with no event format");
	CHECK_EQ_INT(hs_problems_count(&l), 4);
	const hs_problem *p = hs_problems_at(&l, 0);
	CHECK(p && p->kind == HS_PROBLEM_DAMAGED && p->offset == 0x1f000 && p->cpu == 3);
	CHECK_EQ_STR(p->message, "buffer size 7 is damaged");
	CHECK_EQ_STR(hs_problems_at(&l, 2)->message, "buffer size 8 is damaged");
	CHECK(hs_problems_at(&l, 4) == NULL);
	/* A copy from another list (the estimator copies its reader's) dedups too. */
	hs_problems c = {0};
	for (size_t i = 0; i < hs_problems_count(&l); i++)
		CHECK(hs_problems_push(&c, hs_problems_at(&l, i)) == HS_OK);
	CHECK(hs_problems_push(&c, hs_problems_at(&l, 1)) == HS_OK);
	CHECK_EQ_INT(hs_problems_count(&c), 4);
	CHECK_EQ_INT(hs_problems_at(&c, 3)->kind, HS_PROBLEM_NAME_UNKNOWN);
	hs_problems_free(&c);
	hs_problems_free(&l);
	CHECK_EQ_INT(hs_problems_count(&l), 0);
	CHECK(l.items == NULL);
	hs_problems_free(&l); /* twice is harmless */
}

static void test_growth_and_limit(void)
{
	hs_problems l = {0};
	for (unsigned i = 0; i < 1000; i++)
		CHECK(hs_problems_add(&l, HS_PROBLEM_DAMAGED, i * 0x1000u, -1, "problem %u", i) == HS_OK);
	CHECK_EQ_INT(hs_problems_count(&l), 1000);
	CHECK(l.cap >= 1000);
	CHECK_EQ_INT(hs_problems_at(&l, 999)->offset, 999 * 0x1000u);
	CHECK_EQ_STR(hs_problems_at(&l, 999)->message, "problem 999");
	CHECK_EQ_STR(hs_problems_at(&l, 0)->message, "problem 0");
	CHECK_EQ_INT(l.dropped, 0);
	hs_problems_free(&l);

	hs_problems lim = {.limit = 2};
	hs_problems_add(&lim, HS_PROBLEM_LOST, UINT64_MAX, -1, "a");
	hs_problems_add(&lim, HS_PROBLEM_LOST, UINT64_MAX, -1, "b");
	hs_problems_add(&lim, HS_PROBLEM_LOST, UINT64_MAX, -1, "a"); /* a duplicate is not a drop */
	hs_problems_add(&lim, HS_PROBLEM_LOST, UINT64_MAX, -1, "c");
	hs_problems_add(&lim, HS_PROBLEM_LOST, UINT64_MAX, -1, "d");
	CHECK_EQ_INT(hs_problems_count(&lim), 2);
	CHECK_EQ_INT(lim.dropped, 2);
	hs_problems_free(&lim);
	CHECK_EQ_INT(lim.limit, 2);
}

static void test_format(void)
{
	hs_problems l = {0};
	hs_problems_add(&l, HS_PROBLEM_DAMAGED, 0x1f048, 0, "%s; rest of buffer %u skipped", "record size 0", 31u);
	hs_problems_add(&l, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1, "%s: not a trace-cmd file", "x.dat");
	hs_problems_add(&l, HS_PROBLEM_DAMAGED, 0, -1, "buffer 0 does not start with the logfile header event");
	char buf[HS_PROBLEM_TEXT_MAX];
	/* What analyze printed before there was one shape: the goldens hold these. */
	CHECK_EQ_STR(hs_problem_format(hs_problems_at(&l, 0), buf, sizeof buf),
		     "at file offset 0x1f048: record size 0; rest of buffer 31 skipped");
	CHECK_EQ_STR(hs_problem_format(hs_problems_at(&l, 1), buf, sizeof buf), "x.dat: not a trace-cmd file");
	CHECK_EQ_STR(hs_problem_format(hs_problems_at(&l, 2), buf, sizeof buf),
		     "at file offset 0x0: buffer 0 does not start with the logfile header event");
	char small[12];
	CHECK_EQ_STR(hs_problem_format(hs_problems_at(&l, 0), small, sizeof small), "at file off");
	/* A message longer than the shape holds is cut, still terminated. */
	char longer[HS_PROBLEM_MESSAGE_MAX * 2];
	memset(longer, 'x', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	hs_problems_add(&l, HS_PROBLEM_DAMAGED, 1, -1, "%s", longer);
	CHECK_EQ_INT(strlen(hs_problems_at(&l, 3)->message), HS_PROBLEM_MESSAGE_MAX - 1);
	CHECK_EQ_INT(strlen(hs_problem_format(hs_problems_at(&l, 3), buf, sizeof buf)),
		     strlen("at file offset 0x1: ") + HS_PROBLEM_MESSAGE_MAX - 1);
	CHECK_EQ_STR(hs_problem_kind_name(HS_PROBLEM_NAME_UNKNOWN), "name unknown");
	CHECK_EQ_STR(hs_problem_kind_name(HS_PROBLEM_LOST), "lost");
	hs_problems_free(&l);
}

int main(void)
{
	test_add_and_dedup();
	test_growth_and_limit();
	test_format();
	return hs_test_done("test_problem");
}
