/* report/render_common.c: what the renderers share: the thread section's lines, the coverage box's text, markup escaping. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/render.h"

/* ---- the thread before the moment ---- */

const char *const hs_rpt_tstate_names[TS_N] = {
	"running",
	"runnable, waiting for a CPU",
	"sleeping (S: a timer, a lock, input)",
	"blocked in D (uninterruptible: I/O, a kernel lock)",
	"stopped, exiting or other",
	"blocked, kind unknown (before its first record)",
};
const char *const hs_rpt_tstate_keys[TS_N] = {"running", "runnable", "sleeping", "uninterruptible", "other",
					      "unknown"};

double hs_rpt_pct(uint64_t part, uint64_t whole)
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
static void fmt_waker(const hs_rpt_waker *w, char *buf, size_t cap)
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
size_t hs_rpt_thread_lines(const hs_report *r, char lines[][400], size_t cap)
{
	const hs_rpt_thread *t = &r->thread;
	size_t n = 0;
	char a[32], b[32], d1[32], d2[32];
	if (!t->present || cap < 12)
		return 0;
	fmt_dur(t->w1 - t->w0, d1, sizeof d1);
	bool freeze = !strcmp(t->basis, "app-hang");
	snprintf(lines[n++], 400, "%s (pid %d), the thread of the %s finding, over the %s %s%s",
		 t->comm[0] ? t->comm : "?", t->pid, t->basis, d1, freeze ? "of the freeze" : "before the moment",
		 !strcmp(t->basis, "frame-hitch") ? " (the frame)" : "");
	if (!t->analysed && t->why[0]) {
		snprintf(lines[n++], 400, "no split: %s", t->why);
		return n;
	}
	uint64_t cov = t->cov1 - t->cov0;
	hs_rpt_fmt_rel(r, t->cov0, a, sizeof a);
	hs_rpt_fmt_rel(r, t->cov1, b, sizeof b);
	fmt_dur(cov, d2, sizeof d2);
	char cut[96] = "";
	if (cov + 1000 < t->w1 - t->w0 && t->cov_cpu >= 0)
		snprintf(cut, sizeof cut, ": cpu %d's older events are gone (its ring wrapped or lost them)",
			 t->cov_cpu);
	else if (cov + 1000 < t->w1 - t->w0)
		snprintf(cut, sizeof cut, ": the ring holds nothing older (recording began, or a snapshot emptied it)");
	snprintf(lines[n++], 400, "covered: %s of %s (%.0f %%), from %s to %s, by %s%s%s", d2, d1,
		 hs_rpt_pct(cov, t->w1 - t->w0), a + strspn(a, " "), b + strspn(b, " "), r->files[t->file].name, cut,
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
		hs_rpt_fmt_rel(r, t->born, a, sizeof a);
		fmt_dur(life, d2, sizeof d2);
		snprintf(lines[n++], 400, "it was born (forked) at %s: the split covers its %s of life",
			 a + strspn(a, " "), d2);
	}
	for (int s = 0; s < TS_N; s++) {
		if (!t->ns[s] && s > TS_DISK)
			continue;
		fmt_dur(t->ns[s], d1, sizeof d1);
		snprintf(lines[n++], 400, "%5.1f %%  %-10s  %s", hs_rpt_pct(t->ns[s], life), d1, hs_rpt_tstate_names[s]);
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
	snprintf(buf, sizeof buf, "CPU time by task (%u CPUs, idle %.0f %%):", t->cpus, hs_rpt_pct(t->idle_ns, total));
	for (size_t i = 0; i < t->n_users && i < 5; i++) {
		size_t l = strlen(buf);
		fmt_dur(t->users[i].ns, d1, sizeof d1);
		char tasks[24] = "";
		if (t->users[i].threads > 1)
			snprintf(tasks, sizeof tasks, ", %u tasks", t->users[i].threads);
		snprintf(buf + l, sizeof buf - l, "%s %s %.1f %% (%s%s)", i ? "," : "", t->users[i].name,
			 hs_rpt_pct(t->users[i].ns, total), d1, tasks);
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
			 hs_rpt_pct(t->irq_ns + t->softirq_ns, total));
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


static void text_file(const hs_report *r, const hs_rpt_file *f, hs_strbuf *sb)
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
		hs_rpt_fmt_ts(f->first_ns, a, sizeof a);
		hs_rpt_fmt_ts(f->last_ns, b, sizeof b);
		hs_sb_printf(sb, "    %s .. %s s (%.3f s), %" PRIu64 " events\n", a, b,
			     (double)(f->last_ns - f->first_ns) / 1e9, f->events);
		for (unsigned c = 0; c < f->cpus; c++) {
			if (!f->cpu_n[c]) {
				hs_sb_printf(sb, "    cpu %u: no events\n", c);
				continue;
			}
			hs_rpt_fmt_ts(f->cpu_first[c], a, sizeof a);
			hs_rpt_fmt_ts(f->cpu_last[c], b, sizeof b);
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

/* Text is valid UTF-8 already (hs_utf8_clean); only the markup characters
 * remain. &#39; for ' is both HTML and XML (the WPA regions file uses it too). */
void hs_rpt_markup_esc(hs_strbuf *sb, const char *s)
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


/* ---- the coverage box ---- */

void hs_rpt_coverage_text(const hs_report *r, hs_strbuf *sb)
{
	hs_sb_printf(sb, "COVERAGE (what this report could see)\n");
	char a[32], b[32];
	hs_rpt_fmt_ts(r->win_first, a, sizeof a);
	hs_rpt_fmt_ts(r->win_last, b, sizeof b);
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
