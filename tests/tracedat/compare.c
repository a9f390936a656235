/* tests/tracedat/compare.c: every record hs_tracedat reads from a file equals libtracecmd's, in the same order. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace-cmd/trace-cmd.h>

#include "hindsight/tracedat.h"

/*
 * libtracecmd 3.1.6 is the reference the reader replaced (issue 24): for each
 * file given, both walk every buffer merged by time and each record is reduced
 * to its timestamp, a hash of what a caller sees (buffer, CPU, pid, comm, event
 * id and names, payload size and bytes, record size) and its lost-event count.
 * The lists must be equal, and so must the clock, the CPU count and the
 * instance names, and each event's fields (name, offset, size, array length and
 * the flags field decoding uses: the reader gives libtraceevent a rewritten
 * format, format.c). One known difference is allowed: libtracecmd (kbuffer) tells
 * lost events only when the page's first entry is the record itself, so where
 * a page starts with a time extend it says 0 and the reader the page's count.
 * usage: compare FILE.dat...   (exit 0 when every file agrees)
 */

const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);

/* LeakSanitizer's switch (sanitizer/lsan_interface.h), weak so other builds link: what libtracecmd allocates
 * is not checked for leaks (it leaks a clock string it sscanf()s, and with the fast unwinder that stack stops in
 * libc, where lsan.supp cannot see it is libtracecmd's). */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

static void lsan(bool on)
{
	if (on && __lsan_enable)
		__lsan_enable();
	else if (!on && __lsan_disable)
		__lsan_disable();
}

typedef struct {
	uint64_t ts, hash;
	long long missed;
} rec;

typedef struct {
	rec *v;
	size_t n, cap;
	bool oom;
	struct tep_handle *lib_tep; /* hs side: libtracecmd's formats, to check each event's fields against */
	bool seen[65536];
	int field_diffs;
	const char *path;
} recs;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s ? s : "(null)", strlen(s ? s : "(null)") + 1);
}

static void push(recs *l, uint64_t ts, uint64_t hash, long long missed)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		rec *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->oom = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (rec){ts, hash, missed};
}

static uint64_t digest(const char *buffer, int cpu, int pid, const char *comm, int id, const char *system,
		       const char *name, const void *data, size_t size, size_t record_size)
{
	uint64_t h = 0xcbf29ce484222325ull;
	h = fnv_str(h, buffer);
	h = fnv(h, &cpu, sizeof cpu);
	h = fnv(h, &pid, sizeof pid);
	h = fnv_str(h, comm);
	h = fnv(h, &id, sizeof id);
	h = fnv_str(h, system);
	h = fnv_str(h, name);
	uint64_t sz = size, rsz = record_size;
	h = fnv(h, &sz, sizeof sz);
	h = fnv(h, &rsz, sizeof rsz);
	return fnv(h, data, size);
}

typedef struct {
	recs *out;
	struct tracecmd_input **handles;
	const char **names;
	int n;
} lib_ctx;

static int on_lib(struct tracecmd_input *h, struct tep_record *r, int cpu, void *vctx)
{
	lib_ctx *c = vctx;
	(void)cpu;
	const char *buffer = "?";
	for (int i = 0; i < c->n; i++)
		if (c->handles[i] == h)
			buffer = c->names[i];
	struct tep_handle *tep = tracecmd_get_tep(h);
	struct tep_event *ev = tep_find_event_by_record(tep, r);
	int pid = tep_data_pid(tep, r);
	push(c->out, r->ts,
	     digest(buffer, r->cpu, pid, tep_data_comm_from_pid(tep, pid), ev ? ev->id : tep_data_type(tep, r),
		    ev ? ev->system : "?", ev ? ev->name : "?", r->data, (size_t)r->size, (size_t)r->record_size),
	     r->missed_events);
	return 0;
}

/* The flags decoding depends on (TEP_FIELD_IS_FLAG and _SYMBOLIC come from the print format, not read here). */
#define DECODE_FLAGS                                                                                                   \
	(TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_POINTER | TEP_FIELD_IS_SIGNED | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC | \
	 TEP_FIELD_IS_LONG | TEP_FIELD_IS_RELATIVE)

static int same_fields(struct tep_format_field **a, struct tep_format_field **b)
{
	int i = 0;
	for (; a && b && a[i] && b[i]; i++)
		if (strcmp(a[i]->name, b[i]->name) || a[i]->offset != b[i]->offset || a[i]->size != b[i]->size ||
		    a[i]->arraylen != b[i]->arraylen || (a[i]->flags & DECODE_FLAGS) != (b[i]->flags & DECODE_FLAGS))
			return 0;
	return (!a || !a[i]) && (!b || !b[i]);
}

static void check_fields(recs *l, const hs_tracedat_record *r)
{
	if (r->id < 0 || r->id > 65535 || l->seen[r->id])
		return;
	l->seen[r->id] = true;
	struct tep_event *mine = (struct tep_event *)r->priv[1], *ref = tep_find_event(l->lib_tep, r->id);
	if (!mine || !ref)
		return; /* names already differ in the digest */
	struct tep_format_field **mc = tep_event_common_fields(mine), **rc = tep_event_common_fields(ref);
	struct tep_format_field **mf = tep_event_fields(mine), **rf = tep_event_fields(ref);
	if (!same_fields(mc, rc) || !same_fields(mf, rf)) {
		printf("%s: the fields of %s/%s differ from libtracecmd's\n", l->path, r->system, r->name);
		l->field_diffs++;
	}
	free(mc);
	free(rc);
	free(mf);
	free(rf);
}

static int on_hs(const hs_tracedat_record *r, void *vctx)
{
	check_fields(vctx, r);
	push(vctx, r->ts,
	     digest(r->buffer, r->cpu, r->pid, r->comm, r->id, r->system, r->name, r->data, r->size, r->record_size),
	     r->missed_events);
	return 0;
}

static int check(const char *path)
{
	int bad = 0;
	recs lib = {0};
	recs *hsp = calloc(1, sizeof(*hsp));
	if (!hsp)
		return 1;
#define hs (*hsp)
	lsan(false);
	struct tracecmd_input *top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!top) {
		lsan(true);
		printf("%s: libtracecmd cannot open it\n", path);
		free(hsp);
		return 1;
	}
	int ni = tracecmd_buffer_instances(top);
	struct tracecmd_input *handles[64] = {top};
	const char *names[64] = {""};
	int n = 1;
	for (int i = 0; i < ni && n < 64; i++) {
		handles[n] = tracecmd_buffer_instance_handle(top, i);
		names[n] = tracecmd_buffer_instance_name(top, i);
		if (handles[n])
			n++;
	}
	lib_ctx lc = {&lib, handles, names, n};
	tracecmd_iterate_events_multi(handles, n, on_lib, &lc);
	lsan(true);

	hs.lib_tep = tracecmd_get_tep(top);
	hs.path = path;
	hs_tracedat *td = NULL;
	if (hs_tracedat_open(path, &td) != HS_OK) {
		printf("%s: hs_tracedat_open failed\n", path);
		bad = 1;
		goto out;
	}
	const hs_tracedat_info *info = hs_tracedat_get_info(td);
	char clock[32] = "";
	const char *lclock = tracecmd_get_trace_clock(top);
	if (lclock)
		snprintf(clock, sizeof clock, "%s", lclock);
	if (strcmp(clock, info->clock) != 0) {
		printf("%s: clock '%s', libtracecmd '%s'\n", path, info->clock, clock);
		bad = 1;
	}
	if ((int)info->cpus != tep_get_cpus(tracecmd_get_tep(top))) {
		printf("%s: %u CPUs, libtracecmd %d\n", path, info->cpus, tep_get_cpus(tracecmd_get_tep(top)));
		bad = 1;
	}
	if (info->n_instances != (size_t)(n - 1)) {
		printf("%s: %zu instances, libtracecmd %d\n", path, info->n_instances, n - 1);
		bad = 1;
	}
	for (size_t i = 0; i < info->n_instances && i + 1 < (size_t)n; i++)
		if (strcmp(info->instances[i], names[i + 1]) != 0) {
			printf("%s: instance %zu is '%s', libtracecmd '%s'\n", path, i, info->instances[i], names[i + 1]);
			bad = 1;
		}
	hs_tracedat_foreach(td, on_hs, &hs);
	for (size_t i = 0; i < hs_tracedat_problem_count(td); i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		printf("%s: problem: %s\n", path, hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text));
		bad = 1;
	}
	if (hs.field_diffs)
		bad = 1;
	if (lib.oom || hs.oom) {
		printf("%s: out of memory\n", path);
		bad = 1;
		goto out;
	}
	if (lib.n != hs.n) {
		printf("%s: %zu records, libtracecmd %zu\n", path, hs.n, lib.n);
		bad = 1;
	}
	size_t shown = 0, missed_diff = 0;
	for (size_t i = 0; i < lib.n && i < hs.n && shown < 5; i++) {
		const rec *a = &hs.v[i], *b = &lib.v[i];
		if (a->ts != b->ts || a->hash != b->hash) {
			printf("%s: record %zu differs: ts %" PRIu64 " vs libtracecmd %" PRIu64 "%s\n", path, i, a->ts,
			       b->ts, a->hash != b->hash ? ", content differs" : "");
			bad = 1;
			shown++;
		} else if (a->missed != b->missed) {
			if (b->missed != 0) {
				printf("%s: record %zu: %lld lost before it, libtracecmd %lld\n", path, i, a->missed,
				       b->missed);
				bad = 1;
				shown++;
			} else {
				missed_diff++;
			}
		}
	}
	if (!bad) {
		size_t lost = 0;
		for (size_t i = 0; i < hs.n; i++)
			lost += hs.v[i].missed != 0;
		printf("ok %s: %zu records, %zu instances, clock '%s', %zu records after lost events (%zu where "
		       "libtracecmd says none: a page starting with a time extend)\n",
		       path, hs.n, info->n_instances, info->clock, lost, missed_diff);
	}
out:
	hs_tracedat_close(td);
	for (int i = n; i-- > 1;)
		tracecmd_close(handles[i]);
	tracecmd_close(top);
	free(lib.v);
	free(hs.v);
	free(hsp);
#undef hs
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: compare FILE.dat...\n");
		return 2;
	}
	int bad = 0;
	for (int i = 1; i < argc; i++)
		bad |= check(argv[i]);
	return bad;
}
