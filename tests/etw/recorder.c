/* recorder.c: the recording hs_etw_api for the Windows backend's call-sequence tests (see recorder.h). */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "etw/etw.h"
#include "recorder.h"

recorder REC;

enum { MAX_SESSIONS = 8 };

static struct {
	TRACEHANDLE h;
	char name[256];
	WCHAR file[HS_ETW_MAX_NAME_CHARS];
	ULONG mode, buffers, buffer_kb;
	bool running;
} sessions[MAX_SESSIONS];
static TRACEHANDLE next_handle;
static int waits;

/* Real-time consumers: OpenTraceW's handles, each with the callback and
 * context it was given. The fake ProcessTrace runs on the engine's thread for
 * the consumer (a real one, from create_thread) and parks until CloseTrace;
 * the engine's thread waits while it logs, so the log's order is fixed. */
enum { MAX_CONSUMERS = 4, MAX_THREADS = 8, CONSUMER_BASE = 101 };
static struct {
	bool open;      /* OpenTraceW'd, not yet CloseTrace'd */
	bool running;   /* inside ProcessTrace */
	char logger[256];
	PEVENT_RECORD_CALLBACK cb;
	PVOID ctx;
	HANDLE wake;    /* auto-reset: something for the parked ProcessTrace */
	HANDLE done;    /* auto-reset: it did it (or parked for the first time) */
	bool end;       /* wake means: return */
	const EVENT_RECORD *ev;
	size_t n_ev;
} consumers[MAX_CONSUMERS];
static HANDLE threads[MAX_THREADS];
/* Our marker provider (EventRegister): registration handles from 201 on. */
enum { REG_BASE = 201 };
static REGHANDLE next_reg, live_reg[4];
static int n_threads;
static struct {
	const char *fn;
	int n;
} counts[32];

/* engine ctl's fake pipe instances (see "engine ctl's named pipe" below). */
enum { MAX_PIPES = 4, PIPE_BASE = 0x7001, EVENT_BASE = 0x7101 };
enum { OP_NONE, OP_CONNECT, OP_READ };
typedef struct {
	bool open, client_sent, reply_written;
	int op; /* OP_CONNECT or OP_READ pending on ov */
	bool cancelled;
	OVERLAPPED *ov;
	char *buf;
	DWORD len;
} rec_pipe;
static rec_pipe pipes[MAX_PIPES];
static int n_pipes, n_events;

void rec_reset(void)
{
	hs_sb_free(&REC.log);
	memset(&REC, 0, sizeof(REC));
	REC.admin = TRUE;
	REC.etw_writes_files = true;
	memset(sessions, 0, sizeof(sessions));
	memset(counts, 0, sizeof(counts));
	next_handle = 1;
	next_reg = 0;
	memset(live_reg, 0, sizeof(live_reg));
	waits = 0;
	for (int i = 0; i < MAX_CONSUMERS; i++) {
		if (consumers[i].wake)
			CloseHandle(consumers[i].wake);
		if (consumers[i].done)
			CloseHandle(consumers[i].done);
	}
	memset(consumers, 0, sizeof(consumers));
	memset(threads, 0, sizeof(threads));
	n_threads = 0;
	memset(pipes, 0, sizeof(pipes));
	n_pipes = n_events = 0;
}

void rec_fail(const char *fn, int nth, ULONG err)
{
	REC.faults[REC.n_faults++] = (rec_fault){fn, nth, err};
}

int rec_running(void)
{
	int n = 0;
	for (int i = 0; i < MAX_SESSIONS; i++)
		n += sessions[i].running;
	return n;
}

const char *rec_log(void)
{
	return hs_sb_cstr(&REC.log);
}

/* Counts the call and returns the injected error for this occurrence, or 0. */
static ULONG fault(const char *fn)
{
	int n = 0;
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		if (!counts[i].fn)
			counts[i].fn = fn;
		if (!strcmp(counts[i].fn, fn)) {
			n = ++counts[i].n;
			break;
		}
	}
	for (size_t i = 0; i < REC.n_faults; i++)
		if (!strcmp(REC.faults[i].fn, fn) && (REC.faults[i].nth == 0 || REC.faults[i].nth == n))
			return REC.faults[i].err;
	return 0;
}

static void result(ULONG err)
{
	if (err)
		hs_sb_printf(&REC.log, " -> %s\n", hs_etw_error_name(err) ? hs_etw_error_name(err) : "error");
	else
		hs_sb_append(&REC.log, " -> ok\n");
}

static void wide(const WCHAR *w)
{
	char *s = hs_etw_narrow(w);
	hs_sb_printf(&REC.log, "\"%s\"", s ? s : "?");
	free(s);
}

/* A stub file where ETW would write one (or a copy of a real trace). */
static void make_file(const WCHAR *path)
{
	if (!REC.etw_writes_files || !path[0])
		return;
	FILE *out = _wfopen(path, L"wb");
	if (!out)
		return;
	FILE *in = REC.stop_writes ? fopen(REC.stop_writes, "rb") : NULL;
	if (in) {
		char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, n, out);
		fclose(in);
	} else {
		fputs("not an etl: written by the test recorder\n", out);
	}
	fclose(out);
}

static int find_session(TRACEHANDLE h, const char *name)
{
	for (int i = 0; i < MAX_SESSIONS; i++)
		if (sessions[i].running && ((h && sessions[i].h == h) || (!h && name && !strcmp(sessions[i].name, name))))
			return i;
	return -1;
}

static void props_text(const EVENT_TRACE_PROPERTIES *p, bool start)
{
	const char *base = (const char *)p;
	hs_sb_printf(&REC.log, " Wnode.BufferSize=%lu Flags=0x%08lx", (unsigned long)p->Wnode.BufferSize,
		     (unsigned long)p->Wnode.Flags);
	if (start)
		hs_sb_printf(&REC.log,
			     " Clock=%lu BufferSize=%lu Min=%lu Max=%lu MaxFile=%lu Mode=0x%08lx FlushTimer=%lu "
			     "EnableFlags=0x%lx",
			     (unsigned long)p->Wnode.ClientContext, (unsigned long)p->BufferSize,
			     (unsigned long)p->MinimumBuffers, (unsigned long)p->MaximumBuffers,
			     (unsigned long)p->MaximumFileSize, (unsigned long)p->LogFileMode, (unsigned long)p->FlushTimer,
			     (unsigned long)p->EnableFlags);
	hs_sb_printf(&REC.log, " NameOff=%lu FileOff=%lu", (unsigned long)p->LoggerNameOffset,
		     (unsigned long)p->LogFileNameOffset);
	if (p->LogFileNameOffset) {
		hs_sb_append(&REC.log, " file=");
		wide((const WCHAR *)(base + p->LogFileNameOffset));
	}
}

static ULONG WINAPI rec_start(PTRACEHANDLE handle, LPCWSTR name, PEVENT_TRACE_PROPERTIES p)
{
	char *n = hs_etw_narrow(name);
	hs_sb_printf(&REC.log, "StartTraceW name=\"%s\"", n);
	props_text(p, true);
	ULONG err = fault("StartTraceW");
	if (!err && find_session(0, n) >= 0)
		err = ERROR_ALREADY_EXISTS;
	if (!err) {
		int i = 0;
		while (i < MAX_SESSIONS && sessions[i].running)
			i++;
		sessions[i].running = true;
		sessions[i].h = *handle = next_handle++;
		snprintf(sessions[i].name, sizeof(sessions[i].name), "%s", n);
		sessions[i].file[0] = 0;
		if (p->LogFileNameOffset)
			wcscpy(sessions[i].file, (const WCHAR *)((const char *)p + p->LogFileNameOffset));
		sessions[i].mode = p->LogFileMode;
		sessions[i].buffer_kb = p->BufferSize;
		sessions[i].buffers = REC.buffers_override ? REC.buffers_override : p->MinimumBuffers;
		p->NumberOfBuffers = sessions[i].buffers;
		hs_sb_printf(&REC.log, " handle=%llu", (unsigned long long)*handle);
	}
	free(n);
	result(err);
	return err;
}

static ULONG WINAPI rec_control(TRACEHANDLE h, LPCWSTR name, PEVENT_TRACE_PROPERTIES p, ULONG code)
{
	static const char *const codes[] = {"QUERY", "STOP", "UPDATE", "FLUSH"};
	const char *cn = code < 4 ? codes[code] : "?";
	char *n = name ? hs_etw_narrow(name) : NULL;
	hs_sb_printf(&REC.log, "ControlTraceW:%s handle=%llu name=%s%s%s", cn, (unsigned long long)h, n ? "\"" : "",
		     n ? n : "-", n ? "\"" : "");
	props_text(p, false);
	char key[32];
	snprintf(key, sizeof(key), "ControlTraceW:%s", cn);
	ULONG err = fault(key);
	int i = find_session(h, n);
	if (!err && i < 0)
		err = ERROR_WMI_INSTANCE_NOT_FOUND;
	if (!err) {
		p->NumberOfBuffers = sessions[i].buffers;
		p->BufferSize = sessions[i].buffer_kb;
		p->FreeBuffers = sessions[i].buffers / 2;
		if (code == EVENT_TRACE_CONTROL_FLUSH && p->LogFileNameOffset)
			make_file((const WCHAR *)((const char *)p + p->LogFileNameOffset));
		if (code == EVENT_TRACE_CONTROL_STOP) {
			sessions[i].running = false;
			make_file(sessions[i].file);
			/* Mode=... shows it: a real-time session's stop ends its consumer's ProcessTrace too. */
			if (sessions[i].mode & EVENT_TRACE_REAL_TIME_MODE)
				rec_rt_end(sessions[i].name);
		}
	}
	free(n);
	result(err);
	return err;
}

static ULONG WINAPI rec_enable(TRACEHANDLE h, LPCGUID provider, ULONG code, UCHAR level, ULONGLONG any, ULONGLONG all,
			       ULONG timeout, PENABLE_TRACE_PARAMETERS params)
{
	hs_guid g = {provider->Data1, provider->Data2, provider->Data3, {0}};
	memcpy(g.data4, provider->Data4, 8);
	char gt[37];
	hs_guid_format(&g, gt);
	hs_sb_printf(&REC.log, "EnableTraceEx2 handle=%llu provider={%s} code=%lu level=%u any=0x%llx all=0x%llx timeout=%lu",
		     (unsigned long long)h, gt, (unsigned long)code, level, (unsigned long long)any,
		     (unsigned long long)all, (unsigned long)timeout);
	if (params) {
		hs_sb_printf(&REC.log, " params(v%lu prop=0x%lx filters=%lu)", (unsigned long)params->Version,
			     (unsigned long)params->EnableProperty, (unsigned long)params->FilterDescCount);
		for (ULONG k = 0; k < params->FilterDescCount; k++) {
			const EVENT_FILTER_DESCRIPTOR *d = &params->EnableFilterDesc[k];
			const EVENT_FILTER_EVENT_ID *f = (const EVENT_FILTER_EVENT_ID *)(uintptr_t)d->Ptr;
			hs_sb_printf(&REC.log, " [type=0x%08lx size=%lu in=%u count=%u ids=", (unsigned long)d->Type,
				     (unsigned long)d->Size, f->FilterIn, f->Count);
			for (USHORT e = 0; e < f->Count; e++)
				hs_sb_printf(&REC.log, "%s%u", e ? "," : "", f->Events[e]);
			hs_sb_append(&REC.log, "]");
		}
	} else {
		hs_sb_append(&REC.log, " params=NULL");
	}
	ULONG err = fault(code == EVENT_CONTROL_CODE_CAPTURE_STATE ? "EnableTraceEx2:CAPTURE_STATE" : "EnableTraceEx2");
	if (!err && find_session(h, NULL) < 0)
		err = ERROR_INVALID_HANDLE;
	result(err);
	return err;
}

static ULONG WINAPI rec_event_register(LPCGUID provider, PENABLECALLBACK cb, PVOID ctx, PREGHANDLE handle)
{
	hs_guid g = {provider->Data1, provider->Data2, provider->Data3, {0}};
	memcpy(g.data4, provider->Data4, 8);
	char gt[37];
	hs_guid_format(&g, gt);
	hs_sb_printf(&REC.log, "EventRegister provider={%s} callback=%s context=%s", gt, cb ? "set" : "NULL",
		     ctx ? "set" : "NULL");
	ULONG err = fault("EventRegister");
	if (!err) {
		*handle = REG_BASE + next_reg++;
		for (size_t i = 0; i < sizeof(live_reg) / sizeof(live_reg[0]); i++)
			if (!live_reg[i]) {
				live_reg[i] = *handle;
				break;
			}
		hs_sb_printf(&REC.log, " handle=%llu", (unsigned long long)*handle);
	}
	result(err);
	return err;
}

static bool reg_live(REGHANDLE h)
{
	for (size_t i = 0; i < sizeof(live_reg) / sizeof(live_reg[0]); i++)
		if (h && live_reg[i] == h)
			return true;
	return false;
}

static ULONG WINAPI rec_event_write_string(REGHANDLE h, UCHAR level, ULONGLONG keyword, PCWSTR text)
{
	hs_sb_printf(&REC.log, "EventWriteString handle=%llu level=%u keyword=0x%llx chars=%zu text=",
		     (unsigned long long)h, level, (unsigned long long)keyword, wcslen(text));
	wide(text);
	ULONG err = fault("EventWriteString");
	if (!err && !reg_live(h))
		err = ERROR_INVALID_HANDLE;
	result(err);
	return err;
}

static ULONG WINAPI rec_event_unregister(REGHANDLE h)
{
	hs_sb_printf(&REC.log, "EventUnregister handle=%llu", (unsigned long long)h);
	ULONG err = fault("EventUnregister");
	if (!err && !reg_live(h))
		err = ERROR_INVALID_HANDLE;
	for (size_t i = 0; !err && i < sizeof(live_reg) / sizeof(live_reg[0]); i++)
		if (live_reg[i] == h)
			live_reg[i] = 0;
	result(err);
	return err;
}

int rec_registered(void)
{
	int n = 0;
	for (size_t i = 0; i < sizeof(live_reg) / sizeof(live_reg[0]); i++)
		n += live_reg[i] != 0;
	return n;
}

static ULONG WINAPI rec_set_info(TRACEHANDLE h, TRACE_INFO_CLASS cls, PVOID info, ULONG len)
{
	hs_sb_printf(&REC.log, "TraceSetInformation handle=%llu class=%d len=%lu", (unsigned long long)h, (int)cls,
		     (unsigned long)len);
	if (cls == TraceSampledProfileIntervalInfo && len == sizeof(TRACE_PROFILE_INTERVAL)) {
		const TRACE_PROFILE_INTERVAL *t = info;
		hs_sb_printf(&REC.log, " source=%lu interval=%lu", (unsigned long)t->Source, (unsigned long)t->Interval);
	} else if (cls == TraceStackTracingInfo) {
		const CLASSIC_EVENT_ID *c = info;
		for (ULONG k = 0; k < len / sizeof(*c); k++) {
			hs_guid g = {c[k].EventGuid.Data1, c[k].EventGuid.Data2, c[k].EventGuid.Data3, {0}};
			memcpy(g.data4, c[k].EventGuid.Data4, 8);
			char gt[37];
			hs_guid_format(&g, gt);
			hs_sb_printf(&REC.log, " {%s}/%u", gt, c[k].Type);
		}
	}
	ULONG err = fault("TraceSetInformation");
	result(err);
	return err;
}

static ULONG WINAPI rec_query_info(TRACEHANDLE h, TRACE_INFO_CLASS cls, PVOID info, ULONG len, PULONG ret)
{
	hs_sb_printf(&REC.log, "TraceQueryInformation handle=%llu class=%d len=%lu", (unsigned long long)h, (int)cls,
		     (unsigned long)len);
	ULONG err = fault("TraceQueryInformation");
	if (!err && cls == TraceSampledProfileIntervalInfo && len >= sizeof(TRACE_PROFILE_INTERVAL)) {
		((TRACE_PROFILE_INTERVAL *)info)->Interval = 1221; /* what UIforETW's fast mode leaves behind */
		*ret = sizeof(TRACE_PROFILE_INTERVAL);
	}
	result(err);
	return err;
}

static DWORD rec_is_admin(BOOL *admin)
{
	hs_sb_append(&REC.log, "is_admin");
	DWORD err = fault("is_admin");
	*admin = REC.admin;
	if (!err)
		hs_sb_printf(&REC.log, " = %s", REC.admin ? "yes" : "no");
	result(err);
	return err;
}

static DWORD rec_enable_privilege(LPCWSTR name)
{
	hs_sb_append(&REC.log, "enable_privilege ");
	wide(name);
	DWORD err = fault("enable_privilege");
	result(err);
	return err;
}

static DWORD rec_full_path(LPCWSTR in, LPWSTR out, DWORD chars)
{
	/* Identity, so logs are the same on every machine. */
	if (wcslen(in) >= chars)
		return ERROR_FILENAME_EXCED_RANGE;
	wcscpy(out, in);
	return ERROR_SUCCESS;
}

static DWORD rec_file_size(LPCWSTR path, ULONGLONG *size)
{
	/* Real files: the recorder (or the test) made them. */
	return hs_etw_api_win32.file_size(path, size);
}

static DWORD rec_delete_file(LPCWSTR path)
{
	hs_sb_append(&REC.log, "delete_file ");
	wide(path);
	DWORD err = hs_etw_api_win32.delete_file(path);
	result(err);
	return err;
}

static DWORD rec_create_process(LPCWSTR app, LPWSTR cmdline, LPCWSTR cwd, HANDLE *process, DWORD *pid)
{
	hs_sb_append(&REC.log, "create_process app=");
	if (app)
		wide(app);
	else
		hs_sb_append(&REC.log, "NULL");
	hs_sb_append(&REC.log, " cmdline=");
	wide(cmdline);
	hs_sb_append(&REC.log, " cwd=");
	if (cwd)
		wide(cwd);
	else
		hs_sb_append(&REC.log, "NULL");
	DWORD err = fault("create_process");
	if (!err) {
		*process = (HANDLE)(uintptr_t)0x4242;
		*pid = 4242;
	}
	result(err);
	return err;
}

static DWORD rec_wait_process(HANDLE process, DWORD ms)
{
	(void)process;
	waits++;
	if (REC.interrupts && (waits == REC.interrupt_at_wait || waits == REC.interrupt_at_wait2))
		(*REC.interrupts)++;
	/* Only the first and the final wait are logged; the count tells the rest. */
	if (waits <= REC.wait_timeouts) {
		if (waits == 1)
			hs_sb_printf(&REC.log, "wait_process %lu ms -> timeout (x%d)\n", (unsigned long)ms, REC.wait_timeouts);
		return WAIT_TIMEOUT;
	}
	hs_sb_printf(&REC.log, "wait_process %lu ms -> exited\n", (unsigned long)ms);
	return ERROR_SUCCESS;
}

static DWORD rec_exit_code(HANDLE process, DWORD *code)
{
	(void)process;
	*code = REC.exit_code;
	hs_sb_printf(&REC.log, "exit_code = %lu\n", (unsigned long)REC.exit_code);
	return ERROR_SUCCESS;
}

static DWORD rec_terminate(HANDLE process, UINT code)
{
	(void)process;
	hs_sb_printf(&REC.log, "terminate_process code=%u\n", code);
	REC.wait_timeouts = 0; /* it is gone now */
	return ERROR_SUCCESS;
}

static void rec_close(HANDLE h)
{
	hs_sb_printf(&REC.log, "close_handle %p\n", (void *)h);
}

static DWORD rec_merge(LPCWSTR out, LPCWSTR const *in, ULONG n, DWORD flags)
{
	hs_sb_append(&REC.log, "create_merged_trace out=");
	wide(out);
	for (ULONG i = 0; i < n; i++) {
		hs_sb_append(&REC.log, " in=");
		wide(in[i]);
	}
	hs_sb_printf(&REC.log, " flags=0x%lx", (unsigned long)flags);
	DWORD err = fault("create_merged_trace");
	if (!err && !REC.merge_available)
		err = ERROR_MOD_NOT_FOUND;
	if (!err)
		make_file(out);
	result(err);
	return err;
}

static DWORD rec_dos_device(LPCWSTR drive, LPWSTR target, DWORD chars)
{
	if (drive[0] != L'C' || chars < 32)
		return ERROR_FILE_NOT_FOUND;
	wcscpy(target, L"\\Device\\HarddiskVolume3");
	return ERROR_SUCCESS;
}

static void rec_sleep(DWORD ms)
{
	(void)ms;
}

/* ---- engine ctl's named pipe ----
 * Instances are handles from 0x7001 on, events from 0x7101 on. Each instance
 * remembers its pending operations by OVERLAPPED, as the kernel does; only
 * the first one gets a client (REC.ctl_request), which is connected once the
 * engine asks for the connect's result, sends its request into the first
 * read, and closes its end (ERROR_BROKEN_PIPE) after a reply was written. */


static const char *pipe_err(DWORD err)
{
	switch (err) {
	case ERROR_IO_PENDING: return "ERROR_IO_PENDING";
	case ERROR_IO_INCOMPLETE: return "ERROR_IO_INCOMPLETE";
	case ERROR_BROKEN_PIPE: return "ERROR_BROKEN_PIPE";
	case ERROR_OPERATION_ABORTED: return "ERROR_OPERATION_ABORTED";
	case ERROR_PIPE_CONNECTED: return "ERROR_PIPE_CONNECTED";
	case ERROR_ACCESS_DENIED: return "ERROR_ACCESS_DENIED";
	case ERROR_NOT_FOUND: return "ERROR_NOT_FOUND";
	case ERROR_FILE_NOT_FOUND: return "ERROR_FILE_NOT_FOUND";
	case ERROR_SEM_TIMEOUT: return "ERROR_SEM_TIMEOUT";
	case ERROR_NO_DATA: return "ERROR_NO_DATA";
	default: return NULL;
	}
}

static void pipe_result(DWORD err)
{
	const char *n = pipe_err(err);
	if (n)
		hs_sb_printf(&REC.log, " -> %s\n", n);
	else
		result(err);
}

static int pipe_of(HANDLE h)
{
	int i = (int)((uintptr_t)h - PIPE_BASE);
	return i >= 0 && i < n_pipes && pipes[i].open ? i : -1;
}

static DWORD rec_token_sid(TOKEN_INFORMATION_CLASS cls, LPWSTR out, DWORD chars)
{
	/* A user of a domain, and an elevated (High) token. */
	const wchar_t *sid = cls == TokenUser ? L"S-1-5-21-1004336348-1177238915-682003330-1001" : L"S-1-16-12288";
	hs_sb_printf(&REC.log, "token_sid %s", cls == TokenUser ? "TokenUser" : "TokenIntegrityLevel");
	DWORD err = fault("token_sid");
	if (!err && wcslen(sid) >= chars)
		err = ERROR_INSUFFICIENT_BUFFER;
	if (!err) {
		wcscpy(out, sid);
		hs_sb_append(&REC.log, " = ");
		wide(sid);
	}
	result(err);
	return err;
}

static DWORD rec_pipe_create(LPCWSTR name, LPCWSTR sddl, BOOL first, DWORD max_instances, DWORD bytes, HANDLE *pipe)
{
	hs_sb_append(&REC.log, "pipe_create ");
	wide(name);
	hs_sb_append(&REC.log, " sddl=");
	wide(sddl);
	hs_sb_printf(&REC.log, " first=%s max=%lu bytes=%lu", first ? "yes" : "no", (unsigned long)max_instances,
		     (unsigned long)bytes);
	DWORD err = fault("pipe_create");
	if (!err && n_pipes == MAX_PIPES)
		err = ERROR_PIPE_BUSY;
	if (!err) {
		pipes[n_pipes] = (rec_pipe){.open = true};
		*pipe = (HANDLE)(uintptr_t)(PIPE_BASE + n_pipes++);
		hs_sb_printf(&REC.log, " = %p", (void *)*pipe);
	}
	result(err);
	return err;
}

static DWORD rec_event_create(HANDLE *event)
{
	*event = (HANDLE)(uintptr_t)(EVENT_BASE + n_events++);
	hs_sb_printf(&REC.log, "event_create = %p -> ok\n", (void *)*event);
	return ERROR_SUCCESS;
}

static DWORD rec_pipe_connect(HANDLE h, OVERLAPPED *ov)
{
	int i = pipe_of(h);
	hs_sb_printf(&REC.log, "pipe_connect %p", (void *)h);
	DWORD err = i < 0 ? ERROR_INVALID_HANDLE : fault("pipe_connect"); /* ERROR_NO_DATA: one came and went */
	if (!err)
		err = ERROR_IO_PENDING;
	if (err == ERROR_IO_PENDING)
		pipes[i] = (rec_pipe){.open = true, .op = OP_CONNECT, .ov = ov};
	pipe_result(err);
	return err;
}

static DWORD rec_pipe_disconnect(HANDLE h)
{
	int i = pipe_of(h);
	hs_sb_printf(&REC.log, "pipe_disconnect %p", (void *)h);
	DWORD err = i < 0 ? ERROR_INVALID_HANDLE : ERROR_SUCCESS;
	pipe_result(err);
	return err;
}

static DWORD rec_io_read(HANDLE h, void *buf, DWORD len, OVERLAPPED *ov, DWORD *got)
{
	int i = pipe_of(h);
	*got = 0;
	hs_sb_printf(&REC.log, "io_read %p len=%lu", (void *)h, (unsigned long)len);
	DWORD err = i < 0 ? ERROR_INVALID_HANDLE : ERROR_IO_PENDING;
	if (i >= 0) {
		pipes[i].op = OP_READ;
		pipes[i].ov = ov;
		pipes[i].buf = buf;
		pipes[i].len = len;
		pipes[i].cancelled = false;
	}
	pipe_result(err);
	return err;
}

static DWORD rec_io_write(HANDLE h, const void *buf, DWORD len, OVERLAPPED *ov, DWORD *put)
{
	(void)ov;
	int i = pipe_of(h);
	hs_sb_printf(&REC.log, "io_write %p len=%lu \"%.*s\"", (void *)h, (unsigned long)len,
		     (int)(len && ((const char *)buf)[len - 1] == '\n' ? len - 1 : len), (const char *)buf);
	DWORD err = i < 0 ? ERROR_INVALID_HANDLE : ERROR_SUCCESS;
	*put = err ? 0 : len;
	if (i >= 0)
		pipes[i].reply_written = true;
	pipe_result(err);
	return err;
}

static DWORD rec_io_result(HANDLE h, OVERLAPPED *ov, DWORD *n, BOOL wait)
{
	int i = pipe_of(h);
	*n = 0;
	hs_sb_printf(&REC.log, "io_result %p %s%s", (void *)h,
		     i < 0 ? "?" : pipes[i].op == OP_CONNECT ? "connect" : pipes[i].op == OP_READ ? "read" : "none",
		     wait ? " wait" : "");
	DWORD err = ERROR_INVALID_HANDLE;
	if (i >= 0 && pipes[i].ov == ov && pipes[i].op != OP_NONE) {
		bool client = i == 0 && REC.ctl_request;
		if (pipes[i].cancelled) {
			err = ERROR_OPERATION_ABORTED;
		} else if (pipes[i].op == OP_CONNECT) {
			err = client ? ERROR_SUCCESS : ERROR_IO_INCOMPLETE;
		} else if (client && !pipes[i].client_sent) {
			size_t len = strlen(REC.ctl_request);
			if (len > pipes[i].len)
				len = pipes[i].len;
			memcpy(pipes[i].buf, REC.ctl_request, len);
			*n = (DWORD)len;
			pipes[i].client_sent = true;
			err = ERROR_SUCCESS;
		} else {
			err = client && pipes[i].reply_written ? ERROR_BROKEN_PIPE : ERROR_IO_INCOMPLETE;
		}
		if (err == ERROR_IO_INCOMPLETE && wait)
			err = ERROR_OPERATION_ABORTED; /* nothing else would end it: the test's engine waits on a cancel only */
		if (err != ERROR_IO_INCOMPLETE)
			pipes[i].op = OP_NONE;
	}
	if (*n)
		hs_sb_printf(&REC.log, " = %lu bytes", (unsigned long)*n);
	pipe_result(err);
	return err;
}

static DWORD rec_io_cancel(HANDLE h, OVERLAPPED *ov)
{
	int i = pipe_of(h);
	hs_sb_printf(&REC.log, "io_cancel %p", (void *)h);
	DWORD err = i >= 0 && pipes[i].op != OP_NONE && pipes[i].ov == ov ? ERROR_SUCCESS : ERROR_NOT_FOUND;
	if (!err)
		pipes[i].cancelled = true;
	pipe_result(err);
	return err;
}

static DWORD rec_pipe_open(LPCWSTR name, HANDLE *pipe)
{
	hs_sb_append(&REC.log, "pipe_open ");
	wide(name);
	*pipe = NULL;
	DWORD err = fault("pipe_open");
	if (!err)
		err = ERROR_FILE_NOT_FOUND;
	pipe_result(err);
	return err;
}

static DWORD rec_pipe_wait(LPCWSTR name, DWORD ms)
{
	hs_sb_append(&REC.log, "pipe_wait ");
	wide(name);
	hs_sb_printf(&REC.log, " %lu ms", (unsigned long)ms);
	/* No pipe of that name, unless a test injects what an existing one gives
	 * (ERROR_SEM_TIMEOUT: every instance busy). */
	DWORD err = fault("pipe_wait");
	if (!err)
		err = ERROR_FILE_NOT_FOUND;
	pipe_result(err);
	return err;
}

static DWORD rec_wait_object(HANDLE h, DWORD ms)
{
	hs_sb_printf(&REC.log, "wait_object %p %lu ms -> timeout\n", (void *)h, (unsigned long)ms);
	return WAIT_TIMEOUT;
}

static DWORD rec_open_process(DWORD pid, HANDLE *process)
{
	hs_sb_printf(&REC.log, "open_process %lu -> ERROR_INVALID_PARAMETER\n", (unsigned long)pid);
	*process = NULL;
	return ERROR_INVALID_PARAMETER;
}

/* ---- the real-time consumer ---- */

static int consumer_of(TRACEHANDLE h)
{
	if (h < CONSUMER_BASE || h >= CONSUMER_BASE + MAX_CONSUMERS)
		return -1;
	return consumers[h - CONSUMER_BASE].open || consumers[h - CONSUMER_BASE].running ? (int)(h - CONSUMER_BASE)
											   : -1;
}

static TRACEHANDLE WINAPI rec_open_trace(PEVENT_TRACE_LOGFILEW lf)
{
	char *n = lf->LoggerName ? hs_etw_narrow(lf->LoggerName) : NULL;
	hs_sb_printf(&REC.log, "OpenTraceW logger=%s%s%s file=%s mode=0x%08lx event_record_callback=%s context=%s",
		     n ? "\"" : "", n ? n : "NULL", n ? "\"" : "", lf->LogFileName ? "set" : "NULL",
		     (unsigned long)lf->ProcessTraceMode, lf->EventRecordCallback ? "set" : "NULL",
		     lf->Context ? "set" : "NULL");
	ULONG err = fault("OpenTraceW");
	if (!err && (!n || find_session(0, n) < 0))
		err = ERROR_WMI_INSTANCE_NOT_FOUND;
	int c = 0;
	while (!err && c < MAX_CONSUMERS && (consumers[c].open || consumers[c].running))
		c++;
	if (!err && c == MAX_CONSUMERS)
		err = ERROR_NO_SYSTEM_RESOURCES;
	TRACEHANDLE h = INVALID_PROCESSTRACE_HANDLE;
	if (!err) {
		if (consumers[c].wake)
			CloseHandle(consumers[c].wake);
		if (consumers[c].done)
			CloseHandle(consumers[c].done);
		memset(&consumers[c], 0, sizeof(consumers[c]));
		consumers[c].open = true;
		snprintf(consumers[c].logger, sizeof(consumers[c].logger), "%s", n);
		consumers[c].cb = lf->EventRecordCallback;
		consumers[c].ctx = lf->Context;
		consumers[c].wake = CreateEventW(NULL, FALSE, FALSE, NULL);
		consumers[c].done = CreateEventW(NULL, FALSE, FALSE, NULL);
		h = CONSUMER_BASE + (TRACEHANDLE)c;
		hs_sb_printf(&REC.log, " handle=%llu", (unsigned long long)h);
	}
	REC.last_error = err;
	free(n);
	result(err);
	return h;
}

static DWORD rec_last_error(void)
{
	return REC.last_error;
}

static void deliver(int c, const EVENT_RECORD *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		EVENT_RECORD r = ev[i];
		r.UserContext = consumers[c].ctx;
		consumers[c].cb(&r);
	}
}

static ULONG WINAPI rec_process_trace(PTRACEHANDLE handles, ULONG count, LPFILETIME start, LPFILETIME end)
{
	/* On the consumer's thread; the engine's waits in create_thread until we park. */
	hs_sb_printf(&REC.log, "ProcessTrace handles=[%llu] count=%lu start=%s end=%s", (unsigned long long)handles[0],
		     (unsigned long)count, start ? "set" : "NULL", end ? "set" : "NULL");
	ULONG err = fault("ProcessTrace");
	int c = err ? -1 : consumer_of(handles[0]);
	if (!err && (c < 0 || !consumers[c].open))
		err = ERROR_INVALID_HANDLE;
	if (err) {
		result(err);
		return err;
	}
	consumers[c].running = true;
	hs_sb_printf(&REC.log, " delivers %zu events, blocks", REC.n_rt_events);
	result(0);
	deliver(c, REC.rt_events, REC.n_rt_events);
	SetEvent(consumers[c].done); /* parked */
	for (;;) {
		WaitForSingleObject(consumers[c].wake, INFINITE);
		if (consumers[c].end)
			break;
		deliver(c, consumers[c].ev, consumers[c].n_ev);
		SetEvent(consumers[c].done);
	}
	consumers[c].running = false;
	return ERROR_SUCCESS;
}

static ULONG WINAPI rec_close_trace(TRACEHANDLE h)
{
	hs_sb_printf(&REC.log, "CloseTrace handle=%llu", (unsigned long long)h);
	ULONG err = fault("CloseTrace");
	int c = err ? -1 : consumer_of(h);
	if (!err && (c < 0 || !consumers[c].open))
		err = ERROR_INVALID_HANDLE;
	if (!err) {
		consumers[c].open = false;
		if (consumers[c].running) {
			consumers[c].end = true;
			SetEvent(consumers[c].wake);
		}
	}
	result(err);
	return err;
}

static DWORD rec_create_thread(DWORD(WINAPI *fn)(LPVOID), LPVOID arg, HANDLE *thread)
{
	DWORD err = fault("create_thread");
	if (!err && n_threads == MAX_THREADS)
		err = ERROR_NOT_ENOUGH_MEMORY;
	/* The whole line first: the new thread logs as soon as it runs. */
	hs_sb_append(&REC.log, "create_thread");
	if (!err)
		hs_sb_printf(&REC.log, " thread=%d", n_threads + 1);
	result(err);
	if (err)
		return err;
	/* Which consumer it will serve is known once it runs; wait for the one
	 * that is open and not yet running to park, or for the thread to end. */
	int c = -1;
	for (int i = 0; i < MAX_CONSUMERS && c < 0; i++)
		if (consumers[i].open && !consumers[i].running)
			c = i;
	HANDLE h = CreateThread(NULL, 0, fn, arg, 0, NULL);
	if (!h)
		return GetLastError();
	threads[n_threads] = h;
	*thread = (HANDLE)(uintptr_t)(0x7000 + n_threads);
	n_threads++;
	if (c >= 0) {
		HANDLE both[2] = {consumers[c].done, h};
		if (WaitForMultipleObjects(2, both, FALSE, 10000) == WAIT_TIMEOUT)
			hs_sb_append(&REC.log, "(the consumer thread did not park within 10 s)\n");
	}
	return ERROR_SUCCESS;
}

static DWORD rec_join_thread(HANDLE thread, DWORD ms)
{
	int t = (int)((uintptr_t)thread - 0x7000);
	hs_sb_printf(&REC.log, "join_thread thread=%d ms=%lu", t + 1, (unsigned long)ms);
	DWORD err = fault("join_thread");
	if (!err && (t < 0 || t >= n_threads || !threads[t]))
		err = ERROR_INVALID_HANDLE;
	if (!err) {
		/* Really waits (bounded): a consumer that does not end fails the test, not hangs it. */
		if (WaitForSingleObject(threads[t], ms < 10000 ? ms : 10000) == WAIT_OBJECT_0) {
			CloseHandle(threads[t]);
			threads[t] = NULL;
		} else {
			err = WAIT_TIMEOUT;
		}
	}
	if (err == WAIT_TIMEOUT)
		hs_sb_append(&REC.log, " -> timeout\n");
	else
		result(err);
	return err;
}

/* ---- TDH over the test's schema ---- */

static const rec_tdh_prop *tdh_find(PPROPERTY_DATA_DESCRIPTOR d)
{
	const wchar_t *name = (const wchar_t *)(uintptr_t)d->PropertyName;
	for (size_t i = 0; name && i < REC.n_tdh_props; i++)
		if (!wcscmp(REC.tdh_props[i].name, name))
			return &REC.tdh_props[i];
	return NULL;
}

static ULONG WINAPI rec_tdh_info(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, PTRACE_EVENT_INFO info, PULONG size)
{
	(void)ctx;
	hs_sb_printf(&REC.log, "TdhGetEventInformation id=%u ctx=%lu user_data=%u extended=%u size=%lu",
		     ev->EventHeader.EventDescriptor.Id, (unsigned long)n_ctx, ev->UserDataLength,
		     ev->ExtendedDataCount, (unsigned long)*size);
	ULONG err = fault("TdhGetEventInformation");
	size_t names = 0;
	for (size_t i = 0; i < REC.n_tdh_props; i++)
		names += (wcslen(REC.tdh_props[i].name) + 1) * sizeof(WCHAR);
	size_t need = offsetof(TRACE_EVENT_INFO, EventPropertyInfoArray) + REC.n_tdh_props * sizeof(EVENT_PROPERTY_INFO) +
		      names;
	if (!err && !REC.n_tdh_props)
		err = ERROR_NOT_FOUND;
	if (!err && *size < need) {
		*size = (ULONG)need;
		err = ERROR_INSUFFICIENT_BUFFER;
	}
	if (!err) {
		memset(info, 0, need);
		info->ProviderGuid = ev->EventHeader.ProviderId;
		info->EventDescriptor = ev->EventHeader.EventDescriptor;
		info->PropertyCount = info->TopLevelPropertyCount = (ULONG)REC.n_tdh_props;
		size_t at = offsetof(TRACE_EVENT_INFO, EventPropertyInfoArray) + REC.n_tdh_props * sizeof(EVENT_PROPERTY_INFO);
		for (size_t i = 0; i < REC.n_tdh_props; i++) {
			EVENT_PROPERTY_INFO *p = &info->EventPropertyInfoArray[i];
			p->Flags = (PROPERTY_FLAGS)REC.tdh_props[i].flags;
			p->NameOffset = (ULONG)at;
			p->nonStructType.InType = REC.tdh_props[i].in_type;
			p->count = REC.tdh_props[i].count ? REC.tdh_props[i].count : 1;
			p->length = REC.tdh_props[i].size;
			size_t n = (wcslen(REC.tdh_props[i].name) + 1) * sizeof(WCHAR);
			memcpy((char *)info + at, REC.tdh_props[i].name, n);
			at += n;
		}
		*size = (ULONG)need;
	}
	result(err);
	return err;
}

static void tdh_name(PPROPERTY_DATA_DESCRIPTOR d)
{
	hs_sb_append(&REC.log, " name=");
	wide((const WCHAR *)(uintptr_t)d->PropertyName);
	hs_sb_printf(&REC.log, " index=0x%lx", (unsigned long)d->ArrayIndex);
}

static ULONG WINAPI rec_tdh_size(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, ULONG n_desc,
				 PPROPERTY_DATA_DESCRIPTOR desc, PULONG size)
{
	(void)ev;
	(void)ctx;
	hs_sb_printf(&REC.log, "TdhGetPropertySize ctx=%lu n=%lu", (unsigned long)n_ctx, (unsigned long)n_desc);
	tdh_name(desc);
	const rec_tdh_prop *p = tdh_find(desc);
	ULONG err = fault("TdhGetPropertySize");
	if (!err && !p)
		err = ERROR_NOT_FOUND;
	if (!err)
		*size = p->size;
	result(err);
	return err;
}

static ULONG WINAPI rec_tdh_get(PEVENT_RECORD ev, ULONG n_ctx, PTDH_CONTEXT ctx, ULONG n_desc,
				 PPROPERTY_DATA_DESCRIPTOR desc, ULONG size, PBYTE out)
{
	(void)ctx;
	hs_sb_printf(&REC.log, "TdhGetProperty ctx=%lu n=%lu", (unsigned long)n_ctx, (unsigned long)n_desc);
	tdh_name(desc);
	hs_sb_printf(&REC.log, " size=%lu", (unsigned long)size);
	const rec_tdh_prop *p = tdh_find(desc);
	ULONG err = fault("TdhGetProperty");
	if (!err && !p)
		err = ERROR_NOT_FOUND;
	if (!err && size < p->size)
		err = ERROR_INSUFFICIENT_BUFFER;
	if (!err && (size_t)p->offset + p->size > ev->UserDataLength)
		err = ERROR_INVALID_PARAMETER; /* the data is shorter than the schema says */
	if (!err)
		memcpy(out, (const char *)ev->UserData + p->offset, p->size);
	result(err);
	return err;
}

static ULONGLONG rec_qpc(ULONGLONG *per_second)
{
	*per_second = REC_QPC_PER_SECOND;
	return REC.qpc_now;
}

static ULONGLONG rec_system_time(void)
{
	return REC.system_now;
}

static int running_consumer(const char *logger)
{
	for (int i = 0; i < MAX_CONSUMERS; i++)
		if (consumers[i].running && !strcmp(consumers[i].logger, logger))
			return i;
	return -1;
}

bool rec_rt_deliver(const char *logger, const EVENT_RECORD *ev, size_t n)
{
	int c = running_consumer(logger);
	if (c < 0)
		return false;
	hs_sb_printf(&REC.log, "(ProcessTrace of consumer %d delivers %zu events)\n", CONSUMER_BASE + c, n);
	consumers[c].ev = ev;
	consumers[c].n_ev = n;
	SetEvent(consumers[c].wake);
	return WaitForSingleObject(consumers[c].done, 10000) == WAIT_OBJECT_0;
}

bool rec_rt_end(const char *logger)
{
	int c = running_consumer(logger);
	if (c < 0)
		return false;
	consumers[c].end = true;
	SetEvent(consumers[c].wake);
	/* Until it returned, so that the engine's next poll sees it ended. */
	for (int i = 0; i < 1000 && consumers[c].running; i++)
		Sleep(10);
	return !consumers[c].running;
}

int rec_rt_running(void)
{
	int n = 0;
	for (int i = 0; i < MAX_CONSUMERS; i++)
		n += consumers[i].running;
	return n;
}

const hs_etw_api rec_api = {
	.StartTraceW = rec_start,
	.ControlTraceW = rec_control,
	.EnableTraceEx2 = rec_enable,
	.TraceSetInformation = rec_set_info,
	.TraceQueryInformation = rec_query_info,
	.OpenTraceW = rec_open_trace,
	.ProcessTrace = rec_process_trace,
	.CloseTrace = rec_close_trace,
	.TdhGetEventInformation = rec_tdh_info,
	.TdhGetPropertySize = rec_tdh_size,
	.TdhGetProperty = rec_tdh_get,
	.EventRegister = rec_event_register,
	.EventWriteString = rec_event_write_string,
	.EventUnregister = rec_event_unregister,
	.last_error = rec_last_error,
	.is_admin = rec_is_admin,
	.enable_privilege = rec_enable_privilege,
	.full_path = rec_full_path,
	.file_size = rec_file_size,
	.delete_file = rec_delete_file,
	.create_process = rec_create_process,
	.wait_process = rec_wait_process,
	.exit_code = rec_exit_code,
	.terminate_process = rec_terminate,
	.close_handle = rec_close,
	.create_merged_trace = rec_merge,
	.query_dos_device = rec_dos_device,
	.sleep = rec_sleep,
	.create_thread = rec_create_thread,
	.join_thread = rec_join_thread,
	.qpc = rec_qpc,
	.system_time = rec_system_time,
	.token_sid = rec_token_sid,
	.pipe_create = rec_pipe_create,
	.event_create = rec_event_create,
	.pipe_connect = rec_pipe_connect,
	.pipe_disconnect = rec_pipe_disconnect,
	.io_read = rec_io_read,
	.io_write = rec_io_write,
	.io_result = rec_io_result,
	.io_cancel = rec_io_cancel,
	.pipe_open = rec_pipe_open,
	.pipe_wait = rec_pipe_wait,
	.wait_object = rec_wait_object,
	.open_process = rec_open_process,
};

void rec_add_preexisting(const char *name)
{
	sessions[MAX_SESSIONS - 1].running = true;
	sessions[MAX_SESSIONS - 1].h = 999;
	snprintf(sessions[MAX_SESSIONS - 1].name, sizeof(sessions[0].name), "%s", name);
}
