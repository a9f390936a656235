/* analyze/estimate.c: `analyze estimate`: event and byte rates of a trace, and the file and ring sizes they would need. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/estimate.h"
#include "hindsight/text.h"

/* Which session of the rules the trace stands for: the one whose output has
 * the file's name, and the file-circular and buffering sessions whose sizes
 * the projections use (that one when it has the mode, else the platform's
 * first of that mode). */
static void match_session(const hs_ruleset *rs, hs_platform platform, const char *file, hs_estimate_session *s)
{
	if (!rs || platform <= HS_PLATFORM_NONE || platform >= HS_PLATFORM_COUNT || !rs->platforms[platform].present)
		return;
	const hs_platform_rules *pr = &rs->platforms[platform];
	const hs_session *matched = NULL, *file_s = NULL, *ring_s = NULL;
	for (size_t i = 0; i < pr->n_sessions; i++)
		if (pr->sessions[i].output && strcmp(pr->sessions[i].output, hs_path_base(file)) == 0)
			matched = &pr->sessions[i];
	if (matched && matched->mode == HS_MODE_FILE_CIRCULAR)
		file_s = matched;
	if (matched && matched->mode == HS_MODE_BUFFERING)
		ring_s = matched;
	for (size_t i = 0; i < pr->n_sessions; i++) {
		const hs_session *x = &pr->sessions[i];
		if (!file_s && x->mode == HS_MODE_FILE_CIRCULAR)
			file_s = x;
		if (!ring_s && x->mode == HS_MODE_BUFFERING)
			ring_s = x;
	}
	if (matched) {
		s->name = matched->name;
		s->has_mode = matched->has_mode;
		s->mode = matched->mode;
	}
	if (file_s) {
		s->file_session = file_s->name;
		s->max_file_mb = file_s->max_file_mb;
	}
	if (ring_s) {
		s->ring_session = ring_s->name;
		s->ring_mb = ring_s->ring_mb;
	}
}

int analyze_estimate(const analyze_opts *o)
{
	analyze_rules rules;
	int rc = analyze_load_rules(o, &rules);
	if (rc)
		return rc;
	hs_estimate_read_opts ro = {.rules = rules.rules, .probe = true};
	hs_estimate_trace *t = NULL;
	hs_status st = hs_estimate_read(o->file, &ro, &t);
	if (!t) {
		if (st == HS_EUNSUPPORTED)
			fprintf(stderr, "analyze: %s is a trace.dat; this build has no libtracecmd to read it (Linux only)\n",
				o->file);
		else if (st == HS_EINVAL)
			fprintf(stderr, "analyze: %s: neither a trace.dat nor an .etl file\n", o->file);
		else
			fprintf(stderr, "analyze: %s: %s\n", o->file, hs_strerror(st));
		analyze_free_rules(&rules);
		return HS_EXIT_USAGE;
	}
	hs_platform platform = t->format == HS_ESTIMATE_TRACEDAT ? HS_PLATFORM_LINUX : HS_PLATFORM_WINDOWS;
	hs_estimate_session s = {.file = o->file, .read_status = st, .trace = t};
	match_session(rules.rules, platform, o->file, &s);
	/* Offline the trace stands in for either kind of session. */
	s.project_file = s.project_ring = true;
	/* tracefs rings and key-event files are per CPU: the sizes split over the file's CPUs. */
	s.split_cpus = t->format == HS_ESTIMATE_TRACEDAT ? t->n_cpu : 0;
	hs_estimate_report r = {.profile = rules.rules ? rules.rules->name : NULL,
				.rules_path = rules.path,
				.platform = platform,
				.sessions = &s,
				.n_sessions = 1};
	hs_status ps = o->json ? hs_estimate_print_json(&r, stdout) : hs_estimate_print_text(&r, stdout);
	if (ps != HS_OK)
		rc = HS_EXIT_USAGE;
	else if (st != HS_OK || hs_problems_count(&t->problems)) {
		/* Damage: every readable record was counted; say what was not. */
		for (size_t i = 0; i < hs_problems_count(&t->problems); i++) {
			char text[HS_PROBLEM_TEXT_MAX];
			fprintf(stderr, "analyze: %s\n",
				hs_problem_format(hs_problems_at(&t->problems, i), text, sizeof text));
		}
		rc = HS_EXIT_FINDINGS;
	}
	hs_estimate_trace_free(t);
	analyze_free_rules(&rules);
	return rc;
}
