/* report/render.h: the renderers (text, JSON, HTML, WPA regions), which only read the model, and the pieces they share (render_common.c). */
#ifndef HS_REPORT_RENDER_H
#define HS_REPORT_RENDER_H

#include "hindsight/json.h"
#include "report/model.h"

void hs_rpt_render_text(const hs_report *r, hs_strbuf *sb);
void hs_rpt_render_json(const hs_report *r, hs_strbuf *sb);
void hs_rpt_render_html(const hs_report *r, hs_strbuf *sb);
/* The WPA Regions of Interest file of files[fi] (an .etl read): the moment and the findings' manifest events. */
void hs_rpt_render_regions(const hs_report *r, size_t fi, hs_strbuf *sb);
/* "<name>.regions.xml" for an .etl named name (its base name without the extension). */
void hs_rpt_regions_name(const char *name, char *out, size_t cap);

/* ---- render_common.c ---- */

/* The thread's states as the text says them, and as report.json's keys. */
extern const char *const hs_rpt_tstate_names[TS_N];
extern const char *const hs_rpt_tstate_keys[TS_N];
/* part in percent of whole (0 for an empty whole). */
double hs_rpt_pct(uint64_t part, uint64_t whole);
/* The lines the text and the HTML show of the thread section: a title, then one sentence per line. */
size_t hs_rpt_thread_lines(const hs_report *r, char lines[][400], size_t cap);
/* The coverage box as the text shows it (the HTML shows the same lines), from its "COVERAGE" title. */
void hs_rpt_coverage_text(const hs_report *r, hs_strbuf *sb);
/* ---- render_why.c ---- */

/* The WHY section's lines (a title, then the reasons with their evidence); 0 when no thread was chosen. */
size_t hs_rpt_why_lines(const hs_report *r, char lines[][400], size_t cap);
/* report.json's cause object of the explained finding (r->why analysed, with a reason). */
void hs_rpt_json_cause(hs_json *j, const hs_report *r);
/* report.html's lanes: the thread's state and reasons, who ran on its CPUs, its wake-ups. */
void hs_rpt_html_why(hs_strbuf *sb, const hs_report *r);

/* s with < > & " ' as character references, for HTML and XML (report.html, the WPA regions file). */
void hs_rpt_markup_esc(hs_strbuf *sb, const char *s);

#endif
