/* report/find/crash.c: the crash detector: a process that died of a fault, whichever way its platform says it (a Linux signal whose default action dumps core, a Windows exit status that is an NTSTATUS error), with what led to it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hindsight/etl_kernel.h"
#include "report/find/common.h"

/* A crash's normalized facts: who died, of what, in the words each platform names it. */
typedef struct {
	const char *who; /* the task's name (Linux comm) or the process's image (Windows) */
	int pid;
	int64_t code;        /* the signal, or the exit status */
	char cause[96];      /* "SIGSEGV" / "0xC0000005 STATUS_ACCESS_VIOLATION" */
	char cause_long[112]; /* "SIGSEGV" / "exit status 0xC0000005 STATUS_ACCESS_VIOLATION" */
} crash_sign;

/* Is event e a crash, and of whom and what? */
static bool crash_of(const hs_rpt_event *e, crash_sign *c)
{
	if (e->shape == HS_DEC_SIG_DELIVER && e->v[1] && hs_linux_signal_action(e->v[0]) == HS_SIGACT_CORE) {
		char sb[24];
		c->who = e->comm;
		c->pid = e->pid;
		c->code = e->v[0];
		snprintf(c->cause, sizeof c->cause, "%s", hs_linux_signal_name(e->v[0], sb, sizeof sb));
		snprintf(c->cause_long, sizeof c->cause_long, "%s", c->cause);
		return true;
	}
	if (e->shape == HS_DEC_EXIT && e->end == HS_RPT_END_CRASH) {
		const char *sname = hs_ntstatus_name((uint32_t)e->end_code);
		c->who = e->subject;
		c->pid = (int)e->v[0];
		c->code = e->end_code;
		snprintf(c->cause, sizeof c->cause, "0x%08" PRIX32 "%s%s", (uint32_t)e->end_code, sname ? " " : "",
			 sname ? sname : "");
		snprintf(c->cause_long, sizeof c->cause_long, "exit status %s", c->cause);
		return true;
	}
	return false;
}

/* What the finding says about the cause and where to look next, in each platform's terms. */
static void words_linux(hs_rpt_finding *f, const crash_sign *c, const hs_rpt_event *log)
{
	snprintf(f->text, sizeof f->text, "%s took the default action of %s (terminate with a core dump)%s%s", c->who,
		 c->cause, log ? ". The kernel logged: " : "", log ? log->detail : "");
	snprintf(f->next, sizeof f->next,
		 "the core dump (coredumpctl list %s / core_pattern) and the faulting ip%s; what %s did just before "
		 "(its exec and the ring's scheduler events for pid %d)",
		 c->who, log ? " in the kernel line (the library and offset)" : "", c->who, c->pid);
}

static void words_windows(hs_rpt_finding *f, const crash_sign *c, const hs_rpt_event *log)
{
	(void)log;
	snprintf(f->text, sizeof f->text,
		 "The process ended with an NTSTATUS error code (severity 3, 0xC...) as its exit status: Windows ended it "
		 "for an unhandled exception%s, or it failed itself fast.",
		 c->code == 0xC0000005 ? " (an access violation: a bad pointer)"
		 : c->code == 0xC0000409 ? " (a detected stack buffer overrun or fail-fast)"
		 : c->code == 0xC00000FD ? " (a stack overflow)"
					  : "");
	snprintf(f->next, sizeof f->next,
		 "the crash dump (WER: %%LOCALAPPDATA%%\\CrashDumps, or the Application event log's Application Error "
		 "1000 entry for %s with the faulting module and offset); what it did just before (the ring's CPU "
		 "samples and context switches for pid %d)",
		 c->who, c->pid);
}

static const struct {
	unsigned platform;
	void (*words)(hs_rpt_finding *f, const crash_sign *c, const hs_rpt_event *log);
} platform_words[] = {{HS_RPT_LINUX, words_linux}, {HS_RPT_WINDOWS, words_windows}};

static void find_crash(hs_report *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		crash_sign c;
		if (!crash_of(e, &c))
			continue;
		char when[32];
		hs_rpt_fmt_ts(e->ts, when, sizeof when);
		/* one finding per program and cause: repeats become notes; the trigger's own hit always has its own */
		const hs_rpt_trigger *t = &r->trig;
		bool the_hit = t->present && c.pid == t->hit_pid && e->ts + 1000000u >= t->first_hit_ns &&
			       e->ts <= t->first_hit_ns + 1000000u;
		hs_rpt_finding *same = NULL;
		for (size_t k = 0; k < r->n_findings && !the_hit; k++) {
			crash_sign o;
			if (!strcmp(r->findings[k].kind, "crash") && r->findings[k].n_ev &&
			    crash_of(&r->events[r->findings[k].ev[0]], &o) && !strcmp(o.who, c.who) && o.code == c.code)
				same = &r->findings[k];
		}
		if (same) {
			same->impact += same->impact < 99;
			hs_rpt_add_note(r, same, "again: %s (pid %d) at %s s", c.who, c.pid, when);
			continue;
		}
		/* a SIGKILL the OOM killer sent is the OOM finding's */
		bool oom = false;
		for (size_t j = 0; j < r->n_events && !oom; j++)
			oom = r->events[j].shape == HS_DEC_OOM_VICTIM && r->events[j].v[0] == c.pid;
		if (oom)
			continue;
		hs_rpt_finding *f = hs_rpt_new_finding(r, "crash", 100, e->ts, c.pid);
		if (!f)
			return;
		hs_rpt_add_ev(r, f, i);
		/* what led to it: the NULL-page fault, who sent the signal (Linux), the kernel's lines about it */
		const hs_rpt_event *fault = NULL, *gen = NULL, *log = NULL;
		for (size_t j = i; j-- > 0 && e->ts - r->events[j].ts < 2000000000ull;) {
			const hs_rpt_event *p = &r->events[j];
			if (p->shape == HS_DEC_FAULT && p->pid == c.pid && !fault) {
				fault = p;
				hs_rpt_add_ev(r, f, j);
			}
			if (p->shape == HS_DEC_SIG_GENERATE && p->v[1] == c.pid && p->v[0] == c.code && !gen &&
			    e->shape == HS_DEC_SIG_DELIVER) {
				gen = p;
				hs_rpt_add_ev(r, f, j);
			}
		}
		hs_rpt_console_near(r, f, i, c.pid, NULL);
		for (size_t k = 0; k < f->n_ev; k++)
			if (r->events[f->ev[k]].shape == HS_DEC_CONSOLE && !log)
				log = &r->events[f->ev[k]];
		/* a device's failure before it (a GPU reset, a removal, an I/O error), and its start */
		char after[300] = "";
		size_t a = hs_rpt_alert_before(r, i);
		if (a != SIZE_MAX) {
			char d[32];
			hs_rpt_rel_ms(r->events[a].ts, e->ts, d, sizeof d);
			hs_rpt_add_ev(r, f, a);
			snprintf(after, sizeof after, "; %s after %s/%s (%s)", d, r->events[a].system, r->events[a].name,
				 r->events[a].alert ? r->events[a].alert : "alert");
		}
		size_t s = hs_rpt_start_before(r, i, c.pid);
		if (s != SIZE_MAX)
			hs_rpt_add_ev(r, f, s);
		char tail[64];
		hs_rpt_exit_tail(r, f, i, c.pid, tail, sizeof tail);
		char how[300] = "";
		if (fault)
			snprintf(how, sizeof how, ": a NULL-pointer access (page fault at 0x%" PRIx64 ", ip 0x%" PRIx64 ")",
				 (uint64_t)fault->v[0], (uint64_t)fault->v[1]);
		else if (gen && gen->pid != c.pid)
			snprintf(how, sizeof how, ": sent by %s (pid %d)", gen->comm, gen->pid);
		else if (gen && c.code != 11)
			snprintf(how, sizeof how, ": raised by the process itself (abort(), kill or raise)");
		snprintf(f->verdict, sizeof f->verdict, "%s (pid %d) crashed with %s at %s s%s%s%s.", c.who, c.pid,
			 c.cause_long, when, how, after, tail);
		snprintf(f->title, sizeof f->title, "Crash: %s (pid %d) died of %s", c.who, c.pid, c.cause);
		for (size_t k = 0; k < sizeof platform_words / sizeof platform_words[0]; k++)
			if (platform_words[k].platform == e->platform)
				platform_words[k].words(f, &c, log);
	}
}

const hs_rpt_detector hs_rpt_find_crash = {"crash", 100, HS_RPT_LINUX | HS_RPT_WINDOWS, "crash", .find = find_crash};
