/* report/why.c: the report's "why": the cause analysis (report/cause/) of the thread the strongest finding is about, over its window, joined to that finding (its cause, its next step) and to the verdict's sentence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/plan.h"
#include "report/model.h"

/* The vocabulary: the rules' own, else the shipped causes.yaml found as every rules file is found. */
static const hs_cause_vocab *vocabulary(hs_report *r, const hs_ruleset *rules)
{
	if (rules && rules->causes.present)
		return &rules->causes;
	r->causes_rules = hs_rpt_shipped_rules(r, "causes.yaml", &r->causes_diags);
	if (r->causes_rules && !r->causes_rules->causes.present) {
		hs_rules_free(r->causes_rules);
		r->causes_rules = NULL;
		return NULL;
	}
	return &r->causes_rules->causes;
}

/* The file with the scheduler's records: the trace.dat with most switches, else an .etl (its CSwitch records are
 * not counted by the walk: the analysis reads it and says when it has none). */
static int ring_file(const hs_report *r)
{
	if (r->thread.file >= 0)
		return r->thread.file;
	int etl = -1;
	for (size_t i = 0; i < r->n_files; i++)
		if (r->files[i].opened && r->files[i].etl && etl < 0)
			etl = (int)i;
	return etl;
}

/* The finding the thread is about (the one thread.c chose). */
static int basis_finding(const hs_report *r)
{
	const hs_rpt_thread *t = &r->thread;
	for (size_t k = 0; k < r->n_findings; k++) {
		const hs_rpt_finding *f = &r->findings[k];
		if (t->basis && !strcmp(f->kind, t->basis) && (f->tid > 0 ? f->tid : f->pid) == t->pid)
			return (int)k;
	}
	/* a hang's thread is its watchdog record's subject */
	for (size_t k = 0; k < r->n_findings; k++)
		if (t->basis && !strcmp(r->findings[k].kind, t->basis))
			return (int)k;
	return -1;
}

/* The newest run of normal frames of thread tid (starts at most 1.25 x the median apart, at least 4, at most 16)
 * ending before w0: its first start in *a, its last in *b; the number of frames, 0 when there is none. */
static unsigned normal_frames(const hs_report *r, int tid, uint64_t w0, double median_ms, uint64_t *a, uint64_t *b)
{
	uint64_t lim = (uint64_t)(1.25 * median_ms * 1e6), run_end = 0, prev = 0;
	unsigned run = 0;
	for (size_t i = r->n_events; i-- > 0;) {
		const hs_rpt_event *e = &r->events[i];
		if (e->ts >= w0 || e->shape != HS_DEC_MARKER || !e->v[0] || e->pid != tid || strncmp(e->detail, "B|", 2) != 0)
			continue;
		if (prev && prev - e->ts <= lim) {
			if (!run)
				run_end = prev;
			run++;
			*a = e->ts;
			if (run == 16)
				break;
		} else if (run >= 4) {
			break;
		} else {
			run = 0;
		}
		prev = e->ts;
	}
	if (run < 4)
		return 0;
	*b = run_end;
	return run;
}

/* Findings the moment is not about go below the fold: when the strongest finding is about a thread, a finding
 * that is no alert (impact under 60), not about that thread's process, and either outside its window (2 s either
 * side) or only what every busy machine does (exit statuses, programs started) is background; in a run folder's
 * report only the latter. The order within
 * each part stays the ranking's. */
static void mark_background(hs_report *r)
{
	const hs_rpt_thread *t = &r->thread;
	if (!t->present || !r->n_findings || strcmp(r->findings[0].kind, t->basis ? t->basis : "") != 0)
		return;
	/* A run folder's report covers the whole run, each snapshot an incident of its own: no one moment, so only
	 * the routine findings go below the fold there. */
	bool whole_run = r->input_kind && !strcmp(r->input_kind, "run");
	int32_t proc = r->why.analysed ? r->why.tgid : r->findings[0].pid;
	uint64_t a = t->w0 > 2000000000ull ? t->w0 - 2000000000ull : 0, b = t->w1 + 2000000000ull;
	size_t nb = 0;
	for (size_t k = 1; k < r->n_findings; k++) {
		hs_rpt_finding *f = &r->findings[k];
		bool mine = f->pid > 0 && (f->pid == proc || f->pid == t->pid);
		bool near = f->ts >= a && f->ts <= b;
		bool routine = !strcmp(f->kind, "exit-status") || !strcmp(f->kind, "activity");
		f->background = f->impact < 60 && !mine && (whole_run ? routine : !near || routine);
		nb += f->background;
	}
	if (!nb)
		return;
	/* stable: foreground first */
	hs_rpt_finding *tmp = malloc(r->n_findings * sizeof *tmp);
	if (!tmp) {
		r->oom = true;
		return;
	}
	size_t o = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < r->n_findings; k++)
			if (r->findings[k].background == (pass == 1))
				tmp[o++] = r->findings[k];
	memcpy(r->findings, tmp, r->n_findings * sizeof *tmp);
	free(tmp);
}

static void why_build(hs_report *r, const hs_ruleset *rules)
{
	r->why_finding = -1;
	const hs_rpt_thread *t = &r->thread;
	if (!t->present)
		return;
	const hs_cause_vocab *voc = vocabulary(r, rules);
	int fi = ring_file(r);
	if (!voc) {
		snprintf(r->why.why, sizeof r->why.why,
			 "no cause vocabulary: neither the rules nor a causes.yaml beside them (where the time went is not "
			 "explained)");
		return;
	}
	if (fi < 0) {
		snprintf(r->why.why, sizeof r->why.why, "%s", t->why[0] ? t->why : "no file here records the scheduler");
		return;
	}
	const char *side[HS_REPORT_MAX_FILES];
	size_t n_side = 0;
	for (size_t i = 0; i < r->n_files; i++)
		if ((int)i != fi && r->files[i].opened && r->files[i].etl == r->files[fi].etl)
			side[n_side++] = r->files[i].path;
	/* tasks.json: the processes of threads the trace saw no creation of (they started before the recording) */
	bool have_tasks = r->input_kind && !strcmp(r->input_kind, "snapshot") && hs_rpt_tasks_load(r, r->input);
	int32_t(*tg)[2] = NULL;
	size_t n_tg = 0;
	if (have_tasks) {
		tg = malloc(HS_TASKS_MAX * sizeof *tg);
		if (tg)
			n_tg = hs_rpt_tasks_tgids(r, tg, HS_TASKS_MAX);
	}
	hs_cause_input in = {.ring = r->files[fi].path,
			     .tgids = (const int32_t(*)[2])tg,
			     .n_tgids = n_tg,
			     .side = side,
			     .n_side = n_side,
			     .ring_wrapped = r->files[fi].wrapped == 1,
			     .tid = t->pid,
			     .w0 = t->w0,
			     .w1 = t->w1,
			     .vocab = voc,
			     .no_cpu_quota = have_tasks && hs_rpt_tasks_no_cpu_quota(r, t->pid)};
	/* a frame hitch against the thread's own normal frames: the newest run of them before the long one (frames
	 * late already are part of the incident, not the usual) */
	if (t->basis && !strcmp(t->basis, "frame-hitch") && r->trig.median_ms > 0) {
		uint64_t a = 0, b = 0;
		unsigned n = normal_frames(r, t->pid, t->w0, r->trig.median_ms, &a, &b);
		if (n && b > a && a >= r->files[fi].first_ns) {
			in.baseline_units = n;
			in.baseline_ns = t->w0 - a;
			in.baseline_end_ns = b;
		}
	}
	hs_status cst = hs_cause_analyse(&in, &r->why);
	free(tg);
	if (cst == HS_ENOMEM) {
		r->oom = true;
		return;
	}
	r->why_vocab = voc;
	r->why_finding = basis_finding(r);
	hs_rpt_tasks_join(r);
	const hs_cause_reason *top = hs_cause_top(&r->why);
	if (top && top->def && top->def->verdict) /* again: the join may have named more */
		hs_cause_fill(&r->why, top, top->def->verdict, r->why.clause, sizeof r->why.clause);
	if (r->why_finding < 0 || !top)
		return;
	hs_rpt_finding *f = &r->findings[r->why_finding];
	/* the finding's next step is its dominant reason's */
	if (top->def && top->def->next)
		hs_cause_fill(&r->why, top, top->def->next, f->next, sizeof f->next);
	/* the verdict: the symptom, then the cause, when this finding is the verdict's and the cause says enough */
	if (r->why_finding != 0 || 100.0 * top->share < (double)voc->mention_pct || !r->why.clause[0])
		return;
	char sym[sizeof r->verdict[0]];
	snprintf(sym, sizeof sym, "%s", r->verdict[0]);
	size_t l = strlen(sym);
	while (l && (sym[l - 1] == '.' || sym[l - 1] == ' '))
		sym[--l] = '\0';
	char also[300] = "";
	if (r->why.n_reasons > 1) {
		const hs_cause_reason *k = &r->why.reasons[1];
		if (100.0 * k->share >= (double)voc->mention_pct) {
			char tm[32];
			hs_cause_fmt_ns(k->ns, tm, sizeof tm);
			char who[160] = "";
			if (k->has_culprit && !(k->culprit.is_task && k->culprit.tid == r->why.tid))
				hs_cause_culprit_text(&k->culprit, who, sizeof who);
			snprintf(also, sizeof also, "; also %s %s (%.0f %%)%s%s", k->def && k->def->title ? k->def->title : k->id,
				 tm, 100.0 * k->share, who[0] ? ": " : "", who);
		}
	}
	hs_rpt_text(r->verdict[0], sizeof r->verdict[0], "%s: %s%s.", sym, r->why.clause, also);
}

void hs_rpt_why_build(hs_report *r, const hs_ruleset *rules)
{
	why_build(r, rules);
	mark_background(r); /* the explained finding stays first: its index holds */
}
