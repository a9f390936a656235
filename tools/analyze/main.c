/* analyze: reads .etl traces without privileges and reports on them (counts, ...). */
#include <stdio.h>
#include <string.h>

#include "analyze.h"

static void usage(FILE *f)
{
	fputs("usage: analyze counts FILE.etl [--json]\n"
	      "\n"
	      "  counts   events per provider and event id (kernel events per group and opcode),\n"
	      "           one line each: PROVIDER<TAB>id=N|opcode=N|msg=N<TAB>COUNT, then TOTAL<TAB>N\n"
	      "\n"
	      "Exit status: 0 ok, 1 the file had damage (reported on stderr; every readable event was\n"
	      "still counted), 2 usage or I/O error.\n",
	      f);
}

int analyze_open_etl(const char *path, hs_etl **out)
{
	hs_status st = hs_etl_open(path, out);
	if (st == HS_OK)
		return 0;
	if (st == HS_EINVAL)
		fprintf(stderr, "analyze: %s: not an .etl file (no readable buffer)\n", path);
	else
		fprintf(stderr, "analyze: %s: %s\n", path, hs_strerror(st));
	return ANALYZE_EXIT_USAGE;
}

int analyze_report_problems(const hs_etl *etl)
{
	size_t n = hs_etl_problem_count(etl);
	for (size_t i = 0; i < n; i++) {
		const hs_etl_problem *p = hs_etl_problem_at(etl, i);
		fprintf(stderr, "analyze: at file offset 0x%llx: %s\n", (unsigned long long)p->offset, p->message);
	}
	return n ? ANALYZE_EXIT_PROBLEMS : ANALYZE_EXIT_OK;
}

void analyze_json_problems(hs_json *j, const hs_etl *etl)
{
	hs_json_key(j, "problems");
	hs_json_arr_begin(j);
	for (size_t i = 0; i < hs_etl_problem_count(etl); i++) {
		const hs_etl_problem *p = hs_etl_problem_at(etl, i);
		hs_json_obj_begin(j);
		hs_json_kuint(j, "offset", p->offset);
		hs_json_kstr(j, "message", p->message);
		hs_json_obj_end(j);
	}
	hs_json_arr_end(j);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? ANALYZE_EXIT_USAGE : 0;
	}
	const char *cmd = argv[1];
	analyze_opts o = {0};
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			o.json = true;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "analyze: unknown option '%s'\n", argv[i]);
			return ANALYZE_EXIT_USAGE;
		} else if (!o.file)
			o.file = argv[i];
		else {
			fprintf(stderr, "analyze: one file at a time ('%s' is extra)\n", argv[i]);
			return ANALYZE_EXIT_USAGE;
		}
	}
	if (!o.file) {
		fprintf(stderr, "analyze: %s needs a file\n", cmd);
		return ANALYZE_EXIT_USAGE;
	}
	if (!strcmp(cmd, "counts"))
		return analyze_counts(&o);
	fprintf(stderr, "analyze: unknown command '%s'\n", cmd);
	usage(stderr);
	return ANALYZE_EXIT_USAGE;
}
