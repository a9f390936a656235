/* test_rules.c: unit tests for loading and checking rules (structure, semantics, includes, selection). */
#include "check.h"
#include "fixture.h"
#include "hindsight/limits.h"
#include "rules/rules_int.h"
#include "util/strbuf.h"

static const char *const profile_head =
	"schema_version: 1\n"
	"kind: profile\n"
	"name: t\n"
	"include: [win.yaml, linux.yaml]\n"
	"platforms:\n"
	"  windows:\n"
	"    sessions:\n";

static void load_profile(const char *sessions, hs_diags **d, hs_ruleset **rs, hs_status *st)
{
	hs_strbuf sb = {0};
	hs_sb_append(&sb, profile_head);
	hs_sb_append(&sb, sessions);
	fixture_write("p.yaml", hs_sb_cstr(&sb));
	hs_sb_free(&sb);
	*st = fixture_load("p.yaml", d, rs);
}

static void test_valid_profile_and_selection(void)
{
	hs_diags *d;
	hs_ruleset *rs;
	hs_status st;
	load_profile("      - name: ring\n"
		     "        logger_name: TestRing\n"
		     "        mode: buffering\n"
		     "        clock: qpc\n"
		     "        buffer_size_kb: 64\n"
		     "        ring_mb: 16\n"
		     "        output: snap.etl\n"
		     "        providers:\n"
		     "          - { match: \"^Test-(Alpha|USB)\", level: information, keywords: all }\n",
		     &d, &rs, &st);
	CHECK(st == HS_OK);
	CHECK_EQ_INT(hs_diags_count(d), 0);
	if (hs_diags_count(d))
		hs_diags_render(d, stderr, HS_FMT_TEXT);
	CHECK(rs && rs->is_profile && rs->n_files == 3 && rs->n_providers == 4);
	const hs_selection *sel = hs_rules_selection(rs, HS_PLATFORM_WINDOWS, 0, 0);
	CHECK(sel && sel->n == 2);
	CHECK(sel && sel->n == 2 && strcmp(sel->providers[1]->name, "Test-USB-Beta") == 0);
	hs_rules_free(rs);
	hs_diags_free(d);
}

static void test_semantic_findings(void)
{
	hs_diags *d;
	hs_ruleset *rs;
	hs_status st;
	/* 65 ids, an unknown keyword, a keyword that hides a whitelisted event,
	 * a provider of the other platform and an unknown id. */
	hs_strbuf sb = {0};
	hs_sb_append(&sb, "      - name: keys\n"
		       "        logger_name: TestKeys\n"
		       "        mode: file-circular\n"
		       "        clock: qpc\n"
		       "        buffer_size_kb: 64\n"
		       "        min_buffers: 4\n"
		       "        max_buffers: 8\n"
		       "        max_file_mb: 10\n"
		       "        output: keys.etl\n"
		       "        providers:\n"
		       "          - provider: Test-Alpha\n"
		       "            level: 4\n"
		       "            keywords: [B, Cee]\n"
		       "            events: [1");
	for (int i = 100; i < 164; i++)
		hs_sb_printf(&sb, ", %d", i);
	hs_sb_append(&sb, "]\n"
		       "          - { provider: sched }\n");
	load_profile(hs_sb_cstr(&sb), &d, &rs, &st);
	hs_sb_free(&sb);
	CHECK(st == HS_ERULES);
	CHECK(fixture_has(d, HS_D_TOO_MANY_IDS));
	CHECK(fixture_has(d, HS_D_UNKNOWN_KEYWORD));
	CHECK(fixture_has(d, HS_D_KEYWORD_OFF));
	CHECK(fixture_has(d, HS_D_PLATFORM));
	CHECK(fixture_has(d, HS_D_UNKNOWN_EVENT));
	CHECK(fixture_has(d, HS_D_NO_STORY));
	const hs_diag *g = fixture_find(d, HS_D_UNKNOWN_KEYWORD);
	CHECK(g && g->pos.line == 20 && g->pos.col == 27);
	hs_rules_free(rs);
	hs_diags_free(d);
}

static void test_regex_caret(void)
{
	hs_diags *d;
	hs_ruleset *rs;
	hs_status st;
	load_profile("      - name: ring\n"
		     "        logger_name: TestRing\n"
		     "        mode: buffering\n"
		     "        clock: qpc\n"
		     "        buffer_size_kb: 64\n"
		     "        ring_mb: 16\n"
		     "        output: snap.etl\n"
		     "        providers:\n"
		     "          - match: \"USB(|BTH\"\n"
		     "            level: 4\n"
		     "            keywords: all\n",
		     &d, &rs, &st);
	CHECK(st == HS_ERULES);
	const hs_diag *g = fixture_find(d, HS_D_REGEX);
	/* Line 16; the scalar's quote is at column 20, the pattern starts at 21
	 * and PCRE2 stops at offset 8 (the end): column 29. */
	CHECK(g && g->pos.line == 16 && g->pos.col == 29);
	hs_rules_free(rs);
	hs_diags_free(d);
}

static void test_structure(void)
{
	hs_diags *d;
	hs_ruleset *rs;
	hs_status st;
	load_profile("      - name: bad name!\n"
		     "        logger_name: T\n"
		     "        mode: buffring\n"
		     "        clock: qpc\n"
		     "        bufer_size_kb: 64\n"
		     "        output: ../x.etl\n"
		     "        providers: []\n",
		     &d, &rs, &st);
	CHECK(st == HS_ERULES);
	CHECK(fixture_has(d, HS_D_NAME));
	const hs_diag *g = fixture_find(d, HS_D_ENUM);
	CHECK(g && g->hint && strstr(g->hint, "buffering"));
	g = fixture_find(d, HS_D_UNKNOWN_KEY);
	CHECK(g && g->pos.line == 12 && g->pos.col == 9 && g->hint && strstr(g->hint, "buffer_size_kb"));
	CHECK(fixture_has(d, HS_D_OUTPUT));
	CHECK(fixture_has(d, HS_D_MISSING_KEY)); /* empty providers */
	hs_rules_free(rs);
	hs_diags_free(d);
}

static void test_includes(void)
{
	hs_diags *d;
	hs_ruleset *rs;
	fixture_write("c1.yaml", "schema_version: 1\nkind: catalog\nplatform: linux\ninclude: [c2.yaml]\n");
	fixture_write("c2.yaml", "schema_version: 1\nkind: catalog\nplatform: linux\ninclude: [c1.yaml]\n");
	hs_status st = fixture_load("c1.yaml", &d, &rs);
	CHECK(st == HS_ERULES);
	const hs_diag *g = fixture_find(d, HS_D_INCLUDE_CYCLE);
	CHECK(g && g->pos.line == 4);
	hs_rules_free(rs);
	hs_diags_free(d);

	fixture_write("c3.yaml", "schema_version: 1\nkind: catalog\nplatform: linux\ninclude: [nope.yaml]\n");
	st = fixture_load("c3.yaml", &d, &rs);
	CHECK(st == HS_ERULES && fixture_has(d, HS_D_INCLUDE));
	hs_rules_free(rs);
	hs_diags_free(d);

	st = fixture_load("missing.yaml", &d, &rs);
	CHECK(st == HS_ENOENT && fixture_has(d, HS_D_INCLUDE));
	hs_rules_free(rs);
	hs_diags_free(d);
}

static void test_shipped_rules(void)
{
	/* The shipped profiles load clean: the engine's default job depends on it. */
	const char *files[] = {HS_TEST_RULES_DIR "/stutter.yaml", HS_TEST_RULES_DIR "/cpu-sample.yaml"};
	for (size_t i = 0; i < 2; i++) {
		hs_diags *d = hs_diags_new();
		hs_ruleset *rs = NULL;
		CHECK(hs_rules_load(files[i], d, &rs) == HS_OK);
		CHECK_EQ_INT(hs_diags_count(d), 0);
		CHECK(rs && rs->platforms[HS_PLATFORM_WINDOWS].present && rs->platforms[HS_PLATFORM_LINUX].present);
		hs_rules_free(rs);
		hs_diags_free(d);
	}
}

/* Triggers: a fractional number key, its range, the behaviour merge (a value
 * from trigger_defaults carries the default's position), and the session
 * the loader resolves for an event trigger that names none. */
static void test_triggers(void)
{
	const char *head =
		"schema_version: 1\nkind: profile\nname: t\ninclude: [linux.yaml]\nrun: {snapshots_max_mb: 64}\n"
		"platforms:\n  linux:\n    sessions:\n"
		"      - {name: keys, logger_name: k, mode: file-circular, clock: mono, buffer_size_kb: 64,\n"
		"         max_file_mb: 8, output: keys.dat, providers: [{provider: sched}]}\n"
		"    trigger_defaults: {warmup_s: 1, clear_ms: 2, post_delay_ms: 3, cooldown_s: 4, max_per_hour: 5}\n"
		"    triggers:\n";
	hs_strbuf sb = {0};
	hs_sb_append(&sb, head);
	hs_sb_append(&sb, "      - {name: exit, kind: event, provider: sched, event: sched_process_exit, keep: 7}\n"
			  "      - {name: hitch, kind: frame_time, session: keys, source: trace_marker, slice: x,\n"
			  "         threshold_ms: 16.75, ratio: 0, ceiling_ms: 1e3, median_frames: 3, keep: 1}\n");
	fixture_write("t.yaml", hs_sb_cstr(&sb));
	hs_sb_free(&sb);
	hs_diags *d;
	hs_ruleset *rs;
	CHECK(fixture_load("t.yaml", &d, &rs) == HS_OK);
	CHECK_EQ_INT(hs_diags_count(d), 0);
	if (hs_diags_count(d))
		hs_diags_render(d, stderr, HS_FMT_TEXT);
	const hs_platform_rules *pr = &rs->platforms[HS_PLATFORM_LINUX];
	CHECK_EQ_INT(pr->n_triggers, 2);
	if (pr->n_triggers == 2) {
		const hs_trigger *ex = &pr->triggers[0], *hi = &pr->triggers[1];
		CHECK_EQ_STR(ex->session, "keys"); /* resolved: the file-circular session that enables it */
		CHECK_EQ_INT(ex->warmup_s, 1);
		CHECK_EQ_INT(ex->max_per_hour, 5);
		CHECK_EQ_INT(ex->keep, 7);
		CHECK_EQ_INT(ex->post_delay_pos.line, pr->trigger_defaults.post_delay_pos.line);
		CHECK(hi->threshold_ms == 16.75 && hi->ratio == 0 && hi->ceiling_ms == 1000);
		CHECK(hi->has_threshold && hi->has_ratio && hi->has_source);
		CHECK_EQ_STR(hi->source, "trace_marker");
	}
	hs_rules_free(rs);
	hs_diags_free(d);

	/* Out of range, not a number, and no keep anywhere. */
	hs_sb_append(&sb, head);
	hs_sb_append(&sb, "      - {name: hitch, kind: frame_time, session: keys, source: trace_marker, slice: x,\n"
			  "         threshold_ms: -1, ratio: .inf, ceiling_ms: 5000, median_frames: 2}\n");
	fixture_write("t.yaml", hs_sb_cstr(&sb));
	hs_sb_free(&sb);
	CHECK(fixture_load("t.yaml", &d, &rs) == HS_ERULES);
	size_t range = 0, key = 0;
	for (size_t i = 0; i < hs_diags_count(d); i++) {
		range += hs_diags_at(d, i)->code == HS_D_RANGE;
		key += hs_diags_at(d, i)->code == HS_D_TRIGGER_KEY;
	}
	CHECK_EQ_INT(range, 3); /* threshold_ms -1, ratio .inf, median_frames 2 */
	CHECK_EQ_INT(key, 1);   /* keep */
	hs_rules_free(rs);
	hs_diags_free(d);
}

int main(void)
{
	fixture_init();
	fixture_write("win.yaml", fixture_win_catalog);
	fixture_write("linux.yaml", fixture_linux_catalog);
	test_valid_profile_and_selection();
	test_semantic_findings();
	test_regex_caret();
	test_structure();
	test_includes();
	test_shipped_rules();
	test_triggers();
	fixture_cleanup();
	return hs_test_done("test_rules");
}
