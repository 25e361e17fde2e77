/* Strict JSON, checked without building it: the scanning primitives.
 *
 * RFC 8259: no NaN, no trailing comma, no leading zero, no control byte in a string;
 * strings are passed 16 bytes at a time (SSE2). Non-ASCII bytes are noted in Cur.hi and
 * the UTF-8 of the whole input is checked once (utf8.h). */
#ifndef MCP_NOTEBOOK_JSON_H
#define MCP_NOTEBOOK_JSON_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "portable.h"
#if MN_SSE2
#include <emmintrin.h>
#endif

#define MAX_DEPTH 64

typedef const unsigned char *cptr;

/* character classes: 1 = plain string byte (not a quote, a backslash or a control byte) */
static unsigned char PLAIN[256];
/* the byte a two-byte escape stands for, by its second byte (0: not one; \u is read by
 * u_escape below) */
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
    /* NULL while the GIL is held; else where to note that the line needs it (a number
     * only Python's correctly rounded conversion reads): the line is read again with it */
    int *gil;
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
#if MN_SSE2
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
            int k = mn_ctz((unsigned)mask);
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

/* The value of four hex digits at p (either case), or -1. */
static inline long hex4(cptr p) {
    long v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char h = p[k];
        int d;
        if (h >= '0' && h <= '9') d = h - '0';
        else if (h >= 'a' && h <= 'f') d = h - 'a' + 10;
        else if (h >= 'A' && h <= 'F') d = h - 'A' + 10;
        else return -1;
        v = (v << 4) | d;
    }
    return v;
}

/* A \u escape at p (p[0] == '\\', p[1] == 'u'), p < end: the code point it stands for
 * (a surrogate pair \uD8xx\uDCxx combined, as json.loads and msgspec do) and its length
 * in *n (6 or 12). -1: not four hex digits, or a lone surrogate (a high one not followed
 * by a low one, or a low one alone): those strings are left to the Python path, which
 * keeps what json.loads gives them. */
static inline long u_escape(cptr p, cptr end, int *n) {
    if (end - p < 6) return -1;
    long u = hex4(p + 2);
    if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF)) return -1;
    if (u < 0xD800 || u > 0xDBFF) {
        *n = 6;
        return u;
    }
    if (end - p < 12 || p[6] != '\\' || p[7] != 'u') return -1;
    long l = hex4(p + 8);
    if (l < 0xDC00 || l > 0xDFFF) return -1;
    *n = 12;
    return 0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00);
}

/* A string, c->p just after its opening quote. On success c->p is after the closing
 * quote, [*s, *e) is the text between the quotes and *esc tells whether it holds an
 * escape. Returns 0, or -1 (malformed, or a lone surrogate escape). Non-ASCII bytes are
 * passed and noted in c->hi: the caller checks the UTF-8 of the whole input. */
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
        if (ch == '\\' && p + 1 < end) {
            if (ESCAPE[p[1]]) {
                *esc = 1;
                p += 2;
                continue;
            }
            int n;
            if (p[1] == 'u' && u_escape(p, end, &n) >= 0) {
                *esc = 1;
                p += n;
                continue;
            }
        }
        return -1;  /* a control byte, a lone surrogate (the Python path) or not an escape */
    }
}

/* Whether the bytes of a string's content are printable ASCII: none of 0x7F or above (a
 * JSON string holds no byte below 0x20); 16 at a time, where a byte plus one (saturated)
 * has its high bit set exactly when it is 0x7F or above. */
static inline int printable_ascii(cptr s, cptr e) {
#if MN_SSE2
    const __m128i one = _mm_set1_epi8(1);
    for (; e - s >= 16; s += 16)
        if (_mm_movemask_epi8(_mm_adds_epu8(_mm_loadu_si128((const __m128i *)s), one)))
            return 0;
#endif
    for (; s < e; s++)
        if (*s >= 0x7F) return 0;
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

/* A member's name and the colon after it, c->p at the opening quote. */
static inline int member_name(Cur *c, cptr *s, cptr *e, int *esc) {
    if (c->p >= c->end || *c->p != '"') return -1;
    c->p++;
    if (string(c, s, e, esc)) return -1;
    ws(c);
    if (c->p >= c->end || *c->p != ':') return -1;
    c->p++;
    ws(c);
    return 0;
}

/* After a member or an element: 1 past a comma (another follows), 0 past the closing
 * bracket `close`, -1 at anything else. */
static inline int after_item(Cur *c, unsigned char close) {
    ws(c);
    if (c->p >= c->end) return -1;
    if (*c->p == ',') {
        c->p++;
        ws(c);
        return 1;
    }
    if (*c->p == close) {
        c->p++;
        return 0;
    }
    return -1;
}

static int object_rest(Cur *c, int depth) {  /* c->p just after '{' */
    cptr s, e;
    int esc, more;
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return 0;
    }
    do {
        if (member_name(c, &s, &e, &esc) || value(c, depth)) return -1;
    } while ((more = after_item(c, '}')) > 0);
    return more;
}

static int array_rest(Cur *c, int depth) {  /* c->p just after '[' */
    int more;
    ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        return 0;
    }
    do {
        if (value(c, depth)) return -1;
    } while ((more = after_item(c, ']')) > 0);
    return more;
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

static int str_value(Cur *c, Span *v) {
    if (c->p >= c->end || *c->p != '"') return -1;
    c->p++;
    return string(c, &v->s, &v->e, &v->esc);
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

/* A number quick_double does not read, [a, a + n), by Python's conversion (locale-free,
 * correctly rounded): 0, or -1 for one of more than 300 bytes (left to the Python path)
 * or refused. PyOS_string_to_double allocates: `take_gil` when the caller runs without
 * the GIL, which is then taken for the call. */
static int py_decimal(cptr a, size_t n, double *out, int take_gil) {
    if (n > 300) return -1;
    char tmp[320];
    memcpy(tmp, a, n);
    tmp[n] = 0;
    PyGILState_STATE g = take_gil ? PyGILState_Ensure() : PyGILState_UNLOCKED;
    *out = PyOS_string_to_double(tmp, NULL, NULL);
    int bad = PyErr_Occurred() != NULL;
    if (bad) PyErr_Clear();
    if (take_gil) PyGILState_Release(g);
    return bad ? -1 : 0;
}

/* A number as a finite double, correctly rounded (-1: not a number, or not finite). */
static int float_value(Cur *c, double *out) {
    int integer;
    cptr a = c->p;
    if (number(c, &integer)) return -1;
    if (quick_double(a, c->p, out)) {
        size_t n = (size_t)(c->p - a);
        if (n > 300) return -1;  /* left to the Python path */
        if (c->gil) {  /* not without the GIL: the line is read again with it */
            *c->gil = 1;
            return -1;
        }
        if (py_decimal(a, n, out, 0)) return -1;
    }
    return isfinite(*out) ? 0 : -1;
}

/* Walk an object's members, c->p at its '{': for each, `member` reads the value (c->p at
 * it) and returns 0, or returns 1 to have it skipped (checked at `depth`). `*seen` is the
 * callers' record of the members met (ONCE below). -1: malformed, a name spelled with
 * escapes (the Python path reads those), or refused by `member`. */
typedef int (*MemberFn)(Cur *c, cptr name, size_t n, void *ctx, int *seen);

static int members(Cur *c, int depth, void *ctx, MemberFn member, int *seen) {
    cptr s, e;
    int esc, more;
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return 0;
    }
    do {
        if (member_name(c, &s, &e, &esc) || esc) return -1;
        int r = member(c, s, (size_t)(e - s), ctx, seen);
        if (r < 0 || (r > 0 && value(c, depth))) return -1;
    } while ((more = after_item(c, '}')) > 0);
    return more;
}

#define NAME_IS(lit) (n == sizeof(lit) - 1 && !memcmp(name, lit, sizeof(lit) - 1))
#define ONCE(bit) do { if (*seen & (bit)) return -1; *seen |= (bit); } while (0)

/* ---- unescaping (escapes checked by string(): no lone surrogate) ---- */

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

/* The bytes of an escaped string's text into out (at most e - s of them: a \u escape
 * of 6 bytes gives at most 3 of UTF-8, a pair of 12 gives 4); their length. */
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
        if (bs[1] != 'u') {
            *o++ = ESCAPE[bs[1]];  /* checked when the string was read */
            s = bs + 2;
            continue;
        }
        int n = 6;
        long u = u_escape(bs, e, &n);  /* >= 0: checked when the string was read */
        if (u < 0x80) {
            *o++ = (unsigned char)u;
        } else if (u < 0x800) {
            *o++ = (unsigned char)(0xC0 | (u >> 6));
            *o++ = (unsigned char)(0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
            *o++ = (unsigned char)(0xE0 | (u >> 12));
            *o++ = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
            *o++ = (unsigned char)(0x80 | (u & 0x3F));
        } else {
            *o++ = (unsigned char)(0xF0 | (u >> 18));
            *o++ = (unsigned char)(0x80 | ((u >> 12) & 0x3F));
            *o++ = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
            *o++ = (unsigned char)(0x80 | (u & 0x3F));
        }
        s = bs + n;
    }
    return (size_t)(o - out);
}

/* An entry point's (buf, starts, ends) arguments: the three buffers held in b (let go
 * with spans_release) and the number of spans, or -1 with an exception set (none held). */
static Py_ssize_t spans_args(PyObject *args, Py_buffer b[3]) {
    PyObject *o[3];
    int nb = 0;
    if (!PyArg_ParseTuple(args, "OOO", &o[0], &o[1], &o[2])) return -1;
    for (; nb < 3; nb++)
        if (PyObject_GetBuffer(o[nb], &b[nb], PyBUF_SIMPLE)) break;
    if (nb == 3 && b[1].len / 8 == b[2].len / 8) return b[1].len / 8;
    if (nb == 3) PyErr_SetString(PyExc_ValueError, "starts and ends differ in length");
    while (nb > 0) PyBuffer_Release(&b[--nb]);
    return -1;
}

static void spans_release(Py_buffer b[3]) {
    for (int k = 0; k < 3; k++) PyBuffer_Release(&b[k]);
}

#endif /* MCP_NOTEBOOK_JSON_H */
