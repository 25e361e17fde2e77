/* frame_kinds(): what the table's classification makes of a record, without its row.
 *
 * A reader that places records by their meaning before the table is made (the HAR
 * reader's untimed events of a GET stream: readers/_har_order.py) needs only the kind
 * and the id key of each record's message. scan() (module.c) would make the whole row
 * (the id, the method code, the sparse columns, the call and list columns, the text);
 * this reads each record with the same message() and gives only those two, for the
 * records scan() takes: the others (a batch, anything scan() leaves to the Python path)
 * are marked, and the caller classifies them as before. */
#ifndef MCP_NOTEBOOK_KINDS_H
#define MCP_NOTEBOOK_KINDS_H
#include "envelope.h"

static const char FRAME_KINDS_DOC[] =
    "frame_kinds(buf, starts, ends) -> (bytearray, list)\n\n"
    "For each record buf[starts[k]:ends[k]] (int64 buffers): the kind code (int8, as\n"
    "protocol.vocab.KINDS) of the one row scan() makes of it, and its id key (the id's\n"
    "JSON text as scan() keys it, or None), both exactly scan()'s. A record scan() does\n"
    "not take (blank, outside the buffer, or any line scan() leaves to the Python path:\n"
    "a batch, a special id, a line that is not JSON...) gets kind -1 and None. The\n"
    "records are read with the GIL released (another thread runs meanwhile).";

static PyObject *py_frame_kinds(PyObject *self, PyObject *args) {
    Py_buffer b[3];
    PyObject *res = NULL, *kinds = NULL, *keys = NULL;
    int64_t *ids = NULL;  /* each record's id: its start and end in buf (-1: none) */
    (void)self;
    Py_ssize_t n = spans_args(args, b);
    if (n < 0) return NULL;
    const int64_t *st = (const int64_t *)b[1].buf, *en = (const int64_t *)b[2].buf;
    cptr base = (cptr)b[0].buf;
    Py_ssize_t len = b[0].len;
    kinds = PyByteArray_FromStringAndSize(NULL, n);
    ids = malloc(sizeof(int64_t) * 2 * (size_t)(n ? n : 1));
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
        ids[2 * k] = -1;
        /* as scan(): a blank record makes no row, one outside the buffer stops it */
        if (a >= z || a < 0 || z > len) {
            kind[k] = -1;
        } else if (message_gil(base + a, base + z, &m, 1, &gil)) {
            kind[k] = gil ? -2 : -1;
            again += gil;
        } else {
            kind[k] = (int8_t)m.kind;
            if (m.id_s) {
                ids[2 * k] = m.id_s - base;
                ids[2 * k + 1] = m.id_e - base;
            }
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
        if (m.id_s) {
            ids[2 * k] = m.id_s - base;
            ids[2 * k + 1] = m.id_e - base;
        }
    }
    keys = PyList_New(n);
    if (!keys) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *key = Py_None;
        if (ids[2 * k] < 0) {
            Py_INCREF(key);
        } else {  /* module.c make_id: the key is the id's text (ASCII) */
            Py_ssize_t w = (Py_ssize_t)(ids[2 * k + 1] - ids[2 * k]);
            key = PyUnicode_New(w, 127);
            if (!key) goto done;
            memcpy(PyUnicode_DATA(key), base + ids[2 * k], (size_t)w);
        }
        PyList_SET_ITEM(keys, k, key);
    }
    res = PyTuple_Pack(2, kinds, keys);
done:
    free(ids);
    Py_XDECREF(kinds);
    Py_XDECREF(keys);
    spans_release(b);
    return res;
}

#endif /* MCP_NOTEBOOK_KINDS_H */
