/* Claude Desktop's per-server log: the usual message lines of a block, found in one pass.
 *
 * claude_lines() splits a block of lines at "\n" (as bytes.split does: k newlines make
 * k + 1 lines) and says which lines are usual message lines of one server, the shape
 * readers/_claude_usual.py's _usual() finds with numpy (its reference here, and the
 * reader's path where the extension is not built):
 *
 *     DDDD-DD-DDTDD:DD:DD.DDDZ [<server>] [info] Message from client: <payload> { metadata: undefined }
 *
 * (or "server"), the payload opening with "{" or "[", a time of day with hours at most
 * 23, minutes at most 59 and seconds at most 60, and no "chars truncated]" anywhere in
 * the line (Claude's logger cut it: the reader's line-by-line code says so). Whether the
 * date names a real day is left to the caller (a few distinct dates a block). */
#ifndef MCP_NOTEBOOK_CLAUDE_H
#define MCP_NOTEBOOK_CLAUDE_H
#include "json.h"

static const char CL_TAIL[] = " { metadata: undefined }";
#define CL_TAIL_N ((Py_ssize_t)(sizeof(CL_TAIL) - 1))
static const char CL_CUT[] = "chars truncated]";
#define CL_CUT_N ((Py_ssize_t)(sizeof(CL_CUT) - 1))

static int cl_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int cl_num(const unsigned char *p, int n) {
    int v = 0;
    for (int i = 0; i < n; i++) v = v * 10 + (p[i] - '0');
    return v;
}

/* Whether the line [p, e) holds "chars truncated]". */
static int cl_cut(const unsigned char *p, const unsigned char *e) {
    const unsigned char *q = p;
    while (q < e) {
        const unsigned char *r = memchr(q, ']', (size_t)(e - q));
        if (!r) return 0;
        if (r - p >= CL_CUT_N - 1 && !memcmp(r - (CL_CUT_N - 1), CL_CUT, CL_CUT_N - 1))
            return 1;
        q = r + 1;
    }
    return 0;
}

/* The direction code of a usual line [p, e) of server `name` (0 client, 1 server), its
 * date as YYYYMMDD and its time of day in milliseconds; -1 when it is not such a line. */
static int cl_line(const unsigned char *p, const unsigned char *e, const unsigned char *name,
                   Py_ssize_t nn, int32_t *date, int64_t *clock) {
    static const int digits[] = {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22};
    Py_ssize_t head = 24 + 2 + nn + 30;  /* stamp, " [", name, "] [info] Message from xxxxxx: " */
    Py_ssize_t len = e - p;
    if (len <= head + CL_TAIL_N) return -1;
    for (size_t i = 0; i < sizeof digits / sizeof digits[0]; i++)
        if (!cl_digit(p[digits[i]])) return -1;
    if (p[4] != '-' || p[7] != '-' || p[10] != 'T' || p[13] != ':' || p[16] != ':' ||
        p[19] != '.' || p[23] != 'Z' || p[24] != ' ' || p[25] != '[')
        return -1;
    if (memcmp(p + 26, name, (size_t)nn)) return -1;
    const unsigned char *q = p + 26 + nn;
    if (memcmp(q, "] [info] Message from ", 22)) return -1;
    q += 22;
    int code;
    if (!memcmp(q, "client: ", 8)) code = 0;
    else if (!memcmp(q, "server: ", 8)) code = 1;
    else return -1;
    q += 8;
    if (*q != '{' && *q != '[') return -1;
    if (memcmp(e - CL_TAIL_N, CL_TAIL, (size_t)CL_TAIL_N)) return -1;
    int hh = cl_num(p + 11, 2), mm = cl_num(p + 14, 2), ss = cl_num(p + 17, 2);
    if (hh > 23 || mm > 59 || ss > 60) return -1;
    if (cl_cut(p, e)) return -1;
    *date = cl_num(p, 4) * 10000 + cl_num(p + 5, 2) * 100 + cl_num(p + 8, 2);
    *clock = ((int64_t)hh * 3600 + mm * 60 + ss) * 1000 + cl_num(p + 20, 3);
    return code;
}

static const char CLAUDE_LINES_DOC[] =
    "claude_lines(block, name) -> (starts, ends, direction, date, clock)\n\n"
    "The lines of block (split at b'\\n'): their starts and ends (int64), and for each the\n"
    "direction code of a usual message line of server name (bytes; int8: 0 client, 1\n"
    "server, -1 not such a line), its date as YYYYMMDD (int32) and time of day in ms\n"
    "(int64), 0 where the line is not usual: bytearrays in native byte order.";

static PyObject *py_claude_lines(PyObject *self, PyObject *args) {
    PyObject *bo, *no;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &bo, &no)) return NULL;
    Py_buffer b, nb;
    if (PyObject_GetBuffer(bo, &b, PyBUF_SIMPLE)) return NULL;
    if (PyObject_GetBuffer(no, &nb, PyBUF_SIMPLE)) {
        PyBuffer_Release(&b);
        return NULL;
    }
    const unsigned char *s = b.buf, *end = s + b.len, *p = s;
    Py_ssize_t n = 1;
    for (const unsigned char *q = s; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++) n++;
    PyObject *st = PyByteArray_FromStringAndSize(NULL, n * 8);
    PyObject *en = PyByteArray_FromStringAndSize(NULL, n * 8);
    PyObject *dir = PyByteArray_FromStringAndSize(NULL, n);
    PyObject *dat = PyByteArray_FromStringAndSize(NULL, n * 4);
    PyObject *clk = PyByteArray_FromStringAndSize(NULL, n * 8);
    PyObject *res = NULL;
    if (!st || !en || !dir || !dat || !clk) goto done;
    int64_t *sp = (int64_t *)PyByteArray_AS_STRING(st), *ep = (int64_t *)PyByteArray_AS_STRING(en);
    int8_t *dp = (int8_t *)PyByteArray_AS_STRING(dir);
    int32_t *tp = (int32_t *)PyByteArray_AS_STRING(dat);
    int64_t *cp = (int64_t *)PyByteArray_AS_STRING(clk);
    const unsigned char *name = nb.buf;
    Py_ssize_t nn = nb.len;
    for (Py_ssize_t k = 0; k < n; k++) {
        const unsigned char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        int32_t date = 0;
        int64_t clock = 0;
        sp[k] = p - s;
        ep[k] = e - s;
        dp[k] = (int8_t)cl_line(p, e, name, nn, &date, &clock);
        tp[k] = date;
        cp[k] = clock;
        p = e + 1;
    }
    res = PyTuple_Pack(5, st, en, dir, dat, clk);
done:
    Py_XDECREF(st);
    Py_XDECREF(en);
    Py_XDECREF(dir);
    Py_XDECREF(dat);
    Py_XDECREF(clk);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&b);
    return res;
}

#endif
