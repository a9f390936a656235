/* trigger/trigger_int.h: the trigger engine's private state, shared by trigger.c (set-up, dispatch), behave.c (behaviour, per-process tables), cond.c (conditions, marker text, evidence) and the kinds (frame.c, deadline.c, counter.c). */
#ifndef HS_TRIGGER_INT_H
#define HS_TRIGGER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/hmap.h"
#include "hindsight/json.h"
#include "hindsight/limits.h"
#include "hindsight/regex.h"
#include "hindsight/trigger.h"

#define HS_NS_PER_MS 1000000ull
#define HS_NS_PER_S 1000000000ull

/* frame_time and deadline (behave.c, in hs_trig): what their per-process tables share. Slot i's ring of cap values
 * (frame times, frame starts) is rings[i], allocated on first use and kept when the slot goes to another process. */
typedef struct {
	size_t cap;
	bool present;    /* source present: frames are Present events (pid from the event), not atrace slices */
	double *scratch; /* [cap] the median's values */
	void *rings[HS_TRIGGER_FRAME_PIDS];
} hs_trig_rings;

/* The start of every per-process slot (frame_time, deadline, counter), for hs_trig_slot. */
typedef struct {
	int pid;
	uint64_t seen; /* the engine's event sequence when last seen (least recent is evicted); 0: a free slot */
} hs_trig_proc;

/* One process's frame history for one frame_time trigger. */
typedef struct {
	hs_trig_proc proc;
	uint64_t last_start_ns; /* the previous matching slice start; 0: none yet */
	uint64_t frames;       /* frames measured (below the ceiling) */
	size_t n, next;        /* its ring's (frame times, ms) filled entries, next write position */
	/* source present: the provider whose Present events measure this
	 * process's frames (the first one seen; "" before), so that a process
	 * seen by two providers (DXGI and D3D9 or DxgKrnl) is not measured twice. */
	char system[64];
} hs_frame_pid;

/* What a detected hitch says, for the evidence. */
typedef struct {
	int pid;
	const char *slice; /* borrowed from the event buffer for the call; NULL for present */
	const char *present; /* source present: "provider/event" of the frame's Present, borrowed; else NULL */
	double frame_ms, median_ms;
	uint64_t frames;
} hs_frame_hit;

typedef struct {
	/* their rings (frame times, ms) are the trigger's, whose cap is the median window: median_frames, at most
	 * HS_TRIGGER_MAX_MEDIAN_FRAMES */
	hs_frame_pid pids[HS_TRIGGER_FRAME_PIDS];
	size_t warm; /* frames a process needs before its frames can be hitches */
} hs_frame_state;

/* deadline: one process's frames or heartbeats (deadline.c). */
typedef struct {
	hs_trig_proc proc;
	size_t n, next;        /* its ring's (the newest frame times) */
	uint64_t frames;       /* frames seen */
	uint64_t last_ns;      /* the newest frame; 0: none */
	uint64_t from_ns;      /* the deadline counts from here: the newest frame or suspend event */
	bool held;             /* a debugger held it when its deadline passed (the deadline restarted then) */
	bool done;             /* this freeze was judged (a hit, or not a hang): wait for the next frame */
	bool hung;             /* this freeze made a hit: its end is a resume snapshot */
	uint64_t hung_at_ns;   /* when the deadline passed */
	char system[64];       /* present: the provider measuring it (as frame.c) */
} hs_dl_pid;

typedef struct {
	hs_dl_pid pids[HS_TRIGGER_FRAME_PIDS]; /* their rings: the trigger's, cap active_frames */
	uint64_t deadline_ns, active_ns;
	bool heartbeat;
} hs_dl_state;

/* counter: one series (the machine, a session, or one process; counter.c). */
typedef struct {
	hs_trig_proc proc; /* per-process: the process; else pid 0 */
	char process[64];
	uint64_t since[HS_RULES_MAX_THRESHOLDS]; /* when the value went beyond each threshold and stayed; 0: it is not */
	size_t step;         /* steps already fired in this incident */
	uint64_t last_ts;    /* PSI: the last signal (an incident ends clear_ms without one) */
	bool fired;          /* only_if_worse: some snapshot was taken for the series */
	double fired_value;  /* the value then */
} hs_ctr_series;

typedef struct {
	hs_ctr_series series[HS_TRIGGER_COUNTER_SERIES];
	size_t n_series;     /* 1 unless per process */
	bool per_process;
	bool psi;            /* no samples within the threshold ever come: clear by time, as events */
} hs_ctr_state;

/* What a hit is, for the state machine and the evidence. */
typedef struct hs_trig hs_trig;
typedef struct {
	const hs_key_event *ev; /* the event that made it, or NULL (manual, deadline, counter) */
	uint64_t ts, now;       /* its time in the sessions' clock; when it was seen (0: ask the clock) */
	/* An escalation step or a hang's end: a new snapshot past the cool-down
	 * and the re-arm wait (warm-up, a pending snapshot, the cap still hold). */
	bool force;
	const char *reason;     /* manual */
	void (*extra)(const hs_trig *t, const void *ctx, hs_json *j); /* the kind's evidence */
	const void *ctx;
} hs_hit;

typedef enum {
	HS_HIT_WARMUP,
	HS_HIT_DISARMED, /* arm_while: no such process runs */
	HS_HIT_JOINED,   /* a pending snapshot or one in cool-down */
	HS_HIT_UNARMED,  /* waiting for the condition to clear */
	HS_HIT_SAMPLED_OUT, /* chance said no */
	HS_HIT_PENDING,  /* a new snapshot */
} hs_hit_outcome;

/* One trigger of the plan (or the built-in manual one). */
struct hs_trig {
	const hs_plan_trigger *pt; /* NULL for the built-in manual trigger */
	const char *name;
	hs_trigger_kind kind;
	hs_regex *re;              /* regex: pattern; frame_time: slice */
	hs_frame_state *frame;     /* frame_time only */
	hs_dl_state *dl;           /* deadline only */
	hs_ctr_state *ctr;         /* counter only */
	hs_trig_rings rings;       /* frame_time and deadline */
	hs_regex *cancel_re;       /* cancel_marker */
	bool running;              /* arm_while: a matching process runs (true without arm_while) */
	bool clear_by_samples;     /* re-arms on a reading within the condition (frame, sample), not on silence */
	double weight;             /* 1 / chance */
	/* behaviour, ns (0 for the built-in one) */
	uint64_t warmup_end_ns, clear_ns, post_delay_ns, cooldown_ns;
	size_t rate_cap;           /* 0: no cap */
	uint64_t *fire_times;      /* [rate_cap] ring of hand-out times */
	size_t n_fire_times, fire_next;
	/* hysteresis: after a hit the trigger waits for its condition to clear */
	bool need_clear;
	uint64_t last_hit_ns;      /* the newest hit (any outcome but warm-up) */
	bool fired_once;           /* a snapshot was decided (cooldown_end_ns is set) */
	uint64_t cooldown_end_ns;
	/* The pending snapshot (not due yet), and the snapshots decided at their
	 * due time and waiting for next (a caller that calls next late, such as
	 * a replay at full speed, gets the same decisions). */
	bool pend_active;
	hs_trigger_fire pend;
	hs_trigger_fire ready[HS_TRIGGER_MAX_READY];
	size_t n_ready, ready_head;
	hs_trigger_stats st;
};

/* Triggers interested in one event name (the map's value indexes these). */
typedef struct {
	size_t trig;
	const char *system;
	hs_trigger_role role;
} hs_trig_ref;

typedef struct {
	hs_trig_ref *refs;
	size_t n;
} hs_trig_refs;

struct hs_trigger_engine {
	const hs_plan *plan;
	uint64_t start_ns;
	hs_trig *trigs; /* [n] */
	size_t n;
	bool has_manual; /* some trigger of the plan is manual */
	bool wants_events;
	hs_trig builtin; /* the manual trigger used when the plan has none */
	hs_hmap by_name; /* event name -> index in refs */
	hs_trig_refs *refs;
	size_t n_refs;
	uint64_t seq;    /* events fed that reached a frame_time trigger (the pid table's clock) */
	uint64_t (*clock)(void *ctx); /* hs_trigger_engine_set_clock: read only when a hit makes a snapshot pending */
	void *clock_ctx;
	hs_trigger_probe_fn probe;    /* hs_trigger_engine_set_probe: a process's state when its deadline passes */
	void *probe_ctx;
	uint64_t lag_ns;              /* hs_trigger_engine_set_lag: events arrive this late at most */
	uint64_t rng;                 /* chance: splitmix64 state (hs_trigger_engine_set_seed) */
};

/* Times add up to at most UINT64_MAX ("never"), never wrap. */
static inline uint64_t hs_trig_add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* behave.c: a per-process table's slot for pid (frame_time, deadline, counter; n slots of size bytes, each starting
 * with an hs_trig_proc): the one that is pid's, else the first free one, else the least recently seen one; a slot
 * that was not pid's is emptied (zeroed, with pid). */
void *hs_trig_slot(void *slots, size_t n, size_t size, int pid);

/* behave.c: frame_time's and deadline's rings: cap is want within [lo, hi]; HS_ENOMEM (hs_trig_kind_free frees them). */
hs_status hs_trig_rings_init(hs_trig_rings *r, const hs_trigger *tr, uint64_t want, uint64_t lo, uint64_t hi);
/* What a kind's hs_*_new made, made or not: its state (frame, dl, ctr) and the rings. */
void hs_trig_kind_free(hs_trig *t);
/* Slot i's ring of cap values of `size` bytes, allocated on first use (NULL: out of memory). */
void *hs_trig_ring(hs_trig_rings *r, size_t i, size_t size);
/* The position to write the ring's next value at (n and next advanced). */
size_t hs_trig_ring_push(const hs_trig_rings *r, size_t *n, size_t *next);
/* The median of v[0..n) (sorted in place; 0 when n is 0). */
double hs_trig_median(double *v, size_t n);
/* present: a process seen by two providers (DXGI and D3D9 or DxgKrnl) is measured through the first one only.
 * system is the slot's provider ("" before the first); false when sys is another one. */
bool hs_trig_via(char *system, size_t cap, const char *sys);

/* behave.c: the behaviour state machine, for trigger.c and the kinds' files. */
hs_hit_outcome hs_trig_hit(hs_trigger_engine *te, hs_trig *t, const hs_hit *h);
/* A reading within the condition at ts (a frame, a sample): re-arms after clear_ms. */
void hs_trig_clear(hs_trig *t, uint64_t ts);
/* The pending snapshot is due: ready, joined to the newest ready one, or dropped by the rate cap. */
void hs_trig_decide(hs_trig *t);

/* cond.c: where conditions and the regex, true when the event is a hit.
 * Writes what it read into j (inside the evidence object) when j is not NULL. */
bool hs_trig_cond_match(hs_trig *t, const hs_key_event *ev);
/* re matches s (a match past the regex's limits is counted, and no match). */
bool hs_trig_regex(hs_trig *t, const hs_regex *re, const char *s);
/* The text written to trace_marker, into buf (false, counted unreadable, when the event has none). */
bool hs_trig_marker(hs_trig *t, const hs_key_event *ev, char *buf, size_t cap);
/* A frame's start in atrace's marker text, "B|<pid>|<name>", whose name matches the trigger's slice pattern
 * (any without one): pid and name (pointing into buf) are set. */
bool hs_trig_slice_begin(hs_trig *t, const hs_key_event *ev, char *buf, size_t cap, int *pid, const char **name);
void hs_trig_cond_evidence(hs_trig *t, const hs_key_event *ev, hs_json *j);
/* The evidence's common opening: trigger, kind, the event, the behaviour in force. */
void hs_trig_evidence_begin(const hs_trigger_engine *te, const hs_trig *t, const hs_key_event *ev, hs_json *j);

/* frame.c */
/* The kinds' state (hs_trig_kind_free frees it). */
hs_status hs_frame_new(hs_trig *t);
/* Feeds one marker event: returns 1 for a hitch (hit filled; its slice
 * points into buf), 0 for a frame that is not one (the condition is clear),
 * -1 when the event measured no frame. buf: [cap] scratch for the field. */
int hs_frame_feed(hs_trigger_engine *te, hs_trig *t, const hs_key_event *ev, char *buf, size_t cap,
		  hs_frame_hit *hit);
void hs_frame_evidence(const hs_trig *t, const hs_frame_hit *hit, hs_json *j);

/* deadline.c */
hs_status hs_dl_new(hs_trig *t);
/* An event routed to the trigger with its role. */
void hs_dl_feed(hs_trigger_engine *te, hs_trig *t, const hs_key_event *ev, hs_trigger_role role, char *buf, size_t cap);
/* Time has reached `at` (the clock less the delivery lag): freezes past their deadline are judged. */
void hs_dl_advance(hs_trigger_engine *te, hs_trig *t, uint64_t at, uint64_t now);
/* When hs_dl_advance must run next (UINT64_MAX: no process can expire). */
uint64_t hs_dl_next(const hs_trig *t);
/* A cancel event at ts: freezes in progress then are not hangs. */
void hs_dl_cancel(hs_trig *t, uint64_t ts);

/* counter.c */
hs_status hs_ctr_new(hs_trig *t);
void hs_ctr_sample(hs_trigger_engine *te, hs_trig *t, const hs_counter_sample *s, uint64_t now);

#endif
