/* etw/marker.c: the trigger marker on Windows: our own provider (found through the plan), registered, written with EventWriteString, unregistered. */
#include <stdlib.h>
#include <string.h>

#include "etw/etw.h"

/* TRACE_LEVEL_INFORMATION (evntrace.h). */
#define MARKER_DEFAULT_LEVEL 4

static ULONGLONG event_keywords(const hs_provider *p, const hs_cat_event *e)
{
	ULONGLONG m = 0;
	for (size_t i = 0; i < e->n_keywords; i++) {
		const hs_keyword *kw = hs_provider_find_keyword(p, e->keywords[i]);
		if (kw)
			m |= kw->mask;
	}
	return m;
}

static const hs_cat_event *marker_event(const hs_provider *p)
{
	for (size_t i = 0; i < p->n_events; i++)
		if (p->events[i].means == HS_MEANS_MARKER)
			return &p->events[i];
	return NULL;
}

bool hs_etw_marker_passes(const hs_etw_marker *m, const hs_plan_provider *pp)
{
	if (!m->provider || pp->provider != m->provider)
		return false;
	/* Level: an event is written when its level is <= the session's; the
	 * session's 0 means no limit (EnableTraceEx2, Level). */
	if (pp->level && m->level > pp->level)
		return false;
	/* Keywords: a keyword-0 event passes any masks unless the session set
	 * IGNORE_KEYWORD_0; otherwise any of MatchAny (0: all) and all of MatchAll. */
	if (!m->keyword) {
		if (pp->enable_property & HS_EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0)
			return false;
	} else if ((pp->match_any && !(m->keyword & pp->match_any)) || (m->keyword & pp->match_all) != pp->match_all) {
		return false;
	}
	/* An id whitelist must hold the event's id (EventWriteString's is 0). */
	if (pp->whitelist) {
		for (size_t i = 0; i < pp->n_events; i++)
			if (pp->events[i].id == m->event->id)
				return true;
		return false;
	}
	return true;
}

void hs_etw_marker_plan(hs_etw_marker *m, const hs_plan *plan)
{
	memset(m, 0, sizeof(*m));
	/* The first provider of the plan with a marker event is ours. */
	for (size_t s = 0; s < plan->n_sessions && !m->provider; s++)
		for (size_t i = 0; i < plan->sessions[s].n_providers && !m->provider; i++) {
			const hs_provider *p = plan->sessions[s].providers[i].provider;
			const hs_cat_event *e = p->has_guid ? marker_event(p) : NULL;
			if (e) {
				m->provider = p;
				m->event = e;
			}
		}
	if (!m->provider)
		return;
	hs_etw_guid(&m->guid, &m->provider->guid);
	m->keyword = event_keywords(m->provider, m->event);
	for (size_t s = 0; s < plan->n_sessions; s++)
		for (size_t i = 0; i < plan->sessions[s].n_providers; i++) {
			const hs_plan_provider *pp = &plan->sessions[s].providers[i];
			if (pp->provider == m->provider && pp->level && (!m->level || pp->level < m->level))
				m->level = pp->level;
		}
	if (!m->level)
		m->level = MARKER_DEFAULT_LEVEL;
	for (size_t s = 0; s < plan->n_sessions; s++)
		for (size_t i = 0; i < plan->sessions[s].n_providers; i++) {
			const hs_plan_provider *pp = &plan->sessions[s].providers[i];
			if (pp->provider != m->provider)
				continue;
			if (hs_etw_marker_passes(m, pp))
				m->sessions++;
			else
				m->blocked++;
			break;
		}
}

void hs_etw_marker_register(hs_etw_marker *m, const hs_etw_api *api, const hs_msg *msg)
{
	if (!m->provider || m->registered)
		return;
	char gt[37];
	hs_guid_format(&m->provider->guid, gt);
	if (m->blocked)
		hs_etw_say(msg, HS_MSG_WARN,
			   "warning: %zu session(s) enable %s but their level, keywords or id filter keep its "
			   "marker event (id %d) out",
			   m->blocked, m->provider->name, m->event->id);
	if (!m->sessions)
		return;
	/* No enable callback: EventWriteString asks ETW, which knows the sessions. */
	ULONG err = api->EventRegister(&m->guid, NULL, NULL, &m->reg);
	if (err != ERROR_SUCCESS) {
		hs_etw_report(msg, err, "EventRegister(%s {%s})", m->provider->name, gt);
		hs_etw_say(msg, HS_MSG_WARN, "snapshots are taken without a marker in the trace");
		return;
	}
	m->registered = true;
}

/* UTF-8 -> UTF-16 of at most HS_ETW_MARKER_MAX_CHARS - 1 units, cut at a
 * character (never inside a surrogate pair). NULL on OOM or invalid UTF-8. */
static WCHAR *marker_text(const char *text)
{
	WCHAR *w = malloc(HS_ETW_MARKER_MAX_CHARS * sizeof(WCHAR));
	if (!w)
		return NULL;
	size_t n = strlen(text);
	/* 1..3 UTF-8 bytes make one UTF-16 unit, 4 make two: cutting the bytes at
	 * HS_ETW_MARKER_MAX_CHARS - 1 always fits. */
	if (n > HS_ETW_MARKER_MAX_CHARS - 1) {
		n = HS_ETW_MARKER_MAX_CHARS - 1;
		while (n && ((unsigned char)text[n] & 0xC0) == 0x80)
			n--; /* not inside a character */
	}
	int k = n ? MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, text, (int)n, w, HS_ETW_MARKER_MAX_CHARS - 1)
		  : 0;
	if (n && k <= 0) {
		free(w);
		return NULL;
	}
	w[k] = 0;
	return w;
}

hs_status hs_etw_marker_write(hs_etw_marker *m, const hs_etw_api *api, const char *text, const hs_msg *msg)
{
	if (!m->registered)
		return HS_EUNSUPPORTED;
	WCHAR *w = marker_text(text);
	if (!w) {
		m->failed++;
		hs_etw_say(msg, HS_MSG_ERROR, "the marker text is not valid UTF-8; no marker written");
		return HS_EINVAL;
	}
	ULONG err = api->EventWriteString(m->reg, m->level, m->keyword, w);
	free(w);
	if (err != ERROR_SUCCESS) {
		m->failed++;
		return hs_etw_report(msg, err, "EventWriteString(%s) (the snapshot has no marker)", m->provider->name);
	}
	m->written++;
	return HS_OK;
}

void hs_etw_marker_unregister(hs_etw_marker *m, const hs_etw_api *api, const hs_msg *msg)
{
	if (!m->registered)
		return;
	m->registered = false;
	ULONG err = api->EventUnregister(m->reg);
	if (err != ERROR_SUCCESS)
		hs_etw_report(msg, err, "EventUnregister(%s)", m->provider->name);
}
