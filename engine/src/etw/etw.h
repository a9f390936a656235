/* etw/etw.h: ETW building blocks shared by the recording backend and launch mode: parameter builders, sessions, Win32 error text. */
#ifndef HS_ETW_H
#define HS_ETW_H

#include <stdbool.h>
#include <stdio.h>

#include "etw/etw_api.h"
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
/* What the error means for a tracing call and what the user should do. */
const char *hs_etw_error_advice(ULONG err);
hs_status hs_etw_error_status(ULONG err);
/* "engine: <what> failed: ERROR_X (n): advice" on msg. Returns hs_etw_error_status(err). */
hs_status hs_etw_report(FILE *msg, ULONG err, const char *what_fmt, ...)
	HS_PRINTF_FMT(3, 4);

/* ---- one kernel session ---- */

typedef struct {
	const hs_plan_session *ps;
	char name_utf8[HS_ETW_MAX_NAME_CHARS * 3 + 1];
	WCHAR name[HS_ETW_MAX_NAME_CHARS];
	WCHAR file[HS_ETW_MAX_NAME_CHARS]; /* output for file modes, "" for buffering */
	TRACEHANDLE handle;
	bool running;
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
hs_status hs_etw_session_start(hs_etw_session *s, const hs_etw_api *api, FILE *msg);
/* EnableTraceEx2 per provider and the classic stack list. A provider Windows
 * refuses is reported and skipped; access denied or no resources fail. */
hs_status hs_etw_session_enable(hs_etw_session *s, const hs_etw_api *api, FILE *msg);
/* EVENT_TRACE_CONTROL_QUERY into the session's counters. */
hs_status hs_etw_session_query(hs_etw_session *s, const hs_etw_api *api, FILE *msg);
/* EVENT_CONTROL_CODE_CAPTURE_STATE to every provider whose rules ask for it. */
void hs_etw_session_capture_state(hs_etw_session *s, const hs_etw_api *api, FILE *msg);
/* EVENT_TRACE_CONTROL_FLUSH; for a buffering session `file` is the new file
 * the ring is written to. */
hs_status hs_etw_session_flush(hs_etw_session *s, const hs_etw_api *api, const WCHAR *file, FILE *msg);
/* EVENT_TRACE_CONTROL_STOP (final counters kept). Safe to call twice. */
hs_status hs_etw_session_stop(hs_etw_session *s, const hs_etw_api *api, FILE *msg);

/* Checks that ETW really wrote `path`: HS_OK when it exists and is not
 * empty; otherwise says so on msg (with `what`, e.g. "the ring snapshot"). */
hs_status hs_etw_check_output(const hs_etw_api *api, const WCHAR *path, const char *what, FILE *msg,
			      ULONGLONG *size);

#endif
