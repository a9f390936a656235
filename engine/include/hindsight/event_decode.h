/* hindsight/event_decode.h: what a Linux trace record says, decoded from the fields its own format declares: signals, exits, execs, forks, NULL faults, OOM victims, kernel log lines, markers. */
#ifndef HINDSIGHT_EVENT_DECODE_H
#define HINDSIGHT_EVENT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/event.h"

/*
 * Reports (`analyze report`) need to know what a record means and what its
 * payload says, in one line. Which events were recorded is the profile's
 * business and what an event means for a report is the catalog's (`alert:`
 * tags); this header names no tracepoint. A record is recognised by the
 * fields its format in the file declares (a signal delivery has sig and
 * sa_handler, an exec filename and old_pid, ...): the kernel's tracepoint
 * layouts, format knowledge like Linux's signal numbering below. Where two
 * events share one layout the kernel's naming conventions tell them apart:
 * an interrupt handler's two ends by the "_handler_entry" / "_handler_exit"
 * ending of the event's name (the network stack's entry/exit pairs have a
 * name and a ret too), a softirq's by "_entry" / "_exit" (its raise, the third
 * of its layout, is not decoded), a system call by the name after
 * "sys_enter_" / "sys_exit_".
 * Records without named fields
 * (ETL today) decode as HS_DEC_NONE.
 *
 * Ownership: everything is copied into the caller's hs_event_decoded; nothing
 * points into the record.
 */

typedef enum {
	HS_DEC_NONE = 0,
	HS_DEC_SIG_DELIVER,  /* v0 sig, v1 1 when the default action runs now (sa_handler 0) */
	HS_DEC_SIG_GENERATE, /* v0 sig, v1 target pid; subject the target's comm */
	HS_DEC_OOM_VICTIM,   /* v0 victim pid, v1 anon_rss kB; subject the victim's comm */
	HS_DEC_FAULT,        /* v0 address (< 4096 only), v1 ip */
	HS_DEC_EXEC,         /* v0 pid; subject the file */
	HS_DEC_FORK,         /* v0 parent pid, v1 child pid; subject the child's comm */
	HS_DEC_EXIT,         /* v0 pid, v1 group_dead; subject comm; detail left empty (how it ended needs its past) */
	HS_DEC_EXIT_GROUP,   /* v0 the status (error_code & 0xff) */
	HS_DEC_IO_ERROR,     /* v0 error, v1 dev */
	HS_DEC_CONSOLE,      /* the kernel log line in detail */
	HS_DEC_MARKER,       /* v0 1 for an atrace slice start ("B|"), 0 for the engine's "hindsight:" marker */
	HS_DEC_HANG,         /* v0 pid; subject comm */
	HS_DEC_DISCONNECT,   /* v0 sport, v1 dport (-1 when the event has no ports) */
	HS_DEC_RETRANSMIT,   /* v0 sport, v1 dport, v2 TCP state */
	HS_DEC_ALERT,        /* any other event with a catalog alert tag */
	/* The scheduler's view, for a thread's running / waiting / blocked split (many per second: a report
	 * aggregates them rather than keeping them). */
	HS_DEC_SWITCH,   /* v0 prev pid, v1 next pid, v2 prev_state (hs_linux_task_state); subject next comm */
	HS_DEC_WAKE,     /* v0 woken pid, v1 target cpu, v2 where it was logged: 0 a task (the record's pid woke it,
			    for the first wake record of a wake-up), 1 a hard interrupt, 2 a softirq (the record's
			    pid is only the task they interrupted); subject the woken comm */
	HS_DEC_IRQ_ENTRY,     /* subject the handler's name */
	HS_DEC_IRQ_EXIT,      /* v1 ret (0: not handled) */
	HS_DEC_SOFTIRQ_ENTRY, /* v0 vec; subject its name (hs_linux_softirq_name) */
	HS_DEC_SOFTIRQ_EXIT,  /* v0 vec */
	/* Stalls a report pairs per task: */
	HS_DEC_RECLAIM_BEGIN, /* v0 order, v1 gfp_flags: the task reclaims memory itself (direct or memcg) */
	HS_DEC_RECLAIM_END,   /* v0 pages reclaimed */
	HS_DEC_THROTTLE,      /* v0 timeout us, v1 delayed us, v2 reason bits: reclaim put the task to sleep */
	HS_DEC_DIRTY_PAUSE,   /* v0 pause ms, v1 paused ms so far: a writer throttled for dirty pages */
	HS_DEC_SYSCALL_ENTER, /* v0 syscall nr, v1 first argument (fd for the sync calls); subject the syscall */
	HS_DEC_SYSCALL_EXIT,  /* v0 syscall nr, v1 ret; subject the syscall */
	/* Only hs_event_decode_kind_all returns the kinds below: what a cause analysis reads around a thread's waits
	 * (hs_event_decode_kind keeps saying HS_DEC_NONE for them, so a walk that keeps what it decodes does not
	 * keep the timers of a whole machine). */
	HS_DEC_TIMER_START,  /* v0 the hrtimer (address), v1 its function (address), v2 1 */
	HS_DEC_TIMER_EXPIRE, /* v0 the hrtimer, v1 its function, v2 1: it fires (in interrupt context) */
	HS_DEC_BLOCK_QUEUE,  /* v0 dev, v1 sector, v2 bytes; subject rwbs: a task queues block I/O (its own context) */
	HS_DEC_RENAME,       /* v0 pid; subject the new name (prctl PR_SET_NAME, or exec) */
	HS_DEC_NEWTASK,      /* v0 the new task's pid, v1 clone_flags (CLONE_THREAD: a thread of the caller's process);
				subject its name */
	HS_DEC_MIGRATE,      /* v0 pid, v1 from cpu, v2 to cpu */
	HS_DEC_FILE_FAULT,   /* v0 dev, v1 inode, v2 page index: a page fault on a mapped file (the task's context) */
	HS_DEC_LOCK_BEGIN,   /* v0 the lock (address), v1 flags: the task waits for a contended kernel lock */
	HS_DEC_LOCK_END,     /* v0 the lock, v1 ret */
} hs_decoded_kind;

typedef struct {
	hs_decoded_kind kind;
	int64_t v[3];
	char subject[64]; /* valid UTF-8 (hs_utf8_clean) */
	char detail[320]; /* the payload in one line, valid UTF-8 */
} hs_event_decoded;

/* What the record is, from its fields and its catalog alert tag (or NULL).
 * Asking costs field lookups: cache it per event id. */
hs_decoded_kind hs_event_decode_kind(const hs_event *e, const char *alert);
/* The same, also recognising the kinds from HS_DEC_TIMER_START on (timers, block I/O queued, renames, new tasks,
 * migrations, file faults, kernel lock contention). */
hs_decoded_kind hs_event_decode_kind_all(const hs_event *e, const char *alert);

/* Decodes e as kind into out; comm is the task's name to use in the text
 * (already cleaned). False when the record is not worth showing: a fault away
 * from the NULL page, a signal whose default action kills nobody, a block
 * completion without error, a marker that is neither the engine's nor a slice
 * start, an empty log line. */
bool hs_event_decode(const hs_event *e, hs_decoded_kind kind, const char *alert, const char *comm,
		     hs_event_decoded *out);

/* Linux signals (generic/x86 numbering, signal(7) default actions). */
typedef enum { HS_SIGACT_IGNORE, HS_SIGACT_CORE, HS_SIGACT_TERM, HS_SIGACT_STOP, HS_SIGACT_CONT } hs_sig_action;
/* "SIGSEGV", or "signal N" written into buf. */
const char *hs_linux_signal_name(int64_t sig, char *buf, size_t cap);
hs_sig_action hs_linux_signal_action(int64_t sig);

/* A task's state when it left a CPU (a switch record's prev_state, TASK_REPORT bits of Linux 4.14+). */
typedef enum {
	HS_TASK_RUNNABLE,  /* R: it yielded and stays runnable */
	HS_TASK_PREEMPTED, /* R+: preempted, runnable */
	HS_TASK_SLEEP,     /* S (and I, an idle kernel thread): waits for an event, a timer, a lock, input */
	HS_TASK_DISK,      /* D: uninterruptible, usually I/O or a kernel lock */
	HS_TASK_STOPPED,   /* T, t: stopped or traced */
	HS_TASK_DEAD,      /* X, Z: exiting */
	HS_TASK_OTHER,     /* P or bits this list does not know */
} hs_task_state;
hs_task_state hs_linux_task_state(int64_t prev_state);
/* "TIMER", "NET_RX", ...; "softirq N" written into buf when unknown. */
const char *hs_linux_softirq_name(int64_t vec, char *buf, size_t cap);

/* Copies s into buf (cap >= 5) as valid UTF-8 without control characters: an
 * invalid byte becomes U+FFFD, a control character a space, a final newline
 * is dropped; cut on a character boundary. Payload text is untrusted. */
void hs_utf8_clean(const char *s, char *buf, size_t cap);

#endif
