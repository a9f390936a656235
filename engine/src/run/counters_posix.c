/* run/counters_posix.c: the counters' OS side on Linux: PSI trigger files, /proc/stat, /proc/<pid>, statvfs, the deadline probe. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "run/counters.h"

/*
 * PSI (Documentation/accounting/psi.rst): writing "<some|full> <stall us>
 * <window us>" to /proc/pressure/<resource> registers a trigger on that open
 * file; poll() then reports POLLPRI once the stall within any window reaches
 * the threshold, at most once a window while it lasts. The kernel checks the
 * stall on its own PSI clock, so nothing is read here until it signals: the
 * engine only asks poll() without waiting at each wake-up. The trigger lives
 * as long as the fd. The kernel wants the text NUL-terminated (the
 * documentation's example writes strlen + 1 bytes).
 */

static bool read_small(const char *path, char *buf, size_t cap);

/* CapEff has CAP_SYS_RESOURCE (bit 24, linux/capability.h). */
static bool cap_sys_resource(void)
{
	char text[2048];
	if (!read_small("/proc/self/status", text, sizeof text))
		return false;
	const char *c = strstr(text, "\nCapEff:\t");
	return c && (strtoull(c + 9, NULL, 16) >> 24) & 1;
}

static int psi_path(const char *resource, char *path, size_t cap)
{
	return snprintf(path, cap, "/proc/pressure/%s", resource);
}

hs_status hs_counters_os_psi_open(const char *resource, bool full, uint64_t stall_us, uint64_t window_us,
				  intptr_t *handle, char *err, size_t errlen)
{
	char path[64], text[80];
	psi_path(resource, path, sizeof path);
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == ENOENT ? " (this kernel has no PSI: CONFIG_PSI off, or psi=0 on its command line)"
					 : "");
		return HS_EUNSUPPORTED;
	}
	int n = snprintf(text, sizeof text, "%s %" PRIu64 " %" PRIu64, full ? "full" : "some", stall_us, window_us);
	if (write(fd, text, (size_t)n + 1) < 0) {
		int e = errno;
		/* Without CAP_SYS_RESOURCE the kernel takes only windows that are
		 * whole multiples of 2 s (psi_trigger_create), and says EINVAL. */
		bool unpriv = (e == EINVAL || e == EOPNOTSUPP) && window_us % 2000000 && !cap_sys_resource();
		snprintf(err, errlen, "the kernel refused \"%s\" on %s: %s%s", text, path, strerror(e),
			 unpriv ? "; without CAP_SYS_RESOURCE (this process lacks it) it takes only windows that are "
				  "multiples of 2 s: make for_s 2, 4, ... 10"
				: "");
		close(fd);
		return HS_EUNSUPPORTED;
	}
	*handle = fd;
	return HS_OK;
}

bool hs_counters_os_psi_fired(intptr_t handle)
{
	struct pollfd p = {.fd = (int)handle, .events = POLLPRI};
	/* POLLPRI: the threshold was reached; POLLERR would mean the file is
	 * gone (a cgroup's), which /proc/pressure never is. */
	return poll(&p, 1, 0) > 0 && (p.revents & POLLPRI);
}

void hs_counters_os_psi_close(intptr_t handle)
{
	if (handle > 0)
		close((int)handle);
}

/* A small file's text into buf (NUL-terminated); false when unreadable. */
static bool read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

bool hs_counters_os_psi_line(const char *resource, bool full, char *buf, size_t cap)
{
	char path[64], text[512];
	psi_path(resource, path, sizeof path);
	if (!read_small(path, text, sizeof text))
		return false;
	const char *want = full ? "full " : "some ";
	for (char *l = text; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(l, want, 5)) {
			snprintf(buf, cap, "%s", l);
			return true;
		}
		l = nl ? nl + 1 : NULL;
	}
	return false;
}

/* /proc/stat's first line: "cpu user nice system idle iowait irq softirq steal ..." in ticks; idle and iowait are
 * not busy. */
bool hs_counters_os_cpu_times(uint64_t *busy, uint64_t *total)
{
	char text[512];
	if (!read_small("/proc/stat", text, sizeof text) || strncmp(text, "cpu ", 4) != 0)
		return false;
	uint64_t v[8] = {0};
	char *p = text + 4;
	for (int i = 0; i < 8; i++) {
		char *end;
		v[i] = strtoull(p, &end, 10);
		if (end == p)
			return i >= 4; /* older kernels stop early */
		p = end;
	}
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*busy = *total - v[3] - v[4];
	return true;
}

/* /proc/<pid>/<file> into text, as read_small. */
static bool read_proc(int pid, const char *file, char *text, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
	return read_small(path, text, cap);
}

bool hs_counters_os_processes(void (*fn)(void *ctx, int pid, const char *name), void *ctx)
{
	DIR *d = opendir("/proc");
	if (!d)
		return false;
	struct dirent *e;
	char name[64];
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		int pid = atoi(e->d_name);
		if (!read_proc(pid, "comm", name, sizeof name))
			continue; /* it exited meanwhile */
		name[strcspn(name, "\n")] = '\0';
		fn(ctx, pid, name);
	}
	closedir(d);
	return true;
}

/* /proc/<pid>/stat: utime and stime are fields 14 and 15, after "(comm)", which may hold spaces and parentheses. */
bool hs_counters_os_process_cpu_ns(int pid, uint64_t *ns)
{
	char text[1024];
	if (!read_proc(pid, "stat", text, sizeof text))
		return false;
	char *p = strrchr(text, ')');
	if (!p)
		return false;
	p += 2; /* field 3, the state */
	for (int f = 3; f < 14 && p; f++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return false;
	char *end;
	uint64_t ut = strtoull(p, &end, 10), st = strtoull(end, NULL, 10);
	long hz = sysconf(_SC_CLK_TCK);
	*ns = (ut + st) * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
	return true;
}

/* /proc/<pid>/statm: "size resident shared ..." in pages. */
bool hs_counters_os_process_rss(int pid, uint64_t *bytes)
{
	char text[256];
	if (!read_proc(pid, "statm", text, sizeof text))
		return false;
	unsigned long long size, resident;
	if (sscanf(text, "%llu %llu", &size, &resident) != 2)
		return false;
	*bytes = resident * (uint64_t)sysconf(_SC_PAGESIZE);
	return true;
}

bool hs_counters_os_disk_free(const char *dir, uint64_t *bytes)
{
	struct statvfs s;
	if (statvfs(dir, &s) != 0)
		return false;
	*bytes = (uint64_t)s.f_bavail * (uint64_t)s.f_frsize; /* what a non-root writer may still use */
	return true;
}

/* /proc/<pid>/status: no file or a zombie is gone; TracerPid is the debugger (ptrace) holding it. A task stopped by
 * SIGSTOP ("T (stopped)") without a tracer is no debugger's: a hang to catch. */
hs_trigger_probe hs_counters_os_probe(int pid)
{
	char path[64], text[2048];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	if (!read_small(path, text, sizeof text))
		return errno == ENOENT || errno == ESRCH ? HS_PROBE_GONE : HS_PROBE_UNKNOWN;
	const char *state = strstr(text, "\nState:\t");
	if (state && (state[8] == 'Z' || state[8] == 'X'))
		return HS_PROBE_GONE;
	const char *tracer = strstr(text, "\nTracerPid:\t");
	if (tracer && atoi(tracer + 12) != 0)
		return HS_PROBE_DEBUGGED;
	return HS_PROBE_RUNNING;
}
