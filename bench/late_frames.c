/* bench/late_frames.c: --why for bench_frame_pacing: a small tracefs instance of its own records the scheduler during a round, and each frame over 2x the period is told by what its CPU ran while the frame loop waited. */
#include "late_frames.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>

#include "hindsight/vec.h"

/* 8 MB a CPU holds a 10 s round of a quiet machine's scheduler events many times over; the round starts after the
 * snapshot rounds' load has stopped. */
#define WHY_BUFFER_KB "8192"
#define WHY_MAX_TASKS 24

struct late_why {
	struct tracefs_instance *inst;
	char *text;
};

static const char *const why_events[][2] = {
	{"sched", "sched_switch"},       {"sched", "sched_wakeup"},  {"sched", "sched_migrate_task"},
	{"irq", "irq_handler_entry"},    {"irq", "irq_handler_exit"}, {"irq", "softirq_entry"},
	{"irq", "softirq_exit"},         {"raw_syscalls", "sys_enter"}, {"raw_syscalls", "sys_exit"},
};

late_why *late_why_start(const char *name)
{
	late_why *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->inst = tracefs_instance_create(name);
	if (!w->inst || tracefs_instance_file_write(w->inst, "buffer_size_kb", WHY_BUFFER_KB) < 0 ||
	    tracefs_instance_file_write(w->inst, "trace_clock", "mono") < 0) {
		fprintf(stderr, "bench: --why: cannot set up tracefs instance %s\n", name);
		late_why_free(w);
		return NULL;
	}
	for (size_t i = 0; i < sizeof why_events / sizeof why_events[0]; i++)
		if (tracefs_event_enable(w->inst, why_events[i][0], why_events[i][1]) < 0) {
			fprintf(stderr, "bench: --why: cannot enable %s/%s\n", why_events[i][0], why_events[i][1]);
			late_why_free(w);
			return NULL;
		}
	tracefs_instance_file_write(w->inst, "trace", "");
	tracefs_trace_on(w->inst);
	return w;
}

void late_why_free(late_why *w)
{
	if (!w)
		return;
	if (w->inst) {
		tracefs_trace_off(w->inst);
		tracefs_instance_destroy(w->inst);
		tracefs_instance_free(w->inst);
	}
	free(w->text);
	free(w);
}

/* One line of the instance's text: "comm-pid [cpu] flags secs.usecs: event: fields". */
typedef struct {
	int64_t ns;
	int cpu, pid;
	const char *ev, *fields;
} line;

static bool parse(char *s, line *l)
{
	char *b = strstr(s, "] ");
	if (!b || b - s < 4)
		return false;
	char *o = b;
	while (o > s && *o != '[')
		o--;
	if (*o != '[')
		return false;
	l->cpu = atoi(o + 1);
	char *dash = o;
	while (dash > s && *dash != '-')
		dash--;
	l->pid = *dash == '-' ? atoi(dash + 1) : -1;
	char *p = b + 2;
	while (*p && *p != ' ') /* the flags column */
		p++;
	unsigned long long sec = 0, usec = 0;
	if (sscanf(p, " %llu.%llu:", &sec, &usec) != 2)
		return false;
	l->ns = (int64_t)(sec * 1000000000ull + usec * 1000ull);
	char *e = strchr(p, ':');
	if (!e)
		return false;
	e++;
	while (*e == ' ')
		e++;
	char *c = strchr(e, ':');
	if (!c)
		return false;
	*c = 0;
	l->ev = e;
	l->fields = c + 1;
	return true;
}

static long field(const char *f, const char *key)
{
	const char *p = strstr(f, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void field_str(const char *f, const char *key, char *out, size_t cap)
{
	const char *p = strstr(f, key);
	size_t n = 0;
	if (p)
		for (p += strlen(key); p[n] && p[n] != ' ' && n + 1 < cap; n++)
			out[n] = p[n];
	out[n] = 0;
}

typedef struct {
	int pid, prio;
	char comm[24];
	int64_t ns;
} task_time;

static void add_time(task_time *t, size_t *n, int pid, int prio, const char *comm, int64_t ns)
{
	if (ns <= 0)
		return;
	size_t i = 0;
	while (i < *n && t[i].pid != pid)
		i++;
	if (i == *n) {
		if (*n == WHY_MAX_TASKS)
			return;
		t[i] = (task_time){.pid = pid, .prio = prio};
		snprintf(t[i].comm, sizeof t[i].comm, "%s", comm);
		(*n)++;
	}
	t[i].ns += ns;
}

static int by_ns(const void *a, const void *b)
{
	int64_t x = ((const task_time *)a)->ns, y = ((const task_time *)b)->ns;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* What the CPU the loop waits on ran in [t0, t1): each task's time (switches), and interrupts'. */
static void explain_one(const line *lines, size_t nl, pid_t game, int64_t t0, int64_t t1, int64_t late_ns, FILE *out)
{
	int cpu = -1;
	int64_t woke = 0, ran = 0;
	/* first pass: when the loop woke (its last wake-up before t1 after its last sleep) and where it ran */
	for (size_t i = 0; i < nl; i++) {
		line l = lines[i];
		if (l.ns >= t1 || l.ns < t0 - late_ns)
			continue;
		if (!strcmp(l.ev, "sched_wakeup") && field(l.fields, " pid=") == game) {
			woke = l.ns;
			cpu = (int)field(l.fields, "target_cpu=");
		} else if (!strcmp(l.ev, "sched_switch") && field(l.fields, "next_pid=") == game) {
			ran = l.ns;
			cpu = l.cpu;
		}
	}
	if (cpu < 0) {
		fprintf(out, " (no scheduler record of the loop in it)\n");
		return;
	}
	int64_t from = woke ? woke : t0, end = ran > from ? ran : t1;
	task_time tt[WHY_MAX_TASKS];
	size_t nt = 0;
	int64_t irq_ns = 0, irq_at = 0, soft_at = 0, since = 0;
	int cur = -1, cur_prio = -1;
	char cur_comm[24] = "?";
	for (size_t i = 0; i < nl; i++) {
		line l = lines[i];
		if (l.cpu != cpu || l.ns >= end)
			continue;
		if (!strcmp(l.ev, "sched_switch")) {
			if (cur >= 0 && l.ns > from)
				add_time(tt, &nt, cur, cur_prio, cur_comm, l.ns - (since > from ? since : from));
			cur = (int)field(l.fields, "next_pid=");
			cur_prio = (int)field(l.fields, "next_prio=");
			field_str(l.fields, "next_comm=", cur_comm, sizeof cur_comm);
			since = l.ns;
		} else if (l.ns >= from && !strcmp(l.ev, "irq_handler_entry")) {
			irq_at = l.ns;
		} else if (l.ns >= from && !strcmp(l.ev, "irq_handler_exit") && irq_at) {
			irq_ns += l.ns - irq_at;
			irq_at = 0;
		} else if (l.ns >= from && !strcmp(l.ev, "softirq_entry")) {
			soft_at = l.ns;
		} else if (l.ns >= from && !strcmp(l.ev, "softirq_exit") && soft_at) {
			irq_ns += l.ns - soft_at;
			soft_at = 0;
		}
	}
	if (cur >= 0 && end > (since > from ? since : from))
		add_time(tt, &nt, cur, cur_prio, cur_comm, end - (since > from ? since : from));
	qsort(tt, nt, sizeof tt[0], by_ns);
	/* the task that held the CPU longest: its longest system call inside [from, end) (this kernel preempts a task
	 * in the kernel only where the code lets it), or none: user space */
	long top_nr = -1;
	int64_t top_in = 0, open_at = 0;
	long open_nr = -1;
	if (nt) {
		for (size_t i = 0; i < nl; i++) {
			line l = lines[i];
			if (l.pid != tt[0].pid || l.ns >= end)
				continue;
			if (!strcmp(l.ev, "sys_enter")) {
				open_at = l.ns;
				open_nr = field(l.fields, "NR ");
			} else if (!strcmp(l.ev, "sys_exit") && open_at) {
				int64_t a = open_at > from ? open_at : from, in = l.ns - a;
				if (in > top_in)
					top_in = in, top_nr = open_nr;
				open_at = 0;
			}
		}
		if (open_at && end - (open_at > from ? open_at : from) > top_in)
			top_in = end - (open_at > from ? open_at : from), top_nr = open_nr;
	}
	fprintf(out, ": woke %s%.3f ms into it (CPU %d), ran %s%.3f ms; CPU %d from the wake-up:",
		woke ? "" : "(not seen) ", (double)(from - t0) / 1e6, cpu, ran > from ? "" : "(not seen) ",
		(double)(end - t0) / 1e6, cpu);
	for (size_t i = 0; i < nt && i < 6; i++)
		fprintf(out, " %s (pid %d, prio %d) %.3f ms;", tt[i].comm, tt[i].pid, tt[i].prio, (double)tt[i].ns / 1e6);
	fprintf(out, " interrupts %.3f ms", (double)irq_ns / 1e6);
	if (nt && top_nr >= 0)
		fprintf(out, "; %s's longest system call in it: NR %ld, %.3f ms\n", tt[0].comm, top_nr, (double)top_in / 1e6);
	else
		fprintf(out, "%s\n", nt ? "; no system call of the first in it (user space)" : "");
}

void late_why_explain(late_why *w, pid_t game, const int64_t *start, uint64_t n, int64_t first_ns, int64_t late_ns,
		      FILE *out)
{
	if (!w || !w->inst)
		return;
	tracefs_trace_off(w->inst);
	free(w->text);
	w->text = tracefs_instance_file_read(w->inst, "trace", NULL);
	if (!w->text) {
		fprintf(out, "    --why: cannot read the instance's trace\n");
		return;
	}
	/* the text parsed once, each line's fields cut in place, for every late frame */
	line *lines = NULL;
	size_t nl = 0, cap = 0;
	for (char *s = w->text, *next; s && *s; s = next) {
		next = strchr(s, '\n');
		if (next)
			*next++ = 0;
		line l;
		if (s[0] == '#' || !parse(s, &l))
			continue;
		line *v = hs_array_grow(lines, sizeof *v, nl, &cap, 4096);
		if (!v) {
			fprintf(out, "    --why: out of memory reading the instance's trace\n");
			free(lines);
			return;
		}
		lines = v;
		lines[nl++] = l;
	}
	for (uint64_t k = 1; k < n; k++) {
		if (start[k] - start[k - 1] <= late_ns)
			continue;
		fprintf(out, "    why: frame at %.3f s, %.3f ms", (double)(start[k - 1] - first_ns) / 1e9,
			(double)(start[k] - start[k - 1]) / 1e6);
		explain_one(lines, nl, game, start[k - 1], start[k], late_ns, out);
	}
	free(lines);
}
