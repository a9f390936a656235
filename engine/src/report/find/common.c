/* report/find/common.c: what several finding detectors share (find/common.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/etl_kernel.h"
#include "report/find/common.h"

size_t hs_rpt_exit_after(const hs_report *r, size_t i, int64_t pid)
{
	for (size_t j = i + 1; j < r->n_events && r->events[j].ts - r->events[i].ts < 10000000000ull; j++)
		if (r->events[j].shape == HS_DEC_EXIT && r->events[j].v[0] == pid && r->events[j].v[1])
			return j;
	return SIZE_MAX;
}

void hs_rpt_exit_tail(hs_report *r, hs_rpt_finding *f, size_t i, int64_t pid, char *tail, size_t cap)
{
	tail[0] = '\0';
	size_t x = hs_rpt_exit_after(r, i, pid);
	if (x == SIZE_MAX)
		return;
	hs_rpt_add_ev(r, f, x);
	char later[32];
	hs_rpt_ms_after(r->events[i].ts, r->events[x].ts, later, sizeof later);
	snprintf(tail, cap, "; it exited %s later", later);
}

size_t hs_rpt_start_before(const hs_report *r, size_t i, int64_t pid)
{
	for (size_t j = i; j-- > 0;)
		if (r->events[j].shape == HS_DEC_EXEC && r->events[j].v[0] == pid && r->events[j].file == r->events[i].file)
			return j;
	return SIZE_MAX;
}

void hs_rpt_console_near(hs_report *r, hs_rpt_finding *f, size_t i, int64_t pid, const char *const *words)
{
	char tag1[32], tag2[48];
	snprintf(tag1, sizeof tag1, "[%" PRId64 "]", pid);
	snprintf(tag2, sizeof tag2, "process %" PRId64 " ", pid);
	for (size_t j = 0; j < r->n_events; j++) {
		const hs_rpt_event *e = &r->events[j];
		if (e->shape != HS_DEC_CONSOLE)
			continue;
		uint64_t d = e->ts > r->events[i].ts ? e->ts - r->events[i].ts : r->events[i].ts - e->ts;
		if (d > 2000000000ull)
			continue;
		bool hit = strstr(e->detail, tag1) || strstr(e->detail, tag2);
		for (size_t w = 0; !hit && words && words[w]; w++)
			hit = strstr(e->detail, words[w]) != NULL;
		if (hit)
			hs_rpt_add_ev(r, f, j);
	}
}

size_t hs_rpt_alert_before(const hs_report *r, size_t i)
{
	for (size_t j = i; j-- > 0 && r->events[i].ts - r->events[j].ts < 10000000000ull;)
		if ((r->events[j].shape == HS_DEC_ALERT || r->events[j].shape == HS_DEC_IO_ERROR ||
		     r->events[j].shape == HS_DEC_HANG) &&
		    r->events[j].file == r->events[i].file)
			return j;
	return SIZE_MAX;
}

void hs_rpt_rel_ms(uint64_t a, uint64_t b, char *buf, size_t cap)
{
	double ms = ((double)b - (double)a) / 1e6;
	if (ms > -1000 && ms < 1000)
		snprintf(buf, cap, "%.0f ms", ms < 0 ? -ms : ms);
	else
		snprintf(buf, cap, "%.1f s", (ms < 0 ? -ms : ms) / 1e3);
}

void hs_rpt_status_text(const hs_rpt_event *e, char *buf, size_t cap)
{
	if (e->platform == HS_RPT_WINDOWS) {
		const char *name = hs_ntstatus_name((uint32_t)e->end_code);
		snprintf(buf, cap, "status 0x%08" PRIX32 "%s%s", (uint32_t)e->end_code, name ? " " : "",
			 name ? name : "");
	} else {
		snprintf(buf, cap, "status %" PRId64, e->end_code);
	}
}

static int span_cmp(const void *a, const void *b)
{
	const hs_rpt_span *x = a, *y = b;
	return (x->ns < y->ns) - (x->ns > y->ns);
}

size_t hs_rpt_pair_spans(hs_report *r, hs_decoded_kind begin, hs_decoded_kind end, hs_rpt_span **out)
{
	size_t n = 0, cap = 0;
	hs_rpt_span *v = NULL;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != end)
			continue;
		for (size_t k = i; k-- > 0;) {
			const hs_rpt_event *p = &r->events[k];
			if (p->pid != e->pid || p->file != e->file || strcmp(p->subject, e->subject))
				continue;
			if (p->shape == end)
				break; /* the task's previous span ended here: this end has no begin in the window */
			if (p->shape != begin)
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				hs_rpt_span *w = realloc(v, cap * sizeof *w);
				if (!w) {
					r->oom = true;
					goto out;
				}
				v = w;
			}
			v[n++] = (hs_rpt_span){k, i, e->ts - p->ts};
			break;
		}
	}
out:
	if (n > 1)
		qsort(v, n, sizeof *v, span_cmp);
	*out = v;
	return n;
}

static bool shape_event(const hs_rpt_detector *d, const hs_rpt_event *e)
{
	if (e->shape != d->shape)
		return false;
	if (d->tag)
		return e->alert && !strcmp(e->alert, d->tag);
	for (size_t k = 0; d->skip_tags && d->skip_tags[k]; k++)
		if (e->alert && !strcmp(e->alert, d->skip_tags[k]))
			return false;
	return true;
}

void hs_rpt_detector_run(hs_report *r, const hs_rpt_detector *d)
{
	if (d->find) {
		d->find(r);
		return;
	}
	hs_rpt_finding *f = NULL;
	const hs_rpt_shape_words *w = d->words;
	size_t n = 0, first = SIZE_MAX;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (!shape_event(d, e))
			continue;
		if (!f) {
			if (!(f = hs_rpt_new_finding(r, d->kind, d->impact, e->ts, e->pid)))
				return;
			first = i;
			/* worded for the platform of the first one */
			if (e->platform == HS_RPT_WINDOWS && d->windows_words)
				w = d->windows_words;
			snprintf(f->next, sizeof f->next, "%s", w->next);
		}
		hs_rpt_add_ev(r, f, i);
		n++;
	}
	if (!f)
		return;
	const hs_rpt_event *e = &r->events[first];
	char when[32];
	hs_rpt_fmt_ts(e->ts, when, sizeof when);
	if (w->catalog_named)
		snprintf(f->title, sizeof f->title, "%zu %s event%s: %s/%s first", n, w->what, n == 1 ? "" : "s",
			 e->system, e->name);
	else
		snprintf(f->title, sizeof f->title, "%zu %s%s", n, w->what, n == 1 ? "" : "s");
	if (w->verdict)
		w->verdict(r, f, e, n, when);
	else
		snprintf(f->verdict, sizeof f->verdict, "%zu %s%s, the first at %s s: %s.", n, w->what,
			 n == 1 ? "" : "s", when, e->detail);
	snprintf(f->text, sizeof f->text, "%s%s", w->catalog_named && e->story ? e->story : e->detail,
		 n > 1 ? " (the first; the others are below)" : "");
}
