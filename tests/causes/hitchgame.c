/* hitchgame.c: a stand-in game for the cause scenarios: atrace frames at a fixed rate on one CPU, one in-app cause injected at a chosen frame. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * A render loop as a game has one: a frame thread pinned to one CPU writes
 * "B|<pid>|Frame" at the start of every frame and "E|<pid>" at its end to
 * tracefs trace_marker (the atrace slices stutter.yaml's frame-hitch trigger
 * reads), does a fixed amount of CPU work per frame (--work-us, calibrated at
 * start; contention stretches it as it would a real frame's), and sleeps
 * until the next frame on an absolute CLOCK_MONOTONIC schedule (the profile's
 * trace clock). A frame that overruns its slot is followed at once by the
 * next one, paced again from there (no burst of catch-up frames).
 *
 * Frame --at gets one of these causes, inside the frame's slice:
 *   none    nothing (an outside culprit, timed by --signal-fifo, does it)
 *   work    --ms of CPU work: a heavy frame that alone stays under the hitch
 *           threshold, stretched by whatever takes the CPU from it
 *   fsync   fsync of --mb MB written (not synced) to --file before frame 0
 *   mutex   pthread_mutex_lock on a mutex a second thread (named --holder)
 *           took at the end of the previous frame and holds for --ms
 *   sleep   clock_nanosleep of --ms
 *   fault   reads one byte every --stride-kb (default 4) of --file, mmapped
 *           before frame 0, in a random order, until --ms have passed: major
 *           faults when the scenario dropped the file's page cache (a 4 KB
 *           stride: MADV_RANDOM, one 4 KB read each; larger: the kernel's
 *           read-around reads up to read_ahead_kb at each)
 *   alloc   maps --mb MB (2 MB pages asked for) and writes every page (in a
 *           memory-limited cgroup: the reclaim the charge needs)
 *   cache   writes --mb MB to --file.2 from a buffer ready before frame 0:
 *           new page cache charged to the cgroup without a page fault each
 * --fill-mb MB written to --file before frame 0 as scattered 4 KB pages give
 * reclaim dirty page cache that takes long to write back (alloc, cache).
 *
 * With --signal-fifo, frame --at minus --signal-lead (default 24, 100 ms at
 * 240 Hz) writes frame --at's scheduled start (ns, a line) to that FIFO: an
 * outside culprit (culprit.c --start-fifo) waits there, so it starts on time
 * even when late frames moved the schedule. --signal-lead 0: frame --at
 * itself writes its actual start, right after its start marker (a culprit
 * that must begin inside the frame, whatever the frames before did).
 *
 * Prints, flushed at once:
 *   game pid P tid T cpu C hz H work_round_ns NS
 *   plan N NS          frame N's scheduled start (CLOCK_MONOTONIC ns) as of now
 *   holder tid T name NAME        (mutex)
 *   signal frame N due NS         (--signal-fifo)
 * and at the end:
 *   inject KIND frame N start NS end NS ms MS
 *   long frame I start NS end NS ms MS pid P tid T
 *   hitch frame I start NS end NS ms MS           (each frame over 50 ms)
 *   median_ms MS frames COUNT over_50ms COUNT
 *   lingering                                     (--linger)
 * where a frame runs from its start marker to the next frame's.
 *
 * --linger: after the report the process stays (paused, in its cgroups)
 * until it is killed, as a game goes on after a hitch: the recorder's
 * snapshot, taken seconds later, still finds it (tasks.json: its cgroup's
 * CPU quota or memory limit, its threads).
 */

enum inject { INJ_NONE, INJ_WORK, INJ_FSYNC, INJ_MUTEX, INJ_SLEEP, INJ_FAULT, INJ_ALLOC, INJ_CACHE };
static const char *const inject_names[] = {"none", "work", "fsync", "mutex", "sleep", "fault", "alloc", "cache"};

struct opts {
	double hz;
	int cpu;
	long at, after;
	enum inject inject;
	double ms;
	long mb, fill_mb, work_us, signal_lead, stride_kb;
	const char *file, *holder, *signal_fifo;
	int linger;
};

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

static void sleep_ms(double ms)
{
	sleep_until(now_ns() + (uint64_t)(ms * 1e6));
}

/* Work is a fixed number of rounds, so a frame that loses the CPU takes
 * longer in wall time, as a real frame's fixed work would. Not the thread's
 * CPU clock: without CONFIG_IRQ_TIME_ACCOUNTING (these VMs) the softirq time
 * that interrupts a thread is charged to it, and a frame measured that way
 * would end early by exactly what an interrupt storm took from it. */
static volatile uint32_t work_sink;
static double round_ns = 1000; /* calibrate_work() sets it */

static void work_rounds(uint64_t n)
{
	static uint32_t buf[1024];
	uint32_t x = work_sink | 1u;
	for (uint64_t r = 0; r < n; r++)
		for (size_t i = 0; i < 1024; i++) {
			x = x * 1664525u + 1013904223u;
			buf[i] ^= x;
		}
	work_sink = x ^ buf[x & 1023];
}

/* The fastest of 200 timed runs of 16 rounds: a run that was interrupted or
 * preempted is slower, never faster. */
static void calibrate_work(void)
{
	uint64_t best = UINT64_MAX;
	for (int k = 0; k < 200; k++) {
		uint64_t t0 = now_ns();
		work_rounds(16);
		uint64_t t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	round_ns = best > 0 ? (double)best / 16 : 1;
}

static void work_cpu_us(double us)
{
	work_rounds((uint64_t)(us * 1e3 / round_ns + 0.5));
}

/* The mutex scenario's second thread. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t go, locked;
static double hold_ms;
static volatile pid_t holder_tid;

static void *holder_main(void *arg)
{
	prctl(PR_SET_NAME, (const char *)arg);
	holder_tid = (pid_t)syscall(SYS_gettid);
	while (sem_wait(&go) != 0)
		;
	pthread_mutex_lock(&lock);
	sem_post(&locked);
	sleep_ms(hold_ms);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int write_mb(int fd, long mb)
{
	static char chunk[1 << 20];
	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)(i * 31 + 7);
	for (long i = 0; i < mb; i++)
		if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
			return -1;
	return 0;
}

/* MB of dirty page cache as single 4 KB pages scattered over a file four times
 * as large, in a random order: writeback then issues one small write per page,
 * and the pages reclaim reaches first (the first dirtied) are cleaned late. */
static int write_scattered_mb(int fd, long mb)
{
	static char page[4096];
	size_t n = (size_t)mb * 256, slots = n * 4;
	memset(page, 0x5a, sizeof(page));
	uint64_t x = now_ns() | 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (pwrite(fd, page, sizeof(page), (off_t)(x % slots) * 4096) != (ssize_t)sizeof(page))
			return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: hitchgame [--hz HZ] [--cpu N] [--at FRAME] [--after FRAMES] [--work-us US]\n"
		"                 [--signal-fifo PATH [--signal-lead FRAMES]]\n"
		"                 [--inject none|work|fsync|mutex|sleep|fault|alloc|cache] [--ms MS] [--mb MB]\n"
		"                 [--fill-mb MB] [--file PATH] [--holder NAME] [--stride-kb KB] [--linger]\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"hz", 1, 0, 'h'},          {"cpu", 1, 0, 'c'},       {"at", 1, 0, 'a'},     {"after", 1, 0, 'A'},
		{"inject", 1, 0, 'i'},      {"ms", 1, 0, 'm'},        {"mb", 1, 0, 'b'},     {"fill-mb", 1, 0, 'F'},
		{"work-us", 1, 0, 'w'},     {"file", 1, 0, 'f'},      {"holder", 1, 0, 'H'}, {"signal-fifo", 1, 0, 's'},
		{"signal-lead", 1, 0, 'S'}, {"stride-kb", 1, 0, 'K'}, {"linger", 0, 0, 'L'},
		{0, 0, 0, 0}};
	*o = (struct opts){.hz = 240,
			   .cpu = 0,
			   .at = 120,
			   .after = -1,
			   .ms = 100,
			   .mb = 64,
			   .work_us = 300,
			   .signal_lead = 24,
			   .stride_kb = 4};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'h': o->hz = atof(optarg); break;
		case 'c': o->cpu = atoi(optarg); break;
		case 'a': o->at = atol(optarg); break;
		case 'A': o->after = atol(optarg); break;
		case 'm': o->ms = atof(optarg); break;
		case 'b': o->mb = atol(optarg); break;
		case 'F': o->fill_mb = atol(optarg); break;
		case 'w': o->work_us = atol(optarg); break;
		case 'K': o->stride_kb = atol(optarg); break;
		case 'L': o->linger = 1; break;
		case 'f': o->file = optarg; break;
		case 'H': o->holder = optarg; break;
		case 's': o->signal_fifo = optarg; break;
		case 'S': o->signal_lead = atol(optarg); break;
		case 'i': {
			size_t k = 0;
			while (k < sizeof(inject_names) / sizeof(*inject_names) && strcmp(optarg, inject_names[k]))
				k++;
			if (k == sizeof(inject_names) / sizeof(*inject_names)) {
				fprintf(stderr, "hitchgame: unknown --inject %s\n", optarg);
				return -1;
			}
			o->inject = (enum inject)k;
			break;
		}
		default: usage(); return -1;
		}
	}
	if (optind != argc || o->hz <= 0 || o->at < 1 || o->ms < 0 || o->mb < 0 || o->work_us < 0 ||
	    o->signal_lead < 0 || o->signal_lead > o->at || o->stride_kb < 4 || o->stride_kb % 4) {
		usage();
		return -1;
	}
	if (o->after < 0)
		o->after = (long)(o->hz / 4) + 1;
	if ((o->inject == INJ_FSYNC || o->inject == INJ_FAULT || o->inject == INJ_CACHE || o->fill_mb > 0) &&
	    !o->file) {
		fprintf(stderr, "hitchgame: --inject %s needs --file\n", inject_names[o->inject]);
		return -1;
	}
	if (o->inject == INJ_MUTEX && !o->holder) {
		fprintf(stderr, "hitchgame: --inject mutex needs --holder NAME\n");
		return -1;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse(argc, argv, &o) != 0)
		return 2;
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	if (o.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0) {
			fprintf(stderr, "hitchgame: cannot pin to CPU %d: %s\n", o.cpu, strerror(errno));
			return 1;
		}
	}
	const char *path = "/sys/kernel/tracing/trace_marker";
	int marker = open(path, O_WRONLY | O_CLOEXEC);
	if (marker < 0) {
		fprintf(stderr, "hitchgame: %s: %s\n", path, strerror(errno));
		return 1;
	}

	/* The cause's set-up, all before frame 0. */
	int fd = -1;
	volatile const char *map = NULL;
	size_t pages = 0, slots = 0, stride = 4096, *order = NULL;
	pthread_t holder;
	if (o.inject == INJ_FSYNC || o.fill_mb > 0) {
		long mb = o.inject == INJ_FSYNC ? o.mb : o.fill_mb;
		fd = open(o.file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || (o.inject == INJ_FSYNC ? write_mb(fd, mb) : write_scattered_mb(fd, mb)) != 0) {
			fprintf(stderr, "hitchgame: writing %ld MB to %s: %s\n", mb, o.file, strerror(errno));
			return 1;
		}
	} else if (o.inject == INJ_FAULT) {
		struct stat st;
		fd = open(o.file, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 4096) {
			fprintf(stderr, "hitchgame: %s: %s\n", o.file, fd < 0 ? strerror(errno) : "too small");
			return 1;
		}
		pages = (size_t)st.st_size / 4096;
		stride = (size_t)o.stride_kb * 1024;
		slots = (size_t)st.st_size / stride;
		void *m = mmap(NULL, pages * 4096, PROT_READ, MAP_SHARED, fd, 0);
		/* One page a touch: MADV_RANDOM, no readahead, each touch one 4 KB read. A larger stride keeps the
		 * kernel's mmap read-around: each touch one read of up to read_ahead_kb around it. */
		if (m == MAP_FAILED || (stride == 4096 && madvise(m, pages * 4096, MADV_RANDOM) != 0)) {
			fprintf(stderr, "hitchgame: mmap %s: %s\n", o.file, strerror(errno));
			return 1;
		}
		map = m;
		order = malloc(slots * sizeof(*order));
		if (!order || slots < 1)
			return 1;
		for (size_t i = 0; i < slots; i++)
			order[i] = i;
		srand((unsigned)now_ns());
		for (size_t i = slots - 1; i > 0; i--) { /* random order: no pattern for readahead to follow */
			size_t j = (size_t)rand() % (i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		unsigned char *vec = malloc((pages + 4095) / 4096 * 4096);
		size_t resident = 0;
		if (vec && mincore(m, pages * 4096, vec) == 0)
			for (size_t i = 0; i < pages; i++)
				resident += vec[i] & 1;
		free(vec);
		printf("fault file %s pages %zu resident %zu stride %zu\n", o.file, pages, resident, stride);
	} else if (o.inject == INJ_MUTEX) {
		hold_ms = o.ms;
		if (sem_init(&go, 0, 0) != 0 || sem_init(&locked, 0, 0) != 0 ||
		    pthread_create(&holder, NULL, holder_main, (void *)o.holder) != 0) {
			fprintf(stderr, "hitchgame: cannot start the holder thread\n");
			return 1;
		}
		while (!holder_tid)
			sleep_ms(1);
		printf("holder tid %d name %s\n", (int)holder_tid, o.holder);
	}

	/* cache: the second file and a 1 MB source buffer, ready before frame 0. */
	char path2[4096];
	static char cache_buf[1 << 20];
	int fd2 = -1;
	if (o.inject == INJ_CACHE) {
		snprintf(path2, sizeof(path2), "%s.2", o.file);
		memset(cache_buf, 0x3c, sizeof(cache_buf));
		fd2 = open(path2, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd2 < 0) {
			fprintf(stderr, "hitchgame: %s: %s\n", path2, strerror(errno));
			return 1;
		}
	}
	calibrate_work();
	char b[64], e[32];
	int bl = snprintf(b, sizeof(b), "B|%d|Frame", (int)pid);
	int el = snprintf(e, sizeof(e), "E|%d", (int)pid);
	long frames = o.at + o.after;
	uint64_t *starts = calloc((size_t)frames + 1, sizeof(*starts));
	if (!starts)
		return 1;
	/* 200 ms before frame 0: the set-up's own CPU time (page faults, the calibration) is not the first
	 * frames', and a CPU quota spent on it (the cgroup scenario's 5 ms) is refilled first. */
	sleep_ms(200);
	uint64_t period = (uint64_t)(1e9 / o.hz), t = now_ns() + period;
	printf("game pid %d tid %d cpu %d hz %g work_round_ns %.1f\n", (int)pid, (int)tid, o.cpu, o.hz, round_ns);
	printf("plan %ld %llu\n", o.at, (unsigned long long)(t + (uint64_t)o.at * period));
	fflush(stdout);

	for (long i = 0; i <= frames; i++) {
		sleep_until(t);
		starts[i] = now_ns();
		if (i == frames)
			break; /* the last start closes the last frame */
		/* EBADF: the top-level buffer is off; the kernel still copied the marker into the instances that
		 * asked for it (copy_trace_marker). atrace writers ignore the result too. */
		if (write(marker, b, (size_t)bl) < 0 && errno != EBADF) {
			fprintf(stderr, "hitchgame: write %s: %s\n", path, strerror(errno));
			return 1;
		}
		if (o.signal_fifo && i == o.at - o.signal_lead) {
			/* An outside culprit waits on the FIFO for frame --at's start on this schedule: the
			 * plan line's time drifts once a frame is late, this one is current. */
			uint64_t due = o.signal_lead ? t + (uint64_t)o.signal_lead * period : starts[i];
			int f = open(o.signal_fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
			if (f < 0 || dprintf(f, "%llu\n", (unsigned long long)due) < 0)
				fprintf(stderr, "hitchgame: %s: %s\n", o.signal_fifo, strerror(errno));
			if (f >= 0)
				close(f);
			printf("signal frame %ld due %llu\n", o.at, (unsigned long long)due);
			fflush(stdout);
		}
		work_cpu_us((double)o.work_us);
		if (i == o.at - 1 && o.inject == INJ_MUTEX) {
			sem_post(&go); /* the holder takes the lock before this frame ends */
			while (sem_wait(&locked) != 0)
				;
		}
		if (i == o.at) {
			switch (o.inject) {
			case INJ_NONE: break;
			case INJ_WORK: work_cpu_us(o.ms * 1e3); break;
			case INJ_FSYNC:
				if (fsync(fd) != 0)
					fprintf(stderr, "hitchgame: fsync: %s\n", strerror(errno));
				break;
			case INJ_MUTEX:
				pthread_mutex_lock(&lock);
				pthread_mutex_unlock(&lock);
				break;
			case INJ_SLEEP: sleep_ms(o.ms); break;
			case INJ_FAULT: {
				uint64_t end = now_ns() + (uint64_t)(o.ms * 1e6);
				size_t k = 0;
				unsigned sum = 0;
				while (k < slots && now_ns() < end)
					sum += (unsigned char)map[order[k++] * stride];
				work_sink ^= sum;
				printf("fault touched %zu of %zu\n", k, slots);
				break;
			}
			case INJ_CACHE: {
				/* --mb MB written to a second file from a buffer faulted in before frame 0: new page
				 * cache pages charged to the cgroup, without a user page fault per page. */
				for (long k = 0; k < o.mb; k++)
					if (write(fd2, cache_buf, 1 << 20) != 1 << 20) {
						fprintf(stderr, "hitchgame: write %s: %s\n", path2, strerror(errno));
						break;
					}
				break;
			}
			case INJ_ALLOC: {
				/* 2 MB pages, as big-buffer allocators ask for them: each fault charges 2 MB at once,
				 * and the 4 KB fault's own cost (~17 us here, where page-table writes trap to the
				 * hypervisor) does not bury the reclaim this scenario is about. */
				size_t n = (size_t)o.mb << 20;
				char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (p == MAP_FAILED) {
					fprintf(stderr, "hitchgame: mmap %ld MB: %s\n", o.mb, strerror(errno));
					break;
				}
				madvise(p, n, MADV_HUGEPAGE);
				for (size_t k = 0; k < n; k += 4096)
					((volatile char *)p)[k] = 1;
				munmap(p, n);
				break;
			}
			}
		}
		if (write(marker, e, (size_t)el) < 0 && errno != EBADF)
			return 1;
		t += period;
		uint64_t now = now_ns();
		if (t < now)
			t = now; /* a late frame: the next starts now, then the pace resumes */
	}
	if (o.inject == INJ_MUTEX)
		pthread_join(holder, NULL);

	long longest = 0;
	uint64_t *len = malloc((size_t)frames * sizeof(*len));
	if (!len)
		return 1;
	for (long i = 0; i < frames; i++) {
		len[i] = starts[i + 1] - starts[i];
		if (len[i] > len[longest])
			longest = i;
	}
	printf("inject %s frame %ld start %llu end %llu ms %.3f\n", inject_names[o.inject], o.at,
	       (unsigned long long)starts[o.at], (unsigned long long)starts[o.at + 1], (double)len[o.at] / 1e6);
	printf("long frame %ld start %llu end %llu ms %.3f pid %d tid %d\n", longest,
	       (unsigned long long)starts[longest], (unsigned long long)starts[longest + 1], (double)len[longest] / 1e6,
	       (int)pid, (int)tid);
	long over = 0;
	for (long i = 0; i < frames; i++)
		if (len[i] > 50000000u) {
			over++;
			printf("hitch frame %ld start %llu end %llu ms %.3f\n", i, (unsigned long long)starts[i],
			       (unsigned long long)starts[i + 1], (double)len[i] / 1e6);
		}
	qsort(len, (size_t)frames, sizeof(*len), cmp_u64);
	printf("median_ms %.3f frames %ld over_50ms %ld\n", (double)len[frames / 2] / 1e6, frames, over);
	free(len);
	free(starts);
	free(order);
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0) {
		close(fd2);
		unlink(path2);
	}
	close(marker);
	if (o.linger) {
		printf("lingering\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}
