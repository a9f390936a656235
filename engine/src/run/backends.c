/* run/backends.c: the backends this build has, by name, and the native one's operations under their first names. */
#include <string.h>

#include "hindsight/backend.h"

/* Built into the library that holds the kernel backend (hindsight on Linux,
 * hindsight_etw on Windows), which HS_NATIVE_BACKEND names; without one the
 * build has replay only. */
const hs_backend_ops *hs_backend_native(void)
{
#if defined(HS_NATIVE_BACKEND)
	return &HS_NATIVE_BACKEND;
#else
	return NULL;
#endif
}

const hs_backend_ops *hs_backend_find(const char *name)
{
	const hs_backend_ops *all[] = {hs_backend_native(), &hs_backend_replay};
	for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] && !strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

/* Launch mode is the native backend's (hs_backend_ops.launch). */
hs_status hs_launch_run(const hs_plan *plan, const hs_launch_opts *o, const hs_msg *msg, hs_launch_result *res)
{
	const hs_backend_ops *ops = hs_backend_native();
	if (!ops || !ops->launch) {
		memset(res, 0, sizeof *res);
		hs_msg_say(msg, HS_MSG_ERROR, "launch", "this build has no backend that can launch a program");
		return HS_EUNSUPPORTED;
	}
	return ops->launch(plan, o, msg, res);
}

#if defined(HS_NATIVE_BACKEND)
hs_status hs_backend_start(const hs_plan *plan, const char *run_dir, const hs_backend_opts *opts, hs_backend **out)
{
	return HS_NATIVE_BACKEND.start(plan, run_dir, opts, out);
}

hs_status hs_backend_poll(hs_backend *b, int timeout_ms)
{
	return HS_NATIVE_BACKEND.poll(b, timeout_ms);
}

hs_status hs_backend_snapshot(hs_backend *b, size_t session, const char *path, bool final)
{
	return HS_NATIVE_BACKEND.snapshot(b, session, path, final);
}

hs_status hs_backend_set_observer(hs_backend *b, hs_key_event_fn fn, void *ctx)
{
	return HS_NATIVE_BACKEND.set_observer(b, fn, ctx);
}

hs_status hs_backend_session_status(hs_backend *b, size_t session, const hs_session_status **out)
{
	return HS_NATIVE_BACKEND.session_status(b, session, out);
}

size_t hs_backend_n_sessions(const hs_backend *b)
{
	return HS_NATIVE_BACKEND.n_sessions(b);
}

hs_status hs_backend_stop(hs_backend *b)
{
	return HS_NATIVE_BACKEND.stop(b);
}

void hs_backend_free(hs_backend *b)
{
	HS_NATIVE_BACKEND.free(b);
}
#endif
