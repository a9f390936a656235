/* util/compat.c: POSIX and Windows implementations of util/compat.h (files, paths, CPUs, memory, time). */
#include "util/compat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <fcntl.h>
#include <direct.h>
#include <io.h>
#include <sys/stat.h>
#include <sys/types.h>

/* errno for the Win32 errors these calls meet; everything else is EIO. */
static int win_errno(DWORD e)
{
	switch (e) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_NAME:
	case ERROR_BAD_NETPATH:
		return ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
	case ERROR_LOCK_VIOLATION:
		return EACCES;
	case ERROR_FILE_EXISTS:
	case ERROR_ALREADY_EXISTS:
		return EEXIST;
	case ERROR_DISK_FULL:
	case ERROR_HANDLE_DISK_FULL:
		return ENOSPC;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return ENOMEM;
	case ERROR_INVALID_HANDLE:
		return EBADF;
	case ERROR_WRITE_PROTECT:
		return EROFS;
	}
	return EIO;
}

/* UTF-8 to a new wide string; text that is not UTF-8 is read in the ANSI
 * code page (what a narrow Win32 call would have done with it). */
static wchar_t *to_wide(const char *s)
{
	UINT cp = CP_UTF8;
	DWORD flags = MB_ERR_INVALID_CHARS;
	int n = MultiByteToWideChar(cp, flags, s, -1, NULL, 0);
	if (n <= 0) {
		cp = CP_ACP;
		flags = 0;
		n = MultiByteToWideChar(cp, flags, s, -1, NULL, 0);
	}
	if (n <= 0) {
		errno = EINVAL;
		return NULL;
	}
	wchar_t *w = malloc((size_t)n * sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	if (MultiByteToWideChar(cp, flags, s, -1, w, n) != n) {
		free(w);
		errno = EINVAL;
		return NULL;
	}
	return w;
}

/* A wide string to a new UTF-8 string. */
static char *from_wide(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	if (n <= 0) {
		errno = EINVAL;
		return NULL;
	}
	char *s = malloc((size_t)n);
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	if (WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) != n) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	return s;
}

static int open_wide(const char *path, int flags, int mode)
{
	wchar_t *w = to_wide(path);
	if (!w)
		return -1;
	int fd = _wopen(w, flags | _O_BINARY | _O_NOINHERIT, mode);
	int saved = errno;
	free(w);
	errno = saved;
	return fd;
}

int hs_open_read(const char *path) { return open_wide(path, _O_RDONLY, 0); }

int hs_open_new(const char *path) { return open_wide(path, _O_WRONLY | _O_CREAT | _O_EXCL, _S_IREAD | _S_IWRITE); }

int hs_close(int fd) { return _close(fd); }

FILE *hs_fopen(const char *path, const char *mode)
{
	wchar_t *w = to_wide(path), *wm = to_wide(mode);
	FILE *f = w && wm ? _wfopen(w, wm) : NULL;
	int saved = errno;
	free(w);
	free(wm);
	errno = saved;
	return f;
}

/* One ReadFile/WriteFile at an offset: OVERLAPPED carries the offset even on a
 * synchronous handle. Larger requests are cut to what a DWORD can count; the
 * callers loop on short counts anyway. */
static int64_t io_at(int fd, void *buf, size_t len, uint64_t off, bool write)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	DWORD n = len > (1u << 30) ? (1u << 30) : (DWORD)len, done = 0;
	OVERLAPPED ov;
	memset(&ov, 0, sizeof ov);
	ov.Offset = (DWORD)off;
	ov.OffsetHigh = (DWORD)(off >> 32);
	BOOL ok = write ? WriteFile(h, buf, n, &done, &ov) : ReadFile(h, buf, n, &done, &ov);
	if (!ok) {
		DWORD e = GetLastError();
		if (!write && e == ERROR_HANDLE_EOF)
			return 0;
		errno = win_errno(e);
		return -1;
	}
	return (int64_t)done;
}

int64_t hs_pread(int fd, void *buf, size_t len, uint64_t off) { return io_at(fd, buf, len, off, false); }

static int64_t write_at_pos(int fd, const void *buf, size_t len)
{
	return _write(fd, buf, len > 0x40000000u ? 0x40000000u : (unsigned)len);
}

int64_t hs_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	return io_at(fd, (void *)buf, len, off, true);
}

int hs_fsync(int fd)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	if (!FlushFileBuffers(h)) {
		errno = win_errno(GetLastError());
		return -1;
	}
	return 0;
}

int hs_fd_size(int fd, uint64_t *size)
{
	struct _stat64 st;
	if (_fstat64(fd, &st) != 0)
		return -1;
	if ((st.st_mode & _S_IFMT) != _S_IFREG) {
		errno = EINVAL;
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

void hs_fadvise_sequential(int fd) { (void)fd; }

bool hs_is_regular_file(const char *path)
{
	wchar_t *w = to_wide(path);
	struct _stat64 st;
	bool ok = w && _wstat64(w, &st) == 0 && (st.st_mode & _S_IFMT) == _S_IFREG;
	free(w);
	return ok;
}

char *hs_mkdtemp(char *tmpl)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = strlen(tmpl);
	if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return NULL;
	}
	uint64_t x = GetTickCount64() ^ ((uint64_t)GetCurrentProcessId() << 32) ^ (uint64_t)(uintptr_t)tmpl;
	for (int attempt = 0; attempt < 100; attempt++) {
		for (size_t i = n - 6; i < n; i++) {
			x = x * 6364136223846793005u + 1442695040888963407u; /* an LCG: unique enough, not secret */
			tmpl[i] = set[(x >> 33) % (sizeof set - 1)];
		}
		wchar_t *w = to_wide(tmpl);
		if (!w)
			return NULL;
		BOOL ok = CreateDirectoryW(w, NULL);
		DWORD e = ok ? 0 : GetLastError();
		free(w);
		if (ok)
			return tmpl;
		if (e != ERROR_ALREADY_EXISTS) {
			errno = win_errno(e);
			return NULL;
		}
	}
	errno = EEXIST;
	return NULL;
}

int hs_rename(const char *from, const char *to)
{
	wchar_t *wf = to_wide(from), *wt = to_wide(to);
	int rc = -1;
	if (wf && wt) {
		if (MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
			rc = 0;
		else
			errno = win_errno(GetLastError());
	}
	int saved = errno;
	free(wf);
	free(wt);
	errno = saved;
	return rc;
}

/* A one-path CRT call on the wide form of path, keeping the call's errno across the free. */
static int on_wide_path(const char *path, int (*fn)(const wchar_t *))
{
	wchar_t *w = to_wide(path);
	int rc = w ? fn(w) : -1;
	int saved = errno;
	free(w);
	errno = saved;
	return rc;
}

int hs_unlink(const char *path)
{
	return on_wide_path(path, _wunlink);
}

int hs_mkdir(const char *path)
{
	return on_wide_path(path, _wmkdir);
}

char *hs_realpath(const char *path)
{
	wchar_t *w = to_wide(path), *full = NULL;
	char *out = NULL;
	if (!w)
		return NULL;
	if (GetFileAttributesW(w) == INVALID_FILE_ATTRIBUTES) {
		errno = win_errno(GetLastError());
		goto out;
	}
	DWORD n = GetFullPathNameW(w, 0, NULL, NULL);
	full = n ? malloc((size_t)n * sizeof(*full)) : NULL;
	if (!full) {
		errno = n ? ENOMEM : win_errno(GetLastError());
		goto out;
	}
	DWORD got = GetFullPathNameW(w, n, full, NULL);
	if (got == 0 || got >= n) {
		errno = EIO;
		goto out;
	}
	out = from_wide(full);
out:;
	int saved = errno;
	free(w);
	free(full);
	errno = saved;
	return out;
}

char *hs_self_path(const char *argv0)
{
	(void)argv0;
	/* Long paths: grow until the name fits (32767 is the API's limit). */
	for (DWORD cap = MAX_PATH; cap <= 32768; cap *= 2) {
		wchar_t *w = malloc((size_t)cap * sizeof(*w));
		if (!w)
			return NULL;
		DWORD n = GetModuleFileNameW(NULL, w, cap);
		if (n > 0 && n < cap) {
			char *s = from_wide(w);
			free(w);
			return s;
		}
		free(w);
		if (n == 0)
			return NULL;
	}
	return NULL;
}

char *hs_path_last_sep(const char *path)
{
	char *a = strrchr(path, '/'), *b = strrchr(path, '\\');
	return a > b ? a : b;
}

bool hs_path_has_sep(const char *path) { return strpbrk(path, "/\\") != NULL; }

bool hs_path_is_absolute(const char *path)
{
	if (path[0] == '/' || path[0] == '\\')
		return true;
	bool letter = (path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z');
	return letter && path[1] == ':' && (path[2] == '/' || path[2] == '\\');
}

unsigned hs_cpu_count(void)
{
	/* Every processor group, not just ours (machines with more than 64). */
	DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
	if (n == 0) {
		SYSTEM_INFO si;
		GetSystemInfo(&si);
		n = si.dwNumberOfProcessors;
	}
	return n > 0 ? (unsigned)n : 1u;
}

uint64_t hs_phys_memory(void)
{
	MEMORYSTATUSEX m;
	m.dwLength = sizeof m;
	return GlobalMemoryStatusEx(&m) ? (uint64_t)m.ullTotalPhys : 0;
}

unsigned long hs_getpid(void) { return (unsigned long)GetCurrentProcessId(); }

bool hs_isatty(int fd) { return _isatty(fd) != 0; }

/* UTC calendar fields by arithmetic: _gmtime64_s refuses times before 1970,
 * which gmtime_r (and so the Linux build's output) accepts. Days to a civil
 * date in the proleptic Gregorian calendar, by 400-year eras of 146097 days
 * counted from 0000-03-01 (so that the leap day ends a year). */
struct tm *hs_gmtime(time_t t, struct tm *out)
{
	int64_t s = (int64_t)t, days = s / 86400, rem = s % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	int64_t z = days + 719468; /* days from 0000-03-01 to 1970-01-01 */
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;                                  /* [0, 146096] */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);           /* [0, 365], from March 1 */
	int64_t mp = (5 * doy + 2) / 153;                                /* [0, 11], March = 0 */
	int64_t mday = doy - (153 * mp + 2) / 5 + 1;
	int64_t mon = mp < 10 ? mp + 2 : mp - 10; /* 0 = January */
	int64_t year = yoe + era * 400 + (mon < 2);
	if (year - 1900 < INT32_MIN || year - 1900 > INT32_MAX)
		return NULL;
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
	static const int before[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
	memset(out, 0, sizeof(*out));
	out->tm_year = (int)(year - 1900);
	out->tm_mon = (int)mon;
	out->tm_mday = (int)mday;
	out->tm_hour = (int)(rem / 3600);
	out->tm_min = (int)(rem / 60 % 60);
	out->tm_sec = (int)(rem % 60);
	out->tm_yday = before[mon] + (int)mday - 1 + (leap && mon >= 2);
	out->tm_wday = (int)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday (4) */
	return out;
}

#else /* POSIX */

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int hs_open_read(const char *path) { return open(path, O_RDONLY | O_CLOEXEC); }

int hs_open_new(const char *path) { return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666); }

int hs_close(int fd) { return close(fd); }

FILE *hs_fopen(const char *path, const char *mode) { return fopen(path, mode); }

int64_t hs_pread(int fd, void *buf, size_t len, uint64_t off) { return pread(fd, buf, len, (off_t)off); }

int64_t hs_pwrite(int fd, const void *buf, size_t len, uint64_t off) { return pwrite(fd, buf, len, (off_t)off); }

static int64_t write_at_pos(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len);
}

int hs_fsync(int fd) { return fsync(fd); }

int hs_fd_size(int fd, uint64_t *size)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

void hs_fadvise_sequential(int fd)
{
#ifdef POSIX_FADV_SEQUENTIAL
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#else
	(void)fd;
#endif
}

bool hs_is_regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *hs_mkdtemp(char *tmpl) { return mkdtemp(tmpl); }

int hs_rename(const char *from, const char *to) { return rename(from, to); }

int hs_unlink(const char *path) { return unlink(path); }

int hs_mkdir(const char *path) { return mkdir(path, 0700); }

char *hs_realpath(const char *path) { return realpath(path, NULL); }

char *hs_self_path(const char *argv0)
{
	return argv0 && strchr(argv0, '/') ? realpath(argv0, NULL) : NULL;
}

char *hs_path_last_sep(const char *path) { return strrchr(path, '/'); }

bool hs_path_has_sep(const char *path) { return strchr(path, '/') != NULL; }

bool hs_path_is_absolute(const char *path) { return path[0] == '/'; }

unsigned hs_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	return n > 0 ? (unsigned)n : 1u;
}

uint64_t hs_phys_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

unsigned long hs_getpid(void) { return (unsigned long)getpid(); }

bool hs_isatty(int fd) { return isatty(fd) != 0; }

struct tm *hs_gmtime(time_t t, struct tm *out) { return gmtime_r(&t, out); }

#endif

int hs_write_all(int fd, const void *buf, size_t len, int64_t off)
{
	const unsigned char *b = buf;
	while (len) {
		int64_t w = off < 0 ? write_at_pos(fd, b, len) : hs_pwrite(fd, b, len, (uint64_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		b += w;
		len -= (size_t)w;
		if (off >= 0)
			off += w;
	}
	return 0;
}
