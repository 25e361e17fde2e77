/* The usual Inspector export and mcp-recorder cassette, compacted and read in one pass:
 * the document checked as JSON (json.h's rules) and written without its blanks, the bytes
 * msgspec.json.format(indent=-1) gives (strings and numbers as written); where each
 * message is in it, and the few members the readers' column paths read, as arrays.
 *
 * This pass takes a document only where its answer is the one of the readers' general
 * path: msgspec's compaction, then its typed decoding (the members other than the
 * messages decoded as any JSON value), then their column paths. It returns None for
 * anything else and the reader goes on with that path. Taken: members named without
 * escapes, each known one at most once; the values the typed decoding decodes (an
 * Inspector entry's timestamp, direction, origin and duration; a cassette
 * interaction's type, status, latency, sse flag, method and path) as JSON literals,
 * numbers that are exact doubles by one division (quick_double, json.h), or strings of
 * ASCII without escapes. The messages and every other member are checked as JSON and
 * copied, their UTF-8 not checked (msgspec checks it neither in its compaction nor for a
 * raw or unknown member). */
#ifndef MCP_NOTEBOOK_DOCSCAN_H
#define MCP_NOTEBOOK_DOCSCAN_H
#include "json.h"
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* ---- growable arrays ---- */

typedef struct {
    char *data;
    size_t len, cap;  /* bytes */
} Grow;

static int grow_put(Grow *g, const void *v, size_t n) {
    if (g->len + n > g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 1 << 16;
        while (cap < g->len + n) cap *= 2;
        char *d = realloc(g->data, cap);
        if (!d) return -1;
        g->data = d;
        g->cap = cap;
    }
    memcpy(g->data + g->len, v, n);
    g->len += n;
    return 0;
}

#define PUT(g, type, v) do { type tmp_ = (v); if (grow_put(&(g), &tmp_, sizeof tmp_)) goto fail; } \
    while (0)

static PyObject *grow_bytes(Grow *g) {
    PyObject *o = PyByteArray_FromStringAndSize(g->data ? g->data : "", (Py_ssize_t)g->len);
    free(g->data);
    g->data = NULL;
    return o;
}

/* ---- compacting: a value checked and written without its blanks ---- */

/* The pass: the input (c), and where the compacted document is written (o; o0 its
 * start). `release`: the input is a read-only map of a file, whose pages passed are let
 * go from time to time (they would count in the process's memory till the end). */
typedef struct {
    Cur c;
    unsigned char *o, *o0;
    unsigned char *filled, *oend;  /* the output's pages made ahead up to filled; its end */
    cptr in0, kept;  /* the input's start; the start of the pages still held */
    int release;
} Pass;

#define DS_RELEASE (64u << 20)  /* the input given back 64 MB at a time */
#define DS_AHEAD (16u << 20)  /* the output's fresh pages made 16 MB at a time */

/* The output's next pages made in one call (MADV_POPULATE_WRITE) before the pass writes
 * them, instead of one page fault per 4 KB page: a 1 GB document's compacted copy is a
 * quarter of a million fresh pages. Where the call is not known or refused, the pages
 * come by faults as before (the same bytes either way). */
static void ds_ahead(Pass *ps) {
#if defined(MADV_POPULATE_WRITE)
    if (ps->o + DS_AHEAD / 2 < ps->filled || ps->filled >= ps->oend) return;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) {
        ps->filled = ps->oend;
        return;
    }
    uintptr_t a = ((uintptr_t)ps->filled + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t b = a + DS_AHEAD, end = (uintptr_t)ps->oend & ~((uintptr_t)page - 1);
    if (b > end) b = end;
    if (b > a && madvise((void *)a, b - a, MADV_POPULATE_WRITE) != 0) b = (uintptr_t)ps->oend;
    ps->filled = b > a ? (unsigned char *)b : ps->oend;
#else
    (void)ps;
#endif
}

static void ds_release(Pass *ps) {
    ds_ahead(ps);
    if (!ps->release || ps->c.p - ps->kept < (ptrdiff_t)DS_RELEASE) return;
#ifdef MADV_DONTNEED
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)ps->kept, b = (uintptr_t)ps->c.p;
    if (page <= 0) return;
    a = (a + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    b &= ~((uintptr_t)page - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
    ps->kept = (cptr)b;
#endif
}

static inline void ds_put(Pass *ps, cptr s, size_t n) {
    memcpy(ps->o, s, n);
    ps->o += n;
}

static int ds_copy(Pass *ps, int depth);

/* A string, c.p at its opening quote: checked as json.h checks it (no control byte, no
 * lone surrogate escape, UTF-8 not checked: msgspec's compaction does not either),
 * written as it is. */
static inline int ds_copy_string(Pass *ps) {
    Cur *c = &ps->c;
    cptr a = c->p, s, e;
    int esc;
    c->p++;
    if (string(c, &s, &e, &esc)) return -1;
    ds_put(ps, a, (size_t)(c->p - a));
    return 0;
}

/* After a member or an element: as after_item, the comma or the bracket written. */
static inline int ds_after(Pass *ps, unsigned char close) {
    int more = after_item(&ps->c, close);
    if (more >= 0) *ps->o++ = more ? ',' : close;
    return more;
}

/* A member's name, its colon and the blanks around, c.p at the name: written as
 * "name": (no check of an escape in it: it is only copied). *s, *e: the name. */
static inline int ds_copy_name(Pass *ps, cptr *s, cptr *e, int *esc) {
    Cur *c = &ps->c;
    if (member_name(c, s, e, esc)) return -1;
    ds_put(ps, *s - 1, (size_t)(*e - *s) + 1);
    *ps->o++ = '"';
    *ps->o++ = ':';
    return 0;
}

/* Any value, c.p at its first byte: checked (json.h's rules) and written compact, as
 * msgspec.json.format(indent=-1) writes it (the same bytes but the blanks between). */
static int ds_copy(Pass *ps, int depth) {
    Cur *c = &ps->c;
    cptr a = c->p, s, e;
    int esc, integer, more;
    if (a >= c->end) return -1;
    switch (*a) {
    case '{':
        if (depth >= MAX_DEPTH) return -1;
        c->p++;
        *ps->o++ = '{';
        ws(c);
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            *ps->o++ = '}';
            return 0;
        }
        do {
            if (ds_copy_name(ps, &s, &e, &esc) || ds_copy(ps, depth + 1)) return -1;
        } while ((more = ds_after(ps, '}')) > 0);
        return more;
    case '[':
        if (depth >= MAX_DEPTH) return -1;
        c->p++;
        *ps->o++ = '[';
        ws(c);
        if (c->p < c->end && *c->p == ']') {
            c->p++;
            *ps->o++ = ']';
            return 0;
        }
        do {
            if (ds_copy(ps, depth + 1)) return -1;
        } while ((more = ds_after(ps, ']')) > 0);
        return more;
    case '"':
        return ds_copy_string(ps);
    case 't':
        if (literal(c, "true", 4)) return -1;
        break;
    case 'f':
        if (literal(c, "false", 5)) return -1;
        break;
    case 'n':
        if (literal(c, "null", 4)) return -1;
        break;
    default:
        if (number(c, &integer)) return -1;
    }
    ds_put(ps, a, (size_t)(c->p - a));
    return 0;
}

/* The compacted document as bytes, from the written part of `out`. */
static PyObject *ds_done(PyObject **out, Pass *ps) {
    if (_PyBytes_Resize(out, (Py_ssize_t)(ps->o - ps->o0))) return NULL;
    return *out;
}

/* ---- the values the typed decoding decodes ---- */

enum { DS_NULL, DS_TRUE, DS_FALSE, DS_INT, DS_FLOAT, DS_STR };

typedef struct {
    int type;
    double num;    /* DS_INT, DS_FLOAT */
    int64_t integer;  /* DS_INT */
    cptr s, e;     /* DS_STR: the text; every type: the value's bytes [s, e) */
} Scalar;

/* A value the typed decoding decodes, c->p at it: 0 and *v, or -1 for one this pass
 * leaves to that decoding (an object, an array, a string with an escape or a byte >=
 * 0x80, a number that is not an exact double by one division). */
static int ds_scalar(Cur *c, Scalar *v) {
    cptr a = c->p;
    if (a >= c->end) return -1;
    v->s = a;
    switch (*a) {
    case '"': {
        cptr p = a + 1;
        while (p < c->end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) p++;
        if (p >= c->end || *p != '"') return -1;
        v->type = DS_STR;
        v->s = a + 1;
        v->e = p;
        c->p = p + 1;
        return 0;
    }
    case 't':
        if (literal(c, "true", 4)) return -1;
        v->type = DS_TRUE;
        break;
    case 'f':
        if (literal(c, "false", 5)) return -1;
        v->type = DS_FALSE;
        break;
    case 'n':
        if (literal(c, "null", 4)) return -1;
        v->type = DS_NULL;
        break;
    default: {
        int integer;
        if (number(c, &integer) || quick_double(a, c->p, &v->num)) return -1;
        if (integer) {
            /* quick_double took it: at most 16 digits, an exact int64 */
            int64_t m = 0;
            cptr q = a + (*a == '-');
            for (; q < c->p; q++) m = m * 10 + (*q - '0');
            v->integer = *a == '-' ? -m : m;
            v->type = DS_INT;
        } else v->type = DS_FLOAT;
    }
    }
    v->e = c->p;
    return 0;
}

/* ---- the usual time stamp ---- */

/* Unix seconds of the usual stamp YYYY-MM-DDTHH:MM:SS.mmmZ, as _time.read_times computes
 * them (the whole seconds as a double, plus the milliseconds' nanoseconds / 1e9); -1 for
 * any other text (the reader's Python reads those). */
static int ds_stamp(cptr s, cptr e, double *out) {
    static const char SHAPE[] = "0000-00-00T00:00:00.000Z";
    if (e - s != 24) return -1;
    int d[24];
    for (int k = 0; k < 24; k++) {
        if (SHAPE[k] == '0') {
            if (s[k] < '0' || s[k] > '9') return -1;
            d[k] = s[k] - '0';
        } else if (s[k] != (unsigned char)SHAPE[k]) return -1;
    }
    int64_t y = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3];
    int mo = d[5] * 10 + d[6], day = d[8] * 10 + d[9];
    int h = d[11] * 10 + d[12], mi = d[14] * 10 + d[15], sec = d[17] * 10 + d[18];
    int64_t frac = d[20] * 100 + d[21] * 10 + d[22];
    if (h > 23 || mi > 59 || sec > 60 || y < 1 || mo < 1 || mo > 12) return -1;
    static const int MDAYS[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (day < 1 || day > MDAYS[mo - 1] + (mo == 2 && leap)) return -1;
    /* days from 1970-01-01 (the proleptic Gregorian calendar, as datetime.date) */
    int64_t yy = y - (mo <= 2);
    int64_t era = yy / 400;  /* yy >= 0 */
    int64_t yoe = yy - era * 400;
    int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    int64_t whole = days * 86400 + h * 3600 + mi * 60 + sec;
    *out = (double)whole + (double)(frac * 1000000) / 1e9;
    return 0;
}

/* ---- the Inspector's export ---- */

#define DS_KINDS 16  /* distinct entry kinds (the export's "direction") taken */

/* The start of a pass over `base` (a buffer the caller holds), the compacted document
 * written into *out (a new bytes object as long as the input: a compacted document is
 * never longer). -1 with an exception set (no memory). */
static int ds_begin(Pass *ps, const Py_buffer *bb, PyObject **out, int release) {
    *out = PyBytes_FromStringAndSize(NULL, bb->len ? bb->len : 1);
    if (!*out) return -1;
    ps->c.p = ps->in0 = ps->kept = (cptr)bb->buf;
    ps->c.end = (cptr)bb->buf + bb->len;
    ps->c.hi = 0;
    ps->c.gil = NULL;
    ps->o = ps->o0 = ps->filled = (unsigned char *)PyBytes_AS_STRING(*out);
    ps->oend = ps->o0 + (bb->len ? bb->len : 1);
    ps->release = release;
    return 0;
}

/* a scalar member the typed decoding decodes: read (ds_scalar) and written as it is */
static inline int ds_copy_scalar(Pass *ps, Scalar *v) {
    cptr a = ps->c.p;
    if (ds_scalar(&ps->c, v)) return -1;
    ds_put(ps, a, (size_t)(ps->c.p - a));
    return 0;
}

static const char INSPECTOR_DOC[] =
    "inspector_doc(data, release) -> tuple | None\n\n"
    "The usual Inspector export (a JSON array of entries, each with a message and no client\n"
    "error) compacted and read in one pass: (the compacted export as msgspec.json.format\n"
    "(indent=-1) gives it; in it, message starts, message lengths, response starts,\n"
    "response lengths (0: none) as int64; stamps (NaN: none or not the usual stamp),\n"
    "durations (NaN: none or not a number) as float64; stamp state as int8 (0 none, 1 read,\n"
    "2 to be read by Python from the stamp's place); stamp starts and lengths as int64;\n"
    "origin codes (0 client, 1 server, -1 other) and kind codes (-1: not a text, or empty)\n"
    "as int8; the kinds as a list of str; the extras by record number (each entry's message,\n"
    "then its response where it has one): a message's {'entry_kind': kind}, one dict per\n"
    "kind, a response's {'duration_ms': duration} where it has one). None for any other\n"
    "document. ``release``: data is a read-only map of a file, whose pages passed may be\n"
    "let go.";

static PyObject *py_inspector_doc(PyObject *self, PyObject *args) {
    PyObject *base, *flat = NULL;
    int release;
    Py_buffer bb;
    (void)self;
    if (!PyArg_ParseTuple(args, "Op", &base, &release)) return NULL;
    if (PyObject_GetBuffer(base, &bb, PyBUF_SIMPLE)) return NULL;
    Grow ms = {0}, ml = {0}, rs = {0}, rl = {0}, ts = {0}, du = {0}, st = {0}, ss = {0},
         sl = {0}, og = {0}, kd = {0};
    Grow *all[] = {&ms, &ml, &rs, &rl, &ts, &du, &st, &ss, &sl, &og, &kd};
    const int n_all = 11;
    cptr kinds[DS_KINDS], kinds_end[DS_KINDS];
    int n_kinds = 0;
    PyObject *res = NULL, *kdicts[DS_KINDS] = {NULL};
    PyObject *extras = PyDict_New();
    PyObject *k_kind = PyUnicode_InternFromString("entry_kind");
    PyObject *k_dur = PyUnicode_InternFromString("duration_ms");
    Py_ssize_t record = 0;  /* the record of the entry's message */
    Pass pass;
    Pass *ps = &pass;
    Cur *c = &pass.c;
    if (!extras || !k_kind || !k_dur || ds_begin(ps, &bb, &flat, release)) goto error;
    ws(c);
    if (c->p >= c->end || *c->p != '[') goto fail;
    c->p++;
    *ps->o++ = '[';
    ws(c);
    if (c->p < c->end && *c->p == ']') goto fail;  /* empty: the general path */
    for (;;) {
        if (c->p >= c->end || *c->p != '{') goto fail;
        c->p++;
        *ps->o++ = '{';
        ws(c);
        int seen = 0;
        int64_t m0 = 0, m1 = -1, r0 = 0, r1 = 0, s0 = 0, s1 = 0;
        double stamp = NAN, dur = NAN;
        int8_t state = 0, origin = -1, kind = -1;
        if (c->p < c->end && *c->p == '}') goto fail;  /* no message */
        int more;
        do {
            cptr s, e;
            int esc;
            if (ds_copy_name(ps, &s, &e, &esc) || esc) goto fail;
            size_t len = (size_t)(e - s);
            int bit = 0;
#define IS(lit) (len == sizeof(lit) - 1 && !memcmp(s, lit, sizeof(lit) - 1))
            if (IS("message")) bit = 1;
            else if (IS("response")) bit = 2;
            else if (IS("timestamp")) bit = 4;
            else if (IS("direction")) bit = 8;
            else if (IS("origin")) bit = 16;
            else if (IS("duration")) bit = 32;
            else if (IS("clientError")) bit = 64;
#undef IS
            if (bit & seen) goto fail;  /* a known member twice */
            seen |= bit;
            unsigned char *at = ps->o;
            if (bit == 1 || bit == 2 || bit == 64 || !bit) {
                if (ds_copy(ps, 1)) goto fail;
                int null = ps->o - at == 4 && !memcmp(at, "null", 4);
                if (bit == 1) {
                    if (null) goto fail;
                    m0 = at - ps->o0;
                    m1 = ps->o - at;
                } else if (bit == 2 && !null) {
                    r0 = at - ps->o0;
                    r1 = ps->o - at;
                } else if (bit == 64 && !null) goto fail;  /* a client error */
            } else {
                Scalar v;
                if (ds_copy_scalar(ps, &v)) goto fail;
                if (bit == 4) {
                    if (v.type == DS_NULL) state = 0;
                    else if (v.type == DS_STR && !ds_stamp(v.s, v.e, &stamp)) state = 1;
                    else {
                        state = 2;
                        s0 = at - ps->o0;
                        s1 = ps->o - at;
                        stamp = NAN;
                    }
                } else if (bit == 8) {
                    kind = -1;
                    if (v.type == DS_STR && v.e > v.s) {
                        int k = 0;
                        size_t kl = (size_t)(v.e - v.s);
                        while (k < n_kinds && !((size_t)(kinds_end[k] - kinds[k]) == kl &&
                                                !memcmp(kinds[k], v.s, kl)))
                            k++;
                        if (k == n_kinds) {
                            if (n_kinds == DS_KINDS) goto fail;
                            /* kept in the output (the input's pages may be let go) */
                            kinds[k] = at + 1;
                            kinds_end[k] = at + 1 + kl;
                            n_kinds++;
                        }
                        kind = (int8_t)k;
                    }
                } else if (bit == 16) {
                    origin = -1;
                    if (v.type == DS_STR) {
                        size_t ol = (size_t)(v.e - v.s);
                        if (ol == 6 && !memcmp(v.s, "client", 6)) origin = 0;
                        else if (ol == 6 && !memcmp(v.s, "server", 6)) origin = 1;
                    }
                } else {  /* duration */
                    dur = v.type == DS_INT || v.type == DS_FLOAT ? v.num : NAN;
                }
            }
        } while ((more = ds_after(ps, '}')) > 0);
        if (more < 0 || m1 < 0) goto fail;
        PUT(ms, int64_t, m0);
        PUT(ml, int64_t, m1);
        PUT(rs, int64_t, r0);
        PUT(rl, int64_t, r1);
        PUT(ts, double, stamp);
        PUT(du, double, dur);
        PUT(st, int8_t, state);
        PUT(ss, int64_t, s0);
        PUT(sl, int64_t, s1);
        PUT(og, int8_t, origin);
        PUT(kd, int8_t, kind);
        ds_release(ps);
        /* the extras of the column path: the message's the one dict of its kind, the
         * response's its duration (a new dict each) */
        if (kind >= 0) {
            if (!kdicts[kind]) {
                PyObject *t = PyUnicode_FromStringAndSize((const char *)kinds[kind],
                                                          kinds_end[kind] - kinds[kind]);
                if (!t || !(kdicts[kind] = PyDict_New()) ||
                    PyDict_SetItem(kdicts[kind], k_kind, t)) {
                    Py_XDECREF(t);
                    goto error;
                }
                Py_DECREF(t);
            }
            PyObject *key = PyLong_FromSsize_t(record);
            if (!key || PyDict_SetItem(extras, key, kdicts[kind])) {
                Py_XDECREF(key);
                goto error;
            }
            Py_DECREF(key);
        }
        if (r1 > 0 && dur == dur) {
            PyObject *d = PyDict_New(), *f = PyFloat_FromDouble(dur);
            PyObject *key = PyLong_FromSsize_t(record + 1);
            int bad = !d || !f || !key || PyDict_SetItem(d, k_dur, f) ||
                      PyDict_SetItem(extras, key, d);
            Py_XDECREF(d);
            Py_XDECREF(f);
            Py_XDECREF(key);
            if (bad) goto error;
        }
        record += 1 + (r1 > 0);
        more = ds_after(ps, ']');
        if (more < 0) goto fail;
        if (!more) break;
    }
    ws(c);
    if (c->p != c->end) goto fail;
    {
        PyObject *names = PyList_New(n_kinds);
        if (!names) goto error;
        for (int k = 0; k < n_kinds; k++) {
            PyObject *t = PyUnicode_FromStringAndSize((const char *)kinds[k],
                                                      kinds_end[k] - kinds[k]);
            if (!t) {
                Py_DECREF(names);
                goto error;
            }
            PyList_SET_ITEM(names, k, t);
        }
        res = PyTuple_New(n_all + 3);
        if (!res) {
            Py_DECREF(names);
            goto error;
        }
        PyTuple_SET_ITEM(res, n_all + 1, names);
        PyTuple_SET_ITEM(res, n_all + 2, extras);
        extras = NULL;
        for (int k = 0; k < n_all; k++) {
            PyObject *o = grow_bytes(all[k]);
            if (!o) goto error;
            PyTuple_SET_ITEM(res, k + 1, o);
        }
        if (!ds_done(&flat, ps)) goto error;
        PyTuple_SET_ITEM(res, 0, flat);
    }
    PyBuffer_Release(&bb);
    for (int k = 0; k < DS_KINDS; k++) Py_XDECREF(kdicts[k]);
    Py_DECREF(k_kind);
    Py_DECREF(k_dur);
    return res;
fail:  /* not the usual export (or no memory for the arrays): the general path */
    PyBuffer_Release(&bb);
    for (int k = 0; k < n_all; k++) free(all[k]->data);
    for (int k = 0; k < DS_KINDS; k++) Py_XDECREF(kdicts[k]);
    Py_XDECREF(flat);
    Py_XDECREF(extras);
    Py_XDECREF(k_kind);
    Py_XDECREF(k_dur);
    Py_RETURN_NONE;
error:
    PyBuffer_Release(&bb);
    for (int k = 0; k < n_all; k++) free(all[k]->data);
    for (int k = 0; k < DS_KINDS; k++) Py_XDECREF(kdicts[k]);
    Py_XDECREF(res);
    Py_XDECREF(flat);  /* never in res: it goes in last, just before the return */
    Py_XDECREF(extras);
    Py_XDECREF(k_kind);
    Py_XDECREF(k_dur);
    return NULL;
}

/* ---- the mcp-recorder cassette ---- */

static const char RECORDER_DOC[] =
    "recorder_doc(data, release) -> tuple | None\n\n"
    "The usual cassette (a JSON object whose interactions all have a request) compacted and\n"
    "read in one pass: (the compacted cassette as msgspec.json.format(indent=-1) gives it;\n"
    "in it, request starts, request lengths, response starts, response lengths (0: none) as\n"
    "int64; the sse flags as int8 (-1 none, 0 false, 1 true); the extras by record number\n"
    "(each interaction's request, then its response where it has one): a dict of status,\n"
    "latency_ms and sse, each where the cassette has it (not null), one per interaction\n"
    "that has any, its two records sharing it). None for any other document. ``release``:\n"
    "as for inspector_doc.";

/* a member of a cassette's interaction as _extra reads it: a Python value, or NULL for
 * none (absent or null) */
static PyObject *ds_py(const Scalar *v) {
    switch (v->type) {
    case DS_TRUE: Py_RETURN_TRUE;
    case DS_FALSE: Py_RETURN_FALSE;
    case DS_INT: return PyLong_FromLongLong(v->integer);
    case DS_FLOAT: return PyFloat_FromDouble(v->num);
    default: return NULL;
    }
}

static PyObject *py_recorder_doc(PyObject *self, PyObject *args) {
    PyObject *base, *flat = NULL;
    int release;
    Py_buffer bb;
    (void)self;
    if (!PyArg_ParseTuple(args, "Op", &base, &release)) return NULL;
    if (PyObject_GetBuffer(base, &bb, PyBUF_SIMPLE)) return NULL;
    Grow qs = {0}, ql = {0}, rs = {0}, rl = {0}, sf = {0};
    Grow *all[] = {&qs, &ql, &rs, &rl, &sf};
    const int n_all = 5;
    PyObject *extras = PyDict_New(), *res = NULL;
    Py_ssize_t record = 0;  /* the record of the interaction's request */
    PyObject *k_status = PyUnicode_InternFromString("status");
    PyObject *k_latency = PyUnicode_InternFromString("latency_ms");
    PyObject *k_sse = PyUnicode_InternFromString("sse");
    Pass pass;
    Pass *ps = &pass;
    Cur *c = &pass.c;
    if (!extras || !k_status || !k_latency || !k_sse) goto error;
    if (ds_begin(ps, &bb, &flat, release)) goto error;
    int found = 0, more;
    ws(c);
    if (c->p >= c->end || *c->p != '{') goto fail;
    c->p++;
    *ps->o++ = '{';
    ws(c);
    if (c->p < c->end && *c->p == '}') goto fail;
    do {
        cptr s, e;
        int esc;
        if (ds_copy_name(ps, &s, &e, &esc) || esc) goto fail;
        if (!KEY_IS(s, e, "interactions")) {  /* the metadata, the version: raw */
            if (ds_copy(ps, 1)) goto fail;
            continue;
        }
        if (found++) goto fail;
        if (c->p >= c->end || *c->p != '[') goto fail;
        c->p++;
        *ps->o++ = '[';
        ws(c);
        if (c->p < c->end && *c->p == ']') goto fail;  /* none: the general path */
        int again;
        do {
            if (c->p >= c->end || *c->p != '{') goto fail;
            c->p++;
            *ps->o++ = '{';
            ws(c);
            if (c->p < c->end && *c->p == '}') goto fail;  /* no request */
            int seen = 0;
            int64_t q0 = 0, q1 = -1, r0 = 0, r1 = 0;
            Scalar status = {DS_NULL}, latency = {DS_NULL}, sse = {DS_NULL};
            do {
                int es;
                if (ds_copy_name(ps, &s, &e, &es) || es) goto fail;
                size_t len = (size_t)(e - s);
                int bit = 0;
#define IS(lit) (len == sizeof(lit) - 1 && !memcmp(s, lit, sizeof(lit) - 1))
                if (IS("request")) bit = 1;
                else if (IS("response")) bit = 2;
                else if (IS("type")) bit = 4;
                else if (IS("response_is_sse")) bit = 8;
                else if (IS("response_status")) bit = 16;
                else if (IS("latency_ms")) bit = 32;
                else if (IS("http_method")) bit = 64;
                else if (IS("http_path")) bit = 128;
#undef IS
                if (bit & seen) goto fail;
                seen |= bit;
                unsigned char *at = ps->o;
                if (bit == 1 || bit == 2 || !bit) {
                    if (ds_copy(ps, 3)) goto fail;
                    int null = ps->o - at == 4 && !memcmp(at, "null", 4);
                    if (bit == 1) {
                        if (null) goto fail;
                        q0 = at - ps->o0;
                        q1 = ps->o - at;
                    } else if (bit == 2 && !null) {
                        r0 = at - ps->o0;
                        r1 = ps->o - at;
                    }
                } else {
                    Scalar v;
                    if (ds_copy_scalar(ps, &v)) goto fail;
                    if (bit == 8) {  /* sse: a boolean or nothing */
                        if (v.type != DS_NULL && v.type != DS_TRUE && v.type != DS_FALSE)
                            goto fail;
                        sse = v;
                    } else if (bit == 16) {  /* status: an integer or nothing */
                        if (v.type != DS_NULL && v.type != DS_INT) goto fail;
                        status = v;
                    } else if (bit == 32) {  /* latency: a number or nothing */
                        if (v.type != DS_NULL && v.type != DS_INT && v.type != DS_FLOAT)
                            goto fail;
                        latency = v;
                    }  /* the type, the method and the path: checked, not kept */
                }
            } while ((more = ds_after(ps, '}')) > 0);
            if (more < 0 || q1 < 0) goto fail;
            PUT(qs, int64_t, q0);
            PUT(ql, int64_t, q1);
            PUT(rs, int64_t, r0);
            PUT(rl, int64_t, r1);
            PUT(sf, int8_t, sse.type == DS_NULL ? -1 : sse.type == DS_TRUE);
            ds_release(ps);
            PyObject *d = NULL;
            const Scalar *vals[3] = {&status, &latency, &sse};
            PyObject *keys[3] = {k_status, k_latency, k_sse};
            for (int k = 0; k < 3; k++) {
                PyObject *o = ds_py(vals[k]);
                if (!o) {
                    if (PyErr_Occurred()) goto error_d;
                    continue;
                }
                if (!d && !(d = PyDict_New())) {
                    Py_DECREF(o);
                    goto error;
                }
                int bad = PyDict_SetItem(d, keys[k], o);
                Py_DECREF(o);
                if (bad) goto error_d;
            }
            /* the request's record and the response's share the dict, as in _columns */
            for (int k = 0; k < 1 + (r1 > 0) && d; k++) {
                PyObject *key = PyLong_FromSsize_t(record + k);
                if (!key) goto error_d;
                int bad = PyDict_SetItem(extras, key, d);
                Py_DECREF(key);
                if (bad) goto error_d;
            }
            record += 1 + (r1 > 0);
            Py_XDECREF(d);
            continue;
        error_d:
            Py_XDECREF(d);
            goto error;
        } while ((again = ds_after(ps, ']')) > 0);
        if (again < 0) goto fail;
    } while ((more = ds_after(ps, '}')) > 0);
    if (more < 0 || !found) goto fail;
    ws(c);
    if (c->p != c->end) goto fail;
    res = PyTuple_New(n_all + 2);
    if (!res) goto error;
    PyTuple_SET_ITEM(res, n_all + 1, extras);
    extras = NULL;
    for (int k = 0; k < n_all; k++) {
        PyObject *o = grow_bytes(all[k]);
        if (!o) goto error;
        PyTuple_SET_ITEM(res, k + 1, o);
    }
    if (!ds_done(&flat, ps)) goto error;
    PyTuple_SET_ITEM(res, 0, flat);
    PyBuffer_Release(&bb);
    Py_DECREF(k_status);
    Py_DECREF(k_latency);
    Py_DECREF(k_sse);
    return res;
fail:  /* not the usual cassette (or no memory for the arrays): the general path */
    PyBuffer_Release(&bb);
    for (int k = 0; k < n_all; k++) free(all[k]->data);
    Py_XDECREF(flat);
    Py_XDECREF(extras);
    Py_XDECREF(k_status);
    Py_XDECREF(k_latency);
    Py_XDECREF(k_sse);
    Py_RETURN_NONE;
error:
    PyBuffer_Release(&bb);
    for (int k = 0; k < n_all; k++) free(all[k]->data);
    Py_XDECREF(res);
    Py_XDECREF(flat);  /* never in res: it goes in last, just before the return */
    Py_XDECREF(extras);
    Py_XDECREF(k_status);
    Py_XDECREF(k_latency);
    Py_XDECREF(k_sse);
    return NULL;
}

#endif
