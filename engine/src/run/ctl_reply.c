/* run/ctl_reply.c: the control channel's reply lines and its name, shared by the protocol (ctl.c) and the transports (ctl_posix.c, ctl_win.c) so neither calls the other back. */
#include <stdarg.h>
#include <stdbool.h>

#include "hindsight/strbuf.h"
#include "run/ctl.h"
#include "run/ctl_json.h"
#include "run/ctl_transport.h"
#include "util/json.h"

char *hs_ctl_socket_path(const char *run_root, const char *profile)
{
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s/.ctl-", run_root);
	for (const char *p = profile; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			  c == '_' || c == '-';
		hs_sb_putc(&sb, ok ? c : '_');
	}
	hs_sb_append(&sb, ".sock");
	return hs_sb_take(&sb);
}

/* The start of a reply: {"id":<id>,"ok":<ok> */
void hs_ctl_reply_begin(hs_strbuf *out, const hs_ctl_val *id, bool ok)
{
	hs_sb_append(out, "{\"id\":");
	if (id && id->type == HS_CTL_NUM)
		hs_sb_append(out, id->str);
	else if (id && id->type == HS_CTL_STR)
		hs_json_escape(out, id->str);
	else
		hs_sb_append(out, "null");
	hs_sb_append(out, ok ? ",\"ok\":true" : ",\"ok\":false");
}

void hs_ctl_reply_verror(hs_strbuf *out, const hs_ctl_val *id, const char *code, const char *fmt, va_list ap)
{
	hs_strbuf text = {0};
	hs_sb_vprintf(&text, fmt, ap);
	hs_ctl_reply_begin(out, id, false);
	hs_sb_append(out, ",\"code\":");
	hs_json_escape(out, code);
	hs_sb_append(out, ",\"error\":");
	hs_json_escape(out, hs_sb_cstr(&text));
	hs_sb_append(out, "}\n");
	hs_sb_free(&text);
}

void hs_ctl_reply_error(hs_strbuf *out, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_ctl_reply_verror(out, NULL, code, fmt, ap);
	va_end(ap);
}
