/* report/find/retransmit.c: the retransmit detector: a TCP connection (its port pair) retransmitting in bursts, at least 5 within a second. */
#include <inttypes.h>
#include <stdio.h>

#include "report/find/common.h"

static void find_retransmits(hs_report *r)
{
	hs_rpt_finding *f = NULL;
	size_t bursts = 0;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (e->shape != HS_DEC_RETRANSMIT)
			continue;
		size_t n = 0, last = i;
		for (size_t j = i; j < r->n_events && r->events[j].ts - e->ts <= 1000000000ull; j++)
			if (r->events[j].shape == HS_DEC_RETRANSMIT && r->events[j].v[0] == e->v[0] &&
			    r->events[j].v[1] == e->v[1]) {
				n++;
				last = j;
			}
		if (n < 5)
			continue;
		bursts++;
		char span[32];
		hs_rpt_ms_after(e->ts, r->events[last].ts, span, sizeof span);
		if (!f) {
			if (!(f = hs_rpt_new_finding(r, "disconnect", 55, e->ts, e->pid)))
				return;
			char when[32];
			hs_rpt_fmt_ts(e->ts, when, sizeof when);
			snprintf(f->verdict, sizeof f->verdict,
				 "A TCP connection (local port %" PRId64 ", remote port %" PRId64
				 ") retransmitted %zu times in %s from %s s: packets were lost or the peer stalled.",
				 e->v[0], e->v[1], n, span, when);
			snprintf(f->text, sizeof f->text,
				 "Retransmits come in bursts when the path drops packets or the peer stops acknowledging; the "
				 "application sees a stalled transfer, then maybe a reset or a timeout.");
			snprintf(f->next, sizeof f->next,
				 "the link (ip -s link, the NIC's drops), the peer's health, and whether a reset or a socket "
				 "error followed (inet_sk_error_report)");
		}
		hs_rpt_add_note(r, f, "%zu retransmits in %s on local port %" PRId64 ", remote port %" PRId64, n, span,
				e->v[0], e->v[1]);
		hs_rpt_add_ev(r, f, i);
		hs_rpt_add_ev(r, f, last);
		i = last; /* the rest of this burst */
	}
	if (f)
		snprintf(f->title, sizeof f->title, "%zu retransmit burst%s", bursts, bursts == 1 ? "" : "s");
}

const hs_rpt_detector hs_rpt_find_retransmit = {"disconnect", 55, HS_RPT_LINUX, NULL, .find = find_retransmits};
