/* rundoc/run.c: run.json, the run's own document: its one table of fields, writer and reader (schemas/run.schema.json). */
#include "hindsight/rundoc.h"
#include "rundoc/common.h"

#define F(ty, m, k, t, ...) {.key = k, .type = t, .off = offsetof(ty, m), __VA_ARGS__}

static const rd_field skipped_fields[] = {
	F(hs_rundoc_skipped, event, "event", RD_STR),
	F(hs_rundoc_skipped, optional, "optional", RD_BOOL),
	F(hs_rundoc_skipped, why, "why", RD_STR),
};
static const rd_table skipped_table = RD_TABLE(hs_rundoc_skipped, skipped_fields);

static const rd_field cpu_fields[] = {
	F(hs_rundoc_cpu, cpu, "cpu", RD_UINT),
	F(hs_rundoc_cpu, entries, "entries", RD_U64),
	F(hs_rundoc_cpu, overrun, "overrun", RD_U64),
	F(hs_rundoc_cpu, commit_overrun, "commit_overrun", RD_U64),
	F(hs_rundoc_cpu, dropped, "dropped", RD_U64),
	F(hs_rundoc_cpu, read, "read", RD_U64),
	F(hs_rundoc_cpu, bytes, "bytes", RD_U64),
};
static const rd_table cpu_table = RD_TABLE(hs_rundoc_cpu, cpu_fields);

#define S hs_rundoc_run_session
#define KEYF .when_off = RD_WHEN(S, key_file)
#define RING .when_off = RD_WHEN(S, ring)
#define POOL .when_off = RD_WHEN(S, pool)
static const rd_field session_fields[] = {
	F(S, name, "name", RD_STR),
	F(S, instance, "instance", RD_STR, .nullable = true),
	F(S, mode, "mode", RD_STR),
	F(S, real_per_cpu_kb, "real_per_cpu_kb", RD_U64),
	F(S, events_enabled, "events_enabled", RD_U64),
	F(S, events_skipped, "events_skipped", RD_U64),
	F(S, skipped, "skipped", RD_ARR, .n_off = offsetof(S, n_skipped), .sub = &skipped_table,
	  .when_off = RD_WHEN(S, has_skipped)),
	F(S, bytes_streamed, "bytes_streamed", RD_U64, KEYF),
	F(S, bytes_in_file, "bytes_in_file", RD_U64, KEYF),
	F(S, chunks_dropped, "chunks_dropped", RD_U64, KEYF),
	F(S, bytes_lost_disk, "bytes_lost_disk", RD_U64, KEYF),
	F(S, trigger_events_lost, "trigger_events_lost", RD_U64, KEYF),
	F(S, snapshots, "snapshots", RD_U64, RING),
	F(S, snapshot_events, "snapshot_events", RD_U64, RING),
	F(S, snapshot_entries, "snapshot_entries", RD_U64, RING),
	F(S, snapshot_events_dropped, "snapshot_events_dropped", RD_U64, RING),
	F(S, snapshot_raw_bytes, "snapshot_raw_bytes", RD_U64, RING),
	F(S, snapshot_bytes_dropped, "snapshot_bytes_dropped", RD_U64, RING),
	F(S, snapshot_file_bytes, "snapshot_file_bytes", RD_U64, RING),
	F(S, snapshot_s, "snapshot_s", RD_DOUBLE, .digits = 3, RING),
	F(S, pool_buffers, "etw_buffers", RD_U64, POOL),
	F(S, pool_buffer_kb, "etw_buffer_kb", RD_U64, POOL),
	F(S, pool_free_buffers, "etw_free_buffers", RD_U64, POOL),
	F(S, pool_events_lost, "etw_events_lost", RD_U64, POOL),
	F(S, pool_buffers_lost, "etw_buffers_lost", RD_U64, POOL),
	F(S, pool_buffers_written, "etw_buffers_written", RD_U64, POOL),
	F(S, cpus, "cpus", RD_ARR, .n_off = offsetof(S, n_cpus), .sub = &cpu_table),
};
#undef S
static const rd_table session_table = RD_TABLE(hs_rundoc_run_session, session_fields);

#define T hs_rundoc_trigger_stats
static const rd_field trigger_fields[] = {
	F(T, name, "name", RD_STR),
	F(T, armed, "armed", RD_BOOL),
	F(T, hits, "hits", RD_U64),
	F(T, fired, "fired", RD_U64),
	F(T, joined, "joined", RD_U64),
	F(T, ignored_warmup, "ignored_warmup", RD_U64),
	F(T, ignored_unarmed, "ignored_unarmed", RD_U64),
	F(T, dropped_rate, "dropped_rate", RD_U64),
	F(T, sampled_out, "sampled_out", RD_U64),
	F(T, cancelled, "cancelled", RD_U64),
	F(T, ignored_disarmed, "ignored_disarmed", RD_U64),
	F(T, not_worse, "not_worse", RD_U64),
	F(T, excused, "excused", RD_U64),
	F(T, last_fire_ns, "last_fire_ns", RD_U64),
};
#undef T
static const rd_table trigger_table = RD_TABLE(hs_rundoc_trigger_stats, trigger_fields);

#define E hs_rundoc_snapshot_entry
static const rd_field snapshot_fields[] = {
	F(E, snapshot, "snapshot", RD_UINT),
	F(E, trigger, "trigger", RD_STR),
	F(E, folder, "folder", RD_STR),
	F(E, complete, "complete", RD_BOOL),
	F(E, bytes, "bytes", RD_U64),
	F(E, deleted, "deleted", RD_STR, .nullable = true),
	F(E, report, "report", RD_OBJ, .sub = &hs_rundoc_report_table, .when_off = RD_WHEN(E, has_report)),
};
#undef E
static const rd_table snapshot_table = RD_TABLE(hs_rundoc_snapshot_entry, snapshot_fields);

#define R hs_rundoc_run
static const rd_field run_fields[] = {
	F(R, run_version, "run_version", RD_UINT),
	F(R, profile, "profile", RD_STR, .nullable = true),
	F(R, rules, "rules", RD_STR, .nullable = true),
	F(R, rules_files, "rules_files", RD_STRS, .n_off = offsetof(R, n_rules_files)),
	F(R, start, "start", RD_STR),
	F(R, end, "end", RD_STR, .nullable = true),
	F(R, exit_code, "exit_code", RD_INT, .when_off = RD_WHEN(R, ended)),
	F(R, backend, "backend", RD_STR),
	F(R, key_events_observed, "key_events_observed", RD_U64),
	F(R, sessions, "sessions", RD_ARR, .n_off = offsetof(R, n_sessions), .sub = &session_table),
	F(R, triggers, "triggers", RD_ARR, .n_off = offsetof(R, n_triggers), .sub = &trigger_table),
	F(R, snapshots, "snapshots", RD_ARR, .n_off = offsetof(R, n_snapshots), .sub = &snapshot_table),
	F(R, report, "report", RD_OBJ, .sub = &hs_rundoc_report_table, .when_off = RD_WHEN(R, has_report)),
	F(R, plan_json, "plan", RD_RAW),
};
#undef R
static const rd_table run_table = RD_TABLE(hs_rundoc_run, run_fields);

hs_status hs_rundoc_run_write(const hs_rundoc_run *d, hs_strbuf *out)
{
	hs_rundoc_run v = *d;
	v.run_version = HS_RUNDOC_RUN_VERSION;
	return rd_write_doc(&run_table, &v, out);
}

hs_status hs_rundoc_run_read(const char *path, hs_arena *a, hs_rundoc_run *out)
{
	return rd_read_file(path, a, &run_table, out);
}
