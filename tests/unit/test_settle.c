/* test_settle.c: the report's events made one stream (engine/src/report/settle.c): each Linux event named by the name its task had then, from the trace's renames and forks, over hand-built events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/model.h"

#define MS 1000000ull

/* one kept event at ms, of pid, with the comm the trace's comm list gives it */
static hs_rpt_event *ev(hs_report *r, double ms, int pid, const char *comm, hs_decoded_kind shape, const char *name)
{
	hs_rpt_event *e = hs_rpt_event_slot(r);
	CHECK(e != NULL);
	e->ts = (uint64_t)(ms * 1e6) + 1000 * MS;
	e->pid = pid;
	e->platform = HS_RPT_LINUX;
	e->shape = shape;
	snprintf(e->comm, sizeof e->comm, "%s", comm);
	snprintf(e->system, sizeof e->system, "test");
	snprintf(e->name, sizeof e->name, "%s", name);
	snprintf(e->detail, sizeof e->detail, "%s %.3f", name, ms);
	r->n_events++;
	return e;
}

static void ren(hs_report *r, double ms, int pid, const char *was, const char *now)
{
	hs_rpt_rename_seen(r, (uint64_t)(ms * 1e6) + 1000 * MS, pid, was, now);
}

static const hs_rpt_event *find(const hs_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_events; i++)
		if (!strcmp(r->events[i].name, name))
			return &r->events[i];
	return NULL;
}

#define NAMED(r, evname, want)                                                                                         \
	do {                                                                                                           \
		const hs_rpt_event *e_ = find(r, evname);                                                              \
		CHECK_EQ_STR(e_ ? e_->comm : "(no such event)", want);                                                 \
	} while (0)

/* pid forks child (the kernel's sched_process_fork: the child's comm is the parent's) */
static void fork_ev(hs_report *r, double ms, int pid, const char *comm, int child, const char *name)
{
	hs_rpt_event *f = ev(r, ms, pid, comm, HS_DEC_FORK, name);
	f->v[0] = pid;
	f->v[1] = child;
	snprintf(f->subject, sizeof f->subject, "%s", comm);
}

/* A shell forks a child that execs a program and crashes at once; the comm list still says "bash" for it (the
 * kernel saved the name before the exec). The crash is the program's; the child's life before its exec is bash's. */
static void test_exec_then_crash(void)
{
	hs_report *r = calloc(1, sizeof *r);
	fork_ev(r, 0, 100, "bash", 4242, "fork");
	ev(r, 0.5, 4242, "bash", HS_DEC_ALERT, "before_exec");
	ren(r, 1, 4242, "bash", "crasher");
	hs_rpt_event *x = ev(r, 1, 4242, "bash", HS_DEC_EXEC, "exec");
	x->v[0] = 4242;
	ev(r, 3, 4242, "bash", HS_DEC_SIG_DELIVER, "crash");
	ev(r, 3, 100, "bash", HS_DEC_ALERT, "parent");
	hs_rpt_settle(r);
	NAMED(r, "before_exec", "bash");
	NAMED(r, "exec", "crasher");
	NAMED(r, "crash", "crasher");
	NAMED(r, "parent", "bash");
	hs_rpt_model_free(r);
	free(r);
}

/* A thread names itself (prctl) after it started; the comm list gives its last name for its whole life. */
static void test_prctl_rename(void)
{
	hs_report *r = calloc(1, sizeof *r);
	ev(r, 0, 7, "RenderThread", HS_DEC_ALERT, "early");
	ren(r, 2, 7, "game", "RenderThread");
	ev(r, 2.5, 7, "RenderThread", HS_DEC_ALERT, "late");
	ren(r, 4, 7, "RenderThread", "Render-2");
	ev(r, 5, 7, "RenderThread", HS_DEC_ALERT, "last");
	hs_rpt_settle(r);
	NAMED(r, "early", "game");
	NAMED(r, "late", "RenderThread");
	NAMED(r, "last", "Render-2");
	hs_rpt_model_free(r);
	free(r);
}

/* A pid used again: the first task's rename does not name the second one (a fork of the pid between them), and an
 * event of a task the trace has no rename for keeps the comm list's name. */
static void test_pid_reuse(void)
{
	hs_report *r = calloc(1, sizeof *r);
	ren(r, 0, 55, "sh", "old");
	ev(r, 1, 55, "new", HS_DEC_ALERT, "first_life");
	fork_ev(r, 2, 1, "init", 55, "refork");
	ev(r, 3, 55, "new", HS_DEC_ALERT, "second_life");
	ev(r, 3, 56, "other", HS_DEC_ALERT, "unrenamed");
	hs_rpt_settle(r);
	NAMED(r, "first_life", "old");
	NAMED(r, "second_life", "new");
	NAMED(r, "unrenamed", "other");
	hs_rpt_model_free(r);
	free(r);
}

/* A Windows event is named by its process's image; renames are Linux's. */
static void test_windows_untouched(void)
{
	hs_report *r = calloc(1, sizeof *r);
	ren(r, 0, 9, "a", "b");
	hs_rpt_event *e = ev(r, 1, 9, "game.exe", HS_DEC_ALERT, "win");
	e->platform = HS_RPT_WINDOWS;
	hs_rpt_settle(r);
	NAMED(r, "win", "game.exe");
	hs_rpt_model_free(r);
	free(r);
}

/* hs_rpt_text (model.c): a report line that does not fit says so with "...", never inside a UTF-8 character. */
static void test_text_cut(void)
{
	char b[12];
	CHECK(hs_rpt_text(b, sizeof b, "%s", "short"));
	CHECK_EQ_STR(b, "short");
	CHECK(!hs_rpt_text(b, sizeof b, "%s %d", "a longer line", 42));
	CHECK_EQ_STR(b, "a longer...");
	/* "abc" then 2-byte characters: a cut at byte 8 would split the third one */
	CHECK(!hs_rpt_text(b, sizeof b, "%s", "abc\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9xyz"));
	CHECK_EQ_STR(b, "abc\xc3\xa9\xc3\xa9...");
}

int main(void)
{
	test_text_cut();
	test_exec_then_crash();
	test_prctl_rename();
	test_pid_reuse();
	test_windows_untouched();
	printf("%d checks, %d failures\n", hs_test_checks, hs_test_failures);
	return hs_test_failures ? 1 : 0;
}
