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
 * reads it with msgspec as before. *
 * The pass touches no Python object: it notes where each string is, and the objects are
 * made after it (hs_objects), with the GIL. On a large document it runs on two threads
 * (hs_begin_second): the second reads the entries from a place near the middle that looks
 * like the start of one, and its work is used only where the first, reading from the
 * start, lands on that very place between two entries; otherwise the first reads on
 * alone. While the second runs, a text of the first half of 8 MiB or more (an HTTP+SSE
 * capture's one GET stream, most of its bytes, before the second half's start) has its
 * rest read by a helper thread from a place near its middle (hs_text_split), so that the
 * one stream does not keep the first half alone for most of the pass. Either way the
 * answer is the one-thread pass's, byte for byte. */
#ifndef MCP_NOTEBOOK_HARSCAN_H
#define MCP_NOTEBOOK_HARSCAN_H
#include "harvalues.h"
#include "threads.h"

/* One entry, as it is read. */
typedef struct {
    HarPass *h;
    HarRef ref;
    int64_t at[4];  /* post text start, end; reply text start, end (-2: no postData or
                     * no content, -1: a text absent or null) */
    double num[7];  /* time, then blocked, dns, connect, send, wait, receive (NaN: none) */
    double stamp;  /* startedDateTime in Unix seconds (NaN: not the usual stamp) */
    int incomplete, stamped, body;  /* body: 0 postData, 1 content */
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
        /* the content's kept; the postData's only checked */
        return hs_span(h, en->body ? &en->ref : NULL, HS_MIME);
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
    if (body) en->ref.content = 1;
    return members(c, 6, en, hs_body, &seen);
}

static int hs_request(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    HarEntry *en = ctx;
    HarPass *h = en->h;
    if (NAME_IS("method")) {
        ONCE(1);
        return hs_span(h, &en->ref, HS_METHOD);
    }
    if (NAME_IS("url")) {
        ONCE(2);
        return hs_span(h, &en->ref, HS_URL);
    }
    if (NAME_IS("postData")) {
        ONCE(4);
        return hs_body_value(c, en, 0);
    }
    if (NAME_IS("headers")) {
        ONCE(8);
        return hs_raw(c, h->base, &en->ref.rq_s, &en->ref.rq_e);
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
        en->ref.status = strtoll(tmp, NULL, 10);
        en->ref.has_status = 1;
        return 0;
    }
    if (NAME_IS("headers")) {
        ONCE(2);
        return hs_raw(c, h->base, &en->ref.rs_s, &en->ref.rs_e);
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
        if (hs_span(h, &en->ref, HS_STARTED)) return -1;
        /* the usual stamp read here (docscan.h's ds_stamp, as _time.read_times reads it);
         * any other text by Python */
        HarRef *f = &en->ref;
        if (f->esc[HS_STARTED] ||
            ds_stamp(h->base + f->s[HS_STARTED], h->base + f->e[HS_STARTED], &en->stamp))
            en->stamp = NAN;
        return 0;
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

/* One entry, c.p at its '{': read and appended to the pass's arrays. 0, -1 (the
 * document is not taken) or -2 (no memory for the arrays: not taken either). */
static int hs_one(HarPass *h) {
    HarEntry en;
    memset(&en, 0, sizeof en);
    en.h = h;
    for (int k = 0; k < HS_NSTR; k++) en.ref.s[k] = en.ref.e[k] = -1;
    en.ref.rq_s = en.ref.rq_e = en.ref.rs_s = en.ref.rs_e = -1;
    for (int k = 0; k < 4; k++) en.at[k] = -2;
    for (int k = 0; k < 7; k++) en.num[k] = NAN;
    en.stamp = NAN;
    int seen = 0;
    if (members(&h->c, 4, &en, hs_entry, &seen) || (seen & 7) != 7) return -1;
    unsigned char fl[2] = {(unsigned char)en.incomplete, (unsigned char)en.stamped};
    if (grow_put(&h->pos, en.at, sizeof en.at) || grow_put(&h->tim, en.num, sizeof en.num) ||
        grow_put(&h->flags, fl, 2) || grow_put(&h->refs, &en.ref, sizeof en.ref) ||
        grow_put(&h->stamps, &en.stamp, sizeof en.stamp))
        return -2;
    return 0;
}

/* ---- the two halves ---- */

/* how the two halves went, over the process's life: (second halves started, met by the
 * first, stopped because the first did not land on their start) */
static Py_ssize_t HS_COUNTS[4];

typedef struct {
    HarPass b;  /* the second half's pass */
#if MN_THREADS
    mn_thread th;
#endif
    int running, stop, r;
    int started, dropped;  /* counted in HS_COUNTS once the GIL is held again */
} HsSecond;

#if MN_THREADS
/* Where the second half may start: an entry's '{' near the middle of the input, found
 * by the bytes the first entry (at `first`) opens with: its '{', the blanks, its first
 * member's name and colon. A '{' followed by blanks and '"' is never inside a string (a
 * string holds '"' only escaped), nor is a blank other than a space; after a ',' it
 * opens an element of an array. Which array is not known: the first half checks it. NULL
 * where there is none or the pattern is not telling (an empty first entry). */
static cptr hs_candidate(cptr first, cptr end, cptr from) {
    Cur c = {first + 1, end, 0, NULL};
    ws(&c);
    cptr s, e;
    int esc;
    if (member_name(&c, &s, &e, &esc) || esc) return NULL;
    cptr pat = first;
    size_t n = (size_t)(e + 1 - first);  /* up to the name's closing quote */
    if (n > 256) return NULL;
    cptr stop = from + (end - from) / 2;  /* not past three quarters of the input */
    for (int tries = 0; tries < 64 && from < stop; tries++) {
        cptr q = memmem(from, (size_t)(end - from), pat, n);
        if (!q || q >= stop) return NULL;
        cptr b = q;
        while (b > first && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n' || b[-1] == '\r'))
            b--;
        if (b > first && b[-1] == ',') return q;
        from = q + 1;
    }
    return NULL;
}
#endif

static int hs_entries(HarPass *h);
static int hs_log(Cur *c, cptr name, size_t n, void *ctx, int *seen);
static int hs_doc(Cur *c, cptr name, size_t n, void *ctx, int *seen);

/* The rest of the members of an object after one read, c->p just past that member's
 * value, with `member` and `seen` as members() has them. */
static int hs_members_rest(Cur *c, int depth, void *ctx, MemberFn member, int *seen) {
    int more;
    while ((more = after_item(c, '}')) > 0) {
        cptr s, e;
        int esc;
        if (member_name(c, &s, &e, &esc) || esc) return -1;
        int r = member(c, s, (size_t)(e - s), ctx, seen);
        if (r < 0 || (r > 0 && value(c, depth))) return -1;
    }
    return more;
}

/* The second half: the entries from the candidate to the array's end, then what follows
 * them as the one-thread pass reads it (the log's other members, the document's). */
static int hs_rest(HarPass *h) {
    int r = hs_entries(h);
    if (r) return r;
    Cur *c = &h->c;
    int seen = 1;  /* the log's entries */
    if (hs_members_rest(c, 2, h, hs_log, &seen)) return -1;
    seen = 1;  /* the document's log */
    if (hs_members_rest(c, 1, h, hs_doc, &seen)) return -1;
    ws(c);
    return c->p == c->end ? 0 : -1;
}

#if MN_THREADS
static void *hs_second_run(void *arg) {
    HsSecond *sec = arg;
    sec->r = hs_rest(&sec->b);
    return NULL;
}
#endif

/* The second half started, if the first (h, at the first entry's '{') finds where. */
static void hs_begin_second(HarPass *h, HsSecond *sec) {
#if MN_THREADS
    cptr mid = h->base + (h->c.end - h->base) / 2;
    if (mid <= h->c.p) return;
    cptr cand = hs_candidate(h->c.p, h->c.end, mid);
    if (!cand) return;
    HarPass *b = &sec->b;
    memset(b, 0, sizeof *b);
    b->c.p = cand;
    b->c.end = h->c.end;
    b->base = h->base;
    /* its texts go from the candidate's offset on, 16 bytes after it: the first half's
     * texts are never longer than its input (a text's first byte is written at least one
     * byte before the place it is read from: its opening quote is not copied), and
     * copy_plain16 writes at most 16 bytes from there, so below the candidate's offset
     * + 15 (the buffer has room for the second's overrun too: see py_har_scan) */
    b->t0 = h->t0;
    b->t = h->t0 + (cand - h->base) + 16;
    b->stop = &sec->stop;
    sec->stop = 0;
    sec->r = -1;
    if (mn_thread_start(&sec->th, hs_second_run, sec)) return;
    sec->running = 1;
    sec->started = 1;
    h->cand = cand;
#else
    (void)h;
    (void)sec;
#endif
}

/* The second half stopped, waited for, and its work let go. */
static void hs_drop_second(HarPass *h, HsSecond *sec) {
#if MN_THREADS
    if (sec->running) {
        mn_flag_set(&sec->stop);
        mn_thread_join(sec->th);
        sec->running = 0;
        sec->dropped = 1;
    }
#endif
    free(sec->b.pos.data);
    free(sec->b.tim.data);
    free(sec->b.flags.data);
    free(sec->b.refs.data);
    free(sec->b.stamps.data);
    memset(&sec->b.stamps, 0, sizeof sec->b.stamps);
    memset(&sec->b.pos, 0, sizeof sec->b.pos);
    memset(&sec->b.tim, 0, sizeof sec->b.tim);
    memset(&sec->b.flags, 0, sizeof sec->b.flags);
    memset(&sec->b.refs, 0, sizeof sec->b.refs);
    h->cand = NULL;
}

/* The entries, c.p at the first one's '{' (the array not empty), to the array's end.
 * The first half (h->cand set) stops where it lands on the candidate (h->met) and goes
 * on alone where an entry holds it; the second stops when told. */
static int hs_entries(HarPass *h) {
    Cur *c = &h->c;
    HsSecond *sec = h->sec;
    int more;
    do {
        if (h->cand) {
            if (c->p == h->cand) {
                h->met = 1;
                return -1;  /* the first half's end: py_har_scan reads on */
            }
            if (c->p > h->cand) hs_drop_second(h, sec);
        }
#if MN_THREADS
        else if (h->stop && mn_flag_get(h->stop)) return -1;  /* the second, told to stop */
#endif
        cptr p0 = c->p;
        unsigned char *t = h->t;
        size_t lens[5] = {h->pos.len, h->tim.len, h->flags.len, h->refs.len, h->stamps.len};
        int r = hs_one(h);
        if (!r && h->cand && p0 < h->cand && c->p > h->cand) {
            /* the candidate was inside this entry: not the second half's start. Once it
             * is stopped, the entry is read again (its texts may have met the second's) */
            hs_drop_second(h, sec);
            c->p = p0;
            h->t = t;
            h->pos.len = lens[0];
            h->tim.len = lens[1];
            h->flags.len = lens[2];
            h->refs.len = lens[3];
            h->stamps.len = lens[4];
            r = hs_one(h);
        }
        if (r) return r;
    } while ((more = after_item(c, ']')) > 0);
    return more;
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
    HsSecond *sec = h->sec;
    if (sec && !sec->running && h->refs.len == 0 && *c->p == '{')
        hs_begin_second(h, sec);  /* the first half, at its first entry */
    int r = hs_entries(h);
    if (h->cand && !h->met) hs_drop_second(h, sec);  /* the array ended before it */
    return r;
}

static int hs_doc(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    if (!NAME_IS("log")) return 1;
    ONCE(1);
    int sub = 0;
    if (members(c, 2, ctx, hs_log, &sub)) return -1;
    return sub ? 0 : -1;
}

static const char HAR_SCAN_DOC[] =
    "har_scan(data, two=False, gap_min=-1, long_min=-1) -> tuple | int\n\n"
    "A usual HAR (its bytes) read in one pass, as msgspec's typed decoding into\n"
    "readers._har_structs and json_texts read it (see harscan.h for the documents taken):\n"
    "(texts, at, nums, flags, methods, urls, started, status, mimes, hkeys): the texts of\n"
    "the bodies (a bytearray), four int64 per entry (its postData text's start and end in\n"
    "texts, its content text's; -2 for no postData or no content, -1 for a text null or\n"
    "absent), seven float64 (time, then the six timings; NaN: none), two bytes\n"
    "(_incomplete, stamped events), and lists of the method, url, startedDateTime, status\n"
    "(int or None), content mimeType ('' without content, None without a mimeType) and\n"
    "the pair of header lists' bytes (b'null' when absent), then the startedDateTime of\n"
    "each as float64 Unix seconds where it is the usual stamp (NaN: Python reads it, as\n"
    "_time.read_times; the list of startedDateTime has None where the pass read it),\n"
    "and the length of the one gap in texts that no text is in (0:\n"
    "none; a large document read on two threads: the bytes between the halves' texts,\n"
    "never written but where a long text's helper wrote before its part was moved down).\n"
    "For any other document, the\n"
    "offset where the pass stopped. The pass runs without the GIL; ``two``: on two threads\n"
    "where the document has a place to split at (the same texts and members; the gap in\n"
    "a buffer of ``gap_min`` bytes or more, -1: 64 MiB, else the texts moved together;\n"
    "while the second half runs, a text of the first longer than ``long_min`` bytes, -1:\n"
    "8 MiB, has its rest read by a helper thread from a place near its middle).";

/* A buffer of texts at least this large is left with the gap between the two halves'
 * texts (HS_GAP_MIN): its pages were never written, so they hold no memory and read as
 * zeros (an allocation this large is a fresh map of its own), but for the bytes a long
 * text's helper wrote there before its part was moved down (hs_text_split); moving the
 * second half's texts down instead would write them all again (a fifth of a 1 GB HAR's
 * pass; the tests ask for the gap in smaller buffers too: har_scan's gap_min). */
#define HS_GAP_MIN ((size_t)64 << 20)

/* The second half's work after the first's: its texts moved down to follow the first's
 * (their places shifted), or, in a buffer of HS_GAP_MIN bytes or more, left where they
 * are (*gap: the bytes between the two halves' texts, never written); its arrays
 * appended. 0, or -1 (no memory). */
static int hs_join(HarPass *h, HarPass *b, cptr cand, size_t room, size_t gap_min,
                   int64_t *gap_out) {
    unsigned char *from = h->t0 + (cand - h->base) + 16;
    size_t len = (size_t)(b->t - from);
    int64_t gap = (int64_t)(from - h->t);
    if (room >= gap_min) {
        *gap_out = gap;
        gap = 0;
        h->t = b->t;
    } else {
        memmove(h->t, from, len);
        h->t += len;
    }
    int64_t *at = (int64_t *)b->pos.data;
    for (size_t k = 0; gap && k < b->pos.len / sizeof(int64_t); k++)
        if (at[k] >= 0) at[k] -= gap;
    if (grow_put(&h->pos, b->pos.data, b->pos.len) ||
        grow_put(&h->tim, b->tim.data, b->tim.len) ||
        grow_put(&h->flags, b->flags.data, b->flags.len) ||
        grow_put(&h->refs, b->refs.data, b->refs.len) ||
        grow_put(&h->stamps, b->stamps.data, b->stamps.len))
        return -1;
    h->c.p = b->c.p;
    h->c.hi |= b->c.hi;
    return 0;
}

static PyObject *py_har_scan(PyObject *self, PyObject *args) {
    Py_buffer b;
    int two = 0;
    (void)self;
    PyObject *arg;
    long long gap_min = -1;  /* -1: HS_GAP_MIN (the tests ask for a gap in any buffer) */
    long long long_min = -1;  /* -1: HS_LONG_MIN (the tests ask for short texts split) */
    if (!PyArg_ParseTuple(args, "O|pLL", &arg, &two, &gap_min, &long_min)) return NULL;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE)) return NULL;
    HarPass h;
    HsSecond sec;
    memset(&h, 0, sizeof h);
    memset(&sec, 0, sizeof sec);
    PyObject *res = NULL, *texts = NULL, *lists[6] = {NULL};
    h.c.p = h.base = (cptr)b.buf;
    h.c.end = h.c.p + b.len;
    h.sec = two && MN_THREADS ? &sec : NULL;
    h.long_min = long_min < 0 ? HS_LONG_MIN : (size_t)long_min;
    /* room for every text: a text is never longer than its literal, and copy_plain16 may
     * write 16 bytes past a text's end; the second half writes its own 16 bytes further */
    texts = PyByteArray_FromStringAndSize(NULL, b.len + 32);
    if (!texts) goto done;
    h.t0 = h.t = (unsigned char *)PyByteArray_AS_STRING(texts);
    int seen = 0, r;
    int64_t gap = 0;  /* bytes between the two halves' texts, never written (hs_join) */
    Py_BEGIN_ALLOW_THREADS
    ws(&h.c);
    r = members(&h.c, 1, &h, hs_doc, &seen);
    if (h.met) {  /* the first half ended on the second's start: its answer is the rest */
        cptr cand = h.cand;
#if MN_THREADS
        mn_thread_join(sec.th);
        sec.running = 0;
#endif
        r = sec.r;
        if (r) h.c.p = sec.b.c.p;
        else if (hs_join(&h, &sec.b, cand, (size_t)b.len + 32,
                         gap_min < 0 ? HS_GAP_MIN : (size_t)gap_min, &gap))
            r = -2;
        h.cand = NULL;
    } else if (!r) {
        ws(&h.c);
        if (h.c.p != h.c.end || !seen) r = -1;
    }
    if (sec.running) hs_drop_second(&h, &sec);  /* every path: no thread outlives the call */
    /* the bytes of every string but the bodies' texts (checked as they were copied) */
    if (!r && h.c.hi && !utf8_valid((cptr)b.buf, (cptr)b.buf + b.len)) {
        h.c.p = (cptr)b.buf;
        r = -1;
    }
    Py_END_ALLOW_THREADS
    HS_COUNTS[0] += sec.started;
    HS_COUNTS[1] += sec.started && !sec.dropped;
    HS_COUNTS[2] += sec.dropped;
    HS_COUNTS[3] += h.splits;
    Py_ssize_t n = (Py_ssize_t)(h.refs.len / sizeof(HarRef));
    int64_t bad = 0;
    if (!r) {
        int o = hs_objects(h.base, (const HarRef *)h.refs.data,
                           (const double *)h.stamps.data, n, lists, &bad);
        if (o == -2) goto done;
        if (o == -1) {
            h.c.p = h.base + bad;
            r = -1;
        }
    }
    if (r) {
        res = PyLong_FromSsize_t((Py_ssize_t)(h.c.p - (cptr)b.buf));
        goto done;
    }
    if (PyByteArray_Resize(texts, (Py_ssize_t)(h.t - h.t0))) goto done;
    PyObject *at = grow_bytes(&h.pos), *nums = grow_bytes(&h.tim), *fl = grow_bytes(&h.flags);
    PyObject *stamps = grow_bytes(&h.stamps);
    if (at && nums && fl && stamps)
        res = Py_BuildValue("(OOOOOOOOOOOL)", texts, at, nums, fl, lists[0], lists[1],
                            lists[2], lists[3], lists[4], lists[5], stamps, (long long)gap);
    Py_XDECREF(at);
    Py_XDECREF(nums);
    Py_XDECREF(fl);
    Py_XDECREF(stamps);
done:
    free(h.pos.data);
    free(h.tim.data);
    free(h.flags.data);
    free(h.refs.data);
    free(h.stamps.data);
    free(sec.b.stamps.data);
    free(sec.b.pos.data);
    free(sec.b.tim.data);
    free(sec.b.flags.data);
    free(sec.b.refs.data);
    Py_XDECREF(texts);
    for (int k = 0; k < 6; k++) Py_XDECREF(lists[k]);
    PyBuffer_Release(&b);
    return res;
}

static const char HAR_SCAN_COUNTS_DOC[] =
    "har_scan_counts() -> (started, met, dropped, texts split)\n\n"
    "How har_scan's two halves went in this process: second halves started, those whose\n"
    "start the first half landed on (their work used), those stopped (it did not); and\n"
    "the long texts whose rest a helper thread read (its work used).";

static PyObject *py_har_scan_counts(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return Py_BuildValue("(nnnn)", HS_COUNTS[0], HS_COUNTS[1], HS_COUNTS[2],
                         HS_COUNTS[3]);
}

#endif
