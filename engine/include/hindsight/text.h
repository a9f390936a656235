/* hindsight/text.h: small text helpers shared by the loader and the tools (file reading, edit distance, paths, directory listings). */
#ifndef HINDSIGHT_TEXT_H
#define HINDSIGHT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/status.h"

/*
 * Ownership: hs_read_file and hs_path_sibling return buffers the caller
 * frees, hs_dir_list an array hs_dir_list_free releases; the other functions return pointers into their arguments or static
 * data, or write into the caller's buffer.
 */

/* Reads a whole file (at most max bytes) into a new NUL-terminated buffer the
 * caller frees. HS_ENOENT, HS_EIO, HS_ELIMIT (too large) or HS_ENOMEM. */
hs_status hs_read_file(const char *path, size_t max, char **out, size_t *len);

/* Number of characters (UTF-8 code points) in s; limits in the rules language
 * are in characters, as in the JSON Schema. */
size_t hs_utf8_len(const char *s);

/* True when s is one or more ASCII digits and nothing else (a pid's /proc entry, a count). */
bool hs_all_digits(const char *s);

/* Decodes UTF-16LE from p (at most max_units code units, stopping after the
 * first NUL unit) into NUL-terminated UTF-8 in out[cap] (cap > 0). Surrogate
 * pairs are joined; lone surrogates become U+FFFD, so the output is always
 * valid UTF-8. When a character does not fit, the text is cut at that
 * character boundary and *truncated is set (it may be NULL); decoding still
 * runs to the NUL. Returns the units consumed, the NUL included; *terminated
 * (may be NULL) says whether a NUL ended the string. */
size_t hs_utf16le_to_utf8(const uint8_t *p, size_t max_units, char *out, size_t cap, bool *truncated,
			  bool *terminated);

/* Levenshtein distance, capped: returns cap+1 as soon as it exceeds cap. */
size_t hs_edit_distance(const char *a, const char *b, size_t cap);

/* Picks the candidate closest to `word` (or NULL if none is close enough to be
 * a plausible typo). candidates is a NULL-terminated array. */
const char *hs_closest(const char *word, const char *const *candidates);

/* The last component of path, after a '/' or a '\\' (traces and kernel paths
 * come from both platforms); a pointer into path. */
const char *hs_path_base(const char *path);

/* Joins a relative path onto the directory part of base ("a/b.yaml" + "c.yaml"
 * -> "a/c.yaml"); absolute paths are returned as-is. New string, caller frees. */
char *hs_path_sibling(const char *base, const char *rel);

/* "dir/name", with no second separator when dir already ends in '/' or '\\'.
 * New string, caller frees; NULL when out of memory. */
char *hs_path_join(const char *dir, const char *name);
/* Cuts an absolute '/'-separated path (a cgroup's) to its parent in place ("/a/b" -> "/a", "/a" -> "/"); false,
 * unchanged, at "/" or for a path without '/'. */
bool hs_path_up(char *path);
/* True when path names an existing directory / regular file (stat, links followed). */
bool hs_path_is_dir(const char *path);
bool hs_path_is_file(const char *path);

/* Whether hs_dir_list keeps `name` of directory `dir` (ctx is the caller's). */
typedef bool (*hs_dir_keep_fn)(const char *dir, const char *name, void *ctx);
/* The names in directory dir, sorted by strcmp (reports and listings come out
 * the same on every file system), without those starting with '.' and those
 * keep (when not NULL) refuses; at most max of them (0: no limit), the first
 * max the directory gives. *names (free with hs_dir_list_free) and *n are set
 * on every return: HS_ENOENT and nothing when dir cannot be opened; HS_ENOMEM
 * with the names read until memory ran out, sorted. */
hs_status hs_dir_list(const char *dir, hs_dir_keep_fn keep, void *ctx, size_t max, char ***names, size_t *n);
/* Frees hs_dir_list's n names and the array. */
void hs_dir_list_free(char **names, size_t n);

#endif
