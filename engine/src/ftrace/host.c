/* ftrace/host.c: what the tracefs backend does on this machine beside its sessions: the instance names claimed for a run, and the names of live tasks. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ftrace/ftrace.h"
#include "ftrace/instance.h"
#include "hindsight/detect.h"
#include "hindsight/limits.h"

/* ---- the sessions' tracefs instance names ---- */

/* What a previous owner that died left with each name (index = plan session),
 * from the claim until the run folder is known. */
static long *g_prev_pid;
static char **g_prev_dir;

static void forget_previous(const hs_plan *plan)
{
	for (size_t i = 0; g_prev_dir && i < plan->n_sessions; i++)
		free(g_prev_dir[i]);
	free(g_prev_dir);
	free(g_prev_pid);
	g_prev_dir = NULL;
	g_prev_pid = NULL;
}

hs_status hs_ftrace_sessions_claim(const hs_plan *plan, const hs_msg *msg)
{
	if (plan->platform != HS_PLATFORM_LINUX)
		return HS_OK; /* a Windows plan's logger names are no tracefs instances */
	if (!(g_prev_pid = calloc(plan->n_sessions + 1, sizeof(*g_prev_pid))) ||
	    !(g_prev_dir = calloc(plan->n_sessions + 1, sizeof(*g_prev_dir)))) {
		forget_previous(plan);
		hs_msg_say(msg, HS_MSG_ERROR, "run", "out of memory");
		return HS_ENOMEM;
	}
	for (size_t i = 0; i < plan->n_sessions; i++) {
		const char *name = plan->sessions[i].session->logger_name;
		if (name && hs_ftrace_claim(name, "ftrace", msg, &g_prev_pid[i], &g_prev_dir[i]) != HS_OK) {
			hs_ftrace_sessions_release(plan);
			return HS_EIO;
		}
		/* Its trigger-detection instance's name too (detect.h): the same
		 * rule the backend follows when it makes one. */
		char det[HS_LINUX_MAX_INSTANCE_CHARS * 2 + sizeof(HS_LINUX_DETECT_SUFFIX)];
		if (hs_plan_session_has_trigger_copy(plan, i) && hs_plan_detect_name(name, det, sizeof det) &&
		    hs_ftrace_claim(det, "ftrace", msg, NULL, NULL) != HS_OK) {
			hs_ftrace_sessions_release(plan);
			return HS_EIO;
		}
	}
	return HS_OK;
}

void hs_ftrace_sessions_adopt(const hs_plan *plan, const char *run_dir, const hs_msg *msg)
{
	if (plan->platform != HS_PLATFORM_LINUX)
		return;
	char *abs = realpath(run_dir, NULL);
	for (size_t i = 0; i < plan->n_sessions; i++) {
		const char *name = plan->sessions[i].session->logger_name;
		if (name)
			hs_ftrace_claim_note(name, abs ? abs : run_dir);
		char det[HS_LINUX_MAX_INSTANCE_CHARS * 2 + sizeof(HS_LINUX_DETECT_SUFFIX)];
		if (hs_plan_session_has_trigger_copy(plan, i) && hs_plan_detect_name(name, det, sizeof det))
			hs_ftrace_claim_note(det, abs ? abs : run_dir);
	}
	free(abs);
	/* Only now, with this run's note in place: a rescue that itself dies is not retried forever. */
	for (size_t i = 0; g_prev_dir && i < plan->n_sessions; i++)
		if (g_prev_dir[i])
			hs_ftrace_rescue_chunks(&plan->sessions[i], g_prev_dir[i], g_prev_pid[i], "ftrace", msg);
	forget_previous(plan);
}

void hs_ftrace_sessions_release(const hs_plan *plan)
{
	for (size_t i = 0; plan->platform == HS_PLATFORM_LINUX && i < plan->n_sessions; i++) {
		const char *name = plan->sessions[i].session->logger_name;
		if (name)
			hs_ftrace_release(name);
		char det[HS_LINUX_MAX_INSTANCE_CHARS * 2 + sizeof(HS_LINUX_DETECT_SUFFIX)];
		if (hs_plan_session_has_trigger_copy(plan, i) && hs_plan_detect_name(name, det, sizeof det))
			hs_ftrace_release(det);
	}
	forget_previous(plan);
}

/* ---- live tasks' names ---- */

/* /proc first (the task is usually still there: key events are seen within a
 * wake-up of tens of ms), else the kernel's saved_cmdlines through the comm table the
 * .dat writers keep (ftrace/dat.c: it skips the kernel's "<...>" and remembers every pid it saw). */
bool hs_ftrace_task_name(int pid, char *out, size_t cap)
{
	if (pid <= 0 || !cap)
		return false;
	char path[64], comm[64];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, comm, sizeof comm - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return hs_ftrace_comm_lookup(pid, out, cap);
	comm[n] = 0;
	comm[strcspn(comm, "\n")] = 0;
	snprintf(out, cap, "%s", comm);
	return true;
}
