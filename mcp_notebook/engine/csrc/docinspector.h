/* The Inspector's usual export (docscan.h says which it takes), read on one thread or two
 * (docsplit.h). */
#ifndef MCP_NOTEBOOK_DOCINSPECTOR_H
#define MCP_NOTEBOOK_DOCINSPECTOR_H
#include "docsplit.h"

/* the arrays, one value per entry: message start and length, response start and length
 * (0: none), stamp, duration, stamp state, stamp start and length, origin, kind */
enum { I_MS, I_ML, I_RS, I_RL, I_TS, I_DU, I_ST, I_SS, I_SL, I_OG, I_KD, I_N };

/* One entry, c.p at its first byte: checked, written compact, its values appended. */
static int ins_entry(Part *t) {
    Pass *ps = &t->ps;
    Cur *c = &ps->c;
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    *ps->o++ = '{';
    ws(c);
    int seen = 0, more;
    int64_t m0 = 0, m1 = -1, r0 = 0, r1 = 0, s0 = 0, s1 = 0;
    double stamp = NAN, dur = NAN;
    int8_t state = 0, origin = -1, kind = -1;
    if (c->p < c->end && *c->p == '}') return -1;  /* no message */
    do {
        cptr s, e;
        int esc;
        if (ds_copy_name(ps, &s, &e, &esc) || esc) return -1;
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
        if (bit & seen) return -1;  /* a known member twice */
        seen |= bit;
        unsigned char *at = ps->o;
        if (bit == 1 || bit == 2 || bit == 64 || !bit) {
            if (ds_copy(ps, 1)) return -1;
            int null = ps->o - at == 4 && !memcmp(at, "null", 4);
            if (bit == 1) {
                if (null) return -1;
                m0 = at - ps->o0;
                m1 = ps->o - at;
            } else if (bit == 2 && !null) {
                r0 = at - ps->o0;
                r1 = ps->o - at;
            } else if (bit == 64 && !null) return -1;  /* a client error */
            continue;
        }
        Scalar v;
        if (ds_copy_scalar(ps, &v)) return -1;
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
                while (k < t->n_kinds && !((size_t)(t->kinds_end[k] - t->kinds[k]) == kl &&
                                           !memcmp(t->kinds[k], v.s, kl)))
                    k++;
                if (k == t->n_kinds) {
                    if (t->n_kinds == DS_KINDS) return -1;
                    /* kept in the output (the input's pages may be let go) */
                    t->kinds[k] = at + 1;
                    t->kinds_end[k] = at + 1 + kl;
                    t->n_kinds++;
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
    } while ((more = ds_after(ps, '}')) > 0);
    if (more < 0 || m1 < 0) return -1;
    PART_PUT(I_MS, int64_t, m0);
    PART_PUT(I_ML, int64_t, m1);
    PART_PUT(I_RS, int64_t, r0);
    PART_PUT(I_RL, int64_t, r1);
    PART_PUT(I_TS, double, stamp);
    PART_PUT(I_DU, double, dur);
    PART_PUT(I_ST, int8_t, state);
    PART_PUT(I_SS, int64_t, s0);
    PART_PUT(I_SL, int64_t, s1);
    PART_PUT(I_OG, int8_t, origin);
    PART_PUT(I_KD, int8_t, kind);
    return 0;
}

/* after the entries' array: blanks, then the end */
static int ins_tail(Part *t) {
    ws(&t->ps.c);
    return t->ps.c.p == t->ps.c.end ? 0 : -1;
}

/* The export from its start (A's part, or all of it): 0 read to its end, 1 landed on B's
 * start, -1 not the usual export. */
static int ins_doc(Part *a, Split *sp) {
    Pass *ps = &a->ps;
    Cur *c = &ps->c;
    ws(c);
    if (c->p >= c->end || *c->p != '[') return -1;
    c->p++;
    *ps->o++ = '[';
    ws(c);
    if (c->p < c->end && *c->p == ']') return -1;  /* empty: the general path */
    int r = run_entries(a, sp, NULL);
    return r == 0 ? ins_tail(a) : r;
}

/* B's part after A's: the kinds merged (B's codes renumbered as the one-thread pass
 * numbers them, in order of first appearance), the output's gap closed, B's offsets
 * shifted and its arrays appended. -1: more kinds than taken, or no memory. */
static int ins_join(Part *a, Split *sp) {
    Part *b = &sp->b;
    int8_t code[DS_KINDS];
    int first_new = a->n_kinds;
    for (int k = 0; k < b->n_kinds; k++) {
        size_t kl = (size_t)(b->kinds_end[k] - b->kinds[k]);
        int j = 0;
        while (j < a->n_kinds && !((size_t)(a->kinds_end[j] - a->kinds[j]) == kl &&
                                   !memcmp(a->kinds[j], b->kinds[k], kl)))
            j++;
        if (j == a->n_kinds) {
            if (a->n_kinds == DS_KINDS) return -1;
            a->kinds[j] = b->kinds[k];
            a->kinds_end[j] = b->kinds_end[k];
            a->n_kinds++;
        }
        code[k] = (int8_t)j;
    }
    int64_t shift = split_close_gap(sp, a);
    for (int j = first_new; j < a->n_kinds; j++) {  /* their texts moved with B's output */
        a->kinds[j] -= shift;
        a->kinds_end[j] -= shift;
    }
    if (split_append_shifted(a, b, I_MS, shift, SHIFT_ALL, I_MS) ||
        split_append_shifted(a, b, I_RS, shift, SHIFT_IF_LONG, I_RL) ||
        split_append_shifted(a, b, I_SS, shift, SHIFT_IF_TWO, I_ST))
        return -1;
    const int same[] = {I_ML, I_RL, I_TS, I_DU, I_ST, I_SL, I_OG};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++)
        if (split_append(a, b, same[k])) return -1;
    size_t at = a->col[I_KD].len;
    if (split_append(a, b, I_KD)) return -1;
    int8_t *kd = (int8_t *)a->col[I_KD].data;
    for (size_t i = at; i < a->col[I_KD].len; i++)
        if (kd[i] >= 0) kd[i] = code[kd[i]];
    return 0;
}

/* The extras of the column path for the entries after those done, by record (each
 * entry's message, then its response where it has one): the message's the one dict of
 * its kind, the response's its duration (a new dict each). -1 with an exception set. */
static int ins_extras(Extras *x, const Part *a) {
    const int8_t *kd = (const int8_t *)a->col[I_KD].data;
    const int64_t *rl = (const int64_t *)a->col[I_RL].data;
    const double *du = (const double *)a->col[I_DU].data;
    size_t n = a->col[I_MS].len / sizeof(int64_t);
    for (; x->done < n; x->done++) {
        size_t i = x->done;
        int kind = kd[i];
        if (kind >= 0) {
            if (!x->kdicts[kind]) {
                PyObject *t = PyUnicode_FromStringAndSize(
                    (const char *)a->kinds[kind], a->kinds_end[kind] - a->kinds[kind]);
                if (!t || !(x->kdicts[kind] = PyDict_New()) ||
                    PyDict_SetItem(x->kdicts[kind], x->keys[0], t)) {
                    Py_XDECREF(t);
                    return -1;
                }
                Py_DECREF(t);
            }
            PyObject *key = PyLong_FromSsize_t(x->record);
            if (!key || PyDict_SetItem(x->extras, key, x->kdicts[kind])) {
                Py_XDECREF(key);
                return -1;
            }
            Py_DECREF(key);
        }
        double dur = du[i];
        if (rl[i] > 0 && dur == dur) {
            PyObject *d = PyDict_New(), *f = PyFloat_FromDouble(dur);
            PyObject *key = PyLong_FromSsize_t(x->record + 1);
            int bad = !d || !f || !key || PyDict_SetItem(d, x->keys[1], f) ||
                      PyDict_SetItem(x->extras, key, d);
            Py_XDECREF(d);
            Py_XDECREF(f);
            Py_XDECREF(key);
            if (bad) return -1;
        }
        x->record += 1 + (rl[i] > 0);
    }
    return 0;
}

static const char INSPECTOR_DOC[] =
    "inspector_doc(data, release, min_split=-1) -> tuple | None\n\n"
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
    "let go. ``min_split``: documents of at least this many bytes are read on two threads\n"
    "(the same answer); -1: one thread. ``at`` (for the tests): the second thread starts at\n"
    "this offset, not at a guessed entry start.";

static const DocPass INSPECTOR = {I_N, ins_entry, ins_tail, ins_doc, ins_extras, ins_join,
                                  {"entry_kind", "duration_ms", NULL}};

static PyObject *py_inspector_doc(PyObject *self, PyObject *args) {
    PyObject *flat, *res = NULL, *names = NULL;
    Py_buffer bb;
    Part a;
    Extras x;
    (void)self;
    int r = doc_pass(args, &INSPECTOR, &bb, &a, &x, &flat);
    if (r <= 0) {
        if (r < 0) return NULL;
        Py_RETURN_NONE;
    }
    if (!(names = PyList_New(a.n_kinds))) goto error;
    for (int k = 0; k < a.n_kinds; k++) {
        PyObject *t = PyUnicode_FromStringAndSize((const char *)a.kinds[k],
                                                  a.kinds_end[k] - a.kinds[k]);
        if (!t) goto error;
        PyList_SET_ITEM(names, k, t);
    }
    if (!(res = PyTuple_New(I_N + 3))) goto error;
    PyTuple_SET_ITEM(res, I_N + 1, names);
    PyTuple_SET_ITEM(res, I_N + 2, x.extras);
    names = x.extras = NULL;
    for (int k = 0; k < I_N; k++) {
        PyObject *o = grow_bytes(&a.col[k]);
        if (!o) goto error;
        PyTuple_SET_ITEM(res, k + 1, o);
    }
    if (!ds_done(&flat, &a.ps)) goto error;
    PyTuple_SET_ITEM(res, 0, flat);
    doc_pass_free(&bb, &a, &x);
    return res;
error:
    doc_pass_free(&bb, &a, &x);
    Py_XDECREF(names);
    Py_XDECREF(res);
    Py_XDECREF(flat);  /* never in res: it goes in last, just before the return */
    return NULL;
}

#endif
