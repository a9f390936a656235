/* tracedat/meta_int.h: what the trace.dat header parser's files share (option ids, the options' findings, the common parts). */
#ifndef HS_TRACEDAT_META_INT_H
#define HS_TRACEDAT_META_INT_H

#include "tracedat/td_int.h"

/*
 * Layouts (trace-cmd.dat.v6(5), trace-cmd.dat.v7(5)):
 *   both: magic, "6\0" or "7\0", endianness byte, long-size byte, u32 page size;
 *   v6:   header_page / header_event texts, ftrace formats, event formats,
 *         kallsyms, printk formats, saved comms, u32 CPUs, ["options  \0"
 *         options], "flyrecord\0" and a (u64 offset, u64 size) per CPU, then the
 *         trace_clock text when a TRACECLOCK option was given; each buffer
 *         instance (a BUFFER option: offset, name) has its own ["options  \0"
 *         ...] "flyrecord\0" and CPU pairs at its offset (meta_v6.c);
 *   v7:   compression name and version strings, u64 offset of the first
 *         options section; every part is a section (u16 id, u16 flags, u32
 *         description string, u64 size) that options point to, compressed as
 *         one block (u32 compressed size, u32 size, data) when flag 1 is set
 *         (meta_v7.c).
 * kallsyms and printk formats only help printing and are never read. Files:
 * meta.c (the file header, then the version's reader) -> meta_v6.c, meta_v7.c
 * -> options.c (the option table) -> parts.c (what both versions share).
 */

/* Option ids (trace-cmd's enum tracecmd_file_options). */
enum {
	TD_OPT_DONE = 0,
	TD_OPT_DATE = 1,
	TD_OPT_BUFFER = 3,
	TD_OPT_TRACECLOCK = 4,
	TD_OPT_OFFSET = 7,
	TD_OPT_CPUCOUNT = 8,
	TD_OPT_TIME_SHIFT = 12,
	TD_OPT_TSC2NSEC = 14,
	TD_OPT_HEADER_INFO = 16,
	TD_OPT_FTRACE_EVENTS = 17,
	TD_OPT_EVENT_FORMATS = 18,
	TD_OPT_CMDLINES = 21,
	TD_OPT_BUFFER_TEXT = 22,
};

enum { TD_SEC_FL_COMPRESS = 1, TD_SEC_HEADER_BYTES = 16, TD_NAME_MAX_BYTES = 255, TD_SMALL_TEXT_BYTES = 4096 };

/* What the options say that is read after them. */
typedef struct {
	uint64_t sec[TD_OPT_CMDLINES + 1]; /* v7: section offsets by option id (0: none) */
	bool use_trace_clock;              /* v6: the trace_clock text follows the top buffer's CPU pairs */
	struct td_v6buf {
		uint64_t off;
		char *name;
	} *v6;
	size_t n_v6;
} td_opts;

/* parts.c */
hs_status td_oom(td_file *f);
void td_parse_clock(const char *text, size_t len, char *out, size_t cap);
td_buffer *td_add_buffer(td_meta *m, const char *name);
bool td_have_buffer(const td_meta *m, const char *name);
void td_check_ranges(td_file *f, td_meta *m, td_buffer *b, uint64_t at);
bool td_page_size_ok(const td_file *f, uint64_t size);
bool td_expect_tag(td_cur *c, const char *tag, size_t len);
hs_status td_read_header_info(td_file *f, td_meta *m, td_cur *c);
hs_status td_read_ftrace_formats(td_file *f, td_meta *m, td_cur *c);
hs_status td_read_event_formats(td_file *f, td_meta *m, td_cur *c);
bool td_skip_sized32(td_cur *c);
hs_status td_read_cmdlines(td_file *f, td_meta *m, td_cur *c);

/* options.c: one option's data (n bytes at d; at: the file offset problems name). */
hs_status td_handle_option(td_file *f, td_meta *m, td_opts *o, uint16_t id, const uint8_t *d, uint32_t n, uint64_t at);
void td_opts_free(td_opts *o);

/* meta_v7.c, meta_v6.c: the rest of the file after its page size, c at that point. */
hs_status td_read_v7(td_file *f, td_meta *m, td_cur *c, td_opts *o);
hs_status td_read_v6(td_file *f, td_meta *m, td_cur *c, td_opts *o);

#endif
