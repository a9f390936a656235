/* run/manifest.c: run.json from the run's state (rules, every session's counters, triggers, snapshots, the plan), written through its one writer (hindsight/rundoc.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "run/manifest.h"
#include "run/os.h"

/* A counter run.json takes from the run's state under the same name: where it
 * is in each struct, and the size of the source (uint32_t or uint64_t; every
 * rundoc counter is uint64_t). */
typedef struct {
	size_t to, from, from_size;
} count_copy;

/* clang-format off */
#define SESSION_COUNT(f) \
	{offsetof(hs_rundoc_run_session, f), offsetof(hs_session_status, f), sizeof(((hs_session_status *)0)->f)}
#define TRIGGER_COUNT(f) \
	{offsetof(hs_rundoc_trigger_stats, f), offsetof(hs_trigger_stats, f), sizeof(((hs_trigger_stats *)0)->f)}
/* clang-format on */

/* A file-circular session's key file; a buffering session's last snapshot; a buffer pool's kernel counters. */
static const count_copy key_file_counts[] = {
	SESSION_COUNT(bytes_streamed),  SESSION_COUNT(bytes_in_file),       SESSION_COUNT(chunks_dropped),
	SESSION_COUNT(bytes_lost_disk), SESSION_COUNT(trigger_events_lost),
};
static const count_copy ring_counts[] = {
	SESSION_COUNT(snapshots),           SESSION_COUNT(snapshot_events),
	SESSION_COUNT(snapshot_entries),    SESSION_COUNT(snapshot_events_dropped),
	SESSION_COUNT(snapshot_raw_bytes),  SESSION_COUNT(snapshot_bytes_dropped),
	SESSION_COUNT(snapshot_file_bytes),
};
static const count_copy pool_counts[] = {
	SESSION_COUNT(pool_buffers),     SESSION_COUNT(pool_buffer_kb),    SESSION_COUNT(pool_free_buffers),
	SESSION_COUNT(pool_events_lost), SESSION_COUNT(pool_buffers_lost), SESSION_COUNT(pool_buffers_written),
};
/* What each trigger saw and did. */
static const count_copy trigger_counts[] = {
	TRIGGER_COUNT(hits),           TRIGGER_COUNT(fired),           TRIGGER_COUNT(joined),
	TRIGGER_COUNT(ignored_warmup), TRIGGER_COUNT(ignored_unarmed), TRIGGER_COUNT(dropped_rate),
	TRIGGER_COUNT(sampled_out),    TRIGGER_COUNT(cancelled),       TRIGGER_COUNT(ignored_disarmed),
	TRIGGER_COUNT(not_worse),      TRIGGER_COUNT(excused),         TRIGGER_COUNT(last_fire_ns),
};

static void copy_counts(void *to, const void *from, const count_copy *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		if (c[i].from_size == sizeof(uint32_t)) {
			uint32_t w;
			memcpy(&w, (const char *)from + c[i].from, sizeof w);
			v = w;
		} else {
			memcpy(&v, (const char *)from + c[i].from, sizeof v);
		}
		memcpy((char *)to + c[i].to, &v, sizeof v);
	}
}

#define COPY_COUNTS(to, from, table) copy_counts(to, from, table, sizeof(table) / sizeof((table)[0]))

hs_status hs_run_manifest_write(const hs_run_manifest *m)
{
	const hs_backend_ops *ops = m->ops;
	hs_backend *b = m->b;
	hs_arena a = {0};
	hs_rundoc_run d = {0};
	char start[64], end[64];
	hs_status st = HS_ENOMEM;
	hs_os_iso_time(start, sizeof start, m->start);
	d.profile = m->rs->name;
	d.rules = m->rules_path;
	d.rules_files = (const char **)m->rs->files;
	d.n_rules_files = m->rs->n_files;
	d.start = start;
	if (m->end) {
		hs_os_iso_time(end, sizeof end, m->end);
		d.end = end;
		d.ended = true;
		d.exit_code = m->exit_code;
	}
	d.backend = ops->name;
	d.key_events_observed = m->observed;
	size_t ns = b ? ops->n_sessions(b) : 0;
	d.sessions = hs_arena_alloc(&a, (ns ? ns : 1) * sizeof *d.sessions);
	if (!d.sessions)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		const hs_session_status *s;
		if (ops->session_status(b, i, &s) != HS_OK)
			continue;
		hs_rundoc_run_session *o = &d.sessions[d.n_sessions++];
		memset(o, 0, sizeof *o);
		o->name = s->name;
		o->instance = s->kernel_name;
		o->mode = hs_mode_name(s->mode);
		o->real_per_cpu_kb = s->real_per_cpu_kb;
		o->events_enabled = s->events_enabled;
		o->events_skipped = s->events_skipped;
		if (s->skipped && s->events_skipped) {
			/* Which events this run lacks, so nobody trusts coverage it does not have. */
			o->has_skipped = true;
			o->skipped = hs_arena_alloc(&a, s->events_skipped * sizeof *o->skipped);
			if (!o->skipped)
				goto out;
			for (size_t k = 0; k < s->events_skipped; k++) {
				const hs_skipped_event *e = &s->skipped[k];
				char ev[256];
				snprintf(ev, sizeof ev, "%s:%s", e->system, e->name ? e->name : "*");
				o->skipped[k] = (hs_rundoc_skipped){hs_arena_strdup(&a, ev), e->optional, e->why};
			}
			o->n_skipped = s->events_skipped;
		}
		if (s->mode == HS_MODE_FILE_CIRCULAR) {
			o->key_file = true;
			COPY_COUNTS(o, s, key_file_counts);
		} else {
			o->ring = true;
			COPY_COUNTS(o, s, ring_counts);
			o->snapshot_s = s->snapshot_s;
		}
		if (s->pool) {
			o->pool = true;
			COPY_COUNTS(o, s, pool_counts);
		}
		o->cpus = hs_arena_alloc(&a, (s->cpus ? s->cpus : 1) * sizeof *o->cpus);
		if (!o->cpus)
			goto out;
		for (unsigned c = 0; c < s->cpus; c++) {
			const hs_cpu_stats *cs = &s->cpu[c];
			o->cpus[c] = (hs_rundoc_cpu){c, cs->entries, cs->overrun, cs->commit_overrun, cs->dropped, cs->read,
						     cs->bytes};
		}
		o->n_cpus = s->cpus;
	}
	/* Triggers: what each saw and did, and every snapshot taken (docs/triggers.md). */
	size_t nt = m->te ? hs_trigger_engine_count(m->te) : 0;
	d.triggers = hs_arena_alloc(&a, (nt ? nt : 1) * sizeof *d.triggers);
	if (!d.triggers)
		goto out;
	for (size_t i = 0; i < nt; i++) {
		const hs_trigger_stats *t = hs_trigger_engine_stats(m->te, i);
		d.triggers[i] = (hs_rundoc_trigger_stats){.name = m->plan->triggers[i].trigger->name,
							  .armed = t->armed};
		COPY_COUNTS(&d.triggers[i], t, trigger_counts);
	}
	d.n_triggers = nt;
	d.n_snapshots = hs_snapshots_entries(m->sn, &a, &d.snapshots);
	if (m->report) {
		d.has_report = true;
		d.report = *m->report;
	}
	/* The resolved plan as `engine --plan --json` prints it, placed last. */
	char *pj = hs_plan_json(m->plan);
	d.plan_json = pj;
	hs_strbuf sb = {0};
	st = hs_rundoc_run_write(&d, &sb);
	free(pj);
	if (st == HS_OK)
		st = hs_os_write_file_synced(m->path, &sb);
	else
		hs_sb_free(&sb);
out:
	hs_arena_free(&a);
	return st;
}
