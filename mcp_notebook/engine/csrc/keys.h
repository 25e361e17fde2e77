/* The id table: each id key the scanner met, by the bytes of its JSON text, with the one
 * key str and the one id object (int or str) every row of that key gets.
 *
 * The scanner takes an id only when its key is its text exactly (a printable ASCII string
 * without escapes, quotes included, or a non-zero integer of at most 1000 characters:
 * envelope.h), so equal bytes are equal keys and the id follows from them: `1`, `"1"` and
 * `1.0` differ (the last is never taken), big integers are kept whole.
 *
 * Open addressing with linear probing over a power-of-two array, at most half full; a
 * slot holds the key's hash and two owned references. A lookup reads the key str's bytes
 * (compact ASCII) and no other Python state, so module.c looks keys up with the GIL
 * released and inserts with it held. The codes themselves stay those of fast.rows.Codes
 * (its dict, in first-appearance order): the table only saves building and hashing a new
 * key and id for every row. */
#ifndef MCP_NOTEBOOK_KEYS_H
#define MCP_NOTEBOOK_KEYS_H
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint64_t hash;       /* 0: empty slot */
    PyObject *key, *id;  /* owned */
} KeySlot;

typedef struct {
    PyObject_HEAD
    KeySlot *slot;
    size_t mask;  /* slots - 1 */
    size_t used;
} KeyTable;

/* A 64-bit hash of n bytes, 8 at a time (never 0). */
static inline uint64_t key_hash(const unsigned char *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, p, n);
        h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    }
    h ^= h >> 29;
    return h ? h : 1;
}

/* The slot of key [s, s+n) with hash h: its entry, or the empty slot where it goes. */
static inline KeySlot *key_find(const KeyTable *t, const unsigned char *s, size_t n,
                                uint64_t h) {
    size_t i = (size_t)h & t->mask;
    for (;;) {
        KeySlot *e = &t->slot[i];
        if (!e->hash) return e;
        if (e->hash == h && (size_t)PyUnicode_GET_LENGTH(e->key) == n &&
            !memcmp(PyUnicode_DATA(e->key), s, n))
            return e;
        i = (i + 1) & t->mask;
    }
}

/* Double the slots; -1 (MemoryError set) on failure. */
static int key_grow(KeyTable *t) {
    size_t cap = (t->mask + 1) * 2;
    KeySlot *old = t->slot, *neu = calloc(cap, sizeof(KeySlot));
    if (!neu) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i <= t->mask; i++) {
        if (!old[i].hash) continue;
        size_t j = (size_t)old[i].hash & (cap - 1);
        while (neu[j].hash) j = (j + 1) & (cap - 1);
        neu[j] = old[i];
    }
    free(old);
    t->slot = neu;
    t->mask = cap - 1;
    return 0;
}

/* Add key and id (new references taken) at the empty slot e found for hash h. */
static int key_add(KeyTable *t, KeySlot *e, uint64_t h, PyObject *key, PyObject *id) {
    e->hash = h;
    e->key = key;
    e->id = id;
    if (++t->used * 2 > t->mask + 1) return key_grow(t);
    return 0;
}

static void KeyTable_dealloc(KeyTable *t) {
    if (t->slot) {
        for (size_t i = 0; i <= t->mask; i++) {
            if (!t->slot[i].hash) continue;
            Py_DECREF(t->slot[i].key);
            Py_DECREF(t->slot[i].id);
        }
        free(t->slot);
    }
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static PyObject *KeyTable_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw))) {
        PyErr_SetString(PyExc_TypeError, "KeyTable() takes no arguments");
        return NULL;
    }
    KeyTable *t = (KeyTable *)type->tp_alloc(type, 0);
    if (!t) return NULL;
    t->mask = 1023;
    t->slot = calloc(t->mask + 1, sizeof(KeySlot));
    if (!t->slot) {
        Py_DECREF(t);
        return PyErr_NoMemory();
    }
    return (PyObject *)t;
}

static Py_ssize_t KeyTable_len(KeyTable *t) { return (Py_ssize_t)t->used; }

static PySequenceMethods KEYTABLE_SEQ = {.sq_length = (lenfunc)KeyTable_len};

static PyTypeObject KeyTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mcp_notebook.engine._native.KeyTable",
    .tp_doc = "The id keys the scanner met (by their bytes) with their key and id objects; "
              "pass it to scan(keys=...). len() is the number of keys.",
    .tp_basicsize = sizeof(KeyTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = KeyTable_new,
    .tp_dealloc = (destructor)KeyTable_dealloc,
    .tp_as_sequence = &KEYTABLE_SEQ,
};

#endif /* MCP_NOTEBOOK_KEYS_H */
