/* report/find/trigger_marker.c: the engine's own marker ("hindsight: trigger NAME fired; snapshot NNN; hit at X ns, detected at Y ns, H hits") as a finding; without snapshot.json (a lone .etl) it also says what the trigger was. */
#include <stdio.h>

#include "report/find/common.h"

static void find_marker(hs_report *r)
{
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_MARKER || !e->marker_text)
			continue;
		hs_rpt_finding *f = hs_rpt_new_finding(r, "trigger", 30, e->ts, e->pid);
		if (!f)
			return;
		hs_rpt_add_ev(r, f, i);
		char when[32], name[64] = "";
		unsigned snap = 0;
		unsigned long long hit = 0, det = 0, hits = 0;
		hs_rpt_fmt_ts(e->ts, when, sizeof when);
		int got = sscanf(e->detail,
				 "hindsight: trigger %63s fired; snapshot %u; hit at %llu ns, detected at %llu ns, %llu hits",
				 name, &snap, &hit, &det, &hits);
		snprintf(f->title, sizeof f->title, "hindsight's marker: %s", got >= 2 ? name : "a snapshot was taken");
		snprintf(f->verdict, sizeof f->verdict, "hindsight marked the moment at %s s: %s.", when, e->detail);
		snprintf(f->text, sizeof f->text,
			 "The engine writes this marker into every session just before it takes a snapshot; the events "
			 "before it are what the trigger caught. %s",
			 e->detail);
		snprintf(f->next, sizeof f->next, "the findings above it; in WPA, the regions file marks this moment");
		hs_rpt_trigger *t = &r->trig;
		if (t->present || got < 2)
			continue;
		/* the marker's clock is the session's, as the walk reads it: the hit is used when it lies in the file */
		const hs_rpt_file *fl = &r->files[e->file];
		t->present = t->from_marker = true;
		snprintf(t->name, sizeof t->name, "%s", name);
		snprintf(t->kind, sizeof t->kind, "from the marker");
		t->snapshot_no = snap;
		t->hits = (int64_t)hits;
		t->hit_pid = -1;
		bool in_file = got >= 3 && hit >= fl->first_ns && hit <= fl->last_ns + 1000000000ull;
		t->first_hit_ns = in_file ? hit : e->ts;
		t->hit_ts = t->first_hit_ns;
		t->detect_ms = got >= 4 && det >= hit ? (double)(det - hit) / 1e6 : 0;
	}
}

const hs_rpt_detector hs_rpt_find_trigger_marker = {"trigger", 30, HS_RPT_WINDOWS, NULL, .find = find_marker};
