/* ctl-json-test.c: unit:ctl: the control channel's JSON reader (strict, depth-bounded) and its socket and snapshot names. */
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "hindsight/limits.h"
#include "run/ctl.h"
#include "run/ctl_json.h"

static hs_ctl_val *parse(const char *s)
{
	char why[128];
	return hs_ctl_val_parse(s, strlen(s), why, sizeof why);
}

static bool rejects(const char *s)
{
	hs_ctl_val *v = parse(s);
	hs_ctl_val_free(v);
	return v == NULL;
}

int main(void)
{
	/* A request, and a reply with nesting, escapes and numbers as written. */
	hs_ctl_val *v = parse(" {\"id\": 7, \"cmd\": \"snapshot\", \"name\": \"a\\u00e9\\ud83d\\ude00\\n\"}\r\n");
	CHECK(v && v->type == HS_CTL_OBJ);
	CHECK_EQ_STR(hs_ctl_val_str(v, "cmd"), "snapshot");
	CHECK_EQ_STR(hs_ctl_val_str(v, "name"), "a\xc3\xa9\xf0\x9f\x98\x80\n");
	CHECK(hs_ctl_val_get(v, "id") && hs_ctl_val_get(v, "id")->type == HS_CTL_NUM);
	CHECK_EQ_STR(hs_ctl_val_get(v, "id")->str, "7");
	CHECK(hs_ctl_val_str(v, "id") == NULL && hs_ctl_val_get(v, "nope") == NULL);
	hs_ctl_val_free(v);
	v = parse("{\"ok\":true,\"status\":{\"sessions\":[{\"name\":\"snap\",\"ring_fill\":0.25,\"history_s\":null}],"
		  "\"n\":18446744073709551615,\"e\":-1.5e3,\"f\":false}}");
	const hs_ctl_val *st = hs_ctl_val_get(v, "status"), *ses = hs_ctl_val_get(st, "sessions");
	CHECK(ses && ses->type == HS_CTL_ARR && ses->child && !ses->child->next);
	CHECK_EQ_STR(hs_ctl_val_str(ses->child, "name"), "snap");
	CHECK(hs_ctl_val_get(ses->child, "ring_fill")->num == 0.25);
	CHECK(hs_ctl_val_get(ses->child, "history_s")->type == HS_CTL_NULL);
	CHECK_EQ_STR(hs_ctl_val_get(st, "n")->str, "18446744073709551615"); /* kept exact for printing */
	CHECK(hs_ctl_val_get(st, "e")->num == -1500.0);
	CHECK(hs_ctl_val_get(st, "f")->type == HS_CTL_BOOL && !hs_ctl_val_get(st, "f")->b);
	CHECK(hs_ctl_val_get(v, "ok")->b);
	hs_ctl_val_free(v);
	v = parse("[]");
	CHECK(v && v->type == HS_CTL_ARR && !v->child);
	hs_ctl_val_free(v);
	v = parse("\"\"");
	CHECK(v && v->type == HS_CTL_STR && !strcmp(v->str, ""));
	hs_ctl_val_free(v);

	/* What a hostile or broken line may be: each is refused, never read past its end. */
	const char *bad[] = {"", " ", "{", "}", "{\"a\":}", "{\"a\" 1}", "{a:1}", "{\"a\":1,}", "[1,]", "[1 2]", "01",
			     "1.", "-", "1e", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
			     "\"\\ud800\\u0041\"", "\"\\u0000\"", "\"a\tb\"", "{} {}", "1 2", "{\"a\":1}x", "'a'"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (!rejects(bad[i])) {
			fprintf(stderr, "accepted: %s\n", bad[i]);
			CHECK(!"a bad line was accepted");
		}
	/* Depth: HS_CTL_JSON_MAX_DEPTH nested arrays are read, one more is refused. */
	char deep[2 * (HS_CTL_JSON_MAX_DEPTH + 2) + 1];
	for (int d = HS_CTL_JSON_MAX_DEPTH + 1; d <= HS_CTL_JSON_MAX_DEPTH + 2; d++) {
		memset(deep, '[', (size_t)d);
		memset(deep + d, ']', (size_t)d);
		deep[2 * d] = 0;
		v = parse(deep);
		CHECK((v != NULL) == (d == HS_CTL_JSON_MAX_DEPTH + 1));
		hs_ctl_val_free(v);
	}
	/* The length given is the end, NUL or not. */
	v = hs_ctl_val_parse("{\"a\":1}garbage", 7, NULL, 0);
	CHECK(v && hs_ctl_val_get(v, "a"));
	hs_ctl_val_free(v);

	/* Snapshot names become one folder name. */
	char out[HS_CTL_MAX_NAME_CHARS + 1], longname[HS_CTL_MAX_NAME_CHARS + 2];
	CHECK(hs_ctl_name_clean("before-update_2.1", out) && !strcmp(out, "before-update_2.1"));
	CHECK(hs_ctl_name_clean("../evil name", out) && !strcmp(out, "_._evil_name"));
	CHECK(hs_ctl_name_clean(".hidden", out) && !strcmp(out, "_hidden"));
	CHECK(hs_ctl_name_clean("a/b\\c\xc3\xa9", out) && !strcmp(out, "a_b_c__"));
	CHECK(!hs_ctl_name_clean("", out));
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK(!hs_ctl_name_clean(longname, out));
	longname[HS_CTL_MAX_NAME_CHARS] = 0;
	CHECK(hs_ctl_name_clean(longname, out) && strlen(out) == HS_CTL_MAX_NAME_CHARS);

	/* The socket: one per profile in the run root. */
	char *p = hs_ctl_socket_path("logs/runs", "stutter");
	CHECK_EQ_STR(p, "logs/runs/.ctl-stutter.sock");
	free(p);
	p = hs_ctl_socket_path("/r", "my profile/2");
	CHECK_EQ_STR(p, "/r/.ctl-my_profile_2.sock");
	free(p);

	printf("unit:ctl: %d checks, %d failed\n", hs_test_checks, hs_test_failures);
	return hs_test_failures ? 1 : 0;
}
