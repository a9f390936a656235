/* hindsight/compat.h: the one place for what POSIX and Windows spell differently (files, paths, CPUs, memory, time). */
#ifndef HINDSIGHT_COMPAT_H
#define HINDSIGHT_COMPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/*
 * Ownership: each wrapper keeps the ownership of the POSIX call it replaces
 * (what that call's caller frees, this one's caller frees with free()).
 */

/*
 * Every function keeps the POSIX contract of the call it replaces: -1 (or
 * NULL) and errno on failure. On POSIX they are thin wrappers. On Windows:
 * - paths are UTF-8 (what the rules' include paths and our manifest's UTF-8
 *   code page give) and reach the wide-character API; a path that is not
 *   valid UTF-8 is taken in the ANSI code page, as a plain fopen would;
 * - every file descriptor is opened in binary mode (O_BINARY), which the
 *   .etl reader and writer need: text mode would rewrite their bytes.
 */

/* File descriptors. hs_open_read: read-only. hs_open_new: write-only, created
 * (O_CREAT | O_EXCL, mode 0666 less the umask) so that it never reuses a file. */
int hs_open_read(const char *path);
int hs_open_new(const char *path);
int hs_close(int fd);

/* stdio streams; mode as for fopen ("rb"/"wb" for binary files). */
FILE *hs_fopen(const char *path, const char *mode);

/* Reads (writes) up to len bytes at offset off. Returns the byte count, 0 at
 * end of file (pread), or -1 with errno. On Windows the file position moves;
 * callers use only positional I/O on such descriptors. */
int64_t hs_pread(int fd, void *buf, size_t len, uint64_t off);
int64_t hs_pwrite(int fd, const void *buf, size_t len, uint64_t off);

/* Writes all len bytes at offset off, or at the file position when off is
 * HS_AT_POS, again after an interrupted or short write. 0, or -1 with errno
 * (EIO when a write wrote nothing). */
#define HS_AT_POS (-1)
int hs_write_all(int fd, const void *buf, size_t len, int64_t off);

/* Flushes the file's data to the disk (fsync; FlushFileBuffers). */
int hs_fsync(int fd);

/* The size of an open descriptor's file; -1 with EINVAL when it is not a regular file. */
int hs_fd_size(int fd, uint64_t *size);

/* Hints that fd is read front to back (posix_fadvise; nothing on Windows). */
void hs_fadvise_sequential(int fd);

/* True when path names a regular file (following symbolic links). */
bool hs_is_regular_file(const char *path);

/* Creates a new directory from a template ending in "XXXXXX", which it
 * replaces (mkdtemp). Returns tmpl, or NULL with errno. */
char *hs_mkdtemp(char *tmpl);

/* Renames from over to, replacing an existing to (POSIX rename; Windows'
 * rename refuses an existing target). */
int hs_rename(const char *from, const char *to);
int hs_unlink(const char *path);
/* Creates one directory, owner-only where modes exist (mkdir 0700; _wmkdir). 0, or -1 with errno (EEXIST). */
int hs_mkdir(const char *path);

/* The absolute, normalised path of an existing file or directory (realpath;
 * GetFullPathNameW on Windows, which does not resolve links). Returns a new
 * string, free with free(), or NULL with errno. */
char *hs_realpath(const char *path);

/* The running program's own path: GetModuleFileNameW on Windows, realpath of
 * argv0 elsewhere when it holds a '/'. Returns a new string, free with free(),
 * or NULL. */
char *hs_self_path(const char *argv0);

/* The last directory separator in path ('/', and '\\' on Windows), or NULL. */
char *hs_path_last_sep(const char *path);
/* True when path holds a directory separator. */
bool hs_path_has_sep(const char *path);
/* True when path does not depend on the current directory: "/x", and on
 * Windows also "\x", "C:\x" and "C:/x". */
bool hs_path_is_absolute(const char *path);

/* Configured logical CPUs (at least 1); physical memory in bytes (0 if unknown). */
unsigned hs_cpu_count(void);
uint64_t hs_phys_memory(void);

unsigned long hs_getpid(void);
bool hs_isatty(int fd);

/* gmtime_r: fills *out and returns out, or NULL. */
struct tm *hs_gmtime(time_t t, struct tm *out);

#endif
