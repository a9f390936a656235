/* etw/error.c: Win32 error codes from tracing, token and process calls, each mapped to what it means and what the user should do. */
#include <stdarg.h>
#include <stdio.h>

#include "etw/etw.h"
#include "util/strbuf.h"

typedef struct {
	ULONG code;
	const char *name;
	hs_status status;
	const char *advice;
} err_info;

/* Meanings are those the ETW reference pages give for StartTraceW,
 * ControlTraceW, EnableTraceEx2 and TraceSetInformation, phrased as actions. */
static const err_info errors[] = {
	{ERROR_ACCESS_DENIED, "ERROR_ACCESS_DENIED", HS_EPERM,
	 "Windows refused: controlling kernel trace sessions needs an elevated terminal. Close this one, open a new "
	 "terminal with \"Run as administrator\" and run the same command again (members of Performance Log Users "
	 "may control sessions too)"},
	{ERROR_PRIVILEGE_NOT_HELD, "ERROR_PRIVILEGE_NOT_HELD", HS_EPERM,
	 "this account lacks a privilege the call needs; run from an elevated (Administrator) terminal"},
	{ERROR_NOT_ALL_ASSIGNED, "ERROR_NOT_ALL_ASSIGNED", HS_EPERM,
	 "the token does not hold the privilege (SeSystemProfilePrivilege is an administrator's); run from an elevated "
	 "terminal"},
	{ERROR_ALREADY_EXISTS, "ERROR_ALREADY_EXISTS", HS_EIO,
	 "a trace session with this name is already running; stop it with `logman stop NAME -ets` (or let the engine "
	 "replace it) and retry"},
	{ERROR_WMI_INSTANCE_NOT_FOUND, "ERROR_WMI_INSTANCE_NOT_FOUND", HS_ENOENT,
	 "no trace session of that name is running (it was stopped already)"},
	{ERROR_BAD_LENGTH, "ERROR_BAD_LENGTH", HS_EINVAL,
	 "the properties block is too small for the names; this is a bug in the engine, please report it"},
	{ERROR_MORE_DATA, "ERROR_MORE_DATA", HS_EINVAL,
	 "the properties block has no room for the session's names; this is a bug in the engine, please report it"},
	{ERROR_INVALID_PARAMETER, "ERROR_INVALID_PARAMETER", HS_EINVAL,
	 "Windows rejected a parameter: check the session's sizes and modes with `rulecheck`; event-ID filters need "
	 "Windows 8.1 or later and system providers need Windows 11 / Server 2022 or later"},
	{ERROR_INVALID_HANDLE, "ERROR_INVALID_HANDLE", HS_EINVAL,
	 "the session handle is no longer valid: the session was stopped by someone else (logman, xperf, wpr)"},
	{ERROR_BAD_PATHNAME, "ERROR_BAD_PATHNAME", HS_EIO,
	 "the output path is invalid or another session already writes to that file; pick a new file name"},
	{ERROR_PATH_NOT_FOUND, "ERROR_PATH_NOT_FOUND", HS_ENOENT,
	 "the output folder does not exist; ETW creates files but not folders"},
	{ERROR_FILE_NOT_FOUND, "ERROR_FILE_NOT_FOUND", HS_ENOENT, "the file does not exist"},
	{ERROR_DISK_FULL, "ERROR_DISK_FULL", HS_EIO,
	 "not enough free disk space: a circular file needs its maximum size free, and on the system drive ETW also "
	 "keeps 200 MB free; free space or lower max_file_mb in the rules"},
	{ERROR_HANDLE_DISK_FULL, "ERROR_HANDLE_DISK_FULL", HS_EIO, "the disk is full; free space and retry"},
	{ERROR_NO_SYSTEM_RESOURCES, "ERROR_NO_SYSTEM_RESOURCES", HS_EIO,
	 "Windows is out of trace sessions (64 at most, 8 system loggers) or of nonpaged memory for the buffers: list "
	 "sessions with `logman query -ets`, stop unused ones, or lower ring_mb / buffer counts in the rules"},
	{ERROR_OUTOFMEMORY, "ERROR_OUTOFMEMORY", HS_ENOMEM,
	 "not enough memory for the session's buffers; lower ring_mb or the buffer counts in the rules"},
	{ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", HS_ENOMEM,
	 "not enough memory for the session's buffers; lower ring_mb or the buffer counts in the rules"},
	{ERROR_NOT_SUPPORTED, "ERROR_NOT_SUPPORTED", HS_EUNSUPPORTED,
	 "this Windows version does not support the request (see the rules' requirements in docs/rules-language.md)"},
	{ERROR_CALL_NOT_IMPLEMENTED, "ERROR_CALL_NOT_IMPLEMENTED", HS_EUNSUPPORTED,
	 "this system does not implement the call (Wine's ETW, for one, is only a stub)"},
	{ERROR_TIMEOUT, "ERROR_TIMEOUT", HS_EIO,
	 "a provider did not answer the enable request in time; it may be busy or hung, retry"},
	{ERROR_SHARING_VIOLATION, "ERROR_SHARING_VIOLATION", HS_EIO,
	 "another program holds the output file open; close it (a viewer, an antivirus scan) and retry"},
	{ERROR_WRITE_PROTECT, "ERROR_WRITE_PROTECT", HS_EIO, "the output media is write-protected; pick another folder"},
	{ERROR_INSUFFICIENT_BUFFER, "ERROR_INSUFFICIENT_BUFFER", HS_EIO,
	 "the merge could not keep every event (some were lost); the merged file is still usable"},
	{ERROR_MOD_NOT_FOUND, "ERROR_MOD_NOT_FOUND", HS_ENOENT,
	 "KernelTraceControl.dll is not installed (it ships with the Windows Performance Toolkit)"},
	{ERROR_PROC_NOT_FOUND, "ERROR_PROC_NOT_FOUND", HS_ENOENT,
	 "this KernelTraceControl.dll has no CreateMergedTraceFile; install a current Windows Performance Toolkit"},
	{ERROR_FILENAME_EXCED_RANGE, "ERROR_FILENAME_EXCED_RANGE", HS_ELIMIT,
	 "the path is too long for ETW (1024 characters at most); use a shorter run folder"},
	{ERROR_BAD_EXE_FORMAT, "ERROR_BAD_EXE_FORMAT", HS_EINVAL, "the program is not a valid Windows executable"},
	{ERROR_ELEVATION_REQUIRED, "ERROR_ELEVATION_REQUIRED", HS_EPERM,
	 "the program asks for elevation; run the engine from an elevated terminal"},
};

static const err_info *find(ULONG err)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == err)
			return &errors[i];
	return NULL;
}

const char *hs_etw_error_name(ULONG err)
{
	const err_info *e = find(err);
	return e ? e->name : NULL;
}

const char *hs_etw_error_label(ULONG err, char *buf, size_t n)
{
	const char *s = hs_etw_error_name(err);
	if (s)
		return s;
	snprintf(buf, n, "Win32 error %lu", (unsigned long)err);
	return buf;
}

const char *hs_etw_error_advice(ULONG err)
{
	const err_info *e = find(err);
	return e ? e->advice
		 : "an unexpected Windows error; `certutil -error CODE` or `net helpmsg CODE` explains the code";
}

hs_status hs_etw_error_status(ULONG err)
{
	if (err == ERROR_SUCCESS)
		return HS_OK;
	const err_info *e = find(err);
	return e ? e->status : HS_EIO;
}

void hs_etw_say(const hs_msg *msg, hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_msg_vsay(msg, level, "etw", fmt, ap);
	va_end(ap);
}

hs_status hs_etw_report(const hs_msg *msg, ULONG err, const char *what_fmt, ...)
{
	hs_strbuf sb = {0};
	va_list ap;
	va_start(ap, what_fmt);
	hs_sb_vprintf(&sb, what_fmt, ap);
	va_end(ap);
	const char *name = hs_etw_error_name(err);
	hs_sb_printf(&sb, " failed: %s (%lu): %s", name ? name : "Win32 error", (unsigned long)err,
		     hs_etw_error_advice(err));
	hs_etw_say(msg, HS_MSG_ERROR, "%s", sb.oom ? "out of memory for a Win32 error message" : hs_sb_cstr(&sb));
	hs_sb_free(&sb);
	return hs_etw_error_status(err);
}
