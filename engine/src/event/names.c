/* event/names.c: names for event identities, from the rules' catalogs, the kernel groups and the trace's own names. */
#include "hindsight/event_names.h"
#include "hindsight/etl_kernel.h"

#include <stdio.h>
#include <string.h>

const hs_provider *hs_event_find_provider_guid(const hs_ruleset *rs, const hs_guid *g)
{
	for (size_t i = 0; rs && i < rs->n_providers; i++) {
		const hs_provider *p = &rs->providers[i];
		if (p->has_guid && memcmp(&p->guid, g, sizeof *g) == 0)
			return p;
	}
	return NULL;
}

const hs_provider *hs_event_find_provider_system(const hs_ruleset *rs, const char *system)
{
	for (size_t i = 0; rs && system && i < rs->n_providers; i++) {
		const hs_provider *p = &rs->providers[i];
		if (p->kind == HS_PKIND_FTRACE && p->system && strcmp(p->system, system) == 0)
			return p;
	}
	return NULL;
}

void hs_event_names_label(const hs_event_names *n, const hs_event_key *k, const char *provider_name,
			  const char *event_name, hs_event_label *out)
{
	const hs_ruleset *rs = n ? n->rules : NULL;
	out->catalog = NULL;
	out->cat_event = NULL;
	char g[37];
	switch (k->cls) {
	case HS_EVCLS_KERNEL: {
		const char *gn = hs_etl_kernel_group_name(k->group);
		if (gn)
			snprintf(out->provider, sizeof out->provider, "kernel %s (0x%02x)", gn, k->group);
		else
			snprintf(out->provider, sizeof out->provider, "kernel group 0x%02x", k->group);
		snprintf(out->event, sizeof out->event, "opcode %u", k->num);
		return;
	}
	case HS_EVCLS_WPP:
		snprintf(out->provider, sizeof out->provider, "WPP");
		snprintf(out->event, sizeof out->event, "message %u", k->num);
		return;
	case HS_EVCLS_FTRACE: {
		/* The catalog names the system's provider; the event keeps the kernel's name. */
		const hs_provider *p = hs_event_find_provider_system(rs, provider_name);
		snprintf(out->provider, sizeof out->provider, "%s", p ? p->name : provider_name ? provider_name : "?");
		snprintf(out->event, sizeof out->event, "%s", event_name ? event_name : "?");
		out->catalog = p;
		out->cat_event = p && event_name ? hs_provider_find_event(p, -1, event_name) : NULL;
		return;
	}
	default:
		break;
	}
	/* ID and OPCODE: a provider GUID. A catalog name beats the trace's own. */
	hs_guid_format_lower(&k->guid, g);
	const hs_provider *p = hs_event_find_provider_guid(rs, &k->guid);
	if (p)
		snprintf(out->provider, sizeof out->provider, "%s", p->name);
	else if (provider_name && provider_name[0])
		snprintf(out->provider, sizeof out->provider, "%s {%s}", provider_name, g);
	else
		snprintf(out->provider, sizeof out->provider, "{%s}", g);
	/* Catalogs name manifest events by id; classic opcodes are not in them. */
	const hs_cat_event *ce = p && k->cls == HS_EVCLS_ID ? hs_provider_find_event(p, (int)k->num, NULL) : NULL;
	if (event_name && event_name[0])
		snprintf(out->event, sizeof out->event, "%s (id %u)", event_name, k->num);
	else if (ce && ce->name)
		snprintf(out->event, sizeof out->event, "%s (id %u)", ce->name, k->num);
	else
		snprintf(out->event, sizeof out->event, "%s %u", k->cls == HS_EVCLS_ID ? "id" : "opcode", k->num);
	out->catalog = p;
	out->cat_event = ce;
}

const char *hs_event_key_counts_id(const hs_event_key *k, const char *system, char *buf, size_t cap)
{
	char g[37];
	switch (k->cls) {
	case HS_EVCLS_KERNEL:
		snprintf(buf, cap, "kernel:0x%02x", k->group);
		return "opcode";
	case HS_EVCLS_WPP:
		snprintf(buf, cap, "wpp");
		return "msg";
	case HS_EVCLS_FTRACE:
		snprintf(buf, cap, "%s", system ? system : "?");
		return "event";
	case HS_EVCLS_ID:
		hs_guid_format_lower(&k->guid, g);
		snprintf(buf, cap, "%s", g);
		return "id";
	default:
		hs_guid_format_lower(&k->guid, g);
		snprintf(buf, cap, "%s", g);
		return "opcode";
	}
}
