/* util/regex.c: PCRE2 wrapper (compile once, JIT when available, bounded matching). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "util/regex.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"

struct hs_regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
	bool jitted;
};

hs_status hs_regex_compile_opts(const char *pattern, const hs_regex_opts *opts, hs_regex **out, char *err,
				size_t errlen, size_t *erroff)
{
	*out = NULL;
	bool want_jit = opts ? opts->jit : true;
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
	bool jitted = false;
	uint32_t have_jit = 0;
	if (want_jit && pcre2_config(PCRE2_CONFIG_JIT, &have_jit) >= 0 && have_jit)
		jitted = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
	hs_regex *r = calloc(1, sizeof(*r));
	pcre2_match_context *mctx = pcre2_match_context_create(NULL);
	if (!r || !mctx) {
		free(r);
		pcre2_match_context_free(mctx);
		pcre2_code_free(re);
		return HS_ENOMEM;
	}
	pcre2_set_match_limit(mctx, HS_REGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(mctx, HS_REGEX_DEPTH_LIMIT);
	pcre2_set_heap_limit(mctx, HS_REGEX_HEAP_LIMIT_KB);
	r->code = re;
	r->mctx = mctx;
	r->jitted = jitted;
	*out = r;
	return HS_OK;
}

hs_status hs_regex_compile(const char *pattern, hs_regex **out, char *err, size_t errlen, size_t *erroff)
{
	return hs_regex_compile_opts(pattern, NULL, out, err, errlen, erroff);
}

hs_regex_result hs_regex_match_limited(const hs_regex *re, const char *subject, size_t len)
{
	/* One ovector pair: callers only ask whether it matches. */
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	if (!md)
		return HS_REGEX_ERROR;
	int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0, 0, md, re->mctx);
	pcre2_match_data_free(md);
	if (rc >= 0)
		return HS_REGEX_MATCH;
	switch (rc) {
	case PCRE2_ERROR_NOMATCH:
	case PCRE2_ERROR_PARTIAL:
		return HS_REGEX_NOMATCH;
	case PCRE2_ERROR_MATCHLIMIT:
	case PCRE2_ERROR_DEPTHLIMIT:
	case PCRE2_ERROR_HEAPLIMIT:
	case PCRE2_ERROR_JIT_STACKLIMIT:
		return HS_REGEX_LIMIT;
	default:
		return HS_REGEX_ERROR;
	}
}

bool hs_regex_match(const hs_regex *re, const char *subject)
{
	return hs_regex_match_limited(re, subject, strlen(subject)) == HS_REGEX_MATCH;
}

bool hs_regex_jitted(const hs_regex *re) { return re->jitted; }

void hs_regex_free(hs_regex *re)
{
	if (!re)
		return;
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	free(re);
}
