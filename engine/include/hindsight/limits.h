/* hindsight/limits.h: every hard limit in one place, each with the reason it exists. */
#ifndef HINDSIGHT_LIMITS_H
#define HINDSIGHT_LIMITS_H

/* ETW: MAX_EVENT_FILTER_EVENT_ID_COUNT. EnableTraceEx2 rejects an EVENT_ID filter
 * with more IDs, so a session may whitelist at most this many per provider. */
#define HS_ETW_MAX_FILTER_IDS 64

/* ETW: at most 8 filter descriptors in one EnableTraceEx2 call (each type once). */
#define HS_ETW_MAX_FILTERS_PER_ENABLE 8

/* ETW: TraceStackTracingInfo takes at most 256 CLASSIC_EVENT_ID entries. */
#define HS_ETW_MAX_STACK_CLASSIC_IDS 256

/* ETW: EVENT_TRACE_PROPERTIES.BufferSize is in KB, 4 .. 16384 since Windows 8
 * (1024 before). Outside this StartTrace fails with ERROR_INVALID_PARAMETER. */
#define HS_ETW_MIN_BUFFER_KB 4
#define HS_ETW_MAX_BUFFER_KB 16384

/* ETW: session and log file names may be up to 1024 characters each; control
 * calls must reserve this much room for both or fail with ERROR_MORE_DATA. */
#define HS_ETW_MAX_NAME_CHARS 1024

/* ETW: the sampled-profile interval is set in 100 ns units; Windows accepts
 * 1221 (about 8 kHz) up to 1 s. We express it as a rate, so bound the rate. */
#define HS_ETW_MIN_SAMPLE_HZ 1
#define HS_ETW_MAX_SAMPLE_HZ 8192

/* Event IDs are USHORT in EVENT_DESCRIPTOR. */
#define HS_MAX_EVENT_ID 65535
/* engine --plan --cpus N: the machine a plan is sized for; more CPUs than any
 * machine has, as the trace readers' per-file limits (HS_TRACEDAT_MAX_CPUS). */
#define HS_PLAN_MAX_CPUS 4096

/* Linux: perf_event_max_sample_rate defaults to 100000 on these kernels; the
 * kernel throttles above it, so a higher rate is a rules error, not a wish. */
#define HS_LINUX_MAX_SAMPLE_HZ 100000

/* Linux: a tracefs per-CPU ring below one 4 KiB page is rounded up; we
 * require at least 4 KB so the plan shows what the kernel will really use. */
#define HS_LINUX_MIN_BUFFER_KB 4

/* Linux: tracefs instance names become directory names under instances/. */
#define HS_LINUX_MAX_INSTANCE_CHARS 64

/* Linux: a file-circular session keeps this many chunk files per CPU; the
 * oldest is dropped when a new one starts past max_file_mb. More chunks drop
 * less history at a time (1/N of the bound) but rebuild the file from more
 * pieces; 8 keeps each drop at 12.5% of the bound. */
#define HS_LINUX_STREAM_CHUNKS 8

/* Linux: a file-circular session's output file is rewritten from its chunks
 * (which reach the disk every flush interval) at most so often that the
 * rewrites (each writes the events twice: a per-CPU copy and the file) average
 * this many bytes per second. A full 64 MB key-event file rewritten every 5 s
 * made the engine write 483 MB in 20 quiet seconds; at 1 MB/s it is rewritten
 * every ~2 minutes, and files up to 2.5 MB still follow every 5 s flush. */
#define HS_LINUX_REBUILD_BYTES_PER_S (1024.0 * 1024.0)

/* Linux: the streaming reader wakes at least this often. Measured: one splice
 * per 50 ms lost 9.2M of 9.7M events under stress, so every wake-up drains each
 * CPU until empty; 50 ms keeps a 1 MB per-CPU ring far from full at 1.4 MB/s. */
#define HS_LINUX_STREAM_WAKE_MS 50

/* ---- Linux: a watched key session's trigger-detection instance (ftrace/backend.c, docs/triggers.md
 * "Detection latency") ---- */
/* Its tracefs instance name: the session's logger_name and this suffix. A
 * second instance that records only the events the triggers watch, read with
 * partial pages on every wake-up, so a trigger sees a crash within a wake-up
 * instead of at the key session's next flush. Mechanism, not policy: it pairs
 * with the session's name, as the session's own instance does (and is locked
 * with it, /run/hindsight/<name>.lock). */
#define HS_LINUX_DETECT_SUFFIX "_trg"
/* Linux: the engine writes its thread list to set_event_notrace_pid, lists its
 * threads again and rewrites until the list holds still (a thread started in
 * between is not inherited through event-fork); a handful of tries, as the
 * engine starts a few threads at most while it sets up. */
#define HS_LINUX_NOTRACE_TRIES 8
/* Its per-CPU ring, not overwriting (a detection lost is counted, not hidden).
 * It holds only the watched events between two wake-ups (50 ms): 256 KB is
 * about 2,600 signal_deliver-sized events per CPU per wake-up, over 50k
 * watched events/s per CPU before one is lost; a crash storm is far below
 * that, and 2 x 256 KB of pinned memory costs nothing beside the key ring. */
#define HS_LINUX_DETECT_BUFFER_KB 256

/* Replay: the records the plan's sessions take are held in memory (payload
 * and index) so they can be paced and re-read by snapshots; past this the
 * input is refused rather than swapping. A day of key events is tens of MB. */
#define HS_REPLAY_MAX_BYTES (1ull << 30)

/* Replay: which sessions take a record is one 64-bit mask; profiles have 2-3. */
#define HS_REPLAY_MAX_SESSIONS 64

/* Replay: poll wakes at least this often, so a record is handed on within
 * this much of its (scaled) recorded time, as the tracefs reader's wake-up does. */
#define HS_REPLAY_WAKE_MS 20

/* The recording loop wakes at least this often while the engine can take
 * triggered snapshots, so a manual request (Ctrl+Break on Windows, where no
 * signal cuts the wait short) or a due post_delay waits at most this long.
 * One wake-up a second costs nothing measurable. */
#define HS_TRIGGER_WAKE_MS 1000

/* The running recorder's status (run/status.h: live view, engine ctl status)
 * is gathered at most this often: a person reads a second's change, and each
 * gathering reads every CPU's stats file of every tracefs instance. */
#define HS_STATUS_INTERVAL_MS 1000

/* ---- The live view and the JSONL event tap (run/live*.c, run/jsonl.c; docs/live.md) ---- */
/* Payload fields one key event shows (the first of its format, common_*
 * left out): signal_deliver has 5, sched_process_exit 4; a line stays short. */
#define HS_LIVE_MAX_FIELDS 12
/* One string field's value as shown: comm is 16, a file name is cut here. */
#define HS_LIVE_FIELD_CHARS 96
/* Key events the observer hands to the view between two draws: the view shows
 * the newest screenful, and the observer (on the backend's poll path) only
 * copies into this ring, overwriting the oldest when a storm outruns a draw. */
#define HS_LIVE_RING_EVENTS 512
/* Lines of the view's event list kept for redrawing, pausing and filtering
 * (repeats collapsed into one): a filter finds the last few seconds of a busy
 * machine (a parallel build makes ~200 key events/s), ~1.7 KB each. */
#define HS_LIVE_HISTORY_LINES 1024
/* Messages (warnings, snapshots) the view keeps to show while it owns the terminal. */
#define HS_LIVE_MESSAGES 8
/* pid -> comm cache for events that carry no comm (direct-mapped by pid). */
#define HS_LIVE_COMM_CACHE 1024
/* The tap's queue between the observer and its writer thread: a reader that
 * is this far behind loses lines (counted) instead of slowing the recording.
 * 1 MiB is several thousand lines, seconds of a key-event storm. */
#define HS_JSONL_QUEUE_BYTES (1024 * 1024)
/* One JSONL line at most (HS_LIVE_MAX_FIELDS fields of HS_LIVE_FIELD_CHARS,
 * escaped, plus a story of HS_MAX_STORY_CHARS): a longer one is dropped. */
#define HS_JSONL_MAX_LINE_BYTES 8192
/* At the end the writer has this long to hand its queue to a slow reader;
 * what is left counts as dropped, so a reader that never reads cannot hold
 * the engine's exit. Also how often a blocked writer looks up (ms). */
#define HS_JSONL_DRAIN_MS 2000
#define HS_JSONL_POLL_MS 100

/* Capture-time reports (run/capture.h): snapshots waiting for their report. One report runs at a time
 * (its memory is the report layer's caps: HS_REPORT_MAX_KEPT events and their kin, tens of MB at most); a
 * burst of snapshots past this many waiting ones gets no report (said in main.log and snapshot.json) rather
 * than a queue that grows with the incident. Triggers' cool-downs make 8 a long burst. */
#define HS_CAPTURE_MAX_QUEUED 8
/* How long the end of a run waits for the snapshot reports still queued before the final rings' own report
 * (a report of a full 256 MB ring is a few seconds, docs/report.md "Speed"); the rest are left "pending". */
#define HS_CAPTURE_FINISH_WAIT_MS 30000
/* The report worker's nice value (Linux): below the recording loop (0) so a report never delays it, but
 * still a tenth of a busy CPU (CFS weight 110 against 1024), so a crash's report is written within seconds
 * while a game keeps both CPUs busy. Windows: THREAD_PRIORITY_BELOW_NORMAL. */
#define HS_CAPTURE_NICE 10

/* ETW: a key-event session a trigger watches runs in real time too; its
 * FlushTimer is 1 s (the shortest there is): Logging Mode Constants says a
 * real-time session with a log file flushes every second anyway, and a longer
 * timer would hold the triggers' events back that long (plan/etw_realtime.h). */
#define HS_ETW_REALTIME_FLUSH_S 1

/* A ring lives in unswappable kernel memory (ETW nonpaged pool, tracefs pages).
 * 64 GiB is beyond any machine we target; larger values are typos. The plan also
 * warns when a ring exceeds half of the host's physical memory. */
#define HS_MAX_RING_MB 65536

/* A file-circular session's file; ETW's MaximumFileSize is a ULONG of MB, but
 * anything over 1 TiB is a typo for a flight recorder. */
#define HS_MAX_FILE_MB 1048576

/* Stories are one line a person reads next to an event in a live view. */
#define HS_MAX_STORY_CHARS 200

/* Names of sessions, profiles and keywords are identifiers shown in logs. */
#define HS_MAX_IDENT_CHARS 64

/* Provider names: ETW provider names are far shorter in practice. */
#define HS_MAX_PROVIDER_NAME_CHARS 128

/* Output file names: one path component on every file system we target. */
#define HS_MAX_OUTPUT_NAME_CHARS 255

/* Rules files are hand-written; a larger file is a mistake or an attack on the
 * loader (YAML amplification). Also bounds what the fuzzer explores. */
#define HS_MAX_RULES_FILE_BYTES (4u * 1024u * 1024u)

/* YAML nesting deeper than this is never needed by the language (it uses 7). */
#define HS_MAX_YAML_DEPTH 32

/* Include chains deeper than this are almost certainly a cycle through links. */
#define HS_MAX_INCLUDE_DEPTH 16

/* Cap on diagnostics kept per load: past it one summary line is added. */
#define HS_MAX_DIAGNOSTICS 1000

/* Windows: ETW sessions write their own files, so the engine only wakes to
 * notice a stop request (Ctrl+C, console close) and print stats; this bounds
 * how late a stop request is acted on. */
#define HS_ETW_POLL_SLICE_MS 100

/* Windows: on console close, logoff or shutdown the process ends as soon as
 * the control handler returns, so the handler waits for the snapshot to be
 * written; Windows itself kills a process that takes too long (about 5 s after
 * a close, longer at shutdown), so this only bounds the wait in any case. */
#define HS_WIN_CLOSE_WAIT_MS 20000

/* Launch mode: paths we build (output next to the program, its temporary
 * twin) are kept in fixed buffers of Linux's PATH_MAX. */
#define HS_LAUNCH_MAX_PATH_CHARS 4096

/* Launch mode: how long the sampler sleeps in poll() between drains when no
 * ring wakes it. Bounds how late a timeout or the program's exit is noticed. */
#define HS_LAUNCH_POLL_MS 100

/* Launch mode: a perf record's size is a u16, so one record never exceeds this. */
#define HS_PERF_MAX_RECORD_BYTES 65536

/* Build-ids: perf.data stores at most 20 bytes (SHA-1, the longest build-id
 * toolchains emit); a longer GNU note is not a build-id perf could match. */
#define HS_BUILD_ID_MAX 20

/* Build-ids: an ELF note segment larger than this is not a build-id note set;
 * reading is bounded so a hostile file cannot make us allocate its size. */
#define HS_ELF_MAX_NOTES_BYTES (1u << 20)

/* Linux: libtracecmd 1.x (trace-cmd 3.1.6) keeps each CPU's data size in an
 * int (struct cpu_data_source in trace-output.c), and its compressed copy in
 * unsigned ints: a CPU with 2 GiB or more of ring data fails with EINVAL
 * ("did not match size"), which is the "~3.7 GB" failure of a two-CPU ring. A
 * snapshot keeps at most this much (the newest) per CPU and says so. */
#define HS_LINUX_DAT_MAX_CPU_BYTES ((1ull << 31) - (1ull << 20))

/* Linux: the kernel forgets comms (saved_cmdlines is a small ring) and the
 * .dat only names a pid that the list holds when it is written, so the writer
 * remembers every pid->comm it has seen, in a table of this many slots
 * (PID_MAX_DEFAULT: a pid never collides with another below it). */
#define HS_LINUX_COMM_CACHE 32768

/* Linux: a snapshot on a full disk leaves this much free for what the engine
 * still writes after it (run.json, main.log lines, the key-event rebuild's
 * copies are budgeted separately from their own sizes). */
#define HS_LINUX_SNAPSHOT_RESERVE_BYTES (1ull << 20)

/* Linux: how many times a snapshot retries with less of the ring when the disk
 * fills anyway (the headers' size is estimated; the data's is known, as it is
 * compressed before the write); each try keeps 60% of the previous one's
 * data, so 6 tries go down to ~5%. */
#define HS_LINUX_SNAPSHOT_DISKFULL_TRIES 6

/* Linux: a snapshot drains each CPU's ring through a pipe of this size with
 * splice (whole pages, one call per pipeful): 1 MB is the kernel's default
 * pipe-max-size for an unprivileged pipe. 256 pages per pair of system calls
 * instead of two per 4 KB page cut the drain of a 128 MB CPU ring from 0.17 s
 * of CPU to 0.03-0.05 s here (docs/snapshots.md). */
#define HS_LINUX_SNAPSHOT_PIPE_BYTES (1u << 20)
/* Linux: chunks (HS_LINUX_DAT_CHUNK_PAGES each) a CPU's snapshot thread may
 * hold between its ring and its compressed data: the one being drained, the
 * newest drained (left for a thread whose own ring is done), one it
 * compresses, one another thread compresses; more only make a thread wait
 * less. Each costs a chunk of raw pages and one of its compressed bound per
 * CPU for the snapshot's length (at 4: 8 MB per CPU, of it the 4 MB of raw
 * chunks touched). When the host gave one of this VM's CPUs less, the other
 * thread compressed 21 of its 129 chunks instead of waiting
 * (docs/snapshots.md). */
#define HS_LINUX_SNAPSHOT_SLOTS 4u
/* Linux 6.12+: the snapshot threads ask the fair scheduler for this slice
 * (sched_attr.sched_runtime; the kernel takes 0.1 to 100 ms). A running task
 * keeps its CPU for its slice before a waking task of any weight preempts it
 * (EEVDF's run-to-parity), and this kernel preempts in the kernel only at
 * ticks (PREEMPT_NONE, 250 Hz): with the default 3 ms slice a nice-19 drain
 * thread held a 240 Hz game's CPU up to ~4 ms after the game woke, a frame of
 * 2x its period (bench_frame_pacing --why). The shortest slice there is. */
#define HS_LINUX_SNAPSHOT_SLICE_NS 100000u
/* Linux: the most one read() takes out of that pipe. Each page read is copied
 * and given back to the ring's allocator inside the call, and a 1 MB read
 * stayed 4.8 ms in this PREEMPT_NONE kernel while a 240 Hz game waited for
 * the CPU (bench_frame_pacing --why, system call 0); 16 pages a call return to
 * user space, where the scheduler can switch, every few tens of us. The drain
 * makes 16 reads where it made one (a few ms more for a 256 MB ring). */
#define HS_LINUX_SNAPSHOT_READ_BYTES (64u << 10)
/* Linux: the most one write of a snapshot's compressed CPU data puts in the
 * file: a CPU's whole 10-15 MB in one pwrite stayed 5-7 ms in the kernel
 * (system call 18 in bench_frame_pacing --why); 256 KB a call is ~0.1 ms. */
#define HS_LINUX_SNAPSHOT_WRITE_BYTES (256u << 10)

/* Linux: the next snapshot's .dat headers (0.35-0.49 s of one CPU: formats,
 * kernel symbols, printk formats) are written this long after a snapshot, in
 * the background, so they are not part of the frames right after it. */
#define HS_LINUX_SNAPSHOT_PREP_DELAY_S 5.0

/* Linux: a snapshot .dat's headers (formats, kernel symbols, comms) before the
 * CPU data, when they cannot be measured in memory: 1.0 MB measured on Debian's
 * 6.x kernels with kallsyms, so 2 MB errs on the side of the disk. */
#define HS_LINUX_SNAPSHOT_HEADER_GUESS_BYTES (2ull << 20)

/* Linux: a snapshot's CPU data is compressed in chunks of this many ring pages
 * (one zstd frame each; a reader decompresses a whole chunk to reach a page in
 * it, so it stays small: 1 MB). libtracecmd uses 10; on this machine's rings
 * 64 compresses 1.6x faster and 10% smaller at level 1 than 10, and 256 another
 * 6% smaller at the same speed (docs/snapshots.md). A disk-full cut keeps
 * whole chunks. */
#define HS_LINUX_DAT_CHUNK_PAGES 256

/* Linux: the zstd level of a snapshot's CPU data. libtracecmd's is zstd's
 * default (3); level 1 over 64-page chunks is faster and still smaller than
 * level 3 over libtracecmd's 10 (docs/snapshots.md). */
#define HS_LINUX_DAT_ZSTD_LEVEL 1

/* trace.dat reading (engine/src/tracedat): what a file may make the reader
 * allocate or walk, so a damaged or hostile size gets a problem, not an
 * allocation of what it claims. A metadata section or blob (decompressed): event
 * formats are 2.1 MB with all 101 systems of this 6.x kernel, saved comms at
 * most ~0.7 MB (32768 entries); kallsyms (5 MB here) is skipped, never read. */
#define HS_TRACEDAT_MAX_META_BYTES (16u << 20)
/* One decompressed chunk of CPU data: the engine writes 1 MB
 * (HS_LINUX_DAT_CHUNK_PAGES of 4 KB), trace-cmd 10 pages. */
#define HS_TRACEDAT_MAX_CHUNK_BYTES (64u << 20)
/* A ring sub-buffer: 4 KB by default; the kernel's buffer_subbuf_size_kb
 * allows up to the largest page order (4 MB on x86-64). */
#define HS_TRACEDAT_MAX_PAGE_BYTES (8u << 20)
/* CPUs per buffer and buffer instances per file: more than any machine or
 * tracefs setup has; each costs a stream with its own read window. */
#define HS_TRACEDAT_MAX_CPUS 4096
#define HS_TRACEDAT_MAX_BUFFERS 256
/* CPU ranges of all buffers together: each is a stream of the walk (its state, a
 * window): 64 instances of a 256-CPU machine; a v6 file's BUFFER options can
 * point many instances at the same pairs, so the count is bounded apart. */
#define HS_TRACEDAT_MAX_STREAMS 16384
/* Read windows and decompressed chunks a walk holds at once, all streams
 * together: a real file needs CPUs x 256 KB (2 MB for 8 CPUs, 64 MB for 256); a
 * hostile one could claim 64 MB chunks on every CPU. Past it a CPU is not read
 * further, with a problem. */
#define HS_TRACEDAT_MAX_WALK_BYTES (256u << 20)
/* v7 options sections chained by their DONE offsets (trace-cmd writes 2 or 3):
 * a damaged chain that loops is cut here. */
#define HS_TRACEDAT_MAX_OPTION_SECTIONS 64
/* Uncompressed CPU data is read this much at a time per CPU (whole pages): the
 * walk's memory stays at CPUs x 256 KB whatever the file's size, and pread
 * calls are few (1 K per 256 MB). */
#define HS_TRACEDAT_READ_WINDOW_BYTES (256u << 10)
/* Problems a reader keeps (more are counted): a badly damaged file would
 * otherwise list one per ring page. */
#define HS_TRACEDAT_MAX_PROBLEMS 64

/* Regex (util/regex.c; every pattern, including the triggers' on event
 * payloads while recording): a match gives up after this many internal match
 * calls, this backtracking depth (the interpreter; the JIT is bounded by its
 * own 32 KB stack) and this much backtracking heap, so a catastrophic pattern
 * like (a+)+$ costs about a millisecond per subject, not minutes. A real
 * pattern over a field of a few KB stays far below all three. */
#define HS_REGEX_MATCH_LIMIT 100000
#define HS_REGEX_DEPTH_LIMIT 1000
#define HS_REGEX_HEAP_LIMIT_KB 4096

/* Triggers: a payload field a condition or pattern reads is copied into a
 * buffer of this size (cut beyond). A tracefs event fits in one 4 KB ring
 * page, so no Linux string field is longer. */
#define HS_TRIGGER_FIELD_BYTES 4096

/* Triggers, frame_time: processes tracked per trigger (the least recently
 * seen is forgotten for a new one). A game and its helpers are a handful;
 * each slot holds median_frames frame times. */
#define HS_TRIGGER_FRAME_PIDS 64

/* Triggers, frame_time: the longest median window kept per process (the
 * median is a sort of a copy, done only for frames over threshold_ms);
 * 1024 frames is over 4 s at 240 Hz. A larger median_frames uses this many. */
#define HS_TRIGGER_MAX_MEDIAN_FRAMES 1024

/* Triggers: the rate cap remembers the times of the last max_per_hour
 * snapshots; a snapshot takes seconds, so more than one a second for an hour
 * is not a cap. A larger max_per_hour counts as this many. */
#define HS_TRIGGER_MAX_PER_HOUR 3600

/* Triggers: snapshots decided (due) but not yet taken by the caller, per
 * trigger. The loop takes them every wake-up; only a caller far behind (a
 * replay at full speed) queues more, and then the hits join the newest. */
#define HS_TRIGGER_MAX_READY 8

/* Triggers, deadline: frame start times kept per process to judge "made
 * active_frames frames in the active_s seconds before its last one" (and the
 * median frame of the evidence): 1024 is over 4 s at 240 Hz, 8 KB a process. */
#define HS_TRIGGER_MAX_ACTIVE_FRAMES 1024

/* Triggers, counter: series (processes) tracked per per-process counter
 * trigger; as HS_TRIGGER_FRAME_PIDS, the least recently sampled goes. */
#define HS_TRIGGER_COUNTER_SERIES 64

/* Run layer, counters (run/counters_*.c): how often a scan compares process
 * names with arm_while and per-process counters' patterns. It reads
 * /proc/<pid>/comm for every process (Windows: one toolhelp snapshot):
 * measured 2.8-3.1 ms for 145 processes here (~20 us each), so once every
 * 2 s is ~0.15% of a CPU, and only when some trigger needs names. */
#define HS_COUNTER_SCAN_MS 2000

/* ---- Rules: triggers (docs/rules-language.md "Triggers"), the ranges of their keys ---- */
/* warmup_s: an hour; a longer warm-up would never arm in most sessions. */
#define HS_RULES_MAX_WARMUP_S 3600
/* clear_ms, post_delay_ms: ten minutes. post_delay is further bounded by the
 * ring (half its history); no ring we size holds 20 minutes at a real rate. */
#define HS_RULES_MAX_CLEAR_MS 600000
#define HS_RULES_MAX_POST_DELAY_MS 600000
/* cooldown_s: a day. */
#define HS_RULES_MAX_COOLDOWN_S 86400

/* A payload field in a catalog's formats: the kernel's trace records are at
 * most a page (4096 bytes), so no field is larger. */
#define HS_RULES_MAX_FIELD_BYTES 4096
/* An ftrace filter's string operand: the kernel's MAX_FILTER_STR_VAL (256)
 * including its NUL, so 255 characters. */
#define HS_FTRACE_FILTER_MAX_STR 255
/* An ftrace filter's number operand: the kernel copies at most 23 characters
 * (a 24-byte buffer, enough for 0xfeedfacedeadbeef). */
#define HS_FTRACE_FILTER_MAX_NUM 23
/* Parentheses nesting in a filter rulecheck follows (the kernel sizes its
 * stack to the filter; 64 levels is far past any filter a person writes). */
#define HS_FTRACE_FILTER_MAX_DEPTH 64

/* analyze report: ring-loss holes kept per trace file for the timeline; a
 * ring that loses events that often is drawn as lossy from its first holes,
 * and every loss is still counted. */
#define HS_REPORT_MAX_HOLES 256
/* analyze report: coverage lanes (one per trace file and CPU) drawn under the
 * timeline; more CPUs than this are counted, not drawn (a 64-CPU box would
 * make the timeline a wall). */
#define HS_REPORT_MAX_COV_LANES 16
/* analyze report: notable events kept in memory and examined (the findings
 * pair events, quadratic in places); past it they are counted, not examined. */
#define HS_REPORT_MAX_KEPT 50000
/* analyze report: task renames (task_rename: every exec and prctl(PR_SET_NAME)) kept to name each event by the
 * name its task had at that moment (40 bytes each: 8 MB). A fork-and-exec storm past it keeps the names the
 * trace's comm list gives. */
#define HS_REPORT_MAX_RENAMES 200000
/* analyze report: exec times kept for the process-storm detector (8 bytes each: 32 MB), far past any storm's
 * evidence; the rest are not needed to find one. */
#define HS_REPORT_MAX_EXECS 4000000
/* analyze report: trace files read from one snapshot or run folder (a folder
 * holds one per session: two or three). */
#define HS_REPORT_MAX_FILES 16
/* report.json's fleet signature: at most this many bytes (Windows Error Reporting's limit for one bucket
 * parameter; a DuckDB or ClickHouse key column stays short; docs/fleet.md). Longer is cut at a character. */
#define HS_FLEET_SIGNATURE_MAX 255
/* Linux names a task with at most 15 bytes (TASK_COMM_LEN 16 with its NUL): a fleet signature's app is cut to it
 * so a process known by its exec's file name and one known only by its task name sign alike. */
#define HS_LINUX_COMM_MAX 15
/* analyze fleet: the bytes of a report.json read before its signature block is looked for. The block follows the
 * verdict (report.json's first 1-3 KB; a verdict is at most ~2 KB), so 64 KB finds it in one read and 10,000
 * reports cost 10,000 small reads; a report whose block lies further (another layout) is then read whole. */
#define HS_FLEET_HEAD_BYTES (64 * 1024)
/* analyze fleet: the largest report.json read whole (the report layer keeps at most HS_REPORT_MAX_KEPT events, and
 * its largest measured report.json is a few MB). */
#define HS_FLEET_MAX_REPORT_BYTES (256u * 1024 * 1024)
/* analyze fleet: folders deep below a PATH (a fleet's store is <host>/<run>/snapshots/<NNN>: 4 deep). */
#define HS_FLEET_MAX_DEPTH 32
/* analyze report: threads whose CPU time is counted one by one, the rest summed
 * as "others" (a 256 MB ring of a busy machine names a few thousand threads;
 * the table stays a fixed 8192 x 40 bytes). */
#define HS_REPORT_MAX_TIDS 8192
/* analyze report: groups of programs started (by file) in the activity
 * finding; the rest are counted together. */
#define HS_REPORT_MAX_EXEC_GROUPS 512
/* analyze report on .etl: CPUs as many as Windows' processor groups can hold
 * (64 x 64), past which a buffer's CPU number is garbage. */
#define HS_REPORT_ETL_MAX_CPUS 4096
/* analyze report on .etl: pid names remembered, as many as a busy machine's
 * day of processes, 36 bytes each. */
#define HS_REPORT_ETL_MAX_NAMES 65536
/* max_per_hour: one a second (a snapshot takes about that long to write);
 * at least 1, since 0 would be a trigger that never fires. */
#define HS_RULES_MAX_PER_HOUR 3600
/* keep: snapshots kept per trigger; the run-wide cap is snapshots_max_mb. */
#define HS_RULES_MAX_KEEP 1000
/* snapshots_max_mb: 1 TiB. */
#define HS_RULES_MAX_SNAPSHOTS_MB 1048576
/* frame_time: threshold_ms and ceiling_ms up to an hour, ratio up to 1000,
 * median_frames 3 (a median of fewer is one of the frames) to 1024 (what the
 * engine keeps per process: over 4 s at 240 Hz). */
#define HS_RULES_MAX_FRAME_MS 3600000
#define HS_RULES_MAX_FRAME_RATIO 1000
#define HS_RULES_MIN_MEDIAN_FRAMES 3
#define HS_RULES_MAX_MEDIAN_FRAMES 1024
/* deadline: deadline_ms up to an hour (as frame times); active_frames 2 (one
 * frame is every process that ever drew) to HS_TRIGGER_MAX_ACTIVE_FRAMES
 * (the start times the engine keeps per process); active_s up to an hour. */
#define HS_RULES_MAX_ACTIVE_FRAMES HS_TRIGGER_MAX_ACTIVE_FRAMES
#define HS_RULES_MAX_ACTIVE_S 3600
/* counter: for_s up to a day; sample_ms from 100 ms (reading /proc/stat or a
 * process's stat costs ~10-30 us, so 10 reads a second are nothing) to an
 * hour; thresholds up to 1e12 (MB, events/s: beyond any machine), at most 8
 * escalation steps (ProcDump's -m takes a handful). PSI's window is the
 * kernel's: 0.5..10 s (kernel/sched/psi.c, WINDOW_MIN_US/WINDOW_MAX_US). */
#define HS_RULES_MAX_FOR_S 86400
#define HS_RULES_MIN_SAMPLE_MS 100
#define HS_RULES_MAX_SAMPLE_MS 3600000
#define HS_RULES_MAX_COUNTER_VALUE 1000000000000ull
#define HS_RULES_MAX_THRESHOLDS 8
#define HS_PSI_MIN_WINDOW_MS 500
#define HS_PSI_MAX_WINDOW_MS 10000
/* Without CAP_SYS_RESOURCE the kernel takes only PSI windows that are whole
 * multiples of this (psi_trigger_create since 6.5; measured here: a root
 * engine in a sandbox without the capability got EINVAL for 1 s and 3 s,
 * and 2, 4 and 10 s worked). */
#define HS_PSI_UNPRIV_WINDOW_MS 2000
/* expected_rate_eps: 100M events/s, over 10x the highest rate measured
 * (7.45M/s with kmem under load, ../shared/docs/linux-backend.md). */
#define HS_RULES_MAX_RATE_EPS 100000000
/* Mean bytes one event takes in a ring, to turn ring_mb and a rate into
 * seconds of history. Linux, measured (../shared/docs/linux-backend.md,
 * "Flushing on demand"): a full 256 MB ring held 5,237,791 events, 51.2 B
 * each ("average record size is about 48-53 bytes"). ETW: the docs have no
 * measured figure yet, so the Linux one stands in; replace it once measured. */
#define HS_LINUX_RING_BYTES_PER_EVENT 51
#define HS_ETW_RING_BYTES_PER_EVENT 51
/* Windows real-time delivery lags ~1 s (buffers reach a real-time consumer
 * when full or on the 1 s flush; ../shared/docs/flight-recorder-notes.md
 * 8.2): a post_delay_ms under this (1 s + margin) may snapshot before the
 * events after the hit have reached the ring's consumer. */
#define HS_ETW_MIN_POST_DELAY_MS 1500

/* ---- Windows: the real-time consumer of a key-event session (etw/consumer.c) ---- */
/* Events between two drains (poll drains every HS_ETW_POLL_SLICE_MS): 4096
 * is 40k key events/s, far above the rate of a whitelisted key set; more are
 * dropped and counted, never waited for (the callback runs on ETW's thread). */
#define HS_ETW_RT_QUEUE_EVENTS 4096
/* Payload bytes kept per event (UserData; longer ones are cut and counted):
 * key events are small records plus at most a path (MAX_PATH UTF-16 = 520). */
#define HS_ETW_RT_MAX_USERDATA 576
/* How long stop waits for ProcessTrace to return after CloseTrace. */
#define HS_ETW_RT_JOIN_MS 5000
/* The key events a real-time consumer drained, kept for a triggered
 * snapshot's key-event cut (ETW owns the session's circular .etl, which the
 * engine cannot copy while it runs): records of ~100-700 bytes, so 8 MiB
 * holds some 12k-80k key events, minutes to hours of a whitelisted key set
 * (stutter.yaml's: ~100 events/s on a busy desktop); the oldest go first. */
#define HS_ETW_KEY_HISTORY_BYTES (8u << 20)
/* The cut's .etl buffers (the ETL writer's buffer size). */
#define HS_ETW_KEY_CUT_BUFFER_BYTES (64u << 10)
/* TdhGetEventInformation's answer for one event (names, messages, property
 * table; more: the event's fields are not decoded) and a field name's length. */
#define HS_ETW_TDH_INFO_BYTES 16384
#define HS_ETW_TDH_NAME_CHARS 128

/* ---- Problems the readers report (problem.h) ---- */
/* A problem's message, cut to fit: the longest today are a trace.dat path plus
 * why (the trace.dat reader cut them at 512 before there was one shape). */
#define HS_PROBLEM_MESSAGE_MAX 512
/* hs_problem_format's text: the message after "at file offset 0x<16 digits>: ". */
#define HS_PROBLEM_TEXT_MAX (HS_PROBLEM_MESSAGE_MAX + 40)

/* ---- The control channel of a running recorder (run/ctl.c, engine ctl; docs/ctl.md) ---- */
/* One request line, newline included. The largest request is a snapshot with
 * a name (well under 200 bytes); 4 KiB leaves room for growth while a client
 * cannot make the engine hold more than this per connection. */
#define HS_CTL_MAX_REQUEST_BYTES 4096
/* Connections served at once; more wait in the listen backlog (the loop
 * accepts again when one closes). A person and a script or two, not a fleet. */
#define HS_CTL_MAX_CLIENTS 8
/* A connection with no complete request, or with a reply it does not read,
 * for this long is dropped: a client that connects and never writes cannot
 * hold a slot, and the loop never waits for it. */
#define HS_CTL_CLIENT_IDLE_MS 5000
/* Bytes of replies one connection may have waiting unread; past it the
 * connection is dropped instead of growing the engine's memory. A status
 * document of 64 CPUs is about 100 KB. */
#define HS_CTL_MAX_PENDING_REPLY (4 * 1024 * 1024)
/* A snapshot name: it becomes part of a folder name (<NNN>-<name>). */
#define HS_CTL_MAX_NAME_CHARS 64
/* Snapshot names kept for run.json (snapshots.c borrows the folder's name
 * until the run ends): a client asking for snapshot after snapshot under new
 * names cannot grow the engine without bound. */
#define HS_CTL_MAX_NAMES 256
/* JSON nesting the reader accepts (run/ctl_json.c): the status document nests
 * 4 deep; the bound keeps a hostile line from exhausting the stack. */
#define HS_CTL_JSON_MAX_DEPTH 32
/* The client: a reply line it accepts (the status document of a big machine
 * fits many times), how long it waits for one (the loop answers between two
 * wake-ups, but a snapshot being written holds the loop for seconds), and how
 * long for a snapshot folder to be complete and for a stopped engine to exit
 * (saving the rings of a large profile takes tens of seconds). */
#define HS_CTL_MAX_REPLY_BYTES (16 * 1024 * 1024)
#define HS_CTL_REPLY_WAIT_MS 60000
#define HS_CTL_SNAPSHOT_WAIT_S 300
#define HS_CTL_STOP_WAIT_S 600
/* Windows (run/ctl_win.c): the named pipe's buffer each way. A reply larger
 * than this is written in pieces as the client reads (the pending-reply bound
 * above still holds); 64 KiB takes a status document of a normal machine in
 * one write, so a client that reads slowly costs no extra round. */
#define HS_CTL_PIPE_BUFFER_BYTES (64 * 1024)
/* The client's wait for a free pipe instance (ERROR_PIPE_BUSY: all
 * HS_CTL_MAX_CLIENTS are served and one more is connected, waiting for a
 * slot): the same bound as for a reply, since a slot frees within
 * HS_CTL_CLIENT_IDLE_MS of a silent client. */
#define HS_CTL_PIPE_BUSY_WAIT_MS 60000
/* A profile's name in the pipe's name is cut to this many characters (a pipe
 * name is at most 256; the hash of the run root keeps two profiles apart). */
#define HS_CTL_PIPE_PROFILE_CHARS 64

/* ---- The report's cause analysis (engine/src/report/cause/, docs/report.md "Why") ---- */
/* Compact scheduler records (48 bytes each) kept for one window: 1 M is 48 MB,
 * ~0.4 s of a machine under a saturating switch storm (2.9 M events/s, of which
 * about a third are scheduler, interrupt and timer records the analysis keeps)
 * and many seconds of a normal one; past it the oldest half leaves and the
 * coverage says from when the analysis could see. */
#define HS_CAUSE_MAX_RECORDS (1024 * 1024)
/* Tasks the analysis names (a 256 MB ring of a busy machine names a few
 * thousand threads); past it, new tasks are not named. */
#define HS_CAUSE_MAX_TASKS 65536
/* CPUs (the trace's CPU numbers). */
#define HS_CAUSE_MAX_CPUS 4096
/* causes.lookback_ms: ten seconds; the records before a window that explain it
 * (a sleep's timer start, a fault, a stop signal) are milliseconds old. */
#define HS_RULES_MAX_CAUSE_LOOKBACK_MS 10000
/* Reasons one analysis reports, and the wake-up chain's hops (the "a
 * few hops": past three the chain explains the waker's waker's waker). */
#define HS_CAUSE_MAX_REASONS 24
#define HS_CAUSE_MAX_HOPS 4
/* Tasks a snapshot's tasks.json lists (run/tasks.h): a desktop runs a few
 * thousand threads; past this the table says it is not complete. */
#define HS_TASKS_MAX 32768
/* A snapshot's tasks.json the report reads (a few hundred bytes a task:
 * HS_TASKS_MAX tasks are ~8 MB); a larger file is read up to this. */
#define HS_REPORT_MAX_TASKS_BYTES (32 * 1024 * 1024)
/* Evidence lines kept per reason. */
#define HS_CAUSE_MAX_EVIDENCE 8

/* ---- The perf.data reader (engine/src/perfdata/, hindsight/perfdata.h) ---- */
/* Problems one reader keeps: a damaged file says what matters in the first few. */
#define HS_PERFDATA_MAX_PROBLEMS 64
/* The read window over the data section: one record is at most 64 KiB (its
 * size is a u16), so the window holds any record; 1 MiB makes a read per
 * thousands of records, whatever the file's size. */
#define HS_PERFDATA_WINDOW_BYTES (1u << 20)
/* Attrs (events) in one file: perf record -e takes a few dozen; more is damage. */
#define HS_PERFDATA_MAX_ATTRS 4096
/* Sample ids of all attrs (one per event per CPU or thread): 4096 CPUs x a few events. */
#define HS_PERFDATA_MAX_IDS (1u << 20)
/* Build-ids in HEADER_BUILD_ID: one per DSO that had samples (a desktop maps a few thousand). */
#define HS_PERFDATA_MAX_BUILD_IDS 65536
/* Frames of one callchain (the kernel's PERF_MAX_STACK_DEPTH is 127, sysctl up to a few thousand, plus markers). */
#define HS_PERFDATA_MAX_CALLCHAIN 8192
/* perf.data: a mapped file's or a task's name kept per record: the kernel's PATH_MAX, the longest path an MMAP
 * record can name. */
#define HS_PERFDATA_MAX_NAME 4096

#endif
