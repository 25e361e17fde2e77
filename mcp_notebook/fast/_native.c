/* mcp_notebook.fast._native: the envelope of the usual JSON-RPC line, found in C.
 *
 * scan() reads the lines of a block, one after the other, and for each line of the
 * usual shape appends its row to the lists of a fast.rows.Rows: the same values
 * fast.message.scan gives after a msgspec decode. It stops at the first line it does
 * not take (anything malformed or unusual: a \u escape anywhere, a null or float id,
 * a batch, a special method, params with a member the tables read, ...) and returns
 * its index: the caller reads that line by the Python path and calls again after it.
 * So this code only ever decides lines where its answer is the Python path's, and
 * the Python path (and through it the reference reader) decides every other line.
 *
 * The JSON check is strict (RFC 8259): a line is taken only when the whole of it is
 * one valid JSON object with valid UTF-8, nothing after it but whitespace.
 *
 * codes() numbers values as fast.rows.Codes.codes(values, canon=True, paired=...).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_DEPTH 64
#define SESSION_CACHE 32  /* session names remembered per scan() call */
#define SESSION_NAME 64   /* ... of at most this many bytes */

typedef const unsigned char *cptr;

/* character classes: 1 = plain string byte (not a quote, a backslash or a control byte) */
static unsigned char PLAIN[256];
/* the byte a two-byte escape stands for, by its second byte (0: not one; \u is not one
 * here either: strings with \u escapes are left to the Python path) */
static unsigned char ESCAPE[256];

static void init_tables(void) {
    for (int c = 0; c < 256; c++) PLAIN[c] = (c >= 0x20 && c != '"' && c != '\\');
    ESCAPE['"'] = '"';
    ESCAPE['\\'] = '\\';
    ESCAPE['/'] = '/';
    ESCAPE['b'] = '\b';
    ESCAPE['f'] = '\f';
    ESCAPE['n'] = '\n';
    ESCAPE['r'] = '\r';
    ESCAPE['t'] = '\t';
}

typedef struct {
    cptr p, end;
    unsigned hi;  /* non-zero once a byte >= 0x80 was passed (UTF-8 is checked at the end) */
} Cur;

static inline void ws(Cur *c) {
    while (c->p < c->end) {
        unsigned char ch = *c->p;
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') c->p++;
        else break;
    }
}

/* The first byte at or after p that is not a plain string byte (end if none); *hi gets
 * the high bits of the bytes passed. */
static inline cptr plain_run(cptr p, cptr end, unsigned *hi) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  ctl = _mm_set1_epi8(0x1F);
    __m128i high = _mm_setzero_si128();
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                                _mm_cmpeq_epi8(v, bslash)),
                                   _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));  /* <= 0x1F */
        int mask = _mm_movemask_epi8(hit);
        if (mask) {
            int k = __builtin_ctz((unsigned)mask);
            /* the high bits of the k plain bytes before the hit */
            *hi |= (unsigned)_mm_movemask_epi8(_mm_or_si128(high, v)) & ((1u << k) - 1u);
            *hi |= (unsigned)_mm_movemask_epi8(high);
            return p + k;
        }
        high = _mm_or_si128(high, v);
        p += 16;
    }
    *hi |= (unsigned)_mm_movemask_epi8(high);
#endif
    while (p < end && PLAIN[*p]) *hi |= *p++ & 0x80;
    return p;
}

/* one UTF-8 sequence starting at p (a byte >= 0x80); its length, or 0 if invalid */
static inline int utf8_len(cptr p, cptr end) {
    unsigned char a = p[0];
    if (a >= 0xC2 && a <= 0xDF) {
        if (end - p < 2 || (p[1] & 0xC0) != 0x80) return 0;
        return 2;
    }
    if (a >= 0xE0 && a <= 0xEF) {
        if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (a == 0xE0 && p[1] < 0xA0) return 0;  /* overlong */
        if (a == 0xED && p[1] > 0x9F) return 0;  /* surrogate */
        return 3;
    }
    if (a >= 0xF0 && a <= 0xF4) {
        if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
            (p[3] & 0xC0) != 0x80) return 0;
        if (a == 0xF0 && p[1] < 0x90) return 0;  /* overlong */
        if (a == 0xF4 && p[1] > 0x8F) return 0;  /* above U+10FFFF */
        return 4;
    }
    return 0;
}

/* A string, c->p just after its opening quote. On success c->p is after the closing
 * quote, [*s, *e) is the text between the quotes and *esc tells whether it holds an
 * escape. Returns 0, or -1 (malformed, or a \u escape). Non-ASCII bytes are passed and
 * noted in c->hi: the caller checks the UTF-8 of the whole input. */
static inline int string(Cur *c, cptr *s, cptr *e, int *esc) {
    cptr p = c->p, end = c->end;
    *s = p;
    *esc = 0;
    for (;;) {
        p = plain_run(p, end, &c->hi);
        if (p >= end) return -1;
        unsigned char ch = *p;
        if (ch == '"') {
            *e = p;
            c->p = p + 1;
            return 0;
        }
        if (ch == '\\' && p + 1 < end && ESCAPE[p[1]]) {
            *esc = 1;
            p += 2;
            continue;
        }
        return -1;  /* a control byte, \u (left to the Python path) or not an escape */
    }
}

/* Whether [p, end) is valid UTF-8 (a sequence at a time). */
static int utf8_valid_scalar(cptr p, cptr end) {
    while (p < end) {
#if defined(__SSE2__)
        if (end - p >= 16) {
            int mask = _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)p));
            if (!mask) {
                p += 16;
                continue;
            }
            p += __builtin_ctz((unsigned)mask);  /* the next non-ASCII byte */
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

#if defined(__x86_64__) && defined(__GNUC__)
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

/* Whether [p, end) is valid UTF-8. */
static int utf8_valid(cptr p, cptr end) {
#ifdef HAVE_SSSE3_PATH
    if (use_avx2) return utf8_valid_avx2(p, end);
    if (use_ssse3) return utf8_valid_ssse3(p, end);
#endif
    return utf8_valid_scalar(p, end);
}

static inline int all_ascii(cptr s, cptr e) {
    for (; s < e; s++)
        if (*s >= 0x80) return 0;
    return 1;
}

/* A number; *integer tells whether it has no fraction and no exponent. */
static inline int number(Cur *c, int *integer) {
    cptr p = c->p, end = c->end;
    *integer = 1;
    if (p < end && *p == '-') p++;
    if (p >= end) return -1;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') p++;
    } else return -1;
    if (p < end && *p == '.') {
        *integer = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9') return -1;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        *integer = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return -1;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    c->p = p;
    return 0;
}

static inline int literal(Cur *c, const char *word, size_t n) {
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n)) return -1;
    c->p += n;
    return 0;
}

static int value(Cur *c, int depth);

static int object_rest(Cur *c, int depth) {  /* c->p just after '{' */
    cptr s, e;
    int esc;
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return 0;
    }
    for (;;) {
        if (c->p >= c->end || *c->p != '"') return -1;
        c->p++;
        if (string(c, &s, &e, &esc)) return -1;
        ws(c);
        if (c->p >= c->end || *c->p != ':') return -1;
        c->p++;
        ws(c);
        if (value(c, depth)) return -1;
        ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (*c->p == '}') {
            c->p++;
            return 0;
        }
        return -1;
    }
}

static int array_rest(Cur *c, int depth) {  /* c->p just after '[' */
    ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        return 0;
    }
    for (;;) {
        if (value(c, depth)) return -1;
        ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (*c->p == ']') {
            c->p++;
            return 0;
        }
        return -1;
    }
}

/* Any JSON value (checked, not built), c->p at its first byte. */
static int value(Cur *c, int depth) {
    cptr s, e;
    int esc, integer;
    if (c->p >= c->end) return -1;
    switch (*c->p) {
    case '{':
        if (depth >= MAX_DEPTH) return -1;
        c->p++;
        return object_rest(c, depth + 1);
    case '[':
        if (depth >= MAX_DEPTH) return -1;
        c->p++;
        return array_rest(c, depth + 1);
    case '"':
        c->p++;
        return string(c, &s, &e, &esc);
    case 't':
        return literal(c, "true", 4);
    case 'f':
        return literal(c, "false", 5);
    case 'n':
        return literal(c, "null", 4);
    default:
        return number(c, &integer);
    }
}

#define KEY_IS(s, e, lit) ((size_t)((e) - (s)) == sizeof(lit) - 1 && !memcmp((s), lit, sizeof(lit) - 1))

/* A span of text: [s, e), with or without escapes. */
typedef struct {
    cptr s, e;
    int esc;
} Span;

/* What the usual message holds. */
typedef struct {
    int kind;               /* 0 request, 1 notification, 2 result, 3 error */
    cptr id_s, id_e;        /* the id's JSON text (a string with its quotes) */
    int id_str;             /* the id is a string */
    cptr meth_s, meth_e;    /* the method's text */
    long long code;         /* error.code */
    cptr msg_s, msg_e;      /* error.message's text (escaped) */
    int msg_esc;
    /* params (members typed as fast.message._Params) */
    int has_params;
    Span req_id, token, pver, meta_token, meta_ver;  /* s == NULL: absent */
    int req_id_key, token_key, meta_token_key;       /* the id-like value has a key */
    int has_prog;
    double prog;
    int meta;               /* _meta is an object (not absent, not null) */
    /* result */
    int tool;               /* isError is true */
    int full;               /* the result has a member other than _meta */
    Span rver;
    /* what the row gets */
    Span ref;               /* the id a cancel or progress refers to (its key text) */
    Span ver;               /* a protocol version */
    int prog_set;           /* prog is the row's progress */
} Msg;

/* An id-like value (int or str): its span (a string with its quotes) and whether its key
 * is that text (a non-zero int; a printable ASCII string without escapes). */
static int id_like(Cur *c, Span *v, int *keyed) {
    cptr s, e;
    int esc, integer;
    if (c->p >= c->end) return -1;
    v->s = c->p;
    v->esc = 0;
    if (*c->p == '"') {
        c->p++;
        if (string(c, &s, &e, &esc)) return -1;
        *keyed = !esc && all_ascii(s, e);
        for (cptr q = s; q < e && *keyed; q++)
            if (*q == 0x7F) *keyed = 0;
    } else {
        if (number(c, &integer) || !integer) return -1;  /* msgspec: int | str only */
        cptr d = v->s + (*v->s == '-');
        *keyed = *d != '0' && c->p - v->s <= 1000;
    }
    v->e = c->p;
    return 0;
}

static int str_value(Cur *c, Span *v) {
    if (c->p >= c->end || *c->p != '"') return -1;
    c->p++;
    return string(c, &v->s, &v->e, &v->esc);
}

static int float_value(Cur *c, double *out) {
    int integer;
    cptr a = c->p;
    if (number(c, &integer)) return -1;
    size_t n = (size_t)(c->p - a);
    if (n > 300) return -1;
    char tmp[320];
    memcpy(tmp, a, n);
    tmp[n] = 0;
    *out = PyOS_string_to_double(tmp, NULL, NULL);  /* locale-free, correctly rounded */
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return isfinite(*out) ? 0 : -1;
}

/* Walk an object's members: for each, `member` reads the value (c->p at it) and returns
 * 0, or returns 1 to have it skipped. -1: malformed, a member twice, or refused. */
typedef int (*MemberFn)(Cur *c, cptr name, size_t n, Msg *m, int *seen);

static int members(Cur *c, Msg *m, MemberFn member) {
    cptr s, e;
    int esc, seen = 0;
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return 0;
    }
    for (;;) {
        if (c->p >= c->end || *c->p != '"') return -1;
        c->p++;
        if (string(c, &s, &e, &esc)) return -1;
        if (esc) return -1;  /* a member name spelled with escapes: the Python path */
        ws(c);
        if (c->p >= c->end || *c->p != ':') return -1;
        c->p++;
        ws(c);
        int r = member(c, s, (size_t)(e - s), m, &seen);
        if (r < 0) return -1;
        if (r > 0 && value(c, 2)) return -1;
        ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (*c->p == '}') {
            c->p++;
            return 0;
        }
        return -1;
    }
}

#define NAME_IS(lit) (n == sizeof(lit) - 1 && !memcmp(name, lit, sizeof(lit) - 1))
#define ONCE(bit) do { if (*seen & (bit)) return -1; *seen |= (bit); } while (0)

static int meta_member(Cur *c, cptr name, size_t n, Msg *m, int *seen) {
    if (NAME_IS("progressToken")) {
        ONCE(1);
        return id_like(c, &m->meta_token, &m->meta_token_key);
    }
    if (NAME_IS("io.modelcontextprotocol/protocolVersion")) {
        ONCE(2);
        return str_value(c, &m->meta_ver);
    }
    return 1;
}

static int params_member(Cur *c, cptr name, size_t n, Msg *m, int *seen) {
    if (NAME_IS("requestId")) {
        ONCE(1);
        return id_like(c, &m->req_id, &m->req_id_key);
    }
    if (NAME_IS("progressToken")) {
        ONCE(2);
        return id_like(c, &m->token, &m->token_key);
    }
    if (NAME_IS("progress")) {
        ONCE(4);
        m->has_prog = 1;
        return float_value(c, &m->prog);
    }
    if (NAME_IS("protocolVersion")) {
        ONCE(8);
        return str_value(c, &m->pver);
    }
    if (NAME_IS("_meta")) {
        ONCE(16);
        if (c->p < c->end && *c->p == 'n') return literal(c, "null", 4);
        m->meta = 1;
        return members(c, m, meta_member);
    }
    return 1;
}

static int result_member(Cur *c, cptr name, size_t n, Msg *m, int *seen) {
    if (!NAME_IS("_meta")) m->full = 1;
    if (NAME_IS("isError")) {
        ONCE(1);
        if (c->p < c->end && *c->p == 't') {
            m->tool = 1;
            return literal(c, "true", 4);
        }
        return literal(c, "false", 5);
    }
    if (NAME_IS("protocolVersion")) {
        ONCE(2);
        return str_value(c, &m->rver);
    }
    return 1;
}

/* error: {"code": <int64>, "message": <string>, ...}; c->p at '{'. */
static int error_object(Cur *c, Msg *m) {
    cptr s, e;
    int esc, integer, have_code = 0, have_msg = 0;
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == '}') return -1;  /* no code, no message */
    for (;;) {
        if (c->p >= c->end || *c->p != '"') return -1;
        c->p++;
        if (string(c, &s, &e, &esc)) return -1;
        if (esc) return -1;
        ws(c);
        if (c->p >= c->end || *c->p != ':') return -1;
        c->p++;
        ws(c);
        if (KEY_IS(s, e, "code")) {
            if (have_code) return -1;
            have_code = 1;
            cptr a = c->p;
            if (number(c, &integer) || !integer) return -1;
            size_t n = (size_t)(c->p - a);
            if (n > 18) return -1;  /* might not fit int64: the Python path */
            char tmp[24];
            memcpy(tmp, a, n);
            tmp[n] = 0;
            m->code = strtoll(tmp, NULL, 10);
        } else if (KEY_IS(s, e, "message")) {
            if (have_msg) return -1;
            have_msg = 1;
            if (c->p >= c->end || *c->p != '"') return -1;
            c->p++;
            if (string(c, &m->msg_s, &m->msg_e, &m->msg_esc)) return -1;
        } else if (value(c, 1)) {
            return -1;
        }
        ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (*c->p == '}') {
            c->p++;
            break;
        }
        return -1;
    }
    return have_code && have_msg ? 0 : -1;
}

enum { F_JSONRPC = 1, F_ID = 2, F_METHOD = 4, F_PARAMS = 8, F_RESULT = 16, F_ERROR = 32 };

/* The message of [p, end): 0 and *m filled when it is of the usual shape, else -1. */
static int message(cptr p, cptr end, Msg *m, int check_utf8) {
    Cur cc = {p, end}, *c = &cc;
    cptr s, e;
    int esc, integer, seen = 0;
    memset(m, 0, sizeof *m);
    ws(c);
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == '}') return -1;
    for (;;) {
        if (c->p >= c->end || *c->p != '"') return -1;
        c->p++;
        if (string(c, &s, &e, &esc)) return -1;
        if (esc) return -1;
        ws(c);
        if (c->p >= c->end || *c->p != ':') return -1;
        c->p++;
        ws(c);
        int f = 0;
        size_t n = (size_t)(e - s);
        if (n == 7 && !memcmp(s, "jsonrpc", 7)) f = F_JSONRPC;
        else if (n == 2 && !memcmp(s, "id", 2)) f = F_ID;
        else if (n == 6 && !memcmp(s, "method", 6)) f = F_METHOD;
        else if (n == 6 && !memcmp(s, "params", 6)) f = F_PARAMS;
        else if (n == 6 && !memcmp(s, "result", 6)) f = F_RESULT;
        else if (n == 5 && !memcmp(s, "error", 5)) f = F_ERROR;
        if (f & seen) return -1;  /* a member twice */
        seen |= f;
        switch (f) {
        case F_JSONRPC:
            if (c->p >= c->end || *c->p != '"') return -1;
            c->p++;
            if (string(c, &s, &e, &esc) || esc || !KEY_IS(s, e, "2.0")) return -1;
            break;
        case F_ID:
            if (c->p >= c->end) return -1;
            if (*c->p == '"') {
                m->id_s = c->p;
                c->p++;
                if (string(c, &s, &e, &esc) || esc || !all_ascii(s, e)) return -1;
                for (cptr q = s; q < e; q++)
                    if (*q == 0x7F) return -1;  /* not printable: the Python path */
                m->id_e = c->p;
                m->id_str = 1;
            } else {
                m->id_s = c->p;
                if (number(c, &integer) || !integer) return -1;
                m->id_e = c->p;
                m->id_str = 0;
                if (m->id_e - m->id_s > 1000) return -1;  /* Python's int/str digit limit */
                cptr d = m->id_s + (*m->id_s == '-');
                if (*d == '0') return -1;  /* 0 or -0 */
            }
            break;
        case F_METHOD:
            if (c->p >= c->end || *c->p != '"') return -1;
            c->p++;
            if (string(c, &m->meth_s, &m->meth_e, &esc) || esc) return -1;
            break;
        case F_PARAMS:
            m->has_params = 1;
            if (members(c, m, params_member)) return -1;
            break;
        case F_RESULT:
            if (members(c, m, result_member)) return -1;
            break;
        case F_ERROR:
            if (error_object(c, m)) return -1;
            break;
        default:
            if (value(c, 1)) return -1;
        }
        ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (*c->p == '}') {
            c->p++;
            break;
        }
        return -1;
    }
    ws(c);
    if (c->p != c->end) return -1;
    if (c->hi && check_utf8 && !utf8_valid(p, end)) return -1;
    if (!(seen & F_JSONRPC)) return -1;
    m->ref.s = m->ver.s = NULL;
    m->prog_set = 0;
    if (seen & F_METHOD) {
        cptr a = m->meth_s, z = m->meth_e;
        if (seen & (F_RESULT | F_ERROR)) return -1;
        if (z - a >= 4 && !memcmp(a, "rpc.", 4)) return -1;
        int cancelled = KEY_IS(a, z, "notifications/cancelled");
        int progress = KEY_IS(a, z, "notifications/progress");
        int initialize = KEY_IS(a, z, "initialize");
        /* fast.message._details */
        if (m->has_params && (cancelled || progress || initialize || m->meta)) {
            int keyed = 1;
            if (cancelled) {
                if (m->req_id.s) { m->ref = m->req_id; keyed = m->req_id_key; }
            } else if (progress) {
                if (m->token.s) { m->ref = m->token; keyed = m->token_key; }
                m->prog_set = m->has_prog;
            } else if ((seen & F_ID) && m->meta && m->meta_token.s) {
                m->ref = m->meta_token;
                keyed = m->meta_token_key;
            }
            if (!keyed) return -1;  /* a key the Python path makes */
            if (initialize && m->pver.s) m->ver = m->pver;
            else if (m->meta && m->meta_ver.s) m->ver = m->meta_ver;
        }
        m->kind = (seen & F_ID) ? 0 : 1;
    } else {
        m->meth_s = m->meth_e = NULL;
        if (!(seen & F_ID)) return -1;
        if (seen & F_ERROR) {
            if (seen & F_RESULT) return -1;
            m->kind = 3;
        } else if (seen & F_RESULT) {
            m->kind = 2;
            if (m->rver.s) m->ver = m->rver;
        } else {
            return -1;
        }
    }
    if (!(seen & F_ID)) m->id_s = m->id_e = NULL;
    return 0;
}

/* ---- unescaping (no \u: the string() check refused those) ---- */

typedef struct {
    unsigned char *data;
    size_t cap;
} Scratch;

static int reserve(Scratch *b, size_t n) {
    if (n <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < n) cap *= 2;
    unsigned char *d = realloc(b->data, cap);
    if (!d) return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

/* The bytes of an escaped string's text into b; their length. */
static size_t unescape(cptr s, cptr e, unsigned char *out) {
    unsigned char *o = out;
    while (s < e) {
        cptr bs = memchr(s, '\\', (size_t)(e - s));
        if (!bs) {
            memcpy(o, s, (size_t)(e - s));
            o += e - s;
            break;
        }
        memcpy(o, s, (size_t)(bs - s));
        o += bs - s;
        *o++ = ESCAPE[bs[1]];  /* checked when the string was read */
        s = bs + 2;
    }
    return (size_t)(o - out);
}

/* ---- the rows ---- */

typedef struct {
    PyObject *kind, *id, *id_key, *method, *line;  /* lists */
    PyObject *code_d, *emsg_d, *tool_d, *ver_d;    /* dicts row -> value */
    PyObject *ref_rows, *ref_vals, *ref_intern;    /* lists, lists, dict */
    PyObject *prog_rows, *prog_vals, *empty_rows;  /* lists */
    PyObject *meth_index, *meth_values;            /* Codes of the methods */
    Py_ssize_t base;
} Out;

/* The str of a span's text (escapes undone). */
static PyObject *span_str(cptr s, cptr e, int esc, Scratch *tmp) {
    size_t n = (size_t)(e - s);
    if (!esc) return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, "strict");
    if (reserve(tmp, n + 1)) return PyErr_NoMemory();
    return PyUnicode_DecodeUTF8((const char *)tmp->data, (Py_ssize_t)unescape(s, e, tmp->data),
                                "strict");
}

/* d[row] = v (v's reference is taken over); -1 on failure. */
static int set_row(PyObject *d, Py_ssize_t r, PyObject *v) {
    if (!v) return -1;
    PyObject *row = PyLong_FromSsize_t(r);
    int bad = !row || PyDict_SetItem(d, row, v);
    Py_XDECREF(row);
    Py_DECREF(v);
    return bad ? -1 : 0;
}

/* rows.append(r), vals.append(v) (v's reference is taken over); -1 on failure. */
static int add_sparse(PyObject *rows, PyObject *vals, Py_ssize_t r, PyObject *v) {
    if (!v) return -1;
    PyObject *row = PyLong_FromSsize_t(r);
    int bad = !row || PyList_Append(rows, row) || PyList_Append(vals, v);
    Py_XDECREF(row);
    Py_DECREF(v);
    return bad ? -1 : 0;
}

static PyObject *SMALL[8];  /* kind codes */

/* The row of message m on line j; -1 with an exception set on failure. */
static int add_row(Out *o, const Msg *m, long long j, Scratch *tmp) {
    PyObject *idv = NULL, *key = NULL, *mc = NULL, *lj = NULL;
    Py_ssize_t r = o->base + PyList_GET_SIZE(o->kind);
    if (m->id_s) {
        Py_ssize_t n = m->id_e - m->id_s;
        key = PyUnicode_FromStringAndSize((const char *)m->id_s, n);
        if (!key) goto fail;
        if (m->id_str) {
            idv = PyUnicode_Substring(key, 1, n - 1);
        } else {
            char small[64];
            char *digits = n < 64 ? small : malloc((size_t)n + 1);
            if (!digits) { PyErr_NoMemory(); goto fail; }
            memcpy(digits, m->id_s, (size_t)n);
            digits[n] = 0;
            idv = PyLong_FromString(digits, NULL, 10);
            if (digits != small) free(digits);
        }
        if (!idv) goto fail;
    } else {
        idv = Py_NewRef(Py_None);
        key = Py_NewRef(Py_None);
    }
    if (m->meth_s) {
        PyObject *name = PyUnicode_DecodeUTF8((const char *)m->meth_s, m->meth_e - m->meth_s,
                                              "strict");
        if (!name) goto fail;
        mc = PyDict_GetItemWithError(o->meth_index, name);
        if (mc) {
            Py_INCREF(mc);
        } else if (PyErr_Occurred()) {
            Py_DECREF(name);
            goto fail;
        } else {
            mc = PyLong_FromSsize_t(PyList_GET_SIZE(o->meth_values));
            if (!mc || PyDict_SetItem(o->meth_index, name, mc) ||
                PyList_Append(o->meth_values, name)) {
                Py_DECREF(name);
                goto fail;
            }
        }
        Py_DECREF(name);
    } else {
        mc = PyLong_FromLong(-1);
        if (!mc) goto fail;
    }
    if (m->kind == 3) {
        if (set_row(o->code_d, r, PyLong_FromLongLong(m->code)) ||
            set_row(o->emsg_d, r, span_str(m->msg_s, m->msg_e, m->msg_esc, tmp))) goto fail;
    }
    if (m->tool && set_row(o->tool_d, r, Py_NewRef(Py_True))) goto fail;
    if (m->kind == 2 && !m->full) {  /* a result with no member but _meta */
        PyObject *row = PyLong_FromSsize_t(r);
        int bad = !row || PyList_Append(o->empty_rows, row);
        Py_XDECREF(row);
        if (bad) goto fail;
    }
    if (m->ref.s) {
        PyObject *ref = PyUnicode_FromStringAndSize((const char *)m->ref.s, m->ref.e - m->ref.s);
        if (!ref) goto fail;
        PyObject *same = PyDict_SetDefault(o->ref_intern, ref, ref);  /* borrowed */
        Py_XINCREF(same);
        Py_DECREF(ref);
        if (add_sparse(o->ref_rows, o->ref_vals, r, same)) goto fail;
    }
    if (m->prog_set && add_sparse(o->prog_rows, o->prog_vals, r, PyFloat_FromDouble(m->prog)))
        goto fail;
    if (m->ver.s && set_row(o->ver_d, r, span_str(m->ver.s, m->ver.e, m->ver.esc, tmp)))
        goto fail;
    lj = PyLong_FromLongLong(j);
    if (!lj) goto fail;
    if (PyList_Append(o->kind, SMALL[m->kind]) || PyList_Append(o->id, idv) ||
        PyList_Append(o->id_key, key) || PyList_Append(o->method, mc) ||
        PyList_Append(o->line, lj)) goto fail;
    Py_DECREF(idv);
    Py_DECREF(key);
    Py_DECREF(mc);
    Py_DECREF(lj);
    return 0;
fail:
    Py_XDECREF(idv);
    Py_XDECREF(key);
    Py_XDECREF(mc);
    Py_XDECREF(lj);
    return -1;
}

/* A string, c->p just after its opening quote, checked as string() does and its text
 * written to out with the escapes undone (out has room for the rest of the input plus
 * 16 bytes); its length in *n. 0, or -1 (malformed, or a \u escape). */
static int string_copy(Cur *c, unsigned char *out, size_t *n) {
    cptr p = c->p, end = c->end;
    unsigned char *o = out;
#if defined(__SSE2__)
    /* one loop for runs and escapes alike (an escape costs one pass round it); the high
     * bits are gathered from whole chunks, a few bytes past the string too: c->hi only
     * asks for the line's UTF-8 check, so too much is harmless */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  ctl = _mm_set1_epi8(0x1F);
    __m128i high = _mm_setzero_si128();
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                                _mm_cmpeq_epi8(v, bslash)),
                                   _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
        _mm_storeu_si128((__m128i *)o, v);
        high = _mm_or_si128(high, v);
        int mask = _mm_movemask_epi8(hit);
        if (!mask) {
            p += 16;
            o += 16;
            continue;
        }
        int k = __builtin_ctz((unsigned)mask);
        p += k;
        o += k;
        if (*p == '\\' && p + 1 < end && ESCAPE[p[1]]) {
            *o++ = ESCAPE[p[1]];
            p += 2;
            continue;
        }
        break;  /* the closing quote, or something the loop below refuses */
    }
    c->hi |= (unsigned)_mm_movemask_epi8(high);
#endif
    for (;;) {
        while (p < end && PLAIN[*p]) {
            c->hi |= *p & 0x80;
            *o++ = *p++;
        }
        if (p >= end) return -1;
        unsigned char ch = *p;
        if (ch == '"') {
            c->p = p + 1;
            *n = (size_t)(o - out);
            return 0;
        }
        if (ch != '\\' || p + 1 >= end) return -1;  /* a control byte, or the end */
        unsigned char d = ESCAPE[p[1]];
        if (!d) return -1;  /* \u (the Python path) or not an escape */
        *o++ = d;
        p += 2;
    }
}

/* A decimal number without exponent whose digits, read as one integer, stay below 2**53
 * (a tap time such as 1767225600.123456): that integer and the power of ten are exact
 * doubles, so one division gives the correctly rounded value (Clinger's fast path), as
 * a full conversion would. 0 and *out set; -1 for any other number. */
static int quick_double(cptr a, cptr z, double *out) {
    static const double POW10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                   1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
    int neg = a < z && *a == '-';
    uint64_t m = 0;
    int digits = 0, frac = -1;
    for (cptr q = a + neg; q < z; q++) {
        if (*q == '.') {
            frac = 0;
            continue;
        }
        if (*q < '0' || *q > '9') return -1;  /* an exponent */
        if (++digits > 16) return -1;
        m = m * 10 + (uint64_t)(*q - '0');
        if (frac >= 0) frac++;
    }
    if (m >= (1ULL << 53)) return -1;
    double v = (double)m;
    if (frac > 0) v /= POW10[frac];
    *out = neg ? -v : v;
    return 0;
}

/* ---- tap records ---- */

typedef struct {
    cptr raw_s, raw_e;
    int dir;           /* 0 c2s, 1 s2c */
    int has_ts;
    double ts;
    cptr sess_s, sess_e;  /* NULL: none (null, absent or "") */
} Tap;

enum { T_RAW = 1, T_DIR = 2, T_TS = 4, T_SESSION = 8 };

static int tap_record(cptr p, cptr end, Tap *t, Scratch *frame) {
    Cur cc = {p, end}, *c = &cc;
    cptr s, e;
    int esc, integer, seen = 0;
    t->has_ts = 0;
    t->sess_s = t->sess_e = NULL;
    ws(c);
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == '}') return -1;
    for (;;) {
        if (c->p >= c->end || *c->p != '"') return -1;
        c->p++;
        if (string(c, &s, &e, &esc) || esc) return -1;
        ws(c);
        if (c->p >= c->end || *c->p != ':') return -1;
        c->p++;
        ws(c);
        int f;
        if (KEY_IS(s, e, "raw")) f = T_RAW;
        else if (KEY_IS(s, e, "dir")) f = T_DIR;
        else if (KEY_IS(s, e, "ts")) f = T_TS;
        else if (KEY_IS(s, e, "session")) f = T_SESSION;
        else return -1;  /* any other member: the reference reader */
        if (f & seen) return -1;
        seen |= f;
        if (c->p >= c->end) return -1;
        switch (f) {
        case T_RAW: {
            size_t n;
            if (*c->p != '"') return -1;
            c->p++;
            if (reserve(frame, (size_t)(c->end - c->p) + 16)) return -1;
            if (string_copy(c, frame->data, &n)) return -1;
            t->raw_s = frame->data;
            t->raw_e = frame->data + n;
            break;
        }
        case T_DIR:
            if (*c->p != '"') return -1;
            c->p++;
            if (string(c, &s, &e, &esc) || esc) return -1;
            if (KEY_IS(s, e, "c2s")) t->dir = 0;
            else if (KEY_IS(s, e, "s2c")) t->dir = 1;
            else return -1;  /* stderr, meta, ...: the Python path */
            break;
        case T_TS:
            if (*c->p == 'n') {
                if (literal(c, "null", 4)) return -1;
            } else {
                cptr a = c->p;
                if (number(c, &integer)) return -1;
                if (quick_double(a, c->p, &t->ts)) {
                    size_t n = (size_t)(c->p - a);
                    char small[64];
                    char *tmp = n < 64 ? small : malloc(n + 1);
                    if (!tmp) return -1;
                    memcpy(tmp, a, n);
                    tmp[n] = 0;
                    t->ts = PyOS_string_to_double(tmp, NULL, NULL);  /* locale-free, rounded */
                    if (tmp != small) free(tmp);
                    if (PyErr_Occurred()) {
                        PyErr_Clear();
                        return -1;
                    }
                }
                if (!isfinite(t->ts)) return -1;
                t->has_ts = 1;
            }
            break;
        case T_SESSION:
            if (*c->p == 'n') {
                if (literal(c, "null", 4)) return -1;
            } else {
                if (*c->p != '"') return -1;
                c->p++;
                if (string(c, &s, &e, &esc) || esc) return -1;
                if (e > s) {
                    t->sess_s = s;
                    t->sess_e = e;
                }
            }
            break;
        }
        ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (*c->p == '}') {
            c->p++;
            break;
        }
        return -1;
    }
    ws(c);
    if (c->p != c->end) return -1;
    if (c->hi && !utf8_valid(p, end)) return -1;
    return (seen & T_RAW) && (seen & T_DIR) ? 0 : -1;
}

/* ---- Python entry points ---- */

static int get_buffer(PyObject *o, Py_buffer *b) {
    return PyObject_GetBuffer(o, b, PyBUF_SIMPLE);
}

static const char SCAN_DOC[] =
    "scan(buf, starts, ends, lo, hi, line0, out, tap=None) -> int\n\n"
    "Append the rows of lines lo.. of a block (starts/ends: int64 buffers of line bounds in\n"
    "buf; blank lines are skipped) to the lists of ``out`` = (kind, id, id_key, method,\n"
    "line, error_code, error_message, is_tool_error, version (dicts), ref_rows, ref_vals,\n"
    "ref_intern, prog_rows, prog_vals, empty_rows, method index, method values, base). Stops at the first line it does not take and returns its index (hi when all\n"
    "were taken). ``tap`` = (ts float64, session int32, direction int8, stream int32,\n"
    "size int64 arrays of the block's lines, session index dict, default session, stdio\n"
    "stream code) reads tap records instead.";

static PyObject *py_scan(PyObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"buf", "starts", "ends", "lo", "hi", "line0", "out", "tap", NULL};
    PyObject *bufo, *so, *eo, *outo, *tapo = Py_None;
    Py_ssize_t lo, hi;
    long long line0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOnnLO!|O", names, &bufo, &so, &eo, &lo, &hi,
                                     &line0, &PyTuple_Type, &outo, &tapo))
        return NULL;
    Out o;
    if (!PyArg_ParseTuple(outo, "O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!n", &PyList_Type, &o.kind,
                          &PyList_Type, &o.id, &PyList_Type, &o.id_key, &PyList_Type,
                          &o.method, &PyList_Type, &o.line, &PyDict_Type, &o.code_d,
                          &PyDict_Type, &o.emsg_d, &PyDict_Type, &o.tool_d, &PyDict_Type,
                          &o.ver_d, &PyList_Type, &o.ref_rows, &PyList_Type, &o.ref_vals,
                          &PyDict_Type, &o.ref_intern, &PyList_Type, &o.prog_rows,
                          &PyList_Type, &o.prog_vals, &PyList_Type, &o.empty_rows,
                          &PyDict_Type, &o.meth_index,
                          &PyList_Type, &o.meth_values, &o.base))
        return NULL;
    PyObject *ctx[5] = {NULL, NULL, NULL, NULL, NULL};  /* ts, session, dir, stream, size */
    PyObject *sess_index = NULL, *stem = NULL;
    int stdio = -1;
    int tap = tapo != Py_None;
    if (tap && !PyArg_ParseTuple(tapo, "OOOOOO!Oi", &ctx[0], &ctx[1], &ctx[2], &ctx[3],
                                 &ctx[4], &PyDict_Type, &sess_index, &stem, &stdio))
        return NULL;
    /* the context columns of the block's lines: float64, int32, int8, int32, int64 */
    static const Py_ssize_t ITEM[5] = {8, 4, 1, 4, 8};
    Py_buffer cb[5];
    int held = 0;
    for (; tap && held < 5; held++) {
        if (PyObject_GetBuffer(ctx[held], &cb[held], PyBUF_WRITABLE)) break;
    }
    if (tap && held < 5) {
        for (int k = 0; k < held; k++) PyBuffer_Release(&cb[k]);
        return NULL;
    }
    Py_buffer b, sb, eb;
    if (get_buffer(bufo, &b)) return NULL;
    if (get_buffer(so, &sb)) { PyBuffer_Release(&b); return NULL; }
    if (get_buffer(eo, &eb)) { PyBuffer_Release(&b); PyBuffer_Release(&sb); return NULL; }
    const int64_t *st = sb.buf, *en = eb.buf;
    Py_ssize_t nlines = sb.len / 8;
    if (eb.len / 8 < nlines) nlines = eb.len / 8;
    if (hi > nlines) hi = nlines;
    for (int k = 0; tap && k < 5; k++)
        if (cb[k].len / ITEM[k] < hi) hi = cb[k].len / ITEM[k];
    cptr base = b.buf;
    Scratch frame = {NULL, 0}, tmp = {NULL, 0};
    Py_ssize_t i = lo;
    int failed = 0;
    struct {
        char name[SESSION_NAME];
        Py_ssize_t n;  /* -1: the default session (none named) */
        int32_t code;
    } cache[SESSION_CACHE];
    int ncache = 0;
    for (; i < hi; i++) {
        int64_t a = st[i], z = en[i];
        if (a >= z) continue;  /* blank */
        if (a < 0 || z > b.len) break;
        Msg m;
        if (!tap) {
            if (message(base + a, base + z, &m, 1)) break;
            if (add_row(&o, &m, line0 + i, &tmp)) { failed = 1; break; }
            continue;
        }
        Tap t;
        if (tap_record(base + a, base + z, &t, &frame)) break;  /* the frame's text: in frame */
        cptr fs = t.raw_s, fe = t.raw_e;
        if (message(fs, fe, &m, 0)) break;  /* UTF-8: checked on the tap line */
        /* the session's code (a session not seen before: the Python path registers it) */
        int32_t code = -1;
        const char *name = t.sess_s ? (const char *)t.sess_s : NULL;
        Py_ssize_t nlen = t.sess_s ? t.sess_e - t.sess_s : -1;
        for (int k = 0; k < ncache; k++) {
            if (cache[k].n == nlen && (nlen < 0 || !memcmp(cache[k].name, name, (size_t)nlen))) {
                code = cache[k].code;
                break;
            }
        }
        if (code < 0) {
            PyObject *key = name ? PyUnicode_DecodeUTF8(name, nlen, "strict") : Py_NewRef(stem);
            if (!key) { failed = 1; break; }
            PyObject *c = PyDict_GetItemWithError(sess_index, key);
            Py_DECREF(key);
            if (!c) {
                if (PyErr_Occurred()) failed = 1;
                break;
            }
            long v = PyLong_AsLong(c);
            if (v < 0 || v > INT32_MAX) {
                if (PyErr_Occurred()) failed = 1;
                break;
            }
            code = (int32_t)v;
            if (ncache < SESSION_CACHE && nlen <= SESSION_NAME) {
                cache[ncache].n = nlen;
                if (nlen > 0) memcpy(cache[ncache].name, name, (size_t)nlen);
                cache[ncache++].code = code;
            }
        }
        if (add_row(&o, &m, line0 + i, &tmp)) { failed = 1; break; }
        ((double *)cb[0].buf)[i] = t.has_ts ? t.ts : NAN;
        ((int32_t *)cb[1].buf)[i] = code;
        ((int8_t *)cb[2].buf)[i] = (int8_t)t.dir;
        ((int32_t *)cb[3].buf)[i] = stdio;
        ((int64_t *)cb[4].buf)[i] = fe - fs;
    }
    for (int k = 0; tap && k < 5; k++) PyBuffer_Release(&cb[k]);
    free(frame.data);
    free(tmp.data);
    PyBuffer_Release(&b);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    if (failed) return NULL;
    return PyLong_FromSsize_t(i);
}

static const char CODES_DOC[] =
    "codes(values, index, firsts, paired=None, twins=None) -> bytearray\n\n"
    "The int32 codes (native byte order) of ``values`` as Codes.codes(values, canon=True,\n"
    "paired=paired) gives them: None is -1; a value seen before takes its code and is\n"
    "replaced in ``values`` by the first one seen (and ``paired[k]`` by its twin).";

static PyObject *py_codes(PyObject *self, PyObject *args) {
    PyObject *values, *index, *firsts, *paired = Py_None, *twins = Py_None;
    if (!PyArg_ParseTuple(args, "O!O!O!|OO", &PyList_Type, &values, &PyDict_Type, &index,
                          &PyList_Type, &firsts, &paired, &twins))
        return NULL;
    int pair = paired != Py_None;
    if (pair && (!PyList_Check(paired) || !PyList_Check(twins) ||
                 PyList_GET_SIZE(paired) != PyList_GET_SIZE(values))) {
        PyErr_SetString(PyExc_TypeError, "paired and twins must be lists, paired as long as values");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * 4);
    if (!out) return NULL;
    int32_t *dst = (int32_t *)PyByteArray_AS_STRING(out);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *v = PyList_GET_ITEM(values, k);
        if (v == Py_None) {
            dst[k] = -1;
            continue;
        }
        PyObject *c = PyDict_GetItemWithError(index, v);
        if (c) {
            long code = PyLong_AsLong(c);
            if (code == -1 && PyErr_Occurred()) goto fail;
            dst[k] = (int32_t)code;
            PyObject *first = PyList_GET_ITEM(firsts, code);
            Py_INCREF(first);
            PyList_SetItem(values, k, first);
            if (pair) {
                PyObject *twin = PyList_GET_ITEM(twins, code);
                Py_INCREF(twin);
                PyList_SetItem(paired, k, twin);
            }
            continue;
        }
        if (PyErr_Occurred()) goto fail;
        Py_ssize_t code = PyList_GET_SIZE(firsts);
        PyObject *co = PyLong_FromSsize_t(code);
        if (!co) goto fail;
        int bad = PyDict_SetItem(index, v, co) || PyList_Append(firsts, v) ||
                  (pair && PyList_Append(twins, PyList_GET_ITEM(paired, k)));
        Py_DECREF(co);
        if (bad) goto fail;
        dst[k] = (int32_t)code;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static const char NEWLINES_DOC[] =
    "newlines(buf, n) -> bytearray\n\n"
    "The offsets of the newline bytes in buf[:n], as int64 (native byte order).";

static PyObject *py_newlines(PyObject *self, PyObject *args) {
    PyObject *bufo;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "On", &bufo, &n)) return NULL;
    Py_buffer b;
    if (get_buffer(bufo, &b)) return NULL;
    if (n > b.len) n = b.len;
    Py_ssize_t cap = n / 256 + 64, used = 0;
    PyObject *out = PyByteArray_FromStringAndSize(NULL, cap * 8);
    if (!out) {
        PyBuffer_Release(&b);
        return NULL;
    }
    const char *start = b.buf, *p = start, *end = start + n;
    for (;;) {
        const char *q = memchr(p, '\n', (size_t)(end - p));
        if (!q) break;
        if (used == cap) {
            cap *= 2;
            if (PyByteArray_Resize(out, cap * 8)) {
                Py_DECREF(out);
                PyBuffer_Release(&b);
                return NULL;
            }
        }
        ((int64_t *)PyByteArray_AS_STRING(out))[used++] = q - start;
        p = q + 1;
    }
    PyBuffer_Release(&b);
    if (PyByteArray_Resize(out, used * 8)) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static const char UTF8_DOC[] =
    "utf8_valid(data, level=-1) -> bool | None\n\n"
    "Whether data is valid UTF-8, by the scanner's check (-1: the one it uses; 0: a\n"
    "sequence at a time; 1: 16 bytes at a time; 2: 32 bytes at a time). None when this\n"
    "CPU or build has no such level. For tests.";

static PyObject *py_utf8_valid(PyObject *self, PyObject *args) {
    PyObject *o;
    int level = -1, ok;
    (void)self;
    if (!PyArg_ParseTuple(args, "O|i", &o, &level)) return NULL;
    Py_buffer b;
    if (get_buffer(o, &b)) return NULL;
    cptr p = b.buf, end = p + b.len;
    switch (level) {
    case -1: ok = utf8_valid(p, end); break;
    case 0: ok = utf8_valid_scalar(p, end); break;
#ifdef HAVE_SSSE3_PATH
    case 1: ok = use_ssse3 ? utf8_valid_ssse3(p, end) : -1; break;
    case 2: ok = use_avx2 ? utf8_valid_avx2(p, end) : -1; break;
#endif
    default: ok = -1;
    }
    PyBuffer_Release(&b);
    if (ok < 0) Py_RETURN_NONE;
    return PyBool_FromLong(ok);
}

static PyMethodDef METHODS[] = {
    {"scan", (PyCFunction)(void (*)(void))py_scan, METH_VARARGS | METH_KEYWORDS, SCAN_DOC},
    {"codes", py_codes, METH_VARARGS, CODES_DOC},
    {"newlines", py_newlines, METH_VARARGS, NEWLINES_DOC},
    {"utf8_valid", py_utf8_valid, METH_VARARGS, UTF8_DOC},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_native",
                                    "The envelope of usual JSON-RPC lines, found in C.", -1,
                                    METHODS};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
#ifdef HAVE_SSSE3_PATH
    __builtin_cpu_init();
    use_ssse3 = __builtin_cpu_supports("ssse3") && !getenv("MCP_NOTEBOOK_NO_SIMD");
    use_avx2 = use_ssse3 && __builtin_cpu_supports("avx2") && !getenv("MCP_NOTEBOOK_NO_AVX2");
#endif
    for (int k = 0; k < 8; k++) {
        SMALL[k] = PyLong_FromLong(k);
        if (!SMALL[k]) return NULL;
    }
    return PyModule_Create(&MODULE);
}
