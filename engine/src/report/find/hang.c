/* report/find/hang.c: the hang detector: events the catalogs tag `alert: hang` (Linux's hung-task watchdog). */
#include "report/find/common.h"

static const hs_rpt_shape_words words = {
	.what = "hung task",
	.next = "what the task waits on: its kernel stack (/proc/PID/stack, echo w > /proc/sysrq-trigger) and the "
		"storage or lock behind it",
};

const hs_rpt_detector hs_rpt_find_hang = {"hang", 85, HS_RPT_LINUX, "hang", .shape = HS_DEC_HANG, .words = &words};
