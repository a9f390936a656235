/* test_winbuild.c: the compiled-in per-Windows-build listings (winbuild.h) and the coverage check over a profile. */
#include <stdlib.h>

#include "check.h"
#include "hindsight/winbuild.h"

static void test_builds(void)
{
	CHECK(hs_winbuild_count() >= 4);
	const hs_winbuild *first = hs_winbuild_at(0);
	CHECK(first != NULL);
	CHECK(hs_winbuild_at(hs_winbuild_count()) == NULL);
	/* Oldest first: build numbers only grow. */
	for (size_t i = 1; i < hs_winbuild_count(); i++)
		CHECK(hs_winbuild_at(i - 1)->number < hs_winbuild_at(i)->number);
	const hs_winbuild *b = hs_winbuild_find("W10_1507");
	CHECK(b != NULL && b->number == 10240);
	CHECK(hs_winbuild_find("w10_1507") == b);
	CHECK(hs_winbuild_find("10240") == b);
	CHECK(hs_winbuild_find("10240x") == NULL);
	CHECK(hs_winbuild_find("19041") == hs_winbuild_find("W10_2004"));
	CHECK(hs_winbuild_find("22631") == NULL); /* W11 23H2 is not in the data: no guessing from a neighbour */
	CHECK(hs_winbuild_find("") == NULL);
	CHECK(hs_winbuild_find(NULL) == NULL);
	CHECK(hs_winbuild_find("22000") == hs_winbuild_find("W11_21H2"));
}

static void test_lookup(void)
{
	const hs_winbuild *old = hs_winbuild_find("W10_1507"), *w20 = hs_winbuild_find("W10_20H2");
	const hs_winbuild *w11 = hs_winbuild_find("W11_21H2");
	const hs_winbuild_event *ev = NULL;
	CHECK(old && w20 && w11);
	/* The TDR ids are in no vendored listing (they came with W11 24H2). */
	CHECK_EQ_INT(hs_winbuild_lookup(old, "Microsoft-Windows-DxgKrnl", 540, &ev), HS_WINBUILD_MISSING);
	CHECK(ev == NULL);
	CHECK_EQ_INT(hs_winbuild_lookup(w11, "Microsoft-Windows-DxgKrnl", 548, NULL), HS_WINBUILD_MISSING);
	/* SwDevice removal only on W11; DeviceRemoval start on all three. */
	CHECK_EQ_INT(hs_winbuild_lookup(old, "Microsoft-Windows-Kernel-PnP", 1176, NULL), HS_WINBUILD_MISSING);
	CHECK_EQ_INT(hs_winbuild_lookup(w11, "Microsoft-Windows-Kernel-PnP", 1176, NULL), HS_WINBUILD_PRESENT);
	for (size_t i = 0; i < hs_winbuild_count(); i++)
		CHECK_EQ_INT(hs_winbuild_lookup(hs_winbuild_at(i), "Microsoft-Windows-Kernel-PnP", 831, NULL),
			     HS_WINBUILD_PRESENT);
	/* The 20H2 listing has the full columns. */
	bool full = false;
	CHECK(hs_winbuild_has_listing(w20, "Microsoft-Windows-Kernel-Process", &full) && full);
	CHECK(hs_winbuild_has_listing(old, "Microsoft-Windows-Kernel-Process", &full) && !full);
	CHECK_EQ_INT(hs_winbuild_lookup(w20, "Microsoft-Windows-Kernel-Process", 1, &ev), HS_WINBUILD_PRESENT);
	CHECK(ev != NULL);
	if (ev) {
		CHECK_EQ_INT(ev->id, 1);
		CHECK_EQ_INT(ev->rows, 4);
		CHECK_EQ_STR(ev->versions, "0 1 2 3");
		CHECK_EQ_STR(ev->level, "Information");
		CHECK_EQ_STR(ev->task, "ProcessStart");
		CHECK_EQ_STR(ev->keywords, "WINEVENT_KEYWORD_PROCESS");
	}
	CHECK_EQ_INT(hs_winbuild_lookup(w20, "Microsoft-Windows-Kernel-PnP", 500, &ev), HS_WINBUILD_PRESENT);
	CHECK(ev && ev->keywords && !strcmp(ev->keywords, "DevQuery ObjectLists"));
	/* Id-only listings leave the columns NULL but count the versions' rows. */
	CHECK_EQ_INT(hs_winbuild_lookup(old, "Microsoft-Windows-Kernel-Process", 1, &ev), HS_WINBUILD_PRESENT);
	CHECK(ev && ev->rows == 3 && ev->level == NULL && ev->keywords == NULL);
	/* A provider whose listing was not read is unknown, never missing (2004 has no Kernel-Process listing). */
	CHECK_EQ_INT(hs_winbuild_lookup(hs_winbuild_find("W10_2004"), "Microsoft-Windows-Kernel-Process", 1, NULL),
		     HS_WINBUILD_UNKNOWN);
	CHECK_EQ_INT(hs_winbuild_lookup(hs_winbuild_find("W10_2004"), "Microsoft-Windows-TCPIP", 1468, NULL),
		     HS_WINBUILD_PRESENT);
	CHECK_EQ_INT(hs_winbuild_lookup(w20, "Microsoft-Windows-DXGI", 42, NULL), HS_WINBUILD_UNKNOWN);
	CHECK_EQ_INT(hs_winbuild_lookup(old, "No-Such-Provider", 1, NULL), HS_WINBUILD_UNKNOWN);
	CHECK_EQ_INT(hs_winbuild_lookup(NULL, "Microsoft-Windows-Kernel-PnP", 1, NULL), HS_WINBUILD_UNKNOWN);
}

/* The shipped stutter profile on the oldest build: TDR missing, the PnP removal fallback present. */
static void test_stutter_coverage(void)
{
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	CHECK(d != NULL);
	if (!d)
		return;
	CHECK_EQ_INT(hs_rules_load(HS_TEST_RULES_DIR "/stutter.yaml", d, &rs), HS_OK);
	const hs_winbuild *old = hs_winbuild_find("W10_1507");
	size_t n = rs ? hs_winbuild_check(rs, old, NULL, NULL, 0) : 0;
	CHECK(n >= 5);
	hs_winbuild_cover *rows = calloc(n ? n : 1, sizeof *rows);
	CHECK(rows != NULL);
	if (rows && rs) {
		CHECK_EQ_INT(hs_winbuild_check(rs, old, NULL, rows, n), n);
		bool seen_dxg = false, seen_pnp = false;
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(rows[i].provider, "Microsoft-Windows-DxgKrnl")) {
				seen_dxg = true;
				CHECK_EQ_INT(rows[i].present, 0);
				CHECK_EQ_INT(rows[i].missing, rows[i].n_ids);
				CHECK(rows[i].n_missing_ids >= 1 && rows[i].missing_ids[0] == 540);
			}
			if (!strcmp(rows[i].provider, "Microsoft-Windows-Kernel-PnP")) {
				seen_pnp = true;
				bool has831 = true;
				for (size_t k = 0; k < rows[i].n_missing_ids; k++)
					has831 &= rows[i].missing_ids[k] != 831;
				CHECK(has831);
				CHECK(rows[i].present > 0);
			}
		}
		CHECK(seen_dxg && seen_pnp);
		/* With diagnostics: one HS150 per missing id, all warnings. */
		hs_diags *w = hs_diags_new();
		hs_winbuild_check(rs, old, w, NULL, 0);
		size_t missing = 0;
		for (size_t i = 0; i < n; i++)
			missing += rows[i].missing;
		CHECK(w && hs_diags_warnings(w) == missing && hs_diags_errors(w) == 0);
		hs_diags_free(w);
	}
	free(rows);
	hs_rules_free(rs);
	hs_diags_free(d);
}

int main(void)
{
	test_builds();
	test_lookup();
	test_stutter_coverage();
	return hs_test_done("test_winbuild");
}
