/* rulegen/decide.c: rates per minute, the specificity score and the keep/drop/cut/pin decision for every candidate event. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/limits.h"
#include "rulegen.h"
#include "hindsight/text.h"

void rg_format_rate(double r, bool round_up, char *buf, size_t cap)
{
	if (r <= 0) {
		snprintf(buf, cap, "0");
		return;
	}
	double tenths = round_up ? ceil(r * 10 - 1e-9) : floor(r * 10 + 0.5);
	if (tenths < 100) { /* below 10: one decimal */
		if (tenths < 1)
			snprintf(buf, cap, "<0.1");
		else
			snprintf(buf, cap, "%.1f", tenths / 10);
		return;
	}
	double whole = round_up ? ceil(r - 1e-9) : floor(r + 0.5);
	char digits[32];
	snprintf(digits, sizeof digits, "%.0f", whole);
	/* Thousands separators: "2812" -> "2,812". */
	size_t n = strlen(digits), o = 0;
	for (size_t i = 0; i < n && o + 2 < cap; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

static void bad(hs_diags *d, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, ...)
	HS_PRINTF_FMT(5, 6);

static void bad(hs_diags *d, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rg_vdiag(d, code, pos, hint, fmt, ap);
	va_end(ap);
}

/* The provider name the counts use for p: the ftrace system, or the GUID in lower case. */
static void counts_name(const hs_provider *p, char *buf, size_t cap)
{
	if (p->kind == HS_PKIND_FTRACE)
		snprintf(buf, cap, "%s", p->system ? p->system : p->name);
	else if (p->has_guid)
		hs_guid_format_lower(&p->guid, buf);
	else
		snprintf(buf, cap, "?");
}

static rg_prov *find_prov(rg_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_provs; i++)
		if (!strcmp(r->provs[i].p->name, name))
			return &r->provs[i];
	return NULL;
}

static void unknown_provider(hs_diags *d, const rg_result *r, hs_pos pos, const char *name, const char *what)
{
	const char **names = calloc(r->n_provs + 1, sizeof(char *));
	for (size_t i = 0; names && i < r->n_provs; i++)
		names[i] = r->provs[i].p->name;
	const char *near = names ? hs_closest(name, names) : NULL;
	char hint[200];
	if (near)
		snprintf(hint, sizeof hint, "did you mean '%s'?", near);
	bad(d, HS_D_UNKNOWN_PROVIDER, pos, near ? hint : "name a provider entry of the session that has an events: list",
	    "%s names '%s', which has no whitelist in session '%s'", what, name, r->session->name);
	free(names);
}

/* Adds a candidate (or returns the one with this identity). */
static rg_cand *cand_get(rg_prov *pv, size_t *cap, int id, const char *name, size_t n_scen)
{
	for (size_t i = 0; i < pv->n_cands; i++) {
		rg_cand *c = &pv->cands[i];
		if (id >= 0 ? c->id == id : (c->id < 0 && name && c->name && !strcmp(c->name, name)))
			return c;
	}
	if (pv->n_cands == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		rg_cand *nc = realloc(pv->cands, ncap * sizeof(*nc));
		if (!nc)
			return NULL;
		pv->cands = nc;
		*cap = ncap;
	}
	rg_cand *c = &pv->cands[pv->n_cands];
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->name = name;
	c->rate = calloc(n_scen, sizeof(double));
	c->from_filtered = calloc(n_scen, sizeof(bool));
	if (!c->rate || !c->from_filtered) {
		free(c->rate);
		free(c->from_filtered);
		return NULL;
	}
	pv->n_cands++;
	return c;
}

static int cand_order(const void *a, const void *b)
{
	const rg_cand *x = a, *y = b;
	/* Pins first, in config order; then by score, top rate, identity. */
	if (!!x->pin != !!y->pin)
		return x->pin ? -1 : 1;
	if (x->pin)
		return x->pin < y->pin ? -1 : x->pin > y->pin;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->top_rate != y->top_rate)
		return x->top_rate > y->top_rate ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static void note_ignored(rg_result *r, const char *provider, const char *why, uint64_t n)
{
	for (size_t i = 0; i < r->n_ignored; i++)
		if (!strcmp(r->ignored[i].provider, provider) && !strcmp(r->ignored[i].why, why)) {
			r->ignored[i].events += n;
			return;
		}
	rg_ignored *ni = realloc(r->ignored, (r->n_ignored + 1) * sizeof(*ni));
	if (!ni)
		return;
	r->ignored = ni;
	ni[r->n_ignored].provider = strdup(provider);
	ni[r->n_ignored].why = strdup(why);
	ni[r->n_ignored].events = n;
	r->n_ignored++;
}

static void add_unmanaged(rg_result *r, const char *what, const char *why)
{
	char buf[300];
	snprintf(buf, sizeof buf, "%s (%s)", what, why);
	char **nu = realloc(r->unmanaged, (r->n_unmanaged + 1) * sizeof(*nu));
	if (!nu)
		return;
	r->unmanaged = nu;
	nu[r->n_unmanaged++] = strdup(buf);
}

/* Rates, top scenario, score and the threshold decision of one candidate. */
static void judge(const rg_config *cfg, const char *cname, rg_cand *c)
{
	size_t ns = cfg->n_scenarios;
	char key_id[16];
	snprintf(key_id, sizeof key_id, "%d", c->id);
	const char *key = c->id >= 0 ? "id" : "event", *val = c->id >= 0 ? key_id : c->name;
	for (size_t s = 0; s < ns; s++) {
		const rg_scenario *sc = &cfg->scenarios[s];
		/* An entry with a kernel filter records only what passes it: its rate
		 * is the filtered capture's, when the scenario has one. */
		const rg_counts *src = &sc->full_counts;
		if (c->entry && c->entry->filter && sc->filtered_counts.n_files) {
			src = &sc->filtered_counts;
			c->from_filtered[s] = true;
		}
		const rg_row *row = rg_counts_find(src, cname, key, val);
		uint64_t n = row ? row->count : 0;
		c->rate[s] = src->seconds > 0 ? (double)n * 60.0 / src->seconds : 0;
		c->seen |= n > 0;
	}
	c->top = ns;
	for (size_t s = 0; s < ns; s++)
		if (s != cfg->baseline && (c->top == ns || c->rate[s] > c->rate[c->top]))
			c->top = s;
	c->top_rate = c->rate[c->top];
	c->other_max = 0;
	for (size_t s = 0; s < ns; s++)
		if (s != c->top && c->rate[s] > c->other_max)
			c->other_max = c->rate[s];
	c->base_rate = c->rate[cfg->baseline];
	c->score = c->top_rate / fmax(c->other_max, cfg->rate_floor);

	char a[32], b[32];
	if (c->pin && c->pin->exclude) {
		c->decision = RG_DROP;
		snprintf(c->reason, sizeof c->reason, "excluded: %s", c->pin->reason);
	} else if (c->pin) {
		c->decision = RG_PIN;
		snprintf(c->reason, sizeof c->reason, "pinned: %s", c->pin->reason);
	} else if (c->top_rate <= 0) {
		c->decision = RG_DROP;
		snprintf(c->reason, sizeof c->reason, "%s",
			 c->seen ? "seen at baseline only" : "not seen in any scenario");
	} else if (c->top_rate < cfg->min_top_rate) {
		c->decision = RG_DROP;
		rg_format_rate(c->top_rate, false, a, sizeof a);
		rg_format_rate(cfg->min_top_rate, false, b, sizeof b);
		snprintf(c->reason, sizeof c->reason, "rare: %s/min in %s < min_top_rate_per_min %s", a,
			 cfg->scenarios[c->top].name, b);
	} else if (c->base_rate > cfg->max_baseline_rate) {
		c->decision = RG_DROP;
		rg_format_rate(c->base_rate, false, a, sizeof a);
		rg_format_rate(cfg->max_baseline_rate, false, b, sizeof b);
		snprintf(c->reason, sizeof c->reason, "busy at baseline: %s/min > max_baseline_rate_per_min %s", a, b);
	} else if (cfg->max_top_rate > 0 && c->top_rate > cfg->max_top_rate) {
		c->decision = RG_DROP;
		rg_format_rate(c->top_rate, false, a, sizeof a);
		rg_format_rate(cfg->max_top_rate, false, b, sizeof b);
		snprintf(c->reason, sizeof c->reason, "too busy: %s/min in %s > max_top_rate_per_min %s", a,
			 cfg->scenarios[c->top].name, b);
	} else if (c->score < cfg->min_specificity) {
		c->decision = RG_DROP;
		snprintf(c->reason, sizeof c->reason, "uniform: score %.2f < min_specificity %g", c->score,
			 cfg->min_specificity);
	} else {
		c->decision = RG_KEEP;
		snprintf(c->reason, sizeof c->reason, "specific to %s", cfg->scenarios[c->top].name);
	}
}

/* The evidence line a kept event carries when it has no story (or already had evidence). */
static void evidence_of(const rg_config *cfg, rg_cand *c)
{
	if (c->decision == RG_PIN) {
		snprintf(c->evidence, sizeof c->evidence, "pinned: %s", c->pin->reason);
		return;
	}
	char a[32], b[32];
	rg_format_rate(c->top_rate, false, a, sizeof a);
	rg_format_rate(c->other_max, true, b, sizeof b);
	if (c->other_max > 0)
		snprintf(c->evidence, sizeof c->evidence, "%s only: %s/min vs <= %s/min elsewhere",
			 cfg->scenarios[c->top].name, a, b);
	else
		snprintf(c->evidence, sizeof c->evidence, "%s only: %s/min vs 0/min elsewhere",
			 cfg->scenarios[c->top].name, a);
}

static bool plan_provider(const rg_config *cfg, rg_result *r, rg_prov *pv, hs_diags *d)
{
	bool win = cfg->platform == HS_PLATFORM_WINDOWS;
	size_t cap = 0;
	char cname[64];
	counts_name(pv->p, cname, sizeof cname);
	/* 1. What the session already whitelists, in file order. */
	for (size_t i = 0; i < pv->sp->n_events; i++) {
		const hs_wl_entry *w = &pv->sp->events[i];
		const hs_cat_event *ce = hs_provider_find_event(pv->p, w->id, w->name);
		int id = win ? (ce ? ce->id : w->id) : -1;
		const char *name = win ? (ce ? ce->name : w->name) : w->name;
		rg_cand *c = cand_get(pv, &cap, id, name, cfg->n_scenarios);
		if (!c)
			return false;
		c->entry = w;
		c->cat = ce;
	}
	/* 2. Pins. */
	for (size_t i = 0; i < cfg->n_pins; i++) {
		const rg_pin *pin = &cfg->pins[i];
		if (strcmp(pin->provider, pv->p->name) != 0)
			continue;
		int id = pin->id;
		const char *name = pin->event;
		const hs_cat_event *ce = hs_provider_find_event(pv->p, id, name);
		if (win && id < 0) {
			if (!ce || ce->id < 0) {
				bad(d, HS_D_UNKNOWN_EVENT, pin->event_pos, "pin it by id",
				    "provider '%s' has no catalog event named '%s'", pv->p->name, name);
				continue;
			}
			id = ce->id;
		}
		if (win)
			name = ce ? ce->name : NULL;
		rg_cand *c = cand_get(pv, &cap, id, name, cfg->n_scenarios);
		if (!c)
			return false;
		c->pin = pin;
		c->cat = ce;
		((rg_pin *)pin)->used = true;
	}
	/* 3. Everything a full capture saw. */
	for (size_t s = 0; s < cfg->n_scenarios; s++) {
		const rg_counts *fc = &cfg->scenarios[s].full_counts;
		for (size_t i = 0; i < fc->n; i++) {
			const rg_row *row = &fc->rows[i];
			if (strcmp(row->provider, cname) != 0)
				continue;
			if (strcmp(row->key, win ? "id" : "event") != 0) {
				note_ignored(r, row->provider,
					     win ? "classic events (opcode=) have no id to whitelist"
						 : "not an ftrace event row",
					     row->count);
				continue;
			}
			int id = win ? atoi(row->value) : -1;
			if (win && id > HS_MAX_EVENT_ID)
				continue;
			const hs_cat_event *ce = hs_provider_find_event(pv->p, id, win ? NULL : row->value);
			rg_cand *c = cand_get(pv, &cap, id, win ? (ce ? ce->name : NULL) : row->value, cfg->n_scenarios);
			if (!c)
				return false;
			if (!c->cat)
				c->cat = ce;
		}
	}
	/* Candidate names are borrowed from the rules and the counts, which outlive the result. */
	for (size_t i = 0; i < pv->n_cands; i++)
		judge(cfg, cname, &pv->cands[i]);
	if (pv->n_cands)
		qsort(pv->cands, pv->n_cands, sizeof(*pv->cands), cand_order);

	/* 4. The per-provider limit: pins first, then the kept ones by rank. */
	size_t pins = 0;
	for (size_t i = 0; i < pv->n_cands; i++)
		pins += pv->cands[i].decision == RG_PIN;
	if (pv->limit && pins > pv->limit) {
		bad(d, HS_D_TOO_MANY_IDS, pv->limit_pos,
		    "pin fewer events or raise the provider's limit", "%zu pinned events for '%s' exceed its limit of %u",
		    pins, pv->p->name, pv->limit);
		return false;
	}
	size_t kept = pins;
	unsigned rank = 0;
	for (size_t i = 0; i < pv->n_cands; i++) {
		rg_cand *c = &pv->cands[i];
		if (c->decision == RG_PIN)
			continue;
		c->rank = ++rank;
		if (c->decision != RG_KEEP)
			continue;
		if (pv->limit && kept >= pv->limit) {
			c->decision = RG_CUT;
			snprintf(c->reason, sizeof c->reason, "cut: rank %u, past the limit of %u for %s (%zu pinned)",
				 c->rank, pv->limit, pv->p->name, pins);
			continue;
		}
		kept++;
	}
	/* 5. Stories: a human one (entry or catalog) wins; otherwise evidence. */
	for (size_t i = 0; i < pv->n_cands; i++) {
		rg_cand *c = &pv->cands[i];
		switch (c->decision) {
		case RG_KEEP:
		case RG_PIN:
			pv->kept++;
			pv->pinned += c->decision == RG_PIN;
			pv->added += !c->entry;
			if (c->entry && c->entry->story)
				c->story_source = "profile";
			else if (c->cat && c->cat->story)
				c->story_source = "catalog";
			else
				c->story_source = "stub";
			if (!strcmp(c->story_source, "stub") || (c->entry && c->entry->evidence))
				evidence_of(cfg, c);
			pv->refreshed += c->entry && c->entry->evidence && strcmp(c->evidence, c->entry->evidence) != 0;
			r->stubs += !strcmp(c->story_source, "stub");
			break;
		case RG_DROP:
			pv->dropped++;
			pv->removed += c->entry != NULL;
			break;
		case RG_CUT:
			pv->cut++;
			pv->removed += c->entry != NULL;
			break;
		}
	}
	pv->changed = pv->added || pv->removed || pv->refreshed;
	return true;
}

bool rg_decide(const rg_config *cfg, const hs_ruleset *rules, hs_diags *d, rg_result *out)
{
	memset(out, 0, sizeof(*out));
	out->cfg = cfg;
	out->rules = rules;
	const hs_platform_rules *pr = &rules->platforms[cfg->platform];
	if (!pr->present) {
		bad(d, HS_D_PLATFORM, cfg->platform_pos, NULL, "profile '%s' has no section for %s", cfg->profile,
		    hs_platform_name(cfg->platform));
		return false;
	}
	const char **snames = calloc(pr->n_sessions + 1, sizeof(char *));
	for (size_t i = 0; i < pr->n_sessions; i++) {
		if (snames)
			snames[i] = pr->sessions[i].name;
		if (pr->sessions[i].name && !strcmp(pr->sessions[i].name, cfg->session))
			out->session = &pr->sessions[i];
	}
	if (!out->session) {
		const char *near = snames ? hs_closest(cfg->session, snames) : NULL;
		char hint[160];
		if (near)
			snprintf(hint, sizeof hint, "did you mean '%s'?", near);
		bad(d, HS_D_ENUM, cfg->session_pos, near ? hint : NULL, "profile has no %s session '%s'",
		    hs_platform_name(cfg->platform), cfg->session);
		free(snames);
		return false;
	}
	free(snames);
	const hs_session *s = out->session;
	out->provs = calloc(s->n_providers + 1, sizeof(*out->provs));
	if (!out->provs)
		return false;
	for (size_t i = 0; i < s->n_providers; i++) {
		const hs_session_provider *sp = &s->providers[i];
		if (sp->match) {
			add_unmanaged(out, sp->match, "a match: pattern; rulegen edits named providers only");
			continue;
		}
		const hs_provider *p = sp->provider ? hs_rules_find_provider(rules, sp->provider) : NULL;
		if (!p)
			continue;
		if (!sp->has_events) {
			add_unmanaged(out, p->name, "no events: list, so it takes every event");
			continue;
		}
		if (find_prov(out, p->name)) {
			add_unmanaged(out, p->name, "enabled twice; the first entry is the one rewritten");
			continue;
		}
		rg_prov *pv = &out->provs[out->n_provs++];
		pv->sp = sp;
		pv->p = p;
		pv->entry = i;
		pv->limit = cfg->platform == HS_PLATFORM_WINDOWS ? HS_ETW_MAX_FILTER_IDS : 0;
		pv->limit_pos = cfg->platform_pos;
		if (cfg->has_default_limit) {
			pv->limit = cfg->default_limit;
			pv->limit_from_config = true;
			pv->limit_pos = cfg->default_limit_pos;
		}
	}
	bool ok = true;
	for (size_t i = 0; i < cfg->n_limits; i++) {
		rg_prov *pv = find_prov(out, cfg->limits[i].provider);
		if (!pv) {
			unknown_provider(d, out, cfg->limits[i].pos, cfg->limits[i].provider, "a limit");
			ok = false;
			continue;
		}
		pv->limit = cfg->limits[i].max;
		pv->limit_from_config = true;
		pv->limit_pos = cfg->limits[i].pos;
	}
	for (size_t i = 0; i < cfg->n_pins; i++)
		if (!find_prov(out, cfg->pins[i].provider)) {
			unknown_provider(d, out, cfg->pins[i].provider_pos, cfg->pins[i].provider, "a pin");
			ok = false;
		}
	if (!ok)
		return false;
	for (size_t i = 0; i < out->n_provs; i++)
		if (!plan_provider(cfg, out, &out->provs[i], d))
			ok = false;
	/* Counted providers that no whitelist of the session covers. */
	for (size_t sc = 0; sc < cfg->n_scenarios; sc++) {
		const rg_counts *fc = &cfg->scenarios[sc].full_counts;
		for (size_t i = 0; i < fc->n; i++) {
			bool mine = false;
			for (size_t k = 0; k < out->n_provs && !mine; k++) {
				char cname[64];
				counts_name(out->provs[k].p, cname, sizeof cname);
				mine = !strcmp(cname, fc->rows[i].provider);
			}
			if (!mine)
				note_ignored(out, fc->rows[i].provider, "no whitelist for it in the session", fc->rows[i].count);
		}
	}
	return ok && hs_diags_errors(d) == 0;
}

void rg_result_free(rg_result *r)
{
	for (size_t i = 0; i < r->n_provs; i++) {
		for (size_t k = 0; k < r->provs[i].n_cands; k++) {
			free(r->provs[i].cands[k].rate);
			free(r->provs[i].cands[k].from_filtered);
		}
		free(r->provs[i].cands);
	}
	free(r->provs);
	for (size_t i = 0; i < r->n_unmanaged; i++)
		free(r->unmanaged[i]);
	free(r->unmanaged);
	for (size_t i = 0; i < r->n_ignored; i++) {
		free(r->ignored[i].provider);
		free(r->ignored[i].why);
	}
	free(r->ignored);
	memset(r, 0, sizeof(*r));
}
