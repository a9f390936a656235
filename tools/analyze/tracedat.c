/* analyze/tracedat.c: what `analyze summary` prints for trace.dat files (the walk is trace.c's), and the trace clock's text the trace.dat subcommands share. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/event.h"
#include "hindsight/event_counts.h"
#include "hindsight/event_names.h"

const char analyze_tracedat_format[] = "trace.dat";

void analyze_format_clock_ns(uint64_t ns, char *buf, size_t cap)
{
	/* trace-cmd report's own form (seconds.microseconds), plus the nanoseconds. */
	snprintf(buf, cap, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

/* The entry's ftrace system and event name: the record's own, which every ftrace record has. */
static const char *sys_of(const hs_event_count *n)
{
	return n->provider ? n->provider : "?";
}

static const char *name_of(const hs_event_count *n)
{
	return n->name ? n->name : "?";
}

static int cmp_row_name(const void *a, const void *b)
{
	const hs_event_count *x = *(const hs_event_count *const *)a, *y = *(const hs_event_count *const *)b;
	int c = strcmp(sys_of(x), sys_of(y));
	if (!c)
		c = strcmp(name_of(x), name_of(y));
	/* Rows have always come in event id order where the names tie (a damaged file). */
	return c ? c : x->key.num < y->key.num ? -1 : x->key.num > y->key.num;
}

static int cmp_row_count(const void *a, const void *b)
{
	const hs_event_count *x = *(const hs_event_count *const *)a, *y = *(const hs_event_count *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return cmp_row_name(a, b);
}

/* Walks the file into t; returns its entries sorted by (system, name) in *rows. */
static int tally_file(const analyze_trace *tr, analyze_tally *t, hs_event_count ***rows, size_t *n_rows)
{
	if (!analyze_tally_trace(tr, false, t))
		goto oom;
	size_t n = hs_event_counts_len(t->counts);
	*rows = calloc(n + 1, sizeof(**rows));
	if (!*rows)
		goto oom;
	for (size_t i = 0; i < n; i++)
		(*rows)[i] = hs_event_counts_at(t->counts, i);
	qsort(*rows, n, sizeof(**rows), cmp_row_name);
	*n_rows = n;
	return 0;
oom:
	fprintf(stderr, "analyze: out of memory counting events\n");
	return HS_EXIT_USAGE;
}

enum { TOP_EVENTS = 15 };

int analyze_summary_tracedat(const analyze_cmd *c, const analyze_trace *tr, hs_strbuf *sb)
{
	const analyze_opts *o = c->o;
	const analyze_rules *rules = c->rules;
	hs_tracedat *td = tr->td;
	analyze_tally t;
	hs_event_count **rows = NULL, **top = NULL;
	size_t n = 0;
	int rc = tally_file(tr, &t, &rows, &n);
	if (rc)
		goto out;
	top = calloc(n + 1, sizeof(*top));
	if (!top) {
		rc = HS_EXIT_USAGE;
		goto out;
	}
	memcpy(top, rows, n * sizeof(*top));
	qsort(top, n, sizeof(*top), cmp_row_count);
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	/* ftrace events are named by their system's catalog provider */
	hs_event_names names = {rules->rules};
	char t0[32], t1[32];
	analyze_format_clock_ns(t.all.first, t0, sizeof t0);
	analyze_format_clock_ns(t.all.last, t1, sizeof t1);
	double span = t.all.last > t.all.first ? (double)(t.all.last - t.all.first) / 1e9 : 0.0;
	const char *clock = info->clock[0] ? info->clock : "unknown";

	if (o->json) {
		hs_json j;
		analyze_json_begin(&j, sb, o->file, analyze_tracedat_format);
		hs_json_kuint(&j, "bytes", info->file_size);
		hs_json_kstr(&j, "rules", rules->path);
		hs_json_kuint(&j, "version", info->version);
		hs_json_kstr(&j, "clock", clock);
		hs_json_kuint(&j, "cpus", info->cpus);
		hs_json_key(&j, "buffers");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i <= info->n_instances; i++) {
			hs_json_obj_begin(&j);
			hs_json_kstr(&j, "name", i ? info->instances[i - 1] : "");
			hs_json_kuint(&j, "events", t.per_buffer[i]);
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		hs_json_kstr(&j, "first_event", t0);
		hs_json_kstr(&j, "last_event", t1);
		hs_json_key(&j, "span_s");
		hs_json_double(&j, span, 6);
		hs_json_kuint(&j, "events", hs_event_counts_total(t.counts));
		hs_json_key(&j, "events_by_kind");
		hs_json_arr_begin(&j);
		for (size_t i = 0; i < n; i++) {
			hs_event_label lab;
			hs_event_names_label(&names, &rows[i]->key, rows[i]->provider, rows[i]->name, &lab);
			const hs_cat_event *ce = lab.cat_event;
			hs_json_obj_begin(&j);
			/* The catalog's name uncut (the label's copy has a size limit the system name has not). */
			hs_json_kstr(&j, "provider", lab.catalog ? lab.catalog->name : sys_of(rows[i]));
			hs_json_kstr(&j, "system", sys_of(rows[i]));
			hs_json_kstr(&j, "event", name_of(rows[i]));
			hs_json_kuint(&j, "count", rows[i]->count);
			hs_json_kstr(&j, "story", ce ? ce->story : NULL);
			hs_json_kstr(&j, "alert", ce ? ce->alert : NULL);
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		analyze_json_problem_texts(&j, hs_tracedat_problems(td));
		hs_json_obj_end(&j);
	} else {
		hs_sb_printf(sb, "file:      %s (%" PRIu64 " bytes, trace.dat version %u)\n", o->file, info->file_size,
			     info->version);
		hs_sb_printf(sb, "machine:   %u CPUs, trace clock %s\n", info->cpus, clock);
		hs_sb_printf(sb, "buffers:   top %" PRIu64 " events", t.per_buffer[0]);
		for (size_t i = 0; i < info->n_instances; i++)
			hs_sb_printf(sb, ", %s %" PRIu64 " events", info->instances[i], t.per_buffer[i + 1]);
		hs_sb_printf(sb, "\ntime:      %s .. %s s of the %s clock (%.3f s)\n", t0, t1, clock, span);
		hs_sb_printf(sb, "events:    %" PRIu64 "\n", hs_event_counts_total(t.counts));
		hs_sb_printf(sb, "names:     %s\n", rules->path);
		hs_sb_append(sb, "\nbusiest events:\n");
		for (size_t i = 0; i < n && i < TOP_EVENTS; i++)
			hs_sb_printf(sb, "  %10" PRIu64 "  %s / %s\n", top[i]->count, sys_of(top[i]), name_of(top[i]));
		hs_sb_append(sb, "\nevents by system:\n");
		for (size_t i = 0; i < n; i++) {
			hs_event_label lab;
			hs_event_names_label(&names, &rows[i]->key, rows[i]->provider, rows[i]->name, &lab);
			const hs_provider *p = lab.catalog;
			if (i == 0 || strcmp(sys_of(rows[i - 1]), sys_of(rows[i])) != 0) {
				uint64_t sum = 0;
				for (size_t k = i; k < n && strcmp(sys_of(rows[k]), sys_of(rows[i])) == 0; k++)
					sum += rows[k]->count;
				hs_sb_printf(sb, "  %s: %" PRIu64 "%s%s\n", sys_of(rows[i]), sum, p && p->description ? " - " : "",
					     p && p->description ? p->description : "");
			}
			const hs_cat_event *ce = lab.cat_event;
			hs_sb_printf(sb, "    %10" PRIu64 "  %s", rows[i]->count, name_of(rows[i]));
			if (ce && ce->alert)
				hs_sb_printf(sb, " [%s]", ce->alert);
			if (ce && ce->story)
				hs_sb_printf(sb, " - %s", ce->story);
			hs_sb_putc(sb, '\n');
		}
	}
out:
	free(rows);
	free(top);
	analyze_tally_free(&t);
	return rc;
}
