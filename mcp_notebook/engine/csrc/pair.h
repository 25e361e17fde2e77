/* pair.h: the walk of engine/walks.py (pair()), on integer codes, in one pass.
 *
 * The reference walk keeps, under each key (session, requester, id key), the open
 * requests (not cancelled, and cancelled, each in request order) and the last answered
 * one; and the requests carrying a progress token, in flight and answered. Here the keys
 * are packed into 64-bit integers and the dicts of one key are one open-addressing table
 * whose slot holds their values (the open requests not cancelled and the last answered
 * one; the cancelled ones in a second table, looked at only while some are open); a
 * dict entry popped is a value set to -1. A queue of open requests is one number: most
 * keys have one open request at a time, and the row is the number; a reused id chains
 * the rows (see queue_push), a link each, not a pass. The walk's decisions
 * are the reference's, branch for branch, so its rows and findings are the same; the
 * finding texts are written by the caller (engine/pairing.py) from the rule numbers
 * and the seqs given here.
 */
#ifndef MCP_PAIR_H
#define MCP_PAIR_H

#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "portable.h"
#include "vocab.h" /* Kind, Outcome, PairFinding: generated from protocol/vocab.py */

static inline uint64_t mix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* (session, requester, code) as one nonzero key; sessions below 2^29 (checked by the
 * caller), requester -1/0/1, code -1 and up */
static inline uint64_t pack_key(int32_t sess, int dir, int32_t code) {
    return (1ULL << 63) | ((uint64_t)(uint32_t)(sess + 1) << 34) |
           ((uint64_t)(uint32_t)(dir + 1) << 32) | (uint64_t)(uint32_t)(code + 1);
}

/* ---- key -> two rows (-1: none): the queue of open requests not cancelled (a, see
 * queue_push) and the last answered (b); or the queue of the cancelled ones (a); or a
 * token's request in flight (a) and answered (b). Sized for `n` keys up front, grown (doubled) past 2/3 full: a
 * table is sized up front when its keys are known to be many, and starts small when
 * they may be few (each page of a table costs a page fault when first touched). ---- */

typedef struct {
    uint64_t key;
    int32_t a, b;
} Slot;

typedef struct {
    Slot *slot;
    size_t mask, n;
} KeyMap;

static size_t table_cap(size_t n) {
    size_t cap = 16;
    while (2 * cap < 3 * n + 32) cap <<= 1; /* at most 2/3 full */
    return cap;
}

static int keymap_init(KeyMap *m, size_t n) {
    size_t cap = table_cap(n);
    m->slot = calloc(cap, sizeof *m->slot);
    m->mask = cap - 1;
    m->n = 0;
    return m->slot ? 0 : -1;
}

static void keymap_free(KeyMap *m) { free(m->slot); }

static inline void keymap_prefetch(const KeyMap *m, uint64_t k) {
    MN_PREFETCH_W(&m->slot[mix64(k) & m->mask]);
}

static int keymap_grow(KeyMap *m) {
    KeyMap g;
    if (keymap_init(&g, 2 * m->n)) return -1;
    for (size_t i = 0; i <= m->mask; i++) {
        if (!m->slot[i].key) continue;
        size_t j = mix64(m->slot[i].key) & g.mask;
        while (g.slot[j].key) j = (j + 1) & g.mask;
        g.slot[j] = m->slot[i];
    }
    g.n = m->n;
    free(m->slot);
    *m = g;
    return 0;
}

/* the slot of `k`; made (holding -1, -1) when absent and `add` is set, else NULL (and
 * NULL when growing the table failed: out of memory) */
static inline Slot *keymap_at(KeyMap *m, uint64_t k, int add) {
    size_t i = mix64(k) & m->mask;
    while (m->slot[i].key) {
        if (m->slot[i].key == k) return &m->slot[i];
        i = (i + 1) & m->mask;
    }
    if (!add) return NULL;
    if (3 * (m->n + 1) > 2 * (m->mask + 1)) {
        if (keymap_grow(m)) return NULL;
        return keymap_at(m, k, add);
    }
    m->n++;
    m->slot[i].key = k;
    m->slot[i].a = m->slot[i].b = -1;
    return &m->slot[i];
}

/* A queue of request rows (in request order) in one number: -1 empty; r >= 0 the one
 * row r; -2 - h the rows from h on, each linked to the next by nxt[], the last one
 * tl[h]. One open request (the usual case) touches no other memory. */
static inline int32_t queue_last(int32_t q, const int32_t *tl) {
    return q >= -1 ? q : tl[-2 - q];
}

static inline int32_t queue_first(int32_t q) { return q >= -1 ? q : -2 - q; }

static inline void queue_push(int32_t *q, int32_t *nxt, int32_t *tl, int32_t r) {
    if (*q == -1) {
        *q = r;
    } else if (*q >= 0) {
        nxt[*q] = r;
        tl[*q] = r;
        *q = -2 - *q;
    } else {
        int32_t h = -2 - *q;
        nxt[tl[h]] = r;
        tl[h] = r;
    }
}

static inline int32_t queue_pop(int32_t *q, const int32_t *nxt, int32_t *tl) {
    int32_t v = *q;
    if (v >= 0) {
        *q = -1;
        return v;
    }
    int32_t h = -2 - v, n = nxt[h];
    if (tl[h] == n) {
        *q = n;
    } else {
        tl[n] = tl[h];
        *q = -2 - n;
    }
    return h;
}

/* The latest open request under `k` (-1: none open): `ids` holds the queues not
 * cancelled, `cq` the cancelled ones (`n_cq` requests in them). */
static inline int32_t latest_open(KeyMap *ids, KeyMap *cq, Py_ssize_t n_cq, uint64_t k,
                                  const int32_t *tl) {
    Slot *p = keymap_at(ids, k, 0);
    int32_t r = p ? queue_last(p->a, tl) : -1;
    if (n_cq && p) {
        Slot *c = keymap_at(cq, k, 0);
        int32_t rc = c ? queue_last(c->a, tl) : -1;
        if (rc > r) r = rc;
    }
    return r;
}

/* ---- str -> code, by Python's hash and equality (strs are borrowed) ---- */

typedef struct {
    PyObject *obj;
    Py_hash_t hash;
    int32_t code;
} StrSlot;

typedef struct {
    StrSlot *slot;
    size_t mask;
    int32_t n;
} StrTab;

static int strtab_init(StrTab *t, size_t n) {
    size_t cap = table_cap(n);
    t->slot = calloc(cap, sizeof *t->slot);
    t->mask = cap - 1;
    t->n = 0;
    return t->slot ? 0 : -1;
}

static void strtab_free(StrTab *t) { free(t->slot); }

static int strtab_grow(StrTab *t) {
    StrTab g;
    if (strtab_init(&g, 2 * (size_t)t->n)) return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        if (!t->slot[i].obj) continue;
        size_t j = mix64((uint64_t)t->slot[i].hash) & g.mask;
        while (g.slot[j].obj) j = (j + 1) & g.mask;
        g.slot[j] = t->slot[i];
    }
    g.n = t->n;
    free(t->slot);
    *t = g;
    return 0;
}

/* The code of `s`; with `add`, a new one when absent. -1: absent; -2: a Python error. */
static int32_t strtab_code(StrTab *t, PyObject *s, int add) {
    Py_hash_t h = PyObject_Hash(s);
    if (h == -1) return -2;
    size_t i = mix64((uint64_t)h) & t->mask;
    for (; t->slot[i].obj; i = (i + 1) & t->mask) {
        StrSlot *e = &t->slot[i];
        if (e->hash != h) continue;
        if (e->obj == s) return e->code;
        int eq = PyObject_RichCompareBool(e->obj, s, Py_EQ);
        if (eq < 0) return -2;
        if (eq) return e->code;
    }
    if (!add) return -1;
    if (3 * ((size_t)t->n + 1) > 2 * (t->mask + 1)) {
        if (strtab_grow(t)) {
            PyErr_NoMemory();
            return -2;
        }
        return strtab_code(t, s, add);
    }
    t->slot[i] = (StrSlot){s, h, t->n};
    return t->n++;
}

/* The codes of objs[0..n) into out (with `add`, new codes for new strs). The str objects
 * and their slots are fetched ahead: a table this size is mostly cache misses. */
static int strtab_codes(StrTab *t, PyObject *const *objs, Py_ssize_t n, int32_t *out, int add) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + 16 < n) MN_PREFETCH(objs[i + 16]);
        if (i + 8 < n && PyUnicode_CheckExact(objs[i + 8])) {
            Py_hash_t h = ((PyASCIIObject *)objs[i + 8])->hash;
            if (h != -1) MN_PREFETCH(&t->slot[mix64((uint64_t)h) & t->mask]);
        }
        if ((out[i] = strtab_code(t, objs[i], add)) == -2) return -1;
    }
    return 0;
}

/* ---- growable findings: (seq, rule, related) and two numbers ---- */

typedef struct {
    int64_t *v;   /* 3 per finding */
    double *x;    /* 2 per finding */
    Py_ssize_t n, cap;
} Findings;

static int finding(Findings *f, int64_t seq, int rule, int64_t related, double a, double b) {
    if (f->n == f->cap) {
        Py_ssize_t cap = f->cap ? 2 * f->cap : 1024;
        int64_t *v = realloc(f->v, (size_t)cap * 3 * sizeof *v);
        if (!v) return -1;
        f->v = v;
        double *x = realloc(f->x, (size_t)cap * 2 * sizeof *x);
        if (!x) return -1;
        f->x = x;
        f->cap = cap;
    }
    f->v[3 * f->n] = seq;
    f->v[3 * f->n + 1] = rule;
    f->v[3 * f->n + 2] = related;
    f->x[2 * f->n] = a;
    f->x[2 * f->n + 1] = b;
    f->n++;
    return 0;
}

/* ---- the walk ---- */

typedef struct {
    /* in: one entry per frame */
    Py_ssize_t n;
    const int8_t *kind, *dir;
    const int32_t *session, *id_code, *method;
    const uint8_t *tool;
    /* in: the few frames with a ref (token or cancelled id) and with a progress value */
    const int64_t *ref_rows, *prog_rows;
    Py_ssize_t n_ref, n_prog;
    PyObject *ref_vals;   /* list of str, one per ref row */
    const double *prog_vals;
    PyObject *id_uniques; /* list of str: the id key of each code */
    PyObject *id_index;   /* dict id key -> code (the loader's), or NULL: a table made here */
    int32_t null_code, cancel_code, progress_code, init_code;
    PyObject *twin;       /* callable: id key -> its other-type twin or None */
} PairIn;

typedef struct {
    /* per request row, in request order */
    int64_t *rseq, *resp, *canc, *pcount;
    int8_t *out, *rdir;
    int32_t *rsess, *rmeth, *rtok;
    int32_t *nxt, *tl; /* the queues of open requests (see queue_push) */
    double *last;
    Py_ssize_t n_req;
    /* orphan and duplicate rows, in response order */
    int64_t *eseq, *ereq;
    int8_t *eout;
    Py_ssize_t n_extra;
    Findings f;
    StrTab ids;
    int ids_ready;
} PairState;

#define PAIR_AHEAD 16 /* frames between a slot's prefetch and its use */

static inline int opp(int d) { return d == 0 ? 1 : d == 1 ? 0 : d; }

/* The table of every id key, made the first time it is needed (a cancel, an orphan's
 * twin, the null id) when the caller has no dict of them. 0: ready; -1: a Python error. */
static int ids_ready(const PairIn *in, PairState *st) {
    if (st->ids_ready) return 0;
    Py_ssize_t u = PyList_GET_SIZE(in->id_uniques);
    int32_t *got = malloc((size_t)(u + 1) * sizeof *got);
    if (!got || strtab_init(&st->ids, (size_t)u)) {
        free(got);
        PyErr_NoMemory();
        return -1;
    }
    st->ids_ready = 1;
    int bad = strtab_codes(&st->ids, &PyList_GET_ITEM(in->id_uniques, 0), u, got, 1);
    /* the keys are distinct: each one's code is its place in the list */
    for (Py_ssize_t k = 0; !bad && k < u; k++)
        if (got[k] != k) {
            PyErr_SetString(PyExc_ValueError, "pair: the id keys are not distinct");
            bad = -1;
        }
    free(got);
    return bad;
}

/* The code of an id key's text (-1: no frame has it; -2: a Python error). */
static int32_t id_code_of(const PairIn *in, PairState *st, PyObject *s) {
    if (in->id_index) {
        PyObject *v = PyDict_GetItemWithError(in->id_index, s);
        if (!v) return PyErr_Occurred() ? -2 : -1;
        long c = PyLong_AsLong(v);
        if (c == -1 && PyErr_Occurred()) return -2;
        if (c < 0 || c >= PyList_GET_SIZE(in->id_uniques)) {
            PyErr_SetString(PyExc_ValueError, "pair: id_index names a code out of range");
            return -2;
        }
        return (int32_t)c;
    }
    return ids_ready(in, st) ? -2 : strtab_code(&st->ids, s, 0);
}

/* The codes of the id keys objs[0..m) (see id_code_of). 0, or -1: a Python error. */
static int id_codes(const PairIn *in, PairState *st, PyObject *const *objs, Py_ssize_t m,
                    int32_t *out) {
    if (!in->id_index) return ids_ready(in, st) || strtab_codes(&st->ids, objs, m, out, 0);
    for (Py_ssize_t k = 0; k < m; k++)
        if ((out[k] = id_code_of(in, st, objs[k])) == -2) return -1;
    return 0;
}

static int pair_walk(const PairIn *in, PairState *st) {
    Py_ssize_t n = in->n, n_req = 0, n_resp = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        n_req += in->kind[i] == K_REQUEST;
        n_resp += in->kind[i] == K_RESULT || in->kind[i] == K_ERROR;
    }
    size_t r1 = (size_t)n_req + 1, e1 = (size_t)n_resp + 1;
    st->rseq = malloc(r1 * 8); st->resp = malloc(r1 * 8); st->canc = malloc(r1 * 8);
    st->pcount = calloc(r1, 8); st->out = malloc(r1); st->rdir = malloc(r1);
    st->rsess = malloc(r1 * 4); st->rmeth = malloc(r1 * 4); st->rtok = malloc(r1 * 4);
    st->last = malloc(r1 * 8); st->nxt = malloc(r1 * 4); st->tl = malloc(r1 * 4);
    st->eseq = malloc(e1 * 8); st->ereq = malloc(e1 * 8); st->eout = malloc(e1);
    KeyMap ids = {0}, cq = {0}, toks_at = {0}; /* by id: open/done, cancelled; by token */
    Py_ssize_t n_cq = 0; /* requests in the queues of cq */
    StrTab toks = {0};
    int32_t *refc = NULL;
    int failed = -1;
    if (!st->rseq || !st->resp || !st->canc || !st->pcount || !st->out || !st->rdir ||
        !st->rsess || !st->rmeth || !st->rtok || !st->last || !st->nxt || !st->tl || !st->eseq || !st->ereq ||
        !st->eout || keymap_init(&ids, (size_t)n_req) || keymap_init(&cq, 0) || keymap_init(&toks_at, 0) ||
        strtab_init(&toks, 0)) {
        PyErr_NoMemory();
        goto end;
    }
    /* the ref of each ref row as a code: a cancel's among the id keys (-1: no frame has
     * it), any other (a progress token) among the tokens */
    refc = malloc((size_t)(in->n_ref + 1) * sizeof *refc);
    PyObject **objs = malloc((size_t)(in->n_ref + 1) * sizeof *objs);
    Py_ssize_t *at = malloc((size_t)(in->n_ref + 1) * sizeof *at);
    int32_t *got = malloc((size_t)(in->n_ref + 1) * sizeof *got);
    int bad = !refc || !objs || !at || !got;
    if (bad) PyErr_NoMemory();
    for (int cancels = 0; cancels < 2 && !bad; cancels++) {
        Py_ssize_t m = 0;
        for (Py_ssize_t q = 0; q < in->n_ref; q++) {
            int64_t r = in->ref_rows[q];
            int is_cancel = in->kind[r] == K_NOTIFICATION && in->method[r] >= 0 &&
                            in->method[r] == in->cancel_code;
            if (is_cancel == cancels) {
                objs[m] = PyList_GET_ITEM(in->ref_vals, q);
                at[m++] = q;
            }
        }
        if (!m) continue;
        bad = cancels ? id_codes(in, st, objs, m, got) : strtab_codes(&toks, objs, m, got, 1);
        for (Py_ssize_t q = 0; q < m && !bad; q++) refc[at[q]] = got[q];
    }
    free(objs);
    free(at);
    free(got);
    if (bad) goto end;
    /* the code of the id key "null" (-2: to be found here, in the table of id keys) */
    int32_t null_code = in->null_code;
    if (null_code == -2) {
        null_code = -1;
        if (n_resp && PyList_GET_SIZE(in->id_uniques)) {
            PyObject *null = PyUnicode_FromString("null");
            if (!null) goto end;
            null_code = id_code_of(in, st, null);
            Py_DECREF(null);
            if (null_code == -2) goto end;
        }
    }
    Py_ssize_t pr = 0, pp = 0, nr = 0, ne = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* the table slot of a frame further on, fetched ahead: the walk's time is mostly
         * waiting for memory otherwise */
        Py_ssize_t j = i + PAIR_AHEAD;
        if (j < n && in->kind[j] <= K_ERROR && in->kind[j] != K_NOTIFICATION)
            keymap_prefetch(&ids, pack_key(in->session[j],
                                           in->kind[j] == K_REQUEST ? in->dir[j] : opp(in->dir[j]),
                                           in->id_code[j]));
        while (pr < in->n_ref && in->ref_rows[pr] < i) pr++;
        while (pp < in->n_prog && in->prog_rows[pp] < i) pp++;
        int has_ref = pr < in->n_ref && in->ref_rows[pr] == i;
        int32_t rc = has_ref ? refc[pr] : -1;
        int k = in->kind[i], d = in->dir[i];
        int32_t sess = in->session[i];
        if (k == K_REQUEST) {
            uint64_t key = pack_key(sess, d, in->id_code[i]);
            Slot *p = keymap_at(&ids, key, 1);
            if (!p) goto nomem;
            int32_t fly = queue_last(p->a, st->tl);
            if (n_cq) {
                Slot *c = keymap_at(&cq, key, 0);
                int32_t rc = c ? queue_last(c->a, st->tl) : -1;
                if (rc > fly) fly = rc;
            }
            if (fly >= 0) {
                if (finding(&st->f, i, PF_REQUEST_ID_IN_FLIGHT, st->rseq[fly], 0, 0)) goto nomem;
            } else if (p->b >= 0) {
                if (finding(&st->f, i, PF_REQUEST_ID_REUSED, st->rseq[p->b], 0, 0)) goto nomem;
            }
            int32_t r = (int32_t)nr++;
            st->rseq[r] = i; st->resp[r] = -1; st->canc[r] = -1; st->out[r] = O_UNANSWERED;
            st->rdir[r] = (int8_t)d; st->rsess[r] = sess; st->rmeth[r] = in->method[i];
            st->last[r] = NAN; st->rtok[r] = -1;
            queue_push(&p->a, st->nxt, st->tl, r);
            if (has_ref) {
                st->rtok[r] = rc;
                Slot *t = keymap_at(&toks_at, pack_key(sess, d, rc), 1);
                if (!t) goto nomem;
                t->a = r;
            }
        } else if (k == K_RESULT || k == K_ERROR) {
            int req = opp(d);
            int32_t ic = in->id_code[i];
            if (ic < 0 || ic == null_code) {
                st->eseq[ne] = i; st->ereq[ne] = -1; st->eout[ne++] = O_ORPHAN;
                continue;
            }
            uint64_t key = pack_key(sess, req, ic);
            Slot *p = keymap_at(&ids, key, 0);
            int32_t r = -1;
            /* first in, first out: the earliest open request not cancelled, else the
             * earliest cancelled one */
            if (p && p->a != -1) {
                r = queue_pop(&p->a, st->nxt, st->tl);
            } else if (p && n_cq) {
                Slot *c = keymap_at(&cq, key, 0);
                if (c && c->a != -1) {
                    r = queue_pop(&c->a, st->nxt, st->tl);
                    n_cq--;
                }
            }
            if (r >= 0) {
                p->b = r;
                st->resp[r] = i;
                if (st->out[r] != O_CANCELLED)
                    st->out[r] = k == K_ERROR ? O_ERROR : in->tool[i] ? O_TOOL_ERROR : O_RESULT;
                else if (finding(&st->f, i, PF_RESPONSE_AFTER_CANCEL, st->canc[r], 0, 0))
                    goto nomem;
                if (st->rtok[r] >= 0) {
                    Slot *t = keymap_at(&toks_at, pack_key(st->rsess[r], st->rdir[r], st->rtok[r]), 0);
                    if (t && t->a == r) {
                        t->b = r;
                        t->a = -1;
                    }
                }
            } else if (p && (r = p->b) >= 0) {
                if (finding(&st->f, i, PF_DUPLICATE_RESPONSE, st->resp[r], 0, 0)) goto nomem;
                st->eseq[ne] = i; st->ereq[ne] = st->rseq[r]; st->eout[ne++] = O_DUPLICATE;
            } else {
                int32_t mate = -1;
                PyObject *twin = PyObject_CallOneArg(in->twin,
                                                     PyList_GET_ITEM(in->id_uniques, ic));
                if (!twin) goto end;
                if (twin != Py_None) {
                    int32_t tc = id_code_of(in, st, twin);
                    if (tc >= 0) mate = latest_open(&ids, &cq, n_cq, pack_key(sess, req, tc), st->tl);
                    else if (tc == -2) {
                        Py_DECREF(twin);
                        goto end;
                    }
                }
                Py_DECREF(twin);
                if (mate >= 0 ? finding(&st->f, i, PF_ID_TYPE_MISMATCH, st->rseq[mate], 0, 0)
                              : finding(&st->f, i, PF_ORPHAN_RESPONSE, -1, 0, 0))
                    goto nomem;
                st->eseq[ne] = i; st->ereq[ne] = -1; st->eout[ne++] = O_ORPHAN;
            }
        } else if (k == K_NOTIFICATION && has_ref && in->method[i] >= 0) {
            int32_t m = in->method[i];
            if (m == in->cancel_code) {
                int32_t c = rc, r;
                uint64_t key = pack_key(sess, d, c);
                Slot *p = c >= 0 ? keymap_at(&ids, key, 0) : NULL;
                r = -1;
                /* the earliest open request not cancelled yet (it joins the cancelled
                 * ones), else the earliest cancelled one */
                if (p && p->a != -1) {
                    r = queue_pop(&p->a, st->nxt, st->tl);
                    Slot *q = keymap_at(&cq, key, 1);
                    if (!q) goto nomem;
                    queue_push(&q->a, st->nxt, st->tl, r);
                    n_cq++;
                } else if (p && n_cq) {
                    Slot *q = keymap_at(&cq, key, 0);
                    if (q) r = queue_first(q->a);
                }
                if (r >= 0) {
                    st->out[r] = O_CANCELLED;
                    st->canc[r] = i;
                    if (st->rmeth[r] == in->init_code &&
                        finding(&st->f, i, PF_CANCEL_INITIALIZE, st->rseq[r], 0, 0))
                        goto nomem;
                } else if (p && (r = p->b) >= 0) {
                    if (st->canc[r] < 0) st->canc[r] = i;
                    if (finding(&st->f, i, PF_CANCEL_AFTER_RESPONSE, st->rseq[r], 0, 0)) goto nomem;
                } else if (finding(&st->f, i, PF_CANCEL_UNKNOWN_REQUEST, -1, 0, 0)) {
                    goto nomem;
                }
            } else if (m == in->progress_code) {
                int32_t tc = rc, r;
                Slot *t = tc >= 0 ? keymap_at(&toks_at, pack_key(sess, opp(d), tc), 0) : NULL;
                if (t && (r = t->a) >= 0) {
                    st->pcount[r]++;
                    double v = pp < in->n_prog && in->prog_rows[pp] == i ? in->prog_vals[pp] : NAN;
                    if (!isnan(v) && !isnan(st->last[r]) && v <= st->last[r] &&
                        finding(&st->f, i, PF_PROGRESS_NOT_INCREASING, st->rseq[r], v, st->last[r]))
                        goto nomem;
                    if (!isnan(v)) st->last[r] = v;
                } else if (t && (r = t->b) >= 0) {
                    if (finding(&st->f, i, PF_PROGRESS_AFTER_RESPONSE, st->resp[r], 0, 0)) goto nomem;
                } else if (finding(&st->f, i, PF_PROGRESS_UNKNOWN_TOKEN, -1, 0, 0)) {
                    goto nomem;
                }
            }
        }
    }
    st->n_req = nr;
    st->n_extra = ne;
    failed = 0;
    goto end;
nomem:
    PyErr_NoMemory();
end:
    keymap_free(&ids);
    keymap_free(&cq);
    keymap_free(&toks_at);
    strtab_free(&toks);
    free(refc);
    return failed;
}

static void pair_state_free(PairState *st) {
    free(st->rseq); free(st->resp); free(st->canc); free(st->pcount); free(st->out);
    free(st->rdir); free(st->rsess); free(st->rmeth); free(st->rtok); free(st->last);
    free(st->nxt); free(st->tl);
    free(st->eseq); free(st->ereq); free(st->eout);
    free(st->f.v); free(st->f.x);
    if (st->ids_ready) strtab_free(&st->ids);
}

/* ---- directions: the walk of engine/walks.py (infer), on codes ----
 *
 * Per (session, id key): whether a c2s request used it, and the stack of the directions
 * of its requests not yet answered, as bits (depth at most 64: a deeper stack returns
 * -1 and the caller takes its numpy path). */

typedef struct {
    uint64_t key, bits;
    uint32_t depth, used;
} DirSlot;

/* out: the given direction codes (0 c2s, 1 s2c, -1 none) of n frames, filled in; mdir:
 * the direction of each method code (+1 slot at the end for no method; -1 both/unknown).
 * 0: done; -1: a stack deeper than 64 (out is then partly written); -2: no memory. */
static int infer_walk(Py_ssize_t n, const int8_t *kind, const int32_t *session,
                      const int32_t *id_code, const int32_t *method, const int8_t *mdir,
                      int32_t n_methods, int8_t *out) {
    size_t n_req = 0;
    for (Py_ssize_t i = 0; i < n; i++) n_req += kind[i] == K_REQUEST;
    size_t cap = table_cap(n_req), mask = cap - 1;
    DirSlot *t = calloc(cap, sizeof *t);
    if (!t) return -2;
    int status = 0;
    for (Py_ssize_t i = 0; i < n && !status; i++) {
        Py_ssize_t j = i + PAIR_AHEAD;
        if (j < n && kind[j] <= K_ERROR && kind[j] != K_NOTIFICATION)
            MN_PREFETCH_W(&t[mix64(pack_key(session[j], 0, id_code[j])) & mask]);
        int k = kind[i];
        if (k == K_REQUEST || k == K_NOTIFICATION) {
            uint64_t key = pack_key(session[i], 0, id_code[i]);
            DirSlot *e = NULL;
            if (k == K_REQUEST) {
                size_t h = mix64(key) & mask;
                while (t[h].key && t[h].key != key) h = (h + 1) & mask;
                e = &t[h];
                e->key = key;
            }
            int d = out[i];
            if (d < 0) {
                int32_t m = method[i];
                int md = mdir[m >= 0 && m < n_methods ? m : n_methods];
                d = md >= 0 ? md : (k == K_REQUEST && e->used) ? 1 : 0;
                out[i] = (int8_t)d;
            }
            if (e) {
                if (d == 0) e->used = 1;
                if (e->depth == 64) {
                    status = -1;
                    break;
                }
                e->bits = (e->bits << 1) | (uint64_t)(d & 1);
                e->depth++;
            }
        } else if ((k == K_RESULT || k == K_ERROR) && out[i] < 0) {
            uint64_t key = pack_key(session[i], 0, id_code[i]);
            size_t h = mix64(key) & mask;
            while (t[h].key && t[h].key != key) h = (h + 1) & mask;
            DirSlot *e = &t[h];
            if (e->key == key && e->depth) {
                out[i] = (int8_t)(1 - (int)(e->bits & 1));
                e->bits >>= 1;
                e->depth--;
            } else {
                out[i] = 1; /* most responses come from the server */
            }
        }
    }
    free(t);
    return status;
}

#endif
