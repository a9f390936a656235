/* report/find/slow_syscall.c: the slow system call detector: calls the profile records as enter/exit pairs (the sync calls), paired per task: how long each waited, the longest first, and the calls that failed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/find/common.h"

static void find_syscalls(hs_report *r)
{
	hs_rpt_span *sp = NULL;
	size_t n = hs_rpt_pair_spans(r, HS_DEC_SYSCALL_ENTER, HS_DEC_SYSCALL_EXIT, &sp);
	/* one finding per call: the names, in the order of their longest span */
	for (size_t i = 0; i < n; i++) {
		const char *call = r->events[sp[i].e].subject;
		bool done = false;
		for (size_t k = 0; k < i && !done; k++)
			done = !strcmp(r->events[sp[k].e].subject, call);
		if (done)
			continue;
		size_t cnt = 0, failed = 0, first_fail = SIZE_MAX;
		uint64_t total = 0;
		for (size_t k = i; k < n; k++) {
			if (strcmp(r->events[sp[k].e].subject, call))
				continue;
			cnt++;
			total += sp[k].ns;
			if (r->events[sp[k].e].v[1] < 0) {
				failed++;
				if (first_fail == SIZE_MAX)
					first_fail = k;
			}
		}
		const hs_rpt_event *b = &r->events[sp[i].b];
		/* EIO, ENOSPC, EROFS, EDQUOT: the data may not be on disk; another error is the caller's (EBADF,
		 * EINVAL). The trace's errno numbers are Linux's (the calls come from trace.dat files only). */
		int64_t err = first_fail != SIZE_MAX ? -r->events[sp[first_fail].e].v[1] : 0;
		bool lost = err == 5 || err == 28 || err == 30 || err == 122;
		int impact = lost ? 80 : failed ? 40 : sp[i].ns >= 100000000u ? 45 : sp[i].ns >= 20000000u ? 30 : 10;
		hs_rpt_finding *f = hs_rpt_new_finding(r, "slow-syscall", impact, b->ts, b->pid);
		if (!f)
			break;
		char when[32], fails[64] = "";
		hs_rpt_fmt_ts(b->ts, when, sizeof when);
		if (failed)
			snprintf(fails, sizeof fails, ", %zu failed", failed);
		snprintf(f->title, sizeof f->title, "%s: %zu call%s, the longest %.1f ms (%s pid %d)%s", call, cnt,
			 cnt == 1 ? "" : "s", (double)sp[i].ns / 1e6, b->comm, b->pid, fails);
		if (failed) {
			const hs_rpt_event *x = &r->events[sp[first_fail].e];
			hs_rpt_fmt_ts(x->ts, when, sizeof when);
			snprintf(f->verdict, sizeof f->verdict,
				 "%s failed %zu time%s: %s (pid %d) got %" PRId64 " (%s) at %s s%s.", call, failed,
				 failed == 1 ? "" : "s", x->comm, x->pid, x->v[1], strerror((int)err), when,
				 lost ? ": the data may not be on disk" : ", an error of the call itself, not of the disk");
		} else {
			snprintf(f->verdict, sizeof f->verdict,
				 "%s (pid %d) waited %.1f ms in %s from %s s (%zu call%s, %.1f ms in all).", b->comm, b->pid,
				 (double)sp[i].ns / 1e6, call, when, cnt, cnt == 1 ? "" : "s", (double)total / 1e6);
		}
		snprintf(f->text, sizeof f->text,
			 "%zu %s call%s returned in the window, %.1f ms in all, the longest %.1f ms; the task can do nothing "
			 "else until the call returns%s.",
			 cnt, call, cnt == 1 ? "" : "s", (double)total / 1e6, (double)sp[i].ns / 1e6,
			 failed ? "; a negative return is the error number (-5 is EIO)" : "");
		snprintf(f->next, sizeof f->next,
			 "the disk behind the file (the block events' issue-to-complete time, the device's queue and "
			 "health), what else wrote at the time (writeback, dirty-page pauses), and the file (fd %" PRId64
			 " of pid %d)",
			 b->v[1], b->pid);
		if (first_fail != SIZE_MAX) {
			hs_rpt_add_ev(r, f, sp[first_fail].b);
			hs_rpt_add_ev(r, f, sp[first_fail].e);
		}
		for (size_t k = i, shown = 0; k < n && shown < 3; k++) {
			if (strcmp(r->events[sp[k].e].subject, call))
				continue;
			hs_rpt_add_note(r, f, "%.1f ms: %s (pid %d), fd %" PRId64 ", returned %" PRId64,
					(double)sp[k].ns / 1e6, r->events[sp[k].b].comm, r->events[sp[k].b].pid,
					r->events[sp[k].b].v[1], r->events[sp[k].e].v[1]);
			hs_rpt_add_ev(r, f, sp[k].b);
			hs_rpt_add_ev(r, f, sp[k].e);
			shown++;
		}
	}
	free(sp);
}

const hs_rpt_detector hs_rpt_find_slow_syscall = {"slow-syscall", 45, HS_RPT_LINUX, NULL, .find = find_syscalls};
