/* plan/etw_defs.h: the ETW constants and layout facts a Windows plan is expressed in, on any host; the Windows backend asserts them against the SDK. */
#ifndef HS_PLAN_ETW_DEFS_H
#define HS_PLAN_ETW_DEFS_H

/* These are mechanism, not policy: fixed values of the Windows API
 * (evntrace.h, evntprov.h, wmistr.h), named as in the SDK with an HS_ prefix so
 * planning for Windows works on Linux. The Windows build static-asserts each
 * against the real header where the header has it. */

#define HS_WNODE_FLAG_TRACED_GUID 0x00020000u

#define HS_EVENT_TRACE_FILE_MODE_SEQUENTIAL 0x00000001u
#define HS_EVENT_TRACE_FILE_MODE_CIRCULAR 0x00000002u
#define HS_EVENT_TRACE_REAL_TIME_MODE 0x00000100u
#define HS_EVENT_TRACE_BUFFERING_MODE 0x00000400u
#define HS_EVENT_TRACE_SYSTEM_LOGGER_MODE 0x02000000u

/* Wnode.ClientContext clock resolution. */
#define HS_ETW_CLOCK_QPC 1u
#define HS_ETW_CLOCK_SYSTEM 2u
#define HS_ETW_CLOCK_CYCLE 3u

/* EVENT_TRACE_LOGFILEW.ProcessTraceMode (evntcons.h). */
#define HS_PROCESS_TRACE_MODE_REAL_TIME 0x00000100u
#define HS_PROCESS_TRACE_MODE_RAW_TIMESTAMP 0x00001000u
#define HS_PROCESS_TRACE_MODE_EVENT_RECORD 0x10000000u

/* _TDH_IN_TYPE (tdh.h; mingw-w64 lacks the enum): the scalar types the
 * real-time consumer's field decoding reads. */
#define HS_TDH_INTYPE_UNICODESTRING 1
#define HS_TDH_INTYPE_ANSISTRING 2
#define HS_TDH_INTYPE_INT8 3
#define HS_TDH_INTYPE_UINT8 4
#define HS_TDH_INTYPE_INT16 5
#define HS_TDH_INTYPE_UINT16 6
#define HS_TDH_INTYPE_INT32 7
#define HS_TDH_INTYPE_UINT32 8
#define HS_TDH_INTYPE_INT64 9
#define HS_TDH_INTYPE_UINT64 10
#define HS_TDH_INTYPE_BOOLEAN 13
#define HS_TDH_INTYPE_HEXINT32 20
#define HS_TDH_INTYPE_HEXINT64 21

#define HS_EVENT_CONTROL_CODE_ENABLE_PROVIDER 1u
#define HS_EVENT_CONTROL_CODE_CAPTURE_STATE 2u

#define HS_EVENT_ENABLE_PROPERTY_STACK_TRACE 0x00000004u
#define HS_EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 0x00000010u

#define HS_EVENT_FILTER_TYPE_EVENT_ID 0x80000200u
#define HS_EVENT_FILTER_TYPE_STACKWALK 0x80001000u

#define HS_TRACE_STACK_TRACING_INFO 3
#define HS_TRACE_SAMPLED_PROFILE_INTERVAL_INFO 5

/* sizeof(EVENT_TRACE_PROPERTIES) on every Windows ABI we build for (x64 and
 * x86 alike: the struct has no pointers); the mingw build asserts it. */
#define HS_SIZEOF_EVENT_TRACE_PROPERTIES 120u

/* EVENT_FILTER_EVENT_ID: BOOLEAN FilterIn; UCHAR Reserved; USHORT Count;
 * USHORT Events[]: the header is 4 bytes, each id 2. */
#define HS_EVENT_FILTER_EVENT_ID_SIZE(count) (4u + 2u * (unsigned)(count))

#endif
