/* plan/plan.c: turns checked rules into the exact parameters each platform's tracing API receives. */
#include "hindsight/plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "plan/etw_defs.h"
#include "plan/etw_realtime.h"
#include "util/arena.h"
#include "util/compat.h"

typedef struct {
	hs_plan plan;
	hs_arena arena;
} plan_box;

static uint32_t etw_clock(const char *clock)
{
	if (clock && strcmp(clock, "system") == 0)
		return HS_ETW_CLOCK_SYSTEM;
	if (clock && strcmp(clock, "cycle") == 0)
		return HS_ETW_CLOCK_CYCLE;
	return HS_ETW_CLOCK_QPC;
}

static void plan_etw_session(const hs_session *s, hs_plan_session *ps)
{
	hs_plan_etw *e = &ps->etw;
	/* Room for a 1024-character session name followed by a 1024-character
	 * file name: the session name must come first, and control calls
	 * (QUERY/FLUSH/STOP) fail with ERROR_MORE_DATA with less room. */
	e->logger_name_offset = HS_SIZEOF_EVENT_TRACE_PROPERTIES;
	e->log_file_name_offset = HS_SIZEOF_EVENT_TRACE_PROPERTIES + HS_ETW_MAX_NAME_CHARS * 2u;
	e->wnode_buffer_size = HS_SIZEOF_EVENT_TRACE_PROPERTIES + 2u * HS_ETW_MAX_NAME_CHARS * 2u;
	e->wnode_flags = HS_WNODE_FLAG_TRACED_GUID;
	e->client_context = etw_clock(s->clock);
	e->buffer_size_kb = (uint32_t)s->buffer_size_kb;
	switch (s->mode) {
	case HS_MODE_FILE_CIRCULAR:
		e->log_file_mode = HS_EVENT_TRACE_FILE_MODE_CIRCULAR;
		e->min_buffers = (uint32_t)s->min_buffers;
		e->max_buffers = (uint32_t)s->max_buffers;
		e->max_file_mb = (uint32_t)s->max_file_mb;
		e->flush_timer = (uint32_t)s->flush_interval_s;
		break;
	case HS_MODE_BUFFERING:
		/* A buffering ring is MinimumBuffers x BufferSize, preallocated;
		 * MaximumBuffers is ignored by ETW, so we pass the same number.
		 * No FlushTimer: data leaves only through FLUSH. No paged memory:
		 * kernel-mode providers cannot log to paged sessions. */
		e->log_file_mode = HS_EVENT_TRACE_BUFFERING_MODE;
		/* StartTraceW: 0 means "no log file"; FLUSH gives the file name. */
		e->log_file_name_offset = 0;
		e->min_buffers = e->max_buffers = (uint32_t)(s->ring_mb * 1024u / s->buffer_size_kb);
		break;
	case HS_MODE_SAMPLING:
		/* A private system logger (not "NT Kernel Logger") writing a
		 * sequential file; the sample interval is set after start. */
		e->log_file_mode = HS_EVENT_TRACE_SYSTEM_LOGGER_MODE | HS_EVENT_TRACE_FILE_MODE_SEQUENTIAL;
		e->min_buffers = (uint32_t)s->min_buffers;
		e->max_buffers = (uint32_t)s->max_buffers;
		e->flush_timer = (uint32_t)s->flush_interval_s;
		e->sample_interval_100ns = (uint32_t)((10000000u + s->sample_hz / 2) / s->sample_hz);
		break;
	}
	ps->memory_bytes = (uint64_t)e->max_buffers * e->buffer_size_kb * 1024u;
}

static void plan_linux_session(const hs_session *s, unsigned cpus, hs_plan_session *ps)
{
	hs_plan_linux *l = &ps->linux_;
	l->cpus = cpus;
	if (s->mode == HS_MODE_BUFFERING) {
		/* ring_mb is the total; tracefs sizes rings per CPU in whole pages. */
		uint64_t kb = s->ring_mb * 1024u / cpus;
		l->per_cpu_kb = kb - kb % 4u;
		if (l->per_cpu_kb < HS_LINUX_MIN_BUFFER_KB)
			l->per_cpu_kb = HS_LINUX_MIN_BUFFER_KB;
		l->overwrite = true;
	} else {
		l->per_cpu_kb = s->buffer_size_kb;
		/* Streamed sessions must not overwrite: a drop is counted, an
		 * overwrite silently loses what the reader has not seen. */
		l->overwrite = false;
	}
	if (s->mode == HS_MODE_SAMPLING) {
		l->sample_hz = s->sample_hz;
		l->call_graph_fp = s->has_call_graph && s->call_graph == HS_CALLGRAPH_FP;
	}
	ps->memory_bytes = l->per_cpu_kb * 1024u * cpus;
}

static bool fill_event(const hs_provider *p, const hs_wl_entry *w, hs_plan_event *pe)
{
	const hs_cat_event *ce = hs_provider_find_event(p, w->id, w->name);
	pe->id = ce ? ce->id : w->id;
	pe->name = ce && ce->name ? ce->name : w->name;
	pe->story = w->story ? w->story : (ce ? ce->story : NULL);
	pe->story_from_catalog = !w->story && ce && ce->story;
	/* Generated evidence stands in for the story until a person writes one. */
	if (!pe->story && w->evidence) {
		pe->story = w->evidence;
		pe->story_from_evidence = true;
	}
	pe->name_guessed = ce && ce->name_guessed;
	pe->alert = ce ? ce->alert : NULL;
	pe->filter = w->filter;
	pe->optional = w->optional;
	if (ce && ce->has_classic_guid) {
		pe->has_classic_guid = true;
		pe->classic_guid = ce->classic_guid;
	}
	return pe->id >= 0 || pe->name;
}

static hs_status plan_provider(hs_arena *a, hs_platform plat, const hs_session_provider *sp, const hs_provider *p,
			       hs_plan_provider *pp)
{
	pp->provider = p;
	if (plat == HS_PLATFORM_WINDOWS) {
		pp->level = (uint8_t)sp->level;
		for (size_t k = 0; k < sp->n_keywords; k++) {
			const hs_keyword *kw = hs_provider_find_keyword(p, sp->keywords[k]);
			if (kw)
				pp->match_any |= kw->mask;
		}
		for (size_t k = 0; k < sp->n_keywords_all; k++) {
			const hs_keyword *kw = hs_provider_find_keyword(p, sp->keywords_all[k]);
			if (kw)
				pp->match_all |= kw->mask;
		}
		if (sp->ignore_keyword_0)
			pp->enable_property |= HS_EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0;
		/* Manifest providers take stacks through the enable property (and a
		 * STACKWALK filter for a list); system providers through
		 * TraceStackTracingInfo, which the backend sets from stack_events. */
		if (sp->stacks != HS_STACKS_NONE && p->kind != HS_PKIND_SYSTEM)
			pp->enable_property |= HS_EVENT_ENABLE_PROPERTY_STACK_TRACE;
		pp->capture_state = sp->capture_state;
	}
	pp->whitelist = sp->has_events;
	if (sp->has_events) {
		pp->events = hs_arena_alloc(a, (sp->n_events + 1) * sizeof(*pp->events));
		if (!pp->events)
			return HS_ENOMEM;
		for (size_t i = 0; i < sp->n_events; i++)
			if (fill_event(p, &sp->events[i], &pp->events[pp->n_events]))
				pp->n_events++;
	}
	pp->stacks_all = sp->stacks == HS_STACKS_ALL;
	if (sp->stacks == HS_STACKS_LIST) {
		pp->stack_events = hs_arena_alloc(a, (sp->n_stack_events + 1) * sizeof(*pp->stack_events));
		if (!pp->stack_events)
			return HS_ENOMEM;
		for (size_t i = 0; i < sp->n_stack_events; i++)
			if (fill_event(p, &sp->stack_events[i], &pp->stack_events[pp->n_stack_events]))
				pp->n_stack_events++;
	}
	return HS_OK;
}

static bool in_alerts(const hs_trigger *t, const char *alert)
{
	for (size_t i = 0; alert && i < t->n_alerts; i++)
		if (strcmp(t->alerts[i], alert) == 0)
			return true;
	return false;
}

static bool add_trigger_event(hs_plan_trigger *pt, size_t cap, hs_platform plat, const hs_provider *p, const char *name,
			      int id)
{
	if (pt->n_events >= cap)
		return false;
	hs_plan_trigger_event *e = &pt->events[pt->n_events++];
	e->system = plat == HS_PLATFORM_WINDOWS ? p->name : p->system;
	e->name = name;
	e->id = plat == HS_PLATFORM_WINDOWS ? id : -1;
	return true;
}

/* The events session ps enables (a whitelist's entries, or a whole provider's catalog events) that a trigger fires
 * on: those with one of t's alerts, or, t NULL (a Windows `source: present` frame trigger), every catalog event with
 * `means: present`, whose starts the frame detector measures per process. */
static hs_status plan_enabled_events(hs_arena *a, const hs_plan_session *ps, hs_platform plat, const hs_trigger *t,
				     hs_plan_trigger *pt)
{
	size_t cap = 0;
	for (size_t i = 0; i < ps->n_providers; i++)
		cap += ps->providers[i].whitelist ? ps->providers[i].n_events : ps->providers[i].provider->n_events;
	if (!(pt->events = hs_arena_alloc(a, (cap + 1) * sizeof(*pt->events))))
		return HS_ENOMEM;
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		const hs_provider *p = pp->provider;
		for (size_t k = 0; pp->whitelist && k < pp->n_events; k++) {
			const hs_plan_event *e = &pp->events[k];
			const hs_cat_event *ce = t ? NULL : hs_provider_find_event(p, e->id, NULL);
			if (t && in_alerts(t, e->alert))
				add_trigger_event(pt, cap, plat, p, e->name, e->id);
			else if (ce && ce->means == HS_MEANS_PRESENT)
				add_trigger_event(pt, cap, plat, p, ce->name, ce->id);
		}
		for (size_t k = 0; !pp->whitelist && k < p->n_events; k++) {
			const hs_cat_event *ce = &p->events[k];
			if (t ? in_alerts(t, ce->alert) : ce->means == HS_MEANS_PRESENT)
				add_trigger_event(pt, cap, plat, p, ce->name, ce->id);
		}
	}
	return HS_OK;
}

/* The events an event or regex trigger fires on, from what its session
 * really enables (the checker made sure there is at least one). */
static hs_status plan_trigger_events(hs_arena *a, const hs_ruleset *rs, hs_platform plat, const hs_plan_session *ps,
				     const hs_trigger *t, hs_plan_trigger *pt)
{
	if (!t->n_alerts) {
		const hs_provider *p = t->provider ? hs_rules_find_provider(rs, t->provider) : NULL;
		const hs_cat_event *ce = p ? hs_provider_find_event(p, t->event_id, t->event) : NULL;
		if (!ce)
			return HS_OK;
		if (!(pt->events = hs_arena_alloc(a, sizeof(*pt->events))))
			return HS_ENOMEM;
		add_trigger_event(pt, 1, plat, p, ce->name, ce->id);
		return HS_OK;
	}
	return plan_enabled_events(a, ps, plat, t, pt);
}

/* Appends a trigger's "provider/event" list with a role (the checker made
 * sure each is a catalog event its session streams). */
static void add_role_events(const hs_ruleset *rs, hs_platform plat, hs_plan_trigger *pt, size_t cap,
			    const hs_trigger_evref *refs, size_t n, hs_trigger_role role)
{
	for (size_t i = 0; i < n; i++) {
		const hs_provider *p = hs_rules_find_provider(rs, refs[i].provider);
		const hs_cat_event *ce =
			p ? hs_provider_find_event(p, plat == HS_PLATFORM_WINDOWS ? refs[i].event_id : -1, refs[i].event)
			  : NULL;
		if (ce && add_trigger_event(pt, cap, plat, p, ce->name, ce->id))
			pt->events[pt->n_events - 1].role = role;
	}
}

/* The events a trigger watches besides its condition's: a deadline's exit
 * and suspend events, every kind's cancel events and cancel marker. */
static hs_status plan_role_events(hs_arena *a, const hs_ruleset *rs, hs_plan *plan, hs_plan_trigger *pt)
{
	const hs_trigger *t = pt->trigger;
	size_t extra = t->n_exit_events + t->n_suspend_events + t->n_cancel_on + (t->cancel_marker ? 1 : 0);
	if (!extra || pt->session >= plan->n_sessions)
		return HS_OK;
	size_t cap = pt->n_events + extra;
	hs_plan_trigger_event *ev = hs_arena_alloc(a, (cap + 1) * sizeof(*ev));
	if (!ev)
		return HS_ENOMEM;
	if (pt->n_events)
		memcpy(ev, pt->events, pt->n_events * sizeof(*ev));
	pt->events = ev;
	add_role_events(rs, plan->platform, pt, cap, t->exit_events, t->n_exit_events, HS_TRIGGER_ROLE_EXIT);
	add_role_events(rs, plan->platform, pt, cap, t->suspend_events, t->n_suspend_events, HS_TRIGGER_ROLE_SUSPEND);
	add_role_events(rs, plan->platform, pt, cap, t->cancel_on, t->n_cancel_on, HS_TRIGGER_ROLE_CANCEL);
	if (t->cancel_marker && plan->platform == HS_PLATFORM_LINUX) {
		/* The applications' trace_marker text, as for a trace_marker frame source. */
		pt->events[pt->n_events++] =
			(hs_plan_trigger_event){.system = "ftrace", .name = "print", .id = -1, .role = HS_TRIGGER_ROLE_CANCEL};
		plan->sessions[pt->session].linux_.copy_trace_marker = true;
	}
	return HS_OK;
}

/* Triggers resolved against the plan's sessions (rules checked without errors). */
static hs_status plan_triggers(hs_arena *a, const hs_ruleset *rs, const hs_platform_rules *pr, hs_plan *plan)
{
	plan->snapshots_max_bytes = rs->run.snapshots_max_mb * 1024u * 1024u;
	if (!pr->n_triggers)
		return HS_OK;
	bool win = plan->platform == HS_PLATFORM_WINDOWS;
	double bpe = win ? HS_ETW_RING_BYTES_PER_EVENT : HS_LINUX_RING_BYTES_PER_EVENT;
	/* What every snapshot copies: the rings and the key-event files, at most. */
	uint64_t snap_max = 0;
	double history = 0;
	for (size_t i = 0; i < plan->n_sessions; i++) {
		const hs_plan_session *ps = &plan->sessions[i];
		const hs_session *s = ps->session;
		if (s->mode == HS_MODE_BUFFERING) {
			snap_max += ps->memory_bytes;
			if (s->expected_rate_eps) {
				double h = (double)ps->memory_bytes / ((double)s->expected_rate_eps * bpe);
				if (history == 0 || h < history)
					history = h;
			}
		} else if (s->mode == HS_MODE_FILE_CIRCULAR) {
			snap_max += s->max_file_mb * 1024u * 1024u;
		}
	}
	plan->triggers = hs_arena_alloc(a, (pr->n_triggers + 1) * sizeof(*plan->triggers));
	if (!plan->triggers)
		return HS_ENOMEM;
	for (size_t i = 0; i < pr->n_triggers; i++) {
		const hs_trigger *t = &pr->triggers[i];
		hs_plan_trigger *pt = &plan->triggers[plan->n_triggers++];
		pt->trigger = t;
		pt->session = SIZE_MAX;
		pt->counter_session = SIZE_MAX;
		pt->ring_history_s = history;
		pt->snapshot_bytes_max = snap_max;
		/* A counter watches no stream of its own: its session (if any)
		 * is the one it reads; its cancel events come from another. */
		bool counter = t->kind == HS_TRIGGER_COUNTER;
		const char *watched = counter ? t->cancel_session : t->session;
		for (size_t k = 0; t->kind != HS_TRIGGER_MANUAL && k < plan->n_sessions; k++) {
			if (watched && strcmp(plan->sessions[k].session->name, watched) == 0)
				pt->session = k;
			if (counter && t->session && strcmp(plan->sessions[k].session->name, t->session) == 0)
				pt->counter_session = k;
		}
		if (pt->session == SIZE_MAX)
			continue;
		hs_plan_session *ps = &plan->sessions[pt->session];
		bool deadline = t->kind == HS_TRIGGER_DEADLINE;
		bool heartbeat = deadline && t->source && strcmp(t->source, "heartbeat") == 0;
		if (t->kind == HS_TRIGGER_EVENT || t->kind == HS_TRIGGER_REGEX || heartbeat) {
			if (plan_trigger_events(a, rs, plan->platform, ps, t, pt) != HS_OK)
				return HS_ENOMEM;
		} else if ((t->kind == HS_TRIGGER_FRAME_TIME || deadline) && !win && t->source &&
			   strcmp(t->source, "trace_marker") == 0) {
			/* Applications write atrace slices to the top-level trace_marker;
			 * the instance sees them (as ftrace/print) with copy_trace_marker. */
			if (!(pt->events = hs_arena_alloc(a, sizeof(*pt->events))))
				return HS_ENOMEM;
			pt->events[0] = (hs_plan_trigger_event){.system = "ftrace", .name = "print", .id = -1};
			pt->n_events = 1;
			ps->linux_.copy_trace_marker = true;
		} else if ((t->kind == HS_TRIGGER_FRAME_TIME || deadline) && win && t->source &&
			   strcmp(t->source, "present") == 0) {
			if (plan_enabled_events(a, ps, HS_PLATFORM_WINDOWS, NULL, pt) != HS_OK)
				return HS_ENOMEM;
		}
		if (plan_role_events(a, rs, plan, pt) != HS_OK)
			return HS_ENOMEM;
	}
	return HS_OK;
}

hs_status hs_plan_build(const hs_ruleset *rs, hs_platform platform, const hs_plan_opts *opts, hs_plan **out)
{
	*out = NULL;
	if (platform <= HS_PLATFORM_NONE || platform >= HS_PLATFORM_COUNT || !rs->platforms[platform].present)
		return HS_EINVAL;
	const hs_platform_rules *pr = &rs->platforms[platform];
	plan_box *box = calloc(1, sizeof(*box));
	if (!box)
		return HS_ENOMEM;
	hs_plan *plan = &box->plan;
	hs_arena *a = &box->arena;
	plan->rules = rs;
	plan->platform = platform;
	unsigned cpus = opts && opts->cpus ? opts->cpus : hs_cpu_count();
	plan->sessions = hs_arena_alloc(a, (pr->n_sessions + 1) * sizeof(*plan->sessions));
	if (!plan->sessions)
		goto oom;
	for (size_t i = 0; i < pr->n_sessions; i++) {
		const hs_session *s = &pr->sessions[i];
		hs_plan_session *ps = &plan->sessions[plan->n_sessions++];
		ps->session = s;
		if (platform == HS_PLATFORM_WINDOWS)
			plan_etw_session(s, ps);
		else
			plan_linux_session(s, cpus, ps);
		plan->memory_bytes += ps->memory_bytes;
		size_t total = 0;
		for (size_t e = 0; e < s->n_providers; e++) {
			size_t n;
			hs_rules_selected_providers(rs, platform, i, e, &n);
			total += n;
		}
		ps->providers = hs_arena_alloc(a, (total + 1) * sizeof(*ps->providers));
		if (!ps->providers)
			goto oom;
		for (size_t e = 0; e < s->n_providers; e++) {
			size_t n;
			const hs_provider *const *sel = hs_rules_selected_providers(rs, platform, i, e, &n);
			for (size_t k = 0; k < n; k++) {
				hs_plan_provider *pp = &ps->providers[ps->n_providers++];
				if (plan_provider(a, platform, &s->providers[e], sel[k], pp) != HS_OK)
					goto oom;
				plan->n_whitelisted += pp->n_events;
			}
		}
	}
	if (plan_triggers(a, rs, pr, plan) != HS_OK)
		goto oom;
	/* Windows: a key-event session a trigger watches also runs in real time
	 * (the engine's consumer feeds the triggers), flushing every second so
	 * events reach it without waiting for the rules' flush interval; so does
	 * every key-event session when the run asked to see its events live. */
	for (size_t i = 0; platform == HS_PLATFORM_WINDOWS && i < plan->n_sessions; i++) {
		hs_plan_session *ps = &plan->sessions[i];
		bool for_triggers = hs_etw_session_wants_realtime(plan, i);
		bool for_view = opts && opts->stream_key_events && ps->session->mode == HS_MODE_FILE_CIRCULAR;
		if (for_triggers || for_view) {
			ps->etw.log_file_mode |= HS_EVENT_TRACE_REAL_TIME_MODE;
			ps->etw.flush_timer = HS_ETW_REALTIME_FLUSH_S;
			ps->etw.realtime_for_view = !for_triggers;
		}
	}
	*out = plan;
	return HS_OK;
oom:
	hs_arena_free(a);
	free(box);
	return HS_ENOMEM;
}

void hs_plan_free(hs_plan *plan)
{
	if (!plan)
		return;
	plan_box *box = (plan_box *)plan;
	hs_arena_free(&box->arena);
	free(box);
}
