/* rules/counters.c: the counters a counter trigger can watch, one row each (name, unit, what it is, where it exists). */
#include "hindsight/rules.h"

/*
 * A row says what the rules may ask for; the run layer's readers
 * (run/counters_posix.c, run/counters_win.c) say how each is read. Shares of
 * time are 0..100; PSI exists only on Linux (Windows has no stall
 * accounting), the rest has a documented Windows call (docs/triggers.md,
 * "Counters").
 */
static const hs_counter_info counters[HS_COUNTER__COUNT] = {
	[HS_COUNTER_PSI_CPU_SOME] = {"psi_cpu_some", "%", "share of the window in which some task waited for a CPU",
				     "cpu", false, false, false, true, false, 100, "/proc/pressure/cpu", NULL},
	[HS_COUNTER_PSI_MEMORY_SOME] = {"psi_memory_some", "%",
					"share of the window in which some task stalled on memory (reclaim, refaults)",
					"memory", false, false, false, true, false, 100, "/proc/pressure/memory", NULL},
	[HS_COUNTER_PSI_MEMORY_FULL] = {"psi_memory_full", "%",
					"share of the window in which every running task stalled on memory at once",
					"memory", true, false, false, true, false, 100, "/proc/pressure/memory", NULL},
	[HS_COUNTER_PSI_IO_SOME] = {"psi_io_some", "%", "share of the window in which some task waited for I/O", "io",
				    false, false, false, true, false, 100, "/proc/pressure/io", NULL},
	[HS_COUNTER_PSI_IO_FULL] = {"psi_io_full", "%",
				    "share of the window in which every running task waited for I/O at once", "io",
				    true, false, false, true, false, 100, "/proc/pressure/io", NULL},
	[HS_COUNTER_CPU_PERCENT] = {"cpu_percent", "%", "the machine's CPUs busy (user, system, interrupts), all CPUs",
				    NULL, false, false, false, true, true, 100, "/proc/stat", "GetSystemTimes"},
	[HS_COUNTER_PROCESS_CPU_PERCENT] = {"process_cpu_percent", "%", "a process's CPU time, % of one CPU", NULL,
					    false, true, false, true, true, 0, "/proc/<pid>/stat", "GetProcessTimes"},
	[HS_COUNTER_PROCESS_RSS_MB] = {"process_rss_mb", "MB", "a process's resident memory (Windows: working set)",
				       NULL, false, true, false, true, true, 0, "/proc/<pid>/statm",
				       "GetProcessMemoryInfo"},
	[HS_COUNTER_DISK_FREE_MB] = {"disk_free_mb", "MB", "free space the engine's user has on the run folder's disk",
				     NULL, false, false, false, true, true, 0, "statvfs", "GetDiskFreeSpaceExW"},
	[HS_COUNTER_RING_FILL_PERCENT] = {"ring_fill_percent", "%", "how full a session's kernel ring is", NULL, false,
					  false, true, true, true, 100, "the session's ring status",
					  "the session's buffer status"},
	[HS_COUNTER_KEY_DROP_RATE] = {"key_drop_rate", "events/s",
				      "key events a file-circular session lost per second (ring overruns, drops)", NULL,
				      false, false, true, true, true, 0, "the session's lost events",
				      "the session's lost events"},
};

const char *const hs_counter_names[HS_COUNTER__COUNT + 1] = {
	"psi_cpu_some", "psi_memory_some",   "psi_memory_full",     "psi_io_some",
	"psi_io_full",  "cpu_percent",       "process_cpu_percent", "process_rss_mb",
	"disk_free_mb", "ring_fill_percent", "key_drop_rate",       NULL};

const hs_counter_info *hs_counter_info_of(hs_counter_kind k)
{
	return (unsigned)k < HS_COUNTER__COUNT ? &counters[k] : NULL;
}
