/* testkit.h: what several test programs need beside check.h: a profile loaded, its plan, a stream read whole, a golden file compared. */
#ifndef HS_TEST_TESTKIT_H
#define HS_TEST_TESTKIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hindsight/diag.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"

/* rules_dir/profile loaded, or NULL (said on stderr). The caller frees it with hs_rules_free. */
static inline hs_ruleset *hs_test_load(const char *rules_dir, const char *profile)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", rules_dir, profile);
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_status st = hs_rules_load(path, d, &rs);
	if (st != HS_OK)
		fprintf(stderr, "cannot load %s: %s\n", path, hs_strerror(st));
	hs_diags_free(d);
	return st == HS_OK ? rs : NULL;
}

/* rs's plan for a platform and a CPU count, or NULL (also for a NULL rs). The caller frees it with hs_plan_free. */
static inline hs_plan *hs_test_plan(const hs_ruleset *rs, hs_platform platform, unsigned cpus)
{
	hs_plan_opts o = {.cpus = cpus};
	hs_plan *plan = NULL;
	return rs && hs_plan_build(rs, platform, &o, &plan) == HS_OK ? plan : NULL;
}

/* What f holds up to its current position, from its start, as a string the caller frees; "" when it cannot be
 * read. */
static inline char *hs_test_slurp(FILE *f)
{
	fflush(f);
	long n = ftell(f);
	char *s = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	rewind(f);
	if (s && n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = 0;
	return s;
}

/* got equals golden_dir/<name>.calls (one check); HS_UPDATE_GOLDEN=1 rewrites the file instead. A mismatch
 * leaves <name>.calls.actual in the current folder and shows the difference (diff -u where there is one). */
static inline void hs_test_golden(const char *golden_dir, const char *name, const char *got)
{
	char path[4096], apath[4200];
	snprintf(path, sizeof path, "%s/%s.calls", golden_dir, name);
	snprintf(apath, sizeof apath, "%s.calls.actual", name);
	const char *upd = getenv("HS_UPDATE_GOLDEN");
	if (upd && !strcmp(upd, "1")) {
		FILE *f = fopen(path, "wb");
		CHECK(f != NULL);
		if (f) {
			fputs(got, f);
			fclose(f);
		}
		printf("updated %s\n", path);
		return;
	}
	FILE *f = fopen(path, "rb");
	char *want = NULL;
	if (f) {
		fseek(f, 0, SEEK_END);
		want = hs_test_slurp(f);
		fclose(f);
	}
	hs_test_checks++;
	if (want && !strcmp(want, got)) {
		free(want);
		return;
	}
	hs_test_failures++;
	FILE *a = fopen(apath, "wb");
	if (a) {
		fputs(got, a);
		fclose(a);
	}
	fprintf(stderr, "call sequence %s differs from %s%s (rerun with HS_UPDATE_GOLDEN=1 to accept):\n", name, path,
		want ? "" : ", which cannot be read");
#ifdef _WIN32
	fprintf(stderr, "%s\n", got);
#else
	char cmd[9000];
	snprintf(cmd, sizeof cmd, "diff -u '%s' '%s' >&2", want ? path : "/dev/null", apath);
	if (system(cmd) == -1)
		fprintf(stderr, "%s\n", got);
#endif
	free(want);
}

#endif
