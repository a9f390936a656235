/* busy.c: a CPU-bound target for the launch-mode test with one known hot function (and a crash and a hang mode). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* volatile so -O1 keeps the loops; noinline so the symbols exist in the profile. */
static volatile unsigned long sink;

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void busy_hot_spin(double until)
{
	do {
		for (unsigned i = 0; i < 100000; i++)
			sink += i * 7u;
	} while (cpu_s() < until);
}

__attribute__((noinline)) void busy_cold_spin(double until)
{
	do {
		for (unsigned i = 0; i < 100000; i++)
			sink += i * 3u;
	} while (cpu_s() < until);
}

/* usage: busy SECONDS [segv|hang]: 90% of SECONDS of CPU in busy_hot_spin, 10% in busy_cold_spin. */
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	const char *mode = argc > 2 ? argv[2] : "";
	double t0 = cpu_s();
	for (int round = 0; round < 10; round++) {
		double step = secs / 10;
		busy_hot_spin(t0 + step * round + step * 0.9);
		busy_cold_spin(t0 + step * (round + 1));
	}
	if (strcmp(mode, "segv") == 0) {
		volatile int *p = NULL;
		*p = 1;
	}
	/* hang: a forked child spins too, so the timeout must kill the whole tree. */
	if (strcmp(mode, "hang") == 0 && fork() >= 0)
		for (;;)
			busy_hot_spin(cpu_s() + 1);
	printf("busy: %.3f s CPU, sink %lu\n", cpu_s() - t0, sink);
	return 0;
}
