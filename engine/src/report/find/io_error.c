/* report/find/io_error.c: the I/O error detector: events the catalogs tag `alert: io-error`, and block completions that carry an error. */
#include "report/find/common.h"

static void find_io_error(hs_report *r)
{
	static const hs_rpt_shape_words w = {
		.kind = "io-error",
		.impact = 80,
		.what = "I/O error",
		.next = "the device's health (dmesg, smartctl, the hypervisor's disk) and which files sit on it",
	};
	hs_rpt_find_shape(r, HS_DEC_IO_ERROR, NULL, NULL, &w);
}

const hs_rpt_detector hs_rpt_find_io_error = {"io-error", 80, HS_RPT_LINUX, "I/O error",
					      find_io_error};
