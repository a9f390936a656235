/* hindsight/event_counts.h: one counting table for trace views: records, bytes and first/last time per event identity. */
#ifndef HINDSIGHT_EVENT_COUNTS_H
#define HINDSIGHT_EVENT_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/event.h"
#include "hindsight/status.h"

/*
 * `analyze counts` and `summary`, the estimator and rulegen all count a
 * trace's records per hs_event_key; this is the one table they do it in.
 * The caller picks the key (hs_event.key, or a copy with name_hash cleared to
 * count TraceLogging events by id only, as the counts format does), adds the
 * bytes it counts and the times it trusts, and names the entries afterwards
 * (hs_event_names_label) from the trace's own names kept here.
 *
 * Entries stay in the order their keys were first seen, at stable indexes.
 *
 * Ownership: the table owns its entries and their name copies; free it with
 * hs_event_counts_free. A pointer to an entry is valid until the next add.
 */

typedef struct {
	hs_event_key key;
	uint64_t count; /* records counted under key */
	uint64_t bytes; /* what the caller added */
	bool timed;     /* first and last are set (hs_event_count_time) */
	uint64_t first, last; /* earliest and latest time given, in the caller's unit */
	/* The trace's own names from the first record with this key (copies of
	 * hs_event.provider and .name): the ftrace system and event name, or a
	 * TraceLogging provider and event name; NULL when the record had none. */
	const char *provider;
	const char *name;
} hs_event_count;

typedef struct hs_event_counts hs_event_counts;

/* HS_OK or HS_ENOMEM. */
hs_status hs_event_counts_new(hs_event_counts **out);
void hs_event_counts_free(hs_event_counts *c);

/* Counts one record under k; e (may be NULL) gives the names when k is new.
 * Returns the entry, or NULL on OOM (then hs_event_counts_failed says so and
 * the record is in the total but under no entry). */
hs_event_count *hs_event_counts_add(hs_event_counts *c, const hs_event_key *k, const hs_event *e);
/* Widens an entry's first..last to include t. */
void hs_event_count_time(hs_event_count *n, uint64_t t);

/* Entries in first-seen order: [0, len). */
size_t hs_event_counts_len(const hs_event_counts *c);
hs_event_count *hs_event_counts_at(const hs_event_counts *c, size_t i);
/* The entry for k, or NULL. */
hs_event_count *hs_event_counts_find(const hs_event_counts *c, const hs_event_key *k);
/* Every record added, entries or not. */
uint64_t hs_event_counts_total(const hs_event_counts *c);
/* An add ran out of memory: the counts are incomplete. */
bool hs_event_counts_failed(const hs_event_counts *c);

#endif
