/* analyze/report_etl.c: `analyze report` on Windows .etl files: coverage, the events the catalogs give a meaning (exits, alerts, the marker), their findings, and the WPA Regions of Interest file. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/event.h"
#include "hindsight/event_names.h"
#include "hindsight/limits.h"
#include "hindsight/text.h"
#include "report.h"

/* The caps and their reasons: hindsight/limits.h (HS_REPORT_*). */
enum {
	ETL_MAX_KEPT = HS_REPORT_MAX_KEPT,
	ETL_MAX_CPUS = HS_REPORT_ETL_MAX_CPUS,
	ETL_MAX_NAMES = HS_REPORT_ETL_MAX_NAMES,
};

/* The NTSTATUS a console's Ctrl+C or closed window ends a process with: an error by its severity bits, not a
 * crash (hs_ntstatus_name spells it). */
#define NT_CONTROL_C_EXIT 0xC000013Au

bool rpt_etl_is_etl(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	/* a trace.dat named .etl is read as what it is */
	return n > 4 && (strcmp(path + n - 4, ".etl") == 0 || strcmp(path + n - 4, ".ETL") == 0) &&
	       !hs_tracedat_sniff(path);
}

typedef struct {
	uint32_t pid;
	char name[32];
} pid_name;

typedef struct {
	rpt *r;
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
} etl_walk;

/* The session clock in ns, as the engine's real-time consumer computes it (hs_etw_event_ns), so snapshot.json's
 * hit times and the marker's "hit at" line are on the same scale: QPC ticks, CPU cycles, or 100 ns of system time. */
static uint64_t etl_ns(const hs_etl_header *h, int64_t ts)
{
	if (ts < 0)
		return 0;
	uint64_t t = (uint64_t)ts, f = 0;
	if (h->valid && h->clock_type == 1)
		f = h->perf_freq;
	else if (h->valid && h->clock_type == 3)
		f = (uint64_t)h->cpu_mhz * 1000000u;
	if (!f)
		return t * 100u;
	/* split so that t * 1e9 cannot overflow (f below 1.8e10 Hz) */
	return (t / f) * 1000000000ull + (t % f) * 1000000000ull / f;
}

static const char *clock_name(const hs_etl_header *h)
{
	if (!h->valid)
		return "system time (100 ns since 1601; the file has no logfile header)";
	switch (h->clock_type) {
	case 1: return h->perf_freq ? "QPC" : "system time";
	case 3: return h->cpu_mhz ? "CPU cycle" : "system time";
	default: return "system time";
	}
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
	if (w->n_names >= ETL_MAX_NAMES)
		return;
	if (w->n_names == w->cap_names) {
		size_t cap = w->cap_names ? w->cap_names * 2 : 64;
		pid_name *v = realloc(w->names, cap * sizeof *v);
		if (!v)
			return;
		w->names = v;
		w->cap_names = cap;
	}
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

/* A slot for a kept event, or NULL past the cap. */
static rpt_event *keep(etl_walk *w, const hs_etl_record *rec)
{
	rpt *r = w->r;
	if (r->n_events >= ETL_MAX_KEPT) {
		r->events_not_kept++;
		return NULL;
	}
	if (r->n_events == r->cap_events) {
		size_t cap = r->cap_events ? r->cap_events * 2 : 256;
		rpt_event *v = realloc(r->events, cap * sizeof *v);
		if (!v) {
			r->events_not_kept++;
			return NULL;
		}
		r->events = v;
		r->cap_events = cap;
	}
	rpt_event *e = &r->events[r->n_events];
	memset(e, 0, sizeof *e);
	e->ts = etl_ns(w->h, rec->timestamp);
	e->cpu = rec->cpu;
	e->pid = rec->pid == UINT32_MAX ? -1 : (int)rec->pid;
	e->file = (int)w->fi;
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

/* life_ns: how long the process ran (ProcessStop's CreateTime to ExitTime), 0 when not known. */
static void exit_detail(rpt_event *e, uint32_t pid, uint32_t code, const char *image, uint64_t life_ns)
{
	const char *sname = hs_ntstatus_name(code);
	bool died = (code & 0xC0000000u) == 0xC0000000u && code != NT_CONTROL_C_EXIT;
	hs_utf8_clean(image && image[0] ? image : "?", e->subject, sizeof e->subject);
	e->wk = RPT_W_EXIT;
	if (e->pid < 0) /* a rundown record's header names no process: the exit's own pid */
		e->pid = (int)pid;
	e->v[0] = pid;
	e->v[1] = code;
	e->v[2] = died;
	if (code == NT_CONTROL_C_EXIT)
		snprintf(e->detail, sizeof e->detail, "%s (pid %" PRIu32 ") exited with 0x%08" PRIX32
			 " STATUS_CONTROL_C_EXIT: Ctrl+C, or its console was closed", e->subject, pid, code);
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
	rpt *r = w->r;
	rpt_file *f = &r->files[w->fi];
	analyze_progress(w->etl, rec);
	if (hs_etl_kernel_header(rec))
		return 0; /* the logfile header and its companions: not events of the session */
	uint64_t ns = etl_ns(w->h, rec->timestamp);
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
	/* the kernel's process records: names for pids, starts for storms, exits with their status */
	if (hs_etlk_classify(rec) == HS_ETLK_PROCESS) {
		hs_etl_process p;
		if (!hs_etl_decode_process(rec, &p))
			return 0;
		remember_name(w, p.pid, p.image_file_name);
		if (p.opcode == HS_ETLK_OP_START) {
			rpt_event *e = keep(w, rec);
			if (!e)
				return 0;
			e->wk = RPT_W_START;
			e->v[0] = p.pid;
			e->v[1] = p.parent_pid;
			hs_utf8_clean(p.image_file_name[0] ? p.image_file_name : "?", e->subject, sizeof e->subject);
			snprintf(e->detail, sizeof e->detail, "%s (pid %" PRIu32 ") started by pid %" PRIu32,
				 e->subject, p.pid, p.parent_pid);
			if (p.command_line[0]) {
				size_t l = strlen(e->detail);
				char cl[200];
				hs_utf8_clean(p.command_line, cl, sizeof cl);
				snprintf(e->detail + l, sizeof e->detail - l, ": %s", cl);
			}
			r->n_events++;
		} else if ((p.opcode == HS_ETLK_OP_END || p.opcode == HS_ETLK_OP_DEFUNCT) && p.version >= 1) {
			rpt_event *e = keep(w, rec);
			if (!e)
				return 0;
			exit_detail(e, p.pid, (uint32_t)p.exit_status, p.image_file_name, 0);
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
		rpt_event *e = keep(w, rec);
		if (!e)
			return 0;
		exit_detail(e, x.pid, x.exit_code, x.image_name,
			    x.create_time && x.exit_time > x.create_time ? (x.exit_time - x.create_time) * 100u : 0);
		r->n_events++;
		return 0;
	}
	rpt_event *e = keep(w, rec);
	if (!e)
		return 0;
	if (ce->means == HS_MEANS_MARKER) {
		/* a string-only event: the payload is the UTF-16 text */
		e->wk = RPT_W_MARKER;
		char text[sizeof e->detail];
		hs_utf16le_to_utf8(rec->payload, rec->payload_len / 2, text, sizeof text, NULL, NULL);
		hs_utf8_clean(text, e->detail, sizeof e->detail);
	} else {
		e->wk = RPT_W_ALERT;
		char text[160];
		payload_text(rec->payload, rec->payload_len, text, sizeof text);
		snprintf(e->detail, sizeof e->detail, "%s in pid %d%s%s%s", e->alert, e->pid,
			 text[0] ? "; the payload names \"" : "", text, text[0] ? "\"" : "");
	}
	r->n_events++;
	return 0;
}

/* What the header says about the session: its name, clock, mode, when it ran and what it lost. */
static void header_notes(rpt *r, rpt_file *f, const hs_etl *etl, const hs_etl_header *h)
{
	if (!h->valid) {
		rpt_file_note(f, "no logfile header: times are the records' raw clock read as system time");
		return;
	}
	char a[40], b[40];
	analyze_format_filetime(h->start_time, a, sizeof a);
	analyze_format_filetime(h->end_time, b, sizeof b);
	rpt_file_note(f, "session \"%s\" on %" PRIu32 " CPU%s, Windows build %" PRIu32 ", %s clock; header start %s, "
		      "end %s",
		      h->logger_name[0] ? h->logger_name : "(unnamed)", h->cpus, h->cpus == 1 ? "" : "s",
		      h->provider_version, clock_name(h), a, b);
	/* EVENT_TRACE_FILE_MODE_CIRCULAR (0x2): the file holds the newest buffers only */
	if (h->log_file_mode & 0x2)
		rpt_file_note(f, "circular file: when full the session overwrote its oldest buffers, so it holds only "
			      "the newest part of the session");
	size_t flagged = hs_etl_lost_flagged_buffers(etl);
	if (h->events_lost || h->buffers_lost || flagged)
		rpt_file_note(f, "LOST (ETW header): %" PRIu32 " events lost, %" PRIu32
			      " buffers lost; %zu buffers flagged with losses", h->events_lost, h->buffers_lost,
			      flagged);
	else
		rpt_file_note(f, "lost events: none (ETW header EventsLost 0, BuffersLost 0, no buffer flagged)");
	rpt_file_note(f, "%zu buffers of %" PRIu32 " bytes", hs_etl_buffer_count(etl), h->buffer_size);
	(void)r;
}

void rpt_etl_walk(rpt *r, size_t fi, const hs_ruleset *rules)
{
	rpt_file *f = &r->files[fi];
	f->first_ns = UINT64_MAX;
	f->etl = true;
	hs_etl *etl = NULL;
	hs_status st = hs_etl_open(f->path, &etl);
	if (st != HS_OK) {
		char text[HS_PROBLEM_TEXT_MAX] = "";
		if (etl && hs_etl_problem_count(etl))
			hs_problem_format(hs_etl_problem_at(etl, 0), text, sizeof text);
		rpt_file_problem(f, "cannot be read: ", text[0] ? text : hs_strerror(st));
		r->damaged = true;
		hs_etl_close(etl);
		return;
	}
	f->opened = true;
	const hs_etl_header *h = hs_etl_get_header(etl);
	if (!r->clock[0])
		snprintf(r->clock, sizeof r->clock, "%s", h->valid && h->clock_type == 1 && h->perf_freq ? "QPC"
							  : h->valid && h->clock_type == 3 && h->cpu_mhz ? "CPU cycle"
							  : "system time");
	unsigned cpus = h->valid && h->cpus ? h->cpus : 1;
	for (size_t b = 0; b < hs_etl_buffer_count(etl); b++)
		if (hs_etl_buffer_at(etl, b)->cpu >= cpus && hs_etl_buffer_at(etl, b)->cpu < ETL_MAX_CPUS)
			cpus = hs_etl_buffer_at(etl, b)->cpu + 1u;
	f->cpus = cpus > ETL_MAX_CPUS ? ETL_MAX_CPUS : cpus;
	f->cpu_first = calloc(f->cpus, sizeof(uint64_t));
	f->cpu_last = calloc(f->cpus, sizeof(uint64_t));
	f->cpu_n = calloc(f->cpus, sizeof(uint64_t));
	f->cpu_missed = calloc(f->cpus, sizeof(uint64_t));
	if (!f->cpu_first || !f->cpu_last || !f->cpu_n || !f->cpu_missed) {
		rpt_file_problem(f, "", "out of memory");
		r->damaged = true;
		f->cpus = 0;
		hs_etl_close(etl);
		return;
	}
	if (h->valid)
		f->missed = h->events_lost;
	etl_walk w = {.r = r, .fi = fi, .rules = rules, .etl = etl, .h = h};
	w.namer.rules = rules;
	w.namer.kernel_group_name = analyze_kernel_group_name;
	size_t first_event = r->n_events;
	hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_record, &w);
	analyze_progress_done();
	/* the image names of pids whose events came before their process record said it */
	for (size_t i = first_event; i < r->n_events; i++) {
		rpt_event *e = &r->events[i];
		uint32_t pid = e->wk == RPT_W_EXIT || e->wk == RPT_W_START ? (uint32_t)e->v[0] : (uint32_t)e->pid;
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
		rpt_file_problem(f, "", hs_problem_format(hs_etl_problem_at(etl, i), text, sizeof text));
	}
	if (n)
		r->damaged = true;
	if (!f->events)
		f->first_ns = f->last_ns = 0;
	free(w.names);
	hs_etl_close(etl);
}

void rpt_etl_settle(rpt *r)
{
	/* One exit seen twice (the kernel's process record and Kernel-Process ProcessStop, or two sessions): the
	 * manifest one stays (WPA's regions can name it). */
	size_t o = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		rpt_event *e = &r->events[i];
		bool dup = false;
		for (size_t k = o; e->wk == RPT_W_EXIT && k-- > 0 && e->ts - r->events[k].ts < 100000000u && !dup;) {
			rpt_event *p = &r->events[k];
			if (p->wk == RPT_W_EXIT && p->v[0] == e->v[0] && p->v[1] == e->v[1]) {
				dup = true;
				/* the order stays: the copy keeps the first one's time */
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
	for (size_t i = 0; i < r->n_events; i++) {
		rpt_event *e = &r->events[i];
		switch (e->wk) {
		case RPT_W_EXIT: e->lane = e->v[2] ? LANE_CRASH : LANE_PROCESS; break;
		case RPT_W_START: e->lane = LANE_PROCESS; break;
		case RPT_W_ALERT:
			e->lane = e->alert && !strcmp(e->alert, "disconnect")       ? LANE_NET
				  : e->alert && !strcmp(e->alert, "device-removed") ? LANE_IO
										    : LANE_OTHER;
			break;
		case RPT_W_MARKER: e->lane = LANE_OTHER; break;
		default: break;
		}
	}
}

/* ---- findings ---- */

static void rel_ms(uint64_t a, uint64_t b, char *buf, size_t cap)
{
	double ms = ((double)b - (double)a) / 1e6;
	if (ms > -1000 && ms < 1000)
		snprintf(buf, cap, "%.0f ms", ms < 0 ? -ms : ms);
	else
		snprintf(buf, cap, "%.1f s", (ms < 0 ? -ms : ms) / 1e3);
}

/* The alert event nearest before event i (within 10 s), or SIZE_MAX: a crash after a GPU reset or a device removal
 * is probably its consequence. */
static size_t alert_before(const rpt *r, size_t i)
{
	for (size_t j = i; j-- > 0 && r->events[i].ts - r->events[j].ts < 10000000000ull;)
		if (r->events[j].wk == RPT_W_ALERT && r->events[j].file == r->events[i].file)
			return j;
	return SIZE_MAX;
}

static void find_exits(rpt *r)
{
	rpt_finding *bad = NULL;
	size_t n_bad = 0, n_exit = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->wk != RPT_W_EXIT)
			continue;
		n_exit++;
		uint32_t code = (uint32_t)e->v[1];
		char when[32];
		rpt_fmt_ts(e->ts, when, sizeof when);
		if (!e->v[2]) {
			if (!code)
				continue;
			/* non-zero statuses: the program's own report of a failure, or a kill (TerminateProcess) */
			if (!bad) {
				bad = rpt_new_finding(r, "exit-status", 20, e->ts, (int)e->v[0]);
				if (!bad)
					return;
				snprintf(bad->title, sizeof bad->title, "%s (pid %" PRId64 ") exited with 0x%08" PRIX32,
					 e->subject, e->v[0], code);
				snprintf(bad->verdict, sizeof bad->verdict,
					 "No crash, GPU reset, device removal or disconnect in this window; at %s s "
					 "%s.",
					 when, e->detail);
				snprintf(bad->text, sizeof bad->text,
					 "A non-zero exit status is the program's own report of a failure; 1 is also "
					 "what TerminateProcess gives by default, and 0xC000013A a Ctrl+C or a closed "
					 "console.");
				snprintf(bad->next, sizeof bad->next,
					 "the program's own log for what its status means; who ended it (a parent, a "
					 "service manager, an updater)");
			} else if (n_bad < 12) {
				rpt_add_note(bad, "also: %s", e->detail);
			}
			n_bad++;
			if (bad->n_ev < 8)
				rpt_add_ev(bad, i);
			continue;
		}
		/* one finding per image and status: repeats are notes */
		rpt_finding *same = NULL;
		for (size_t k = 0; k < r->n_findings; k++) {
			rpt_finding *g = &r->findings[k];
			if (!strcmp(g->kind, "crash") && g->n_ev && r->events[g->ev[0]].wk == RPT_W_EXIT &&
			    !strcmp(r->events[g->ev[0]].subject, e->subject) && r->events[g->ev[0]].v[1] == e->v[1])
				same = g;
		}
		if (same) {
			same->impact += same->impact < 99;
			rpt_add_note(same, "again: %s (pid %" PRId64 ") at %s s", e->subject, e->v[0], when);
			continue;
		}
		rpt_finding *f = rpt_new_finding(r, "crash", 100, e->ts, (int)e->v[0]);
		if (!f)
			return;
		rpt_add_ev(f, i);
		const char *sname = hs_ntstatus_name(code);
		char after[300] = "";
		size_t a = alert_before(r, i);
		if (a != SIZE_MAX) {
			char d[32];
			rel_ms(r->events[a].ts, e->ts, d, sizeof d);
			rpt_add_ev(f, a);
			snprintf(after, sizeof after, "; %s after %s/%s (%s)", d, r->events[a].system,
				 r->events[a].name, r->events[a].alert);
		}
		/* its start, when the file has it */
		for (size_t j = i; j-- > 0;)
			if (r->events[j].wk == RPT_W_START && r->events[j].v[0] == e->v[0] &&
			    r->events[j].file == e->file) {
				rpt_add_ev(f, j);
				break;
			}
		snprintf(f->verdict, sizeof f->verdict,
			 "%s (pid %" PRId64 ") crashed with exit status 0x%08" PRIX32 "%s%s at %s s%s.", e->subject,
			 e->v[0], code, sname ? " " : "", sname ? sname : "", when, after);
		snprintf(f->title, sizeof f->title, "Crash: %s (pid %" PRId64 ") died of 0x%08" PRIX32 "%s%s",
			 e->subject, e->v[0], code, sname ? " " : "", sname ? sname : "");
		snprintf(f->text, sizeof f->text,
			 "The process ended with an NTSTATUS error code (severity 3, 0xC...) as its exit status: "
			 "Windows ended it for an unhandled exception%s, or it failed itself fast.",
			 code == 0xC0000005u   ? " (an access violation: a bad pointer)"
			 : code == 0xC0000409u ? " (a detected stack buffer overrun or fail-fast)"
			 : code == 0xC00000FDu ? " (a stack overflow)"
					       : "");
		snprintf(f->next, sizeof f->next,
			 "the crash dump (WER: %%LOCALAPPDATA%%\\CrashDumps, or the Application event log's "
			 "Application Error 1000 entry for %s with the faulting module and offset); what it did just "
			 "before (the ring's CPU samples and context switches for pid %" PRId64 ")",
			 e->subject, e->v[0]);
	}
	if (bad && n_bad > 1) {
		char t[sizeof bad->title + 64];
		snprintf(t, sizeof t, "%s, and %zu more non-zero exit%s", bad->title, n_bad - 1, n_bad == 2 ? "" : "s");
		snprintf(bad->title, sizeof bad->title, "%.*s", (int)(sizeof bad->title - 1), t);
	}
	(void)n_exit;
}

typedef struct {
	const char *alert, *kind;
	int impact;
	const char *what, *next;
} alert_kind;

/* What each catalog alert tag means for a report (the tags are the catalogs' vocabulary, hs_alert_names). */
static const alert_kind alert_kinds[] = {
	{"gpu-reset", "gpu-reset", 90, "GPU reset (TDR)",
	 "the display driver's version and the GPU's temperature and clocks; the Application and System event logs' "
	 "Display 4101 entries; the app that was presenting when the engine stopped (its Present events in the ring)"},
	{"device-removed", "device-removed", 80, "device removal",
	 "which device it was (the instance path in the payload; Device Manager's hidden devices), its cable, hub "
	 "and power; the System log's Kernel-PnP entries"},
	{"disconnect", "disconnect", 60, "connection abort",
	 "which side gave up and why: a local abort (the app or a firewall) or a retransmit timeout (the path or "
	 "the peer vanished); the adapter's state at the time (its link and power events)"},
	{NULL, "alert", 75, "catalog alert event", "the events' stories below and the catalog entry for them"},
};

static void find_alerts(rpt *r)
{
	for (size_t a = 0; a < sizeof alert_kinds / sizeof alert_kinds[0]; a++) {
		const alert_kind *k = &alert_kinds[a];
		rpt_finding *f = NULL;
		size_t n = 0, first = SIZE_MAX;
		for (size_t i = 0; i < r->n_events; i++) {
			const rpt_event *e = &r->events[i];
			if (e->wk != RPT_W_ALERT || !e->alert)
				continue;
			bool known = false;
			for (size_t b = 0; alert_kinds[b].alert; b++)
				known |= !strcmp(alert_kinds[b].alert, e->alert);
			if (k->alert ? strcmp(k->alert, e->alert) != 0 : known)
				continue;
			if (!f) {
				f = rpt_new_finding(r, k->kind, k->impact, e->ts, e->pid);
				if (!f)
					return;
				first = i;
				snprintf(f->next, sizeof f->next, "%s", k->next);
			}
			rpt_add_ev(f, i);
			n++;
		}
		if (!f)
			continue;
		const rpt_event *e = &r->events[first];
		char when[32];
		rpt_fmt_ts(e->ts, when, sizeof when);
		snprintf(f->title, sizeof f->title, "%zu %s event%s: %s/%s first", n, k->what, n == 1 ? "" : "s",
			 e->system, e->name);
		if (!strcmp(k->kind, "gpu-reset"))
			snprintf(f->verdict, sizeof f->verdict,
				 "The GPU was reset (a TDR: timeout detection and recovery) at %s s: %s/%s%s%s; %zu "
				 "event%s of the reset in all.",
				 when, e->system, e->name, e->pid > 4 ? " in " : "", e->pid > 4 ? e->comm : "", n,
				 n == 1 ? "" : "s");
		else if (!strcmp(k->kind, "device-removed"))
			snprintf(f->verdict, sizeof f->verdict,
				 "A device was removed at %s s: %s/%s, %s; %zu removal event%s.", when, e->system,
				 e->name, e->detail, n, n == 1 ? "" : "s");
		else if (!strcmp(k->kind, "disconnect"))
			snprintf(f->verdict, sizeof f->verdict,
				 "A TCP connection was aborted at %s s: %s/%s (pid %d%s%s); %zu abort%s in all.", when,
				 e->system, e->name, e->pid, strcmp(e->comm, "?") ? ", " : "",
				 strcmp(e->comm, "?") ? e->comm : "", n, n == 1 ? "" : "s");
		else
			snprintf(f->verdict, sizeof f->verdict, "%zu catalog alert event%s, the first at %s s: %s.", n,
				 n == 1 ? "" : "s", when, e->detail);
		snprintf(f->text, sizeof f->text, "%s%s", e->story ? e->story : e->detail,
			 n > 1 ? " (the first; the others are below)" : "");
	}
}

/* The engine's marker: "hindsight: trigger NAME fired; snapshot NNN; hit at X ns, detected at Y ns, H hits". A
 * single .etl has no snapshot.json: its trigger is what the marker says. */
static void find_marker(rpt *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->wk != RPT_W_MARKER)
			continue;
		rpt_finding *f = rpt_new_finding(r, "trigger", 30, e->ts, e->pid);
		if (!f)
			return;
		rpt_add_ev(f, i);
		char when[32], name[64] = "";
		unsigned snap = 0;
		unsigned long long hit = 0, det = 0, hits = 0;
		rpt_fmt_ts(e->ts, when, sizeof when);
		int got = sscanf(e->detail,
				 "hindsight: trigger %63s fired; snapshot %u; hit at %llu ns, detected at %llu ns, "
				 "%llu hits",
				 name, &snap, &hit, &det, &hits);
		snprintf(f->title, sizeof f->title, "hindsight's marker: %s", got >= 2 ? name : "a snapshot was taken");
		snprintf(f->verdict, sizeof f->verdict, "hindsight marked the moment at %s s: %s.", when, e->detail);
		snprintf(f->text, sizeof f->text,
			 "The engine writes this marker into every session just before it takes a snapshot; the events "
			 "before it are what the trigger caught. %s",
			 e->detail);
		snprintf(f->next, sizeof f->next, "the findings above it; in WPA, the regions file marks this moment");
		if (r->has_trigger || got < 2)
			continue;
		/* the marker's clock is the session's, as etl_ns reads it: the hit is used when it lies in the file */
		const rpt_file *fl = &r->files[e->file];
		r->has_trigger = r->trigger_from_marker = true;
		snprintf(r->trig_name, sizeof r->trig_name, "%s", name);
		snprintf(r->trig_kind, sizeof r->trig_kind, "from the marker");
		r->snapshot_no = snap;
		r->hits = (int64_t)hits;
		r->hit_pid = -1;
		bool in_file = got >= 3 && hit >= fl->first_ns && hit <= fl->last_ns + 1000000000ull;
		r->first_hit_ns = in_file ? hit : e->ts;
		r->hit_ts = r->first_hit_ns;
		r->detect_ms = got >= 4 && det >= hit ? (double)(det - hit) / 1e6 : 0;
	}
}

void rpt_etl_findings(rpt *r)
{
	bool any = false;
	for (size_t i = 0; i < r->n_files && !any; i++)
		any = r->files[i].etl;
	if (!any)
		return;
	find_marker(r);
	find_exits(r);
	find_alerts(r);
	/* storms: the starts the kernel's process records give (the only process start a decoder reads) */
	uint64_t *starts = calloc(r->n_events + 1, sizeof *starts);
	size_t n_st = 0;
	for (size_t i = 0; starts && i < r->n_events; i++)
		if (r->events[i].wk == RPT_W_START)
			starts[n_st++] = r->events[i].ts;
	if (starts)
		rpt_find_storm(r, starts, n_st);
	free(starts);
	/* what was read, when nothing else is found: exits by image */
	size_t n_exit = 0, n_start = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		n_exit += r->events[i].wk == RPT_W_EXIT;
		n_start += r->events[i].wk == RPT_W_START;
	}
	if (!n_exit && !n_start)
		return;
	rpt_finding *f = rpt_new_finding(r, "activity", 5, r->win_first, -1);
	if (!f)
		return;
	snprintf(f->title, sizeof f->title, "%zu process start%s and %zu exit%s in the window", n_start,
		 n_start == 1 ? "" : "s", n_exit, n_exit == 1 ? "" : "s");
	snprintf(f->verdict, sizeof f->verdict,
		 "Nothing went wrong that this report recognises: no crash exit, GPU reset, device removal or "
		 "disconnect in the window; %zu process%s started and %zu exited.",
		 n_start, n_start == 1 ? "" : "es", n_exit);
	snprintf(f->text, sizeof f->text, "Process exits, grouped by image and status.");
	snprintf(f->next, sizeof f->next, "nothing here points at a fault; analyze summary lists everything recorded");
	struct {
		const char *img;
		uint32_t code;
		size_t n, ev;
	} g[16];
	size_t ng = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const rpt_event *e = &r->events[i];
		if (e->wk != RPT_W_EXIT)
			continue;
		size_t k = 0;
		while (k < ng && (strcmp(g[k].img, e->subject) || g[k].code != (uint32_t)e->v[1]))
			k++;
		if (k == ng && ng < 16) {
			g[ng].img = e->subject;
			g[ng].code = (uint32_t)e->v[1];
			g[ng].n = 0;
			g[ng].ev = i;
			ng++;
		}
		if (k < ng)
			g[k].n++;
	}
	for (size_t k = 0; k < ng; k++) {
		rpt_add_note(f, "%zu x %s exited with 0x%08" PRIX32, g[k].n, g[k].img, g[k].code);
		rpt_add_ev(f, g[k].ev);
	}
}

/* ---- WPA Regions of Interest ---- */


/* A region GUID that is the same for the same file, region and event: FNV-1a over them, shaped as a GUID
 * (version-4 and variant bits set), so two reports of one trace give one regions file. */
static void region_guid(const char *file, const char *what, size_t n, char out[40])
{
	uint64_t h1 = 1469598103934665603ull, h2 = 1099511628211ull * 31u;
	const char *parts[2] = {file, what};
	for (int p = 0; p < 2; p++)
		for (const char *s = parts[p]; *s; s++) {
			h1 = (h1 ^ (uint8_t)*s) * 1099511628211ull;
			h2 = (h2 ^ (uint8_t)*s) * 1099511628211ull + 0x9e3779b97f4a7c15ull;
		}
	h1 ^= n * 0x9e3779b97f4a7c15ull;
	h2 ^= n;
	snprintf(out, 40, "{%08" PRIX32 "-%04" PRIX32 "-4%03" PRIX32 "-%04" PRIX32 "-%012" PRIX64 "}",
		 (uint32_t)(h1 >> 32), (uint32_t)(h1 >> 16) & 0xffffu, (uint32_t)h1 & 0xfffu,
		 (uint32_t)(0x8000u | ((h2 >> 48) & 0x3fffu)), (uint64_t)(h2 & 0xffffffffffffu));
}

static void xml_event(hs_strbuf *sb, const rpt_event *e)
{
	char g[37];
	hs_guid_format(&e->guid, g);
	hs_sb_printf(sb, "            <Event Provider=\"{%s}\" Id=\"%u\" Version=\"%u\" />\n", g, e->id, e->version);
}

/* One event-based region: from the start event's kind to the stop event's (WPA matches by provider, id and
 * version: every occurrence in the trace is marked, not only this one). */
static void xml_region(hs_strbuf *sb, const char *file, size_t n, const char *name, const char *friendly,
		       const rpt_event *start, const rpt_event *stop)
{
	char g[40];
	region_guid(file, name, n, g);
	hs_sb_printf(sb, "        <Region Guid=\"%s\" Name=\"", g);
	rpt_markup_esc(sb, name);
	hs_sb_append(sb, "\" FriendlyName=\"");
	rpt_markup_esc(sb, friendly);
	hs_sb_append(sb, "\">\n          <Start>\n");
	xml_event(sb, start);
	hs_sb_append(sb, "          </Start>\n          <Stop>\n");
	xml_event(sb, stop);
	hs_sb_append(sb, "          </Stop>\n        </Region>\n");
}

int rpt_etl_write_regions(rpt *r)
{
	int rc = 0;
	for (size_t fi = 0; fi < r->n_files && r->n_regions < sizeof r->regions / sizeof r->regions[0]; fi++) {
		const rpt_file *fl = &r->files[fi];
		if (!fl->etl || !fl->opened)
			continue;
		hs_strbuf sb = {0};
		hs_sb_append(&sb, "<?xml version='1.0' encoding='utf-8' standalone='yes'?>\n"
				  "<!-- hindsight regions: WPA Regions of Interest for ");
		/* a comment may not hold "--" */
		for (const char *s = fl->name; *s; s++)
			hs_sb_putc(&sb, s[0] == '-' && s[1] == '-' ? '_' : *s);
		hs_sb_append(&sb, ", written by analyze report (docs/report.md) -->\n<InstrumentationManifest>\n"
				  "  <Instrumentation>\n    <Regions>\n");
		char root[40];
		region_guid(fl->name, "root", 0, root);
		hs_sb_printf(&sb,
			     "      <RegionRoot Guid=\"%s\" Name=\"hindsight\" FriendlyName=\"hindsight report\">\n",
			     root);
		size_t n = 0;
		/* the moment: from the strongest finding's first event to the marker, or the marker alone */
		const rpt_event *marker = NULL;
		for (size_t i = 0; i < r->n_events && !marker; i++)
			if (r->events[i].wk == RPT_W_MARKER && r->events[i].file == (int)fi && r->events[i].has_id)
				marker = &r->events[i];
		const rpt_event *lead = NULL;
		for (size_t k = 0; k < r->n_findings && !lead; k++) {
			const rpt_finding *f = &r->findings[k];
			if (f->impact < 20 || !strcmp(f->kind, "trigger"))
				continue;
			for (size_t x = 0; x < f->n_ev && !lead; x++) {
				const rpt_event *e = &r->events[f->ev[x]];
				if (e->has_id && e->file == (int)fi && (!marker || e->ts <= marker->ts))
					lead = e;
			}
		}
		if (marker) {
			char fr[300];
			snprintf(fr, sizeof fr, "the moment: %s",
				 lead ? "from the finding's event to hindsight's marker" : "hindsight's marker");
			xml_region(&sb, fl->name, n++, "hindsight-Moment", fr, lead ? lead : marker, marker);
		}
		/* each finding: its first to its last event that WPA can match (manifest events) */
		for (size_t k = 0; k < r->n_findings; k++) {
			const rpt_finding *f = &r->findings[k];
			if (!strcmp(f->kind, "trigger") || f->impact < 20)
				continue; /* the marker has the moment's region; activity is no region of interest */
			const rpt_event *a = NULL, *b = NULL;
			for (size_t x = 0; x < f->n_ev; x++) {
				const rpt_event *e = &r->events[f->ev[x]];
				if (!e->has_id || e->file != (int)fi)
					continue;
				if (!a)
					a = e;
				b = e;
			}
			if (!a)
				continue;
			char name[160];
			snprintf(name, sizeof name, "hindsight-%s-%zu-%s-%s", f->kind, k + 1, a->system, a->name);
			/* the namer's " (id N)": the GUID and id are in the Event */
			char *paren = strstr(name, " (id ");
			if (paren)
				*paren = '\0';
			xml_region(&sb, fl->name, n++, name, f->title, a, b);
		}
		if (!n)
			hs_sb_append(&sb, "        <!-- no finding of this file has an event WPA can match (manifest "
					  "events only: a provider GUID and an id) -->\n");
		hs_sb_append(&sb,
			     "      </RegionRoot>\n    </Regions>\n  </Instrumentation>\n</InstrumentationManifest>\n");
		/* <name>.regions.xml: the trace's base name without its extension */
		char base[200];
		snprintf(base, sizeof base, "%s", fl->name);
		char *dot = strrchr(base, '.');
		if (dot && dot != base)
			*dot = '\0';
		char out[256];
		snprintf(out, sizeof out, "%s.regions.xml", base);
		int w = rpt_write_out(r->outdir, out, "<!-- hindsight regions", &sb);
		hs_sb_free(&sb);
		if (w) {
			rc = w;
			continue;
		}
		snprintf(r->regions[r->n_regions++], sizeof r->regions[0], "%s", out);
	}
	return rc;
}
