/* etw/etw_api.c: the production hs_etw_api: the only file that calls Win32 for tracing, tokens, processes, merging and engine ctl's pipe. */
#include "etw/etw_api.h"

#include <psapi.h>
#include <sddl.h>
#include <stdbool.h>
#include <string.h>
#include <tlhelp32.h>
#include <wchar.h>

/* ---- Trace{Set,Query}Information: looked up at run time ----
 * They exist from Windows 7/8 on, but Wine 8 lacks TraceQueryInformation
 * entirely; an import would abort the process when called. A missing
 * export becomes ERROR_CALL_NOT_IMPLEMENTED, which callers treat as "keep
 * the machine's current setting". */

typedef ULONG(WINAPI *set_info_fn)(TRACEHANDLE, TRACE_INFO_CLASS, PVOID, ULONG);
typedef ULONG(WINAPI *query_info_fn)(TRACEHANDLE, TRACE_INFO_CLASS, PVOID, ULONG, PULONG);

/* An export's address into the typed pointer *fn (fn_size bytes: FARPROC -> typed pointer without a cast
 * warning); false when advapi32 lacks it. */
static bool advapi32_proc(const char *name, void *fn, size_t fn_size)
{
	HMODULE m = GetModuleHandleW(L"advapi32.dll");
	FARPROC p = m ? GetProcAddress(m, name) : NULL;
	if (p)
		memcpy(fn, &p, fn_size);
	return p != NULL;
}

static ULONG WINAPI win_set_info(TRACEHANDLE h, TRACE_INFO_CLASS cls, PVOID info, ULONG len)
{
	set_info_fn fn;
	if (!advapi32_proc("TraceSetInformation", &fn, sizeof(fn)))
		return ERROR_CALL_NOT_IMPLEMENTED;
	return fn(h, cls, info, len);
}

static ULONG WINAPI win_query_info(TRACEHANDLE h, TRACE_INFO_CLASS cls, PVOID info, ULONG len, PULONG ret)
{
	query_info_fn fn;
	if (!advapi32_proc("TraceQueryInformation", &fn, sizeof(fn)))
		return ERROR_CALL_NOT_IMPLEMENTED;
	return fn(h, cls, info, len, ret);
}

/* ---- tdh.dll: looked up at run time ----
 * Not linked (the build links advapi32 only): loaded once from System32,
 * never from the program's folder. */

typedef ULONG(WINAPI *tdh_info_fn)(PEVENT_RECORD, ULONG, PTDH_CONTEXT, PTRACE_EVENT_INFO, PULONG);
typedef ULONG(WINAPI *tdh_size_fn)(PEVENT_RECORD, ULONG, PTDH_CONTEXT, ULONG, PPROPERTY_DATA_DESCRIPTOR, PULONG);
typedef ULONG(WINAPI *tdh_prop_fn)(PEVENT_RECORD, ULONG, PTDH_CONTEXT, ULONG, PPROPERTY_DATA_DESCRIPTOR, ULONG, PBYTE);

/* An export of tdh.dll into the typed pointer *fn, as advapi32_proc. */
static ULONG tdh_proc(const char *name, void *fn, size_t fn_size)
{
	static HMODULE tdh;
	if (!tdh)
		tdh = LoadLibraryExW(L"tdh.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
	if (!tdh)
		return ERROR_MOD_NOT_FOUND;
	FARPROC p = GetProcAddress(tdh, name);
	if (!p)
		return ERROR_PROC_NOT_FOUND;
	memcpy(fn, &p, fn_size);
	return ERROR_SUCCESS;
}

static ULONG WINAPI win_tdh_info(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, PTRACE_EVENT_INFO info, PULONG size)
{
	tdh_info_fn fn;
	ULONG err = tdh_proc("TdhGetEventInformation", &fn, sizeof(fn));
	return err ? err : fn(ev, n_ctx, ctx, info, size);
}

static ULONG WINAPI win_tdh_size(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, ULONG n_desc,
				 PPROPERTY_DATA_DESCRIPTOR desc, PULONG size)
{
	tdh_size_fn fn;
	ULONG err = tdh_proc("TdhGetPropertySize", &fn, sizeof(fn));
	return err ? err : fn(ev, n_ctx, ctx, n_desc, desc, size);
}

static ULONG WINAPI win_tdh_prop(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, ULONG n_desc,
				 PPROPERTY_DATA_DESCRIPTOR desc, ULONG size, PBYTE out)
{
	tdh_prop_fn fn;
	ULONG err = tdh_proc("TdhGetProperty", &fn, sizeof(fn));
	return err ? err : fn(ev, n_ctx, ctx, n_desc, desc, size, out);
}

/* ---- tokens ---- */

static DWORD win_is_admin(BOOL *admin)
{
	/* CheckTokenMembership on the Administrators alias: FALSE for a filtered
	 * (non-elevated) admin token, which is what UAC gives a normal shell. */
	SID_IDENTIFIER_AUTHORITY nt = {SECURITY_NT_AUTHORITY};
	PSID sid = NULL;
	*admin = FALSE;
	if (!AllocateAndInitializeSid(&nt, 2, SECURITY_BUILTIN_DOMAIN_RID, DOMAIN_ALIAS_RID_ADMINS, 0, 0, 0, 0, 0, 0,
				      &sid))
		return GetLastError();
	DWORD err = CheckTokenMembership(NULL, sid, admin) ? ERROR_SUCCESS : GetLastError();
	FreeSid(sid);
	return err;
}

static DWORD win_enable_privilege(LPCWSTR name)
{
	HANDLE tok;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY, &tok))
		return GetLastError();
	TOKEN_PRIVILEGES tp = {.PrivilegeCount = 1};
	DWORD err = ERROR_SUCCESS;
	if (!LookupPrivilegeValueW(NULL, name, &tp.Privileges[0].Luid)) {
		err = GetLastError();
	} else {
		tp.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
		/* Succeeds even when nothing was enabled; the last error tells. */
		if (!AdjustTokenPrivileges(tok, FALSE, &tp, sizeof(tp), NULL, NULL))
			err = GetLastError();
		else
			err = GetLastError() == ERROR_NOT_ALL_ASSIGNED ? ERROR_NOT_ALL_ASSIGNED : ERROR_SUCCESS;
	}
	CloseHandle(tok);
	return err;
}

/* ---- files and processes ---- */

static DWORD win_full_path(LPCWSTR in, LPWSTR out, DWORD chars)
{
	DWORD n = GetFullPathNameW(in, chars, out, NULL);
	if (!n)
		return GetLastError();
	return n < chars ? ERROR_SUCCESS : ERROR_FILENAME_EXCED_RANGE;
}

static DWORD win_file_size(LPCWSTR path, ULONGLONG *size)
{
	WIN32_FILE_ATTRIBUTE_DATA fa;
	if (!GetFileAttributesExW(path, GetFileExInfoStandard, &fa))
		return GetLastError();
	*size = ((ULONGLONG)fa.nFileSizeHigh << 32) | fa.nFileSizeLow;
	return ERROR_SUCCESS;
}

static DWORD win_delete_file(LPCWSTR path)
{
	return DeleteFileW(path) ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_create_process(LPCWSTR app, LPWSTR cmdline, LPCWSTR cwd, HANDLE *process, DWORD *pid)
{
	STARTUPINFOW si = {.cb = sizeof(si)};
	PROCESS_INFORMATION pi;
	if (!CreateProcessW(app, cmdline, NULL, NULL, FALSE, 0, NULL, cwd, &si, &pi))
		return GetLastError();
	CloseHandle(pi.hThread);
	*process = pi.hProcess;
	*pid = pi.dwProcessId;
	return ERROR_SUCCESS;
}


static DWORD win_exit_code(HANDLE process, DWORD *code)
{
	return GetExitCodeProcess(process, code) ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_terminate_process(HANDLE process, UINT code)
{
	return TerminateProcess(process, code) ? ERROR_SUCCESS : GetLastError();
}

static void win_close_handle(HANDLE h)
{
	if (h)
		CloseHandle(h);
}

/* ---- KernelTraceControl.dll (Windows Performance Toolkit) ---- */

typedef ULONG(WINAPI *merge_fn)(LPCWSTR out, LPCWSTR *in, ULONG n, DWORD flags);

static DWORD win_create_merged_trace(LPCWSTR out, LPCWSTR const *in, ULONG n, DWORD flags)
{
	/* Search order: next to engine.exe / PATH (LoadLibraryW), then the WPT's
	 * default install folder, which is not on PATH after a plain install. */
	static const wchar_t *const candidates[] = {
		L"KernelTraceControl.dll",
		L"C:\\Program Files (x86)\\Windows Kits\\10\\Windows Performance Toolkit\\KernelTraceControl.dll",
	};
	HMODULE dll = NULL;
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !dll; i++)
		dll = LoadLibraryW(candidates[i]);
	if (!dll)
		return ERROR_MOD_NOT_FOUND;
	merge_fn fn;
	FARPROC p = GetProcAddress(dll, "CreateMergedTraceFile");
	DWORD err;
	if (!p) {
		err = ERROR_PROC_NOT_FOUND;
	} else {
		memcpy(&fn, &p, sizeof(fn)); /* FARPROC -> typed pointer without a cast warning */
		err = fn(out, (LPCWSTR *)in, n, flags);
	}
	FreeLibrary(dll);
	return err;
}

static DWORD win_query_dos_device(LPCWSTR drive, LPWSTR target, DWORD chars)
{
	return QueryDosDeviceW(drive, target, chars) ? ERROR_SUCCESS : GetLastError();
}

static void win_sleep(DWORD ms)
{
	Sleep(ms);
}

/* ---- the real-time consumer's thread and clocks ---- */

static DWORD win_last_error(void)
{
	return GetLastError();
}

static DWORD win_create_thread(DWORD(WINAPI *fn)(LPVOID), LPVOID arg, HANDLE *thread)
{
	*thread = CreateThread(NULL, 0, fn, arg, 0, NULL);
	return *thread ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_join_thread(HANDLE thread, DWORD ms)
{
	switch (WaitForSingleObject(thread, ms)) {
	case WAIT_OBJECT_0:
		CloseHandle(thread);
		return ERROR_SUCCESS;
	case WAIT_TIMEOUT:
		return WAIT_TIMEOUT;
	default:
		return GetLastError();
	}
}

static ULONGLONG win_qpc(ULONGLONG *per_second)
{
	/* Never fail on Windows XP and later (learn.microsoft.com, QueryPerformanceCounter). */
	LARGE_INTEGER c, f;
	QueryPerformanceCounter(&c);
	QueryPerformanceFrequency(&f);
	*per_second = (ULONGLONG)f.QuadPart;
	return (ULONGLONG)c.QuadPart;
}

static ULONGLONG win_system_time(void)
{
	FILETIME ft;
	GetSystemTimeAsFileTime(&ft);
	return ((ULONGLONG)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
}

/* ---- engine ctl's named pipe ---- */

static DWORD win_token_sid(TOKEN_INFORMATION_CLASS cls, LPWSTR out, DWORD chars)
{
	HANDLE tok;
	/* TOKEN_USER and TOKEN_MANDATORY_LABEL both start with a SID_AND_ATTRIBUTES
	 * (learn.microsoft.com, GetTokenInformation); the SID follows in the buffer. */
	union {
		SID_AND_ATTRIBUTES sa;
		BYTE bytes[SECURITY_MAX_SID_SIZE + sizeof(SID_AND_ATTRIBUTES) + 64];
	} info;
	DWORD len = 0, err = ERROR_SUCCESS;
	LPWSTR str = NULL;
	if (cls != TokenUser && cls != TokenIntegrityLevel)
		return ERROR_INVALID_PARAMETER;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return GetLastError();
	if (!GetTokenInformation(tok, cls, &info, sizeof(info), &len))
		err = GetLastError();
	else if (!ConvertSidToStringSidW(info.sa.Sid, &str))
		err = GetLastError();
	else if (wcslen(str) >= chars)
		err = ERROR_INSUFFICIENT_BUFFER;
	else
		wcscpy(out, str);
	if (str)
		LocalFree(str);
	CloseHandle(tok);
	return err;
}

static DWORD win_pipe_create(LPCWSTR name, LPCWSTR sddl, BOOL first, DWORD max_instances, DWORD bytes, HANDLE *pipe)
{
	SECURITY_ATTRIBUTES sa = {.nLength = sizeof(sa), .bInheritHandle = FALSE};
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sa.lpSecurityDescriptor, NULL))
		return GetLastError();
	DWORD open = PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0);
	DWORD mode = PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS;
	SetLastError(ERROR_SUCCESS);
	*pipe = CreateNamedPipeW(name, open, mode, max_instances, bytes, bytes, 0, &sa);
	DWORD err = *pipe == INVALID_HANDLE_VALUE ? GetLastError() : ERROR_SUCCESS;
	if (!err && first && GetLastError() == ERROR_ALREADY_EXISTS) {
		/* Windows refuses an existing name under FILE_FLAG_FIRST_PIPE_INSTANCE
		 * with ERROR_ACCESS_DENIED. Wine 8 ignores the flag (kernelbase's
		 * CreateNamedPipeW always asks NtCreateNamedPipeFile for FILE_OPEN_IF)
		 * and makes one more instance of the existing pipe, saying so with
		 * ERROR_ALREADY_EXISTS: that is the same refusal, so it gets the same
		 * answer (the instance is closed: it is not ours). */
		CloseHandle(*pipe);
		err = ERROR_ACCESS_DENIED;
	}
	if (err)
		*pipe = NULL;
	LocalFree(sa.lpSecurityDescriptor);
	return err;
}

static DWORD win_event_create(HANDLE *event)
{
	*event = CreateEventW(NULL, TRUE, FALSE, NULL);
	return *event ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_pipe_connect(HANDLE pipe, OVERLAPPED *ov)
{
	/* Overlapped: FALSE with ERROR_IO_PENDING or ERROR_PIPE_CONNECTED is the
	 * normal answer (learn.microsoft.com, ConnectNamedPipe). */
	return ConnectNamedPipe(pipe, ov) ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_pipe_disconnect(HANDLE pipe)
{
	return DisconnectNamedPipe(pipe) ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_io_result(HANDLE h, OVERLAPPED *ov, DWORD *n, BOOL wait)
{
	*n = 0;
	return GetOverlappedResult(h, ov, n, wait) ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_io_read(HANDLE h, void *buf, DWORD len, OVERLAPPED *ov, DWORD *got)
{
	/* The count argument is NULL on an overlapped handle (learn.microsoft.com,
	 * ReadFile: it "can be erroneous"); a read done at once is counted by
	 * GetOverlappedResult. */
	*got = 0;
	if (!ReadFile(h, buf, len, NULL, ov))
		return GetLastError();
	return win_io_result(h, ov, got, FALSE);
}

static DWORD win_io_write(HANDLE h, const void *buf, DWORD len, OVERLAPPED *ov, DWORD *put)
{
	*put = 0;
	if (!WriteFile(h, buf, len, NULL, ov))
		return GetLastError();
	return win_io_result(h, ov, put, FALSE);
}

static DWORD win_io_cancel(HANDLE h, OVERLAPPED *ov)
{
	return CancelIoEx(h, ov) ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_pipe_open(LPCWSTR name, HANDLE *pipe)
{
	*pipe = CreateFileW(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
			    FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, NULL);
	if (*pipe != INVALID_HANDLE_VALUE)
		return ERROR_SUCCESS;
	*pipe = NULL;
	return GetLastError();
}

static DWORD win_pipe_wait(LPCWSTR name, DWORD ms)
{
	return WaitNamedPipeW(name, ms) ? ERROR_SUCCESS : GetLastError();
}

static DWORD win_wait_object(HANDLE h, DWORD ms)
{
	switch (WaitForSingleObject(h, ms)) {
	case WAIT_OBJECT_0:
		return ERROR_SUCCESS;
	case WAIT_TIMEOUT:
		return WAIT_TIMEOUT;
	default:
		return GetLastError();
	}
}

static DWORD win_open_process(DWORD pid, HANDLE *process)
{
	*process = OpenProcess(SYNCHRONIZE, FALSE, pid);
	return *process ? ERROR_SUCCESS : GetLastError();
}

/* ---- counters (run/counters_win.c) ---- */

static ULONGLONG ft64(FILETIME f) { return ((ULONGLONG)f.dwHighDateTime << 32) | f.dwLowDateTime; }

static DWORD win_system_times(ULONGLONG *idle, ULONGLONG *kernel, ULONGLONG *user)
{
	FILETIME i, k, u;
	if (!GetSystemTimes(&i, &k, &u))
		return GetLastError();
	*idle = ft64(i);
	*kernel = ft64(k);
	*user = ft64(u);
	return ERROR_SUCCESS;
}

static DWORD win_process_list(void (*fn)(void *ctx, DWORD pid, LPCWSTR exe), void *ctx)
{
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
	if (snap == INVALID_HANDLE_VALUE)
		return GetLastError();
	PROCESSENTRY32W pe = {.dwSize = sizeof(pe)};
	for (BOOL ok = Process32FirstW(snap, &pe); ok; ok = Process32NextW(snap, &pe))
		fn(ctx, pe.th32ProcessID, pe.szExeFile);
	DWORD err = GetLastError();
	CloseHandle(snap);
	return err == ERROR_NO_MORE_FILES ? ERROR_SUCCESS : err;
}

static DWORD win_process_times(DWORD pid, ULONGLONG *cpu)
{
	HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
	if (!h)
		return GetLastError();
	FILETIME c, e, k, u;
	DWORD err = GetProcessTimes(h, &c, &e, &k, &u) ? ERROR_SUCCESS : GetLastError();
	if (!err)
		*cpu = ft64(k) + ft64(u);
	CloseHandle(h);
	return err;
}

static DWORD win_process_memory(DWORD pid, ULONGLONG *ws)
{
	HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_VM_READ, FALSE, pid);
	if (!h)
		return GetLastError();
	PROCESS_MEMORY_COUNTERS pmc = {.cb = sizeof(pmc)};
	DWORD err = K32GetProcessMemoryInfo(h, &pmc, sizeof(pmc)) ? ERROR_SUCCESS : GetLastError();
	if (!err)
		*ws = pmc.WorkingSetSize;
	CloseHandle(h);
	return err;
}

static DWORD win_disk_free(LPCWSTR dir, ULONGLONG *avail)
{
	ULARGE_INTEGER a, total, free_all;
	if (!GetDiskFreeSpaceExW(dir, &a, &total, &free_all))
		return GetLastError();
	*avail = a.QuadPart;
	return ERROR_SUCCESS;
}

static DWORD win_process_state(DWORD pid, BOOL *alive, BOOL *debugged)
{
	HANDLE h = OpenProcess(PROCESS_QUERY_INFORMATION | SYNCHRONIZE, FALSE, pid);
	if (!h)
		return GetLastError();
	*alive = WaitForSingleObject(h, 0) == WAIT_TIMEOUT;
	*debugged = FALSE;
	DWORD err = CheckRemoteDebuggerPresent(h, debugged) ? ERROR_SUCCESS : GetLastError();
	CloseHandle(h);
	return err;
}

const hs_etw_api hs_etw_api_win32 = {
	.StartTraceW = StartTraceW,
	.ControlTraceW = ControlTraceW,
	.EnableTraceEx2 = EnableTraceEx2,
	.TraceSetInformation = win_set_info,
	.TraceQueryInformation = win_query_info,
	.OpenTraceW = OpenTraceW,
	.ProcessTrace = ProcessTrace,
	.CloseTrace = CloseTrace,
	.TdhGetEventInformation = win_tdh_info,
	.TdhGetPropertySize = win_tdh_size,
	.TdhGetProperty = win_tdh_prop,
	.EventRegister = EventRegister,
	.EventWriteString = EventWriteString,
	.EventUnregister = EventUnregister,
	.last_error = win_last_error,
	.is_admin = win_is_admin,
	.enable_privilege = win_enable_privilege,
	.full_path = win_full_path,
	.file_size = win_file_size,
	.delete_file = win_delete_file,
	.create_process = win_create_process,
	.wait_process = win_wait_object, /* a process handle is a waitable object like any other */
	.exit_code = win_exit_code,
	.terminate_process = win_terminate_process,
	.close_handle = win_close_handle,
	.create_merged_trace = win_create_merged_trace,
	.query_dos_device = win_query_dos_device,
	.sleep = win_sleep,
	.create_thread = win_create_thread,
	.join_thread = win_join_thread,
	.qpc = win_qpc,
	.system_time = win_system_time,
	.token_sid = win_token_sid,
	.pipe_create = win_pipe_create,
	.event_create = win_event_create,
	.pipe_connect = win_pipe_connect,
	.pipe_disconnect = win_pipe_disconnect,
	.io_read = win_io_read,
	.io_write = win_io_write,
	.io_result = win_io_result,
	.io_cancel = win_io_cancel,
	.pipe_open = win_pipe_open,
	.pipe_wait = win_pipe_wait,
	.wait_object = win_wait_object,
	.open_process = win_open_process,
	.system_times = win_system_times,
	.process_list = win_process_list,
	.process_times = win_process_times,
	.process_memory = win_process_memory,
	.disk_free = win_disk_free,
	.process_state = win_process_state,
};

static const hs_etw_api *current = &hs_etw_api_win32;

const hs_etw_api *hs_etw_api_get(void)
{
	return current;
}

void hs_etw_api_set(const hs_etw_api *api)
{
	current = api ? api : &hs_etw_api_win32;
}
