/* report/find/memory_stall.c: the memory stall detector: tasks that stalled because memory was short: reclaim they did themselves (direct, or in their memory cgroup), reclaim throttling and dirty-page pauses. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/find/common.h"

static void find_memory_stalls(hs_report *r)
{
	hs_rpt_span *sp = NULL;
	size_t n = hs_rpt_pair_spans(r, HS_DEC_RECLAIM_BEGIN, HS_DEC_RECLAIM_END, &sp);
	size_t n_thr = 0, n_dirty = 0, first_thr = SIZE_MAX, first_dirty = SIZE_MAX, max_thr = SIZE_MAX;
	uint64_t thr_us = 0, dirty_ms = 0, total = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape == HS_DEC_THROTTLE) {
			n_thr++;
			thr_us += (uint64_t)(e->v[1] > 0 ? e->v[1] : 0);
			if (first_thr == SIZE_MAX)
				first_thr = i;
			if (max_thr == SIZE_MAX || e->v[1] > r->events[max_thr].v[1])
				max_thr = i;
		} else if (e->shape == HS_DEC_DIRTY_PAUSE && e->v[0] > 0) {
			n_dirty++;
			dirty_ms += (uint64_t)e->v[0];
			if (first_dirty == SIZE_MAX || e->v[0] > r->events[first_dirty].v[0])
				first_dirty = i;
		}
	}
	if (!n && !n_thr && !n_dirty) {
		free(sp);
		return;
	}
	for (size_t i = 0; i < n; i++)
		total += sp[i].ns;
	uint64_t worst = n ? sp[0].ns : 0;
	if (n_thr && (uint64_t)r->events[max_thr].v[1] * 1000u > worst)
		worst = (uint64_t)r->events[max_thr].v[1] * 1000u;
	if (n_dirty && (uint64_t)r->events[first_dirty].v[0] * 1000000u > worst)
		worst = (uint64_t)r->events[first_dirty].v[0] * 1000000u;
	uint64_t all = total + thr_us * 1000u + dirty_ms * 1000000u;
	const hs_rpt_event *who = n ? &r->events[sp[0].b] : n_thr ? &r->events[max_thr] : &r->events[first_dirty];
	int impact = worst >= 50000000u || all >= 100000000u ? 65 : worst >= 10000000u ? 35 : 15;
	hs_rpt_finding *f = hs_rpt_new_finding(r, "memory-stall", impact, who->ts, who->pid);
	if (!f) {
		free(sp);
		return;
	}
	char when[32];
	hs_rpt_fmt_ts(who->ts, when, sizeof when);
	snprintf(f->title, sizeof f->title,
		 "Memory pressure: %zu reclaim stall%s (the longest %.1f ms, %s pid %d), %zu throttle%s, %zu dirty-page "
		 "pause%s",
		 n, n == 1 ? "" : "s", n ? (double)sp[0].ns / 1e6 : 0.0, n ? r->events[sp[0].b].comm : "-",
		 n ? r->events[sp[0].b].pid : 0, n_thr, n_thr == 1 ? "" : "s", n_dirty, n_dirty == 1 ? "" : "s");
	snprintf(f->verdict, sizeof f->verdict,
		 "Tasks stalled for memory: %s (pid %d) at %s s, the longest stall %.1f ms; %.1f ms in all (%zu reclaim "
		 "stalls, %zu throttles, %zu dirty-page pauses).",
		 who->comm, who->pid, when, (double)worst / 1e6, (double)all / 1e6, n, n_thr, n_dirty);
	snprintf(f->text, sizeof f->text,
		 "A task that cannot get memory reclaims pages itself (direct reclaim, or inside its memory cgroup at "
		 "the cgroup's limit) and runs none of its own code meanwhile: %.1f ms in %zu reclaim stalls, %.1f ms "
		 "of reclaim throttling (%zu), %" PRIu64 " ms of dirty-page pauses (%zu).",
		 (double)total / 1e6, n, (double)thr_us / 1e3, n_thr, dirty_ms, n_dirty);
	snprintf(f->next, sizeof f->next,
		 "who holds the memory (the OOM finding, rss_stat, the cgroup's memory.current and memory.events), "
		 "whether the limit is too tight for the workload, swap and kswapd; for dirty-page pauses the disk's "
		 "write speed and vm.dirty_ratio");
	/* per task, the most stalled first */
	struct stalled {
		int pid;
		char comm[32];
		uint64_t ns;
		size_t n;
	} per[8];
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		const hs_rpt_event *b = &r->events[sp[i].b];
		size_t k = 0;
		while (k < np && per[k].pid != b->pid)
			k++;
		if (k == np && np < 8) {
			per[np].pid = b->pid;
			snprintf(per[np].comm, sizeof per[np].comm, "%s", b->comm);
			per[np].ns = 0;
			per[np].n = 0;
			np++;
		}
		if (k < np) {
			per[k].ns += sp[i].ns;
			per[k].n++;
		}
	}
	for (size_t a = 0; a < np; a++)
		for (size_t b = a + 1; b < np; b++)
			if (per[b].ns > per[a].ns) {
				struct stalled x = per[a];
				per[a] = per[b];
				per[b] = x;
			}
	for (size_t k = 0; k < np && k < 4; k++)
		hs_rpt_add_note(r, f, "%s (pid %d): %zu reclaim stall%s, %.1f ms", per[k].comm, per[k].pid, per[k].n,
				per[k].n == 1 ? "" : "s", (double)per[k].ns / 1e6);
	size_t empty = 0;
	for (size_t i = 0; i < n; i++)
		empty += r->events[sp[i].e].v[0] == 0;
	if (empty)
		hs_rpt_add_note(r, f,
				"%zu of the %zu reclaim stalls freed no page: nothing was left to reclaim (no swap, or all of "
				"it in use), which is how an OOM kill begins",
				empty, n);
	for (size_t i = 0; i < n && i < 3; i++) {
		hs_rpt_add_note(r, f, "stall of %.1f ms: %s/%s to %s/%s", (double)sp[i].ns / 1e6,
				r->events[sp[i].b].system, r->events[sp[i].b].name, r->events[sp[i].e].system,
				r->events[sp[i].e].name);
		hs_rpt_add_ev(r, f, sp[i].b);
		hs_rpt_add_ev(r, f, sp[i].e);
	}
	if (max_thr != SIZE_MAX)
		hs_rpt_add_ev(r, f, max_thr);
	if (first_dirty != SIZE_MAX)
		hs_rpt_add_ev(r, f, first_dirty);
	free(sp);
}

const hs_rpt_detector hs_rpt_find_memory_stall = {"memory-stall", 65, HS_RPT_LINUX, NULL, .find = find_memory_stalls};
