/* rundoc/common.c: what the run folder's documents share: the capture-time report's status, and reading a document file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "rundoc/common.h"

static const rd_field report_fields[] = {
	{.key = "state", .type = RD_STR, .off = offsetof(hs_rundoc_report, state)},
	{.key = "path", .type = RD_STR, .off = offsetof(hs_rundoc_report, path), .nullable = true},
	{.key = "verdict", .type = RD_STR, .off = offsetof(hs_rundoc_report, verdict), .nullable = true},
	{.key = "verdict_more", .type = RD_STR, .off = offsetof(hs_rundoc_report, verdict_more), .nullable = true},
	{.key = "kind", .type = RD_STR, .off = offsetof(hs_rundoc_report, kind), .nullable = true},
	{.key = "pid", .type = RD_I64, .off = offsetof(hs_rundoc_report, pid), .nullable = true},
	{.key = "comm", .type = RD_STR, .off = offsetof(hs_rundoc_report, comm), .nullable = true},
	{.key = "damaged", .type = RD_BOOL, .off = offsetof(hs_rundoc_report, damaged)},
	{.key = "seconds", .type = RD_DOUBLE, .off = offsetof(hs_rundoc_report, seconds), .digits = 3},
	{.key = "error", .type = RD_STR, .off = offsetof(hs_rundoc_report, error), .nullable = true},
};
const rd_table hs_rundoc_report_table = RD_TABLE(hs_rundoc_report, report_fields);

void hs_rundoc_report_json(hs_json *j, const hs_rundoc_report *rep)
{
	rd_write(j, &hs_rundoc_report_table, rep);
}

hs_status rd_read_file(const char *path, hs_arena *a, const rd_table *t, void *obj)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return HS_ENOENT;
	hs_strbuf sb = {0};
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		hs_sb_appendn(&sb, buf, n);
	bool err = ferror(f);
	fclose(f);
	if (sb.oom) {
		hs_sb_free(&sb);
		return HS_ENOMEM;
	}
	if (err) {
		hs_sb_free(&sb);
		return HS_EIO;
	}
	const hs_ynode *root = rd_parse(a, path, sb.buf ? sb.buf : "", sb.len);
	hs_sb_free(&sb);
	if (!root)
		return HS_EINVAL;
	return rd_read(a, root, t, obj) ? HS_OK : HS_ENOMEM;
}

hs_status rd_write_doc(const rd_table *t, const void *obj, hs_strbuf *out)
{
	hs_json j;
	hs_json_init(&j, out);
	rd_write(&j, t, obj);
	hs_sb_putc(out, '\n');
	return out->oom ? HS_ENOMEM : HS_OK;
}
