/* etw/launch.c: launch mode on Windows: a private system-logger session samples CPU while one program runs, then a merged .etl. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "etw/cmdline.h"
#include "etw/etw.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/imageid.h"
#include "hindsight/launch.h"
#include "util/strbuf.h"

/* What a merge adds so the file is self-contained for symbol lookup on
 * another machine: image identities, build info, volume mapping (kernel
 * paths -> drive letters), WinSAT and event metadata, as xperf and PerfView
 * request. */
#define MERGE_FLAGS (HS_MERGE_IMAGEID | HS_MERGE_BUILDINFO | HS_MERGE_VOLUME_MAPPING | HS_MERGE_WINSAT | HS_MERGE_EVENT_METADATA)

typedef struct {
	const hs_etw_api *api;
	const hs_msg *msg;
	FILE *detail; /* hs_launch_opts.detail */
	hs_etw_session s;
	WCHAR raw[HS_ETW_MAX_NAME_CHARS];
	WCHAR out[HS_ETW_MAX_NAME_CHARS];
	bool interval_set, old_interval_known;
	TRACE_PROFILE_INTERVAL old_interval;
} launch;

/* The output's UTF-8 path: --out, else next to the program (or in the
 * current folder when the program is a bare name found on PATH). */
static hs_status output_path(const hs_plan_session *ps, const hs_launch_opts *o, char *out, size_t cap)
{
	if (o->out) {
		if (strlen(o->out) >= cap)
			return HS_ELIMIT;
		strcpy(out, o->out);
		return HS_OK;
	}
	const char *slash = NULL;
	for (const char *p = o->prog; *p; p++)
		if (*p == '\\' || *p == '/')
			slash = p;
	int n = slash ? snprintf(out, cap, "%.*s\\%s", (int)(slash - o->prog), o->prog, ps->session->output)
		      : snprintf(out, cap, "%s", ps->session->output);
	return n > 0 && (size_t)n < cap ? HS_OK : HS_ELIMIT;
}

static hs_status full_wide(launch *L, const char *path, WCHAR *out)
{
	WCHAR rel[HS_ETW_MAX_NAME_CHARS];
	hs_status st = hs_etw_widen(path, rel, HS_ETW_MAX_NAME_CHARS);
	if (st != HS_OK) {
		hs_launch_say(L->msg, HS_MSG_ERROR, "%s: path too long for ETW (%d characters at most)", path,
			      HS_ETW_MAX_NAME_CHARS);
		return st;
	}
	DWORD err = L->api->full_path(rel, out, HS_ETW_MAX_NAME_CHARS);
	return err == ERROR_SUCCESS ? HS_OK : hs_etw_report(L->msg, err, "resolving %s", path);
}

/* The profile timer is global to the machine: remember what it was. */
static void set_interval(launch *L, uint32_t interval_100ns)
{
	if (!interval_100ns)
		return;
	TRACE_PROFILE_INTERVAL cur = {.Source = 0, .Interval = 0};
	ULONG got = 0;
	ULONG err = L->api->TraceQueryInformation(L->s.handle, TraceSampledProfileIntervalInfo, &cur, sizeof(cur), &got);
	if (err == ERROR_SUCCESS && cur.Interval) {
		L->old_interval = cur;
		L->old_interval_known = true;
	}
	TRACE_PROFILE_INTERVAL want = {.Source = 0, .Interval = interval_100ns};
	err = L->api->TraceSetInformation(L->s.handle, TraceSampledProfileIntervalInfo, &want, sizeof(want));
	if (err != ERROR_SUCCESS) {
		hs_etw_report(L->msg, err, "setting the sample interval to %" PRIu32 " x 100 ns", interval_100ns);
		hs_launch_say(L->msg, HS_MSG_WARN, "sampling at this machine's current rate instead");
		return;
	}
	L->interval_set = true;
	hs_launch_say(L->msg, HS_MSG_INFO, "CPU sample interval %" PRIu32 " x 100 ns (%.0f Hz)", interval_100ns,
		      1e7 / interval_100ns);
}

static void restore_interval(launch *L)
{
	if (!L->interval_set)
		return;
	L->interval_set = false;
	/* Unknown before: put back Windows' default of 1 ms rather than leave ours. */
	TRACE_PROFILE_INTERVAL back = L->old_interval_known ? L->old_interval
							    : (TRACE_PROFILE_INTERVAL){.Source = 0, .Interval = 10000};
	ULONG err = L->api->TraceSetInformation(L->s.handle, TraceSampledProfileIntervalInfo, &back, sizeof(back));
	if (err != ERROR_SUCCESS)
		hs_etw_report(L->msg, err, "restoring the machine's sample interval (%lu x 100 ns)",
			      (unsigned long)back.Interval);
}

typedef struct {
	uint64_t samples, stacks, images, processes, records;
} trace_counts;

static int count_record(const hs_etl_record *r, void *ctx)
{
	trace_counts *c = ctx;
	c->records++;
	switch (hs_etlk_classify(r)) {
	case HS_ETLK_SAMPLE:
		c->samples++;
		break;
	case HS_ETLK_STACK:
	case HS_ETLK_STACK_KEY:
		c->stacks++;
		break;
	case HS_ETLK_IMAGE:
		c->images++;
		break;
	case HS_ETLK_PROCESS:
		c->processes++;
		break;
	default:
		break;
	}
	return 0;
}

/* Kernel paths name volumes by device (\Device\HarddiskVolume3\...); the
 * drive letters they are mounted at are what files open through. */
typedef struct {
	const hs_etw_api *api;
	char device[26][256];
} volume_map;

static void volume_map_init(volume_map *m, const hs_etw_api *api)
{
	memset(m, 0, sizeof(*m));
	m->api = api;
	for (int d = 0; d < 26; d++) {
		WCHAR drive[3] = {(WCHAR)(L'A' + d), L':', 0};
		WCHAR target[256];
		if (api->query_dos_device(drive, target, 256) != ERROR_SUCCESS)
			continue;
		char *t = hs_etw_narrow(target);
		if (t && strlen(t) < sizeof(m->device[d]))
			strcpy(m->device[d], t);
		free(t);
	}
}

static bool map_kernel_path(const char *kernel_path, char *out, size_t cap, void *ctx)
{
	volume_map *m = ctx;
	static const char sysroot[] = "\\SystemRoot\\";
	if (!_strnicmp(kernel_path, sysroot, sizeof(sysroot) - 1)) {
		const char *root = getenv("SystemRoot");
		int n = snprintf(out, cap, "%s\\%s", root ? root : "C:\\Windows", kernel_path + sizeof(sysroot) - 1);
		return n > 0 && (size_t)n < cap;
	}
	for (int d = 0; d < 26; d++) {
		size_t len = strlen(m->device[d]);
		if (len && !_strnicmp(kernel_path, m->device[d], len) && kernel_path[len] == '\\') {
			int n = snprintf(out, cap, "%c:%s", 'A' + d, kernel_path + len);
			return n > 0 && (size_t)n < cap;
		}
	}
	/* Already a drive path (some images are logged that way). */
	if (kernel_path[0] && kernel_path[1] == ':') {
		int n = snprintf(out, cap, "%s", kernel_path);
		return n > 0 && (size_t)n < cap;
	}
	return false;
}

/* Raw kernel trace -> merged output: KernelTraceControl when installed,
 * else the project's own image-identity records. */
static hs_status merge(launch *L, const char *raw_utf8, const char *out_utf8, hs_launch_result *res)
{
	LPCWSTR in[1] = {L->raw};
	DWORD err = L->api->create_merged_trace(L->out, in, 1, MERGE_FLAGS);
	if (err == ERROR_SUCCESS || err == ERROR_INSUFFICIENT_BUFFER) {
		if (err == ERROR_INSUFFICIENT_BUFFER)
			hs_launch_say(L->msg, HS_MSG_WARN,
				      "the merge lost some events (ERROR_INSUFFICIENT_BUFFER); the file is usable");
		hs_launch_say(L->msg, HS_MSG_INFO,
			      "merged with KernelTraceControl.dll (image identities, volume mapping)");
		return HS_OK;
	}
	if (err == ERROR_MOD_NOT_FOUND || err == ERROR_PROC_NOT_FOUND)
		hs_launch_say(L->msg, HS_MSG_WARN,
			      "KernelTraceControl.dll (Windows Performance Toolkit) is not installed; adding "
			      "the image identities with hindsight's own writer");
	else
		hs_etw_report(L->msg, err,
			      "CreateMergedTraceFile; adding the image identities with hindsight's own "
			      "writer instead");
	volume_map vm;
	volume_map_init(&vm, L->api);
	hs_imageid_opts io = {.map = map_kernel_path, .map_ctx = &vm, .log = L->detail};
	hs_imageid_report rep;
	memset(&rep, 0, sizeof(rep));
	hs_status st = hs_etl_add_image_ids(raw_utf8, out_utf8, &io, &rep);
	if (st != HS_OK) {
		hs_launch_say(L->msg, HS_MSG_ERROR, "cannot add image identities to %s: %s", raw_utf8, hs_strerror(st));
	} else {
		hs_launch_say(L->msg, HS_MSG_INFO,
			      "image identities: %" PRIu32 " images, %" PRIu32 " with a PDB identity, %" PRIu32
			      " without, %" PRIu32 " unreadable",
			      rep.images, rep.images_rsds, rep.images_no_rsds, rep.images_failed);
		res->build_ids = rep.images_rsds;
	}
	hs_imageid_report_free(&rep);
	return st;
}

hs_status hs_etw_launch_run(const hs_plan *plan, const hs_launch_opts *o, const hs_msg *msg, hs_launch_result *res)
{
	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	msg = hs_launch_msg(msg);
	launch L = {.api = hs_etw_api_get(), .msg = msg, .detail = o->detail};
	const hs_etw_api *api = L.api;
	HANDLE proc = NULL;
	char *cmd = NULL;
	WCHAR *wcmd = NULL;
	char raw_utf8[HS_LAUNCH_MAX_PATH_CHARS];
	hs_status st = HS_EINVAL;

	const hs_plan_session *ps = hs_launch_sampling_session(plan);
	if (!ps) {
		hs_launch_say(msg, HS_MSG_ERROR,
			      "the profile has no sampling session for Windows; launch mode needs one");
		goto out;
	}
	BOOL admin = FALSE;
	DWORD err = api->is_admin(&admin);
	if (err != ERROR_SUCCESS || !admin) {
		hs_launch_say(msg, HS_MSG_ERROR,
			      "launch mode needs an elevated terminal: kernel CPU sampling is for administrators.");
		hs_launch_say(
			msg, HS_MSG_ERROR,
			"close this terminal, open a new one with \"Run as administrator\" and run the same command again.");
		st = HS_EPERM;
		goto out;
	}
	/* Without it the profile source cannot be configured or enabled. */
	err = api->enable_privilege(L"SeSystemProfilePrivilege");
	if (err != ERROR_SUCCESS) {
		st = hs_etw_report(msg, err, "enabling SeSystemProfilePrivilege");
		if (st == HS_OK || st == HS_ENOENT)
			st = HS_EPERM;
		goto out;
	}
	st = output_path(ps, o, res->out_path, sizeof(res->out_path));
	if (st != HS_OK) {
		hs_launch_say(msg, HS_MSG_ERROR, "the output path is too long");
		goto out;
	}
	/* The session writes an unmerged file next to the output (same
	 * extension, ".unmerged" before it); the merge then writes the output. */
	const char *dot = strrchr(res->out_path, '.');
	const char *sep = strrchr(res->out_path, '\\');
	if (!dot || (sep && dot < sep) || strchr(dot, '/'))
		dot = res->out_path + strlen(res->out_path);
	int rn = snprintf(raw_utf8, sizeof(raw_utf8), "%.*s.unmerged%s", (int)(dot - res->out_path), res->out_path, dot);
	if (rn <= 0 || (size_t)rn >= sizeof(raw_utf8)) {
		st = HS_ELIMIT;
		goto out;
	}
	if ((st = full_wide(&L, res->out_path, L.out)) != HS_OK || (st = full_wide(&L, raw_utf8, L.raw)) != HS_OK)
		goto out;
	char *full = hs_etw_narrow(L.out);
	if (full && strlen(full) < sizeof(res->out_path))
		strcpy(res->out_path, full);
	free(full);

	cmd = hs_win_cmdline(o->prog, o->argv);
	if (!cmd) {
		hs_launch_say(msg, HS_MSG_ERROR, "cannot build the command line (a quote in the program name?)");
		st = HS_EINVAL;
		goto out;
	}
	size_t wcap = strlen(cmd) + 1;
	wcmd = calloc(wcap, sizeof(WCHAR));
	WCHAR wcwd[HS_ETW_MAX_NAME_CHARS];
	if (!wcmd || hs_etw_widen(cmd, wcmd, wcap) != HS_OK ||
	    (o->cwd && hs_etw_widen(o->cwd, wcwd, HS_ETW_MAX_NAME_CHARS) != HS_OK)) {
		hs_launch_say(msg, HS_MSG_ERROR, "the command line or --cwd is not valid UTF-8 or too long");
		st = HS_EINVAL;
		goto out;
	}

	if ((st = hs_etw_session_init(&L.s, ps, NULL)) != HS_OK)
		goto out;
	memcpy(L.s.file, L.raw, sizeof(L.s.file));
	if ((st = hs_etw_session_start(&L.s, api, msg)) != HS_OK)
		goto out;
	set_interval(&L, ps->etw.sample_interval_100ns);
	if ((st = hs_etw_session_enable(&L.s, api, msg)) != HS_OK)
		goto out;
	hs_etw_session_query(&L.s, api, msg);
	hs_launch_say(msg, HS_MSG_INFO, "session %s running: %lu buffers x %lu KB", L.s.name_utf8,
		      (unsigned long)L.s.buffers, (unsigned long)L.s.buffer_kb);

	DWORD pid = 0;
	err = api->create_process(NULL, wcmd, o->cwd ? wcwd : NULL, &proc, &pid);
	if (err != ERROR_SUCCESS) {
		st = hs_etw_report(msg, err, "starting %s", cmd);
		if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND)
			st = HS_ENOENT;
		goto out;
	}
	hs_launch_say(msg, HS_MSG_INFO, "started %s (pid %lu)%s", cmd, (unsigned long)pid,
		      o->timeout_sec ? "" : ", no timeout");
	uint64_t waited_ms = 0;
	int seen = 0;
	for (;;) {
		err = api->wait_process(proc, HS_LAUNCH_POLL_MS);
		if (err == ERROR_SUCCESS)
			break;
		if (err != WAIT_TIMEOUT) {
			st = hs_etw_report(msg, err, "waiting for pid %lu", (unsigned long)pid);
			api->terminate_process(proc, 1);
			goto out;
		}
		waited_ms += HS_LAUNCH_POLL_MS;
		if (o->timeout_sec && waited_ms >= (uint64_t)o->timeout_sec * 1000u) {
			hs_launch_say(msg, HS_MSG_WARN, "%s still runs after %u s (--timeout-sec); terminating it", cmd,
				      o->timeout_sec);
			res->timed_out = true;
			api->terminate_process(proc, 1);
			api->wait_process(proc, 5000);
			break;
		}
		/* The console delivers Ctrl+C to the program too; a second one
		 * means the user wants out now. */
		int n = o->interrupts ? *o->interrupts : 0;
		if (n > seen) {
			seen = n;
			if (n == 1) {
				hs_launch_say(msg, HS_MSG_INFO,
					      "Ctrl+C: waiting for the program to exit (press again to end it)");
			} else {
				hs_launch_say(msg, HS_MSG_INFO, "terminating the program");
				api->terminate_process(proc, 1);
				api->wait_process(proc, 5000);
				break;
			}
		}
	}
	res->wall_ns = waited_ms * 1000000u;
	DWORD code = 0;
	if (api->exit_code(proc, &code) == ERROR_SUCCESS)
		res->exit_code = (int)code;
	hs_launch_say(msg, HS_MSG_INFO, "the program exited with code %lu (0x%08lX)", (unsigned long)code,
		      (unsigned long)code);

	restore_interval(&L);
	st = hs_etw_session_stop(&L.s, api, msg);
	res->events_lost = L.s.events_lost;
	res->lost = L.s.log_buffers_lost;
	if (st != HS_OK)
		goto out;
	if (L.s.events_lost || L.s.log_buffers_lost)
		hs_launch_say(msg, HS_MSG_WARN,
			      "ETW lost %lu events and %lu buffers (raise the buffer counts in the rules)",
			      (unsigned long)L.s.events_lost, (unsigned long)L.s.log_buffers_lost);
	ULONGLONG raw_size = 0;
	if ((st = hs_etw_check_output(api, L.raw, "the kernel trace", msg, &raw_size)) != HS_OK)
		goto out;
	if ((st = merge(&L, raw_utf8, res->out_path, res)) != HS_OK)
		goto out;
	ULONGLONG out_size = 0;
	if ((st = hs_etw_check_output(api, L.out, "the merged trace", msg, &out_size)) != HS_OK)
		goto out;
	res->file_bytes = out_size;
	api->delete_file(L.raw);

	hs_etl *etl = NULL;
	trace_counts tc = {0};
	if (hs_etl_open(res->out_path, &etl) == HS_OK) {
		hs_etl_foreach(etl, HS_ETL_FILE_ORDER, count_record, &tc);
		hs_etl_close(etl);
	}
	res->samples = tc.samples;
	res->mmaps = tc.images;
	res->tasks = tc.processes;
	hs_launch_say(msg, HS_MSG_INFO,
		      "%s: %" PRIu64 " CPU samples, %" PRIu64 " stacks, %" PRIu64 " image and %" PRIu64
		      " process events",
		      res->out_path, tc.samples, tc.stacks, tc.images, tc.processes);
	if (!tc.samples)
		hs_launch_say(msg, HS_MSG_WARN,
			      "warning: no CPU samples in the trace (was the program too short-lived?)");
	st = HS_OK;
out:
	restore_interval(&L);
	if (L.s.running)
		hs_etw_session_stop(&L.s, api, msg);
	if (proc)
		api->close_handle(proc);
	free(cmd);
	free(wcmd);
	return st;
}
