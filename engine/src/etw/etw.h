/* etw/etw.h: ETW building blocks shared by the recording backend and launch mode: parameter builders, sessions, Win32 error text. */
#ifndef HS_ETW_H
#define HS_ETW_H

#include <stdbool.h>
#include <stdio.h>

#include "etw/etw_api.h"
#include "hindsight/backend.h"
#include "hindsight/plan.h"
#include "hindsight/status.h"

/*
 * Ownership: nothing here allocates except hs_etw_narrow. Sessions borrow
 * their plan session; builders fill caller-owned storage. Messages go to the
 * FILE* given (never NULL here).
 */

/* ---- parameter blocks ---- */

/* EVENT_TRACE_PROPERTIES followed by room for the two names. The session
 * name comes first, as Microsoft's sample lays it out; control calls (QUERY,
 * FLUSH, STOP) need the full room or fail with ERROR_MORE_DATA. */
typedef struct {
	EVENT_TRACE_PROPERTIES p;
	WCHAR logger_name[HS_ETW_MAX_NAME_CHARS];
	WCHAR log_file_name[HS_ETW_MAX_NAME_CHARS];
} hs_etw_props;

/* For StartTraceW: every field from the plan, zeros elsewhere; the file name
 * (may be NULL for a buffering session) copied at LogFileNameOffset. */
void hs_etw_props_for_start(hs_etw_props *out, const hs_plan_etw *e, const WCHAR *file);
/* For ControlTraceW: zeroed, sizes and offsets only; `file` (may be NULL) is
 * the FLUSH target of a buffering session. */
void hs_etw_props_for_control(hs_etw_props *out, const WCHAR *file);

/* EnableTraceEx2's parameters for one provider. Self-referential (params
 * points into the struct): build it in place and do not copy it. */
typedef struct {
	GUID provider;
	ENABLE_TRACE_PARAMETERS params;
	EVENT_FILTER_DESCRIPTOR desc[2];
	union {
		EVENT_FILTER_EVENT_ID f;
		unsigned char bytes[HS_EVENT_FILTER_EVENT_ID_SIZE(HS_ETW_MAX_FILTER_IDS)];
	} ids, stack_ids;
} hs_etw_enable;

/* HS_ELIMIT when a list has more than 64 ids (the kernel would reject the
 * call; the rules checker prevents it, this is the last line). */
hs_status hs_etw_enable_build(hs_etw_enable *out, const hs_plan_provider *pp);

/* The session's CLASSIC_EVENT_ID stack list (system providers' stack events). */
size_t hs_etw_stack_ids(const hs_plan_session *ps, CLASSIC_EVENT_ID *out, size_t cap);

void hs_etw_guid(GUID *out, const hs_guid *g);

/* UTF-8 -> UTF-16 into out[cap] (NUL-terminated); HS_ELIMIT if it does not fit. */
hs_status hs_etw_widen(const char *s, WCHAR *out, size_t cap);
/* UTF-16 -> new UTF-8 string (free()); NULL on OOM. */
char *hs_etw_narrow(const WCHAR *s);

/* ---- Win32 errors ---- */


/* "ERROR_ACCESS_DENIED" or NULL for a code we do not name. */
const char *hs_etw_error_name(ULONG err);
/* The name, or "Win32 error <n>" written into buf (n bytes) for a code we do not name. */
const char *hs_etw_error_label(ULONG err, char *buf, size_t n);
/* What the error means for a tracing call and what the user should do. */
const char *hs_etw_error_advice(ULONG err);
hs_status hs_etw_error_status(ULONG err);
/* Messages for the user through the backend's sink (source "etw"; NULL: stderr). */
void hs_etw_say(const hs_msg *msg, hs_msg_level level, const char *fmt, ...) HS_PRINTF_FMT(3, 4);
/* "<what> failed: ERROR_X (n): advice", an error on msg. Returns hs_etw_error_status(err). */
hs_status hs_etw_report(const hs_msg *msg, ULONG err, const char *what_fmt, ...) HS_PRINTF_FMT(3, 4);

/* ---- one kernel session ---- */

typedef struct {
	const hs_plan_session *ps;
	char name_utf8[HS_ETW_MAX_NAME_CHARS * 3 + 1];
	WCHAR name[HS_ETW_MAX_NAME_CHARS];
	WCHAR file[HS_ETW_MAX_NAME_CHARS]; /* output for file modes, "" for buffering */
	TRACEHANDLE handle;
	bool running;
	/* Started with EVENT_TRACE_REAL_TIME_MODE as well (set before start;
	 * cleared and started again when no consumer could be opened). */
	bool realtime;
	bool replaced_stale; /* a session of that name was running and we stopped it */
	/* From the last QUERY (or the STOP's final numbers). */
	bool queried;
	ULONG buffers, buffer_kb, free_buffers, events_lost, buffers_written, log_buffers_lost, rt_buffers_lost;
	size_t providers_enabled, providers_failed, events_enabled, events_skipped;
} hs_etw_session;

/* Fills the session (name from the plan, absolute output path `file` or NULL). */
hs_status hs_etw_session_init(hs_etw_session *s, const hs_plan_session *ps, const char *file);
/* StartTraceW. On ERROR_ALREADY_EXISTS a session of that name is left from
 * an engine that died: it is stopped (the user told) and the start retried once. */
hs_status hs_etw_session_start(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg);
/* EnableTraceEx2 per provider and the classic stack list. A provider Windows
 * refuses is reported and skipped; access denied or no resources fail. */
hs_status hs_etw_session_enable(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg);
/* EVENT_TRACE_CONTROL_QUERY into the session's counters. */
hs_status hs_etw_session_query(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg);
/* EVENT_CONTROL_CODE_CAPTURE_STATE to every provider whose rules ask for it. */
void hs_etw_session_capture_state(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg);
/* EVENT_TRACE_CONTROL_FLUSH; for a buffering session `file` is the new file
 * the ring is written to. */
hs_status hs_etw_session_flush(hs_etw_session *s, const hs_etw_api *api, const WCHAR *file, const hs_msg *msg);
/* EVENT_TRACE_CONTROL_STOP (final counters kept). Safe to call twice. */
hs_status hs_etw_session_stop(hs_etw_session *s, const hs_etw_api *api, const hs_msg *msg);

/* ---- the real-time consumer of one session (consumer.c) ---- */

/* Opened on a session started with EVENT_TRACE_REAL_TIME_MODE: OpenTraceW on
 * its logger name, ProcessTrace on a thread of its own whose callback copies
 * each event of the session's plan providers into a bounded queue (full:
 * dropped and counted, never waited for). Ownership: borrows the session
 * (and its plan) until freed. */
typedef struct hs_etw_rt hs_etw_rt;

typedef struct {
	uint64_t received;  /* every event ProcessTrace delivered */
	uint64_t queued;    /* of those, events of the plan's providers, queued */
	uint64_t dropped;   /* of the plan's, lost because the queue was full */
	uint64_t truncated; /* queued with UserData cut at HS_ETW_RT_MAX_USERDATA */
	uint64_t foreign;   /* not the plan's (the session's header event, ...) */
} hs_etw_rt_stats;

/* The consumer of session `s` (index `session` in the plan). A failure is
 * reported on msg (OpenTraceW's or the thread's error) and nothing is left open. */
hs_status hs_etw_rt_open(hs_etw_rt **out, hs_etw_session *s, size_t session, const hs_etw_api *api, const hs_msg *msg);
/* Hands every queued event to fn (NULL: discards them) as an hs_key_event:
 * system = the plan provider's name, name = the plan event's for the id (the
 * opcode for classic events) or "?", ts_ns in the session's clock
 * (hs_etw_event_ns), raw = UserData. Returns how many. Call from one thread. */
size_t hs_etw_rt_drain(hs_etw_rt *rt, hs_key_event_fn fn, void *ctx);
/* Writes the key events drained so far (at most HS_ETW_KEY_HISTORY_BYTES of
 * them, the newest) to path as an .etl file (the ETL writer: a temporary file
 * renamed only when complete), in the session's clock; *events: how many.
 * A failure is said on msg. The triggered snapshot's key-event cut: ETW owns
 * the session's own circular file. Loop thread only. */
hs_status hs_etw_rt_write_cut(hs_etw_rt *rt, const char *path, const hs_msg *msg, uint64_t *events);
/* True once ProcessTrace returned (rc: its result). */
bool hs_etw_rt_ended(hs_etw_rt *rt, ULONG *rc);
void hs_etw_rt_counts(const hs_etw_rt *rt, hs_etw_rt_stats *out);
/* The session's Wnode.ClientContext. */
ULONG hs_etw_rt_clock(const hs_etw_rt *rt);
/* CloseTrace, then waits up to HS_ETW_RT_JOIN_MS for ProcessTrace's thread.
 * HS_EIO when it did not end (then hs_etw_rt_free keeps the memory). Safe to call twice. */
hs_status hs_etw_rt_close(hs_etw_rt *rt, const hs_msg *msg);
/* Frees a closed consumer; false (and nothing freed) while its thread may still run. */
bool hs_etw_rt_free(hs_etw_rt *rt);

/* EVENT_TRACE_LOGFILEW.ProcessTraceMode for a session with this ClientContext. */
ULONG hs_etw_rt_trace_mode(ULONG client_context);
/* An event's TimeStamp as delivered with that mode -> ns: QPC (ClientContext
 * 0 or 1) ticks / QueryPerformanceFrequency; system time and converted
 * cycle-counter stamps (2, 3) are 100 ns units since 1601. */
uint64_t hs_etw_event_ns(ULONG client_context, ULONGLONG ts, ULONGLONG qpc_per_second);
/* The same clock now. */
uint64_t hs_etw_now_ns(const hs_etw_api *api, ULONG client_context);

/* ---- the trigger marker (marker.c) ----
 *
 * A provider of our own, found through the plan: the catalog event with
 * `means: marker` (rules/providers/windows.yaml: Hindsight-Marker) in any of
 * the plan's sessions. The engine registers it (EventRegister) before the
 * sessions enable it, writes each marker with EventWriteString (a string-only
 * event: id 0, the level and keyword below) and unregisters it at stop. ETW
 * delivers the event to every session that enabled the provider and whose
 * level, keywords and id filter let it through. */
typedef struct {
	const hs_provider *provider; /* NULL: the plan has no marker provider */
	const hs_cat_event *event;
	GUID guid;
	/* The event's level: the lowest non-zero level a session enables the
	 * provider with (ETW writes an event when its level <= the session's, 0
	 * there meaning no limit), TRACE_LEVEL_INFORMATION when all are 0. Never 0:
	 * EventWriteString's page asks for a non-zero level and keyword. */
	UCHAR level;
	ULONGLONG keyword; /* the catalog event's keywords' masks */
	size_t sessions;   /* of the plan's sessions, those whose filters let it through */
	size_t blocked;    /* those that enable the provider but filter the marker out */
	REGHANDLE reg;
	bool registered;
	uint64_t written, failed;
} hs_etw_marker;

/* Longest marker text in UTF-16 units; longer text is cut (at a character).
 * An event is at most 64 KB minus its header (EventWriteString:
 * ERROR_ARITHMETIC_OVERFLOW) and must fit one session buffer (ERROR_MORE_DATA). */
#define HS_ETW_MARKER_MAX_CHARS 2048

/* Fills m from the plan (m->provider NULL when no session has a marker event). */
void hs_etw_marker_plan(hs_etw_marker *m, const hs_plan *plan);
/* Would ETW write the marker into a session enabling the provider as pp does? */
bool hs_etw_marker_passes(const hs_etw_marker *m, const hs_plan_provider *pp);
/* EventRegister. A failure is reported on msg and leaves the marker off
 * (the recording goes on without it). */
void hs_etw_marker_register(hs_etw_marker *m, const hs_etw_api *api, const hs_msg *msg);
/* EventWriteString. HS_EUNSUPPORTED when not registered or no session lets it through. */
hs_status hs_etw_marker_write(hs_etw_marker *m, const hs_etw_api *api, const char *text, const hs_msg *msg);
/* EventUnregister; safe to call twice. */
void hs_etw_marker_unregister(hs_etw_marker *m, const hs_etw_api *api, const hs_msg *msg);

/* Checks that ETW really wrote `path`: HS_OK when it exists and is not
 * empty; otherwise says so on msg (with `what`, e.g. "the ring snapshot"). */
hs_status hs_etw_check_output(const hs_etw_api *api, const WCHAR *path, const char *what, const hs_msg *msg,
			      ULONGLONG *size);

/* hs_launch_run on Windows (hindsight/launch.h): an ETW sampling session around the program (etw/launch.c); the backend table's launch. */
hs_status hs_etw_launch_run(const hs_plan *plan, const hs_launch_opts *o, const hs_msg *msg, hs_launch_result *res);

#endif
