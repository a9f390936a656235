/* ftrace/tracefs_api.h: the one table through which the Linux backend and launch mode call libtracefs (and mount tracefs); tests substitute a recorder. */
#ifndef HS_TRACEFS_API_H
#define HS_TRACEFS_API_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <tracefs/tracefs.h>

/*
 * Every libtracefs call of engine/src (every file of ftrace/, perf/tree_events.c) goes
 * through this table, as etw/etw_api.h does for Windows, so that
 *  - the set of calls is small and reviewed in one place (tracefs_api.c), and
 *  - tests record the exact call sequence without root or a tracefs mount and
 *    inject the failures the kernel returns (tests/ftrace/tracefs_recorder.c,
 *    the goldens in tests/ftrace/golden/, one .calls file each; policy:tracefs_through_table
 *    fails on a direct call anywhere else).
 * The libtracefs entries are named as the library names them without the
 * `tracefs_` prefix and have its signatures unchanged; the production table
 * points at the library itself.
 *
 * What else is in, and why: the mount of tracefs (the one system call the
 * backend makes on tracefs itself, when libtracefs finds no mount), the number
 * of per-CPU rings the instances have (the backend makes one reader, one stats
 * read and one chunk file per CPU: a fake kernel must be able to say 2), and
 * the folder of the instance-name locks (they guard tracefs's one namespace
 * of instance names, so a fake tracefs has a namespace, and locks, of its own;
 * a test run as root then never claims a real engine's names).
 *
 * What is not, and why:
 *  - read, splice, write and close on the descriptors tracefs_instance_file_open
 *    returns (a snapshot's per_cpu/cpuN/trace_pipe_raw, snapshot.c; the
 *    trace_marker of mark(), backend.c): the descriptor is the seam; wrapping
 *    each read of the snapshot's hot loop would be a file layer of our own. A
 *    recorder hands out descriptors whose reads return nothing.
 *  - libtracecmd (dat.c, the .dat headers and comms) and libtraceevent (formats,
 *    kbuffer): they are not tracefs calls. libtracecmd reads the tracing
 *    directory this table names (tracing_dir, through dat.c's private copy of
 *    it), so under a recorder it reads the recorder's directory.
 *  - /proc (task names, the engine's own threads), the run folder's chunk files
 *    and the /run lock files themselves: not tracefs.
 *
 * Ownership: the table is static and never freed; hs_tracefs_api_set keeps the
 * pointer it is given until the next call. What each entry returns is owned as
 * libtracefs documents it (malloc'd strings freed by the caller, instances by
 * instance_free, readers by cpu_close, the tep by tep_free).
 */
typedef struct hs_tracefs_api {
	/* ---- the mount ---- */
	/* The tracefs mount point, NULL when there is none. */
	const char *(*tracing_dir)(void);
	/* mount("nodev", target, "tracefs", 0, NULL): 0, or -1 with errno. */
	int (*mount)(const char *target);
	/* Per-CPU rings of an instance: sysconf(_SC_NPROCESSORS_CONF), at least 1. */
	unsigned (*cpus)(void);
	/* Where the instance-name locks live (ftrace/instance.c: one file per name). */
	const char *lock_dir;
	/* The kernel's symbols and its module list (/proc/kallsyms, /proc/modules): a snapshot's .dat headers carry
	 * the symbols, read again when the modules change (dat.c). A fake kernel has small ones of its own: 5 MB of
	 * the host's symbols through libtracecmd's 8 KB buffer growth were most of the call goldens' time under ASan
	 * (227 s in a fresh-clone CI, 4 s in the product build). */
	const char *kallsyms, *modules;

	/* ---- instances ---- */
	bool (*instance_exists)(const char *name);
	struct tracefs_instance *(*instance_create)(const char *name);
	struct tracefs_instance *(*instance_alloc)(const char *tracing_dir, const char *name);
	int (*instance_destroy)(struct tracefs_instance *instance);
	void (*instance_free)(struct tracefs_instance *instance);
	int (*instance_set_buffer_size)(struct tracefs_instance *instance, size_t size, int cpu);
	ssize_t (*instance_get_buffer_size)(struct tracefs_instance *instance, int cpu);
	/* Files of an instance (NULL: the top one). */
	char *(*instance_file_read)(struct tracefs_instance *instance, const char *file, int *psize);
	int (*instance_file_write)(struct tracefs_instance *instance, const char *file, const char *str);
	int (*instance_file_open)(struct tracefs_instance *instance, const char *file, int mode);
	bool (*file_exists)(struct tracefs_instance *instance, const char *name);
	int (*trace_on)(struct tracefs_instance *instance);
	int (*trace_off)(struct tracefs_instance *instance);
	int (*option_enable)(struct tracefs_instance *instance, enum tracefs_option_id id);
	int (*option_disable)(struct tracefs_instance *instance, enum tracefs_option_id id);
	char *(*get_clock)(struct tracefs_instance *instance);
	char *(*error_last)(struct tracefs_instance *instance);

	/* ---- events ---- */
	struct tep_handle *(*local_events_system)(const char *tracing_dir, const char *const *sys_names);
	int (*event_enable)(struct tracefs_instance *instance, const char *system, const char *event);
	int (*event_disable)(struct tracefs_instance *instance, const char *system, const char *event);
	char *(*event_file_read)(struct tracefs_instance *instance, const char *system, const char *event,
				 const char *file, int *psize);
	int (*filter_string_verify)(struct tep_event *event, const char *filter, char **err);
	int (*event_filter_apply)(struct tracefs_instance *instance, struct tep_event *event, const char *filter);

	/* ---- per-CPU ring readers ---- */
	struct tracefs_cpu *(*cpu_open)(struct tracefs_instance *instance, int cpu, bool nonblock);
	void (*cpu_close)(struct tracefs_cpu *tcpu);
	int (*cpu_read)(struct tracefs_cpu *tcpu, void *buffer, bool nonblock);
	int (*cpu_buffered_read)(struct tracefs_cpu *tcpu, void *buffer, bool nonblock);
	int (*cpu_flush)(struct tracefs_cpu *tcpu, void *buffer);
	int (*cpu_write)(struct tracefs_cpu *tcpu, int wfd, bool nonblock);
	int (*cpu_flush_write)(struct tracefs_cpu *tcpu, int wfd);
} hs_tracefs_api;

/* The production table: libtracefs, mount(2), sysconf, /run/hindsight. */
extern const hs_tracefs_api hs_tracefs_api_libtracefs;

/* The table in use (hs_tracefs_api_libtracefs unless a test set another; NULL sets it back). */
const hs_tracefs_api *hs_tracefs_api_get(void);
void hs_tracefs_api_set(const hs_tracefs_api *api);

#endif
