/* run/tasks.h: a snapshot's task table (tasks.json): what the running system says of every task and cgroup at capture time, for the report's culprits and limits. */
#ifndef HS_RUN_TASKS_H
#define HS_RUN_TASKS_H

#include <stdint.h>

#include "hindsight/status.h"

/*
 * Writes PATH (a snapshot folder's tasks.json, docs/snapshots.md): every task's
 * tid, process, name, scheduling policy, real-time priority and nice, its
 * process's CPU and memory cgroups, and each such cgroup's limits and counters
 * (CPU quota and period, cpu.stat's throttling, memory limit, usage and
 * failures), as the system has them when the snapshot is taken; trace_ns is the
 * sessions' clock then. A trace carries tasks' ids, names and kernel prio, but not
 * FIFO from RR nor a cgroup's quota: the report reads them here for the tasks it
 * names. HS_EUNSUPPORTED where the OS has no such table (Windows: the kernel
 * trace's own thread rundown names tasks); HS_EIO when /proc cannot be read.
 * At most HS_TASKS_MAX tasks ("complete": false past it).
 */
hs_status hs_tasks_write(const char *path, uint64_t trace_ns);

#endif
