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
 * layouts, format knowledge like Linux's signal numbering below. Records
 * without named fields (ETL today) decode as HS_DEC_NONE.
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

/* Copies s into buf (cap >= 5) as valid UTF-8 without control characters: an
 * invalid byte becomes U+FFFD, a control character a space, a final newline
 * is dropped; cut on a character boundary. Payload text is untrusted. */
void hs_utf8_clean(const char *s, char *buf, size_t cap);

#endif
