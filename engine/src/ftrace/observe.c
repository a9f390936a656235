/* ftrace/observe.c: hands the events of a ring page to the key-event observer, with their fields read through the backend's event formats (for the stream, backend.c, and the trigger-detection copies, detect.c). */
#include <stdint.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>

#include "ftrace/backend_int.h"
#include "hindsight/tracedat.h"

/* ---- key-event fields (hs_key_fields), through the backend's event formats ---- */

typedef struct {
	struct tep_event *te;
} fields_ctx;

static struct tep_format_field *key_field(const hs_key_event *ev, const char *name)
{
	const fields_ctx *c = ev->fields->ctx;
	return c->te ? tep_find_field(c->te, name) : NULL;
}

/* The record's fields by the rules of a trace.dat's (tracedat/reader.c), so a trigger reads a live event and a
 * replayed one alike; names from the backend's event formats (the running kernel's). */
static bool field_num(const hs_key_event *ev, const char *name, int64_t *out)
{
	return hs_tracedat_tep_int(key_field(ev, name), ev->raw, ev->raw_len, out);
}

static bool field_str(const hs_key_event *ev, const char *name, char *buf, size_t cap)
{
	return hs_tracedat_tep_str(key_field(ev, name), ev->raw, ev->raw_len, buf, cap);
}

static size_t field_names(const hs_key_event *ev, char (*names)[32], bool *is_str, size_t cap)
{
	const fields_ctx *c = ev->fields->ctx;
	return hs_tracedat_tep_names(c->te, names, is_str, cap);
}

/* Hands every event of one sub-buffer, as read from the ring, to the observer. */
void hs_ftrace_observe(hs_backend *b, size_t si, unsigned cpu, void *page, bool copy)
{
	if (!b->fn || kbuffer_load_subbuffer(b->kb, page) < 0)
		return;
	unsigned long long ts;
	for (void *d = kbuffer_read_event(b->kb, &ts); d; d = kbuffer_next_event(b->kb, &ts)) {
		int size = kbuffer_event_size(b->kb);
		if (size < 8)
			continue;
		/* Every ftrace record starts with common_type (u16) and, at 4, common_pid. */
		uint16_t type;
		int32_t pid;
		memcpy(&type, d, sizeof(type));
		memcpy(&pid, (char *)d + 4, sizeof(pid));
		struct tep_event *te = tep_find_event(b->tep, type);
		fields_ctx fc = {.te = te};
		hs_key_fields kf = {.num = field_num, .str = field_str, .names = field_names, .ctx = &fc};
		hs_key_event ev = {.session = si,
				   .cpu = cpu,
				   .ts_ns = ts,
				   .system = te ? te->system : "?",
				   .name = te ? te->name : "?",
				   .pid = pid,
				   .raw = d,
				   .raw_len = (size_t)size,
				   .fields = &kf,
				   .trigger_copy = copy};
		if (ts > b->newest_ts)
			b->newest_ts = ts;
		b->fn(b->fn_ctx, &ev);
	}
}
