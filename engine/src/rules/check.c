/* rules/check.c: semantic checks over the loaded model (catalogs, sessions, limits, platforms); a profile's triggers are rules/check_triggers.c's. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hindsight/limits.h"
#include "rules/rules_int.h"
#include "rules/ynode.h"
#include "util/regex.h"
#include "util/strbuf.h"
#include "util/text.h"

typedef hs_checker checker;

/* ---- catalogs ---- */

/* Is `w` (len n) a payload field of any ftrace catalog event, or an event
 * name or its tail after a '_' (stories say "until direct_reclaim_end")? */
static bool story_word_known(const hs_ruleset *rs, const char *w, size_t n)
{
	for (size_t i = 0; i < rs->n_common_fields; i++)
		if (strlen(rs->common_fields[i].name) == n && !strncmp(rs->common_fields[i].name, w, n))
			return true;
	for (size_t i = 0; i < rs->n_providers; i++) {
		const hs_provider *p = &rs->providers[i];
		if (p->kind != HS_PKIND_FTRACE)
			continue;
		for (size_t e = 0; e < p->n_events; e++) {
			const hs_cat_event *ev = &p->events[e];
			size_t len = ev->name ? strlen(ev->name) : 0;
			if (len >= n && !strncmp(ev->name + len - n, w, n) && (len == n || ev->name[len - n - 1] == '_'))
				return true;
			for (size_t f = 0; f < ev->n_fields; f++)
				if (strlen(ev->fields[f].name) == n && !strncmp(ev->fields[f].name, w, n))
					return true;
		}
	}
	return false;
}

/* A story that names a payload field must name one that exists: words like
 * field names (lower_snake_case) that no event of the catalogs has. Words after
 * '.' or '/' are sysctl names and paths, not fields. */
static void check_story_fields(checker *C, const hs_cat_event *ev)
{
	const char *s = ev->story;
	if (!s || !ev->has_fields)
		return;
	for (size_t i = 0; s[i];) {
		if (!islower((unsigned char)s[i]) || (i && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_'))) {
			i++;
			continue;
		}
		size_t j = i;
		bool snake = false;
		while (islower((unsigned char)s[j]) || isdigit((unsigned char)s[j]) || s[j] == '_') {
			snake |= s[j] == '_' && j > i && isalnum((unsigned char)s[j + 1]);
			j++;
		}
		bool quoted_path = i && (s[i - 1] == '.' || s[i - 1] == '/');
		if (snake && !quoted_path && !story_word_known(C->rs, s + i, j - i)) {
			hs_diag_add(C->d, HS_D_STORY_FIELD, ev->pos, "name the field as the event's format file does",
				    "the story of '%s' names '%.*s', which no catalog event has as a field", ev->name,
				    (int)(j - i), s + i);
		}
		i = j;
	}
}

static void check_catalogs(checker *C)
{
	hs_ruleset *rs = C->rs;
	for (size_t i = 0; i < rs->n_providers; i++)
		for (size_t e = 0; rs->providers[i].kind == HS_PKIND_FTRACE && e < rs->providers[i].n_events; e++)
			check_story_fields(C, &rs->providers[i].events[e]);
	for (size_t i = 0; i < rs->n_providers; i++) {
		hs_provider *p = &rs->providers[i];
		if (p->platform == HS_PLATFORM_LINUX && p->kind != HS_PKIND_FTRACE)
			hs_diag_add(C->d, HS_D_PLATFORM, p->pos, "Linux providers are ftrace event systems",
				    "a %s provider cannot be in a linux catalog", hs_provider_kind_name(p->kind));
		if (p->platform == HS_PLATFORM_WINDOWS && p->kind == HS_PKIND_FTRACE)
			hs_diag_add(C->d, HS_D_PLATFORM, p->pos, NULL, "an ftrace provider cannot be in a windows catalog");
		for (size_t j = 0; j < i; j++) {
			const hs_provider *q = &rs->providers[j];
			if (p->name && q->name && strcmp(p->name, q->name) == 0)
				hs_diag_add(C->d, HS_D_DUP_PROVIDER, p->pos, NULL,
					    "provider '%s' is already defined at %s:%u", p->name, q->pos.file,
					    q->pos.line);
			else if (p->has_guid && q->has_guid && memcmp(&p->guid, &q->guid, sizeof p->guid) == 0) {
				char g[37];
				hs_guid_format(&p->guid, g);
				hs_diag_add(C->d, HS_D_DUP_PROVIDER, p->guid_pos, NULL,
					    "GUID %s is already used by '%s' (%s:%u)", g, q->name ? q->name : "?",
					    q->pos.file, q->pos.line);
			}
		}
		for (size_t k = 0; k < p->n_keywords; k++) {
			const hs_keyword *kw = &p->keywords[k];
			if (kw->mask >> 48)
				hs_diag_add(C->d, HS_D_CHANNEL_BITS, kw->pos,
					    "bits 48-63 select channels (Admin, Operational, ...), not event groups",
					    "keyword '%s' (0x%llx) sets bits reserved for channels", kw->name,
					    (unsigned long long)kw->mask);
			for (size_t m = 0; m < k; m++)
				if (strcmp(p->keywords[m].name, kw->name) == 0)
					hs_diag_add(C->d, HS_D_DUP_KEY, kw->pos, NULL, "keyword '%s' is defined twice",
						    kw->name);
		}
		for (size_t e = 0; e < p->n_events; e++) {
			const hs_cat_event *ev = &p->events[e];
			for (size_t f = 0; f < e; f++) {
				const hs_cat_event *o = &p->events[f];
				bool dup = p->kind == HS_PKIND_FTRACE
						   ? (ev->name && o->name && strcmp(ev->name, o->name) == 0)
						   : (ev->id >= 0 && ev->id == o->id &&
						      (p->kind != HS_PKIND_SYSTEM ||
						       memcmp(&ev->classic_guid, &o->classic_guid, sizeof(hs_guid)) == 0));
				if (dup) {
					if (ev->id >= 0)
						hs_diag_add(C->d, HS_D_DUP_ID, ev->pos, NULL,
							    "event id %d of '%s' is already listed at line %u", ev->id,
							    p->name ? p->name : "?", o->pos.line);
					else
						hs_diag_add(C->d, HS_D_DUP_ID, ev->pos, NULL,
							    "event '%s' of '%s' is already listed at line %u", ev->name,
							    p->name ? p->name : "?", o->pos.line);
					break;
				}
			}
			for (size_t k = 0; k < ev->n_keywords; k++)
				if (!hs_provider_find_keyword(p, ev->keywords[k]))
					hs_diag_add(C->d, HS_D_UNKNOWN_KEYWORD, ev->keyword_pos[k], NULL,
						    "keyword '%s' is not defined for provider '%s'", ev->keywords[k],
						    p->name ? p->name : "?");
			if (p->kind == HS_PKIND_SYSTEM && !ev->classic_guid_given)
				hs_diag_add(C->d, HS_D_KIND_KEY, ev->pos,
					    "system providers emit classic events: give the event's classic GUID",
					    "an event of a system provider needs 'classic_guid'");
		}
	}
}

/* ---- profiles ---- */

static const char *const windows_clocks[] = {"qpc", "system", "cycle", NULL};
/* trace_clock values of current kernels (kernel/trace/trace.c). */
static const char *const linux_clocks[] = {"local", "global", "counter", "uptime", "perf", "mono",
					   "mono_raw", "boot", "tai", "x86-tsc", NULL};

static bool in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

static bool output_name_ok(const char *s)
{
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (const char *p = s; *p; p++)
		if (*p == '/' || *p == '\\' || *p == ':' || (unsigned char)*p < 0x20)
			return false;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void check_output(checker *C, const char *name, hs_pos pos, const char *what)
{
	if (name && !output_name_ok(name))
		hs_diag_add(C->d, HS_D_OUTPUT, pos, "write a plain file name; the engine chooses the run folder",
			    "%s '%s' is not a plain file name inside the run folder", what, name);
}

static bool linux_instance_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > HS_LINUX_MAX_INSTANCE_CHARS)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.'))
			return false;
	}
	return s[0] != '.';
}

static void check_session_shape(checker *C, hs_platform plat, const hs_session *s)
{
	bool win = plat == HS_PLATFORM_WINDOWS;
	const char *pname = hs_platform_name(plat);
	if (s->logger_name && !win && !linux_instance_ok(s->logger_name))
		hs_diag_add(C->d, HS_D_PLATFORM, s->logger_pos, "use 1 to 64 letters, digits, '_', '-' or '.'",
			    "'%s' is not a valid tracefs instance name", s->logger_name);
	if (s->clock) {
		if (!in_list(s->clock, win ? windows_clocks : linux_clocks))
			hs_diag_add(C->d, HS_D_PLATFORM, s->clock_pos,
				    win ? "windows clocks: qpc, system, cycle" : "linux clocks: mono, local, global, boot, ...",
				    "clock '%s' is not available on %s", s->clock, pname);
	}
	if (!win) {
		if (s->min_buffers)
			hs_diag_add(C->d, HS_D_PLATFORM, s->min_buffers_pos, "size linux rings with buffer_size_kb or ring_mb",
				    "'min_buffers' is an ETW setting; it has no meaning on linux");
		if (s->max_buffers)
			hs_diag_add(C->d, HS_D_PLATFORM, s->max_buffers_pos, "size linux rings with buffer_size_kb or ring_mb",
				    "'max_buffers' is an ETW setting; it has no meaning on linux");
	} else if (s->has_call_graph) {
		hs_diag_add(C->d, HS_D_PLATFORM, s->call_graph_pos, "use 'stacks' on the sampled provider",
			    "'call_graph' is a perf setting; it has no meaning on windows");
	}

	/* Sizes. Windows sessions need the ETW buffer size; file and sampling
	 * sessions their buffer counts; buffering sessions derive the count.
	 * Which apply depends on the mode: without a valid one, say nothing. */
	if (!s->has_mode) {
		/* the mode's own diagnostic is enough */
	} else if (win) {
		if (!s->buffer_size_kb)
			hs_diag_add(C->d, HS_D_PLATFORM_REQUIRED, s->pos, NULL,
				    "windows session '%s' needs 'buffer_size_kb'", s->name ? s->name : "?");
		else if (s->buffer_size_kb < HS_ETW_MIN_BUFFER_KB || s->buffer_size_kb > HS_ETW_MAX_BUFFER_KB)
			hs_diag_add(C->d, HS_D_BUFFER_LIMIT, s->buffer_size_pos, NULL,
				    "ETW buffers are %d..%d KB; %llu is outside", HS_ETW_MIN_BUFFER_KB,
				    HS_ETW_MAX_BUFFER_KB, (unsigned long long)s->buffer_size_kb);
		if (s->mode == HS_MODE_BUFFERING) {
			if (s->min_buffers || s->max_buffers)
				hs_diag_add(C->d, HS_D_BUFFER_LIMIT,
					    s->min_buffers ? s->min_buffers_pos : s->max_buffers_pos,
					    "drop min_buffers/max_buffers; they are ring_mb / buffer_size_kb",
					    "a buffering session's buffer count comes from ring_mb");
		} else {
			if (!s->min_buffers)
				hs_diag_add(C->d, HS_D_PLATFORM_REQUIRED, s->pos, NULL,
					    "windows %s session '%s' needs 'min_buffers'", hs_mode_name(s->mode),
					    s->name ? s->name : "?");
			if (!s->max_buffers)
				hs_diag_add(C->d, HS_D_PLATFORM_REQUIRED, s->pos, NULL,
					    "windows %s session '%s' needs 'max_buffers'", hs_mode_name(s->mode),
					    s->name ? s->name : "?");
			if (s->min_buffers && s->max_buffers && s->min_buffers > s->max_buffers)
				hs_diag_add(C->d, HS_D_BUFFER_LIMIT, s->max_buffers_pos, NULL,
					    "max_buffers (%llu) is less than min_buffers (%llu)",
					    (unsigned long long)s->max_buffers, (unsigned long long)s->min_buffers);
		}
	} else {
		if (s->mode != HS_MODE_BUFFERING && !s->buffer_size_kb)
			hs_diag_add(C->d, HS_D_PLATFORM_REQUIRED, s->pos, "the per-CPU tracefs ring size",
				    "linux %s session '%s' needs 'buffer_size_kb'", hs_mode_name(s->mode),
				    s->name ? s->name : "?");
		if (s->buffer_size_kb && s->buffer_size_kb < HS_LINUX_MIN_BUFFER_KB)
			hs_diag_add(C->d, HS_D_BUFFER_LIMIT, s->buffer_size_pos, NULL,
				    "a tracefs ring is at least %d KB per CPU", HS_LINUX_MIN_BUFFER_KB);
		if (s->buffer_size_kb > (uint64_t)HS_MAX_RING_MB * 1024)
			hs_diag_add(C->d, HS_D_RING_SIZE, s->buffer_size_pos, NULL,
				    "buffer_size_kb %llu is more than %d MB per CPU", (unsigned long long)s->buffer_size_kb,
				    HS_MAX_RING_MB);
		if (s->mode == HS_MODE_BUFFERING && s->buffer_size_kb)
			hs_diag_add(C->d, HS_D_BUFFER_LIMIT, s->buffer_size_pos, "size the ring with ring_mb only",
				    "on linux a buffering session's per-CPU size comes from ring_mb");
	}
	if (s->ring_mb > HS_MAX_RING_MB)
		hs_diag_add(C->d, HS_D_RING_SIZE, s->ring_pos, "rings live in unswappable kernel memory",
			    "ring_mb %llu is more than the %d MB any machine we target can pin",
			    (unsigned long long)s->ring_mb, HS_MAX_RING_MB);
	else if (win && s->ring_mb && s->buffer_size_kb >= HS_ETW_MIN_BUFFER_KB &&
		 s->buffer_size_kb <= HS_ETW_MAX_BUFFER_KB && s->ring_mb * 1024 < 2 * s->buffer_size_kb)
		hs_diag_add(C->d, HS_D_RING_SIZE, s->ring_pos, NULL,
			    "ring_mb %llu holds fewer than two %llu KB buffers", (unsigned long long)s->ring_mb,
			    (unsigned long long)s->buffer_size_kb);
	if (s->max_file_mb > HS_MAX_FILE_MB)
		hs_diag_add(C->d, HS_D_RING_SIZE, s->max_file_pos, NULL, "max_file_mb %llu is more than %d MB",
			    (unsigned long long)s->max_file_mb, HS_MAX_FILE_MB);
	if (s->sample_hz) {
		uint64_t lo = win ? HS_ETW_MIN_SAMPLE_HZ : 1, hi = win ? HS_ETW_MAX_SAMPLE_HZ : HS_LINUX_MAX_SAMPLE_HZ;
		if (s->sample_hz < lo || s->sample_hz > hi)
			hs_diag_add(C->d, HS_D_SAMPLE_RATE, s->sample_pos, NULL,
				    "sample_hz %llu is outside %llu..%llu, what %s can sample at",
				    (unsigned long long)s->sample_hz, (unsigned long long)lo, (unsigned long long)hi, pname);
	}
	check_output(C, s->output, s->output_pos, "output");
	if (s->output && output_name_ok(s->output)) {
		const char *ext = win ? ".etl" : (s->mode == HS_MODE_SAMPLING ? ".data" : ".dat");
		if (!ends_with(s->output, ext))
			hs_diag_add(C->d, HS_D_OUTPUT_EXT, s->output_pos, NULL,
				    "'%s' does not end in %s, the format this session writes", s->output, ext);
	}
}

/* Resolves one session provider entry to catalog providers. */
static void select_providers(checker *C, hs_platform plat, const hs_session_provider *sp, hs_selection *sel)
{
	hs_ruleset *rs = C->rs;
	sel->providers = hs_arena_alloc(C->arena, (rs->n_providers + 1) * sizeof(*sel->providers));
	if (!sel->providers)
		return;
	if (sp->provider) {
		const hs_provider *p = hs_rules_find_provider(rs, sp->provider);
		if (!p) {
			const char **names = hs_arena_alloc(C->arena, (rs->n_providers + 1) * sizeof(char *));
			size_t k = 0;
			for (size_t i = 0; names && i < rs->n_providers; i++)
				if (rs->providers[i].name)
					names[k++] = rs->providers[i].name;
			const char *near = names ? hs_closest(sp->provider, names) : NULL;
			char hint[200];
			if (near)
				snprintf(hint, sizeof hint, "did you mean '%s'?", near);
			hs_diag_add(C->d, HS_D_UNKNOWN_PROVIDER, sp->provider_pos,
				    near ? hint : "add it to a catalog this profile includes",
				    "no included catalog defines provider '%s'", sp->provider);
			return;
		}
		if (p->platform != plat) {
			hs_diag_add(C->d, HS_D_PLATFORM, sp->provider_pos, NULL,
				    "provider '%s' is a %s provider, used in a %s session", sp->provider,
				    hs_platform_name(p->platform), hs_platform_name(plat));
			return;
		}
		sel->providers[sel->n++] = p;
		return;
	}
	if (!sp->match)
		return;
	char err[256];
	size_t off = 0;
	hs_regex *re = NULL;
	if (hs_regex_compile(sp->match, &re, err, sizeof err, &off) != HS_OK) {
		hs_pos at = sp->match_pos;
		if (sp->match_node)
			at.col = hs_ynode_col_of(sp->match_node, off);
		hs_diag_add(C->d, HS_D_REGEX, at, NULL, "pattern does not compile at offset %zu: %s", off, err);
		return;
	}
	for (size_t i = 0; i < rs->n_providers; i++) {
		const hs_provider *p = &rs->providers[i];
		if (p->name && p->platform == plat && hs_regex_match(re, p->name))
			sel->providers[sel->n++] = p;
	}
	hs_regex_free(re);
	if (sel->n == 0)
		hs_diag_add(C->d, HS_D_MATCH_NONE, sp->match_pos, "the pattern is matched against catalog provider names",
			    "pattern '%s' selects no %s provider", sp->match, hs_platform_name(plat));
}

static void check_keyword_list(checker *C, const hs_provider *p, const char *const *names, const hs_pos *pos,
			       size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (hs_provider_find_keyword(p, names[k]))
			continue;
		const char **cand = hs_arena_alloc(C->arena, (p->n_keywords + 1) * sizeof(char *));
		for (size_t i = 0; cand && i < p->n_keywords; i++)
			cand[i] = p->keywords[i].name;
		const char *near = cand ? hs_closest(names[k], cand) : NULL;
		char hint[200];
		if (near)
			snprintf(hint, sizeof hint, "did you mean '%s'?", near);
		hs_diag_add(C->d, HS_D_UNKNOWN_KEYWORD, pos[k], near ? hint : "define it under the provider's keywords in its catalog",
			    "provider '%s' has no keyword '%s'", p->name, names[k]);
	}
}

static uint64_t mask_of(const hs_provider *p, const char *const *names, size_t n)
{
	uint64_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const hs_keyword *kw = hs_provider_find_keyword(p, names[i]);
		if (kw)
			m |= kw->mask;
	}
	return m;
}

/* P2: ID filters AND with keywords. An event passes when it has any of the
 * MatchAny bits (or MatchAny is 0) and all of the MatchAll bits; a whitelisted
 * event that cannot pass never reaches the filter. */
static void check_event_keywords(checker *C, const hs_session_provider *sp, const hs_provider *p,
				 const hs_cat_event *ce, hs_pos pos)
{
	uint64_t ev = mask_of(p, ce->keywords, ce->n_keywords);
	uint64_t any = sp->keywords_any_all ? 0 : mask_of(p, sp->keywords, sp->n_keywords);
	uint64_t all = mask_of(p, sp->keywords_all, sp->n_keywords_all);
	hs_strbuf names = {0};
	for (size_t k = 0; k < ce->n_keywords; k++)
		hs_sb_printf(&names, "%s%s", k ? ", " : "", ce->keywords[k]);
	if (any && !(ev & any))
		hs_diag_add(C->d, HS_D_KEYWORD_OFF, pos, "add one of its keywords to the session's keywords",
			    "event %d (%s) is logged with keywords %s, none of which this session enables", ce->id,
			    ce->name ? ce->name : "?", hs_sb_cstr(&names));
	else if (all && (ev & all) != all)
		hs_diag_add(C->d, HS_D_KEYWORD_OFF, pos, "drop the keywords_all the event does not carry",
			    "event %d (%s) is logged with keywords %s, so it never has all of keywords_all", ce->id,
			    ce->name ? ce->name : "?", hs_sb_cstr(&names));
	hs_sb_free(&names);
}

/* An ftrace filter, as the kernel would parse it for the catalog's event
 * (field names and types when the catalog has its format). */
static void check_filter(checker *C, const hs_wl_entry *w, const hs_cat_event *ce)
{
	hs_ftfilter_error e;
	if (hs_ftfilter_check(w->filter, C->rs, ce, &e))
		return;
	hs_pos at = w->filter_pos;
	if (w->filter_node)
		at.col = hs_ynode_col_of(w->filter_node, e.off);
	hs_diag_add(C->d, e.code, at, e.hint[0] ? e.hint : NULL, "%s", e.msg);
}

static void check_whitelist(checker *C, hs_platform plat, const hs_session_provider *sp, const hs_provider *p)
{
	bool win = plat == HS_PLATFORM_WINDOWS;
	size_t ids = 0;
	for (size_t i = 0; i < sp->n_events; i++) {
		const hs_wl_entry *w = &sp->events[i];
		if (win && w->filter)
			hs_diag_add(C->d, HS_D_FILTER, w->filter_pos, "windows whitelists select by event id",
				    "'filter' is an ftrace expression; it has no meaning on windows");
		if (!win && w->id >= 0) {
			hs_diag_add(C->d, HS_D_PLATFORM, w->pos, "name the ftrace event instead",
				    "ftrace events have no numeric id in the rules");
			continue;
		}
		const hs_cat_event *ce = hs_provider_find_event(p, w->id, w->name);
		if (!win && w->filter)
			check_filter(C, w, ce);
		if (win && w->id < 0 && !ce) {
			hs_diag_add(C->d, HS_D_UNKNOWN_EVENT, w->pos, "name an event the catalog lists, or give its id",
				    "provider '%s' has no catalog event named '%s', so its id is unknown", p->name,
				    w->name);
			continue;
		}
		if (win && w->id >= 0 && w->name && ce && ce->name && strcmp(ce->name, w->name) != 0)
			hs_diag_add(C->d, HS_D_UNKNOWN_EVENT, w->pos, NULL,
				    "event %d of '%s' is '%s' in the catalog, not '%s'", w->id, p->name, ce->name,
				    w->name);
		int id = ce ? ce->id : w->id;
		if (!ce) {
			if (win)
				hs_diag_add(C->d, HS_D_UNKNOWN_EVENT, w->pos, "add it to the catalog with a name and a story",
					    "event id %d is not in the catalog of '%s'", w->id, p->name);
			else
				hs_diag_add(C->d, HS_D_UNKNOWN_EVENT, w->pos, "add it to the catalog with a story",
					    "event '%s' is not in the catalog of '%s'", w->name, p->name);
		}
		if (!w->story && !(ce && ce->story) && w->evidence) {
			/* rulegen's stub: loads, plans and reports, but a person still owes it a story. */
			if (w->name)
				hs_diag_add(C->d, HS_D_STORY_STUB, w->evidence_pos, "write what it means when you see this event",
					    "the story of '%s' of '%s' is a generated stub", w->name, p->name);
			else
				hs_diag_add(C->d, HS_D_STORY_STUB, w->evidence_pos, "write what it means when you see this event",
					    "the story of event %d of '%s' is a generated stub", w->id, p->name);
		} else if (!w->story && !(ce && ce->story)) {
			if (w->name)
				hs_diag_add(C->d, HS_D_NO_STORY, w->pos, "say what it means when you see this event",
					    "whitelisted event '%s' of '%s' has no story", w->name, p->name);
			else
				hs_diag_add(C->d, HS_D_NO_STORY, w->pos, "say what it means when you see this event",
					    "whitelisted event %d of '%s' has no story", w->id, p->name);
		}
		/* Duplicates: same id (windows) or same name (linux). */
		for (size_t j = 0; j < i; j++) {
			const hs_wl_entry *o = &sp->events[j];
			const hs_cat_event *oe = hs_provider_find_event(p, o->id, o->name);
			int oid = oe ? oe->id : o->id;
			bool dup = win ? (id >= 0 && oid == id) : (o->name && w->name && strcmp(o->name, w->name) == 0);
			if (dup) {
				if (win)
					hs_diag_add(C->d, HS_D_DUP_ID, w->pos, NULL,
						    "event id %d is already whitelisted at line %u", id, o->pos.line);
				else
					hs_diag_add(C->d, HS_D_DUP_ID, w->pos, NULL,
						    "event '%s' is already whitelisted at line %u", w->name, o->pos.line);
				break;
			}
		}
		if (win)
			ids++;
		if (win && ce && ce->n_keywords)
			check_event_keywords(C, sp, p, ce, w->pos);
	}
	if (win && ids > HS_ETW_MAX_FILTER_IDS)
		hs_diag_add(C->d, HS_D_TOO_MANY_IDS, sp->events_pos, "ETW's EVENT_ID filter holds 64 IDs; to add one, remove one",
			    "%zu event ids for '%s' in one session; ETW accepts at most %d", ids, p->name,
			    HS_ETW_MAX_FILTER_IDS);
}

static void check_stacks(checker *C, hs_platform plat, const hs_session_provider *sp, const hs_provider *p)
{
	if (sp->stacks == HS_STACKS_NONE)
		return;
	if (p->kind == HS_PKIND_SYSTEM && sp->stacks == HS_STACKS_ALL) {
		hs_diag_add(C->d, HS_D_STACKS, sp->stacks_pos, "list the classic events whose stacks you want",
			    "system provider '%s' takes stacks for named events only", p->name);
		return;
	}
	size_t limit = p->kind == HS_PKIND_SYSTEM ? HS_ETW_MAX_STACK_CLASSIC_IDS : HS_ETW_MAX_FILTER_IDS;
	if (plat == HS_PLATFORM_WINDOWS && sp->n_stack_events > limit)
		hs_diag_add(C->d, HS_D_STACKS, sp->stacks_pos, NULL, "%zu stack events; at most %zu", sp->n_stack_events,
			    limit);
	for (size_t i = 0; i < sp->n_stack_events; i++) {
		const hs_wl_entry *w = &sp->stack_events[i];
		if (plat == HS_PLATFORM_LINUX && w->id >= 0) {
			hs_diag_add(C->d, HS_D_PLATFORM, w->pos, NULL, "ftrace events have no numeric id in the rules");
			continue;
		}
		const hs_cat_event *ce = hs_provider_find_event(p, w->id, w->name);
		if (!ce && (p->kind == HS_PKIND_SYSTEM || w->id < 0)) {
			if (w->name)
				hs_diag_add(C->d, HS_D_STACKS, w->pos, "stack events must be catalog events",
					    "provider '%s' has no catalog event '%s'", p->name, w->name);
			else
				hs_diag_add(C->d, HS_D_STACKS, w->pos, "stack events must be catalog events",
					    "provider '%s' has no catalog event with id %d", p->name, w->id);
		}
	}
}

static void check_session_provider(checker *C, hs_platform plat, const hs_session *s, const hs_session_provider *sp,
				   const hs_selection *sel)
{
	bool win = plat == HS_PLATFORM_WINDOWS;
	if (!sp->provider && !sp->match)
		return; /* the entry itself is malformed and already reported */
	if (!win) {
		if (sp->has_level)
			hs_diag_add(C->d, HS_D_PLATFORM, sp->level_pos, NULL, "ftrace events have no level");
		if (sp->keywords_given)
			hs_diag_add(C->d, HS_D_PLATFORM, sp->keywords_pos, "select ftrace events with 'events'",
				    "ftrace providers have no keywords");
		if (sp->n_keywords_all)
			hs_diag_add(C->d, HS_D_PLATFORM, sp->keywords_all_pos[0], NULL, "ftrace providers have no keywords");
		if (sp->ignore_keyword_0)
			hs_diag_add(C->d, HS_D_PLATFORM, sp->ignore_keyword_0_pos, NULL,
				    "'ignore_keyword_0' is an ETW setting; it has no meaning on linux");
		if (sp->capture_state)
			hs_diag_add(C->d, HS_D_PLATFORM, sp->capture_state_pos, NULL,
				    "ftrace providers cannot be asked to re-emit state");
	} else {
		if (!sp->has_level)
			hs_diag_add(C->d, HS_D_PLATFORM_REQUIRED, sp->pos, "information (4) is the usual level",
				    "a windows provider entry needs 'level'");
		if (!sp->keywords_given)
			hs_diag_add(C->d, HS_D_PLATFORM_REQUIRED, sp->pos,
				    "write 'keywords: all' to take every keyword, or name the ones you want",
				    "a windows provider entry needs 'keywords'");
		if (sp->has_level && sp->level == 0)
			hs_diag_add(C->d, HS_D_LEVEL_ZERO, sp->level_pos,
				    "write verbose (5) if every level is meant, or the highest level you want",
				    "level 0 puts no limit on the level: ETW enables events of every level");
	}
	for (size_t i = 0; i < sel->n; i++) {
		const hs_provider *p = sel->providers[i];
		if (win) {
			check_keyword_list(C, p, sp->keywords, sp->keyword_pos, sp->n_keywords);
			check_keyword_list(C, p, sp->keywords_all, sp->keywords_all_pos, sp->n_keywords_all);
			if (p->kind == HS_PKIND_SYSTEM && s->mode != HS_MODE_SAMPLING)
				hs_diag_add(C->d, HS_D_SYSTEM_PROVIDER, sp->provider ? sp->provider_pos : sp->match_pos,
					    "system providers only log to system-logger sessions; use a sampling session",
					    "system provider '%s' in %s session '%s'", p->name, hs_mode_name(s->mode),
					    s->name ? s->name : "?");
			if (sp->ignore_keyword_0 && sp->keywords_any_all)
				hs_diag_add(C->d, HS_D_KEYWORD_OFF, sp->ignore_keyword_0_pos, NULL,
					    "ignore_keyword_0 with 'keywords: all' drops every keyword-0 event of '%s'",
					    p->name);
		}
		if (sp->has_events)
			check_whitelist(C, plat, sp, p);
		check_stacks(C, plat, sp, p);
	}
}

static void check_platform(checker *C, hs_platform plat)
{
	hs_ruleset *rs = C->rs;
	hs_platform_rules *pr = &rs->platforms[plat];
	hs_rules_priv *priv = hs_rules_priv_of(rs);
	priv->selections[plat] = hs_arena_alloc(C->arena, (pr->n_sessions + 1) * sizeof(hs_selection *));
	if (!priv->selections[plat])
		return;
	for (size_t i = 0; i < pr->n_sessions; i++) {
		const hs_session *s = &pr->sessions[i];
		for (size_t j = 0; j < i; j++) {
			const hs_session *o = &pr->sessions[j];
			if (s->name && o->name && strcmp(s->name, o->name) == 0)
				hs_diag_add(C->d, HS_D_DUP_SESSION, s->name_pos, NULL,
					    "session '%s' is already defined at line %u", s->name, o->pos.line);
			if (s->logger_name && o->logger_name && strcmp(s->logger_name, o->logger_name) == 0)
				hs_diag_add(C->d, HS_D_DUP_SESSION, s->logger_pos,
					    "ETW and tracefs identify sessions by this name",
					    "logger_name '%s' is already used by session '%s'", s->logger_name,
					    o->name ? o->name : "?");
			if (s->output && o->output && strcmp(s->output, o->output) == 0)
				hs_diag_add(C->d, HS_D_OUTPUT, s->output_pos, NULL,
					    "output '%s' is already written by session '%s'", s->output,
					    o->name ? o->name : "?");
		}
		check_session_shape(C, plat, s);
		hs_selection *sels = hs_arena_alloc(C->arena, (s->n_providers + 1) * sizeof(*sels));
		priv->selections[plat][i] = sels;
		if (!sels)
			return;
		for (size_t e = 0; e < s->n_providers; e++) {
			select_providers(C, plat, &s->providers[e], &sels[e]);
			check_session_provider(C, plat, s, &s->providers[e], &sels[e]);
			for (size_t k = 0; k < sels[e].n; k++)
				for (size_t f = 0; f < e; f++)
					for (size_t m = 0; m < sels[f].n; m++)
						if (sels[f].providers[m] == sels[e].providers[k])
							hs_diag_add(C->d, HS_D_DUP_PROVIDER_USE, s->providers[e].pos,
								    "each enable replaces the provider's earlier settings in the session",
								    "provider '%s' is already enabled in session '%s' (line %u)",
								    sels[e].providers[k]->name, s->name ? s->name : "?",
								    s->providers[f].pos.line);
		}
	}
}

void hs_rules_check(hs_ruleset *rs, hs_diags *d)
{
	checker C = {.rs = rs, .d = d, .arena = &hs_rules_priv_of(rs)->arena};
	check_catalogs(&C);
	if (!rs->kind_known)
		return; /* the top file did not load far enough to judge it */
	if (!rs->is_profile) {
		/* A formats file (catalog-sync's, extract_fields.py's) describes fields, not providers; the causes
		 * catalog describes the report's vocabulary, the fleet catalog its signatures. */
		if (rs->n_providers == 0 && rs->n_files > 0 && !rs->has_formats && !rs->causes.present &&
		    !rs->fleet.present)
			hs_diag_add(d, HS_D_EMPTY, (hs_pos){rs->files[0], 0, 0}, NULL, "the catalog defines no providers");
		return;
	}
	check_output(&C, rs->run.log, rs->run.log_pos, "run: log");
	check_output(&C, rs->run.manifest, rs->run.manifest_pos, "run: manifest");
	bool any = false;
	for (int p = HS_PLATFORM_WINDOWS; p < HS_PLATFORM_COUNT; p++) {
		if (!rs->platforms[p].present)
			continue;
		any |= rs->platforms[p].n_sessions > 0;
		check_platform(&C, (hs_platform)p);
		hs_rules_check_triggers(&C, (hs_platform)p); /* rules/check_triggers.c */
	}
	hs_rules_check_windows(rs, d); /* rules/check_windows.c: classic providers' id whitelists (HS152) */
	/* A crash loop fires a trigger again and again; keep bounds the files of
	 * each trigger, only snapshots_max_mb bounds them all. */
	for (int p = HS_PLATFORM_WINDOWS; p < HS_PLATFORM_COUNT && !rs->run.snapshots_max_mb; p++)
		if (rs->platforms[p].present && rs->platforms[p].n_triggers) {
			hs_diag_add(
				d, HS_D_SNAPSHOT_CAP, rs->platforms[p].triggers_pos,
				"set run.snapshots_max_mb, e.g. 2048; the oldest snapshots go first when it is reached",
				"triggers without run.snapshots_max_mb: their snapshots have no disk cap");
			break;
		}
	if (!any && rs->n_files > 0)
		hs_diag_add(d, HS_D_EMPTY, (hs_pos){rs->files[0], 0, 0}, NULL, "the profile defines no sessions");
}
