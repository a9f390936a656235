/* run/counters.h: what counter triggers, arm_while and the deadline probe read from the OS (counters.c schedules, counters_posix.c / counters_win.c read), fed to the trigger engine. */
#ifndef HS_RUN_COUNTERS_H
#define HS_RUN_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "hindsight/msg.h"
#include "hindsight/plan.h"
#include "hindsight/trigger.h"
#include "run/status.h"

/*
 * The trigger engine is pure logic; this is the run layer's side of the
 * kinds that need the machine (docs/triggers.md, "Counters"):
 *  - counter triggers: Linux PSI through the kernel's trigger file (one fd a
 *    threshold, registered at start, polled without waiting at each wake-up:
 *    nothing is read until the kernel signals), the rest sampled every
 *    sample_ms (CPU, a process's CPU or RSS, free disk) or taken from the
 *    status (ring fill, key events lost);
 *  - arm_while and per-process counters: a scan of process names every
 *    HS_COUNTER_SCAN_MS, only when some trigger needs one;
 *  - the deadline probe: a look at one process when its deadline passes
 *    (gone, held by a debugger, or there).
 * A replay (not `live`) reads nothing of this machine: OS counters stay
 * silent, arm_while counts as armed, there is no probe (each said once).
 *
 * Ownership: new borrows the plan until free; attach borrows the engine.
 * Calls come from the recording loop's thread.
 */

typedef struct hs_counters hs_counters;

/* Opens what the plan's triggers read. HS_EUNSUPPORTED (said on msg) when the
 * rules ask for a reading this machine cannot give (no PSI, a refused
 * trigger): the rules are wrong for it, so the run must not start without
 * it; HS_ENOMEM. *out is NULL on failure. */
hs_status hs_counters_new(const hs_plan *plan, const char *run_dir, bool live, const hs_msg *msg, hs_counters **out);
void hs_counters_free(hs_counters *c);

/* Gives te the probe, the events' delivery lag, a seed for chance and the
 * first arm_while states (a scan now). */
void hs_counters_attach(hs_counters *c, hs_trigger_engine *te, uint64_t now_ms);

/* Reads what is due at now_ms (monotonic) and feeds te with readings stamped
 * now_ns (the sessions' clock); status gives the session counters. */
void hs_counters_poll(hs_counters *c, hs_trigger_engine *te, uint64_t now_ms, uint64_t now_ns,
		      const hs_run_status *status);

/* How long the loop may sleep before a reading is due (ms; INT32_MAX: none). */
int hs_counters_wait_ms(const hs_counters *c, uint64_t now_ms);

/* ---- the OS's side (counters_posix.c, counters_win.c) ---- */

/* Linux PSI: registers "<some|full> <stall_us> <window_us>" on
 * /proc/pressure/<resource>; *handle is polled by psi_fired. HS_EUNSUPPORTED
 * elsewhere or where the kernel has no PSI; err says why. */
hs_status hs_counters_os_psi_open(const char *resource, bool full, uint64_t stall_us, uint64_t window_us,
				  intptr_t *handle, char *err, size_t errlen);
/* The kernel signalled the threshold since the last call (never waits). */
bool hs_counters_os_psi_fired(intptr_t handle);
void hs_counters_os_psi_close(intptr_t handle);
/* The resource's summary line now ("some avg10=... total=..."), for the evidence. */
bool hs_counters_os_psi_line(const char *resource, bool full, char *buf, size_t cap);

/* The machine's CPU time so far, busy and all (any unit, the same for both). */
bool hs_counters_os_cpu_times(uint64_t *busy, uint64_t *total);
/* Every process: fn(ctx, pid, name); false when the list cannot be read. */
bool hs_counters_os_processes(void (*fn)(void *ctx, int pid, const char *name), void *ctx);
/* A process's CPU time so far (ns) and its resident memory (bytes). */
bool hs_counters_os_process_cpu_ns(int pid, uint64_t *ns);
bool hs_counters_os_process_rss(int pid, uint64_t *bytes);
/* Free bytes the engine's user may still write on dir's file system. */
bool hs_counters_os_disk_free(const char *dir, uint64_t *bytes);
/* A process whose deadline passed: gone, held by a debugger, or running. */
hs_trigger_probe hs_counters_os_probe(int pid);

#endif
