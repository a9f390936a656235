/* etw/cmdline.c: builds a CreateProcessW command line whose words CommandLineToArgvW and the C runtimes split back exactly. */
#include <string.h>

#include "etw/cmdline.h"
#include "util/strbuf.h"

/* The rules (learn.microsoft.com "Parsing C++ command-line arguments"): a
 * word with a blank or a quote is quoted; inside quotes, backslashes are
 * literal unless they precede a quote, where 2n backslashes + quote mean n
 * backslashes and the end of the word, and 2n+1 mean n backslashes and a
 * literal quote. So backslashes before a quote and before the closing quote
 * are doubled, and a quote becomes \". */
static void quote_word(hs_strbuf *sb, const char *w)
{
	if (*w && !strpbrk(w, " \t\n\v\"")) {
		hs_sb_append(sb, w);
		return;
	}
	hs_sb_putc(sb, '"');
	for (const char *p = w;; p++) {
		size_t slashes = 0;
		while (*p == '\\') {
			slashes++;
			p++;
		}
		if (!*p) {
			for (size_t i = 0; i < slashes * 2; i++)
				hs_sb_putc(sb, '\\');
			break;
		}
		if (*p == '"') {
			for (size_t i = 0; i < slashes * 2 + 1; i++)
				hs_sb_putc(sb, '\\');
			hs_sb_putc(sb, '"');
		} else {
			for (size_t i = 0; i < slashes; i++)
				hs_sb_putc(sb, '\\');
			hs_sb_putc(sb, *p);
		}
	}
	hs_sb_putc(sb, '"');
}

char *hs_win_cmdline(const char *prog, char *const *argv)
{
	hs_strbuf sb = {0};
	/* argv[0] is split by different rules (no backslash escapes), and a
	 * program path cannot contain a quote, so quoting it is enough. */
	if (strchr(prog, '"')) {
		hs_sb_free(&sb);
		return NULL;
	}
	if (*prog && !strpbrk(prog, " \t"))
		hs_sb_append(&sb, prog);
	else
		hs_sb_printf(&sb, "\"%s\"", prog);
	for (size_t i = 0; argv && argv[i]; i++) {
		hs_sb_putc(&sb, ' ');
		quote_word(&sb, argv[i]);
	}
	return hs_sb_take(&sb);
}
