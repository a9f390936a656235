/* test_event.c: unit tests for the event identity layer: keys from records, names from catalogs, the counting table. */
#include <stdlib.h>

#include "check.h"
#include "etl/etl_format.h"
#include "hindsight/event.h"
#include "hindsight/event_counts.h"
#include "hindsight/event_names.h"

static const char *const kproc = "22FB2CD6-0E7B-422B-A0C7-2FAD1FD0E716"; /* Microsoft-Windows-Kernel-Process */
static const char *const other = "01234567-89ab-cdef-0123-456789abcdef";

/* One extended item in the file layout: u16 size, u16 type, u16 reserved, u16 data size, data. */
static size_t put_item(uint8_t *p, uint16_t type, const uint8_t *data, uint16_t n)
{
	uint16_t isz = (uint16_t)(8 + ((n + 7u) & ~7u));
	memset(p, 0, isz);
	p[0] = (uint8_t)isz, p[1] = (uint8_t)(isz >> 8);
	p[2] = (uint8_t)type, p[3] = (uint8_t)(type >> 8);
	p[6] = (uint8_t)n, p[7] = (uint8_t)(n >> 8);
	memcpy(p + 8, data, n);
	return isz;
}

static void test_keys(void)
{
	hs_etl_record r = {.kind = HS_ETL_SYSTEM, .group = 0x03, .opcode = 1};
	hs_event e;
	hs_event_from_etl(&r, &e);
	CHECK(e.key.cls == HS_EVCLS_KERNEL && e.key.group == 3 && e.key.num == 1 && !e.session_header);
	r.group = 0, r.opcode = 0;
	hs_event_from_etl(&r, &e);
	CHECK(e.key.cls == HS_EVCLS_KERNEL && e.session_header);
	r.kind = HS_ETL_PERFINFO; /* group 0 opcode 0 outside a system header is not the logfile header */
	hs_event_from_etl(&r, &e);
	CHECK(e.key.cls == HS_EVCLS_KERNEL && !e.session_header);

	hs_etl_record m = {.kind = HS_ETL_EVENT, .id = 2, .opcode = 9, .version = 3, .has_guid = true};
	CHECK(hs_guid_parse(kproc, &m.guid));
	hs_event_from_etl(&m, &e);
	CHECK(e.key.cls == HS_EVCLS_ID && e.key.num == 2 && e.key.name_hash == 0 && e.name == NULL);
	CHECK(memcmp(&e.key.guid, &m.guid, sizeof m.guid) == 0 && e.version == 3);

	/* TraceLogging: provider traits and event schema in the extended items. */
	uint8_t ext[64];
	const uint8_t schema[] = {7, 0, 0, 'B', 'a', 'r', 0};
	const uint8_t traits[] = {6, 0, 'F', 'o', 'o', 0};
	size_t n = put_item(ext, HS_ETL_EXT_PROV_TRAITS, traits, sizeof traits);
	n += put_item(ext + n, HS_ETL_EXT_EVENT_SCHEMA_TL, schema, sizeof schema);
	hs_etl_record tl = m;
	tl.ext = ext, tl.ext_len = n, tl.id = 5;
	hs_event_from_etl(&tl, &e);
	CHECK_EQ_STR(e.name, "Bar");
	CHECK_EQ_STR(e.provider, "Foo");
	CHECK(e.key.cls == HS_EVCLS_ID && e.key.num == 5 && e.key.name_hash == hs_event_name_hash("Bar"));
	CHECK(hs_event_name_hash("Bar") != hs_event_name_hash("Baz") && hs_event_name_hash("") != 0);

	hs_etl_record c = {.kind = HS_ETL_INSTANCE, .opcode = 12, .id = 99};
	CHECK(hs_guid_parse(other, &c.guid));
	hs_event_from_etl(&c, &e);
	CHECK(e.key.cls == HS_EVCLS_OPCODE && e.key.num == 12);
	hs_etl_record w = {.kind = HS_ETL_MESSAGE, .id = 77, .has_guid = true};
	CHECK(hs_guid_parse(other, &w.guid));
	hs_event_from_etl(&w, &e);
	/* WPP messages count by number alone, whatever GUID the header carries. */
	hs_event_key want = {.cls = HS_EVCLS_WPP, .num = 77};
	CHECK(memcmp(&e.key, &want, sizeof want) == 0);

	hs_tracedat_record d = {.buffer = "", .system = "sched", .name = "sched_switch", .id = 0x10123, .cpu = 1};
	hs_event_from_tracedat(&d, &e);
	CHECK(e.key.cls == HS_EVCLS_FTRACE && e.key.num == 0x123 && !e.session_header);
	d.id = -1;
	hs_event_from_tracedat(&d, &e);
	CHECK(e.key.num == 0xFFFF && e.id == 0);
}

static void test_names(const hs_ruleset *rs)
{
	hs_event_names plain = {rs}, none = {NULL};
	hs_event_label l;
	/* a kernel group is named by the library's table, with or without catalogs (engine --estimate has the same
	 * words as analyze's); one the format does not name keeps its number */
	hs_event_key k = {.cls = HS_EVCLS_KERNEL, .group = 3, .num = 1};
	hs_event_names_label(&plain, &k, NULL, NULL, &l);
	CHECK_EQ_STR(l.provider, "kernel Process (0x03)");
	CHECK_EQ_STR(l.event, "opcode 1");
	hs_event_names_label(&none, &k, NULL, NULL, &l);
	CHECK_EQ_STR(l.provider, "kernel Process (0x03)");
	hs_event_key odd = {.cls = HS_EVCLS_KERNEL, .group = 0x3E, .num = 1};
	hs_event_names_label(&plain, &odd, NULL, NULL, &l);
	CHECK_EQ_STR(l.provider, "kernel group 0x3e");

	hs_event_key id = {.cls = HS_EVCLS_ID, .num = 2};
	CHECK(hs_guid_parse(kproc, &id.guid));
	hs_event_names_label(&plain, &id, NULL, NULL, &l);
	CHECK_EQ_STR(l.provider, "Microsoft-Windows-Kernel-Process");
	CHECK_EQ_STR(l.event, "ProcessStop (id 2)");
	CHECK(l.catalog && l.cat_event && l.cat_event->story && l.cat_event->id == 2);
	/* The trace's own event name wins over the catalog's; the catalog's provider name over the trace's. */
	hs_event_names_label(&plain, &id, "Foo", "Bar", &l);
	CHECK_EQ_STR(l.provider, "Microsoft-Windows-Kernel-Process");
	CHECK_EQ_STR(l.event, "Bar (id 2)");
	/* Without rules: the numbers, or the trace's names. */
	hs_event_names_label(NULL, &id, NULL, NULL, &l);
	CHECK_EQ_STR(l.provider, "{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}");
	CHECK_EQ_STR(l.event, "id 2");
	CHECK(l.catalog == NULL && l.cat_event == NULL);
	hs_event_names_label(NULL, &id, "Foo", "Bar", &l);
	CHECK_EQ_STR(l.provider, "Foo {22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}");
	CHECK_EQ_STR(l.event, "Bar (id 2)");
	hs_event_names_label(NULL, &id, "", "", &l); /* empty names are no names */
	CHECK_EQ_STR(l.provider, "{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}");
	CHECK_EQ_STR(l.event, "id 2");
	hs_event_key op = id;
	op.cls = HS_EVCLS_OPCODE;
	hs_event_names_label(&plain, &op, NULL, NULL, &l);
	CHECK_EQ_STR(l.event, "opcode 2");
	CHECK(l.cat_event == NULL);
	hs_event_key wpp = {.cls = HS_EVCLS_WPP, .num = 7};
	hs_event_names_label(&plain, &wpp, NULL, NULL, &l);
	CHECK_EQ_STR(l.provider, "WPP");
	CHECK_EQ_STR(l.event, "message 7");

	hs_event_key ft = {.cls = HS_EVCLS_FTRACE, .num = 300};
	hs_event_names_label(&plain, &ft, "sched", "sched_process_exit", &l);
	CHECK_EQ_STR(l.provider, "sched");
	CHECK_EQ_STR(l.event, "sched_process_exit");
	CHECK(l.cat_event && l.cat_event->story);
	hs_event_names_label(&plain, &ft, "nosuchsystem", "x", &l);
	CHECK_EQ_STR(l.provider, "nosuchsystem");
	CHECK(hs_event_find_provider_system(rs, "sched") != NULL);
	CHECK(hs_event_find_provider_system(NULL, "sched") == NULL);

	char buf[48];
	CHECK_EQ_STR(hs_event_key_counts_id(&k, NULL, buf, sizeof buf), "opcode");
	CHECK_EQ_STR(buf, "kernel:0x03");
	CHECK_EQ_STR(hs_event_key_counts_id(&id, NULL, buf, sizeof buf), "id");
	CHECK_EQ_STR(buf, "22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716");
	CHECK_EQ_STR(hs_event_key_counts_id(&op, NULL, buf, sizeof buf), "opcode");
	CHECK_EQ_STR(hs_event_key_counts_id(&wpp, NULL, buf, sizeof buf), "msg");
	CHECK_EQ_STR(buf, "wpp");
	CHECK_EQ_STR(hs_event_key_counts_id(&ft, "sched", buf, sizeof buf), "event");
	CHECK_EQ_STR(buf, "sched");
}

static void test_counts(void)
{
	hs_event_counts *c = NULL;
	CHECK(hs_event_counts_new(&c) == HS_OK && c);
	if (!c)
		return;
	hs_tracedat_record d = {.buffer = "", .system = "sched", .name = "sched_switch", .id = 5};
	hs_event e;
	/* Many keys, in an order the table must keep. */
	for (int i = 0; i < 2000; i++) {
		d.id = i % 700;
		d.name = i % 700 == 5 ? "five" : "other";
		hs_event_from_tracedat(&d, &e);
		hs_event_count *n = hs_event_counts_add(c, &e.key, &e);
		CHECK(n != NULL);
		if (n) {
			n->bytes += 10;
			hs_event_count_time(n, (uint64_t)(5000 - i));
		}
	}
	CHECK_EQ_INT(hs_event_counts_len(c), 700);
	CHECK_EQ_INT(hs_event_counts_total(c), 2000);
	CHECK(!hs_event_counts_failed(c));
	const hs_event_count *n = hs_event_counts_at(c, 5);
	CHECK(n && n->key.num == 5 && n->count == 3 && n->bytes == 30);
	CHECK(n && n->timed && n->first == 5000 - 1405 && n->last == 5000 - 5);
	CHECK_EQ_STR(n ? n->name : NULL, "five");
	CHECK_EQ_STR(n ? n->provider : NULL, "sched");
	CHECK(hs_event_counts_at(c, 700) == NULL);
	hs_event_key k = {.cls = HS_EVCLS_FTRACE, .num = 699};
	n = hs_event_counts_find(c, &k);
	CHECK(n && n == hs_event_counts_at(c, 699) && n->count == 2);
	k.cls = HS_EVCLS_KERNEL;
	CHECK(hs_event_counts_find(c, &k) == NULL);
	/* Records without names (ETL kernel) keep NULL names; no record at all is fine too. */
	hs_event_count *kn = hs_event_counts_add(c, &k, NULL);
	CHECK(kn && kn->count == 1 && kn->provider == NULL && kn->name == NULL && !kn->timed);
	hs_event_counts_free(c);
	hs_event_counts_free(NULL);
}

int main(void)
{
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	hs_status st = hs_rules_load(HS_TEST_RULES_DIR "/stutter.yaml", d, &rs);
	CHECK(st == HS_OK && rs);
	test_keys();
	if (rs)
		test_names(rs);
	test_counts();
	hs_rules_free(rs);
	hs_diags_free(d);
	return hs_test_done("test_event");
}
