/* report/find/oom_kill.c: the OOM kill detector: the OOM killer's victim (its catalog alert oom-kill), its size, the kernel's lines about it, the SIGKILL and the exit. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/find/common.h"

static void find_oom(hs_report *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_OOM_VICTIM)
			continue;
		char when[32], later[32] = "";
		hs_rpt_fmt_ts(e->ts, when, sizeof when);
		hs_rpt_finding *f = hs_rpt_new_finding(r, "oom-kill", 95, e->ts, (int)e->v[0]);
		if (!f)
			return;
		hs_rpt_add_ev(r, f, i);
		static const char *const words[] = {"Out of memory", "out of memory", "oom-kill", "Killed process", NULL};
		hs_rpt_console_near(r, f, i, e->v[0], words);
		for (size_t j = 0; j < r->n_events; j++)
			if (r->events[j].shape == HS_DEC_SIG_GENERATE && r->events[j].v[1] == e->v[0] &&
			    r->events[j].ts + 1000000000ull > e->ts && r->events[j].ts < e->ts + 1000000000ull)
				hs_rpt_add_ev(r, f, j);
		size_t x = hs_rpt_exit_after(r, i, e->v[0]);
		if (x != SIZE_MAX) {
			hs_rpt_add_ev(r, f, x);
			hs_rpt_ms_after(e->ts, r->events[x].ts, later, sizeof later);
		}
		bool memcg = false;
		const char *killed_line = NULL;
		for (size_t k = 0; k < f->n_ev; k++) {
			const hs_rpt_event *p = &r->events[f->ev[k]];
			if (p->shape == HS_DEC_CONSOLE && strstr(p->detail, "Memory cgroup"))
				memcg = true;
			if (p->shape == HS_DEC_CONSOLE && strstr(p->detail, "Killed process") && !killed_line)
				killed_line = p->detail;
		}
		double mb = (double)e->v[1] / 1024.0; /* mark_victim's rss fields are kB (the kernel converts the page counts) */
		char tail[64] = "";
		if (later[0])
			snprintf(tail, sizeof tail, "; it exited %s later", later);
		snprintf(f->verdict, sizeof f->verdict,
			 "The OOM killer killed %s (pid %" PRId64 ") at %s s%s: it held %.1f MB of anonymous memory%s.",
			 e->subject, e->v[0], when, memcg ? ", its memory cgroup was at its limit" : ", memory had run out",
			 mb, tail);
		snprintf(f->title, sizeof f->title, "OOM kill: %s (pid %" PRId64 ")%s", e->subject, e->v[0],
			 memcg ? " in a memory cgroup" : "");
		snprintf(f->text, sizeof f->text, "%s%s%s", e->detail, killed_line ? ". The kernel logged: " : "",
			 killed_line ? killed_line : "");
		snprintf(f->next, sizeof f->next,
			 "%s; which process grew (rss_stat, the ring's memory events) and whether reclaim stalled others "
			 "before the kill (vmscan direct/memcg reclaim)",
			 memcg ? "the cgroup's memory.max / memory.limit_in_bytes and memory.events" : "free memory and swap");
	}
}

const hs_rpt_detector hs_rpt_find_oom_kill = {"oom-kill", 95, HS_RPT_LINUX, "OOM kill", .find = find_oom};
