/* rundoc/snapshot.c: snapshot.json, a snapshot folder's document: its one table of fields, writer and reader (schemas/snapshot.schema.json). */
#include "hindsight/rundoc.h"
#include "rundoc/common.h"

#define F(ty, m, k, t, ...) {.key = k, .type = t, .off = offsetof(ty, m), __VA_ARGS__}

static const rd_field window_fields[] = {
	F(hs_rundoc_cpu_window, cpu, "cpu", RD_UINT),
	F(hs_rundoc_cpu_window, first_ns, "first_ns", RD_U64),
	F(hs_rundoc_cpu_window, last_ns, "last_ns", RD_U64),
};
static const rd_table window_table = RD_TABLE(hs_rundoc_cpu_window, window_fields);

#define S hs_rundoc_snap_session
#define RING .when_off = RD_WHEN(S, ring)
#define KEYF .when_off = RD_WHEN(S, key_file)
static const rd_field session_fields[] = {
	F(S, name, "name", RD_STR),
	F(S, mode, "mode", RD_STR),
	F(S, file, "file", RD_STR, .nullable = true),
	F(S, error, "error", RD_STR),
	F(S, events, "events", RD_U64, RING),
	F(S, ring_entries, "ring_entries", RD_U64, RING),
	F(S, events_dropped_for_disk, "events_dropped_for_disk", RD_U64, RING),
	F(S, raw_bytes, "raw_bytes", RD_U64, RING),
	F(S, file_bytes, "file_bytes", RD_U64, RING),
	F(S, seconds, "seconds", RD_DOUBLE, .digits = 3, RING),
	F(S, cpu_windows, "cpu_windows", RD_ARR, .n_off = offsetof(S, n_cpu_windows), .sub = &window_table,
	  .when_off = RD_WHEN(S, has_cpu_windows)),
	F(S, wrapped, "wrapped", RD_BOOL, .when_off = RD_WHEN(S, has_wrapped)),
	F(S, overwritten_since_previous, "overwritten_since_previous", RD_U64, RING),
	F(S, bytes_in_file, "bytes_in_file", RD_U64, KEYF),
	F(S, chunks_dropped, "chunks_dropped", RD_U64, KEYF),
	F(S, bytes_lost_disk, "bytes_lost_disk", RD_U64, KEYF),
	F(S, events_lost, "events_lost", RD_U64, KEYF),
};
#undef S
static const rd_table session_table = RD_TABLE(hs_rundoc_snap_session, session_fields);

/* The keys a reader needs of the parts other layers write (their writers use the same HS_RUNDOC_* names). */
static const rd_field trigger_view_fields[] = {
	F(hs_rundoc_trigger_view, name, HS_RUNDOC_TRIGGER_NAME, RD_STR),
	F(hs_rundoc_trigger_view, kind, HS_RUNDOC_TRIGGER_KIND, RD_STR),
};
static const rd_table trigger_view = RD_TABLE(hs_rundoc_trigger_view, trigger_view_fields);

#define H hs_rundoc_hit_view
static const rd_field hit_view_fields[] = {
	F(H, ts_ns, HS_RUNDOC_HIT_TS, RD_U64),
	F(H, pid, HS_RUNDOC_HIT_PID, RD_I64, .when_off = RD_WHEN(H, has_pid)),
	F(H, frame_pid, HS_RUNDOC_HIT_FRAME_PID, RD_I64, .when_off = RD_WHEN(H, has_frame_pid)),
	F(H, system, HS_RUNDOC_HIT_SYSTEM, RD_STR),
	F(H, event, HS_RUNDOC_HIT_EVENT, RD_STR),
	F(H, slice, HS_RUNDOC_HIT_SLICE, RD_STR),
	F(H, where, HS_RUNDOC_HIT_WHERE, RD_MAPTEXT),
	F(H, reason, HS_RUNDOC_HIT_REASON, RD_STR),
	F(H, frame_ms, HS_RUNDOC_HIT_FRAME_MS, RD_DOUBLE),
	F(H, median_ms, HS_RUNDOC_HIT_MEDIAN_MS, RD_DOUBLE),
	F(H, phase, HS_RUNDOC_HIT_PHASE, RD_STR),
	F(H, freeze_start_ns, HS_RUNDOC_HIT_FREEZE_START, RD_U64),
	F(H, freeze_end_ns, HS_RUNDOC_HIT_FREEZE_END, RD_U64),
	F(H, hang_ms, HS_RUNDOC_HIT_HANG_MS, RD_DOUBLE),
	F(H, deadline_ms, HS_RUNDOC_HIT_DEADLINE_MS, RD_DOUBLE),
	F(H, median_frame_ms, HS_RUNDOC_HIT_MEDIAN_FRAME_MS, RD_DOUBLE),
};
#undef H
static const rd_table hit_view = RD_TABLE(hs_rundoc_hit_view, hit_view_fields);

#define D hs_rundoc_snapshot
static const rd_field snapshot_fields[] = {
	F(D, snapshot_version, "snapshot_version", RD_UINT),
	F(D, snapshot, "snapshot", RD_UINT),
	F(D, trigger_json, "trigger", RD_RAW, .sub = &trigger_view, .view_off = offsetof(D, trigger)),
	F(D, hit_json, "hit", RD_RAW, .sub = &hit_view, .view_off = offsetof(D, hit)),
	F(D, clock, "clock", RD_STR),
	F(D, first_hit_ns, "first_hit_ns", RD_U64),
	F(D, last_hit_ns, "last_hit_ns", RD_U64),
	F(D, hits, "hits", RD_U64),
	F(D, weight, "weight", RD_DOUBLE, .digits = 3),
	F(D, detect_ns, "detect_ns", RD_U64),
	F(D, detection_latency_ms, "detection_latency_ms", RD_DOUBLE, .digits = 3),
	F(D, due_ns, "due_ns", RD_U64),
	F(D, taken_ns, "taken_ns", RD_U64),
	F(D, taken_at, "taken_at", RD_STR),
	F(D, marker_written, "marker_written", RD_BOOL),
	F(D, rules_hash, "rules_hash_fnv1a64", RD_STR, .nullable = true),
	F(D, backend, "backend", RD_STR),
	F(D, sessions, "sessions", RD_ARR, .n_off = offsetof(D, n_sessions), .sub = &session_table),
	F(D, files, "files", RD_STRS, .n_off = offsetof(D, n_files)),
	F(D, report, "report", RD_OBJ, .sub = &hs_rundoc_report_table, .when_off = RD_WHEN(D, has_report)),
};
#undef D
static const rd_table snapshot_table = RD_TABLE(hs_rundoc_snapshot, snapshot_fields);

hs_status hs_rundoc_snapshot_write(const hs_rundoc_snapshot *d, hs_strbuf *out)
{
	hs_rundoc_snapshot v = *d;
	v.snapshot_version = HS_RUNDOC_SNAPSHOT_VERSION;
	return rd_write_doc(&snapshot_table, &v, out);
}

hs_status hs_rundoc_snapshot_read(const char *path, hs_arena *a, hs_rundoc_snapshot *out)
{
	return rd_read_file(path, a, &snapshot_table, out);
}
