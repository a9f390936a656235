/* analyze/crash.c: `analyze crash`: the timeline of the key events the rules whitelist, with stories and decoded exits. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/plan.h"

typedef struct {
	const hs_guid *guid;
	int id;
	const char *provider, *event, *story, *alert;
	bool exit; /* the catalog says it means process-exit: decode its exit code */
} wl_entry;

typedef struct {
	wl_entry *v;
	size_t n;
	const analyze_rules *rules;
	const hs_etl *etl;
	hs_strbuf *out;
	hs_json *json; /* NULL for text */
	uint64_t shown, crashes;
	uint64_t alerts[16]; /* per hs_alert_names entry */
} crash_ctx;

static void count_alert(crash_ctx *c, const char *alert)
{
	for (size_t i = 0; alert && hs_alert_names[i] && i < 16; i++)
		if (strcmp(hs_alert_names[i], alert) == 0)
			c->alerts[i]++;
}

static const wl_entry *find(const crash_ctx *c, const hs_etl_record *r)
{
	if (r->kind != HS_ETL_EVENT)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].id == r->id && memcmp(c->v[i].guid, &r->guid, sizeof r->guid) == 0)
			return &c->v[i];
	return NULL;
}

static int on_record(const hs_etl_record *r, void *vctx)
{
	crash_ctx *c = vctx;
	analyze_progress(c->etl, r);
	const wl_entry *w = find(c, r);
	if (!w)
		return 0;
	c->shown++;
	char when[40];
	hs_etl_filetime_text(r->filetime, when, sizeof when);
	hs_etl_process_stop x;
	bool is_exit = w->exit && hs_etl_decode_process_stop(r, &x);
	bool crashed = is_exit && x.crashed;
	c->crashes += crashed;
	count_alert(c, w->alert);
	const char *sname = is_exit ? hs_ntstatus_name(x.exit_code) : NULL;
	if (c->json) {
		hs_json *j = c->json;
		hs_json_obj_begin(j);
		hs_json_kstr(j, "time", when);
		hs_json_kstr(j, "provider", w->provider);
		hs_json_kint(j, "id", r->id);
		hs_json_kstr(j, "event", w->event);
		hs_json_kuint(j, "pid", r->pid);
		hs_json_kuint(j, "tid", r->tid);
		hs_json_kstr(j, "story", w->story);
		hs_json_kstr(j, "alert", w->alert);
		if (is_exit) {
			hs_json_key(j, "exit");
			hs_json_obj_begin(j);
			hs_json_kuint(j, "pid", x.pid);
			hs_json_kstr(j, "image", x.image_name);
			hs_json_kuint(j, "code", x.exit_code);
			hs_json_kstr(j, "status", sname);
			hs_json_kbool(j, "crash", crashed);
			hs_json_obj_end(j);
		}
		hs_json_obj_end(j);
		return 0;
	}
	hs_sb_printf(c->out, "%s  %-34s %-28s pid %-6" PRIu32 " tid %-6" PRIu32 "%s%s%s\n", when, w->provider,
		     w->event ? w->event : "?", r->pid, r->tid, w->alert ? "  [" : "", w->alert ? w->alert : "",
		     w->alert ? "]" : "");
	if (is_exit)
		hs_sb_printf(c->out, "    %s %s exited with 0x%08" PRIx32 "%s%s%s\n", crashed ? "CRASH:" : "exit:",
			     x.image_name[0] ? x.image_name : "process", x.exit_code, sname ? " " : "",
			     sname ? sname : "",
			     x.exit_code == 0xC000013A ? " (Ctrl+C or console closed)" : "");
	if (w->story)
		hs_sb_printf(c->out, "    %s\n", w->story);
	return 0;
}

/* The .etl's timeline into sb (analyze_cmd_fn). */
static int crash_etl(const analyze_cmd *cmd, const analyze_trace *t, hs_strbuf *sb)
{
	const analyze_opts *o = cmd->o;
	const analyze_rules *rules = cmd->rules;
	const hs_plan *plan = cmd->plan;
	hs_etl *etl = t->etl;
	int rc = 0;
	crash_ctx c = {.rules = rules};
	hs_json j;
	size_t total = 0;
	for (size_t s = 0; s < plan->n_sessions; s++)
		for (size_t p = 0; p < plan->sessions[s].n_providers; p++)
			total += plan->sessions[s].providers[p].n_events;
	c.v = calloc(total + 1, sizeof(*c.v));
	if (!c.v) {
		rc = HS_EXIT_USAGE;
		goto out;
	}
	for (size_t s = 0; s < plan->n_sessions; s++)
		for (size_t p = 0; p < plan->sessions[s].n_providers; p++) {
			const hs_plan_provider *pp = &plan->sessions[s].providers[p];
			for (size_t e = 0; e < pp->n_events; e++) {
				const hs_cat_event *ce = hs_provider_find_event(pp->provider, pp->events[e].id, NULL);
				c.v[c.n++] = (wl_entry){&pp->provider->guid, pp->events[e].id, pp->provider->name,
							pp->events[e].name, pp->events[e].story, pp->events[e].alert,
							ce && ce->means == HS_MEANS_PROCESS_EXIT};
			}
		}
	c.out = sb;
	c.etl = etl;
	if (o->json) {
		analyze_json_begin(&j, sb, o->file, NULL);
		c.json = &j;
		hs_json_kstr(&j, "rules", rules->path);
		hs_json_kuint(&j, "whitelisted_ids", c.n);
		hs_json_key(&j, "timeline");
		hs_json_arr_begin(&j);
	} else {
		hs_sb_printf(sb, "key events of %s, oldest first (whitelist: %zu ids from %s)\n\n", o->file, c.n,
			     rules->path);
	}
	hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_record, &c);
	analyze_progress_done();
	if (o->json) {
		hs_json_arr_end(&j);
		hs_json_kuint(&j, "events", c.shown);
		hs_json_kuint(&j, "crashes", c.crashes);
		hs_json_key(&j, "alerts");
		hs_json_obj_begin(&j);
		for (size_t i = 0; hs_alert_names[i] && i < 16; i++)
			if (c.alerts[i])
				hs_json_kuint(&j, hs_alert_names[i], c.alerts[i]);
		hs_json_obj_end(&j);
		analyze_json_problems(&j, hs_etl_problems(etl));
		hs_json_obj_end(&j);
	} else {
		hs_sb_printf(sb, "\n%" PRIu64 " key event%s, %" PRIu64 " crash%s", c.shown, c.shown == 1 ? "" : "s",
			     c.crashes, c.crashes == 1 ? "" : "es");
		for (size_t i = 0; hs_alert_names[i] && i < 16; i++)
			if (c.alerts[i])
				hs_sb_printf(sb, ", %" PRIu64 " %s", c.alerts[i], hs_alert_names[i]);
		hs_sb_putc(sb, '\n');
	}
out:
	free(c.v);
	return rc;
}

static int crash(const analyze_cmd *c, const analyze_trace *t, hs_strbuf *sb)
{
	return t->td ? analyze_crash_tracedat(c, t, sb) : crash_etl(c, t, sb);
}

int analyze_crash(const analyze_opts *o)
{
	/* A trace.dat's key events are the linux section's whitelists, an .etl's the windows section's. */
	bool tracedat = hs_tracedat_sniff(o->file);
	analyze_rules rules;
	hs_plan *plan;
	int rc = analyze_load_plan(o, tracedat ? HS_PLATFORM_LINUX : HS_PLATFORM_WINDOWS, &rules, &plan);
	if (rc)
		return rc;
	rc = analyze_trace_run(&(analyze_cmd){o, &rules, plan}, crash);
	hs_plan_free(plan);
	analyze_free_rules(&rules);
	return rc;
}
