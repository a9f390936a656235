/* report/find/io_error.c: the I/O error detector: events the catalogs tag `alert: io-error`, and block completions that carry an error. */
#include "report/find/common.h"

static const hs_rpt_shape_words words = {
	.what = "I/O error",
	.next = "the device's health (dmesg, smartctl, the hypervisor's disk) and which files sit on it",
};

const hs_rpt_detector hs_rpt_find_io_error = {"io-error", 80, HS_RPT_LINUX, "I/O error", .shape = HS_DEC_IO_ERROR,
					      .words = &words};
