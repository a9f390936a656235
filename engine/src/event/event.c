/* event/event.c: adapters from each reader's record to hs_event, and named-field access through them. */
#include "hindsight/event.h"

#include <string.h>

#include "etl/etl_format.h"

/* Keys are hashed and compared as bytes: a padding byte would make equal keys differ. */
_Static_assert(sizeof(hs_event_key) == 4 + 4 + 4 + sizeof(hs_guid) && sizeof(hs_guid) == 16,
	       "hs_event_key must have no padding");

uint32_t hs_event_name_hash(const char *name)
{
	uint32_t h = 2166136261u;
	for (const char *s = name; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	/* 0 means "no name" in the key. */
	return h ? h : 1;
}

/* 100 ns ticks between 1601-01-01 (FILETIME) and 1970-01-01 (Unix). */
#define FILETIME_UNIX_DELTA 116444736000000000ull

void hs_event_from_etl(const hs_etl_record *r, hs_event *out)
{
	memset(out, 0, sizeof(*out));
	out->format = HS_EVENT_ETL;
	if (r->filetime >= FILETIME_UNIX_DELTA) {
		out->time_ns = (r->filetime - FILETIME_UNIX_DELTA) * 100u;
		out->time_is_unix = true;
	}
	out->raw_ts = r->timestamp;
	out->cpu = r->cpu;
	out->pid = r->pid;
	out->tid = r->tid;
	out->has_guid = r->has_guid;
	out->guid = r->guid;
	out->id = r->id;
	out->opcode = r->opcode;
	out->version = r->version;
	out->level = r->level;
	out->keywords = r->keywords;
	hs_event_key *k = &out->key;
	switch (r->kind) {
	case HS_ETL_SYSTEM:
	case HS_ETL_COMPACT:
	case HS_ETL_PERFINFO:
		out->group = r->group;
		k->cls = HS_EVCLS_KERNEL;
		k->group = r->group;
		k->num = r->opcode;
		out->session_header = r->kind == HS_ETL_SYSTEM && r->group == HS_ETL_GROUP_HEADER && r->opcode == 0;
		break;
	case HS_ETL_EVENT: {
		k->cls = HS_EVCLS_ID;
		k->guid = r->guid;
		k->num = r->id;
		/* TraceLogging events carry their own names; they point into the record. A
		 * well-formed schema always has the event name. */
		hs_etl_tl_info tl;
		if (hs_etl_tl_decode(r, &tl) && tl.event_name) {
			out->name = tl.event_name;
			out->provider = tl.provider_name;
			k->name_hash = hs_event_name_hash(tl.event_name);
		}
		break;
	}
	case HS_ETL_FULL:
	case HS_ETL_INSTANCE:
		k->cls = HS_EVCLS_OPCODE;
		k->guid = r->guid;
		k->num = r->opcode;
		break;
	case HS_ETL_MESSAGE:
		k->cls = HS_EVCLS_WPP;
		k->num = r->id;
		break;
	}
	out->payload = r->payload;
	out->payload_len = r->payload_len;
	out->source = r;
}

void hs_event_from_tracedat(const hs_tracedat_record *r, hs_event *out)
{
	memset(out, 0, sizeof(*out));
	out->format = HS_EVENT_TRACEDAT;
	out->time_ns = r->ts;
	out->raw_ts = (int64_t)r->ts;
	out->cpu = r->cpu >= 0 ? (uint32_t)r->cpu : UINT32_MAX;
	out->tid = r->pid >= 0 ? (uint32_t)r->pid : UINT32_MAX;
	out->pid = out->tid;
	out->provider = r->system;
	out->buffer = r->buffer;
	out->id = r->id >= 0 ? (uint32_t)r->id : 0;
	out->key.cls = HS_EVCLS_FTRACE;
	/* common_type is 16 bits; the mask keeps a damaged (negative) id inside them (-1 is 0xFFFF). */
	out->key.num = (uint32_t)r->id & 0xFFFFu;
	out->name = r->name;
	out->comm = r->comm;
	out->payload = r->data;
	out->payload_len = r->size;
	out->source = r;
}

bool hs_event_field_int(const hs_event *e, const char *field, int64_t *out)
{
	if (e->format == HS_EVENT_TRACEDAT)
		return hs_tracedat_field_int(e->source, field, out);
	return false;
}

bool hs_event_field_str(const hs_event *e, const char *field, char *buf, size_t cap)
{
	if (cap)
		buf[0] = '\0';
	if (e->format == HS_EVENT_TRACEDAT)
		return hs_tracedat_field_str(e->source, field, buf, cap);
	return false;
}
