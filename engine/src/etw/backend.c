/* etw/backend.c: the Windows capture backend: the profile's ETW sessions, ring snapshots by FLUSH to a new file, final checks. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "etw/etw.h"
#include "hindsight/backend.h"
#include "util/strbuf.h"

struct hs_backend {
	const hs_plan *plan;
	const hs_etw_api *api;
	const hs_msg *msg;
	volatile int *interrupts;
	char *run_dir;
	hs_etw_session *s;
	hs_session_status *st;
	hs_etw_rt **rt; /* [n]: the real-time consumer of a session, or NULL */
	size_t n;
	bool stopped;
	hs_key_event_fn observer;
	void *observer_ctx;
	hs_etw_marker marker;
};

static const double MIB = 1048576.0;

/* run_dir\name as an absolute path (ETW expands nothing itself). */
static hs_status output_path(hs_backend *b, const char *name, WCHAR *out)
{
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s\\%s", b->run_dir, name);
	if (sb.oom)
		return HS_ENOMEM;
	WCHAR rel[HS_ETW_MAX_NAME_CHARS];
	hs_status st = hs_etw_widen(hs_sb_cstr(&sb), rel, HS_ETW_MAX_NAME_CHARS);
	hs_sb_free(&sb);
	if (st != HS_OK)
		return st;
	DWORD err = b->api->full_path(rel, out, HS_ETW_MAX_NAME_CHARS);
	return err == ERROR_SUCCESS ? HS_OK : hs_etw_report(b->msg, err, "resolving the path of %s", name);
}

static void report_running(hs_backend *b, hs_etw_session *s)
{
	const hs_plan_session *ps = s->ps;
	const hs_plan_etw *e = &ps->etw;
	double mib = (double)s->buffers * s->buffer_kb * 1024.0 / MIB;
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "session %s (%s) running: %lu buffers x %lu KB = %.1f MiB nonpaged", ps->session->name,
		     s->name_utf8, (unsigned long)s->buffers, (unsigned long)s->buffer_kb, mib);
	if (ps->session->mode == HS_MODE_BUFFERING)
		hs_sb_printf(&sb, "; the ring keeps the newest %.1f MiB of events, saved on Ctrl+C", mib);
	else
		hs_sb_printf(&sb, "; %s, circular, at most %lu MB", ps->session->output, (unsigned long)e->max_file_mb);
	hs_etw_say(b->msg, HS_MSG_INFO, "%s", sb.oom ? "out of memory" : hs_sb_cstr(&sb));
	hs_sb_free(&sb);
	if (!s->buffers)
		hs_etw_say(b->msg, HS_MSG_WARN,
			   "warning: ETW reports no buffers for %s, so it is not really running; ETW on this "
			   "system may be a stub (as under Wine) and nothing will be recorded",
			   s->name_utf8);
	else if (ps->session->mode == HS_MODE_BUFFERING && s->buffers < e->min_buffers)
		hs_etw_say(b->msg, HS_MSG_WARN,
			   "warning: ETW gave %s %lu of the %lu buffers asked for; the ring covers %.0f%% of the "
			   "planned history",
			   s->name_utf8, (unsigned long)s->buffers, (unsigned long)e->min_buffers,
			   100.0 * s->buffers / e->min_buffers);
	hs_etw_say(b->msg, HS_MSG_INFO, "%s: %zu of %zu providers enabled, %zu whitelisted event ids in kernel filters",
		   ps->session->name, s->providers_enabled, ps->n_providers, s->events_enabled);
}

/* The consumer of a session just started in real-time mode, before any
 * provider is enabled. Without one, real-time mode must go: providers' writes
 * fail once the buffers are full when nobody consumes (Logging Mode
 * Constants), and the key-event file matters more than the triggers. So the
 * session is started again without it (nothing is lost: no provider is
 * enabled yet) and the triggers on it see nothing. */
static hs_status open_consumer(hs_backend *b, size_t i)
{
	hs_etw_session *s = &b->s[i];
	bool for_view = s->ps->etw.realtime_for_view;
	if (hs_etw_rt_open(&b->rt[i], s, i, b->api, b->msg) == HS_OK) {
		hs_etw_say(b->msg, HS_MSG_INFO,
			   "session %s: real-time consumer attached; %s see its events about 1 s "
			   "after they happen",
			   s->ps->session->name, for_view ? "the live view and the tap" : "triggers");
		return HS_OK;
	}
	hs_etw_say(b->msg, HS_MSG_WARN,
		   "session %s: no real-time consumer, so %s cannot see its events (%s); starting it again "
		   "without real-time mode",
		   s->ps->session->name, for_view ? "the live view and the tap" : "triggers",
		   for_view ? "they still go to its file" : "only manual snapshots work");
	hs_status st = hs_etw_session_stop(s, b->api, b->msg);
	if (st != HS_OK)
		return st;
	s->realtime = false;
	return hs_etw_session_start(s, b->api, b->msg);
}

/* Every queued event of every consumer to the observer (or nowhere). */
static size_t drain_consumers(hs_backend *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++) {
		hs_etw_rt *rt = b->rt[i];
		if (!rt)
			continue;
		n += hs_etw_rt_drain(rt, b->observer, b->observer_ctx);
		ULONG rc;
		if (!b->stopped && hs_etw_rt_ended(rt, &rc)) {
			/* ProcessTrace returned while the session runs: someone stopped
			 * the session, or the consumer failed. Said once. */
			hs_etw_report(b->msg, rc ? rc : ERROR_INVALID_HANDLE, "ProcessTrace on %s (the real-time consumer "
				      "ended; triggers no longer see its events)", b->s[i].name_utf8);
			hs_etw_rt_close(rt, b->msg);
			if (hs_etw_rt_free(rt))
				b->rt[i] = NULL;
		}
	}
	return n;
}

/* Which sessions get the trigger marker, once at start. */
static void report_marker(hs_backend *b)
{
	const hs_etw_marker *m = &b->marker;
	if (!m->registered) {
		hs_etw_say(b->msg, HS_MSG_WARN,
			   "no trigger marker on Windows: no session enables a catalog provider with a `means: marker` "
			   "event (rules/providers/windows.yaml: Hindsight-Marker) that lets it through");
		return;
	}
	char gt[37];
	hs_guid_format(&m->provider->guid, gt);
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "trigger markers: %s {%s} (EventWriteString, level %u, keyword 0x%llx) into",
		     m->provider->name, gt, (unsigned)m->level, (unsigned long long)m->keyword);
	const char *sep = " ";
	for (size_t i = 0; i < b->n; i++)
		for (size_t k = 0; k < b->s[i].ps->n_providers; k++)
			if (hs_etw_marker_passes(m, &b->s[i].ps->providers[k])) {
				hs_sb_printf(&sb, "%s%s", sep, b->s[i].ps->session->name);
				sep = ", ";
			}
	hs_etw_say(b->msg, HS_MSG_INFO, "%s", sb.oom ? "out of memory" : hs_sb_cstr(&sb));
	hs_sb_free(&sb);
}

static void etw_free(hs_backend *b);

static hs_status etw_start(const hs_plan *plan, const char *run_dir, const hs_backend_opts *opts, hs_backend **out)
{
	*out = NULL;
	const hs_msg *msg = opts ? opts->msg : NULL;
	const hs_etw_api *api = hs_etw_api_get();
	BOOL admin = FALSE;
	DWORD err = api->is_admin(&admin);
	if (err != ERROR_SUCCESS)
		return hs_etw_report(msg, err, "checking for Administrator rights");
	if (!admin) {
		hs_etw_say(msg, HS_MSG_ERROR,
			   "recording needs an elevated terminal: ETW kernel sessions are for administrators.");
		hs_etw_say(msg, HS_MSG_ERROR,
			   "close this terminal, open a new one with \"Run as administrator\" and run the same "
			   "command again; `engine --plan` works without it.");
		return HS_EPERM;
	}
	hs_backend *b = calloc(1, sizeof(*b));
	if (!b)
		return HS_ENOMEM;
	b->plan = plan;
	b->api = api;
	b->msg = msg;
	b->interrupts = opts ? opts->interrupts : NULL;
	b->n = plan->n_sessions;
	b->run_dir = strdup(run_dir);
	b->s = calloc(b->n ? b->n : 1, sizeof(*b->s));
	b->st = calloc(b->n ? b->n : 1, sizeof(*b->st));
	b->rt = calloc(b->n ? b->n : 1, sizeof(*b->rt));
	hs_status st = HS_ENOMEM;
	if (!b->run_dir || !b->s || !b->st || !b->rt)
		goto fail;
	for (size_t i = 0; i < b->n; i++) {
		const hs_plan_session *ps = &plan->sessions[i];
		hs_etw_session *s = &b->s[i];
		if (ps->session->mode == HS_MODE_SAMPLING) {
			hs_etw_say(msg, HS_MSG_ERROR,
				   "session %s is a sampling session: it runs with --launch PROG, not in "
				   "recording mode",
				   ps->session->name);
			st = HS_EINVAL;
			goto fail;
		}
		st = hs_etw_session_init(s, ps, NULL);
		if (st == HS_OK && ps->session->mode == HS_MODE_FILE_CIRCULAR)
			st = output_path(b, ps->session->output, s->file);
		if (st != HS_OK) {
			hs_etw_say(msg, HS_MSG_ERROR,
				   "session %s: its name or output path is too long for ETW (%d characters)",
				   ps->session->name, HS_ETW_MAX_NAME_CHARS);
			goto fail;
		}
	}
	/* Our marker provider, registered before any session enables it (ETW
	 * enables a provider whenever a session asks, registered or not). */
	hs_etw_marker_plan(&b->marker, plan);
	hs_etw_marker_register(&b->marker, api, msg);
	for (size_t i = 0; i < b->n; i++) {
		hs_etw_session *s = &b->s[i];
		s->realtime = (s->ps->etw.log_file_mode & EVENT_TRACE_REAL_TIME_MODE) != 0; /* the plan decides */
		st = hs_etw_session_start(s, api, msg);
		if (st == HS_OK && s->realtime)
			st = open_consumer(b, i);
		if (st == HS_OK)
			st = hs_etw_session_enable(s, api, msg);
		if (st == HS_OK)
			st = hs_etw_session_query(s, api, msg);
		if (st != HS_OK)
			goto fail;
		report_running(b, s);
	}
	report_marker(b);
	*out = b;
	return HS_OK;
fail:
	etw_free(b); /* stops what was started */
	return st;
}

static hs_status etw_poll(hs_backend *b, int timeout_ms)
{
	/* ETW writes the files itself; only the real-time consumers' events pass
	 * through the engine. Sleep in slices so a stop request is seen
	 * promptly, draining the consumers after each, and return once events
	 * were handed to the observer (the loop then looks at the triggers). */
	int left = timeout_ms;
	for (;;) {
		if (drain_consumers(b) || left <= 0 || (b->interrupts && *b->interrupts))
			break;
		int slice = left < HS_ETW_POLL_SLICE_MS ? left : HS_ETW_POLL_SLICE_MS;
		b->api->sleep((DWORD)slice);
		left -= slice;
	}
	return HS_OK;
}

static hs_status etw_snapshot(hs_backend *b, size_t session, const char *path, bool final)
{
	(void)final; /* an ETW flush leaves the ring running either way */
	if (session >= b->n || !b->s[session].running)
		return HS_EINVAL;
	hs_etw_session *s = &b->s[session];
	hs_session_status *ss = &b->st[session];
	if (s->ps->session->mode == HS_MODE_FILE_CIRCULAR) {
		if (!path)
			return hs_etw_session_flush(s, b->api, NULL, b->msg);
		/* ETW owns the circular file and writes it while the session runs;
		 * a snapshot gets the key events the consumer saw instead, when
		 * there is one (without: nothing to cut, HS_EINVAL). */
		if (!b->rt[session])
			return HS_EINVAL;
		uint64_t n = 0;
		return hs_etw_rt_write_cut(b->rt[session], path, b->msg, &n);
	}
	WCHAR file[HS_ETW_MAX_NAME_CHARS];
	hs_status st;
	if (path) {
		WCHAR rel[HS_ETW_MAX_NAME_CHARS];
		st = hs_etw_widen(path, rel, HS_ETW_MAX_NAME_CHARS);
		DWORD err = st == HS_OK ? b->api->full_path(rel, file, HS_ETW_MAX_NAME_CHARS) : ERROR_SUCCESS;
		if (st == HS_OK && err != ERROR_SUCCESS)
			st = hs_etw_report(b->msg, err, "resolving the snapshot path %s", path);
	} else {
		st = output_path(b, s->ps->session->output, file);
	}
	if (st != HS_OK)
		return st;
	ULONGLONG t0 = GetTickCount64();
	hs_etw_session_capture_state(s, b->api, b->msg);
	st = hs_etw_session_flush(s, b->api, file, b->msg);
	ULONGLONG size = 0;
	if (st == HS_OK)
		st = hs_etw_check_output(b->api, file, "the ring snapshot", b->msg, &size);
	ss->snapshot_s = (double)(GetTickCount64() - t0) / 1000.0;
	if (st != HS_OK)
		return st;
	ss->snapshots++;
	char *p = hs_etw_narrow(file);
	hs_etw_say(b->msg, HS_MSG_INFO, "ring %s saved to %s (%.1f MiB, %.2f s)", s->ps->session->name, p ? p : "?",
		   (double)size / MIB, ss->snapshot_s);
	free(p);
	return HS_OK;
}

/* The marker goes into every session that enables our provider, with the
 * text as its one string (EventWriteString). */
static hs_status etw_mark(hs_backend *b, const char *text)
{
	return hs_etw_marker_write(&b->marker, b->api, text, b->msg);
}

static hs_status etw_set_observer(hs_backend *b, hs_key_event_fn fn, void *ctx)
{
	b->observer = fn;
	b->observer_ctx = ctx;
	if (!fn)
		return HS_OK;
	/* Only sessions with a real-time consumer stream (those a trigger
	 * watches, or all key-event sessions with --live / --events-jsonl);
	 * the others' events reach their files only, which the view must not
	 * hide. With none, fn would never be called: say so. */
	size_t streaming = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (b->rt[i])
			streaming++;
		else if (b->s[i].ps->session->mode == HS_MODE_FILE_CIRCULAR)
			hs_etw_say(b->msg, HS_MSG_INFO,
				   "session %s: its key events go to its file only, not to the live view or the tap "
				   "(no trigger watches it; --live or --events-jsonl on the command line streams it, "
				   "ETW then flushing a buffer to the file every second)",
				   b->s[i].ps->session->name);
	}
	if (streaming)
		return HS_OK;
	b->observer = NULL;
	b->observer_ctx = NULL;
	return HS_EUNSUPPORTED;
}

/* The clock the key events carry: the real-time sessions' (the first one's
 * ClientContext), else the first session's. */
static uint64_t etw_now_ns(hs_backend *b)
{
	ULONG clock = b->n ? b->s[0].ps->etw.client_context : HS_ETW_CLOCK_QPC;
	for (size_t i = 0; i < b->n; i++)
		if (b->rt[i]) {
			clock = hs_etw_rt_clock(b->rt[i]);
			break;
		}
	return hs_etw_now_ns(b->api, clock);
}

/* Closes the consumers (CloseTrace, then ProcessTrace's thread ends) and
 * says what each saw. */
static hs_status close_consumers(hs_backend *b)
{
	hs_status rc = HS_OK;
	for (size_t i = 0; i < b->n; i++) {
		hs_etw_rt *rt = b->rt[i];
		if (!rt)
			continue;
		if (hs_etw_rt_close(rt, b->msg) != HS_OK)
			rc = HS_EIO;
		hs_etw_rt_stats c;
		hs_etw_rt_counts(rt, &c);
		hs_etw_say(b->msg, HS_MSG_INFO,
			   "%s real-time: %llu events of its providers, %llu dropped (queue full), %llu cut "
			   "at %d bytes",
			   b->s[i].ps->session->name, (unsigned long long)c.queued + c.dropped,
			   (unsigned long long)c.dropped, (unsigned long long)c.truncated, HS_ETW_RT_MAX_USERDATA);
		if (hs_etw_rt_free(rt))
			b->rt[i] = NULL;
	}
	return rc;
}

static size_t etw_n_sessions(const hs_backend *b)
{
	return b->n;
}

static void fill_status(hs_backend *b, size_t i)
{
	hs_etw_session *s = &b->s[i];
	hs_session_status *ss = &b->st[i];
	ss->name = s->ps->session->name;
	ss->kernel_name = s->ps->session->logger_name;
	ss->mode = s->ps->session->mode;
	ss->real_per_cpu_kb = 0; /* ETW buffers are per session, not per CPU */
	ss->cpus = 0;
	ss->cpu = NULL;
	ss->events_enabled = s->events_enabled;
	ss->events_skipped = s->events_skipped;
	ss->pool = true;
	/* Before the first query the plan's size stands for the buffers' */
	ss->pool_buffers = s->buffers;
	ss->pool_buffer_kb = s->buffer_kb ? s->buffer_kb : s->ps->etw.buffer_size_kb;
	ss->pool_free_buffers = s->free_buffers;
	ss->pool_events_lost = s->events_lost;
	ss->pool_buffers_lost = (uint64_t)s->log_buffers_lost + s->rt_buffers_lost;
	ss->pool_buffers_written = s->buffers_written;
	/* Logging Mode Constants, EVENT_TRACE_FILE_MODE_CIRCULAR: the file
	 * overwrites nothing before it reaches MaximumFileSize. */
	ss->file_max_bytes = (uint64_t)s->ps->etw.max_file_mb << 20;
	ss->events_counted = b->rt[i] != NULL;
	if (b->rt[i]) {
		hs_etw_rt_stats c;
		hs_etw_rt_counts(b->rt[i], &c);
		ss->events_seen = c.queued + c.dropped;
	}
	if (s->file[0]) {
		ULONGLONG size = 0;
		if (b->api->file_size(s->file, &size) == ERROR_SUCCESS)
			ss->bytes_in_file = size;
	}
}

static hs_status etw_session_status(hs_backend *b, size_t session, const hs_session_status **out)
{
	if (session >= b->n)
		return HS_EINVAL;
	hs_status st = hs_etw_session_query(&b->s[session], b->api, b->msg);
	fill_status(b, session);
	*out = &b->st[session];
	return st;
}

static hs_status etw_stop(hs_backend *b)
{
	if (b->stopped)
		return HS_OK;
	b->stopped = true;
	hs_status rc = close_consumers(b);
	for (size_t i = 0; i < b->n; i++) {
		hs_etw_session *s = &b->s[i];
		hs_status st = hs_etw_session_stop(s, b->api, b->msg);
		fill_status(b, i);
		if (st != HS_OK) {
			rc = st;
			continue;
		}
		if (s->events_lost || s->log_buffers_lost)
			hs_etw_say(b->msg, HS_MSG_WARN,
				   "%s lost %lu events and %lu buffers (raise buffer_size_kb or the buffer "
				   "counts in the rules)",
				   s->ps->session->name, (unsigned long)s->events_lost,
				   (unsigned long)s->log_buffers_lost);
		/* STOP writes the circular file's last buffers; only then is it complete. */
		if (s->file[0] && (st = hs_etw_check_output(b->api, s->file, "the key-event file", b->msg, NULL)) != HS_OK)
			rc = st;
		fill_status(b, i);
	}
	/* After the sessions: a marker written until the end reaches them. */
	hs_etw_marker_unregister(&b->marker, b->api, b->msg);
	return rc;
}

static void etw_free(hs_backend *b)
{
	if (!b)
		return;
	/* A failed start or a caller that did not stop: never leave a kernel
	 * session running (it would pin nonpaged memory until reboot). */
	for (size_t i = 0; b->rt && i < b->n; i++)
		if (b->rt[i]) {
			hs_etw_rt_close(b->rt[i], b->msg);
			hs_etw_rt_free(b->rt[i]);
		}
	for (size_t i = 0; b->s && i < b->n; i++)
		if (b->s[i].running)
			hs_etw_session_stop(&b->s[i], b->api, b->msg);
	hs_etw_marker_unregister(&b->marker, b->api, b->msg);
	free(b->rt);
	free(b->s);
	free(b->st);
	free(b->run_dir);
	free(b);
}

const hs_backend_ops hs_backend_etw = {
	.name = "etw",
	.kernel = true,
	.wake = HS_BACKEND_WAKE_IDLE,
	.delivery_lag_ms = HS_ETW_MIN_POST_DELAY_MS,
	.launch = hs_etw_launch_run,
	.start = etw_start,
	.poll = etw_poll,
	.snapshot = etw_snapshot,
	.set_observer = etw_set_observer,
	.session_status = etw_session_status,
	.n_sessions = etw_n_sessions,
	.finished = NULL,
	.now_ns = etw_now_ns,
	/* Into the sessions that enable our marker provider (marker.c). */
	.mark = etw_mark,
	.stop = etw_stop,
	.free = etw_free,
};
