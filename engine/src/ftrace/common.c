/* ftrace/common.c: what every part of the Linux backend uses (messages, the clock, paths, the rings' stats, streaming while waiting) and that calls none of them, so backend.c, detect.c and snapshot.c never call each other back. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftrace/backend_int.h"
#include "hindsight/limits.h"

void hs_ftrace_say(hs_backend *b, hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* The sink keeps lines whole: the rewrite and snapshot threads speak too. */
	hs_msg_vsay(b->msg, level, "ftrace", fmt, ap);
	va_end(ap);
}

double hs_ftrace_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *hs_ftrace_path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 2);
	if (!p)
		return NULL;
	memcpy(p, a, la);
	p[la] = '/';
	memcpy(p + la + 1, b, lb + 1);
	return p;
}

/* ---- kernel counters ---- */

void hs_ftrace_read_stats(hs_backend *b, session *s)
{
	hs_ftrace_read_cpu_stats(b, s->inst, s->cpu);
}

/* A stats file time, "<seconds>.<microseconds>" for clocks in ns (local,
 * global, mono...), in ns; 0 for a counter clock's bare number (x86-tsc,
 * counter), which is not a time. */
static uint64_t stats_ts_ns(const char *p)
{
	char *end;
	uint64_t sec = strtoull(p, &end, 10);
	if (*end != '.')
		return 0;
	p = end + 1;
	uint64_t us = strtoull(p, &end, 10);
	if (end - p != 6)
		return 0;
	return sec * 1000000000ull + us * 1000ull;
}

void hs_ftrace_read_cpu_stats(hs_backend *b, struct tracefs_instance *inst, hs_cpu_stats *cpu)
{
	for (unsigned c = 0; c < b->cpus; c++) {
		char file[64];
		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", c);
		char *text = hs_tracefs_api_get()->instance_file_read(inst, file, NULL);
		if (!text)
			continue;
		hs_cpu_stats *cs = &cpu[c];
		struct {
			const char *key;
			uint64_t *v;
		} keys[] = {{"entries:", &cs->entries},		{"overrun:", &cs->overrun},
			    {"commit overrun:", &cs->commit_overrun}, {"bytes:", &cs->bytes},
			    {"dropped events:", &cs->dropped},	{"read events:", &cs->read}};
		char *save = NULL;
		cs->oldest_ns = cs->now_ns = 0;
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if (!strncmp(line, keys[k].key, strlen(keys[k].key)))
					*keys[k].v = strtoull(line + strlen(keys[k].key), NULL, 10);
			if (!strncmp(line, "oldest event ts:", 16))
				cs->oldest_ns = stats_ts_ns(line + 16);
			else if (!strncmp(line, "now ts:", 7))
				cs->now_ns = stats_ts_ns(line + 7);
		}
		if (!cs->entries)
			cs->oldest_ns = 0; /* an empty ring says 0.000000 */
		free(text);
	}
}

uint64_t hs_ftrace_sum_entries(const session *s, unsigned cpus)
{
	uint64_t n = 0;
	for (unsigned c = 0; c < cpus; c++)
		n += s->cpu[c].entries;
	return n;
}

/* ---- streaming while waiting ---- */

void hs_ftrace_wake(hs_backend *b)
{
	pthread_mutex_lock(&b->wait_mu);
	pthread_cond_broadcast(&b->wait_cv);
	pthread_mutex_unlock(&b->wait_mu);
}

void hs_ftrace_stream_until(hs_backend *b, atomic_bool *done)
{
	bool failed = false; /* said once by drain_cpu; the next poll returns it */
	pthread_mutex_lock(&b->wait_mu);
	while (!atomic_load(done)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)HS_LINUX_STREAM_WAKE_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec += ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
		}
		pthread_cond_timedwait(&b->wait_cv, &b->wait_mu, &ts);
		if (atomic_load(done))
			break;
		pthread_mutex_unlock(&b->wait_mu);
		if (!failed && !b->stopped)
			failed = b->drain_streams(b) != HS_OK;
		pthread_mutex_lock(&b->wait_mu);
	}
	pthread_mutex_unlock(&b->wait_mu);
}
