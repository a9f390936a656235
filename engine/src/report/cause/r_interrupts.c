/* report/cause/r_irq.c: reason "interrupts": interrupt and softirq handling on the thread's CPU while it ran or waited for it, and the kernel's softirq threads running in its place. */
#include <stdio.h>

#include "ca.h"
#include "hindsight/event_decode.h"

static void irq_name(const ca_ctx *c, const ca_irq *q, char *buf, size_t cap)
{
	char sb[24];
	if (q->soft)
		snprintf(buf, cap, "%s softirq", hs_linux_softirq_name(q->num, sb, sizeof sb));
	else if (q->name)
		snprintf(buf, cap, "interrupt %s", cm_str(c->m, q->name));
	else
		snprintf(buf, cap, "an interrupt");
}

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const ca_irq *v;
	size_t n;
	ca_cpu_irqs(c, s->cpu, &v, &n);
	for (size_t i = 0; i < n; i++) {
		if (v[i].t1 <= s->t0)
			continue;
		if (v[i].t0 >= s->t1)
			break;
		char who[96], ev[240], t[32];
		irq_name(c, &v[i], who, sizeof who);
		ca_culprit k;
		ca_culprit_thing(&k, who);
		ca_fmt_ns(v[i].t1 - v[i].t0, t, sizeof t);
		snprintf(ev, sizeof ev, "CPU %d handled %s for %s while the thread %s", s->cpu, who, t,
			 s->st == CM_ST_RUN ? "ran on it" : "waited for it");
		ca_claim(c, v[i].t0, v[i].t1, def->id, &k, who, ev);
	}
	/* the kernel's threads that run softirqs when there are too many to run at interrupt exit (the
	 * vocabulary's `match:` names them) take the CPU for interrupt work */
	if (s->st != CM_ST_READY || !def->match)
		return;
	size_t it = 0;
	for (const ca_run *r; (r = ca_seg_run_next(c, s, &it));) {
		const char *name = cm_str(c->m, r->comm);
		if (r->tid <= 0 || !ca_match(c, def, name))
			continue;
		char who[96], ev[240], t[32];
		snprintf(who, sizeof who, "softirq work in %s", name);
		ca_culprit k;
		ca_culprit_thing(&k, who);
		ca_fmt_ns(r->t1 - r->t0, t, sizeof t);
		snprintf(ev, sizeof ev, "CPU %d ran %s (pid %d) for %s while the thread waited for it", s->cpu, name,
			 (int)r->tid, t);
		ca_claim(c, r->t0, r->t1, def->id, &k, who, ev);
	}
}

const ca_classifier ca_r_interrupts = {"interrupts", 1u << CM_ST_RUN | 1u << CM_ST_READY, classify};
