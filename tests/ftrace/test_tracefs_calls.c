/* test_tracefs_calls.c: the tracefs backend's call sequences through the recorder (no root, no tracefs), compared with the .calls files of tests/ftrace/golden. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit/testkit.h"
#include "hindsight/backend.h"
#include "hindsight/diag.h"
#include "hindsight/msg.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"
#include "tracefs_recorder.h"

static const char *rules_dir, *golden_dir;
static char workdir[4096];

/* The recorder's CPUs, and the plan's: the goldens are for 2 whatever the machine has. */
#define CPUS 2
#define RUN_DIR "rec-run"

static size_t session_of(const hs_plan *plan, hs_session_mode mode)
{
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == mode)
			return i;
	return (size_t)-1;
}

/* ---- one run of the backend ---- */

typedef struct {
	hs_status start, snap, stop;
	size_t skipped, refused_events;
	char *messages;
} run_result;

typedef struct {
	bool snapshot; /* of the buffering session, while recording */
} run_opts;

static run_result run_backend(const hs_plan *plan, run_opts ro)
{
	run_result r = {.start = HS_EIO, .snap = HS_OK, .stop = HS_OK};
	if (system("rm -rf " RUN_DIR) != 0 || mkdir(RUN_DIR, 0700))
		fprintf(stderr, "cannot make %s/%s\n", workdir, RUN_DIR);
	FILE *mf = tmpfile();
	hs_msg_file sink = {.f = mf, .prefix = "engine"};
	hs_msg m = {.fn = hs_msg_file_fn, .ctx = &sink};
	hs_backend_opts o = {.msg = &m};
	const hs_backend_ops *ops = &hs_backend_ftrace;
	hs_backend *b = NULL;
	r.start = ops->start(plan, RUN_DIR, &o, &b);
	if (r.start == HS_OK) {
		for (size_t i = 0; i < ops->n_sessions(b); i++) {
			const hs_session_status *s = NULL;
			if (ops->session_status(b, i, &s) == HS_OK)
				r.skipped += s->events_skipped;
		}
		if (ro.snapshot)
			r.snap = ops->snapshot(b, session_of(plan, HS_MODE_BUFFERING), RUN_DIR "/snap.dat", false);
		r.stop = ops->stop(b);
		ops->free(b);
	}
	r.messages = hs_test_slurp(mf);
	fclose(mf);
	return r;
}

static const char *logger(const hs_plan *plan, hs_session_mode mode)
{
	size_t i = session_of(plan, mode);
	return i < plan->n_sessions ? plan->sessions[i].session->logger_name : "(no such session)";
}

/* (a) Start and stop: every session made, sized, configured, its events
 * enabled with their filters, the rings read, the files rewritten, removed. */
static void test_start_stop(const hs_plan *plan)
{
	trec_reset(plan, CPUS, workdir);
	run_result r = run_backend(plan, (run_opts){0});
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.stop, HS_OK);
	CHECK_EQ_INT(r.skipped, 0);
	CHECK_EQ_INT(trec_instances(), 0);
	CHECK_CONTAINS(r.messages, "enabled, 0 skipped");
	hs_test_golden(golden_dir, "stutter-start-stop", trec_log());
	free(r.messages);
}

/* (b) A snapshot of the buffering ring while recording: frozen, its stats
 * read, each CPU's trace_pipe_raw drained on a worker (no data: the
 * recorder's descriptors read nothing), resumed, the .dat written by
 * libtracecmd from the recorder's tracing directory. The path depends on the
 * free space where the test runs: with less than about 300 MB (the plan's
 * 2 x 128 MB ring could not be written early) the sequence differs. */
static void test_snapshot(const hs_plan *plan)
{
	trec_reset(plan, CPUS, workdir);
	run_result r = run_backend(plan, (run_opts){.snapshot = true});
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.snap, HS_OK);
	CHECK_EQ_INT(r.stop, HS_OK);
	CHECK_EQ_INT(trec_instances(), 0);
	struct stat sb;
	CHECK(!stat(RUN_DIR "/snap.dat", &sb) && sb.st_size > 0); /* libtracecmd wrote it from the fake's formats */
	hs_test_golden(golden_dir, "stutter-snapshot", trec_log());
	if (r.snap != HS_OK)
		fprintf(stderr, "snapshot messages:\n%s\n", r.messages);
	free(r.messages);
}

/* (c) The kernel refuses a filter: an optional event is skipped and recording
 * goes on; a required event the kernel lacks fails the start, after every
 * event was tried, and nothing is left behind. */
static void test_refusals(const hs_plan *plan)
{
	trec_reset(plan, CPUS, workdir);
	trec_fail("event_filter_apply", "exceptions/page_fault_user", 0, EINVAL);
	run_result r = run_backend(plan, (run_opts){0});
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.stop, HS_OK);
	CHECK(r.skipped >= 1);
	CHECK_CONTAINS(r.messages, "exceptions:page_fault_user skipped (optional in the rules)");
	CHECK_CONTAINS(r.messages, "the kernel refused the filter");
	CHECK_EQ_INT(trec_instances(), 0);
	hs_test_golden(golden_dir, "stutter-filter-refused", trec_log());
	free(r.messages);

	trec_reset(plan, CPUS, workdir);
	trec_missing("tcp", "tcp_retransmit_skb");
	r = run_backend(plan, (run_opts){0});
	CHECK_EQ_INT(r.start, HS_ERULES);
	CHECK_CONTAINS(r.messages, "tcp:tcp_retransmit_skb: cannot be enabled (not in this kernel)");
	CHECK_CONTAINS(r.messages, "cannot be recorded on this kernel");
	CHECK_EQ_INT(trec_instances(), 0);
	hs_test_golden(golden_dir, "stutter-event-missing", trec_log());
	free(r.messages);
}

/* (d) A dead engine's instance of the ring's name is removed before the new one is made. */
static void test_stale(const hs_plan *plan)
{
	trec_reset(plan, CPUS, workdir);
	trec_add_instance(logger(plan, HS_MODE_BUFFERING));
	run_result r = run_backend(plan, (run_opts){0});
	CHECK_EQ_INT(r.start, HS_OK);
	CHECK_EQ_INT(r.stop, HS_OK);
	CHECK_CONTAINS(r.messages, "left by an engine that did not stop cleanly");
	CHECK_EQ_INT(trec_instances(), 0);
	hs_test_golden(golden_dir, "stutter-stale", trec_log());
	free(r.messages);

	/* ... and one that cannot be removed (a live reader keeps it busy) fails the start. */
	trec_reset(plan, CPUS, workdir);
	trec_add_instance(logger(plan, HS_MODE_BUFFERING));
	trec_fail("instance_destroy", logger(plan, HS_MODE_BUFFERING), 1, EBUSY);
	r = run_backend(plan, (run_opts){0});
	CHECK_EQ_INT(r.start, HS_EIO);
	CHECK_CONTAINS(r.messages, "exists and cannot be removed");
	CHECK_EQ_INT(trec_instances(), 1); /* only the one we could not remove */
	CHECK(trec_instance_exists(logger(plan, HS_MODE_BUFFERING)));
	free(r.messages);
}

/* No tracefs mount, and mounting it refused: nothing else is called. Then the
 * second instance's creation refused: the first is removed again. */
static void test_denied(const hs_plan *plan)
{
	trec_reset(plan, CPUS, workdir);
	trec_unmounted();
	trec_fail("mount", NULL, 1, EPERM);
	run_result r = run_backend(plan, (run_opts){0});
	CHECK_EQ_INT(r.start, HS_EPERM);
	CHECK_CONTAINS(r.messages, "cannot mount tracefs");
	hs_test_golden(golden_dir, "stutter-mount-denied", trec_log());
	free(r.messages);

	trec_reset(plan, CPUS, workdir);
	trec_fail("instance_create", NULL, 2, EACCES);
	r = run_backend(plan, (run_opts){0});
	CHECK_EQ_INT(r.start, HS_EPERM);
	CHECK_CONTAINS(r.messages, "cannot create tracefs instance");
	CHECK_EQ_INT(trec_instances(), 0);
	hs_test_golden(golden_dir, "stutter-create-denied", trec_log());
	free(r.messages);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: test_tracefs_calls RULES_DIR GOLDEN_DIR WORK_DIR\n");
		return 2;
	}
	/* Absolute, since the test works in WORK_DIR. */
	static char rules[4096], golden[4096];
	if (!realpath(argv[1], rules) || !realpath(argv[2], golden)) {
		fprintf(stderr, "no %s or %s\n", argv[1], argv[2]);
		return 2;
	}
	rules_dir = rules;
	golden_dir = golden;
	mkdir(argv[3], 0700);
	if (chdir(argv[3]) || !getcwd(workdir, sizeof workdir)) {
		fprintf(stderr, "cannot work in %s\n", argv[3]);
		return 2;
	}
	hs_tracefs_api_set(&trec_api);
	hs_ruleset *rs = hs_test_load(rules_dir, "stutter.yaml");
	hs_plan *plan = hs_test_plan(rs, HS_PLATFORM_LINUX, CPUS);
	CHECK(plan != NULL);
	if (plan) {
		test_start_stop(plan);
		test_snapshot(plan);
		test_refusals(plan);
		test_stale(plan);
		test_denied(plan);
	}
	hs_plan_free(plan);
	hs_rules_free(rs);
	trec_reset(NULL, CPUS, workdir);
	hs_tracefs_api_set(NULL);
	return hs_test_done("test_tracefs_calls");
}
