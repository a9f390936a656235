/* report/settle.c: the kept events made one stream after every walk: the window, time order, one copy of an event two files hold, how each process ended, names for tasks the trace forgot, timeline lanes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/model.h"

static int ev_cmp(const void *a, const void *b)
{
	const hs_rpt_event *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	int c = strcmp(x->system, y->system);
	if (c)
		return c;
	c = strcmp(x->name, y->name);
	return c ? c : x->file - y->file;
}

static bool comm_unknown(const char *c)
{
	return !c[0] || !strcmp(c, "<...>") || !strcmp(c, "?");
}

/* Does o's subject name task pid: its exit, a signal or OOM kill aimed at it, its fork? */
static bool names_task(const hs_rpt_event *o, int pid)
{
	switch (o->shape) {
	case HS_DEC_EXIT:
	case HS_DEC_OOM_VICTIM: return o->v[0] == pid;
	case HS_DEC_SIG_GENERATE:
	case HS_DEC_FORK: return o->v[1] == pid;
	default: return false;
	}
}

/* A mark in a task's name timeline: its fork (a new task; what it was called before is another task's past) or a
 * rename. */
typedef struct {
	uint64_t ts;
	int pid;
	bool fork;
	const char *was, *now; /* a rename's; borrowed from r->renames */
} name_mark;

static int mark_cmp(const void *a, const void *b)
{
	const name_mark *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (int)y->fork - (int)x->fork; /* a fork before a rename at one time */
}

/* Each Linux event named by the name its task had then. The trace's comm list (the kernel's saved_cmdlines) has one
 * name per pid, the one it saw last, not always the last one: a child that crashes just after its exec can still
 * be listed under its parent's name, and a task that renames itself has one name for its whole life. task_rename
 * records each change (an exec's and a prctl's) with both names: an event takes the name of the last rename before
 * it, or the old name of the first one after it, never across a fork of its pid (a pid used again is another
 * task). Without renames in the trace, nothing changes. */
static void names_at_the_time(hs_report *r)
{
	const hs_rpt_rename *renames = r->renames.data;
	if (!r->renames.len)
		return;
	size_t n_forks = 0;
	for (size_t i = 0; i < r->n_events; i++)
		n_forks += r->events[i].shape == HS_DEC_FORK && r->events[i].platform == HS_RPT_LINUX;
	size_t n = 0;
	name_mark *m = malloc((r->renames.len + n_forks) * sizeof *m);
	if (!m) {
		r->oom = true;
		return;
	}
	for (size_t i = 0; i < r->renames.len; i++)
		m[n++] = (name_mark){.ts = renames[i].ts, .pid = renames[i].pid, .was = renames[i].was,
				     .now = renames[i].now};
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape == HS_DEC_FORK && e->platform == HS_RPT_LINUX)
			m[n++] = (name_mark){.ts = e->ts, .pid = (int)e->v[1], .fork = true};
	}
	qsort(m, n, sizeof *m, mark_cmp);
	for (size_t i = 0; i < r->n_events; i++) {
		hs_rpt_event *e = &r->events[i];
		if (e->platform != HS_RPT_LINUX)
			continue;
		/* the first mark of e's task after e's time (lo), by binary search */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (m[mid].pid < e->pid || (m[mid].pid == e->pid && m[mid].ts <= e->ts))
				lo = mid + 1;
			else
				hi = mid;
		}
		const name_mark *before = lo > 0 && m[lo - 1].pid == e->pid ? &m[lo - 1] : NULL;
		const name_mark *after = lo < n && m[lo].pid == e->pid ? &m[lo] : NULL;
		const char *name = before && !before->fork ? before->now
				   : after && !after->fork ? after->was
							    : NULL;
		if (name && name[0])
			snprintf(e->comm, sizeof e->comm, "%s", name);
	}
	free(m);
}

/* A task the trace's comm list no longer knew ("<...>": the kernel's
 * saved_cmdlines is small and a busy machine recycles it before the snapshot
 * is written) takes its name from the events that carry it in their payload:
 * its own exit or fork (comm), a signal sent to it (the target's comm), its
 * exec (the file's base name, as the kernel names the task). O(n * unknown). */
static void fill_unknown_comms(hs_report *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		hs_rpt_event *e = &r->events[i];
		if (!comm_unknown(e->comm))
			continue;
		const char *best = NULL;
		for (size_t k = 0; k < r->n_events && !best; k++) {
			const hs_rpt_event *o = &r->events[k];
			if (o->pid == e->pid && !comm_unknown(o->comm))
				best = o->comm;
			else if (o->subject[0] && !comm_unknown(o->subject) && names_task(o, e->pid))
				best = o->subject;
			else if (o->shape == HS_DEC_EXEC && o->v[0] == e->pid && o->subject[0]) {
				const char *slash = strrchr(o->subject, '/');
				best = slash ? slash + 1 : o->subject;
			}
		}
		if (best)
			snprintf(e->comm, sizeof e->comm, "%.15s", best);
	}
}

/* How a Linux task ended: the last exit_group, fatal signal or OOM choice for its pid before its exit record
 * (an .etl exit says it itself). */
static void exit_endings(hs_report *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_EXIT || e->end != HS_RPT_END_UNKNOWN)
			continue;
		const char *how = NULL;
		char buf[96], sb[24];
		for (size_t j = i; j-- > 0 && e->ts - r->events[j].ts < 5000000000ull;) {
			const hs_rpt_event *p = &r->events[j];
			if (p->shape == HS_DEC_EXIT && p->v[0] == e->v[0])
				break;
			if (p->shape == HS_DEC_EXIT_GROUP && p->pid == (int)e->v[0]) {
				snprintf(buf, sizeof buf, "status %" PRId64, p->v[0]);
				e->end = HS_RPT_END_STATUS;
				e->end_code = p->v[0];
				how = buf;
				break;
			}
			if (p->shape == HS_DEC_SIG_DELIVER && p->pid == (int)e->v[0] && p->v[1]) {
				snprintf(buf, sizeof buf, "killed by %s", hs_linux_signal_name(p->v[0], sb, sizeof sb));
				e->end = HS_RPT_END_SIGNAL;
				e->end_code = p->v[0];
				how = buf;
				break;
			}
			if (p->shape == HS_DEC_OOM_VICTIM && p->v[0] == e->v[0]) {
				snprintf(buf, sizeof buf, "killed by the OOM killer");
				e->end = HS_RPT_END_OOM;
				e->end_code = 9;
				how = buf;
				break;
			}
		}
		snprintf(e->detail, sizeof e->detail, "%s (pid %" PRId64 ") %s%s", hs_rpt_who(e), e->v[0],
			 e->v[1] ? "ended" : "thread ended",
			 how       ? ""
			 : e->v[1] ? ", no exit_group or fatal signal seen (killed, or its start is before the window)"
				   : "");
		if (how) {
			size_t l = strlen(e->detail);
			snprintf(e->detail + l, sizeof e->detail - l, ": %s", how);
		}
	}
}

static int lane_of(const hs_rpt_event *e)
{
	switch (e->shape) {
	case HS_DEC_SIG_DELIVER:
	case HS_DEC_SIG_GENERATE:
	case HS_DEC_FAULT: return LANE_CRASH;
	case HS_DEC_OOM_VICTIM:
	case HS_DEC_RECLAIM_BEGIN:
	case HS_DEC_RECLAIM_END:
	case HS_DEC_THROTTLE:
	case HS_DEC_DIRTY_PAUSE: return LANE_MEMORY;
	case HS_DEC_SYSCALL_ENTER:
	case HS_DEC_SYSCALL_EXIT: return LANE_IO;
	case HS_DEC_EXIT: return e->end == HS_RPT_END_CRASH ? LANE_CRASH : LANE_PROCESS;
	case HS_DEC_EXEC:
	case HS_DEC_FORK:
	case HS_DEC_EXIT_GROUP: return LANE_PROCESS;
	case HS_DEC_IO_ERROR:
	case HS_DEC_HANG: return LANE_IO;
	case HS_DEC_DISCONNECT:
	case HS_DEC_RETRANSMIT: return LANE_NET;
	default: return LANE_OTHER;
	}
}

void hs_rpt_settle(hs_report *r)
{
	r->win_first = UINT64_MAX;
	for (size_t i = 0; i < r->n_files; i++) {
		if (!r->files[i].events)
			continue;
		if (r->files[i].first_ns < r->win_first)
			r->win_first = r->files[i].first_ns;
		if (r->files[i].last_ns > r->win_last)
			r->win_last = r->files[i].last_ns;
	}
	if (r->win_first == UINT64_MAX)
		r->win_first = r->win_last = 0;
	if (r->n_events > 1) /* qsort's base must not be NULL, even for no elements */
		qsort(r->events, r->n_events, sizeof *r->events, ev_cmp);
	size_t o = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		hs_rpt_event *e = &r->events[i];
		/* Two sessions that record one event stamp it a few microseconds apart. */
		bool dup = false;
		for (size_t k = o; k-- > 0 && e->ts - r->events[k].ts < 200000u && !dup;) {
			const hs_rpt_event *p = &r->events[k];
			dup = p->file != e->file && p->pid == e->pid && !strcmp(p->name, e->name) &&
			      !strcmp(p->system, e->system) && !strcmp(p->detail, e->detail);
		}
		if (!dup)
			r->events[o++] = *e;
	}
	r->n_events = o;
	exit_endings(r);
	names_at_the_time(r);
	fill_unknown_comms(r);
	/* One exit said twice with its status (an .etl's kernel process record and Kernel-Process ProcessStop, or
	 * two sessions): one stays, the manifest one when there is one (WPA's regions can name it), at the first
	 * one's time so the order stays. */
	o = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		hs_rpt_event *e = &r->events[i];
		bool dup = false;
		for (size_t k = o; e->shape == HS_DEC_EXIT && e->end != HS_RPT_END_UNKNOWN && k-- > 0 &&
				   e->ts - r->events[k].ts < 100000000u && !dup;) {
			hs_rpt_event *p = &r->events[k];
			if (p->shape == HS_DEC_EXIT && p->v[0] == e->v[0] && p->end == e->end &&
			    p->end_code == e->end_code && p->platform == e->platform) {
				dup = true;
				if (e->has_id && !p->has_id) {
					uint64_t ts = p->ts;
					*p = *e;
					p->ts = ts;
				}
			}
		}
		if (!dup)
			r->events[o++] = *e;
	}
	r->n_events = o;
	for (size_t i = 0; i < r->n_events; i++)
		r->events[i].lane = lane_of(&r->events[i]);
}
