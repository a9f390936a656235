/* report/cause/table.c: the cause classifiers in the order they are asked: the specific before the general, each stretch's last word its state's catch-all. */
#include <stddef.h>

#include "ca.h"

extern const ca_classifier ca_r_interrupts, ca_r_memory, ca_r_runtime, ca_r_stopped, ca_r_fault, ca_r_process_start,
	ca_r_throttle, ca_r_idle_exit, ca_r_sleep, ca_r_lock, ca_r_ipc, ca_r_io, ca_r_app, ca_r_contention,
	ca_r_insufficient, ca_r_wait;

const ca_classifier *const ca_table[] = {
	&ca_r_interrupts,    /* interrupt work on its CPU, whatever the thread did */
	&ca_r_memory,        /* reclaim it did itself, reclaim or dirty throttling it slept in */
	&ca_r_runtime,       /* its runtime's own pauses (the vocabulary's slice names) */
	&ca_r_wait,          /* Windows: a wait by its wait reason, where the vocabulary lists it */
	&ca_r_stopped,       /* a stop signal or a debugger */
	&ca_r_fault,         /* D after a file fault */
	&ca_r_process_start, /* runnable while new processes had its CPU */
	&ca_r_throttle,      /* runnable, the CPU idle or unfairly kept: a spent quota */
	&ca_r_idle_exit,     /* runnable on an idle CPU after a wake-up */
	&ca_r_sleep,         /* S until its own timer */
	&ca_r_lock,          /* S until a thread of its process woke it; D on a contended kernel lock */
	&ca_r_ipc,           /* S until another process, the network or a device woke it */
	&ca_r_io,            /* D: the I/O it waited for */
	&ca_r_app,           /* running: its own code */
	&ca_r_contention,    /* runnable: the tasks that had its CPU */
	&ca_r_insufficient,  /* what is left */
	NULL,
};
