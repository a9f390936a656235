/* rulegen/rulegen.h: shared pieces of rulegen (config, counts, decisions, the profile patch, the explain table). */
#ifndef HS_RULEGEN_H
#define HS_RULEGEN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/diag.h"
#include "hindsight/rules.h"
#include "hindsight/arena.h"
#include "hindsight/strbuf.h"

/*
 * Pipeline: rg_config_load (the YAML config, strict, file:line:col) ->
 * rg_counts_load for every scenario file (counts text or a .dat/.etl trace) ->
 * rg_decide (rates, scores, keep/drop/cut/pin per event of every whitelisted
 * provider of the session) -> rg_patch (the profile's text with only that
 * session's `events:` blocks rewritten) -> rg_explain (the table behind it).
 * Every threshold comes from the config; the only number in C is the ETW
 * filter limit (limits.h), the default per-provider cap on Windows.
 *
 * Ownership: everything hangs off the rg_config's arena (strings, arrays) or
 * is a plain malloc'd array freed by the matching _free function.
 */

/* ---- counts ---- */

/* One row: "PROVIDER<TAB>KEY=N<TAB>COUNT". provider is "sched", a lower-case
 * GUID, "kernel:0x03" or "wpp"; key is "event", "id", "opcode" or "msg";
 * value the text after '=' (an event name or a number). */
typedef struct {
	char *provider;
	char *key;
	char *value;
	uint64_t count;
	unsigned line; /* 0 for rows counted from a trace */
} rg_row;

typedef struct {
	rg_row *rows; /* sorted by rg_row_cmp, unique */
	size_t n, cap;
	double seconds;  /* capture length the counts cover (summed over files) */
	uint64_t total;
	size_t n_files;
} rg_counts;

/* Reads one counts file or trace (.dat by its magic, .etl by its extension)
 * and adds its rows and seconds to c. `expect_scenario`/`expect_capture` are
 * checked against the header's `# scenario:` / `# capture:` when the file has
 * them. Problems go to d with file:line:col (`at` is the config position
 * that named the file, for files that cannot be read). Returns false on any
 * error. */
bool rg_counts_load(rg_counts *c, const char *path, const char *expect_scenario, const char *expect_capture,
		    hs_pos at, hs_diags *d);
/* Counts a trace into c (used by rg_counts_load and `rulegen --counts`). */
bool rg_counts_from_trace(rg_counts *c, const char *path, hs_pos at, hs_diags *d);

/* A diagnostic with its message formatted here and cut at 512 bytes, as every
 * rulegen message is (counts.c, config.c and decide.c report through it). */
void rg_vdiag(hs_diags *d, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, va_list ap)
	HS_PRINTF_FMT(5, 0);
/* Finds a row; NULL if absent. */
const rg_row *rg_counts_find(const rg_counts *c, const char *provider, const char *key, const char *value);
int rg_row_cmp(const rg_row *a, const rg_row *b);
void rg_counts_sort(rg_counts *c);
/* Prints c in the counts format, with a header, as `analyze counts` would plus `# seconds:`. */
void rg_counts_print(const rg_counts *c, FILE *out);
void rg_counts_free(rg_counts *c);

/* ---- config ---- */

typedef struct {
	const char *path; /* resolved against the config's directory */
	hs_pos pos;
} rg_file;

typedef struct {
	const char *name;
	hs_pos pos;
	rg_file *full, *filtered;
	size_t n_full, n_filtered;
	rg_counts full_counts, filtered_counts; /* filled by rg_config_load_counts */
} rg_scenario;

typedef struct {
	const char *provider;
	hs_pos provider_pos;
	int id;              /* windows: the event id (a name is resolved by rg_decide); -1 for names */
	const char *event;   /* linux: the event name; windows: a catalog event name, or NULL */
	hs_pos event_pos;
	const char *reason;
	hs_pos pos;
	bool used;
	bool exclude; /* from `exclude:`: always dropped (else `keep:`: always kept) */
} rg_pin;

typedef struct {
	const char *provider;
	hs_pos pos;
	unsigned max;
} rg_limit;

typedef struct {
	hs_arena arena;
	const char *path;         /* the config file */
	const char *profile;      /* resolved path of the profile to patch */
	const char *profile_arg;  /* as written in the config */
	hs_pos profile_pos;
	hs_platform platform;
	hs_pos platform_pos;
	const char *session;
	hs_pos session_pos;
	size_t baseline;          /* index into scenarios */
	rg_scenario *scenarios;   /* config order */
	size_t n_scenarios;
	double min_top_rate, min_specificity, max_baseline_rate, rate_floor;
	double max_top_rate; /* optional: 0 = no cap */
	bool has_default_limit;
	unsigned default_limit;
	hs_pos default_limit_pos;
	rg_limit *limits;
	size_t n_limits;
	rg_pin *pins;
	size_t n_pins;
} rg_config;

/* Loads and checks the config (strict: unknown keys, types, ranges, required
 * keys, all with file:line:col in d). Returns false when there were errors;
 * *out is set either way and freed with rg_config_free. */
bool rg_config_load(const char *path, hs_diags *d, rg_config **out);
/* Loads every scenario's counts files and traces. */
bool rg_config_load_counts(rg_config *cfg, hs_diags *d);
void rg_config_free(rg_config *cfg);

/* ---- decisions ---- */

typedef enum { RG_KEEP, RG_PIN, RG_DROP, RG_CUT } rg_decision;

typedef struct {
	int id;             /* windows event id; -1 on linux */
	const char *name;   /* linux event name; windows catalog name or NULL */
	double *rate;       /* per scenario, events per minute */
	bool *from_filtered; /* per scenario: the rate is the filtered capture's (the entry has a filter) */
	size_t top;         /* the non-baseline scenario with the highest rate */
	double top_rate, other_max, base_rate, score;
	bool seen;          /* counted at least once in some scenario */
	rg_decision decision;
	char reason[320];
	const hs_wl_entry *entry; /* the whitelist entry it already has, or NULL */
	const hs_cat_event *cat;  /* its catalog event, or NULL */
	const rg_pin *pin;
	const char *story_source; /* "profile", "catalog" or "stub" for kept events; NULL when not kept */
	char evidence[256];       /* the evidence line to write (kept, no story or refreshed); "" if none */
	unsigned rank;            /* 1-based rank among the provider's candidates by score (0: pinned) */
} rg_cand;

typedef struct {
	const hs_session_provider *sp;
	const hs_provider *p;
	size_t entry;         /* index in the session's providers list */
	unsigned limit;       /* 0: none */
	bool limit_from_config;
	hs_pos limit_pos;     /* where the config sets it (the platform key for the ETW default) */
	rg_cand *cands;       /* in table order: pins, then by score */
	size_t n_cands;
	size_t kept, pinned, dropped, cut, added, removed, refreshed;
	bool changed; /* its list must be rewritten (added, removed or refreshed evidence) */
} rg_prov;

typedef struct {
	char *provider; /* as in the counts */
	char *why;
	uint64_t events;
} rg_ignored;

typedef struct {
	const rg_config *cfg;
	const hs_ruleset *rules;
	const hs_session *session;
	rg_prov *provs;
	size_t n_provs;
	char **unmanaged; /* session providers rulegen leaves alone, with why */
	size_t n_unmanaged;
	rg_ignored *ignored;
	size_t n_ignored;
	size_t stubs; /* kept events whose story is generated evidence */
} rg_result;

/* Computes every decision. Config problems that need the profile (a pin or a
 * limit naming a provider the session does not whitelist, a pin on an unknown
 * event name, more pins than a limit) go to d. Returns false on errors. */
bool rg_decide(const rg_config *cfg, const hs_ruleset *rules, hs_diags *d, rg_result *out);
void rg_result_free(rg_result *r);

/* "2,812", "42", "3.2", "0" (rounded) and, for upper bounds, rounded up. */
void rg_format_rate(double r, bool round_up, char *buf, size_t cap);

/* ---- patch and output ---- */

/* Returns the profile's text with the session's whitelists rewritten (new
 * string, free()). `text` is the profile as read. NULL with a diagnostic in d
 * when a list has a shape rulegen cannot edit. */
char *rg_patch(const rg_result *r, const char *text, size_t len, hs_diags *d);

/* Unified diff of a -> b (both whole texts) with 3 lines of context, labelled
 * with `name`. Empty when equal. */
void rg_diff(const char *name, const char *a, const char *b, hs_strbuf *out);

/* The --explain table. */
void rg_explain(const rg_result *r, hs_strbuf *out);

/* A YAML double-quoted scalar of s. */
void rg_yaml_quote(hs_strbuf *sb, const char *s);

#endif
