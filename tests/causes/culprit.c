/* culprit.c: the outside culprits of the cause scenarios (CPU hogs, a SIGSTOP sender, a fork storm, a UDP flood), each starting on time. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: culprit MODE (--at NS|+MS | --start-fifo PATH [--offset-ms D]) --ms MS [options]
 *   the start: CLOCK_MONOTONIC ns, ms from now, or the ns the stand-in game
 *   writes to the FIFO (hitchgame --signal-fifo) plus D ms (may be negative)
 *   spin  [--cpu N] [--procs K] [--fifo PRIO] [--nice N]
 *         K processes (this one and K-1 forks, all under this program's name)
 *         spin on CPU N from NS for MS (wall time), SCHED_FIFO PRIO if given
 *   stop  --pid P          SIGSTOP to P at NS, SIGCONT MS later
 *   forks [--cpu N] [--procs K] [--exec PATH [--child-ms C]] [--inflight I]
 *         from NS for MS, K spawners fork children on CPU N that exec PATH
 *         (default /bin/true), each with at most I (default 16) unreaped;
 *         with --child-ms, PATH is a copy of this program run as
 *         "PATH work --ms C": a program that starts and works C ms
 *   work  --ms MS          MS of CPU time (this thread's), then exit: what a
 *         newly started program does first (no start time: it runs at once)
 *   udp   [--cpu N] [--procs K] [--fifo PRIO] --dst IPV4 [--port P] [--size B]
 *         [--burst N | --duty PCT]
 *         from NS for MS, send B-byte UDP datagrams (default 64) to IPV4:P
 *         (default 9), N (default 64) per sendmmsg as fast as it goes, or
 *         (--duty) in bursts that keep the receiving CPU's softirq busy PCT %
 *         of the time, from K processes
 * --linger: once done, every process stays (paused) until it is killed, as a
 * culprit on a real machine goes on after the moment: the recorder's snapshot,
 * taken seconds later, still finds it (tasks.json: its exact policy).
 * The program is copied to a random name per run by the scenarios, so its
 * comm is the name a report must find. Everything it prints is one line per
 * fact: "culprit pid P tid T name N policy fifo|other prio P" (each process),
 * "window START END" (ns: when it acts), then the mode's counts ("forks N",
 * "sent N"), and "done" when all its processes are (with --linger: before
 * they pause).
 */

struct opts {
	const char *mode, *exec, *dst, *start_fifo;
	uint64_t at;
	double offset_ms;
	double ms, child_ms;
	int cpu, procs, fifo, nice, port, size, inflight, burst, duty, linger;
	pid_t pid;
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

static int pin(int cpu)
{
	if (cpu < 0)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		fprintf(stderr, "culprit: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static void say(const struct opts *o)
{
	char comm[32] = "?";
	FILE *f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	printf("culprit pid %d tid %d name %s policy %s prio %d cpu %d\n", (int)getpid(), (int)getpid(), comm,
	       o->fifo ? "fifo" : "other", o->fifo, o->cpu);
	fflush(stdout);
}

/* --nice and --fifo PRIO (SCHED_FIFO). */
static int set_policy(const struct opts *o)
{
	if (o->nice && setpriority(PRIO_PROCESS, 0, o->nice) != 0) {
		fprintf(stderr, "culprit: setpriority: %s\n", strerror(errno));
		return -1;
	}
	if (o->fifo) {
		struct sched_param sp = {.sched_priority = o->fifo};
		if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
			fprintf(stderr, "culprit: SCHED_FIFO %d: %s\n", o->fifo, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The start time: --at, or (--start-fifo) the time the game writes to the FIFO plus --offset-ms. The first
 * process reads it and hands it to its forks through a shared page (they poll it each millisecond until then);
 * the forks count themselves done there too. */
struct shared {
	volatile uint64_t at;
	uint32_t done;
};
static struct shared *shared;
#define shared_at (&shared->at)
static int is_fork, lingering;

static uint64_t start_time(const struct opts *o)
{
	if (!o->start_fifo)
		*shared_at = o->at;
	else if (!is_fork) {
		char line[64] = "";
		FILE *f = fopen(o->start_fifo, "r"); /* blocks until the game opens it to write */
		if (!f || !fgets(line, sizeof(line), f)) {
			fprintf(stderr, "culprit: no start time from %s: %s\n", o->start_fifo, strerror(errno));
			exit(1);
		}
		fclose(f);
		*shared_at = strtoull(line, NULL, 10) + (uint64_t)(int64_t)(o->offset_ms * 1e6);
	}
	while (!*shared_at)
		sleep_until(now_ns() + 1000000);
	if (!is_fork) {
		printf("window %llu %llu\n", (unsigned long long)*shared_at,
		       (unsigned long long)(*shared_at + (uint64_t)(o->ms * 1e6)));
		fflush(stdout);
	}
	return *shared_at;
}

/* --procs K: this process and K-1 forks of it (same name, same pin and policy) run the mode; the first reaps them. */
static int children;
static void fan_out(int procs)
{
	for (int k = 1; k < procs; k++) {
		pid_t c = fork();
		if (c < 0) {
			fprintf(stderr, "culprit: fork: %s\n", strerror(errno));
			return;
		}
		if (c == 0) {
			children = 0;
			is_fork = 1;
			return;
		}
		children++;
	}
}

/* The first process waits for its forks: reaped, or (--linger, they stay) counted done. */
static void reap_fanned(void)
{
	if (is_fork) {
		__atomic_fetch_add(&shared->done, 1, __ATOMIC_SEQ_CST);
		return;
	}
	if (lingering) {
		while (__atomic_load_n(&shared->done, __ATOMIC_SEQ_CST) < (uint32_t)children)
			sleep_until(now_ns() + 1000000);
		return;
	}
	for (; children > 0; children--)
		waitpid(-1, NULL, 0);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* work: a started program's first MS of CPU time. */
static int run_work(const struct opts *o)
{
	uint64_t end = cpu_ns() + (uint64_t)(o->ms * 1e6);
	volatile uint64_t x = 0;
	while (cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005u + 1;
	return 0;
}

static int run_spin(const struct opts *o)
{
	if (pin(o->cpu) != 0 || set_policy(o) != 0)
		return 1;
	fan_out(o->procs);
	say(o);
	uint64_t at = start_time(o), end = at + (uint64_t)(o->ms * 1e6);
	sleep_until(at);
	volatile uint64_t x = 0;
	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005u + 1;
	reap_fanned();
	return 0;
}

static int run_stop(const struct opts *o)
{
	if (o->pid <= 0) {
		fprintf(stderr, "culprit: stop needs --pid\n");
		return 2;
	}
	say(o);
	uint64_t at = start_time(o);
	sleep_until(at);
	if (kill(o->pid, SIGSTOP) != 0) {
		fprintf(stderr, "culprit: SIGSTOP %d: %s\n", (int)o->pid, strerror(errno));
		return 1;
	}
	sleep_until(at + (uint64_t)(o->ms * 1e6));
	if (kill(o->pid, SIGCONT) != 0) {
		fprintf(stderr, "culprit: SIGCONT %d: %s\n", (int)o->pid, strerror(errno));
		return 1;
	}
	return 0;
}

static int run_forks(const struct opts *o)
{
	if (pin(o->cpu) != 0)
		return 1;
	fan_out(o->procs);
	say(o);
	uint64_t at = start_time(o), end = at + (uint64_t)(o->ms * 1e6);
	sleep_until(at);
	long forks = 0, failed = 0;
	int inflight = 0;
	char ms[32];
	snprintf(ms, sizeof(ms), "%g", o->child_ms);
	char *const plain[] = {(char *)o->exec, NULL}, *const work[] = {(char *)o->exec, "work", "--ms", ms, NULL};
	char *const *argv = o->child_ms > 0 ? work : plain;
	while (now_ns() < end) {
		while (inflight > 0 && waitpid(-1, NULL, inflight >= o->inflight ? 0 : WNOHANG) > 0)
			inflight--;
		pid_t c = fork();
		if (c == 0) {
			execv(o->exec, (char *const *)argv);
			_exit(127);
		}
		if (c < 0) {
			failed++;
			continue;
		}
		forks++;
		inflight++;
	}
	while (inflight > 0 && wait(NULL) > 0)
		inflight--;
	printf("forks %ld failed %ld\n", forks, failed);
	fflush(stdout);
	reap_fanned();
	return 0;
}

static int run_udp(const struct opts *o)
{
	if (!o->dst || o->size < 1 || o->size > 1400 || o->burst < 1 || o->burst > 64 || o->duty < 0 || o->duty > 99) {
		fprintf(stderr,
			"culprit: udp needs --dst, a --size of 1..1400, a --burst of 1..64, a --duty of 0..99\n");
		return 2;
	}
	if (pin(o->cpu) != 0 || set_policy(o) != 0)
		return 1;
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->port)};
	if (inet_pton(AF_INET, o->dst, &to.sin_addr) != 1) {
		fprintf(stderr, "culprit: bad --dst %s\n", o->dst);
		return 2;
	}
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		fprintf(stderr, "culprit: socket: %s\n", strerror(errno));
		return 1;
	}
	enum { BATCH = 64 };
	static char payload[1400];
	struct iovec iov[BATCH];
	struct mmsghdr msg[BATCH];
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){.iov_base = payload, .iov_len = (size_t)o->size};
		msg[i] = (struct mmsghdr){
			.msg_hdr = {.msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov[i], .msg_iovlen = 1}};
	}
	fan_out(o->procs);
	say(o);
	uint64_t at = start_time(o), end = at + (uint64_t)(o->ms * 1e6);
	sleep_until(at);
	long sent = 0, errors = 0, bursts = 0;
	uint64_t busy = 0;
	int burst = o->duty ? 4 : o->burst;
	while (now_ns() < end) {
		uint64_t t0 = now_ns();
		int n = sendmmsg(s, msg, (unsigned)burst, 0);
		if (n > 0)
			sent += n;
		else
			errors++;
		if (!o->duty)
			continue;
		/* --duty: the receiving CPU busy with this burst for duty % of the time, in the softirq that
		 * follows the interrupt, never so long that the kernel hands the rest to ksoftirqd (a thread
		 * that would get a fair share, no more). The burst is done when the receiver has freed its
		 * datagrams (SIOCOUTQ 0); bursts of ~1 ms, whatever a datagram costs there. */
		int q = 1;
		while (ioctl(s, SIOCOUTQ, &q) == 0 && q > 0 && now_ns() < end)
			;
		uint64_t took = now_ns() - t0;
		busy += took;
		bursts++;
		if (took < 500000 && burst < BATCH)
			burst *= 2;
		else if (took > 1500000 && burst > 1)
			burst /= 2;
		sleep_until(now_ns() + took * (uint64_t)(100 - o->duty) / (uint64_t)o->duty);
	}
	printf("sent %ld errors %ld\n", sent, errors);
	if (bursts)
		printf("bursts %ld of %d at the end, %.0f us each on average\n", bursts, burst,
		       (double)busy / (double)bursts / 1e3);
	fflush(stdout);
	reap_fanned();
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"at", 1, 0, 'a'},
					   {"ms", 1, 0, 'm'},
					   {"cpu", 1, 0, 'c'},
					   {"procs", 1, 0, 'k'},
					   {"fifo", 1, 0, 'f'},
					   {"nice", 1, 0, 'n'},
					   {"pid", 1, 0, 'p'},
					   {"exec", 1, 0, 'e'},
					   {"dst", 1, 0, 'd'},
					   {"port", 1, 0, 'P'},
					   {"size", 1, 0, 's'},
					   {"inflight", 1, 0, 'i'},
					   {"start-fifo", 1, 0, 'F'},
					   {"offset-ms", 1, 0, 'o'},
					   {"burst", 1, 0, 'b'},
					   {"duty", 1, 0, 'u'},
					   {"child-ms", 1, 0, 'C'},
					   {"linger", 0, 0, 'L'},
					   {0, 0, 0, 0}};
	struct opts o = {
		.cpu = -1, .procs = 1, .port = 9, .size = 64, .inflight = 16, .burst = 64, .exec = "/bin/true"};
	if (argc < 2) {
		fprintf(stderr, "usage: culprit spin|stop|forks|udp|work --at NS|--start-fifo PATH --ms MS [options]\n");
		return 2;
	}
	o.mode = argv[1];
	optind = 2;
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a': /* NS, or +MS from now */
			o.at = optarg[0] == '+' ? now_ns() + (uint64_t)(atof(optarg + 1) * 1e6)
						: strtoull(optarg, NULL, 10);
			break;
		case 'm': o.ms = atof(optarg); break;
		case 'c': o.cpu = atoi(optarg); break;
		case 'k': o.procs = atoi(optarg); break;
		case 'f': o.fifo = atoi(optarg); break;
		case 'n': o.nice = atoi(optarg); break;
		case 'p': o.pid = (pid_t)atoi(optarg); break;
		case 'e': o.exec = optarg; break;
		case 'd': o.dst = optarg; break;
		case 'P': o.port = atoi(optarg); break;
		case 's': o.size = atoi(optarg); break;
		case 'i': o.inflight = atoi(optarg); break;
		case 'F': o.start_fifo = optarg; break;
		case 'o': o.offset_ms = atof(optarg); break;
		case 'b': o.burst = atoi(optarg); break;
		case 'u': o.duty = atoi(optarg); break;
		case 'C': o.child_ms = atof(optarg); break;
		case 'L': o.linger = 1; break;
		default: return 2;
		}
	}
	if (!strcmp(o.mode, "work") && optind == argc && o.ms > 0)
		return run_work(&o);
	if (optind != argc || (o.at == 0) == !o.start_fifo || o.ms <= 0 || o.procs < 1 || o.inflight < 1 ||
	    o.child_ms < 0) {
		fprintf(stderr,
			"culprit: --at or --start-fifo, and --ms (positive) are required; --procs, --inflight >= 1\n");
		return 2;
	}
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 1;
	lingering = o.linger;
	int rc;
	if (!strcmp(o.mode, "spin"))
		rc = run_spin(&o);
	else if (!strcmp(o.mode, "stop"))
		rc = run_stop(&o);
	else if (!strcmp(o.mode, "forks"))
		rc = run_forks(&o);
	else if (!strcmp(o.mode, "udp"))
		rc = run_udp(&o);
	else {
		fprintf(stderr, "culprit: unknown mode %s\n", o.mode);
		return 2;
	}
	if (rc == 0 && !is_fork) {
		printf("done\n");
		fflush(stdout);
	}
	if (rc == 0 && o.linger)
		for (;;)
			pause();
	return rc;
}
