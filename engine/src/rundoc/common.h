/* rundoc/common.h: what the run folder's documents share (rundoc/common.c). */
#ifndef HS_RUNDOC_COMMON_H
#define HS_RUNDOC_COMMON_H

#include "hindsight/rundoc.h"
#include "rundoc/field.h"

/* The capture-time report's status: snapshot.json's and run.json's snapshots[] `report`. */
extern const rd_table hs_rundoc_report_table;

/* Reads the document at path into obj through its table: HS_ENOENT, HS_EIO, HS_EINVAL (not a JSON object), HS_ENOMEM. */
hs_status rd_read_file(const char *path, hs_arena *a, const rd_table *t, void *obj);
/* Appends the document (one object and a newline). */
hs_status rd_write_doc(const rd_table *t, const void *obj, hs_strbuf *out);

#endif
