/* estimate/estimate_int.h: private helpers shared by the estimate module's reader and renderers. */
#ifndef HS_ESTIMATE_INT_H
#define HS_ESTIMATE_INT_H

#include "hindsight/estimate.h"

/* Per-CPU tallies stop here: ETW numbers processors up to 0x7FF and tracefs
 * machines have far fewer; a larger index is damage, not a CPU. */
#define HS_ESTIMATE_MAX_CPUS 4096u

#endif
