/* perf/launch.h: Linux launch mode as the tracefs backend's table entry (hs_backend_ops.launch). */
#ifndef HS_PERF_LAUNCH_H
#define HS_PERF_LAUNCH_H

#include "hindsight/launch.h"

/* hs_launch_run on Linux (hindsight/launch.h): perf_event_open per CPU, perf.data. */
hs_status hs_perf_launch_run(const hs_plan *plan, const hs_launch_opts *o, const hs_msg *msg, hs_launch_result *res);

#endif
