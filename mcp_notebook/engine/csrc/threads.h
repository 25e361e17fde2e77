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

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif
/* A large buffer about to be written once from end to end: its pages asked for as huge
 * pages where the kernel leaves that to the program (transparent huge pages on
 * "madvise"), one fault per 2 MB instead of per 4 KB. A hint: refused, nothing changes. */
static inline void mn_huge(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + n) & ~(huge - 1);
    if (b > a) madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

#endif
