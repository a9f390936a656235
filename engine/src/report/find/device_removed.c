/* report/find/device_removed.c: the device removal detector: events the catalogs tag `alert: device-removed` (Windows' Kernel-PnP removals). */
#include <stdio.h>

#include "report/find/common.h"

static void verdict(hs_report *r, hs_rpt_finding *f, const hs_rpt_event *e, size_t n, const char *when)
{
	(void)r;
	snprintf(f->verdict, sizeof f->verdict, "A device was removed at %s s: %s/%s, %s; %zu removal event%s.", when,
		 e->system, e->name, e->detail, n, n == 1 ? "" : "s");
}

static const hs_rpt_shape_words words = {
	.what = "device removal",
	.next = "which device it was (the instance path in the payload; Device Manager's hidden devices), its cable, "
		"hub and power; the System log's Kernel-PnP entries",
	.catalog_named = true,
	.verdict = verdict,
};

const hs_rpt_detector hs_rpt_find_device_removed = {"device-removed", 80, HS_RPT_WINDOWS, "device removal",
						    .shape = HS_DEC_ALERT, .tag = "device-removed", .words = &words};
