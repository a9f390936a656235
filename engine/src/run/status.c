/* run/status.c: gathers the running recorder's status from the backend and the trigger engine, and writes it as JSON. */
#include "run/status.h"

#include <stdlib.h>
#include <string.h>

#include "hindsight/compat.h"
#include "hindsight/limits.h"
#include "run/os.h"

#define NS_PER_S 1000000000ull
/* The rate cap's window (trigger.c counts max_per_hour in any sliding hour). */
#define HOUR_NS (3600ull * NS_PER_S)

const char *hs_trigger_state_name(hs_trigger_state s)
{
	switch (s) {
	case HS_TRIGGER_STATE_WARMING_UP: return "warming_up";
	case HS_TRIGGER_STATE_PENDING: return "pending";
	case HS_TRIGGER_STATE_CAPPED: return "capped";
	case HS_TRIGGER_STATE_COOLING_DOWN: return "cooling_down";
	case HS_TRIGGER_STATE_REARMING: return "rearming";
	case HS_TRIGGER_STATE_ARMED: return "armed";
	}
	return "?";
}

hs_status hs_run_status_init(hs_run_status *s, const hs_plan *plan, uint64_t start_ms, uint64_t start_ns)
{
	memset(s, 0, sizeof *s);
	s->plan = plan;
	s->pid = hs_getpid();
	s->profile = plan->rules ? plan->rules->name : NULL;
	s->start_ms = s->last_ms = start_ms;
	s->start_ns = start_ns;
	s->last_cpu_us = hs_os_cpu_time_us();
	s->cpu_percent = -1;
	if (plan->n_sessions && !(s->sessions = calloc(plan->n_sessions, sizeof *s->sessions)))
		goto fail;
	s->n_sessions = plan->n_sessions;
	for (size_t i = 0; i < s->n_sessions; i++) {
		hs_run_session_status *ss = &s->sessions[i];
		ss->name = plan->sessions[i].session->name;
		ss->mode = plan->sessions[i].session->mode;
		ss->events_per_s = ss->ring_fill = ss->history_s = ss->history_max_s = -1;
	}
	if (plan->n_triggers && !(s->triggers = calloc(plan->n_triggers, sizeof *s->triggers)))
		goto fail;
	s->n_triggers = plan->n_triggers;
	for (size_t i = 0; i < s->n_triggers; i++) {
		hs_run_trigger_status *t = &s->triggers[i];
		const hs_trigger *tr = plan->triggers[i].trigger;
		t->name = tr->name;
		t->kind = tr->kind;
		t->state = tr->warmup_s ? HS_TRIGGER_STATE_WARMING_UP : HS_TRIGGER_STATE_ARMED;
		t->last_fire_s_ago = -1;
		/* The same cap the engine applies (trigger.c). */
		t->cap = tr->max_per_hour > HS_TRIGGER_MAX_PER_HOUR ? HS_TRIGGER_MAX_PER_HOUR : (size_t)tr->max_per_hour;
		if (t->cap && !(t->fire_ns = calloc(t->cap, sizeof *t->fire_ns)))
			goto fail;
	}
	return HS_OK;
fail:
	hs_run_status_free(s);
	return HS_ENOMEM;
}

void hs_run_status_free(hs_run_status *s)
{
	for (size_t i = 0; s->triggers && i < s->n_triggers; i++)
		free(s->triggers[i].fire_ns);
	free(s->triggers);
	free(s->sessions);
	s->triggers = NULL;
	s->sessions = NULL;
	s->n_triggers = s->n_sessions = 0;
}

static void update_session(hs_run_session_status *ss, const hs_session_status *st,
			   double interval_s, bool first, double uptime_s)
{
	ss->kernel_name = st->kernel_name;
	ss->cpus = st->cpus;
	ss->events_enabled = st->events_enabled;
	ss->events_skipped = st->events_skipped;
	ss->bytes_streamed = st->bytes_streamed;
	ss->bytes_in_file = st->bytes_in_file;
	ss->chunks_dropped = st->chunks_dropped;
	ss->bytes_lost_disk = st->bytes_lost_disk;
	ss->trigger_events_lost = st->trigger_events_lost;
	ss->events_per_s = ss->ring_fill = ss->history_s = ss->history_max_s = -1;
	if (st->pool) {
		/* One pool of buffers for the session, no per-CPU times. */
		ss->entries = ss->overrun = ss->dropped = ss->read = 0;
		ss->lost_events = st->pool_events_lost;
		if (st->pool_buffers)
			ss->ring_fill = (double)(st->pool_buffers - st->pool_free_buffers) / st->pool_buffers;
		/* Events/s only where a consumer counts them: the kernel tells
		 * nothing of the events in a pool's file or buffers. */
		if (st->events_counted) {
			if (!first && interval_s > 0 && st->events_seen >= ss->prev_total)
				ss->events_per_s = (double)(st->events_seen - ss->prev_total) / interval_s;
			ss->prev_total = st->events_seen;
		}
		/* A file that overwrites nothing before its cap holds everything
		 * since the start while it is a buffer short of it. After that, and
		 * for a buffering pool, nothing says how old the oldest event is:
		 * unknown. */
		uint64_t buffer = (uint64_t)st->pool_buffer_kb << 10;
		if (ss->mode == HS_MODE_FILE_CIRCULAR && st->file_max_bytes && st->bytes_in_file + buffer <= st->file_max_bytes)
			ss->history_s = ss->history_max_s = uptime_s;
		return;
	}
	uint64_t entries = 0, overrun = 0, dropped = 0, read = 0, bytes = 0;
	uint64_t newest_oldest = 0, oldest_oldest = UINT64_MAX;
	double hist_min = -1, hist_max = -1;
	for (unsigned c = 0; c < st->cpus; c++) {
		const hs_cpu_stats *cs = &st->cpu[c];
		entries += cs->entries;
		overrun += cs->overrun;
		dropped += cs->dropped;
		read += cs->read;
		bytes += cs->bytes;
		if (!cs->oldest_ns || !cs->now_ns || cs->now_ns < cs->oldest_ns)
			continue;
		/* Each CPU against its own "now": the rings' clocks are per CPU. */
		double h = (double)(cs->now_ns - cs->oldest_ns) / 1e9;
		if (hist_min < 0 || h < hist_min)
			hist_min = h;
		if (h > hist_max)
			hist_max = h;
		if (cs->oldest_ns > newest_oldest)
			newest_oldest = cs->oldest_ns;
		if (cs->oldest_ns < oldest_oldest)
			oldest_oldest = cs->oldest_ns;
	}
	ss->entries = entries;
	ss->overrun = overrun;
	ss->dropped = dropped;
	ss->read = read;
	ss->lost_events = overrun + dropped;
	uint64_t total = entries + overrun + read;
	if (!first && interval_s > 0)
		ss->events_per_s = total >= ss->prev_total ? (double)(total - ss->prev_total) / interval_s : 0;
	ss->prev_total = total;
	if (st->real_per_cpu_kb) {
		double fill = (double)bytes / ((double)st->real_per_cpu_kb * 1024.0 * st->cpus);
		ss->ring_fill = fill > 1 ? 1 : fill;
	}
	if (ss->mode == HS_MODE_FILE_CIRCULAR) {
		/* The ring is drained as it fills; what the session holds is its
		 * file, which holds everything since the start until a chunk goes. */
		if (!st->chunks_dropped)
			ss->history_s = ss->history_max_s = uptime_s;
	} else {
		ss->history_s = hist_min;
		ss->history_max_s = hist_max;
	}
}

static void update_trigger(hs_run_trigger_status *t, const hs_trigger *tr, const hs_trigger_stats *st,
			   uint64_t start_ns, uint64_t now_ns)
{
	t->st = *st;
	/* Fires since the last update, at the engine's last fire time (several in
	 * one interval: all at that time, which only shortens the cap's hour). */
	for (uint64_t k = t->seen_fired; k < st->fired && t->cap; k++) {
		t->fire_ns[t->fire_next] = st->last_fire_ns;
		t->fire_next = (t->fire_next + 1) % t->cap;
		if (t->n_fire < t->cap)
			t->n_fire++;
	}
	t->seen_fired = st->fired;
	t->last_fire_s_ago = st->last_fire_ns && now_ns >= st->last_fire_ns
				     ? (double)(now_ns - st->last_fire_ns) / 1e9
				     : st->last_fire_ns ? 0 : -1;
	/* The oldest of the last `cap` fires (the ring's next slot once it is full). */
	bool capped = t->cap && t->n_fire == t->cap && now_ns < t->fire_ns[t->fire_next] + HOUR_NS;
	uint64_t warm_end = start_ns + tr->warmup_s * NS_PER_S;
	if (now_ns < warm_end)
		t->state = HS_TRIGGER_STATE_WARMING_UP;
	else if (st->pending)
		t->state = HS_TRIGGER_STATE_PENDING;
	else if (capped)
		t->state = HS_TRIGGER_STATE_CAPPED;
	else if (st->last_fire_ns && now_ns < st->last_fire_ns + tr->cooldown_s * NS_PER_S)
		t->state = HS_TRIGGER_STATE_COOLING_DOWN;
	else if (!st->armed)
		t->state = HS_TRIGGER_STATE_REARMING;
	else
		t->state = HS_TRIGGER_STATE_ARMED;
}

void hs_run_status_update(hs_run_status *s, const hs_backend_ops *ops, hs_backend *b, const hs_trigger_engine *te,
			  uint64_t now_ms, uint64_t now_ns)
{
	bool first = s->updates == 0;
	double interval_s = (double)(now_ms - s->last_ms) / 1000.0;
	s->backend = ops->name;
	s->uptime_s = (double)(now_ms - s->start_ms) / 1000.0;
	uint64_t cpu_us = hs_os_cpu_time_us();
	if (!first && now_ms > s->last_ms && cpu_us && cpu_us >= s->last_cpu_us)
		s->cpu_percent = (double)(cpu_us - s->last_cpu_us) / 10.0 / (double)(now_ms - s->last_ms);
	s->last_cpu_us = cpu_us;
	s->last_ms = now_ms;
	size_t n = b ? ops->n_sessions(b) : 0;
	for (size_t i = 0; i < n && i < s->n_sessions; i++) {
		const hs_session_status *st;
		if (ops->session_status(b, i, &st) == HS_OK)
			update_session(&s->sessions[i], st, interval_s, first, s->uptime_s);
	}
	for (size_t i = 0; te && i < s->n_triggers && i < hs_trigger_engine_count(te); i++) {
		const hs_trigger_stats *st = hs_trigger_engine_stats(te, i);
		if (st)
			update_trigger(&s->triggers[i], s->plan->triggers[i].trigger, st, s->start_ns, now_ns);
	}
	s->updates++;
}

/* A value that may be unknown (-1): null in the JSON. */
static void known(hs_json *j, const char *key, double v, int digits)
{
	hs_json_key(j, key);
	if (v < 0)
		hs_json_null(j);
	else
		hs_json_double(j, v, digits);
}

/* A member written by put_fields: a count (uint64_t or size_t) or a double that may be unknown (known). */
typedef enum { F_U64, F_SIZE, F_KNOWN } field_kind;
typedef struct {
	const char *key;
	size_t off;
	field_kind kind;
	int digits; /* F_KNOWN */
} field;

/* clang-format off */
#define SESSION_FIELD(key, kind, digits) {#key, offsetof(hs_run_session_status, key), kind, digits}
#define TRIGGER_STAT(key) {#key, offsetof(hs_run_trigger_status, st.key), F_U64, 0}
/* clang-format on */

/* A session's rates and counters, in the document's order; then a file-circular session's key file. */
static const field session_fields[] = {
	SESSION_FIELD(events_per_s, F_KNOWN, 1),  SESSION_FIELD(ring_fill, F_KNOWN, 4),
	SESSION_FIELD(history_s, F_KNOWN, 3),     SESSION_FIELD(history_max_s, F_KNOWN, 3),
	SESSION_FIELD(entries, F_U64, 0),         SESSION_FIELD(overrun, F_U64, 0),
	SESSION_FIELD(dropped, F_U64, 0),         SESSION_FIELD(read, F_U64, 0),
	SESSION_FIELD(lost_events, F_U64, 0),     SESSION_FIELD(events_enabled, F_SIZE, 0),
	SESSION_FIELD(events_skipped, F_SIZE, 0),
};
static const field key_file_fields[] = {
	SESSION_FIELD(bytes_streamed, F_U64, 0),      SESSION_FIELD(bytes_in_file, F_U64, 0),
	SESSION_FIELD(chunks_dropped, F_U64, 0),      SESSION_FIELD(bytes_lost_disk, F_U64, 0),
	SESSION_FIELD(trigger_events_lost, F_U64, 0),
};
/* A trigger's counters after its armed flag (run.json's triggers[] names), then how long ago it fired. */
static const field trigger_fields[] = {
	TRIGGER_STAT(hits),
	TRIGGER_STAT(fired),
	TRIGGER_STAT(joined),
	TRIGGER_STAT(ignored_warmup),
	TRIGGER_STAT(ignored_unarmed),
	TRIGGER_STAT(dropped_rate),
	TRIGGER_STAT(last_fire_ns),
	{"last_fire_s_ago", offsetof(hs_run_trigger_status, last_fire_s_ago), F_KNOWN, 1},
};

static void put_fields(hs_json *j, const void *obj, const field *f, size_t n)
{
	const char *base = obj;
	for (size_t i = 0; i < n; i++) {
		const char *at = base + f[i].off;
		if (f[i].kind == F_KNOWN)
			known(j, f[i].key, *(const double *)(const void *)at, f[i].digits);
		else if (f[i].kind == F_SIZE)
			hs_json_kuint(j, f[i].key, *(const size_t *)(const void *)at);
		else
			hs_json_kuint(j, f[i].key, *(const uint64_t *)(const void *)at);
	}
}

#define PUT_FIELDS(j, obj, table) put_fields(j, obj, table, sizeof(table) / sizeof((table)[0]))

static void put_session(hs_json *j, const void *item)
{
	const hs_run_session_status *ss = item;
	hs_json_kstr(j, "name", ss->name);
	hs_json_kstr(j, "instance", ss->kernel_name);
	hs_json_kstr(j, "mode", hs_mode_name(ss->mode));
	PUT_FIELDS(j, ss, session_fields);
	if (ss->mode == HS_MODE_FILE_CIRCULAR)
		PUT_FIELDS(j, ss, key_file_fields);
}

static void put_trigger(hs_json *j, const void *item)
{
	const hs_run_trigger_status *t = item;
	hs_json_kstr(j, "name", t->name);
	hs_json_kstr(j, "kind", hs_trigger_kind_name(t->kind));
	hs_json_kstr(j, "state", hs_trigger_state_name(t->state));
	hs_json_kbool(j, "armed", t->st.armed);
	PUT_FIELDS(j, t, trigger_fields);
}

void hs_run_status_json(const hs_run_status *s, hs_json *j)
{
	hs_json_obj_begin(j);
	hs_json_kint(j, "version", 1);
	hs_json_kuint(j, "pid", s->pid);
	hs_json_kstr(j, "profile", s->profile);
	hs_json_kstr(j, "backend", s->backend);
	hs_json_kstr(j, "run_dir", s->run_dir);
	hs_json_kdouble(j, "uptime_s", s->uptime_s, 1);
	known(j, "cpu_percent", s->cpu_percent, 2);
	hs_json_kuint(j, "key_events_observed", s->key_events_observed);
	hs_json_kuint(j, "snapshots_taken", s->snapshots_taken);
	hs_json_kuint(j, "snapshots_failed", s->snapshots_failed);
	/* the newest snapshot's capture-time report (run/capture.h): its verdict and where the report is */
	hs_json_key(j, "last_snapshot");
	if (s->last_snapshot.present) {
		hs_json_obj_begin(j);
		hs_json_kuint(j, "snapshot", s->last_snapshot.seq);
		hs_json_kstr(j, "trigger", s->last_snapshot.trigger);
		hs_json_kstr(j, "folder", s->last_snapshot.folder);
		hs_json_key(j, "report");
		hs_rundoc_report_json(j, &s->last_snapshot.report);
		hs_json_obj_end(j);
	} else {
		hs_json_null(j);
	}
	hs_json_key(j, "events_jsonl");
	if (s->jsonl) {
		hs_json_obj_begin(j);
		hs_json_kuint(j, "lines", s->jsonl_lines);
		hs_json_kuint(j, "dropped", s->jsonl_dropped);
		hs_json_obj_end(j);
	} else {
		hs_json_null(j);
	}
	hs_json_kobjects(j, "sessions", s->sessions, s->n_sessions, sizeof *s->sessions, put_session);
	hs_json_kobjects(j, "triggers", s->triggers, s->n_triggers, sizeof *s->triggers, put_trigger);
	hs_json_obj_end(j);
}
