/* report/find.c: the finding detectors as a table (one file each under find/), then the ranking (the trigger's own hit first, earlier history below it), the moment and the verdict. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/find/common.h"

/* Run in this order: the marker may say what the trigger was before anything reads it; the order also breaks
 * ties of impact and time. A new detector is a file under find/ and a line here (docs/report.md lists them). */
static const hs_rpt_detector *const detectors[] = {
	&hs_rpt_find_trigger_marker, &hs_rpt_find_frame_hitch, &hs_rpt_find_freeze, &hs_rpt_find_crash,         &hs_rpt_find_killed,
	&hs_rpt_find_oom_kill,       &hs_rpt_find_hang,        &hs_rpt_find_io_error,      &hs_rpt_find_gpu_reset,
	&hs_rpt_find_device_removed, &hs_rpt_find_disconnect,  &hs_rpt_find_alert,         &hs_rpt_find_process_storm,
	&hs_rpt_find_retransmit,     &hs_rpt_find_memory_stall, &hs_rpt_find_slow_syscall, &hs_rpt_find_silent_death,
	&hs_rpt_find_exit_status,    &hs_rpt_find_activity,
};

/* "crash, kill, OOM kill, hang, I/O error or disconnect": the nouns of the detectors for the platforms read. */
static void absent_nouns(hs_report *r)
{
	const char *nouns[sizeof detectors / sizeof detectors[0]];
	size_t n = 0;
	unsigned platforms = r->platforms ? r->platforms : HS_RPT_LINUX;
	for (size_t i = 0; i < sizeof detectors / sizeof detectors[0]; i++)
		if (detectors[i]->noun && (detectors[i]->platforms & platforms))
			nouns[n++] = detectors[i]->noun;
	size_t o = 0;
	r->absent[0] = '\0';
	for (size_t i = 0; i < n && o < sizeof r->absent; i++) {
		int w = snprintf(r->absent + o, sizeof r->absent - o, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
				 nouns[i]);
		o = w < 0 ? sizeof r->absent : o + (size_t)w;
	}
}

static int cmp_ev_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

static int finding_cmp(const void *a, const void *b)
{
	const hs_rpt_finding *x = a, *y = b;
	if (x->impact != y->impact)
		return y->impact - x->impact;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* A snapshot's trigger says which finding the moment is about (its hit's time and pid). A snapshot's key-event
 * file may hold the whole run so far: findings well before the moment are earlier history and rank below it. */
static void rank(hs_report *r)
{
	const hs_rpt_trigger *t = &r->trig;
	for (size_t k = 0; k < r->n_findings && t->present && t->first_hit_ns; k++) {
		hs_rpt_finding *f = &r->findings[k];
		if (f->impact < 20 || !f->ts)
			continue;
		bool near = f->ts + 2000000000ull >= t->first_hit_ns && f->ts <= t->first_hit_ns + 2000000000ull;
		bool at = f->ts + 1000000u >= t->first_hit_ns && f->ts <= t->first_hit_ns + 1000000u;
		/* the finding that is the trigger's own symptom (the long frame, the freeze) leads what explains it (a
		 * slow fsync, a memory stall of the same thread): the why below says how they join */
		bool own = (!strcmp(f->kind, "frame-hitch") && !strcmp(t->kind, "frame_time")) ||
			   (!strcmp(f->kind, "app-hang") && t->freeze);
		if (own && near) {
			f->impact = 102;
		} else if (near && (at || (t->hit_pid >= 0 && f->pid == t->hit_pid))) {
			f->impact = f->impact < 101 ? 101 : f->impact;
		} else if (f->ts + 2000000000ull < t->first_hit_ns) {
			char s[sizeof f->title + 64];
			snprintf(s, sizeof s, "Earlier (%.1f s before the moment): %s", (double)(t->first_hit_ns - f->ts) / 1e9,
				 f->title);
			snprintf(f->title, sizeof f->title, "%.*s", (int)(sizeof f->title - 1), s);
			f->impact = f->impact > 60 ? f->impact - 50 : 10;
		}
	}
	for (size_t k = 0; k < r->n_findings; k++) {
		hs_rpt_finding *f = &r->findings[k];
		if (f->n_ev > 1)
			qsort(f->ev, f->n_ev, sizeof *f->ev, cmp_ev_index);
	}
	/* sorted before the cap: the trigger's own finding (101) leads another program's crash (100) near the moment */
	if (r->n_findings > 1)
		qsort(r->findings, r->n_findings, sizeof *r->findings, finding_cmp);
	for (size_t k = 0; k < r->n_findings; k++)
		if (r->findings[k].impact > 100)
			r->findings[k].impact = 100;
}

static void verdict(hs_report *r)
{
	const hs_rpt_finding *top = r->n_findings ? &r->findings[0] : NULL;
	const hs_rpt_trigger *t = &r->trig;
	size_t opened = 0, unread = 0;
	for (size_t i = 0; i < r->n_files; i++) {
		opened += r->files[i].opened;
		unread += !r->files[i].opened;
	}
	if (!opened) {
		snprintf(r->verdict[0], sizeof r->verdict[0],
			 "No verdict: none of the %zu trace file%s could be read (COVERAGE says why).", r->n_files,
			 r->n_files == 1 ? "" : "s");
		return;
	}
	uint64_t read = 0;
	for (size_t i = 0; i < r->n_files; i++)
		read += r->files[i].events;
	if (top)
		snprintf(r->verdict[0], sizeof r->verdict[0], "%s", top->verdict);
	else
		snprintf(r->verdict[0], sizeof r->verdict[0],
			 "Nothing went wrong that this report recognises: no %s among the %" PRIu64 " events read.",
			 r->absent, read);
	if (t->present) {
		char where[300] = "";
		if (t->hit_event[0])
			snprintf(where, sizeof where, " on %s/%s%s%s%s", t->hit_system, t->hit_event,
				 t->hit_where[0] ? " (" : "", t->hit_where, t->hit_where[0] ? ")" : "");
		snprintf(r->verdict[1], sizeof r->verdict[1],
			 "Snapshot %03" PRId64 " was taken by trigger %s (kind %s)%s, %" PRId64
			 " hit%s, detected %.1f ms after the hit%s%s.",
			 t->snapshot_no, t->name, t->kind, where, t->hits, t->hits == 1 ? "" : "s", t->detect_ms,
			 t->taken_at[0] ? ", taken " : "", t->taken_at);
	} else if (unread) {
		snprintf(r->verdict[1], sizeof r->verdict[1],
			 "Only part of the input was read: %zu of %zu trace files could not be (COVERAGE says which).", unread,
			 r->n_files);
	} else if (r->n_findings > 1 && top && top->impact >= 20) {
		snprintf(r->verdict[1], sizeof r->verdict[1], "%zu more finding%s below.", r->n_findings - 1,
			 r->n_findings == 2 ? "" : "s");
	}
}

void hs_rpt_find(hs_report *r)
{
	absent_nouns(r);
	for (size_t i = 0; i < sizeof detectors / sizeof detectors[0]; i++)
		hs_rpt_detector_run(r, detectors[i]);
	rank(r);
	const hs_rpt_trigger *t = &r->trig;
	r->moment = t->present && t->first_hit_ns			? t->first_hit_ns
		    : r->n_findings && r->findings[0].impact >= 20 ? r->findings[0].ts
								   : r->win_last;
	verdict(r);
}
