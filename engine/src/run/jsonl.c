/* run/jsonl.c: the JSONL event tap's bounded queue and writer thread (run/jsonl.h). */
#include "run/jsonl.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#endif

#include "hindsight/limits.h"
#include "run/live_lock.h"


struct hs_jsonl {
	char *path; /* NULL: fd was given (stdout) */
	int fd;
	const hs_msg *msg;
	hs_mutex mu;
	hs_cond cv;
	char *ring; /* [HS_JSONL_QUEUE_BYTES] */
	size_t head, len;
	uint64_t lines, dropped; /* key events written, and dropped (full queue, failed output, reader too slow) */
	bool in_record;          /* the line at the head is a record (its RECORD_MARK was passed), not a key event */
	bool stop;
	uint64_t deadline_ms; /* set with stop */
	bool open_failed_said;
	hs_thread thread;
	bool running;
};

static uint64_t mono_ms(void)
{
#ifdef _WIN32
	return GetTickCount64();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
#endif
}

/* A record line (hs_jsonl_push_record) is queued after this byte, which is never written: the writer counts it,
 * so the key events written are told apart from the records (a JSON text holds no raw control character). */
#define RECORD_MARK '\x1e'

/* Counts the key-event lines that end in p[0..n), written or dropped; a record's
 * line (after its RECORD_MARK) is not a key event, so it counts in neither (it
 * once did in the drops, and written + dropped exceeded the key events seen). */
static void account(hs_jsonl *j, const char *p, size_t n, bool written)
{
	const char *end = p + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *stop = nl ? nl : end;
		if (!j->in_record && memchr(p, RECORD_MARK, (size_t)(stop - p)))
			j->in_record = true;
		if (!nl)
			break;
		if (!j->in_record)
			(*(written ? &j->lines : &j->dropped))++;
		j->in_record = false;
		p = nl + 1;
	}
}

/* Opens the output; false while it cannot (a FIFO with no reader yet). */
static bool open_output(hs_jsonl *j)
{
	if (j->fd >= 0)
		return true;
#ifdef _WIN32
	j->fd = _open(j->path, _O_WRONLY | _O_CREAT | _O_TRUNC | _O_BINARY, _S_IREAD | _S_IWRITE);
#else
	/* Non-blocking: a FIFO without a reader says ENXIO instead of waiting
	 * (retried), and a slow one EAGAIN (polled) so the end is never missed. */
	j->fd = open(j->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0600);
#endif
	if (j->fd < 0 && errno != ENXIO && !j->open_failed_said) {
		hs_msg_say(j->msg, HS_MSG_WARN, "run", "--events-jsonl: cannot open %s: %s; its lines are dropped",
			   j->path, strerror(errno));
		j->open_failed_said = true;
	}
	return j->fd >= 0;
}

/* Writes some of p; bytes written, 0 when the reader is not ready, -1 on an error. */
static long write_some(hs_jsonl *j, const char *p, size_t n)
{
#ifdef _WIN32
	int w = _write(j->fd, p, n > 65536 ? 65536u : (unsigned)n);
	return w < 0 ? -1 : w;
#else
	struct pollfd pf = {.fd = j->fd, .events = POLLOUT};
	if (poll(&pf, 1, HS_JSONL_POLL_MS) <= 0)
		return 0;
	ssize_t w = write(j->fd, p, n);
	if (w < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	return (long)w;
#endif
}

static HS_THREAD_MAIN(writer_main, arg)
{
	hs_jsonl *j = arg;
	bool broken = false;
	hs_mutex_lock(&j->mu);
	for (;;) {
		if (j->stop && (!j->len || broken || mono_ms() >= j->deadline_ms))
			break;
		if (!j->len || (!j->path && j->fd < 0)) {
			hs_cond_wait_ms(&j->cv, &j->mu, HS_JSONL_POLL_MS);
			continue;
		}
		/* The oldest contiguous piece, written without the lock held, up to a record's mark. */
		size_t n = j->len, room = HS_JSONL_QUEUE_BYTES - j->head;
		if (n > room)
			n = room;
		const char *p = j->ring + j->head;
		if (*p == RECORD_MARK) {
			j->in_record = true;
			j->head = (j->head + 1) % HS_JSONL_QUEUE_BYTES;
			j->len--;
			continue;
		}
		const char *mark = memchr(p, RECORD_MARK, n);
		if (mark)
			n = (size_t)(mark - p);
		hs_mutex_unlock(&j->mu);
		long w = 0;
		if (!broken && open_output(j)) {
			w = write_some(j, p, n);
			if (w < 0) {
				/* The reader went away (EPIPE) or the disk failed: count
				 * the rest as dropped instead of retrying forever. */
				hs_msg_say(j->msg, HS_MSG_WARN, "run", "--events-jsonl: writing failed: %s; dropping lines",
					   strerror(errno));
				broken = true;
			}
		}
		hs_mutex_lock(&j->mu);
		if (broken) {
			account(j, j->ring + j->head, n, false);
			w = (long)n;
		} else if (w > 0) {
			account(j, p, (size_t)w, true);
		} else if (j->fd < 0) {
			hs_cond_wait_ms(&j->cv, &j->mu, HS_JSONL_POLL_MS); /* no reader yet */
		}
		j->head = (j->head + (size_t)w) % HS_JSONL_QUEUE_BYTES;
		j->len -= (size_t)w;
	}
	/* What the reader did not take in time. */
	size_t left = j->len, first = HS_JSONL_QUEUE_BYTES - j->head;
	account(j, j->ring + j->head, left <= first ? left : first, false);
	if (left > first)
		account(j, j->ring, left - first, false);
	j->len = 0;
	hs_mutex_unlock(&j->mu);
	return HS_THREAD_DONE;
}

hs_status hs_jsonl_open(const char *path, const hs_msg *msg, hs_jsonl **out)
{
	hs_jsonl *j = calloc(1, sizeof *j);
	*out = NULL;
	if (!j || !(j->ring = malloc(HS_JSONL_QUEUE_BYTES)))
		goto nomem;
	j->msg = msg;
	j->fd = -1;
	if (!strcmp(path, "-")) {
		j->fd = dup(1);
		if (j->fd < 0) {
			hs_msg_say(msg, HS_MSG_ERROR, "run", "--events-jsonl -: %s", strerror(errno));
			free(j->ring);
			free(j);
			return HS_EIO;
		}
#ifndef _WIN32
		/* A pipe to a slow reader must not hold the writer at the end; a
		 * terminal is left as it is (its mode is shared with the shell). */
		struct stat st;
		if (!fstat(j->fd, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
			fcntl(j->fd, F_SETFL, fcntl(j->fd, F_GETFL) | O_NONBLOCK);
		fcntl(j->fd, F_SETFD, FD_CLOEXEC);
#endif
	} else if (!(j->path = strdup(path))) {
		goto nomem;
	}
	j->running = hs_worker_start(&j->mu, &j->cv, &j->thread, writer_main, j);
	if (!j->running) {
		hs_msg_say(msg, HS_MSG_ERROR, "run", "--events-jsonl: cannot start the writer thread");
		if (j->fd >= 0)
			close(j->fd);
		free(j->path);
		free(j->ring);
		free(j);
		return HS_EIO;
	}
	*out = j;
	return HS_OK;
nomem:
	if (j)
		free(j->ring);
	free(j);
	return HS_ENOMEM;
}

/* Copies len bytes into the queue at its tail (the caller holds the lock and checked the room). */
static void put(hs_jsonl *j, const char *p, size_t len)
{
	size_t tail = (j->head + j->len) % HS_JSONL_QUEUE_BYTES, first = HS_JSONL_QUEUE_BYTES - tail;
	if (len <= first) {
		memcpy(j->ring + tail, p, len);
	} else {
		memcpy(j->ring + tail, p, first);
		memcpy(j->ring, p + first, len - first);
	}
	j->len += len;
}

static void push(hs_jsonl *j, const char *line, size_t len, bool record)
{
	hs_mutex_lock(&j->mu);
	if (j->stop || len + record > HS_JSONL_QUEUE_BYTES - j->len) {
		j->dropped += !record; /* key events only, as written counts them */
	} else {
		if (record)
			put(j, (const char[]){RECORD_MARK}, 1);
		put(j, line, len);
		hs_cond_signal(&j->cv);
	}
	hs_mutex_unlock(&j->mu);
}

void hs_jsonl_push(hs_jsonl *j, const char *line, size_t len)
{
	push(j, line, len, false);
}

void hs_jsonl_push_record(hs_jsonl *j, const char *line, size_t len)
{
	push(j, line, len, true);
}

void hs_jsonl_counts(hs_jsonl *j, uint64_t *lines, uint64_t *dropped)
{
	hs_mutex_lock(&j->mu);
	*lines = j->lines;
	*dropped = j->dropped;
	hs_mutex_unlock(&j->mu);
}

void hs_jsonl_close(hs_jsonl *j, uint64_t *lines, uint64_t *dropped)
{
	if (!j)
		return;
	hs_mutex_lock(&j->mu);
	j->stop = true;
	j->deadline_ms = mono_ms() + HS_JSONL_DRAIN_MS;
	hs_cond_signal(&j->cv);
	hs_mutex_unlock(&j->mu);
	/* On Windows a blocking write to a pipe nobody reads would hold the thread: wait for
	 * it a little longer than the drain, then leave it to the process's end. */
	bool joined = hs_thread_join(j->thread, HS_JSONL_DRAIN_MS + 1000);
	hs_jsonl_counts(j, lines, dropped);
	if (!joined) {
		hs_msg_say(j->msg, HS_MSG_WARN, "run", "--events-jsonl: the reader did not take the last lines");
		return; /* the thread still uses j */
	}
	if (j->fd >= 0)
		close(j->fd);
	hs_mutex_destroy(&j->mu);
	hs_cond_destroy(&j->cv);
	free(j->path);
	free(j->ring);
	free(j);
}
