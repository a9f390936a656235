/* tracedat/meta_v7.c: a trace.dat v7 file's sections: options chain, header info, formats, saved comms. */
#if defined(__linux__) /* libtraceevent and libzstd: the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracedat/meta_int.h"

/* Reads section `id` at off (header checked, decompressed when flagged) into a malloc'ed block. */
static uint8_t *read_section(td_file *f, uint64_t off, uint16_t id, const char *what, size_t *len, bool *no_mem)
{
	*no_mem = false;
	uint8_t hdr[TD_SEC_HEADER_BYTES];
	if (!td_pread(f, off, hdr, sizeof hdr)) {
		td_problem(f, HS_PROBLEM_DAMAGED, off, -1, "the %s section at 0x%llx is past the end of the file", what,
			   (unsigned long long)off);
		return NULL;
	}
	uint16_t sid = td_rd16(hdr), flags = td_rd16(hdr + 2);
	uint64_t size = td_rd64(hdr + 8), data = off + TD_SEC_HEADER_BYTES;
	if (sid != id) {
		td_problem(f, HS_PROBLEM_DAMAGED, off, -1, "the %s section at 0x%llx has id %u, not %u", what,
			   (unsigned long long)off, sid, id);
		return NULL;
	}
	if (size > f->size - data) {
		td_problem(f, HS_PROBLEM_DAMAGED, off, -1,
			   "the %s section at 0x%llx says %llu bytes; the file has %llu after its header", what,
			   (unsigned long long)off, (unsigned long long)size, (unsigned long long)(f->size - data));
		return NULL;
	}
	if (!(flags & TD_SEC_FL_COMPRESS)) {
		if (size > HS_TRACEDAT_MAX_META_BYTES) {
			td_problem(f, HS_PROBLEM_UNREADABLE, off, -1, "the %s section is %llu bytes, over the %u read",
				   what, (unsigned long long)size, HS_TRACEDAT_MAX_META_BYTES);
			return NULL;
		}
		uint8_t *mem = malloc(size ? (size_t)size : 1);
		if (!mem) {
			*no_mem = true;
			return NULL;
		}
		if (!td_pread(f, data, mem, (size_t)size)) {
			free(mem);
			td_problem(f, HS_PROBLEM_UNREADABLE, off, -1, "the %s section cannot be read", what);
			return NULL;
		}
		*len = (size_t)size;
		return mem;
	}
	uint8_t zh[8];
	if (f->comp == TD_COMP_NONE || size < 8 || !td_pread(f, data, zh, sizeof zh)) {
		td_problem(f, HS_PROBLEM_DAMAGED, off, -1, "the %s section is marked compressed but is not", what);
		return NULL;
	}
	uint32_t zsize = td_rd32(zh), usize = td_rd32(zh + 4);
	if (zsize > size - 8 || usize > HS_TRACEDAT_MAX_META_BYTES) {
		td_problem(f, HS_PROBLEM_DAMAGED, off, -1,
			   "the %s section's compressed block (%u bytes -> %u) does not fit the section (%llu bytes) or "
			   "the %u read",
			   what, zsize, usize, (unsigned long long)size, HS_TRACEDAT_MAX_META_BYTES);
		return NULL;
	}
	uint8_t *z = malloc(zsize ? zsize : 1), *mem = malloc(usize ? usize : 1);
	if (!z || !mem) {
		free(z);
		free(mem);
		*no_mem = true;
		return NULL;
	}
	size_t got = 0;
	if (!td_pread(f, data + 8, z, zsize) || td_unzip(NULL, z, zsize, mem, usize, &got) != HS_OK || got != usize) {
		free(z);
		free(mem);
		td_problem(f, HS_PROBLEM_DAMAGED, off, -1, "the %s section does not decompress to its %u bytes", what,
			   usize);
		return NULL;
	}
	free(z);
	*len = usize;
	return mem;
}

/* One options section: options up to DONE, whose data is the next section's offset (0: the last). */
static hs_status read_options_section(td_file *f, td_meta *m, td_opts *o, uint64_t off, uint64_t *next)
{
	*next = 0;
	size_t len = 0;
	bool no_mem = false;
	uint8_t *mem = read_section(f, off, TD_OPT_DONE, "options", &len, &no_mem);
	if (!mem)
		return no_mem ? td_oom(f) : HS_EINVAL;
	td_cur c;
	td_cur_mem(&c, f, mem, len, off);
	hs_status st = HS_OK;
	bool done = false;
	while (st == HS_OK && td_cur_left(&c) >= 6) {
		uint16_t id;
		uint32_t n;
		td_cur_u16(&c, &id);
		td_cur_u32(&c, &n);
		if (n > td_cur_left(&c)) {
			td_problem(f, HS_PROBLEM_DAMAGED, off, -1,
				   "option %u in the options section at 0x%llx says %u bytes; %llu are left: the rest "
				   "of the section is ignored",
				   id, (unsigned long long)off, n, (unsigned long long)td_cur_left(&c));
			break;
		}
		const uint8_t *d = mem + c.pos;
		td_cur_skip(&c, n);
		if (id == TD_OPT_DONE) {
			*next = n >= 8 ? td_rd64(d) : 0;
			done = true;
			break;
		}
		st = td_handle_option(f, m, o, id, d, n, off);
	}
	if (st == HS_OK && !done)
		td_problem(f, HS_PROBLEM_DAMAGED, off, -1, "the options section at 0x%llx ends without its last option",
			   (unsigned long long)off);
	free(mem);
	return st;
}

/* A metadata section an option points to, parsed by fn; a missing or damaged one is a problem only. */
static hs_status read_meta_section(td_file *f, td_meta *m, uint64_t off, uint16_t id, const char *what,
				   hs_status (*fn)(td_file *, td_meta *, td_cur *))
{
	size_t len = 0;
	bool no_mem = false;
	uint8_t *mem = read_section(f, off, id, what, &len, &no_mem);
	if (!mem)
		return no_mem ? td_oom(f) : HS_OK;
	td_cur c;
	td_cur_mem(&c, f, mem, len, off);
	hs_status st = fn(f, m, &c);
	free(mem);
	return st;
}

hs_status td_read_v7(td_file *f, td_meta *m, td_cur *c, td_opts *o)
{
	unsigned user_long = f->user_long;
	bool no_mem = false, no_mem2 = false;
	char *name = td_cur_str(c, 64, &no_mem), *version = name ? td_cur_str(c, 64, &no_mem2) : NULL;
	uint64_t first = 0;
	hs_status st = HS_OK;
	if (!name || !version || !td_cur_u64(c, &first)) {
		st = no_mem || no_mem2 ? td_oom(f) : HS_EINVAL;
		if (st == HS_EINVAL)
			td_problem(f, HS_PROBLEM_DAMAGED, td_cur_at(c), -1, "the file header is cut");
		goto done;
	}
	if (strcmp(name, "none") == 0) {
		f->comp = TD_COMP_NONE;
	} else if (strcmp(name, "zstd") == 0) {
		f->comp = TD_COMP_ZSTD;
	} else {
		td_problem(f, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1,
			   "compressed with '%.32s', which is not read here (zstd and none are)", name);
		st = HS_EINVAL;
		goto done;
	}
	uint64_t off = first;
	for (int n = 0; off && st == HS_OK; n++) {
		if (n == HS_TRACEDAT_MAX_OPTION_SECTIONS) {
			td_problem(f, HS_PROBLEM_DAMAGED, off, -1,
				   "more than %d options sections (a loop?): the rest are ignored",
				   HS_TRACEDAT_MAX_OPTION_SECTIONS);
			break;
		}
		uint64_t next;
		st = read_options_section(f, m, o, off, &next);
		if (st == HS_EINVAL && n > 0) /* the first is the file's only required part; a later one is not */
			st = HS_OK;
		else if (st == HS_EINVAL)
			td_problem(f, HS_PROBLEM_DAMAGED, off, -1, "the first options section cannot be read");
		if (next && next <= off) {
			td_problem(f, HS_PROBLEM_DAMAGED, off, -1,
				   "the options section at 0x%llx points back to 0x%llx: the chain is cut there",
				   (unsigned long long)off, (unsigned long long)next);
			break;
		}
		off = next;
	}
	if (st != HS_OK)
		goto done;
	/* The kernel's long is the file header's until header info says otherwise. */
	f->klong = user_long;
	if (!o->sec[TD_OPT_HEADER_INFO])
		td_problem(f, HS_PROBLEM_DAMAGED, UINT64_MAX, -1,
			   "no ring page layout (header_page): assuming a %u-byte kernel long", user_long);
	static const struct {
		int id;
		const char *what;
		hs_status (*fn)(td_file *, td_meta *, td_cur *);
	} parts[] = {
		{TD_OPT_HEADER_INFO, "header info", td_read_header_info},
		{TD_OPT_FTRACE_EVENTS, "ftrace formats", td_read_ftrace_formats},
		{TD_OPT_EVENT_FORMATS, "event formats", td_read_event_formats},
		{TD_OPT_CMDLINES, "saved comms", td_read_cmdlines},
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0] && st == HS_OK; i++)
		if (o->sec[parts[i].id])
			st = read_meta_section(f, m, o->sec[parts[i].id], (uint16_t)parts[i].id, parts[i].what,
					       parts[i].fn);
	/* The trace clock: the TRACECLOCK option's, else the top buffer's own. */
	for (size_t i = 0; i < m->n_buffers && !m->clock[0]; i++)
		if (!m->buffers[i].name[0] && m->buffers[i].clock)
			td_parse_clock(m->buffers[i].clock, strlen(m->buffers[i].clock), m->clock, sizeof m->clock);
	/* Pages were checked against the long the options section could not know yet. */
	for (size_t i = 0; i < m->n_buffers; i++)
		if (!td_page_size_ok(f, m->buffers[i].page_size)) {
			td_problem(f, HS_PROBLEM_DAMAGED, UINT64_MAX, -1, "buffer '%s' has an impossible page size (%u)",
				   m->buffers[i].name, m->buffers[i].page_size);
			m->buffers[i].n_cpus = 0;
		}
done:
	free(name);
	free(version);
	return st;
}

#else
typedef int hs_tracedat_meta_v7_unused; /* ISO C wants a declaration in every file */
#endif
