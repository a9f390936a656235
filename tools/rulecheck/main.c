/* rulecheck: lints rules files (structure and semantics) for editors and CI; same loader as the engine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/rules.h"

enum { EXIT_CLEAN = 0, EXIT_FINDINGS = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
	fputs("usage: rulecheck [--format text|json|sarif|github] [--strict] [--quiet] FILE...\n"
	      "\n"
	      "Checks hindsight rules files (profiles and catalogs, with their includes).\n"
	      "  --format F   text (gcc-style, default), json, sarif (2.1.0) or github (workflow commands)\n"
	      "  --strict     warnings fail the check too\n"
	      "  --quiet      text format: print diagnostics only, no per-file summary\n"
	      "\n"
	      "Exit status: 0 clean, 1 findings, 2 usage or I/O error.\n",
	      f);
}

int main(int argc, char **argv)
{
	hs_diag_format fmt = HS_FMT_TEXT;
	bool strict = false, quiet = false;
	int first = argc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--format") && i + 1 < argc) {
			if (hs_diag_format_parse(argv[++i], &fmt) != HS_OK) {
				fprintf(stderr, "rulecheck: --format takes text, json, sarif or github, not '%s'\n", argv[i]);
				return EXIT_USAGE;
			}
		} else if (!strncmp(a, "--format=", 9)) {
			if (hs_diag_format_parse(a + 9, &fmt) != HS_OK) {
				fprintf(stderr, "rulecheck: --format takes text, json, sarif or github, not '%s'\n", a + 9);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--strict")) {
			strict = true;
		} else if (!strcmp(a, "--quiet")) {
			quiet = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return EXIT_CLEAN;
		} else if (!strcmp(a, "--")) {
			first = i + 1;
			break;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "rulecheck: unknown option '%s'\n", a);
			usage(stderr);
			return EXIT_USAGE;
		} else {
			first = i;
			break;
		}
	}
	if (first >= argc) {
		fputs("rulecheck: no files given\n", stderr);
		usage(stderr);
		return EXIT_USAGE;
	}

	hs_diags *all = hs_diags_new();
	if (!all) {
		fputs("rulecheck: out of memory\n", stderr);
		return EXIT_USAGE;
	}
	int rc = EXIT_CLEAN;
	char **status = calloc((size_t)(argc - first), sizeof(char *));
	for (int i = first; i < argc; i++) {
		hs_diags *d = hs_diags_new();
		hs_ruleset *rs = NULL;
		if (!d) {
			rc = EXIT_USAGE;
			break;
		}
		hs_status st = hs_rules_load(argv[i], d, &rs);
		size_t errors = hs_diags_errors(d), warnings = hs_diags_warnings(d);
		const char *verdict;
		if (st == HS_ENOENT || st == HS_EIO || st == HS_ELIMIT || st == HS_ENOMEM) {
			verdict = "UNREADABLE";
			rc = EXIT_USAGE;
		} else if (errors) {
			verdict = "INVALID";
			if (rc == EXIT_CLEAN)
				rc = EXIT_FINDINGS;
		} else if (warnings) {
			verdict = strict ? "INVALID (warnings, --strict)" : "OK with warnings";
			if (strict && rc == EXIT_CLEAN)
				rc = EXIT_FINDINGS;
		} else {
			verdict = "OK";
		}
		char line[512];
		snprintf(line, sizeof line, "%s: %s (%zu error%s, %zu warning%s)", argv[i], verdict, errors,
			 errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
		if (status)
			status[i - first] = strdup(line);
		hs_diags_merge(all, d);
		hs_rules_free(rs);
		hs_diags_free(d);
	}
	hs_diags_sort(all);
	if (hs_diags_render(all, stdout, fmt) != HS_OK)
		rc = EXIT_USAGE;
	if (fmt == HS_FMT_TEXT && !quiet && status)
		for (int i = 0; i < argc - first; i++)
			if (status[i])
				printf("%s\n", status[i]);
	for (int i = 0; status && i < argc - first; i++)
		free(status[i]);
	free(status);
	hs_diags_free(all);
	return rc;
}
