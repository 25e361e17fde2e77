/* A second thread for the passes that can run on two (harscan.h, the scanner's pipe in
 * scanpipe.h): POSIX threads where there are, and a flag one thread sets and the other
 * reads. Without them (MN_THREADS 0: no POSIX threads, or built with -DMN_NO_THREADS)
 * the passes run on one thread, as they always may. */
#ifndef MCP_NOTEBOOK_THREADS_H
#define MCP_NOTEBOOK_THREADS_H

#if !defined(MN_NO_THREADS) && (defined(__unix__) || defined(__APPLE__)) && \
    (defined(__GNUC__) || defined(__clang__))
#include <pthread.h>
#include <signal.h>
#define MN_THREADS 1
typedef pthread_t mn_thread;

/* 0 once fn(arg) runs on a new thread, else non-zero (no thread: the caller does it).
 * Signals go to Python's threads, not to the new one (it inherits the mask all blocked);
 * its stack is 1 MB (the JSON checks nest 64 deep). */
static inline int mn_thread_start(mn_thread *t, void *(*fn)(void *), void *arg) {
    pthread_attr_t attr;
    int bad = pthread_attr_init(&attr);
    if (bad) return bad;
    sigset_t all, was;
    sigfillset(&all);
    int masked = !pthread_sigmask(SIG_BLOCK, &all, &was);
    pthread_attr_setstacksize(&attr, 1 << 20);
    bad = pthread_create(t, &attr, fn, arg);
    if (masked) pthread_sigmask(SIG_SETMASK, &was, NULL);
    pthread_attr_destroy(&attr);
    return bad;
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
