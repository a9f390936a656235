/* backend/table.c: the backends this build has, by name, and launch mode through the native one's table. */
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
