/* analyze/summary.c: `analyze summary`: what a trace holds, with provider and event names and stories from the rules. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/event.h"
#include "hindsight/event_counts.h"
#include "hindsight/event_names.h"
#include "hindsight/plan.h"

enum { TOP_EVENTS = 15 };

/* One line per event kind, as shown and sorted. */
typedef struct {
	const hs_event_count *n;
	char provider[HS_EVENT_LABEL_PROVIDER];
	char event[HS_EVENT_LABEL_EVENT];
	const char *story;
	bool guessed;
} line;

static void describe(const hs_event_names *names, const hs_event_count *n, line *l)
{
	/* summary has always shown the trace's own names cut to 63 bytes. */
	char pn[64], en[64];
	snprintf(pn, sizeof pn, "%s", n->provider ? n->provider : "");
	snprintf(en, sizeof en, "%s", n->name ? n->name : "");
	hs_event_label lab;
	hs_event_names_label(names, &n->key, pn, en, &lab);
	l->n = n;
	memcpy(l->provider, lab.provider, sizeof l->provider);
	memcpy(l->event, lab.event, sizeof l->event);
	if (lab.cat_event) {
		l->story = lab.cat_event->story;
		l->guessed = lab.cat_event->name_guessed;
	}
}

static int cmp_provider_then_count(const void *a, const void *b)
{
	const line *x = a, *y = b;
	int c = strcmp(x->provider, y->provider);
	if (c)
		return c;
	if (x->n->count != y->n->count)
		return x->n->count > y->n->count ? -1 : 1;
	return strcmp(x->event, y->event);
}

static int cmp_count(const void *a, const void *b)
{
	const line *x = *(const line *const *)a, *y = *(const line *const *)b;
	if (x->n->count != y->n->count)
		return x->n->count > y->n->count ? -1 : 1;
	return strcmp(x->provider, y->provider);
}

static void mode_names(uint32_t m, char *buf, size_t cap)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} bits[] = {
		{0x1, "SEQUENTIAL"},	    {0x2, "CIRCULAR"},		{0x4, "APPEND"},
		{0x8, "NEWFILE"},	    {0x100, "REAL_TIME"},	{0x400, "BUFFERING"},
		{0x1000, "ADD_HEADER"},	    {0x2000, "USE_KBYTES"},	{0x10000, "RELOG"},
		{0x1000000, "PAGED_MEMORY"}, {0x2000000, "SYSTEM_LOGGER"}, {0x4000000, "COMPRESSED"},
		{0x8000000, "INDEPENDENT_SESSION"}, {0x10000000, "NO_PER_PROCESSOR_BUFFERING"},
	};
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if (m & bits[i].bit)
			o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%s", o ? "|" : "", bits[i].name);
	if (!o)
		snprintf(buf, cap, "-");
}


/* The .etl's summary into sb (analyze_cmd_fn). */
static int summary_etl(const analyze_cmd *cmd, const analyze_trace *tr, hs_strbuf *sb)
{
	const analyze_opts *o = cmd->o;
	const analyze_rules *rules = cmd->rules;
	hs_etl *etl = tr->etl;
	char cb[24]; /* an unknown clock's name */
	int rc = 0;
	analyze_tally c;
	line *lines = NULL, **top = NULL;
	size_t n = 0;
	if (!analyze_tally_trace(tr, false, &c))
		goto oom;
	n = hs_event_counts_len(c.counts);
	lines = calloc(n + 1, sizeof(*lines));
	top = calloc(n + 1, sizeof(*top));
	if (!lines || !top)
		goto oom;
	hs_event_names names = {rules->rules};
	for (size_t i = 0; i < n; i++)
		describe(&names, hs_event_counts_at(c.counts, i), &lines[i]);
	qsort(lines, n, sizeof(*lines), cmp_provider_then_count);
	for (size_t i = 0; i < n; i++)
		top[i] = &lines[i];
	qsort(top, n, sizeof(*top), cmp_count);

	const hs_etl_header *h = hs_etl_get_header(etl);
	size_t nb = hs_etl_buffer_count(etl), compressed = 0;
	for (size_t i = 0; i < nb; i++)
		compressed += hs_etl_buffer_at(etl, i)->compressed;
	char mode[256], t0[40], t1[40];
	mode_names(h->log_file_mode, mode, sizeof mode);
	hs_etl_filetime_text(c.all.first, t0, sizeof t0);
	hs_etl_filetime_text(c.all.last, t1, sizeof t1);
	double span = c.all.last > c.all.first ? (double)(c.all.last - c.all.first) / 1e7 : 0.0;

	if (o->json) {
		hs_json j;
		analyze_json_begin(&j, sb, o->file, NULL);
		hs_json_kuint(&j, "bytes", hs_etl_file_size(etl));
		hs_json_kstr(&j, "rules", rules->path);
		hs_json_kstr(&j, "logger", h->logger_name);
		hs_json_kstr(&j, "log_file_name", h->log_file_name);
		hs_json_kuint(&j, "log_file_mode", h->log_file_mode);
		hs_json_kstr(&j, "log_file_mode_names", mode);
		hs_json_kstr(&j, "clock", hs_etw_clock_name(h->clock_type, cb, sizeof cb));
		hs_json_kuint(&j, "pointer_size", h->pointer_size);
		hs_json_kuint(&j, "build", h->provider_version);
		hs_json_kuint(&j, "cpus", h->cpus);
		hs_json_kstr(&j, "first_event", t0);
		hs_json_kstr(&j, "last_event", t1);
		hs_json_key(&j, "span_s");
		hs_json_double(&j, span, 6);
		hs_json_kuint(&j, "buffers", nb);
		hs_json_kuint(&j, "buffers_compressed", compressed);
		hs_json_kuint(&j, "buffers_flagged_lost", hs_etl_lost_flagged_buffers(etl));
		hs_json_kuint(&j, "events", hs_event_counts_total(c.counts));
		hs_json_kuint(&j, "events_lost", h->events_lost);
		hs_json_kuint(&j, "buffers_lost", h->buffers_lost);
		hs_json_key(&j, "events_by_kind");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i < n; i++) {
			const line *l = &lines[i];
			hs_json_obj_begin(&j);
			hs_json_kstr(&j, "provider", l->provider);
			hs_json_kstr(&j, "event", l->event);
			hs_json_kuint(&j, "count", l->n->count);
			hs_json_kstr(&j, "story", l->story);
			if (l->guessed)
				hs_json_kbool(&j, "name_guessed", true);
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		analyze_json_problems(&j, hs_etl_problems(etl));
		hs_json_obj_end(&j);
	} else {
		hs_sb_printf(sb, "file:      %s (%zu bytes)\n", o->file, hs_etl_file_size(etl));
		hs_sb_printf(sb, "logger:    %s\n", h->logger_name[0] ? h->logger_name : "(none)");
		hs_sb_printf(sb, "log file:  %s\n", h->log_file_name[0] ? h->log_file_name : "(none)");
		hs_sb_printf(sb, "mode:      0x%08x %s\n", h->log_file_mode, mode);
		hs_sb_printf(sb, "machine:   Windows build %u, %u CPUs, %u-bit logger, clock %s\n", h->provider_version,
			     h->cpus, h->pointer_size * 8, hs_etw_clock_name(h->clock_type, cb, sizeof cb));
		hs_sb_printf(sb, "time:      %s .. %s (%.3f s)\n", t0, t1, span);
		hs_sb_printf(sb, "buffers:   %zu (%zu compressed, %zu flagged lost)\n", nb, compressed,
			     hs_etl_lost_flagged_buffers(etl));
		hs_sb_printf(sb, "events:    %" PRIu64 "; lost: %u events, %u buffers (per the logger)\n", hs_event_counts_total(c.counts),
			     h->events_lost, h->buffers_lost);
		hs_sb_printf(sb, "names:     %s\n", rules->path);
		hs_sb_append(sb, "\nbusiest events:\n");
		for (size_t i = 0; i < n && i < TOP_EVENTS; i++)
			hs_sb_printf(sb, "  %10" PRIu64 "  %s / %s\n", top[i]->n->count, top[i]->provider, top[i]->event);
		hs_sb_append(sb, "\nevents by provider:\n");
		const char *prev = "";
		for (size_t i = 0; i < n; i++) {
			const line *l = &lines[i];
			if (strcmp(prev, l->provider) != 0) {
				uint64_t sum = 0;
				for (size_t k = i; k < n && strcmp(lines[k].provider, l->provider) == 0; k++)
					sum += lines[k].n->count;
				hs_sb_printf(sb, "  %s: %" PRIu64 "\n", l->provider, sum);
				prev = l->provider;
			}
			hs_sb_printf(sb, "    %10" PRIu64 "  %s%s", l->n->count, l->event, l->guessed ? " [name unverified]" : "");
			if (l->story)
				hs_sb_printf(sb, " - %s", l->story);
			hs_sb_putc(sb, '\n');
		}
	}
	goto out;
oom:
	fprintf(stderr, "analyze: out of memory\n");
	rc = HS_EXIT_USAGE;
out:
	free(lines);
	free(top);
	analyze_tally_free(&c);
	return rc;
}

static int summary(const analyze_cmd *c, const analyze_trace *t, hs_strbuf *sb)
{
	return t->td ? analyze_summary_tracedat(c, t, sb) : summary_etl(c, t, sb);
}

int analyze_summary(const analyze_opts *o)
{
	analyze_rules rules;
	int rc = analyze_load_rules(o, &rules);
	if (rc)
		return rc;
	rc = analyze_trace_run(&(analyze_cmd){o, &rules, NULL}, summary);
	analyze_free_rules(&rules);
	return rc;
}
