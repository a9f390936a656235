/* tracedat/reader.c: trace.dat reading: open, every buffer's CPUs merged in time order, fields and filters. */
#include "hindsight/tracedat.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/compat.h"

bool hs_tracedat_sniff(const char *path)
{
	char head[HS_TRACEDAT_MAGIC_LEN];
	FILE *f = hs_fopen(path, "rb");
	if (!f)
		return false;
	bool ok = fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, HS_TRACEDAT_MAGIC, sizeof head) == 0;
	fclose(f);
	return ok;
}

#if defined(__linux__)

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <traceevent/event-parse.h>

#include "tracedat/td_int.h"

enum { COMM_CACHE = 4096 }; /* pid -> comm slots in front of libtraceevent's sorted list (a power of two) */

struct hs_tracedat {
	td_file f;
	td_meta m;
	hs_problems problems;
	hs_tracedat_info info;
	struct tep_event **by_id; /* event formats by id, n_ids long */
	size_t n_ids;
	unsigned type_off, type_size, pid_off, pid_size; /* common_type and common_pid in every payload */
	bool pid_signed;
	struct {
		int pid;
		const char *comm;
	} comms[COMM_CACHE];
};

struct hs_tracedat_filter {
	hs_tracedat *td;
	struct tep_event_filter *filter;
	int id; /* the event the filter is for */
};

HS_PRINTF_FMT(5, 6) static void problem(hs_tracedat *td, hs_problem_kind kind, uint64_t at, int cpu, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_problems_vadd(&td->problems, kind, at, cpu, fmt, ap);
	va_end(ap);
}

/* A refused file: its first problem becomes "PATH: not readable as a trace.dat: <why>", the others follow. */
static hs_status refuse(hs_tracedat *td, const char *path, hs_status st)
{
	hs_problems all = {.limit = HS_TRACEDAT_MAX_PROBLEMS};
	const hs_problem *why = hs_problems_at(&td->problems, 0);
	char text[HS_PROBLEM_TEXT_MAX];
	hs_problems_add(&all, why ? why->kind : HS_PROBLEM_UNREADABLE, UINT64_MAX, -1,
			"%s: not readable as a trace.dat: %s", path,
			why ? hs_problem_format(why, text, sizeof text) : hs_strerror(st));
	for (size_t i = 1; i < hs_problems_count(&td->problems); i++)
		hs_problems_push(&all, hs_problems_at(&td->problems, i));
	hs_problems_free(&td->problems);
	td->problems = all;
	return st;
}

/* Where common_type and common_pid are: from the formats (all share them), else the layout every kernel
 * since 2.6.31 has (u16 type at 0, int pid at 4). */
static void find_common_fields(hs_tracedat *td)
{
	td->type_off = 0, td->type_size = 2, td->pid_off = 4, td->pid_size = 4, td->pid_signed = true;
	int n = tep_get_events_count(td->m.tep);
	for (int i = 0; i < n; i++) {
		struct tep_event *ev = tep_get_event(td->m.tep, i);
		struct tep_format_field *t = ev ? tep_find_common_field(ev, "common_type") : NULL;
		struct tep_format_field *p = ev ? tep_find_common_field(ev, "common_pid") : NULL;
		if (!t || !p)
			continue;
		bool ok = (t->size == 1 || t->size == 2 || t->size == 4) && (p->size == 1 || p->size == 2 || p->size == 4) &&
			  t->offset >= 0 && t->offset <= 64 && p->offset >= 0 && p->offset <= 64;
		if (ok) {
			td->type_off = (unsigned)t->offset, td->type_size = (unsigned)t->size;
			td->pid_off = (unsigned)p->offset, td->pid_size = (unsigned)p->size;
			td->pid_signed = (p->flags & TEP_FIELD_IS_SIGNED) != 0;
		}
		return;
	}
}

static hs_status index_events(hs_tracedat *td)
{
	int n = tep_get_events_count(td->m.tep);
	int max = -1;
	for (int i = 0; i < n; i++) {
		struct tep_event *ev = tep_get_event(td->m.tep, i);
		if (ev && ev->id >= 0 && ev->id <= HS_MAX_EVENT_ID && ev->id > max)
			max = ev->id;
	}
	td->n_ids = (size_t)(max + 1);
	td->by_id = calloc(td->n_ids ? td->n_ids : 1, sizeof(*td->by_id));
	if (!td->by_id)
		return HS_ENOMEM;
	for (int i = 0; i < n; i++) {
		struct tep_event *ev = tep_get_event(td->m.tep, i);
		if (ev && ev->id >= 0 && (size_t)ev->id < td->n_ids && !td->by_id[ev->id])
			td->by_id[ev->id] = ev;
	}
	return HS_OK;
}

hs_status hs_tracedat_open(const char *path, hs_tracedat **out)
{
	return hs_tracedat_open_ex(path, false, out);
}

hs_status hs_tracedat_open_ex(const char *path, bool probe, hs_tracedat **out)
{
	(void)probe; /* the reader checks what it reads: there is nothing to probe in another process */
	*out = NULL;
	hs_tracedat *td = calloc(1, sizeof(*td));
	if (!td)
		return HS_ENOMEM;
	*out = td;
	td->problems.limit = HS_TRACEDAT_MAX_PROBLEMS;
	td->f.problems = &td->problems;
	td->f.fd = -1;
	for (size_t i = 0; i < COMM_CACHE; i++)
		td->comms[i].pid = -1;
	td->f.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (td->f.fd < 0) {
		int err = errno;
		problem(td, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1, "%s: cannot be read (%s)", path, strerror(err));
		return err == ENOENT ? HS_ENOENT : HS_EIO;
	}
	struct stat sb;
	char head[HS_TRACEDAT_MAGIC_LEN];
	if (fstat(td->f.fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		problem(td, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1, "%s: not a regular file", path);
		return HS_EIO;
	}
	td->f.size = (uint64_t)sb.st_size;
	td->info.file_size = td->f.size;
	if (!td_pread(&td->f, 0, head, sizeof head) || memcmp(head, HS_TRACEDAT_MAGIC, sizeof head) != 0) {
		problem(td, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1, "%s: not a trace-cmd file (no trace-cmd magic)",
			path);
		return HS_EINVAL;
	}
	hs_status st = td_meta_read(&td->f, &td->m);
	if (st == HS_OK)
		st = index_events(td);
	if (st != HS_OK)
		return refuse(td, path, st);
	find_common_fields(td);
	td->info.version = td->f.version;
	snprintf(td->info.clock, sizeof td->info.clock, "%s", td->m.clock);
	td->info.cpus = td->m.cpus;
	td->info.instances = calloc(td->m.n_buffers + 1, sizeof(*td->info.instances));
	if (!td->info.instances)
		return refuse(td, path, HS_ENOMEM);
	for (size_t i = 0; i < td->m.n_buffers; i++)
		if (td->m.buffers[i].name[0])
			td->info.instances[td->info.n_instances++] = td->m.buffers[i].name;
	return HS_OK;
}

void hs_tracedat_close(hs_tracedat *td)
{
	if (!td)
		return;
	td_meta_free(&td->m);
	if (td->f.fd >= 0)
		close(td->f.fd);
	hs_problems_free(&td->problems);
	free(td->by_id);
	free(td->info.instances);
	free(td);
}

const hs_tracedat_info *hs_tracedat_get_info(const hs_tracedat *td)
{
	return &td->info;
}

/* ---- the walk: every buffer's CPUs merged by time with a binary heap ---- */

typedef struct {
	td_stream s;
	uint64_t key; /* the current record's time after the file's offsets */
	size_t order; /* buffer order, then CPU order: ties go to the first, as libtracecmd's merge does */
} walk_stream;

static inline bool before(const walk_stream *a, const walk_stream *b)
{
	return a->key < b->key || (a->key == b->key && a->order < b->order);
}

static void sift_down(walk_stream **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && before(h[l], h[m]))
			m = l;
		if (l + 1 < n && before(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		walk_stream *t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* The file's clock adjustments, as libtracecmd applies them: TSC to ns, then the DATE/OFFSET shift. */
static inline uint64_t adjust(const td_meta *m, uint64_t ts)
{
	if (m->tsc_mult) {
		uint64_t lo = (uint32_t)ts, hi = ts >> 32;
		uint64_t v = (lo * m->tsc_mult) >> m->tsc_shift;
		if (hi)
			v += (hi * m->tsc_mult) << (32 - m->tsc_shift);
		ts = v;
	}
	return ts + (uint64_t)m->ts_offset;
}

static inline int64_t read_common(const uint8_t *d, unsigned size, bool sign)
{
	switch (size) {
	case 1:
		return sign ? (int64_t)(int8_t)d[0] : (int64_t)d[0];
	case 2:
		return sign ? (int64_t)(int16_t)td_rd16(d) : (int64_t)td_rd16(d);
	default:
		return sign ? (int64_t)(int32_t)td_rd32(d) : (int64_t)td_rd32(d);
	}
}

static const char *comm_of(hs_tracedat *td, int pid)
{
	size_t slot = (size_t)(unsigned)pid & (COMM_CACHE - 1);
	if (td->comms[slot].pid != pid || !td->comms[slot].comm) {
		td->comms[slot].pid = pid;
		td->comms[slot].comm = tep_data_comm_from_pid(td->m.tep, pid);
	}
	return td->comms[slot].comm;
}

hs_status hs_tracedat_foreach(hs_tracedat *td, hs_tracedat_record_fn fn, void *ctx)
{
	if (!td->m.tep)
		return HS_EINVAL;
	size_t n = 0;
	for (size_t i = 0; i < td->m.n_buffers; i++)
		n += td->m.buffers[i].n_cpus;
	walk_stream *ws = calloc(n ? n : 1, sizeof(*ws));
	walk_stream **heap = calloc(n ? n : 1, sizeof(*heap));
	hs_status st = ws && heap ? HS_OK : HS_ENOMEM;
	size_t k = 0, h = 0;
	uint64_t held = 0; /* the streams' buffers, within HS_TRACEDAT_MAX_WALK_BYTES */
	/* Every stream gets its buffer first (what is past the walk's budget says so before any page is read),
	 * then each is put at its first record. */
	for (size_t i = 0; i < td->m.n_buffers && st == HS_OK; i++)
		for (size_t c = 0; c < td->m.buffers[i].n_cpus && st == HS_OK; c++, k++) {
			st = td_stream_init(&ws[k].s, &td->f, &td->m.buffers[i], c, &held);
			ws[k].order = k;
		}
	for (size_t i = 0; i < k && st == HS_OK; i++)
		if (td_stream_next(&ws[i].s)) {
			ws[i].key = adjust(&td->m, ws[i].s.cur.ts);
			heap[h++] = &ws[i];
		}
	for (size_t i = h / 2; i-- > 0;)
		sift_down(heap, h, i);
	bool unknown_reported = false;
	struct tep_record rec;
	memset(&rec, 0, sizeof rec);
	hs_tracedat_record r;
	memset(&r, 0, sizeof r);
	r.priv[0] = td;
	r.priv[2] = &rec;
	while (st == HS_OK && h) {
		walk_stream *w = heap[0];
		const td_rec *cur = &w->s.cur;
		r.buffer = w->s.buf->name;
		r.cpu = w->s.cpu;
		r.ts = w->key;
		r.data = cur->data;
		r.size = cur->size;
		r.record_size = cur->record_size;
		r.missed_events = cur->missed;
		int id = -1;
		struct tep_event *ev = NULL;
		if (td->type_off + td->type_size <= cur->size) {
			id = (int)read_common(cur->data + td->type_off, td->type_size, false);
			ev = (size_t)id < td->n_ids ? td->by_id[id] : NULL;
		}
		r.id = id;
		r.system = ev && ev->system ? ev->system : "?";
		r.name = ev && ev->name ? ev->name : "?";
		if (!ev && !unknown_reported) {
			unknown_reported = true;
			problem(td, HS_PROBLEM_NAME_UNKNOWN, UINT64_MAX, w->s.cpu,
				"records with no event format in the file (first in buffer '%s'); counted as ?/?", r.buffer);
		}
		r.pid = td->pid_off + td->pid_size <= cur->size
				? (int)read_common(cur->data + td->pid_off, td->pid_size, td->pid_signed)
				: -1;
		r.comm = comm_of(td, r.pid);
		r.priv[1] = ev;
		rec.ts = r.ts;
		rec.missed_events = r.missed_events;
		rec.record_size = (int)r.record_size;
		rec.size = (int)r.size;
		rec.data = (void *)cur->data;
		rec.cpu = r.cpu;
		if (fn(&r, ctx))
			break;
		if (td_stream_next(&w->s)) {
			w->key = adjust(&td->m, w->s.cur.ts);
		} else {
			heap[0] = heap[--h];
		}
		sift_down(heap, h, 0);
	}
	for (size_t i = 0; ws && i < n; i++)
		td_stream_free(&ws[i].s);
	free(ws);
	free(heap);
	if (st == HS_ENOMEM)
		problem(td, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1, "out of memory walking the records");
	return st;
}

static struct tep_format_field *field_of(const hs_tracedat_record *r, const char *name)
{
	struct tep_event *ev = (struct tep_event *)r->priv[1];
	return ev ? tep_find_field(ev, name) : NULL;
}

/* An integer field of `data` (a payload of `size` bytes of the field's event). */
bool hs_tracedat_tep_int(const struct tep_format_field *f, const void *data, size_t size, int64_t *out)
{
	if (!f || (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) || f->size <= 0 || f->size > 8 ||
	    (size_t)f->offset + (size_t)f->size > size)
		return false;
	unsigned long long v;
	if (tep_read_number_field((struct tep_format_field *)f, data, &v) != 0)
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

/* The string at off of a record of size bytes (at most len bytes, to its NUL)
 * into buf, cut to cap (> 0); one that lies past the record is refused. `trim`
 * leaves out trailing newlines (those of a trailing char array, see hs_tracedat_tep_str). */
static bool copy_str(const char *p, size_t size, size_t off, size_t len, bool trim, char *buf, size_t cap)
{
	if (off > size || len > size - off)
		return false;
	size_t n = strnlen(p + off, len);
	if (trim)
		while (n && p[off + n - 1] == '\n')
			n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p + off, n);
	buf[n] = '\0';
	return true;
}

/* A string field of `data`: a fixed char array, a __data_loc / __rel_loc
 * string, or a trailing char array of no declared size (ftrace/print's `buf`,
 * which runs to the end of the record; its newline, which the kernel adds to
 * every trace_marker write, is left out). */
bool hs_tracedat_tep_str(const struct tep_format_field *f, const void *data, size_t size, char *buf, size_t cap)
{
	if (!cap)
		return false;
	buf[0] = '\0';
	if (!f)
		return false;
	const char *p = (const char *)data;
	size_t off = (size_t)f->offset, len;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		if (f->size != 4 || off + 4 > size)
			return false;
		unsigned long long loc;
		if (tep_read_number_field((struct tep_format_field *)f, data, &loc) != 0)
			return false;
		len = (size_t)(loc >> 16);
		size_t at = (size_t)(loc & 0xffff);
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			at += off + 4;
		off = at;
	} else if (f->size == 0 && (f->flags & TEP_FIELD_IS_ARRAY)) {
		len = off <= size ? size - off : 0;
	} else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING)) {
		len = (size_t)f->size;
	} else {
		return false; /* a number, not a string */
	}
	return copy_str(p, size, off, len, f->size == 0 && !(f->flags & TEP_FIELD_IS_DYNAMIC), buf, cap);
}

bool hs_tracedat_field_int(const hs_tracedat_record *r, const char *field, int64_t *out)
{
	return hs_tracedat_tep_int(field_of(r, field), r->data, r->size, out);
}

bool hs_tracedat_field_str(const hs_tracedat_record *r, const char *field, char *buf, size_t cap)
{
	return hs_tracedat_tep_str(field_of(r, field), r->data, r->size, buf, cap);
}

static struct tep_format_field *event_field(const hs_tracedat *td, int id, const char *name)
{
	struct tep_event *ev = td && td->m.tep ? tep_find_event(td->m.tep, id) : NULL;
	return ev ? tep_find_field(ev, name) : NULL;
}

size_t hs_tracedat_event_field_names(const hs_tracedat *td, int id, char (*names)[32], bool *is_str, size_t cap)
{
	return hs_tracedat_tep_names(td && td->m.tep ? tep_find_event(td->m.tep, id) : NULL, names, is_str, cap);
}

size_t hs_tracedat_tep_names(const struct tep_event *ev, char (*names)[32], bool *is_str, size_t cap)
{
	size_t n = 0;
	for (struct tep_format_field *f = ev ? ev->format.fields : NULL; f && n < cap; f = f->next) {
		if (!f->name || strlen(f->name) >= sizeof names[0] || !strncmp(f->name, "common_", 7))
			continue;
		strcpy(names[n], f->name);
		is_str[n] = (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_STRING)) && f->type &&
			    strstr(f->type, "char");
		n++;
	}
	return n;
}

bool hs_tracedat_event_field_int(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 int64_t *out)
{
	return hs_tracedat_tep_int(event_field(td, id, field), data, size, out);
}

bool hs_tracedat_event_field_str(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 char *buf, size_t cap)
{
	if (cap)
		buf[0] = '\0';
	return hs_tracedat_tep_str(event_field(td, id, field), data, size, buf, cap);
}

/* Locations: what hs_tracedat_tep_int and _str decide from a field's format on every call, decided once. They are
 * written apart from those (no libtraceevent on the read path) and tests/tracedat/fieldloc.c
 * holds the two to the same results. */
static bool locate(const struct tep_event *ev, const char *name, hs_tracedat_field_loc *out)
{
	memset(out, 0, sizeof *out);
	out->id = -1;
	struct tep_format_field *f = ev && name ? tep_find_field((struct tep_event *)ev, name) : NULL;
	if (!f || f->offset < 0 || f->size < 0)
		return false; /* format.c lets no negative number through; a location must not hold one either */
	unsigned long fl = f->flags;
	out->id = ev->id;
	out->offset = (uint32_t)f->offset;
	out->size = (uint32_t)f->size;
	out->is_signed = (fl & TEP_FIELD_IS_SIGNED) != 0;
	out->is_int = !(fl & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
		      (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8);
	out->dynamic = (fl & TEP_FIELD_IS_DYNAMIC) != 0;
	out->relative = (fl & TEP_FIELD_IS_RELATIVE) != 0;
	out->trailing = !out->dynamic && f->size == 0 && (fl & TEP_FIELD_IS_ARRAY);
	out->is_string = out->dynamic ? f->size == 4 : (fl & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING)) != 0;
	return true;
}

bool hs_tracedat_field_locate(const hs_tracedat_record *r, const char *field, hs_tracedat_field_loc *out)
{
	return locate(r ? (const struct tep_event *)r->priv[1] : NULL, field, out);
}

bool hs_tracedat_event_field_locate(const hs_tracedat *td, int id, const char *field, hs_tracedat_field_loc *out)
{
	return locate(td && td->m.tep ? tep_find_event(td->m.tep, id) : NULL, field, out);
}

bool hs_tracedat_loc_int_data(const hs_tracedat_field_loc *l, const void *data, size_t size, int64_t *out)
{
	if (!l->is_int || l->offset > size || l->size > size - l->offset)
		return false;
	const uint8_t *p = (const uint8_t *)data + l->offset;
	switch (l->size) {
	case 1: *out = l->is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0]; return true;
	case 2: *out = l->is_signed ? (int64_t)(int16_t)td_rd16(p) : (int64_t)td_rd16(p); return true;
	case 4: *out = l->is_signed ? (int64_t)(int32_t)td_rd32(p) : (int64_t)td_rd32(p); return true;
	case 8: *out = (int64_t)td_rd64(p); return true;
	default: return false;
	}
}

bool hs_tracedat_loc_str_data(const hs_tracedat_field_loc *l, const void *data, size_t size, char *buf, size_t cap)
{
	if (!cap)
		return false;
	buf[0] = '\0';
	if (!l->is_string)
		return false;
	const char *p = (const char *)data;
	size_t off = l->offset, len;
	if (l->dynamic) {
		if (off > size || 4 > size - off)
			return false;
		uint32_t loc = td_rd32((const uint8_t *)p + off);
		len = loc >> 16;
		size_t at = loc & 0xffff;
		if (l->relative)
			at += off + 4;
		off = at;
	} else if (l->trailing) {
		len = off <= size ? size - off : 0;
	} else {
		len = l->size;
	}
	return copy_str(p, size, off, len, l->trailing, buf, cap);
}

bool hs_tracedat_loc_int(const hs_tracedat_record *r, const hs_tracedat_field_loc *l, int64_t *out)
{
	return l->id >= 0 && r->id == l->id && hs_tracedat_loc_int_data(l, r->data, r->size, out);
}

bool hs_tracedat_loc_str(const hs_tracedat_record *r, const hs_tracedat_field_loc *l, char *buf, size_t cap)
{
	if (cap)
		buf[0] = '\0';
	return l->id >= 0 && r->id == l->id && hs_tracedat_loc_str_data(l, r->data, r->size, buf, cap);
}

size_t hs_tracedat_field_names(const hs_tracedat_record *r, const char **names, size_t cap)
{
	const struct tep_event *ev = r ? (const struct tep_event *)r->priv[1] : NULL;
	size_t n = 0;
	for (const struct tep_format_field *f = ev ? ev->format.fields : NULL; f; f = f->next, n++)
		if (n < cap)
			names[n] = f->name;
	return n;
}

hs_status hs_tracedat_filter_new(hs_tracedat *td, const char *system, const char *event, const char *expr,
				 hs_tracedat_filter **out)
{
	*out = NULL;
	if (!td->m.tep)
		return HS_EINVAL;
	struct tep_event *ev = tep_find_event_by_name(td->m.tep, system, event);
	if (!ev) /* the file never had the event enabled: nothing can match */
		return HS_ENOENT;
	hs_tracedat_filter *f = calloc(1, sizeof(*f));
	size_t n = strlen(system) + strlen(event) + strlen(expr) + 8;
	char *text = malloc(n);
	if (!f || !text)
		goto oom;
	f->td = td;
	f->id = ev->id;
	f->filter = tep_filter_alloc(td->m.tep);
	if (!f->filter)
		goto oom;
	snprintf(text, n, "%s/%s:%s", system, event, expr);
	enum tep_errno err = tep_filter_add_filter_str(f->filter, text);
	if (err < 0) {
		char msg[256];
		if (tep_filter_strerror(f->filter, err, msg, sizeof msg) != 0)
			snprintf(msg, sizeof msg, "error %d", (int)err);
		problem(td, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1, "filter '%s' does not compile: %s", text, msg);
		free(text);
		hs_tracedat_filter_free(f);
		return HS_EINVAL;
	}
	free(text);
	*out = f;
	return HS_OK;
oom:
	free(text);
	hs_tracedat_filter_free(f);
	return HS_ENOMEM;
}

bool hs_tracedat_filter_match(const hs_tracedat_filter *f, const hs_tracedat_record *r)
{
	if (!f || r->priv[0] != f->td || r->id != f->id)
		return false;
	return tep_filter_match(f->filter, (struct tep_record *)r->priv[2]) == TEP_ERRNO__FILTER_MATCH;
}

void hs_tracedat_filter_free(hs_tracedat_filter *f)
{
	if (!f)
		return;
	if (f->filter)
		tep_filter_free(f->filter);
	free(f);
}

size_t hs_tracedat_problem_count(const hs_tracedat *td)
{
	return hs_problems_count(&td->problems);
}

const hs_problem *hs_tracedat_problem_at(const hs_tracedat *td, size_t i)
{
	return hs_problems_at(&td->problems, i);
}

const hs_problems *hs_tracedat_problems(const hs_tracedat *td)
{
	return &td->problems;
}

#else /* not Linux: no libtracecmd */

struct hs_tracedat {
	int unused;
};

/* A string field that is not there: the empty string. */
static bool no_string(char *buf, size_t cap)
{
	if (cap)
		buf[0] = '\0';
	return false;
}

/* A field that is not there: no event, no place. */
static bool no_field(hs_tracedat_field_loc *out)
{
	memset(out, 0, sizeof *out);
	out->id = -1;
	return false;
}

hs_status hs_tracedat_open(const char *path, hs_tracedat **out)
{
	return hs_tracedat_open_ex(path, true, out);
}

hs_status hs_tracedat_open_ex(const char *path, bool probe, hs_tracedat **out)
{
	(void)path, (void)probe;
	*out = NULL;
	return HS_EUNSUPPORTED;
}

void hs_tracedat_close(hs_tracedat *td)
{
	(void)td;
}

const hs_tracedat_info *hs_tracedat_get_info(const hs_tracedat *td)
{
	(void)td;
	return NULL;
}

hs_status hs_tracedat_foreach(hs_tracedat *td, hs_tracedat_record_fn fn, void *ctx)
{
	(void)td, (void)fn, (void)ctx;
	return HS_EUNSUPPORTED;
}

bool hs_tracedat_field_int(const hs_tracedat_record *r, const char *field, int64_t *out)
{
	(void)r, (void)field, (void)out;
	return false;
}

bool hs_tracedat_field_str(const hs_tracedat_record *r, const char *field, char *buf, size_t cap)
{
	(void)r, (void)field;
	return no_string(buf, cap);
}

size_t hs_tracedat_event_field_names(const hs_tracedat *td, int id, char (*names)[32], bool *is_str, size_t cap)
{
	(void)td, (void)id, (void)names, (void)is_str, (void)cap;
	return 0;
}

bool hs_tracedat_event_field_int(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 int64_t *out)
{
	(void)td, (void)id, (void)data, (void)size, (void)field, (void)out;
	return false;
}

bool hs_tracedat_event_field_str(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 char *buf, size_t cap)
{
	(void)td, (void)id, (void)data, (void)size, (void)field;
	return no_string(buf, cap);
}

bool hs_tracedat_field_locate(const hs_tracedat_record *r, const char *field, hs_tracedat_field_loc *out)
{
	(void)r, (void)field;
	return no_field(out);
}

bool hs_tracedat_event_field_locate(const hs_tracedat *td, int id, const char *field, hs_tracedat_field_loc *out)
{
	(void)td, (void)id, (void)field;
	return no_field(out);
}

bool hs_tracedat_loc_int(const hs_tracedat_record *r, const hs_tracedat_field_loc *l, int64_t *out)
{
	(void)r, (void)l, (void)out;
	return false;
}

bool hs_tracedat_loc_str(const hs_tracedat_record *r, const hs_tracedat_field_loc *l, char *buf, size_t cap)
{
	(void)r, (void)l;
	return no_string(buf, cap);
}

bool hs_tracedat_loc_int_data(const hs_tracedat_field_loc *l, const void *data, size_t size, int64_t *out)
{
	(void)l, (void)data, (void)size, (void)out;
	return false;
}

bool hs_tracedat_loc_str_data(const hs_tracedat_field_loc *l, const void *data, size_t size, char *buf, size_t cap)
{
	(void)l, (void)data, (void)size;
	return no_string(buf, cap);
}

size_t hs_tracedat_field_names(const hs_tracedat_record *r, const char **names, size_t cap)
{
	(void)r, (void)names, (void)cap;
	return 0;
}

hs_status hs_tracedat_filter_new(hs_tracedat *td, const char *system, const char *event, const char *expr,
				 hs_tracedat_filter **out)
{
	(void)td, (void)system, (void)event, (void)expr;
	*out = NULL;
	return HS_EUNSUPPORTED;
}

bool hs_tracedat_filter_match(const hs_tracedat_filter *f, const hs_tracedat_record *r)
{
	(void)f, (void)r;
	return false;
}

void hs_tracedat_filter_free(hs_tracedat_filter *f)
{
	(void)f;
}

size_t hs_tracedat_problem_count(const hs_tracedat *td)
{
	(void)td;
	return 0;
}

const hs_problem *hs_tracedat_problem_at(const hs_tracedat *td, size_t i)
{
	(void)td, (void)i;
	return NULL;
}

const hs_problems *hs_tracedat_problems(const hs_tracedat *td)
{
	static const hs_problems none;
	(void)td;
	return &none;
}

#endif
