/* ftrace/snapshot.c: a buffering session's snapshot: freeze the ring, drain it, write a compressed trace.dat, resume. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <traceevent/kbuffer.h>
#include <tracefs/tracefs.h>

#include "ftrace/backend_int.h"
#include "ftrace/ftrace.h"
#include "hindsight/limits.h"

/* One CPU's drained ring: its pages in a memfd (RAM, never the disk: the data
 * reaches the disk once, compressed, in the .dat) and each page's event count. */
typedef struct {
	hs_backend *b;
	session *s;
	unsigned cpu;
	int fd, keep_fd;    /* the drained pages; the kept tail when it is cut */
	uint64_t bytes;     /* drained */
	uint64_t first;     /* first page kept */
	uint16_t *counts;   /* events per page */
	size_t npages, cap;
	uint64_t events;
	const unsigned char *map; /* the memfd, mapped to read page timestamps */
	int err;
} cpu_job;

/* Snapshot work runs beside the game it records: the lowest CPU weight of the
 * normal class (not SCHED_IDLE, which starves for seconds under load and keeps
 * the ring frozen that long) and the idle I/O class, per thread. */
static void be_gentle(void)
{
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	/* ioprio_set(IOPRIO_WHO_PROCESS, this thread, IOPRIO_CLASS_IDLE << 13) */
	syscall(SYS_ioprio_set, 1, 0, 3 << 13);
}

static void *drain_cpu_thread(void *arg)
{
	cpu_job *j = arg;
	size_t subbuf = j->b->subbuf;
	void *buf = malloc(subbuf);
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	struct tracefs_cpu *tcpu = NULL;
	be_gentle();
	if (!buf || !kb) {
		j->err = ENOMEM;
		goto out;
	}
	char name[32];
	snprintf(name, sizeof(name), "hs-ring-cpu%u", j->cpu);
	if ((j->fd = memfd_create(name, MFD_CLOEXEC)) < 0 || !(tcpu = tracefs_cpu_open(j->s->inst, (int)j->cpu, true))) {
		j->err = errno ? errno : EIO;
		goto out;
	}
	/* Flush, not a buffered read: the ring is frozen, and the writer's last,
	 * partly filled page holds the newest events, the moment we are after. */
	int n;
	while ((n = tracefs_cpu_flush(tcpu, buf)) > 0) {
		if (j->npages == j->cap) {
			size_t cap = j->cap ? j->cap * 2 : 1024;
			uint16_t *c = realloc(j->counts, cap * sizeof(*c));
			if (!c) {
				j->err = ENOMEM;
				goto out;
			}
			j->counts = c;
			j->cap = cap;
		}
		if ((size_t)n < subbuf) /* a page is a page in the .dat; zeros are padding to readers */
			memset((char *)buf + n, 0, subbuf - (size_t)n);
		if (write(j->fd, buf, subbuf) != (ssize_t)subbuf) {
			j->err = errno ? errno : EIO;
			goto out;
		}
		unsigned e = hs_dat_count_page(kb, buf);
		j->counts[j->npages++] = (uint16_t)e;
		j->events += e;
		j->bytes += subbuf;
	}
out:
	tracefs_cpu_close(tcpu);
	if (kb)
		kbuffer_free(kb);
	free(buf);
	return NULL;
}

/* A sub-buffer starts with its first event's full timestamp. */
static uint64_t page_ts(const cpu_job *j, uint64_t page)
{
	uint64_t ts;
	memcpy(&ts, j->map + page * j->b->subbuf, sizeof(ts));
	return ts;
}

/* The window CPU j's kept pages [first, npages) cover: the first kept event's
 * time and the last one's (walked in the last page that has events). */
static void kept_window(const cpu_job *j, struct kbuffer *kb, uint64_t *from, uint64_t *to)
{
	*from = *to = 0;
	if (!j->map || !kb)
		return;
	uint64_t p = j->first, q = j->npages;
	while (p < q && !j->counts[p])
		p++;
	while (q > p && !j->counts[q - 1])
		q--;
	if (p >= q)
		return;
	unsigned long long ts;
	if (kbuffer_load_subbuffer(kb, (void *)(j->map + p * j->b->subbuf)) >= 0 && kbuffer_read_event(kb, &ts))
		*from = ts;
	if (kbuffer_load_subbuffer(kb, (void *)(j->map + (q - 1) * j->b->subbuf)) >= 0)
		for (void *d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts))
			*to = ts;
}

/* The first page of `j` whose timestamp is at least `t` (pages are in time order). */
static uint64_t first_at(const cpu_job *j, uint64_t t)
{
	uint64_t lo = 0, hi = j->npages;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (page_ts(j, mid) < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Keeps the newest data across CPUs that fits in `budget` raw bytes: one time
 * cut for all CPUs (the moment is at the end, on every CPU alike), and no CPU
 * over libtracecmd's per-CPU limit. */
static void choose_cut(cpu_job *jobs, unsigned cpus, size_t subbuf, uint64_t budget)
{
	uint64_t max_pages = HS_LINUX_DAT_MAX_CPU_BYTES / subbuf;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (unsigned c = 0; c < cpus; c++)
		if (jobs[c].npages && jobs[c].map) {
			if (page_ts(&jobs[c], 0) < lo)
				lo = page_ts(&jobs[c], 0);
			if (page_ts(&jobs[c], jobs[c].npages - 1) + 1 > hi)
				hi = page_ts(&jobs[c], jobs[c].npages - 1) + 1;
		}
	/* The smallest t whose kept bytes fit. */
	uint64_t t = lo == UINT64_MAX ? 0 : lo;
	while (lo != UINT64_MAX && lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, kept = 0;
		for (unsigned c = 0; c < cpus; c++)
			if (jobs[c].map)
				kept += (jobs[c].npages - first_at(&jobs[c], mid)) * subbuf;
		if (kept <= budget)
			hi = mid;
		else
			lo = mid + 1;
		t = hi;
	}
	for (unsigned c = 0; c < cpus; c++) {
		cpu_job *j = &jobs[c];
		j->first = j->map && budget != UINT64_MAX ? first_at(j, t) : 0;
		if (j->npages - j->first > max_pages)
			j->first = j->npages - max_pages;
	}
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

/* Makes each CPU's file hold only its kept pages [first, npages). */
static int cut_files(cpu_job *jobs, unsigned cpus, size_t subbuf, char **paths, size_t path_len)
{
	for (unsigned c = 0; c < cpus; c++) {
		cpu_job *j = &jobs[c];
		if (j->keep_fd >= 0)
			close(j->keep_fd);
		j->keep_fd = -1;
		int fd = j->fd;
		if (j->first) {
			if ((j->keep_fd = memfd_create("hs-ring-kept", MFD_CLOEXEC)) < 0)
				return -1;
			loff_t in = (loff_t)(j->first * subbuf);
			size_t left = (size_t)((j->npages - j->first) * subbuf);
			while (left) {
				ssize_t n = copy_file_range(j->fd, &in, j->keep_fd, NULL, left, 0);
				if (n <= 0)
					return -1;
				left -= (size_t)n;
			}
			fd = j->keep_fd;
		}
		snprintf(paths[c], path_len, "/proc/self/fd/%d", fd);
	}
	return 0;
}

/* One CPU's kept pages, compressed in a thread of their own: libtracecmd
 * compresses one CPU after the other in one thread, which was two thirds of a
 * snapshot's time (docs/snapshots.md). */
typedef struct {
	const cpu_job *j;
	hs_datz *z;
	hs_status st;
} zip_job;

static void *zip_cpu_thread(void *arg)
{
	zip_job *zj = arg;
	const cpu_job *j = zj->j;
	size_t subbuf = j->b->subbuf;
	be_gentle();
	zj->st = hs_datz_compress(j->map ? j->map + j->first * subbuf : NULL, j->map ? (j->npages - j->first) * subbuf : 0,
				  subbuf, HS_LINUX_DAT_ZSTD_LEVEL, zj->z);
	return NULL;
}

/* Compresses every CPU's kept pages [first, npages), all CPUs at once. */
static hs_status zip_kept(cpu_job *jobs, unsigned cpus, hs_datz *z)
{
	hs_status st = HS_OK;
	zip_job *zj = calloc(cpus, sizeof(*zj));
	pthread_t *tids = calloc(cpus, sizeof(*tids));
	bool *started = calloc(cpus, sizeof(*started));
	if (!zj || !tids || !started) {
		st = HS_ENOMEM;
		goto fail;
	}
	for (unsigned c = 0; c < cpus; c++) {
		zj[c] = (zip_job){.j = &jobs[c], .z = &z[c], .st = HS_EIO};
		started[c] = !pthread_create(&tids[c], NULL, zip_cpu_thread, &zj[c]);
	}
	for (unsigned c = 0; c < cpus; c++) {
		if (started[c])
			pthread_join(tids[c], NULL);
		else
			zip_cpu_thread(&zj[c]);
		if (zj[c].st != HS_OK)
			st = zj[c].st;
	}
fail:
	free(zj);
	free(tids);
	free(started);
	return st;
}

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

static void *snapshot_thread(void *arg)
{
	snap_job *sj = arg;
	hs_backend *b = sj->b;
	session *s = sj->s;
	const char *path = sj->path, *name = s->ps->session->logger_name;
	size_t subbuf = b->subbuf;
	hs_status st = HS_EIO;
	double t0 = hs_ftrace_now_s();
	cpu_job *jobs = calloc(b->cpus, sizeof(*jobs));
	pthread_t *tids = calloc(b->cpus, sizeof(*tids));
	char **paths = calloc(b->cpus, sizeof(*paths));
	bool *started = calloc(b->cpus, sizeof(*started));
	hs_datz *z = calloc(b->cpus, sizeof(*z));
	bool zipped = true; /* our parallel writer; libtracecmd's copy if a memfd cannot be mapped */
	uint64_t events = 0, bytes = 0, kept_bytes = 0, kept_events = 0;
	double t_zip = 0;
	be_gentle();
	if (!jobs || !tids || !paths || !started || !z) {
		st = HS_ENOMEM;
		goto out;
	}
	for (unsigned c = 0; c < b->cpus; c++) {
		jobs[c] = (cpu_job){.b = b, .s = s, .cpu = c, .fd = -1, .keep_fd = -1};
		if (!(paths[c] = malloc(64))) {
			st = HS_ENOMEM;
			goto out;
		}
	}
	uint64_t entries = sj->entries;
	/* Every CPU's ring at once: the copies are independent kernel work. */
	for (unsigned c = 0; c < b->cpus; c++)
		started[c] = !pthread_create(&tids[c], NULL, drain_cpu_thread, &jobs[c]);
	for (unsigned c = 0; c < b->cpus; c++) {
		if (started[c])
			pthread_join(tids[c], NULL);
		else
			drain_cpu_thread(&jobs[c]);
	}
	double t_drain = hs_ftrace_now_s() - t0;
	if (!sj->final)
		tracefs_trace_on(s->inst);
	for (unsigned c = 0; c < b->cpus; c++) {
		cpu_job *j = &jobs[c];
		if (j->err) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot drain CPU %u: %s", name, c, strerror(j->err));
			goto out;
		}
		events += j->events;
		bytes += j->bytes;
		if (j->bytes && (j->map = mmap(NULL, j->bytes, PROT_READ, MAP_SHARED, j->fd, 0)) == MAP_FAILED)
			j->map = NULL;
		if (j->bytes && !j->map)
			zipped = false;
		char why[256];
		if (hs_dat_check_cpu_bytes(j->bytes, why, sizeof(why)) != HS_OK)
			hs_ftrace_say(b, HS_MSG_WARN, "%s: CPU %u holds %s", name, c, why);
	}

	/* Keep everything unless the disk cannot take it: the file is compressed,
	 * so only when the raw data does not fit is the ratio worth estimating. */
	uint64_t room = hs_ftrace_room_for(path, sj->reserve), budget = UINT64_MAX;
	if (bytes + HS_LINUX_SNAPSHOT_SAMPLE_BYTES > room) {
		cpu_job *big = &jobs[0];
		for (unsigned c = 1; c < b->cpus; c++)
			if (jobs[c].bytes > big->bytes)
				big = &jobs[c];
		uint64_t sample = big->bytes < HS_LINUX_SNAPSHOT_SAMPLE_BYTES ? big->bytes : HS_LINUX_SNAPSHOT_SAMPLE_BYTES;
		double ratio = 1.0;
		if (!zipped)
			ratio = hs_dat_compression_ratio(big->fd, big->bytes - sample, sample, subbuf);
		else if (sample && hs_datz_compress(big->map + big->bytes - sample, sample, subbuf, HS_LINUX_DAT_ZSTD_LEVEL,
						    &z[0]) == HS_OK)
			ratio = (double)z[0].len / (double)sample;
		/* The headers (formats, kernel symbols, comms) take 0.5-2 MB compressed
		 * depending on the kernel: measured once, in memory, not guessed (a
		 * 2 MB guess kept no events at all with 1.7 MB free). */
		uint64_t hdr = atomic_load(&b->dat_header_bytes);
		if (!hdr) {
			hs_dat_opts m = {.clock = s->ps->session->clock, .events = s->ev.list, .kallsyms = true,
					 .compress = true, .header_only = true};
			hdr = hs_dat_write_opts(path, (int)b->cpus, NULL, &m) == HS_OK && m.header_bytes
				      ? m.header_bytes
				      : HS_LINUX_SNAPSHOT_HEADER_GUESS_BYTES;
			atomic_store(&b->dat_header_bytes, hdr);
		}
		/* The comms grow between snapshots: a margin on the measured size. */
		hdr += hdr / 8 + (64u << 10);
		budget = room > hdr ? (uint64_t)((double)(room - hdr) / ratio * 0.9) : 0;
		hs_ftrace_say(b, HS_MSG_WARN,
			      "%s: %.1f MB of ring data, %.1f MB free for it (%.1f MB of it for the headers): keeping "
			      "the newest that fits at the sampled compression ratio %.3f",
			      name, (double)bytes / 1048576.0, (double)room / 1048576.0, (double)hdr / 1048576.0,
			      ratio);
	}
	hs_dat_opts o = {.clock = s->ps->session->clock, .events = s->ev.list, .kallsyms = true, .compress = true,
			 .quiet_enospc = true, .msg = b->msg};
	for (unsigned try = 0;; try++) {
		choose_cut(jobs, b->cpus, subbuf, budget);
		if (zipped) {
			double tz = hs_ftrace_now_s();
			hs_status zst = zip_kept(jobs, b->cpus, z);
			t_zip += hs_ftrace_now_s() - tz;
			if (zst != HS_OK) {
				hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot compress the ring data: %s", name,
					      hs_strerror(zst));
				st = zst;
				goto out;
			}
			o.zcpu = z;
			o.page_size = subbuf;
		} else if (cut_files(jobs, b->cpus, subbuf, paths, 64)) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot cut the ring data: %s", name, strerror(errno));
			goto out;
		}
		kept_bytes = kept_events = 0;
		for (unsigned c = 0; c < b->cpus; c++) {
			cpu_job *j = &jobs[c];
			kept_bytes += (j->npages - j->first) * subbuf;
			kept_events += j->events;
			for (uint64_t p = 0; p < j->first; p++)
				kept_events -= j->counts[p];
		}
		st = hs_dat_write_opts(path, (int)b->cpus, paths, &o);
		if (st == HS_OK || (o.err != ENOSPC && o.err != EDQUOT))
			break;
		if (try + 1 >= HS_LINUX_SNAPSHOT_DISKFULL_TRIES) {
			hs_ftrace_say(b, HS_MSG_ERROR,
				      "%s: the disk is full: %s not written, even with %.1f MB of %.1f MB of ring data",
				      name, path, (double)kept_bytes / 1048576.0, (double)bytes / 1048576.0);
			break;
		}
		/* Kernel symbols are worth less than the events when both do not fit. */
		room = hs_ftrace_room_for(path, sj->reserve);
		if (o.kallsyms && o.header_bytes == 0) {
			o.kallsyms = false;
			hs_ftrace_say(b, HS_MSG_WARN, "%s: the disk is full: leaving kernel symbols out of %s", name,
				      path);
		}
		budget = (budget == UINT64_MAX ? kept_bytes : budget) * 6 / 10;
	}
	s->st.snapshots++;
	s->st.snapshot_entries = entries;
	s->st.snapshot_raw_bytes = bytes;
	s->st.snapshot_events = st == HS_OK ? kept_events : 0;
	s->st.snapshot_bytes_dropped = st == HS_OK ? bytes - kept_bytes : bytes;
	s->st.snapshot_events_dropped = st == HS_OK ? events - kept_events : events;
	s->st.snapshot_file_bytes = st == HS_OK ? o.file_bytes : 0;
	s->st.snapshot_s = hs_ftrace_now_s() - t0;
	{
		struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
		for (unsigned c = 0; c < b->cpus; c++) {
			s->snap_first_ns[c] = s->snap_last_ns[c] = 0;
			if (st == HS_OK)
				kept_window(&jobs[c], kb, &s->snap_first_ns[c], &s->snap_last_ns[c]);
		}
		if (kb)
			kbuffer_free(kb);
	}
	if (st == HS_OK && kept_bytes < bytes) {
		uint64_t kept_from = UINT64_MAX, newest = 0;
		for (unsigned c = 0; c < b->cpus; c++)
			if (jobs[c].map && jobs[c].npages) {
				if (jobs[c].first < jobs[c].npages && page_ts(&jobs[c], jobs[c].first) < kept_from)
					kept_from = page_ts(&jobs[c], jobs[c].first);
				if (page_ts(&jobs[c], jobs[c].npages - 1) > newest)
					newest = page_ts(&jobs[c], jobs[c].npages - 1);
			}
		hs_ftrace_say(b, HS_MSG_WARN,
			      "%s: DROPPED the oldest %.1f MB of %.1f MB of ring data (%" PRIu64 " of %" PRIu64
			      " events) to fit the disk or libtracecmd's limit; %s keeps the last %.3f s",
			      name, (double)(bytes - kept_bytes) / 1048576.0, (double)bytes / 1048576.0,
			      events - kept_events, events, path,
			      kept_from <= newest ? (double)(newest - kept_from) / 1e9 : 0.0);
	}
	if (st == HS_OK)
		hs_ftrace_say(b, HS_MSG_INFO,
			      "%s: wrote %s: %" PRIu64 " events (ring entries %" PRIu64 "%s), %.1f MB raw -> %.1f MB, "
			      "drain %.3f s, compression %.3f s (%s), total %.3f s",
			      name, path, kept_events, entries,
			      events == entries ? (kept_events == events ? ", all of them" : ", the newest")
						: ", MISMATCH",
			      (double)bytes / 1048576.0, (double)o.file_bytes / 1048576.0, t_drain, t_zip,
			      zipped ? "parallel" : "in libtracecmd's write", s->st.snapshot_s);
out:
	for (unsigned c = 0; jobs && c < b->cpus; c++) {
		cpu_job *j = &jobs[c];
		if (j->map)
			munmap((void *)j->map, j->bytes);
		if (j->fd >= 0)
			close(j->fd);
		if (j->keep_fd >= 0)
			close(j->keep_fd);
		free(j->counts);
		if (paths)
			free(paths[c]);
		if (z)
			hs_datz_free(&z[c]);
	}
	free(z);
	free(jobs);
	free(tids);
	free(paths);
	free(started);
	sj->st = st;
	atomic_store(&sj->done, true);
	hs_ftrace_wake(b);
	return NULL;
}

hs_status hs_ftrace_snapshot_ring(hs_backend *b, session *s, const char *path, bool final, uint64_t reserve)
{
	/* In a thread of its own so its priority is lowered without the engine's,
	 * and so this thread goes on streaming the key events meanwhile: the
	 * snapshot takes 0.5-3 s, and a 1 MB-per-CPU key ring fills in 0.7 s at
	 * 50k events/s. The ring was frozen by the caller. */
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
