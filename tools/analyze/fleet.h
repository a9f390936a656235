/* analyze/fleet.h: `analyze fleet`'s pieces: one flat row per report (fleet_row.c reads it from report.json's signature block) and the command (fleet.c). */
#ifndef HS_ANALYZE_FLEET_H
#define HS_ANALYZE_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/arena.h"

/*
 * A row is what a fleet query needs of one report: its signature block as report.json writes it
 * (schemas/report.schema.json, "signature"), the verdict, and where it came from. Strings live in the arena the
 * reader was given; NULL is JSON null (or absent).
 */
typedef struct {
	int64_t report_version;
	const char *input_kind; /* "snapshot", "run", "folder", "trace" */
	const char *verdict;
	bool has_signature; /* the report has a signature block (not null) */
	int64_t sig_version;
	const char *signature, *bucket_id, *symptom, *cause, *culprit, *detail, *app, *app_version, *os, *os_build,
		*machine, *host, *seen_at, *quality;
	double weight;
	uint64_t lost_events;
	bool lost_unknown;
	bool has_covered;
	double covered_share;
	/* filled by the command */
	const char *report; /* the report.json file */
	const char *folder; /* the snapshot (or other) folder it reports on */
	int64_t seen_s;     /* seen_at as seconds since 1970 (UTC), or the file's time when seen_at is null */
	bool seen_from_file;
} fleet_row;

typedef enum {
	FLEET_ROW_OK,        /* the row is filled (has_signature says whether the report had a signature) */
	FLEET_ROW_NEED_MORE, /* the text ended before the signature block: read the whole file */
	FLEET_ROW_BAD,       /* not a report.json (err says why) */
} fleet_row_status;

/* Reads the first top-level members of report.json text (up to its signature block) into *row; strings are copied
 * into a. A text cut short (only the file's start was read) gives FLEET_ROW_NEED_MORE unless `whole`. */
fleet_row_status fleet_row_read(const char *text, size_t len, bool whole, hs_arena *a, fleet_row *row, char *err,
				size_t errcap);

/* An ISO 8601 time ("2026-12-03T03:13:32+0000", "...Z", "...+01:00") as seconds since 1970 UTC; false when it is
 * not one. */
bool fleet_parse_time(const char *s, int64_t *out);

#endif
