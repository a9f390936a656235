/* recorder.h: an hs_etw_api that writes every call, as the kernel would read its arguments, to a log and injects Windows' failures. */
#ifndef HS_TEST_RECORDER_H
#define HS_TEST_RECORDER_H

#include <stdbool.h>

#include "etw/etw_api.h"
#include "util/strbuf.h"

/*
 * The recorder behaves like ETW where the engine depends on it: handles,
 * ERROR_ALREADY_EXISTS for a running name, ERROR_WMI_INSTANCE_NOT_FOUND for
 * an unknown one, sizes written back by StartTraceW/QUERY, and files that a
 * FLUSH with a file name or the STOP of a file session leaves on disk (real
 * files, small, so the engine's existence checks run for real). Parameters
 * are decoded from the bytes the engine passes (names through their
 * offsets, filters through their descriptors), so the log shows what the
 * kernel would receive.
 */

typedef struct {
	const char *fn; /* "StartTraceW", "ControlTraceW:STOP", "EnableTraceEx2", "is_admin", ... */
	int nth;        /* 1-based occurrence of that call (0: every one) */
	ULONG err;
} rec_fault;

typedef struct {
	const wchar_t *name;
	USHORT in_type; /* TDH_INTYPE_* */
	USHORT offset;  /* in UserData */
	USHORT size;
	ULONG flags;    /* PROPERTY_FLAGS */
	USHORT count;
} rec_tdh_prop;

typedef struct {
	hs_strbuf log;
	rec_fault faults[8];
	size_t n_faults;
	BOOL admin;
	bool etw_writes_files;   /* false: calls succeed but no file appears (what Wine does) */
	bool merge_available;    /* KernelTraceControl.dll "installed" */
	const char *stop_writes; /* copy this real file to a file session's output at STOP (else a stub file) */
	ULONG buffers_override;  /* NumberOfBuffers reported (0: MinimumBuffers) */
	int wait_timeouts;       /* wait_process says WAIT_TIMEOUT this often before the exit */
	DWORD exit_code;
	volatile int *interrupts;
	int interrupt_at_wait;   /* bump *interrupts at these waits (1-based), if set */
	int interrupt_at_wait2;
	/* The real-time consumer: what a ProcessTrace delivers as soon as it
	 * runs (before it blocks), and the clocks. */
	const EVENT_RECORD *rt_events;
	size_t n_rt_events;
	ULONGLONG qpc_now;     /* QueryPerformanceCounter (at 10 MHz) */
	ULONGLONG system_now;  /* GetSystemTimeAsFileTime */
	DWORD last_error;      /* what last_error returns (OpenTraceW's failure) */
	/* The schema TdhGetEventInformation describes every event with (none:
	 * ERROR_NOT_FOUND), and where each property's bytes are in UserData. */
	const rec_tdh_prop *tdh_props;
	size_t n_tdh_props;
	/* engine ctl's pipe: the first instance the engine makes gets a client
	 * that sends this (NULL: no client ever comes), reads one reply and
	 * closes its end; later instances wait for a client that never comes. */
	const char *ctl_request;
} recorder;

extern recorder REC;
extern const hs_etw_api rec_api;

void rec_reset(void);
void rec_fail(const char *fn, int nth, ULONG err);
/* Sessions still running in the recorder's "kernel". */
int rec_running(void);
const char *rec_log(void);
/* Provider registrations (EventRegister) not yet EventUnregister'd. */
int rec_registered(void);
/* A running session of this name exists before the test (a dead engine's). */
void rec_add_preexisting(const char *name);

/* The fake QueryPerformanceFrequency. */
#define REC_QPC_PER_SECOND 10000000ull
/* Hands events to the running ProcessTrace of the consumer of `logger` (it
 * calls the EventRecordCallback once per record, UserContext set, on its own
 * thread) and waits until it did. false: no such consumer, or it took longer
 * than 10 s (a callback that blocks). */
bool rec_rt_deliver(const char *logger, const EVENT_RECORD *ev, size_t n);
/* Ends that ProcessTrace as a stop of its session by someone else would. */
bool rec_rt_end(const char *logger);
/* Consumers whose ProcessTrace still runs. */
int rec_rt_running(void);

#endif
