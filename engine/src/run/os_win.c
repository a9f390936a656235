/* run/os_win.c: the recording mode's OS layer on Windows: elevation check, console control events, the main.log tee thread, files and clocks. */
#include <direct.h>
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <string.h>
#include <sys/stat.h>

#include "etw/etw_api.h"
#include "hindsight/compat.h"
#include "hindsight/exitcodes.h"
#include "hindsight/limits.h"
#include "run/live_lock.h"
#include "run/os.h"

int hs_os_check_privilege(const hs_msg *msg)
{
	BOOL admin = FALSE;
	DWORD err = hs_etw_api_get()->is_admin(&admin);
	if (err == ERROR_SUCCESS && admin)
		return 0;
	if (err != ERROR_SUCCESS)
		hs_msg_say(msg, HS_MSG_ERROR, "run", "cannot check for Administrator rights (Win32 error %lu)",
			   (unsigned long)err);
	hs_msg_say(msg, HS_MSG_ERROR, "run",
		   "recording needs an elevated terminal: ETW kernel sessions are for administrators.");
	hs_msg_say(msg, HS_MSG_ERROR, "run",
		   "close this terminal, open a new one with \"Run as administrator\" and run the same command again; "
		   "`engine --plan` works without it.");
	return HS_EXIT_NOT_PRIVILEGED;
}

/* Not yet on Windows: the ETW backend still takes a running session of the
 * same name for a stale one and stops it. A named kernel mutex per session
 * name (gone with its owner, like the Linux lock) would be the equivalent. */
void hs_os_private_files(void)
{
	/* Files inherit the run folder's ACL; under the user's profile or an
	 * admin-created folder that is owner/Administrators/SYSTEM already. */
}

int hs_os_mkdir(const char *path)
{
	return _mkdir(path);
}

int hs_os_rmdir(const char *path)
{
	return _rmdir(path);
}

int hs_os_sync(FILE *f)
{
	return fflush(f) || _commit(_fileno(f)) ? -1 : 0;
}

uint64_t hs_os_cpu_time_us(void)
{
	FILETIME c, e, k, u;
	if (!GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u))
		return 0;
	/* FILETIMEs count 100 ns. */
	uint64_t ku = ((uint64_t)k.dwHighDateTime << 32) | k.dwLowDateTime;
	uint64_t uu = ((uint64_t)u.dwHighDateTime << 32) | u.dwLowDateTime;
	return (ku + uu) / 10u;
}

void hs_os_localtime(time_t t, struct tm *out)
{
	/* msvcrt keeps localtime's result per thread, so this is safe. */
	struct tm *tm = localtime(&t);
	if (tm)
		*out = *tm;
	else
		memset(out, 0, sizeof(*out));
}

long hs_os_utc_offset_min(time_t t)
{
	struct tm lt;
	hs_os_localtime(t, &lt);
	/* _mkgmtime reads the broken-down local time as if it were UTC. */
	return (long)((_mkgmtime(&lt) - t) / 60);
}

uint64_t hs_os_monotonic_ms(void)
{
	return GetTickCount64();
}

uint64_t hs_os_wall_ms(void)
{
	uint64_t t = hs_etw_api_get()->system_time(); /* 100 ns since 1601, through the call table */
	return t / 10000u - 11644473600000ull;
}

/* ---- console control events ---- */

static volatile LONG g_stop;
static volatile LONG g_snap; /* Ctrl+Break: a snapshot, recording goes on */
static const char *volatile g_busy;
static const char *volatile g_busy_prefix;
static HANDLE g_finished; /* manual-reset event: set when the run's files are complete */

static BOOL WINAPI on_console_event(DWORD type)
{
	switch (type) {
	case CTRL_BREAK_EVENT:
		InterlockedIncrement(&g_snap);
		return TRUE;
	case CTRL_C_EVENT:
	case CTRL_CLOSE_EVENT:
	case CTRL_LOGOFF_EVENT:
	case CTRL_SHUTDOWN_EVENT:
		break;
	default:
		return FALSE;
	}
	/* Windows runs this handler on a thread of its own, so stdio is safe. */
	LONG n = InterlockedIncrement(&g_stop);
	const char *busy = g_busy, *prefix = g_busy_prefix;
	if (n > 1 && busy) {
		fprintf(stderr, "\n%s%sstill %s; please wait, the files would be left incomplete otherwise\n",
			prefix ? prefix : "", prefix ? ": " : "", busy);
		fflush(stderr);
	}
	/* For close, logoff and shutdown Windows ends the process as soon as the
	 * handler returns: hold it off until the snapshot is written (Windows
	 * itself gives up on us after about 5 s). */
	if (type != CTRL_C_EVENT && g_finished)
		WaitForSingleObject(g_finished, HS_WIN_CLOSE_WAIT_MS);
	return TRUE;
}

void hs_os_stop_handlers_install(void)
{
	if (!g_finished)
		g_finished = CreateEventW(NULL, TRUE, FALSE, NULL);
	SetConsoleCtrlHandler(on_console_event, TRUE);
}

volatile int *hs_os_snapshot_requests(void)
{
	return (volatile int *)&g_snap;
}

const char *hs_os_snapshot_hint(void)
{
	return "Ctrl+Break";
}

volatile int *hs_os_stop_requests(void)
{
	_Static_assert(sizeof(LONG) == sizeof(int), "LONG is int on Windows");
	return (volatile int *)&g_stop;
}

void hs_os_set_busy(const char *text)
{
	g_busy = text;
}

void hs_os_set_busy_prefix(const char *prefix)
{
	g_busy_prefix = prefix;
}

void hs_os_run_finished(void)
{
	if (g_finished)
		SetEvent(g_finished);
}

const char *hs_os_stop_hint(void)
{
	return "Ctrl+C or closing the window";
}

/* ---- main.log: a thread copies stdout and stderr to the console and the log ---- */

typedef struct {
	int read_fd, orig_fd;
	hs_thread thread;
} tee_pipe;

static struct {
	tee_pipe p[2];
	int log;
	CRITICAL_SECTION log_lock;
	bool running;
} g_tee;

static DWORD WINAPI tee_main(LPVOID arg)
{
	tee_pipe *p = arg;
	char buf[8192];
	int n;
	while ((n = _read(p->read_fd, buf, sizeof(buf))) > 0) {
		hs_write_all(p->orig_fd, buf, (size_t)n, HS_AT_POS);
		EnterCriticalSection(&g_tee.log_lock);
		hs_write_all(g_tee.log, buf, (size_t)n, HS_AT_POS);
		LeaveCriticalSection(&g_tee.log_lock);
	}
	return 0;
}

bool hs_os_tee_start(const char *log_path)
{
	memset(&g_tee, 0, sizeof(g_tee));
	g_tee.log = _open(log_path, _O_WRONLY | _O_CREAT | _O_APPEND | _O_BINARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
	if (g_tee.log < 0)
		return false;
	InitializeCriticalSection(&g_tee.log_lock);
	fflush(stdout);
	fflush(stderr);
	FILE *streams[2] = {stdout, stderr};
	for (int i = 0; i < 2; i++) {
		int fds[2];
		/* Binary pipe: stdout's own text mode already turned \n into \r\n. */
		if (_pipe(fds, 65536, _O_BINARY | _O_NOINHERIT))
			return false;
		int fd = _fileno(streams[i]);
		g_tee.p[i].orig_fd = _dup(fd);
		if (g_tee.p[i].orig_fd < 0 || _dup2(fds[1], fd) < 0)
			return false;
		_setmode(g_tee.p[i].orig_fd, _O_BINARY);
		_close(fds[1]);
		g_tee.p[i].read_fd = fds[0];
		/* msvcrt has no line buffering (_IOLBF means full buffering), so
		 * unbuffered is the only way lines reach the console as they happen. */
		setvbuf(streams[i], NULL, _IONBF, 0);
		if (!hs_thread_start(&g_tee.p[i].thread, tee_main, &g_tee.p[i]))
			return false;
	}
	g_tee.running = true;
	return true;
}

void hs_os_tee_stop(void)
{
	if (!g_tee.running)
		return;
	fflush(stdout);
	fflush(stderr);
	FILE *streams[2] = {stdout, stderr};
	for (int i = 0; i < 2; i++) {
		/* Putting the original back closes the pipe's last write end. */
		_dup2(g_tee.p[i].orig_fd, _fileno(streams[i]));
		hs_thread_join(g_tee.p[i].thread, HS_THREAD_FOREVER);
		_close(g_tee.p[i].read_fd);
		_close(g_tee.p[i].orig_fd);
	}
	_close(g_tee.log);
	DeleteCriticalSection(&g_tee.log_lock);
	g_tee.running = false;
}
