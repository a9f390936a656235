/* report/find/process_storm.c: the process storm detector: program starts far above the window's own rate, or one program started far above its own (250 ms bins, the busiest against the median). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/find/common.h"
#include "report/order.h"

typedef struct {
	const char *file;
	size_t n, ev;
} storm_top;

static uint64_t top_n(const void *t)
{
	return ((const storm_top *)t)->n;
}

/* The median of nb bins' counts, of which only the k nonzero ones are given (ascending): the smallest value v
 * with at least half the bins at most v. */
static uint32_t median_of(const uint32_t *nonzero, size_t k, size_t nb)
{
	size_t zeros = nb - k;
	if (zeros * 2 >= nb)
		return 0;
	for (size_t j = 0; j < k; j++)
		if ((zeros + j + 1) * 2 >= nb)
			return nonzero[j];
	return k ? nonzero[k - 1] : 0;
}

typedef struct {
	const char *file;
	uint64_t ts;
} storm_exec;

static int exec_cmp(const void *a, const void *b)
{
	const storm_exec *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	return c ? c : (x->ts > y->ts) - (x->ts < y->ts);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

typedef struct {
	const char *file; /* NULL: none */
	uint32_t peak, med;
	uint64_t peak_bin;
} storm_prog;

/* One program started far above its own rate: the busiest bin of a program (at least min_peak, ratio x its own
 * median) while the machine's other starts kept the window's rate high (a build beside a crash-restart loop: the
 * loop's 50 starts in 250 ms are not 5x a build's 14, but they are 50x the loop program's own 0). Kept events
 * only (a start the walks saw but did not keep has no file name). The program with the busiest such bin. */
static storm_prog busiest_program(hs_report *r, uint64_t bin, size_t nb, uint32_t min_peak, uint32_t ratio)
{
	storm_prog best = {0};
	size_t n = 0;
	for (size_t i = 0; i < r->n_events; i++)
		n += r->events[i].shape == HS_DEC_EXEC && r->events[i].subject[0] && r->events[i].ts >= r->win_first &&
		     r->events[i].ts <= r->win_last;
	storm_exec *ex = n ? hs_rpt_calloc(r, n, sizeof *ex) : NULL;
	uint32_t *counts = n ? hs_rpt_calloc(r, n, sizeof *counts) : NULL;
	if (!ex || !counts)
		goto out;
	n = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape == HS_DEC_EXEC && e->subject[0] && e->ts >= r->win_first && e->ts <= r->win_last)
			ex[n++] = (storm_exec){e->subject, e->ts};
	}
	qsort(ex, n, sizeof *ex, exec_cmp);
	for (size_t a = 0; a < n;) {
		size_t b = a, k = 0;
		uint32_t peak = 0;
		uint64_t peak_bin = 0;
		while (b < n && !strcmp(ex[b].file, ex[a].file)) {
			uint64_t at = (ex[b].ts - r->win_first) / bin;
			uint32_t c = 0;
			while (b < n && !strcmp(ex[b].file, ex[a].file) && (ex[b].ts - r->win_first) / bin == at) {
				c++;
				b++;
			}
			counts[k++] = c;
			if (c > peak) {
				peak = c;
				peak_bin = at;
			}
		}
		qsort(counts, k, sizeof *counts, u32_cmp);
		uint32_t med = median_of(counts, k, nb);
		if (peak >= min_peak && peak >= ratio * (med ? med : 1) && peak > best.peak)
			best = (storm_prog){ex[a].file, peak, med, peak_bin};
		a = b;
	}
out:
	free(ex);
	free(counts);
	return best;
}

static void find_storm(hs_report *r)
{
	/* one start recorded by two sessions counts once: the settled events, unless some were not kept (then every
	 * start the walks saw) */
	uint64_t *own = NULL;
	const uint64_t *starts = r->execs.data;
	size_t n = r->execs.len;
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
	if (nb < 4)
		goto out;
	storm_prog prog = {0};
	if (cnt[peak] < 20 || cnt[peak] < 5 * (med ? med : 1)) {
		prog = busiest_program(r, bin, nb, 20, 5);
		if (!prog.file)
			goto out;
		peak = (size_t)prog.peak_bin;
	}
	uint64_t ts = r->win_first + peak * bin;
	char when[32];
	hs_rpt_fmt_ts(ts, when, sizeof when);
	hs_rpt_finding *f = hs_rpt_new_finding(r, "process-storm", 50, ts, -1);
	if (!f)
		goto out;
	if (prog.file) {
		snprintf(f->title, sizeof f->title,
			 "Process storm: %u execs of %s in 250 ms (its median: %u; all programs': %u)", prog.peak,
			 prog.file, prog.med, med);
		snprintf(f->verdict, sizeof f->verdict,
			 "A process storm at %s s: %s started %u times in 250 ms, %ux its own median rate, beside %u "
			 "starts of all programs in a median 250 ms.",
			 when, prog.file, prog.peak, prog.peak / (prog.med ? prog.med : 1), med);
	} else {
		snprintf(f->title, sizeof f->title, "Process storm: %u execs in 250 ms (the window's median: %u)", cnt[peak],
			 med);
		snprintf(f->verdict, sizeof f->verdict,
			 "A process storm at %s s: %u programs started in 250 ms, %ux the window's median rate.", when,
			 cnt[peak], cnt[peak] / (med ? med : 1));
	}
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
	hs_rpt_order_most(top, nt, sizeof *top, top_n);
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
						   .find = find_storm};
