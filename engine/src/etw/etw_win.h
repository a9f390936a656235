/* etw/etw_win.h: the Windows SDK declarations mingw-w64 lacks, and compile-time checks of every ETW layout we hand to the kernel. */
#ifndef HS_ETW_WIN_H
#define HS_ETW_WIN_H

#ifndef _WIN32
#error "etw/etw_win.h is for Windows builds only"
#endif

#include <stddef.h>

/* clang-format off: the order matters (windows.h first). */
#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>
#include <tdh.h>
/* clang-format on */

#include "hindsight/limits.h"
#include "plan/etw_defs.h"

/*
 * mingw-w64 10 (Debian 12) lacks these; the values and layouts are the Windows
 * SDK's (evntprov.h, evntrace.h; learn.microsoft.com ns-evntprov-event_filter_event_id,
 * ns-evntprov-event_filter_descriptor, enable-trace-parameters). Each is only
 * defined when the header did not, and every one is checked below against the
 * project's portable copy in etw_defs.h, which the planner uses on any host.
 */
#ifndef EVENT_FILTER_TYPE_EVENT_ID
#define EVENT_FILTER_TYPE_EVENT_ID (0x80000200)
#endif
#ifndef EVENT_FILTER_TYPE_STACKWALK
#define EVENT_FILTER_TYPE_STACKWALK (0x80001000)
#endif
#ifndef MAX_EVENT_FILTER_EVENT_ID_COUNT
#define MAX_EVENT_FILTER_EVENT_ID_COUNT (64)
#endif
#ifndef MAX_EVENT_FILTERS_COUNT
#define MAX_EVENT_FILTERS_COUNT (13)
#endif
#ifndef EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0
#define EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 0x00000010
#endif
#ifndef ERROR_ELEVATION_REQUIRED
#define ERROR_ELEVATION_REQUIRED 740L
#endif
#ifndef EVENT_TRACE_SYSTEM_LOGGER_MODE
#define EVENT_TRACE_SYSTEM_LOGGER_MODE 0x02000000
#endif

/* The SDK declares EVENT_FILTER_EVENT_ID as a typedef, which the preprocessor
 * cannot see; CMake's check_type_size tells us (HS_HAVE_EVENT_FILTER_EVENT_ID). */
#ifndef HS_HAVE_EVENT_FILTER_EVENT_ID
typedef struct _EVENT_FILTER_EVENT_ID {
	BOOLEAN FilterIn;
	UCHAR Reserved;
	USHORT Count;
	USHORT Events[ANYSIZE_ARRAY];
} EVENT_FILTER_EVENT_ID, *PEVENT_FILTER_EVENT_ID;
#endif

/* Not in any header: KernelTraceControl.dll's CreateMergedTraceFile flags
 * (EVENT_TRACE_MERGE_EXTENDED_DATA_*, as xperf and PerfView pass them). */
#define HS_MERGE_IMAGEID 0x00000001u
#define HS_MERGE_BUILDINFO 0x00000002u
#define HS_MERGE_VOLUME_MAPPING 0x00000004u
#define HS_MERGE_WINSAT 0x00000008u
#define HS_MERGE_EVENT_METADATA 0x00000010u

/* ---- the portable copies agree with the SDK ---- */
_Static_assert(WNODE_FLAG_TRACED_GUID == HS_WNODE_FLAG_TRACED_GUID, "WNODE_FLAG_TRACED_GUID");
_Static_assert(EVENT_TRACE_FILE_MODE_SEQUENTIAL == HS_EVENT_TRACE_FILE_MODE_SEQUENTIAL, "FILE_MODE_SEQUENTIAL");
_Static_assert(EVENT_TRACE_FILE_MODE_CIRCULAR == HS_EVENT_TRACE_FILE_MODE_CIRCULAR, "FILE_MODE_CIRCULAR");
_Static_assert(EVENT_TRACE_BUFFERING_MODE == HS_EVENT_TRACE_BUFFERING_MODE, "BUFFERING_MODE");
_Static_assert(EVENT_TRACE_REAL_TIME_MODE == HS_EVENT_TRACE_REAL_TIME_MODE, "REAL_TIME_MODE");
_Static_assert(PROCESS_TRACE_MODE_REAL_TIME == HS_PROCESS_TRACE_MODE_REAL_TIME, "PROCESS_TRACE_MODE_REAL_TIME");
_Static_assert(PROCESS_TRACE_MODE_RAW_TIMESTAMP == HS_PROCESS_TRACE_MODE_RAW_TIMESTAMP, "PROCESS_TRACE_MODE_RAW_TIMESTAMP");
_Static_assert(PROCESS_TRACE_MODE_EVENT_RECORD == HS_PROCESS_TRACE_MODE_EVENT_RECORD, "PROCESS_TRACE_MODE_EVENT_RECORD");
_Static_assert(EVENT_HEADER_FLAG_PROCESSOR_INDEX == 0x0200, "EVENT_HEADER_FLAG_PROCESSOR_INDEX");
_Static_assert(EVENT_TRACE_SYSTEM_LOGGER_MODE == HS_EVENT_TRACE_SYSTEM_LOGGER_MODE, "SYSTEM_LOGGER_MODE");
_Static_assert(EVENT_CONTROL_CODE_ENABLE_PROVIDER == HS_EVENT_CONTROL_CODE_ENABLE_PROVIDER, "ENABLE_PROVIDER");
_Static_assert(EVENT_CONTROL_CODE_CAPTURE_STATE == HS_EVENT_CONTROL_CODE_CAPTURE_STATE, "CAPTURE_STATE");
_Static_assert(EVENT_ENABLE_PROPERTY_STACK_TRACE == HS_EVENT_ENABLE_PROPERTY_STACK_TRACE, "STACK_TRACE");
_Static_assert(EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 == HS_EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0, "IGNORE_KW_0");
_Static_assert((unsigned)EVENT_FILTER_TYPE_EVENT_ID == HS_EVENT_FILTER_TYPE_EVENT_ID, "FILTER_TYPE_EVENT_ID");
_Static_assert((unsigned)EVENT_FILTER_TYPE_STACKWALK == HS_EVENT_FILTER_TYPE_STACKWALK, "FILTER_TYPE_STACKWALK");
_Static_assert(MAX_EVENT_FILTER_EVENT_ID_COUNT == HS_ETW_MAX_FILTER_IDS, "64 ids per EVENT_ID filter");
_Static_assert(TraceStackTracingInfo == HS_TRACE_STACK_TRACING_INFO, "TraceStackTracingInfo");
_Static_assert(TraceSampledProfileIntervalInfo == HS_TRACE_SAMPLED_PROFILE_INTERVAL_INFO, "TraceSampledProfileIntervalInfo");
_Static_assert(ENABLE_TRACE_PARAMETERS_VERSION_2 == 2, "ENABLE_TRACE_PARAMETERS_VERSION_2");
_Static_assert(EVENT_TRACE_CONTROL_QUERY == 0 && EVENT_TRACE_CONTROL_STOP == 1 && EVENT_TRACE_CONTROL_FLUSH == 3,
	       "ControlTraceW codes");

/* ---- layouts (x64 SDK; the kernel reads these bytes, so a wrong offset is silent corruption) ---- */
_Static_assert(sizeof(GUID) == 16 && offsetof(GUID, Data4) == 8, "GUID");
_Static_assert(sizeof(EVENT_FILTER_DESCRIPTOR) == 16, "EVENT_FILTER_DESCRIPTOR size");
_Static_assert(offsetof(EVENT_FILTER_DESCRIPTOR, Ptr) == 0 && offsetof(EVENT_FILTER_DESCRIPTOR, Size) == 8 &&
		       offsetof(EVENT_FILTER_DESCRIPTOR, Type) == 12,
	       "EVENT_FILTER_DESCRIPTOR fields");
_Static_assert(offsetof(EVENT_FILTER_EVENT_ID, FilterIn) == 0 && offsetof(EVENT_FILTER_EVENT_ID, Reserved) == 1 &&
		       offsetof(EVENT_FILTER_EVENT_ID, Count) == 2 && offsetof(EVENT_FILTER_EVENT_ID, Events) == 4,
	       "EVENT_FILTER_EVENT_ID fields");
_Static_assert(offsetof(EVENT_FILTER_EVENT_ID, Events) == HS_EVENT_FILTER_EVENT_ID_SIZE(0), "filter header");
_Static_assert(sizeof(CLASSIC_EVENT_ID) == 24 && offsetof(CLASSIC_EVENT_ID, Type) == 16, "CLASSIC_EVENT_ID");
_Static_assert(sizeof(TRACE_PROFILE_INTERVAL) == 8, "TRACE_PROFILE_INTERVAL");
_Static_assert(sizeof(WNODE_HEADER) == 48 && offsetof(WNODE_HEADER, Guid) == 24 &&
		       offsetof(WNODE_HEADER, ClientContext) == 40 && offsetof(WNODE_HEADER, Flags) == 44,
	       "WNODE_HEADER");
_Static_assert(sizeof(EVENT_TRACE_PROPERTIES) == HS_SIZEOF_EVENT_TRACE_PROPERTIES, "EVENT_TRACE_PROPERTIES size");
_Static_assert(offsetof(EVENT_TRACE_PROPERTIES, BufferSize) == 48 && offsetof(EVENT_TRACE_PROPERTIES, LogFileMode) == 64 &&
		       offsetof(EVENT_TRACE_PROPERTIES, EnableFlags) == 72 &&
		       offsetof(EVENT_TRACE_PROPERTIES, NumberOfBuffers) == 80 &&
		       offsetof(EVENT_TRACE_PROPERTIES, EventsLost) == 88 &&
		       offsetof(EVENT_TRACE_PROPERTIES, RealTimeBuffersLost) == 100,
	       "EVENT_TRACE_PROPERTIES fields");
#ifdef _WIN64
_Static_assert(offsetof(EVENT_TRACE_PROPERTIES, LoggerThreadId) == 104 &&
		       offsetof(EVENT_TRACE_PROPERTIES, LogFileNameOffset) == 112 &&
		       offsetof(EVENT_TRACE_PROPERTIES, LoggerNameOffset) == 116,
	       "EVENT_TRACE_PROPERTIES offsets (x64)");
_Static_assert(sizeof(ENABLE_TRACE_PARAMETERS) == 48 && offsetof(ENABLE_TRACE_PARAMETERS, SourceId) == 12 &&
		       offsetof(ENABLE_TRACE_PARAMETERS, EnableFilterDesc) == 32 &&
		       offsetof(ENABLE_TRACE_PARAMETERS, FilterDescCount) == 40,
	       "ENABLE_TRACE_PARAMETERS (x64)");
/* The real-time consumer (consumer.c) reads these fields of what ProcessTrace
 * hands its callback, and fills these of what OpenTraceW reads (evntcons.h,
 * evntrace.h; learn.microsoft.com ns-evntcons-event_record,
 * ns-evntcons-event_header, ns-evntprov-event_descriptor,
 * ns-evntrace-event_trace_logfilew). */
_Static_assert(sizeof(EVENT_DESCRIPTOR) == 16 && offsetof(EVENT_DESCRIPTOR, Version) == 2 &&
		       offsetof(EVENT_DESCRIPTOR, Level) == 4 && offsetof(EVENT_DESCRIPTOR, Opcode) == 5 &&
		       offsetof(EVENT_DESCRIPTOR, Keyword) == 8,
	       "EVENT_DESCRIPTOR");
_Static_assert(sizeof(EVENT_HEADER) == 80 && offsetof(EVENT_HEADER, Flags) == 4 &&
		       offsetof(EVENT_HEADER, ThreadId) == 8 && offsetof(EVENT_HEADER, ProcessId) == 12 &&
		       offsetof(EVENT_HEADER, TimeStamp) == 16 && offsetof(EVENT_HEADER, ProviderId) == 24 &&
		       offsetof(EVENT_HEADER, EventDescriptor) == 40 && offsetof(EVENT_HEADER, ActivityId) == 64,
	       "EVENT_HEADER (x64)");
_Static_assert(sizeof(ETW_BUFFER_CONTEXT) == 4, "ETW_BUFFER_CONTEXT");
_Static_assert(sizeof(EVENT_RECORD) == 112 && offsetof(EVENT_RECORD, BufferContext) == 80 &&
		       offsetof(EVENT_RECORD, ExtendedDataCount) == 84 && offsetof(EVENT_RECORD, UserDataLength) == 86 &&
		       offsetof(EVENT_RECORD, ExtendedData) == 88 && offsetof(EVENT_RECORD, UserData) == 96 &&
		       offsetof(EVENT_RECORD, UserContext) == 104,
	       "EVENT_RECORD (x64)");
/* TdhGetEventInformation's answer, read by the field decoding (consumer.c;
 * learn.microsoft.com ns-tdh-trace_event_info, ns-tdh-event_property_info,
 * ns-tdh-property_data_descriptor). */
_Static_assert(offsetof(TRACE_EVENT_INFO, PropertyCount) == 100 && offsetof(TRACE_EVENT_INFO, TopLevelPropertyCount) == 104 &&
		       offsetof(TRACE_EVENT_INFO, EventPropertyInfoArray) == 112,
	       "TRACE_EVENT_INFO");
_Static_assert(sizeof(EVENT_PROPERTY_INFO) == 24 && offsetof(EVENT_PROPERTY_INFO, NameOffset) == 4 &&
		       offsetof(EVENT_PROPERTY_INFO, nonStructType.InType) == 8 && offsetof(EVENT_PROPERTY_INFO, count) == 16 &&
		       offsetof(EVENT_PROPERTY_INFO, length) == 18,
	       "EVENT_PROPERTY_INFO");
_Static_assert(sizeof(PROPERTY_DATA_DESCRIPTOR) == 16 && offsetof(PROPERTY_DATA_DESCRIPTOR, ArrayIndex) == 8,
	       "PROPERTY_DATA_DESCRIPTOR");
_Static_assert(PropertyStruct == 0x1 && PropertyParamLength == 0x2 && PropertyParamCount == 0x4, "PROPERTY_FLAGS");
_Static_assert(sizeof(TRACE_LOGFILE_HEADER) == 280 && sizeof(EVENT_TRACE) == 88, "TRACE_LOGFILE_HEADER, EVENT_TRACE (x64)");
_Static_assert(sizeof(EVENT_TRACE_LOGFILEW) == 448 && offsetof(EVENT_TRACE_LOGFILEW, LogFileName) == 0 &&
		       offsetof(EVENT_TRACE_LOGFILEW, LoggerName) == 8 &&
		       offsetof(EVENT_TRACE_LOGFILEW, ProcessTraceMode) == 28 &&
		       offsetof(EVENT_TRACE_LOGFILEW, BufferCallback) == 400 &&
		       offsetof(EVENT_TRACE_LOGFILEW, EventRecordCallback) == 424 &&
		       offsetof(EVENT_TRACE_LOGFILEW, Context) == 440,
	       "EVENT_TRACE_LOGFILEW (x64)");
#endif

#endif
