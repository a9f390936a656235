/* hindsight/tracedat.h: reader for trace-cmd's trace.dat files (every buffer instance, merged in time order). */
#ifndef HINDSIGHT_TRACEDAT_H
#define HINDSIGHT_TRACEDAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/problem.h"
#include "hindsight/status.h"

/*
 * Linux only (elsewhere every call returns HS_EUNSUPPORTED). The reader reads
 * the file format itself (trace-cmd.dat.v6(5) and v7(5): headers, options,
 * sections, zstd-compressed sections and CPU data, ring pages) and uses
 * libtraceevent for the event formats, the saved comms, field decoding and
 * filters. Every offset, size and count in the file is checked against the
 * file and limits.h before it is used (docs/tracedat-notes.md), so a damaged
 * file gets problems, never a crash; the walk holds one read window (or one
 * decompressed chunk) per CPU, whatever the file's size.
 *
 * Ownership: hs_tracedat_open returns a reader that owns its file descriptor,
 * the event formats and every string it hands out; free it with
 * hs_tracedat_close. The info and the instance names are owned by the reader
 * and live until close. Every pointer in a record handed to a callback
 * (strings other than system, name, comm and buffer, the payload) is borrowed
 * and valid only during that callback; system, name, comm and buffer live
 * until close.
 *
 * Damage: the reader adds a problem (an hs_problem of problem.h, with the file
 * offset where the damage is: for compressed data, the offset of its chunk or
 * section) for everything it cannot use, and goes on with what is readable: a
 * page or chunk that is wrong is skipped, a CPU's data cut by the end of the
 * file is read up to it. A file whose headers cannot be read is refused
 * (HS_EINVAL) with a first problem naming the file and the reason.
 */

typedef struct hs_tracedat hs_tracedat;

/* "\x17\x08\x44tracing": the first 10 bytes of every trace.dat. */
#define HS_TRACEDAT_MAGIC "\x17\x08\x44tracing"
#define HS_TRACEDAT_MAGIC_LEN 10

typedef struct {
	unsigned version;      /* file format version (6 or 7) */
	char clock[32];        /* trace clock the ring used ("mono", "local", ...); "" if the file does not say */
	unsigned cpus;         /* CPUs the file has data slots for */
	size_t n_instances;    /* named buffer instances (the top buffer is not counted) */
	const char **instances; /* their names, owned by the reader */
	uint64_t file_size;
} hs_tracedat_info;

typedef struct {
	const char *buffer;   /* "" for the top buffer, else the instance name */
	const char *system;   /* ftrace system; "?" when no format describes the record */
	const char *name;     /* event name within the system; "?" likewise */
	int id;               /* the event's ftrace id in this file (common_type) */
	int cpu;
	int pid;              /* common_pid */
	const char *comm;     /* from the file's saved cmdlines; "<...>" when it never saw the task */
	uint64_t ts;          /* ns of the file's trace clock */
	const void *data;     /* the raw record payload, common fields first */
	size_t size;
	size_t record_size;   /* what the record takes in its ring page: event header + payload */
	long long missed_events; /* the ring lost events just before this one: a count, -1 when unknown, 0 none */
	const void *priv[3];  /* private: handles for the field accessors */
} hs_tracedat_record;

/* Return non-zero to stop the walk early (hs_tracedat_foreach then returns HS_OK). */
typedef int (*hs_tracedat_record_fn)(const hs_tracedat_record *r, void *ctx);

/* HS_ENOENT, HS_EIO, HS_EINVAL (not a trace.dat, or its headers cannot be
 * read; a problem says why), HS_ENOMEM, HS_EUNSUPPORTED off Linux. On failure
 * *out is still set when a reader could be made, so its problems can be
 * printed; close it. */
hs_status hs_tracedat_open(const char *path, hs_tracedat **out);
/* The same; `probe` is kept for callers written when the reader was built on
 * libtracecmd 3.1 and read a file in a forked child first (that library
 * crashed on damaged files). The reader now checks what it reads, so probe is
 * ignored and nothing forks. */
hs_status hs_tracedat_open_ex(const char *path, bool probe, hs_tracedat **out);
void hs_tracedat_close(hs_tracedat *td);

/* True when the file starts with the trace.dat magic (no library needed). */
bool hs_tracedat_sniff(const char *path);

const hs_tracedat_info *hs_tracedat_get_info(const hs_tracedat *td);

/* Walks every record of the top buffer and of every instance, merged by time
 * (ties: buffer order, then CPU order, as libtracecmd merges). HS_OK when the
 * walk ran to its end or the callback stopped it, damage on the way included
 * (problems say what was skipped); HS_ENOMEM. */
hs_status hs_tracedat_foreach(hs_tracedat *td, hs_tracedat_record_fn fn, void *ctx);

/* Field access inside a callback. Integers are sign-extended when the event
 * format says the field is signed. Strings cover char arrays and dynamic
 * (__data_loc) strings; the copy is always NUL-terminated and truncated to cap.
 * Both return false when the event has no such field (common_* included). */
bool hs_tracedat_field_int(const hs_tracedat_record *r, const char *field, int64_t *out);
bool hs_tracedat_field_str(const hs_tracedat_record *r, const char *field, char *buf, size_t cap);

/* The payload fields of event id in its format's order (common_* left out): up to cap names (each under 32
 * bytes; longer ones are left out) into names, each with whether hs_tracedat_event_field_str reads it as text (a
 * char array or a dynamic char string). Returns how many it gave; 0 for an unknown id. */
size_t hs_tracedat_event_field_names(const hs_tracedat *td, int id, char (*names)[32], bool *is_str, size_t cap);

/* The same rules on any payload with its libtraceevent field or event (NULL:
 * false, or no names), for a reader with formats of its own: the live tracefs
 * backend reads its ring's events with them, so a trigger reads a live event
 * and a replayed one alike. Linux only (libtraceevent). */
struct tep_format_field;
struct tep_event;
bool hs_tracedat_tep_int(const struct tep_format_field *f, const void *data, size_t size, int64_t *out);
bool hs_tracedat_tep_str(const struct tep_format_field *f, const void *data, size_t size, char *buf, size_t cap);
size_t hs_tracedat_tep_names(const struct tep_event *ev, char (*names)[32], bool *is_str, size_t cap);

/* The same on a payload kept past its callback (a copy of a record's data and
 * size, `id` its hs_tracedat_record.id), through the open reader's formats.
 * A trailing char array of no declared size (ftrace/print's `buf`, the text of
 * a trace_marker write) runs to the end of the payload and comes without the
 * newline the kernel adds; hs_tracedat_field_str does the same. */
bool hs_tracedat_event_field_int(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 int64_t *out);
bool hs_tracedat_event_field_str(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 char *buf, size_t cap);

/* Fields located once, read many times. The accessors above find a field by
 * name in its event's format on every call (a list walk with strcmp); a reader
 * of millions of records asks for the same few fields of the same few events,
 * so it can locate each (event id, field) once and then read any record of
 * that event through the location without a lookup. Reads give exactly what
 * hs_tracedat_field_int / _str give (tests/tracedat/fieldloc.c compares them on
 * every field of every record of the seeds). A location is a plain value owned
 * by the caller; it stays valid while the reader is open, for records of the
 * event id it was made for (a record of another id reads false). Every read
 * checks the location against the record's own size, also for a __data_loc
 * string whose place and length the payload states, so a damaged record or a
 * hostile format never makes a read outside the payload. */
typedef struct {
	int id;            /* the event id it was located in; -1 when the field was not found */
	uint32_t offset;   /* in the payload */
	uint32_t size;     /* bytes: an integer's width, a char array's length, 4 for a __data_loc, 0 for a trailing
			      char array of no declared size (ftrace/print's buf) */
	bool is_int;       /* a number of 1, 2, 4 or 8 bytes: hs_tracedat_loc_int reads it */
	bool is_signed;    /* sign-extended when read */
	bool is_string;    /* a char array or a dynamic string: hs_tracedat_loc_str reads it */
	bool dynamic;      /* __data_loc / __rel_loc: the string's place (16 low bits) and length (16 high bits) are
			      the u32 at offset */
	bool relative;     /* __rel_loc: the place counts from the end of that u32 */
	bool trailing;     /* a char array of no declared size: runs to the payload's end, its newlines left out */
} hs_tracedat_field_loc;

/* Locates `field` in r's event (common_* excluded, as above). False, with
 * out->id = -1 (every read through it then false), when the event has no such
 * field or the record has no format. */
bool hs_tracedat_field_locate(const hs_tracedat_record *r, const char *field, hs_tracedat_field_loc *out);
/* The same for an event id of the open reader (records kept past their callback). */
bool hs_tracedat_event_field_locate(const hs_tracedat *td, int id, const char *field, hs_tracedat_field_loc *out);
/* hs_tracedat_field_int / _str through a location: false when it was not
 * found, is for another event, is not that kind of field, or lies (in part)
 * outside the record's payload. */
bool hs_tracedat_loc_int(const hs_tracedat_record *r, const hs_tracedat_field_loc *l, int64_t *out);
bool hs_tracedat_loc_str(const hs_tracedat_record *r, const hs_tracedat_field_loc *l, char *buf, size_t cap);
/* On a kept payload (data and size of a record of l's event). */
bool hs_tracedat_loc_int_data(const hs_tracedat_field_loc *l, const void *data, size_t size, int64_t *out);
bool hs_tracedat_loc_str_data(const hs_tracedat_field_loc *l, const void *data, size_t size, char *buf, size_t cap);

/* The names of r's event's own fields (common_* excluded) in format order:
 * returns how many there are and sets names[0 .. min(that, cap)), pointers
 * the reader owns until close. 0 for a record with no format. */
size_t hs_tracedat_field_names(const hs_tracedat_record *r, const char **names, size_t cap);

/* A compiled ftrace filter expression ("sig == 9 || sig == 11") for one event,
 * evaluated offline with libtraceevent's filter engine. HS_EINVAL with a
 * problem added when the expression does not compile for that event. */
typedef struct hs_tracedat_filter hs_tracedat_filter;
hs_status hs_tracedat_filter_new(hs_tracedat *td, const char *system, const char *event, const char *expr,
				 hs_tracedat_filter **out);
/* True when the record belongs to the filter's event and the expression holds. */
bool hs_tracedat_filter_match(const hs_tracedat_filter *f, const hs_tracedat_record *r);
void hs_tracedat_filter_free(hs_tracedat_filter *f);

/* Problems so far (open, walks, filters), in the order found, each once; at
 * most HS_TRACEDAT_MAX_PROBLEMS (more are counted, not kept). offset is where
 * in the file the damage is, UINT64_MAX when no offset applies.
 * hs_tracedat_problem_at is NULL for i >= count; the pointer is the reader's,
 * valid until its next problem or hs_tracedat_close. */
size_t hs_tracedat_problem_count(const hs_tracedat *td);
const hs_problem *hs_tracedat_problem_at(const hs_tracedat *td, size_t i);
/* The same problems as a list (the reader's, valid until hs_tracedat_close), for code that takes any reader's. */
const hs_problems *hs_tracedat_problems(const hs_tracedat *td);

#endif
