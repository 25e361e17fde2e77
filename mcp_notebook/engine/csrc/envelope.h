/* The usual JSON-RPC message: its envelope members, read while the line is checked. */
#ifndef MCP_NOTEBOOK_ENVELOPE_H
#define MCP_NOTEBOOK_ENVELOPE_H
#include "json.h"
#include "vocab.h"
#include "utf8.h"

/* LISTED, N_LISTED: the members of a result the list column keeps (vocab.h). */

/* What the usual message holds. */
typedef struct {
    int kind;               /* K_REQUEST, K_NOTIFICATION, K_RESULT or K_ERROR */
    cptr id_s, id_e;        /* the id's JSON text (a string with its quotes) */
    int id_str;             /* the id is a string */
    cptr meth_s, meth_e;    /* the method's text */
    long long code;         /* error.code */
    Span msg;               /* error.message */
    /* params (members typed as fast.message._Params) */
    int has_params;
    Span req_id, token, pver, meta_token, meta_ver;  /* s == NULL: absent */
    int req_id_key, token_key, meta_token_key;       /* the id-like value has a key */
    int has_prog;
    double prog;
    int meta;               /* _meta is an object (not absent, not null) */
    /* what the conversation rules read of a request (module.c: the call column); of a
     * member given twice the last counts, as for msgspec and json.loads */
    Span pname, puri, pargs;  /* name, uri (strings: text between the quotes), arguments */
    int pname_str, puri_str;  /* ... is a string */
    int ptask, pcursor;       /* params has a task, a cursor member */
    /* result */
    int tool;               /* isError is true */
    int full;               /* the result has a member other than _meta */
    Span rver;
    Span rlist[N_LISTED];   /* the listing members of the result (LISTED), their values */
    /* what the row gets */
    Span ref;               /* the id a cancel or progress refers to (its key text) */
    Span ver;               /* a protocol version */
    int prog_set;           /* prog is the row's progress */
} Msg;

/* An id-like value (int or str): its span (a string with its quotes) and whether its key
 * is that text (a non-zero int; a printable ASCII string without escapes). */
static int id_like(Cur *c, Span *v, int *keyed) {
    cptr s, e;
    int esc, integer;
    if (c->p >= c->end) return -1;
    v->s = c->p;
    v->esc = 0;
    if (*c->p == '"') {
        c->p++;
        if (string(c, &s, &e, &esc)) return -1;
        *keyed = !esc && printable_ascii(s, e);
    } else {
        if (number(c, &integer) || !integer) return -1;  /* msgspec: int | str only */
        cptr d = v->s + (*v->s == '-');
        *keyed = *d != '0' && c->p - v->s <= 1000;
    }
    v->e = c->p;
    return 0;
}

static int meta_member(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    Msg *m = ctx;
    if (NAME_IS("progressToken")) {
        ONCE(1);
        return id_like(c, &m->meta_token, &m->meta_token_key);
    }
    if (NAME_IS("io.modelcontextprotocol/protocolVersion")) {
        ONCE(2);
        return str_value(c, &m->meta_ver);
    }
    return 1;
}

/* A params member the call column keeps: a string's text (*str set), or any value's
 * span. */
static int call_member(Cur *c, Span *v, int *str) {
    if (c->p < c->end && *c->p == '"') {
        *str = 1;
        return str_value(c, v);
    }
    *str = 0;
    v->s = c->p;
    v->esc = 0;
    int r = value(c, 2);
    v->e = c->p;
    return r;
}

static int params_member(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    Msg *m = ctx;
    if (NAME_IS("name")) return call_member(c, &m->pname, &m->pname_str);
    if (NAME_IS("uri")) return call_member(c, &m->puri, &m->puri_str);
    if (NAME_IS("arguments")) {  /* its JSON text, whatever the value */
        m->pargs.s = c->p;
        int r = value(c, 2);
        m->pargs.e = c->p;
        return r;
    }
    if (NAME_IS("task")) {
        m->ptask = 1;
        return 1;
    }
    if (NAME_IS("cursor")) {
        m->pcursor = 1;
        return 1;
    }
    if (NAME_IS("requestId")) {
        ONCE(1);
        return id_like(c, &m->req_id, &m->req_id_key);
    }
    if (NAME_IS("progressToken")) {
        ONCE(2);
        return id_like(c, &m->token, &m->token_key);
    }
    if (NAME_IS("progress")) {
        ONCE(4);
        m->has_prog = 1;
        return float_value(c, &m->prog);
    }
    if (NAME_IS("protocolVersion")) {
        ONCE(8);
        return str_value(c, &m->pver);
    }
    if (NAME_IS("_meta")) {
        ONCE(16);
        if (c->p < c->end && *c->p == 'n') return literal(c, "null", 4);
        int inner = 0;
        m->meta = 1;
        return members(c, 2, m, meta_member, &inner);
    }
    return 1;
}

static int result_member(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    Msg *m = ctx;
    if (!NAME_IS("_meta")) m->full = 1;
    for (int k = 0; k < N_LISTED; k++) {
        if (n == strlen(LISTED[k]) && !memcmp(name, LISTED[k], n)) {  /* the last counts */
            m->rlist[k].s = c->p;
            int r = value(c, 2);
            m->rlist[k].e = c->p;
            return r;
        }
    }
    if (NAME_IS("isError")) {
        ONCE(1);
        if (c->p < c->end && *c->p == 't') {
            m->tool = 1;
            return literal(c, "true", 4);
        }
        return literal(c, "false", 5);
    }
    if (NAME_IS("protocolVersion")) {
        ONCE(2);
        return str_value(c, &m->rver);
    }
    return 1;
}

/* error: {"code": <int64>, "message": <string>, ...} */
static int error_member(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    Msg *m = ctx;
    if (NAME_IS("code")) {
        int integer;
        ONCE(1);
        cptr a = c->p;
        if (number(c, &integer) || !integer) return -1;
        size_t len = (size_t)(c->p - a);
        if (len > 18) return -1;  /* might not fit int64: the Python path */
        char tmp[24];
        memcpy(tmp, a, len);
        tmp[len] = 0;
        m->code = strtoll(tmp, NULL, 10);
        return 0;
    }
    if (NAME_IS("message")) {
        ONCE(2);
        return str_value(c, &m->msg);
    }
    return 1;
}

enum { F_JSONRPC = 1, F_ID = 2, F_METHOD = 4, F_PARAMS = 8, F_RESULT = 16, F_ERROR = 32 };

/* The top-level members (the bits of *seen are F_*). */
static int message_member(Cur *c, cptr name, size_t n, void *ctx, int *seen) {
    Msg *m = ctx;
    Span v;
    int integer, inner = 0;
    if (NAME_IS("jsonrpc")) {
        ONCE(F_JSONRPC);
        return str_value(c, &v) || v.esc || !KEY_IS(v.s, v.e, "2.0") ? -1 : 0;
    }
    if (NAME_IS("id")) {
        ONCE(F_ID);
        m->id_s = c->p;
        if (c->p < c->end && *c->p == '"') {
            /* not printable ASCII: the Python path */
            if (str_value(c, &v) || v.esc || !printable_ascii(v.s, v.e)) return -1;
            m->id_str = 1;
        } else {
            if (number(c, &integer) || !integer) return -1;
            if (c->p - m->id_s > 1000) return -1;  /* Python's int/str digit limit */
            cptr d = m->id_s + (*m->id_s == '-');
            if (*d == '0') return -1;  /* 0 or -0 */
            m->id_str = 0;
        }
        m->id_e = c->p;
        return 0;
    }
    if (NAME_IS("method")) {
        ONCE(F_METHOD);
        if (str_value(c, &v) || v.esc) return -1;
        m->meth_s = v.s;
        m->meth_e = v.e;
        return 0;
    }
    if (NAME_IS("params")) {
        ONCE(F_PARAMS);
        m->has_params = 1;
        return members(c, 2, m, params_member, &inner);
    }
    if (NAME_IS("result")) {
        ONCE(F_RESULT);
        return members(c, 2, m, result_member, &inner);
    }
    if (NAME_IS("error")) {
        ONCE(F_ERROR);
        return members(c, 1, m, error_member, &inner) || inner != 3 ? -1 : 0;
    }
    return 1;
}

/* The message of [p, end): 0 and *m filled when it is of the usual shape, else -1.
 * `gil`: NULL when the caller holds the GIL; else *gil is set when -1 means only that the
 * line needs it (see Cur). */
static int message_gil(cptr p, cptr end, Msg *m, int check_utf8, int *gil) {
    Cur cc = {p, end, 0, gil}, *c = &cc;
    int seen = 0;
    memset(m, 0, sizeof *m);
    ws(c);
    if (members(c, 1, m, message_member, &seen)) return -1;
    ws(c);
    if (c->p != c->end) return -1;
    if (c->hi && check_utf8 && !utf8_valid(p, end)) return -1;
    if (!(seen & F_JSONRPC)) return -1;
    if (seen & F_METHOD) {
        cptr a = m->meth_s, z = m->meth_e;
        if (seen & (F_RESULT | F_ERROR)) return -1;
        if (z - a >= 4 && !memcmp(a, "rpc.", 4)) return -1;
        int cancelled = KEY_IS(a, z, "notifications/cancelled");
        int progress = KEY_IS(a, z, "notifications/progress");
        int initialize = KEY_IS(a, z, "initialize");
        /* fast.message._details */
        if (m->has_params && (cancelled || progress || initialize || m->meta)) {
            int keyed = 1;
            if (cancelled) {
                if (m->req_id.s) { m->ref = m->req_id; keyed = m->req_id_key; }
            } else if (progress) {
                if (m->token.s) { m->ref = m->token; keyed = m->token_key; }
                m->prog_set = m->has_prog;
            } else if ((seen & F_ID) && m->meta && m->meta_token.s) {
                m->ref = m->meta_token;
                keyed = m->meta_token_key;
            }
            if (!keyed) return -1;  /* a key the Python path makes */
            if (initialize && m->pver.s) m->ver = m->pver;
            else if (m->meta && m->meta_ver.s) m->ver = m->meta_ver;
        }
        m->kind = (seen & F_ID) ? K_REQUEST : K_NOTIFICATION;
    } else {
        if (!(seen & F_ID)) return -1;
        if (seen & F_ERROR) {
            if (seen & F_RESULT) return -1;
            m->kind = K_ERROR;
        } else if (seen & F_RESULT) {
            m->kind = K_RESULT;
            if (m->rver.s) m->ver = m->rver;
        } else {
            return -1;
        }
    }
    return 0;
}

static int message(cptr p, cptr end, Msg *m, int check_utf8) {
    return message_gil(p, end, m, check_utf8, NULL);
}

#endif /* MCP_NOTEBOOK_ENVELOPE_H */
