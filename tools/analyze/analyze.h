/* analyze/analyze.h: shared pieces of the `analyze` subcommands (options, opening traces, problem reports). */
#ifndef HS_ANALYZE_H
#define HS_ANALYZE_H

#include <stdbool.h>

#include "hindsight/etl.h"
#include "util/json.h"

enum { ANALYZE_EXIT_OK = 0, ANALYZE_EXIT_PROBLEMS = 1, ANALYZE_EXIT_USAGE = 2 };

typedef struct {
	const char *file;
	bool json;
} analyze_opts;

/* Opens an .etl, printing a clear error on failure; returns 0 or an exit code. */
int analyze_open_etl(const char *path, hs_etl **out);

/* Prints the reader's problems to stderr (file offsets and what was skipped);
 * returns ANALYZE_EXIT_PROBLEMS if there were any, else 0. */
int analyze_report_problems(const hs_etl *etl);

/* Adds "problems": [...] to an open JSON object. */
void analyze_json_problems(hs_json *j, const hs_etl *etl);

int analyze_counts(const analyze_opts *o);

#endif
