/* report/cause/r_fault.c: reason "fault-io": blocked (D) right after faulting on a mapped file: the page had to be read from disk. */
#include <inttypes.h>
#include <stdio.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const cm_model *m = c->m;
	uint64_t look = c->vocab->lookback_ms * 1000000ull;
	uint64_t from = s->run_from ? s->run_from : (s->t0 > look ? s->t0 - look : 0);
	size_t f = ca_last_by(m, CM_FILE_FAULT, c->tid, from, s->t0 + 1);
	if (f == SIZE_MAX)
		return;
	const cm_rec *r = &m->recs[f];
	/* reads it queued since it got the CPU: the fault's I/O */
	unsigned reads = 0;
	int64_t bytes = 0;
	bool bios = false;
	for (size_t i = ca_rec_at(m, from); i < m->n && m->recs[i].ts <= s->t0 && !bios; i++)
		bios = m->recs[i].kind == CM_BLOCK && m->recs[i].pid == c->tid && !m->recs[i].b;
	for (size_t i = ca_rec_at(m, from); i < m->n && m->recs[i].ts <= s->t0; i++)
		if (m->recs[i].kind == CM_BLOCK && m->recs[i].pid == c->tid && m->recs[i].b == !bios) {
			reads++;
			bytes += m->recs[i].y;
		}
	char what[160], ev[240], t[32];
	snprintf(what, sizeof what, "page faults on a file of dev %d:%d (inode %" PRId64 ")", (int)((r->a >> 20) & 0xfff),
		 (int)(r->a & 0xfffff), r->x);
	ca_fmt_ns(s->t1 - s->t0, t, sizeof t);
	if (reads)
		snprintf(ev, sizeof ev, "the thread faulted on page %" PRId64 " of inode %" PRId64 ", queued %u reads (%.1f MB) and "
				       "waited %s for them",
			 r->y, r->x, reads, (double)bytes / 1048576.0, t);
	else
		snprintf(ev, sizeof ev, "the thread faulted on page %" PRId64 " of inode %" PRId64 " and waited %s", r->y, r->x, t);
	ca_culprit k;
	ca_culprit_thing(&k, "the disk");
	ca_claim(c, s->t0, s->t1, def->id, &k, what, ev);
}

const ca_classifier ca_r_fault = {"fault-io", 1u << CM_ST_DISK, classify};
