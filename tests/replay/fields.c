/* tests/replay/fields.c: the replay backend's key-event fields, now_ns and mark on the committed trace.dat fixture (no root, no kernel). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hindsight/backend.h"
#include "hindsight/diag.h"
#include "hindsight/plan.h"
#include "hindsight/rules.h"

/* fixture.dat (make-fixture.sh): a shell loop's forks and execs of /bin/true,
 * fsyncs and exits. Every fork's parent is that shell, every exec a task the
 * fork made (/bin/true, sleep, sync). */
typedef struct {
	size_t forks, forks_ok, execs, execs_ok, execs_named, no_fields, missing_ok;
	uint64_t last_ts;
	int errors;
} seen;

static void on_event(void *ctx, const hs_key_event *ev)
{
	seen *s = ctx;
	if (!ev->fields) {
		s->no_fields++;
		return;
	}
	char buf[64];
	int64_t v;
	if (!strcmp(ev->system, "sched") && !strcmp(ev->name, "sched_process_fork")) {
		int64_t parent = 0, child = 0;
		char pcomm[16], ccomm[16];
		s->forks++;
		if (ev->fields->num(ev, "parent_pid", &parent) && ev->fields->num(ev, "child_pid", &child) &&
		    ev->fields->str(ev, "parent_comm", pcomm, sizeof pcomm) &&
		    ev->fields->str(ev, "child_comm", ccomm, sizeof ccomm) && parent == ev->pid && child > parent &&
		    pcomm[0] && ccomm[0])
			s->forks_ok++;
		else if (s->errors++ < 5)
			fprintf(stderr, "FAIL: fork pid %d: parent_pid %" PRId64 " child_pid %" PRId64 "\n", ev->pid, parent,
				child);
		/* A short buffer cuts the string and still terminates it. */
		char tiny[3];
		if (!ev->fields->str(ev, "parent_comm", tiny, sizeof tiny) || strlen(tiny) > 2)
			s->errors++;
	}
	if (!strcmp(ev->system, "sched") && !strcmp(ev->name, "sched_process_exec")) {
		int64_t pid = 0;
		s->execs++;
		/* filename is a __data_loc string. */
		if (ev->fields->num(ev, "pid", &pid) && pid == ev->pid &&
		    ev->fields->str(ev, "filename", buf, sizeof buf) && buf[0] == '/' && strlen(buf) > 4)
			s->execs_ok++;
		else if (s->errors++ < 5)
			fprintf(stderr, "FAIL: exec pid %d: pid %" PRId64 " filename '%s'\n", ev->pid, pid, buf);
		/* The event names its own fields, from the file's format: filename (text), pid, old_pid. */
		char names[8][32];
		bool is_str[8];
		size_t n = ev->fields->names ? ev->fields->names(ev, names, is_str, 8) : 0;
		if (n == 3 && !strcmp(names[0], "filename") && is_str[0] && !strcmp(names[1], "pid") && !is_str[1] &&
		    !strcmp(names[2], "old_pid") && !is_str[2] && ev->fields->names(ev, names, is_str, 1) == 1)
			s->execs_named++;
		else if (s->errors++ < 5)
			fprintf(stderr, "FAIL: exec pid %d: %zu field names, the first '%s'\n", ev->pid, n, n ? names[0] : "");
	}
	/* No such field; a string is not a number and a number not a string. */
	if (!ev->fields->num(ev, "no_such_field", &v) && !ev->fields->str(ev, "no_such_field", buf, sizeof buf) &&
	    (strcmp(ev->name, "sched_process_exec") ||
	     (!ev->fields->num(ev, "filename", &v) && !ev->fields->str(ev, "pid", buf, sizeof buf))))
		s->missing_ok++;
	if (ev->ts_ns < s->last_ts)
		s->errors++;
	s->last_ts = ev->ts_ns;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fputs("usage: test_replay_fields RULES FIXTURE.dat WORKDIR\n", stderr);
		return 2;
	}
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_plan *plan = NULL;
	if (!d || hs_rules_load(argv[1], d, &rs) != HS_OK || hs_plan_build(rs, HS_PLATFORM_LINUX, NULL, &plan) != HS_OK) {
		fprintf(stderr, "FAIL: cannot load %s\n", argv[1]);
		return 1;
	}
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/replay-fields-XXXXXX", argv[3]);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	hs_backend_opts opts = {.msg = NULL, .input = argv[2], .speed = 0}; /* NULL: messages on stderr */
	const hs_backend_ops *ops = &hs_backend_replay;
	hs_backend *b = NULL;
	if (ops->start(plan, dir, &opts, &b) != HS_OK) {
		fputs("FAIL: replay start\n", stderr);
		return 1;
	}
	int fail = 0;
	seen s = {0};
	ops->set_observer(b, on_event, &s);
	if (!ops->now_ns || !ops->mark) {
		fputs("FAIL: replay has no now_ns or mark\n", stderr);
		return 1;
	}
	uint64_t t0 = ops->now_ns(b);
	while (!ops->finished(b))
		ops->poll(b, 20);
	uint64_t t1 = ops->now_ns(b);
	/* Every record delivered, the last one (of any session) is where it stands. */
	if (!(t1 > t0 && t1 >= s.last_ts)) {
		fprintf(stderr, "FAIL: now_ns %" PRIu64 " -> %" PRIu64 ", the last event at %" PRIu64 "\n", t0, t1, s.last_ts);
		fail = 1;
	}
	if (ops->mark(b, "hindsight test mark \"quoted\"") != HS_OK) {
		fputs("FAIL: mark\n", stderr);
		fail = 1;
	}
	/* A buffering session's snapshot holds the mark (its ring is the emulated window). */
	size_t ring = SIZE_MAX, keys = SIZE_MAX;
	for (size_t i = 0; i < plan->n_sessions; i++) {
		if (plan->sessions[i].session->mode == HS_MODE_BUFFERING && ring == SIZE_MAX)
			ring = i;
		if (plan->sessions[i].session->mode == HS_MODE_FILE_CIRCULAR && keys == SIZE_MAX)
			keys = i;
	}
	char snap[4200];
	snprintf(snap, sizeof snap, "%s/ring.jsonl", dir);
	if (ring != SIZE_MAX && ops->snapshot(b, ring, snap, false) != HS_OK) {
		fputs("FAIL: ring snapshot\n", stderr);
		fail = 1;
	}
	ops->stop(b);
	const char *want = "\"system\":\"ftrace\",\"event\":\"print\"";
	const char *text = "\"text\":\"hindsight test mark \\\"quoted\\\"\"";
	char keyfile[4200];
	snprintf(keyfile, sizeof keyfile, "%s/%s.jsonl", dir, keys != SIZE_MAX ? plan->sessions[keys].session->output : "");
	const char *files[2] = {keys != SIZE_MAX ? keyfile : NULL, ring != SIZE_MAX ? snap : NULL};
	for (int f = 0; f < 2; f++) {
		if (!files[f])
			continue;
		FILE *in = fopen(files[f], "r");
		char line[4096];
		bool found = false;
		while (in && fgets(line, sizeof line, in))
			found |= strstr(line, want) && strstr(line, text);
		if (in)
			fclose(in);
		if (!found) {
			fprintf(stderr, "FAIL: no marker line (%s ... %s) in %s\n", want, text, files[f]);
			fail = 1;
		}
	}
	printf("forks %zu (fields ok %zu), execs %zu (fields ok %zu, named %zu), missing fields refused on %zu events, "
	       "no fields %zu, errors %d\n",
	       s.forks, s.forks_ok, s.execs, s.execs_ok, s.execs_named, s.missing_ok, s.no_fields, s.errors);
	if (!s.forks || s.forks_ok != s.forks || !s.execs || s.execs_ok != s.execs || s.execs_named != s.execs ||
	    s.no_fields || s.errors ||
	    !s.missing_ok)
		fail = 1;
	ops->free(b);
	hs_plan_free(plan);
	hs_rules_free(rs);
	hs_diags_free(d);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (!fail && system(cmd) != 0)
		fail = 1;
	puts(fail ? "FAIL" : "PASS");
	return fail;
}
