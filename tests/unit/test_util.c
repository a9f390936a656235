/* test_util.c: unit tests for util/ (strings, JSON, edit distance, paths, UTF-8) and GUIDs. */
#include <stdlib.h>

#include "check.h"
#include "hindsight/msg.h"
#include "hindsight/rules.h"
#include "util/arena.h"
#include "util/json.h"
#include "util/regex.h"
#include "util/strbuf.h"
#include "util/text.h"

static void test_strbuf(void)
{
	hs_strbuf sb = {0};
	CHECK_EQ_STR(hs_sb_cstr(&sb), "");
	hs_sb_append(&sb, "a");
	hs_sb_printf(&sb, "%d-%s", 42, "x");
	for (int i = 0; i < 1000; i++)
		hs_sb_putc(&sb, 'z');
	CHECK_EQ_INT(sb.len, 1005);
	CHECK(strncmp(hs_sb_cstr(&sb), "a42-xzz", 7) == 0);
	char *taken = hs_sb_take(&sb);
	CHECK(taken && strlen(taken) == 1005);
	CHECK(sb.buf == NULL && sb.len == 0);
	free(taken);
}

static void test_json(void)
{
	hs_strbuf sb = {0};
	hs_json j;
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "s", "q\"b\\n\n\t\x01");
	hs_json_key(&j, "a");
	hs_json_arr_begin(&j);
	hs_json_int(&j, -1);
	hs_json_uint(&j, 18446744073709551615ull);
	hs_json_bool(&j, true);
	hs_json_null(&j);
	hs_json_arr_end(&j);
	hs_json_key(&j, "e");
	hs_json_obj_begin(&j);
	hs_json_obj_end(&j);
	hs_json_obj_end(&j);
	CHECK_EQ_STR(hs_sb_cstr(&sb), "{\n  \"s\": \"q\\\"b\\\\n\\n\\t\\u0001\",\n  \"a\": [\n    -1,\n    18446744073709551615,\n"
				   "    true,\n    null\n  ],\n  \"e\": {}\n}\n");
	hs_sb_free(&sb);
}

static void test_text(void)
{
	CHECK_EQ_INT(hs_edit_distance("kitten", "sitting", 10), 3);
	CHECK_EQ_INT(hs_edit_distance("same", "same", 10), 0);
	CHECK(hs_edit_distance("abcdefgh", "zzzzzzzz", 2) > 2);
	const char *const keys[] = {"buffer_size_kb", "min_buffers", "max_buffers", NULL};
	CHECK_EQ_STR(hs_closest("bufer_size_kb", keys), "buffer_size_kb");
	CHECK_EQ_STR(hs_closest("max_bufers", keys), "max_buffers");
	CHECK(hs_closest("completely_else", keys) == NULL);
	char *p = hs_path_sibling("rules/stutter.yaml", "providers/linux.yaml");
	CHECK_EQ_STR(p, "rules/providers/linux.yaml");
	free(p);
	p = hs_path_sibling("stutter.yaml", "x.yaml");
	CHECK_EQ_STR(p, "x.yaml");
	free(p);
	p = hs_path_sibling("a/b.yaml", "/abs/c.yaml");
	CHECK_EQ_STR(p, "/abs/c.yaml");
	free(p);
	CHECK_EQ_INT(hs_utf8_len("abc"), 3);
	CHECK_EQ_INT(hs_utf8_len("h\xc3\xa9llo \xe2\x82\xac"), 7);
}

static void test_utf16(void)
{
	/* "aé€" U+1F600 then NUL then junk: 1, 2, 3 and 4 UTF-8 bytes. */
	static const uint8_t s[] = {'a', 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE, 0, 0, 'x', 0};
	char out[32];
	bool cut = true, nul = false;
	CHECK_EQ_INT(hs_utf16le_to_utf8(s, 7, out, sizeof out, &cut, &nul), 6);
	CHECK_EQ_STR(out, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
	CHECK(!cut && nul);
	/* Cut at a character boundary: 7 bytes of room hold "aé€" (6), not the emoji. */
	CHECK_EQ_INT(hs_utf16le_to_utf8(s, 7, out, 8, &cut, &nul), 6);
	CHECK_EQ_STR(out, "a\xC3\xA9\xE2\x82\xAC");
	CHECK(cut && nul);
	/* No NUL within the units; a lone high surrogate at the end becomes U+FFFD. */
	CHECK_EQ_INT(hs_utf16le_to_utf8(s, 4, out, sizeof out, &cut, &nul), 4);
	CHECK_EQ_STR(out, "a\xC3\xA9\xE2\x82\xAC\xEF\xBF\xBD");
	CHECK(!nul);
	/* A lone low surrogate too. */
	static const uint8_t lone[] = {0x00, 0xDE, 'b', 0};
	CHECK_EQ_INT(hs_utf16le_to_utf8(lone, 2, out, sizeof out, NULL, NULL), 2);
	CHECK_EQ_STR(out, "\xEF\xBF\xBD" "b");
}

static void test_guid(void)
{
	hs_guid g;
	CHECK(hs_guid_parse("22FB2CD6-0E7B-422B-A0C7-2FAD1FD0E716", &g));
	CHECK_EQ_INT(g.data1, 0x22FB2CD6u);
	CHECK_EQ_INT(g.data2, 0x0E7B);
	CHECK_EQ_INT(g.data3, 0x422B);
	/* Data4 keeps text order: reversing it is the classic "provider not found" bug. */
	CHECK_EQ_INT(g.data4[0], 0xA0);
	CHECK_EQ_INT(g.data4[1], 0xC7);
	CHECK_EQ_INT(g.data4[7], 0x16);
	char buf[37];
	hs_guid_format(&g, buf);
	CHECK_EQ_STR(buf, "22FB2CD6-0E7B-422B-A0C7-2FAD1FD0E716");
	CHECK(hs_guid_parse("{cdead503-17f5-4a3e-b7ae-df8cc2902eb9}", &g));
	hs_guid_format(&g, buf);
	CHECK_EQ_STR(buf, "CDEAD503-17F5-4A3E-B7AE-DF8CC2902EB9");
	CHECK(!hs_guid_parse("CDEAD503-17F5-4A3E-B7AE-DF8CC2902EB", &g));
	CHECK(!hs_guid_parse("CDEAD50317F5-4A3E-B7AE-DF8CC2902EB9X", &g));
	CHECK(!hs_guid_parse("GDEAD503-17F5-4A3E-B7AE-DF8CC2902EB9", &g));
	CHECK(!hs_guid_parse("{CDEAD503-17F5-4A3E-B7AE-DF8CC2902EB9", &g));
}

static void test_arena(void)
{
	hs_arena a = {0};
	size_t cap = 0;
	int *v = NULL;
	for (int i = 0; i < 1000; i++) {
		v = hs_arena_grow(&a, v, sizeof(int), (size_t)i, &cap);
		CHECK(v != NULL);
		if (!v)
			break;
		v[i] = i;
	}
	CHECK(v && v[999] == 999 && v[0] == 0);
	char *big = hs_arena_alloc(&a, 1 << 20);
	CHECK(big && big[12345] == 0);
	CHECK_EQ_STR(hs_arena_strndup(&a, "abcdef", 3), "abc");
	hs_arena_free(&a);
}

static void test_regex(void)
{
	hs_regex *re = NULL;
	CHECK(hs_regex_compile("USB|BTH|HIDCLASS|Audio", &re, NULL, 0, NULL) == HS_OK);
	CHECK(hs_regex_match(re, "Microsoft-Windows-USB-USBHUB3"));
	CHECK(hs_regex_match(re, "Microsoft-Windows-Audio"));
	CHECK(!hs_regex_match(re, "Microsoft-Windows-Kernel-Power"));
	hs_regex_free(re);
	char err[128] = "";
	size_t off = 99;
	CHECK(hs_regex_compile("ab(c", &re, err, sizeof err, &off) == HS_EINVAL);
	CHECK_EQ_INT(off, 4);
	CHECK_CONTAINS(err, "missing closing parenthesis");
	hs_regex_free(NULL);
}

/* DEBUG reaches a sink only through an hs_msg that asks for it; the other levels always do. */
typedef struct {
	int n;
	hs_msg_level last;
} msg_count;

static void count_msg(void *ctx, hs_msg_level level, const char *source, const char *text)
{
	(void)source;
	(void)text;
	msg_count *c = ctx;
	c->n++;
	c->last = level;
}

static void test_msg(void)
{
	msg_count c = {0};
	hs_msg quiet = {.fn = count_msg, .ctx = &c}, verbose = {.fn = count_msg, .ctx = &c, .debug = true};
	hs_msg_say(&quiet, HS_MSG_DEBUG, "t", "dropped %d", 1);
	CHECK_EQ_INT(c.n, 0);
	hs_msg_say(&quiet, HS_MSG_INFO, "t", "kept");
	CHECK_EQ_INT(c.n, 1);
	hs_msg_say(&verbose, HS_MSG_DEBUG, "t", "kept %d", 2);
	CHECK_EQ_INT(c.n, 2);
	CHECK_EQ_INT(c.last, HS_MSG_DEBUG);
	hs_msg_say(NULL, HS_MSG_DEBUG, "t", "not on stderr without a sink that asks");
}

/* hs_path_up walks a cgroup path to "/" and stops there. */
static void test_path_up(void)
{
	char p[32] = "/a/bc/d";
	CHECK(hs_path_up(p));
	CHECK_EQ_STR(p, "/a/bc");
	CHECK(hs_path_up(p));
	CHECK_EQ_STR(p, "/a");
	CHECK(hs_path_up(p));
	CHECK_EQ_STR(p, "/");
	CHECK(!hs_path_up(p));
	CHECK_EQ_STR(p, "/");
	char rel[8] = "name";
	CHECK(!hs_path_up(rel));
	CHECK_EQ_STR(rel, "name");
}

int main(void)
{
	test_strbuf();
	test_json();
	test_text();
	test_utf16();
	test_guid();
	test_arena();
	test_regex();
	test_msg();
	test_path_up();
	return hs_test_done("test_util");
}
