/* analyze/report.c: `analyze report PATH`: the command line of the report layer (hindsight/report.h): what went wrong in a snapshot, run folder or trace file, written as report.txt, report.json and report.html and printed. */
#include <stdio.h>
#include <time.h>

#include "analyze.h"
#include "hindsight/compat.h"
#include "hindsight/report.h"

/* Progress on a terminal once a report has taken a second: "analyze: report: FILE 42%". */
typedef struct {
	clock_t start;
	int tty; /* -1 not asked yet */
	bool shown;
} progress_state;

static void on_progress(void *ctx, const char *file, double fraction, bool done)
{
	progress_state *p = ctx;
	if (p->tty < 0)
		p->tty = hs_isatty(2);
	if (!p->tty)
		return;
	if (done) {
		if (p->shown)
			fputs("\r\033[K", stderr);
		p->shown = false;
		return;
	}
	if ((double)(clock() - p->start) < (double)CLOCKS_PER_SEC)
		return;
	fprintf(stderr, "\ranalyze: report: %s %3.0f%%", file, fraction * 100.0);
	fflush(stderr);
	p->shown = true;
}

int analyze_report(const analyze_opts *o)
{
	hs_msg_file mf = {.f = stderr, .prefix = "analyze"};
	hs_msg msg = {.fn = hs_msg_file_fn, .ctx = &mf};
	progress_state ps = {.start = clock(), .tty = -1};
	hs_report_opts ro = {
		.input = o->file,
		.rules = o->rules,
		.default_rules = "stutter.yaml",
		.argv0 = o->argv0,
		.outdir = o->output,
		.generator = "hindsight analyze report",
		.msg = &msg,
		.progress = on_progress,
		.progress_ctx = &ps,
	};
	hs_report *r = NULL;
	if (hs_report_build(&ro, &r) != HS_OK)
		return HS_EXIT_USAGE;
	int rc = hs_report_write(r) == HS_OK ? HS_EXIT_OK : HS_EXIT_USAGE;
	hs_strbuf sb = {0};
	hs_report_render(r, o->json ? HS_REPORT_JSON : HS_REPORT_TEXT, &sb);
	fputs(hs_sb_cstr(&sb), stdout);
	hs_sb_free(&sb);
	if (rc == HS_EXIT_OK && hs_report_damaged(r))
		rc = HS_EXIT_FINDINGS;
	hs_report_free(r);
	return rc;
}
