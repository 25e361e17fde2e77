/* The state of the one-pass HAR reader (harscan.h) and the values it reads: a body's
 * text unescaped into the pass's buffer, a string member as a str (the object of one of
 * the last few entries again when its bytes are the same), a number as a double, a
 * null, a header list kept as its bytes. Each refuses (-1, or NULL with no error set)
 * what msgspec's typed decoding might read otherwise; harscan.h says which documents the
 * pass takes. */
#ifndef MCP_NOTEBOOK_HARVALUES_H
#define MCP_NOTEBOOK_HARVALUES_H
#include "docscan.h"
#include "har.h"
#include "threads.h"
#include "utf8.h"

/* What an entry's members are, as the pass finds them: places in the input (offsets from
 * its start; -1: absent or null), the Python objects made after the pass (hs_objects),
 * with the GIL, so that the pass itself runs without it, on one thread or two. */
enum { HS_METHOD, HS_URL, HS_STARTED, HS_MIME, HS_NSTR };

typedef struct {
    int64_t s[HS_NSTR], e[HS_NSTR];  /* the strings' text between the quotes */
    int64_t rq_s, rq_e, rs_s, rs_e;  /* the header lists' values */
    int64_t status;
    uint8_t esc[HS_NSTR];
    uint8_t has_status, content;  /* content: the entry has a response content (mime "" if not) */
} HarRef;

/* The whole pass, or one of its two halves (harscan.h). */
typedef struct {
    Cur c;
    cptr base;  /* the input's start */
    unsigned char *t0, *t;  /* the texts' buffer and where the next one goes */
    Grow pos, tim, flags, refs, stamps;
    /* the two halves: where the second one starts (NULL: none runs), whether the first
     * stopped on it, and the flag that stops the second */
    cptr cand;
    int met;
    int *stop;  /* the second half's: set when it is to stop */
    void *sec;  /* the first half's: its second (HsSecond), NULL on one thread */
    /* the first half's, while the second runs: a text this long (0: none) has the rest
     * of it read by a helper thread from a place near the middle of what is left
     * (hs_text_split); texts so read */
    size_t long_min;
    int splits;
} HarPass;

#if MN_SSE2
/* copy_plain8 sixteen bytes at a time with SSE2 (every x86-64 CPU has it): the same
 * bytes copied, the same place reached (the first byte that is not plain, or the last
 * fifteen); it may write up to sixteen bytes past what it copies. A body of JSON in a
 * JSON string has an escape every few bytes: one compare per byte class and one
 * movemask find the next, where the eight-byte form needs a borrow trick per word. */
static inline void copy_plain16(cptr *pp, cptr end, unsigned char **dd) {
    cptr p = *pp;
    unsigned char *dst = *dd;
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'),
                  ctl = _mm_set1_epi8(0x1F);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        _mm_storeu_si128((__m128i *)dst, v);
        /* a control byte: max(v, 0x1F) == 0x1F (unsigned); a byte above 0x7F: its sign */
        __m128i odd = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                                _mm_cmpeq_epi8(v, slash)),
                                   _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
        unsigned m = (unsigned)(_mm_movemask_epi8(odd) | _mm_movemask_epi8(v));
        if (m) {
            int k = mn_ctz(m);
            p += k;
            dst += k;
            break;
        }
        p += 16;
        dst += 16;
    }
    *pp = p;
    *dd = dst;
}
#define HS_COPY_PLAIN copy_plain16
#else
#define HS_COPY_PLAIN copy_plain8
#endif

/* The text from *pp (after its opening quote, or at a place that starts a character or
 * an escape) unescaped into *dd, up to its closing quote (0; *pp past it), or up to
 * `soft` (1: *pp at or just past it, after a whole character or escape); -1: not Unicode
 * text, or no closing quote before `end`. The plain copy reads and writes no further
 * than `soft` allows (its 16-byte overrun stays below the place `soft` maps to); the
 * escapes and characters are checked against `end`. */
static int hs_text_run(cptr *pp, cptr soft, cptr end, unsigned char **dd) {
    cptr p = *pp;
    unsigned char *dst = *dd;
    for (;;) {
        HS_COPY_PLAIN(&p, soft, &dst);  /* its overrun is within the buffer: see py_har_scan */
        if (p >= soft) {
            if (soft >= end) return -1;
            *pp = p;
            *dd = dst;
            return 1;
        }
        unsigned char c = *p;
        if (c == '\\' && end - p >= 2 && ESCAPE[p[1]]) {  /* the usual escape first */
            *dst++ = ESCAPE[p[1]];
            p += 2;
            continue;
        }
        if (c == '"') {
            *pp = p + 1;
            *dd = dst;
            return 0;
        }
        if (c >= 0x20 && c != '\\' && c < 0x80) {
            *dst++ = c;
            p++;
            continue;
        }
        if (c >= 0x80) {
            int n = utf8_len(p, end);
            if (!n) return -1;
            memcpy(dst, p, (size_t)n);
            dst += n;
            p += n;
            continue;
        }
        if (c != '\\' || end - p < 2) return -1;
        if (ESCAPE[p[1]]) {
            *dst++ = ESCAPE[p[1]];
            p += 2;
            continue;
        }
        int n;
        long cp = p[1] == 'u' ? u_escape(p, end, &n) : -1;
        if (cp < 0) return -1;
        p += n;
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
}

/* The least text hs_text_split is for (-1 for har_scan's long_min): below it, a thread
 * costs more than half the text's copy saves. */
#define HS_LONG_MIN ((size_t)8 << 20)

#if MN_THREADS
/* A helper's part of a long text: from p to the closing quote, read up to `end` (the
 * second half's start: a helper never writes where the second half does), a piece at
 * a time, stopping when told. */
typedef struct {
    cptr p, end;
    unsigned char *dst;
    int r, stop;
    mn_thread th;
} HsHelper;

static void *hs_helper_run(void *arg) {
    HsHelper *t = arg;
    for (;;) {
        cptr soft = t->end - t->p > (ptrdiff_t)(4 << 20) ? t->p + (4 << 20) : t->end;
        t->r = hs_text_run(&t->p, soft, t->end, &t->dst);
        if (t->r != 1 || mn_flag_get(&t->stop)) return NULL;
    }
}

/* A place in [from, stop) where a reading of a text may start: a backslash that starts
 * an escape (the byte before is no backslash, so it is not escaped itself, and it is no
 * \u escape, which may be the second half of a pair), or a byte that starts a character
 * with no backslash in the 12 bytes before it (so no escape spans it); NULL if none.
 * Whether it is in the text at all, the reading up to it tells (hs_text_split). */
static cptr hs_text_cut(cptr from, cptr stop) {
    cptr last = NULL;  /* the last backslash seen (the text's opening quote is more
                        * than 12 bytes before `from`: hs_text_split) */
    for (cptr q = from - 12; q < from; q++)
        if (*q == '\\') last = q;
    for (cptr q = from; q < stop; q++) {
        if (*q == '\\') {
            if (q[-1] != '\\' && q[1] != 'u') return q;
            last = q;
        } else if ((*q & 0xC0) != 0x80 && (!last || q - last > 12)) {
            return q;
        }
    }
    return NULL;
}

/* The rest of a long text (*pp in it, after a whole character or escape) read on two
 * threads: a helper from a place near the middle between *pp and the second half's
 * start (the text ends before it, if the second half's start is right), writing at the
 * place that maps to in the buffer (a text is never longer than its literal: no write
 * of this thread reaches it), this thread up to that place; the helper's part then
 * moved down to follow this thread's. Where this thread does not land on the place (the
 * text ended before it, or the text is bad), the helper is stopped and its work let go;
 * where the helper's part is not the text's end (bad, or no end before the second half's
 * start), this thread reads it again. The same answer as hs_text_run's either way. */
static int hs_text_split(HarPass *h, cptr *pp, unsigned char **dd) {
    cptr p = *pp, end = h->c.end, limit = h->cand;
    cptr from = p + (limit - p) / 2, stop = from + ((size_t)1 << 20);
    if (stop > limit - 32) stop = limit - 32;
    cptr at = from < stop ? hs_text_cut(from, stop) : NULL;
    HsHelper t;
    if (!at) return hs_text_run(pp, end, end, dd);
    t.p = at;
    t.end = limit;
    t.dst = *dd + (at - p);
    t.r = -1;
    t.stop = 0;
    unsigned char *dst0 = t.dst;
    if (mn_thread_start(&t.th, hs_helper_run, &t)) return hs_text_run(pp, end, end, dd);
    int r = hs_text_run(pp, at, end, dd);
    if (r != 1 || *pp != at) {  /* the text ended (or failed) before the place, or passed it */
        mn_flag_set(&t.stop);
        mn_thread_join(t.th);
        return r == 1 ? hs_text_run(pp, end, end, dd) : r;
    }
    mn_thread_join(t.th);
    if (t.r != 0) return hs_text_run(pp, end, end, dd);  /* this thread reads it again */
    size_t n = (size_t)(t.dst - dst0);
    memmove(*dd, dst0, n);
    *dd += n;
    *pp = t.p;
    h->splits++;
    return 0;
}
#endif

/* A body's text, c.p at its opening quote: unescaped into h->t as json_string_text does
 * (the same rules), passed in the same loop; a long one read on two threads where the
 * second half runs (hs_text_split). -1: not Unicode text. */
static int hs_text(HarPass *h) {
    cptr p = h->c.p + 1, end = h->c.end;
    unsigned char *dst = h->t;
    int r;
#if MN_THREADS
    if (h->long_min && h->cand && h->cand - p > (ptrdiff_t)(4 * h->long_min)) {
        r = hs_text_run(&p, p + h->long_min, end, &dst);
        if (r == 1) r = hs_text_split(h, &p, &dst);
    } else
#endif
        r = hs_text_run(&p, end, end, &dst);
    if (r) return -1;
    h->c.p = p;
    h->t = dst;
    return 0;
}

/* A string member, c.p at its value: its place noted in `ref` (slot k). -1 for anything
 * but a string (its UTF-8 is checked with the document's, its escapes by string()). */
static int hs_span(HarPass *h, HarRef *ref, int k) {
    Span v;
    if (str_value(&h->c, &v)) return -1;
    if (ref) {
        ref->s[k] = (int64_t)(v.s - h->base);
        ref->e[k] = (int64_t)(v.e - h->base);
        ref->esc[k] = (uint8_t)v.esc;
    }
    return 0;
}

/* A number as json.h's float_value reads it, the pass running without the GIL: the few
 * only Python's conversion reads are read with the GIL taken for the call. */
static int hs_float(Cur *c, double *out) {
    int integer;
    cptr a = c->p;
    if (number(c, &integer)) return -1;
    if (quick_double(a, c->p, out) && py_decimal(a, (size_t)(c->p - a), out, 1)) return -1;
    return isfinite(*out) ? 0 : -1;
}

/* A number as a double (NaN for null): -1 for anything else, an integer of more than
 * 15 digits, or a number float_value refuses. An integer is the double of its value
 * (-0 is 0.0, as msgspec converts the integer it reads). */
static int hs_num(Cur *c, double *out) {
    if (c->p < c->end && *c->p == 'n') {
        *out = NAN;
        return literal(c, "null", 4);
    }
    cptr a = c->p;
    if (hs_float(c, out)) return -1;
    int integer = 1;
    for (cptr q = a; q < c->p; q++)
        if (*q == '.' || *q == 'e' || *q == 'E') integer = 0;
    if (integer) {
        if (c->p - a - (*a == '-') > 15) return -1;
        if (*out == 0) *out = 0.0;
    }
    return 0;
}

/* A value that must be null (a member the structs type as None). */
static int hs_null(Cur *c) {
    return literal(c, "null", 4);
}

/* A header list: any value, kept as its place (offsets from base). */
static int hs_raw(Cur *c, cptr base, int64_t *s, int64_t *e) {
    *s = (int64_t)(c->p - base);
    if (value(c, 6)) return -1;
    *e = (int64_t)(c->p - base);
    return 0;
}

/* ---- the objects, made after the pass ---- */

/* an object made after the pass and the bytes it was made of (a HsRecent's slot) */
typedef struct {
    PyObject *o;
    cptr s;
    size_t n;
} HsSlot;

/* A str of a string's text [s, e) (esc: unescaped first); NULL, with no error set, for
 * one that is not Unicode text (or no memory to unescape it). */
static PyObject *hs_str_of(cptr s, cptr e, int esc, Scratch *sc) {
    size_t n = (size_t)(e - s);
    PyObject *o;
    if (!esc) {
        o = PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, NULL);
    } else {
        if (reserve(sc, n + 1)) return NULL;
        size_t k = unescape(s, e, sc->data);
        o = PyUnicode_DecodeUTF8((const char *)sc->data, (Py_ssize_t)k, NULL);
    }
    if (!o) PyErr_Clear();
    return o;
}

/* The objects of the last few distinct values of a member (a HAR's entries take turns:
 * a POST's header lists, then a GET's, then the next POST's), each given again where the
 * same bytes come back: a method, a URL, a mimeType or a header list is then one object,
 * not one per entry. Lengths are compared first, so bytes seen once cost little. */
#define HS_RECENT 4
typedef struct {
    HsSlot slot[HS_RECENT];
    int next;
} HsRecent;

static PyObject *hs_recent_get(HsRecent *r, cptr s, size_t n) {
    for (int k = 0; k < HS_RECENT; k++) {
        HsSlot *l = &r->slot[k];
        if (l->o && l->n == n && !memcmp(l->s, s, n)) {
            Py_INCREF(l->o);
            return l->o;
        }
    }
    return NULL;
}

static void hs_recent_put(HsRecent *r, cptr s, size_t n, PyObject *o) {
    HsSlot *l = &r->slot[r->next];
    r->next = (r->next + 1) % HS_RECENT;
    Py_INCREF(o);
    Py_XSETREF(l->o, o);
    l->s = s;
    l->n = n;
}

static void hs_recent_free(HsRecent *r) {
    for (int k = 0; k < HS_RECENT; k++) Py_CLEAR(r->slot[k].o);
}

/* hs_str_of through a HsRecent (a string without escapes; one with: its own object). */
static PyObject *hs_str_recent(cptr s, cptr e, int esc, HsRecent *r, Scratch *sc) {
    size_t n = (size_t)(e - s);
    if (!esc) {
        PyObject *o = hs_recent_get(r, s, n);
        if (o) return o;
    }
    PyObject *o = hs_str_of(s, e, esc, sc);
    if (o && !esc) hs_recent_put(r, s, n, o);
    return o;
}

/* A header list's bytes (b"null" when absent: s < 0), through a HsRecent. */
static PyObject *hs_hkey_recent(cptr base, int64_t s, int64_t e, HsRecent *r) {
    cptr a = s < 0 ? (cptr) "null" : base + s;
    size_t n = s < 0 ? 4 : (size_t)(e - s);
    PyObject *o = hs_recent_get(r, a, n);
    if (o) return o;
    if (!(o = PyBytes_FromStringAndSize((const char *)a, (Py_ssize_t)n))) return NULL;
    hs_recent_put(r, a, n, o);
    return o;
}

/* The six lists of har_scan's answer (methods, urls, started, status, mimes, hkeys) of
 * the entries' places: 0; -1 for a string that is not Unicode text (*bad: its offset);
 * -2 with an exception set. A start stamp the pass read (stamps: not NaN; the usual
 * form, ASCII, no escape) is None in started: only Python's readings need the text. */
static int hs_objects(cptr base, const HarRef *refs, const double *stamps, Py_ssize_t n,
                      PyObject **lists, int64_t *bad) {
    enum { L_METHOD, L_URL, L_STARTED, L_STATUS, L_MIME, L_HKEY };
    static const int STR_OF[] = {HS_METHOD, HS_URL, HS_STARTED};
    HsRecent methods = {0}, urls = {0}, mimes = {0}, rq = {0}, rs = {0};
    /* the pairs of header lists: the last few tuples, known by their two objects */
    PyObject *pair[HS_RECENT] = {NULL};
    int pair_next = 0;
    PyObject *last_status = NULL, *empty = NULL;
    long long last_status_v = 0;
    Scratch sc = {0};
    int r = -2;
    for (int k = 0; k < 6; k++) lists[k] = NULL;
    for (int k = 0; k < 6; k++)
        if (!(lists[k] = PyList_New(n))) goto done;
    if (!(empty = PyUnicode_FromStringAndSize("", 0))) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        const HarRef *f = &refs[i];
        for (int k = 0; k < 3; k++) {
            int m = STR_OF[k];
            if (m == HS_STARTED && !isnan(stamps[i])) {
                Py_INCREF(Py_None);
                PyList_SET_ITEM(lists[k], i, Py_None);
                continue;
            }
            /* the start stamp: one object each, as its own */
            PyObject *o = m == HS_STARTED
                ? hs_str_of(base + f->s[m], base + f->e[m], f->esc[m], &sc)
                : hs_str_recent(base + f->s[m], base + f->e[m], f->esc[m],
                                m == HS_METHOD ? &methods : &urls, &sc);
            if (!o) {
                if (PyErr_Occurred()) goto done;
                *bad = f->s[m];
                r = -1;
                goto done;
            }
            PyList_SET_ITEM(lists[k], i, o);
        }
        PyObject *st;
        if (!f->has_status) {
            st = Py_None;
            Py_INCREF(st);
        } else if (last_status && f->status == last_status_v) {
            st = last_status;
            Py_INCREF(st);
        } else {
            if (!(st = PyLong_FromLongLong(f->status))) goto done;
            Py_INCREF(st);
            Py_XSETREF(last_status, st);
            last_status_v = f->status;
        }
        PyList_SET_ITEM(lists[L_STATUS], i, st);
        /* no content: ""; a content of no mimeType: None */
        PyObject *mime;
        if (!f->content) {
            mime = empty;
            Py_INCREF(mime);
        } else if (f->s[HS_MIME] < 0) {
            mime = Py_None;
            Py_INCREF(mime);
        } else {
            mime = hs_str_recent(base + f->s[HS_MIME], base + f->e[HS_MIME],
                                 f->esc[HS_MIME], &mimes, &sc);
            if (!mime) {
                if (PyErr_Occurred()) goto done;
                *bad = f->s[HS_MIME];
                r = -1;
                goto done;
            }
        }
        PyList_SET_ITEM(lists[L_MIME], i, mime);
        PyObject *a = hs_hkey_recent(base, f->rq_s, f->rq_e, &rq);
        PyObject *b = a ? hs_hkey_recent(base, f->rs_s, f->rs_e, &rs) : NULL;
        PyObject *t = NULL;
        for (int k = 0; b && k < HS_RECENT; k++)
            if (pair[k] && PyTuple_GET_ITEM(pair[k], 0) == a &&
                PyTuple_GET_ITEM(pair[k], 1) == b) {
                t = pair[k];
                Py_INCREF(t);
                break;
            }
        if (b && !t && (t = PyTuple_Pack(2, a, b))) {
            Py_INCREF(t);
            Py_XSETREF(pair[pair_next], t);
            pair_next = (pair_next + 1) % HS_RECENT;
        }
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (!t) goto done;
        PyList_SET_ITEM(lists[L_HKEY], i, t);
    }
    r = 0;
done:
    /* a list left with empty places is let go whole (a NULL item is allowed there) */
    if (r)
        for (int k = 0; k < 6; k++) Py_CLEAR(lists[k]);
    hs_recent_free(&methods);
    hs_recent_free(&urls);
    hs_recent_free(&mimes);
    hs_recent_free(&rq);
    hs_recent_free(&rs);
    for (int k = 0; k < HS_RECENT; k++) Py_XDECREF(pair[k]);
    Py_XDECREF(last_status);
    Py_XDECREF(empty);
    free(sc.data);
    return r;
}

#endif
