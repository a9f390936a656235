/* test_plan_match.c: hs_plan_match on hand-made records against tests/etl/filter-synthetic.yaml: level, keywords, keyword 0, whitelists, classic, kernel and WPP attribution, and the .etl record mapping. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "hindsight/diag.h"
#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/plan.h"
#include "hindsight/plan_match.h"
#include "hindsight/rules.h"

#ifndef HS_TEST_ETL_DIR
#error "HS_TEST_ETL_DIR must name tests/etl (the filter profiles)"
#endif

static const hs_plan *plan;

static hs_guid guid_of(const hs_ruleset *rs, const char *provider)
{
	const hs_provider *p = hs_rules_find_provider(rs, provider);
	CHECK(p && p->has_guid);
	return p ? p->guid : (hs_guid){0};
}

/* The class GUID the catalog gives a system provider's event. */
static hs_guid class_of(const hs_ruleset *rs, const char *provider, const char *event)
{
	const hs_provider *p = hs_rules_find_provider(rs, provider);
	const hs_cat_event *e = p ? hs_provider_find_event(p, -1, event) : NULL;
	CHECK(e && e->has_classic_guid);
	return e ? e->classic_guid : (hs_guid){0};
}

static hs_plan_match_record rec(hs_plan_match_kind kind, hs_guid g, int id, uint8_t level, uint64_t kw)
{
	return (hs_plan_match_record){
		.kind = kind, .has_guid = true, .guid = g, .id = id, .level = level, .keywords = kw};
}

/* Whether r passes, and the provider it was attributed to ("" for none). */
static void expect(int line, hs_plan_match_record r, bool pass, const char *provider)
{
	const char *name = NULL;
	bool got = hs_plan_match(plan, &r, &name);
	hs_test_checks++;
	if (got != pass || strcmp(name ? name : "", provider) != 0) {
		fprintf(stderr, "%s:%d: expected %s by '%s', got %s by '%s'\n", __FILE__, line, pass ? "pass" : "drop",
			provider, got ? "pass" : "drop", name ? name : "");
		hs_test_failures++;
	}
}
#define EXPECT(r, pass, provider) expect(__LINE__, r, pass, provider)

static void test_records(const hs_ruleset *rs)
{
	hs_guid tf = guid_of(rs, "Test-Filter"), tc = guid_of(rs, "Test-Classic");
	hs_guid tu = guid_of(rs, "Test-Unfiltered");
	hs_guid process = class_of(rs, "Test-SystemProcess", "ProcessStart");
	hs_guid thread = class_of(rs, "Test-SystemProcess", "ThreadStart");
	hs_guid image = class_of(rs, "Test-SystemProcess", "ImageLoad");

	/* s1: level warning (3), any of A|B, all of C; s2: verbose, D, ignore_keyword_0, ids 20 and 21. */
	EXPECT(rec(HS_MATCH_EVENT, tf, 1, 3, 0x5), true, "Test-Filter");
	EXPECT(rec(HS_MATCH_EVENT, tf, 1, 0, 0x5), true, "Test-Filter"); /* LogAlways passes any level */
	EXPECT(rec(HS_MATCH_EVENT, tf, 1, 4, 0x5), false, "Test-Filter");
	EXPECT(rec(HS_MATCH_EVENT, tf, 1, 2, 0x1), false, "Test-Filter"); /* lacks C (match_all) */
	EXPECT(rec(HS_MATCH_EVENT, tf, 1, 2, 0x4), false, "Test-Filter"); /* neither A nor B (match_any) */
	EXPECT(rec(HS_MATCH_EVENT, tf, 1, 2, 0), true, "Test-Filter");    /* keyword 0 passes s1 */
	EXPECT(rec(HS_MATCH_EVENT, tf, 20, 5, 0), false, "Test-Filter");  /* s2 ignores keyword 0 */
	EXPECT(rec(HS_MATCH_EVENT, tf, 20, 5, 0x8), true, "Test-Filter");
	EXPECT(rec(HS_MATCH_EVENT, tf, 22, 5, 0x8), false, "Test-Filter"); /* not in s2's whitelist */
	EXPECT(rec(HS_MATCH_EVENT, tu, 1, 0, 0), false, "");                /* no session enables it */

	/* Classic: s1 enables Test-Classic at information (4) with ids (opcodes) 10 and 11. */
	EXPECT(rec(HS_MATCH_CLASSIC, tc, 10, 4, 0), true, "Test-Classic");
	EXPECT(rec(HS_MATCH_CLASSIC, tc, 12, 4, 0), false, "Test-Classic");
	EXPECT(rec(HS_MATCH_CLASSIC, tc, 10, 5, 0), false, "Test-Classic");

	/* Kernel: s3 enables Test-SystemProcess with SYSTEM_PROCESS_KW_GENERAL and no whitelist. */
	EXPECT(rec(HS_MATCH_KERNEL, process, 1, 0, 0), true, "Test-SystemProcess");
	EXPECT(rec(HS_MATCH_KERNEL, thread, 1, 0, 0), false, "Test-SystemProcess"); /* KW_THREAD not enabled */
	EXPECT(rec(HS_MATCH_KERNEL, image, 10, 0, 0), false, "Test-SystemProcess"); /* KW_LOADER not enabled */
	/* Process/39 no catalog lists: the group is on, so ETW would have logged it. */
	EXPECT(rec(HS_MATCH_KERNEL, process, 39, 0, 0), true, "Test-SystemProcess");
	/* CSwitch is the (disabled) scheduler provider's: not logged for the process provider. */
	EXPECT(rec(HS_MATCH_KERNEL, thread, 36, 0, 0), false, "");
	hs_plan_match_record none = rec(HS_MATCH_KERNEL, process, 1, 0, 0);
	none.has_guid = false;
	EXPECT(none, false, "");
	EXPECT(rec(HS_MATCH_HEADER, (hs_guid){0}, 0, 0, 0), true, "");

	/* WPP: by message GUID, only for an entry without a whitelist. */
	EXPECT(rec(HS_MATCH_MESSAGE, tf, 7, 0, 0), true, "Test-Filter");
	EXPECT(rec(HS_MATCH_MESSAGE, tc, 7, 0, 0), false, "Test-Classic");
	hs_plan_match_record anon = rec(HS_MATCH_MESSAGE, tf, 7, 0, 0);
	anon.has_guid = false;
	EXPECT(anon, false, "");

	/* NULL provider is allowed. */
	hs_plan_match_record r = rec(HS_MATCH_EVENT, tf, 1, 3, 0x5);
	CHECK(hs_plan_match(plan, &r, NULL));
}

static void test_etl_mapping(const hs_ruleset *rs)
{
	hs_etl_record r;
	memset(&r, 0, sizeof r);
	hs_plan_match_record m;
	hs_guid g;

	/* Kernel groups map to the class GUIDs the catalogs use; Process/10 is the ImageLoad class. */
	r.kind = HS_ETL_SYSTEM;
	r.group = 0x03;
	r.opcode = 1;
	CHECK(hs_etl_kernel_class_guid(&r, &g) && memcmp(&g, &(hs_guid){0}, sizeof g) != 0);
	hs_guid process = class_of(rs, "Test-SystemProcess", "ProcessStart");
	CHECK(memcmp(&g, &process, sizeof g) == 0);
	CHECK(hs_plan_match_etl(plan, &r, NULL));
	r.opcode = 10;
	hs_guid image = class_of(rs, "Test-SystemProcess", "ImageLoad");
	CHECK(hs_etl_kernel_class_guid(&r, &g) && memcmp(&g, &image, sizeof g) == 0);
	r.group = 0x14;
	CHECK(hs_etl_kernel_class_guid(&r, &g) && memcmp(&g, &image, sizeof g) == 0);
	r.group = 0x05;
	r.opcode = 1;
	hs_guid thread = class_of(rs, "Test-SystemProcess", "ThreadStart");
	CHECK(hs_etl_kernel_class_guid(&r, &g) && memcmp(&g, &thread, sizeof g) == 0);
	r.group = 0x0F;
	r.opcode = 46;
	hs_guid perf = class_of(rs, "Test-SystemProfile", "SampledProfile");
	CHECK(hs_etl_kernel_class_guid(&r, &g) && memcmp(&g, &perf, sizeof g) == 0);
	r.group = 0x18;
	r.opcode = 32;
	hs_guid stack = class_of(rs, "Test-SystemProfile", "StackWalk");
	CHECK(hs_etl_kernel_class_guid(&r, &g) && memcmp(&g, &stack, sizeof g) == 0);
	r.group = 0x7F;
	CHECK(!hs_etl_kernel_class_guid(&r, &g));
	CHECK(hs_plan_match_record_from_etl(&r, &m) && m.kind == HS_MATCH_KERNEL && !m.has_guid);
	CHECK(!hs_plan_match_etl(plan, &r, NULL));
	r.group = 0x00;
	CHECK(hs_etl_kernel_header(&r));
	CHECK(hs_plan_match_record_from_etl(&r, &m) && m.kind == HS_MATCH_HEADER);
	CHECK(hs_plan_match_etl(plan, &r, NULL));

	/* Other kinds carry their own identity. */
	r.kind = HS_ETL_EVENT;
	r.guid = guid_of(rs, "Test-Filter");
	r.id = 20;
	r.opcode = 99;
	r.level = 5;
	r.keywords = 0x8;
	CHECK(!hs_etl_kernel_header(&r) && !hs_etl_kernel_class_guid(&r, &g));
	CHECK(hs_plan_match_record_from_etl(&r, &m) && m.kind == HS_MATCH_EVENT && m.id == 20);
	CHECK(hs_plan_match_etl(plan, &r, NULL));
	r.kind = HS_ETL_FULL;
	r.guid = guid_of(rs, "Test-Classic");
	r.opcode = 11;
	r.level = 4;
	CHECK(hs_plan_match_record_from_etl(&r, &m) && m.kind == HS_MATCH_CLASSIC && m.id == 11);
	CHECK(hs_plan_match_etl(plan, &r, NULL));
	r.kind = HS_ETL_MESSAGE;
	r.has_guid = false;
	CHECK(hs_plan_match_record_from_etl(&r, &m) && m.kind == HS_MATCH_MESSAGE && !m.has_guid);
	CHECK(!hs_plan_match_etl(plan, &r, NULL));
}

int main(void)
{
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_plan *p = NULL;
	CHECK(hs_rules_load(HS_TEST_ETL_DIR "/filter-synthetic.yaml", d, &rs) == HS_OK);
	CHECK_EQ_INT(hs_diags_count(d), 0);
	CHECK(rs && hs_plan_build(rs, HS_PLATFORM_WINDOWS, NULL, &p) == HS_OK);
	if (p) {
		plan = p;
		test_records(rs);
		test_etl_mapping(rs);
	}
	hs_plan_free(p);
	hs_rules_free(rs);
	hs_diags_free(d);
	return hs_test_done("test_plan_match");
}
