/* ftrace/instance.c: tracefs instance helpers shared by the backend and launch mode. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ftrace/instance.h"
#include "hindsight/limits.h"
#include "hindsight/strbuf.h"
#include "hindsight/text.h"
#include "hindsight/vec.h"

/* Where the instance locks live: the tracefs table's lock_dir (/run/hindsight;
 * tracefs_api.c says why there), as the locks guard its namespace of names. */
#define HS_FTRACE_LOCK_DIR (hs_tracefs_api_get()->lock_dir)

/* `who` is the component the message comes from (the backend, launch mode). */
static void say(const char *who, const hs_msg *msg, hs_msg_level level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void say(const char *who, const hs_msg *msg, hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_msg_vsay(msg, level, who, fmt, ap);
	va_end(ap);
}

/* ---- instance locks: one file per instance name, locked while its owner lives ---- */

/* The names this process holds. POSIX record locks belong to the process and
 * vanish when any of its fds on the file closes, so each file is opened once
 * and kept open until hs_ftrace_release (or exit, which is what kill -9 does). */
typedef struct {
	char *name, *path;
	int fd;
} claim;
static claim *g_claims;
static size_t g_n_claims;

static claim *find_claim(const char *name)
{
	for (size_t i = 0; i < g_n_claims; i++)
		if (!strcmp(g_claims[i].name, name))
			return &g_claims[i];
	return NULL;
}

static char *lock_path(const char *name)
{
	size_t len = strlen(HS_FTRACE_LOCK_DIR) + strlen(name) + 8;
	char *p = malloc(len);
	if (p)
		snprintf(p, len, "%s/%s.lock", HS_FTRACE_LOCK_DIR, name);
	return p;
}

/* The whole file as text (the previous owner's "pid\nnote\n"), or NULL. */
static char *read_all(int fd)
{
	char *buf = malloc(PATH_MAX + 64);
	if (!buf)
		return NULL;
	ssize_t n = pread(fd, buf, PATH_MAX + 63, 0);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

static hs_status write_owner(int fd, const char *note)
{
	char head[32];
	int hl = snprintf(head, sizeof(head), "%ld\n", (long)getpid());
	size_t nl = note ? strlen(note) : 0;
	if (ftruncate(fd, 0) || pwrite(fd, head, (size_t)hl, 0) != hl ||
	    (note && (pwrite(fd, note, nl, hl) != (ssize_t)nl || pwrite(fd, "\n", 1, hl + (off_t)nl) != 1)))
		return HS_EIO;
	return HS_OK;
}

hs_status hs_ftrace_claim(const char *name, const char *who, const hs_msg *msg, long *prev_pid, char **prev_note)
{
	hs_status st = HS_ENOMEM;
	char *path = NULL, *old = NULL;
	int fd = -1;
	if (prev_pid)
		*prev_pid = 0;
	if (prev_note)
		*prev_note = NULL;
	if (find_claim(name))
		return HS_OK;
	if (strchr(name, '/') || !(path = lock_path(name)))
		return strchr(name, '/') ? HS_EINVAL : HS_ENOMEM;
	if (mkdir(HS_FTRACE_LOCK_DIR, 0700) && errno != EEXIST) {
		say(who, msg, HS_MSG_WARN,
		    "cannot create %s (%s): a second engine with the same instance names would not be noticed",
		    HS_FTRACE_LOCK_DIR, strerror(errno));
		free(path);
		return HS_OK; /* the lock protects; it is not needed to record */
	}
	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int locked = -1;
	/* A clean release unlinks the file while holding the lock, so a lock
	 * taken on a file that is no longer at the path is on a dead inode: take
	 * it again on the new file (a few rounds at most, one per racing release). */
	for (int round = 0; round < 8; round++) {
		struct stat by_fd, by_path;
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			say(who, msg, HS_MSG_WARN,
			    "cannot open %s (%s): a second engine with the same instance names would not be noticed",
			    path, strerror(errno));
			free(path);
			return HS_OK;
		}
		locked = fcntl(fd, F_SETLK, &lk);
		if (locked || (!fstat(fd, &by_fd) && !stat(path, &by_path) && by_fd.st_ino == by_path.st_ino &&
			       by_fd.st_dev == by_path.st_dev))
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		say(who, msg, HS_MSG_ERROR,
		    "%s keeps being replaced; another engine is starting and stopping with these names", path);
		st = HS_EIO;
		goto fail;
	}
	if (locked) {
		int err = errno;
		struct flock who_has = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		st = HS_EIO;
		if (err != EAGAIN && err != EACCES) {
			say(who, msg, HS_MSG_ERROR, "cannot lock %s: %s", path, strerror(err));
			goto fail;
		}
		/* The kernel knows the holder; the file's first line is a fallback. */
		long pid = !fcntl(fd, F_GETLK, &who_has) && who_has.l_type != F_UNLCK ? (long)who_has.l_pid : 0;
		if (!pid && (old = read_all(fd)))
			pid = strtol(old, NULL, 10);
		if (pid > 0)
			say(who, msg, HS_MSG_ERROR,
			    "tracefs instance '%s' belongs to a running engine, pid %ld (it holds %s); stop that engine "
			    "first, or give this profile other logger_name values",
			    name, pid, path);
		else
			say(who, msg, HS_MSG_ERROR,
			    "tracefs instance '%s' belongs to a running engine (it holds %s); stop it first", name,
			    path);
		goto fail;
	}
	/* Ours now. A file with something in it is from an owner that died
	 * holding it (a clean stop removes the file). */
	if ((old = read_all(fd))) {
		char *nl = strchr(old, '\n');
		if (prev_pid)
			*prev_pid = strtol(old, NULL, 10);
		if (prev_note && nl && nl[1]) {
			char *end = strchr(nl + 1, '\n');
			if (end)
				*end = 0;
			if (!(*prev_note = strdup(nl + 1)))
				goto fail;
		}
	}
	st = HS_EIO;
	if (write_owner(fd, NULL) != HS_OK) {
		say(who, msg, HS_MSG_ERROR, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	st = HS_ENOMEM;
	claim *c = realloc(g_claims, (g_n_claims + 1) * sizeof(*c));
	if (!c)
		goto fail;
	g_claims = c;
	if (!(c[g_n_claims].name = strdup(name)))
		goto fail;
	c[g_n_claims].path = path;
	c[g_n_claims++].fd = fd;
	free(old);
	return HS_OK;
fail:
	if (prev_note) {
		free(*prev_note);
		*prev_note = NULL;
	}
	if (fd >= 0)
		close(fd); /* also lets go of the lock, if it was taken */
	free(old);
	free(path);
	return st;
}

hs_status hs_ftrace_claim_note(const char *name, const char *note)
{
	claim *c = find_claim(name);
	return c ? write_owner(c->fd, note) : HS_ENOENT;
}

void hs_ftrace_release(const char *name)
{
	claim *c = find_claim(name);
	if (!c)
		return;
	/* Gone means "stopped cleanly": the next owner finds no note and nothing
	 * to rescue, and /run keeps no file per name ever used. Unlinked while
	 * still locked, so a racing claim sees the inode change and retries. */
	unlink(c->path);
	close(c->fd);
	free(c->name);
	free(c->path);
	*c = g_claims[--g_n_claims];
	if (!g_n_claims) {
		free(g_claims);
		g_claims = NULL;
	}
}

/* An instance with a session's name can only be ours from an engine that died
 * (instances outlive their creator and keep tracing into pinned memory): the
 * name's lock says so, since a live owner still holds it. */
hs_status hs_ftrace_remove_stale(const char *name, const char *who, const hs_msg *msg)
{
	hs_status st = hs_ftrace_claim(name, who, msg, NULL, NULL);
	if (st != HS_OK)
		return st;
	if (!hs_tracefs_api_get()->instance_exists(name))
		return HS_OK;
	struct tracefs_instance *old = hs_tracefs_api_get()->instance_alloc(NULL, name);
	if (!old)
		return HS_ENOMEM;
	int rc = hs_tracefs_api_get()->instance_destroy(old);
	int err = errno;
	hs_tracefs_api_get()->instance_free(old);
	if (rc) {
		say(who, msg, HS_MSG_ERROR, "tracefs instance '%s' exists and cannot be removed (%s)%s", name,
		    strerror(err), err == EBUSY ? ": another engine is probably running; stop it first" : "");
		return HS_EIO;
	}
	say(who, msg, HS_MSG_INFO, "removed tracefs instance '%s' left by an engine that did not stop cleanly", name);
	return HS_OK;
}

struct tep_handle *hs_ftrace_load_formats(const hs_plan_session *sessions, size_t n_sessions, const char *who,
					  const hs_msg *msg)
{
	size_t n = 0;
	for (size_t i = 0; i < n_sessions; i++)
		n += sessions[i].n_providers;
	const char **sys = calloc(n + 2, sizeof(*sys));
	if (!sys)
		return NULL;
	n = 0;
	/* Always the ftrace system: trace_marker writes (the engine's marks, the
	 * applications' copied by copy_trace_marker) are its print events, and
	 * the observer names and decodes them like any other. */
	sys[n++] = "ftrace";
	for (size_t i = 0; i < n_sessions; i++)
		for (size_t p = 0; p < sessions[i].n_providers; p++) {
			const hs_provider *pr = sessions[i].providers[p].provider;
			sys[n++] = pr->system ? pr->system : pr->name;
		}
	struct tep_handle *tep = hs_tracefs_api_get()->local_events_system(NULL, sys);
	free(sys);
	if (!tep)
		say(who, msg, HS_MSG_ERROR, "cannot read the event formats from tracefs");
	return tep;
}

static hs_status add_glob(hs_ftrace_events *ev, const char *sys, const char *name)
{
	size_t len = strlen(sys) + (name ? strlen(name) : 1) + 2;
	char **g = realloc(ev->globs, (ev->n_globs + 1) * sizeof(*g));
	if (!g)
		return HS_ENOMEM;
	ev->globs = g;
	if (!(g[ev->n_globs] = malloc(len)))
		return HS_ENOMEM;
	snprintf(g[ev->n_globs], len, "%s/%s", sys, name ? name : "*");
	struct hs_dat_event_list *e = calloc(1, sizeof(*e));
	if (!e) {
		free(g[ev->n_globs]);
		return HS_ENOMEM;
	}
	e->glob = g[ev->n_globs++];
	e->next = ev->list;
	ev->list = e;
	return HS_OK;
}

static bool same_filter(const char *want, const char *got)
{
	/* The kernel echoes the expression; compare ignoring whitespace. */
	for (;;) {
		while (*want == ' ' || *want == '\t' || *want == '\n')
			want++;
		while (*got == ' ' || *got == '\t' || *got == '\n')
			got++;
		if (!*want || !*got)
			return !*want && !*got;
		if (*want++ != *got++)
			return false;
	}
}

/* A multi-line kernel or libtracefs message ("expr\n   ^\nfield not valid\n")
 * as one line for a message: caret lines dropped, the rest joined by " / ".
 * Takes `s` (malloc'd) and returns the result, malloc'd. Not in place: " / "
 * is longer than the newline it replaces, and the kernel's error_log ("[ts]
 * event filter parse error: ...\n  Command: ...\n   ^\n") has two kept lines
 * in a row, which overwrote the second and ran past the buffer (found by the
 * tracefs recorder's refused-filter golden under ASan). */
static char *one_line(char *s)
{
	char *out = malloc(3 * strlen(s) + 1), *w = out;
	if (!out) {
		for (char *c = s; *c; c++)
			if (*c == '\n')
				*c = ' ';
		return s;
	}
	for (const char *line = s; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (strspn(line, " \t^") < n) {
			if (w != out) {
				memcpy(w, " / ", 3);
				w += 3;
			}
			memcpy(w, line, n);
			w += n;
		}
		line = nl ? nl + 1 : NULL;
	}
	*w = 0;
	free(s);
	return out;
}

/* Lists an event (name NULL: a whole system) the session will not record and
 * says so: a warning when the rules mark it optional, else an error (the
 * caller then refuses the rules). */
static hs_status skip_event(hs_ftrace_events *ev, const char *iname, const char *sys, const char *name, bool optional,
			    const char *why, const char *who, const hs_msg *msg)
{
	hs_skipped_event *l = realloc(ev->skipped_list, (ev->skipped + 1) * sizeof(*l));
	if (!l)
		return HS_ENOMEM;
	ev->skipped_list = l;
	l = &l[ev->skipped];
	*l = (hs_skipped_event){.system = strdup(sys), .name = name ? strdup(name) : NULL, .why = strdup(why),
				.optional = optional};
	if (!l->system || (name && !l->name) || !l->why) {
		free((void *)l->system), free((void *)l->name), free((void *)l->why);
		return HS_ENOMEM;
	}
	ev->skipped++;
	if (optional) {
		say(who, msg, HS_MSG_WARN, "%s: %s:%s skipped (optional in the rules): %s", iname, sys, name ? name : "*",
		    why);
		return HS_OK;
	}
	ev->refused++;
	say(who, msg, HS_MSG_ERROR,
	    "%s: %s%s%s%s: %s; the rules need it (fix the rules, or mark the event `optional: true` to record without "
	    "it)",
	    iname, name ? "" : "system ", sys, name ? ":" : "", name ? name : "", why);
	return HS_OK;
}

/* Filter first, then enable, so an event never flows unfiltered. A failed
 * filter write clears the old filter in the kernel, so on any doubt the event
 * stays disabled and the user is told why. */
static hs_status enable_event(struct tracefs_instance *inst, struct tep_handle *tep, const char *iname, const char *sys,
			      const hs_plan_event *pe, const char *who, const hs_msg *msg, hs_ftrace_events *ev)
{
	const char *name = pe->name;
	char why[1024];
	/* The ftrace system's events (print: trace_marker writes; bputs, bprint:
	 * trace_printk) have no enable or filter file: the kernel writes them
	 * whenever the instance traces. A whitelist naming one takes it as on. */
	if (!strcmp(sys, "ftrace")) {
		if (!tep_find_event_by_name(tep, sys, name))
			return skip_event(ev, iname, sys, name, pe->optional, "not in this kernel", who, msg);
		if (pe->filter)
			say(who, msg, HS_MSG_WARN,
			    "%s: the kernel cannot filter %s:%s (the ftrace system has no filter files): its filter "
			    "\"%s\" is not applied, every one is recorded",
			    iname, sys, name, pe->filter);
		ev->enabled++;
		return HS_OK;
	}
	if (pe->filter) {
		struct tep_event *te = tep_find_event_by_name(tep, sys, name);
		char *err = NULL, *back = NULL;
		if (!te)
			return skip_event(ev, iname, sys, name, pe->optional, "not in this kernel", who, msg);
		if (hs_tracefs_api_get()->filter_string_verify(te, pe->filter, &err) < 0) {
			if (err)
				err = one_line(err);
			snprintf(why, sizeof why, "its filter \"%s\" was rejected before writing (%s)", pe->filter,
				 err ? err : "invalid");
			free(err);
			return skip_event(ev, iname, sys, name, pe->optional, why, who, msg);
		}
		free(err);
		int rc = hs_tracefs_api_get()->event_filter_apply(inst, te, pe->filter);
		back = hs_tracefs_api_get()->event_file_read(inst, sys, name, "filter", NULL);
		if (rc < 0 || !back || !same_filter(pe->filter, back)) {
			char *log = hs_tracefs_api_get()->error_last(inst);
			/* The filter file then holds the kernel's own message and caret: one line here. */
			if (back)
				back = one_line(back);
			if (log)
				log = one_line(log);
			snprintf(why, sizeof why,
				 "the kernel refused the filter of %s:%s \"%s\" (filter file: %s; error_log: %s)", sys, name,
				 pe->filter, back ? back : "unreadable", log && *log ? log : "empty");
			free(log);
			free(back);
			hs_tracefs_api_get()->event_disable(inst, sys, name);
			return skip_event(ev, iname, sys, name, pe->optional, why, who, msg);
		}
		free(back);
	}
	if (hs_tracefs_api_get()->event_enable(inst, sys, name) < 0) {
		snprintf(why, sizeof why, "cannot be enabled (%s)", errno == ENOENT ? "not in this kernel" : strerror(errno));
		return skip_event(ev, iname, sys, name, pe->optional, why, who, msg);
	}
	ev->enabled++;
	return add_glob(ev, sys, name);
}

/* The engine's thread ids, space-separated, into *out (malloc'd; the same text for the same threads: hs_dir_list
 * sorts them): HS_ENOENT, errno saying why, when /proc/self/task cannot be read. */
static hs_status thread_list(char **out)
{
	char **tids;
	size_t n;
	*out = NULL;
	hs_status st = hs_dir_list("/proc/self/task", NULL, NULL, 0, &tids, &n);
	int err = errno;
	hs_strbuf sb = {0};
	for (size_t i = 0; i < n; i++)
		hs_sb_printf(&sb, "%s%s", i ? " " : "", tids[i]);
	hs_dir_list_free(tids, n);
	if (st == HS_OK && (sb.oom || !sb.buf))
		st = sb.oom ? HS_ENOMEM : HS_ENOENT;
	if (st != HS_OK) {
		hs_sb_free(&sb);
		errno = err;
		return st;
	}
	*out = sb.buf;
	return HS_OK;
}

/* The engine's own syscalls and exits must not fill the sessions it runs (its
 * fsyncs and its exit would be recorded as if the machine did them). Every
 * thread is listed by its id (the kernel matches tasks, not processes), and
 * event-fork makes threads and children started later inherit the exclusion:
 * the snapshot writer's workers, say. A session scoped by set_event_pid (launch
 * mode) already leaves the engine out; there the exclusion is not written, so
 * it can never swallow the launched tree, whenever that tree was forked. */
static hs_status exclude_self(struct tracefs_instance *inst, const char *iname, const char *who, const hs_msg *msg)
{
	char *scope = hs_tracefs_api_get()->instance_file_read(inst, "set_event_pid", NULL);
	bool scoped = scope && strspn(scope, " \t\n") != strlen(scope);
	free(scope);
	if (scoped)
		return HS_OK;
	if (!hs_tracefs_api_get()->file_exists(inst, "set_event_notrace_pid")) {
		say(who, msg, HS_MSG_WARN,
		    "%s: this kernel has no set_event_notrace_pid (before 5.8): the engine's own events are "
		    "recorded too",
		    iname);
		return HS_OK;
	}
	char *list = NULL;
	hs_status st = thread_list(&list);
	if (st == HS_ENOENT) {
		say(who, msg, HS_MSG_WARN,
		    "%s: cannot list the engine's threads (/proc/self/task: %s): its own events are recorded too",
		    iname, strerror(errno));
		return HS_OK;
	}
	if (st != HS_OK)
		return st;
	if (hs_tracefs_api_get()->option_enable(inst, TRACEFS_OPTION_EVENT_FORK) < 0)
		goto refused;
	/* A thread started between the listing and the write has a parent not yet listed, so event-fork did not
	 * add it (ftrace:notrace saw one missing under load): list again until the list holds still. */
	for (int tries = 1;; tries++) {
		if (hs_tracefs_api_get()->instance_file_write(inst, "set_event_notrace_pid", list) < 0)
			goto refused;
		char *now;
		if (tries == HS_LINUX_NOTRACE_TRIES || (st = thread_list(&now)) != HS_OK)
			break; /* the list written stands */
		bool same = !strcmp(now, list);
		free(list);
		list = now;
		if (same)
			break;
	}
	free(list);
	return st == HS_ENOMEM ? HS_ENOMEM : HS_OK;
refused:
	say(who, msg, HS_MSG_WARN,
	    "%s: cannot leave the engine (threads %s) out of its events: %s; its own events are recorded too", iname,
	    list, strerror(errno));
	free(list);
	return HS_OK;
}

hs_status hs_ftrace_enable_events(struct tracefs_instance *inst, struct tep_handle *tep, const hs_plan_session *ps,
				  const char *who, const hs_msg *msg, hs_ftrace_events *ev)
{
	const char *iname = ps->session->logger_name;
	/* Before any event is enabled, so not one of the engine's gets in. */
	if (exclude_self(inst, iname, who, msg) == HS_ENOMEM)
		return HS_ENOMEM;
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		const char *sys = pp->provider->system ? pp->provider->system : pp->provider->name;
		if (!pp->n_events) {
			if (!strcmp(sys, "ftrace")) { /* no enable files: always on (see enable_event) */
				ev->enabled++;
				continue;
			}
			if (hs_tracefs_api_get()->event_enable(inst, sys, NULL) < 0) {
				if (skip_event(ev, iname, sys, NULL, false, "cannot be enabled (not in this kernel?)", who,
					       msg) != HS_OK)
					return HS_ENOMEM;
				continue;
			}
			ev->enabled++;
			if (add_glob(ev, sys, NULL) != HS_OK)
				return HS_ENOMEM;
			continue;
		}
		for (size_t e = 0; e < pp->n_events; e++)
			if (enable_event(inst, tep, iname, sys, &pp->events[e], who, msg, ev) != HS_OK)
				return HS_ENOMEM;
	}
	return ev->refused ? HS_ERULES : HS_OK;
}

hs_status hs_ftrace_copy_trace_marker(struct tracefs_instance *inst, const hs_plan_session *ps, const char *who,
				      const hs_msg *msg)
{
	if (!ps->linux_.copy_trace_marker)
		return HS_OK;
	const char *iname = ps->session->logger_name;
	if (!hs_tracefs_api_get()->file_exists(inst, "options/copy_trace_marker")) {
		say(who, msg, HS_MSG_WARN,
		    "%s: this kernel lacks options/copy_trace_marker (Linux 6.17+): the applications' trace_marker "
		    "writes cannot reach this session, so the trace_marker frame source cannot work",
		    iname);
		return HS_EIO;
	}
	if (hs_tracefs_api_get()->instance_file_write(inst, "options/copy_trace_marker", "1") < 0) {
		say(who, msg, HS_MSG_ERROR, "%s: cannot set options/copy_trace_marker: %s", iname, strerror(errno));
		return HS_EIO;
	}
	return HS_OK;
}

void hs_ftrace_events_free(hs_ftrace_events *ev)
{
	while (ev->list) {
		struct hs_dat_event_list *e = ev->list;
		ev->list = e->next;
		free(e);
	}
	for (size_t g = 0; g < ev->n_globs; g++)
		free(ev->globs[g]);
	free(ev->globs);
	ev->globs = NULL;
	ev->n_globs = 0;
	for (size_t i = 0; i < ev->skipped; i++) {
		free((void *)ev->skipped_list[i].system);
		free((void *)ev->skipped_list[i].name);
		free((void *)ev->skipped_list[i].why);
	}
	free(ev->skipped_list);
	ev->skipped_list = NULL;
	ev->skipped = ev->refused = 0;
}

/* ---- what a dead owner left in its run folder ---- */

typedef struct {
	unsigned cpu, seq;
} chunk_id;

static int chunk_cmp(const void *a, const void *b)
{
	const chunk_id *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static char *join(const char *a, const char *b)
{
	size_t len = strlen(a) + strlen(b) + 2;
	char *p = malloc(len);
	if (p)
		snprintf(p, len, "%s/%s", a, b);
	return p;
}

/* Appends the whole sub-buffers of `from` to `out`; a page cut short by a
 * crash is left out (the .dat reader would take it for a corrupt page). */
static hs_status append_pages(int out, const char *from, size_t subbuf, void *page, uint64_t *events)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return HS_EIO;
	hs_status st = HS_OK;
	for (;;) {
		size_t got = 0;
		while (got < subbuf) {
			ssize_t n = read(in, (char *)page + got, subbuf - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (got < subbuf)
			break;
		if (write(out, page, subbuf) != (ssize_t)subbuf) {
			st = HS_EIO;
			break;
		}
		*events += hs_dat_count_events(page, subbuf, subbuf);
	}
	close(in);
	return st;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		for (struct dirent *e; (e = readdir(d));) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *p = join(dir, e->d_name);
			if (p)
				unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* The private tracing folders (HS_FTRACE_TRACING_DIR_PREFIX, dat.c) a killed engine left in its run folder: a
 * snapshot's or a rewrite's headers were being written. They hold only links, which unlink removes (never what
 * they point at in tracefs). */
static void remove_tracing_dirs(const char *run_dir, long pid, const char *who, const hs_msg *msg)
{
	DIR *d = opendir(run_dir);
	if (!d)
		return;
	size_t plen = strlen(HS_FTRACE_TRACING_DIR_PREFIX);
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, HS_FTRACE_TRACING_DIR_PREFIX, plen) != 0)
			continue;
		char *p = join(run_dir, e->d_name);
		if (!p)
			continue;
		remove_dir(p);
		say(who, msg, HS_MSG_INFO, "removed %s, a temporary folder of the engine (pid %ld) that did not stop cleanly",
		    p, pid);
		free(p);
	}
	closedir(d);
}

hs_status hs_ftrace_rescue_chunks(const hs_plan_session *ps, const char *run_dir, long pid, const char *who,
				  const hs_msg *msg)
{
	remove_tracing_dirs(run_dir, pid, who, msg);
	const hs_session *rs = ps->session;
	hs_status st = HS_ENOMEM;
	char *dir = NULL, *out = NULL, **files = NULL;
	chunk_id *ids = NULL;
	size_t n_ids = 0, cap = 0;
	unsigned ncpu = 0;
	uint64_t events = 0;
	void *page = NULL;
	hs_ftrace_events ev = {0};
	DIR *d = NULL;
	if (rs->mode != HS_MODE_FILE_CIRCULAR || !rs->output)
		return HS_OK;
	size_t dlen = strlen(rs->output) + sizeof(HS_FTRACE_CHUNK_DIR_FMT);
	char *dname = malloc(dlen);
	if (!dname)
		return HS_ENOMEM;
	snprintf(dname, dlen, HS_FTRACE_CHUNK_DIR_FMT, rs->output);
	dir = join(run_dir, dname);
	free(dname);
	if (!dir || !(out = join(run_dir, rs->output)))
		goto done;
	if (!(d = opendir(dir))) {
		st = HS_OK; /* it stopped after its last flush, or the folder is gone: nothing left behind */
		goto done;
	}
	for (struct dirent *e; (e = readdir(d));) {
		chunk_id id;
		int used = 0;
		if (sscanf(e->d_name, HS_FTRACE_CHUNK_FMT "%n", &id.cpu, &id.seq, &used) != 2 || e->d_name[used] ||
		    id.cpu >= 65536)
			continue; /* not a chunk (a half-written rebuild input, say) */
		chunk_id *grown = hs_array_grow(ids, sizeof *ids, n_ids, &cap, 64);
		if (!grown)
			goto done;
		ids = grown;
		ids[n_ids++] = id;
		if (id.cpu + 1 > ncpu)
			ncpu = id.cpu + 1;
	}
	closedir(d);
	d = NULL;
	if (!n_ids) {
		say(who, msg, HS_MSG_INFO,
		    "removed %s, an empty chunk folder of the engine (pid %ld) that did not stop cleanly", dir, pid);
		remove_dir(dir);
		st = HS_OK;
		goto done;
	}
	qsort(ids, n_ids, sizeof(*ids), chunk_cmp);
	/* The .dat has a file per CPU of the machine, empty ones included. */
	unsigned conf = hs_tracefs_api_get()->cpus();
	if (conf > ncpu)
		ncpu = conf;
	size_t subbuf = (size_t)getpagesize();
	if (!(files = calloc(ncpu, sizeof(*files))) || !(page = malloc(subbuf)))
		goto done;
	size_t next = 0;
	st = HS_OK;
	for (unsigned c = 0; c < ncpu; c++) {
		char name[32];
		snprintf(name, sizeof(name), "rescue.cpu%u", c);
		if (!(files[c] = join(dir, name))) {
			st = HS_ENOMEM;
			goto undone;
		}
		int fd = open(files[c], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			say(who, msg, HS_MSG_ERROR, "cannot create %s: %s", files[c], strerror(errno));
			st = HS_EIO;
			goto undone;
		}
		/* Oldest first: chunk numbers grow as the stream rotates. */
		for (; next < n_ids && ids[next].cpu == c; next++) {
			char cn[48];
			snprintf(cn, sizeof(cn), HS_FTRACE_CHUNK_FMT, ids[next].cpu, ids[next].seq);
			char *p = join(dir, cn);
			st = p ? append_pages(fd, p, subbuf, page, &events) : HS_ENOMEM;
			free(p);
			if (st != HS_OK)
				break;
		}
		if (close(fd) || st != HS_OK) {
			say(who, msg, HS_MSG_ERROR, "cannot gather the chunks of CPU %u in %s", c, dir);
			st = HS_EIO;
			goto undone;
		}
	}
	if (!events) {
		/* Nothing whole to add: the .dat it may have written stays as it is. */
		say(who, msg, HS_MSG_INFO,
		    "removed %s, the chunk folder of the engine (pid %ld) that did not stop cleanly: its %zu chunk "
		    "files hold no whole page of events",
		    dir, pid, n_ids);
		goto undone;
	}
	/* The formats of what the session enables; a glob the kernel lacks names nothing. */
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		const char *sys = pp->provider->system ? pp->provider->system : pp->provider->name;
		st = HS_ENOMEM;
		if (!pp->n_events && add_glob(&ev, sys, NULL) != HS_OK)
			goto undone;
		for (size_t e = 0; e < pp->n_events; e++)
			if (add_glob(&ev, sys, pp->events[e].name) != HS_OK)
				goto undone;
	}
	st = hs_dat_write(out, rs->clock, (int)ncpu, files, ev.list, false, msg);
	if (st == HS_OK)
		say(who, msg, HS_MSG_INFO,
		    "rebuilt %s from the %zu chunk files the engine (pid %ld) left when it was killed: %" PRIu64
		    " key events, including those after its last flush; removed %s",
		    out, n_ids, pid, events, dir);
undone:
	if (st != HS_OK)
		say(who, msg, HS_MSG_ERROR,
		    "could not rebuild %s from the chunks the engine (pid %ld) left (%s); it stays as that engine "
		    "last wrote it, and %s is removed",
		    out, pid, hs_strerror(st), dir);
	for (unsigned c = 0; files && c < ncpu; c++)
		free(files[c]);
	remove_dir(dir);
done:
	if (d)
		closedir(d);
	hs_ftrace_events_free(&ev);
	free(files);
	free(page);
	free(ids);
	free(dir);
	free(out);
	return st;
}
