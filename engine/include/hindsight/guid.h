/* hindsight/guid.h: a GUID in its Windows field layout, and its text forms; a base type for the rules, the formats and the backends. */
#ifndef HINDSIGHT_GUID_H
#define HINDSIGHT_GUID_H

#include <stdbool.h>
#include <stdint.h>

/* A GUID in its Windows field layout; Data4 is a byte array, which is why a
 * text GUID's last two groups are not byte-swapped. Plain value: no ownership. */
typedef struct {
	uint32_t data1;
	uint16_t data2, data3;
	uint8_t data4[8];
} hs_guid;

/* GUID text <-> value. Accepts optional braces, either case. */
bool hs_guid_parse(const char *s, hs_guid *out);
/* Writes "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX" (uppercase) into buf[37]. */
void hs_guid_format(const hs_guid *g, char buf[37]);
/* Same in lower case (the form trace tools print). */
void hs_guid_format_lower(const hs_guid *g, char buf[37]);

#endif
