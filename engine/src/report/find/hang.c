/* report/find/hang.c: the hang detector: events the catalogs tag `alert: hang` (Linux's hung-task watchdog). */
#include "report/find/common.h"

static void find_hang(hs_report *r)
{
	static const hs_rpt_shape_words w = {
		.kind = "hang",
		.impact = 85,
		.what = "hung task",
		.next = "what the task waits on: its kernel stack (/proc/PID/stack, echo w > /proc/sysrq-trigger) and the "
			"storage or lock behind it",
	};
	hs_rpt_find_shape(r, HS_DEC_HANG, NULL, NULL, &w);
}

const hs_rpt_detector hs_rpt_find_hang = {"hang", 85, HS_RPT_LINUX, "hang", find_hang};
