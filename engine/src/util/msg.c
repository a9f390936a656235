/* util/msg.c: formatting a message for its sink, the stderr fallback and the FILE sink (see msg.h). */
#include "hindsight/msg.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef _WIN32
#define hs_msg_lock(f) _lock_file(f)
#define hs_msg_unlock(f) _unlock_file(f)
#else
#define hs_msg_lock(f) flockfile(f)
#define hs_msg_unlock(f) funlockfile(f)
#endif

/* Most messages are one short line: format on the stack, allocate only for
 * the rare long one. */
#define HS_MSG_STACK_CHARS 512

static void write_line(FILE *f, const char *prefix, const char *text)
{
	/* One lock around the whole line: the snapshot and file-rewrite threads
	 * speak while the loop does, and a line must not be cut by another. */
	hs_msg_lock(f);
	if (prefix) {
		fputs(prefix, f);
		fputs(": ", f);
	}
	fputs(text, f);
	fputc('\n', f);
	fflush(f);
	hs_msg_unlock(f);
}

void hs_msg_vsay(const hs_msg *m, hs_msg_level level, const char *source, const char *fmt, va_list ap)
{
	if (level == HS_MSG_DEBUG && !(m && m->debug))
		return;
	char stack[HS_MSG_STACK_CHARS];
	char *text = stack;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(stack, sizeof stack, fmt, ap);
	if (n >= (int)sizeof stack) {
		char *big = malloc((size_t)n + 1);
		/* Out of memory: the message cut to the stack buffer beats none. */
		if (big && vsnprintf(big, (size_t)n + 1, fmt, again) >= 0)
			text = big;
		else
			free(big);
	} else if (n < 0) {
		stack[0] = 0;
	}
	va_end(again);
	if (m && m->fn)
		m->fn(m->ctx, level, source, text);
	else
		write_line(stderr, source, text);
	if (text != stack)
		free(text);
}

void hs_msg_say(const hs_msg *m, hs_msg_level level, const char *source, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_msg_vsay(m, level, source, fmt, ap);
	va_end(ap);
}

void hs_msg_file_fn(void *ctx, hs_msg_level level, const char *source, const char *text)
{
	const hs_msg_file *s = ctx;
	FILE *f = s && s->f ? s->f : stderr;
	if (s && s->err && level == HS_MSG_ERROR)
		f = s->err;
	write_line(f, s && s->prefix ? s->prefix : source, text);
}
