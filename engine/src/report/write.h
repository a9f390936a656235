/* report/write.h: a report's files into its output folder (write.c). */
#ifndef HS_REPORT_WRITE_H
#define HS_REPORT_WRITE_H

#include "report/model.h"

/* report.txt, report.json, report.html and each .etl's regions file (r->regions) into r->outdir, made when
 * missing; HS_EPERM for a report.* that is not a report (left alone), HS_EIO when a file or the folder cannot be
 * written (the sink says which). */
hs_status hs_rpt_write(hs_report *r);

#endif
