/* perf/buildid.c: reads GNU build-id notes from ELF files and the running kernel, for perf.data's HEADER_BUILD_ID. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/perf_file.h"

/* Walks a buffer of ELF notes (the same layout for 32- and 64-bit ELF and for
 * /sys/kernel/notes: Elf32_Nhdr-sized headers, 4-byte aligned name and desc). */
static hs_status notes_find_build_id(const uint8_t *p, size_t n, uint8_t id[HS_BUILD_ID_MAX], size_t *len)
{
	size_t off = 0;
	while (n - off >= sizeof(Elf32_Nhdr)) {
		Elf32_Nhdr nh;
		memcpy(&nh, p + off, sizeof nh);
		off += sizeof nh;
		size_t namesz = ((size_t)nh.n_namesz + 3u) & ~(size_t)3u;
		size_t descsz = ((size_t)nh.n_descsz + 3u) & ~(size_t)3u;
		if (namesz > n - off || descsz > n - off - namesz)
			return HS_ENOENT;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof ELF_NOTE_GNU &&
		    memcmp(p + off, ELF_NOTE_GNU, sizeof ELF_NOTE_GNU) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= HS_BUILD_ID_MAX) {
			memcpy(id, p + off + namesz, nh.n_descsz);
			*len = nh.n_descsz;
			return HS_OK;
		}
		off += namesz + descsz;
	}
	return HS_ENOENT;
}

static hs_status read_at(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return HS_EIO;
		done += (size_t)r;
	}
	return HS_OK;
}

static hs_status note_range(int fd, uint64_t off, uint64_t size, uint8_t id[HS_BUILD_ID_MAX], size_t *len)
{
	if (size == 0 || size > HS_ELF_MAX_NOTES_BYTES)
		return HS_ENOENT;
	uint8_t *buf = malloc((size_t)size);
	if (!buf)
		return HS_ENOMEM;
	hs_status st = read_at(fd, buf, (size_t)size, off);
	if (st == HS_OK)
		st = notes_find_build_id(buf, (size_t)size, id, len);
	free(buf);
	return st;
}

/* One body for both ELF classes: the fields we need have the same names. */
#define HS_ELF_SCAN(Ehdr, Phdr, Shdr)                                                              \
	do {                                                                                       \
		Ehdr eh;                                                                           \
		memcpy(&eh, ident_buf, sizeof eh);                                                 \
		for (unsigned i = 0; i < eh.e_phnum && st != HS_OK; i++) {                         \
			Phdr ph;                                                                   \
			if (eh.e_phentsize != sizeof ph ||                                         \
			    read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph) != HS_OK) \
				break;                                                             \
			if (ph.p_type == PT_NOTE)                                                  \
				st = note_range(fd, ph.p_offset, ph.p_filesz, id, len);            \
		}                                                                                  \
		for (unsigned i = 0; i < eh.e_shnum && st != HS_OK; i++) {                         \
			Shdr sh;                                                                   \
			if (eh.e_shentsize != sizeof sh ||                                         \
			    read_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh) != HS_OK) \
				break;                                                             \
			if (sh.sh_type == SHT_NOTE)                                                \
				st = note_range(fd, sh.sh_offset, sh.sh_size, id, len);            \
		}                                                                                  \
	} while (0)

hs_status hs_elf_build_id(const char *path, uint8_t id[HS_BUILD_ID_MAX], size_t *len)
{
	hs_status st = HS_ENOENT;
	uint8_t ident_buf[sizeof(Elf64_Ehdr)];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? HS_ENOENT : HS_EIO;
	if (read_at(fd, ident_buf, sizeof(Elf32_Ehdr), 0) != HS_OK || memcmp(ident_buf, ELFMAG, SELFMAG) != 0)
		goto fail;
	/* Only our own byte order: the DSOs a local program maps are native. */
	if (ident_buf[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		goto fail;
	if (ident_buf[EI_CLASS] == ELFCLASS64) {
		if (read_at(fd, ident_buf, sizeof(Elf64_Ehdr), 0) != HS_OK)
			goto fail;
		HS_ELF_SCAN(Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr);
	} else if (ident_buf[EI_CLASS] == ELFCLASS32) {
		HS_ELF_SCAN(Elf32_Ehdr, Elf32_Phdr, Elf32_Shdr);
	}
fail:
	close(fd);
	return st;
}

hs_status hs_kernel_build_id(uint8_t id[HS_BUILD_ID_MAX], size_t *len)
{
	/* sysfs files report a page-sized length; read until EOF. */
	uint8_t buf[8192];
	size_t n = 0;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return HS_ENOENT;
	for (;;) {
		ssize_t r = read(fd, buf + n, sizeof buf - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof buf)
			break;
	}
	close(fd);
	return notes_find_build_id(buf, n, id, len);
}
