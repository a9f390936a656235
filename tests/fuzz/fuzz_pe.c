/* fuzz_pe.c: libFuzzer target for the PE identity reader; every result must be one of the documented ones and repeatable. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/pe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static hs_pe_identity a, b;
	hs_status st = hs_pe_read_identity_memory(data, size, &a);
	if (!memchr(a.pdb_path, 0, sizeof a.pdb_path) || !memchr(a.original_filename, 0, sizeof a.original_filename) ||
	    !memchr(a.message, 0, sizeof a.message))
		abort();
	switch (st) {
	case HS_OK:
		if (a.why != HS_PE_OK || !a.has_rsds)
			abort();
		break;
	case HS_ENOENT:
		if ((a.why != HS_PE_NO_DEBUG_DIR && a.why != HS_PE_NO_RSDS) || a.has_rsds)
			abort();
		break;
	case HS_EINVAL:
		if (a.why != HS_PE_NOT_PE && a.why != HS_PE_TRUNCATED && a.why != HS_PE_CORRUPT)
			abort();
		return 0;
	default:
		abort();
	}
	/* The same bytes give the same identity. */
	if (hs_pe_read_identity_memory(data, size, &b) != st || a.time_date_stamp != b.time_date_stamp ||
	    a.size_of_image != b.size_of_image || memcmp(&a.pdb_guid, &b.pdb_guid, sizeof a.pdb_guid) != 0 ||
	    strcmp(a.pdb_path, b.pdb_path) != 0 || strcmp(a.original_filename, b.original_filename) != 0)
		abort();
	return 0;
}
