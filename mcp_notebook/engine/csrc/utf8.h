/* Whether bytes are valid UTF-8: a sequence at a time, 16 bytes at a time (SSSE3) or
 * 32 (AVX2); the level is chosen when the module is imported. */
#ifndef MCP_NOTEBOOK_UTF8_H
#define MCP_NOTEBOOK_UTF8_H
#include "json.h"

/* Whether [p, end) is valid UTF-8 (a sequence at a time). */
static int utf8_valid_scalar(cptr p, cptr end) {
    while (p < end) {
#if MN_SSE2
        if (end - p >= 16) {
            int mask = _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)p));
            if (!mask) {
                p += 16;
                continue;
            }
            p += mn_ctz((unsigned)mask);  /* the next non-ASCII byte */
        } else
#endif
        {
            while (p < end && *p < 0x80) p++;
            if (p >= end) break;
        }
        int n = utf8_len(p, end);
        if (!n) return 0;
        p += n;
    }
    return 1;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(MN_PLAIN_C)
#include <immintrin.h>
#include <tmmintrin.h>
#define HAVE_SSSE3_PATH 1
/* Whether [p, end) is valid UTF-8, 16 bytes at a time: the lookup algorithm of
 * J. Keiser and D. Lemire, "Validating UTF-8 in less than one instruction per byte"
 * (Software: Practice and Experience, 2021), as simdjson implements it. */
__attribute__((target("ssse3"))) static int utf8_valid_ssse3(cptr p, cptr end) {
    /* error bits: TOO_SHORT 01, TOO_LONG 02, OVERLONG_3 04, TOO_LARGE 08, SURROGATE 10,
     * OVERLONG_2 20, TOO_LARGE_1000 / OVERLONG_4 40, TWO_CONTS 80 */
    const __m128i hi1 = _mm_setr_epi8(0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02,
                                      (char)0x80, (char)0x80, (char)0x80, (char)0x80,
                                      0x21, 0x01, 0x15, 0x49);
    const __m128i lo1 = _mm_setr_epi8((char)0xE7, (char)0xA3, (char)0x83, (char)0x83,
                                      (char)0x8B, (char)0xCB, (char)0xCB, (char)0xCB,
                                      (char)0xCB, (char)0xCB, (char)0xCB, (char)0xCB,
                                      (char)0xCB, (char)0xDB, (char)0xCB, (char)0xCB);
    const __m128i hi2 = _mm_setr_epi8(0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
                                      (char)0xE6, (char)0xAE, (char)0xBA, (char)0xBA,
                                      0x01, 0x01, 0x01, 0x01);
    const __m128i nib = _mm_set1_epi8(0x0F);
    const __m128i incomplete = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                             -1, (char)0xEF, (char)0xDF, (char)0xBF);
    __m128i prev = _mm_setzero_si128(), prev_inc = _mm_setzero_si128(),
            err = _mm_setzero_si128();
    unsigned char tail[16];
    for (int last = 0; !last;) {
        __m128i in;
        if (end - p >= 16) {
            in = _mm_loadu_si128((const __m128i *)p);
            p += 16;
        } else {  /* the rest, padded with zero bytes (ASCII): a cut sequence shows */
            memset(tail, 0, 16);
            memcpy(tail, p, (size_t)(end - p));
            in = _mm_loadu_si128((const __m128i *)tail);
            last = 1;
        }
        if (!_mm_movemask_epi8(in)) {
            err = _mm_or_si128(err, prev_inc);
        } else {
            __m128i prev1 = _mm_alignr_epi8(in, prev, 15);
            __m128i sc = _mm_and_si128(
                _mm_and_si128(_mm_shuffle_epi8(hi1, _mm_and_si128(_mm_srli_epi16(prev1, 4), nib)),
                              _mm_shuffle_epi8(lo1, _mm_and_si128(prev1, nib))),
                _mm_shuffle_epi8(hi2, _mm_and_si128(_mm_srli_epi16(in, 4), nib)));
            __m128i prev2 = _mm_alignr_epi8(in, prev, 14);
            __m128i prev3 = _mm_alignr_epi8(in, prev, 13);
            __m128i must23 = _mm_or_si128(_mm_subs_epu8(prev2, _mm_set1_epi8((char)(0xE0 - 0x80))),
                                          _mm_subs_epu8(prev3, _mm_set1_epi8((char)(0xF0 - 0x80))));
            __m128i must23_80 = _mm_and_si128(must23, _mm_set1_epi8((char)0x80));
            err = _mm_or_si128(err, _mm_xor_si128(must23_80, sc));
            prev_inc = _mm_subs_epu8(in, incomplete);
        }
        prev = in;
    }
    return _mm_movemask_epi8(_mm_cmpeq_epi8(err, _mm_setzero_si128())) == 0xFFFF;
}
/* The same, 32 bytes at a time. */
__attribute__((target("avx2"))) static int utf8_valid_avx2(cptr p, cptr end) {
    const __m256i hi1 = _mm256_setr_epi8(
        0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, (char)0x80, (char)0x80, (char)0x80,
        (char)0x80, 0x21, 0x01, 0x15, 0x49,
        0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, (char)0x80, (char)0x80, (char)0x80,
        (char)0x80, 0x21, 0x01, 0x15, 0x49);
    const __m256i lo1 = _mm256_setr_epi8(
        (char)0xE7, (char)0xA3, (char)0x83, (char)0x83, (char)0x8B, (char)0xCB, (char)0xCB,
        (char)0xCB, (char)0xCB, (char)0xCB, (char)0xCB, (char)0xCB, (char)0xCB, (char)0xDB,
        (char)0xCB, (char)0xCB,
        (char)0xE7, (char)0xA3, (char)0x83, (char)0x83, (char)0x8B, (char)0xCB, (char)0xCB,
        (char)0xCB, (char)0xCB, (char)0xCB, (char)0xCB, (char)0xCB, (char)0xCB, (char)0xDB,
        (char)0xCB, (char)0xCB);
    const __m256i hi2 = _mm256_setr_epi8(
        0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, (char)0xE6, (char)0xAE, (char)0xBA,
        (char)0xBA, 0x01, 0x01, 0x01, 0x01,
        0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, (char)0xE6, (char)0xAE, (char)0xBA,
        (char)0xBA, 0x01, 0x01, 0x01, 0x01);
    const __m256i nib = _mm256_set1_epi8(0x0F);
    const __m256i incomplete = _mm256_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, (char)0xEF, (char)0xDF, (char)0xBF);
    __m256i prev = _mm256_setzero_si256(), prev_inc = _mm256_setzero_si256(),
            err = _mm256_setzero_si256();
    unsigned char tail[32];
    for (int last = 0; !last;) {
        __m256i in;
        if (end - p >= 32) {
            in = _mm256_loadu_si256((const __m256i *)p);
            p += 32;
        } else {
            memset(tail, 0, 32);
            memcpy(tail, p, (size_t)(end - p));
            in = _mm256_loadu_si256((const __m256i *)tail);
            last = 1;
        }
        if (!_mm256_movemask_epi8(in)) {
            err = _mm256_or_si256(err, prev_inc);
        } else {
            /* the bytes before each byte: `in` shifted by 1..3, the tail of prev coming in */
            __m256i carry = _mm256_permute2x128_si256(prev, in, 0x21);
            __m256i prev1 = _mm256_alignr_epi8(in, carry, 15);
            __m256i prev2 = _mm256_alignr_epi8(in, carry, 14);
            __m256i prev3 = _mm256_alignr_epi8(in, carry, 13);
            __m256i sc = _mm256_and_si256(
                _mm256_and_si256(
                    _mm256_shuffle_epi8(hi1, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nib)),
                    _mm256_shuffle_epi8(lo1, _mm256_and_si256(prev1, nib))),
                _mm256_shuffle_epi8(hi2, _mm256_and_si256(_mm256_srli_epi16(in, 4), nib)));
            __m256i must23 = _mm256_or_si256(
                _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xE0 - 0x80))),
                _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xF0 - 0x80))));
            __m256i must23_80 = _mm256_and_si256(must23, _mm256_set1_epi8((char)0x80));
            err = _mm256_or_si256(err, _mm256_xor_si256(must23_80, sc));
            prev_inc = _mm256_subs_epu8(in, incomplete);
        }
        prev = in;
    }
    return _mm256_testz_si256(err, err);
}
#endif

static int use_ssse3, use_avx2;
#ifndef HAVE_SSSE3_PATH
static inline void mn_no_simd(void) { (void)use_ssse3; (void)use_avx2; }
#endif

/* Whether [p, end) is valid UTF-8. */
static int utf8_valid(cptr p, cptr end) {
#ifdef HAVE_SSSE3_PATH
    if (use_avx2) return utf8_valid_avx2(p, end);
    if (use_ssse3) return utf8_valid_ssse3(p, end);
#endif
    return utf8_valid_scalar(p, end);
}

#endif /* MCP_NOTEBOOK_UTF8_H */
