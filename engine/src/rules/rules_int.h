/* rules/rules_int.h: internals shared by the loader (structure) and the checker (semantics). */
#ifndef HS_RULES_INT_H
#define HS_RULES_INT_H

#include "hindsight/rules.h"
#include "util/arena.h"

/* Resolved selection of one session provider entry: which catalog providers
 * it names (one for `provider:`, any number for `match:`). Filled by the
 * checker and reused by the planner so both agree on what a pattern means. */
typedef struct {
	const hs_provider **providers;
	size_t n;
} hs_selection;

typedef struct {
	hs_arena arena;
	/* selections[platform][session][entry] */
	hs_selection **selections[HS_PLATFORM_COUNT];
} hs_rules_priv;

static inline hs_rules_priv *hs_rules_priv_of(const hs_ruleset *rs)
{
	return (hs_rules_priv *)rs->priv;
}

/* Runs every semantic check; reports into d. Fills the selections. */
void hs_rules_check(hs_ruleset *rs, hs_diags *d);
/* Windows checks (rules/check_windows.c): id whitelists on classic providers (HS152). After the selections. */
void hs_rules_check_windows(const hs_ruleset *rs, hs_diags *d);

/* Selection of entry e of session s on platform p (after hs_rules_check). */
const hs_selection *hs_rules_selection(const hs_ruleset *rs, hs_platform p, size_t s, size_t e);

/* What hs_ftfilter_check found wrong: a code (HS_D_FILTER_SYNTAX, _FIELD or
 * _TYPE), the byte offset in the filter to put the caret under, a message
 * and a hint ("" for none). */
typedef struct {
	hs_diag_code code;
	size_t off;
	char msg[200];
	char hint[200];
} hs_ftfilter_error;

/* Checks an ftrace filter expression as the kernel would parse it for event
 * `ev` (rules/ftfilter.c). With ev NULL or without a field list only the
 * syntax and the values are checked. Returns true when the kernel would take
 * it; false with *err filled. */
bool hs_ftfilter_check(const char *filter, const hs_ruleset *rs, const hs_cat_event *ev, hs_ftfilter_error *err);

/* The cause vocabulary's tables and the catalog key that reads it (rules/causes.c). */
#include "hindsight/keys.h"
extern const hs_keytable hs_causes_t, hs_cause_t;
void hs_rules_cat_causes(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj);

/* The semantic checks' state (rules/check.c), and the triggers' checks of one platform (rules/check_triggers.c). */
typedef struct {
	hs_ruleset *rs;
	hs_diags *d;
	hs_arena *arena;
} hs_checker;
void hs_rules_check_triggers(hs_checker *C, hs_platform plat);

/* A profile's triggers: their tables and the platform section keys that read them (rules/triggers.c). */
extern const hs_keytable hs_trigger_defaults_t, hs_trigger_t;
void hs_rules_trigger_defaults(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok,
			       void *obj);
void hs_rules_triggers(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj);

/* The fleet signature rules' tables and the catalog key that reads them (rules/fleet.c). */
extern const hs_keytable hs_fleet_t, hs_fleet_symptom_t, hs_fleet_culprit_t;
void hs_rules_cat_fleet(hs_keyread *r, const hs_key *k, const hs_ynode *n, const hs_ynode *v, bool ok, void *obj);

#endif
