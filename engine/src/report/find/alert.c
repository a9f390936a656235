/* report/find/alert.c: the alert detector: events with a catalog alert tag no other detector reads (gpu-reset and device-removed have theirs). */
#include <string.h>

#include "report/find/common.h"

static void find_alert(hs_report *r)
{
	static const char *const theirs[] = {"gpu-reset", "device-removed", NULL};
	static const hs_rpt_shape_words linux_words = {
		.kind = "alert",
		.impact = 75,
		.what = "catalog alert event",
		.next = "the events' stories below and the catalog entry for them",
	};
	static const hs_rpt_shape_words windows_words = {
		.kind = "alert",
		.impact = 75,
		.what = "catalog alert",
		.next = "the events' stories below and the catalog entry for them",
		.story_text = true,
		.event_title = true,
	};
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		bool other = e->shape == HS_DEC_ALERT;
		for (size_t k = 0; other && theirs[k]; k++)
			other = !e->alert || strcmp(e->alert, theirs[k]) != 0;
		if (other) {
			hs_rpt_find_shape(r, HS_DEC_ALERT, NULL, theirs,
					  e->platform == HS_RPT_WINDOWS ? &windows_words : &linux_words);
			return;
		}
	}
}

const hs_rpt_detector hs_rpt_find_alert = {"alert", 75, HS_RPT_LINUX | HS_RPT_WINDOWS, NULL, find_alert};
