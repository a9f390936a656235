/* report/cause/text.c: a cause's words: the vocabulary's templates filled with the reason's time, share, culprit, CPUs, object and chain. */
#include <stdio.h>
#include <string.h>

#include "ca.h"

void hs_cause_culprit_text(const hs_cause_culprit *c, char *out, size_t cap)
{
	if (!c->is_task) {
		snprintf(out, cap, "%s", c->what);
		return;
	}
	char pol[64] = "";
	if (!strcmp(c->policy, "real-time"))
		snprintf(pol, sizeof pol, ", real-time priority %d", (int)c->priority);
	else if (!strcmp(c->policy, "fifo") || !strcmp(c->policy, "rr"))
		snprintf(pol, sizeof pol, ", SCHED_%s priority %d", c->policy[0] == 'f' ? "FIFO" : "RR", (int)c->priority);
	else if (!strcmp(c->policy, "batch") || !strcmp(c->policy, "idle"))
		snprintf(pol, sizeof pol, ", SCHED_%s, nice %d", c->policy[0] == 'b' ? "BATCH" : "IDLE", (int)c->priority);
	else if (!strcmp(c->policy, "deadline"))
		snprintf(pol, sizeof pol, ", SCHED_DEADLINE");
	else if (!strcmp(c->policy, "normal") && c->priority)
		snprintf(pol, sizeof pol, ", nice %d", (int)c->priority);
	char proc[64] = "";
	if (c->process[0])
		snprintf(proc, sizeof proc, " of %s", c->process);
	if (c->tasks > 1)
		snprintf(out, cap, "%s%s (%u tasks%s%s)", c->name, proc, c->tasks, pol[0] ? "" : "", pol);
	else if (c->tgid >= 0 && c->tgid != c->tid)
		snprintf(out, cap, "%s%s (pid %d, tid %d%s)", c->name, proc, (int)c->tgid, (int)c->tid, pol);
	else
		snprintf(out, cap, "%s (pid %d%s)", c->name, (int)c->tid, pol);
}

void hs_cause_fill(const hs_cause_result *r, const hs_cause_reason *k, const char *tmpl, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	for (const char *p = tmpl; *p && o + 1 < cap;) {
		if (*p != '{') {
			out[o++] = *p++;
			continue;
		}
		const char *e = strchr(p, '}');
		if (!e) {
			out[o++] = *p++;
			continue;
		}
		char name[16];
		size_t n = (size_t)(e - p - 1);
		if (n >= sizeof name) {
			out[o++] = *p++;
			continue;
		}
		memcpy(name, p + 1, n);
		name[n] = '\0';
		char v[480] = "";
		if (!strcmp(name, "time"))
			ca_fmt_ns(k->ns, v, sizeof v);
		else if (!strcmp(name, "share"))
			snprintf(v, sizeof v, "%.0f %%", 100.0 * k->share);
		else if (!strcmp(name, "culprit")) {
			if (k->has_culprit)
				hs_cause_culprit_text(&k->culprit, v, sizeof v);
			else
				snprintf(v, sizeof v, "%s", "nobody the trace names");
		} else if (!strcmp(name, "cpu"))
			snprintf(v, sizeof v, "%s", k->cpus[0] ? k->cpus : "its CPU");
		else if (!strcmp(name, "what"))
			snprintf(v, sizeof v, "%s", k->what);
		else if (!strcmp(name, "chain"))
			snprintf(v, sizeof v, "%s%s", k->chain[0] ? "; meanwhile " : "", k->chain);
		else if (!strcmp(name, "thread") && r) {
			if (r->process[0])
				snprintf(v, sizeof v, "%s of %s (tid %d)", r->comm, r->process, (int)r->tid);
			else
				snprintf(v, sizeof v, "%s (tid %d)", r->comm, (int)r->tid);
		} else {
			/* not a name this build fills: kept as written, so the words show what is missing */
			snprintf(v, sizeof v, "{%s}", name);
		}
		size_t l = strlen(v);
		if (o + l >= cap)
			l = cap - o - 1;
		memcpy(out + o, v, l);
		o += l;
		p = e + 1;
	}
	out[o] = '\0';
}

void hs_cause_fmt_ns(uint64_t ns, char *buf, size_t cap)
{
	ca_fmt_ns(ns, buf, cap);
}
