/* run/live_lock.h: a mutex and a condition variable over pthreads or Win32, for the live view's and the JSONL tap's queues. */
#ifndef HS_RUN_LIVE_LOCK_H
#define HS_RUN_LIVE_LOCK_H

#ifdef _WIN32
#include <windows.h>
#else
#include <pthread.h>
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

#endif
