/* snapshot-limit.c: libtracecmd's per-CPU size limit: the check refuses it, and writing past it really fails (EINVAL). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ftrace/ftrace.h"
#include "hindsight/limits.h"

/* Writes a .dat whose CPU 0 holds `bytes` of zero pages (a sparse memfd: no
 * memory is used, and zeros compress to almost nothing). */
static hs_status write_zeros(const char *path, unsigned long long bytes, int *err)
{
	int fd = memfd_create("hs-limit-test", MFD_CLOEXEC);
	char p0[64], p1[64];
	if (fd < 0 || ftruncate(fd, (off_t)bytes)) {
		perror("memfd");
		exit(1);
	}
	int empty = memfd_create("hs-limit-empty", MFD_CLOEXEC);
	snprintf(p0, sizeof(p0), "/proc/self/fd/%d", fd);
	snprintf(p1, sizeof(p1), "/proc/self/fd/%d", empty);
	char *files[] = {p0, p1};
	hs_dat_opts o = {.clock = "mono", .compress = true, .kallsyms = false, .msg = NULL}; /* NULL: stderr */
	hs_status st = hs_dat_write_opts(path, 2, files, &o);
	*err = o.err;
	close(fd);
	close(empty);
	return st;
}

int main(int argc, char **argv)
{
	char why[256] = "";
	int fails = 0, err = 0;
	if (hs_dat_check_cpu_bytes(HS_LINUX_DAT_MAX_CPU_BYTES, why, sizeof(why)) != HS_OK) {
		fprintf(stderr, "FAIL: the limit itself is refused\n");
		fails++;
	}
	if (hs_dat_check_cpu_bytes(2ull << 30, why, sizeof(why)) != HS_ELIMIT || !strstr(why, "libtracecmd")) {
		fprintf(stderr, "FAIL: 2 GiB per CPU is not refused with a reason (\"%s\")\n", why);
		fails++;
	}
	printf("check: %s\n", why);
	/* The real library, when a directory is given (root: it reads tracefs). */
	if (argc > 1) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/limit.dat", argv[1]);
		hs_status st = write_zeros(path, HS_LINUX_DAT_MAX_CPU_BYTES, &err);
		printf("libtracecmd, %llu MB on one CPU: %s\n", HS_LINUX_DAT_MAX_CPU_BYTES >> 20, hs_strerror(st));
		if (st != HS_OK) {
			fprintf(stderr, "FAIL: libtracecmd cannot write the limit's size (%s)\n", strerror(err));
			fails++;
		}
		/* The reason the limit exists: past 2 GiB libtracecmd's int size no
		 * longer matches what it copied, and it gives up with EINVAL. A
		 * libtracecmd that writes it has lifted the limit (limits.h is stale);
		 * one that fails otherwise fails for a reason we do not know. */
		st = write_zeros(path, (2ull << 30) + 4096, &err);
		printf("libtracecmd, 2 GiB + 4 KB on one CPU: %s (%s)\n", hs_strerror(st), strerror(err));
		if (st == HS_OK) {
			fprintf(stderr, "FAIL: this libtracecmd writes past 2 GiB per CPU: HS_LINUX_DAT_MAX_CPU_BYTES "
					"(limits.h) is stale, raise it\n");
			fails++;
		} else if (err != EINVAL) {
			fprintf(stderr, "FAIL: the write past the limit failed with %s, not EINVAL\n", strerror(err));
			fails++;
		}
		unlink(path);
	}
	printf(fails ? "snapshot-limit: FAIL\n" : "snapshot-limit: OK\n");
	return fails ? 1 : 0;
}
