/* run/counters.c: schedules the readings counter triggers and arm_while need, and hands them to the trigger engine (the OS reads are counters_posix.c / counters_win.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hindsight/compat.h"
#include "hindsight/limits.h"
#include "hindsight/regex.h"
#include "run/counters.h"

#define MB (1024.0 * 1024.0)

/* One process a per-process counter reads. */
typedef struct {
	int pid;
	char name[64];
	bool seen;   /* in the last scan */
	bool primed; /* process CPU: a previous reading exists */
	uint64_t prev_cpu_ns, prev_ms;
} proc_rd;

/* One counter trigger's reader. */
typedef struct {
	size_t trigger;
	const hs_trigger *tr;
	const hs_counter_info *ci;
	bool silent; /* a replay: this counter reads the live machine, which a replay is not */
	intptr_t psi[HS_RULES_MAX_THRESHOLDS];
	size_t n_psi;
	uint64_t next_ms; /* sampled: the next reading */
	bool primed;      /* cpu_percent, key_drop_rate: a previous reading exists */
	uint64_t prev_busy, prev_total, prev_ms, prev_lost, seen_updates;
	hs_regex *process_re;
	proc_rd procs[HS_TRIGGER_COUNTER_SERIES];
	size_t n_procs;
} ctr_rd;

/* One arm_while pattern. */
typedef struct {
	size_t trigger;
	hs_regex *re;
	bool running;
} arm_rd;

struct hs_counters {
	const hs_plan *plan;
	char *run_dir;
	bool live;
	const hs_msg *msg;
	ctr_rd *ctr;
	size_t n_ctr;
	arm_rd *arm;
	size_t n_arm;
	bool scans; /* some trigger needs process names */
	uint64_t next_scan_ms;
	uint64_t scans_done;
	hs_trigger_engine *te;
};

void hs_counters_free(hs_counters *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_ctr; i++) {
		for (size_t k = 0; k < c->ctr[i].n_psi; k++)
			hs_counters_os_psi_close(c->ctr[i].psi[k]);
		hs_regex_free(c->ctr[i].process_re);
	}
	for (size_t i = 0; i < c->n_arm; i++)
		hs_regex_free(c->arm[i].re);
	free(c->ctr);
	free(c->arm);
	free(c->run_dir);
	free(c);
}

static hs_status compile(const char *pattern, hs_regex **re)
{
	char err[256];
	size_t off;
	return hs_regex_compile_opts(pattern, &(hs_regex_opts){.jit = true}, re, err, sizeof err, &off);
}

/* PSI: one kernel trigger per threshold, "<some|full> <share x window> <window>" in µs. */
static hs_status open_psi(hs_counters *c, ctr_rd *r)
{
	const hs_trigger *tr = r->tr;
	uint64_t window_us = (uint64_t)(tr->for_s * 1e6 + 0.5);
	for (size_t k = 0; k < tr->n_thresholds; k++) {
		uint64_t stall_us = (uint64_t)(tr->thresholds[k] / 100.0 * (double)window_us + 0.5);
		char err[256] = "";
		hs_status st = hs_counters_os_psi_open(r->ci->psi, r->ci->psi_full, stall_us, window_us, &r->psi[k],
						       err, sizeof err);
		if (st != HS_OK) {
			hs_msg_say(
				c->msg, HS_MSG_ERROR, "counters",
				"trigger %s: cannot watch %s pressure (%s); the rules ask for a counter this machine "
				"cannot give, so nothing is recorded",
				tr->name, r->ci->psi, err);
			return HS_EUNSUPPORTED;
		}
		r->n_psi++;
		hs_msg_say(c->msg, HS_MSG_INFO, "counters",
			   "trigger %s: the kernel signals %s pressure \"%s %" PRIu64 " %" PRIu64 "\" (%g%% of %g s)",
			   tr->name, r->ci->psi, r->ci->psi_full ? "full" : "some", stall_us, window_us,
			   tr->thresholds[k], tr->for_s);
	}
	return HS_OK;
}

hs_status hs_counters_new(const hs_plan *plan, const char *run_dir, bool live, const hs_msg *msg, hs_counters **out)
{
	*out = NULL;
	hs_counters *c = calloc(1, sizeof(*c));
	if (!c || !(c->run_dir = strdup(run_dir ? run_dir : ".")))
		goto oom;
	c->plan = plan;
	c->live = live;
	c->msg = msg;
	if (plan->n_triggers && (!(c->ctr = calloc(plan->n_triggers, sizeof(*c->ctr))) ||
				 !(c->arm = calloc(plan->n_triggers, sizeof(*c->arm)))))
		goto oom;
	bool silent_said = false;
	for (size_t i = 0; i < plan->n_triggers; i++) {
		const hs_trigger *tr = plan->triggers[i].trigger;
		if (tr->arm_while) {
			arm_rd *a = &c->arm[c->n_arm++];
			a->trigger = i;
			if (compile(tr->arm_while, &a->re) != HS_OK)
				goto oom; /* the checker compiled it: only memory fails here */
			c->scans |= live;
		}
		if (tr->kind != HS_TRIGGER_COUNTER || !hs_counter_info_of(tr->counter))
			continue;
		ctr_rd *r = &c->ctr[c->n_ctr++];
		r->trigger = i;
		r->tr = tr;
		r->ci = hs_counter_info_of(tr->counter);
		/* Ring fill and losses are the backend's, replayed or live; the rest is this machine's. */
		r->silent = !live && !r->ci->per_session;
		if (r->silent) {
			if (!silent_said)
				hs_msg_say(
					c->msg, HS_MSG_WARN, "counters",
					"trigger %s: counter %s reads the live machine, which a replay is not: it stays "
					"silent (as every such counter of this run)",
					tr->name, r->ci->name);
			silent_said = true;
			continue;
		}
		if (r->ci->per_process) {
			if (compile(tr->process, &r->process_re) != HS_OK)
				goto oom;
			c->scans = true;
		}
		if (r->ci->psi) {
			hs_status st = open_psi(c, r);
			if (st != HS_OK) {
				hs_counters_free(c);
				return st;
			}
		}
	}
	if (!live && c->n_arm)
		hs_msg_say(c->msg, HS_MSG_WARN, "counters",
			   "arm_while cannot be judged in a replay (no live process list): its triggers act as armed");
	*out = c;
	return HS_OK;
oom:
	hs_counters_free(c);
	return HS_ENOMEM;
}

static hs_trigger_probe probe(void *ctx, int pid)
{
	(void)ctx;
	return hs_counters_os_probe(pid);
}

typedef struct {
	hs_counters *c;
} scan_ctx;

static bool matches(const hs_regex *re, const char *name)
{
	return hs_regex_match_limited(re, name, strlen(name)) == HS_REGEX_MATCH;
}

static void scan_one(void *ctx, int pid, const char *name)
{
	hs_counters *c = ((scan_ctx *)ctx)->c;
	for (size_t i = 0; i < c->n_arm; i++)
		if (!c->arm[i].running && matches(c->arm[i].re, name))
			c->arm[i].running = true;
	for (size_t i = 0; i < c->n_ctr; i++) {
		ctr_rd *r = &c->ctr[i];
		if (!r->process_re || !matches(r->process_re, name))
			continue;
		size_t k = 0;
		while (k < r->n_procs && r->procs[k].pid != pid)
			k++;
		if (k == r->n_procs) {
			if (r->n_procs == HS_TRIGGER_COUNTER_SERIES)
				continue; /* as many as the engine keeps series for */
			r->procs[r->n_procs++] = (proc_rd){.pid = pid};
		}
		snprintf(r->procs[k].name, sizeof r->procs[k].name, "%s", name);
		r->procs[k].seen = true;
	}
}

/* Process names: arm_while's states and the per-process counters' processes. */
static void scan(hs_counters *c, hs_trigger_engine *te, uint64_t now_ms)
{
	c->next_scan_ms = now_ms + HS_COUNTER_SCAN_MS;
	for (size_t i = 0; i < c->n_arm; i++)
		c->arm[i].running = false;
	for (size_t i = 0; i < c->n_ctr; i++)
		for (size_t k = 0; k < c->ctr[i].n_procs; k++)
			c->ctr[i].procs[k].seen = false;
	scan_ctx sc = {c};
	if (!hs_counters_os_processes(scan_one, &sc)) {
		if (!c->scans_done)
			hs_msg_say(c->msg, HS_MSG_WARN, "counters",
				   "cannot list the processes: arm_while and per-process counters see none");
		return;
	}
	c->scans_done++;
	for (size_t i = 0; i < c->n_arm; i++)
		hs_trigger_engine_set_running(te, c->arm[i].trigger, c->arm[i].running);
	for (size_t i = 0; i < c->n_ctr; i++) {
		ctr_rd *r = &c->ctr[i];
		size_t kept = 0;
		for (size_t k = 0; k < r->n_procs; k++)
			if (r->procs[k].seen)
				r->procs[kept++] = r->procs[k];
		r->n_procs = kept;
	}
}

void hs_counters_attach(hs_counters *c, hs_trigger_engine *te, uint64_t now_ms)
{
	c->te = te;
	/* Different draws on every run and machine; a test seeds its own. */
	hs_trigger_engine_set_seed(te, ((uint64_t)time(NULL) << 20) ^ ((uint64_t)hs_getpid() << 1) ^ now_ms);
	if (!c->live) {
		for (size_t i = 0; i < c->n_arm; i++)
			hs_trigger_engine_set_running(te, c->arm[i].trigger, true);
		return;
	}
	hs_trigger_engine_set_probe(te, probe, c);
	if (c->scans)
		scan(c, te, now_ms);
}

static void feed(hs_trigger_engine *te, const ctr_rd *r, uint64_t now_ns, uint64_t window_ns, double v, int pid,
		 const char *process)
{
	hs_counter_sample s = {.ts_ns = now_ns, .window_ns = window_ns, .value = v, .pid = pid, .process = process};
	hs_trigger_engine_sample(te, r->trigger, &s, now_ns);
}

static void read_psi(ctr_rd *r, hs_trigger_engine *te, uint64_t now_ns)
{
	for (size_t k = 0; k < r->n_psi; k++) {
		if (!hs_counters_os_psi_fired(r->psi[k]))
			continue;
		char line[160] = "";
		hs_counters_os_psi_line(r->ci->psi, r->ci->psi_full, line, sizeof line);
		hs_counter_sample s = {.ts_ns = now_ns,
				       .window_ns = (uint64_t)(r->tr->for_s * 1e9),
				       .value = r->tr->thresholds[k],
				       .crossing = true,
				       .detail = line[0] ? line : NULL};
		hs_trigger_engine_sample(te, r->trigger, &s, now_ns);
	}
}

static void read_sampled(hs_counters *c, ctr_rd *r, hs_trigger_engine *te, uint64_t now_ms, uint64_t now_ns)
{
	uint64_t v;
	switch (r->tr->counter) {
	case HS_COUNTER_CPU_PERCENT: {
		uint64_t busy, total;
		if (!hs_counters_os_cpu_times(&busy, &total))
			return;
		if (r->primed && total > r->prev_total && busy >= r->prev_busy)
			feed(te, r, now_ns, (now_ms - r->prev_ms) * 1000000u,
			     100.0 * (double)(busy - r->prev_busy) / (double)(total - r->prev_total), 0, NULL);
		r->prev_busy = busy;
		r->prev_total = total;
		r->prev_ms = now_ms;
		r->primed = true;
		return;
	}
	case HS_COUNTER_DISK_FREE_MB:
		if (hs_counters_os_disk_free(c->run_dir, &v))
			feed(te, r, now_ns, 0, (double)v / MB, 0, NULL);
		return;
	case HS_COUNTER_PROCESS_RSS_MB:
		for (size_t k = 0; k < r->n_procs; k++)
			if (hs_counters_os_process_rss(r->procs[k].pid, &v))
				feed(te, r, now_ns, 0, (double)v / MB, r->procs[k].pid, r->procs[k].name);
		return;
	case HS_COUNTER_PROCESS_CPU_PERCENT:
		for (size_t k = 0; k < r->n_procs; k++) {
			proc_rd *p = &r->procs[k];
			if (!hs_counters_os_process_cpu_ns(p->pid, &v))
				continue;
			if (p->primed && now_ms > p->prev_ms && v >= p->prev_cpu_ns)
				feed(te, r, now_ns, (now_ms - p->prev_ms) * 1000000u,
				     100.0 * (double)(v - p->prev_cpu_ns) / ((double)(now_ms - p->prev_ms) * 1e6),
				     p->pid, p->name);
			p->prev_cpu_ns = v;
			p->prev_ms = now_ms;
			p->primed = true;
		}
		return;
	default: return;
	}
}

/* Ring fill and losses, as the status has them (refreshed once a second). */
static void read_session(const hs_counters *c, ctr_rd *r, hs_trigger_engine *te, uint64_t now_ns,
			 const hs_run_status *st)
{
	size_t si = c->plan->triggers[r->trigger].counter_session;
	if (!st || !st->updates || st->updates == r->seen_updates || si >= st->n_sessions)
		return;
	r->seen_updates = st->updates;
	const hs_run_session_status *ss = &st->sessions[si];
	if (r->tr->counter == HS_COUNTER_RING_FILL_PERCENT) {
		if (ss->ring_fill >= 0)
			feed(te, r, now_ns, 0, ss->ring_fill * 100.0, 0, NULL);
		return;
	}
	if (r->primed && st->last_ms > r->prev_ms && ss->lost_events >= r->prev_lost)
		feed(te, r, now_ns, (st->last_ms - r->prev_ms) * 1000000u,
		     (double)(ss->lost_events - r->prev_lost) * 1000.0 / (double)(st->last_ms - r->prev_ms), 0, NULL);
	r->prev_lost = ss->lost_events;
	r->prev_ms = st->last_ms;
	r->primed = true;
}

void hs_counters_poll(hs_counters *c, hs_trigger_engine *te, uint64_t now_ms, uint64_t now_ns,
		      const hs_run_status *status)
{
	if (!c)
		return;
	if (c->scans && now_ms >= c->next_scan_ms)
		scan(c, te, now_ms);
	for (size_t i = 0; i < c->n_ctr; i++) {
		ctr_rd *r = &c->ctr[i];
		if (r->silent)
			continue;
		if (r->ci->psi) {
			read_psi(r, te, now_ns);
		} else if (r->ci->per_session) {
			read_session(c, r, te, now_ns, status);
		} else if (now_ms >= r->next_ms) {
			read_sampled(c, r, te, now_ms, now_ns);
			/* Every sample_ms; a loop that slept longer starts the count again. */
			r->next_ms = r->next_ms && now_ms - r->next_ms < r->tr->sample_ms
					     ? r->next_ms + r->tr->sample_ms
					     : now_ms + r->tr->sample_ms;
		}
	}
}

int hs_counters_wait_ms(const hs_counters *c, uint64_t now_ms)
{
	uint64_t next = UINT64_MAX;
	for (size_t i = 0; c && i < c->n_ctr; i++) {
		const ctr_rd *r = &c->ctr[i];
		if (!r->silent && !r->ci->psi && !r->ci->per_session && r->next_ms < next)
			next = r->next_ms;
	}
	if (c && c->scans && c->next_scan_ms < next)
		next = c->next_scan_ms;
	if (next == UINT64_MAX)
		return INT32_MAX;
	return next <= now_ms ? 0 : next - now_ms > INT32_MAX ? INT32_MAX : (int)(next - now_ms);
}
