/* test_launch_args.c: hs_launch_split_args against shell word splitting (quotes, escapes, empty words, errors). */
#include <stdio.h>
#include <string.h>

#include "hindsight/launch.h"

static int failures;

static void check(const char *in, hs_status want_st, const char *const *want)
{
	char **v = NULL;
	size_t n = 0;
	hs_status st = hs_launch_split_args(in, &v, &n);
	if (st != want_st) {
		printf("FAIL [%s]: status %d, want %d\n", in, st, want_st);
		failures++;
		goto done;
	}
	for (size_t i = 0; want && (want[i] || v[i]); i++) {
		if (!want[i] || !v[i] || strcmp(want[i], v[i]) != 0) {
			printf("FAIL [%s]: word %zu is [%s], want [%s]\n", in, i, v[i] ? v[i] : "(end)",
			       want[i] ? want[i] : "(end)");
			failures++;
			goto done;
		}
	}
done:
	hs_launch_free_args(v);
}

int main(void)
{
	check("", HS_OK, (const char *const[]){NULL});
	check("  a  b\tc ", HS_OK, (const char *const[]){"a", "b", "c", NULL});
	check("'a b' \"c d\"", HS_OK, (const char *const[]){"a b", "c d", NULL});
	check("x'y'\"z\"", HS_OK, (const char *const[]){"xyz", NULL});
	check("'' \"\"", HS_OK, (const char *const[]){"", "", NULL});
	check("\"a \\\"q\\\" \\\\ \\n\"", HS_OK, (const char *const[]){"a \"q\" \\ \\n", NULL});
	check("a\\ b 'c\\d'", HS_OK, (const char *const[]){"a b", "c\\d", NULL});
	check("--flag=\"v w\"", HS_OK, (const char *const[]){"--flag=v w", NULL});
	check("'open", HS_EINVAL, NULL);
	check("\"open", HS_EINVAL, NULL);
	check("trail\\", HS_EINVAL, NULL);
	if (failures == 0)
		printf("launch args: ok\n");
	return failures ? 1 : 0;
}
