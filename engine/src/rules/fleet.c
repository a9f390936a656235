/* rules/fleet.c: a catalog's `fleet:`, how a report's fleet signature groups incidents: its key tables, its strict reader and its checks (one catalog has it; symptom ids, finding and trigger kinds and signature fields each once; patterns that compile). */
#include <stdio.h>
#include <string.h>

#include "hindsight/keys.h"
#include "hindsight/limits.h"
#include "hindsight/regex.h"
#include "hindsight/strbuf.h"
#include "hindsight/text.h"
#include "rules_int.h"

/* The fields a signature may name after its symptom: what the report layer fills (report/signature.c). */
const char *const hs_fleet_field_names[] = {
	[HS_FLEET_FIELD_APP] = "app",   [HS_FLEET_FIELD_DETAIL] = "detail", [HS_FLEET_FIELD_CAUSE] = "cause",
	[HS_FLEET_FIELD_CULPRIT] = "culprit", [HS_FLEET_FIELD_OS] = "os",   [HS_FLEET_FIELD_COUNT] = NULL};

/* The finding kinds a report gives (schemas/report.schema.json, findings[].kind; the report layer's detector
 * table is below this layer's reach, so they are named here once more: a symptom naming a kind no report gives
 * would never match, silently). */
static const char *const finding_kinds[] = {
	"crash",         "killed",      "oom-kill",     "frame-hitch", "app-hang",     "hang",
	"io-error",      "disconnect",  "alert",        "process-storm", "exit-status", "activity",
	"memory-stall",  "slow-syscall", "gpu-reset",   "device-removed", "trigger",    NULL};

/* One name of a closed list: the index, or -1 after an HS008 with the closest name and the list. */
static int closed_name(hs_keyread *r, const char *s, hs_pos pos, const char *const *all, const char *what)
{
	for (int i = 0; all[i]; i++)
		if (!strcmp(all[i], s))
			return i;
	hs_key_not_in(r, pos, s, all, NULL, "'%s' is not %s; one of: ", s, what);
	return -1;
}

static void check_pattern(hs_keyread *r, const char *s, hs_pos pos, const char *key)
{
	hs_regex *re = NULL;
	char err[160];
	size_t off = 0;
	if (hs_regex_compile(s, &re, err, sizeof err, &off) != HS_OK)
		hs_diag_add(r->d, HS_D_REGEX, pos, "a PCRE2 pattern", "%s does not compile at offset %zu: %s", key, off, err);
	hs_regex_free(re);
}

/* A list of names from a closed list, each once (HS170 for the second). */
static size_t closed_list(hs_keyread *r, const hs_ynode *v, const char *key, const char *const *all, const char *what,
			  const char ***out, const hs_pos **out_pos)
{
	const char **names;
	hs_pos *pos;
	size_t got = hs_key_strlist(r, v, key, &names, &pos);
	size_t o = 0;
	for (size_t i = 0; i < got; i++) {
		if (closed_name(r, names[i], pos[i], all, what) < 0)
			continue;
		bool dup = false;
		for (size_t j = 0; j < o && !dup; j++)
			if (!strcmp(names[j], names[i])) {
				hs_diag_add(r->d, HS_D_FLEET_DUP, pos[i], "give each once", "'%s' is listed twice (first at %u:%u)",
					    names[i], pos[j].line, pos[j].col);
				dup = true;
			}
		if (dup)
			continue;
		names[o] = names[i];
		pos[o++] = pos[i];
	}
	*out = names;
	*out_pos = pos;
	return o;
}

/* findings, triggers: kinds of a closed list, each once. */
static void fs_kinds(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)n;
	hs_fleet_symptom *s = obj;
	if (!ok || !v || v->type != HS_Y_SEQ)
		return;
	if (strcmp(k->name, "findings") == 0)
		s->n_findings = closed_list(r, v, k->name, finding_kinds, "a finding kind a report gives", &s->findings,
					    &s->findings_pos);
	else
		s->n_triggers = closed_list(r, v, k->name, hs_trigger_kind_names, "a trigger kind", &s->triggers,
					    &s->triggers_pos);
}

static void fs_signature(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)n;
	hs_fleet_symptom *s = obj;
	if (!ok || !v || v->type != HS_Y_SEQ)
		return;
	const char **names;
	const hs_pos *pos;
	size_t got = closed_list(r, v, k->name, hs_fleet_field_names, "a signature field", &names, &pos);
	for (size_t i = 0; i < got && s->n_fields < HS_FLEET_FIELD_COUNT; i++)
		for (int f = 0; f < HS_FLEET_FIELD_COUNT; f++)
			if (!strcmp(names[i], hs_fleet_field_names[f]))
				s->fields[s->n_fields++] = (hs_fleet_field)f;
}

static const hs_key symptom_keys[] = {
	{"id", HS_KEY_IDENT, HS_KEY_REQUIRED, HS_AT(hs_fleet_symptom, id), HS_POS_AT(hs_fleet_symptom, id_pos),
	 .doc = "the symptom's id, as report.json's signature.symptom gives it"},
	{"story", HS_KEY_STORY, HS_KEY_REQUIRED, HS_AT(hs_fleet_symptom, story), .doc = "one line: what the symptom is"},
	{"findings", HS_KEY_LIST, HS_KEY_OF_STR, .fn = fs_kinds,
	 .doc = "the report finding kinds whose strongest makes this symptom, each kind in one symptom only"},
	{"triggers", HS_KEY_LIST, HS_KEY_OF_STR, .fn = fs_kinds,
	 .doc = "the trigger kinds that make it when no finding is strong enough (a manual snapshot)"},
	{"signature", HS_KEY_LIST, HS_KEY_REQUIRED | HS_KEY_OF_STR, .fn = fs_signature,
	 .doc = "the fields after the symptom that make its signature, in order: app, detail, cause, culprit, os"},
	{0},
};
const hs_keytable hs_fleet_symptom_t = {"fleet_symptom", "a fleet symptom", "/definitions/fleetSymptom", "Fleet",
					NULL, symptom_keys};

static void fc_match(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)n, (void)obj;
	if (ok && v && v->type == HS_Y_SCALAR)
		check_pattern(r, v->str, v->pos, k->name);
}

static const hs_key culprit_keys[] = {
	{"match", HS_KEY_STR, HS_KEY_REQUIRED, HS_AT(hs_fleet_culprit, match), HS_POS_AT(hs_fleet_culprit, match_pos),
	 .fn = fc_match, .doc = "a PCRE2 pattern over the culprit's normalized name (digits as N, no paths)"},
	{"as", HS_KEY_STR, 0, HS_AT(hs_fleet_culprit, as),
	 .doc = "the name such a culprit becomes; without it the name blames no one (the signature's culprit is none)"},
	{"story", HS_KEY_STORY, HS_KEY_REQUIRED, HS_AT(hs_fleet_culprit, story),
	 .doc = "one line: why such a name is not the culprit as it stands"},
	{0},
};
const hs_keytable hs_fleet_culprit_t = {"fleet_culprit", "a fleet culprit rule", "/definitions/fleetCulprit", "Fleet",
					NULL, culprit_keys};

/* Each of a symptom's kinds (findings or triggers) that an earlier symptom `other` already lists. */
static void kinds_once(hs_keyread *r, const char *what, const char **mine, const hs_pos *mine_pos, size_t n,
		       const hs_fleet_symptom *other, const char **theirs, const hs_pos *their_pos, size_t m)
{
	char hint[64];
	snprintf(hint, sizeof hint, "give a %s kind to one symptom only", what);
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < m; b++)
			if (!strcmp(mine[a], theirs[b]))
				hs_diag_add(r->d, HS_D_FLEET_DUP, mine_pos[a], hint,
					    "%s kind '%s' already makes symptom '%s' (at %u:%u)", what, mine[a], other->id,
					    their_pos[b].line, their_pos[b].col);
}

/* A symptom is kept with its id, once; a finding or trigger kind is one symptom's, so that the signature does not
 * depend on the list's order. */
static bool symptom_keep(hs_keyread *r, const hs_ynode *node, void *items, size_t o)
{
	(void)node;
	hs_fleet_symptom *ss = items, *s = &ss[o];
	if (!s->id)
		return false;
	for (size_t j = 0; j < o; j++)
		if (!strcmp(ss[j].id, s->id)) {
			hs_diag_add(r->d, HS_D_FLEET_DUP, s->id_pos, "give each symptom once",
				    "symptom '%s' is already defined at line %u", s->id, ss[j].id_pos.line);
			return false;
		}
	for (size_t j = 0; j < o; j++) {
		kinds_once(r, "finding", s->findings, s->findings_pos, s->n_findings, &ss[j], ss[j].findings,
			   ss[j].findings_pos, ss[j].n_findings);
		kinds_once(r, "trigger", s->triggers, s->triggers_pos, s->n_triggers, &ss[j], ss[j].triggers,
			   ss[j].triggers_pos, ss[j].n_triggers);
	}
	return true;
}

static void ft_symptoms(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_fleet_rules *fl = obj;
	if (ok && v && v->type == HS_Y_SEQ)
		fl->symptoms = hs_keys_load_list(r, v, &hs_fleet_symptom_t, sizeof *fl->symptoms,
						 offsetof(hs_fleet_symptom, pos), "a fleet symptom", symptom_keep,
						 &fl->n_symptoms);
}

static bool culprit_keep(hs_keyread *r, const hs_ynode *node, void *items, size_t o)
{
	(void)r, (void)node;
	return ((hs_fleet_culprit *)items)[o].match != NULL;
}

static void ft_culprits(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_fleet_rules *fl = obj;
	if (ok && v && v->type == HS_Y_SEQ)
		fl->culprits = hs_keys_load_list(r, v, &hs_fleet_culprit_t, sizeof *fl->culprits,
						 offsetof(hs_fleet_culprit, pos), "a fleet culprit rule", culprit_keep,
						 &fl->n_culprits);
}

static void ft_interpreters(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)n;
	hs_fleet_rules *fl = obj;
	if (!ok || !v || v->type != HS_Y_SEQ)
		return;
	const char **pats;
	hs_pos *pos;
	size_t got = hs_key_strlist(r, v, k->name, &pats, &pos);
	for (size_t i = 0; i < got; i++)
		check_pattern(r, pats[i], pos[i], k->name);
	fl->interpreters = pats;
	fl->interpreters_pos = pos;
	fl->n_interpreters = got;
}

static const hs_key fleet_keys[] = {
	{"version", HS_KEY_UINT, HS_KEY_REQUIRED, .min = 1, .max = 1000000, HS_AT(hs_fleet_rules, version),
	 .doc = "report.json's sig_version: any change of how incidents group bumps it"},
	{"min_impact", HS_KEY_UINT, HS_KEY_REQUIRED, .max = 100, HS_AT(hs_fleet_rules, min_impact),
	 .doc = "a strongest finding under this impact names no symptom: the snapshot's trigger kind does"},
	{"covered_pct", HS_KEY_UINT, HS_KEY_REQUIRED, .max = 100, HS_AT(hs_fleet_rules, covered_pct),
	 .doc = "quality is complete only when the explained window is covered at least this much"},
	{"otherwise", HS_KEY_IDENT, HS_KEY_REQUIRED, HS_AT(hs_fleet_rules, otherwise),
	 HS_POS_AT(hs_fleet_rules, otherwise_pos), .doc = "the symptom when no finding or trigger kind names one"},
	{"symptoms", HS_KEY_LIST, HS_KEY_REQUIRED, .sub = &hs_fleet_symptom_t, .fn = ft_symptoms,
	 .doc = "the symptoms, each once"},
	{"culprits", HS_KEY_LIST, 0, .sub = &hs_fleet_culprit_t, .fn = ft_culprits,
	 .doc = "culprit names that blame no one in particular, and what they become (first match wins)"},
	{"interpreters", HS_KEY_LIST, HS_KEY_OF_STR, .fn = ft_interpreters,
	 .doc = "PCRE2 patterns over an app's name: an interpreter in front of a script"},
	{0},
};
const hs_keytable hs_fleet_t = {"fleet", "the fleet rules", "/definitions/fleet", "Fleet", NULL, fleet_keys};

void hs_rules_cat_fleet(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_ruleset *rs = obj;
	if (!hs_key_once(r, ok, v, rs->fleet.present, rs->fleet.pos, HS_D_FLEET_DUP,
			 "keep one catalog with fleet: (rules/fleet.yaml)", "set of fleet rules"))
		return;
	hs_fleet_rules fl = {.pos = v->pos};
	hs_keys_load(r, v, &hs_fleet_t, &fl);
	if (fl.otherwise) {
		const char *ids[64];
		size_t n_ids = 0;
		bool known = false;
		for (size_t i = 0; i < fl.n_symptoms; i++) {
			known = known || !strcmp(fl.symptoms[i].id, fl.otherwise);
			if (n_ids + 1 < sizeof ids / sizeof ids[0])
				ids[n_ids++] = fl.symptoms[i].id;
		}
		ids[n_ids] = NULL;
		if (!known)
			closed_name(r, fl.otherwise, fl.otherwise_pos, ids, "a symptom of this list");
	}
	fl.present = true;
	rs->fleet = fl;
}
