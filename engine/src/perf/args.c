/* perf/args.c: what launch mode shares on every platform: --args split into argv words (shell-style quoting without expansion), the sampling session, its messages. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/launch.h"

void hs_launch_free_args(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

hs_status hs_launch_split_args(const char *s, char ***out, size_t *n_out)
{
	size_t len = strlen(s);
	/* No word is longer than the input and there are at most len/2+1 words. */
	char **v = calloc(len / 2 + 2, sizeof *v);
	char *w = malloc(len + 1);
	size_t n = 0;
	hs_status st = HS_ENOMEM;
	*out = NULL;
	if (n_out)
		*n_out = 0;
	if (!v || !w)
		goto fail;
	st = HS_EINVAL;
	for (const char *p = s; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		size_t k = 0;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			if (*p == '\'') {
				const char *e = strchr(p + 1, '\'');
				if (!e)
					goto fail;
				memcpy(w + k, p + 1, (size_t)(e - p - 1));
				k += (size_t)(e - p - 1);
				p = e + 1;
			} else if (*p == '"') {
				for (p++; *p != '"'; p++) {
					if (!*p)
						goto fail;
					if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
						p++;
					w[k++] = *p;
				}
				p++;
			} else if (*p == '\\') {
				if (!p[1])
					goto fail;
				w[k++] = p[1];
				p += 2;
			} else {
				w[k++] = *p++;
			}
		}
		st = HS_ENOMEM;
		if (!(v[n] = malloc(k + 1)))
			goto fail;
		memcpy(v[n], w, k);
		v[n][k] = 0;
		n++;
		st = HS_EINVAL;
	}
	free(w);
	*out = v;
	if (n_out)
		*n_out = n;
	return HS_OK;
fail:
	free(w);
	hs_launch_free_args(v);
	return st;
}

const hs_plan_session *hs_launch_sampling_session(const hs_plan *plan)
{
	for (size_t i = 0; i < plan->n_sessions; i++)
		if (plan->sessions[i].session && plan->sessions[i].session->mode == HS_MODE_SAMPLING)
			return &plan->sessions[i];
	return NULL;
}

static void quiet(void *ctx, hs_msg_level level, const char *source, const char *text)
{
	(void)ctx;
	(void)level;
	(void)source;
	(void)text;
}

const hs_msg *hs_launch_msg(const hs_msg *msg)
{
	static const hs_msg silent = {.fn = quiet, .ctx = NULL};
	return msg ? msg : &silent;
}

void hs_launch_say(const hs_msg *msg, hs_msg_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_msg_vsay(msg, level, "launch", fmt, ap);
	va_end(ap);
}
