/* etw/consumer.c: the real-time consumer of a key-event session: ProcessTrace on its own thread copies events into a bounded queue that poll drains to the observer. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "etw/etw.h"

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
	USHORT id;
	UCHAR version, opcode, level;
	ULONG pid, tid, cpu;
	ULONGLONG ts_raw;      /* EVENT_HEADER.TimeStamp as ProcessTrace delivered it */
	USHORT len;            /* UserData bytes kept */
	unsigned char data[HS_ETW_RT_MAX_USERDATA];
} rt_event;

typedef struct {
	GUID guid;
	size_t provider;
	bool classic;
} rt_match;

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
	atomic_size_t head, tail;
	atomic_ullong received, queued, dropped, truncated, foreign;
	atomic_int ended;
	atomic_ulong process_rc;
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
	const EVENT_HEADER *h = &er->EventHeader;
	e->provider = m->provider;
	e->classic = m->classic;
	e->id = h->EventDescriptor.Id;
	e->version = h->EventDescriptor.Version;
	e->opcode = h->EventDescriptor.Opcode;
	e->level = h->EventDescriptor.Level;
	e->pid = h->ProcessId;
	e->tid = h->ThreadId;
	e->cpu = (h->Flags & EVENT_HEADER_FLAG_PROCESSOR_INDEX) ? er->BufferContext.ProcessorIndex
								  : er->BufferContext.ProcessorNumber;
	e->ts_raw = (ULONGLONG)h->TimeStamp.QuadPart;
	USHORT n = er->UserDataLength;
	if (n > HS_ETW_RT_MAX_USERDATA) {
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

static void rt_destroy(hs_etw_rt *rt)
{
	free(rt->match);
	free(rt->q);
	free(rt);
}

hs_status hs_etw_rt_open(hs_etw_rt **out, hs_etw_session *s, size_t session, const hs_etw_api *api, FILE *msg)
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
	if (!rt->q || build_match(rt) != HS_OK) {
		rt_destroy(rt);
		return HS_ENOMEM;
	}
	atomic_init(&rt->head, 0);
	atomic_init(&rt->tail, 0);
	if (clock_is_qpc(rt->clock))
		api->qpc(&rt->qpc_per_second);
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

size_t hs_etw_rt_drain(hs_etw_rt *rt, hs_key_event_fn fn, void *ctx)
{
	const hs_plan_session *ps = rt->s->ps;
	size_t head = atomic_load_explicit(&rt->head, memory_order_relaxed);
	size_t tail = atomic_load_explicit(&rt->tail, memory_order_acquire);
	size_t n = 0;
	for (; head != tail; head++, n++) {
		const rt_event *e = &rt->q[head % HS_ETW_RT_QUEUE_EVENTS];
		if (fn) {
			const hs_plan_provider *pp = &ps->providers[e->provider];
			const char *name = NULL;
			for (size_t k = 0; k < pp->n_events && !name; k++) {
				const hs_plan_event *pe = &pp->events[k];
				if (e->classic ? pe->has_classic_guid && pe->id == e->opcode : pe->id == e->id)
					name = pe->name;
			}
			hs_key_event ev = {
				.session = rt->session,
				.cpu = e->cpu,
				.ts_ns = hs_etw_event_ns(rt->clock, e->ts_raw, rt->qpc_per_second),
				.system = pp->provider->name ? pp->provider->name : "?",
				.name = name ? name : "?",
				.pid = (int)e->pid,
				.raw = e->data,
				.raw_len = e->len,
				.fields = NULL, /* TDH decoding is not built yet (docs/windows-backend.md) */
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

hs_status hs_etw_rt_close(hs_etw_rt *rt, FILE *msg)
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
			fprintf(msg, "engine: the real-time consumer of %s did not end within %d ms of CloseTrace\n",
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
