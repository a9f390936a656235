/* etw/consumer.c: the real-time consumer of a key-event session: ProcessTrace on its own thread copies events into a bounded queue that poll drains to the observer. */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "etl/etl_format.h"
#include "etw/etw.h"
#include "hindsight/etl_writer.h"

/*
 * Threads: ETW calls rt_callback on the thread that runs ProcessTrace (one
 * thread per consumer, so one producer); the engine's loop drains in poll
 * (one consumer). The queue is a single-producer single-consumer ring of
 * fixed slots with C11 atomics: the callback never waits (a full ring counts
 * a drop), the drain never races it. Nothing else is shared: the match table
 * and the plan are read-only once the thread starts, counters are atomic.
 */

typedef struct {
	size_t provider;       /* index in the session's plan providers */
	bool classic;          /* matched by an event's classic GUID (system providers): the id is the opcode */
	bool cut;              /* UserData was longer than HS_ETW_RT_MAX_USERDATA */
	EVENT_HEADER hdr;      /* as ProcessTrace delivered it (TimeStamp raw or converted, see hs_etw_rt_trace_mode) */
	ETW_BUFFER_CONTEXT bc;
	ULONG cpu;
	USHORT len;            /* UserData bytes kept */
	unsigned char data[HS_ETW_RT_MAX_USERDATA];
} rt_event;

/* The fields of the event being handed to the observer: TDH on a copy of
 * its record (header, buffer context, UserData). */
typedef struct {
	const hs_etw_api *api;
	EVENT_RECORD r;
	bool cut;
	int info_state; /* 0: not asked yet, 1: info holds it, -1: TDH could not describe it */
	union {
		TRACE_EVENT_INFO tei;
		unsigned char bytes[HS_ETW_TDH_INFO_BYTES];
	} *info;
} rt_fields;

typedef struct {
	GUID guid;
	size_t provider;
	bool classic;
} rt_match;

/* An EVENT_HEADER record's header in an .etl file (etl-format.md). */
#define HS_ETW_CUT_HEADER_BYTES 0x50

/* One drained key event as an .etl record (EVENT_HEADER file layout), for
 * the snapshot cut; a FIFO list of at most HS_ETW_KEY_HISTORY_BYTES. */
typedef struct hist_rec {
	struct hist_rec *next;
	uint16_t cpu;
	uint32_t len;
	uint8_t rec[];
} hist_rec;

struct hs_etw_rt {
	hs_etw_session *s;
	size_t session;
	const hs_etw_api *api;
	EVENT_TRACE_LOGFILEW lf; /* OpenTraceW reads and updates it; kept for the consumer's life */
	TRACEHANDLE h;
	HANDLE thread;
	bool joined;
	bool closed;
	bool end_reported;
	ULONG clock; /* the session's Wnode.ClientContext */
	ULONGLONG qpc_per_second;
	rt_match *match;
	size_t n_match;
	rt_event *q; /* [HS_ETW_RT_QUEUE_EVENTS] */
	rt_fields fields;
	hs_key_fields key_fields;
	atomic_size_t head, tail;
	atomic_ullong received, queued, dropped, truncated, foreign;
	atomic_int ended;
	atomic_ulong process_rc;
	/* The key-event history (loop thread only): oldest first. */
	hist_rec *hist_head, *hist_tail;
	size_t hist_bytes;
	uint64_t hist_n, hist_evicted, hist_cut, hist_lost;
	/* A (clock, FILETIME) pair read at open: the cut's header ties its
	 * raw time stamps to wall time with it. */
	ULONGLONG ref_ts, ref_filetime;
};

_Static_assert(HS_ETW_RT_MAX_USERDATA <= 0xFFFF, "UserDataLength is a USHORT");

/* ---- clocks ---- */

static uint64_t ticks_to_ns(ULONGLONG t, ULONGLONG per_second)
{
	if (!per_second)
		return 0;
	/* Split so that t * 1e9 cannot overflow: (t % f) * 1e9 < f * 1e9 fits
	 * for any f below 1.8e10 Hz (QPC runs at 10 MHz on current Windows). */
	return (t / per_second) * 1000000000ull + (t % per_second) * 1000000000ull / per_second;
}

static bool clock_is_qpc(ULONG client_context)
{
	/* 0: the default, which is QPC from Windows Vista on (WNODE_HEADER). */
	return client_context == 0 || client_context == HS_ETW_CLOCK_QPC;
}

ULONG hs_etw_rt_trace_mode(ULONG client_context)
{
	ULONG mode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
	/* QPC and system time stay raw (QPC ticks, or 100 ns units of system
	 * time); a CPU-cycle clock has no frequency we could convert with, so
	 * ETW converts those to system time itself (EVENT_TRACE_LOGFILE,
	 * PROCESS_TRACE_MODE_RAW_TIMESTAMP). */
	if (client_context != HS_ETW_CLOCK_CYCLE)
		mode |= PROCESS_TRACE_MODE_RAW_TIMESTAMP;
	return mode;
}

uint64_t hs_etw_event_ns(ULONG client_context, ULONGLONG ts, ULONGLONG qpc_per_second)
{
	if (clock_is_qpc(client_context))
		return ticks_to_ns(ts, qpc_per_second);
	return (uint64_t)ts * 100u; /* system time (raw or converted): 100 ns units since 1601 */
}

uint64_t hs_etw_now_ns(const hs_etw_api *api, ULONG client_context)
{
	if (clock_is_qpc(client_context)) {
		ULONGLONG f = 0;
		ULONGLONG t = api->qpc(&f);
		return ticks_to_ns(t, f);
	}
	return (uint64_t)api->system_time() * 100u;
}

/* ---- ETW's thread ---- */

static const rt_match *find_match(const hs_etw_rt *rt, const GUID *g)
{
	for (size_t i = 0; i < rt->n_match; i++)
		if (!memcmp(&rt->match[i].guid, g, sizeof(*g)))
			return &rt->match[i];
	return NULL;
}

static VOID WINAPI rt_callback(PEVENT_RECORD er)
{
	hs_etw_rt *rt = er->UserContext;
	atomic_fetch_add_explicit(&rt->received, 1, memory_order_relaxed);
	/* The session's header event (EventTraceGuid) and anything not in the
	 * plan: not key events. */
	const rt_match *m = find_match(rt, &er->EventHeader.ProviderId);
	if (!m) {
		atomic_fetch_add_explicit(&rt->foreign, 1, memory_order_relaxed);
		return;
	}
	size_t tail = atomic_load_explicit(&rt->tail, memory_order_relaxed);
	size_t head = atomic_load_explicit(&rt->head, memory_order_acquire);
	if (tail - head >= HS_ETW_RT_QUEUE_EVENTS) {
		atomic_fetch_add_explicit(&rt->dropped, 1, memory_order_relaxed);
		return; /* never wait on ETW's thread: its buffers would back up */
	}
	rt_event *e = &rt->q[tail % HS_ETW_RT_QUEUE_EVENTS];
	e->provider = m->provider;
	e->classic = m->classic;
	e->hdr = er->EventHeader;
	e->bc = er->BufferContext;
	e->cpu = (er->EventHeader.Flags & EVENT_HEADER_FLAG_PROCESSOR_INDEX) ? er->BufferContext.ProcessorIndex
									     : er->BufferContext.ProcessorNumber;
	USHORT n = er->UserDataLength;
	e->cut = n > HS_ETW_RT_MAX_USERDATA;
	if (e->cut) {
		n = HS_ETW_RT_MAX_USERDATA;
		atomic_fetch_add_explicit(&rt->truncated, 1, memory_order_relaxed);
	}
	if (!er->UserData)
		n = 0;
	if (n)
		memcpy(e->data, er->UserData, n);
	e->len = n;
	atomic_store_explicit(&rt->tail, tail + 1, memory_order_release);
	atomic_fetch_add_explicit(&rt->queued, 1, memory_order_relaxed);
}

static DWORD WINAPI rt_thread(LPVOID arg)
{
	hs_etw_rt *rt = arg;
	TRACEHANDLE h = rt->h;
	/* Blocks until CloseTrace (or the session's stop). */
	ULONG rc = rt->api->ProcessTrace(&h, 1, NULL, NULL);
	atomic_store(&rt->process_rc, rc);
	atomic_store(&rt->ended, 1);
	return rc;
}

/* ---- fields (the engine's thread, inside the observer) ---- */

/* The event's top-level property `name` (UTF-16 in wname) from TDH's schema. */
static const EVENT_PROPERTY_INFO *find_property(rt_fields *f, const char *field, WCHAR *wname)
{
	if (f->cut || hs_etw_widen(field, wname, HS_ETW_TDH_NAME_CHARS) != HS_OK)
		return NULL;
	if (f->info_state == 0) {
		ULONG size = sizeof(*f->info);
		f->info_state = f->api->TdhGetEventInformation(&f->r, 0, NULL, &f->info->tei, &size) == ERROR_SUCCESS ? 1 : -1;
	}
	if (f->info_state != 1)
		return NULL;
	const TRACE_EVENT_INFO *tei = &f->info->tei;
	size_t room = (sizeof(*f->info) - offsetof(TRACE_EVENT_INFO, EventPropertyInfoArray)) / sizeof(EVENT_PROPERTY_INFO);
	for (ULONG i = 0; i < tei->TopLevelPropertyCount && i < room; i++) {
		const EVENT_PROPERTY_INFO *p = &tei->EventPropertyInfoArray[i];
		if (p->NameOffset >= sizeof(*f->info) - sizeof(WCHAR))
			continue;
		const WCHAR *pn = (const WCHAR *)(f->info->bytes + p->NameOffset);
		size_t left = (sizeof(*f->info) - p->NameOffset) / sizeof(WCHAR);
		if (wcsnlen(pn, left) < left && !wcscmp(pn, wname))
			return p;
	}
	return NULL;
}

/* Integer fields (TDH in-types INT8 .. UINT64, HEXINT32/64, BOOLEAN), one
 * value (no arrays, no structs), widened by their signedness; a UINT64 above
 * INT64_MAX does not fit and is false. */
static bool rt_num(const hs_key_event *ev, const char *field, int64_t *out)
{
	rt_fields *f = ev->fields->ctx;
	WCHAR wname[HS_ETW_TDH_NAME_CHARS];
	const EVENT_PROPERTY_INFO *p = find_property(f, field, wname);
	if (!p || (p->Flags & (PropertyStruct | PropertyParamLength | PropertyParamCount)) || p->count > 1)
		return false;
	ULONG width;
	bool is_signed = false;
	switch (p->nonStructType.InType) {
	case HS_TDH_INTYPE_INT8:
		is_signed = true;
		/* fall through */
	case HS_TDH_INTYPE_UINT8:
		width = 1;
		break;
	case HS_TDH_INTYPE_INT16:
		is_signed = true;
		/* fall through */
	case HS_TDH_INTYPE_UINT16:
		width = 2;
		break;
	case HS_TDH_INTYPE_INT32:
		is_signed = true;
		/* fall through */
	case HS_TDH_INTYPE_UINT32:
	case HS_TDH_INTYPE_HEXINT32:
	case HS_TDH_INTYPE_BOOLEAN: /* a 4-byte Win32 BOOL */
		width = 4;
		break;
	case HS_TDH_INTYPE_INT64:
		is_signed = true;
		/* fall through */
	case HS_TDH_INTYPE_UINT64:
	case HS_TDH_INTYPE_HEXINT64:
		width = 8;
		break;
	default:
		return false;
	}
	PROPERTY_DATA_DESCRIPTOR d = {.PropertyName = (ULONGLONG)(uintptr_t)wname, .ArrayIndex = ULONG_MAX};
	ULONG size = 0;
	if (f->api->TdhGetPropertySize(&f->r, 0, NULL, 1, &d, &size) != ERROR_SUCCESS || size != width)
		return false;
	unsigned char b[8] = {0};
	if (f->api->TdhGetProperty(&f->r, 0, NULL, 1, &d, size, b) != ERROR_SUCCESS)
		return false;
	uint64_t u = 0;
	for (ULONG i = 0; i < width; i++)
		u |= (uint64_t)b[i] << (8 * i); /* event data is little-endian, as Windows is */
	if (is_signed && width < 8 && (u >> (8 * width - 1)) & 1)
		u |= ~0ull << (8 * width);
	if (!is_signed && width == 8 && u > (uint64_t)INT64_MAX)
		return false;
	memcpy(out, &u, sizeof(*out));
	return true;
}

/* String fields: TDH in-types UNICODESTRING (UTF-16) and ANSISTRING (the
 * system code page), one value, as UTF-8 cut at cap - 1 bytes (never inside
 * a character). Other types are false (numbers: num). */
static bool rt_str(const hs_key_event *ev, const char *field, char *buf, size_t cap)
{
	if (!cap)
		return false;
	buf[0] = 0;
	rt_fields *f = ev->fields->ctx;
	WCHAR wname[HS_ETW_TDH_NAME_CHARS];
	const EVENT_PROPERTY_INFO *p = find_property(f, field, wname);
	if (!p || (p->Flags & (PropertyStruct | PropertyParamCount)) || p->count > 1)
		return false;
	USHORT in = p->nonStructType.InType;
	if (in != HS_TDH_INTYPE_UNICODESTRING && in != HS_TDH_INTYPE_ANSISTRING)
		return false;
	PROPERTY_DATA_DESCRIPTOR d = {.PropertyName = (ULONGLONG)(uintptr_t)wname, .ArrayIndex = ULONG_MAX};
	ULONG size = 0;
	/* A string cannot be longer than the payload the queue kept. */
	union {
		WCHAR w[HS_ETW_RT_MAX_USERDATA / 2 + 1];
		char a[HS_ETW_RT_MAX_USERDATA + 1];
	} raw;
	if (f->api->TdhGetPropertySize(&f->r, 0, NULL, 1, &d, &size) != ERROR_SUCCESS || size > HS_ETW_RT_MAX_USERDATA)
		return false;
	memset(&raw, 0, sizeof(raw));
	if (size && f->api->TdhGetProperty(&f->r, 0, NULL, 1, &d, size, (PBYTE)&raw) != ERROR_SUCCESS)
		return false;
	WCHAR wide[HS_ETW_RT_MAX_USERDATA + 1];
	int nw;
	if (in == HS_TDH_INTYPE_UNICODESTRING) {
		nw = (int)wcsnlen(raw.w, size / sizeof(WCHAR));
		memcpy(wide, raw.w, (size_t)nw * sizeof(WCHAR));
	} else {
		int na = (int)strnlen(raw.a, size);
		nw = na ? MultiByteToWideChar(CP_ACP, 0, raw.a, na, wide, HS_ETW_RT_MAX_USERDATA) : 0;
		if (na && nw <= 0)
			return false;
	}
	char utf8[HS_ETW_RT_MAX_USERDATA * 3 + 1];
	int n = nw ? WideCharToMultiByte(CP_UTF8, 0, wide, nw, utf8, (int)sizeof(utf8) - 1, NULL, NULL) : 0;
	if (nw && n <= 0)
		return false;
	size_t len = (size_t)n;
	if (len > cap - 1) {
		len = cap - 1;
		while (len && ((unsigned char)utf8[len] & 0xC0) == 0x80)
			len--; /* not inside a UTF-8 sequence */
	}
	memcpy(buf, utf8, len);
	buf[len] = 0;
	return true;
}

/* ---- the engine's thread ---- */

static hs_status build_match(hs_etw_rt *rt)
{
	const hs_plan_session *ps = rt->s->ps;
	size_t cap = ps->n_providers;
	for (size_t i = 0; i < ps->n_providers; i++)
		cap += ps->providers[i].n_events;
	rt->match = calloc(cap ? cap : 1, sizeof(*rt->match));
	if (!rt->match)
		return HS_ENOMEM;
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		GUID g;
		if (pp->provider->kind != HS_PKIND_SYSTEM) {
			hs_etw_guid(&g, &pp->provider->guid);
			if (!find_match(rt, &g))
				rt->match[rt->n_match++] = (rt_match){g, i, false};
		}
		/* System providers' events arrive under their classic event GUIDs. */
		for (size_t k = 0; k < pp->n_events; k++) {
			if (!pp->events[k].has_classic_guid)
				continue;
			hs_etw_guid(&g, &pp->events[k].classic_guid);
			if (!find_match(rt, &g))
				rt->match[rt->n_match++] = (rt_match){g, i, true};
		}
	}
	return HS_OK;
}

static void hist_free(hs_etw_rt *rt);

static void rt_destroy(hs_etw_rt *rt)
{
	hist_free(rt);
	free(rt->fields.info);
	free(rt->match);
	free(rt->q);
	free(rt);
}

hs_status hs_etw_rt_open(hs_etw_rt **out, hs_etw_session *s, size_t session, const hs_etw_api *api, const hs_msg *msg)
{
	*out = NULL;
	hs_etw_rt *rt = calloc(1, sizeof(*rt));
	if (!rt)
		return HS_ENOMEM;
	rt->s = s;
	rt->session = session;
	rt->api = api;
	rt->h = INVALID_PROCESSTRACE_HANDLE;
	rt->clock = s->ps->etw.client_context;
	rt->q = malloc(sizeof(*rt->q) * HS_ETW_RT_QUEUE_EVENTS);
	rt->fields.info = malloc(sizeof(*rt->fields.info));
	rt->fields.api = api;
	rt->key_fields = (hs_key_fields){.num = rt_num, .str = rt_str, .ctx = &rt->fields};
	if (!rt->q || !rt->fields.info || build_match(rt) != HS_OK) {
		rt_destroy(rt);
		return HS_ENOMEM;
	}
	atomic_init(&rt->head, 0);
	atomic_init(&rt->tail, 0);
	if (clock_is_qpc(rt->clock))
		rt->ref_ts = api->qpc(&rt->qpc_per_second);
	rt->ref_filetime = api->system_time();
	if (!clock_is_qpc(rt->clock))
		rt->ref_ts = rt->ref_filetime;
	/* Zeroed, then the real-time session's name and our callback
	 * (EVENT_TRACE_LOGFILE: LogFileName NULL when LoggerName is set). */
	memset(&rt->lf, 0, sizeof(rt->lf));
	rt->lf.LoggerName = s->name;
	rt->lf.ProcessTraceMode = hs_etw_rt_trace_mode(rt->clock);
	rt->lf.EventRecordCallback = rt_callback;
	rt->lf.Context = rt;
	rt->h = api->OpenTraceW(&rt->lf);
	if (rt->h == INVALID_PROCESSTRACE_HANDLE) {
		DWORD err = api->last_error();
		hs_status st = hs_etw_report(msg, err ? err : ERROR_INVALID_HANDLE, "OpenTraceW(%s), the real-time consumer",
					     s->name_utf8);
		rt_destroy(rt);
		return st;
	}
	DWORD err = api->create_thread(rt_thread, rt, &rt->thread);
	if (err != ERROR_SUCCESS) {
		api->CloseTrace(rt->h);
		hs_status st = hs_etw_report(msg, err, "starting the real-time consumer's thread for %s", s->name_utf8);
		rt_destroy(rt);
		return st;
	}
	*out = rt;
	return HS_OK;
}

/* ---- the key-event history and its .etl cut ---- */

/* The event as an EVENT_HEADER record of an .etl file (etl-format.md: Size,
 * HeaderType, the 0xC0 marker byte, then the EVENT_HEADER fields as ETW
 * delivered them): without extended data (the consumer keeps none), so that
 * flag goes; a cut UserData stays cut (counted). */
static void hist_push(hs_etw_rt *rt, const rt_event *e)
{
	size_t len = HS_ETW_CUT_HEADER_BYTES + e->len;
	hist_rec *r = malloc(sizeof(*r) + len);
	if (!r) {
		rt->hist_lost++;
		return;
	}
	const EVENT_HEADER *h = &e->hdr;
	uint8_t *o = r->rec;
	memset(o, 0, HS_ETW_CUT_HEADER_BYTES);
	hs_put16(o, (uint16_t)len);
	o[2] = (h->Flags & EVENT_HEADER_FLAG_32_BIT_HEADER) ? HS_ETL_HT_EVENT_HEADER32 : HS_ETL_HT_EVENT_HEADER64;
	o[3] = 0xC0;
	hs_put16(o + 4, (uint16_t)(h->Flags & ~(EVENT_HEADER_FLAG_EXTENDED_INFO | EVENT_HEADER_FLAG_PROCESSOR_INDEX)));
	hs_put16(o + 6, h->EventProperty);
	hs_put32(o + 8, h->ThreadId);
	hs_put32(o + 12, h->ProcessId);
	hs_put64(o + 16, (uint64_t)h->TimeStamp.QuadPart);
	hs_put32(o + 0x18, (uint32_t)h->ProviderId.Data1);
	hs_put16(o + 0x1C, h->ProviderId.Data2);
	hs_put16(o + 0x1E, h->ProviderId.Data3);
	memcpy(o + 0x20, h->ProviderId.Data4, 8);
	const EVENT_DESCRIPTOR *d = &h->EventDescriptor;
	hs_put16(o + 0x28, d->Id);
	o[0x2A] = d->Version;
	o[0x2B] = d->Channel;
	o[0x2C] = d->Level;
	o[0x2D] = d->Opcode;
	hs_put16(o + 0x2E, d->Task);
	hs_put64(o + 0x30, d->Keyword);
	hs_put64(o + 0x38, h->ProcessorTime);
	hs_put32(o + 0x40, (uint32_t)h->ActivityId.Data1);
	hs_put16(o + 0x44, h->ActivityId.Data2);
	hs_put16(o + 0x46, h->ActivityId.Data3);
	memcpy(o + 0x48, h->ActivityId.Data4, 8);
	memcpy(o + HS_ETW_CUT_HEADER_BYTES, e->data, e->len);
	r->next = NULL;
	r->cpu = (uint16_t)(e->cpu > HS_ETL_PROCESSOR_INDEX_MASK ? HS_ETL_PROCESSOR_INDEX_MASK : e->cpu);
	r->len = (uint32_t)len;
	if (rt->hist_tail)
		rt->hist_tail->next = r;
	else
		rt->hist_head = r;
	rt->hist_tail = r;
	rt->hist_bytes += len;
	rt->hist_n++;
	rt->hist_cut += e->cut;
	while (rt->hist_bytes > HS_ETW_KEY_HISTORY_BYTES && rt->hist_head != rt->hist_tail) {
		hist_rec *old = rt->hist_head;
		rt->hist_head = old->next;
		rt->hist_bytes -= old->len;
		rt->hist_n--;
		rt->hist_evicted++;
		free(old);
	}
}

static void hist_free(hs_etw_rt *rt)
{
	for (hist_rec *r = rt->hist_head, *next; r; r = next) {
		next = r->next;
		free(r);
	}
	rt->hist_head = rt->hist_tail = NULL;
	rt->hist_bytes = 0;
	rt->hist_n = 0;
}

hs_status hs_etw_rt_write_cut(hs_etw_rt *rt, const char *path, const hs_msg *msg, uint64_t *events)
{
	*events = 0;
	hs_etl_writer_opts o;
	hs_etl_writer_opts_default(&o);
	o.buffer_size = HS_ETW_KEY_CUT_BUFFER_BYTES;
	o.logger_name = rt->s->name_utf8;
	o.log_file_name = path;
	o.start_time = rt->ref_filetime;
	o.start_ts = (int64_t)rt->ref_ts;
	if (clock_is_qpc(rt->clock)) {
		o.clock_type = HS_ETW_CLOCK_QPC;
		o.perf_freq = rt->qpc_per_second;
	} else {
		/* System time, raw or converted from cycles by ETW (hs_etw_rt_trace_mode). */
		o.clock_type = HS_ETW_CLOCK_SYSTEM;
		o.perf_freq = 10000000u;
	}
	uint32_t cpus = 1;
	for (const hist_rec *r = rt->hist_head; r; r = r->next)
		if ((uint32_t)r->cpu + 1 > cpus)
			cpus = (uint32_t)r->cpu + 1;
	o.cpus = cpus;
	hs_etl_writer *w = NULL;
	hs_status st = hs_etl_writer_open(path, &o, &w);
	for (const hist_rec *r = rt->hist_head; st == HS_OK && r; r = r->next)
		st = hs_etl_writer_add_raw(w, r->cpu, r->rec, r->len);
	if (st == HS_OK) {
		st = hs_etl_writer_close(w); /* renames the temporary file only when all went well */
	} else if (w) {
		hs_etl_writer_discard(w);
	}
	if (st != HS_OK) {
		hs_etw_say(msg, HS_MSG_WARN, "%s: the key-event cut %s could not be written (%s)", rt->s->name_utf8,
			   path, hs_strerror(st));
		return st;
	}
	*events = rt->hist_n;
	hs_etw_say(msg, HS_MSG_INFO,
		   "%s: %llu key events the engine's consumer saw written to %s (%llu older ones no longer kept, "
		   "%llu with their payload cut at %d bytes)",
		   rt->s->name_utf8, (unsigned long long)rt->hist_n, path, (unsigned long long)rt->hist_evicted,
		   (unsigned long long)rt->hist_cut, HS_ETW_RT_MAX_USERDATA);
	return HS_OK;
}

size_t hs_etw_rt_drain(hs_etw_rt *rt, hs_key_event_fn fn, void *ctx)
{
	const hs_plan_session *ps = rt->s->ps;
	size_t head = atomic_load_explicit(&rt->head, memory_order_relaxed);
	size_t tail = atomic_load_explicit(&rt->tail, memory_order_acquire);
	size_t n = 0;
	for (; head != tail; head++, n++) {
		const rt_event *e = &rt->q[head % HS_ETW_RT_QUEUE_EVENTS];
		hist_push(rt, e);
		if (fn) {
			const hs_plan_provider *pp = &ps->providers[e->provider];
			const char *name = NULL;
			const EVENT_DESCRIPTOR *d = &e->hdr.EventDescriptor;
			for (size_t k = 0; k < pp->n_events && !name; k++) {
				const hs_plan_event *pe = &pp->events[k];
				if (e->classic ? pe->has_classic_guid && pe->id == d->Opcode : pe->id == d->Id)
					name = pe->name;
			}
			/* The record TDH reads: the callback's, minus extended data. */
			rt_fields *f = &rt->fields;
			memset(&f->r, 0, sizeof(f->r));
			f->r.EventHeader = e->hdr;
			f->r.BufferContext = e->bc;
			f->r.UserDataLength = e->len;
			f->r.UserData = (PVOID)e->data;
			f->cut = e->cut;
			f->info_state = 0;
			hs_key_event ev = {
				.session = rt->session,
				.cpu = e->cpu,
				.ts_ns = hs_etw_event_ns(rt->clock, (ULONGLONG)e->hdr.TimeStamp.QuadPart, rt->qpc_per_second),
				.system = pp->provider->name ? pp->provider->name : "?",
				.name = name ? name : "?",
				.pid = (int)e->hdr.ProcessId,
				.raw = e->data,
				.raw_len = e->len,
				.fields = &rt->key_fields,
			};
			fn(ctx, &ev);
		}
		/* The slot is the callback's again only after the observer is done with it. */
		atomic_store_explicit(&rt->head, head + 1, memory_order_release);
	}
	return n;
}

bool hs_etw_rt_ended(hs_etw_rt *rt, ULONG *rc)
{
	if (!atomic_load(&rt->ended))
		return false;
	if (rc)
		*rc = atomic_load(&rt->process_rc);
	return true;
}

void hs_etw_rt_counts(const hs_etw_rt *rt, hs_etw_rt_stats *out)
{
	hs_etw_rt *m = (hs_etw_rt *)rt; /* atomics are read-modify objects even for a load */
	out->received = atomic_load(&m->received);
	out->queued = atomic_load(&m->queued);
	out->dropped = atomic_load(&m->dropped);
	out->truncated = atomic_load(&m->truncated);
	out->foreign = atomic_load(&m->foreign);
}

ULONG hs_etw_rt_clock(const hs_etw_rt *rt)
{
	return rt->clock;
}

hs_status hs_etw_rt_close(hs_etw_rt *rt, const hs_msg *msg)
{
	if (rt->joined)
		return HS_OK;
	if (!rt->closed) {
		rt->closed = true;
		/* Real-time: CloseTrace may come before ProcessTrace returns, which
		 * then returns once it has delivered what its buffers hold
		 * (ERROR_CTX_CLOSE_PENDING says exactly that, a success). */
		ULONG err = rt->api->CloseTrace(rt->h);
		if (err != ERROR_SUCCESS && err != ERROR_CTX_CLOSE_PENDING)
			hs_etw_report(msg, err, "CloseTrace, the real-time consumer of %s", rt->s->name_utf8);
	}
	DWORD err = rt->api->join_thread(rt->thread, HS_ETW_RT_JOIN_MS);
	if (err != ERROR_SUCCESS) {
		if (err == WAIT_TIMEOUT)
			hs_etw_say(msg, HS_MSG_WARN,
				   "the real-time consumer of %s did not end within %d ms of CloseTrace",
				   rt->s->name_utf8, HS_ETW_RT_JOIN_MS);
		else
			hs_etw_report(msg, err, "waiting for the real-time consumer of %s", rt->s->name_utf8);
		return HS_EIO;
	}
	rt->joined = true;
	return HS_OK;
}

bool hs_etw_rt_free(hs_etw_rt *rt)
{
	if (!rt)
		return true;
	/* A thread still in ProcessTrace may call back into rt: keep it (a
	 * bounded leak at exit) rather than free memory it writes to. */
	if (!rt->joined)
		return false;
	rt_destroy(rt);
	return true;
}
