/* perf/perf_file.c: a streaming perf.data (PERFILE2) writer: attrs, raw records, then the features perf report needs. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "hindsight/limits.h"
#include "hindsight/vec.h"
#include "perf/perf_file.h"

/* tools/perf/Documentation/perf.data-file-format.txt; layout of what we write:
 * header | ids | attr+ids section | data (records) | feature table | feature bodies.
 * The attr goes before the data because features must follow the data directly. */
#define HS_PERF_MAGIC2 0x32454c4946524550ULL /* "PERFILE2" read as a little-endian u64 */
#define HS_PERF_NAME_ALIGN 64                 /* perf_header_string and build-id names */
#define HS_PERF_RECORD_FINISHED_ROUND 68      /* a user-space record type (perf's util/event.h) */
#define HS_PERF_MISC_BUILD_ID_SIZE (1u << 15) /* build_id_event carries its length */

enum {
	/* Feature bits (perf's util/header.h), written in ascending order. */
	HS_FEAT_BUILD_ID = 2,
	HS_FEAT_HOSTNAME = 3,
	HS_FEAT_OSRELEASE = 4,
	HS_FEAT_VERSION = 5,
	HS_FEAT_ARCH = 6,
	HS_FEAT_NRCPUS = 7,
	HS_FEAT_TOTAL_MEM = 10,
	HS_FEAT_CMDLINE = 11,
	HS_FEAT_EVENT_DESC = 12,
};
static const int hs_features[] = {HS_FEAT_BUILD_ID, HS_FEAT_HOSTNAME, HS_FEAT_OSRELEASE, HS_FEAT_VERSION,
				  HS_FEAT_ARCH,     HS_FEAT_NRCPUS,   HS_FEAT_TOTAL_MEM, HS_FEAT_CMDLINE, HS_FEAT_EVENT_DESC};
#define HS_N_FEATURES (sizeof hs_features / sizeof hs_features[0])

typedef struct {
	uint64_t offset, size;
} hs_perf_section;

typedef struct {
	uint64_t magic, size, attr_size;
	hs_perf_section attrs, data, event_types;
	uint64_t features[4]; /* HEADER_FEAT_BITS = 256 */
} hs_perf_header;

typedef struct {
	uint32_t type;
	uint16_t misc, size;
	int32_t pid;
	uint8_t data[HS_BUILD_ID_MAX];
	uint8_t size_;
	uint8_t reserved1;
	uint16_t reserved2;
} hs_build_id_event;

struct hs_perf_file {
	FILE *fp;
	const hs_msg *msg;
	char *path, *tmp;
	struct perf_event_attr attr;
	char *event_name;
	uint64_t *ids;
	size_t n_ids;
	uint64_t attrs_off, data_off, data_size;
	char **dsos; /* distinct user DSO names from MMAP/MMAP2, owned */
	size_t n_dsos, cap_dsos;
	bool failed;
};

static void perf_file_free(hs_perf_file *f)
{
	if (!f)
		return;
	if (f->fp)
		fclose(f->fp);
	for (size_t i = 0; i < f->n_dsos; i++)
		free(f->dsos[i]);
	free(f->dsos);
	free(f->path);
	free(f->tmp);
	free(f->event_name);
	free(f->ids);
	free(f);
}

static hs_status put(hs_perf_file *f, const void *p, size_t n)
{
	if (f->failed)
		return HS_EIO;
	if (n && fwrite(p, 1, n, f->fp) != n) {
		f->failed = true;
		if (f->msg)
			hs_msg_say(f->msg, HS_MSG_ERROR, "launch", "writing %s: %s", f->tmp, strerror(errno));
		return HS_EIO;
	}
	return HS_OK;
}

hs_status hs_perf_file_create(const char *path, const struct perf_event_attr *attr, const char *event_name,
			      const uint64_t *ids, size_t n_ids, const hs_msg *msg, hs_perf_file **out)
{
	hs_status st = HS_ENOMEM;
	hs_perf_file *f = calloc(1, sizeof *f);
	*out = NULL;
	if (!f)
		return HS_ENOMEM;
	f->msg = msg;
	f->attr = *attr;
	f->path = strdup(path);
	f->event_name = strdup(event_name);
	f->ids = malloc(n_ids ? n_ids * sizeof *ids : 1);
	f->n_ids = n_ids;
	size_t tn = strlen(path) + 32;
	f->tmp = malloc(tn);
	if (!f->path || !f->tmp || !f->event_name || !f->ids)
		goto fail;
	memcpy(f->ids, ids, n_ids * sizeof *ids);
	snprintf(f->tmp, tn, "%s.tmp.%ld", path, (long)getpid());
	f->fp = fopen(f->tmp, "w+xe");
	if (!f->fp) {
		st = errno == EACCES || errno == EPERM ? HS_EPERM : HS_EIO;
		if (msg)
			hs_msg_say(msg, HS_MSG_ERROR, "launch", "cannot create %s: %s", f->tmp, strerror(errno));
		goto fail;
	}
	/* Large stdio buffer: records arrive in bursts of one drain each. */
	setvbuf(f->fp, NULL, _IOFBF, 1u << 20);
	hs_perf_header h = {0};
	uint64_t ids_off = sizeof h;
	f->attrs_off = ids_off + n_ids * sizeof(uint64_t);
	f->data_off = f->attrs_off + sizeof(struct perf_event_attr) + sizeof(hs_perf_section);
	hs_perf_section ids_sec = {ids_off, n_ids * sizeof(uint64_t)};
	st = put(f, &h, sizeof h);
	if (st == HS_OK)
		st = put(f, ids, n_ids * sizeof(uint64_t));
	if (st == HS_OK)
		st = put(f, &f->attr, sizeof f->attr);
	if (st == HS_OK)
		st = put(f, &ids_sec, sizeof ids_sec);
	if (st != HS_OK)
		goto fail;
	*out = f;
	return HS_OK;
fail:
	if (f->fp)
		unlink(f->tmp);
	perf_file_free(f);
	return st;
}

static hs_status note_dso(hs_perf_file *f, const char *name, size_t max)
{
	size_t n = strnlen(name, max);
	/* [vdso], [heap], //anon and the like have no file to read a build-id from. */
	if (n == 0 || n == max || name[0] != '/')
		return HS_OK;
	for (size_t i = 0; i < f->n_dsos; i++)
		if (strncmp(f->dsos[i], name, n) == 0 && f->dsos[i][n] == '\0')
			return HS_OK;
	char **d = hs_array_grow(f->dsos, sizeof *d, f->n_dsos, &f->cap_dsos, 16);
	if (!d)
		return HS_ENOMEM;
	f->dsos = d;
	if (!(f->dsos[f->n_dsos] = strndup(name, n)))
		return HS_ENOMEM;
	f->n_dsos++;
	return HS_OK;
}

hs_status hs_perf_file_write(hs_perf_file *f, const struct perf_event_header *rec)
{
	const char *base = (const char *)rec;
	if ((rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
		/* Filename offsets: MMAP after pid,tid,addr,len,pgoff; MMAP2 also after
		 * maj,min,ino,ino_generation,prot,flags. */
		size_t off = rec->type == PERF_RECORD_MMAP ? 40 : rec->type == PERF_RECORD_MMAP2 ? 72 : 0;
		if (off && rec->size > off) {
			hs_status st = note_dso(f, base + off, rec->size - off);
			if (st != HS_OK)
				return st;
		}
	}
	hs_status st = put(f, rec, rec->size);
	if (st == HS_OK)
		f->data_size += rec->size;
	return st;
}

hs_status hs_perf_file_round(hs_perf_file *f)
{
	struct perf_event_header h = {.type = HS_PERF_RECORD_FINISHED_ROUND, .size = sizeof h};
	hs_status st = put(f, &h, sizeof h);
	if (st == HS_OK)
		f->data_size += sizeof h;
	return st;
}

/* The sample_id trailer every non-sample record carries with sample_id_all. */
static size_t sample_id_size(uint64_t t)
{
	size_t n = 0;
	n += (t & PERF_SAMPLE_TID) ? 8 : 0;
	n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (t & PERF_SAMPLE_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

/* The address perf relocates kernel symbols against: _text, else _stext. */
static uint64_t kernel_text_addr(void)
{
	uint64_t text = 0, stext = 0;
	char line[512];
	FILE *fp = fopen("/proc/kallsyms", "re");
	if (!fp)
		return 0;
	while (fgets(line, sizeof line, fp) && !text) {
		char type, name[256];
		uint64_t a;
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) != 3)
			continue;
		if (strcmp(name, "_text") == 0)
			text = a;
		else if (strcmp(name, "_stext") == 0)
			stext = a;
	}
	fclose(fp);
	return text ? text : stext;
}

hs_status hs_perf_file_write_kernel_mmap(hs_perf_file *f)
{
	static const char name[] = "[kernel.kallsyms]_text";
	uint64_t start = kernel_text_addr();
	if (start == 0) {
		if (f->msg)
			hs_msg_say(f->msg, HS_MSG_WARN, "launch",
				   "/proc/kallsyms hides addresses: kernel frames will not be symbolised");
		return HS_OK;
	}
	uint8_t rec[128] = {0};
	size_t name_len = (sizeof name + 7u) & ~(size_t)7u;
	size_t size = 40 + name_len + (f->attr.sample_id_all ? sample_id_size(f->attr.sample_type) : 0);
	struct perf_event_header h = {.type = PERF_RECORD_MMAP, .misc = PERF_RECORD_MISC_KERNEL, .size = (uint16_t)size};
	/* pid -1 is perf's host kernel; the map runs to the last address (not
	 * past it: start+len must not wrap to 0, or perf sees an empty map) so
	 * module addresses above _text fall in it too. */
	int32_t pid = -1, tid = 0;
	uint64_t len = UINT64_MAX - start, pgoff = start;
	memcpy(rec, &h, 8);
	memcpy(rec + 8, &pid, 4);
	memcpy(rec + 12, &tid, 4);
	memcpy(rec + 16, &start, 8);
	memcpy(rec + 24, &len, 8);
	memcpy(rec + 32, &pgoff, 8);
	memcpy(rec + 40, name, sizeof name);
	if (f->attr.sample_id_all && (f->attr.sample_type & PERF_SAMPLE_TID)) {
		int32_t m1 = -1;
		memcpy(rec + 40 + name_len, &m1, 4);
		memcpy(rec + 44 + name_len, &m1, 4);
	}
	return hs_perf_file_write(f, (const struct perf_event_header *)rec);
}

/* The room perf gives a string: its NUL included, rounded up to HS_PERF_NAME_ALIGN. */
static size_t name_room(const char *s)
{
	return (strlen(s) + 1 + HS_PERF_NAME_ALIGN - 1) / HS_PERF_NAME_ALIGN * HS_PERF_NAME_ALIGN;
}

/* head, then s with its NUL and zeros up to room bytes (name_room). */
static hs_status put_named(hs_perf_file *f, const void *head, size_t head_len, const char *s, size_t room)
{
	static const char zeros[HS_PERF_NAME_ALIGN];
	size_t n = strlen(s) + 1;
	hs_status st = put(f, head, head_len);
	if (st == HS_OK)
		st = put(f, s, n);
	if (st == HS_OK)
		st = put(f, zeros, room - n);
	return st;
}

static hs_status put_string(hs_perf_file *f, const char *s)
{
	uint32_t len = (uint32_t)name_room(s);
	return put_named(f, &len, sizeof len, s, len);
}

static hs_status put_build_id(hs_perf_file *f, uint16_t misc, const char *name, const uint8_t *id, size_t id_len)
{
	size_t len = name_room(name);
	hs_build_id_event b = {0};
	if (sizeof b + len > UINT16_MAX)
		return HS_OK; /* perf could not read it back; the DSO stays unsymbolised */
	b.misc = misc | HS_PERF_MISC_BUILD_ID_SIZE;
	b.size = (uint16_t)(sizeof b + len);
	b.pid = -1;
	memcpy(b.data, id, id_len);
	b.size_ = (uint8_t)id_len;
	return put_named(f, &b, sizeof b, name, len);
}

static hs_status put_build_ids(hs_perf_file *f, uint64_t *count)
{
	uint8_t id[HS_BUILD_ID_MAX];
	size_t len;
	hs_status st = HS_OK;
	if (hs_kernel_build_id(id, &len) == HS_OK) {
		st = put_build_id(f, PERF_RECORD_MISC_KERNEL, "[kernel.kallsyms]", id, len);
		(*count)++;
	}
	for (size_t i = 0; i < f->n_dsos && st == HS_OK; i++) {
		hs_status r = hs_elf_build_id(f->dsos[i], id, &len);
		if (r == HS_ENOMEM)
			return r;
		if (r != HS_OK) {
			/* perf then matches by path alone, which is right until the file changes. */
			if (f->msg)
				hs_msg_say(f->msg, HS_MSG_WARN, "launch", "no build-id in %s", f->dsos[i]);
			continue;
		}
		st = put_build_id(f, PERF_RECORD_MISC_USER, f->dsos[i], id, len);
		(*count)++;
	}
	return st;
}

static hs_status put_cmdline(hs_perf_file *f)
{
	char buf[4096];
	size_t n = 0;
	FILE *fp = fopen("/proc/self/cmdline", "re");
	if (fp) {
		n = fread(buf, 1, sizeof buf - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	uint32_t nr = 0;
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
		nr++;
	hs_status st = put(f, &nr, sizeof nr);
	for (size_t i = 0; i < n && st == HS_OK; i += strlen(buf + i) + 1)
		st = put_string(f, buf + i);
	return st;
}

static uint64_t total_mem_kb(void)
{
	uint64_t kb = 0;
	char line[256];
	FILE *fp = fopen("/proc/meminfo", "re");
	if (!fp)
		return 0;
	while (fgets(line, sizeof line, fp))
		if (sscanf(line, "MemTotal: %" SCNu64, &kb) == 1)
			break;
	fclose(fp);
	return kb;
}

/* The event's name as perf report shows it (otherwise derived from the attr). */
static hs_status put_event_desc(hs_perf_file *f)
{
	uint32_t hdr[2] = {1, (uint32_t)sizeof f->attr};
	uint32_t nr_ids = (uint32_t)f->n_ids;
	hs_status st = put(f, hdr, sizeof hdr);
	if (st == HS_OK)
		st = put(f, &f->attr, sizeof f->attr);
	if (st == HS_OK)
		st = put(f, &nr_ids, sizeof nr_ids);
	if (st == HS_OK)
		st = put_string(f, f->event_name);
	if (st == HS_OK)
		st = put(f, f->ids, f->n_ids * sizeof *f->ids);
	return st;
}

static hs_status put_feature(hs_perf_file *f, int feat, const struct utsname *u, uint64_t *build_ids)
{
	switch (feat) {
	case HS_FEAT_BUILD_ID:
		return put_build_ids(f, build_ids);
	case HS_FEAT_HOSTNAME:
		return put_string(f, u->nodename);
	case HS_FEAT_OSRELEASE:
		return put_string(f, u->release);
	case HS_FEAT_VERSION:
		return put_string(f, "hindsight launch");
	case HS_FEAT_ARCH:
		return put_string(f, u->machine);
	case HS_FEAT_NRCPUS: {
		uint32_t nr[2] = {(uint32_t)sysconf(_SC_NPROCESSORS_CONF), (uint32_t)sysconf(_SC_NPROCESSORS_ONLN)};
		return put(f, nr, sizeof nr);
	}
	case HS_FEAT_TOTAL_MEM: {
		uint64_t kb = total_mem_kb();
		return put(f, &kb, sizeof kb);
	}
	case HS_FEAT_CMDLINE:
		return put_cmdline(f);
	case HS_FEAT_EVENT_DESC:
		return put_event_desc(f);
	}
	return HS_EINVAL;
}

hs_status hs_perf_file_finish(hs_perf_file *f, uint64_t *build_ids, uint64_t *data_bytes, uint64_t *file_bytes)
{
	hs_status st = HS_EIO;
	uint64_t nb = 0;
	struct utsname u;
	hs_perf_section secs[HS_N_FEATURES];
	hs_perf_header h = {0};
	if (uname(&u) != 0)
		memset(&u, 0, sizeof u);
	if (f->failed || fflush(f->fp) != 0)
		goto fail;
	uint64_t feat_off = f->data_off + f->data_size;
	if (fseeko(f->fp, (off_t)(feat_off + sizeof secs), SEEK_SET) != 0)
		goto fail;
	for (size_t i = 0; i < HS_N_FEATURES; i++) {
		secs[i].offset = (uint64_t)ftello(f->fp);
		st = put_feature(f, hs_features[i], &u, &nb);
		if (st != HS_OK)
			goto fail;
		secs[i].size = (uint64_t)ftello(f->fp) - secs[i].offset;
		h.features[hs_features[i] / 64] |= 1ULL << (hs_features[i] % 64);
	}
	uint64_t end = (uint64_t)ftello(f->fp);
	st = HS_EIO;
	if (fseeko(f->fp, (off_t)feat_off, SEEK_SET) != 0 || put(f, secs, sizeof secs) != HS_OK)
		goto fail;
	h.magic = HS_PERF_MAGIC2;
	h.size = sizeof h;
	h.attr_size = sizeof(struct perf_event_attr) + sizeof(hs_perf_section);
	h.attrs = (hs_perf_section){f->attrs_off, h.attr_size};
	h.data = (hs_perf_section){f->data_off, f->data_size};
	if (fseeko(f->fp, 0, SEEK_SET) != 0 || put(f, &h, sizeof h) != HS_OK)
		goto fail;
	/* The final name must only ever name a complete file. */
	if (fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0 || fclose(f->fp) != 0) {
		f->fp = NULL;
		goto fail;
	}
	f->fp = NULL;
	if (rename(f->tmp, f->path) != 0) {
		if (f->msg)
			hs_msg_say(f->msg, HS_MSG_ERROR, "launch", "rename %s -> %s: %s", f->tmp, f->path,
				   strerror(errno));
		goto fail;
	}
	if (build_ids)
		*build_ids = nb;
	if (data_bytes)
		*data_bytes = f->data_size;
	if (file_bytes)
		*file_bytes = end;
	perf_file_free(f);
	return HS_OK;
fail:
	if (st == HS_OK)
		st = HS_EIO;
	hs_perf_file_abort(f);
	return st;
}

void hs_perf_file_abort(hs_perf_file *f)
{
	if (!f)
		return;
	if (f->fp) {
		fclose(f->fp);
		f->fp = NULL;
	}
	unlink(f->tmp);
	perf_file_free(f);
}
