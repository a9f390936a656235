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

static const hs_rpt_shape_words linux_words = {
	.what = "connection reset",
	.next = "which side reset it (send vs receive) and the application's ports; a firewall or a peer that crashed "
		"or closed early",
};

static const hs_rpt_shape_words windows_words = {
	.what = "connection abort",
	.next = "which side gave up and why: a local abort (the app or a firewall) or a retransmit timeout (the path "
		"or the peer vanished); the adapter's state at the time (its link and power events)",
	.catalog_named = true,
	.verdict = windows_verdict,
};

const hs_rpt_detector hs_rpt_find_disconnect = {"disconnect", 60, HS_RPT_LINUX | HS_RPT_WINDOWS, "disconnect",
						.shape = HS_DEC_DISCONNECT, .words = &linux_words,
						.windows_words = &windows_words};
