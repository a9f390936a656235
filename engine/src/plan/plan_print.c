/* plan/plan_print.c: renders a plan as text for people and as JSON for tools and golden tests. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/plan.h"
#include "hindsight/rundoc.h"
#include "hindsight/winbuild.h"
#include "plan/etw_defs.h"
#include "util/json.h"
#include "util/strbuf.h"

static const char *level_name(int level)
{
	static const char *const names[] = {"logalways", "critical", "error", "warning", "information", "verbose"};
	return level >= 0 && level <= 5 ? names[level] : "custom";
}

static void log_file_mode_names(uint32_t m, hs_strbuf *sb)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} bits[] = {
		{HS_EVENT_TRACE_FILE_MODE_SEQUENTIAL, "EVENT_TRACE_FILE_MODE_SEQUENTIAL"},
		{HS_EVENT_TRACE_FILE_MODE_CIRCULAR, "EVENT_TRACE_FILE_MODE_CIRCULAR"},
		{HS_EVENT_TRACE_BUFFERING_MODE, "EVENT_TRACE_BUFFERING_MODE"},
		{HS_EVENT_TRACE_SYSTEM_LOGGER_MODE, "EVENT_TRACE_SYSTEM_LOGGER_MODE"},
		{HS_EVENT_TRACE_REAL_TIME_MODE, "EVENT_TRACE_REAL_TIME_MODE"},
	};
	bool first = true;
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if (m & bits[i].bit) {
			hs_sb_printf(sb, "%s%s", first ? "" : " | ", bits[i].name);
			first = false;
		}
}

/* Keyword names whose masks make up `mask`, for people reading the plan. */
static void keyword_names(const hs_provider *p, uint64_t mask, hs_strbuf *sb)
{
	bool first = true;
	for (size_t i = 0; i < p->n_keywords; i++)
		if (p->keywords[i].mask && (p->keywords[i].mask & mask) == p->keywords[i].mask) {
			hs_sb_printf(sb, "%s%s", first ? "" : "|", p->keywords[i].name);
			first = false;
		}
}

const char *hs_etw_clock_name(uint32_t c, char *buf, size_t cap)
{
	switch (c) {
	case HS_ETW_CLOCK_QPC: return "QPC";
	case HS_ETW_CLOCK_SYSTEM: return "system time";
	case HS_ETW_CLOCK_CYCLE: return "CPU cycle counter";
	}
	snprintf(buf, cap, "clock %u", c);
	return buf;
}

static void mb(hs_strbuf *sb, uint64_t bytes)
{
	if (bytes % (1024u * 1024u) == 0)
		hs_sb_printf(sb, "%" PRIu64 " MiB", bytes / (1024u * 1024u));
	else
		hs_sb_printf(sb, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
}

static void text_event(hs_strbuf *sb, const hs_plan_event *e, bool win)
{
	if (win)
		hs_sb_printf(sb, "      %5d  %-32s", e->id, e->name ? e->name : "?");
	else
		hs_sb_printf(sb, "      %-36s", e->name ? e->name : "?");
	hs_sb_printf(sb, " %s%s%s", e->story ? e->story : "(no story)", e->name_guessed ? " [name unverified]" : "",
		     e->story_from_evidence ? " [generated evidence, no story yet]" : "");
	if (e->alert)
		hs_sb_printf(sb, " [alert: %s]", e->alert);
	if (e->optional)
		hs_sb_printf(sb, " [optional]");
	hs_sb_putc(sb, '\n');
	if (e->filter)
		hs_sb_printf(sb, "             filter: %s\n", e->filter);
}

static void text_windows_session(hs_strbuf *sb, const hs_plan_session *ps)
{
	const hs_session *s = ps->session;
	const hs_plan_etw *e = &ps->etw;
	hs_sb_printf(sb, "  StartTraceW(\"%s\", EVENT_TRACE_PROPERTIES):\n", s->logger_name);
	hs_sb_printf(sb, "    Wnode.BufferSize     %u (%u + two 1024-WCHAR names)\n", e->wnode_buffer_size,
		  HS_SIZEOF_EVENT_TRACE_PROPERTIES);
	hs_sb_printf(sb, "    Wnode.Flags          0x%08x WNODE_FLAG_TRACED_GUID\n", e->wnode_flags);
	char cb[24];
	hs_sb_printf(sb, "    Wnode.ClientContext  %u (%s)\n", e->client_context,
		     hs_etw_clock_name(e->client_context, cb, sizeof cb));
	hs_sb_printf(sb, "    BufferSize           %u KB\n", e->buffer_size_kb);
	hs_sb_printf(sb, "    MinimumBuffers       %u\n", e->min_buffers);
	hs_sb_printf(sb, "    MaximumBuffers       %u\n", e->max_buffers);
	hs_sb_printf(sb, "    MaximumFileSize      %u MB%s\n", e->max_file_mb, e->max_file_mb ? "" : " (no limit)");
	hs_sb_printf(sb, "    LogFileMode          0x%08x ", e->log_file_mode);
	log_file_mode_names(e->log_file_mode, sb);
	hs_sb_putc(sb, '\n');
	hs_sb_printf(sb, "    FlushTimer           %u s", e->flush_timer);
	/* Real time with a file: ETW writes at least one buffer a second, even
	 * when idle (Logging Mode Constants), which bounds the file's history. */
	if ((e->log_file_mode & HS_EVENT_TRACE_REAL_TIME_MODE) && e->buffer_size_kb && e->flush_timer)
		hs_sb_printf(sb,
			     " (real time: the engine's consumer sees %s within about a second; ETW "
			     "then writes at least one %u KB buffer a second, so the %u MB file holds at most %.1f h, "
			     "less when busy)",
			     e->realtime_for_view ? "the key events for the live view and the tap"
						  : "the triggers' events",
			     e->buffer_size_kb, e->max_file_mb,
			     (double)e->max_file_mb * 1024.0 / e->buffer_size_kb * e->flush_timer / 3600.0);
	hs_sb_putc(sb, '\n');
	hs_sb_printf(sb, "    EnableFlags          0x%08x\n", e->enable_flags);
	hs_sb_printf(sb, "    LoggerNameOffset     %u\n", e->logger_name_offset);
	hs_sb_printf(sb, "    LogFileNameOffset    %u%s\n", e->log_file_name_offset,
		  s->mode == HS_MODE_BUFFERING ? " (no file; FLUSH names one after the session name)" : "");
	if (e->sample_interval_100ns)
		hs_sb_printf(sb,
			  "  TraceSetInformation(TraceSampledProfileIntervalInfo): %u x 100 ns (%.0f Hz); previous value restored at stop\n",
			  e->sample_interval_100ns, 1e7 / e->sample_interval_100ns);
	hs_sb_append(sb, "  kernel memory: up to ");
	mb(sb, ps->memory_bytes);
	hs_sb_printf(sb, " (%u x %u KB buffers, nonpaged)\n", e->max_buffers, e->buffer_size_kb);
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		const hs_provider *p = pp->provider;
		char g[37];
		hs_guid_format(&p->guid, g);
		hs_sb_printf(sb, "  EnableTraceEx2(%s {%s}, EVENT_CONTROL_CODE_ENABLE_PROVIDER):\n", p->name, g);
		hs_sb_printf(sb, "    Level %u (%s)  MatchAnyKeyword 0x%016" PRIx64, pp->level, level_name(pp->level),
			  pp->match_any);
		if (pp->match_any) {
			hs_sb_append(sb, " (");
			keyword_names(p, pp->match_any, sb);
			hs_sb_putc(sb, ')');
		} else {
			hs_sb_append(sb, " (all)");
		}
		hs_sb_printf(sb, "  MatchAllKeyword 0x%016" PRIx64 "\n", pp->match_all);
		hs_sb_printf(sb, "    ENABLE_TRACE_PARAMETERS Version 2  EnableProperty 0x%08x%s%s  FilterDescCount %u\n",
			  pp->enable_property,
			  pp->enable_property & HS_EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 ? " IGNORE_KEYWORD_0" : "",
			  pp->enable_property & HS_EVENT_ENABLE_PROPERTY_STACK_TRACE ? " STACK_TRACE" : "",
			  (pp->whitelist ? 1u : 0u) + (pp->n_stack_events && p->kind != HS_PKIND_SYSTEM ? 1u : 0u));
		if (pp->capture_state)
			hs_sb_append(sb, "    before each flush: EVENT_CONTROL_CODE_CAPTURE_STATE\n");
		if (pp->whitelist) {
			hs_sb_printf(sb,
				  "    filter EVENT_FILTER_TYPE_EVENT_ID (0x%08x) FilterIn TRUE  Count %zu  Size %u\n",
				  HS_EVENT_FILTER_TYPE_EVENT_ID, pp->n_events, HS_EVENT_FILTER_EVENT_ID_SIZE(pp->n_events));
			for (size_t k = 0; k < pp->n_events; k++)
				text_event(sb, &pp->events[k], true);
		}
		if (pp->n_stack_events) {
			if (p->kind == HS_PKIND_SYSTEM) {
				hs_sb_printf(sb, "    TraceSetInformation(TraceStackTracingInfo): %zu CLASSIC_EVENT_ID\n",
					  pp->n_stack_events);
				for (size_t k = 0; k < pp->n_stack_events; k++) {
					const hs_plan_event *se = &pp->stack_events[k];
					char cg[37];
					hs_guid_format(&se->classic_guid, cg);
					hs_sb_printf(sb, "      {%s} opcode %d  %s\n", cg, se->id, se->name ? se->name : "?");
				}
			} else {
				hs_sb_printf(sb, "    filter EVENT_FILTER_TYPE_STACKWALK (0x%08x) FilterIn TRUE  Count %zu\n",
					  HS_EVENT_FILTER_TYPE_STACKWALK, pp->n_stack_events);
				for (size_t k = 0; k < pp->n_stack_events; k++)
					text_event(sb, &pp->stack_events[k], true);
			}
		}
	}
}

static void text_linux_session(hs_strbuf *sb, const hs_plan_session *ps)
{
	const hs_session *s = ps->session;
	const hs_plan_linux *l = &ps->linux_;
	hs_sb_printf(sb, "  tracefs instance \"%s\": trace_clock %s, buffer_size_kb %" PRIu64 " per CPU x %u CPUs, overwrite %d\n",
		  s->logger_name, s->clock, l->per_cpu_kb, l->cpus, l->overwrite ? 1 : 0);
	if (s->mode == HS_MODE_FILE_CIRCULAR)
		hs_sb_printf(sb, "  streamed to the file: at most %" PRIu64 " MB (oldest data dropped), flushed every %" PRIu64 " s\n",
			  s->max_file_mb, s->flush_interval_s);
	else if (s->mode == HS_MODE_BUFFERING)
		hs_sb_append(sb, "  in memory only; written out on Ctrl+C, SIGTERM or a snapshot request\n");
	else
		hs_sb_printf(sb, "  perf_event_open: cpu-clock at %" PRIu64 " Hz, one event per CPU, call graph %s\n",
			  l->sample_hz, l->call_graph_fp ? "frame pointers" : "none");
	if (l->copy_trace_marker)
		hs_sb_append(
			sb,
			"  options/copy_trace_marker 1: applications' trace_marker writes (atrace slices) reach it\n");
	hs_sb_append(sb, "  kernel memory: ");
	mb(sb, ps->memory_bytes);
	hs_sb_append(sb, " (unswappable)\n");
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		const hs_provider *p = pp->provider;
		if (!pp->whitelist) {
			hs_sb_printf(sb, "  enable %s/* (every event of the system)%s\n", p->system,
				  pp->stacks_all ? ", stacktrace trigger" : "");
			continue;
		}
		hs_sb_printf(sb, "  enable %zu event%s of %s%s:\n", pp->n_events, pp->n_events == 1 ? "" : "s", p->system,
			  pp->stacks_all ? " (stacktrace trigger)" : "");
		for (size_t k = 0; k < pp->n_events; k++)
			text_event(sb, &pp->events[k], false);
	}
}

static void text_trigger_event(hs_strbuf *sb, const hs_plan_trigger_event *e, bool first)
{
	hs_sb_printf(sb, "%s%s/", first ? "" : ", ", e->system ? e->system : "?");
	if (e->name)
		hs_sb_append(sb, e->name);
	if (e->id >= 0)
		hs_sb_printf(sb, e->name ? " (%d)" : "%d", e->id);
}

/* The trigger's events of one role, "system/name, ..." (false when none). */
static bool text_role_events(hs_strbuf *sb, const hs_plan_trigger *pt, hs_trigger_role role)
{
	bool first = true;
	for (size_t k = 0; k < pt->n_events; k++)
		if (pt->events[k].role == role) {
			text_trigger_event(sb, &pt->events[k], first);
			first = false;
		}
	return !first;
}

/* A frame source: frame_time's and deadline's (trace_marker or present). */
static void text_frame_source(hs_strbuf *sb, const hs_plan *plan, const hs_plan_trigger *pt)
{
	const hs_trigger *t = pt->trigger;
	hs_sb_printf(sb, "    frames from %s", t->source ? t->source : "?");
	bool any = false;
	for (size_t k = 0; k < pt->n_events; k++)
		any |= pt->events[k].role == HS_TRIGGER_ROLE_HIT;
	if (any) {
		hs_sb_append(sb, " (");
		text_role_events(sb, pt, HS_TRIGGER_ROLE_HIT);
		hs_sb_append(sb, pt->session < plan->n_sessions && plan->sessions[pt->session].linux_.copy_trace_marker
					 ? ", options/copy_trace_marker 1)"
					 : ")");
	}
	/* trace_marker frames are named slices; present events are not. */
	if (t->slice)
		hs_sb_printf(sb, ", slices matching /%s/\n", t->slice);
	else
		hs_sb_append(sb, ", start to start of one process's presents\n");
}

static void text_deadline(hs_strbuf *sb, const hs_plan *plan, const hs_plan_trigger *pt)
{
	const hs_trigger *t = pt->trigger;
	bool heartbeat = t->source && strcmp(t->source, "heartbeat") == 0;
	if (heartbeat) {
		hs_sb_append(sb, "    heartbeats: ");
		text_role_events(sb, pt, HS_TRIGGER_ROLE_HIT);
		hs_sb_append(sb, ", per process (the event's pid)\n");
	} else {
		text_frame_source(sb, plan, pt);
	}
	const char *unit = heartbeat ? "heartbeat" : "frame";
	hs_sb_printf(sb,
		     "    hung: no %s for %g ms from a process that made >= %" PRIu64
		     " %ss in the %g s before its last one;\n"
		     "      decided from the clock while it lasts (at each wake-up), once per freeze\n",
		     unit, t->deadline_ms, t->active_frames, unit, t->active_s);
	hs_sb_append(sb, "    not a hang:");
	bool any = false;
	if (t->n_exit_events) {
		hs_sb_append(sb, " the process exited (");
		text_role_events(sb, pt, HS_TRIGGER_ROLE_EXIT);
		hs_sb_putc(sb, ')');
		any = true;
	}
	if (t->n_suspend_events) {
		hs_sb_printf(sb, "%s the machine suspended (", any ? ";" : "");
		text_role_events(sb, pt, HS_TRIGGER_ROLE_SUSPEND);
		hs_sb_putc(sb, ')');
		any = true;
	}
	if (t->ignore_debugger) {
		hs_sb_printf(sb, "%s a debugger holds it", any ? ";" : "");
		any = true;
	}
	hs_sb_printf(sb, "%s%s\n", any ? "; " : " ", "a process that is gone when the deadline passes");
	if (t->resume_snapshot)
		hs_sb_append(sb, "    a second snapshot when the process draws again (the hang's end and length)\n");
	hs_sb_printf(sb, "    cost: no events beyond the %ss; %u B per watched process (%d at most)\n", unit,
		     (unsigned)(t->active_frames * sizeof(uint64_t)), HS_TRIGGER_FRAME_PIDS);
}

static void text_counter(hs_strbuf *sb, const hs_plan *plan, const hs_plan_trigger *pt)
{
	const hs_trigger *t = pt->trigger;
	const hs_counter_info *ci = hs_counter_info_of(t->counter);
	if (!ci)
		return;
	hs_sb_printf(sb, "    counter %s: %s (%s)", ci->name, ci->what, ci->unit);
	if (ci->per_process)
		hs_sb_printf(sb, ", each process whose name matches /%s/", t->process ? t->process : "");
	if (ci->per_session && pt->counter_session < plan->n_sessions)
		hs_sb_printf(sb, ", session %s", plan->sessions[pt->counter_session].session->name);
	hs_sb_printf(sb, "\n    fires when %s ", t->below ? "below" : "above");
	for (size_t k = 0; k < t->n_thresholds; k++)
		hs_sb_printf(sb, "%s%g", k ? ", then " : "", t->thresholds[k]);
	hs_sb_printf(sb, " %s for %g s%s%s\n", ci->unit, t->for_s,
		     t->n_thresholds > 1 ? " (each step once per incident)" : "",
		     t->only_if_worse ? "; only when worse than at the previous snapshot" : "");
	bool win = plan->platform == HS_PLATFORM_WINDOWS;
	const char *read = win ? ci->windows_read : ci->linux_read;
	if (ci->psi)
		for (size_t k = 0; k < t->n_thresholds; k++)
			hs_sb_printf(sb,
				     "    reads %s through the kernel's trigger \"%s %.0f %.0f\": no sampling, the "
				     "kernel wakes the engine (one fd, polled at each wake-up)\n",
				     read ? read : "?", ci->psi_full ? "full" : "some",
				     t->thresholds[k] / 100.0 * t->for_s * 1e6, t->for_s * 1e6);
	else
		hs_sb_printf(sb, "    reads %s every %" PRIu64 " ms%s\n", read ? read : "?", t->sample_ms,
			     ci->per_process ? ", the processes found by a name scan" : "");
}

/* chance, arm_while, cancel_on, cancel_marker. */
static void text_arming(hs_strbuf *sb, const hs_plan_trigger *pt)
{
	const hs_trigger *t = pt->trigger;
	if (t->has_chance)
		hs_sb_printf(sb, "    chance %g: a hit becomes a snapshot with this probability (weight %g)\n", t->chance,
			     t->chance > 0 ? 1.0 / t->chance : 0.0);
	if (t->arm_while)
		hs_sb_printf(sb, "    armed only while a process whose name matches /%s/ runs (a name scan)\n",
			     t->arm_while);
	if (t->n_cancel_on || t->cancel_marker) {
		hs_sb_append(sb, "    a pending snapshot is dropped on ");
		bool any = text_role_events(sb, pt, HS_TRIGGER_ROLE_CANCEL);
		(void)any;
		if (t->cancel_marker)
			hs_sb_printf(sb, " whose text matches /%s/", t->cancel_marker);
		hs_sb_putc(sb, '\n');
	}
}

static void text_triggers(hs_strbuf *sb, const hs_plan *plan)
{
	hs_sb_printf(sb, "\ntriggers: %zu", plan->n_triggers);
	if (plan->snapshots_max_bytes) {
		hs_sb_append(sb, ", all snapshots of a run <= ");
		mb(sb, plan->snapshots_max_bytes);
		hs_sb_append(sb, " (oldest deleted first)\n");
	} else {
		hs_sb_append(sb, ", no disk cap for all snapshots (run.snapshots_max_mb)\n");
	}
	for (size_t i = 0; i < plan->n_triggers; i++) {
		const hs_plan_trigger *pt = &plan->triggers[i];
		const hs_trigger *t = pt->trigger;
		hs_sb_printf(sb, "  trigger %s: %s", t->name, hs_trigger_kind_name(t->kind));
		if (pt->session < plan->n_sessions)
			hs_sb_printf(sb, t->kind == HS_TRIGGER_COUNTER ? " (cancel events from session %s)" : " on session %s",
				     plan->sessions[pt->session].session->name);
		hs_sb_putc(sb, '\n');
		if (t->description)
			hs_sb_printf(sb, "    %s\n", t->description);
		if (t->kind == HS_TRIGGER_EVENT || t->kind == HS_TRIGGER_REGEX) {
			hs_sb_append(sb, "    watches ");
			if (t->n_alerts) {
				hs_sb_append(sb, "alert ");
				for (size_t k = 0; k < t->n_alerts; k++)
					hs_sb_printf(sb, "%s%s", k ? "|" : "", t->alerts[k]);
				hs_sb_append(sb, ": ");
			}
			text_role_events(sb, pt, HS_TRIGGER_ROLE_HIT);
			hs_sb_putc(sb, '\n');
			for (size_t k = 0; k < t->n_where; k++) {
				const hs_trigger_cond *c = &t->where[k];
				hs_sb_printf(sb, "    where %s in [", c->field);
				for (size_t v = 0; v < c->n_values; v++) {
					if (c->strings)
						hs_sb_printf(sb, "%s\"%s\"", v ? ", " : "", c->strs[v]);
					else
						hs_sb_printf(sb, "%s%" PRId64, v ? ", " : "", c->nums[v]);
				}
				hs_sb_append(sb, "]\n");
			}
			if (t->kind == HS_TRIGGER_REGEX)
				hs_sb_printf(sb, "    field %s matches /%s/ (PCRE2)\n", t->field, t->pattern);
		} else if (t->kind == HS_TRIGGER_FRAME_TIME) {
			text_frame_source(sb, plan, pt);
			hs_sb_printf(sb,
				     "    hitch: frame > %g ms and > %g x the median of the last %" PRIu64
				     " frames, < %g ms\n",
				     t->threshold_ms, t->ratio, t->median_frames, t->ceiling_ms);
		} else if (t->kind == HS_TRIGGER_DEADLINE) {
			text_deadline(sb, plan, pt);
		} else if (t->kind == HS_TRIGGER_COUNTER) {
			text_counter(sb, plan, pt);
		} else {
			hs_sb_printf(sb, "    on request (%s, engine ctl)\n",
				     plan->platform == HS_PLATFORM_WINDOWS ? "Ctrl+Break" : "SIGUSR1");
		}
		text_arming(sb, pt);
		hs_sb_printf(sb,
			     "    warmup %" PRIu64 " s, clear %" PRIu64 " ms, post_delay %" PRIu64
			     " ms, cooldown %" PRIu64 " s, max %" PRIu64 "/hour, keep %" PRIu64 "\n",
			     t->warmup_s, t->clear_ms, t->post_delay_ms, t->cooldown_s, t->max_per_hour, t->keep);
		hs_sb_append(sb, "    each snapshot <= ");
		mb(sb, pt->snapshot_bytes_max);
		hs_sb_printf(sb, "; keep %" PRIu64 " -> <= ", t->keep);
		mb(sb, pt->snapshot_bytes_max * t->keep);
		if (pt->ring_history_s > 0) {
			/* The rate of the ring that gives the (shortest) history. */
			uint64_t rate = 0;
			double best = 0;
			for (size_t k = 0; k < plan->n_sessions; k++) {
				const hs_plan_session *ps = &plan->sessions[k];
				const hs_session *s = ps->session;
				if (s->mode != HS_MODE_BUFFERING || !s->expected_rate_eps)
					continue;
				double h = (double)ps->memory_bytes / (double)s->expected_rate_eps;
				if (!rate || h < best) {
					best = h;
					rate = s->expected_rate_eps;
				}
			}
			hs_sb_printf(sb, "; ring holds ~%.0f s at %" PRIu64 " ev/s, post_delay %.1f s\n",
				     pt->ring_history_s, rate, (double)t->post_delay_ms / 1000.0);
		} else {
			hs_sb_printf(sb, "; ring history unknown (no expected_rate_eps), post_delay %.1f s\n",
				     (double)t->post_delay_ms / 1000.0);
		}
	}
}

/* The reference builds of the coverage table: the oldest and newest Windows 10 and the newest Windows 11 the
 * vendored listings have (their folder names say which is which; the table is oldest first). */
static size_t reference_builds(const hs_winbuild **refs)
{
	const hs_winbuild *w10_first = NULL, *w10_last = NULL, *w11_last = NULL;
	for (size_t i = 0; i < hs_winbuild_count(); i++) {
		const hs_winbuild *b = hs_winbuild_at(i);
		if (!strncmp(b->name, "W10_", 4)) {
			w10_first = w10_first ? w10_first : b;
			w10_last = b;
		} else if (!strncmp(b->name, "W11_", 4)) {
			w11_last = b;
		}
	}
	size_t n = 0;
	const hs_winbuild *pick[3] = {w10_first, w10_last, w11_last};
	for (size_t i = 0; i < 3; i++)
		if (pick[i] && (n == 0 || refs[n - 1] != pick[i]))
			refs[n++] = pick[i];
	return n;
}

/* Per whitelist, how many of its ids each reference build's manifest listing has ("?": no listing read). */
static void text_windows_coverage(hs_strbuf *sb, const hs_ruleset *rs)
{
	const hs_winbuild *refs[3];
	size_t nb = reference_builds(refs);
	size_t nrows = nb ? hs_winbuild_check(rs, refs[0], NULL, NULL, 0) : 0;
	if (!nrows)
		return;
	hs_winbuild_cover *rows = calloc(nb * nrows, sizeof *rows);
	if (!rows)
		return;
	for (size_t b = 0; b < nb; b++)
		hs_winbuild_check(rs, refs[b], NULL, rows + b * nrows, nrows);
	/* Ids present / ids of listings read; "rulecheck --windows-build B" names the missing ones. */
	hs_sb_append(sb, "\nwindows build coverage (whitelisted ids the build's manifest listing has; ? = not in the data):\n");
	hs_sb_printf(sb, "  %-10s %-34s", "session", "provider");
	for (size_t b = 0; b < nb; b++)
		hs_sb_printf(sb, " %9s", refs[b]->name);
	hs_sb_putc(sb, '\n');
	for (size_t r = 0; r < nrows; r++) {
		hs_sb_printf(sb, "  %-10s %-34s", rows[r].session ? rows[r].session : "?", rows[r].provider);
		for (size_t b = 0; b < nb; b++) {
			const hs_winbuild_cover *c = &rows[b * nrows + r];
			char cell[32];
			if (c->unknown == c->n_ids)
				snprintf(cell, sizeof cell, "?");
			else
				snprintf(cell, sizeof cell, "%zu/%zu", c->present, c->n_ids - c->unknown);
			hs_sb_printf(sb, " %9s", cell);
		}
		hs_sb_putc(sb, '\n');
	}
	free(rows);
}

hs_status hs_plan_print_text(const hs_plan *plan, FILE *out)
{
	hs_strbuf sb = {0};
	const hs_ruleset *rs = plan->rules;
	bool win = plan->platform == HS_PLATFORM_WINDOWS;
	hs_sb_printf(&sb, "profile %s for %s (%s)\n", rs->name ? rs->name : "?", hs_platform_name(plan->platform), rs->path);
	if (rs->description)
		hs_sb_printf(&sb, "  %s\n", rs->description);
	hs_sb_append(&sb, "rules files:");
	for (size_t i = 0; i < rs->n_files; i++)
		hs_sb_printf(&sb, " %s", rs->files[i]);
	hs_sb_putc(&sb, '\n');
	if (rs->run.dir)
		hs_sb_printf(&sb, "run folder: %s/%s  log %s  manifest %s  stats every %" PRIu64 " s\n", rs->run.dir,
			  rs->run.name_format ? rs->run.name_format : "?", rs->run.log ? rs->run.log : "-",
			  rs->run.manifest ? rs->run.manifest : "-", rs->run.stats_interval_s);
	for (size_t i = 0; i < plan->n_sessions; i++) {
		const hs_plan_session *ps = &plan->sessions[i];
		const hs_session *s = ps->session;
		hs_sb_printf(&sb, "\nsession %s: %s -> %s\n", s->name, hs_mode_name(s->mode), s->output);
		if (win)
			text_windows_session(&sb, ps);
		else
			text_linux_session(&sb, ps);
	}
	if (plan->n_triggers)
		text_triggers(&sb, plan);
	if (win)
		text_windows_coverage(&sb, rs);
	hs_sb_printf(&sb, "\ntotal: %zu session%s, %zu whitelisted event%s, kernel memory ", plan->n_sessions,
		  plan->n_sessions == 1 ? "" : "s", plan->n_whitelisted, plan->n_whitelisted == 1 ? "" : "s");
	mb(&sb, plan->memory_bytes);
	hs_sb_putc(&sb, '\n');
	return hs_sb_write_free(&sb, out);
}

static void json_event(hs_json *j, const hs_plan_event *e, bool win)
{
	hs_json_obj_begin(j);
	if (win)
		hs_json_kint(j, "id", e->id);
	hs_json_kstr(j, "name", e->name);
	hs_json_kstr(j, "story", e->story);
	hs_json_kstr(j, "story_source",
		     e->story_from_evidence ? "evidence" : e->story_from_catalog ? "catalog" : "profile");
	if (e->name_guessed)
		hs_json_kbool(j, "name_guessed", true);
	if (e->alert)
		hs_json_kstr(j, "alert", e->alert);
	if (e->filter)
		hs_json_kstr(j, "filter", e->filter);
	if (e->optional)
		hs_json_kbool(j, "optional", true);
	if (e->has_classic_guid) {
		char g[37];
		hs_guid_format(&e->classic_guid, g);
		hs_json_kstr(j, "classic_guid", g);
	}
	hs_json_obj_end(j);
}

static void json_events(hs_json *j, const char *key, const hs_plan_event *events, size_t n, bool win)
{
	hs_json_key(j, key);
	hs_json_arr_begin(j);
	for (size_t k = 0; k < n; k++)
		json_event(j, &events[k], win);
	hs_json_arr_end(j);
}

static void json_hex(hs_json *j, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
	hs_json_kstr(j, key, buf);
}

/* EVENT_TRACE_PROPERTIES as the JSON plan names them (each a uint32_t of hs_plan_etw), in the struct's order. */
#define ETW_PROP(k, f) {k, offsetof(hs_plan_etw, f)}
static const struct {
	const char *key;
	size_t off;
} etw_properties[] = {
	ETW_PROP("Wnode.BufferSize", wnode_buffer_size), ETW_PROP("Wnode.Flags", wnode_flags),
	ETW_PROP("Wnode.ClientContext", client_context), ETW_PROP("BufferSize", buffer_size_kb),
	ETW_PROP("MinimumBuffers", min_buffers),         ETW_PROP("MaximumBuffers", max_buffers),
	ETW_PROP("MaximumFileSize", max_file_mb),        ETW_PROP("LogFileMode", log_file_mode),
	ETW_PROP("FlushTimer", flush_timer),             ETW_PROP("EnableFlags", enable_flags),
	ETW_PROP("LoggerNameOffset", logger_name_offset), ETW_PROP("LogFileNameOffset", log_file_name_offset),
};
#undef ETW_PROP

static void json_session(hs_json *j, const hs_plan *plan, const hs_plan_session *ps)
{
	const hs_session *s = ps->session;
	bool win = plan->platform == HS_PLATFORM_WINDOWS;
	hs_json_obj_begin(j);
	hs_json_kstr(j, "name", s->name);
	hs_json_kstr(j, "logger_name", s->logger_name);
	hs_json_kstr(j, "mode", hs_mode_name(s->mode));
	hs_json_kstr(j, "output", s->output);
	hs_json_kstr(j, "clock", s->clock);
	hs_json_kuint(j, "memory_bytes", ps->memory_bytes);
	if (s->expected_rate_eps)
		hs_json_kuint(j, "expected_rate_eps", s->expected_rate_eps);
	if (win) {
		const hs_plan_etw *e = &ps->etw;
		hs_json_key(j, "event_trace_properties");
		hs_json_obj_begin(j);
		for (size_t i = 0; i < sizeof etw_properties / sizeof etw_properties[0]; i++) {
			uint32_t v;
			memcpy(&v, (const char *)e + etw_properties[i].off, sizeof v);
			hs_json_kuint(j, etw_properties[i].key, v);
		}
		hs_json_obj_end(j);
		if (e->sample_interval_100ns)
			hs_json_kuint(j, "sample_interval_100ns", e->sample_interval_100ns);
	} else {
		const hs_plan_linux *l = &ps->linux_;
		hs_json_key(j, "tracefs");
		hs_json_obj_begin(j);
		hs_json_kuint(j, "buffer_size_kb", l->per_cpu_kb);
		hs_json_kuint(j, "cpus", l->cpus);
		hs_json_kbool(j, "overwrite", l->overwrite);
		if (l->copy_trace_marker)
			hs_json_kbool(j, "copy_trace_marker", true);
		if (s->mode == HS_MODE_FILE_CIRCULAR) {
			hs_json_kuint(j, "max_file_mb", s->max_file_mb);
			hs_json_kuint(j, "flush_interval_s", s->flush_interval_s);
		}
		hs_json_obj_end(j);
		if (s->mode == HS_MODE_SAMPLING) {
			hs_json_key(j, "perf");
			hs_json_obj_begin(j);
			hs_json_kstr(j, "event", "cpu-clock");
			hs_json_kuint(j, "sample_hz", l->sample_hz);
			hs_json_kstr(j, "call_graph", l->call_graph_fp ? "fp" : "none");
			hs_json_obj_end(j);
		}
	}
	hs_json_key(j, "providers");
	hs_json_arr_begin(j);
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		const hs_provider *p = pp->provider;
		hs_json_obj_begin(j);
		hs_json_kstr(j, "name", p->name);
		hs_json_kstr(j, "kind", hs_provider_kind_name(p->kind));
		if (win) {
			char g[37];
			hs_guid_format(&p->guid, g);
			hs_json_kstr(j, "guid", g);
			hs_json_kuint(j, "level", pp->level);
			json_hex(j, "match_any_keyword", pp->match_any);
			json_hex(j, "match_all_keyword", pp->match_all);
			hs_json_kuint(j, "enable_property", pp->enable_property);
			hs_json_kbool(j, "capture_state", pp->capture_state);
		} else {
			hs_json_kstr(j, "system", p->system);
		}
		hs_json_kbool(j, "stacks_all", pp->stacks_all);
		if (pp->whitelist) {
			hs_json_key(j, "filter_event_ids");
			hs_json_obj_begin(j);
			if (win) {
				hs_json_kuint(j, "type", HS_EVENT_FILTER_TYPE_EVENT_ID);
				hs_json_kbool(j, "filter_in", true);
				hs_json_kuint(j, "count", pp->n_events);
				hs_json_kuint(j, "size", HS_EVENT_FILTER_EVENT_ID_SIZE(pp->n_events));
			}
			json_events(j, "events", pp->events, pp->n_events, win);
			hs_json_obj_end(j);
		}
		if (pp->n_stack_events)
			json_events(j, "stack_events", pp->stack_events, pp->n_stack_events, win);
		hs_json_obj_end(j);
	}
	hs_json_arr_end(j);
	hs_json_obj_end(j);
}

void hs_plan_trigger_json(const hs_plan *plan, const hs_plan_trigger *pt, hs_json *j)
{
	const hs_trigger *t = pt->trigger;
	hs_json_obj_begin(j);
	hs_json_kstr(j, HS_RUNDOC_TRIGGER_NAME, t->name); /* keys snapshot.json's reader reads: hindsight/rundoc.h */
	hs_json_kstr(j, HS_RUNDOC_TRIGGER_KIND, hs_trigger_kind_name(t->kind));
	if (t->description)
		hs_json_kstr(j, "description", t->description);
	hs_json_kstr(j, "session", pt->session < plan->n_sessions ? plan->sessions[pt->session].session->name : NULL);
	if (t->n_alerts) {
		hs_json_key(j, "alerts");
		hs_json_arr_begin(j);
		for (size_t k = 0; k < t->n_alerts; k++)
			hs_json_str(j, t->alerts[k]);
		hs_json_arr_end(j);
	}
	hs_json_key(j, "events");
	hs_json_arr_begin(j);
	for (size_t k = 0; k < pt->n_events; k++) {
		const hs_plan_trigger_event *e = &pt->events[k];
		hs_json_obj_begin(j);
		hs_json_kstr(j, "system", e->system);
		hs_json_kstr(j, "name", e->name);
		if (e->id >= 0)
			hs_json_kint(j, "id", e->id);
		static const char *const roles[] = {"hit", "exit", "suspend", "cancel"};
		if (e->role != HS_TRIGGER_ROLE_HIT)
			hs_json_kstr(j, "role", roles[e->role]);
		hs_json_obj_end(j);
	}
	hs_json_arr_end(j);
	if (t->n_where) {
		hs_json_key(j, "where");
		hs_json_obj_begin(j);
		for (size_t k = 0; k < t->n_where; k++) {
			const hs_trigger_cond *c = &t->where[k];
			hs_json_key(j, c->field);
			hs_json_arr_begin(j);
			for (size_t v = 0; v < c->n_values; v++) {
				if (c->strings)
					hs_json_str(j, c->strs[v]);
				else
					hs_json_int(j, c->nums[v]);
			}
			hs_json_arr_end(j);
		}
		hs_json_obj_end(j);
	}
	if (t->kind == HS_TRIGGER_REGEX) {
		hs_json_kstr(j, "field", t->field);
		hs_json_kstr(j, "pattern", t->pattern);
	}
	if (t->kind == HS_TRIGGER_FRAME_TIME) {
		hs_json_kstr(j, "source", t->source);
		hs_json_kstr(j, "slice", t->slice);
		hs_json_kdouble(j, "threshold_ms", t->threshold_ms, 3);
		hs_json_kdouble(j, "ratio", t->ratio, 3);
		hs_json_kdouble(j, "ceiling_ms", t->ceiling_ms, 3);
		hs_json_kuint(j, "median_frames", t->median_frames);
	}
	if (t->kind == HS_TRIGGER_DEADLINE) {
		hs_json_kstr(j, "source", t->source);
		if (t->slice)
			hs_json_kstr(j, "slice", t->slice);
		hs_json_kdouble(j, "deadline_ms", t->deadline_ms, 3);
		hs_json_kuint(j, "active_frames", t->active_frames);
		hs_json_kdouble(j, "active_s", t->active_s, 3);
		hs_json_kbool(j, "ignore_debugger", t->ignore_debugger);
		hs_json_kbool(j, "resume_snapshot", t->resume_snapshot);
	}
	if (t->kind == HS_TRIGGER_COUNTER) {
		const hs_counter_info *ci = hs_counter_info_of(t->counter);
		hs_json_kstr(j, "counter", ci ? ci->name : NULL);
		hs_json_kstr(j, "unit", ci ? ci->unit : NULL);
		hs_json_kstr(j, "direction", t->below ? "below" : "above");
		hs_json_key(j, "thresholds");
		hs_json_arr_begin(j);
		for (size_t k = 0; k < t->n_thresholds; k++)
			hs_json_double(j, t->thresholds[k], 3);
		hs_json_arr_end(j);
		hs_json_kdouble(j, "for_s", t->for_s, 3);
		if (ci && !ci->psi)
			hs_json_kuint(j, "sample_ms", t->sample_ms);
		if (t->process)
			hs_json_kstr(j, "process", t->process);
		if (pt->counter_session < plan->n_sessions)
			hs_json_kstr(j, "counter_session", plan->sessions[pt->counter_session].session->name);
		hs_json_kbool(j, "only_if_worse", t->only_if_worse);
	}
	if (t->has_chance) {
		hs_json_kdouble(j, "chance", t->chance, 6);
	}
	if (t->arm_while)
		hs_json_kstr(j, "arm_while", t->arm_while);
	if (t->cancel_marker)
		hs_json_kstr(j, "cancel_marker", t->cancel_marker);
	hs_json_kuint(j, "warmup_s", t->warmup_s);
	hs_json_kuint(j, "clear_ms", t->clear_ms);
	hs_json_kuint(j, "post_delay_ms", t->post_delay_ms);
	hs_json_kuint(j, "cooldown_s", t->cooldown_s);
	hs_json_kuint(j, "max_per_hour", t->max_per_hour);
	hs_json_kuint(j, "keep", t->keep);
	hs_json_kdouble(j, "ring_history_s", pt->ring_history_s, 1);
	hs_json_kuint(j, "snapshot_bytes_max", pt->snapshot_bytes_max);
	hs_json_kuint(j, "keep_bytes_max", pt->snapshot_bytes_max * t->keep);
	hs_json_obj_end(j);
}

static void plan_json(const hs_plan *plan, hs_strbuf *sb)
{
	hs_json j;
	hs_json_init(&j, sb);
	const hs_ruleset *rs = plan->rules;
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "profile", rs->name);
	hs_json_kstr(&j, "platform", hs_platform_name(plan->platform));
	hs_json_kstr(&j, "rules", rs->path);
	hs_json_key(&j, "files");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < rs->n_files; i++)
		hs_json_str(&j, rs->files[i]);
	hs_json_arr_end(&j);
	hs_json_key(&j, "run");
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "dir", rs->run.dir);
	hs_json_kstr(&j, "name_format", rs->run.name_format);
	hs_json_kstr(&j, "log", rs->run.log);
	hs_json_kstr(&j, "manifest", rs->run.manifest);
	hs_json_kuint(&j, "stats_interval_s", rs->run.stats_interval_s);
	if (rs->run.snapshots_max_mb)
		hs_json_kuint(&j, "snapshots_max_mb", rs->run.snapshots_max_mb);
	hs_json_obj_end(&j);
	hs_json_kuint(&j, "memory_bytes", plan->memory_bytes);
	hs_json_kuint(&j, "whitelisted_events", plan->n_whitelisted);
	hs_json_key(&j, "sessions");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < plan->n_sessions; i++)
		json_session(&j, plan, &plan->sessions[i]);
	hs_json_arr_end(&j);
	if (plan->n_triggers) {
		hs_json_kuint(&j, "snapshots_max_bytes", plan->snapshots_max_bytes);
		hs_json_key(&j, "triggers");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i < plan->n_triggers; i++)
			hs_plan_trigger_json(plan, &plan->triggers[i], &j);
		hs_json_arr_end(&j);
	}
	hs_json_obj_end(&j);
}

hs_status hs_plan_print_json(const hs_plan *plan, FILE *out)
{
	hs_strbuf sb = {0};
	plan_json(plan, &sb);
	return hs_sb_write_free(&sb, out);
}

char *hs_plan_json(const hs_plan *plan)
{
	hs_strbuf sb = {0};
	plan_json(plan, &sb);
	return hs_sb_take(&sb);
}
