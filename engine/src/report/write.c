/* report/write.c: a report's files into its output folder (made when missing): each through a temporary name renamed into place, never over a file that is not a report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hindsight/compat.h"
#include "report/render.h"
#include "report/write.h"

/* A file we may replace: absent, or one of ours (its first bytes say so). */
static bool ours_or_absent(const char *path, const char *marker)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT;
	char head[256] = "";
	size_t n = fread(head, 1, sizeof head - 1, f);
	head[n] = '\0';
	fclose(f);
	return n == 0 || strstr(head, marker) != NULL;
}

static hs_status write_one(hs_report *r, const char *name, const char *marker, hs_strbuf *sb)
{
	if (sb->oom)
		return HS_ENOMEM;
	hs_strbuf path = {0}, tmp = {0};
	hs_sb_printf(&path, "%s/%s", r->outdir, name);
	hs_sb_printf(&tmp, "%s/.%s.%lu.tmp", r->outdir, name, hs_getpid());
	hs_status st = HS_OK;
	if (path.oom || tmp.oom) {
		st = HS_ENOMEM;
		goto out;
	}
	if (!ours_or_absent(hs_sb_cstr(&path), marker)) {
		hs_rpt_say(r, HS_MSG_ERROR, "%s exists and is not a report; not overwriting it", hs_sb_cstr(&path));
		st = HS_EPERM;
		goto out;
	}
	FILE *f = fopen(hs_sb_cstr(&tmp), "wb");
	/* hs_rename: Windows' own rename refuses to replace the previous report */
	if (!f || fwrite(hs_sb_cstr(sb), 1, sb->len, f) != sb->len || fclose(f) != 0 ||
	    hs_rename(hs_sb_cstr(&tmp), hs_sb_cstr(&path)) != 0) {
		int e = errno;
		hs_rpt_say(r, HS_MSG_ERROR, "cannot write %s: %s", hs_sb_cstr(&path), strerror(e));
		if (f)
			remove(hs_sb_cstr(&tmp));
		st = HS_EIO;
	}
out:
	hs_sb_free(&path);
	hs_sb_free(&tmp);
	return st;
}

/* The output folder and the folders above it that are missing. */
static hs_status make_outdir(hs_report *r)
{
	struct stat st;
	if (stat(r->outdir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return HS_OK;
		hs_rpt_say(r, HS_MSG_ERROR, "%s: not a folder", r->outdir);
		return HS_EIO;
	}
	char *p = hs_rpt_strdup(r, r->outdir);
	if (!p)
		return HS_ENOMEM;
	hs_status rc = HS_OK;
	for (char *s = p + 1;; s++) {
		bool end = !*s;
		if (!end && *s != '/' && *s != '\\')
			continue;
		char c = *s;
		*s = '\0';
		if (hs_mkdir(p) != 0 && errno != EEXIST) {
			hs_rpt_say(r, HS_MSG_ERROR, "cannot create the folder %s: %s", p, strerror(errno));
			rc = HS_EIO;
			break;
		}
		*s = c;
		if (end)
			break;
	}
	free(p);
	return rc;
}

hs_status hs_rpt_write(hs_report *r)
{
	hs_status st = make_outdir(r);
	/* the regions files first: the report names them */
	for (size_t fi = 0, k = 0; st == HS_OK && fi < r->n_files; fi++) {
		if (!r->files[fi].etl || !r->files[fi].opened || k >= r->n_regions)
			continue;
		hs_strbuf sb = {0};
		hs_rpt_render_regions(r, fi, &sb);
		st = write_one(r, r->regions[k++], "<!-- hindsight regions", &sb);
		hs_sb_free(&sb);
	}
	static const struct {
		const char *name, *marker;
		void (*render)(const hs_report *r, hs_strbuf *sb);
	} outputs[] = {
		{"report.txt", "hindsight report", hs_rpt_render_text},
		{"report.json", "\"report_version\"", hs_rpt_render_json},
		{"report.html", "<!-- hindsight report -->", hs_rpt_render_html},
	};
	for (size_t i = 0; st == HS_OK && i < sizeof outputs / sizeof outputs[0]; i++) {
		hs_strbuf sb = {0};
		outputs[i].render(r, &sb);
		st = write_one(r, outputs[i].name, outputs[i].marker, &sb);
		hs_sb_free(&sb);
	}
	return st;
}
