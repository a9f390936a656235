/* report/find/alert.c: the alert detector: events with a catalog alert tag no other detector reads (gpu-reset and device-removed have theirs). */
#include "report/find/common.h"

static const char *const theirs[] = {"gpu-reset", "device-removed", NULL};

static const hs_rpt_shape_words linux_words = {
	.what = "catalog alert event",
	.next = "the events' stories below and the catalog entry for them",
};

static const hs_rpt_shape_words windows_words = {
	.what = "catalog alert",
	.next = "the events' stories below and the catalog entry for them",
	.catalog_named = true,
};

const hs_rpt_detector hs_rpt_find_alert = {"alert", 75, HS_RPT_LINUX | HS_RPT_WINDOWS, NULL, .shape = HS_DEC_ALERT,
					   .skip_tags = theirs, .words = &linux_words, .windows_words = &windows_words};
