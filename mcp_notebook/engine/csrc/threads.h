/* A second thread for the passes that can run on two (harscan.h): POSIX threads where
 * there are, and a flag one thread sets and the other reads. Without them (MN_THREADS 0)
 * the passes run on one thread, as they always may. */
#ifndef MCP_NOTEBOOK_THREADS_H
#define MCP_NOTEBOOK_THREADS_H

#if (defined(__unix__) || defined(__APPLE__)) && (defined(__GNUC__) || defined(__clang__)) \
    && !defined(MN_PLAIN_C)
#include <pthread.h>
#define MN_THREADS 1
typedef pthread_t mn_thread;

/* 0 once fn(arg) runs on a new thread, else non-zero (no thread: the caller does it) */
static inline int mn_thread_start(mn_thread *t, void *(*fn)(void *), void *arg) {
    return pthread_create(t, NULL, fn, arg);
}

static inline void mn_thread_join(mn_thread t) {
    pthread_join(t, NULL);
}

static inline void mn_flag_set(int *f) {
    __atomic_store_n(f, 1, __ATOMIC_RELEASE);
}

static inline int mn_flag_get(const int *f) {
    return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}
#else
#define MN_THREADS 0
#endif

#endif
