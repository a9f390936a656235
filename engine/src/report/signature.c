/* report/signature.c: the fleet signature of a report (report.json's flat `signature` block, docs/fleet.md): the symptom, the program, the cause and culprit in normalized words, the machine and its OS, how complete the record was, the sample weight, and the signature string and bucket id the rules' fleet: grouping makes of them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/utsname.h>
#endif

#include "hindsight/diag.h"
#include "hindsight/etl.h"
#include "hindsight/etl_kernel.h"
#include "hindsight/hmap.h"
#include "hindsight/plan.h"
#include "hindsight/regex.h"
#include "hindsight/rundoc.h"
#include "report/model.h"

/* The fleet rules: the report's own rules', else the shipped fleet.yaml found as every rules file is found (loaded
 * into *owned, freed by the caller once the signature is made: everything kept is copied). */
static const hs_fleet_rules *fleet_rules(hs_report *r, const hs_ruleset *rules, hs_ruleset **owned, hs_diags **diags)
{
	*owned = NULL;
	*diags = NULL;
	if (rules && rules->fleet.present)
		return &rules->fleet;
	*owned = hs_rpt_shipped_rules(r, "fleet.yaml", diags);
	return *owned && (*owned)->fleet.present ? &(*owned)->fleet : NULL;
}

/* s into dst, cut at a character when it does not fit. */
static void copy(char *dst, size_t cap, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n >= cap) {
		n = cap - 1;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	if (n)
		memcpy(dst, s, n);
	dst[n] = '\0';
}

static const char *base_name(const char *p)
{
	const char *b = p;
	for (const char *s = p; *s; s++)
		if (*s == '/' || *s == '\\')
			b = s + 1;
	return b;
}

/* A culprit's name in words that do not change from machine to machine: a path keeps only its last part, a hex
 * number is 0xN, every other run of digits N (pids, CPU numbers, instance numbers), spaces collapsed. */
static void normalize(const char *in, char *out, size_t cap)
{
	size_t o = 0;
	const char *p = in;
	while (*p && o + 1 < cap) {
		bool tok_start = p == in || p[-1] == ' ';
		if (tok_start && (*p == '/' || *p == '\\' ||
				  (((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') && p[1] == ':' && (p[2] == '\\' || p[2] == '/')))) {
			const char *e = p;
			while (*e && *e != ' ')
				e++;
			const char *b = p;
			for (const char *s = p; s < e; s++)
				if (*s == '/' || *s == '\\')
					b = s + 1;
			p = b; /* the path's last part, read on as ordinary text */
			if (p == e)
				continue;
		}
		if (*p == '0' && (p[1] == 'x' || p[1] == 'X') &&
		    ((p[2] >= '0' && p[2] <= '9') || ((p[2] | 0x20) >= 'a' && (p[2] | 0x20) <= 'f'))) {
			p += 2;
			while ((*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'))
				p++;
			if (o + 3 < cap) {
				memcpy(out + o, "0xN", 3);
				o += 3;
			}
			continue;
		}
		if (*p >= '0' && *p <= '9') {
			while (*p >= '0' && *p <= '9')
				p++;
			out[o++] = 'N';
			continue;
		}
		if (*p == ' ' || *p == '\t') {
			while (*p == ' ' || *p == '\t')
				p++;
			if (o && *p)
				out[o++] = ' ';
			continue;
		}
		out[o++] = *p == '|' ? '/' : *p; /* '|' separates the signature's fields */
		p++;
	}
	out[o] = '\0';
}

static bool matches(const char *pattern, const char *subject)
{
	hs_regex *re = NULL;
	char err[80];
	size_t off;
	if (hs_regex_compile(pattern, &re, err, sizeof err, &off) != HS_OK)
		return false; /* rulecheck refuses it (HS114); a report goes on */
	bool m = hs_regex_match(re, subject);
	hs_regex_free(re);
	return m;
}

/* ---- the symptom ---- */

static const hs_fleet_symptom *symptom_of(const hs_report *r, const hs_fleet_rules *fl)
{
	const hs_rpt_finding *f = r->n_findings ? &r->findings[0] : NULL;
	for (size_t i = 0; f && f->impact >= (int)fl->min_impact && i < fl->n_symptoms; i++)
		for (size_t k = 0; k < fl->symptoms[i].n_findings; k++)
			if (!strcmp(fl->symptoms[i].findings[k], f->kind))
				return &fl->symptoms[i];
	for (size_t i = 0; r->trig.present && i < fl->n_symptoms; i++)
		for (size_t k = 0; k < fl->symptoms[i].n_triggers; k++)
			if (!strcmp(fl->symptoms[i].triggers[k], r->trig.kind))
				return &fl->symptoms[i];
	for (size_t i = 0; i < fl->n_symptoms; i++)
		if (!strcmp(fl->symptoms[i].id, fl->otherwise))
			return &fl->symptoms[i];
	return NULL;
}

/* ---- detail: how the lead process died, in its platform's words ---- */

static void detail_of(const hs_report *r, char *out, size_t cap)
{
	out[0] = '\0';
	if (!r->n_findings)
		return;
	const hs_rpt_finding *f = &r->findings[0];
	for (size_t i = 0; i < f->n_ev && !out[0]; i++) {
		const hs_rpt_event *e = &r->events[f->ev[i]];
		char sb[24];
		if (e->shape == HS_DEC_SIG_DELIVER && e->pid == f->pid && e->v[1]) {
			copy(out, cap, hs_linux_signal_name(e->v[0], sb, sizeof sb));
		} else if (e->shape == HS_DEC_EXIT && e->v[0] == f->pid && e->end == HS_RPT_END_CRASH) {
			const char *n = hs_ntstatus_name((uint32_t)e->end_code);
			snprintf(out, cap, "0x%08" PRIX32 "%s%s", (uint32_t)e->end_code, n ? " " : "", n ? n : "");
		} else if (e->shape == HS_DEC_EXIT && e->v[0] == f->pid && e->end == HS_RPT_END_SIGNAL) {
			copy(out, cap, hs_linux_signal_name(e->end_code, sb, sizeof sb));
		}
	}
}

/* ---- app: the executable of the process the verdict is about ---- */

/* A name the trace gives for a task it could not name ("?" from an .etl without the image, "<...>" from ftrace). */
static bool known_name(const char *n)
{
	return n[0] && strcmp(n, "?") != 0 && strcmp(n, "<...>") != 0 && strcmp(n, "<idle>") != 0;
}

static bool is_interpreter(const hs_fleet_rules *fl, const char *name)
{
	for (size_t i = 0; i < fl->n_interpreters; i++)
		if (matches(fl->interpreters[i], name))
			return true;
	return false;
}

/* The Linux name of a process: its exec's file (when the record holds it whole), else the name its process or main
 * thread goes by in the trace; cut to a task name's length so either way signs alike. */
static void app_of(const hs_report *r, const hs_fleet_rules *fl, hs_rpt_signature *s)
{
	const hs_rpt_finding *f = r->n_findings ? &r->findings[0] : NULL;
	int pid = f ? f->pid : (int)r->trig.hit_pid;
	if (!f || f->impact < (int)fl->min_impact)
		pid = r->trig.present && r->trig.hit_pid > 0 ? (int)r->trig.hit_pid : -1;
	if (pid <= 0) {
		copy(s->app_note, sizeof s->app_note, "the verdict is about no process");
		return;
	}
	int tid = f && f->pid == pid && f->tid > 0 ? f->tid : pid;
	int tgid = r->why.analysed && r->why.tid == tid && r->why.tgid > 0 ? r->why.tgid : pid;
	bool windows = false;
	const char *exe = NULL, *main_comm = NULL, *thread_comm = NULL;
	for (size_t i = 0; i < r->n_events; i++) {
		const hs_rpt_event *e = &r->events[i];
		if (f && e->ts > f->ts + 1000000000ull && exe)
			break;
		if (e->shape == HS_DEC_EXEC && e->v[0] == tgid && known_name(e->subject)) {
			/* a file name cut at the record's size would sign as another program */
			if (strlen(e->subject) + 1 < sizeof e->subject || e->platform == HS_RPT_WINDOWS)
				exe = e->subject;
			windows = e->platform == HS_RPT_WINDOWS;
		} else if (e->shape == HS_DEC_EXIT && e->v[0] == tgid && e->platform == HS_RPT_WINDOWS &&
			   known_name(e->subject)) {
			exe = exe ? exe : e->subject;
			windows = true;
		}
		if (e->pid == tgid && known_name(e->comm) && !main_comm)
			main_comm = e->comm;
		if (e->pid == tid && known_name(e->comm) && !thread_comm)
			thread_comm = e->comm;
	}
	/* the main thread's name as it was at the moment: a process that renamed itself after its exec (prctl,
	 * setproctitle) goes by its new name, and an interpreter's script is named by it */
	const char *at = hs_rpt_comm_at(r, tgid, r->moment);
	if (at && known_name(at))
		main_comm = at;
	const char *name = NULL;
	if (exe) {
		name = base_name(exe);
	} else if (r->why.analysed && r->why.tgid == tgid && (known_name(r->why.process) || known_name(r->why.comm))) {
		name = known_name(r->why.process) ? r->why.process : r->why.comm;
		copy(s->app_note, sizeof s->app_note, "the trace holds no exec of the process: the name it goes by");
	} else if (main_comm) {
		name = main_comm;
		copy(s->app_note, sizeof s->app_note, "the trace holds no exec of the process: its main thread's name");
	} else if (thread_comm) {
		name = thread_comm;
		copy(s->app_note, sizeof s->app_note,
		     "the trace names neither the process's exec nor its main thread: the thread's own name");
	}
	if (!name || !name[0]) {
		copy(s->app_note, sizeof s->app_note, "the trace does not name the process");
		return;
	}
	copy(s->app, sizeof s->app, name);
	if (!windows && strlen(s->app) > HS_LINUX_COMM_MAX)
		s->app[HS_LINUX_COMM_MAX] = '\0';
	if (is_interpreter(fl, s->app)) {
		/* the script is the app when the process renamed itself after it (node's process.title, setproctitle) */
		const char *renamed = main_comm && strcmp(main_comm, s->app) && !is_interpreter(fl, main_comm) ? main_comm : NULL;
		if (renamed) {
			snprintf(s->app_note, sizeof s->app_note, "%s ran it (an interpreter): the name the process gave itself",
				 s->app);
			copy(s->app, sizeof s->app, renamed);
		} else {
			snprintf(s->app_note, sizeof s->app_note,
				 "%s is an interpreter; the script it ran is not in the trace (a #! script is named by its exec)",
				 s->app);
		}
	}
}

/* ---- cause and culprit: the explained lead finding's ---- */

static void culprit_of(const hs_fleet_rules *fl, const hs_cause_reason *top, hs_rpt_signature *s)
{
	if (!top || !top->has_culprit)
		return;
	const char *raw = top->culprit.is_task ? top->culprit.name : top->culprit.what;
	char n[sizeof s->culprit];
	normalize(raw, n, sizeof n);
	for (size_t i = 0; i < fl->n_culprits; i++) {
		if (!matches(fl->culprits[i].match, n))
			continue;
		copy(s->culprit, sizeof s->culprit, fl->culprits[i].as); /* no `as`: it blames no one */
		return;
	}
	copy(s->culprit, sizeof s->culprit, n);
}

/* ---- the machine and its OS ---- */

static void os_of(const hs_report *r, hs_rpt_signature *s)
{
	unsigned pf = r->platforms;
	if (r->n_findings) {
		const hs_rpt_finding *f = &r->findings[0];
		for (size_t i = 0; i < f->n_ev; i++)
			pf = r->events[f->ev[i]].platform ? r->events[f->ev[i]].platform : pf;
	}
	if (pf & HS_RPT_WINDOWS) {
		copy(s->os, sizeof s->os, "windows");
		for (size_t i = 0; i < r->n_files && !s->os_build[0]; i++) {
			if (!r->files[i].etl || !r->files[i].opened)
				continue;
			hs_etl *etl = NULL;
			if (hs_etl_open(r->files[i].path, &etl) == HS_OK) {
				const hs_etl_header *h = hs_etl_get_header(etl);
				if (h && h->valid && h->provider_version) /* ProviderVersion is the build number */
					snprintf(s->os_build, sizeof s->os_build, "%u.%u.%" PRIu32, h->version[0], h->version[1],
						 h->provider_version);
				else if (h && h->valid)
					copy(s->os_note, sizeof s->os_note,
					     "os_build: the .etl's logfile header gives no build (its ProviderVersion is 0)");
			}
			hs_etl_close(etl);
		}
		if (!s->os_build[0] && !s->os_note[0])
			copy(s->os_note, sizeof s->os_note, "os_build: no .etl here has a logfile header naming the Windows build");
		return;
	}
	if (!(pf & HS_RPT_LINUX))
		return;
	copy(s->os, sizeof s->os, "linux");
#ifndef _WIN32
	if (r->opts.own_files) {
		/* the engine reports its own snapshot on the machine that recorded it: that machine's facts */
		struct utsname u;
		if (uname(&u) == 0) {
			copy(s->os_build, sizeof s->os_build, u.release);
			copy(s->host, sizeof s->host, u.nodename);
		}
		/* machine-id(5): confidential, so only a keyed hash of it leaves the machine */
		static const char *const id_files[] = {"/etc/machine-id", "/var/lib/dbus/machine-id"};
		for (size_t i = 0; i < sizeof id_files / sizeof id_files[0] && !s->machine[0]; i++) {
			FILE *fp = fopen(id_files[i], "r");
			char id[64] = "";
			if (fp && fgets(id, sizeof id, fp) && strlen(id) >= 32) {
				char keyed[96];
				int n = snprintf(keyed, sizeof keyed, "hindsight fleet machine %.32s", id);
				snprintf(s->machine, sizeof s->machine, "%016" PRIx64, hs_hash_bytes(keyed, (size_t)n));
			}
			if (fp)
				fclose(fp);
		}
		return;
	}
#endif
	copy(s->os_note, sizeof s->os_note,
	     "os_build, machine, host: a trace.dat does not record the kernel release or the machine; the engine's "
	     "capture-time report does");
}

/* ---- quality: what the record lost ---- */

static void quality_of(const hs_report *r, const hs_fleet_rules *fl, hs_rpt_signature *s)
{
	bool unread = false;
	for (size_t i = 0; i < r->n_files; i++) {
		const hs_rpt_file *f = &r->files[i];
		unread |= !f->opened;
		s->lost_events += f->missed;
		s->lost_events += f->events_lost > 0 ? (uint64_t)f->events_lost : 0;
		s->lost_events += f->ring_dropped > 0 ? (uint64_t)f->ring_dropped : 0;
		s->lost_unknown |= f->missed_unknown > 0;
	}
	s->covered_share = -1;
	if (r->why.analysed && r->why.w1 > r->why.w0) {
		uint64_t cov = r->why.cov1 > r->why.cov0 ? r->why.cov1 - r->why.cov0 : 0;
		s->covered_share = (double)cov / (double)(r->why.w1 - r->why.w0);
	} else if (r->thread.present && r->thread.analysed && r->thread.w1 > r->thread.w0) {
		uint64_t cov = r->thread.cov1 > r->thread.cov0 ? r->thread.cov1 - r->thread.cov0 : 0;
		s->covered_share = (double)cov / (double)(r->thread.w1 - r->thread.w0);
	}
	if (s->covered_share > 1)
		s->covered_share = 1;
	const char *q = "complete";
	if (unread || r->damaged)
		q = "damaged";
	else if (s->lost_events || s->lost_unknown)
		q = "lossy";
	else if (s->covered_share >= 0 && 100.0 * s->covered_share < (double)fl->covered_pct)
		q = "partial";
	copy(s->quality, sizeof s->quality, q);
}

/* snapshot.json's weight: 1 / the trigger's chance (1 when it fires every time, or for no snapshot). */
static double weight_of(const hs_report *r)
{
	if (!r->input_kind || strcmp(r->input_kind, "snapshot") != 0)
		return 1;
	hs_strbuf p = {0};
	hs_sb_printf(&p, "%s/snapshot.json", r->input);
	hs_arena a = {0};
	hs_rundoc_snapshot d = {0};
	double w = 1;
	if (!p.oom && hs_rundoc_snapshot_read(hs_sb_cstr(&p), &a, &d) == HS_OK && d.weight >= 1)
		w = d.weight;
	hs_arena_free(&a);
	hs_sb_free(&p);
	return w;
}

/* ---- the signature string and its bucket ---- */

static const char *field_value(const hs_rpt_signature *s, hs_fleet_field f)
{
	switch (f) {
	case HS_FLEET_FIELD_APP: return s->app;
	case HS_FLEET_FIELD_DETAIL: return s->detail;
	case HS_FLEET_FIELD_CAUSE: return s->cause;
	case HS_FLEET_FIELD_CULPRIT: return s->culprit;
	case HS_FLEET_FIELD_OS: return s->os;
	case HS_FLEET_FIELD_COUNT: break;
	}
	return "";
}

/* "crash | hs_segv | SIGSEGV": the symptom and its fields, "-" for none, cut to HS_FLEET_SIGNATURE_MAX bytes at a
 * character; the bucket is FNV-1a 64 of the version and the whole fields (docs/fleet.md gives the bytes), so a cut
 * never merges two buckets. */
static void sign(const hs_fleet_symptom *sy, hs_rpt_signature *s)
{
	hs_strbuf text = {0}, key = {0};
	hs_sb_printf(&key, "hindsight-fleet\x1f%" PRIu64 "\x1f%s", s->sig_version, s->symptom);
	hs_sb_printf(&text, "%s", s->symptom);
	for (size_t i = 0; i < sy->n_fields; i++) {
		const char *v = field_value(s, sy->fields[i]);
		hs_sb_printf(&text, " | %s", v[0] ? v : "-");
		hs_sb_printf(&key, "\x1f%s", v);
	}
	const char *t = text.oom ? "" : hs_sb_cstr(&text);
	size_t n = strlen(t);
	if (n > HS_FLEET_SIGNATURE_MAX) {
		n = HS_FLEET_SIGNATURE_MAX;
		while (n && ((unsigned char)t[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(s->signature, t, n);
	s->signature[n] = '\0';
	snprintf(s->bucket_id, sizeof s->bucket_id, "%016" PRIx64,
		 key.oom ? 0 : hs_hash_bytes(hs_sb_cstr(&key), strlen(hs_sb_cstr(&key))));
	hs_sb_free(&text);
	hs_sb_free(&key);
}

void hs_rpt_signature_build(hs_report *r, const hs_ruleset *rules)
{
	hs_rpt_signature *s = &r->sig;
	memset(s, 0, sizeof *s);
	s->covered_share = -1;
	s->weight = 1;
	hs_ruleset *owned = NULL;
	hs_diags *diags = NULL;
	const hs_fleet_rules *fl = fleet_rules(r, rules, &owned, &diags);
	const hs_fleet_symptom *sy = fl ? symptom_of(r, fl) : NULL;
	if (!fl || !sy) {
		copy(s->note, sizeof s->note,
		     fl ? "the fleet rules name no symptom for this report (their `otherwise` is missing)"
			: "no fleet rules: neither the rules nor a fleet.yaml beside them (no signature)");
		goto done;
	}
	s->present = true;
	s->sig_version = fl->version;
	copy(s->symptom, sizeof s->symptom, sy->id);
	const hs_cause_reason *top = r->why_finding == 0 ? hs_cause_top(&r->why) : NULL;
	if (top)
		copy(s->cause, sizeof s->cause, top->id);
	culprit_of(fl, top, s);
	detail_of(r, s->detail, sizeof s->detail);
	app_of(r, fl, s);
	os_of(r, s);
	quality_of(r, fl, s);
	s->weight = weight_of(r);
	copy(s->seen_at, sizeof s->seen_at, r->trig.taken_at);
	sign(sy, s);
done:
	hs_rules_free(owned);
	hs_diags_free(diags);
}

void hs_rpt_signature_json(const hs_report *r, hs_json *j)
{
	const hs_rpt_signature *s = &r->sig;
	hs_json_key(j, "signature");
	if (!s->present) {
		hs_json_null(j);
		return;
	}
#define STR_OR_NULL(k, v) hs_json_kstr(j, k, (v)[0] ? (v) : NULL)
	hs_json_obj_begin(j);
	hs_json_kuint(j, "sig_version", s->sig_version);
	hs_json_kstr(j, "signature", s->signature);
	hs_json_kstr(j, "bucket_id", s->bucket_id);
	hs_json_kstr(j, "symptom", s->symptom);
	STR_OR_NULL("cause", s->cause);
	STR_OR_NULL("culprit", s->culprit);
	STR_OR_NULL("detail", s->detail);
	STR_OR_NULL("app", s->app);
	STR_OR_NULL("app_version", s->app_version);
	STR_OR_NULL("os", s->os);
	STR_OR_NULL("os_build", s->os_build);
	STR_OR_NULL("machine", s->machine);
	STR_OR_NULL("host", s->host);
	STR_OR_NULL("seen_at", s->seen_at);
	hs_json_kdouble(j, "weight", s->weight, 6);
	hs_json_kstr(j, "quality", s->quality);
	hs_json_kuint(j, "lost_events", s->lost_events);
	hs_json_kbool(j, "lost_unknown", s->lost_unknown);
	hs_json_key(j, "covered_share");
	if (s->covered_share < 0)
		hs_json_null(j);
	else if (s->covered_share < 0.00005 || s->covered_share >= 0.99995)
		hs_json_int(j, s->covered_share < 0.5 ? 0 : 1); /* what 4 digits would round to a bound, as an integer:
								  * a checker that keeps 1.0 apart from 1 (tests/schema/
								  * check.mjs) sees no number past it */
	else
		hs_json_double(j, s->covered_share, 4);
	hs_json_key(j, "notes");
	hs_json_arr_begin(j);
	if (s->app_note[0])
		hs_json_str(j, s->app_note);
	if (!s->app_version[0])
		hs_json_str(j, "app_version: the records name no build-id or version of the program (ftrace's records carry "
			       "none; an .etl's process events are read without their image's version)");
	if (s->os_note[0])
		hs_json_str(j, s->os_note);
	hs_json_arr_end(j);
	hs_json_obj_end(j);
#undef STR_OR_NULL
}

void hs_rpt_signature_line(const hs_report *r, char *out, size_t cap)
{
	const hs_rpt_signature *s = &r->sig;
	if (!s->present)
		snprintf(out, cap, "%s", s->note);
	else
		snprintf(out, cap, "signature: %s  (bucket %s, sig_version %" PRIu64 ")", s->signature, s->bucket_id,
			 s->sig_version);
}
