/* test_counters.c: the counters' OS side (run/counters.h) against the machine it runs on: Linux /proc and PSI, or Windows through the real call table (under Wine in the cross build). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "hindsight/compat.h"
#include "run/counters.h"
#include "run/os.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static volatile uint64_t sink;

/* Spends ms of CPU in this process. */
static void spin(unsigned ms)
{
	uint64_t end = hs_os_monotonic_ms() + ms;
	while (hs_os_monotonic_ms() < end)
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i;
}

/* This process's own CPU time (the C library's clock, independent of the counters under test). */
static uint64_t own_cpu_ns(void)
{
#ifdef _WIN32
	FILETIME created, exited, kernel, user; /* 100 ns units */
	if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user))
		return 0;
	uint64_t k = ((uint64_t)kernel.dwHighDateTime << 32) | kernel.dwLowDateTime;
	uint64_t u = ((uint64_t)user.dwHighDateTime << 32) | user.dwLowDateTime;
	return (k + u) * 100;
#else
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

/* Spins until this process has used ms of CPU (not of wall time: with stress-ng on both CPUs, 200 ms of wall
 * time gave it 40-90 ms of CPU), or a minute has passed. */
static void spin_cpu(unsigned ms)
{
	uint64_t from = own_cpu_ns(), end = hs_os_monotonic_ms() + 60000;
	while (own_cpu_ns() - from < (uint64_t)ms * 1000000ull && hs_os_monotonic_ms() < end)
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i;
}

typedef struct {
	int pid;
	char name[64];
	size_t n;
} find_ctx;

static void find_one(void *ctx, int pid, const char *name)
{
	find_ctx *f = ctx;
	f->n++;
	if (pid == f->pid)
		snprintf(f->name, sizeof f->name, "%s", name);
}

static void test_machine(void)
{
	uint64_t b0, t0, b1, t1;
	CHECK(hs_counters_os_cpu_times(&b0, &t0));
	spin(300);
	CHECK(hs_counters_os_cpu_times(&b1, &t1));
	CHECK(t1 > t0);
	CHECK(b1 > b0); /* this process was busy for 300 ms */
	CHECK(b1 - b0 <= t1 - t0);
	uint64_t free_b = 0;
	CHECK(hs_counters_os_disk_free(".", &free_b));
	CHECK(free_b > 0);
	CHECK(!hs_counters_os_disk_free("/no/such/folder/at/all", &free_b));
}

static void test_self(void)
{
	find_ctx f = {.pid = (int)hs_getpid()};
	CHECK(hs_counters_os_processes(find_one, &f));
	CHECK(f.n > 1);
	/* Linux: comm (15 chars); Windows: the image's file name. */
	CHECK(strncmp(f.name, "test_counters", 13) == 0);
	uint64_t c0 = 0, c1 = 0, rss = 0;
	CHECK(hs_counters_os_process_cpu_ns(f.pid, &c0));
	spin_cpu(200);
	CHECK(hs_counters_os_process_cpu_ns(f.pid, &c1));
	CHECK(c1 >= c0 + 100000000ull); /* at least 100 of the 200 ms of CPU used (the OS's tick granularity) */
	CHECK(hs_counters_os_process_rss(f.pid, &rss));
	CHECK(rss > 256 * 1024);
	CHECK(hs_counters_os_probe(f.pid) == HS_PROBE_RUNNING);
	/* No such process. */
	CHECK(hs_counters_os_probe(0x3ffffff0) == HS_PROBE_GONE);
	CHECK(!hs_counters_os_process_rss(0x3ffffff0, &rss));
}

#ifndef _WIN32
/* A stopped child (SIGSTOP) is running for the probe; held by ptrace it is debugged; exited and not reaped, gone. */
static void test_probe_linux(void)
{
	pid_t c = fork();
	if (c == 0) {
		for (;;)
			pause();
	}
	CHECK(c > 0);
	kill(c, SIGSTOP);
	int st;
	waitpid(c, &st, WUNTRACED);
	CHECK(hs_counters_os_probe(c) == HS_PROBE_RUNNING);
	kill(c, SIGCONT);
	if (ptrace(PTRACE_SEIZE, c, 0, 0) == 0) {
		ptrace(PTRACE_INTERRUPT, c, 0, 0);
		waitpid(c, &st, __WALL);
		CHECK(hs_counters_os_probe(c) == HS_PROBE_DEBUGGED);
		ptrace(PTRACE_DETACH, c, 0, 0);
	} else {
		fprintf(stderr, "test_counters: no ptrace here; the debugger probe is not checked\n");
	}
	kill(c, SIGKILL);
	/* A zombie until reaped. */
	for (int i = 0; i < 100 && hs_counters_os_probe(c) != HS_PROBE_GONE; i++)
		usleep(10000);
	CHECK(hs_counters_os_probe(c) == HS_PROBE_GONE);
	waitpid(c, &st, 0);
	CHECK(hs_counters_os_probe(c) == HS_PROBE_GONE);
}

/* PSI where the kernel has it: a 2 s window is taken by any engine; the summary line is there. */
static void test_psi_linux(void)
{
	char err[256] = "", line[160] = "";
	intptr_t h = -1;
	hs_status st = hs_counters_os_psi_open("memory", false, 200000, 2000000, &h, err, sizeof err);
	if (st != HS_OK) {
		fprintf(stderr, "test_counters: no PSI here (%s); not checked\n", err);
		CHECK(strstr(err, "/proc/pressure/memory") != NULL);
		return;
	}
	CHECK(!hs_counters_os_psi_fired(h)); /* a quiet test machine stalls 10% of 2 s on memory never */
	hs_counters_os_psi_close(h);
	CHECK(hs_counters_os_psi_line("memory", false, line, sizeof line));
	CHECK(strncmp(line, "some avg10=", 11) == 0);
	CHECK(hs_counters_os_psi_line("io", true, line, sizeof line));
	CHECK(strncmp(line, "full avg10=", 11) == 0);
	/* A refused trigger says why. */
	st = hs_counters_os_psi_open("memory", false, 3000000, 2000000, &h, err, sizeof err);
	CHECK(st == HS_EUNSUPPORTED);
	CHECK(strstr(err, "refused") != NULL);
}
#else
static void test_psi_windows(void)
{
	char err[128] = "";
	intptr_t h = 0;
	CHECK(hs_counters_os_psi_open("memory", false, 1, 2, &h, err, sizeof err) == HS_EUNSUPPORTED);
	CHECK(strstr(err, "Windows") != NULL);
	CHECK(!hs_counters_os_psi_fired(h));
}
#endif

int main(void)
{
	test_machine();
	test_self();
#ifndef _WIN32
	test_probe_linux();
	test_psi_linux();
#else
	test_psi_windows();
#endif
	return hs_test_done("test_counters");
}
