/* ftrace/detect.c: a watched key session's trigger-detection instance: only the watched events, read with partial pages every wake-up, handed to the observer as early copies. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ftrace/backend_int.h"
#include "hindsight/detect.h"
#include "hindsight/limits.h"

/*
 * The key session's reader takes full pages only (so its file has no
 * padding) and the partly filled page only at the session's flush: a single
 * crash's signal_deliver waited up to flush_interval_s (1-5 s) in the ring
 * before a trigger saw it. This instance records the same events (the same
 * filters) again, so it stays small and nearly empty, and is read with
 * partial pages on every wake-up; nothing of it is written to disk.
 */
struct hs_ftrace_detect {
	char *name;
	hs_session rs;      /* the session's rules, with this instance's name (messages, enables) */
	hs_plan_session ps; /* only the watched events, with the session's filters */
	hs_provider *prov;  /* [ps.n_providers]: system and name of each */
	struct tracefs_instance *inst;
	struct tracefs_cpu **tcpu; /* [cpus] */
	hs_cpu_stats *cpu;         /* [cpus] */
	hs_ftrace_events ev;
	bool said; /* a read failed: said once (the next polls try again) */
};

static const char *sys_of(const hs_provider *p)
{
	return p->system ? p->system : p->name;
}

static void detect_free(hs_ftrace_detect *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ps.n_providers; i++)
		free(d->ps.providers[i].events);
	free(d->ps.providers);
	free(d->prov);
	free(d->tcpu);
	free(d->cpu);
	hs_ftrace_events_free(&d->ev);
	free(d->name);
	free(d);
}

/* Adds a watched event once, with the filter the session's whitelist gives it
 * (none when the session takes its whole system, or does not list it: the
 * trace_marker print events copy_trace_marker brings). */
static hs_status add_event(hs_ftrace_detect *d, const hs_plan_session *ps, const char *sys, const char *name)
{
	const hs_plan_event *from = NULL;
	for (size_t p = 0; p < ps->n_providers && !from; p++) {
		const hs_plan_provider *pp = &ps->providers[p];
		if (strcmp(sys_of(pp->provider), sys))
			continue;
		for (size_t e = 0; e < pp->n_events && !from; e++)
			if (pp->events[e].name && !strcmp(pp->events[e].name, name))
				from = &pp->events[e];
	}
	size_t p = 0;
	while (p < d->ps.n_providers && strcmp(sys_of(&d->prov[p]), sys))
		p++;
	if (p == d->ps.n_providers) {
		hs_provider *pr = realloc(d->prov, (p + 1) * sizeof(*pr));
		if (!pr)
			return HS_ENOMEM;
		d->prov = pr;
		hs_plan_provider *pp = realloc(d->ps.providers, (p + 1) * sizeof(*pp));
		if (!pp)
			return HS_ENOMEM;
		d->ps.providers = pp;
		memset(&d->prov[p], 0, sizeof(d->prov[p]));
		d->prov[p].name = sys;
		d->prov[p].system = sys;
		d->prov[p].platform = HS_PLATFORM_LINUX;
		memset(&pp[p], 0, sizeof(pp[p]));
		pp[p].whitelist = true;
		d->ps.n_providers++;
		/* Pointers into prov may have moved: set them all again. */
		for (size_t i = 0; i < d->ps.n_providers; i++)
			d->ps.providers[i].provider = &d->prov[i];
	}
	hs_plan_provider *pp = &d->ps.providers[p];
	for (size_t e = 0; e < pp->n_events; e++)
		if (!strcmp(pp->events[e].name, name))
			return HS_OK; /* two triggers watch it: enabled once */
	hs_plan_event *ev = realloc(pp->events, (pp->n_events + 1) * sizeof(*ev));
	if (!ev)
		return HS_ENOMEM;
	pp->events = ev;
	if (from) {
		ev[pp->n_events] = *from;
	} else {
		memset(&ev[pp->n_events], 0, sizeof(ev[0]));
		ev[pp->n_events].id = -1;
		ev[pp->n_events].name = name;
	}
	pp->n_events++;
	return HS_OK;
}

/* The trace clock the session's instance uses now ("[mono] ..."), into buf. */
static bool current_clock(struct tracefs_instance *inst, char *buf, size_t cap)
{
	char *text = hs_tracefs_api_get()->instance_file_read(inst, "trace_clock", NULL);
	char *o = text ? strchr(text, '[') : NULL, *c = o ? strchr(o, ']') : NULL;
	bool ok = o && c && (size_t)(c - o - 1) < cap;
	if (ok) {
		memcpy(buf, o + 1, (size_t)(c - o - 1));
		buf[c - o - 1] = '\0';
	}
	free(text);
	return ok;
}

/* Everything but the events: the ring (small, not overwriting), the clock
 * and trace_marker copies as the session's. */
static hs_status configure(hs_backend *b, session *s, hs_ftrace_detect *d)
{
	const char *name = d->name;
	char clock[32];
	if (hs_tracefs_api_get()->instance_set_buffer_size(d->inst, HS_LINUX_DETECT_BUFFER_KB, -1) < 0) {
		hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot size the ring to %d KB per CPU: %s", name,
			      HS_LINUX_DETECT_BUFFER_KB, strerror(errno));
		return HS_EIO;
	}
	if (hs_tracefs_api_get()->option_disable(d->inst, TRACEFS_OPTION_OVERWRITE) < 0) {
		hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot turn overwrite off", name);
		return HS_EIO;
	}
	const char *want = s->ps->session->clock;
	if (!want && current_clock(s->inst, clock, sizeof clock))
		want = clock;
	if (want && hs_tracefs_api_get()->instance_file_write(d->inst, "trace_clock", want) < 0) {
		hs_ftrace_say(b, HS_MSG_ERROR, "%s: the kernel has no trace clock '%s'", name, want);
		return HS_EIO;
	}
	return hs_ftrace_copy_trace_marker(d->inst, &d->ps, "ftrace", b->msg);
}

static hs_status make(hs_backend *b, session *s, size_t si, hs_ftrace_detect *d)
{
	const hs_plan *plan = b->plan;
	hs_status st;
	for (size_t t = 0; t < plan->n_triggers; t++) {
		const hs_plan_trigger *pt = &plan->triggers[t];
		if (pt->session != si || pt->trigger->kind == HS_TRIGGER_MANUAL)
			continue;
		for (size_t e = 0; e < pt->n_events; e++)
			if (pt->events[e].system && pt->events[e].name &&
			    (st = add_event(d, s->ps, pt->events[e].system, pt->events[e].name)) != HS_OK)
				return st;
	}
	if ((st = hs_ftrace_remove_stale(d->name, "ftrace", b->msg)) != HS_OK)
		return st;
	if (!(d->inst = hs_tracefs_api_get()->instance_create(d->name))) {
		hs_ftrace_say(b, HS_MSG_ERROR, "cannot create tracefs instance '%s': %s", d->name, strerror(errno));
		return HS_EIO;
	}
	hs_tracefs_api_get()->trace_off(d->inst);
	if ((st = configure(b, s, d)) != HS_OK)
		return st;
	/* The session's self-exclusion (set_event_notrace_pid, event-fork) comes with the enables. */
	if ((st = hs_ftrace_enable_events(d->inst, b->tep, &d->ps, "ftrace", b->msg, &d->ev)) != HS_OK)
		return st;
	if (!d->ev.enabled) {
		hs_ftrace_say(b, HS_MSG_ERROR, "%s: none of the watched events could be enabled", d->name);
		return HS_EIO;
	}
	for (unsigned c = 0; c < b->cpus; c++)
		if (!(d->tcpu[c] = hs_tracefs_api_get()->cpu_open(d->inst, (int)c, true))) {
			hs_ftrace_say(b, HS_MSG_ERROR, "%s: cannot open the ring of CPU %u: %s", d->name, c,
				      strerror(errno));
			return HS_EIO;
		}
	return HS_OK;
}

hs_status hs_ftrace_detect_setup(hs_backend *b, size_t si)
{
	session *s = &b->s[si];
	const char *logger = s->ps->session->logger_name;
	size_t cap = strlen(logger) + sizeof(HS_LINUX_DETECT_SUFFIX);
	char *name = malloc(cap);
	if (!name)
		return HS_ENOMEM;
	hs_plan_detect_name(logger, name, cap);
	if (!hs_plan_session_has_trigger_copy(b->plan, si)) {
		/* No trigger watches it now; one a dead engine left (older rules) goes. */
		if (hs_tracefs_api_get()->instance_exists(name) &&
		    hs_ftrace_remove_stale(name, "ftrace", b->msg) == HS_OK)
			hs_ftrace_release(name);
		free(name);
		return HS_OK;
	}
	hs_ftrace_detect *d = calloc(1, sizeof(*d));
	if (!d) {
		free(name);
		return HS_ENOMEM;
	}
	d->name = name;
	d->rs = *s->ps->session;
	d->rs.logger_name = d->name;
	d->ps.session = &d->rs;
	d->ps.linux_ = s->ps->linux_;
	hs_status st = HS_ENOMEM;
	if ((d->tcpu = calloc(b->cpus, sizeof(*d->tcpu))) && (d->cpu = calloc(b->cpus, sizeof(*d->cpu))))
		st = make(b, s, si, d);
	if (st == HS_OK) {
		s->det = d;
		s->st.trigger_copies = true;
		size_t n = 0;
		for (size_t i = 0; i < d->ps.n_providers; i++)
			n += d->ps.providers[i].n_events;
		hs_ftrace_say(b, HS_MSG_INFO,
			      "%s: trigger detection: %zu watched event%s recorded again in a %d KB-per-CPU ring, read "
			      "with partial pages every wake-up",
			      d->name, n, n == 1 ? "" : "s", HS_LINUX_DETECT_BUFFER_KB);
		return HS_OK;
	}
	/* The session records as before; only the detection waits for its flushes. */
	if (st != HS_ENOMEM)
		hs_ftrace_say(b, HS_MSG_WARN,
			      "%s: no trigger detection instance (%s): triggers see this session's events when its "
			      "pages are read (full pages, or at its flush every %" PRIu64 " s)",
			      logger, hs_strerror(st), s->ps->session->flush_interval_s);
	s->det = d;
	hs_ftrace_detect_close(b, s);
	hs_ftrace_detect_free(s);
	return st == HS_ENOMEM ? st : HS_OK;
}

void hs_ftrace_detect_trace_on(session *s)
{
	if (s->det && s->det->inst)
		hs_tracefs_api_get()->trace_on(s->det->inst);
}

void hs_ftrace_detect_trace_off(session *s)
{
	if (s->det && s->det->inst)
		hs_tracefs_api_get()->trace_off(s->det->inst);
}

hs_status hs_ftrace_detect_drain(hs_backend *b, size_t si)
{
	hs_ftrace_detect *d = b->s[si].det;
	if (!d || !d->inst)
		return HS_OK;
	/* At most a ring's worth per CPU: a writer faster than this reader
	 * cannot hold the poll here. */
	size_t max_pages = (size_t)HS_LINUX_DETECT_BUFFER_KB * 1024 / b->subbuf + 1;
	const hs_tracefs_api *api = hs_tracefs_api_get(); /* once, not per page */
	for (unsigned c = 0; c < b->cpus; c++) {
		if (!d->tcpu[c])
			continue;
		for (size_t k = 0; k < max_pages; k++) {
			/* A plain read of trace_pipe_raw takes the page the writer
			 * is on too (its events are copied out), unlike the splice. */
			int n = api->cpu_read(d->tcpu[c], b->page, true);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				n = 0;
			if (n < 0) {
				/* The run layer feeds the triggers from this instance only:
				 * keep trying on the next polls, say it once. */
				if (!d->said)
					hs_ftrace_say(
						b, HS_MSG_WARN,
						"%s: reading CPU %u's ring: %s; the triggers miss what it holds until a "
						"read succeeds",
						d->name, c, strerror(errno));
				d->said = true;
				return HS_EIO;
			}
			if (n == 0)
				break;
			hs_ftrace_observe(b, si, c, b->page, true);
		}
	}
	return HS_OK;
}

void hs_ftrace_detect_read_stats(hs_backend *b, session *s)
{
	hs_ftrace_detect *d = s->det;
	if (!d || !d->inst)
		return;
	hs_ftrace_read_cpu_stats(b, d->inst, d->cpu);
	uint64_t lost = 0;
	for (unsigned c = 0; c < b->cpus; c++)
		lost += d->cpu[c].dropped + d->cpu[c].overrun;
	s->st.trigger_events_lost = lost;
}

void hs_ftrace_detect_close(hs_backend *b, session *s)
{
	hs_ftrace_detect *d = s->det;
	if (!d)
		return;
	for (unsigned c = 0; d->tcpu && c < b->cpus; c++) {
		hs_tracefs_api_get()->cpu_close(d->tcpu[c]);
		d->tcpu[c] = NULL;
	}
	if (d->inst) {
		hs_tracefs_api_get()->trace_off(d->inst);
		if (hs_tracefs_api_get()->instance_destroy(d->inst) < 0)
			hs_ftrace_say(b, HS_MSG_ERROR, "could not remove tracefs instance '%s': %s", d->name,
				      strerror(errno));
		hs_tracefs_api_get()->instance_free(d->inst);
		d->inst = NULL;
	}
}

void hs_ftrace_detect_free(session *s)
{
	if (!s->det)
		return;
	/* The name's lock (taken by remove_stale or whoever started us) goes with it. */
	hs_ftrace_release(s->det->name);
	detect_free(s->det);
	s->det = NULL;
}
