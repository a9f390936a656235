/* run/os_posix.c: the recording mode's OS layer on Linux: root check, signals, the main.log tee thread, files and clocks. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hindsight/compat.h"
#include "hindsight/exitcodes.h"
#include "run/live_lock.h"
#include "run/os.h"

int hs_os_check_privilege(const hs_msg *msg)
{
	if (geteuid() == 0)
		return 0;
	hs_msg_say(msg, HS_MSG_ERROR, "run", "recording needs root: tracefs and its rings are root-only.");
	hs_msg_say(msg, HS_MSG_ERROR, "run",
		   "run it as root (sudo ./run.sh, or sudo engine --rules ...); `engine --plan` works without root.");
	return HS_EXIT_NOT_PRIVILEGED;
}

void hs_os_private_files(void)
{
	umask(077);
}

int hs_os_mkdir(const char *path)
{
	return mkdir(path, 0700);
}

int hs_os_rmdir(const char *path)
{
	return rmdir(path);
}

int hs_os_sync(FILE *f)
{
	return fflush(f) || fsync(fileno(f)) ? -1 : 0;
}

uint64_t hs_os_cpu_time_us(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec +
	       (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
}

void hs_os_localtime(time_t t, struct tm *out)
{
	localtime_r(&t, out);
}

long hs_os_utc_offset_min(time_t t)
{
	struct tm tm;
	localtime_r(&t, &tm);
	return tm.tm_gmtoff / 60;
}

uint64_t hs_os_monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t hs_os_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- signals: the first stops the run; later ones only say what is going on ---- */

static volatile sig_atomic_t g_signals;
static volatile int g_snap; /* SIGUSR1: a snapshot, recording goes on */
static volatile int g_stop;
static const char *volatile g_busy; /* static text, read by the handler */
static const char *volatile g_busy_prefix;

static void on_signal(int sig)
{
	(void)sig;
	g_signals++;
	g_stop = (int)g_signals;
	const char *busy = g_busy, *prefix = g_busy_prefix;
	if (g_signals > 1 && busy) {
		/* write() is async-signal-safe; stdio (and so a message sink) is not. */
		static const char pre[] = "still ";
		static const char post[] = "; please wait, the files would be left incomplete otherwise\n";
		if (write(STDERR_FILENO, "\n", 1) < 0 ||
		    (prefix &&
		     (write(STDERR_FILENO, prefix, strlen(prefix)) < 0 || write(STDERR_FILENO, ": ", 2) < 0)) ||
		    write(STDERR_FILENO, pre, sizeof(pre) - 1) < 0 || write(STDERR_FILENO, busy, strlen(busy)) < 0 ||
		    write(STDERR_FILENO, post, sizeof(post) - 1) < 0)
			return;
	}
}

static void on_snapshot_signal(int sig)
{
	(void)sig;
	g_snap++;
}

void hs_os_stop_handlers_install(void)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction su = {.sa_handler = on_snapshot_signal, .sa_flags = SA_RESTART};
	sigemptyset(&su.sa_mask);
	sigaction(SIGUSR1, &su, NULL);
}

volatile int *hs_os_snapshot_requests(void)
{
	return &g_snap;
}

const char *hs_os_snapshot_hint(void)
{
	return "kill -USR1";
}

volatile int *hs_os_stop_requests(void)
{
	return &g_stop;
}

void hs_os_set_busy(const char *text)
{
	g_busy = text;
}

void hs_os_set_busy_prefix(const char *prefix)
{
	g_busy_prefix = prefix;
}

void hs_os_run_finished(void)
{
}

const char *hs_os_stop_hint(void)
{
	return "Ctrl+C (SIGINT) or SIGTERM";
}

/* ---- main.log: a thread copies stdout and stderr to the terminal and the log ---- */

typedef struct {
	int pipe_out[2], pipe_err[2];
	int orig_out, orig_err, log;
	hs_thread thread;
	bool running;
} log_tee;

static log_tee g_tee;

static void *tee_main(void *arg)
{
	log_tee *t = arg;
	struct pollfd p[2] = {{.fd = t->pipe_out[0], .events = POLLIN}, {.fd = t->pipe_err[0], .events = POLLIN}};
	int open_ends = 2;
	char buf[8192];
	while (open_ends > 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				p[i].fd = -1;
				open_ends--;
				continue;
			}
			hs_write_all(i ? t->orig_err : t->orig_out, buf, (size_t)n, HS_AT_POS);
			hs_write_all(t->log, buf, (size_t)n, HS_AT_POS);
		}
	}
	return NULL;
}

bool hs_os_tee_start(const char *log_path)
{
	log_tee *t = &g_tee;
	memset(t, 0, sizeof(*t));
	t->log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (t->log < 0)
		return false;
	if (pipe(t->pipe_out) || pipe(t->pipe_err))
		return false;
	fflush(stdout);
	fflush(stderr);
	t->orig_out = dup(STDOUT_FILENO);
	t->orig_err = dup(STDERR_FILENO);
	if (t->orig_out < 0 || t->orig_err < 0 || dup2(t->pipe_out[1], STDOUT_FILENO) < 0 ||
	    dup2(t->pipe_err[1], STDERR_FILENO) < 0)
		return false;
	close(t->pipe_out[1]);
	close(t->pipe_err[1]);
	/* Line-buffered so the log and the terminal see lines as they happen. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	setvbuf(stderr, NULL, _IOLBF, 0);
	t->running = hs_thread_start(&t->thread, tee_main, t);
	return t->running;
}

void hs_os_tee_stop(void)
{
	log_tee *t = &g_tee;
	if (!t->running)
		return;
	fflush(stdout);
	fflush(stderr);
	dup2(t->orig_out, STDOUT_FILENO);
	dup2(t->orig_err, STDERR_FILENO);
	hs_thread_join(t->thread, HS_THREAD_FOREVER);
	close(t->pipe_out[0]);
	close(t->pipe_err[0]);
	close(t->orig_out);
	close(t->orig_err);
	close(t->log);
	t->running = false;
}
