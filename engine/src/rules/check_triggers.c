/* rules/check_triggers.c: semantic checks of a profile's triggers: names, kinds and their keys, the events and sessions they watch, frame, deadline and counter settings, arming and post delays against the rings. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hindsight/limits.h"
#include "rules/rules_int.h"
#include "rules/ynode.h"
#include "util/regex.h"
#include "util/strbuf.h"
#include "util/text.h"

typedef hs_checker checker;

#define MIB (1024.0 * 1024.0)

static bool in_alerts(const hs_trigger *t, const char *alert)
{
	for (size_t i = 0; alert && i < t->n_alerts; i++)
		if (strcmp(t->alerts[i], alert) == 0)
			return true;
	return false;
}

static size_t find_session(const hs_platform_rules *pr, const char *name)
{
	for (size_t i = 0; name && i < pr->n_sessions; i++)
		if (pr->sessions[i].name && strcmp(pr->sessions[i].name, name) == 0)
			return i;
	return SIZE_MAX;
}

/* Whether session si enables catalog event ce of provider p: an entry that
 * selects p with no `events:` enables every event of it (Windows: subject to
 * its keywords, which HS117 judges for whitelists only). */
static bool session_enables(checker *C, hs_platform plat, size_t si, const hs_provider *p, const hs_cat_event *ce)
{
	const hs_session *s = &C->rs->platforms[plat].sessions[si];
	for (size_t e = 0; e < s->n_providers; e++) {
		const hs_selection *sel = hs_rules_selection(C->rs, plat, si, e);
		const hs_session_provider *sp = &s->providers[e];
		for (size_t k = 0; sel && k < sel->n; k++) {
			if (sel->providers[k] != p)
				continue;
			if (!sp->has_events)
				return true;
			for (size_t w = 0; w < sp->n_events; w++)
				if (hs_provider_find_event(p, sp->events[w].id, sp->events[w].name) == ce)
					return true;
		}
	}
	return false;
}

/* How many events session si enables whose catalog alert is one of t's. */
static size_t session_alert_events(checker *C, hs_platform plat, size_t si, const hs_trigger *t)
{
	const hs_session *s = &C->rs->platforms[plat].sessions[si];
	size_t n = 0;
	for (size_t e = 0; e < s->n_providers; e++) {
		const hs_selection *sel = hs_rules_selection(C->rs, plat, si, e);
		const hs_session_provider *sp = &s->providers[e];
		for (size_t k = 0; sel && k < sel->n; k++) {
			const hs_provider *p = sel->providers[k];
			if (!sp->has_events) {
				for (size_t c = 0; c < p->n_events; c++)
					n += in_alerts(t, p->events[c].alert);
				continue;
			}
			for (size_t w = 0; w < sp->n_events; w++) {
				const hs_cat_event *ce = hs_provider_find_event(p, sp->events[w].id,
										sp->events[w].name);
				n += ce && in_alerts(t, ce->alert);
			}
		}
	}
	return n;
}

/* Every behaviour value comes from the trigger or from trigger_defaults: C has no default. */
static void merge_behaviour(checker *C, const hs_platform_rules *pr, hs_trigger *t)
{
	const hs_trigger *d = &pr->trigger_defaults;
	struct {
		const char *key;
		uint64_t *v;
		hs_pos *pos;
		uint64_t dv;
		hs_pos dpos;
	} keys[] = {
		{"warmup_s", &t->warmup_s, &t->warmup_pos, d->warmup_s, d->warmup_pos},
		{"clear_ms", &t->clear_ms, &t->clear_pos, d->clear_ms, d->clear_pos},
		{"post_delay_ms", &t->post_delay_ms, &t->post_delay_pos, d->post_delay_ms, d->post_delay_pos},
		{"cooldown_s", &t->cooldown_s, &t->cooldown_pos, d->cooldown_s, d->cooldown_pos},
		{"max_per_hour", &t->max_per_hour, &t->max_per_hour_pos, d->max_per_hour, d->max_per_hour_pos},
		{"keep", &t->keep, &t->keep_pos, d->keep, d->keep_pos},
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (keys[i].pos->line)
			continue;
		if (keys[i].dpos.line) {
			*keys[i].v = keys[i].dv;
			*keys[i].pos = keys[i].dpos;
			continue;
		}
		char hint[160];
		snprintf(hint, sizeof hint,
			 "add '%s' to the trigger, or to the platform's trigger_defaults for every trigger",
			 keys[i].key);
		hs_diag_add(C->d, HS_D_TRIGGER_KEY, t->pos, hint,
			    "trigger '%s' needs '%s': neither the trigger nor trigger_defaults gives it",
			    t->name ? t->name : "?", keys[i].key);
	}
}

enum {
	TK_SESSION = 1u << 0,
	TK_ALERT = 1u << 1,
	TK_PROVIDER = 1u << 2,
	TK_EVENT = 1u << 3,
	TK_WHERE = 1u << 4,
	TK_FIELD = 1u << 5,
	TK_PATTERN = 1u << 6,
	TK_SOURCE = 1u << 7,
	TK_SLICE = 1u << 8,
	TK_THRESHOLD = 1u << 9,
	TK_RATIO = 1u << 10,
	TK_CEILING = 1u << 11,
	TK_MEDIAN = 1u << 12,
	TK_DEADLINE = 1u << 13,
	TK_ACTIVE_FRAMES = 1u << 14,
	TK_ACTIVE_S = 1u << 15,
	TK_EXIT = 1u << 16,
	TK_SUSPEND = 1u << 17,
	TK_DEBUGGER = 1u << 18,
	TK_RESUME = 1u << 19,
	TK_COUNTER = 1u << 20,
	TK_DIRECTION = 1u << 21,
	TK_THRESHOLD1 = 1u << 22,
	TK_THRESHOLDS = 1u << 23,
	TK_FOR = 1u << 24,
	TK_SAMPLE = 1u << 25,
	TK_PROCESS = 1u << 26,
	TK_WORSE = 1u << 27,
	TK_CHANCE = 1u << 28,
	TK_ARM_WHILE = 1u << 29,
	TK_CANCEL_ON = 1u << 30,
	TK_CANCEL_MARKER = 1u << 31,
};
/* Sampling and arming: every kind that fires by itself. */
#define TK_ARMING (TK_CHANCE | TK_ARM_WHILE | TK_CANCEL_ON | TK_CANCEL_MARKER)

/* Which condition keys each kind takes and needs (alert / provider+event are
 * judged separately: exactly one of the two shapes). */
static void check_trigger_keys(checker *C, const hs_trigger *t)
{
	static const unsigned allowed[] = {
		[HS_TRIGGER_EVENT] = TK_SESSION | TK_ALERT | TK_PROVIDER | TK_EVENT | TK_WHERE | TK_ARMING,
		[HS_TRIGGER_REGEX] = TK_SESSION | TK_ALERT | TK_PROVIDER | TK_EVENT | TK_WHERE | TK_FIELD | TK_PATTERN |
				     TK_ARMING,
		[HS_TRIGGER_FRAME_TIME] = TK_SESSION | TK_SOURCE | TK_SLICE | TK_THRESHOLD | TK_RATIO | TK_CEILING |
					  TK_MEDIAN | TK_ARMING,
		[HS_TRIGGER_MANUAL] = 0,
		[HS_TRIGGER_DEADLINE] = TK_SESSION | TK_SOURCE | TK_SLICE | TK_PROVIDER | TK_EVENT | TK_WHERE |
					TK_DEADLINE | TK_ACTIVE_FRAMES | TK_ACTIVE_S | TK_EXIT | TK_SUSPEND |
					TK_DEBUGGER | TK_RESUME | TK_ARMING,
		[HS_TRIGGER_COUNTER] = TK_SESSION | TK_COUNTER | TK_DIRECTION | TK_THRESHOLD1 | TK_THRESHOLDS | TK_FOR |
				       TK_SAMPLE | TK_PROCESS | TK_WORSE | TK_ARMING,
	};
	static const unsigned required[] = {
		[HS_TRIGGER_EVENT] = 0,
		[HS_TRIGGER_REGEX] = TK_FIELD | TK_PATTERN,
		[HS_TRIGGER_FRAME_TIME] = TK_SESSION | TK_SOURCE | TK_SLICE | TK_CEILING | TK_MEDIAN,
		[HS_TRIGGER_MANUAL] = 0,
		[HS_TRIGGER_DEADLINE] = TK_SESSION | TK_SOURCE | TK_DEADLINE | TK_ACTIVE_FRAMES | TK_ACTIVE_S,
		[HS_TRIGGER_COUNTER] = TK_COUNTER | TK_DIRECTION | TK_FOR,
	};
	const struct {
		unsigned bit;
		const char *key;
		hs_pos pos;
	} keys[] = {
		{TK_SESSION, "session", t->session_pos},     {TK_ALERT, "alert", t->alerts_pos},
		{TK_PROVIDER, "provider", t->provider_pos},  {TK_EVENT, "event", t->event_pos},
		{TK_WHERE, "where", t->where_pos},           {TK_FIELD, "field", t->field_pos},
		{TK_PATTERN, "pattern", t->pattern_pos},     {TK_SOURCE, "source", t->source_pos},
		{TK_SLICE, "slice", t->slice_pos},           {TK_THRESHOLD, "threshold_ms", t->threshold_pos},
		{TK_RATIO, "ratio", t->ratio_pos},           {TK_CEILING, "ceiling_ms", t->ceiling_pos},
		{TK_MEDIAN, "median_frames", t->median_pos},
		{TK_DEADLINE, "deadline_ms", t->deadline_pos},
		{TK_ACTIVE_FRAMES, "active_frames", t->active_frames_pos},
		{TK_ACTIVE_S, "active_s", t->active_s_pos},
		{TK_EXIT, "exit_events", t->exit_events_pos},
		{TK_SUSPEND, "suspend_events", t->suspend_events_pos},
		{TK_DEBUGGER, "ignore_debugger", t->ignore_debugger_pos},
		{TK_RESUME, "resume_snapshot", t->resume_pos},
		{TK_COUNTER, "counter", t->counter_pos},
		{TK_DIRECTION, "direction", t->direction_pos},
		{TK_THRESHOLD1, "threshold", t->threshold1_pos},
		{TK_THRESHOLDS, "thresholds", t->thresholds_pos},
		{TK_FOR, "for_s", t->for_pos},
		{TK_SAMPLE, "sample_ms", t->sample_pos},
		{TK_PROCESS, "process", t->process_pos},
		{TK_WORSE, "only_if_worse", t->only_if_worse_pos},
		{TK_CHANCE, "chance", t->chance_pos},
		{TK_ARM_WHILE, "arm_while", t->arm_while_pos},
		{TK_CANCEL_ON, "cancel_on", t->cancel_on_pos},
		{TK_CANCEL_MARKER, "cancel_marker", t->cancel_marker_pos},
	};
	const char *kn = hs_trigger_kind_name(t->kind);
	unsigned may = allowed[t->kind], must = required[t->kind];
	/* Present events have no slice name: every Present of a process is a frame. */
	bool present = (t->kind == HS_TRIGGER_FRAME_TIME || t->kind == HS_TRIGGER_DEADLINE) && t->source &&
		       strcmp(t->source, "present") == 0;
	if (present) {
		may &= ~(unsigned)TK_SLICE;
		must &= ~(unsigned)TK_SLICE;
	}
	const char *why = NULL; /* the source that refuses a key */
	if (t->kind == HS_TRIGGER_DEADLINE && t->source) {
		/* trace_marker frames are named slices; a heartbeat is a catalog event. */
		if (strcmp(t->source, "heartbeat") == 0) {
			may &= ~(unsigned)TK_SLICE;
			must |= TK_PROVIDER | TK_EVENT;
			why = " with source heartbeat";
		} else {
			may &= ~(unsigned)(TK_PROVIDER | TK_EVENT | TK_WHERE);
			if (!present)
				must |= TK_SLICE;
			why = present ? " with source present" : " with source trace_marker";
		}
	}
	if (t->kind == HS_TRIGGER_COUNTER && t->has_counter) {
		/* The counter decides how it is read: PSI through the kernel's
		 * trigger file (no sampling), the rest sampled; per process or
		 * per session needs the one it reads. */
		const hs_counter_info *ci = hs_counter_info_of(t->counter);
		if (ci->psi || ci->per_session)
			may &= ~(unsigned)TK_SAMPLE; /* the kernel signals; the status comes once a second */
		else
			must |= TK_SAMPLE;
		if (ci->per_process)
			must |= TK_PROCESS;
		else
			may &= ~(unsigned)TK_PROCESS;
		if (ci->per_session)
			must |= TK_SESSION;
		else
			may &= ~(unsigned)TK_SESSION;
		why = ci->psi ? " on a PSI counter" : ci->per_process ? " on a per-process counter" : " on this counter";
	}
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		bool given = keys[i].pos.line != 0;
		bool by_kind = !(allowed[t->kind] & keys[i].bit);
		if (given && !(may & keys[i].bit))
			hs_diag_add(C->d, HS_D_TRIGGER_KEY, keys[i].pos,
				    t->kind == HS_TRIGGER_MANUAL ? "a manual trigger fires on request only: drop the key"
				    : present && keys[i].bit == TK_SLICE
					    ? "every Present of a process is a frame: drop the key"
				    : keys[i].bit == TK_SAMPLE
					    ? "PSI: the kernel wakes the engine; ring fill and losses: the status, once a second"
					    : NULL,
				    "'%s' has no meaning in a %s trigger%s", keys[i].key, kn,
				    present && keys[i].bit == TK_SLICE ? " with source present"
				    : !by_kind && why		       ? why
								       : "");
		else if (!given && (must & keys[i].bit))
			hs_diag_add(C->d, HS_D_TRIGGER_KEY, t->pos, NULL, "a %s trigger%s needs '%s'", kn,
				    !(required[t->kind] & keys[i].bit) && why ? why : "", keys[i].key);
	}
	if (t->kind == HS_TRIGGER_COUNTER && (t->threshold1_pos.line != 0) == (t->thresholds_pos.line != 0))
		hs_diag_add(C->d, HS_D_TRIGGER_KEY, t->threshold1_pos.line ? t->thresholds_pos : t->pos,
			    "one value (threshold) or escalating steps (thresholds)",
			    t->threshold1_pos.line ? "give either 'threshold' or 'thresholds', not both"
						   : "a counter trigger needs 'threshold' or 'thresholds'");
}

static void check_trigger_regex(checker *C, const char *pattern, const void *node, hs_pos pos, const char *key)
{
	if (!pattern)
		return;
	char err[256];
	size_t off = 0;
	hs_regex *re = NULL;
	if (hs_regex_compile(pattern, &re, err, sizeof err, &off) != HS_OK) {
		hs_pos at = pos;
		if (node)
			at.col = hs_ynode_col_of(node, off);
		hs_diag_add(C->d, HS_D_REGEX, at, NULL, "%s does not compile at offset %zu: %s", key, off, err);
		return;
	}
	hs_regex_free(re);
}

/* The session an event or regex trigger watches: the one it names, or the
 * first file-circular session that streams its event(s). */
/* `where:` fields and a regex's `field` against the event's payload fields,
 * when the catalog has its format (Linux: the kernel's format file; Windows:
 * the newest manifest template version formats gives, since that is what a
 * current build writes). */
/* Whether the engine can read the field for a where: or a regex. Every ftrace field; of ETW's inTypes only those
 * the real-time consumer decodes (etw/consumer.c rt_num, rt_str): integers, HexInt32/64, Boolean, and the Unicode
 * and ANSI strings. A pointer, time, GUID, SID, binary or float never compares, so the trigger could never fire. */
static bool field_readable(const hs_cat_field *f)
{
	static const char *const etw[] = {"win:Int8",      "win:UInt8",   "win:Int16",    "win:UInt16",
					  "win:Int32",     "win:UInt32",  "win:HexInt32", "win:Boolean",
					  "win:Int64",     "win:UInt64",  "win:HexInt64", "win:UnicodeString",
					  "win:AnsiString", NULL};
	if (strncmp(f->type, "win:", 4) != 0)
		return true;
	for (size_t i = 0; etw[i]; i++)
		if (strcmp(f->type, etw[i]) == 0)
			return true;
	return false;
}

/* Why a where: field is not there: an older template version of a Windows event that has it (the newest is what
 * current builds write), or else the event's own fields, so a typo is seen at once. */
static void missing_field_hint(const hs_cat_event *ce, const char *name, hs_strbuf *sb)
{
	for (size_t v = 0; v + 1 < ce->n_versions; v++)
		for (size_t i = 0; i < ce->versions[v].n_fields; i++)
			if (strcmp(ce->versions[v].fields[i].name, name) == 0) {
				int old = ce->versions[v].version, newest = ce->versions[ce->n_versions - 1].version;
				if (old < 0)
					hs_sb_printf(sb, "the unversioned entry has it; version %d does not", newest);
				else
					hs_sb_printf(sb, "only template version %d has it; the newest (%d) does not",
						     old, newest);
				return;
			}
	hs_sb_printf(sb, "the condition could never hold; its fields:");
	for (size_t i = 0; i < ce->n_fields; i++)
		hs_sb_printf(sb, "%s %s", i ? "," : "", ce->fields[i].name);
}

static void check_trigger_fields(checker *C, const hs_trigger *t, const hs_cat_event *ce)
{
	if (!ce->has_fields)
		return;
	for (size_t i = 0; i < t->n_where; i++) {
		const hs_trigger_cond *w = &t->where[i];
		const hs_cat_field *f = hs_cat_event_field(C->rs, ce, w->field);
		if (!f) {
			hs_strbuf hint = {0};
			missing_field_hint(ce, w->field, &hint);
			hs_diag_add(C->d, HS_D_FILTER_FIELD, w->pos, hs_sb_cstr(&hint), "event '%s' has no field '%s'",
				    ce->name, w->field);
			hs_sb_free(&hint);
			continue;
		}
		if (!field_readable(f))
			hs_diag_add(C->d, HS_D_FILTER_TYPE, w->pos, "compare an integer or string field",
				    "'%s' is %s, which the engine does not compare", w->field, f->type);
		else if (w->n_values && w->strings != hs_cat_field_is_string(f))
			hs_diag_add(C->d, HS_D_FILTER_TYPE, w->pos, NULL, "'%s' is a %s (%s), the values are %s", w->field,
				    hs_cat_field_is_string(f) ? "string" : "number", f->type,
				    w->strings ? "strings" : "numbers");
	}
	if (t->kind != HS_TRIGGER_REGEX || !t->field)
		return;
	const hs_cat_field *f = hs_cat_event_field(C->rs, ce, t->field);
	if (!f)
		hs_diag_add(C->d, HS_D_FILTER_FIELD, t->field_pos, "a regex runs on one of the event's string fields",
			    "event '%s' has no field '%s'", ce->name, t->field);
	else if (!hs_cat_field_is_string(f) || !field_readable(f))
		hs_diag_add(C->d, HS_D_FILTER_TYPE, t->field_pos, "a regex runs on one of the event's string fields",
			    "'%s' is %s (%s); the pattern would never match", t->field,
			    hs_cat_field_is_string(f) ? "a string the engine does not read"
			    : field_readable(f)       ? "a number"
						      : "not a string",
			    f->type);
}

static void check_trigger_event(checker *C, hs_platform plat, hs_trigger *t)
{
	const hs_platform_rules *pr = &C->rs->platforms[plat];
	const char *pname = hs_platform_name(plat);
	bool has_alert = t->alerts_pos.line != 0, has_pe = t->provider_pos.line || t->event_pos.line;
	if (has_alert && has_pe) {
		hs_diag_add(C->d, HS_D_TRIGGER_KEY, t->alerts_pos,
			    "'alert' takes every streamed event with that alert; 'provider' and 'event' name one",
			    "give either 'alert' or 'provider' and 'event', not both");
		return;
	}
	if (!has_alert && !has_pe) {
		hs_diag_add(C->d, HS_D_TRIGGER_KEY, t->pos, "name the catalog alert, or the provider and the event",
			    "an %s trigger needs 'alert' or 'provider' and 'event'",
			    t->kind == HS_TRIGGER_REGEX ? "regex" : "event");
		return;
	}
	if (has_pe && (!t->provider_pos.line || !t->event_pos.line)) {
		hs_diag_add(C->d, HS_D_TRIGGER_KEY, t->pos, NULL, "trigger '%s' needs both 'provider' and 'event'",
			    t->name ? t->name : "?");
		return;
	}
	size_t given = SIZE_MAX;
	if (t->session) {
		given = find_session(pr, t->session);
		if (given == SIZE_MAX) {
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos,
				    "name a file-circular session of the platform", "no %s session is named '%s'",
				    pname, t->session);
			return;
		}
		if (!pr->sessions[given].has_mode || pr->sessions[given].mode != HS_MODE_FILE_CIRCULAR) {
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos,
				    "triggers watch the streamed key events of a file-circular session",
				    "session '%s' is not file-circular", t->session);
			return;
		}
	}
	if (has_alert) {
		if (t->n_alerts == 0)
			return; /* the values were reported */
		if (given != SIZE_MAX) {
			if (!session_alert_events(C, plat, given, t))
				hs_diag_add(
					C->d, HS_D_TRIGGER_SESSION, t->session_pos,
					"whitelist an event with that alert in the session, or name another session",
					"session '%s' enables no event with the trigger's alert", t->session);
			return;
		}
		for (size_t i = 0; i < pr->n_sessions; i++)
			if (pr->sessions[i].has_mode && pr->sessions[i].mode == HS_MODE_FILE_CIRCULAR &&
			    session_alert_events(C, plat, i, t)) {
				t->session = pr->sessions[i].name;
				return;
			}
		hs_strbuf list = {0};
		for (size_t i = 0; i < t->n_alerts; i++)
			hs_sb_printf(&list, "%s%s", i ? ", " : "", t->alerts[i]);
		hs_diag_add(
			C->d, HS_D_TRIGGER_EVENT, t->alerts_pos,
			"whitelist an event whose catalog entry has this alert in a file-circular session",
			"no file-circular %s session streams an event with alert %s, so the trigger could never fire",
			pname, hs_sb_cstr(&list));
		hs_sb_free(&list);
		return;
	}
	if (!t->provider || (!t->event && t->event_id < 0))
		return; /* malformed values were reported */
	const hs_provider *p = hs_rules_find_provider(C->rs, t->provider);
	if (!p) {
		hs_diag_add(C->d, HS_D_UNKNOWN_PROVIDER, t->provider_pos, "add it to a catalog this profile includes",
			    "no included catalog defines provider '%s'", t->provider);
		return;
	}
	if (p->platform != plat) {
		hs_diag_add(C->d, HS_D_PLATFORM, t->provider_pos, NULL,
			    "provider '%s' is a %s provider, used in a %s trigger", t->provider,
			    hs_platform_name(p->platform), pname);
		return;
	}
	if (plat == HS_PLATFORM_LINUX && t->event_id >= 0) {
		hs_diag_add(C->d, HS_D_PLATFORM, t->event_pos, "name the ftrace event instead",
			    "ftrace events have no numeric id in the rules");
		return;
	}
	const hs_cat_event *ce = hs_provider_find_event(p, t->event_id, t->event);
	if (!ce) {
		if (t->event_id >= 0)
			hs_diag_add(C->d, HS_D_TRIGGER_EVENT, t->event_pos, "a trigger's event must be a catalog event",
				    "provider '%s' has no catalog event with id %d", p->name, t->event_id);
		else
			hs_diag_add(C->d, HS_D_TRIGGER_EVENT, t->event_pos, "a trigger's event must be a catalog event",
				    "provider '%s' has no catalog event '%s'", p->name, t->event);
		return;
	}
	check_trigger_fields(C, t, ce);
	const char *en = ce->name ? ce->name : "?";
	if (given != SIZE_MAX) {
		if (!session_enables(C, plat, given, p, ce))
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos,
				    "whitelist the event in the session, or name the session that streams it",
				    "session '%s' does not enable '%s' of '%s'", t->session, en, p->name);
		return;
	}
	for (size_t i = 0; i < pr->n_sessions; i++)
		if (pr->sessions[i].has_mode && pr->sessions[i].mode == HS_MODE_FILE_CIRCULAR &&
		    session_enables(C, plat, i, p, ce)) {
			t->session = pr->sessions[i].name;
			return;
		}
	hs_diag_add(C->d, HS_D_TRIGGER_EVENT, t->event_pos,
		    "whitelist it in a file-circular session: triggers see only the streamed key events",
		    "no file-circular %s session streams '%s' of '%s', so the trigger could never fire", pname, en,
		    p->name);
}

/* Does session si enable a catalog event with `means: present`? */
static bool session_presents(checker *C, hs_platform plat, size_t si)
{
	for (size_t i = 0; i < C->rs->n_providers; i++) {
		const hs_provider *p = &C->rs->providers[i];
		if (p->platform != plat)
			continue;
		for (size_t k = 0; k < p->n_events; k++)
			if (p->events[k].means == HS_MEANS_PRESENT && session_enables(C, plat, si, p, &p->events[k]))
				return true;
	}
	return false;
}

static void check_trigger_frame(checker *C, hs_platform plat, const hs_trigger *t)
{
	const hs_platform_rules *pr = &C->rs->platforms[plat];
	size_t si = SIZE_MAX;
	if (t->session) {
		si = find_session(pr, t->session);
		if (si == SIZE_MAX)
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos,
				    "name a file-circular session of the platform", "no %s session is named '%s'",
				    hs_platform_name(plat), t->session);
		else if (!pr->sessions[si].has_mode || pr->sessions[si].mode != HS_MODE_FILE_CIRCULAR)
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos,
				    "the frame markers must stream: name a file-circular session",
				    "session '%s' is not file-circular", t->session);
	}
	if (t->has_source) {
		if (plat == HS_PLATFORM_LINUX && strcmp(t->source, "trace_marker") != 0)
			hs_diag_add(C->d, HS_D_PLATFORM, t->source_pos, "linux frames come from trace_marker",
				    "frame source '%s' is not available on linux", t->source);
		else if (plat == HS_PLATFORM_WINDOWS && strcmp(t->source, "present") != 0)
			hs_diag_add(C->d, HS_D_PLATFORM, t->source_pos, "windows frames come from present",
				    "frame source '%s' is not available on windows", t->source);
		else if (plat == HS_PLATFORM_WINDOWS && si != SIZE_MAX && !session_presents(C, plat, si))
			/* The frames are the catalog's `means: present` events the session streams. */
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos,
				    "enable a Present event (a catalog event with `means: present`) in the session",
				    "session '%s' enables no present event, so the trigger could never measure a frame",
				    t->session);
	}
	check_trigger_regex(C, t->slice, t->slice_node, t->slice_pos, "slice");
	bool thr = t->has_threshold && t->threshold_ms > 0, rat = t->has_ratio && t->ratio > 1;
	if (!thr && !rat)
		hs_diag_add(
			C->d, HS_D_TRIGGER_THRESHOLD, t->pos,
			"give threshold_ms (an absolute hitch length) and/or ratio (a multiple of the median frame)",
			"frame_time trigger '%s' needs threshold_ms > 0 or ratio > 1", t->name ? t->name : "?");
	if (t->ceiling_pos.line && t->ceiling_ms <= t->threshold_ms)
		hs_diag_add(
			C->d, HS_D_TRIGGER_THRESHOLD, t->ceiling_pos,
			"frames longer than ceiling_ms are not hitches (alt-tab, loading): it must be above threshold_ms",
			"ceiling_ms %g is not above threshold_ms %g", t->ceiling_ms, t->threshold_ms);
}

/* A trigger's "provider/event" list (exit_events, suspend_events, cancel_on):
 * each a catalog event of the platform that session si streams. si SIZE_MAX:
 * the first file-circular session that streams them all, returned. */
static size_t check_evrefs(checker *C, hs_platform plat, const hs_trigger *t, const hs_trigger_evref *refs, size_t n,
			   const char *key, size_t si)
{
	const hs_platform_rules *pr = &C->rs->platforms[plat];
	const char *pname = hs_platform_name(plat);
	for (size_t i = 0; i < n; i++) {
		const hs_trigger_evref *e = &refs[i];
		const hs_provider *p = hs_rules_find_provider(C->rs, e->provider);
		if (!p) {
			hs_diag_add(C->d, HS_D_UNKNOWN_PROVIDER, e->pos, "add it to a catalog this profile includes",
				    "%s: no included catalog defines provider '%s'", key, e->provider);
			continue;
		}
		if (p->platform != plat) {
			hs_diag_add(C->d, HS_D_PLATFORM, e->pos, NULL, "%s: provider '%s' is a %s provider, in a %s trigger",
				    key, e->provider, hs_platform_name(p->platform), pname);
			continue;
		}
		const hs_cat_event *ce = hs_provider_find_event(p, plat == HS_PLATFORM_LINUX ? -1 : e->event_id, e->event);
		if (!ce) {
			hs_diag_add(C->d, HS_D_TRIGGER_EVENT, e->pos, "a trigger's event must be a catalog event",
				    "%s: provider '%s' has no catalog event '%s'", key, p->name,
				    e->event ? e->event : "(id)");
			continue;
		}
		if (si == SIZE_MAX) {
			for (size_t k = 0; k < pr->n_sessions && si == SIZE_MAX; k++)
				if (pr->sessions[k].has_mode && pr->sessions[k].mode == HS_MODE_FILE_CIRCULAR &&
				    session_enables(C, plat, k, p, ce))
					si = k;
			if (si == SIZE_MAX)
				hs_diag_add(C->d, HS_D_TRIGGER_EVENT, e->pos,
					    "whitelist it in a file-circular session: triggers see only the streamed key events",
					    "%s: no file-circular %s session streams '%s' of '%s'", key, pname,
					    ce->name ? ce->name : "?", p->name);
		} else if (!session_enables(C, plat, si, p, ce)) {
			hs_diag_add(C->d, HS_D_TRIGGER_EVENT, e->pos,
				    "whitelist it in the trigger's session: the trigger sees that session's stream",
				    "%s: session '%s' does not stream '%s' of '%s'", key, pr->sessions[si].name,
				    ce->name ? ce->name : "?", p->name);
		}
	}
	(void)t;
	return si;
}

/* The trigger's session by name, which must be file-circular (HS132); SIZE_MAX otherwise. */
static size_t circular_session(checker *C, hs_platform plat, const hs_trigger *t, const char *why)
{
	const hs_platform_rules *pr = &C->rs->platforms[plat];
	size_t si = find_session(pr, t->session);
	if (si == SIZE_MAX)
		hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos, "name a file-circular session of the platform",
			    "no %s session is named '%s'", hs_platform_name(plat), t->session);
	else if (!pr->sessions[si].has_mode || pr->sessions[si].mode != HS_MODE_FILE_CIRCULAR) {
		hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos, why, "session '%s' is not file-circular",
			    t->session);
		si = SIZE_MAX;
	}
	return si;
}

/* deadline: the frame source or heartbeat, its session, the not-a-hang events. */
static void check_trigger_deadline(checker *C, hs_platform plat, hs_trigger *t)
{
	size_t si = SIZE_MAX;
	if (t->session)
		si = circular_session(C, plat, t, "the frames or heartbeats must stream: name a file-circular session");
	bool win = plat == HS_PLATFORM_WINDOWS;
	if (t->has_source) {
		if (strcmp(t->source, "heartbeat") == 0) {
			if (t->provider && (t->event || t->event_id >= 0))
				check_trigger_event(C, plat, t); /* the heartbeat event, streamed by the session */
		} else if (!win && strcmp(t->source, "trace_marker") != 0) {
			hs_diag_add(C->d, HS_D_PLATFORM, t->source_pos, "linux frames come from trace_marker (or a heartbeat)",
				    "frame source '%s' is not available on linux", t->source);
		} else if (win && strcmp(t->source, "present") != 0) {
			hs_diag_add(C->d, HS_D_PLATFORM, t->source_pos, "windows frames come from present (or a heartbeat)",
				    "frame source '%s' is not available on windows", t->source);
		} else if (win && si != SIZE_MAX && !session_presents(C, plat, si)) {
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos,
				    "enable a Present event (a catalog event with `means: present`) in the session",
				    "session '%s' enables no present event, so the trigger could never see a frame",
				    t->session);
		}
	}
	check_trigger_regex(C, t->slice, t->slice_node, t->slice_pos, "slice");
	if (si != SIZE_MAX) {
		check_evrefs(C, plat, t, t->exit_events, t->n_exit_events, "exit_events", si);
		check_evrefs(C, plat, t, t->suspend_events, t->n_suspend_events, "suspend_events", si);
	}
	if (t->active_s_pos.line && t->active_s <= 0)
		hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, t->active_s_pos, "give the seconds the frames are counted in",
			    "active_s 0 holds no frames: no process would ever be watched");
	/* A process that just meets the arming rule draws a frame every
	 * active_s / (active_frames - 1) on average; a deadline shorter than
	 * that fires on its ordinary gaps. */
	if (t->deadline_pos.line && t->active_frames_pos.line && t->active_s_pos.line && t->active_frames >= 2 &&
	    t->active_s > 0) {
		double gap_ms = t->active_s * 1000.0 / (double)(t->active_frames - 1);
		if (gap_ms >= t->deadline_ms)
			hs_diag_add(C->d, HS_D_TRIGGER_DUBIOUS, t->deadline_pos,
				    "raise active_frames or lower active_s, so only a process drawing faster than "
				    "the deadline is watched",
				    "a process with %llu frames in %g s draws one every %.0f ms on average, which is not "
				    "shorter than deadline_ms %g: its ordinary gaps would look like hangs",
				    (unsigned long long)t->active_frames, t->active_s, gap_ms, t->deadline_ms);
	}
}

/* counter: where it exists, its values against its unit, PSI's kernel limits. */
static void check_trigger_counter(checker *C, hs_platform plat, hs_trigger *t)
{
	if (!t->has_counter)
		return;
	const hs_counter_info *ci = hs_counter_info_of(t->counter);
	if (!(plat == HS_PLATFORM_LINUX ? ci->on_linux : ci->on_windows)) {
		hs_diag_add(C->d, HS_D_PLATFORM, t->counter_pos,
			    ci->psi ? "Windows has no stall accounting like Linux's PSI; watch cpu_percent, "
				      "process_rss_mb or disk_free_mb there"
				    : NULL,
			    "counter '%s' is not available on %s", ci->name, hs_platform_name(plat));
		return;
	}
	const hs_platform_rules *pr = &C->rs->platforms[plat];
	if (ci->per_session && t->session) {
		size_t si = find_session(pr, t->session);
		if (si == SIZE_MAX)
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos, "name a session of the platform",
				    "no %s session is named '%s'", hs_platform_name(plat), t->session);
		else if (t->counter == HS_COUNTER_KEY_DROP_RATE &&
			 (!pr->sessions[si].has_mode || pr->sessions[si].mode != HS_MODE_FILE_CIRCULAR))
			hs_diag_add(C->d, HS_D_TRIGGER_SESSION, t->session_pos,
				    "key_drop_rate counts what a key-event session loses: name a file-circular one",
				    "session '%s' is not file-circular", t->session);
	}
	check_trigger_regex(C, t->process, t->process_node, t->process_pos, "process");
	hs_pos tpos = t->thresholds_pos.line ? t->thresholds_pos : t->threshold1_pos;
	for (size_t i = 0; i < t->n_thresholds; i++) {
		double v = t->thresholds[i];
		if (ci->max > 0 && v > ci->max)
			hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, tpos, NULL, "%s is %s of at most %g; %g can never be reached",
				    ci->name, ci->unit, ci->max, v);
		else if (t->has_direction && t->below && v <= 0)
			hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, tpos, NULL, "%s is never below %g", ci->name, v);
		else if (t->has_direction && !t->below && ci->max > 0 && v >= ci->max)
			hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, tpos, NULL, "%s is never above %g", ci->name, v);
		if (i && t->has_direction && (t->below ? v >= t->thresholds[i - 1] : v <= t->thresholds[i - 1]))
			hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, tpos, "steps escalate: each worse than the one before",
				    "thresholds going %s must %s: %g follows %g", t->below ? "below" : "above",
				    t->below ? "decrease" : "increase", v, t->thresholds[i - 1]);
	}
	if (ci->psi) {
		/* The kernel's trigger file takes "some|full <stall us> <window us>":
		 * a window of 0.5..10 s, a stall above 0 and below the window, and
		 * it reports crossings upward only. */
		double win_ms = t->for_s * 1000.0;
		if (t->for_pos.line && (win_ms < HS_PSI_MIN_WINDOW_MS || win_ms > HS_PSI_MAX_WINDOW_MS))
			hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, t->for_pos,
				    "for_s is the kernel's PSI window, which it takes between 0.5 and 10 s",
				    "PSI window for_s %g is outside %g..%g s", t->for_s, HS_PSI_MIN_WINDOW_MS / 1000.0,
				    HS_PSI_MAX_WINDOW_MS / 1000.0);
		if (t->has_direction && t->below)
			hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, t->direction_pos,
				    "the kernel's PSI trigger reports stalls that grow past a threshold, never a fall",
				    "a PSI counter can only go above");
		for (size_t i = 0; i < t->n_thresholds; i++)
			if (t->thresholds[i] <= 0)
				hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, tpos, "give a share of the window above 0 %%",
					    "PSI threshold %g: the kernel needs a stall above 0", t->thresholds[i]);
		if (t->only_if_worse && t->n_thresholds == 1)
			hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, t->only_if_worse_pos,
				    "give escalating thresholds instead: each step is a worse crossing",
				    "PSI triggers report that a threshold was crossed, not by how much, so no crossing is "
				    "worse than another");
		if (t->for_pos.line && win_ms >= HS_PSI_MIN_WINDOW_MS && win_ms <= HS_PSI_MAX_WINDOW_MS &&
		    (uint64_t)(win_ms + 0.5) % HS_PSI_UNPRIV_WINDOW_MS != 0)
			hs_diag_add(C->d, HS_D_TRIGGER_DUBIOUS, t->for_pos,
				    "make for_s a multiple of 2 s to work for any engine",
				    "a PSI window of %g s is taken only from an engine with CAP_SYS_RESOURCE (the kernel "
				    "refuses other windows than multiples of 2 s without it)",
				    t->for_s);
		if (t->clear_pos.line && t->for_pos.line && (double)t->clear_ms < win_ms)
			hs_diag_add(C->d, HS_D_TRIGGER_DUBIOUS, t->clear_pos,
				    "the kernel signals at most once a window while the pressure lasts; a shorter "
				    "clear_ms re-arms between two signals of one episode",
				    "trigger '%s': clear_ms %llu is shorter than the PSI window (%g ms)",
				    t->name ? t->name : "?", (unsigned long long)t->clear_ms, win_ms);
	} else if (t->sample_pos.line && t->for_pos.line && t->for_s > 0 && (double)t->sample_ms > t->for_s * 1000.0) {
		hs_diag_add(C->d, HS_D_TRIGGER_DUBIOUS, t->sample_pos,
			    "sample at least as often as for_s, or the hold is judged on one sample",
			    "sample_ms %llu is longer than for_s %g s", (unsigned long long)t->sample_ms, t->for_s);
	}
}

/* chance, arm_while, cancel_on, cancel_marker (every kind that fires by itself). */
static void check_trigger_arming(checker *C, hs_platform plat, hs_trigger *t)
{
	if (t->has_chance && t->chance <= 0)
		hs_diag_add(C->d, HS_D_TRIGGER_IMPOSSIBLE, t->chance_pos, "give a share above 0, or drop the trigger",
			    "chance 0 never takes a snapshot");
	check_trigger_regex(C, t->arm_while, t->arm_while_node, t->arm_while_pos, "arm_while");
	check_trigger_regex(C, t->cancel_marker, t->cancel_marker_node, t->cancel_marker_pos, "cancel_marker");
	const hs_platform_rules *pr = &C->rs->platforms[plat];
	if (t->cancel_marker && plat != HS_PLATFORM_LINUX)
		hs_diag_add(C->d, HS_D_PLATFORM, t->cancel_marker_pos, "name the event that starts the loading screen in cancel_on",
			    "cancel_marker reads trace_marker text, which only linux has");
	if (!t->n_cancel_on && !t->cancel_marker)
		return;
	/* The cancel events come through the trigger's own stream; a counter
	 * has none, so the first file-circular session that streams them. */
	size_t si = SIZE_MAX;
	if (t->kind == HS_TRIGGER_COUNTER) {
		for (size_t k = 0; t->cancel_marker && k < pr->n_sessions && si == SIZE_MAX; k++)
			if (pr->sessions[k].has_mode && pr->sessions[k].mode == HS_MODE_FILE_CIRCULAR)
				si = k; /* markers reach any key-event session (copy_trace_marker) */
		si = check_evrefs(C, plat, t, t->cancel_on, t->n_cancel_on, "cancel_on", si);
		if (si != SIZE_MAX)
			t->cancel_session = pr->sessions[si].name;
		return;
	}
	si = find_session(pr, t->session);
	if (si != SIZE_MAX)
		check_evrefs(C, plat, t, t->cancel_on, t->n_cancel_on, "cancel_on", si);
}

/* post_delay_ms against the rings: the snapshot is taken post_delay after the
 * hit, so at most half of a ring may be after it; the other half is the
 * history before the hit, which is what the snapshot is for. */
static void check_post_delay(checker *C, hs_platform plat, const hs_trigger *t)
{
	const hs_platform_rules *pr = &C->rs->platforms[plat];
	bool win = plat == HS_PLATFORM_WINDOWS;
	if (win && t->kind != HS_TRIGGER_MANUAL && t->kind != HS_TRIGGER_COUNTER && t->post_delay_pos.line &&
	    t->post_delay_ms < HS_ETW_MIN_POST_DELAY_MS)
		hs_diag_add(C->d, HS_D_POST_DELAY_LATENCY, t->post_delay_pos,
			    "real-time ETW delivers events ~1 s late; give the events after the hit time to arrive",
			    "trigger '%s': post_delay_ms %llu is under %d ms on windows", t->name ? t->name : "?",
			    (unsigned long long)t->post_delay_ms, HS_ETW_MIN_POST_DELAY_MS);
	if (!t->post_delay_pos.line || t->post_delay_ms == 0)
		return;
	double bpe = win ? HS_ETW_RING_BYTES_PER_EVENT : HS_LINUX_RING_BYTES_PER_EVENT;
	size_t rings = 0, rated = 0;
	for (size_t i = 0; i < pr->n_sessions; i++) {
		const hs_session *s = &pr->sessions[i];
		if (!s->has_mode || s->mode != HS_MODE_BUFFERING || !s->ring_mb)
			continue;
		rings++;
		if (!s->expected_rate_eps)
			continue;
		rated++;
		double history = (double)s->ring_mb * MIB / ((double)s->expected_rate_eps * bpe);
		double delay = (double)t->post_delay_ms / 1000.0;
		if (delay > history / 2)
			hs_diag_add(
				C->d, HS_D_POST_DELAY, t->post_delay_pos,
				"lower post_delay_ms or raise ring_mb: half of the ring must hold the time before the hit",
				"trigger '%s' snapshots %.1f s after the hit, but ring '%s' holds ~%.1f s at %llu events/s "
				"(%d B each): at most %.1f s may be after the hit",
				t->name ? t->name : "?", delay, s->name ? s->name : "?", history,
				(unsigned long long)s->expected_rate_eps, (int)bpe, history / 2);
	}
	if (rings && !rated)
		hs_diag_add(C->d, HS_D_POST_DELAY_UNCHECKED, t->pos,
			    "give the buffering session expected_rate_eps (engine --estimate measures it)",
			    "trigger '%s': post_delay_ms %llu cannot be checked against the ring's history",
			    t->name ? t->name : "?", (unsigned long long)t->post_delay_ms);
}

void hs_rules_check_triggers(hs_checker *C, hs_platform plat)
{
	hs_platform_rules *pr = &C->rs->platforms[plat];
	for (size_t i = 0; i < pr->n_triggers; i++) {
		hs_trigger *t = &pr->triggers[i];
		for (size_t j = 0; j < i; j++)
			if (t->name && pr->triggers[j].name && strcmp(t->name, pr->triggers[j].name) == 0) {
				hs_diag_add(C->d, HS_D_DUP_TRIGGER, t->name_pos, "the name names the snapshot folders",
					    "trigger '%s' is already defined at line %u", t->name,
					    pr->triggers[j].pos.line);
				break;
			}
		merge_behaviour(C, pr, t);
		if (!t->has_kind)
			continue;
		check_trigger_keys(C, t);
		switch (t->kind) {
		case HS_TRIGGER_EVENT: check_trigger_event(C, plat, t); break;
		case HS_TRIGGER_REGEX:
			check_trigger_event(C, plat, t);
			check_trigger_regex(C, t->pattern, t->pattern_node, t->pattern_pos, "pattern");
			break;
		case HS_TRIGGER_FRAME_TIME: check_trigger_frame(C, plat, t); break;
		case HS_TRIGGER_MANUAL: break;
		case HS_TRIGGER_DEADLINE: check_trigger_deadline(C, plat, t); break;
		case HS_TRIGGER_COUNTER: check_trigger_counter(C, plat, t); break;
		}
		if (t->kind != HS_TRIGGER_MANUAL)
			check_trigger_arming(C, plat, t);
		check_post_delay(C, plat, t);
	}
}
