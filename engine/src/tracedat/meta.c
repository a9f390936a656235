/* tracedat/meta.c: a trace.dat's file header (magic, version, byte order, long size, page size), then the version's own reader. */
#if defined(__linux__) /* libtraceevent and libzstd: the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "tracedat/meta_int.h"

/* The versions read, each by its own file (meta_int.h has the layouts). */
static const struct {
	unsigned long version;
	hs_status (*read)(td_file *f, td_meta *m, td_cur *c, td_opts *o);
} g_versions[] = {
	{6, td_read_v6},
	{7, td_read_v7},
};

hs_status td_meta_read(td_file *f, td_meta *m)
{
	memset(m, 0, sizeof(*m));
	td_opts o = {0};
	hs_status st = HS_EINVAL;
	td_cur c;
	td_cur_file(&c, f, HS_TRACEDAT_MAGIC_LEN, f->size);
	bool no_mem = false;
	char *ver = td_cur_str(&c, 8, &no_mem);
	uint8_t el[2];
	uint32_t page = 0;
	if (!ver || !td_cur_get(&c, el, sizeof el) || !td_cur_u32(&c, &page)) {
		if (no_mem)
			return td_oom(f);
		td_problem(f, HS_PROBLEM_DAMAGED, 0, -1, "the file header is cut");
		goto done;
	}
	char *end = NULL;
	unsigned long v = strtoul(ver, &end, 10);
	size_t k = 0;
	while (k < sizeof g_versions / sizeof g_versions[0] && g_versions[k].version != v)
		k++;
	if (end == ver || *end || k == sizeof g_versions / sizeof g_versions[0]) {
		td_problem(f, HS_PROBLEM_UNREADABLE, 0, -1, "trace.dat version '%s' is not read (6 and 7 are)", ver);
		goto done;
	}
	f->version = (unsigned)v;
	uint16_t probe = 1;
	bool host_big = *(uint8_t *)&probe == 0;
	if (el[0] > 1 || (el[0] == 1) != host_big) {
		td_problem(f, HS_PROBLEM_UNREADABLE, c.pos - 6, -1,
			   "the file's byte order (flag %u) is not this machine's: it is not read here", el[0]);
		goto done;
	}
	if (el[1] != 4 && el[1] != 8) {
		td_problem(f, HS_PROBLEM_DAMAGED, c.pos - 5, -1, "impossible long size %u (4 or 8)", el[1]);
		goto done;
	}
	f->page_size = page;
	f->klong = f->user_long = el[1];
	m->tep = tep_alloc();
	if (!m->tep) {
		st = td_oom(f);
		goto done;
	}
	tep_set_file_bigendian(m->tep, host_big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(m->tep, el[1]);
	tep_set_page_size(m->tep, (int)page);
	st = g_versions[k].read(f, m, &c, &o);
	if (st != HS_OK)
		goto done;
	/* The CPUs the file has slots for: its count, or the highest CPU with data. */
	for (size_t i = 0; i < m->n_buffers; i++)
		for (size_t j = 0; j < m->buffers[i].n_cpus; j++)
			if ((unsigned)m->buffers[i].cpus[j].cpu >= m->cpus)
				m->cpus = (unsigned)m->buffers[i].cpus[j].cpu + 1;
	tep_set_cpus(m->tep, (int)m->cpus);
done:
	free(ver);
	td_opts_free(&o);
	return st;
}

void td_meta_free(td_meta *m)
{
	for (size_t i = 0; i < m->n_buffers; i++) {
		free(m->buffers[i].name);
		free(m->buffers[i].clock);
		free(m->buffers[i].cpus);
	}
	free(m->buffers);
	if (m->tep)
		tep_free(m->tep);
	memset(m, 0, sizeof(*m));
}

#else
typedef int hs_tracedat_meta_unused; /* ISO C wants a declaration in every file */
#endif
