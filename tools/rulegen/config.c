/* rulegen/config.c: the rulegen config (profile, session, scenarios, thresholds, limits, pins), loaded strictly with positions. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/keys.h"
#include "hindsight/limits.h"
#include "hindsight/ynode.h"
#include "rulegen.h"
#include "hindsight/text.h"

/* A config is a screenful of YAML; anything larger is a mistake. */
#define RG_MAX_CONFIG_BYTES (1024u * 1024u)
/* A pin's reason becomes the evidence "pinned: <reason>", which must fit a story. */
#define RG_PIN_PREFIX "pinned: "
#define RG_MAX_REASON_CHARS (HS_MAX_STORY_CHARS - (int)(sizeof RG_PIN_PREFIX - 1))

typedef struct {
	rg_config *cfg;
	hs_diags *d;
	bool failed;
	hs_keyread r; /* unknown and missing keys go through the shared reader */
} ld;

/*
 * The config's mappings, one table each, so its keys are written down once
 * (name, type, required, doc) and the unknown-key and missing-key checks are
 * the rules loader's. Every key is HS_KEY_MANUAL: the values are read below,
 * because rulegen's wording for types and ranges is its own ("a number",
 * ">= 0", "quote it if a name is meant") and its goldens hold it.
 */
#define RG_KEY(n, t, f, d) {.name = n, .type = t, .flags = HS_KEY_MANUAL | (f), .doc = d}

static const hs_key scenario_keys[] = {
	RG_KEY("full", HS_KEY_CUSTOM, HS_KEY_REQUIRED, "counts of the unfiltered run: a path or a list of paths"),
	RG_KEY("filtered", HS_KEY_CUSTOM, 0, "counts of the run under the current profile: a path or a list of paths"),
	{0},
};
static const hs_keytable scenario_table = {"rulegen_scenario", "a scenario", "", "", NULL, scenario_keys};

/* The threshold keys are required, and reported as "'thresholds' needs ...". */
#define RG_THRESHOLD(n, f, d) {.name = n, .type = HS_KEY_CUSTOM, .flags = HS_KEY_MANUAL | (f), .doc = d, .needs = "'thresholds'"}
static const hs_key thresholds_keys[] = {
	RG_THRESHOLD("min_top_rate_per_min", HS_KEY_REQUIRED, "a number >= 0: a key event's lowest top rate"),
	RG_THRESHOLD("min_specificity", HS_KEY_REQUIRED, "a number >= 1: fault rate over baseline rate"),
	RG_THRESHOLD("max_baseline_rate_per_min", HS_KEY_REQUIRED, "a number >= 0: the highest baseline rate"),
	RG_THRESHOLD("rate_floor_per_min", HS_KEY_REQUIRED, "a number > 0: the rate an absent event counts as"),
	RG_THRESHOLD("max_top_rate_per_min", 0, "a number > 0: a cap for sessions that must stay low-rate"),
	{0},
};
static const hs_keytable thresholds_table = {"rulegen_thresholds", "thresholds", "", "", NULL, thresholds_keys};

static const hs_key limits_keys[] = {
	{.name = "default", .type = HS_KEY_UINT, .flags = HS_KEY_MANUAL, .min = 1, .max = 65535,
	 .doc = "the most event ids per provider (at most 64 on Windows)"},
	RG_KEY("providers", HS_KEY_MAP, 0, "provider name -> its own limit"),
	{0},
};
static const hs_keytable limits_table = {"rulegen_limits", "limits", "", "", NULL, limits_keys};

/* keep: and exclude: entries have the same keys; the reason's wording says what it is for. */
#define RG_PIN_KEYS(why)                                                                                      \
	RG_KEY("provider", HS_KEY_STR, HS_KEY_REQUIRED, "the provider (or ftrace subsystem)"),                      \
	RG_KEY("event", HS_KEY_CUSTOM, HS_KEY_REQUIRED, "an event name, or a numeric id (Windows)"),               \
	{.name = "reason", .type = HS_KEY_STR, .flags = HS_KEY_MANUAL | HS_KEY_REQUIRED,                            \
	 .doc = "one line; the entry's evidence becomes \"pinned: <reason>\"", .needs = why},                    \
	{0}
static const hs_key keep_keys[] = {RG_PIN_KEYS("a keep entry (why no scenario shows it)")};
static const hs_key exclude_keys[] = {RG_PIN_KEYS("an exclude entry (why it must never be a key event)")};
static const hs_keytable keep_table = {"rulegen_keep", "a keep entry", "", "", NULL, keep_keys};
static const hs_keytable exclude_table = {"rulegen_exclude", "an exclude entry", "", "", NULL, exclude_keys};

static const char *const platform_values[] = {"windows", "linux", NULL};
static const hs_key config_keys[] = {
	RG_KEY("profile", HS_KEY_STR, HS_KEY_REQUIRED, "the profile to patch, relative to the config"),
	{.name = "platform", .type = HS_KEY_ENUM, .flags = HS_KEY_MANUAL | HS_KEY_REQUIRED, .values = platform_values,
	 .doc = "the platform the counts were recorded on"},
	RG_KEY("session", HS_KEY_STR, HS_KEY_REQUIRED, "the profile's session to patch"),
	RG_KEY("baseline", HS_KEY_STR, HS_KEY_REQUIRED, "the scenario with no fault"),
	{.name = "scenarios", .type = HS_KEY_MAP, .flags = HS_KEY_MANUAL | HS_KEY_REQUIRED, .sub = &scenario_table,
	 .doc = "scenario name -> its counts; at least two"},
	{.name = "thresholds", .type = HS_KEY_MAP, .flags = HS_KEY_MANUAL | HS_KEY_REQUIRED, .sub = &thresholds_table,
	 .doc = "what makes an event a key event"},
	{.name = "limits", .type = HS_KEY_MAP, .flags = HS_KEY_MANUAL, .sub = &limits_table,
	 .doc = "how many event ids a provider may keep"},
	{.name = "keep", .type = HS_KEY_LIST, .flags = HS_KEY_MANUAL, .sub = &keep_table,
	 .doc = "events kept although no scenario shows them"},
	{.name = "exclude", .type = HS_KEY_LIST, .flags = HS_KEY_MANUAL, .sub = &exclude_table,
	 .doc = "events that must never be key events"},
	{0},
};
static const hs_keytable config_table = {"rulegen_config", "the config", "", "", NULL, config_keys};

static void bad(ld *L, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, ...) HS_PRINTF_FMT(5, 6);

static void bad(ld *L, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rg_vdiag(L->d, code, pos, hint, fmt, ap);
	va_end(ap);
	if (hs_diag_code_severity(code) == HS_SEV_ERROR)
		L->failed = true;
}

static bool want(ld *L, const hs_ynode *n, hs_ytype t, const char *key)
{
	if (n->type == t && !(t == HS_Y_SCALAR && hs_ynode_value(n) == HS_YV_NULL))
		return true;
	if (n->alias)
		return false;
	static const char *const names[] = {"a string", "a list", "a mapping"};
	bad(L, HS_D_TYPE, n->pos, NULL, "'%s' must be %s, not %s", key, names[t], hs_ynode_type_name(n));
	return false;
}

static const char *str_of(ld *L, const hs_ynode *n, const char *key)
{
	if (!want(L, n, HS_Y_SCALAR, key))
		return NULL;
	if (hs_ynode_value(n) != HS_YV_STR) {
		bad(L, HS_D_TYPE, n->pos, "quote it if a name is meant", "'%s' must be a string, not %s", key,
		    hs_ynode_type_name(n));
		return NULL;
	}
	return n->str;
}

static bool num_of(ld *L, const hs_ynode *n, const char *key, double min, bool min_open, double *out)
{
	if (!want(L, n, HS_Y_SCALAR, key))
		return false;
	hs_yvalue v = hs_ynode_value(n);
	if (v != HS_YV_INT && v != HS_YV_FLOAT) {
		bad(L, HS_D_TYPE, n->pos, NULL, "'%s' must be a number, not %s", key, hs_ynode_type_name(n));
		return false;
	}
	double x = strtod(n->str, NULL);
	if (!isfinite(x) || x < min || (min_open && x == min)) {
		bad(L, HS_D_RANGE, n->pos, NULL, "'%s' is %s; it must be %s %g", key, n->str, min_open ? ">" : ">=",
		    min);
		return false;
	}
	*out = x;
	return true;
}

static bool uint_of(ld *L, const hs_ynode *n, const char *key, unsigned min, unsigned max, unsigned *out)
{
	if (!want(L, n, HS_Y_SCALAR, key))
		return false;
	if (hs_ynode_value(n) != HS_YV_INT) {
		bad(L, HS_D_TYPE, n->pos, NULL, "'%s' must be a whole number, not %s", key, hs_ynode_type_name(n));
		return false;
	}
	long long x = strtoll(n->str, NULL, 0);
	if (x < (long long)min || x > (long long)max) {
		bad(L, HS_D_RANGE, n->pos, NULL, "'%s' is %s; it must be %u..%u", key, n->str, min, max);
		return false;
	}
	*out = (unsigned)x;
	return true;
}

/* A path relative to the config's directory, with "dir/.." and "./" folded
 * away (lexically, no links resolved) so messages and diffs show short paths. */
static const char *resolve(rg_config *cfg, const char *rel)
{
	char *p = hs_path_sibling(cfg->path, rel);
	if (!p)
		return NULL;
	bool abs = p[0] == '/';
	size_t n = strlen(p);
	char **seg = calloc(n + 1, sizeof(char *));
	char *out = calloc(n + 2, 1);
	const char *res = NULL;
	if (!seg || !out)
		goto done;
	size_t k = 0;
	for (char *t = strtok(p, "/"); t; t = strtok(NULL, "/")) {
		if (!strcmp(t, "."))
			continue;
		if (!strcmp(t, "..") && k && strcmp(seg[k - 1], "..") != 0)
			k--;
		else if (!(strcmp(t, "..") == 0 && abs && k == 0))
			seg[k++] = t;
	}
	if (abs)
		strcat(out, "/");
	for (size_t i = 0; i < k; i++) {
		if (i)
			strcat(out, "/");
		strcat(out, seg[i]);
	}
	res = hs_arena_strdup(&cfg->arena, *out ? out : ".");
done:
	free(seg);
	free(out);
	free(p);
	return res;
}

/* One file or a list of files (runs that add up). */
static void load_files(ld *L, const hs_ynode *n, const char *key, rg_file **out, size_t *count)
{
	rg_config *cfg = L->cfg;
	const hs_ynode *const *items = (const hs_ynode *const *)&n;
	size_t k = 1;
	if (n->type == HS_Y_SEQ) {
		items = (const hs_ynode *const *)n->items;
		k = n->n;
		if (!k)
			bad(L, HS_D_TYPE, n->pos, NULL, "'%s' is an empty list", key);
	}
	*out = hs_arena_alloc(&cfg->arena, (k + 1) * sizeof(**out));
	if (!*out)
		return;
	for (size_t i = 0; i < k; i++) {
		const char *s = str_of(L, items[i], key);
		if (!s)
			continue;
		if (!*s) {
			bad(L, HS_D_TYPE, items[i]->pos, NULL, "'%s' is an empty path", key);
			continue;
		}
		(*out)[*count].path = resolve(cfg, s);
		(*out)[*count].pos = items[i]->pos;
		(*count)++;
	}
}

static void load_scenarios(ld *L, const hs_ynode *n)
{
	rg_config *cfg = L->cfg;
	if (!want(L, n, HS_Y_MAP, "scenarios"))
		return;
	cfg->scenarios = hs_arena_alloc(&cfg->arena, (n->n + 1) * sizeof(*cfg->scenarios));
	if (!cfg->scenarios)
		return;
	for (size_t i = 0; i < n->n; i++) {
		const hs_ynode *k = n->keys[i], *v = n->items[i];
		if (k->type != HS_Y_SCALAR || hs_ynode_value(k) != HS_YV_STR)
			continue; /* reported by the YAML layer */
		if (!hs_key_ident_ok(k->str, HS_MAX_IDENT_CHARS, true, false)) {
			bad(L, HS_D_NAME, k->pos, "use 1 to 64 letters, digits, '_' or '-'", "'%s' is not a valid scenario name",
			    k->str);
			continue;
		}
		rg_scenario *s = &cfg->scenarios[cfg->n_scenarios++];
		s->name = k->str;
		s->pos = k->pos;
		if (!want(L, v, HS_Y_MAP, k->str))
			continue;
		hs_keys_check_unknown(&L->r, v, &scenario_table);
		const hs_ynode *f = hs_keys_get(&L->r, v, &scenario_table, "full");
		if (f)
			load_files(L, f, "full", &s->full, &s->n_full);
		const hs_ynode *g = hs_keys_get(&L->r, v, &scenario_table, "filtered");
		if (g)
			load_files(L, g, "filtered", &s->filtered, &s->n_filtered);
	}
	if (cfg->n_scenarios < 2)
		bad(L, HS_D_MISSING_KEY, n->pos, "specificity compares scenarios: name the baseline and the faults",
		    "'scenarios' needs at least two entries (a baseline and one fault scenario)");
}

static void load_thresholds(ld *L, const hs_ynode *n)
{
	rg_config *cfg = L->cfg;
	if (!want(L, n, HS_Y_MAP, "thresholds"))
		return;
	const hs_keytable *t = &thresholds_table;
	hs_keys_check_unknown(&L->r, n, t);
	/* Every one is required: the tool has no opinion of its own. */
	const hs_ynode *a = hs_keys_get(&L->r, n, t, "min_top_rate_per_min");
	const hs_ynode *b = hs_keys_get(&L->r, n, t, "min_specificity");
	const hs_ynode *c = hs_keys_get(&L->r, n, t, "max_baseline_rate_per_min");
	const hs_ynode *e = hs_keys_get(&L->r, n, t, "rate_floor_per_min");
	if (a)
		num_of(L, a, "min_top_rate_per_min", 0, false, &cfg->min_top_rate);
	if (b)
		num_of(L, b, "min_specificity", 1, false, &cfg->min_specificity);
	if (c)
		num_of(L, c, "max_baseline_rate_per_min", 0, false, &cfg->max_baseline_rate);
	if (e)
		num_of(L, e, "rate_floor_per_min", 0, true, &cfg->rate_floor);
	/* Optional: a cap for sessions that must stay low-rate (a file that must hold hours). */
	const hs_ynode *f = hs_keys_get(&L->r, n, t, "max_top_rate_per_min");
	if (f)
		num_of(L, f, "max_top_rate_per_min", 0, true, &cfg->max_top_rate);
}

static unsigned platform_max_ids(hs_platform p)
{
	/* ETW's EVENT_ID filter takes at most 64 ids; ftrace has no such cap. */
	return p == HS_PLATFORM_WINDOWS ? HS_ETW_MAX_FILTER_IDS : 65535u;
}

static void load_limits(ld *L, const hs_ynode *n)
{
	rg_config *cfg = L->cfg;
	if (!want(L, n, HS_Y_MAP, "limits"))
		return;
	hs_keys_check_unknown(&L->r, n, &limits_table);
	unsigned max = platform_max_ids(cfg->platform);
	const hs_ynode *d = hs_keys_get(&L->r, n, &limits_table, "default");
	if (d && uint_of(L, d, "default", 1, max, &cfg->default_limit)) {
		cfg->has_default_limit = true;
		cfg->default_limit_pos = d->pos;
	}
	const hs_ynode *p = hs_keys_get(&L->r, n, &limits_table, "providers");
	if (!p || !want(L, p, HS_Y_MAP, "providers"))
		return;
	cfg->limits = hs_arena_alloc(&cfg->arena, (p->n + 1) * sizeof(*cfg->limits));
	if (!cfg->limits)
		return;
	for (size_t i = 0; i < p->n; i++) {
		const hs_ynode *k = p->keys[i];
		if (k->type != HS_Y_SCALAR || hs_ynode_value(k) != HS_YV_STR)
			continue;
		rg_limit *l = &cfg->limits[cfg->n_limits];
		l->provider = k->str;
		l->pos = k->pos;
		if (uint_of(L, p->items[i], k->str, 1, max, &l->max))
			cfg->n_limits++;
	}
}

/* `keep:` and `exclude:` share one list of pins; `room` is both lists' length. */
static void load_pins(ld *L, const hs_ynode *n, bool exclude, size_t room)
{
	rg_config *cfg = L->cfg;
	const char *what = exclude ? "exclude" : "keep";
	const hs_keytable *t = exclude ? &exclude_table : &keep_table;
	if (!want(L, n, HS_Y_SEQ, what))
		return;
	if (!cfg->pins)
		cfg->pins = hs_arena_alloc(&cfg->arena, (room + 1) * sizeof(*cfg->pins));
	if (!cfg->pins)
		return;
	for (size_t i = 0; i < n->n; i++) {
		const hs_ynode *e = n->items[i];
		if (!want(L, e, HS_Y_MAP, exclude ? "exclude entry" : "keep entry"))
			continue;
		hs_keys_check_unknown(&L->r, e, t);
		const hs_ynode *pn = hs_keys_get(&L->r, e, t, "provider");
		const hs_ynode *en = hs_keys_get(&L->r, e, t, "event");
		const hs_ynode *rn = hs_keys_get(&L->r, e, t, "reason");
		rg_pin pin = {.id = -1, .pos = e->pos, .exclude = exclude};
		if (pn) {
			pin.provider = str_of(L, pn, "provider");
			pin.provider_pos = pn->pos;
		}
		if (en && want(L, en, HS_Y_SCALAR, "event")) {
			pin.event_pos = en->pos;
			hs_yvalue v = hs_ynode_value(en);
			if (v == HS_YV_INT) {
				unsigned id;
				if (cfg->platform == HS_PLATFORM_LINUX)
					bad(L, HS_D_PLATFORM, en->pos, "name the ftrace event", "ftrace events have no numeric id");
				else if (uint_of(L, en, "event", 0, HS_MAX_EVENT_ID, &id))
					pin.id = (int)id;
			} else {
				pin.event = str_of(L, en, "event");
			}
		}
		if (rn) {
			pin.reason = str_of(L, rn, "reason");
			size_t len = pin.reason ? hs_utf8_len(pin.reason) : 0;
			if (pin.reason && (len == 0 || strchr(pin.reason, '\n') || strchr(pin.reason, '\r'))) {
				bad(L, HS_D_STORY_FORMAT, rn->pos, "it becomes the entry's evidence: one line",
				    "reason must be one line of 1 to %d characters", RG_MAX_REASON_CHARS);
				pin.reason = NULL;
			} else if (pin.reason && len > (size_t)RG_MAX_REASON_CHARS) {
				bad(L, HS_D_STORY_FORMAT, rn->pos, "it becomes the evidence \"pinned: <reason>\", a story-sized line",
				    "reason is %zu characters long; the limit is %d", len, RG_MAX_REASON_CHARS);
				pin.reason = NULL;
			}
		}
		if (pin.provider && (pin.event || pin.id >= 0) && pin.reason) {
			for (size_t j = 0; j < cfg->n_pins; j++) {
				const rg_pin *o = &cfg->pins[j];
				if (!strcmp(o->provider, pin.provider) && o->id == pin.id &&
				    (o->event && pin.event ? !strcmp(o->event, pin.event) : o->event == pin.event)) {
					bad(L, HS_D_DUP_ID, e->pos, NULL, "this event is already %s at line %u",
					    o->exclude ? "excluded" : "pinned", o->pos.line);
					pin.reason = NULL;
					break;
				}
			}
			if (pin.reason)
				cfg->pins[cfg->n_pins++] = pin;
		}
	}
}

bool rg_config_load(const char *path, hs_diags *d, rg_config **out)
{
	rg_config *cfg = calloc(1, sizeof(*cfg));
	*out = cfg;
	if (!cfg)
		return false;
	ld L = {cfg, d, false, {.d = d, .arena = &cfg->arena}};
	char *text = NULL;
	size_t len = 0;
	hs_status st = hs_read_file(path, RG_MAX_CONFIG_BYTES, &text, &len);
	if (st != HS_OK) {
		hs_diag_add(d, HS_D_INCLUDE, (hs_pos){hs_diags_intern(d, path), 0, 0}, NULL, "cannot read config: %s",
			    hs_strerror(st));
		return false;
	}
	cfg->path = hs_diags_add_source(d, path, text, len);
	bool syntax = false;
	hs_ynode *root = hs_yaml_parse(&cfg->arena, cfg->path, text, len, d, &syntax);
	free(text);
	if (!root) {
		if (!syntax)
			bad(&L, HS_D_MISSING_KEY, (hs_pos){cfg->path, 1, 1}, NULL, "the config is empty");
		return false;
	}
	if (!want(&L, root, HS_Y_MAP, "the config"))
		return false;
	const hs_keytable *t = &config_table;
	hs_keys_check_unknown(&L.r, root, t);
	const hs_ynode *n;
	if ((n = hs_keys_get(&L.r, root, t, "profile")) && (cfg->profile_arg = str_of(&L, n, "profile"))) {
		cfg->profile = resolve(cfg, cfg->profile_arg);
		cfg->profile_pos = n->pos;
	}
	if ((n = hs_keys_get(&L.r, root, t, "platform"))) {
		const char *s = str_of(&L, n, "platform");
		cfg->platform_pos = n->pos;
		if (s && (cfg->platform = hs_platform_parse(s)) == HS_PLATFORM_NONE)
			bad(&L, HS_D_ENUM, n->pos, NULL, "'platform' is '%s'; it must be one of: windows, linux", s);
	}
	if ((n = hs_keys_get(&L.r, root, t, "session"))) {
		cfg->session = str_of(&L, n, "session");
		cfg->session_pos = n->pos;
	}
	const char *baseline = NULL;
	hs_pos baseline_pos = {0};
	if ((n = hs_keys_get(&L.r, root, t, "baseline"))) {
		baseline = str_of(&L, n, "baseline");
		baseline_pos = n->pos;
	}
	if ((n = hs_keys_get(&L.r, root, t, "scenarios")))
		load_scenarios(&L, n);
	if ((n = hs_keys_get(&L.r, root, t, "thresholds")))
		load_thresholds(&L, n);
	if ((n = hs_keys_get(&L.r, root, t, "limits")) && cfg->platform != HS_PLATFORM_NONE)
		load_limits(&L, n);
	const hs_ynode *keep = hs_keys_get(&L.r, root, t, "keep"), *excl = hs_keys_get(&L.r, root, t, "exclude");
	size_t room = (keep && keep->type == HS_Y_SEQ ? keep->n : 0) + (excl && excl->type == HS_Y_SEQ ? excl->n : 0);
	if (keep)
		load_pins(&L, keep, false, room);
	if (excl)
		load_pins(&L, excl, true, room);
	if (baseline && cfg->n_scenarios) {
		bool found = false;
		const char **names = hs_arena_alloc(&cfg->arena, (cfg->n_scenarios + 1) * sizeof(char *));
		for (size_t i = 0; i < cfg->n_scenarios; i++) {
			if (names)
				names[i] = cfg->scenarios[i].name;
			if (!strcmp(cfg->scenarios[i].name, baseline)) {
				cfg->baseline = i;
				found = true;
			}
		}
		if (!found) {
			const char *near = names ? hs_closest(baseline, names) : NULL;
			char hint[160];
			if (near)
				snprintf(hint, sizeof hint, "did you mean '%s'?", near);
			bad(&L, HS_D_ENUM, baseline_pos, near ? hint : "name one of the scenarios",
			    "baseline '%s' is not a scenario", baseline);
		}
	}
	/* Out of memory in the key reader leaves a check undone: not a clean config. */
	return !L.failed && !L.r.oom && hs_diags_errors(d) == 0;
}

bool rg_config_load_counts(rg_config *cfg, hs_diags *d)
{
	bool ok = true;
	for (size_t i = 0; i < cfg->n_scenarios; i++) {
		rg_scenario *s = &cfg->scenarios[i];
		for (size_t k = 0; k < s->n_full; k++)
			ok &= s->full[k].path &&
			      rg_counts_load(&s->full_counts, s->full[k].path, s->name, "full", s->full[k].pos, d);
		for (size_t k = 0; k < s->n_filtered; k++)
			ok &= s->filtered[k].path && rg_counts_load(&s->filtered_counts, s->filtered[k].path, s->name,
								      "filtered", s->filtered[k].pos, d);
	}
	return ok;
}

void rg_config_free(rg_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->n_scenarios; i++) {
		rg_counts_free(&cfg->scenarios[i].full_counts);
		rg_counts_free(&cfg->scenarios[i].filtered_counts);
	}
	hs_arena_free(&cfg->arena);
	free(cfg);
}
