/* hindsight/imageid.h: adds the image-identity events of a "merged" kernel trace (KernelTraceControl ImageID, DbgID_RSDS) to an .etl file. */
#ifndef HINDSIGHT_IMAGEID_H
#define HINDSIGHT_IMAGEID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/pe.h"
#include "hindsight/problem.h"
#include "hindsight/status.h"

/*
 * A kernel trace names each loaded image only by its kernel path. To find
 * symbols on another machine, analyzers (WPA, PerfView, xperf) need each
 * image's PDB identity, which xperf/WPR add when they "merge" the trace
 * (KernelTraceControl's CreateMergedTraceFile). hs_etl_add_image_ids does the
 * same without KernelTraceControl: it copies every record of in_etl to
 * out_etl and, right before each kernel image event (Load, Unload, DCStart,
 * DCEnd), adds what the merge adds there:
 *
 *   ImageID     (opcode 0):  ImageBase, SizeOfImage, ProcessId, TimeDateStamp,
 *                            OriginalFileName;
 *   DbgID_RSDS  (opcode 36): ImageBase, ProcessId, PDB GUID, age, PDB path;
 *   or DbgID None (opcode 32): ImageBase, ProcessId, for an image without RSDS.
 *
 * Both are classic FULL records of the ImageID class with the image event's
 * timestamp, processor, thread and process, in the byte layout the merge
 * writes (docs/imageid-notes.md has the layouts and the fixture evidence).
 * An image event the input already has an ImageID for (same timestamp and
 * ImageBase: a merged file) gets nothing more.
 *
 * Each distinct kernel path is read once: the map callback turns it into a
 * local path, and the file's PE identity is read from there. Images that
 * cannot be mapped, read or parsed, or whose checksum / time stamp differ
 * from the ones the kernel logged (the file changed since), are left without
 * identity; they are counted and listed in the report, never fatal.
 *
 * Ownership: opts and its strings are only read during the call. The report's
 * problem list is allocated; free it with hs_imageid_report_free.
 */

/* Writes the local path for kernel_path (e.g. \Device\HarddiskVolume3\Windows\
 * System32\ntdll.dll -> C:\Windows\System32\ntdll.dll) into out (UTF-8,
 * NUL-terminated, at most cap bytes) and returns true; false when the path
 * cannot be mapped. */
typedef bool (*hs_imageid_map_fn)(const char *kernel_path, char *out, size_t cap, void *ctx);

typedef struct {
	hs_imageid_map_fn map; /* NULL: the kernel path is used as it is */
	void *map_ctx;
	FILE *log;             /* one line per image left without identity, and a summary; NULL for none */
	/* Skip the check that the file's CheckSum and TimeDateStamp equal the
	 * ones the kernel logged for the loaded image (tests that map kernel
	 * paths to stand-in files). */
	bool ignore_mismatch;
} hs_imageid_opts;

typedef struct {
	char kernel_path[512];  /* UTF-8, as logged (cut to fit) */
	char local_path[512];   /* what map gave, "" if it failed */
	hs_status status;       /* from hs_pe_read_identity; HS_ENOENT when unmapped, HS_EINVAL when the file changed */
	hs_pe_why why;
	/* kind (UNREADABLE: not mapped, unreadable, not PE; NAME_UNKNOWN: no RSDS,
	 * or the file is not the loaded image) and message; offset UINT64_MAX,
	 * cpu -1 (an image is not at one place in the trace) */
	hs_problem problem;
	uint32_t events;        /* image events of this path */
} hs_imageid_problem;

typedef struct {
	uint64_t records_in;        /* records read from in_etl (out_etl has these plus the added ones) */
	uint32_t image_events;      /* kernel image events (Load, Unload, DCStart, DCEnd) */
	uint32_t already_identified;/* image events the input already had an ImageID for */
	uint32_t images;            /* distinct kernel paths of the other image events */
	uint32_t images_rsds;       /* ... read, with a CodeView RSDS identity */
	uint32_t images_no_rsds;    /* ... read, no RSDS (ImageID + DbgID None added); also listed */
	uint32_t images_failed;     /* ... not mapped, unreadable, not PE, or changed; listed */
	uint32_t mismatched_events; /* image events whose file differs from the loaded image (nothing added) */
	uint32_t added_image_id, added_dbgid_rsds, added_dbgid_none; /* records added */
	size_t input_problems;      /* damage the reader reported in in_etl (records still copied) */
	size_t n_problems;
	hs_imageid_problem *problems; /* one per image without RSDS or not identified, and per changed file */
} hs_imageid_report;

/*
 * Copies in_etl to out_etl (which must be another path; it is written to a
 * temporary file and renamed when complete) with the image identities added.
 * opts may be NULL (no mapping, no messages); rep may be NULL.
 * Returns HS_OK also when some images stay unidentified (see rep); errors are
 * for the files themselves: what hs_etl_open and the writer return, HS_EINVAL
 * for out_etl == in_etl, HS_ENOMEM.
 */
hs_status hs_etl_add_image_ids(const char *in_etl, const char *out_etl, const hs_imageid_opts *opts,
			       hs_imageid_report *rep);

void hs_imageid_report_free(hs_imageid_report *rep);

/* ---- the record builders, exposed for tests and for writers of live traces ---- */

/* Header fields of an added record, taken from the image event it describes. */
typedef struct {
	bool ptr64;        /* FULL64 header and 8-byte pointers (else FULL32, 4) */
	uint32_t pid;      /* the image event's payload ProcessId */
	uint32_t tid;      /* the image event's header ThreadId (UINT32_MAX when it has none) */
	int64_t timestamp; /* the image event's timestamp */
	uint32_t kernel_time, user_time; /* the image event's SYSTEM header times (0 for other headers) */
} hs_imageid_header;

/* Fills h from an image event (r) and its decoded payload (img), the way the
 * merge does; ptr64 is the logger's pointer size (trace header), not r's. */
void hs_imageid_header_for(const hs_etl_record *r, const hs_etl_image *img, bool ptr64, hs_imageid_header *h);

/* Each builder writes one record (header + payload, unpadded, Size = its
 * length) into out and returns its length, or 0 when cap is too small. */
size_t hs_imageid_build_image_id(const hs_imageid_header *h, uint64_t image_base, uint64_t image_size,
				 uint32_t time_date_stamp, const char *original_file_name, uint8_t *out, size_t cap);
size_t hs_imageid_build_dbgid_rsds(const hs_imageid_header *h, uint64_t image_base, const hs_guid *guid,
				   uint32_t age, const char *pdb_file_name, uint8_t *out, size_t cap);
size_t hs_imageid_build_dbgid_none(const hs_imageid_header *h, uint64_t image_base, uint8_t *out, size_t cap);

#endif
