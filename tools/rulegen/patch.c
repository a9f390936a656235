/* rulegen/patch.c: rewrites one session's `events:` lists in the profile's text, leaving every other byte alone, and diffs texts. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hindsight/vec.h"
#include "rulegen.h"

/*
 * The profile is edited as text, not re-emitted from a YAML tree, so its
 * comments, spacing and quoting survive. The loader's positions say where each
 * whitelist entry starts; lines are assigned to entries by indentation:
 *
 *   - an entry's body is its dash line plus every following line (content or
 *     comment) indented deeper than the dash;
 *   - lines between two entries (comments at the dash's indent, blank lines)
 *     are the leading lines of the entry after them and go where it goes;
 *   - lines after the last entry's body are outside the list and untouched.
 *
 * A list is rewritten only when something changes: an entry dropped, an event
 * added, or generated evidence refreshed. Kept entries are copied verbatim
 * (only their `evidence:` value is replaced); new ones are appended in rank
 * order. A provider entry left with no events is removed with its leading
 * comments. A one-line flow list (`events: [a, b]`) that changes becomes a
 * block list.
 */

typedef struct {
	const char *text;
	size_t len;
	size_t *start; /* start[i]: offset of line i (1-based); start[n+1] = len */
	size_t n;
	const char *eol;
	const char *file;
	hs_diags *d;
	bool failed;
} doc;

static void fail(doc *D, unsigned line, unsigned col, const char *fmt, ...) HS_PRINTF_FMT(4, 5);

static void fail(doc *D, unsigned line, unsigned col, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	hs_diag_add(D->d, HS_D_TYPE, (hs_pos){D->file, line, col}, "write it in block style, one key or entry per line",
		    "rulegen cannot edit this list: %s", msg);
	D->failed = true;
}

static bool doc_init(doc *D, const char *text, size_t len, const char *file, hs_diags *d)
{
	memset(D, 0, sizeof(*D));
	D->text = text;
	D->len = len;
	D->file = file;
	D->d = d;
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	D->start = malloc((n + 3) * sizeof(size_t));
	if (!D->start)
		return false;
	D->start[1] = 0;
	size_t k = 1;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n')
			D->start[++k] = i + 1;
	/* A final line without a newline still counts. */
	D->n = (len && text[len - 1] != '\n') ? k : k - 1;
	D->start[D->n + 1] = len;
	D->eol = (D->n && D->start[2] >= 2 && text[D->start[2] - 2] == '\r') ? "\r\n" : "\n";
	return true;
}

static const char *line_at(const doc *D, size_t i)
{
	return D->text + D->start[i];
}

static size_t line_len(const doc *D, size_t i) /* without the line end */
{
	size_t a = D->start[i], b = D->start[i + 1];
	while (b > a && (D->text[b - 1] == '\n' || D->text[b - 1] == '\r'))
		b--;
	return b - a;
}

static size_t indent(const doc *D, size_t i)
{
	const char *s = line_at(D, i);
	size_t n = line_len(D, i), k = 0;
	while (k < n && s[k] == ' ')
		k++;
	return k;
}

static bool blank(const doc *D, size_t i)
{
	return indent(D, i) == line_len(D, i);
}

static bool comment(const doc *D, size_t i)
{
	size_t k = indent(D, i);
	return k < line_len(D, i) && line_at(D, i)[k] == '#';
}

/* Byte offset in line `line` of 1-based character column `col`. */
static size_t byte_of_col(const doc *D, size_t line, unsigned col)
{
	const char *s = line_at(D, line);
	size_t n = line_len(D, line), off = 0;
	for (unsigned c = 1; c < col && off < n; c++) {
		off++;
		while (off < n && ((unsigned char)s[off] & 0xC0) == 0x80)
			off++;
	}
	return off;
}

/* The indent (0-based column) of the '-' that starts a block entry whose node is at pos. */
static bool dash_of(doc *D, hs_pos pos, size_t *dash)
{
	if (pos.line < 1 || pos.line > D->n)
		return false;
	const char *s = line_at(D, pos.line);
	size_t off = byte_of_col(D, pos.line, pos.col);
	while (off > 0 && s[off - 1] == ' ')
		off--;
	if (off == 0 || s[off - 1] != '-')
		return false;
	*dash = off - 1;
	return true;
}

/* Last line of the entry whose dash is on `line` at indent `dash`. */
static size_t body_end(const doc *D, size_t line, size_t dash)
{
	size_t last = line;
	for (size_t j = line + 1; j <= D->n; j++) {
		if (blank(D, j))
			continue;
		if (indent(D, j) <= dash)
			break;
		last = j;
	}
	return last;
}

/* First of the comment and blank lines right above `line` at indent >= dash (not above `floor`). */
static size_t lead_start(const doc *D, size_t line, size_t dash, size_t floor)
{
	size_t j = line;
	while (j - 1 > floor && (blank(D, j - 1) || (comment(D, j - 1) && indent(D, j - 1) >= dash)))
		j--;
	/* Blank lines right above the comments stay where they are. */
	while (j < line && blank(D, j))
		j++;
	return j;
}

void rg_yaml_quote(hs_strbuf *sb, const char *s)
{
	hs_sb_putc(sb, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			hs_sb_printf(sb, "\\%c", c);
		else if (c < 0x20 || c == 0x7F)
			hs_sb_printf(sb, "\\x%02x", c);
		else
			hs_sb_putc(sb, (char)c);
	}
	hs_sb_putc(sb, '"');
}

/* End (byte offset in the line) of the scalar starting at `off`. */
static size_t scalar_end(const char *s, size_t n, size_t off)
{
	if (off < n && s[off] == '"') {
		size_t i = off + 1;
		while (i < n && s[i] != '"')
			i += s[i] == '\\' ? 2 : 1;
		return i < n ? i + 1 : n;
	}
	if (off < n && s[off] == '\'') {
		size_t i = off + 1;
		while (i < n) {
			if (s[i] == '\'' && i + 1 < n && s[i + 1] == '\'')
				i += 2;
			else if (s[i] == '\'')
				return i + 1;
			else
				i++;
		}
		return n;
	}
	size_t e = off;
	while (e < n && !(s[e] == '#' && e > off && (s[e - 1] == ' ' || s[e - 1] == '\t')))
		e++;
	while (e > off && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	return e;
}

/* Appends lines a..b, replacing the evidence value of c (if it has one to refresh). */
static void copy_entry(doc *D, size_t a, size_t b, const rg_cand *c, hs_strbuf *out)
{
	const hs_wl_entry *w = c->entry;
	bool refresh = c->evidence[0] && w->evidence && strcmp(c->evidence, w->evidence) != 0;
	for (size_t i = a; i <= b; i++) {
		const char *s = line_at(D, i);
		size_t full = D->start[i + 1] - D->start[i];
		if (refresh && i == w->evidence_pos.line) {
			size_t n = line_len(D, i), off = byte_of_col(D, i, w->evidence_pos.col);
			size_t e = scalar_end(s, n, off);
			hs_sb_appendn(out, s, off);
			rg_yaml_quote(out, c->evidence);
			hs_sb_appendn(out, s + e, full - e);
			continue;
		}
		hs_sb_appendn(out, s, full);
	}
}

/* A new (or, for a flow list, regenerated) entry in block style. */
static void write_entry(doc *D, const rg_cand *c, bool win, size_t dash, hs_strbuf *out)
{
	const hs_wl_entry *w = c->entry;
	const char *story = w ? w->story : NULL, *filter = w ? w->filter : NULL;
	const char *ev = c->evidence[0] ? c->evidence : NULL;
	bool plain = !story && !filter && !ev;
	for (size_t i = 0; i < dash; i++)
		hs_sb_putc(out, ' ');
	if (win && plain)
		hs_sb_printf(out, "- %d%s", c->id, D->eol);
	else if (win)
		hs_sb_printf(out, "- id: %d%s", c->id, D->eol);
	else
		hs_sb_printf(out, "- name: %s%s", c->name, D->eol);
	const char *keys[] = {"filter", "story", "evidence"}, *vals[] = {filter, story, ev};
	for (size_t k = 0; k < 3; k++) {
		if (!vals[k])
			continue;
		for (size_t i = 0; i < dash + 2; i++)
			hs_sb_putc(out, ' ');
		hs_sb_printf(out, "%s: ", keys[k]);
		rg_yaml_quote(out, vals[k]);
		hs_sb_append(out, D->eol);
	}
}

typedef struct {
	size_t first, last; /* old lines replaced (last = first - 1: pure insertion before first) */
	char *text;
} edit;

typedef hs_vec edits; /* of edit */

static bool add_edit(edits *E, size_t first, size_t last, hs_strbuf *sb)
{
	edit *e = hs_vec_push(E);
	if (!e)
		return false;
	e->first = first;
	e->last = last;
	e->text = hs_sb_take(sb);
	if (!e->text)
		e->text = calloc(1, 1);
	return true;
}

static const rg_cand *cand_of_entry(const rg_prov *pv, const hs_wl_entry *w)
{
	for (size_t i = 0; i < pv->n_cands; i++)
		if (pv->cands[i].entry == w)
			return &pv->cands[i];
	return NULL;
}

/* Where the `events:` key's value starts on its line (byte offset), and whether it is a flow list. */
static bool events_value(doc *D, const rg_prov *pv, size_t *after_colon, bool *flow)
{
	size_t line = pv->sp->events_pos.line;
	const char *s = line_at(D, line);
	size_t n = line_len(D, line), off = byte_of_col(D, line, pv->sp->events_pos.col);
	if (n - off < 7 || strncmp(s + off, "events", 6) != 0)
		return false;
	off += 6;
	while (off < n && s[off] == ' ')
		off++;
	if (off >= n || s[off] != ':')
		return false;
	*after_colon = ++off;
	while (off < n && s[off] == ' ')
		off++;
	*flow = off < n && s[off] == '[';
	return true;
}

static void rewrite_block(doc *D, const rg_prov *pv, bool win, edits *E)
{
	const hs_session_provider *sp = pv->sp;
	size_t key_line = sp->events_pos.line;
	size_t n = sp->n_events;
	if (!n)
		return;
	size_t *dash = calloc(n + 1, sizeof(size_t)), *end = calloc(n + 1, sizeof(size_t));
	if (!dash || !end)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!dash_of(D, sp->events[i].pos, &dash[i])) {
			fail(D, sp->events[i].pos.line, sp->events[i].pos.col, "an entry without a leading '-'");
			goto out;
		}
		end[i] = body_end(D, sp->events[i].pos.line, dash[i]);
	}
	hs_strbuf sb = {0};
	for (size_t i = 0; i < n; i++) {
		const rg_cand *c = cand_of_entry(pv, &sp->events[i]);
		if (!c || !(c->decision == RG_KEEP || c->decision == RG_PIN))
			continue;
		copy_entry(D, i ? end[i - 1] + 1 : key_line + 1, end[i], c, &sb);
	}
	for (size_t i = 0; i < pv->n_cands; i++) {
		const rg_cand *c = &pv->cands[i];
		if (!((c->decision == RG_KEEP || c->decision == RG_PIN) && !c->entry))
			continue;
		if (sb.len && sb.buf[sb.len - 1] != '\n') /* the file's last line had no newline */
			hs_sb_append(&sb, D->eol);
		write_entry(D, c, win, dash[0], &sb);
	}
	add_edit(E, key_line + 1, end[n - 1], &sb);
out:
	free(dash);
	free(end);
}

/* `events: [a, {name: b, ...}]  # note` on one line -> `events:  # note` and a block list. */
static void rewrite_flow(doc *D, const rg_prov *pv, bool win, size_t after_colon, edits *E)
{
	size_t line = pv->sp->events_pos.line;
	const char *s = line_at(D, line);
	size_t n = line_len(D, line), i = after_colon;
	while (i < n && s[i] != '[')
		i++;
	int depth = 0;
	char quote = 0;
	size_t close = n;
	for (; i < n; i++) {
		char ch = s[i];
		if (quote) {
			if (ch == '\\' && quote == '"')
				i++;
			else if (ch == quote)
				quote = 0;
		} else if (ch == '"' || ch == '\'') {
			quote = ch;
		} else if (ch == '[' || ch == '{') {
			depth++;
		} else if ((ch == ']' || ch == '}') && --depth == 0) {
			close = i;
			break;
		}
	}
	if (close == n) {
		fail(D, line, pv->sp->events_pos.col, "a flow list that spans several lines");
		return;
	}
	hs_strbuf sb = {0};
	hs_sb_appendn(&sb, s, after_colon);
	size_t rest = close + 1;
	while (rest < n && s[rest] == ' ')
		rest++;
	if (rest < n) { /* a trailing comment */
		hs_sb_append(&sb, "  ");
		hs_sb_appendn(&sb, s + rest, n - rest);
	}
	hs_sb_append(&sb, D->eol);
	size_t dash = (size_t)pv->sp->events_pos.col - 1 + 2;
	/* Existing entries in file order, then the new ones. */
	for (size_t k = 0; k < pv->sp->n_events; k++) {
		const rg_cand *c = cand_of_entry(pv, &pv->sp->events[k]);
		if (c && (c->decision == RG_KEEP || c->decision == RG_PIN))
			write_entry(D, c, win, dash, &sb);
	}
	for (size_t k = 0; k < pv->n_cands; k++) {
		const rg_cand *c = &pv->cands[k];
		if ((c->decision == RG_KEEP || c->decision == RG_PIN) && !c->entry)
			write_entry(D, c, win, dash, &sb);
	}
	add_edit(E, line, line, &sb);
}

static void remove_provider(doc *D, const rg_result *r, const rg_prov *pv, edits *E)
{
	const hs_session *s = r->session;
	size_t dash, floor = 0;
	if (!dash_of(D, pv->sp->pos, &dash)) {
		fail(D, pv->sp->pos.line, pv->sp->pos.col, "a provider entry without a leading '-'");
		return;
	}
	if (pv->entry > 0) {
		size_t pd;
		const hs_session_provider *prev = &s->providers[pv->entry - 1];
		if (dash_of(D, prev->pos, &pd))
			floor = body_end(D, prev->pos.line, pd);
	}
	size_t first = lead_start(D, pv->sp->pos.line, dash, floor);
	size_t last = body_end(D, pv->sp->pos.line, dash);
	hs_strbuf sb = {0};
	add_edit(E, first, last, &sb);
}

static int edit_cmp(const void *a, const void *b)
{
	const edit *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

char *rg_patch(const rg_result *r, const char *text, size_t len, hs_diags *d)
{
	doc D;
	if (!doc_init(&D, text, len, hs_diags_add_source(d, r->cfg->profile, text, len), d))
		return NULL;
	bool win = r->cfg->platform == HS_PLATFORM_WINDOWS;
	edits E = HS_VEC_INIT(sizeof(edit));
	size_t providers_left = r->session->n_providers;
	for (size_t i = 0; i < r->n_provs; i++) {
		const rg_prov *pv = &r->provs[i];
		if (!pv->changed)
			continue;
		if (pv->kept == 0) {
			remove_provider(&D, r, pv, &E);
			providers_left--;
			continue;
		}
		size_t after_colon;
		bool flow;
		const char *at = line_at(&D, pv->sp->pos.line) + byte_of_col(&D, pv->sp->pos.line, pv->sp->pos.col);
		if (*at == '{') {
			fail(&D, pv->sp->pos.line, pv->sp->pos.col, "a provider entry written as a flow mapping");
			continue;
		}
		if (!events_value(&D, pv, &after_colon, &flow)) {
			fail(&D, pv->sp->events_pos.line, pv->sp->events_pos.col, "'events' is not a plain key");
			continue;
		}
		if (flow)
			rewrite_flow(&D, pv, win, after_colon, &E);
		else
			rewrite_block(&D, pv, win, &E);
	}
	if (!providers_left) {
		hs_diag_add(d, HS_D_EMPTY, r->cfg->session_pos, "lower the thresholds or pin the events the session needs",
			    "no event of session '%s' is kept, so it would have no providers", r->session->name);
		D.failed = true;
	}
	hs_strbuf out = {0};
	edit *ev = E.data;
	if (!D.failed) {
		if (E.len)
			qsort(ev, E.len, sizeof(*ev), edit_cmp);
		size_t line = 1;
		for (size_t i = 0; i < E.len; i++) {
			hs_sb_appendn(&out, text + D.start[line], D.start[ev[i].first] - D.start[line]);
			hs_sb_append(&out, ev[i].text);
			line = ev[i].last + 1;
		}
		hs_sb_appendn(&out, text + D.start[line], len - D.start[line]);
	}
	for (size_t i = 0; i < E.len; i++)
		free(ev[i].text);
	hs_vec_free(&E);
	free(D.start);
	if (D.failed) {
		hs_sb_free(&out);
		return NULL;
	}
	char *res = hs_sb_take(&out);
	return res ? res : calloc(1, 1);
}

/* ---- unified diff ---- */

typedef struct {
	const char **s; /* line starts */
	size_t *n;      /* line lengths, newline included */
	size_t count;
} lines;

static bool split(const char *t, lines *L)
{
	size_t len = strlen(t), k = 0;
	for (size_t i = 0; i < len; i++)
		k += t[i] == '\n';
	k += len && t[len - 1] != '\n';
	L->s = malloc((k + 1) * sizeof(char *));
	L->n = malloc((k + 1) * sizeof(size_t));
	L->count = 0;
	if (!L->s || !L->n)
		return false;
	const char *p = t;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		L->s[L->count] = p;
		L->n[L->count++] = n;
		p += n;
	}
	return true;
}

static bool same(const lines *a, size_t i, const lines *b, size_t j)
{
	return a->n[i] == b->n[j] && memcmp(a->s[i], b->s[j], a->n[i]) == 0;
}

enum { OP_EQ, OP_DEL, OP_ADD };

static void put_line(hs_strbuf *out, char tag, const char *s, size_t n)
{
	hs_sb_putc(out, tag);
	hs_sb_appendn(out, s, n);
	if (!n || s[n - 1] != '\n')
		hs_sb_append(out, "\n\\ No newline at end of file\n");
}

void rg_diff(const char *name, const char *ta, const char *tb, hs_strbuf *out)
{
	lines A = {0}, B = {0};
	uint32_t *dp = NULL;
	unsigned char *ops = NULL;
	if (!split(ta, &A) || !split(tb, &B))
		goto out;
	/* Common prefix and suffix, then an LCS table over the middle. */
	size_t pre = 0;
	while (pre < A.count && pre < B.count && same(&A, pre, &B, pre))
		pre++;
	size_t suf = 0;
	while (suf < A.count - pre && suf < B.count - pre && same(&A, A.count - 1 - suf, &B, B.count - 1 - suf))
		suf++;
	if (pre == A.count && pre == B.count)
		goto out; /* equal */
	size_t n = A.count - pre - suf, m = B.count - pre - suf;
	ops = malloc(A.count + B.count + 1);
	if (!ops)
		goto out;
	size_t k = 0;
	for (size_t i = 0; i < pre; i++)
		ops[k++] = OP_EQ;
	/* Rules files are small; a middle too large for the table is one change. */
	if (n && m && (n + 1) * (m + 1) <= 64u * 1024u * 1024u)
		dp = calloc((n + 1) * (m + 1), sizeof(uint32_t));
	if (dp) {
		for (size_t i = n; i-- > 0;)
			for (size_t j = m; j-- > 0;)
				dp[i * (m + 1) + j] = same(&A, pre + i, &B, pre + j)
							      ? dp[(i + 1) * (m + 1) + j + 1] + 1
							      : (dp[(i + 1) * (m + 1) + j] > dp[i * (m + 1) + j + 1]
									 ? dp[(i + 1) * (m + 1) + j]
									 : dp[i * (m + 1) + j + 1]);
		size_t i = 0, j = 0;
		while (i < n || j < m) {
			if (i < n && j < m && same(&A, pre + i, &B, pre + j)) {
				ops[k++] = OP_EQ;
				i++;
				j++;
			} else if (i < n && (j == m || dp[(i + 1) * (m + 1) + j] >= dp[i * (m + 1) + j + 1])) {
				ops[k++] = OP_DEL; /* deletions first, as diff(1) prints them */
				i++;
			} else {
				ops[k++] = OP_ADD;
				j++;
			}
		}
	} else {
		for (size_t i = 0; i < n; i++)
			ops[k++] = OP_DEL;
		for (size_t j = 0; j < m; j++)
			ops[k++] = OP_ADD;
	}
	for (size_t i = 0; i < suf; i++)
		ops[k++] = OP_EQ;
	size_t nops = k;

	hs_sb_printf(out, "--- %s\n+++ %s\n", name, name);
	enum { CTX = 3 };
	size_t o = 0;
	while (o < nops) {
		while (o < nops && ops[o] == OP_EQ)
			o++;
		if (o == nops)
			break;
		/* A hunk: from CTX before this change to CTX after the last change closer than 2*CTX. */
		size_t start = o >= CTX ? o - CTX : 0, end = o;
		for (;;) {
			while (end < nops && ops[end] != OP_EQ)
				end++;
			size_t eq = end;
			while (eq < nops && ops[eq] == OP_EQ)
				eq++;
			if (eq < nops && eq - end <= 2 * CTX) {
				end = eq;
				continue;
			}
			end = end + CTX < nops ? end + CTX : nops;
			break;
		}
		/* Line numbers at `start`. */
		size_t ai = 0, bi = 0;
		for (size_t q = 0; q < start; q++) {
			ai += ops[q] != OP_ADD;
			bi += ops[q] != OP_DEL;
		}
		size_t ac = 0, bc = 0;
		for (size_t q = start; q < end; q++) {
			ac += ops[q] != OP_ADD;
			bc += ops[q] != OP_DEL;
		}
		hs_sb_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ac ? ai + 1 : ai, ac, bc ? bi + 1 : bi, bc);
		for (size_t q = start; q < end; q++) {
			if (ops[q] == OP_EQ)
				put_line(out, ' ', A.s[ai], A.n[ai]);
			else if (ops[q] == OP_DEL)
				put_line(out, '-', A.s[ai], A.n[ai]);
			else
				put_line(out, '+', B.s[bi], B.n[bi]);
			ai += ops[q] != OP_ADD;
			bi += ops[q] != OP_DEL;
		}
		o = end;
	}
out:
	free(dp);
	free(ops);
	free(A.s);
	free(A.n);
	free(B.s);
	free(B.n);
}
