/* run/ctl_win.c: the control channel's transport on Windows: a named pipe with an owner-only DACL, served with overlapped I/O so the loop never waits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "etw/etw.h"
#include "etw/etw_api.h"
#include "hindsight/hmap.h"
#include "hindsight/limits.h"
#include "run/ctl.h"
#include "run/ctl_transport.h"

/*
 * Every call goes through hs_etw_api (etw_api.h), so the call-golden test
 * (tests/etw, ctl-pipe.calls) pins them. What each one does is Microsoft's
 * documented behaviour (learn.microsoft.com: CreateNamedPipeW, ConnectNamedPipe,
 * GetOverlappedResult, CancelIoEx, DisconnectNamedPipe, "Named Pipe Security
 * and Access Rights", "Mandatory Integrity Control"); docs/ctl.md says why
 * each choice.
 *
 * One instance is always listening (ConnectNamedPipe pending) besides the
 * clients served, so the name never lapses while the engine runs (a lapsed
 * name could be taken by anyone); when HS_CTL_MAX_CLIENTS are served, the
 * listening instance takes one more client that waits, connected, for a slot
 * (the socket's backlog), and further clients get ERROR_PIPE_BUSY and wait
 * with WaitNamedPipeW.
 */

enum { NAME_CHARS = 256, SID_CHARS = 192, SDDL_CHARS = 512 };

struct hs_ctl_conn {
	HANDLE pipe;
	OVERLAPPED rov, wov; /* rov also carries the ConnectNamedPipe */
	bool connecting, connected, reading, writing;
	DWORD r_have, r_off;
	char rbuf[HS_CTL_MAX_REQUEST_BYTES];
	char wbuf[HS_CTL_PIPE_BUFFER_BYTES]; /* what a pending WriteFile reads: the caller's buffer may move */
};

struct hs_ctl_tp {
	const hs_etw_api *api;
	WCHAR wname[NAME_CHARS];
	WCHAR sddl[SDDL_CHARS];
	char *name;
	hs_ctl_conn *listener;
	unsigned instances; /* open instances: the clients' and the listener */
	const hs_msg *msg;
};

static char *pipe_name(const char *run_root, const char *profile)
{
	const hs_etw_api *api = hs_etw_api_get();
	WCHAR in[NAME_CHARS * 2], full[NAME_CHARS * 4];
	/* The run root as the engine's file calls see it: the full path (relative
	 * to the working directory, as the run folders are made), '/' and '\'
	 * alike (GetFullPathNameW turns '/' into '\'), without case (NTFS
	 * names are case-insensitive), so both sides find one name. */
	if (hs_etw_widen(run_root, in, sizeof(in) / sizeof(in[0])) != HS_OK ||
	    api->full_path(in, full, sizeof(full) / sizeof(full[0])))
		return NULL;
	uint64_t h = HS_HASH_START; /* FNV-1a 64 over UTF-16LE */
	for (const WCHAR *p = full; *p; p++) {
		WCHAR ch = *p == L'/' ? L'\\' : (WCHAR)towupper(*p);
		uint8_t le[2] = {(uint8_t)(ch & 0xff), (uint8_t)(ch >> 8)};
		h = hs_hash_more(h, le, sizeof le);
	}
	hs_strbuf sb = {0};
	hs_sb_append(&sb, "\\\\.\\pipe\\hindsight-ctl-");
	size_t n = 0;
	for (const char *p = profile; *p && n < HS_CTL_PIPE_PROFILE_CHARS; p++, n++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			  c == '_' || c == '-';
		hs_sb_putc(&sb, ok ? c : '_');
	}
	hs_sb_printf(&sb, "-%016llx", (unsigned long long)h);
	return hs_sb_take(&sb);
}

char *hs_ctl_channel_name(const char *run_root, const char *profile)
{
	return pipe_name(run_root, profile);
}

/* Waits for a cancelled operation to end: its OVERLAPPED and buffer are the
 * kernel's until then (learn.microsoft.com, CancelIoEx). A pipe's read or
 * connect ends at once when cancelled. */
static void io_abandon(hs_ctl_tp *t, hs_ctl_conn *c, OVERLAPPED *ov)
{
	DWORD n;
	if (t->api->io_cancel(c->pipe, ov) == ERROR_SUCCESS)
		t->api->io_result(c->pipe, ov, &n, TRUE);
}

static void conn_free(hs_ctl_tp *t, hs_ctl_conn *c)
{
	if (!c)
		return;
	if (c->pipe) {
		if (c->connecting || c->reading)
			io_abandon(t, c, &c->rov);
		if (c->writing)
			io_abandon(t, c, &c->wov);
		/* No DisconnectNamedPipe: it discards what the client has not read
		 * yet (the last reply, a stop's); CloseHandle leaves it to be read,
		 * then the client sees the end. */
		t->api->close_handle(c->pipe);
		t->instances--;
	}
	if (c->rov.hEvent)
		t->api->close_handle(c->rov.hEvent);
	if (c->wov.hEvent)
		t->api->close_handle(c->wov.hEvent);
	free(c);
}

/* Starts c's instance waiting for a client (again). */
static DWORD relisten(hs_ctl_tp *t, hs_ctl_conn *c)
{
	c->connecting = c->connected = false;
	for (int i = 0; i < 4; i++) {
		DWORD err = t->api->pipe_connect(c->pipe, &c->rov);
		if (err == ERROR_IO_PENDING) {
			c->connecting = true;
			return ERROR_SUCCESS;
		}
		if (err == ERROR_PIPE_CONNECTED || err == ERROR_SUCCESS) {
			c->connected = true; /* a client came between create and connect */
			return ERROR_SUCCESS;
		}
		if (err != ERROR_NO_DATA)
			return err;
		/* A client came and went before the connect: the instance listens
		 * again only once disconnected (learn.microsoft.com, ConnectNamedPipe).
		 * The same instance, so that the name never lapses. */
		t->api->pipe_disconnect(c->pipe);
	}
	return ERROR_NO_DATA;
}

/* A new instance waiting for a client (t->listener), or the error (said by
 * the caller at open; later the next accept tries again). */
static DWORD listen_new(hs_ctl_tp *t)
{
	hs_ctl_conn *c = calloc(1, sizeof(*c));
	DWORD err;
	if (!c)
		return ERROR_NOT_ENOUGH_MEMORY;
	if ((err = t->api->event_create(&c->rov.hEvent)) || (err = t->api->event_create(&c->wov.hEvent)))
		goto fail;
	/* FILE_FLAG_FIRST_PIPE_INSTANCE whenever we hold no instance: the name
	 * must be ours, not someone's who made it first (a squatter would
	 * read our clients' requests and answer them). */
	err = t->api->pipe_create(t->wname, t->sddl, t->instances == 0, HS_CTL_MAX_CLIENTS + 1,
				  HS_CTL_PIPE_BUFFER_BYTES, &c->pipe);
	if (err)
		goto fail;
	t->instances++;
	if ((err = relisten(t, c)))
		goto fail;
	t->listener = c;
	return ERROR_SUCCESS;
fail:
	conn_free(t, c);
	return err;
}

hs_ctl_tp *hs_ctl_tp_open(const char *run_root, const char *profile, const hs_msg *msg, const char **name)
{
	hs_ctl_tp *t = calloc(1, sizeof(*t));
	WCHAR user[SID_CHARS] = L"", label[SID_CHARS] = L"";
	char eb[40];
	DWORD err;
	if (!t || !(t->name = pipe_name(run_root, profile)) ||
	    hs_etw_widen(t->name, t->wname, NAME_CHARS) != HS_OK) {
		hs_msg_say(msg, HS_MSG_WARN, "run", "no control channel (engine ctl): out of memory, or the run root %s "
			   "has no full path", run_root);
		goto fail;
	}
	t->api = hs_etw_api_get();
	t->msg = msg;
	/* Who may open it: the engine's user and LocalSystem, nobody else, and
	 * no ACE inherited (P); the label is the engine's own integrity level
	 * with no-write-up and no-read-up, so a process of the same user at a
	 * lower level (a non-elevated shell against an elevated recorder)
	 * cannot drive it: on Linux only the engine's euid or root may. A label
	 * above the caller's own level cannot be set, so it is the token's. */
	if ((err = t->api->token_sid(TokenUser, user, SID_CHARS)) ||
	    (err = t->api->token_sid(TokenIntegrityLevel, label, SID_CHARS))) {
		hs_msg_say(msg, HS_MSG_WARN, "run", "no control channel (engine ctl): the process token's %s: %s",
			   user[0] ? "integrity level" : "user", hs_etw_error_label(err, eb, sizeof eb));
		goto fail;
	}
	swprintf(t->sddl, SDDL_CHARS, L"D:P(A;;GA;;;%ls)(A;;GA;;;SY)S:(ML;;NWNR;;;%ls)", user, label);
	/* Is the name served already? WaitNamedPipeW says ERROR_FILE_NOT_FOUND
	 * only when no instance exists. FILE_FLAG_FIRST_PIPE_INSTANCE below is
	 * the race-free refusal on Windows; this asks first because Wine 8
	 * ignores that flag (kernelbase's CreateNamedPipeW always opens with
	 * FILE_OPEN_IF), where a second engine would otherwise join the first
	 * one's pipe and answer half its clients. */
	err = t->api->pipe_wait(t->wname, 1);
	if (err != ERROR_FILE_NOT_FOUND)
		err = ERROR_ACCESS_DENIED;
	else
		err = listen_new(t);
	if (err == ERROR_ACCESS_DENIED || err == ERROR_PIPE_BUSY) {
		/* FILE_FLAG_FIRST_PIPE_INSTANCE refused: the name exists. */
		hs_msg_say(msg, HS_MSG_WARN, "run",
			   "no control channel (engine ctl): %s exists already (another engine of profile %s, or "
			   "someone else's pipe: not ours to answer on)",
			   t->name, profile);
		goto fail;
	}
	if (err) {
		hs_msg_say(msg, HS_MSG_WARN, "run", "no control channel (engine ctl): %s: %s", t->name,
			   hs_etw_error_label(err, eb, sizeof eb));
		goto fail;
	}
	*name = t->name;
	return t;
fail:
	if (t)
		free(t->name);
	free(t);
	return NULL;
}

hs_ctl_conn *hs_ctl_tp_accept(hs_ctl_tp *t)
{
	if (!t->listener && listen_new(t))
		return NULL; /* tried again at the next accept */
	hs_ctl_conn *c = t->listener;
	if (c->connecting) {
		DWORD n, err = t->api->io_result(c->pipe, &c->rov, &n, FALSE);
		if (err == ERROR_IO_INCOMPLETE)
			return NULL;
		c->connecting = false;
		if (err) {
			/* The client went away before it was taken: listen again on
			 * the same instance (or, failing that, make the next one
			 * before this one goes, so the name never lapses). */
			t->api->pipe_disconnect(c->pipe);
			if (relisten(t, c)) {
				t->listener = NULL;
				listen_new(t);
				conn_free(t, c);
			}
			return NULL;
		}
		c->connected = true;
	}
	/* The DACL and the label have refused everyone else at CreateFileW, so
	 * there is no peer to check here (the socket's SO_PEERCRED). */
	t->listener = NULL;
	listen_new(t);
	return c;
}

ptrdiff_t hs_ctl_tp_recv(hs_ctl_tp *t, hs_ctl_conn *c, char *buf, size_t len)
{
	DWORD got = 0, err;
	if (c->r_off == c->r_have) {
		if (c->reading) {
			err = t->api->io_result(c->pipe, &c->rov, &got, FALSE);
			if (err == ERROR_IO_INCOMPLETE)
				return 0;
			c->reading = false;
		} else {
			err = t->api->io_read(c->pipe, c->rbuf, sizeof(c->rbuf), &c->rov, &got);
			if (err == ERROR_IO_PENDING) {
				c->reading = true;
				return 0;
			}
		}
		if (err)
			return -1; /* ERROR_BROKEN_PIPE: the client closed its end */
		c->r_have = got;
		c->r_off = 0;
	}
	size_t n = c->r_have - c->r_off;
	if (n > len)
		n = len;
	memcpy(buf, c->rbuf + c->r_off, n);
	c->r_off += (DWORD)n;
	return (ptrdiff_t)n;
}

ptrdiff_t hs_ctl_tp_send(hs_ctl_tp *t, hs_ctl_conn *c, const char *buf, size_t len)
{
	DWORD put = 0, err;
	if (c->writing) {
		/* The caller's buf starts with the bytes that write took (it keeps
		 * them until this says they are sent). */
		err = t->api->io_result(c->pipe, &c->wov, &put, FALSE);
		if (err == ERROR_IO_INCOMPLETE)
			return 0;
		c->writing = false;
		return err ? -1 : (ptrdiff_t)put;
	}
	DWORD n = len > sizeof(c->wbuf) ? (DWORD)sizeof(c->wbuf) : (DWORD)len;
	memcpy(c->wbuf, buf, n);
	err = t->api->io_write(c->pipe, c->wbuf, n, &c->wov, &put);
	if (err == ERROR_IO_PENDING) {
		c->writing = true; /* the pipe's buffer is full: the client is not reading */
		return 0;
	}
	return err ? -1 : (ptrdiff_t)put; /* ERROR_NO_DATA, ERROR_BROKEN_PIPE: it hung up */
}

void hs_ctl_tp_drop(hs_ctl_tp *t, hs_ctl_conn *c)
{
	conn_free(t, c);
}

void hs_ctl_tp_close(hs_ctl_tp *t)
{
	if (!t)
		return;
	/* The pipe's name goes with its last instance: nothing to remove. */
	conn_free(t, t->listener);
	free(t->name);
	free(t);
}
