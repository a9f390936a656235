/* bench/fleet_speed.c: times `analyze fleet --json --ndjson` over a store of 10,000 report.json files against reading every byte of the same store in this process (issue 23: 10,000 reports in at most 10 s). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef HS_BENCH_ANALYZE
#define HS_BENCH_ANALYZE ""
#endif
#ifndef HS_BENCH_SOURCE_DIR
#define HS_BENCH_SOURCE_DIR ""
#endif
#ifndef HS_BENCH_BUILD_TYPE
#define HS_BENCH_BUILD_TYPE ""
#endif

/*
 * The store is made of real reports: `analyze report` of two fixtures (a crash, an exit status), each copy's
 * signature block given one of BUCKETS bucket ids and signatures, one of MACHINES machine ids and host names and
 * its own seen_at, in the layout docs/fleet.md ships: <store>/<host>/<run>/snapshots/<NNN>-<trigger>/report.json.
 * The baseline walks the same tree and reads every byte of every file (what any tool that looks at each report
 * must at least do); both run from the page cache (the store is read once first), in interleaved rounds so that
 * load from other processes on this shared machine hits them alike; the best of each is reported. analyze
 * fleet's answer is checked (the count of reports and buckets), so a fast wrong answer is no result.
 */
#define TARGET_S 10.0
#define BUCKETS 50
#define MACHINES 40
#define PER_RUN 25 /* snapshots per run folder */
#define ROUNDS 3

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* snprintf that says whether the whole text fit (a path cut short would name another file). */
static bool fmt(char *buf, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
static bool fmt(char *buf, size_t cap, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, cap, f, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < cap;
}

static int run(char *const argv[], const char *out_path, long *rss_kb)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int null = open("/dev/null", O_WRONLY);
		if (fd < 0 || null < 0)
			_exit(127);
		dup2(fd, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	if (rss_kb)
		*rss_kb = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		goto fail;
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		goto fail;
	buf[n] = '\0';
	*len = (size_t)n;
	fclose(f);
	return buf;
fail:
	free(buf);
	fclose(f);
	return NULL;
}

/* A seed report: its text and where in it the values this bench varies lie. */
typedef struct {
	char *text;
	size_t len;
	const char *sig_at, *bucket_at, *machine_at, *host_at, *seen_at; /* each at the key's value */
} seed;

/* The value of "key" inside the signature block; NULL when it is not there. */
static const char *value_of(const char *block, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\n    \"%s\": ", key);
	const char *p = strstr(block, pat);
	return p ? p + strlen(pat) : NULL;
}

static bool seed_load(seed *s, const char *path)
{
	s->text = slurp(path, &s->len);
	if (!s->text)
		return false;
	const char *block = strstr(s->text, "\n  \"signature\": {");
	if (!block)
		return false;
	s->sig_at = value_of(block, "signature");
	s->bucket_at = value_of(block, "bucket_id");
	s->machine_at = value_of(block, "machine");
	s->host_at = value_of(block, "host");
	s->seen_at = value_of(block, "seen_at");
	return s->sig_at && s->bucket_at && s->machine_at && s->host_at && s->seen_at && *s->sig_at == '"' &&
	       !strncmp(s->machine_at, "null", 4) && !strncmp(s->host_at, "null", 4) && !strncmp(s->seen_at, "null", 4) &&
	       s->sig_at < s->bucket_at && s->bucket_at < s->machine_at && s->machine_at < s->host_at &&
	       s->host_at < s->seen_at;
}

/* Writes one varied copy of the seed: the texts between the varied values as they are. */
static bool write_copy(const seed *s, const char *path, unsigned bucket, unsigned machine, unsigned i)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	const char *sig_end = strchr(s->sig_at + 1, '"');
	const char *bucket_end = strchr(s->bucket_at + 1, '"') + 1;
	fwrite(s->text, 1, (size_t)(sig_end - s->text), f);
	fprintf(f, " #%u", bucket);
	fwrite(sig_end, 1, (size_t)(s->bucket_at - sig_end), f);
	fprintf(f, "\"%016" PRIx64 "\"", (uint64_t)0x9e3779b97f4a7c15u * (bucket + 1));
	fwrite(bucket_end, 1, (size_t)(s->machine_at - bucket_end), f);
	fprintf(f, "\"%016" PRIx64 "\"", (uint64_t)0xc2b2ae3d27d4eb4fu * (machine + 1));
	fwrite(s->machine_at + 4, 1, (size_t)(s->host_at - (s->machine_at + 4)), f);
	fprintf(f, "\"lab-%02u\"", machine);
	fwrite(s->host_at + 4, 1, (size_t)(s->seen_at - (s->host_at + 4)), f);
	fprintf(f, "\"2026-11-%02uT%02u:%02u:%02uZ\"", 1 + i / 3600 % 28, i / 60 % 24, i % 60, i * 7 % 60);
	const char *rest = s->seen_at + 4;
	fwrite(rest, 1, s->len - (size_t)(rest - s->text), f);
	return fclose(f) == 0;
}

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(path, 0755);
		*p = '/';
		if (rc != 0 && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* The baseline: every directory of the tree read, every file's every byte. */
static uint64_t bytes_read;
static size_t files_read;
static int read_all(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	static char buf[1 << 16];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		bytes_read += (uint64_t)n;
	close(fd);
	files_read++;
	return n < 0 ? -1 : 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* "key": N in analyze fleet's --json; -1 when missing. */
static long json_count(const char *text, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *p = strstr(text, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static long count_buckets(const char *text)
{
	long n = 0;
	for (const char *p = text; (p = strstr(p, "\"bucket_id\": ")); p++)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	const char *analyze = argc > 1 ? argv[1] : HS_BENCH_ANALYZE;
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 10000;
	const char *src = HS_BENCH_SOURCE_DIR;
	char tmp[] = "/tmp/hs-bench-fleet-XXXXXX";
	char path[4096], store[4096], out_json[4096], out_nd[4096];
	seed seeds[2] = {{0}};
	int rc = 1;
	if (!*analyze || n < BUCKETS * 2) {
		fprintf(stderr, "usage: bench_fleet_speed [ANALYZE [N >= %d]]\n", BUCKETS * 2);
		return 2;
	}
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	const char *fixtures[2] = {"tests/analyze/thread-fixture.dat", "tests/replay/fixture.dat"};
	for (int i = 0; i < 2; i++) {
		char fix[4096], dir[4096], rules[4096];
		if (!fmt(fix, sizeof fix, "%s/%s", src, fixtures[i]) || !fmt(dir, sizeof dir, "%s/seed%d", tmp, i) ||
		    !fmt(rules, sizeof rules, "%s/rules/stutter.yaml", src) || !fmt(path, sizeof path, "%s/report.json", dir)) {
			fprintf(stderr, "bench_fleet_speed: the source path is too long\n");
			goto out;
		}
		char *av[] = {(char *)analyze, "report", fix, "-o", dir, "--rules", rules, NULL};
		int r = run(av, NULL, NULL);
		if (r != 0 || !seed_load(&seeds[i], path)) {
			fprintf(stderr, "bench_fleet_speed: analyze report %s exited %d or its report.json has no signature block "
					"of the expected form\n",
				fix, r);
			goto out;
		}
	}
	if (!fmt(store, sizeof store, "%s/store", tmp) || !fmt(out_json, sizeof out_json, "%s/fleet.json", tmp) ||
	    !fmt(out_nd, sizeof out_nd, "%s/fleet.ndjson", tmp))
		goto out;
	double t0 = now();
	for (long i = 0; i < n; i++) {
		unsigned machine = (unsigned)(i % MACHINES), bucket = (unsigned)(i * 7 % BUCKETS);
		if (!fmt(path, sizeof path, "%s/lab-%02u/run-%04ld/snapshots/%03ld-crash/report.json", store, machine,
			 i / MACHINES / PER_RUN, i / MACHINES % PER_RUN + 1))
			goto out;
		*strrchr(path, '/') = '\0';
		if (mkdirs(path) != 0) {
			perror(path);
			goto out;
		}
		path[strlen(path)] = '/'; /* back to .../report.json */
		if (!write_copy(&seeds[bucket % 2], path, bucket, machine, (unsigned)i)) {
			perror(path);
			goto out;
		}
	}
	double t_make = now() - t0;

	char *fav[] = {(char *)analyze, "fleet", store, "--json", "--ndjson", out_nd, NULL};
	double best_base = 1e9, best_fleet = 1e9;
	long rss = 0;
	nftw(store, read_all, 64, FTW_PHYS); /* into the page cache */
	for (int round = 0; round < ROUNDS; round++) {
		bytes_read = 0;
		files_read = 0;
		t0 = now();
		if (nftw(store, read_all, 64, FTW_PHYS) != 0) {
			perror("reading the store");
			goto out;
		}
		double b = now() - t0;
		best_base = b < best_base ? b : best_base;
		t0 = now();
		long rss_kb = 0;
		int r = run(fav, out_json, &rss_kb);
		double f = now() - t0;
		if (r != 0) {
			fprintf(stderr, "bench_fleet_speed: analyze fleet exited %d\n", r);
			goto out;
		}
		best_fleet = f < best_fleet ? f : best_fleet;
		rss = rss_kb > rss ? rss_kb : rss;
	}
	size_t len = 0;
	char *js = slurp(out_json, &len);
	long reports = js ? json_count(js, "reports") : -1, machines = js ? json_count(js, "machines") : -1;
	long buckets = js ? count_buckets(js) : -1;
	free(js);
	if (reports != n || buckets != BUCKETS || machines != MACHINES) {
		fprintf(stderr, "bench_fleet_speed: analyze fleet counted %ld reports, %ld buckets, %ld machines; made %ld, %d, %d\n",
			reports, buckets, machines, n, BUCKETS, MACHINES);
		goto out;
	}
	printf("fleet_speed (%s build): %ld report.json files, %.1f MB, %d buckets, %d machines (made in %.2f s)\n",
	       HS_BENCH_BUILD_TYPE, n, (double)bytes_read / 1e6, BUCKETS, MACHINES, t_make);
	printf("  baseline: walk + read every byte   %8.3f s  (%zu files)\n", best_base, files_read);
	printf("  analyze fleet --json --ndjson      %8.3f s  %.1f us/report, peak RSS %.1f MB\n", best_fleet,
	       best_fleet * 1e6 / (double)n, (double)rss / 1024.0);
	printf("  ratio to the baseline              %8.1fx\n", best_fleet / best_base);
	printf("  target: 10,000 reports in at most %.0f s: %s (%.2f s for 10,000 at this rate)\n", TARGET_S,
	       best_fleet * 10000.0 / (double)n <= TARGET_S ? "met" : "MISSED", best_fleet * 10000.0 / (double)n);
	rc = 0;
out:
	free(seeds[0].text);
	free(seeds[1].text);
	if (!getenv("HS_BENCH_KEEP"))
		nftw(tmp, remove_one, 64, FTW_DEPTH | FTW_PHYS);
	else
		fprintf(stderr, "kept %s\n", tmp);
	return rc;
}
