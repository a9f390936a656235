/* rules/wait_reason.c: the names of Windows' thread wait reasons (KWAIT_REASON) by value, for the rules' windows_wait_reasons and the .etl readers. */
#include <string.h>

#include "hindsight/wait_reason.h"

/* By value, spelled as wdm.h and the CSwitch class documentation spell them. */
static const char *const names[HS_WAIT_REASONS + 1] = {
	"Executive",        "FreePage",          "PageIn",           "PoolAllocation",  "DelayExecution",
	"Suspended",        "UserRequest",       "WrExecutive",      "WrFreePage",      "WrPageIn",
	"WrPoolAllocation", "WrDelayExecution",  "WrSuspended",      "WrUserRequest",   "WrEventPair",
	"WrQueue",          "WrLpcReceive",      "WrLpcReply",       "WrVirtualMemory", "WrPageOut",
	"WrRendezvous",     "WrKeyedEvent",      "WrTerminated",     "WrProcessInSwap", "WrCpuRateControl",
	"WrCalloutStack",   "WrKernel",          "WrResource",       "WrPushLock",      "WrMutex",
	"WrQuantumEnd",     "WrDispatchInt",     "WrPreempted",      "WrYieldExecution", "WrFastMutex",
	"WrGuardedMutex",   "WrRundown",         "WrAlertByThreadId", "WrDeferredPreempt", "WrPhysicalFault",
	"WrIoRing",         "WrMdlCache",        "WrRcu",            NULL,
};
_Static_assert(sizeof names / sizeof names[0] == HS_WAIT_REASONS + 1, "one name per KWAIT_REASON value");

/* wdm.h's later name for 14, once WrEventPair was retired. */
static const char spare0[] = "WrSpare0";

const char *hs_wait_reason_name(int reason)
{
	return reason >= 0 && reason < HS_WAIT_REASONS ? names[reason] : NULL;
}

int hs_wait_reason_find(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < HS_WAIT_REASONS; i++)
		if (!strcmp(names[i], name))
			return i;
	return strcmp(name, spare0) ? -1 : HS_WAIT_WR_EVENT_PAIR;
}

const char *const *hs_wait_reason_names(void)
{
	return names;
}
