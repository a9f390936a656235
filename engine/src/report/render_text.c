/* report/render_text.c: report.txt: the verdict, the findings with their evidence, the thread before the moment and the coverage box. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/render.h"

/* Evidence rows that repeat (same event, same task) collapse after the first two. */
static size_t run_length(const hs_report *r, const hs_rpt_finding *f, size_t k)
{
	const hs_rpt_event *a = &r->events[f->ev[k]];
	size_t n = 1;
	while (k + n < f->n_ev) {
		const hs_rpt_event *b = &r->events[f->ev[k + n]];
		if (strcmp(a->name, b->name) || strcmp(a->system, b->system) || strcmp(a->comm, b->comm))
			break;
		n++;
	}
	return n;
}

/* A section of lines: "HEAD: first", the rest indented under it; nothing when there are none. */
static void line_section(hs_strbuf *sb, const char *head, char (*lines)[400], size_t n)
{
	if (!n)
		return;
	hs_sb_printf(sb, "\n%s: %s\n", head, lines[0]);
	for (size_t i = 1; i < n; i++)
		hs_sb_printf(sb, "  %s\n", lines[i]);
}

void hs_rpt_render_text(const hs_report *r, hs_strbuf *sb)
{
	char m[32];
	hs_sb_printf(sb, "hindsight report: %s (%s)\n", r->input, r->input_kind);
	hs_sb_printf(sb, "VERDICT: %s\n", r->verdict[0]);
	if (r->verdict[1][0])
		hs_sb_printf(sb, "         %s\n", r->verdict[1]);
	hs_rpt_fmt_ts(r->moment, m, sizeof m);
	hs_sb_printf(sb,
		     "\nTimes are seconds of the %s trace clock; evidence times are relative to the moment, %s s.\n",
		     r->clock[0] ? r->clock : "trace's", m);
	if (r->damaged)
		hs_sb_printf(sb, "Some data could not be read: see COVERAGE before trusting what is missing.\n");
	char wl[40][400];
	line_section(sb, "WHY", wl, hs_rpt_why_lines(r, wl, 40));
	size_t n_fg = 0;
	for (size_t k = 0; k < r->n_findings; k++)
		n_fg += !r->findings[k].background;
	hs_sb_printf(sb, "\nFINDINGS (%zu, most severe first)\n", n_fg);
	if (!n_fg)
		hs_sb_printf(sb, "\n  none\n");
	for (size_t k = 0; k < r->n_findings; k++) {
		const hs_rpt_finding *f = &r->findings[k];
		if (f->background) {
			/* below the fold: what the machine did that the moment is not about, one line each */
			if (k == n_fg)
				hs_sb_printf(sb, "\nBACKGROUND (%zu, not tied to the moment: other processes, outside the window, "
						 "no alert)\n",
					     r->n_findings - n_fg);
			hs_sb_printf(sb, "  %zu. %s  [%s, impact %d]\n", k + 1, f->title, f->kind, f->impact);
			continue;
		}
		hs_sb_printf(sb, "\n%zu. %s  [%s, impact %d]\n", k + 1, f->title, f->kind, f->impact);
		hs_sb_printf(sb, "   %s\n", f->text);
		for (size_t i = 0; i < f->n_notes; i++)
			hs_sb_printf(sb, "   - %s\n", f->notes[i]);
		if (f->n_ev)
			hs_sb_printf(sb, "   evidence:\n");
		const char *told[64];
		size_t n_told = 0;
		for (size_t i = 0; i < f->n_ev;) {
			size_t run = run_length(r, f, i);
			size_t show = run > 3 ? 2 : run;
			for (size_t j = 0; j < show; j++) {
				const hs_rpt_event *e = &r->events[f->ev[i + j]];
				char rel[32];
				hs_rpt_fmt_rel(r, e->ts, rel, sizeof rel);
				hs_sb_printf(sb, "     %s  cpu %d  pid %-6d %-16s %s/%s%s%s%s\n", rel, e->cpu, e->pid,
					     e->comm, e->system, e->name, e->alert ? "  [" : "",
					     e->alert ? e->alert : "", e->alert ? "]" : "");
				hs_sb_printf(sb, "         %s\n", e->detail);
				bool seen = false;
				for (size_t t = 0; t < n_told; t++)
					seen |= told[t] == e->story;
				if (e->story && !seen) {
					hs_sb_printf(sb, "         story: %s\n", e->story);
					if (n_told < 64)
						told[n_told++] = e->story;
				}
			}
			if (run > show) {
				char rel[32];
				hs_rpt_fmt_rel(r, r->events[f->ev[i + run - 1]].ts, rel, sizeof rel);
				hs_sb_printf(sb, "     ... %zu more x %s/%s of %s, until %s\n", run - show,
					     r->events[f->ev[i]].system, r->events[f->ev[i]].name,
					     r->events[f->ev[i]].comm, rel);
			}
			i += run;
		}
		hs_sb_printf(sb, "   next: %s\n", f->next);
	}
	char tl[16][400];
	line_section(sb, "THE THREAD BEFORE THE MOMENT", tl, hs_rpt_thread_lines(r, tl, 16));
	hs_sb_putc(sb, '\n');
	hs_rpt_coverage_text(r, sb);
	char sig[HS_FLEET_SIGNATURE_MAX + 96];
	hs_rpt_signature_line(r, sig, sizeof sig);
	hs_sb_printf(sb, "\n%s\n", sig);
}
