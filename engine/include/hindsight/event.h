/* hindsight/event.h: one decoded event shape for ETL and trace.dat records, for views, triggers and reports. */
#ifndef HINDSIGHT_EVENT_H
#define HINDSIGHT_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/etl.h"
#include "hindsight/rules.h" /* hs_guid */
#include "hindsight/tracedat.h"

/*
 * Consumers (live view, triggers, HTML report) see one struct whatever the
 * file format, and ask for named fields without knowing how the format
 * stores them.
 *
 * Ownership: an hs_event is a view of the record it was made from. Every
 * pointer in it (provider, name, comm, payload, source) is borrowed from that
 * record and valid only while the record is, i.e. during the reader's
 * callback. Copy what must outlive it. The key is a plain value: keep it as
 * long as you like.
 *
 * Time: `time_ns` is nanoseconds since the Unix epoch (UTC) when
 * `time_is_unix` is set. ETL records always have it (their FILETIME is
 * absolute). trace.dat timestamps are nanoseconds of the ring's trace clock
 * (CLOCK_MONOTONIC for "mono"): not wall time, and the file does not say when
 * that clock started, so time_is_unix stays false unless the caller knows the
 * offset (the recording engine does) and adds it. `raw_ts` keeps the format's
 * own timestamp (ETL: the session clock; trace.dat: the trace clock).
 */

typedef enum { HS_EVENT_ETL = 1, HS_EVENT_TRACEDAT = 2 } hs_event_format;

/*
 * Which event a record is, across formats: the identity records are counted,
 * named and (later) matched under. Defined once here; every counter, namer and
 * report uses these numbers.
 *
 * The version is not part of it: the counts format, the catalogs and the
 * rules' whitelists all name an ETW event by id alone, so versions of one
 * event count together (hs_event.version still says which one a record is).
 */
typedef enum {
	HS_EVCLS_KERNEL = 1, /* ETL kernel record (system, compact, perfinfo header): group + opcode */
	HS_EVCLS_ID = 2,     /* ETL EVENT_HEADER (manifest, TraceLogging): provider GUID + event id */
	HS_EVCLS_OPCODE = 3, /* ETL classic (full, instance header): provider GUID + opcode */
	HS_EVCLS_WPP = 4,    /* ETL WPP message: message number */
	HS_EVCLS_FTRACE = 5, /* trace.dat: the file's 16-bit event id (common_type) */
} hs_event_class;

/* Compared and hashed as bytes, so it has no padding (every byte is a field)
 * and is always made whole by hs_event_from_* or a {0} initialiser plus
 * field stores. */
typedef struct {
	uint8_t cls;        /* hs_event_class */
	uint8_t group;      /* KERNEL: the group (HookId >> 8); 0 otherwise */
	uint16_t zero;      /* always 0 (explicit, so there is no padding) */
	uint32_t num;       /* KERNEL, OPCODE: opcode; ID: event id; WPP: message number; FTRACE: event id */
	uint32_t name_hash; /* ID: hs_event_name_hash of a TraceLogging event's name, which tells apart the
			       events a TraceLogging provider logs under one id; 0 otherwise. Counters that
			       show ids only (the counts format) set it to 0. */
	hs_guid guid;       /* ID, OPCODE: the provider; zero otherwise */
} hs_event_key;

typedef struct {
	hs_event_format format;
	uint64_t time_ns;  /* see above */
	bool time_is_unix;
	int64_t raw_ts;
	uint32_t cpu;
	uint32_t pid, tid; /* UINT32_MAX when unknown; trace.dat: tid = common_pid, pid = tid (no tgid in ftrace records) */
	/* who: ETW provider GUID, or the ftrace system name */
	bool has_guid;
	hs_guid guid;
	const char *provider; /* ftrace system; TraceLogging: the provider's own name or NULL; other ETL: NULL (use guid) */
	const char *buffer;   /* trace.dat: "" top buffer or the instance name; NULL for ETL */
	/* what */
	uint32_t id;          /* ETW event id (kernel events: 0); ftrace event id within the file */
	uint8_t opcode, version, level; /* ETW only (0 for trace.dat) */
	uint8_t group;        /* ETW kernel event group (HookId >> 8); 0 otherwise */
	uint64_t keywords;    /* ETW only */
	const char *name;     /* ftrace event name; TraceLogging event name; NULL when the format has none */
	const char *comm;     /* trace.dat: task name from the file's cmdlines; NULL for ETL */
	const uint8_t *payload; /* event data (trace.dat: the whole record, common fields first) */
	size_t payload_len;
	/* which event: the identity it is counted and named under */
	hs_event_key key;
	/* ETL: the logfile header record; its time is the session's start, not an event's */
	bool session_header;
	/* private: the record this view was made from, for the field accessors */
	const void *source;
} hs_event;

/* Views of a reader's record (no copies, no allocation). */
void hs_event_from_etl(const hs_etl_record *r, hs_event *out);
void hs_event_from_tracedat(const hs_tracedat_record *r, hs_event *out);

/* The 32-bit FNV-1a hash of a TraceLogging event name for hs_event_key.name_hash (never 0). */
uint32_t hs_event_name_hash(const char *name);

/* Named fields, when the format knows field names: trace.dat always (the
 * event formats are in the file); ETL not yet (manifest and TraceLogging
 * payload decoding is still to come), so these return false there. Integers
 * are sign-extended for signed fields; strings are copied, NUL-terminated,
 * truncated to cap. */
bool hs_event_field_int(const hs_event *e, const char *field, int64_t *out);
bool hs_event_field_str(const hs_event *e, const char *field, char *buf, size_t cap);

#endif
