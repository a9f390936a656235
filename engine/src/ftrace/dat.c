/* ftrace/dat.c: writes trace-cmd's trace.dat from raw per-CPU ring pages, through libtracecmd's output API. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>
#include <tracefs/tracefs.h>

#include "ftrace/ftrace.h"
#include "hindsight/limits.h"

/*
 * libtracecmd exports its output API but ships the declarations only in the
 * private trace-cmd-private.h, which Debian's -dev package leaves out. These
 * match libtracecmd 1.x (trace-cmd 3.x); CMake refuses other majors, because
 * append_buffer_cpu_data changed its arguments between 2.x and 3.x.
 */
struct tracecmd_output;
struct tracecmd_compression;
struct tracecmd_msg_handle;
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
struct tracecmd_compression *tracecmd_compress_alloc(const char *name, const char *version, int fd,
						     struct tep_handle *tep, struct tracecmd_msg_handle *msg);
void tracecmd_compress_destroy(struct tracecmd_compression *handle);
int tracecmd_compress_copy_from(struct tracecmd_compression *handle, int fd, int chunk_size,
				unsigned long long *read_size, unsigned long long *write_size);

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

/* A memfd holding saved_cmdlines' format ("pid comm\n") for every known pid. */
static int comms_file(void)
{
	char *text = tracefs_instance_file_read(NULL, "saved_cmdlines", NULL);
	if (text)
		comms_merge(text);
	free(text);
	if (!g_comms)
		return -1;
	int fd = memfd_create("hs-cmdlines", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(dup(fd), "w");
	if (!f) {
		close(fd);
		return -1;
	}
	for (size_t i = 0; i < HS_LINUX_COMM_CACHE; i++)
		if (g_comms[i].pid)
			fprintf(f, "%d %s\n", g_comms[i].pid, g_comms[i].comm);
	if (fclose(f)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A private tracing directory: links to everything in the real one but
 * saved_cmdlines, which points at `comm_fd`. Returns the malloc'd path, or NULL
 * (the caller then lets libtracecmd read the real directory). */
static char *fake_tracing_dir(const char *near, int comm_fd)
{
	const char *real = tracefs_tracing_dir();
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

/* ---- our own BUFFER section ----
 * What libtracecmd's tracecmd_append_cpu_data writes in a v7 file (trace-output.c,
 * out_write_cpu_data), with CPU data compressed beforehand in parallel (datz.c)
 * instead of one CPU after another in the calling thread:
 *   the CPU count option, the pending options (an options section);
 *   the BUFFER section: header (id 3, flags 1 = compressed, no description
 *   string: libtracecmd's string table is private, and readers do not use it),
 *   each CPU's chunks at a page-aligned offset;
 *   the BUFFER option (section offset, name "" = top instance, clock, page
 *   size, CPUs with data: id, offset, compressed size without the count), in a
 *   new options section that the previous one links to.
 * libtracecmd's close then writes its string table, as always. */

#define DAT_SECTION_BUFFER 3 /* TRACECMD_OPTION_BUFFER: section and option id */
#define DAT_SECTION_COMPRESSED 1

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* `fd` shares its file offset with libtracecmd's handle (a dup), so what it
 * writes lands where libtracecmd expects the next section. */
static int write_buffer_section(struct tracecmd_output *h, int fd, int ncpu, const hs_datz *z, size_t page_size,
				const char *clock)
{
	int ret = -1;
	size_t clen = strlen(clock) + 1, olen = 8 + 1 + clen + 4 + 4 + (size_t)ncpu * 20, at = 0;
	unsigned char *opt = malloc(olen);
	off_t sec = lseek(fd, 0, SEEK_END);
	if (!opt || sec < 0)
		goto fail;
	uint64_t sec_u = (uint64_t)sec, size = 0;
	uint16_t id = DAT_SECTION_BUFFER, flags = DAT_SECTION_COMPRESSED;
	int32_t desc = -1;
	unsigned char hdr[16];
	memcpy(hdr, &id, 2);
	memcpy(hdr + 2, &flags, 2);
	memcpy(hdr + 4, &desc, 4);
	memcpy(hdr + 8, &size, 8);
	if (write_all(fd, hdr, sizeof(hdr)))
		goto fail;
	uint32_t page = (uint32_t)page_size, with_data = 0;
	memcpy(opt + at, &sec_u, 8);
	at += 8;
	opt[at++] = '\0'; /* the top instance */
	memcpy(opt + at, clock, clen);
	at += clen;
	memcpy(opt + at, &page, 4);
	at += 4;
	size_t count_at = at;
	at += 4;
	for (int c = 0; c < ncpu; c++) {
		off_t pos = lseek(fd, 0, SEEK_CUR);
		if (pos < 0)
			goto fail;
		/* Page-aligned like libtracecmd's (a hole, not written). */
		uint64_t off = ((uint64_t)pos + page_size - 1) & ~((uint64_t)page_size - 1);
		if (lseek(fd, (off_t)off, SEEK_SET) < 0)
			goto fail;
		if (!z[c].raw) /* libtracecmd lists only CPUs with data */
			continue;
		if (write_all(fd, z[c].data, z[c].len))
			goto fail;
		uint32_t cpu = (uint32_t)c;
		uint64_t wsize = z[c].len - 4; /* libtracecmd's size leaves out the chunk count */
		memcpy(opt + at, &cpu, 4);
		memcpy(opt + at + 4, &off, 8);
		memcpy(opt + at + 12, &wsize, 8);
		at += 20;
		with_data++;
	}
	memcpy(opt + count_at, &with_data, 4);
	/* Back to the end: an empty last CPU's alignment is no part of the file. */
	off_t end = lseek(fd, 0, SEEK_END);
	if (end < 0)
		goto fail;
	/* The section's size counts from after its header. */
	size = (uint64_t)end - sec_u - sizeof(hdr);
	if (pwrite(fd, &size, 8, sec + 8) != 8)
		goto fail;
	if (!tracecmd_add_option(h, DAT_SECTION_BUFFER, (int)at, opt) || tracecmd_write_options(h) < 0)
		goto fail;
	ret = 0;
fail:
	free(opt);
	return ret;
}

/* ---- the writer ---- */

hs_status hs_dat_write_opts(const char *path, int ncpu, char *const *cpu_files, hs_dat_opts *o)
{
	hs_status st = HS_EIO;
	struct tracecmd_output *h = NULL;
	size_t n = strlen(path);
	char *tmp = malloc(n + 5), *dirbuf = strdup(path), *dirbuf2 = strdup(path), *fake = NULL;
	const char *step = "allocating";
	int fd = -1, keep = -1, comm_fd = -1, err = 0;
	o->err = 0;
	o->header_bytes = o->file_bytes = 0;
	if (!tmp || !dirbuf || !dirbuf2) {
		st = HS_ENOMEM;
		goto fail;
	}
	memcpy(tmp, path, n);
	memcpy(tmp + n, ".tmp", 5);
	if (!o->header_only)
		unlink(tmp);
	if ((comm_fd = comms_file()) >= 0)
		fake = fake_tracing_dir(dirname(dirbuf2), comm_fd);
	step = "creating";
	/* Our own fd: 0600 like everything in a run folder (libtracecmd's create
	 * makes 0644), and a duplicate to sync after libtracecmd closes it. */
	fd = o->header_only ? memfd_create("hs-header", MFD_CLOEXEC)
			    : open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || (keep = dup(fd)) < 0)
		goto fail;
	h = tracecmd_output_create_fd(fd);
	if (!h)
		goto fail;
	fd = -1; /* the handle owns it */
	tracecmd_set_quiet(h, true);
	if (o->clock)
		tracecmd_set_out_clock(h, o->clock);
	if (fake && tracecmd_output_set_trace_dir(h, fake) < 0)
		goto fail;
	/* libtracecmd's best algorithm ("any": zstd when it was built with it);
	 * zstd by name when the CPU data comes compressed by us (datz.c). */
	step = "setting the compression of";
	if (o->compress && tracecmd_output_set_compression(h, o->zcpu ? "zstd" : "any") < 0)
		goto fail;
	/* An empty kallsyms section instead of /proc/kallsyms: the headers would
	 * otherwise be rewritten at 5 MB on every flush of a key-event file. */
	step = "leaving kernel symbols out of";
	if (!o->kallsyms && tracecmd_output_set_kallsyms(h, "/dev/null") < 0)
		goto fail;
	step = "writing the headers of";
	if (tracecmd_output_write_headers(h, o->events) < 0)
		goto fail;
	step = "writing the command lines of";
	if (tracecmd_write_cmdlines(h) < 0)
		goto fail;
	off_t hdr = lseek(keep, 0, SEEK_CUR);
	o->header_bytes = hdr > 0 ? (uint64_t)hdr : 0;
	if (o->header_only) {
		tracecmd_output_close(h);
		h = NULL;
		st = HS_OK;
		goto out;
	}
	step = "writing the ring data of";
	if (o->zcpu) {
		/* libtracecmd names the top instance's clock when none was set. */
		char *top = o->clock ? NULL : tracefs_get_clock(NULL);
		const char *clock = o->clock ? o->clock : top ? top : "local";
		int r = !o->compress || tracecmd_write_cpus(h, ncpu) < 0 || tracecmd_write_options(h) < 0 ||
			write_buffer_section(h, keep, ncpu, o->zcpu, o->page_size, clock) < 0;
		free(top);
		if (r) {
			if (!o->compress)
				errno = EINVAL;
			goto fail;
		}
	} else if (tracecmd_append_cpu_data(h, ncpu, cpu_files) < 0)
		goto fail;
	tracecmd_output_close(h);
	h = NULL;
	/* One sync at the end, not per write: a snapshot must not cause an I/O
	 * storm beside a game; the rename then publishes a complete file. */
	step = "syncing";
	struct stat sb;
	if (fdatasync(keep) || fstat(keep, &sb))
		goto fail;
	o->file_bytes = (uint64_t)sb.st_size;
	close(keep);
	keep = -1;
	step = "renaming";
	if (rename(tmp, path))
		goto fail;
	int dfd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	st = HS_OK;
	goto out;
fail:
	err = errno;
	if (!(o->quiet_enospc && (err == ENOSPC || err == EDQUOT)))
		hs_msg_say(o->msg, HS_MSG_ERROR, "ftrace", "failed %s %s: %s", step, tmp ? tmp : path, strerror(err));
	if (h)
		tracecmd_output_close(h);
	if (fd >= 0)
		close(fd);
	if (tmp && !o->header_only)
		unlink(tmp);
	o->err = err;
out:
	if (keep >= 0)
		close(keep);
	if (fake) {
		hs_dat_remove_dir(fake);
		free(fake);
	}
	if (comm_fd >= 0)
		close(comm_fd);
	free(tmp);
	free(dirbuf);
	free(dirbuf2);
	return st;
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

double hs_dat_compression_ratio(int fd, uint64_t off, uint64_t len, size_t subbuf)
{
	double ratio = 1.0;
	struct tep_handle *tep = tep_alloc();
	int out = memfd_create("hs-sample", MFD_CLOEXEC);
	struct tracecmd_compression *c = NULL;
	unsigned long long rsize = len, wsize = 0;
	if (!tep || out < 0 || !len)
		goto out;
	if (!(c = tracecmd_compress_alloc(NULL, NULL, out, tep, NULL)))
		goto out; /* no compression: the data is written as it is */
	/* The same chunking as libtracecmd's own CPU-data copy (10 pages). */
	if (lseek(fd, (off_t)off, SEEK_SET) == (off_t)-1 ||
	    tracecmd_compress_copy_from(c, fd, (int)(10 * subbuf), &rsize, &wsize) < 0 || !rsize)
		goto out;
	ratio = (double)wsize / (double)rsize;
out:
	if (c)
		tracecmd_compress_destroy(c);
	if (out >= 0)
		close(out);
	if (tep)
		tep_free(tep);
	return ratio;
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
