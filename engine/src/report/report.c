/* report/report.c: the report layer's public API (hindsight/report.h): build a report from a snapshot, run folder or trace file, render it, write its files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hindsight/diag.h"
#include "hindsight/plan.h"
#include "report/model.h"
#include "report/render.h"
#include "report/write.h"

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The rules for stories and alert tags: the caller's, else the run's own, else the default. Loaded here when the
 * caller did not load them; *owned is what to free. Without rules the report goes on and says so. */
static const hs_ruleset *load_rules(hs_report *r, hs_ruleset **owned, hs_diags **diags_out)
{
	const hs_report_opts *o = &r->opts;
	*owned = NULL;
	*diags_out = NULL;
	if (o->ruleset) {
		free(r->rules_path);
		r->rules_path = o->ruleset_path ? hs_rpt_strdup(r, o->ruleset_path) : NULL;
		return o->ruleset;
	}
	const char *arg = o->rules;
	if (!arg && r->rules_path && is_file(r->rules_path))
		arg = r->rules_path;
	else if (!arg && r->rules_path)
		snprintf(r->rules_note, sizeof r->rules_note, "the run's rules %s are not here; ", r->rules_path);
	if (!arg)
		arg = o->default_rules;
	char *tried = NULL, *path = arg ? hs_rules_resolve(arg, o->argv0, &tried) : NULL;
	hs_diags *diags = NULL;
	if (!path) {
		if (arg)
			hs_rpt_say(r, HS_MSG_WARN, "rules '%s' not found; looked at:\n%s", arg, tried ? tried : "");
	} else if (!(diags = hs_diags_new())) {
		r->oom = true;
	} else {
		hs_status st = hs_rules_load(path, diags, owned);
		if (st != HS_OK) {
			hs_rpt_say(r, HS_MSG_WARN, "%s cannot be used: %s", path, hs_strerror(st));
			*owned = NULL;
		}
	}
	free(tried);
	*diags_out = diags; /* the rules' positions point into it */
	free(r->rules_path);
	r->rules_path = NULL;
	if (!*owned) {
		size_t l = strlen(r->rules_note);
		snprintf(r->rules_note + l, sizeof r->rules_note - l,
			 "no rules could be loaded: no stories, and no catalog alert tags (hangs, I/O errors and "
			 "disconnects are recognised only by their tags)");
		free(path);
		return NULL;
	}
	r->rules_path = path;
	return *owned;
}

hs_status hs_report_build(const hs_report_opts *o, hs_report **out)
{
	*out = NULL;
	if (!o || !o->input)
		return HS_EINVAL;
	hs_report *r = calloc(1, sizeof *r);
	if (!r)
		return HS_ENOMEM;
	r->opts = *o;
	snprintf(r->generator, sizeof r->generator, "%s", o->generator ? o->generator : "hindsight report");
	r->input = hs_rpt_strdup(r, o->input);
	r->files = hs_rpt_calloc(r, HS_REPORT_MAX_FILES, sizeof *r->files);
	if (r->oom) {
		hs_report_free(r);
		return HS_ENOMEM;
	}
	hs_status st = hs_rpt_input_resolve(r);
	if (st != HS_OK) {
		hs_report_free(r);
		return st;
	}
	hs_ruleset *owned = NULL;
	hs_diags *diags = NULL;
	const hs_ruleset *rules = load_rules(r, &owned, &diags);
	for (size_t i = 0; i < r->n_files; i++) {
		hs_rpt_file *f = &r->files[i];
		if (!is_file(f->path)) {
			f->first_ns = UINT64_MAX;
			hs_rpt_file_problem(r, f, f->name, " is missing: nothing of this session can be shown");
			r->damaged = true;
		} else if (f->etl) {
			hs_rpt_walk_etl(r, i, rules);
		} else {
			hs_rpt_walk_tracedat(r, i, rules);
		}
	}
	hs_rpt_settle(r);
	hs_rpt_find(r);
	hs_rpt_thread_build(r);
	hs_rpt_why_build(r, rules);
	hs_rpt_signature_build(r, rules);
	/* the regions files are named before rendering: the report names them */
	for (size_t i = 0; i < r->n_files && r->n_regions < sizeof r->regions / sizeof r->regions[0]; i++)
		if (r->files[i].etl && r->files[i].opened)
			hs_rpt_regions_name(r->files[i].name, r->regions[r->n_regions++], sizeof r->regions[0]);
	/* the events' stories and alert tags point into the rules: they live as long as the report */
	r->owned_rules = owned;
	r->owned_diags = diags;
	if (r->oom) {
		hs_rpt_say(r, HS_MSG_ERROR, "out of memory reading %s", r->input);
		hs_report_free(r);
		return HS_ENOMEM;
	}
	*out = r;
	return HS_OK;
}

hs_status hs_report_render(const hs_report *r, hs_report_format fmt, hs_strbuf *sb)
{
	switch (fmt) {
	case HS_REPORT_TEXT: hs_rpt_render_text(r, sb); break;
	case HS_REPORT_JSON: hs_rpt_render_json(r, sb); break;
	case HS_REPORT_HTML: hs_rpt_render_html(r, sb); break;
	default: return HS_EINVAL;
	}
	return sb->oom ? HS_ENOMEM : HS_OK;
}

hs_status hs_report_write(hs_report *r)
{
	return hs_rpt_write(r);
}

const char *hs_report_outdir(const hs_report *r)
{
	return r->outdir ? r->outdir : "";
}

const char *hs_report_verdict(const hs_report *r, int line)
{
	return line == 0 || line == 1 ? r->verdict[line] : "";
}

bool hs_report_lead(const hs_report *r, const char **kind, int *pid, const char **comm)
{
	if (!r->n_findings)
		return false;
	const hs_rpt_finding *f = &r->findings[0];
	*kind = f->kind;
	*pid = f->pid;
	*comm = "";
	for (size_t i = 0; i < f->n_ev && f->pid >= 0 && !(*comm)[0]; i++)
		if (r->events[f->ev[i]].pid == f->pid)
			*comm = r->events[f->ev[i]].comm;
	return true;
}

bool hs_report_damaged(const hs_report *r)
{
	return r->damaged;
}

uint64_t hs_report_events_not_kept(const hs_report *r)
{
	return r->events_not_kept;
}

void hs_report_free(hs_report *r)
{
	if (!r)
		return;
	hs_rpt_model_free(r);
	hs_rules_free(r->owned_rules);
	hs_diags_free(r->owned_diags);
	hs_cause_result_free(&r->why);
	hs_rules_free(r->causes_rules);
	hs_diags_free(r->causes_diags);
	if (r->tasks_arena)
		hs_arena_free(r->tasks_arena);
	free(r->tasks_arena);
	hs_diags_free(r->tasks_diags);
	free(r);
}
