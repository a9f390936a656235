/* report/render_wpa.c: the WPA Regions of Interest file of an .etl read (Microsoft's "Creating a Regions of Interest File"): the moment and each finding from its first to its last manifest event. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/render.h"

/* A region GUID that is the same for the same file, region and event: FNV-1a over them, shaped as a GUID
 * (version-4 and variant bits set), so two reports of one trace give one regions file. */
static void region_guid(const char *file, const char *what, size_t n, char out[40])
{
	uint64_t h1 = 1469598103934665603ull, h2 = 1099511628211ull * 31u;
	const char *parts[2] = {file, what};
	for (int p = 0; p < 2; p++)
		for (const char *s = parts[p]; *s; s++) {
			h1 = (h1 ^ (uint8_t)*s) * 1099511628211ull;
			h2 = (h2 ^ (uint8_t)*s) * 1099511628211ull + 0x9e3779b97f4a7c15ull;
		}
	h1 ^= n * 0x9e3779b97f4a7c15ull;
	h2 ^= n;
	snprintf(out, 40, "{%08" PRIX32 "-%04" PRIX32 "-4%03" PRIX32 "-%04" PRIX32 "-%012" PRIX64 "}",
		 (uint32_t)(h1 >> 32), (uint32_t)(h1 >> 16) & 0xffffu, (uint32_t)h1 & 0xfffu,
		 (uint32_t)(0x8000u | ((h2 >> 48) & 0x3fffu)), (uint64_t)(h2 & 0xffffffffffffu));
}

static void xml_event(hs_strbuf *sb, const hs_rpt_event *e)
{
	char g[37];
	hs_guid_format(&e->guid, g);
	hs_sb_printf(sb, "            <Event Provider=\"{%s}\" Id=\"%u\" Version=\"%u\" />\n", g, e->id, e->version);
}

/* One event-based region: from the start event's kind to the stop event's (WPA matches by provider, id and
 * version: every occurrence in the trace is marked, not only this one). */
static void xml_region(hs_strbuf *sb, const char *file, size_t n, const char *name, const char *friendly,
		       const hs_rpt_event *start, const hs_rpt_event *stop)
{
	char g[40];
	region_guid(file, name, n, g);
	hs_sb_printf(sb, "        <Region Guid=\"%s\" Name=\"", g);
	hs_rpt_markup_esc(sb, name);
	hs_sb_append(sb, "\" FriendlyName=\"");
	hs_rpt_markup_esc(sb, friendly);
	hs_sb_append(sb, "\">\n          <Start>\n");
	xml_event(sb, start);
	hs_sb_append(sb, "          </Start>\n          <Stop>\n");
	xml_event(sb, stop);
	hs_sb_append(sb, "          </Stop>\n        </Region>\n");
}

void hs_rpt_regions_name(const char *name, char *out, size_t cap)
{
	char base[200];
	snprintf(base, sizeof base, "%s", name);
	char *dot = strrchr(base, '.');
	if (dot && dot != base)
		*dot = '\0';
	snprintf(out, cap, "%s.regions.xml", base);
}

void hs_rpt_render_regions(const hs_report *r, size_t fi, hs_strbuf *sb)
{
	const hs_rpt_file *fl = &r->files[fi];
	hs_sb_append(sb, "<?xml version='1.0' encoding='utf-8' standalone='yes'?>\n"
			 "<!-- hindsight regions: WPA Regions of Interest for ");
	/* a comment may not hold "--" */
	for (const char *s = fl->name; *s; s++)
		hs_sb_putc(sb, s[0] == '-' && s[1] == '-' ? '_' : *s);
	hs_sb_append(sb, ", written by analyze report (docs/report.md) -->\n<InstrumentationManifest>\n"
			 "  <Instrumentation>\n    <Regions>\n");
	char root[40];
	region_guid(fl->name, "root", 0, root);
	hs_sb_printf(sb, "      <RegionRoot Guid=\"%s\" Name=\"hindsight\" FriendlyName=\"hindsight report\">\n", root);
	size_t n = 0;
	/* the moment: from the strongest finding's first event to the marker, or the marker alone */
	const hs_rpt_event *marker = NULL;
	for (size_t i = 0; i < r->n_events && !marker; i++)
		if (r->events[i].marker_text && r->events[i].file == (int)fi && r->events[i].has_id)
			marker = &r->events[i];
	const hs_rpt_event *lead = NULL;
	for (size_t k = 0; k < r->n_findings && !lead; k++) {
		const hs_rpt_finding *f = &r->findings[k];
		if (f->impact < 20 || !strcmp(f->kind, "trigger"))
			continue;
		for (size_t x = 0; x < f->n_ev && !lead; x++) {
			const hs_rpt_event *e = &r->events[f->ev[x]];
			if (e->has_id && e->file == (int)fi && (!marker || e->ts <= marker->ts))
				lead = e;
		}
	}
	if (marker) {
		char fr[300];
		snprintf(fr, sizeof fr, "the moment: %s",
			 lead ? "from the finding's event to hindsight's marker" : "hindsight's marker");
		xml_region(sb, fl->name, n++, "hindsight-Moment", fr, lead ? lead : marker, marker);
	}
	/* each finding: its first to its last event that WPA can match (manifest events) */
	for (size_t k = 0; k < r->n_findings; k++) {
		const hs_rpt_finding *f = &r->findings[k];
		if (!strcmp(f->kind, "trigger") || f->impact < 20)
			continue; /* the marker has the moment's region; activity is no region of interest */
		const hs_rpt_event *a = NULL, *b = NULL;
		for (size_t x = 0; x < f->n_ev; x++) {
			const hs_rpt_event *e = &r->events[f->ev[x]];
			if (!e->has_id || e->file != (int)fi)
				continue;
			if (!a)
				a = e;
			b = e;
		}
		if (!a)
			continue;
		char name[160];
		snprintf(name, sizeof name, "hindsight-%s-%zu-%s-%s", f->kind, k + 1, a->system, a->name);
		/* the namer's " (id N)": the GUID and id are in the Event */
		char *paren = strstr(name, " (id ");
		if (paren)
			*paren = '\0';
		xml_region(sb, fl->name, n++, name, f->title, a, b);
	}
	if (!n)
		hs_sb_append(sb, "        <!-- no finding of this file has an event WPA can match (manifest events only: a "
				 "provider GUID and an id) -->\n");
	hs_sb_append(sb, "      </RegionRoot>\n    </Regions>\n  </Instrumentation>\n</InstrumentationManifest>\n");
}
