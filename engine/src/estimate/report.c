/* estimate/report.c: rates, file and ring projections from tallied traces, rendered as text or JSON. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/estimate_int.h"
#include "util/json.h"
#include "util/strbuf.h"

const uint64_t hs_estimate_ring_sizes_mb[] = {64, 128, 256, 512, 1024, 2048, 4096};
const size_t hs_estimate_n_ring_sizes = sizeof hs_estimate_ring_sizes_mb / sizeof hs_estimate_ring_sizes_mb[0];

/* Sizes count like the rules do: MB = 2^20 bytes (max_file_mb, ring_mb), GB = 2^30, TB = 2^40. */
static const double MB = 1048576.0, GB = 1073741824.0, TB = 1099511627776.0;
static const double DAY_S = 86400.0, YEAR_S = 365.0 * 86400.0;

/* ---- the numbers behind a session's report ---- */

typedef struct {
	const hs_estimate_session *s;
	const hs_estimate_trace *t;
	double window_s;       /* what the rates are over */
	bool window_is_recording;
	double span_s;         /* first to last event */
	bool wrapped;          /* live: the ring overwrote events, so the file covers less than the window */
	double history_s;      /* wrapped: how far back the file has every CPU's events */
	uint64_t lost;         /* events the backend or the file says were lost */
	bool loss_known;       /* the source can tell (live counters, ETL header, trace.dat page flags) */
	double events_per_s, bytes_per_s;
	double scale_bytes, scale_events; /* a kind's rate = its bytes (events) * scale */
	double *cpu_bytes_per_s; /* [t->n_cpu] */
	int busiest;           /* CPU with the highest byte rate, -1 none */
	double busiest_share;  /* its share of the bytes */
	bool can_project;
	char why_not[160];
	/* file projection */
	double mb_per_min, gb_per_day, tb_per_year, holds_s;
	double streamed_per_s, streamed_holds_s; /* live tracefs: ring pages taken */
} calc;

/* Seconds a store of `bytes` lasts at the measured rate: the whole rate for a
 * shared pool; per-CPU stores (split over n CPUs) fill at their own CPU's rate,
 * the busiest first. */
static double holds(const calc *c, double bytes, double total_rate)
{
	unsigned split = c->s->split_cpus;
	if (total_rate <= 0)
		return INFINITY;
	if (split > 1 && c->busiest >= 0 && c->busiest_share > 0)
		return (bytes / split) / (total_rate * c->busiest_share);
	return bytes / total_rate;
}

static void compute(const hs_estimate_session *s, calc *c)
{
	memset(c, 0, sizeof(*c));
	c->s = s;
	c->t = s->trace;
	c->busiest = -1;
	const hs_estimate_trace *t = s->trace;
	if (!t)
		return;
	c->span_s = t->has_span && t->last_ns > t->first_ns ? (double)(t->last_ns - t->first_ns) / 1e9 : 0.0;
	c->window_is_recording = s->window_s > 0;
	c->window_s = c->window_is_recording ? s->window_s : c->span_s;

	/* Losses: what the backend counted (live), else what the file says. */
	if (s->has_counters) {
		c->loss_known = true;
		c->lost = s->overrun + s->dropped + s->commit_overrun + s->pool_events_lost;
		c->wrapped = s->has_mode && s->mode == HS_MODE_BUFFERING &&
			     (s->overrun > 0 || (s->pool_buffers > 0 && s->pool_free_buffers == 0));
	} else if (t->format == HS_ESTIMATE_ETL) {
		c->loss_known = true;
		c->lost = t->etl_events_lost;
	} else {
		c->loss_known = true;
		c->lost = t->dat_missed_events;
	}

	/* A wrapped ring has each CPU's events from that CPU's first record on;
	 * all of them only from the latest of those firsts (per-CPU counts say
	 * which CPUs lost some; without them, the file's whole span). */
	c->history_s = c->span_s;
	if (c->wrapped && s->n_cpu_kernel && t->has_span) {
		uint64_t from = t->first_ns;
		for (unsigned i = 0; i < t->n_cpu && i < s->n_cpu_kernel; i++)
			if (t->cpu[i].events && s->cpu_kernel_events[i] > t->cpu[i].events && t->cpu[i].first_ns > from)
				from = t->cpu[i].first_ns;
		c->history_s = (double)(t->last_ns - from) / 1e9;
	}

	c->cpu_bytes_per_s = calloc(t->n_cpu + 1, sizeof(double));
	if (c->wrapped && s->n_cpu_kernel) {
		/* The ring kept only its newest part, but tracefs counted every
		 * event each CPU's ring took: rate = that count times the CPU's
		 * average record size in the file, over the recording. */
		double avg_all = t->events ? (double)t->bytes / (double)t->events : 0;
		double bytes = 0, events = 0;
		for (unsigned i = 0; i < s->n_cpu_kernel; i++) {
			const hs_estimate_cpu *cp = i < t->n_cpu ? &t->cpu[i] : NULL;
			double avg = cp && cp->events ? (double)cp->bytes / (double)cp->events : avg_all;
			double r = (double)s->cpu_kernel_events[i] * avg / c->window_s;
			if (c->cpu_bytes_per_s && i < t->n_cpu)
				c->cpu_bytes_per_s[i] = r;
			bytes += r;
			events += (double)s->cpu_kernel_events[i] / c->window_s;
		}
		c->bytes_per_s = bytes;
		c->events_per_s = events;
		c->scale_bytes = t->bytes ? bytes / (double)t->bytes : 0;
		c->scale_events = t->events ? events / (double)t->events : 0;
	} else if (c->wrapped) {
		/* ETW keeps no count of what a full ring overwrote: the rates are
		 * over the span the file covers, first to last event. */
		double w = c->span_s > 0 ? c->span_s : c->window_s;
		c->bytes_per_s = (double)t->bytes / w;
		c->events_per_s = (double)t->events / w;
		c->scale_bytes = c->scale_events = 1.0 / w;
		for (unsigned i = 0; c->cpu_bytes_per_s && i < t->n_cpu; i++)
			c->cpu_bytes_per_s[i] = (double)t->cpu[i].bytes / w;
	} else if (c->window_s <= 0) {
		/* No time span (fewer than two timed events): no rate at all. */
		c->bytes_per_s = c->events_per_s = c->scale_bytes = c->scale_events = NAN;
		for (unsigned i = 0; c->cpu_bytes_per_s && i < t->n_cpu; i++)
			c->cpu_bytes_per_s[i] = NAN;
	} else {
		c->bytes_per_s = (double)t->bytes / c->window_s;
		c->events_per_s = (double)t->events / c->window_s;
		c->scale_bytes = c->scale_events = 1.0 / c->window_s;
		for (unsigned i = 0; c->cpu_bytes_per_s && i < t->n_cpu; i++)
			c->cpu_bytes_per_s[i] = (double)t->cpu[i].bytes / c->window_s;
	}
	double best = 0;
	for (unsigned i = 0; c->cpu_bytes_per_s && i < t->n_cpu; i++)
		if (isfinite(c->cpu_bytes_per_s[i]) && c->cpu_bytes_per_s[i] > best) {
			best = c->cpu_bytes_per_s[i];
			c->busiest = (int)i;
		}
	c->busiest_share = c->bytes_per_s > 0 ? best / c->bytes_per_s : 0;

	if (c->window_s < HS_ESTIMATE_MIN_SECONDS)
		snprintf(c->why_not, sizeof c->why_not, "the capture covers %.3f s, less than the %.0f s a projection needs",
			 c->window_s, HS_ESTIMATE_MIN_SECONDS);
	else if (t->events < HS_ESTIMATE_MIN_EVENTS)
		snprintf(c->why_not, sizeof c->why_not, "the capture holds %" PRIu64 " event%s, fewer than the %u a projection needs",
			 t->events, t->events == 1 ? "" : "s", HS_ESTIMATE_MIN_EVENTS);
	else
		c->can_project = true;
	if (!c->can_project)
		return;
	c->mb_per_min = c->bytes_per_s * 60.0 / MB;
	c->gb_per_day = c->bytes_per_s * DAY_S / GB;
	c->tb_per_year = c->bytes_per_s * YEAR_S / TB;
	if (s->max_file_mb)
		c->holds_s = holds(c, (double)s->max_file_mb * MB, c->bytes_per_s);
	if (s->bytes_streamed && c->window_s > 0) {
		c->streamed_per_s = (double)s->bytes_streamed / c->window_s;
		if (s->max_file_mb)
			c->streamed_holds_s = holds(c, (double)s->max_file_mb * MB, c->streamed_per_s);
	}
}

static void release(calc *c)
{
	free(c->cpu_bytes_per_s);
	c->cpu_bytes_per_s = NULL;
}

/* ---- text helpers ---- */

static void fmt_bytes(char *buf, size_t cap, double b)
{
	if (b < 10e3)
		snprintf(buf, cap, "%.0f B", b);
	else if (b < 10.0 * MB)
		snprintf(buf, cap, "%.1f KB", b / 1024.0);
	else if (b < 10.0 * GB)
		snprintf(buf, cap, "%.1f MB", b / MB);
	else
		snprintf(buf, cap, "%.1f GB", b / GB);
}

static void fmt_rate(char *buf, size_t cap, double b)
{
	if (b < 10e3)
		snprintf(buf, cap, "%.1f B/s", b);
	else if (b < 10.0 * MB)
		snprintf(buf, cap, "%.1f KB/s", b / 1024.0);
	else
		snprintf(buf, cap, "%.1f MB/s", b / MB);
}

static void fmt_duration(char *buf, size_t cap, double s)
{
	if (!isfinite(s))
		snprintf(buf, cap, "forever (nothing was written)");
	else if (s < 120)
		snprintf(buf, cap, "%.1f s", s);
	else if (s < 120 * 60)
		snprintf(buf, cap, "%.1f min", s / 60);
	else if (s < 48 * 3600)
		snprintf(buf, cap, "%.1f h", s / 3600);
	else if (s < 2 * YEAR_S)
		snprintf(buf, cap, "%.1f days", s / DAY_S);
	else
		snprintf(buf, cap, "%.1f years", s / YEAR_S);
}

/* A rate column: "-" when there is no rate. */
static const char *num(char *buf, size_t cap, double v, int digits)
{
	if (isfinite(v))
		snprintf(buf, cap, "%.*f", digits, v);
	else
		snprintf(buf, cap, "-");
	return buf;
}

/* The format as JSON names it, and as the text says it. */
static const char *format_name(const hs_estimate_trace *t)
{
	return t->format == HS_ESTIMATE_TRACEDAT ? "tracedat" : "etl";
}

static const char *format_text(const hs_estimate_trace *t)
{
	return t->format == HS_ESTIMATE_TRACEDAT ? "trace-cmd format" : "ETW format";
}

/* Providers are runs of equal names in t->kinds. */
static size_t provider_run(const hs_estimate_trace *t, size_t i, uint64_t *events, uint64_t *bytes)
{
	size_t k = i;
	*events = *bytes = 0;
	for (; k < t->n_kinds && strcmp(t->kinds[k].provider, t->kinds[i].provider) == 0; k++) {
		*events += t->kinds[k].events;
		*bytes += t->kinds[k].bytes;
	}
	return k;
}

static void text_losses(hs_strbuf *sb, const hs_estimate_report *r, const calc *c)
{
	const hs_estimate_session *s = c->s;
	const hs_estimate_trace *t = c->t;
	if (s->has_counters && r->platform != HS_PLATFORM_WINDOWS) {
		hs_sb_printf(sb, "kernel:   counted %" PRIu64 " events; lost %" PRIu64 " (overwritten %" PRIu64
				 ", dropped %" PRIu64 ", commit overrun %" PRIu64 ")\n",
			     s->kernel_events, c->lost, s->overrun, s->dropped, s->commit_overrun);
	} else if (s->has_counters) {
		hs_sb_printf(sb, "kernel:   lost %" PRIu64 " events and %" PRIu64 " buffers", s->pool_events_lost,
			     s->pool_buffers_lost);
		if (s->pool_buffers)
			hs_sb_printf(sb, "; %" PRIu32 " of %" PRIu32 " buffers still free at the end", s->pool_free_buffers,
				     s->pool_buffers);
		hs_sb_putc(sb, '\n');
	} else if (t->format == HS_ESTIMATE_ETL) {
		hs_sb_printf(sb, "lost:     the logger counted %" PRIu64 " events and %" PRIu64 " buffers lost\n",
			     t->etl_events_lost, t->etl_buffers_lost);
	} else {
		hs_sb_printf(sb, "lost:     the ring pages say %" PRIu64 " events were lost", t->dat_missed_events);
		if (t->dat_missed_unknown)
			hs_sb_printf(sb, ", and %" PRIu64 " more times some (uncounted)", t->dat_missed_unknown);
		hs_sb_putc(sb, '\n');
	}
	if (c->wrapped && s->n_cpu_kernel)
		hs_sb_printf(sb, "          the ring wrapped: it kept every CPU's events for the newest %.2f s of the %.2f s "
				 "recorded (the oldest record is %.2f s old); the rates are the kernel's counts per CPU "
				 "times the file's average record size, over the recording\n",
			     c->history_s, c->window_s, c->span_s);
	else if (c->wrapped)
		hs_sb_printf(sb, "          the ring was full: the file covers its newest %.2f s of the %.2f s recorded, and "
				 "the rates are over that span\n",
			     c->span_s, c->window_s);
	else if (c->lost || (t->format == HS_ESTIMATE_TRACEDAT && !s->has_counters && t->dat_missed_unknown))
		hs_sb_append(sb, "          losses make the rates below an undercount\n");
}

static void text_session(hs_strbuf *sb, const hs_estimate_report *r, const hs_estimate_session *s)
{
	calc c;
	char b1[48], b2[48], b3[48];
	hs_sb_printf(sb, "\n== session %s", s->name ? s->name : "(no session of the rules)");
	if (s->has_mode)
		hs_sb_printf(sb, " (%s)", hs_mode_name(s->mode));
	hs_sb_printf(sb, ": %s ==\n", s->file ? s->file : "(no file)");
	if (!s->trace) {
		hs_sb_printf(sb, "not read: %s\n", hs_strerror(s->read_status));
		return;
	}
	compute(s, &c);
	const hs_estimate_trace *t = s->trace;
	fmt_bytes(b1, sizeof b1, (double)t->file_bytes);
	fmt_bytes(b2, sizeof b2, (double)t->bytes);
	hs_sb_printf(sb, "file:     %s, %s on disk; %" PRIu64 " events, %s of records\n", format_text(t), b1, t->events, b2);
	if (c.window_is_recording)
		hs_sb_printf(sb, "measured: over %.2f s of recording (events span %.3f s first to last)\n", c.window_s,
			     c.span_s);
	else
		hs_sb_printf(sb, "measured: over %.3f s, the first to the last event\n", c.window_s);
	fmt_rate(b1, sizeof b1, c.bytes_per_s);
	if (isfinite(c.bytes_per_s))
		hs_sb_printf(sb, "rate:     %.1f events/s, %s\n", c.events_per_s, b1);
	else
		hs_sb_append(sb, "rate:     none: the events have no time span (fewer than two with a time)\n");
	if (s->has_counters && c.window_s > 0 && s->kernel_events && s->kernel_events != t->events &&
	    !(c.wrapped && s->n_cpu_kernel))
		hs_sb_printf(sb, "          (the kernel's own count: %.1f events/s)\n", (double)s->kernel_events / c.window_s);
	text_losses(sb, r, &c);
	for (size_t i = 0; i < hs_problems_count(&t->problems); i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		hs_sb_printf(sb, "problem:  %s\n",
			     hs_problem_format(hs_problems_at(&t->problems, i), text, sizeof text));
	}

	hs_sb_printf(sb, "\n  %10s %11s %10s %11s  %s\n", "events", "events/s", "bytes", "bytes/s", "provider / event");
	for (size_t i = 0; i < t->n_kinds;) {
		uint64_t ev, by;
		size_t end = provider_run(t, i, &ev, &by);
		hs_sb_printf(sb, "  %10" PRIu64 " %11s %10" PRIu64 " %11s  %s\n", ev,
			     num(b1, sizeof b1, (double)ev * c.scale_events, 2), by,
			     num(b2, sizeof b2, (double)by * c.scale_bytes, 1), t->kinds[i].provider);
		for (size_t k = i; k < end; k++) {
			const hs_estimate_kind *kd = &t->kinds[k];
			hs_sb_printf(sb, "  %10" PRIu64 " %11s %10" PRIu64 " %11s    %s\n", kd->events,
				     num(b1, sizeof b1, (double)kd->events * c.scale_events, 2), kd->bytes,
				     num(b2, sizeof b2, (double)kd->bytes * c.scale_bytes, 1), kd->event);
		}
		i = end;
	}
	if (t->n_cpu > 1) {
		hs_sb_printf(sb, "\n  %10s %11s %10s %11s  %s\n", "events", "", "bytes", "bytes/s", "CPU");
		unsigned idle = 0;
		for (unsigned i = 0; i < t->n_cpu; i++) {
			const hs_estimate_cpu *cp = &t->cpu[i];
			if (!cp->events) {
				idle++;
				continue;
			}
			hs_sb_printf(sb, "  %10" PRIu64 " %11s %10" PRIu64 " %11s  cpu%u", cp->events, "", cp->bytes,
				     num(b1, sizeof b1, c.cpu_bytes_per_s ? c.cpu_bytes_per_s[i] : NAN, 1), i);
			/* A CPU whose records start late: its ring wrapped, or it was idle until then. */
			if (t->has_span && cp->first_ns > t->first_ns + 1000000000ull)
				hs_sb_printf(sb, " (its first event %.1f s after the trace's first)",
					     (double)(cp->first_ns - t->first_ns) / 1e9);
			hs_sb_putc(sb, '\n');
		}
		if (idle)
			hs_sb_printf(sb, "  %u CPU%s without events\n", idle, idle == 1 ? "" : "s");
	}

	if (!c.can_project) {
		hs_sb_printf(sb, "\nno projections: %s\n", c.why_not);
		release(&c);
		return;
	}
	const char *busiest_note = "";
	char note[200] = "";
	if (s->split_cpus > 1 && c.busiest >= 0) {
		snprintf(note, sizeof note,
			 " (per-CPU buffers: each CPU gets 1/%u; cpu%d writes %.0f%% of the bytes and fills its share first)",
			 s->split_cpus, c.busiest, c.busiest_share * 100);
		busiest_note = note;
	}
	if (s->project_file) {
		if (s->file_session)
			hs_sb_printf(sb, "\nfile projection for %s (max_file_mb %" PRIu64 ")%s:\n", s->file_session,
				     s->max_file_mb, !r->live ? ", assuming this trace is representative of it" : "");
		else
			hs_sb_append(sb, "\nfile projection (the rules have no file session for this platform):\n");
		hs_sb_printf(sb, "  %.3f MB/min, %.3f GB/day, %.4f TB/year of records\n", c.mb_per_min, c.gb_per_day,
			     c.tb_per_year);
		fmt_duration(b1, sizeof b1, c.holds_s);
		if (s->max_file_mb)
			hs_sb_printf(sb, "  max_file_mb holds %s of records%s\n", b1, busiest_note);
		if (c.streamed_per_s > 0) {
			fmt_rate(b2, sizeof b2, c.streamed_per_s);
			fmt_duration(b3, sizeof b3, c.streamed_holds_s);
			hs_sb_printf(sb, "  the file stores whole ring pages: %s streamed (%.1fx the record bytes: page headers "
					 "and the padding of forced flushes), so it holds %s\n",
				     b2, c.bytes_per_s > 0 ? c.streamed_per_s / c.bytes_per_s : 0.0, b3);
		}
	}
	if (s->project_ring) {
		hs_sb_printf(sb, "\nring history at this rate%s%s%s:\n", s->ring_session ? " for " : "",
			     s->ring_session ? s->ring_session : "",
			     !r->live && s->ring_session ? ", assuming this trace is representative of it" : "");
		if (busiest_note[0])
			hs_sb_printf(sb, " %s\n", busiest_note + 1);
		bool shown = false;
		for (size_t i = 0; i < hs_estimate_n_ring_sizes; i++) {
			uint64_t mb = hs_estimate_ring_sizes_mb[i];
			fmt_duration(b1, sizeof b1, holds(&c, (double)mb * MB, c.bytes_per_s));
			if (mb >= 1024)
				hs_sb_printf(sb, "  %5" PRIu64 " GB  %s", mb / 1024, b1);
			else
				hs_sb_printf(sb, "  %5" PRIu64 " MB  %s", mb, b1);
			if (mb == s->ring_mb) {
				hs_sb_append(sb, "   <- ring_mb of the rules");
				shown = true;
			}
			hs_sb_putc(sb, '\n');
		}
		if (s->ring_mb && !shown) {
			fmt_duration(b1, sizeof b1, holds(&c, (double)s->ring_mb * MB, c.bytes_per_s));
			hs_sb_printf(sb, "  %5" PRIu64 " MB  %s   <- ring_mb of the rules\n", s->ring_mb, b1);
		}
		if (c.wrapped)
			hs_sb_printf(sb, "  measured: this recording's ring of %" PRIu64 " MB held every CPU's events for the "
					 "newest %.2f s\n",
				     s->ring_mb, c.history_s);
	}
	release(&c);
}

hs_status hs_estimate_print_text(const hs_estimate_report *r, FILE *out)
{
	hs_strbuf sb = {0};
	hs_sb_append(&sb, "hindsight estimate");
	if (r->profile)
		hs_sb_printf(&sb, ": profile %s", r->profile);
	if (r->rules_path)
		hs_sb_printf(&sb, " (%s)", r->rules_path);
	if (r->platform != HS_PLATFORM_NONE)
		hs_sb_printf(&sb, ", %s", hs_platform_name(r->platform));
	hs_sb_putc(&sb, '\n');
	if (r->live)
		hs_sb_printf(&sb, "live: the profile's sessions ran for %.0f s as a recording would; run folder %s\n",
			     r->requested_s, r->run_dir ? r->run_dir : "?");
	else
		hs_sb_append(&sb, "offline: rates over the trace's own first-to-last event span\n");
	hs_sb_append(&sb, "bytes are record sizes as stored in the trace; MB = 2^20 bytes, GB = 2^30, TB = 2^40\n");
	for (size_t i = 0; i < r->n_sessions; i++)
		text_session(&sb, r, &r->sessions[i]);
	return hs_sb_write_free(&sb, out);
}

/* ---- JSON ---- */

static void jdouble(hs_json *j, const char *key, double v, int digits)
{
	hs_json_key(j, key);
	hs_json_double(j, v, digits);
}

/* A projection's "key": null when it cannot be made (false), else its object opened with the session it is made
 * for (true: the caller writes the rest and closes it). */
static bool projection_begin(hs_json *j, const char *key, bool made, const char *session, bool assumed)
{
	hs_json_key(j, key);
	if (!made) {
		hs_json_null(j);
		return false;
	}
	hs_json_obj_begin(j);
	hs_json_kstr(j, "session", session);
	hs_json_kbool(j, "assumed_representative", assumed && session);
	return true;
}

static void json_session(hs_json *j, const hs_estimate_report *r, const hs_estimate_session *s)
{
	calc c;
	hs_json_obj_begin(j);
	hs_json_kstr(j, "name", s->name);
	hs_json_kstr(j, "mode", s->has_mode ? hs_mode_name(s->mode) : NULL);
	hs_json_kstr(j, "file", s->file);
	if (!s->trace) {
		hs_json_kstr(j, "read_error", hs_strerror(s->read_status));
		hs_json_obj_end(j);
		return;
	}
	hs_json_key(j, "read_error");
	hs_json_null(j);
	compute(s, &c);
	const hs_estimate_trace *t = s->trace;
	hs_json_kstr(j, "format", format_name(t));
	hs_json_kuint(j, "file_bytes", t->file_bytes);
	hs_json_kuint(j, "events", t->events);
	hs_json_kuint(j, "bytes", t->bytes);
	jdouble(j, "window_s", c.window_s, 6);
	hs_json_kstr(j, "window_from", c.window_is_recording ? "recording" : "events");
	jdouble(j, "span_s", c.span_s, 6);
	jdouble(j, "events_per_s", c.events_per_s, 3);
	jdouble(j, "bytes_per_s", c.bytes_per_s, 3);

	hs_json_key(j, "lost");
	hs_json_obj_begin(j);
	hs_json_kstr(j, "source", s->has_counters ? "backend" : t->format == HS_ESTIMATE_ETL ? "etl header" : "ring pages");
	hs_json_kuint(j, "events", c.lost);
	if (s->has_counters) {
		hs_json_kuint(j, "kernel_events", s->kernel_events);
		hs_json_kuint(j, "overrun", s->overrun);
		hs_json_kuint(j, "dropped", s->dropped);
		hs_json_kuint(j, "commit_overrun", s->commit_overrun);
		hs_json_kuint(j, "etw_events_lost", s->pool_events_lost);
		hs_json_kuint(j, "etw_buffers_lost", s->pool_buffers_lost);
		hs_json_kuint(j, "etw_buffers", s->pool_buffers);
		hs_json_kuint(j, "etw_free_buffers", s->pool_free_buffers);
		hs_json_kuint(j, "bytes_streamed", s->bytes_streamed);
		hs_json_kuint(j, "chunks_dropped", s->chunks_dropped);
	} else if (t->format == HS_ESTIMATE_ETL) {
		hs_json_kuint(j, "etl_buffers_lost", t->etl_buffers_lost);
	} else {
		hs_json_kuint(j, "pages_with_uncounted_losses", t->dat_missed_unknown);
	}
	hs_json_kbool(j, "ring_wrapped", c.wrapped);
	/* A ring the kernel counted is rated from the counts; other losses leave the rates short. */
	bool counted = c.wrapped && s->n_cpu_kernel && !s->dropped && !s->commit_overrun;
	hs_json_kbool(j, "undercount",
		      !counted && (c.lost > 0 || c.wrapped || (!s->has_counters && t->dat_missed_unknown)));
	hs_json_obj_end(j);

	hs_json_key(j, "cpus");
	hs_json_arr_begin(j);
	for (unsigned i = 0; i < t->n_cpu; i++) {
		hs_json_obj_begin(j);
		hs_json_kuint(j, "cpu", i);
		hs_json_kuint(j, "events", t->cpu[i].events);
		hs_json_kuint(j, "bytes", t->cpu[i].bytes);
		jdouble(j, "bytes_per_s", c.cpu_bytes_per_s ? c.cpu_bytes_per_s[i] : 0, 3);
		hs_json_obj_end(j);
	}
	hs_json_arr_end(j);

	hs_json_key(j, "providers");
	hs_json_arr_begin(j);
	for (size_t i = 0; i < t->n_kinds;) {
		uint64_t ev, by;
		size_t end = provider_run(t, i, &ev, &by);
		hs_json_obj_begin(j);
		hs_json_kstr(j, "provider", t->kinds[i].provider);
		hs_json_kuint(j, "events", ev);
		hs_json_kuint(j, "bytes", by);
		jdouble(j, "events_per_s", (double)ev * c.scale_events, 3);
		jdouble(j, "bytes_per_s", (double)by * c.scale_bytes, 3);
		hs_json_key(j, "events_by_kind");
		hs_json_arr_begin(j);
		for (size_t k = i; k < end; k++) {
			const hs_estimate_kind *kd = &t->kinds[k];
			hs_json_obj_begin(j);
			hs_json_kstr(j, "event", kd->event);
			hs_json_kuint(j, "events", kd->events);
			hs_json_kuint(j, "bytes", kd->bytes);
			jdouble(j, "events_per_s", (double)kd->events * c.scale_events, 3);
			jdouble(j, "bytes_per_s", (double)kd->bytes * c.scale_bytes, 3);
			hs_json_obj_end(j);
		}
		hs_json_arr_end(j);
		hs_json_obj_end(j);
		i = end;
	}
	hs_json_arr_end(j);

	hs_json_key(j, "problems");
	hs_json_arr_begin(j);
	for (size_t i = 0; i < hs_problems_count(&t->problems); i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		hs_json_str(j, hs_problem_format(hs_problems_at(&t->problems, i), text, sizeof text));
	}
	hs_json_arr_end(j);

	hs_json_key(j, "projections");
	hs_json_obj_begin(j);
	hs_json_kbool(j, "ok", c.can_project);
	hs_json_kstr(j, "why_not", c.can_project ? NULL : c.why_not);
	bool assumed = !r->live;
	if (projection_begin(j, "file", c.can_project && s->project_file, s->file_session, assumed)) {
		hs_json_kuint(j, "max_file_mb", s->max_file_mb);
		jdouble(j, "mb_per_min", c.mb_per_min, 6);
		jdouble(j, "gb_per_day", c.gb_per_day, 6);
		jdouble(j, "tb_per_year", c.tb_per_year, 6);
		jdouble(j, "max_file_holds_s", s->max_file_mb ? c.holds_s : NAN, 1);
		jdouble(j, "streamed_bytes_per_s", c.streamed_per_s, 3);
		jdouble(j, "streamed_holds_s", c.streamed_per_s > 0 ? c.streamed_holds_s : NAN, 1);
		hs_json_obj_end(j);
	}
	if (projection_begin(j, "ring", c.can_project && s->project_ring, s->ring_session, assumed)) {
		hs_json_kuint(j, "ring_mb", s->ring_mb);
		hs_json_kuint(j, "split_cpus", s->split_cpus);
		hs_json_key(j, "busiest_cpu");
		if (s->split_cpus > 1 && c.busiest >= 0)
			hs_json_int(j, c.busiest);
		else
			hs_json_null(j);
		jdouble(j, "busiest_share", c.busiest_share, 4);
		hs_json_key(j, "sizes");
		hs_json_arr_begin(j);
		for (size_t i = 0; i < hs_estimate_n_ring_sizes; i++) {
			hs_json_obj_begin(j);
			hs_json_kuint(j, "mb", hs_estimate_ring_sizes_mb[i]);
			jdouble(j, "minutes", holds(&c, (double)hs_estimate_ring_sizes_mb[i] * MB, c.bytes_per_s) / 60, 3);
			hs_json_obj_end(j);
		}
		hs_json_arr_end(j);
		jdouble(j, "ring_mb_minutes", s->ring_mb ? holds(&c, (double)s->ring_mb * MB, c.bytes_per_s) / 60 : NAN, 3);
		jdouble(j, "measured_history_s", c.wrapped ? c.history_s : NAN, 3);
		hs_json_obj_end(j);
	}
	hs_json_obj_end(j);
	hs_json_obj_end(j);
	release(&c);
}

hs_status hs_estimate_print_json(const hs_estimate_report *r, FILE *out)
{
	hs_strbuf sb = {0};
	hs_json j;
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_json_kstr(&j, "mode", r->live ? "live" : "offline");
	hs_json_kstr(&j, "profile", r->profile);
	hs_json_kstr(&j, "rules", r->rules_path);
	hs_json_kstr(&j, "platform", r->platform != HS_PLATFORM_NONE ? hs_platform_name(r->platform) : NULL);
	hs_json_kstr(&j, "run_dir", r->run_dir);
	if (r->live)
		jdouble(&j, "requested_s", r->requested_s, 3);
	hs_json_key(&j, "units");
	hs_json_obj_begin(&j);
	hs_json_kuint(&j, "MB", 1048576u);
	hs_json_kuint(&j, "GB", 1073741824u);
	hs_json_kuint(&j, "TB", 1099511627776u);
	hs_json_obj_end(&j);
	hs_json_key(&j, "sessions");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < r->n_sessions; i++)
		json_session(&j, r, &r->sessions[i]);
	hs_json_arr_end(&j);
	hs_json_obj_end(&j);
	hs_sb_putc(&sb, '\n');
	return hs_sb_write_free(&sb, out);
}
