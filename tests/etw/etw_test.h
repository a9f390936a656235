/* etw_test.h: what the ETW test programs (test_etw.c, test_etw_realtime.c) share: the recorder, a session by mode, the messages as the engine prints them. */
#ifndef HS_ETW_TEST_H
#define HS_ETW_TEST_H

#include <stdlib.h>
#include <string.h>

#include "../unit/testkit.h"
#include "etw/etw.h"
#include "plan/etw_realtime.h"
/* After windows.h (etw.h brings it). */
#include <shellapi.h>
#include "hindsight/backend.h"
#include "hindsight/diag.h"
#include "hindsight/etl.h"
#include "hindsight/trigger.h"
#include "recorder.h"

/* Each program's arguments: the rules folder and the goldens'. */
static const char *rules_dir, *golden_dir;

static const hs_plan_session *session_of(const hs_plan *plan, hs_session_mode mode)
{
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session->mode == mode)
			return &plan->sessions[i];
	return NULL;
}

/* Messages the backend printed, captured in a file of the test's folder. */
static FILE *msg_open(void)
{
	return fopen("etw-test-messages.txt", "w+b");
}

/* The engine's sink over f: the messages read as the engine prints them. */
static const hs_msg *msg_sink(FILE *f)
{
	static hs_msg_file sink;
	static hs_msg m = {.fn = hs_msg_file_fn, .ctx = &sink};
	sink = (hs_msg_file){.f = f, .prefix = "engine"};
	return &m;
}

static char *msg_take(FILE *f)
{
	char *s = hs_test_slurp(f);
	fclose(f);
	return s;
}

#endif
