/* mcp_notebook.engine._native: the envelope of the usual JSON-RPC line, found in C.
 *
 * scan() reads the lines of a block, one after the other, and for each line of the
 * usual shape appends its row to the lists of a fast.rows.Rows: the same values
 * fast.message.scan gives after a msgspec decode. It stops at the first line it does
 * not take (anything malformed or unusual: a lone surrogate \u escape, a member name
 * or a tap record spelled with \u escapes, a null or float id,
 * a batch, a special method, params with a member the tables read, ...) and returns
 * its index: the caller reads that line by the Python path and calls again after it.
 * So this code only ever decides lines where its answer is the Python path's, and
 * the Python path (and through it the reference reader) decides every other line.
 *
 * The JSON check is strict (RFC 8259): a line is taken only when the whole of it is
 * one valid JSON object with valid UTF-8, nothing after it but whitespace.
 *
 * codes() numbers values as fast.rows.Codes.codes(values, canon=True, paired=...).
 *
 * pair() is the pairing walk (pair.h) for engine/pairing.py.
 *
 * The parts: json.h (checking), utf8.h, envelope.h (the message), tap.h (tap records);
 * this file appends the rows and holds the Python entry points.
 */
#include "tap.h"
#include "pair.h"
#include "docrecorder.h"
#include "har.h"
#include "harscan.h"
#include "claude.h"
#include "scanpipe.h"
#include "kinds.h"

#define LIST_CACHE 16      /* list texts remembered per scan() call */
#define CODE_CACHE 64      /* call column strings remembered per scan() call */
#define CODE_TEXT 64       /* ... of at most this many bytes */
#define SESSION_CACHE 32  /* session names remembered per scan() call */
#define SESSION_NAME 64   /* ... of at most this many bytes */
#define VER_CACHE 8       /* version strings remembered per scan() call */
#define VER_TEXT 48       /* ... of at most this many bytes */
#define METH_CACHE 64     /* method names remembered per scan() call */
#define METH_TEXT 48      /* ... of at most this many bytes */

/* ---- the rows ---- */

/* The kind, method code and line of the rows of one scan() call, gathered in C and added
 * to the Rows' arrays (array.array 'b', 'i', 'q') at its end: no int object per row. */
typedef struct {
    int8_t *kind;
    int32_t *method;
    int64_t *line;
    Py_ssize_t n, cap;
} Pending;

/* A growing C array of 8-byte items (int64 rows, float64 values) of one scan() call, added
 * to an array.array ('q' or 'd') at its end. */
typedef struct {
    union { int64_t *i; double *d; void *p; } a;
    Py_ssize_t n, cap;
} Items;

static int items_push(Items *t, int64_t i, double d, int is_double) {
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap ? 2 * t->cap : 1024;
        void *p = realloc(t->a.p, 8 * (size_t)cap);
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        t->a.p = p;
        t->cap = cap;
    }
    if (is_double) t->a.d[t->n++] = d;
    else t->a.i[t->n++] = i;
    return 0;
}

/* arr.frombytes(the items) (not when skip: an exception is set) and free them; -1 on
 * failure. */
static int items_flush(Items *t, PyObject *arr, int skip) {
    int bad = 0;
    if (t->n && !skip) {
        PyObject *r = PyObject_CallMethod(arr, "frombytes", "y#", (const char *)t->a.p,
                                          t->n * 8);
        bad = !r;
        Py_XDECREF(r);
    }
    free(t->a.p);
    t->a.p = NULL;
    t->n = t->cap = 0;
    return bad ? -1 : 0;
}

static int pending_push(Pending *p, int kind, int32_t method, int64_t line) {
    if (p->n == p->cap) {
        Py_ssize_t cap = p->cap ? 2 * p->cap : 4096;
        int8_t *k = realloc(p->kind, (size_t)cap);
        if (k) p->kind = k;
        int32_t *m = k ? realloc(p->method, sizeof(int32_t) * (size_t)cap) : NULL;
        if (m) p->method = m;
        int64_t *l = m ? realloc(p->line, sizeof(int64_t) * (size_t)cap) : NULL;
        if (!l) {
            PyErr_NoMemory();
            return -1;
        }
        p->line = l;
        p->cap = cap;
    }
    p->kind[p->n] = (int8_t)kind;
    p->method[p->n] = method;
    p->line[p->n++] = line;
    return 0;
}

/* ---- texts met again within one scan() call ---- */

/* A request's id text comes back in its response, a progress token in each of its
 * notifications: the str (and the id) of such a text are made once per call and shared,
 * where each row made its own before (the table's codes() then finds the first-seen object
 * itself: its hash is cached, the dict's compare is by identity). Direct-mapped slots by a
 * hash of the bytes; a slot taken by another text is overwritten, so the cache only ever
 * saves work, never changes a value. Only ASCII texts (ids always are: envelope.h), compared
 * byte for byte with the str's own data. */
#define TEXT_SLOTS_MAX 4096

typedef struct {
    uint64_t h;
    PyObject *str;  /* a compact ASCII str (a reference), NULL: empty */
    PyObject *val;  /* what it stands for (a reference; NULL: the str itself) */
} TextSlot;

typedef struct {
    TextSlot *slot;
    Py_ssize_t mask;  /* slots - 1; -1: none allocated yet */
    Py_ssize_t want;  /* how many slots to allocate at the first use */
} TextCache;

static inline uint64_t text_hash(cptr s, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, (size_t)n);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

/* The slot of a text (NULL: the cache could not be allocated: go without it). */
static TextSlot *text_slot(TextCache *c, cptr s, Py_ssize_t n, uint64_t *h) {
    if (c->mask < 0) {
        c->slot = calloc((size_t)c->want, sizeof(TextSlot));
        if (!c->slot) return NULL;
        c->mask = c->want - 1;
    }
    *h = text_hash(s, n);
    return &c->slot[(*h >> 7) & (uint64_t)c->mask];
}

/* Whether the slot holds this text. */
static inline int text_hit(const TextSlot *t, uint64_t h, cptr s, Py_ssize_t n) {
    return t->str && t->h == h && PyUnicode_GET_LENGTH(t->str) == n &&
           !memcmp(PyUnicode_DATA(t->str), s, (size_t)n);
}

/* Put str (and val, NULL: none) in the slot, in place of what it held (new references
 * taken). */
static void text_put(TextSlot *t, uint64_t h, PyObject *str, PyObject *val) {
    if (!PyUnicode_IS_COMPACT_ASCII(str)) return;
    Py_XDECREF(t->str);
    Py_XDECREF(t->val);
    t->h = h;
    t->str = Py_NewRef(str);
    t->val = Py_XNewRef(val);
}

static void text_free(TextCache *c) {
    for (Py_ssize_t k = 0; k <= c->mask; k++) {
        Py_XDECREF(c->slot[k].str);
        Py_XDECREF(c->slot[k].val);
    }
    free(c->slot);
    c->slot = NULL;
    c->mask = -1;
}

/* A cache of about one slot per two lines of the call, a power of two up to the maximum. */
static void text_cache_init(TextCache *c, Py_ssize_t lines) {
    Py_ssize_t want = 16;
    while (want < TEXT_SLOTS_MAX && want < lines / 2) want *= 2;
    c->slot = NULL;
    c->mask = -1;
    c->want = want;
}

typedef struct {
    PyObject *kind, *id, *id_key, *method, *line;  /* arrays 'b', lists, lists, 'i', 'q' */
    Pending pend;                                   /* rows not yet in kind, method, line */
    Py_ssize_t n0;                                  /* the rows in them when the call began */
    PyObject *code_d, *emsg_d, *tool_d, *ver_d;    /* dicts row -> value */
    PyObject *ref_rows, *ref_vals, *ref_intern;    /* array 'q', list, dict */
    PyObject *prog_rows, *prog_vals, *empty_rows;  /* arrays 'q', 'd', 'q' */
    Items ref_add, prog_add, prog_val_add, empty_add;  /* their rows not yet added */
    PyObject *meth_index, *meth_values;            /* Codes of the methods */
    Py_ssize_t base;
    /* the call column (NULL: not kept), packed: fast.rows.Rows.call_* */
    PyObject *call_recs;                /* bytearray of int64 records (CALL_REC) */
    PyObject *call_blob;                /* bytearray: the arguments texts end to end */
    PyObject *call_index, *call_strs;   /* dict str -> code, list of the strs by code */
    cptr buf0;                          /* the block's first byte ... */
    long long file_base;                /* ... at this offset of the file (-1: no file) */
    int in_frame;                       /* tap records: texts are read from the frame */
    PyObject *list_rows, *list_vals, *list_intern;  /* the list column (NULL: not kept) */
    /* the version strings of this call: a capture with 2026-style _meta names a version
     * on every request, and a few distinct ones; each row takes a reference to one str */
    struct { char text[VER_TEXT]; Py_ssize_t n; PyObject *str; } ver[VER_CACHE];
    int nver;
    /* the list texts of this call (a new reference each): a server answers its lists
     * alike in every session, so a text is met again and again; compared byte for byte */
    PyObject *ltext[LIST_CACHE];
    int nltext, lnext;
    /* the call column's codes of this call by the text's bytes (names and uris repeat) */
    struct { char text[CODE_TEXT]; Py_ssize_t n; Py_ssize_t code; } ccode[CODE_CACHE];
    int nccode;
    /* the method codes of this call by the name's bytes */
    struct { char text[METH_TEXT]; Py_ssize_t n; int32_t code; } meth[METH_CACHE];
    int nmeth;
    TextCache ids;   /* id texts -> their key str and id */
    TextCache refs;  /* progress tokens and cancelled ids -> their interned str */
} Out;

/* The str of a span's text (escapes undone). */
static PyObject *span_str(cptr s, cptr e, int esc, Scratch *tmp) {
    size_t n = (size_t)(e - s);
    if (!esc) return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, "strict");
    if (reserve(tmp, n + 1)) return PyErr_NoMemory();
    return PyUnicode_DecodeUTF8((const char *)tmp->data, (Py_ssize_t)unescape(s, e, tmp->data),
                                "strict");
}

/* The str of a version span, shared by every row of this call that names the same text
 * (a new reference). */
static PyObject *version_str(Out *o, const Span *v, Scratch *tmp) {
    Py_ssize_t n = v->e - v->s;
    if (v->esc || n > VER_TEXT) return span_str(v->s, v->e, v->esc, tmp);
    for (int k = 0; k < o->nver; k++)
        if (o->ver[k].n == n && !memcmp(o->ver[k].text, v->s, (size_t)n))
            return Py_NewRef(o->ver[k].str);
    PyObject *str = span_str(v->s, v->e, 0, tmp);
    if (str && o->nver < VER_CACHE) {
        memcpy(o->ver[o->nver].text, v->s, (size_t)n);
        o->ver[o->nver].n = n;
        o->ver[o->nver++].str = Py_NewRef(str);
    }
    return str;
}

/* d[row] = v (v's reference is taken over); -1 on failure. */
static int set_row(PyObject *d, Py_ssize_t r, PyObject *v) {
    if (!v) return -1;
    PyObject *row = PyLong_FromSsize_t(r);
    int bad = !row || PyDict_SetItem(d, row, v);
    Py_XDECREF(row);
    Py_DECREF(v);
    return bad ? -1 : 0;
}

/* rows.append(r), vals.append(v) (v's reference is taken over); -1 on failure. */
static int add_sparse(PyObject *rows, PyObject *vals, Py_ssize_t r, PyObject *v) {
    if (!v) return -1;
    PyObject *row = PyLong_FromSsize_t(r);
    int bad = !row || PyList_Append(rows, row) || PyList_Append(vals, v);
    Py_XDECREF(row);
    Py_DECREF(v);
    return bad ? -1 : 0;
}

/* The methods whose requests the call column keeps (CALL_METHODS, vocab.h). */
static int call_method(cptr a, cptr z) {
    size_t n = (size_t)(z - a);
    for (int k = 0; k < N_CALL_METHODS; k++)
        if (n == strlen(CALL_METHODS[k]) && !memcmp(a, CALL_METHODS[k], n)) return 1;
    return 0;
}

/* call_code() by the call column's dict (-2 with an exception set on failure). */
static Py_ssize_t call_code_of(Out *o, const Span *v, Scratch *tmp) {
    PyObject *s = span_str(v->s, v->e, v->esc, tmp);
    if (!s) return -2;
    PyObject *got = PyDict_GetItemWithError(o->call_index, s);  /* borrowed */
    Py_ssize_t code;
    if (got) {
        code = PyLong_AsSsize_t(got);
    } else if (PyErr_Occurred()) {
        code = -2;
    } else {
        code = PyList_GET_SIZE(o->call_strs);
        PyObject *c = PyLong_FromSsize_t(code);
        if (!c || PyDict_SetItem(o->call_index, s, c) || PyList_Append(o->call_strs, s))
            code = -2;
        Py_XDECREF(c);
    }
    Py_DECREF(s);
    return code;
}

/* The code of a string member of params (-1 when absent): its text's index in the
 * call column's strs, given once per distinct text. */
static Py_ssize_t call_code(Out *o, const Span *v, Scratch *tmp) {
    if (!v->s) return -1;
    Py_ssize_t n = v->e - v->s;
    int cacheable = !v->esc && n <= CODE_TEXT;
    if (cacheable)
        for (int k = 0; k < o->nccode; k++)
            if (o->ccode[k].n == n && !memcmp(o->ccode[k].text, v->s, (size_t)n))
                return o->ccode[k].code;
    Py_ssize_t code = call_code_of(o, v, tmp);
    if (code >= 0 && cacheable && o->nccode < CODE_CACHE) {
        memcpy(o->ccode[o->nccode].text, v->s, (size_t)n);
        o->ccode[o->nccode].n = n;
        o->ccode[o->nccode++].code = code;
    }
    return code;
}

/* Append n bytes to a bytearray (its growth is amortised: PyByteArray_Resize
 * over-allocates). */
static int append_bytes(PyObject *ba, const void *p, Py_ssize_t n) {
    Py_ssize_t at = PyByteArray_GET_SIZE(ba);
    if (PyByteArray_Resize(ba, at + n)) return -1;
    memcpy(PyByteArray_AS_STRING(ba) + at, p, (size_t)n);
    return 0;
}

/* The call column's entry of request m, as fast.rows.Rows.call_recs holds it: one record
 * of CALL_REC int64 (row; the codes of its name and uri, -1: absent; flags: task given 1,
 * cursor given 2, the first byte of the arguments text << 8 (0: absent); where that text
 * is: [start, end) of the file when the block is the file's own bytes (source 0), of the
 * blob, where it is appended (source -1), or [0, its length) when it is read again from
 * the frame's text (source -2: a tap record of a file); 1 when m is no request the column keeps
 * (not such a method, or a name or uri that is no string: the conversation rules read
 * its text). */
#define CALL_REC 7
static int add_call(Out *o, const Msg *m, Py_ssize_t r, Scratch *tmp) {
    if (!o->call_recs || m->kind != K_REQUEST || !m->meth_s || !call_method(m->meth_s, m->meth_e))
        return 1;
    if ((m->pname.s && !m->pname_str) || (m->puri.s && !m->puri_str)) return 1;
    Py_ssize_t name = call_code(o, &m->pname, tmp);
    Py_ssize_t uri = name > -2 ? call_code(o, &m->puri, tmp) : -2;
    if (uri < -1) return -1;
    int64_t a = PyByteArray_GET_SIZE(o->call_blob), z = a, src = -1, first = 0;
    if (m->pargs.s) {
        Py_ssize_t n = m->pargs.e - m->pargs.s;
        first = n > 0 ? *m->pargs.s : 0;
        /* prompts/get: its arguments are read for every call (the prompt-arguments rule),
         * and are small: copied, as when there is no file; the rest (tools/call: read
         * only where a schema judges them) stay where they are */
        int copy = KEY_IS(m->meth_s, m->meth_e, "prompts/get") ||
                   (o->file_base < 0 && !o->in_frame);
        if (copy) {
            if (append_bytes(o->call_blob, m->pargs.s, n)) return -1;
            z = a + n;
        } else if (o->file_base >= 0) {  /* the text stays in the file */
            a = o->file_base + (int64_t)(m->pargs.s - o->buf0);
            z = a + n;
            src = 0;
        } else {                   /* in the frame's text (a tap record's raw member): */
            a = 0;                 /* read from there when asked; its length kept */
            z = n;
            src = -2;
        }
    }
    int64_t rec[CALL_REC] = {(int64_t)r, (int64_t)name, (int64_t)uri,
                             (m->ptask ? 1 : 0) | (m->pcursor ? 2 : 0) | (first << 8), a, z,
                             src};
    return append_bytes(o->call_recs, rec, (Py_ssize_t)sizeof rec);
}

/* The bytes of a list text, one object per distinct text (a new reference). */
static PyObject *list_text(Out *o, cptr s, cptr e) {
    Py_ssize_t n = e - s;
    for (int k = 0; k < o->nltext; k++)
        if (PyBytes_GET_SIZE(o->ltext[k]) == n && !memcmp(PyBytes_AS_STRING(o->ltext[k]), s, (size_t)n))
            return Py_NewRef(o->ltext[k]);
    PyObject *text = PyBytes_FromStringAndSize((const char *)s, n);
    PyObject *same = text ? PyDict_SetDefault(o->list_intern, text, text) : NULL;  /* borrowed */
    Py_XDECREF(text);
    if (!same) return NULL;
    if (o->nltext < LIST_CACHE) {
        o->ltext[o->nltext++] = Py_NewRef(same);
    } else {  /* the oldest makes room */
        int at = o->lnext++ % LIST_CACHE;
        Py_DECREF(o->ltext[at]);
        o->ltext[at] = Py_NewRef(same);
    }
    return Py_NewRef(same);
}

static PyObject *LISTED_KEY[N_LISTED];  /* LISTED as interned str */

/* The list column's value of result m: {member: its JSON text as bytes} of the LISTED
 * members it has (one bytes object per distinct text: a server answers its lists alike
 * in every session); 1 when it has none. */
static int add_listed(Out *o, const Msg *m, Py_ssize_t r) {
    if (!o->list_rows || m->kind != K_RESULT) return 1;
    PyObject *d = NULL;
    for (int k = 0; k < N_LISTED; k++) {
        const Span *v = &m->rlist[k];
        if (!v->s) continue;
        if (!d && !(d = PyDict_New())) return -1;
        PyObject *same = list_text(o, v->s, v->e);
        int bad = !same || PyDict_SetItem(d, LISTED_KEY[k], same);
        Py_XDECREF(same);
        if (bad) {
            Py_DECREF(d);
            return -1;
        }
    }
    if (!d) return 1;
    return add_sparse(o->list_rows, o->list_vals, r, d) ? -1 : 0;
}

static int make_id(const Msg *m, PyObject **key, PyObject **idv);

/* The key str and the id of an id's text (new references); -1 on failure. The same text
 * met again in this call gives the same two objects. */
static int new_id(Out *o, const Msg *m, PyObject **key, PyObject **idv) {
    Py_ssize_t n = m->id_e - m->id_s;
    uint64_t h = 0;
    TextSlot *t = text_slot(&o->ids, m->id_s, n, &h);
    if (t && text_hit(t, h, m->id_s, n)) {
        *key = Py_NewRef(t->str);
        *idv = Py_NewRef(t->val);
        return 0;
    }
    if (make_id(m, key, idv)) return -1;
    if (t) text_put(t, h, *key, *idv);
    return 0;
}

/* The key str and the id of an id's text, made anew (new references); -1 on failure. */
static int make_id(const Msg *m, PyObject **key, PyObject **idv) {
    Py_ssize_t n = m->id_e - m->id_s;
    /* an id's text is ASCII (envelope.h: a string id of other bytes is the Python path's) */
    *key = PyUnicode_New(n, 127);
    if (!*key) return -1;
    memcpy(PyUnicode_DATA(*key), m->id_s, (size_t)n);
    Py_ssize_t neg = *m->id_s == '-';
    if (m->id_str) {
        *idv = PyUnicode_Substring(*key, 1, n - 1);
    } else if (n - neg <= 18) {  /* digits only (an integer, checked): fits an int64 */
        long long v = 0;
        for (Py_ssize_t k = neg; k < n; k++) v = v * 10 + (m->id_s[k] - '0');
        *idv = PyLong_FromLongLong(neg ? -v : v);
    } else {
        char small[64];
        char *digits = n < 64 ? small : malloc((size_t)n + 1);
        if (!digits) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(digits, m->id_s, (size_t)n);
        digits[n] = 0;
        *idv = PyLong_FromString(digits, NULL, 10);
        if (digits != small) free(digits);
    }
    return *idv ? 0 : -1;
}

/* The method code of a name: cached by its bytes for this call, else from the Codes' dict
 * (a new name is added); -2 on failure. */
static int32_t method_code(Out *o, cptr s, cptr e) {
    Py_ssize_t n = e - s;
    for (int k = 0; k < o->nmeth; k++)
        if (o->meth[k].n == n && !memcmp(o->meth[k].text, s, (size_t)n))
            return o->meth[k].code;
    PyObject *name = PyUnicode_DecodeUTF8((const char *)s, n, "strict");
    if (!name) return -2;
    long code;
    PyObject *mc = PyDict_GetItemWithError(o->meth_index, name);  /* borrowed */
    if (mc) {
        code = PyLong_AsLong(mc);
    } else if (PyErr_Occurred()) {
        code = -2;
    } else {
        code = (long)PyList_GET_SIZE(o->meth_values);
        PyObject *co = PyLong_FromLong(code);
        if (!co || PyDict_SetItem(o->meth_index, name, co) ||
            PyList_Append(o->meth_values, name)) code = -2;
        Py_XDECREF(co);
    }
    Py_DECREF(name);
    if (code < 0 || code > INT32_MAX) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_OverflowError, "method code out of range");
        return -2;
    }
    if (o->nmeth < METH_CACHE && n <= METH_TEXT) {
        memcpy(o->meth[o->nmeth].text, s, (size_t)n);
        o->meth[o->nmeth].n = n;
        o->meth[o->nmeth++].code = (int32_t)code;
    }
    return (int32_t)code;
}

/* The interned str of a progress token's or cancelled id's key text (a new reference; NULL
 * on failure): one str per text in ref_intern, found again by its bytes in this call. */
static PyObject *ref_str(Out *o, const Span *ref) {
    Py_ssize_t n = ref->e - ref->s;
    uint64_t h = 0;
    TextSlot *t = text_slot(&o->refs, ref->s, n, &h);
    if (t && text_hit(t, h, ref->s, n)) return Py_NewRef(t->str);
    PyObject *str = PyUnicode_FromStringAndSize((const char *)ref->s, n);
    if (!str) return NULL;
    PyObject *same = PyDict_SetDefault(o->ref_intern, str, str);  /* borrowed */
    Py_XINCREF(same);
    Py_DECREF(str);
    if (same && t) text_put(t, h, same, NULL);
    return same;
}

/* The row of message m on line j; -1 with an exception set on failure. */
static int add_row(Out *o, const Msg *m, long long j, Scratch *tmp) {
    PyObject *idv = NULL, *key = NULL;
    Py_ssize_t r = o->base + o->n0 + o->pend.n;
    if (m->id_s) {
        if (new_id(o, m, &key, &idv)) goto fail;
    } else {
        idv = Py_NewRef(Py_None);
        key = Py_NewRef(Py_None);
    }
    int32_t mc = m->meth_s ? method_code(o, m->meth_s, m->meth_e) : -1;
    if (mc == -2) goto fail;
    if (m->kind == K_ERROR) {
        if (set_row(o->code_d, r, PyLong_FromLongLong(m->code)) ||
            set_row(o->emsg_d, r, span_str(m->msg.s, m->msg.e, m->msg.esc, tmp))) goto fail;
    }
    if (m->tool && set_row(o->tool_d, r, Py_NewRef(Py_True))) goto fail;
    if (m->kind == K_RESULT && !m->full) {  /* a result with no member but _meta */
        if (items_push(&o->empty_add, r, 0, 0)) goto fail;
    }
    if (m->ref.s) {
        PyObject *ref = ref_str(o, &m->ref);
        int bad = !ref || PyList_Append(o->ref_vals, ref) || items_push(&o->ref_add, r, 0, 0);
        Py_XDECREF(ref);
        if (bad) goto fail;
    }
    if (m->prog_set && (items_push(&o->prog_add, r, 0, 0) ||
                        items_push(&o->prog_val_add, 0, m->prog, 1))) goto fail;
    if (add_call(o, m, r, tmp) < 0 || add_listed(o, m, r) < 0) goto fail;
    if (m->ver.s && set_row(o->ver_d, r, version_str(o, &m->ver, tmp))) goto fail;
    if (PyList_Append(o->id, idv) || PyList_Append(o->id_key, key) ||
        pending_push(&o->pend, m->kind, mc, (int64_t)j)) goto fail;
    Py_DECREF(idv);
    Py_DECREF(key);
    return 0;
fail:
    Py_XDECREF(idv);
    Py_XDECREF(key);
    return -1;
}

/* The row of a tap record's stderr line: kind stderr, no id, no method. */
static int add_stderr_row(Out *o, long long j) {
    return PyList_Append(o->id, Py_None) || PyList_Append(o->id_key, Py_None) ||
           pending_push(&o->pend, K_STDERR, -1, (int64_t)j) ? -1 : 0;
}

/* Check that a is an array.array of items of this size, signed integers (or doubles where
 * floating); its length in *n. */
static int row_array(PyObject *a, Py_ssize_t item, int floating, Py_ssize_t *n) {
    Py_buffer v;
    if (PyObject_GetBuffer(a, &v, PyBUF_ND | PyBUF_FORMAT)) return -1;
    const char *f = v.format ? v.format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    int ok = v.itemsize == item && v.ndim == 1 &&
             (floating ? !strcmp(f, "d") : (f[0] && !f[1] && strchr("bhilq", f[0]) != NULL));
    *n = v.len / (v.itemsize ? v.itemsize : 1);
    PyBuffer_Release(&v);
    if (!ok) {
        PyErr_SetString(PyExc_TypeError, "kind, method and line must be arrays of int8, "
                        "int32 and int64 items; ref_rows, prog_rows, prog_vals and empty_rows "
                        "of int64, int64, float64 and int64");
        return -1;
    }
    return 0;
}

/* Add the pending rows' kind, method and line to the arrays (array.frombytes); free them. */
static int pending_flush(Out *o) {
    Pending *p = &o->pend;
    PyObject *arrays[3] = {o->kind, o->method, o->line};
    void *data[3] = {p->kind, p->method, p->line};
    static const Py_ssize_t item[3] = {sizeof(int8_t), sizeof(int32_t), sizeof(int64_t)};
    int bad = 0;
    for (int k = 0; k < 3 && p->n && !bad; k++) {
        PyObject *r = PyObject_CallMethod(arrays[k], "frombytes", "y#", (const char *)data[k],
                                          p->n * item[k]);
        bad = !r;
        Py_XDECREF(r);
    }
    for (int k = 0; k < 3; k++) free(data[k]);
    p->kind = NULL;
    p->method = NULL;
    p->line = NULL;
    p->n = p->cap = 0;
    /* the sparse rows (each flushed and freed even after a failure) */
    bad |= items_flush(&o->ref_add, o->ref_rows, bad);
    bad |= items_flush(&o->prog_add, o->prog_rows, bad);
    bad |= items_flush(&o->prog_val_add, o->prog_vals, bad);
    bad |= items_flush(&o->empty_add, o->empty_rows, bad);
    return bad ? -1 : 0;
}

/* ---- NDJSON lines: read without the GIL (scanpipe.h), rows made with it ---- */

/* The rows of batch b, then of the line it halted at when that line only needs the GIL
 * (read again with it here); returns the index of the next line to read. *end is set
 * when the scan ends (a line not taken: its index is returned; or a row that could not
 * be made: *failed set, an exception set). */
static Py_ssize_t batch_rows(Out *o, const Lines *L, const Batch *b, long long line0,
                             Scratch *tmp, int *failed, int *end) {
    for (Py_ssize_t k = 0; k < b->n; k++)
        if (add_row(o, &b->ms[k], line0 + b->at[k], tmp)) {
            *failed = *end = 1;
            return b->from;
        }
    Py_ssize_t i = b->stop;
    if (b->halted) {
        Msg m;
        if (!b->gil || message(L->base + L->st[i], L->base + L->en[i], &m, 1)) {
            *end = 1;  /* not taken */
            return i;
        }
        if (add_row(o, &m, line0 + i, tmp)) {
            *failed = *end = 1;
            return i;
        }
        i++;
    }
    return i;
}

/* scan_lines() with a worker thread sharing the reading of the batches (scanpipe.h). */
static Py_ssize_t scan_piped(Out *o, Pipe *p, Py_ssize_t i, long long line0, Scratch *tmp,
                             int *failed) {
    const Lines *L = &p->L;
    for (Py_ssize_t k = 0; k < p->nbatch; k++) {
        Py_ssize_t a, z;
        pipe_range(p, k, &a, &z);
        const Batch *b = pipe_take(p, k);
        if (b->from != i || a != i) {
            PyErr_SetString(PyExc_SystemError, "scan: a batch read by the worker does not "
                            "follow the rows made (please report it)");
            *failed = 1;
            break;
        }
        int end = 0;
        i = batch_rows(o, L, b, line0, tmp, failed, &end);
        while (!end && i < z) {  /* after a line that needed the GIL: the rest, here */
            Py_BEGIN_ALLOW_THREADS
            read_batch(L, &p->own, i, z);
            Py_END_ALLOW_THREADS
            i = batch_rows(o, L, &p->own, line0, tmp, failed, &end);
        }
        if (end) break;
        pipe_release(p, k);
    }
    pipe_stop(p);
    return i;
}

/* The rows of lines i..L->hi-1 (blank ones skipped) until the first line not taken;
 * returns its index (hi when all were taken). The lines are read in batches with the GIL
 * released (message_gil() touches no Python object: the buffers are held by the caller,
 * and a number that needs Python's conversion makes the line be read again with the
 * GIL), their rows made with the GIL held. With `pipe` (1: from PIPE_MIN lines on; 2: any
 * number, for tests; 3: as where no thread can be started, for tests) a worker thread reads batches ahead while this thread makes the
 * rows (scanpipe.h); else this thread reads each batch, and another Python thread runs
 * meanwhile. *failed is set when a row could not be made (an exception is
 * set). */
static Py_ssize_t scan_lines(Out *o, const Lines *L, Py_ssize_t i, long long line0,
                             Scratch *tmp, int *failed, int pipe) {
    if (i >= L->hi) return i;
    if (pipe > 0 && L->hi - i >= (pipe > 1 ? 1 : PIPE_MIN)) {
        Pipe *p = pipe < 3 ? pipe_start(L, i) : NULL;  /* 3: as if none could start */
        if (p) {
            pipe_runs++;
            return scan_piped(o, p, i, line0, tmp, failed);
        }
        pipe_fallbacks++;  /* no thread here, or none could be started: on this one */
    }
    Py_ssize_t want = L->hi - i < BATCH ? L->hi - i : BATCH;  /* lines per batch */
    Batch b;
    b.ms = malloc(sizeof(Msg) * (size_t)want);
    b.at = malloc(sizeof(Py_ssize_t) * (size_t)want);
    if (!b.ms || !b.at) {
        free(b.ms);
        free(b.at);
        PyErr_NoMemory();
        *failed = 1;
        return i;
    }
    while (i < L->hi) {
        Py_BEGIN_ALLOW_THREADS
        read_batch(L, &b, i, L->hi - i < want ? L->hi : i + want);
        Py_END_ALLOW_THREADS
        int end = 0;
        i = batch_rows(o, L, &b, line0, tmp, failed, &end);
        if (end) break;
    }
    free(b.ms);
    free(b.at);
    return i;
}

/* ---- Python entry points ---- */

static int get_buffer(PyObject *o, Py_buffer *b) {
    return PyObject_GetBuffer(o, b, PyBUF_SIMPLE);
}

static const char SCAN_DOC[] =
    "scan(buf, starts, ends, lo, hi, line0, out, tap=None, file_base=-1, pipe=0) -> int\n\n"
    "Append the rows of lines lo.. of a block (starts/ends: int64 buffers of line bounds in\n"
    "buf; blank lines are skipped) to ``out`` = (kind, id, id_key, method, line (arrays\n"
    "'b', lists, 'i', 'q'), error_code, error_message, is_tool_error, version (dicts),\n"
    "ref_rows, ref_vals,\n"
    "ref_intern, prog_rows, prog_vals, empty_rows, method index, method values, base[,\n"
    "call_recs, call_blob (bytearrays), call_index, call_strs[,\n"
    "list_rows, list_vals, list_intern]]: the call and\n"
    "list columns, kept when given). Stops at the first line it does not take and returns its index (hi when all\n"
    "were taken). ``tap`` = (ts float64, session int32, direction int8, stream int32,\n"
    "size int64 arrays of the block's lines, session index dict, default session, stdio\n"
    "stream code[, stderr stream code]) reads tap records instead (stderr records only\n"
    "with a stderr code). Bare NDJSON lines are read in batches with the GIL released,\n"
    "their rows made with it held. ``file_base``: the file offset of buf[0] when buf holds\n"
    "the file's own bytes (the call column then points into the file instead of copying).\n"
    "``pipe``: 1 to have a worker thread read the bare NDJSON lines (without the GIL) while\n"
    "this one makes their rows, when PIPE_MIN lines or more are left (2: whatever their\n"
    "number; 3: as where no worker can be started; 2 and 3 are for tests); for a read that\n"
    "has a core to itself. The rows are the same.";

static const char PIPE_STATS_DOC[] =
    "pipe_stats() -> (int, int)\n\n"
    "The scan() calls whose lines a worker thread read, and those that asked for one but\n"
    "read their lines on the calling thread (no threads in this build, or none could be\n"
    "started), since the module was loaded. For tests.";

static PyObject *py_pipe_stats(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return Py_BuildValue("nn", pipe_runs, pipe_fallbacks);
}

static PyObject *py_scan(PyObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"buf", "starts", "ends", "lo", "hi", "line0", "out", "tap",
                            "file_base", "pipe", NULL};
    long long file_base = -1;
    int pipe = 0;
    PyObject *bufo, *so, *eo, *outo, *tapo = Py_None;
    Py_ssize_t lo, hi;
    long long line0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOnnLO!|OLi", names, &bufo, &so, &eo, &lo, &hi,
                                     &line0, &PyTuple_Type, &outo, &tapo, &file_base, &pipe))
        return NULL;
    Out o;
    o.call_recs = o.call_blob = o.call_index = o.call_strs = NULL;
    o.list_rows = o.list_vals = o.list_intern = NULL;
    o.nver = o.nmeth = o.nltext = o.lnext = o.nccode = 0;
    text_cache_init(&o.ids, hi - lo);
    text_cache_init(&o.refs, hi - lo);
    o.pend.kind = NULL;
    o.pend.method = NULL;
    o.pend.line = NULL;
    o.pend.n = o.pend.cap = 0;
    memset(&o.ref_add, 0, sizeof(Items));
    memset(&o.prog_add, 0, sizeof(Items));
    memset(&o.prog_val_add, 0, sizeof(Items));
    memset(&o.empty_add, 0, sizeof(Items));
    if (lo < 0) {
        PyErr_SetString(PyExc_ValueError, "scan: lo must not be negative");
        return NULL;
    }
    if (!PyArg_ParseTuple(outo, "OO!O!OOO!O!O!O!OO!O!OOOO!O!n|O!O!O!O!O!O!O!", &o.kind,
                          &PyList_Type, &o.id, &PyList_Type, &o.id_key,
                          &o.method, &o.line, &PyDict_Type, &o.code_d,
                          &PyDict_Type, &o.emsg_d, &PyDict_Type, &o.tool_d, &PyDict_Type,
                          &o.ver_d, &o.ref_rows, &PyList_Type, &o.ref_vals,
                          &PyDict_Type, &o.ref_intern, &o.prog_rows,
                          &o.prog_vals, &o.empty_rows,
                          &PyDict_Type, &o.meth_index,
                          &PyList_Type, &o.meth_values, &o.base, &PyByteArray_Type, &o.call_recs,
                          &PyByteArray_Type, &o.call_blob, &PyDict_Type, &o.call_index,
                          &PyList_Type, &o.call_strs,
                          &PyList_Type, &o.list_rows, &PyList_Type, &o.list_vals,
                          &PyDict_Type, &o.list_intern))
        return NULL;
    Py_ssize_t nk, nm, nl;
    Py_ssize_t nr, np_, npv, ne;
    if (row_array(o.kind, 1, 0, &nk) || row_array(o.method, 4, 0, &nm) ||
        row_array(o.line, 8, 0, &nl) || row_array(o.ref_rows, 8, 0, &nr) ||
        row_array(o.prog_rows, 8, 0, &np_) || row_array(o.prog_vals, 8, 1, &npv) ||
        row_array(o.empty_rows, 8, 0, &ne))
        return NULL;
    if (nr != PyList_GET_SIZE(o.ref_vals) || np_ != npv) {
        PyErr_SetString(PyExc_ValueError, "the sparse rows of out and their values differ in "
                        "length");
        return NULL;
    }
    if (nk != nm || nk != nl || nk != PyList_GET_SIZE(o.id) || nk != PyList_GET_SIZE(o.id_key)) {
        PyErr_SetString(PyExc_ValueError, "the row columns of out differ in length");
        return NULL;
    }
    o.n0 = nk;
    if (!o.call_strs) o.call_recs = NULL;  /* all four or none */
    if (!o.list_intern) o.list_rows = NULL;
    PyObject *ctx[5] = {NULL, NULL, NULL, NULL, NULL};  /* ts, session, dir, stream, size */
    PyObject *sess_index = NULL, *stem = NULL;
    int stdio = -1, stderr_code = -1;
    int tap = tapo != Py_None;
    if (tap && !PyArg_ParseTuple(tapo, "OOOOOO!Oi|i", &ctx[0], &ctx[1], &ctx[2], &ctx[3],
                                 &ctx[4], &PyDict_Type, &sess_index, &stem, &stdio,
                                 &stderr_code))
        return NULL;
    /* the context columns of the block's lines: float64, int32, int8, int32, int64 */
    static const Py_ssize_t ITEM[5] = {8, 4, 1, 4, 8};
    Py_buffer cb[5];
    int held = 0;
    for (; tap && held < 5; held++) {
        if (PyObject_GetBuffer(ctx[held], &cb[held], PyBUF_WRITABLE)) break;
    }
    if (tap && held < 5) {
        for (int k = 0; k < held; k++) PyBuffer_Release(&cb[k]);
        return NULL;
    }
    Py_buffer b, sb, eb;
    if (get_buffer(bufo, &b)) return NULL;
    if (get_buffer(so, &sb)) { PyBuffer_Release(&b); return NULL; }
    if (get_buffer(eo, &eb)) { PyBuffer_Release(&b); PyBuffer_Release(&sb); return NULL; }
    const int64_t *st = sb.buf, *en = eb.buf;
    Py_ssize_t nlines = sb.len / 8;
    if (eb.len / 8 < nlines) nlines = eb.len / 8;
    if (hi > nlines) hi = nlines;
    for (int k = 0; tap && k < 5; k++)
        if (cb[k].len / ITEM[k] < hi) hi = cb[k].len / ITEM[k];
    cptr base = b.buf;
    o.buf0 = base;
    o.file_base = tap ? -1 : file_base;  /* a tap record's frame is unescaped: no file text */
    o.in_frame = tap && file_base >= 0;  /* ... its text read again from the record */
    Scratch frame = {NULL, 0}, tmp = {NULL, 0};
    Py_ssize_t i = lo;
    int failed = 0;
    struct {
        char name[SESSION_NAME];
        Py_ssize_t n;  /* -1: the default session (none named) */
        int32_t code;
    } cache[SESSION_CACHE];
    int ncache = 0;
    if (!tap) {
        Lines L = {base, b.len, st, en, hi};
        i = scan_lines(&o, &L, lo, line0, &tmp, &failed, pipe);
    }
    for (; tap && i < hi; i++) {
        int64_t a = st[i], z = en[i];
        if (a >= z) continue;  /* blank */
        if (a < 0 || z > b.len) break;
        Msg m;
        Tap t;
        if (tap_record(base + a, base + z, &t, &frame)) break;  /* the frame's text: in frame */
        cptr fs = t.raw_s, fe = t.raw_e;
        if (t.dir == 2) {  /* a stderr line: a row of its own (its stream not yet coded: */
            if (stderr_code < 0) break;  /* the Python path codes it) */
        } else if (message(fs, fe, &m, 0)) {
            break;  /* UTF-8: checked on the tap line */
        }
        /* the session's code (a session not seen before: the Python path registers it) */
        int32_t code = -1;
        const char *name = t.sess_s ? (const char *)t.sess_s : NULL;
        Py_ssize_t nlen = t.sess_s ? t.sess_e - t.sess_s : -1;
        for (int k = 0; k < ncache; k++) {
            if (cache[k].n == nlen && (nlen < 0 || !memcmp(cache[k].name, name, (size_t)nlen))) {
                code = cache[k].code;
                break;
            }
        }
        if (code < 0) {
            PyObject *key = name ? PyUnicode_DecodeUTF8(name, nlen, "strict") : Py_NewRef(stem);
            if (!key) { failed = 1; break; }
            PyObject *c = PyDict_GetItemWithError(sess_index, key);
            Py_DECREF(key);
            if (!c) {
                if (PyErr_Occurred()) failed = 1;
                break;
            }
            long v = PyLong_AsLong(c);
            if (v < 0 || v > INT32_MAX) {
                if (PyErr_Occurred()) failed = 1;
                break;
            }
            code = (int32_t)v;
            if (ncache < SESSION_CACHE && nlen <= SESSION_NAME) {
                cache[ncache].n = nlen;
                if (nlen > 0) memcpy(cache[ncache].name, name, (size_t)nlen);
                cache[ncache++].code = code;
            }
        }
        if (t.dir == 2 ? add_stderr_row(&o, line0 + i) : add_row(&o, &m, line0 + i, &tmp)) {
            failed = 1;
            break;
        }
        ((double *)cb[0].buf)[i] = t.has_ts ? t.ts : NAN;
        ((int32_t *)cb[1].buf)[i] = code;
        ((int8_t *)cb[2].buf)[i] = (int8_t)(t.dir == 2 ? -1 : t.dir);
        ((int32_t *)cb[3].buf)[i] = t.dir == 2 ? stderr_code : stdio;
        ((int64_t *)cb[4].buf)[i] = fe - fs;
    }
    for (int k = 0; tap && k < 5; k++) PyBuffer_Release(&cb[k]);
    for (int k = 0; k < o.nver; k++) Py_DECREF(o.ver[k].str);
    for (int k = 0; k < o.nltext; k++) Py_DECREF(o.ltext[k]);
    text_free(&o.ids);
    text_free(&o.refs);
    free(frame.data);
    free(tmp.data);
    PyBuffer_Release(&b);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    if (failed) {  /* the rows made so far stay (the exception is kept) */
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        pending_flush(&o);
        PyErr_Restore(et, ev, tb);
        return NULL;
    }
    if (pending_flush(&o)) return NULL;
    return PyLong_FromSsize_t(i);
}

static const char CODES_DOC[] =
    "codes(values, index, firsts, paired=None, twins=None) -> bytearray\n\n"
    "The int32 codes (native byte order) of ``values`` as Codes.codes(values, canon=True,\n"
    "paired=paired) gives them: None is -1; a value seen before takes its code and is\n"
    "replaced in ``values`` by the first one seen (and ``paired[k]`` by its twin).";

static PyObject *py_codes(PyObject *self, PyObject *args) {
    PyObject *values, *index, *firsts, *paired = Py_None, *twins = Py_None;
    if (!PyArg_ParseTuple(args, "O!O!O!|OO", &PyList_Type, &values, &PyDict_Type, &index,
                          &PyList_Type, &firsts, &paired, &twins))
        return NULL;
    int pair = paired != Py_None;
    if (pair && (!PyList_Check(paired) || !PyList_Check(twins) ||
                 PyList_GET_SIZE(paired) != PyList_GET_SIZE(values))) {
        PyErr_SetString(PyExc_TypeError, "paired and twins must be lists, paired as long as values");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * 4);
    if (!out) return NULL;
    int32_t *dst = (int32_t *)PyByteArray_AS_STRING(out);
    /* the code a new value would take, made before the look-up: PyDict_SetDefault finds a
     * value or puts it in one search of the table (a look-up then an insert searched
     * twice); the int is kept for the next value when the value was there */
    PyObject *next = NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *v = PyList_GET_ITEM(values, k);
        if (v == Py_None) {
            dst[k] = -1;
            continue;
        }
        Py_ssize_t fresh = PyList_GET_SIZE(firsts);
        if (!next && !(next = PyLong_FromSsize_t(fresh))) goto fail;
        PyObject *c = PyDict_SetDefault(index, v, next);  /* borrowed */
        if (!c) goto fail;
        if (c == next) {  /* a new value: it takes the next code */
            Py_CLEAR(next);
            if (PyList_Append(firsts, v) ||
                (pair && PyList_Append(twins, PyList_GET_ITEM(paired, k))))
                goto fail;
            dst[k] = (int32_t)fresh;
            continue;
        }
        long code = PyLong_AsLong(c);
        if (code == -1 && PyErr_Occurred()) goto fail;
        dst[k] = (int32_t)code;
        PyObject *first = PyList_GET_ITEM(firsts, code);
        Py_INCREF(first);
        PyList_SetItem(values, k, first);
        if (pair) {
            PyObject *twin = PyList_GET_ITEM(twins, code);
            Py_INCREF(twin);
            PyList_SetItem(paired, k, twin);
        }
    }
    Py_XDECREF(next);
    return out;
fail:
    Py_XDECREF(next);
    Py_DECREF(out);
    return NULL;
}

static const char NEWLINES_DOC[] =
    "newlines(buf, n) -> bytearray\n\n"
    "The offsets of the newline bytes in buf[:n], as int64 (native byte order).";

static PyObject *py_newlines(PyObject *self, PyObject *args) {
    PyObject *bufo;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "On", &bufo, &n)) return NULL;
    Py_buffer b;
    if (get_buffer(bufo, &b)) return NULL;
    if (n > b.len) n = b.len;
    Py_ssize_t cap = n / 256 + 64, used = 0;
    PyObject *out = PyByteArray_FromStringAndSize(NULL, cap * 8);
    if (!out) {
        PyBuffer_Release(&b);
        return NULL;
    }
    const char *start = b.buf, *p = start, *end = start + n;
    for (;;) {
        const char *q = memchr(p, '\n', (size_t)(end - p));
        if (!q) break;
        if (used == cap) {
            cap *= 2;
            if (PyByteArray_Resize(out, cap * 8)) {
                Py_DECREF(out);
                PyBuffer_Release(&b);
                return NULL;
            }
        }
        ((int64_t *)PyByteArray_AS_STRING(out))[used++] = q - start;
        p = q + 1;
    }
    PyBuffer_Release(&b);
    if (PyByteArray_Resize(out, used * 8)) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static const char UTF8_DOC[] =
    "utf8_valid(data, level=-1) -> bool | None\n\n"
    "Whether data is valid UTF-8, by the scanner's check (-1: the one it uses; 0: a\n"
    "sequence at a time; 1: 16 bytes at a time; 2: 32 bytes at a time). None when this\n"
    "CPU or build has no such level. For tests.";

static PyObject *py_utf8_valid(PyObject *self, PyObject *args) {
    PyObject *o;
    int level = -1, ok;
    (void)self;
    if (!PyArg_ParseTuple(args, "O|i", &o, &level)) return NULL;
    Py_buffer b;
    if (get_buffer(o, &b)) return NULL;
    cptr p = b.buf, end = p + b.len;
    switch (level) {
    case -1: ok = utf8_valid(p, end); break;
    case 0: ok = utf8_valid_scalar(p, end); break;
#ifdef HAVE_SSSE3_PATH
    case 1: ok = use_ssse3 ? utf8_valid_ssse3(p, end) : -1; break;
    case 2: ok = use_avx2 ? utf8_valid_avx2(p, end) : -1; break;
#endif
    default: ok = -1;
    }
    PyBuffer_Release(&b);
    if (ok < 0) Py_RETURN_NONE;
    return PyBool_FromLong(ok);
}

static const char PAIR_DOC[] =
    "pair(kind, session, direction, id_code, tool, method, ref_rows, ref_vals,\n"
    "     prog_rows, prog_vals, id_uniques, codes, twin, id_index=None) -> tuple\n\n"
    "The walk of engine.walks.pair on codes. Buffers, one entry per frame: kind int8,\n"
    "session int32 (below 2**29), direction int8, id_code int32, tool bool, method int32;\n"
    "ref_rows/prog_rows int64 ascending with ref_vals (list of str) and\n"
    "prog_vals (float64, NaN: none); id_uniques the list of id keys by code; codes =\n"
    "(null, cancelled, progress, initialize) codes (-1: absent; -2 for null: found here);\n"
    "twin(id key) -> the key of the same id in the other JSON type, or None; id_index a\n"
    "dict id key -> code (else a table of id_uniques is made when needed). Returns\n"
    "bytearrays: the rows in the reference order (request_seq, response_seq int64,\n"
    "session int32, requester int8, method int32, outcome int8, cancel_seq,\n"
    "progress_count, key_seq int64: the frame whose id key is the row's), then the\n"
    "findings as int64 triples (seq, rule, related) and float64 pairs (a progress value\n"
    "and the one before it).";

static PyObject *py_pair(PyObject *self, PyObject *args) {
    PyObject *bo[9], *ref_vals, *uniq, *twin, *index = Py_None;
    PairIn in = {0};
    PairState st = {0};
    Py_buffer b[9];
    int nb = 0;
    PyObject *res = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOO!OOO!(iiii)O|O", &bo[0], &bo[1], &bo[2], &bo[3],
                          &bo[4], &bo[5], &bo[6], &PyList_Type, &ref_vals, &bo[7],
                          &bo[8], &PyList_Type, &uniq, &in.null_code, &in.cancel_code,
                          &in.progress_code, &in.init_code, &twin, &index))
        return NULL;
    if (index != Py_None && !PyDict_Check(index)) {
        PyErr_SetString(PyExc_TypeError, "id_index must be a dict or None");
        return NULL;
    }
    in.id_index = index == Py_None ? NULL : index;
    if (!PyCallable_Check(twin)) {
        PyErr_SetString(PyExc_TypeError, "twin must be callable");
        return NULL;
    }
    for (; nb < 9; nb++)
        if (get_buffer(bo[nb], &b[nb])) goto done;
    in.n = b[0].len;
    static const int width[9] = {1, 4, 1, 4, 1, 4, 8, 8, 8};
    for (int k = 0; k < 6; k++)
        if (b[k].len != in.n * width[k]) {
            PyErr_SetString(PyExc_ValueError, "pair: the per-frame buffers differ in length");
            goto done;
        }
    in.kind = b[0].buf; in.session = b[1].buf; in.dir = b[2].buf; in.id_code = b[3].buf;
    in.tool = b[4].buf; in.method = b[5].buf;
    in.ref_rows = b[6].buf; in.n_ref = b[6].len / 8;
    in.prog_rows = b[7].buf; in.n_prog = b[7].len / 8; in.prog_vals = b[8].buf;
    in.ref_vals = ref_vals; in.id_uniques = uniq; in.twin = twin;
    if (PyList_GET_SIZE(ref_vals) != in.n_ref || b[8].len != b[7].len) {
        PyErr_SetString(PyExc_ValueError, "pair: rows and values differ in length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < in.n; i++) {
        int32_t c = in.id_code[i], s = in.session[i];
        if (c >= PyList_GET_SIZE(uniq) || s >= (1 << 29) - 1 || s < -1 || c < -1) {
            PyErr_SetString(PyExc_ValueError, "pair: a code is out of range");
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < in.n_ref; i++) {
        if (!PyUnicode_Check(PyList_GET_ITEM(ref_vals, i)) || in.ref_rows[i] < 0 ||
            in.ref_rows[i] >= in.n || (i && in.ref_rows[i] <= in.ref_rows[i - 1])) {
            PyErr_SetString(PyExc_ValueError, "pair: refs must be str on ascending frame rows");
            goto done;
        }
    }
    for (Py_ssize_t i = 1; i < in.n_prog; i++) {
        if (in.prog_rows[i] <= in.prog_rows[i - 1]) {
            PyErr_SetString(PyExc_ValueError, "pair: progress rows must ascend");
            goto done;
        }
    }
    if (pair_walk(&in, &st)) goto done;
    {
        /* the request rows and the extra rows, merged by seq (the reference order),
         * written straight into the bytearrays returned */
        Py_ssize_t n = st.n_req + st.n_extra;
        static const int size[11] = {8, 8, 4, 1, 4, 1, 8, 8, 8, 24, 16};
        PyObject *t = PyTuple_New(11);
        if (!t) goto done;
        for (int k = 0; k < 11; k++) {
            Py_ssize_t len = (k < 9 ? n : st.f.n) * size[k];
            PyObject *ba = PyByteArray_FromStringAndSize(NULL, len);
            if (!ba) {
                Py_DECREF(t);
                goto done;
            }
            PyTuple_SET_ITEM(t, k, ba);
        }
#define COL(k, type) ((type *)PyByteArray_AS_STRING(PyTuple_GET_ITEM(t, k)))
        int64_t *rq = COL(0, int64_t), *rs = COL(1, int64_t), *cs = COL(6, int64_t),
                *pc = COL(7, int64_t), *ks = COL(8, int64_t);
        int32_t *se = COL(2, int32_t), *me = COL(4, int32_t);
        int8_t *di = COL(3, int8_t), *ou = COL(5, int8_t);
        if (st.f.n) {
            memcpy(COL(9, char), st.f.v, (size_t)st.f.n * 24);
            memcpy(COL(10, char), st.f.x, (size_t)st.f.n * 16);
        }
#undef COL
        Py_ssize_t a = 0, e = 0;
        for (Py_ssize_t j = 0; j < n; j++) {
            if (e >= st.n_extra || (a < st.n_req && st.rseq[a] < st.eseq[e])) {
                rq[j] = st.rseq[a]; rs[j] = st.resp[a]; se[j] = st.rsess[a];
                di[j] = st.rdir[a]; me[j] = st.rmeth[a]; ou[j] = st.out[a];
                cs[j] = st.canc[a]; pc[j] = st.pcount[a]; ks[j] = st.rseq[a];
                a++;
            } else {
                int64_t s = st.eseq[e], r = st.ereq[e];
                rq[j] = r; rs[j] = s; se[j] = in.session[s];
                di[j] = (int8_t)(r >= 0 ? in.dir[r] : opp(in.dir[s]));
                me[j] = r >= 0 ? in.method[r] : -1;
                ou[j] = st.eout[e]; cs[j] = -1; pc[j] = 0; ks[j] = s;
                e++;
            }
        }
        res = t;
    }
done:
    pair_state_free(&st);
    for (int k = 0; k < nb; k++) PyBuffer_Release(&b[k]);
    return res;
}

static const char LENGTHS_DOC[] =
    "lengths(strs) -> bytearray\n\n"
    "The length of each str of a list, as int64 (native byte order); -1 for anything else.";

static PyObject *py_lengths(PyObject *self, PyObject *args) {
    PyObject *lst;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &lst)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lst);
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (!out) return NULL;
    int64_t *dst = (int64_t *)PyByteArray_AS_STRING(out);
    PyObject **items = &PyList_GET_ITEM(lst, 0);
    for (Py_ssize_t k = 0; k < n; k++) {
        if (k + 16 < n) MN_PREFETCH(items[k + 16]);
        PyObject *o = items[k];
        dst[k] = PyUnicode_Check(o) ? PyUnicode_GET_LENGTH(o) : -1;
    }
    return out;
}

static const char OFFSETS_DOC[] =
    "offsets(base, items) -> bytearray\n\n"
    "Where each buffer of a list (msgspec.Raw values decoded from ``base``, say) starts in\n"
    "``base``, as int64 (native byte order); -1 for one that is not a slice of it.";

static PyObject *py_offsets(PyObject *self, PyObject *args) {
    PyObject *base, *lst;
    Py_buffer bb;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO!", &base, &PyList_Type, &lst)) return NULL;
    if (get_buffer(base, &bb)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lst);
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (!out) {
        PyBuffer_Release(&bb);
        return NULL;
    }
    int64_t *dst = (int64_t *)PyByteArray_AS_STRING(out);
    const char *lo = (const char *)bb.buf;
    const char *hi = lo + bb.len;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_buffer b;
        if (get_buffer(PyList_GET_ITEM(lst, k), &b)) {
            Py_DECREF(out);
            PyBuffer_Release(&bb);
            return NULL;
        }
        const char *at = (const char *)b.buf;
        /* compared as addresses: inside [lo, hi] with its whole length */
        uintptr_t a = (uintptr_t)at, l = (uintptr_t)lo, h = (uintptr_t)hi;
        dst[k] = (a >= l && a <= h && (uintptr_t)b.len <= h - a) ? (int64_t)(a - l) : -1;
        PyBuffer_Release(&b);
    }
    PyBuffer_Release(&bb);
    return out;
}

static const char DIRECTIONS_DOC[] =
    "directions(kind, session, id_code, method, method_dirs, given) -> bytearray | None\n\n"
    "The walk of engine.walks.infer on codes: kind int8, session int32 (below 2**29),\n"
    "id_code int32, method int32 (one per frame), method_dirs int8 (one per method code and\n"
    "one more for no method: 0 c2s, 1 s2c, -1 both or unknown), given int8 (0 c2s, 1 s2c,\n"
    "-1 none). The directions with the unknown ones of messages filled in, as int8; None\n"
    "when one (session, id) holds more than 64 unanswered requests (use the numpy path).";

static PyObject *py_directions(PyObject *self, PyObject *args) {
    PyObject *o[6];
    Py_buffer b[6];
    int nb = 0;
    PyObject *res = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    for (; nb < 6; nb++)
        if (get_buffer(o[nb], &b[nb])) goto done;
    Py_ssize_t n = b[0].len;
    if (b[1].len != 4 * n || b[2].len != 4 * n || b[3].len != 4 * n || b[5].len != n ||
        b[4].len < 1) {
        PyErr_SetString(PyExc_ValueError, "directions: the buffers differ in length");
        goto done;
    }
    const int32_t *sess = b[1].buf, *idc = b[2].buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (sess[i] < -1 || sess[i] >= (1 << 29) - 1 || idc[i] < -1) {
            PyErr_SetString(PyExc_ValueError, "directions: a code is out of range");
            goto done;
        }
    res = PyByteArray_FromStringAndSize(b[5].buf, n);
    if (!res) goto done;
    int st = infer_walk(n, b[0].buf, sess, idc, b[3].buf, b[4].buf, (int32_t)(b[4].len - 1),
                        (int8_t *)PyByteArray_AS_STRING(res));
    if (st) {
        Py_CLEAR(res);
        if (st == -2) PyErr_NoMemory();
        else res = Py_NewRef(Py_None);
    }
done:
    for (int k = 0; k < nb; k++) PyBuffer_Release(&b[k]);
    return res;
}

static const char EXTRAS_WITH_DOC[] =
    "extras_with(extra, keys) -> list\n\n"
    "The (row, extra) items of a store's extras (a dict of row -> dict) whose extra holds\n"
    "any of ``keys`` (a tuple of str), in the dict's order: [(i, e) for i, e in\n"
    "extra.items() if any(k in e for k in keys)], without a Python step per row. An extra\n"
    "met again (the same object: a kind's one shared dict) is tested once.";

static PyObject *py_extras_with(PyObject *self, PyObject *args) {
    PyObject *extra, *keys, *out, *row, *e, *last = NULL;
    Py_ssize_t pos = 0;
    int last_has = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &extra, &PyTuple_Type, &keys))
        return NULL;
    Py_ssize_t nk = PyTuple_GET_SIZE(keys);
    for (Py_ssize_t k = 0; k < nk; k++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(keys, k))) {
            PyErr_SetString(PyExc_TypeError, "extras_with: the keys must be str");
            return NULL;
        }
    if (!(out = PyList_New(0))) return NULL;
    while (PyDict_Next(extra, &pos, &row, &e)) {
        int has = 0;
        if (e == last) {
            has = last_has;
        } else {
            for (Py_ssize_t k = 0; k < nk && !has; k++) {
                PyObject *key = PyTuple_GET_ITEM(keys, k);
                has = PyDict_CheckExact(e) ? PyDict_Contains(e, key)
                                           : PySequence_Contains(e, key);
                if (has < 0) goto fail;
            }
            Py_INCREF(e); /* held: a key's __eq__ could change the dict */
            Py_XSETREF(last, e);
            last_has = has;
        }
        if (has) {
            PyObject *item = PyTuple_Pack(2, row, e);
            int bad = !item || PyList_Append(out, item);
            Py_XDECREF(item);
            if (bad) goto fail;
        }
    }
    Py_XDECREF(last);
    return out;
fail:
    Py_XDECREF(last);
    Py_DECREF(out);
    return NULL;
}

static const char BIG_IDS_DOC[] =
    "big_ids(keys) -> bytearray\n\n"
    "For each id key (the compact JSON text of an id) of a list: 1 when it is an integer\n"
    "above 2**53 in absolute value, 0 when it is not, 2 when Python must decide (a key that\n"
    "is not plain ASCII, is empty, or has more than one leading minus).";

static PyObject *py_big_ids(PyObject *self, PyObject *args) {
    PyObject *lst;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &lst)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lst);
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n);
    if (!out) return NULL;
    unsigned char *dst = (unsigned char *)PyByteArray_AS_STRING(out);
    static const char LIMIT[] = "9007199254740992"; /* 2**53 */
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *o = PyList_GET_ITEM(lst, k);
        if (!PyUnicode_Check(o) || !PyUnicode_IS_ASCII(o) || PyUnicode_GET_LENGTH(o) == 0) {
            dst[k] = 2;
            continue;
        }
        const char *t = (const char *)PyUnicode_DATA(o);
        Py_ssize_t len = PyUnicode_GET_LENGTH(o), i = 0;
        if (t[0] == '"') {
            dst[k] = 0;
            continue;
        }
        while (i < len && t[i] == '-') i++;
        if (i > 1) {
            dst[k] = 2;
            continue;
        }
        Py_ssize_t d = i;
        while (d < len && t[d] >= '0' && t[d] <= '9') d++;
        if (d == i || d < len) {  /* not all digits */
            dst[k] = 0;
            continue;
        }
        while (i < len - 1 && t[i] == '0') i++;  /* leading zeros */
        Py_ssize_t digits = len - i;
        dst[k] = digits > 16 || (digits == 16 && memcmp(t + i, LIMIT, 16) > 0);
    }
    return out;
}

static const char SIMD_DOC[] =
    "simd() -> str\n\n"
    "The widest vector path chosen at import for the UTF-8 check and the tap records'\n"
    "unescaping: 'avx2', 'ssse3' (MCP_NOTEBOOK_NO_AVX2 and MCP_NOTEBOOK_NO_SIMD step\n"
    "down), 'sse2' or 'plain' (built without them).";

static PyObject *py_simd(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
#ifdef HAVE_SSSE3_PATH
    if (use_avx2) return PyUnicode_FromString("avx2");
    if (use_ssse3) return PyUnicode_FromString("ssse3");
#endif
    return PyUnicode_FromString(MN_SSE2 ? "sse2" : "plain");
}

static PyMethodDef METHODS[] = {
    {"simd", py_simd, METH_NOARGS, SIMD_DOC},
    {"scan", (PyCFunction)(void (*)(void))py_scan, METH_VARARGS | METH_KEYWORDS, SCAN_DOC},
    {"pipe_stats", py_pipe_stats, METH_NOARGS, PIPE_STATS_DOC},
    {"codes", py_codes, METH_VARARGS, CODES_DOC},
    {"newlines", py_newlines, METH_VARARGS, NEWLINES_DOC},
    {"utf8_valid", py_utf8_valid, METH_VARARGS, UTF8_DOC},
    {"pair", py_pair, METH_VARARGS, PAIR_DOC},
    {"lengths", py_lengths, METH_VARARGS, LENGTHS_DOC},
    {"offsets", py_offsets, METH_VARARGS, OFFSETS_DOC},
    {"big_ids", py_big_ids, METH_VARARGS, BIG_IDS_DOC},
    {"extras_with", py_extras_with, METH_VARARGS, EXTRAS_WITH_DOC},
    {"directions", py_directions, METH_VARARGS, DIRECTIONS_DOC},
    {"inspector_doc", py_inspector_doc, METH_VARARGS, INSPECTOR_DOC},
    {"recorder_doc", py_recorder_doc, METH_VARARGS, RECORDER_DOC},
    {"doc_split_last", py_doc_split_last, METH_NOARGS, DOC_SPLIT_LAST_DOC},
    {"json_texts", py_json_texts, METH_VARARGS, JSON_TEXTS_DOC},
    {"sse_events", py_sse_events, METH_VARARGS, SSE_EVENTS_DOC},
    {"har_scan", py_har_scan, METH_VARARGS, HAR_SCAN_DOC},
    {"har_scan_counts", py_har_scan_counts, METH_NOARGS, HAR_SCAN_COUNTS_DOC},
    {"frame_kinds", py_frame_kinds, METH_VARARGS, FRAME_KINDS_DOC},
    {"frame_spans", py_frame_spans, METH_VARARGS, FRAME_SPANS_DOC},
    {"span_codes", py_span_codes, METH_VARARGS, SPAN_CODES_DOC},
    {"claude_lines", py_claude_lines, METH_VARARGS, CLAUDE_LINES_DOC},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_native",
                                    "The envelope of usual JSON-RPC lines, found in C.", -1,
                                    METHODS};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
#ifdef HAVE_SSSE3_PATH
    init_pack();
    __builtin_cpu_init();
    use_ssse3 = __builtin_cpu_supports("ssse3") && !getenv("MCP_NOTEBOOK_NO_SIMD");
    use_avx2 = use_ssse3 && __builtin_cpu_supports("avx2") && !getenv("MCP_NOTEBOOK_NO_AVX2");
#endif
    for (int k = 0; k < N_LISTED; k++) {
        LISTED_KEY[k] = PyUnicode_InternFromString(LISTED[k]);
        if (!LISTED_KEY[k]) return NULL;
    }
    PyObject *mod = PyModule_Create(&MODULE);
    if (mod && (PyModule_AddIntConstant(mod, "PIPE_BATCH", PIPE_BATCH) ||
                PyModule_AddIntConstant(mod, "PIPE_MIN", PIPE_MIN) ||
                PyModule_AddIntConstant(mod, "BATCH", BATCH) ||
                PyModule_AddIntConstant(mod, "THREADS", MN_THREADS))) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
