/* run/live.c: the live view: status area and key-event list drawn with ncurses where the build has it, plain lines otherwise. */
#include "run/live.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HS_HAVE_CURSES
#include <curses.h>
#endif
#ifndef _WIN32
#include <unistd.h>
#endif

#include "hindsight/limits.h"
#include "run/live_lock.h"
#include "run/os.h"

/* One line of the event list: an event and how many like it came in a row. */
typedef struct {
	hs_live_event e;
	uint64_t count;
} view_line;

struct hs_live {
	hs_live_opts o;
	hs_mutex mu; /* ring, messages, begun/ended: the observer and message sinks may be other threads */
	hs_live_event *ring; /* [HS_LIVE_RING_EVENTS] from the observer */
	size_t r_head, r_len;
	uint64_t r_lost; /* events the view never showed (the ring overflowed, or paused too long) */
	view_line *lines; /* [HS_LIVE_HISTORY_LINES] what the list shows, collapsed */
	size_t l_head, l_len;
	view_line alert; /* the newest alert event, kept in the status area so a storm cannot scroll it away */
	hs_live_event *batch; /* [HS_LIVE_RING_EVENTS] one draw's events, put in time order */
	char msgs[HS_LIVE_MESSAGES][256];
	size_t m_next, m_len;
	bool msgs_new;
	bool begun, ended;
	bool paused, editing;
	char filter[64], edit[64];
	/* plain: the status line is printed when new */
	FILE *log; /* curses: main.log for the messages */
#ifdef HS_HAVE_CURSES
	SCREEN *scr;
	FILE *tty_out, *tty_in;
	bool colors;
#endif
};

bool hs_live_have_curses(void)
{
#ifdef HS_HAVE_CURSES
	return true;
#else
	return false;
#endif
}

hs_live *hs_live_new(const hs_live_opts *o)
{
	hs_live *lv = calloc(1, sizeof *lv);
	if (!lv)
		return NULL;
	lv->o = *o;
	if (!(lv->ring = calloc(HS_LIVE_RING_EVENTS, sizeof *lv->ring)) ||
	    !(lv->batch = calloc(HS_LIVE_RING_EVENTS, sizeof *lv->batch)) ||
	    !(lv->lines = calloc(HS_LIVE_HISTORY_LINES, sizeof *lv->lines))) {
		free(lv->batch);
		free(lv->ring);
		free(lv);
		return NULL;
	}
#ifndef HS_HAVE_CURSES
	lv->o.curses = false;
#endif
	hs_mutex_init(&lv->mu);
	return lv;
}

void hs_live_push(hs_live *lv, const hs_live_event *e)
{
	hs_mutex_lock(&lv->mu);
	size_t at = (lv->r_head + lv->r_len) % HS_LIVE_RING_EVENTS;
	if (lv->r_len == HS_LIVE_RING_EVENTS) {
		/* A storm between two draws: the view keeps the newest. */
		lv->r_head = (lv->r_head + 1) % HS_LIVE_RING_EVENTS;
		lv->r_lost++;
	} else {
		lv->r_len++;
	}
	lv->ring[at] = *e;
	hs_mutex_unlock(&lv->mu);
}

bool hs_live_say(hs_live *lv, hs_msg_level level, const char *source, const char *text)
{
	(void)source;
	hs_mutex_lock(&lv->mu);
	bool taken = lv->o.curses && lv->begun && !lv->ended;
	if (taken) {
		/* main.log keeps every message as the terminal would have shown it. */
		if (lv->log) {
			fprintf(lv->log, "%s: %s\n", lv->o.prefix ? lv->o.prefix : source, text);
			fflush(lv->log);
		}
		snprintf(lv->msgs[lv->m_next], sizeof lv->msgs[0], "%s%s", level >= HS_MSG_WARN ? "! " : "", text);
		lv->m_next = (lv->m_next + 1) % HS_LIVE_MESSAGES;
		if (lv->m_len < HS_LIVE_MESSAGES)
			lv->m_len++;
		lv->msgs_new = true;
	}
	hs_mutex_unlock(&lv->mu);
	return taken;
}

/* ---- text ---- */

static void fmt_bytes(char *buf, size_t cap, uint64_t b)
{
	if (b >= 1024ull * 1024 * 1024)
		snprintf(buf, cap, "%.1f GB", (double)b / (1024.0 * 1024 * 1024));
	else if (b >= 1024ull * 1024)
		snprintf(buf, cap, "%.1f MB", (double)b / (1024.0 * 1024));
	else
		snprintf(buf, cap, "%.1f KB", (double)b / 1024.0);
}

static void fmt_secs(char *buf, size_t cap, double s)
{
	if (s < 0)
		snprintf(buf, cap, "?");
	else if (s < 120)
		snprintf(buf, cap, "%.1f s", s);
	else if (s < 7200)
		snprintf(buf, cap, "%.1f min", s / 60);
	else
		snprintf(buf, cap, "%.1f h", s / 3600);
}

/* The recorder's line. */
static void line_recorder(const hs_run_status *st, char *buf, size_t cap)
{
	char up[32], cpu[16] = "?";
	fmt_secs(up, sizeof up, st->uptime_s);
	if (st->cpu_percent >= 0)
		snprintf(cpu, sizeof cpu, "%.1f%%", st->cpu_percent);
	int n = snprintf(buf, cap, "%s  pid %lu  up %s  own cpu %s  key events %" PRIu64 "  snapshots %" PRIu64,
			 st->profile ? st->profile : "?", st->pid, up, cpu, st->key_events_observed, st->snapshots_taken);
	if (st->snapshots_failed && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " (%" PRIu64 " failed)", st->snapshots_failed);
	if (st->jsonl && n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, "  jsonl %" PRIu64 " lines, %" PRIu64 " dropped", st->jsonl_lines,
			 st->jsonl_dropped);
}

/* The newest snapshot's capture-time verdict, pinned like the latest alert: false when there is none yet. */
static bool line_verdict(const hs_run_status *st, char *buf, size_t cap)
{
	const hs_rundoc_report *rep = &st->last_snapshot.report;
	if (!st->last_snapshot.present)
		return false;
	if (rep->verdict)
		snprintf(buf, cap, "snapshot %03u-%s: %s", st->last_snapshot.seq,
			 st->last_snapshot.trigger ? st->last_snapshot.trigger : "?", rep->verdict);
	else
		snprintf(buf, cap, "snapshot %03u-%s: no report (%s)", st->last_snapshot.seq,
			 st->last_snapshot.trigger ? st->last_snapshot.trigger : "?", rep->error ? rep->error : "?");
	return true;
}

static void line_session(const hs_run_session_status *s, char *buf, size_t cap)
{
	char rate[24] = "? ev/s", fill[16] = "?", hist[24];
	if (s->events_per_s >= 0)
		snprintf(rate, sizeof rate, "%.0f ev/s", s->events_per_s);
	if (s->ring_fill >= 0)
		snprintf(fill, sizeof fill, "%.0f%%", s->ring_fill * 100);
	fmt_secs(hist, sizeof hist, s->history_s);
	if (s->mode == HS_MODE_FILE_CIRCULAR) {
		char file[24];
		fmt_bytes(file, sizeof file, s->bytes_in_file);
		snprintf(buf, cap, "%-12s %-13s %10s  ring %4s  history %s  lost %" PRIu64 "  key file %s  chunks dropped %" PRIu64,
			 s->name, hs_mode_name(s->mode), rate, fill, hist, s->lost_events, file, s->chunks_dropped);
	} else {
		snprintf(buf, cap, "%-12s %-13s %10s  ring %4s  history %s  lost %" PRIu64, s->name, hs_mode_name(s->mode),
			 rate, fill, hist, s->lost_events);
	}
}

static void line_trigger(const hs_run_trigger_status *t, char *buf, size_t cap)
{
	char last[32] = "never";
	if (t->last_fire_s_ago >= 0) {
		fmt_secs(last, sizeof last, t->last_fire_s_ago);
		strncat(last, " ago", sizeof last - strlen(last) - 1);
	}
	char state[24];
	snprintf(state, sizeof state, "%s", hs_trigger_state_name(t->state));
	for (char *p = state; *p; p++)
		if (*p == '_')
			*p = ' ';
	snprintf(buf, cap, "trigger %-12s %-10s %-13s fired %" PRIu64 "  last fire %s", t->name,
		 hs_trigger_kind_name(t->kind), state, t->st.fired, last);
}

/* One event line: time, alert, task, event, fields, story; "(xN)" for repeats. */
static void line_event(const view_line *l, char *buf, size_t cap)
{
	time_t t = (time_t)(l->e.wall_ms / 1000u);
	struct tm tm;
	hs_os_localtime(t, &tm);
	char when[16], fields[512], alert[40] = "", rep[32] = "";
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	hs_live_event_fields_text(&l->e, fields, sizeof fields);
	if (l->e.alert)
		snprintf(alert, sizeof alert, "[%s] ", l->e.alert);
	if (l->count > 1)
		snprintf(rep, sizeof rep, " (x%" PRIu64 ")", l->count);
	snprintf(buf, cap, "%s.%03u %s%s[%d] cpu%u %s:%s %s%s -- %s", when, (unsigned)(l->e.wall_ms % 1000u), alert,
		 l->e.comm, l->e.pid, l->e.cpu, l->e.system, l->e.name, fields, rep, l->e.story ? l->e.story : "");
}

static int by_time(const void *a, const void *b)
{
	const hs_live_event *x = a, *y = b;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* Moves the observer's events into the list in time order (the backend
 * streams CPU by CPU), collapsing repeats: the same event of the same task
 * name in a row is one line with a count. Plain mode prints them instead. */
static size_t take_events(hs_live *lv, FILE *plain)
{
	hs_mutex_lock(&lv->mu);
	size_t n = 0;
	while (lv->r_len && !lv->paused) {
		lv->batch[n++] = lv->ring[lv->r_head];
		lv->r_head = (lv->r_head + 1) % HS_LIVE_RING_EVENTS;
		lv->r_len--;
	}
	hs_mutex_unlock(&lv->mu);
	qsort(lv->batch, n, sizeof *lv->batch, by_time);
	for (size_t i = 0; i < n; i++) {
		const hs_live_event *e = &lv->batch[i];
		view_line *last = lv->l_len ? &lv->lines[(lv->l_head + lv->l_len - 1) % HS_LIVE_HISTORY_LINES] : NULL;
		if (e->alert) {
			lv->alert.count = lv->alert.count && !strcmp(lv->alert.e.name, e->name) &&
							  !strcmp(lv->alert.e.comm, e->comm)
						  ? lv->alert.count + 1
						  : 1;
			lv->alert.e = *e;
		}
		if (plain) {
			view_line one = {.e = *e, .count = 1};
			char buf[1024];
			line_event(&one, buf, sizeof buf);
			fprintf(plain, "event: %s%s\n", e->alert ? "! " : "", buf);
		} else if (last && !strcmp(last->e.name, e->name) && !strcmp(last->e.system, e->system) &&
			   !strcmp(last->e.comm, e->comm)) {
			last->e = *e;
			last->count++;
		} else {
			size_t at = (lv->l_head + lv->l_len) % HS_LIVE_HISTORY_LINES;
			if (lv->l_len == HS_LIVE_HISTORY_LINES)
				lv->l_head = (lv->l_head + 1) % HS_LIVE_HISTORY_LINES;
			else
				lv->l_len++;
			lv->lines[at] = (view_line){.e = *e, .count = 1};
		}
	}
	return n;
}

/* ---- plain lines ---- */

static void tick_plain(hs_live *lv, const hs_run_status *st, bool status_new)
{
	FILE *out = lv->o.out ? lv->o.out : stdout;
	if (status_new) {
		char buf[512];
		line_recorder(st, buf, sizeof buf);
		fprintf(out, "live: %s\n", buf);
		for (size_t i = 0; i < st->n_sessions; i++) {
			line_session(&st->sessions[i], buf, sizeof buf);
			fprintf(out, "live: %s\n", buf);
		}
		for (size_t i = 0; i < st->n_triggers; i++) {
			line_trigger(&st->triggers[i], buf, sizeof buf);
			fprintf(out, "live: %s\n", buf);
		}
		if (line_verdict(st, buf, sizeof buf))
			fprintf(out, "live: verdict: %s\n", buf);
	}
	if (take_events(lv, out) || status_new)
		fflush(out);
}

/* ---- full screen ---- */

#ifdef HS_HAVE_CURSES
static bool begin_curses(hs_live *lv)
{
	int in = dup(0), out = lv->o.tty_fd;
	if (in < 0 || out < 0 || !(lv->tty_in = fdopen(in, "r")) || !(lv->tty_out = fdopen(out, "w"))) {
		if (lv->tty_in)
			fclose(lv->tty_in);
		else if (in >= 0)
			close(in);
		lv->tty_in = NULL;
		return false;
	}
	lv->o.tty_fd = -1; /* tty_out owns it */
	if (!(lv->scr = newterm(NULL, lv->tty_out, lv->tty_in)))
		return false;
	set_term(lv->scr);
	cbreak(); /* not raw: Ctrl+C still stops the recording */
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	if (has_colors() && start_color() == OK) {
		use_default_colors();
		init_pair(1, COLOR_RED, -1);
		init_pair(2, COLOR_CYAN, -1);
		lv->colors = true;
	}
	if (lv->o.log_path)
		lv->log = fopen(lv->o.log_path, "a");
	return true;
}

static void put_line(int y, const char *text, attr_t attr)
{
	move(y, 0);
	clrtoeol();
	if (attr)
		attron(attr);
	addnstr(text, COLS > 0 ? COLS : 80);
	if (attr)
		attroff(attr);
}

static void draw(hs_live *lv, const hs_run_status *st)
{
	char buf[1024];
	int y = 0;
	erase();
	line_recorder(st, buf, sizeof buf);
	put_line(y++, buf, A_BOLD);
	for (size_t i = 0; i < st->n_sessions && y < LINES; i++) {
		line_session(&st->sessions[i], buf, sizeof buf);
		put_line(y++, buf, 0);
	}
	for (size_t i = 0; i < st->n_triggers && y < LINES; i++) {
		line_trigger(&st->triggers[i], buf, sizeof buf);
		put_line(y++, buf, 0);
	}
	if (y < LINES && line_verdict(st, buf + 9, sizeof buf - 9)) {
		/* The newest snapshot's verdict stays in view too (run/capture.h). */
		memcpy(buf, "verdict: ", 9);
		put_line(y++, buf, A_BOLD | (lv->colors ? COLOR_PAIR(1) : A_REVERSE));
	}
	if (lv->alert.count && y < LINES) {
		/* The newest alert stays in view however many events follow it. */
		static const char head[] = "latest alert: ";
		memcpy(buf, head, sizeof head - 1);
		line_event(&lv->alert, buf + sizeof head - 1, sizeof buf - (sizeof head - 1));
		put_line(y++, buf, A_BOLD | (lv->colors ? COLOR_PAIR(1) : A_REVERSE));
	}
	hs_mutex_lock(&lv->mu);
	/* The newest two messages (snapshots taken, warnings). */
	for (size_t k = lv->m_len > 2 ? lv->m_len - 2 : 0; k < lv->m_len && y < LINES; k++) {
		size_t at = (lv->m_next + HS_LIVE_MESSAGES - lv->m_len + k) % HS_LIVE_MESSAGES;
		put_line(y++, lv->msgs[at], lv->colors ? COLOR_PAIR(2) : 0);
	}
	uint64_t lost = lv->r_lost;
	hs_mutex_unlock(&lv->mu);
	if (lv->editing)
		snprintf(buf, sizeof buf, "-- key events -- filter: %s_  (Enter applies, Esc clears)", lv->edit);
	else
		snprintf(buf, sizeof buf, "-- key events --%s%s%s%s  [p] %s  [/] filter  Ctrl+C stops", lv->paused ? " PAUSED" : "",
			 lv->filter[0] ? " filter: " : "", lv->filter, lost ? " (some not shown: too many at once)" : "",
			 lv->paused ? "resume" : "pause");
	put_line(y++, buf, A_REVERSE);
	/* The newest events that pass the filter, oldest at the top. */
	int rows = LINES - y;
	if (rows <= 0) {
		refresh();
		return;
	}
	size_t *show = calloc((size_t)rows, sizeof *show);
	int n = 0;
	for (size_t k = lv->l_len; k-- > 0 && n < rows && show;) {
		const view_line *l = &lv->lines[(lv->l_head + k) % HS_LIVE_HISTORY_LINES];
		if (lv->filter[0]) {
			line_event(l, buf, sizeof buf);
			if (!strstr(buf, lv->filter))
				continue;
		}
		show[n++] = k;
	}
	for (int i = n; i-- > 0;) {
		const view_line *l = &lv->lines[(lv->l_head + show[i]) % HS_LIVE_HISTORY_LINES];
		line_event(l, buf, sizeof buf);
		attr_t a = l->e.alert ? (A_BOLD | (lv->colors ? COLOR_PAIR(1) : A_REVERSE)) : 0;
		put_line(y++, buf, a);
	}
	free(show);
	refresh();
}

/* Keys change only what is drawn. True when the screen should be redrawn. */
static bool read_keys(hs_live *lv)
{
	bool changed = false;
	for (int ch; (ch = getch()) != ERR;) {
		changed = true;
		if (lv->editing) {
			size_t n = strlen(lv->edit);
			if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
				snprintf(lv->filter, sizeof lv->filter, "%s", lv->edit);
				lv->editing = false;
			} else if (ch == 27) {
				lv->filter[0] = lv->edit[0] = 0;
				lv->editing = false;
			} else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n) {
				lv->edit[n - 1] = 0;
			} else if (ch >= 32 && ch < 127 && n + 1 < sizeof lv->edit) {
				lv->edit[n] = (char)ch;
				lv->edit[n + 1] = 0;
			}
		} else if (ch == 'p' || ch == ' ') {
			lv->paused = !lv->paused;
		} else if (ch == '/') {
			lv->editing = true;
			snprintf(lv->edit, sizeof lv->edit, "%s", lv->filter);
		} else if (ch == 27) {
			lv->filter[0] = 0;
		}
	}
	return changed;
}
#endif

void hs_live_tick(hs_live *lv, const hs_run_status *st, bool status_new)
{
	if (!lv || lv->ended || !st->updates)
		return;
#ifdef HS_HAVE_CURSES
	if (lv->o.curses) {
		if (!lv->begun) {
			bool ok = begin_curses(lv);
			hs_mutex_lock(&lv->mu);
			lv->begun = true;
			if (!ok) {
				/* No usable terminal after all: plain lines from here. */
				if (lv->scr) {
					endwin();
					delscreen(lv->scr);
					lv->scr = NULL;
				}
				lv->o.curses = false;
			}
			hs_mutex_unlock(&lv->mu);
			status_new = true;
		}
		if (lv->o.curses) {
			bool keys = read_keys(lv);
			take_events(lv, NULL);
			hs_mutex_lock(&lv->mu);
			bool msgs = lv->msgs_new;
			lv->msgs_new = false;
			hs_mutex_unlock(&lv->mu);
			/* Events alone wait for the next status (once a second): a
			 * storm must not cost a redraw per wake-up. */
			if (status_new || keys || msgs)
				draw(lv, st);
			return;
		}
	}
#endif
	tick_plain(lv, st, status_new);
}

void hs_live_end(hs_live *lv)
{
	if (!lv)
		return;
	hs_mutex_lock(&lv->mu);
	lv->ended = true; /* from now on the sinks print as usual */
	hs_mutex_unlock(&lv->mu);
#ifdef HS_HAVE_CURSES
	if (lv->scr) {
		endwin();
		delscreen(lv->scr);
		lv->scr = NULL;
	}
	if (lv->tty_out)
		fclose(lv->tty_out);
	if (lv->tty_in)
		fclose(lv->tty_in);
	lv->tty_out = lv->tty_in = NULL;
#endif
	if (lv->log)
		fclose(lv->log);
	lv->log = NULL;
}

void hs_live_free(hs_live *lv)
{
	if (!lv)
		return;
	hs_live_end(lv);
#ifndef _WIN32
	if (lv->o.tty_fd >= 0)
		close(lv->o.tty_fd); /* never handed to the screen */
#endif
	hs_mutex_destroy(&lv->mu);
	free(lv->lines);
	free(lv->batch);
	free(lv->ring);
	free(lv);
}
