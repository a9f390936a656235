/* analyze/etl_common.c: what the .etl commands share (opening with the usage error, progress on a terminal, every reader's problems as text and JSON, the start of a JSON document), below them and below main.c's dispatch so no file calls back into main.c. */
#include <stdio.h>

#include "analyze.h"
#include "hindsight/compat.h"

int analyze_open_etl(const char *path, hs_etl **out)
{
	if (hs_tracedat_sniff(path)) {
		fprintf(stderr, "analyze: %s is a trace.dat; this command reads .etl only (counts, summary and crash read both; cpu reads .etl and perf.data)\n",
			path);
		return HS_EXIT_USAGE;
	}
	hs_status st = hs_etl_open(path, out);
	if (st == HS_OK)
		return 0;
	if (st == HS_EINVAL)
		fprintf(stderr, "analyze: %s: not an .etl file (no readable buffer)\n", path);
	else
		fprintf(stderr, "analyze: %s: %s\n", path, hs_strerror(st));
	return HS_EXIT_USAGE;
}

static int progress_shown = -1; /* -1: unknown whether stderr is a terminal */
static uint64_t progress_records;

void analyze_progress(const hs_etl *etl, const hs_etl_record *r)
{
	if (++progress_records & 0xFFFF)
		return;
	if (progress_shown < 0)
		progress_shown = hs_isatty(2) ? 1 : 0; /* stderr */
	if (!progress_shown)
		return;
	size_t size = hs_etl_file_size(etl);
	unsigned pct = size ? (unsigned)(r->buffer_offset * 100 / size) : 0;
	fprintf(stderr, "\ranalyze: %3u%% (%llu events)", pct, (unsigned long long)progress_records);
	progress_shown = 2;
}

void analyze_progress_done(void)
{
	if (progress_shown == 2)
		fputs("\r\033[K", stderr);
	progress_shown = progress_shown > 0 ? 1 : progress_shown;
	progress_records = 0;
}

int analyze_report_problems(const hs_problems *pl)
{
	size_t n = hs_problems_count(pl);
	for (size_t i = 0; i < n; i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		fprintf(stderr, "analyze: %s\n", hs_problem_format(hs_problems_at(pl, i), text, sizeof text));
	}
	return n ? HS_EXIT_FINDINGS : HS_EXIT_OK;
}

void analyze_json_begin(hs_json *j, hs_strbuf *sb, const char *file, const char *format)
{
	hs_json_init(j, sb);
	hs_json_obj_begin(j);
	hs_json_kstr(j, "file", file);
	if (format)
		hs_json_kstr(j, "format", format);
}

/* "problems": [...]: objects with the offset (.etl, perf.data) or the formatted lines (trace.dat, whose offsets libtracecmd hides). */
static void json_problems(hs_json *j, const hs_problems *pl, bool as_text)
{
	hs_json_key(j, "problems");
	hs_json_arr_begin(j);
	for (size_t i = 0; i < hs_problems_count(pl); i++) {
		const hs_problem *p = hs_problems_at(pl, i);
		char text[HS_PROBLEM_TEXT_MAX];
		if (as_text) {
			hs_json_str(j, hs_problem_format(p, text, sizeof text));
			continue;
		}
		hs_json_obj_begin(j);
		hs_json_kuint(j, "offset", p->offset);
		hs_json_kstr(j, "message", p->message);
		hs_json_obj_end(j);
	}
	hs_json_arr_end(j);
}

void analyze_json_problems(hs_json *j, const hs_problems *pl)
{
	json_problems(j, pl, false);
}

void analyze_json_problem_texts(hs_json *j, const hs_problems *pl)
{
	json_problems(j, pl, true);
}
