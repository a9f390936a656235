/* analyze/filter.c: `analyze filter`: keeps what a profile's Windows sessions would have let through ETW, into a new .etl. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/etl_writer.h"
#include "hindsight/plan.h"
#include "hindsight/plan_match.h"

/*
 * The test for each record is the plan's (hs_plan_match_etl): the one ETW
 * applies when a session enables a provider, with the plan's level, keywords
 * and event-id filter, and the attribution of classic and kernel records
 * through the catalogs (hindsight/plan_match.h says how).
 */

/* Kept/dropped per provider, keyed like `analyze counts` names providers. */
typedef struct {
	char key[48];
	const char *name; /* catalog provider name, borrowed from the rules */
	uint64_t kept, dropped;
} provider_tally;

typedef struct {
	const hs_plan *plan;
	const hs_etl *etl;
	hs_etl_writer *w;
	hs_status write_st;
	uint64_t kept, total;
	provider_tally *tallies;
	size_t n_tallies, cap_tallies, last;
	bool oom;
} filter_ctx;

static void provider_key(const hs_etl_record *r, char key[48])
{
	switch (r->kind) {
	case HS_ETL_SYSTEM:
	case HS_ETL_COMPACT:
	case HS_ETL_PERFINFO:
		snprintf(key, 48, "kernel:0x%02x", r->group);
		break;
	case HS_ETL_MESSAGE:
		snprintf(key, 48, "wpp");
		break;
	default:
		hs_guid_format_lower(&r->guid, key);
	}
}

static void count(filter_ctx *f, const hs_etl_record *r, const char *name, bool kept)
{
	char key[48];
	provider_key(r, key);
	/* Records of one provider come in runs: try the last one first. */
	size_t i = f->last;
	if (i >= f->n_tallies || strcmp(f->tallies[i].key, key) != 0) {
		for (i = 0; i < f->n_tallies && strcmp(f->tallies[i].key, key) != 0; i++)
			;
		if (i == f->n_tallies) {
			if (f->n_tallies == f->cap_tallies) {
				size_t nc = f->cap_tallies ? f->cap_tallies * 2 : 32;
				provider_tally *t = realloc(f->tallies, nc * sizeof(*t));
				if (!t) {
					f->oom = true;
					return;
				}
				f->tallies = t;
				f->cap_tallies = nc;
			}
			provider_tally *t = &f->tallies[f->n_tallies++];
			memset(t, 0, sizeof(*t));
			memcpy(t->key, key, sizeof t->key);
		}
		f->last = i;
	}
	provider_tally *t = &f->tallies[i];
	if (!t->name)
		t->name = name;
	if (kept)
		t->kept++;
	else
		t->dropped++;
}

static int on_record(const hs_etl_record *r, void *ctx)
{
	filter_ctx *f = ctx;
	analyze_progress(f->etl, r);
	const char *name = NULL;
	bool keep = hs_plan_match_etl(f->plan, r, &name);
	f->total++;
	count(f, r, name, keep);
	if (!keep)
		return 0;
	f->kept++;
	f->write_st = hs_etl_writer_copy(f->w, r);
	return f->write_st != HS_OK;
}

static int cmp_tally(const void *a, const void *b)
{
	return strcmp(((const provider_tally *)a)->key, ((const provider_tally *)b)->key);
}

static void print_json(const analyze_opts *o, const filter_ctx *f, const char *rules_path, const hs_etl *etl)
{
	hs_strbuf sb = {0};
	hs_json j;
	analyze_json_begin(&j, &sb, o->file, NULL);
	hs_json_kstr(&j, "output", o->output);
	hs_json_kstr(&j, "rules", rules_path);
	hs_json_kuint(&j, "total", f->total);
	hs_json_kuint(&j, "kept", f->kept);
	hs_json_kuint(&j, "dropped", f->total - f->kept);
	hs_json_key(&j, "per_provider");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < f->n_tallies; i++) {
		const provider_tally *t = &f->tallies[i];
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "provider", t->key);
		hs_json_kstr(&j, "name", t->name);
		hs_json_kuint(&j, "kept", t->kept);
		hs_json_kuint(&j, "dropped", t->dropped);
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	analyze_json_problems(&j, hs_etl_problems(etl));
	hs_json_obj_end(&j);
	hs_sb_write_free(&sb, stdout);
}

/* Loads the profile and its Windows plan; prints why not and returns an
 * exit code on failure. */
static int load_plan(const analyze_opts *o, hs_diags **d, hs_ruleset **rs, hs_plan **plan, char **path)
{
	const char *arg = o->rules ? o->rules : "stutter.yaml";
	char *tried = NULL;
	*path = hs_rules_resolve(arg, o->argv0, &tried);
	if (!*path) {
		fprintf(stderr, "analyze: rules '%s' not found; looked at:\n%s", arg, tried ? tried : "");
		free(tried);
		return HS_EXIT_USAGE;
	}
	free(tried);
	if (!(*d = hs_diags_new())) {
		fputs("analyze: out of memory\n", stderr);
		return HS_EXIT_USAGE;
	}
	hs_status st = hs_rules_load(*path, *d, rs);
	hs_diags_sort(*d);
	if (hs_diags_count(*d))
		hs_diags_render(*d, stderr, HS_FMT_TEXT);
	if (st != HS_OK) {
		fprintf(stderr, "analyze: %s cannot be used to filter: %s\n", *path, hs_strerror(st));
		return HS_EXIT_USAGE;
	}
	if (!(*rs)->is_profile) {
		fprintf(stderr, "analyze: %s is a catalog; filter needs a profile (kind: profile)\n", *path);
		return HS_EXIT_USAGE;
	}
	st = hs_plan_build(*rs, HS_PLATFORM_WINDOWS, NULL, plan);
	if (st == HS_EINVAL) {
		fprintf(stderr, "analyze: profile '%s' (%s) has no windows section to filter with\n", (*rs)->name,
			*path);
		return HS_EXIT_USAGE;
	}
	if (st != HS_OK) {
		fprintf(stderr, "analyze: cannot build the plan: %s\n", hs_strerror(st));
		return HS_EXIT_USAGE;
	}
	return 0;
}

int analyze_filter(const analyze_opts *o)
{
	if (!o->output) {
		fputs("analyze: filter needs -o OUT.etl (where to write the filtered trace)\n", stderr);
		return HS_EXIT_USAGE;
	}
	hs_diags *d = NULL;
	hs_ruleset *rs = NULL;
	hs_plan *plan = NULL;
	char *rules_path = NULL;
	hs_etl *etl = NULL;
	filter_ctx f = {0};
	int rc = load_plan(o, &d, &rs, &plan, &rules_path);
	if (rc)
		goto out;
	f.plan = plan;
	if ((rc = analyze_open_etl(o->file, &etl)) != 0)
		goto out;
	/* The output keeps the input's identity and clock, so times read the
	 * same in both; the buffer size and compression follow the input too. */
	hs_etl_writer_opts wo;
	hs_etl_writer_opts_from(hs_etl_get_header(etl), &wo);
	hs_status st = hs_etl_writer_open(o->output, &wo, &f.w);
	if (st != HS_OK) {
		fprintf(stderr, "analyze: cannot create %s: %s\n", o->output, hs_strerror(st));
		rc = HS_EXIT_USAGE;
		goto out;
	}
	f.etl = etl;
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_record, &f);
	analyze_progress_done();
	if (f.write_st != HS_OK) {
		fprintf(stderr, "analyze: cannot write %s: %s\n", o->output, hs_strerror(f.write_st));
		hs_etl_writer_discard(f.w);
		rc = HS_EXIT_USAGE;
		goto out;
	}
	st = hs_etl_writer_close(f.w);
	if (st != HS_OK) {
		fprintf(stderr, "analyze: cannot write %s: %s\n", o->output, hs_strerror(st));
		rc = HS_EXIT_USAGE;
		goto out;
	}
	if (f.oom) {
		fputs("analyze: out of memory counting providers\n", stderr);
		rc = HS_EXIT_USAGE;
		goto out;
	}
	qsort(f.tallies, f.n_tallies, sizeof(*f.tallies), cmp_tally);
	if (o->json)
		print_json(o, &f, rules_path, etl);
	fprintf(stderr, "analyze: filter: kept %" PRIu64 " of %" PRIu64 " events (%" PRIu64 " dropped) -> %s\n", f.kept,
		f.total, f.total - f.kept, o->output);
	rc = analyze_report_problems(hs_etl_problems(etl));
out:
	free(f.tallies);
	hs_etl_close(etl);
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	free(rules_path);
	return rc;
}
