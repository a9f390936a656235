/* hs_crash: dies the way the process_crash scenario needs: a real NULL store (SIGSEGV / 0xC0000005) or abort(). */
/*
 * usage: hs_crash segv|abort|exit CODE [--delay-ms N]
 *
 *   segv    stores through a NULL pointer: a page fault at address 0, then
 *           SIGSEGV (Linux; exit status 139 in a shell) or an access violation
 *           0xC0000005 (Windows);
 *   abort   calls abort(): SIGABRT (134) on Linux, exit code 3 on Windows;
 *   exit    exits normally with CODE (the control case: no crash).
 *
 * It first prints "hs_crash: pid N: MODE" (flushed), so the caller can match
 * its pid in a trace, then waits --delay-ms (default 0) before dying: the
 * scenario scripts use the delay to be sure the recorder is watching.
 * Plain C (POSIX or Win32), so the Linux and Windows scenarios share it. On
 * Windows the error dialogs are switched off: the crash must end the process,
 * not wait for a click.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
#define getpid_() ((unsigned long)GetCurrentProcessId())
static void sleep_ms(unsigned long ms)
{
	Sleep(ms);
}
static void quiet_crashes(void)
{
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
#ifdef _MSC_VER
	_set_abort_behavior(0, _WRITE_ABORT_MSG | _CALL_REPORTFAULT);
#endif
}
#else
#include <time.h>
#include <unistd.h>
#define getpid_() ((unsigned long)getpid())
static void sleep_ms(unsigned long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}
static void quiet_crashes(void)
{
}
#endif

static int usage(void)
{
	fputs("usage: hs_crash segv|abort|exit CODE [--delay-ms N]\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *mode = NULL;
	int code = 0;
	unsigned long delay = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--delay-ms") && i + 1 < argc) {
			delay = strtoul(argv[++i], NULL, 10);
		} else if (!mode && (!strcmp(argv[i], "segv") || !strcmp(argv[i], "abort"))) {
			mode = argv[i];
		} else if (!mode && !strcmp(argv[i], "exit") && i + 1 < argc) {
			mode = argv[i];
			code = atoi(argv[++i]);
		} else {
			return usage();
		}
	}
	if (!mode)
		return usage();
	quiet_crashes();
	printf("hs_crash: pid %lu: %s\n", getpid_(), mode);
	fflush(stdout);
	if (delay)
		sleep_ms(delay);
	if (!strcmp(mode, "segv")) {
		volatile int *volatile p = 0;
		*p = 1;
	} else if (!strcmp(mode, "abort")) {
		abort();
	}
	return code;
}
