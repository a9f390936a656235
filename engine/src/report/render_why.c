/* report/render_why.c: the "why" as each renderer shows it: the WHY section's lines (report.txt, report.html), the cause object of report.json, and the HTML lanes of the thread, its CPUs and its wake-ups. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/render.h"

static const char *title_of(const hs_cause_reason *k)
{
	return k->def && k->def->title ? k->def->title : k->id;
}

/* "hogzilla (pid 23250, real-time priority 50)" or the reason's object. */
static void who(const hs_cause_reason *k, char *buf, size_t cap)
{
	if (k->has_culprit)
		hs_cause_culprit_text(&k->culprit, buf, cap);
	else
		snprintf(buf, cap, "%s", k->what[0] ? k->what : "-");
}

size_t hs_rpt_why_lines(const hs_report *r, char lines[][400], size_t cap)
{
	const hs_cause_result *w = &r->why;
	const hs_rpt_thread *t = &r->thread;
	size_t n = 0;
	if (!t->present || cap < 4)
		return 0;
	char d[32], c[32];
	hs_cause_fmt_ns(t->w1 > t->w0 ? t->w1 - t->w0 : 0, d, sizeof d);
	if (!w->analysed) {
		hs_rpt_text(lines[n++], 400, "where the time of %s (tid %d) went is not explained: %s", t->comm[0] ? t->comm : "?",
			 t->pid, t->why[0] ? t->why : w->why[0] ? w->why : "no scheduler records");
		return n;
	}
	uint64_t cov = w->cov1 - w->cov0;
	hs_cause_fmt_ns(cov, c, sizeof c);
	hs_rpt_text(lines[n++], 400, "where the %s of %s%s%s (tid %d) went, the %s finding's window (%s of it covered, %.0f %%)", d,
		 w->comm, w->process[0] ? " of " : "", w->process, (int)w->tid, t->basis ? t->basis : "?", c,
		 hs_rpt_pct(cov, t->w1 - t->w0));
	for (size_t i = 0; i < w->n_reasons && n < cap; i++) {
		const hs_cause_reason *k = &w->reasons[i];
		char tm[32], cul[200];
		hs_cause_fmt_ns(k->ns, tm, sizeof tm);
		who(k, cul, sizeof cul);
		bool say_what = k->has_culprit && k->what[0] && strcmp(k->what, cul) != 0;
		char us[64] = "";
		if (w->has_usual) {
			char u[32];
			hs_cause_fmt_ns(k->usual_ns, u, sizeof u);
			snprintf(us, sizeof us, " (usually %s a frame)", u);
		}
		hs_rpt_text(lines[n++], 400, "%5.1f %%  %10s  %-18s %s%s%s%s", 100.0 * k->share, tm, k->id, cul,
			 say_what ? ": " : "", say_what ? k->what : "", us);
		/* the evidence of the reasons that matter */
		if (100.0 * k->share < (double)(r->why_vocab ? r->why_vocab->mention_pct : 0) && i > 0)
			continue;
		for (size_t e = 0; e < k->n_evidence && e < 3 && n < cap; e++)
			hs_rpt_text(lines[n++], 400, "                     - %s", k->evidence[e]);
		if (k->chain[0] && n < cap)
			hs_rpt_text(lines[n++], 400, "                     chain: %s", k->chain);
	}
	if (w->lost && n < cap)
		hs_rpt_text(lines[n++], 400, "WARNING: the ring lost %" PRIu64 " events inside the window: a share may be wrong",
			 w->lost);
	if (w->dropped && n < cap)
		hs_rpt_text(lines[n++], 400, "the window's oldest %" PRIu64 " records were past the analysis's cap: it starts later",
			 w->dropped);
	if (r->why_vocab && n < cap)
		hs_rpt_text(lines[n++], 400, "reasons: the cause vocabulary version %" PRIu64 " (docs/causes.md)",
			 r->why_vocab->version);
	return n;
}

static void json_culprit(hs_json *j, const hs_cause_reason *k)
{
	hs_json_key(j, "culprit");
	if (!k->has_culprit) {
		hs_json_null(j);
		return;
	}
	const hs_cause_culprit *c = &k->culprit;
	hs_json_obj_begin(j);
	if (c->is_task) {
		hs_json_kint(j, "pid", c->tgid >= 0 ? c->tgid : c->tid);
		hs_json_kint(j, "tid", c->tid);
		hs_json_kint(j, "tgid", c->tgid);
		hs_json_kstr(j, "name", c->name);
		hs_json_kstr(j, "process", c->process[0] ? c->process : NULL);
		hs_json_kstr(j, "policy", c->policy[0] ? c->policy : NULL);
		if (c->policy[0])
			hs_json_kint(j, "priority", c->priority);
		else
			hs_json_kstr(j, "priority", NULL);
		hs_json_kint(j, "tasks", c->tasks);
		hs_json_kstr(j, "what", NULL);
	} else {
		hs_json_kstr(j, "pid", NULL);
		hs_json_kstr(j, "tid", NULL);
		hs_json_kstr(j, "tgid", NULL);
		hs_json_kstr(j, "name", NULL);
		hs_json_kstr(j, "policy", NULL);
		hs_json_kstr(j, "priority", NULL);
		hs_json_kstr(j, "what", c->what);
	}
	hs_json_obj_end(j);
}

void hs_rpt_json_cause(hs_json *j, const hs_report *r)
{
	const hs_cause_result *w = &r->why;
	const hs_cause_reason *top = hs_cause_top(w);
	hs_json_obj_begin(j);
	hs_json_kstr(j, "id", top->id);
	hs_json_kdouble(j, "share", top->share, 4);
	json_culprit(j, top);
	hs_json_kstr(j, "what", top->what);
	hs_json_kstr(j, "cpus", top->cpus);
	hs_json_kstr(j, "chain", top->chain);
	if (r->why_vocab)
		hs_json_kuint(j, "vocabulary_version", r->why_vocab->version);
	hs_json_key(j, "thread");
	hs_json_obj_begin(j);
	hs_json_kint(j, "tid", w->tid);
	hs_json_kint(j, "tgid", w->tgid);
	hs_json_kstr(j, "name", w->comm);
	if (w->process[0])
		hs_json_kstr(j, "process", w->process);
	hs_json_obj_end(j);
	hs_json_key(j, "window");
	hs_json_obj_begin(j);
	hs_json_kuint(j, "first_ns", w->w0);
	hs_json_kuint(j, "last_ns", w->w1);
	hs_json_kuint(j, "covered_first_ns", w->cov0);
	hs_json_kuint(j, "covered_last_ns", w->cov1);
	hs_json_obj_end(j);
	hs_json_key(j, "evidence");
	hs_json_arr_begin(j);
	for (size_t e = 0; e < top->n_evidence; e++)
		hs_json_str(j, top->evidence[e]);
	hs_json_arr_end(j);
	hs_json_key(j, "reasons");
	hs_json_arr_begin(j);
	for (size_t i = 0; i < w->n_reasons; i++) {
		const hs_cause_reason *k = &w->reasons[i];
		hs_json_obj_begin(j);
		hs_json_kstr(j, "id", k->id);
		hs_json_kstr(j, "title", title_of(k));
		hs_json_kdouble(j, "share", k->share, 4);
		hs_json_kuint(j, "ns", k->ns);
		json_culprit(j, k);
		hs_json_kstr(j, "what", k->what);
		hs_json_kstr(j, "cpus", k->cpus);
		hs_json_kstr(j, "chain", k->chain);
		hs_json_key(j, "evidence");
		hs_json_arr_begin(j);
		for (size_t e = 0; e < k->n_evidence; e++)
			hs_json_str(j, k->evidence[e]);
		hs_json_arr_end(j);
		hs_json_obj_end(j);
	}
	hs_json_arr_end(j);
	hs_json_obj_end(j);
}

/* ---- the HTML lanes ---- */

static const char *const state_color[] = {"#bbb", "#2e7d32", "#e53935", "#90caf9", "#8e24aa", "#f9a825", "#f9a825",
					  "#555"};
static const char *const state_name[] = {"unknown", "running", "runnable", "sleeping (S)", "blocked (D)", "stopped",
					 "traced", "exited"};

static double xat(uint64_t ns, uint64_t a, uint64_t b, double w)
{
	if (ns <= a)
		return 0;
	if (ns >= b)
		return w;
	return (double)(ns - a) / (double)(b - a) * w;
}

/* A stable colour for a task (its tid), so the culprit stands out the same way in every lane. */
static void task_color(int32_t tid, bool target, char *buf, size_t cap)
{
	if (tid == 0) {
		snprintf(buf, cap, "#eeeeee");
		return;
	}
	if (target) {
		snprintf(buf, cap, "#2e7d32");
		return;
	}
	unsigned h = (unsigned)tid * 2654435761u;
	snprintf(buf, cap, "hsl(%u,65%%,55%%)", h % 360);
}

void hs_rpt_html_why(hs_strbuf *sb, const hs_report *r)
{
	const hs_cause_result *w = &r->why;
	if (!w->analysed || w->cov1 <= w->cov0)
		return;
	const double W = 960, lane = 22, left = 130;
	uint64_t a = w->cov0, b = w->cov1;
	/* lanes: the thread's state, its reasons, each CPU it used (who ran), its wake-ups */
	bool cpu_used[64] = {0};
	int ncpu = 0;
	for (size_t i = 0; i < w->n_cpu_spans; i++)
		if (w->cpu_spans[i].cpu >= 0 && w->cpu_spans[i].cpu < 64 && !cpu_used[w->cpu_spans[i].cpu]) {
			cpu_used[w->cpu_spans[i].cpu] = true;
			ncpu++;
		}
	int lanes = 4 + ncpu;
	double H = lane * lanes + 30;
	hs_sb_printf(sb, "<svg class=\"why\" width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"where the thread's time went\">\n",
		     W + left + 10, H);
	const char *lane_names[4] = {"thread state", "reason", "woken by", "frames"};
	for (int l = 0; l < 4; l++)
		hs_sb_printf(sb, "<text x=\"4\" y=\"%.0f\" class=\"lane\">%s</text>\n", lane * (l >= 2 ? l + ncpu : l) + 15,
			     lane_names[l]);
	/* the frames: the thread's frame starts (its atrace slice starts the walk kept); a hitch's window is the long
	 * frame, drawn as such */
	double fy = lane * (3 + ncpu);
	if (r->thread.basis && !strcmp(r->thread.basis, "frame-hitch"))
		hs_sb_printf(sb, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fdecea\"><title>the long "
				 "frame</title></rect>\n",
			     left, fy + 2, W, lane - 4);
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_MARKER || !e->v[0] || e->pid != (int)w->tid || e->ts + 1000 < a || e->ts > b + 1000)
			continue;
		double x = left + xat(e->ts, a, b, W);
		hs_sb_printf(sb, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#333\" stroke-width=\"2\"><title>",
			     x, x, fy + 2, fy + lane - 2);
		hs_rpt_markup_esc(sb, e->detail);
		hs_sb_append(sb, "</title></line>\n");
	}
	/* the thread's state, from the stretches the reasons were claimed in */
	for (size_t i = 0; i < w->n_spans; i++) {
		const hs_cause_span *s = &w->spans[i];
		double x0 = xat(s->t0, a, b, W), x1 = xat(s->t1, a, b, W);
		unsigned st = s->state < 8 ? s->state : 0;
		hs_sb_printf(sb,
			     "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\"><title>%s</title></rect>\n",
			     left + x0, x1 - x0 > 0.5 ? x1 - x0 : 0.5, lane - 4, state_color[st], state_name[st]);
		if (s->reason >= 0 && (size_t)s->reason < w->n_reasons) {
			const hs_cause_reason *k = &w->reasons[s->reason];
			char tm[32];
			hs_cause_fmt_ns(s->t1 - s->t0, tm, sizeof tm);
			hs_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" class=\"r%d\"><title>", left + x0,
				     lane + 2, x1 - x0 > 0.5 ? x1 - x0 : 0.5, lane - 4, s->reason < 8 ? s->reason : 8);
			hs_rpt_markup_esc(sb, k->id);
			hs_sb_printf(sb, " %s</title></rect>\n", tm);
		}
	}
	/* each CPU: who ran */
	int row = 2;
	for (int cpu = 0; cpu < 64; cpu++) {
		if (!cpu_used[cpu])
			continue;
		hs_sb_printf(sb, "<text x=\"4\" y=\"%.0f\" class=\"lane\">CPU %d</text>\n", lane * row + 15, cpu);
		for (size_t i = 0; i < w->n_cpu_spans; i++) {
			const hs_cause_cpu_span *s = &w->cpu_spans[i];
			if (s->cpu != cpu)
				continue;
			double x0 = xat(s->t0, a, b, W), x1 = xat(s->t1, a, b, W);
			if (x1 - x0 < 0.3)
				continue;
			char col[40];
			task_color(s->tid, s->is_target, col, sizeof col);
			hs_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\"><title>", left + x0,
				     lane * row + 2, x1 - x0, lane - 4, col);
			hs_rpt_markup_esc(sb, s->name);
			hs_sb_printf(sb, " (tid %d, prio %d)</title></rect>\n", (int)s->tid, (int)s->prio);
		}
		row++;
	}
	/* wake-ups: a mark, and an arrow from the waker's CPU lane when it is drawn */
	double wy = lane * (2 + ncpu);
	for (size_t i = 0; i < w->n_wakes; i++) {
		const hs_cause_wake *k = &w->wakes[i];
		if (k->ts < a || k->ts > b)
			continue;
		double x = left + xat(k->ts, a, b, W);
		hs_sb_printf(sb, "<path d=\"M%.1f %.0f l-4 -8 l8 0 z\" class=\"wake\"><title>woken by ", x, wy + lane - 4);
		hs_rpt_markup_esc(sb, k->name);
		hs_sb_printf(sb, " (%s, CPU %d)</title></path>\n",
			     k->ctx == 0 ? "a task" : k->ctx == 1 ? "an interrupt" : "a softirq", (int)k->cpu);
	}
	char d0[32], d1[32];
	hs_cause_fmt_ns(0, d0, sizeof d0);
	hs_cause_fmt_ns(b - a, d1, sizeof d1);
	hs_sb_printf(sb, "<text x=\"%.0f\" y=\"%.0f\" class=\"lane\">+0</text><text x=\"%.0f\" y=\"%.0f\" class=\"lane\" "
			 "text-anchor=\"end\">%s</text>\n</svg>\n",
		     left, H - 4, left + W, H - 4, d1);
	(void)d0;
	/* the legend: the reasons in the reason lane's colours */
	hs_sb_printf(sb, "<p class=\"legend\">");
	for (size_t i = 0; i < w->n_reasons && i < 9; i++) {
		hs_sb_printf(sb, "<span class=\"r%zu\">&nbsp;&nbsp;</span> ", i);
		hs_rpt_markup_esc(sb, w->reasons[i].id);
		hs_sb_printf(sb, " %.0f %% &nbsp; ", 100.0 * w->reasons[i].share);
	}
	hs_sb_printf(sb, "</p>\n");
}
