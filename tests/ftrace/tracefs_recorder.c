/* tracefs_recorder.c: the fake tracefs of the call goldens: plausible results, one log line per call, injected failures. */
#include "tracefs_recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

/* libtracefs's handles are opaque to the engine: the fake's are its own. */
struct tracefs_instance {
	char *name; /* NULL: the top instance */
};
struct tracefs_cpu {
	char *inst;
	int cpu;
};

typedef struct {
	char *key; /* "<instance>/<file>", the top instance as "" */
	char *val;
} file_ent;

typedef struct {
	char *fn, *match;
	int nth, err, seen;
} fault;

typedef struct {
	char *sys, *name; /* name NULL: the whole system is missing */
	bool missing;
} known_event;

static struct {
	pthread_mutex_t mu;
	pthread_t main;
	char *main_log;
	size_t main_len, main_cap;
	char **other; /* lines logged on other threads */
	size_t n_other;
	char *out; /* trec_log's text */
	char *dir, *lock_dir;
	char *kallsyms, *modules; /* the fake kernel's symbols and module list (hs_tracefs_api.kallsyms, .modules) */
	bool mounted;
	unsigned cpus;
	char **inst; /* existing instances */
	size_t n_inst;
	file_ent *files;
	size_t n_files;
	fault faults[16];
	size_t n_faults;
	known_event *events;
	size_t n_events;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- helpers ---- */

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		abort();
	return d;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static const char *iname(const struct tracefs_instance *i)
{
	return i && i->name ? i->name : "(top)";
}

/* A string as the log shows it: quoted, newlines and tabs escaped. */
static char *quote(const char *s)
{
	if (!s)
		return xstrdup("NULL");
	size_t n = strlen(s);
	char *q = malloc(2 * n + 3), *w = q;
	if (!q)
		abort();
	*w++ = '"';
	for (; *s; s++) {
		if (*s == '\n' || *s == '\t' || *s == '"' || *s == '\\') {
			*w++ = '\\';
			*w++ = *s == '\n' ? 'n' : *s == '\t' ? 't' : *s;
		} else {
			*w++ = *s;
		}
	}
	*w++ = '"';
	*w = 0;
	return q;
}

static const char *errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	default: return "errno?";
	}
}

/* Appends "<fn> <args> -> <result>" to the caller's thread's part of the log. Called under R.mu. */
static void log_line(const char *fn, const char *args, const char *result)
{
	char *line = xprintf("%s%s%s -> %s\n", fn, args && *args ? " " : "", args ? args : "", result);
	if (pthread_equal(pthread_self(), R.main)) {
		size_t n = strlen(line);
		if (R.main_len + n + 1 > R.main_cap) {
			R.main_cap = (R.main_len + n + 1) * 2;
			if (!(R.main_log = realloc(R.main_log, R.main_cap)))
				abort();
		}
		memcpy(R.main_log + R.main_len, line, n + 1);
		R.main_len += n;
		free(line);
		return;
	}
	if (!(R.other = realloc(R.other, (R.n_other + 1) * sizeof(*R.other))))
		abort();
	R.other[R.n_other++] = line;
}

/* The errno to fail this call with, or 0. Called under R.mu. */
static int fault_for(const char *fn, const char *args)
{
	for (size_t i = 0; i < R.n_faults; i++) {
		fault *f = &R.faults[i];
		if (strcmp(f->fn, fn) || (f->match && !strstr(args ? args : "", f->match)))
			continue;
		f->seen++;
		if (!f->nth || f->seen == f->nth)
			return f->err;
	}
	return 0;
}

/* "-> ok", or "-> -1 EACCES" after setting errno. */
static int result_int(const char *fn, const char *args, int err, int ok_value)
{
	char res[64];
	if (err)
		snprintf(res, sizeof res, "-1 %s", errname(err));
	else
		snprintf(res, sizeof res, ok_value ? "%d" : "ok", ok_value);
	log_line(fn, args, res);
	errno = err;
	return err ? -1 : ok_value;
}

static file_ent *file_find(const char *inst, const char *file)
{
	char *key = xprintf("%s/%s", inst ? inst : "", file);
	file_ent *hit = NULL;
	for (size_t i = 0; i < R.n_files && !hit; i++)
		if (!strcmp(R.files[i].key, key))
			hit = &R.files[i];
	free(key);
	return hit;
}

static void file_set(const char *inst, const char *file, const char *val)
{
	file_ent *f = file_find(inst, file);
	if (!f) {
		if (!(R.files = realloc(R.files, (R.n_files + 1) * sizeof(*R.files))))
			abort();
		f = &R.files[R.n_files++];
		f->key = xprintf("%s/%s", inst ? inst : "", file);
		f->val = NULL;
	}
	free(f->val);
	f->val = xstrdup(val);
}

/* Forgets an instance's files (it was removed). */
static void files_drop(const char *inst)
{
	size_t len = strlen(inst);
	for (size_t i = 0; i < R.n_files;) {
		if (!strncmp(R.files[i].key, inst, len) && R.files[i].key[len] == '/') {
			free(R.files[i].key);
			free(R.files[i].val);
			R.files[i] = R.files[--R.n_files];
		} else {
			i++;
		}
	}
}

static ssize_t inst_index(const char *name)
{
	for (size_t i = 0; i < R.n_inst; i++)
		if (!strcmp(R.inst[i], name))
			return (ssize_t)i;
	return -1;
}

static void inst_add(const char *name)
{
	if (inst_index(name) >= 0)
		return;
	if (!(R.inst = realloc(R.inst, (R.n_inst + 1) * sizeof(*R.inst))))
		abort();
	R.inst[R.n_inst++] = xstrdup(name);
}

static const known_event *event_known(const char *sys, const char *name)
{
	for (size_t i = 0; i < R.n_events; i++) {
		const known_event *e = &R.events[i];
		if (strcmp(e->sys, sys))
			continue;
		if (!e->name && e->missing)
			return NULL; /* the whole system is missing */
		if (name && e->name && !strcmp(e->name, name))
			return e->missing ? NULL : e;
	}
	return NULL;
}

static bool system_known(const char *sys)
{
	bool any = false;
	for (size_t i = 0; i < R.n_events; i++)
		if (!strcmp(R.events[i].sys, sys)) {
			if (!R.events[i].name && R.events[i].missing)
				return false;
			any = true;
		}
	return any;
}

static void event_add(const char *sys, const char *name, bool missing)
{
	for (size_t i = 0; i < R.n_events; i++)
		if (!strcmp(R.events[i].sys, sys) &&
		    ((!name && !R.events[i].name) || (name && R.events[i].name && !strcmp(R.events[i].name, name)))) {
			R.events[i].missing |= missing;
			return;
		}
	if (!(R.events = realloc(R.events, (R.n_events + 1) * sizeof(*R.events))))
		abort();
	R.events[R.n_events++] = (known_event){
		.sys = xstrdup(sys), .name = name ? xstrdup(name) : NULL, .missing = missing};
}

/* The format file of a known event: the common fields only (enough to parse, name and filter by). */
static char *format_text(const char *name, int id)
{
	return xprintf("name: %s\nID: %d\nformat:\n"
		       "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		       "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		       "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		       "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		       "print fmt: \"\"\n",
		       name, id);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void mkdirs(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0700);
			*s = '/';
		}
	mkdir(p, 0700);
	free(p);
}

/* The tracing directory libtracecmd reads a .dat's headers from. */
static void make_tracing_dir(void)
{
	char *p = xprintf("%s/events", R.dir);
	mkdirs(p);
	free(p);
	p = xprintf("%s/events/header_page", R.dir);
	write_file(p, "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		      "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		      "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		      "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n");
	free(p);
	p = xprintf("%s/events/header_event", R.dir);
	write_file(p, "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
		      "\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
		      "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n");
	free(p);
	p = xprintf("%s/printk_formats", R.dir);
	write_file(p, "");
	free(p);
	p = xprintf("%s/saved_cmdlines", R.dir);
	write_file(p, "");
	free(p);
	for (size_t i = 0; i < R.n_events; i++) {
		const known_event *e = &R.events[i];
		if (!e->name || e->missing)
			continue;
		p = xprintf("%s/events/%s/%s", R.dir, e->sys, e->name);
		mkdirs(p);
		free(p);
		p = xprintf("%s/events/%s/%s/format", R.dir, e->sys, e->name);
		char *fmt = format_text(e->name, (int)i + 100);
		write_file(p, fmt);
		free(fmt);
		free(p);
	}
}

static void rm_tree(const char *path)
{
	char *cmd = xprintf("rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "tracefs_recorder: %s failed\n", cmd);
	free(cmd);
}

/* ---- the fake tracefs ---- */

static const char *fake_tracing_dir(void)
{
	pthread_mutex_lock(&R.mu);
	const char *d = R.mounted ? R.dir : NULL;
	log_line("tracing_dir", NULL, d ? "<tracefs>" : "NULL");
	pthread_mutex_unlock(&R.mu);
	return d;
}

static int fake_mount(const char *target)
{
	pthread_mutex_lock(&R.mu);
	int err = fault_for("mount", target);
	if (!err)
		R.mounted = true;
	int rc = result_int("mount", target, err, 0);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static unsigned fake_cpus(void)
{
	pthread_mutex_lock(&R.mu);
	char res[16];
	snprintf(res, sizeof res, "%u", R.cpus);
	log_line("cpus", NULL, res);
	unsigned n = R.cpus;
	pthread_mutex_unlock(&R.mu);
	return n;
}

static bool fake_instance_exists(const char *name)
{
	pthread_mutex_lock(&R.mu);
	bool yes = inst_index(name) >= 0;
	log_line("instance_exists", name, yes ? "yes" : "no");
	pthread_mutex_unlock(&R.mu);
	return yes;
}

static struct tracefs_instance *new_handle(const char *name)
{
	struct tracefs_instance *i = calloc(1, sizeof(*i));
	if (!i)
		abort();
	i->name = name ? xstrdup(name) : NULL;
	return i;
}

static struct tracefs_instance *fake_instance_create(const char *name)
{
	pthread_mutex_lock(&R.mu);
	int err = fault_for("instance_create", name);
	struct tracefs_instance *i = NULL;
	if (!err) {
		inst_add(name);
		i = new_handle(name);
	}
	log_line("instance_create", name, err ? errname(err) : "ok");
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return i;
}

static struct tracefs_instance *fake_instance_alloc(const char *tracing_dir, const char *name)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("dir=%s %s", tracing_dir ? "<given>" : "NULL", name);
	int err = fault_for("instance_alloc", args);
	struct tracefs_instance *i = err ? NULL : new_handle(name);
	log_line("instance_alloc", args, err ? errname(err) : "ok");
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return i;
}

static int fake_instance_destroy(struct tracefs_instance *inst)
{
	pthread_mutex_lock(&R.mu);
	const char *name = iname(inst);
	int err = fault_for("instance_destroy", name);
	ssize_t at = inst && inst->name ? inst_index(inst->name) : -1;
	if (!err && at < 0)
		err = ENOENT;
	if (!err) {
		files_drop(R.inst[at]);
		free(R.inst[at]);
		R.inst[at] = R.inst[--R.n_inst];
	}
	int rc = result_int("instance_destroy", name, err, 0);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static void fake_instance_free(struct tracefs_instance *inst)
{
	pthread_mutex_lock(&R.mu);
	log_line("instance_free", iname(inst), "done");
	pthread_mutex_unlock(&R.mu);
	if (inst)
		free(inst->name);
	free(inst);
}

static int fake_set_buffer_size(struct tracefs_instance *inst, size_t size, int cpu)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("%s %zu KB cpu=%d", iname(inst), size, cpu);
	int err = fault_for("instance_set_buffer_size", args);
	if (!err) {
		char v[32];
		snprintf(v, sizeof v, "%zu\n", size);
		file_set(inst ? inst->name : NULL, "buffer_size_kb", v);
	}
	int rc = result_int("instance_set_buffer_size", args, err, 0);
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static ssize_t fake_get_buffer_size(struct tracefs_instance *inst, int cpu)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("%s cpu=%d", iname(inst), cpu);
	int err = fault_for("instance_get_buffer_size", args);
	file_ent *f = file_find(inst ? inst->name : NULL, "buffer_size_kb");
	ssize_t kb = err ? -1 : f ? strtol(f->val, NULL, 10) : 1408;
	char res[32];
	if (err)
		snprintf(res, sizeof res, "-1 %s", errname(err));
	else
		snprintf(res, sizeof res, "%zd", kb);
	log_line("instance_get_buffer_size", args, res);
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return kb;
}

static const char *clocks[] = {"local", "global", "counter", "uptime", "perf", "mono", "mono_raw", "boot", "tai"};

/* What a file reads when nothing was written to it. */
static char *default_content(const char *file, const char *written)
{
	if (!strcmp(file, "trace_clock")) {
		/* The kernel lists every clock, the current one in brackets. */
		const char *cur = written ? written : "local";
		char *s = xstrdup("");
		for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
			bool on = !strncmp(cur, clocks[i], strlen(clocks[i])) &&
				  (cur[strlen(clocks[i])] == 0 || cur[strlen(clocks[i])] == '\n');
			char *n = xprintf("%s%s%s%s%s", s, i ? " " : "", on ? "[" : "", clocks[i], on ? "]" : "");
			free(s);
			s = n;
		}
		char *n = xprintf("%s\n", s);
		free(s);
		return n;
	}
	if (written)
		return xstrdup(written);
	if (!strncmp(file, "per_cpu/", 8) && strstr(file, "/stats"))
		return xstrdup("entries: 0\noverrun: 0\ncommit overrun: 0\nbytes: 0\noldest event ts: 0.000000\n"
			       "now ts: 100.000000\ndropped events: 0\nread events: 0\n");
	if (!strcmp(file, "saved_cmdlines") || !strcmp(file, "set_event_pid") || !strcmp(file, "set_event_notrace_pid"))
		return xstrdup("");
	return NULL;
}

static char *fake_file_read(struct tracefs_instance *inst, const char *file, int *psize)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("%s %s", iname(inst), file);
	int err = fault_for("instance_file_read", args);
	char *text = NULL;
	if (!err) {
		file_ent *f = file_find(inst ? inst->name : NULL, file);
		text = default_content(file, f ? f->val : NULL);
		if (!text)
			err = ENOENT;
	}
	char res[48];
	if (err)
		snprintf(res, sizeof res, "NULL %s", errname(err));
	else
		snprintf(res, sizeof res, "%zu bytes", strlen(text));
	log_line("instance_file_read", args, res);
	free(args);
	pthread_mutex_unlock(&R.mu);
	if (psize)
		*psize = text ? (int)strlen(text) : 0;
	errno = err;
	return text;
}

static int fake_file_write(struct tracefs_instance *inst, const char *file, const char *str)
{
	pthread_mutex_lock(&R.mu);
	/* The engine's own thread ids differ on every run. */
	char *q = !strcmp(file, "set_event_notrace_pid") ? xstrdup("<the engine's thread ids>") : quote(str);
	char *args = xprintf("%s %s %s", iname(inst), file, q);
	int err = fault_for("instance_file_write", args);
	if (!err && !strcmp(file, "trace_clock")) {
		bool known = false;
		for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
			known |= !strcmp(str, clocks[i]);
		if (!known)
			err = EINVAL;
	}
	if (!err)
		file_set(inst ? inst->name : NULL, file, str);
	/* Logged "ok": the count is the bytes of the arguments (and the thread ids' vary). */
	int rc = result_int("instance_file_write", args, err, 0);
	if (!err)
		rc = (int)strlen(str);
	free(args);
	free(q);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static int fake_file_open(struct tracefs_instance *inst, const char *file, int mode)
{
	pthread_mutex_lock(&R.mu);
	int acc = mode & O_ACCMODE;
	char *args = xprintf("%s %s %s%s", iname(inst), file,
			     acc == O_WRONLY ? "O_WRONLY"
			     : acc == O_RDWR ? "O_RDWR"
					     : "O_RDONLY",
			     mode & O_NONBLOCK ? "|O_NONBLOCK" : "");
	int err = fault_for("instance_file_open", args);
	int fd = err ? -1 : open("/dev/null", acc | O_CLOEXEC | (mode & O_NONBLOCK));
	if (fd < 0 && !err)
		err = errno;
	log_line("instance_file_open", args, err ? errname(err) : "fd");
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return fd;
}

static bool fake_file_exists(struct tracefs_instance *inst, const char *name)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("%s %s", iname(inst), name);
	bool yes = !fault_for("file_exists", args);
	log_line("file_exists", args, yes ? "yes" : "no");
	free(args);
	pthread_mutex_unlock(&R.mu);
	return yes;
}

static int on_off(const char *fn, struct tracefs_instance *inst, const char *val)
{
	pthread_mutex_lock(&R.mu);
	int err = fault_for(fn, iname(inst));
	if (!err)
		file_set(inst ? inst->name : NULL, "tracing_on", val);
	int rc = result_int(fn, iname(inst), err, 0);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static int fake_trace_on(struct tracefs_instance *inst)
{
	return on_off("trace_on", inst, "1\n");
}

static int fake_trace_off(struct tracefs_instance *inst)
{
	return on_off("trace_off", inst, "0\n");
}

static int option(const char *fn, struct tracefs_instance *inst, enum tracefs_option_id id)
{
	pthread_mutex_lock(&R.mu);
	const char *name = id == TRACEFS_OPTION_OVERWRITE    ? "overwrite"
			   : id == TRACEFS_OPTION_EVENT_FORK ? "event-fork"
							     : "other";
	char *args = xprintf("%s %s", iname(inst), name);
	int err = fault_for(fn, args);
	int rc = result_int(fn, args, err, 0);
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static int fake_option_enable(struct tracefs_instance *inst, enum tracefs_option_id id)
{
	return option("option_enable", inst, id);
}

static int fake_option_disable(struct tracefs_instance *inst, enum tracefs_option_id id)
{
	return option("option_disable", inst, id);
}

static char *fake_get_clock(struct tracefs_instance *inst)
{
	pthread_mutex_lock(&R.mu);
	file_ent *f = file_find(inst ? inst->name : NULL, "trace_clock");
	char *clock = xstrdup(f ? f->val : "local");
	clock[strcspn(clock, "\n")] = 0;
	log_line("get_clock", iname(inst), clock);
	pthread_mutex_unlock(&R.mu);
	return clock;
}

static char *fake_error_last(struct tracefs_instance *inst)
{
	pthread_mutex_lock(&R.mu);
	file_ent *f = file_find(inst ? inst->name : NULL, "error_log");
	char *text = xstrdup(f ? f->val : "");
	char *q = quote(text);
	log_line("error_last", iname(inst), q);
	free(q);
	pthread_mutex_unlock(&R.mu);
	return text;
}

static struct tep_handle *fake_local_events_system(const char *tracing_dir, const char *const *sys_names)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("dir=%s [", tracing_dir ? "<given>" : "NULL");
	for (size_t s = 0; sys_names && sys_names[s]; s++) {
		char *n = xprintf("%s%s%s", args, s ? " " : "", sys_names[s]);
		free(args);
		args = n;
	}
	char *n = xprintf("%s]", args);
	free(args);
	args = n;
	int err = fault_for("local_events_system", args);
	struct tep_handle *tep = err ? NULL : tep_alloc();
	size_t parsed = 0;
	for (size_t i = 0; tep && i < R.n_events; i++) {
		const known_event *e = &R.events[i];
		bool wanted = false;
		for (size_t s = 0; sys_names && sys_names[s]; s++)
			wanted |= !strcmp(sys_names[s], e->sys);
		if (!wanted || !e->name || !event_known(e->sys, e->name))
			continue;
		char *fmt = format_text(e->name, (int)i + 100);
		if (tep_parse_event(tep, fmt, strlen(fmt), e->sys) == 0)
			parsed++;
		free(fmt);
	}
	char res[48];
	if (err)
		snprintf(res, sizeof res, "NULL %s", errname(err));
	else
		snprintf(res, sizeof res, "%zu formats", parsed);
	log_line("local_events_system", args, res);
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return tep;
}

static int event_onoff(const char *fn, struct tracefs_instance *inst, const char *sys, const char *event)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("%s %s/%s", iname(inst), sys ? sys : "*", event ? event : "*");
	int err = fault_for(fn, args);
	if (!err && (event ? !event_known(sys, event) : !system_known(sys)))
		err = ENOENT;
	int rc = result_int(fn, args, err, 0);
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static int fake_event_enable(struct tracefs_instance *inst, const char *system, const char *event)
{
	return event_onoff("event_enable", inst, system, event);
}

static int fake_event_disable(struct tracefs_instance *inst, const char *system, const char *event)
{
	return event_onoff("event_disable", inst, system, event);
}

static char *fake_event_file_read(struct tracefs_instance *inst, const char *system, const char *event,
				  const char *file, int *psize)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("%s %s/%s %s", iname(inst), system, event, file);
	int err = fault_for("event_file_read", args);
	char *text = NULL;
	if (!err && !event_known(system, event))
		err = ENOENT;
	if (!err) {
		char *path = xprintf("events/%s/%s/%s", system, event, file);
		file_ent *f = file_find(inst ? inst->name : NULL, path);
		text = xstrdup(f ? f->val : !strcmp(file, "filter") ? "none\n" : "0\n");
		free(path);
	}
	char *q = text ? quote(text) : xprintf("NULL %s", errname(err));
	log_line("event_file_read", args, q);
	free(q);
	free(args);
	pthread_mutex_unlock(&R.mu);
	if (psize)
		*psize = text ? (int)strlen(text) : 0;
	errno = err;
	return text;
}

static int fake_filter_string_verify(struct tep_event *event, const char *filter, char **err_out)
{
	pthread_mutex_lock(&R.mu);
	char *q = quote(filter);
	char *args = xprintf("%s/%s %s", event ? event->system : "?", event ? event->name : "?", q);
	int err = fault_for("filter_string_verify", args);
	if (err && err_out)
		*err_out = xprintf("%s\n^\nparse_error: Field not found\n", filter);
	else if (err_out)
		*err_out = NULL;
	int rc = result_int("filter_string_verify", args, err, 0);
	free(args);
	free(q);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static int fake_event_filter_apply(struct tracefs_instance *inst, struct tep_event *event, const char *filter)
{
	pthread_mutex_lock(&R.mu);
	char *q = quote(filter);
	char *args = xprintf("%s %s/%s %s", iname(inst), event->system, event->name, q);
	int err = fault_for("event_filter_apply", args);
	char *path = xprintf("events/%s/%s/filter", event->system, event->name);
	if (err) {
		/* What the kernel leaves: the expression, a caret, the reason; and the error log. */
		char *back = xprintf("%s\n^\nparse_error: Field not found\n", filter);
		file_set(inst ? inst->name : NULL, path, back);
		free(back);
		char *log = xprintf("[  100.000000] event filter parse error: error: Field not found\n"
				    "  Command: %s\n         ^\n",
				    filter);
		file_set(inst ? inst->name : NULL, "error_log", log);
		free(log);
	} else {
		char *back = xprintf("%s\n", filter);
		file_set(inst ? inst->name : NULL, path, back);
		free(back);
	}
	free(path);
	int rc = result_int("event_filter_apply", args, err, 0);
	free(args);
	free(q);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return rc;
}

static struct tracefs_cpu *fake_cpu_open(struct tracefs_instance *inst, int cpu, bool nonblock)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("%s cpu=%d%s", iname(inst), cpu, nonblock ? " nonblock" : "");
	int err = fault_for("cpu_open", args);
	struct tracefs_cpu *t = NULL;
	if (!err) {
		if (!(t = calloc(1, sizeof(*t))))
			abort();
		t->inst = xstrdup(iname(inst));
		t->cpu = cpu;
	}
	log_line("cpu_open", args, err ? errname(err) : "ok");
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err;
	return t;
}

static void fake_cpu_close(struct tracefs_cpu *t)
{
	pthread_mutex_lock(&R.mu);
	char *args = t ? xprintf("%s cpu=%d", t->inst, t->cpu) : xstrdup("NULL");
	log_line("cpu_close", args, "done");
	free(args);
	pthread_mutex_unlock(&R.mu);
	if (t)
		free(t->inst);
	free(t);
}

/* A ring read: no data. Logged only when it fails (an empty read's count is timing). */
static int ring_read(const char *fn, struct tracefs_cpu *t, bool log_empty)
{
	pthread_mutex_lock(&R.mu);
	char *args = xprintf("%s cpu=%d", t->inst, t->cpu);
	int err = fault_for(fn, args);
	if (err || log_empty)
		result_int(fn, args, err, 0);
	free(args);
	pthread_mutex_unlock(&R.mu);
	errno = err ? err : EAGAIN;
	return err ? -1 : 0;
}

static int fake_cpu_read(struct tracefs_cpu *t, void *buffer, bool nonblock)
{
	(void)buffer, (void)nonblock;
	return ring_read("cpu_read", t, false);
}

static int fake_cpu_buffered_read(struct tracefs_cpu *t, void *buffer, bool nonblock)
{
	(void)buffer, (void)nonblock;
	return ring_read("cpu_buffered_read", t, false);
}

static int fake_cpu_flush(struct tracefs_cpu *t, void *buffer)
{
	(void)buffer;
	return ring_read("cpu_flush", t, true);
}

static int fake_cpu_write(struct tracefs_cpu *t, int wfd, bool nonblock)
{
	(void)wfd, (void)nonblock;
	return ring_read("cpu_write", t, false);
}

static int fake_cpu_flush_write(struct tracefs_cpu *t, int wfd)
{
	(void)wfd;
	return ring_read("cpu_flush_write", t, true);
}

hs_tracefs_api trec_api = {
	.tracing_dir = fake_tracing_dir,
	.mount = fake_mount,
	.cpus = fake_cpus,
	.lock_dir = NULL, /* trec_reset */
	.instance_exists = fake_instance_exists,
	.instance_create = fake_instance_create,
	.instance_alloc = fake_instance_alloc,
	.instance_destroy = fake_instance_destroy,
	.instance_free = fake_instance_free,
	.instance_set_buffer_size = fake_set_buffer_size,
	.instance_get_buffer_size = fake_get_buffer_size,
	.instance_file_read = fake_file_read,
	.instance_file_write = fake_file_write,
	.instance_file_open = fake_file_open,
	.file_exists = fake_file_exists,
	.trace_on = fake_trace_on,
	.trace_off = fake_trace_off,
	.option_enable = fake_option_enable,
	.option_disable = fake_option_disable,
	.get_clock = fake_get_clock,
	.error_last = fake_error_last,
	.local_events_system = fake_local_events_system,
	.event_enable = fake_event_enable,
	.event_disable = fake_event_disable,
	.event_file_read = fake_event_file_read,
	.filter_string_verify = fake_filter_string_verify,
	.event_filter_apply = fake_event_filter_apply,
	.cpu_open = fake_cpu_open,
	.cpu_close = fake_cpu_close,
	.cpu_read = fake_cpu_read,
	.cpu_buffered_read = fake_cpu_buffered_read,
	.cpu_flush = fake_cpu_flush,
	.cpu_write = fake_cpu_write,
	.cpu_flush_write = fake_cpu_flush_write,
};

/* ---- the test's side ---- */

static void forget_all(void)
{
	free(R.main_log);
	for (size_t i = 0; i < R.n_other; i++)
		free(R.other[i]);
	free(R.other);
	free(R.out);
	for (size_t i = 0; i < R.n_inst; i++)
		free(R.inst[i]);
	free(R.inst);
	for (size_t i = 0; i < R.n_files; i++) {
		free(R.files[i].key);
		free(R.files[i].val);
	}
	free(R.files);
	for (size_t i = 0; i < R.n_faults; i++) {
		free(R.faults[i].fn);
		free(R.faults[i].match);
	}
	for (size_t i = 0; i < R.n_events; i++) {
		free(R.events[i].sys);
		free(R.events[i].name);
	}
	free(R.events);
	free(R.dir);
	free(R.lock_dir);
	free(R.kallsyms);
	free(R.modules);
	pthread_mutex_t mu = R.mu;
	memset(&R, 0, sizeof R);
	R.mu = mu;
}

void trec_reset(const hs_plan *plan, unsigned cpus, const char *workdir)
{
	pthread_mutex_lock(&R.mu);
	if (R.dir)
		rm_tree(R.dir);
	forget_all();
	R.main = pthread_self();
	R.mounted = true;
	R.cpus = cpus;
	R.dir = xprintf("%s/fake-tracefs", workdir);
	R.lock_dir = xprintf("%s/fake-locks", workdir);
	trec_api.lock_dir = R.lock_dir;
	rm_tree(R.lock_dir);
	event_add("ftrace", "print", false);
	for (size_t s = 0; plan && s < plan->n_sessions; s++)
		for (size_t p = 0; p < plan->sessions[s].n_providers; p++) {
			const hs_plan_provider *pp = &plan->sessions[s].providers[p];
			const char *sys = pp->provider->system ? pp->provider->system : pp->provider->name;
			for (size_t e = 0; e < pp->n_events; e++)
				if (pp->events[e].name)
					event_add(sys, pp->events[e].name, false);
			if (!pp->n_events)
				event_add(sys, "all", false); /* a whole system: one event makes it known */
		}
	for (size_t t = 0; plan && t < plan->n_triggers; t++)
		for (size_t e = 0; e < plan->triggers[t].n_events; e++)
			if (plan->triggers[t].events[e].system && plan->triggers[t].events[e].name)
				event_add(plan->triggers[t].events[e].system, plan->triggers[t].events[e].name, false);
	make_tracing_dir();
	/* A few symbols, not the host's 5 MB: the .dat headers carry them, and the goldens must not depend on the
	 * host's kernel (nor take minutes under ASan copying them). */
	R.kallsyms = xprintf("%s/kallsyms", R.dir);
	R.modules = xprintf("%s/modules", R.dir);
	write_file(R.kallsyms, "ffffffff81000000 T _stext\nffffffff81000100 T fake_kernel_function\n"
			       "ffffffff82000000 T _etext\n");
	write_file(R.modules, "");
	trec_api.kallsyms = R.kallsyms;
	trec_api.modules = R.modules;
	pthread_mutex_unlock(&R.mu);
}

void trec_fail(const char *fn, const char *match, int nth, int err)
{
	pthread_mutex_lock(&R.mu);
	if (R.n_faults == sizeof R.faults / sizeof R.faults[0]) {
		/* a test that asks for more would pass with nothing injected */
		fprintf(stderr, "trec_fail: more than %zu faults at once\n", sizeof R.faults / sizeof R.faults[0]);
		abort();
	}
	R.faults[R.n_faults++] = (fault){.fn = xstrdup(fn), .match = match ? xstrdup(match) : NULL, .nth = nth, .err = err};
	pthread_mutex_unlock(&R.mu);
}

void trec_missing(const char *sys, const char *name)
{
	pthread_mutex_lock(&R.mu);
	event_add(sys, name, true);
	if (name) {
		char *p = xprintf("%s/events/%s/%s", R.dir, sys, name);
		rm_tree(p);
		free(p);
	}
	pthread_mutex_unlock(&R.mu);
}

void trec_unmounted(void)
{
	pthread_mutex_lock(&R.mu);
	R.mounted = false;
	pthread_mutex_unlock(&R.mu);
}

void trec_add_instance(const char *name)
{
	pthread_mutex_lock(&R.mu);
	inst_add(name);
	pthread_mutex_unlock(&R.mu);
}

int trec_instances(void)
{
	pthread_mutex_lock(&R.mu);
	int n = (int)R.n_inst;
	pthread_mutex_unlock(&R.mu);
	return n;
}

bool trec_instance_exists(const char *name)
{
	pthread_mutex_lock(&R.mu);
	bool yes = inst_index(name) >= 0;
	pthread_mutex_unlock(&R.mu);
	return yes;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

const char *trec_log(void)
{
	pthread_mutex_lock(&R.mu);
	if (R.n_other)
		qsort(R.other, R.n_other, sizeof(*R.other), line_cmp);
	size_t len = R.main_len + 128;
	for (size_t i = 0; i < R.n_other; i++)
		len += strlen(R.other[i]);
	free(R.out);
	if (!(R.out = malloc(len)))
		abort();
	size_t at = (size_t)snprintf(R.out, len, "%s", R.main_log ? R.main_log : "");
	if (R.n_other)
		at += (size_t)snprintf(R.out + at, len - at,
				       "-- on worker threads (no order against the above; sorted):\n");
	for (size_t i = 0; i < R.n_other; i++)
		at += (size_t)snprintf(R.out + at, len - at, "%s", R.other[i]);
	pthread_mutex_unlock(&R.mu);
	return R.out;
}
