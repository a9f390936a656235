/* ftrace/dat.c: writes trace-cmd's trace.dat from raw per-CPU ring pages, through libtracecmd's output API. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>

#include "ftrace/ftrace.h"
#include "ftrace/tracefs_api.h"
#include "hindsight/compat.h"
#include "hindsight/hmap.h"
#include "hindsight/limits.h"

/*
 * libtracecmd exports its output API but ships the declarations only in the
 * private trace-cmd-private.h, which Debian's -dev package leaves out. These
 * match libtracecmd 1.x (trace-cmd 3.x); CMake refuses other majors, because
 * append_buffer_cpu_data changed its arguments between 2.x and 3.x.
 */
struct tracecmd_output;
struct tracecmd_output *tracecmd_output_create_fd(int fd);
void tracecmd_set_quiet(struct tracecmd_output *handle, bool set_quiet);
void tracecmd_set_out_clock(struct tracecmd_output *handle, const char *clock);
int tracecmd_output_set_kallsyms(struct tracecmd_output *handle, const char *kallsyms);
int tracecmd_output_set_trace_dir(struct tracecmd_output *handle, const char *tracing_dir);
int tracecmd_output_set_compression(struct tracecmd_output *handle, const char *compression);
int tracecmd_output_write_headers(struct tracecmd_output *handle, struct hs_dat_event_list *list);
int tracecmd_write_cmdlines(struct tracecmd_output *handle);
int tracecmd_append_cpu_data(struct tracecmd_output *handle, int cpus, char *const *cpu_data_files);
int tracecmd_write_cpus(struct tracecmd_output *handle, int cpus);
int tracecmd_write_options(struct tracecmd_output *handle);
struct tracecmd_option;
struct tracecmd_option *tracecmd_add_option(struct tracecmd_output *handle, unsigned short id, int size,
					    const void *data);
void tracecmd_output_close(struct tracecmd_output *handle);

/* ---- comm names ----
 * libtracecmd reads saved_cmdlines twice (once to size it, once to copy it)
 * and, when a process came or went in between, writes a section whose length
 * field disagrees with its bytes ("error in size of file"), silently: readers
 * then parse a truncated or overlong list. The kernel's list is also a small
 * ring that forgets. So the writer reads it once, merges it into a table of
 * every pid->comm seen in this process, and hands libtracecmd that table as a
 * stable file, through a private tracing directory of symbolic links. */

typedef struct {
	int pid; /* 0: empty */
	char comm[16];
} comm_slot;

static comm_slot *g_comms; /* [HS_LINUX_COMM_CACHE], by pid % N: a newer pid takes the slot */

static void comms_merge(const char *text)
{
	if (!g_comms && !(g_comms = calloc(HS_LINUX_COMM_CACHE, sizeof(*g_comms))))
		return;
	for (const char *line = text; line && *line;) {
		char *end;
		long pid = strtol(line, &end, 10);
		const char *nl = strchr(line, '\n');
		if (end != line && *end == ' ' && pid > 0 && pid <= 0x7fffffff) {
			const char *c = end + 1;
			size_t n = nl ? (size_t)(nl - c) : strlen(c);
			/* "<...>" is the kernel saying it forgot: keep what we knew. */
			if (n && strncmp(c, "<...>", n)) {
				comm_slot *sl = &g_comms[(unsigned long)pid % HS_LINUX_COMM_CACHE];
				if (n >= sizeof(sl->comm))
					n = sizeof(sl->comm) - 1;
				sl->pid = (int)pid;
				memcpy(sl->comm, c, n);
				sl->comm[n] = '\0';
			}
		}
		line = nl ? nl + 1 : NULL;
	}
}

/* Writers run in several threads (a key-event file's rewrite, a ring
 * snapshot, the headers prepared for the next one): the table is theirs in turn. */
static pthread_mutex_t g_comms_mu = PTHREAD_MUTEX_INITIALIZER;

bool hs_ftrace_comm_lookup(int pid, char *out, size_t cap)
{
	bool found = false;
	pthread_mutex_lock(&g_comms_mu);
	char *text = hs_tracefs_api_get()->instance_file_read(NULL, "saved_cmdlines", NULL);
	if (text)
		comms_merge(text);
	free(text);
	if (g_comms && pid > 0 && g_comms[(unsigned)pid % HS_LINUX_COMM_CACHE].pid == pid) {
		snprintf(out, cap, "%s", g_comms[(unsigned)pid % HS_LINUX_COMM_CACHE].comm);
		found = true;
	}
	pthread_mutex_unlock(&g_comms_mu);
	return found;
}

/* Fills `fd` (a memfd, rewritten from its start) with saved_cmdlines' format
 * ("pid comm\n") for every known pid, after merging the kernel's list. */
static int comms_fill(int fd)
{
	int ret = -1;
	pthread_mutex_lock(&g_comms_mu);
	char *text = hs_tracefs_api_get()->instance_file_read(NULL, "saved_cmdlines", NULL);
	if (text)
		comms_merge(text);
	free(text);
	if (!g_comms || lseek(fd, 0, SEEK_SET) < 0 || ftruncate(fd, 0))
		goto out;
	FILE *f = fdopen(dup(fd), "w");
	if (!f)
		goto out;
	for (size_t i = 0; i < HS_LINUX_COMM_CACHE; i++)
		if (g_comms[i].pid)
			fprintf(f, "%d %s\n", g_comms[i].pid, g_comms[i].comm);
	ret = fclose(f) ? -1 : 0;
out:
	pthread_mutex_unlock(&g_comms_mu);
	return ret;
}

/* A memfd holding the comm table (comms_fill), or -1. */
static int comms_file(void)
{
	int fd = memfd_create("hs-cmdlines", MFD_CLOEXEC);
	if (fd >= 0 && comms_fill(fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A private tracing directory: links to everything in the real one but
 * saved_cmdlines, which points at `comm_fd`. Returns the malloc'd path, or NULL
 * (the caller then lets libtracecmd read the real directory). */
static char *fake_tracing_dir(const char *near, int comm_fd)
{
	const char *real = hs_tracefs_api_get()->tracing_dir();
	const char *bases[] = {near, getenv("TMPDIR"), "/tmp"};
	char *dir = NULL;
	if (!real)
		return NULL;
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]) && !dir; i++) {
		if (!bases[i])
			continue;
		size_t n = strlen(bases[i]) + 32;
		if (!(dir = malloc(n)))
			return NULL;
		snprintf(dir, n, "%s/.hs-tracing.XXXXXX", bases[i]);
		if (!mkdtemp(dir)) {
			free(dir);
			dir = NULL;
		}
	}
	if (!dir)
		return NULL;
	DIR *d = opendir(real);
	struct dirent *e;
	char from[4096], to[4096];
	bool ok = d != NULL;
	while (ok && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(to, sizeof(to), "%s/%s", dir, e->d_name);
		if (!strcmp(e->d_name, "saved_cmdlines"))
			snprintf(from, sizeof(from), "/proc/self/fd/%d", comm_fd);
		else
			snprintf(from, sizeof(from), "%s/%s", real, e->d_name);
		ok = symlink(from, to) == 0;
	}
	if (d)
		closedir(d);
	if (ok)
		return dir;
	hs_dat_remove_dir(dir);
	free(dir);
	return NULL;
}

void hs_dat_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4096];
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* ---- kernel symbols ----
 * libtracecmd reads /proc/kallsyms twice (its size, then its bytes: 5 MB the
 * kernel formats each time), and fails with "error in size of file" when a
 * module comes or goes in between. The writers read it once into a memfd and
 * again only when /proc/modules changed (the only way the symbols change
 * after boot); libtracecmd then copies the memfd. */

static pthread_mutex_t g_ksyms_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_ksyms_fd = -1;
static uint64_t g_ksyms_modules; /* FNV-1a of the module list when g_ksyms_fd was read */
static char g_ksyms_path[4096]; /* the symbols file g_ksyms_fd holds (the tracefs table's; a test may swap it) */

static uint64_t hash_file(const char *path)
{
	uint64_t h = HS_HASH_START;
	char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no modules (a kernel without them): the symbols never change */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = hs_hash_more(h, buf, (size_t)n);
	close(fd);
	return h;
}

/* A memfd with /proc/kallsyms' text, or -1 (a read error, or addresses the
 * kernel hides: libtracecmd then reads the file itself, lifting kptr_restrict
 * for it as it does). */
static int ksyms_read(const char *path)
{
	int in = open(path, O_RDONLY | O_CLOEXEC), out = memfd_create("hs-kallsyms", MFD_CLOEXEC);
	char buf[65536];
	ssize_t n;
	bool first = true, ok = in >= 0 && out >= 0;
	while (ok && (n = read(in, buf, sizeof(buf))) > 0) {
		if (first && (n < 16 || !strncmp(buf, "0000000000000000", 16)))
			ok = false;
		first = false;
		ok = ok && hs_write_all(out, buf, (size_t)n, HS_AT_POS) == 0;
	}
	ok = ok && !first && n == 0;
	if (in >= 0)
		close(in);
	if (!ok && out >= 0) {
		close(out);
		out = -1;
	}
	return out;
}

/* A new fd of the cached symbols (the caller closes it), or -1. */
static int ksyms_fd(void)
{
	const hs_tracefs_api *api = hs_tracefs_api_get();
	pthread_mutex_lock(&g_ksyms_mu);
	uint64_t h = hash_file(api->modules);
	if (g_ksyms_fd < 0 || h != g_ksyms_modules || strcmp(g_ksyms_path, api->kallsyms)) {
		int fd = ksyms_read(api->kallsyms);
		if (fd >= 0) {
			if (g_ksyms_fd >= 0)
				close(g_ksyms_fd);
			g_ksyms_fd = fd;
			g_ksyms_modules = h;
			snprintf(g_ksyms_path, sizeof g_ksyms_path, "%s", api->kallsyms);
		}
	}
	int r = g_ksyms_fd >= 0 ? fcntl(g_ksyms_fd, F_DUPFD_CLOEXEC, 0) : -1;
	pthread_mutex_unlock(&g_ksyms_mu);
	return r;
}

/* ---- our own BUFFER section ----
 * What libtracecmd's tracecmd_append_cpu_data writes in a v7 file (trace-output.c,
 * out_write_cpu_data), with CPU data compressed beforehand in parallel (datz.c)
 * instead of one CPU after another in the calling thread:
 *   the CPU count option, the pending options (an options section);
 *   the BUFFER section: header (id 3, flags 1 = compressed, no description
 *   string: libtracecmd's string table is private, and readers do not use it),
 *   each CPU's chunk count and chunks at a page-aligned offset;
 *   the BUFFER option (section offset, name "" = top instance, clock, page
 *   size, CPUs with data: id, offset, compressed size without the count), in a
 *   new options section that the previous one links to.
 * libtracecmd's close then writes its string table, as always.
 * Each CPU's data lands where the option says, so CPUs go into the section in
 * the order they are handed in, from any thread (a snapshot's CPU threads
 * write their own as each finishes compressing); readers (libtracecmd's and
 * ours) go by the option's offsets. */

#define DAT_SECTION_BUFFER 3 /* TRACECMD_OPTION_BUFFER: section and option id */
#define DAT_SECTION_COMPRESSED 1
#define DAT_SECTION_HEADER 16 /* id u16, flags u16, description i32, size u64 */

/* A trace.dat being written: "<path>.tmp" until it is complete. */
struct hs_dat_file {
	struct tracecmd_output *h; /* owns the file's first descriptor */
	int fd;                    /* that descriptor until the handle owns it */
	int keep;                  /* a duplicate sharing its offset: our own writes, the final sync */
	char *path, *tmp;
	bool header_only;
	hs_dat_prep *prep; /* the prepared headers, until the end (its tracing directory) */
	char *fake;        /* a private tracing directory of this write, or NULL */
	int comm_fd;
	const hs_msg *msg;
	bool quiet_enospc;
	/* The BUFFER section, when the CPU data comes compressed (hs_dat_open). */
	int ncpu;
	size_t page_size;
	char *clock;
	uint64_t sec;       /* its header's offset */
	pthread_mutex_t mu; /* next and err, for writers in several threads */
	bool mu_made;
	uint64_t next;                /* where the next CPU's data may start, before alignment */
	uint64_t *cpu_off, *cpu_size; /* [ncpu]: where each CPU's count is, its size without it; 0: no data */
	int err;                      /* the first failed put's errno */
};

/* The CPU count, the pending options, and the BUFFER section's header. */
static int section_begin(hs_dat_file *f, int ncpu, const hs_dat_opts *o)
{
	/* libtracecmd names the top instance's clock when none was set. */
	char *top = o->clock ? NULL : hs_tracefs_api_get()->get_clock(NULL);
	f->clock = strdup(o->clock ? o->clock : top ? top : "local");
	free(top);
	f->ncpu = ncpu;
	f->page_size = o->page_size;
	f->cpu_off = calloc((size_t)ncpu, sizeof(*f->cpu_off));
	f->cpu_size = calloc((size_t)ncpu, sizeof(*f->cpu_size));
	if (!f->clock || !f->cpu_off || !f->cpu_size || !o->page_size) {
		errno = f->clock && f->cpu_off && f->cpu_size ? EINVAL : ENOMEM;
		return -1;
	}
	if (pthread_mutex_init(&f->mu, NULL)) {
		errno = ENOMEM;
		return -1;
	}
	f->mu_made = true;
	if (!o->compress) {
		errno = EINVAL;
		return -1;
	}
	if (tracecmd_write_cpus(f->h, ncpu) < 0 || tracecmd_write_options(f->h) < 0)
		return -1;
	off_t sec = lseek(f->keep, 0, SEEK_END);
	if (sec < 0)
		return -1;
	uint16_t id = DAT_SECTION_BUFFER, flags = DAT_SECTION_COMPRESSED;
	int32_t desc = -1;
	uint64_t size = 0; /* set at the end */
	unsigned char hdr[DAT_SECTION_HEADER];
	memcpy(hdr, &id, 2);
	memcpy(hdr + 2, &flags, 2);
	memcpy(hdr + 4, &desc, 4);
	memcpy(hdr + 8, &size, 8);
	if (hs_write_all(f->keep, hdr, sizeof(hdr), HS_AT_POS))
		return -1;
	f->sec = (uint64_t)sec;
	f->next = f->sec + DAT_SECTION_HEADER;
	return 0;
}

hs_status hs_dat_put_cpu(hs_dat_file *f, unsigned cpu, const hs_datz *z)
{
	if (!f || !f->mu_made || cpu >= (unsigned)f->ncpu || f->cpu_size[cpu])
		return HS_EINVAL;
	/* libtracecmd lists only CPUs with data; a cut keeps the newest chunks. */
	uint64_t kept = hs_datz_kept_bytes(z);
	if (!kept)
		return HS_OK;
	uint32_t count = (uint32_t)(z->n - z->first);
	pthread_mutex_lock(&f->mu);
	/* Page-aligned like libtracecmd's (the gap is a hole, never written). */
	uint64_t off = (f->next + f->page_size - 1) & ~((uint64_t)f->page_size - 1);
	f->next = off + 4 + kept;
	pthread_mutex_unlock(&f->mu);
	/* In pieces: one pwrite of a CPU's 10-15 MB stayed 5-7 ms in this PREEMPT_NONE kernel (page cache pages
	 * taken and filled inside the call) while a 240 Hz game waited for the CPU (bench_frame_pacing --why) */
	bool bad = hs_write_all(f->keep, &count, 4, (int64_t)off) != 0;
	const unsigned char *data = z->data + z->chunks[z->first].off;
	for (uint64_t done = 0; !bad && done < kept; done += HS_LINUX_SNAPSHOT_WRITE_BYTES) {
		size_t n = kept - done < HS_LINUX_SNAPSHOT_WRITE_BYTES ? (size_t)(kept - done) : HS_LINUX_SNAPSHOT_WRITE_BYTES;
		bad = hs_write_all(f->keep, data + done, n, (int64_t)(off + 4 + done)) != 0;
	}
	if (bad) {
		int e = errno;
		pthread_mutex_lock(&f->mu);
		if (!f->err)
			f->err = e;
		pthread_mutex_unlock(&f->mu);
		return HS_EIO; /* the errno is kept for hs_dat_close */
	}
	/* Its writeback starts now, while the other CPUs are compressed: the
	 * final fdatasync then waits for what came after (the last CPU and the
	 * end), not for the whole file. The same writes, only earlier; a file
	 * system without it loses nothing. */
	sync_file_range(f->keep, (off64_t)off, (off64_t)(4 + kept), SYNC_FILE_RANGE_WRITE);
	f->cpu_off[cpu] = off;
	f->cpu_size[cpu] = kept; /* libtracecmd's size leaves out the chunk count */
	return HS_OK;
}

/* The section's size and the BUFFER option, once every CPU is in. */
static int section_end(hs_dat_file *f)
{
	int ret = -1;
	size_t clen = strlen(f->clock) + 1, olen = 8 + 1 + clen + 4 + 4 + (size_t)f->ncpu * 20, at = 0;
	unsigned char *opt = malloc(olen);
	if (f->err) {
		errno = f->err;
		goto fail;
	}
	if (!opt) {
		errno = ENOMEM;
		goto fail;
	}
	uint32_t page = (uint32_t)f->page_size, with_data = 0;
	memcpy(opt + at, &f->sec, 8);
	at += 8;
	opt[at++] = '\0'; /* the top instance */
	memcpy(opt + at, f->clock, clen);
	at += clen;
	memcpy(opt + at, &page, 4);
	at += 4;
	size_t count_at = at;
	at += 4;
	for (int c = 0; c < f->ncpu; c++) {
		if (!f->cpu_size[c])
			continue;
		uint32_t cpu = (uint32_t)c;
		memcpy(opt + at, &cpu, 4);
		memcpy(opt + at + 4, &f->cpu_off[c], 8);
		memcpy(opt + at + 12, &f->cpu_size[c], 8);
		at += 20;
		with_data++;
	}
	memcpy(opt + count_at, &with_data, 4);
	/* The section's size counts from after its header; the options follow the
	 * last CPU's data (an empty CPU's alignment is no part of the file). */
	uint64_t size = f->next - f->sec - DAT_SECTION_HEADER;
	if (hs_write_all(f->keep, &size, 8, (int64_t)(f->sec + 8)) || lseek(f->keep, (off_t)f->next, SEEK_SET) < 0)
		goto fail;
	if (!tracecmd_add_option(f->h, DAT_SECTION_BUFFER, (int)at, opt) || tracecmd_write_options(f->h) < 0)
		goto fail;
	ret = 0;
fail:
	free(opt);
	return ret;
}

/* ---- the writer ---- */

/* A libtracecmd handle on `fd` with everything before the comms written:
 * file header, compression, event formats, kernel symbols, printk formats.
 * NULL on failure (*step says which; `fd` is then still the caller's). */
static struct tracecmd_output *open_headers(int fd, const char *fake, const hs_dat_opts *o, const char *algo,
					    const char **step)
{
	int ks = -1;
	char kpath[64];
	*step = "creating";
	struct tracecmd_output *h = tracecmd_output_create_fd(fd);
	if (!h)
		return NULL;
	tracecmd_set_quiet(h, true);
	if (o->clock)
		tracecmd_set_out_clock(h, o->clock);
	if (fake && tracecmd_output_set_trace_dir(h, fake) < 0)
		goto fail;
	*step = "setting the compression of";
	if (o->compress && tracecmd_output_set_compression(h, algo) < 0)
		goto fail;
	/* An empty kallsyms section instead of /proc/kallsyms: the headers would
	 * otherwise be rewritten at 5 MB on every flush of a key-event file. With
	 * them, the copy read once per module change (ksyms_fd). */
	*step = "leaving kernel symbols out of";
	if (!o->kallsyms && tracecmd_output_set_kallsyms(h, "/dev/null") < 0)
		goto fail;
	*step = "reading the kernel symbols for";
	if (o->kallsyms && (ks = ksyms_fd()) >= 0) {
		snprintf(kpath, sizeof(kpath), "/proc/self/fd/%d", ks);
		if (tracecmd_output_set_kallsyms(h, kpath) < 0)
			goto fail;
	}
	*step = "writing the headers of";
	if (tracecmd_output_write_headers(h, o->events) < 0)
		goto fail;
	if (ks >= 0)
		close(ks);
	return h;
fail:
	if (ks >= 0)
		close(ks);
	/* The handle would close fd; the caller owns it on failure. */
	int keep = dup(fd);
	tracecmd_output_close(h);
	if (keep >= 0) {
		dup2(keep, fd);
		close(keep);
	}
	return NULL;
}

/*
 * Headers written ahead of time. A ring snapshot's headers (formats, 5 MB of
 * kernel symbols, printk formats, all compressed) took 0.35-0.49 s of one CPU
 * here, more than the drain; they do not change between snapshots, so the
 * handle that wrote them into a memfd is kept, and the next snapshot copies
 * those bytes into its file and moves the handle onto it (dup2 over the
 * handle's descriptor, at the same offset) before libtracecmd goes on with
 * the comms and options. libtracecmd keeps no file offsets of its own besides
 * the ones it seeks back to inside what it writes later, and the first
 * options section's link, which lands in the copied header at the same place.
 * Resuming through libtracecmd's reader (tracecmd_get_output_handle_fd)
 * instead parses the symbols back: 0.2 s.
 */
struct hs_dat_prep {
	struct tracecmd_output *h;
	int hfd;     /* the handle's descriptor number: the memfd until a write swaps in its file */
	int comm_fd; /* what the private tracing directory's saved_cmdlines links to */
	char *fake;  /* that directory's path (the handle has it), or NULL */
	bool fake_made; /* it exists, made by us: only while the headers or a write need it */
	uint64_t bytes;
};

void hs_dat_prep_free(hs_dat_prep *p)
{
	if (!p)
		return;
	if (p->h)
		tracecmd_output_close(p->h); /* closes hfd */
	else if (p->hfd >= 0)
		close(p->hfd);
	if (p->comm_fd >= 0)
		close(p->comm_fd);
	if (p->fake_made)
		hs_dat_remove_dir(p->fake);
	free(p->fake);
	free(p);
}

uint64_t hs_dat_prep_bytes(const hs_dat_prep *p)
{
	return p ? p->bytes : 0;
}

hs_status hs_dat_prep_new(const char *near, const hs_dat_opts *o, hs_dat_prep **out)
{
	hs_status st = HS_ENOMEM;
	const char *step = "allocating";
	hs_dat_prep *p = calloc(1, sizeof(*p));
	hs_dat_opts m = *o;
	*out = NULL;
	if (!p)
		goto fail;
	p->hfd = p->comm_fd = -1;
	m.compress = true;
	st = HS_EIO;
	if ((p->comm_fd = comms_file()) >= 0)
		p->fake_made = (p->fake = fake_tracing_dir(near, p->comm_fd)) != NULL;
	step = "creating";
	if ((p->hfd = memfd_create("hs-dat-headers", MFD_CLOEXEC)) < 0)
		goto fail;
	if (!(p->h = open_headers(p->hfd, p->fake, &m, "zstd", &step)))
		goto fail;
	/* Not left in the run folder between snapshots (an engine killed then
	 * would leave it): the write that uses these headers makes it again,
	 * with only what libtracecmd still reads from it, saved_cmdlines. */
	if (p->fake)
		hs_dat_remove_dir(p->fake);
	off_t end = lseek(p->hfd, 0, SEEK_CUR);
	if (end <= 0 || end != lseek(p->hfd, 0, SEEK_END))
		goto fail;
	p->bytes = (uint64_t)end;
	*out = p;
	return HS_OK;
fail:
	hs_msg_say(o->msg, HS_MSG_WARN, "ftrace", "failed %s the .dat headers prepared for the next snapshot: %s", step,
		   strerror(errno));
	hs_dat_prep_free(p);
	return st;
}

/* Makes the prepared headers' private tracing directory again, with the
 * comms read now. A folder of that name made by anyone else in between is
 * not ours to read: mkdir fails, and the write goes without the preparation. */
static int prep_ready(hs_dat_prep *p)
{
	if (p->comm_fd >= 0)
		comms_fill(p->comm_fd); /* on failure the table of the preparation stays */
	if (!p->fake)
		return 0;
	char link[4200], to[64];
	snprintf(link, sizeof(link), "%s/saved_cmdlines", p->fake);
	snprintf(to, sizeof(to), "/proc/self/fd/%d", p->comm_fd);
	if (mkdir(p->fake, 0700))
		return -1;
	p->fake_made = true;
	return symlink(to, link);
}

/* Puts the prepared headers into `fd` (the new file, empty) and the handle on
 * it. Returns the handle, or NULL (errno set). */
static struct tracecmd_output *take_prep(hs_dat_prep *p, int fd)
{
	off_t off = 0;
	while ((uint64_t)off < p->bytes) {
		ssize_t n = sendfile(fd, p->hfd, &off, (size_t)(p->bytes - (uint64_t)off));
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return NULL;
		}
	}
	if (dup2(fd, p->hfd) < 0)
		return NULL;
	struct tracecmd_output *h = p->h;
	p->h = NULL;
	p->hfd = -1; /* the handle's again, now the file */
	return h;
}

static void file_free(hs_dat_file *f, bool remove_tmp)
{
	if (!f)
		return;
	if (f->h)
		tracecmd_output_close(f->h);
	if (f->fd >= 0)
		close(f->fd);
	if (f->keep >= 0)
		close(f->keep);
	if (remove_tmp && f->tmp && !f->header_only)
		unlink(f->tmp);
	hs_dat_prep_free(f->prep);
	if (f->fake) {
		hs_dat_remove_dir(f->fake);
		free(f->fake);
	}
	if (f->comm_fd >= 0)
		close(f->comm_fd);
	if (f->mu_made)
		pthread_mutex_destroy(&f->mu);
	free(f->cpu_off);
	free(f->cpu_size);
	free(f->clock);
	free(f->path);
	free(f->tmp);
	free(f);
}

/* Says why a write failed (a full disk only when the caller does not) and
 * removes what it wrote; o->err gets the errno. */
static hs_status file_fail(hs_dat_file *f, hs_dat_opts *o, const char *step, const char *path)
{
	int err = errno;
	if (!(o->quiet_enospc && (err == ENOSPC || err == EDQUOT)))
		hs_msg_say(o->msg, HS_MSG_ERROR, "ftrace", "failed %s %s: %s", step, f && f->tmp ? f->tmp : path,
			   strerror(err));
	file_free(f, true);
	o->err = err;
	return HS_EIO;
}

/* Creates "<path>.tmp" (or, header_only, a memfd) and writes everything
 * before the CPU data: the headers (prepared or now) and the comms. `ours`:
 * the CPU data will come compressed by datz.c. */
static hs_status file_begin(const char *path, bool ours, hs_dat_opts *o, hs_dat_file **out)
{
	const char *step = "allocating";
	hs_dat_prep *prep = o->prep;
	hs_dat_file *f = calloc(1, sizeof(*f));
	size_t n = strlen(path);
	*out = NULL;
	o->prep = NULL; /* consumed, whatever happens */
	o->err = 0;
	o->header_bytes = o->file_bytes = 0;
	o->sync_s = 0;
	o->prepared = false;
	if (!f) {
		hs_dat_prep_free(prep);
		errno = ENOMEM;
		return file_fail(NULL, o, step, path);
	}
	f->fd = f->keep = f->comm_fd = -1;
	f->prep = prep;
	f->header_only = o->header_only;
	f->msg = o->msg;
	f->quiet_enospc = o->quiet_enospc;
	if (!(f->path = strdup(path)) || !(f->tmp = malloc(n + 5))) {
		errno = ENOMEM;
		return file_fail(f, o, step, path);
	}
	memcpy(f->tmp, path, n);
	memcpy(f->tmp + n, ".tmp", 5);
	if (f->prep && (o->header_only || !ours || !o->compress)) {
		errno = EINVAL;
		return file_fail(f, o, step, path);
	}
	if (!o->header_only)
		unlink(f->tmp);
	if (f->prep && prep_ready(f->prep)) {
		hs_msg_say(o->msg, HS_MSG_WARN, "ftrace", "cannot use the prepared headers for %s (%s): writing them now",
			   path, strerror(errno));
		hs_dat_prep_free(f->prep);
		f->prep = NULL;
	}
	o->prepared = f->prep != NULL;
	if (!f->prep && (f->comm_fd = comms_file()) >= 0) {
		char *d = strdup(path);
		f->fake = d ? fake_tracing_dir(dirname(d), f->comm_fd) : NULL;
		free(d);
	}
	step = "creating";
	/* Our own fd: 0600 like everything in a run folder (libtracecmd's create
	 * makes 0644), and a duplicate to sync after libtracecmd closes it. */
	f->fd = o->header_only ? memfd_create("hs-header", MFD_CLOEXEC)
			       : open(f->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f->fd < 0 || (f->keep = dup(f->fd)) < 0)
		return file_fail(f, o, step, path);
	/* Compression: libtracecmd's best algorithm ("any": zstd when it was
	 * built with it); zstd by name when the CPU data comes compressed by us
	 * (datz.c), as the prepared headers always are. */
	if (f->prep) {
		step = "writing the prepared headers into";
		if (!(f->h = take_prep(f->prep, f->fd)))
			return file_fail(f, o, step, path);
		close(f->fd);
	} else if (!(f->h = open_headers(f->fd, f->fake, o, ours ? "zstd" : "any", &step))) {
		return file_fail(f, o, step, path);
	}
	f->fd = -1; /* the handle owns it */
	step = "writing the command lines of";
	if (tracecmd_write_cmdlines(f->h) < 0)
		return file_fail(f, o, step, path);
	off_t hdr = lseek(f->keep, 0, SEEK_CUR);
	o->header_bytes = hdr > 0 ? (uint64_t)hdr : 0;
	*out = f;
	return HS_OK;
}

/* Closes libtracecmd's handle (its string table), syncs once, and publishes
 * the file by renaming it. Frees f. */
static hs_status file_finish(hs_dat_file *f, hs_dat_opts *o)
{
	tracecmd_output_close(f->h);
	f->h = NULL;
	/* One sync at the end, not per write: a snapshot must not cause an I/O
	 * storm beside a game; the rename then publishes a complete file. */
	const char *step = "syncing";
	struct stat sb;
	struct timespec s0, s1;
	clock_gettime(CLOCK_MONOTONIC, &s0);
	if (fdatasync(f->keep) || fstat(f->keep, &sb))
		return file_fail(f, o, step, f->path);
	clock_gettime(CLOCK_MONOTONIC, &s1);
	o->sync_s = (double)(s1.tv_sec - s0.tv_sec) + (double)(s1.tv_nsec - s0.tv_nsec) / 1e9;
	o->file_bytes = (uint64_t)sb.st_size;
	close(f->keep);
	f->keep = -1;
	step = "renaming";
	if (rename(f->tmp, f->path))
		return file_fail(f, o, step, f->path);
	char *d = strdup(f->path);
	int dfd = d ? open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(d);
	file_free(f, false);
	return HS_OK;
}

hs_status hs_dat_write_opts(const char *path, int ncpu, char *const *cpu_files, hs_dat_opts *o)
{
	hs_dat_file *f;
	hs_status st = file_begin(path, o->zcpu != NULL, o, &f);
	if (st != HS_OK)
		return st;
	if (o->header_only) {
		file_free(f, false);
		return HS_OK;
	}
	if (o->zcpu) {
		if (section_begin(f, ncpu, o))
			return file_fail(f, o, "writing the ring data of", path);
		for (int c = 0; c < ncpu; c++)
			hs_dat_put_cpu(f, (unsigned)c, &o->zcpu[c]);
		if (section_end(f))
			return file_fail(f, o, "writing the ring data of", path);
	} else if (tracecmd_append_cpu_data(f->h, ncpu, cpu_files) < 0) {
		return file_fail(f, o, "writing the ring data of", path);
	}
	return file_finish(f, o);
}

hs_status hs_dat_open(const char *path, int ncpu, hs_dat_opts *o, hs_dat_file **out)
{
	hs_dat_file *f;
	*out = NULL;
	if (o->header_only || o->zcpu || !o->compress) {
		hs_dat_prep_free(o->prep);
		o->prep = NULL;
		return HS_EINVAL;
	}
	hs_status st = file_begin(path, true, o, &f);
	if (st != HS_OK)
		return st;
	if (section_begin(f, ncpu, o))
		return file_fail(f, o, "writing the ring data of", path);
	*out = f;
	return HS_OK;
}

hs_status hs_dat_close(hs_dat_file *f, hs_dat_opts *o)
{
	o->err = 0;
	o->file_bytes = 0;
	o->sync_s = 0;
	if (section_end(f))
		return file_fail(f, o, "writing the ring data of", f->path);
	return file_finish(f, o);
}

void hs_dat_abort(hs_dat_file *f)
{
	file_free(f, true);
}

hs_status hs_dat_write(const char *path, const char *clock, int ncpu, char *const *cpu_files,
		       struct hs_dat_event_list *events, bool kallsyms, const hs_msg *msg)
{
	hs_dat_opts o = {.clock = clock, .events = events, .kallsyms = kallsyms, .msg = msg};
	return hs_dat_write_opts(path, ncpu, cpu_files, &o);
}

hs_status hs_dat_check_cpu_bytes(uint64_t per_cpu_bytes, char *why, size_t why_len)
{
	if (per_cpu_bytes <= HS_LINUX_DAT_MAX_CPU_BYTES)
		return HS_OK;
	if (why && why_len)
		snprintf(why, why_len,
			 "%llu MB per CPU is more than libtracecmd " HS_LIBTRACECMD_VERSION " can write in one .dat "
			 "(%llu MB per CPU: it keeps sizes in 32-bit ints); a snapshot would keep only the newest %llu MB "
			 "of each CPU",
			 (unsigned long long)(per_cpu_bytes >> 20), (unsigned long long)(HS_LINUX_DAT_MAX_CPU_BYTES >> 20),
			 (unsigned long long)(HS_LINUX_DAT_MAX_CPU_BYTES >> 20));
	return HS_ELIMIT;
}

uint64_t hs_dat_count_events(const void *buf, size_t len, size_t subbuf)
{
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	uint64_t n = 0;
	if (!kb)
		return 0;
	for (size_t off = 0; off + subbuf <= len; off += subbuf)
		n += hs_dat_count_page(kb, (char *)buf + off);
	kbuffer_free(kb);
	return n;
}

unsigned hs_dat_count_page(struct kbuffer *kb, void *page)
{
	unsigned long long ts;
	unsigned n = 0;
	if (kbuffer_load_subbuffer(kb, page) < 0)
		return 0;
	for (void *ev = kbuffer_read_event(kb, &ts); ev; ev = kbuffer_next_event(kb, &ts))
		n++;
	return n;
}
