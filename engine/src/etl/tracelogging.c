/* etl/tracelogging.c: decodes TraceLogging provider and event metadata carried in EVENT records' extended items. */
#include <string.h>

#include "etl/etl_format.h"
#include "hindsight/etl.h"

/* A NUL-terminated string inside [p, end), or NULL if it runs off the end. */
static const char *cstr(const uint8_t *p, const uint8_t *end, const uint8_t **after)
{
	const uint8_t *z = memchr(p, 0, (size_t)(end - p));
	if (!z)
		return NULL;
	*after = z + 1;
	return (const char *)p;
}

/* EventMetadata: u16 size, tag bytes (high bit = more), name, then fields. */
static bool decode_schema(const uint8_t *p, size_t n, hs_etl_tl_info *out)
{
	if (n < 3)
		return false;
	size_t size = hs_le16(p);
	if (size < 3 || size > n)
		return false;
	const uint8_t *end = p + size, *q = p + 2;
	while (q < end && (*q & 0x80))
		q++;
	if (q >= end)
		return false;
	q++;
	const char *name = cstr(q, end, &q);
	if (!name)
		return false;
	out->event_name = name;
	while (q < end) {
		const char *fname = cstr(q, end, &q);
		if (!fname || q >= end)
			return false;
		uint8_t in = *q++;
		hs_etl_tl_field f = {.name = fname, .in_type = in & 0x1F, .count_kind = (uint8_t)((in >> 5) & 3)};
		if (in & 0x80) {
			if (q >= end)
				return false;
			uint8_t o = *q++;
			f.out_type = o & 0x7F;
			if (o & 0x80) {
				while (q < end && (*q & 0x80))
					q++;
				if (q >= end)
					return false;
				q++;
			}
		}
		if (f.count_kind == 1) {
			if (end - q < 2)
				return false;
			f.count = hs_le16(q);
			q += 2;
		} else if (f.count_kind == 3) {
			if (end - q < 2)
				return false;
			size_t cb = hs_le16(q);
			q += 2;
			if ((size_t)(end - q) < cb)
				return false;
			q += cb;
		}
		if (out->n_fields < sizeof out->fields / sizeof out->fields[0])
			out->fields[out->n_fields] = f;
		out->n_fields++;
	}
	return true;
}

/* ProviderMetadata: u16 size, name, traits. */
static const char *decode_traits(const uint8_t *p, size_t n)
{
	if (n < 3)
		return NULL;
	size_t size = hs_le16(p);
	if (size < 3 || size > n)
		return NULL;
	const uint8_t *after;
	return cstr(p + 2, p + size, &after);
}

bool hs_etl_tl_decode(const hs_etl_record *r, hs_etl_tl_info *out)
{
	memset(out, 0, sizeof(*out));
	if (r->kind != HS_ETL_EVENT || !r->ext)
		return false;
	const uint8_t *p = r->ext, *end = r->ext + r->ext_len;
	bool schema = false;
	/* Items are validated by the reader (sizes within the record). */
	while (end - p >= 8) {
		uint16_t isz = hs_le16(p), type = hs_le16(p + 2), dsz = hs_le16(p + 6);
		if (isz < 8 || isz > end - p)
			break;
		const uint8_t *data = p + 8;
		size_t dn = dsz <= isz - 8 ? dsz : (size_t)(isz - 8);
		if (type == HS_ETL_EXT_EVENT_SCHEMA_TL)
			schema = decode_schema(data, dn, out);
		else if (type == HS_ETL_EXT_PROV_TRAITS)
			out->provider_name = decode_traits(data, dn);
		p += isz;
	}
	return schema;
}
