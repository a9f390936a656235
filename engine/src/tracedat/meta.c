/* tracedat/meta.c: a trace.dat's headers, options and metadata sections (v6 and v7), every offset and size checked. */
#if defined(__linux__) /* libtraceevent and libzstd: the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "tracedat/td_int.h"

/*
 * Layouts (trace-cmd.dat.v6(5), trace-cmd.dat.v7(5)):
 *   both: magic, "6\0" or "7\0", endianness byte, long-size byte, u32 page size;
 *   v6:   header_page / header_event texts, ftrace formats, event formats,
 *         kallsyms, printk formats, saved comms, u32 CPUs, ["options  \0"
 *         options], "flyrecord\0" and a (u64 offset, u64 size) per CPU, then the
 *         trace_clock text when a TRACECLOCK option was given; each buffer
 *         instance (a BUFFER option: offset, name) has its own ["options  \0"
 *         ...] "flyrecord\0" and CPU pairs at its offset;
 *   v7:   compression name and version strings, u64 offset of the first
 *         options section; every part is a section (u16 id, u16 flags, u32
 *         description string, u64 size) that options point to, compressed as
 *         one block (u32 compressed size, u32 size, data) when flag 1 is set.
 * kallsyms and printk formats only help printing and are never read.
 */

/* Option ids (trace-cmd's enum tracecmd_file_options). */
enum {
	OPT_DONE = 0,
	OPT_DATE = 1,
	OPT_BUFFER = 3,
	OPT_TRACECLOCK = 4,
	OPT_OFFSET = 7,
	OPT_CPUCOUNT = 8,
	OPT_TIME_SHIFT = 12,
	OPT_TSC2NSEC = 14,
	OPT_HEADER_INFO = 16,
	OPT_FTRACE_EVENTS = 17,
	OPT_EVENT_FORMATS = 18,
	OPT_CMDLINES = 21,
	OPT_BUFFER_TEXT = 22,
};

enum { SEC_FL_COMPRESS = 1, SEC_HEADER_BYTES = 16, NAME_MAX_BYTES = 255, SMALL_TEXT_BYTES = 4096 };

/* What the options say that is read after them. */
typedef struct {
	uint64_t sec[OPT_CMDLINES + 1]; /* v7: section offsets by option id (0: none) */
	bool use_trace_clock;           /* v6: the trace_clock text follows the top buffer's CPU pairs */
	struct v6buf {
		uint64_t off;
		char *name;
	} *v6;
	size_t n_v6;
	bool oom;
} opts;

static hs_status oom(td_file *f)
{
	td_problem(f, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1, "out of memory reading the file's headers");
	return HS_ENOMEM;
}

/* "local [mono] global": the bracketed word is the clock in force; older files store the name alone. */
static void parse_clock(const char *text, size_t len, char *out, size_t cap)
{
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%.*s", (int)(len < sizeof tmp ? len : sizeof tmp - 1), text);
	const char *open = strchr(tmp, '[');
	const char *close = open ? strchr(open, ']') : NULL;
	if (open && close)
		snprintf(out, cap, "%.*s", (int)(close - open - 1), open + 1);
	else
		snprintf(out, cap, "%.*s", (int)strcspn(tmp, " \n"), tmp);
}

static td_buffer *add_buffer(td_meta *m, const char *name)
{
	td_buffer *b = realloc(m->buffers, (m->n_buffers + 1) * sizeof(*b));
	if (!b)
		return NULL;
	m->buffers = b;
	b = &m->buffers[m->n_buffers];
	memset(b, 0, sizeof(*b));
	b->name = strdup(name);
	if (!b->name)
		return NULL;
	m->n_buffers++;
	return b;
}

static bool have_buffer(const td_meta *m, const char *name)
{
	for (size_t i = 0; i < m->n_buffers; i++)
		if (strcmp(m->buffers[i].name, name) == 0)
			return true;
	return false;
}

/* Checks a buffer's CPU ranges against the file and each other; a range cut by the end of the file is kept
 * up to it (its records up to there are read), one that starts past it or repeats a CPU is dropped. */
static void check_ranges(td_file *f, td_buffer *b, uint64_t at)
{
	size_t keep = 0;
	for (size_t i = 0; i < b->n_cpus; i++) {
		td_cpu_range *r = &b->cpus[i];
		bool dup = false;
		for (size_t j = 0; j < keep; j++)
			dup |= b->cpus[j].cpu == r->cpu;
		if (dup) {
			td_problem(f, HS_PROBLEM_DAMAGED, at, r->cpu,
				   "buffer '%s' lists CPU %d twice: the second data range is ignored", b->name, r->cpu);
			continue;
		}
		if (r->size && r->off >= f->size) {
			td_problem(f, HS_PROBLEM_DAMAGED, at, r->cpu,
				   "buffer '%s', CPU %d: its data at offset 0x%llx is past the end of the file (%llu bytes)",
				   b->name, r->cpu, (unsigned long long)r->off, (unsigned long long)f->size);
			continue;
		}
		if (r->size > f->size - r->off) {
			td_problem(f, HS_PROBLEM_DAMAGED, at, r->cpu,
				   "buffer '%s', CPU %d: the file is cut (its data needs %llu bytes at 0x%llx, %llu are "
				   "left): read up to the end",
				   b->name, r->cpu, (unsigned long long)r->size, (unsigned long long)r->off,
				   (unsigned long long)(f->size - r->off));
			r->size = f->size - r->off;
		}
		b->cpus[keep++] = *r;
	}
	b->n_cpus = keep;
}

static bool page_size_ok(const td_file *f, uint64_t size)
{
	return size > 8u + f->klong + 8u && size <= HS_TRACEDAT_MAX_PAGE_BYTES;
}

/* ---- the parts both versions share, read from a cursor ---------------- */

static bool expect_tag(td_cur *c, const char *tag, size_t len)
{
	char buf[16];
	return len <= sizeof buf && td_cur_get(c, buf, len) && memcmp(buf, tag, len) == 0;
}

/* header_page and header_event: the ring page's layout; the commit field's size is the kernel's long. */
static hs_status read_header_info(td_file *f, td_meta *m, td_cur *c, unsigned user_long)
{
	(void)m; /* the layout is read here; libtraceevent is not told (it only serves fields) */
	uint64_t at = td_cur_at(c), size;
	bool no_mem = false;
	char *text = NULL;
	if (!expect_tag(c, "header_page", 12) || !td_cur_u64(c, &size) || !(text = td_cur_blob(c, size, &no_mem))) {
		if (no_mem)
			return oom(f);
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
			   "the ring page layout (header_page) is missing or cut: assuming a %u-byte kernel long",
			   user_long);
		f->klong = user_long;
		return HS_OK;
	}
	unsigned klong = 0;
	if (td_header_page(text, (size_t)size, &klong) != HS_OK) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
			   "the ring page layout (header_page) has no 4- or 8-byte commit field: assuming a %u-byte "
			   "kernel long",
			   user_long);
		klong = user_long;
	}
	free(text);
	f->klong = klong;
	/* header_event describes the record header, which has been the same since 2.6.31: skipped. */
	if (!expect_tag(c, "header_event", 13) || !td_cur_u64(c, &size) || !td_cur_skip(c, size))
		td_problem(f, HS_PROBLEM_DAMAGED, td_cur_at(c), -1, "the record header layout (header_event) is cut");
	return HS_OK;
}

/* count x (u64 size, format text) of one system. */
static hs_status read_formats(td_file *f, td_meta *m, td_cur *c, const char *system, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		uint64_t at = td_cur_at(c), size;
		bool no_mem = false;
		char *text = NULL;
		if (!td_cur_u64(c, &size) || !(text = td_cur_blob(c, size, &no_mem))) {
			if (!c->bad && no_mem)
				return oom(f);
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
				   "event format %u of %u of system '%s' is cut or too large: the formats after it are "
				   "not read",
				   i + 1, count, system);
			c->bad = true;
			return HS_OK;
		}
		char *clean = NULL, why[96];
		hs_status st = td_format_clean(text, (size_t)size, &clean, why, sizeof why);
		free(text);
		if (st == HS_ENOMEM)
			return oom(f);
		if (st != HS_OK) {
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
				   "event format %u of %u of system '%s' is damaged (%s): not read", i + 1, count,
				   system, why);
			continue;
		}
		/* A format libtraceevent cannot fully parse is still added with what it understood. */
		tep_parse_event(m->tep, clean, strlen(clean), system);
		free(clean);
	}
	return HS_OK;
}

static hs_status read_ftrace_formats(td_file *f, td_meta *m, td_cur *c)
{
	uint32_t count;
	if (!td_cur_u32(c, &count)) {
		td_problem(f, HS_PROBLEM_DAMAGED, td_cur_at(c), -1, "the ftrace event formats are cut");
		return HS_OK;
	}
	return read_formats(f, m, c, "ftrace", count);
}

static hs_status read_event_formats(td_file *f, td_meta *m, td_cur *c)
{
	uint32_t systems;
	if (!td_cur_u32(c, &systems)) {
		td_problem(f, HS_PROBLEM_DAMAGED, td_cur_at(c), -1, "the event formats are cut");
		return HS_OK;
	}
	for (uint32_t i = 0; i < systems && !c->bad; i++) {
		uint64_t at = td_cur_at(c);
		bool no_mem = false;
		char *system = td_cur_str(c, NAME_MAX_BYTES, &no_mem);
		uint32_t count;
		if (!system || !td_cur_u32(c, &count)) {
			free(system);
			if (no_mem)
				return oom(f);
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
				   "event system %u of %u is cut or unnamed: the formats after it are not read", i + 1,
				   systems);
			return HS_OK;
		}
		hs_status st = read_formats(f, m, c, system, count);
		free(system);
		if (st != HS_OK)
			return st;
	}
	return HS_OK;
}

/* Symbols (u32 size) and printk formats (u32 size): printing aids, skipped. */
static bool skip_sized32(td_cur *c)
{
	uint32_t size;
	return td_cur_u32(c, &size) && td_cur_skip(c, size);
}

static hs_status read_cmdlines(td_file *f, td_meta *m, td_cur *c)
{
	uint64_t at = td_cur_at(c), size;
	bool no_mem = false;
	char *text = NULL;
	if (!td_cur_u64(c, &size) || !(text = td_cur_blob(c, size, &no_mem))) {
		if (!c->bad && no_mem)
			return oom(f);
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
			   "the saved comms are cut or too large: tasks are named \"<...>\"");
		return HS_OK;
	}
	tep_parse_saved_cmdlines(m->tep, text);
	free(text);
	return HS_OK;
}

/* ---- options ----------------------------------------------------------- */

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
	if (!td_cur_u64(&c, &sec) || !(name = td_cur_str(&c, NAME_MAX_BYTES, &no_mem)) ||
	    !(clock = td_cur_str(&c, NAME_MAX_BYTES, &no_mem2)) || !td_cur_u32(&c, &page) || !td_cur_u32(&c, &cpus)) {
		if (no_mem || no_mem2)
			st = oom(f);
		else
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "a buffer description is cut: that buffer is not read");
		goto done;
	}
	if (have_buffer(m, name)) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "buffer '%s' is described twice: the second is ignored", name);
		goto done;
	}
	if (m->n_buffers >= HS_TRACEDAT_MAX_BUFFERS) {
		td_problem(f, HS_PROBLEM_UNREADABLE, at, -1, "more than %d buffers: buffer '%s' is not read",
			   HS_TRACEDAT_MAX_BUFFERS, name);
		goto done;
	}
	if (!page_size_ok(f, page) || cpus > HS_TRACEDAT_MAX_CPUS || (uint64_t)cpus * 20 > td_cur_left(&c)) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
			   "buffer '%s' has an impossible page size (%u) or CPU count (%u): it is not read", name, page,
			   cpus);
		goto done;
	}
	/* The section header says whether the CPU data is compressed. */
	uint8_t hdr[SEC_HEADER_BYTES];
	if (!td_pread(f, sec, hdr, sizeof hdr) || td_rd16(hdr) != OPT_BUFFER) {
		td_problem(f, HS_PROBLEM_DAMAGED, sec, -1,
			   "buffer '%s': no buffer section at offset 0x%llx: the buffer is not read", name,
			   (unsigned long long)sec);
		goto done;
	}
	bool compressed = (td_rd16(hdr + 2) & SEC_FL_COMPRESS) != 0;
	if (compressed && f->comp == TD_COMP_NONE) {
		td_problem(f, HS_PROBLEM_DAMAGED, sec, -1,
			   "buffer '%s' is marked compressed in a file without compression: it is not read", name);
		goto done;
	}
	td_buffer *b = add_buffer(m, name);
	if (!b) {
		st = oom(f);
		goto done;
	}
	b->clock = clock;
	clock = NULL;
	b->page_size = page;
	b->compressed = compressed;
	b->cpus = calloc(cpus ? cpus : 1, sizeof(*b->cpus));
	if (!b->cpus) {
		st = oom(f);
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
	check_ranges(f, b, at);
done:
	free(name);
	free(clock);
	return st;
}

/* v6 BUFFER: u64 offset of the instance's own "flyrecord" part, then its name. */
static hs_status option_buffer_v6(td_file *f, opts *o, const uint8_t *d, uint32_t n, uint64_t at)
{
	td_cur c;
	td_cur_mem(&c, f, d, n, at);
	uint64_t off;
	bool no_mem = false;
	char *name = NULL;
	if (!td_cur_u64(&c, &off) || !(name = td_cur_str(&c, NAME_MAX_BYTES, &no_mem))) {
		if (no_mem)
			return oom(f);
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "a buffer description is cut: that buffer is not read");
		return HS_OK;
	}
	if (o->n_v6 >= HS_TRACEDAT_MAX_BUFFERS) {
		td_problem(f, HS_PROBLEM_UNREADABLE, at, -1, "more than %d buffers: buffer '%s' is not read",
			   HS_TRACEDAT_MAX_BUFFERS, name);
		free(name);
		return HS_OK;
	}
	struct v6buf *v = realloc(o->v6, (o->n_v6 + 1) * sizeof(*v));
	if (!v) {
		free(name);
		return oom(f);
	}
	o->v6 = v;
	o->v6[o->n_v6++] = (struct v6buf){off, name};
	return HS_OK;
}

static hs_status handle_option(td_file *f, td_meta *m, opts *o, uint16_t id, const uint8_t *d, uint32_t n,
			       uint64_t at)
{
	switch (id) {
	case OPT_DATE:
		/* gettimeofday minus the trace clock, in us, as "0x..." text. */
		m->ts_offset += option_number(d, n) * 1000;
		break;
	case OPT_OFFSET:
		m->ts_offset += option_number(d, n);
		break;
	case OPT_TRACECLOCK:
		parse_clock((const char *)d, n, m->clock, sizeof m->clock);
		o->use_trace_clock = true;
		break;
	case OPT_CPUCOUNT:
		if (n >= 4 && td_rd32(d) <= HS_TRACEDAT_MAX_CPUS)
			m->cpus = td_rd32(d);
		else
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "the CPU count option is cut or impossible: ignored");
		break;
	case OPT_TSC2NSEC:
		if (n < 16)
			break;
		/* mult and shift as libtracecmd applies them (ts * mult >> shift); a shift over 32 is not one it makes. */
		if (td_rd32(d) && td_rd32(d + 4) <= 32) {
			m->tsc_mult = td_rd32(d);
			m->tsc_shift = td_rd32(d + 4);
		} else {
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1,
				   "the TSC-to-ns conversion (mult %u, shift %u) is impossible: raw timestamps kept",
				   td_rd32(d), td_rd32(d + 4));
		}
		break;
	case OPT_TIME_SHIFT:
		if (n >= 16)
			td_problem(f, HS_PROBLEM_UNREADABLE, at, -1,
				   "a guest trace: its timestamps are not shifted to the host's clock here");
		break;
	case OPT_BUFFER:
		return f->version >= 7 ? option_buffer_v7(f, m, d, n, at) : option_buffer_v6(f, o, d, n, at);
	case OPT_BUFFER_TEXT:
		td_problem(f, HS_PROBLEM_UNREADABLE, at, -1,
			   "a latency-tracer buffer (text, not records) is not read");
		break;
	case OPT_HEADER_INFO:
	case OPT_FTRACE_EVENTS:
	case OPT_EVENT_FORMATS:
	case OPT_CMDLINES:
		if (f->version >= 7 && n >= 8)
			o->sec[id] = td_rd64(d);
		break;
	default: /* printing aids, host/guest and procmap data: not needed to read records */
		break;
	}
	return HS_OK;
}

/* ---- v7 ---------------------------------------------------------------- */

/* Reads section `id` at off (header checked, decompressed when flagged) into a malloc'ed block. */
static uint8_t *read_section(td_file *f, uint64_t off, uint16_t id, const char *what, size_t *len, bool *no_mem)
{
	*no_mem = false;
	uint8_t hdr[SEC_HEADER_BYTES];
	if (!td_pread(f, off, hdr, sizeof hdr)) {
		td_problem(f, HS_PROBLEM_DAMAGED, off, -1, "the %s section at 0x%llx is past the end of the file", what,
			   (unsigned long long)off);
		return NULL;
	}
	uint16_t sid = td_rd16(hdr), flags = td_rd16(hdr + 2);
	uint64_t size = td_rd64(hdr + 8), data = off + SEC_HEADER_BYTES;
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
	if (!(flags & SEC_FL_COMPRESS)) {
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
static hs_status read_options_section(td_file *f, td_meta *m, opts *o, uint64_t off, uint64_t *next)
{
	*next = 0;
	size_t len = 0;
	bool no_mem = false;
	uint8_t *mem = read_section(f, off, OPT_DONE, "options", &len, &no_mem);
	if (!mem)
		return no_mem ? oom(f) : HS_EINVAL;
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
		if (id == OPT_DONE) {
			*next = n >= 8 ? td_rd64(d) : 0;
			done = true;
			break;
		}
		st = handle_option(f, m, o, id, d, n, off);
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
		return no_mem ? oom(f) : HS_OK;
	td_cur c;
	td_cur_mem(&c, f, mem, len, off);
	hs_status st = fn(f, m, &c);
	free(mem);
	return st;
}

static hs_status header_info_fn(td_file *f, td_meta *m, td_cur *c)
{
	return read_header_info(f, m, c, f->user_long);
}

static hs_status read_v7(td_file *f, td_meta *m, td_cur *c, opts *o, unsigned user_long)
{
	bool no_mem = false, no_mem2 = false;
	char *name = td_cur_str(c, 64, &no_mem), *version = name ? td_cur_str(c, 64, &no_mem2) : NULL;
	uint64_t first = 0;
	hs_status st = HS_OK;
	if (!name || !version || !td_cur_u64(c, &first)) {
		st = no_mem || no_mem2 ? oom(f) : HS_EINVAL;
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
	if (!o->sec[OPT_HEADER_INFO]) {
		td_problem(f, HS_PROBLEM_DAMAGED, UINT64_MAX, -1,
			   "no ring page layout (header_page): assuming a %u-byte kernel long", user_long);
		f->klong = user_long;
	} else {
		f->klong = user_long;
		st = read_meta_section(f, m, o->sec[OPT_HEADER_INFO], OPT_HEADER_INFO, "header info", header_info_fn);
	}
	static const struct {
		int id;
		const char *what;
		hs_status (*fn)(td_file *, td_meta *, td_cur *);
	} parts[] = {
		{OPT_FTRACE_EVENTS, "ftrace formats", read_ftrace_formats},
		{OPT_EVENT_FORMATS, "event formats", read_event_formats},
		{OPT_CMDLINES, "saved comms", read_cmdlines},
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0] && st == HS_OK; i++)
		if (o->sec[parts[i].id])
			st = read_meta_section(f, m, o->sec[parts[i].id], (uint16_t)parts[i].id, parts[i].what,
					       parts[i].fn);
	/* The trace clock: the TRACECLOCK option's, else the top buffer's own. */
	for (size_t i = 0; i < m->n_buffers && !m->clock[0]; i++)
		if (!m->buffers[i].name[0] && m->buffers[i].clock)
			parse_clock(m->buffers[i].clock, strlen(m->buffers[i].clock), m->clock, sizeof m->clock);
	/* Pages were checked against the long the options section could not know yet. */
	for (size_t i = 0; i < m->n_buffers; i++)
		if (!page_size_ok(f, m->buffers[i].page_size)) {
			td_problem(f, HS_PROBLEM_DAMAGED, UINT64_MAX, -1, "buffer '%s' has an impossible page size (%u)",
				   m->buffers[i].name, m->buffers[i].page_size);
			m->buffers[i].n_cpus = 0;
		}
done:
	free(name);
	free(version);
	return st;
}

/* ---- v6 ---------------------------------------------------------------- */

/* v6 options: (u16 id, u32 size, data) until id 0. */
static hs_status read_options_v6(td_file *f, td_meta *m, opts *o, td_cur *c)
{
	for (;;) {
		uint64_t at = td_cur_at(c);
		uint16_t id;
		uint32_t n;
		if (!td_cur_u16(c, &id) || (id != OPT_DONE && !td_cur_u32(c, &n))) {
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "the options are cut");
			return HS_EINVAL;
		}
		if (id == OPT_DONE)
			return HS_OK;
		bool no_mem = false;
		char *d = td_cur_blob(c, n, &no_mem);
		if (!d) {
			if (no_mem)
				return oom(f);
			td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "option %u says %u bytes, more than the file has", id,
				   n);
			return HS_EINVAL;
		}
		hs_status st = handle_option(f, m, o, id, (const uint8_t *)d, n, at);
		free(d);
		if (st != HS_OK)
			return st;
	}
}

/* ["options  \0" options] then "flyrecord\0" and the CPU pairs, for the top buffer or an instance. */
static hs_status read_flyrecord_v6(td_file *f, td_meta *m, opts *o, td_cur *c, const char *name, bool top)
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
	td_buffer *b = add_buffer(m, name);
	if (!b || !(b->cpus = calloc(m->cpus ? m->cpus : 1, sizeof(*b->cpus))))
		return oom(f);
	b->page_size = f->page_size;
	for (unsigned i = 0; i < m->cpus; i++) {
		td_cpu_range r = {.cpu = (int)i};
		td_cur_u64(c, &r.off);
		td_cur_u64(c, &r.size);
		b->cpus[b->n_cpus++] = r;
	}
	check_ranges(f, b, at);
	if (top && o->use_trace_clock) {
		/* The trace_clock file follows (u64 size, text); trace-cmd falls back to "local" when it is bad. */
		uint64_t size;
		bool no_mem = false;
		char *text = td_cur_u64(c, &size) && size <= SMALL_TEXT_BYTES ? td_cur_blob(c, size, &no_mem) : NULL;
		if (text)
			parse_clock(text, (size_t)size, m->clock, sizeof m->clock);
		else
			snprintf(m->clock, sizeof m->clock, "local");
		free(text);
	}
	return HS_OK;
}

static hs_status read_v6(td_file *f, td_meta *m, td_cur *c, opts *o, unsigned user_long)
{
	hs_status st = read_header_info(f, m, c, user_long);
	if (st != HS_OK)
		return st;
	if (!page_size_ok(f, f->page_size)) {
		td_problem(f, HS_PROBLEM_DAMAGED, HS_TRACEDAT_MAGIC_LEN + 4, -1, "impossible page size %u", f->page_size);
		return HS_EINVAL;
	}
	if ((st = read_ftrace_formats(f, m, c)) != HS_OK || (st = read_event_formats(f, m, c)) != HS_OK)
		return st;
	if (c->bad)
		return HS_EINVAL; /* what follows the formats cannot be found */
	uint64_t at = td_cur_at(c);
	if (!skip_sized32(c) || !skip_sized32(c)) {
		td_problem(f, HS_PROBLEM_DAMAGED, at, -1, "the kernel symbols or printk formats are cut");
		return HS_EINVAL;
	}
	if ((st = read_cmdlines(f, m, c)) != HS_OK)
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
		if (have_buffer(m, o->v6[i].name)) {
			td_problem(f, HS_PROBLEM_DAMAGED, UINT64_MAX, -1,
				   "buffer '%s' is described twice: the second is ignored", o->v6[i].name);
			continue;
		}
		td_cur bc;
		td_cur_file(&bc, f, o->v6[i].off, f->size);
		opts sub = {0}; /* an instance's own options hold nothing the reader uses */
		st = read_flyrecord_v6(f, m, &sub, &bc, o->v6[i].name, false);
		for (size_t j = 0; j < sub.n_v6; j++)
			free(sub.v6[j].name);
		free(sub.v6);
		if (st == HS_EINVAL) /* that buffer only */
			st = HS_OK;
		if (st != HS_OK)
			return st;
	}
	return HS_OK;
}

/* ---- entry ------------------------------------------------------------- */

hs_status td_meta_read(td_file *f, td_meta *m)
{
	memset(m, 0, sizeof(*m));
	opts o = {0};
	hs_status st = HS_EINVAL;
	td_cur c;
	td_cur_file(&c, f, HS_TRACEDAT_MAGIC_LEN, f->size);
	bool no_mem = false;
	char *ver = td_cur_str(&c, 8, &no_mem);
	uint8_t el[2];
	uint32_t page = 0;
	if (!ver || !td_cur_get(&c, el, sizeof el) || !td_cur_u32(&c, &page)) {
		if (no_mem)
			return oom(f);
		td_problem(f, HS_PROBLEM_DAMAGED, 0, -1, "the file header is cut");
		goto done;
	}
	char *end = NULL;
	unsigned long v = strtoul(ver, &end, 10);
	if (end == ver || *end || (v != 6 && v != 7)) {
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
		st = oom(f);
		goto done;
	}
	tep_set_file_bigendian(m->tep, host_big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(m->tep, el[1]);
	tep_set_page_size(m->tep, (int)page);
	st = f->version == 7 ? read_v7(f, m, &c, &o, el[1]) : read_v6(f, m, &c, &o, el[1]);
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
	for (size_t i = 0; i < o.n_v6; i++)
		free(o.v6[i].name);
	free(o.v6);
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
