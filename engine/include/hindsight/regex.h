/* hindsight/regex.h: the only door to PCRE2; nothing else includes pcre2.h. */
#ifndef HINDSIGHT_REGEX_H
#define HINDSIGHT_REGEX_H

#include <stdbool.h>
#include <stddef.h>

#include "hindsight/status.h"

/*
 * Every match is bounded (limits.h: HS_REGEX_MATCH_LIMIT, HS_REGEX_DEPTH_LIMIT,
 * HS_REGEX_HEAP_LIMIT_KB, and the JIT's own stack), so a hostile pattern costs
 * a bounded amount of work per subject: patterns come from rules files and,
 * for triggers, run on event payloads while recording.
 *
 * Ownership: hs_regex_compile's result belongs to the caller (hs_regex_free);
 * patterns and subjects are only read during the call.
 */

typedef struct hs_regex hs_regex;

typedef struct {
	/* JIT-compile when this PCRE2 has a JIT (pcre2_config); a failing JIT
	 * compile (no executable memory, say) falls back to the interpreter,
	 * which gives the same answers with the same limits. */
	bool jit;
} hs_regex_opts;

/* The outcome of a bounded match. */
typedef enum {
	HS_REGEX_NOMATCH = 0,
	HS_REGEX_MATCH = 1,
	HS_REGEX_LIMIT = 2, /* a match, depth, heap or JIT stack limit stopped it: treat as no match, count it */
	HS_REGEX_ERROR = 3, /* out of memory or another PCRE2 error */
} hs_regex_result;

/* Compiles a UTF-8 pattern. On failure returns HS_EINVAL, writes PCRE2's
 * message to err and the 0-based offset in the pattern where it stopped to
 * *erroff. The result is owned by the caller (hs_regex_free). JIT-compiles
 * when available (as hs_regex_compile_opts with jit = true). */
hs_status hs_regex_compile(const char *pattern, hs_regex **out, char *err, size_t errlen, size_t *erroff);

/* hs_regex_compile with options; opts NULL means the defaults of hs_regex_compile. */
hs_status hs_regex_compile_opts(const char *pattern, const hs_regex_opts *opts, hs_regex **out, char *err,
				size_t errlen, size_t *erroff);

/* True if the pattern matches anywhere in subject (a limit hit is false).
 * Safe to call from several threads on one hs_regex: match data is per call. */
bool hs_regex_match(const hs_regex *re, const char *subject);

/* Matches the first len bytes of subject (no NUL needed) and says whether a
 * limit stopped the match. Thread-safe like hs_regex_match. */
hs_regex_result hs_regex_match_limited(const hs_regex *re, const char *subject, size_t len);

/* True when matches of this regex run JIT-compiled code. */
bool hs_regex_jitted(const hs_regex *re);

void hs_regex_free(hs_regex *re);

#endif
