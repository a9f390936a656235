/* hindsight/status.h: the one status type every hindsight function returns. */
#ifndef HINDSIGHT_STATUS_H
#define HINDSIGHT_STATUS_H

/*
 * Codes carry the class of failure; messages (diagnostics, error buffers) carry
 * the detail. Keep this list short. HS_OK is 0, every failure is negative so a
 * status can never be mistaken for a count.
 */
#define HS_STATUS_LIST(X)                                                          \
	X(HS_OK, 0, "success")                                                     \
	X(HS_ENOMEM, -1, "out of memory")                                          \
	X(HS_EINVAL, -2, "invalid argument or input")                              \
	X(HS_EIO, -3, "input/output error")                                        \
	X(HS_ENOENT, -4, "no such file or object")                                 \
	X(HS_ELIMIT, -5, "a documented limit was exceeded")                        \
	X(HS_ERULES, -6, "the rules have errors (see the diagnostics)")            \
	X(HS_EUNSUPPORTED, -7, "not supported on this platform or build")          \
	X(HS_EPERM, -8, "permission denied")

typedef enum {
#define HS_STATUS_ENUM(name, value, text) name = value,
	HS_STATUS_LIST(HS_STATUS_ENUM)
#undef HS_STATUS_ENUM
} hs_status;

/* Marks a printf-like function (format string at argument f, values from a)
 * so the compiler checks its callers. mingw's printf archetype is msvcrt's,
 * which knows no %zu; hindsight builds with mingw's C99 printf
 * (__USE_MINGW_ANSI_STDIO), whose archetype is gnu_printf. */
#if defined(__MINGW32__)
#define HS_PRINTF_FMT(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__) || defined(__clang__)
#define HS_PRINTF_FMT(f, a) __attribute__((format(printf, f, a)))
#else
#define HS_PRINTF_FMT(f, a)
#endif

/* Returns a static, human-readable string for any status (never NULL). */
const char *hs_strerror(hs_status st);

#endif
