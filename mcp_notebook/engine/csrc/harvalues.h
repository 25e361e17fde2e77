/* The state of the one-pass HAR reader (harscan.h) and the values it reads: a body's
 * text unescaped into the pass's buffer, a string member as a str (the previous entry's
 * object again when its bytes are the same), a number as a double, a null, a header list
 * kept as its bytes. Each refuses (-1, or NULL with no error set) what msgspec's typed
 * decoding might read otherwise; harscan.h says which documents the pass takes. */
#ifndef MCP_NOTEBOOK_HARVALUES_H
#define MCP_NOTEBOOK_HARVALUES_H
#include "docscan.h"
#include "har.h"
#include "utf8.h"

/* The whole pass. */
typedef struct {
    Cur c;
    unsigned char *t0, *t;  /* the texts' buffer and where the next one goes */
    Scratch sc;
    Grow pos, tim, flags;
    PyObject *methods, *urls, *started, *status, *mimes, *hkeys;
    PyObject *last_url, *last_status, *last_mime, *last_rq, *last_rs;
    cptr last_url_s, last_mime_s, last_rq_s, last_rs_s;
    size_t last_url_n, last_mime_n, last_rq_n, last_rs_n;
    long long last_status_v;
} HarPass;

/* A body's text, c.p at its opening quote: unescaped into h->t as json_string_text
 * does (the same rules), passed in the same loop. -1: not Unicode text. */
static int hs_text(HarPass *h) {
    cptr p = h->c.p + 1, end = h->c.end;
    unsigned char *dst = h->t;
    for (;;) {
        copy_plain8(&p, end, &dst);  /* its overrun is within the buffer: see py_har_scan */
        if (p >= end) return -1;
        unsigned char c = *p;
        if (c == '"') {
            h->c.p = p + 1;
            h->t = dst;
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

/* A string member as a str (new reference), c.p at its value; NULL (no error set) for
 * anything but a string of Unicode text. `last`: the previous one of the same member,
 * given again when its bytes are the same. */
static PyObject *hs_str(HarPass *h, PyObject **last, cptr *last_s, size_t *last_n) {
    Span v;
    if (str_value(&h->c, &v)) return NULL;
    size_t n = (size_t)(v.e - v.s);
    if (last && *last && !v.esc && n == *last_n && !memcmp(v.s, *last_s, n)) {
        Py_INCREF(*last);
        return *last;
    }
    PyObject *o;
    if (!v.esc) {
        o = PyUnicode_DecodeUTF8((const char *)v.s, (Py_ssize_t)n, NULL);
    } else {
        if (reserve(&h->sc, n + 1)) return NULL;
        size_t k = unescape(v.s, v.e, h->sc.data);
        o = PyUnicode_DecodeUTF8((const char *)h->sc.data, (Py_ssize_t)k, NULL);
    }
    if (!o) {
        PyErr_Clear();
        return NULL;
    }
    if (last && !v.esc) {
        Py_XSETREF(*last, o);
        Py_INCREF(o);
        *last_s = v.s;
        *last_n = n;
    }
    return o;
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
    if (float_value(c, out)) return -1;
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

/* A header list: any value, kept as its bytes. */
static int hs_raw(Cur *c, cptr *s, cptr *e) {
    *s = c->p;
    if (value(c, 6)) return -1;
    *e = c->p;
    return 0;
}

/* A header list's bytes (b"null" when absent), the previous entry's object when its
 * bytes are the same. */
static PyObject *hs_hkey(cptr s, cptr e, PyObject **last, cptr *last_s, size_t *last_n) {
    if (!s) {
        s = (cptr) "null";
        e = s + 4;
    }
    size_t n = (size_t)(e - s);
    if (*last && n == *last_n && !memcmp(s, *last_s, n)) {
        Py_INCREF(*last);
        return *last;
    }
    PyObject *o = PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)n);
    if (!o) return NULL;
    Py_INCREF(o);
    Py_XSETREF(*last, o);
    *last_s = s;
    *last_n = n;
    return o;
}

static int hs_append(PyObject *list, PyObject *o) {
    if (!o) o = Py_None;
    return PyList_Append(list, o);
}

#endif
