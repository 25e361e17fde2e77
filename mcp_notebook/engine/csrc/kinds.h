/* frame_kinds(): what the table's classification makes of a record, without its row.
 *
 * A reader that places records by their meaning before the table is made (the HAR
 * reader's untimed events of a GET stream: readers/_har_order.py) needs only the kind,
 * the id key and the progress token of each record's message. scan() (module.c) would make the whole row
 * (the id, the method code, the sparse columns, the call and list columns, the text);
 * this reads each record with the same message() and gives only those three, for the
 * records scan() takes: the others (a batch, anything scan() leaves to the Python path)
 * are marked, and the caller classifies them as before. */
#ifndef MCP_NOTEBOOK_KINDS_H
#define MCP_NOTEBOOK_KINDS_H
#include "envelope.h"

/* The spans frame_kinds gives of a message read: its id (at[0], at[1]) and its progress
 * token's key (at[2], at[3]): the ref of a notifications/progress or of a request (its
 * _meta.progressToken), not a cancel's; -1 where there is none. */
static void fk_spans(const Msg *m, cptr base, int64_t *at) {
    if (m->id_s) {
        at[0] = m->id_s - base;
        at[1] = m->id_e - base;
    }
    if (m->ref.s && (m->kind == K_REQUEST ||
                     (m->kind == K_NOTIFICATION &&
                      KEY_IS(m->meth_s, m->meth_e, "notifications/progress")))) {
        at[2] = m->ref.s - base;
        at[3] = m->ref.e - base;
    }
}

/* The keys of the spans at ids[4 * k + off] (off 0: the ids, 2: the tokens) as a list
 * (None where there is none): module.c make_id's key, the span's text (ASCII). */
static PyObject *fk_keys(cptr base, const int64_t *ids, Py_ssize_t n, int off) {
    PyObject *keys = PyList_New(n);
    if (!keys) return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        const int64_t *at = ids + 4 * k + off;
        PyObject *key = Py_None;
        if (at[0] < 0) {
            Py_INCREF(key);
        } else {
            Py_ssize_t w = (Py_ssize_t)(at[1] - at[0]);
            key = PyUnicode_New(w, 127);
            if (!key) {
                Py_DECREF(keys);
                return NULL;
            }
            memcpy(PyUnicode_DATA(key), base + at[0], (size_t)w);
        }
        PyList_SET_ITEM(keys, k, key);
    }
    return keys;
}

static const char FRAME_KINDS_DOC[] =
    "frame_kinds(buf, starts, ends) -> (bytearray, list, list)\n\n"
    "For each record buf[starts[k]:ends[k]] (int64 buffers): the kind code (int8, as\n"
    "protocol.vocab.KINDS) of the one row scan() makes of it, its id key (the id's JSON\n"
    "text as scan() keys it, or None) and its progress token's key (the ref scan() gives\n"
    "a notifications/progress or a request's _meta.progressToken; None for any other),\n"
    "all exactly scan()'s. A record scan() does not take (blank, outside the buffer, or\n"
    "any line scan() leaves to the Python path: a batch, a special id, a line that is not\n"
    "JSON...) gets kind -1 and None. The records are read with the GIL released (another\n"
    "thread runs meanwhile).";

static PyObject *py_frame_kinds(PyObject *self, PyObject *args) {
    Py_buffer b[3];
    PyObject *res = NULL, *kinds = NULL, *keys = NULL, *refs = NULL;
    /* each record's id, then its progress token: start and end in buf (-1: none) */
    int64_t *ids = NULL;
    (void)self;
    Py_ssize_t n = spans_args(args, b);
    if (n < 0) return NULL;
    const int64_t *st = (const int64_t *)b[1].buf, *en = (const int64_t *)b[2].buf;
    cptr base = (cptr)b[0].buf;
    Py_ssize_t len = b[0].len;
    kinds = PyByteArray_FromStringAndSize(NULL, n);
    ids = malloc(sizeof(int64_t) * 4 * (size_t)(n ? n : 1));
    if (!kinds || !ids) {
        if (!ids) PyErr_NoMemory();
        goto done;
    }
    int8_t *kind = (int8_t *)PyByteArray_AS_STRING(kinds);
    /* read without the GIL (the buffers are held); a record whose reading needs it
     * (a number Python converts: see Cur) is marked -2 and read again with it */
    Py_ssize_t again = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t a = st[k], z = en[k];
        Msg m;
        int gil = 0;
        ids[4 * k] = ids[4 * k + 2] = -1;
        /* as scan(): a blank record makes no row, one outside the buffer stops it */
        if (a >= z || a < 0 || z > len) {
            kind[k] = -1;
        } else if (message_gil(base + a, base + z, &m, 1, &gil)) {
            kind[k] = gil ? -2 : -1;
            again += gil;
        } else {
            kind[k] = (int8_t)m.kind;
            fk_spans(&m, base, ids + 4 * k);
        }
    }
    Py_END_ALLOW_THREADS
    for (Py_ssize_t k = 0; again && k < n; k++) {
        if (kind[k] != -2) continue;
        Msg m;
        if (message(base + st[k], base + en[k], &m, 1)) {
            if (PyErr_Occurred()) goto done;
            kind[k] = -1;
            continue;
        }
        kind[k] = (int8_t)m.kind;
        fk_spans(&m, base, ids + 4 * k);
    }
    keys = fk_keys(base, ids, n, 0);
    refs = keys ? fk_keys(base, ids, n, 2) : NULL;
    if (!refs) goto done;
    res = PyTuple_Pack(3, kinds, keys, refs);
done:
    free(ids);
    Py_XDECREF(kinds);
    Py_XDECREF(keys);
    Py_XDECREF(refs);
    spans_release(b);
    return res;
}

#endif /* MCP_NOTEBOOK_KINDS_H */
