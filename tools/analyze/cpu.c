/* analyze/cpu.c: `analyze cpu`: renders the library's CPU profile (cpu_profile.h) of an .etl or a perf.data as a table, JSON, folded stacks and speedscope. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/compat.h"
#include "hindsight/cpu_profile.h"
#include "hindsight/exitcodes.h"
#include "hindsight/json.h"
#include "hindsight/perfdata.h"
#include "hindsight/regex.h"
#include "hindsight/strbuf.h"
#include "hindsight/text.h"

#define NONE UINT32_MAX

enum { TOP_THREADS = 5 };

/* The interval's origin as the table and JSON have always named it (the
 * kernel's event names, which is where the user would look it up). */
static const char *interval_source_text(hs_cpu_interval_source s)
{
	switch (s) {
	case HS_CPU_INTERVAL_COLLECTION_START:
		return "CollectionStart";
	case HS_CPU_INTERVAL_SET_INTERVAL:
		return "SetInterval";
	case HS_CPU_INTERVAL_COLLECTION_END:
		return "CollectionEnd";
	case HS_CPU_INTERVAL_PERF_FREQ:
		return "sample_freq";
	case HS_CPU_INTERVAL_PERF_PERIOD:
		return "sample_period";
	case HS_CPU_INTERVAL_PERF_EVENTS:
		return "sample_period of events that are not time: ms unknown";
	case HS_CPU_INTERVAL_DEFAULT:
		break;
	}
	return "no interval event: Windows default 1 ms";
}

static double ms_of(const hs_cpu_view *c, uint64_t weight)
{
	return (double)weight * (double)c->interval / 10000.0;
}

static double pct_of(const hs_cpu_view *c, uint64_t weight)
{
	return c->total_weight ? 100.0 * (double)weight / (double)c->total_weight : 0.0;
}

static double resolved_pct(const hs_cpu_view *c)
{
	return c->frames_total ? 100.0 * (double)c->frames_resolved / (double)c->frames_total : 0.0;
}

static void print_table(const hs_cpu_view *c, const analyze_opts *o, bool perf)
{
	printf("file: %s\n", o->file);
	if (!c->total_weight && perf) {
		printf("samples: 0 (no PERF_RECORD_SAMPLE with an ip in the perf.data)\n");
		return;
	}
	if (!c->total_weight) {
		printf("samples: 0 (no SampledProfile events: the trace was not recorded with the kernel's "
		       "PROFILE flag)\n");
		return;
	}
	printf("samples: %" PRIu64 " at %.4g ms each (%s)", c->total_weight, (double)c->interval / 10000.0,
	       interval_source_text(c->interval_source));
	if (o->process)
		printf(", %" PRIu64 " in processes matching /%s/", c->shown_weight, o->process);
	printf("\n");
	printf("with stacks: %" PRIu64 " (%.1f%%); frames resolved to a module: %.1f%%\n", c->stacked_weight,
	       c->shown_weight ? 100.0 * (double)c->stacked_weight / (double)c->shown_weight : 0.0, resolved_pct(c));
	printf("\n%-32s %8s %10s %12s %7s\n", "PROCESS", "PID", "SAMPLES", "MS", "%");
	if (!c->norder)
		printf("(no process matches)\n");
	for (size_t i = 0; i < c->norder; i++) {
		const hs_cpu_process *p = &c->processes[c->order[i]];
		char pid[16];
		if (p->pid == UINT32_MAX)
			snprintf(pid, sizeof pid, "-");
		else
			snprintf(pid, sizeof pid, "%" PRIu32, p->pid);
		printf("%-32s %8s %10" PRIu64 " %12.1f %7.2f\n", hs_cpu_process_name(p), pid, p->samples, ms_of(c, p->samples),
		       pct_of(c, p->samples));
		size_t t = c->first_thread[c->order[i]];
		for (int k = 0; k < TOP_THREADS && t != SIZE_MAX && t < c->nthreads; k++, t++) {
			const hs_cpu_thread *tr = &c->threads[c->thread_order[t]];
			if (tr->process != c->order[i])
				break;
			char label[300];
			snprintf(label, sizeof label, "  thread %" PRIu32 "%s%s", tr->tid, tr->name ? " " : "",
				 tr->name ? tr->name : "");
			printf("%-41s %10" PRIu64 " %12.1f %7.2f\n", label, tr->samples, ms_of(c, tr->samples),
			       pct_of(c, tr->samples));
		}
	}
}

/* "ms" and "percent" of a process's or thread's samples. */
static void json_time(hs_json *j, const hs_cpu_view *c, uint64_t samples)
{
	hs_json_kdouble(j, "ms", ms_of(c, samples), 4);
	hs_json_kdouble(j, "percent", pct_of(c, samples), 3);
}

static void write_json(const hs_cpu_view *c, const hs_etl *etl, const hs_perfdata *pd, const analyze_opts *o)
{
	hs_strbuf sb = {0};
	hs_json j;
	analyze_json_begin(&j, &sb, o->file, NULL);
	hs_json_key(&j, "interval_ms");
	hs_json_double(&j, (double)c->interval / 10000.0, 4);
	hs_json_kstr(&j, "interval_source", interval_source_text(c->interval_source));
	hs_json_kuint(&j, "samples", c->total_weight);
	hs_json_kuint(&j, "samples_shown", c->shown_weight);
	hs_json_kuint(&j, "samples_with_stack", c->stacked_weight);
	hs_json_key(&j, "frames_resolved_percent");
	hs_json_double(&j, resolved_pct(c), 2);
	hs_json_kuint(&j, "undecodable_events", c->undecodable);
	if (o->process)
		hs_json_kstr(&j, "process_filter", o->process);
	hs_json_key(&j, "processes");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < c->norder; i++) {
		const hs_cpu_process *p = &c->processes[c->order[i]];
		hs_json_obj_begin(&j);
		hs_json_key(&j, "pid");
		if (p->pid == UINT32_MAX)
			hs_json_null(&j);
		else
			hs_json_uint(&j, p->pid);
		hs_json_kstr(&j, "name", hs_cpu_process_name(p));
		hs_json_kstr(&j, "command_line", p->cmdline);
		hs_json_kuint(&j, "samples", p->samples);
		hs_json_kuint(&j, "samples_with_stack", p->stacked);
		json_time(&j, c, p->samples);
		hs_json_key(&j, "threads");
		hs_json_arr_begin(&j);
		size_t t = c->first_thread[c->order[i]];
		for (int k = 0; k < TOP_THREADS && t != SIZE_MAX && t < c->nthreads; k++, t++) {
			const hs_cpu_thread *tr = &c->threads[c->thread_order[t]];
			if (tr->process != c->order[i])
				break;
			hs_json_obj_begin(&j);
			hs_json_kuint(&j, "tid", tr->tid);
			if (tr->name)
				hs_json_kstr(&j, "name", tr->name);
			hs_json_kuint(&j, "samples", tr->samples);
			json_time(&j, c, tr->samples);
			hs_json_obj_end(&j);
		}
		hs_json_arr_end(&j);
		hs_json_obj_end(&j);
	}
	hs_json_arr_end(&j);
	analyze_json_problems(&j, pd ? hs_perfdata_problems(pd) : hs_etl_problems(etl));
	hs_json_obj_end(&j);
	hs_sb_write_free(&sb, stdout);
}

/* "name (pid)" with the characters folded lines cannot hold replaced. */
static void proc_label(const hs_cpu_process *p, char *buf, size_t cap)
{
	if (p->pid == UINT32_MAX)
		snprintf(buf, cap, "%s", hs_cpu_process_name(p));
	else
		snprintf(buf, cap, "%s (%" PRIu32 ")", hs_cpu_process_name(p), p->pid);
	for (char *q = buf; *q; q++)
		if (*q == ';' || (unsigned char)*q < 0x20)
			*q = '_';
}

static int write_folded(const hs_cpu_profile *a, const char *path)
{
	FILE *f = hs_fopen(path, "w");
	if (!f) {
		fprintf(stderr, "analyze: %s: cannot create\n", path);
		return HS_EXIT_USAGE;
	}
	for (uint32_t sid = 0; sid < hs_cpu_profile_view(a)->nstacks; sid++) {
		size_t n;
		uint32_t pi;
		uint64_t weight;
		const uint32_t *fr = hs_cpu_profile_stack(a, sid, &n, &pi, &weight);
		char label[320];
		proc_label(&hs_cpu_profile_view(a)->processes[pi], label, sizeof label);
		fputs(label, f);
		for (size_t k = n; k-- > 0;) {
			fputc(';', f);
			fputs(hs_cpu_profile_frame(a, fr[k]), f);
		}
		fprintf(f, " %" PRIu64 "\n", weight);
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "analyze: %s: write failed\n", path);
		return HS_EXIT_USAGE;
	}
	return 0;
}

/*
 * One "sampled" profile per process; samples are the distinct stacks (root
 * first, as the format wants) and weights their sample counts, so unit is
 * "none". Distinct stacks keep the file small; the time-order view of a
 * profile therefore shows stacks in order of first appearance.
 */
static int write_speedscope(const hs_cpu_profile *a, const char *path, const char *trace)
{
	const hs_cpu_view *c = hs_cpu_profile_view(a);
	int rc = HS_EXIT_USAGE;
	hs_strbuf sb = {0};
	uint32_t *remap = malloc((hs_cpu_profile_view(a)->nframes + 1) * sizeof(*remap));
	uint32_t *used = malloc((hs_cpu_profile_view(a)->nframes + 1) * sizeof(*used));
	FILE *f = NULL;
	if (!remap || !used)
		goto fail;
	size_t nused = 0;
	for (size_t i = 0; i < hs_cpu_profile_view(a)->nframes; i++)
		remap[i] = NONE;
	for (uint32_t sid = 0; sid < hs_cpu_profile_view(a)->nstacks; sid++) {
		size_t n;
		uint32_t pi;
		uint64_t weight;
		const uint32_t *fr = hs_cpu_profile_stack(a, sid, &n, &pi, &weight);
		for (size_t k = 0; k < n; k++)
			if (remap[fr[k]] == NONE) {
				remap[fr[k]] = (uint32_t)nused;
				used[nused++] = fr[k];
			}
	}
	hs_sb_append(&sb, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[");
	for (size_t i = 0; i < nused; i++) {
		hs_sb_append(&sb, i ? ",\n{\"name\":" : "\n{\"name\":");
		hs_json_escape(&sb, hs_cpu_profile_frame(a, used[i]));
		hs_sb_putc(&sb, '}');
	}
	hs_sb_append(&sb, "]},\n\"profiles\":[");
	for (size_t i = 0; i < c->norder; i++) {
		uint32_t pi = c->order[i];
		const hs_cpu_process *p = &c->processes[pi];
		char label[320];
		proc_label(p, label, sizeof label);
		hs_sb_append(&sb, i ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":");
		hs_json_escape(&sb, label);
		hs_sb_printf(&sb, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
			     p->samples);
		bool first = true;
		for (uint32_t sid = 0; sid < hs_cpu_profile_view(a)->nstacks; sid++) {
			size_t n;
			uint32_t spi;
			uint64_t weight;
			const uint32_t *fr = hs_cpu_profile_stack(a, sid, &n, &spi, &weight);
			if (spi != pi)
				continue;
			hs_sb_append(&sb, first ? "\n[" : ",\n[");
			first = false;
			for (size_t k = n; k-- > 0;)
				hs_sb_printf(&sb, k == n - 1 ? "%" PRIu32 : ",%" PRIu32, remap[fr[k]]);
			hs_sb_putc(&sb, ']');
		}
		hs_sb_append(&sb, "],\n\"weights\":[");
		first = true;
		for (uint32_t sid = 0; sid < hs_cpu_profile_view(a)->nstacks; sid++) {
			size_t n;
			uint32_t spi;
			uint64_t weight;
			hs_cpu_profile_stack(a, sid, &n, &spi, &weight);
			if (spi != pi)
				continue;
			hs_sb_printf(&sb, first ? "%" PRIu64 : ",%" PRIu64, weight);
			first = false;
		}
		hs_sb_append(&sb, "]}");
	}
	hs_sb_append(&sb, "],\n\"name\":");
	char title[600];
	snprintf(title, sizeof title, "CPU samples: %s", hs_path_base(trace));
	hs_json_escape(&sb, title);
	if (c->norder)
		hs_sb_append(&sb, ",\"activeProfileIndex\":0");
	hs_sb_append(&sb, ",\"exporter\":\"hindsight analyze cpu\"}\n");
	f = hs_fopen(path, "w");
	if (!f) {
		fprintf(stderr, "analyze: %s: cannot create\n", path);
		goto fail;
	}
	hs_status st = hs_sb_write_free(&sb, f);
	if (fclose(f) != 0 || st != HS_OK) {
		fprintf(stderr, "analyze: %s: %s\n", path, st == HS_ENOMEM ? "out of memory" : "write failed");
		goto fail;
	}
	rc = 0;
fail:
	hs_sb_free(&sb);
	free(remap);
	free(used);
	return rc;
}

/* Passes each record to the progress display, which needs no context. */
static void on_progress(const hs_etl *etl, const hs_etl_record *r, void *ctx)
{
	(void)ctx;
	analyze_progress(etl, r);
}

/* Opens a perf.data, printing the reader's problems when it refuses it; 0 or an exit code. */
static int open_perfdata(const char *path, hs_perfdata **out)
{
	hs_status st = hs_perfdata_open(path, out);
	if (st == HS_OK)
		return 0;
	fprintf(stderr, "analyze: %s: not read (%s)%s\n", path, hs_strerror(st), *out ? ":" : "");
	if (*out)
		analyze_report_problems(hs_perfdata_problems(*out));
	return HS_EXIT_USAGE;
}

int analyze_cpu(const analyze_opts *o)
{
	hs_etl *etl = NULL;
	hs_perfdata *pd = NULL;
	hs_regex *re = NULL;
	hs_cpu_profile *prof = NULL;
	int rc = HS_EXIT_USAGE;
	if (o->process) {
		char err[256];
		size_t off = 0;
		hs_status st = hs_regex_compile(o->process, &re, err, sizeof err, &off);
		if (st != HS_OK) {
			if (st == HS_EINVAL)
				fprintf(stderr, "analyze: --process /%s/: %s at offset %zu\n", o->process, err, off);
			else
				fprintf(stderr, "analyze: --process: %s\n", hs_strerror(st));
			return HS_EXIT_USAGE;
		}
	}
	bool perf = hs_perfdata_sniff(o->file);
	rc = perf ? open_perfdata(o->file, &pd) : analyze_open_etl(o->file, &etl);
	if (rc)
		goto fail;
	rc = HS_EXIT_USAGE;
	hs_status st;
	if (perf) {
		st = hs_cpu_profile_build_perf(pd, re, &prof);
	} else {
		st = hs_cpu_profile_build(etl, re, on_progress, NULL, &prof);
		analyze_progress_done();
	}
	if (st != HS_OK) {
		fprintf(stderr, "analyze: out of memory\n");
		goto fail;
	}
	const hs_cpu_view *c = hs_cpu_profile_view(prof);
	if (o->json)
		write_json(c, etl, pd, o);
	else
		print_table(c, o, perf);
	if (o->folded && write_folded(prof, o->folded))
		goto fail;
	if (o->speedscope && write_speedscope(prof, o->speedscope, o->file))
		goto fail;
	if (c->undecodable)
		fprintf(stderr, "analyze: %" PRIu64 " kernel events were too short or garbled to decode\n",
			c->undecodable);
	if (c->unresolved_keys && !o->json)
		fprintf(stderr, "analyze: %" PRIu64 " samples refer to stack keys the trace never defined\n",
			c->unresolved_keys);
	rc = analyze_report_problems(perf ? hs_perfdata_problems(pd) : hs_etl_problems(etl));
	if (!rc && c->undecodable)
		rc = HS_EXIT_FINDINGS;
fail:
	hs_cpu_profile_free(prof);
	hs_regex_free(re);
	hs_etl_close(etl);
	hs_perfdata_close(pd);
	return rc;
}
