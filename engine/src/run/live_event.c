/* run/live_event.c: turns a streamed key event into the live view's and the JSONL tap's copy: fields, comm, story, alert. */
#include "run/live_event.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/compat.h"
#include "hindsight/json.h"
#include "run/os.h"

/* One key event of the plan: where its story is, and the names of its fields. */
typedef struct {
	size_t session;
	const char *system, *name;
	const hs_plan_event *pe;
	char fields[HS_LIVE_MAX_FIELDS][32];
	bool is_str[HS_LIVE_MAX_FIELDS];
	size_t n_fields;
	bool named; /* the fields are the event's own (its format, through the backend), asked once */
} cat_entry;

struct hs_live_catalog {
	const hs_plan *plan;
	hs_task_name_fn task_name; /* a task no event named is looked up on this machine; NULL: never */
	cat_entry *e;
	size_t n;
	struct {
		int pid;
		char comm[24];
	} comm[HS_LIVE_COMM_CACHE];
};


/* The field names of the event from the catalog's `formats:` (Windows: the manifest template's,
 * rules/providers/windows-formats.yaml, the newest version, read at the event through TDH; Linux:
 * rules/providers/linux-formats.yaml), until the event names its own (the backend's formats: hs_key_fields.names).
 * Windows fields of types TDH gives no number or text for here (pointers, times, GUIDs, SIDs, binary) are left
 * out. Classic (kernel) events have none. */
static void catalog_fields(cat_entry *ce, const hs_provider *pr)
{
	if (ce->pe->has_classic_guid)
		return;
	for (size_t i = 0; i < pr->n_events; i++) {
		const hs_cat_event *e = &pr->events[i];
		/* Windows events are known by id, ftrace events (id -1) by name. */
		bool same = ce->pe->id >= 0 ? e->id == ce->pe->id : e->name && !strcmp(e->name, ce->name);
		if (!same || !e->has_fields)
			continue;
		/* Strings (names, paths) first: they say the most when the cap
		 * leaves numbers out. */
		for (int strings = 1; strings >= 0; strings--)
			for (size_t f = 0; f < e->n_fields && ce->n_fields < HS_LIVE_MAX_FIELDS; f++) {
				const hs_cat_field *cf = &e->fields[f];
				const char *t = cf->type ? cf->type : "";
				bool str = hs_cat_field_is_string(cf);
				bool num = strncmp(t, "win:", 4) != 0 || !strncmp(t, "win:Int", 7) ||
					   !strncmp(t, "win:UInt", 8) || !strncmp(t, "win:HexInt", 10) ||
					   !strcmp(t, "win:Boolean");
				if (str != (strings == 1) || (!str && !num) || strlen(cf->name) >= sizeof ce->fields[0])
					continue;
				strcpy(ce->fields[ce->n_fields], cf->name);
				ce->is_str[ce->n_fields] = str;
				ce->n_fields++;
			}
		return;
	}
}

hs_live_catalog *hs_live_catalog_new(const hs_plan *plan, hs_task_name_fn task_name)
{
	hs_live_catalog *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->plan = plan;
	c->task_name = task_name;
	size_t n = 0;
	for (size_t s = 0; s < plan->n_sessions; s++)
		for (size_t p = 0; p < plan->sessions[s].n_providers; p++)
			n += plan->sessions[s].providers[p].n_events;
	if (n && !(c->e = calloc(n, sizeof *c->e))) {
		free(c);
		return NULL;
	}
	for (size_t s = 0; s < plan->n_sessions; s++) {
		const hs_plan_session *ps = &plan->sessions[s];
		if (ps->session->mode != HS_MODE_FILE_CIRCULAR)
			continue; /* only these stream events to the observer */
		for (size_t p = 0; p < ps->n_providers; p++) {
			const hs_plan_provider *pp = &ps->providers[p];
			const char *system = pp->provider->system ? pp->provider->system : pp->provider->name;
			for (size_t k = 0; k < pp->n_events; k++) {
				if (!pp->events[k].name)
					continue;
				cat_entry *ce = &c->e[c->n++];
				ce->session = s;
				ce->system = system;
				ce->name = pp->events[k].name;
				ce->pe = &pp->events[k];
				catalog_fields(ce, pp->provider);
			}
		}
	}
	return c;
}

void hs_live_catalog_free(hs_live_catalog *c)
{
	if (!c)
		return;
	free(c->e);
	free(c);
}

static cat_entry *find(hs_live_catalog *c, size_t session, const char *system, const char *name)
{
	/* Tens of entries: a scan costs less than hashing two strings. */
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].session == session && !strcmp(c->e[i].name, name) && !strcmp(c->e[i].system, system))
			return &c->e[i];
	return NULL;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* The task's name: from the cache (fed by events that carry a comm), else
 * from the machine through the backend (the task is usually still there: key
 * events are seen within a wake-up of tens of ms). */
static void lookup_comm(hs_live_catalog *c, int pid, char *out, size_t cap)
{
	out[0] = 0;
	if (pid <= 0) {
		copy_str(out, cap, pid == 0 ? "<idle>" : "");
		return;
	}
	size_t slot = (size_t)pid % HS_LIVE_COMM_CACHE;
	if (c->comm[slot].pid == pid) {
		copy_str(out, cap, c->comm[slot].comm);
		return;
	}
	char name[sizeof c->comm[slot].comm];
	if (!c->task_name || !c->task_name(pid, name, sizeof name))
		return; /* a replay's pid is another time's task: not this machine's */
	c->comm[slot].pid = pid;
	copy_str(c->comm[slot].comm, sizeof c->comm[slot].comm, name);
	copy_str(out, cap, name);
}

void hs_live_event_fill(hs_live_catalog *c, const hs_key_event *ev, uint64_t now_ns, hs_live_event *out)
{
	out->ts_ns = ev->ts_ns;
	out->wall_ms = hs_os_wall_ms();
	if (now_ns && now_ns >= ev->ts_ns && (now_ns - ev->ts_ns) / 1000000u < out->wall_ms)
		out->wall_ms -= (now_ns - ev->ts_ns) / 1000000u;
	out->session = ev->session;
	out->cpu = ev->cpu;
	out->pid = ev->pid;
	copy_str(out->system, sizeof out->system, ev->system ? ev->system : "");
	copy_str(out->name, sizeof out->name, ev->name ? ev->name : "");
	out->n_fields = 0;
	out->story = out->alert = NULL;
	cat_entry *ce = ev->system && ev->name ? find(c, ev->session, ev->system, ev->name) : NULL;
	if (ce && !ce->named && ev->fields && ev->fields->names) {
		/* the event's own format, once: what this kernel (or the replayed file) records, whatever the catalog */
		ce->named = true;
		char names[HS_LIVE_MAX_FIELDS][32];
		bool is_str[HS_LIVE_MAX_FIELDS];
		size_t n = ev->fields->names(ev, names, is_str, HS_LIVE_MAX_FIELDS);
		if (n) {
			memcpy(ce->fields, names, sizeof names);
			memcpy(ce->is_str, is_str, sizeof is_str);
			ce->n_fields = n;
		}
	}
	const char *comm = NULL, *file = NULL;
	if (ce) {
		out->story = ce->pe->story;
		out->alert = ce->pe->alert;
		for (size_t i = 0; ev->fields && i < ce->n_fields; i++) {
			hs_live_field *f = &out->fields[out->n_fields];
			copy_str(f->name, sizeof f->name, ce->fields[i]);
			f->is_str = ce->is_str[i];
			bool ok = f->is_str ? ev->fields->str(ev, ce->fields[i], f->str, sizeof f->str)
					    : ev->fields->num(ev, ce->fields[i], &f->num);
			if (!ok)
				continue;
			if (f->is_str && !strcmp(f->name, "comm"))
				comm = f->str;
			if (f->is_str && (!strcmp(f->name, "filename") || !strcmp(f->name, "ImageName")))
				file = f->str; /* an exec's program; Windows: the process's image */
			out->n_fields++;
		}
	}
	if (!comm && file) {
		/* An exec names its program: the task's name from now on (cut as
		 * the kernel cuts it), without asking /proc. */
		const char *base = strrchr(file, '/'), *bs = strrchr(file, '\\');
		if (bs && (!base || bs > base))
			base = bs;
		int cut = bs ? (int)sizeof out->comm - 1 : 15; /* a Windows image name is no 16-byte comm */
		snprintf(out->comm, sizeof out->comm, "%.*s", cut, base ? base + 1 : file);
		comm = out->comm;
	}
	if (comm && ev->pid > 0) {
		/* The event's own word for its task, kept for the events that have none. */
		size_t slot = (size_t)ev->pid % HS_LIVE_COMM_CACHE;
		c->comm[slot].pid = ev->pid;
		copy_str(c->comm[slot].comm, sizeof c->comm[slot].comm, comm);
		if (comm != out->comm)
			copy_str(out->comm, sizeof out->comm, comm);
	} else {
		lookup_comm(c, ev->pid, out->comm, sizeof out->comm);
	}
}

void hs_live_event_fields_text(const hs_live_event *e, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < e->n_fields && n + 1 < cap; i++) {
		const hs_live_field *f = &e->fields[i];
		int w;
		if (f->is_str)
			w = snprintf(buf + n, cap - n, strpbrk(f->str, " \t") || !f->str[0] ? "%s%s=\"%s\"" : "%s%s=%s",
				     i ? " " : "", f->name, f->str);
		else
			w = snprintf(buf + n, cap - n, "%s%s=%" PRId64, i ? " " : "", f->name, f->num);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	if (n >= cap)
		buf[cap - 1] = 0;
}

/* A JSON string of text from the kernel: control characters escaped by
 * hs_json_escape, bytes that are not UTF-8 made '?', so every line parses. */
static void jstr(hs_strbuf *sb, const char *s)
{
	char clean[HS_JSONL_MAX_LINE_BYTES / 2];
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && n + 1 < sizeof clean; p++)
		clean[n++] = *p < 0x80 ? (char)*p : '?';
	clean[n] = 0;
	hs_json_escape(sb, clean);
}

void hs_live_event_jsonl(const hs_live_event *e, const hs_plan *plan, hs_strbuf *sb)
{
	uint64_t s = e->wall_ms / 1000u;
	char when[40];
	time_t t = (time_t)s;
	struct tm tm;
	hs_gmtime(t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	hs_sb_printf(sb, "{\"time\":\"%s.%03uZ\",\"ts_ns\":%" PRIu64 ",\"session\":", when,
		     (unsigned)(e->wall_ms % 1000u), e->ts_ns);
	jstr(sb, e->session < plan->n_sessions ? plan->sessions[e->session].session->name : "");
	hs_sb_printf(sb, ",\"cpu\":%u,\"pid\":%d,\"comm\":", e->cpu, e->pid);
	jstr(sb, e->comm);
	hs_sb_append(sb, ",\"system\":");
	jstr(sb, e->system);
	hs_sb_append(sb, ",\"event\":");
	jstr(sb, e->name);
	hs_sb_append(sb, ",\"fields\":{");
	for (size_t i = 0; i < e->n_fields; i++) {
		const hs_live_field *f = &e->fields[i];
		if (i)
			hs_sb_putc(sb, ',');
		jstr(sb, f->name);
		hs_sb_putc(sb, ':');
		if (f->is_str)
			jstr(sb, f->str);
		else
			hs_sb_printf(sb, "%" PRId64, f->num);
	}
	hs_sb_append(sb, "},\"story\":");
	if (e->story)
		jstr(sb, e->story);
	else
		hs_sb_append(sb, "null");
	hs_sb_append(sb, ",\"alert\":");
	if (e->alert)
		jstr(sb, e->alert);
	else
		hs_sb_append(sb, "null");
	hs_sb_append(sb, "}\n");
}
