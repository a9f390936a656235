/* rulegen: derives a session's event whitelist from fault-scenario counts and rewrites it in the profile (see docs/rulegen.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/exitcodes.h"
#include "hindsight/rules.h"
#include "rulegen.h"
#include "hindsight/compat.h"
#include "hindsight/text.h"

static void usage(FILE *f)
{
	fputs("usage: rulegen [--explain] [-o FILE | --in-place | --diff | --check] CONFIG\n"
	      "       rulegen --counts FILE\n"
	      "\n"
	      "Keeps the events of a session's whitelists that are specific to one fault scenario, drops\n"
	      "the uniform ones, and rewrites those whitelists in the profile the CONFIG names\n"
	      "(docs/rulegen.md). Only the session's events: lists change; every other byte stays.\n"
	      "  --explain    print the table behind every decision (on stdout)\n"
	      "  -o FILE      write the new rules file to FILE\n"
	      "  --in-place   rewrite the profile itself\n"
	      "  --diff       print a unified diff from the profile to the new rules\n"
	      "  --check      like --diff, and exit 1 when the profile is not what the counts give\n"
	      "  (none)       print the new rules file on stdout (nothing else when --explain is given)\n"
	      "  --counts F   print a trace's (.dat, .etl) or counts file's counts in the counts format\n"
	      "\n"
	      "Exit status: 0 done, 1 problems in the config, counts or profile (or --check differs),\n"
	      "2 usage or I/O error.\n",
	      f);
}

static int print_counts(const char *path)
{
	hs_diags *d = hs_diags_new();
	rg_counts c = {0};
	if (!d)
		return HS_EXIT_USAGE;
	bool ok = rg_counts_load(&c, path, NULL, NULL, (hs_pos){hs_diags_intern(d, path), 0, 0}, d);
	if (ok)
		rg_counts_print(&c, stdout);
	hs_diags_sort(d);
	hs_diags_render(d, stderr, HS_FMT_TEXT);
	rg_counts_free(&c);
	hs_diags_free(d);
	return ok ? HS_EXIT_OK : HS_EXIT_FINDINGS;
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = hs_fopen(path, "wb");
	if (!f)
		return false;
	size_t n = strlen(text);
	bool ok = fwrite(text, 1, n, f) == n;
	ok &= fclose(f) == 0;
	return ok;
}

/* Writes next to the target and renames, so a failed write never leaves half a profile. */
static bool replace_file(const char *path, const char *text)
{
	size_t n = strlen(path) + 16;
	char *tmp = malloc(n);
	if (!tmp)
		return false;
	snprintf(tmp, n, "%s.rulegen~", path);
	bool ok = write_file(tmp, text) && hs_rename(tmp, path) == 0;
	if (!ok)
		hs_unlink(tmp);
	free(tmp);
	return ok;
}

static void render(hs_diags *d)
{
	hs_diags_sort(d);
	hs_diags_render(d, stderr, HS_FMT_TEXT);
}

int main(int argc, char **argv)
{
	bool explain = false, in_place = false, diff = false, check = false;
	const char *out_path = NULL, *config = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--explain")) {
			explain = true;
		} else if (!strcmp(a, "--in-place")) {
			in_place = true;
		} else if (!strcmp(a, "--diff")) {
			diff = true;
		} else if (!strcmp(a, "--check")) {
			check = true;
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			out_path = argv[++i];
		} else if (!strcmp(a, "--counts") && i + 1 < argc) {
			return print_counts(argv[i + 1]);
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return HS_EXIT_OK;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "rulegen: unknown option '%s'\n", a);
			usage(stderr);
			return HS_EXIT_USAGE;
		} else if (config) {
			fprintf(stderr, "rulegen: one config at a time ('%s' and '%s')\n", config, a);
			return HS_EXIT_USAGE;
		} else {
			config = a;
		}
	}
	if (!config) {
		fputs("rulegen: no config given\n", stderr);
		usage(stderr);
		return HS_EXIT_USAGE;
	}
	if ((out_path != NULL) + in_place + diff + check > 1) {
		fputs("rulegen: choose one of -o, --in-place, --diff and --check\n", stderr);
		return HS_EXIT_USAGE;
	}

	int rc = HS_EXIT_FINDINGS;
	hs_diags *d = hs_diags_new(), *pd = hs_diags_new(), *nd = hs_diags_new();
	rg_config *cfg = NULL;
	hs_ruleset *rs = NULL, *nrs = NULL;
	rg_result res = {0};
	char *text = NULL, *patched = NULL;
	size_t len = 0;
	hs_strbuf sb = {0};
	if (!d || !pd || !nd) {
		rc = HS_EXIT_USAGE;
		goto out;
	}
	if (!rg_config_load(config, d, &cfg)) {
		if (cfg && !cfg->path) /* the config itself could not be read */
			rc = HS_EXIT_USAGE;
		render(d);
		goto out;
	}
	/* The profile must load cleanly: rulegen edits what the engine would run. */
	hs_status st = hs_rules_load(cfg->profile, pd, &rs);
	if (st != HS_OK || !rs || !rs->is_profile) {
		if (st == HS_OK && rs && !rs->is_profile)
			hs_diag_add(d, HS_D_INCLUDE, cfg->profile_pos, NULL, "'%s' is a catalog, not a profile", cfg->profile);
		else
			fprintf(stderr, "rulegen: the profile %s does not load; fix it first (rulecheck %s):\n", cfg->profile,
				cfg->profile);
		hs_diags_merge(d, pd);
		render(d);
		rc = (st == HS_ENOENT || st == HS_EIO) ? HS_EXIT_USAGE : HS_EXIT_FINDINGS;
		goto out;
	}
	if (!rg_config_load_counts(cfg, d) || !rg_decide(cfg, rs, d, &res)) {
		render(d);
		goto out;
	}
	st = hs_read_file(cfg->profile, 64u * 1024u * 1024u, &text, &len);
	if (st != HS_OK) {
		fprintf(stderr, "rulegen: %s: %s\n", cfg->profile, hs_strerror(st));
		rc = HS_EXIT_USAGE;
		goto out;
	}
	patched = rg_patch(&res, text, len, d);
	if (!patched) {
		render(d);
		goto out;
	}
	/* The output must load as the engine would load it (stubs are warnings). */
	hs_rules_load_buffer(cfg->profile, patched, strlen(patched), nd, &nrs);
	if (hs_diags_errors(nd)) {
		fputs("rulegen: the generated rules do not load (a rulegen bug, or a pin the rules reject):\n", stderr);
		render(nd);
		goto out;
	}
	if (explain) {
		rg_explain(&res, &sb);
		if (hs_sb_write_free(&sb, stdout) != HS_OK) {
			rc = HS_EXIT_USAGE;
			goto out;
		}
	}
	rc = HS_EXIT_OK;
	if (out_path) {
		if (!write_file(out_path, patched)) {
			perror(out_path);
			rc = HS_EXIT_USAGE;
		}
	} else if (in_place) {
		if (strcmp(text, patched) != 0 && !replace_file(cfg->profile, patched)) {
			perror(cfg->profile);
			rc = HS_EXIT_USAGE;
		}
	} else if (diff || check) {
		rg_diff(cfg->profile, text, patched, &sb);
		if (check && sb.len)
			rc = HS_EXIT_FINDINGS;
		if (hs_sb_write_free(&sb, stdout) != HS_OK)
			rc = HS_EXIT_USAGE;
	} else if (!explain) {
		fputs(patched, stdout);
	}
	fflush(stdout); /* the summary below follows the output, also when both go to one file */
	size_t kept = 0, added = 0, removed = 0, cut = 0;
	for (size_t i = 0; i < res.n_provs; i++) {
		kept += res.provs[i].kept;
		added += res.provs[i].added;
		removed += res.provs[i].removed;
		cut += res.provs[i].cut;
	}
	fprintf(stderr, "rulegen: %s session %s: %zu events kept, %zu added, %zu removed, %zu cut by limits%s\n",
		hs_platform_name(cfg->platform), res.session->name, kept, added, removed, cut,
		check && rc == HS_EXIT_FINDINGS ? "; the profile differs from what the counts give" : "");
	if (res.stubs)
		fprintf(stderr, "rulegen: %zu kept event%s generated evidence instead of a story (HS129): write %s\n",
			res.stubs, res.stubs == 1 ? " has" : "s have", res.stubs == 1 ? "it" : "them");
out:
	free(text);
	free(patched);
	hs_sb_free(&sb);
	rg_result_free(&res);
	hs_rules_free(nrs);
	hs_rules_free(rs);
	rg_config_free(cfg);
	hs_diags_free(nd);
	hs_diags_free(pd);
	hs_diags_free(d);
	return rc;
}
