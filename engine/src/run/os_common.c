/* run/os_common.c: what the run layer builds on the OS layer the same way everywhere: ISO times, files written whole. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "run/os.h"
#include "util/compat.h"

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

hs_status hs_os_write_file_synced(const char *path, hs_strbuf *sb)
{
	hs_strbuf tmp = {0};
	hs_sb_printf(&tmp, "%s.tmp", path);
	char *tpath = hs_sb_take(&tmp);
	FILE *f = tpath ? fopen(tpath, "w") : NULL;
	hs_status st = f ? hs_sb_write_free(sb, f) : HS_EIO;
	if (!f)
		hs_sb_free(sb);
	if (f && hs_os_sync(f))
		st = HS_EIO;
	if (f && fclose(f))
		st = HS_EIO;
	if (st == HS_OK && hs_rename(tpath, path))
		st = HS_EIO;
	if (st != HS_OK && tpath)
		remove(tpath); /* nothing half written is left beside the file */
	free(tpath);
	return st;
}
