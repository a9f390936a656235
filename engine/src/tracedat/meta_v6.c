/* tracedat/meta_v6.c: a trace.dat v6 file's sequential headers, options and per-buffer "flyrecord" CPU ranges. */
#if defined(__linux__) /* libtraceevent and libzstd: the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracedat/meta_int.h"

/* v6 options: (u16 id, u32 size, data) until id 0. */
static hs_status read_options_v6(td_file *f, td_meta *m, td_opts *o, td_cur *c)
{
	for (;;) {
		uint64_t at = td_cur_at(c);
		uint16_t id;
		uint32_t n;
		if (!td_cur_u16(c, &id) || (id != TD_OPT_DONE && !td_cur_u32(c, &n))) {
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "the options are cut");
			return HS_EINVAL;
		}
		if (id == TD_OPT_DONE)
			return HS_OK;
		bool no_mem = false;
		char *d = td_cur_blob(c, n, &no_mem);
		if (!d) {
			if (no_mem)
				return td_oom(f);
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "option %u says %u bytes, more than the file has", id,
				   n);
			return HS_EINVAL;
		}
		hs_status st = td_handle_option(f, m, o, id, (const uint8_t *)d, n, at);
		free(d);
		if (st != HS_OK)
			return st;
	}
}

/* ["options  \0" options] then "flyrecord\0" and the CPU pairs, for the top buffer or an instance. */
static hs_status read_flyrecord_v6(td_file *f, td_meta *m, td_opts *o, td_cur *c, const char *name, bool top)
{
	char tag[10];
	uint64_t at = td_cur_at(c);
	if (!td_cur_get(c, tag, sizeof tag)) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "buffer '%s': the file ends before its data", name);
		return HS_EINVAL;
	}
	if (memcmp(tag, "options  ", 10) == 0) {
		hs_status st = read_options_v6(f, m, o, c);
		if (st != HS_OK)
			return st;
		at = td_cur_at(c);
		if (!td_cur_get(c, tag, sizeof tag)) {
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "buffer '%s': the file ends before its data", name);
			return HS_EINVAL;
		}
	}
	if (memcmp(tag, "latency  ", 10) == 0) {
		td_problem(f, HS_PROBLEM_UNREADABLE, at, -1,
			   "buffer '%s' holds a latency-tracer text, not records: it is not read", name);
		return HS_OK;
	}
	if (memcmp(tag, "flyrecord", 10) != 0) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "buffer '%s': no \"flyrecord\" tag where its data starts",
			   name);
		return HS_EINVAL;
	}
	if ((uint64_t)m->cpus * 16 > td_cur_left(c)) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "buffer '%s': the file ends inside its %u CPU data ranges",
			   name, m->cpus);
		return HS_EINVAL;
	}
	td_buffer *b = td_add_buffer(m, name);
	if (!b || !(b->cpus = calloc(m->cpus ? m->cpus : 1, sizeof(*b->cpus))))
		return td_oom(f);
	b->page_size = f->page_size;
	for (unsigned i = 0; i < m->cpus; i++) {
		td_cpu_range r = {.cpu = (int)i};
		td_cur_u64(c, &r.off);
		td_cur_u64(c, &r.size);
		b->cpus[b->n_cpus++] = r;
	}
	td_check_ranges(f, m, b, at);
	if (top && o->use_trace_clock) {
		/* The trace_clock file follows (u64 size, text); trace-cmd falls back to "local" when it is bad. */
		uint64_t size;
		bool no_mem = false;
		char *text = td_cur_u64(c, &size) && size <= TD_SMALL_TEXT_BYTES ? td_cur_blob(c, size, &no_mem) : NULL;
		if (text)
			td_parse_clock(text, (size_t)size, m->clock, sizeof m->clock);
		else
			snprintf(m->clock, sizeof m->clock, "local");
		free(text);
	}
	return HS_OK;
}

hs_status td_read_v6(td_file *f, td_meta *m, td_cur *c, td_opts *o)
{
	hs_status st = td_read_header_info(f, m, c);
	if (st != HS_OK)
		return st;
	if (!td_page_size_ok(f, f->page_size)) {
		td_problem(f, HS_PROBLEM_DAMAGED, HS_TRACEDAT_MAGIC_LEN + 4, -1, "impossible page size %u", f->page_size);
		return HS_EINVAL;
	}
	if ((st = td_read_ftrace_formats(f, m, c)) != HS_OK || (st = td_read_event_formats(f, m, c)) != HS_OK)
		return st;
	if (c->bad)
		return HS_EINVAL; /* what follows the formats cannot be found */
	uint64_t at = td_cur_at(c);
	if (!td_skip_sized32(c) || !td_skip_sized32(c)) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "the kernel symbols or printk formats are cut");
		return HS_EINVAL;
	}
	if ((st = td_read_cmdlines(f, m, c)) != HS_OK)
		return st;
	at = td_cur_at(c);
	uint32_t cpus;
	if (c->bad || !td_cur_u32(c, &cpus) || cpus > HS_TRACEDAT_MAX_CPUS) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "the CPU count is cut or impossible");
		return HS_EINVAL;
	}
	m->cpus = cpus;
	if ((st = read_flyrecord_v6(f, m, o, c, "", true)) != HS_OK)
		return st;
	for (size_t i = 0; i < o->n_v6; i++) {
		if (td_have_buffer(m, o->v6[i].name)) {
			td_problem(f, HS_PROBLEM_DAMAGED, UINT64_MAX, -1,
				   "buffer '%s' is described twice: the second is ignored", o->v6[i].name);
			continue;
		}
		td_cur bc;
		td_cur_file(&bc, f, o->v6[i].off, f->size);
		td_opts sub = {0}; /* an instance's own options hold nothing the reader uses */
		st = read_flyrecord_v6(f, m, &sub, &bc, o->v6[i].name, false);
		td_opts_free(&sub);
		if (st == HS_EINVAL) /* that buffer only */
			st = HS_OK;
		if (st != HS_OK)
			return st;
	}
	return HS_OK;
}

#else
typedef int hs_tracedat_meta_v6_unused; /* ISO C wants a declaration in every file */
#endif
