/* plan/match.c: ETW's enable-filter test (level, keywords, event-id whitelist, classic and kernel attribution) applied to recorded events against a plan. */
#include <string.h>

#include "hindsight/etl_kernel.h"
#include "hindsight/plan_match.h"
#include "plan/etw_defs.h"

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

/* Every enabled provider entry, in every session. */
#define FOR_EACH_ENTRY(plan, pp)                                                      \
	for (size_t s_ = 0; s_ < (plan)->n_sessions; s_++)                            \
		for (size_t p_ = 0; p_ < (plan)->sessions[s_].n_providers; p_++)      \
			for (const hs_plan_provider *pp = &(plan)->sessions[s_].providers[p_]; pp; pp = NULL)

static bool match_event(const hs_plan *plan, const hs_plan_match_record *r, const char **name)
{
	FOR_EACH_ENTRY(plan, pp) {
		const hs_provider *p = pp->provider;
		if (!p->has_guid || !guid_eq(&p->guid, &r->guid))
			continue;
		*name = p->name;
		if (level_passes(r->level, pp) && keywords_pass(r->keywords, pp) && whitelisted(pp, r->id, NULL))
			return true;
	}
	return false;
}

static bool match_classic(const hs_plan *plan, const hs_plan_match_record *r, const char **name)
{
	FOR_EACH_ENTRY(plan, pp) {
		const hs_provider *p = pp->provider;
		bool own = p->has_guid && guid_eq(&p->guid, &r->guid);
		if (!own && !find_classic(p, &r->guid, -1))
			continue;
		*name = p->name;
		if (level_passes(r->level, pp) && whitelisted(pp, r->id, &r->guid))
			return true;
	}
	return false;
}

static bool match_kernel(const hs_plan *plan, const hs_plan_match_record *r, const char **name)
{
	if (!r->has_guid)
		return false;
	const hs_guid *g = &r->guid;
	const hs_ruleset *rs = plan->rules;
	bool listed = false; /* by any system catalog, enabled or not */
	for (size_t i = 0; rs && i < rs->n_providers && !listed; i++)
		listed = rs->providers[i].kind == HS_PKIND_SYSTEM && find_classic(&rs->providers[i], g, r->id);
	FOR_EACH_ENTRY(plan, pp) {
		const hs_provider *p = pp->provider;
		if (p->kind != HS_PKIND_SYSTEM)
			continue;
		const hs_cat_event *ce = find_classic(p, g, r->id);
		if (ce) {
			*name = p->name;
			if (keywords_pass(cat_event_keywords(p, ce), pp) && whitelisted(pp, r->id, g))
				return true;
		} else if (!listed && !pp->whitelist && find_classic(p, g, -1)) {
			*name = p->name;
			return true;
		}
	}
	return false;
}

static bool match_message(const hs_plan *plan, const hs_plan_match_record *r, const char **name)
{
	if (!r->has_guid)
		return false;
	FOR_EACH_ENTRY(plan, pp) {
		const hs_provider *p = pp->provider;
		if (!p->has_guid || !guid_eq(&p->guid, &r->guid))
			continue;
		*name = p->name;
		if (!pp->whitelist)
			return true;
	}
	return false;
}

bool hs_plan_match(const hs_plan *plan, const hs_plan_match_record *r, const char **provider)
{
	const char *unused = NULL;
	const char **name = provider ? provider : &unused;
	switch (r->kind) {
	case HS_MATCH_EVENT: return match_event(plan, r, name);
	case HS_MATCH_CLASSIC: return match_classic(plan, r, name);
	case HS_MATCH_KERNEL: return match_kernel(plan, r, name);
	case HS_MATCH_HEADER: return true;
	case HS_MATCH_MESSAGE: return match_message(plan, r, name);
	}
	return false;
}

bool hs_plan_match_record_from_etl(const hs_etl_record *r, hs_plan_match_record *out)
{
	memset(out, 0, sizeof *out);
	out->level = r->level;
	out->keywords = r->keywords;
	out->guid = r->guid;
	out->has_guid = r->has_guid;
	switch (r->kind) {
	case HS_ETL_EVENT:
		/* An EVENT_HEADER always names its provider. */
		out->kind = HS_MATCH_EVENT;
		out->has_guid = true;
		out->id = r->id;
		return true;
	case HS_ETL_FULL:
	case HS_ETL_INSTANCE:
		out->kind = HS_MATCH_CLASSIC;
		out->has_guid = true;
		out->id = r->opcode;
		return true;
	case HS_ETL_SYSTEM:
	case HS_ETL_COMPACT:
	case HS_ETL_PERFINFO:
		out->kind = hs_etl_kernel_header(r) ? HS_MATCH_HEADER : HS_MATCH_KERNEL;
		out->id = r->opcode; /* kernel headers carry no level or keyword: the class's catalog events stand in */
		out->has_guid = hs_etl_kernel_class_guid(r, &out->guid);
		return true;
	case HS_ETL_MESSAGE:
		out->kind = HS_MATCH_MESSAGE;
		out->id = r->id;
		return true;
	}
	return false;
}

bool hs_plan_match_etl(const hs_plan *plan, const hs_etl_record *r, const char **provider)
{
	hs_plan_match_record m;
	return hs_plan_match_record_from_etl(r, &m) && hs_plan_match(plan, &m, provider);
}
