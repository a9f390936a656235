/* run/live.h: the live view (--live): the recorder's status refreshed once a second above the key events as they come, on a terminal (ncurses) or as plain lines. */
#ifndef HS_RUN_LIVE_H
#define HS_RUN_LIVE_H

#include <stdbool.h>
#include <stdio.h>

#include "hindsight/msg.h"
#include "hindsight/plan.h"
#include "run/live_event.h"
#include "run/status.h"

/*
 * Two ways to show the same things (docs/live.md):
 * - full screen (ncurses builds, on a terminal): a status area, the newest
 *   messages, and below them the key events scrolling, one line each with
 *   decoded fields and story, repeats collapsed ("x12"), alerts highlighted.
 *   Keys: p pauses the event list, / filters it (Enter applies, Esc clears).
 *   Both change only what is drawn: the observer keeps copying, the
 *   recording does not know. The screen is drawn on the terminal the engine
 *   had before main.log's tee took stdout over (tty_fd), and messages go to
 *   main.log and the view's message lines instead of the terminal.
 * - plain lines (not a terminal, or a build without ncurses): "live: " status
 *   lines once a second and "event: " lines on out.
 *
 * The observer calls hs_live_push (a copy into a ring of HS_LIVE_RING_EVENTS,
 * the oldest overwritten when a storm outruns a draw, counted); the loop
 * calls hs_live_tick every time it wakes, which reads keys and draws (when
 * the status is new, a key was pressed, or events came).
 *
 * Ownership: new borrows the plan and the log path until free.
 */

typedef struct hs_live hs_live;

typedef struct {
	const hs_plan *plan;
	bool curses;          /* full screen; false: plain lines on out */
	int tty_fd;           /* curses: the terminal (a dup of the engine's stdout before the tee) */
	FILE *out;            /* plain: where the lines go (stdout) */
	const char *log_path; /* curses: main.log, for the messages while the view owns the terminal */
	const char *prefix;   /* curses: the program's prefix for those lines in main.log ("engine") */
} hs_live_opts;

/* NULL when out of memory, or when the terminal cannot be set up (curses:
 * the caller falls back to plain lines). */
hs_live *hs_live_new(const hs_live_opts *o);

/* True when this build can draw full screen (ncurses). */
bool hs_live_have_curses(void);

/* One key event (the observer; any thread). */
void hs_live_push(hs_live *lv, const hs_live_event *e);

/* A message while the view is up (a sink: any thread). False when the view
 * does not take messages (plain mode: the caller prints them as usual). */
bool hs_live_say(hs_live *lv, hs_msg_level level, const char *source, const char *text);

/* Keys and drawing; status_new: the status was gathered since the last call. */
void hs_live_tick(hs_live *lv, const hs_run_status *st, bool status_new);

/* Gives the terminal back (the messages of the end go to it as usual). */
void hs_live_end(hs_live *lv);
void hs_live_free(hs_live *lv);

#endif
