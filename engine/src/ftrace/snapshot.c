/* ftrace/snapshot.c: a buffering session's snapshot: freeze the ring, drain and compress it per CPU, write a trace.dat, resume. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ftrace/backend_int.h"
#include "ftrace/ftrace.h"
#include "hindsight/limits.h"
#include "hindsight/vec.h"

/*
 * Where a full 256 MB ring's snapshot spent its time before (this 2-vCPU VM,
 * per 128 MB CPU, thread CPU time): reading the ring sub-buffer by
 * sub-buffer into a memfd 0.17 s with memory the VM had used lately and
 * 0.5 s or more with memory it had not (a page's first touch costs the
 * hypervisor a fault; a read and a write system call per 4 KB page), counting
 * its events with kbuffer 0.185 s, compressing at zstd level 1 0.22 s, and,
 * for the whole file, libtracecmd's headers 0.35-0.49 s (5 MB of
 * /proc/kallsyms read twice and compressed).
 * Now each CPU's thread moves its ring through a pipe with splice, 1 MB per
 * call, into a few reused 1 MB chunk buffers (HS_LINUX_SNAPSHOT_SLOTS), and
 * the chunks are compressed as they come and their events counted with
 * datz.c's own page walk (0.011 s): the raw ring never needs its size in
 * fresh memory, only the compressed data does (a tenth of it). Any CPU's
 * thread compresses any CPU's chunks, appended in each ring's order: equal
 * rings do not take equal time (in one run on this VM the two CPUs' threads
 * spent 0.187 and 0.139 s compressing 128.5 MB each), and the snapshot ends
 * with the slowest. The headers were written ahead of time (hs_dat_prep, dat.c). The
 * ring stays frozen until every CPU is drained; the thread of the last one
 * turns recording back on at once.
 * While the CPU threads work, this thread starts the file (the prepared
 * headers, the comms), and each CPU thread writes its compressed data into it
 * as soon as it is done, so what is left after the drain is the end of the
 * file and its one sync (0.1-0.35 s of the snapshot under load before, one
 * nice-19 thread writing 20-25 MB after the others were done; 0.015-0.04 s
 * now on a machine without other load). When the disk might not take the
 * whole ring, the file is written after the drain as before: the cut needs
 * every CPU's chunks.
 */

/* The ring is frozen until the last CPU is drained, no longer: that CPU's
 * thread turns recording back on, before its last chunks are compressed and
 * anything is written. */
typedef struct {
	struct tracefs_instance *inst;
	bool resume;      /* not a final snapshot */
	atomic_uint left; /* CPUs still being drained */
	atomic_bool resumed;
	double t_drained; /* s after the snapshot's start when the last CPU was */
} drain_state;

/* The file the CPU threads write into as each CPU is done (when the disk has
 * room for the whole ring: no cut is possible). */
enum { EARLY_PENDING, EARLY_OPEN, EARLY_OFF };
typedef struct {
	pthread_mutex_t mu;
	int state; /* EARLY_*: the file is being started, open, or not used */
	hs_dat_file *file;
	bool *waiting; /* [cpus]: done before the file was open: the thread that opens it writes it */
} early_file;

/* A chunk of one CPU's ring on its way: drained into `raw` by that CPU's
 * thread, compressed into `out` by whichever thread is free, appended to the
 * CPU's data in the ring's order. */
typedef struct {
	unsigned char *raw; /* HS_LINUX_DAT_CHUNK_PAGES sub-buffers, filled to `fill` */
	size_t fill;
	unsigned char *out; /* hs_datz_bound(raw's size) */
	hs_datz_chunk c;    /* out's index entry */
	hs_status st;       /* the compression's */
	/* Compressed into `out`, waiting for its turn to be appended (reset when
	 * taken). The rest is in its CPU's counters: chunks [put, taken) are
	 * being compressed or packed, [taken, pushed) drained and waiting,
	 * `pushed` being drained; other slots are free. */
	bool packed;
} slot;

typedef struct cpu_job cpu_job;

/* What the CPU threads share: the chunks drained and not yet compressed. One
 * lock for all (taken a few times per 1 MB chunk); nothing slow runs under it. */
typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t work; /* a chunk drained, or every ring empty: for threads with nothing to compress */
	pthread_cond_t room; /* a chunk appended (its slot free): for a CPU's thread with all its slots taken */
	cpu_job *jobs;
	unsigned cpus;
	unsigned draining; /* CPUs whose ring is not empty yet */
	unsigned idle;     /* threads waiting for a chunk to compress */
	size_t out_cap;    /* each slot's out */
} work;

/* One CPU: its ring, its chunks on their way, its compressed data; and the
 * thread that drains it, which compresses any CPU's chunks. */
struct cpu_job {
	hs_backend *b;
	session *s;
	unsigned cpu;
	bool helps;           /* a thread of its own: waits for the other CPUs' chunks once its ring is empty */
	bool zips;            /* its compressor is ready: it can compress any CPU's chunks */
	slot slots[HS_LINUX_SNAPSHOT_SLOTS]; /* chunk k in slots[k % HS_LINUX_SNAPSHOT_SLOTS] */
	slot *cur;            /* being drained into (this CPU's thread only) */
	uint64_t pushed, taken, put; /* chunks drained, handed to a compressor, appended (under work.mu) */
	bool appending;       /* a thread is appending this CPU's chunks (under work.mu) */
	bool ring_done, finished; /* ring empty; every chunk appended and the CPU written early (under work.mu) */
	uint64_t bytes;       /* drained (whole sub-buffers) */
	hs_datz z;            /* the CPU's data; its compressor is this CPU's thread's, for any CPU's chunks */
	int err;              /* errno of the drain */
	hs_status zst;        /* the compression's (under work.mu until the threads are joined) */
	double t0;            /* the snapshot's start (hs_ftrace_now_s) */
	double t_ring;        /* s after t0 when its ring was empty */
	double t_done;        /* s after t0 when this CPU was done (compressed, appended, written early) */
	double cpu_read, cpu_zip; /* this thread's CPU s reading the ring and compressing (any CPU's chunks) */
	double cpu_all, t_wait;   /* this thread's CPU s in all; s it waited for the others */
	unsigned zipped, zipped_other; /* chunks this thread compressed, and of them other CPUs' */
	drain_state *ds;
	early_file *ef;       /* NULL: written after the drain */
	work *w;
	unsigned char *mem;   /* the slots' buffers */
};

/* Snapshot work runs beside the game it records: the lowest CPU weight of the
 * normal class (not SCHED_IDLE, which starves for seconds under load and keeps
 * the ring frozen that long) and the lowest best-effort I/O priority, per
 * thread. Not the idle I/O class: mq-deadline (this VM's disk scheduler)
 * serves it after every queued best-effort request, for up to its
 * prio_aging_expire (10 s by default), so the snapshot's one fdatasync waited
 * behind every other writer of the machine. */
static void be_gentle(void)
{
	/* struct sched_attr, version 0 (48 bytes, include/uapi/linux/sched/types.h): nice 19 and the shortest slice
	 * (HS_LINUX_SNAPSHOT_SLICE_NS), so a waking game takes the CPU back at once; a kernel before 6.12 ignores the
	 * slice of a normal task, and one that refuses the call still gets nice 19 */
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
	} attr = {.size = 48, .policy = 0 /* SCHED_OTHER */, .nice = 19, .runtime = HS_LINUX_SNAPSHOT_SLICE_NS};
	_Static_assert(sizeof attr == 48, "struct sched_attr version 0 is 48 bytes");
	if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	else
		sched_yield(); /* the slice it runs on now was set when it was picked (a new thread's: the default) */
	/* ioprio_set(IOPRIO_WHO_PROCESS, this thread, IOPRIO_CLASS_BE << 13 | 7) */
	syscall(SYS_ioprio_set, 1, 0, 2 << 13 | 7);
}

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* With work.mu held: waits on `cv` for the other threads, counting the time. */
static void wait_others(cpu_job *self, pthread_cond_t *cv)
{
	double t = hs_ftrace_now_s();
	pthread_cond_wait(cv, &self->w->mu);
	self->t_wait += hs_ftrace_now_s() - t;
}

/* CPU j's ring is empty: the last one resumes recording (a CPU that failed
 * too: recording goes on whatever happened to the snapshot). */
static void drained(cpu_job *j)
{
	drain_state *ds = j->ds;
	if (atomic_fetch_sub(&ds->left, 1) != 1)
		return;
	ds->t_drained = hs_ftrace_now_s() - j->t0;
	if (ds->resume && hs_tracefs_api_get()->trace_on(ds->inst) == 0)
		atomic_store(&ds->resumed, true);
}

/* CPU j's data into the early file; a failed write fails its hs_dat_close. */
static void put_early(cpu_job *j)
{
	hs_dat_put_cpu(j->ef->file, j->cpu, &j->z);
}

/* A CPU done: into the file now if it is open, else left for the thread
 * that opens it. */
static void done_early(cpu_job *j)
{
	early_file *ef = j->ef;
	pthread_mutex_lock(&ef->mu);
	bool now = ef->state == EARLY_OPEN;
	if (ef->state == EARLY_PENDING)
		ef->waiting[j->cpu] = true;
	pthread_mutex_unlock(&ef->mu);
	if (now)
		put_early(j);
}

/* With work.mu held (released meanwhile): when CPU j's ring is empty and its
 * last chunk appended, it is done, and the thread that sees it so writes it
 * into the early file. */
static void finish(cpu_job *j)
{
	if (j->finished || !j->ring_done || j->put != j->pushed || j->appending)
		return;
	j->finished = true;
	bool write = !j->err && j->zst == HS_OK && j->ef;
	pthread_mutex_unlock(&j->w->mu);
	if (write)
		done_early(j);
	j->t_done = hs_ftrace_now_s() - j->t0;
	pthread_mutex_lock(&j->w->mu);
}

/* With work.mu held (released meanwhile): appends CPU j's compressed chunks
 * that are next in the ring's order, one thread at a time per CPU. */
static void append(cpu_job *j)
{
	work *w = j->w;
	if (j->appending)
		return; /* that thread appends this one too when it is next */
	j->appending = true;
	for (;;) {
		slot *sl = &j->slots[j->put % HS_LINUX_SNAPSHOT_SLOTS];
		if (j->put == j->taken || !sl->packed)
			break;
		pthread_mutex_unlock(&w->mu);
		hs_status st = sl->st == HS_OK ? hs_datz_put(&j->z, sl->out, &sl->c) : sl->st;
		pthread_mutex_lock(&w->mu);
		if (st != HS_OK && j->zst == HS_OK)
			j->zst = st;
		j->put++; /* the slot is free */
		pthread_cond_broadcast(&w->room);
	}
	j->appending = false;
	finish(j);
}

/* With work.mu held (released meanwhile): compresses CPU j's oldest drained
 * chunk with self's compressor, then appends what is in order. */
static void zip_one(cpu_job *self, cpu_job *j)
{
	work *w = self->w;
	uint64_t seq = j->taken++;
	slot *sl = &j->slots[seq % HS_LINUX_SNAPSHOT_SLOTS];
	/* Its own CPU's next chunk in order (the usual case) goes straight into
	 * the CPU's data: no copy. */
	bool direct = j == self && seq == j->put && !j->appending;
	sl->packed = false;
	j->appending |= direct;
	pthread_mutex_unlock(&w->mu);
	double c0 = thread_cpu_s();
	if (direct)
		sl->st = hs_datz_add(&j->z, sl->raw, sl->fill, self->b->subbuf);
	else
		sl->st = hs_datz_pack(&self->z, sl->raw, sl->fill, self->b->subbuf, sl->out, w->out_cap, &sl->c);
	self->cpu_zip += thread_cpu_s() - c0;
	self->zipped++;
	self->zipped_other += j != self;
	pthread_mutex_lock(&w->mu);
	if (direct) {
		if (sl->st != HS_OK && j->zst == HS_OK)
			j->zst = sl->st;
		j->put++;
		j->appending = false;
		pthread_cond_broadcast(&w->room);
	} else {
		sl->packed = true;
	}
	append(j);
}

/* The chunk being drained is full (or, `last`, the ring is empty): it waits
 * for a compressor, and the drain goes on into a free slot. A CPU's thread
 * drains on while another thread waits for chunks, else leaves it its newest
 * drained chunk and compresses the older ones itself, so the CPUs whose rings
 * compress slower (or whose CPU the host gives less) share their work with
 * the others.
 * Returns false when the CPU's compression failed: its drain stops. */
static bool chunk_done(cpu_job *j, bool last)
{
	work *w = j->w;
	slot *cur = j->cur;
	if (!last && cur->fill < j->b->subbuf * HS_LINUX_DAT_CHUNK_PAGES)
		return true;
	pthread_mutex_lock(&w->mu);
	if (cur->fill) {
		j->pushed++;
		pthread_cond_signal(&w->work); /* one chunk: one thread (not all of a many-CPU machine) */
	}
	if (last) {
		j->ring_done = true;
		if (!--w->draining)
			pthread_cond_broadcast(&w->work); /* nothing more comes: they all stop */
		finish(j); /* an empty ring */
	}
	while (!last && j->zst == HS_OK) {
		uint64_t waiting = j->pushed - j->taken;
		bool room = j->pushed - j->put < HS_LINUX_SNAPSHOT_SLOTS;
		if ((waiting >= 2 && !w->idle) || (waiting && !room))
			zip_one(j, j);
		else if (!room)
			wait_others(j, &w->room); /* its chunks are all in other threads' hands */
		else
			break;
	}
	bool ok = j->zst == HS_OK;
	if (!last) {
		j->cur = &j->slots[j->pushed % HS_LINUX_SNAPSHOT_SLOTS];
		j->cur->fill = 0;
	}
	pthread_mutex_unlock(&w->mu);
	return ok;
}

/* After its ring: compresses what is waiting, its own CPU's first, else the
 * CPU with the most waiting; a thread of its own waits for more while any
 * ring is still being drained. */
static void help(cpu_job *self)
{
	work *w = self->w;
	if (!self->zips)
		return;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		cpu_job *j = self->pushed > self->taken ? self : NULL;
		for (unsigned c = 0; !j && c < w->cpus; c++) {
			cpu_job *o = &w->jobs[c];
			if (o->pushed > o->taken && (!j || o->pushed - o->taken > j->pushed - j->taken))
				j = o;
		}
		if (j)
			zip_one(self, j);
		else if (w->draining && self->helps) {
			w->idle++;
			wait_others(self, &w->work);
			w->idle--;
		}
		else
			break;
	}
	pthread_mutex_unlock(&w->mu);
}

/* Whole sub-buffers through a pipe: splice moves up to a pipe's worth of full
 * pages per call (the kernel hands its pages to the pipe), and reads copy
 * them into the chunk. Returns false when splice cannot be used here (the
 * caller then reads sub-buffer by sub-buffer); stops at the partly filled
 * page, which splice never returns (EAGAIN). */
static bool drain_splice(cpu_job *j, int fd, bool *ok)
{
	int p[2];
	size_t size = j->b->subbuf * HS_LINUX_DAT_CHUNK_PAGES;
	if (j->b->subbuf != (size_t)getpagesize() || pipe2(p, O_CLOEXEC))
		return false;
	fcntl(p[1], F_SETPIPE_SZ, HS_LINUX_SNAPSHOT_PIPE_BYTES); /* the default 64 KB when refused */
	int psz = fcntl(p[1], F_GETPIPE_SZ);
	bool used = psz >= (int)j->b->subbuf;
	while (used && !j->err && *ok) {
		double c0 = thread_cpu_s();
		ssize_t n = splice(fd, NULL, p[1], NULL, (size_t)psz, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			/* Refused before any page moved: the read path takes it all. */
			if (!j->bytes && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
				used = false;
			else
				j->err = errno;
			break;
		}
		if (n == 0)
			break;
		for (ssize_t got = 0; got < n && !j->err && *ok;) {
			slot *cur = j->cur;
			size_t want = (size_t)(n - got) < size - cur->fill ? (size_t)(n - got) : size - cur->fill;
			if (want > HS_LINUX_SNAPSHOT_READ_BYTES)
				want = HS_LINUX_SNAPSHOT_READ_BYTES;
			ssize_t r = read(p[0], cur->raw + cur->fill, want);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				j->err = r < 0 ? errno : EIO;
				break;
			}
			got += r;
			cur->fill += (size_t)r;
			j->bytes += (uint64_t)r;
			j->cpu_read += thread_cpu_s() - c0;
			*ok = chunk_done(j, false);
			c0 = thread_cpu_s();
		}
		j->cpu_read += thread_cpu_s() - c0;
	}
	close(p[0]);
	close(p[1]);
	return used;
}

/* Drains CPU j's frozen ring, handing its chunks on as they fill, then helps
 * compress: one thread per CPU. */
static void *cpu_thread(void *arg)
{
	cpu_job *j = arg;
	size_t subbuf = j->b->subbuf;
	char file[64];
	int fd = -1;
	bool ok = true;
	double c_start = thread_cpu_s();
	be_gentle();
	/* The chunk buffers' pages first touched here, one fault at a time from user space: a fault taken inside
	 * read()'s copy stays in the kernel, and a PREEMPT_NONE kernel lets no waking task onto this CPU until the call
	 * returns. 256 first-touched pages (~20 us each in that VM) made a 6.3 ms read() that turned a 240 Hz game's
	 * frame into 11 ms (bench_frame_pacing --why). (zstd writes the compressed chunks in user space.) */
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	for (unsigned k = 0; pg && k < HS_LINUX_SNAPSHOT_SLOTS; k++) {
		for (size_t o = 0; o < subbuf * HS_LINUX_DAT_CHUNK_PAGES; o += pg)
			((volatile unsigned char *)j->slots[k].raw)[o] = 0;
	}
	j->cur = &j->slots[0];
	if ((j->zst = hs_datz_begin(&j->z, HS_LINUX_DAT_ZSTD_LEVEL)) != HS_OK) {
		ok = false;
		goto out;
	}
	j->zips = true;
	snprintf(file, sizeof(file), "per_cpu/cpu%u/trace_pipe_raw", j->cpu);
	if ((fd = hs_tracefs_api_get()->instance_file_open(j->s->inst, file, O_RDONLY | O_NONBLOCK)) < 0) {
		j->err = errno ? errno : EIO;
		goto out;
	}
	drain_splice(j, fd, &ok);
	/* The rest (all of it without splice): read returns one sub-buffer, the
	 * writer's last, partly filled page too: the newest events, the moment we
	 * are after. A page is a page in the .dat; the bytes past its commit are
	 * not events to readers. */
	while (!j->err && ok) {
		double c0 = thread_cpu_s();
		slot *cur = j->cur;
		ssize_t n = read(fd, cur->raw + cur->fill, subbuf);
		j->cpu_read += thread_cpu_s() - c0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			j->err = errno;
		if (n <= 0)
			break;
		if ((size_t)n < subbuf)
			memset(cur->raw + cur->fill + n, 0, subbuf - (size_t)n);
		cur->fill += subbuf;
		j->bytes += subbuf;
		ok = chunk_done(j, false);
	}
out:
	if (fd >= 0)
		close(fd);
	if (j->err || !ok)
		j->cur->fill = 0; /* a failed CPU hands on no partial chunk */
	chunk_done(j, true);
	j->t_ring = hs_ftrace_now_s() - j->t0;
	drained(j);
	help(j);
	j->cpu_all = thread_cpu_s() - c_start;
	return NULL;
}

/* The first chunk of `z` whose last event is at `t` or later (chunks are in
 * time order; one without events counts as at its neighbour's time). */
static size_t first_chunk_at(const hs_datz *z, uint64_t t)
{
	return hs_lower_bound_u64(z->chunks, z->n, sizeof *z->chunks, offsetof(hs_datz_chunk, last_ts), t);
}

/* Bytes the chunks [first, n) of every CPU take in the file. */
static uint64_t kept_file_bytes(const cpu_job *jobs, unsigned cpus, const size_t *first)
{
	uint64_t n = 0;
	for (unsigned c = 0; c < cpus; c++) {
		const hs_datz *z = &jobs[c].z;
		size_t f = first ? first[c] : z->first;
		if (f < z->n)
			n += 4 + (z->len - z->chunks[f].off);
	}
	return n;
}

/* Keeps the newest chunks across CPUs whose compressed bytes fit `budget`:
 * one time cut for all CPUs (the moment is at the end, on every CPU alike),
 * and no CPU over libtracecmd's per-CPU limit. UINT64_MAX: everything. */
static void choose_cut(cpu_job *jobs, unsigned cpus, size_t subbuf, uint64_t budget)
{
	size_t max_chunks = (size_t)(HS_LINUX_DAT_MAX_CPU_BYTES / (subbuf * HS_LINUX_DAT_CHUNK_PAGES));
	size_t *first = calloc(cpus, sizeof(*first));
	uint64_t lo = UINT64_MAX, hi = 0;
	if (!first)
		budget = 0; /* out of memory: the newest that fits is then nothing */
	for (unsigned c = 0; c < cpus; c++) {
		hs_datz *z = &jobs[c].z;
		z->first = 0;
		if (z->n) {
			if (z->chunks[0].last_ts < lo)
				lo = z->chunks[0].last_ts;
			if (z->chunks[z->n - 1].last_ts + 1 > hi)
				hi = z->chunks[z->n - 1].last_ts + 1;
		}
	}
	if (!first) {
		for (unsigned c = 0; c < cpus; c++)
			jobs[c].z.first = jobs[c].z.n;
	} else if (budget != UINT64_MAX && lo != UINT64_MAX && kept_file_bytes(jobs, cpus, first) > budget) {
		/* The smallest t whose kept bytes fit; hi keeps nothing. */
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;
			for (unsigned c = 0; c < cpus; c++)
				first[c] = first_chunk_at(&jobs[c].z, mid);
			if (kept_file_bytes(jobs, cpus, first) <= budget)
				hi = mid;
			else
				lo = mid + 1;
		}
		for (unsigned c = 0; c < cpus; c++)
			jobs[c].z.first = first_chunk_at(&jobs[c].z, hi);
	}
	for (unsigned c = 0; c < cpus; c++) {
		hs_datz *z = &jobs[c].z;
		if (z->n - z->first > max_chunks)
			z->first = z->n - max_chunks;
	}
	free(first);
}

/* Free bytes where `path` goes, less what the engine still needs to write
 * after this snapshot (`reserve`: the key-event files' rebuilds, a copy of
 * their chunks and the new .dat, and the run manifest; the caller computes it,
 * as those sessions' counters change on its thread while this one works). */
uint64_t hs_ftrace_room_for(const char *path, uint64_t reserve)
{
	char *d = strdup(path);
	struct statvfs sv;
	uint64_t avail = UINT64_MAX;
	if (d && !statvfs(dirname(d), &sv))
		avail = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	free(d);
	return avail > reserve ? avail - reserve : 0;
}

/* ---- the next snapshot's headers, prepared in the background ---- */

struct hs_snap_prep {
	hs_backend *b;
	session *s;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool now;           /* the snapshot wants it: no more waiting */
	double not_before;  /* hs_ftrace_now_s() */
	hs_dat_prep *dat;   /* the result, NULL when it failed */
};

static void *prep_thread(void *arg)
{
	struct hs_snap_prep *p = arg;
	be_gentle();
	/* Not right after a snapshot: its frames are the ones a game just lost
	 * time in (bench_frame_pacing's window is the snapshot plus 0.5 s). */
	pthread_mutex_lock(&p->mu);
	while (!p->now) {
		double left = p->not_before - hs_ftrace_now_s();
		if (left <= 0)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)left;
		ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	hs_dat_opts o = {.clock = p->s->ps->session->clock, .events = p->s->ev.list, .kallsyms = true,
			 .compress = true, .msg = p->b->msg};
	hs_dat_prep_new(p->b->run_dir, &o, &p->dat);
	return NULL;
}

void hs_ftrace_snapshot_prepare(hs_backend *b, session *s, double delay_s)
{
	if (s->prep || s->ps->session->mode != HS_MODE_BUFFERING)
		return;
	struct hs_snap_prep *p = calloc(1, sizeof(*p));
	if (!p)
		return;
	*p = (struct hs_snap_prep){.b = b, .s = s, .not_before = hs_ftrace_now_s() + delay_s};
	pthread_condattr_t ca;
	bool ok = !pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (ok && pthread_cond_init(&p->cv, &ca)) {
		pthread_mutex_destroy(&p->mu);
		ok = false;
	}
	pthread_condattr_destroy(&ca);
	if (ok && pthread_create(&p->tid, NULL, prep_thread, p)) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		ok = false;
	}
	/* Without it the snapshot writes its headers itself, as before. */
	if (!ok)
		free(p);
	else
		s->prep = p;
}

/* The prepared headers (waiting for them if they are still being written),
 * or NULL; the session has none prepared afterwards. */
static hs_dat_prep *prep_take(session *s)
{
	struct hs_snap_prep *p = s->prep;
	if (!p)
		return NULL;
	s->prep = NULL;
	pthread_mutex_lock(&p->mu);
	p->now = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->tid, NULL);
	hs_dat_prep *dat = p->dat;
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
	return dat;
}

void hs_ftrace_snapshot_unprepare(session *s)
{
	hs_dat_prep_free(prep_take(s));
}

/* ---- the snapshot ---- */

typedef struct {
	hs_backend *b;
	session *s;
	const char *path;
	bool final;
	uint64_t entries; /* the frozen ring's, read before the drain */
	uint64_t reserve; /* see room_for */
	hs_status st;
	atomic_bool done; /* set (and the caller woken) when the thread is finished */
} snap_job;

/* Starts every CPU's thread; started[c] false for one that could not start.
 * Without the arrays (out of memory) none starts: cpus_finish runs them all. */
static void cpus_start(cpu_job *jobs, unsigned cpus, pthread_t *tids, bool *started)
{
	for (unsigned c = 0; tids && started && c < cpus; c++) {
		jobs[c].helps = true; /* before the thread reads it */
		started[c] = !pthread_create(&tids[c], NULL, cpu_thread, &jobs[c]);
		if (!started[c])
			jobs[c].helps = false; /* no thread reads it */
	}
}

/* Runs here the CPUs whose thread did not start and waits for all: the ring
 * is then drained and compressed. */
static void cpus_finish(cpu_job *jobs, unsigned cpus, pthread_t *tids, bool *started)
{
	for (unsigned c = 0; c < cpus; c++)
		if (!started || !started[c])
			cpu_thread(&jobs[c]);
	for (unsigned c = 0; c < cpus; c++)
		if (started && started[c])
			pthread_join(tids[c], NULL);
}

/* Whether the whole ring, even incompressible, fits where the file goes with
 * room to spare: then nothing can be cut and the CPU threads write the file
 * as they finish. Otherwise the cut needs every CPU's chunks first. A zstd
 * frame of incompressible data is at most 1/256 larger than its input (plus a
 * few bytes, and 8 for the chunk's header): 1/64 leaves room for that, the
 * page alignment and headers far larger than measured (0.5-2 MB). */
static bool early_fits(const hs_backend *b, const session *s, const char *path, uint64_t reserve)
{
	uint64_t per_cpu = s->st.real_per_cpu_kb * 1024, cpus = b->cpus;
	/* No CPU near libtracecmd's limit either (choose_cut's other cut; the
	 * drain may return the reader's sub-buffer beyond the ring's size). */
	if (!per_cpu || per_cpu + 2 * b->subbuf + b->subbuf * HS_LINUX_DAT_CHUNK_PAGES > HS_LINUX_DAT_MAX_CPU_BYTES)
		return false;
	uint64_t need = (per_cpu + per_cpu / 64 + b->subbuf) * cpus + 4 * HS_LINUX_SNAPSHOT_HEADER_GUESS_BYTES;
	return hs_ftrace_room_for(path, reserve) >= need;
}

/* The time the kept chunks of all CPUs span: [*from, *to]; false without events. */
static bool kept_span(const cpu_job *jobs, unsigned cpus, uint64_t *from, uint64_t *to)
{
	*from = UINT64_MAX;
	*to = 0;
	for (unsigned c = 0; c < cpus; c++) {
		const hs_datz *z = &jobs[c].z;
		for (size_t i = z->first; i < z->n; i++)
			if (z->chunks[i].events) {
				if (z->chunks[i].first_ts < *from)
					*from = z->chunks[i].first_ts;
				break;
			}
		for (size_t i = z->n; i > z->first; i--)
			if (z->chunks[i - 1].events) {
				if (z->chunks[i - 1].last_ts > *to)
					*to = z->chunks[i - 1].last_ts;
				break;
			}
	}
	return *from <= *to;
}

static void *snapshot_thread(void *arg)
{
	snap_job *sj = arg;
	hs_backend *b = sj->b;
	session *s = sj->s;
	const char *path = sj->path, *name = s->ps->session->logger_name;
	size_t subbuf = b->subbuf;
	hs_status st = HS_ENOMEM;
	double t0 = hs_ftrace_now_s(), t_drain = 0, t_write = 0, cpu_read = 0, cpu_zip = 0;
	cpu_job *jobs = calloc(b->cpus, sizeof(*jobs));
	hs_datz *z = calloc(b->cpus, sizeof(*z));
	hs_dat_prep *prep = NULL;
	uint64_t events = 0, bytes = 0, kept_bytes = 0, kept_events = 0;
	bool prepared = false, resumed = false, wrote_early = false;
	pthread_t *tids = calloc(b->cpus, sizeof(*tids));
	bool *started = calloc(b->cpus, sizeof(*started));
	early_file ef = {.state = EARLY_OFF, .waiting = calloc(b->cpus, sizeof(bool))};
	bool early = ef.waiting && !pthread_mutex_init(&ef.mu, NULL), mu_made = early;
	early = early && early_fits(b, s, path, sj->reserve);
	drain_state ds = {.inst = s->inst, .resume = !sj->final};
	atomic_init(&ds.left, b->cpus);
	atomic_init(&ds.resumed, false);
	hs_dat_opts o = {.clock = s->ps->session->clock, .events = s->ev.list, .kallsyms = true, .compress = true,
			 .quiet_enospc = true, .msg = b->msg, .page_size = subbuf, .zcpu = z};
	size_t chunk = subbuf * HS_LINUX_DAT_CHUNK_PAGES;
	work w = {.jobs = jobs, .cpus = b->cpus, .draining = b->cpus, .out_cap = hs_datz_bound(chunk)};
	bool w_made = !pthread_mutex_init(&w.mu, NULL);
	if (w_made && pthread_cond_init(&w.work, NULL)) {
		pthread_mutex_destroy(&w.mu);
		w_made = false;
	}
	if (w_made && pthread_cond_init(&w.room, NULL)) {
		pthread_cond_destroy(&w.work);
		pthread_mutex_destroy(&w.mu);
		w_made = false;
	}
	be_gentle();
	if (!jobs || !z || !w_made)
		goto out;
	for (unsigned c = 0; c < b->cpus; c++) {
		cpu_job *j = &jobs[c];
		*j = (cpu_job){.b = b, .s = s, .cpu = c, .t0 = t0, .zst = HS_OK, .ds = &ds, .ef = early ? &ef : NULL,
			       .w = &w, .mem = malloc(HS_LINUX_SNAPSHOT_SLOTS * (chunk + w.out_cap))};
		if (!j->mem)
			goto out;
		for (unsigned k = 0; k < HS_LINUX_SNAPSHOT_SLOTS; k++) {
			j->slots[k].raw = j->mem + k * chunk;
			j->slots[k].out = j->mem + HS_LINUX_SNAPSHOT_SLOTS * chunk + k * w.out_cap;
		}
	}
	ef.state = early ? EARLY_PENDING : EARLY_OFF;
	cpus_start(jobs, b->cpus, tids, started);
	if (early) {
		/* The file's start while the CPUs are drained and compressed (the
		 * prepared headers, or, when they are still being written, the
		 * wait for them). */
		o.zcpu = NULL;
		o.prep = prep_take(s);
		hs_status ost = hs_dat_open(path, (int)b->cpus, &o, &ef.file);
		o.zcpu = z;
		prepared = o.prepared;
		pthread_mutex_lock(&ef.mu);
		ef.state = ost == HS_OK ? EARLY_OPEN : EARLY_OFF;
		pthread_mutex_unlock(&ef.mu);
		for (unsigned c = 0; c < b->cpus && ost == HS_OK; c++)
			if (ef.waiting[c])
				put_early(&jobs[c]);
	}
	cpus_finish(jobs, b->cpus, tids, started);
	/* Recording went on when the last CPU was drained, before the file was
	 * written (the early file's CPU data included). */
	resumed = atomic_load(&ds.resumed);
	t_drain = ds.t_drained > 0 ? ds.t_drained : hs_ftrace_now_s() - t0;
	if (!sj->final && !resumed)
		resumed = hs_tracefs_api_get()->trace_on(s->inst) == 0;
	st = HS_EIO;
	for (unsigned c = 0; c < b->cpus; c++) {
		cpu_job *j = &jobs[c];
		if (j->err) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot drain CPU %u: %s", name, c, strerror(j->err));
			goto out;
		}
		if (j->zst != HS_OK) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot compress the ring data of CPU %u: %s", name, c,
				      hs_strerror(j->zst));
			st = j->zst;
			goto out;
		}
		events += j->z.events;
		bytes += j->bytes;
		cpu_read += j->cpu_read;
		cpu_zip += j->cpu_zip;
		/* How evenly the CPUs' threads shared the work: the snapshot ends with the slowest. */
		hs_ftrace_say(b, HS_MSG_DEBUG,
			      "%s: CPU %u: %.1f MB drained by %.3f s, done %.3f s after the start; its thread's CPU: "
			      "reading %.3f s, compressing %.3f s (%u chunks, %u of them other CPUs'), in all %.3f s; waited %.3f s",
			      name, c, (double)j->bytes / 1048576.0, j->t_ring, j->t_done, j->cpu_read, j->cpu_zip,
			      j->zipped, j->zipped_other, j->cpu_all, j->t_wait);
		char why[256];
		if (hs_dat_check_cpu_bytes(j->bytes, why, sizeof(why)) != HS_OK)
			hs_ftrace_say(b, HS_MSG_WARN, "%s: CPU %u holds %s", name, c, why);
	}

	/* The headers written after the last snapshot (or at the start); when
	 * they are still being written, waiting for them is no longer than
	 * writing them here. */
	if (!ef.file) {
		prep = prep_take(s);
		prepared = prep != NULL;
	}
	/* Keep everything unless the disk cannot take it. The data's compressed
	 * size is known, so only the headers are estimated. */
	uint64_t room = hs_ftrace_room_for(path, sj->reserve), budget = UINT64_MAX;
	uint64_t align = (uint64_t)b->cpus * subbuf, all = kept_file_bytes(jobs, b->cpus, NULL);
	uint64_t hdr = hs_dat_prep_bytes(prep);
	if (ef.file)
		room = UINT64_MAX; /* early_fits said so before the drain */
	if (!hdr && all + align + HS_LINUX_SNAPSHOT_HEADER_GUESS_BYTES > room) {
		/* The headers (formats, kernel symbols, comms) take 0.5-2 MB
		 * compressed depending on the kernel: measured once, in memory, not
		 * guessed (a 2 MB guess kept no events at all with 1.7 MB free). */
		hdr = atomic_load(&b->dat_header_bytes);
		if (!hdr) {
			hs_dat_opts m = {.clock = s->ps->session->clock, .events = s->ev.list, .kallsyms = true,
					 .compress = true, .header_only = true};
			hdr = hs_dat_write_opts(path, (int)b->cpus, NULL, &m) == HS_OK && m.header_bytes
				      ? m.header_bytes
				      : HS_LINUX_SNAPSHOT_HEADER_GUESS_BYTES;
			atomic_store(&b->dat_header_bytes, hdr);
		}
	}
	/* The comms grow between snapshots, and the options and the string
	 * table follow the data: a margin on the measured size. */
	uint64_t margin = hdr + hdr / 8 + align + (64u << 10);
	if (all + margin > room) {
		budget = room > margin ? room - margin : 0;
		hs_ftrace_say(b, HS_MSG_WARN,
			      "%s: %.1f MB of ring data (%.1f MB compressed), %.1f MB free for it (%.1f MB of it for "
			      "the headers): keeping the newest that fits",
			      name, (double)bytes / 1048576.0, (double)all / 1048576.0, (double)room / 1048576.0,
			      (double)hdr / 1048576.0);
	}
	for (unsigned try = 0;; try++) {
		choose_cut(jobs, b->cpus, subbuf, budget);
		kept_bytes = kept_events = 0;
		for (unsigned c = 0; c < b->cpus; c++) {
			z[c] = jobs[c].z; /* a view: the writer reads, the jobs own */
			kept_bytes += hs_datz_kept_raw(&jobs[c].z);
			kept_events += hs_datz_kept_events(&jobs[c].z);
		}
		double tw = hs_ftrace_now_s();
		for (unsigned c = 0; ef.file && c < b->cpus; c++)
			if (jobs[c].z.first) {
				/* Cut after all (early_fits says it cannot be): the file
				 * holds every chunk, so it is written again from the cut. */
				hs_ftrace_say(b, HS_MSG_WARN,
					      "%s: CPU %u's data was cut after it was written: writing %s again", name,
					      c, path);
				hs_dat_abort(ef.file);
				ef.file = NULL;
			}
		if (ef.file) {
			/* Every CPU is in it (choose_cut kept all: there was room). */
			st = hs_dat_close(ef.file, &o);
			ef.file = NULL;
			wrote_early = st == HS_OK;
		} else {
			/* The prepared headers serve the first try; a retry writes its own. */
			o.prep = prep;
			prep = NULL;
			st = hs_dat_write_opts(path, (int)b->cpus, NULL, &o);
			prepared = o.prepared;
		}
		t_write = hs_ftrace_now_s() - tw;
		if (st == HS_OK || (o.err != ENOSPC && o.err != EDQUOT))
			break;
		if (try + 1 >= HS_LINUX_SNAPSHOT_DISKFULL_TRIES) {
			hs_ftrace_say(b, HS_MSG_ERROR,
				      "%s: the disk is full: %s not written, even with %.1f MB of %.1f MB of ring data",
				      name, path, (double)kept_bytes / 1048576.0, (double)bytes / 1048576.0);
			break;
		}
		/* Kernel symbols are worth less than the events when both do not fit. */
		if (o.kallsyms && o.header_bytes == 0) {
			o.kallsyms = false;
			hs_ftrace_say(b, HS_MSG_WARN, "%s: the disk is full: leaving kernel symbols out of %s", name,
				      path);
		}
		uint64_t kept_z = kept_file_bytes(jobs, b->cpus, NULL);
		budget = (budget == UINT64_MAX || kept_z < budget ? kept_z : budget) * 6 / 10;
	}
	s->st.snapshots++;
	s->st.snapshot_entries = sj->entries;
	s->st.snapshot_raw_bytes = bytes;
	s->st.snapshot_events = st == HS_OK ? kept_events : 0;
	s->st.snapshot_bytes_dropped = st == HS_OK ? bytes - kept_bytes : bytes;
	s->st.snapshot_events_dropped = st == HS_OK ? events - kept_events : events;
	s->st.snapshot_file_bytes = st == HS_OK ? o.file_bytes : 0;
	s->st.snapshot_s = hs_ftrace_now_s() - t0;
	for (unsigned c = 0; c < b->cpus; c++) {
		s->snap_first_ns[c] = s->snap_last_ns[c] = 0;
		if (st == HS_OK)
			kept_span(&jobs[c], 1, &s->snap_first_ns[c], &s->snap_last_ns[c]);
		if (s->snap_first_ns[c] > s->snap_last_ns[c])
			s->snap_first_ns[c] = s->snap_last_ns[c] = 0;
	}
	uint64_t kept_from, newest;
	if (st == HS_OK && kept_bytes < bytes)
		hs_ftrace_say(b, HS_MSG_WARN,
			      "%s: DROPPED the oldest %.1f MB of %.1f MB of ring data (%" PRIu64 " of %" PRIu64
			      " events) to fit the disk or libtracecmd's limit; %s keeps the last %.3f s",
			      name, (double)(bytes - kept_bytes) / 1048576.0, (double)bytes / 1048576.0,
			      events - kept_events, events, path,
			      kept_span(jobs, b->cpus, &kept_from, &newest) ? (double)(newest - kept_from) / 1e9 : 0.0);
	if (st == HS_OK)
		hs_ftrace_say(
			b, HS_MSG_INFO,
			"%s: wrote %s: %" PRIu64 " events (ring entries %" PRIu64 "%s), %.1f MB raw -> %.1f MB, "
			"drain %.3f s (compressed as it came; the ring frozen meanwhile), write %.3f s (%s headers, "
			"%s; sync %.3f s), total %.3f s; CPU: reading %.3f s, compression %.3f s",
			name, path, kept_events, sj->entries,
			events == sj->entries ? (kept_events == events ? ", all of them" : ", the newest")
					      : ", MISMATCH",
			(double)bytes / 1048576.0, (double)o.file_bytes / 1048576.0, t_drain, t_write,
			prepared ? "prepared" : "written now",
			wrote_early ? "the CPU data as each CPU was done" : "the CPU data after the drain", o.sync_s,
			s->st.snapshot_s, cpu_read, cpu_zip);
out:
	/* Recording goes on whatever happened to this snapshot. */
	if (!sj->final && !resumed)
		hs_tracefs_api_get()->trace_on(s->inst);
	hs_dat_prep_free(prep);
	if (ef.file)
		hs_dat_abort(ef.file);
	if (mu_made)
		pthread_mutex_destroy(&ef.mu);
	free(ef.waiting);
	free(tids);
	free(started);
	for (unsigned c = 0; jobs && c < b->cpus; c++) {
		free(jobs[c].mem);
		hs_datz_free(&jobs[c].z);
	}
	if (w_made) {
		pthread_cond_destroy(&w.work);
		pthread_cond_destroy(&w.room);
		pthread_mutex_destroy(&w.mu);
	}
	free(jobs);
	free(z);
	/* The next snapshot's headers, once this one is out of the way. */
	if (!sj->final)
		hs_ftrace_snapshot_prepare(b, s, HS_LINUX_SNAPSHOT_PREP_DELAY_S);
	sj->st = st;
	atomic_store(&sj->done, true);
	hs_ftrace_wake(b);
	return NULL;
}

hs_status hs_ftrace_snapshot_ring(hs_backend *b, session *s, const char *path, bool final, uint64_t reserve)
{
	/* In a thread of its own so its priority is lowered without the engine's,
	 * and so this thread goes on streaming the key events meanwhile: a 1 MB
	 * per-CPU key ring fills in 0.7 s at 50k events/s. The ring was frozen by
	 * the caller. */
	snap_job sj = {.b = b, .s = s, .path = path, .final = final, .st = HS_EIO, .reserve = reserve,
		       .entries = hs_ftrace_sum_entries(s, b->cpus)};
	atomic_init(&sj.done, false);
	pthread_t t;
	if (pthread_create(&t, NULL, snapshot_thread, &sj)) {
		snapshot_thread(&sj);
		return sj.st;
	}
	hs_ftrace_stream_until(b, &sj.done);
	pthread_join(t, NULL);
	return sj.st;
}
