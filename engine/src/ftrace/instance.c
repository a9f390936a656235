/* ftrace/instance.c: tracefs instance helpers shared by the backend and launch mode. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ftrace/instance.h"

static void say(const char *who, FILE *msg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(const char *who, FILE *msg, const char *fmt, ...)
{
	va_list ap;
	if (!msg)
		return;
	va_start(ap, fmt);
	fprintf(msg, "%s: ", who);
	vfprintf(msg, fmt, ap);
	fputc('\n', msg);
	fflush(msg);
	va_end(ap);
}

/* An instance with a session's name can only be ours from an engine that died
 * (instances outlive their creator and keep tracing into pinned memory). */
hs_status hs_ftrace_remove_stale(const char *name, const char *who, FILE *msg)
{
	if (!tracefs_instance_exists(name))
		return HS_OK;
	struct tracefs_instance *old = tracefs_instance_alloc(NULL, name);
	if (!old)
		return HS_ENOMEM;
	int rc = tracefs_instance_destroy(old);
	int err = errno;
	tracefs_instance_free(old);
	if (rc) {
		say(who, msg, "tracefs instance '%s' exists and cannot be removed (%s)%s", name, strerror(err),
		    err == EBUSY ? ": another engine is probably running; stop it first" : "");
		return HS_EIO;
	}
	say(who, msg, "removed tracefs instance '%s' left by an engine that did not stop cleanly", name);
	return HS_OK;
}

struct tep_handle *hs_ftrace_load_formats(const hs_plan_session *sessions, size_t n_sessions, const char *who,
					  FILE *msg)
{
	size_t n = 0;
	for (size_t i = 0; i < n_sessions; i++)
		n += sessions[i].n_providers;
	const char **sys = calloc(n + 1, sizeof(*sys));
	if (!sys)
		return NULL;
	n = 0;
	for (size_t i = 0; i < n_sessions; i++)
		for (size_t p = 0; p < sessions[i].n_providers; p++) {
			const hs_provider *pr = sessions[i].providers[p].provider;
			sys[n++] = pr->system ? pr->system : pr->name;
		}
	struct tep_handle *tep = tracefs_local_events_system(NULL, sys);
	free(sys);
	if (!tep)
		say(who, msg, "cannot read the event formats from tracefs");
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

/* Filter first, then enable, so an event never flows unfiltered. A failed
 * filter write clears the old filter in the kernel, so on any doubt the event
 * stays disabled and the user is told why. */
static hs_status enable_event(struct tracefs_instance *inst, struct tep_handle *tep, const char *iname,
			      const char *sys, const hs_plan_event *pe, const char *who, FILE *msg,
			      hs_ftrace_events *ev)
{
	const char *name = pe->name;
	if (pe->filter) {
		struct tep_event *te = tep_find_event_by_name(tep, sys, name);
		char *err = NULL, *back = NULL;
		if (!te) {
			say(who, msg, "%s: event %s:%s does not exist in this kernel; skipped", iname, sys, name);
			goto skip;
		}
		if (tracefs_filter_string_verify(te, pe->filter, &err) < 0) {
			say(who, msg, "%s: filter of %s:%s rejected before writing (%s); event left disabled", iname, sys,
			    name, err ? err : "invalid");
			free(err);
			goto skip;
		}
		free(err);
		int rc = tracefs_event_filter_apply(inst, te, pe->filter);
		back = tracefs_event_file_read(inst, sys, name, "filter", NULL);
		if (rc < 0 || !back || !same_filter(pe->filter, back)) {
			char *log = tracefs_error_last(inst);
			say(who, msg,
			    "%s: the kernel refused the filter of %s:%s (filter file: %s; error_log: %s); event left "
			    "disabled",
			    iname, sys, name, back ? back : "unreadable", log ? log : "empty");
			free(log);
			free(back);
			tracefs_event_disable(inst, sys, name);
			goto skip;
		}
		free(back);
	}
	if (tracefs_event_enable(inst, sys, name) < 0) {
		say(who, msg, "%s: event %s:%s cannot be enabled (%s); skipped", iname, sys, name,
		    errno == ENOENT ? "not in this kernel" : strerror(errno));
		goto skip;
	}
	ev->enabled++;
	return add_glob(ev, sys, name);
skip:
	ev->skipped++;
	return HS_OK;
}

hs_status hs_ftrace_enable_events(struct tracefs_instance *inst, struct tep_handle *tep, const hs_plan_session *ps,
				  const char *who, FILE *msg, hs_ftrace_events *ev)
{
	const char *iname = ps->session->logger_name;
	for (size_t i = 0; i < ps->n_providers; i++) {
		const hs_plan_provider *pp = &ps->providers[i];
		const char *sys = pp->provider->system ? pp->provider->system : pp->provider->name;
		if (!pp->n_events) {
			if (tracefs_event_enable(inst, sys, NULL) < 0) {
				say(who, msg, "%s: system %s cannot be enabled (not in this kernel?); skipped", iname, sys);
				ev->skipped++;
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
}
