/* test_diag.c: unit tests for the diagnostic list and its four renderers. */
#include <stdlib.h>

#include "check.h"
#include "hindsight/diag.h"
#include "util/compat.h"

/* Renders d in fmt into a new string (caller frees). */
#ifndef _WIN32
static char *render(const hs_diags *d, hs_diag_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	CHECK(hs_diags_render(d, f, fmt) == HS_OK);
	fclose(f);
	return buf;
}
#else
/* No open_memstream: a binary temporary file, read back. */
static char *render(const hs_diags *d, hs_diag_format fmt)
{
	const char *t = getenv("TEMP");
	char path[512];
	snprintf(path, sizeof path, "%s\\hs-test-diag-%lu.txt", t ? t : ".", hs_getpid());
	FILE *f = fopen(path, "w+b");
	if (!f)
		return NULL;
	CHECK(hs_diags_render(d, f, fmt) == HS_OK);
	long len = ftell(f);
	char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
	rewind(f);
	if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
		buf[len] = '\0';
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	remove(path);
	return buf;
}
#endif

static hs_diags *sample(void)
{
	hs_diags *d = hs_diags_new();
	const char *text = "a: 1\n  bufer_size_kb: 256\n\tx: y\n";
	const char *f = hs_diags_add_source(d, "r.yaml", text, strlen(text));
	hs_diag_add(d, HS_D_UNKNOWN_KEY, (hs_pos){f, 2, 3}, "did you mean 'buffer_size_kb'?",
		    "unknown key '%s' in a session", "bufer_size_kb");
	hs_diag_add(d, HS_D_CHANNEL_BITS, (hs_pos){f, 1, 1}, NULL, "mask %s", "0x8000000000000000");
	hs_diag_add(d, HS_D_TYPE, (hs_pos){f, 3, 2}, NULL, "tab, comma: and %% percent");
	return d;
}

static void test_list(void)
{
	hs_diags *d = sample();
	CHECK_EQ_INT(hs_diags_count(d), 3);
	CHECK_EQ_INT(hs_diags_errors(d), 2);
	CHECK_EQ_INT(hs_diags_warnings(d), 1);
	/* The same diagnostic again is kept once. */
	const char *f = hs_diags_intern(d, "r.yaml");
	hs_diag_add(d, HS_D_CHANNEL_BITS, (hs_pos){f, 1, 1}, NULL, "mask %s", "0x8000000000000000");
	CHECK_EQ_INT(hs_diags_count(d), 3);
	hs_diags_sort(d);
	CHECK_EQ_INT(hs_diags_at(d, 0)->pos.line, 1);
	CHECK_EQ_INT(hs_diags_at(d, 2)->pos.line, 3);
	CHECK_EQ_STR(hs_diag_code_str(HS_D_UNKNOWN_KEY), "HS004");
	CHECK(hs_diag_code_class(HS_D_UNKNOWN_KEY) == HS_CLASS_STRUCTURAL);
	CHECK(hs_diag_code_class(HS_D_TOO_MANY_IDS) == HS_CLASS_SEMANTIC);
	/* Every code is unique and has a slug and an explanation. */
	for (int i = 0; i < HS_D__COUNT; i++) {
		CHECK(strlen(hs_diag_code_slug((hs_diag_code)i)) > 0);
		CHECK(strlen(hs_diag_code_text((hs_diag_code)i)) > 10);
		for (int k = 0; k < i; k++)
			CHECK(strcmp(hs_diag_code_str((hs_diag_code)i), hs_diag_code_str((hs_diag_code)k)) != 0);
	}
	hs_diags *m = hs_diags_new();
	hs_diags_merge(m, d);
	hs_diags_merge(m, d);
	CHECK_EQ_INT(hs_diags_count(m), 3);
	hs_diags_free(m);
	hs_diags_free(d);
}

static void test_render(void)
{
	hs_diags *d = sample();
	hs_diags_sort(d);
	char *t = render(d, HS_FMT_TEXT);
	CHECK_CONTAINS(t, "r.yaml:2:3: error[HS004]: unknown key 'bufer_size_kb' in a session\n"
			  "    2 |   bufer_size_kb: 256\n"
			  "      |   ^\n"
			  "      = hint: did you mean 'buffer_size_kb'?\n");
	CHECK_CONTAINS(t, "r.yaml:1:1: warning[HS109]: mask 0x8000000000000000\n");
	/* A tab before the caret column stays a tab so the caret lines up. */
	CHECK_CONTAINS(t, "    3 | \tx: y\n      | \t^\n");
	free(t);
	char *j = render(d, HS_FMT_JSON);
	CHECK_CONTAINS(j, "\"errors\": 2");
	CHECK_CONTAINS(j, "\"code\": \"HS004\"");
	CHECK_CONTAINS(j, "\"class\": \"structural\"");
	CHECK_CONTAINS(j, "\"hint\": \"did you mean 'buffer_size_kb'?\"");
	free(j);
	char *s = render(d, HS_FMT_SARIF);
	CHECK_CONTAINS(s, "\"version\": \"2.1.0\"");
	CHECK_CONTAINS(s, "\"ruleId\": \"HS004\"");
	CHECK_CONTAINS(s, "\"startLine\": 2");
	CHECK_CONTAINS(s, "\"startColumn\": 3");
	free(s);
	char *g = render(d, HS_FMT_GITHUB);
	CHECK_CONTAINS(g, "::error file=r.yaml,line=2,col=3,title=HS004 unknown-key::unknown key 'bufer_size_kb' in a session (hint: did you mean 'buffer_size_kb'?)\n");
	CHECK_CONTAINS(g, "::error file=r.yaml,line=3,col=2,title=HS006 wrong-type::tab, comma: and %25 percent\n");
	free(g);
	hs_diag_format f;
	CHECK(hs_diag_format_parse("sarif", &f) == HS_OK && f == HS_FMT_SARIF);
	CHECK(hs_diag_format_parse("xml", &f) == HS_EINVAL);
	hs_diags_free(d);
}

int main(void)
{
	test_list();
	test_render();
	return hs_test_done("test_diag");
}
