/* hs_fullprofile: derives the fault scenarios' "full" profile from a profile: same sessions, no whitelists. */
/*
 * usage: hs_fullprofile PROFILE [-o OUT] [--platform linux|windows] [--file-mb N] [--buffer-kb N]
 *
 * The scenarios (tools/scenarios/run-linux.sh and the windows/ scripts) record every
 * scenario twice, side by side: with the profile as it is (the "filtered"
 * capture) and with the profile this tool writes (the "full" capture). The
 * transformation is done on the loaded model, not on the YAML text, so it is
 * exactly what the engine would have run; the result is loaded back through
 * the same loader before it is written. What changes (docs/scenarios.md):
 *
 *   - name: NAME-full; description: says where it came from;
 *   - include: every catalog the profile loaded, as absolute paths (the output
 *     may live anywhere);
 *   - run.dir: DIR-full, so the two engines never share a run folder;
 *   - every session keeps its name, mode, clock and sizes; its logger_name
 *     (ETW session / tracefs instance) gets the suffix "_full" and its output
 *     the prefix "full-", so both captures run at the same time;
 *   - every provider entry loses its `events:` whitelist (and with it the
 *     entries' filters and stories): on Linux that enables every event of the
 *     ftrace system; on Windows the ID filter goes and `keywords` becomes
 *     `all` (keywords_all is dropped), the original tool's "full" session;
 *     level, capture_state, ignore_keyword_0 and stacks are kept;
 *   - --file-mb N and --buffer-kb N replace max_file_mb and buffer_size_kb of
 *     the file-circular sessions: without whitelists they take every event
 *     of their systems (all syscalls, every user page fault: ~5 MB/s on an
 *     idle 2-CPU VM), so a full capture that must not wrap or lose events
 *     needs a larger file and per-CPU ring than the filtered one.
 *
 * Only the platforms the profile has are written (or the one --platform names).
 * Exit status: 0 written, 1 the profile (or the result) has errors, 2 usage or I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/exitcodes.h"
#include "hindsight/rules.h"
#include "hindsight/compat.h"
#include "hindsight/strbuf.h"

#define FULL_SUFFIX "_full"
#define FULL_PREFIX "full-"

/* A YAML double-quoted scalar: always safe, whatever the text holds. */
static void put_str(hs_strbuf *sb, const char *s)
{
	hs_sb_putc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			hs_sb_putc(sb, '\\');
			hs_sb_putc(sb, (char)*p);
		} else if (*p < 0x20) {
			hs_sb_printf(sb, "\\x%02x", *p);
		} else {
			hs_sb_putc(sb, (char)*p);
		}
	}
	hs_sb_putc(sb, '"');
}

static void put_key_str(hs_strbuf *sb, const char *indent, const char *key, const char *value)
{
	if (!value)
		return;
	hs_sb_printf(sb, "%s%s: ", indent, key);
	put_str(sb, value);
	hs_sb_putc(sb, '\n');
}

static void put_key_uint(hs_strbuf *sb, const char *indent, const char *key, unsigned long long value)
{
	if (value) /* 0 means "not given" in the model */
		hs_sb_printf(sb, "%s%s: %llu\n", indent, key, value);
}

static void put_stacks(hs_strbuf *sb, const hs_session_provider *sp)
{
	const char *in = "            ";
	switch (sp->stacks) {
	case HS_STACKS_NONE:
		break;
	case HS_STACKS_ALL:
		hs_sb_printf(sb, "%sstacks: all\n", in);
		break;
	case HS_STACKS_LIST:
		hs_sb_printf(sb, "%sstacks:\n", in);
		for (size_t i = 0; i < sp->n_stack_events; i++) {
			const hs_wl_entry *w = &sp->stack_events[i];
			if (w->name) {
				hs_sb_printf(sb, "%s  - name: ", in);
				put_str(sb, w->name);
				hs_sb_putc(sb, '\n');
			} else {
				hs_sb_printf(sb, "%s  - id: %d\n", in, w->id);
			}
		}
		break;
	}
}

static void put_provider(hs_strbuf *sb, const hs_session_provider *sp, hs_platform platform)
{
	if (sp->provider)
		put_key_str(sb, "          - ", "provider", sp->provider);
	else
		put_key_str(sb, "          - ", "match", sp->match);
	const char *in = "            ";
	if (platform == HS_PLATFORM_WINDOWS) {
		if (sp->has_level)
			hs_sb_printf(sb, "%slevel: %d\n", in, sp->level);
		hs_sb_printf(sb, "%skeywords: all\n", in);
		if (sp->ignore_keyword_0)
			hs_sb_printf(sb, "%signore_keyword_0: true\n", in);
		if (sp->capture_state)
			hs_sb_printf(sb, "%scapture_state: true\n", in);
	}
	put_stacks(sb, sp);
	/* No `events:`: the point of the full profile. */
}

/* --file-mb and --buffer-kb (0: keep the profile's). */
static unsigned long long opt_file_mb, opt_buffer_kb;

static void put_session(hs_strbuf *sb, const hs_session *s, hs_platform platform)
{
	bool file = s->mode == HS_MODE_FILE_CIRCULAR;
	const char *in = "        ";
	put_key_str(sb, "      - ", "name", s->name);
	hs_strbuf logger = {0};
	hs_sb_printf(&logger, "%s%s", s->logger_name, FULL_SUFFIX);
	put_key_str(sb, in, "logger_name", hs_sb_cstr(&logger));
	hs_sb_free(&logger);
	put_key_str(sb, in, "mode", hs_mode_name(s->mode));
	put_key_str(sb, in, "clock", s->clock);
	put_key_uint(sb, in, "buffer_size_kb", file && opt_buffer_kb ? opt_buffer_kb : s->buffer_size_kb);
	put_key_uint(sb, in, "min_buffers", s->min_buffers);
	put_key_uint(sb, in, "max_buffers", s->max_buffers);
	put_key_uint(sb, in, "max_file_mb", file && opt_file_mb ? opt_file_mb : s->max_file_mb);
	put_key_uint(sb, in, "flush_interval_s", s->flush_interval_s);
	put_key_uint(sb, in, "ring_mb", s->ring_mb);
	put_key_uint(sb, in, "sample_hz", s->sample_hz);
	if (s->has_call_graph)
		put_key_str(sb, in, "call_graph", s->call_graph == HS_CALLGRAPH_FP ? "fp" : "none");
	if (s->output) {
		hs_strbuf out = {0};
		hs_sb_printf(&out, "%s%s", FULL_PREFIX, s->output);
		put_key_str(sb, in, "output", hs_sb_cstr(&out));
		hs_sb_free(&out);
	}
	hs_sb_printf(sb, "%sproviders:\n", in);
	for (size_t i = 0; i < s->n_providers; i++)
		put_provider(sb, &s->providers[i], platform);
}

/* The new profile's text, or NULL (a message on stderr). */
static char *full_profile(const hs_ruleset *rs, hs_platform only)
{
	if (!rs->run.dir) {
		fprintf(stderr, "hs_fullprofile: %s has no run.dir: the full capture needs its own run folder\n", rs->path);
		return NULL;
	}
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "# Generated by hs_fullprofile from %s: do not edit.\n", rs->path);
	hs_sb_append(&sb, "# Same sessions as the profile, logger names + \"" FULL_SUFFIX "\", outputs \"" FULL_PREFIX
			  "\" + name,\n# run.dir + \"-full\", and no event whitelists (every event of each provider).\n");
	hs_sb_append(&sb, "schema_version: 1\nkind: profile\n");
	char name[65];
	snprintf(name, sizeof name, "%.59s-full", rs->name);
	put_key_str(&sb, "", "name", name);
	hs_strbuf desc = {0};
	hs_sb_printf(&desc, "Full capture for the fault scenarios, derived from profile %s without its whitelists.",
		     rs->name);
	put_key_str(&sb, "", "description", hs_sb_cstr(&desc));
	hs_sb_free(&desc);
	hs_sb_append(&sb, "include:\n");
	size_t n_inc = 0;
	for (size_t i = 1; i < rs->n_files; i++) { /* files[0] is the profile itself */
		char *abs = hs_realpath(rs->files[i]);
		if (!abs) {
			fprintf(stderr, "hs_fullprofile: cannot resolve %s\n", rs->files[i]);
			hs_sb_free(&sb);
			return NULL;
		}
		hs_sb_append(&sb, "  - ");
		put_str(&sb, abs);
		hs_sb_putc(&sb, '\n');
		free(abs);
		n_inc++;
	}
	if (!n_inc) {
		fprintf(stderr, "hs_fullprofile: %s includes no catalog\n", rs->path);
		hs_sb_free(&sb);
		return NULL;
	}
	hs_sb_append(&sb, "run:\n");
	hs_strbuf dir = {0};
	hs_sb_printf(&dir, "%s-full", rs->run.dir);
	put_key_str(&sb, "  ", "dir", hs_sb_cstr(&dir));
	hs_sb_free(&dir);
	put_key_str(&sb, "  ", "name_format", rs->run.name_format);
	put_key_str(&sb, "  ", "log", rs->run.log);
	put_key_str(&sb, "  ", "manifest", rs->run.manifest);
	put_key_uint(&sb, "  ", "stats_interval_s", rs->run.stats_interval_s);
	hs_sb_append(&sb, "platforms:\n");
	size_t n_plat = 0;
	for (int p = 1; p < HS_PLATFORM_COUNT; p++) {
		const hs_platform_rules *pr = &rs->platforms[p];
		if (!pr->present || (only != HS_PLATFORM_NONE && only != (hs_platform)p))
			continue;
		hs_sb_printf(&sb, "  %s:\n    sessions:\n", hs_platform_name((hs_platform)p));
		for (size_t i = 0; i < pr->n_sessions; i++)
			put_session(&sb, &pr->sessions[i], (hs_platform)p);
		n_plat++;
	}
	if (!n_plat) {
		fprintf(stderr, "hs_fullprofile: %s has no section for %s\n", rs->path,
			only == HS_PLATFORM_NONE ? "any platform" : hs_platform_name(only));
		hs_sb_free(&sb);
		return NULL;
	}
	char *text = hs_sb_take(&sb);
	if (!text)
		fputs("hs_fullprofile: out of memory\n", stderr);
	return text;
}

static void usage(FILE *f)
{
	fputs("usage: hs_fullprofile PROFILE [-o OUT] [--platform linux|windows] [--file-mb N] [--buffer-kb N]\n"
	      "\n"
	      "Writes the fault scenarios' full profile: PROFILE's sessions with logger names + \"_full\",\n"
	      "outputs \"full-\" + name, run.dir + \"-full\" and no event whitelists (Windows: keywords all).\n"
	      "--file-mb/--buffer-kb: max_file_mb/buffer_size_kb of the file-circular sessions.\n"
	      "Without -o the profile goes to stdout. Exit status: 0 ok, 1 rules errors, 2 usage or I/O.\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	hs_platform only = HS_PLATFORM_NONE;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--platform") && i + 1 < argc) {
			only = hs_platform_parse(argv[++i]);
			if (only == HS_PLATFORM_NONE) {
				fprintf(stderr, "hs_fullprofile: --platform takes linux or windows, not '%s'\n", argv[i]);
				return HS_EXIT_USAGE;
			}
		} else if ((!strcmp(argv[i], "--file-mb") || !strcmp(argv[i], "--buffer-kb")) && i + 1 < argc) {
			char *end;
			unsigned long long v = strtoull(argv[i + 1], &end, 10);
			if (*end || !v) {
				fprintf(stderr, "hs_fullprofile: %s takes a positive number, not '%s'\n", argv[i], argv[i + 1]);
				return HS_EXIT_USAGE;
			}
			*(argv[i][2] == 'f' ? &opt_file_mb : &opt_buffer_kb) = v;
			i++;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return HS_EXIT_OK;
		} else if (argv[i][0] == '-' || in) {
			usage(stderr);
			return HS_EXIT_USAGE;
		} else {
			in = argv[i];
		}
	}
	if (!in) {
		usage(stderr);
		return HS_EXIT_USAGE;
	}

	int rc = HS_EXIT_OK;
	char *text = NULL;
	hs_diags *d = hs_diags_new(), *d2 = hs_diags_new();
	hs_ruleset *rs = NULL, *check = NULL;
	if (!d || !d2) {
		fputs("hs_fullprofile: out of memory\n", stderr);
		rc = HS_EXIT_USAGE;
		goto out;
	}
	hs_status st = hs_rules_load(in, d, &rs);
	if (st != HS_OK || !rs || !rs->is_profile) {
		hs_diags_render(d, stderr, HS_FMT_TEXT);
		if (rs && !rs->is_profile && st == HS_OK)
			fprintf(stderr, "hs_fullprofile: %s is a catalog, not a profile\n", in);
		rc = st == HS_ERULES || st == HS_OK ? HS_EXIT_RULES : HS_EXIT_USAGE;
		goto out;
	}
	text = full_profile(rs, only);
	if (!text) {
		rc = HS_EXIT_RULES;
		goto out;
	}
	/* The result must load cleanly through the same loader before anyone runs it. */
	st = hs_rules_load_buffer(out ? out : "<full profile>", text, strlen(text), d2, &check);
	if (st != HS_OK || hs_diags_errors(d2)) {
		fputs("hs_fullprofile: the generated profile does not load (a bug in this tool):\n", stderr);
		hs_diags_render(d2, stderr, HS_FMT_TEXT);
		rc = HS_EXIT_RULES;
		goto out;
	}
	FILE *f = out ? hs_fopen(out, "wb") : stdout;
	if (!f || fputs(text, f) == EOF || (out && fclose(f) != 0) || (!out && fflush(f) != 0)) {
		fprintf(stderr, "hs_fullprofile: cannot write %s\n", out ? out : "stdout");
		rc = HS_EXIT_USAGE;
	}
out:
	free(text);
	hs_rules_free(check);
	hs_rules_free(rs);
	hs_diags_free(d2);
	hs_diags_free(d);
	return rc;
}
