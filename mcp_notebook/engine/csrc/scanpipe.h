/* The lines of a scan() call read in batches without the GIL: on one core by the calling
 * thread between its batches of rows; on two by a worker thread too (the pipe).
 *
 * A batch is what message_gil() makes of the lines of a range (blank lines skipped): the
 * messages of the lines taken, and whether it halted at line `stop`, not taken (`gil`:
 * only because a number there needs Python's conversion, so the calling thread reads
 * that line again with the GIL and goes on after it). A line's message depends on its
 * bytes alone, so where the ranges are cut changes no row.
 *
 * The pipe: the lines of the call are cut in ranges of PIPE_BATCH lines, batch k being
 * range k. The calling thread makes the rows of batch 0, 1, 2, ... in order (GIL held);
 * the worker thread claims the next batch not yet claimed and reads it into one of
 * PIPE_SLOTS slots, up to PIPE_SLOTS batches ahead. When the batch the calling thread
 * needs next is not read yet, it reads batches too, GIL released (pipe_take): so the two
 * threads share the reading when it is the slower half, and a worker that gets no core
 * (a busy machine) delays the rows by about one batch. After a line that only needed
 * the GIL, the calling thread reads the rest of that range itself. The worker stops after a batch that halted at a line not taken
 * (the scan ends there); what was read past the line where the scan stops is never used.
 *
 * The worker touches no Python object and only reads the line buffers, which the caller
 * holds for the call's duration: pipe_stop(), on every path out of the call, asks it to
 * end and joins it before the call returns, so it never outlives them. Where there are no
 * POSIX threads (MN_THREADS 0, or built with -DMN_NO_THREADS) pipe_start() gives NULL and
 * the calling thread reads every batch, as on one core.
 */
#ifndef MCP_NOTEBOOK_SCANPIPE_H
#define MCP_NOTEBOOK_SCANPIPE_H
#include "envelope.h"
#include "threads.h"

#define BATCH 4096       /* lines read per release of the GIL (one core) */
#define PIPE_BATCH 1024  /* lines per batch of the pipe (two cores) */
#define PIPE_SLOTS 8     /* batches read ahead of the rows, at most */
#define PIPE_MIN 4096    /* fewer lines: no worker (starting one costs ~50 us) */

/* The lines of a block: [base + st[i], base + en[i]) for i < hi, inside len bytes. */
typedef struct {
    cptr base;
    Py_ssize_t len;
    const int64_t *st, *en;
    Py_ssize_t hi;
} Lines;

typedef struct {
    Msg *ms;               /* the messages of the lines taken ... */
    Py_ssize_t *at;        /* ... and their line indices (room for the range's lines) */
    Py_ssize_t n;          /* how many */
    Py_ssize_t from, stop; /* lines from..stop-1 read; halted: line stop not taken */
    int halted, gil;
} Batch;

/* Read lines from..to-1 into b (to <= L->hi), without the GIL. */
static void read_batch(const Lines *L, Batch *b, Py_ssize_t from, Py_ssize_t to) {
    Py_ssize_t n = 0, stop = from;
    int gil = 0, halted = 0;
    for (; stop < to; stop++) {
        int64_t a = L->st[stop], z = L->en[stop];
        if (a >= z) continue;  /* blank */
        if (a < 0 || z > L->len || message_gil(L->base + a, L->base + z, &b->ms[n], 1, &gil)) {
            halted = 1;
            break;
        }
        b->at[n++] = stop;
    }
    b->from = from;
    b->n = n;
    b->stop = stop;
    b->halted = halted;
    b->gil = gil;
}

/* Calls of scan() with a worker thread, and calls that asked for one but read their lines
 * on the calling thread alone (no threads in this build, no memory, no thread could be
 * started). Counted with the GIL held (_native.pipe_stats()). */
static Py_ssize_t pipe_runs, pipe_fallbacks;

#if MN_THREADS

enum { SLOT_FREE, SLOT_READING, SLOT_FULL };

typedef struct {
    Lines L;
    Py_ssize_t start;           /* the first line of batch 0 */
    Py_ssize_t nbatch;          /* batches in all */
    Batch slot[PIPE_SLOTS];     /* batch k in slot k % PIPE_SLOTS */
    Batch own;                  /* the calling thread's, for the rest of a range */
    Msg *msgs;                  /* the slots' messages and line indices, one allocation */
    Py_ssize_t *ats;            /* each */
    mn_thread th;
    pthread_mutex_t mu;
    pthread_cond_t filled;      /* the worker filled a slot */
    pthread_cond_t freed;       /* the caller handed a slot back, or asked it to end */
    int state[PIPE_SLOTS];      /* SLOT_* */
    Py_ssize_t claim;           /* the first batch nobody claimed yet */
    int quit;                   /* the caller asks the worker to end */
} Pipe;

/* The lines of batch k: [*a, *z). */
static void pipe_range(const Pipe *p, Py_ssize_t k, Py_ssize_t *a, Py_ssize_t *z) {
    *a = p->start + k * PIPE_BATCH;
    *z = p->L.hi - *a < PIPE_BATCH ? p->L.hi : *a + PIPE_BATCH;
}

static void *pipe_work(void *arg) {
    Pipe *p = arg;
    for (;;) {
        Py_ssize_t k = -1;
        pthread_mutex_lock(&p->mu);
        while (!p->quit && p->claim < p->nbatch) {
            if (p->state[p->claim % PIPE_SLOTS] == SLOT_FREE) {
                k = p->claim++;
                p->state[k % PIPE_SLOTS] = SLOT_READING;
                break;
            }
            pthread_cond_wait(&p->freed, &p->mu);
        }
        pthread_mutex_unlock(&p->mu);
        if (k < 0) break;
        Batch *b = &p->slot[k % PIPE_SLOTS];
        Py_ssize_t a, z;
        pipe_range(p, k, &a, &z);
        read_batch(&p->L, b, a, z);
        int last = b->halted && !b->gil;  /* the scan ends at that line */
        pthread_mutex_lock(&p->mu);
        p->state[k % PIPE_SLOTS] = SLOT_FULL;
        pthread_cond_signal(&p->filled);
        pthread_mutex_unlock(&p->mu);
        if (last) break;
    }
    return NULL;
}

static void pipe_free(Pipe *p) {
    free(p->msgs);
    free(p->ats);
    free(p);
}

/* A worker for lines start..L->hi-1 of L (GIL held); NULL when none could be started (no
 * memory or no thread: no exception set, the caller reads the lines itself). */
static Pipe *pipe_start(const Lines *L, Py_ssize_t start) {
    Pipe *p = calloc(1, sizeof(Pipe));
    if (!p) return NULL;
    p->L = *L;
    p->start = start;
    p->nbatch = (L->hi - start + PIPE_BATCH - 1) / PIPE_BATCH;
    p->msgs = malloc(sizeof(Msg) * (PIPE_SLOTS + 1) * PIPE_BATCH);
    p->ats = malloc(sizeof(Py_ssize_t) * (PIPE_SLOTS + 1) * PIPE_BATCH);
    if (!p->msgs || !p->ats) {
        pipe_free(p);
        return NULL;
    }
    for (int k = 0; k <= PIPE_SLOTS; k++) {
        Batch *b = k < PIPE_SLOTS ? &p->slot[k] : &p->own;
        b->ms = p->msgs + (size_t)k * PIPE_BATCH;
        b->at = p->ats + (size_t)k * PIPE_BATCH;
    }
    int made = 0;  /* mutex, conditions made */
    if (!pthread_mutex_init(&p->mu, NULL)) made++;
    if (made == 1 && !pthread_cond_init(&p->filled, NULL)) made++;
    if (made == 2 && !pthread_cond_init(&p->freed, NULL)) made++;
    int bad = made < 3;
    if (!bad) {
        bad = mn_thread_start(&p->th, pipe_work, p);
    }
    if (bad) {
        if (made > 2) pthread_cond_destroy(&p->freed);
        if (made > 1) pthread_cond_destroy(&p->filled);
        if (made > 0) pthread_mutex_destroy(&p->mu);
        pipe_free(p);
        return NULL;
    }
    return p;
}

/* Batch k, the next the caller makes rows of (GIL held; released while reading or
 * waiting). Unless the worker filled it already, this thread reads batches itself, the
 * GIL released: batch k when the worker has not claimed it (it is behind); while the
 * worker reads batch k, the next unclaimed ones while slots are free (so a worker the
 * system has descheduled holds this thread up by one batch, not by all that is left);
 * it waits only when the worker holds batch k and no slot is free. */
static Batch *pipe_take(Pipe *p, Py_ssize_t k) {
    Batch *b = &p->slot[k % PIPE_SLOTS];
    pthread_mutex_lock(&p->mu);
    int full = p->state[k % PIPE_SLOTS] == SLOT_FULL;
    pthread_mutex_unlock(&p->mu);
    if (full) return b;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&p->mu);
    while (p->state[k % PIPE_SLOTS] != SLOT_FULL) {
        Py_ssize_t j = p->claim;  /* >= k: batches are claimed in order */
        if (j < p->nbatch && p->state[j % PIPE_SLOTS] == SLOT_FREE) {
            p->claim++;
            p->state[j % PIPE_SLOTS] = SLOT_READING;
            pthread_mutex_unlock(&p->mu);
            Py_ssize_t a, z;
            pipe_range(p, j, &a, &z);
            read_batch(&p->L, &p->slot[j % PIPE_SLOTS], a, z);
            pthread_mutex_lock(&p->mu);
            p->state[j % PIPE_SLOTS] = SLOT_FULL;
        } else {
            pthread_cond_wait(&p->filled, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    Py_END_ALLOW_THREADS
    return b;
}

/* Hand batch k's slot back. */
static void pipe_release(Pipe *p, Py_ssize_t k) {
    pthread_mutex_lock(&p->mu);
    p->state[k % PIPE_SLOTS] = SLOT_FREE;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
}

/* End the worker (after the batch it is reading), join it and free everything (GIL held;
 * released while joining). */
static void pipe_stop(Pipe *p) {
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
    Py_BEGIN_ALLOW_THREADS
    pthread_join(p->th, NULL);
    Py_END_ALLOW_THREADS
    pthread_cond_destroy(&p->freed);
    pthread_cond_destroy(&p->filled);
    pthread_mutex_destroy(&p->mu);
    pipe_free(p);
}

#else /* no threads: the calling thread reads every batch */

typedef struct {
    Lines L;
    Py_ssize_t start, nbatch;
    Batch own;
} Pipe;
static Pipe *pipe_start(const Lines *L, Py_ssize_t start) {
    (void)L;
    (void)start;
    return NULL;
}
static void pipe_range(const Pipe *p, Py_ssize_t k, Py_ssize_t *a, Py_ssize_t *z) {
    (void)p;
    (void)k;
    *a = *z = 0;
}
static Batch *pipe_take(Pipe *p, Py_ssize_t k) {
    (void)k;
    return &p->own;
}
static void pipe_release(Pipe *p, Py_ssize_t k) {
    (void)p;
    (void)k;
}
static void pipe_stop(Pipe *p) { (void)p; }

#endif /* MN_THREADS */
#endif /* MCP_NOTEBOOK_SCANPIPE_H */
