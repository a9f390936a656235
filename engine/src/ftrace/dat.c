/* ftrace/dat.c: writes trace-cmd's trace.dat from raw per-CPU ring pages, through libtracecmd's output API. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <traceevent/kbuffer.h>

#include "ftrace/ftrace.h"

/*
 * libtracecmd exports its output API but ships the declarations only in the
 * private trace-cmd-private.h, which Debian's -dev package leaves out. These
 * match libtracecmd 1.x (trace-cmd 3.x); CMake refuses other majors, because
 * append_buffer_cpu_data changed its arguments between 2.x and 3.x.
 */
struct tracecmd_output;
struct tracecmd_output *tracecmd_output_create(const char *output_file);
void tracecmd_set_quiet(struct tracecmd_output *handle, bool set_quiet);
void tracecmd_set_out_clock(struct tracecmd_output *handle, const char *clock);
int tracecmd_output_set_kallsyms(struct tracecmd_output *handle, const char *kallsyms);
int tracecmd_output_write_headers(struct tracecmd_output *handle, struct hs_dat_event_list *list);
int tracecmd_write_cmdlines(struct tracecmd_output *handle);
int tracecmd_append_cpu_data(struct tracecmd_output *handle, int cpus, char *const *cpu_data_files);
void tracecmd_output_close(struct tracecmd_output *handle);

static hs_status fsync_path(const char *path, bool dir)
{
	int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		return HS_EIO;
	int rc = fsync(fd);
	close(fd);
	return rc ? HS_EIO : HS_OK;
}

hs_status hs_dat_write(const char *path, const char *clock, int ncpu, char *const *cpu_files,
		       struct hs_dat_event_list *events, bool kallsyms, FILE *msg)
{
	hs_status st = HS_EIO;
	struct tracecmd_output *h = NULL;
	size_t n = strlen(path);
	char *tmp = malloc(n + 5), *dirbuf = strdup(path);
	const char *step = "allocating";
	if (!tmp || !dirbuf) {
		st = HS_ENOMEM;
		goto fail;
	}
	memcpy(tmp, path, n);
	memcpy(tmp + n, ".tmp", 5);
	unlink(tmp);
	step = "creating";
	h = tracecmd_output_create(tmp);
	if (!h)
		goto fail;
	tracecmd_set_quiet(h, true);
	if (clock)
		tracecmd_set_out_clock(h, clock);
	/* An empty kallsyms section instead of /proc/kallsyms: the headers would
	 * otherwise be rewritten at 5 MB on every flush of a key-event file. */
	step = "leaving kernel symbols out of";
	if (!kallsyms && tracecmd_output_set_kallsyms(h, "/dev/null") < 0)
		goto fail;
	step = "writing the headers of";
	if (tracecmd_output_write_headers(h, events) < 0)
		goto fail;
	step = "writing the command lines of";
	if (tracecmd_write_cmdlines(h) < 0)
		goto fail;
	step = "writing the ring data of";
	if (tracecmd_append_cpu_data(h, ncpu, cpu_files) < 0)
		goto fail;
	tracecmd_output_close(h);
	h = NULL;
	step = "syncing";
	if (fsync_path(tmp, false) != HS_OK)
		goto fail;
	step = "renaming";
	if (rename(tmp, path))
		goto fail;
	fsync_path(dirname(dirbuf), true);
	free(tmp);
	free(dirbuf);
	return HS_OK;
fail:
	if (msg)
		fprintf(msg, "engine: failed %s %s: %s\n", step, tmp ? tmp : path, strerror(errno));
	if (h)
		tracecmd_output_close(h);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(dirbuf);
	return st;
}

uint64_t hs_dat_count_events(const void *buf, size_t len, size_t subbuf)
{
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	uint64_t n = 0;
	if (!kb)
		return 0;
	for (size_t off = 0; off + subbuf <= len; off += subbuf) {
		unsigned long long ts;
		if (kbuffer_load_subbuffer(kb, (char *)buf + off) < 0)
			continue;
		for (void *ev = kbuffer_read_event(kb, &ts); ev; ev = kbuffer_next_event(kb, &ts))
			n++;
	}
	kbuffer_free(kb);
	return n;
}
