/* read_all.h: reads a perf.data from memory every way the library can (walk, callchains, names, the CPU profile), for the damage test and the fuzzer. */
#ifndef HS_TEST_PERFDATA_READ_ALL_H
#define HS_TEST_PERFDATA_READ_ALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/cpu_profile.h"
#include "hindsight/perfdata.h"

/* Where the touched bytes go, so no compiler drops the reads. */
static volatile uint64_t hs_test_perfdata_sink;

/* Touches every byte and string a record hands out, so ASan sees any overread. */
static int hs_test_perfdata_touch(const hs_perfdata_record *r, void *ctx)
{
	uint64_t sink = r->ip ^ r->time ^ r->pid;
	for (size_t i = 0; i < r->ncallchain; i++)
		sink ^= r->callchain[i];
	for (const char *s = r->filename; s && *s; s++)
		sink ^= (uint8_t)*s;
	for (const char *s = r->comm; s && *s; s++)
		sink ^= (uint8_t)*s;
	hs_test_perfdata_sink ^= sink;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* What one read found: 0 refused, 1 read cleanly, 2 read with problems; -1 an unexpected status. The CPU
 * profile is built too when `profile` is set (it costs most of the time: its tables start at 1024 slots). */
static int hs_test_perfdata_read_all(const uint8_t *data, size_t size, uint64_t *records, bool profile)
{
	hs_perfdata *pd = NULL;
	hs_status st = hs_perfdata_open_mem(data, size, &pd);
	int rc = st == HS_EINVAL ? 0 : st == HS_OK ? 1 : -1;
	if (st == HS_OK) {
		for (size_t i = 0; i < hs_perfdata_build_id_count(pd); i++)
			for (const char *s = hs_perfdata_build_id_at(pd, i)->filename; *s; s++)
				hs_test_perfdata_sink ^= (uint8_t)*s;
		if (hs_perfdata_foreach(pd, hs_test_perfdata_touch, records) != HS_OK)
			rc = -1;
		hs_cpu_profile *p = NULL;
		if (profile && hs_cpu_profile_build_perf(pd, NULL, &p) != HS_OK)
			rc = -1;
		if (p) {
			const hs_cpu_view *v = hs_cpu_profile_view(p);
			for (size_t sid = 0; sid < v->nstacks; sid++) {
				size_t n;
				uint32_t proc;
				uint64_t w;
				const uint32_t *fr = hs_cpu_profile_stack(p, sid, &n, &proc, &w);
				for (size_t k = 0; k < n; k++)
					hs_test_perfdata_sink ^= (uint8_t)hs_cpu_profile_frame(p, fr[k])[0];
			}
		}
		hs_cpu_profile_free(p);
		if (rc == 1 && hs_perfdata_problem_count(pd))
			rc = 2;
	}
	hs_perfdata_close(pd);
	return rc;
}

#endif
