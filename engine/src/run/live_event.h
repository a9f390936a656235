/* run/live_event.h: one key event as the live view and the JSONL tap show it: who, what, its decoded fields, story and alert. */
#ifndef HS_RUN_LIVE_EVENT_H
#define HS_RUN_LIVE_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/backend.h"
#include "hindsight/limits.h"
#include "hindsight/plan.h"
#include "hindsight/strbuf.h"

/*
 * The observer (record.c, on the backend's poll path) fills one of these per
 * streamed key event and copies it into the view's ring and the tap's queue;
 * everything is copied, so nothing points into the backend's buffers. Field
 * names come from the event's format (tracefs events/<system>/<name>/format,
 * read once per event of the plan at the start, never on the poll path); their
 * values through hs_key_event.fields. Story and alert are the plan's
 * (hs_plan_event), borrowed from it.
 *
 * Ownership: the catalog borrows the plan until free.
 */

typedef struct {
	char name[32];
	bool is_str;
	int64_t num;
	char str[HS_LIVE_FIELD_CHARS];
} hs_live_field;

typedef struct {
	uint64_t ts_ns;   /* the session's clock */
	uint64_t wall_ms; /* Unix time of the event, ms: the wall clock when seen, less how long ago it happened */
	size_t session;
	unsigned cpu;
	int pid;
	char comm[24];
	char system[32], name[64];
	hs_live_field fields[HS_LIVE_MAX_FIELDS];
	size_t n_fields;
	const char *story; /* the plan's, or NULL */
	const char *alert; /* the catalog's alert kind (crash, hang, ...), or NULL */
} hs_live_event;

typedef struct hs_live_catalog hs_live_catalog;

/* The plan's key events (file-circular sessions) with their stories, alerts
 * and field names. task_name: the backend's (hs_backend_ops.task_name), which
 * names a task of this machine that no event named; NULL for a replay, whose
 * pids are another time's (its names come from its events only). NULL only
 * when out of memory. */
hs_live_catalog *hs_live_catalog_new(const hs_plan *plan, hs_task_name_fn task_name);
void hs_live_catalog_free(hs_live_catalog *c);

/* Copies what ev says into out (the observer's one call per event). now_ns:
 * the session's clock now (0: unknown), for the wall time. */
void hs_live_event_fill(hs_live_catalog *c, const hs_key_event *ev, uint64_t now_ns, hs_live_event *out);


/* The decoded fields as "name=value name=value" (strings quoted when they hold a space). */
void hs_live_event_fields_text(const hs_live_event *e, char *buf, size_t cap);

/* One JSONL line (docs/live.md), newline included, appended to sb. */
void hs_live_event_jsonl(const hs_live_event *e, const hs_plan *plan, hs_strbuf *sb);

#endif
