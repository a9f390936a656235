/* rules/winbuild.c: lookups in the compiled-in per-Windows-build event listings (third_party/evtx-etw-resources). */
#include <stdlib.h>
#include <string.h>

#include "hindsight/winbuild.h"

/* One provider's listing for one build (the .psv's P line). */
typedef struct {
	int build; /* index into hs_winbuild_table */
	const char *provider;
	const char *commit;
	bool full;
} hs_winbuild_listing;

/* One present id (the .psv's E line); sorted by build, provider, id. */
typedef struct {
	int build;
	const char *provider;
	hs_winbuild_event ev;
} hs_winbuild_row_data;

#include "rules/winbuild_data.inc"

#define N_BUILDS (sizeof hs_winbuild_table / sizeof hs_winbuild_table[0])
#define N_LISTINGS (sizeof hs_winbuild_listings / sizeof hs_winbuild_listings[0])
#define N_EVENTS (sizeof hs_winbuild_events / sizeof hs_winbuild_events[0])

size_t hs_winbuild_count(void)
{
	return N_BUILDS;
}

const hs_winbuild *hs_winbuild_at(size_t i)
{
	return i < N_BUILDS ? &hs_winbuild_table[i] : NULL;
}

static bool same_ci(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a, y = *b;
		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return *a == *b;
}

const hs_winbuild *hs_winbuild_find(const char *s)
{
	if (!s || !*s)
		return NULL;
	bool digits = true;
	for (const char *c = s; *c; c++)
		digits &= *c >= '0' && *c <= '9';
	for (size_t i = 0; i < N_BUILDS; i++) {
		const hs_winbuild *b = &hs_winbuild_table[i];
		if (same_ci(s, b->name))
			return b;
		/* strtoul only on all-digit input: "19042x" is not build 19042. */
		if (digits && strlen(s) < 10 && strtoul(s, NULL, 10) == b->number)
			return b;
	}
	return NULL;
}

static int build_index(const hs_winbuild *b)
{
	if (!b || b < hs_winbuild_table || b >= hs_winbuild_table + N_BUILDS)
		return -1;
	return (int)(b - hs_winbuild_table);
}

bool hs_winbuild_has_listing(const hs_winbuild *b, const char *provider, bool *full)
{
	int bi = build_index(b);
	for (size_t i = 0; bi >= 0 && provider && i < N_LISTINGS; i++)
		if (hs_winbuild_listings[i].build == bi && strcmp(hs_winbuild_listings[i].provider, provider) == 0) {
			if (full)
				*full = hs_winbuild_listings[i].full;
			return true;
		}
	return false;
}

hs_winbuild_presence hs_winbuild_lookup(const hs_winbuild *b, const char *provider, int id,
					const hs_winbuild_event **out)
{
	if (out)
		*out = NULL;
	if (!hs_winbuild_has_listing(b, provider, NULL))
		return HS_WINBUILD_UNKNOWN;
	int bi = build_index(b);
	/* A linear scan: the table holds a few hundred rows and a check looks up a few hundred ids. */
	for (size_t i = 0; i < N_EVENTS; i++) {
		const hs_winbuild_row_data *r = &hs_winbuild_events[i];
		if (r->build != bi || r->ev.id != id || strcmp(r->provider, provider) != 0)
			continue;
		if (out)
			*out = &r->ev;
		return HS_WINBUILD_PRESENT;
	}
	return HS_WINBUILD_MISSING;
}
