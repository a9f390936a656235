/* analyze/trace.c: what counts, summary and crash share over both formats (opening either and writing the result, the walk that counts records per identity, the problems in JSON), below them and tracedat.c so no two files call each other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "hindsight/event.h"

int analyze_open_tracedat(const char *path, hs_tracedat **out)
{
	hs_status st = hs_tracedat_open(path, out);
	if (st == HS_OK)
		return 0;
	if (st == HS_EUNSUPPORTED)
		fprintf(stderr, "analyze: %s is a trace.dat; this build has no libtracecmd to read it (Linux only)\n", path);
	else if (*out)
		analyze_report_problems(hs_tracedat_problems(*out));
	else
		fprintf(stderr, "analyze: %s: %s\n", path, hs_strerror(st));
	hs_tracedat_close(*out);
	*out = NULL;
	return HS_EXIT_USAGE;
}

int analyze_trace_run(const analyze_cmd *c, analyze_cmd_fn fn)
{
	analyze_trace t = {0};
	int rc = hs_tracedat_sniff(c->o->file) ? analyze_open_tracedat(c->o->file, &t.td)
					       : analyze_open_etl(c->o->file, &t.etl);
	if (rc)
		return rc;
	hs_strbuf sb = {0};
	rc = fn(c, &t, &sb);
	if (rc)
		hs_sb_free(&sb);
	else if (hs_sb_write_free(&sb, stdout) != HS_OK)
		rc = HS_EXIT_USAGE;
	else
		rc = analyze_report_problems(t.td ? hs_tracedat_problems(t.td) : hs_etl_problems(t.etl));
	hs_tracedat_close(t.td);
	hs_etl_close(t.etl);
	return rc;
}

void analyze_json_trace_problems(hs_json *j, const analyze_trace *t)
{
	if (t->td)
		analyze_json_problem_texts(j, hs_tracedat_problems(t->td));
	else
		analyze_json_problems(j, hs_etl_problems(t->etl));
}

/* One record of either format: counted under k (named from e, may be NULL), and its time when it has one.
 * Out of memory stops the walk; the table remembers it (hs_event_counts_failed). */
static int tally(analyze_tally *t, const hs_event_key *k, const hs_event *e, bool timed, uint64_t time)
{
	hs_event_count *n = hs_event_counts_add(t->counts, k, e);
	if (n && timed)
		hs_event_count_time(&t->all, time);
	return !n;
}

typedef struct {
	analyze_tally *t;
	const hs_etl *etl;
	bool by_id;
} etl_walk;

static int on_etl(const hs_etl_record *r, void *vctx)
{
	etl_walk *w = vctx;
	analyze_progress(w->etl, r);
	hs_event e;
	hs_event_from_etl(r, &e);
	/* The counts format names events by id: TraceLogging names do not split them. */
	hs_event_key k = e.key;
	if (w->by_id)
		k.name_hash = 0;
	return tally(w->t, &k, w->by_id ? NULL : &e, r->filetime && !e.session_header, r->filetime);
}

static int on_tracedat(const hs_tracedat_record *r, void *vctx)
{
	analyze_tally *t = vctx;
	hs_event e;
	hs_event_from_tracedat(r, &e);
	if (tally(t, &e.key, &e, true, e.time_ns))
		return 1;
	size_t b = 0;
	for (size_t i = 0; e.buffer[0] && i < t->info->n_instances; i++)
		if (strcmp(t->info->instances[i], e.buffer) == 0)
			b = i + 1;
	t->per_buffer[b]++;
	return 0;
}

bool analyze_tally_trace(const analyze_trace *tr, bool by_id, analyze_tally *t)
{
	memset(t, 0, sizeof(*t));
	if (tr->td) {
		t->info = hs_tracedat_get_info(tr->td);
		t->per_buffer = calloc(t->info->n_instances + 1, sizeof(*t->per_buffer));
		if (!t->per_buffer || hs_event_counts_new(&t->counts) != HS_OK)
			return false;
		hs_tracedat_foreach(tr->td, on_tracedat, t);
	} else {
		etl_walk w = {t, tr->etl, by_id};
		if (hs_event_counts_new(&t->counts) == HS_OK)
			hs_etl_foreach(tr->etl, HS_ETL_FILE_ORDER, on_etl, &w);
		analyze_progress_done();
	}
	return t->counts && !hs_event_counts_failed(t->counts);
}

void analyze_tally_free(analyze_tally *t)
{
	hs_event_counts_free(t->counts);
	free(t->per_buffer);
	memset(t, 0, sizeof(*t));
}
