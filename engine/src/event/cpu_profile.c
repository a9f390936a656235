/* event/cpu_profile.c: CPU samples of an .etl joined to their stacks (stack walks, keys, definitions), resolved to modules and summed per process, thread and stack (the aggregation perf.data's builder shares). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/cpu_profile_int.h"
#include "hindsight/cpu_profile.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/hmap.h"
#include "hindsight/regex.h"
#include "hindsight/text.h"

#define NONE HS_CPU_NONE

/* Windows' default profile interval (1 ms, in 100 ns units): what a trace
 * without interval events was almost certainly sampled at. */
enum { DEFAULT_INTERVAL_100NS = 10000 };

/* ---- containers ---- */

/* Grows *p (an array of elem-sized items with *cap slots) to hold need items. */
bool hs_cpu_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return false;
		n *= 2;
	}
	void *q = realloc(*(void **)p, n * elem);
	if (!q)
		return false;
	*(void **)p = q;
	*cap = n;
	return true;
}

static size_t map_home(const map2 *m, uint64_t k1, uint64_t k2)
{
	return (size_t)(hs_hash_mix(k1 ^ hs_hash_mix(k2 + 0x9e3779b97f4a7c15ull)) & (m->cap - 1));
}

uint32_t hs_cpu_map_get(const map2 *m, uint64_t k1, uint64_t k2)
{
	if (!m->cap)
		return NONE;
	for (size_t i = map_home(m, k1, k2);; i = (i + 1) & (m->cap - 1)) {
		if (!m->s[i].used)
			return NONE;
		if (m->s[i].k1 == k1 && m->s[i].k2 == k2)
			return m->s[i].val;
	}
}

/* The value slot for the keys, created holding NONE; NULL on OOM. */
uint32_t *hs_cpu_map_put(map2 *m, uint64_t k1, uint64_t k2)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		mslot *ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return NULL;
		map2 nm = {ns, ncap, m->n};
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->s[i].used)
				continue;
			size_t j = map_home(&nm, m->s[i].k1, m->s[i].k2);
			while (ns[j].used)
				j = (j + 1) & (ncap - 1);
			ns[j] = m->s[i];
		}
		free(m->s);
		*m = nm;
	}
	size_t i = map_home(m, k1, k2);
	while (m->s[i].used && !(m->s[i].k1 == k1 && m->s[i].k2 == k2))
		i = (i + 1) & (m->cap - 1);
	if (!m->s[i].used) {
		m->s[i] = (mslot){k1, k2, NONE, true};
		m->n++;
	}
	return &m->s[i].val;
}

/* Interned byte strings (frame names, stacks): equal bytes, equal id. */
typedef struct {
	VEC(uint8_t) data;
	VEC(uint32_t) off;
	VEC(uint32_t) len;
	map2 index; /* (hash, len) -> first id with that hash; collisions chain through `next` */
	VEC(uint32_t) next;
} interner;


static const void *intern_at(const interner *t, uint32_t id)
{
	return t->data.v + t->off.v[id];
}

/* Returns the id of the bytes, adding them if new; NONE on OOM. */
static uint32_t intern(interner *t, const void *p, size_t n)
{
	uint64_t h = hs_hash_bytes(p, n);
	uint32_t *head = hs_cpu_map_put(&t->index, h, n);
	if (!head)
		return NONE;
	for (uint32_t id = *head; id != NONE; id = t->next.v[id])
		if (memcmp(intern_at(t, id), p, n) == 0)
			return id;
	if (t->data.n + n > UINT32_MAX || t->off.n >= NONE - 1)
		return NONE;
	if (!hs_cpu_grow(&t->data.v, &t->data.cap, t->data.n + n, 1) ||
	    !hs_cpu_grow(&t->off.v, &t->off.cap, t->off.n + 1, 4) ||
	    !hs_cpu_grow(&t->len.v, &t->len.cap, t->len.n + 1, 4) ||
	    !hs_cpu_grow(&t->next.v, &t->next.cap, t->next.n + 1, 4))
		return NONE;
	uint32_t id = (uint32_t)t->off.n;
	if (n)
		memcpy(t->data.v + t->data.n, p, n);
	t->off.v[t->off.n++] = (uint32_t)t->data.n;
	t->len.v[t->len.n++] = (uint32_t)n;
	t->next.v[t->next.n++] = *head;
	t->data.n += n;
	*head = id;
	return id;
}

static void interner_free(interner *t)
{
	free(t->data.v);
	free(t->off.v);
	free(t->len.v);
	free(t->next.v);
	free(t->index.s);
}

char *hs_cpu_dupstr(cpu *c, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (!d) {
		c->oom = true;
		return NULL;
	}
	memcpy(d, s, n);
	return d;
}

void hs_cpu_set_str(cpu *c, char **dst, const char *s)
{
	if (!s || !*s)
		return;
	char *d = hs_cpu_dupstr(c, s);
	if (!d)
		return;
	free(*dst);
	*dst = d;
}

const char *hs_cpu_process_name(const hs_cpu_process *p)
{
	if (p->pid == UINT32_MAX)
		return "(unknown thread)";
	return p->name ? p->name : "(unnamed)";
}

uint32_t hs_cpu_new_proc(cpu *c, uint32_t pid)
{
	proc p = {.pid = pid};
	size_t before = c->procs.n;
	PUSH(c, c->procs, p);
	return c->procs.n > before ? (uint32_t)before : NONE;
}

/* The process a pid means now, created unnamed if no event has named it. */
uint32_t hs_cpu_proc_for_pid(cpu *c, uint32_t pid)
{
	uint32_t *slot = hs_cpu_map_put(&c->pid_proc, pid, 0);
	if (!slot) {
		c->oom = true;
		return NONE;
	}
	if (*slot == NONE)
		*slot = hs_cpu_new_proc(c, pid);
	return *slot;
}

uint32_t hs_cpu_restart_pid(cpu *c, uint32_t pid)
{
	uint32_t *slot = hs_cpu_map_put(&c->pid_proc, pid, 0);
	uint32_t idx = slot ? hs_cpu_new_proc(c, pid) : NONE;
	if (slot)
		*slot = idx;
	return idx;
}

uint32_t hs_cpu_thread_for_tid(cpu *c, uint32_t tid)
{
	uint32_t *slot = hs_cpu_map_put(&c->tid_thread, tid, 0);
	if (!slot) {
		c->oom = true;
		return NONE;
	}
	if (*slot == NONE) {
		tstate t = {.proc = NONE};
		size_t before = c->threads.n;
		PUSH(c, c->threads, t);
		if (c->threads.n > before)
			*slot = (uint32_t)before;
	}
	return *slot;
}

/* ---- events ---- */

/* Whether a handler's decoder read its record (ok); a record it refuses is counted as undecodable. */
static bool decoded(cpu *c, bool ok)
{
	if (!ok)
		c->undecodable++;
	return ok;
}

static void on_process(cpu *c, const hs_etl_record *r)
{
	hs_etl_process p;
	if (!decoded(c, hs_etl_decode_process(r, &p)))
		return;
	uint32_t idx = hs_cpu_map_get(&c->pid_proc, p.pid, 0);
	if (p.opcode == HS_ETLK_OP_START || idx == NONE)
		idx = hs_cpu_restart_pid(c, p.pid); /* a start is a new process even when the pid was used before */
	if (idx == NONE) {
		c->oom = true;
		return;
	}
	proc *pr = &c->procs.v[idx];
	/* Starts and rundowns name the process; ends only fill a missing name. */
	bool naming = p.opcode == HS_ETLK_OP_START || p.opcode == HS_ETLK_OP_DCSTART || !pr->name;
	if (naming) {
		hs_cpu_set_str(c, &pr->name, p.image_file_name);
		hs_cpu_set_str(c, &pr->cmdline, p.command_line);
	}
}

static void on_thread(cpu *c, const hs_etl_record *r)
{
	hs_etl_thread t;
	if (!decoded(c, hs_etl_decode_thread(r, &t)))
		return;
	uint32_t ti = hs_cpu_thread_for_tid(c, t.tid);
	if (ti == NONE)
		return;
	tstate *ts = &c->threads.v[ti];
	bool starting = t.opcode == HS_ETLK_OP_START || t.opcode == HS_ETLK_OP_DCSTART;
	if (starting || ts->proc == NONE || c->procs.v[ts->proc].pid != t.pid) {
		if (t.opcode == HS_ETLK_OP_START) {
			/* A reused thread id: nothing of the old thread waits any more. */
			for (size_t i = 0; i < ts->waiting.n; i++)
				c->samples.v[ts->waiting.v[i]].waiting = false;
			ts->waiting.n = 0;
			free(ts->name);
			ts->name = NULL;
		}
		uint32_t pi = hs_cpu_proc_for_pid(c, t.pid);
		ts = &c->threads.v[ti];
		ts->proc = pi;
	}
	hs_cpu_set_str(c, &ts->name, t.name);
}

static void apply_pending_id(cpu *c, image *im)
{
	uint32_t pi = hs_cpu_map_get(&c->pid_base_pending, im->pid, im->base);
	if (pi == NONE)
		return;
	pending_id *pd = &c->pending_ids.v[pi];
	if (pd->orig) {
		free(im->orig);
		im->orig = pd->orig;
		pd->orig = NULL;
	}
	if (pd->pdb) {
		free(im->pdb);
		im->pdb = pd->pdb;
		pd->pdb = NULL;
	}
}

static void on_image(cpu *c, const hs_etl_record *r)
{
	hs_etl_image im;
	if (!decoded(c, hs_etl_decode_image(r, &im)))
		return;
	uint32_t *slot = hs_cpu_map_put(&c->pid_base_image, im.pid, im.base);
	if (!slot) {
		c->oom = true;
		return;
	}
	image *cur = *slot != NONE ? &c->images.v[*slot] : NULL;
	bool live = cur && cur->unload_ts == INT64_MAX && cur->size == im.size;
	if (!live) {
		/* Rundowns describe images loaded before anything was seen. */
		bool loaded_now = im.opcode == HS_ETLK_OP_LOAD;
		image n = {
			.pid = im.pid,
			.base = im.base,
			.size = im.size,
			.load_ts = loaded_now ? r->timestamp : INT64_MIN,
			.unload_ts = INT64_MAX,
			.file = hs_cpu_dupstr(c, hs_path_base(im.file_name)),
		};
		size_t before = c->images.n;
		PUSH(c, c->images, n);
		if (c->images.n == before) {
			free(n.file);
			return;
		}
		*slot = (uint32_t)before;
		cur = &c->images.v[before];
	}
	apply_pending_id(c, cur);
	if (im.opcode == HS_ETLK_OP_END) /* Unload */
		cur->unload_ts = r->timestamp;
}

/* Attaches merged ImageId / DbgID names to the live image at (pid, base), or
 * keeps them for the image event that follows (they come just before it). */
static void on_image_names(cpu *c, uint32_t pid, uint64_t base, const char *orig, const char *pdb)
{
	uint32_t ii = hs_cpu_map_get(&c->pid_base_image, pid, base);
	if (ii != NONE && c->images.v[ii].unload_ts == INT64_MAX) {
		image *im = &c->images.v[ii];
		hs_cpu_set_str(c, &im->orig, orig);
		hs_cpu_set_str(c, &im->pdb, pdb);
		return;
	}
	uint32_t *slot = hs_cpu_map_put(&c->pid_base_pending, pid, base);
	if (!slot) {
		c->oom = true;
		return;
	}
	if (*slot == NONE) {
		pending_id pd = {0};
		size_t before = c->pending_ids.n;
		PUSH(c, c->pending_ids, pd);
		if (c->pending_ids.n == before)
			return;
		*slot = (uint32_t)before;
	}
	pending_id *pd = &c->pending_ids.v[*slot];
	hs_cpu_set_str(c, &pd->orig, orig);
	hs_cpu_set_str(c, &pd->pdb, pdb);
}

static void on_interval(cpu *c, const hs_etl_record *r)
{
	hs_etl_interval iv;
	if (!decoded(c, hs_etl_decode_interval(r, &iv)))
		return;
	if (iv.source != 0) /* other sources are hardware counters, not the timer */
		return;
	/* The interval at collection start is the one samples were taken at
	 * (PerfView's rule). Without one, a SetInterval before the first sample
	 * sets it; after samples, its old value is what they were taken at. */
	if (r->opcode == HS_ETLK_OP_COLLECTION_START) {
		if (!c->interval_from_start && iv.new_interval) {
			c->interval = iv.new_interval;
			c->interval_source = HS_CPU_INTERVAL_COLLECTION_START;
			c->interval_from_start = true;
		}
	} else if (r->opcode == HS_ETLK_OP_SET_INTERVAL && !c->interval_from_start) {
		uint32_t v = c->samples.n ? iv.old_interval : iv.new_interval;
		if (v && (!c->interval || !c->samples.n)) {
			c->interval = v;
			c->interval_source = HS_CPU_INTERVAL_SET_INTERVAL;
		}
	} else if (r->opcode == HS_ETLK_OP_COLLECTION_END && !c->interval && iv.new_interval) {
		c->interval = iv.new_interval;
		c->interval_source = HS_CPU_INTERVAL_COLLECTION_END;
	}
}

static void on_sample(cpu *c, const hs_etl_record *r)
{
	hs_etl_sample s;
	if (!decoded(c, hs_etl_decode_sample(r, &s)))
		return;
	uint32_t ti = hs_cpu_map_get(&c->tid_thread, s.tid, 0);
	sample sm = {
		.ts = r->timestamp,
		.ip = s.ip,
		.tid = s.tid,
		.proc = ti != NONE ? c->threads.v[ti].proc : NONE,
		.weight = s.count ? s.count : 1,
		.p64 = r->ptr64,
	};
	size_t before = c->samples.n;
	PUSH(c, c->samples, sm);
	if (c->samples.n == before)
		return;
	uint32_t *slot = hs_cpu_map_put(&c->tid_ts_sample, s.tid, (uint64_t)r->timestamp);
	if (!slot) {
		c->oom = true;
		return;
	}
	*slot = (uint32_t)before;
}

/* The sample a stack event belongs to (same thread, same timestamp), or NULL. */
static sample *stack_target(cpu *c, uint32_t tid, uint32_t pid, uint64_t event_ts)
{
	uint32_t si = hs_cpu_map_get(&c->tid_ts_sample, tid, event_ts);
	if (si == NONE)
		return NULL;
	sample *s = &c->samples.v[si];
	if (s->proc == NONE && pid != UINT32_MAX)
		s->proc = hs_cpu_proc_for_pid(c, pid); /* the stack names the process the thread table could not */
	return &c->samples.v[si];
}

static part pool_add(cpu *c, const hs_etl_frames *f)
{
	part p = {0, 0};
	if (f->count == 0 || c->pool.n + f->count > UINT32_MAX)
		return p;
	if (!hs_cpu_grow(&c->pool.v, &c->pool.cap, c->pool.n + f->count, sizeof(uint64_t))) {
		c->oom = true;
		return p;
	}
	p.off = (uint32_t)c->pool.n;
	p.len = (uint32_t)f->count;
	for (size_t i = 0; i < f->count; i++)
		c->pool.v[c->pool.n++] = hs_etl_stack_frame(f, i);
	return p;
}

static void add_waiting(cpu *c, uint32_t tid, sample *s)
{
	if (s->waiting)
		return;
	uint32_t si = (uint32_t)(s - c->samples.v);
	uint32_t ti = hs_cpu_thread_for_tid(c, tid);
	if (ti == NONE)
		return;
	s = &c->samples.v[si];
	s->waiting = true;
	PUSH(c, c->threads.v[ti].waiting, si);
}

static void add_waiter(cpu *c, uint64_t key, bool user, uint32_t si)
{
	uint32_t *head = hs_cpu_map_put(&c->key_waiters, key, user);
	if (!head) {
		c->oom = true;
		return;
	}
	waiter w = {si, *head, user};
	size_t before = c->waiters.n;
	PUSH(c, c->waiters, w);
	if (c->waiters.n > before)
		*head = (uint32_t)before;
}

/*
 * A user-mode stack fragment on a thread ends every kernel-only stack that
 * waited on it: the kernel walks the user stack once, when the thread returns
 * to user mode, for all the events it logged in the kernel meanwhile
 * (PerfView's EmitStackOnExitFromKernel). `set` gives the frames to the
 * waiting samples and to the target.
 */
static void user_fragment(cpu *c, uint32_t tid, sample *target, bool have_part, part pt, uint64_t key)
{
	uint32_t target_i = target ? (uint32_t)(target - c->samples.v) : NONE;
	uint32_t ti = hs_cpu_map_get(&c->tid_thread, tid, 0);
	size_t nwait = ti != NONE ? c->threads.v[ti].waiting.n : 0;
	for (size_t k = 0; k <= nwait; k++) {
		uint32_t si;
		if (k < nwait) {
			si = c->threads.v[ti].waiting.v[k];
		} else {
			si = target_i;
			if (si == NONE)
				break;
		}
		sample *s = &c->samples.v[si];
		s->waiting = false;
		if (s->ustate != PART_NONE)
			continue;
		if (have_part) {
			s->upart = pt;
			s->ustate = PART_SET;
		} else {
			s->ustate = PART_KEY;
			add_waiter(c, key, true, si);
		}
	}
	if (ti != NONE)
		c->threads.v[ti].waiting.n = 0;
}

static void on_stack(cpu *c, const hs_etl_record *r)
{
	hs_etl_stack st;
	if (!decoded(c, hs_etl_decode_stack(r, &st)))
		return;
	bool p64 = st.frames.ptr64;
	bool first_k = hs_etl_kernel_address(hs_etl_stack_frame(&st.frames, 0), p64);
	bool last_k = hs_etl_kernel_address(hs_etl_stack_frame(&st.frames, st.frames.count - 1), p64);
	sample *t = stack_target(c, st.tid, st.pid, st.event_ts);
	if (last_k) {
		/* Entirely in the kernel: the user part (if any) comes on exit. */
		if (!t || t->kstate != PART_NONE)
			return;
		uint32_t ti = (uint32_t)(t - c->samples.v);
		part pt = pool_add(c, &st.frames);
		t = &c->samples.v[ti];
		t->kpart = pt;
		t->kstate = PART_SET;
		add_waiting(c, st.tid, t);
		return;
	}
	uint32_t ti = t ? (uint32_t)(t - c->samples.v) : NONE;
	part pt = pool_add(c, &st.frames);
	t = ti != NONE ? &c->samples.v[ti] : NULL;
	if (!first_k) {
		user_fragment(c, st.tid, t, true, pt, 0);
	} else if (t && t->ustate == PART_NONE) {
		/* Kernel to user in one walk: the whole stack. */
		t->upart = pt;
		t->ustate = PART_SET;
	}
}

static void on_stack_key(cpu *c, const hs_etl_record *r)
{
	hs_etl_stack_key k;
	if (!decoded(c, hs_etl_decode_stack_key(r, &k)))
		return;
	sample *t = stack_target(c, k.tid, k.pid, k.event_ts);
	if (k.user) {
		user_fragment(c, k.tid, t, false, (part){0, 0}, k.key);
		return;
	}
	if (!t || t->kstate != PART_NONE)
		return;
	uint32_t ti = (uint32_t)(t - c->samples.v);
	t->kstate = PART_KEY;
	add_waiter(c, k.key, false, ti);
	add_waiting(c, k.tid, &c->samples.v[ti]);
}

static void on_stack_def(cpu *c, const hs_etl_record *r)
{
	hs_etl_stack_def d;
	if (!decoded(c, hs_etl_decode_stack_def(r, &d)))
		return;
	/* A kernel and a user stack can share a key at the same time; the
	 * frames say which one this is. */
	bool kernel = hs_etl_kernel_address(hs_etl_stack_frame(&d.frames, d.frames.count - 1), d.frames.ptr64);
	uint32_t *head = hs_cpu_map_put(&c->key_waiters, d.key, !kernel);
	if (!head) {
		c->oom = true;
		return;
	}
	if (*head == NONE)
		return;
	uint32_t first = *head;
	*head = NONE; /* the key may be reused for another stack after this */
	part pt = pool_add(c, &d.frames);
	for (uint32_t w = first; w != NONE; w = c->waiters.v[w].next) {
		sample *s = &c->samples.v[c->waiters.v[w].sample];
		if (c->waiters.v[w].user) {
			s->upart = pt;
			s->ustate = PART_SET;
		} else {
			s->kpart = pt;
			s->kstate = PART_SET;
		}
	}
}

static void on_image_id(cpu *c, const hs_etl_record *r)
{
	hs_etl_image_id id;
	if (decoded(c, hs_etl_decode_image_id(r, &id)))
		on_image_names(c, id.pid, id.base, hs_path_base(id.original_file_name), NULL);
}

static void on_dbgid(cpu *c, const hs_etl_record *r)
{
	hs_etl_dbgid id;
	if (decoded(c, hs_etl_decode_dbgid(r, &id)))
		on_image_names(c, id.pid, id.base, NULL, hs_path_base(id.pdb_file_name));
}

/* What each kind of kernel record adds to the profile (HS_ETLK_OTHER and a kind without a row: nothing). */
static void (*const on_kind[])(cpu *c, const hs_etl_record *r) = {
	[HS_ETLK_PROCESS] = on_process,       [HS_ETLK_THREAD] = on_thread,       [HS_ETLK_IMAGE] = on_image,
	[HS_ETLK_SAMPLE] = on_sample,         [HS_ETLK_INTERVAL] = on_interval,   [HS_ETLK_STACK] = on_stack,
	[HS_ETLK_STACK_KEY] = on_stack_key,   [HS_ETLK_STACK_DEF] = on_stack_def, [HS_ETLK_IMAGE_ID] = on_image_id,
	[HS_ETLK_DBGID_RSDS] = on_dbgid,
};

static int on_record(const hs_etl_record *r, void *ctx)
{
	cpu *c = ctx;
	if (c->progress)
		c->progress(c->etl, r, c->progress_ctx);
	hs_etlk_kind k = hs_etlk_classify(r);
	if ((size_t)k < sizeof on_kind / sizeof on_kind[0] && on_kind[k])
		on_kind[k](c, r);
	return c->oom;
}

/* ---- symbolisation ---- */

typedef struct {
	cpu *c;
	uint32_t *order; /* images sorted by (pid, base) */
	size_t n;
	map2 pid_maxsize; /* pid -> largest image size, bounds the backward scan */
	VEC(uint64_t) maxsizes;
	interner frames;
	map2 addr_frame; /* (proc or NONE for kernel, address) -> frame id */
	VEC(uint8_t) frame_resolved;
} symbols;

static const image *g_sort_images; /* qsort has no context argument */

static int cmp_image(const void *a, const void *b)
{
	const image *x = &g_sort_images[*(const uint32_t *)a], *y = &g_sort_images[*(const uint32_t *)b];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return x->load_ts < y->load_ts ? -1 : x->load_ts > y->load_ts;
}

static bool symbols_init(symbols *s, cpu *c)
{
	memset(s, 0, sizeof *s);
	s->c = c;
	s->n = c->images.n;
	s->order = malloc((s->n ? s->n : 1) * sizeof(*s->order));
	if (!s->order)
		return false;
	for (size_t i = 0; i < s->n; i++) {
		s->order[i] = (uint32_t)i;
		const image *im = &c->images.v[i];
		uint32_t *slot = hs_cpu_map_put(&s->pid_maxsize, im->pid, 0);
		if (!slot)
			return false;
		if (*slot == NONE) {
			*slot = (uint32_t)s->maxsizes.n;
			PUSH(c, s->maxsizes, im->size);
		} else if (s->maxsizes.v[*slot] < im->size) {
			s->maxsizes.v[*slot] = im->size;
		}
	}
	g_sort_images = c->images.v;
	qsort(s->order, s->n, sizeof(*s->order), cmp_image);
	return !c->oom;
}

static void symbols_free(symbols *s)
{
	free(s->order);
	free(s->pid_maxsize.s);
	free(s->maxsizes.v);
	interner_free(&s->frames);
	free(s->addr_frame.s);
	free(s->frame_resolved.v);
}

/* The image of pid holding addr, preferring the one loaded at ts. */
static const image *find_image(const symbols *s, uint32_t pid, uint64_t addr, int64_t ts)
{
	const image *imgs = s->c->images.v;
	uint32_t mi = hs_cpu_map_get(&s->pid_maxsize, pid, 0);
	if (mi == NONE)
		return NULL;
	uint64_t maxsize = s->maxsizes.v[mi];
	/* Last entry with (pid, base) <= (pid, addr). */
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const image *m = &imgs[s->order[mid]];
		if (m->pid < pid || (m->pid == pid && m->base <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	const image *any = NULL;
	for (size_t i = lo; i-- > 0;) {
		const image *m = &imgs[s->order[i]];
		if (m->pid != pid || addr - m->base >= maxsize)
			break;
		if (addr - m->base >= m->size)
			continue;
		if (m->load_ts <= ts && ts < m->unload_ts)
			return m;
		if (!any)
			any = m;
	}
	return any;
}

static const char *image_name(const image *im)
{
	/* The PE's own name survives renames and anonymised paths; the PDB
	 * name is the last resort (it names symbols, not files). */
	if (im->orig && *im->orig)
		return im->orig;
	if (im->file && *im->file)
		return im->file;
	if (im->pdb && *im->pdb)
		return im->pdb;
	return "?";
}

/* Frame text: `module!+0xoffset` (the offset in the module's file), or the bare
 * address (kernel frames: the model's kernel label with the address as the
 * offset, when it has one). Characters that would break the folded format
 * (';', controls) become '_'. */
static uint32_t frame_id(symbols *s, uint32_t procidx, uint64_t addr, int64_t ts, bool kernel)
{
	cpu *c = s->c;
	uint32_t owner = kernel ? NONE : procidx;
	uint32_t *slot = hs_cpu_map_put(&s->addr_frame, owner, addr);
	if (!slot)
		return NONE;
	if (*slot != NONE)
		return *slot;
	const image *im = NULL;
	if (kernel)
		im = find_image(s, 0, addr, ts);
	else if (procidx != NONE && c->procs.v[procidx].pid != UINT32_MAX)
		im = find_image(s, c->procs.v[procidx].pid, addr, ts);
	char buf[600];
	if (im) {
		const char *name = image_name(im);
		size_t o = 0;
		for (; name[o] && o < 500; o++)
			buf[o] = (name[o] == ';' || (unsigned char)name[o] < 0x20) ? '_' : name[o];
		snprintf(buf + o, sizeof buf - o, "!+0x%" PRIx64, addr - im->base + im->pgoff);
	} else if (kernel && c->kernel_label) {
		snprintf(buf, sizeof buf, "%s!+0x%" PRIx64, c->kernel_label, addr);
	} else {
		snprintf(buf, sizeof buf, "0x%" PRIx64, addr);
	}
	uint32_t id = intern(&s->frames, buf, strlen(buf) + 1);
	if (id == NONE)
		return NONE;
	if (id >= s->frame_resolved.n) {
		uint8_t v = im != NULL;
		PUSH(c, s->frame_resolved, v);
	}
	*slot = id;
	return id;
}

/* ---- aggregation ---- */

typedef struct {
	symbols sym;
	interner stacks; /* [proc][frame ids leaf..root] as u32 */
	VEC(uint64_t) stack_weight;
	uint64_t frames_total, frames_resolved; /* weighted frame instances of shown samples */
	uint64_t shown_weight;
} agg;

static bool aggregate(cpu *c, agg *a)
{
	VEC(uint64_t) addrs = {0};
	VEC(uint8_t) kflags = {0}; /* marked samples: per frame, in the kernel */
	VEC(uint32_t) blob = {0};
	bool ok = false;
	for (size_t i = 0; i < c->samples.n; i++) {
		sample *s = &c->samples.v[i];
		if (s->proc == NONE) {
			/* Sampled before its thread was announced (a rundown still
			 * being written): the thread's process is known by now. */
			uint32_t ti = hs_cpu_map_get(&c->tid_thread, s->tid, 0);
			if (ti != NONE)
				s->proc = c->threads.v[ti].proc;
		}
		if (s->proc == NONE) {
			/* Never saw the thread: one bucket, not a guess. */
			uint32_t *slot = hs_cpu_map_put(&c->pid_proc, UINT32_MAX, 0);
			if (!slot)
				goto fail;
			if (*slot == NONE) {
				*slot = hs_cpu_new_proc(c, UINT32_MAX);
				if (*slot == NONE)
					goto fail;
				c->procs.v[*slot].shown = !c->re || hs_regex_match(c->re, hs_cpu_process_name(&c->procs.v[*slot]));
			}
			s = &c->samples.v[i];
			s->proc = *slot;
		}
		proc *p = &c->procs.v[s->proc];
		p->samples += s->weight;
		c->total_weight += s->weight;
		uint32_t *ts = hs_cpu_map_put(&c->proc_tid_trec, s->proc, s->tid);
		if (!ts)
			goto fail;
		if (*ts == NONE) {
			trec t = {.process = s->proc, .tid = s->tid};
			uint32_t ti = hs_cpu_map_get(&c->tid_thread, s->tid, 0);
			if (ti != NONE && c->threads.v[ti].proc == s->proc && c->threads.v[ti].name)
				t.name = hs_cpu_dupstr(c, c->threads.v[ti].name);
			size_t before = c->trecs.n;
			PUSH(c, c->trecs, t);
			if (c->trecs.n == before)
				goto fail;
			*ts = (uint32_t)before;
		}
		c->trecs.v[*ts].samples += s->weight;

		/* The stack, leaf first: kernel part then user part. */
		addrs.n = 0;
		kflags.n = 0;
		bool p64 = s->p64;
		if (s->kstate == PART_KEY || s->ustate == PART_KEY)
			c->unresolved_keys++;
		bool have_u = s->ustate == PART_SET && s->upart.len;
		bool u_whole = have_u && !s->marked && hs_etl_kernel_address(c->pool.v[s->upart.off], p64);
		if (s->kstate == PART_SET && !u_whole)
			for (uint32_t k = 0; k < s->kpart.len; k++)
				PUSH(c, addrs, c->pool.v[s->kpart.off + k]);
		if (have_u)
			for (uint32_t k = 0; k < s->upart.len; k++) {
				PUSH(c, addrs, c->pool.v[s->upart.off + k]);
				uint8_t kf = k < s->nkernel;
				PUSH(c, kflags, kf);
			}
		bool stacked = addrs.n > 0;
		if (stacked)
			c->procs.v[s->proc].stacked += s->weight;
		if (!addrs.n || addrs.v[0] != s->ip) {
			/* Without a stack, or when the kernel part was lost, the
			 * sampled instruction is still the leaf. */
			PUSH(c, addrs, 0);
			PUSH(c, kflags, 0);
			if (c->oom)
				goto fail;
			memmove(addrs.v + 1, addrs.v, (addrs.n - 1) * sizeof(*addrs.v));
			addrs.v[0] = s->ip;
			memmove(kflags.v + 1, kflags.v, (kflags.n - 1) * sizeof(*kflags.v));
			kflags.v[0] = s->nkernel > 0; /* marked: the sample's cpumode */
		}
		if (c->oom)
			goto fail;
		if (!c->procs.v[s->proc].shown)
			continue;
		a->shown_weight += s->weight;
		if (stacked)
			c->stacked_weight += s->weight;
		blob.n = 0;
		PUSH(c, blob, s->proc);
		for (size_t k = 0; k < addrs.n; k++) {
			bool kernel = s->marked ? kflags.v[k] != 0 : hs_etl_kernel_address(addrs.v[k], p64);
			uint32_t f = frame_id(&a->sym, s->proc, addrs.v[k], s->ts, kernel);
			if (f == NONE)
				goto fail;
			PUSH(c, blob, f);
			a->frames_total += s->weight;
			if (a->sym.frame_resolved.v[f])
				a->frames_resolved += s->weight;
		}
		if (c->oom)
			goto fail;
		uint32_t sid = intern(&a->stacks, blob.v, blob.n * sizeof(uint32_t));
		if (sid == NONE)
			goto fail;
		if (sid >= a->stack_weight.n)
			PUSH(c, a->stack_weight, 0);
		if (c->oom)
			goto fail;
		a->stack_weight.v[sid] += s->weight;
	}
	ok = true;
fail:
	if (!ok)
		c->oom = true;
	free(addrs.v);
	free(kflags.v);
	free(blob.v);
	return ok;
}

/* ---- the report order and the profile ---- */

static const cpu *g_sort_cpu; /* qsort has no context argument */

static int cmp_proc(const void *a, const void *b)
{
	const proc *x = &g_sort_cpu->procs.v[*(const uint32_t *)a], *y = &g_sort_cpu->procs.v[*(const uint32_t *)b];
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_trec(const void *a, const void *b)
{
	const trec *x = &g_sort_cpu->trecs.v[*(const uint32_t *)a], *y = &g_sort_cpu->trecs.v[*(const uint32_t *)b];
	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}


/* Sorted process order (shown ones with samples) and, per process, its
 * thread records sorted by samples; threads[i] indexes into trec_order. */
typedef struct {
	uint32_t *procs;
	size_t nprocs;
	uint32_t *trec_order;
	size_t *first_trec; /* per proc index: start in trec_order, or SIZE_MAX */
} report_order;

static bool order_report(const cpu *c, report_order *ro)
{
	memset(ro, 0, sizeof *ro);
	ro->procs = malloc((c->procs.n + 1) * sizeof(*ro->procs));
	ro->trec_order = malloc((c->trecs.n + 1) * sizeof(*ro->trec_order));
	ro->first_trec = malloc((c->procs.n + 1) * sizeof(*ro->first_trec));
	if (!ro->procs || !ro->trec_order || !ro->first_trec)
		return false;
	for (size_t i = 0; i < c->procs.n; i++) {
		ro->first_trec[i] = SIZE_MAX;
		if (c->procs.v[i].shown && c->procs.v[i].samples)
			ro->procs[ro->nprocs++] = (uint32_t)i;
	}
	for (size_t i = 0; i < c->trecs.n; i++)
		ro->trec_order[i] = (uint32_t)i;
	g_sort_cpu = c;
	qsort(ro->procs, ro->nprocs, sizeof(*ro->procs), cmp_proc);
	qsort(ro->trec_order, c->trecs.n, sizeof(*ro->trec_order), cmp_trec);
	for (size_t i = c->trecs.n; i-- > 0;)
		ro->first_trec[c->trecs.v[ro->trec_order[i]].process] = i;
	return true;
}

static void free_report_order(report_order *ro)
{
	free(ro->procs);
	free(ro->trec_order);
	free(ro->first_trec);
}

static void cpu_free(cpu *c)
{
	for (size_t i = 0; i < c->procs.n; i++) {
		free(c->procs.v[i].name);
		free(c->procs.v[i].cmdline);
	}
	free(c->procs.v);
	free(c->pid_proc.s);
	for (size_t i = 0; i < c->threads.n; i++) {
		free(c->threads.v[i].waiting.v);
		free(c->threads.v[i].name);
	}
	free(c->threads.v);
	free(c->tid_thread.s);
	for (size_t i = 0; i < c->trecs.n; i++)
		free(c->trecs.v[i].name);
	free(c->trecs.v);
	free(c->proc_tid_trec.s);
	free(c->samples.v);
	free(c->tid_ts_sample.s);
	free(c->pool.v);
	free(c->waiters.v);
	free(c->key_waiters.s);
	for (size_t i = 0; i < c->images.n; i++) {
		free(c->images.v[i].file);
		free(c->images.v[i].orig);
		free(c->images.v[i].pdb);
	}
	free(c->images.v);
	free(c->pid_base_image.s);
	for (size_t i = 0; i < c->pending_ids.n; i++) {
		free(c->pending_ids.v[i].orig);
		free(c->pending_ids.v[i].pdb);
	}
	free(c->pending_ids.v);
	free(c->pid_base_pending.s);
}

struct hs_cpu_profile {
	cpu c;
	agg a;
	report_order ro;
	bool have_sym;
	hs_cpu_view view;
};

void hs_cpu_profile_free(hs_cpu_profile *p)
{
	if (!p)
		return;
	free_report_order(&p->ro);
	if (p->have_sym)
		symbols_free(&p->a.sym);
	interner_free(&p->a.stacks);
	free(p->a.stack_weight.v);
	cpu_free(&p->c);
	free(p);
}

hs_cpu_profile *hs_cpu_profile_alloc(void)
{
	return calloc(1, sizeof(hs_cpu_profile));
}

cpu *hs_cpu_profile_model(hs_cpu_profile *p)
{
	return &p->c;
}

bool hs_cpu_profile_finish(hs_cpu_profile *p, const hs_regex *process)
{
	cpu *c = &p->c;
	if (c->oom)
		return false;
	if (!c->interval && c->interval_source == HS_CPU_INTERVAL_DEFAULT)
		c->interval = DEFAULT_INTERVAL_100NS;
	c->re = process;
	for (size_t i = 0; i < c->procs.n; i++)
		c->procs.v[i].shown = !process || hs_regex_match(process, hs_cpu_process_name(&c->procs.v[i]));
	p->have_sym = true; /* symbols_init leaves what it made for symbols_free even when it fails */
	if (!symbols_init(&p->a.sym, c))
		return false;
	if (!aggregate(c, &p->a))
		return false;
	if (!order_report(c, &p->ro))
		return false;
	/* The filter was only needed to build; the view points into vectors that no longer grow. */
	c->re = NULL;
	c->progress = NULL;
	hs_cpu_view *v = &p->view;
	v->interval = c->interval;
	v->interval_source = c->interval_source;
	v->total_weight = c->total_weight;
	v->shown_weight = p->a.shown_weight;
	v->stacked_weight = c->stacked_weight;
	v->frames_total = p->a.frames_total;
	v->frames_resolved = p->a.frames_resolved;
	v->undecodable = c->undecodable;
	v->unresolved_keys = c->unresolved_keys;
	v->processes = c->procs.v;
	v->nprocesses = c->procs.n;
	v->threads = c->trecs.v;
	v->nthreads = c->trecs.n;
	v->order = p->ro.procs;
	v->norder = p->ro.nprocs;
	v->thread_order = p->ro.trec_order;
	v->first_thread = p->ro.first_trec;
	v->nstacks = p->a.stacks.off.n;
	v->nframes = p->a.sym.frames.off.n;
	return true;
}

hs_status hs_cpu_profile_build(hs_etl *etl, const hs_regex *process, hs_cpu_progress_fn progress, void *ctx,
			       hs_cpu_profile **out)
{
	*out = NULL;
	hs_cpu_profile *p = hs_cpu_profile_alloc();
	if (!p)
		return HS_ENOMEM;
	cpu *c = &p->c;
	c->etl = etl;
	c->progress = progress;
	c->progress_ctx = ctx;
	hs_etl_foreach(etl, HS_ETL_TIME_ORDER, on_record, c);
	if (!hs_cpu_profile_finish(p, process))
		goto fail;
	*out = p;
	return HS_OK;
fail:
	hs_cpu_profile_free(p);
	return HS_ENOMEM;
}

const hs_cpu_view *hs_cpu_profile_view(const hs_cpu_profile *p)
{
	return &p->view;
}

const uint32_t *hs_cpu_profile_stack(const hs_cpu_profile *p, size_t sid, size_t *nframes, uint32_t *process,
				     uint64_t *weight)
{
	const uint32_t *v = intern_at(&p->a.stacks, (uint32_t)sid);
	*nframes = p->a.stacks.len.v[sid] / sizeof(uint32_t) - 1;
	*process = v[0];
	*weight = p->a.stack_weight.v[sid];
	return v + 1;
}

const char *hs_cpu_profile_frame(const hs_cpu_profile *p, uint32_t f)
{
	return intern_at(&p->a.sym.frames, f);
}
