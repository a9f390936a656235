/* report/find/killed.c: the killed detector: a task that died of a signal whose default action terminates (KILL, TERM, ...), that someone sent it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/find/common.h"

static void find_killed(hs_report *r)
{
	bool any_generate = false;
	for (size_t i = 0; i < r->n_events && !any_generate; i++)
		any_generate = r->events[i].shape == HS_DEC_SIG_GENERATE;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_SIG_DELIVER || !e->v[1] || hs_linux_signal_action(e->v[0]) == HS_SIGACT_CORE)
			continue;
		char sb[24], when[32];
		const char *sig = hs_linux_signal_name(e->v[0], sb, sizeof sb);
		/* one finding per program and signal: repeats become notes; the trigger's own hit always has its own */
		const hs_rpt_trigger *t = &r->trig;
		bool the_hit = t->present && e->pid == t->hit_pid && e->ts + 1000000u >= t->first_hit_ns &&
			       e->ts <= t->first_hit_ns + 1000000u;
		hs_rpt_finding *same = NULL;
		for (size_t k = 0; k < r->n_findings && !the_hit; k++)
			if (!strcmp(r->findings[k].kind, "killed") && r->findings[k].n_ev &&
			    r->events[r->findings[k].ev[0]].shape == HS_DEC_SIG_DELIVER &&
			    !strcmp(r->events[r->findings[k].ev[0]].comm, e->comm) &&
			    r->events[r->findings[k].ev[0]].v[0] == e->v[0])
				same = &r->findings[k];
		hs_rpt_fmt_ts(e->ts, when, sizeof when);
		if (same) {
			same->impact += same->impact < 79;
			hs_rpt_add_note(r, same, "again: %s (pid %d) at %s s", e->comm, e->pid, when);
			continue;
		}
		/* a SIGKILL the OOM killer sent is the OOM finding's */
		bool oom = false;
		for (size_t j = 0; j < r->n_events && !oom; j++)
			oom = r->events[j].shape == HS_DEC_OOM_VICTIM && r->events[j].v[0] == e->pid;
		if (oom)
			continue;
		/* A kill is sent (signal_generate to this pid). The SIGKILL the kernel gives the other threads of a
		 * process that calls exit_group, or that crashes, is delivered without one: no finding, when the
		 * trace records signal_generate at all. */
		const hs_rpt_event *gen = NULL;
		size_t gen_i = SIZE_MAX;
		for (size_t j = i; j-- > 0 && e->ts - r->events[j].ts < 5000000000ull && !gen;)
			if (r->events[j].shape == HS_DEC_SIG_GENERATE && r->events[j].v[1] == e->pid &&
			    r->events[j].v[0] == e->v[0] && e->ts - r->events[j].ts < 2000000000ull) {
				gen = &r->events[j];
				gen_i = j;
			}
		if (any_generate) {
			bool sent = false;
			for (size_t j = i; j-- > 0 && e->ts - r->events[j].ts < 5000000000ull && !sent;)
				sent = r->events[j].shape == HS_DEC_SIG_GENERATE && r->events[j].v[1] == e->pid &&
				       r->events[j].v[0] == e->v[0];
			if (!sent)
				continue;
		}
		hs_rpt_finding *f = hs_rpt_new_finding(r, "killed", any_generate ? 70 : 40, e->ts, e->pid);
		if (!f)
			return;
		hs_rpt_add_ev(r, f, i);
		if (gen)
			hs_rpt_add_ev(r, f, gen_i);
		hs_rpt_console_near(r, f, i, e->pid, NULL);
		char tail[64];
		hs_rpt_exit_tail(r, f, i, e->pid, tail, sizeof tail);
		char how[300] = "";
		if (gen && gen->pid != e->pid)
			snprintf(how, sizeof how, ": sent by %s (pid %d)", gen->comm, gen->pid);
		else if (gen)
			snprintf(how, sizeof how, ": raised by the process itself (abort(), kill or raise)");
		snprintf(f->verdict, sizeof f->verdict, "%s (pid %d) was killed by %s at %s s%s%s.", e->comm, e->pid,
			 sig, when, how, tail);
		snprintf(f->title, sizeof f->title, "Killed: %s (pid %d) was killed by %s", e->comm, e->pid, sig);
		const hs_rpt_event *log = NULL;
		for (size_t k = 0; k < f->n_ev; k++)
			if (r->events[f->ev[k]].shape == HS_DEC_CONSOLE && !log)
				log = &r->events[f->ev[k]];
		snprintf(f->text, sizeof f->text, "%s took the default action of %s (terminate)%s%s", e->comm, sig,
			 log ? ". The kernel logged: " : "", log ? log->detail : "");
		snprintf(f->next, sizeof f->next, "who sent %s (the signal_generate sender, or a supervisor/systemd log)%s",
			 sig,
			 any_generate ? ""
				      : "; no signal_generate is recorded, so this may also be the SIGKILL the kernel "
					"gives the other threads of a process that exits or crashes");
	}
}

const hs_rpt_detector hs_rpt_find_killed = {"killed", 70, HS_RPT_LINUX, "kill", .find = find_killed};
