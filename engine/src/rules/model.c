/* rules/model.c: lookups and text forms for the rules model (names, GUIDs). */
#include <stdio.h>
#include <string.h>

#include "hindsight/rules.h"
#include "rules/rules_int.h"

const hs_provider *hs_rules_find_provider(const hs_ruleset *rs, const char *name)
{
	for (size_t i = 0; i < rs->n_providers; i++)
		if (rs->providers[i].name && strcmp(rs->providers[i].name, name) == 0)
			return &rs->providers[i];
	return NULL;
}

const hs_cat_event *hs_provider_find_event(const hs_provider *p, int id, const char *name)
{
	for (size_t i = 0; i < p->n_events; i++) {
		const hs_cat_event *e = &p->events[i];
		if (id >= 0 ? e->id == id : (e->name && name && strcmp(e->name, name) == 0))
			return e;
	}
	return NULL;
}

const hs_keyword *hs_provider_find_keyword(const hs_provider *p, const char *name)
{
	for (size_t i = 0; i < p->n_keywords; i++)
		if (strcmp(p->keywords[i].name, name) == 0)
			return &p->keywords[i];
	return NULL;
}

bool hs_cat_field_is_string(const hs_cat_field *f)
{
	/* The kernel's filter_assign_type: dynamic and relative-location char
	 * arrays, fixed char arrays, and char pointers are strings. */
	const char *t = f->type;
	if (strncmp(t, "win:", 4) == 0)
		return strstr(t + 4, "String") != NULL; /* UnicodeString, AnsiString, CountedUnicodeString, ... */
	if ((strstr(t, "__data_loc") || strstr(t, "__rel_loc")) && strstr(t, "char"))
		return true;
	if (strchr(t, '[') && strstr(t, "char"))
		return true;
	return strcmp(t, "char *") == 0 || strcmp(t, "const char *") == 0;
}

const hs_cat_field *hs_cat_event_field(const hs_ruleset *rs, const hs_cat_event *e, const char *name)
{
	if (!e || !e->has_fields)
		return NULL;
	for (size_t i = 0; i < e->n_fields; i++)
		if (strcmp(e->fields[i].name, name) == 0)
			return &e->fields[i];
	/* The common_* fields are ftrace's; an ETW event (id >= 0) has its header, which is not payload. */
	for (size_t i = 0; rs && e->id < 0 && i < rs->n_common_fields; i++)
		if (strcmp(rs->common_fields[i].name, name) == 0)
			return &rs->common_fields[i];
	return NULL;
}

const char *const hs_alert_names[] = {"crash",      "hang",     "gpu-reset", "device-removed",
				      "disconnect", "oom-kill", "io-error",  NULL};

const char *const hs_trigger_kind_names[] = {
	[HS_TRIGGER_EVENT] = "event", [HS_TRIGGER_REGEX] = "regex", [HS_TRIGGER_FRAME_TIME] = "frame_time",
	[HS_TRIGGER_MANUAL] = "manual", [HS_TRIGGER_DEADLINE] = "deadline", [HS_TRIGGER_COUNTER] = "counter",
	[HS_TRIGGER_COUNTER + 1] = NULL};

const char *hs_trigger_kind_name(hs_trigger_kind k)
{
	return (unsigned)k <= HS_TRIGGER_COUNTER ? hs_trigger_kind_names[k] : "?";
}

const char *hs_platform_name(hs_platform p)
{
	switch (p) {
	case HS_PLATFORM_WINDOWS: return "windows";
	case HS_PLATFORM_LINUX: return "linux";
	case HS_PLATFORM_NONE: break;
	}
	return "none";
}

hs_platform hs_platform_parse(const char *s)
{
	if (strcmp(s, "windows") == 0)
		return HS_PLATFORM_WINDOWS;
	if (strcmp(s, "linux") == 0)
		return HS_PLATFORM_LINUX;
	return HS_PLATFORM_NONE;
}

hs_platform hs_platform_host(void)
{
#ifdef _WIN32
	return HS_PLATFORM_WINDOWS;
#else
	return HS_PLATFORM_LINUX;
#endif
}

const char *hs_mode_name(hs_session_mode m)
{
	switch (m) {
	case HS_MODE_FILE_CIRCULAR: return "file-circular";
	case HS_MODE_BUFFERING: return "buffering";
	case HS_MODE_SAMPLING: return "sampling";
	}
	return "?";
}

const char *hs_provider_kind_name(hs_provider_kind k)
{
	switch (k) {
	case HS_PKIND_MANIFEST: return "manifest";
	case HS_PKIND_TRACELOGGING: return "tracelogging";
	case HS_PKIND_SYSTEM: return "system";
	case HS_PKIND_FTRACE: return "ftrace";
	}
	return "?";
}

const hs_selection *hs_rules_selection(const hs_ruleset *rs, hs_platform p, size_t s, size_t e)
{
	hs_rules_priv *priv = hs_rules_priv_of(rs);
	if (!priv->selections[p] || !priv->selections[p][s])
		return NULL;
	return &priv->selections[p][s][e];
}

const hs_provider *const *hs_rules_selected_providers(const hs_ruleset *rs, hs_platform p, size_t s, size_t e,
						       size_t *n)
{
	const hs_selection *sel = hs_rules_selection(rs, p, s, e);
	*n = sel ? sel->n : 0;
	return *n ? sel->providers : NULL;
}
