/* bench/etl_parse.c: times hs_etl parsing of a large .etl built from real buffers against `cat` of the same warm file. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etl/etl_format.h"
#include "hindsight/etl.h"

#ifndef HS_BENCH_FIXTURES_DIR
#define HS_BENCH_FIXTURES_DIR "../shared/fixtures/etl"
#endif
#ifndef HS_BENCH_BUILD_TYPE
#define HS_BENCH_BUILD_TYPE ""
#endif

extern char **environ;

#define MIB (1024.0 * 1024.0)
/* The logfile header event is a SYSTEM header (0x20 bytes) right after the
 * header buffer's WMI_BUFFER_HEADER; BuffersWritten is at +0x24 of its payload. */
#define HS_BENCH_HEADER_EVENT 0x48u
#define HS_BENCH_BUFFERS_WRITTEN (HS_BENCH_HEADER_EVENT + 0x20u + 0x24u)

typedef struct {
	const char *fixture;
	double size_mb;
	int runs;
	bool compressed, time_order;
	const char *dir;
} options;

/* What the replicated file is made of, and what a correct parse must count. */
typedef struct {
	uint8_t *data;
	size_t len;
	size_t header_size;      /* the header buffer, written once */
	size_t n_data;           /* data buffers per copy */
	size_t *data_offsets;    /* of each data buffer, relative to header_size */
	uint64_t seq_min, seq_max;
	uint64_t header_records, data_records;
	bool any_compressed;
} fixture;

/* Removed by the signal handler too, so an interrupted run leaves no 256 MB file behind. */
static char g_dir[4096];
static char g_path[4096 + 16];

static void cleanup(void)
{
	if (g_path[0])
		unlink(g_path);
	if (g_dir[0])
		rmdir(g_dir);
	g_path[0] = g_dir[0] = '\0';
}

static void on_signal(int sig)
{
	/* unlink and rmdir are async-signal-safe; then die of the signal as usual. */
	if (g_path[0])
		unlink(g_path);
	if (g_dir[0])
		rmdir(g_dir);
	signal(sig, SIG_DFL);
	raise(sig);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_etl_parse [--size MB] [--runs N] [--compressed] [--fixture FILE.etl]\n"
		"                       [--no-time-order] [--dir DIR]\n"
		"  --size MB        size of the generated file (default 256; 1 MB = 1048576 bytes)\n"
		"  --runs N         timed runs per measure; the best is reported (default 3)\n"
		"  --compressed     replicate net.4.5.2.x86.etl's XPRESS-compressed buffers\n"
		"                   (default: diaghub.kernel.1.etl, uncompressed kernel events)\n"
		"  --fixture FILE   replicate the buffers of another .etl\n"
		"  --no-time-order  time only the file-order walk\n"
		"  --dir DIR        where to build the file (default $TMPDIR or /tmp)\n");
}

static int read_whole(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "bench_etl_parse: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		uint8_t *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	bool err = ferror(f) != 0;
	fclose(f);
	if (!buf || err) {
		fprintf(stderr, "bench_etl_parse: %s: %s\n", path, buf ? "read error" : "out of memory");
		free(buf);
		return -1;
	}
	*out = buf;
	*len = n;
	return 0;
}

static int count_record(const hs_etl_record *r, void *ctx)
{
	uint64_t *counts = ctx;
	counts[r->buffer_index == 0 ? 0 : 1]++;
	return 0;
}

/* Splits the fixture into its header buffer and data buffers and counts the
 * records of each with the reader itself, so the big file's expected count is
 * known without trusting the timed walk. */
static int load_fixture(const char *path, fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	if (read_whole(path, &fx->data, &fx->len) != 0)
		return -1;
	const uint8_t *d = fx->data;
	if (fx->len < HS_BENCH_BUFFERS_WRITTEN + 4 || hs_le16(d + 0x36) != HS_ETL_BUFFER_TYPE_HEADER) {
		fprintf(stderr, "bench_etl_parse: %s: does not start with an ETW header buffer\n", path);
		return -1;
	}
	const uint8_t *ev = d + HS_BENCH_HEADER_EVENT;
	if ((ev[2] != HS_ETL_HT_SYSTEM32 && ev[2] != HS_ETL_HT_SYSTEM64) || hs_le16(ev + 6) != 0) {
		fprintf(stderr, "bench_etl_parse: %s: the header buffer does not start with the logfile header event\n",
			path);
		return -1;
	}
	fx->header_size = hs_le32(d);
	if (fx->header_size < HS_BENCH_BUFFERS_WRITTEN + 4 || fx->header_size > fx->len) {
		fprintf(stderr, "bench_etl_parse: %s: impossible header buffer size %zu\n", path, fx->header_size);
		return -1;
	}
	size_t cap = 0;
	fx->seq_min = UINT64_MAX;
	size_t off = fx->header_size;
	while (off < fx->len) {
		uint32_t size = fx->len - off >= HS_ETL_BUFFER_HEADER_SIZE ? hs_le32(d + off) : 0;
		if (size < HS_ETL_BUFFER_HEADER_SIZE || size > fx->len - off) {
			fprintf(stderr, "bench_etl_parse: %s: malformed buffer at offset %zu\n", path, off);
			return -1;
		}
		if (fx->n_data == cap) {
			cap = cap ? cap * 2 : 64;
			size_t *n = realloc(fx->data_offsets, cap * sizeof(*n));
			if (!n) {
				fprintf(stderr, "bench_etl_parse: out of memory\n");
				return -1;
			}
			fx->data_offsets = n;
		}
		fx->data_offsets[fx->n_data++] = off - fx->header_size;
		uint64_t seq = hs_le64(d + off + 0x18);
		if (seq < fx->seq_min)
			fx->seq_min = seq;
		if (seq > fx->seq_max)
			fx->seq_max = seq;
		if (hs_le16(d + off + 0x34) & HS_ETL_BUFFER_FLAG_COMPRESSED)
			fx->any_compressed = true;
		off += size;
	}
	if (fx->n_data == 0) {
		fprintf(stderr, "bench_etl_parse: %s: has no data buffers to replicate\n", path);
		return -1;
	}
	hs_etl *e;
	hs_status st = hs_etl_open_memory(fx->data, fx->len, &e);
	if (st != HS_OK) {
		fprintf(stderr, "bench_etl_parse: %s: %s\n", path, hs_strerror(st));
		return -1;
	}
	uint64_t counts[2] = {0, 0};
	st = hs_etl_foreach(e, HS_ETL_FILE_ORDER, count_record, counts);
	size_t problems = hs_etl_problem_count(e);
	hs_etl_close(e);
	if (st != HS_OK || problems) {
		fprintf(stderr, "bench_etl_parse: %s: the fixture itself does not parse cleanly (%zu problems)\n", path,
			problems);
		return -1;
	}
	fx->header_records = counts[0];
	fx->data_records = counts[1];
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Header buffer once, then the data buffers `copies` times. Each copy's
 * sequence numbers are shifted past the previous copy's, so every processor's
 * buffers still form one increasing series for the time-order walk. */
static int build_file(const fixture *fx, size_t copies, const char *path)
{
	size_t block_len = fx->len - fx->header_size;
	uint8_t *hdr = malloc(fx->header_size), *block = malloc(block_len);
	if (!hdr || !block) {
		free(hdr);
		free(block);
		fprintf(stderr, "bench_etl_parse: out of memory\n");
		return -1;
	}
	memcpy(hdr, fx->data, fx->header_size);
	memcpy(block, fx->data + fx->header_size, block_len);
	/* The reader checks BuffersWritten against the buffers it finds. */
	hs_put32(hdr + HS_BENCH_BUFFERS_WRITTEN, (uint32_t)(1 + copies * fx->n_data));
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	int rc = fd < 0 ? -1 : write_all(fd, hdr, fx->header_size);
	uint64_t stride = fx->seq_max - fx->seq_min + 1;
	for (size_t k = 0; rc == 0 && k < copies; k++) {
		for (size_t i = 0; i < fx->n_data; i++) {
			size_t at = fx->data_offsets[i];
			uint64_t seq = hs_le64(fx->data + fx->header_size + at + 0x18);
			hs_put64(block + at + 0x18, seq + k * stride);
		}
		rc = write_all(fd, block, block_len);
	}
	/* Flush now so that writeback does not compete with the timed runs. */
	if (rc == 0)
		rc = fdatasync(fd);
	if (fd >= 0 && close(fd) != 0)
		rc = -1;
	if (rc != 0)
		fprintf(stderr, "bench_etl_parse: writing %s: %s\n", path, strerror(errno));
	free(hdr);
	free(block);
	return rc;
}

/* Wall time of `cat path > /dev/null`, process start-up included. */
static double time_cat(const char *path)
{
	posix_spawn_file_actions_t fa;
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	char *argv[] = {"cat", (char *)path, NULL};
	pid_t pid;
	double t0 = now();
	int err = posix_spawnp(&pid, "cat", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err != 0) {
		fprintf(stderr, "bench_etl_parse: cannot run cat: %s\n", strerror(err));
		return -1;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	double t = now() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_etl_parse: cat %s failed\n", path);
		return -1;
	}
	return t;
}

static int count_all(const hs_etl_record *r, void *ctx)
{
	(void)r;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* Open, walk and close: everything a consumer of the file pays for. */
static double time_parse(const char *path, hs_etl_order order, uint64_t expected)
{
	uint64_t n = 0;
	double t0 = now();
	hs_etl *e;
	hs_status st = hs_etl_open(path, &e);
	if (st != HS_OK) {
		fprintf(stderr, "bench_etl_parse: hs_etl_open %s: %s\n", path, hs_strerror(st));
		return -1;
	}
	st = hs_etl_foreach(e, order, count_all, &n);
	size_t problems = hs_etl_problem_count(e);
	if (problems)
		fprintf(stderr, "bench_etl_parse: %zu problems, the first %s\n", problems,
			hs_problem_format(hs_etl_problem_at(e, 0), (char[HS_PROBLEM_TEXT_MAX]){0},
					  HS_PROBLEM_TEXT_MAX));
	hs_etl_close(e);
	double t = now() - t0;
	if (st != HS_OK || problems || n != expected) {
		fprintf(stderr, "bench_etl_parse: the walk counted %llu records, expected %llu (%s)\n",
			(unsigned long long)n, (unsigned long long)expected, hs_strerror(st));
		return -1;
	}
	return t;
}

/* Share of the file's pages in the page cache, to back the "warm" claim. */
static double resident_share(const char *path, size_t len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (len + page - 1) / page, in = 0;
	unsigned char *vec = malloc(pages);
	double share = -1;
	if (vec && mincore(m, len, vec) == 0) {
		for (size_t i = 0; i < pages; i++)
			in += vec[i] & 1;
		share = (double)in / (double)pages;
	}
	free(vec);
	munmap(m, len);
	return share;
}

static int parse_args(int argc, char **argv, options *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_value = i + 1 < argc;
		if (strcmp(a, "--size") == 0 && has_value) {
			char *end;
			o->size_mb = strtod(argv[++i], &end);
			if (*end || !(o->size_mb > 0) || o->size_mb > 1024.0 * 1024.0)
				return -1;
		} else if (strcmp(a, "--runs") == 0 && has_value) {
			char *end;
			long n = strtol(argv[++i], &end, 10);
			if (*end || n < 1 || n > 1000)
				return -1;
			o->runs = (int)n;
		} else if (strcmp(a, "--fixture") == 0 && has_value) {
			o->fixture = argv[++i];
		} else if (strcmp(a, "--dir") == 0 && has_value) {
			o->dir = argv[++i];
		} else if (strcmp(a, "--compressed") == 0) {
			o->compressed = true;
		} else if (strcmp(a, "--no-time-order") == 0) {
			o->time_order = false;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		} else {
			return -1;
		}
	}
	return 0;
}

static void report_parse(const char *name, double bytes, uint64_t records, double t, double cat_t, const char *target)
{
	printf("etl_parse %s: %.1f MB in %.3f s = %.0f MB/s, %.1f M records/s; ratio to cat %.1fx (%s)\n", name,
	       bytes / MIB, t, bytes / MIB / t, (double)records / t / 1e6, t / cat_t, target);
}

int main(int argc, char **argv)
{
	options o = {NULL, 256.0, 3, false, true, NULL};
	if (parse_args(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	char fixture_path[4096];
	if (!o.fixture) {
		snprintf(fixture_path, sizeof fixture_path, "%s/microsoft_perfview/%s", HS_BENCH_FIXTURES_DIR,
			 o.compressed ? "net.4.5.2.x86.etl" : "diaghub.kernel.1.etl");
		o.fixture = fixture_path;
	}
	fixture fx;
	if (load_fixture(o.fixture, &fx) != 0)
		return 1;
	if (o.compressed && !fx.any_compressed)
		fprintf(stderr, "bench_etl_parse: note: --compressed, but %s has no compressed buffers\n", o.fixture);

	size_t block_len = fx.len - fx.header_size;
	double target = o.size_mb * MIB;
	size_t copies = target > (double)fx.header_size
				? (size_t)((target - (double)fx.header_size + (double)block_len - 1) / (double)block_len)
				: 1;
	if (copies == 0)
		copies = 1;
	if ((double)copies * (double)fx.n_data >= 4294967295.0) {
		fprintf(stderr, "bench_etl_parse: --size too large for a 32-bit BuffersWritten\n");
		return 2;
	}
	size_t total = fx.header_size + copies * block_len;
	uint64_t expected = fx.header_records + (uint64_t)copies * fx.data_records;

	const char *base = o.dir ? o.dir : getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(g_dir, sizeof g_dir, "%s/hs-bench-XXXXXX", base);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!mkdtemp(g_dir)) {
		fprintf(stderr, "bench_etl_parse: mkdtemp %s: %s\n", g_dir, strerror(errno));
		g_dir[0] = '\0';
		return 1;
	}
	snprintf(g_path, sizeof g_path, "%s/bench.etl", g_dir);

	int rc = 1;
	const char *fx_name = strrchr(o.fixture, '/') ? strrchr(o.fixture, '/') + 1 : o.fixture;
	/* A Debug or sanitizer build's number says nothing about the reader. */
	printf("etl_parse: build type %s\n", *HS_BENCH_BUILD_TYPE ? HS_BENCH_BUILD_TYPE : "(none: no -O flags)");
	printf("etl_parse: %s (%s), %zu data buffers (%.2f MB) replicated %zu times\n", fx_name,
	       fx.any_compressed ? "compressed buffers" : "uncompressed", fx.n_data, (double)block_len / MIB, copies);
	fflush(stdout);
	if (build_file(&fx, copies, g_path) != 0)
		goto out;
	printf("file: %s, %.1f MB (1 MB = 1048576 bytes), %zu buffers, %llu records\n", g_path, (double)total / MIB,
	       1 + copies * fx.n_data, (unsigned long long)expected);

	/* Dropping the page cache needs root; instead make both sides equally warm. */
	if (time_cat(g_path) < 0)
		goto out;
	/* The ratio compares CPU cost from a warm cache: a file the cache does
	 * not hold whole (memory pressure) would time the disk instead. */
	double share = resident_share(g_path, total);
	if (share < 0.99) {
		fprintf(stderr, "bench_etl_parse: INVALID: %s of %s in the page cache after reading it: no ratio\n",
			share < 0 ? "unknown share" : "only part", g_path);
		goto out;
	}
	printf("cache: warm for every measure (read once with cat before timing; %.0f%% of pages resident); "
	       "the page cache is not dropped (needs root), so this compares CPU cost, not disk speed\n",
	       share * 100.0);
	printf("timing: wall clock, best of %d rounds (each round: cat, then the walks)\n", o.runs);
	fflush(stdout);

	/* Rounds interleave the measures, so that load from other processes hits
	 * cat and the reader alike rather than whichever ran during a burst. */
	double cat_best = 0, file_best = 0, time_best = 0;
	for (int i = 0; i < o.runs; i++) {
		double tc = time_cat(g_path);
		double tf = tc < 0 ? -1 : time_parse(g_path, HS_ETL_FILE_ORDER, expected);
		double tt = tf < 0 || !o.time_order ? 0 : time_parse(g_path, HS_ETL_TIME_ORDER, expected);
		if (tc < 0 || tf < 0 || tt < 0)
			goto out;
		if (i == 0 || tc < cat_best)
			cat_best = tc;
		if (i == 0 || tf < file_best)
			file_best = tf;
		if (i == 0 || tt < time_best)
			time_best = tt;
	}
	if ((share = resident_share(g_path, total)) < 0.99) {
		fprintf(stderr, "bench_etl_parse: INVALID: %s left the page cache during the rounds: no ratio\n", g_path);
		goto out;
	}
	printf("cat (baseline): %.1f MB in %.3f s = %.0f MB/s\n", (double)total / MIB, cat_best,
	       (double)total / MIB / cat_best);
	char target_text[96];
	if (fx.any_compressed)
		snprintf(target_text, sizeof target_text, "no target for compressed input: includes decompression");
	else
		snprintf(target_text, sizeof target_text, "target <= 3x%s", file_best / cat_best > 3.0 ? ": OVER" : "");
	report_parse("file-order", (double)total, expected, file_best, cat_best, target_text);
	/* Copies repeat the fixture's timestamps, so the merge interleaves copies;
	 * the work per record is the same as on a real trace. */
	if (o.time_order)
		report_parse("time-order", (double)total, expected, time_best, cat_best, "no target");
	rc = 0;
out:
	cleanup();
	free(fx.data);
	free(fx.data_offsets);
	return rc;
}
