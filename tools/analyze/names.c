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

void analyze_format_filetime(uint64_t ft, char *buf, size_t cap)
{
	if (!ft) {
		snprintf(buf, cap, "-");
		return;
	}
	/* FILETIME counts 100 ns since 1601-01-01; Unix time starts 11644473600 s later. */
	time_t secs = (time_t)(ft / 10000000u) - (time_t)11644473600LL;
	unsigned frac = (unsigned)(ft % 10000000u);
	struct tm tm;
	if (!hs_gmtime(secs, &tm)) {
		snprintf(buf, cap, "%llu", (unsigned long long)ft);
		return;
	}
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%07uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}
