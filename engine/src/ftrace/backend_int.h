/* ftrace/backend_int.h: the tracefs backend's private state, shared by its streaming (backend.c) and ring-snapshot (snapshot.c) halves. */
#ifndef HS_FTRACE_BACKEND_INT_H
#define HS_FTRACE_BACKEND_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ftrace/instance.h"
#include "hindsight/backend.h"

/* A file-circular session's per-CPU reader: appends sub-buffers to the current
 * chunk file; chunks [first, cur] exist on disk and hold cpu_bytes together. */
typedef struct {
	struct tracefs_cpu *tcpu;
	int fd;
	unsigned first, cur;
	uint64_t cur_bytes, *chunk_bytes; /* [HS_LINUX_STREAM_CHUNKS], by seq % N */
	uint64_t cpu_bytes;               /* all chunks of this CPU: at most the session's cpu_budget */
} stream_cpu;

typedef struct {
	const hs_plan_session *ps;
	struct tracefs_instance *inst;
	hs_session_status st;
	hs_cpu_stats *cpu;
	char *output;    /* run_dir/output */
	char *chunk_dir; /* file-circular: run_dir/.<output>.chunks */
	stream_cpu *sc;  /* file-circular: [cpus] */
	uint64_t chunk_limit, cpu_budget; /* file-circular: bytes per chunk, per CPU */
	bool dirty;      /* data streamed since the file was last rebuilt */
	double next_flush;
	double next_rebuild; /* the periodic rewrite of the output file waits until then */
	struct rebuild_job *rebuild; /* a periodic rewrite running in rebuild_tid, or NULL */
	pthread_t rebuild_tid;
	atomic_bool rebuild_done;
	hs_ftrace_events ev;
} session;

struct hs_backend {
	const hs_plan *plan;
	const char *run_dir;
	FILE *msg;
	volatile int *interrupts;
	unsigned cpus;
	size_t subbuf;
	session *s;
	size_t n;
	struct tep_handle *tep;
	struct kbuffer *kb;
	void *page;
	hs_key_event_fn fn;
	void *fn_ctx;
	bool stopped;
};

/* Messages for the user, "engine: " first, flushed (the engine tees them to main.log). */
void hs_ftrace_say(hs_backend *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double hs_ftrace_now_s(void);
/* "a/b", malloc'd; NULL when out of memory. */
char *hs_ftrace_path_join(const char *a, const char *b);
/* Reads per_cpu/cpuN/stats of every CPU into s->cpu. */
void hs_ftrace_read_stats(hs_backend *b, session *s);
uint64_t hs_ftrace_sum_entries(const session *s, unsigned cpus);

/* Freezes a buffering session's ring, drains it losslessly into `path` (a
 * trace.dat, through a temporary name) and resumes it unless `final`. */
hs_status hs_ftrace_snapshot_ring(hs_backend *b, session *s, const char *path, bool final);

#endif
