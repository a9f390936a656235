/* rules/causes.c: a catalog's `causes:`, the report's cause vocabulary: its key tables, its strict reader and its checks (one vocabulary, unique reason ids, templates that name known values, patterns that compile). */
#include <stdio.h>
#include <string.h>

#include "hindsight/keys.h"
#include "hindsight/limits.h"
#include "hindsight/regex.h"
#include "hindsight/strbuf.h"
#include "hindsight/text.h"
#include "hindsight/wait_reason.h"
#include "rules_int.h"

/* The values a template may name; the report fills them (engine/src/report/cause/text.c). */
static const char *const template_names[] = {"time", "share", "culprit", "cpu", "what", "chain", "thread", NULL};

const hs_cause_def *hs_cause_vocab_find(const hs_cause_vocab *v, const char *id)
{
	for (size_t i = 0; v && id && i < v->n_reasons; i++)
		if (!strcmp(v->reasons[i].id, id))
			return &v->reasons[i];
	return NULL;
}

double hs_cause_param_get(const hs_cause_def *d, const char *name, double def)
{
	for (size_t i = 0; d && i < d->n_params; i++)
		if (!strcmp(d->params[i].name, name))
			return d->params[i].value;
	return def;
}

/* A template's {names}: each one the report knows, braces balanced. */
static void check_template(hs_keyread *r, const hs_ynode *v, const char *s)
{
	for (const char *p = s; p && *p; p++) {
		if (*p == '}') {
			hs_diag_add(r->d, HS_D_CAUSE_TEMPLATE, v->pos, "write '{' and '}' only around a value's name",
				    "a '}' without its '{' in the template");
			return;
		}
		if (*p != '{')
			continue;
		const char *e = strchr(p, '}');
		if (!e) {
			hs_diag_add(r->d, HS_D_CAUSE_TEMPLATE, v->pos, "close it with '}'", "a '{' without its '}' in the template");
			return;
		}
		size_t n = (size_t)(e - p - 1);
		bool known = false;
		for (size_t k = 0; template_names[k] && !known; k++)
			known = strlen(template_names[k]) == n && !strncmp(template_names[k], p + 1, n);
		if (!known) {
			hs_diag_add(r->d, HS_D_CAUSE_TEMPLATE, v->pos,
				    "a template names {time}, {share}, {culprit}, {cpu}, {what}, {chain} or {thread}",
				    "the template names {%.*s}, which the report does not fill", (int)(n > 40 ? 40 : n), p + 1);
			return;
		}
		p = e;
	}
}

static void cz_template(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	if (ok && v && v->type == HS_Y_SCALAR)
		check_template(r, v, v->str);
}

static void cz_match(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n, (void)obj;
	if (!ok || !v || v->type != HS_Y_SCALAR)
		return;
	hs_regex *re = NULL;
	char err[160];
	size_t off = 0;
	if (hs_regex_compile(v->str, &re, err, sizeof err, &off) != HS_OK)
		hs_diag_add(r->d, HS_D_REGEX, v->pos, "a PCRE2 pattern", "match does not compile at offset %zu: %s", off, err);
	hs_regex_free(re);
}

/* params: name -> number. */
static void cz_params(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_cause_def *d = obj;
	if (!ok || !v || v->type != HS_Y_MAP)
		return;
	hs_cause_param *ps = hs_key_alloc(r, v->n, sizeof *ps);
	if (!ps)
		return;
	size_t o = 0;
	for (size_t i = 0; i < v->n; i++) {
		const char *name = v->keys[i]->str;
		if (!hs_key_ident_ok(name, 40, false, true)) {
			hs_diag_add(r->d, HS_D_NAME, v->keys[i]->pos, "letters, digits and '_', a letter first",
				    "'%s' is not a parameter name", name);
			continue;
		}
		double x = 0;
		if (!hs_key_number(r, v->items[i], name, 0, 1e9, &x))
			continue;
		ps[o++] = (hs_cause_param){.name = name, .value = x, .pos = v->items[i]->pos};
	}
	d->params = ps;
	d->n_params = o;
}

/* windows_wait_reasons: names Windows gives its thread wait reasons (KWAIT_REASON), each once. */
static void cz_wait_reasons(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)n;
	hs_cause_def *d = obj;
	if (!ok || !v || v->type != HS_Y_SEQ)
		return;
	const char **names;
	hs_pos *pos;
	size_t got = hs_key_strlist(r, v, k->name, &names, &pos);
	int *ws = hs_key_alloc(r, got, sizeof *ws);
	if (!ws)
		return;
	size_t o = 0;
	for (size_t i = 0; i < got; i++) {
		int w = hs_wait_reason_find(names[i]);
		if (w < 0) {
			hs_key_not_in(r, pos[i], names[i], hs_wait_reason_names(),
				      "the names are wdm.h's KWAIT_REASON, case and all",
				      "'%s' is not a Windows thread wait reason; a KWAIT_REASON name is one of: ", names[i]);
			continue;
		}
		bool dup = false;
		for (size_t j = 0; j < o && !dup; j++)
			if (ws[j] == w) {
				hs_diag_add(r->d, HS_D_CAUSE_DUP, pos[i], "give each wait reason once",
					    "wait reason '%s' is listed twice (first at %u:%u)", names[i], pos[j].line, pos[j].col);
				dup = true;
			}
		if (dup)
			continue;
		pos[o] = pos[i];
		ws[o++] = w;
	}
	d->windows_wait_reasons = ws;
	d->windows_wait_reasons_pos = pos;
	d->n_windows_wait_reasons = o;
}

static void cz_outranks(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_cause_def *d = obj;
	if (!ok || !v)
		return;
	hs_pos *pos = NULL;
	const char **ids = NULL;
	size_t c = hs_key_strlist(r, v, "outranks", &ids, &pos);
	d->outranks = ids;
	d->outranks_pos = pos;
	d->n_outranks = c;
	const hs_ynode *params = hs_ymap_get(n, "params");
	if (c && (!params || params->type != HS_Y_MAP || !hs_ymap_get(params, "outrank_ratio")))
		hs_diag_add(r->d, HS_D_CAUSE_REF, v->pos, "give params: {outrank_ratio: N}",
			    "outranks needs params.outrank_ratio (the share of the outranked reason's time it must have)");
}

static const hs_key cause_keys[] = {
	{"id", HS_KEY_IDENT, HS_KEY_REQUIRED, HS_AT(hs_cause_def, id), HS_POS_AT(hs_cause_def, id_pos),
	 .doc = "the reason's id (kebab-case), as report.json gives it"},
	{"title", HS_KEY_STR, HS_KEY_REQUIRED, HS_AT(hs_cause_def, title), .doc = "its name in a report (a few words)"},
	{"story", HS_KEY_STORY, HS_KEY_REQUIRED, HS_AT(hs_cause_def, story), .doc = "one line: what the reason means"},
	{"verdict", HS_KEY_STR, HS_KEY_REQUIRED, HS_AT(hs_cause_def, verdict), .fn = cz_template,
	 .doc = "the verdict's clause when this reason dominates, a template"},
	{"next", HS_KEY_STR, 0, HS_AT(hs_cause_def, next), .fn = cz_template,
	 .doc = "what to look at next, a template"},
	{"chain", HS_KEY_STR, 0, HS_AT(hs_cause_def, chain), .fn = cz_template,
	 .doc = "how the reason reads when a waker spent its time so, as one step of another thread's wake-up chain "
		"(a template; without it, the title)"},
	{"match", HS_KEY_STR, 0, HS_AT(hs_cause_def, match), HS_POS_AT(hs_cause_def, match_pos), .fn = cz_match,
	 .doc = "a PCRE2 pattern the reason's classifier reads (slice, task or system call names)"},
	{"params", HS_KEY_MAP, 0, .fn = cz_params, .doc = "numbers the reason's classifier reads, by name"},
	{"outranks", HS_KEY_LIST, HS_KEY_OF_STR, .fn = cz_outranks,
	 .doc = "reasons this one explains when both are found: it takes the verdict from them with at least "
		"params.outrank_ratio of their time"},
	{"windows_wait_reasons", HS_KEY_LIST, HS_KEY_OF_STR, .fn = cz_wait_reasons,
	 .doc = "Windows: the thread wait reasons (KWAIT_REASON names) whose waits are this reason"},
	{0},
};
const hs_keytable hs_cause_t = {"cause", "a cause", "/definitions/cause", "Causes", NULL, cause_keys};

/* A reason is kept with its id, once; a wait reason is one reason's, so the classifier need not choose. */
static bool reason_keep(hs_keyread *r, const hs_ynode *node, void *items, size_t o)
{
	(void)node;
	hs_cause_def *ds = items, *d = &ds[o];
	if (!d->id)
		return false;
	for (size_t j = 0; j < o; j++)
		if (!strcmp(ds[j].id, d->id)) {
			hs_diag_add(r->d, HS_D_CAUSE_DUP, d->id_pos, "give each reason once",
				    "reason '%s' is already defined at line %d", d->id, ds[j].id_pos.line);
			return false;
		}
	for (size_t w = 0; w < d->n_windows_wait_reasons; w++)
		for (size_t j = 0; j < o; j++)
			for (size_t x = 0; x < ds[j].n_windows_wait_reasons; x++)
				if (ds[j].windows_wait_reasons[x] == d->windows_wait_reasons[w])
					hs_diag_add(r->d, HS_D_CAUSE_DUP, d->windows_wait_reasons_pos[w],
						    "give a wait reason to one reason only",
						    "wait reason '%s' already belongs to reason '%s' (at %u:%u)",
						    hs_wait_reason_name(d->windows_wait_reasons[w]), ds[j].id,
						    ds[j].windows_wait_reasons_pos[x].line, ds[j].windows_wait_reasons_pos[x].col);
	return true;
}

static void cz_reasons(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_cause_vocab *voc = obj;
	if (!ok || !v || v->type != HS_Y_SEQ)
		return;
	size_t o;
	hs_cause_def *ds = hs_keys_load_list(r, v, &hs_cause_t, sizeof *ds, offsetof(hs_cause_def, pos), "a cause",
					     reason_keep, &o);
	if (!ds)
		return;
	voc->reasons = ds;
	voc->n_reasons = o;
	/* outranks names reasons of this vocabulary */
	for (size_t i = 0; i < o; i++)
		for (size_t x = 0; x < ds[i].n_outranks; x++) {
			bool known = false;
			for (size_t j = 0; j < o && !known; j++)
				known = j != i && !strcmp(ds[j].id, ds[i].outranks[x]);
			if (!known)
				hs_diag_add(r->d, HS_D_CAUSE_REF, ds[i].outranks_pos[x], "name another reason of this vocabulary",
					    "reason '%s' outranks '%s', which is not one", ds[i].id, ds[i].outranks[x]);
		}
}

static const hs_key causes_keys[] = {
	{"version", HS_KEY_UINT, HS_KEY_REQUIRED, .min = 1, .max = 1000000, HS_AT(hs_cause_vocab, version),
	 .doc = "the vocabulary's version: a new id, or an id that changes meaning, bumps it"},
	{"lookback_ms", HS_KEY_UINT, HS_KEY_REQUIRED, .max = HS_RULES_MAX_CAUSE_LOOKBACK_MS,
	 HS_AT(hs_cause_vocab, lookback_ms), .doc = "how far before the window the analysis reads (a sleep's timer, a "
						     "fault's start)"},
	{"mention_pct", HS_KEY_UINT, HS_KEY_REQUIRED, .max = 100, HS_AT(hs_cause_vocab, mention_pct),
	 .doc = "a reason under this share of the window is listed, but not in the verdict"},
	{"chain_hops", HS_KEY_UINT, HS_KEY_REQUIRED, .max = HS_CAUSE_MAX_HOPS - 1, HS_AT(hs_cause_vocab, chain_hops),
	 .doc = "how many wakers deep the wake-up chain is followed"},
	{"reasons", HS_KEY_LIST, HS_KEY_REQUIRED, .sub = &hs_cause_t, .fn = cz_reasons,
	 .doc = "the reasons, each once"},
	{0},
};
const hs_keytable hs_causes_t = {"causes", "the causes", "/definitions/causes", "Causes", NULL, causes_keys};

void hs_rules_cat_causes(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj)
{
	(void)k, (void)n;
	hs_ruleset *rs = obj;
	if (!hs_key_once(r, ok, v, rs->causes.present, rs->causes.pos, HS_D_CAUSE_DUP,
			 "keep one catalog with causes: (rules/causes.yaml)", "cause vocabulary"))
		return;
	hs_cause_vocab voc = {.pos = v->pos};
	hs_keys_load(r, v, &hs_causes_t, &voc);
	voc.present = true;
	rs->causes = voc;
}
