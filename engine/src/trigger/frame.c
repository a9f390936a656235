/* trigger/frame.c: frame_time triggers: frame times from atrace slices in trace_marker text or from Present events, per process, against a running median. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "trigger/trigger_int.h"

/* The string field of the ftrace marker event (ftrace/print) that holds the
 * text written to trace_marker: the format of the event, not a choice. */
#define MARKER_FIELD "buf"

hs_status hs_frame_new(hs_trig *t)
{
	const hs_trigger *tr = t->pt->trigger;
	hs_frame_state *f = calloc(1, sizeof(*f));
	if (!f)
		return HS_ENOMEM;
	uint64_t cap = tr->median_frames;
	if (cap < 1)
		cap = 1;
	if (cap > HS_TRIGGER_MAX_MEDIAN_FRAMES)
		cap = HS_TRIGGER_MAX_MEDIAN_FRAMES;
	f->cap = (size_t)cap;
	/* A median of half the window is already a fair one; before that the
	 * process's first frames (loading, warming caches) judge nothing. */
	f->warm = (f->cap + 1) / 2;
	f->present = tr->source && strcmp(tr->source, "present") == 0;
	f->scratch = malloc(f->cap * sizeof(*f->scratch));
	if (!f->scratch) {
		free(f);
		return HS_ENOMEM;
	}
	t->frame = f;
	return HS_OK;
}

void hs_frame_free(hs_trig *t)
{
	hs_frame_state *f = t->frame;
	if (!f)
		return;
	for (size_t i = 0; i < HS_TRIGGER_FRAME_PIDS; i++)
		free(f->pids[i].ring);
	free(f->scratch);
	free(f);
	t->frame = NULL;
}

/* A slot is in use once seen (a pid 0 is tracked too). */
static hs_trig_slot_state pid_state(const void *slot, int pid, uint64_t *seen)
{
	const hs_frame_pid *p = slot;
	*seen = p->seen;
	return !p->seen ? HS_SLOT_FREE : p->pid == pid ? HS_SLOT_MINE : HS_SLOT_OTHER;
}

/* The slot of pid: found, a free one, or the least recently seen one emptied. */
static hs_frame_pid *pid_slot(hs_frame_state *f, int pid)
{
	bool found;
	hs_frame_pid *p = hs_trig_slot(f->pids, HS_TRIGGER_FRAME_PIDS, sizeof *p, pid, pid_state, &found);
	if (!found) {
		double *ring = p->ring;
		*p = (hs_frame_pid){.pid = pid, .ring = ring};
	}
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(hs_frame_state *f, const hs_frame_pid *p)
{
	if (!p->n)
		return 0;
	memcpy(f->scratch, p->ring, p->n * sizeof(*p->ring));
	qsort(f->scratch, p->n, sizeof(*f->scratch), cmp_double);
	return p->n % 2 ? f->scratch[p->n / 2] : (f->scratch[p->n / 2 - 1] + f->scratch[p->n / 2]) / 2;
}

/* Parses "B|<pid>|<name>" (a trailing newline dropped); false for E, C, S,
 * F and anything else. */
static bool parse_begin(char *buf, int *pid, const char **name)
{
	if (buf[0] != 'B' || buf[1] != '|')
		return false;
	char *end;
	long v = strtol(buf + 2, &end, 10);
	if (end == buf + 2 || *end != '|' || v <= 0 || v > INT32_MAX)
		return false;
	*pid = (int)v;
	char *s = end + 1;
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	*name = s;
	return true;
}

int hs_frame_feed(hs_trigger_engine *te, hs_trig *t, const hs_key_event *ev, char *buf, size_t cap,
		  hs_frame_hit *hit)
{
	const hs_trigger *tr = t->pt->trigger;
	hs_frame_state *f = t->frame;
	int pid;
	const char *name = NULL;
	const char *sys = ev->system ? ev->system : "";
	if (f->present) {
		/* The plan routes only the catalog's present events here: each is
		 * one Present call of the process that made it. */
		if (ev->pid <= 0) {
			t->st.unreadable++;
			return -1;
		}
		pid = ev->pid;
	} else {
		if (!ev->fields || !ev->fields->str || !ev->fields->str(ev, MARKER_FIELD, buf, cap)) {
			t->st.unreadable++;
			return -1;
		}
		if (!parse_begin(buf, &pid, &name))
			return -1;
	}
	if (t->re && name) {
		hs_regex_result r = hs_regex_match_limited(t->re, name, strlen(name));
		if (r == HS_REGEX_LIMIT)
			t->st.regex_limit_hits++;
		if (r != HS_REGEX_MATCH)
			return -1;
	}
	hs_frame_pid *p = pid_slot(f, pid);
	if (f->present) {
		if (!p->system[0])
			snprintf(p->system, sizeof p->system, "%s", sys);
		else if (strncmp(p->system, sys, sizeof p->system - 1) != 0)
			return -1; /* the process's frames are measured through another provider */
	}
	p->seen = ++te->seq;
	if (!p->ring && !(p->ring = malloc(f->cap * sizeof(*p->ring))))
		return -1;
	bool had_start = p->last_start_ns != 0;
	uint64_t prev = p->last_start_ns;
	p->last_start_ns = ev->ts_ns ? ev->ts_ns : 1;
	if (!had_start || ev->ts_ns <= prev)
		return -1; /* the first frame's start, or out of order */
	double frame_ms = (double)(ev->ts_ns - prev) / (double)HS_NS_PER_MS;
	/* Past the ceiling the process was not drawing (alt-tab, loading): no
	 * frame at all, not even for the median. ceiling_ms <= 0: no ceiling. */
	if (tr->ceiling_ms > 0 && frame_ms >= tr->ceiling_ms)
		return -1;
	bool hitch = false;
	double med = 0;
	if (p->frames >= f->warm && frame_ms > tr->threshold_ms) {
		med = median(f, p);
		hitch = frame_ms > tr->ratio * med;
	}
	p->ring[p->next] = frame_ms;
	p->next = (p->next + 1) % f->cap;
	if (p->n < f->cap)
		p->n++;
	p->frames++;
	if (!hitch)
		return 0;
	if (f->present)
		snprintf(buf, cap, "%s/%s", sys, ev->name ? ev->name : "?");
	*hit = (hs_frame_hit){.pid = pid,
			      .slice = name,
			      .present = f->present ? buf : NULL,
			      .frame_ms = frame_ms,
			      .median_ms = med,
			      .frames = p->frames};
	return 1;
}

void hs_frame_evidence(const hs_trig *t, const hs_frame_hit *hit, hs_json *j)
{
	const hs_trigger *tr = t->pt->trigger;
	hs_json_kint(j, HS_RUNDOC_HIT_FRAME_PID, hit->pid); /* keys a report reads: hindsight/rundoc.h */
	if (hit->present)
		hs_json_kstr(j, "present", hit->present); /* provider/event: no slice name */
	else
		hs_json_kstr(j, HS_RUNDOC_HIT_SLICE, hit->slice);
	hs_json_kdouble(j, HS_RUNDOC_HIT_FRAME_MS, hit->frame_ms, 3);
	hs_json_kdouble(j, HS_RUNDOC_HIT_MEDIAN_MS, hit->median_ms, 3);
	hs_json_kdouble(j, "threshold_ms", tr->threshold_ms, 3);
	hs_json_kdouble(j, "ratio", tr->ratio, 3);
	hs_json_kdouble(j, "ceiling_ms", tr->ceiling_ms, 3);
	hs_json_kuint(j, "median_frames", t->frame->cap);
	hs_json_kuint(j, "frames", hit->frames);
}
