/* trigger/cond.c: event and regex triggers' conditions (where: sets, a pattern on a field), the marker text frame_time, deadline and cancel_marker read, and the evidence a hit records. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "trigger/trigger_int.h"

/* A field as a string: a string field as it is, an integer one in decimal. */
static bool read_str(const hs_key_event *ev, const char *field, char *buf, size_t cap)
{
	if (ev->fields->str && ev->fields->str(ev, field, buf, cap))
		return true;
	int64_t v;
	if (ev->fields->num && ev->fields->num(ev, field, &v)) {
		snprintf(buf, cap, "%" PRId64, v);
		return true;
	}
	return false;
}

/* A field as an integer: an integer field, or a string field holding one number. */
static bool read_num(const hs_key_event *ev, const char *field, int64_t *out)
{
	if (ev->fields->num && ev->fields->num(ev, field, out))
		return true;
	char buf[32];
	if (!ev->fields->str || !ev->fields->str(ev, field, buf, sizeof buf) || !buf[0])
		return false;
	char *end;
	long long v = strtoll(buf, &end, 0);
	if (*end)
		return false;
	*out = v;
	return true;
}

static bool cond_holds(const hs_trigger_cond *c, const hs_key_event *ev, bool *unreadable)
{
	if (c->strings) {
		char buf[HS_TRIGGER_FIELD_BYTES];
		if (!read_str(ev, c->field, buf, sizeof buf)) {
			*unreadable = true;
			return false;
		}
		for (size_t k = 0; k < c->n_values; k++)
			if (strcmp(buf, c->strs[k]) == 0)
				return true;
		return false;
	}
	int64_t v;
	if (!read_num(ev, c->field, &v)) {
		*unreadable = true;
		return false;
	}
	for (size_t k = 0; k < c->n_values; k++)
		if (v == c->nums[k])
			return true;
	return false;
}

bool hs_trig_cond_match(hs_trig *t, const hs_key_event *ev)
{
	const hs_trigger *tr = t->pt->trigger;
	bool regex = t->kind == HS_TRIGGER_REGEX;
	if (!tr->n_where && !regex)
		return true;
	if (!ev->fields) {
		/* The backend cannot decode payloads: the condition cannot hold. */
		t->st.unreadable++;
		return false;
	}
	bool unreadable = false;
	for (size_t i = 0; i < tr->n_where; i++) {
		if (!cond_holds(&tr->where[i], ev, &unreadable)) {
			if (unreadable)
				t->st.unreadable++;
			return false;
		}
	}
	if (!regex)
		return true;
	char buf[HS_TRIGGER_FIELD_BYTES];
	if (!read_str(ev, tr->field, buf, sizeof buf)) {
		t->st.unreadable++;
		return false;
	}
	return hs_trig_regex(t, t->re, buf);
}

bool hs_trig_regex(hs_trig *t, const hs_regex *re, const char *s)
{
	hs_regex_result r = hs_regex_match_limited(re, s, strlen(s));
	if (r == HS_REGEX_LIMIT)
		t->st.regex_limit_hits++;
	return r == HS_REGEX_MATCH;
}

/* The string field of the ftrace marker event (ftrace/print) that holds the
 * text written to trace_marker: the format of the event, not a choice. */
#define MARKER_FIELD "buf"

bool hs_trig_marker(hs_trig *t, const hs_key_event *ev, char *buf, size_t cap)
{
	if (!ev->fields || !ev->fields->str || !ev->fields->str(ev, MARKER_FIELD, buf, cap)) {
		t->st.unreadable++;
		return false;
	}
	return true;
}

/* Parses "B|<pid>|<name>" (a trailing newline dropped); false for E, C, S,
 * F and anything else. */
static bool parse_begin(char *buf, int *pid, const char **name)
{
	if (buf[0] != 'B' || buf[1] != '|')
		return false;
	char *end;
	long v = strtol(buf + 2, &end, 10);
	if (end == buf + 2 || *end != '|' || v <= 0 || v > INT32_MAX)
		return false;
	*pid = (int)v;
	char *s = end + 1;
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	*name = s;
	return true;
}

bool hs_trig_slice_begin(hs_trig *t, const hs_key_event *ev, char *buf, size_t cap, int *pid, const char **name)
{
	return hs_trig_marker(t, ev, buf, cap) && parse_begin(buf, pid, name) &&
	       (!t->re || hs_trig_regex(t, t->re, *name));
}

void hs_trig_cond_evidence(hs_trig *t, const hs_key_event *ev, hs_json *j)
{
	const hs_trigger *tr = t->pt->trigger;
	if (!ev->fields)
		return;
	char buf[HS_TRIGGER_FIELD_BYTES];
	if (tr->n_where) {
		hs_json_key(j, HS_RUNDOC_HIT_WHERE);
		hs_json_obj_begin(j);
		for (size_t i = 0; i < tr->n_where; i++) {
			const hs_trigger_cond *c = &tr->where[i];
			int64_t v;
			if (c->strings ? read_str(ev, c->field, buf, sizeof buf) : read_num(ev, c->field, &v)) {
				if (c->strings)
					hs_json_kstr(j, c->field, buf);
				else
					hs_json_kint(j, c->field, v);
			}
		}
		hs_json_obj_end(j);
	}
	if (t->kind == HS_TRIGGER_REGEX) {
		hs_json_kstr(j, "field", tr->field);
		hs_json_kstr(j, "value", read_str(ev, tr->field, buf, sizeof buf) ? buf : NULL);
		hs_json_kstr(j, "pattern", tr->pattern);
	}
}

void hs_trig_evidence_begin(const hs_trigger_engine *te, const hs_trig *t, const hs_key_event *ev, hs_json *j)
{
	hs_json_kstr(j, "trigger", t->name);
	hs_json_kstr(j, "kind", hs_trigger_kind_name(t->kind));
	if (ev) {
		hs_json_kuint(j, HS_RUNDOC_HIT_TS, ev->ts_ns); /* keys a report reads: hindsight/rundoc.h */
		const char *session = ev->session < te->plan->n_sessions && te->plan->sessions[ev->session].session
					      ? te->plan->sessions[ev->session].session->name
					      : NULL;
		hs_json_kstr(j, "session", session);
		hs_json_kuint(j, "cpu", ev->cpu);
		hs_json_kint(j, HS_RUNDOC_HIT_PID, ev->pid);
		hs_json_kstr(j, HS_RUNDOC_HIT_SYSTEM, ev->system);
		hs_json_kstr(j, HS_RUNDOC_HIT_EVENT, ev->name);
	}
	if (!t->pt)
		return; /* the built-in manual trigger has no behaviour values */
	const hs_trigger *tr = t->pt->trigger;
	hs_json_key(j, "behaviour");
	hs_json_obj_begin(j);
	hs_json_kuint(j, "warmup_s", tr->warmup_s);
	hs_json_kuint(j, "clear_ms", tr->clear_ms);
	hs_json_kuint(j, "post_delay_ms", tr->post_delay_ms);
	hs_json_kuint(j, "cooldown_s", tr->cooldown_s);
	hs_json_kuint(j, "max_per_hour", tr->max_per_hour);
	hs_json_obj_end(j);
}
