/* report/walk_tracedat.c: one read of a trace.dat for a report: its coverage (per CPU, losses, holes), the scheduler's and interrupts' counts, and the events a finding can use, normalized. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/event.h"
#include "hindsight/event_names.h"
#include "hindsight/tracedat.h"
#include "report/model.h"

/* Event ids are 16 bits in a trace.dat: what each id is, looked up once. */
enum { N_IDS = 65536 };

typedef struct {
	hs_report *r;
	hs_rpt_file *f;
	size_t fi;
	const hs_ruleset *rules;
	uint8_t *seen;            /* [N_IDS]: shape cached */
	hs_decoded_kind *shape;   /* [N_IDS] */
	const hs_cat_event **cat; /* [N_IDS] */
	uint64_t records, bytes, file_size;
} walk_ctx;

static void progress(walk_ctx *c, bool done)
{
	const hs_report_opts *o = &c->r->opts;
	if (o->progress)
		o->progress(o->progress_ctx, c->f->name,
			    done || !c->file_size ? 1.0 : (double)c->bytes / (double)c->file_size, done);
}

static int on_record(const hs_tracedat_record *rec, void *vctx)
{
	walk_ctx *c = vctx;
	hs_report *r = c->r;
	hs_rpt_file *f = c->f;
	f->events++;
	c->bytes += rec->record_size;
	if (!(++c->records & 0xFFFF))
		progress(c, false);
	if (rec->ts < f->first_ns)
		f->first_ns = rec->ts;
	if (rec->ts > f->last_ns)
		f->last_ns = rec->ts;
	if (rec->cpu >= 0 && (unsigned)rec->cpu < f->cpus) {
		if (rec->missed_events != 0 && f->cpu_n[rec->cpu] && f->n_holes < HS_REPORT_MAX_HOLES) {
			if (!f->holes)
				f->holes = hs_rpt_calloc(r, HS_REPORT_MAX_HOLES, sizeof(*f->holes));
			if (f->holes)
				f->holes[f->n_holes++] =
					(struct hs_rpt_hole){.cpu = (unsigned)rec->cpu,
							     .from = f->cpu_last[rec->cpu],
							     .to = rec->ts,
							     .missed = rec->missed_events > 0 ? rec->missed_events : -1};
		}
		if (!f->cpu_n[rec->cpu]++)
			f->cpu_first[rec->cpu] = rec->ts;
		f->cpu_last[rec->cpu] = rec->ts;
		if (rec->missed_events > 0)
			f->cpu_missed[rec->cpu] += (uint64_t)rec->missed_events;
	}
	if (rec->missed_events > 0)
		f->missed += (uint64_t)rec->missed_events;
	else if (rec->missed_events < 0)
		f->missed_unknown++;
	unsigned id = (unsigned)rec->id & (N_IDS - 1);
	hs_event ev;
	if (!c->seen[id]) {
		hs_event_from_tracedat(rec, &ev);
		c->seen[id] = 1;
		const hs_provider *p = hs_event_find_provider_system(c->rules, rec->system);
		c->cat[id] = p ? hs_provider_find_event(p, -1, rec->name) : NULL;
		c->shape[id] = hs_event_decode_kind(&ev, c->cat[id] ? c->cat[id]->alert : NULL);
		/* renames are not findings' events, but name the others (settle.c) */
		if (c->shape[id] == HS_DEC_NONE &&
		    hs_event_decode_kind_all(&ev, c->cat[id] ? c->cat[id]->alert : NULL) == HS_DEC_RENAME)
			c->shape[id] = HS_DEC_RENAME;
	}
	hs_decoded_kind sh = c->shape[id];
	switch (sh) {
	case HS_DEC_NONE: return 0;
	/* the scheduler's and the interrupts' records are many: counted here, read again for the thread's split */
	case HS_DEC_SWITCH: f->n_switch++; return 0;
	case HS_DEC_WAKE: return 0;
	case HS_DEC_IRQ_ENTRY:
	case HS_DEC_IRQ_EXIT: f->n_irq++; return 0;
	case HS_DEC_SOFTIRQ_ENTRY:
	case HS_DEC_SOFTIRQ_EXIT: f->n_softirq++; return 0;
	case HS_DEC_EXEC: hs_rpt_exec_seen(r, rec->ts); break;
	case HS_DEC_RENAME: {
		int64_t pid = 0;
		char was[64] = "", now[64] = "";
		hs_event_from_tracedat(rec, &ev);
		if (hs_event_field_int(&ev, "pid", &pid) && hs_event_field_str(&ev, "oldcomm", was, sizeof was) &&
		    hs_event_field_str(&ev, "newcomm", now, sizeof now)) {
			char wc[16], nc[16];
			hs_utf8_clean(was, wc, sizeof wc);
			hs_utf8_clean(now, nc, sizeof nc);
			hs_rpt_rename_seen(r, rec->ts, (int)pid, wc, nc);
		}
		return 0;
	}
	default: break;
	}
	hs_rpt_event *e = hs_rpt_event_slot(r);
	if (!e)
		return 0;
	hs_event_from_tracedat(rec, &ev);
	e->ts = rec->ts;
	e->cpu = rec->cpu;
	e->pid = rec->pid;
	e->file = (int)c->fi;
	e->platform = HS_RPT_LINUX;
	hs_utf8_clean(rec->comm ? rec->comm : "?", e->comm, sizeof e->comm);
	snprintf(e->system, sizeof e->system, "%s", rec->system);
	snprintf(e->name, sizeof e->name, "%s", rec->name);
	e->story = c->cat[id] ? c->cat[id]->story : NULL;
	e->alert = c->cat[id] ? c->cat[id]->alert : NULL;
	hs_event_decoded d;
	if (!hs_event_decode(&ev, sh, e->alert, e->comm, &d))
		return 0;
	e->shape = d.kind;
	memcpy(e->v, d.v, sizeof e->v);
	memcpy(e->subject, d.subject, sizeof e->subject);
	memcpy(e->detail, d.detail, sizeof e->detail);
	r->n_events++;
	return 0;
}

void hs_rpt_walk_tracedat(hs_report *r, size_t fi, const hs_ruleset *rules)
{
	hs_rpt_file *f = &r->files[fi];
	f->first_ns = UINT64_MAX;
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open_ex(f->path, !r->opts.own_files, &td);
	if (td) {
		size_t n = hs_tracedat_problem_count(td);
		for (size_t i = 0; i < n && st == HS_OK; i++) {
			char text[HS_PROBLEM_TEXT_MAX];
			hs_rpt_file_problem(r, f, "", hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text));
		}
	}
	if (st != HS_OK) {
		hs_rpt_file_unreadable(r, f, td && hs_tracedat_problem_count(td) ? hs_tracedat_problem_at(td, 0) : NULL,
				       st);
		hs_tracedat_close(td);
		return;
	}
	f->opened = true;
	r->platforms |= HS_RPT_LINUX;
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	if (!r->clock[0])
		snprintf(r->clock, sizeof r->clock, "%s", info->clock);
	f->cpus = info->cpus;
	f->cpu_first = hs_rpt_calloc(r, f->cpus, sizeof(uint64_t));
	f->cpu_last = hs_rpt_calloc(r, f->cpus, sizeof(uint64_t));
	f->cpu_n = hs_rpt_calloc(r, f->cpus, sizeof(uint64_t));
	f->cpu_missed = hs_rpt_calloc(r, f->cpus, sizeof(uint64_t));
	walk_ctx c = {.r = r, .f = f, .fi = fi, .rules = rules, .file_size = info->file_size};
	c.seen = hs_rpt_calloc(r, N_IDS, 1);
	c.shape = hs_rpt_calloc(r, N_IDS, sizeof *c.shape);
	c.cat = hs_rpt_calloc(r, N_IDS, sizeof *c.cat);
	if (!f->cpu_first || !f->cpu_last || !f->cpu_n || !f->cpu_missed || !c.seen || !c.shape || !c.cat) {
		hs_rpt_file_problem(r, f, "", "out of memory");
		f->cpus = 0;
		r->damaged = true;
		goto done;
	}
	size_t before = hs_tracedat_problem_count(td);
	hs_tracedat_foreach(td, on_record, &c);
	progress(&c, true);
	size_t n = hs_tracedat_problem_count(td);
	for (size_t i = before; i < n; i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		hs_rpt_file_problem(r, f, "", hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text));
	}
	if (f->n_problems)
		r->damaged = true;
done:
	free(c.seen);
	free(c.shape);
	free(c.cat);
	hs_tracedat_close(td);
}
