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
#include <stddef.h>

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

/* The whole pages of [a, b) made at once, as ds_ahead makes them (where it can). */
static void ds_fill(unsigned char *a, unsigned char *b) {
#if defined(MADV_POPULATE_WRITE)
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t x = ((uintptr_t)a + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t y = (uintptr_t)b & ~((uintptr_t)page - 1);
    if (y > x) (void)madvise((void *)x, y - x, MADV_POPULATE_WRITE);
#else
    (void)a;
    (void)b;
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

#endif
