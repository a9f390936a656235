/* report/render_html.c: report.html: one self-contained page (inline CSS, one hashed script) with the verdict, a timeline of the window, the findings, the thread and the coverage box. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/render.h"

static const char *const lane_names[LANE_N] = {"signals and faults",    "memory", "processes", "storage", "network",
					       "kernel log and markers"};

/* The timeline's zoom: wheel zooms around the pointer, drag pans, buttons jump
 * to the moment's neighbourhood, a double click shows the whole window. It
 * only changes the inner <svg>'s viewBox and the two end labels; without it
 * the timeline is the same picture, unzoomed. Its SHA-256 is in the page's
 * Content-Security-Policy (TL_SCRIPT_SHA256), so no other script can run: the
 * browser test fails if the two ever disagree. */
#define TL_SCRIPT                                                                                                     \
	"(function(){var d=document.getElementById('tl');if(!d)return;var v=d.querySelector('svg.tlv');"             \
	"var W=+d.dataset.w,H=+d.dataset.h,T0=+d.dataset.t0,SP=+d.dataset.span,M=+d.dataset.m,x0=0,w=W;"          \
	"var L=document.getElementById('tl-l'),R=document.getElementById('tl-r');"                                 \
	"function f(n){return (n/1e9).toFixed(6)+' s';}"                                                           \
	"function set(a,b){b=Math.max(W*1e-7,Math.min(W,b));a=Math.max(0,Math.min(W-b,a));x0=a;w=b;"              \
	"v.setAttribute('viewBox',a+' 0 '+b+' '+H);L.textContent=f(T0+SP*a/W);R.textContent=f(T0+SP*(a+b)/W);"     \
	"d.dataset.zoom=(W/b).toPrecision(3);}"                                                                    \
	"var o=d.querySelector('svg');o.addEventListener('wheel',function(e){e.preventDefault();var r=v.getBoundingClientRect();"                 \
	"var p=(e.clientX-r.left)/r.width,c=x0+p*w,n=w*(e.deltaY<0?0.8:1.25);set(c-p*n,n);},{passive:false});"    \
	"var g=null;o.addEventListener('mousedown',function(e){g={x:e.clientX,a:x0};});"                           \
	"window.addEventListener('mouseup',function(){g=null;});"                                                   \
	"window.addEventListener('mousemove',function(e){if(!g)return;var r=v.getBoundingClientRect();"            \
	"set(g.a-(e.clientX-g.x)/r.width*w,w);});"                                                                  \
	"o.addEventListener('dblclick',function(){set(0,W);});"                                                     \
	"var c=document.getElementById('tl-ctl');c.hidden=false;c.addEventListener('click',function(e){"          \
	"var z=e.target.dataset?+e.target.dataset.z:0;if(!z){if(e.target.dataset&&e.target.dataset.z==='0')"       \
	"set(0,W);return;}var m=(M-T0)/SP*W,h=z*W/SP;set(m-h,2*h);});})();"
#define TL_SCRIPT_SHA256 "Xa1RY7LyTaUXQip5g3/GnWPSIZZRL73i/pf551AtzrY="

/* Time x of ns in the inner drawing (0..W). */
/* e's SYSTEM/NAME, sep, its detail and, when it has one, its story between story_open and story_close, escaped. */
static void esc_event(hs_strbuf *sb, const hs_rpt_event *e, const char *sep, const char *story_open,
		      const char *story_close)
{
	hs_rpt_markup_esc(sb, e->system);
	hs_sb_append(sb, "/");
	hs_rpt_markup_esc(sb, e->name);
	hs_sb_append(sb, sep);
	hs_rpt_markup_esc(sb, e->detail);
	if (e->story) {
		hs_sb_append(sb, story_open);
		hs_rpt_markup_esc(sb, e->story);
		hs_sb_append(sb, story_close);
	}
}

/* The n lines as a list, escaped; it ends its section's box. */
static void esc_list(hs_strbuf *sb, char (*lines)[400], size_t n)
{
	hs_sb_append(sb, "<ul>");
	for (size_t i = 0; i < n; i++) {
		hs_sb_append(sb, "<li>");
		hs_rpt_markup_esc(sb, lines[i]);
		hs_sb_append(sb, "</li>");
	}
	hs_sb_append(sb, "</ul></div>\n");
}

static double tl_x(uint64_t ns, uint64_t t0, double span, double W)
{
	if (ns <= t0)
		return 0;
	double x = W * ((double)(ns - t0) / span);
	return x > W ? W : x;
}

static void svg_timeline(const hs_report *r, hs_strbuf *sb)
{
	const double W = 900, left = 170, lane_h = 26, cov_h = 14;
	uint64_t t0 = r->win_first, t1 = r->win_last > r->win_first ? r->win_last : r->win_first + 1;
	double span = (double)(t1 - t0);
	/* Below the event lanes, one thin lane per file and CPU: what the rings
	 * hold (the part before a CPU's oldest record is gone) and where they lost
	 * events (holes). At most HS_REPORT_MAX_COV_LANES, then the rest is said. */
	size_t n_cov = 0, cov_more = 0;
	for (size_t i = 0; i < r->n_files; i++)
		for (unsigned c = 0; r->files[i].opened && c < r->files[i].cpus; c++)
			if (r->files[i].cpu_n[c]) {
				if (n_cov < HS_REPORT_MAX_COV_LANES)
					n_cov++;
				else
					cov_more++;
			}
	double ev_h = lane_h * LANE_N, H = 30 + ev_h + 8 + cov_h * (double)n_cov;
	hs_sb_printf(sb,
		     "<div id=\"tl\" data-w=\"%.0f\" data-h=\"%.0f\" data-t0=\"%" PRIu64 "\" data-span=\"%.0f\" "
		     "data-m=\"%" PRIu64 "\" data-zoom=\"1\">\n"
		     "<p id=\"tl-ctl\" hidden>Zoom: <button data-z=\"0\">whole window</button> "
		     "<button data-z=\"1000000000\">moment &#177;1 s</button> "
		     "<button data-z=\"100000000\">&#177;100 ms</button> <button data-z=\"10000000\">&#177;10 ms</button> "
		     "(wheel: zoom, drag: move, double click: whole window)</p>\n",
		     W, H, t0, span, r->moment);
	hs_sb_printf(sb,
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
		     "aria-label=\"timeline of the window\">\n",
		     W + left + 20, H);
	for (int l = 0; l < LANE_N; l++) {
		double y = 20 + l * lane_h;
		hs_sb_printf(sb, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" class=\"lane%d\"/>", left,
			     y, W, lane_h - 4, l & 1);
		hs_sb_printf(sb, "<text x=\"4\" y=\"%.0f\" class=\"ll\">%s</text>\n", y + 15, lane_names[l]);
	}
	size_t k = 0;
	for (size_t i = 0; i < r->n_files && k < n_cov; i++)
		for (unsigned c = 0; r->files[i].opened && c < r->files[i].cpus && k < n_cov; c++)
			if (r->files[i].cpu_n[c]) {
				hs_sb_printf(sb, "<text x=\"4\" y=\"%.0f\" class=\"cl\">", 30 + ev_h + 8 + cov_h * (double)k + 9);
				hs_rpt_markup_esc(sb, r->files[i].name);
				hs_sb_printf(sb, " cpu %u</text>\n", c);
				k++;
			}
	/* The drawing that zooms: x is time, 0..W over the window. */
	hs_sb_printf(sb,
		     "<svg class=\"tlv\" x=\"%.0f\" y=\"0\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		     "preserveAspectRatio=\"none\">\n",
		     left, W, H, W, H);
	k = 0;
	for (size_t i = 0; i < r->n_files && k < n_cov; i++) {
		const hs_rpt_file *f = &r->files[i];
		for (unsigned c = 0; f->opened && c < f->cpus && k < n_cov; c++) {
			if (!f->cpu_n[c])
				continue;
			double y = 30 + ev_h + 8 + cov_h * (double)k++;
			double a = tl_x(f->cpu_first[c], t0, span, W), b = tl_x(f->cpu_last[c], t0, span, W);
			char x0[32], x1[32];
			if (a > 0) {
				hs_rpt_fmt_ts(f->cpu_first[c], x0, sizeof x0);
				hs_sb_printf(sb,
					     "<rect x=\"0\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" class=\"gone\"><title>cpu %u "
					     "of ",
					     y, a, cov_h - 4, c);
				hs_rpt_markup_esc(sb, f->name);
				hs_sb_printf(sb, ": nothing before %s s (the ring does not reach back here)</title></rect>\n", x0);
			}
			hs_rpt_fmt_ts(f->cpu_first[c], x0, sizeof x0);
			hs_rpt_fmt_ts(f->cpu_last[c], x1, sizeof x1);
			hs_sb_printf(sb,
				     "<rect x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" class=\"held\"><title>cpu %u of ",
				     a, y, b > a ? b - a : 0.001, cov_h - 4, c);
			hs_rpt_markup_esc(sb, f->name);
			hs_sb_printf(sb, ": %s .. %s s, %" PRIu64 " records</title></rect>\n", x0, x1, f->cpu_n[c]);
			for (size_t h = 0; h < f->n_holes; h++) {
				const struct hs_rpt_hole *o = &f->holes[h];
				if (o->cpu != c)
					continue;
				double ha = tl_x(o->from, t0, span, W), hb = tl_x(o->to, t0, span, W);
				hs_rpt_fmt_ts(o->from, x0, sizeof x0);
				hs_rpt_fmt_ts(o->to, x1, sizeof x1);
				/* A hole across every lane too: events of all kinds may be missing there. */
				hs_sb_printf(sb,
					     "<rect x=\"%.3f\" y=\"20\" width=\"%.3f\" height=\"%.0f\" class=\"hole\"/>"
					     "<rect x=\"%.3f\" y=\"%.0f\" width=\"%.3f\" height=\"%.0f\" class=\"holec\"><title>cpu %u "
					     "of ",
					     ha, hb > ha ? hb - ha : 0.001, ev_h - 4, ha, y, hb > ha ? hb - ha : 0.001, cov_h - 4,
					     c);
				hs_rpt_markup_esc(sb, f->name);
				if (o->missed > 0)
					hs_sb_printf(sb, ": the ring lost %" PRId64 " events between %s and %s s</title></rect>\n",
						     o->missed, x0, x1);
				else
					hs_sb_printf(sb, ": the ring lost events between %s and %s s</title></rect>\n", x0, x1);
			}
		}
	}
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		double x = tl_x(e->ts, t0, span, W);
		double y = 20 + e->lane * lane_h;
		char rel[32];
		hs_rpt_fmt_rel(r, e->ts, rel, sizeof rel);
		hs_sb_printf(sb, "<line x1=\"%.3f\" x2=\"%.3f\" y1=\"%.0f\" y2=\"%.0f\" class=\"tick%s\"><title>", x, x,
			     y + 2, y + lane_h - 6, e->alert ? " alert" : "");
		hs_rpt_markup_esc(sb, rel);
		hs_sb_append(sb, " ");
		esc_event(sb, e, ": ", " \xE2\x80\x94 ", "");
		hs_sb_append(sb, "</title></line>\n");
	}
	if (r->moment >= t0 && r->moment <= t1) {
		double x = tl_x(r->moment, t0, span, W);
		hs_sb_printf(sb,
			     "<line x1=\"%.3f\" x2=\"%.3f\" y1=\"12\" y2=\"%.0f\" class=\"moment\"><title>the moment</title>"
			     "</line>\n",
			     x, x, H - 6);
	}
	hs_sb_append(sb, "</svg>\n");
	if (r->moment >= t0 && r->moment <= t1)
		hs_sb_printf(sb, "<text x=\"%.1f\" y=\"10\" class=\"ml\">moment</text>\n",
			     left + tl_x(r->moment, t0, span, W) - 20);
	char a[32], b[32];
	hs_rpt_fmt_ts(t0, a, sizeof a);
	hs_rpt_fmt_ts(t1, b, sizeof b);
	hs_sb_printf(sb,
		     "<text id=\"tl-l\" x=\"%.0f\" y=\"%.0f\" class=\"ll\">%s s</text><text id=\"tl-r\" x=\"%.0f\" "
		     "y=\"%.0f\" class=\"ll\" text-anchor=\"end\">%s s</text>\n</svg>\n",
		     left, 18.0 + ev_h, a, left + W, 18.0 + ev_h, b);
	if (cov_more)
		hs_sb_printf(sb, "<p>%zu more CPU lanes are not drawn.</p>\n", cov_more);
	hs_sb_append(sb, "<script>" TL_SCRIPT "</script>\n</div>\n");
}

void hs_rpt_render_html(const hs_report *r, hs_strbuf *sb)
{
	hs_sb_append(
		sb,
		"<!DOCTYPE html>\n<!-- hindsight report -->\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
		"script-src 'sha256-" TL_SCRIPT_SHA256 "'\">\n"
		"<title>hindsight report</title>\n<style>\n"
		"body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1150px;color:#222;padding:0 1em}\n"
		".verdict{font-size:1.25em;background:#fff3f0;border-left:6px solid #c0392b;padding:.6em 1em}\n"
		".verdict p{margin:.2em 0}.f{border:1px solid #ddd;border-radius:6px;margin:1em 0;padding:.5em 1em}\n"
		".f h3{margin:.3em 0}.imp{color:#888;font-weight:normal;font-size:.85em}\n"
		"table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:2px 6px;"
		"vertical-align:top;text-align:left;font-size:.9em}\n.story{color:#666;font-style:italic}\n"
		".cov{background:#f6f8fa;border:1px solid #ccd;padding:.5em 1em}.warn{color:#b00;font-weight:bold}\n"
		"svg .lane0{fill:#fafafa}svg .lane1{fill:#f0f0f4}svg .ll{font:11px sans-serif;fill:#444}\n"
		"svg .tick{stroke:#2c6fbb;stroke-width:2}svg .tick.alert{stroke:#c0392b;stroke-width:3}\n"
		".thr{border:1px solid #ddd;border-radius:6px;padding:.5em 1em}.thr li{font-family:monospace;white-space:pre-wrap}\n"
		".bar{display:flex;height:18px;border:1px solid #aaa;margin:.3em 0}\n"
		".bar span{display:block;height:100%;overflow:hidden;font:11px/18px sans-serif;color:#fff;text-indent:4px}\n"
		"svg .moment{stroke:#c0392b;stroke-dasharray:4 3;stroke-width:2}svg .ml{font:11px sans-serif;fill:#c0392b}\n"
		"svg .tlv line{vector-effect:non-scaling-stroke}svg .cl{font:10px sans-serif;fill:#555}\n"
		"svg .held{fill:#cfe8cf}svg .gone{fill:#e4e4e4}svg .holec{fill:#e74c3c}svg .hole{fill:#e74c3c;opacity:.15}\n"
		"#tl svg.tlv{cursor:grab}\n"
		".whyb{border:1px solid #ddd;border-radius:6px;padding:.5em 1em}.whyb li{font-family:monospace;white-space:pre-wrap}\n"
		"svg.why .lane{font:11px sans-serif;fill:#444}svg.why .wake{fill:#c0392b}\n"
		".r0{fill:#c0392b;background:#c0392b}.r1{fill:#e67e22;background:#e67e22}.r2{fill:#2980b9;background:#2980b9}"
		".r3{fill:#8e44ad;background:#8e44ad}.r4{fill:#16a085;background:#16a085}.r5{fill:#7f8c8d;background:#7f8c8d}"
		".r6{fill:#d35400;background:#d35400}.r7{fill:#27ae60;background:#27ae60}.r8{fill:#95a5a6;background:#95a5a6}\n"
		"details.bg{margin:1em 0}\n"
		"</style></head><body>\n<h1>hindsight report</h1>\n<p>");
	hs_rpt_markup_esc(sb, r->input);
	hs_sb_append(sb, " (");
	hs_rpt_markup_esc(sb, r->input_kind);
	hs_sb_append(sb, ")</p>\n<div class=\"verdict\" id=\"verdict\">");
	for (int i = 0; i < 2; i++)
		if (r->verdict[i][0]) {
			hs_sb_append(sb, "<p>");
			hs_rpt_markup_esc(sb, r->verdict[i]);
			hs_sb_append(sb, "</p>");
		}
	hs_sb_append(sb, "</div>\n");
	char m[32];
	hs_rpt_fmt_ts(r->moment, m, sizeof m);
	hs_sb_append(sb, "<h2>Timeline</h2>\n<p>Seconds of the ");
	hs_rpt_markup_esc(sb, r->clock[0] ? r->clock : "trace's");
	hs_sb_printf(sb,
		     " trace clock; the dashed line is the moment (%s s). Hover a tick for its event and story.</p>\n",
		     m);
	svg_timeline(r, sb);
	/* why: the reasons, then the lanes of the thread, its CPUs and its wake-ups */
	char wl[40][400];
	size_t nwl = hs_rpt_why_lines(r, wl, 40);
	if (nwl) {
		hs_sb_append(sb, "<h2>Why</h2>\n<div class=\"whyb\" id=\"why\"><p>");
		hs_rpt_markup_esc(sb, wl[0]);
		hs_sb_append(sb, "</p>\n");
		hs_rpt_html_why(sb, r);
		esc_list(sb, wl + 1, nwl - 1);
	}
	size_t n_fg = 0;
	for (size_t k = 0; k < r->n_findings; k++)
		n_fg += !r->findings[k].background;
	hs_sb_printf(sb, "<h2>Findings (%zu)</h2>\n", n_fg);
	for (size_t k = 0; k < r->n_findings; k++) {
		const hs_rpt_finding *f = &r->findings[k];
		if (f->background && k == n_fg)
			hs_sb_printf(sb, "<details class=\"bg\" id=\"background\"><summary>Background (%zu): not tied to the "
					 "moment</summary>\n",
				     r->n_findings - n_fg);
		hs_sb_printf(sb, "<div class=\"f\" id=\"finding-%zu\"><h3>%zu. ", k + 1, k + 1);
		hs_rpt_markup_esc(sb, f->title);
		hs_sb_append(sb, " <span class=\"imp\">[");
		hs_rpt_markup_esc(sb, f->kind);
		hs_sb_printf(sb, ", impact %d]</span></h3>\n<p>", f->impact);
		hs_rpt_markup_esc(sb, f->text);
		hs_sb_append(sb, "</p>\n");
		if (f->n_notes) {
			hs_sb_append(sb, "<ul>");
			for (size_t i = 0; i < f->n_notes; i++) {
				hs_sb_append(sb, "<li>");
				hs_rpt_markup_esc(sb, f->notes[i]);
				hs_sb_append(sb, "</li>");
			}
			hs_sb_append(sb, "</ul>\n");
		}
		if (f->n_ev) {
			hs_sb_append(
				sb,
				"<table><tr><th>time</th><th>cpu</th><th>pid</th><th>task</th><th>event</th><th>what it "
				"says</th></tr>\n");
			for (size_t i = 0; i < f->n_ev; i++) {
				const hs_rpt_event *e = &r->events[f->ev[i]];
				char rel[32];
				hs_rpt_fmt_rel(r, e->ts, rel, sizeof rel);
				hs_sb_printf(sb, "<tr><td>%s</td><td>%d</td><td>%d</td><td>", rel, e->cpu, e->pid);
				hs_rpt_markup_esc(sb, e->comm);
				hs_sb_append(sb, "</td><td>");
				esc_event(sb, e, "</td><td>", "<br><span class=\"story\">", "</span>");
				hs_sb_append(sb, "</td></tr>\n");
			}
			hs_sb_append(sb, "</table>\n");
		}
		hs_sb_append(sb, "<p><b>Next:</b> ");
		hs_rpt_markup_esc(sb, f->next);
		hs_sb_append(sb, "</p></div>\n");
		if (f->background && k + 1 == r->n_findings)
			hs_sb_append(sb, "</details>\n");
	}
	/* The thread: a bar of its states (inline style widths: no script), then the text's own lines. */
	char tl[16][400];
	size_t ntl = hs_rpt_thread_lines(r, tl, 16);
	if (ntl) {
		static const char *const colours[TS_N] = {"#2e8b57", "#e0a800", "#7fa7d9", "#c0392b", "#888", "#ccc"};
		hs_sb_append(sb, "<h2>The thread before the moment</h2>\n<div class=\"thr\" id=\"thread\"><p>");
		hs_rpt_markup_esc(sb, tl[0]);
		hs_sb_append(sb, "</p>\n");
		const hs_rpt_thread *t = &r->thread;
		if (t->analysed && t->cov1 > t->cov0) {
			hs_sb_append(sb, "<div class=\"bar\">");
			for (int s = 0; s < TS_N; s++) {
				double p = hs_rpt_pct(t->ns[s], t->cov1 - (t->born > t->cov0 ? t->born : t->cov0));
				if (p < 0.05)
					continue;
				/* labelled where it is wide enough: readable without hovering */
				hs_sb_printf(sb, "<span style=\"width:%.2f%%;background:%s\" title=\"%s %.1f %%\">%s</span>",
					     p, colours[s], hs_rpt_tstate_names[s], p, p >= 8 ? hs_rpt_tstate_keys[s] : "");
			}
			hs_sb_append(sb, "</div>\n");
		}
		esc_list(sb, tl + 1, ntl - 1);
	}
	/* The coverage box: the text's own lines, so both always say the same. */
	hs_sb_append(sb, "<h2>Coverage</h2>\n<div class=\"cov\" id=\"coverage\"><pre>");
	hs_strbuf cov = {0};
	hs_rpt_coverage_text(r, &cov);
	hs_rpt_markup_esc(sb, cov.len ? hs_sb_cstr(&cov) : "");
	hs_sb_free(&cov);
	hs_sb_append(sb, "</pre></div>\n</body></html>\n");
}

