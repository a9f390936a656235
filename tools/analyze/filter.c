/* analyze/filter.c: `analyze filter`: keeps what a profile's Windows sessions would have let through ETW, into a new .etl. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "etl/etl_format.h"
#include "etw/etw_defs.h"
#include "hindsight/etl_writer.h"
#include "hindsight/plan.h"

/*
 * The test for each record is the one ETW applies when a session enables a
 * provider (EnableTraceEx2 with the plan's level, keywords and event-id
 * filter), so `filter` shows offline what a profile would have recorded:
 *
 *   level     record level <= enable level, or enable level 0; level 0
 *             (LogAlways) records pass any level.
 *   keywords  a record keyword of 0 passes, unless the entry sets
 *             ignore_keyword_0; otherwise (kw & match_any) != 0 when
 *             match_any != 0, and (kw & match_all) == match_all.
 *   whitelist when the entry has `events`, the record's id must be one.
 *
 * A record is kept when any session's entry for its provider passes all three.
 *
 * Attribution by header kind:
 *   EVENT     provider GUID; id = EVENT_DESCRIPTOR.Id.
 *   FULL/INSTANCE  the event-class GUID is the provider's GUID, or the
 *             classic_guid of one of its catalog events; id = Class.Type
 *             (opcode), the number catalogs give classic events. Classic
 *             headers carry no keyword, so only level and whitelist apply.
 *   kernel    (SYSTEM, COMPACT, PERFINFO) carry neither GUID, level nor
 *             keyword. The group maps to its classic GUID (Process/10, the
 *             image load, to ImageLoad), and the catalogs of `kind: system`
 *             providers say which (GUID, opcode) each provider produces: the
 *             record belongs to the system providers whose catalog lists it,
 *             and the listed event's keywords stand in for the record's. A
 *             kernel event no system catalog lists (e.g. Process/39 Defunct)
 *             is kept when an enabled system provider without a whitelist
 *             lists other events of the same group: ETW enables kernel
 *             events by group, so such a session would have logged it.
 *             Group 0 (the logfile header and its companions) is always
 *             kept: without it the file has no clock and no header.
 *   MESSAGE   (WPP) kept when its message GUID is an enabled provider's
 *             GUID and that entry has no whitelist; WPP headers carry no
 *             level or keyword, and message numbers are not event ids.
 */

/* Classic event GUIDs of the kernel groups (EVENT_TRACE_GROUP_* >> 8), as
 * consumers present kernel events: fixed by Windows (etl-format.md 5). */
static const char *const group_guids[] = {
	[0x00] = "68fdd900-4a3e-11d1-84f4-0000f80464e3", /* EventTrace */
	[0x01] = "3d6fa8d4-fe05-11d0-9dda-00c04fd7ba7c", /* DiskIo */
	[0x02] = "3d6fa8d3-fe05-11d0-9dda-00c04fd7ba7c", /* PageFault */
	[0x03] = "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c", /* Process */
	[0x04] = "90cbdc39-4a3e-11d1-84f4-0000f80464e3", /* FileIo */
	[0x05] = "3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c", /* Thread */
	[0x06] = "9a280ac0-c8e0-11d1-84e2-00c04fb998a2", /* TcpIp */
	[0x07] = "3282fc76-feed-498e-8aa7-e70f459d430e", /* Job */
	[0x08] = "bf3a50c5-a9c9-4988-a005-2df0b7c80f80", /* UdpIp */
	[0x09] = "ae53722e-c863-11d2-8659-00c04fa321a1", /* Registry */
	[0x0A] = "13976d09-a327-438c-950b-7f03192815c7", /* DbgPrint */
	[0x0B] = "01853a65-418f-4f36-aefc-dc0f1d2fd235", /* EventTraceConfig */
	[0x0C] = "99134383-5248-43fc-834b-529454e75df3", /* Spare1 */
	[0x0D] = "42695762-ea50-497a-9068-5cbbb35e0b95", /* Wnf */
	[0x0E] = "0268a8b6-74fd-4302-9dd0-6e8f1795c0cf", /* Pool */
	[0x0F] = "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc", /* PerfInfo */
	[0x10] = "222962ab-6180-4b88-a825-346b75f2a24a", /* Heap */
	[0x11] = "89497f50-effe-4440-8cf2-ce6b1cdcaca7", /* Object */
	[0x12] = "e43445e0-0903-48c3-b878-ff0fccebdd04", /* Power */
	[0x13] = "a9152f00-3f58-4bee-92a1-70c7d079d5dd", /* ModBound */
	[0x14] = "2cb15d1d-5fc1-11d2-abe1-00a0c911f518", /* ImageLoad */
	[0x15] = "b2d14872-7c5b-463d-8419-ee9bf7d23e04", /* Dpc */
	[0x16] = "7687a439-f752-45b8-b741-321aec0f8df9", /* Cc */
	[0x17] = "3ac66736-cc59-4cff-8115-8df50e39816b", /* CritSec */
	[0x18] = "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3", /* StackWalk */
	[0x19] = "9aec974b-5b8e-4118-9b92-3186d8002ce5", /* Ums */
	[0x1A] = "45d8cccd-539f-4b72-a8b7-5c683142609a", /* ALPC */
	[0x1B] = "d837ca92-12b9-44a5-ad6a-3a65b3578aa8", /* SplitIo */
	[0x1C] = "c861d0e2-a2c1-4d36-9f9c-970bab943a12", /* ThreadPool */
	[0x1D] = "7f2a405c-69b5-4bf9-a1f5-30e8f1afab5e", /* Hypervisor */
	[0x1E] = "2ce9a149-effe-42f0-a635-a1d39e26c8f2", /* HypervisorX */
};
#define N_GROUPS (sizeof group_guids / sizeof group_guids[0])

/* Kept/dropped per provider, keyed like `analyze counts` names providers. */
typedef struct {
	char key[48];
	const char *name; /* catalog provider name, borrowed from the rules */
	uint64_t kept, dropped;
} provider_tally;

typedef struct {
	const hs_ruleset *rs;
	const hs_plan *plan;
	const hs_etl *etl;
	hs_guid groups[N_GROUPS];
	hs_etl_writer *w;
	hs_status write_st;
	uint64_t kept, total;
	provider_tally *tallies;
	size_t n_tallies, cap_tallies, last;
	bool oom;
} filter_ctx;

static bool guid_eq(const hs_guid *a, const hs_guid *b)
{
	return a->data1 == b->data1 && a->data2 == b->data2 && a->data3 == b->data3 &&
	       memcmp(a->data4, b->data4, 8) == 0;
}

static bool level_passes(uint8_t level, const hs_plan_provider *pp)
{
	return pp->level == 0 || level <= pp->level;
}

static bool keywords_pass(uint64_t kw, const hs_plan_provider *pp)
{
	if (kw == 0)
		return !(pp->enable_property & HS_EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0);
	if (pp->match_any && !(kw & pp->match_any))
		return false;
	return (kw & pp->match_all) == pp->match_all;
}

/* OR of a catalog event's keyword masks: what the kernel would have tagged
 * the event with. */
static uint64_t cat_event_keywords(const hs_provider *p, const hs_cat_event *ce)
{
	uint64_t kw = 0;
	for (size_t i = 0; i < ce->n_keywords; i++) {
		const hs_keyword *k = hs_provider_find_keyword(p, ce->keywords[i]);
		if (k)
			kw |= k->mask;
	}
	return kw;
}

static const hs_cat_event *find_classic(const hs_provider *p, const hs_guid *g, int id)
{
	for (size_t i = 0; i < p->n_events; i++) {
		const hs_cat_event *ce = &p->events[i];
		if (ce->has_classic_guid && guid_eq(&ce->classic_guid, g) && (id < 0 || ce->id == id))
			return ce;
	}
	return NULL;
}

/* Whitelist entries of classic events name their class GUID through the
 * catalog; those without one belong to the provider's own GUID. */
static bool whitelisted(const hs_plan_provider *pp, int id, const hs_guid *classic)
{
	if (!pp->whitelist)
		return true;
	for (size_t i = 0; i < pp->n_events; i++) {
		const hs_plan_event *pe = &pp->events[i];
		if (pe->id != id)
			continue;
		if (!classic)
			return true;
		const hs_guid *g = pe->has_classic_guid ? &pe->classic_guid : &pp->provider->guid;
		if ((pe->has_classic_guid || pp->provider->has_guid) && guid_eq(g, classic))
			return true;
	}
	return false;
}

/* Every enabled provider entry, in every session: the callback says whether
 * it lets the record through. */
#define FOR_EACH_ENTRY(plan, pp)                                                      \
	for (size_t s_ = 0; s_ < (plan)->n_sessions; s_++)                            \
		for (size_t p_ = 0; p_ < (plan)->sessions[s_].n_providers; p_++)      \
			for (const hs_plan_provider *pp = &(plan)->sessions[s_].providers[p_]; pp; pp = NULL)

static bool keep_event(const filter_ctx *f, const hs_etl_record *r, const char **name)
{
	FOR_EACH_ENTRY(f->plan, pp) {
		const hs_provider *p = pp->provider;
		if (!p->has_guid || !guid_eq(&p->guid, &r->guid))
			continue;
		*name = p->name;
		if (level_passes(r->level, pp) && keywords_pass(r->keywords, pp) && whitelisted(pp, r->id, NULL))
			return true;
	}
	return false;
}

static bool keep_classic(const filter_ctx *f, const hs_etl_record *r, const char **name)
{
	FOR_EACH_ENTRY(f->plan, pp) {
		const hs_provider *p = pp->provider;
		bool own = p->has_guid && guid_eq(&p->guid, &r->guid);
		if (!own && !find_classic(p, &r->guid, -1))
			continue;
		*name = p->name;
		if (level_passes(r->level, pp) && whitelisted(pp, r->opcode, &r->guid))
			return true;
	}
	return false;
}

static bool keep_kernel(const filter_ctx *f, const hs_etl_record *r, const char **name)
{
	if (r->group == HS_ETL_GROUP_HEADER)
		return true;
	/* The image load is logged in the Process group (opcode 10) but is an
	 * ImageLoad-class event. */
	uint8_t group = r->group == HS_ETL_GROUP_PROCESS && r->opcode == 10 ? HS_ETL_GROUP_IMAGE : r->group;
	if (group >= N_GROUPS || !group_guids[group])
		return false;
	const hs_guid *g = &f->groups[group];
	bool listed = false; /* by any system catalog, enabled or not */
	for (size_t i = 0; i < f->rs->n_providers && !listed; i++)
		listed = f->rs->providers[i].kind == HS_PKIND_SYSTEM && find_classic(&f->rs->providers[i], g, r->opcode);
	FOR_EACH_ENTRY(f->plan, pp) {
		const hs_provider *p = pp->provider;
		if (p->kind != HS_PKIND_SYSTEM)
			continue;
		const hs_cat_event *ce = find_classic(p, g, r->opcode);
		if (ce) {
			*name = p->name;
			if (keywords_pass(cat_event_keywords(p, ce), pp) && whitelisted(pp, r->opcode, g))
				return true;
		} else if (!listed && !pp->whitelist && find_classic(p, g, -1)) {
			*name = p->name;
			return true;
		}
	}
	return false;
}

static bool keep_message(const filter_ctx *f, const hs_etl_record *r, const char **name)
{
	if (!r->has_guid)
		return false;
	FOR_EACH_ENTRY(f->plan, pp) {
		const hs_provider *p = pp->provider;
		if (!p->has_guid || !guid_eq(&p->guid, &r->guid))
			continue;
		*name = p->name;
		if (!pp->whitelist)
			return true;
	}
	return false;
}

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
	bool keep = false;
	switch (r->kind) {
	case HS_ETL_EVENT:
		keep = keep_event(f, r, &name);
		break;
	case HS_ETL_FULL:
	case HS_ETL_INSTANCE:
		keep = keep_classic(f, r, &name);
		break;
	case HS_ETL_SYSTEM:
	case HS_ETL_COMPACT:
	case HS_ETL_PERFINFO:
		keep = keep_kernel(f, r, &name);
		break;
	case HS_ETL_MESSAGE:
		keep = keep_message(f, r, &name);
		break;
	}
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
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "file", o->file);
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
	analyze_json_problems(&j, etl);
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
		return ANALYZE_EXIT_USAGE;
	}
	free(tried);
	if (!(*d = hs_diags_new())) {
		fputs("analyze: out of memory\n", stderr);
		return ANALYZE_EXIT_USAGE;
	}
	hs_status st = hs_rules_load(*path, *d, rs);
	hs_diags_sort(*d);
	if (hs_diags_count(*d))
		hs_diags_render(*d, stderr, HS_FMT_TEXT);
	if (st != HS_OK) {
		fprintf(stderr, "analyze: %s cannot be used to filter: %s\n", *path, hs_strerror(st));
		return ANALYZE_EXIT_USAGE;
	}
	if (!(*rs)->is_profile) {
		fprintf(stderr, "analyze: %s is a catalog; filter needs a profile (kind: profile)\n", *path);
		return ANALYZE_EXIT_USAGE;
	}
	st = hs_plan_build(*rs, HS_PLATFORM_WINDOWS, NULL, plan);
	if (st == HS_EINVAL) {
		fprintf(stderr, "analyze: profile '%s' (%s) has no windows section to filter with\n", (*rs)->name,
			*path);
		return ANALYZE_EXIT_USAGE;
	}
	if (st != HS_OK) {
		fprintf(stderr, "analyze: cannot build the plan: %s\n", hs_strerror(st));
		return ANALYZE_EXIT_USAGE;
	}
	return 0;
}

int analyze_filter(const analyze_opts *o)
{
	if (!o->output) {
		fputs("analyze: filter needs -o OUT.etl (where to write the filtered trace)\n", stderr);
		return ANALYZE_EXIT_USAGE;
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
	f.rs = rs;
	f.plan = plan;
	for (size_t g = 0; g < N_GROUPS; g++)
		if (group_guids[g])
			hs_guid_parse(group_guids[g], &f.groups[g]);
	if ((rc = analyze_open_etl(o->file, &etl)) != 0)
		goto out;
	/* The output keeps the input's identity and clock, so times read the
	 * same in both; the buffer size and compression follow the input too. */
	hs_etl_writer_opts wo;
	hs_etl_writer_opts_from(hs_etl_get_header(etl), &wo);
	hs_status st = hs_etl_writer_open(o->output, &wo, &f.w);
	if (st != HS_OK) {
		fprintf(stderr, "analyze: cannot create %s: %s\n", o->output, hs_strerror(st));
		rc = ANALYZE_EXIT_USAGE;
		goto out;
	}
	f.etl = etl;
	hs_etl_foreach(etl, HS_ETL_FILE_ORDER, on_record, &f);
	analyze_progress_done();
	if (f.write_st != HS_OK) {
		fprintf(stderr, "analyze: cannot write %s: %s\n", o->output, hs_strerror(f.write_st));
		hs_etl_writer_discard(f.w);
		rc = ANALYZE_EXIT_USAGE;
		goto out;
	}
	st = hs_etl_writer_close(f.w);
	if (st != HS_OK) {
		fprintf(stderr, "analyze: cannot write %s: %s\n", o->output, hs_strerror(st));
		rc = ANALYZE_EXIT_USAGE;
		goto out;
	}
	if (f.oom) {
		fputs("analyze: out of memory counting providers\n", stderr);
		rc = ANALYZE_EXIT_USAGE;
		goto out;
	}
	qsort(f.tallies, f.n_tallies, sizeof(*f.tallies), cmp_tally);
	if (o->json)
		print_json(o, &f, rules_path, etl);
	fprintf(stderr, "analyze: filter: kept %" PRIu64 " of %" PRIu64 " events (%" PRIu64 " dropped) -> %s\n", f.kept,
		f.total, f.total - f.kept, o->output);
	rc = analyze_report_problems(etl);
out:
	free(f.tallies);
	hs_etl_close(etl);
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	free(rules_path);
	return rc;
}
