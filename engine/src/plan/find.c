/* plan/find.c: resolves `--rules NAME` to a file in the known rules directories. */
#include <stdlib.h>
#include <string.h>

#include "hindsight/plan.h"
#include "util/compat.h"
#include "util/strbuf.h"
#include "util/text.h"

static bool is_file(const char *p) { return hs_is_regular_file(p); }

static char *try_dir(const char *dir, const char *name, hs_strbuf *tried)
{
	hs_strbuf sb = {0};
	hs_sb_printf(&sb, "%s/%s", dir, name);
	hs_sb_printf(tried, "  %s\n", hs_sb_cstr(&sb));
	if (!sb.oom && is_file(hs_sb_cstr(&sb)))
		return hs_sb_take(&sb);
	hs_sb_free(&sb);
	return NULL;
}

char *hs_rules_resolve(const char *arg, const char *argv0, char **tried_out)
{
	hs_strbuf tried = {0};
	char *found = NULL;
	if (hs_path_has_sep(arg) || is_file(arg)) {
		hs_sb_printf(&tried, "  %s\n", arg);
		if (is_file(arg))
			found = strdup(arg);
		goto out;
	}
	/* "stutter" means "stutter.yaml". */
	hs_strbuf name = {0};
	hs_sb_append(&name, arg);
	size_t n = strlen(arg);
	if (!(n > 5 && strcmp(arg + n - 5, ".yaml") == 0) && !(n > 4 && strcmp(arg + n - 4, ".yml") == 0))
		hs_sb_append(&name, ".yaml");
	const char *env = getenv("HINDSIGHT_RULES_DIR");
	if (env && *env)
		found = try_dir(env, hs_sb_cstr(&name), &tried);
	if (!found) {
		char *self = hs_self_path(argv0);
		char *slash = self ? hs_path_last_sep(self) : NULL;
		if (slash) {
			*slash = '\0';
			hs_strbuf d = {0};
			hs_sb_printf(&d, "%s/rules", self);
			found = try_dir(hs_sb_cstr(&d), hs_sb_cstr(&name), &tried);
			hs_sb_free(&d);
			if (!found) {
				hs_sb_printf(&d, "%s/../share/hindsight/rules", self);
				found = try_dir(hs_sb_cstr(&d), hs_sb_cstr(&name), &tried);
				hs_sb_free(&d);
			}
		}
		free(self);
	}
	if (!found)
		found = try_dir(HS_INSTALL_RULES_DIR, hs_sb_cstr(&name), &tried);
	if (!found)
		found = try_dir(HS_SOURCE_RULES_DIR, hs_sb_cstr(&name), &tried);
	hs_sb_free(&name);
out:
	if (tried_out)
		*tried_out = hs_sb_take(&tried);
	else
		hs_sb_free(&tried);
	return found;
}
