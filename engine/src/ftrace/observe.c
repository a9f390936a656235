/* ftrace/observe.c: hands the events of a ring page to the key-event observer, with their fields read through the backend's event formats (for the stream, backend.c, and the trigger-detection copies, detect.c). */
#include <stdint.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>

#include "ftrace/backend_int.h"

/* ---- key-event fields (hs_key_fields), through the backend's event formats ---- */

typedef struct {
	struct tep_event *te;
} fields_ctx;

static struct tep_format_field *key_field(const hs_key_event *ev, const char *name)
{
	const fields_ctx *c = ev->fields->ctx;
	return c->te ? tep_find_field(c->te, name) : NULL;
}

static bool field_num(const hs_key_event *ev, const char *name, int64_t *out)
{
	struct tep_format_field *f = key_field(ev, name);
	if (!f || (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) || f->size <= 0 || f->size > 8 ||
	    (size_t)f->offset + (size_t)f->size > ev->raw_len)
		return false;
	unsigned long long v;
	if (tep_read_number_field(f, ev->raw, &v) != 0)
		return false;
	if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
		unsigned bits = (unsigned)f->size * 8;
		unsigned long long sign = 1ull << (bits - 1);
		v &= (1ull << bits) - 1;
		v = (v ^ sign) - sign;
	}
	*out = (int64_t)v;
	return true;
}

/* Char arrays, __data_loc / __rel_loc strings (printk/console's msg), and a
 * trailing array of no declared size (ftrace/print's buf: the text of a
 * trace_marker write, without the newline the kernel adds). The same rules as
 * hs_tracedat_field_str, so a trigger reads a live event and a replayed one alike. */
static bool field_str(const hs_key_event *ev, const char *name, char *buf, size_t cap)
{
	if (!cap)
		return false;
	buf[0] = '\0';
	struct tep_format_field *f = key_field(ev, name);
	if (!f)
		return false;
	const char *p = ev->raw;
	size_t size = ev->raw_len, off = (size_t)f->offset, len;
	bool trailing = false;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		unsigned long long loc;
		if (f->size != 4 || off + 4 > size || tep_read_number_field(f, p, &loc) != 0)
			return false;
		len = (size_t)(loc >> 16);
		size_t at = (size_t)(loc & 0xffff);
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			at += off + 4;
		off = at;
	} else if (f->size == 0 && (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING))) {
		len = off <= size ? size - off : 0;
		trailing = true;
	} else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING)) {
		len = (size_t)f->size;
	} else {
		return false;
	}
	if (off > size || len > size - off)
		return false;
	size_t n = strnlen(p + off, len);
	while (trailing && n && p[off + n - 1] == '\n')
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p + off, n);
	buf[n] = '\0';
	return true;
}

/* The record's own payload fields, from the backend's event formats (the running kernel's). */
static size_t field_names(const hs_key_event *ev, char (*names)[32], bool *is_str, size_t cap)
{
	const fields_ctx *c = ev->fields->ctx;
	size_t n = 0;
	for (struct tep_format_field *f = c->te ? c->te->format.fields : NULL; f && n < cap; f = f->next) {
		if (!f->name || strlen(f->name) >= sizeof names[0] || !strncmp(f->name, "common_", 7))
			continue;
		strcpy(names[n], f->name);
		is_str[n] = (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_STRING)) && f->type &&
			    strstr(f->type, "char");
		n++;
	}
	return n;
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
