/* tracedat/parts.c: what trace.dat v6 and v7 share: the ring page layout, event formats, saved comms, buffers and their CPU ranges. */
#if defined(__linux__) /* libtraceevent and libzstd: the trace.dat reader is Linux-only (reader.c has the stubs) */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "tracedat/meta_int.h"

hs_status td_oom(td_file *f)
{
	td_problem(f, HS_PROBLEM_UNREADABLE, UINT64_MAX, -1, "out of memory reading the file's headers");
	return HS_ENOMEM;
}

/* "local [mono] global": the bracketed word is the clock in force; older files store the name alone. */
void td_parse_clock(const char *text, size_t len, char *out, size_t cap)
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

td_buffer *td_add_buffer(td_meta *m, const char *name)
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

bool td_have_buffer(const td_meta *m, const char *name)
{
	for (size_t i = 0; i < m->n_buffers; i++)
		if (strcmp(m->buffers[i].name, name) == 0)
			return true;
	return false;
}

/* Checks a buffer's CPU ranges against the file and each other; a range cut by the end of the file is kept
 * up to it (its records up to there are read), one that starts past it or repeats a CPU is dropped, and so
 * are those past HS_TRACEDAT_MAX_STREAMS over all buffers. */
void td_check_ranges(td_file *f, td_meta *m, td_buffer *b, uint64_t at)
{
	uint64_t seen[HS_TRACEDAT_MAX_CPUS / 64] = {0}; /* CPU ids are below HS_TRACEDAT_MAX_CPUS (callers check) */
	size_t keep = 0;
	for (size_t i = 0; i < b->n_cpus; i++) {
		td_cpu_range *r = &b->cpus[i];
		if (m->n_ranges == HS_TRACEDAT_MAX_STREAMS) {
			td_problem(f, HS_PROBLEM_UNREADABLE, at, r->cpu,
				   "more than %d CPU data ranges in all buffers: buffer '%s' from CPU %d on is not read",
				   HS_TRACEDAT_MAX_STREAMS, b->name, r->cpu);
			break;
		}
		uint64_t bit = 1ull << ((unsigned)r->cpu % 64);
		if (seen[(unsigned)r->cpu / 64] & bit) {
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
		seen[(unsigned)r->cpu / 64] |= bit;
		b->cpus[keep++] = *r;
		m->n_ranges++;
	}
	b->n_cpus = keep;
}

bool td_page_size_ok(const td_file *f, uint64_t size)
{
	return size > 8u + f->klong + 8u && size <= HS_TRACEDAT_MAX_PAGE_BYTES;
}

bool td_expect_tag(td_cur *c, const char *tag, size_t len)
{
	char buf[16];
	return len <= sizeof buf && td_cur_get(c, buf, len) && memcmp(buf, tag, len) == 0;
}

/* A u64 size and that many bytes of text, NUL-terminated, into *text (the
 * caller frees it). HS_OK with *text NULL when they are cut or too large (the
 * caller says what is lost); td_oom's HS_ENOMEM when the copy cannot be made. */
static hs_status sized_text(td_file *f, td_cur *c, uint64_t *size, char **text)
{
	bool no_mem = false;
	*text = NULL;
	if (td_cur_u64(c, size) && (*text = td_cur_blob(c, *size, &no_mem)) != NULL)
		return HS_OK;
	return no_mem ? td_oom(f) : HS_OK;
}

/* sized_text that also lists the loss (fmt, a damaged-file problem at where the size stood) when the text is
 * cut or too large; the caller then only decides what reading does next. */
static hs_status sized_text_said(td_file *f, td_cur *c, uint64_t *size, char **text, const char *fmt, ...)
	HS_PRINTF_FMT(5, 6);
static hs_status sized_text_said(td_file *f, td_cur *c, uint64_t *size, char **text, const char *fmt, ...)
{
	uint64_t at = td_cur_at(c);
	hs_status st = sized_text(f, c, size, text);
	if (st == HS_OK && !*text) {
		va_list ap;
		va_start(ap, fmt);
		hs_problems_vadd(f->problems, HS_PROBLEM_DAMAGED, at, -1, fmt, ap);
		va_end(ap);
	}
	return st;
}

/* header_page and header_event: the ring page's layout; the commit field's size is the kernel's long. */
hs_status td_read_header_info(td_file *f, td_meta *m, td_cur *c)
{
	unsigned user_long = f->user_long;
	(void)m; /* the layout is read here; libtraceevent is not told (it only serves fields) */
	uint64_t at = td_cur_at(c), size;
	char *text = NULL;
	if (td_expect_tag(c, "header_page", 12) && sized_text(f, c, &size, &text) != HS_OK)
		return HS_ENOMEM;
	if (!text) {
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
	if (!td_expect_tag(c, "header_event", 13) || !td_cur_u64(c, &size) || !td_cur_skip(c, size))
		td_problem(f, HS_PROBLEM_DAMAGED, td_cur_at(c), -1, "the record header layout (header_event) is cut");
	return HS_OK;
}

/* count x (u64 size, format text) of one system. */
static hs_status read_formats(td_file *f, td_meta *m, td_cur *c, const char *system, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		uint64_t at = td_cur_at(c), size;
		char *text;
		if (sized_text_said(f, c, &size, &text,
				    "event format %u of %u of system '%s' is cut or too large: the formats after it are "
				    "not read",
				    i + 1, count, system) != HS_OK)
			return HS_ENOMEM;
		if (!text) {
			c->bad = true;
			return HS_OK;
		}
		char *clean = NULL, why[96];
		hs_status st = td_format_clean(text, (size_t)size, &clean, why, sizeof why);
		free(text);
		if (st == HS_ENOMEM)
			return td_oom(f);
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

hs_status td_read_ftrace_formats(td_file *f, td_meta *m, td_cur *c)
{
	uint32_t count;
	if (!td_cur_u32(c, &count)) {
		td_problem(f, HS_PROBLEM_DAMAGED, td_cur_at(c), -1, "the ftrace event formats are cut");
		return HS_OK;
	}
	return read_formats(f, m, c, "ftrace", count);
}

hs_status td_read_event_formats(td_file *f, td_meta *m, td_cur *c)
{
	uint32_t systems;
	if (!td_cur_u32(c, &systems)) {
		td_problem(f, HS_PROBLEM_DAMAGED, td_cur_at(c), -1, "the event formats are cut");
		return HS_OK;
	}
	for (uint32_t i = 0; i < systems && !c->bad; i++) {
		uint64_t at = td_cur_at(c);
		bool no_mem = false;
		char *system = td_cur_str(c, TD_NAME_MAX_BYTES, &no_mem);
		uint32_t count;
		if (!system || !td_cur_u32(c, &count)) {
			free(system);
			if (no_mem)
				return td_oom(f);
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
bool td_skip_sized32(td_cur *c)
{
	uint32_t size;
	return td_cur_u32(c, &size) && td_cur_skip(c, size);
}

hs_status td_read_cmdlines(td_file *f, td_meta *m, td_cur *c)
{
	uint64_t size;
	char *text;
	if (sized_text_said(f, c, &size, &text, "the saved comms are cut or too large: tasks are named \"<...>\"") !=
	    HS_OK)
		return HS_ENOMEM;
	if (!text)
		return HS_OK;
	/* "PID COMM" lines (the kernel's saved_cmdlines), read here rather than by tep_parse_saved_cmdlines,
	 * whose sscanf("%m[...]") leaked on damaged lines (fuzz:tracedat). A line that is not a pid, blanks and
	 * a name is skipped, as that parser skips it. */
	for (char *line = text, *next; line && *line; line = next) {
		char *nl = strchr(line, '\n');
		next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		char *p = line, *end = NULL;
		while (*p == ' ' || *p == '\t')
			p++;
		long pid = strtol(p, &end, 10);
		if (end == p || pid < 0 || pid > INT_MAX || (*end != ' ' && *end != '\t'))
			continue;
		while (*end == ' ' || *end == '\t')
			end++;
		if (*end)
			tep_register_comm(m->tep, end, (int)pid);
	}
	free(text);
	return HS_OK;
}

#else
typedef int hs_tracedat_parts_unused; /* ISO C wants a declaration in every file */
#endif
