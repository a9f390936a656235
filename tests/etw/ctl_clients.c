/* ctl_clients.c: hostile and concurrent clients of engine ctl's named pipe under Wine (etw:wine_ctl), the Windows half of tests/ftrace/ctl-clients.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "run/ctl.h"

/*
 * usage: ctl_clients RUN_ROOT PROFILE  (in the engine's working directory)
 * The pipe's name comes from hs_ctl_channel_name, as engine ctl finds it.
 * Plain blocking handles: a server that never answered would hang the test,
 * which ctest's timeout then fails. Exit 0 when every check passed.
 */

static WCHAR pipe_name[512];
static int failures;

#define EXPECT(cond, ...)                                                                                              \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "ctl_clients: FAIL %s:%d: ", __FILE__, __LINE__);                              \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fputc('\n', stderr);                                                                           \
			failures++;                                                                                    \
		}                                                                                                      \
	} while (0)

/* Opens the pipe, waiting for a free instance (up to 60 s) as engine ctl does. */
static HANDLE open_pipe(void)
{
	for (int i = 0; i < 600; i++) {
		HANDLE h = CreateFileW(pipe_name, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
				       SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, NULL);
		if (h != INVALID_HANDLE_VALUE)
			return h;
		if (GetLastError() != ERROR_PIPE_BUSY)
			break;
		WaitNamedPipeW(pipe_name, 100);
	}
	fprintf(stderr, "ctl_clients: cannot open the pipe: error %lu\n", GetLastError());
	return INVALID_HANDLE_VALUE;
}

static BOOL put(HANDLE h, const char *s, size_t n)
{
	DWORD w;
	return WriteFile(h, s, (DWORD)n, &w, NULL) && w == n;
}

/* One line (without its newline) into buf; false at the end of the stream. */
static BOOL get_line(HANDLE h, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	for (;;) {
		char c;
		DWORD r;
		if (!ReadFile(h, &c, 1, &r, NULL) || r == 0)
			return FALSE;
		if (c == '\n')
			break;
		if (n + 1 < cap)
			buf[n++] = c;
	}
	buf[n] = 0;
	return TRUE;
}

static BOOL at_end(HANDLE h)
{
	char c;
	DWORD r;
	return !ReadFile(h, &c, 1, &r, NULL) || r == 0;
}

static char line[1 << 20];

int main(int argc, char **argv)
{
	if (argc != 3) {
		fputs("usage: ctl_clients RUN_ROOT PROFILE\n", stderr);
		return 2;
	}
	char *name = hs_ctl_channel_name(argv[1], argv[2]);
	if (!name || !MultiByteToWideChar(CP_UTF8, 0, name, -1, pipe_name, 512))
		return 2;
	printf("pipe %s\n", name);
	free(name);

	/* Not JSON, then a request on the same connection: it stays open. */
	HANDLE h = open_pipe();
	if (h == INVALID_HANDLE_VALUE)
		return 1;
	EXPECT(put(h, "not json\n", 9) && get_line(h, line, sizeof line) && strstr(line, "\"code\":\"malformed\""),
	       "not JSON: %s", line);
	EXPECT(put(h, "[1,2]\n", 6) && get_line(h, line, sizeof line) && strstr(line, "\"code\":\"malformed\""),
	       "an array: %s", line);
	EXPECT(put(h, "{\"id\":3,\"cmd\":\"nope\"}\n", 22) && get_line(h, line, sizeof line) &&
		       strstr(line, "\"id\":3,\"ok\":false,\"code\":\"unknown\""),
	       "unknown: %s", line);
	/* Two pipelined requests in one write: two replies in order. */
	const char *two = "{\"id\":1,\"cmd\":\"status\"}\n{\"id\":2,\"cmd\":\"status\"}\n";
	EXPECT(put(h, two, strlen(two)), "pipelined write");
	EXPECT(get_line(h, line, sizeof line) && !strncmp(line, "{\"id\":1,\"ok\":true,\"status\":{", 28), "1st: %.80s",
	       line);
	EXPECT(get_line(h, line, sizeof line) && !strncmp(line, "{\"id\":2,\"ok\":true,\"status\":{", 28), "2nd: %.80s",
	       line);
	CloseHandle(h);

	/* 5000 bytes without a newline: one too_long reply, then the end (the
	 * reply must survive the server closing its end right after it). */
	h = open_pipe();
	static char big[5000];
	memset(big, 'a', sizeof big);
	EXPECT(put(h, big, sizeof big) && get_line(h, line, sizeof line) && strstr(line, "\"code\":\"too_long\""),
	       "too long: %s", line);
	EXPECT(at_end(h), "the connection did not end after too_long");
	CloseHandle(h);

	/* Twenty clients that ask and close without reading. */
	for (int i = 0; i < 20; i++) {
		h = open_pipe();
		put(h, "{\"cmd\":\"status\"}\n", 17);
		CloseHandle(h);
	}

	/* A client that never writes: a timeout reply after HS_CTL_CLIENT_IDLE_MS,
	 * then the end; meanwhile another is answered at once. */
	DWORD t0 = GetTickCount();
	HANDLE silent = open_pipe();
	HANDLE other = open_pipe();
	DWORD t1 = GetTickCount();
	EXPECT(put(other, "{\"id\":9,\"cmd\":\"status\"}\n", 24) && get_line(other, line, sizeof line) &&
		       !strncmp(line, "{\"id\":9,\"ok\":true", 17),
	       "a client beside a silent one: %.80s", line);
	EXPECT(GetTickCount() - t1 < 4000, "the other client waited %lu ms", GetTickCount() - t1);
	CloseHandle(other);
	EXPECT(get_line(silent, line, sizeof line) && strstr(line, "\"code\":\"timeout\""), "silent: %s", line);
	DWORD waited = GetTickCount() - t0;
	EXPECT(waited >= 4500 && waited < 15000, "the silent client was dropped after %lu ms", waited);
	EXPECT(at_end(silent), "the silent client's connection did not end");
	CloseHandle(silent);

	/* Twelve clients at once, each keeping its connection: eight are served,
	 * one waits connected, the rest wait for an instance; slots free as the
	 * answered ones go idle, so all twelve are answered. */
	HANDLE many[12];
	t0 = GetTickCount();
	for (int i = 0; i < 12; i++) {
		many[i] = open_pipe();
		char req[64];
		int n = snprintf(req, sizeof req, "{\"id\":%d,\"cmd\":\"status\"}\n", 100 + i);
		char want[32];
		snprintf(want, sizeof want, "{\"id\":%d,\"ok\":true", 100 + i);
		EXPECT(many[i] != INVALID_HANDLE_VALUE && put(many[i], req, (size_t)n) &&
			       get_line(many[i], line, sizeof line) && !strncmp(line, want, strlen(want)),
		       "client %d of 12: %.80s", i + 1, line);
	}
	printf("12 clients answered in %lu ms\n", GetTickCount() - t0);
	for (int i = 0; i < 12; i++)
		CloseHandle(many[i]);

	printf("ctl_clients: %s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
