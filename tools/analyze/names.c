/* analyze/names.c: names and stories for trace records, from the rules catalogs and the trace itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze.h"
#include "hindsight/plan.h"
#include "hindsight/compat.h"

int analyze_load_rules(const analyze_opts *o, analyze_rules *out)
{
	memset(out, 0, sizeof(*out));
	const char *arg = o->rules ? o->rules : "stutter.yaml";
	char *tried = NULL;
	char *path = hs_rules_resolve(arg, o->argv0, &tried);
	if (!path) {
		fprintf(stderr, "analyze: rules '%s' not found; looked at:\n%s", arg, tried ? tried : "");
		free(tried);
		return HS_EXIT_USAGE;
	}
	free(tried);
	out->diags = hs_diags_new();
	if (!out->diags) {
		free(path);
		return HS_EXIT_USAGE;
	}
	hs_status st = hs_rules_load(path, out->diags, &out->rules);
	if (st != HS_OK) {
		hs_diags_sort(out->diags);
		hs_diags_render(out->diags, stderr, HS_FMT_TEXT);
		fprintf(stderr, "analyze: %s cannot be used: %s\n", path, hs_strerror(st));
		free(path);
		analyze_free_rules(out);
		return st == HS_ERULES ? HS_EXIT_FINDINGS : HS_EXIT_USAGE;
	}
	out->path = path;
	return 0;
}

void analyze_free_rules(analyze_rules *r)
{
	hs_rules_free(r->rules);
	hs_diags_free(r->diags);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

int analyze_load_plan(const analyze_opts *o, hs_platform platform, analyze_rules *rules, hs_plan **plan)
{
	*plan = NULL;
	int rc = analyze_load_rules(o, rules);
	if (rc)
		return rc;
	if (hs_plan_build(rules->rules, platform, NULL, plan) == HS_OK)
		return 0;
	fprintf(stderr, "analyze: %s has no %s section, so nothing says which events are key events\n", rules->path,
		platform == HS_PLATFORM_LINUX ? "linux" : "windows");
	hs_plan_free(*plan);
	*plan = NULL;
	analyze_free_rules(rules);
	return HS_EXIT_USAGE;
}
