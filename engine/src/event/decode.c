/* event/decode.c: what a Linux trace record says (hindsight/event_decode.h), from the fields its own format declares. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/event_decode.h"
#include "hindsight/status.h"

/* No tracepoint name is written here (event_decode.h says why); tests/policy checks it. */

/* The one-line description, cut where it does not fit (names and paths come
 * from payloads): a function, so the cut is by design, not a format warning. */
static void detail(hs_event_decoded *e, const char *fmt, ...) HS_PRINTF_FMT(2, 3);
static void detail(hs_event_decoded *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof e->detail, fmt, ap);
	va_end(ap);
}

/* Linux generic/x86 numbering and default actions (signal(7)). */
static const struct {
	const char *name;
	hs_sig_action act;
} sigs[] = {
	[1] = {"SIGHUP", HS_SIGACT_TERM},      [2] = {"SIGINT", HS_SIGACT_TERM},     [3] = {"SIGQUIT", HS_SIGACT_CORE},
	[4] = {"SIGILL", HS_SIGACT_CORE},      [5] = {"SIGTRAP", HS_SIGACT_CORE},    [6] = {"SIGABRT", HS_SIGACT_CORE},
	[7] = {"SIGBUS", HS_SIGACT_CORE},      [8] = {"SIGFPE", HS_SIGACT_CORE},     [9] = {"SIGKILL", HS_SIGACT_TERM},
	[10] = {"SIGUSR1", HS_SIGACT_TERM},    [11] = {"SIGSEGV", HS_SIGACT_CORE},   [12] = {"SIGUSR2", HS_SIGACT_TERM},
	[13] = {"SIGPIPE", HS_SIGACT_TERM},    [14] = {"SIGALRM", HS_SIGACT_TERM},   [15] = {"SIGTERM", HS_SIGACT_TERM},
	[16] = {"SIGSTKFLT", HS_SIGACT_TERM},  [17] = {"SIGCHLD", HS_SIGACT_IGNORE}, [18] = {"SIGCONT", HS_SIGACT_CONT},
	[19] = {"SIGSTOP", HS_SIGACT_STOP},    [20] = {"SIGTSTP", HS_SIGACT_STOP},   [21] = {"SIGTTIN", HS_SIGACT_STOP},
	[22] = {"SIGTTOU", HS_SIGACT_STOP},    [23] = {"SIGURG", HS_SIGACT_IGNORE},  [24] = {"SIGXCPU", HS_SIGACT_CORE},
	[25] = {"SIGXFSZ", HS_SIGACT_CORE},    [26] = {"SIGVTALRM", HS_SIGACT_TERM}, [27] = {"SIGPROF", HS_SIGACT_TERM},
	[28] = {"SIGWINCH", HS_SIGACT_IGNORE}, [29] = {"SIGIO", HS_SIGACT_TERM},     [30] = {"SIGPWR", HS_SIGACT_TERM},
	[31] = {"SIGSYS", HS_SIGACT_CORE},
};

const char *hs_linux_signal_name(int64_t sig, char *buf, size_t cap)
{
	if (sig > 0 && (size_t)sig < sizeof sigs / sizeof sigs[0] && sigs[sig].name)
		return sigs[sig].name;
	snprintf(buf, cap, "signal %" PRId64, sig);
	return buf;
}

hs_sig_action hs_linux_signal_action(int64_t sig)
{
	if (sig > 0 && (size_t)sig < sizeof sigs / sizeof sigs[0] && sigs[sig].name)
		return sigs[sig].act;
	return sig >= 34 && sig <= 64 ? HS_SIGACT_TERM : HS_SIGACT_IGNORE; /* real-time signals terminate */
}

/* Copies s into buf as valid UTF-8 without control characters: an invalid
 * byte becomes U+FFFD, a control character a space. Payload text is
 * untrusted; every renderer can then rely on this. */
void hs_utf8_clean(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p && o + 4 < cap) {
		unsigned c = *p;
		size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		bool ok = n > 0 && !(n == 2 && c < 0xC2) && !(n == 4 && c > 0xF4);
		for (size_t i = 1; ok && i < n; i++)
			ok = (p[i] & 0xC0) == 0x80;
		if (ok && n == 3) {
			unsigned v = ((c & 0x0F) << 12) | ((p[1] & 0x3Fu) << 6);
			ok = v >= 0x800 && !(v >= 0xD800 && v <= 0xDFFF);
		}
		if (ok && n == 4)
			ok = !(c == 0xF0 && p[1] < 0x90) && !(c == 0xF4 && p[1] >= 0x90);
		if (!ok) {
			memcpy(buf + o, "\xEF\xBF\xBD", 3);
			o += 3;
			p++;
			continue;
		}
		if (n == 1 && (c < 0x20 || c == 0x7F)) {
			buf[o++] = c == '\n' && !p[1] ? '\0' : ' ';
			if (!buf[o - 1])
				o--;
			p++;
			continue;
		}
		memcpy(buf + o, p, n);
		o += n;
		p += n;
	}
	buf[o] = '\0';
}

static bool has_field(const hs_event *r, const char *f)
{
	int64_t v;
	char s[8];
	return hs_event_field_int(r, f, &v) || hs_event_field_str(r, f, s, sizeof s);
}

static bool name_ends(const hs_event *r, const char *suffix)
{
	size_t n = r->name ? strlen(r->name) : 0, k = strlen(suffix);
	return n > k && strcmp(r->name + n - k, suffix) == 0;
}

hs_task_state hs_linux_task_state(int64_t s)
{
	/* TASK_REPORT: 0x01 S, 0x02 D, 0x04 T, 0x08 t, 0x10 X, 0x20 Z, 0x40 P, 0x80 I; a bit above them
	 * (TASK_REPORT_MAX, 0x100 on 4.14+) marks a preemption, the task still runnable */
	if (s & 0x100 && !(s & 0xff))
		return HS_TASK_PREEMPTED;
	if (!(s & 0xff))
		return HS_TASK_RUNNABLE;
	if (s & 0x02)
		return HS_TASK_DISK;
	if (s & 0x81)
		return HS_TASK_SLEEP;
	if (s & 0x0c)
		return HS_TASK_STOPPED;
	if (s & 0x30)
		return HS_TASK_DEAD;
	return HS_TASK_OTHER;
}

const char *hs_linux_softirq_name(int64_t vec, char *buf, size_t cap)
{
	/* the kernel's softirq_to_name[] (kernel/softirq.c) */
	static const char *const names[] = {"HI",      "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
					    "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};
	if (vec >= 0 && (size_t)vec < sizeof names / sizeof names[0])
		return names[vec];
	snprintf(buf, cap, "softirq %" PRId64, vec);
	return buf;
}

hs_decoded_kind hs_event_decode_kind_all(const hs_event *r, const char *alert)
{
	hs_decoded_kind k = hs_event_decode_kind(r, alert);
	if (k != HS_DEC_NONE)
		return k;
	/* high-resolution timers (every user-space sleep and timed wait arms one): a start has an expiry, a
	 * firing the clock's "now" */
	if (has_field(r, "function") && has_field(r, "hrtimer")) {
		if (has_field(r, "expires"))
			return HS_DEC_TIMER_START;
		if (has_field(r, "now"))
			return HS_DEC_TIMER_EXPIRE;
		return HS_DEC_NONE;
	}
	/* a bio or request queued in the submitter's context (a completion has "error" and no comm) */
	if (has_field(r, "rwbs") && has_field(r, "comm") && has_field(r, "sector") && !has_field(r, "error") &&
	    !has_field(r, "new_sector") && !has_field(r, "old_sector"))
		return HS_DEC_BLOCK_QUEUE;
	if (has_field(r, "oldcomm") && has_field(r, "newcomm"))
		return HS_DEC_RENAME;
	if (has_field(r, "clone_flags") && has_field(r, "comm") && has_field(r, "pid"))
		return HS_DEC_NEWTASK;
	if (has_field(r, "orig_cpu") && has_field(r, "dest_cpu") && has_field(r, "pid"))
		return HS_DEC_MIGRATE;
	/* a fault on a mapped file; the page cache's own add/lookups carry a pfn or a last_index */
	if (has_field(r, "i_ino") && has_field(r, "s_dev") && has_field(r, "index") && !has_field(r, "pfn") &&
	    !has_field(r, "last_index"))
		return HS_DEC_FILE_FAULT;
	if (has_field(r, "lock_addr") && has_field(r, "flags"))
		return HS_DEC_LOCK_BEGIN;
	if (has_field(r, "lock_addr") && has_field(r, "ret"))
		return HS_DEC_LOCK_END;
	return HS_DEC_NONE;
}

/* What makes an event of a kind, tried in order (the first that fits wins): the fields it has and lacks, the
 * catalog's alert (ANY_ALERT: any), how its name ends or starts. */
#define ANY_ALERT "*"
static const struct {
	hs_decoded_kind kind;
	const char *has[4], *lacks[3];
	const char *alert, *name_end, *name_start;
} kind_shapes[] = {
	{HS_DEC_SIG_DELIVER, {"sig", "sa_handler"}, {0}, NULL, NULL, NULL},
	{HS_DEC_SIG_GENERATE, {"sig", "result", "group"}, {0}, NULL, NULL, NULL},
	{HS_DEC_OOM_VICTIM, {"anon_rss", "total_vm"}, {0}, NULL, NULL, NULL},
	{HS_DEC_FAULT, {"address", "ip", "error_code"}, {0}, NULL, NULL, NULL},
	{HS_DEC_EXEC, {"filename", "old_pid"}, {0}, NULL, NULL, NULL},
	{HS_DEC_FORK, {"child_pid", "parent_pid"}, {0}, NULL, NULL, NULL},
	{HS_DEC_EXIT, {"group_dead", "prio"}, {0}, NULL, NULL, NULL},
	{HS_DEC_EXIT_GROUP, {"error_code", "__syscall_nr"}, {0}, NULL, NULL, NULL},
	{HS_DEC_HANG, {0}, {0}, "hang", NULL, NULL},
	{HS_DEC_IO_ERROR, {0}, {0}, "io-error", NULL, NULL},
	/* a completion: an error only when error != 0 */
	{HS_DEC_IO_ERROR, {"error", "sector", "rwbs"}, {0}, NULL, NULL, NULL},
	{HS_DEC_DISCONNECT, {0}, {0}, "disconnect", NULL, NULL},
	{HS_DEC_RETRANSMIT, {"skaddr", "state", "sport", "dport"}, {0}, NULL, NULL, NULL},
	{HS_DEC_SWITCH, {"prev_pid", "next_pid", "prev_state"}, {0}, NULL, NULL, NULL},
	{HS_DEC_WAKE, {"pid", "target_cpu", "comm"}, {0}, NULL, NULL, NULL},
	/* an interrupt handler's two ends, its name and its return value: by the "_handler_entry/exit" ending, as
	 * the network stack's entry/exit pairs also carry a device name and a return value */
	{HS_DEC_IRQ_ENTRY, {"name"}, {0}, NULL, "_handler_entry", NULL},
	{HS_DEC_IRQ_EXIT, {"ret"}, {0}, NULL, "_handler_exit", NULL},
	{HS_DEC_SOFTIRQ_ENTRY, {"vec"}, {0}, NULL, "_entry", NULL},
	{HS_DEC_SOFTIRQ_EXIT, {"vec"}, {0}, NULL, "_exit", NULL},
	/* the reclaim a task does itself; an allocation (pfn, page) or kswapd's wake (nid) has order and gfp too */
	{HS_DEC_RECLAIM_BEGIN, {"order", "gfp_flags"}, {"pfn", "page", "nid"}, NULL, NULL, NULL},
	{HS_DEC_RECLAIM_END, {"nr_reclaimed"}, {"nr_scanned", "nid"}, NULL, NULL, NULL},
	{HS_DEC_THROTTLE, {"usec_timeout", "usec_delayed"}, {0}, NULL, NULL, NULL},
	{HS_DEC_DIRTY_PAUSE, {"pause", "paused", "dirty_ratelimit"}, {0}, NULL, NULL, NULL},
	{HS_DEC_SYSCALL_ENTER, {"__syscall_nr"}, {0}, NULL, NULL, "sys_enter_"},
	{HS_DEC_SYSCALL_EXIT, {"__syscall_nr", "ret"}, {0}, NULL, NULL, "sys_exit_"},
	{HS_DEC_ALERT, {0}, {0}, ANY_ALERT, NULL, NULL},
	{HS_DEC_CONSOLE, {"msg"}, {"ip"}, NULL, NULL, NULL},
	{HS_DEC_MARKER, {"buf", "ip"}, {0}, NULL, NULL, NULL},
};

static bool fits(const hs_event *r, const char *alert, size_t i)
{
	const char *want = kind_shapes[i].alert;
	if (want && !(alert && (!strcmp(want, ANY_ALERT) || !strcmp(alert, want))))
		return false;
	for (size_t k = 0; k < 4 && kind_shapes[i].has[k]; k++)
		if (!has_field(r, kind_shapes[i].has[k]))
			return false;
	for (size_t k = 0; k < 3 && kind_shapes[i].lacks[k]; k++)
		if (has_field(r, kind_shapes[i].lacks[k]))
			return false;
	if (kind_shapes[i].name_end && !name_ends(r, kind_shapes[i].name_end))
		return false;
	const char *start = kind_shapes[i].name_start;
	return !start || (r->name && !strncmp(r->name, start, strlen(start)));
}

hs_decoded_kind hs_event_decode_kind(const hs_event *r, const char *alert)
{
	for (size_t i = 0; i < sizeof kind_shapes / sizeof kind_shapes[0]; i++)
		if (fits(r, alert, i))
			return kind_shapes[i].kind;
	return HS_DEC_NONE;
}

/* What each kind reads before its case in hs_event_decode says the rest: the integer fields into a, b, c and d
 * (NULL: not read, the variable stays 0), how many of a, b, c are the decoded values v[0..] (copied once the case
 * accepts the record, after what it changed), and the string field cleaned into the subject. */
static const struct {
	const char *ints[4];
	unsigned nv;
	const char *subject;
} reads[] = {
	[HS_DEC_SIG_DELIVER] = {{"sig", "sa_handler"}, 1, NULL},
	[HS_DEC_SIG_GENERATE] = {{"sig", "pid", "result"}, 2, NULL},
	[HS_DEC_OOM_VICTIM] = {{"pid", "anon_rss", "file_rss", "shmem_rss"}, 2, NULL},
	[HS_DEC_FAULT] = {{"address", "ip"}, 2, NULL},
	[HS_DEC_EXEC] = {{"pid"}, 1, NULL},
	[HS_DEC_FORK] = {{"parent_pid", "child_pid"}, 2, "child_comm"},
	[HS_DEC_EXIT] = {{"pid", "group_dead"}, 2, "comm"},
	[HS_DEC_EXIT_GROUP] = {{"error_code"}, 0, NULL},
	[HS_DEC_IO_ERROR] = {{"error", "dev", "sector"}, 2, NULL},
	[HS_DEC_HANG] = {{"pid"}, 1, "comm"},
	[HS_DEC_RETRANSMIT] = {{"sport", "dport", "state"}, 3, NULL},
	[HS_DEC_SWITCH] = {{"prev_pid", "next_pid", "prev_state"}, 3, "next_comm"},
	[HS_DEC_WAKE] = {{"pid", "target_cpu"}, 2, "comm"},
	[HS_DEC_IRQ_ENTRY] = {{NULL}, 0, "name"},
	[HS_DEC_IRQ_EXIT] = {{NULL, "ret"}, 2, NULL},
	[HS_DEC_SOFTIRQ_ENTRY] = {{"vec"}, 1, NULL},
	[HS_DEC_SOFTIRQ_EXIT] = {{"vec"}, 1, NULL},
	[HS_DEC_RECLAIM_BEGIN] = {{"order", "gfp_flags"}, 2, NULL},
	[HS_DEC_RECLAIM_END] = {{"nr_reclaimed"}, 1, NULL},
	[HS_DEC_THROTTLE] = {{"usec_timeout", "usec_delayed", "reason"}, 3, NULL},
	[HS_DEC_DIRTY_PAUSE] = {{"pause", "paused"}, 2, NULL},
	[HS_DEC_SYSCALL_ENTER] = {{"__syscall_nr"}, 2, NULL},
	[HS_DEC_SYSCALL_EXIT] = {{"__syscall_nr", "ret"}, 2, NULL},
	[HS_DEC_TIMER_START] = {{"hrtimer", "function", "expires"}, 2, NULL},
	[HS_DEC_TIMER_EXPIRE] = {{"hrtimer", "function"}, 2, NULL},
	[HS_DEC_BLOCK_QUEUE] = {{"dev", "sector"}, 3, NULL},
	[HS_DEC_RENAME] = {{"pid"}, 1, "newcomm"},
	[HS_DEC_NEWTASK] = {{"pid", "clone_flags"}, 2, "comm"},
	[HS_DEC_MIGRATE] = {{"pid", "orig_cpu", "dest_cpu"}, 3, NULL},
	[HS_DEC_FILE_FAULT] = {{"s_dev", "i_ino", "index"}, 3, NULL},
	[HS_DEC_LOCK_BEGIN] = {{"lock_addr", "flags"}, 2, NULL},
	[HS_DEC_LOCK_END] = {{"lock_addr", "ret"}, 2, NULL},
};

bool hs_event_decode(const hs_event *r, hs_decoded_kind sh, const char *alert, const char *comm, hs_event_decoded *e)
{
	int64_t a = 0, b = 0, c = 0, d = 0;
	char s1[256] = "", s2[64] = "", sb[24];
	memset(e, 0, sizeof *e);
	e->kind = sh;
	int pid = (int)r->tid;
	if ((size_t)sh >= sizeof reads / sizeof reads[0])
		return false; /* not a kind */
	int64_t *const to[4] = {&a, &b, &c, &d};
	for (size_t k = 0; k < 4; k++)
		if (reads[sh].ints[k])
			hs_event_field_int(r, reads[sh].ints[k], to[k]);
	if (reads[sh].subject) {
		hs_event_field_str(r, reads[sh].subject, s2, sizeof s2);
		hs_utf8_clean(s2, e->subject, sizeof e->subject);
	}
	switch (sh) {
	case HS_DEC_SIG_DELIVER:
		if (hs_linux_signal_action(a) != HS_SIGACT_CORE && hs_linux_signal_action(a) != HS_SIGACT_TERM)
			return false;
		e->v[1] = b == 0; /* SIG_DFL: the default action happens now */
		detail(e, "%s delivered to %s (pid %d): %s",
			 hs_linux_signal_name(a, sb, sizeof sb), comm, pid,
			 b == 0   ? (hs_linux_signal_action(a) == HS_SIGACT_CORE
					   ? "default action, the process dies with a core dump"
					   : "default action, the process is terminated")
			 : b == 1 ? "ignored"
				: "its own handler runs");
		break;
	case HS_DEC_SIG_GENERATE:
		hs_event_field_str(r, "comm", s2, sizeof s2);
		if (hs_linux_signal_action(a) != HS_SIGACT_CORE && hs_linux_signal_action(a) != HS_SIGACT_TERM)
			return false;
		hs_utf8_clean(s2, s1, 64);
		detail(e, "%s sent to %s (pid %" PRId64 ") by %s (pid %d)%s",
			 hs_linux_signal_name(a, sb, sizeof sb), s1, b, comm, pid, c ? " (not delivered)" : "");
		break;
	case HS_DEC_OOM_VICTIM:
		if (!hs_event_field_str(r, "comm", s2, sizeof s2))
			snprintf(s2, sizeof s2, "?");
		hs_utf8_clean(s2, e->subject, sizeof e->subject);
		detail(e,
			 "OOM killer chose %s (pid %" PRId64 "): anon_rss %" PRId64 " kB, file_rss %" PRId64
			 " kB, shmem_rss %" PRId64 " kB",
			 e->subject, a, b, c, d);
		break;
	case HS_DEC_FAULT:
		if ((uint64_t)a >= 4096)
			return false; /* only the NULL page matters to a report */
		detail(e,
			 "page fault at 0x%" PRIx64 " (ip 0x%" PRIx64 "): a NULL-pointer access", (uint64_t)a,
			 (uint64_t)b);
		break;
	case HS_DEC_EXEC:
		hs_event_field_str(r, "filename", s1, sizeof s1);
		hs_utf8_clean(s1, e->subject, sizeof e->subject);
		detail(e, "exec %s (pid %" PRId64 ")", e->subject, a);
		break;
	case HS_DEC_FORK:
		detail(e, "fork: pid %" PRId64 " made %s (pid %" PRId64 ")", a, e->subject,
			 b);
		break;
	case HS_DEC_EXIT:
		/* the detail is written once every event is sorted: how it ended is known then */
		break;
	case HS_DEC_EXIT_GROUP:
		e->v[0] = a & 0xff;
		detail(e, "%s (pid %d) exits with status %" PRId64, comm, pid, a & 0xff);
		break;
	case HS_DEC_IO_ERROR:
		if (!a && !alert)
			return false;
		hs_event_field_str(r, "rwbs", s2, sizeof s2);
		hs_utf8_clean(s2, s1, 16);
		detail(e,
			 "I/O error %" PRId64 " on dev %" PRId64 ":%" PRId64 " (%s) sector %" PRId64, a,
			 (b >> 20) & 0xfff, b & 0xfffff, s1, c);
		break;
	case HS_DEC_CONSOLE:
		hs_event_field_str(r, "msg", s1, sizeof s1);
		hs_utf8_clean(s1, e->detail, sizeof e->detail);
		return e->detail[0] != '\0';
	case HS_DEC_MARKER:
		hs_event_field_str(r, "buf", s1, sizeof s1);
		/* the engine's trigger marker, and the starts of atrace slices (frame starts) */
		if (strncmp(s1, "hindsight:", 10) != 0 && strncmp(s1, "B|", 2) != 0)
			return false;
		e->v[0] = s1[0] == 'B';
		hs_utf8_clean(s1, e->detail, sizeof e->detail);
		break;
	case HS_DEC_HANG:
		detail(e, "%s (pid %" PRId64 ") stuck in uninterruptible sleep (D state)",
			 e->subject[0] ? e->subject : comm, a);
		break;
	case HS_DEC_DISCONNECT:
		if (hs_event_field_int(r, "sport", &a) && hs_event_field_int(r, "dport", &b)) {
			e->v[0] = a;
			e->v[1] = b;
			detail(e,
				 "connection reset: local port %" PRId64 ", remote port %" PRId64, a, b);
		} else {
			/* the reset a host sends carries sockaddrs, not ports (Linux 6.10+): its state and reason */
			e->v[0] = e->v[1] = -1;
			hs_event_field_int(r, "state", &a);
			hs_event_field_int(r, "reason", &b);
			detail(e,
				 "connection reset sent (TCP state %" PRId64 ", reason %" PRId64 ")%s", a, b,
				 a == 0 ? ": no socket, e.g. a connection to a closed port" : "");
		}
		break;
	case HS_DEC_RETRANSMIT:
		detail(e,
			 "retransmit: local port %" PRId64 ", remote port %" PRId64 " (TCP state %" PRId64 ")", a, b,
			 c);
		break;
	case HS_DEC_ALERT:
		detail(e, "%s event (catalog alert)", alert ? alert : "?");
		break;
	case HS_DEC_SWITCH: {
		static const char *const st[] = {"R", "R+", "S", "D", "T", "X", "?"};
		hs_event_field_str(r, "prev_comm", s2, sizeof s2);
		hs_utf8_clean(s2, s1, 64);
		detail(e,
			 "%s (pid %" PRId64 ") leaves the CPU [%s] for %s (pid %" PRId64 ")", s1, a,
			 st[hs_linux_task_state(c)], e->subject, b);
		break;
	}
	case HS_DEC_WAKE:
		/* struct trace_entry's flags byte (offset 2, the kernel's fixed record header): a wake-up logged in
		 * hard or soft interrupt context was made by the interrupt, not by the task it interrupted */
		c = r->payload && r->payload_len > 2 ? r->payload[2] : 0;
		e->v[2] = c & 0x08 ? 1 : c & 0x10 ? 2 : 0;
		detail(e, "%s%s (pid %d) wakes %s (pid %" PRId64 ") for cpu %" PRId64,
			 e->v[2] == 1   ? "an interrupt over "
			 : e->v[2] == 2 ? "a softirq over "
					: "",
			 comm, pid, e->subject, a, b);
		break;
	case HS_DEC_IRQ_ENTRY:
		detail(e, "interrupt handler %s starts", e->subject);
		break;
	case HS_DEC_IRQ_EXIT:
		detail(e, "interrupt handler returns (%s)", b ? "handled" : "unhandled");
		break;
	case HS_DEC_SOFTIRQ_ENTRY:
	case HS_DEC_SOFTIRQ_EXIT:
		snprintf(e->subject, sizeof e->subject, "%s", hs_linux_softirq_name(a, sb, sizeof sb));
		detail(e, "softirq %s %s", e->subject,
			 sh == HS_DEC_SOFTIRQ_ENTRY ? "starts" : "ends");
		break;
	case HS_DEC_RECLAIM_BEGIN:
		detail(e,
			 "%s (pid %d) must reclaim memory itself for an order-%" PRId64 " allocation (gfp 0x%" PRIx64 ")",
			 comm, pid, a, (uint64_t)b);
		break;
	case HS_DEC_RECLAIM_END:
		detail(e, "%s (pid %d) ends reclaim: %" PRId64 " pages reclaimed", comm, pid,
			 a);
		break;
	case HS_DEC_THROTTLE:
		detail(e,
			 "%s (pid %d) throttled by reclaim: sleeps up to %" PRId64 " us (reason bits 0x%" PRIx64 "%s)", comm,
			 pid, a, (uint64_t)c, c & 1 ? ", writeback congested" : "");
		break;
	case HS_DEC_DIRTY_PAUSE:
		hs_event_field_str(r, "bdi", s2, sizeof s2);
		hs_utf8_clean(s2, s1, 64);
		detail(e,
			 "%s (pid %d) paused %" PRId64 " ms writing to %s: too many dirty pages wait for the disk", comm, pid,
			 a, s1);
		break;
	case HS_DEC_SYSCALL_ENTER:
	case HS_DEC_SYSCALL_EXIT: {
		const char *call = r->name + (sh == HS_DEC_SYSCALL_ENTER ? 10 : 9);
		hs_utf8_clean(call, e->subject, sizeof e->subject);
		if (sh == HS_DEC_SYSCALL_EXIT) {
			detail(e, "%s returns %" PRId64 "%s", e->subject, b,
				 b < 0 ? " (an error)" : "");
		} else {
			/* the sync calls' one argument is the fd */
			if (!hs_event_field_int(r, "fd", &b))
				b = -1;
			if (b >= 0)
				detail(e, "%s (pid %d) calls %s(fd %" PRId64 ")", comm, pid,
					 e->subject, b);
			else
				detail(e, "%s (pid %d) calls %s", comm, pid, e->subject);
		}
		break;
	}
	case HS_DEC_TIMER_START:
	case HS_DEC_TIMER_EXPIRE:
		e->v[2] = 1;
		if (sh == HS_DEC_TIMER_START)
			detail(e, "%s (pid %d) arms hrtimer 0x%" PRIx64 " (function 0x%" PRIx64 ", expires %" PRId64 ")",
			       comm, pid, (uint64_t)a, (uint64_t)b, c);
		else
			detail(e, "hrtimer 0x%" PRIx64 " fires (function 0x%" PRIx64 ")", (uint64_t)a, (uint64_t)b);
		break;
	case HS_DEC_BLOCK_QUEUE:
		if (!hs_event_field_int(r, "bytes", &c) && hs_event_field_int(r, "nr_sector", &c))
			c *= 512;
		hs_event_field_str(r, "rwbs", s2, sizeof s2);
		hs_utf8_clean(s2, e->subject, 16);
		detail(e, "%s (pid %d) queues %" PRId64 " bytes of block I/O (%s) on dev %" PRId64 ":%" PRId64
			  " at sector %" PRId64,
		       comm, pid, c, e->subject, (a >> 20) & 0xfff, a & 0xfffff, b);
		break;
	case HS_DEC_RENAME:
		hs_event_field_str(r, "oldcomm", s2, sizeof s2);
		hs_utf8_clean(s2, s1, 64);
		detail(e, "%s (pid %" PRId64 ") renames itself %s", s1, a, e->subject);
		break;
	case HS_DEC_NEWTASK:
		detail(e, "%s (pid %d) makes %s %s (pid %" PRId64 ")", comm, pid,
		       (uint64_t)b & 0x00010000u ? "a thread" : "a process", e->subject, a); /* CLONE_THREAD */
		break;
	case HS_DEC_MIGRATE:
		detail(e, "pid %" PRId64 " moves from cpu %" PRId64 " to cpu %" PRId64, a, b, c);
		break;
	case HS_DEC_FILE_FAULT:
		detail(e, "%s (pid %d) faults on a mapped file: dev %" PRId64 ":%" PRId64 " inode %" PRId64
			  " page %" PRId64,
		       comm, pid, (a >> 20) & 0xfff, a & 0xfffff, b, c);
		break;
	case HS_DEC_LOCK_BEGIN:
	case HS_DEC_LOCK_END:
		detail(e, "%s (pid %d) %s kernel lock 0x%" PRIx64, comm, pid,
		       sh == HS_DEC_LOCK_BEGIN ? "waits for contended" : "got or gave up", (uint64_t)a);
		break;
	case HS_DEC_NONE: return false;
	}
	const int64_t val[3] = {a, b, c};
	for (unsigned k = 0; k < reads[sh].nv; k++)
		e->v[k] = val[k];
	return true;
}
