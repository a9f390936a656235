/* perf/tree_events.c: launch mode's tracefs side: one instance scoped to the launched tree, drained to a trace.dat. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ftrace/instance.h"
#include "perf/tree_events.h"

struct hs_tree_events {
	const hs_plan_session *ps;
	const char *dat_path;
	const hs_msg *msg;
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	hs_ftrace_events ev;
	unsigned cpus;
	size_t subbuf;
	struct tracefs_cpu **tcpu; /* [cpus] non-blocking readers */
	int *fd;                   /* [cpus] scratch files, raw sub-buffers */
	char **files;              /* [cpus] their paths */
	bool failed;               /* a scratch write failed: the file would miss events */
};

static void say(hs_tree_events *t, hs_msg_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(hs_tree_events *t, hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	if (!t->msg)
		return;
	va_start(ap, fmt);
	hs_msg_vsay(t->msg, level, "launch", fmt, ap);
	va_end(ap);
}

hs_status hs_tree_events_start(const hs_plan_session *ps, pid_t pid, const char *dat_path, const hs_msg *msg,
			       hs_tree_events **out)
{
	hs_status st = HS_ENOMEM;
	const char *name = ps->session->logger_name;
	*out = NULL;
	if (ps->n_providers == 0)
		return HS_OK;
	hs_tree_events *t = calloc(1, sizeof(*t));
	if (!t)
		return HS_ENOMEM;
	t->ps = ps;
	t->dat_path = dat_path;
	t->msg = msg;
	t->cpus = hs_tracefs_api_get()->cpus();
	t->subbuf = (size_t)getpagesize();
	if (!(t->tcpu = calloc(t->cpus, sizeof(*t->tcpu))) || !(t->fd = calloc(t->cpus, sizeof(*t->fd))) ||
	    !(t->files = calloc(t->cpus, sizeof(*t->files))))
		goto fail;
	for (unsigned c = 0; c < t->cpus; c++)
		t->fd[c] = -1;
	if (geteuid() != 0) {
		/* The samples alone are still worth having, as perf_event_open allows. */
		say(t, HS_MSG_WARN, "not root: no tracefs events of the program (run as root for them); samples only");
		st = HS_OK;
		goto fail;
	}
	st = HS_EIO;
	if (!hs_tracefs_api_get()->tracing_dir()) {
		say(t, HS_MSG_WARN, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		goto fail;
	}
	if ((st = hs_ftrace_remove_stale(name, "launch", msg)) != HS_OK)
		goto fail;
	st = HS_EIO;
	if (!(t->tep = hs_ftrace_load_formats(ps, 1, "launch", msg)))
		goto fail;
	t->inst = hs_tracefs_api_get()->instance_create(name);
	if (!t->inst) {
		say(t, HS_MSG_WARN, "cannot create tracefs instance '%s': %s", name, strerror(errno));
		st = errno == EPERM || errno == EACCES ? HS_EPERM : HS_EIO;
		goto fail;
	}
	hs_tracefs_api_get()->trace_off(t->inst);
	if (hs_tracefs_api_get()->instance_set_buffer_size(t->inst, ps->linux_.per_cpu_kb, -1) < 0) {
		say(t, HS_MSG_WARN, "%s: cannot size the ring to %" PRIu64 " KB per CPU: %s", name,
		    ps->linux_.per_cpu_kb, strerror(errno));
		goto fail;
	}
	/* No overwrite: the reader keeps up, and a full ring should drop (and
	 * count) the newest events rather than silently lose the exec. */
	if (hs_tracefs_api_get()->option_disable(t->inst, TRACEFS_OPTION_OVERWRITE) < 0) {
		say(t, HS_MSG_WARN, "%s: cannot turn overwrite off", name);
		goto fail;
	}
	if (ps->session->clock &&
	    hs_tracefs_api_get()->instance_file_write(t->inst, "trace_clock", ps->session->clock) < 0) {
		say(t, HS_MSG_WARN, "%s: the kernel has no trace clock '%s'", name, ps->session->clock);
		goto fail;
	}
	/* Scope before any event is enabled, so nothing of other processes gets in;
	 * event-fork adds every child the tree forks (the kernel drops pids on exit). */
	char pidbuf[32];
	snprintf(pidbuf, sizeof(pidbuf), "%ld", (long)pid);
	if (hs_tracefs_api_get()->option_enable(t->inst, TRACEFS_OPTION_EVENT_FORK) < 0 ||
	    hs_tracefs_api_get()->instance_file_write(t->inst, "set_event_pid", pidbuf) < 0) {
		say(t, HS_MSG_WARN, "%s: cannot scope events to process %s and its children: %s", name, pidbuf,
		    strerror(errno));
		goto fail;
	}
	if ((st = hs_ftrace_enable_events(t->inst, t->tep, ps, "launch", msg, &t->ev)) != HS_OK)
		goto fail;
	st = HS_EIO;
	size_t plen = strlen(dat_path) + 16;
	for (unsigned c = 0; c < t->cpus; c++) {
		if (!(t->files[c] = malloc(plen))) {
			st = HS_ENOMEM;
			goto fail;
		}
		snprintf(t->files[c], plen, "%s.cpu%u", dat_path, c);
		t->fd[c] = open(t->files[c], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (t->fd[c] < 0) {
			say(t, HS_MSG_WARN, "cannot create %s: %s", t->files[c], strerror(errno));
			goto fail;
		}
		if (!(t->tcpu[c] = hs_tracefs_api_get()->cpu_open(t->inst, (int)c, true))) {
			say(t, HS_MSG_WARN, "%s: cannot open the ring of CPU %u: %s", name, c, strerror(errno));
			goto fail;
		}
	}
	if (hs_tracefs_api_get()->trace_on(t->inst) < 0) {
		say(t, HS_MSG_WARN, "%s: cannot turn tracing on", name);
		goto fail;
	}
	say(t, HS_MSG_INFO,
	    "%s: %zu event%s or systems of process %s and its children (%zu skipped), %" PRIu64
	    " KB ring per CPU, clock %s",
	    name, t->ev.enabled, t->ev.enabled == 1 ? "" : "s", pidbuf, t->ev.skipped, ps->linux_.per_cpu_kb,
	    ps->session->clock ? ps->session->clock : "(kernel default)");
	*out = t;
	return HS_OK;
fail:
	hs_tree_events_free(t);
	return st;
}

static void drain_cpu(hs_tree_events *t, unsigned c, bool flush)
{
	if (!t->tcpu[c] || t->fd[c] < 0)
		return;
	const hs_tracefs_api *api = hs_tracefs_api_get(); /* once, not per splice */
	for (;;) {
		/* Until empty: one splice per wake-up falls behind a busy tree. */
		int n = flush ? api->cpu_flush_write(t->tcpu[c], t->fd[c]) : api->cpu_write(t->tcpu[c], t->fd[c], true);
		if (n == 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
			return;
		if (n < 0) {
			if (!t->failed)
				say(t, HS_MSG_WARN, "writing %s: %s", t->files[c], strerror(errno));
			t->failed = true;
			return;
		}
	}
}

void hs_tree_events_drain(hs_tree_events *t)
{
	if (!t)
		return;
	for (unsigned c = 0; c < t->cpus; c++)
		drain_cpu(t, c, false);
}

/* Dropped (ring full) plus overrun (overwritten) events of every CPU. */
static uint64_t ring_lost(hs_tree_events *t)
{
	uint64_t lost = 0;
	for (unsigned c = 0; c < t->cpus; c++) {
		char file[64];
		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", c);
		char *text = hs_tracefs_api_get()->instance_file_read(t->inst, file, NULL);
		if (!text)
			continue;
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			if (!strncmp(line, "overrun:", 8))
				lost += strtoull(line + 8, NULL, 10);
			else if (!strncmp(line, "dropped events:", 15))
				lost += strtoull(line + 15, NULL, 10);
		free(text);
	}
	return lost;
}

static uint64_t count_file(hs_tree_events *t, unsigned c, void *buf)
{
	uint64_t n = 0;
	ssize_t r;
	for (off_t off = 0; (r = pread(t->fd[c], buf, t->subbuf, off)) == (ssize_t)t->subbuf; off += r)
		n += hs_dat_count_events(buf, t->subbuf, t->subbuf);
	return n;
}

hs_status hs_tree_events_finish(hs_tree_events *t, uint64_t *events, uint64_t *lost)
{
	const char *name = t->ps->session->logger_name;
	void *buf = malloc(t->subbuf);
	*events = *lost = 0;
	if (!buf)
		return HS_ENOMEM;
	hs_tracefs_api_get()->trace_off(t->inst);
	for (unsigned c = 0; c < t->cpus; c++) {
		drain_cpu(t, c, false);
		drain_cpu(t, c, true);
		hs_tracefs_api_get()->cpu_close(t->tcpu[c]);
		t->tcpu[c] = NULL;
		*events += count_file(t, c, buf);
	}
	free(buf);
	*lost = ring_lost(t);
	if (t->failed)
		return HS_EIO;
	hs_status st = hs_dat_write(t->dat_path, t->ps->session->clock, (int)t->cpus, t->files, t->ev.list, false,
				    t->msg);
	if (st != HS_OK)
		return st;
	say(t, HS_MSG_INFO, "%s: wrote %s: %" PRIu64 " events of the program's process tree%s", name, t->dat_path,
	    *events, *lost ? "" : ", none lost");
	if (*lost)
		say(t, HS_MSG_WARN, "WARNING: %s: the ring dropped %" PRIu64 " events; %s is incomplete", name, *lost,
		    t->dat_path);
	return HS_OK;
}

void hs_tree_events_free(hs_tree_events *t)
{
	if (!t)
		return;
	for (unsigned c = 0; t->tcpu && c < t->cpus; c++)
		hs_tracefs_api_get()->cpu_close(t->tcpu[c]);
	for (unsigned c = 0; t->fd && c < t->cpus; c++)
		if (t->fd[c] >= 0)
			close(t->fd[c]);
	if (t->inst) {
		hs_tracefs_api_get()->trace_off(t->inst);
		/* Every fd on the instance is closed above, or rmdir says EBUSY. */
		if (hs_tracefs_api_get()->instance_destroy(t->inst) < 0)
			say(t, HS_MSG_ERROR, "could not remove tracefs instance '%s': %s", t->ps->session->logger_name,
			    strerror(errno));
		hs_tracefs_api_get()->instance_free(t->inst);
	}
	for (unsigned c = 0; t->files && c < t->cpus; c++) {
		if (t->files[c])
			unlink(t->files[c]);
		free(t->files[c]);
	}
	if (t->tep)
		tep_free(t->tep);
	/* The instance is gone: another launch (or engine) may have the name now. */
	hs_ftrace_release(t->ps->session->logger_name);
	hs_ftrace_events_free(&t->ev);
	free(t->files);
	free(t->fd);
	free(t->tcpu);
	free(t);
}
