/* hindsight/plan_match.h: would a recorded event have passed a plan's Windows provider enables (ETW's filter semantics, offline)? */
#ifndef HINDSIGHT_PLAN_MATCH_H
#define HINDSIGHT_PLAN_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "hindsight/etl.h"
#include "hindsight/plan.h"

/*
 * The test is the one ETW applies when a session enables a provider
 * (EnableTraceEx2 with the plan's level, keywords and event-id filter), so a
 * reader can show offline what a profile would have recorded:
 *
 *   level     record level <= enable level, or enable level 0; level 0
 *             (LogAlways) records pass any level.
 *   keywords  a record keyword of 0 passes, unless the entry sets
 *             ignore_keyword_0; otherwise (kw & match_any) != 0 when
 *             match_any != 0, and (kw & match_all) == match_all.
 *   whitelist when the entry has `events`, the record's id must be one.
 *
 * A record passes when any session's entry for its provider passes all three.
 * How each kind of record is attributed to providers is in hs_plan_match_kind.
 *
 * Ownership: the plan and record are only read; the provider name returned
 * is borrowed from the plan's ruleset.
 */

/* How a record names its origin, which decides how it is attributed. */
typedef enum {
	/* A manifest/TraceLogging event: the provider GUID; id = the event id. */
	HS_MATCH_EVENT,
	/* A classic (MOF) event: the event-class GUID is the provider's GUID or
	 * the classic_guid of one of its catalog events; id = the opcode.
	 * Classic headers carry no keyword, so only level and whitelist apply. */
	HS_MATCH_CLASSIC,
	/* A kernel event, with the class GUID of its group; id = the opcode. It
	 * carries neither level nor keyword: the catalogs of `kind: system`
	 * providers say which (GUID, opcode) each produces, the record belongs to
	 * the system providers whose catalog lists it, and the listed event's
	 * keywords stand in for the record's. A kernel event no system catalog
	 * lists (e.g. Process/39 Defunct) passes when an enabled system provider
	 * without a whitelist lists other events of the same class: ETW enables
	 * kernel events by group, so such a session would have logged it. A
	 * kernel record without a class GUID never passes. */
	HS_MATCH_KERNEL,
	/* The logfile header and its companions: always kept (without them a
	 * file has no clock and no header). */
	HS_MATCH_HEADER,
	/* A WPP message: passes when its message GUID is an enabled provider's
	 * GUID and that entry has no whitelist (WPP headers carry no level or
	 * keyword, and message numbers are not event ids). */
	HS_MATCH_MESSAGE,
} hs_plan_match_kind;

typedef struct {
	hs_plan_match_kind kind;
	bool has_guid;
	hs_guid guid; /* see the kind */
	int id;       /* event id or opcode */
	uint8_t level;
	uint64_t keywords;
} hs_plan_match_record;

/* True when some session of the Windows plan lets r through. *provider (may
 * be NULL) is set to the name of the catalog provider the record was last
 * attributed to, passed or not, and left alone when none. */
bool hs_plan_match(const hs_plan *plan, const hs_plan_match_record *r, const char **provider);

/* The identity an .etl record gives the matcher (kernel records get their
 * group's class GUID); false for a record kind the matcher does not know. */
bool hs_plan_match_record_from_etl(const hs_etl_record *r, hs_plan_match_record *out);

/* Both: would this .etl record have been recorded under the plan? */
bool hs_plan_match_etl(const hs_plan *plan, const hs_etl_record *r, const char **provider);

#endif
