/* The texts of JSON string literals (a HAR's bodies, as msgspec.Raw values), unescaped
 * into one buffer as UTF-8: what decoding each to a str and encoding it gives, with no
 * str made. */
#ifndef MCP_NOTEBOOK_HAR_H
#define MCP_NOTEBOOK_HAR_H
#include "json.h"

#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || \
    defined(_M_X64) || defined(_M_IX86) || defined(_M_ARM64)
#define HAR_LITTLE_ENDIAN 1
#else
#define HAR_LITTLE_ENDIAN 0
#endif

/* Copies the plain bytes at *pp to *dd eight at a time (none a control byte, quote,
 * backslash or above 0x7F: the bit tricks of "Bit Twiddling Hacks", S. E. Anderson), up to
 * the first byte that is not plain or the last seven; both pointers moved past the copy.
 * It may write up to eight bytes past what it copies: the caller's buffer has room, and
 * what follows is written over. */
static inline void copy_plain8(cptr *pp, cptr end, unsigned char **dd) {
    cptr p = *pp;
    unsigned char *dst = *dd;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        uint64_t special = ((w - ones * 0x20) | (q - ones) | (b - ones) | w) & high;
        /* (x - ones) & high flags a zero byte only where x has no high bit: w's own
         * high bytes are flagged by | w, which also covers q and b of them */
        if (special) {
#if HAR_LITTLE_ENDIAN
            /* the plain bytes before the first special one (the lowest flagged byte: a
             * false flag only ever follows a true one) */
            uint32_t lo = (uint32_t)special;
            int k = lo ? mn_ctz(lo) >> 3 : 4 + (mn_ctz((uint32_t)(special >> 32)) >> 3);
            memcpy(dst, p, 8);
            dst += k;
            p += k;
#endif
            break;
        }
        memcpy(dst, p, 8);
        dst += 8;
        p += 8;
    }
    *pp = p;
    *dd = dst;
}

/* Append the text of the JSON string literal [p, end) to dst; the end of what was
 * written, or NULL when [p, end) is not one JSON string of Unicode text (no quotes
 * around it, a control character, bytes that are not UTF-8, an unknown escape, an
 * escaped lone surrogate). dst has room for end - p bytes (a text is never longer
 * than its literal). */
static unsigned char *json_string_text(cptr p, cptr end, unsigned char *dst) {
    if (end - p < 2 || p[0] != '"' || end[-1] != '"') return NULL;
    p++;
    end--;
    while (p < end) {
        copy_plain8(&p, end, &dst);
        if (p >= end) break;
        unsigned char c = *p;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            *dst++ = c;
            p++;
            continue;
        }
        if (c >= 0x80) {
            int n = utf8_len(p, end);
            if (!n) return NULL;
            memcpy(dst, p, (size_t)n);
            dst += n;
            p += n;
            continue;
        }
        if (c != '\\' || end - p < 2) return NULL;  /* a control byte, a bare quote */
        unsigned char e = p[1];
        p += 2;
        switch (e) {
        case '"': *dst++ = '"'; continue;
        case '\\': *dst++ = '\\'; continue;
        case '/': *dst++ = '/'; continue;
        case 'b': *dst++ = '\b'; continue;
        case 'f': *dst++ = '\f'; continue;
        case 'n': *dst++ = '\n'; continue;
        case 'r': *dst++ = '\r'; continue;
        case 't': *dst++ = '\t'; continue;
        case 'u': break;
        default: return NULL;
        }
        if (end - p < 4) return NULL;
        long cp = hex4(p);
        if (cp < 0) return NULL;
        p += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return NULL;  /* a low surrogate alone */
        if (cp >= 0xD800 && cp <= 0xDBFF) {  /* a high one: its low one must follow */
            if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return NULL;
            long lo = hex4(p + 2);
            if (lo < 0xDC00 || lo > 0xDFFF) return NULL;
            p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp < 0x80) {
            *dst++ = (unsigned char)cp;
        } else if (cp < 0x800) {
            *dst++ = (unsigned char)(0xC0 | (cp >> 6));
            *dst++ = (unsigned char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            *dst++ = (unsigned char)(0xE0 | (cp >> 12));
            *dst++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            *dst++ = (unsigned char)(0x80 | (cp & 0x3F));
        } else {
            *dst++ = (unsigned char)(0xF0 | (cp >> 18));
            *dst++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
            *dst++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            *dst++ = (unsigned char)(0x80 | (cp & 0x3F));
        }
    }
    return dst;
}

static const char JSON_TEXTS_DOC[] =
    "json_texts(items, out) -> bytearray | int\n\n"
    "The texts of JSON string literals (a list of buffers: msgspec.Raw values, say), each\n"
    "unescaped and appended to the bytearray ``out`` as UTF-8 (the bytes of\n"
    "``msgspec.json.decode(item).encode()``); returns where each ends in ``out``, as int64\n"
    "(native byte order). For an item that is not a JSON string of Unicode text (bytes\n"
    "that are not UTF-8, an escaped lone surrogate, ...), its index instead; ``out`` is\n"
    "then left as it was.";

static PyObject *py_json_texts(PyObject *self, PyObject *args) {
    PyObject *lst, *out;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &lst, &PyByteArray_Type, &out))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lst);
    Py_ssize_t base = PyByteArray_GET_SIZE(out), room = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_buffer b;
        if (PyObject_GetBuffer(PyList_GET_ITEM(lst, k), &b, PyBUF_SIMPLE)) return NULL;
        room += b.len;
        PyBuffer_Release(&b);
    }
    PyObject *ends = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (!ends) return NULL;
    if (PyByteArray_Resize(out, base + room)) {
        Py_DECREF(ends);
        return NULL;
    }
    unsigned char *start = (unsigned char *)PyByteArray_AS_STRING(out);
    unsigned char *dst = start + base;
    int64_t *at = (int64_t *)PyByteArray_AS_STRING(ends);
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_buffer b;
        if (PyObject_GetBuffer(PyList_GET_ITEM(lst, k), &b, PyBUF_SIMPLE)) {
            Py_DECREF(ends);
            PyByteArray_Resize(out, base);
            return NULL;
        }
        cptr p = (cptr)b.buf;
        unsigned char *next = json_string_text(p, p + b.len, dst);
        PyBuffer_Release(&b);
        if (!next) {
            Py_DECREF(ends);
            if (PyByteArray_Resize(out, base)) return NULL;
            return PyLong_FromSsize_t(k);
        }
        dst = next;
        at[k] = (int64_t)(dst - start);
    }
    if (PyByteArray_Resize(out, (Py_ssize_t)(dst - start))) {
        Py_DECREF(ends);
        return NULL;
    }
    return ends;
}

/* The first '\n' or '\r' in [p, end), or NULL: one pass finds the line ends and any CR
 * (a body with one is not the usual events'). */
static inline cptr har_line_end(cptr p, cptr end) {
#if MN_SSE2
    const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
        if (m) return p + mn_ctz(m);
        p += 16;
    }
#endif
    for (; p < end; p++)
        if (*p == '\n' || *p == '\r') return p;
    return NULL;
}

/* Whether [p, end) starts with the n bytes of s. */
static inline int har_starts(cptr p, cptr end, const char *s, size_t n) {
    return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

static const char SSE_EVENTS_DOC[] =
    "sse_events(buf, starts, ends) -> (bytearray, bytearray) | int\n\n"
    "The events of SSE bodies (buf[starts[k]:ends[k]], int64 buffers) made only of usual\n"
    "events (an optional ``event:`` line, one ``data:`` line, a blank line; LF only), as\n"
    "readers._sse.simple_spans reads them: six int64 per event (its body, its place in\n"
    "the body, the start and end of its data in buf, the start of its type in buf and\n"
    "its length, -1 for none or ``message``) and the number of events of each body. For\n"
    "a body of anything else, its index.";

static PyObject *py_sse_events(PyObject *self, PyObject *args) {
    Py_buffer b[3];
    PyObject *res = NULL, *ev = NULL, *counts = NULL;
    (void)self;
    Py_ssize_t n = spans_args(args, b);
    if (n < 0) return NULL;
    const int64_t *st = (const int64_t *)b[1].buf, *en = (const int64_t *)b[2].buf;
    cptr base = (cptr)b[0].buf;
    Py_ssize_t cap = 64, used = 0;
    ev = PyByteArray_FromStringAndSize(NULL, cap * 48);
    counts = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (!ev || !counts) goto done;
    int64_t *cnt = (int64_t *)PyByteArray_AS_STRING(counts);
    for (Py_ssize_t k = 0; k < n; k++) {
        if (st[k] < 0 || en[k] < st[k] || en[k] > b[0].len) {
            PyErr_SetString(PyExc_ValueError, "a body outside the buffer");
            goto done;
        }
        cptr p = base + st[k], end = base + en[k];
        int ok = (har_starts(p, end, "data:", 5) || har_starts(p, end, "event:", 6)) &&
                 end - p >= 2 && end[-1] == '\n' && end[-2] == '\n';
        int64_t q = 0;
        cptr pos = p;
        while (ok && pos < end) {
            /* the next "\n\n" (blk), and the line ends before it: each is passed once */
            cptr blk = NULL, nl = NULL;
            int lines = 0;
            for (cptr f = pos; f + 1 < end; f++) {
                f = har_line_end(f, end);
                if (f && *f == '\r') {  /* a CR: not the usual events (LF only) */
                    blk = NULL;
                    break;
                }
                if (!f || f + 1 >= end) break;
                if (f[1] == '\n') {
                    blk = f;
                    break;
                }
                if (!lines++) nl = f;
            }
            if (!blk) {
                ok = 0;
                break;
            }
            cptr at = pos;
            int64_t t0 = -1, tl = -1;
            if (har_starts(pos, blk, "event:", 6)) {
                if (lines != 1) {  /* the event line, then one data line */
                    ok = 0;
                    break;
                }
                cptr t = pos + (har_starts(pos, blk, "event: ", 7) ? 7 : 6);
                if (t > nl) t = nl;
                if (memchr(t, ':', (size_t)(nl - t))) {
                    ok = 0;
                    break;
                }
                if (nl - t > 0 && !(nl - t == 7 && memcmp(t, "message", 7) == 0)) {
                    t0 = (int64_t)(t - base);
                    tl = (int64_t)(nl - t);
                }
                at = nl + 1;
            } else if (lines) {  /* one data line */
                ok = 0;
                break;
            }
            if (!har_starts(at, blk, "data:", 5)) {
                ok = 0;
                break;
            }
            cptr x = at + (har_starts(at, blk, "data: ", 6) ? 6 : 5);
            if (used == cap) {
                cap *= 2;
                if (PyByteArray_Resize(ev, cap * 48)) goto done;
            }
            int64_t *row = (int64_t *)PyByteArray_AS_STRING(ev) + used * 6;
            row[0] = (int64_t)k;
            row[1] = q++;
            row[2] = (int64_t)(x - base);
            row[3] = (int64_t)(blk - base);
            row[4] = t0;
            row[5] = tl;
            used++;
            pos = blk + 2;
        }
        if (!ok) {
            res = PyLong_FromSsize_t(k);
            goto done;
        }
        cnt[k] = q;
    }
    if (PyByteArray_Resize(ev, used * 48)) goto done;
    res = PyTuple_Pack(2, ev, counts);
done:
    Py_XDECREF(ev);
    Py_XDECREF(counts);
    spans_release(b);
    return res;
}

#endif
