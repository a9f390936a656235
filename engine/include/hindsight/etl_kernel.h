/* hindsight/etl_kernel.h: typed decoders for the classic kernel events the tools read (processes, threads, context switches and wake-ups, images, CPU samples, stacks, merged image ids) and process exits. */
#ifndef HINDSIGHT_ETL_KERNEL_H
#define HINDSIGHT_ETL_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindsight/etl.h"

/*
 * Layouts follow PerfView's TraceEvent parsers (KernelTraceEventParser.cs,
 * SymbolTraceEventParser.cs) and kerneltraceeventparser.mof; pointer-sized
 * fields take the size of the code that logged the record (record->ptr64).
 *
 * Every decoder checks the record's identity first and then every length:
 * it returns false, leaving *out unspecified, for another event or for a
 * payload too short or garbled to hold the fields (a string without its
 * terminator, an impossible SID, a stack whose size is not whole frames).
 * Trailing bytes that newer versions append are ignored.
 *
 * Ownership: text is copied into the output struct as NUL-terminated UTF-8
 * (truncated at a character boundary, with `truncated` set, when it does not
 * fit); pointers into the payload (SIDs, stack frames) are borrowed from the
 * record and valid only while the record is (during the hs_etl_foreach
 * callback).
 */

/* What a record is, for dispatch; HS_ETLK_OTHER for everything not decoded here. */
typedef enum {
	HS_ETLK_OTHER,
	HS_ETLK_PROCESS,      /* 0x03 / 1 Start, 2 End, 3 DCStart, 4 DCEnd, 39 Defunct */
	HS_ETLK_THREAD,       /* 0x05 / 1 Start, 2 End, 3 DCStart, 4 DCEnd */
	HS_ETLK_IMAGE,        /* 0x14 / 2 Unload, 3 DCStart, 4 DCEnd, 10 Load; and 0x03 / 10 */
	HS_ETLK_SAMPLE,       /* 0x0F / 46 SampledProfile */
	HS_ETLK_INTERVAL,     /* 0x0F / 72 SetInterval, 73 CollectionStart, 74 CollectionEnd */
	HS_ETLK_STACK,        /* 0x18 / 32 Stack: frames inline */
	HS_ETLK_STACK_KEY,    /* 0x18 / 37 StackKeyKernel, 38 StackKeyUser: a reference to a cached stack */
	HS_ETLK_STACK_DEF,    /* 0x18 / 35 KeyDelete, 36 KeyRundown: the frames of a cached stack */
	HS_ETLK_IMAGE_ID,     /* merged KernelTraceControl ImageId, opcode 0 */
	HS_ETLK_DBGID_RSDS,   /* merged KernelTraceControl ImageId, opcode 36 */
} hs_etlk_kind;

/* Kernel opcodes shared by the process, thread and image groups. */
enum {
	HS_ETLK_OP_START = 1,
	HS_ETLK_OP_END = 2,
	HS_ETLK_OP_DCSTART = 3,
	HS_ETLK_OP_DCEND = 4,
	HS_ETLK_OP_LOAD = 10,
	HS_ETLK_OP_DEFUNCT = 39,
	/* PerfInfo's profile-interval events */
	HS_ETLK_OP_SET_INTERVAL = 72,
	HS_ETLK_OP_COLLECTION_START = 73,
	HS_ETLK_OP_COLLECTION_END = 74,
};

/* Classifies by identity only (group/opcode, or GUID/opcode); no payload check. */
hs_etlk_kind hs_etlk_classify(const hs_etl_record *r);

/* Process Start/End/DCStart/DCEnd/Defunct, versions 0-5 (v5 Defunct appends an exit time,
 * not decoded; later versions read as 4). */
typedef struct {
	uint8_t opcode, version;
	uint64_t unique_process_key;   /* v2+ */
	uint32_t pid, parent_pid;
	uint32_t session_id;           /* v1+ */
	int32_t exit_status;           /* v1+ */
	uint64_t directory_table_base; /* v3+ */
	uint32_t flags;                /* v4+ */
	const uint8_t *user_sid;       /* the SID (after the TOKEN_USER header), or NULL; borrowed */
	size_t user_sid_len;
	char image_file_name[256];     /* ImageFileName (the kernel's short name, e.g. "cmd.exe") */
	char command_line[4096];       /* v2+ */
	char package_full_name[256];   /* v4+, when logged ("" for desktop processes) */
	char application_id[256];      /* v4+, when logged */
	bool truncated;
} hs_etl_process;
bool hs_etl_decode_process(const hs_etl_record *r, hs_etl_process *out);

/* Thread Start/End/DCStart/DCEnd, versions 0-4. */
typedef struct {
	uint8_t opcode, version;
	uint32_t pid, tid;
	/* v2+ only (0 otherwise): */
	uint64_t stack_base, stack_limit, user_stack_base, user_stack_limit;
	uint64_t start_addr, win32_start_addr, teb_base;
	uint32_t sub_process_tag;
	/* v3+ only: */
	uint8_t base_priority, page_priority, io_priority, thread_flags;
	char name[256]; /* ThreadName when the event carries one (Windows 10 1709+), else "" */
	bool truncated;
} hs_etl_thread;
bool hs_etl_decode_thread(const hs_etl_record *r, hs_etl_thread *out);

/* Image Load/Unload/DCStart/DCEnd, versions 0-3 (later read as 3). */
typedef struct {
	uint8_t opcode, version;
	uint64_t base, size;
	uint32_t pid;             /* v1+; 0 for kernel-mode images */
	uint32_t checksum;        /* v2+ */
	uint32_t time_date_stamp; /* v2+ */
	uint8_t signature_level, signature_type; /* v3+ */
	uint64_t default_base;    /* v2+ */
	char file_name[1024];     /* kernel path, e.g. \Device\HarddiskVolume2\Windows\System32\ntdll.dll */
	bool truncated;
} hs_etl_image;
bool hs_etl_decode_image(const hs_etl_record *r, hs_etl_image *out);

/* SampledProfile. Count is 16 bits: Windows 8+ keeps flags and the thread's
 * priority in the upper half of what the MOF calls a 32-bit Count. */
typedef struct {
	uint64_t ip;
	uint32_t tid;
	uint16_t count;
	bool dpc, isr;     /* executing a DPC or an ISR: kernel work on a borrowed thread */
	uint8_t priority;  /* 0..31 */
	uint8_t rank;
} hs_etl_sample;
bool hs_etl_decode_sample(const hs_etl_record *r, hs_etl_sample *out);

/* SetInterval / CollectionStart / CollectionEnd. Intervals are in 100 ns units;
 * source 0 is the timer that drives SampledProfile. */
typedef struct {
	uint8_t opcode;
	uint32_t source, new_interval, old_interval;
} hs_etl_interval;
bool hs_etl_decode_interval(const hs_etl_record *r, hs_etl_interval *out);

/* A stack: frame 0 is the leaf (the interrupted instruction), the last is the
 * outermost caller. Frames are read with hs_etl_stack_frame. */
typedef struct {
	const uint8_t *frames; /* borrowed from the record */
	size_t count;
	bool ptr64;
} hs_etl_frames;
uint64_t hs_etl_stack_frame(const hs_etl_frames *f, size_t i);

/* StackWalk Stack (32): the stack of the event logged at event_ts on thread tid. */
typedef struct {
	uint64_t event_ts; /* raw clock, equal to that event's record timestamp */
	uint32_t pid, tid;
	hs_etl_frames frames;
} hs_etl_stack;
bool hs_etl_decode_stack(const hs_etl_record *r, hs_etl_stack *out);

/* StackKeyKernel / StackKeyUser: the event at event_ts has the kernel (or user)
 * part of its stack in the cache under key; a later KeyDelete/KeyRundown with
 * the same key gives the frames. */
typedef struct {
	uint64_t event_ts;
	uint32_t pid, tid;
	uint64_t key;
	bool user; /* opcode 38 */
} hs_etl_stack_key;
bool hs_etl_decode_stack_key(const hs_etl_record *r, hs_etl_stack_key *out);

/* KeyDelete / KeyRundown: the frames behind a key (the key may be reused after). */
typedef struct {
	uint64_t key;
	hs_etl_frames frames;
} hs_etl_stack_def;
bool hs_etl_decode_stack_def(const hs_etl_record *r, hs_etl_stack_def *out);

/* Merged-file ImageId (opcode 0): the PE's own name for an image that a load
 * or rundown event at the same timestamp describes. The process is the
 * record header's (the payload's ProcessId is usually 0). */
typedef struct {
	uint64_t base, size;
	uint32_t pid;
	uint32_t time_date_stamp;
	char original_file_name[512];
	bool truncated;
} hs_etl_image_id;
bool hs_etl_decode_image_id(const hs_etl_record *r, hs_etl_image_id *out);

/* Merged-file DbgID_RSDS (opcode 36): the image's PDB identity. */
typedef struct {
	uint64_t base;
	uint32_t pid;
	hs_guid guid;
	uint32_t age;
	char pdb_file_name[512]; /* UTF-8 as logged */
	bool truncated;
} hs_etl_dbgid;
bool hs_etl_decode_dbgid(const hs_etl_record *r, hs_etl_dbgid *out);

/*
 * Kernel-Process ProcessStop (the manifest provider's process exit), versions
 * 0-1. Which records are process exits is the rules' catalog's to say (an
 * event with `means: process-exit`; provider GUIDs live in the catalogs, not
 * here), so this checks only that r is a manifest event of a known version
 * whose payload holds the fixed fields. The image name is decoded as far as
 * the payload goes (a name cut short is not a failure).
 */
typedef struct {
	uint8_t version;
	uint32_t pid;
	uint64_t create_time, exit_time; /* FILETIME (100 ns since 1601, UTC) */
	uint32_t exit_code;              /* what the process returned, or the NTSTATUS it died of */
	/* 0 when the payload stops before them: */
	uint32_t token_elevation_type, handle_count;
	uint64_t commit_charge, commit_peak;
	char image_name[256]; /* ImageName (the kernel's short name, e.g. "game.exe"), or "" */
	bool truncated;
	/* exit_code is an NTSTATUS error (severity 3, 0xC...): the process died of it. */
	bool crashed;
} hs_etl_process_stop;
bool hs_etl_decode_process_stop(const hs_etl_record *r, hs_etl_process_stop *out);

/*
 * The scheduler's records (Thread group 0x05), for wait analysis. They are not
 * kinds of hs_etlk_classify (which keeps its callers' switches whole): each
 * decoder checks the identity itself, any kernel header kind (SYSTEM,
 * COMPACT, PERFINFO; newer Windows logs CSwitch with the compact header).
 *
 * CSwitch (opcode 36), the MOF CSwitch class (Thread_V2), 24 bytes, the same
 * in versions 2, 3 and 4: NewThreadId u32 @0, OldThreadId u32 @4,
 * NewThreadPriority i8 @8, OldThreadPriority i8 @9, PreviousCState u8 @10,
 * SpareByte @11, OldThreadWaitReason i8 @12, OldThreadWaitMode i8 @13,
 * OldThreadState i8 @14, OldThreadWaitIdealProcessor i8 @15,
 * NewThreadWaitTime u32 @16, Reserved u32 @20. Version 1 (CSwitch_V1, Windows
 * XP) has the same offsets in 20 bytes: NewThreadQuantum and OldThreadQuantum
 * where v2 has PreviousCState and SpareByte, and no Reserved. No version 0
 * exists; a later version is read as 4 (its payload must hold the 24 bytes).
 * Nothing here depends on the pointer size.
 */
enum {
	HS_ETLK_OP_CSWITCH = 36,
	HS_ETLK_OP_READY_THREAD = 50,
};

/* KTHREAD_STATE: CSwitch's OldThreadState. The CSwitch class documents 0..7; 8 and 9 are wdm.h's later values. */
enum {
	HS_ETL_THREAD_INITIALIZED = 0,
	HS_ETL_THREAD_READY = 1,
	HS_ETL_THREAD_RUNNING = 2,
	HS_ETL_THREAD_STANDBY = 3,
	HS_ETL_THREAD_TERMINATED = 4,
	HS_ETL_THREAD_WAITING = 5,
	HS_ETL_THREAD_TRANSITION = 6, /* ready, but its kernel stack is paged out */
	HS_ETL_THREAD_DEFERRED_READY = 7,
	HS_ETL_THREAD_GATE_WAIT = 8,  /* GateWaitObsolete */
	HS_ETL_THREAD_WAITING_FOR_PROCESS_IN_SWAP = 9,
};

/* KPROCESSOR_MODE: CSwitch's OldThreadWaitMode. */
enum { HS_ETL_WAIT_KERNEL_MODE = 0, HS_ETL_WAIT_USER_MODE = 1 };

typedef struct {
	uint8_t version;
	uint32_t new_tid, old_tid;
	int8_t new_priority, old_priority; /* 0..31; 16 and up is the real-time class */
	uint8_t previous_cstate;           /* v2+: the C-state the CPU left (0 when it was not idle); v1: 0 */
	int8_t old_wait_reason;            /* KWAIT_REASON (hindsight/wait_reason.h), meaningful when old_state waits */
	int8_t old_wait_mode;              /* HS_ETL_WAIT_KERNEL_MODE / USER_MODE */
	int8_t old_state;                  /* HS_ETL_THREAD_* */
	int8_t old_wait_ideal_processor;
	uint32_t new_wait_time;            /* how long the new thread waited; the MOF gives no unit */
} hs_etl_cswitch;
bool hs_etl_decode_cswitch(const hs_etl_record *r, hs_etl_cswitch *out);

/*
 * ReadyThread (opcode 50), the MOF ReadyThread class (Thread_V2), 8 bytes:
 * TThreadId u32 @0 (the thread made ready), AdjustReason i8 @4,
 * AdjustIncrement i8 @5, Flag i8 @6, Reserved @7. The record's own thread
 * (the header's) is the one that readied it, the waker; under a DPC it is
 * whatever thread the interrupt came over (the idle thread on an idle CPU).
 * When the thread's kernel stack or its process was swapped out, a second
 * ReadyThread follows once they are back in. Versions 2 and later (the class
 * came with Windows Vista's dispatcher events).
 */
enum {
	HS_ETL_READY_FROM_DPC = 0x1,          /* readied by a deferred procedure call */
	HS_ETL_READY_STACK_SWAPPED = 0x2,     /* its kernel stack was swapped out */
	HS_ETL_READY_PROCESS_SWAPPED = 0x4,   /* its process's address space was swapped out */
};

typedef struct {
	uint8_t version;
	uint32_t tid;     /* the thread made ready */
	uint32_t readier; /* the record's thread (the waker), UINT32_MAX when its header has none (PERFINFO) */
	int8_t adjust_reason, adjust_increment;
	uint8_t flags;    /* HS_ETL_READY_* */
} hs_etl_ready_thread;
bool hs_etl_decode_ready_thread(const hs_etl_record *r, hs_etl_ready_thread *out);

/* The name ETW gives kernel event group `group` (the high byte of a classic HookId: 0x03 "Process"), or NULL for
 * a group it does not name. Static string. */
const char *hs_etl_kernel_group_name(uint8_t group);

/* The name of an NTSTATUS a crash report spells out ("STATUS_ACCESS_VIOLATION"),
 * or NULL for one it prints only as hex. Static string. */
const char *hs_ntstatus_name(uint32_t status);

/* Group 0 of the kernel records: the logfile header and its companions
 * (no class of their own; a file without them has no clock). */
bool hs_etl_kernel_header(const hs_etl_record *r);

/* The classic event-class GUID a kernel record (SYSTEM, COMPACT, PERFINFO)
 * is presented under, from its group (Process/10, the image load, is the
 * ImageLoad class); false for other records and unknown groups. The opcode
 * is the event's number within the class. */
bool hs_etl_kernel_class_guid(const hs_etl_record *r, hs_guid *out);

/* True for an address in the kernel half of the address space of a logger
 * with that pointer size (what tells kernel frames from user frames). */
bool hs_etl_kernel_address(uint64_t addr, bool ptr64);

#endif
