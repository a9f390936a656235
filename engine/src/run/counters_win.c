/* run/counters_win.c: the counters' OS side on Windows, every call through the reviewed call table (etw/etw_api.h): GetSystemTimes, toolhelp, GetProcessTimes, K32GetProcessMemoryInfo, GetDiskFreeSpaceExW, the debugger probe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/etw.h"
#include "etw/etw_api.h"
#include "run/counters.h"

/* Windows keeps no stall accounting like Linux's PSI (rulecheck refuses PSI counters in a Windows section, HS115). */
hs_status hs_counters_os_psi_open(const char *resource, bool full, uint64_t stall_us, uint64_t window_us,
				  intptr_t *handle, char *err, size_t errlen)
{
	(void)resource, (void)full, (void)stall_us, (void)window_us;
	*handle = 0;
	snprintf(err, errlen, "Windows has no pressure stall information");
	return HS_EUNSUPPORTED;
}

bool hs_counters_os_psi_fired(intptr_t handle)
{
	(void)handle;
	return false;
}

void hs_counters_os_psi_close(intptr_t handle)
{
	(void)handle;
}

bool hs_counters_os_psi_line(const char *resource, bool full, char *buf, size_t cap)
{
	(void)resource, (void)full, (void)buf, (void)cap;
	return false;
}

/* GetSystemTimes: kernel time includes idle time. */
bool hs_counters_os_cpu_times(uint64_t *busy, uint64_t *total)
{
	const hs_etw_api *api = hs_etw_api_get();
	ULONGLONG idle, kernel, user;
	if (!api->system_times || api->system_times(&idle, &kernel, &user) != ERROR_SUCCESS || kernel < idle)
		return false;
	*total = kernel + user;
	*busy = kernel - idle + user;
	return true;
}

typedef struct {
	void (*fn)(void *ctx, int pid, const char *name);
	void *ctx;
} list_ctx;

static void one(void *ctx, DWORD pid, LPCWSTR exe)
{
	list_ctx *lc = ctx;
	char *name = hs_etw_narrow(exe);
	if (name) {
		lc->fn(lc->ctx, (int)pid, name);
		free(name);
	}
}

bool hs_counters_os_processes(void (*fn)(void *ctx, int pid, const char *name), void *ctx)
{
	const hs_etw_api *api = hs_etw_api_get();
	list_ctx lc = {fn, ctx};
	return api->process_list && api->process_list(one, &lc) == ERROR_SUCCESS;
}

/* One per-process reading through the call table (an entry this build lacks is NULL: no reading). */
static bool process_value(DWORD (*read)(DWORD pid, ULONGLONG *out), int pid, ULONGLONG *v)
{
	return read && read((DWORD)pid, v) == ERROR_SUCCESS;
}

bool hs_counters_os_process_cpu_ns(int pid, uint64_t *ns)
{
	ULONGLONG t;
	if (!process_value(hs_etw_api_get()->process_times, pid, &t))
		return false;
	*ns = t * 100u;
	return true;
}

bool hs_counters_os_process_rss(int pid, uint64_t *bytes)
{
	ULONGLONG ws;
	if (!process_value(hs_etw_api_get()->process_memory, pid, &ws))
		return false;
	*bytes = ws;
	return true;
}

bool hs_counters_os_disk_free(const char *dir, uint64_t *bytes)
{
	const hs_etw_api *api = hs_etw_api_get();
	WCHAR wdir[MAX_PATH];
	ULONGLONG avail;
	if (!api->disk_free || hs_etw_widen(dir, wdir, MAX_PATH) != HS_OK ||
	    api->disk_free(wdir, &avail) != ERROR_SUCCESS)
		return false;
	*bytes = avail;
	return true;
}

/* No such process (ERROR_INVALID_PARAMETER) or one that ended is gone; CheckRemoteDebuggerPresent says whether a
 * debugger holds it. A process we may not open (another user's, protected) is unknown: judged a hang. */
hs_trigger_probe hs_counters_os_probe(int pid)
{
	const hs_etw_api *api = hs_etw_api_get();
	BOOL alive = TRUE, debugged = FALSE;
	if (!api->process_state)
		return HS_PROBE_UNKNOWN;
	DWORD err = api->process_state((DWORD)pid, &alive, &debugged);
	if (err == ERROR_INVALID_PARAMETER)
		return HS_PROBE_GONE;
	if (err != ERROR_SUCCESS)
		return HS_PROBE_UNKNOWN;
	return !alive ? HS_PROBE_GONE : debugged ? HS_PROBE_DEBUGGED : HS_PROBE_RUNNING;
}
