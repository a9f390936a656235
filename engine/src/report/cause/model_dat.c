/* report/cause/model_dat.c: a trace.dat's scheduler, interrupt, timer, block, signal, reclaim, syscall, fault, lock and slice records as the cause model's compact records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/event.h"
#include "hindsight/event_decode.h"
#include "hindsight/tracedat.h"
#include "model.h"

/* Which records are which is the event layer's business (event_decode.h reads a record by the fields its own
 * format declares); no tracepoint is named here. */

enum { N_IDS = 65536 };

/* Names repeat in every switch record: a small cache from a name's raw bytes to its interned id spares the
 * cleaning and the hash map for all but the first of each. */
enum { NAME_CACHE = 4096, NAME_BYTES = 32 };
typedef struct {
	char raw[NAME_BYTES];
	uint32_t id;
} name_slot;

/* The fields an event id's records are read by, located once (hs_tracedat_field_locate) and then read without a
 * lookup by name: finding a field by name in every record (libtraceevent's field list and strcmp) was most of
 * the read of a full ring. A kind reads at most 7 fields; more would be located on every record (loc_of). */
enum { ID_FIELDS = 8 };
typedef struct {
	const char *name[ID_FIELDS];
	hs_tracedat_field_loc loc[ID_FIELDS];
	unsigned n;
} id_fields;

typedef struct {
	cm_model *m;
	name_slot *names; /* [NAME_CACHE] */
	bool side;
	int8_t *kind; /* [N_IDS]: cm_kind, -1 none, -2 not looked at yet */
	bool *is_new; /* [N_IDS]: a wake record of a new task */
	id_fields **fields; /* [N_IDS]: made on an id's first record of a kind */
	const hs_tracedat_record *rec; /* the record being read, and its id's fields */
	id_fields *cur;
	hs_tracedat_field_loc spare;
	hs_status st;
} dat_ctx;

/* The field f of the current record's event; names are this file's literals, so a pointer compare finds them. */
static const hs_tracedat_field_loc *loc_of(dat_ctx *c, const char *f)
{
	id_fields *x = c->cur;
	for (unsigned i = 0; i < x->n; i++)
		if (x->name[i] == f)
			return &x->loc[i];
	for (unsigned i = 0; i < x->n; i++)
		if (!strcmp(x->name[i], f))
			return &x->loc[i];
	hs_tracedat_field_loc *l = x->n < ID_FIELDS ? &x->loc[x->n] : &c->spare;
	hs_tracedat_field_locate(c->rec, f, l); /* not found: a location that reads nothing */
	if (x->n < ID_FIELDS)
		x->name[x->n++] = f;
	return l;
}

static bool fhas(dat_ctx *c, const char *f, int64_t *v)
{
	return hs_tracedat_loc_int(c->rec, loc_of(c, f), v);
}

static int64_t fint(dat_ctx *c, const char *f, int64_t def)
{
	int64_t v;
	return fhas(c, f, &v) ? v : def;
}

static uint32_t fstr(dat_ctx *c, const char *f)
{
	char b[256];
	char cl[256];
	if (!hs_tracedat_loc_str(c->rec, loc_of(c, f), b, sizeof b))
		return 0;
	hs_utf8_clean(b, cl, sizeof cl);
	return cm_intern(c->m, cl);
}

/* A task name field (short, repeated): through the cache. */
static uint32_t fname(dat_ctx *c, const char *f)
{
	char b[NAME_BYTES];
	memset(b, 0, sizeof b);
	if (!hs_tracedat_loc_str(c->rec, loc_of(c, f), b, sizeof b))
		return 0;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < NAME_BYTES && b[i]; i++)
		h = (h ^ (unsigned char)b[i]) * 16777619u;
	name_slot *s = &c->names[h & (NAME_CACHE - 1)];
	if (s->id && !memcmp(s->raw, b, NAME_BYTES))
		return s->id;
	char clean[64];
	hs_utf8_clean(b, clean, sizeof clean);
	uint32_t id = cm_intern(c->m, clean);
	if (id) {
		memcpy(s->raw, b, NAME_BYTES);
		s->id = id;
	}
	return id;
}

static int8_t kind_of(const hs_event *e, bool *is_new)
{
	*is_new = false;
	switch (hs_event_decode_kind_all(e, NULL)) {
	case HS_DEC_SWITCH: return CM_SWITCH;
	case HS_DEC_WAKE: {
		size_t n = e->name ? strlen(e->name) : 0;
		*is_new = n > 4 && !strcmp(e->name + n - 4, "_new"); /* a new task's first wake-up */
		return CM_WAKE;
	}
	case HS_DEC_IRQ_ENTRY: return CM_IRQ_IN;
	case HS_DEC_IRQ_EXIT: return CM_IRQ_OUT;
	case HS_DEC_SOFTIRQ_ENTRY: return CM_SOFT_IN;
	case HS_DEC_SOFTIRQ_EXIT: return CM_SOFT_OUT;
	case HS_DEC_TIMER_START: return CM_TIMER_START;
	case HS_DEC_TIMER_EXPIRE: return CM_TIMER_FIRE;
	case HS_DEC_BLOCK_QUEUE: {
		/* one I/O passes several records of this layout (queued, merged, a request got, inserted, issued): by the
		 * kernel's naming, only a bio's queueing and a request's insertion count it, each in its submitter's
		 * context; the rest would count it again */
		size_t n = e->name ? strlen(e->name) : 0;
		bool queue = n > 6 && !strcmp(e->name + n - 6, "_queue"), insert = n > 7 && !strcmp(e->name + n - 7, "_insert");
		return queue || insert ? CM_BLOCK : -1;
	}
	case HS_DEC_SIG_GENERATE: return CM_SIGNAL;
	case HS_DEC_RECLAIM_BEGIN: return CM_RECLAIM_IN;
	case HS_DEC_RECLAIM_END: return CM_RECLAIM_OUT;
	case HS_DEC_THROTTLE: return CM_MEM_THROTTLE;
	case HS_DEC_DIRTY_PAUSE: return CM_DIRTY_PAUSE;
	case HS_DEC_FORK: return CM_FORK;
	case HS_DEC_NEWTASK: return CM_NEWTASK;
	case HS_DEC_EXEC: return CM_EXEC;
	case HS_DEC_RENAME: return CM_RENAME;
	case HS_DEC_EXIT: return CM_EXIT;
	case HS_DEC_SYSCALL_ENTER: return CM_SYSCALL_IN;
	case HS_DEC_SYSCALL_EXIT: return CM_SYSCALL_OUT;
	case HS_DEC_MIGRATE: return CM_MIGRATE;
	case HS_DEC_FILE_FAULT: return CM_FILE_FAULT;
	case HS_DEC_LOCK_BEGIN: return CM_LOCK_IN;
	case HS_DEC_LOCK_END: return CM_LOCK_OUT;
	case HS_DEC_MARKER: return CM_SLICE_IN; /* refined per record: B|, E| or neither */
	default: return -1;
	}
}

/* atrace text: "B|pid|name" starts a slice of pid, "E|pid" (or "E") ends its newest. */
static bool slice_of(dat_ctx *dc, cm_rec *r)
{
	cm_model *m = dc->m;
	char b[192];
	if (!hs_tracedat_loc_str(dc->rec, loc_of(dc, "buf"), b, sizeof b))
		return false;
	if (b[0] == 'B' && b[1] == '|') {
		char *end = NULL;
		long pid = strtol(b + 2, &end, 10);
		if (!end || *end != '|')
			return false;
		char c[160];
		hs_utf8_clean(end + 1, c, sizeof c);
		r->kind = CM_SLICE_IN;
		r->a = (int32_t)pid;
		r->s = cm_intern(m, c);
		return true;
	}
	if (b[0] == 'E' && (b[1] == '|' || b[1] == '\0' || b[1] == '\n')) {
		r->kind = CM_SLICE_OUT;
		r->a = b[1] == '|' ? (int32_t)strtol(b + 2, NULL, 10) : r->pid;
		return true;
	}
	return false;
}

static int on_rec(const hs_tracedat_record *rec, void *vctx)
{
	dat_ctx *c = vctx;
	cm_model *m = c->m;
	if (rec->ts > m->end_ts)
		return 1; /* merged in time order: nothing after the window matters */
	unsigned id = (unsigned)rec->id & (N_IDS - 1);
	if (c->kind[id] == -2) { /* the event layer's view is needed once per id, not per record */
		hs_event ev;
		hs_event_from_tracedat(rec, &ev);
		c->kind[id] = kind_of(&ev, &c->is_new[id]);
	}
	int8_t k = c->kind[id];
	if (!c->side && rec->missed_events && rec->ts >= m->keep_from)
		m->lost += rec->missed_events > 0 ? (uint64_t)rec->missed_events : 1;
	if (k < 0)
		return 0;
	if (!c->fields[id] && !(c->fields[id] = calloc(1, sizeof *c->fields[id]))) {
		c->st = HS_ENOMEM;
		return 1;
	}
	c->rec = rec;
	c->cur = c->fields[id];
	cm_rec r = {.ts = rec->ts, .kind = (uint8_t)k, .cpu = rec->cpu >= 0 ? (uint16_t)rec->cpu : 0, .pid = rec->pid};
	uint8_t flags = rec->data && rec->size > 2 ? ((const uint8_t *)rec->data)[2] : 0;
	r.ctx = flags & 0x08 ? CM_CTX_HARDIRQ : flags & 0x10 ? CM_CTX_SOFTIRQ : CM_CTX_TASK;
	switch ((cm_kind)k) {
	case CM_SWITCH:
		r.a = (int32_t)fint(c, "prev_pid", -1);
		r.b = (int32_t)fint(c, "next_pid", -1);
		r.x = fint(c, "prev_state", 0);
		r.y = fint(c, "prev_prio", -1);
		r.z = (int32_t)fint(c, "next_prio", -1);
		r.s = fname(c, "prev_comm");
		r.s2 = fname(c, "next_comm");
		break;
	case CM_WAKE:
		if (c->is_new[id])
			r.kind = CM_WAKE_NEW;
		r.a = (int32_t)fint(c, "pid", -1);
		r.b = (int32_t)fint(c, "target_cpu", -1);
		r.y = fint(c, "prio", -1);
		r.s = fname(c, "comm");
		break;
	case CM_IRQ_IN:
		r.a = -1; /* the handler's name says which; its number is not read */
		r.s = fstr(c, "name");
		break;
	case CM_IRQ_OUT: r.b = (int32_t)fint(c, "ret", 0); break;
	case CM_SOFT_IN:
	case CM_SOFT_OUT: r.a = (int32_t)fint(c, "vec", -1); break;
	case CM_TIMER_START:
	case CM_TIMER_FIRE:
		r.a = 1;
		r.x = fint(c, "hrtimer", 0);
		r.y = fint(c, "function", 0);
		break;
	case CM_BLOCK: {
		int64_t bytes;
		r.a = (int32_t)fint(c, "dev", 0);
		r.x = fint(c, "sector", 0);
		/* a request (rq insert/issue: it has bytes) or a bio (its sectors): one I/O is logged as both */
		r.b = fhas(c, "bytes", &bytes);
		if (!r.b)
			bytes = fint(c, "nr_sector", 0) * 512;
		r.y = bytes;
		r.s = fstr(c, "rwbs");
		break;
	}
	case CM_SIGNAL:
		r.a = (int32_t)fint(c, "sig", 0);
		r.b = (int32_t)fint(c, "pid", -1);
		r.y = fint(c, "result", 0);
		r.s = fstr(c, "comm");
		break;
	case CM_RECLAIM_OUT: r.y = fint(c, "nr_reclaimed", 0); break;
	case CM_MEM_THROTTLE: r.y = fint(c, "usec_delayed", 0); break;
	case CM_DIRTY_PAUSE: r.y = fint(c, "pause", 0); break;
	case CM_FORK:
		r.a = (int32_t)fint(c, "parent_pid", -1);
		r.b = (int32_t)fint(c, "child_pid", -1);
		r.s = fstr(c, "child_comm");
		break;
	case CM_NEWTASK:
		r.a = (int32_t)fint(c, "pid", -1);
		r.x = fint(c, "clone_flags", 0);
		r.s = fstr(c, "comm");
		break;
	case CM_EXEC:
		r.a = (int32_t)fint(c, "pid", rec->pid);
		r.s = fstr(c, "filename");
		break;
	case CM_RENAME:
		r.a = (int32_t)fint(c, "pid", rec->pid);
		r.s = fstr(c, "newcomm");
		break;
	case CM_EXIT:
		r.a = (int32_t)fint(c, "pid", rec->pid);
		r.b = (int32_t)fint(c, "group_dead", 0);
		break;
	case CM_SYSCALL_IN:
	case CM_SYSCALL_OUT: {
		size_t pre = k == CM_SYSCALL_IN ? 10 : 9; /* "sys_enter_" / "sys_exit_" */
		r.a = (int32_t)fint(c, "__syscall_nr", -1);
		if (k == CM_SYSCALL_OUT) {
			r.x = fint(c, "ret", 0);
		} else {
			int64_t v;
			r.x = fhas(c, "fd", &v) ? v : fhas(c, "op", &v) ? v : -1;
		}
		if (rec->name && strlen(rec->name) > pre)
			r.s = cm_intern(m, rec->name + pre);
		break;
	}
	case CM_MIGRATE:
		r.a = (int32_t)fint(c, "pid", -1);
		r.b = (int32_t)fint(c, "dest_cpu", -1);
		r.x = fint(c, "orig_cpu", -1);
		break;
	case CM_FILE_FAULT:
		r.a = (int32_t)fint(c, "s_dev", 0);
		r.x = fint(c, "i_ino", 0);
		r.y = fint(c, "index", 0);
		break;
	case CM_LOCK_IN:
	case CM_LOCK_OUT: r.x = fint(c, "lock_addr", 0); break;
	case CM_SLICE_IN:
		if (!slice_of(c, &r))
			return 0;
		break;
	default: break;
	}
	c->st = c->side ? cm_add_side(m, &r) : cm_add(m, &r);
	return c->st == HS_OK || c->st == HS_ELIMIT ? 0 : 1;
}

hs_status cm_read_tracedat(cm_model *m, const char *path, bool side, char *why, size_t why_cap)
{
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open_ex(path, false, &td);
	if (st != HS_OK) {
		char text[HS_PROBLEM_TEXT_MAX] = "";
		if (td && hs_tracedat_problem_count(td))
			hs_problem_format(hs_tracedat_problem_at(td, 0), text, sizeof text);
		snprintf(why, why_cap, "%s could not be read: %s", path, text[0] ? text : hs_strerror(st));
		hs_tracedat_close(td);
		return st;
	}
	dat_ctx c = {.m = m, .side = side};
	c.kind = malloc(N_IDS * sizeof *c.kind);
	c.is_new = calloc(N_IDS, sizeof *c.is_new);
	c.names = calloc(NAME_CACHE, sizeof *c.names);
	c.fields = calloc(N_IDS, sizeof *c.fields);
	if (!c.kind || !c.is_new || !c.names || !c.fields) {
		st = HS_ENOMEM;
		snprintf(why, why_cap, "out of memory reading %s", path);
		goto done;
	}
	memset(c.kind, -2, N_IDS * sizeof *c.kind);
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	if (info && info->cpus && !side)
		cm_set_cpus(m, info->cpus); /* every CPU of the ring, also one that recorded nothing */
	if (!side)
		m->irq_pid_current = true;
	st = hs_tracedat_foreach(td, on_rec, &c);
	if (st == HS_OK && c.st == HS_ENOMEM)
		st = HS_ENOMEM;
	if (st != HS_OK)
		snprintf(why, why_cap, "%s: %s", path, hs_strerror(st));
done:
	free(c.kind);
	free(c.is_new);
	free(c.names);
	for (size_t i = 0; c.fields && i < N_IDS; i++)
		free(c.fields[i]);
	free(c.fields);
	hs_tracedat_close(td);
	return st;
}
