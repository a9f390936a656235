/* hs_sigcheck: checks a fault scenario's signature (tools/scenarios/signatures.yaml) against its traces. */
/*
 * usage: hs_sigcheck SIGNATURES SCENARIO --filtered FILTERED.dat [--full FULL.dat] [--vars FILE]
 *
 * A signature is a list of requirements; each is one event (system:name, an
 * optional ftrace filter expression, a minimum count) or `any_of` several.
 * ${name} in a filter or a description is replaced by the value the scenario
 * runner recorded in the vars file (name=value lines: the pids of the
 * children it started, the interface names, the port). Filters are compiled
 * against the trace's own event formats and evaluated with libtraceevent, so
 * they read like the rules' kernel filters ("common_pid == ${segv_pid} &&
 * sig == 11").
 *
 * Every requirement is counted in the filtered trace (the profile as it is)
 * and, when given, in the full trace (no whitelists) too. A requirement that
 * the filtered trace misses fails as a coverage bug in the rules; the full
 * count says whether the event happened at all (0 there: the scenario did not
 * produce it, or no session of the profile enables its system).
 *
 * Exit status: 0 every requirement met; 1 some missing from the filtered
 * trace although the full one has them or no session enables them (a
 * coverage bug in the rules); 3 missing from both although the full capture
 * enables them (the scenario did not happen as planned); 2 usage, I/O or an
 * invalid signatures file (a filter that does not compile, an unknown ${var}).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/diag.h"
#include "hindsight/exitcodes.h"
#include "hindsight/keys.h"
#include "hindsight/tracedat.h"
#include "hindsight/ynode.h"
#include "hindsight/arena.h"
#include "hindsight/strbuf.h"
#include "hindsight/text.h"

#define MAX_ALTS 8
#define MAX_REQS 64
#define MAX_VARS 64

typedef struct {
	char *system, *event; /* "signal", "signal_deliver" */
	char *filter;         /* expanded; NULL: every record of the event */
	char **fields;        /* the identifiers the filter names (checked: libtraceevent reads an unknown one as false) */
	size_t n_fields;
	bool fields_checked;
	long min;
	hs_pos pos;
	/* per trace: 0 filtered, 1 full */
	hs_tracedat_filter *f[2];
	hs_status st[2]; /* HS_OK, HS_ENOENT (event not in that trace) */
	unsigned long long count[2];
} alt;

typedef struct {
	char *what;
	alt alts[MAX_ALTS];
	size_t n_alts;
} requirement;

static struct {
	char *name[MAX_VARS], *value[MAX_VARS];
	size_t n;
} vars;

static const char *sig_path;
static int errors;

static void err_at(hs_pos pos, const char *fmt, ...) HS_PRINTF_FMT(2, 3);
static void err_at(hs_pos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%u:%u: error: ", pos.file ? pos.file : sig_path, pos.line, pos.col);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	errors++;
}

static int load_vars(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "hs_sigcheck: cannot read %s\n", path);
		return -1;
	}
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = 0;
		char *eq = strchr(line, '=');
		if (!eq || line[0] == '#' || vars.n == MAX_VARS)
			continue;
		*eq = 0;
		vars.name[vars.n] = strdup(line);
		vars.value[vars.n] = strdup(eq + 1);
		vars.n++;
	}
	fclose(f);
	return 0;
}

/* ${name} -> its value; a new string, or NULL (reported) for an unknown name. */
static char *expand(const char *s, hs_pos pos)
{
	hs_strbuf sb = {0};
	while (*s) {
		const char *open = strstr(s, "${");
		if (!open) {
			hs_sb_append(&sb, s);
			break;
		}
		hs_sb_appendn(&sb, s, (size_t)(open - s));
		const char *close = strchr(open, '}');
		if (!close) {
			err_at(pos, "unterminated ${ in '%s'", s);
			hs_sb_free(&sb);
			return NULL;
		}
		size_t n = (size_t)(close - open - 2);
		size_t i = 0;
		while (i < vars.n && (strlen(vars.name[i]) != n || strncmp(vars.name[i], open + 2, n) != 0))
			i++;
		if (i == vars.n) {
			err_at(pos, "${%.*s} is not set by the scenario runner (vars file)", (int)n, open + 2);
			hs_sb_free(&sb);
			return NULL;
		}
		hs_sb_append(&sb, vars.value[i]);
		s = close + 1;
	}
	char *out = hs_sb_take(&sb);
	return out ? out : strdup("");
}

/*
 * The file's mappings, one table each, so their keys are written down once
 * and the unknown-key and missing-key checks are the shared reader's. Every
 * key is HS_KEY_MANUAL: the values are read below with hs_sigcheck's own
 * wording, which run-linux.sh's logs and docs/scenarios.md show.
 */
#define SIG_KEY(n, f, d) {.name = n, .type = HS_KEY_STR, .flags = HS_KEY_MANUAL | (f), .doc = d}

static const hs_key root_keys[] = {
	SIG_KEY("version", HS_KEY_REQUIRED, "the format's version: 1"),
	{.name = "scenarios", .type = HS_KEY_MAP, .flags = HS_KEY_MANUAL, .doc = "scenario name -> its signature"},
	{0},
};
static const hs_keytable root_table = {"sig_file", "the signatures file", "", "", NULL, root_keys};

/* 'require' is required, but read by hand: one message covers absent, not a list and empty. */
static const hs_key scenario_keys[] = {
	SIG_KEY("description", 0, "one line: what the scenario does"),
	{.name = "require", .type = HS_KEY_LIST, .flags = HS_KEY_MANUAL | HS_KEY_REQUIRED,
	 .doc = "the requirements; a non-empty list"},
	{0},
};
static const hs_keytable scenario_table = {"sig_scenario", "a scenario", "", "", NULL, scenario_keys};

/* One event: a requirement's own keys, or an any_of entry's. */
#define SIG_EVENT_KEYS                                                                                           \
	SIG_KEY("event", HS_KEY_REQUIRED, "SYSTEM:NAME"),                                                           \
	SIG_KEY("filter", 0, "a libtraceevent filter over the event's fields; ${name} from the vars file"),        \
	SIG_KEY("min", 0, "the fewest records that meet it; a whole number >= 1, default 1")
#define SIG_WHAT SIG_KEY("what", HS_KEY_REQUIRED, "one line, printed; ${name} from the vars file")

static const hs_key entry_keys[] = {SIG_EVENT_KEYS, {0}};
static const hs_keytable entry_table = {"sig_any_of_entry", "an any_of entry", "", "", NULL, entry_keys};
/* A requirement has one of two shapes, so two tables with the same `what`. */
static const hs_key req_event_keys[] = {SIG_WHAT, SIG_EVENT_KEYS, {0}};
static const hs_keytable req_event_table = {"sig_requirement", "a requirement", "", "", NULL, req_event_keys};
static const hs_key req_any_keys[] = {
	SIG_WHAT,
	{.name = "any_of", .type = HS_KEY_LIST, .flags = HS_KEY_MANUAL, .sub = &entry_table,
	 .doc = "several events; one of them is enough"},
	{0},
};
static const hs_keytable req_any_table = {"sig_requirement_any_of", "a requirement", "", "", NULL, req_any_keys};

/*
 * The shared reader reports into keys.d; these print what it reported in
 * hs_sigcheck's format (file:line:col: error: ..., no hints, counted in
 * `errors`), so the output stays the one run-linux.sh's logs have always had.
 */
static struct {
	hs_keyread r;
	size_t shown; /* keys.r.d's diagnostics printed so far */
} keys;

/* Prints what the shared reader added since the last call; a missing key as "missing 'name'". */
static void keys_report(const char *missing)
{
	for (; keys.shown < hs_diags_count(keys.r.d); keys.shown++) {
		const hs_diag *g = hs_diags_at(keys.r.d, keys.shown);
		if (g->code == HS_D_MISSING_KEY && missing)
			err_at(g->pos, "missing '%s'", missing);
		else
			err_at(g->pos, "%s", g->message);
	}
	if (keys.r.oom) {
		fprintf(stderr, "hs_sigcheck: out of memory\n");
		errors++;
		keys.r.oom = false;
	}
}

/* Unknown keys are errors: a misspelt `filter` must not silently match everything. */
static void check_keys(const hs_ynode *map, const hs_keytable *t)
{
	hs_keys_check_unknown(&keys.r, map, t);
	keys_report(NULL);
}

static const char *scalar(const hs_ynode *map, const hs_keytable *t, const char *key)
{
	const hs_ynode *n = hs_keys_get(&keys.r, map, t, key);
	keys_report(key);
	if (!n)
		return NULL;
	if (n->type != HS_Y_SCALAR) {
		err_at(n->pos, "'%s' must be a scalar, not %s", key, hs_ynode_type_name(n));
		return NULL;
	}
	return n->str;
}

/* The field names a filter uses: identifiers outside quotes (numbers start with a digit). */
static void collect_fields(alt *a)
{
	const char *p = a->filter;
	while (*p) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else if (isalpha((unsigned char)*p) || *p == '_') {
			const char *start = p;
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			char **f = realloc(a->fields, (a->n_fields + 1) * sizeof(*f));
			if (!f)
				return;
			a->fields = f;
			a->fields[a->n_fields++] = strndup(start, (size_t)(p - start));
		} else if (isdigit((unsigned char)*p)) {
			while (isalnum((unsigned char)*p))
				p++;
		} else {
			p++;
		}
	}
}

static bool is_common_field(const char *f)
{
	return !strcmp(f, "common_pid") || !strcmp(f, "common_type") || !strcmp(f, "common_flags") ||
	       !strcmp(f, "common_preempt_count");
}

/* Where the running kernel has the event's format file, the fields are checked against it at once. */
static void check_fields_live(alt *a)
{
	char path[512], line[512];
	snprintf(path, sizeof path, "/sys/kernel/tracing/events/%s/%s/format", a->system, a->event);
	FILE *f = fopen(path, "r");
	if (!f)
		return; /* another machine: checked on the event's first record instead */
	char *text = NULL;
	size_t len = 0;
	while (fgets(line, sizeof line, f)) {
		char *fp = strstr(line, "field:");
		char *semi = fp ? strchr(fp, ';') : NULL;
		if (!semi)
			continue;
		/* "field:unsigned long sa_handler;", "field:char comm[16];", "field:__data_loc char[] msg;":
		 * the name is the last identifier, before an array size. */
		char *end = semi;
		if (end > fp && end[-1] == ']')
			while (end > fp && *end != '[')
				end--;
		char *name = end;
		while (name > fp && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
			name--;
		char *t = realloc(text, len + (size_t)(end - name) + 3);
		if (!t)
			break;
		text = t;
		text[len++] = ' ';
		memcpy(text + len, name, (size_t)(end - name));
		len += (size_t)(end - name);
		text[len++] = ' ';
		text[len] = 0;
	}
	fclose(f);
	for (size_t i = 0; text && i < a->n_fields; i++) {
		char key[160];
		snprintf(key, sizeof key, " %s ", a->fields[i]);
		if (!strstr(text, key))
			err_at(a->pos, "the filter names '%s', a field %s:%s does not have (see %s)", a->fields[i], a->system,
			       a->event, path);
	}
	if (text)
		a->fields_checked = true;
	free(text);
}

static void load_alt(const hs_ynode *n, alt *a, bool entry)
{
	memset(a, 0, sizeof(*a));
	a->pos = n->pos;
	a->min = 1;
	if (n->type != HS_Y_MAP) {
		err_at(n->pos, "an event entry must be a mapping");
		return;
	}
	/* A requirement's own keys were checked with the requirement's table. */
	const hs_keytable *t = entry ? &entry_table : &req_event_table;
	if (entry)
		check_keys(n, t);
	const char *ev = scalar(n, t, "event"), *filter = scalar(n, t, "filter"), *min = scalar(n, t, "min");
	if (ev) {
		const char *colon = strchr(ev, ':');
		if (!colon || colon == ev || !colon[1]) {
			err_at(n->pos, "event '%s' must be SYSTEM:NAME", ev);
		} else {
			a->system = strndup(ev, (size_t)(colon - ev));
			a->event = strdup(colon + 1);
		}
	}
	if (filter)
		a->filter = expand(filter, hs_ymap_get(n, "filter")->pos);
	if (a->filter)
		collect_fields(a);
	if (a->filter && a->system)
		check_fields_live(a);
	if (min) {
		char *end;
		a->min = strtol(min, &end, 10);
		if (*end || a->min < 1)
			err_at(hs_ymap_get(n, "min")->pos, "min must be a whole number >= 1, not '%s'", min);
	}
}

static size_t load_scenario(const hs_ynode *sc, requirement *reqs)
{
	check_keys(sc, &scenario_table);
	const hs_ynode *req = hs_ymap_get(sc, "require");
	if (!req || req->type != HS_Y_SEQ || !req->n) {
		err_at(sc->pos, "a scenario needs a non-empty 'require' list");
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < req->n && n < MAX_REQS; i++) {
		const hs_ynode *r = req->items[i];
		if (r->type != HS_Y_MAP) {
			err_at(r->pos, "a requirement must be a mapping");
			continue;
		}
		requirement *q = &reqs[n++];
		memset(q, 0, sizeof(*q));
		const hs_keytable *t = hs_ymap_get(r, "any_of") ? &req_any_table : &req_event_table;
		check_keys(r, t);
		const char *what = scalar(r, t, "what");
		q->what = what ? expand(what, r->pos) : strdup("?");
		const hs_ynode *any = hs_ymap_get(r, "any_of");
		if (any && hs_ymap_get(r, "event"))
			err_at(r->pos, "give either 'event' or 'any_of', not both");
		if (any) {
			if (any->type != HS_Y_SEQ || !any->n)
				err_at(any->pos, "'any_of' must be a non-empty list");
			else
				for (size_t k = 0; k < any->n && k < MAX_ALTS; k++)
					load_alt(any->items[k], &q->alts[q->n_alts++], true);
		} else {
			load_alt(r, &q->alts[q->n_alts++], false);
		}
	}
	return n;
}

typedef struct {
	requirement *reqs;
	size_t n;
	int which; /* 0 filtered, 1 full */
} walk_ctx;

static int count_record(const hs_tracedat_record *r, void *vctx)
{
	walk_ctx *c = vctx;
	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->reqs[i].n_alts; k++) {
			alt *a = &c->reqs[i].alts[k];
			if (a->st[c->which] != HS_OK || strcmp(r->system, a->system) || strcmp(r->name, a->event))
				continue;
			if (!a->fields_checked) {
				a->fields_checked = true;
				for (size_t f = 0; f < a->n_fields; f++) {
					int64_t v;
					char buf[8];
					if (!is_common_field(a->fields[f]) && !hs_tracedat_field_int(r, a->fields[f], &v) &&
					    !hs_tracedat_field_str(r, a->fields[f], buf, sizeof buf))
						err_at(a->pos, "the filter names '%s', a field %s:%s does not have", a->fields[f],
						       a->system, a->event);
				}
			}
			if (!a->f[c->which] || hs_tracedat_filter_match(a->f[c->which], r))
				a->count[c->which]++;
		}
	return 0;
}

/* Counts every alternative in one trace. -1 on a file or filter error. */
static int count_in(const char *path, requirement *reqs, size_t n, int which)
{
	hs_tracedat *td = NULL;
	hs_status st = hs_tracedat_open(path, &td);
	int rc = 0;
	if (st != HS_OK) {
		fprintf(stderr, "hs_sigcheck: cannot read %s (%s)\n", path, hs_strerror(st));
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < reqs[i].n_alts; k++) {
			alt *a = &reqs[i].alts[k];
			a->st[which] = HS_OK;
			if (!a->filter) {
				/* Without a filter only the event's presence in the file matters. */
				hs_tracedat_filter *probe = NULL;
				a->st[which] = hs_tracedat_filter_new(td, a->system, a->event, "common_pid >= 0", &probe);
				hs_tracedat_filter_free(probe);
			} else {
				a->st[which] = hs_tracedat_filter_new(td, a->system, a->event, a->filter, &a->f[which]);
			}
			if (a->st[which] != HS_OK && a->st[which] != HS_ENOENT) {
				err_at(a->pos, "filter '%s' for %s:%s does not compile against %s", a->filter ? a->filter : "",
				       a->system, a->event, path);
				rc = -1;
			}
		}
	if (rc == 0) {
		walk_ctx c = {reqs, n, which};
		if (hs_tracedat_foreach(td, count_record, &c) != HS_OK) {
			fprintf(stderr, "hs_sigcheck: cannot walk %s\n", path);
			rc = -1;
		}
	}
	for (size_t i = 0; td && i < hs_tracedat_problem_count(td); i++) {
		char text[HS_PROBLEM_TEXT_MAX];
		fprintf(stderr, "hs_sigcheck: %s: %s\n", path,
			hs_problem_format(hs_tracedat_problem_at(td, i), text, sizeof text));
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < reqs[i].n_alts; k++) {
			hs_tracedat_filter_free(reqs[i].alts[k].f[which]);
			reqs[i].alts[k].f[which] = NULL;
		}
out:
	hs_tracedat_close(td);
	return rc;
}

static void describe(hs_strbuf *sb, const alt *a)
{
	hs_sb_printf(sb, "%s:%s", a->system, a->event);
	if (a->filter)
		hs_sb_printf(sb, " [%s]", a->filter);
	if (a->min > 1)
		hs_sb_printf(sb, " (at least %ld)", a->min);
}

static void usage(FILE *f)
{
	fputs("usage: hs_sigcheck SIGNATURES SCENARIO --filtered FILTERED.dat [--full FULL.dat] [--vars FILE]\n"
	      "Exit status: 0 signature present, 1 missing (a coverage bug in the rules), 2 usage or I/O,\n"
	      "3 missing from the full capture too (the scenario did not produce it).\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *scenario = NULL, *filtered = NULL, *full = NULL, *vars_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--filtered") && i + 1 < argc)
			filtered = argv[++i];
		else if (!strcmp(argv[i], "--full") && i + 1 < argc)
			full = argv[++i];
		else if (!strcmp(argv[i], "--vars") && i + 1 < argc)
			vars_path = argv[++i];
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return HS_EXIT_OK;
		} else if (argv[i][0] == '-') {
			usage(stderr);
			return HS_EXIT_USAGE;
		} else if (!sig_path)
			sig_path = argv[i];
		else if (!scenario)
			scenario = argv[i];
		else {
			usage(stderr);
			return HS_EXIT_USAGE;
		}
	}
	if (!sig_path || !scenario || !filtered) {
		usage(stderr);
		return HS_EXIT_USAGE;
	}
	if (vars_path && load_vars(vars_path))
		return HS_EXIT_USAGE;

	int rc = HS_EXIT_USAGE;
	char *text = NULL;
	size_t len = 0;
	hs_arena arena = {0};
	hs_diags *d = hs_diags_new();
	static requirement reqs[MAX_REQS];
	size_t n = 0;
	if (!d || hs_read_file(sig_path, 1 << 20, &text, &len) != HS_OK) {
		fprintf(stderr, "hs_sigcheck: cannot read %s\n", sig_path);
		goto out;
	}
	bool syntax_error = false;
	const char *file = hs_diags_add_source(d, sig_path, text, len);
	hs_ynode *root = hs_yaml_parse(&arena, file, text, len, d, &syntax_error);
	if (syntax_error || hs_diags_errors(d) || !root || root->type != HS_Y_MAP) {
		hs_diags_render(d, stderr, HS_FMT_TEXT);
		fprintf(stderr, "hs_sigcheck: %s is not a signatures file (a mapping with 'scenarios:')\n", sig_path);
		goto out;
	}
	keys.r = (hs_keyread){.d = hs_diags_new(), .arena = &arena};
	if (!keys.r.d) {
		fprintf(stderr, "hs_sigcheck: out of memory\n");
		goto out;
	}
	check_keys(root, &root_table);
	const char *version = scalar(root, &root_table, "version");
	if (version && strcmp(version, "1"))
		err_at(hs_ymap_get(root, "version")->pos, "this hs_sigcheck reads version 1, not %s", version);
	if (errors)
		goto out;
	const hs_ynode *all = hs_ymap_get(root, "scenarios");
	const hs_ynode *sc = all ? hs_ymap_get(all, scenario) : NULL;
	if (!sc || sc->type != HS_Y_MAP) {
		fprintf(stderr, "hs_sigcheck: %s has no scenario '%s'\n", sig_path, scenario);
		goto out;
	}
	n = load_scenario(sc, reqs);
	if (errors || !n)
		goto out;
	if (count_in(filtered, reqs, n, 0) || (full && count_in(full, reqs, n, 1)) || errors)
		goto out;

	printf("signature of %s (%s):\n", scenario, sig_path);
	size_t coverage = 0, not_produced = 0;
	for (size_t i = 0; i < n; i++) {
		requirement *q = &reqs[i];
		const alt *hit = NULL;
		bool in_full = false, enabled_in_full = false;
		for (size_t k = 0; k < q->n_alts; k++) {
			const alt *a = &q->alts[k];
			if (!hit && a->st[0] == HS_OK && a->count[0] >= (unsigned long long)a->min)
				hit = a;
			in_full |= a->st[1] == HS_OK && a->count[1] >= (unsigned long long)a->min;
			enabled_in_full |= a->st[1] == HS_OK;
		}
		hs_strbuf sb = {0};
		if (hit) {
			describe(&sb, hit);
			printf("  ok    %s: %s: %llu in the filtered trace", q->what, hs_sb_cstr(&sb), hit->count[0]);
			if (full)
				printf(", %llu in the full one", hit->count[1]);
			putchar('\n');
			hs_sb_free(&sb);
			continue;
		}
		/* Missing. The full capture tells a rules bug from a scenario that did not happen. */
		if (!full) {
			coverage++;
			printf("  FAIL  %s: coverage bug in the rules (or the trigger did not happen: check with --full): "
			       "the filtered trace lacks it:\n", q->what);
		} else if (in_full) {
			coverage++;
			printf("  FAIL  %s: coverage bug in the rules: the full capture has it, the filtered trace does not:\n",
			       q->what);
		} else if (!enabled_in_full) {
			coverage++;
			printf("  FAIL  %s: coverage bug in the rules: no session of the profile enables it at all:\n", q->what);
		} else {
			not_produced++;
			printf("  FAIL  %s: the scenario did not produce it (the full capture lacks it too), "
			       "so this is not a rules bug:\n", q->what);
		}
		for (size_t k = 0; k < q->n_alts; k++) {
			const alt *a = &q->alts[k];
			hs_sb_free(&sb);
			describe(&sb, a);
			printf("        %s: ", hs_sb_cstr(&sb));
			if (a->st[0] == HS_ENOENT)
				printf("not enabled in the filtered capture");
			else
				printf("%llu in the filtered trace", a->count[0]);
			if (full) {
				if (a->st[1] == HS_ENOENT)
					printf(", not enabled in the full capture either (the profile's session has no such system)");
				else
					printf(", %llu in the full capture", a->count[1]);
			}
			putchar('\n');
		}
		hs_sb_free(&sb);
	}
	if (coverage)
		printf("signature of %s: FAILED: coverage bug in the rules: %zu of %zu requirement(s) missing from the "
		       "filtered trace%s\n",
		       scenario, coverage, n, not_produced ? " (and the scenario missed others)" : "");
	else if (not_produced)
		printf("signature of %s: FAILED: the scenario did not produce %zu of %zu requirement(s)\n", scenario,
		       not_produced, n);
	else
		printf("signature of %s: OK, %zu requirement(s) met\n", scenario, n);
	rc = coverage ? HS_EXIT_FINDINGS : not_produced ? HS_EXIT_SCENARIO_FAILED : HS_EXIT_OK;
out:
	for (size_t i = 0; i < n; i++) {
		free(reqs[i].what);
		for (size_t k = 0; k < reqs[i].n_alts; k++) {
			free(reqs[i].alts[k].system);
			free(reqs[i].alts[k].event);
			free(reqs[i].alts[k].filter);
			for (size_t f = 0; f < reqs[i].alts[k].n_fields; f++)
				free(reqs[i].alts[k].fields[f]);
			free(reqs[i].alts[k].fields);
		}
	}
	for (size_t i = 0; i < vars.n; i++) {
		free(vars.name[i]);
		free(vars.value[i]);
	}
	hs_arena_free(&arena);
	hs_diags_free(d);
	hs_diags_free(keys.r.d);
	free(text);
	return rc;
}
