/* etw/build.c: turns plan numbers into the exact parameter blocks StartTraceW, ControlTraceW and EnableTraceEx2 receive. */
#include <stdlib.h>
#include <string.h>

#include "etw/etw.h"

_Static_assert(offsetof(hs_etw_props, logger_name) == HS_SIZEOF_EVENT_TRACE_PROPERTIES,
	       "the session name follows the properties directly");
_Static_assert(offsetof(hs_etw_props, log_file_name) == HS_SIZEOF_EVENT_TRACE_PROPERTIES + 2 * HS_ETW_MAX_NAME_CHARS,
	       "the file name follows the session name's full room");
_Static_assert(sizeof(hs_etw_props) == HS_SIZEOF_EVENT_TRACE_PROPERTIES + 4 * HS_ETW_MAX_NAME_CHARS,
	       "no padding after the names");

static void props_frame(hs_etw_props *out)
{
	memset(out, 0, sizeof(*out));
	out->p.Wnode.BufferSize = sizeof(*out);
	out->p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
	out->p.LoggerNameOffset = offsetof(hs_etw_props, logger_name);
	out->p.LogFileNameOffset = offsetof(hs_etw_props, log_file_name);
}

static void copy_file_name(hs_etw_props *out, const WCHAR *file)
{
	if (!file || !file[0])
		return;
	size_t n = wcslen(file);
	if (n >= HS_ETW_MAX_NAME_CHARS)
		n = HS_ETW_MAX_NAME_CHARS - 1; /* callers check lengths; never overrun */
	memcpy(out->log_file_name, file, n * sizeof(WCHAR));
}

void hs_etw_props_for_start(hs_etw_props *out, const hs_plan_etw *e, const WCHAR *file)
{
	props_frame(out);
	/* The planner computed sizes for the same layout; if they ever differ the
	 * plan printed to the user would not be what the kernel gets. */
	out->p.Wnode.ClientContext = e->client_context;
	out->p.Wnode.Flags = e->wnode_flags;
	out->p.BufferSize = e->buffer_size_kb;
	out->p.MinimumBuffers = e->min_buffers;
	out->p.MaximumBuffers = e->max_buffers;
	out->p.MaximumFileSize = e->max_file_mb;
	out->p.LogFileMode = e->log_file_mode;
	out->p.FlushTimer = e->flush_timer;
	out->p.EnableFlags = e->enable_flags;
	/* The plan's offsets are what `engine --plan` showed; they match this
	 * layout (asserted above) or are 0 for "no log file" (buffering). */
	out->p.LoggerNameOffset = e->logger_name_offset;
	out->p.LogFileNameOffset = e->log_file_name_offset;
	if (e->log_file_name_offset)
		copy_file_name(out, file);
}

void hs_etw_props_for_control(hs_etw_props *out, const WCHAR *file)
{
	/* Both offsets set with room for 1024 characters each: ETW writes the
	 * names back on QUERY/STOP. An empty file name means none. */
	props_frame(out);
	copy_file_name(out, file);
}

void hs_etw_guid(GUID *out, const hs_guid *g)
{
	out->Data1 = g->data1;
	out->Data2 = g->data2;
	out->Data3 = g->data3;
	memcpy(out->Data4, g->data4, sizeof(out->Data4));
}

static hs_status id_filter(EVENT_FILTER_DESCRIPTOR *d, EVENT_FILTER_EVENT_ID *f, ULONG type, const hs_plan_event *ev,
			   size_t n)
{
	if (n > HS_ETW_MAX_FILTER_IDS)
		return HS_ELIMIT;
	f->FilterIn = TRUE; /* an allow-list: only these ids pass */
	f->Reserved = 0;
	f->Count = (USHORT)n;
	for (size_t i = 0; i < n; i++)
		f->Events[i] = (USHORT)ev[i].id;
	d->Ptr = (ULONGLONG)(uintptr_t)f;
	d->Size = HS_EVENT_FILTER_EVENT_ID_SIZE(n);
	d->Type = type;
	return HS_OK;
}

hs_status hs_etw_enable_build(hs_etw_enable *out, const hs_plan_provider *pp)
{
	memset(out, 0, sizeof(*out));
	hs_etw_guid(&out->provider, &pp->provider->guid);
	out->params.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
	out->params.EnableProperty = pp->enable_property;
	ULONG n = 0;
	if (pp->whitelist) {
		hs_status st = id_filter(&out->desc[n], &out->ids.f, EVENT_FILTER_TYPE_EVENT_ID, pp->events, pp->n_events);
		if (st != HS_OK)
			return st;
		n++;
	}
	/* Manifest providers' stack lists are a STACKWALK filter; system
	 * providers take theirs through TraceStackTracingInfo instead. */
	if (pp->n_stack_events && pp->provider->kind != HS_PKIND_SYSTEM) {
		hs_status st = id_filter(&out->desc[n], &out->stack_ids.f, EVENT_FILTER_TYPE_STACKWALK, pp->stack_events,
					 pp->n_stack_events);
		if (st != HS_OK)
			return st;
		n++;
	}
	out->params.EnableFilterDesc = n ? out->desc : NULL;
	out->params.FilterDescCount = n;
	return HS_OK;
}

size_t hs_etw_stack_ids(const hs_plan_session *ps, CLASSIC_EVENT_ID *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		if (pp->provider->kind != HS_PKIND_SYSTEM)
			continue;
		for (size_t k = 0; k < pp->n_stack_events && n < cap; k++) {
			const hs_plan_event *e = &pp->stack_events[k];
			if (!e->has_classic_guid)
				continue;
			memset(&out[n], 0, sizeof(out[n]));
			hs_etw_guid(&out[n].EventGuid, &e->classic_guid);
			out[n].Type = (UCHAR)e->id;
			n++;
		}
	}
	return n;
}

hs_status hs_etw_widen(const char *s, WCHAR *out, size_t cap)
{
	if (!cap)
		return HS_ELIMIT;
	out[0] = 0;
	if (!*s)
		return HS_OK;
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, out, (int)cap);
	if (n > 0)
		return HS_OK;
	out[0] = 0;
	return GetLastError() == ERROR_INSUFFICIENT_BUFFER ? HS_ELIMIT : HS_EINVAL;
}

char *hs_etw_narrow(const WCHAR *s)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, s, -1, NULL, 0, NULL, NULL);
	if (n <= 0)
		return strdup("");
	char *out = malloc((size_t)n);
	if (out && WideCharToMultiByte(CP_UTF8, 0, s, -1, out, n, NULL, NULL) <= 0)
		out[0] = 0;
	return out;
}
