/* hindsight/winbuild.h: which catalog event ids exist on which Windows build (vendored manifest listings). */
#ifndef HINDSIGHT_WINBUILD_H
#define HINDSIGHT_WINBUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "hindsight/diag.h"
#include "hindsight/limits.h"
#include "hindsight/rules.h"

/*
 * The data is third_party/evtx-etw-resources/winbuilds.psv compiled in (see
 * tools/winbuilds/): for a few Windows builds, the public per-build event
 * listings of the providers the Windows catalog whitelists, reduced to the
 * ids the catalog lists. A provider whose listing was not read for a build is
 * "unknown" there, never "missing": no listing is not evidence of absence.
 */

typedef struct {
	const char *name;   /* the data's folder name, e.g. "W10_1507" */
	unsigned number;    /* the build number, e.g. 10240 */
	const char *label;  /* "Windows 10 1507" */
} hs_winbuild;

/* One event id as a build's listing has it. Strings are NULL where the
 * listing has no such column (the older listings have id and message only). */
typedef struct {
	int id;
	unsigned rows;        /* rows for this id: one per event version */
	const char *versions; /* "0 1 2" */
	const char *level;    /* "Information", "Verbose", ... */
	const char *task, *opcode;
	const char *keywords; /* space-separated names as the manifest spells them */
} hs_winbuild_event;

typedef enum {
	HS_WINBUILD_UNKNOWN = 0, /* the provider's listing for this build is not in the data */
	HS_WINBUILD_MISSING,     /* the listing was read and has no such id */
	HS_WINBUILD_PRESENT,
} hs_winbuild_presence;

size_t hs_winbuild_count(void);
/* The i-th build, oldest first; NULL past the end. */
const hs_winbuild *hs_winbuild_at(size_t i);
/* A build by folder name (case-insensitive, "W10_20H2") or build number ("19042"); NULL if the data has none. */
const hs_winbuild *hs_winbuild_find(const char *s);
/* Whether the data holds the provider's listing for the build; *full (may be NULL) says whether that listing
 * has level, version, task, opcode and keyword columns. */
bool hs_winbuild_has_listing(const hs_winbuild *b, const char *provider, bool *full);
/* Looks an id up; *out (may be NULL) gets the row when present. */
hs_winbuild_presence hs_winbuild_lookup(const hs_winbuild *b, const char *provider, int id,
					const hs_winbuild_event **out);

/* Coverage of one whitelist (a provider entry with `events:` in a Windows session) on one build. */
typedef struct {
	const char *session, *provider;
	size_t n_ids, present, missing, unknown, mismatched;
	/* The first missing ids; a valid whitelist has at most HS_ETW_MAX_FILTER_IDS, so all of them. */
	int missing_ids[HS_ETW_MAX_FILTER_IDS];
	size_t n_missing_ids;
} hs_winbuild_cover;

/*
 * Checks every whitelisted id of the profile's Windows sessions against build b:
 * HS150 for an id the build lacks, HS151 for one whose name (task or task +
 * opcode), keywords or level there disagree with the catalog and the session,
 * each at the whitelist entry (d may be NULL: counts only). Fills up to cap
 * rows (one per whitelist) and returns how many there are.
 */
size_t hs_winbuild_check(const hs_ruleset *rs, const hs_winbuild *b, hs_diags *d, hs_winbuild_cover *rows,
			 size_t cap);

#endif
