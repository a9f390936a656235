/* analyze: reads .etl traces without privileges and reports on them (counts, ...). */
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/compat.h"

static void usage(FILE *f)
{
	fputs("usage: analyze COMMAND FILE.etl|FILE.dat [options]\n"
	      "\n"
	      "  counts FILE                 events per provider and event id (kernel events per group and\n"
	      "                              opcode): PROVIDER<TAB>id=N|opcode=N|msg=N<TAB>COUNT, then TOTAL<TAB>N\n"
	      "  summary FILE [--rules R]    logger, mode, time span, buffers, CPUs, lost events, events per\n"
	      "                              provider and event with names and stories from the rules catalogs\n"
	      "  crash FILE [--rules R]      timeline of the whitelisted key events with their stories;\n"
	      "                              process exits with exit codes, crashes flagged\n"
	      "  cpu FILE [--process PCRE2] [--speedscope OUT.json] [--folded OUT.txt]\n"
	      "                              CPU per process and thread from sampled profiles (.etl, perf.data),\n"
	      "                              with stacks\n"
	      "  filter FILE --rules R -o OUT.etl\n"
	      "                              keep only what the rules whitelist (the in-kernel filter, offline)\n"
	      "  estimate FILE [--rules R]   events/s and bytes/s per provider and event over the trace's span,\n"
	      "                              MB/min to TB/year for the file session and ring history at 64 MB..4 GB\n"
	      "  report PATH [-o DIR] [--rules R]\n"
	      "                              what went wrong: a verdict, findings with evidence and a coverage box,\n"
	      "                              for a snapshot folder, a run folder or a trace.dat; writes report.txt,\n"
	      "                              report.json and report.html beside it (or in DIR); docs/report.md\n"
	      "  fleet PATH... [--ndjson FILE|-] [--json] [--top N]\n"
	      "                              the incidents of many reports grouped by their fleet signature: run and\n"
	      "                              snapshot folders, report.json files, searched below; a snapshot without\n"
	      "                              a report gets one; one flat row per report with --ndjson; docs/fleet.md\n"
	      "\n"
	      "Every command takes --json. --rules defaults to stutter.yaml.\n"
	      "counts, summary, crash and estimate also read trace-cmd trace.dat files (recognised by their magic):\n"
	      "counts prints SYSTEM<TAB>event=NAME<TAB>COUNT; names, stories and the crash whitelist come from\n"
	      "the rules' linux section. analyze cpu reads .etl and perf.data (engine --launch, perf record;\n"
	      "docs/perfdata-notes.md).\n"
	      "\n"
	      "Exit status: 0 ok, 1 the file had damage (reported on stderr; every readable event was\n"
	      "still counted), 2 usage or I/O error.\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? HS_EXIT_USAGE : 0;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "fleet")) /* several paths and its own options */
		return analyze_fleet(argc - 2, argv + 2, argv[0]);
	analyze_opts o = {.argv0 = argv[0]};
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		bool val = i + 1 < argc;
		if (!strcmp(a, "--json"))
			o.json = true;
		else if (!strcmp(a, "--rules") && val)
			o.rules = argv[++i];
		else if (!strcmp(a, "--process") && val)
			o.process = argv[++i];
		else if (!strcmp(a, "--speedscope") && val)
			o.speedscope = argv[++i];
		else if (!strcmp(a, "--folded") && val)
			o.folded = argv[++i];
		else if (!strcmp(a, "-o") && val)
			o.output = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "analyze: unknown option '%s'\n", argv[i]);
			return HS_EXIT_USAGE;
		} else if (!o.file)
			o.file = argv[i];
		else {
			fprintf(stderr, "analyze: one file at a time ('%s' is extra)\n", argv[i]);
			return HS_EXIT_USAGE;
		}
	}
	if (!o.file) {
		fprintf(stderr, "analyze: %s needs a file\n", cmd);
		return HS_EXIT_USAGE;
	}
	static const struct {
		const char *name;
		int (*fn)(const analyze_opts *);
	} commands[] = {
		{"counts", analyze_counts}, {"summary", analyze_summary}, {"crash", analyze_crash},
		{"cpu", analyze_cpu},       {"filter", analyze_filter}, {"estimate", analyze_estimate},
		{"report", analyze_report},
	};
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(cmd, commands[i].name) != 0)
			continue;
		return commands[i].fn(&o);
	}
	fprintf(stderr, "analyze: unknown command '%s'\n", cmd);
	usage(stderr);
	return HS_EXIT_USAGE;
}
