/* report/render_json.c: report.json (schemas/report.schema.json): the same model, for machines. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hindsight/json.h"
#include "report/render.h"

static void json_i64_or_null(hs_json *j, const char *k, int64_t v)
{
	hs_json_key(j, k);
	if (v < 0)
		hs_json_null(j);
	else
		hs_json_int(j, v);
}

/* "k": [the n strings of v] */
static void json_strs(hs_json *j, const char *k, char *const *v, size_t n)
{
	hs_json_key(j, k);
	hs_json_arr_begin(j);
	for (size_t i = 0; i < n; i++)
		hs_json_str(j, v[i]);
	hs_json_arr_end(j);
}

/* "k": v when the counter it comes from saw anything (has), else null */
static void json_uint_if(hs_json *j, const char *k, bool has, uint64_t v)
{
	hs_json_key(j, k);
	if (has)
		hs_json_uint(j, v);
	else
		hs_json_null(j);
}

static void json_thread(const hs_report *r, hs_json *j)
{
	const hs_rpt_thread *t = &r->thread;
	hs_json_key(j, "thread");
	if (!t->present) {
		hs_json_null(j);
		return;
	}
	hs_json_obj_begin(j);
	hs_json_kint(j, "pid", t->pid);
	hs_json_kstr(j, "comm", t->comm);
	hs_json_kstr(j, "basis", t->basis);
	hs_json_kuint(j, "window_first_ns", t->w0);
	hs_json_kuint(j, "window_last_ns", t->w1);
	hs_json_kbool(j, "analysed", t->analysed);
	hs_json_kstr(j, "note", t->why[0] ? t->why : NULL);
	if (t->analysed) {
		hs_json_kstr(j, "file", r->files[t->file].name);
		hs_json_kuint(j, "covered_first_ns", t->cov0);
		hs_json_kuint(j, "covered_last_ns", t->cov1);
		json_i64_or_null(j, "born_ns", t->born ? (int64_t)t->born : -1);
		hs_json_kuint(j, "lost_events_in_window", t->lost_in_window);
		hs_json_kuint(j, "lost_unknown_in_window", t->lost_unknown_in_window);
		hs_json_key(j, "states_ns");
		hs_json_obj_begin(j);
		for (int s = 0; s < TS_N; s++)
			hs_json_kuint(j, hs_rpt_tstate_keys[s], t->ns[s]);
		hs_json_obj_end(j);
		hs_json_key(j, "states_percent");
		hs_json_obj_begin(j);
		for (int s = 0; s < TS_N; s++) {
			hs_json_kdouble(j, hs_rpt_tstate_keys[s],
					hs_rpt_pct(t->ns[s], t->cov1 - (t->born > t->cov0 ? t->born : t->cov0)), 2);
		}
		hs_json_obj_end(j);
		hs_json_kuint(j, "wakeups", t->wakeups);
		hs_json_kuint(j, "preemptions", t->preemptions);
		hs_json_kuint(j, "switches_in", t->switches_in);
		hs_json_kuint(j, "unrecorded_switches", t->unrecorded_switches);
		hs_json_kuint(j, "max_wake_wait_ns", t->max_wake_wait);
		hs_json_key(j, "wakers");
		hs_json_arr_begin(j);
		for (size_t i = 0; i < t->n_wakers; i++) {
			const hs_rpt_waker *w = &t->wakers[i];
			hs_json_obj_begin(j);
			hs_json_kstr(j, "context",
				     w->context == 1   ? "hardirq"
				     : w->context == 2 ? "softirq"
							: "thread");
			json_i64_or_null(j, "pid", w->context ? -1 : w->pid);
			hs_json_kstr(j, "comm", w->context ? NULL : w->comm);
			hs_json_kint(j, "cpu", w->cpu);
			hs_json_kuint(j, "count", w->n);
			hs_json_kuint(j, "tasks", w->tasks);
			hs_json_obj_end(j);
		}
		hs_json_arr_end(j);
		hs_json_kuint(j, "cpus", t->cpus);
		hs_json_kuint(j, "idle_ns", t->idle_ns);
		hs_json_kuint(j, "busy_ns", t->busy_ns);
		hs_json_key(j, "cpu_users");
		hs_json_arr_begin(j);
		for (size_t i = 0; i < t->n_users; i++) {
			hs_json_obj_begin(j);
			hs_json_kstr(j, "comm", t->users[i].name);
			hs_json_kuint(j, "threads", t->users[i].threads);
			hs_json_kuint(j, "ns", t->users[i].ns);
			hs_json_obj_end(j);
		}
		hs_json_arr_end(j);
		hs_json_key(j, "interrupts");
		if (!t->irq_recorded && !t->softirq_recorded) {
			hs_json_null(j);
		} else {
			hs_json_obj_begin(j);
			json_i64_or_null(j, "hardirq_ns", t->irq_recorded ? (int64_t)t->irq_ns : -1);
			json_i64_or_null(j, "softirq_ns", t->softirq_recorded ? (int64_t)t->softirq_ns : -1);
			hs_json_kuint(j, "on_thread_ns", t->irq_on_thread_ns);
			hs_json_key(j, "top");
			hs_json_arr_begin(j);
			for (size_t i = 0; i < t->n_irqs; i++) {
				hs_json_obj_begin(j);
				hs_json_kstr(j, "name", t->irqs[i].name);
				hs_json_kbool(j, "softirq", t->irqs[i].soft);
				hs_json_kuint(j, "ns", t->irqs[i].ns);
				hs_json_kuint(j, "count", t->irqs[i].n);
				hs_json_obj_end(j);
			}
			hs_json_arr_end(j);
			hs_json_obj_end(j);
		}
	}
	hs_json_obj_end(j);
}

void hs_rpt_render_json(const hs_report *r, hs_strbuf *sb)
{
	hs_json j;
	hs_json_init(&j, sb);
	hs_json_obj_begin(&j);
	hs_json_kint(&j, "report_version", HS_RPT_SCHEMA_VERSION);
	hs_json_kstr(&j, "generator", r->generator);
	hs_json_key(&j, "input");
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "path", r->input);
	hs_json_kstr(&j, "kind", r->input_kind);
	hs_json_obj_end(&j);
	hs_json_kstr(&j, "clock", r->clock);
	hs_json_kuint(&j, "moment_ns", r->moment);
	hs_json_key(&j, "window");
	hs_json_obj_begin(&j);
	hs_json_kuint(&j, "first_ns", r->win_first);
	hs_json_kuint(&j, "last_ns", r->win_last);
	hs_json_obj_end(&j);
	/* the verdict: its text, its lines as report.txt prints them, and the cause of the strongest finding when
	 * one was attributed (schemas/report.schema.json; the cause attribution fills it) */
	hs_json_key(&j, "verdict");
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "text", r->verdict[0]);
	hs_json_key(&j, "lines");
	hs_json_arr_begin(&j);
	for (int i = 0; i < 2; i++)
		if (r->verdict[i][0])
			hs_json_str(&j, r->verdict[i]);
	hs_json_arr_end(&j);
	const hs_cause_reason *top = r->why_finding == 0 ? hs_cause_top(&r->why) : NULL;
	hs_json_kstr(&j, "cause", top ? top->id : NULL);
	hs_json_kstr(&j, "culprit", top && top->has_culprit ? (top->culprit.is_task ? top->culprit.name : top->culprit.what) : NULL);
	hs_json_obj_end(&j);
	hs_rpt_signature_json(r, &j); /* early in the file: a fleet scan reads no further */
	hs_json_key(&j, "trigger");
	const hs_rpt_trigger *t = &r->trig;
	if (!t->present) {
		hs_json_null(&j);
	} else {
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "name", t->name);
		hs_json_kstr(&j, "kind", t->kind);
		hs_json_kint(&j, "snapshot", t->snapshot_no);
		hs_json_kint(&j, "hits", t->hits);
		hs_json_kuint(&j, "first_hit_ns", t->first_hit_ns);
		hs_json_kdouble(&j, "detection_latency_ms", t->detect_ms, 3);
		hs_json_kstr(&j, "system", t->hit_system[0] ? t->hit_system : NULL);
		hs_json_kstr(&j, "event", t->hit_event[0] ? t->hit_event : NULL);
		json_i64_or_null(&j, "pid", t->hit_pid);
		hs_json_kstr(&j, "where", t->hit_where[0] ? t->hit_where : NULL);
		if (!strcmp(t->kind, "frame_time")) {
			hs_json_kstr(&j, "slice", t->slice);
			hs_json_kdouble(&j, "frame_ms", t->frame_ms, 3);
			hs_json_kdouble(&j, "median_ms", t->median_ms, 3);
		}
		hs_json_obj_end(&j);
	}
	hs_json_key(&j, "findings");
	hs_json_arr_begin(&j);
	for (size_t k = 0; k < r->n_findings; k++) {
		const hs_rpt_finding *f = &r->findings[k];
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "kind", f->kind);
		hs_json_kint(&j, "impact", f->impact);
		hs_json_kstr(&j, "title", f->title);
		hs_json_kstr(&j, "verdict", f->verdict);
		hs_json_kstr(&j, "text", f->text);
		hs_json_kstr(&j, "next", f->next);
		hs_json_kuint(&j, "ts_ns", f->ts);
		json_i64_or_null(&j, "pid", f->pid);
		json_strs(&j, "notes", f->notes, f->n_notes);
		hs_json_key(&j, "evidence");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i < f->n_ev; i++) {
			const hs_rpt_event *e = &r->events[f->ev[i]];
			hs_json_obj_begin(&j);
			hs_json_kuint(&j, "ts_ns", e->ts);
			hs_json_kdouble(&j, "rel_s", ((double)e->ts - (double)r->moment) / 1e9, 6);
			hs_json_kint(&j, "cpu", e->cpu);
			hs_json_kint(&j, "pid", e->pid);
			hs_json_kstr(&j, "comm", e->comm);
			hs_json_kstr(&j, "system", e->system);
			hs_json_kstr(&j, "event", e->name);
			hs_json_kstr(&j, "detail", e->detail);
			hs_json_kstr(&j, "story", e->story);
			hs_json_kstr(&j, "alert", e->alert);
			hs_json_kstr(&j, "file", r->files[e->file].name);
			if (e->has_id) { /* an .etl manifest event: what WPA and the catalogs know it by */
				char g[37];
				hs_guid_format(&e->guid, g);
				hs_json_kstr(&j, "provider_guid", g);
				hs_json_kuint(&j, "id", e->id);
				hs_json_kuint(&j, "version", e->version);
			}
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		if (f->tid > 0)
			hs_json_kint(&j, "tid", f->tid);
		if (f->background)
			hs_json_kbool(&j, "background", true);
		if ((int)k == r->why_finding && hs_cause_top(&r->why)) {
			hs_json_key(&j, "cause");
			hs_rpt_json_cause(&j, r);
		}
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	json_thread(r, &j);
	hs_json_key(&j, "coverage");
	hs_json_obj_begin(&j);
	hs_json_key(&j, "files");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < r->n_files; i++) {
		const hs_rpt_file *f = &r->files[i];
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "file", f->name);
		hs_json_kstr(&j, "format", f->etl ? "etl" : "trace-cmd");
		json_strs(&j, "notes", f->notes, f->n_notes);
		hs_json_kstr(&j, "session", f->session);
		hs_json_kbool(&j, "opened", f->opened);
		hs_json_kuint(&j, "events", f->events);
		json_uint_if(&j, "first_ns", f->events, f->first_ns);
		json_uint_if(&j, "last_ns", f->events, f->last_ns);
		hs_json_key(&j, "cpus");
		hs_json_arr_begin(&j);
		for (unsigned c = 0; c < f->cpus; c++) {
			hs_json_obj_begin(&j);
			hs_json_kuint(&j, "cpu", c);
			hs_json_kuint(&j, "events", f->cpu_n[c]);
			json_uint_if(&j, "first_ns", f->cpu_n[c], f->cpu_first[c]);
			json_uint_if(&j, "last_ns", f->cpu_n[c], f->cpu_last[c]);
			hs_json_kuint(&j, "missed_events", f->cpu_missed[c]);
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		hs_json_kuint(&j, "missed_events", f->missed);
		hs_json_kuint(&j, "missed_unknown", f->missed_unknown);
		hs_json_key(&j, "wrapped");
		if (f->wrapped < 0)
			hs_json_null(&j);
		else
			hs_json_bool(&j, f->wrapped == 1);
		json_i64_or_null(&j, "overwritten_since_previous", f->overwritten);
		json_i64_or_null(&j, "chunks_dropped", f->chunks_dropped);
		json_i64_or_null(&j, "events_lost", f->events_lost);
		json_i64_or_null(&j, "bytes_lost_disk", f->bytes_lost_disk);
		json_i64_or_null(&j, "events_dropped_for_disk", f->ring_dropped);
		json_strs(&j, "problems", f->problems, f->n_problems);
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	hs_json_key(&j, "run_notes");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < r->n_run_notes; i++)
		hs_json_str(&j, r->run_notes[i]);
	hs_json_arr_end(&j);
	hs_json_kuint(&j, "events_not_kept", r->events_not_kept);
	hs_json_key(&j, "wpa_regions");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < r->n_regions; i++)
		hs_json_str(&j, r->regions[i]);
	hs_json_arr_end(&j);
	hs_json_kstr(&j, "rules", r->rules_path);
	hs_json_kstr(&j, "rules_note", r->rules_note[0] ? r->rules_note : NULL);
	hs_json_obj_end(&j);
	hs_json_kbool(&j, "damaged", r->damaged);
	hs_json_obj_end(&j);
	hs_sb_putc(sb, '\n');
}

