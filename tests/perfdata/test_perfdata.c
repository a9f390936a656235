/* test_perfdata.c: the perf.data reader and the CPU profile over it, on a file written with launch mode's writer (perf_file.c). */
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hindsight/cpu_profile.h"
#include "hindsight/perfdata.h"
#include "perf/perf_file.h"

/* One record under construction: header, body, then the sample_id trailer (TID, TIME, CPU). */
typedef struct {
	uint8_t b[512];
	size_t n;
} rec;

static void put(rec *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void put64(rec *r, uint64_t v)
{
	put(r, &v, 8);
}

static void put32x2(rec *r, uint32_t a, uint32_t b)
{
	put(r, &a, 4);
	put(r, &b, 4);
}

static void begin(rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc};
	r->n = 0;
	put(r, &h, sizeof h);
}

/* NUL-terminated and padded to 8 bytes, as the kernel writes names. */
static void put_name(rec *r, const char *s)
{
	size_t n = strlen(s) + 1, pad = (n + 7) & ~(size_t)7;
	memset(r->b + r->n, 0, pad);
	memcpy(r->b + r->n, s, n);
	r->n += pad;
}

static void trailer(rec *r, uint32_t pid, uint32_t tid, uint64_t time)
{
	put32x2(r, pid, tid);
	put64(r, time);
	put32x2(r, 1, 0);
}

static void emit(hs_perf_file *f, rec *r)
{
	((struct perf_event_header *)r->b)->size = (uint16_t)r->n;
	CHECK(hs_perf_file_write(f, (const struct perf_event_header *)r->b) == HS_OK);
}

static void comm(hs_perf_file *f, uint32_t pid, uint32_t tid, const char *name, bool exec, uint64_t t)
{
	rec r;
	begin(&r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	put32x2(&r, pid, tid);
	put_name(&r, name);
	trailer(&r, pid, tid, t);
	emit(f, &r);
}

static void fork_exit(hs_perf_file *f, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		      uint64_t t)
{
	rec r;
	begin(&r, type, 0);
	put32x2(&r, pid, ppid);
	put32x2(&r, tid, ptid);
	put64(&r, t);
	trailer(&r, pid, tid, t);
	emit(f, &r);
}

static void sample(hs_perf_file *f, uint16_t misc, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t t,
		   const uint64_t *chain, size_t n)
{
	rec r;
	begin(&r, PERF_RECORD_SAMPLE, misc);
	put64(&r, ip);
	put32x2(&r, pid, tid);
	put64(&r, t);
	put32x2(&r, 1, 0);  /* cpu */
	put64(&r, 1000000); /* period */
	put64(&r, n);
	put(&r, chain, n * 8);
	emit(f, &r);
}

static const char *write_file(char *path, size_t cap)
{
	snprintf(path, cap, "/tmp/hs-test-perfdata-%ld.data", (long)getpid());
	struct perf_event_attr attr = {0};
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = 1000;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			   PERF_SAMPLE_CALLCHAIN;
	attr.sample_id_all = 1;
	uint64_t ids[2] = {7, 8};
	hs_perf_file *f = NULL;
	CHECK(hs_perf_file_create(path, &attr, "cpu-clock", ids, 2, NULL, &f) == HS_OK);
	if (!f)
		return NULL;
	comm(f, 100, 100, "prog", true, 10);
	rec r;
	begin(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put32x2(&r, 100, 100);
	put64(&r, 0x400000);
	put64(&r, 0x10000);
	put64(&r, 0x1000);
	put32x2(&r, 8, 1); /* maj, min */
	put64(&r, 1234);   /* ino */
	put64(&r, 0);      /* ino_generation */
	put32x2(&r, 5, 2); /* prot, flags */
	put_name(&r, "/opt/app/prog");
	trailer(&r, 100, 100, 11);
	emit(f, &r);
	begin(&r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	put32x2(&r, UINT32_MAX, 0);
	put64(&r, 0xffffffff81000000ull);
	put64(&r, UINT64_MAX - 0xffffffff81000000ull);
	put64(&r, 0xffffffff81000000ull);
	put_name(&r, "[kernel.kallsyms]_text");
	trailer(&r, UINT32_MAX, UINT32_MAX, 0);
	emit(f, &r);
	fork_exit(f, PERF_RECORD_FORK, 101, 100, 101, 100, 12);
	fork_exit(f, PERF_RECORD_FORK, 100, 100, 102, 100, 13);
	comm(f, 100, 102, "worker", false, 14);
	uint64_t c1[] = {PERF_CONTEXT_USER, 0x401234, 0x400100};
	sample(f, PERF_RECORD_MISC_USER, 0x401234, 100, 100, 20, c1, 3);
	uint64_t c2[] = {PERF_CONTEXT_KERNEL,
			 0xffffffff81001000ull,
			 0xffffffff81000500ull,
			 PERF_CONTEXT_USER,
			 0x401234,
			 0x400100};
	sample(f, PERF_RECORD_MISC_KERNEL, 0xffffffff81001000ull, 100, 102, 21, c2, 6);
	uint64_t c3[] = {PERF_CONTEXT_USER, 0x500000};
	sample(f, PERF_RECORD_MISC_USER, 0x500000, 101, 101, 22, c3, 2);
	begin(&r, PERF_RECORD_LOST, 0);
	put64(&r, 7);
	put64(&r, 5);
	trailer(&r, 100, 100, 23);
	emit(f, &r);
	fork_exit(f, PERF_RECORD_EXIT, 101, 100, 101, 100, 24);
	/* Drain order, not time order: a child's sample and exec before the FORK that made it (another CPU's ring). */
	uint64_t c4[] = {PERF_CONTEXT_USER, 0x600000};
	sample(f, PERF_RECORD_MISC_USER, 0x600000, 103, 103, 40, c4, 2);
	comm(f, 103, 103, "child", true, 35);
	fork_exit(f, PERF_RECORD_FORK, 103, 100, 103, 100, 30);
	sample(f, PERF_RECORD_MISC_USER, 0x600000, 103, 103, 45, c4, 2);
	begin(&r, 200, 0); /* a type the reader does not know: skipped by its size */
	put64(&r, 42);
	emit(f, &r);
	CHECK(hs_perf_file_round(f) == HS_OK);
	uint64_t bids = 0, data = 0, bytes = 0;
	CHECK(hs_perf_file_finish(f, &bids, &data, &bytes) == HS_OK);
	CHECK(data > 0 && bytes > data);
	return path;
}

typedef struct {
	int n, ns;
	uint64_t types[32];
	hs_perfdata_record samples[3];
	uint64_t chain2[8];
	size_t nchain2;
	char mmap2_name[64];
	uint64_t mmap2_start, mmap2_len, mmap2_pgoff, mmap2_time;
	char comm1[16];
	bool comm1_exec;
} seen;

static int on_record(const hs_perfdata_record *r, void *ctx)
{
	seen *s = ctx;
	if (s->n < 32)
		s->types[s->n] = r->type;
	s->n++;
	if (r->type == HS_PERFDATA_SAMPLE && s->ns < 3) {
		if (s->ns == 1) {
			s->nchain2 = r->ncallchain < 8 ? r->ncallchain : 8;
			memcpy(s->chain2, r->callchain, s->nchain2 * 8);
		}
		s->samples[s->ns] = *r;
		s->samples[s->ns].callchain = NULL;
		s->ns++;
	}
	if (r->type == HS_PERFDATA_MMAP2) {
		snprintf(s->mmap2_name, sizeof s->mmap2_name, "%s", r->filename);
		s->mmap2_start = r->start;
		s->mmap2_len = r->len;
		s->mmap2_pgoff = r->pgoff;
		s->mmap2_time = r->time;
	}
	if (r->type == HS_PERFDATA_COMM && !s->comm1[0]) {
		snprintf(s->comm1, sizeof s->comm1, "%s", r->comm);
		s->comm1_exec = r->exec;
	}
	return 0;
}

static void test_reader(const char *path)
{
	CHECK(hs_perfdata_sniff(path));
	hs_perfdata *pd = NULL;
	CHECK(hs_perfdata_open(path, &pd) == HS_OK);
	if (!pd)
		return;
	CHECK_EQ_INT(hs_perfdata_attr_count(pd), 1);
	const hs_perfdata_attr *a = hs_perfdata_attr_at(pd, 0);
	CHECK(a->freq);
	CHECK_EQ_INT(a->sample_freq_or_period, 1000);
	CHECK(a->sample_id_all);
	CHECK_EQ_INT(a->nids, 2);
	CHECK_EQ_INT(a->ids[1], 8);
	seen s = {0};
	CHECK(hs_perfdata_foreach(pd, on_record, &s) == HS_OK);
	const hs_perfdata_stats *st = hs_perfdata_get_stats(pd);
	CHECK_EQ_INT(s.n, 17); /* every record: the unknown type and FINISHED_ROUND are delivered too */
	CHECK_EQ_INT(st->records, 17);
	CHECK_EQ_INT(st->samples, 5);
	CHECK_EQ_INT(st->mmaps, 2);
	CHECK_EQ_INT(st->comms, 3);
	CHECK_EQ_INT(st->forks, 3);
	CHECK_EQ_INT(st->exits, 1);
	CHECK_EQ_INT(st->lost_records, 1);
	CHECK_EQ_INT(st->lost, 5);
	CHECK_EQ_INT(st->others, 2);
	CHECK_EQ_INT(s.types[0], HS_PERFDATA_COMM);
	CHECK_EQ_STR(s.comm1, "prog");
	CHECK(s.comm1_exec);
	CHECK_EQ_STR(s.mmap2_name, "/opt/app/prog");
	CHECK_EQ_INT(s.mmap2_start, 0x400000);
	CHECK_EQ_INT(s.mmap2_len, 0x10000);
	CHECK_EQ_INT(s.mmap2_pgoff, 0x1000);
	CHECK_EQ_INT(s.mmap2_time, 11);
	const hs_perfdata_record *r = &s.samples[1];
	CHECK_EQ_INT(r->ip, (int64_t)0xffffffff81001000ull);
	CHECK_EQ_INT(r->pid, 100);
	CHECK_EQ_INT(r->tid, 102);
	CHECK_EQ_INT(r->time, 21);
	CHECK_EQ_INT(r->cpu, 1);
	CHECK_EQ_INT(r->period, 1000000);
	CHECK_EQ_INT(r->attr, 0);
	CHECK_EQ_INT(r->misc & HS_PERFDATA_MISC_CPUMODE_MASK, HS_PERFDATA_MISC_KERNEL);
	CHECK_EQ_INT(s.nchain2, 6);
	CHECK(s.chain2[0] == HS_PERFDATA_CONTEXT_KERNEL);
	CHECK(s.chain2[3] == HS_PERFDATA_CONTEXT_USER);
	CHECK_EQ_INT(s.chain2[4], 0x401234);
	/* The LOST record is the one problem. */
	CHECK_EQ_INT(hs_perfdata_problem_count(pd), 1);
	CHECK_EQ_INT(hs_perfdata_problem_at(pd, 0)->kind, HS_PROBLEM_LOST);
	/* The writer's build-ids: none for /opt/app/prog (no such file); the kernel's when /sys/kernel/notes has it. */
	for (size_t i = 0; i < hs_perfdata_build_id_count(pd); i++)
		CHECK_EQ_STR(hs_perfdata_build_id_at(pd, i)->filename, "[kernel.kallsyms]");
	hs_perfdata_close(pd);
}

/* The frames of stack sid as one "a;b;c" line, root first (the folded order). */
static void stack_text(const hs_cpu_profile *p, size_t sid, char *buf, size_t cap, uint32_t *proc, uint64_t *w)
{
	size_t n, o = 0;
	const uint32_t *fr = hs_cpu_profile_stack(p, sid, &n, proc, w);
	buf[0] = '\0';
	for (size_t k = n; k-- > 0;)
		o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? ";" : "", hs_cpu_profile_frame(p, fr[k]));
}

static void test_profile(const char *path)
{
	hs_perfdata *pd = NULL;
	CHECK(hs_perfdata_open(path, &pd) == HS_OK);
	if (!pd)
		return;
	hs_cpu_profile *p = NULL;
	CHECK(hs_cpu_profile_build_perf(pd, NULL, &p) == HS_OK);
	hs_perfdata_close(pd);
	if (!p)
		return;
	const hs_cpu_view *v = hs_cpu_profile_view(p);
	CHECK_EQ_INT(v->total_weight, 5);
	CHECK_EQ_INT(v->stacked_weight, 5);
	CHECK_EQ_INT(v->interval, 10000); /* 1000 Hz: 1 ms in 100 ns units */
	CHECK_EQ_INT(v->interval_source, HS_CPU_INTERVAL_PERF_FREQ);
	CHECK_EQ_INT(v->frames_total, 9);
	CHECK_EQ_INT(v->frames_resolved, 6);
	/* 103 is one process, named by its exec, though a sample and the exec came before its FORK. */
	CHECK_EQ_INT(v->norder, 3);
	const hs_cpu_process *top = &v->processes[v->order[0]];
	CHECK_EQ_INT(top->pid, 100);
	CHECK_EQ_STR(hs_cpu_process_name(top), "prog");
	CHECK_EQ_INT(top->samples, 2);
	const hs_cpu_process *late = &v->processes[v->order[1]];
	CHECK_EQ_INT(late->pid, 103);
	CHECK_EQ_STR(hs_cpu_process_name(late), "child");
	CHECK_EQ_INT(late->samples, 2);
	const hs_cpu_process *child = &v->processes[v->order[2]];
	CHECK_EQ_INT(child->pid, 101);
	CHECK_EQ_STR(hs_cpu_process_name(child), "prog"); /* forked, never exec'd: the parent's comm */
	bool worker = false;
	for (size_t i = 0; i < v->nthreads; i++)
		if (v->threads[i].tid == 102)
			worker = v->threads[i].name && strcmp(v->threads[i].name, "worker") == 0 &&
				 v->threads[i].samples == 1;
	CHECK(worker);
	CHECK_EQ_INT(v->nstacks, 4);
	const char *want[] = {
		"prog!+0x1100;prog!+0x2234",
		"prog!+0x1100;prog!+0x2234;[kernel]!+0xffffffff81000500;[kernel]!+0xffffffff81001000",
		"0x500000",
		"0x600000",
	};
	for (size_t sid = 0; sid < v->nstacks && sid < 4; sid++) {
		char buf[512];
		uint32_t proc;
		uint64_t w;
		stack_text(p, sid, buf, sizeof buf, &proc, &w);
		CHECK_EQ_STR(buf, want[sid]);
		CHECK_EQ_INT(w, sid == 3 ? 2 : 1);
	}
	hs_cpu_profile_free(p);
}

/* Files the reader must refuse with a problem, never read. */
static void test_refused(void)
{
	static const uint8_t pipe_mode[16] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 16};
	uint8_t big[104] = {'2', 'E', 'L', 'I', 'F', 'R', 'E', 'P'};
	uint8_t bad_attr[104] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 104};
	bad_attr[16] = 3; /* attr_size 3 */
	struct {
		const void *p;
		size_t n;
		const char *why;
	} cases[] = {
		{"", 0, "shorter than the perf.data header"},
		{"PERFILE2", 8, "shorter than the perf.data header"},
		{pipe_mode, sizeof pipe_mode, "shorter"}, /* 16 bytes: no room for the header either way */
		{big, sizeof big, "big-endian"},
		{bad_attr, sizeof bad_attr, "attr_size out of range"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hs_perfdata *pd = NULL;
		CHECK(hs_perfdata_open_mem(cases[i].p, cases[i].n, &pd) == HS_EINVAL);
		CHECK(pd != NULL);
		if (!pd)
			continue;
		CHECK(hs_perfdata_problem_count(pd) >= 1);
		CHECK_CONTAINS(hs_perfdata_problem_at(pd, 0)->message, cases[i].why);
		hs_perfdata_close(pd);
	}
	/* A pipe-mode header padded to the full size is named as such. */
	uint8_t pipe_long[104] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 16};
	hs_perfdata *pd = NULL;
	CHECK(hs_perfdata_open_mem(pipe_long, sizeof pipe_long, &pd) == HS_EINVAL);
	if (pd)
		CHECK_CONTAINS(hs_perfdata_problem_at(pd, 0)->message, "pipe-mode");
	hs_perfdata_close(pd);
	CHECK(hs_perfdata_open("/nonexistent/perf.data", &pd) == HS_ENOENT && pd == NULL);
}

/* A cut file (perf record killed): the data section's size says more than there is. */
static void test_cut(const char *path)
{
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	static uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	uint64_t data_off;
	memcpy(&data_off, buf + 40, 8);
	/* 200 bytes into the data: the records before the cut come through, then a problem at the cut record. */
	size_t cut = (size_t)data_off + 200;
	CHECK(cut < n);
	hs_perfdata *pd = NULL;
	CHECK(hs_perfdata_open_mem(buf, cut, &pd) == HS_OK);
	if (!pd)
		return;
	CHECK(hs_perfdata_foreach(pd, NULL, NULL) == HS_OK);
	CHECK(hs_perfdata_get_stats(pd)->records >= 2);
	CHECK(hs_perfdata_problem_count(pd) >= 2); /* the short data section, the cut record */
	bool at_record = false;
	for (size_t i = 0; i < hs_perfdata_problem_count(pd); i++) {
		const hs_problem *p = hs_perfdata_problem_at(pd, i);
		if (strstr(p->message, "cut by the end") && p->offset > data_off && p->offset < cut)
			at_record = true;
	}
	CHECK(at_record);
	hs_perfdata_close(pd);
}

/* Two attrs, as `perf record -a` writes them: a dummy event in period mode (period 1) first, then the sampled
 * event in frequency mode. Each sample says its attr by PERF_SAMPLE_IDENTIFIER. A sample of the frequency attr
 * weighs 1 whatever its period: the dummy's period must not become the nominal one (it made a 3 ms sample weigh
 * 3,000,000). Written by hand: launch mode's writer has one attr. */
static const char *write_two_attrs(char *path, size_t cap)
{
	snprintf(path, cap, "/tmp/hs-test-perfdata-2attr-%ld.data", (long)getpid());
	struct perf_event_attr a[2] = {{0}};
	for (int i = 0; i < 2; i++) {
		a[i].size = sizeof a[i];
		a[i].type = PERF_TYPE_SOFTWARE;
		a[i].sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				   PERF_SAMPLE_PERIOD;
	}
	a[0].config = PERF_COUNT_SW_DUMMY;
	a[0].sample_period = 1;
	a[1].config = PERF_COUNT_SW_CPU_CLOCK;
	a[1].freq = 1;
	a[1].sample_freq = 1000;
	const uint64_t attr_size = sizeof(struct perf_event_attr) + 16;
	const uint64_t attrs_off = 104, ids_off = attrs_off + 2 * attr_size, data_off = ids_off + 16;
	/* Samples: three of the sampled event (periods 3 ms, 1 ms, 2 ms), one of the dummy's between them. */
	static const struct {
		uint64_t id, ip, period;
	} smp[] = {{2, 0x401000, 3000000}, {1, 0x402000, 1}, {2, 0x401000, 1000000}, {2, 0x403000, 2000000}};
	rec data[4];
	uint64_t data_size = 0;
	for (size_t i = 0; i < 4; i++) {
		begin(&data[i], PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		put64(&data[i], smp[i].id);
		put64(&data[i], smp[i].ip);
		put32x2(&data[i], 100, 100);
		put64(&data[i], 1000 + i);
		put64(&data[i], smp[i].period);
		((struct perf_event_header *)data[i].b)->size = (uint16_t)data[i].n;
		data_size += data[i].n;
	}
	uint64_t h[13] = {0};
	memcpy(&h[0], "PERFILE2", 8);
	h[1] = 104;
	h[2] = attr_size;
	h[3] = attrs_off;
	h[4] = 2 * attr_size;
	h[5] = data_off;
	h[6] = data_size;
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return NULL;
	bool ok = fwrite(h, 8, 13, f) == 13;
	for (int i = 0; i < 2; i++) {
		uint64_t ids[2] = {ids_off + 8 * (uint64_t)i, 8};
		ok = ok && fwrite(&a[i], sizeof a[i], 1, f) == 1 && fwrite(ids, 8, 2, f) == 2;
	}
	uint64_t id_values[2] = {1, 2};
	ok = ok && fwrite(id_values, 8, 2, f) == 2;
	for (size_t i = 0; i < 4; i++)
		ok = ok && fwrite(data[i].b, 1, data[i].n, f) == data[i].n;
	ok = fclose(f) == 0 && ok;
	CHECK(ok);
	return ok ? path : NULL;
}

static void test_two_attrs(const char *path)
{
	hs_perfdata *pd = NULL;
	CHECK(hs_perfdata_open(path, &pd) == HS_OK);
	if (!pd)
		return;
	CHECK_EQ_INT(hs_perfdata_attr_count(pd), 2);
	hs_cpu_profile *p = NULL;
	CHECK(hs_cpu_profile_build_perf(pd, NULL, &p) == HS_OK);
	CHECK_EQ_INT(hs_problems_count(hs_perfdata_problems(pd)), 0);
	hs_perfdata_close(pd);
	if (!p)
		return;
	const hs_cpu_view *v = hs_cpu_profile_view(p);
	CHECK_EQ_INT(v->total_weight, 3); /* the sampled event's three, one each; the dummy's left out */
	CHECK_EQ_INT(v->interval, 10000);  /* 1000 Hz, the sampled attr's */
	CHECK_EQ_INT(v->interval_source, HS_CPU_INTERVAL_PERF_FREQ);
	hs_cpu_profile_free(p);
}

int main(void)
{
	char path[128];
	if (write_file(path, sizeof path)) {
		test_reader(path);
		test_profile(path);
		test_cut(path);
		unlink(path);
	}
	if (write_two_attrs(path, sizeof path)) {
		test_two_attrs(path);
		unlink(path);
	}
	test_refused();
	return hs_test_done("perfdata");
}
