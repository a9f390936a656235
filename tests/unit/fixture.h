/* fixture.h: writes small rules files into a fresh temporary directory for the unit tests. */
#ifndef HS_TEST_FIXTURE_H
#define HS_TEST_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/rules.h"
#include "util/compat.h"

static char fixture_dir[256];

static inline const char *fixture_path(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", fixture_dir, name);
	return buf[k];
}

static inline void fixture_write(const char *name, const char *text)
{
	FILE *f = fopen(fixture_path(name), "wb"); /* the text as given: no CRLF on Windows */
	if (!f) {
		perror(name);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static inline void fixture_init(void)
{
	const char *t = getenv("TMPDIR");
	if (!t || !*t)
		t = getenv("TEMP"); /* Windows */
	snprintf(fixture_dir, sizeof fixture_dir, "%s/hs-unit-XXXXXX", t && *t ? t : "/tmp");
	if (!hs_mkdtemp(fixture_dir)) {
		perror("mkdtemp");
		exit(2);
	}
}

static inline void fixture_cleanup(void)
{
	char cmd[320];
#ifdef _WIN32
	for (char *p = fixture_dir; *p; p++)
		if (*p == '/')
			*p = '\\';
	snprintf(cmd, sizeof cmd, "rmdir /s /q \"%s\"", fixture_dir);
#else
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fixture_dir);
#endif
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", fixture_dir);
}

/* A Windows catalog with two manifest providers and a system provider. */
static const char *const fixture_win_catalog =
	"schema_version: 1\n"
	"kind: catalog\n"
	"platform: windows\n"
	"providers:\n"
	"  - name: Test-Alpha\n"
	"    kind: manifest\n"
	"    guid: 11111111-2222-3333-4444-555555555555\n"
	"    keywords: { A: 0x1, B: 0x2, C: 0x100 }\n"
	"    events:\n"
	"      - { id: 1, name: One, story: First event., keywords: [A, C] }\n"
	"      - { id: 2, name: Two, story: Second event., keywords: [B, C] }\n"
	"  - name: Test-USB-Beta\n"
	"    kind: manifest\n"
	"    guid: 11111111-2222-3333-4444-555555555556\n"
	"  - name: Test-Sys\n"
	"    kind: system\n"
	"    guid: 11111111-2222-3333-4444-555555555557\n"
	"    keywords: { PROFILE: 0x1 }\n"
	"    events:\n"
	"      - { id: 46, name: SampledProfile, story: A CPU sample., classic_guid: CE1DBFB4-137E-4DA6-87B0-3F59AA102CBC }\n";

static const char *const fixture_linux_catalog =
	"schema_version: 1\n"
	"kind: catalog\n"
	"platform: linux\n"
	"providers:\n"
	"  - name: sched\n"
	"    kind: ftrace\n"
	"    system: sched\n"
	"    events:\n"
	"      - { name: sched_process_exit, story: A task ended. }\n";

/* Loads a file from the fixture dir; returns the status, fills *d and *rs. */
static inline hs_status fixture_load(const char *name, hs_diags **d, hs_ruleset **rs)
{
	*d = hs_diags_new();
	return hs_rules_load(fixture_path(name), *d, rs);
}

static inline bool fixture_has(const hs_diags *d, hs_diag_code c)
{
	for (size_t i = 0; i < hs_diags_count(d); i++)
		if (hs_diags_at(d, i)->code == c)
			return true;
	return false;
}

static inline const hs_diag *fixture_find(const hs_diags *d, hs_diag_code c)
{
	for (size_t i = 0; i < hs_diags_count(d); i++)
		if (hs_diags_at(d, i)->code == c)
			return hs_diags_at(d, i);
	return NULL;
}

#endif
