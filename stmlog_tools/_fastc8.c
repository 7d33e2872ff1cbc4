/* stmlog_tools._fastc8: the C8 analysis pass in one sequential C loop.
 *
 * Optional accelerator of stmlog_tools.analysis (which has the same rules
 * vectorised with numpy and uses them when this module is not built). One
 * call reads a whole C8 log in fixed-size blocks (memory stays flat),
 * checks it (unknown event numbers, markers longer than 159 bytes,
 * decreasing timestamps) and runs PyPy's C8 counting rules, as written in
 * ../shared/docs/pypystm-log-format.md, event by event:
 *
 *   scan(read, start, size, translate, progress, progress_every, buckets) ->
 *       (events, first_time, last_time, stop_offset, threads, conflicts)
 *
 * read       a callable(n) -> bytes giving the log from offset `start` (after
 *            the header) on, at most n bytes a call, b"" at the end: the
 *            caller's open input (a file, a pipe, stdin), so that the
 *            header is checked once and streams work too
 * size       the log's size for progress, 0 when unknown (a stream)
 * translate  256 bytes: the file's event number -> final numbering, 255 = unknown
 * progress   None or a callable(done_bytes, total_bytes), called every
 *            `progress_every` bytes
 * threads    [(thread_num, committed, aborted, paused, gc_minor, gc_major,
 *              n_committed, n_aborted, events, index of its first event)]
 * conflicts  [(final_event, marker bytes, count, aborted_time, paused_time,
 *              first_seen_event_index, time line)]: the time line counts the
 *            conflict's events in `buckets` equal slices of the run, with
 *            PyPy's formula int((t - first) / total * buckets), clamped
 * stop_offset is where the records stop: the end of the log, or the start
 * of a truncated last record.
 *
 * Damage raises ValueError(((offset, kind, value, previous),)) with kind
 * "event", "marker" or "time"; the caller words it as a LogError; errors
 * of `read` propagate. All state is local to the call, so the module
 * is safe without the GIL (Py_MOD_GIL_NOT_USED).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No fused multiply-add: the same float arithmetic as Python, step by step. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

enum { HEADER = 14, MAX_MARKER = 159, BLOCK = 1 << 20 };

/* Final C8 numbering. */
enum { START, COMMIT, ABORT, DETACH, REATTACH, INEVITABLE, WRITE_READ,
       WAIT_FREE_SEGMENT, WAIT_SYNCING, WAIT_SYNC_PAUSE, WAIT_OTHER_INEVITABLE,
       WAIT_DONE, MINOR_START, MINOR_DONE, MAJOR_START, MAJOR_DONE };
enum { S_STOP, S_RUN, S_PAUSE, S_DETACHED };

typedef struct {
    int used;                         /* first member: see table_make_room */
    uint32_t num;
    int state, aborting, last_wait;
    double prev, cpu, pause;
    int inev_event;                   /* -1: not inevitable in this transaction */
    int inev_len;
    unsigned char inev_marker[MAX_MARKER];
    double inev_time;
    int has_wait, has_minor, has_major;
    double wait_start, minor_start, major_start;
    double committed, aborted, paused, gc_minor, gc_major;
    long long n_commit, n_abort, events;
    long long first_event;            /* index of its first event: PyPy summed in that order */
} Thread;

typedef struct {
    int used;                         /* first member, as in Thread: see table_make_room */
    int event, len;
    unsigned char marker[MAX_MARKER];
    long long count, first_seen;
    double aborted, paused;
    double *times;
    Py_ssize_t n_times, cap_times;
} Conflict;

typedef struct {            /* open addressing; capacity is a power of two */
    void *items;
    size_t item_size, count, cap;
} Table;

static uint64_t
hash_bytes(uint64_t h, const unsigned char *p, int n)
{
    for (int i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;   /* FNV-1a */
    return h;
}

static int
table_init(Table *t, size_t item_size)
{
    t->item_size = item_size;
    t->count = 0;
    t->cap = 64;
    t->items = calloc(t->cap, item_size);
    return t->items ? 0 : -1;
}

static void *
table_slot(Table *t, size_t i) { return (char *)t->items + i * t->item_size; }

typedef size_t (*HashFn)(const void *item);

static size_t
thread_hash(const void *item) { return ((const Thread *)item)->num * 2654435761u; }

static size_t
conflict_key_hash(int event, const unsigned char *marker, int len)
{
    return (size_t)hash_bytes(14695981039346656037ULL ^ (uint64_t)event, marker, len);
}

static size_t
conflict_hash(const void *item)
{
    const Conflict *c = item;
    return conflict_key_hash(c->event, c->marker, c->len);
}

/* Double the table when it is half full, placing every item again. Items
 * start with an int `used` flag. Returns -1 on memory failure. */
static int
table_make_room(Table *t, HashFn hash)
{
    if ((t->count + 1) * 2 <= t->cap)
        return 0;
    Table bigger = {NULL, t->item_size, 0, t->cap * 2};
    bigger.items = calloc(bigger.cap, bigger.item_size);
    if (!bigger.items)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        void *old = table_slot(t, i);
        if (!*(int *)old)
            continue;
        size_t j = hash(old) & (bigger.cap - 1);
        while (*(int *)table_slot(&bigger, j))
            j = (j + 1) & (bigger.cap - 1);
        memcpy(table_slot(&bigger, j), old, t->item_size);
        bigger.count++;
    }
    free(t->items);
    *t = bigger;
    return 0;
}

/* Threads: keyed by thread number. Returns NULL on memory failure. */
static Thread *
thread_get(Table *t, uint32_t num, long long position)
{
    if (table_make_room(t, thread_hash) < 0)
        return NULL;
    size_t j = (num * 2654435761u) & (t->cap - 1);
    for (;;) {
        Thread *th = table_slot(t, j);
        if (!th->used) {            /* empty slot: a new thread */
            memset(th, 0, sizeof(Thread));
            th->used = 1;
            th->num = num;
            th->state = S_STOP;
            th->inev_event = -1;
            th->last_wait = -1;
            th->first_event = position;
            t->count++;
            return th;
        }
        if (th->num == num)
            return th;
        j = (j + 1) & (t->cap - 1);
    }
}

/* Conflicts: keyed by event and marker bytes. Returns NULL on memory failure. */
static Conflict *
conflict_get(Table *t, int event, const unsigned char *marker, int len, long long position)
{
    if (table_make_room(t, conflict_hash) < 0)
        return NULL;
    size_t j = conflict_key_hash(event, marker, len) & (t->cap - 1);
    for (;;) {
        Conflict *c = table_slot(t, j);
        if (!c->used) {
            memset(c, 0, sizeof(Conflict));
            c->used = 1;
            c->event = event;
            c->len = len;
            memcpy(c->marker, marker, len);
            c->first_seen = position;
            t->count++;
            return c;
        }
        if (c->event == event && c->len == len && memcmp(c->marker, marker, len) == 0)
            return c;
        j = (j + 1) & (t->cap - 1);
    }
}

/* One more occurrence of a conflict at time `when`. */
static int
conflict_charge(Conflict *c, double when, double aborted, double paused)
{
    if (c->n_times == c->cap_times) {
        Py_ssize_t cap = c->cap_times ? c->cap_times * 2 : 16;
        double *times = realloc(c->times, cap * sizeof(double));
        if (!times)
            return -1;
        c->times = times;
        c->cap_times = cap;
    }
    c->times[c->n_times++] = when;
    c->count++;
    c->aborted += aborted;
    c->paused += paused;
    return 0;
}

/* PyPy's progress(): charge the time since the last move to the state left. */
static void
progress(Thread *t, double now, int state)
{
    if (t->state == S_RUN)
        t->cpu += now - t->prev;
    else if (t->state == S_PAUSE)
        t->pause += now - t->prev;
    t->prev = now;
    t->state = state;
}

/* A GC "done" closes the collection its "start" opened, if one is open. */
static void
gc_done(int *open, double started, double *total, double now)
{
    if (*open) {
        *total += now - started;
        *open = 0;
    }
}

typedef struct {
    Table threads, conflicts;
} Analysis;

/* Apply one event. Returns -1 on memory failure. */
static int
apply(Analysis *a, Thread *t, int event, double now, const unsigned char *marker, int len,
      long long position)
{
    Conflict *c;
    t->events++;
    switch (event) {
    case START:
        t->cpu = t->pause = 0.0;
        t->aborting = 0;
        t->inev_event = -1;
        t->has_wait = 0;
        t->has_minor = 0;
        progress(t, now, S_RUN);
        break;
    case DETACH:
        progress(t, now, S_DETACHED);
        break;
    case REATTACH:
    case INEVITABLE:
        progress(t, now, S_RUN);
        if (t->inev_event < 0) {
            t->inev_event = event;
            t->inev_len = len;
            memcpy(t->inev_marker, marker, len);
            t->inev_time = now;
        }
        break;
    case COMMIT:
    case ABORT:
        progress(t, now, S_STOP);
        if (event == COMMIT) {
            t->committed += t->cpu;
            t->n_commit++;
        } else {
            t->aborted += t->cpu;
            t->n_abort++;
        }
        t->paused += t->pause;
        break;
    case WRITE_READ:
        if (t->aborting)
            break;   /* a second contention in one transaction is ignored */
        t->aborting = 1;
        progress(t, now, S_RUN);
        c = conflict_get(&a->conflicts, event, marker, len, position);
        if (!c || conflict_charge(c, now, t->cpu, t->pause) < 0)
            return -1;
        break;
    case WAIT_FREE_SEGMENT:
    case WAIT_SYNCING:
    case WAIT_SYNC_PAUSE:
    case WAIT_OTHER_INEVITABLE:
        progress(t, now, S_PAUSE);
        t->last_wait = event;
        if (event == WAIT_OTHER_INEVITABLE && t->inev_event >= 0) {
            t->has_wait = 1;
            t->wait_start = now;
        }
        break;
    case WAIT_DONE:
        progress(t, now, t->last_wait == WAIT_FREE_SEGMENT ? S_STOP : S_RUN);
        if (t->has_wait) {
            c = conflict_get(&a->conflicts, t->inev_event, t->inev_marker, t->inev_len,
                             position);
            if (!c || conflict_charge(c, t->inev_time, 0.0, now - t->wait_start) < 0)
                return -1;
            t->has_wait = 0;
        }
        break;
    case MINOR_START:
        if (t->state == S_DETACHED)
            progress(t, now, S_RUN);
        t->has_minor = 1;
        t->minor_start = now;
        break;
    case MINOR_DONE:
        gc_done(&t->has_minor, t->minor_start, &t->gc_minor, now);
        break;
    case MAJOR_START:
        t->has_major = 1;
        t->major_start = now;
        break;
    case MAJOR_DONE:
        gc_done(&t->has_major, t->major_start, &t->gc_major, now);
        break;
    }
    return 0;
}

/* Damage: ValueError(((offset, kind, value, previous value),)); the caller words it. */
static void
raise_damage(long long offset, const char *kind, double value, double before)
{
    PyObject *args = Py_BuildValue("((Lsdd))", offset, kind, value, before);
    if (args) {
        PyErr_SetObject(PyExc_ValueError, args);
        Py_DECREF(args);
    }
}

/* A conflict's time line: its events counted in `buckets` slices of [first, last]. */
static PyObject *
time_line(const Conflict *c, double first, double last, int buckets)
{
    double total = last - first;
    PyObject *line = PyList_New(buckets);
    long long *counts = calloc(buckets, sizeof(long long));
    if (!line || !counts) {
        Py_XDECREF(line);
        free(counts);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < c->n_times; i++) {
        long long index = total > 0 ? (long long)((c->times[i] - first) / total * buckets) : 0;
        counts[index < 0 ? 0 : index >= buckets ? buckets - 1 : index]++;
    }
    for (int k = 0; k < buckets; k++) {
        PyObject *n = PyLong_FromLongLong(counts[k]);
        if (!n) {
            Py_DECREF(line);
            free(counts);
            return NULL;
        }
        PyList_SET_ITEM(line, k, n);
    }
    free(counts);
    return line;
}

static PyObject *
build_result(Analysis *a, long long events, double first, double last, long long stop,
             int buckets)
{
    PyObject *threads = PyList_New(0), *conflicts = PyList_New(0), *item;
    if (!threads || !conflicts)
        goto fail;
    for (size_t i = 0; i < a->threads.cap; i++) {
        Thread *t = table_slot(&a->threads, i);
        if (!t->used)
            continue;
        item = Py_BuildValue("(kdddddLLLL)", (unsigned long)t->num, t->committed, t->aborted,
                             t->paused, t->gc_minor, t->gc_major, t->n_commit, t->n_abort,
                             t->events, t->first_event);
        if (!item || PyList_Append(threads, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
    }
    for (size_t i = 0; i < a->conflicts.cap; i++) {
        Conflict *c = table_slot(&a->conflicts, i);
        if (!c->used)
            continue;
        PyObject *line = time_line(c, first, last, buckets);
        if (!line)
            goto fail;
        item = Py_BuildValue("(iy#LddLN)", c->event, (const char *)c->marker,
                             (Py_ssize_t)c->len, c->count, c->aborted, c->paused,
                             c->first_seen, line);
        if (!item || PyList_Append(conflicts, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
    }
    return Py_BuildValue("(LddLNN)", events, first, last, stop, threads, conflicts);
fail:
    Py_XDECREF(threads);
    Py_XDECREF(conflicts);
    return NULL;
}

static void
analysis_free(Analysis *a)
{
    if (a->conflicts.items) {
        for (size_t i = 0; i < a->conflicts.cap; i++)
            free(((Conflict *)table_slot(&a->conflicts, i))->times);
    }
    free(a->threads.items);
    free(a->conflicts.items);
}

/* Up to `n` bytes from read(n) into `into`: how many (0 at the end), or -1 with an exception. */
static Py_ssize_t
read_block(PyObject *read, unsigned char *into, Py_ssize_t n)
{
    PyObject *data = PyObject_CallFunction(read, "n", n);
    if (!data)
        return -1;
    char *bytes;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(data, &bytes, &len) < 0) {
        Py_DECREF(data);
        return -1;
    }
    if (len > n) {
        Py_DECREF(data);
        PyErr_SetString(PyExc_ValueError, "read(n) returned more than n bytes");
        return -1;
    }
    memcpy(into, bytes, (size_t)len);
    Py_DECREF(data);
    return len;
}

static PyObject *
scan(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *read;
    long long start, size, every;
    int buckets;
    Py_buffer translate;
    PyObject *callback;
    if (!PyArg_ParseTuple(args, "OLLy*OLi", &read, &start, &size, &translate, &callback,
                          &every, &buckets))
        return NULL;
    if (buckets < 1) {
        PyBuffer_Release(&translate);
        PyErr_SetString(PyExc_ValueError, "buckets must be 1 or more");
        return NULL;
    }
    if (translate.len != 256) {
        PyBuffer_Release(&translate);
        PyErr_SetString(PyExc_TypeError, "translate must be 256 bytes");
        return NULL;
    }
    unsigned char table[256];
    memcpy(table, translate.buf, 256);
    PyBuffer_Release(&translate);

    Analysis a = {{0}, {0}};
    unsigned char *buf = malloc(BLOCK + HEADER + MAX_MARKER);
    PyObject *result = NULL;
    if (!buf || table_init(&a.threads, sizeof(Thread)) < 0
            || table_init(&a.conflicts, sizeof(Conflict)) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    long long base = start;      /* log offset of buf[0] */
    size_t have = 0;
    long long events = 0, next_progress = start + every;
    double first = 0.0, last = -1.0;
    for (;;) {
        Py_ssize_t got = read_block(read, buf + have, BLOCK);
        if (got < 0)
            goto done;
        have += (size_t)got;
        size_t pos = 0;
        while (pos + HEADER <= have) {
            const unsigned char *r = buf + pos;
            uint32_t sec, nsec, num;
            memcpy(&sec, r, 4);       /* little-endian: stmgc only ran on x86-64 */
            memcpy(&nsec, r + 4, 4);
            memcpy(&num, r + 8, 4);
            int raw = r[12], len = r[13];
            if (pos + HEADER + len > have)
                break;   /* the marker is in the next block */
            long long offset = base + (long long)pos;
            int event = table[raw];
            double now = (double)sec + 0.000000001 * (double)nsec;
            if (event == 255) {
                raise_damage(offset, "event", raw, 0.0);
                goto done;
            }
            if (len > MAX_MARKER) {
                raise_damage(offset, "marker", len, 0.0);
                goto done;
            }
            if (now < last) {
                raise_damage(offset, "time", now, last);
                goto done;
            }
            if (events == 0)
                first = now;
            last = now;
            Thread *t = thread_get(&a.threads, num, events);
            if (!t || apply(&a, t, event, now, r + HEADER, len, events) < 0) {
                PyErr_NoMemory();
                goto done;
            }
            events++;
            pos += HEADER + len;
        }
        memmove(buf, buf + pos, have - pos);
        base += pos;
        have -= pos;
        if (callback != Py_None && (base >= next_progress || got == 0)) {
            next_progress = base + every;
            PyObject *r = PyObject_CallFunction(callback, "LL", base, size);
            if (!r)
                goto done;
            Py_DECREF(r);
        }
        if (got == 0)
            break;
    }
    result = build_result(&a, events, first, last, base, buckets);
done:
    free(buf);
    analysis_free(&a);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Read and analyse a C8 log (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},   /* no shared state: safe without the GIL */
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "stmlog_tools._fastc8",
    "The C8 analysis pass of stmlog_tools.analysis in C (optional accelerator).",
    0, methods, slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__fastc8(void)
{
    return PyModuleDef_Init(&module);
}
