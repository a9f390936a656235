/* trigger/deadline.c: deadline triggers: a process whose frames or heartbeats stop for deadline_ms is hung, judged from the clock while it lasts. */
#include <stdlib.h>
#include <string.h>

#include "hindsight/rundoc.h"
#include "trigger/trigger_int.h"

hs_status hs_dl_new(hs_trig *t)
{
	const hs_trigger *tr = t->pt->trigger;
	hs_dl_state *d = t->dl = calloc(1, sizeof(*d));
	if (!d || hs_trig_rings_init(&t->rings, tr, tr->active_frames, 2, HS_TRIGGER_MAX_ACTIVE_FRAMES) != HS_OK)
		return HS_ENOMEM;
	d->deadline_ns = tr->deadline_ms > 0 ? (uint64_t)(tr->deadline_ms * (double)HS_NS_PER_MS) : 1;
	d->active_ns = (uint64_t)(tr->active_s * (double)HS_NS_PER_S);
	d->heartbeat = tr->source && strcmp(tr->source, "heartbeat") == 0;
	return HS_OK;
}

static hs_dl_pid *find(hs_dl_state *d, int pid)
{
	for (size_t i = 0; i < HS_TRIGGER_FRAME_PIDS; i++)
		if (d->pids[i].proc.pid == pid && pid)
			return &d->pids[i];
	return NULL;
}

static void forget(hs_dl_pid *p)
{
	*p = (hs_dl_pid){0};
}

/* p's ring of frame times (NULL before its first frame). */
static const uint64_t *starts_of(const hs_trig *t, const hs_dl_pid *p)
{
	return t->rings.rings[p - t->dl->pids];
}

/* The median of the intervals between the kept frame times, ms (0: fewer than two). */
static double median_ms(hs_trig *t, const hs_dl_pid *p)
{
	const uint64_t *starts = starts_of(t, p);
	double *scratch = t->rings.scratch;
	size_t cap = t->rings.cap, m = 0;
	for (size_t k = 1; k < p->n; k++) {
		/* Oldest first: the ring's entries from next onwards once it is full. */
		size_t a = (p->next + cap - p->n + k - 1) % cap, b = (a + 1) % cap;
		if (starts[b] > starts[a])
			scratch[m++] = (double)(starts[b] - starts[a]) / (double)HS_NS_PER_MS;
	}
	return hs_trig_median(scratch, m);
}

/* Made active_frames frames in the active_s seconds before its last one:
 * the ring is full and its oldest entry is within active_s of the newest. */
static bool active(const hs_trig *t, const hs_dl_pid *p)
{
	if (p->n < t->rings.cap)
		return false;
	uint64_t oldest = starts_of(t, p)[p->next]; /* full ring: the next slot holds the oldest */
	return p->last_ns >= oldest && p->last_ns - oldest <= t->dl->active_ns;
}

typedef struct {
	const hs_dl_pid *p;
	const char *ended_by; /* NULL: the freeze began; "frame" / "exit": it ended */
	uint64_t end_ns;
	double median_ms;
	const char *probe;
} dl_hit;

static void dl_evidence(const hs_trig *t, const void *ctx, hs_json *j)
{
	const dl_hit *h = ctx;
	const hs_trigger *tr = t->pt->trigger;
	hs_json_kstr(j, HS_RUNDOC_HIT_PHASE, h->ended_by ? "ended" : "frozen");
	hs_json_kint(j, "pid", h->p->proc.pid);
	hs_json_kstr(j, "source", tr->source);
	if (tr->slice)
		hs_json_kstr(j, "slice", tr->slice);
	if (h->p->system[0])
		hs_json_kstr(j, "via", h->p->system);
	hs_json_kuint(j, HS_RUNDOC_HIT_FREEZE_START, h->p->last_ns);
	hs_json_kdouble(j, HS_RUNDOC_HIT_DEADLINE_MS, tr->deadline_ms, 3);
	if (h->ended_by) {
		hs_json_kuint(j, HS_RUNDOC_HIT_FREEZE_END, h->end_ns);
		hs_json_kstr(j, "ended_by", h->ended_by);
		hs_json_kdouble(j, HS_RUNDOC_HIT_HANG_MS, (double)(h->end_ns - h->p->last_ns) / (double)HS_NS_PER_MS, 3);
	} else {
		hs_json_kstr(j, "probe", h->probe);
	}
	hs_json_kuint(j, "frames", h->p->frames);
	hs_json_kuint(j, "active_frames", tr->active_frames);
	hs_json_kdouble(j, "active_s", tr->active_s, 3);
	hs_json_kdouble(j, HS_RUNDOC_HIT_MEDIAN_FRAME_MS, h->median_ms, 3);
}

/* pid's freeze ended (a frame, or its exit) at ts: re-arms, and with
 * resume_snapshot a second snapshot saying how long the hang lasted. */
static void ended(hs_trigger_engine *te, hs_trig *t, hs_dl_pid *p, uint64_t ts, const char *by)
{
	if (p->hung && t->pt->trigger->resume_snapshot) {
		dl_hit h = {.p = p, .ended_by = by, .end_ns = ts, .median_ms = median_ms(t, p)};
		hs_trig_hit(te, t, &(hs_hit){.ts = ts, .force = true, .extra = dl_evidence, .ctx = &h});
	}
	p->hung = p->done = p->held = false;
}

static const char *probe_name(hs_trigger_probe r)
{
	switch (r) {
	case HS_PROBE_RUNNING: return "running";
	case HS_PROBE_GONE: return "gone";
	case HS_PROBE_DEBUGGED: return "debugged";
	case HS_PROBE_UNKNOWN: break;
	}
	return "unknown";
}

/* pid's deadline passed at due (seen at now): a hang, unless it is not watched
 * (not active), gone, or held by a debugger the rules excuse. */
static void judge(hs_trigger_engine *te, hs_trig *t, hs_dl_pid *p, uint64_t due, uint64_t now)
{
	if (!active(t, p)) {
		p->done = true; /* it was not drawing steadily: no hang to judge */
		return;
	}
	hs_trigger_probe pr = te->probe ? te->probe(te->probe_ctx, p->proc.pid) : HS_PROBE_UNKNOWN;
	if (pr == HS_PROBE_GONE) {
		t->st.excused++;
		forget(p);
		return;
	}
	if (p->held && pr != HS_PROBE_DEBUGGED) {
		/* The debugger let go since the last look, at a moment no one saw:
		 * a whole deadline from now to draw again before it is a hang. */
		p->held = false;
		p->from_ns = now > due ? now : due;
		return;
	}
	if (pr == HS_PROBE_DEBUGGED && t->pt->trigger->ignore_debugger) {
		/* Held by a debugger: the deadline counts again from now, so a
		 * process the debugger lets go of has a whole deadline to draw
		 * (a hang then is its own, and still caught). */
		if (!p->held)
			t->st.excused++;
		p->held = true;
		p->from_ns = now > due ? now : due;
		return;
	}
	p->done = true;
	p->hung_at_ns = due;
	dl_hit h = {.p = p, .median_ms = median_ms(t, p), .probe = probe_name(pr)};
	hs_hit_outcome o = hs_trig_hit(te, t, &(hs_hit){.ts = due, .now = now, .extra = dl_evidence, .ctx = &h});
	p->hung = o == HS_HIT_PENDING || o == HS_HIT_JOINED;
}

/* When pid's deadline is judged next (UINT64_MAX: not now). */
static uint64_t due_of(const hs_dl_state *d, const hs_dl_pid *p)
{
	if (!p->proc.pid || !p->last_ns || p->done)
		return UINT64_MAX;
	return hs_trig_add_sat(p->from_ns, d->deadline_ns);
}

void hs_dl_advance(hs_trigger_engine *te, hs_trig *t, uint64_t at, uint64_t now)
{
	hs_dl_state *d = t->dl;
	for (size_t i = 0; i < HS_TRIGGER_FRAME_PIDS; i++) {
		hs_dl_pid *p = &d->pids[i];
		uint64_t due = due_of(d, p);
		if (due <= at)
			judge(te, t, p, due, now);
	}
}

uint64_t hs_dl_next(const hs_trig *t)
{
	uint64_t next = UINT64_MAX;
	for (size_t i = 0; i < HS_TRIGGER_FRAME_PIDS; i++) {
		uint64_t due = due_of(t->dl, &t->dl->pids[i]);
		if (due < next)
			next = due;
	}
	return next;
}

void hs_dl_cancel(hs_trig *t, uint64_t ts)
{
	for (size_t i = 0; i < HS_TRIGGER_FRAME_PIDS; i++) {
		hs_dl_pid *p = &t->dl->pids[i];
		if (p->proc.pid && p->last_ns && p->last_ns <= ts && !p->done) {
			p->done = true; /* a loading screen: this stop is expected */
		}
	}
}

/* A frame or heartbeat of pid at ts. */
static void frame(hs_trigger_engine *te, hs_trig *t, int pid, const char *sys, uint64_t ts)
{
	hs_dl_state *d = t->dl;
	hs_dl_pid *p = hs_trig_slot(d->pids, HS_TRIGGER_FRAME_PIDS, sizeof *p, pid);
	if (t->rings.present && !hs_trig_via(p->system, sizeof p->system, sys))
		return;
	p->proc.seen = ++te->seq;
	uint64_t *starts = hs_trig_ring(&t->rings, (size_t)(p - d->pids), sizeof(*starts));
	if (!starts)
		return;
	if (p->last_ns && ts < p->last_ns)
		return; /* out of order */
	if (p->done || p->held)
		ended(te, t, p, ts, "frame");
	hs_trig_clear(t, ts); /* a frame: the condition is clear (another process's hang is a new incident) */
	starts[hs_trig_ring_push(&t->rings, &p->n, &p->next)] = ts;
	p->frames++;
	p->last_ns = p->from_ns = ts ? ts : 1;
}

void hs_dl_feed(hs_trigger_engine *te, hs_trig *t, const hs_key_event *ev, hs_trigger_role role, char *buf, size_t cap)
{
	hs_dl_state *d = t->dl;
	uint64_t ts = ev->ts_ns;
	/* Time has reached ts: a deadline that passed before this event was a
	 * hang then (a replay at full speed judges it here, at the same time). */
	hs_dl_advance(te, t, ts, 0);
	if (role == HS_TRIGGER_ROLE_EXIT) {
		hs_dl_pid *p = find(d, ev->pid);
		if (p) {
			if (p->done && p->hung)
				ended(te, t, p, ts, "exit");
			forget(p); /* it stopped drawing because it exited: no hang */
		}
		return;
	}
	if (role == HS_TRIGGER_ROLE_SUSPEND) {
		/* Every process stops while the machine sleeps: deadlines restart. */
		for (size_t i = 0; i < HS_TRIGGER_FRAME_PIDS; i++)
			if (d->pids[i].proc.pid && d->pids[i].from_ns < ts)
				d->pids[i].from_ns = ts;
		return;
	}
	int pid = ev->pid;
	if (!t->rings.present && !d->heartbeat) {
		const char *name;
		if (!hs_trig_slice_begin(t, ev, buf, cap, &pid, &name))
			return;
	} else if (d->heartbeat && !hs_trig_cond_match(t, ev)) {
		return; /* its where: conditions */
	}
	if (pid <= 0) {
		t->st.unreadable++;
		return;
	}
	frame(te, t, pid, ev->system ? ev->system : "", ts);
}
