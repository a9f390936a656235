/* launch_driver.c: test-only CLI around hs_launch_run, the same call `engine --launch` makes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/launch.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"

static int usage(void)
{
	fprintf(stderr, "usage: launch_driver --rules FILE --launch PROG [--args \"...\"] [--cwd DIR] [--out FILE] "
			"[--timeout-sec N]\n");
	return 2;
}

/* The first 50 lines of the capture log, as the engine prints them on failure. */
static void print_head(FILE *log)
{
	char line[1024];
	int n = 0;
	rewind(log);
	while (n < 50 && fgets(line, sizeof line, log)) {
		fputs(line, stdout);
		n++;
	}
}

int main(int argc, char **argv)
{
	const char *rules = NULL, *args = NULL;
	hs_launch_opts o = {.timeout_sec = 600};
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			return usage();
		if (strcmp(argv[i], "--rules") == 0)
			rules = argv[++i];
		else if (strcmp(argv[i], "--launch") == 0)
			o.prog = argv[++i];
		else if (strcmp(argv[i], "--args") == 0)
			args = argv[++i];
		else if (strcmp(argv[i], "--cwd") == 0)
			o.cwd = argv[++i];
		else if (strcmp(argv[i], "--out") == 0)
			o.out = argv[++i];
		else if (strcmp(argv[i], "--timeout-sec") == 0)
			o.timeout_sec = (unsigned)strtoul(argv[++i], NULL, 10);
		else
			return usage();
	}
	if (!rules || !o.prog)
		return usage();

	int rc = 1;
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_plan *plan = NULL;
	char **av = NULL;
	hs_launch_result res;
	FILE *log = tmpfile();
	if (!d || !log)
		goto done;
	if (hs_rules_load(rules, d, &rs) != HS_OK) {
		hs_diags_render(d, stderr, HS_FMT_TEXT);
		goto done;
	}
	if (hs_plan_build(rs, HS_PLATFORM_LINUX, NULL, &plan) != HS_OK) {
		fprintf(stderr, "launch_driver: no linux plan in %s\n", rules);
		goto done;
	}
	if (args) {
		hs_status st = hs_launch_split_args(args, &av, NULL);
		if (st != HS_OK) {
			fprintf(stderr, "launch_driver: --args: %s\n", hs_strerror(st));
			goto done;
		}
		o.argv = av;
	}
	hs_msg_file sink = {.f = log, .prefix = "launch"}; /* as engine --launch prints it */
	hs_msg msg = {.fn = hs_msg_file_fn, .ctx = &sink};
	hs_status st = hs_launch_run(plan, &o, &msg, &res);
	if (st != HS_OK) {
		fprintf(log, "launch: %s\n", hs_strerror(st));
		printf("FAILED %s: %s\n", o.prog, hs_strerror(st));
		print_head(log);
		goto done;
	}
	rewind(log);
	for (int c; (c = fgetc(log)) != EOF;)
		putchar(c);
	printf("samples %llu cpu_ns %llu hz %llu lost %llu throttled %llu exit %d signal %d timed_out %d\n",
	       (unsigned long long)res.samples, (unsigned long long)res.child_cpu_ns,
	       (unsigned long long)plan->sessions[0].linux_.sample_hz, (unsigned long long)(res.lost + res.lost_samples),
	       (unsigned long long)res.throttled, res.exit_code, res.term_signal, res.timed_out);
	if (res.events_path[0])
		printf("events %s count %llu lost %llu\n", res.events_path, (unsigned long long)res.events,
		       (unsigned long long)res.events_lost);
	printf("DONE %s OK\n", o.prog);
	printf("output: %s\n", res.out_path);
	rc = 0;
done:
	hs_launch_free_args(av);
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	if (log)
		fclose(log);
	return rc;
}
