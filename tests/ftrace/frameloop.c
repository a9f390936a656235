/* frameloop.c: a stand-in game loop for the trigger tests: atrace frame slices to tracefs trace_marker at a fixed rate, with one long frame. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: frameloop HZ FRAMES GAP_AT GAP_MS [NAME]
 * Writes "B|<pid>|NAME" at the start of every frame and "E|<pid>" after a
 * little work, on an absolute CLOCK_MONOTONIC schedule (the clock the test
 * profile's sessions use). Frame GAP_AT lasts GAP_MS instead of 1/HZ s. Prints
 * "gap <start_ns> <end_ns>": the starts of the long frame and of the next one.
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

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: frameloop HZ FRAMES GAP_AT GAP_MS [NAME]\n");
		return 2;
	}
	double hz = atof(argv[1]);
	long frames = atol(argv[2]), gap_at = atol(argv[3]);
	double gap_ms = atof(argv[4]);
	const char *name = argc > 5 ? argv[5] : "Frame";
	if (hz <= 0 || frames <= 0) {
		fprintf(stderr, "frameloop: HZ and FRAMES must be positive\n");
		return 2;
	}
	const char *path = "/sys/kernel/tracing/trace_marker";
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "frameloop: %s: %s\n", path, strerror(errno));
		return 1;
	}
	char b[128], e[32];
	int bl = snprintf(b, sizeof(b), "B|%d|%s", (int)getpid(), name);
	int el = snprintf(e, sizeof(e), "E|%d", (int)getpid());
	uint64_t period = (uint64_t)(1e9 / hz), t = now_ns(), gap_start = 0, gap_end = 0;
	for (long i = 0; i < frames; i++) {
		sleep_until(t);
		if (i == gap_at + 1)
			gap_end = now_ns();
		/* EBADF: the top-level buffer is off (tracing_on 0); the kernel
		 * has still copied the marker into the instances that asked for it
		 * (options/copy_trace_marker), as atrace users, who ignore errors, expect. */
		if (write(fd, b, (size_t)bl) != bl && errno != EBADF) {
			fprintf(stderr, "frameloop: write: %s\n", strerror(errno));
			return 1;
		}
		if (i == gap_at)
			gap_start = now_ns();
		if (write(fd, e, (size_t)el) != el && errno != EBADF)
			return 1;
		t += i == gap_at ? (uint64_t)(gap_ms * 1e6) : period;
	}
	close(fd);
	printf("gap %llu %llu\n", (unsigned long long)gap_start, (unsigned long long)gap_end);
	return 0;
}
