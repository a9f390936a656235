/* analyze/report_decode.c: what a trace.dat record means for `analyze report`: its shape (by the fields its format declares), the catalog's alert and story, and a one-line decoded payload. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/*
 * No tracepoint name is written here: which events are key events is the
 * rules' business, and what an event means for a report comes from the
 * catalog's `alert:` tag (crash, oom-kill, hang, io-error, disconnect, ...).
 * The payload is read through the field names the event's own format in the
 * file declares (libtraceevent), so a record is recognised by its shape: a
 * signal delivery has sig + sa_handler, an exec has filename + old_pid, and so
 * on. Those field layouts are the kernel's tracepoint formats: format
 * knowledge, as the signal numbering below is.
 */

/* Linux generic/x86 numbering and default actions (signal(7)). */
static const struct {
	const char *name;
	sig_action act;
} sigs[] = {
	[1] = {"SIGHUP", ACT_TERM},	[2] = {"SIGINT", ACT_TERM},	  [3] = {"SIGQUIT", ACT_CORE},
	[4] = {"SIGILL", ACT_CORE},	[5] = {"SIGTRAP", ACT_CORE},	  [6] = {"SIGABRT", ACT_CORE},
	[7] = {"SIGBUS", ACT_CORE},	[8] = {"SIGFPE", ACT_CORE},	  [9] = {"SIGKILL", ACT_TERM},
	[10] = {"SIGUSR1", ACT_TERM},	[11] = {"SIGSEGV", ACT_CORE},	  [12] = {"SIGUSR2", ACT_TERM},
	[13] = {"SIGPIPE", ACT_TERM},	[14] = {"SIGALRM", ACT_TERM},	  [15] = {"SIGTERM", ACT_TERM},
	[16] = {"SIGSTKFLT", ACT_TERM}, [17] = {"SIGCHLD", ACT_IGNORE},  [18] = {"SIGCONT", ACT_CONT},
	[19] = {"SIGSTOP", ACT_STOP},	[20] = {"SIGTSTP", ACT_STOP},	  [21] = {"SIGTTIN", ACT_STOP},
	[22] = {"SIGTTOU", ACT_STOP},	[23] = {"SIGURG", ACT_IGNORE},	  [24] = {"SIGXCPU", ACT_CORE},
	[25] = {"SIGXFSZ", ACT_CORE},	[26] = {"SIGVTALRM", ACT_TERM},  [27] = {"SIGPROF", ACT_TERM},
	[28] = {"SIGWINCH", ACT_IGNORE}, [29] = {"SIGIO", ACT_TERM},	  [30] = {"SIGPWR", ACT_TERM},
	[31] = {"SIGSYS", ACT_CORE},
};

const char *rpt_sig_name(int64_t sig, char *buf, size_t cap)
{
	if (sig > 0 && (size_t)sig < sizeof sigs / sizeof sigs[0] && sigs[sig].name)
		return sigs[sig].name;
	snprintf(buf, cap, "signal %" PRId64, sig);
	return buf;
}

sig_action rpt_sig_action(int64_t sig)
{
	if (sig > 0 && (size_t)sig < sizeof sigs / sizeof sigs[0] && sigs[sig].name)
		return sigs[sig].act;
	return sig >= 34 && sig <= 64 ? ACT_TERM : ACT_IGNORE; /* real-time signals terminate */
}

/* Copies s into buf as valid UTF-8 without control characters: an invalid
 * byte becomes U+FFFD, a control character a space. Payload text is
 * untrusted; every renderer can then rely on this. */
void rpt_clean_utf8(const char *s, char *buf, size_t cap)
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

static bool has_field(const hs_tracedat_record *r, const char *f)
{
	int64_t v;
	char s[8];
	return hs_tracedat_field_int(r, f, &v) || hs_tracedat_field_str(r, f, s, sizeof s);
}

rpt_shape rpt_shape_of(const hs_tracedat_record *r, const char *alert)
{
	if (has_field(r, "sig") && has_field(r, "sa_handler"))
		return SH_SIG_DELIVER;
	if (has_field(r, "sig") && has_field(r, "result") && has_field(r, "group"))
		return SH_SIG_GENERATE;
	if (has_field(r, "anon_rss") && has_field(r, "total_vm"))
		return SH_OOM_VICTIM;
	if (has_field(r, "address") && has_field(r, "ip") && has_field(r, "error_code"))
		return SH_FAULT;
	if (has_field(r, "filename") && has_field(r, "old_pid"))
		return SH_EXEC;
	if (has_field(r, "child_pid") && has_field(r, "parent_pid"))
		return SH_FORK;
	if (has_field(r, "group_dead") && has_field(r, "prio"))
		return SH_EXIT;
	if (has_field(r, "error_code") && has_field(r, "__syscall_nr"))
		return SH_EXIT_GROUP;
	if (alert && strcmp(alert, "hang") == 0)
		return SH_HANG;
	if (alert && strcmp(alert, "io-error") == 0)
		return SH_IO_ERROR;
	if (has_field(r, "error") && has_field(r, "sector") && has_field(r, "rwbs"))
		return SH_IO_ERROR; /* a completion: an error only when error != 0 */
	if (alert && strcmp(alert, "disconnect") == 0)
		return SH_DISCONNECT;
	if (alert)
		return SH_ALERT;
	if (has_field(r, "msg") && !has_field(r, "ip"))
		return SH_CONSOLE;
	if (has_field(r, "buf") && has_field(r, "ip"))
		return SH_MARKER;
	return SH_NONE;
}

/* Decodes a record of a known shape into e (detail, values). Returns false when
 * the record is not worth keeping (a fault far from NULL, a signal that kills
 * nobody, a completion without error, a marker that is not the engine's). */
bool rpt_decode(const hs_tracedat_record *r, rpt_shape sh, rpt_event *e)
{
	int64_t a = 0, b = 0, c = 0, d = 0;
	char s1[256] = "", s2[64] = "", sb[24];
	e->shape = sh;
	switch (sh) {
	case SH_SIG_DELIVER:
		hs_tracedat_field_int(r, "sig", &a);
		hs_tracedat_field_int(r, "sa_handler", &b);
		if (rpt_sig_action(a) != ACT_CORE && rpt_sig_action(a) != ACT_TERM)
			return false;
		e->v[0] = a;
		e->v[1] = b == 0; /* SIG_DFL: the default action happens now */
		snprintf(e->detail, sizeof e->detail, "%s delivered to %s (pid %d): %s", rpt_sig_name(a, sb, sizeof sb),
			 e->comm, e->pid,
			 b == 0 ? (rpt_sig_action(a) == ACT_CORE ? "default action, the process dies with a core dump"
								 : "default action, the process is terminated")
			 : b == 1 ? "ignored"
				  : "its own handler runs");
		return true;
	case SH_SIG_GENERATE:
		hs_tracedat_field_int(r, "sig", &a);
		hs_tracedat_field_int(r, "pid", &b);
		hs_tracedat_field_int(r, "result", &c);
		hs_tracedat_field_str(r, "comm", s2, sizeof s2);
		if (rpt_sig_action(a) != ACT_CORE && rpt_sig_action(a) != ACT_TERM)
			return false;
		rpt_clean_utf8(s2, s1, 64);
		e->v[0] = a;
		e->v[1] = b;
		snprintf(e->detail, sizeof e->detail, "%s sent to %s (pid %" PRId64 ") by %s (pid %d)%s",
			 rpt_sig_name(a, sb, sizeof sb), s1, b, e->comm, e->pid, c ? " (not delivered)" : "");
		return true;
	case SH_OOM_VICTIM:
		hs_tracedat_field_int(r, "pid", &a);
		hs_tracedat_field_int(r, "anon_rss", &b);
		hs_tracedat_field_int(r, "file_rss", &c);
		hs_tracedat_field_int(r, "shmem_rss", &d);
		if (!hs_tracedat_field_str(r, "comm", s2, sizeof s2))
			snprintf(s2, sizeof s2, "?");
		rpt_clean_utf8(s2, e->subject, sizeof e->subject);
		e->v[0] = a;
		e->v[1] = b;
		snprintf(e->detail, sizeof e->detail,
			 "OOM killer chose %s (pid %" PRId64 "): anon_rss %" PRId64 " kB, file_rss %" PRId64 " kB, shmem_rss %" PRId64
			 " kB",
			 e->subject, a, b, c, d);
		return true;
	case SH_FAULT:
		hs_tracedat_field_int(r, "address", &a);
		hs_tracedat_field_int(r, "ip", &b);
		if ((uint64_t)a >= 4096)
			return false; /* only the NULL page matters to a report */
		e->v[0] = a;
		e->v[1] = b;
		snprintf(e->detail, sizeof e->detail, "page fault at 0x%" PRIx64 " (ip 0x%" PRIx64 "): a NULL-pointer access",
			 (uint64_t)a, (uint64_t)b);
		return true;
	case SH_EXEC:
		hs_tracedat_field_str(r, "filename", s1, sizeof s1);
		hs_tracedat_field_int(r, "pid", &a);
		rpt_clean_utf8(s1, e->subject, sizeof e->subject);
		e->v[0] = a;
		snprintf(e->detail, sizeof e->detail, "exec %s (pid %" PRId64 ")", e->subject, a);
		return true;
	case SH_FORK:
		hs_tracedat_field_int(r, "parent_pid", &a);
		hs_tracedat_field_int(r, "child_pid", &b);
		hs_tracedat_field_str(r, "child_comm", s2, sizeof s2);
		rpt_clean_utf8(s2, e->subject, sizeof e->subject);
		e->v[0] = a;
		e->v[1] = b;
		snprintf(e->detail, sizeof e->detail, "fork: pid %" PRId64 " made %s (pid %" PRId64 ")", a, e->subject, b);
		return true;
	case SH_EXIT:
		hs_tracedat_field_int(r, "pid", &a);
		hs_tracedat_field_int(r, "group_dead", &b);
		if (hs_tracedat_field_str(r, "comm", s2, sizeof s2))
			rpt_clean_utf8(s2, e->subject, sizeof e->subject);
		e->v[0] = a;
		e->v[1] = b;
		/* the detail is written once every event is sorted: how it ended is known then */
		return true;
	case SH_EXIT_GROUP:
		hs_tracedat_field_int(r, "error_code", &a);
		e->v[0] = a & 0xff;
		snprintf(e->detail, sizeof e->detail, "%s (pid %d) exits with status %" PRId64, e->comm, e->pid, a & 0xff);
		return true;
	case SH_IO_ERROR:
		hs_tracedat_field_int(r, "error", &a);
		if (!a && !e->alert)
			return false;
		hs_tracedat_field_int(r, "dev", &b);
		hs_tracedat_field_int(r, "sector", &c);
		hs_tracedat_field_str(r, "rwbs", s2, sizeof s2);
		rpt_clean_utf8(s2, s1, 16);
		e->v[0] = a;
		e->v[1] = b;
		snprintf(e->detail, sizeof e->detail, "I/O error %" PRId64 " on dev %" PRId64 ":%" PRId64 " (%s) sector %" PRId64,
			 a, (b >> 20) & 0xfff, b & 0xfffff, s1, c);
		return true;
	case SH_CONSOLE:
		hs_tracedat_field_str(r, "msg", s1, sizeof s1);
		rpt_clean_utf8(s1, e->detail, sizeof e->detail);
		return e->detail[0] != '\0';
	case SH_MARKER:
		hs_tracedat_field_str(r, "buf", s1, sizeof s1);
		/* the engine's trigger marker, and the starts of atrace slices (frame starts) */
		if (strncmp(s1, "hindsight:", 10) != 0 && strncmp(s1, "B|", 2) != 0)
			return false;
		e->v[0] = s1[0] == 'B';
		rpt_clean_utf8(s1, e->detail, sizeof e->detail);
		return true;
	case SH_HANG:
		if (hs_tracedat_field_str(r, "comm", s2, sizeof s2))
			rpt_clean_utf8(s2, e->subject, sizeof e->subject);
		hs_tracedat_field_int(r, "pid", &a);
		e->v[0] = a;
		snprintf(e->detail, sizeof e->detail, "%s (pid %" PRId64 ") stuck in uninterruptible sleep (D state)",
			 e->subject[0] ? e->subject : e->comm, a);
		return true;
	case SH_DISCONNECT:
		hs_tracedat_field_int(r, "sport", &a);
		hs_tracedat_field_int(r, "dport", &b);
		e->v[0] = a;
		e->v[1] = b;
		snprintf(e->detail, sizeof e->detail, "connection reset: port %" PRId64 " <-> %" PRId64, a, b);
		return true;
	case SH_ALERT:
		snprintf(e->detail, sizeof e->detail, "%s event (catalog alert)", e->alert);
		return true;
	case SH_NONE:
		break;
	}
	return false;
}
