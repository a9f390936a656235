/* fuzz_rules.c: libFuzzer target for the rules loader, checker and planner (includes disabled). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/diag.h"
#include "hindsight/limits.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > HS_MAX_RULES_FILE_BYTES)
		return 0;
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_status st = hs_rules_load_buffer_isolated("fuzz.yaml", (const char *)data, size, d, &rs);
	/* Rendering walks positions back into the source text: fuzz it too. */
	hs_diags_sort(d);
	hs_diags_render(d, sink, HS_FMT_TEXT);
	hs_diags_render(d, sink, HS_FMT_SARIF);
	if (st == HS_OK && rs && rs->is_profile) {
		for (int p = HS_PLATFORM_WINDOWS; p < HS_PLATFORM_COUNT; p++) {
			hs_plan *plan = NULL;
			hs_plan_opts opts = {.cpus = 2};
			if (hs_plan_build(rs, (hs_platform)p, &opts, &plan) == HS_OK) {
				hs_plan_print_text(plan, sink);
				hs_plan_print_json(plan, sink);
			}
			hs_plan_free(plan);
		}
	}
	hs_rules_free(rs);
	hs_diags_free(d);
	return 0;
}
