/* tracedat/options.c: trace.dat options (v6 and v7) as a table of handlers: clock, CPU count, time offsets, buffers, section offsets. */
#if defined(__linux__) /* libtraceevent and libzstd: the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracedat/meta_int.h"

/* A number the option stores as text (DATE, OFFSET), as libtracecmd reads it (strtoll base 0). */
static long long option_number(const uint8_t *d, uint32_t n)
{
	char tmp[64];
	snprintf(tmp, sizeof tmp, "%.*s", (int)(n < sizeof tmp ? n : sizeof tmp - 1), (const char *)d);
	return strtoll(tmp, NULL, 0);
}

/* v7 BUFFER: u64 section offset, name, clock, u32 page size, u32 CPUs, then (u32 cpu, u64 offset, u64 size) each. */
static hs_status option_buffer_v7(td_file *f, td_meta *m, const uint8_t *d, uint32_t n, uint64_t at)
{
	td_cur c;
	td_cur_mem(&c, f, d, n, at);
	uint64_t sec;
	uint32_t page, cpus = 0;
	bool no_mem = false, no_mem2 = false;
	char *name = NULL, *clock = NULL;
	hs_status st = HS_OK;
	if (!td_cur_u64(&c, &sec) || !(name = td_cur_str(&c, TD_NAME_MAX_BYTES, &no_mem)) ||
	    !(clock = td_cur_str(&c, TD_NAME_MAX_BYTES, &no_mem2)) || !td_cur_u32(&c, &page) || !td_cur_u32(&c, &cpus)) {
		if (no_mem || no_mem2)
			st = td_oom(f);
		else
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "a buffer description is cut: that buffer is not read");
		goto done;
	}
	if (td_have_buffer(m, name)) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "buffer '%s' is described twice: the second is ignored", name);
		goto done;
	}
	if (m->n_buffers >= HS_TRACEDAT_MAX_BUFFERS) {
		td_problem(f, HS_PROBLEM_UNREADABLE, at, -1, "more than %d buffers: buffer '%s' is not read",
			   HS_TRACEDAT_MAX_BUFFERS, name);
		goto done;
	}
	if (!td_page_size_ok(f, page) || cpus > HS_TRACEDAT_MAX_CPUS || (uint64_t)cpus * 20 > td_cur_left(&c)) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
			   "buffer '%s' has an impossible page size (%u) or CPU count (%u): it is not read", name, page,
			   cpus);
		goto done;
	}
	/* The section header says whether the CPU data is compressed. */
	uint8_t hdr[TD_SEC_HEADER_BYTES];
	if (!td_pread(f, sec, hdr, sizeof hdr) || td_rd16(hdr) != TD_OPT_BUFFER) {
		td_problem(f, HS_PROBLEM_DAMAGED, sec, -1,
			   "buffer '%s': no buffer section at offset 0x%llx: the buffer is not read", name,
			   (unsigned long long)sec);
		goto done;
	}
	bool compressed = (td_rd16(hdr + 2) & TD_SEC_FL_COMPRESS) != 0;
	if (compressed && f->comp == TD_COMP_NONE) {
		td_problem(f, HS_PROBLEM_DAMAGED, sec, -1,
			   "buffer '%s' is marked compressed in a file without compression: it is not read", name);
		goto done;
	}
	td_buffer *b = td_add_buffer(m, name);
	if (!b) {
		st = td_oom(f);
		goto done;
	}
	b->clock = clock;
	clock = NULL;
	b->page_size = page;
	b->compressed = compressed;
	b->cpus = calloc(cpus ? cpus : 1, sizeof(*b->cpus));
	if (!b->cpus) {
		st = td_oom(f);
		goto done;
	}
	for (uint32_t i = 0; i < cpus; i++) {
		uint32_t cpu;
		td_cpu_range r = {0};
		td_cur_u32(&c, &cpu);
		td_cur_u64(&c, &r.off);
		td_cur_u64(&c, &r.size);
		if (cpu >= HS_TRACEDAT_MAX_CPUS) {
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "buffer '%s' names CPU %u: its data is not read", name,
				   cpu);
			continue;
		}
		r.cpu = (int)cpu;
		b->cpus[b->n_cpus++] = r;
	}
	td_check_ranges(f, m, b, at);
done:
	free(name);
	free(clock);
	return st;
}

/* v6 BUFFER: u64 offset of the instance's own "flyrecord" part, then its name. */
static hs_status option_buffer_v6(td_file *f, td_opts *o, const uint8_t *d, uint32_t n, uint64_t at)
{
	td_cur c;
	td_cur_mem(&c, f, d, n, at);
	uint64_t off;
	bool no_mem = false;
	char *name = NULL;
	if (!td_cur_u64(&c, &off) || !(name = td_cur_str(&c, TD_NAME_MAX_BYTES, &no_mem))) {
		if (no_mem)
			return td_oom(f);
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "a buffer description is cut: that buffer is not read");
		return HS_OK;
	}
	if (o->n_v6 >= HS_TRACEDAT_MAX_BUFFERS) {
		td_problem(f, HS_PROBLEM_UNREADABLE, at, -1, "more than %d buffers: buffer '%s' is not read",
			   HS_TRACEDAT_MAX_BUFFERS, name);
		free(name);
		return HS_OK;
	}
	struct td_v6buf *v = realloc(o->v6, (o->n_v6 + 1) * sizeof(*v));
	if (!v) {
		free(name);
		return td_oom(f);
	}
	o->v6 = v;
	o->v6[o->n_v6++] = (struct td_v6buf){off, name};
	return HS_OK;
}

/* ---- the table: one handler per option id the reader uses -------------- */

typedef hs_status (*option_fn)(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
			       uint64_t at);

/* DATE: gettimeofday minus the trace clock, in us, as "0x..." text; added to every timestamp, as libtracecmd does. */
static hs_status opt_date(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n, uint64_t at)
{
	(void)f, (void)o, (void)id, (void)at;
	m->ts_offset += option_number(d, n) * 1000;
	return HS_OK;
}

/* OFFSET: ns added to every timestamp (trace-cmd record --ts-offset). */
static hs_status opt_offset(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
			    uint64_t at)
{
	(void)f, (void)o, (void)id, (void)at;
	m->ts_offset += option_number(d, n);
	return HS_OK;
}

/* TRACECLOCK: the trace_clock file ("local [mono] ..."); in v6 its text also follows the top buffer's data. */
static hs_status opt_clock(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
			   uint64_t at)
{
	(void)f, (void)id, (void)at;
	td_parse_clock((const char *)d, n, m->clock, sizeof m->clock);
	o->use_trace_clock = true;
	return HS_OK;
}

static hs_status opt_cpucount(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
			      uint64_t at)
{
	(void)o, (void)id;
	if (n >= 4 && td_rd32(d) <= HS_TRACEDAT_MAX_CPUS)
		m->cpus = td_rd32(d);
	else
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "the CPU count option is cut or impossible: ignored");
	return HS_OK;
}

/* TSC2NSEC: u32 mult, u32 shift, u64 offset; applied as libtracecmd does (ts * mult >> shift, the offset unused). */
static hs_status opt_tsc2nsec(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
			      uint64_t at)
{
	(void)o, (void)id;
	if (n < 16)
		return HS_OK;
	/* A shift over 32 is not one libtracecmd's conversion can apply. */
	if (td_rd32(d) && td_rd32(d + 4) <= 32) {
		m->tsc_mult = td_rd32(d);
		m->tsc_shift = td_rd32(d + 4);
	} else {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
			   "the TSC-to-ns conversion (mult %u, shift %u) is impossible: raw timestamps kept", td_rd32(d),
			   td_rd32(d + 4));
	}
	return HS_OK;
}

static hs_status opt_time_shift(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
				uint64_t at)
{
	(void)m, (void)o, (void)id, (void)d;
	if (n >= 16)
		td_problem(f, HS_PROBLEM_UNREADABLE, at, -1,
			   "a guest trace: its timestamps are not shifted to the host's clock here");
	return HS_OK;
}

static hs_status opt_buffer(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
			    uint64_t at)
{
	(void)id;
	return f->version >= 7 ? option_buffer_v7(f, m, d, n, at) : option_buffer_v6(f, o, d, n, at);
}

static hs_status opt_buffer_text(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
				 uint64_t at)
{
	(void)m, (void)o, (void)id, (void)d, (void)n;
	td_problem(f, HS_PROBLEM_UNREADABLE, at, -1, "a latency-tracer buffer (text, not records) is not read");
	return HS_OK;
}

/* v7: the offset of a metadata section (header info, formats, saved comms), read after every option. */
static hs_status opt_section(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n,
			     uint64_t at)
{
	(void)m, (void)at;
	if (f->version >= 7 && n >= 8)
		o->sec[id] = td_rd64(d);
	return HS_OK;
}

/* Options not listed (CPU stats, uname, version, hooks, procmaps, trace id, guests, kallsyms and printk
 * sections) help printing or host/guest merging, not reading records: skipped. */
static const struct {
	uint16_t id;
	option_fn fn;
} g_options[] = {
	{TD_OPT_DATE, opt_date},
	{TD_OPT_OFFSET, opt_offset},
	{TD_OPT_TRACECLOCK, opt_clock},
	{TD_OPT_CPUCOUNT, opt_cpucount},
	{TD_OPT_TSC2NSEC, opt_tsc2nsec},
	{TD_OPT_TIME_SHIFT, opt_time_shift},
	{TD_OPT_BUFFER, opt_buffer},
	{TD_OPT_BUFFER_TEXT, opt_buffer_text},
	{TD_OPT_HEADER_INFO, opt_section},
	{TD_OPT_FTRACE_EVENTS, opt_section},
	{TD_OPT_EVENT_FORMATS, opt_section},
	{TD_OPT_CMDLINES, opt_section},
};

hs_status td_handle_option(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n, uint64_t at)
{
	for (size_t i = 0; i < sizeof g_options / sizeof g_options[0]; i++)
		if (g_options[i].id == id)
			return g_options[i].fn(f, m, o, id, d, n, at);
	return HS_OK;
}

void td_opts_free(td_opts *o)
{
	for (size_t i = 0; i < o->n_v6; i++)
		free(o->v6[i].name);
	free(o->v6);
	o->v6 = NULL;
	o->n_v6 = 0;
}

#else
typedef int hs_tracedat_options_unused; /* ISO C wants a declaration in every file */
#endif
