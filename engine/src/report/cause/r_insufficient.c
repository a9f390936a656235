/* report/cause/r_insufficient.c: reason "insufficient-data": what no other reason could explain from the records: the thread's state unknown (no record of it), a wait whose end the ring lost, or its exit. */
#include <stdio.h>

#include "ca.h"

static void classify(ca_ctx *c, const ca_seg *s, const hs_cause_def *def)
{
	const char *what = s->st == CM_ST_UNKNOWN ? "no record says what the thread did"
			   : s->st == CM_ST_DEAD  ? "the thread had exited"
						  : "a wait the records do not explain";
	char ev[240], t[32];
	ca_fmt_ns(ca_free_in(c, s->t0, s->t1), t, sizeof t);
	snprintf(ev, sizeof ev, "%s of the thread's time: %s", t, what);
	ca_claim(c, s->t0, s->t1, def->id, NULL, what, ev);
}

const ca_classifier ca_r_insufficient = {"insufficient-data", 0xffu, classify};
