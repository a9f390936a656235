/* report/find/disconnect.c: the disconnect detector: events the catalogs tag `alert: disconnect` (a TCP reset sent or received, a connection aborted or timed out). */
#include <stdio.h>

#include "report/find/common.h"

/* An .etl's TCPIP events carry no decoded ports (the catalogs hold no field layout for them): named by event. */
static void windows_verdict(hs_report *r, hs_rpt_finding *f, const hs_rpt_event *e, size_t n, const char *when)
{
	(void)r;
	bool named = e->comm[0] && e->comm[0] != '?';
	snprintf(f->verdict, sizeof f->verdict, "A TCP connection was aborted at %s s: %s/%s (pid %d%s%s); %zu abort%s in all.",
		 when, e->system, e->name, e->pid, named ? ", " : "", named ? e->comm : "", n, n == 1 ? "" : "s");
}

static void find_disconnect(hs_report *r)
{
	static const hs_rpt_shape_words linux_words = {
		.kind = "disconnect",
		.impact = 60,
		.what = "connection reset",
		.next = "which side reset it (send vs receive) and the application's ports; a firewall or a peer that crashed "
			"or closed early",
	};
	static const hs_rpt_shape_words windows_words = {
		.kind = "disconnect",
		.impact = 60,
		.what = "connection abort",
		.next = "which side gave up and why: a local abort (the app or a firewall) or a retransmit timeout (the path "
			"or the peer vanished); the adapter's state at the time (its link and power events)",
		.story_text = true,
		.event_title = true,
		.verdict = windows_verdict,
	};
	/* worded for the platform of the first one */
	for (size_t i = 0; i < r->n_events; i++)
		if (r->events[i].shape == HS_DEC_DISCONNECT) {
			hs_rpt_find_shape(r, HS_DEC_DISCONNECT, NULL, NULL,
					  r->events[i].platform == HS_RPT_WINDOWS ? &windows_words : &linux_words);
			return;
		}
}

const hs_rpt_detector hs_rpt_find_disconnect = {"disconnect", 60, HS_RPT_LINUX | HS_RPT_WINDOWS, "disconnect",
						find_disconnect};
