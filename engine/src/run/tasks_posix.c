/* run/tasks_posix.c: a snapshot's tasks.json on Linux: every task's process, name, scheduling policy and priority, and the CPU and memory cgroups of every process with their limits and throttling counters, read from /proc and the cgroup files at capture time (what a trace does not say: FIFO from RR, a cgroup's CPU quota). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/json.h"
#include "hindsight/limits.h"
#include "hindsight/strbuf.h"
#include "hindsight/text.h"
#include "run/os.h"
#include "run/tasks.h"

/* Where each cgroup hierarchy is mounted (from /proc/self/mountinfo): v1 hierarchies by controller, v2 once. */
typedef struct {
	char cpu[256], memory[256], v2[256];
} mounts;

static void read_mounts(mounts *m)
{
	memset(m, 0, sizeof *m);
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		/* id parent major:minor root mountpoint options... - fstype source superoptions */
		char *sep = strstr(line, " - ");
		if (!sep)
			continue;
		char mp[256] = "", fstype[32] = "", super[512] = "";
		if (sscanf(line, "%*s %*s %*s %*s %255s", mp) != 1 || sscanf(sep + 3, "%31s %*s %511s", fstype, super) < 1)
			continue;
		/* the v1 hierarchies' mount type is the v2 one's without its version digit */
		static const char v2type[] = "cgroup2";
		if (!strcmp(fstype, v2type)) {
			if (!m->v2[0])
				snprintf(m->v2, sizeof m->v2, "%s", mp);
			continue;
		}
		if (strncmp(fstype, v2type, sizeof v2type - 2) != 0 || fstype[sizeof v2type - 2] != '\0')
			continue;
		/* super options name the controllers: rw,cpu,cpuacct */
		char *save = NULL;
		for (char *o = strtok_r(super, ",\n", &save); o; o = strtok_r(NULL, ",\n", &save)) {
			if (!strcmp(o, "cpu") && !m->cpu[0])
				snprintf(m->cpu, sizeof m->cpu, "%s", mp);
			if (!strcmp(o, "memory") && !m->memory[0])
				snprintf(m->memory, sizeof m->memory, "%s", mp);
		}
	}
	fclose(f);
}

/* The first line of a small file, trimmed; false when it cannot be read. */
static bool read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* A cgroup file's "key value" lines as JSON numbers under key (cpu.stat, memory.events). */
static void kv_file(hs_json *j, const char *key, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	hs_json_key(j, key);
	hs_json_obj_begin(j);
	char k[64];
	unsigned long long v;
	while (fscanf(f, "%63s %llu", k, &v) == 2)
		hs_json_kuint(j, k, v);
	hs_json_obj_end(j);
	fclose(f);
}

static void num_file(hs_json *j, const char *key, const char *path)
{
	char b[64];
	if (!read_line(path, b, sizeof b))
		return;
	char *end = NULL;
	long long v = strtoll(b, &end, 10);
	if (end && end != b && !*end)
		hs_json_kint(j, key, v);
	else
		hs_json_kstr(j, key, b); /* "max", "max 100000" */
}

/* The files a cgroup's limits and counters are read from, cpu's then
 * memory's (v1 or v2 names, whichever exist; a v2 cgroup has both), and the
 * JSON key each goes under: a number (or the file's text) or, kv, a
 * "key value" object. */
static const struct {
	const char *ctrl, *file, *key;
	bool kv;
} cgroup_files[] = {
	{"cpu", "cpu.cfs_quota_us", "cfs_quota_us", false},
	{"cpu", "cpu.cfs_period_us", "cfs_period_us", false},
	{"cpu", "cpu.max", "cpu_max", false},
	{"cpu", "cpu.stat", "cpu_stat", true},
	{"memory", "memory.limit_in_bytes", "limit_in_bytes", false},
	{"memory", "memory.usage_in_bytes", "usage_in_bytes", false},
	{"memory", "memory.failcnt", "failcnt", false},
	{"memory", "memory.max", "memory_max", false},
	{"memory", "memory.high", "memory_high", false},
	{"memory", "memory.events", "memory_events", true},
};

/* One cgroup's limits and counters. */
static void cgroup_obj(hs_json *j, const mounts *mt, const char *ctrl, const char *rel)
{
	char dir[600], p[700];
	const char *base = !strcmp(ctrl, "cpu") ? mt->cpu : !strcmp(ctrl, "memory") ? mt->memory : mt->v2;
	if (!base[0])
		return;
	snprintf(dir, sizeof dir, "%s%s", base, rel);
	hs_json_obj_begin(j);
	hs_json_kstr(j, "controller", ctrl);
	hs_json_kstr(j, "path", rel);
	for (size_t i = 0; i < sizeof cgroup_files / sizeof cgroup_files[0]; i++) {
		if (strcmp(ctrl, cgroup_files[i].ctrl) && strcmp(ctrl, "v2"))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, cgroup_files[i].file);
		(cgroup_files[i].kv ? kv_file : num_file)(j, cgroup_files[i].key, p);
	}
	hs_json_obj_end(j);
}

/* The cgroup paths of a process for cpu, memory and v2 ("" when it has none there). */
static void proc_cgroups(const char *pid, char cpu[256], char mem[256], char v2[256])
{
	cpu[0] = mem[0] = v2[0] = '\0';
	char path[300], line[512];
	snprintf(path, sizeof path, "/proc/%s/cgroup", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!a || !b)
			continue;
		*b = '\0';
		const char *ctrls = a + 1, *rel = b + 1;
		if (!*ctrls) {
			snprintf(v2, 256, "%s", rel);
			continue;
		}
		char cs[128];
		snprintf(cs, sizeof cs, "%s", ctrls);
		char *save = NULL;
		for (char *c = strtok_r(cs, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
			if (!strcmp(c, "cpu"))
				snprintf(cpu, 256, "%s", rel);
			if (!strcmp(c, "memory"))
				snprintf(mem, 256, "%s", rel);
		}
	}
	fclose(f);
}

/* /proc/PID/task/TID/stat: policy (field 41), rt_priority (40), nice (19), and the name between the parentheses. */
static bool task_stat(const char *pid, const char *tid, char name[32], int *policy, int *rtprio, int *nice)
{
	char path[600], buf[1024];
	snprintf(path, sizeof path, "/proc/%s/task/%s/stat", pid, tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r || r < l)
		return false;
	size_t len = (size_t)(r - l - 1);
	if (len > 31)
		len = 31;
	memcpy(name, l + 1, len);
	name[len] = '\0';
	/* after ") ": field 3 (state) onwards */
	long long v[64];
	int k = 0;
	char *save = NULL;
	for (char *t = strtok_r(r + 2, " ", &save); t && k < 64; t = strtok_r(NULL, " ", &save))
		v[k++] = strtoll(t, NULL, 10);
	/* v[0] is field 3: field N is v[N - 3] */
	if (k < 41 - 2)
		return false;
	*nice = (int)v[19 - 3];
	*rtprio = (int)v[40 - 3];
	*policy = (int)v[41 - 3];
	return true;
}

static const char *policy_name(int p)
{
	/* include/uapi/linux/sched.h */
	switch (p) {
	case 0: return "SCHED_OTHER";
	case 1: return "SCHED_FIFO";
	case 2: return "SCHED_RR";
	case 3: return "SCHED_BATCH";
	case 5: return "SCHED_IDLE";
	case 6: return "SCHED_DEADLINE";
	case 7: return "SCHED_EXT";
	default: return "?";
	}
}

/* A cgroup and every one above it, each once: a parent's quota or limit holds its children too, and a report can
 * only say "no quota" when it saw every level. */
static void add_cgroup(char (*cgs)[2][256], size_t *ncg, size_t max, const char *ctrl, const char *rel)
{
	char p[256];
	snprintf(p, sizeof p, "%s", rel);
	for (;;) {
		bool seen = false;
		for (size_t i = 0; i < *ncg && !seen; i++)
			seen = !strcmp(cgs[i][0], ctrl) && !strcmp(cgs[i][1], p);
		if (seen || *ncg >= max)
			return; /* its parents are there already */
		snprintf(cgs[*ncg][0], 256, "%s", ctrl);
		snprintf(cgs[*ncg][1], 256, "%s", p);
		(*ncg)++;
		if (!hs_path_up(p))
			return;
	}
}

hs_status hs_tasks_write(const char *path, uint64_t trace_ns)
{
	mounts mt;
	read_mounts(&mt);
	hs_strbuf sb = {0};
	hs_json j;
	hs_json_init(&j, &sb);
	hs_json_obj_begin(&j);
	hs_json_kint(&j, "schema_version", 1);
	hs_json_kuint(&j, "trace_ns", trace_ns);
	hs_json_key(&j, "tasks");
	hs_json_arr_begin(&j);
	/* the cgroups seen, each written once after the tasks */
	enum { MAXCG = 512 };
	char(*cgs)[2][256] = calloc(MAXCG, sizeof *cgs);
	size_t ncg = 0, ntask = 0;
	DIR *d = opendir("/proc");
	if (!d || !cgs) {
		if (d)
			closedir(d);
		free(cgs);
		hs_sb_free(&sb);
		return d ? HS_ENOMEM : HS_EIO;
	}
	struct dirent *de;
	while ((de = readdir(d)) && ntask < HS_TASKS_MAX) {
		if (!hs_all_digits(de->d_name))
			continue;
		char cpu[256], mem[256], v2[256];
		proc_cgroups(de->d_name, cpu, mem, v2);
		const char *cg[3][2] = {{"cpu", cpu}, {"memory", mem}, {"v2", v2}};
		for (int c = 0; c < 3; c++)
			if (cg[c][1][0])
				add_cgroup(cgs, &ncg, MAXCG, cg[c][0], cg[c][1]);
		char tdir[300];
		snprintf(tdir, sizeof tdir, "/proc/%s/task", de->d_name);
		DIR *td = opendir(tdir);
		if (!td)
			continue; /* it exited meanwhile */
		struct dirent *te;
		while ((te = readdir(td)) && ntask < HS_TASKS_MAX) {
			if (!hs_all_digits(te->d_name))
				continue;
			char name[32];
			int policy = 0, rtprio = 0, nice = 0;
			if (!task_stat(de->d_name, te->d_name, name, &policy, &rtprio, &nice))
				continue;
			char clean[64];
			hs_json_obj_begin(&j);
			hs_json_kint(&j, "tid", strtol(te->d_name, NULL, 10));
			hs_json_kint(&j, "tgid", strtol(de->d_name, NULL, 10));
			/* a task names itself: no control characters in a JSON document */
			size_t o = 0;
			for (size_t i = 0; name[i] && o + 1 < sizeof clean; i++)
				clean[o++] = (unsigned char)name[i] < 0x20 ? ' ' : name[i];
			clean[o] = '\0';
			hs_json_kstr(&j, "name", clean);
			hs_json_kstr(&j, "policy", policy_name(policy));
			hs_json_kint(&j, "rt_priority", rtprio);
			hs_json_kint(&j, "nice", nice);
			if (cpu[0] || v2[0])
				hs_json_kstr(&j, "cpu_cgroup", cpu[0] ? cpu : v2);
			if (mem[0] || v2[0])
				hs_json_kstr(&j, "memory_cgroup", mem[0] ? mem : v2);
			hs_json_obj_end(&j);
			ntask++;
		}
		closedir(td);
	}
	closedir(d);
	hs_json_arr_end(&j);
	hs_json_key(&j, "cgroups");
	hs_json_arr_begin(&j);
	for (size_t i = 0; i < ncg; i++)
		cgroup_obj(&j, &mt, cgs[i][0], cgs[i][1]);
	hs_json_arr_end(&j);
	hs_json_kbool(&j, "complete", ntask < HS_TASKS_MAX);
	hs_json_obj_end(&j);
	hs_sb_putc(&sb, '\n');
	free(cgs);
	hs_status st = hs_os_write_file_synced(path, &sb);
	hs_sb_free(&sb);
	return st;
}
