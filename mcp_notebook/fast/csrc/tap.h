/* Tap records: the record's members, and its raw frame unescaped in the same pass. */
#ifndef MCP_NOTEBOOK_TAP_H
#define MCP_NOTEBOOK_TAP_H
#include "envelope.h"

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
    Cur cc = {p, end, 0}, *c = &cc;
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

#endif /* MCP_NOTEBOOK_TAP_H */
