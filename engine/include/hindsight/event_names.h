/* hindsight/event_names.h: what an event is called: provider and event names from the rules' catalogs, the kernel groups and the trace itself. */
#ifndef HINDSIGHT_EVENT_NAMES_H
#define HINDSIGHT_EVENT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "hindsight/event.h"
#include "hindsight/rules.h"

/*
 * One namer for every view of a trace (analyze summary, the estimator, and
 * what comes next), so one event has one name everywhere. Names come, best
 * first, from the rules' catalogs (provider by GUID or ftrace system, event
 * by id or name), from the trace (TraceLogging provider and event names,
 * ftrace system and event names) and from the caller's kernel group names,
 * with the numbers as the last resort.
 *
 * Ownership: an hs_event_names borrows its ruleset; an hs_event_label's
 * catalog pointers are borrowed from that ruleset, its strings are its own.
 */

/* The catalog provider with this GUID / for this ftrace system, or NULL. rs may be NULL. */
const hs_provider *hs_event_find_provider_guid(const hs_ruleset *rs, const hs_guid *g);
const hs_provider *hs_event_find_provider_system(const hs_ruleset *rs, const char *system);

typedef struct {
	const hs_ruleset *rules; /* catalogs; may be NULL. Kernel groups: hs_etl_kernel_group_name */
} hs_event_names;

/* The label sizes `analyze summary` has always shown (longer names are cut):
 * room for a TraceLogging provider name with its braced GUID, and an event
 * name with " (id 65535)". */
#define HS_EVENT_LABEL_PROVIDER 160
#define HS_EVENT_LABEL_EVENT 96

typedef struct {
	/* "kernel Process (0x03)", "kernel group 0x42", "WPP", a catalog provider name,
	 * "TraceLoggingName {guid}", "{guid}", an ftrace system */
	char provider[HS_EVENT_LABEL_PROVIDER];
	/* "opcode 1", "message 7", "Name (id 5)", "id 5", an ftrace event name */
	char event[HS_EVENT_LABEL_EVENT];
	const hs_provider *catalog;  /* the catalog provider, or NULL */
	const hs_cat_event *cat_event; /* its event (story, name_guessed), or NULL */
} hs_event_label;

/* Names the event with key k. provider_name and event_name are the trace's
 * own names (hs_event.provider / .name, or an hs_event_count's copies); NULL
 * or "" when it has none. */
void hs_event_names_label(const hs_event_names *n, const hs_event_key *k, const char *provider_name,
			  const char *event_name, hs_event_label *out);

/* The counts format's PROVIDER and KEY (`analyze counts`, rulegen's counts
 * files): "kernel:0x03" and "opcode", a lower-case GUID and "id" or "opcode",
 * "wpp" and "msg", or the ftrace system (`system`, truncated to cap) and
 * "event". Writes PROVIDER to buf and returns KEY. The VALUE is k->num, or the
 * ftrace event name. */
const char *hs_event_key_counts_id(const hs_event_key *k, const char *system, char *buf, size_t cap);

#endif
