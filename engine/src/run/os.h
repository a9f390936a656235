/* run/os.h: what the recording mode needs from the operating system; os_posix.c and os_win.c implement it. */
#ifndef HS_RUN_OS_H
#define HS_RUN_OS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "hindsight/msg.h"
#include "hindsight/plan.h"

/* 0 when this process may record; otherwise the reason goes to msg as an
 * error (with what to do) and HS_EXIT_NOT_PRIVILEGED (hindsight/exitcodes.h) is returned. */
int hs_os_check_privilege(const hs_msg *msg);

/* Files created from now on are readable by their owner only where the
 * platform decides that per process (umask); traces hold command lines and paths. */
void hs_os_private_files(void);

/* mkdir with owner-only rights; 0, or -1 with errno (EEXIST when it exists). */
int hs_os_mkdir(const char *path);
/* Removes an empty folder; 0 or -1 with errno. */
int hs_os_rmdir(const char *path);
/* Writes sb (consumed, freed in every case) to path through path.tmp, synced
 * and renamed, so path is the old file or the whole new one; os_common.c. */
hs_status hs_os_write_file_synced(const char *path, hs_strbuf *sb);
/* Flushes f and asks the OS to put it on disk. 0 or -1. */
int hs_os_sync(FILE *f);

void hs_os_localtime(time_t t, struct tm *out);
/* Local time's offset from UTC in minutes at t (east positive). */
long hs_os_utc_offset_min(time_t t);
uint64_t hs_os_monotonic_ms(void);
/* The wall clock, Unix ms. */
uint64_t hs_os_wall_ms(void);
/* The process's CPU time so far (user + system, all threads), µs; 0 unknown. */
uint64_t hs_os_cpu_time_us(void);
/* t as local ISO 8601 with a numeric UTC offset ("2026-12-03T10:15:00+0100"); os_common.c. */
void hs_os_iso_time(char *buf, size_t n, time_t t);

/* Stop requests: SIGINT/SIGTERM on POSIX; Ctrl+C and closing
 * the console on Windows. The counter only grows; the first request stops
 * the run, later ones print the busy text (if set) so the user waits. */
void hs_os_stop_handlers_install(void);
volatile int *hs_os_stop_requests(void);
/* Snapshot requests that do not stop the run: SIGUSR1 on POSIX, Ctrl+Break
 * on Windows. The counter only grows; the loop takes one snapshot per step. */
volatile int *hs_os_snapshot_requests(void);
/* How the user asks for one, for the "recording" line ("kill -USR1 <pid>"). */
const char *hs_os_snapshot_hint(void);
/* Static text ("saving the in-memory rings to disk") or NULL. */
void hs_os_set_busy(const char *text);
/* The prefix of the line a later stop request prints while the run is busy
 * ("<prefix>: still <busy text>; please wait..."): a static string the
 * program sets ("engine"), NULL for none. The signal handler writes that line
 * itself, as it may not call a message sink (stdio is not async-signal-safe). */
void hs_os_set_busy_prefix(const char *prefix);
/* The run's files are complete: a console-close handler holding Windows
 * off may now let it end the process. */
void hs_os_run_finished(void);
/* How the user stops a run, for the "recording" line. */
const char *hs_os_stop_hint(void);

/* main.log: stdout and stderr go to the terminal and to the log file until
 * hs_os_tee_stop. false (errno set) when it cannot be set up. */
bool hs_os_tee_start(const char *log_path);
void hs_os_tee_stop(void);

#endif
