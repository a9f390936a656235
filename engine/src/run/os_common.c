/* run/os_common.c: what the run layer builds on the OS layer the same way everywhere (times for run.json and snapshot.json). */
#include <stdio.h>
#include <time.h>

#include "run/os.h"

void hs_os_iso_time(char *buf, size_t n, time_t t)
{
	/* A numeric offset by hand: strftime's %z is a zone name on Windows. */
	struct tm tm;
	hs_os_localtime(t, &tm);
	size_t len = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	long off = hs_os_utc_offset_min(t);
	long a = off < 0 ? -off : off;
	snprintf(buf + len, n - len, "%c%02ld%02ld", off < 0 ? '-' : '+', a / 60, a % 60);
}
