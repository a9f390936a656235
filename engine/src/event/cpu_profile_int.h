/* event/cpu_profile_int.h: the CPU profile's one model and aggregation (cpu_profile.c), which the .etl walk and the perf.data builder (cpu_profile_perf.c) both fill. */
#ifndef HS_EVENT_CPU_PROFILE_INT_H
#define HS_EVENT_CPU_PROFILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/cpu_profile.h"

/*
 * A builder walks its format and fills the model (`cpu`): processes and
 * threads by pid and tid, images with their (pid, base, size, file offset,
 * times), and samples whose frames are in the address pool. Then
 * hs_cpu_profile_finish applies the filter, names frames, sums equal stacks
 * and orders the view: that part is the same for every format.
 *
 * Ownership: the model belongs to the profile (hs_cpu_profile_alloc); its
 * strings are owned (set them with hs_cpu_set_str or hs_cpu_dupstr) and freed
 * with the profile. Nothing here is for programs.
 */

#define HS_CPU_NONE UINT32_MAX

/* Grows *p (an array of elem-sized items with *cap slots) to hold need items. */
bool hs_cpu_grow(void *p, size_t *cap, size_t need, size_t elem);

#define VEC(T)                 \
	struct {               \
		T *v;          \
		size_t n, cap; \
	}

/* Appends val; on allocation failure sets c->oom and drops it. */
#define PUSH(c, vec, val)                                                             \
	do {                                                                          \
		if (hs_cpu_grow(&(vec).v, &(vec).cap, (vec).n + 1, sizeof(*(vec).v))) \
			(vec).v[(vec).n++] = (val);                                   \
		else                                                                  \
			(c)->oom = true;                                              \
	} while (0)

/* Open addressing from two 64-bit keys to an index. Entries are never
 * removed; callers store HS_CPU_NONE to retire one. */
typedef struct {
	uint64_t k1, k2;
	uint32_t val;
	bool used;
} mslot;

typedef struct {
	mslot *s;
	size_t cap, n;
} map2;

uint32_t hs_cpu_map_get(const map2 *m, uint64_t k1, uint64_t k2);
/* The value slot for the keys, created holding HS_CPU_NONE; NULL on OOM. */
uint32_t *hs_cpu_map_put(map2 *m, uint64_t k1, uint64_t k2);

typedef hs_cpu_process proc;
typedef hs_cpu_thread trec;

/* A thread as the walk sees it now: its process and (.etl) the samples whose kernel
 * stack arrived but whose user stack waits for the thread to leave the kernel. */
typedef struct {
	uint32_t proc;
	char *name;
	VEC(uint32_t) waiting;
} tstate;

typedef struct {
	uint32_t off, len; /* into the address pool; len 0: none */
} part;

enum { PART_NONE, PART_KEY, PART_SET };

typedef struct {
	int64_t ts;
	uint64_t ip;
	uint32_t tid, proc, weight;
	part kpart, upart;
	uint8_t kstate, ustate; /* PART_* */
	bool waiting;
	bool p64; /* logged with 64-bit pointers: where the kernel half starts */
	/* perf.data: upart is the whole chain, leaf first, its first nkernel frames
	 * in the kernel (the format's context markers say so, not the addresses). */
	bool marked;
	uint32_t nkernel;
} sample;

typedef struct {
	uint32_t pid;
	uint64_t base, size;
	uint64_t pgoff; /* file offset mapped at base (perf.data's mmaps; 0 for .etl images) */
	int64_t load_ts, unload_ts;
	char *file; /* owned: base name of the kernel's path */
	char *orig; /* owned: ImageId OriginalFileName, or NULL */
	char *pdb;  /* owned: DbgID_RSDS PDB base name, or NULL */
} image;

/* ImageId / DbgID data that arrived before its image event. */
typedef struct {
	char *orig, *pdb;
} pending_id;

/* A sample waiting for a stack key's definition. */
typedef struct {
	uint32_t sample, next;
	bool user;
} waiter;

typedef struct {
	const hs_etl *etl;
	const hs_regex *re; /* the process filter, or NULL */
	hs_cpu_progress_fn progress;
	void *progress_ctx;
	bool oom;
	uint64_t undecodable;
	/* Kernel frames no image covers: "<kernel_label>!+0x<address>" when set,
	 * else the bare address (the .etl convention). */
	const char *kernel_label;

	VEC(proc) procs;
	map2 pid_proc; /* pid -> current proc */
	VEC(tstate) threads;
	map2 tid_thread; /* tid -> tstate */
	VEC(trec) trecs;
	map2 proc_tid_trec;

	VEC(sample) samples;
	map2 tid_ts_sample;
	VEC(uint64_t) pool; /* stack addresses */
	VEC(waiter) waiters;
	map2 key_waiters; /* (key, user) -> first waiter */

	VEC(image) images;   /* kernel images have pid 0 */
	map2 pid_base_image; /* latest image at (pid, base) */
	VEC(pending_id) pending_ids;
	map2 pid_base_pending;

	uint32_t interval; /* 100 ns; 0 until an event says (then the default, unless interval_source says otherwise) */
	hs_cpu_interval_source interval_source;
	bool interval_from_start;

	uint64_t total_weight;   /* every sample */
	uint64_t stacked_weight; /* shown samples with a stack */
	uint64_t unresolved_keys;
} cpu;

char *hs_cpu_dupstr(cpu *c, const char *s);
/* Replaces *dst with a copy of s unless s is NULL or empty. */
void hs_cpu_set_str(cpu *c, char **dst, const char *s);
/* A new process record for pid (not mapped); HS_CPU_NONE on OOM. */
uint32_t hs_cpu_new_proc(cpu *c, uint32_t pid);
/* The process a pid means now, created unnamed if no event has named it. */
uint32_t hs_cpu_proc_for_pid(cpu *c, uint32_t pid);
/* A new process for pid from now on (a start, a fork: the pid may have been used before). */
uint32_t hs_cpu_restart_pid(cpu *c, uint32_t pid);
uint32_t hs_cpu_thread_for_tid(cpu *c, uint32_t tid);

/* A profile with an empty model; NULL on OOM. */
hs_cpu_profile *hs_cpu_profile_alloc(void);
cpu *hs_cpu_profile_model(hs_cpu_profile *p);
/* After the walk: the filter, frame names, stacks, order and the view. False on OOM. */
bool hs_cpu_profile_finish(hs_cpu_profile *p, const hs_regex *process);

#endif
