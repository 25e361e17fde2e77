/* Compiler portability: the few builtins the scanner and the walks use, with MSVC
 * intrinsics and plain C fallbacks, so that the extension builds with GCC, Clang and MSVC.
 * The SSSE3/AVX2 paths (utf8.h, tap.h) stay GCC/Clang-only (they need `target`
 * attributes and __builtin_cpu_supports); elsewhere the SSE2 or plain loops run.
 * -DMN_PLAIN_C builds the plain C forms with any compiler (how they are tried here). */
#ifndef MCP_NOTEBOOK_PORTABLE_H
#define MCP_NOTEBOOK_PORTABLE_H

/* SSE2: every x86-64 CPU has it; GCC and Clang say so with __SSE2__, MSVC does not */
#if (defined(__SSE2__) || defined(_M_X64) || defined(_M_AMD64) || \
     (defined(_M_IX86_FP) && _M_IX86_FP >= 2)) && !defined(MN_PLAIN_C)
#define MN_SSE2 1
#else
#define MN_SSE2 0
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(MN_PLAIN_C)
/* the number of trailing zero bits of x (x != 0) */
#define mn_ctz(x) __builtin_ctz(x)
#define MN_PREFETCH(p) __builtin_prefetch(p)
#define MN_PREFETCH_W(p) __builtin_prefetch((p), 1)
#elif defined(_MSC_VER) && !defined(MN_PLAIN_C)
#include <intrin.h>
static __forceinline int mn_ctz(unsigned x) {
    unsigned long i;
    _BitScanForward(&i, x);
    return (int)i;
}
#if defined(_M_X64) || defined(_M_AMD64) || defined(_M_IX86)
#include <xmmintrin.h>
#define MN_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#elif defined(_M_ARM64)
#define MN_PREFETCH(p) __prefetch((const void *)(p))
#else
#define MN_PREFETCH(p) ((void)(p))
#endif
#define MN_PREFETCH_W(p) MN_PREFETCH(p)
#else
static inline int mn_ctz(unsigned x) {
    int n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        n++;
    }
    return n;
}
#define MN_PREFETCH(p) ((void)(p))
#define MN_PREFETCH_W(p) ((void)(p))
#endif

#endif
