/* fuzz_tracedat.c: libFuzzer target for the trace.dat reader: open, the merged walk, fields (by name and located), a filter, problems. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hindsight/tracedat.h"
#include "../tracedat/fieldcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Field names the seeds' events have (strings, numbers, dynamic strings) and one no event has. */
static const char *const fields[] = {"pid", "prev_comm", "next_pid", "filename", "sig", "comm", "no_such_field"};

typedef struct {
	size_t n;
	hs_tracedat_filter *filter;
	fc_tally *fields; /* set for the first walk: every field by name and through a location (fieldcheck.h) */
} walk;

static int visit(const hs_tracedat_record *r, void *vctx)
{
	walk *w = vctx;
	/* Touch every byte and string the reader hands out, so ASan sees any overread. */
	volatile uint8_t sink = 0;
	const uint8_t *p = r->data;
	for (size_t i = 0; i < r->size; i++)
		sink ^= p[i];
	for (const char *s = r->comm; *s; s++)
		sink ^= (uint8_t)*s;
	sink ^= (uint8_t)r->system[0] ^ (uint8_t)r->name[0] ^ (uint8_t)r->buffer[0];
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		int64_t v;
		char buf[64];
		if (hs_tracedat_field_int(r, fields[i], &v))
			sink ^= (uint8_t)v;
		if (hs_tracedat_field_str(r, fields[i], buf, sizeof buf))
			sink ^= (uint8_t)buf[0];
		/* The same through the kept-payload accessors. */
		if (hs_tracedat_event_field_str(r->priv[0], r->id, r->data, r->size, fields[i], buf, sizeof buf))
			sink ^= (uint8_t)buf[0];
	}
	if (w->filter)
		sink ^= (uint8_t)hs_tracedat_filter_match(w->filter, r);
	/* Located fields read what the by-name accessors read, on a payload copy of exactly its size (ASan sees a
	 * read past it), whatever the damaged format or payload says. */
	if (w->fields) {
		fc_record(w->fields, r, r->size, NULL);
		if (w->fields->mismatches)
			__builtin_trap();
	}
	(void)sink;
	return ++w->n > 200000; /* a huge file of tiny records: enough */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The reader opens a path: the input goes to a memory file, named through /proc. */
	int fd = memfd_create("fuzz_tracedat", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open(path, &td);
	if (st == HS_OK) {
		const hs_tracedat_info *info = hs_tracedat_get_info(td);
		volatile size_t sink = strlen(info->clock);
		for (size_t i = 0; i < info->n_instances; i++)
			sink += strlen(info->instances[i]);
		(void)sink;
		fc_tally checked = {.label = "fuzz_tracedat"};
		walk w = {.fields = &checked};
		hs_tracedat_filter_new(td, "sched", "sched_switch", "prev_pid > 1 && next_comm ~ \"b*\"", &w.filter);
		hs_tracedat_foreach(td, visit, &w);
		/* A second walk reads the same damage again (problems are not listed twice). */
		size_t first = w.n, problems = hs_tracedat_problem_count(td);
		w.n = 0;
		w.fields = NULL;
		hs_tracedat_foreach(td, visit, &w);
		if (first <= 200000 && w.n != first)
			__builtin_trap();
		if (hs_tracedat_problem_count(td) != problems && problems < HS_TRACEDAT_MAX_PROBLEMS)
			__builtin_trap();
		hs_tracedat_filter_free(w.filter);
	} else if (td && hs_tracedat_problem_count(td) == 0) {
		/* A refused file always says why. */
		__builtin_trap();
	}
	for (size_t i = 0; td && i < hs_tracedat_problem_count(td); i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text);
	}
	hs_tracedat_close(td);
	close(fd);
	return 0;
}
