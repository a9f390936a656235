/* rules/check_windows.c: Windows-only checks: id whitelists on classic providers (HS152) and per-build coverage. */
#include <stdio.h>
#include <string.h>

#include "hindsight/winbuild.h"
#include "rules/rules_int.h"

/*
 * ETW applies an EVENT_FILTER_TYPE_EVENT_ID filter only to manifest and
 * TraceLogging providers; a classic (MOF) provider's events, and the kernel
 * logger's system providers, pass it untouched (the filter is dropped and
 * everything the keywords select is recorded). An id whitelist there would
 * promise a selection that never happens, so it is an error.
 */
/* Calls fn for each provider a Windows session entry with an event whitelist selects. */
typedef void (*id_filter_fn)(const hs_session *s, const hs_session_provider *sp, const hs_provider *p, void *ctx);
static void each_id_filter(const hs_ruleset *rs, id_filter_fn fn, void *ctx)
{
	const hs_platform_rules *pr = &rs->platforms[HS_PLATFORM_WINDOWS];
	if (!pr->present)
		return;
	for (size_t si = 0; si < pr->n_sessions; si++) {
		const hs_session *s = &pr->sessions[si];
		for (size_t ei = 0; ei < s->n_providers; ei++) {
			const hs_session_provider *sp = &s->providers[ei];
			if (!sp->has_events || sp->n_events == 0)
				continue;
			const hs_selection *sel = hs_rules_selection(rs, HS_PLATFORM_WINDOWS, si, ei);
			for (size_t k = 0; sel && k < sel->n; k++)
				fn(s, sp, sel->providers[k], ctx);
		}
	}
}

static void classic_filter(const hs_session *s, const hs_session_provider *sp, const hs_provider *p, void *ctx)
{
	(void)s;
	if (p->kind != HS_PKIND_SYSTEM)
		return;
	hs_diag_add(ctx, HS_D_CLASSIC_ID_FILTER, sp->events[0].pos,
		    "select with keywords instead; a system provider's 'id' is the classic opcode "
		    "(several event types share it), and stacks: can still name events",
		    "event-id whitelist on system (kernel-logger) provider '%s': ETW ignores id "
		    "filters on classic providers and would record every event its keywords select",
		    p->name);
}

void hs_rules_check_windows(const hs_ruleset *rs, hs_diags *d)
{
	each_id_filter(rs, classic_filter, d);
}

/* ETW level names as the listings spell them -> the level's value; -1 if unknown. */
static int level_value(const char *s)
{
	static const struct {
		const char *name;
		int value;
	} levels[] = {{"Log Always", 0}, {"LogAlways", 0}, {"win:LogAlways", 0}, {"Critical", 1}, {"Error", 2},
		      {"Warning", 3},    {"Information", 4}, {"Verbose", 5}};
	for (size_t i = 0; s && i < sizeof levels / sizeof levels[0]; i++)
		if (strcmp(s, levels[i].name) == 0)
			return levels[i].value;
	return -1;
}

/* Whether the manifest's keyword name (ut:Xxx spelled with a colon) is the catalog's name (ut_Xxx). */
static bool keyword_same(const char *manifest, size_t len, const char *catalog)
{
	if (strlen(catalog) != len)
		return false;
	for (size_t i = 0; i < len; i++) {
		char m = manifest[i] == ':' ? '_' : manifest[i];
		if (m != catalog[i])
			return false;
	}
	return true;
}

/* Compares the listing's keyword names with the catalog event's; true when they are the same set. */
static bool keywords_agree(const char *listing, const hs_cat_event *ce)
{
	size_t seen = 0;
	const char *t = listing;
	while (*t) {
		while (*t == ' ')
			t++;
		if (!*t)
			break;
		size_t len = strcspn(t, " ");
		bool found = false;
		for (size_t i = 0; i < ce->n_keywords && !found; i++)
			found = keyword_same(t, len, ce->keywords[i]);
		if (!found)
			return false;
		seen++;
		t += len;
	}
	return seen == ce->n_keywords;
}

static void join_keywords(const hs_cat_event *ce, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ce->n_keywords && n < cap; i++) {
		int w = snprintf(buf + n, cap - n, "%s%s", i ? " " : "", ce->keywords[i]);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* HS151: the name (task or task + opcode), keywords and level the build's listing gives, against the catalog
 * event and the session entry that enables it. Only listings with those columns can disagree. */
static bool check_mismatch(const hs_winbuild *b, const hs_session_provider *sp, const hs_provider *p,
			   const hs_cat_event *ce, const hs_winbuild_event *ev, hs_pos pos, hs_diags *d)
{
	char what[600] = "";
	size_t n = 0;
	if (ce && ce->name && ev->task && *ev->task) {
		char both[256];
		snprintf(both, sizeof both, "%s%s", ev->task, ev->opcode ? ev->opcode : "");
		if (strcmp(ce->name, ev->task) != 0 && strcmp(ce->name, both) != 0)
			n += (size_t)snprintf(what + n, sizeof what - n, "%stask '%s'%s%s there, '%s' in the catalog",
					      n ? "; " : "", ev->task, ev->opcode && *ev->opcode ? " opcode " : "",
					      ev->opcode ? ev->opcode : "", ce->name);
	}
	if (ce && ev->keywords && n < sizeof what && !keywords_agree(ev->keywords, ce)) {
		char cat[256];
		join_keywords(ce, cat, sizeof cat);
		n += (size_t)snprintf(what + n, sizeof what - n, "%skeywords [%s] there, [%s] in the catalog",
				      n ? "; " : "", ev->keywords, cat);
	}
	/* The rules' level names, indexed by value (load.c spells them the same). */
	static const char *const level_names[] = {"logalways", "critical", "error", "warning", "information", "verbose"};
	int lv = level_value(ev->level);
	if (sp->has_level && lv > 0 && lv > sp->level && sp->level >= 0 && sp->level <= 5 && n < sizeof what)
		n += (size_t)snprintf(what + n, sizeof what - n,
				      "%slevel %s there, above the entry's level %s, so ETW drops it", n ? "; " : "",
				      ev->level, level_names[sp->level]);
	if (!n)
		return false;
	if (d)
		hs_diag_add(d, HS_D_WINBUILD_MISMATCH, pos, "check the catalog entry against that build's manifest",
			    "event %d of '%s' on %s (build %u): %s", ev->id, p->name, b->name, b->number, what);
	return true;
}

typedef struct {
	const hs_winbuild *b;
	hs_diags *d;
	hs_winbuild_cover *rows;
	size_t cap, nrows;
} cover_walk;

static void cover_one(const hs_session *s, const hs_session_provider *sp, const hs_provider *p, void *ctx)
{
	cover_walk *cw = ctx;
	const hs_winbuild *b = cw->b;
	hs_diags *d = cw->d;
	if (p->kind == HS_PKIND_SYSTEM)
		return; /* HS152's business: the ids are opcodes, not manifest ids */
	hs_winbuild_cover c = {.session = s->name, .provider = p->name};
	for (size_t i = 0; i < sp->n_events; i++) {
		const hs_wl_entry *w = &sp->events[i];
		const hs_cat_event *ce = hs_provider_find_event(p, w->id, w->name);
		int id = ce ? ce->id : w->id;
		if (id < 0)
			continue;
		c.n_ids++;
		const hs_winbuild_event *ev;
		hs_winbuild_presence pres = hs_winbuild_lookup(b, p->name, id, &ev);
		if (pres == HS_WINBUILD_UNKNOWN) {
			c.unknown++;
		} else if (pres == HS_WINBUILD_MISSING) {
			c.missing++;
			if (c.n_missing_ids < HS_ETW_MAX_FILTER_IDS)
				c.missing_ids[c.n_missing_ids++] = id;
			if (d)
				hs_diag_add(d, HS_D_WINBUILD_MISSING, w->pos,
					    "whitelist a fallback id that build has, or accept the gap there",
					    "event %d (%s) of '%s' does not exist on %s (%s, build %u): "
					    "nothing is recorded for it there",
					    id, ce && ce->name ? ce->name : "?", p->name, b->name, b->label, b->number);
		} else {
			c.present++;
			if (check_mismatch(b, sp, p, ce, ev, w->pos, d))
				c.mismatched++;
		}
	}
	if (cw->rows && cw->nrows < cw->cap)
		cw->rows[cw->nrows] = c;
	cw->nrows++;
}

size_t hs_winbuild_check(const hs_ruleset *rs, const hs_winbuild *b, hs_diags *d, hs_winbuild_cover *rows,
			 size_t cap)
{
	cover_walk cw = {.b = b, .d = d, .rows = rows, .cap = cap};
	if (b)
		each_id_filter(rs, cover_one, &cw);
	return cw.nrows;
}
