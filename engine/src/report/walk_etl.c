/* report/walk_etl.c: one read of a Windows .etl for a report: its coverage and header notes, and the events the catalogs give a meaning (process starts and exits, alerts, the engine's marker), normalized onto the Linux shapes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hindsight/compat.h"
#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/event.h"
#include "hindsight/event_names.h"
#include "hindsight/plan.h"
#include "hindsight/text.h"
#include "hindsight/vec.h"
#include "report/model.h"

/* The NTSTATUS a console's Ctrl+C or closed window ends a process with: an error by its severity bits, not a
 * crash (hs_ntstatus_name spells it). */
#define NT_CONTROL_C_EXIT 0xC000013Au

typedef struct {
	uint32_t pid;
	char name[32];
} pid_name;

typedef struct {
	hs_report *r;
	size_t fi;
	const hs_ruleset *rules;
	const hs_etl *etl;
	const hs_etl_header *h;
	hs_event_names namer;
	/* the catalog provider of the last GUID looked up: records come in runs of one provider */
	hs_guid last_guid;
	bool have_last;
	const hs_provider *last_prov;
	pid_name *names; /* pid -> image, from the kernel's process records and exits */
	size_t n_names, cap_names;
	uint64_t records;
} etl_walk;

/* The clock the times are on: the header's, unless it lacks the rate to convert it (then the reader keeps system
 * time, 100 ns since 1601). */
static uint32_t clock_in_use(const hs_etl_header *h)
{
	if (h->valid && ((h->clock_type == 1 && h->perf_freq) || (h->clock_type == 3 && h->cpu_mhz)))
		return h->clock_type;
	return 2;
}

static const char *clock_name(const hs_etl_header *h, char *buf, size_t cap)
{
	if (!h->valid)
		return "system time (100 ns since 1601; the file has no logfile header)";
	return hs_etw_clock_name(clock_in_use(h), buf, cap);
}

static void remember_name(etl_walk *w, uint32_t pid, const char *name)
{
	if (!name || !name[0] || pid == 0 || pid == UINT32_MAX)
		return;
	for (size_t i = 0; i < w->n_names; i++)
		if (w->names[i].pid == pid) {
			snprintf(w->names[i].name, sizeof w->names[i].name, "%s", name);
			return;
		}
	if (w->n_names >= HS_REPORT_ETL_MAX_NAMES)
		return;
	pid_name *v = hs_array_grow(w->names, sizeof *v, w->n_names, &w->cap_names, 64);
	if (!v) {
		w->r->oom = true;
		return;
	}
	w->names = v;
	w->names[w->n_names].pid = pid;
	hs_utf8_clean(name, w->names[w->n_names].name, sizeof w->names[w->n_names].name);
	w->n_names++;
}

static const hs_provider *provider_of(etl_walk *w, const hs_guid *g)
{
	if (!w->rules)
		return NULL;
	if (w->have_last && !memcmp(&w->last_guid, g, sizeof *g))
		return w->last_prov;
	w->last_guid = *g;
	w->have_last = true;
	w->last_prov = hs_event_find_provider_guid(w->rules, g);
	return w->last_prov;
}

/* A slot for a kept event with its names, or NULL past the cap. */
static hs_rpt_event *keep(etl_walk *w, const hs_etl_record *rec)
{
	hs_rpt_event *e = hs_rpt_event_slot(w->r);
	if (!e)
		return NULL;
	e->ts = hs_etl_clock_ns(w->h, rec->timestamp);
	e->cpu = rec->cpu;
	e->pid = rec->pid == UINT32_MAX ? -1 : (int)rec->pid;
	e->file = (int)w->fi;
	e->platform = HS_RPT_WINDOWS;
	snprintf(e->comm, sizeof e->comm, "?");
	/* names: the catalog's, else the trace's own (TraceLogging), else the kernel group or the numbers */
	hs_event ev;
	hs_event_from_etl(rec, &ev);
	hs_event_label lab;
	hs_event_names_label(&w->namer, &ev.key, ev.provider, ev.name, &lab);
	hs_utf8_clean(lab.provider, e->system, sizeof e->system);
	hs_utf8_clean(lab.event, e->name, sizeof e->name);
	if (lab.cat_event) {
		e->story = lab.cat_event->story;
		e->alert = lab.cat_event->alert;
	}
	if (rec->kind == HS_ETL_EVENT) {
		e->has_id = true;
		e->guid = rec->guid;
		e->id = rec->id;
		e->version = rec->version;
	}
	return e;
}

/* The longest run of printable UTF-16LE characters in a payload (a device instance path, an interface name):
 * the catalogs carry no field layouts for these events yet, and a name is most of what a reader wants. */
static void payload_text(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t best = 0, best_at = 0;
	for (size_t i = 0; i + 1 < n;) {
		size_t k = i;
		while (k + 1 < n && p[k + 1] == 0 && p[k] >= 0x20 && p[k] < 0x7f)
			k += 2;
		if ((k - i) / 2 > best) {
			best = (k - i) / 2;
			best_at = i;
		}
		i = k > i ? k : i + 1;
	}
	out[0] = '\0';
	if (best >= 4)
		hs_utf16le_to_utf8(p + best_at, best, out, cap, NULL, NULL);
}

/* A process exit, normalized: shape HS_DEC_EXIT, v0 its pid, v1 1 (the process ended), how it ended (an NTSTATUS
 * error is a crash); life_ns: how long it ran (ProcessStop's CreateTime to ExitTime), 0 when not known. */
static void exit_event(hs_rpt_event *e, uint32_t pid, uint32_t code, const char *image, uint64_t life_ns)
{
	const char *sname = hs_ntstatus_name(code);
	bool died = (code & 0xC0000000u) == 0xC0000000u && code != NT_CONTROL_C_EXIT;
	hs_utf8_clean(image && image[0] ? image : "?", e->subject, sizeof e->subject);
	e->shape = HS_DEC_EXIT;
	if (e->pid < 0) /* a rundown record's header names no process: the exit's own pid */
		e->pid = (int)pid;
	e->v[0] = pid;
	e->v[1] = 1;
	e->end = died ? HS_RPT_END_CRASH : HS_RPT_END_STATUS;
	e->end_code = code;
	if (code == NT_CONTROL_C_EXIT)
		snprintf(e->detail, sizeof e->detail,
			 "%s (pid %" PRIu32 ") exited with 0x%08" PRIX32
			 " STATUS_CONTROL_C_EXIT: Ctrl+C, or its console was closed",
			 e->subject, pid, code);
	else
		snprintf(e->detail, sizeof e->detail, "%s (pid %" PRIu32 ") %s 0x%08" PRIX32 "%s%s%s", e->subject, pid,
			 died ? "died of" : "exited with", code, sname ? " " : "", sname ? sname : "",
			 died ? " (an NTSTATUS error: the process crashed or was failed-fast)" : "");
	size_t l = strlen(e->detail);
	if (life_ns)
		snprintf(e->detail + l, sizeof e->detail - l, ", after running %.3f s", (double)life_ns / 1e9);
}

static int on_record(const hs_etl_record *rec, void *vctx)
{
	etl_walk *w = vctx;
	hs_report *r = w->r;
	hs_rpt_file *f = &r->files[w->fi];
	if (!(++w->records & 0xFFFF) && r->opts.progress) {
		size_t size = hs_etl_file_size(w->etl);
		r->opts.progress(r->opts.progress_ctx, f->name, size ? (double)rec->buffer_offset / (double)size : 0,
				 false);
	}
	if (hs_etl_kernel_header(rec))
		return 0; /* the logfile header and its companions: not events of the session */
	uint64_t ns = hs_etl_clock_ns(w->h, rec->timestamp);
	f->events++;
	if (ns < f->first_ns)
		f->first_ns = ns;
	if (ns > f->last_ns)
		f->last_ns = ns;
	if (rec->cpu < f->cpus) {
		if (!f->cpu_n[rec->cpu]++ || ns < f->cpu_first[rec->cpu])
			f->cpu_first[rec->cpu] = ns;
		if (ns > f->cpu_last[rec->cpu])
			f->cpu_last[rec->cpu] = ns;
	}
	/* the kernel's process records: names for pids, starts, exits with their status */
	if (hs_etlk_classify(rec) == HS_ETLK_PROCESS) {
		hs_etl_process p;
		if (!hs_etl_decode_process(rec, &p))
			return 0;
		remember_name(w, p.pid, p.image_file_name);
		if (p.opcode == HS_ETLK_OP_START) {
			hs_rpt_exec_seen(r, ns);
			hs_rpt_event *e = keep(w, rec);
			if (!e)
				return 0;
			e->shape = HS_DEC_EXEC;
			e->v[0] = p.pid;
			e->v[1] = p.parent_pid;
			hs_utf8_clean(p.image_file_name[0] ? p.image_file_name : "?", e->subject, sizeof e->subject);
			snprintf(e->detail, sizeof e->detail, "%s (pid %" PRIu32 ") started by pid %" PRIu32, e->subject,
				 p.pid, p.parent_pid);
			if (p.command_line[0]) {
				size_t l = strlen(e->detail);
				char cl[200];
				hs_utf8_clean(p.command_line, cl, sizeof cl);
				snprintf(e->detail + l, sizeof e->detail - l, ": %s", cl);
			}
			r->n_events++;
		} else if ((p.opcode == HS_ETLK_OP_END || p.opcode == HS_ETLK_OP_DEFUNCT) && p.version >= 1) {
			hs_rpt_event *e = keep(w, rec);
			if (!e)
				return 0;
			exit_event(e, p.pid, (uint32_t)p.exit_status, p.image_file_name, 0);
			r->n_events++;
		}
		return 0;
	}
	if (rec->kind != HS_ETL_EVENT)
		return 0;
	const hs_provider *prov = provider_of(w, &rec->guid);
	const hs_cat_event *ce = prov ? hs_provider_find_event(prov, rec->id, NULL) : NULL;
	if (!ce || (!ce->alert && ce->means != HS_MEANS_PROCESS_EXIT && ce->means != HS_MEANS_MARKER))
		return 0;
	if (ce->means == HS_MEANS_PROCESS_EXIT) {
		hs_etl_process_stop x;
		if (!hs_etl_decode_process_stop(rec, &x))
			return 0;
		remember_name(w, x.pid, x.image_name);
		hs_rpt_event *e = keep(w, rec);
		if (!e)
			return 0;
		exit_event(e, x.pid, x.exit_code, x.image_name,
			   x.create_time && x.exit_time > x.create_time ? (x.exit_time - x.create_time) * 100u : 0);
		r->n_events++;
		return 0;
	}
	hs_rpt_event *e = keep(w, rec);
	if (!e)
		return 0;
	if (ce->means == HS_MEANS_MARKER) {
		/* a string-only event: the payload is the UTF-16 text */
		e->shape = HS_DEC_MARKER;
		e->marker_text = true;
		char text[sizeof e->detail];
		hs_utf16le_to_utf8(rec->payload, rec->payload_len / 2, text, sizeof text, NULL, NULL);
		hs_utf8_clean(text, e->detail, sizeof e->detail);
	} else {
		/* the shape the alert tag gives (hang, io-error, disconnect, or another alert): the event layer's */
		hs_event ev;
		hs_event_from_etl(rec, &ev);
		e->shape = hs_event_decode_kind(&ev, e->alert);
		char text[160];
		payload_text(rec->payload, rec->payload_len, text, sizeof text);
		snprintf(e->detail, sizeof e->detail, "%s in pid %d%s%s%s", e->alert, e->pid,
			 text[0] ? "; the payload names \"" : "", text, text[0] ? "\"" : "");
	}
	r->n_events++;
	return 0;
}

/* What the header says about the session: its name, clock, mode, when it ran and what it lost. */
static void header_notes(hs_report *r, hs_rpt_file *f, const hs_etl *etl, const hs_etl_header *h)
{
	if (!h->valid) {
		hs_rpt_file_note(r, f, "no logfile header: times are the records' raw clock read as system time");
		return;
	}
	char a[80], b[80], cb[24];
	hs_etl_filetime_text(h->start_time, a, sizeof a);
	hs_etl_filetime_text(h->end_time, b, sizeof b);
	hs_rpt_file_note(r, f,
			 "session \"%s\" on %" PRIu32 " CPU%s, Windows build %" PRIu32 ", %s clock; header start %s, "
			 "end %s",
			 h->logger_name[0] ? h->logger_name : "(unnamed)", h->cpus, h->cpus == 1 ? "" : "s",
			 h->provider_version, clock_name(h, cb, sizeof cb), a, b);
	/* EVENT_TRACE_FILE_MODE_CIRCULAR (0x2): the file holds the newest buffers only */
	if (h->log_file_mode & 0x2)
		hs_rpt_file_note(r, f,
				 "circular file: when full the session overwrote its oldest buffers, so it holds only "
				 "the newest part of the session");
	size_t flagged = hs_etl_lost_flagged_buffers(etl);
	if (h->events_lost || h->buffers_lost || flagged)
		hs_rpt_file_note(r, f,
				 "LOST (ETW header): %" PRIu32 " events lost, %" PRIu32
				 " buffers lost; %zu buffers flagged with losses",
				 h->events_lost, h->buffers_lost, flagged);
	else
		hs_rpt_file_note(r, f, "lost events: none (ETW header EventsLost 0, BuffersLost 0, no buffer flagged)");
	hs_rpt_file_note(r, f, "%zu buffers of %" PRIu32 " bytes", hs_etl_buffer_count(etl), h->buffer_size);
}

void hs_rpt_walk_etl(hs_report *r, size_t fi, const hs_ruleset *rules)
{
	hs_rpt_file *f = &r->files[fi];
	f->first_ns = UINT64_MAX;
	f->etl = true;
	hs_etl *etl = NULL;
	hs_status st = hs_etl_open(f->path, &etl);
	if (st != HS_OK) {
		hs_rpt_file_unreadable(r, f, etl && hs_etl_problem_count(etl) ? hs_etl_problem_at(etl, 0) : NULL, st);
		hs_etl_close(etl);
		return;
	}
	f->opened = true;
	r->platforms |= HS_RPT_WINDOWS;
	const hs_etl_header *h = hs_etl_get_header(etl);
	char cb[24];
	if (!r->clock[0])
		snprintf(r->clock, sizeof r->clock, "%s", hs_etw_clock_name(clock_in_use(h), cb, sizeof cb));
	unsigned cpus = h->valid && h->cpus ? h->cpus : 1;
	for (size_t b = 0; b < hs_etl_buffer_count(etl); b++)
		if (hs_etl_buffer_at(etl, b)->cpu >= cpus && hs_etl_buffer_at(etl, b)->cpu < HS_REPORT_ETL_MAX_CPUS)
			cpus = hs_etl_buffer_at(etl, b)->cpu + 1u;
	f->cpus = cpus > HS_REPORT_ETL_MAX_CPUS ? HS_REPORT_ETL_MAX_CPUS : cpus;
	f->cpu_first = calloc(f->cpus, sizeof(uint64_t));
	f->cpu_last = calloc(f->cpus, sizeof(uint64_t));
	f->cpu_n = calloc(f->cpus, sizeof(uint64_t));
	f->cpu_missed = calloc(f->cpus, sizeof(uint64_t));
	if (!f->cpu_first || !f->cpu_last || !f->cpu_n || !f->cpu_missed) {
		hs_rpt_file_problem(r, f, "", "out of memory");
		r->damaged = true;
		r->oom = true;
		f->cpus = 0;
		hs_etl_close(etl);
		return;
	}
	if (h->valid)
		f->missed = h->events_lost;
	etl_walk w = {.r = r, .fi = fi, .rules = rules, .etl = etl, .h = h};
	w.namer.rules = rules;
	size_t first_event = r->n_events;
	hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_record, &w);
	if (r->opts.progress)
		r->opts.progress(r->opts.progress_ctx, f->name, 1.0, true);
	/* the image names of pids whose events came before their process record said it */
	for (size_t i = first_event; i < r->n_events; i++) {
		hs_rpt_event *e = &r->events[i];
		uint32_t pid = e->shape == HS_DEC_EXIT || e->shape == HS_DEC_EXEC ? (uint32_t)e->v[0] : (uint32_t)e->pid;
		for (size_t k = 0; k < w.n_names; k++)
			if (w.names[k].pid == pid) {
				snprintf(e->comm, sizeof e->comm, "%s", w.names[k].name);
				break;
			}
	}
	header_notes(r, f, etl, h);
	size_t n = hs_etl_problem_count(etl);
	for (size_t i = 0; i < n; i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		hs_rpt_file_problem(r, f, "", hs_problem_format(hs_etl_problem_at(etl, i), text, sizeof text));
	}
	if (n)
		r->damaged = true;
	if (!f->events)
		f->first_ns = f->last_ns = 0;
	free(w.names);
	hs_etl_close(etl);
}
