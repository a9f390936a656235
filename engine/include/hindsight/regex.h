/* hindsight/regex.h: the only door to PCRE2; nothing else includes pcre2.h. */
#ifndef HINDSIGHT_REGEX_H
#define HINDSIGHT_REGEX_H

#include <stdbool.h>
#include <stddef.h>

#include "hindsight/status.h"

/*
 * Ownership: hs_regex_compile's result belongs to the caller (hs_regex_free);
 * patterns and subjects are only read during the call.
 */

typedef struct hs_regex hs_regex;

/* Compiles a UTF-8 pattern. On failure returns HS_EINVAL, writes PCRE2's
 * message to err and the 0-based offset in the pattern where it stopped to
 * *erroff. The result is owned by the caller (hs_regex_free). */
hs_status hs_regex_compile(const char *pattern, hs_regex **out, char *err, size_t errlen, size_t *erroff);

/* True if the pattern matches anywhere in subject. Safe to call from several
 * threads on one hs_regex: match data is per call. */
bool hs_regex_match(const hs_regex *re, const char *subject);

void hs_regex_free(hs_regex *re);

#endif
