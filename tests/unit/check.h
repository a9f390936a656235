/* check.h: tiny assertion macros for the unit tests; a failure prints file:line and the expression. */
#ifndef HS_TEST_CHECK_H
#define HS_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int hs_test_failures;
static int hs_test_checks;

#define CHECK(expr)                                                                    \
	do {                                                                           \
		hs_test_checks++;                                                      \
		if (!(expr)) {                                                         \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #expr); \
			hs_test_failures++;                                            \
		}                                                                      \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                       \
	do {                                                                                     \
		long long a_ = (long long)(a), b_ = (long long)(b);                              \
		hs_test_checks++;                                                                \
		if (a_ != b_) {                                                                  \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, a_, b_); \
			hs_test_failures++;                                                      \
		}                                                                                \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                                       \
	do {                                                                                     \
		const char *a_ = (a), *b_ = (b);                                                 \
		hs_test_checks++;                                                                \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                         \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b, \
				a_ ? a_ : "(null)", b_ ? b_ : "(null)");                         \
			hs_test_failures++;                                                      \
		}                                                                                \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                                              \
	do {                                                                                     \
		const char *h_ = (hay), *n_ = (needle);                                          \
		hs_test_checks++;                                                                \
		if (!h_ || !strstr(h_, n_)) {                                                    \
			fprintf(stderr, "%s:%d: \"%s\" not found in:\n%s\n", __FILE__, __LINE__, n_, h_ ? h_ : "(null)"); \
			hs_test_failures++;                                                      \
		}                                                                                \
	} while (0)

/* Ends main: prints the plain "N passed, N failed" line and returns the status. */
static inline int hs_test_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, hs_test_checks - hs_test_failures, hs_test_failures);
	return hs_test_failures ? 1 : 0;
}

#endif
