/* util/status.c: hs_strerror, generated from the status list in status.h. */
#include "hindsight/status.h"

const char *hs_strerror(hs_status st)
{
	switch (st) {
#define HS_STATUS_CASE(name, value, text) \
	case name:                        \
		return text;
		HS_STATUS_LIST(HS_STATUS_CASE)
#undef HS_STATUS_CASE
	}
	return "unknown status";
}
