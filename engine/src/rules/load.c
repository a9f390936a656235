/* rules/load.c: reads rules files (and their includes) into the model, checking structure as it goes. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "hindsight/rules.h"
#include "rules/keys.h"
#include "rules/rules_int.h"
#include "rules/ynode.h"
#include "util/compat.h"
#include "util/strbuf.h"
#include "util/text.h"

enum { LOAD_NO_INCLUDES = 1 };

typedef struct {
	hs_keyread r; /* first: a key's fn gets back to the loader through r.ctx */
	hs_ruleset *rs;
	hs_arena *arena;
	hs_diags *d;
	unsigned flags;
	/* Canonical paths of the files being loaded, outermost first: a file
	 * found here again is an include cycle. */
	char *stack[HS_MAX_INCLUDE_DEPTH + 1];
	int depth;
	size_t prov_cap, files_cap;
	/* What the fns of the table being read need from the mappings around it. */
	const hs_provider *provider; /* the provider whose events are read */
	hs_platform platform;        /* the catalog's platform */
	const char *file;            /* the file whose includes are read */
	bool stacks;                 /* whitelist entries are stack-list entries */
	/* `formats:` event field lists, attached to the catalog events once every
	 * file is loaded (a formats file may come before or after its catalog). */
	struct pending_fields {
		const char *key; /* "system/event"; Windows "Provider-Name/id" or "Provider-Name/id/vN" */
		hs_cat_field *f;
		size_t n;
		hs_pos pos;
		bool windows;
		int id, version; /* Windows: the event id, and the template version (-1: every version) */
	} *fmts;
	size_t n_fmts, fmts_cap;
} loader;

#define LD(r) ((loader *)(r)->ctx)

/*
 * The rules language, one table per mapping. The tables are what the loader
 * accepts and requires; tests/rules/keys_agree.py holds the JSON Schema and
 * docs/rules-language.md to them. A key's order is the order of the "did you
 * mean" candidates and of the missing-key diagnostics, so it stays as it was.
 */

static const char *const provider_kinds[] = {"manifest", "tracelogging", "system", "ftrace", NULL};
static const char *const modes[] = {"file-circular", "buffering", "sampling", NULL};
static const char *const levels[] = {"logalways", "critical", "error", "warning", "information", "verbose", NULL};
static const char *const call_graphs[] = {"none", "fp", NULL};
static const char *const platforms[] = {"windows", "linux", NULL};
static const char *const file_kinds[] = {"catalog", "profile", NULL};

/* ---- whitelist and stack-list entries ---- */

static const hs_key stack_entry_keys[] = {
	{"id", HS_KEY_UINT, .max = HS_MAX_EVENT_ID, HS_AT(hs_wl_entry, id), .doc = "event id, 0..65535"},
	{"name", HS_KEY_STR, HS_AT(hs_wl_entry, name), .doc = "event name"},
	{0},
};
static const hs_keytable stack_entry_t = {"stack_entry", "an event entry",
					  "/definitions/sessionProvider/properties/stacks/else/else/items/else/else",
					  "Provider entries", NULL, stack_entry_keys};

static void wl_filter(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)r, (void)k, (void)n;
	if (ok)
		((hs_wl_entry *)obj)->filter_node = v;
}

static const hs_key wl_entry_keys[] = {
	{"story", HS_KEY_STORY, HS_AT(hs_wl_entry, story), .doc = "overrides the catalog's story"},
	{"evidence", HS_KEY_STORY, HS_AT(hs_wl_entry, evidence), HS_POS_AT(hs_wl_entry, evidence_pos),
	 .doc = "written by rulegen: why the event was kept"},
	{"filter", HS_KEY_STR, HS_AT(hs_wl_entry, filter), HS_POS_AT(hs_wl_entry, filter_pos), .fn = wl_filter,
	 .doc = "Linux: ftrace filter expression applied in the kernel"},
	{"optional", HS_KEY_BOOL, HS_AT(hs_wl_entry, optional), HS_POS_AT(hs_wl_entry, optional_pos),
	 .doc = "Linux: skip the event (and say so) where the kernel lacks it or refuses its filter"},
	{0},
};
static const hs_keytable wl_entry_t = {"wl_entry", "an event entry", "/definitions/whitelistObject",
				       "Provider entries", &stack_entry_t, wl_entry_keys};

/* Reads one whitelist or stack-list entry: a bare id, a bare name, or a map. */
static bool load_wl_entry(loader *L, const hs_ynode *n, hs_wl_entry *w, bool stacks)
{
	memset(w, 0, sizeof(*w));
	w->id = -1;
	w->pos = n->pos;
	if (n->alias)
		return false;
	if (n->type == HS_Y_SCALAR) {
		hs_yvalue v = hs_ynode_value(n);
		if (v == HS_YV_INT) {
			uint64_t id;
			if (!hs_key_uint(&L->r, n, "id", 0, HS_MAX_EVENT_ID, &id))
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
	if (!hs_key_want(&L->r, n, HS_Y_MAP, "event entry"))
		return false;
	hs_keys_check_unknown(&L->r, n, stacks ? &stack_entry_t : &wl_entry_t);
	hs_keys_read(&L->r, n, &stack_entry_t, w);
	if (!hs_ymap_get(n, "id") && !hs_ymap_get(n, "name")) {
		hs_diag_add(L->d, HS_D_ONE_OF, n->pos, NULL, "an event entry needs 'id' or 'name'");
		return false;
	}
	/* A stack entry's story is an unknown key, and still checked as one. */
	hs_keys_read(&L->r, n, &wl_entry_t, w);
	return true;
}

static hs_wl_entry *load_wl(loader *L, const hs_ynode *seq, size_t *count, bool stacks)
{
	hs_wl_entry *v = hs_key_alloc(&L->r, seq->n + 1, sizeof(*v));
	if (!v)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < seq->n; i++)
		if (load_wl_entry(L, seq->items[i], &v[n], stacks))
			n++;
	*count = n;
	return v;
}

/* ---- session providers ---- */

static void sp_match(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k;
	hs_session_provider *sp = obj;
	if (ok)
		sp->match_node = v;
	bool hp = hs_ymap_get(n, "provider") != NULL, hm = v != NULL;
	if (hp == hm)
		hs_diag_add(r->d, HS_D_ONE_OF, n->pos, "name one provider, or select several with a PCRE2 pattern",
			    hp ? "give either 'provider' or 'match', not both" : "a session provider needs 'provider' or 'match'");
}

static void sp_keywords(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *kw, bool ok, void *obj)
{
	(void)k, (void)ok;
	hs_session_provider *sp = obj;
	if (!kw)
		return;
	sp->keywords_pos = hs_ymap_key(n, "keywords")->pos;
	if (kw->type == HS_Y_SCALAR && hs_ynode_value(kw) == HS_YV_STR && strcmp(kw->str, "all") == 0) {
		sp->keywords_given = sp->keywords_any_all = true;
	} else if (kw->type == HS_Y_SEQ && kw->n == 0) {
		/* MatchAnyKeyword 0 would mean "all": an empty list must not. */
		sp->keywords_given = true;
		hs_diag_add(r->d, HS_D_TYPE, kw->pos, "write 'all' to take every keyword, or name at least one",
			    "'keywords' is an empty list");
	} else if (kw->type == HS_Y_SEQ) {
		sp->keywords_given = true;
		sp->n_keywords = hs_key_strlist(r, kw, "keywords", &sp->keywords, &sp->keyword_pos);
	} else if (!kw->alias) {
		hs_diag_add(r->d, HS_D_TYPE, kw->pos, "write 'all' or a list of keyword names",
			    "'keywords' must be 'all' or a list of names, not %s", hs_ynode_type_name(kw));
	}
}

static void sp_keywords_all(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok,
			    void *obj)
{
	(void)k, (void)n;
	hs_session_provider *sp = obj;
	if (ok)
		sp->n_keywords_all = hs_key_strlist(r, v, "keywords_all", &sp->keywords_all, &sp->keywords_all_pos);
}

static void sp_stacks(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *st, bool ok, void *obj)
{
	(void)k, (void)n, (void)ok;
	hs_session_provider *sp = obj;
	if (!st)
		return;
	hs_yvalue v = st->type == HS_Y_SCALAR ? hs_ynode_value(st) : HS_YV_STR;
	if (st->type == HS_Y_SCALAR && v == HS_YV_BOOL && (st->str[0] == 'f' || st->str[0] == 'F')) {
		sp->stacks = HS_STACKS_NONE;
	} else if (st->type == HS_Y_SCALAR && v == HS_YV_STR && strcmp(st->str, "all") == 0) {
		sp->stacks = HS_STACKS_ALL;
	} else if (st->type == HS_Y_SEQ) {
		sp->stacks = HS_STACKS_LIST;
		sp->stack_events = load_wl(LD(r), st, &sp->n_stack_events, true);
	} else if (!st->alias) {
		hs_diag_add(r->d, HS_D_TYPE, st->pos, "write false, 'all' or a list of event ids or names",
			    "'stacks' must be false, 'all' or a list, not %s", hs_ynode_type_name(st));
	}
}

static void sp_events(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *ev, bool ok, void *obj)
{
	(void)k;
	hs_session_provider *sp = obj;
	if (!ok)
		return;
	sp->has_events = true;
	sp->events_pos = hs_ymap_key(n, "events")->pos;
	sp->events = load_wl(LD(r), ev, &sp->n_events, false);
}

static const hs_key session_provider_keys[] = {
	{"provider", HS_KEY_STR, HS_AT(hs_session_provider, provider), HS_POS_AT(hs_session_provider, provider_pos),
	 .doc = "one catalog provider by name"},
	{"match", HS_KEY_STR, HS_AT(hs_session_provider, match), HS_POS_AT(hs_session_provider, match_pos),
	 .fn = sp_match, .doc = "every provider of this platform whose name matches the PCRE2 pattern"},
	{"level", HS_KEY_ENUM, HS_KEY_OR_UINT, .max = 255, .values = levels, HS_AT(hs_session_provider, level),
	 HS_POS_AT(hs_session_provider, level_pos), HS_HAS_AT(hs_session_provider, has_level), .doc = "Windows: ETW level"},
	{"keywords", HS_KEY_CUSTOM, .fn = sp_keywords, .doc = "Windows: 'all' or positive keyword names"},
	{"keywords_all", HS_KEY_LIST, HS_KEY_OF_STR, .fn = sp_keywords_all,
	 .doc = "Windows: names that must all be set (MatchAllKeyword)"},
	{"ignore_keyword_0", HS_KEY_BOOL, HS_AT(hs_session_provider, ignore_keyword_0),
	 HS_POS_AT(hs_session_provider, ignore_keyword_0_pos), .doc = "Windows: EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0"},
	{"capture_state", HS_KEY_BOOL, HS_AT(hs_session_provider, capture_state),
	 HS_POS_AT(hs_session_provider, capture_state_pos), .doc = "Windows: capture state before a flush"},
	{"stacks", HS_KEY_CUSTOM, .sub = &stack_entry_t, HS_POS_AT(hs_session_provider, stacks_pos), .fn = sp_stacks,
	 .doc = "false, 'all', or a list of event ids/names"},
	{"events", HS_KEY_LIST, HS_KEY_OF_EVENT, .sub = &wl_entry_t, .fn = sp_events,
	 .doc = "whitelist, filtered in the kernel"},
	{0},
};
static const hs_keytable session_provider_t = {"session_provider", "a session provider", "/definitions/sessionProvider",
					       "Provider entries", NULL, session_provider_keys};

/* ---- sessions ---- */

/* A name's length limit is the platform's, not the YAML's: checked after the string. */
static void too_long(hs_keyread *r, const hs_ynode *v, const char **s, size_t max, const char *what)
{
	if (*s && hs_utf8_len(*s) > max) {
		hs_diag_add(r->d, HS_D_NAME, v->pos, NULL, "%s is longer than %zu characters", what, max);
		*s = NULL;
	}
}

static void s_logger(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	if (ok)
		too_long(r, v, &((hs_session *)obj)->logger_name, HS_ETW_MAX_NAME_CHARS, "logger_name");
}

static void s_output(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	if (ok)
		too_long(r, v, &((hs_session *)obj)->output, HS_MAX_OUTPUT_NAME_CHARS, "output");
}

static void load_session_provider(hs_keyread *r, const hs_ynode *e, void *slot)
{
	hs_session_provider *sp = slot;
	sp->pos = e->pos;
	if (hs_key_want(r, e, HS_Y_MAP, "providers entry"))
		hs_keys_load(r, e, &session_provider_t, sp);
}

static void s_providers(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *pv, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_session *s = obj;
	if (!ok)
		return;
	if (pv->n == 0)
		hs_diag_add(r->d, HS_D_MISSING_KEY, pv->pos, NULL, "a session needs at least one provider");
	s->providers = hs_keys_each(r, pv, sizeof *s->providers, load_session_provider, &s->n_providers);
}

#define SIZE_KEY(key, field, posfield, text)                                                                      \
	{key, HS_KEY_UINT, .min = 1, .max = UINT32_MAX, HS_AT(hs_session, field), HS_POS_AT(hs_session, posfield), \
	 .doc = text}

/* `mode` is read last (MANUAL) because its missing-key diagnostic always came after the others'. */
static const hs_key session_keys[] = {
	{"name", HS_KEY_IDENT, HS_KEY_REQUIRED, HS_AT(hs_session, name), HS_POS_AT(hs_session, name_pos),
	 .doc = "[A-Za-z0-9_-]{1,64}, unique in the platform"},
	{"logger_name", HS_KEY_STR, HS_KEY_REQUIRED, HS_AT(hs_session, logger_name), HS_POS_AT(hs_session, logger_pos),
	 .fn = s_logger, .doc = "ETW session name / tracefs instance name"},
	{"mode", HS_KEY_ENUM, HS_KEY_REQUIRED | HS_KEY_MANUAL, .values = modes, HS_POS_AT(hs_session, mode_pos),
	 .doc = "file-circular, buffering or sampling"},
	{"clock", HS_KEY_STR, HS_KEY_REQUIRED, HS_AT(hs_session, clock), HS_POS_AT(hs_session, clock_pos),
	 .doc = "timestamp clock"},
	SIZE_KEY("buffer_size_kb", buffer_size_kb, buffer_size_pos, "ETW BufferSize / per-CPU ring in KB"),
	SIZE_KEY("min_buffers", min_buffers, min_buffers_pos, "Windows: minimum number of ETW buffers"),
	SIZE_KEY("max_buffers", max_buffers, max_buffers_pos, "Windows: maximum number of ETW buffers"),
	SIZE_KEY("max_file_mb", max_file_mb, max_file_pos, "size of the circular file in MB"),
	SIZE_KEY("flush_interval_s", flush_interval_s, flush_pos, "seconds between flushes to the file"),
	SIZE_KEY("ring_mb", ring_mb, ring_pos, "size of the in-memory ring in MB (total across CPUs)"),
	SIZE_KEY("sample_hz", sample_hz, sample_pos, "sampling rate in Hz"),
	{"expected_rate_eps", HS_KEY_UINT, .min = 1, .max = HS_RULES_MAX_RATE_EPS, HS_AT(hs_session, expected_rate_eps),
	 HS_POS_AT(hs_session, expected_rate_pos),
	 .doc = "buffering: events/s the ring is sized for (engine --estimate); checks triggers' post_delay_ms"},
	{"call_graph", HS_KEY_ENUM, .values = call_graphs, HS_AT(hs_session, call_graph),
	 HS_POS_AT(hs_session, call_graph_pos), HS_HAS_AT(hs_session, has_call_graph), .doc = "sampling, Linux: none or fp"},
	{"output", HS_KEY_STR, HS_KEY_REQUIRED, HS_AT(hs_session, output), HS_POS_AT(hs_session, output_pos),
	 .fn = s_output, .doc = "a plain file name inside the run folder"},
	{"providers", HS_KEY_LIST, HS_KEY_REQUIRED, .sub = &session_provider_t, .fn = s_providers,
	 .doc = "the providers this session enables (at least one)"},
	{0},
};
static const hs_keytable session_t = {"session", "a session", "/definitions/session", "Profiles", NULL,
				      session_keys};

static void load_session(hs_keyread *kr, const hs_ynode *n, void *slot)
{
	loader *L = LD(kr);
	hs_session *s = slot;
	s->pos = n->pos;
	if (!hs_key_want(&L->r, n, HS_Y_MAP, "sessions entry"))
		return;
	hs_keys_load(&L->r, n, &session_t, s);
	hs_keys_read_one(&L->r, n, &session_t, "mode", s);
	int mode = L->r.index;
	if (mode < 0)
		return;
	s->mode = (hs_session_mode)mode;
	s->has_mode = true;
	/* Which size keys make sense is a property of the mode alone, so
	 * this is structural (the JSON Schema says the same with if/then). */
	static const struct {
		hs_session_mode mode;
		const char *required, *forbidden[5];
	} rules[] = {
		{HS_MODE_FILE_CIRCULAR,
		 "max_file_mb",
		 {"ring_mb", "sample_hz", "call_graph", "expected_rate_eps", NULL}},
		{HS_MODE_BUFFERING, "ring_mb", {"max_file_mb", "flush_interval_s", "sample_hz", "call_graph", NULL}},
		{HS_MODE_SAMPLING, "sample_hz", {"ring_mb", "max_file_mb", "expected_rate_eps", NULL, NULL}},
	};
	for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
		if (rules[r].mode != s->mode)
			continue;
		if (!hs_ymap_get(n, rules[r].required))
			hs_diag_add(L->d, HS_D_MODE_KEY, s->mode_pos, NULL, "a %s session needs '%s'", modes[mode],
				    rules[r].required);
		for (int f = 0; f < 5 && rules[r].forbidden[f]; f++) {
			hs_ynode *bad = hs_ymap_get(n, rules[r].forbidden[f]);
			if (bad)
				hs_diag_add(L->d, HS_D_MODE_KEY, bad->pos, NULL, "'%s' has no meaning in a %s session",
					    rules[r].forbidden[f], modes[mode]);
		}
	}
}

/* ---- platforms and run ---- */

static void ps_sessions(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *ss, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_platform_rules *pr = obj;
	if (!ok)
		return;
	pr->sessions = hs_keys_each(r, ss, sizeof *pr->sessions, load_session, &pr->n_sessions);
}

static const hs_key platform_section_keys[] = {
	{"sessions", HS_KEY_LIST, HS_KEY_REQUIRED, .sub = &session_t, .fn = ps_sessions,
	 .doc = "trace sessions to run on this platform"},
	{"trigger_defaults", HS_KEY_MAP, .sub = &hs_trigger_defaults_t, .fn = hs_rules_trigger_defaults,
	 .doc = "behaviour values every trigger of the platform inherits"},
	{"triggers", HS_KEY_LIST, .sub = &hs_trigger_t, .fn = hs_rules_triggers,
	 .doc = "when the engine takes a snapshot by itself"},
	{0},
};
static const hs_keytable platform_section_t = {"platform_section", "a platform section",
					       "/definitions/platformSessions", "Profiles", NULL,
					       platform_section_keys};

static void pl_platform(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *pn, bool ok, void *obj)
{
	(void)n, (void)obj;
	if (!ok || r->oom)
		return;
	hs_platform p = hs_platform_parse(k->name);
	hs_platform_rules *pr = &LD(r)->rs->platforms[p];
	pr->present = true;
	pr->pos = pn->pos;
	hs_keys_load(r, pn, &platform_section_t, pr);
}

static const hs_key platforms_keys[] = {
	{"windows", HS_KEY_MAP, .sub = &platform_section_t, .fn = pl_platform, .doc = "sessions run on Windows (ETW)"},
	{"linux", HS_KEY_MAP, .sub = &platform_section_t, .fn = pl_platform,
	 .doc = "sessions run on Linux (ftrace / perf)"},
	{0},
};
static const hs_keytable platforms_t = {"platforms", "platforms", "/definitions/profile/properties/platforms",
					"Profiles", NULL, platforms_keys};

static const hs_key run_keys[] = {
	{"dir", HS_KEY_STR, HS_AT(hs_run_rules, dir), HS_POS_AT(hs_run_rules, dir_pos),
	 .doc = "directory of the run folders"},
	{"name_format", HS_KEY_STR, HS_AT(hs_run_rules, name_format), HS_POS_AT(hs_run_rules, name_format_pos),
	 .doc = "strftime pattern of the run folder"},
	{"log", HS_KEY_STR, HS_AT(hs_run_rules, log), HS_POS_AT(hs_run_rules, log_pos),
	 .doc = "the engine's log inside the run folder"},
	{"manifest", HS_KEY_STR, HS_AT(hs_run_rules, manifest), HS_POS_AT(hs_run_rules, manifest_pos),
	 .doc = "the run manifest (JSON) inside the run folder"},
	{"stats_interval_s", HS_KEY_UINT, .min = 1, .max = 86400, HS_AT(hs_run_rules, stats_interval_s),
	 .doc = "seconds between statistics lines in the log"},
	{"snapshots_max_mb", HS_KEY_UINT, .min = 1, .max = HS_RULES_MAX_SNAPSHOTS_MB,
	 HS_AT(hs_run_rules, snapshots_max_mb), HS_POS_AT(hs_run_rules, snapshots_max_pos),
	 .doc = "disk cap for all triggered snapshots of a run"},
	{"capture_report", HS_KEY_BOOL, HS_AT(hs_run_rules, capture_report), HS_POS_AT(hs_run_rules, capture_report_pos),
	 .doc = "write each snapshot's report into its folder as it is taken (default true)"},
	{0},
};
static const hs_keytable run_t = {"run", "run", "/definitions/run", "Profiles", NULL, run_keys};

/* ---- catalogs ---- */

static void ev_id(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)ok, (void)obj;
	const hs_provider *p = LD(r)->provider;
	bool ftrace = p->kind == HS_PKIND_FTRACE;
	if (ftrace && v)
		hs_diag_add(r->d, HS_D_KIND_KEY, v->pos, "ftrace events are named, not numbered",
			    "an event of an ftrace provider has no 'id'");
	if (!ftrace && !v)
		hs_diag_add(r->d, HS_D_KIND_KEY, n->pos, NULL, "an event of a %s provider needs 'id'",
			    provider_kinds[p->kind]);
}

static void ev_name(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_cat_event *e = obj;
	if (ok && hs_utf8_len(e->name) > HS_MAX_PROVIDER_NAME_CHARS) {
		hs_diag_add(r->d, HS_D_NAME, v->pos, NULL, "event name is longer than %d characters",
			    HS_MAX_PROVIDER_NAME_CHARS);
		e->name = NULL;
	}
}

static void ev_keywords(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_cat_event *e = obj;
	if (ok)
		e->n_keywords = hs_key_strlist(r, v, "keywords", &e->keywords, &e->keyword_pos);
}

static void ev_classic_guid(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *cg, bool ok,
			    void *obj)
{
	(void)k, (void)n, (void)ok;
	hs_cat_event *e = obj;
	if (!cg)
		return;
	if (LD(r)->provider->kind != HS_PKIND_SYSTEM)
		hs_diag_add(r->d, HS_D_KIND_KEY, cg->pos, NULL, "'classic_guid' belongs to events of system providers only");
	else
		e->has_classic_guid = hs_key_guid(r, cg, "classic_guid", &e->classic_guid);
	e->classic_guid_given = true;
}

static void ev_alert(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)v;
	if (ok)
		((hs_cat_event *)obj)->alert = hs_alert_names[r->index];
}

/* `means:` values, in hs_event_means order after HS_MEANS_NONE. */
static const char *const means_names[] = {"process-exit", "marker", "present", NULL};

static void ev_means(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	if (!v || !ok || r->index < 0)
		return;
	/* The readers decode such an event by a manifest payload's layout; on
	 * another kind of provider the attribute could only misread records. */
	if (LD(r)->provider->kind != HS_PKIND_MANIFEST) {
		hs_diag_add(r->d, HS_D_KIND_KEY, v->pos, NULL, "'means' belongs to events of manifest providers only");
		return;
	}
	((hs_cat_event *)obj)->means = (hs_event_means)(HS_MEANS_NONE + 1 + r->index);
}

static const hs_key cat_event_keys[] = {
	{"id", HS_KEY_UINT, .max = HS_MAX_EVENT_ID, HS_AT(hs_cat_event, id), .fn = ev_id,
	 .doc = "windows: 0..65535 (for kind system: the classic opcode)"},
	{"name", HS_KEY_STR, HS_KEY_REQUIRED, HS_AT(hs_cat_event, name), .fn = ev_name, .doc = "event name"},
	{"story", HS_KEY_STORY, HS_KEY_REQUIRED, HS_AT(hs_cat_event, story),
	 .doc = "what it means when you see this event"},
	{"keywords", HS_KEY_LIST, HS_KEY_OF_STR, .fn = ev_keywords, .doc = "keywords the event is logged with"},
	{"name_guessed", HS_KEY_BOOL, HS_AT(hs_cat_event, name_guessed),
	 .doc = "the name is a guess, verify it against the manifest"},
	{"classic_guid", HS_KEY_GUID, HS_KEY_MANUAL,
	 .doc = "kind system only: classic event GUID"},
	{"alert", HS_KEY_ENUM, .values = hs_alert_names, .fn = ev_alert, .doc = "reports flag it"},
	{"means", HS_KEY_ENUM, .values = means_names, .fn = ev_means,
	 .doc = "what the readers decode it as (process-exit: its payload is Kernel-Process ProcessStop's; marker: the "
		"engine writes its trigger markers as this event; present: an app's Present call, a frame for "
		"frame_time source present)"},
	{0},
};
static const hs_keytable cat_event_t = {"cat_event", "a catalog event", "/definitions/catalogEvent", "Catalogs",
					NULL, cat_event_keys};

static void load_cat_event(hs_keyread *r, const hs_ynode *n, void *slot)
{
	loader *L = LD(r);
	hs_cat_event *e = slot;
	e->id = -1;
	e->pos = n->pos;
	if (!hs_key_want(&L->r, n, HS_Y_MAP, "events entry"))
		return;
	hs_keys_load(&L->r, n, &cat_event_t, e);
	/* classic_guid depends on the provider's kind: its fn decides, not a typed reading. */
	ev_classic_guid(&L->r, NULL, n, hs_ymap_get(n, "classic_guid"), true, e);
}

static void pv_name(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	const hs_provider *p = obj;
	/* Reported, but the name is kept: the checker still finds duplicates by it. */
	if (ok && hs_utf8_len(p->name) > HS_MAX_PROVIDER_NAME_CHARS)
		hs_diag_add(r->d, HS_D_NAME, v->pos, NULL, "provider name is longer than %d characters",
			    HS_MAX_PROVIDER_NAME_CHARS);
}

static void pv_guid(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *gn, bool ok, void *obj)
{
	(void)k, (void)ok;
	hs_provider *p = obj;
	bool ftrace = p->kind == HS_PKIND_FTRACE;
	if (gn) {
		p->guid_pos = gn->pos;
		if (ftrace)
			hs_diag_add(r->d, HS_D_KIND_KEY, gn->pos, NULL, "an ftrace provider has no 'guid'");
		else
			p->has_guid = hs_key_guid(r, gn, "guid", &p->guid);
	} else if (!ftrace && hs_ymap_get(n, "kind")) {
		hs_diag_add(r->d, HS_D_KIND_KEY, n->pos, NULL, "a %s provider needs 'guid'", provider_kinds[p->kind]);
	}
}

static void pv_system(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *sn, bool ok, void *obj)
{
	(void)k, (void)ok;
	hs_provider *p = obj;
	bool ftrace = p->kind == HS_PKIND_FTRACE;
	if (sn) {
		if (!ftrace) {
			hs_diag_add(r->d, HS_D_KIND_KEY, sn->pos, NULL, "only ftrace providers have 'system'");
		} else {
			p->system = hs_key_str(r, sn, "system");
			if (p->system && !hs_key_ident_ok(p->system, HS_MAX_IDENT_CHARS, false, false)) {
				hs_diag_add(r->d, HS_D_NAME, sn->pos, NULL, "'%s' is not an ftrace event system name",
					    p->system);
				p->system = NULL;
			}
		}
	} else if (ftrace) {
		hs_diag_add(r->d, HS_D_KIND_KEY, n->pos, "name the directory under events/, e.g. 'sched'",
			    "an ftrace provider needs 'system'");
	}
}

static void pv_keywords(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *kw, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_provider *p = obj;
	if (!ok)
		return;
	if (p->kind == HS_PKIND_FTRACE) {
		hs_diag_add(r->d, HS_D_KIND_KEY, kw->pos, NULL, "ftrace providers have no keywords");
		return;
	}
	p->keywords = hs_key_alloc(r, kw->n + 1, sizeof(*p->keywords));
	if (!p->keywords)
		return;
	for (size_t i = 0; i < kw->n; i++) {
		const char *name = kw->keys[i]->str;
		if (hs_ynode_value(kw->keys[i]) != HS_YV_STR)
			continue; /* already reported by the YAML layer */
		if (!hs_key_ident_ok(name, HS_MAX_IDENT_CHARS, false, true)) {
			hs_diag_add(r->d, HS_D_NAME, kw->keys[i]->pos, NULL, "'%s' is not a valid keyword name", name);
			continue;
		}
		hs_keyword *kwd = &p->keywords[p->n_keywords];
		kwd->name = name;
		kwd->pos = kw->keys[i]->pos;
		if (hs_key_uint(r, kw->items[i], name, 1, UINT64_MAX, &kwd->mask))
			p->n_keywords++;
	}
}

static void pv_events(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *ev, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_provider *p = obj;
	if (!ok)
		return;
	LD(r)->provider = p;
	p->events = hs_keys_each(r, ev, sizeof *p->events, load_cat_event, &p->n_events);
}

static const hs_key provider_keys[] = {
	{"name", HS_KEY_STR, HS_KEY_REQUIRED, HS_AT(hs_provider, name), .fn = pv_name,
	 .doc = "unique across all loaded catalogs"},
	{"kind", HS_KEY_ENUM, HS_KEY_REQUIRED, .values = provider_kinds, HS_AT(hs_provider, kind),
	 .doc = "manifest, tracelogging, system or ftrace"},
	{"guid", HS_KEY_GUID, HS_KEY_MANUAL, .doc = "windows kinds: required, unique"},
	{"system", HS_KEY_STR, HS_KEY_MANUAL, .doc = "ftrace event system (directory under events/)"},
	{"description", HS_KEY_STR, HS_AT(hs_provider, description), .doc = "optional, one line"},
	{"keywords", HS_KEY_MAP, .fn = pv_keywords, .doc = "name -> 64-bit mask (windows only)"},
	{"events", HS_KEY_LIST, .sub = &cat_event_t, .fn = pv_events, .doc = "known events"},
	{0},
};
static const hs_keytable provider_t = {"provider", "a provider", "/definitions/provider", "Catalogs", NULL,
				       provider_keys};

static void load_provider(loader *L, const hs_ynode *n, hs_platform platform, hs_provider *p)
{
	p->pos = n->pos;
	p->platform = platform;
	p->kind = HS_PKIND_MANIFEST;
	if (!hs_key_want(&L->r, n, HS_Y_MAP, "providers entry"))
		return;
	hs_keys_load(&L->r, n, &provider_t, p);
	/* guid and system depend on the kind: their fns decide, not a typed reading. */
	pv_guid(&L->r, NULL, n, hs_ymap_get(n, "guid"), true, p);
	pv_system(&L->r, NULL, n, hs_ymap_get(n, "system"), true, p);
}

/* ---- files: the keys every file has, then a catalog's or a profile's ---- */

static void f_version(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	if (ok && r->u != 1)
		hs_diag_add(r->d, HS_D_VERSION, v->pos, "this build reads schema_version 1",
			    "schema_version %llu is not supported", (unsigned long long)r->u);
}

typedef struct {
	int kind; /* index in file_kinds, -1 when unknown */
} file_head;

static const hs_key file_keys[] = {
	{"schema_version", HS_KEY_UINT, HS_KEY_REQUIRED, .max = UINT32_MAX, .fn = f_version,
	 .doc = "version of the rules language; must be 1"},
	{"kind", HS_KEY_ENUM, HS_KEY_REQUIRED, .values = file_kinds, HS_AT(file_head, kind),
	 .doc = "catalog or profile"},
	{0},
};
static const hs_keytable file_t = {"file", "a rules file", "", "The hindsight rules language", NULL,
				   file_keys};

static void cat_platform(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)v, (void)obj;
	if (ok)
		LD(r)->platform = (hs_platform)(r->index + 1);
}

static void cat_providers(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *pv, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	loader *L = LD(r);
	if (!ok)
		return;
	/* a catalog of providers is of one platform; one that only has causes: is of none */
	if (L->platform == HS_PLATFORM_NONE && !hs_ymap_get(n, "platform"))
		hs_key_missing(r, n, "platform", "a catalog");
	for (size_t i = 0; i < pv->n; i++) {
		hs_provider *ps = hs_arena_grow(L->arena, L->rs->providers, sizeof(*ps), L->rs->n_providers,
						&L->prov_cap);
		if (!ps) {
			r->oom = true;
			return;
		}
		L->rs->providers = ps;
		hs_provider *p = &ps[L->rs->n_providers];
		memset(p, 0, sizeof(*p));
		load_provider(L, pv->items[i], L->platform, p);
		L->rs->n_providers++;
	}
}

static void load_includes(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *inc, bool ok,
			  void *obj);

/* ---- formats: the payload fields of ftrace events (tools/catalogsync writes them) ---- */

/* A field map: { name: [type, size, signed] }, as the kernel's format file says (Windows: as the manifest's
 * template says, the type being its inType). */
static size_t read_fields(loader *L, const hs_ynode *m, const char *what, hs_cat_field **out)
{
	*out = NULL;
	if (!hs_key_want(&L->r, m, HS_Y_MAP, what) || !m->n)
		return 0;
	hs_cat_field *f = hs_key_alloc(&L->r, m->n, sizeof(*f));
	if (!f)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < m->n; i++) {
		const hs_ynode *key = m->keys[i], *v = m->items[i];
		if (!hs_key_ident_ok(key->str, HS_MAX_IDENT_CHARS, false, true)) {
			hs_diag_add(L->d, HS_D_NAME, key->pos, "payload fields are C identifiers, as in ftrace filters",
				    "'%s' is not a field name", key->str);
			continue;
		}
		if (v->type != HS_Y_SEQ || v->n != 3) {
			hs_diag_add(L->d, HS_D_TYPE, v->pos, "as the format file says: [pid_t, 4, 1]",
				    "field '%s' needs [type, size, signed]", key->str);
			continue;
		}
		uint64_t size = 0, sign = 0;
		const char *type = hs_key_line(&L->r, v->items[0], "a field's type");
		bool ok = type && hs_key_uint(&L->r, v->items[1], "a field's size", 0, HS_RULES_MAX_FIELD_BYTES, &size) &&
			  hs_key_uint(&L->r, v->items[2], "a field's signed flag", 0, 1, &sign);
		if (!ok)
			continue;
		f[n++] = (hs_cat_field){.name = key->str, .type = type, .size = (unsigned)size, .is_signed = sign == 1,
					.pos = key->pos};
	}
	*out = f;
	return n;
}

static void fm_common(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	loader *L = LD(r);
	if (!ok || !v)
		return;
	if (L->platform != HS_PLATFORM_LINUX) {
		hs_diag_add(L->d, HS_D_PLATFORM, v->pos, "ETW events have no fields in common beyond the header",
			    "formats.common needs platform: linux");
		return;
	}
	hs_cat_field *f;
	size_t nf = read_fields(L, v, "formats.common", &f);
	if (!L->rs->common_fields) {
		L->rs->common_fields = f;
		L->rs->n_common_fields = nf;
	}
}

/* "Provider-Name/id" or "Provider-Name/id/vN": the provider as the catalog names it, the event id, and the
 * template version when the manifest has several for the id (version -1: the one template of every version). */
static bool win_format_key(const char *key, int *id, int *version)
{
	const char *slash = strchr(key, '/');
	if (!slash || slash == key || !isdigit((unsigned char)slash[1]))
		return false;
	char *end;
	unsigned long n = strtoul(slash + 1, &end, 10);
	if (n > HS_MAX_EVENT_ID)
		return false;
	*id = (int)n;
	*version = -1;
	if (!*end)
		return true;
	if (end[0] != '/' || end[1] != 'v' || !isdigit((unsigned char)end[2]))
		return false;
	n = strtoul(end + 2, &end, 10);
	if (*end || n > UINT8_MAX) /* EVENT_DESCRIPTOR.Version is a UCHAR */
		return false;
	*version = (int)n;
	return true;
}

static void fm_events(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	loader *L = LD(r);
	if (!ok || !v)
		return;
	bool win = L->platform == HS_PLATFORM_WINDOWS;
	for (size_t i = 0; i < v->n; i++) {
		const hs_ynode *key = v->keys[i];
		const char *slash = strchr(key->str, '/');
		int id = -1, version = -1;
		if (win && !win_format_key(key->str, &id, &version)) {
			hs_diag_add(L->d, HS_D_NAME, key->pos,
				    "ETW events are Provider-Name/id, or Provider-Name/id/vN for template version N",
				    "'%s' is not provider/id[/vN]", key->str);
			continue;
		}
		if (!win && (!slash || slash == key->str || !slash[1] || strchr(slash + 1, '/'))) {
			hs_diag_add(L->d, HS_D_NAME, key->pos, "events are named system/event, as under events/ in tracefs",
				    "'%s' is not system/event", key->str);
			continue;
		}
		struct pending_fields *pf = hs_arena_grow(L->arena, L->fmts, sizeof(*pf), L->n_fmts, &L->fmts_cap);
		if (!pf) {
			r->oom = true;
			return;
		}
		L->fmts = pf;
		pf = &pf[L->n_fmts++];
		pf->key = key->str;
		pf->pos = key->pos;
		pf->windows = win;
		pf->id = id;
		pf->version = version;
		pf->n = read_fields(L, v->items[i], "an event's fields", &pf->f);
	}
}

static void fm_kernel(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	if (!ok || !v)
		return;
	if (LD(r)->platform != HS_PLATFORM_LINUX) {
		hs_diag_add(r->d, HS_D_PLATFORM, v->pos, "say which manifests and builds in a comment",
			    "formats.kernel needs platform: linux");
		return;
	}
	if (!LD(r)->rs->formats_kernel)
		LD(r)->rs->formats_kernel = v->str;
}

/* `kernel` is required of Linux formats only (cat_formats checks it): Windows fields come from manifests of
 * several builds, which the file names per event in comments. */
static const hs_key formats_keys[] = {
	{"kernel", HS_KEY_STR, .fn = fm_kernel, .doc = "linux: the kernel release the fields were read from"},
	{"common", HS_KEY_MAP, .fn = fm_common,
	 .doc = "linux: the common_* fields every event has: name: [type, size, signed]"},
	{"events", HS_KEY_MAP, HS_KEY_REQUIRED, .fn = fm_events,
	 .doc = "system/event (windows: Provider-Name/id[/vN]): { field: [type, size, signed] }"},
	{0},
};
static const hs_keytable formats_t = {"formats", "formats", "/definitions/formats", "Catalogs", NULL, formats_keys};

static void cat_formats(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	if (!ok || !v)
		return;
	LD(r)->rs->has_formats = true;
	if (LD(r)->platform == HS_PLATFORM_NONE && !hs_ymap_get(n, "platform"))
		hs_key_missing(r, n, "platform", "a catalog");
	if (LD(r)->platform == HS_PLATFORM_LINUX && v->type == HS_Y_MAP)
		hs_key_missing(r, v, "kernel", "linux formats");
	hs_keys_load(r, v, &formats_t, NULL);
}

/* Gives a Windows catalog event every template version `formats:` has for it, oldest first (an unversioned
 * entry first of all); its fields are the newest's. The first entry of a version wins, as on Linux. */
static void attach_win_fields(loader *L, const hs_provider *pr, hs_cat_event *ev)
{
	size_t n = 0, plen = strlen(pr->name);
	for (size_t i = 0; i < L->n_fmts; i++) {
		const struct pending_fields *pf = &L->fmts[i];
		n += pf->windows && pf->id == ev->id && strncmp(pf->key, pr->name, plen) == 0 && pf->key[plen] == '/';
	}
	if (!n)
		return;
	hs_cat_fields_version *v = hs_key_alloc(&L->r, n, sizeof(*v));
	if (!v)
		return;
	size_t nv = 0;
	for (size_t i = 0; i < L->n_fmts; i++) {
		const struct pending_fields *pf = &L->fmts[i];
		if (!pf->windows || pf->id != ev->id || strncmp(pf->key, pr->name, plen) != 0 || pf->key[plen] != '/')
			continue;
		size_t at = 0;
		while (at < nv && v[at].version < pf->version)
			at++;
		if (at < nv && v[at].version == pf->version)
			continue;
		memmove(&v[at + 1], &v[at], (nv - at) * sizeof(*v));
		v[at] = (hs_cat_fields_version){.version = pf->version, .fields = pf->f, .n_fields = pf->n};
		nv++;
	}
	ev->versions = v;
	ev->n_versions = nv;
	ev->fields = v[nv - 1].fields;
	ev->n_fields = v[nv - 1].n_fields;
	ev->has_fields = true;
}

/* Gives every catalog event the field list `formats:` has for it. */
static void attach_fields(loader *L)
{
	for (size_t p = 0; p < L->rs->n_providers; p++) {
		hs_provider *pr = &L->rs->providers[p];
		if (pr->platform != HS_PLATFORM_WINDOWS || !pr->name)
			continue;
		for (size_t e = 0; e < pr->n_events; e++)
			if (pr->events[e].id >= 0 && !pr->events[e].has_fields)
				attach_win_fields(L, pr, &pr->events[e]);
	}
	for (size_t i = 0; i < L->n_fmts; i++) {
		const struct pending_fields *pf = &L->fmts[i];
		if (pf->windows)
			continue;
		const char *slash = strchr(pf->key, '/');
		size_t sys_len = (size_t)(slash - pf->key);
		for (size_t p = 0; p < L->rs->n_providers; p++) {
			hs_provider *pr = &L->rs->providers[p];
			if (pr->kind != HS_PKIND_FTRACE || !pr->system || strlen(pr->system) != sys_len ||
			    strncmp(pr->system, pf->key, sys_len) != 0)
				continue;
			for (size_t e = 0; e < pr->n_events; e++) {
				hs_cat_event *ev = &pr->events[e];
				if (ev->name && strcmp(ev->name, slash + 1) == 0 && !ev->has_fields) {
					ev->fields = pf->f;
					ev->n_fields = pf->n;
					ev->has_fields = true;
				}
			}
		}
	}
}

static const hs_key catalog_keys[] = {
	{"platform", HS_KEY_ENUM, 0, .values = platforms, .fn = cat_platform,
	 .doc = "windows or linux: every provider in this file (required with providers or formats)"},
	{"include", HS_KEY_LIST, HS_KEY_MANUAL | HS_KEY_OF_STR, .fn = load_includes,
	 .doc = "other catalogs, relative to this file"},
	{"providers", HS_KEY_LIST, .sub = &provider_t, .fn = cat_providers, .doc = "the providers this catalog describes"},
	{"formats", HS_KEY_MAP, .sub = &formats_t, .fn = cat_formats,
	 .doc = "linux: the payload fields of ftrace events, read from a kernel (tools/catalogsync)"},
	{"causes", HS_KEY_MAP, .sub = &hs_causes_t, .fn = hs_rules_cat_causes,
	 .doc = "the report's cause vocabulary (rules/causes.yaml): one catalog has it"},
	{"fleet", HS_KEY_MAP, .sub = &hs_fleet_t, .fn = hs_rules_cat_fleet,
	 .doc = "how a report's fleet signature groups incidents (rules/fleet.yaml): one catalog has it"},
	{0},
};
static const hs_keytable catalog_t = {"catalog", "a catalog", "/definitions/catalog", "Catalogs", &file_t,
				      catalog_keys};

static void pr_run(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	if (ok)
		hs_keys_load(r, v, &run_t, &LD(r)->rs->run);
}

static void pr_platforms(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	if (ok)
		hs_keys_load(r, v, &platforms_t, NULL);
}

static const hs_key profile_keys[] = {
	{"name", HS_KEY_IDENT, HS_KEY_REQUIRED, HS_AT(hs_ruleset, name), .doc = "[A-Za-z0-9_-]{1,64}"},
	{"description", HS_KEY_STR, HS_AT(hs_ruleset, description), .doc = "one line"},
	{"include", HS_KEY_LIST, HS_KEY_MANUAL | HS_KEY_OF_STR, .fn = load_includes,
	 .doc = "catalogs this profile uses, relative to this file"},
	{"run", HS_KEY_MAP, .sub = &run_t, .fn = pr_run, .doc = "where a run's files go"},
	{"platforms", HS_KEY_MAP, HS_KEY_REQUIRED, .sub = &platforms_t, .fn = pr_platforms,
	 .doc = "the sessions to run on each platform"},
	{0},
};
static const hs_keytable profile_t = {"profile", "a profile", "/definitions/profile", "Profiles", &file_t,
				      profile_keys};

const hs_keytable *const hs_rules_keytables[] = {
	&file_t,        &catalog_t,   &provider_t,         &cat_event_t, &profile_t,
	&run_t,         &platforms_t, &platform_section_t, &session_t,   &session_provider_t,
	&stack_entry_t, &wl_entry_t,  &hs_trigger_defaults_t, &hs_trigger_t,   &formats_t,   &hs_causes_t, &hs_cause_t,
	&hs_fleet_t,   &hs_fleet_symptom_t, &hs_fleet_culprit_t, NULL,
};

/* ---- files and includes ---- */

static hs_status load_file(loader *L, const char *path, const char *shown, const char *text, size_t len, bool top,
			   hs_pos from);

static void load_includes(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *inc, bool ok,
			  void *obj)
{
	(void)k, (void)n, (void)obj;
	loader *L = LD(r);
	if (!ok)
		return;
	const char *path = L->file;
	for (size_t i = 0; i < inc->n; i++) {
		const char *rel = hs_key_str(r, inc->items[i], "include");
		if (!rel || (L->flags & LOAD_NO_INCLUDES))
			continue;
		char *full = hs_path_sibling(path, rel);
		if (!full) {
			r->oom = true;
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
	file_head head = {.kind = -1};
	hs_keys_read(&L->r, root, &file_t, &head);
	int kind = head.kind;
	if (top && kind >= 0)
		L->rs->kind_known = true;
	if (kind == 1 && !top) {
		hs_diag_add(L->d, HS_D_INCLUDE, from, "include catalogs only; a profile is run on its own",
			    "'%s' is a profile, not a catalog", shown);
	} else {
		/* Includes first (also of a file of unknown kind), so the body's names resolve. */
		const hs_keytable *body = kind == 1 ? &profile_t : &catalog_t;
		L->file = file;
		hs_keys_read_one(&L->r, root, body, "include", NULL);
		if (kind == 1)
			L->rs->is_profile = true;
		L->platform = HS_PLATFORM_NONE;
		if (kind >= 0)
			hs_keys_load(&L->r, root, body, L->rs);
	}
	L->depth--;
	free(L->stack[L->depth]);
	canon = NULL;
out:
	free(canon);
	free(owned);
	if (L->r.oom)
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
	L.r = (hs_keyread){.d = d, .arena = &priv->arena, .ctx = &L};
	size_t errors_before = hs_diags_errors(d);
	rs->path = hs_diags_intern(d, path);
	hs_status st = load_file(&L, path, path, text, len, true, (hs_pos){0});
	if (st == HS_ENOMEM)
		return st;
	if (st != HS_OK)
		return st;
	attach_fields(&L);
	hs_rules_check(rs, d);
	if (L.r.oom)
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
