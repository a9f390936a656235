/* ftrace/backend.c: the Linux capture backend: one tracefs instance per session, ring snapshots and key-event streaming. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>

#include "ftrace/backend_int.h"
#include "ftrace/ftrace.h"
#include "hindsight/limits.h"
#include "perf/launch.h"

static char *chunk_path(const session *s, unsigned cpu, unsigned seq)
{
	char name[64];
	snprintf(name, sizeof(name), HS_FTRACE_CHUNK_FMT, cpu, seq);
	return hs_ftrace_path_join(s->chunk_dir, name);
}

/* ---- setup ---- */

static hs_status ensure_tracefs(hs_backend *b)
{
	if (hs_tracefs_api_get()->tracing_dir())
		return HS_OK;
	/* libtracefs looks for a mount; make the standard one when there is none. */
	if (hs_tracefs_api_get()->mount("/sys/kernel/tracing") && errno != EBUSY) {
		hs_ftrace_say(b, HS_MSG_ERROR, "cannot mount tracefs at /sys/kernel/tracing: %s", strerror(errno));
		return errno == EPERM ? HS_EPERM : HS_EIO;
	}
	hs_ftrace_say(b, HS_MSG_INFO, "mounted tracefs at /sys/kernel/tracing");
	return hs_tracefs_api_get()->tracing_dir() ? HS_OK : HS_EIO;
}

static hs_status open_chunk(hs_backend *b, session *s, unsigned cpu)
{
	stream_cpu *sc = &s->sc[cpu];
	char *p = chunk_path(s, cpu, sc->cur);
	if (!p)
		return HS_ENOMEM;
	sc->fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (sc->fd < 0)
		hs_ftrace_say(b, HS_MSG_ERROR, "cannot create %s: %s", p, strerror(errno));
	free(p);
	sc->cur_bytes = 0;
	sc->chunk_bytes[sc->cur % HS_LINUX_STREAM_CHUNKS] = 0;
	return sc->fd < 0 ? HS_EIO : HS_OK;
}

static hs_status setup_session(hs_backend *b, session *s)
{
	const hs_plan_session *ps = s->ps;
	const hs_session *rs = ps->session;
	const char *name = rs->logger_name;
	hs_status st;
	s->st.name = rs->name;
	s->st.kernel_name = name;
	s->st.mode = rs->mode;
	s->st.cpus = b->cpus;
	if (!(s->cpu = calloc(b->cpus, sizeof(*s->cpu))) || !(s->snap_first_ns = calloc(b->cpus, sizeof(uint64_t))) ||
	    !(s->snap_last_ns = calloc(b->cpus, sizeof(uint64_t))) ||
	    !(s->output = hs_ftrace_path_join(b->run_dir, rs->output)))
		return HS_ENOMEM;
	if (rs->mode == HS_MODE_BUFFERING) {
		s->st.snapshot_cpu_first_ns = s->snap_first_ns;
		s->st.snapshot_cpu_last_ns = s->snap_last_ns;
	}
	if ((st = hs_ftrace_remove_stale(name, "ftrace", b->msg)) != HS_OK)
		return st;
	s->inst = hs_tracefs_api_get()->instance_create(name);
	if (!s->inst) {
		hs_ftrace_say(b, HS_MSG_ERROR, "cannot create tracefs instance '%s': %s", name, strerror(errno));
		return errno == EPERM || errno == EACCES ? HS_EPERM : HS_EIO;
	}
	hs_tracefs_api_get()->trace_off(s->inst);
	double t0 = hs_ftrace_now_s();
	if (hs_tracefs_api_get()->instance_set_buffer_size(s->inst, ps->linux_.per_cpu_kb, -1) < 0) {
		hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot size the ring to %" PRIu64 " KB per CPU: %s", name,
			      ps->linux_.per_cpu_kb, strerror(errno));
		return HS_EIO;
	}
	ssize_t real = hs_tracefs_api_get()->instance_get_buffer_size(s->inst, 0);
	s->st.real_per_cpu_kb = real > 0 ? (uint64_t)real : 0;
	hs_ftrace_say(b, HS_MSG_INFO,
		      "%s: ring %" PRIu64 " KB per CPU x %u CPUs (asked %" PRIu64
		      " KB; sized in %.0f ms), overwrite %s, "
		      "clock %s",
		      name, s->st.real_per_cpu_kb, b->cpus, ps->linux_.per_cpu_kb, (hs_ftrace_now_s() - t0) * 1e3,
		      ps->linux_.overwrite ? "on" : "off", rs->clock ? rs->clock : "(kernel default)");
	if ((ps->linux_.overwrite ? hs_tracefs_api_get()->option_enable(s->inst, TRACEFS_OPTION_OVERWRITE)
				  : hs_tracefs_api_get()->option_disable(s->inst, TRACEFS_OPTION_OVERWRITE)) < 0) {
		hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot set overwrite mode", name);
		return HS_EIO;
	}
	if (rs->clock && hs_tracefs_api_get()->instance_file_write(s->inst, "trace_clock", rs->clock) < 0) {
		hs_ftrace_say(b, HS_MSG_ERROR, "%s: the kernel has no trace clock '%s'", name, rs->clock);
		return HS_EIO;
	}
	if ((st = hs_ftrace_copy_trace_marker(s->inst, ps, "ftrace", b->msg)) != HS_OK)
		return st;
	/* mark() writes here; opened once, closed before the instance goes. */
	s->marker_fd = hs_tracefs_api_get()->instance_file_open(s->inst, "trace_marker", O_WRONLY | O_CLOEXEC);
	if (s->marker_fd < 0)
		hs_ftrace_say(b, HS_MSG_WARN,
			      "%s: cannot open trace_marker (%s): triggers cannot mark this session's trace", name,
			      strerror(errno));
	st = hs_ftrace_enable_events(s->inst, b->tep, ps, "ftrace", b->msg, &s->ev);
	s->st.events_enabled = s->ev.enabled;
	s->st.events_skipped = s->ev.skipped;
	s->st.skipped = s->ev.skipped_list;
	if (st == HS_ERULES)
		hs_ftrace_say(b, HS_MSG_ERROR, "%s: %zu of the events the rules ask for cannot be recorded on this kernel",
			      name, s->ev.refused);
	if (st != HS_OK)
		return st;
	hs_ftrace_say(b, HS_MSG_INFO, "%s: %zu event%s or systems enabled, %zu skipped", name, s->st.events_enabled,
		      s->st.events_enabled == 1 ? "" : "s", s->st.events_skipped);
	if (rs->mode != HS_MODE_FILE_CIRCULAR) {
		/* libtracecmd cannot write 2 GiB or more of one CPU: say so now,
		 * not when the moment is being saved. */
		char why[256];
		if (hs_dat_check_cpu_bytes(s->st.real_per_cpu_kb * 1024, why, sizeof why) != HS_OK)
			hs_ftrace_say(b, HS_MSG_WARN, "%s: WARNING: %s", name, why);
		return HS_OK;
	}

	/* Streaming: one reader and one chunk file per CPU. */
	size_t dlen = strlen(rs->output) + 16;
	char *dname = malloc(dlen);
	if (!dname)
		return HS_ENOMEM;
	snprintf(dname, dlen, HS_FTRACE_CHUNK_DIR_FMT, rs->output);
	s->chunk_dir = hs_ftrace_path_join(b->run_dir, dname);
	free(dname);
	if (!s->chunk_dir)
		return HS_ENOMEM;
	if (mkdir(s->chunk_dir, 0700) && errno != EEXIST) {
		hs_ftrace_say(b, HS_MSG_ERROR, "cannot create %s: %s", s->chunk_dir, strerror(errno));
		return HS_EIO;
	}
	/* Each CPU gets an equal share of the bound, in whole sub-buffers, cut
	 * into HS_LINUX_STREAM_CHUNKS chunks so a drop frees 1/N of the share. */
	uint64_t total = rs->max_file_mb << 20;
	s->cpu_budget = total / b->cpus;
	s->cpu_budget -= s->cpu_budget % b->subbuf;
	if (s->cpu_budget < b->subbuf) {
		hs_ftrace_say(b, HS_MSG_ERROR,
			      "%s: max_file_mb %" PRIu64 " is less than one %zu-byte page per CPU for %u CPUs", name,
			      rs->max_file_mb, b->subbuf, b->cpus);
		return HS_EINVAL;
	}
	s->chunk_limit = s->cpu_budget / HS_LINUX_STREAM_CHUNKS;
	s->chunk_limit -= s->chunk_limit % b->subbuf;
	if (s->chunk_limit < b->subbuf)
		s->chunk_limit = b->subbuf;
	if (!(s->sc = calloc(b->cpus, sizeof(*s->sc))))
		return HS_ENOMEM;
	for (unsigned c = 0; c < b->cpus; c++) {
		s->sc[c].fd = -1;
		if (!(s->sc[c].chunk_bytes = calloc(HS_LINUX_STREAM_CHUNKS, sizeof(uint64_t))))
			return HS_ENOMEM;
		s->sc[c].tcpu = hs_tracefs_api_get()->cpu_open(s->inst, (int)c, true);
		if (!s->sc[c].tcpu) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot open the ring of CPU %u: %s", name, c,
				      strerror(errno));
			return HS_EIO;
		}
		if ((st = open_chunk(b, s, c)) != HS_OK)
			return st;
	}
	s->next_flush = hs_ftrace_now_s() + (double)rs->flush_interval_s;
	return HS_OK;
}

static hs_status load_tep(hs_backend *b)
{
	/* Formats of the systems the plan names: to verify filters and to name
	 * streamed events for the observer. */
	b->tep = hs_ftrace_load_formats(b->plan->sessions, b->plan->n_sessions, "ftrace", b->msg);
	return b->tep ? HS_OK : HS_EIO;
}

/* now_ns's clock: the first file-circular session's (the key events the
 * triggers time), else the first session's; the kernel's current one when
 * the rules leave it. mono, mono_raw, boot and tai are POSIX clocks; local,
 * global, perf and the counters are not readable from user space, so now_ns
 * falls back to the newest event time seen. */
static void pick_clock(hs_backend *b)
{
	session *s = NULL;
	for (size_t i = 0; i < b->n && !s; i++)
		if (b->s[i].ps->session->mode == HS_MODE_FILE_CIRCULAR)
			s = &b->s[i];
	if (!s && b->n)
		s = &b->s[0];
	if (!s || !s->inst)
		return;
	char name[32] = "";
	if (s->ps->session->clock) {
		snprintf(name, sizeof name, "%s", s->ps->session->clock);
	} else {
		/* "[local] global counter ...": the bracketed one is in use. */
		char *text = hs_tracefs_api_get()->instance_file_read(s->inst, "trace_clock", NULL);
		char *o = text ? strchr(text, '[') : NULL, *c = o ? strchr(o, ']') : NULL;
		if (o && c && (size_t)(c - o - 1) < sizeof name) {
			memcpy(name, o + 1, (size_t)(c - o - 1));
			name[c - o - 1] = '\0';
		}
		free(text);
	}
	static const struct {
		const char *name;
		clockid_t id;
	} map[] = {{"mono", CLOCK_MONOTONIC}, {"mono_raw", CLOCK_MONOTONIC_RAW}, {"boot", CLOCK_BOOTTIME},
		   {"tai", CLOCK_TAI}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(name, map[i].name)) {
			b->clock_posix = true;
			b->clock_id = map[i].id;
		}
}

static void ftrace_free(hs_backend *b);
static hs_status drain_streams(hs_backend *b);

static hs_status ftrace_start(const hs_plan *plan, const char *run_dir, const hs_backend_opts *opts, hs_backend **out)
{
	hs_status st = HS_ENOMEM;
	*out = NULL;
	hs_backend *b = calloc(1, sizeof(*b));
	if (!b)
		return HS_ENOMEM;
	b->plan = plan;
	b->run_dir = run_dir;
	b->drain_streams = drain_streams;
	b->msg = opts ? opts->msg : NULL;
	b->interrupts = opts ? opts->interrupts : NULL;
	b->cpus = hs_tracefs_api_get()->cpus();
	b->subbuf = (size_t)getpagesize();
	/* Privilege: the recording mode checks it first (hs_os_check_privilege);
	 * other callers get EPERM from the first tracefs write. */
	if ((st = ensure_tracefs(b)) != HS_OK)
		goto fail;
	st = HS_ENOMEM;
	if (pthread_mutex_init(&b->wait_mu, NULL))
		goto fail;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int cv = pthread_cond_init(&b->wait_cv, &ca);
	pthread_condattr_destroy(&ca);
	if (cv) {
		pthread_mutex_destroy(&b->wait_mu);
		goto fail;
	}
	b->wait_init = true;
	if (!(b->s = calloc(plan->n_sessions, sizeof(*b->s))) || !(b->page = malloc(b->subbuf)) ||
	    !(b->kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST)))
		goto fail;
	if ((st = load_tep(b)) != HS_OK)
		goto fail;
	for (size_t i = 0; i < plan->n_sessions; i++)
		b->s[i].marker_fd = -1;
	for (size_t i = 0; i < plan->n_sessions; i++) {
		b->s[i].ps = &plan->sessions[i];
		b->n = i + 1;
		if ((st = setup_session(b, &b->s[i])) != HS_OK)
			goto fail;
	}
	/* Trigger detection instances (detect.c), once every session exists:
	 * they copy a session's clock and settings. */
	for (size_t i = 0; i < b->n; i++)
		if (b->s[i].ps->session->mode == HS_MODE_FILE_CIRCULAR && (st = hs_ftrace_detect_setup(b, i)) != HS_OK)
			goto fail;
	pick_clock(b);
	/* All rings start together once every session is configured; a
	 * detection instance just before its session, so it misses nothing the
	 * session records. */
	for (size_t i = 0; i < b->n; i++) {
		hs_ftrace_detect_trace_on(&b->s[i]);
		hs_tracefs_api_get()->trace_on(b->s[i].inst);
	}
	/* The first snapshot's .dat headers, in the background (snapshot.c). */
	for (size_t i = 0; i < b->n; i++)
		hs_ftrace_snapshot_prepare(b, &b->s[i], 0);
	*out = b;
	return HS_OK;
fail:
	ftrace_free(b);
	return st;
}

/* ---- streaming ---- */

/* Circular: removes the CPU's oldest chunk (never the one being written). */
static bool drop_oldest(session *s, unsigned cpu)
{
	stream_cpu *sc = &s->sc[cpu];
	if (sc->first >= sc->cur)
		return false;
	char *p = chunk_path(s, cpu, sc->first);
	if (p)
		unlink(p);
	free(p);
	uint64_t *bytes = &sc->chunk_bytes[sc->first % HS_LINUX_STREAM_CHUNKS];
	sc->cpu_bytes -= *bytes;
	s->st.bytes_in_file -= *bytes;
	*bytes = 0;
	sc->first++;
	s->st.chunks_dropped++;
	return true;
}

static hs_status rotate(hs_backend *b, session *s, unsigned cpu)
{
	stream_cpu *sc = &s->sc[cpu];
	/* Writeback starts now; waiting for it is the rewrite thread's job. */
	sync_file_range(sc->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	close(sc->fd);
	sc->fd = -1;
	sc->cur++;
	/* The ring of chunk slots is full: the oldest goes before its slot is reused. */
	if (sc->cur - sc->first >= HS_LINUX_STREAM_CHUNKS)
		drop_oldest(s, cpu);
	return open_chunk(b, s, cpu);
}

/* Appends one sub-buffer to the CPU's current chunk. The bound is checked
 * before every write, by bytes: the chunks on disk never hold more than the
 * CPU's share of max_file_mb, whatever the load (a splice could move 16 pages
 * at once and overshoot a chunk by all of them). A full disk evicts old chunks
 * to make room; with nothing left to evict the page is counted as lost. */
static hs_status append_page(hs_backend *b, session *s, unsigned cpu, const void *page, size_t n)
{
	stream_cpu *sc = &s->sc[cpu];
	hs_status st;
	if (sc->cur_bytes + n > s->chunk_limit && (st = rotate(b, s, cpu)) != HS_OK)
		return st;
	while (sc->cpu_bytes + n > s->cpu_budget && drop_oldest(s, cpu))
		;
	for (;;) {
		ssize_t w = pwrite(sc->fd, page, n, (off_t)sc->cur_bytes);
		if (w == (ssize_t)n)
			break;
		int err = w < 0 ? errno : ENOSPC; /* a short write is a full disk */
		if (err == EINTR)
			continue;
		if ((err == ENOSPC || err == EDQUOT) && drop_oldest(s, cpu))
			continue;
		if (err != ENOSPC && err != EDQUOT) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: writing CPU %u's chunk: %s", s->ps->session->logger_name,
				      cpu, strerror(err));
			return HS_EIO;
		}
		if (!s->st.bytes_lost_disk)
			hs_ftrace_say(
				b, HS_MSG_WARN,
				"%s: the disk is full and CPU %u has no older chunk to drop: key events are being "
				"lost until space is freed",
				s->ps->session->logger_name, cpu);
		s->st.bytes_lost_disk += n;
		return HS_OK;
	}
	sc->cur_bytes += n;
	sc->cpu_bytes += n;
	sc->chunk_bytes[sc->cur % HS_LINUX_STREAM_CHUNKS] = sc->cur_bytes;
	s->st.bytes_in_file += n;
	s->dirty = true;
	return HS_OK;
}

static hs_status drain_cpu(hs_backend *b, size_t si, unsigned cpu, bool flush)
{
	session *s = &b->s[si];
	stream_cpu *sc = &s->sc[cpu];
	const hs_tracefs_api *api = hs_tracefs_api_get(); /* once, not per page */
	for (;;) {
		if (sc->fd < 0)
			return HS_EIO;
		/* Until empty: one read per wake-up loses events under load. The
		 * buffered read splices full sub-buffers into a pipe and hands them
		 * out one at a time (the kernel's copy, without waking per page);
		 * only a flush takes the partly filled page the writer is on. */
		int n = flush ? api->cpu_flush(sc->tcpu, b->page) : api->cpu_buffered_read(sc->tcpu, b->page, true);
		if (n < 0 && errno == EAGAIN)
			n = 0;
		if (n < 0) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: reading CPU %u's ring: %s", s->ps->session->logger_name,
				      cpu, strerror(errno));
			return HS_EIO;
		}
		if (n == 0)
			break;
		s->st.bytes_streamed += (uint64_t)n;
		hs_status st = append_page(b, s, cpu, b->page, (size_t)n);
		if (st != HS_OK)
			return st;
		hs_ftrace_observe(b, si, cpu, b->page, false);
	}
	return HS_OK;
}

/* ---- rewriting the output file from the chunks ---- */

/* One rewrite of a session's output file: the chunk files as they were when it
 * was asked for (open descriptors, so a chunk the reader drops meanwhile stays
 * readable, and lengths of whole pages, so pages written meanwhile are left
 * out), copied and written by whichever thread runs it. */
typedef struct rebuild_job {
	hs_backend *b;
	session *s;
	char *path;
	int *fd;        /* [cpus * HS_LINUX_STREAM_CHUNKS], -1 when unused */
	uint64_t *len;
	hs_status st;
} rebuild_job;

static void rebuild_job_free(rebuild_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; j->fd && i < (size_t)j->b->cpus * HS_LINUX_STREAM_CHUNKS; i++)
		if (j->fd[i] >= 0)
			close(j->fd[i]);
	free(j->fd);
	free(j->len);
	free(j->path);
	free(j);
}

static rebuild_job *rebuild_prepare(hs_backend *b, session *s, const char *path)
{
	size_t n = (size_t)b->cpus * HS_LINUX_STREAM_CHUNKS;
	rebuild_job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->b = b;
	j->s = s;
	if (!(j->fd = malloc(n * sizeof(*j->fd))) || !(j->len = calloc(n, sizeof(*j->len))) ||
	    !(j->path = strdup(path))) {
		free(j->fd);
		j->fd = NULL;
		rebuild_job_free(j);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		j->fd[i] = -1;
	for (unsigned c = 0; c < b->cpus; c++) {
		stream_cpu *sc = &s->sc[c];
		for (unsigned q = sc->first, k = 0; q <= sc->cur && k < HS_LINUX_STREAM_CHUNKS; q++, k++) {
			char *p = chunk_path(s, c, q);
			size_t i = (size_t)c * HS_LINUX_STREAM_CHUNKS + k;
			j->fd[i] = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;
			free(p);
			j->len[i] = sc->chunk_bytes[q % HS_LINUX_STREAM_CHUNKS];
		}
	}
	return j;
}

/* Concatenates each CPU's chunks (oldest first) and writes the file through a
 * temporary name. The chunks are synced here too, off the reading thread. */
static hs_status rebuild_run(rebuild_job *j)
{
	hs_backend *b = j->b;
	session *s = j->s;
	hs_status st = HS_ENOMEM;
	char **files = calloc(b->cpus, sizeof(*files));
	if (!files)
		return j->st = HS_ENOMEM;
	for (unsigned c = 0; c < b->cpus; c++) {
		char name[48];
		snprintf(name, sizeof(name), "cpu%u.all", c);
		if (!(files[c] = hs_ftrace_path_join(s->chunk_dir, name)))
			goto out;
		int out = open(files[c], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (out < 0) {
			hs_ftrace_say(b, HS_MSG_ERROR, "cannot create %s: %s", files[c], strerror(errno));
			st = HS_EIO;
			goto out;
		}
		for (unsigned k = 0; k < HS_LINUX_STREAM_CHUNKS; k++) {
			size_t i = (size_t)c * HS_LINUX_STREAM_CHUNKS + k;
			if (j->fd[i] < 0)
				continue;
			fdatasync(j->fd[i]);
			loff_t off = 0;
			while ((uint64_t)off < j->len[i]) {
				ssize_t n = copy_file_range(j->fd[i], &off, out, NULL, (size_t)(j->len[i] - (uint64_t)off), 0);
				if (n <= 0)
					break;
			}
		}
		close(out);
	}
	st = hs_dat_write(j->path, s->ps->session->clock, (int)b->cpus, files, s->ev.list, false, b->msg);
out:
	for (unsigned c = 0; c < b->cpus; c++) {
		if (files[c])
			unlink(files[c]);
		free(files[c]);
	}
	free(files);
	return j->st = st;
}

static void *rebuild_thread(void *arg)
{
	rebuild_job *j = arg;
	/* At the engine's own priority: the rewrite is what makes the file on
	 * disk current for a run that dies next (at nice 10 beside two CPU hogs
	 * it got a tenth of a CPU); its cost is already capped by bytes. */
	rebuild_run(j);
	atomic_store(&j->s->rebuild_done, true);
	hs_ftrace_wake(j->b);
	return NULL;
}

/* Collects a background rewrite: waits for it when `wait`, else only if it
 * has finished. Returns its status (HS_OK when none ran). */
static hs_status rebuild_collect(session *s, bool wait)
{
	if (!s->rebuild)
		return HS_OK;
	if (!wait && !atomic_load(&s->rebuild_done))
		return HS_OK;
	pthread_join(s->rebuild_tid, NULL);
	rebuild_job *j = s->rebuild;
	hs_status st = j->st;
	s->rebuild = NULL;
	if (st != HS_OK)
		s->dirty = true; /* the file on disk is still the older one */
	rebuild_job_free(j);
	return st;
}

/* ---- streaming while waiting ---- */

/* The poll's cheap path for every file-circular session: full pages only. */
static hs_status drain_streams(hs_backend *b)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->s[i].ps->session->mode != HS_MODE_FILE_CIRCULAR || !b->s[i].sc || !b->s[i].inst)
			continue;
		/* The detection copies first: they are what the triggers wait for. A
		 * failed read is said there and returned by the next poll; it must
		 * not stop the session's own stream here. */
		(void)hs_ftrace_detect_drain(b, i);
		for (unsigned c = 0; c < b->cpus; c++) {
			if (b->s[i].sc[c].fd < 0 || !b->s[i].sc[c].tcpu)
				continue;
			hs_status st = drain_cpu(b, i, c, false);
			if (st != HS_OK)
				return st;
		}
	}
	return HS_OK;
}

/* Waits for a running periodic rewrite while streaming, and collects it. */
static hs_status rebuild_finish(hs_backend *b, session *s)
{
	if (s->rebuild)
		hs_ftrace_stream_until(b, &s->rebuild_done);
	return rebuild_collect(s, true);
}

/* Rewrites `path` from the chunks now, in a thread while this one goes on
 * streaming (a large file takes seconds to rewrite). */
static hs_status rebuild_now(hs_backend *b, session *s, const char *path)
{
	rebuild_job *j = rebuild_prepare(b, s, path);
	if (!j)
		return HS_ENOMEM;
	hs_status st;
	pthread_t t;
	atomic_store(&s->rebuild_done, false);
	if (pthread_create(&t, NULL, rebuild_thread, j)) {
		st = rebuild_run(j);
	} else {
		hs_ftrace_stream_until(b, &s->rebuild_done);
		pthread_join(t, NULL);
		st = j->st;
	}
	rebuild_job_free(j);
	return st;
}

/* Drains the session's rings to its chunks and starts their writeback; then
 * rewrites the output file (`path`, or the session's own when NULL) if it is
 * stale and either `force` or the rewrite cap allows it. A forced rewrite
 * happens now; a periodic one in a background thread, so a slow disk never
 * holds up the reader (measured: a 1-4 s fdatasync and rewrite on the reading
 * thread made a 1 MB ring drop events at 50k events/s). */
static hs_status flush_stream(hs_backend *b, size_t si, const char *path, bool force)
{
	session *s = &b->s[si];
	hs_status st = HS_OK;
	for (unsigned c = 0; c < b->cpus; c++) {
		if ((st = drain_cpu(b, si, c, false)) != HS_OK || (st = drain_cpu(b, si, c, true)) != HS_OK)
			return st;
		/* Start the writeback without waiting for it; the rewrite syncs. */
		if (s->sc[c].fd >= 0)
			sync_file_range(s->sc[c].fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	}
	double now = hs_ftrace_now_s();
	s->next_flush = now + (double)s->ps->session->flush_interval_s;
	hs_status bg = force ? rebuild_finish(b, s) : rebuild_collect(s, false);
	if (bg != HS_OK)
		hs_ftrace_say(b, HS_MSG_WARN,
			      "%s: rewriting %s failed; the previous file is kept and the next flush tries again",
			      s->ps->session->logger_name, s->output);
	if (!s->dirty && !path)
		return bg; /* nothing new: the file on disk is current */
	/* Rewriting the whole file costs I/O in proportion to its size (a full
	 * 64 MB file rewritten every 5 s wrote 24 MB/s), so a periodic rewrite
	 * waits until its bytes, averaged over the wait, stay under the cap;
	 * requests and stop always write. */
	if (!force && (now < s->next_rebuild || s->rebuild))
		return bg;
	bool own = !path || !strcmp(path, s->output);
	if (own) {
		s->next_rebuild = now + (double)(2 * s->st.bytes_in_file) / HS_LINUX_REBUILD_BYTES_PER_S;
		s->dirty = false;
	}
	if (force) {
		st = rebuild_now(b, s, path ? path : s->output);
		if (st != HS_OK && own)
			s->dirty = true;
		return st;
	}
	rebuild_job *j = rebuild_prepare(b, s, s->output);
	if (!j)
		return HS_ENOMEM;
	atomic_store(&s->rebuild_done, false);
	s->rebuild = j;
	if (pthread_create(&s->rebuild_tid, NULL, rebuild_thread, j)) {
		s->rebuild = NULL;
		st = rebuild_run(j);
		rebuild_job_free(j);
		if (st != HS_OK)
			s->dirty = true;
		return st;
	}
	return bg;
}

static hs_status ftrace_poll(hs_backend *b, int timeout_ms)
{
	hs_status st = HS_OK;
	if (b->stopped)
		return HS_EINVAL;
	if (timeout_ms > 0) {
		struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL); /* a signal cuts it short, which is what the engine wants */
	}
	double now = hs_ftrace_now_s();
	for (size_t i = 0; i < b->n; i++) {
		session *s = &b->s[i];
		if (s->ps->session->mode != HS_MODE_FILE_CIRCULAR)
			continue;
		/* The detection copies first (partial pages too): what the triggers wait for. */
		hs_status r = hs_ftrace_detect_drain(b, i);
		if (r != HS_OK)
			st = r;
		r = HS_OK;
		if (now >= s->next_flush)
			r = flush_stream(b, i, NULL, false);
		else
			for (unsigned c = 0; c < b->cpus && r == HS_OK; c++)
				r = drain_cpu(b, i, c, false);
		if (r != HS_OK)
			st = r;
	}
	return st;
}

static hs_status ftrace_snapshot(hs_backend *b, size_t session_i, const char *path, bool final)
{
	if (session_i >= b->n || b->stopped)
		return HS_EINVAL;
	session *s = &b->s[session_i];
	const char *p = path ? path : s->output;
	if (s->ps->session->mode == HS_MODE_FILE_CIRCULAR) {
		/* A request always writes, even with nothing new; to another path it
		 * is a complete copy (through a temporary name) and the session's own
		 * file is left as it is. */
		if (!strcmp(p, s->output))
			s->dirty = true;
		return flush_stream(b, session_i, p, true);
	}
	/* A snapshot taken while recording goes on (a trigger's) on a disk that
	 * cannot take any of it would drain the ring for nothing: the events stay
	 * in the ring instead, for the next snapshot or the final one. */
	uint64_t reserve = HS_LINUX_SNAPSHOT_RESERVE_BYTES;
	for (size_t i = 0; i < b->n; i++)
		if (b->s[i].ps->session->mode == HS_MODE_FILE_CIRCULAR)
			reserve += 2 * b->s[i].st.bytes_in_file;
	if (!final && !hs_ftrace_room_for(p, reserve)) {
		hs_ftrace_say(
			b, HS_MSG_WARN,
			"%s: no room for %s (the engine keeps %.1f MB free for the key-event files and run.json); "
			"the ring keeps its events",
			s->ps->session->logger_name, p, (double)reserve / 1048576.0);
		return HS_EIO;
	}
	/* Freeze first, here at the caller's priority: the snapshot thread runs at
	 * nice 19 and may wait seconds for a CPU under load, while the ring, in
	 * overwrite mode, replaces the moment we were asked to keep. Draining a
	 * live ring would also chase the writer and yield mostly empty pages
	 * (measured: 1.3 GB for 2.8M events). This kernel has no snapshot buffer,
	 * so events arriving until tracing resumes are lost. */
	hs_tracefs_api_get()->trace_off(s->inst);
	hs_ftrace_read_stats(b, s);
	/* One trace.dat writer at a time (dat.c's comm table is not shared): a
	 * running rewrite finishes first, the key events streaming meanwhile. */
	for (size_t i = 0; i < b->n; i++)
		if (rebuild_finish(b, &b->s[i]) != HS_OK)
			b->s[i].dirty = true;
	return hs_ftrace_snapshot_ring(b, s, p, final, reserve);
}

static uint64_t ftrace_now_ns(hs_backend *b)
{
	struct timespec ts;
	if (b->clock_posix && !clock_gettime(b->clock_id, &ts))
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return b->newest_ts;
}

/* The text as an ftrace/print event in every session's ring. Instance
 * trace_marker writes are not subject to set_event_notrace_pid (that filters
 * trace events), so the engine's own marks are recorded. */
static hs_status ftrace_mark(hs_backend *b, const char *text)
{
	if (b->stopped || !text)
		return HS_EINVAL;
	size_t len = strlen(text);
	hs_status st = HS_OK;
	for (size_t i = 0; i < b->n; i++) {
		session *s = &b->s[i];
		if (s->marker_fd < 0) {
			st = HS_EIO;
			continue;
		}
		ssize_t w = write(s->marker_fd, len ? text : "\n", len ? len : 1);
		/* EBADF: the ring is off (frozen by a snapshot, or after the final
		 * one); nothing to mark there, and nothing wrong. */
		if (w < 0 && errno != EBADF) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot write trace_marker: %s", s->ps->session->logger_name,
				      strerror(errno));
			st = HS_EIO;
		}
	}
	return st;
}

static hs_status ftrace_set_observer(hs_backend *b, hs_key_event_fn fn, void *ctx)
{
	b->fn = fn;
	b->fn_ctx = ctx;
	return HS_OK;
}

static size_t ftrace_n_sessions(const hs_backend *b)
{
	return b->n;
}

static hs_status ftrace_session_status(hs_backend *b, size_t i, const hs_session_status **out)
{
	if (i >= b->n)
		return HS_EINVAL;
	if (!b->stopped && b->s[i].inst) {
		hs_ftrace_read_stats(b, &b->s[i]);
		hs_ftrace_detect_read_stats(b, &b->s[i]);
	}
	b->s[i].st.cpu = b->s[i].cpu;
	*out = &b->s[i].st;
	return HS_OK;
}

/* ---- teardown ---- */

static void close_session(hs_backend *b, session *s)
{
	hs_ftrace_detect_close(b, s);
	if (s->marker_fd >= 0)
		close(s->marker_fd);
	s->marker_fd = -1;
	if (s->sc)
		for (unsigned c = 0; c < b->cpus; c++) {
			hs_tracefs_api_get()->cpu_close(s->sc[c].tcpu);
			s->sc[c].tcpu = NULL;
			if (s->sc[c].fd >= 0)
				close(s->sc[c].fd);
			s->sc[c].fd = -1;
		}
	if (s->inst) {
		hs_tracefs_api_get()->trace_off(s->inst);
		/* Every fd on the instance must be closed first, or rmdir says EBUSY. */
		if (hs_tracefs_api_get()->instance_destroy(s->inst) < 0)
			hs_ftrace_say(b, HS_MSG_ERROR, "could not remove tracefs instance '%s': %s",
				      s->ps->session->logger_name, strerror(errno));
		hs_tracefs_api_get()->instance_free(s->inst);
		s->inst = NULL;
	}
}

static void remove_chunks(session *s)
{
	if (!s->chunk_dir)
		return;
	DIR *d = opendir(s->chunk_dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				char *p = hs_ftrace_path_join(s->chunk_dir, e->d_name);
				if (p)
					unlink(p);
				free(p);
			}
		closedir(d);
	}
	rmdir(s->chunk_dir);
}

static hs_status ftrace_stop(hs_backend *b)
{
	hs_status st = HS_OK;
	if (b->stopped)
		return HS_OK;
	for (size_t i = 0; i < b->n; i++) {
		session *s = &b->s[i];
		hs_ftrace_snapshot_unprepare(s);
		if (s->inst && s->ps->session->mode == HS_MODE_FILE_CIRCULAR) {
			/* Stop producing, take everything left, and write the file once more.
			 * The detection instance goes off right after the session (the
			 * triggers get the copies of all it recorded) and is drained first. */
			hs_tracefs_api_get()->trace_off(s->inst);
			hs_ftrace_detect_trace_off(s);
			if (hs_ftrace_detect_drain(b, i) != HS_OK)
				st = HS_EIO;
			hs_ftrace_detect_read_stats(b, s);
			s->dirty = true;
			hs_status r = flush_stream(b, i, NULL, true);
			if (r == HS_OK)
				remove_chunks(s);
			else
				st = r;
		}
		if (s->inst)
			hs_ftrace_read_stats(b, s);
		close_session(b, s);
	}
	b->stopped = true;
	return st;
}

static void ftrace_free(hs_backend *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		session *s = &b->s[i];
		hs_ftrace_snapshot_unprepare(s);
		rebuild_collect(s, true);
		close_session(b, s);
		hs_ftrace_detect_free(s);
		/* The instance name's lock (taken by whoever started us) goes with it. */
		hs_ftrace_release(s->ps->session->logger_name);
		if (s->sc)
			for (unsigned c = 0; c < b->cpus; c++)
				free(s->sc[c].chunk_bytes);
		free(s->sc);
		free(s->cpu);
		free(s->snap_first_ns);
		free(s->snap_last_ns);
		free(s->output);
		free(s->chunk_dir);
		hs_ftrace_events_free(&s->ev);
	}
	free(b->s);
	if (b->tep)
		tep_free(b->tep);
	if (b->kb)
		kbuffer_free(b->kb);
	free(b->page);
	if (b->wait_init) {
		pthread_cond_destroy(&b->wait_cv);
		pthread_mutex_destroy(&b->wait_mu);
	}
	free(b);
}

const hs_backend_ops hs_backend_ftrace = {
	.name = "ftrace",
	.kernel = true,
	.wake = HS_BACKEND_WAKE_STREAMING,
	.wake_ms = HS_LINUX_STREAM_WAKE_MS,
	.claim = hs_ftrace_sessions_claim,
	.adopt = hs_ftrace_sessions_adopt,
	.release = hs_ftrace_sessions_release,
	.task_name = hs_ftrace_task_name,
	.launch = hs_perf_launch_run,
	.start = ftrace_start,
	.poll = ftrace_poll,
	.snapshot = ftrace_snapshot,
	.set_observer = ftrace_set_observer,
	.session_status = ftrace_session_status,
	.n_sessions = ftrace_n_sessions,
	.finished = NULL,
	.now_ns = ftrace_now_ns,
	.mark = ftrace_mark,
	.stop = ftrace_stop,
	.free = ftrace_free,
};
