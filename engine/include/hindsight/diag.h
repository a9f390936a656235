/* hindsight/diag.h: diagnostics as data (severity, stable code, location, message, hint) and their renderers. */
#ifndef HINDSIGHT_DIAG_H
#define HINDSIGHT_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hindsight/status.h"

/* A 1-based position in a rules file. `file` points into the hs_diags path
 * table (see hs_diags_intern) and lives as long as that hs_diags. line/col 0
 * mean "the whole file". */
typedef struct {
	const char *file;
	unsigned line;
	unsigned col;
} hs_pos;

typedef enum { HS_SEV_ERROR, HS_SEV_WARNING } hs_severity;

/* structural: a question about one file's shape that the JSON Schema also
 * answers (tests/schema checks the two agree). semantic: needs the catalogs,
 * the platform or other files. */
typedef enum { HS_CLASS_STRUCTURAL, HS_CLASS_SEMANTIC } hs_diag_class;

/*
 * The stable codes. Append only: a code's meaning never changes once shipped,
 * because CI configurations and SARIF baselines refer to it.
 * X(enum, code, severity, class, slug, explanation)
 */
#define HS_DIAG_CODES(X)                                                                       \
	X(HS_D_YAML_SYNTAX, "HS001", ERROR, STRUCTURAL, "yaml-syntax",                            \
	  "The file is not well-formed YAML.")                                                    \
	X(HS_D_YAML_FEATURE, "HS002", ERROR, STRUCTURAL, "yaml-feature",                          \
	  "Anchors, aliases, tags and multiple documents are not allowed in rules files.")        \
	X(HS_D_DUP_KEY, "HS003", ERROR, STRUCTURAL, "duplicate-key",                              \
	  "A mapping names the same key twice; YAML keeps only one of them.")                     \
	X(HS_D_UNKNOWN_KEY, "HS004", ERROR, STRUCTURAL, "unknown-key",                            \
	  "A key the rules language does not define (usually a typo).")                           \
	X(HS_D_MISSING_KEY, "HS005", ERROR, STRUCTURAL, "missing-key",                            \
	  "A required key is absent.")                                                            \
	X(HS_D_TYPE, "HS006", ERROR, STRUCTURAL, "wrong-type",                                    \
	  "A value has the wrong YAML type (for example a string where a number is needed).")     \
	X(HS_D_RANGE, "HS007", ERROR, STRUCTURAL, "out-of-range",                                 \
	  "A number lies outside the range the language allows.")                                 \
	X(HS_D_ENUM, "HS008", ERROR, STRUCTURAL, "bad-value",                                     \
	  "A value is not one of the names the key accepts.")                                     \
	X(HS_D_GUID, "HS009", ERROR, STRUCTURAL, "bad-guid",                                      \
	  "A GUID is not of the form XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX.")                      \
	X(HS_D_VERSION, "HS010", ERROR, STRUCTURAL, "schema-version",                             \
	  "The file declares a schema_version this build does not understand.")                   \
	X(HS_D_NAME, "HS011", ERROR, STRUCTURAL, "bad-name",                                      \
	  "A name is empty, too long, or has characters outside its allowed set.")                \
	X(HS_D_STORY_FORMAT, "HS012", ERROR, STRUCTURAL, "story-format",                          \
	  "A story must be one line of 1 to 200 characters.")                                     \
	X(HS_D_MODE_KEY, "HS013", ERROR, STRUCTURAL, "mode-key",                                  \
	  "A session key is required by, or not allowed with, the session's mode.")               \
	X(HS_D_ONE_OF, "HS014", ERROR, STRUCTURAL, "one-of",                                      \
	  "Exactly one of a set of alternative keys must be given.")                              \
	X(HS_D_KIND_KEY, "HS015", ERROR, STRUCTURAL, "kind-key",                                  \
	  "A provider key is required by, or not allowed with, the provider's kind.")             \
	X(HS_D_DEPTH, "HS016", ERROR, STRUCTURAL, "too-deep",                                     \
	  "The YAML nests deeper than any rules file needs.")                                     \
	X(HS_D_INCLUDE, "HS101", ERROR, SEMANTIC, "include",                                      \
	  "An included file cannot be read or is not a catalog.")                                 \
	X(HS_D_INCLUDE_CYCLE, "HS102", ERROR, SEMANTIC, "include-cycle",                          \
	  "Files include each other in a cycle.")                                                 \
	X(HS_D_DUP_PROVIDER, "HS103", ERROR, SEMANTIC, "duplicate-provider",                      \
	  "Two providers share a name or a GUID.")                                                \
	X(HS_D_DUP_ID, "HS104", ERROR, SEMANTIC, "duplicate-event",                               \
	  "An event ID or name is listed twice in the same list.")                                \
	X(HS_D_TOO_MANY_IDS, "HS105", ERROR, SEMANTIC, "too-many-ids",                            \
	  "More event IDs than ETW accepts in one filter (64 per provider per session).")         \
	X(HS_D_UNKNOWN_EVENT, "HS106", WARNING, SEMANTIC, "unknown-event",                        \
	  "A whitelisted event is not in the provider's catalog, so it has no checked name.")     \
	X(HS_D_UNKNOWN_PROVIDER, "HS107", ERROR, SEMANTIC, "unknown-provider",                    \
	  "A session names a provider that no included catalog defines.")                         \
	X(HS_D_UNKNOWN_KEYWORD, "HS108", ERROR, SEMANTIC, "unknown-keyword",                      \
	  "A keyword name is not defined by the provider's catalog entry.")                       \
	X(HS_D_CHANNEL_BITS, "HS109", WARNING, SEMANTIC, "channel-bits",                          \
	  "A keyword mask touches bits 48-63, which Windows reserves for channels.")              \
	X(HS_D_BUFFER_LIMIT, "HS110", ERROR, SEMANTIC, "buffer-limits",                           \
	  "Buffer sizes or counts outside what the platform accepts.")                            \
	X(HS_D_RING_SIZE, "HS111", ERROR, SEMANTIC, "ring-size",                                  \
	  "A ring or file size that cannot fit in memory or is not plausible.")                   \
	X(HS_D_NO_STORY, "HS112", ERROR, SEMANTIC, "missing-story",                               \
	  "A whitelisted event has no story, neither in the profile nor in the catalog.")         \
	X(HS_D_OUTPUT, "HS113", ERROR, SEMANTIC, "output-name",                                   \
	  "An output name is not a plain file name inside the run folder.")                       \
	X(HS_D_REGEX, "HS114", ERROR, SEMANTIC, "regex",                                          \
	  "A PCRE2 pattern does not compile.")                                                    \
	X(HS_D_PLATFORM, "HS115", ERROR, SEMANTIC, "wrong-platform",                              \
	  "A provider, key or value is not valid on the platform it is used for.")                              \
	X(HS_D_MATCH_NONE, "HS116", WARNING, SEMANTIC, "match-nothing",                           \
	  "A provider pattern selects no catalog provider.")                                      \
	X(HS_D_KEYWORD_OFF, "HS117", WARNING, SEMANTIC, "keyword-disabled",                       \
	  "A whitelisted event is logged with keywords the session does not enable, so it "      \
	  "will never arrive.")                                                                   \
	X(HS_D_DUP_SESSION, "HS118", ERROR, SEMANTIC, "duplicate-session",                        \
	  "Two sessions share a name or a logger name.")                                          \
	X(HS_D_SAMPLE_RATE, "HS119", ERROR, SEMANTIC, "sample-rate",                              \
	  "The sampling rate is outside what the platform can deliver.")                          \
	X(HS_D_STACKS, "HS120", ERROR, SEMANTIC, "stacks",                                        \
	  "Stack walking is asked for in a way the provider's kind cannot do.")                   \
	X(HS_D_DUP_PROVIDER_USE, "HS121", WARNING, SEMANTIC, "provider-twice",                    \
	  "A session enables the same provider twice; the second enable replaces the first.")     \
	X(HS_D_OUTPUT_EXT, "HS122", WARNING, SEMANTIC, "output-extension",                        \
	  "An output name does not have the extension of the file the session writes.")          \
	X(HS_D_EMPTY, "HS123", WARNING, SEMANTIC, "empty",                                        \
	  "A profile defines no sessions for any platform, or a catalog no providers.")           \
	X(HS_D_FILTER, "HS124", ERROR, SEMANTIC, "filter",                                        \
	  "A kernel filter expression is malformed or used where it has no meaning.")             \
	X(HS_D_LIMIT, "HS125", ERROR, SEMANTIC, "too-many",                                       \
	  "More files or items than the loader accepts; the rest were not checked.")             \
	X(HS_D_PLATFORM_REQUIRED, "HS126", ERROR, SEMANTIC, "platform-required",                  \
	  "A key the platform needs is missing (for example keywords on a Windows provider).")   \
	X(HS_D_SYSTEM_PROVIDER, "HS127", ERROR, SEMANTIC, "system-provider",                      \
	  "A system provider is enabled on a session that is not a system logger (sampling).")    \
	X(HS_D_LEVEL_ZERO, "HS128", WARNING, SEMANTIC, "level-zero",                              \
	  "Level 0 (logalways) as an enable level means no level limit: every event is enabled.") \
	X(HS_D_STORY_STUB, "HS129", WARNING, SEMANTIC, "story-stub",                              \
	  "A whitelisted event has only generated evidence for a story (rulegen's stub); write "  \
	  "what it means when you see this event.")                                  \
	X(HS_D_TRIGGER_KEY, "HS130", ERROR, SEMANTIC, "trigger-key",                              \
	  "A trigger key is missing for the trigger's kind or has no meaning with it, or a "      \
	  "behaviour value is given neither by the trigger nor by trigger_defaults.")             \
	X(HS_D_TRIGGER_EVENT, "HS131", ERROR, SEMANTIC, "trigger-event",                          \
	  "A trigger's event or alert is not in the catalogs, or no file-circular session of "    \
	  "the platform streams it, so the trigger could never fire.")                            \
	X(HS_D_TRIGGER_SESSION, "HS132", ERROR, SEMANTIC, "trigger-session",                      \
	  "A trigger's session is missing, unknown, not file-circular, or does not enable the "   \
	  "trigger's events.")                                                                    \
	X(HS_D_TRIGGER_THRESHOLD, "HS133", ERROR, SEMANTIC, "trigger-threshold",                  \
	  "A frame_time trigger's thresholds cannot tell a hitch (neither threshold_ms > 0 nor "  \
	  "ratio > 1, or ceiling_ms not above threshold_ms).")                                    \
	X(HS_D_POST_DELAY, "HS134", ERROR, SEMANTIC, "post-delay",                                \
	  "A trigger's post_delay_ms is more than half of a ring's history at the session's "     \
	  "expected rate, so the snapshot would lose the time before the hit.")                   \
	X(HS_D_POST_DELAY_UNCHECKED, "HS135", WARNING, SEMANTIC, "post-delay-unchecked",          \
	  "No buffering session gives expected_rate_eps, so a trigger's post_delay_ms cannot be " \
	  "checked against the ring's history.")                                                  \
	X(HS_D_POST_DELAY_LATENCY, "HS136", WARNING, SEMANTIC, "post-delay-latency",              \
	  "On Windows, a trigger's post_delay_ms is shorter than real-time ETW delivery's "       \
	  "latency (about 1 s) plus a margin.")                                                   \
	X(HS_D_SNAPSHOT_CAP, "HS137", WARNING, SEMANTIC, "snapshot-cap",                          \
	  "A profile has triggers but no run.snapshots_max_mb, so a crash loop could fill the "   \
	  "disk with snapshots.")                                                                 \
	X(HS_D_DUP_TRIGGER, "HS138", ERROR, SEMANTIC, "duplicate-trigger",                        \
	  "Two triggers of one platform share a name.")                                           \
	X(HS_D_TRIGGER_IMPOSSIBLE, "HS139", ERROR, SEMANTIC, "trigger-impossible",                \
	  "A deadline or counter trigger's values cannot work together or cannot be met (a "      \
	  "share above 100%, steps out of order, a PSI window the kernel refuses, chance 0), so " \
	  "the trigger could never fire as written.")                                             \
	X(HS_D_FILTER_SYNTAX, "HS140", ERROR, SEMANTIC, "filter-syntax",                          \
	  "An ftrace filter expression does not parse with the kernel's filter grammar; the "     \
	  "caret points inside the filter string.")                                               \
	X(HS_D_FILTER_FIELD, "HS141", ERROR, SEMANTIC, "filter-field",                            \
	  "A filter, a trigger's field condition or a regex target names a field the event does " \
	  "not have (the catalog's field list, read from the kernel's format files).")            \
	X(HS_D_FILTER_TYPE, "HS142", ERROR, SEMANTIC, "filter-type",                              \
	  "A filter compares a field with a value of the other type (a string field with a "      \
	  "number, a number with a string), or uses ~ (glob) on a number.")                       \
	X(HS_D_STORY_FIELD, "HS143", WARNING, SEMANTIC, "story-field",                            \
	  "A story names a payload field the event does not have.")                               \
	X(HS_D_TRIGGER_DUBIOUS, "HS144", WARNING, SEMANTIC, "trigger-dubious",                    \
	  "A deadline or counter trigger's values work but probably not as meant (a deadline "    \
	  "shorter than the frame gaps its arming rule allows, samples further apart than "       \
	  "for_s, a re-arm shorter than the PSI window).")                                        \
	X(HS_D_WINBUILD_MISSING, "HS150", WARNING, SEMANTIC, "windows-build-missing",             \
	  "A whitelisted Windows event id does not exist on the build given to --windows-build "  \
	  "(its provider's manifest on that build lacks it), so that coverage is empty there.")   \
	X(HS_D_WINBUILD_MISMATCH, "HS151", WARNING, SEMANTIC, "windows-build-mismatch",           \
	  "A whitelisted Windows event exists on the build given to --windows-build but its "     \
	  "name, level or keywords there differ from the catalog's.")                             \
	X(HS_D_CLASSIC_ID_FILTER, "HS152", ERROR, SEMANTIC, "classic-id-filter",                  \
	  "An event-id whitelist on a classic (MOF) or kernel-logger provider: ETW ignores "      \
	  "event-id filters there and would record everything (kernel-logger ids are opcodes).")     \
	X(HS_D_CAUSE_DUP, "HS160", ERROR, SEMANTIC, "cause-duplicate",                              \
	  "A cause reason id is given twice, or two catalogs both carry a causes: vocabulary.")        \
	X(HS_D_CAUSE_TEMPLATE, "HS161", ERROR, SEMANTIC, "cause-template",                          \
	  "A cause's verdict or next template names a value the report does not fill, or has "       \
	  "unbalanced braces.")                                                                      \
	X(HS_D_CAUSE_REF, "HS162", ERROR, SEMANTIC, "cause-reference",                              \
	  "A cause's outranks names no other reason of the vocabulary, or lacks "                    \
	  "params.outrank_ratio.")                                                                     \
	X(HS_D_FLEET_DUP, "HS170", ERROR, SEMANTIC, "fleet-duplicate",                              \
	  "Fleet signature rules give a symptom id, a finding or trigger kind, or a signature field "  \
	  "twice, or two catalogs both carry fleet:.")

typedef enum {
#define HS_DIAG_ENUM(e, code, sev, cls, slug, text) e,
	HS_DIAG_CODES(HS_DIAG_ENUM)
#undef HS_DIAG_ENUM
	HS_D__COUNT
} hs_diag_code;

typedef struct {
	hs_diag_code code;
	hs_severity severity;
	hs_pos pos;
	char *message; /* owned by the list */
	char *hint;    /* owned by the list; NULL when there is none */
} hs_diag;

typedef struct hs_diags hs_diags;

typedef enum { HS_FMT_TEXT, HS_FMT_JSON, HS_FMT_SARIF, HS_FMT_GITHUB } hs_diag_format;

/* Returns a new empty list, free with hs_diags_free. NULL on OOM. */
hs_diags *hs_diags_new(void);
void hs_diags_free(hs_diags *d);

/* Remembers a file's text so renderers can quote the offending line, and
 * returns the interned path to use in hs_pos (owned by d). Copies both. */
const char *hs_diags_add_source(hs_diags *d, const char *path, const char *text, size_t len);

/* Interns a path without text (for files that could not be read). */
const char *hs_diags_intern(hs_diags *d, const char *path);

/* Records one diagnostic. hint may be NULL. Identical diagnostics (same code,
 * position and message) are kept once, so checking a catalog and a profile
 * that includes it reports the catalog's problems once. */
void hs_diag_add(hs_diags *d, hs_diag_code code, hs_pos pos, const char *hint, const char *fmt, ...)
	HS_PRINTF_FMT(5, 6);

size_t hs_diags_count(const hs_diags *d);
const hs_diag *hs_diags_at(const hs_diags *d, size_t i);
size_t hs_diags_errors(const hs_diags *d);
size_t hs_diags_warnings(const hs_diags *d);

/* Copies every diagnostic of src (and the file texts they quote) into dst,
 * keeping dst's de-duplication. */
void hs_diags_merge(hs_diags *dst, const hs_diags *src);

/* Sorts by file, line, column (stable), for output that reads top to bottom. */
void hs_diags_sort(hs_diags *d);

const char *hs_diag_code_str(hs_diag_code c);
const char *hs_diag_code_slug(hs_diag_code c);
const char *hs_diag_code_text(hs_diag_code c);
hs_diag_class hs_diag_code_class(hs_diag_code c);
hs_severity hs_diag_code_severity(hs_diag_code c);

/* Renders every diagnostic. TEXT is gcc-style with the source line and a
 * caret; JSON and SARIF are single documents; GITHUB is workflow commands. */
hs_status hs_diags_render(const hs_diags *d, FILE *out, hs_diag_format fmt);

/* Parses "text", "json", "sarif" or "github". */
hs_status hs_diag_format_parse(const char *s, hs_diag_format *out);

#endif
