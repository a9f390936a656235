/* bench/late_frames.h: bench_frame_pacing --why: what a late frame's CPU ran while the frame loop waited (a tracefs instance of the bench's own). */
#ifndef HS_BENCH_LATE_FRAMES_H
#define HS_BENCH_LATE_FRAMES_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct late_why late_why;

/* Creates instance `name` (sched_switch, sched_wakeup, sched_migrate_task, hard and soft interrupts, system
 * calls; mono clock, so its times are CLOCK_MONOTONIC like the frame log's) and starts it. NULL, said on stderr, when it cannot. The
 * caller owns the result and frees it with late_why_free, which removes the instance. */
late_why *late_why_start(const char *name);

/* Stops the instance and writes one line to out for each frame k of start[0..n) longer than late_ns: when the loop
 * was woken and ran, and what its CPU ran in between (tasks by time, interrupts). first_ns: the round's first frame,
 * the base of the printed times. game: the frame loop's pid. */
void late_why_explain(late_why *w, pid_t game, const int64_t *start, uint64_t n, int64_t first_ns, int64_t late_ns,
		      FILE *out);

void late_why_free(late_why *w);

#endif
