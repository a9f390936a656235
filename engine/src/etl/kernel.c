/* etl/kernel.c: decoders for the classic kernel events (process, thread, context switch, ready thread, image, samples, stacks), the merged ImageId records and Kernel-Process exits, checking every length. */
#include <stddef.h>
#include <string.h>

#include "etl/etl_format.h"
#include "hindsight/etl_kernel.h"
#include "util/text.h"

/* Opcodes of the groups decoded here (see etl-format.md §5). */
enum {
	OP_SAMPLE = 46,
	OP_STACK = 32,
	OP_KEY_DELETE = 35,
	OP_KEY_RUNDOWN = 36,
	OP_KEY_KERNEL = 37,
	OP_KEY_USER = 38,
	OP_IMAGE_ID = 0,
	OP_DBGID_RSDS = 36,
};

/* KernelTraceControl's ImageId class, written by the merge step. Spelled as
 * fields because the project keeps GUID text out of engine sources. */
static const hs_guid image_id_guid = {0xb3e675d7u, 0x2554u, 0x4f18u, {0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde}};

/* A bounded view of a payload: every read checks the remaining length. */
typedef struct {
	const uint8_t *p;
	size_t len, off;
	size_t ps; /* pointer size */
} rd;

static void rd_init(rd *c, const hs_etl_record *r)
{
	c->p = r->payload;
	c->len = r->payload ? r->payload_len : 0;
	c->off = 0;
	c->ps = r->ptr64 ? 8 : 4;
}

/* n bytes at the cursor, moving past them; NULL (the cursor kept) when fewer remain. */
static const uint8_t *rd_take(rd *c, size_t n)
{
	if (c->len - c->off < n)
		return NULL;
	const uint8_t *at = c->p + c->off;
	c->off += n;
	return at;
}

static uint8_t le8(const uint8_t *p)
{
	return p[0];
}

/* The fixed-width little-endian readers, one per C type (a function cannot take the type). */
#define RD_LE(name, type, load)                            \
	static bool name(rd *c, type *v)                   \
	{                                                  \
		const uint8_t *at = rd_take(c, sizeof *v); \
		if (at)                                    \
			*v = load(at);                     \
		return at != NULL;                         \
	}
RD_LE(rd_u8, uint8_t, le8)
RD_LE(rd_u16, uint16_t, hs_le16)
RD_LE(rd_u32, uint32_t, hs_le32)
RD_LE(rd_u64, uint64_t, hs_le64)
#undef RD_LE

static bool rd_ptr(rd *c, uint64_t *v)
{
	if (c->ps == 8)
		return rd_u64(c, v);
	uint32_t v32;
	if (!rd_u32(c, &v32))
		return false;
	*v = v32;
	return true;
}

static bool rd_skip(rd *c, size_t n)
{
	return rd_take(c, n) != NULL;
}

/*
 * A NUL-terminated UTF-16LE string into UTF-8. A string that runs off the end
 * of the payload is a cut record, not a long name, so it fails. Lone
 * surrogates become U+FFFD so the output is always valid UTF-8 (JSON needs it).
 */
static bool rd_utf16z(rd *c, char *out, size_t cap, bool *trunc)
{
	bool cut = false, terminated = false;
	size_t units = hs_utf16le_to_utf8(c->p + c->off, (c->len - c->off) / 2, out, cap, &cut, &terminated);
	if (!terminated)
		return false;
	c->off += 2 * units;
	if (cut)
		*trunc = true;
	return true;
}

/* Length of a valid UTF-8 sequence starting at s (at most n bytes), or 0. */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
	uint8_t b = s[0];
	size_t len;
	uint32_t min;
	if (b < 0x80)
		return 1;
	if (b >= 0xC2 && b < 0xE0) {
		len = 2;
		min = 0x80;
	} else if (b >= 0xE0 && b < 0xF0) {
		len = 3;
		min = 0x800;
	} else if (b >= 0xF0 && b < 0xF5) {
		len = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	uint32_t cp = b & (0x3F >> (len - 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
		return 0;
	return len;
}

/*
 * n bytes of an 8-bit string into out. Process names are ANSI and PDB names
 * UTF-8; bytes that are not valid UTF-8 become '?' rather than guessing a
 * code page, so the output is valid UTF-8 whatever the logger wrote.
 */
static void str8_copy(const uint8_t *s, size_t n, char *out, size_t cap, bool *trunc)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq(s + i, n - i);
		const uint8_t *src = s + i;
		size_t w = k;
		if (k == 0) {
			src = (const uint8_t *)"?";
			w = 1;
			k = 1;
		}
		if (o + w >= cap) {
			*trunc = true;
			break;
		}
		memcpy(out + o, src, w);
		o += w;
		i += k;
	}
	out[o] = '\0';
}

/* A NUL-terminated 8-bit string (see str8_copy); one without its NUL is a cut record. */
static bool rd_str8z(rd *c, char *out, size_t cap, bool *trunc)
{
	size_t avail = c->len - c->off;
	if (avail == 0)
		return false;
	const uint8_t *s = c->p + c->off;
	const uint8_t *nul = memchr(s, 0, avail);
	if (!nul)
		return false;
	size_t n = (size_t)(nul - s);
	str8_copy(s, n, out, cap, trunc);
	c->off += n + 1;
	return true;
}

static bool is_kernel_record(const hs_etl_record *r)
{
	return r->kind == HS_ETL_SYSTEM || r->kind == HS_ETL_COMPACT || r->kind == HS_ETL_PERFINFO;
}

static bool is_image_id_record(const hs_etl_record *r)
{
	return (r->kind == HS_ETL_FULL || r->kind == HS_ETL_INSTANCE) && r->has_guid &&
	       memcmp(&r->guid, &image_id_guid, sizeof image_id_guid) == 0;
}

hs_etlk_kind hs_etlk_classify(const hs_etl_record *r)
{
	if (is_image_id_record(r)) {
		if (r->opcode == OP_IMAGE_ID)
			return HS_ETLK_IMAGE_ID;
		if (r->opcode == OP_DBGID_RSDS)
			return HS_ETLK_DBGID_RSDS;
		return HS_ETLK_OTHER;
	}
	if (!is_kernel_record(r))
		return HS_ETLK_OTHER;
	uint8_t op = r->opcode;
	switch (r->group) {
	case HS_ETL_GROUP_PROCESS:
		if (op == HS_ETLK_OP_LOAD) /* the image-load quirk (etl-format.md §5) */
			return HS_ETLK_IMAGE;
		if ((op >= HS_ETLK_OP_START && op <= HS_ETLK_OP_DCEND) || op == HS_ETLK_OP_DEFUNCT)
			return HS_ETLK_PROCESS;
		break;
	case HS_ETL_GROUP_THREAD:
		if (op >= HS_ETLK_OP_START && op <= HS_ETLK_OP_DCEND)
			return HS_ETLK_THREAD;
		break;
	case HS_ETL_GROUP_IMAGE:
		if ((op >= HS_ETLK_OP_END && op <= HS_ETLK_OP_DCEND) || op == HS_ETLK_OP_LOAD)
			return HS_ETLK_IMAGE;
		break;
	case HS_ETL_GROUP_PERFINFO:
		if (op == OP_SAMPLE)
			return HS_ETLK_SAMPLE;
		if (op >= HS_ETLK_OP_SET_INTERVAL && op <= HS_ETLK_OP_COLLECTION_END)
			return HS_ETLK_INTERVAL;
		break;
	case HS_ETL_GROUP_STACKWALK:
		if (op == OP_STACK)
			return HS_ETLK_STACK;
		if (op == OP_KEY_KERNEL || op == OP_KEY_USER)
			return HS_ETLK_STACK_KEY;
		if (op == OP_KEY_DELETE || op == OP_KEY_RUNDOWN)
			return HS_ETLK_STACK_DEF;
		break;
	default:
		break;
	}
	return HS_ETLK_OTHER;
}

/*
 * UserSID: a u32 0 when there is none; otherwise a TOKEN_USER (two pointers)
 * then a SID whose length follows from its SubAuthorityCount (PerfView's
 * SkipSID). A SID needs revision 1 and at most 15 sub-authorities.
 */
static bool rd_sid(rd *c, const uint8_t **sid, size_t *sid_len)
{
	*sid = NULL;
	*sid_len = 0;
	if (c->len - c->off < 4)
		return false;
	if (hs_le32(c->p + c->off) == 0)
		return rd_skip(c, 4);
	if (!rd_skip(c, 2 * c->ps))
		return false;
	if (c->len - c->off < 8)
		return false;
	const uint8_t *s = c->p + c->off;
	if (s[0] != 1 || s[1] > 15)
		return false;
	size_t n = 8 + 4 * (size_t)s[1];
	if (!rd_skip(c, n))
		return false;
	*sid = s;
	*sid_len = n;
	return true;
}

/* A decoder's opening: r must be of kind k; out (size bytes) starts zeroed and c reads r's payload. */
static bool rd_open(rd *c, const hs_etl_record *r, hs_etlk_kind k, void *out, size_t size)
{
	if (hs_etlk_classify(r) != k)
		return false;
	memset(out, 0, size);
	rd_init(c, r);
	return true;
}

bool hs_etl_decode_process(const hs_etl_record *r, hs_etl_process *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_PROCESS, out, sizeof *out))
		return false;
	out->opcode = r->opcode;
	out->version = r->version;
	uint64_t v;
	if (r->version == 0) {
		/* ProcessId and ParentId were pointer-sized then. */
		if (!rd_ptr(&c, &v))
			return false;
		out->pid = (uint32_t)v;
		if (!rd_ptr(&c, &v))
			return false;
		out->parent_pid = (uint32_t)v;
	} else {
		uint32_t es;
		/* v1 has PageDirectoryBase where v2+ have UniqueProcessKey. */
		if (!rd_ptr(&c, &v))
			return false;
		if (r->version >= 2)
			out->unique_process_key = v;
		else
			out->directory_table_base = v;
		if (!rd_u32(&c, &out->pid) || !rd_u32(&c, &out->parent_pid) || !rd_u32(&c, &out->session_id) ||
		    !rd_u32(&c, &es))
			return false;
		out->exit_status = (int32_t)es;
		if (r->version >= 3 && !rd_ptr(&c, &out->directory_table_base))
			return false;
		if (r->version >= 4 && !rd_u32(&c, &out->flags))
			return false;
	}
	if (!rd_sid(&c, &out->user_sid, &out->user_sid_len))
		return false;
	if (!rd_str8z(&c, out->image_file_name, sizeof out->image_file_name, &out->truncated))
		return false;
	if (r->version >= 2 && !rd_utf16z(&c, out->command_line, sizeof out->command_line, &out->truncated))
		return false;
	/* Packaged-app identity came with v4; a string that starts must end. */
	if (r->version >= 4 && c.off < c.len &&
	    !rd_utf16z(&c, out->package_full_name, sizeof out->package_full_name, &out->truncated))
		return false;
	if (r->version >= 4 && c.off < c.len &&
	    !rd_utf16z(&c, out->application_id, sizeof out->application_id, &out->truncated))
		return false;
	return true;
}

bool hs_etl_decode_thread(const hs_etl_record *r, hs_etl_thread *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_THREAD, out, sizeof *out))
		return false;
	out->opcode = r->opcode;
	out->version = r->version;
	if (r->version == 0) {
		/* Version 0 put the thread first. */
		if (!rd_u32(&c, &out->tid) || !rd_u32(&c, &out->pid))
			return false;
		return true;
	}
	if (!rd_u32(&c, &out->pid) || !rd_u32(&c, &out->tid))
		return false;
	if (r->version < 2)
		return true; /* v1's extra fields differ by opcode and nothing here needs them */
	if (!rd_ptr(&c, &out->stack_base) || !rd_ptr(&c, &out->stack_limit) || !rd_ptr(&c, &out->user_stack_base) ||
	    !rd_ptr(&c, &out->user_stack_limit) || !rd_ptr(&c, &out->start_addr) ||
	    !rd_ptr(&c, &out->win32_start_addr) || !rd_ptr(&c, &out->teb_base) || !rd_u32(&c, &out->sub_process_tag))
		return false;
	if (r->version < 3)
		return true;
	if (!rd_u8(&c, &out->base_priority) || !rd_u8(&c, &out->page_priority) || !rd_u8(&c, &out->io_priority) ||
	    !rd_u8(&c, &out->thread_flags))
		return false;
	/* The name came later within version 3; its absence is not damage. */
	if (c.len - c.off >= 2 && !rd_utf16z(&c, out->name, sizeof out->name, &out->truncated))
		return false;
	return true;
}

/*
 * The scheduler's payloads as C structs of the MOF fields in their order: every
 * field sits at its natural alignment, so the compiler lays them out exactly as
 * the payload is (the asserts below hold that against the documented offsets).
 * They are read with hs_le* at these offsets, never by casting a payload.
 */
struct cswitch_v2 {
	uint32_t new_thread_id, old_thread_id;
	int8_t new_thread_priority, old_thread_priority;
	uint8_t previous_cstate;
	int8_t spare_byte, old_thread_wait_reason, old_thread_wait_mode, old_thread_state, old_thread_wait_ideal_processor;
	uint32_t new_thread_wait_time, reserved;
};
_Static_assert(sizeof(struct cswitch_v2) == 24, "CSwitch v2-v4 is 24 bytes");
_Static_assert(offsetof(struct cswitch_v2, new_thread_priority) == 8, "NewThreadPriority at 8");
_Static_assert(offsetof(struct cswitch_v2, previous_cstate) == 10, "PreviousCState at 10");
_Static_assert(offsetof(struct cswitch_v2, old_thread_wait_reason) == 12, "OldThreadWaitReason at 12");
_Static_assert(offsetof(struct cswitch_v2, old_thread_state) == 14, "OldThreadState at 14");
_Static_assert(offsetof(struct cswitch_v2, old_thread_wait_ideal_processor) == 15, "OldThreadWaitIdealProcessor at 15");
_Static_assert(offsetof(struct cswitch_v2, new_thread_wait_time) == 16, "NewThreadWaitTime at 16");

/* CSwitch_V1 (Windows XP): quanta where v2 has PreviousCState and SpareByte, and no Reserved. */
struct cswitch_v1 {
	uint32_t new_thread_id, old_thread_id;
	int8_t new_thread_priority, old_thread_priority, new_thread_quantum, old_thread_quantum;
	int8_t old_thread_wait_reason, old_thread_wait_mode, old_thread_state, old_thread_wait_ideal_processor;
	uint32_t new_thread_wait_time;
};
_Static_assert(sizeof(struct cswitch_v1) == 20, "CSwitch v1 is 20 bytes");
_Static_assert(offsetof(struct cswitch_v1, old_thread_wait_reason) == offsetof(struct cswitch_v2, old_thread_wait_reason),
	       "v1 and v2 share the wait fields' offsets");
_Static_assert(offsetof(struct cswitch_v1, new_thread_wait_time) == offsetof(struct cswitch_v2, new_thread_wait_time),
	       "v1 and v2 share NewThreadWaitTime's offset");

struct ready_thread_v2 {
	uint32_t t_thread_id;
	int8_t adjust_reason, adjust_increment, flag, reserved;
};
_Static_assert(sizeof(struct ready_thread_v2) == 8, "ReadyThread is 8 bytes");
_Static_assert(offsetof(struct ready_thread_v2, flag) == 6, "Flag at 6");

static bool is_thread_op(const hs_etl_record *r, uint8_t op)
{
	return is_kernel_record(r) && r->group == HS_ETL_GROUP_THREAD && r->opcode == op && r->payload;
}

bool hs_etl_decode_cswitch(const hs_etl_record *r, hs_etl_cswitch *out)
{
	if (!is_thread_op(r, HS_ETLK_OP_CSWITCH) || r->version == 0)
		return false;
	size_t need = r->version == 1 ? sizeof(struct cswitch_v1) : sizeof(struct cswitch_v2);
	if (r->payload_len < need)
		return false;
	const uint8_t *p = r->payload;
	memset(out, 0, sizeof *out);
	out->version = r->version;
	out->new_tid = hs_le32(p + offsetof(struct cswitch_v2, new_thread_id));
	out->old_tid = hs_le32(p + offsetof(struct cswitch_v2, old_thread_id));
	out->new_priority = (int8_t)p[offsetof(struct cswitch_v2, new_thread_priority)];
	out->old_priority = (int8_t)p[offsetof(struct cswitch_v2, old_thread_priority)];
	if (r->version >= 2)
		out->previous_cstate = p[offsetof(struct cswitch_v2, previous_cstate)];
	out->old_wait_reason = (int8_t)p[offsetof(struct cswitch_v2, old_thread_wait_reason)];
	out->old_wait_mode = (int8_t)p[offsetof(struct cswitch_v2, old_thread_wait_mode)];
	out->old_state = (int8_t)p[offsetof(struct cswitch_v2, old_thread_state)];
	out->old_wait_ideal_processor = (int8_t)p[offsetof(struct cswitch_v2, old_thread_wait_ideal_processor)];
	out->new_wait_time = hs_le32(p + offsetof(struct cswitch_v2, new_thread_wait_time));
	return true;
}

bool hs_etl_decode_ready_thread(const hs_etl_record *r, hs_etl_ready_thread *out)
{
	if (!is_thread_op(r, HS_ETLK_OP_READY_THREAD) || r->version < 2 || r->payload_len < sizeof(struct ready_thread_v2))
		return false;
	const uint8_t *p = r->payload;
	memset(out, 0, sizeof *out);
	out->version = r->version;
	out->tid = hs_le32(p + offsetof(struct ready_thread_v2, t_thread_id));
	out->readier = r->tid; /* UINT32_MAX from a PERFINFO header */
	out->adjust_reason = (int8_t)p[offsetof(struct ready_thread_v2, adjust_reason)];
	out->adjust_increment = (int8_t)p[offsetof(struct ready_thread_v2, adjust_increment)];
	out->flags = (uint8_t)p[offsetof(struct ready_thread_v2, flag)];
	return true;
}

bool hs_etl_decode_image(const hs_etl_record *r, hs_etl_image *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_IMAGE, out, sizeof *out))
		return false;
	out->opcode = r->opcode;
	out->version = r->version;
	if (!rd_ptr(&c, &out->base))
		return false;
	if (r->version == 0) {
		uint32_t size;
		if (!rd_u32(&c, &size))
			return false;
		out->size = size;
	} else {
		if (!rd_ptr(&c, &out->size) || !rd_u32(&c, &out->pid))
			return false;
	}
	if (r->version >= 2) {
		uint16_t reserved0;
		if (!rd_u32(&c, &out->checksum) || !rd_u32(&c, &out->time_date_stamp))
			return false;
		/* Reserved0 in v2; SignatureLevel, SignatureType and a u16 in v3. */
		if (!rd_u8(&c, &out->signature_level) || !rd_u8(&c, &out->signature_type) || !rd_u16(&c, &reserved0))
			return false;
		if (r->version < 3)
			out->signature_level = out->signature_type = 0;
		if (!rd_ptr(&c, &out->default_base) || !rd_skip(&c, 16)) /* DefaultBase, Reserved1..4 */
			return false;
	}
	if (!rd_utf16z(&c, out->file_name, sizeof out->file_name, &out->truncated))
		return false;
	/* An image covers at least one page; a zero size or a range that wraps is garbage. */
	if (out->size == 0 || out->base + out->size < out->base)
		return false;
	return true;
}

bool hs_etl_decode_sample(const hs_etl_record *r, hs_etl_sample *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_SAMPLE, out, sizeof *out))
		return false;
	uint8_t flags;
	if (!rd_ptr(&c, &out->ip) || !rd_u32(&c, &out->tid) || !rd_u16(&c, &out->count) || !rd_u8(&c, &flags) ||
	    !rd_u8(&c, &out->rank))
		return false;
	out->dpc = (flags & 1) != 0;
	out->isr = (flags & 2) != 0;
	out->priority = (uint8_t)((flags >> 3) & 0x1F);
	return true;
}

bool hs_etl_decode_interval(const hs_etl_record *r, hs_etl_interval *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_INTERVAL, out, sizeof *out))
		return false;
	out->opcode = r->opcode;
	return rd_u32(&c, &out->source) && rd_u32(&c, &out->new_interval) && rd_u32(&c, &out->old_interval);
}

uint64_t hs_etl_stack_frame(const hs_etl_frames *f, size_t i)
{
	if (i >= f->count)
		return 0;
	return f->ptr64 ? hs_le64(f->frames + 8 * i) : hs_le32(f->frames + 4 * i);
}

/* The rest of the payload as whole frames: at least one, and nothing left over. */
static bool rd_frames(rd *c, hs_etl_frames *f)
{
	size_t rest = c->len - c->off;
	if (rest == 0 || rest % c->ps != 0)
		return false;
	f->frames = c->p + c->off;
	f->count = rest / c->ps;
	f->ptr64 = c->ps == 8;
	c->off = c->len;
	return true;
}

bool hs_etl_decode_stack(const hs_etl_record *r, hs_etl_stack *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_STACK, out, sizeof *out))
		return false;
	return rd_u64(&c, &out->event_ts) && rd_u32(&c, &out->pid) && rd_u32(&c, &out->tid) &&
	       rd_frames(&c, &out->frames);
}

bool hs_etl_decode_stack_key(const hs_etl_record *r, hs_etl_stack_key *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_STACK_KEY, out, sizeof *out))
		return false;
	out->user = r->opcode == OP_KEY_USER;
	return rd_u64(&c, &out->event_ts) && rd_u32(&c, &out->pid) && rd_u32(&c, &out->tid) && rd_ptr(&c, &out->key);
}

bool hs_etl_decode_stack_def(const hs_etl_record *r, hs_etl_stack_def *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_STACK_DEF, out, sizeof *out))
		return false;
	return rd_ptr(&c, &out->key) && rd_frames(&c, &out->frames);
}

bool hs_etl_decode_image_id(const hs_etl_record *r, hs_etl_image_id *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_IMAGE_ID, out, sizeof *out))
		return false;
	uint32_t payload_pid;
	if (!rd_ptr(&c, &out->base) || !rd_ptr(&c, &out->size) || !rd_u32(&c, &payload_pid) ||
	    !rd_u32(&c, &out->time_date_stamp) ||
	    !rd_utf16z(&c, out->original_file_name, sizeof out->original_file_name, &out->truncated))
		return false;
	/* The header names the process; the payload's field is usually 0. */
	out->pid = r->pid != UINT32_MAX ? r->pid : payload_pid;
	return true;
}

bool hs_etl_decode_dbgid(const hs_etl_record *r, hs_etl_dbgid *out)
{
	rd c;
	if (!rd_open(&c, r, HS_ETLK_DBGID_RSDS, out, sizeof *out))
		return false;
	if (!rd_ptr(&c, &out->base) || !rd_u32(&c, &out->pid) || !rd_u32(&c, &out->guid.data1) ||
	    !rd_u16(&c, &out->guid.data2) || !rd_u16(&c, &out->guid.data3))
		return false;
	for (int i = 0; i < 8; i++)
		if (!rd_u8(&c, &out->guid.data4[i]))
			return false;
	return rd_u32(&c, &out->age) && rd_str8z(&c, out->pdb_file_name, sizeof out->pdb_file_name, &out->truncated);
}

bool hs_etl_kernel_address(uint64_t addr, bool ptr64)
{
	/* The kernel owns the upper half: the canonical high half on x64, above
	 * 2 GB on 32-bit Windows (the /3GB boot option moves it; PerfView uses
	 * the same split). */
	return ptr64 ? addr >= 0xFFFF800000000000ull : addr >= 0x80000000ull;
}

/*
 * Kernel-Process ProcessStop: ProcessID u32, CreateTime and ExitTime
 * (FILETIME), ExitCode u32, then counters, with ImageName (ANSI) last at 48
 * (v0) or 76 (v1). Payload fields are packed, not aligned. A name cut by the
 * end of the payload is kept as far as it goes: the exit code is the point of
 * the event, and a short name is still a lead.
 */
bool hs_etl_decode_process_stop(const hs_etl_record *r, hs_etl_process_stop *out)
{
	if (r->kind != HS_ETL_EVENT || r->version > 1 || !r->payload || r->payload_len < 24)
		return false;
	memset(out, 0, sizeof *out);
	rd c;
	rd_init(&c, r);
	out->version = r->version;
	if (!rd_u32(&c, &out->pid) || !rd_u64(&c, &out->create_time) || !rd_u64(&c, &out->exit_time) ||
	    !rd_u32(&c, &out->exit_code))
		return false;
	/* The counters are there when the name is; a payload cut before them leaves them 0. */
	if (rd_u32(&c, &out->token_elevation_type) && rd_u32(&c, &out->handle_count) &&
	    rd_u64(&c, &out->commit_charge))
		rd_u64(&c, &out->commit_peak);
	size_t name_off = r->version == 0 ? 48 : 76;
	if (r->payload_len > name_off) {
		const uint8_t *s = r->payload + name_off;
		size_t avail = r->payload_len - name_off;
		const uint8_t *nul = memchr(s, 0, avail);
		str8_copy(s, nul ? (size_t)(nul - s) : avail, out->image_name, sizeof out->image_name, &out->truncated);
	}
	out->crashed = (out->exit_code >> 30) == 3;
	return true;
}

/* Kernel event groups (the high byte of a HookId, EVENT_TRACE_GROUP_* >> 8): their names are fixed by the format. */
const char *hs_etl_kernel_group_name(uint8_t group)
{
	switch (group) {
	case 0x00: return "EventTrace";
	case 0x01: return "DiskIo";
	case 0x02: return "PageFault";
	case 0x03: return "Process";
	case 0x04: return "FileIo";
	case 0x05: return "Thread";
	case 0x06: return "TcpIp";
	case 0x07: return "Job";
	case 0x08: return "UdpIp";
	case 0x09: return "Registry";
	case 0x0A: return "DbgPrint";
	case 0x0B: return "EventTraceConfig";
	case 0x0C: return "Pool";
	case 0x0F: return "PerfInfo";
	case 0x10: return "Heap";
	case 0x11: return "Object";
	case 0x12: return "Power";
	case 0x13: return "Modbound";
	case 0x14: return "ImageLoad";
	case 0x15: return "Dpc";
	case 0x17: return "Cc";
	case 0x18: return "StackWalk";
	case 0x1A: return "ALPC";
	case 0x1B: return "SplitIo";
	case 0x20: return "ThreadPool";
	case 0x22: return "Hypervisor";
	}
	return NULL;
}

const char *hs_ntstatus_name(uint32_t status)
{
	switch (status) {
	case 0xC0000005: return "STATUS_ACCESS_VIOLATION";
	case 0xC0000006: return "STATUS_IN_PAGE_ERROR";
	case 0xC000001D: return "STATUS_ILLEGAL_INSTRUCTION";
	case 0xC0000025: return "STATUS_NONCONTINUABLE_EXCEPTION";
	case 0xC000008C: return "STATUS_ARRAY_BOUNDS_EXCEEDED";
	case 0xC0000094: return "STATUS_INTEGER_DIVIDE_BY_ZERO";
	case 0xC0000095: return "STATUS_INTEGER_OVERFLOW";
	case 0xC00000FD: return "STATUS_STACK_OVERFLOW";
	case 0xC0000135: return "STATUS_DLL_NOT_FOUND";
	case 0xC0000142: return "STATUS_DLL_INIT_FAILED";
	case 0xC000013A: return "STATUS_CONTROL_C_EXIT";
	case 0xC0000374: return "STATUS_HEAP_CORRUPTION";
	case 0xC0000409: return "STATUS_STACK_BUFFER_OVERRUN (fail-fast)";
	case 0xC0000602: return "STATUS_FAIL_FAST_EXCEPTION";
	case 0x80000003: return "STATUS_BREAKPOINT";
	case 0x40010004: return "DBG_TERMINATE_PROCESS";
	}
	return NULL;
}

/*
 * The classic event-class GUIDs of the kernel groups (EVENT_TRACE_GROUP_* >>
 * 8): kernel records carry only the group, and consumers present them under
 * these GUIDs, which Windows fixes (etl-format.md 5); catalogs name classic
 * events by them (`classic_guid`). Spelled as fields because the project
 * keeps GUID text out of engine sources.
 */
static const hs_guid group_class_guids[] = {
	[0x00] = {0x68fdd900u, 0x4a3eu, 0x11d1u, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}}, /* EventTrace */
	[0x01] = {0x3d6fa8d4u, 0xfe05u, 0x11d0u, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}, /* DiskIo */
	[0x02] = {0x3d6fa8d3u, 0xfe05u, 0x11d0u, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}, /* PageFault */
	[0x03] = {0x3d6fa8d0u, 0xfe05u, 0x11d0u, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}, /* Process */
	[0x04] = {0x90cbdc39u, 0x4a3eu, 0x11d1u, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}}, /* FileIo */
	[0x05] = {0x3d6fa8d1u, 0xfe05u, 0x11d0u, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}, /* Thread */
	[0x06] = {0x9a280ac0u, 0xc8e0u, 0x11d1u, {0x84, 0xe2, 0x00, 0xc0, 0x4f, 0xb9, 0x98, 0xa2}}, /* TcpIp */
	[0x07] = {0x3282fc76u, 0xfeedu, 0x498eu, {0x8a, 0xa7, 0xe7, 0x0f, 0x45, 0x9d, 0x43, 0x0e}}, /* Job */
	[0x08] = {0xbf3a50c5u, 0xa9c9u, 0x4988u, {0xa0, 0x05, 0x2d, 0xf0, 0xb7, 0xc8, 0x0f, 0x80}}, /* UdpIp */
	[0x09] = {0xae53722eu, 0xc863u, 0x11d2u, {0x86, 0x59, 0x00, 0xc0, 0x4f, 0xa3, 0x21, 0xa1}}, /* Registry */
	[0x0A] = {0x13976d09u, 0xa327u, 0x438cu, {0x95, 0x0b, 0x7f, 0x03, 0x19, 0x28, 0x15, 0xc7}}, /* DbgPrint */
	[0x0B] = {0x01853a65u, 0x418fu, 0x4f36u, {0xae, 0xfc, 0xdc, 0x0f, 0x1d, 0x2f, 0xd2, 0x35}}, /* EventTraceConfig */
	[0x0C] = {0x99134383u, 0x5248u, 0x43fcu, {0x83, 0x4b, 0x52, 0x94, 0x54, 0xe7, 0x5d, 0xf3}}, /* Spare1 */
	[0x0D] = {0x42695762u, 0xea50u, 0x497au, {0x90, 0x68, 0x5c, 0xbb, 0xb3, 0x5e, 0x0b, 0x95}}, /* Wnf */
	[0x0E] = {0x0268a8b6u, 0x74fdu, 0x4302u, {0x9d, 0xd0, 0x6e, 0x8f, 0x17, 0x95, 0xc0, 0xcf}}, /* Pool */
	[0x0F] = {0xce1dbfb4u, 0x137eu, 0x4da6u, {0x87, 0xb0, 0x3f, 0x59, 0xaa, 0x10, 0x2c, 0xbc}}, /* PerfInfo */
	[0x10] = {0x222962abu, 0x6180u, 0x4b88u, {0xa8, 0x25, 0x34, 0x6b, 0x75, 0xf2, 0xa2, 0x4a}}, /* Heap */
	[0x11] = {0x89497f50u, 0xeffeu, 0x4440u, {0x8c, 0xf2, 0xce, 0x6b, 0x1c, 0xdc, 0xac, 0xa7}}, /* Object */
	[0x12] = {0xe43445e0u, 0x0903u, 0x48c3u, {0xb8, 0x78, 0xff, 0x0f, 0xcc, 0xeb, 0xdd, 0x04}}, /* Power */
	[0x13] = {0xa9152f00u, 0x3f58u, 0x4beeu, {0x92, 0xa1, 0x70, 0xc7, 0xd0, 0x79, 0xd5, 0xdd}}, /* ModBound */
	[0x14] = {0x2cb15d1du, 0x5fc1u, 0x11d2u, {0xab, 0xe1, 0x00, 0xa0, 0xc9, 0x11, 0xf5, 0x18}}, /* ImageLoad */
	[0x15] = {0xb2d14872u, 0x7c5bu, 0x463du, {0x84, 0x19, 0xee, 0x9b, 0xf7, 0xd2, 0x3e, 0x04}}, /* Dpc */
	[0x16] = {0x7687a439u, 0xf752u, 0x45b8u, {0xb7, 0x41, 0x32, 0x1a, 0xec, 0x0f, 0x8d, 0xf9}}, /* Cc */
	[0x17] = {0x3ac66736u, 0xcc59u, 0x4cffu, {0x81, 0x15, 0x8d, 0xf5, 0x0e, 0x39, 0x81, 0x6b}}, /* CritSec */
	[0x18] = {0xdef2fe46u, 0x7bd6u, 0x4b80u, {0xbd, 0x94, 0xf5, 0x7f, 0xe2, 0x0d, 0x0c, 0xe3}}, /* StackWalk */
	[0x19] = {0x9aec974bu, 0x5b8eu, 0x4118u, {0x9b, 0x92, 0x31, 0x86, 0xd8, 0x00, 0x2c, 0xe5}}, /* Ums */
	[0x1A] = {0x45d8cccdu, 0x539fu, 0x4b72u, {0xa8, 0xb7, 0x5c, 0x68, 0x31, 0x42, 0x60, 0x9a}}, /* ALPC */
	[0x1B] = {0xd837ca92u, 0x12b9u, 0x44a5u, {0xad, 0x6a, 0x3a, 0x65, 0xb3, 0x57, 0x8a, 0xa8}}, /* SplitIo */
	[0x1C] = {0xc861d0e2u, 0xa2c1u, 0x4d36u, {0x9f, 0x9c, 0x97, 0x0b, 0xab, 0x94, 0x3a, 0x12}}, /* ThreadPool */
	[0x1D] = {0x7f2a405cu, 0x69b5u, 0x4bf9u, {0xa1, 0xf5, 0x30, 0xe8, 0xf1, 0xaf, 0xab, 0x5e}}, /* Hypervisor */
	[0x1E] = {0x2ce9a149u, 0xeffeu, 0x42f0u, {0xa6, 0x35, 0xa1, 0xd3, 0x9e, 0x26, 0xc8, 0xf2}}, /* HypervisorX */
};
#define N_GROUP_CLASSES (sizeof group_class_guids / sizeof group_class_guids[0])

bool hs_etl_kernel_header(const hs_etl_record *r)
{
	return is_kernel_record(r) && r->group == HS_ETL_GROUP_HEADER;
}

bool hs_etl_kernel_class_guid(const hs_etl_record *r, hs_guid *out)
{
	if (!is_kernel_record(r))
		return false;
	/* The image load is logged in the Process group (opcode 10) but is an ImageLoad-class event. */
	bool image_load = r->group == HS_ETL_GROUP_PROCESS && r->opcode == HS_ETLK_OP_LOAD;
	uint8_t group = image_load ? HS_ETL_GROUP_IMAGE : r->group;
	if (group >= N_GROUP_CLASSES)
		return false;
	*out = group_class_guids[group];
	return true;
}
