/* catalog-sync: writes the Linux catalog's `formats:` file (each event's payload fields, from the kernel's format files) so rulecheck can check filters offline. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "hindsight/diag.h"
#include "hindsight/exitcodes.h"
#include "hindsight/limits.h"
#include "hindsight/rules.h"
#include "hindsight/text.h"

/*
 * The catalog (rules/providers/linux.yaml) stays hand-written: its stories
 * and notes are never rewritten. Its fields live in a file of their own
 * (rules/providers/linux-formats.yaml, included by the catalog) that this
 * tool writes whole from /sys/kernel/tracing/events/<system>/<event>/format,
 * for exactly the events the catalog lists, and records the kernel release.
 * --check compares instead of writing, so a test can show that the shipped
 * lists are what this kernel says.
 */

static void usage(FILE *f)
{
	fputs("usage: catalog-sync CATALOG [-o FILE | --check FILE] [--tracing DIR] [--kernel RELEASE]\n"
	      "  Reads the format file of every ftrace event CATALOG lists and writes the catalog's\n"
	      "  formats file (payload fields: name, type, size, signed) to FILE or stdout.\n"
	      "  --check FILE  compare with FILE instead: exit 0 when equal, 1 (and the differences) when not\n"
	      "  --tracing DIR the tracefs to read (default /sys/kernel/tracing)\n"
	      "  --kernel R    the release recorded in the file (default: uname -r)\n",
	      f);
}

typedef struct {
	char *buf;
	size_t len, cap;
} text;

static int put(text *t, const char *s)
{
	size_t n = strlen(s);
	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->len + n + 1) * 2;
		char *b = realloc(t->buf, cap);
		if (!b)
			return -1;
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, n + 1);
	t->len += n;
	return 0;
}

/* A whole file, or NULL with errno saying why. Format files end up in the
 * formats file, so neither may be larger than a rules file. */
static char *read_all(const char *path)
{
	char *buf;
	size_t len;
	return hs_read_file(path, HS_MAX_RULES_FILE_BYTES, &buf, &len) == HS_OK ? buf : NULL;
}

/* One "field:DECL;\toffset:N;\tsize:N;\tsigned:N;" line as "name: [type, size, signed]". */
static int field_yaml(const char *line, char *name, size_t name_cap, char *out, size_t out_cap)
{
	const char *d = strstr(line, "field:"), *semi, *sz = strstr(line, "size:"), *sg = strstr(line, "signed:");
	if (!d || !(semi = strchr(d, ';')) || !sz || !sg)
		return -1;
	d += 6;
	char decl[256];
	size_t n = (size_t)(semi - d);
	if (n >= sizeof decl)
		return -1;
	memcpy(decl, d, n);
	decl[n] = 0;
	while (n && isspace((unsigned char)decl[n - 1]))
		decl[--n] = 0;
	/* "char comm[16]": the array suffix belongs to the type, as the kernel keeps it. */
	char suffix[32] = "";
	if (n && decl[n - 1] == ']') {
		char *open = strrchr(decl, '[');
		if (!open || strlen(open) >= sizeof suffix)
			return -1;
		snprintf(suffix, sizeof suffix, "%s", open);
		*open = 0;
		n = strlen(decl);
	}
	size_t e = n;
	while (e && (isalnum((unsigned char)decl[e - 1]) || decl[e - 1] == '_'))
		e--;
	if (e == n || n - e >= name_cap)
		return -1;
	memcpy(name, decl + e, n - e);
	name[n - e] = 0;
	decl[e] = 0;
	size_t tl = strlen(decl);
	while (tl && isspace((unsigned char)decl[tl - 1]))
		decl[--tl] = 0;
	/* "const char *" keeps its space before the star, as the kernel compares it. */
	int w = snprintf(out, out_cap, "%s: [\"%s%s\", %ld, %ld]", name, decl, suffix, strtol(sz + 5, NULL, 10),
			 strtol(sg + 7, NULL, 10));
	return w < 0 || (size_t)w >= out_cap ? -1 : 0;
}

/* The fields of one format file as a flow mapping; common_* go to `common`
 * (once, from the first event) instead. */
static int event_yaml(const char *fmt, text *fields, text *common, int want_common)
{
	int first = 1, first_c = 1, rc = 0;
	const char *line = fmt;
	rc |= put(fields, "{ ");
	if (want_common)
		rc |= put(common, "{ ");
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		char one[512], name[128], item[512];
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (n < sizeof one) {
			memcpy(one, line, n);
			one[n] = 0;
			if (strstr(one, "field:") && field_yaml(one, name, sizeof name, item, sizeof item) == 0) {
				if (strncmp(name, "common_", 7) == 0) {
					if (want_common) {
						rc |= put(common, first_c ? "" : ", ");
						rc |= put(common, item);
						first_c = 0;
					}
				} else {
					rc |= put(fields, first ? "" : ", ");
					rc |= put(fields, item);
					first = 0;
				}
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	rc |= put(fields, first ? "}" : " }");
	if (want_common)
		rc |= put(common, " }");
	return rc;
}

static void show_diff(const char *want, const char *have)
{
	/* Line sets: what the kernel says that the file lacks, and the reverse. */
	const char *sides[2][2] = {{want, have}, {have, want}};
	const char *label[2] = {"kernel has, file lacks", "file has, kernel lacks"};
	for (int s = 0; s < 2; s++) {
		const char *a = sides[s][0], *b = sides[s][1];
		for (const char *l = a; *l;) {
			const char *nl = strchr(l, '\n');
			size_t n = nl ? (size_t)(nl - l) : strlen(l);
			int found = 0;
			for (const char *m = b; *m && !found;) {
				const char *ml = strchr(m, '\n');
				size_t mn = ml ? (size_t)(ml - m) : strlen(m);
				found = mn == n && memcmp(m, l, n) == 0;
				m = ml ? ml + 1 : m + mn;
			}
			if (!found && n && l[0] != '#')
				printf("%s: %.*s\n", label[s], (int)n, l);
			l = nl ? nl + 1 : l + n;
		}
	}
}

int main(int argc, char **argv)
{
	const char *catalog = NULL, *out = NULL, *check = NULL, *tracing = "/sys/kernel/tracing", *kernel = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return HS_EXIT_OK;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--check") && i + 1 < argc)
			check = argv[++i];
		else if (!strcmp(argv[i], "--tracing") && i + 1 < argc)
			tracing = argv[++i];
		else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
			kernel = argv[++i];
		else if (argv[i][0] != '-' && !catalog)
			catalog = argv[i];
		else {
			fprintf(stderr, "catalog-sync: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return HS_EXIT_USAGE;
		}
	}
	if (!catalog || (out && check)) {
		usage(stderr);
		return HS_EXIT_USAGE;
	}
	struct utsname u;
	if (!kernel)
		kernel = uname(&u) == 0 ? u.release : "unknown";

	int rc = HS_EXIT_USAGE;
	hs_diags *d = hs_diags_new();
	hs_ruleset *rs = NULL;
	text body = {0}, common = {0}, all = {0};
	char *have = NULL;
	if (!d)
		goto done;
	hs_status st = hs_rules_load(catalog, d, &rs);
	if (st != HS_OK || !rs || rs->is_profile) {
		hs_diags_render(d, stderr, HS_FMT_TEXT);
		fprintf(stderr, "catalog-sync: %s: %s\n", catalog,
			rs && rs->is_profile ? "a profile; give the Linux catalog" : "cannot be loaded");
		goto done;
	}
	size_t events = 0, missing = 0;
	int bad = 0, have_common = 0;
	text miss = {0};
	bad |= put(&miss, "");
	for (size_t p = 0; p < rs->n_providers; p++) {
		const hs_provider *pr = &rs->providers[p];
		if (pr->kind != HS_PKIND_FTRACE || !pr->system)
			continue;
		for (size_t e = 0; e < pr->n_events; e++) {
			const hs_cat_event *ev = &pr->events[e];
			char path[1024], line[512];
			snprintf(path, sizeof path, "%s/events/%s/%s/format", tracing, pr->system, ev->name);
			char *fmt = read_all(path);
			if (!fmt) {
				snprintf(line, sizeof line, "#   %s/%s (%s)\n", pr->system, ev->name, strerror(errno));
				bad |= put(&miss, line);
				missing++;
				continue;
			}
			snprintf(line, sizeof line, "    %s/%s: ", pr->system, ev->name);
			bad |= put(&body, line);
			bad |= event_yaml(fmt, &body, &common, !have_common);
			bad |= put(&body, "\n");
			have_common = 1;
			events++;
			free(fmt);
		}
	}
	if (!events) {
		fprintf(stderr, "catalog-sync: no event of %s has a format file under %s/events (not root, or not "
				"tracefs?)\n", catalog, tracing);
		free(miss.buf);
		goto done;
	}
	char head[1024];
	snprintf(head, sizeof head,
		 "# yaml-language-server: $schema=../../schemas/rules.schema.json\n"
		 "# The payload fields of the Linux catalog's events, as the kernel's format files\n"
		 "# declare them (name: [type, size, signed]). Written by tools/catalogsync:\n"
		 "#   catalog-sync rules/providers/linux.yaml -o rules/providers/linux-formats.yaml\n"
		 "# Do not edit by hand; run it again on a new kernel and read the diff.\n"
		 "schema_version: 1\n"
		 "kind: catalog\n"
		 "platform: linux\n"
		 "formats:\n"
		 "  kernel: \"%s\"\n"
		 "  common: ",
		 kernel);
	bad |= put(&all, head);
	bad |= put(&all, common.buf ? common.buf : "{}");
	bad |= put(&all, "\n  events:\n");
	bad |= put(&all, body.buf);
	if (missing) {
		bad |= put(&all, "# Not on this kernel (no format file):\n");
		bad |= put(&all, miss.buf);
	}
	free(miss.buf);
	if (bad) {
		fprintf(stderr, "catalog-sync: out of memory\n");
		goto done;
	}
	if (check) {
		if (!(have = read_all(check))) {
			fprintf(stderr, "catalog-sync: cannot read %s: %s\n", check, strerror(errno));
			goto done;
		}
		if (strcmp(have, all.buf) == 0) {
			printf("catalog-sync: %s matches this kernel (%s): %zu events%s\n", check, kernel, events,
			       missing ? ", some missing here" : "");
			rc = HS_EXIT_OK;
		} else {
			printf("catalog-sync: %s differs from what %s says (kernel %s):\n", check, tracing, kernel);
			show_diff(all.buf, have);
			rc = HS_EXIT_FINDINGS;
		}
		goto done;
	}
	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f || fputs(all.buf, f) < 0 || (out && fclose(f) != 0)) {
		fprintf(stderr, "catalog-sync: cannot write %s: %s\n", out ? out : "stdout", strerror(errno));
		goto done;
	}
	if (out)
		fprintf(stderr, "catalog-sync: wrote %s: %zu events, %zu not on this kernel (%s)\n", out, events, missing,
			kernel);
	rc = HS_EXIT_OK;
done:
	free(have);
	free(body.buf);
	free(common.buf);
	free(all.buf);
	hs_rules_free(rs);
	hs_diags_free(d);
	return rc;
}
