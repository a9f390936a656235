/* report/find/process_storm.c: the process storm detector: program starts far above the window's own rate (250 ms bins, the busiest against the median). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/find/common.h"

typedef struct {
	const char *file;
	size_t n, ev;
} storm_top;

static void find_storm(hs_report *r)
{
	/* one start recorded by two sessions counts once: the settled events, unless some were not kept (then every
	 * start the walks saw) */
	uint64_t *own = NULL;
	const uint64_t *starts = r->execs;
	size_t n = r->n_execs;
	if (!r->events_not_kept) {
		own = hs_rpt_calloc(r, r->n_events, sizeof *own);
		if (!own)
			return;
		n = 0;
		for (size_t i = 0; i < r->n_events; i++)
			if (r->events[i].shape == HS_DEC_EXEC)
				own[n++] = r->events[i].ts;
		starts = own;
	}
	const uint64_t bin = 250000000ull;
	size_t nb = r->win_last > r->win_first ? (size_t)((r->win_last - r->win_first) / bin) + 1 : 0;
	uint32_t *cnt = NULL, *sorted = NULL;
	if (n < 30 || !nb || nb > 100000)
		goto out;
	cnt = hs_rpt_calloc(r, nb, sizeof *cnt);
	sorted = hs_rpt_calloc(r, nb, sizeof *sorted);
	if (!cnt || !sorted)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (starts[i] >= r->win_first && starts[i] <= r->win_last)
			cnt[(starts[i] - r->win_first) / bin]++;
	size_t peak = 0;
	for (size_t i = 0; i < nb; i++) {
		sorted[i] = cnt[i];
		if (cnt[i] > cnt[peak])
			peak = i;
	}
	/* median by counting sort on small values */
	uint32_t med = 0;
	size_t below = 0;
	for (uint32_t v = 0; v <= cnt[peak]; v++) {
		size_t k = 0;
		for (size_t i = 0; i < nb; i++)
			k += sorted[i] == v;
		below += k;
		if (below * 2 >= nb) {
			med = v;
			break;
		}
	}
	if (cnt[peak] < 20 || cnt[peak] < 5 * (med ? med : 1) || nb < 4)
		goto out;
	uint64_t ts = r->win_first + peak * bin;
	char when[32];
	hs_rpt_fmt_ts(ts, when, sizeof when);
	hs_rpt_finding *f = hs_rpt_new_finding(r, "process-storm", 50, ts, -1);
	if (!f)
		goto out;
	snprintf(f->title, sizeof f->title, "Process storm: %u execs in 250 ms (the window's median: %u)", cnt[peak], med);
	snprintf(f->verdict, sizeof f->verdict,
		 "A process storm at %s s: %u programs started in 250 ms, %ux the window's median rate.", when,
		 cnt[peak], cnt[peak] / (med ? med : 1));
	snprintf(f->text, sizeof f->text,
		 "%zu execs in the window; the busiest 250 ms had %u. Something is spawning in a loop (a crash-restart "
		 "loop, a shell loop, a build).",
		 n, cnt[peak]);
	snprintf(f->next, sizeof f->next,
		 "the parent that forks them (the fork events' parent_pid) and why each child ends (the exit statuses "
		 "below)");
	/* what ran in the busiest bin, most frequent first */
	storm_top top[8];
	size_t nt = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_EXEC || e->ts < ts || e->ts >= ts + bin)
			continue;
		size_t k = 0;
		while (k < nt && strcmp(top[k].file, e->subject))
			k++;
		if (k == nt && nt < 8)
			top[nt++] = (storm_top){e->subject, 0, i};
		if (k < nt)
			top[k].n++;
	}
	for (size_t a = 0; a < nt; a++)
		for (size_t b = a + 1; b < nt; b++)
			if (top[b].n > top[a].n) {
				storm_top t = top[a];
				top[a] = top[b];
				top[b] = t;
			}
	for (size_t a = 0; a < nt && a < 4; a++) {
		hs_rpt_add_note(r, f, "%zu x %s in the busiest 250 ms", top[a].n, top[a].file);
		hs_rpt_add_ev(r, f, top[a].ev);
	}
out:
	free(cnt);
	free(sorted);
	free(own);
}

const hs_rpt_detector hs_rpt_find_process_storm = {"process-storm", 50, HS_RPT_LINUX | HS_RPT_WINDOWS, NULL,
						   find_storm};
