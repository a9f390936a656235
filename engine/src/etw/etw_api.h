/* etw/etw_api.h: the one table through which the engine calls Windows (advapi32, kernel32, KernelTraceControl, engine ctl's pipe); tests substitute a recorder. */
#ifndef HS_ETW_API_H
#define HS_ETW_API_H

#include "etw/etw_win.h"

/*
 * Every Windows call the ETW backend, launch mode and engine ctl make goes
 * through this table, so that
 *  - the set of calls is small and reviewed in one place (etw_api.c), and
 *  - tests (which run under Wine, whose ETW is a stub) can record the exact
 *    call sequence and inject the failures real Windows returns.
 * The ETW entries have the SDK signatures unchanged; the others are thin
 * wrappers that return a Win32 error code (ERROR_SUCCESS on success) so that
 * every failure carries a code hs_etw_error_text can explain.
 *
 * Ownership: the table is static and never freed; hs_etw_api_set keeps the
 * pointer it is given until the next call.
 */
typedef struct hs_etw_api {
	ULONG(WINAPI *StartTraceW)(PTRACEHANDLE handle, LPCWSTR name, PEVENT_TRACE_PROPERTIES props);
	ULONG(WINAPI *ControlTraceW)(TRACEHANDLE handle, LPCWSTR name, PEVENT_TRACE_PROPERTIES props, ULONG code);
	ULONG(WINAPI *EnableTraceEx2)(TRACEHANDLE handle, LPCGUID provider, ULONG code, UCHAR level, ULONGLONG any,
				      ULONGLONG all, ULONG timeout, PENABLE_TRACE_PARAMETERS params);
	ULONG(WINAPI *TraceSetInformation)(TRACEHANDLE handle, TRACE_INFO_CLASS cls, PVOID info, ULONG len);
	ULONG(WINAPI *TraceQueryInformation)(TRACEHANDLE handle, TRACE_INFO_CLASS cls, PVOID info, ULONG len,
					     PULONG ret_len);
	/* The real-time consumer (consumer.c): OpenTraceW returns
	 * INVALID_PROCESSTRACE_HANDLE and sets the last error on failure;
	 * ProcessTrace blocks its thread until CloseTrace (or the session's stop). */
	TRACEHANDLE(WINAPI *OpenTraceW)(PEVENT_TRACE_LOGFILEW logfile);
	ULONG(WINAPI *ProcessTrace)(PTRACEHANDLE handles, ULONG count, LPFILETIME start, LPFILETIME end);
	ULONG(WINAPI *CloseTrace)(TRACEHANDLE handle);
	/* tdh.dll, loaded at run time from System32 (ERROR_MOD_NOT_FOUND /
	 * ERROR_PROC_NOT_FOUND when it cannot be): a real-time event's fields
	 * by name. The record may be a copy of what the callback got (header,
	 * buffer context, UserData; no extended data). */
	ULONG(WINAPI *TdhGetEventInformation)(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, PTRACE_EVENT_INFO info,
					      PULONG size);
	ULONG(WINAPI *TdhGetPropertySize)(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, ULONG n_desc,
					  PPROPERTY_DATA_DESCRIPTOR desc, PULONG size);
	ULONG(WINAPI *TdhGetProperty)(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, ULONG n_desc,
				      PPROPERTY_DATA_DESCRIPTOR desc, ULONG size, PBYTE out);
	/* Our own provider, for the trigger marker (marker.c): EventRegister,
	 * EventWriteString and EventUnregister with the SDK signatures. Only
	 * advapi32's, so that the marker goes into the sessions (learn.microsoft.com,
	 * EventRegister / EventWriteString / EventUnregister). */
	ULONG(WINAPI *EventRegister)(LPCGUID provider, PENABLECALLBACK callback, PVOID context, PREGHANDLE handle);
	ULONG(WINAPI *EventWriteString)(REGHANDLE handle, UCHAR level, ULONGLONG keyword, PCWSTR text);
	ULONG(WINAPI *EventUnregister)(REGHANDLE handle);
	/* GetLastError(), for OpenTraceW's failure. */
	DWORD (*last_error)(void);

	/* Is the process token a member of BUILTIN\Administrators (elevated)? */
	DWORD (*is_admin)(BOOL *admin);
	/* AdjustTokenPrivileges on our own token; ERROR_NOT_ALL_ASSIGNED when the
	 * token does not hold the privilege at all. */
	DWORD (*enable_privilege)(LPCWSTR name);
	/* GetFullPathNameW: ETW resolves no relative paths or variables itself. */
	DWORD (*full_path)(LPCWSTR in, LPWSTR out, DWORD chars);
	/* Size of a file; ERROR_FILE_NOT_FOUND / ERROR_PATH_NOT_FOUND when absent. */
	DWORD (*file_size)(LPCWSTR path, ULONGLONG *size);
	DWORD (*delete_file)(LPCWSTR path);
	/* CreateProcessW(app, cmdline, ..., cwd); the thread handle is closed. */
	DWORD (*create_process)(LPCWSTR app, LPWSTR cmdline, LPCWSTR cwd, HANDLE *process, DWORD *pid);
	/* WaitForSingleObject on a process: ERROR_SUCCESS when it exited,
	 * WAIT_TIMEOUT when still running after `ms`. */
	DWORD (*wait_process)(HANDLE process, DWORD ms);
	DWORD (*exit_code)(HANDLE process, DWORD *code);
	DWORD (*terminate_process)(HANDLE process, UINT code);
	void (*close_handle)(HANDLE h);
	/* KernelTraceControl.dll!CreateMergedTraceFile; ERROR_MOD_NOT_FOUND /
	 * ERROR_PROC_NOT_FOUND when the DLL (which ships with the Windows
	 * Performance Toolkit, not with Windows) cannot be loaded. */
	DWORD (*create_merged_trace)(LPCWSTR out, LPCWSTR const *in, ULONG n, DWORD flags);
	/* QueryDosDeviceW(drive "C:") -> "\Device\HarddiskVolume3". */
	DWORD (*query_dos_device)(LPCWSTR drive, LPWSTR target, DWORD chars);
	/* Sleep(ms); the tests' recorder returns at once. */
	void (*sleep)(DWORD ms);
	/* CreateThread(fn, arg); the handle is for join_thread only. */
	DWORD (*create_thread)(DWORD(WINAPI *fn)(LPVOID), LPVOID arg, HANDLE *thread);
	/* WaitForSingleObject on the thread, then CloseHandle: ERROR_SUCCESS when
	 * it ended, WAIT_TIMEOUT (the handle stays open) when still running after `ms`. */
	DWORD (*join_thread)(HANDLE thread, DWORD ms);
	/* The clocks the sessions stamp events with (WNODE_HEADER.ClientContext):
	 * QueryPerformanceCounter with QueryPerformanceFrequency, and
	 * GetSystemTimeAsFileTime (100 ns units since 1601). Not logged by
	 * the recorder (read on every poll). */
	ULONGLONG (*qpc)(ULONGLONG *per_second);
	ULONGLONG (*system_time)(void);

	/* ---- engine ctl's named pipe (run/ctl_win.c, the server; ctl_main.c,
	 * the client; docs/ctl.md). Handles are the caller's to close_handle. ---- */
	/* OpenProcessToken(TOKEN_QUERY) + GetTokenInformation(cls) +
	 * ConvertSidToStringSidW + LocalFree: the SID of TokenUser or
	 * TokenIntegrityLevel as "S-1-...", for an SDDL string. */
	DWORD (*token_sid)(TOKEN_INFORMATION_CLASS cls, LPWSTR out, DWORD chars);
	/* ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl) +
	 * CreateNamedPipeW(name, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED
	 * [| FILE_FLAG_FIRST_PIPE_INSTANCE when first], PIPE_TYPE_BYTE |
	 * PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS, max,
	 * bytes, bytes, 0, that descriptor) + LocalFree. ERROR_ACCESS_DENIED
	 * when first and the name exists (a live engine's, or a squatter's). */
	DWORD (*pipe_create)(LPCWSTR name, LPCWSTR sddl, BOOL first, DWORD max_instances, DWORD bytes, HANDLE *pipe);
	/* CreateEventW: manual-reset, not signalled, unnamed (an OVERLAPPED's). */
	DWORD (*event_create)(HANDLE *event);
	/* ConnectNamedPipe(pipe, ov): ERROR_IO_PENDING (waiting for a client),
	 * ERROR_PIPE_CONNECTED (one came first: connected), ERROR_NO_DATA (one
	 * came and went), ERROR_SUCCESS. */
	DWORD (*pipe_connect)(HANDLE pipe, OVERLAPPED *ov);
	/* DisconnectNamedPipe: an instance whose client came and went
	 * (ERROR_NO_DATA) must be disconnected before it can connect again. */
	DWORD (*pipe_disconnect)(HANDLE pipe);
	/* ReadFile / WriteFile on an overlapped handle: ERROR_SUCCESS with the
	 * count (done at once), ERROR_IO_PENDING (ask io_result), or the error
	 * (ERROR_BROKEN_PIPE: the other end closed). */
	DWORD (*io_read)(HANDLE h, void *buf, DWORD len, OVERLAPPED *ov, DWORD *got);
	DWORD (*io_write)(HANDLE h, const void *buf, DWORD len, OVERLAPPED *ov, DWORD *put);
	/* GetOverlappedResult(h, ov, n, wait): ERROR_IO_INCOMPLETE while pending
	 * (wait FALSE), ERROR_OPERATION_ABORTED once cancelled. */
	DWORD (*io_result)(HANDLE h, OVERLAPPED *ov, DWORD *n, BOOL wait);
	/* CancelIoEx(h, ov); ERROR_NOT_FOUND when nothing was pending. */
	DWORD (*io_cancel)(HANDLE h, OVERLAPPED *ov);
	/* The client: CreateFileW(name, GENERIC_READ | GENERIC_WRITE, 0, NULL,
	 * OPEN_EXISTING, FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT |
	 * SECURITY_IDENTIFICATION): the server may identify the client, never
	 * act as it. ERROR_FILE_NOT_FOUND (no pipe), ERROR_PIPE_BUSY (no free
	 * instance), ERROR_ACCESS_DENIED (the DACL or the label). */
	DWORD (*pipe_open)(LPCWSTR name, HANDLE *pipe);
	/* WaitNamedPipeW(name, ms): ERROR_SUCCESS when an instance is free,
	 * ERROR_SEM_TIMEOUT, ERROR_FILE_NOT_FOUND (no such pipe). */
	DWORD (*pipe_wait)(LPCWSTR name, DWORD ms);
	/* WaitForSingleObject(h, ms): ERROR_SUCCESS signalled, WAIT_TIMEOUT. */
	DWORD (*wait_object)(HANDLE h, DWORD ms);
	/* OpenProcess(SYNCHRONIZE, pid): for wait_process on an engine we stopped. */
	DWORD (*open_process)(DWORD pid, HANDLE *process);

	/* ---- counter triggers, arm_while and the deadline probe (run/counters_win.c;
	 * docs/triggers.md "Counters"). NULL in a table that does not offer them
	 * (a test's recorder): the counter reads nothing and says so. ---- */
	/* GetSystemTimes: the machine's idle, kernel (idle included) and user time, 100 ns. */
	DWORD (*system_times)(ULONGLONG *idle, ULONGLONG *kernel, ULONGLONG *user);
	/* CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS) + Process32FirstW/Process32NextW +
	 * CloseHandle: fn for every process, its id and its image's file name. */
	DWORD (*process_list)(void (*fn)(void *ctx, DWORD pid, LPCWSTR exe), void *ctx);
	/* OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION) + GetProcessTimes + CloseHandle:
	 * its kernel + user time so far, 100 ns. */
	DWORD (*process_times)(DWORD pid, ULONGLONG *cpu_100ns);
	/* OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_VM_READ) +
	 * K32GetProcessMemoryInfo + CloseHandle: its working set, bytes. */
	DWORD (*process_memory)(DWORD pid, ULONGLONG *working_set);
	/* GetDiskFreeSpaceExW(dir): the bytes the caller may still write there. */
	DWORD (*disk_free)(LPCWSTR dir, ULONGLONG *avail);
	/* OpenProcess(PROCESS_QUERY_INFORMATION | SYNCHRONIZE) + WaitForSingleObject(0) +
	 * CheckRemoteDebuggerPresent + CloseHandle: whether it still runs and a
	 * debugger is attached. ERROR_INVALID_PARAMETER: no such process. */
	DWORD (*process_state)(DWORD pid, BOOL *alive, BOOL *debugged);
} hs_etw_api;

/* The production table: advapi32, kernel32 and (loaded on first use) KernelTraceControl.dll. */
extern const hs_etw_api hs_etw_api_win32;

/* The table in use (hs_etw_api_win32 unless a test set another). */
const hs_etw_api *hs_etw_api_get(void);
void hs_etw_api_set(const hs_etw_api *api);

#endif
