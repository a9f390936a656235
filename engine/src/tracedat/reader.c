/* tracedat/reader.c: trace.dat reading through libtracecmd's public API, all buffer instances merged by time. */
#include "hindsight/tracedat.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/compat.h"

bool hs_tracedat_sniff(const char *path)
{
	char head[HS_TRACEDAT_MAGIC_LEN];
	FILE *f = hs_fopen(path, "rb");
	if (!f)
		return false;
	bool ok = fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, HS_TRACEDAT_MAGIC, sizeof head) == 0;
	fclose(f);
	return ok;
}

#if defined(__linux__)

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <trace-cmd/trace-cmd.h>

/* Exported by libtracecmd.so.1 (3.x) but declared only in its private header,
 * which Debian does not ship. Read-only getters whose signature has not
 * changed across 3.x. */
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);

enum { MAX_PROBLEMS = 64 };

struct hs_tracedat {
	struct tracecmd_input *top;
	struct tracecmd_input **handles; /* [0] = top, then one per instance; [1..] owned */
	const char **names;              /* per handle: "" or the instance name (libtracecmd's strings) */
	size_t n_handles;
	struct tep_handle *tep;
	hs_tracedat_info info;
	hs_problems problems; /* limit MAX_PROBLEMS; libtracecmd gives no file offsets */
};

struct hs_tracedat_filter {
	hs_tracedat *td;
	struct tep_event_filter *filter;
	int id; /* the event the filter is for */
};

HS_PRINTF_FMT(4, 5) static void problem(hs_tracedat *td, hs_problem_kind kind, int cpu, const char *fmt, ...)
{
	char buf[HS_PROBLEM_MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	/* Dropped on out of memory, counted past the limit; reading goes on. */
	hs_problems_add(&td->problems, kind, UINT64_MAX, cpu, "%s", buf);
}

/* The version is the NUL-terminated decimal string right after the magic. */
static hs_status read_version(const char *path, unsigned *version, uint64_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? HS_ENOENT : HS_EIO;
	char head[HS_TRACEDAT_MAGIC_LEN + 8] = {0};
	size_t got = fread(head, 1, sizeof head - 1, f);
	struct stat st;
	*size = fstat(fileno(f), &st) == 0 ? (uint64_t)st.st_size : 0;
	fclose(f);
	if (got < HS_TRACEDAT_MAGIC_LEN + 2 || memcmp(head, HS_TRACEDAT_MAGIC, HS_TRACEDAT_MAGIC_LEN) != 0)
		return HS_EINVAL;
	char *end = NULL;
	unsigned long v = strtoul(head + HS_TRACEDAT_MAGIC_LEN, &end, 10);
	if (end == head + HS_TRACEDAT_MAGIC_LEN || *end != '\0' || v == 0 || v > 100)
		return HS_EINVAL;
	*version = (unsigned)v;
	return HS_OK;
}

/* The file stores the whole trace_clock file ("local [mono] global ..."); the
 * bracketed word is the clock in force. Older files store just the name. */
static void parse_clock(const char *text, char *out, size_t cap)
{
	out[0] = '\0';
	if (!text)
		return;
	const char *open = strchr(text, '[');
	const char *close = open ? strchr(open, ']') : NULL;
	if (open && close) {
		snprintf(out, cap, "%.*s", (int)(close - open - 1), open + 1);
		return;
	}
	size_t n = strcspn(text, " \n");
	snprintf(out, cap, "%.*s", (int)n, text);
}

static int probe_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *vctx)
{
	struct tep_handle *tep = vctx;
	(void)h, (void)cpu;
	tep_find_event_by_record(tep, rec);
	tep_data_comm_from_pid(tep, tep_data_pid(tep, rec));
	return 0;
}

/* libtracecmd 3.1 crashes on some damaged files (seen: a fault inside
 * tracecmd_buffer_instance_handle's own error path). It is not ours to fix,
 * so a child process reads the whole file first, silently; only a file that
 * child survived is read in this process. Returns the signal that killed the
 * child, 0 if it survived, -1 if no child could be made (then we read anyway). */
static int probe_in_child(const char *path)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		struct tracecmd_input *top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (!top)
			_exit(1);
		int n = tracecmd_buffer_instances(top);
		struct tracecmd_input *hs[65] = {top};
		int nh = 1;
		for (int i = 0; i < n && nh < 65; i++) {
			struct tracecmd_input *h = tracecmd_buffer_instance_handle(top, i);
			if (h)
				hs[nh++] = h;
		}
		tracecmd_iterate_events_multi(hs, nh, probe_record, tracecmd_get_tep(top));
		_exit(0);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

hs_status hs_tracedat_open(const char *path, hs_tracedat **out)
{
	return hs_tracedat_open_ex(path, true, out);
}

hs_status hs_tracedat_open_ex(const char *path, bool probe, hs_tracedat **out)
{
	*out = NULL;
	hs_tracedat *td = calloc(1, sizeof(*td));
	if (!td)
		return HS_ENOMEM;
	*out = td;
	td->problems.limit = MAX_PROBLEMS;
	hs_status st = read_version(path, &td->info.version, &td->info.file_size);
	if (st != HS_OK) {
		if (st == HS_EINVAL)
			problem(td, HS_PROBLEM_UNREADABLE, -1,
				"%s: not a trace-cmd file (no trace-cmd magic and version)", path);
		else
			problem(td, HS_PROBLEM_UNREADABLE, -1, "%s: cannot be read", path);
		return st;
	}
	int sig = probe ? probe_in_child(path) : 0;
	if (sig > 0) {
		problem(td, HS_PROBLEM_DAMAGED, -1,
			"%s: libtracecmd crashes reading this file (signal %d in a probe process): it is damaged", path,
			sig);
		return HS_EINVAL;
	}
	/* Plugins would print with their own formats; we only decode fields. */
	td->top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!td->top) {
		problem(td, HS_PROBLEM_UNREADABLE, -1, "%s: libtracecmd could not open it (its own messages are above)",
			path);
		return HS_EINVAL;
	}
	td->tep = tracecmd_get_tep(td->top);
	int n_inst = tracecmd_buffer_instances(td->top);
	if (n_inst < 0)
		n_inst = 0;
	td->handles = calloc((size_t)n_inst + 1, sizeof(*td->handles));
	td->names = calloc((size_t)n_inst + 1, sizeof(*td->names));
	td->info.instances = calloc((size_t)n_inst + 1, sizeof(*td->info.instances));
	if (!td->handles || !td->names || !td->info.instances)
		return HS_ENOMEM;
	td->handles[0] = td->top;
	td->names[0] = "";
	td->n_handles = 1;
	for (int i = 0; i < n_inst; i++) {
		const char *name = tracecmd_buffer_instance_name(td->top, i);
		struct tracecmd_input *h = tracecmd_buffer_instance_handle(td->top, i);
		if (!h) {
			problem(td, HS_PROBLEM_UNREADABLE, -1, "buffer instance '%s' cannot be read",
				name ? name : "?");
			continue;
		}
		td->handles[td->n_handles] = h;
		td->names[td->n_handles] = name ? name : "?";
		td->info.instances[td->info.n_instances++] = td->names[td->n_handles];
		td->n_handles++;
	}
	int cpus = td->tep ? tep_get_cpus(td->tep) : 0;
	td->info.cpus = cpus > 0 ? (unsigned)cpus : 0;
	parse_clock(tracecmd_get_trace_clock(td->top), td->info.clock, sizeof td->info.clock);
	return HS_OK;
}

void hs_tracedat_close(hs_tracedat *td)
{
	if (!td)
		return;
	/* Instance handles first: they hold references into the top handle. */
	for (size_t i = td->n_handles; i-- > 1;)
		tracecmd_close(td->handles[i]);
	if (td->top)
		tracecmd_close(td->top);
	hs_problems_free(&td->problems);
	free(td->handles);
	free(td->names);
	free(td->info.instances);
	free(td);
}

const hs_tracedat_info *hs_tracedat_get_info(const hs_tracedat *td)
{
	return &td->info;
}

typedef struct {
	hs_tracedat *td;
	hs_tracedat_record_fn fn;
	void *ctx;
	int unknown_reported;
} walk_ctx;

static int on_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *vctx)
{
	walk_ctx *w = vctx;
	hs_tracedat *td = w->td;
	hs_tracedat_record r = {0};
	r.buffer = "?";
	for (size_t i = 0; i < td->n_handles; i++)
		if (td->handles[i] == h)
			r.buffer = td->names[i];
	struct tep_event *ev = tep_find_event_by_record(td->tep, rec);
	r.system = ev && ev->system ? ev->system : "?";
	r.name = ev && ev->name ? ev->name : "?";
	r.id = ev ? ev->id : tep_data_type(td->tep, rec);
	if (!ev && !w->unknown_reported++)
		problem(td, HS_PROBLEM_NAME_UNKNOWN, rec->cpu,
			"records with no event format in the file (first in buffer '%s'); counted as ?/?", r.buffer);
	/* The multi-handle walk's cpu argument numbers CPUs across all handles; the record has the real one. */
	(void)cpu;
	r.cpu = rec->cpu;
	r.pid = tep_data_pid(td->tep, rec);
	r.comm = tep_data_comm_from_pid(td->tep, r.pid);
	r.ts = rec->ts;
	r.data = rec->data;
	r.size = rec->size > 0 ? (size_t)rec->size : 0;
	r.record_size = rec->record_size > 0 ? (size_t)rec->record_size : r.size;
	r.missed_events = rec->missed_events;
	r.priv[0] = td;
	r.priv[1] = ev;
	r.priv[2] = rec;
	return w->fn(&r, w->ctx) ? 1 : 0;
}

hs_status hs_tracedat_foreach(hs_tracedat *td, hs_tracedat_record_fn fn, void *ctx)
{
	if (!td->top)
		return HS_EINVAL;
	walk_ctx w = {td, fn, ctx, 0};
	/* The multi-handle walk merges every handle's CPUs by timestamp. */
	if (tracecmd_iterate_events_multi(td->handles, (int)td->n_handles, on_record, &w) < 0) {
		problem(td, HS_PROBLEM_LOST, -1, "libtracecmd stopped reading events early (damaged data?)");
		return HS_EIO;
	}
	return HS_OK;
}

static struct tep_format_field *field_of(const hs_tracedat_record *r, const char *name)
{
	struct tep_event *ev = (struct tep_event *)r->priv[1];
	return ev ? tep_find_field(ev, name) : NULL;
}

/* An integer field of `data` (a payload of `size` bytes of the field's event). */
static bool read_int(const struct tep_format_field *f, const void *data, size_t size, int64_t *out)
{
	if (!f || (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) || f->size <= 0 || f->size > 8 ||
	    (size_t)f->offset + (size_t)f->size > size)
		return false;
	unsigned long long v;
	if (tep_read_number_field((struct tep_format_field *)f, data, &v) != 0)
		return false;
	if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
		unsigned bits = (unsigned)f->size * 8;
		unsigned long long sign = 1ull << (bits - 1);
		v &= (1ull << bits) - 1;
		v = (v ^ sign) - sign;
	}
	*out = (int64_t)v;
	return true;
}

/* A string field of `data`: a fixed char array, a __data_loc / __rel_loc
 * string, or a trailing char array of no declared size (ftrace/print's `buf`,
 * which runs to the end of the record; its newline, which the kernel adds to
 * every trace_marker write, is left out). */
static bool read_str(struct tep_format_field *f, const void *data, size_t size, char *buf, size_t cap)
{
	if (!cap)
		return false;
	buf[0] = '\0';
	if (!f)
		return false;
	const char *p = (const char *)data;
	size_t off = (size_t)f->offset, len;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		if (f->size != 4 || off + 4 > size)
			return false;
		unsigned long long loc;
		if (tep_read_number_field(f, data, &loc) != 0)
			return false;
		len = (size_t)(loc >> 16);
		size_t at = (size_t)(loc & 0xffff);
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			at += off + 4;
		off = at;
	} else if (f->size == 0 && (f->flags & TEP_FIELD_IS_ARRAY)) {
		len = off <= size ? size - off : 0;
	} else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING)) {
		len = (size_t)f->size;
	} else {
		return false; /* a number, not a string */
	}
	if (off > size || len > size - off)
		return false;
	size_t n = strnlen(p + off, len);
	if (f->size == 0 && !(f->flags & TEP_FIELD_IS_DYNAMIC))
		while (n && p[off + n - 1] == '\n')
			n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p + off, n);
	buf[n] = '\0';
	return true;
}

bool hs_tracedat_field_int(const hs_tracedat_record *r, const char *field, int64_t *out)
{
	return read_int(field_of(r, field), r->data, r->size, out);
}

bool hs_tracedat_field_str(const hs_tracedat_record *r, const char *field, char *buf, size_t cap)
{
	return read_str(field_of(r, field), r->data, r->size, buf, cap);
}

static struct tep_format_field *event_field(const hs_tracedat *td, int id, const char *name)
{
	struct tep_event *ev = td && td->tep ? tep_find_event(td->tep, id) : NULL;
	return ev ? tep_find_field(ev, name) : NULL;
}

bool hs_tracedat_event_field_int(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 int64_t *out)
{
	return read_int(event_field(td, id, field), data, size, out);
}

bool hs_tracedat_event_field_str(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 char *buf, size_t cap)
{
	if (cap)
		buf[0] = '\0';
	return read_str(event_field(td, id, field), data, size, buf, cap);
}

hs_status hs_tracedat_filter_new(hs_tracedat *td, const char *system, const char *event, const char *expr,
				 hs_tracedat_filter **out)
{
	*out = NULL;
	if (!td->tep)
		return HS_EINVAL;
	struct tep_event *ev = tep_find_event_by_name(td->tep, system, event);
	if (!ev) /* the file never had the event enabled: nothing can match */
		return HS_ENOENT;
	hs_tracedat_filter *f = calloc(1, sizeof(*f));
	size_t n = strlen(system) + strlen(event) + strlen(expr) + 8;
	char *text = malloc(n);
	if (!f || !text)
		goto oom;
	f->td = td;
	f->id = ev->id;
	f->filter = tep_filter_alloc(td->tep);
	if (!f->filter)
		goto oom;
	snprintf(text, n, "%s/%s:%s", system, event, expr);
	enum tep_errno err = tep_filter_add_filter_str(f->filter, text);
	if (err < 0) {
		char msg[256];
		if (tep_filter_strerror(f->filter, err, msg, sizeof msg) != 0)
			snprintf(msg, sizeof msg, "error %d", (int)err);
		problem(td, HS_PROBLEM_UNREADABLE, -1, "filter '%s' does not compile: %s", text, msg);
		free(text);
		hs_tracedat_filter_free(f);
		return HS_EINVAL;
	}
	free(text);
	*out = f;
	return HS_OK;
oom:
	free(text);
	hs_tracedat_filter_free(f);
	return HS_ENOMEM;
}

bool hs_tracedat_filter_match(const hs_tracedat_filter *f, const hs_tracedat_record *r)
{
	if (!f || r->priv[0] != f->td || r->id != f->id)
		return false;
	return tep_filter_match(f->filter, (struct tep_record *)r->priv[2]) == TEP_ERRNO__FILTER_MATCH;
}

void hs_tracedat_filter_free(hs_tracedat_filter *f)
{
	if (!f)
		return;
	if (f->filter)
		tep_filter_free(f->filter);
	free(f);
}

size_t hs_tracedat_problem_count(const hs_tracedat *td)
{
	return hs_problems_count(&td->problems);
}

const hs_problem *hs_tracedat_problem_at(const hs_tracedat *td, size_t i)
{
	return hs_problems_at(&td->problems, i);
}

#else /* not Linux: no libtracecmd */

struct hs_tracedat {
	int unused;
};

hs_status hs_tracedat_open(const char *path, hs_tracedat **out)
{
	return hs_tracedat_open_ex(path, true, out);
}

hs_status hs_tracedat_open_ex(const char *path, bool probe, hs_tracedat **out)
{
	(void)path, (void)probe;
	*out = NULL;
	return HS_EUNSUPPORTED;
}

void hs_tracedat_close(hs_tracedat *td)
{
	(void)td;
}

const hs_tracedat_info *hs_tracedat_get_info(const hs_tracedat *td)
{
	(void)td;
	return NULL;
}

hs_status hs_tracedat_foreach(hs_tracedat *td, hs_tracedat_record_fn fn, void *ctx)
{
	(void)td, (void)fn, (void)ctx;
	return HS_EUNSUPPORTED;
}

bool hs_tracedat_field_int(const hs_tracedat_record *r, const char *field, int64_t *out)
{
	(void)r, (void)field, (void)out;
	return false;
}

bool hs_tracedat_field_str(const hs_tracedat_record *r, const char *field, char *buf, size_t cap)
{
	(void)r, (void)field;
	if (cap)
		buf[0] = '\0';
	return false;
}

bool hs_tracedat_event_field_int(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 int64_t *out)
{
	(void)td, (void)id, (void)data, (void)size, (void)field, (void)out;
	return false;
}

bool hs_tracedat_event_field_str(const hs_tracedat *td, int id, const void *data, size_t size, const char *field,
				 char *buf, size_t cap)
{
	(void)td, (void)id, (void)data, (void)size, (void)field;
	if (cap)
		buf[0] = '\0';
	return false;
}

hs_status hs_tracedat_filter_new(hs_tracedat *td, const char *system, const char *event, const char *expr,
				 hs_tracedat_filter **out)
{
	(void)td, (void)system, (void)event, (void)expr;
	*out = NULL;
	return HS_EUNSUPPORTED;
}

bool hs_tracedat_filter_match(const hs_tracedat_filter *f, const hs_tracedat_record *r)
{
	(void)f, (void)r;
	return false;
}

void hs_tracedat_filter_free(hs_tracedat_filter *f)
{
	(void)f;
}

size_t hs_tracedat_problem_count(const hs_tracedat *td)
{
	(void)td;
	return 0;
}

const hs_problem *hs_tracedat_problem_at(const hs_tracedat *td, size_t i)
{
	(void)td, (void)i;
	return NULL;
}

#endif
