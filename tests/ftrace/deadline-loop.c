/* deadline-loop.c: the deadline tests' stand-in game: atrace frames that stop (busy, or held by the test), the monotonic clock, and a ptrace holder. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * usage:
 *   deadline-loop frames HZ PRE_S FREEZE_S POST_S busy|none [NAME]
 *       "B|<pid>|NAME" + "E|<pid>" to tracefs trace_marker every 1/HZ s (absolute
 *       CLOCK_MONOTONIC schedule, the test profile's clock) for PRE_S s; then with
 *       `busy` no frame for FREEZE_S s while spinning on the CPU (as SCHED_OTHER,
 *       so a real-time loop does not starve its CPU), then frames for POST_S s.
 *       With `none` frames go on all along (the test stops the process from
 *       outside: SIGSTOP, a debugger). Prints "pid <pid>" at once, and at the end
 *       "freeze <last frame before> <first frame after>" (ns; the largest gap
 *       between two frames, wherever it was) and "frames <n>".
 *       HS_TRACE_MARKER names another marker file (a tracefs instance's own).
 *   deadline-loop now              CLOCK_MONOTONIC in ns.
 *   deadline-loop ptrace PID SECS  holds PID as a debugger does (PTRACE_SEIZE +
 *       PTRACE_INTERRUPT: "t (tracing stop)") for SECS s, then lets it go.
 */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int hold(pid_t pid, double secs)
{
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0 || ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0) {
		fprintf(stderr, "deadline-loop: ptrace %d: %s\n", (int)pid, strerror(errno));
		return 1;
	}
	int st;
	waitpid(pid, &st, __WALL); /* the group-stop the interrupt causes */
	printf("held %llu\n", (unsigned long long)now_ns());
	fflush(stdout);
	sleep_until(now_ns() + (uint64_t)(secs * 1e9));
	ptrace(PTRACE_DETACH, pid, 0, 0);
	printf("released %llu\n", (unsigned long long)now_ns());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "now")) {
		printf("%llu\n", (unsigned long long)now_ns());
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "ptrace"))
		return hold((pid_t)atoi(argv[2]), atof(argv[3]));
	if (argc < 7 || strcmp(argv[1], "frames") != 0) {
		fprintf(stderr, "usage: deadline-loop frames HZ PRE_S FREEZE_S POST_S busy|none [NAME] | now | "
				"ptrace PID SECS\n");
		return 2;
	}
	double hz = atof(argv[2]), pre = atof(argv[3]), freeze = atof(argv[4]), post = atof(argv[5]);
	int busy = !strcmp(argv[6], "busy");
	const char *name = argc > 7 ? argv[7] : "Frame";
	if (hz <= 0 || pre < 0 || freeze < 0 || post < 0) {
		fprintf(stderr, "deadline-loop: HZ must be positive, times not negative\n");
		return 2;
	}
	/* HS_TRACE_MARKER: another marker file (an instance's own, for a fixture that must hold nothing else). */
	const char *path = getenv("HS_TRACE_MARKER") ? getenv("HS_TRACE_MARKER") : "/sys/kernel/tracing/trace_marker";
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "deadline-loop: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	char b[128], e[32];
	int bl = snprintf(b, sizeof(b), "B|%d|%s", (int)getpid(), name);
	int el = snprintf(e, sizeof(e), "E|%d", (int)getpid());
	uint64_t period = (uint64_t)(1e9 / hz), t0 = now_ns(), t = t0, prev = 0, gap = 0, gap_a = 0, gap_b = 0;
	uint64_t freeze_at = t0 + (uint64_t)(pre * 1e9),
		 end = freeze_at + (uint64_t)((busy ? freeze : 0) * 1e9) + (uint64_t)(post * 1e9);
	long n = 0;
	int frozen = 0;
	while (t < end) {
		if (busy && !frozen && t >= freeze_at) {
			/* Busy, no frames: the frozen game spins in its own code. */
			struct sched_param sp = {0};
			int pol = sched_getscheduler(0);
			struct sched_param old;
			sched_getparam(0, &old);
			sched_setscheduler(0, SCHED_OTHER, &sp);
			volatile uint64_t x = 0;
			while (now_ns() < freeze_at + (uint64_t)(freeze * 1e9))
				x++;
			sched_setscheduler(0, pol, &old);
			frozen = 1;
			t = now_ns();
		}
		sleep_until(t);
		uint64_t at = now_ns();
		/* EBADF: the top-level buffer is off; the kernel copied the marker anyway (copy_trace_marker). */
		if (write(fd, b, (size_t)bl) != bl && errno != EBADF) {
			fprintf(stderr, "deadline-loop: write: %s\n", strerror(errno));
			return 1;
		}
		if (prev && at - prev > gap) {
			gap = at - prev;
			gap_a = prev;
			gap_b = at;
		}
		prev = at;
		n++;
		if (write(fd, e, (size_t)el) != el && errno != EBADF)
			return 1;
		t += period;
		if (t < at) /* held (SIGSTOP, a debugger): go on from now, no burst of late frames */
			t = at + period;
	}
	close(fd);
	printf("freeze %llu %llu\nframes %ld\n", (unsigned long long)gap_a, (unsigned long long)gap_b, n);
	return 0;
}
