/* main.c: the engine program: loads a profile, shows its plan, and runs the platform's capture backend. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/exitcodes.h"
#include "hindsight/limits.h"
#include "hindsight/msg.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"
#include "hindsight/tracedat.h"
#include "util/compat.h"
#ifdef _WIN32
#include <io.h>
#define isatty _isatty
#else
#include <unistd.h>
#endif
#ifdef HS_HAVE_BACKEND

#include "hindsight/launch.h"
#include "run/estimate.h"
#include "run/live.h"
#include "run/os.h"
#include "run/record.h"
#include "ctl_main.h"
#endif

static void usage(FILE *f)
{
	fputs("usage: engine --rules PROFILE [--duration-sec N] [--plan [--json]] [--platform windows|linux] [--cpus N]\n"
	      "       engine --rules PROFILE --estimate SECONDS [--json]\n"
	      "       engine --rules cpu-sample.yaml --launch PROG [--args \"...\"] [--cwd DIR] [--out FILE] [--timeout-sec N]\n"
	      "       engine --rules PROFILE --replay TRACE [--replay-speed X] [--duration-sec N]\n"
	      "       engine --rules PROFILE [--live | --quiet] [--verbose] [--events-jsonl PATH|-] ...  (recording)\n"
	      "       engine ctl [--rules PROFILE | --socket PATH] status [--json] | snapshot [--name N] | stop\n"
	      "\n"
	      "  --rules PROFILE   a profile file, or a bare name (stutter, cpu-sample) looked up in the rules directory\n"
	      "  --plan            print the resolved plan (every parameter passed to the tracing API) and exit\n"
	      "  --json            with --plan: print the plan as JSON\n"
	      "  --platform P      plan for windows or linux instead of this machine's platform\n"
	      "  --cpus N          with --plan: size per-CPU rings for N CPUs instead of this machine's\n"
	      "  --format F        diagnostics as text (default), json, sarif or github\n"
	      "  --duration-sec N  record for N seconds, then save as on Ctrl+C (default: until stopped)\n"
	      "  --estimate N      record N seconds into logs/runs/<stamp>-estimate, then report events/s and\n"
	      "                    bytes/s per session, provider and event, MB/min to TB/year for the file\n"
	      "                    session and the history rings of 64 MB..4 GB hold (--json: as JSON)\n"
	      "  --launch PROG     run PROG under the profile's CPU sampler and write a trace when it exits\n"
	      "                    (next to PROG unless --out); --args are split like a shell would; the\n"
	      "                    program is killed after --timeout-sec (default 600)\n"
	      "  --replay TRACE    record as usual, but feed the profile's sessions from a recorded trace.dat\n"
	      "                    (linux plan) or .etl (windows plan) instead of the kernel; no root needed;\n"
	      "                    ends with the input. Sessions write JSON lines (docs/backends.md)\n"
	      "  --replay-speed X  1 (default) as recorded, 10 ten times faster, 0 as fast as possible\n"
	      "  --live            show the status and the key events as they come (the default on a terminal):\n"
	      "                    full screen where the build has ncurses (p pauses, / filters), else plain lines\n"
	      "  --quiet           no live view on a terminal\n"
	      "  --verbose         print the whole plan on the terminal too (it always goes to main.log), and the\n"
	      "                    backend's debug lines (a snapshot's time per CPU)\n"
	      "  --events-jsonl P  write every key event as one JSON line to file P, or stdout for '-'\n"
	      "                    (docs/live.md); a slow reader loses lines (counted), never the recording\n"
	      "\n"
	      "Without --plan: records until Ctrl+C (SIGINT or SIGTERM on Linux; closing the console on\n"
	      "Windows) into the rules' run folder, taking a snapshot into <run>/snapshots/ whenever one of\n"
	      "the profile's triggers fires, or on SIGUSR1 (Linux) or Ctrl+Break (Windows), and recording on\n"
	      "(docs/triggers.md). Needs root on Linux, an elevated terminal on Windows.\n"
	      "\n"
	      "Exit status: 0 ok, 1 rules errors, 2 usage, I/O or capture error, 3 capture backend not available,\n"
	      "4 not root / not elevated.\n",
	      f);
}

/* Rings pin unswappable kernel memory: say so when a plan would take more than
 * half of this machine (the rules cannot know the machine they run on). */
static void warn_memory(uint64_t bytes)
{
	uint64_t total = hs_phys_memory();
	if (total == 0)
		return;
	if (bytes > total / 2)
		fprintf(stderr,
			"engine: warning: the sessions pin %llu MiB of unswappable kernel memory, %llu%% of this "
			"machine's %llu MiB; lower ring_mb or buffer sizes in the rules\n",
			(unsigned long long)(bytes >> 20), (unsigned long long)(bytes * 100 / total),
			(unsigned long long)(total >> 20));
}

#ifdef HS_HAVE_BACKEND
/* The engine's voice: the library reports through sinks (hindsight/msg.h) and
 * the engine prints each message as one "engine: " line. Recording: the run's
 * progress on stdout and its failures on stderr, the backend's lines all on
 * stdout (one stream keeps main.log in order); both are teed to main.log. */
#define ENGINE_PREFIX "engine"

/* Launch mode's capture log speaks as each launcher always has: "launch: "
 * from the Linux sampler, "engine: " from the Windows one. */
#ifdef _WIN32
#define LAUNCH_PREFIX ENGINE_PREFIX
#else
#define LAUNCH_PREFIX "launch"
#endif

/* The capture log of launch mode: a temporary file, gone when closed. */
static FILE *capture_log(void)
{
#ifdef _WIN32
	/* msvcrt's tmpfile() writes to the drive's root folder, which a normal
	 * user may not; "D" makes the file temporary (deleted on close). */
	const char *tmp = getenv("TEMP");
	char path[1024];
	snprintf(path, sizeof path, "%s\\hindsight-launch-%lu.tmp", tmp ? tmp : ".", hs_getpid());
	return fopen(path, "w+bD");
#else
	return tmpfile();
#endif
}

/* Launch mode: the program under the sampler; DONE ... OK and the output path
 * on success, the first 50 lines of the capture log on failure. */
static int run_launch(const hs_plan *plan, const char *prog, const char *args, const char *cwd, const char *out,
		      unsigned timeout_sec)
{
	int rc = HS_EXIT_RUN_FAILED;
	char **av = NULL;
	FILE *log = capture_log();
	hs_launch_opts o = {.prog = prog, .cwd = cwd, .out = out, .timeout_sec = timeout_sec,
			    .interrupts = hs_os_stop_requests(), .detail = log};
	hs_msg_file sink = {.f = log, .prefix = LAUNCH_PREFIX};
	hs_msg msg = {.fn = hs_msg_file_fn, .ctx = &sink};
	hs_launch_result res;
	if (!log) {
		perror("engine: capture log");
		return HS_EXIT_RUN_FAILED;
	}
	if (args && hs_launch_split_args(args, &av, NULL) != HS_OK) {
		fprintf(stderr, "engine: --args has an unterminated quote or a trailing backslash: %s\n", args);
		fclose(log);
		return HS_EXIT_USAGE;
	}
	o.argv = av;
	hs_os_stop_handlers_install();
	hs_status st = hs_launch_run(plan, &o, &msg, &res);
	rewind(log);
	char line[1024];
	if (st == HS_OK) {
		while (fgets(line, sizeof line, log))
			fputs(line, stdout);
		printf("DONE %s OK (%llu samples%s)\n", prog, (unsigned long long)res.samples,
		       res.timed_out ? ", program killed at the timeout" : "");
		if (res.events_path[0])
			printf("events: %s (%llu events of the process tree%s)\n", res.events_path,
			       (unsigned long long)res.events, res.events_lost ? ", some lost" : "");
		printf("output: %s\n", res.out_path);
		rc = HS_EXIT_OK;
	} else {
		printf("FAILED %s: %s; the capture log:\n", prog, hs_strerror(st));
		for (int n = 0; n < 50 && fgets(line, sizeof line, log); n++)
			fputs(line, stdout);
	}
	hs_launch_free_args(av);
	fclose(log);
	return rc;
}
#endif

#define N_OPTS(table) (sizeof(table) / sizeof((table)[0]))

/* The row of an option table (rows of any type whose first member is the option's name) that names a; n if none. */
static size_t find_opt(const char *a, const void *table, size_t n, size_t row_size)
{
	for (size_t k = 0; k < n; k++)
		if (!strcmp(a, *(const char *const *)(const void *)((const char *)table + k * row_size)))
			return k;
	return n;
}

int main(int argc, char **argv)
{
	const char *rules = NULL, *platform_arg = NULL;
	const char *launch = NULL, *launch_args = NULL, *launch_cwd = NULL, *launch_out = NULL;
	const char *replay = NULL;
	double replay_speed = 1.0;
	bool replay_speed_given = false;
	unsigned long timeout_sec = 600, duration_sec = 0, estimate_sec = 0;
	bool plan_only = false, json = false;
	/* What the terminal shows while recording (docs/live.md). */
	bool live = false, quiet = false, verbose = false;
	const char *events_jsonl = NULL;
	unsigned cpus = 0;
	hs_diag_format fmt = HS_FMT_TEXT;
#ifdef HS_HAVE_BACKEND
	/* engine ctl ...: a client of a running engine (ctl_main.c), with options of its own. */
	if (argc > 1 && !strcmp(argv[1], "ctl")) {
		hs_msg_file ctl_sink = {.f = stdout, .err = stderr, .prefix = ENGINE_PREFIX};
		hs_msg ctl_msg = {.fn = hs_msg_file_fn, .ctx = &ctl_sink};
		return hs_ctl_main(argc - 2, argv + 2, argv[0], &ctl_msg);
	}
#endif
	unsigned long cpus_arg = 0;
	/* The options, by the value they take: a string, a whole number in
	 * 1..max (of seconds when unit says so), or none. */
	const struct {
		const char *name;
		const char **val;
	} str_opts[] = {
		{"--rules", &rules},
		{"--launch", &launch},
		{"--args", &launch_args},
		{"--cwd", &launch_cwd},
		{"--out", &launch_out},
		{"--replay", &replay},
		{"--events-jsonl", &events_jsonl},
		{"--platform", &platform_arg},
	};
	const struct {
		const char *name;
		unsigned long *val, max;
		const char *unit;
	} num_opts[] = {
		{"--timeout-sec", &timeout_sec, 7 * 24 * 3600, " of seconds"},
		{"--duration-sec", &duration_sec, 365ul * 24 * 3600, " of seconds"},
		{"--estimate", &estimate_sec, 24ul * 3600, " of seconds"},
		{"--cpus", &cpus_arg, HS_PLAN_MAX_CPUS, ""},
	};
	const struct {
		const char *name;
		bool *val;
	} flag_opts[] = {
		{"--live", &live},      {"--quiet", &quiet}, {"--verbose", &verbose},
		{"--plan", &plan_only}, {"--json", &json},
	};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;
		size_t k;
		if (has_val && (k = find_opt(a, str_opts, N_OPTS(str_opts), sizeof str_opts[0])) < N_OPTS(str_opts)) {
			*str_opts[k].val = argv[++i];
			continue;
		}
		if (has_val && (k = find_opt(a, num_opts, N_OPTS(num_opts), sizeof num_opts[0])) < N_OPTS(num_opts)) {
			char *end;
			errno = 0;
			unsigned long v = strtoul(argv[++i], &end, 10);
			if (errno || *end || v == 0 || v > num_opts[k].max) {
				fprintf(stderr, "engine: %s takes a number%s from 1 to %lu, not '%s'\n", a,
					num_opts[k].unit, num_opts[k].max, argv[i]);
				return HS_EXIT_USAGE;
			}
			*num_opts[k].val = v;
			continue;
		}
		if ((k = find_opt(a, flag_opts, N_OPTS(flag_opts), sizeof flag_opts[0])) < N_OPTS(flag_opts)) {
			*flag_opts[k].val = true;
			continue;
		}
		if (!strcmp(a, "--replay-speed") && has_val) {
			char *end;
			errno = 0;
			replay_speed = strtod(argv[++i], &end);
			if (errno || *end || end == argv[i] || !(replay_speed >= 0) || replay_speed > 1e6) {
				fprintf(stderr, "engine: --replay-speed takes a factor from 0 (as fast as possible) to 1000000, "
					"not '%s'\n", argv[i]);
				return HS_EXIT_USAGE;
			}
			replay_speed_given = true;
		} else if (!strcmp(a, "--format") && has_val) {
			if (hs_diag_format_parse(argv[++i], &fmt) != HS_OK) {
				fprintf(stderr, "engine: --format takes text, json, sarif or github, not '%s'\n", argv[i]);
				return HS_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return HS_EXIT_OK;
		} else {
			fprintf(stderr, "engine: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return HS_EXIT_USAGE;
		}
	}
	cpus = (unsigned)cpus_arg;
	if (!rules) {
		fputs("engine: --rules is required (for example: engine --rules stutter.yaml)\n", stderr);
		usage(stderr);
		return HS_EXIT_USAGE;
	}
	if (json && !plan_only && !estimate_sec) {
		fputs("engine: --json goes with --plan or --estimate\n", stderr);
		return HS_EXIT_USAGE;
	}
	if (cpus && !plan_only) {
		/* Recording sizes its rings for the CPUs it runs on; a plan for N
		 * others would print sizes and pinned memory the kernel never sees. */
		fputs("engine: --cpus goes with --plan (it sizes the printed plan for another machine); recording, "
		      "--launch and --estimate use this machine's CPUs\n",
		      stderr);
		return HS_EXIT_USAGE;
	}
	if (estimate_sec && (plan_only || launch || duration_sec)) {
		fputs("engine: --estimate is a recording of its own; it does not go with --plan, --launch or --duration-sec\n",
		      stderr);
		return HS_EXIT_USAGE;
	}
	if ((live || quiet || verbose || events_jsonl) && (plan_only || launch || estimate_sec)) {
		fputs("engine: --live, --quiet, --verbose and --events-jsonl go with a recording, not --plan, --launch or "
		      "--estimate\n",
		      stderr);
		return HS_EXIT_USAGE;
	}
	if (live && quiet) {
		fputs("engine: --live and --quiet say opposite things; give one\n", stderr);
		return HS_EXIT_USAGE;
	}
	bool jsonl_stdout = events_jsonl && !strcmp(events_jsonl, "-");
	if (live && jsonl_stdout) {
		fputs("engine: --events-jsonl - takes stdout, where --live would draw; write the events to a file or FIFO\n",
		      stderr);
		return HS_EXIT_USAGE;
	}
	if (replay_speed_given && !replay) {
		fputs("engine: --replay-speed goes with --replay\n", stderr);
		return HS_EXIT_USAGE;
	}
	if (replay && (plan_only || launch || estimate_sec)) {
		fputs("engine: --replay is a recording of its own; it does not go with --plan, --launch or --estimate\n",
		      stderr);
		return HS_EXIT_USAGE;
	}
	hs_platform host = hs_platform_host();
	hs_platform platform = host;
	if (replay) {
		/* The input says which platform's plan it replays. */
		FILE *f = fopen(replay, "rb");
		if (!f) {
			fprintf(stderr, "engine: --replay: cannot open %s: %s\n", replay, strerror(errno));
			return HS_EXIT_USAGE;
		}
		fclose(f);
		platform = hs_tracedat_sniff(replay) ? HS_PLATFORM_LINUX : HS_PLATFORM_WINDOWS;
		hs_platform asked = platform_arg ? hs_platform_parse(platform_arg) : platform;
		if (asked != platform) {
			fprintf(stderr, "engine: --replay: %s is %s trace, which replays a %s plan, not --platform %s\n",
				replay, platform == HS_PLATFORM_LINUX ? "an ftrace" : "not an ftrace (read as an ETW)",
				hs_platform_name(platform), platform_arg);
			return HS_EXIT_USAGE;
		}
		host = platform; /* a replay records for the input's platform on any machine */
	} else if (platform_arg) {
		platform = hs_platform_parse(platform_arg);
		if (platform == HS_PLATFORM_NONE) {
			fprintf(stderr, "engine: --platform takes windows or linux, not '%s'\n", platform_arg);
			return HS_EXIT_USAGE;
		}
		if (platform != host && !plan_only) {
			fprintf(stderr, "engine: this is a %s build; it can only plan for %s (add --plan)\n",
				hs_platform_name(host), platform_arg);
			return HS_EXIT_USAGE;
		}
	}

	char *tried = NULL;
	char *path = hs_rules_resolve(rules, argv[0], &tried);
	if (!path) {
		fprintf(stderr, "engine: rules '%s' not found; looked at:\n%s", rules, tried ? tried : "");
		free(tried);
		return HS_EXIT_USAGE;
	}
	free(tried);

	int rc = HS_EXIT_OK;
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_plan *plan = NULL;
	if (!d) {
		fputs("engine: out of memory\n", stderr);
		free(path);
		return HS_EXIT_USAGE;
	}
	hs_status st = hs_rules_load(path, d, &rs);
	hs_diags_sort(d);
	if (hs_diags_count(d))
		hs_diags_render(d, stderr, fmt);
	if (st == HS_ENOENT || st == HS_EIO || st == HS_ELIMIT || st == HS_ENOMEM) {
		rc = HS_EXIT_USAGE;
		goto out;
	}
	if (st != HS_OK) {
		fprintf(stderr, "engine: %s has %zu error%s; nothing was started\n", path, hs_diags_errors(d),
			hs_diags_errors(d) == 1 ? "" : "s");
		rc = HS_EXIT_RULES;
		goto out;
	}
	if (!rs->is_profile) {
		fprintf(stderr, "engine: %s is a catalog; give a profile (kind: profile), such as stutter.yaml\n", path);
		rc = HS_EXIT_USAGE;
		goto out;
	}
	/* Asked for on the command line, the live view and the tap want every
	 * key event as it happens (on Windows that makes sessions real time);
	 * the view a terminal gets by default shows what streams anyway. */
	hs_plan_opts opts = {.cpus = cpus, .stream_key_events = live || events_jsonl};
	st = hs_plan_build(rs, platform, &opts, &plan);
	if (st == HS_EINVAL) {
		fprintf(stderr, "engine: profile '%s' (%s) has no %s section under 'platforms'\n", rs->name, path,
			hs_platform_name(platform));
		rc = HS_EXIT_RULES;
		goto out;
	}
	if (st != HS_OK) {
		fprintf(stderr, "engine: cannot build the plan: %s\n", hs_strerror(st));
		rc = HS_EXIT_USAGE;
		goto out;
	}
	if (platform == host && !replay)
		warn_memory(plan->memory_bytes);
#ifdef HS_HAVE_BACKEND
	if (!plan_only && launch) {
		rc = run_launch(plan, launch, launch_args, launch_cwd, launch_out, (unsigned)timeout_sec);
		goto out;
	}
	hs_os_set_busy_prefix(ENGINE_PREFIX);
	if (estimate_sec) {
		/* stdout is the report's: every message goes to stderr. */
		hs_msg_file est_sink = {.f = stderr, .prefix = ENGINE_PREFIX};
		hs_msg est_msg = {.fn = hs_msg_file_fn, .ctx = &est_sink};
		rc = hs_estimate_live(rs, plan, path, (unsigned)estimate_sec, json, &est_msg, &est_msg);
		goto out;
	}
	/* With --events-jsonl - stdout carries only the events: the messages go to stderr. */
	hs_msg_file run_sink = {.f = jsonl_stdout ? stderr : stdout, .err = stderr, .prefix = ENGINE_PREFIX};
	hs_msg_file backend_sink = {.f = jsonl_stdout ? stderr : stdout, .prefix = ENGINE_PREFIX};
	hs_msg run_msg = {.fn = hs_msg_file_fn, .ctx = &run_sink};
	hs_msg backend_msg = {.fn = hs_msg_file_fn, .ctx = &backend_sink, .debug = verbose};
	/* A terminal gets a short header instead of the plan and, when someone is
	 * at it (stdin too), the live view; anything else gets today's lines,
	 * which scripts and the tests read. */
	bool terminal = isatty(1) && !jsonl_stdout;
	bool view = live || (terminal && isatty(0) && !quiet);
	hs_record_opts tro = {.quiet_plan = (terminal && !verbose) || jsonl_stdout, .live = view,
			      .live_curses = view && terminal && hs_live_have_curses(), .events_jsonl = events_jsonl,
			      .msg_prefix = ENGINE_PREFIX};
	if (replay) {
		/* The recording mode on the replay backend: no kernel, no privilege. */
		hs_record_opts ro = tro;
		ro.duration_s = (unsigned)duration_sec;
		ro.backend = &hs_backend_replay;
		ro.input = replay;
		ro.speed = replay_speed;
		ro.msg = &run_msg;
		ro.backend_msg = &backend_msg;
		rc = hs_record_run_opts(rs, plan, path, &ro);
		goto out;
	}
	if (!plan_only) {
		/* Normal mode: record until SIGINT/SIGTERM; it prints the plan into main.log itself. */
		hs_record_opts ro = tro;
		ro.duration_s = (unsigned)duration_sec;
		ro.msg = &run_msg;
		ro.backend_msg = &backend_msg;
		rc = hs_record_run_opts(rs, plan, path, &ro);
		goto out;
	}
#endif
	st = json ? hs_plan_print_json(plan, stdout) : hs_plan_print_text(plan, stdout);
	if (st != HS_OK) {
		fprintf(stderr, "engine: cannot print the plan: %s\n", hs_strerror(st));
		rc = HS_EXIT_USAGE;
		goto out;
	}
	fflush(stdout); /* keep the plan before what follows when both streams share a file */
	if (!plan_only) {
		/* No capture is faked: without a backend, say so and fail. */
		fprintf(stderr,
			"engine: the %s capture backend is not built into this engine, so nothing was recorded.\n"
			"engine: the plan above is what it would run.\n",
			hs_platform_name(platform) /* linux: tracefs + perf; windows: ETW */);
		rc = HS_EXIT_NO_BACKEND;
	}
out:
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	free(path);
	return rc;
}
