/* hindsight/wait_reason.h: Windows' thread wait reasons (KWAIT_REASON): their names, as the rules and Windows spell them, and their numbers, as the kernel's context-switch records carry them. */
#ifndef HINDSIGHT_WAIT_REASON_H
#define HINDSIGHT_WAIT_REASON_H

/*
 * KWAIT_REASON is wdm.h's enum; the kernel's CSwitch event logs it as
 * OldThreadWaitReason (a sint8), the reason the thread that left the CPU
 * waits for. The ETW CSwitch class documents 0..36 (WrRundown); the values
 * after it are today's wdm.h (phnt agrees): WrAlertByThreadId 37 (Windows
 * 8+), WrDeferredPreempt 38, WrPhysicalFault 39, WrIoRing 40, WrMdlCache 41,
 * WrRcu 42. Value 14 is WrEventPair in the ETW documentation and WrSpare0 in
 * wdm.h since it stopped being used: both names read as 14, the first is the
 * one given back. A value at or past HS_WAIT_REASONS is one a newer Windows
 * added: it has no name here, and nothing claims it by name.
 *
 * This lives in the rules layer because the rules name reasons (a cause's
 * `windows_wait_reasons:`, checked against these names) and every layer
 * above reads the numbers.
 *
 * Ownership: the names are static strings.
 */

enum {
	HS_WAIT_EXECUTIVE = 0,
	HS_WAIT_FREE_PAGE = 1,
	HS_WAIT_PAGE_IN = 2,
	HS_WAIT_POOL_ALLOCATION = 3,
	HS_WAIT_DELAY_EXECUTION = 4,
	HS_WAIT_SUSPENDED = 5,
	HS_WAIT_USER_REQUEST = 6,
	HS_WAIT_WR_EXECUTIVE = 7,
	HS_WAIT_WR_FREE_PAGE = 8,
	HS_WAIT_WR_PAGE_IN = 9,
	HS_WAIT_WR_POOL_ALLOCATION = 10,
	HS_WAIT_WR_DELAY_EXECUTION = 11,
	HS_WAIT_WR_SUSPENDED = 12,
	HS_WAIT_WR_USER_REQUEST = 13,
	HS_WAIT_WR_EVENT_PAIR = 14,
	HS_WAIT_WR_QUEUE = 15,
	HS_WAIT_WR_LPC_RECEIVE = 16,
	HS_WAIT_WR_LPC_REPLY = 17,
	HS_WAIT_WR_VIRTUAL_MEMORY = 18,
	HS_WAIT_WR_PAGE_OUT = 19,
	HS_WAIT_WR_RENDEZVOUS = 20,
	HS_WAIT_WR_KEYED_EVENT = 21,
	HS_WAIT_WR_TERMINATED = 22,
	HS_WAIT_WR_PROCESS_IN_SWAP = 23,
	HS_WAIT_WR_CPU_RATE_CONTROL = 24,
	HS_WAIT_WR_CALLOUT_STACK = 25,
	HS_WAIT_WR_KERNEL = 26,
	HS_WAIT_WR_RESOURCE = 27,
	HS_WAIT_WR_PUSH_LOCK = 28,
	HS_WAIT_WR_MUTEX = 29,
	HS_WAIT_WR_QUANTUM_END = 30,
	HS_WAIT_WR_DISPATCH_INT = 31,
	HS_WAIT_WR_PREEMPTED = 32,
	HS_WAIT_WR_YIELD_EXECUTION = 33,
	HS_WAIT_WR_FAST_MUTEX = 34,
	HS_WAIT_WR_GUARDED_MUTEX = 35,
	HS_WAIT_WR_RUNDOWN = 36,
	HS_WAIT_WR_ALERT_BY_THREAD_ID = 37,
	HS_WAIT_WR_DEFERRED_PREEMPT = 38,
	HS_WAIT_WR_PHYSICAL_FAULT = 39,
	HS_WAIT_WR_IO_RING = 40,
	HS_WAIT_WR_MDL_CACHE = 41,
	HS_WAIT_WR_RCU = 42,
	HS_WAIT_REASONS = 43 /* MaximumWaitReason of the newest wdm.h read */
};

/* The name of a reason ("DelayExecution"), or NULL outside 0..HS_WAIT_REASONS-1. */
const char *hs_wait_reason_name(int reason);
/* The reason a name gives (exact, case-sensitive, either name of 14), or -1. */
int hs_wait_reason_find(const char *name);
/* Every name, by value, NULL-terminated (for listing and "did you mean"). */
const char *const *hs_wait_reason_names(void);

#endif
