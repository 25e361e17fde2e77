/* The entries of the Inspector export and the cassette read on two threads, without the
 * GIL (docinspector.h, docrecorder.h).
 *
 * Thread A (the caller's) reads the document from its start, as the one-thread pass.
 * Thread B starts at a guessed entry start a little before the middle (split_point) and
 * reads the entries from there, then what follows them (the array's close, the rest of
 * the document, its end) with every check of the one-thread pass. The guess is verified:
 * A stops when its place after an entry (past the comma) is B's start exactly, and B's
 * entries are the rest of the array; if A passes B's start without landing on it, B is
 * told to stop, its work is thrown away, and A reads on alone (split_stop). The answer is
 * the one-thread pass's either way: A's entries and B's read the same bytes with the same
 * per-entry rules; only where they are written differs (the join, ins_join / rec_join,
 * puts them together: kinds renumbered, offsets shifted).
 *
 * Output: a compacted prefix is never longer than its input, so B writes at the offset of
 * its input start in the one output buffer, behind anything A can write while A's input
 * is before B's start; after the join, one memmove closes the gap and B's offsets are
 * shifted by it. A's one entry that may cross B's start (or that fails while B runs) is
 * read again after B stopped: it may have read or written bytes B wrote (a race the answer
 * does not depend on: whatever A read there, that entry ends past B's start or fails, and
 * both lead to B stopped and the entry read again; an entry that ends on B's start never
 * passed it, in input or output). Each thread lets its own input pages go behind it and
 * makes its own output pages ahead (ds_release).
 *
 * No Python object is made on B, nor on A without the GIL: the extras are made from the
 * arrays, A's entries' while B reads on, the rest after the join. Where there are no
 * threads (threads.h: MN_THREADS 0, or thread creation fails), or the document is small,
 * A reads it all: the one-thread pass. */
#ifndef MCP_NOTEBOOK_DOCSPLIT_H
#define MCP_NOTEBOOK_DOCSPLIT_H
#include "docscan.h"
#include "threads.h"

#define DS_COLS 12  /* the most arrays a pass keeps per entry */
#define DS_KINDS 16  /* distinct entry kinds (the Inspector's "direction") taken */

/* One thread's part of a pass: its cursor and output, its arrays (one value per entry
 * each), and the Inspector's kinds met in it (texts in this part's output). */
typedef struct Part {
    Pass ps;
    Grow col[DS_COLS];
    int n_cols;
    cptr kinds[DS_KINDS], kinds_end[DS_KINDS];
    int n_kinds;
    /* one entry, c.p at its first byte: 0, or -1 (not taken, or no memory) */
    int (*entry)(struct Part *t);
} Part;

typedef struct Split {
    Part b;
    cptr b_start;      /* B's first entry (NULL: no B) */
    int tried;         /* whether B's start was looked for (once, at A's first entry) */
    int running;       /* B started and not joined */
    int b_result;      /* B's answer: 0 read to the document's end, -1 not taken, 2 stopped */
    int quit;          /* set by A (mn_flag_set): B stops after its current entry */
    long long min_split;  /* the least input length read on two threads; -1: never */
    long long b_off;   /* B's start as an offset in the input */
    long long at;      /* where B starts (an offset in the input, for the tests); -1: guessed */
    int outcome;       /* SPLIT_ONE, ... (doc_split_last) */
    /* B's reading after its entries' array is closed: 0 to the document's end, or -1 */
    int (*tail)(Part *t);
#if MN_THREADS
    mn_thread th;
#endif
} Split;

/* a value appended to the part's column k (in an entry function: -1 for no memory) */
#define PART_PUT(k, type, v) do { type tmp_ = (v); \
    if (grow_put(&t->col[k], &tmp_, sizeof tmp_)) return -1; } while (0)

/* how the last pass went (doc_split_last): no B; B's part taken (A landed on its start);
 * B stopped (A passed its start) and its work thrown away; A landed but B's part or the
 * join refused the document */
enum { SPLIT_ONE, SPLIT_LANDED, SPLIT_STOPPED, SPLIT_B_REFUSED, SPLIT_JOIN_REFUSED };
static long long ds_last_at = -1;
static int ds_last_outcome = SPLIT_ONE;

static void part_free(Part *t) {
    for (int k = 0; k < t->n_cols; k++) {
        free(t->col[k].data);
        t->col[k].data = NULL;
        t->col[k].len = t->col[k].cap = 0;
    }
}

static int run_entries(Part *t, Split *sp, int *quit);

/* ---- B's start ---- */

static inline int ds_blank(unsigned char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* The first `,` blanks `{` blanks `"` in [p, end): its `{`, or NULL. Outside a string a
 * `{` after a comma starts an array's element (a `"` inside a string is escaped); the
 * depth is not known, and `,{` may end a string ("a,{" then its closing quote): a guess,
 * verified by A. */
static cptr any_start(cptr p, cptr end) {
    for (; p < end && (p = memchr(p, ',', (size_t)(end - p))) != NULL; p++) {
        cptr q = p + 1;
        while (q < end && ds_blank(*q)) q++;
        if (q >= end || *q != '{') continue;
        cptr r = q + 1;
        while (r < end && ds_blank(*r)) r++;
        if (r < end && *r == '"') return q;
    }
    return NULL;
}

/* The first place in [p, end) where `pat` (n bytes, starting with a comma) is: its start,
 * or NULL. */
static cptr find_bytes(cptr p, cptr end, const unsigned char *pat, size_t n) {
    for (; p + n <= end && (p = memchr(p, pat[0], (size_t)(end - p) - n + 1)) != NULL; p++)
        if (!memcmp(p, pat, n)) return p;
    return NULL;
}

/* B's start: an entry start in the window after 15/32 of the input, or NULL. `first` is
 * the first entry's `{`, `open` just after its array's `[`. Tried first: the bytes the
 * first entry starts with (a comma, the blanks after the `[`, the `{`, the blanks, the
 * first member's name): in an indented document the blanks give the depth; else any
 * `,{"`. */
static cptr split_point(cptr first, cptr open, cptr in0, cptr end) {
    unsigned char pat[96];
    size_t n = 0;
    /* a little before the middle: after its part A makes its entries' extras while B
     * reads on (at 1M entries, about a seventh of A's part) */
    cptr mid = in0 + (end - in0) / 32 * 15, lim = mid + (end - in0) / 8;
    if (mid <= first) mid = first + 1;
    if (lim > end) lim = end;
    if (mid >= lim) return NULL;
    cptr q = first + 1;
    while (q < end && ds_blank(*q)) q++;
    if (q < end && *q == '"') {
        cptr z = q + 1;
        while (z < end && *z != '"' && *z != '\\') z++;
        if (z < end && *z == '"' &&
            (size_t)(first - open) + (size_t)(z + 1 - first) < sizeof pat) {
            pat[n++] = ',';
            memcpy(pat + n, open, (size_t)(first - open));
            n += (size_t)(first - open);
            memcpy(pat + n, first, (size_t)(z + 1 - first));
            n += (size_t)(z + 1 - first);
        }
    }
    if (n) {
        cptr at = find_bytes(mid, lim, pat, n);
        if (at) return at + 1 + (first - open);
    }
    return any_start(mid, lim);
}

/* ---- the two threads ---- */

#if MN_THREADS
static void *split_b(void *arg) {
    Split *sp = arg;
    int r = run_entries(&sp->b, NULL, &sp->quit);
    if (r == 0) r = sp->tail(&sp->b);
    sp->b_result = r;
    return NULL;
}
#endif

/* At A's first entry (c.p at its `{`, `open` just after the `[`): B started at a guessed
 * entry start, where the document is large enough and threads are there. */
static void split_start(Split *sp, Part *a, cptr open) {
    sp->tried = 1;
    sp->b_start = NULL;
#if MN_THREADS
    Pass *pa = &a->ps;
    cptr end = pa->c.end;
    if (sp->min_split < 0 || (long long)(end - pa->in0) < sp->min_split) return;
    cptr at = sp->at < 0 ? split_point(pa->c.p, open, pa->in0, end) : pa->in0 + sp->at;
    /* B's output is behind A's only where B starts after A's place */
    if (!at || at <= pa->c.p || at >= end) return;
    Part *b = &sp->b;
    memset(b, 0, sizeof *b);
    b->n_cols = a->n_cols;
    b->entry = a->entry;
    b->ps = *pa;
    b->ps.c.p = b->ps.kept = b->ps.in0 = at;
    b->ps.o = b->ps.filled = pa->o0 + (at - pa->in0);
    sp->b_start = at;
    sp->b_off = at - pa->in0;
    sp->quit = 0;
    sp->b_result = -1;
    pa->oend = b->ps.o;  /* A makes its output's pages ahead up to B's only */
    if (mn_thread_start(&sp->th, split_b, sp)) {  /* no thread: one */
        sp->b_start = NULL;
        pa->oend = b->ps.oend;
        return;
    }
    sp->running = 1;
    sp->outcome = SPLIT_LANDED;
#else
    (void)a;
    (void)open;
#endif
}

/* B told to stop and joined; its work thrown away (A reads on alone). */
static void split_stop(Split *sp, Part *a) {
#if MN_THREADS
    mn_flag_set(&sp->quit);
    mn_thread_join(sp->th);
    sp->running = 0;
    sp->outcome = SPLIT_STOPPED;
    a->ps.oend = sp->b.ps.oend;
    part_free(&sp->b);
#else
    (void)sp;
    (void)a;
#endif
}

/* After A landed on B's start, while B reads: the output's pages between A's end and
 * B's start made (the memmove after the join writes them). */
static void split_fill(Split *sp, Part *a) {
    ds_fill(a->ps.filled > a->ps.o ? a->ps.filled : a->ps.o,
            sp->b.ps.o0 + (sp->b_start - a->ps.in0));
}

/* B joined: its answer (0 read to the end, -1 refused). */
static int split_wait(Split *sp) {
#if MN_THREADS
    mn_thread_join(sp->th);
    sp->running = 0;
    return sp->b_result;
#else
    (void)sp;
    return -1;
#endif
}

/* The last pass's outcome noted (with the GIL), after A's answer `r` (1: landed), B's
 * `rb` and the join's `joined` (0 taken). */
static void split_note(const Split *sp, int r, int rb, int joined) {
    ds_last_at = sp->b_start ? sp->b_off : -1;
    ds_last_outcome = !sp->b_start ? SPLIT_ONE
                      : r != 1 ? sp->outcome
                      : rb ? SPLIT_B_REFUSED
                      : joined ? SPLIT_JOIN_REFUSED : SPLIT_LANDED;
}

static const char DOC_SPLIT_LAST_DOC[] =
    "doc_split_last() -> (int, int)\n\n"
    "How the last inspector_doc or recorder_doc went (for the tests): B's start as an\n"
    "offset in the input (-1: none) and the outcome: 0 one thread, 1 B's part taken (A\n"
    "landed on its start), 2 B stopped (A passed its start; A read on alone), 3 A landed\n"
    "but B's part refused the document, 4 A landed but the join refused it.";

static PyObject *py_doc_split_last(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
    return Py_BuildValue("(Li)", ds_last_at, ds_last_outcome);
}

/* ---- the entries ---- */

/* The entries from c.p (at the first one's first byte) to their array's close, each read
 * by t->entry. 0: past the `]`; -1: not the usual document; 1 (A): landed on B's start;
 * 2 (B): told to stop. `sp`: A's split (NULL on B or one thread); `quit`: B's flag. */
static int run_entries(Part *t, Split *sp, int *quit) {
    Cur *c = &t->ps.c;
    size_t lens[DS_COLS];
    if (sp && !sp->tried) {
        cptr open = c->p;
        while (open > t->ps.in0 && ds_blank(open[-1])) open--;
        split_start(sp, t, open);
    }
    for (;;) {
        cptr at = c->p;
        unsigned char *o = t->ps.o;
        int kinds = t->n_kinds;
        if (sp && sp->running)
            for (int k = 0; k < t->n_cols; k++) lens[k] = t->col[k].len;
        int more = t->entry(t) ? -1 : ds_after(&t->ps, ']');
        if (sp && sp->running) {
            if (more > 0 && c->p == sp->b_start) return 1;
            if (more <= 0 || c->p > sp->b_start) {
                /* past B's start, or failed: B stopped, this entry read again alone (it
                 * may have read or written bytes B wrote) */
                split_stop(sp, t);
                c->p = at;
                t->ps.o = o;
                t->n_kinds = kinds;
                for (int k = 0; k < t->n_cols; k++) t->col[k].len = lens[k];
                continue;
            }
        }
        if (more < 0) return -1;
        ds_release(&t->ps);
#if MN_THREADS
        if (quit && mn_flag_get(quit)) return 2;
#else
        (void)quit;
#endif
        if (!more) return 0;
    }
}

/* ---- the extras (with the GIL) ---- */

/* The extras dict of a pass, made a part at a time: A's entries' while B reads, then the
 * rest after the join. */
typedef struct {
    PyObject *extras, *keys[3], *kdicts[DS_KINDS];
    size_t done;          /* the entries whose extras are made */
    Py_ssize_t record;    /* the first record of the next entry */
} Extras;

/* -1 with an exception set (no memory). */
static int extras_begin(Extras *x, const char *k0, const char *k1, const char *k2) {
    const char *names[3] = {k0, k1, k2};
    memset(x, 0, sizeof *x);
    if (!(x->extras = PyDict_New())) return -1;
    for (int k = 0; k < 3; k++)
        if (names[k] && !(x->keys[k] = PyUnicode_InternFromString(names[k]))) return -1;
    return 0;
}

static void extras_free(Extras *x) {
    Py_CLEAR(x->extras);
    for (int k = 0; k < 3; k++) Py_CLEAR(x->keys[k]);
    for (int k = 0; k < DS_KINDS; k++) Py_CLEAR(x->kdicts[k]);
}

/* split_run's answer where the extras could not be made (an exception is set) */
#define SPLIT_PY_ERROR (-100)

/* The pass `doc` over the document (A), on two threads where it starts B: A's entries'
 * extras made while B reads, then B waited for and its part joined to A's. The pass's
 * answer (0: taken, < 0: not), or SPLIT_PY_ERROR. */
static int split_run(Part *a, Split *sp, Extras *x, int (*doc)(Part *, Split *),
                     int (*extras)(Extras *, const Part *), int (*join)(Part *, Split *)) {
    int r, rb = 0, joined = 0, bad = 0;
    Py_BEGIN_ALLOW_THREADS
    r = doc(a, sp);
    if (r == 1) split_fill(sp, a);
    Py_END_ALLOW_THREADS
    if (r == 1) {
        bad = extras(x, a);  /* A's entries' while B reads */
        Py_BEGIN_ALLOW_THREADS
        rb = split_wait(sp);
        joined = rb == 0 ? join(a, sp) : -1;
        part_free(&sp->b);
        Py_END_ALLOW_THREADS
        if (bad) return SPLIT_PY_ERROR;
    }
    split_note(sp, r, rb, joined);
    return r == 1 ? joined : r;
}

/* ---- an entry point ---- */

/* What tells the document passes' entry points apart (docinspector.h, docrecorder.h). */
typedef struct {
    int n_cols;
    int (*entry)(Part *t);
    int (*tail)(Part *t);
    int (*doc)(Part *, Split *);
    int (*extras)(Extras *, const Part *);
    int (*join)(Part *, Split *);
    const char *keys[3];  /* the extras' member names (NULL: fewer) */
} DocPass;

/* What doc_pass holds once it read the usual document. */
static void doc_pass_free(Py_buffer *bb, Part *a, Extras *x) {
    PyBuffer_Release(bb);
    part_free(a);
    extras_free(x);
}

/* An entry point's arguments (data, release[, min_split, at]) read, and the pass `d` run
 * over the document with every extra made. 1: the usual document, read (bb, a, x and
 * *flat then held: the caller makes its answer, then doc_pass_free); 0: another document,
 * left to the general path; -1: an exception is set. Nothing is held on 0 or -1. */
static int doc_pass(PyObject *args, const DocPass *d, Py_buffer *bb, Part *a, Extras *x,
                    PyObject **flat) {
    PyObject *base;
    int release, r;
    long long min_split = -1, at = -1;
    Split sp;
    *flat = NULL;
    if (!PyArg_ParseTuple(args, "Op|LL", &base, &release, &min_split, &at)) return -1;
    if (PyObject_GetBuffer(base, bb, PyBUF_SIMPLE)) return -1;
    memset(a, 0, sizeof *a);
    memset(&sp, 0, sizeof sp);
    a->n_cols = d->n_cols;
    a->entry = d->entry;
    sp.min_split = min_split;
    sp.at = at;
    sp.tail = d->tail;
    if (extras_begin(x, d->keys[0], d->keys[1], d->keys[2]) ||
        ds_begin(&a->ps, bb, flat, release))
        r = SPLIT_PY_ERROR;
    else
        r = split_run(a, &sp, x, d->doc, d->extras, d->join);
    if (r >= 0 && d->extras(x, a)) r = SPLIT_PY_ERROR;  /* the rest of the entries' */
    if (r >= 0) return 1;
    /* not the usual document (or no memory for the arrays): the general path */
    doc_pass_free(bb, a, x);
    Py_CLEAR(*flat);
    return r == SPLIT_PY_ERROR ? -1 : 0;
}

/* ---- the join ---- */

/* After A landed and B read to the end: B's output moved down to A's end (one memmove);
 * how far (B's offsets are shifted by it). */
static int64_t split_close_gap(Split *sp, Part *a) {
    unsigned char *b0 = sp->b.ps.o0 + (sp->b_start - a->ps.in0);
    size_t n = (size_t)(sp->b.ps.o - b0);
    int64_t shift = b0 - a->ps.o;
    if (shift) memmove(a->ps.o, b0, n);
    a->ps.o += n;
    return shift;
}

enum { SHIFT_ALL, SHIFT_IF_LONG, SHIFT_IF_TWO };

/* B's column k (int64 offsets) appended to A's, each value less `shift` where `how` says:
 * every one, those whose entry's int64 in column `when` is non-zero (a response's start:
 * 0 for none), or those whose int8 in column `when` is 2 (a stamp left to Python). */
static int split_append_shifted(Part *a, const Part *b, int k, int64_t shift, int how,
                                int when) {
    size_t n = b->col[k].len / sizeof(int64_t), at = a->col[k].len;
    if (!n) return 0;
    if (grow_put(&a->col[k], b->col[k].data, b->col[k].len)) return -1;
    int64_t *v = (int64_t *)(a->col[k].data + at);
    const int64_t *w64 = (const int64_t *)b->col[when].data;
    const int8_t *w8 = (const int8_t *)b->col[when].data;
    for (size_t i = 0; i < n; i++)
        if (how == SHIFT_ALL || (how == SHIFT_IF_LONG ? w64[i] != 0 : w8[i] == 2))
            v[i] -= shift;
    return 0;
}

/* B's column k appended to A's as it is. */
static int split_append(Part *a, const Part *b, int k) {
    return b->col[k].len ? grow_put(&a->col[k], b->col[k].data, b->col[k].len) : 0;
}

#endif
