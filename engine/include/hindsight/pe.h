/* hindsight/pe.h: reads the identity of a Windows PE image (exe, dll, sys): what symbol servers and merged traces need. */
#ifndef HINDSIGHT_PE_H
#define HINDSIGHT_PE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/guid.h"
#include "hindsight/status.h"

/*
 * A PE32 or PE32+ file is parsed from untrusted bytes: every offset, size and
 * count is checked against the file before it is used, and nothing is read
 * outside it. Only the parts that identify the image are read: the COFF and
 * optional headers, the section table (to map RVAs to file offsets), the
 * debug directory with its CodeView RSDS entry (the PDB's GUID, age and
 * path), and the version resource's OriginalFilename string.
 *
 * hs_pe_read_identity reads the few ranges it needs from the file with
 * stdio (a large DLL is not read whole); the path is UTF-8 (converted to
 * UTF-16 for _wfopen on Windows). The memory variant reads in place.
 *
 * Results: the status gives the class, out->why the exact reason, and
 * out->message a sentence with the offsets involved.
 *   HS_OK     everything, RSDS included (has_rsds is true).
 *   HS_ENOENT a valid image without a PDB identity: why is HS_PE_NO_DEBUG_DIR
 *             or HS_PE_NO_RSDS; every header field (machine, time stamp,
 *             size, checksum, original_filename) is filled.
 *   HS_EINVAL not a PE (HS_PE_NOT_PE), cut short (HS_PE_TRUNCATED) or
 *             inconsistent (HS_PE_CORRUPT); fields are unspecified.
 *   HS_ENOENT / HS_EPERM / HS_EIO with why HS_PE_IO: the file could not be
 *             opened or read.
 * An image whose resources are damaged still identifies: the version
 * resource is optional, so a bad one leaves original_filename empty and
 * sets version_damaged.
 */

typedef enum {
	HS_PE_OK = 0,
	HS_PE_IO,           /* cannot open or read the file */
	HS_PE_NOT_PE,       /* no MZ / PE signature, or an unknown optional-header magic */
	HS_PE_TRUNCATED,    /* a header, table or entry runs past the end of the file */
	HS_PE_CORRUPT,      /* fields that contradict each other (sizes, RVAs outside every section) */
	HS_PE_NO_DEBUG_DIR, /* the image has no debug directory */
	HS_PE_NO_RSDS,      /* a debug directory without a CodeView RSDS entry */
} hs_pe_why;

typedef struct {
	uint16_t machine;         /* IMAGE_FILE_MACHINE_*: 0x14c x86, 0x8664 x64, 0xaa64 ARM64 */
	uint16_t characteristics; /* COFF Characteristics (0x2000: DLL) */
	bool pe32plus;            /* optional header magic 0x20b (64-bit), else 0x10b */
	uint32_t time_date_stamp; /* COFF TimeDateStamp: the symbol-server key of the binary */
	uint32_t size_of_image;   /* optional header SizeOfImage (not rounded to pages) */
	uint32_t checksum;        /* optional header CheckSum (0 when the linker left it out) */
	/* CodeView RSDS debug entry (the first one in the debug directory) */
	bool has_rsds;
	hs_guid pdb_guid;
	uint32_t pdb_age;
	char pdb_path[1024];      /* bytes as stored (UTF-8 or the build machine's code page), NUL-terminated */
	bool pdb_path_truncated;
	/* VS_VERSIONINFO StringFileInfo "OriginalFilename" as UTF-8, "" when absent */
	char original_filename[256];
	bool original_filename_truncated;
	bool version_damaged;     /* a version resource exists but could not be parsed */
	hs_pe_why why;
	char message[192];        /* what went wrong, with offsets; "" on HS_OK */
} hs_pe_identity;

/* Reads the identity of the PE file at path (UTF-8). See above for results. */
hs_status hs_pe_read_identity(const char *path, hs_pe_identity *out);

/* The same over len bytes at data (tests, fuzzing). */
hs_status hs_pe_read_identity_memory(const uint8_t *data, size_t len, hs_pe_identity *out);

/* Short name of a reason ("no RSDS", ...), never NULL. */
const char *hs_pe_why_name(hs_pe_why why);

#endif
