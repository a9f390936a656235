/* ftrace/tracefs_api.c: the production hs_tracefs_api: the only file of the engine that calls libtracefs, and the one that mounts tracefs. */
#include "ftrace/tracefs_api.h"

#include <sys/mount.h>
#include <unistd.h>

#include "hindsight/compat.h"

/* Mechanism, not policy: the folder pairs with tracefs's one global namespace
 * of instance names, whatever the rules' run folder. /run is a tmpfs, so the
 * locks go at reboot together with the instances they guard, and only root
 * writes there (as only root makes instances). */
#define HS_TRACEFS_LOCK_DIR "/run/hindsight"

static int sys_mount(const char *target)
{
	return mount("nodev", target, "tracefs", 0, NULL);
}

const hs_tracefs_api hs_tracefs_api_libtracefs = {
	.tracing_dir = tracefs_tracing_dir,
	.mount = sys_mount,
	.cpus = hs_cpu_count,
	.lock_dir = HS_TRACEFS_LOCK_DIR,
	.kallsyms = "/proc/kallsyms",
	.modules = "/proc/modules",
	.instance_exists = tracefs_instance_exists,
	.instance_create = tracefs_instance_create,
	.instance_alloc = tracefs_instance_alloc,
	.instance_destroy = tracefs_instance_destroy,
	.instance_free = tracefs_instance_free,
	.instance_set_buffer_size = tracefs_instance_set_buffer_size,
	.instance_get_buffer_size = tracefs_instance_get_buffer_size,
	.instance_file_read = tracefs_instance_file_read,
	.instance_file_write = tracefs_instance_file_write,
	.instance_file_open = tracefs_instance_file_open,
	.file_exists = tracefs_file_exists,
	.trace_on = tracefs_trace_on,
	.trace_off = tracefs_trace_off,
	.option_enable = tracefs_option_enable,
	.option_disable = tracefs_option_disable,
	.get_clock = tracefs_get_clock,
	.error_last = tracefs_error_last,
	.local_events_system = tracefs_local_events_system,
	.event_enable = tracefs_event_enable,
	.event_disable = tracefs_event_disable,
	.event_file_read = tracefs_event_file_read,
	.filter_string_verify = tracefs_filter_string_verify,
	.event_filter_apply = tracefs_event_filter_apply,
	.cpu_open = tracefs_cpu_open,
	.cpu_close = tracefs_cpu_close,
	.cpu_read = tracefs_cpu_read,
	.cpu_buffered_read = tracefs_cpu_buffered_read,
	.cpu_flush = tracefs_cpu_flush,
	.cpu_write = tracefs_cpu_write,
	.cpu_flush_write = tracefs_cpu_flush_write,
};

static const hs_tracefs_api *g_api = &hs_tracefs_api_libtracefs;

const hs_tracefs_api *hs_tracefs_api_get(void)
{
	return g_api;
}

void hs_tracefs_api_set(const hs_tracefs_api *api)
{
	g_api = api ? api : &hs_tracefs_api_libtracefs;
}
