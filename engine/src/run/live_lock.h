/* run/live_lock.h: a mutex, a condition variable and a worker thread over pthreads or Win32, for the run layer's queues (live view, JSONL tap, capture-time reports, main.log tee). */
#ifndef HS_RUN_LIVE_LOCK_H
#define HS_RUN_LIVE_LOCK_H

#include <stdbool.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <pthread.h>
#include <signal.h>
#include <time.h>
#endif

#ifdef _WIN32
typedef CRITICAL_SECTION hs_mutex;
typedef CONDITION_VARIABLE hs_cond;
#define hs_mutex_init(m) InitializeCriticalSection(m)
#define hs_mutex_destroy(m) DeleteCriticalSection(m)
#define hs_mutex_lock(m) EnterCriticalSection(m)
#define hs_mutex_unlock(m) LeaveCriticalSection(m)
#define hs_cond_init(c) InitializeConditionVariable(c)
#define hs_cond_destroy(c) ((void)(c))
#define hs_cond_signal(c) WakeConditionVariable(c)
#define hs_cond_wait_ms(c, m, ms) SleepConditionVariableCS(c, m, ms)
#else
typedef pthread_mutex_t hs_mutex;
typedef pthread_cond_t hs_cond;
#define hs_mutex_init(m) pthread_mutex_init(m, NULL)
#define hs_mutex_destroy(m) pthread_mutex_destroy(m)
#define hs_mutex_lock(m) pthread_mutex_lock(m)
#define hs_mutex_unlock(m) pthread_mutex_unlock(m)
#define hs_cond_init(c) pthread_cond_init(c, NULL)
#define hs_cond_destroy(c) pthread_cond_destroy(c)
#define hs_cond_signal(c) pthread_cond_signal(c)
static inline void hs_cond_wait_ms(hs_cond *c, hs_mutex *m, int ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(c, m, &ts);
}
#endif

/* A worker thread: hs_thread_start runs fn(arg) (on POSIX with every signal
 * blocked, so it never takes the stop signals meant for the main loop) and
 * says whether it started; hs_thread_join waits for it (on Windows at most
 * ms, HS_THREAD_FOREVER for no limit; POSIX always waits) and says whether it
 * ended. */
/* A thread's entry point, spelled as each platform wants it:
 * static HS_THREAD_MAIN(name, arg) { ...; return HS_THREAD_DONE; } */
#ifdef _WIN32
#define HS_THREAD_MAIN(name, arg) DWORD WINAPI name(LPVOID arg)
#define HS_THREAD_DONE 0
#else
#define HS_THREAD_MAIN(name, arg) void *name(void *arg)
#define HS_THREAD_DONE NULL
#endif

#ifdef _WIN32
typedef HANDLE hs_thread;
typedef LPTHREAD_START_ROUTINE hs_thread_fn;
#define HS_THREAD_FOREVER INFINITE
static inline bool hs_thread_start(hs_thread *t, hs_thread_fn fn, void *arg)
{
	*t = CreateThread(NULL, 0, fn, arg, 0, NULL);
	return *t != NULL;
}
static inline bool hs_thread_join(hs_thread t, DWORD ms)
{
	bool joined = WaitForSingleObject(t, ms) == WAIT_OBJECT_0;
	CloseHandle(t);
	return joined;
}
#else
typedef pthread_t hs_thread;
typedef void *(*hs_thread_fn)(void *);
#define HS_THREAD_FOREVER 0
static inline bool hs_thread_start(hs_thread *t, hs_thread_fn fn, void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	bool started = !pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return started;
}
static inline bool hs_thread_join(hs_thread t, unsigned ms)
{
	(void)ms;
	pthread_join(t, NULL);
	return true;
}
#endif

/* A queue's lock, its signal and the thread that serves it, made together;
 * false, with none of them left, when the thread cannot start. */
static inline bool hs_worker_start(hs_mutex *mu, hs_cond *cv, hs_thread *t, hs_thread_fn fn, void *arg)
{
	hs_mutex_init(mu);
	hs_cond_init(cv);
	if (hs_thread_start(t, fn, arg))
		return true;
	hs_mutex_destroy(mu);
	hs_cond_destroy(cv);
	return false;
}

#endif
