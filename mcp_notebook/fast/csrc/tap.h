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

/* ---- tap records ---- */

typedef struct {
    cptr raw_s, raw_e;
    int dir;           /* 0 c2s, 1 s2c */
    int has_ts;
    double ts;
    cptr sess_s, sess_e;  /* NULL: none (null, absent or "") */
} Tap;

enum { T_RAW = 1, T_DIR = 2, T_TS = 4, T_SESSION = 8 };

typedef struct {
    Tap *t;
    Scratch *frame;  /* where the raw frame is unescaped */
} TapCtx;

static int tap_member(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    Tap *t = ((TapCtx *)ctx)->t;
    Scratch *frame = ((TapCtx *)ctx)->frame;
    Span v;
    if (NAME_IS("raw")) {
        size_t len;
        ONCE(T_RAW);
        if (c->p >= c->end || *c->p != '"') return -1;
        c->p++;
        if (reserve(frame, (size_t)(c->end - c->p) + 16)) return -1;
        if (string_copy(c, frame->data, &len)) return -1;
        t->raw_s = frame->data;
        t->raw_e = frame->data + len;
        return 0;
    }
    if (NAME_IS("dir")) {
        ONCE(T_DIR);
        if (str_value(c, &v) || v.esc) return -1;
        if (KEY_IS(v.s, v.e, "c2s")) t->dir = 0;
        else if (KEY_IS(v.s, v.e, "s2c")) t->dir = 1;
        else return -1;  /* stderr, meta, ...: the Python path */
        return 0;
    }
    if (NAME_IS("ts")) {
        ONCE(T_TS);
        if (c->p < c->end && *c->p == 'n') return literal(c, "null", 4);
        t->has_ts = 1;
        return float_value(c, &t->ts);
    }
    if (NAME_IS("session")) {
        ONCE(T_SESSION);
        if (c->p < c->end && *c->p == 'n') return literal(c, "null", 4);
        if (str_value(c, &v) || v.esc) return -1;
        if (v.e > v.s) {  /* "" is no session */
            t->sess_s = v.s;
            t->sess_e = v.e;
        }
        return 0;
    }
    return -1;  /* any other member: the reference reader */
}

static int tap_record(cptr p, cptr end, Tap *t, Scratch *frame) {
    Cur cc = {p, end, 0}, *c = &cc;
    TapCtx ctx = {t, frame};
    int seen = 0;
    t->has_ts = 0;
    t->sess_s = t->sess_e = NULL;
    ws(c);
    if (members(c, 1, &ctx, tap_member, &seen)) return -1;
    ws(c);
    if (c->p != c->end) return -1;
    if (c->hi && !utf8_valid(p, end)) return -1;
    return (seen & T_RAW) && (seen & T_DIR) ? 0 : -1;
}

#endif /* MCP_NOTEBOOK_TAP_H */
