/* event/cpu_profile_perf.c: the CPU profile from a perf.data: samples, callchains, mmaps and tasks into the model cpu_profile.c aggregates. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event/cpu_profile_int.h"
#include "hindsight/cpu_profile.h"
#include "hindsight/perfdata.h"
#include "hindsight/text.h"

/* perf_event_attr.type and the clock events' configs (format facts of perf_event.h). */
enum { PERF_TYPE_SOFTWARE_ = 1, SW_CPU_CLOCK = 0, SW_TASK_CLOCK = 1 };

/* What the kernel's mmaps are called in frames: perf's "[kernel.kallsyms]" and
 * its "_text" suffix say nothing the reader of a profile needs. */
static const char KERNEL_LABEL[] = "[kernel]";
static const char KALLSYMS[] = "[kernel.kallsyms]";

typedef struct {
	cpu *c;
	const hs_perfdata *pd;
	int attr;                /* the attr whose samples make the profile: the first sample's; -2 before it */
	uint64_t nominal_period; /* period mode: the attr's sample_period; 0 in frequency mode */
	/* Per process index: the earliest time a sample or COMM of it was seen (INT64_MAX: none). The file is
	 * in drain order, not time order: a child's samples or exec may come before its FORK. */
	VEC(int64_t) first_seen;
} walk;

static void seen_at(walk *w, uint32_t pi, const hs_perfdata_record *r)
{
	cpu *c = w->c;
	if (pi == HS_CPU_NONE)
		return;
	while (w->first_seen.n <= pi) {
		int64_t none = INT64_MAX;
		PUSH(c, w->first_seen, none);
		if (c->oom)
			return;
	}
	int64_t t = (r->has & HS_PERFDATA_S_TIME) ? (int64_t)(r->time & INT64_MAX) : INT64_MIN;
	if (t < w->first_seen.v[pi])
		w->first_seen.v[pi] = t;
}

/* The thread tid as a thread of pid from now on. */
static uint32_t thread_in(cpu *c, uint32_t tid, uint32_t pid)
{
	uint32_t ti = hs_cpu_thread_for_tid(c, tid);
	if (ti == HS_CPU_NONE)
		return HS_CPU_NONE;
	tstate *ts = &c->threads.v[ti];
	if (ts->proc == HS_CPU_NONE || c->procs.v[ts->proc].pid != pid) {
		uint32_t pi = hs_cpu_proc_for_pid(c, pid);
		ts = &c->threads.v[ti];
		ts->proc = pi;
	}
	return ti;
}

static void on_comm(walk *w, const hs_perfdata_record *r)
{
	cpu *c = w->c;
	uint32_t ti = thread_in(c, r->tid, r->pid);
	if (ti == HS_CPU_NONE)
		return;
	seen_at(w, c->threads.v[ti].proc, r);
	hs_cpu_set_str(c, &c->threads.v[ti].name, r->comm);
	/* The main thread's comm is the process's name (exec sets it, prctl may change it). */
	uint32_t pi = c->threads.v[ti].proc;
	if (r->tid == r->pid && pi != HS_CPU_NONE)
		hs_cpu_set_str(c, &c->procs.v[pi].name, r->comm);
}

static void on_fork(walk *w, const hs_perfdata_record *r)
{
	cpu *c = w->c;
	uint32_t parent = hs_cpu_map_get(&c->pid_proc, r->ppid, 0);
	char *pname = parent != HS_CPU_NONE && c->procs.v[parent].name ? hs_cpu_dupstr(c, c->procs.v[parent].name)
								       : NULL;
	if (r->pid != r->ppid) {
		/* A new process, even if the pid was used before; it has its parent's comm until it execs. But
		 * when all that was seen of the pid's process is from after the fork, that was this child. */
		uint32_t pi = hs_cpu_map_get(&c->pid_proc, r->pid, 0);
		int64_t t = (r->has & HS_PERFDATA_S_TIME) ? (int64_t)(r->time & INT64_MAX) : INT64_MAX;
		bool child = pi != HS_CPU_NONE && pi < w->first_seen.n && w->first_seen.v[pi] >= t;
		if (!child)
			pi = hs_cpu_restart_pid(c, r->pid);
		if (pi != HS_CPU_NONE && !c->procs.v[pi].name)
			hs_cpu_set_str(c, &c->procs.v[pi].name, pname);
	}
	uint32_t ti = hs_cpu_thread_for_tid(c, r->tid);
	if (ti != HS_CPU_NONE) {
		/* A new thread: its name is its process's comm until it sets one (a COMM of it seen first stays). */
		uint32_t pi = hs_cpu_proc_for_pid(c, r->pid);
		tstate *ts = &c->threads.v[ti];
		if (ts->proc != pi) {
			free(ts->name);
			ts->name = NULL;
			ts->proc = pi;
		}
		const char *name = pi != HS_CPU_NONE && c->procs.v[pi].name ? c->procs.v[pi].name : pname;
		if (!ts->name)
			hs_cpu_set_str(c, &ts->name, name);
	}
	free(pname);
}

static void on_mmap(cpu *c, const hs_perfdata_record *r)
{
	if (!r->len || r->start + (r->len - 1) < r->start)
		return; /* empty, or wraps: no address can be in it */
	bool kernel = (int32_t)r->pid == -1;
	const char *name = r->filename && *r->filename ? r->filename : "?";
	image im = {
		.pid = kernel ? 0 : r->pid,
		.base = r->start,
		.size = r->len,
		.pgoff = r->pgoff,
		.load_ts = (r->has & HS_PERFDATA_S_TIME) ? (int64_t)(r->time & INT64_MAX) : INT64_MIN,
		.unload_ts = INT64_MAX,
	};
	im.file = hs_cpu_dupstr(c,
				strncmp(name, KALLSYMS, sizeof KALLSYMS - 1) == 0 ? KERNEL_LABEL : hs_path_base(name));
	if (!im.file)
		return;
	size_t before = c->images.n;
	PUSH(c, c->images, im);
	if (c->images.n == before)
		free(im.file);
}

/* The callchain into the pool, markers dropped, kernel frames first: the sample's part and nkernel. */
static void add_chain(cpu *c, sample *s, const hs_perfdata_record *r)
{
	bool kernel = (r->misc & HS_PERFDATA_MISC_CPUMODE_MASK) == HS_PERFDATA_MISC_KERNEL;
	bool skip = false; /* guest frames: another machine's addresses */
	bool user_seen = false;
	size_t start = c->pool.n;
	s->nkernel = 0;
	for (size_t i = 0; i < r->ncallchain; i++) {
		uint64_t a = r->callchain[i];
		if (a >= HS_PERFDATA_CONTEXT_MAX) {
			kernel = a == HS_PERFDATA_CONTEXT_KERNEL || a == HS_PERFDATA_CONTEXT_HV;
			skip = a != HS_PERFDATA_CONTEXT_KERNEL && a != HS_PERFDATA_CONTEXT_HV &&
			       a != HS_PERFDATA_CONTEXT_USER;
			continue;
		}
		if (skip)
			continue;
		if (c->pool.n >= UINT32_MAX)
			break;
		PUSH(c, c->pool, a);
		if (kernel && !user_seen)
			s->nkernel++;
		else
			user_seen = true;
	}
	if (c->pool.n > start) {
		s->upart = (part){(uint32_t)start, (uint32_t)(c->pool.n - start)};
		s->ustate = PART_SET;
	} else {
		s->nkernel = (r->misc & HS_PERFDATA_MISC_CPUMODE_MASK) == HS_PERFDATA_MISC_KERNEL;
	}
}

/* The interval from the profile's attr: its frequency, or the period of a clock event. */
static void set_interval(cpu *c, const hs_perfdata_attr *a, walk *w)
{
	if (!a)
		return;
	uint64_t v = a->sample_freq_or_period;
	/* The weight of a sample is its period over the nominal one: none for a frequency (set before a first
	 * attr in period mode can leave its period here for the sampled one). */
	w->nominal_period = a->freq ? 0 : v;
	if (a->freq) {
		if (v) {
			uint64_t iv = 10000000u / v; /* 100 ns units per sample */
			c->interval = iv ? (uint32_t)iv : 1;
			c->interval_source = HS_CPU_INTERVAL_PERF_FREQ;
		}
		return;
	}
	if (a->type == PERF_TYPE_SOFTWARE_ && (a->config == SW_CPU_CLOCK || a->config == SW_TASK_CLOCK)) {
		uint64_t iv = v / 100; /* ns to 100 ns */
		c->interval = iv > UINT32_MAX ? UINT32_MAX : iv ? (uint32_t)iv : 1;
		c->interval_source = HS_CPU_INTERVAL_PERF_PERIOD;
	} else {
		c->interval = 0;
		c->interval_source = HS_CPU_INTERVAL_PERF_EVENTS;
	}
}

static void on_sample(walk *w, const hs_perfdata_record *r)
{
	cpu *c = w->c;
	if (!(r->has & HS_PERFDATA_S_IP))
		return;
	if (w->attr == -2 && r->attr >= 0) {
		/* The first sampled event's samples make the profile (perf record -a adds a dummy event first or last). */
		w->attr = r->attr;
		set_interval(c, hs_perfdata_attr_at(w->pd, (size_t)r->attr), w);
	} else if (w->attr == -2) {
		w->attr = -1; /* several attrs and no id: one layout, all samples */
	}
	if (r->attr != w->attr)
		return;
	sample s = {
		.ts = (int64_t)(r->time & INT64_MAX),
		.ip = r->ip,
		.tid = UINT32_MAX,
		.proc = HS_CPU_NONE,
		.weight = 1,
		.marked = true,
		.p64 = true,
	};
	if (r->has & HS_PERFDATA_S_TID) {
		s.tid = r->tid;
		uint32_t ti = thread_in(c, r->tid, r->pid);
		if (ti != HS_CPU_NONE)
			s.proc = c->threads.v[ti].proc;
		seen_at(w, s.proc, r);
	}
	if (w->nominal_period && (r->has & HS_PERFDATA_S_PERIOD) && r->period > w->nominal_period) {
		uint64_t k = (r->period + w->nominal_period / 2) / w->nominal_period;
		s.weight = k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
	}
	if (r->has & HS_PERFDATA_S_CALLCHAIN)
		add_chain(c, &s, r);
	else
		s.nkernel = (r->misc & HS_PERFDATA_MISC_CPUMODE_MASK) == HS_PERFDATA_MISC_KERNEL;
	PUSH(c, c->samples, s);
}

static int on_record(const hs_perfdata_record *r, void *ctx)
{
	walk *w = ctx;
	switch (r->type) {
	case HS_PERFDATA_SAMPLE:
		on_sample(w, r);
		break;
	case HS_PERFDATA_COMM:
		on_comm(w, r);
		break;
	case HS_PERFDATA_FORK:
		on_fork(w, r);
		break;
	case HS_PERFDATA_MMAP:
	case HS_PERFDATA_MMAP2:
		on_mmap(w->c, r);
		break;
	}
	return w->c->oom;
}


hs_status hs_cpu_profile_build_perf(hs_perfdata *pd, const hs_regex *process, hs_cpu_profile **out)
{
	*out = NULL;
	hs_cpu_profile *p = hs_cpu_profile_alloc();
	if (!p)
		return HS_ENOMEM;
	cpu *c = hs_cpu_profile_model(p);
	c->kernel_label = KERNEL_LABEL;
	walk w = {.c = c, .pd = pd, .attr = -2};
	set_interval(c, hs_perfdata_attr_at(pd, 0), &w); /* until a sample says which attr */
	hs_perfdata_foreach(pd, on_record, &w); /* damage is a problem of the reader's; running out of memory, c->oom */
	free(w.first_seen.v);
	/* perf's name for pid 0, which no COMM record names. */
	uint32_t idle = hs_cpu_map_get(&c->pid_proc, 0, 0);
	if (idle != HS_CPU_NONE && !c->procs.v[idle].name)
		hs_cpu_set_str(c, &c->procs.v[idle].name, "swapper");
	if (!hs_cpu_profile_finish(p, process)) {
		hs_cpu_profile_free(p);
		return HS_ENOMEM;
	}
	*out = p;
	return HS_OK;
}
