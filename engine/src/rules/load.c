/* rules/load.c: reads rules files (and their includes) into the model, checking structure as it goes. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/rules.h"
#include "rules/rules_int.h"
#include "rules/ynode.h"
#include "util/compat.h"
#include "util/strbuf.h"
#include "util/text.h"

enum { LOAD_NO_INCLUDES = 1 };

typedef struct {
	hs_ruleset *rs;
	hs_arena *arena;
	hs_diags *d;
	unsigned flags;
	/* Canonical paths of the files being loaded, outermost first: a file
	 * found here again is an include cycle. */
	char *stack[HS_MAX_INCLUDE_DEPTH + 1];
	int depth;
	size_t prov_cap, files_cap;
	bool oom;
} loader;

/* ---- small typed accessors; each reports its own diagnostic ---- */

static const char *kstr(const hs_ynode *map, size_t i)
{
	return map->keys[i]->str;
}

static void check_keys(loader *L, const hs_ynode *map, const char *const *allowed, const char *where)
{
	for (size_t i = 0; i < map->n; i++) {
		const hs_ynode *k = map->keys[i];
		if (k->type != HS_Y_SCALAR || k->alias || hs_ynode_value(k) != HS_YV_STR)
			continue; /* reported by the YAML layer */
		bool ok = false;
		for (size_t a = 0; allowed[a]; a++)
			if (strcmp(k->str, allowed[a]) == 0)
				ok = true;
		if (ok)
			continue;
		const char *near = hs_closest(k->str, allowed);
		char hint[128];
		if (near)
			snprintf(hint, sizeof hint, "did you mean '%s'?", near);
		hs_diag_add(L->d, HS_D_UNKNOWN_KEY, k->pos, near ? hint : NULL, "unknown key '%s' in %s", k->str,
			    where);
	}
}

static bool want_type(loader *L, const hs_ynode *n, hs_ytype t, const char *key)
{
	if (n->type == t)
		return true;
	if (n->alias)
		return false;
	const char *need = t == HS_Y_MAP ? "a mapping" : t == HS_Y_SEQ ? "a list" : "a scalar";
	hs_diag_add(L->d, HS_D_TYPE, n->pos, NULL, "'%s' must be %s, not %s", key, need, hs_ynode_type_name(n));
	return false;
}

static hs_ynode *get_map(loader *L, const hs_ynode *map, const char *key)
{
	hs_ynode *n = hs_ymap_get(map, key);
	if (n && !want_type(L, n, HS_Y_MAP, key))
		return NULL;
	return n;
}

static hs_ynode *get_seq(loader *L, const hs_ynode *map, const char *key)
{
	hs_ynode *n = hs_ymap_get(map, key);
	if (n && !want_type(L, n, HS_Y_SEQ, key))
		return NULL;
	return n;
}

static bool require(loader *L, const hs_ynode *map, const char *key, const char *where)
{
	if (hs_ymap_get(map, key))
		return true;
	hs_diag_add(L->d, HS_D_MISSING_KEY, map->pos, NULL, "%s needs '%s'", where, key);
	return false;
}

static const char *node_str(loader *L, const hs_ynode *n, const char *key)
{
	if (n->alias)
		return NULL;
	if (n->type != HS_Y_SCALAR || hs_ynode_value(n) != HS_YV_STR) {
		hs_diag_add(L->d, HS_D_TYPE, n->pos, n->type == HS_Y_SCALAR ? "quote it to make it a string" : NULL,
			    "'%s' must be a string, not %s", key, hs_ynode_type_name(n));
		return NULL;
	}
	return n->str;
}

static const char *get_str(loader *L, const hs_ynode *map, const char *key, hs_pos *pos)
{
	hs_ynode *n = hs_ymap_get(map, key);
	if (!n)
		return NULL;
	if (pos)
		*pos = n->pos;
	const char *s = node_str(L, n, key);
	if (s && (s[0] == '\0' || strchr(s, '\n'))) {
		hs_diag_add(L->d, HS_D_TYPE, n->pos, NULL, "'%s' must be one non-empty line", key);
		return NULL;
	}
	return s;
}

static bool parse_uint(const char *s, uint64_t *out)
{
	int base = 10;
	if (s[0] == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
		base = s[1] == 'x' ? 16 : 8;
		s += 2;
	}
	if (*s == '-' || *s == '\0')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static bool node_uint(loader *L, const hs_ynode *n, const char *key, uint64_t min, uint64_t max, uint64_t *out)
{
	if (n->alias)
		return false;
	if (n->type != HS_Y_SCALAR || hs_ynode_value(n) != HS_YV_INT) {
		hs_diag_add(L->d, HS_D_TYPE, n->pos, NULL, "'%s' must be an integer, not %s", key,
			    hs_ynode_type_name(n));
		return false;
	}
	uint64_t v;
	if (!parse_uint(n->str, &v) || v < min || v > max) {
		hs_diag_add(L->d, HS_D_RANGE, n->pos, NULL, "'%s' is %s; it must be %llu..%llu", key, n->str,
			    (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	*out = v;
	return true;
}

static bool get_uint(loader *L, const hs_ynode *map, const char *key, uint64_t min, uint64_t max, uint64_t *out,
		     hs_pos *pos)
{
	hs_ynode *n = hs_ymap_get(map, key);
	if (!n)
		return false;
	if (pos)
		*pos = n->pos;
	return node_uint(L, n, key, min, max, out);
}

static bool get_bool(loader *L, const hs_ynode *map, const char *key, bool *out, hs_pos *pos)
{
	hs_ynode *n = hs_ymap_get(map, key);
	if (!n)
		return false;
	if (pos)
		*pos = n->pos;
	if (n->alias)
		return false;
	if (n->type != HS_Y_SCALAR || hs_ynode_value(n) != HS_YV_BOOL) {
		hs_diag_add(L->d, HS_D_TYPE, n->pos, NULL, "'%s' must be true or false, not %s", key,
			    hs_ynode_type_name(n));
		return false;
	}
	*out = n->str[0] == 't' || n->str[0] == 'T';
	return true;
}

static int pick(loader *L, const hs_ynode *n, const char *key, const char *const *names)
{
	const char *s = node_str(L, n, key);
	if (!s)
		return -1;
	for (int i = 0; names[i]; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	const char *near = hs_closest(s, names);
	hs_strbuf list = {0};
	for (int i = 0; names[i]; i++)
		hs_sb_printf(&list, "%s%s", i ? ", " : "", names[i]);
	char hint[160];
	if (near)
		snprintf(hint, sizeof hint, "did you mean '%s'?", near);
	hs_diag_add(L->d, HS_D_ENUM, n->pos, near ? hint : NULL, "'%s' is '%s'; it must be one of: %s", key, s,
		    hs_sb_cstr(&list));
	hs_sb_free(&list);
	return -1;
}

static bool ident_ok(const char *s, size_t max, bool allow_dash, bool first_alpha)
{
	size_t n = strlen(s);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (c >= '0' && c <= '9' && !(i == 0 && first_alpha)) || (allow_dash && c == '-');
		if (!ok)
			return false;
	}
	return true;
}

static const char *get_ident(loader *L, const hs_ynode *map, const char *key, hs_pos *pos)
{
	hs_pos p;
	const char *s = get_str(L, map, key, &p);
	if (pos)
		*pos = p;
	if (s && !ident_ok(s, HS_MAX_IDENT_CHARS, true, false)) {
		hs_diag_add(L->d, HS_D_NAME, p, "use 1 to 64 letters, digits, '_' or '-'",
			    "'%s' is not a valid %s", s, key);
		return NULL;
	}
	return s;
}

/* A story, or an entry's generated `evidence` (key), which stands in for one
 * and so has the same shape: one line of 1..HS_MAX_STORY_CHARS characters. */
static const char *node_story_key(loader *L, const hs_ynode *n, const char *key)
{
	const char *s = node_str(L, n, key);
	if (!s)
		return NULL;
	size_t len = hs_utf8_len(s);
	/* A block scalar keeps its final newline; a story still must be one line. */
	if (len == 0 || strchr(s, '\n') || strchr(s, '\r')) {
		hs_diag_add(L->d, HS_D_STORY_FORMAT, n->pos, "write one line a person can read next to the event",
			    len == 0 ? "%s is empty" : "%s spans more than one line", key);
		return NULL;
	}
	if (len > HS_MAX_STORY_CHARS) {
		hs_diag_add(L->d, HS_D_STORY_FORMAT, n->pos, "shorten it; details belong in docs/",
			    "%s is %zu characters long; the limit is %d", key, len, HS_MAX_STORY_CHARS);
		return NULL;
	}
	return s;
}

static const char *node_story(loader *L, const hs_ynode *n)
{
	return node_story_key(L, n, "story");
}

static bool node_guid(loader *L, const hs_ynode *n, const char *key, hs_guid *g)
{
	const char *s = node_str(L, n, key);
	if (!s)
		return false;
	if (s[0] == '{' || !hs_guid_parse(s, g)) {
		hs_diag_add(L->d, HS_D_GUID, n->pos, "write it as XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX (hex digits)",
			    "'%s' is not a valid GUID", s);
		return false;
	}
	return true;
}

/* Collects a list of strings (key names). Returns the count; 0 on error. */
static size_t str_list(loader *L, const hs_ynode *seq, const char *key, const char ***out, hs_pos **pos)
{
	*out = hs_arena_alloc(L->arena, (seq->n + 1) * sizeof(char *));
	*pos = hs_arena_alloc(L->arena, (seq->n + 1) * sizeof(hs_pos));
	if (!*out || !*pos) {
		L->oom = true;
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < seq->n; i++) {
		const char *s = node_str(L, seq->items[i], key);
		if (s) {
			(*pos)[n] = seq->items[i]->pos;
			(*out)[n++] = s;
		}
	}
	return n;
}

/* ---- catalogs ---- */

static const char *const provider_kinds[] = {"manifest", "tracelogging", "system", "ftrace", NULL};

static void load_cat_event(loader *L, const hs_ynode *n, hs_provider *p, hs_cat_event *e)
{
	static const char *const keys[] = {"id", "name", "story", "keywords", "name_guessed", "classic_guid", "alert", NULL};
	e->id = -1;
	e->pos = n->pos;
	if (!want_type(L, n, HS_Y_MAP, "events entry"))
		return;
	check_keys(L, n, keys, "a catalog event");
	uint64_t id;
	if (get_uint(L, n, "id", 0, HS_MAX_EVENT_ID, &id, NULL))
		e->id = (int)id;
	bool ftrace = p->kind == HS_PKIND_FTRACE;
	if (ftrace && hs_ymap_get(n, "id"))
		hs_diag_add(L->d, HS_D_KIND_KEY, hs_ymap_get(n, "id")->pos, "ftrace events are named, not numbered",
			    "an event of an ftrace provider has no 'id'");
	if (!ftrace && !hs_ymap_get(n, "id"))
		hs_diag_add(L->d, HS_D_KIND_KEY, n->pos, NULL, "an event of a %s provider needs 'id'",
			    provider_kinds[p->kind]);
	require(L, n, "name", "a catalog event");
	require(L, n, "story", "a catalog event");
	hs_pos name_pos;
	e->name = get_str(L, n, "name", &name_pos);
	if (e->name && hs_utf8_len(e->name) > HS_MAX_PROVIDER_NAME_CHARS) {
		hs_diag_add(L->d, HS_D_NAME, name_pos, NULL, "event name is longer than %d characters",
			    HS_MAX_PROVIDER_NAME_CHARS);
		e->name = NULL;
	}
	hs_ynode *sn = hs_ymap_get(n, "story");
	if (sn)
		e->story = node_story(L, sn);
	get_bool(L, n, "name_guessed", &e->name_guessed, NULL);
	hs_ynode *an = hs_ymap_get(n, "alert");
	if (an) {
		int k = pick(L, an, "alert", hs_alert_names);
		if (k >= 0)
			e->alert = hs_alert_names[k];
	}
	hs_ynode *kw = get_seq(L, n, "keywords");
	if (kw)
		e->n_keywords = str_list(L, kw, "keywords", &e->keywords, &e->keyword_pos);
	hs_ynode *cg = hs_ymap_get(n, "classic_guid");
	if (cg) {
		if (p->kind != HS_PKIND_SYSTEM)
			hs_diag_add(L->d, HS_D_KIND_KEY, cg->pos, NULL,
				    "'classic_guid' belongs to events of system providers only");
		else
			e->has_classic_guid = node_guid(L, cg, "classic_guid", &e->classic_guid);
		e->classic_guid_given = true;
	}
}

static void load_provider(loader *L, const hs_ynode *n, hs_platform platform, hs_provider *p)
{
	static const char *const keys[] = {"name", "kind", "guid", "system", "description", "keywords", "events", NULL};
	p->pos = n->pos;
	p->platform = platform;
	p->kind = HS_PKIND_MANIFEST;
	if (!want_type(L, n, HS_Y_MAP, "providers entry"))
		return;
	check_keys(L, n, keys, "a provider");
	require(L, n, "name", "a provider");
	require(L, n, "kind", "a provider");
	hs_pos np;
	p->name = get_str(L, n, "name", &np);
	if (p->name && hs_utf8_len(p->name) > HS_MAX_PROVIDER_NAME_CHARS) {
		hs_diag_add(L->d, HS_D_NAME, np, NULL, "provider name is longer than %d characters",
			    HS_MAX_PROVIDER_NAME_CHARS);
	}
	hs_ynode *kn = hs_ymap_get(n, "kind");
	if (kn) {
		int k = pick(L, kn, "kind", provider_kinds);
		if (k >= 0)
			p->kind = (hs_provider_kind)k;
	}
	p->description = get_str(L, n, "description", NULL);
	bool ftrace = p->kind == HS_PKIND_FTRACE;
	hs_ynode *gn = hs_ymap_get(n, "guid");
	if (gn) {
		p->guid_pos = gn->pos;
		if (ftrace)
			hs_diag_add(L->d, HS_D_KIND_KEY, gn->pos, NULL, "an ftrace provider has no 'guid'");
		else
			p->has_guid = node_guid(L, gn, "guid", &p->guid);
	} else if (!ftrace && kn) {
		hs_diag_add(L->d, HS_D_KIND_KEY, n->pos, NULL, "a %s provider needs 'guid'", provider_kinds[p->kind]);
	}
	hs_ynode *sn = hs_ymap_get(n, "system");
	if (sn) {
		if (!ftrace) {
			hs_diag_add(L->d, HS_D_KIND_KEY, sn->pos, NULL, "only ftrace providers have 'system'");
		} else {
			p->system = node_str(L, sn, "system");
			if (p->system && !ident_ok(p->system, HS_MAX_IDENT_CHARS, false, false)) {
				hs_diag_add(L->d, HS_D_NAME, sn->pos, NULL, "'%s' is not an ftrace event system name",
					    p->system);
				p->system = NULL;
			}
		}
	} else if (ftrace) {
		hs_diag_add(L->d, HS_D_KIND_KEY, n->pos, "name the directory under events/, e.g. 'sched'",
			    "an ftrace provider needs 'system'");
	}
	hs_ynode *kw = get_map(L, n, "keywords");
	if (kw && ftrace) {
		hs_diag_add(L->d, HS_D_KIND_KEY, kw->pos, NULL, "ftrace providers have no keywords");
	} else if (kw) {
		p->keywords = hs_arena_alloc(L->arena, (kw->n + 1) * sizeof(*p->keywords));
		if (!p->keywords) {
			L->oom = true;
			return;
		}
		for (size_t i = 0; i < kw->n; i++) {
			const char *name = kstr(kw, i);
			if (hs_ynode_value(kw->keys[i]) != HS_YV_STR)
				continue; /* already reported by the YAML layer */
			if (!ident_ok(name, HS_MAX_IDENT_CHARS, false, true)) {
				hs_diag_add(L->d, HS_D_NAME, kw->keys[i]->pos, NULL, "'%s' is not a valid keyword name",
					    name);
				continue;
			}
			hs_keyword *k = &p->keywords[p->n_keywords];
			k->name = name;
			k->pos = kw->keys[i]->pos;
			if (node_uint(L, kw->items[i], name, 1, UINT64_MAX, &k->mask))
				p->n_keywords++;
		}
	}
	hs_ynode *ev = get_seq(L, n, "events");
	if (ev) {
		p->events = hs_arena_alloc(L->arena, (ev->n + 1) * sizeof(*p->events));
		if (!p->events) {
			L->oom = true;
			return;
		}
		for (size_t i = 0; i < ev->n; i++)
			load_cat_event(L, ev->items[i], p, &p->events[p->n_events++]);
	}
}

/* ---- profiles ---- */

static const char *const modes[] = {"file-circular", "buffering", "sampling", NULL};
static const char *const levels[] = {"logalways", "critical", "error", "warning", "information", "verbose", NULL};

/* Reads one whitelist or stack-list entry: a bare id, a bare name, or a map. */
static bool load_wl_entry(loader *L, const hs_ynode *n, hs_wl_entry *w, bool stacks)
{
	static const char *const keys[] = {"id", "name", "story", "evidence", "filter", NULL};
	memset(w, 0, sizeof(*w));
	w->id = -1;
	w->pos = n->pos;
	if (n->alias)
		return false;
	if (n->type == HS_Y_SCALAR) {
		hs_yvalue v = hs_ynode_value(n);
		if (v == HS_YV_INT) {
			uint64_t id;
			if (!node_uint(L, n, "id", 0, HS_MAX_EVENT_ID, &id))
				return false;
			w->id = (int)id;
			return true;
		}
		if (v == HS_YV_STR && n->len > 0) {
			w->name = n->str;
			return true;
		}
		hs_diag_add(L->d, HS_D_TYPE, n->pos, NULL, "an event entry must be an id, a name or a mapping, not %s",
			    hs_ynode_type_name(n));
		return false;
	}
	if (!want_type(L, n, HS_Y_MAP, "event entry"))
		return false;
	check_keys(L, n, stacks ? (const char *const[]){"id", "name", NULL} : keys, "an event entry");
	uint64_t id;
	if (get_uint(L, n, "id", 0, HS_MAX_EVENT_ID, &id, NULL))
		w->id = (int)id;
	w->name = get_str(L, n, "name", NULL);
	if (!hs_ymap_get(n, "id") && !hs_ymap_get(n, "name")) {
		hs_diag_add(L->d, HS_D_ONE_OF, n->pos, NULL, "an event entry needs 'id' or 'name'");
		return false;
	}
	hs_ynode *sn = hs_ymap_get(n, "story");
	if (sn)
		w->story = node_story(L, sn);
	hs_ynode *en = hs_ymap_get(n, "evidence");
	if (en) {
		w->evidence_pos = en->pos;
		w->evidence = node_story_key(L, en, "evidence");
	}
	w->filter = get_str(L, n, "filter", &w->filter_pos);
	return true;
}

static hs_wl_entry *load_wl(loader *L, const hs_ynode *seq, size_t *count, bool stacks)
{
	hs_wl_entry *v = hs_arena_alloc(L->arena, (seq->n + 1) * sizeof(*v));
	if (!v) {
		L->oom = true;
		return NULL;
	}
	size_t n = 0;
	for (size_t i = 0; i < seq->n; i++)
		if (load_wl_entry(L, seq->items[i], &v[n], stacks))
			n++;
	*count = n;
	return v;
}

static void load_session_provider(loader *L, const hs_ynode *n, hs_session_provider *sp)
{
	static const char *const keys[] = {"provider",	    "match",	     "level",  "keywords", "keywords_all",
					   "ignore_keyword_0", "capture_state", "stacks", "events",   NULL};
	sp->pos = n->pos;
	if (!want_type(L, n, HS_Y_MAP, "providers entry"))
		return;
	check_keys(L, n, keys, "a session provider");
	sp->provider = get_str(L, n, "provider", &sp->provider_pos);
	sp->match = get_str(L, n, "match", &sp->match_pos);
	if (sp->match)
		sp->match_node = hs_ymap_get(n, "match");
	bool hp = hs_ymap_get(n, "provider") != NULL, hm = hs_ymap_get(n, "match") != NULL;
	if (hp == hm)
		hs_diag_add(L->d, HS_D_ONE_OF, n->pos, "name one provider, or select several with a PCRE2 pattern",
			    hp ? "give either 'provider' or 'match', not both" : "a session provider needs 'provider' or 'match'");
	hs_ynode *lv = hs_ymap_get(n, "level");
	if (lv) {
		sp->level_pos = lv->pos;
		if (lv->type == HS_Y_SCALAR && hs_ynode_value(lv) == HS_YV_INT) {
			uint64_t v;
			if (node_uint(L, lv, "level", 0, 255, &v)) {
				sp->level = (int)v;
				sp->has_level = true;
			}
		} else {
			int k = pick(L, lv, "level", levels);
			if (k >= 0) {
				sp->level = k;
				sp->has_level = true;
			}
		}
	}
	hs_ynode *kw = hs_ymap_get(n, "keywords");
	if (kw) {
		sp->keywords_pos = hs_ymap_key(n, "keywords")->pos;
		if (kw->type == HS_Y_SCALAR && hs_ynode_value(kw) == HS_YV_STR && strcmp(kw->str, "all") == 0) {
			sp->keywords_given = sp->keywords_any_all = true;
		} else if (kw->type == HS_Y_SEQ && kw->n == 0) {
			/* MatchAnyKeyword 0 would mean "all": an empty list must not. */
			sp->keywords_given = true;
			hs_diag_add(L->d, HS_D_TYPE, kw->pos, "write 'all' to take every keyword, or name at least one",
				    "'keywords' is an empty list");
		} else if (kw->type == HS_Y_SEQ) {
			sp->keywords_given = true;
			sp->n_keywords = str_list(L, kw, "keywords", &sp->keywords, &sp->keyword_pos);
		} else if (!kw->alias) {
			hs_diag_add(L->d, HS_D_TYPE, kw->pos, "write 'all' or a list of keyword names",
				    "'keywords' must be 'all' or a list of names, not %s", hs_ynode_type_name(kw));
		}
	}
	hs_ynode *ka = get_seq(L, n, "keywords_all");
	if (ka)
		sp->n_keywords_all = str_list(L, ka, "keywords_all", &sp->keywords_all, &sp->keywords_all_pos);
	get_bool(L, n, "ignore_keyword_0", &sp->ignore_keyword_0, &sp->ignore_keyword_0_pos);
	get_bool(L, n, "capture_state", &sp->capture_state, &sp->capture_state_pos);
	hs_ynode *st = hs_ymap_get(n, "stacks");
	if (st) {
		sp->stacks_pos = st->pos;
		hs_yvalue v = st->type == HS_Y_SCALAR ? hs_ynode_value(st) : HS_YV_STR;
		if (st->type == HS_Y_SCALAR && v == HS_YV_BOOL && (st->str[0] == 'f' || st->str[0] == 'F')) {
			sp->stacks = HS_STACKS_NONE;
		} else if (st->type == HS_Y_SCALAR && v == HS_YV_STR && strcmp(st->str, "all") == 0) {
			sp->stacks = HS_STACKS_ALL;
		} else if (st->type == HS_Y_SEQ) {
			sp->stacks = HS_STACKS_LIST;
			sp->stack_events = load_wl(L, st, &sp->n_stack_events, true);
		} else if (!st->alias) {
			hs_diag_add(L->d, HS_D_TYPE, st->pos, "write false, 'all' or a list of event ids or names",
				    "'stacks' must be false, 'all' or a list, not %s", hs_ynode_type_name(st));
		}
	}
	hs_ynode *ev = get_seq(L, n, "events");
	if (ev) {
		sp->has_events = true;
		sp->events_pos = hs_ymap_key(n, "events")->pos;
		sp->events = load_wl(L, ev, &sp->n_events, false);
	}
}

static void load_session(loader *L, const hs_ynode *n, hs_session *s)
{
	static const char *const keys[] = {"name",	   "logger_name",      "mode",	  "clock",     "buffer_size_kb",
					   "min_buffers",  "max_buffers",      "max_file_mb", "flush_interval_s",
					   "ring_mb",	   "sample_hz",	       "call_graph",  "output",    "providers",
					   NULL};
	s->pos = n->pos;
	if (!want_type(L, n, HS_Y_MAP, "sessions entry"))
		return;
	check_keys(L, n, keys, "a session");
	require(L, n, "name", "a session");
	require(L, n, "logger_name", "a session");
	require(L, n, "clock", "a session");
	require(L, n, "output", "a session");
	require(L, n, "providers", "a session");
	s->name = get_ident(L, n, "name", &s->name_pos);
	s->logger_name = get_str(L, n, "logger_name", &s->logger_pos);
	if (s->logger_name && hs_utf8_len(s->logger_name) > HS_ETW_MAX_NAME_CHARS) {
		hs_diag_add(L->d, HS_D_NAME, s->logger_pos, NULL, "logger_name is longer than %d characters",
			    HS_ETW_MAX_NAME_CHARS);
		s->logger_name = NULL;
	}
	s->clock = get_str(L, n, "clock", &s->clock_pos);
	s->output = get_str(L, n, "output", &s->output_pos);
	if (s->output && hs_utf8_len(s->output) > HS_MAX_OUTPUT_NAME_CHARS) {
		hs_diag_add(L->d, HS_D_NAME, s->output_pos, NULL, "output is longer than %d characters",
			    HS_MAX_OUTPUT_NAME_CHARS);
		s->output = NULL;
	}
	int mode = -1;
	hs_ynode *mn = hs_ymap_get(n, "mode");
	if (mn) {
		s->mode_pos = mn->pos;
		mode = pick(L, mn, "mode", modes);
	} else {
		require(L, n, "mode", "a session");
	}
	get_uint(L, n, "buffer_size_kb", 1, UINT32_MAX, &s->buffer_size_kb, &s->buffer_size_pos);
	get_uint(L, n, "min_buffers", 1, UINT32_MAX, &s->min_buffers, &s->min_buffers_pos);
	get_uint(L, n, "max_buffers", 1, UINT32_MAX, &s->max_buffers, &s->max_buffers_pos);
	get_uint(L, n, "max_file_mb", 1, UINT32_MAX, &s->max_file_mb, &s->max_file_pos);
	get_uint(L, n, "flush_interval_s", 1, UINT32_MAX, &s->flush_interval_s, &s->flush_pos);
	get_uint(L, n, "ring_mb", 1, UINT32_MAX, &s->ring_mb, &s->ring_pos);
	get_uint(L, n, "sample_hz", 1, UINT32_MAX, &s->sample_hz, &s->sample_pos);
	hs_ynode *cg = hs_ymap_get(n, "call_graph");
	if (cg) {
		s->call_graph_pos = cg->pos;
		int k = pick(L, cg, "call_graph", (const char *const[]){"none", "fp", NULL});
		if (k >= 0) {
			s->has_call_graph = true;
			s->call_graph = (hs_call_graph)k;
		}
	}
	if (mode >= 0) {
		s->mode = (hs_session_mode)mode;
		s->has_mode = true;
		/* Which size keys make sense is a property of the mode alone, so
		 * this is structural (the JSON Schema says the same with if/then). */
		static const struct {
			hs_session_mode mode;
			const char *required, *forbidden[4];
		} rules[] = {
			{HS_MODE_FILE_CIRCULAR, "max_file_mb", {"ring_mb", "sample_hz", "call_graph", NULL}},
			{HS_MODE_BUFFERING, "ring_mb", {"max_file_mb", "flush_interval_s", "sample_hz", "call_graph"}},
			{HS_MODE_SAMPLING, "sample_hz", {"ring_mb", "max_file_mb", NULL, NULL}},
		};
		for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
			if (rules[r].mode != s->mode)
				continue;
			if (!hs_ymap_get(n, rules[r].required))
				hs_diag_add(L->d, HS_D_MODE_KEY, s->mode_pos, NULL, "a %s session needs '%s'",
					    modes[mode], rules[r].required);
			for (int f = 0; f < 4 && rules[r].forbidden[f]; f++) {
				hs_ynode *bad = hs_ymap_get(n, rules[r].forbidden[f]);
				if (bad)
					hs_diag_add(L->d, HS_D_MODE_KEY, bad->pos, NULL,
						    "'%s' has no meaning in a %s session", rules[r].forbidden[f],
						    modes[mode]);
			}
		}
	}
	hs_ynode *pv = get_seq(L, n, "providers");
	if (pv) {
		if (pv->n == 0)
			hs_diag_add(L->d, HS_D_MISSING_KEY, pv->pos, NULL, "a session needs at least one provider");
		s->providers = hs_arena_alloc(L->arena, (pv->n + 1) * sizeof(*s->providers));
		if (!s->providers) {
			L->oom = true;
			return;
		}
		for (size_t i = 0; i < pv->n; i++)
			load_session_provider(L, pv->items[i], &s->providers[s->n_providers++]);
	}
}

static void load_platforms(loader *L, const hs_ynode *n)
{
	static const char *const keys[] = {"windows", "linux", NULL};
	check_keys(L, n, keys, "platforms");
	for (int p = HS_PLATFORM_WINDOWS; p < HS_PLATFORM_COUNT; p++) {
		hs_ynode *pn = get_map(L, n, hs_platform_name((hs_platform)p));
		if (!pn)
			continue;
		hs_platform_rules *pr = &L->rs->platforms[p];
		pr->present = true;
		pr->pos = pn->pos;
		check_keys(L, pn, (const char *const[]){"sessions", NULL}, "a platform section");
		require(L, pn, "sessions", "a platform section");
		hs_ynode *ss = get_seq(L, pn, "sessions");
		if (!ss)
			continue;
		pr->sessions = hs_arena_alloc(L->arena, (ss->n + 1) * sizeof(*pr->sessions));
		if (!pr->sessions) {
			L->oom = true;
			return;
		}
		for (size_t i = 0; i < ss->n; i++)
			load_session(L, ss->items[i], &pr->sessions[pr->n_sessions++]);
	}
}

static void load_run(loader *L, const hs_ynode *n)
{
	static const char *const keys[] = {"dir", "name_format", "log", "manifest", "stats_interval_s", NULL};
	hs_run_rules *r = &L->rs->run;
	check_keys(L, n, keys, "run");
	r->dir = get_str(L, n, "dir", &r->dir_pos);
	r->name_format = get_str(L, n, "name_format", &r->name_format_pos);
	r->log = get_str(L, n, "log", &r->log_pos);
	r->manifest = get_str(L, n, "manifest", &r->manifest_pos);
	get_uint(L, n, "stats_interval_s", 1, 86400, &r->stats_interval_s, NULL);
}

/* ---- files and includes ---- */

static hs_status load_file(loader *L, const char *path, const char *shown, const char *text, size_t len, bool top,
			   hs_pos from);

static void load_includes(loader *L, const char *path, const hs_ynode *root)
{
	hs_ynode *inc = get_seq(L, root, "include");
	if (!inc)
		return;
	for (size_t i = 0; i < inc->n; i++) {
		const char *rel = node_str(L, inc->items[i], "include");
		if (!rel || (L->flags & LOAD_NO_INCLUDES))
			continue;
		char *full = hs_path_sibling(path, rel);
		if (!full) {
			L->oom = true;
			return;
		}
		load_file(L, full, rel, NULL, 0, false, inc->items[i]->pos);
		free(full);
	}
}

static bool add_file(loader *L, const char *interned)
{
	const char **f = hs_arena_grow(L->arena, L->rs->files, sizeof(*f), L->rs->n_files, &L->files_cap);
	if (!f)
		return false;
	L->rs->files = f;
	f[L->rs->n_files++] = interned;
	return true;
}

static bool already_loaded(loader *L, const char *canon)
{
	for (size_t i = 0; i < L->rs->n_files; i++) {
		char *c = hs_realpath(L->rs->files[i]);
		bool same = c && strcmp(c, canon) == 0;
		free(c);
		if (same)
			return true;
	}
	return false;
}

static void load_catalog_body(loader *L, const hs_ynode *root)
{
	static const char *const keys[] = {"schema_version", "kind", "platform", "include", "providers", NULL};
	check_keys(L, root, keys, "a catalog");
	require(L, root, "platform", "a catalog");
	hs_platform platform = HS_PLATFORM_NONE;
	hs_ynode *pn = hs_ymap_get(root, "platform");
	if (pn) {
		int k = pick(L, pn, "platform", (const char *const[]){"windows", "linux", NULL});
		if (k >= 0)
			platform = (hs_platform)(k + 1);
	}
	hs_ynode *pv = get_seq(L, root, "providers");
	if (!pv)
		return;
	for (size_t i = 0; i < pv->n; i++) {
		hs_provider *ps = hs_arena_grow(L->arena, L->rs->providers, sizeof(*ps), L->rs->n_providers,
						&L->prov_cap);
		if (!ps) {
			L->oom = true;
			return;
		}
		L->rs->providers = ps;
		hs_provider *p = &ps[L->rs->n_providers];
		memset(p, 0, sizeof(*p));
		load_provider(L, pv->items[i], platform, p);
		L->rs->n_providers++;
	}
}

static void load_profile_body(loader *L, const hs_ynode *root)
{
	static const char *const keys[] = {"schema_version", "kind",	  "name",     "description",
					   "include",	     "run",	  "platforms", NULL};
	check_keys(L, root, keys, "a profile");
	require(L, root, "name", "a profile");
	require(L, root, "platforms", "a profile");
	L->rs->is_profile = true;
	L->rs->name = get_ident(L, root, "name", NULL);
	L->rs->description = get_str(L, root, "description", NULL);
	hs_ynode *run = get_map(L, root, "run");
	if (run)
		load_run(L, run);
	hs_ynode *pl = get_map(L, root, "platforms");
	if (pl)
		load_platforms(L, pl);
}

static hs_status load_file(loader *L, const char *path, const char *shown, const char *text, size_t len, bool top,
			   hs_pos from)
{
	char *owned = NULL;
	hs_status st = HS_OK;
	if (!text) {
		st = hs_read_file(path, HS_MAX_RULES_FILE_BYTES, &owned, &len);
		if (st != HS_OK) {
			const char *why = st == HS_ENOENT	? "no such file"
					  : st == HS_ELIMIT ? "file is larger than the 4 MiB a rules file may be"
							    : strerror(errno);
			if (top)
				hs_diag_add(L->d, HS_D_INCLUDE, (hs_pos){hs_diags_intern(L->d, path), 0, 0}, NULL,
					    "cannot read rules file: %s", why);
			else
				hs_diag_add(L->d, HS_D_INCLUDE, from, NULL, "cannot include '%s': %s", shown, why);
			return st == HS_ENOMEM ? HS_ENOMEM : st;
		}
		text = owned;
	}
	char *canon = hs_realpath(path);
	if (!top && canon) {
		for (int i = 0; i < L->depth; i++) {
			if (strcmp(L->stack[i], canon) == 0) {
				hs_diag_add(L->d, HS_D_INCLUDE_CYCLE, from, "a catalog may be included from many places, but not from itself",
					    "including '%s' here closes a cycle", shown);
				goto out;
			}
		}
		if (already_loaded(L, canon))
			goto out; /* a diamond: loaded once, nothing to report */
	}
	if (L->depth >= HS_MAX_INCLUDE_DEPTH) {
		hs_diag_add(L->d, HS_D_LIMIT, from, NULL, "includes nest deeper than %d files", HS_MAX_INCLUDE_DEPTH);
		goto out;
	}
	const char *file = hs_diags_add_source(L->d, path, text, len);
	if (!add_file(L, file)) {
		st = HS_ENOMEM;
		goto out;
	}
	bool syntax_error = false;
	hs_ynode *root = hs_yaml_parse(L->arena, file, text, len, L->d, &syntax_error);
	if (syntax_error)
		goto out;
	if (!root || root->type != HS_Y_MAP) {
		hs_diag_add(L->d, root ? HS_D_TYPE : HS_D_MISSING_KEY, root ? root->pos : (hs_pos){file, 1, 1},
			    "start with 'schema_version: 1' and 'kind: catalog' or 'kind: profile'",
			    root ? "a rules file must be a mapping, not %s" : "the rules file is empty%s",
			    root ? hs_ynode_type_name(root) : "");
		goto out;
	}
	L->stack[L->depth++] = canon ? canon : strdup(path);
	require(L, root, "schema_version", "a rules file");
	uint64_t ver;
	hs_pos vpos;
	if (get_uint(L, root, "schema_version", 0, UINT32_MAX, &ver, &vpos) && ver != 1)
		hs_diag_add(L->d, HS_D_VERSION, vpos, "this build reads schema_version 1",
			    "schema_version %llu is not supported", (unsigned long long)ver);
	int kind = -1;
	hs_ynode *kn = hs_ymap_get(root, "kind");
	if (kn)
		kind = pick(L, kn, "kind", (const char *const[]){"catalog", "profile", NULL});
	else
		require(L, root, "kind", "a rules file");
	if (top && kind >= 0)
		L->rs->kind_known = true;
	if (kind == 1 && !top) {
		hs_diag_add(L->d, HS_D_INCLUDE, from, "include catalogs only; a profile is run on its own",
			    "'%s' is a profile, not a catalog", shown);
	} else {
		load_includes(L, file, root);
		if (kind == 0)
			load_catalog_body(L, root);
		else if (kind == 1)
			load_profile_body(L, root);
	}
	L->depth--;
	free(L->stack[L->depth]);
	canon = NULL;
out:
	free(canon);
	free(owned);
	if (L->oom)
		return HS_ENOMEM;
	return st;
}

static hs_status load(const char *path, const char *text, size_t len, unsigned flags, hs_diags *d,
		      hs_ruleset **out)
{
	*out = NULL;
	hs_ruleset *rs = calloc(1, sizeof(*rs));
	hs_rules_priv *priv = calloc(1, sizeof(*priv));
	if (!rs || !priv) {
		free(rs);
		free(priv);
		return HS_ENOMEM;
	}
	rs->priv = priv;
	*out = rs;
	loader L = {.rs = rs, .arena = &priv->arena, .d = d, .flags = flags};
	size_t errors_before = hs_diags_errors(d);
	rs->path = hs_diags_intern(d, path);
	hs_status st = load_file(&L, path, path, text, len, true, (hs_pos){0});
	if (st == HS_ENOMEM)
		return st;
	if (st != HS_OK)
		return st;
	hs_rules_check(rs, d);
	if (L.oom)
		return HS_ENOMEM;
	return hs_diags_errors(d) > errors_before ? HS_ERULES : HS_OK;
}

hs_status hs_rules_load(const char *path, hs_diags *diags, hs_ruleset **out)
{
	return load(path, NULL, 0, 0, diags, out);
}

hs_status hs_rules_load_buffer(const char *name, const char *text, size_t len, hs_diags *diags, hs_ruleset **out)
{
	return load(name, text, len, 0, diags, out);
}

hs_status hs_rules_load_buffer_isolated(const char *name, const char *text, size_t len, hs_diags *diags,
					hs_ruleset **out)
{
	/* For the fuzzer: includes would read arbitrary files named by the input. */
	return load(name, text, len, LOAD_NO_INCLUDES, diags, out);
}

void hs_rules_free(hs_ruleset *rs)
{
	if (!rs)
		return;
	hs_rules_priv *priv = rs->priv;
	if (priv) {
		hs_arena_free(&priv->arena);
		free(priv);
	}
	free(rs);
}
