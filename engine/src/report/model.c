/* report/model.c: the helpers every part of the report layer shares: time formats, findings, notes, kept events, files, freeing. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/plan.h"
#include "hindsight/problem.h"
#include "hindsight/tracedat.h"
#include "hindsight/vec.h"
#include "report/model.h"

hs_ruleset *hs_rpt_shipped_rules(hs_report *r, const char *name, hs_diags **diags)
{
	*diags = NULL;
	char *tried = NULL, *path = hs_rules_resolve(name, r->opts.argv0, &tried);
	free(tried);
	if (!path)
		return NULL;
	if (!(*diags = hs_diags_new())) {
		free(path);
		r->oom = true;
		return NULL;
	}
	hs_ruleset *rs = NULL;
	hs_status st = hs_rules_load(path, *diags, &rs);
	free(path);
	if (st != HS_OK) {
		hs_rules_free(rs);
		return NULL;
	}
	return rs;
}

void hs_rpt_fmt_ts(uint64_t ns, char *buf, size_t cap)
{
	snprintf(buf, cap, "%" PRIu64 ".%06" PRIu64, ns / 1000000000u, (ns % 1000000000u) / 1000u);
}

void hs_rpt_fmt_rel(const hs_report *r, uint64_t ns, char *buf, size_t cap)
{
	double d = ((double)ns - (double)r->moment) / 1e9;
	if (d > -1 && d < 1)
		snprintf(buf, cap, "%+9.3f ms", d * 1e3); /* an incident's own events are microseconds apart */
	else
		snprintf(buf, cap, "%+9.3f s ", d);
}

void hs_rpt_ms_after(uint64_t a, uint64_t b, char *buf, size_t cap)
{
	double ms = ((double)b - (double)a) / 1e6;
	if (ms < 1)
		snprintf(buf, cap, "%.0f us", ms * 1000);
	else
		snprintf(buf, cap, "%.0f ms", ms);
}

bool hs_rpt_text(char *buf, size_t cap, const char *fmt, ...)
{
	if (!cap)
		return false;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < cap)
		return true;
	if (n < 0)
		buf[0] = '\0';
	else if (cap > 4) {
		size_t end = cap - 4; /* room for "..." and the NUL */
		while (end > 0 && ((unsigned char)buf[end] & 0xC0) == 0x80)
			end--; /* not inside a UTF-8 character */
		memcpy(buf + end, "...", 4);
	}
	return false;
}

char *hs_rpt_strdup(hs_report *r, const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		r->oom = true;
	return d;
}

void *hs_rpt_calloc(hs_report *r, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		r->oom = true;
	return p;
}

void hs_rpt_say(const hs_report *r, hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_msg_vsay(r->opts.msg, level, "report", fmt, ap);
	va_end(ap);
}

/* Appends one formatted line to a growing list; a line that cannot be kept (OOM) is dropped and said in r->oom. */
static void push_note(hs_report *r, char ***notes, size_t *n, const char *fmt, va_list ap) HS_PRINTF_FMT(4, 0);
static void push_note(hs_report *r, char ***notes, size_t *n, const char *fmt, va_list ap)
{
	char **v = realloc(*notes, (*n + 1) * sizeof *v);
	if (!v) {
		r->oom = true;
		return;
	}
	*notes = v;
	hs_strbuf sb = {0};
	hs_sb_vprintf(&sb, fmt, ap);
	char *s = hs_sb_take(&sb);
	if (!s) {
		r->oom = true;
		return;
	}
	v[(*n)++] = s;
}

hs_rpt_finding *hs_rpt_new_finding(hs_report *r, const char *kind, int impact, uint64_t ts, int pid)
{
	hs_rpt_finding *v = realloc(r->findings, (r->n_findings + 1) * sizeof *v);
	if (!v) {
		r->oom = true;
		return NULL;
	}
	r->findings = v;
	hs_rpt_finding *f = &v[r->n_findings++];
	memset(f, 0, sizeof *f);
	f->kind = kind;
	f->impact = impact;
	f->ts = ts;
	f->pid = pid;
	return f;
}

void hs_rpt_add_ev(hs_report *r, hs_rpt_finding *f, size_t i)
{
	if (f->n_ev >= 40)
		return;
	for (size_t k = 0; k < f->n_ev; k++)
		if (f->ev[k] == i)
			return;
	size_t *v = realloc(f->ev, (f->n_ev + 1) * sizeof *v);
	if (!v) {
		r->oom = true;
		return;
	}
	f->ev = v;
	v[f->n_ev++] = i;
}

void hs_rpt_add_note(hs_report *r, hs_rpt_finding *f, const char *fmt, ...)
{
	if (f->n_notes >= 20)
		return;
	va_list ap;
	va_start(ap, fmt);
	push_note(r, &f->notes, &f->n_notes, fmt, ap);
	va_end(ap);
}

void hs_rpt_file_unreadable(hs_report *r, hs_rpt_file *f, const hs_problem *first, hs_status st)
{
	char text[HS_PROBLEM_TEXT_MAX] = "";
	if (first)
		hs_problem_format(first, text, sizeof text);
	hs_rpt_file_problem(r, f, "cannot be read: ", text[0] ? text : hs_strerror(st));
	r->damaged = true;
}

void hs_rpt_file_problem(hs_report *r, hs_rpt_file *f, const char *prefix, const char *text)
{
	char **v = realloc(f->problems, (f->n_problems + 1) * sizeof *v);
	if (!v) {
		r->oom = true;
		return;
	}
	f->problems = v;
	hs_strbuf sb = {0};
	hs_sb_append(&sb, prefix);
	hs_sb_append(&sb, text);
	char *s = hs_sb_take(&sb);
	if (!s) {
		r->oom = true;
		return;
	}
	v[f->n_problems++] = s;
}

void hs_rpt_file_note(hs_report *r, hs_rpt_file *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	push_note(r, &f->notes, &f->n_notes, fmt, ap);
	va_end(ap);
}

void hs_rpt_run_note(hs_report *r, const char *fmt, ...)
{
	if (r->n_run_notes >= sizeof r->run_notes / sizeof r->run_notes[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->run_notes[r->n_run_notes++], sizeof r->run_notes[0], fmt, ap);
	va_end(ap);
}

hs_rpt_event *hs_rpt_event_slot(hs_report *r)
{
	if (r->n_events >= HS_REPORT_MAX_KEPT) {
		r->events_not_kept++;
		return NULL;
	}
	hs_rpt_event *v = hs_array_grow(r->events, sizeof *v, r->n_events, &r->cap_events, 256);
	if (!v) {
		r->oom = true;
		r->events_not_kept++;
		return NULL;
	}
	r->events = v;
	hs_rpt_event *e = &r->events[r->n_events];
	memset(e, 0, sizeof *e);
	return e;
}

void hs_rpt_exec_seen(hs_report *r, uint64_t ts)
{
	if (r->execs.len >= HS_REPORT_MAX_EXECS)
		return;
	r->execs.elem = sizeof(uint64_t); /* a zeroed report's vec is empty: it only lacks its element size */
	uint64_t *v = hs_vec_push(&r->execs);
	if (!v) {
		r->oom = true;
		return;
	}
	*v = ts;
}

void hs_rpt_rename_seen(hs_report *r, uint64_t ts, int pid, const char *was, const char *now)
{
	if (r->renames.len >= HS_REPORT_MAX_RENAMES)
		return;
	r->renames.elem = sizeof(hs_rpt_rename);
	hs_rpt_rename *n = hs_vec_push(&r->renames);
	if (!n) {
		r->oom = true;
		return;
	}
	n->ts = ts;
	n->pid = pid;
	snprintf(n->was, sizeof n->was, "%s", was);
	snprintf(n->now, sizeof n->now, "%s", now);
}

hs_rpt_file *hs_rpt_add_file(hs_report *r, const char *path, const char *name)
{
	if (r->n_files >= HS_REPORT_MAX_FILES)
		return NULL;
	hs_rpt_file *f = &r->files[r->n_files++];
	memset(f, 0, sizeof *f);
	f->path = hs_rpt_strdup(r, path);
	f->name = hs_rpt_strdup(r, name);
	f->etl = hs_rpt_is_etl(path);
	f->wrapped = -1;
	f->overwritten = f->chunks_dropped = f->events_lost = f->bytes_lost_disk = f->ring_dropped = -1;
	return f;
}

bool hs_rpt_is_etl(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	/* a trace.dat named .etl is read as what it is */
	return n > 4 && (strcmp(path + n - 4, ".etl") == 0 || strcmp(path + n - 4, ".ETL") == 0) &&
	       !hs_tracedat_sniff(path);
}

const char *hs_rpt_comm_at(const hs_report *r, int pid, uint64_t ts)
{
	const char *before = NULL, *after = NULL;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->pid != pid || !e->comm[0])
			continue;
		if (e->ts <= ts)
			before = e->comm;
		else if (!after)
			after = e->comm;
	}
	return before ? before : after;
}

const char *hs_rpt_who(const hs_rpt_event *e)
{
	return e->subject[0] ? e->subject : e->comm;
}

/* An array of n strings, each and itself. */
static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void hs_rpt_model_free(hs_report *r)
{
	for (size_t i = 0; r->files && i < r->n_files; i++) {
		hs_rpt_file *f = &r->files[i];
		free(f->path);
		free(f->name);
		free(f->session);
		free(f->cpu_first);
		free(f->cpu_last);
		free(f->cpu_n);
		free(f->cpu_missed);
		free(f->holes);
		free_strs(f->problems, f->n_problems);
		free_strs(f->notes, f->n_notes);
	}
	for (size_t k = 0; k < r->n_findings; k++) {
		free(r->findings[k].ev);
		free_strs(r->findings[k].notes, r->findings[k].n_notes);
	}
	free(r->findings);
	free(r->files);
	free(r->events);
	hs_vec_free(&r->execs);
	hs_vec_free(&r->renames);
	free(r->input);
	free(r->outdir);
	free(r->rules_path);
}
