/* report/cause/r_ipc.c: reason "ipc-wait": the thread waited until another process (or the network, or a device's interrupt) woke it; the waker is the culprit, and what it did meanwhile is the chain. */
#include <stdio.h>
#include <string.h>

#include "wake.h"
#include "hindsight/event_decode.h"

/* The interrupt or softirq running on cpu at ts (the context a wake-up was logged in). */
static void irq_at(const ca_ctx *c, int cpu, uint64_t ts, bool soft, char *buf, size_t cap)
{
	const ca_irq *v;
	size_t n;
	ca_cpu_irqs(c, cpu, &v, &n);
	char sb[24];
	for (size_t i = 0; i < n; i++)
		if (v[i].soft == soft && v[i].t0 <= ts && v[i].t1 >= ts) {
			if (soft)
				snprintf(buf, cap, "%s softirq", hs_linux_softirq_name(v[i].num, sb, sizeof sb));
			else
				snprintf(buf, cap, "interrupt %s", cm_str(c->m, v[i].name));
			return;
		}
	snprintf(buf, cap, "%s", soft ? "a softirq" : "an interrupt");
}

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const cm_model *m = c->m;
	const cm_rec *w = ca_wake_of(c, s);
	char ev[240], t[32];
	ca_fmt_ns(s->t1 - s->t0, t, sizeof t);
	if (!w) {
		if (s->end_rec != SIZE_MAX)
			return; /* it ended without a recorded wake-up: insufficient data */
		snprintf(ev, sizeof ev, "the thread was blocked for %s and nothing woke it before the window ended", t);
		ca_claim(c, s->t0, s->t1, def->id, NULL, "an event that had not come when the window ended", ev);
		return;
	}
	if (w->ctx != CM_CTX_TASK) {
		char who[96];
		irq_at(c, w->cpu, w->ts, w->ctx == CM_CTX_SOFTIRQ, who, sizeof who);
		ca_culprit k;
		ca_culprit_thing(&k, who);
		snprintf(ev, sizeof ev, "the thread waited %s until %s woke it on CPU %d", t, who, w->cpu);
		ca_claim(c, s->t0, s->t1, def->id, &k, who, ev);
		return;
	}
	if (w->pid <= 0)
		return;
	ca_culprit k;
	ca_culprit_task(c, w->pid, w->ts, &k);
	char what[96];
	snprintf(what, sizeof what, "%s", k.process[0] ? k.process : k.name);
	snprintf(ev, sizeof ev, "the thread waited %s until %s (pid %d, tid %d) of another process woke it", t, k.name,
		 (int)k.tgid, (int)w->pid);
	ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
	char chain[400];
	ca_chain(c, w->pid, s->t0, w->ts, chain, sizeof chain);
	ca_set_chain(c, def->id, &k, chain);
	(void)m;
}

const ca_classifier ca_r_ipc = {"ipc-wait", 1u << CM_ST_SLEEP, classify};
