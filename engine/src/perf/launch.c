/* perf/launch.c: launch mode: fork, sample the program tree with per-CPU cpu-clock events, stream the rings to perf.data. */
/* pipe2 and sigabbrev_np are GNU extensions. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf/launch.h"
#include "hindsight/limits.h"
#include "perf/perf_file.h"
#include "perf/tree_events.h"

/* One per CPU: the event fd and its mmap ring (1 metadata page + 2^n data pages). */
typedef struct {
	int fd;
	void *base;
	size_t map_bytes;
} hs_ring;

typedef struct {
	const hs_launch_opts *o;
	const hs_msg *msg;
	hs_launch_result *res;
	hs_ring *rings;
	size_t n_rings;
	size_t page, data_bytes;
	hs_perf_file *file;
	uint8_t *scratch; /* a record that wraps around the ring end is copied here */
	hs_status io;     /* first writer failure; the program still runs to the end */
} hs_launch;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* execv needs a path, and the default output goes next to the program, so
 * the PATH lookup execvp would do is done here once. */
static bool resolve_prog(const char *prog, char *out, size_t cap)
{
	if (strchr(prog, '/')) {
		if ((size_t)snprintf(out, cap, "%s", prog) >= cap)
			return false;
		return access(out, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; ) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int w = n ? snprintf(out, cap, "%.*s/%s", (int)n, p, prog) : snprintf(out, cap, "./%s", prog);
		if (w > 0 && (size_t)w < cap && access(out, X_OK) == 0)
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

static hs_status default_out(const char *resolved, const char *name, char *out, size_t cap)
{
	const char *slash = strrchr(resolved, '/');
	int dlen = slash ? (int)(slash - resolved) : 1;
	const char *dir = slash ? resolved : ".";
	if (slash == resolved)
		dlen = 0; /* program in / : "/name" */
	int w = snprintf(out, cap, "%.*s/%s", dlen, dir, name);
	return w > 0 && (size_t)w < cap ? HS_OK : HS_ELIMIT;
}

/* The trace.dat goes next to the perf.data: same base name, .dat extension. */
static hs_status events_out(const char *perf_path, char *out, size_t cap)
{
	const char *base = strrchr(perf_path, '/');
	const char *dot = strrchr(base ? base + 1 : perf_path, '.');
	int stem = dot && dot != (base ? base + 1 : perf_path) ? (int)(dot - perf_path) : (int)strlen(perf_path);
	int w = snprintf(out, cap, "%.*s%s", stem, perf_path, HS_TREE_EVENTS_EXT);
	if (w <= 0 || (size_t)w >= cap)
		return HS_ELIMIT;
	/* Never over the samples when the output already has that extension. */
	return strcmp(out, perf_path) ? HS_OK : HS_EINVAL;
}

static void account(hs_launch *l, const struct perf_event_header *h)
{
	hs_launch_result *r = l->res;
	const uint64_t *body = (const uint64_t *)(h + 1);
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		r->samples++;
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof *h + 16)
			r->lost += body[1]; /* id, lost */
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= sizeof *h + 8)
			r->lost_samples += body[0];
		break;
	case PERF_RECORD_THROTTLE:
		r->throttled++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		r->unthrottled++;
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		r->mmaps++;
		break;
	case PERF_RECORD_COMM:
		r->comms++;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		r->tasks++;
		break;
	}
}

/* Reads every record up to data_head, re-reading the head until it stops
 * moving: a partial drain leaves the kernel less room and it drops samples. */
static size_t ring_drain(hs_launch *l, hs_ring *g)
{
	struct perf_event_mmap_page *meta = g->base;
	const uint8_t *data = (const uint8_t *)g->base + l->page;
	uint64_t mask = l->data_bytes - 1;
	size_t n = 0;
	for (;;) {
		uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = meta->data_tail;
		if (head == tail)
			break;
		while (tail < head) {
			struct perf_event_header h;
			/* Records are 8-byte aligned and sized, so a header never wraps. */
			memcpy(&h, data + (tail & mask), sizeof h);
			if (h.size < sizeof h || h.size > head - tail) {
				hs_launch_say(l->msg, HS_MSG_WARN,
					      "corrupt record in a ring (size %u); rest of this drain skipped",
					      (unsigned)h.size);
				tail = head;
				break;
			}
			const struct perf_event_header *rec;
			size_t first = l->data_bytes - (size_t)(tail & mask);
			if (first >= h.size) {
				rec = (const struct perf_event_header *)(data + (tail & mask));
			} else {
				memcpy(l->scratch, data + (tail & mask), first);
				memcpy(l->scratch + first, data, h.size - first);
				rec = (const struct perf_event_header *)l->scratch;
			}
			account(l, rec);
			if (l->io == HS_OK)
				l->io = hs_perf_file_write(l->file, rec);
			tail += h.size;
			n++;
		}
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	return n;
}

static void drain_all(hs_launch *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n_rings; i++)
		n += ring_drain(l, &l->rings[i]);
	if (n && l->io == HS_OK)
		l->io = hs_perf_file_round(l->file);
}

static void rings_close(hs_launch *l)
{
	for (size_t i = 0; i < l->n_rings; i++) {
		if (l->rings[i].base)
			munmap(l->rings[i].base, l->rings[i].map_bytes);
		if (l->rings[i].fd >= 0)
			close(l->rings[i].fd);
	}
	free(l->rings);
	l->rings = NULL;
	l->n_rings = 0;
}

/* Opens one event per CPU on the (not yet exec'd) child. inherit with a
 * per-task (cpu = -1) event cannot be mmapped (EINVAL), hence per CPU. */
static hs_status rings_open(hs_launch *l, struct perf_event_attr *attr, pid_t child)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1)
		ncpu = 1;
	l->rings = calloc((size_t)ncpu, sizeof *l->rings);
	if (!l->rings)
		return HS_ENOMEM;
	for (long cpu = 0; cpu < ncpu; cpu++) {
		int fd = (int)syscall(SYS_perf_event_open, attr, child, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && !attr->exclude_kernel && l->n_rings == 0) {
			/* perf_event_paranoid >= 2 without CAP_PERFMON: user frames only. */
			attr->exclude_kernel = 1;
			l->res->kernel_excluded = true;
			hs_launch_say(l->msg, HS_MSG_WARN, "kernel sampling refused (%s): recording user frames only",
				      strerror(errno));
			cpu--;
			continue;
		}
		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue; /* offline CPU */
			hs_launch_say(l->msg, HS_MSG_ERROR, "perf_event_open(cpu-clock, cpu %ld): %s", cpu,
				      strerror(errno));
			return errno == EACCES || errno == EPERM ? HS_EPERM : HS_EIO;
		}
		hs_ring *g = &l->rings[l->n_rings++];
		g->fd = fd;
		g->map_bytes = l->page + l->data_bytes;
		g->base = mmap(NULL, g->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (g->base == MAP_FAILED) {
			g->base = NULL;
			hs_launch_say(l->msg, HS_MSG_ERROR, "mmap of the cpu %ld ring (%zu bytes): %s", cpu,
				      g->map_bytes, strerror(errno));
			return HS_EIO;
		}
	}
	if (l->n_rings == 0) {
		hs_launch_say(l->msg, HS_MSG_ERROR, "no CPU accepted a cpu-clock event");
		return HS_EIO;
	}
	return HS_OK;
}

/* The child: wait for the parent's go (events are attached by then), then
 * exec. A failed chdir/exec sends errno back on a close-on-exec pipe, so the
 * parent reads EOF exactly when exec succeeded. */
static void child_run(int go_fd, int err_fd, const char *path, char *const *argv, const char *cwd)
{
	char c;
	int e;
	sigset_t all;
	/* Its own process group, so a timeout can kill the whole tree. */
	setpgid(0, 0);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (read(go_fd, &c, 1) != 1)
		_exit(127); /* the parent gave up */
	close(go_fd);
	if (cwd && chdir(cwd) != 0)
		goto fail;
	execv(path, argv);
fail:
	e = errno;
	if (write(err_fd, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

static char **build_argv(const char *path, char *const *args)
{
	size_t n = 0;
	while (args && args[n])
		n++;
	char **v = calloc(n + 2, sizeof *v);
	if (!v)
		return NULL;
	v[0] = (char *)path;
	for (size_t i = 0; i < n; i++)
		v[i + 1] = args[i];
	return v;
}

static const char *sig_name(int sig)
{
	const char *s = sigabbrev_np(sig);
	return s ? s : "?";
}

hs_status hs_perf_launch_run(const hs_plan *plan, const hs_launch_opts *o, const hs_msg *msg, hs_launch_result *res)
{
	msg = hs_launch_msg(msg);
	hs_status st = HS_EINVAL;
	hs_launch l = {.o = o, .msg = msg, .res = res, .io = HS_OK};
	char path[HS_LAUNCH_MAX_PATH_CHARS];
	int go[2] = {-1, -1}, err[2] = {-1, -1};
	pid_t child = -1;
	bool reaped = false;
	bool umask_set = false;
	mode_t umask_was = 0;
	char **argv = NULL;
	uint64_t *ids = NULL;
	struct pollfd *pfd = NULL;
	hs_tree_events *tev = NULL;
	memset(res, 0, sizeof *res);
	res->exit_code = -1;

	const hs_plan_session *ps = plan ? hs_launch_sampling_session(plan) : NULL;
	if (!ps || !o || !o->prog) {
		hs_launch_say(l.msg, HS_MSG_ERROR,
			      "the plan has no sampling session (use a profile with mode: sampling)");
		return HS_EINVAL;
	}
	uint64_t hz = ps->linux_.sample_hz;
	if (hz == 0 || hz > HS_LINUX_MAX_SAMPLE_HZ || !ps->session->output) {
		hs_launch_say(l.msg, HS_MSG_ERROR, "session %s needs sample_hz (1..%d) and output", ps->session->name,
			      HS_LINUX_MAX_SAMPLE_HZ);
		return HS_EINVAL;
	}
	if (!resolve_prog(o->prog, path, sizeof path)) {
		hs_launch_say(l.msg, HS_MSG_ERROR, "%s: not found or not executable", o->prog);
		return HS_ENOENT;
	}
	if (o->out) {
		if ((size_t)snprintf(res->out_path, sizeof res->out_path, "%s", o->out) >= sizeof res->out_path)
			return HS_ELIMIT;
	} else if ((st = default_out(path, ps->session->output, res->out_path, sizeof res->out_path)) != HS_OK) {
		return st;
	}
	if ((st = events_out(res->out_path, res->events_path, sizeof res->events_path)) != HS_OK) {
		hs_launch_say(l.msg, HS_MSG_ERROR, "no name for the events file next to %s (it would be the same file)",
			      res->out_path);
		return st;
	}

	/* The session's per-CPU buffer size sizes the perf ring too, rounded
	 * down to the power-of-two page count the kernel requires. */
	l.page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t want = ps->linux_.per_cpu_kb * 1024u;
	l.data_bytes = l.page;
	while ((uint64_t)l.data_bytes * 2 <= want)
		l.data_bytes *= 2;
	res->ring_bytes = l.data_bytes;
	l.scratch = malloc(HS_PERF_MAX_RECORD_BYTES);
	argv = build_argv(path, o->argv);
	st = HS_ENOMEM;
	if (!l.scratch || !argv)
		goto fail;

	struct perf_event_attr attr = {0};
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = hz;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (ps->linux_.call_graph_fp)
		attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	attr.inherit = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	attr.sample_id_all = 1;
	/* CLOCK_MONOTONIC: the same time base as the tracefs side (clock: mono). */
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	/* Wake the reader when a quarter of the ring is full; poll's timeout
	 * covers quiet periods. */
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(l.data_bytes / 4);

	st = HS_EIO;
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
		hs_launch_say(l.msg, HS_MSG_ERROR, "pipe: %s", strerror(errno));
		goto fail;
	}
	child = fork();
	if (child < 0) {
		hs_launch_say(l.msg, HS_MSG_ERROR, "fork: %s", strerror(errno));
		goto fail;
	}
	if (child == 0) {
		close(go[1]);
		close(err[0]);
		child_run(go[0], err[1], path, argv, o->cwd);
	}
	setpgid(child, child); /* also here: no race with kill(-child) */
	/* The outputs hold the program's paths, command line and addresses:
	 * owner-only, as the recording mode makes a run folder's files (umask
	 * 077). Only here, in the parent after the fork: the program keeps the
	 * umask it was given, and libtracecmd's .dat gets it too. */
	umask_was = umask(077);
	umask_set = true;
	close(go[0]);
	close(err[1]);
	go[0] = err[1] = -1;

	if ((st = rings_open(&l, &attr, child)) != HS_OK)
		goto fail;
	res->cpus = (unsigned)l.n_rings;
	ids = calloc(l.n_rings, sizeof *ids);
	pfd = calloc(l.n_rings, sizeof *pfd);
	st = HS_ENOMEM;
	if (!ids || !pfd)
		goto fail;
	for (size_t i = 0; i < l.n_rings; i++) {
		if (ioctl(l.rings[i].fd, PERF_EVENT_IOC_ID, &ids[i]) != 0) {
			hs_launch_say(l.msg, HS_MSG_ERROR, "PERF_EVENT_IOC_ID: %s", strerror(errno));
			st = HS_EIO;
			goto fail;
		}
		pfd[i] = (struct pollfd){.fd = l.rings[i].fd, .events = POLLIN};
	}
	if ((st = hs_perf_file_create(res->out_path, &attr, "cpu-clock", ids, l.n_rings, msg, &l.file)) != HS_OK)
		goto fail;
	if ((st = hs_perf_file_write_kernel_mmap(l.file)) != HS_OK)
		goto fail;

	if (!o->quiet)
		hs_launch_say(l.msg, HS_MSG_INFO,
			      "%s: cpu-clock at %" PRIu64 " Hz%s on %zu CPUs, %zu KB ring each, timeout %u s", path, hz,
			      ps->linux_.call_graph_fp ? " with fp call chains" : "", l.n_rings, l.data_bytes / 1024,
			      o->timeout_sec);
	/* Last, just before the go: the instance records only this tree, and
	 * nothing of the setup above. */
	if ((st = hs_tree_events_start(ps, child, res->events_path, msg, &tev)) != HS_OK)
		goto fail;
	if (!tev)
		res->events_path[0] = '\0';
	uint64_t t0 = now_ns();
	uint64_t deadline = o->timeout_sec ? t0 + (uint64_t)o->timeout_sec * 1000000000u : 0;
	st = HS_EIO;
	if (write(go[1], "g", 1) != 1) {
		hs_launch_say(l.msg, HS_MSG_ERROR, "releasing the child: %s", strerror(errno));
		goto fail;
	}
	close(go[1]);
	go[1] = -1;
	int e;
	ssize_t r;
	while ((r = read(err[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	if (r == (ssize_t)sizeof e) {
		hs_launch_say(l.msg, HS_MSG_ERROR, "cannot run %s%s%s: %s", path, o->cwd ? " in " : "",
			      o->cwd ? o->cwd : "", strerror(e));
		st = e == EACCES || e == EPERM ? HS_EPERM : HS_ENOENT;
		goto fail;
	}

	int status = 0;
	struct rusage ru;
	sig_atomic_t forwarded = 0;
	while (!reaped) {
		if (o->interrupts && *o->interrupts > forwarded) {
			forwarded = *o->interrupts;
			int sig = forwarded == 1 ? SIGINT : SIGKILL;
			hs_launch_say(l.msg, HS_MSG_WARN, "interrupted: sending %s to %s (process group %ld)",
				      sig == SIGINT ? "SIGINT" : "SIGKILL", path, (long)child);
			kill(-child, sig);
		}
		int pr = poll(pfd, l.n_rings, HS_LAUNCH_POLL_MS);
		if (pr < 0 && errno != EINTR) {
			hs_launch_say(l.msg, HS_MSG_ERROR, "poll: %s", strerror(errno));
			break;
		}
		drain_all(&l);
		hs_tree_events_drain(tev);
		pid_t w = wait4(child, &status, WNOHANG, &ru);
		if (w == child) {
			reaped = true;
		} else if (deadline && now_ns() >= deadline) {
			res->timed_out = true;
			hs_launch_say(l.msg, HS_MSG_WARN, "timeout after %u s: killing %s (process group %ld)",
				      o->timeout_sec, path, (long)child);
			kill(-child, SIGKILL);
			kill(child, SIGKILL);
			while (wait4(child, &status, 0, &ru) < 0 && errno == EINTR)
				;
			reaped = true;
		}
	}
	res->wall_ns = now_ns() - t0;
	/* The program's samples are all in the rings once it is reaped. */
	for (size_t i = 0; i < l.n_rings; i++)
		ioctl(l.rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	drain_all(&l);
	if (reaped) {
		res->child_cpu_ns = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
				    ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
		if (WIFEXITED(status)) {
			res->exit_code = WEXITSTATUS(status);
		} else if (WIFSIGNALED(status)) {
			res->term_signal = WTERMSIG(status);
		}
	}
	child = -1;
	if (l.io != HS_OK) {
		st = l.io;
		goto fail;
	}
	st = hs_perf_file_finish(l.file, &res->build_ids, &res->data_bytes, &res->file_bytes);
	l.file = NULL;
	if (st != HS_OK)
		goto fail;
	if (tev) {
		if ((st = hs_tree_events_finish(tev, &res->events, &res->events_lost)) != HS_OK) {
			hs_launch_say(l.msg, HS_MSG_ERROR, "the events file %s was not written", res->events_path);
			goto fail;
		}
		hs_tree_events_free(tev);
		tev = NULL;
	}

	if (res->term_signal)
		hs_launch_say(l.msg, HS_MSG_WARN, "%s %s by signal %d (SIG%s)", path,
			      res->timed_out ? "killed" : "died", res->term_signal, sig_name(res->term_signal));
	else
		hs_launch_say(l.msg, HS_MSG_INFO, "%s exited with status %d", path, res->exit_code);
	hs_launch_say(l.msg, HS_MSG_INFO,
		      "%" PRIu64 " samples (%.3f s CPU, %.3f s wall), lost %" PRIu64 " records / %" PRIu64
		      " samples, throttled %" PRIu64 "x, %" PRIu64 " mmap, %" PRIu64 " comm, %" PRIu64
		      " fork/exit records, %" PRIu64 " build-ids, %" PRIu64 " bytes",
		      res->samples, (double)res->child_cpu_ns / 1e9, (double)res->wall_ns / 1e9, res->lost,
		      res->lost_samples, res->throttled, res->mmaps, res->comms, res->tasks, res->build_ids,
		      res->file_bytes);
	if (res->lost || res->lost_samples || res->throttled)
		hs_launch_say(l.msg, HS_MSG_WARN, "WARNING: samples were lost or throttled; the profile under-counts");
	st = HS_OK;
fail:
	if (child > 0 && !reaped) {
		kill(-child, SIGKILL);
		kill(child, SIGKILL);
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	hs_tree_events_free(tev);
	if (l.file)
		hs_perf_file_abort(l.file);
	rings_close(&l);
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	free(pfd);
	free(ids);
	free(argv);
	free(l.scratch);
	if (umask_set)
		umask(umask_was);
	return st;
}
