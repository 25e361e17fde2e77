/* A usual HAR read in one pass (readers._har_columns): the members of each entry the
 * column path reads, and the texts of its bodies unescaped into one buffer as they are
 * passed (the request's postData.text and the response's content.text).
 *
 * The pass takes a document only where its answer is the one of msgspec's typed decoding
 * into readers._har_structs (then json_texts of the bodies): every member named without
 * escapes, each known one at most once; the strings it reads (method, url,
 * startedDateTime, mimeType) valid Unicode; a body's text a string of Unicode text
 * (json_texts' rules) or null; status null or an integer of at most 15 digits; time and
 * the timings null or numbers (an integer of at most 15 digits, or a decimal, read as
 * json.h's float_value reads it: correctly rounded, finite); _incomplete a literal; the
 * members the structs require absent or null present and null. Any other document (a
 * member the structs refuse or may read otherwise, a duplicate, bytes not UTF-8 anywhere
 * outside the bodies, ...) gives the place where the pass stopped, and the column path
 * reads it with msgspec as before. */
#ifndef MCP_NOTEBOOK_HARSCAN_H
#define MCP_NOTEBOOK_HARSCAN_H
#include "harvalues.h"

/* One entry, as it is read. */
typedef struct {
    HarPass *h;
    PyObject *method, *url, *started, *mime, *status;  /* NULL: absent (None) */
    cptr rq_s, rq_e, rs_s, rs_e;  /* the header lists' values; NULL: absent (null) */
    int64_t at[4];  /* post text start, end; reply text start, end (-2: no postData or
                     * no content, -1: a text absent or null) */
    double num[7];  /* time, then blocked, dns, connect, send, wait, receive (NaN: none) */
    int incomplete, stamped, content, body;  /* body: 0 postData, 1 content */
} HarEntry;

static int hs_body(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    HarEntry *en = ctx;
    HarPass *h = en->h;
    if (NAME_IS("text")) {
        ONCE(1);
        int64_t *at = en->at + 2 * en->body;
        if (c->p < c->end && *c->p == 'n') return hs_null(c);  /* at[] stays -1 */
        if (c->p >= c->end || *c->p != '"') return -1;
        at[0] = (int64_t)(h->t - h->t0);
        if (hs_text(h)) return -1;
        at[1] = (int64_t)(h->t - h->t0);
        return 0;
    }
    if (NAME_IS("mimeType")) {
        ONCE(2);
        if (c->p < c->end && *c->p == 'n') return hs_null(c);
        PyObject *o = hs_str(h, en->body ? &h->last_mime : NULL, &h->last_mime_s,
                             &h->last_mime_n);
        if (!o) return -1;
        if (en->body) en->mime = o;
        else Py_DECREF(o);
        return 0;
    }
    if (NAME_IS("encoding")) {
        ONCE(4);
        return hs_null(c);
    }
    if (NAME_IS("_encoding")) {
        ONCE(8);
        return hs_null(c);
    }
    if (NAME_IS("_truncated")) {
        ONCE(16);
        return hs_null(c);
    }
    if (NAME_IS("_sseEvents")) {
        ONCE(32);
        cptr a = c->p;
        if (value(c, 6)) return -1;
        if (en->body && !(c->p - a == 4 && !memcmp(a, "null", 4))) en->stamped = 1;
        return 0;
    }
    return 1;
}

/* A postData or content: null, or an object of hs_body's members. */
static int hs_body_value(Cur *c, HarEntry *en, int body) {
    if (c->p < c->end && *c->p == 'n') return hs_null(c);
    int seen = 0;
    en->body = body;
    en->at[2 * body] = en->at[2 * body + 1] = -1;
    if (body) en->content = 1;
    return members(c, 6, en, hs_body, &seen);
}

static int hs_request(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    HarEntry *en = ctx;
    HarPass *h = en->h;
    if (NAME_IS("method")) {
        ONCE(1);
        return (en->method = hs_str(h, NULL, NULL, NULL)) ? 0 : -1;
    }
    if (NAME_IS("url")) {
        ONCE(2);
        return (en->url = hs_str(h, &h->last_url, &h->last_url_s, &h->last_url_n)) ? 0 : -1;
    }
    if (NAME_IS("postData")) {
        ONCE(4);
        return hs_body_value(c, en, 0);
    }
    if (NAME_IS("headers")) {
        ONCE(8);
        return hs_raw(c, &en->rq_s, &en->rq_e);
    }
    return 1;
}

static int hs_response(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    HarEntry *en = ctx;
    HarPass *h = en->h;
    if (NAME_IS("status")) {
        ONCE(1);
        if (c->p < c->end && *c->p == 'n') return hs_null(c);
        cptr a = c->p;
        int integer;
        if (number(c, &integer) || !integer || c->p - a - (*a == '-') > 15) return -1;
        char tmp[20];
        memcpy(tmp, a, (size_t)(c->p - a));
        tmp[c->p - a] = 0;
        long long v = strtoll(tmp, NULL, 10);
        if (h->last_status && v == h->last_status_v) {
            Py_INCREF(h->last_status);
            en->status = h->last_status;
            return 0;
        }
        if (!(en->status = PyLong_FromLongLong(v))) return -1;
        Py_INCREF(en->status);
        Py_XSETREF(h->last_status, en->status);
        h->last_status_v = v;
        return 0;
    }
    if (NAME_IS("headers")) {
        ONCE(2);
        return hs_raw(c, &en->rs_s, &en->rs_e);
    }
    if (NAME_IS("content")) {
        ONCE(4);
        return hs_body_value(c, en, 1);
    }
    return 1;
}

static int hs_timings(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    static const char *NAMES[] = {"blocked", "dns", "connect", "send", "wait", "receive"};
    HarEntry *en = ctx;
    for (int k = 0; k < 6; k++) {
        if (n == strlen(NAMES[k]) && !memcmp(name, NAMES[k], n)) {
            ONCE(1 << k);
            return hs_num(c, &en->num[1 + k]);
        }
    }
    return 1;
}

static int hs_entry(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    HarEntry *en = ctx;
    HarPass *h = en->h;
    int sub = 0;
    if (NAME_IS("startedDateTime")) {
        ONCE(1);
        return (en->started = hs_str(h, NULL, NULL, NULL)) ? 0 : -1;
    }
    if (NAME_IS("request")) {
        ONCE(2);
        return members(c, 5, en, hs_request, &sub) || (sub & 3) != 3 ? -1 : 0;
    }
    if (NAME_IS("response")) {
        ONCE(4);
        return members(c, 5, en, hs_response, &sub);
    }
    if (NAME_IS("time")) {
        ONCE(8);
        return hs_num(c, &en->num[0]);
    }
    if (NAME_IS("timings")) {
        ONCE(16);
        if (c->p < c->end && *c->p == 'n') return hs_null(c);
        return members(c, 5, en, hs_timings, &sub);
    }
    if (NAME_IS("_proxyError")) {
        ONCE(32);
        return hs_null(c);
    }
    if (NAME_IS("_incomplete")) {
        ONCE(64);
        if (c->p >= c->end) return -1;
        if (*c->p == 't') {
            en->incomplete = 1;
            return literal(c, "true", 4);
        }
        return *c->p == 'f' ? literal(c, "false", 5) : hs_null(c);
    }
    return 1;
}

/* One entry, c.p at its '{': read and appended to the pass's columns. 0, -1 (the
 * document is not taken) or -2 (a Python error). */
static int hs_one(HarPass *h) {
    HarEntry en;
    memset(&en, 0, sizeof en);
    en.h = h;
    for (int k = 0; k < 4; k++) en.at[k] = -2;
    for (int k = 0; k < 7; k++) en.num[k] = NAN;
    int seen = 0, r = -1;
    if (members(&h->c, 4, &en, hs_entry, &seen) || (seen & 7) != 7) goto done;
    r = -2;
    if (grow_put(&h->pos, en.at, sizeof en.at) || grow_put(&h->tim, en.num, sizeof en.num))
        goto done;
    unsigned char fl[2] = {(unsigned char)en.incomplete, (unsigned char)en.stamped};
    if (grow_put(&h->flags, fl, 2)) goto done;
    if (hs_append(h->methods, en.method) || hs_append(h->urls, en.url) ||
        hs_append(h->started, en.started) || hs_append(h->status, en.status))
        goto done;
    /* no content: ""; a content of no mimeType: None */
    PyObject *mime = !en.content ? PyUnicode_FromStringAndSize("", 0)
                                 : en.mime ? en.mime : Py_None;
    if (en.content) Py_INCREF(mime);
    int bad = !mime || PyList_Append(h->mimes, mime);
    Py_XDECREF(mime);
    if (bad) goto done;
    PyObject *a = hs_hkey(en.rq_s, en.rq_e, &h->last_rq, &h->last_rq_s, &h->last_rq_n);
    PyObject *b = a ? hs_hkey(en.rs_s, en.rs_e, &h->last_rs, &h->last_rs_s, &h->last_rs_n)
                    : NULL;
    PyObject *t = b ? PyTuple_Pack(2, a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (!t) goto done;
    bad = PyList_Append(h->hkeys, t);
    Py_DECREF(t);
    if (!bad) r = 0;
done:
    Py_XDECREF(en.method);
    Py_XDECREF(en.url);
    Py_XDECREF(en.started);
    Py_XDECREF(en.mime);
    Py_XDECREF(en.status);
    return r;
}

static int hs_log(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    HarPass *h = ctx;
    if (!NAME_IS("entries")) return 1;
    ONCE(1);
    if (c->p >= c->end || *c->p != '[') return -1;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        return 0;
    }
    int more;
    do {
        int r = hs_one(h);
        if (r) return r;
    } while ((more = after_item(c, ']')) > 0);
    return more;
}

static int hs_doc(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    if (!NAME_IS("log")) return 1;
    ONCE(1);
    int sub = 0;
    if (members(c, 2, ctx, hs_log, &sub)) return -1;
    return sub ? 0 : -1;
}

static const char HAR_SCAN_DOC[] =
    "har_scan(data) -> tuple | int\n\n"
    "A usual HAR (its bytes) read in one pass, as msgspec's typed decoding into\n"
    "readers._har_structs and json_texts read it (see harscan.h for the documents taken):\n"
    "(texts, at, nums, flags, methods, urls, started, status, mimes, hkeys): the texts of\n"
    "the bodies (a bytearray), four int64 per entry (its postData text's start and end in\n"
    "texts, its content text's; -2 for no postData or no content, -1 for a text null or\n"
    "absent), seven float64 (time, then the six timings; NaN: none), two bytes\n"
    "(_incomplete, stamped events), and lists of the method, url, startedDateTime, status\n"
    "(int or None), content mimeType ('' without content, None without a mimeType) and\n"
    "the pair of header lists' bytes (b'null' when absent). For any other document, the\n"
    "offset where the pass stopped.";

static PyObject *py_har_scan(PyObject *self, PyObject *arg) {
    Py_buffer b;
    (void)self;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE)) return NULL;
    HarPass h;
    memset(&h, 0, sizeof h);
    PyObject *res = NULL, *texts = NULL;
    h.c.p = (cptr)b.buf;
    h.c.end = h.c.p + b.len;
    /* room for every text: a text is never longer than its literal, and the 8 bytes
     * hs_text may write past a text's end are within the literal's bytes read */
    texts = PyByteArray_FromStringAndSize(NULL, b.len + 8);
    h.methods = PyList_New(0);
    h.urls = PyList_New(0);
    h.started = PyList_New(0);
    h.status = PyList_New(0);
    h.mimes = PyList_New(0);
    h.hkeys = PyList_New(0);
    if (!texts || !h.methods || !h.urls || !h.started || !h.status || !h.mimes || !h.hkeys)
        goto done;
    h.t0 = h.t = (unsigned char *)PyByteArray_AS_STRING(texts);
    int seen = 0;
    ws(&h.c);
    int r = members(&h.c, 1, &h, hs_doc, &seen);
    if (PyErr_Occurred()) goto done;
    if (!r) {
        ws(&h.c);
        if (h.c.p != h.c.end || !seen) r = -1;
    }
    /* the bytes of every string but the bodies' texts (checked as they were copied) */
    if (!r && h.c.hi && !utf8_valid((cptr)b.buf, (cptr)b.buf + b.len)) {
        h.c.p = (cptr)b.buf;
        r = -1;
    }
    if (r) {
        res = PyLong_FromSsize_t((Py_ssize_t)(h.c.p - (cptr)b.buf));
        goto done;
    }
    if (PyByteArray_Resize(texts, (Py_ssize_t)(h.t - h.t0))) goto done;
    PyObject *at = grow_bytes(&h.pos), *nums = grow_bytes(&h.tim), *fl = grow_bytes(&h.flags);
    if (at && nums && fl)
        res = PyTuple_Pack(10, texts, at, nums, fl, h.methods, h.urls, h.started, h.status,
                           h.mimes, h.hkeys);
    Py_XDECREF(at);
    Py_XDECREF(nums);
    Py_XDECREF(fl);
done:
    free(h.pos.data);
    free(h.tim.data);
    free(h.flags.data);
    free(h.sc.data);
    Py_XDECREF(texts);
    Py_XDECREF(h.methods);
    Py_XDECREF(h.urls);
    Py_XDECREF(h.started);
    Py_XDECREF(h.status);
    Py_XDECREF(h.mimes);
    Py_XDECREF(h.hkeys);
    Py_XDECREF(h.last_url);
    Py_XDECREF(h.last_status);
    Py_XDECREF(h.last_mime);
    Py_XDECREF(h.last_rq);
    Py_XDECREF(h.last_rs);
    PyBuffer_Release(&b);
    return res;
}

#endif
