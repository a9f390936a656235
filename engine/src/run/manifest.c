/* run/manifest.c: run.json from the run's state (rules, every session's counters, triggers, snapshots, the plan), written through its one writer (hindsight/rundoc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "run/manifest.h"
#include "run/os.h"

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
			o->bytes_streamed = s->bytes_streamed;
			o->bytes_in_file = s->bytes_in_file;
			o->chunks_dropped = s->chunks_dropped;
			o->bytes_lost_disk = s->bytes_lost_disk;
			o->trigger_events_lost = s->trigger_events_lost;
		} else {
			o->ring = true;
			o->snapshots = s->snapshots;
			o->snapshot_events = s->snapshot_events;
			o->snapshot_entries = s->snapshot_entries;
			o->snapshot_events_dropped = s->snapshot_events_dropped;
			o->snapshot_raw_bytes = s->snapshot_raw_bytes;
			o->snapshot_bytes_dropped = s->snapshot_bytes_dropped;
			o->snapshot_file_bytes = s->snapshot_file_bytes;
			o->snapshot_s = s->snapshot_s;
		}
		if (s->pool) {
			o->pool = true;
			o->pool_buffers = s->pool_buffers;
			o->pool_buffer_kb = s->pool_buffer_kb;
			o->pool_free_buffers = s->pool_free_buffers;
			o->pool_events_lost = s->pool_events_lost;
			o->pool_buffers_lost = s->pool_buffers_lost;
			o->pool_buffers_written = s->pool_buffers_written;
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
		d.triggers[i] = (hs_rundoc_trigger_stats){
			.name = m->plan->triggers[i].trigger->name,
			.armed = t->armed,
			.hits = t->hits,
			.fired = t->fired,
			.joined = t->joined,
			.ignored_warmup = t->ignored_warmup,
			.ignored_unarmed = t->ignored_unarmed,
			.dropped_rate = t->dropped_rate,
			.sampled_out = t->sampled_out,
			.cancelled = t->cancelled,
			.ignored_disarmed = t->ignored_disarmed,
			.not_worse = t->not_worse,
			.excused = t->excused,
			.last_fire_ns = t->last_fire_ns,
		};
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
