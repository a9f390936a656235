/* analyze/crash.c: `analyze crash`: the timeline of the key events the rules whitelist, with stories and decoded exits. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "etl/etl_format.h"
#include "hindsight/plan.h"

/* Microsoft-Windows-Kernel-Process: the manifest payload of ProcessStop is a
 * format fact we decode, like the kernel's classic events. Which events the
 * report shows is still the rules' whitelist. */
static const hs_guid kernel_process_guid = {0x22FB2CD6, 0x0E7B, 0x422B, {0xA0, 0xC7, 0x2F, 0xAD, 0x1F, 0xD0, 0xE7, 0x16}};
enum { KP_PROCESS_STOP = 2 };

/* NTSTATUS values a crash report names; anything else prints as hex. */
static const char *ntstatus_name(uint32_t s)
{
	switch (s) {
	case 0xC0000005: return "STATUS_ACCESS_VIOLATION";
	case 0xC0000006: return "STATUS_IN_PAGE_ERROR";
	case 0xC000001D: return "STATUS_ILLEGAL_INSTRUCTION";
	case 0xC0000025: return "STATUS_NONCONTINUABLE_EXCEPTION";
	case 0xC000008C: return "STATUS_ARRAY_BOUNDS_EXCEEDED";
	case 0xC0000094: return "STATUS_INTEGER_DIVIDE_BY_ZERO";
	case 0xC0000095: return "STATUS_INTEGER_OVERFLOW";
	case 0xC00000FD: return "STATUS_STACK_OVERFLOW";
	case 0xC0000135: return "STATUS_DLL_NOT_FOUND";
	case 0xC0000142: return "STATUS_DLL_INIT_FAILED";
	case 0xC000013A: return "STATUS_CONTROL_C_EXIT";
	case 0xC0000374: return "STATUS_HEAP_CORRUPTION";
	case 0xC0000409: return "STATUS_STACK_BUFFER_OVERRUN (fail-fast)";
	case 0xC0000602: return "STATUS_FAIL_FAST_EXCEPTION";
	case 0x80000003: return "STATUS_BREAKPOINT";
	case 0x40010004: return "DBG_TERMINATE_PROCESS";
	}
	return NULL;
}

typedef struct {
	const hs_guid *guid;
	int id;
	const char *provider, *event, *story, *alert;
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

/* ProcessStop v0/v1: ProcessID u32, CreateTime, ExitTime (FILETIME), ExitCode
 * u32, ... ImageName (ANSI) last. Payload fields are packed, not aligned. */
static bool decode_process_stop(const hs_etl_record *r, uint32_t *pid, uint32_t *code, char *image, size_t cap)
{
	if (r->version > 1 || r->payload_len < 24)
		return false;
	*pid = hs_le32(r->payload);
	*code = hs_le32(r->payload + 20);
	size_t name_off = r->version == 0 ? 48 : 76;
	image[0] = '\0';
	if (r->payload_len > name_off) {
		size_t n = strnlen((const char *)r->payload + name_off, r->payload_len - name_off);
		snprintf(image, cap, "%.*s", (int)(n < cap ? n : cap - 1), (const char *)r->payload + name_off);
	}
	return true;
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
	analyze_format_filetime(r->filetime, when, sizeof when);
	uint32_t pid = r->pid, code = 0;
	char image[128] = "";
	bool is_exit = memcmp(&r->guid, &kernel_process_guid, sizeof r->guid) == 0 && r->id == KP_PROCESS_STOP &&
		       decode_process_stop(r, &pid, &code, image, sizeof image);
	/* NTSTATUS severity 3 (0xC...) is an error status: the process died of it. */
	bool crashed = is_exit && (code >> 30) == 3;
	c->crashes += crashed;
	count_alert(c, w->alert);
	const char *sname = is_exit ? ntstatus_name(code) : NULL;
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
			hs_json_kuint(j, "pid", pid);
			hs_json_kstr(j, "image", image);
			hs_json_kuint(j, "code", code);
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
			     image[0] ? image : "process", code, sname ? " " : "", sname ? sname : "",
			     code == 0xC000013A ? " (Ctrl+C or console closed)" : "");
	if (w->story)
		hs_sb_printf(c->out, "    %s\n", w->story);
	return 0;
}

int analyze_crash(const analyze_opts *o)
{
	if (hs_tracedat_sniff(o->file))
		return analyze_crash_tracedat(o);
	analyze_rules rules;
	int rc = analyze_load_rules(o, &rules);
	if (rc)
		return rc;
	hs_plan *plan = NULL;
	hs_etl *etl = NULL;
	crash_ctx c = {.rules = &rules};
	hs_strbuf sb = {0};
	hs_json j;
	if (hs_plan_build(rules.rules, HS_PLATFORM_WINDOWS, NULL, &plan) != HS_OK) {
		fprintf(stderr, "analyze: %s has no windows section, so nothing says which events are key events\n",
			rules.path);
		rc = ANALYZE_EXIT_USAGE;
		goto out;
	}
	size_t total = 0;
	for (size_t s = 0; s < plan->n_sessions; s++)
		for (size_t p = 0; p < plan->sessions[s].n_providers; p++)
			total += plan->sessions[s].providers[p].n_events;
	c.v = calloc(total + 1, sizeof(*c.v));
	if (!c.v) {
		rc = ANALYZE_EXIT_USAGE;
		goto out;
	}
	for (size_t s = 0; s < plan->n_sessions; s++)
		for (size_t p = 0; p < plan->sessions[s].n_providers; p++) {
			const hs_plan_provider *pp = &plan->sessions[s].providers[p];
			for (size_t e = 0; e < pp->n_events; e++)
				c.v[c.n++] = (wl_entry){&pp->provider->guid, pp->events[e].id, pp->provider->name,
							pp->events[e].name, pp->events[e].story, pp->events[e].alert};
		}
	rc = analyze_open_etl(o->file, &etl);
	if (rc)
		goto out;
	c.out = &sb;
	c.etl = etl;
	if (o->json) {
		hs_json_init(&j, &sb);
		c.json = &j;
		hs_json_obj_begin(&j);
		hs_json_kstr(&j, "file", o->file);
		hs_json_kstr(&j, "rules", rules.path);
		hs_json_kuint(&j, "whitelisted_ids", c.n);
		hs_json_key(&j, "timeline");
		hs_json_arr_begin(&j);
	} else {
		hs_sb_printf(&sb, "key events of %s, oldest first (whitelist: %zu ids from %s)\n\n", o->file, c.n,
			     rules.path);
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
		analyze_json_problems(&j, etl);
		hs_json_obj_end(&j);
	} else {
		hs_sb_printf(&sb, "\n%" PRIu64 " key event%s, %" PRIu64 " crash%s", c.shown, c.shown == 1 ? "" : "s",
			     c.crashes, c.crashes == 1 ? "" : "es");
		for (size_t i = 0; hs_alert_names[i] && i < 16; i++)
			if (c.alerts[i])
				hs_sb_printf(&sb, ", %" PRIu64 " %s", c.alerts[i], hs_alert_names[i]);
		hs_sb_putc(&sb, '\n');
	}
	if (hs_sb_write_free(&sb, stdout) != HS_OK)
		rc = ANALYZE_EXIT_USAGE;
	if (!rc)
		rc = analyze_report_problems(etl);
out:
	hs_sb_free(&sb);
	free(c.v);
	hs_etl_close(etl);
	hs_plan_free(plan);
	analyze_free_rules(&rules);
	return rc;
}
