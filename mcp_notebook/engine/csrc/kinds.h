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
#include "docscan.h"
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

static const char FRAME_SPANS_DOC[] =
    "frame_spans(buf, starts, ends) -> (bytearray, bytes, bytearray)\n\n"
    "frame_kinds() with the keys as places: the kinds, then four int64 per record, the\n"
    "start and end of its id key's text and of its progress token key's (-1: none) in the\n"
    "third, the keys' texts end to end (copied while each message is read: span_codes()\n"
    "then reads a few MB in order, not the records' buffer). No Python object is made per\n"
    "record.";

/* The kinds (int8) and the key spans (4 int64 each) of the n records of b: read without
 * the GIL (the buffers are held); a record whose reading needs it (a number Python
 * converts: see Cur) is marked -2 and read again with it. -1 with an exception set. */
static void fk_copy(cptr base, int64_t *at, Grow *keys, int *bad) {
    for (int j = 0; j < 4; j += 2) {
        if (at[j] < 0) continue;
        int64_t from = (int64_t)keys->len;
        if (grow_put(keys, base + at[j], (size_t)(at[j + 1] - at[j]))) *bad = 1;
        at[j + 1] = from + (at[j + 1] - at[j]);
        at[j] = from;
    }
}

/* keys: where the keys' texts are copied (the spans then places in it), or NULL (places
 * in b[0]). */
static int fk_read(Py_buffer b[3], Py_ssize_t n, int8_t *kind, int64_t *ids, Grow *keys) {
    const int64_t *st = (const int64_t *)b[1].buf, *en = (const int64_t *)b[2].buf;
    cptr base = (cptr)b[0].buf;
    Py_ssize_t len = b[0].len;
    Py_ssize_t again = 0;
    int bad = 0;  /* no memory for the keys' texts */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t a = st[k], z = en[k];
        Msg m;
        int gil = 0;
        ids[4 * k] = ids[4 * k + 1] = ids[4 * k + 2] = ids[4 * k + 3] = -1;
        /* as scan(): a blank record makes no row, one outside the buffer stops it */
        if (a >= z || a < 0 || z > len) {
            kind[k] = -1;
        } else if (message_gil(base + a, base + z, &m, 1, &gil)) {
            kind[k] = gil ? -2 : -1;
            again += gil;
        } else {
            kind[k] = (int8_t)m.kind;
            fk_spans(&m, base, ids + 4 * k);
            if (keys) fk_copy(base, ids + 4 * k, keys, &bad);
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; again && k < n; k++) {
        if (kind[k] != -2) continue;
        Msg m;
        if (message(base + st[k], base + en[k], &m, 1)) {
            if (PyErr_Occurred()) return -1;
            kind[k] = -1;
            continue;
        }
        kind[k] = (int8_t)m.kind;
        fk_spans(&m, base, ids + 4 * k);
        if (keys) fk_copy(base, ids + 4 * k, keys, &bad);
        if (bad) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

/* frame_kinds (keys != 0: the keys as lists) or frame_spans (the spans as bytes). */
static PyObject *fk_entry(PyObject *args, int keys_wanted) {
    Py_buffer b[3];
    PyObject *res = NULL, *kinds = NULL, *keys = NULL, *refs = NULL, *spans = NULL;
    PyObject *texts = NULL;
    int64_t *ids = NULL;
    Grow text = {0};
    Py_ssize_t n = spans_args(args, b);
    if (n < 0) return NULL;
    kinds = PyByteArray_FromStringAndSize(NULL, n);
    if (keys_wanted) {
        ids = malloc(sizeof(int64_t) * 4 * (size_t)(n ? n : 1));
        if (!ids) PyErr_NoMemory();
    } else if ((spans = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * n)))) {
        ids = (int64_t *)PyBytes_AS_STRING(spans);
    }
    if (!kinds || !ids) goto done;
    if (fk_read(b, n, (int8_t *)PyByteArray_AS_STRING(kinds), ids,
                keys_wanted ? NULL : &text))
        goto done;
    if (!keys_wanted) {
        if ((texts = grow_bytes(&text))) res = PyTuple_Pack(3, kinds, spans, texts);
        goto done;
    }
    keys = fk_keys((cptr)b[0].buf, ids, n, 0);
    refs = keys ? fk_keys((cptr)b[0].buf, ids, n, 2) : NULL;
    if (!refs) goto done;
    res = PyTuple_Pack(3, kinds, keys, refs);
done:
    if (keys_wanted) free(ids);
    free(text.data);
    Py_XDECREF(texts);
    Py_XDECREF(spans);
    Py_XDECREF(kinds);
    Py_XDECREF(keys);
    Py_XDECREF(refs);
    spans_release(b);
    return res;
}

static PyObject *py_frame_kinds(PyObject *self, PyObject *args) {
    (void)self;
    return fk_entry(args, 1);
}

static PyObject *py_frame_spans(PyObject *self, PyObject *args) {
    (void)self;
    return fk_entry(args, 0);
}

static const char SPAN_CODES_DOC[] =
    "span_codes(parts) -> (bytes, list)\n\n"
    "The keys of frame_spans() numbered, over parts [(texts, spans), ...] (at most 64: the\n"
    "pieces of several readings, their records end to end): for the spans (start, end) in\n"
    "their part's texts at spans[4k], then those at spans[4k + 2] (int64; -1: none), the\n"
    "code of the key's text, 0, 1, ... in\n"
    "the order each text first comes, -1 for none (2n int64: the id keys' codes, then the\n"
    "progress tokens'), and the text of each code as frame_kinds() makes a key (str).";

static inline uint64_t sc_mix(uint64_t h) {
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    return h ^ (h >> 31);
}

/* A key's hash. A key of up to 18 digits (the usual ids: 1, 2, 3... each met about when
 * the ones next to it are): its value's bits above the last three mixed, those three kept
 * as they are, so eight ids in a row share a cache line of the table and the next eight
 * are elsewhere (no long run of used slots for other keys to walk). Any other key: its
 * bytes read eight at a time (the last word padded with zeros), mixed with its length. */
static inline uint64_t sc_hash(cptr p, size_t n) {
    if (n && n <= 18) {
        uint64_t v = 0;
        size_t i = 0;
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) v = v * 10 + (uint64_t)(p[i] - '0');
        if (i == n) return (sc_mix(v >> 3) << 3) | (v & 7);
    }
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    while (n) {
        uint64_t w = 0;
        size_t k = n < 8 ? n : 8;
        memcpy(&w, p, k);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        p += k;
        n -= k;
    }
    h *= 0x94D049BB133111EBULL;
    return h ^ (h >> 29);
}

/* The keys met so far: a table of slots (the code + 1 of a key, 0: free; the top bits of
 * its hash beside it, so a probe reads one slot), each code's hash and where its text is
 * in `text` (a copy of each distinct text, end to end: a key met again is compared with
 * it there, not at its first place in the buffer). */
typedef struct {
    uint64_t *slot;   /* (hash >> 32) << 32 | (code + 1) */
    size_t cap;       /* a power of two */
    uint64_t *hash;   /* by code */
    int64_t *at;      /* by code: start in text, then end: 2 per code */
    unsigned char *text;
    size_t n, n_cap, text_len, text_cap;
} ScTable;

static int sc_grow_slots(ScTable *t) {
    size_t cap = t->cap ? 2 * t->cap : 1 << 16;
    uint64_t *slot = calloc(cap, sizeof *slot);
    if (!slot) return -1;
    for (size_t c = 0; c < t->n; c++) {
        size_t i = (size_t)t->hash[c] & (cap - 1);
        while (slot[i]) i = (i + 1) & (cap - 1);
        slot[i] = (t->hash[c] >> 32 << 32) | (uint64_t)(c + 1);
    }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    return 0;
}

/* The code of the key p[0:n] (a new one if it is new), or -1 (no memory). */
static int64_t sc_code(ScTable *t, cptr p, size_t n) {
    uint64_t h = sc_hash(p, n), tag = h >> 32 << 32;
    size_t i = (size_t)h & (t->cap - 1);
    for (;;) {
        uint64_t s = t->slot[i];
        if (!s) break;
        if ((s >> 32 << 32) == tag) {
            size_t c = (size_t)(s & 0xFFFFFFFFu) - 1;
            if (t->hash[c] == h && (size_t)(t->at[2 * c + 1] - t->at[2 * c]) == n &&
                !memcmp(t->text + t->at[2 * c], p, n))
                return (int64_t)c;
        }
        i = (i + 1) & (t->cap - 1);
    }
    if (t->n == t->n_cap) {  /* room for the new code */
        size_t cap = t->n_cap ? 2 * t->n_cap : 1 << 14;
        uint64_t *hash = realloc(t->hash, cap * sizeof *hash);
        if (hash) t->hash = hash;
        int64_t *at = realloc(t->at, 2 * cap * sizeof *at);
        if (at) t->at = at;
        if (!hash || !at) return -1;
        t->n_cap = cap;
    }
    if (t->text_len + n > t->text_cap) {
        size_t cap = t->text_cap ? 2 * t->text_cap : 1 << 16;
        while (cap < t->text_len + n) cap *= 2;
        unsigned char *text = realloc(t->text, cap);
        if (!text) return -1;
        t->text = text;
        t->text_cap = cap;
    }
    size_t c = t->n++;
    memcpy(t->text + t->text_len, p, n);
    t->at[2 * c] = (int64_t)t->text_len;
    t->at[2 * c + 1] = (int64_t)(t->text_len + n);
    t->text_len += n;
    t->hash[c] = h;
    t->slot[i] = tag | (uint64_t)(c + 1);
    if (2 * t->n > t->cap && sc_grow_slots(t)) return -1;  /* at most half full */
    return (int64_t)c;
}

#define SC_PARTS 64  /* the most parts span_codes takes */

static PyObject *py_span_codes(PyObject *self, PyObject *args) {
    Py_buffer bb[SC_PARTS], sb[SC_PARTS];
    PyObject *res = NULL, *codes = NULL, *texts = NULL, *parts;
    ScTable t;
    Py_ssize_t np_ = 0, n = 0, held = 0;
    memset(&t, 0, sizeof t);
    (void)self;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &parts)) return NULL;
    np_ = PyList_GET_SIZE(parts);
    if (np_ > SC_PARTS) {
        PyErr_SetString(PyExc_ValueError, "more parts than span_codes takes");
        return NULL;
    }
    for (; held < np_; held++) {
        PyObject *o0, *o1;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(parts, held), "OO", &o0, &o1)) goto done;
        if (PyObject_GetBuffer(o0, &bb[held], PyBUF_SIMPLE)) goto done;
        if (PyObject_GetBuffer(o1, &sb[held], PyBUF_SIMPLE)) {
            PyBuffer_Release(&bb[held]);
            goto done;
        }
        n += sb[held].len / 32;
    }
    codes = PyBytes_FromStringAndSize(NULL, 16 * n);
    if (!codes) goto done;
    if (sc_grow_slots(&t)) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t *out = (int64_t *)PyBytes_AS_STRING(codes);
    int bad = 0;  /* 1: a span outside its texts, 2: no memory */
    Py_BEGIN_ALLOW_THREADS
    for (int off = 0; off < 4 && !bad; off += 2) {
        int64_t *c = out + (off / 2) * n;
        for (Py_ssize_t j = 0; j < np_ && !bad; j++) {
            const int64_t *ids = (const int64_t *)sb[j].buf;
            cptr base = (cptr)bb[j].buf;
            Py_ssize_t m = sb[j].len / 32;
            for (Py_ssize_t k = 0; k < m; k++, c++) {
                int64_t a = ids[4 * k + off], z = ids[4 * k + off + 1];
                *c = -1;
                if (a < 0) continue;
                if (z < a || z > bb[j].len) {
                    bad = 1;
                    break;
                }
                if ((*c = sc_code(&t, base + a, (size_t)(z - a))) < 0) {
                    bad = 2;
                    break;
                }
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        if (bad == 1) PyErr_SetString(PyExc_ValueError, "a span outside its texts");
        else PyErr_NoMemory();
        goto done;
    }
    if (!(texts = PyList_New((Py_ssize_t)t.n))) goto done;
    for (size_t k = 0; k < t.n; k++) {
        Py_ssize_t w = (Py_ssize_t)(t.at[2 * k + 1] - t.at[2 * k]);
        PyObject *s = PyUnicode_New(w, 127);
        if (!s) goto done;
        memcpy(PyUnicode_DATA(s), t.text + t.at[2 * k], (size_t)w);
        PyList_SET_ITEM(texts, (Py_ssize_t)k, s);
    }
    res = PyTuple_Pack(2, codes, texts);
done:
    free(t.slot);
    free(t.hash);
    free(t.at);
    free(t.text);
    Py_XDECREF(codes);
    Py_XDECREF(texts);
    for (Py_ssize_t j = 0; j < held; j++) {
        PyBuffer_Release(&bb[j]);
        PyBuffer_Release(&sb[j]);
    }
    return res;
}

#endif /* MCP_NOTEBOOK_KINDS_H */
