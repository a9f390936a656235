/* rules/triggers.c: a profile's `triggers:` and `trigger_defaults:`: their key tables and strict readers (kinds, sources, thresholds, event references, where-filters, behaviour keys). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/rules.h"
#include "rules/keys.h"
#include "rules/rules_int.h"
#include "rules/ynode.h"


static const char *const frame_sources[] = {"trace_marker", "present", "heartbeat", NULL};
static const char *const directions[] = {"above", "below", NULL};

/* Behaviour keys: in trigger_defaults and (overriding them) in each trigger.
 * No key is required here: the checker requires each one from one of the two. */
static const hs_key trigger_behaviour_keys[] = {
	{"warmup_s", HS_KEY_UINT, .max = HS_RULES_MAX_WARMUP_S, HS_AT(hs_trigger, warmup_s),
	 HS_POS_AT(hs_trigger, warmup_pos), .doc = "after start, hits are ignored this long"},
	{"clear_ms", HS_KEY_UINT, .max = HS_RULES_MAX_CLEAR_MS, HS_AT(hs_trigger, clear_ms),
	 HS_POS_AT(hs_trigger, clear_pos), .doc = "re-arm once the condition has been clear this long"},
	{"post_delay_ms", HS_KEY_UINT, .max = HS_RULES_MAX_POST_DELAY_MS, HS_AT(hs_trigger, post_delay_ms),
	 HS_POS_AT(hs_trigger, post_delay_pos), .doc = "keep recording this long after the hit, then snapshot"},
	{"cooldown_s", HS_KEY_UINT, .max = HS_RULES_MAX_COOLDOWN_S, HS_AT(hs_trigger, cooldown_s),
	 HS_POS_AT(hs_trigger, cooldown_pos), .doc = "after a snapshot, hits join it (no new one) this long"},
	{"max_per_hour", HS_KEY_UINT, .min = 1, .max = HS_RULES_MAX_PER_HOUR, HS_AT(hs_trigger, max_per_hour),
	 HS_POS_AT(hs_trigger, max_per_hour_pos), .doc = "rate cap: snapshots of the trigger in any hour"},
	{"keep", HS_KEY_UINT, .min = 1, .max = HS_RULES_MAX_KEEP, HS_AT(hs_trigger, keep),
	 HS_POS_AT(hs_trigger, keep_pos), .doc = "retention: the newest snapshots of the trigger kept"},
	{0},
};
const hs_keytable hs_trigger_defaults_t = {
	"trigger_defaults",    "trigger_defaults", "/definitions/triggerBehaviour", "Triggers", NULL,
	trigger_behaviour_keys};

static void tr_pattern(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)r, (void)k, (void)n;
	if (ok)
		((hs_trigger *)obj)->pattern_node = v;
}

static void tr_slice(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)r, (void)k, (void)n;
	if (ok)
		((hs_trigger *)obj)->slice_node = v;
}

/* The PCRE2 scalars of deadline, counter and arming keys: kept for a caret inside them. */
static void tr_node(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)r, (void)n;
	hs_trigger *t = obj;
	if (!ok)
		return;
	if (strcmp(k->name, "process") == 0)
		t->process_node = v;
	else if (strcmp(k->name, "arm_while") == 0)
		t->arm_while_node = v;
	else if (strcmp(k->name, "cancel_marker") == 0)
		t->cancel_marker_node = v;
}

static void tr_direction(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)v;
	hs_trigger *t = obj;
	if (!ok || r->index < 0)
		return;
	t->has_direction = true;
	t->below = r->index == 1;
}

/* threshold: one number; thresholds: a list of numbers (escalation steps).
 * Both land in thresholds[]; the checker sees which key was written. */
static void tr_thresholds(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)n;
	hs_trigger *t = obj;
	if (!ok || !v)
		return;
	bool list = strcmp(k->name, "thresholds") == 0;
	if (!list) {
		if (t->thresholds)
			return; /* both given: the checker says so */
		if (!(t->thresholds = hs_key_alloc(r, 1, sizeof(*t->thresholds))))
			return;
		t->thresholds[0] = r->num;
		t->n_thresholds = 1;
		return;
	}
	if (v->n == 0 || v->n > HS_RULES_MAX_THRESHOLDS) {
		hs_diag_add(r->d, HS_D_RANGE, v->pos, NULL, "'thresholds' takes 1..%d numbers, not %zu",
			    HS_RULES_MAX_THRESHOLDS, v->n);
		return;
	}
	double *th = hs_key_alloc(r, v->n, sizeof(*th));
	if (!th)
		return;
	for (size_t i = 0; i < v->n; i++)
		if (!hs_key_number(r, v->items[i], "thresholds", 0, (double)HS_RULES_MAX_COUNTER_VALUE, &th[i]))
			return;
	if (t->thresholds)
		return; /* both given: the checker says so */
	t->thresholds = th;
	t->n_thresholds = v->n;
}

/* exit_events, suspend_events, cancel_on: "provider/event" strings (the
 * provider's name may hold no '/'; on Windows the event may be an id). */
static void tr_evrefs(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)n;
	hs_trigger *t = obj;
	if (!ok || !v)
		return;
	hs_trigger_evref *refs = hs_key_alloc(r, v->n + 1, sizeof(*refs));
	if (!refs)
		return;
	size_t cnt = 0;
	for (size_t i = 0; i < v->n; i++) {
		const hs_ynode *it = v->items[i];
		const char *s = hs_key_line(r, it, k->name);
		if (!s)
			continue;
		const char *slash = strrchr(s, '/');
		if (!slash || slash == s || !slash[1]) {
			hs_diag_add(r->d, HS_D_TYPE, it->pos, "write the catalog provider, a slash and the event: sched/sched_process_exit",
				    "'%s' is not provider/event", s);
			continue;
		}
		char *prov = hs_key_alloc(r, (size_t)(slash - s) + 1, 1);
		if (!prov)
			return;
		memcpy(prov, s, (size_t)(slash - s));
		prov[slash - s] = '\0';
		hs_trigger_evref *e = &refs[cnt++];
		*e = (hs_trigger_evref){.provider = prov, .event = slash + 1, .event_id = -1, .pos = it->pos};
		char *end;
		unsigned long id = strtoul(slash + 1, &end, 10);
		if (*end == '\0' && slash[1] >= '0' && slash[1] <= '9' && id <= HS_MAX_EVENT_ID) {
			e->event_id = (int)id;
			e->event = NULL;
		}
	}
	if (strcmp(k->name, "exit_events") == 0) {
		t->exit_events = refs;
		t->n_exit_events = cnt;
	} else if (strcmp(k->name, "suspend_events") == 0) {
		t->suspend_events = refs;
		t->n_suspend_events = cnt;
	} else {
		t->cancel_on = refs;
		t->n_cancel_on = cnt;
	}
}

static void tr_source(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)v;
	if (ok)
		((hs_trigger *)obj)->source = frame_sources[r->index];
}

/* The items of a value that is one scalar or a list of them: the list's items, or v itself (through *one). */
static size_t one_or_list(const hs_ynode *v, const hs_ynode **one, const hs_ynode *const **items)
{
	if (v->type == HS_Y_SEQ) {
		*items = (const hs_ynode *const *)v->items;
		return v->n;
	}
	*one = v;
	*items = one;
	return 1;
}

/* alert: one alert kind or a list of them. */
static void tr_alert(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)ok;
	hs_trigger *t = obj;
	if (!v || v->alias)
		return;
	const hs_ynode *one;
	const hs_ynode *const *items;
	size_t count = one_or_list(v, &one, &items);
	if (count == 0) {
		hs_diag_add(r->d, HS_D_TYPE, v->pos, "name at least one alert kind", "'alert' is an empty list");
		return;
	} else if (v->type != HS_Y_SEQ && v->type != HS_Y_SCALAR) {
		hs_diag_add(r->d, HS_D_TYPE, v->pos, "write one alert kind or a list of them",
			    "'alert' must be a name or a list of names, not %s", hs_ynode_type_name(v));
		return;
	}
	t->alerts = hs_key_alloc(r, count + 1, sizeof(*t->alerts));
	t->alert_pos = hs_key_alloc(r, count + 1, sizeof(*t->alert_pos));
	if (!t->alerts || !t->alert_pos)
		return;
	for (size_t i = 0; i < count; i++) {
		int idx = hs_key_enum(r, items[i], "alert", hs_alert_names);
		if (idx < 0)
			continue;
		t->alert_pos[t->n_alerts] = items[i]->pos;
		t->alerts[t->n_alerts++] = hs_alert_names[idx];
	}
}

/* event: a name, or (Windows) an event id. */
static void tr_event(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)ok;
	hs_trigger *t = obj;
	t->event_id = -1;
	if (!v || v->alias)
		return;
	if (v->type == HS_Y_SCALAR && hs_ynode_value(v) == HS_YV_INT) {
		uint64_t id;
		if (hs_key_uint(r, v, "event", 0, HS_MAX_EVENT_ID, &id))
			t->event_id = (int)id;
		return;
	}
	t->event = hs_key_line(r, v, "event");
}

static bool parse_int64(const char *s, int64_t *out)
{
	bool neg = s[0] == '-';
	if (s[0] == '-' || s[0] == '+')
		s++;
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
		base = s[1] == 'x' ? 16 : 8;
		s += 2;
	}
	if (*s == '\0' || *s == '-' || *s == '+')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end || v > (unsigned long long)INT64_MAX + (neg ? 1u : 0u))
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* where: field -> value or [values]; per field all integers or all strings. */
static void tr_where(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_trigger *t = obj;
	if (!ok)
		return;
	t->where = hs_key_alloc(r, v->n + 1, sizeof(*t->where));
	if (!t->where)
		return;
	for (size_t i = 0; i < v->n; i++) {
		const hs_ynode *key = v->keys[i], *val = v->items[i];
		if (key->type != HS_Y_SCALAR || hs_ynode_value(key) != HS_YV_STR || val->alias)
			continue; /* reported by the YAML layer */
		if (!hs_key_ident_ok(key->str, HS_MAX_IDENT_CHARS, false, true)) {
			hs_diag_add(r->d, HS_D_NAME, key->pos, "payload fields are C identifiers, as in ftrace filters",
				    "'%s' is not a field name", key->str);
			continue;
		}
		hs_trigger_cond *c = &t->where[t->n_where];
		memset(c, 0, sizeof(*c));
		c->field = key->str;
		c->pos = key->pos;
		const hs_ynode *one;
		const hs_ynode *const *items;
		size_t count = one_or_list(val, &one, &items);
		if (count == 0 || val->type == HS_Y_MAP) {
			hs_diag_add(r->d, HS_D_TYPE, val->pos, "write a value or a non-empty list of values",
				    "'%s' must be a value or a list of values, not %s", key->str,
				    count == 0 ? "an empty list" : hs_ynode_type_name(val));
			continue;
		}
		c->strings = items[0]->type == HS_Y_SCALAR && hs_ynode_value(items[0]) == HS_YV_STR;
		c->nums = hs_key_alloc(r, count + 1, sizeof(*c->nums));
		c->strs = hs_key_alloc(r, count + 1, sizeof(*c->strs));
		if (!c->nums || !c->strs)
			return;
		bool good = true;
		for (size_t j = 0; j < count && good; j++) {
			const hs_ynode *it = items[j];
			hs_yvalue yv = it->type == HS_Y_SCALAR ? hs_ynode_value(it) : HS_YV_NULL;
			if (it->alias) {
				good = false;
			} else if (c->strings && yv == HS_YV_STR) {
				c->strs[c->n_values++] = it->str;
			} else if (!c->strings && yv == HS_YV_INT && parse_int64(it->str, &c->nums[c->n_values])) {
				c->n_values++;
			} else if (!c->strings && yv == HS_YV_INT) {
				hs_diag_add(r->d, HS_D_RANGE, it->pos, NULL, "'%s' value %s is not a 64-bit integer",
					    key->str, it->str);
				good = false;
			} else {
				hs_diag_add(r->d, HS_D_TYPE, it->pos,
					    "quote every value to compare strings, or write integers only",
					    "'%s' values must be all integers or all strings; this one is %s", key->str,
					    hs_ynode_type_name(it));
				good = false;
			}
		}
		if (good)
			t->n_where++;
	}
}

static const hs_key trigger_keys[] = {
	{"name", HS_KEY_IDENT, HS_KEY_REQUIRED, HS_AT(hs_trigger, name), HS_POS_AT(hs_trigger, name_pos),
	 .doc = "[A-Za-z0-9_-]{1,64}, unique in the platform; names the snapshot folders"},
	{"kind", HS_KEY_ENUM, HS_KEY_REQUIRED, .values = hs_trigger_kind_names, HS_AT(hs_trigger, kind),
	 HS_POS_AT(hs_trigger, kind_pos), HS_HAS_AT(hs_trigger, has_kind), .doc = "event, regex, frame_time, manual, deadline or counter"},
	{"description", HS_KEY_STR, HS_AT(hs_trigger, description), HS_POS_AT(hs_trigger, description_pos),
	 .doc = "one line"},
	{"session", HS_KEY_IDENT, HS_AT(hs_trigger, session), HS_POS_AT(hs_trigger, session_pos),
	 .doc = "the file-circular session whose stream it watches"},
	{"alert", HS_KEY_CUSTOM, HS_POS_AT(hs_trigger, alerts_pos), .fn = tr_alert,
	 .doc = "event, regex: every whitelisted event with one of these catalog alerts"},
	{"provider", HS_KEY_STR, HS_AT(hs_trigger, provider), HS_POS_AT(hs_trigger, provider_pos),
	 .doc = "event, regex: the catalog provider of the event"},
	{"event", HS_KEY_CUSTOM, HS_POS_AT(hs_trigger, event_pos), .fn = tr_event,
	 .doc = "event, regex: the event's name (Windows: or id)"},
	{"where", HS_KEY_MAP, HS_POS_AT(hs_trigger, where_pos), .fn = tr_where,
	 .doc = "event, regex: payload field -> value or list of values"},
	{"field", HS_KEY_STR, HS_AT(hs_trigger, field), HS_POS_AT(hs_trigger, field_pos),
	 .doc = "regex: the payload field the pattern runs on"},
	{"pattern", HS_KEY_STR, HS_AT(hs_trigger, pattern), HS_POS_AT(hs_trigger, pattern_pos), .fn = tr_pattern,
	 .doc = "regex: PCRE2 pattern"},
	{"source", HS_KEY_ENUM, .values = frame_sources, HS_POS_AT(hs_trigger, source_pos),
	 HS_HAS_AT(hs_trigger, has_source), .fn = tr_source,
	 .doc = "frame_time, deadline: trace_marker (Linux) or present (Windows); deadline: or heartbeat"},
	{"slice", HS_KEY_STR, HS_AT(hs_trigger, slice), HS_POS_AT(hs_trigger, slice_pos), .fn = tr_slice,
	 .doc = "frame_time: PCRE2 pattern a frame slice's name must match"},
	{"threshold_ms", HS_KEY_NUMBER, .max = HS_RULES_MAX_FRAME_MS, HS_AT(hs_trigger, threshold_ms),
	 HS_POS_AT(hs_trigger, threshold_pos), HS_HAS_AT(hs_trigger, has_threshold), .doc = "frame_time: a hitch is longer than this"},
	{"ratio", HS_KEY_NUMBER, .max = HS_RULES_MAX_FRAME_RATIO, HS_AT(hs_trigger, ratio),
	 HS_POS_AT(hs_trigger, ratio_pos), HS_HAS_AT(hs_trigger, has_ratio),
	 .doc = "frame_time: and longer than ratio x the median of the last median_frames frames"},
	{"ceiling_ms", HS_KEY_NUMBER, .min = 1, .max = HS_RULES_MAX_FRAME_MS, HS_AT(hs_trigger, ceiling_ms),
	 HS_POS_AT(hs_trigger, ceiling_pos), .doc = "frame_time: and shorter than this (longer gaps are not frames)"},
	{"median_frames", HS_KEY_UINT, .min = HS_RULES_MIN_MEDIAN_FRAMES, .max = HS_RULES_MAX_MEDIAN_FRAMES,
	 HS_AT(hs_trigger, median_frames), HS_POS_AT(hs_trigger, median_pos),
	 .doc = "frame_time: frames in the running median"},
	{"deadline_ms", HS_KEY_NUMBER, .min = 1, .max = HS_RULES_MAX_FRAME_MS, HS_AT(hs_trigger, deadline_ms),
	 HS_POS_AT(hs_trigger, deadline_pos), .doc = "deadline: hung once no frame or heartbeat came for this long"},
	{"active_frames", HS_KEY_UINT, .min = 2, .max = HS_RULES_MAX_ACTIVE_FRAMES, HS_AT(hs_trigger, active_frames),
	 HS_POS_AT(hs_trigger, active_frames_pos), .doc = "deadline: a process is watched once it made this many frames ..."},
	{"active_s", HS_KEY_NUMBER, .max = HS_RULES_MAX_ACTIVE_S, HS_AT(hs_trigger, active_s),
	 HS_POS_AT(hs_trigger, active_s_pos), .doc = "deadline: ... within this many seconds before its last one"},
	{"exit_events", HS_KEY_LIST, HS_KEY_OF_STR, HS_POS_AT(hs_trigger, exit_events_pos), .fn = tr_evrefs,
	 .doc = "deadline: provider/event: the event's pid exited (no hang)"},
	{"suspend_events", HS_KEY_LIST, HS_KEY_OF_STR, HS_POS_AT(hs_trigger, suspend_events_pos), .fn = tr_evrefs,
	 .doc = "deadline: provider/event: the machine suspends or resumes (every deadline restarts)"},
	{"ignore_debugger", HS_KEY_BOOL, HS_AT(hs_trigger, ignore_debugger), HS_POS_AT(hs_trigger, ignore_debugger_pos),
	 .doc = "deadline: a process under a debugger is not hung"},
	{"resume_snapshot", HS_KEY_BOOL, HS_AT(hs_trigger, resume_snapshot), HS_POS_AT(hs_trigger, resume_pos),
	 .doc = "deadline: a second snapshot when the hung process makes a frame again"},
	{"counter", HS_KEY_ENUM, .values = hs_counter_names, HS_AT(hs_trigger, counter), HS_POS_AT(hs_trigger, counter_pos),
	 HS_HAS_AT(hs_trigger, has_counter), .doc = "counter: what is read"},
	{"direction", HS_KEY_ENUM, .values = directions, HS_POS_AT(hs_trigger, direction_pos), .fn = tr_direction,
	 .doc = "counter: above or below the threshold"},
	{"threshold", HS_KEY_NUMBER, .max = HS_RULES_MAX_COUNTER_VALUE, HS_POS_AT(hs_trigger, threshold1_pos),
	 .fn = tr_thresholds, .doc = "counter: the value, in the counter's unit"},
	{"thresholds", HS_KEY_LIST, HS_POS_AT(hs_trigger, thresholds_pos), .fn = tr_thresholds,
	 .doc = "counter: escalating values, each fires once per incident"},
	{"for_s", HS_KEY_NUMBER, .max = HS_RULES_MAX_FOR_S, HS_AT(hs_trigger, for_s), HS_POS_AT(hs_trigger, for_pos),
	 .doc = "counter: the value must stay beyond the threshold this long (PSI: the kernel's window)"},
	{"sample_ms", HS_KEY_UINT, .min = HS_RULES_MIN_SAMPLE_MS, .max = HS_RULES_MAX_SAMPLE_MS,
	 HS_AT(hs_trigger, sample_ms), HS_POS_AT(hs_trigger, sample_pos), .doc = "counter: read every this many ms (not PSI)"},
	{"process", HS_KEY_STR, HS_AT(hs_trigger, process), HS_POS_AT(hs_trigger, process_pos), .fn = tr_node,
	 .doc = "counter: PCRE2 on the names of the processes a per-process counter reads"},
	{"only_if_worse", HS_KEY_BOOL, HS_AT(hs_trigger, only_if_worse), HS_POS_AT(hs_trigger, only_if_worse_pos),
	 .doc = "counter: a snapshot only when the value is worse than at the previous one"},
	{"chance", HS_KEY_NUMBER, .max = 1, HS_AT(hs_trigger, chance), HS_POS_AT(hs_trigger, chance_pos),
	 HS_HAS_AT(hs_trigger, has_chance),
	 .doc = "the share of hits that become snapshots (snapshot.json weight = 1 / chance)"},
	{"arm_while", HS_KEY_STR, HS_AT(hs_trigger, arm_while), HS_POS_AT(hs_trigger, arm_while_pos), .fn = tr_node,
	 .doc = "armed only while a process whose name matches this PCRE2 runs"},
	{"cancel_on", HS_KEY_LIST, HS_KEY_OF_STR, HS_POS_AT(hs_trigger, cancel_on_pos), .fn = tr_evrefs,
	 .doc = "provider/event: drops a pending snapshot (a loading screen)"},
	{"cancel_marker", HS_KEY_STR, HS_AT(hs_trigger, cancel_marker), HS_POS_AT(hs_trigger, cancel_marker_pos),
	 .fn = tr_node, .doc = "linux: PCRE2 on trace_marker text that drops a pending snapshot"},
	{0},
};
const hs_keytable hs_trigger_t = {"trigger",  "a trigger",         "/definitions/trigger",
				      "Triggers", &hs_trigger_defaults_t, trigger_keys};

void hs_rules_trigger_defaults(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok,
			       void *obj)
{
	(void)k, (void)n;
	hs_platform_rules *pr = obj;
	if (!ok)
		return;
	pr->has_trigger_defaults = true;
	pr->trigger_defaults_pos = v->pos;
	hs_keys_load(r, v, &hs_trigger_defaults_t, &pr->trigger_defaults);
}

/* Each trigger reads its own keys, then the behaviour keys it overrides trigger_defaults with. */
static bool trigger_keep(hs_keyread *r, const hs_ynode *node, void *items, size_t n)
{
	hs_keys_read(r, node, &hs_trigger_defaults_t, (hs_trigger *)items + n);
	return true;
}

void hs_rules_triggers(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *tv, bool ok, void *obj)
{
	(void)k;
	hs_platform_rules *pr = obj;
	if (!ok)
		return;
	pr->triggers_pos = hs_ymap_key(n, "triggers")->pos;
	pr->triggers = hs_keys_load_list(r, tv, &hs_trigger_t, sizeof *pr->triggers, offsetof(hs_trigger, pos),
					 "triggers entry", trigger_keep, &pr->n_triggers);
}
