/* rulegen/explain.c: the --explain report: every candidate event with its rates, score, rank, decision and reason. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rulegen.h"

enum { MAX_COLS = 64 };

typedef struct {
	char **cell; /* rows x cols, owned */
	size_t rows, cols, cap;
	size_t width[MAX_COLS];
	bool right[MAX_COLS];
} table;

static void cell(table *t, size_t row, size_t col, const char *s)
{
	char *c = strdup(s);
	t->cell[row * t->cols + col] = c;
	size_t w = 0;
	for (const char *p = s; *p; p++)
		w += ((unsigned char)*p & 0xC0) != 0x80;
	if (w > t->width[col])
		t->width[col] = w;
}

static size_t new_row(table *t)
{
	if (t->rows == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 32;
		char **nc = realloc(t->cell, ncap * t->cols * sizeof(char *));
		if (!nc)
			return SIZE_MAX;
		memset(nc + t->cap * t->cols, 0, (ncap - t->cap) * t->cols * sizeof(char *));
		t->cell = nc;
		t->cap = ncap;
	}
	return t->rows++;
}

static void render(table *t, hs_strbuf *out)
{
	for (size_t r = 0; r < t->rows; r++) {
		hs_strbuf line = {0};
		for (size_t c = 0; c < t->cols; c++) {
			const char *s = t->cell[r * t->cols + c] ? t->cell[r * t->cols + c] : "";
			size_t w = 0;
			for (const char *p = s; *p; p++)
				w += ((unsigned char)*p & 0xC0) != 0x80;
			bool last = c + 1 == t->cols;
			if (c)
				hs_sb_append(&line, "  ");
			if (t->right[c])
				for (size_t k = w; k < t->width[c]; k++)
					hs_sb_putc(&line, ' ');
			hs_sb_append(&line, s);
			if (!t->right[c] && !last)
				for (size_t k = w; k < t->width[c]; k++)
					hs_sb_putc(&line, ' ');
		}
		/* No trailing blanks (empty last cells). */
		const char *l = hs_sb_cstr(&line);
		size_t n = strlen(l);
		while (n && l[n - 1] == ' ')
			n--;
		hs_sb_appendn(out, l, n);
		hs_sb_putc(out, '\n');
		hs_sb_free(&line);
	}
}

static void table_free(table *t)
{
	for (size_t i = 0; i < t->rows * t->cols; i++)
		free(t->cell[i]);
	free(t->cell);
}

static const char *const decision_names[] = {"keep", "pin", "drop", "cut"};

static void limit_text(const rg_prov *pv, char *buf, size_t cap)
{
	if (pv->limit)
		snprintf(buf, cap, "limit %u%s", pv->limit, pv->limit_from_config ? "" : " (ETW filter)");
	else
		snprintf(buf, cap, "no limit");
}

void rg_explain(const rg_result *r, hs_strbuf *out)
{
	const rg_config *cfg = r->cfg;
	size_t ns = cfg->n_scenarios;
	char a[32], b[32], c[32], e[32];
	hs_sb_printf(out, "rulegen: %s, %s session %s\n", cfg->profile, hs_platform_name(cfg->platform),
		     r->session->name);
	hs_sb_append(out, "scenarios:");
	for (size_t s = 0; s < ns; s++) {
		const rg_scenario *sc = &cfg->scenarios[s];
		hs_sb_printf(out, "%s %s %.1f s%s%s", s ? "," : "", sc->name, sc->full_counts.seconds,
			     s == cfg->baseline ? " (baseline)" : "", sc->filtered_counts.n_files ? " +filtered" : "");
	}
	hs_sb_putc(out, '\n');
	rg_format_rate(cfg->min_top_rate, false, a, sizeof a);
	rg_format_rate(cfg->max_baseline_rate, false, b, sizeof b);
	rg_format_rate(cfg->rate_floor, false, c, sizeof c);
	char cap[64] = "";
	if (cfg->max_top_rate > 0) {
		rg_format_rate(cfg->max_top_rate, false, e, sizeof e);
		snprintf(cap, sizeof cap, " (and <= %s/min)", e);
	}
	hs_sb_printf(out,
		     "thresholds: keep when the top rate >= %s/min%s, baseline rate <= %s/min and score >= %g\n"
		     "score = top scenario's rate / max(highest rate of every other scenario and the baseline, floor %s/min)\n"
		     "rates are events per minute in each full capture; * = the filtered capture's (the entry's filter applies)\n\n",
		     a, cap, b, cfg->min_specificity, c);

	table t = {.cols = ns + 8};
	if (t.cols > MAX_COLS)
		t.cols = MAX_COLS;
	size_t row = new_row(&t);
	size_t col = 0;
	cell(&t, row, col++, "provider");
	cell(&t, row, col++, "event");
	/* The baseline column first, then the others in config order. */
	size_t *order = calloc(ns, sizeof(size_t));
	if (!order)
		return;
	size_t k = 0;
	order[k++] = cfg->baseline;
	for (size_t s = 0; s < ns; s++)
		if (s != cfg->baseline)
			order[k++] = s;
	for (size_t s = 0; s < ns && col < MAX_COLS - 6; s++) {
		t.right[col] = true;
		cell(&t, row, col++, cfg->scenarios[order[s]].name);
	}
	size_t rate_end = col;
	cell(&t, row, col++, "top");
	t.right[col] = true;
	cell(&t, row, col++, "score");
	t.right[col] = true;
	cell(&t, row, col++, "rank");
	cell(&t, row, col++, "decision");
	cell(&t, row, col++, "story");
	cell(&t, row, col++, "reason");
	for (size_t i = 0; i < r->n_provs; i++) {
		const rg_prov *pv = &r->provs[i];
		for (size_t j = 0; j < pv->n_cands; j++) {
			const rg_cand *cd = &pv->cands[j];
			row = new_row(&t);
			if (row == SIZE_MAX)
				break;
			col = 0;
			cell(&t, row, col++, pv->p->name);
			char ev[160];
			if (cd->id >= 0)
				snprintf(ev, sizeof ev, "%d%s%s", cd->id, cd->name ? " " : "", cd->name ? cd->name : "");
			else
				snprintf(ev, sizeof ev, "%s", cd->name);
			cell(&t, row, col++, ev);
			for (size_t s = 0; col < rate_end; s++) {
				rg_format_rate(cd->rate[order[s]], false, e, sizeof e);
				if (cd->from_filtered[order[s]])
					strcat(e, "*");
				cell(&t, row, col++, e);
			}
			cell(&t, row, col++, cd->top_rate > 0 ? cfg->scenarios[cd->top].name : "-");
			/* Scores below 0.1 read as 0.0: "<0.1" is for rates. */
			rg_format_rate(cd->score >= 0.05 ? cd->score : 0, false, e, sizeof e);
			cell(&t, row, col++, cd->score > 0 && cd->score < 0.05 ? "0.0" : e);
			if (cd->rank)
				snprintf(e, sizeof e, "%u", cd->rank);
			else
				snprintf(e, sizeof e, "-");
			cell(&t, row, col++, e);
			cell(&t, row, col++, decision_names[cd->decision]);
			cell(&t, row, col++, cd->story_source ? cd->story_source : "-");
			cell(&t, row, col++, cd->reason);
		}
	}
	render(&t, out);
	table_free(&t);
	free(order);

	hs_sb_append(out, "\n");
	for (size_t i = 0; i < r->n_provs; i++) {
		const rg_prov *pv = &r->provs[i];
		char lim[64];
		limit_text(pv, lim, sizeof lim);
		hs_sb_printf(out, "%s: %zu kept (%zu pinned), %zu dropped, %zu cut; %s; ", pv->p->name, pv->kept,
			     pv->pinned, pv->dropped, pv->cut, lim);
		if (!pv->changed)
			hs_sb_append(out, "whitelist unchanged\n");
		else if (!pv->kept)
			hs_sb_append(out, "nothing kept: the provider entry is removed\n");
		else
			hs_sb_printf(out, "whitelist rewritten: %zu added, %zu removed, %zu evidence refreshed\n",
				     pv->added, pv->removed, pv->refreshed);
	}
	for (size_t i = 0; i < r->n_unmanaged; i++)
		hs_sb_printf(out, "left alone: %s\n", r->unmanaged[i]);
	for (size_t i = 0; i < r->n_ignored; i++)
		hs_sb_printf(out, "not considered: %s, %" PRIu64 " event%s (%s)\n", r->ignored[i].provider,
			     r->ignored[i].events, r->ignored[i].events == 1 ? "" : "s", r->ignored[i].why);
	if (r->stubs)
		hs_sb_printf(out, "%zu kept event%s no story but generated evidence (warning HS129): write %s\n",
			     r->stubs, r->stubs == 1 ? " has" : "s have", r->stubs == 1 ? "it" : "them");
}
