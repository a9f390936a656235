/* replay/replay.c: the replay backend: a recorded trace.dat or .etl fed through the plan's sessions, observer and snapshots. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

#include "hindsight/backend.h"
#include "hindsight/etl.h"
#include "hindsight/limits.h"
#include "hindsight/tracedat.h"
#include "util/compat.h"
#include "hindsight/vec.h"
#include "util/hmap.h"
#include "util/json.h"
#include "util/strbuf.h"

/*
 * The whole input is read at start: only records some session of the plan
 * takes are kept (payload in one byte buffer, an index entry each), in time
 * order, so poll can pace them by their recorded time and a snapshot can write
 * a buffering session's window. What each session writes is JSON lines (one
 * object per event, in the run folder under the rules' output name plus
 * ".jsonl", so no tool mistakes it for a trace): writing a valid trace.dat or
 * .etl subset would need the formats' writers for a file that only tests read.
 */

/* How a kind of input record (trace.dat: one ftrace event id; .etl: one
 * provider/id/opcode) maps to the plan: its names and the sessions that take
 * it, unconditionally or through the plan's ftrace filters. */
typedef struct {
	size_t session;
	hs_tracedat_filter *filter;
} rp_filtered;

typedef struct {
	char *system, *name;
	int id;        /* trace.dat: the event's id in the input (for field decoding); -1 for .etl */
	uint64_t mask; /* sessions that take every record of this kind */
	rp_filtered *filtered;
	size_t n_filtered;
} rp_kind;

typedef struct {
	uint64_t ts_ns; /* the input's clock */
	uint64_t mask;  /* sessions that take it */
	size_t raw_off;
	uint32_t raw_len, kind, cpu;
	int32_t pid;
} rp_rec;

typedef struct {
	const hs_plan_session *ps;
	hs_session_status st;
	hs_cpu_stats *cpu; /* [b->cpus] */
	uint64_t *snap_first_ns, *snap_last_ns; /* buffering: [cpus], the last snapshot's window per CPU */
	char *output;      /* run_dir/<output>.jsonl */
	FILE *stream;      /* file-circular: the key events so far */
	/* buffering: the records in the emulated ring, oldest first, at most
	 * ps->memory_bytes of payload and headers. */
	size_t *win, win_head, win_len, win_cap;
	uint64_t win_bytes;
} rp_session;

struct hs_replay {
	const hs_plan *plan;
	const hs_msg *msg; /* opts->msg, borrowed */
	volatile int *interrupts;
	double speed;
	unsigned cpus;
	rp_session *s;
	size_t n;
	rp_kind *kinds;
	size_t n_kinds;
	hs_hmap kind_of; /* input key -> index in kinds */
	hs_vec recs; /* of rp_rec, in time order */
	size_t next;
	unsigned char *raw;
	size_t raw_len, raw_cap;
	uint64_t ts0, wall0; /* the first record's time, and when replay began (monotonic ns) */
	uint64_t reached;    /* the newest delivered record's time (ts0 before the first) */
	hs_tracedat *td;     /* trace.dat input: kept open for its event formats (field decoding) */
	/* mark(): marker records, apart from the input's; a window refers to one
	 * as RP_MARK | index. Their text is in raw. */
	hs_vec marks; /* of rp_rec */
	size_t mark_kind;
	bool have_mark_kind;
	hs_key_event_fn fn;
	void *fn_ctx;
	bool stopped;
};
typedef struct hs_replay hs_replay;

/* Each record's header in the emulated ring, as ftrace's ring buffer has. */
enum { RP_REC_HEADER = 8 };

/* A window entry with this bit is an index in marks, not in recs. */
#define RP_MARK ((size_t)1 << (sizeof(size_t) * 8 - 1))

/* Messages for the user through the start's sink (source "replay"); the text
 * starts with "replay: " so the engine's lines read as they always did. */
static void say(const hs_msg *m, hs_msg_level level, const char *fmt, ...) HS_PRINTF_FMT(3, 4);
static void say(const hs_msg *m, hs_msg_level level, const char *fmt, ...)
{
	hs_strbuf sb = {0};
	va_list ap;
	va_start(ap, fmt);
	hs_sb_append(&sb, "replay: ");
	hs_sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	hs_msg_say(m, level, "replay", "%s", sb.oom ? "replay: out of memory for a message" : hs_sb_cstr(&sb));
	hs_sb_free(&sb);
}

/* A reader's problems, one message each, after "path: " when a path is given. */
static void say_problems(const hs_msg *m, hs_msg_level level, const char *path, const hs_problems *pl)
{
	for (size_t i = 0; i < hs_problems_count(pl); i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		hs_problem_format(hs_problems_at(pl, i), text, sizeof text);
		if (path)
			say(m, level, "%s: %s", path, text);
		else
			say(m, level, "%s", text);
	}
}

static const rp_rec *rec_at(const hs_replay *r, size_t idx)
{
	return idx & RP_MARK ? hs_vec_at(&r->marks, idx & ~RP_MARK) : hs_vec_at(&r->recs, idx);
}

static uint64_t mono_ns(void)
{
#ifdef _WIN32
	LARGE_INTEGER f, c;
	QueryPerformanceFrequency(&f);
	QueryPerformanceCounter(&c);
	return (uint64_t)((double)c.QuadPart * 1e9 / (double)f.QuadPart);
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* Sleeps ms (a signal cuts it short on POSIX, which is what the engine wants). */
static void sleep_ms(int ms)
{
	if (ms <= 0)
		return;
#ifdef _WIN32
	Sleep((DWORD)ms);
#else
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
#endif
}

static bool interrupted(const hs_replay *r)
{
	return r->interrupts && *r->interrupts;
}

/* ---- reading the input ---- */

static hs_status add_kind(hs_replay *r, const void *key, size_t key_len, const char *system, const char *name,
			  size_t *out)
{
	bool added = false;
	uint64_t *slot = hs_hmap_put_bytes(&r->kind_of, key, key_len, &added);
	if (!slot)
		return HS_ENOMEM;
	if (!added) {
		*out = (size_t)*slot;
		return HS_OK;
	}
	rp_kind *k = realloc(r->kinds, (r->n_kinds + 1) * sizeof(*k));
	if (!k)
		return HS_ENOMEM;
	r->kinds = k;
	k = &r->kinds[r->n_kinds];
	memset(k, 0, sizeof(*k));
	k->system = strdup(system);
	k->name = strdup(name);
	if (!k->system || !k->name) {
		free(k->system);
		free(k->name);
		return HS_ENOMEM;
	}
	k->id = -1;
	*slot = r->n_kinds;
	*out = r->n_kinds++;
	return HS_OK;
}

static hs_status add_filtered(rp_kind *k, size_t session, hs_tracedat_filter *f)
{
	rp_filtered *nf = realloc(k->filtered, (k->n_filtered + 1) * sizeof(*nf));
	if (!nf) {
		hs_tracedat_filter_free(f);
		return HS_ENOMEM;
	}
	k->filtered = nf;
	nf[k->n_filtered++] = (rp_filtered){.session = session, .filter = f};
	return HS_OK;
}

/* Appends len bytes to the payload store (records' and marks' payloads) and
 * says where they start. */
static hs_status raw_append(hs_replay *r, const void *p, size_t len, size_t *off)
{
	if (r->raw_len + len > r->raw_cap) {
		size_t cap = r->raw_cap ? r->raw_cap : 65536;
		while (cap < r->raw_len + len)
			cap *= 2;
		unsigned char *n = realloc(r->raw, cap);
		if (!n)
			return HS_ENOMEM;
		r->raw = n;
		r->raw_cap = cap;
	}
	if (len)
		memcpy(r->raw + r->raw_len, p, len);
	*off = r->raw_len;
	r->raw_len += len;
	return HS_OK;
}

/* A new record at the end of v (the records or the marks) with its payload
 * copied to the store; the caller fills in the rest. NULL when out of memory
 * (v unchanged: the room is made before the payload is stored). */
static rp_rec *push_rec(hs_replay *r, hs_vec *v, const void *raw, size_t raw_len)
{
	size_t off;
	if (hs_vec_reserve(v, v->len + 1) != HS_OK || raw_append(r, raw, raw_len, &off) != HS_OK)
		return NULL;
	rp_rec *e = hs_vec_push(v); /* the room is there */
	*e = (rp_rec){.raw_off = off, .raw_len = (uint32_t)raw_len};
	return e;
}

static hs_status add_rec(hs_replay *r, uint64_t ts_ns, uint64_t mask, size_t kind, unsigned cpu, int pid,
			 const void *raw, size_t raw_len)
{
	if (raw_len > UINT32_MAX || r->raw_len + raw_len + (r->recs.len + 1) * sizeof(rp_rec) > HS_REPLAY_MAX_BYTES)
		return HS_ELIMIT;
	rp_rec *e = push_rec(r, &r->recs, raw, raw_len);
	if (!e)
		return HS_ENOMEM;
	e->ts_ns = ts_ns;
	e->mask = mask;
	e->kind = (uint32_t)kind;
	e->cpu = cpu;
	e->pid = pid;
	if (cpu + 1 > r->cpus)
		r->cpus = cpu + 1;
	return HS_OK;
}

/* trace.dat: the sessions whose providers enable the record's system/event. */
typedef struct {
	hs_replay *r;
	hs_tracedat *td;
	hs_status st;
} td_walk;

static hs_status td_kind(td_walk *w, const hs_tracedat_record *rec, size_t *out)
{
	hs_replay *r = w->r;
	size_t before = r->n_kinds;
	int64_t id = rec->id;
	hs_status st = add_kind(r, &id, sizeof(id), rec->system, rec->name, out);
	if (st != HS_OK || r->n_kinds == before)
		return st;
	r->kinds[*out].id = rec->id;
	/* trace_marker writes (ftrace/print) reach a session with copy_trace_marker
	 * on the kernel whatever its providers say: so here too. */
	bool marker = !strcmp(rec->system, "ftrace") && !strcmp(rec->name, "print");
	for (size_t i = 0; marker && i < r->n; i++)
		if (r->s[i].ps->linux_.copy_trace_marker)
			r->kinds[*out].mask |= 1ull << i;
	for (size_t i = 0; i < r->n; i++) {
		const hs_plan_session *ps = r->s[i].ps;
		for (size_t p = 0; p < ps->n_providers; p++) {
			const hs_plan_provider *pp = &ps->providers[p];
			const char *sys = pp->provider->system ? pp->provider->system : pp->provider->name;
			if (!sys || strcmp(sys, rec->system))
				continue;
			if (!pp->n_events) { /* the whole system */
				r->kinds[*out].mask |= 1ull << i;
				continue;
			}
			for (size_t e = 0; e < pp->n_events; e++) {
				const hs_plan_event *pe = &pp->events[e];
				if (!pe->name || strcmp(pe->name, rec->name))
					continue;
				if (!pe->filter) {
					r->kinds[*out].mask |= 1ull << i;
					continue;
				}
				hs_tracedat_filter *f = NULL;
				if (hs_tracedat_filter_new(w->td, rec->system, rec->name, pe->filter, &f) != HS_OK) {
					say(r->msg, HS_MSG_WARN,
					    "the filter of %s:%s in session %s does not compile for "
					    "this input's format (%s); the session takes none of them",
					    rec->system, rec->name, ps->session->name, pe->filter);
					continue;
				}
				if ((st = add_filtered(&r->kinds[*out], i, f)) != HS_OK)
					return st;
			}
		}
	}
	return HS_OK;
}

static int td_record(const hs_tracedat_record *rec, void *ctx)
{
	td_walk *w = ctx;
	hs_replay *r = w->r;
	size_t k;
	if ((w->st = td_kind(w, rec, &k)) != HS_OK)
		return 1;
	const rp_kind *kind = &r->kinds[k];
	uint64_t mask = kind->mask;
	for (size_t i = 0; i < kind->n_filtered; i++)
		if (hs_tracedat_filter_match(kind->filtered[i].filter, rec))
			mask |= 1ull << kind->filtered[i].session;
	/* A buffer named like one of the plan's instances holds that session's events only. */
	for (size_t i = 0; rec->buffer[0] && i < r->n; i++) {
		const char *ln = r->s[i].ps->session->logger_name;
		if (ln && !strcmp(ln, rec->buffer)) {
			mask &= 1ull << i;
			break;
		}
	}
	if (!mask)
		return 0;
	w->st = add_rec(r, rec->ts, mask, k, rec->cpu < 0 ? 0 : (unsigned)rec->cpu, rec->pid, rec->data, rec->size);
	return w->st != HS_OK;
}

static hs_status load_tracedat(hs_replay *r, const char *path)
{
	if (r->plan->platform != HS_PLATFORM_LINUX) {
		say(r->msg, HS_MSG_ERROR, "%s is an ftrace trace; it replays a linux plan", path);
		return HS_EINVAL;
	}
	hs_tracedat *td = NULL;
	/* The reader forks nothing (the engine has threads by now) and checks what
	 * it reads: a damaged input gets problems, said below, never a crash. */
	hs_status st = hs_tracedat_open_ex(path, false, &td);
	if (st != HS_OK) {
		say(r->msg, HS_MSG_ERROR, "cannot read %s: %s", path, hs_strerror(st));
		if (td)
			say_problems(r->msg, HS_MSG_ERROR, NULL, hs_tracedat_problems(td));
		hs_tracedat_close(td);
		return st == HS_EUNSUPPORTED ? st : HS_EINVAL;
	}
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	r->cpus = info->cpus;
	td_walk w = {.r = r, .td = td, .st = HS_OK};
	st = hs_tracedat_foreach(td, td_record, &w);
	if (st == HS_OK)
		st = w.st;
	say_problems(r->msg, HS_MSG_WARN, path, hs_tracedat_problems(td));
	/* The filters belong to the reader's event formats: they go with it. */
	for (size_t k = 0; k < r->n_kinds; k++) {
		for (size_t i = 0; i < r->kinds[k].n_filtered; i++)
			hs_tracedat_filter_free(r->kinds[k].filtered[i].filter);
		free(r->kinds[k].filtered);
		r->kinds[k].filtered = NULL;
		r->kinds[k].n_filtered = 0;
	}
	/* The reader stays open: its event formats decode the key events' fields. */
	if (st == HS_OK)
		r->td = td;
	else
		hs_tracedat_close(td);
	return st;
}

/* .etl: manifest and TraceLogging events by provider GUID (and event id when
 * the plan whitelists), classic events by their class GUID, kernel events to
 * every session with a system provider (its enable flags are not decoded). */
static bool guid_eq(const hs_guid *a, const hs_guid *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static hs_status etl_kind(hs_replay *r, const hs_etl_record *rec, size_t *out)
{
	struct {
		uint8_t kind, group, opcode, pad;
		uint16_t id, pad2;
		hs_guid guid;
	} key;
	memset(&key, 0, sizeof(key));
	bool kernel = rec->kind == HS_ETL_SYSTEM || rec->kind == HS_ETL_COMPACT || rec->kind == HS_ETL_PERFINFO;
	key.kind = kernel ? 0 : (uint8_t)(rec->kind + 1);
	key.group = rec->group;
	key.opcode = rec->opcode;
	key.id = rec->id;
	if (rec->has_guid)
		key.guid = rec->guid;
	uint64_t *slot = hs_hmap_get_bytes(&r->kind_of, &key, sizeof(key));
	if (slot) {
		*out = (size_t)*slot;
		return HS_OK;
	}
	uint64_t mask = 0;
	const char *system = NULL, *name = NULL;
	for (size_t i = 0; i < r->n; i++) {
		const hs_plan_session *ps = r->s[i].ps;
		for (size_t p = 0; p < ps->n_providers; p++) {
			const hs_plan_provider *pp = &ps->providers[p];
			const hs_provider *pr = pp->provider;
			if (kernel) {
				if (pr->kind == HS_PKIND_SYSTEM) {
					mask |= 1ull << i;
					system = pr->name;
				}
				continue;
			}
			if (!rec->has_guid)
				continue;
			bool by_provider = rec->kind == HS_ETL_EVENT && pr->has_guid && guid_eq(&pr->guid, &rec->guid);
			bool classic = rec->kind == HS_ETL_FULL || rec->kind == HS_ETL_INSTANCE;
			if (by_provider && !pp->whitelist) {
				mask |= 1ull << i;
				system = pr->name;
				continue;
			}
			for (size_t e = 0; e < pp->n_events; e++) {
				const hs_plan_event *pe = &pp->events[e];
				bool hit = by_provider ? pe->id == (int)rec->id
						       : classic && pe->has_classic_guid && guid_eq(&pe->classic_guid, &rec->guid) &&
								 (pe->id < 0 || pe->id == (int)rec->opcode);
				if (hit) {
					mask |= 1ull << i;
					system = pr->name;
					name = pe->name;
				}
			}
		}
	}
	char buf[64];
	if (!name) {
		if (kernel)
			snprintf(buf, sizeof buf, "group %u opcode %u", rec->group, rec->opcode);
		else if (rec->kind == HS_ETL_EVENT)
			snprintf(buf, sizeof buf, "id %u", rec->id);
		else
			snprintf(buf, sizeof buf, "opcode %u", rec->opcode);
		name = buf;
	}
	hs_status st = add_kind(r, &key, sizeof(key), system ? system : "?", name, out);
	if (st == HS_OK)
		r->kinds[*out].mask = mask;
	return st;
}

typedef struct {
	hs_replay *r;
	uint64_t last_ns;
	hs_status st;
} etl_walk;

static int etl_record(const hs_etl_record *rec, void *ctx)
{
	etl_walk *w = ctx;
	size_t k;
	if ((w->st = etl_kind(w->r, rec, &k)) != HS_OK)
		return 1;
	uint64_t mask = w->r->kinds[k].mask;
	if (!mask)
		return 0;
	/* FILETIME is 100 ns; a record without a usable time keeps the last one. */
	if (rec->filetime)
		w->last_ns = rec->filetime * 100u;
	w->st = add_rec(w->r, w->last_ns, mask, k, rec->cpu, rec->pid == UINT32_MAX ? -1 : (int)rec->pid, rec->raw,
			rec->raw_len);
	return w->st != HS_OK;
}

static hs_status load_etl(hs_replay *r, const char *path)
{
	hs_etl *etl = NULL;
	hs_status st = hs_etl_open(path, &etl);
	if (st != HS_OK) {
		say(r->msg, HS_MSG_ERROR, "%s is neither an ftrace nor an ETW trace (%s)", path, hs_strerror(st));
		hs_etl_close(etl);
		return st == HS_ENOMEM ? st : HS_EINVAL;
	}
	if (r->plan->platform != HS_PLATFORM_WINDOWS) {
		say(r->msg, HS_MSG_ERROR, "%s is an ETW trace; it replays a windows plan", path);
		hs_etl_close(etl);
		return HS_EINVAL;
	}
	r->cpus = hs_etl_get_header(etl)->cpus;
	etl_walk w = {.r = r, .st = HS_OK};
	st = hs_etl_foreach(etl, HS_ETL_TIME_ORDER, etl_record, &w);
	if (st == HS_OK)
		st = w.st;
	say_problems(r->msg, HS_MSG_WARN, path, hs_etl_problems(etl));
	hs_etl_close(etl);
	return st;
}

/* ---- the backend ---- */

static void rp_free(hs_backend *bh);

static hs_status rp_start(const hs_plan *plan, const char *run_dir, const hs_backend_opts *opts, hs_backend **out)
{
	*out = NULL;
	const hs_msg *msg = opts ? opts->msg : NULL;
	if (!opts || !opts->input) {
		say(msg, HS_MSG_ERROR, "no input file given");
		return HS_EINVAL;
	}
	if (!(opts->speed >= 0) || opts->speed > 1e9) {
		say(msg, HS_MSG_ERROR, "the speed must be 0 (as fast as possible) or a factor above 0, not %g",
		    opts->speed);
		return HS_EINVAL;
	}
	if (plan->n_sessions > HS_REPLAY_MAX_SESSIONS) {
		say(msg, HS_MSG_ERROR, "the plan has %zu sessions; replay takes at most %d", plan->n_sessions,
		    HS_REPLAY_MAX_SESSIONS);
		return HS_ELIMIT;
	}
	hs_replay *r = calloc(1, sizeof(*r));
	if (!r)
		return HS_ENOMEM;
	r->recs = (hs_vec)HS_VEC_INIT(sizeof(rp_rec));
	r->marks = (hs_vec)HS_VEC_INIT(sizeof(rp_rec));
	r->plan = plan;
	r->msg = msg;
	r->interrupts = opts->interrupts;
	r->speed = opts->speed;
	r->n = plan->n_sessions;
	hs_status st = HS_ENOMEM;
	if (!(r->s = calloc(r->n ? r->n : 1, sizeof(*r->s))))
		goto fail;
	for (size_t i = 0; i < r->n; i++) {
		rp_session *s = &r->s[i];
		s->ps = &plan->sessions[i];
		if (s->ps->session->mode == HS_MODE_SAMPLING) {
			say(msg, HS_MSG_ERROR, "session %s is a sampling session; it runs with --launch PROG",
			    s->ps->session->name);
			st = HS_EINVAL;
			goto fail;
		}
		hs_strbuf sb = {0};
		hs_sb_printf(&sb, "%s/%s.jsonl", run_dir, s->ps->session->output);
		if (!(s->output = hs_sb_take(&sb)))
			goto fail;
	}
	uint64_t t0 = mono_ns();
	st = hs_tracedat_sniff(opts->input) ? load_tracedat(r, opts->input) : load_etl(r, opts->input);
	if (st == HS_ELIMIT)
		say(msg, HS_MSG_ERROR,
		    "%s holds more than %llu MiB the plan's sessions take; replay keeps them "
		    "in memory and stops there",
		    opts->input, (unsigned long long)(HS_REPLAY_MAX_BYTES >> 20));
	if (st != HS_OK)
		goto fail;
	if (!r->cpus)
		r->cpus = 1;
	st = HS_ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		rp_session *s = &r->s[i];
		const hs_session *rs = s->ps->session;
		if (!(s->cpu = calloc(r->cpus, sizeof(*s->cpu))) || !(s->snap_first_ns = calloc(r->cpus, sizeof(uint64_t))) ||
		    !(s->snap_last_ns = calloc(r->cpus, sizeof(uint64_t))))
			goto fail;
		if (rs->mode == HS_MODE_BUFFERING) {
			s->st.snapshot_cpu_first_ns = s->snap_first_ns;
			s->st.snapshot_cpu_last_ns = s->snap_last_ns;
		}
		s->st.name = rs->name;
		s->st.kernel_name = rs->logger_name;
		s->st.mode = rs->mode;
		s->st.cpus = r->cpus;
		s->st.cpu = s->cpu;
		s->st.real_per_cpu_kb = s->ps->linux_.per_cpu_kb;
		for (size_t p = 0; p < s->ps->n_providers; p++)
			s->st.events_enabled += s->ps->providers[p].n_events ? s->ps->providers[p].n_events : 1;
		if (rs->mode == HS_MODE_FILE_CIRCULAR && !(s->stream = fopen(s->output, "wb"))) {
			say(msg, HS_MSG_ERROR, "cannot create %s", s->output);
			st = HS_EIO;
			goto fail;
		}
	}
	uint64_t span = r->recs.len ? rec_at(r, r->recs.len - 1)->ts_ns - rec_at(r, 0)->ts_ns : 0;
	char pace[64];
	if (r->speed > 0)
		snprintf(pace, sizeof pace, "replaying at %gx", r->speed);
	else
		snprintf(pace, sizeof pace, "replaying as fast as possible");
	say(msg, HS_MSG_INFO,
	    "%s: %zu records for the plan's sessions over %.3f s of recorded time (read in %.0f ms), %u "
	    "CPUs; %s",
	    opts->input, r->recs.len, (double)span / 1e9, (double)(mono_ns() - t0) / 1e6, r->cpus, pace);
	r->ts0 = r->recs.len ? rec_at(r, 0)->ts_ns : 0;
	r->reached = r->ts0;
	r->wall0 = mono_ns();
	*out = (hs_backend *)r;
	return HS_OK;
fail:
	rp_free((hs_backend *)r);
	return st;
}

static void json_line(hs_strbuf *sb, const hs_replay *r, const rp_rec *rec)
{
	const rp_kind *k = &r->kinds[rec->kind];
	hs_sb_printf(sb, "{\"ts_ns\":%" PRIu64 ",\"cpu\":%" PRIu32 ",\"pid\":%" PRId32 ",\"system\":", rec->ts_ns,
		     rec->cpu, rec->pid);
	hs_json_escape(sb, k->system);
	hs_sb_append(sb, ",\"event\":");
	hs_json_escape(sb, k->name);
	hs_sb_printf(sb, ",\"size\":%" PRIu32, rec->raw_len);
	if (r->have_mark_kind && rec->kind == r->mark_kind) {
		/* A marker: its text, as `trace-cmd report` shows a trace_marker write. */
		hs_strbuf t = {0};
		hs_sb_appendn(&t, (const char *)r->raw + rec->raw_off, rec->raw_len);
		hs_sb_append(sb, ",\"text\":");
		hs_json_escape(sb, hs_sb_cstr(&t));
		hs_sb_free(&t);
	}
	hs_sb_append(sb, "}\n");
}

static void window_drop_oldest(rp_session *s, const hs_replay *r)
{
	const rp_rec *old = rec_at(r, s->win[s->win_head]);
	s->win_bytes -= old->raw_len + RP_REC_HEADER;
	s->cpu[old->cpu].entries--;
	s->cpu[old->cpu].overrun++;
	s->win_head++;
	s->win_len--;
}

static hs_status window_push(rp_session *s, const hs_replay *r, size_t idx)
{
	if (s->win_head + s->win_len == s->win_cap) {
		if (s->win_head) { /* slide back before growing */
			memmove(s->win, s->win + s->win_head, s->win_len * sizeof(*s->win));
			s->win_head = 0;
		} else {
			size_t *n = hs_array_grow(s->win, sizeof *n, s->win_len, &s->win_cap, 1024);
			if (!n)
				return HS_ENOMEM;
			s->win = n;
		}
	}
	const rp_rec *rec = rec_at(r, idx);
	s->win[s->win_head + s->win_len++] = idx;
	s->win_bytes += rec->raw_len + RP_REC_HEADER;
	s->cpu[rec->cpu].entries++;
	s->cpu[rec->cpu].bytes += rec->raw_len + RP_REC_HEADER;
	/* A ring of memory_bytes overwrites its oldest events, as the kernel's would. */
	while (s->win_len > 1 && s->win_bytes > s->ps->memory_bytes)
		window_drop_oldest(s, r);
	return HS_OK;
}

/* Field decoding for the observer: the record's payload through the input's
 * event formats (trace.dat); .etl input has none here, so both say false. */
typedef struct {
	const hs_replay *r;
	int id;
} rp_fields_ctx;

static bool rp_field_num(const hs_key_event *ev, const char *field, int64_t *out)
{
	const rp_fields_ctx *c = ev->fields->ctx;
	return c->r->td && hs_tracedat_event_field_int(c->r->td, c->id, ev->raw, ev->raw_len, field, out);
}

static bool rp_field_str(const hs_key_event *ev, const char *field, char *buf, size_t cap)
{
	const rp_fields_ctx *c = ev->fields->ctx;
	if (!c->r->td) {
		if (cap)
			buf[0] = '\0';
		return false;
	}
	return hs_tracedat_event_field_str(c->r->td, c->id, ev->raw, ev->raw_len, field, buf, cap);
}

static size_t rp_field_names(const hs_key_event *ev, char (*names)[32], bool *is_str, size_t cap)
{
	const rp_fields_ctx *c = ev->fields->ctx;
	return c->r->td ? hs_tracedat_event_field_names(c->r->td, c->id, names, is_str, cap) : 0;
}

static hs_status deliver(hs_replay *r, size_t idx)
{
	const rp_rec *rec = rec_at(r, idx);
	hs_status st = HS_OK;
	if (rec->ts_ns > r->reached)
		r->reached = rec->ts_ns;
	for (size_t i = 0; i < r->n; i++) {
		if (!(rec->mask & (1ull << i)))
			continue;
		rp_session *s = &r->s[i];
		if (s->ps->session->mode == HS_MODE_BUFFERING) {
			if (window_push(s, r, idx) != HS_OK)
				st = HS_ENOMEM;
			continue;
		}
		s->cpu[rec->cpu].read++;
		s->cpu[rec->cpu].bytes += rec->raw_len;
		s->st.bytes_streamed += rec->raw_len;
		hs_strbuf sb = {0};
		json_line(&sb, r, rec);
		if (sb.oom || fputs(hs_sb_cstr(&sb), s->stream) < 0) {
			s->st.bytes_lost_disk += rec->raw_len;
			st = HS_EIO;
		}
		hs_sb_free(&sb);
		if (r->fn) {
			const rp_kind *k = &r->kinds[rec->kind];
			rp_fields_ctx fc = {.r = r, .id = k->id};
			hs_key_fields kf = {.num = rp_field_num, .str = rp_field_str, .names = rp_field_names, .ctx = &fc};
			hs_key_event ev = {.session = i, .cpu = rec->cpu, .ts_ns = rec->ts_ns, .system = k->system,
					   .name = k->name, .pid = rec->pid, .raw = r->raw + rec->raw_off,
					   .raw_len = rec->raw_len, .fields = &kf};
			r->fn(r->fn_ctx, &ev);
		}
	}
	return st;
}

/* Wall-clock ns since replay began that record i is due at. */
static uint64_t due_ns(const hs_replay *r, size_t i)
{
	return (uint64_t)((double)(rec_at(r, i)->ts_ns - r->ts0) / r->speed);
}

static hs_status rp_poll(hs_backend *bh, int timeout_ms)
{
	hs_replay *r = (hs_replay *)bh;
	if (r->stopped)
		return HS_EINVAL;
	if (r->next == r->recs.len || interrupted(r))
		return HS_OK; /* the loop asks finished() and stops */
	/* Sleep until the next record is due, at most timeout_ms. */
	if (r->speed > 0) {
		uint64_t now = mono_ns() - r->wall0, due = due_ns(r, r->next);
		if (due > now) {
			uint64_t wait = (due - now) / 1000000u;
			sleep_ms(wait < (uint64_t)timeout_ms ? (int)wait : timeout_ms);
		}
	}
	hs_status st = HS_OK;
	uint64_t now = mono_ns() - r->wall0;
	for (size_t n = 0; r->next < r->recs.len; n++) {
		if (r->speed > 0 && due_ns(r, r->next) > now)
			break;
		/* A stop request is seen within a few thousand records even at full speed. */
		if ((n & 4095) == 4095 && interrupted(r))
			break;
		hs_status d = deliver(r, r->next++);
		if (d != HS_OK)
			st = d;
	}
	for (size_t i = 0; i < r->n; i++)
		if (r->s[i].stream) {
			fflush(r->s[i].stream);
			long pos = ftell(r->s[i].stream);
			r->s[i].st.bytes_in_file = pos > 0 ? (uint64_t)pos : 0;
		}
	return st;
}

static bool rp_finished(const hs_backend *bh)
{
	const hs_replay *r = (const hs_replay *)bh;
	return r->next == r->recs.len;
}

/* path.tmp written by fn, synced, renamed over path. */
static hs_status write_file(const char *path, hs_status (*fn)(FILE *f, void *ctx), void *ctx, uint64_t *size)
{
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s.tmp", path);
	char *tmp = hs_sb_take(&sb);
	if (!tmp)
		return HS_ENOMEM;
	FILE *f = fopen(tmp, "wb");
	hs_status st = f ? fn(f, ctx) : HS_EIO;
	if (f) {
		if (fflush(f) || hs_fsync(fileno(f)))
			st = HS_EIO;
		long pos = ftell(f);
		*size = pos > 0 ? (uint64_t)pos : 0;
		if (fclose(f))
			st = HS_EIO;
	}
	if (st == HS_OK && hs_rename(tmp, path))
		st = HS_EIO;
	if (st != HS_OK)
		hs_unlink(tmp);
	free(tmp);
	return st;
}

typedef struct {
	hs_replay *r;
	rp_session *s;
} window_ctx;

static hs_status write_window(FILE *f, void *vctx)
{
	window_ctx *c = vctx;
	hs_strbuf sb = {0};
	for (size_t i = 0; i < c->s->win_len; i++)
		json_line(&sb, c->r, rec_at(c->r, c->s->win[c->s->win_head + i]));
	if (sb.oom) {
		hs_sb_free(&sb);
		return HS_ENOMEM;
	}
	return hs_sb_write_free(&sb, f);
}

static hs_status copy_stream(FILE *f, void *vctx)
{
	rp_session *s = vctx;
	FILE *in = fopen(s->output, "rb");
	if (!in)
		return HS_EIO;
	char buf[65536];
	size_t n;
	hs_status st = HS_OK;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, n, f) != n)
			st = HS_EIO;
	if (ferror(in))
		st = HS_EIO;
	fclose(in);
	return st;
}

static hs_status rp_snapshot(hs_backend *bh, size_t session, const char *path, bool final)
{
	hs_replay *r = (hs_replay *)bh;
	(void)final; /* the emulated ring resumes either way; nothing more arrives after the final one */
	if (session >= r->n || r->stopped)
		return HS_EINVAL;
	rp_session *s = &r->s[session];
	uint64_t size = 0;
	if (s->ps->session->mode == HS_MODE_FILE_CIRCULAR) {
		if (fflush(s->stream) || hs_fsync(fileno(s->stream)))
			return HS_EIO;
		return path && strcmp(path, s->output) ? write_file(path, copy_stream, s, &size) : HS_OK;
	}
	uint64_t t0 = mono_ns();
	const char *out = path ? path : s->output;
	window_ctx wc = {.r = r, .s = s};
	hs_status st = write_file(out, write_window, &wc, &size);
	s->st.snapshot_s = (double)(mono_ns() - t0) / 1e9;
	if (st != HS_OK) {
		say(r->msg, HS_MSG_ERROR, "cannot write %s: %s", out, hs_strerror(st));
		return st;
	}
	/* Drained, as a ring snapshot drains: the window starts empty again. */
	s->st.snapshots++;
	s->st.snapshot_events = s->st.snapshot_entries = s->win_len;
	s->st.snapshot_raw_bytes = s->win_bytes;
	s->st.snapshot_file_bytes = size;
	s->st.snapshot_events_dropped = s->st.snapshot_bytes_dropped = 0;
	for (unsigned c = 0; c < r->cpus; c++) {
		s->cpu[c].read += s->cpu[c].entries;
		s->cpu[c].entries = 0;
		s->snap_first_ns[c] = s->snap_last_ns[c] = 0;
	}
	/* The window each CPU's part covers (records are in time order). */
	for (size_t k = 0; k < s->win_len; k++) {
		const rp_rec *rec = rec_at(r, s->win[s->win_head + k]);
		if (rec->cpu >= r->cpus)
			continue;
		if (!s->snap_first_ns[rec->cpu])
			s->snap_first_ns[rec->cpu] = rec->ts_ns;
		s->snap_last_ns[rec->cpu] = rec->ts_ns;
	}
	say(r->msg, HS_MSG_INFO, "ring %s saved to %s: %zu events", s->ps->session->name, out, s->win_len);
	s->win_head = s->win_len = 0;
	s->win_bytes = 0;
	return HS_OK;
}

static hs_status rp_set_observer(hs_backend *bh, hs_key_event_fn fn, void *ctx)
{
	hs_replay *r = (hs_replay *)bh;
	r->fn = fn;
	r->fn_ctx = ctx;
	return HS_OK;
}

static hs_status rp_session_status(hs_backend *bh, size_t session, const hs_session_status **out)
{
	hs_replay *r = (hs_replay *)bh;
	if (session >= r->n)
		return HS_EINVAL;
	*out = &r->s[session].st;
	return HS_OK;
}

static size_t rp_n_sessions(const hs_backend *bh)
{
	return ((const hs_replay *)bh)->n;
}

/* The recorded time the replay has reached: paced, where the wall clock is
 * in the input (never before the newest delivered record, never past the
 * last); as fast as possible, the newest delivered record's time. */
static uint64_t rp_now_ns(hs_backend *bh)
{
	hs_replay *r = (hs_replay *)bh;
	uint64_t t = r->reached;
	if (r->speed > 0 && r->recs.len && r->next < r->recs.len) {
		uint64_t due = r->ts0 + (uint64_t)((double)(mono_ns() - r->wall0) * r->speed);
		uint64_t last = rec_at(r, r->recs.len - 1)->ts_ns;
		if (due > last)
			due = last;
		if (due > t)
			t = due;
	}
	return t;
}

/* A marker record at the time reached: a line with its text in every
 * file-circular session's .jsonl and an entry in every buffering session's
 * window (so the next snapshot shows it), as the kernel records a
 * trace_marker write (system ftrace, event print) in every instance. It is
 * not delivered to the observer (the kernel's marker is, as ftrace/print, only
 * to a session whose stream reads it; a trigger marks after it decided). */
static hs_status rp_mark(hs_backend *bh, const char *text)
{
	hs_replay *r = (hs_replay *)bh;
	if (r->stopped || !text)
		return HS_EINVAL;
	size_t len = strlen(text);
	while (len && text[len - 1] == '\n')
		len--;
	if (len > UINT32_MAX)
		return HS_EINVAL;
	if (!r->have_mark_kind) {
		const char *key = "hindsight mark";
		bool linux_ = r->plan->platform == HS_PLATFORM_LINUX;
		hs_status st = add_kind(r, key, strlen(key), linux_ ? "ftrace" : "hindsight", linux_ ? "print" : "mark",
					&r->mark_kind);
		if (st != HS_OK)
			return st;
		r->have_mark_kind = true;
	}
	size_t idx = r->marks.len;
	rp_rec *m = push_rec(r, &r->marks, text, len);
	if (!m)
		return HS_ENOMEM;
	m->ts_ns = rp_now_ns(bh);
	m->kind = (uint32_t)r->mark_kind;
	m->pid = (int32_t)hs_getpid();
	hs_status st = HS_OK;
	for (size_t i = 0; i < r->n; i++) {
		rp_session *s = &r->s[i];
		if (s->ps->session->mode == HS_MODE_BUFFERING) {
			if (window_push(s, r, RP_MARK | idx) != HS_OK)
				st = HS_ENOMEM;
			continue;
		}
		if (!s->stream)
			continue;
		hs_strbuf sb = {0};
		json_line(&sb, r, m);
		if (sb.oom || fputs(hs_sb_cstr(&sb), s->stream) < 0)
			st = HS_EIO;
		hs_sb_free(&sb);
	}
	return st;
}

static hs_status rp_stop(hs_backend *bh)
{
	hs_replay *r = (hs_replay *)bh;
	if (r->stopped)
		return HS_OK;
	r->stopped = true;
	hs_status st = HS_OK;
	for (size_t i = 0; i < r->n; i++) {
		rp_session *s = &r->s[i];
		if (!s->stream)
			continue;
		if (fflush(s->stream) || hs_fsync(fileno(s->stream)))
			st = HS_EIO;
		long pos = ftell(s->stream);
		s->st.bytes_in_file = pos > 0 ? (uint64_t)pos : 0;
		if (fclose(s->stream))
			st = HS_EIO;
		s->stream = NULL;
	}
	if (r->next < r->recs.len)
		say(r->msg, HS_MSG_WARN, "stopped with %zu of %zu records replayed", r->next, r->recs.len);
	return st;
}

static void rp_free(hs_backend *bh)
{
	hs_replay *r = (hs_replay *)bh;
	if (!r)
		return;
	for (size_t i = 0; r->s && i < r->n; i++) {
		if (r->s[i].stream)
			fclose(r->s[i].stream);
		free(r->s[i].cpu);
		free(r->s[i].snap_first_ns);
		free(r->s[i].snap_last_ns);
		free(r->s[i].output);
		free(r->s[i].win);
	}
	for (size_t k = 0; k < r->n_kinds; k++) {
		free(r->kinds[k].system);
		free(r->kinds[k].name);
		free(r->kinds[k].filtered);
	}
	hs_hmap_free(&r->kind_of);
	hs_tracedat_close(r->td);
	hs_vec_free(&r->marks);
	free(r->kinds);
	free(r->s);
	hs_vec_free(&r->recs);
	free(r->raw);
	free(r);
}

const hs_backend_ops hs_backend_replay = {
	.name = "replay",
	.kernel = false,
	.wake = HS_BACKEND_WAKE_ALWAYS,
	.wake_ms = HS_REPLAY_WAKE_MS,
	.start = rp_start,
	.poll = rp_poll,
	.snapshot = rp_snapshot,
	.set_observer = rp_set_observer,
	.session_status = rp_session_status,
	.n_sessions = rp_n_sessions,
	.finished = rp_finished,
	.now_ns = rp_now_ns,
	.mark = rp_mark,
	.stop = rp_stop,
	.free = rp_free,
};
