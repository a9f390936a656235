/* etl/writer.c: writes .etl files: per-processor buffers, optional XPRESS compression, the header buffer last. */
#include "hindsight/etl_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl_format.h"
#include "etl/xpress.h"
#include "util/compat.h"
#include "hindsight/vec.h"

/* EVENT_TRACE_FILE_MODE_SEQUENTIAL and EVENT_TRACE_COMPRESSED_MODE (LogFileMode). */
#define MODE_SEQUENTIAL 0x00000001u
#define MODE_COMPRESSED 0x04000000u
/* ETW_BUFFER_STATE Flush; snail also reads the first buffer's State as the
 * COMPRESSION_FORMAT (3 = XPRESS), and both readings agree on 3. */
#define BUFFER_STATE_FLUSH 3u
#define SYSTEM_TRACE_VERSION 2u
#define MIN_BUFFER 1024u
#define SYS_HEADER_SIZE 0x20u
#define TIME_ZONE_SIZE 0xACu
#define MAX_NAME_BYTES 4096u

typedef struct {
	uint8_t *buf; /* buffer_size bytes; the 0x48-byte header is filled at flush */
	uint32_t used; /* end of records, from the start of the buffer */
	int64_t last_ts;
	uint16_t extra_flags;
} cpu_buffer;

typedef struct {
	uint8_t *bytes;
	uint32_t len;
} held_buffer;

struct hs_etl_writer {
	hs_etl_writer_opts o;
	char *logger_name, *log_file_name;
	char *path, *tmp_path;
	int fd;
	uint64_t file_off; /* where the next data buffer goes; the header buffer sits at 0 */
	uint64_t next_sequence;
	uint32_t n_data;
	cpu_buffer *cpu[HS_ETL_PROCESSOR_INDEX_MASK + 1];
	uint32_t max_cpu_plus1;
	uint8_t *header;          /* the header buffer, records from 0x48 */
	uint32_t header_used;     /* end of its records */
	uint8_t *names16;         /* LoggerName\0 LogFileName\0 in UTF-16LE */
	uint32_t names16_len;
	uint8_t *zbuf;
	size_t zcap;
	hs_vec held; /* of held_buffer; file_order_rotate: data buffers kept until close */
	hs_status err;
};

static uint32_t align8(uint32_t n)
{
	return (n + 7u) & ~7u;
}

void hs_etl_writer_opts_default(hs_etl_writer_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->buffer_size = 64u * 1024u;
	o->pointer_size = 8;
	o->cpus = 1;
	o->version[0] = 10;
	o->version[2] = 1;
	o->version[3] = 5;
	o->log_file_mode = MODE_SEQUENTIAL;
	o->start_buffers = 1;
	o->clock_type = 1;
	o->perf_freq = 10000000u;
	o->timer_resolution = 156250u;
}

static bool usable_buffer_size(uint32_t n)
{
	return n % 8u == 0 && n >= MIN_BUFFER && n <= HS_ETL_MAX_BUFFER_BYTES;
}

void hs_etl_writer_opts_from(const hs_etl_header *h, hs_etl_writer_opts *o)
{
	hs_etl_writer_opts_default(o);
	if (!h || !h->valid)
		return;
	if (usable_buffer_size(h->buffer_size))
		o->buffer_size = h->buffer_size;
	if (h->pointer_size == 4 || h->pointer_size == 8)
		o->pointer_size = h->pointer_size;
	o->cpus = h->cpus;
	memcpy(o->version, h->version, 4);
	o->provider_version = h->provider_version;
	o->end_time = h->end_time;
	o->boot_time = h->boot_time;
	o->start_time = h->start_time;
	o->timer_resolution = h->timer_resolution;
	o->maximum_file_size = h->maximum_file_size;
	o->log_file_mode = h->log_file_mode;
	o->start_buffers = h->start_buffers;
	o->cpu_mhz = h->cpu_mhz;
	o->clock_type = h->clock_type;
	o->perf_freq = h->perf_freq;
	o->start_ts = h->start_ts;
	o->events_lost = h->events_lost;
	o->buffers_lost = h->buffers_lost;
	o->logger_name = h->logger_name;
	o->log_file_name = h->log_file_name;
	o->compress = (h->log_file_mode & MODE_COMPRESSED) != 0;
}

/* ---- names ---- */

/* Decodes one UTF-8 sequence; malformed input becomes U+FFFD so a bad name
 * never makes a file unwritable. */
static uint32_t next_utf8(const unsigned char **sp)
{
	const unsigned char *s = *sp;
	uint32_t c = s[0];
	int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
	if (n < 0) {
		*sp = s + 1;
		return 0xFFFD;
	}
	c &= n == 0 ? 0x7Fu : n == 1 ? 0x1Fu : n == 2 ? 0x0Fu : 0x07u;
	for (int i = 1; i <= n; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*sp = s + i;
			return 0xFFFD;
		}
		c = c << 6 | (s[i] & 0x3Fu);
	}
	*sp = s + n + 1;
	if (c > 0x10FFFF || (c >= 0xD800 && c < 0xE000))
		return 0xFFFD;
	return c;
}

/* Appends s as UTF-16LE plus a NUL unit; false when out of room. */
static bool put_utf16(uint8_t *out, uint32_t cap, uint32_t *len, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		uint32_t c = next_utf8(&p);
		if (c >= 0x10000) {
			if (*len + 4 > cap)
				return false;
			c -= 0x10000;
			hs_put16(out + *len, (uint16_t)(0xD800 + (c >> 10)));
			hs_put16(out + *len + 2, (uint16_t)(0xDC00 + (c & 0x3FF)));
			*len += 4;
		} else {
			if (*len + 2 > cap)
				return false;
			hs_put16(out + *len, (uint16_t)c);
			*len += 2;
		}
	}
	if (*len + 2 > cap)
		return false;
	hs_put16(out + *len, 0);
	*len += 2;
	return true;
}

static uint32_t logfile_struct_size(const hs_etl_writer *w)
{
	return w->o.pointer_size == 4 ? 0x110u : 0x118u;
}

static uint32_t header_record_size(const hs_etl_writer *w)
{
	return SYS_HEADER_SIZE + logfile_struct_size(w) + w->names16_len;
}

/* ---- file output ---- */

static hs_status errno_status(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return HS_ENOENT;
	case EACCES:
	case EPERM:
	case EROFS:
		return HS_EPERM;
	case ENOMEM:
		return HS_ENOMEM;
	}
	return HS_EIO;
}

static hs_status write_at(hs_etl_writer *w, uint64_t off, const uint8_t *p, size_t n)
{
	while (n) {
		int64_t k = hs_pwrite(w->fd, p, n, off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno_status(errno) : HS_EIO;
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return HS_OK;
}

/* The temporary name carries the pid and a counter, and O_EXCL keeps two
 * writers (or a stale leftover) from sharing one; 0666 lets the umask decide
 * the final file's mode, as for any file the user creates. */
static hs_status create_tmp(hs_etl_writer *w)
{
	size_t n = strlen(w->path) + 48;
	w->tmp_path = malloc(n);
	if (!w->tmp_path)
		return HS_ENOMEM;
	for (unsigned i = 0; i < 100; i++) {
		snprintf(w->tmp_path, n, "%s.tmp-%lu-%u", w->path, hs_getpid(), i);
		w->fd = hs_open_new(w->tmp_path);
		if (w->fd >= 0)
			return HS_OK;
		if (errno != EEXIST)
			return errno_status(errno);
	}
	return HS_EIO;
}

/* ---- buffers ---- */

static void fill_buffer_header(uint8_t *b, uint32_t size, uint32_t end, int64_t ts, uint64_t seq, uint16_t cpu,
			       uint16_t flags, uint16_t type)
{
	memset(b, 0, HS_ETL_BUFFER_HEADER_SIZE);
	hs_put32(b + 0x00, size);
	hs_put32(b + 0x04, end); /* SavedOffset */
	hs_put32(b + 0x08, end); /* CurrentOffset */
	hs_put64(b + 0x10, (uint64_t)ts);
	hs_put64(b + 0x18, seq);
	hs_put16(b + 0x28, cpu);
	hs_put32(b + 0x2C, BUFFER_STATE_FLUSH);
	hs_put32(b + 0x30, end);
	hs_put16(b + 0x34, flags);
	hs_put16(b + 0x36, type);
}

static hs_status emit_data_buffer(hs_etl_writer *w, const uint8_t *bytes, uint32_t len)
{
	if (w->o.file_order_rotate) {
		uint8_t *copy = malloc(len);
		held_buffer *h = copy ? hs_vec_push(&w->held) : NULL;
		if (!h) {
			free(copy);
			return HS_ENOMEM;
		}
		memcpy(copy, bytes, len);
		*h = (held_buffer){copy, len};
		return HS_OK;
	}
	hs_status st = write_at(w, w->file_off, bytes, len);
	if (st == HS_OK)
		w->file_off += len;
	return st;
}

static hs_status flush_cpu(hs_etl_writer *w, uint16_t cpu)
{
	cpu_buffer *c = w->cpu[cpu];
	if (!c || c->used == HS_ETL_BUFFER_HEADER_SIZE)
		return HS_OK;
	uint32_t size = w->o.buffer_size;
	uint16_t flags = HS_ETL_BUFFER_FLAG_PROC_INDEX | c->extra_flags;
	const uint8_t *out = c->buf;
	uint32_t out_len = size;
	hs_status st = HS_OK;
	if (w->o.compress) {
		/* Layout from the compressed samples: header plain, then the
		 * stream; BufferSize is the on-disk size, Offset the plain end. */
		size_t clen = 0;
		st = hs_xpress_compress(c->buf + HS_ETL_BUFFER_HEADER_SIZE, c->used - HS_ETL_BUFFER_HEADER_SIZE,
					w->zbuf + HS_ETL_BUFFER_HEADER_SIZE, w->zcap - HS_ETL_BUFFER_HEADER_SIZE, &clen);
		if (st != HS_OK)
			return st;
		out_len = (uint32_t)(HS_ETL_BUFFER_HEADER_SIZE + clen);
		fill_buffer_header(w->zbuf, out_len, c->used, c->last_ts, w->next_sequence, cpu,
				   flags | HS_ETL_BUFFER_FLAG_COMPRESSED, HS_ETL_BUFFER_TYPE_GENERIC);
		out = w->zbuf;
	} else {
		memset(c->buf + c->used, 0xFF, size - c->used);
		fill_buffer_header(c->buf, size, c->used, c->last_ts, w->next_sequence, cpu, flags,
				   HS_ETL_BUFFER_TYPE_GENERIC);
	}
	st = emit_data_buffer(w, out, out_len);
	if (st != HS_OK)
		return st;
	w->next_sequence++;
	w->n_data++;
	c->used = HS_ETL_BUFFER_HEADER_SIZE;
	c->last_ts = 0;
	c->extra_flags = 0;
	return HS_OK;
}

static hs_status get_cpu(hs_etl_writer *w, uint16_t cpu, cpu_buffer **out)
{
	if (cpu > HS_ETL_PROCESSOR_INDEX_MASK)
		return HS_EINVAL;
	if (!w->cpu[cpu]) {
		cpu_buffer *c = calloc(1, sizeof(*c));
		uint8_t *buf = malloc(w->o.buffer_size);
		if (!c || !buf) {
			free(c);
			free(buf);
			return HS_ENOMEM;
		}
		c->buf = buf;
		c->used = HS_ETL_BUFFER_HEADER_SIZE;
		w->cpu[cpu] = c;
		if ((uint32_t)cpu + 1 > w->max_cpu_plus1)
			w->max_cpu_plus1 = (uint32_t)cpu + 1;
	}
	*out = w->cpu[cpu];
	return HS_OK;
}

static hs_status check_record(const uint8_t *bytes, size_t len, uint32_t room)
{
	if (!bytes || len == 0)
		return HS_EINVAL;
	/* A record can never start with the filler word: readers take it as the
	 * end of the buffer's data. */
	if (len >= 4 && hs_le32(bytes) == 0xFFFFFFFFu)
		return HS_EINVAL;
	return len > room ? HS_ELIMIT : HS_OK;
}

static hs_status add_bytes(hs_etl_writer *w, uint16_t cpu, const uint8_t *bytes, size_t len, int64_t ts)
{
	if (w->err)
		return w->err;
	hs_status st = check_record(bytes, len, w->o.buffer_size - HS_ETL_BUFFER_HEADER_SIZE);
	if (st != HS_OK)
		return st;
	cpu_buffer *c;
	if ((st = get_cpu(w, cpu, &c)) != HS_OK)
		return st;
	if (align8((uint32_t)len) > w->o.buffer_size - c->used && (st = flush_cpu(w, cpu)) != HS_OK)
		goto fail;
	memcpy(c->buf + c->used, bytes, len);
	/* Zero padding keeps the output deterministic (the samples' padding is
	 * whatever the logger left there; no reader looks at it). */
	memset(c->buf + c->used + len, 0, align8((uint32_t)len) - len);
	c->used += align8((uint32_t)len);
	if (ts > c->last_ts)
		c->last_ts = ts;
	return HS_OK;
fail:
	w->err = st;
	return st;
}

hs_status hs_etl_writer_add(hs_etl_writer *w, const hs_etl_record *r)
{
	return add_bytes(w, r->cpu, r->raw, r->raw_len, r->timestamp);
}

hs_status hs_etl_writer_add_raw(hs_etl_writer *w, uint16_t cpu, const uint8_t *bytes, size_t len)
{
	return add_bytes(w, cpu, bytes, len, 0);
}

hs_status hs_etl_writer_add_header_raw(hs_etl_writer *w, const uint8_t *bytes, size_t len)
{
	if (w->err)
		return w->err;
	/* Both ends are 8-aligned, so a record that fits fits padded too. */
	hs_status st = check_record(bytes, len, w->o.buffer_size - w->header_used);
	if (st != HS_OK)
		return st;
	memcpy(w->header + w->header_used, bytes, len);
	memset(w->header + w->header_used + len, 0, align8((uint32_t)len) - len);
	w->header_used += align8((uint32_t)len);
	return HS_OK;
}

hs_status hs_etl_writer_copy(hs_etl_writer *w, const hs_etl_record *r)
{
	if (r->buffer_index == 0) {
		bool logfile_header = r->offset_in_buffer == HS_ETL_BUFFER_HEADER_SIZE && r->kind == HS_ETL_SYSTEM &&
				      r->group == HS_ETL_GROUP_HEADER && r->opcode == 0;
		if (logfile_header)
			return w->err;
		return hs_etl_writer_add_header_raw(w, r->raw, r->raw_len);
	}
	return hs_etl_writer_add(w, r);
}

hs_status hs_etl_writer_flush(hs_etl_writer *w, uint16_t cpu)
{
	if (w->err)
		return w->err;
	if (cpu > HS_ETL_PROCESSOR_INDEX_MASK)
		return HS_EINVAL;
	hs_status st = flush_cpu(w, cpu);
	if (st != HS_OK)
		w->err = st;
	return st;
}

hs_status hs_etl_writer_set_buffer_flags(hs_etl_writer *w, uint16_t cpu, uint16_t flags)
{
	if (w->err)
		return w->err;
	cpu_buffer *c;
	hs_status st = get_cpu(w, cpu, &c);
	if (st == HS_OK)
		c->extra_flags |= flags;
	return st;
}

uint32_t hs_etl_writer_buffers(const hs_etl_writer *w)
{
	return w->n_data;
}

/* ---- open / close ---- */

static void free_writer(hs_etl_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i <= HS_ETL_PROCESSOR_INDEX_MASK; i++) {
		if (w->cpu[i])
			free(w->cpu[i]->buf);
		free(w->cpu[i]);
	}
	for (size_t i = 0; i < w->held.len; i++)
		free(((held_buffer *)hs_vec_at(&w->held, i))->bytes);
	hs_vec_free(&w->held);
	free(w->header);
	free(w->names16);
	free(w->zbuf);
	free(w->logger_name);
	free(w->log_file_name);
	free(w->path);
	free(w->tmp_path);
	free(w);
}

static char *dup_str(const char *s)
{
	s = s ? s : "";
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

hs_status hs_etl_writer_open(const char *path, const hs_etl_writer_opts *opts, hs_etl_writer **out)
{
	*out = NULL;
	if (!path || !*path || !opts || !usable_buffer_size(opts->buffer_size) ||
	    (opts->pointer_size != 4 && opts->pointer_size != 8))
		return HS_EINVAL;
	hs_status st = HS_ENOMEM;
	hs_etl_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return HS_ENOMEM;
	w->fd = -1;
	w->held = (hs_vec)HS_VEC_INIT(sizeof(held_buffer));
	w->o = *opts;
	w->logger_name = dup_str(opts->logger_name);
	w->log_file_name = dup_str(opts->log_file_name);
	w->path = dup_str(path);
	w->header = malloc(opts->buffer_size);
	w->names16 = malloc(MAX_NAME_BYTES);
	if (!w->logger_name || !w->log_file_name || !w->path || !w->header || !w->names16)
		goto fail;
	w->o.logger_name = w->logger_name;
	w->o.log_file_name = w->log_file_name;
	if (w->o.compress) {
		/* Compressed buffers need the Win8 log layout (2.0) to be read. */
		if (w->o.version[2] < 2) {
			w->o.version[2] = 2;
			w->o.version[3] = 0;
		}
		w->o.log_file_mode |= MODE_COMPRESSED;
		w->zcap = hs_xpress_compress_bound(opts->buffer_size);
		if (w->zcap == SIZE_MAX || !(w->zbuf = malloc(w->zcap)))
			goto fail;
	} else {
		w->o.log_file_mode &= ~MODE_COMPRESSED;
	}
	st = HS_ELIMIT;
	if (!put_utf16(w->names16, MAX_NAME_BYTES, &w->names16_len, w->logger_name) ||
	    !put_utf16(w->names16, MAX_NAME_BYTES, &w->names16_len, w->log_file_name))
		goto fail;
	/* The header event's size is a u16 and must fit the header buffer. */
	uint32_t hrec = header_record_size(w);
	if (hrec > 0xFFFFu || align8(hrec) > opts->buffer_size - HS_ETL_BUFFER_HEADER_SIZE)
		goto fail;
	w->header_used = HS_ETL_BUFFER_HEADER_SIZE + align8(hrec);
	w->next_sequence = 1;
	w->file_off = opts->buffer_size;
	st = create_tmp(w);
	if (st != HS_OK)
		goto fail;
	*out = w;
	return HS_OK;
fail:
	if (w->fd >= 0) {
		hs_close(w->fd);
		hs_unlink(w->tmp_path);
	}
	free_writer(w);
	return st;
}

/* Builds buffer 0 now that BuffersWritten and the processor count are known. */
static void build_header_buffer(hs_etl_writer *w, uint32_t buffers_written, uint32_t cpus)
{
	uint8_t *b = w->header;
	uint32_t hrec = header_record_size(w);
	bool p64 = w->o.pointer_size == 8;
	uint8_t *r = b + HS_ETL_BUFFER_HEADER_SIZE;
	memset(r, 0, align8(hrec));
	hs_put16(r + 0x00, SYSTEM_TRACE_VERSION);
	r[2] = p64 ? HS_ETL_HT_SYSTEM64 : HS_ETL_HT_SYSTEM32;
	r[3] = HS_ETL_TRACE_HEADER_FLAG | HS_ETL_TRACE_HEADER_EVENT_TRACE;
	hs_put16(r + 0x04, (uint16_t)hrec);
	/* HookId 0 (group 0, type 0): WMI_LOG_TYPE_HEADER. */
	hs_put64(r + 0x10, (uint64_t)w->o.start_ts);
	uint8_t *p = r + SYS_HEADER_SIZE;
	hs_put32(p + 0x00, w->o.buffer_size);
	memcpy(p + 0x04, w->o.version, 4);
	hs_put32(p + 0x08, w->o.provider_version);
	hs_put32(p + 0x0C, cpus);
	hs_put64(p + 0x10, w->o.end_time);
	hs_put32(p + 0x18, w->o.timer_resolution);
	hs_put32(p + 0x1C, w->o.maximum_file_size);
	hs_put32(p + 0x20, w->o.log_file_mode);
	hs_put32(p + 0x24, buffers_written);
	hs_put32(p + 0x28, w->o.start_buffers);
	hs_put32(p + 0x2C, w->o.pointer_size);
	hs_put32(p + 0x30, w->o.events_lost);
	hs_put32(p + 0x34, w->o.cpu_mhz);
	/* The two name pointers (garbage in files) and TIME_ZONE_INFORMATION
	 * stay zero; BootTime follows them, so its offset depends on the
	 * pointer size. */
	uint32_t bt = p64 ? 0xF8u : 0xF0u;
	hs_put64(p + bt, w->o.boot_time);
	hs_put64(p + bt + 8, w->o.perf_freq);
	hs_put64(p + bt + 16, w->o.start_time);
	hs_put32(p + bt + 24, w->o.clock_type);
	hs_put32(p + bt + 28, w->o.buffers_lost);
	memcpy(p + logfile_struct_size(w), w->names16, w->names16_len);
	memset(b + w->header_used, 0xFF, w->o.buffer_size - w->header_used);
	fill_buffer_header(b, w->o.buffer_size, w->header_used, w->o.start_ts, 0, 0,
			   HS_ETL_BUFFER_FLAG_FLUSH_MARKER | HS_ETL_BUFFER_FLAG_PROC_INDEX, HS_ETL_BUFFER_TYPE_HEADER);
}

static hs_status finish(hs_etl_writer *w)
{
	hs_status st = w->err;
	if (st != HS_OK)
		return st;
	for (uint32_t i = 0; i < w->max_cpu_plus1; i++)
		if ((st = flush_cpu(w, (uint16_t)i)) != HS_OK)
			return st;
	if (w->held.len) {
		size_t k = w->o.file_order_rotate % w->held.len;
		for (size_t i = 0; i < w->held.len; i++) {
			const held_buffer *h = hs_vec_at(&w->held, (i + k) % w->held.len);
			if ((st = write_at(w, w->file_off, h->bytes, h->len)) != HS_OK)
				return st;
			w->file_off += h->len;
		}
	}
	uint32_t cpus = w->o.cpus > w->max_cpu_plus1 ? w->o.cpus : w->max_cpu_plus1;
	build_header_buffer(w, w->n_data + 1, cpus ? cpus : 1);
	if ((st = write_at(w, 0, w->header, w->o.buffer_size)) != HS_OK)
		return st;
	/* The rename must not reach the disk before the data does. */
	if (hs_fsync(w->fd) != 0)
		return errno_status(errno);
	int fd = w->fd;
	w->fd = -1;
	if (hs_close(fd) != 0)
		return errno_status(errno);
	if (hs_rename(w->tmp_path, w->path) != 0)
		return errno_status(errno);
	return HS_OK;
}

hs_status hs_etl_writer_close(hs_etl_writer *w)
{
	if (!w)
		return HS_EINVAL;
	hs_status st = finish(w);
	if (st != HS_OK) {
		if (w->fd >= 0)
			hs_close(w->fd);
		hs_unlink(w->tmp_path);
	}
	free_writer(w);
	return st;
}

void hs_etl_writer_discard(hs_etl_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		hs_close(w->fd);
	hs_unlink(w->tmp_path);
	free_writer(w);
}
