/* analyze/report_render.c: `analyze report`'s three outputs from one model: report.txt, report.json (schemas/report.schema.json) and a self-contained report.html. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hindsight/json.h"
#include "hindsight/limits.h"
#include "report.h"

static const char *const lane_names[LANE_N] = {"signals and faults",    "memory", "processes", "storage", "network",
					       "kernel log and markers"};

/* Evidence rows that repeat (same event, same task) collapse after the first two. */
static size_t run_length(const rpt *r, const rpt_finding *f, size_t k)
{
	const rpt_event *a = &r->events[f->ev[k]];
	size_t n = 1;
	while (k + n < f->n_ev) {
		const rpt_event *b = &r->events[f->ev[k + n]];
		if (strcmp(a->name, b->name) || strcmp(a->system, b->system) || strcmp(a->comm, b->comm))
			break;
		n++;
	}
	return n;
}

/* ---- the thread before the moment (shared by the three) ---- */

static const char *const tstate_names[TS_N] = {
	"running",
	"runnable, waiting for a CPU",
	"sleeping (S: a timer, a lock, input)",
	"blocked in D (uninterruptible: I/O, a kernel lock)",
	"stopped, exiting or other",
	"blocked, kind unknown (before its first record)",
};
static const char *const tstate_keys[TS_N] = {"running", "runnable", "sleeping", "uninterruptible", "other",
					      "unknown"};

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void fmt_dur(uint64_t ns, char *buf, size_t cap)
{
	if (ns >= 1000000000ull)
		snprintf(buf, cap, "%.3f s", (double)ns / 1e9);
	else
		snprintf(buf, cap, "%.1f ms", (double)ns / 1e6);
}

/* "a timer or device interrupt on cpu 1" / "bash (pid 12) on cpu 0" */
static void fmt_waker(const rpt_waker *w, char *buf, size_t cap)
{
	if (w->context == 1)
		snprintf(buf, cap, "a hard interrupt on cpu %d (a timer expiring, or a device)", w->cpu);
	else if (w->context == 2)
		snprintf(buf, cap, "a softirq on cpu %d (a timer, network or block completion)", w->cpu);
	else if (w->pid == 0)
		snprintf(buf, cap, "the idle task on cpu %d (an interrupt's work finished there)", w->cpu);
	else if (w->tasks > 1)
		snprintf(buf, cap, "%s (%u tasks of that name, the first pid %d)", w->comm, w->tasks, w->pid);
	else
		snprintf(buf, cap, "%s (pid %d) on cpu %d", w->comm, w->pid, w->cpu);
}

/* The lines the text and the HTML show: a title, then one sentence per line. */
static size_t thread_lines(const rpt *r, char lines[][400], size_t cap)
{
	const rpt_thread *t = &r->thread;
	size_t n = 0;
	char a[32], b[32], d1[32], d2[32];
	if (!t->present || cap < 12)
		return 0;
	fmt_dur(t->w1 - t->w0, d1, sizeof d1);
	snprintf(lines[n++], 400, "%s (pid %d), the thread of the %s finding, over the %s before the moment%s",
		 t->comm[0] ? t->comm : "?", t->pid, t->basis, d1,
		 !strcmp(t->basis, "frame-hitch") ? " (the frame)" : "");
	if (!t->analysed && t->why[0]) {
		snprintf(lines[n++], 400, "no split: %s", t->why);
		return n;
	}
	uint64_t cov = t->cov1 - t->cov0;
	rpt_fmt_rel(r, t->cov0, a, sizeof a);
	rpt_fmt_rel(r, t->cov1, b, sizeof b);
	fmt_dur(cov, d2, sizeof d2);
	char cut[96] = "";
	if (cov + 1000 < t->w1 - t->w0 && t->cov_cpu >= 0)
		snprintf(cut, sizeof cut, ": cpu %d's older events are gone (its ring wrapped or lost them)",
			 t->cov_cpu);
	else if (cov + 1000 < t->w1 - t->w0)
		snprintf(cut, sizeof cut, ": the ring holds nothing older (recording began, or a snapshot emptied it)");
	snprintf(lines[n++], 400, "covered: %s of %s (%.0f %%), from %s to %s, by %s%s%s", d2, d1,
		 pct(cov, t->w1 - t->w0), a + strspn(a, " "), b + strspn(b, " "), r->files[t->file].name, cut,
		 t->lost_in_window || t->lost_unknown_in_window ? "" : "; no events lost in it");
	if (t->lost_in_window || t->lost_unknown_in_window)
		snprintf(lines[n++], 400,
			 "WARNING: the ring lost %" PRIu64 " events (and %" PRIu64
			 " losses of unknown size) inside the window: the split below may be wrong",
			 t->lost_in_window, t->lost_unknown_in_window);
	if (t->why[0])
		snprintf(lines[n++], 400, "%s", t->why);
	if (t->unrecorded_switches)
		snprintf(lines[n++], 400,
			 "%u switches are not in the ring (a CPU's records run in a task no switch named): each is taken "
			 "to be at the task's first record, which can add a few ms to runnable and to the task before it",
			 t->unrecorded_switches);
	uint64_t life = t->cov1 - (t->born > t->cov0 ? t->born : t->cov0);
	if (t->born) {
		rpt_fmt_rel(r, t->born, a, sizeof a);
		fmt_dur(life, d2, sizeof d2);
		snprintf(lines[n++], 400, "it was born (forked) at %s: the split covers its %s of life",
			 a + strspn(a, " "), d2);
	}
	for (int s = 0; s < TS_N; s++) {
		if (!t->ns[s] && s > TS_DISK)
			continue;
		fmt_dur(t->ns[s], d1, sizeof d1);
		snprintf(lines[n++], 400, "%5.1f %%  %-10s  %s", pct(t->ns[s], life), d1, tstate_names[s]);
	}
	if (t->max_wake_wait < 1000000u)
		/* wake-up latencies are microseconds */
		snprintf(d1, sizeof d1, "%.0f us", (double)t->max_wake_wait / 1e3);
	else
		fmt_dur(t->max_wake_wait, d1, sizeof d1);
	snprintf(lines[n++], 400,
		 "%u wake-up%s, %u preemption%s, %u time%s given a CPU; the longest wait from a wake-up to a CPU: %s",
		 t->wakeups, t->wakeups == 1 ? "" : "s", t->preemptions, t->preemptions == 1 ? "" : "s",
		 t->switches_in, t->switches_in == 1 ? "" : "s", d1);
	if (t->n_wakers) {
		char buf[400] = "woken by: ";
		for (size_t i = 0; i < t->n_wakers && i < 3; i++) {
			char w[160];
			fmt_waker(&t->wakers[i], w, sizeof w);
			size_t l = strlen(buf);
			snprintf(buf + l, sizeof buf - l, "%s%u x %s", i ? "; " : "", t->wakers[i].n, w);
		}
		snprintf(lines[n++], 400, "%s", buf);
	} else {
		snprintf(lines[n++], 400, "woken by: nobody in the window (it was not woken)");
	}
	uint64_t total = t->busy_ns + t->idle_ns;
	char buf[400];
	snprintf(buf, sizeof buf, "CPU time by task (%u CPUs, idle %.0f %%):", t->cpus, pct(t->idle_ns, total));
	for (size_t i = 0; i < t->n_users && i < 5; i++) {
		size_t l = strlen(buf);
		fmt_dur(t->users[i].ns, d1, sizeof d1);
		char tasks[24] = "";
		if (t->users[i].threads > 1)
			snprintf(tasks, sizeof tasks, ", %u tasks", t->users[i].threads);
		snprintf(buf + l, sizeof buf - l, "%s %s %.1f %% (%s%s)", i ? "," : "", t->users[i].name,
			 pct(t->users[i].ns, total), d1, tasks);
	}
	snprintf(lines[n++], 400, "%s", buf);
	if (!t->irq_recorded && !t->softirq_recorded) {
		snprintf(lines[n++], 400,
			 "interrupts: not recorded (the ring has no interrupt handler or softirq events)");
	} else {
		fmt_dur(t->irq_ns, d1, sizeof d1);
		fmt_dur(t->softirq_ns, d2, sizeof d2);
		snprintf(buf, sizeof buf, "interrupts: hardirq %s, softirq %s (%.1f %% of the CPUs' time)",
			 t->irq_recorded ? d1 : "not recorded", t->softirq_recorded ? d2 : "not recorded",
			 pct(t->irq_ns + t->softirq_ns, total));
		for (size_t i = 0; i < t->n_irqs && i < 4; i++) {
			size_t l = strlen(buf);
			fmt_dur(t->irqs[i].ns, d1, sizeof d1);
			snprintf(buf + l, sizeof buf - l, "%s %s%s %s", i ? "," : ";",
				 t->irqs[i].soft ? "softirq " : "", t->irqs[i].name, d1);
		}
		size_t l = strlen(buf);
		fmt_dur(t->irq_on_thread_ns, d1, sizeof d1);
		snprintf(buf + l, sizeof buf - l, "; %s of it taken from the thread while it ran", d1);
		snprintf(lines[n++], 400, "%s", buf);
	}
	return n;
}

/* ---- text ---- */

static void text_file(const rpt *r, const rpt_file *f, hs_strbuf *sb)
{
	char a[32], b[32];
	(void)r;
	hs_sb_printf(sb, "  %s%s%s%s\n", f->name, f->session ? " (session " : "", f->session ? f->session : "",
		     f->session ? ")" : "");
	for (size_t i = 0; i < f->n_notes; i++)
		hs_sb_printf(sb, "    %s\n", f->notes[i]);
	if (!f->opened) {
		hs_sb_printf(sb, "    NOT READ: nothing of this file is in the report\n");
	} else if (!f->events) {
		hs_sb_printf(sb, "    no events\n");
	} else {
		rpt_fmt_ts(f->first_ns, a, sizeof a);
		rpt_fmt_ts(f->last_ns, b, sizeof b);
		hs_sb_printf(sb, "    %s .. %s s (%.3f s), %" PRIu64 " events\n", a, b,
			     (double)(f->last_ns - f->first_ns) / 1e9, f->events);
		for (unsigned c = 0; c < f->cpus; c++) {
			if (!f->cpu_n[c]) {
				hs_sb_printf(sb, "    cpu %u: no events\n", c);
				continue;
			}
			rpt_fmt_ts(f->cpu_first[c], a, sizeof a);
			rpt_fmt_ts(f->cpu_last[c], b, sizeof b);
			hs_sb_printf(sb, "    cpu %u: %s .. %s s, %" PRIu64 " events%s", c, a, b, f->cpu_n[c],
				     f->cpu_first[c] > f->first_ns + 1000000 && (f->cpu_missed[c] || f->wrapped == 1)
					     ? " (starts later: older events of this CPU are gone)"
					     : "");
			if (f->cpu_missed[c])
				hs_sb_printf(sb, ", %" PRIu64 " lost", f->cpu_missed[c]);
			hs_sb_putc(sb, '\n');
		}
	}
	if (f->opened && !f->etl) { /* an .etl's losses are its header's, in the notes */
		if (f->missed || f->missed_unknown)
			hs_sb_printf(sb,
				     "    LOST: %" PRIu64 " events the ring dropped%s%" PRIu64
				     " losses of unknown size\n",
				     f->missed, ", ", f->missed_unknown);
		else
			hs_sb_printf(sb, "    lost events: none reported by the ring\n");
	}
	if (f->wrapped == 1)
		hs_sb_printf(sb,
			     "    WRAPPED: the ring overwrote %" PRId64
			     " events since the previous snapshot; older events are gone\n",
			     f->overwritten);
	else if (f->wrapped == 0)
		hs_sb_printf(sb, "    wrapped: no\n");
	if (f->chunks_dropped >= 0 || f->events_lost >= 0 || f->bytes_lost_disk >= 0)
		hs_sb_printf(sb,
			     "    key file: chunks dropped %" PRId64 ", events lost %" PRId64
			     ", bytes lost to disk %" PRId64 "\n",
			     f->chunks_dropped < 0 ? 0 : f->chunks_dropped, f->events_lost < 0 ? 0 : f->events_lost,
			     f->bytes_lost_disk < 0 ? 0 : f->bytes_lost_disk);
	if (f->ring_dropped > 0)
		hs_sb_printf(sb, "    DROPPED: %" PRId64 " ring events did not fit on disk\n", f->ring_dropped);
	for (size_t i = 0; i < f->n_problems; i++)
		hs_sb_printf(sb, "    PROBLEM: %s\n", f->problems[i]);
}

void rpt_render_text(const rpt *r, hs_strbuf *sb)
{
	char m[32];
	hs_sb_printf(sb, "hindsight report: %s (%s)\n", r->input, r->input_kind);
	hs_sb_printf(sb, "VERDICT: %s\n", r->verdict[0]);
	if (r->verdict[1][0])
		hs_sb_printf(sb, "         %s\n", r->verdict[1]);
	rpt_fmt_ts(r->moment, m, sizeof m);
	hs_sb_printf(sb,
		     "\nTimes are seconds of the %s trace clock; evidence times are relative to the moment, %s s.\n",
		     r->clock[0] ? r->clock : "trace's", m);
	if (r->damaged)
		hs_sb_printf(sb, "Some data could not be read: see COVERAGE before trusting what is missing.\n");
	hs_sb_printf(sb, "\nFINDINGS (%zu, most severe first)\n", r->n_findings);
	if (!r->n_findings)
		hs_sb_printf(sb, "\n  none\n");
	for (size_t k = 0; k < r->n_findings; k++) {
		const rpt_finding *f = &r->findings[k];
		hs_sb_printf(sb, "\n%zu. %s  [%s, impact %d]\n", k + 1, f->title, f->kind, f->impact);
		hs_sb_printf(sb, "   %s\n", f->text);
		for (size_t i = 0; i < f->n_notes; i++)
			hs_sb_printf(sb, "   - %s\n", f->notes[i]);
		if (f->n_ev)
			hs_sb_printf(sb, "   evidence:\n");
		const char *told[64];
		size_t n_told = 0;
		for (size_t i = 0; i < f->n_ev;) {
			size_t run = run_length(r, f, i);
			size_t show = run > 3 ? 2 : run;
			for (size_t j = 0; j < show; j++) {
				const rpt_event *e = &r->events[f->ev[i + j]];
				char rel[32];
				rpt_fmt_rel(r, e->ts, rel, sizeof rel);
				hs_sb_printf(sb, "     %s  cpu %d  pid %-6d %-16s %s/%s%s%s%s\n", rel, e->cpu, e->pid,
					     e->comm, e->system, e->name, e->alert ? "  [" : "",
					     e->alert ? e->alert : "", e->alert ? "]" : "");
				hs_sb_printf(sb, "         %s\n", e->detail);
				bool seen = false;
				for (size_t t = 0; t < n_told; t++)
					seen |= told[t] == e->story;
				if (e->story && !seen) {
					hs_sb_printf(sb, "         story: %s\n", e->story);
					if (n_told < 64)
						told[n_told++] = e->story;
				}
			}
			if (run > show) {
				char rel[32];
				rpt_fmt_rel(r, r->events[f->ev[i + run - 1]].ts, rel, sizeof rel);
				hs_sb_printf(sb, "     ... %zu more x %s/%s of %s, until %s\n", run - show,
					     r->events[f->ev[i]].system, r->events[f->ev[i]].name,
					     r->events[f->ev[i]].comm, rel);
			}
			i += run;
		}
		hs_sb_printf(sb, "   next: %s\n", f->next);
	}
	char tl[16][400];
	size_t ntl = thread_lines(r, tl, 16);
	if (ntl) {
		hs_sb_printf(sb, "\nTHE THREAD BEFORE THE MOMENT: %s\n", tl[0]);
		for (size_t i = 1; i < ntl; i++)
			hs_sb_printf(sb, "  %s\n", tl[i]);
	}
	hs_sb_printf(sb, "\nCOVERAGE (what this report could see)\n");
	char a[32], b[32];
	rpt_fmt_ts(r->win_first, a, sizeof a);
	rpt_fmt_ts(r->win_last, b, sizeof b);
	hs_sb_printf(sb, "  window: %s .. %s s (%.3f s)\n", a, b, (double)(r->win_last - r->win_first) / 1e9);
	for (size_t i = 0; i < r->n_files; i++)
		text_file(r, &r->files[i], sb);
	for (size_t i = 0; i < r->n_run_notes; i++)
		hs_sb_printf(sb, "  %s\n", r->run_notes[i]);
	if (r->events_not_kept)
		hs_sb_printf(sb, "  %" PRIu64 " notable events past the report's limit were counted but not examined\n",
			     r->events_not_kept);
	for (size_t i = 0; i < r->n_regions; i++)
		hs_sb_printf(sb, "  WPA regions of interest: %s (load it in WPA: Trace > Trace Properties > Regions of "
			     "Interest)\n", r->regions[i]);
	if (r->rules_path)
		hs_sb_printf(sb, "  stories and alert tags: %s\n", r->rules_path);
	if (r->rules_note[0])
		hs_sb_printf(sb, "  NO STORIES: %s\n", r->rules_note);
}

/* ---- JSON ---- */

static void json_i64_or_null(hs_json *j, const char *k, int64_t v)
{
	hs_json_key(j, k);
	if (v < 0)
		hs_json_null(j);
	else
		hs_json_int(j, v);
}

static void json_thread(const rpt *r, hs_json *j)
{
	const rpt_thread *t = &r->thread;
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
			hs_json_kuint(j, tstate_keys[s], t->ns[s]);
		hs_json_obj_end(j);
		hs_json_key(j, "states_percent");
		hs_json_obj_begin(j);
		for (int s = 0; s < TS_N; s++) {
			hs_json_key(j, tstate_keys[s]);
			hs_json_double(j, pct(t->ns[s], t->cov1 - (t->born > t->cov0 ? t->born : t->cov0)), 2);
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
			const rpt_waker *w = &t->wakers[i];
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

void rpt_render_json(const rpt *r, hs_strbuf *sb)
{
	hs_json j;
	hs_json_init(&j, sb);
	hs_json_obj_begin(&j);
	hs_json_kint(&j, "report_version", RPT_SCHEMA_VERSION);
	hs_json_kstr(&j, "generator", "hindsight analyze report");
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
	hs_json_key(&j, "verdict");
	hs_json_arr_begin(&j);
	for (int i = 0; i < 2; i++)
		if (r->verdict[i][0])
			hs_json_str(&j, r->verdict[i]);
	hs_json_arr_end(&j);
	hs_json_key(&j, "trigger");
	if (!r->has_trigger) {
		hs_json_null(&j);
	} else {
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "name", r->trig_name);
		hs_json_kstr(&j, "kind", r->trig_kind);
		hs_json_kint(&j, "snapshot", r->snapshot_no);
		hs_json_kint(&j, "hits", r->hits);
		hs_json_kuint(&j, "first_hit_ns", r->first_hit_ns);
		hs_json_key(&j, "detection_latency_ms");
		hs_json_double(&j, r->detect_ms, 3);
		hs_json_kstr(&j, "system", r->hit_system[0] ? r->hit_system : NULL);
		hs_json_kstr(&j, "event", r->hit_event[0] ? r->hit_event : NULL);
		json_i64_or_null(&j, "pid", r->hit_pid);
		hs_json_kstr(&j, "where", r->hit_where[0] ? r->hit_where : NULL);
		if (!strcmp(r->trig_kind, "frame_time")) {
			hs_json_kstr(&j, "slice", r->slice);
			hs_json_key(&j, "frame_ms");
			hs_json_double(&j, r->frame_ms, 3);
			hs_json_key(&j, "median_ms");
			hs_json_double(&j, r->median_ms, 3);
		}
		hs_json_obj_end(&j);
	}
	hs_json_key(&j, "findings");
	hs_json_arr_begin(&j);
	for (size_t k = 0; k < r->n_findings; k++) {
		const rpt_finding *f = &r->findings[k];
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "kind", f->kind);
		hs_json_kint(&j, "impact", f->impact);
		hs_json_kstr(&j, "title", f->title);
		hs_json_kstr(&j, "verdict", f->verdict);
		hs_json_kstr(&j, "text", f->text);
		hs_json_kstr(&j, "next", f->next);
		hs_json_kuint(&j, "ts_ns", f->ts);
		json_i64_or_null(&j, "pid", f->pid);
		hs_json_key(&j, "notes");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i < f->n_notes; i++)
			hs_json_str(&j, f->notes[i]);
		hs_json_arr_end(&j);
		hs_json_key(&j, "evidence");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i < f->n_ev; i++) {
			const rpt_event *e = &r->events[f->ev[i]];
			hs_json_obj_begin(&j);
			hs_json_kuint(&j, "ts_ns", e->ts);
			hs_json_key(&j, "rel_s");
			hs_json_double(&j, ((double)e->ts - (double)r->moment) / 1e9, 6);
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
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	json_thread(r, &j);
	hs_json_key(&j, "coverage");
	hs_json_obj_begin(&j);
	hs_json_key(&j, "files");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < r->n_files; i++) {
		const rpt_file *f = &r->files[i];
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "file", f->name);
		hs_json_kstr(&j, "format", f->etl ? "etl" : "trace-cmd");
		hs_json_key(&j, "notes");
		hs_json_arr_begin(&j);
		for (size_t p = 0; p < f->n_notes; p++)
			hs_json_str(&j, f->notes[p]);
		hs_json_arr_end(&j);
		hs_json_kstr(&j, "session", f->session);
		hs_json_kbool(&j, "opened", f->opened);
		hs_json_kuint(&j, "events", f->events);
		hs_json_key(&j, "first_ns");
		if (f->events)
			hs_json_uint(&j, f->first_ns);
		else
			hs_json_null(&j);
		hs_json_key(&j, "last_ns");
		if (f->events)
			hs_json_uint(&j, f->last_ns);
		else
			hs_json_null(&j);
		hs_json_key(&j, "cpus");
		hs_json_arr_begin(&j);
		for (unsigned c = 0; c < f->cpus; c++) {
			hs_json_obj_begin(&j);
			hs_json_kuint(&j, "cpu", c);
			hs_json_kuint(&j, "events", f->cpu_n[c]);
			hs_json_key(&j, "first_ns");
			if (f->cpu_n[c])
				hs_json_uint(&j, f->cpu_first[c]);
			else
				hs_json_null(&j);
			hs_json_key(&j, "last_ns");
			if (f->cpu_n[c])
				hs_json_uint(&j, f->cpu_last[c]);
			else
				hs_json_null(&j);
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
		hs_json_key(&j, "problems");
		hs_json_arr_begin(&j);
		for (size_t p = 0; p < f->n_problems; p++)
			hs_json_str(&j, f->problems[p]);
		hs_json_arr_end(&j);
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

/* ---- HTML ---- */

/* Text is valid UTF-8 already (hs_utf8_clean); only the markup characters
 * remain. &#39; for ' is both HTML and XML (the WPA regions file uses it too). */
void rpt_markup_esc(hs_strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': hs_sb_append(sb, "&lt;"); break;
		case '>': hs_sb_append(sb, "&gt;"); break;
		case '&': hs_sb_append(sb, "&amp;"); break;
		case '"': hs_sb_append(sb, "&quot;"); break;
		case '\'': hs_sb_append(sb, "&#39;"); break;
		default: hs_sb_putc(sb, *s);
		}
	}
}

/* The timeline's zoom: wheel zooms around the pointer, drag pans, buttons jump
 * to the moment's neighbourhood, a double click shows the whole window. It
 * only changes the inner <svg>'s viewBox and the two end labels; without it
 * the timeline is the same picture, unzoomed. Its SHA-256 is in the page's
 * Content-Security-Policy (TL_SCRIPT_SHA256), so no other script can run: the
 * browser test fails if the two ever disagree. */
#define TL_SCRIPT                                                                                                     \
	"(function(){var d=document.getElementById('tl');if(!d)return;var v=d.querySelector('svg.tlv');"             \
	"var W=+d.dataset.w,H=+d.dataset.h,T0=+d.dataset.t0,SP=+d.dataset.span,M=+d.dataset.m,x0=0,w=W;"          \
	"var L=document.getElementById('tl-l'),R=document.getElementById('tl-r');"                                 \
	"function f(n){return (n/1e9).toFixed(6)+' s';}"                                                           \
	"function set(a,b){b=Math.max(W*1e-7,Math.min(W,b));a=Math.max(0,Math.min(W-b,a));x0=a;w=b;"              \
	"v.setAttribute('viewBox',a+' 0 '+b+' '+H);L.textContent=f(T0+SP*a/W);R.textContent=f(T0+SP*(a+b)/W);"     \
	"d.dataset.zoom=(W/b).toPrecision(3);}"                                                                    \
	"var o=d.querySelector('svg');o.addEventListener('wheel',function(e){e.preventDefault();var r=v.getBoundingClientRect();"                 \
	"var p=(e.clientX-r.left)/r.width,c=x0+p*w,n=w*(e.deltaY<0?0.8:1.25);set(c-p*n,n);},{passive:false});"    \
	"var g=null;o.addEventListener('mousedown',function(e){g={x:e.clientX,a:x0};});"                           \
	"window.addEventListener('mouseup',function(){g=null;});"                                                   \
	"window.addEventListener('mousemove',function(e){if(!g)return;var r=v.getBoundingClientRect();"            \
	"set(g.a-(e.clientX-g.x)/r.width*w,w);});"                                                                  \
	"o.addEventListener('dblclick',function(){set(0,W);});"                                                     \
	"var c=document.getElementById('tl-ctl');c.hidden=false;c.addEventListener('click',function(e){"          \
	"var z=e.target.dataset?+e.target.dataset.z:0;if(!z){if(e.target.dataset&&e.target.dataset.z==='0')"       \
	"set(0,W);return;}var m=(M-T0)/SP*W,h=z*W/SP;set(m-h,2*h);});})();"
#define TL_SCRIPT_SHA256 "Xa1RY7LyTaUXQip5g3/GnWPSIZZRL73i/pf551AtzrY="

/* Time x of ns in the inner drawing (0..W). */
static double tl_x(uint64_t ns, uint64_t t0, double span, double W)
{
	if (ns <= t0)
		return 0;
	double x = W * ((double)(ns - t0) / span);
	return x > W ? W : x;
}

static void svg_timeline(const rpt *r, hs_strbuf *sb)
{
	const double W = 900, left = 170, lane_h = 26, cov_h = 14;
	uint64_t t0 = r->win_first, t1 = r->win_last > r->win_first ? r->win_last : r->win_first + 1;
	double span = (double)(t1 - t0);
	/* Below the event lanes, one thin lane per file and CPU: what the rings
	 * hold (the part before a CPU's oldest record is gone) and where they lost
	 * events (holes). At most HS_REPORT_MAX_COV_LANES, then the rest is said. */
	size_t n_cov = 0, cov_more = 0;
	for (size_t i = 0; i < r->n_files; i++)
		for (unsigned c = 0; r->files[i].opened && c < r->files[i].cpus; c++)
			if (r->files[i].cpu_n[c]) {
				if (n_cov < HS_REPORT_MAX_COV_LANES)
					n_cov++;
				else
					cov_more++;
			}
	double ev_h = lane_h * LANE_N, H = 30 + ev_h + 8 + cov_h * (double)n_cov;
	hs_sb_printf(sb,
		     "<div id=\"tl\" data-w=\"%.0f\" data-h=\"%.0f\" data-t0=\"%" PRIu64 "\" data-span=\"%.0f\" "
		     "data-m=\"%" PRIu64 "\" data-zoom=\"1\">\n"
		     "<p id=\"tl-ctl\" hidden>Zoom: <button data-z=\"0\">whole window</button> "
		     "<button data-z=\"1000000000\">moment &#177;1 s</button> "
		     "<button data-z=\"100000000\">&#177;100 ms</button> <button data-z=\"10000000\">&#177;10 ms</button> "
		     "(wheel: zoom, drag: move, double click: whole window)</p>\n",
		     W, H, t0, span, r->moment);
	hs_sb_printf(sb,
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
		     "aria-label=\"timeline of the window\">\n",
		     W + left + 20, H);
	for (int l = 0; l < LANE_N; l++) {
		double y = 20 + l * lane_h;
		hs_sb_printf(sb, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" class=\"lane%d\"/>", left,
			     y, W, lane_h - 4, l & 1);
		hs_sb_printf(sb, "<text x=\"4\" y=\"%.0f\" class=\"ll\">%s</text>\n", y + 15, lane_names[l]);
	}
	size_t k = 0;
	for (size_t i = 0; i < r->n_files && k < n_cov; i++)
		for (unsigned c = 0; r->files[i].opened && c < r->files[i].cpus && k < n_cov; c++)
			if (r->files[i].cpu_n[c]) {
				hs_sb_printf(sb, "<text x=\"4\" y=\"%.0f\" class=\"cl\">", 30 + ev_h + 8 + cov_h * (double)k + 9);
				rpt_markup_esc(sb, r->files[i].name);
				hs_sb_printf(sb, " cpu %u</text>\n", c);
				k++;
			}
	/* The drawing that zooms: x is time, 0..W over the window. */
	hs_sb_printf(sb,
		     "<svg class=\"tlv\" x=\"%.0f\" y=\"0\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		     "preserveAspectRatio=\"none\">\n",
		     left, W, H, W, H);
	k = 0;
	for (size_t i = 0; i < r->n_files && k < n_cov; i++) {
		const rpt_file *f = &r->files[i];
		for (unsigned c = 0; f->opened && c < f->cpus && k < n_cov; c++) {
			if (!f->cpu_n[c])
				continue;
			double y = 30 + ev_h + 8 + cov_h * (double)k++;
			double a = tl_x(f->cpu_first[c], t0, span, W), b = tl_x(f->cpu_last[c], t0, span, W);
			char x0[32], x1[32];
			if (a > 0) {
				rpt_fmt_ts(f->cpu_first[c], x0, sizeof x0);
				hs_sb_printf(sb,
					     "<rect x=\"0\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" class=\"gone\"><title>cpu %u "
					     "of ",
					     y, a, cov_h - 4, c);
				rpt_markup_esc(sb, f->name);
				hs_sb_printf(sb, ": nothing before %s s (the ring does not reach back here)</title></rect>\n", x0);
			}
			rpt_fmt_ts(f->cpu_first[c], x0, sizeof x0);
			rpt_fmt_ts(f->cpu_last[c], x1, sizeof x1);
			hs_sb_printf(sb,
				     "<rect x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" class=\"held\"><title>cpu %u of ",
				     a, y, b > a ? b - a : 0.001, cov_h - 4, c);
			rpt_markup_esc(sb, f->name);
			hs_sb_printf(sb, ": %s .. %s s, %" PRIu64 " records</title></rect>\n", x0, x1, f->cpu_n[c]);
			for (size_t h = 0; h < f->n_holes; h++) {
				const struct rpt_hole *o = &f->holes[h];
				if (o->cpu != c)
					continue;
				double ha = tl_x(o->from, t0, span, W), hb = tl_x(o->to, t0, span, W);
				rpt_fmt_ts(o->from, x0, sizeof x0);
				rpt_fmt_ts(o->to, x1, sizeof x1);
				/* A hole across every lane too: events of all kinds may be missing there. */
				hs_sb_printf(sb,
					     "<rect x=\"%.3f\" y=\"20\" width=\"%.3f\" height=\"%.0f\" class=\"hole\"/>"
					     "<rect x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" class=\"holec\"><title>cpu %u "
					     "of ",
					     ha, hb > ha ? hb - ha : 0.001, ev_h - 4, ha, y, hb > ha ? hb - ha : 0.001, cov_h - 4,
					     c);
				rpt_markup_esc(sb, f->name);
				if (o->missed > 0)
					hs_sb_printf(sb, ": the ring lost %" PRId64 " events between %s and %s s</title></rect>\n",
						     o->missed, x0, x1);
				else
					hs_sb_printf(sb, ": the ring lost events between %s and %s s</title></rect>\n", x0, x1);
			}
		}
	}
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		double x = tl_x(e->ts, t0, span, W);
		double y = 20 + e->lane * lane_h;
		char rel[32];
		rpt_fmt_rel(r, e->ts, rel, sizeof rel);
		hs_sb_printf(sb, "<line x1=\"%.3f\" x2=\"%.3f\" y1=\"%.0f\" y2=\"%.0f\" class=\"tick%s\"><title>", x, x,
			     y + 2, y + lane_h - 6, e->alert ? " alert" : "");
		rpt_markup_esc(sb, rel);
		hs_sb_append(sb, " ");
		rpt_markup_esc(sb, e->system);
		hs_sb_append(sb, "/");
		rpt_markup_esc(sb, e->name);
		hs_sb_append(sb, ": ");
		rpt_markup_esc(sb, e->detail);
		if (e->story) {
			hs_sb_append(sb, " \xE2\x80\x94 ");
			rpt_markup_esc(sb, e->story);
		}
		hs_sb_append(sb, "</title></line>\n");
	}
	if (r->moment >= t0 && r->moment <= t1) {
		double x = tl_x(r->moment, t0, span, W);
		hs_sb_printf(sb,
			     "<line x1=\"%.3f\" x2=\"%.3f\" y1=\"12\" y2=\"%.0f\" class=\"moment\"><title>the moment</title>"
			     "</line>\n",
			     x, x, H - 6);
	}
	hs_sb_append(sb, "</svg>\n");
	if (r->moment >= t0 && r->moment <= t1)
		hs_sb_printf(sb, "<text x=\"%.1f\" y=\"10\" class=\"ml\">moment</text>\n",
			     left + tl_x(r->moment, t0, span, W) - 20);
	char a[32], b[32];
	rpt_fmt_ts(t0, a, sizeof a);
	rpt_fmt_ts(t1, b, sizeof b);
	hs_sb_printf(sb,
		     "<text id=\"tl-l\" x=\"%.0f\" y=\"%.0f\" class=\"ll\">%s s</text><text id=\"tl-r\" x=\"%.0f\" "
		     "y=\"%.0f\" class=\"ll\" text-anchor=\"end\">%s s</text>\n</svg>\n",
		     left, 18.0 + ev_h, a, left + W, 18.0 + ev_h, b);
	if (cov_more)
		hs_sb_printf(sb, "<p>%zu more CPU lanes are not drawn.</p>\n", cov_more);
	hs_sb_append(sb, "<script>" TL_SCRIPT "</script>\n</div>\n");
}

void rpt_render_html(const rpt *r, hs_strbuf *sb)
{
	hs_sb_append(
		sb,
		"<!DOCTYPE html>\n<!-- hindsight report -->\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
		"script-src 'sha256-" TL_SCRIPT_SHA256 "'\">\n"
		"<title>hindsight report</title>\n<style>\n"
		"body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1150px;color:#222;padding:0 1em}\n"
		".verdict{font-size:1.25em;background:#fff3f0;border-left:6px solid #c0392b;padding:.6em 1em}\n"
		".verdict p{margin:.2em 0}.f{border:1px solid #ddd;border-radius:6px;margin:1em 0;padding:.5em 1em}\n"
		".f h3{margin:.3em 0}.imp{color:#888;font-weight:normal;font-size:.85em}\n"
		"table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:2px 6px;"
		"vertical-align:top;text-align:left;font-size:.9em}\n.story{color:#666;font-style:italic}\n"
		".cov{background:#f6f8fa;border:1px solid #ccd;padding:.5em 1em}.warn{color:#b00;font-weight:bold}\n"
		"svg .lane0{fill:#fafafa}svg .lane1{fill:#f0f0f4}svg .ll{font:11px sans-serif;fill:#444}\n"
		"svg .tick{stroke:#2c6fbb;stroke-width:2}svg .tick.alert{stroke:#c0392b;stroke-width:3}\n"
		".thr{border:1px solid #ddd;border-radius:6px;padding:.5em 1em}.thr li{font-family:monospace;white-space:pre-wrap}\n"
		".bar{display:flex;height:18px;border:1px solid #aaa;margin:.3em 0}\n"
		".bar span{display:block;height:100%;overflow:hidden;font:11px/18px sans-serif;color:#fff;text-indent:4px}\n"
		"svg .moment{stroke:#c0392b;stroke-dasharray:4 3;stroke-width:2}svg .ml{font:11px sans-serif;fill:#c0392b}\n"
		"svg .tlv line{vector-effect:non-scaling-stroke}svg .cl{font:10px sans-serif;fill:#555}\n"
		"svg .held{fill:#cfe8cf}svg .gone{fill:#e4e4e4}svg .holec{fill:#e74c3c}svg .hole{fill:#e74c3c;opacity:.15}\n"
		"#tl svg.tlv{cursor:grab}\n"
		"</style></head><body>\n<h1>hindsight report</h1>\n<p>");
	rpt_markup_esc(sb, r->input);
	hs_sb_append(sb, " (");
	rpt_markup_esc(sb, r->input_kind);
	hs_sb_append(sb, ")</p>\n<div class=\"verdict\" id=\"verdict\">");
	for (int i = 0; i < 2; i++)
		if (r->verdict[i][0]) {
			hs_sb_append(sb, "<p>");
			rpt_markup_esc(sb, r->verdict[i]);
			hs_sb_append(sb, "</p>");
		}
	hs_sb_append(sb, "</div>\n");
	char m[32];
	rpt_fmt_ts(r->moment, m, sizeof m);
	hs_sb_append(sb, "<h2>Timeline</h2>\n<p>Seconds of the ");
	rpt_markup_esc(sb, r->clock[0] ? r->clock : "trace's");
	hs_sb_printf(sb,
		     " trace clock; the dashed line is the moment (%s s). Hover a tick for its event and story.</p>\n",
		     m);
	svg_timeline(r, sb);
	hs_sb_printf(sb, "<h2>Findings (%zu)</h2>\n", r->n_findings);
	for (size_t k = 0; k < r->n_findings; k++) {
		const rpt_finding *f = &r->findings[k];
		hs_sb_printf(sb, "<div class=\"f\" id=\"finding-%zu\"><h3>%zu. ", k + 1, k + 1);
		rpt_markup_esc(sb, f->title);
		hs_sb_append(sb, " <span class=\"imp\">[");
		rpt_markup_esc(sb, f->kind);
		hs_sb_printf(sb, ", impact %d]</span></h3>\n<p>", f->impact);
		rpt_markup_esc(sb, f->text);
		hs_sb_append(sb, "</p>\n");
		if (f->n_notes) {
			hs_sb_append(sb, "<ul>");
			for (size_t i = 0; i < f->n_notes; i++) {
				hs_sb_append(sb, "<li>");
				rpt_markup_esc(sb, f->notes[i]);
				hs_sb_append(sb, "</li>");
			}
			hs_sb_append(sb, "</ul>\n");
		}
		if (f->n_ev) {
			hs_sb_append(
				sb,
				"<table><tr><th>time</th><th>cpu</th><th>pid</th><th>task</th><th>event</th><th>what it "
				"says</th></tr>\n");
			for (size_t i = 0; i < f->n_ev; i++) {
				const rpt_event *e = &r->events[f->ev[i]];
				char rel[32];
				rpt_fmt_rel(r, e->ts, rel, sizeof rel);
				hs_sb_printf(sb, "<tr><td>%s</td><td>%d</td><td>%d</td><td>", rel, e->cpu, e->pid);
				rpt_markup_esc(sb, e->comm);
				hs_sb_append(sb, "</td><td>");
				rpt_markup_esc(sb, e->system);
				hs_sb_append(sb, "/");
				rpt_markup_esc(sb, e->name);
				hs_sb_append(sb, "</td><td>");
				rpt_markup_esc(sb, e->detail);
				if (e->story) {
					hs_sb_append(sb, "<br><span class=\"story\">");
					rpt_markup_esc(sb, e->story);
					hs_sb_append(sb, "</span>");
				}
				hs_sb_append(sb, "</td></tr>\n");
			}
			hs_sb_append(sb, "</table>\n");
		}
		hs_sb_append(sb, "<p><b>Next:</b> ");
		rpt_markup_esc(sb, f->next);
		hs_sb_append(sb, "</p></div>\n");
	}
	/* The thread: a bar of its states (inline style widths: no script), then the text's own lines. */
	char tl[16][400];
	size_t ntl = thread_lines(r, tl, 16);
	if (ntl) {
		static const char *const colours[TS_N] = {"#2e8b57", "#e0a800", "#7fa7d9", "#c0392b", "#888", "#ccc"};
		hs_sb_append(sb, "<h2>The thread before the moment</h2>\n<div class=\"thr\" id=\"thread\"><p>");
		rpt_markup_esc(sb, tl[0]);
		hs_sb_append(sb, "</p>\n");
		const rpt_thread *t = &r->thread;
		if (t->analysed && t->cov1 > t->cov0) {
			hs_sb_append(sb, "<div class=\"bar\">");
			for (int s = 0; s < TS_N; s++) {
				double p = pct(t->ns[s], t->cov1 - (t->born > t->cov0 ? t->born : t->cov0));
				if (p < 0.05)
					continue;
				/* labelled where it is wide enough: readable without hovering */
				hs_sb_printf(sb, "<span style=\"width:%.2f%%;background:%s\" title=\"%s %.1f %%\">%s</span>",
					     p, colours[s], tstate_names[s], p, p >= 8 ? tstate_keys[s] : "");
			}
			hs_sb_append(sb, "</div>\n");
		}
		hs_sb_append(sb, "<ul>");
		for (size_t i = 1; i < ntl; i++) {
			hs_sb_append(sb, "<li>");
			rpt_markup_esc(sb, tl[i]);
			hs_sb_append(sb, "</li>");
		}
		hs_sb_append(sb, "</ul></div>\n");
	}
	/* The coverage box: the text renderer's own lines, so both always say the same. */
	hs_strbuf cov = {0};
	char a[32], b[32];
	rpt_fmt_ts(r->win_first, a, sizeof a);
	rpt_fmt_ts(r->win_last, b, sizeof b);
	hs_sb_printf(&cov, "window: %s .. %s s\n", a, b);
	hs_sb_append(sb, "<h2>Coverage</h2>\n<div class=\"cov\" id=\"coverage\"><pre>");
	hs_strbuf txt = {0};
	rpt_render_text(r, &txt);
	const char *c = strstr(hs_sb_cstr(&txt), "\nCOVERAGE");
	rpt_markup_esc(sb, c ? c + 1 : hs_sb_cstr(&cov));
	hs_sb_free(&txt);
	hs_sb_free(&cov);
	hs_sb_append(sb, "</pre></div>\n</body></html>\n");
}
