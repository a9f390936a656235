/* etw/session.c: one ETW session's life: start (replacing a stale one), enable providers, query, capture state, flush, stop. */
#include <inttypes.h>
#include <string.h>

#include "etw/etw.h"

static void take_counters(hs_etw_session *s, const EVENT_TRACE_PROPERTIES *p)
{
	s->queried = true;
	s->buffers = p->NumberOfBuffers;
	s->buffer_kb = p->BufferSize;
	s->free_buffers = p->FreeBuffers;
	s->events_lost = p->EventsLost;
	s->buffers_written = p->BuffersWritten;
	s->log_buffers_lost = p->LogBuffersLost;
	s->rt_buffers_lost = p->RealTimeBuffersLost;
}

hs_status hs_etw_session_init(hs_etw_session *s, const hs_plan_session *ps, const char *file)
{
	memset(s, 0, sizeof(*s));
	s->ps = ps;
	const char *name = ps->session->logger_name;
	if (strlen(name) >= sizeof(s->name_utf8))
		return HS_ELIMIT;
	strcpy(s->name_utf8, name);
	hs_status st = hs_etw_widen(name, s->name, HS_ETW_MAX_NAME_CHARS);
	if (st == HS_OK && file)
		st = hs_etw_widen(file, s->file, HS_ETW_MAX_NAME_CHARS);
	return st;
}

/* The plan's properties, with real-time mode as the session asks for it
 * (the plan's flag, or off when no consumer could be opened). A real-time session
 * flushes every second: Logging Mode Constants says a real-time session with
 * a file mode does so anyway, EVENT_TRACE_PROPERTIES that a real-time
 * logger's FlushTimer 0 means 1 s; an explicit longer timer (the rules' 60 s
 * for the file alone) would hold events back from the consumer that long. */
static void props_for_start(hs_etw_props *pr, const hs_etw_session *s)
{
	hs_etw_props_for_start(pr, &s->ps->etw, s->file);
	if (s->realtime) {
		pr->p.LogFileMode |= EVENT_TRACE_REAL_TIME_MODE;
		pr->p.FlushTimer = 1;
	} else if (pr->p.LogFileMode & EVENT_TRACE_REAL_TIME_MODE) {
		/* The plan asked for real time but no consumer could be opened:
		 * the file alone, at the rules' flush interval. */
		pr->p.LogFileMode &= ~(ULONG)EVENT_TRACE_REAL_TIME_MODE;
		pr->p.FlushTimer = s->ps->session->flush_interval_s;
	}
}

hs_status hs_etw_session_start(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg)
{
	hs_etw_props pr;
	props_for_start(&pr, s);
	ULONG err = api->StartTraceW(&s->handle, s->name, &pr.p);
	if (err == ERROR_ALREADY_EXISTS) {
		/* Our names are fixed per profile, so this is an engine that was
		 * killed (or a second one): its kernel session outlived it and would
		 * keep pinning memory and writing files. */
		hs_etw_say(msg, HS_MSG_WARN,
			   "a trace session named %s is still running (left by an engine that did not stop "
			   "cleanly, or another engine with the same rules); stopping it and starting afresh",
			   s->name_utf8);
		hs_etw_props ctl;
		hs_etw_props_for_control(&ctl, NULL);
		ULONG stop = api->ControlTraceW(0, s->name, &ctl.p, EVENT_TRACE_CONTROL_STOP);
		if (stop != ERROR_SUCCESS && stop != ERROR_WMI_INSTANCE_NOT_FOUND)
			return hs_etw_report(msg, stop, "stopping the old session %s", s->name_utf8);
		s->replaced_stale = true;
		props_for_start(&pr, s);
		err = api->StartTraceW(&s->handle, s->name, &pr.p);
	}
	if (err != ERROR_SUCCESS)
		return hs_etw_report(msg, err, "StartTraceW(%s)", s->name_utf8);
	s->running = true;
	/* StartTraceW returns the sizes ETW really chose. */
	take_counters(s, &pr.p);
	return HS_OK;
}

hs_status hs_etw_session_enable(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg)
{
	const hs_plan_session *ps = s->ps;
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		char gt[37];
		hs_guid_format(&pp->provider->guid, gt);
		size_t ids = pp->whitelist ? pp->n_events : 0;
		hs_etw_enable en;
		if (hs_etw_enable_build(&en, pp) != HS_OK) {
			hs_etw_say(msg, HS_MSG_WARN,
				   "%s {%s}: more than %d event ids in one filter; the provider is skipped "
				   "(rulecheck reports this as an error)",
				   pp->provider->name, gt, HS_ETW_MAX_FILTER_IDS);
			s->providers_failed++;
			s->events_skipped += ids;
			continue;
		}
		ULONG err = api->EnableTraceEx2(s->handle, &en.provider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, pp->level,
						pp->match_any, pp->match_all, 0, &en.params);
		if (err != ERROR_SUCCESS) {
			hs_status st = hs_etw_report(msg, err, "EnableTraceEx2(%s {%s}) on %s", pp->provider->name, gt,
						     s->name_utf8);
			/* These say the session as a whole cannot work. */
			if (err == ERROR_ACCESS_DENIED || err == ERROR_NO_SYSTEM_RESOURCES || err == ERROR_INVALID_HANDLE)
				return st;
			hs_etw_say(msg, HS_MSG_WARN, "%s is skipped; the session records the other providers",
				   pp->provider->name);
			s->providers_failed++;
			s->events_skipped += ids;
			continue;
		}
		s->providers_enabled++;
		s->events_enabled += ids;
	}
	CLASSIC_EVENT_ID stacks[HS_ETW_MAX_STACK_CLASSIC_IDS];
	size_t n = hs_etw_stack_ids(ps, stacks, HS_ETW_MAX_STACK_CLASSIC_IDS);
	if (n) {
		ULONG err = api->TraceSetInformation(s->handle, TraceStackTracingInfo, stacks,
						     (ULONG)(n * sizeof(stacks[0])));
		if (err != ERROR_SUCCESS) {
			hs_etw_report(msg, err, "TraceSetInformation(TraceStackTracingInfo, %zu events) on %s", n,
				      s->name_utf8);
			hs_etw_say(msg, HS_MSG_WARN, "%s records events without call stacks", s->name_utf8);
		}
	}
	if (ps->n_providers && !s->providers_enabled) {
		hs_etw_say(msg, HS_MSG_ERROR, "no provider of session %s could be enabled; it would record nothing",
			   s->name_utf8);
		return HS_EIO;
	}
	return HS_OK;
}

/* QUERY or FLUSH (file: the flush's new file, or NULL): one ControlTraceW and the counters it returns; doing
 * ("querying", "flushing") names it in the failure. */
static hs_status control(hs_etw_session *s, const hs_etw_api *api, const WCHAR *file, ULONG code, const char *doing,
			 const hs_msg *msg)
{
	hs_etw_props ctl;
	hs_etw_props_for_control(&ctl, file);
	ULONG err = api->ControlTraceW(s->handle, NULL, &ctl.p, code);
	if (err != ERROR_SUCCESS)
		return hs_etw_report(msg, err, "%s session %s", doing, s->name_utf8);
	take_counters(s, &ctl.p);
	return HS_OK;
}

hs_status hs_etw_session_query(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg)
{
	if (!s->running)
		return HS_OK; /* the counters from STOP are final */
	return control(s, api, NULL, EVENT_TRACE_CONTROL_QUERY, "querying", msg);
}

void hs_etw_session_capture_state(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg)
{
	for (size_t i = 0; i < s->ps->n_providers; i++) {
		const hs_plan_provider *pp = &s->ps->providers[i];
		if (!pp->capture_state)
			continue;
		GUID g;
		hs_etw_guid(&g, &pp->provider->guid);
		/* Re-emits rundown state (processes, adapters, ...) that the ring
		 * has long overwritten, so the snapshot is self-contained. */
		ULONG err = api->EnableTraceEx2(s->handle, &g, EVENT_CONTROL_CODE_CAPTURE_STATE, pp->level,
						pp->match_any, pp->match_all, 0, NULL);
		if (err != ERROR_SUCCESS)
			hs_etw_report(msg, err, "capture state of %s (the snapshot may lack its rundown)",
				      pp->provider->name);
	}
}

hs_status hs_etw_session_flush(hs_etw_session *s, const hs_etw_api *api, const WCHAR *file, const hs_msg *msg)
{
	return control(s, api, file, EVENT_TRACE_CONTROL_FLUSH, "flushing", msg);
}

hs_status hs_etw_session_stop(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg)
{
	if (!s->running)
		return HS_OK;
	hs_etw_props ctl;
	hs_etw_props_for_control(&ctl, NULL);
	ULONG err = api->ControlTraceW(s->handle, NULL, &ctl.p, EVENT_TRACE_CONTROL_STOP);
	s->running = false;
	if (err == ERROR_WMI_INSTANCE_NOT_FOUND) {
		hs_etw_say(msg, HS_MSG_ERROR, "session %s was already stopped by someone else (logman, xperf, wpr?)",
			   s->name_utf8);
		return HS_EIO;
	}
	if (err != ERROR_SUCCESS)
		return hs_etw_report(msg, err, "stopping session %s", s->name_utf8);
	take_counters(s, &ctl.p);
	return HS_OK;
}

hs_status hs_etw_check_output(const hs_etw_api *api, const WCHAR *path, const char *what, const hs_msg *msg,
			      ULONGLONG *size)
{
	ULONGLONG sz = 0;
	DWORD err = api->file_size(path, &sz);
	if (size)
		*size = sz;
	char *p = hs_etw_narrow(path);
	hs_status st = HS_OK;
	if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND) {
		hs_etw_say(msg, HS_MSG_ERROR,
			   "Windows reported success, but %s was not written: %s does not exist. Nothing of it "
			   "was recorded (ETW on this system may be a stub, as under Wine).",
			   what, p ? p : "?");
		st = HS_EIO;
	} else if (err != ERROR_SUCCESS) {
		st = hs_etw_report(msg, err, "checking %s (%s)", what, p ? p : "?");
	} else if (sz == 0) {
		hs_etw_say(msg, HS_MSG_ERROR, "%s at %s is empty: no events reached it", what, p ? p : "?");
		st = HS_EIO;
	}
	free(p);
	return st;
}
