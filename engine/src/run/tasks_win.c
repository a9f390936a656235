/* run/tasks_win.c: no tasks.json on Windows: the kernel trace's thread and process rundowns name every task, and Windows has no cgroups (a job object's limits are in its own events). */
#include "run/tasks.h"

hs_status hs_tasks_write(const char *path, uint64_t trace_ns)
{
	(void)path, (void)trace_ns;
	return HS_EUNSUPPORTED;
}
