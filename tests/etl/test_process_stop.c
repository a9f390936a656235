/* test_process_stop.c: the Kernel-Process ProcessStop decoder on synthetic v0/v1 payloads and every truncation, NTSTATUS names, and the shipped catalog's `means: process-exit`. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "hindsight/diag.h"
#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/rules.h"

#ifndef HS_TEST_RULES_DIR
#error "HS_TEST_RULES_DIR must name the shipped rules directory"
#endif

static size_t put32(uint8_t *p, size_t o, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[o + i] = (uint8_t)(v >> (8 * i));
	return o + 4;
}

static size_t put64(uint8_t *p, size_t o, uint64_t v)
{
	o = put32(p, o, (uint32_t)v);
	return put32(p, o, (uint32_t)(v >> 32));
}

/* A ProcessStop payload as the provider logs it: the name at 48 (v0) or 76 (v1). */
static size_t process_stop(uint8_t *p, uint8_t version, uint32_t code, const char *name)
{
	memset(p, 0xEE, 512);
	size_t o = put32(p, 0, 4242);
	o = put64(p, o, 0x01D9000000000001ull);
	o = put64(p, o, 0x01D9000000000002ull);
	o = put32(p, o, code);
	o = put32(p, o, 2);  /* TokenElevationType */
	o = put32(p, o, 77); /* HandleCount */
	o = put64(p, o, 0x1000);
	o = put64(p, o, 0x2000);
	if (version == 1)
		for (int i = 0; i < 7; i++)
			o = put32(p, o, 0);
	size_t n = strlen(name) + 1;
	memcpy(p + o, name, n);
	return o + n;
}

static hs_etl_record event_record(uint8_t version, const uint8_t *p, size_t len)
{
	hs_etl_record r;
	memset(&r, 0, sizeof r);
	r.kind = HS_ETL_EVENT;
	r.id = 2;
	r.version = version;
	r.payload = p;
	r.payload_len = len;
	return r;
}

static void test_decode(void)
{
	uint8_t p[512];
	hs_etl_process_stop x;
	for (uint8_t v = 0; v <= 1; v++) {
		size_t len = process_stop(p, v, 0xC0000005u, "game.exe");
		CHECK_EQ_INT(len, (v == 0 ? 48u : 76u) + 9u);
		hs_etl_record r = event_record(v, p, len);
		CHECK(hs_etl_decode_process_stop(&r, &x));
		CHECK_EQ_INT(x.version, v);
		CHECK_EQ_INT(x.pid, 4242);
		CHECK(x.create_time == 0x01D9000000000001ull && x.exit_time == 0x01D9000000000002ull);
		CHECK_EQ_INT(x.exit_code, 0xC0000005u);
		CHECK(x.crashed);
		CHECK_EQ_INT(x.token_elevation_type, 2);
		CHECK_EQ_INT(x.handle_count, 77);
		CHECK(x.commit_charge == 0x1000 && x.commit_peak == 0x2000);
		CHECK_EQ_STR(x.image_name, "game.exe");
		CHECK(!x.truncated);

		/* Shorter than the fixed fields: not a ProcessStop we can read. */
		for (size_t cut = 0; cut < 24; cut++) {
			r = event_record(v, p, cut);
			CHECK(!hs_etl_decode_process_stop(&r, &x));
		}
		/* From the exit code on, the record still tells how the process ended;
		 * what the payload does not hold reads as 0 or "". */
		size_t name_off = v == 0 ? 48 : 76;
		for (size_t cut = 24; cut <= len; cut++) {
			r = event_record(v, p, cut);
			CHECK(hs_etl_decode_process_stop(&r, &x));
			CHECK_EQ_INT(x.exit_code, 0xC0000005u);
			CHECK_EQ_INT(x.handle_count, cut >= 32 ? 77 : 0);
			CHECK(x.commit_peak == (cut >= 48 ? 0x2000u : 0u));
			size_t have = cut > name_off ? cut - name_off : 0;
			CHECK_EQ_INT(strlen(x.image_name), have < 8 ? have : 8);
			CHECK(strncmp(x.image_name, "game.exe", strlen(x.image_name)) == 0);
		}
	}

	/* A normal exit, a non-error status, and bytes that are not UTF-8. */
	size_t len = process_stop(p, 1, 0, "a\xff" "b.exe");
	hs_etl_record r = event_record(1, p, len);
	CHECK(hs_etl_decode_process_stop(&r, &x));
	CHECK(!x.crashed);
	CHECK_EQ_STR(x.image_name, "a?b.exe");
	len = process_stop(p, 1, 0x80000003u, "x.exe");
	r = event_record(1, p, len);
	CHECK(hs_etl_decode_process_stop(&r, &x) && !x.crashed);

	/* A name longer than the field is cut, and says so. */
	char longname[400];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	len = process_stop(p, 0, 1, longname);
	r = event_record(0, p, len);
	CHECK(hs_etl_decode_process_stop(&r, &x));
	CHECK(x.truncated && strlen(x.image_name) == sizeof x.image_name - 1);

	/* Another version or another kind of record is not decoded. */
	len = process_stop(p, 1, 0, "x.exe");
	r = event_record(2, p, len);
	CHECK(!hs_etl_decode_process_stop(&r, &x));
	r = event_record(1, p, len);
	r.kind = HS_ETL_SYSTEM;
	CHECK(!hs_etl_decode_process_stop(&r, &x));
	r = event_record(1, NULL, 0);
	CHECK(!hs_etl_decode_process_stop(&r, &x));
}

static void test_ntstatus(void)
{
	CHECK_EQ_STR(hs_ntstatus_name(0xC0000005u), "STATUS_ACCESS_VIOLATION");
	CHECK_EQ_STR(hs_ntstatus_name(0xC0000409u), "STATUS_STACK_BUFFER_OVERRUN (fail-fast)");
	CHECK_EQ_STR(hs_ntstatus_name(0x40010004u), "DBG_TERMINATE_PROCESS");
	CHECK(hs_ntstatus_name(0) == NULL);
	CHECK(hs_ntstatus_name(0xC0DEC0DEu) == NULL);
}

/* Exactly one event of the shipped Windows catalog means process-exit: the
 * one whose payload the decoder reads (analyze crash relies on it). */
static void test_catalog(void)
{
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	CHECK(hs_rules_load(HS_TEST_RULES_DIR "/stutter.yaml", d, &rs) == HS_OK);
	CHECK_EQ_INT(hs_diags_count(d), 0);
	const hs_provider *kp = rs ? hs_rules_find_provider(rs, "Microsoft-Windows-Kernel-Process") : NULL;
	CHECK(kp != NULL);
	if (kp) {
		size_t exits = 0;
		for (size_t i = 0; i < kp->n_events; i++)
			exits += kp->events[i].means == HS_MEANS_PROCESS_EXIT;
		CHECK_EQ_INT(exits, 1);
		const hs_cat_event *stop = hs_provider_find_event(kp, 2, NULL);
		CHECK(stop && stop->means == HS_MEANS_PROCESS_EXIT && strcmp(stop->name, "ProcessStop") == 0);
	}
	hs_rules_free(rs);
	hs_diags_free(d);
}

int main(void)
{
	test_decode();
	test_ntstatus();
	test_catalog();
	return hs_test_done("test_process_stop");
}
