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

#endif
