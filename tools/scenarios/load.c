/* hs_load: the load of the fault scenarios: CPU burner, memory hog, writer with fsync, idle marker. */
/*
 * usage: hs_load burn THREADS SECONDS     busy threads (0 = one per CPU) for SECONDS, then exit 0
 *        hs_load hog STEP_MB STEP_MS [MAX_MB]
 *                                         allocate and touch STEP_MB every STEP_MS until MAX_MB
 *                                         (0 or absent: until killed, e.g. by the OOM killer),
 *                                         then hold it until killed
 *        hs_load write DIR MB [SYNC_MB]   write MB MiB to a new file in DIR, 1 MiB per write,
 *                                         fsync every SYNC_MB MiB (default 64) and at the end,
 *                                         delete it, exit 0
 *        hs_load idle SECONDS             sleep, exit 0 (a process with a known lifetime)
 *
 * Every mode first prints "hs_load: pid N: MODE ..." (flushed) so the caller
 * can match its pid in a trace. Plain C (POSIX or Win32): the Windows
 * scenarios use the same program for their stress threads, hog and writer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <io.h>
#include <windows.h>
#define getpid_() ((unsigned long)GetCurrentProcessId())
#define SEP "\\"
static double now_s(void)
{
	return (double)GetTickCount64() / 1000.0;
}
static void sleep_ms(unsigned long ms)
{
	Sleep(ms);
}
static unsigned cpu_count(void)
{
	SYSTEM_INFO si;
	GetSystemInfo(&si);
	return si.dwNumberOfProcessors ? (unsigned)si.dwNumberOfProcessors : 1;
}
static int sync_file(FILE *f)
{
	return _commit(_fileno(f));
}
#else
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#define getpid_() ((unsigned long)getpid())
#define SEP "/"
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static void sleep_ms(unsigned long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}
static unsigned cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}
static int sync_file(FILE *f)
{
	return fsync(fileno(f));
}
#endif

#define MIB (1024UL * 1024UL)

/* ---- burn ---- */

static double burn_until;
static volatile unsigned long long burn_sink;

static void burn(void)
{
	unsigned long long x = 0x9E3779B97F4A7C15ULL;
	while (now_s() < burn_until) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		burn_sink += x;
	}
}

#ifdef _WIN32
static DWORD WINAPI burn_thread(LPVOID arg)
{
	(void)arg;
	burn();
	return 0;
}
#else
static void *burn_thread(void *arg)
{
	(void)arg;
	burn();
	return NULL;
}
#endif

static int do_burn(unsigned threads, double seconds)
{
	if (!threads)
		threads = cpu_count();
	printf("hs_load: pid %lu: burn %u threads for %.1f s\n", getpid_(), threads, seconds);
	fflush(stdout);
	burn_until = now_s() + seconds;
	/* The main thread burns too: threads - 1 more. */
#ifdef _WIN32
	HANDLE *h = calloc(threads, sizeof(*h));
	if (!h)
		return 1;
	for (unsigned i = 1; i < threads; i++)
		h[i] = CreateThread(NULL, 0, burn_thread, NULL, 0, NULL);
	burn();
	for (unsigned i = 1; i < threads; i++)
		if (h[i]) {
			WaitForSingleObject(h[i], INFINITE);
			CloseHandle(h[i]);
		}
#else
	pthread_t *h = calloc(threads, sizeof(*h));
	if (!h)
		return 1;
	for (unsigned i = 1; i < threads; i++)
		if (pthread_create(&h[i], NULL, burn_thread, NULL) != 0) {
			fprintf(stderr, "hs_load: cannot start burn thread %u\n", i);
			return 1;
		}
	burn();
	for (unsigned i = 1; i < threads; i++)
		pthread_join(h[i], NULL);
#endif
	free(h);
	return 0;
}

/* ---- hog ---- */

static int do_hog(unsigned long step_mb, unsigned long step_ms, unsigned long max_mb)
{
	printf("hs_load: pid %lu: hog %lu MiB every %lu ms up to %lu MiB\n", getpid_(), step_mb, step_ms, max_mb);
	fflush(stdout);
	unsigned long total = 0;
	for (;;) {
		if (!max_mb || total < max_mb) {
			unsigned char *p = malloc(step_mb * MIB);
			if (!p) {
				fprintf(stderr, "hs_load: malloc failed after %lu MiB\n", total);
				return 1;
			}
			/* Touch every page with data that no page sharing could fold. */
			for (unsigned long off = 0; off < step_mb * MIB; off += 4096)
				p[off] = (unsigned char)(off >> 12) | 1;
			total += step_mb;
		}
		sleep_ms(step_ms);
	}
}

/* ---- write ---- */

static int do_write(const char *dir, unsigned long mb, unsigned long sync_mb)
{
	char path[4096];
	snprintf(path, sizeof path, "%s" SEP "hs_load.%lu.dat", dir, getpid_());
	printf("hs_load: pid %lu: write %lu MiB to %s, fsync every %lu MiB\n", getpid_(), mb, path, sync_mb);
	fflush(stdout);
	FILE *f = fopen(path, "wb");
	char *buf = malloc(MIB);
	if (!f || !buf) {
		fprintf(stderr, "hs_load: cannot create %s: %s\n", path, strerror(errno));
		free(buf);
		if (f)
			fclose(f);
		return 1;
	}
	/* Not zeros: a filesystem or disk that compresses must still write it all. */
	for (unsigned long i = 0; i < MIB; i++)
		buf[i] = (char)(i * 2654435761UL >> 13);
	int rc = 0;
	double t0 = now_s();
	for (unsigned long i = 0; i < mb && !rc; i++) {
		buf[0] = (char)i;
		if (fwrite(buf, 1, MIB, f) != MIB || ((i + 1) % sync_mb == 0 && (fflush(f) || sync_file(f)))) {
			fprintf(stderr, "hs_load: writing %s failed after %lu MiB: %s\n", path, i, strerror(errno));
			rc = 1;
		}
	}
	if (!rc && (fflush(f) || sync_file(f))) {
		fprintf(stderr, "hs_load: the last fsync of %s failed: %s\n", path, strerror(errno));
		rc = 1;
	}
	fclose(f);
	free(buf);
	remove(path);
	double dt = now_s() - t0;
	if (!rc)
		printf("hs_load: wrote %lu MiB in %.2f s (%.0f MiB/s)\n", mb, dt, dt > 0 ? (double)mb / dt : 0.0);
	return rc;
}

static int usage(void)
{
	fputs("usage: hs_load burn THREADS SECONDS | hog STEP_MB STEP_MS [MAX_MB] | write DIR MB [SYNC_MB] | "
	      "idle SECONDS\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *m = argv[1];
	if (!strcmp(m, "burn") && argc == 4)
		return do_burn((unsigned)strtoul(argv[2], NULL, 10), strtod(argv[3], NULL));
	if (!strcmp(m, "hog") && (argc == 4 || argc == 5)) {
		unsigned long step = strtoul(argv[2], NULL, 10), ms = strtoul(argv[3], NULL, 10);
		if (!step)
			return usage();
		return do_hog(step, ms, argc == 5 ? strtoul(argv[4], NULL, 10) : 0);
	}
	if (!strcmp(m, "write") && (argc == 4 || argc == 5)) {
		unsigned long sync_mb = argc == 5 ? strtoul(argv[4], NULL, 10) : 64;
		return do_write(argv[2], strtoul(argv[3], NULL, 10), sync_mb ? sync_mb : 64);
	}
	if (!strcmp(m, "idle") && argc == 3) {
		double s = strtod(argv[2], NULL);
		printf("hs_load: pid %lu: idle %.1f s\n", getpid_(), s);
		fflush(stdout);
		sleep_ms((unsigned long)(s * 1000.0));
		return 0;
	}
	return usage();
}
