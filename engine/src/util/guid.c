/* util/guid.c: GUID text <-> value (hindsight/guid.h). */
#include <stdio.h>
#include <string.h>

#include "hindsight/guid.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool hs_guid_parse(const char *s, hs_guid *out)
{
	size_t n = strlen(s);
	if (n == 38 && s[0] == '{' && s[37] == '}') {
		s++;
		n -= 2;
	}
	if (n != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
		return false;
	uint8_t b[16];
	size_t k = 0;
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			continue;
		int hi = hexval(s[i]), lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		b[k++] = (uint8_t)(hi << 4 | lo);
		i++;
	}
	/* The text is big-endian field by field; Data4 is a plain byte array. */
	out->data1 = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	out->data2 = (uint16_t)(b[4] << 8 | b[5]);
	out->data3 = (uint16_t)(b[6] << 8 | b[7]);
	memcpy(out->data4, b + 8, 8);
	return true;
}

void hs_guid_format(const hs_guid *g, char buf[37])
{
	snprintf(buf, 37, "%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X", (unsigned)g->data1,
		 (unsigned)g->data2, (unsigned)g->data3, g->data4[0], g->data4[1], g->data4[2], g->data4[3],
		 g->data4[4], g->data4[5], g->data4[6], g->data4[7]);
}

void hs_guid_format_lower(const hs_guid *g, char buf[37])
{
	snprintf(buf, 37, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", (unsigned)g->data1,
		 (unsigned)g->data2, (unsigned)g->data3, g->data4[0], g->data4[1], g->data4[2], g->data4[3],
		 g->data4[4], g->data4[5], g->data4[6], g->data4[7]);
}
