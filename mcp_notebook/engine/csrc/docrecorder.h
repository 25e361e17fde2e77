/* The mcp-recorder's usual cassette (docscan.h says which it takes), read on one thread or
 * two (docsplit.h). */
#ifndef MCP_NOTEBOOK_DOCRECORDER_H
#define MCP_NOTEBOOK_DOCRECORDER_H
#include "docinspector.h"

/* the arrays, one value per interaction: request start and length, response start and
 * length (0: none), sse flag (-1 none, 0 false, 1 true): those returned; then what the
 * extras are made of after the pass: the status (its type: DS_NULL or DS_INT, its value),
 * the latency (its type: DS_NULL, DS_INT or DS_FLOAT, as an integer, as a double) */
enum { R_QS, R_QL, R_RS, R_RL, R_SF, R_OUT, R_ST = R_OUT, R_SV, R_LT, R_LI, R_LF, R_N };

/* One interaction, c.p at its first byte: checked, written compact, its values appended. */
static int rec_entry(Part *t) {
    Pass *ps = &t->ps;
    Cur *c = &ps->c;
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    *ps->o++ = '{';
    ws(c);
    if (c->p < c->end && *c->p == '}') return -1;  /* no request */
    int seen = 0, more;
    int64_t q0 = 0, q1 = -1, r0 = 0, r1 = 0;
    Scalar status = {DS_NULL}, latency = {DS_NULL}, sse = {DS_NULL};
    do {
        cptr s, e;
        int es;
        if (ds_copy_name(ps, &s, &e, &es) || es) return -1;
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
        if (bit & seen) return -1;
        seen |= bit;
        unsigned char *at = ps->o;
        if (bit == 1 || bit == 2 || !bit) {
            if (ds_copy(ps, 3)) return -1;
            int null = ps->o - at == 4 && !memcmp(at, "null", 4);
            if (bit == 1) {
                if (null) return -1;
                q0 = at - ps->o0;
                q1 = ps->o - at;
            } else if (bit == 2 && !null) {
                r0 = at - ps->o0;
                r1 = ps->o - at;
            }
            continue;
        }
        Scalar v;
        if (ds_copy_scalar(ps, &v)) return -1;
        if (bit == 8) {  /* sse: a boolean or nothing */
            if (v.type != DS_NULL && v.type != DS_TRUE && v.type != DS_FALSE) return -1;
            sse = v;
        } else if (bit == 16) {  /* status: an integer or nothing */
            if (v.type != DS_NULL && v.type != DS_INT) return -1;
            status = v;
        } else if (bit == 32) {  /* latency: a number or nothing */
            if (v.type != DS_NULL && v.type != DS_INT && v.type != DS_FLOAT) return -1;
            latency = v;
        }  /* the type, the method and the path: checked, not kept */
    } while ((more = ds_after(ps, '}')) > 0);
    if (more < 0 || q1 < 0) return -1;
    PART_PUT(R_QS, int64_t, q0);
    PART_PUT(R_QL, int64_t, q1);
    PART_PUT(R_RS, int64_t, r0);
    PART_PUT(R_RL, int64_t, r1);
    PART_PUT(R_SF, int8_t, sse.type == DS_NULL ? -1 : sse.type == DS_TRUE);
    PART_PUT(R_ST, int8_t, (int8_t)status.type);
    PART_PUT(R_SV, int64_t, status.type == DS_INT ? status.integer : 0);
    PART_PUT(R_LT, int8_t, (int8_t)latency.type);
    PART_PUT(R_LI, int64_t, latency.type == DS_INT ? latency.integer : 0);
    PART_PUT(R_LF, double, latency.type == DS_NULL ? 0.0 : latency.num);
    return 0;
}

static int rec_rest(Part *t, Split *sp, int found);

/* A member of the cassette, c.p at its name: the interactions' entries read (run_entries:
 * 0, -1, or A's 1: landed on B's start), any other member copied as it is. */
static int rec_member(Part *t, Split *sp, int *found) {
    Pass *ps = &t->ps;
    Cur *c = &ps->c;
    cptr s, e;
    int esc;
    if (ds_copy_name(ps, &s, &e, &esc) || esc) return -1;
    if (!KEY_IS(s, e, "interactions")) return ds_copy(ps, 1) ? -1 : 0;  /* the metadata */
    if ((*found)++) return -1;
    if (c->p >= c->end || *c->p != '[') return -1;
    c->p++;
    *ps->o++ = '[';
    ws(c);
    if (c->p < c->end && *c->p == ']') return -1;  /* none: the general path */
    return run_entries(t, sp, NULL);
}

/* The cassette's members after one (c.p after its value) to its close and the end. */
static int rec_rest(Part *t, Split *sp, int found) {
    int more, r;
    while ((more = ds_after(&t->ps, '}')) > 0)
        if ((r = rec_member(t, sp, &found))) return r;
    if (more < 0 || !found) return -1;
    ws(&t->ps.c);
    return t->ps.c.p == t->ps.c.end ? 0 : -1;
}

/* B's part after its interactions: the rest of the cassette, the interactions met. */
static int rec_tail(Part *t) {
    return rec_rest(t, NULL, 1);
}

/* The cassette from its start (A's part, or all of it): as ins_doc. */
static int rec_doc(Part *a, Split *sp) {
    Pass *ps = &a->ps;
    Cur *c = &ps->c;
    int found = 0, r;
    ws(c);
    if (c->p >= c->end || *c->p != '{') return -1;
    c->p++;
    *ps->o++ = '{';
    ws(c);
    if (c->p < c->end && *c->p == '}') return -1;
    if ((r = rec_member(a, sp, &found))) return r;
    return rec_rest(a, sp, found);
}

/* B's part after A's: the output's gap closed, B's offsets shifted, its arrays appended. */
static int rec_join(Part *a, Split *sp) {
    Part *b = &sp->b;
    int64_t shift = split_close_gap(sp, a);
    if (split_append_shifted(a, b, R_QS, shift, SHIFT_ALL, R_QS) ||
        split_append_shifted(a, b, R_RS, shift, SHIFT_IF_LONG, R_RL))
        return -1;
    for (int k = 0; k < R_N; k++)
        if (k != R_QS && k != R_RS && split_append(a, b, k)) return -1;
    return 0;
}

/* The extras of the column path for the interactions after those done, by record (each
 * interaction's request, then its response where it has one): a dict of status,
 * latency_ms and sse, each where the cassette has it (not null), one per interaction that
 * has any, its two records sharing it. -1 with an exception set. */
static int rec_extras(Extras *x, const Part *a) {
    const int8_t *st = (const int8_t *)a->col[R_ST].data;
    const int8_t *lt = (const int8_t *)a->col[R_LT].data;
    const int8_t *sf = (const int8_t *)a->col[R_SF].data;
    const int64_t *sv = (const int64_t *)a->col[R_SV].data;
    const int64_t *li = (const int64_t *)a->col[R_LI].data;
    const int64_t *rl = (const int64_t *)a->col[R_RL].data;
    const double *lf = (const double *)a->col[R_LF].data;
    size_t n = a->col[R_QS].len / sizeof(int64_t);
    for (; x->done < n; x->done++) {
        size_t i = x->done;
        PyObject *d = NULL;
        for (int k = 0; k < 3; k++) {
            PyObject *o;
            if (k == 0) o = st[i] == DS_INT ? PyLong_FromLongLong(sv[i]) : NULL;
            else if (k == 1) o = lt[i] == DS_INT ? PyLong_FromLongLong(li[i])
                                 : lt[i] == DS_FLOAT ? PyFloat_FromDouble(lf[i]) : NULL;
            else o = sf[i] < 0 ? NULL : PyBool_FromLong(sf[i]);
            if (!o) {
                if (PyErr_Occurred()) goto error_d;
                continue;
            }
            if (!d && !(d = PyDict_New())) {
                Py_DECREF(o);
                return -1;
            }
            int bad = PyDict_SetItem(d, x->keys[k], o);
            Py_DECREF(o);
            if (bad) goto error_d;
        }
        /* the request's record and the response's share the dict, as in _columns */
        for (int k = 0; k < 1 + (rl[i] > 0) && d; k++) {
            PyObject *key = PyLong_FromSsize_t(x->record + k);
            if (!key) goto error_d;
            int bad = PyDict_SetItem(x->extras, key, d);
            Py_DECREF(key);
            if (bad) goto error_d;
        }
        x->record += 1 + (rl[i] > 0);
        Py_XDECREF(d);
        continue;
    error_d:
        Py_XDECREF(d);
        return -1;
    }
    return 0;
}

static const char RECORDER_DOC[] =
    "recorder_doc(data, release, min_split=-1) -> tuple | None\n\n"
    "The usual cassette (a JSON object whose interactions all have a request) compacted and\n"
    "read in one pass: (the compacted cassette as msgspec.json.format(indent=-1) gives it;\n"
    "in it, request starts, request lengths, response starts, response lengths (0: none) as\n"
    "int64; the sse flags as int8 (-1 none, 0 false, 1 true); the extras by record number\n"
    "(each interaction's request, then its response where it has one): a dict of status,\n"
    "latency_ms and sse, each where the cassette has it (not null), one per interaction\n"
    "that has any, its two records sharing it). None for any other document. ``release``,\n"
    "``min_split``, ``at``: as for inspector_doc.";

static const DocPass RECORDER = {R_N, rec_entry, rec_tail, rec_doc, rec_extras, rec_join,
                                 {"status", "latency_ms", "sse"}};

static PyObject *py_recorder_doc(PyObject *self, PyObject *args) {
    PyObject *flat, *res = NULL;
    Py_buffer bb;
    Part a;
    Extras x;
    (void)self;
    int r = doc_pass(args, &RECORDER, &bb, &a, &x, &flat);
    if (r <= 0) {
        if (r < 0) return NULL;
        Py_RETURN_NONE;
    }
    if (!(res = PyTuple_New(R_OUT + 2))) goto error;
    PyTuple_SET_ITEM(res, R_OUT + 1, x.extras);
    x.extras = NULL;
    for (int k = 0; k < R_OUT; k++) {
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
    Py_XDECREF(res);
    Py_XDECREF(flat);  /* never in res: it goes in last, just before the return */
    return NULL;
}

#endif
