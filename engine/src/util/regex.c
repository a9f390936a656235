/* util/regex.c: PCRE2 wrapper (compile once, JIT when available, bounded matching). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "util/regex.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hs_regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
};

/* Patterns select providers and, later, match event payloads while tracing:
 * bound the work a pathological pattern can cost per match. */
enum { MATCH_LIMIT = 100000, DEPTH_LIMIT = 1000 };

hs_status hs_regex_compile(const char *pattern, hs_regex **out, char *err, size_t errlen, size_t *erroff)
{
	*out = NULL;
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF,
				       &code, &off, NULL);
	if (!re) {
		if (err && errlen) {
			if (pcre2_get_error_message(code, (PCRE2_UCHAR *)err, errlen) < 0)
				snprintf(err, errlen, "PCRE2 error %d", code);
		}
		if (erroff)
			*erroff = off;
		return HS_EINVAL;
	}
	/* JIT is an optimisation only; interpretation gives the same answers. */
	(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	hs_regex *r = calloc(1, sizeof(*r));
	pcre2_match_context *mctx = pcre2_match_context_create(NULL);
	if (!r || !mctx) {
		free(r);
		pcre2_match_context_free(mctx);
		pcre2_code_free(re);
		return HS_ENOMEM;
	}
	pcre2_set_match_limit(mctx, MATCH_LIMIT);
	pcre2_set_depth_limit(mctx, DEPTH_LIMIT);
	r->code = re;
	r->mctx = mctx;
	*out = r;
	return HS_OK;
}

bool hs_regex_match(const hs_regex *re, const char *subject)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re->code, NULL);
	if (!md)
		return false;
	int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, strlen(subject), 0, 0, md, re->mctx);
	pcre2_match_data_free(md);
	return rc >= 0;
}

void hs_regex_free(hs_regex *re)
{
	if (!re)
		return;
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	free(re);
}
