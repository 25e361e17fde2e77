/* Tap records: the record's members, and its raw frame unescaped in the same pass. */
#ifndef MCP_NOTEBOOK_TAP_H
#define MCP_NOTEBOOK_TAP_H
#include "envelope.h"

/* The rest of a string for string_copy() and its SSSE3 form, a byte at a time: p is where
 * the input goes on and o where its text goes on in out. */
static int string_rest(Cur *c, cptr p, unsigned char *out, unsigned char *o, size_t *n) {
    cptr end = c->end;
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

#ifdef HAVE_SSSE3_PATH
/* PACK[h][m]: the pshufb indices that move the bytes of an 8-byte half (h: 0 low, 1 high)
 * whose bit in m is set to the front of that half, in order (0x80: a zero byte). */
static unsigned char PACK[2][256][8];
static unsigned char POP8[256];  /* bits set in a byte (no popcnt instruction assumed) */

static void init_pack(void) {
    for (int m = 0; m < 256; m++) POP8[m] = (unsigned char)((m & 1) + POP8[m >> 1]);
    for (int h = 0; h < 2; h++)
        for (int m = 0; m < 256; m++) {
            int k = 0;
            for (int i = 0; i < 8; i++)
                if (m >> i & 1) PACK[h][m][k++] = (unsigned char)(i + 8 * h);
            for (; k < 8; k++) PACK[h][m][k] = 0x80;
        }
}

/* string_copy() with SSSE3: a chunk of 16 bytes whose escapes are all \" \\ or \/ (the
 * only ones a JSON text escaped into a string has) is unescaped whole, its escape
 * backslashes dropped by one shuffle per half; any other chunk takes one escape at a time
 * as string_copy() does. A chunk starts outside any escape: an escape across its end is
 * left to the next chunk. */
__attribute__((target("ssse3"))) static int string_copy_ssse3(Cur *c, unsigned char *out,
                                                              size_t *n) {
    cptr p = c->p, end = c->end;
    unsigned char *o = out;
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  slash = _mm_set1_epi8('/'), ctl = _mm_set1_epi8(0x1F);
    __m128i high = _mm_setzero_si128();
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        high = _mm_or_si128(high, v);
        unsigned bs = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, bslash));
        unsigned qt = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote));
        unsigned cl = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
        _mm_storeu_si128((__m128i *)o, v);
        if (!(bs | qt | cl)) {
            p += 16;
            o += 16;
            continue;
        }
        /* escape backslashes: those at an even place in their run of backslashes (the
         * chunk starts outside an escape), found without a loop as simdjson's
         * json_escape_scanner does */
        unsigned esc = ((((bs << 1) | 0xAAAAAAAAu) - bs) ^ 0xAAAAAAAAu) & bs;
        unsigned escaped = (esc << 1) & 0xFFFFu;
        unsigned stop = (qt & ~escaped) | cl;  /* the closing quote, or a control byte */
        unsigned lim = stop ? (unsigned)mn_ctz(stop) : 16;
        if (esc >> 15 && lim > 15) lim = 15;  /* an escape across the end: the next chunk */
        unsigned in = lim >= 16 ? 0xFFFFu : (1u << lim) - 1;
        unsigned plain = qt | bs | (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, slash));
        if (escaped & in & ~plain) {  /* \n, \u, ...: one at a time, as string_copy */
            int k = mn_ctz(bs | qt | cl);
            p += k;
            o += k;
            if (*p == '\\' && p + 1 < end && ESCAPE[p[1]]) {
                *o++ = ESCAPE[p[1]];
                p += 2;
                continue;
            }
            break;
        }
        unsigned keep = in & ~esc;
        __m128i shuf = _mm_set_epi64x(*(const int64_t *)PACK[1][keep >> 8],
                                      *(const int64_t *)PACK[0][keep & 0xFF]);
        __m128i r = _mm_shuffle_epi8(v, shuf);
        int k0 = POP8[keep & 0xFF], k1 = POP8[keep >> 8];
        _mm_storel_epi64((__m128i *)o, r);
        _mm_storel_epi64((__m128i *)(o + k0), _mm_srli_si128(r, 8));
        o += k0 + k1;
        p += lim;
        if (lim < 16 && stop && (unsigned)mn_ctz(stop) == lim) break;
    }
    c->hi |= (unsigned)_mm_movemask_epi8(high);
    return string_rest(c, p, out, o, n);
}
#endif

/* A string, c->p just after its opening quote, checked as string() does and its text
 * written to out with the escapes undone (out has room for the rest of the input plus
 * 16 bytes); its length in *n. 0, or -1 (malformed, or a \u escape). */
static int string_copy(Cur *c, unsigned char *out, size_t *n) {
#ifdef HAVE_SSSE3_PATH
    if (use_ssse3) return string_copy_ssse3(c, out, n);
#endif
    cptr p = c->p, end = c->end;
    unsigned char *o = out;
    (void)end; /* read by the SSE2 loop only */
#if MN_SSE2
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
        int k = mn_ctz((unsigned)mask);
        p += k;
        o += k;
        if (*p == '\\' && p + 1 < end && ESCAPE[p[1]]) {
            *o++ = ESCAPE[p[1]];
            p += 2;
            continue;
        }
        break;  /* the closing quote, or something string_rest() refuses */
    }
    c->hi |= (unsigned)_mm_movemask_epi8(high);
#endif
    return string_rest(c, p, out, o, n);
}

/* ---- tap records ---- */

typedef struct {
    cptr raw_s, raw_e;
    int dir;           /* 0 c2s, 1 s2c, 2 stderr */
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
        else if (KEY_IS(v.s, v.e, "stderr")) t->dir = 2;  /* raw: a line the peer logged */
        else return -1;  /* meta, ...: the Python path */
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
    Cur cc = {p, end, 0, NULL}, *c = &cc;
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
