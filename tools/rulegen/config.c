/* rulegen/config.c: the rulegen config (profile, session, scenarios, thresholds, limits, pins), loaded strictly with positions. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
} ld;

static void bad(ld *L, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, ...) HS_PRINTF_FMT(5, 6);

static void bad(ld *L, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	hs_diag_add(L->d, code, pos, hint, "%s", msg);
	if (hs_diag_code_severity(code) == HS_SEV_ERROR)
		L->failed = true;
}

static void check_keys(ld *L, const hs_ynode *map, const char *const *keys, const char *what)
{
	for (size_t i = 0; i < map->n; i++) {
		const hs_ynode *k = map->keys[i];
		if (k->type != HS_Y_SCALAR)
			continue;
		bool known = false;
		for (size_t j = 0; keys[j]; j++)
			known |= strcmp(k->str, keys[j]) == 0;
		if (known)
			continue;
		const char *near = hs_closest(k->str, keys);
		char hint[160];
		if (near)
			snprintf(hint, sizeof hint, "did you mean '%s'?", near);
		bad(L, HS_D_UNKNOWN_KEY, k->pos, near ? hint : NULL, "unknown key '%s' in %s", k->str, what);
	}
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

static const hs_ynode *need(ld *L, const hs_ynode *map, const char *key, const char *what)
{
	const hs_ynode *n = hs_ymap_get(map, key);
	if (!n)
		bad(L, HS_D_MISSING_KEY, map->pos, NULL, "%s needs '%s'", what, key);
	return n;
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

static bool ident_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > HS_MAX_IDENT_CHARS)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
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
		if (!ident_ok(k->str)) {
			bad(L, HS_D_NAME, k->pos, "use 1 to 64 letters, digits, '_' or '-'", "'%s' is not a valid scenario name",
			    k->str);
			continue;
		}
		rg_scenario *s = &cfg->scenarios[cfg->n_scenarios++];
		s->name = k->str;
		s->pos = k->pos;
		if (!want(L, v, HS_Y_MAP, k->str))
			continue;
		static const char *const keys[] = {"full", "filtered", NULL};
		check_keys(L, v, keys, "a scenario");
		const hs_ynode *f = need(L, v, "full", "a scenario");
		if (f)
			load_files(L, f, "full", &s->full, &s->n_full);
		const hs_ynode *g = hs_ymap_get(v, "filtered");
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
	static const char *const keys[] = {"min_top_rate_per_min", "min_specificity", "max_baseline_rate_per_min",
					   "rate_floor_per_min", "max_top_rate_per_min", NULL};
	check_keys(L, n, keys, "thresholds");
	/* Every one is required: the tool has no opinion of its own. */
	const hs_ynode *a = need(L, n, "min_top_rate_per_min", "'thresholds'");
	const hs_ynode *b = need(L, n, "min_specificity", "'thresholds'");
	const hs_ynode *c = need(L, n, "max_baseline_rate_per_min", "'thresholds'");
	const hs_ynode *e = need(L, n, "rate_floor_per_min", "'thresholds'");
	if (a)
		num_of(L, a, "min_top_rate_per_min", 0, false, &cfg->min_top_rate);
	if (b)
		num_of(L, b, "min_specificity", 1, false, &cfg->min_specificity);
	if (c)
		num_of(L, c, "max_baseline_rate_per_min", 0, false, &cfg->max_baseline_rate);
	if (e)
		num_of(L, e, "rate_floor_per_min", 0, true, &cfg->rate_floor);
	/* Optional: a cap for sessions that must stay low-rate (a file that must hold hours). */
	const hs_ynode *f = hs_ymap_get(n, "max_top_rate_per_min");
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
	static const char *const keys[] = {"default", "providers", NULL};
	check_keys(L, n, keys, "limits");
	unsigned max = platform_max_ids(cfg->platform);
	const hs_ynode *d = hs_ymap_get(n, "default");
	if (d && uint_of(L, d, "default", 1, max, &cfg->default_limit)) {
		cfg->has_default_limit = true;
		cfg->default_limit_pos = d->pos;
	}
	const hs_ynode *p = hs_ymap_get(n, "providers");
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
	const char *entry = exclude ? "an exclude entry" : "a keep entry";
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
		static const char *const keys[] = {"provider", "event", "reason", NULL};
		check_keys(L, e, keys, entry);
		const hs_ynode *pn = need(L, e, "provider", entry);
		const hs_ynode *en = need(L, e, "event", entry);
		const hs_ynode *rn = need(L, e, "reason", exclude ? "an exclude entry (why it must never be a key event)"
								   : "a keep entry (why no scenario shows it)");
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
	ld L = {cfg, d, false};
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
	static const char *const keys[] = {"profile", "platform", "session", "baseline", "scenarios",
					   "thresholds", "limits",   "keep",    "exclude", NULL};
	check_keys(&L, root, keys, "the config");
	const char *what = "the config";
	const hs_ynode *n;
	if ((n = need(&L, root, "profile", what)) && (cfg->profile_arg = str_of(&L, n, "profile"))) {
		cfg->profile = resolve(cfg, cfg->profile_arg);
		cfg->profile_pos = n->pos;
	}
	if ((n = need(&L, root, "platform", what))) {
		const char *s = str_of(&L, n, "platform");
		cfg->platform_pos = n->pos;
		if (s && (cfg->platform = hs_platform_parse(s)) == HS_PLATFORM_NONE)
			bad(&L, HS_D_ENUM, n->pos, NULL, "'platform' is '%s'; it must be one of: windows, linux", s);
	}
	if ((n = need(&L, root, "session", what))) {
		cfg->session = str_of(&L, n, "session");
		cfg->session_pos = n->pos;
	}
	const char *baseline = NULL;
	hs_pos baseline_pos = {0};
	if ((n = need(&L, root, "baseline", what))) {
		baseline = str_of(&L, n, "baseline");
		baseline_pos = n->pos;
	}
	if ((n = need(&L, root, "scenarios", what)))
		load_scenarios(&L, n);
	if ((n = need(&L, root, "thresholds", what)))
		load_thresholds(&L, n);
	if ((n = hs_ymap_get(root, "limits")) && cfg->platform != HS_PLATFORM_NONE)
		load_limits(&L, n);
	const hs_ynode *keep = hs_ymap_get(root, "keep"), *excl = hs_ymap_get(root, "exclude");
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
	return !L.failed && hs_diags_errors(d) == 0;
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
