/* snapshot-compat.c: the snapshot's own compressed CPU-data writer gives the same trace.dat contents as libtracecmd's. */
/*
 * Records a small ring (sched events under a fork/exec load), freezes and
 * drains it into memfds the way a snapshot does, then writes the same pages
 * four times: through libtracecmd's tracecmd_append_cpu_data (the old
 * writer), through the parallel-compressed BUFFER section (hs_dat_opts.zcpu),
 * through it with the headers prepared ahead (hs_dat_opts.prep), and in parts
 * as a snapshot's CPU threads write it (hs_dat_open, the CPUs put last first,
 * hs_dat_close). All must
 * give byte-identical `trace-cmd report` output (stderr too) and hold exactly
 * the drained events, read back; the compressor's own event count must equal
 * kbuffer's. Done for all CPUs and again with CPU 1 left empty (a CPU without
 * data is not listed).
 * usage: test_snapshot_compat DIR   (root, tracefs)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ftrace/ftrace.h"
#include "hindsight/limits.h"
#include "hindsight/tracedat.h"

#define CPUS_MAX 256

static int count_one(const hs_tracedat_record *r, void *ctx)
{
	(void)r;
	(*(uint64_t *)ctx)++;
	return 0;
}

static uint64_t dat_events(const char *path)
{
	hs_tracedat *td = NULL;
	uint64_t n = 0;
	hs_status st = hs_tracedat_open_ex(path, false, &td);
	if (st == HS_OK)
		st = hs_tracedat_foreach(td, count_one, &n);
	hs_tracedat_close(td);
	return st == HS_OK ? n : UINT64_MAX;
}

/* Forks and execs /bin/true back to back for `sec` seconds, one loop per CPU. */
static void load(int cpus, double sec)
{
	pid_t kids[CPUS_MAX];
	for (int i = 0; i < cpus; i++) {
		if ((kids[i] = fork()) == 0) {
			struct timespec t0, t;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			do {
				pid_t p = fork();
				if (p == 0) {
					execl("/bin/true", "true", (char *)NULL);
					_exit(127);
				}
				if (p > 0)
					waitpid(p, NULL, 0);
				clock_gettime(CLOCK_MONOTONIC, &t);
			} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < sec);
			_exit(0);
		}
	}
	for (int i = 0; i < cpus; i++)
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
}

/* Drains one CPU of the frozen ring into a memfd of whole zero-padded pages. */
static int drain(struct tracefs_instance *inst, int cpu, size_t subbuf, uint64_t *bytes)
{
	int fd = memfd_create("hs-compat", MFD_CLOEXEC);
	struct tracefs_cpu *tc = tracefs_cpu_open(inst, cpu, true);
	char *buf = malloc(subbuf);
	int n;
	*bytes = 0;
	if (fd < 0 || !tc || !buf) {
		fprintf(stderr, "FAIL: cannot drain CPU %d: %s\n", cpu, strerror(errno));
		exit(1);
	}
	while ((n = tracefs_cpu_flush(tc, buf)) > 0) {
		memset(buf + n, 0, subbuf - (size_t)n);
		if (write(fd, buf, subbuf) != (ssize_t)subbuf) {
			fprintf(stderr, "FAIL: memfd write: %s\n", strerror(errno));
			exit(1);
		}
		*bytes += subbuf;
	}
	tracefs_cpu_close(tc);
	free(buf);
	return fd;
}

static int report(const char *dat)
{
	char cmd[13000];
	snprintf(cmd, sizeof(cmd), "trace-cmd report -i '%s' > '%s.txt' 2> '%s.err'", dat, dat, dat);
	return system(cmd);
}

/* 0 when both files exist and are byte-identical. */
static int same(const char *a, const char *b)
{
	char cmd[8500];
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
	return system(cmd);
}

static bool same_index(const hs_datz *a, const hs_datz *b)
{
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		const hs_datz_chunk *x = &a->chunks[i], *y = &b->chunks[i];
		if (x->off != y->off || x->zlen != y->zlen || x->raw != y->raw || x->events != y->events ||
		    x->first_ts != y->first_ts || x->last_ts != y->last_ts)
			return false;
	}
	return a->n == b->n;
}

/* The same pages compressed chunk by chunk by two compressors taking turns
 * (hs_datz_pack) and appended in order (hs_datz_put), as a snapshot's CPU
 * threads share a ring's chunks, must equal `z` (hs_datz_add's) byte for
 * byte, index included; a chunk whose header does not match is refused. */
static int packed_same(const char *tag, int cpu, const unsigned char *pages, uint64_t bytes, size_t subbuf,
		       const hs_datz *z)
{
	hs_datz ctx[2] = {{0}}, t = {0};
	size_t chunk = subbuf * HS_LINUX_DAT_CHUNK_PAGES, cap = hs_datz_bound(chunk);
	unsigned char *out = malloc(cap);
	int fails = 0;
	hs_status st = out ? hs_datz_begin(&ctx[0], HS_LINUX_DAT_ZSTD_LEVEL) : HS_ENOMEM;
	if (st == HS_OK)
		st = hs_datz_begin(&ctx[1], HS_LINUX_DAT_ZSTD_LEVEL);
	size_t k = 0;
	for (uint64_t off = 0; st == HS_OK && off < bytes; off += chunk, k++) {
		size_t n = bytes - off < chunk ? (size_t)(bytes - off) : chunk;
		hs_datz_chunk c;
		st = hs_datz_pack(&ctx[k % 2], pages + off, n, subbuf, out, cap, &c);
		if (st == HS_OK && k == 0) {
			hs_datz_chunk bad = c;
			bad.zlen++;
			if (hs_datz_put(&t, out, &bad) != HS_EINVAL || t.n != 0) {
				fprintf(stderr, "FAIL: %s: CPU %d: hs_datz_put took a chunk whose header differs\n", tag,
					cpu);
				fails++;
			}
		}
		if (st == HS_OK)
			st = hs_datz_put(&t, out, &c);
	}
	if (st != HS_OK) {
		fprintf(stderr, "FAIL: %s: CPU %d: packing chunk %zu: %s\n", tag, cpu, k, hs_strerror(st));
		fails++;
	} else if (t.len != z->len || t.n != z->n || t.raw != z->raw || t.events != z->events ||
		   (t.len && memcmp(t.data, z->data, t.len)) || !same_index(&t, z)) {
		fprintf(stderr,
			"FAIL: %s: CPU %d: packed in turns and appended: %zu bytes, %zu chunks, %" PRIu64
			" events; compressed in one: %zu bytes, %zu chunks, %" PRIu64 " events (or the bytes differ)\n",
			tag, cpu, t.len, t.n, t.events, z->len, z->n, z->events);
		fails++;
	}
	hs_datz_free(&ctx[0]);
	hs_datz_free(&ctx[1]);
	hs_datz_free(&t);
	free(out);
	return fails;
}

/* Writes `fds` both ways under DIR/<tag>-{lib,own}.dat and compares them. */
static int compare(const char *dir, const char *tag, int cpus, const int *fds, const uint64_t *bytes, size_t subbuf,
		   uint64_t want)
{
	char lib[4096], own[4096], a[4200], b[4200], paths[CPUS_MAX][64];
	char *files[CPUS_MAX];
	hs_datz z[CPUS_MAX] = {{0}};
	int fails = 0;
	snprintf(lib, sizeof(lib), "%s/%s-lib.dat", dir, tag);
	snprintf(own, sizeof(own), "%s/%s-own.dat", dir, tag);
	for (int c = 0; c < cpus; c++) {
		snprintf(paths[c], sizeof(paths[c]), "/proc/self/fd/%d", fds[c]);
		files[c] = paths[c];
		void *map = bytes[c] ? mmap(NULL, bytes[c], PROT_READ, MAP_SHARED, fds[c], 0) : NULL;
		if (map == MAP_FAILED ||
		    hs_datz_compress(map, bytes[c], subbuf, HS_LINUX_DAT_ZSTD_LEVEL, &z[c]) != HS_OK) {
			fprintf(stderr, "FAIL: %s: cannot compress CPU %d\n", tag, c);
			return 1;
		}
		fails += packed_same(tag, c, map, bytes[c], subbuf, &z[c]);
		if (map)
			munmap(map, bytes[c]);
	}
	/* The old writer first: its comm table is then the one both files get. */
	hs_dat_opts o = {.clock = "local", .compress = true, .kallsyms = true, .msg = NULL}; /* NULL: stderr */
	hs_status s1 = hs_dat_write_opts(lib, cpus, files, &o);
	uint64_t lib_bytes = o.file_bytes;
	o.zcpu = z;
	o.page_size = subbuf;
	hs_status s2 = hs_dat_write_opts(own, cpus, files, &o);
	/* A third time with the headers prepared ahead (hs_dat_prep, as a ring
	 * snapshot writes them): the same report again. */
	char prep[4096];
	snprintf(prep, sizeof(prep), "%s/%s-prep.dat", dir, tag);
	hs_dat_opts po = {.clock = "local", .compress = true, .kallsyms = true};
	hs_status s3 = hs_dat_prep_new(dir, &po, &o.prep);
	if (s3 == HS_OK)
		s3 = hs_dat_write_opts(prep, cpus, files, &o);
	/* A fourth time in parts, the CPUs in the reverse order (the file's
	 * sections then are too; readers go by the option's offsets). */
	char parts[4096];
	snprintf(parts, sizeof(parts), "%s/%s-parts.dat", dir, tag);
	hs_dat_opts qo = {.clock = "local", .compress = true, .kallsyms = true, .page_size = subbuf};
	hs_dat_file *f = NULL;
	hs_status s4 = hs_dat_prep_new(dir, &po, &qo.prep);
	if (s4 == HS_OK)
		s4 = hs_dat_open(parts, cpus, &qo, &f);
	for (int c = cpus - 1; s4 == HS_OK && c >= 0; c--)
		s4 = hs_dat_put_cpu(f, (unsigned)c, &z[c]);
	if (f)
		s4 = s4 == HS_OK ? hs_dat_close(f, &qo) : (hs_dat_abort(f), s4);
	/* The snapshot's own event count (datz.c) against kbuffer's. */
	uint64_t zev = 0;
	for (int c = 0; c < cpus; c++) {
		zev += z[c].events;
		hs_datz_free(&z[c]);
	}
	if (s1 != HS_OK || s2 != HS_OK || s3 != HS_OK || s4 != HS_OK) {
		fprintf(stderr, "FAIL: %s: writing: libtracecmd %s, own %s, prepared headers %s, in parts %s\n", tag,
			hs_strerror(s1), hs_strerror(s2), hs_strerror(s3), hs_strerror(s4));
		return 1;
	}
	if (zev != want) {
		fprintf(stderr, "FAIL: %s: the compressor counted %" PRIu64 " events, kbuffer %" PRIu64 "\n", tag, zev,
			want);
		fails++;
	}
	uint64_t n1 = dat_events(lib), n2 = dat_events(own), n3 = dat_events(prep), n4 = dat_events(parts);
	printf("%s: %" PRIu64 " events drained; libtracecmd's file %" PRIu64 " events (%" PRIu64 " bytes), "
	       "ours %" PRIu64 " events, with prepared headers %" PRIu64 " events (%" PRIu64
	       " bytes), in parts %" PRIu64 " events (%" PRIu64 " bytes)\n",
	       tag, want, n1, lib_bytes, n2, n3, o.file_bytes, n4, qo.file_bytes);
	if (n1 != want || n2 != want || n3 != want || n4 != want) {
		fprintf(stderr, "FAIL: %s: event counts differ from the ring's\n", tag);
		fails++;
	}
	if (report(lib) || report(own) || report(prep) || report(parts)) {
		fprintf(stderr, "FAIL: %s: trace-cmd report failed (see %s.err, %s.err, %s.err, %s.err)\n", tag, lib,
			own, prep, parts);
		return fails + 1;
	}
	const char *mine[3] = {own, prep, parts};
	for (int k = 0; k < 3; k++) {
		snprintf(a, sizeof(a), "%s.txt", lib);
		snprintf(b, sizeof(b), "%s.txt", mine[k]);
		if (same(a, b)) {
			fprintf(stderr, "FAIL: %s: trace-cmd report differs: diff %s %s\n", tag, a, b);
			fails++;
		}
		snprintf(a, sizeof(a), "%s.err", lib);
		snprintf(b, sizeof(b), "%s.err", mine[k]);
		if (same(a, b)) {
			fprintf(stderr, "FAIL: %s: trace-cmd report's warnings differ: diff %s %s\n", tag, a, b);
			fails++;
		}
	}
	return fails;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	int cpus = (int)sysconf(_SC_NPROCESSORS_CONF), fails = 0;
	size_t subbuf = (size_t)getpagesize();
	if (cpus < 1 || cpus > CPUS_MAX) {
		fprintf(stderr, "FAIL: %d CPUs\n", cpus);
		return 1;
	}
	char name[64];
	snprintf(name, sizeof(name), "hindsight_test_compat_%d", (int)getpid());
	struct tracefs_instance *inst = tracefs_instance_create(name);
	if (!inst) {
		fprintf(stderr, "FAIL: cannot create instance %s (root and tracefs needed): %s\n", name, strerror(errno));
		return 1;
	}
	int fds[CPUS_MAX];
	uint64_t bytes[CPUS_MAX], want = 0, want_no1 = 0;
	/* 2 MB per CPU: a few hundred pages, a last chunk shorter than the others. */
	if (tracefs_instance_set_buffer_size(inst, 2048, -1) || tracefs_event_enable(inst, "sched", NULL) ||
	    tracefs_trace_on(inst)) {
		fprintf(stderr, "FAIL: cannot set up %s\n", name);
		fails++;
		goto out;
	}
	load(cpus, 1.5);
	tracefs_trace_off(inst);
	for (int c = 0; c < cpus; c++) {
		fds[c] = drain(inst, c, subbuf, &bytes[c]);
		void *map = bytes[c] ? mmap(NULL, bytes[c], PROT_READ, MAP_SHARED, fds[c], 0) : NULL;
		uint64_t n = map && map != MAP_FAILED ? hs_dat_count_events(map, bytes[c], subbuf) : 0;
		if (map && map != MAP_FAILED)
			munmap(map, bytes[c]);
		want += n;
		if (c != 1)
			want_no1 += n;
		printf("CPU %d: %" PRIu64 " KB, %" PRIu64 " events\n", c, bytes[c] >> 10, n);
	}
	if (!want) {
		fprintf(stderr, "FAIL: the ring recorded nothing\n");
		fails++;
		goto out;
	}
	fails += compare(argv[1], "all", cpus, fds, bytes, subbuf, want);
	if (cpus > 1) {
		int fd1 = fds[1];
		uint64_t b1 = bytes[1];
		fds[1] = memfd_create("hs-compat-empty", MFD_CLOEXEC);
		bytes[1] = 0;
		fails += compare(argv[1], "cpu1-empty", cpus, fds, bytes, subbuf, want_no1);
		close(fds[1]);
		fds[1] = fd1;
		bytes[1] = b1;
	}
	for (int c = 0; c < cpus; c++)
		close(fds[c]);
out:
	tracefs_instance_destroy(inst);
	tracefs_instance_free(inst);
	printf("%s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}
