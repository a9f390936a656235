/* report/tasks.c: a snapshot's tasks.json (what the system said of its tasks and cgroups when the snapshot was taken) joined to the cause: a culprit's exact policy (FIFO or RR), the hitched thread's CPU quota for a throttling, its memory limit for a memory stall. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hindsight/arena.h"
#include "hindsight/limits.h"
#include "hindsight/text.h"
#include "hindsight/diag.h"
#include "hindsight/ynode.h"
#include "report/model.h"

static const char *str_of(const hs_ynode *m, const char *k)
{
	const hs_ynode *v = hs_ymap_get(m, k);
	return v && v->type == HS_Y_SCALAR ? v->str : NULL;
}

static bool int_of(const hs_ynode *m, const char *k, long long *out)
{
	const char *s = str_of(m, k);
	if (!s || !*s)
		return false;
	char *end = NULL;
	*out = strtoll(s, &end, 10);
	return end && !*end;
}

static const hs_ynode *task_of(const hs_ynode *tasks, long long tid)
{
	for (size_t i = 0; tasks && tasks->type == HS_Y_SEQ && i < tasks->n; i++) {
		long long t;
		if (int_of(tasks->items[i], "tid", &t) && t == tid)
			return tasks->items[i];
	}
	return NULL;
}

static const hs_ynode *cgroup_of(const hs_ynode *cgs, const char *ctrl, const char *path)
{
	for (size_t i = 0; cgs && cgs->type == HS_Y_SEQ && i < cgs->n; i++) {
		const char *c = str_of(cgs->items[i], "controller"), *p = str_of(cgs->items[i], "path");
		if (c && p && !strcmp(p, path) && (!strcmp(c, ctrl) || !strcmp(c, "v2")))
			return cgs->items[i];
	}
	return NULL;
}

/* A task culprit's policy as the system had it: "fifo", "rr", "batch", "idle", "deadline", "normal". */
static void policy(hs_cause_culprit *c, const hs_ynode *t)
{
	const char *p = str_of(t, "policy");
	long long rt = 0, nice = 0;
	int_of(t, "rt_priority", &rt);
	int_of(t, "nice", &nice);
	if (!p)
		return;
	static const struct {
		const char *sched, *name;
		bool rt;
	} map[] = {{"SCHED_FIFO", "fifo", true},       {"SCHED_RR", "rr", true},       {"SCHED_OTHER", "normal", false},
		   {"SCHED_BATCH", "batch", false},    {"SCHED_IDLE", "idle", false}, {"SCHED_DEADLINE", "deadline", false},
		   {"SCHED_EXT", "ext", false}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(p, map[i].sched)) {
			snprintf(c->policy, sizeof c->policy, "%s", map[i].name);
			c->priority = (int32_t)(map[i].rt ? rt : nice);
		}
}

/* A cgroup's CPU quota per period, in us (v1 cfs_quota_us / cfs_period_us, or v2 cpu.max); false: none. */
static bool quota_of(const hs_ynode *cg, long long *q, long long *p)
{
	*q = -1;
	*p = 0;
	int_of(cg, "cfs_quota_us", q);
	int_of(cg, "cfs_period_us", p);
	const char *max = str_of(cg, "cpu_max"); /* v2: "5000 100000" or "max 100000" */
	if (max && *q < 0 && strncmp(max, "max", 3) != 0)
		sscanf(max, "%lld %lld", q, p);
	return *q > 0 && *p > 0;
}

/* "its cgroup /hs-game has a CPU quota of 5.0 ms per 100.0 ms and was throttled 123 times" */
static void quota(char *buf, size_t cap, const char *path, const hs_ynode *cg)
{
	long long q, p, thr = -1;
	const hs_ynode *st = hs_ymap_get(cg, "cpu_stat");
	if (st)
		int_of(st, "nr_throttled", &thr);
	if (!quota_of(cg, &q, &p))
		return;
	size_t o = (size_t)snprintf(buf, cap, "its cgroup %s has a CPU quota of %.1f ms per %.1f ms", path, (double)q / 1e3,
				    (double)p / 1e3);
	if (thr >= 0 && o < cap)
		snprintf(buf + o, cap - o, ", throttled %lld times so far", thr);
}

static void memory(char *buf, size_t cap, const char *path, const hs_ynode *cg)
{
	long long lim = -1, use = -1, fail = -1;
	int_of(cg, "limit_in_bytes", &lim);
	int_of(cg, "usage_in_bytes", &use);
	int_of(cg, "failcnt", &fail);
	if (lim < 0)
		int_of(cg, "memory_max", &lim);
	if (lim <= 0 || lim >= (1ll << 60))
		return;
	size_t o = (size_t)snprintf(buf, cap, "its memory cgroup %s is limited to %.1f MB", path, (double)lim / 1048576.0);
	if (use >= 0 && o < cap)
		o += (size_t)snprintf(buf + o, cap - o, " (%.1f MB used when the snapshot was taken)", (double)use / 1048576.0);
	if (fail > 0 && o < cap)
		snprintf(buf + o, cap - o, ", hit %lld times", fail);
}

bool hs_rpt_tasks_no_cpu_quota(const hs_report *r, int32_t tid)
{
	const hs_ynode *tasks = r->tasks_root ? hs_ymap_get(r->tasks_root, "tasks") : NULL;
	const hs_ynode *cgs = r->tasks_root ? hs_ymap_get(r->tasks_root, "cgroups") : NULL;
	const hs_ynode *me = task_of(tasks, tid);
	const char *cpu = me ? str_of(me, "cpu_cgroup") : NULL;
	if (!cpu || cpu[0] != '/')
		return false;
	char p[256];
	snprintf(p, sizeof p, "%s", cpu);
	do {
		const hs_ynode *cg = cgroup_of(cgs, "cpu", p);
		long long q, per;
		if (!cg)
			return false; /* a level not seen (tasks.json before its parents were written): not known */
		if (quota_of(cg, &q, &per))
			return false;
	} while (hs_path_up(p));
	return true;
}

/* Reads DIR/tasks.json into r (kept until the report is freed); false when there is none. */
bool hs_rpt_tasks_load(hs_report *r, const char *dir)
{
	if (!dir)
		return false;
	char path[4096];
	snprintf(path, sizeof path, "%s/tasks.json", dir);
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	char *text = NULL;
	size_t len = 0, cap = 0;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0 && len < HS_REPORT_MAX_TASKS_BYTES) {
		if (len + n + 1 > cap) {
			size_t nc = (len + n + 1) * 2;
			char *t = realloc(text, nc);
			if (!t)
				break;
			text = t;
			cap = nc;
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	fclose(f);
	if (!text)
		return false;
	r->tasks_arena = calloc(1, sizeof(hs_arena));
	r->tasks_diags = hs_diags_new();
	bool syntax = false;
	const hs_ynode *root = r->tasks_arena && r->tasks_diags
				       ? hs_yaml_parse(r->tasks_arena, "tasks.json", text, len, r->tasks_diags, &syntax)
				       : NULL;
	free(text);
	if (!root || syntax || root->type != HS_Y_MAP)
		return false;
	r->tasks_root = root;
	return true;
}

size_t hs_rpt_tasks_tgids(const hs_report *r, int32_t (*out)[2], size_t cap)
{
	const hs_ynode *tasks = r->tasks_root ? hs_ymap_get(r->tasks_root, "tasks") : NULL;
	size_t n = 0;
	for (size_t i = 0; tasks && tasks->type == HS_Y_SEQ && i < tasks->n && n < cap; i++) {
		long long tid, tgid;
		if (int_of(tasks->items[i], "tid", &tid) && int_of(tasks->items[i], "tgid", &tgid)) {
			out[n][0] = (int32_t)tid;
			out[n][1] = (int32_t)tgid;
			n++;
		}
	}
	return n;
}

void hs_rpt_tasks_join(hs_report *r)
{
	hs_cause_result *w = &r->why;
	if (!r->tasks_root || !w->analysed)
		return;
	const hs_ynode *tasks = hs_ymap_get(r->tasks_root, "tasks"), *cgs = hs_ymap_get(r->tasks_root, "cgroups");
	const hs_ynode *me = task_of(tasks, w->tid);
	const char *cpu = me ? str_of(me, "cpu_cgroup") : NULL, *mem = me ? str_of(me, "memory_cgroup") : NULL;
	for (size_t i = 0; i < w->n_reasons; i++) {
		hs_cause_reason *k = &w->reasons[i];
		if (k->has_culprit && k->culprit.is_task) {
			const hs_ynode *t = task_of(tasks, k->culprit.tid);
			if (t)
				policy(&k->culprit, t);
		}
		/* the limits behind the two reasons a cgroup explains */
		char extra[200] = "";
		if (!strcmp(k->id, "cgroup-throttle") && cpu && cgroup_of(cgs, "cpu", cpu))
			quota(extra, sizeof extra, cpu, cgroup_of(cgs, "cpu", cpu));
		else if (!strcmp(k->id, "memory-stall") && mem && cgroup_of(cgs, "memory", mem))
			memory(extra, sizeof extra, mem, cgroup_of(cgs, "memory", mem));
		if (extra[0] && k->n_evidence < HS_CAUSE_MAX_EVIDENCE)
			hs_rpt_text(k->evidence[k->n_evidence++], sizeof k->evidence[0], "%s (tasks.json)", extra);
		if (extra[0] && !strcmp(k->id, "cgroup-throttle"))
			hs_rpt_text(k->what, sizeof k->what, "%s", extra);
	}
}
