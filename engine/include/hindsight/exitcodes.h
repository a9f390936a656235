/* hindsight/exitcodes.h: the exit statuses of the engine and the tools, each with its meaning, in one place. */
#ifndef HINDSIGHT_EXITCODES_H
#define HINDSIGHT_EXITCODES_H

/*
 * Ownership: constants only; this header owns nothing.
 *
 * Scripts, CI and the tests branch on these numbers (run.sh, the scenario
 * runner, the CTest pass/fail regexes, run.json's exit_code), so a value never
 * changes once shipped; a new case gets a new number. The programs share one
 * scale: 0 done, 1 the input has problems the user must fix, 2 the program
 * could not do its job (usage, I/O, a failed recording), 3 and 4 the machine
 * or the build cannot do it. Library code returns hs_status; only the
 * programs (engine/src/main.c, engine/src/run/, tools/) turn it into these.
 *
 * The table in README.md ("Exit status") lists the same names and values;
 * tests/policy/exitcodes.sh checks that they agree, and that no program
 * defines exit-status names of its own.
 */
enum hs_exit_code {
	/* Everything asked for was done (engine, every tool). */
	HS_EXIT_OK = 0,
	/* engine, scenarios/fullprofile: the rules have errors (the diagnostics say which); nothing was started. */
	HS_EXIT_RULES = 1,
	/* rulecheck: lint findings; analyze: the trace had damage (what could be read was); rulegen: problems
	 * in the config, counts or profile, or --check differs; the scenario runner: a signature is missing. */
	HS_EXIT_FINDINGS = 1,
	/* Every program: a bad command line, a file that cannot be read or written, a profile that is a catalog. */
	HS_EXIT_USAGE = 2,
	/* engine: the recording, estimate or launch failed (a session would not start, a file was not
	 * written, another engine holds the instance names); the same number as usage, which scripts
	 * have always read as "it did not work". run.json records it as exit_code. */
	HS_EXIT_RUN_FAILED = 2,
	/* engine: this build has no capture backend for the platform (the plan is printed instead). */
	HS_EXIT_NO_BACKEND = 3,
	/* The scenario runner and sigcheck: the scenario itself failed (engine error, the fault did not
	 * happen, a timeout, no trace was produced), so coverage could not be judged. */
	HS_EXIT_SCENARIO_FAILED = 3,
	/* engine: recording needs root (Linux) or an elevated terminal (Windows); --plan needs neither.
	 * The scenario runner also uses 4 for a machine that lacks what a scenario needs. */
	HS_EXIT_NOT_PRIVILEGED = 4,
};

#endif
