/* report/find/common.h: what several finding detectors share: the detector table's entry, the exit after an event, the kernel's lines near one, begin/end pairs, exit statuses in words, findings made of every event of one shape. */
#ifndef HS_REPORT_FIND_COMMON_H
#define HS_REPORT_FIND_COMMON_H

#include "report/model.h"

/* The words of a finding made of every event of one shape (hs_rpt_detector_run): "N <what>s", the verdict
 * "N <what>s, the first at T s: <detail>." (or `verdict`'s when given, made from the first event, the count and the
 * time), the text the first event's detail. Events the catalog names but has no decoded detail for
 * (`catalog_named`) are titled "N <what> events: SYSTEM/NAME first" and told by the first one's story. */
typedef struct {
	const char *what, *next;
	bool catalog_named;
	void (*verdict)(hs_report *r, hs_rpt_finding *f, const hs_rpt_event *first, size_t n, const char *when);
} hs_rpt_shape_words;

/* One finding detector (find.c's table, one file under find/ each): the kind of finding it makes, its usual
 * impact (some grade it), the platforms whose recordings carry its events today (HS_RPT_LINUX | HS_RPT_WINDOWS:
 * a verdict that found nothing names it for those; every detector still reads every event, as a catalog may
 * tag any event), the noun a verdict names when nothing of the kind was found ("no crash, ..."; NULL: not
 * named), and the function. A detector without one makes a finding of kind and impact from every event of
 * `shape` with alert tag `tag` (NULL: any tag none of `skip_tags` names), in `words`, or `windows_words` when
 * the first such event is from a Windows recording and it has them. */
typedef struct {
	const char *kind;
	int impact;
	unsigned platforms;
	const char *noun;
	void (*find)(hs_report *r);
	hs_decoded_kind shape;
	const char *tag;
	const char *const *skip_tags;
	const hs_rpt_shape_words *words, *windows_words;
} hs_rpt_detector;
/* Runs a detector: its function, or the finding of every event of its shape. */
void hs_rpt_detector_run(hs_report *r, const hs_rpt_detector *d);

/* The process exit (shape HS_DEC_EXIT, the process, not a thread) of pid within 10 s after event i, or SIZE_MAX. */
size_t hs_rpt_exit_after(const hs_report *r, size_t i, int64_t pid);
/* That exit as evidence of f, and "; it exited 12 ms later" in tail ("" when there is none). */
void hs_rpt_exit_tail(hs_report *r, hs_rpt_finding *f, size_t i, int64_t pid, char *tail, size_t cap);
/* The start (HS_DEC_EXEC) of pid before event i in the same file, or SIZE_MAX. */
size_t hs_rpt_start_before(const hs_report *r, size_t i, int64_t pid);
/* Kernel log lines within 2 s of event i that name pid ("[pid]" or "process pid "), or contain one of words
 * (NULL-terminated, may be NULL), as evidence of f. */
void hs_rpt_console_near(hs_report *r, hs_rpt_finding *f, size_t i, int64_t pid, const char *const *words);
/* The device-level alert (a catalog alert, an I/O error, a hang) nearest before event i in its file (within
 * 10 s), or SIZE_MAX: a crash after a GPU reset or a device removal is probably its consequence. */
size_t hs_rpt_alert_before(const hs_report *r, size_t i);
/* |b - a| as "12 ms" or "1.5 s". */
void hs_rpt_rel_ms(uint64_t a, uint64_t b, char *buf, size_t cap);
/* An exit code as its format writes it: "status 3" (a POSIX status), "status 0x8007042B" and its NTSTATUS name
 * when it has one (Windows). */
void hs_rpt_status_text(const hs_rpt_event *e, char *buf, size_t cap);

/* A begin..end span of one task: a reclaim stall or a system call. */
typedef struct {
	size_t b, e; /* event indices */
	uint64_t ns;
} hs_rpt_span;
/* Pairs begin and end events of one task (same pid and file, same subject) in time order, the longest first. */
size_t hs_rpt_pair_spans(hs_report *r, hs_decoded_kind begin, hs_decoded_kind end, hs_rpt_span **out);

/* The detectors, in the order find.c runs them (each file defines its own). */
extern const hs_rpt_detector hs_rpt_find_trigger_marker, hs_rpt_find_frame_hitch, hs_rpt_find_freeze, hs_rpt_find_crash,
	hs_rpt_find_killed, hs_rpt_find_oom_kill, hs_rpt_find_hang, hs_rpt_find_io_error, hs_rpt_find_gpu_reset,
	hs_rpt_find_device_removed, hs_rpt_find_disconnect, hs_rpt_find_alert, hs_rpt_find_process_storm,
	hs_rpt_find_retransmit, hs_rpt_find_memory_stall, hs_rpt_find_slow_syscall, hs_rpt_find_silent_death,
	hs_rpt_find_exit_status, hs_rpt_find_activity;

#endif
