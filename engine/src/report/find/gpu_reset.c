/* report/find/gpu_reset.c: the GPU reset detector: events the catalogs tag `alert: gpu-reset` (Windows' timeout detection and recovery, TDR). */
#include <stdio.h>

#include "report/find/common.h"

static void verdict(hs_report *r, hs_rpt_finding *f, const hs_rpt_event *e, size_t n, const char *when)
{
	(void)r;
	snprintf(f->verdict, sizeof f->verdict,
		 "The GPU was reset (a TDR: timeout detection and recovery) at %s s: %s/%s%s%s; %zu event%s of the reset "
		 "in all.",
		 when, e->system, e->name, e->pid > 4 ? " in " : "", e->pid > 4 ? e->comm : "", n, n == 1 ? "" : "s");
}

static const hs_rpt_shape_words words = {
	.what = "GPU reset (TDR)",
	.next = "the display driver's version and the GPU's temperature and clocks; the Application and System event "
		"logs' Display 4101 entries; the app that was presenting when the engine stopped (its Present events "
		"in the ring)",
	.catalog_named = true,
	.verdict = verdict,
};

const hs_rpt_detector hs_rpt_find_gpu_reset = {"gpu-reset", 90, HS_RPT_WINDOWS, "GPU reset", .shape = HS_DEC_ALERT,
					       .tag = "gpu-reset", .words = &words};
