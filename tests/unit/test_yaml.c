/* test_yaml.c: unit tests for the position-keeping YAML tree (types, positions, rejected features). */
#include "check.h"
#include "hindsight/diag.h"
#include "hindsight/limits.h"
#include "rules/ynode.h"
#include "util/strbuf.h"

static hs_ynode *parse(hs_arena *a, hs_diags *d, const char *text, bool *syntax)
{
	const char *f = hs_diags_add_source(d, "t.yaml", text, strlen(text));
	return hs_yaml_parse(a, f, text, strlen(text), d, syntax);
}

static bool has_code(const hs_diags *d, hs_diag_code c, unsigned line, unsigned col)
{
	for (size_t i = 0; i < hs_diags_count(d); i++) {
		const hs_diag *g = hs_diags_at(d, i);
		if (g->code == c && g->pos.line == line && g->pos.col == col)
			return true;
	}
	return false;
}

static void test_positions_and_types(void)
{
	hs_arena a = {0};
	hs_diags *d = hs_diags_new();
	bool syntax;
	hs_ynode *r = parse(&a, d, "# c\nkey: value\nlist:\n  - 0x10\n  - \"12\"\n  - 1.5\n  - true\n  - ~\n  - 0o17\nq: 'x'\n", &syntax);
	CHECK(r && !syntax && r->type == HS_Y_MAP);
	CHECK_EQ_INT(hs_diags_count(d), 0);
	hs_ynode *v = hs_ymap_get(r, "key");
	CHECK(v && v->pos.line == 2 && v->pos.col == 6);
	hs_ynode *l = hs_ymap_get(r, "list");
	CHECK(l && l->type == HS_Y_SEQ && l->n == 6);
	if (l && l->n == 6) {
		CHECK(hs_ynode_value(l->items[0]) == HS_YV_INT);
		CHECK(l->items[0]->pos.line == 4 && l->items[0]->pos.col == 5);
		CHECK(hs_ynode_value(l->items[1]) == HS_YV_STR); /* quoted numbers are strings */
		CHECK(hs_ynode_value(l->items[2]) == HS_YV_FLOAT);
		CHECK(hs_ynode_value(l->items[3]) == HS_YV_BOOL);
		CHECK(hs_ynode_value(l->items[4]) == HS_YV_NULL);
		CHECK(hs_ynode_value(l->items[5]) == HS_YV_INT);
	}
	CHECK(hs_ynode_value(hs_ymap_get(r, "q")) == HS_YV_STR);
	CHECK_EQ_STR(hs_ynode_type_name(l), "a list");
	hs_diags_free(d);
	hs_arena_free(&a);
}

static void test_rejections(void)
{
	hs_arena a = {0};
	hs_diags *d = hs_diags_new();
	bool syntax;
	parse(&a, d, "a: &x 1\nb: *x\nc: !!str 3\na: 2\n10: n\n", &syntax);
	CHECK(!syntax);
	CHECK(has_code(d, HS_D_YAML_FEATURE, 1, 4)); /* anchor */
	CHECK(has_code(d, HS_D_YAML_FEATURE, 2, 4)); /* alias */
	CHECK(has_code(d, HS_D_YAML_FEATURE, 3, 4)); /* tag */
	CHECK(has_code(d, HS_D_DUP_KEY, 4, 1));
	CHECK(has_code(d, HS_D_TYPE, 5, 1)); /* integer key */
	hs_diags_free(d);

	d = hs_diags_new();
	hs_ynode *r = parse(&a, d, "a: [1, 2\nb: 3\n", &syntax);
	CHECK(syntax && r == NULL);
	CHECK_EQ_INT(hs_diags_count(d), 1);
	CHECK(hs_diags_at(d, 0)->code == HS_D_YAML_SYNTAX && hs_diags_at(d, 0)->pos.line >= 2);
	hs_diags_free(d);

	d = hs_diags_new();
	parse(&a, d, "a: 1\n---\nb: 2\n", &syntax);
	CHECK(has_code(d, HS_D_YAML_FEATURE, 2, 1));
	hs_diags_free(d);

	/* Nesting past the limit is reported, not a stack overflow. */
	d = hs_diags_new();
	hs_strbuf deep = {0};
	for (int i = 0; i < HS_MAX_YAML_DEPTH + 5; i++)
		hs_sb_putc(&deep, '[');
	for (int i = 0; i < HS_MAX_YAML_DEPTH + 5; i++)
		hs_sb_putc(&deep, ']');
	r = parse(&a, d, hs_sb_cstr(&deep), &syntax);
	CHECK(r == NULL && syntax);
	CHECK(hs_diags_count(d) == 1 && hs_diags_at(d, 0)->code == HS_D_DEPTH);
	hs_sb_free(&deep);
	hs_diags_free(d);
	hs_arena_free(&a);
}

int main(void)
{
	test_positions_and_types();
	test_rejections();
	return hs_test_done("test_yaml");
}
