/* report/cause/r_io.c: reason "io-wait": blocked (D) on I/O: the system call it was in (fsync, read...) and the block I/O it had queued, with the device; any other D wait is I/O or a kernel lock the trace does not tell apart. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const cm_model *m = c->m;
	uint64_t look = c->vocab->lookback_ms * 1000000ull;
	uint64_t from = s->run_from ? s->run_from : (s->t0 > look ? s->t0 - look : 0);
	/* the call it is in: its newest entry with no exit after it, looked for as far back as the look-back
	 * (a long fsync blocks, wakes and blocks again many times) */
	size_t sc = SIZE_MAX;
	for (size_t k = ca_rec_at(m, s->t0 + 1); k-- > 0;) {
		const cm_rec *r = &m->recs[k];
		if (s->t0 - r->ts > look)
			break;
		if (r->pid != c->tid)
			continue;
		if (r->kind == CM_SYSCALL_OUT)
			break;
		if (r->kind == CM_SYSCALL_IN) {
			sc = k;
			break;
		}
	}
	unsigned n_io = 0;
	int64_t bytes = 0;
	int32_t dev = 0;
	char rw[8] = "";
	uint64_t io_from = sc != SIZE_MAX ? m->recs[sc].ts : from;
	/* one I/O is logged as a bio and as a request: count the bios when the ring has them, else the requests */
	bool bios = false;
	for (size_t i = ca_rec_at(m, io_from); i < m->n && m->recs[i].ts <= s->t1 && !bios; i++)
		bios = m->recs[i].kind == CM_BLOCK && m->recs[i].pid == c->tid && !m->recs[i].b;
	for (size_t i = ca_rec_at(m, io_from); i < m->n && m->recs[i].ts <= s->t1; i++) {
		const cm_rec *r = &m->recs[i];
		if (r->kind == CM_BLOCK && r->pid == c->tid && r->b == !bios) {
			n_io++;
			bytes += r->y;
			dev = r->a;
			snprintf(rw, sizeof rw, "%s", cm_str(m, r->s));
		}
	}
	char what[160] = "", ev[240], t[32], io[96] = "";
	if (n_io)
		snprintf(io, sizeof io, "%u %ss (%.1f MB) on dev %d:%d", n_io,
			 rw[0] == 'R' ? "read" : strchr(rw, 'W') ? "write" : "I/O", (double)bytes / 1048576.0, (int)((dev >> 20) & 0xfff),
			 (int)(dev & 0xfffff));
	if (sc != SIZE_MAX) {
		const cm_rec *r = &m->recs[sc];
		if (r->x >= 0)
			snprintf(what, sizeof what, "%s(fd %" PRId64 ")%s%s", cm_str(m, r->s), r->x, io[0] ? ", " : "", io);
		else
			snprintf(what, sizeof what, "%s()%s%s", cm_str(m, r->s), io[0] ? ", " : "", io);
	} else if (n_io) {
		snprintf(what, sizeof what, "%s", io);
	} else {
		snprintf(what, sizeof what, "an uninterruptible wait (I/O or a kernel lock; the trace does not say which)");
	}
	ca_fmt_ns(s->t1 - s->t0, t, sizeof t);
	snprintf(ev, sizeof ev, "the thread was blocked (D) for %s in %s", t, what);
	ca_culprit k;
	ca_culprit_thing(&k, n_io || sc != SIZE_MAX ? "the disk" : "the kernel");
	ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
}

const ca_classifier ca_r_io = {"io-wait", 1u << CM_ST_DISK, classify};
