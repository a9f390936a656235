/* report/cause/r_wait.c: Windows waits by their wait reason: a wait whose reason (CSwitch's OldThreadWaitReason, kept in the switch-out record) a reason of the vocabulary lists in windows_wait_reasons is that reason, its culprit the thread that readied it, or what the wait itself names. */
#include <stdio.h>
#include <string.h>

#include "hindsight/wait_reason.h"
#include "wake.h"

/*
 * The vocabulary says which reason a wait reason is (rules/causes.yaml: a sleep is DelayExecution, a page read
 * PageIn, a job's CPU rate limit WrCpuRateControl...); the records say who ended it. A wait that another thread
 * readied names that thread, with what it did meanwhile (the chain): the one that released the lock, resumed the
 * thread, answered the message. A wait that an interrupt or a DPC ended, or that had not ended, names what the
 * wait is for: the thread itself for its own delay, the disk for a page read, the job's limit for a rate-control
 * wait. Wait reasons no reason lists (UserRequest, Executive, WrQueue in the shipped vocabulary) are left to the
 * classifiers after this one, which go by the waker alone. On a Linux trace no switch carries a wait reason and
 * this claims nothing.
 */

/* What a wait is for, where a phrase says it better than the reason's bare name; thing: who to name when no
 * thread readied it (NULL: the thread itself, a wait it chose; "": the interrupt or DPC that did, or nobody yet). */
static const struct {
	int reason;
	const char *what, *thing;
} kinds[] = {
	{HS_WAIT_DELAY_EXECUTION, "its own sleep (a DelayExecution wait: Sleep, SleepEx)", NULL},
	{HS_WAIT_WR_DELAY_EXECUTION, "a kernel delay (WrDelayExecution)", NULL},
	{HS_WAIT_PAGE_IN, "pages of a mapped file or the page file (PageIn)", "the disk"},
	{HS_WAIT_WR_PAGE_IN, "pages of a mapped file or the page file (WrPageIn)", "the disk"},
	{HS_WAIT_WR_PROCESS_IN_SWAP, "its process to be swapped back in (WrProcessInSwap)", "the disk"},
	{HS_WAIT_FREE_PAGE, "a free page (FreePage)", "memory pressure"},
	{HS_WAIT_WR_FREE_PAGE, "a free page (WrFreePage)", "memory pressure"},
	{HS_WAIT_POOL_ALLOCATION, "a pool allocation (PoolAllocation)", "memory pressure"},
	{HS_WAIT_WR_POOL_ALLOCATION, "a pool allocation (WrPoolAllocation)", "memory pressure"},
	{HS_WAIT_WR_VIRTUAL_MEMORY, "virtual memory (WrVirtualMemory)", "memory pressure"},
	{HS_WAIT_WR_PAGE_OUT, "pages to be written out (WrPageOut)", "memory pressure"},
	{HS_WAIT_SUSPENDED, "a suspension (SuspendThread: a Suspended wait)", "a suspension the trace does not attribute"},
	{HS_WAIT_WR_SUSPENDED, "a suspension (WrSuspended)", "a suspension the trace does not attribute"},
	{HS_WAIT_WR_CPU_RATE_CONTROL, "its job object's CPU rate limit (WrCpuRateControl)", "its job object's CPU rate limit"},
	{HS_WAIT_WR_PUSH_LOCK, "a push lock (WrPushLock)", ""},
	{HS_WAIT_WR_RESOURCE, "an executive resource (WrResource)", ""},
	{HS_WAIT_WR_MUTEX, "a mutex (WrMutex)", ""},
	{HS_WAIT_WR_FAST_MUTEX, "a fast mutex (WrFastMutex)", ""},
	{HS_WAIT_WR_GUARDED_MUTEX, "a guarded mutex (WrGuardedMutex)", ""},
	{HS_WAIT_WR_KEYED_EVENT, "a keyed event (WrKeyedEvent: a critical section or SRW lock)", ""},
	{HS_WAIT_WR_ALERT_BY_THREAD_ID, "an SRW lock, condition variable or WaitOnAddress (WrAlertByThreadId)", ""},
	{HS_WAIT_WR_LPC_RECEIVE, "an ALPC message (WrLpcReceive)", ""},
	{HS_WAIT_WR_LPC_REPLY, "an ALPC reply (WrLpcReply)", ""},
};

/* The Windows wait reason of the switch-out that began stretch s, or -1 (none recorded, or a Linux trace). */
static int wait_reason_of(const ca_ctx *c, const ca_seg *s)
{
	if (s->begin_rec == SIZE_MAX || s->begin_rec >= c->m->n)
		return -1;
	const cm_rec *r = &c->m->recs[s->begin_rec];
	if (r->kind != CM_SWITCH || r->a != c->tid || r->x < 0)
		return -1;
	int64_t v = r->x >> 32;
	return v >= 1 && v <= 128 ? (int)(v - 1) : -1; /* reason + 1; the reason is a sint8 */
}

/* The vocabulary's reason that lists wait reason w, or NULL (rulecheck lets one reason list it at most). */
static const hs_cause_def *reason_for(const hs_cause_vocab *v, int w)
{
	for (size_t i = 0; i < v->n_reasons; i++)
		for (size_t k = 0; k < v->reasons[i].n_windows_wait_reasons; k++)
			if (v->reasons[i].windows_wait_reasons[k] == w)
				return &v->reasons[i];
	return NULL;
}

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *unused)
{
	(void)unused;
	int w = wait_reason_of(c, s);
	const hs_cause_def *def = w >= 0 ? reason_for(c->vocab, w) : NULL;
	if (!def)
		return;
	const char *what = NULL, *thing = "";
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !what; i++)
		if (kinds[i].reason == w) {
			what = kinds[i].what;
			thing = kinds[i].thing;
		}
	char wbuf[96];
	const char *name = hs_wait_reason_name(w);
	if (!what) {
		if (name)
			snprintf(wbuf, sizeof wbuf, "a %s wait", name);
		else
			snprintf(wbuf, sizeof wbuf, "a wait of reason %d (newer than this build knows)", w);
		what = wbuf;
	}
	char ev[240], t[32];
	ca_fmt_ns(s->t1 - s->t0, t, sizeof t);
	const cm_rec *wk = ca_wake_of(c, s);
	ca_culprit k;
	if (wk && wk->ctx == CM_CTX_TASK && wk->pid > 0 && wk->pid != c->tid) {
		/* another thread ended it: it released, resumed or answered */
		ca_culprit_task(c, wk->pid, wk->ts, &k);
		snprintf(ev, sizeof ev, "the thread waited %s for %s until %s (pid %d, tid %d) readied it on CPU %d", t,
			 what, k.name, (int)k.tgid, (int)wk->pid, wk->cpu);
		ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
		char chain[400];
		ca_chain(c, wk->pid, s->t0, wk->ts, chain, sizeof chain);
		ca_set_chain(c, def->id, &k, chain);
		return;
	}
	if (!thing)
		ca_culprit_task(c, c->tid, s->t0, &k); /* a wait it chose itself */
	else if (thing[0])
		ca_culprit_thing(&k, thing);
	else
		ca_culprit_thing(&k, wk ? "an interrupt or DPC" : "nothing yet: the wait had not ended");
	if (wk)
		snprintf(ev, sizeof ev, "the thread waited %s for %s until %s on CPU %d readied it", t, what,
			 wk->ctx == CM_CTX_SOFTIRQ ? "a DPC" : "an interrupt", wk->cpu);
	else if (s->end_rec == SIZE_MAX)
		snprintf(ev, sizeof ev, "the thread waited %s for %s, still waiting when the window ended", t, what);
	else
		snprintf(ev, sizeof ev, "the thread waited %s for %s", t, what);
	ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
}

/* No id of its own: it claims for the reasons that list the wait's reason (attribute.c calls it with NULL). */
const ca_classifier ca_r_wait = {NULL, 1u << CM_ST_SLEEP | 1u << CM_ST_DISK | 1u << CM_ST_STOPPED, classify};
