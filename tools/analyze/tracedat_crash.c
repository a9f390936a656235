/* analyze/tracedat_crash.c: `analyze crash` on trace.dat: the linux whitelist's timeline, with signal deaths, OOM kills and exit codes decoded. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/event.h"
#include "hindsight/event_decode.h"
#include "hindsight/plan.h"

/*
 * Which events are key events is the rules' business (the linux section's
 * file-circular sessions, with their filters). What follows are facts of the
 * kernel's tracepoint formats (Linux signal numbering is event_decode.h's),
 * used only to decode events the whitelist already selected.
 */

/* What the timeline decodes, by tracepoint. */
typedef enum { DEC_NONE, DEC_SIGNAL_DELIVER, DEC_OOM_VICTIM, DEC_PROCESS_EXIT, DEC_EXIT_GROUP } decoder;

static decoder decoder_for(const char *system, const char *name)
{
	static const struct {
		const char *system, *name;
		decoder d;
	} table[] = {
		{"signal", "signal_deliver", DEC_SIGNAL_DELIVER},
		{"oom", "mark_victim", DEC_OOM_VICTIM},
		{"sched", "sched_process_exit", DEC_PROCESS_EXIT},
		{"syscalls", "sys_enter_exit_group", DEC_EXIT_GROUP},
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].system, system) == 0 && strcmp(table[i].name, name) == 0)
			return table[i].d;
	return DEC_NONE;
}

typedef struct {
	const char *system, *event, *story, *alert, *filter;
	hs_tracedat_filter *compiled; /* owned; NULL when no filter or it did not compile */
	decoder dec;
} wl_entry;

/* How each task ended, so its sched_process_exit can say so. A small direct-
 * mapped table: a collision only loses the annotation, never an event. */
enum { N_FATES = 4096 };
typedef struct {
	int pid;
	bool has_code, killed;
	int64_t code, sig;
} fate;

typedef struct {
	wl_entry *v;
	size_t n;
	const wl_entry **by_id; /* N ids: resolved on first sight; &none when not whitelisted */
	uint8_t *seen;
	hs_strbuf *out;
	hs_json *json;
	uint64_t shown, crashes, kills, oom_kills;
	uint64_t alerts[16];
	fate fates[N_FATES];
} crash_ctx;

enum { N_IDS = 65536 };
static const wl_entry none;

static void count_alert(crash_ctx *c, const char *alert)
{
	for (size_t i = 0; alert && hs_alert_names[i] && i < 16; i++)
		if (strcmp(hs_alert_names[i], alert) == 0)
			c->alerts[i]++;
}

static const wl_entry *lookup(crash_ctx *c, const hs_event *e)
{
	uint32_t id = e->id & (N_IDS - 1);
	if (!c->seen[id]) {
		c->seen[id] = 1;
		c->by_id[id] = &none;
		for (size_t i = 0; i < c->n; i++)
			if (strcmp(c->v[i].system, e->provider) == 0 && strcmp(c->v[i].event, e->name) == 0)
				c->by_id[id] = &c->v[i];
	}
	return c->by_id[id] == &none ? NULL : c->by_id[id];
}

static int on_record(const hs_tracedat_record *r, void *vctx)
{
	crash_ctx *c = vctx;
	hs_event e;
	hs_event_from_tracedat(r, &e);
	const wl_entry *w = lookup(c, &e);
	if (!w || (w->compiled && !hs_tracedat_filter_match(w->compiled, r)))
		return 0;
	c->shown++;
	count_alert(c, w->alert);
	char when[32], comm[64], sbuf[24], detail[256] = "";
	bool crash = false, flagged = false;
	analyze_format_clock_ns(e.time_ns, when, sizeof when);
	snprintf(comm, sizeof comm, "%s", e.comm ? e.comm : "?");
	fate *f = &c->fates[e.tid % N_FATES];
	int64_t sig = 0, handler = 0, pid = 0, code = 0, anon = 0, file = 0, shmem = 0;
	switch (w->dec) {
	case DEC_SIGNAL_DELIVER:
		if (!hs_event_field_int(&e, "sig", &sig) || !hs_event_field_int(&e, "sa_handler", &handler))
			break;
		/* sa_handler 0 is SIG_DFL: the kernel applies the default action now; a real-time signal's
		 * (34-64) terminates the process too (it was judged ignored here once, while the engine's report
		 * said killed) */
		hs_sig_action act = hs_linux_signal_action(sig);
		const char *sname = hs_linux_signal_name(sig, sbuf, sizeof sbuf);
		if (handler == 0 && (act == HS_SIGACT_CORE || act == HS_SIGACT_TERM)) {
			crash = act == HS_SIGACT_CORE;
			flagged = true;
			c->crashes += crash;
			c->kills += !crash;
			snprintf(detail, sizeof detail, "%s %s (pid %d) %s %s (default action: %s)", crash ? "CRASH:" : "KILLED:",
				 comm, (int)e.tid, crash ? "died of" : "was killed by", sname,
				 crash ? "terminate with core dump" : "terminate");
			*f = (fate){.pid = (int)e.tid, .killed = true, .sig = sig};
		} else {
			snprintf(detail, sizeof detail, "signal: %s delivered to %s (pid %d), %s", sname,
				 comm, (int)e.tid, handler == 0 ? "default action" : handler == 1 ? "ignored" : "its own handler runs");
		}
		break;
	case DEC_OOM_VICTIM: {
		char victim[64] = "?";
		hs_event_field_int(&e, "pid", &pid);
		hs_event_field_str(&e, "comm", victim, sizeof victim);
		hs_event_field_int(&e, "anon_rss", &anon);
		hs_event_field_int(&e, "file_rss", &file);
		hs_event_field_int(&e, "shmem_rss", &shmem);
		c->oom_kills++;
		flagged = true;
		snprintf(detail, sizeof detail,
			 "OOM KILL: %s (pid %" PRId64 ") chosen; rss anon %" PRId64 " kB, file %" PRId64 " kB, shmem %" PRId64 " kB",
			 victim, pid, anon, file, shmem);
		break;
	}
	case DEC_EXIT_GROUP:
		if (hs_event_field_int(&e, "error_code", &code)) {
			snprintf(detail, sizeof detail, "exit_group: %s (pid %d) exits with status %" PRId64, comm, (int)e.tid,
				 code & 0xff);
			*f = (fate){.pid = (int)e.tid, .has_code = true, .code = code & 0xff};
		}
		break;
	case DEC_PROCESS_EXIT: {
		char name[64];
		if (hs_event_field_str(&e, "comm", name, sizeof name))
			snprintf(comm, sizeof comm, "%s", name);
		hs_event_field_int(&e, "pid", &pid);
		if (f->pid == (int)pid && f->killed)
			snprintf(detail, sizeof detail, "exit: %s (pid %" PRId64 ") ended by %s", comm, pid,
				 hs_linux_signal_name(f->sig, sbuf, sizeof sbuf));
		else if (f->pid == (int)pid && f->has_code)
			snprintf(detail, sizeof detail, "exit: %s (pid %" PRId64 ") ended, status %" PRId64, comm, pid, f->code);
		else
			snprintf(detail, sizeof detail, "exit: %s (pid %" PRId64 ") ended (thread exit, or no exit_group seen)",
				 comm, pid);
		if (f->pid == (int)pid)
			f->pid = 0;
		break;
	}
	case DEC_NONE:
		break;
	}
	if (c->json) {
		hs_json *j = c->json;
		hs_json_obj_begin(j);
		hs_json_kstr(j, "time", when);
		hs_json_kuint(j, "ts_ns", e.time_ns);
		hs_json_kstr(j, "buffer", e.buffer);
		hs_json_kstr(j, "system", e.provider);
		hs_json_kstr(j, "event", e.name);
		hs_json_kuint(j, "cpu", e.cpu);
		hs_json_kuint(j, "pid", e.tid);
		hs_json_kstr(j, "comm", comm);
		hs_json_kstr(j, "story", w->story);
		hs_json_kstr(j, "alert", w->alert);
		if (detail[0])
			hs_json_kstr(j, "detail", detail);
		if (w->dec == DEC_SIGNAL_DELIVER) {
			hs_json_kstr(j, "signal", hs_linux_signal_name(sig, sbuf, sizeof sbuf));
			hs_json_kbool(j, "fatal", flagged);
			hs_json_kbool(j, "crash", crash);
		}
		hs_json_obj_end(j);
		return 0;
	}
	char what[96];
	snprintf(what, sizeof what, "%s/%s", e.provider, e.name);
	hs_sb_printf(c->out, "%s  %-34s cpu %-3" PRIu32 " pid %-7" PRIu32 " %-16s%s%s%s\n", when, what, e.cpu, e.tid,
		     comm, w->alert ? "  [" : "",
		     w->alert ? w->alert : "", w->alert ? "]" : "");
	if (detail[0])
		hs_sb_printf(c->out, "    %s\n", detail);
	if (w->story)
		hs_sb_printf(c->out, "    %s\n", w->story);
	return 0;
}

int analyze_crash_tracedat(const analyze_cmd *cmd, const analyze_trace *t, hs_strbuf *sb)
{
	const analyze_opts *o = cmd->o;
	const analyze_rules *rules = cmd->rules;
	const hs_plan *plan = cmd->plan;
	hs_tracedat *td = t->td;
	int rc = 0;
	crash_ctx *c = calloc(1, sizeof(*c));
	hs_json j;
	if (!c) {
		rc = HS_EXIT_USAGE;
		goto out;
	}
	/* The whitelist: the events (and filters) of the file-circular sessions. */
	size_t total = 0;
	for (size_t s = 0; s < plan->n_sessions; s++)
		if (plan->sessions[s].session->mode == HS_MODE_FILE_CIRCULAR)
			for (size_t p = 0; p < plan->sessions[s].n_providers; p++)
				total += plan->sessions[s].providers[p].n_events;
	c->v = calloc(total + 1, sizeof(*c->v));
	c->by_id = calloc(N_IDS, sizeof(*c->by_id));
	c->seen = calloc(N_IDS, 1);
	if (!c->v || !c->by_id || !c->seen) {
		rc = HS_EXIT_USAGE;
		goto out;
	}
	for (size_t s = 0; s < plan->n_sessions; s++) {
		if (plan->sessions[s].session->mode != HS_MODE_FILE_CIRCULAR)
			continue;
		for (size_t p = 0; p < plan->sessions[s].n_providers; p++) {
			const hs_plan_provider *pp = &plan->sessions[s].providers[p];
			const char *system = pp->provider->system ? pp->provider->system : pp->provider->name;
			for (size_t e = 0; e < pp->n_events; e++) {
				const hs_plan_event *pe = &pp->events[e];
				if (!pe->name)
					continue;
				wl_entry *w = &c->v[c->n++];
				*w = (wl_entry){system, pe->name, pe->story, pe->alert, pe->filter, NULL, decoder_for(system, pe->name)};
				/* Recorded with the same filter in the kernel, the file already passes
				 * it; applied again so other captures (a full ring) read the same. */
				if (pe->filter)
					hs_tracedat_filter_new(td, system, pe->name, pe->filter, &w->compiled);
			}
		}
	}
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	c->out = sb;
	if (o->json) {
		analyze_json_begin(&j, sb, o->file, "trace.dat");
		c->json = &j;
		hs_json_kstr(&j, "rules", rules->path);
		hs_json_kstr(&j, "clock", info->clock);
		hs_json_kuint(&j, "whitelisted_events", c->n);
		hs_json_key(&j, "timeline");
		hs_json_arr_begin(&j);
	} else {
		hs_sb_printf(sb, "key events of %s, oldest first (times: s of the %s clock; whitelist: %zu events from %s)\n\n",
			     o->file, info->clock[0] ? info->clock : "trace", c->n, rules->path);
	}
	hs_tracedat_foreach(td, on_record, c);
	if (o->json) {
		hs_json_arr_end(&j);
		hs_json_kuint(&j, "events", c->shown);
		hs_json_kuint(&j, "crashes", c->crashes);
		hs_json_kuint(&j, "kills", c->kills);
		hs_json_kuint(&j, "oom_kills", c->oom_kills);
		hs_json_key(&j, "alerts");
		hs_json_obj_begin(&j);
		for (size_t i = 0; hs_alert_names[i] && i < 16; i++)
			if (c->alerts[i])
				hs_json_kuint(&j, hs_alert_names[i], c->alerts[i]);
		hs_json_obj_end(&j);
		analyze_json_problem_texts(&j, hs_tracedat_problems(td));
		hs_json_obj_end(&j);
	} else {
		hs_sb_printf(sb, "\n%" PRIu64 " key event%s, %" PRIu64 " crash%s, %" PRIu64 " killed by signal, %" PRIu64
				  " OOM kill%s",
			     c->shown, c->shown == 1 ? "" : "s", c->crashes, c->crashes == 1 ? "" : "es", c->kills,
			     c->oom_kills, c->oom_kills == 1 ? "" : "s");
		const char *sep = "; alert tags: ";
		for (size_t i = 0; hs_alert_names[i] && i < 16; i++)
			if (c->alerts[i]) {
				hs_sb_printf(sb, "%s%" PRIu64 " %s", sep, c->alerts[i], hs_alert_names[i]);
				sep = ", ";
			}
		hs_sb_putc(sb, '\n');
	}
out:
	if (c) {
		for (size_t i = 0; i < c->n; i++)
			hs_tracedat_filter_free(c->v[i].compiled);
		free(c->v);
		free(c->by_id);
		free(c->seen);
		free(c);
	}
	return rc;
}
