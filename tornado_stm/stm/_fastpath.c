/*
 * _fastpath: the hot cases of the STM barriers, in C.
 *
 * The contract is the module docstring of tornado_stm/stm/barriers.py: the
 * instrumenter rewrites application code into calls such as
 * get_item(tx, obj, key), and every barrier must behave exactly as the
 * plain operation (same result, same exception) while recording reads and
 * routing writes. This module implements that contract for the cases that
 * dominate real code and returns everything else to the Python barrier of
 * the same name, called with the same arguments. A C barrier only hands
 * over *before* it has had any effect, so "C fast case, else the Python
 * function" is the Python function, only faster. What is done here:
 *
 *   current()               the thread's transaction: a C thread-local
 *                           behind TxSlot, which is txn._local when this
 *                           module is used;
 *   every barrier           the early exits: tx None or inevitable (reads
 *                           are plain), objects private to the section,
 *                           immutable builtin types;
 *   get_item, contains,     the versioned read of one stripe, as
 *   iterate, get_attr,      Transaction.versioned: count the read (and
 *   get_global              re-validate every VALIDATE_EVERY reads), read
 *                           the stripe's version, the value, the version
 *                           again, retry or extend the snapshot when they
 *                           differ or are newer, add the stripe to the
 *                           read set; for exact lists, dicts and sets
 *                           without a redo log in this transaction, plain
 *                           attributes (the per-(type, name) answer cached
 *                           by attrkinds) and module attributes;
 *   view, deep_view,        the early exits only (tx None or inevitable,
 *   truth, touch            immutable values, private objects);
 *   tick                    Transaction.tick (count_read);
 *   call                    section entries and instrumented functions,
 *                           bound methods of private containers, and
 *                           "pure" / "mutates (private args only)" calls
 *                           whose policy is already in policy's cache.
 *
 * Everything else (redo-log hits, writes to shared state, direct writes,
 * inevitability, the policy decisions not yet cached) is Python.
 *
 * The C code mirrors these Python functions, which must be reviewed here
 * when they change (tests/stm/test_fastpath.py compares both on a table of
 * cases): barriers.get_attr, _module_attr, get_item, set_attr, del_attr,
 * set_item, del_item, get_global, iterate, contains, new, call,
 * _call_optimistic, _bound_container, _call_reading, _can_shadow, _fresh,
 * _class_policy; Transaction.versioned, read_attr, whole_read,
 * read_dict_item, dict_contains; attrkinds.read_kind (its cache);
 * policy.lookup and normalize (the cache, for functions and classes).
 *
 * Threads. On a free-threaded build the module declares Py_MOD_GIL_NOT_USED.
 * Shared containers (the version table, the caches, the instrumented-code
 * set) are only read through strong-reference APIs (PyList_GetItemRef,
 * PyDict_GetItemRef, PySet_Contains). A transaction's slots are read with
 * PyMember_GetOne; they are written only by the thread running it.
 * Module state is set once by configure() before any barrier runs, so the
 * module supports one interpreter per process.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

/* -- compatibility with 3.11 / 3.12 ------------------------------------ */

#if PY_VERSION_HEX < 0x030D0000
static int
PyDict_GetItemRef(PyObject *d, PyObject *key, PyObject **result)
{
    PyObject *value = PyDict_GetItemWithError(d, key);   /* safe under the GIL */
    if (value != NULL) {
        *result = Py_NewRef(value);
        return 1;
    }
    *result = NULL;
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *
PyList_GetItemRef(PyObject *list, Py_ssize_t index)
{
    PyObject *value = PyList_GetItem(list, index);
    Py_XINCREF(value);
    return value;
}
#endif

#if defined(_MSC_VER)
#  define THREAD_LOCAL __declspec(thread)
#else
#  define THREAD_LOCAL _Thread_local
#endif

/* -- module state (set once by configure) ------------------------------ */

enum { B_CURRENT, B_GET_ATTR, B_SET_ATTR, B_DEL_ATTR, B_GET_ITEM, B_SET_ITEM, B_DEL_ITEM,
       B_GET_GLOBAL, B_CALL, B_ITERATE, B_CONTAINS, B_NEW, B_VIEW, B_DEEP_VIEW, B_TRUTH,
       B_TOUCH, B_TICK, B_BINARY, B_COMPARE, B_OPERAND, B_RECURSIVE_CALLEE, B_METHOD_TO_CALL,
       B_COUNT };
static const char *barrier_names[B_COUNT] = {
    "current", "get_attr", "set_attr", "del_attr", "get_item", "set_item", "del_item",
    "get_global", "call", "iterate", "contains", "new", "view", "deep_view", "truth",
    "touch", "tick", "binary", "compare", "operand", "recursive_callee", "method_to_call"};

static struct {
    int configured;
    PyTypeObject *tx_type;          /* txn.Transaction */
    PyMemberDef *m_rv, *m_reads, *m_private, *m_attrs, *m_containers, *m_inevitable,
                *m_read_count;
    PyTypeObject *policy_type;      /* policy.CallPolicy (a frozen dataclass with slots) */
    PyMemberDef *m_kind, *m_writes, *m_fresh, *m_handler;
    PyObject *validate_every;       /* txn.VALIDATE_EVERY: [reads between validations] */
    PyObject *versions;             /* versions.VERSIONS */
    uint64_t stripe_mask, key_salt;
    PyObject *immutable_types;      /* attrkinds.IMMUTABLE_TYPES */
    PyObject *read_cache;           /* attrkinds._read_cache */
    long kind_plain, kind_immutable, kind_run, kind_module, kind_nondata;
    PyObject *policy_cache;         /* policy._cache */
    PyObject *irrevocable;          /* policy.IRREVOCABLE */
    PyObject *class_policies;       /* barriers._class_policies, or NULL */
    PyObject *deep_readers;         /* calls.DEEP_READERS (a set), or NULL */
    PyObject *instrumented_codes;   /* registry.INSTRUMENTED_CODES */
    PyObject *versioned_modules;    /* registry.VERSIONED_MODULES */
    PyObject *entry_code;           /* section.ENTRY_CODE */
    PyObject *frame_types;          /* generator, coroutine, async generator */
    PyObject *container_types;      /* txn.CONTAINER_TYPES */
    PyObject *defaultdict_type;     /* collections.defaultdict */
    PyObject *builtins_dict;
    PyObject *python[B_COUNT];      /* the Python barriers */
    /* interned strings */
    PyObject *s_check, *s_extend,
             *s_add, *s_adopt, *s_globals, *s_code;
} S;

/* Returned by the helpers below when the case is not handled here: the caller
 * then hands the whole barrier call to the Python barrier. */
static PyObject fallback_marker;
#define FALLBACK (&fallback_marker)

static PyObject *
to_python(int barrier, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    return PyObject_Vectorcall(S.python[barrier], args, nargsf, kwnames);
}

#define NOT_CONFIGURED() \
    (PyErr_SetString(PyExc_RuntimeError, "tornado_stm.stm._fastpath is not configured"), NULL)

/* -- the current transaction ------------------------------------------- */

/* Each thread's current transaction (a strong reference, NULL for None).
 * The engine sets it back to None when a section ends. */
static THREAD_LOCAL PyObject *current_tx = NULL;

typedef struct {
    PyObject_HEAD
} TxSlotObject;

/* While a coroutine or generator step runs outside any section without W
 * yet (section._step), the callable that takes W for the rest of the step:
 * called by the first barrier that may touch shared state (step_needs_w).
 * NULL otherwise. */
static THREAD_LOCAL PyObject *step_pending = NULL;

/* A TxSlot field's value: its thread-local slot, None when empty. */
static PyObject *
slot_value(PyObject *slot)
{
    return Py_NewRef(slot != NULL ? slot : Py_None);
}

/* Set a TxSlot field's thread-local slot. Like the threading.local it
 * replaces, setting None or deleting it empties the slot. */
static void
slot_store(PyObject **slot, PyObject *value)
{
    PyObject *old = *slot;
    *slot = (value == NULL || value == Py_None) ? NULL : Py_NewRef(value);
    Py_XDECREF(old);
}

static PyObject *
txslot_get_step(PyObject *self, void *closure)
{
    return slot_value(step_pending);
}

static int
txslot_set_step(PyObject *self, PyObject *value, void *closure)
{
    slot_store(&step_pending, value);
    return 0;
}

static PyObject *
txslot_get_tx(PyObject *self, void *closure)
{
    return slot_value(current_tx);
}

static int
txslot_set_tx(PyObject *self, PyObject *value, void *closure)
{
    slot_store(&current_tx, value);
    return 0;
}

static PyGetSetDef txslot_getset[] = {
    {"tx", txslot_get_tx, txslot_set_tx, "This thread's transaction (None outside sections).",
     NULL},
    {"step", txslot_get_step, txslot_set_step,
     "What takes W for a step running outside sections that has not yet (None otherwise).",
     NULL},
    {NULL}
};

static PyTypeObject TxSlotType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tornado_stm.stm._fastpath.TxSlot",
    .tp_basicsize = sizeof(TxSlotObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Per-thread slot of the current transaction (the C txn._local).",
    .tp_getset = txslot_getset,
    .tp_new = PyType_GenericNew,
};

static PyObject *
fp_current(PyObject *module, PyObject *unused)
{
    if (!S.configured)
        return NOT_CONFIGURED();
    return Py_NewRef(current_tx != NULL ? current_tx : Py_None);
}

/* -- transaction slots --------------------------------------------------- */

/* A new reference to a slot of a Transaction (AttributeError when unset).
 * A transaction's slots are only ever written by the thread running it, which
 * is the thread calling its barriers: a plain load is enough (PyMember_GetOne
 * would guard against concurrent writers that do not exist here). */
static inline PyObject *
slot(PyObject *tx, PyMemberDef *member)
{
    PyObject *value = *(PyObject **)((char *)tx + member->offset);
    if (value == NULL)
        return PyMember_GetOne((const char *)tx, member);    /* raises AttributeError */
    return Py_NewRef(value);
}

enum { MODE_ERROR = -1, MODE_OPTIMISTIC = 0, MODE_PLAIN = 1, MODE_DONE = 2 };

/* MODE_PLAIN when ``tx is None or tx.inevitable``, MODE_OPTIMISTIC for an
 * optimistic Transaction (enter() has checked that tx is one or the other). */
static int
tx_mode(PyObject *tx)
{
    if (tx == Py_None)
        return MODE_PLAIN;
    PyObject *inevitable = slot(tx, S.m_inevitable);
    if (inevitable == NULL)
        return MODE_ERROR;
    int truth = PyObject_IsTrue(inevitable);
    Py_DECREF(inevitable);
    if (truth < 0)
        return MODE_ERROR;
    return truth ? MODE_PLAIN : MODE_OPTIMISTIC;
}

/* -- privacy: ``id(obj) in tx.private`` ------------------------------------ */

/* A section's hot loops ask again and again about the same few objects (a
 * private frontier, the rows of a shared grid). The answer is kept per
 * thread, keyed by the private dict, its version tag and the object: a dict's
 * ma_version_tag changes at every insertion and deletion and is never reused
 * (PEP 509), so an entry whose tag still matches still tells the truth. An
 * object cannot be freed and replaced at its address under an unchanged tag
 * while it matters: a private object is kept alive by the dict, and a new
 * object made private is an insertion. Checked at configure (dict_versions);
 * without version tags (3.14 dropped them) every question goes to the dict. */
#define PRIVACY_CACHE_SIZE 256
typedef struct {
    PyObject *dict;             /* identities only: never dereferenced */
    PyObject *obj;
    uint64_t version;
    int answer;
} PrivacyEntry;
static THREAD_LOCAL PrivacyEntry privacy_cache[PRIVACY_CACHE_SIZE];
static int dict_versions_usable;

#if PY_VERSION_HEX < 0x030E0000
#  if defined(__GNUC__)
#    pragma GCC diagnostic push
#    pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#  endif
static inline uint64_t
dict_version(PyObject *d)
{
    return ((PyDictObject *)d)->ma_version_tag;
}
#  if defined(__GNUC__)
#    pragma GCC diagnostic pop
#  endif
#else
static inline uint64_t
dict_version(PyObject *d)
{
    (void)d;
    return 0;
}
#endif

/* 1 when this interpreter's dicts change their version tag at each
 * insertion and deletion (the privacy cache relies on it). */
static int
dict_versions(void)
{
    PyObject *d = PyDict_New();
    if (d == NULL)
        return -1;
    uint64_t empty = dict_version(d);
    int ok = PyDict_SetItem(d, Py_None, Py_None);
    uint64_t one = dict_version(d);
    ok = ok < 0 ? ok : PyDict_DelItem(d, Py_None);
    uint64_t none = dict_version(d);
    Py_DECREF(d);
    if (ok < 0)
        return -1;
    return one != empty && none != one && none != empty;
}

/* ``id(obj) in tx.private`` (1, 0, or -1 on error). */
static int
is_private(PyObject *tx, PyObject *obj)
{
    PyObject *private = slot(tx, S.m_private);
    if (private == NULL)
        return -1;
    int exact = PyDict_CheckExact(private), cached = exact && dict_versions_usable;
    if (exact && PyDict_GET_SIZE(private) == 0) {
        Py_DECREF(private);             /* common, and no id() to allocate */
        return 0;
    }
    PrivacyEntry *entry = &privacy_cache[((uintptr_t)obj >> 4) & (PRIVACY_CACHE_SIZE - 1)];
    uint64_t version = cached ? dict_version(private) : 0;
    if (cached && entry->dict == private && entry->obj == obj && entry->version == version) {
        Py_DECREF(private);
        return entry->answer;
    }
    PyObject *key = PyLong_FromVoidPtr(obj);
    int found = key == NULL ? -1 : PySequence_Contains(private, key);
    Py_XDECREF(key);
    if (found >= 0 && cached && version != 0)
        *entry = (PrivacyEntry){private, obj, version, found};
    Py_DECREF(private);
    return found;
}

/* txn.PRUNE_PRIVATE_EVERY (checked equal at import by fastpath.py) */
#define PRUNE_PRIVATE_EVERY (1 << 16)

/* ``tx.private[id(obj)] = obj`` */
static int
mark_private(PyObject *tx, PyObject *obj)
{
    PyObject *private = slot(tx, S.m_private);
    if (private == NULL)
        return -1;
    PyObject *key = PyLong_FromVoidPtr(obj);
    if (key == NULL) {
        Py_DECREF(private);
        return -1;
    }
    int status = PyObject_SetItem(private, key, obj);
    Py_DECREF(key);
    if (status == 0 && PyDict_CheckExact(private)
            && PyDict_GET_SIZE(private) % PRUNE_PRIVATE_EVERY == 0) {
        /* txn.Transaction.prune_private: the section's dead temporaries go */
        PyObject *done = PyObject_CallMethod(tx, "prune_private", NULL);
        if (done == NULL)
            status = -1;
        Py_XDECREF(done);
    }
    Py_DECREF(private);
    return status;
}

/* ``tx.containers.get(id(obj)) is None`` (1 yes, 0 there is a log, -1 error) */
static int
no_container_log(PyObject *tx, PyObject *obj)
{
    PyObject *containers = slot(tx, S.m_containers);
    if (containers == NULL)
        return -1;
    if (PyDict_CheckExact(containers) && PyDict_GET_SIZE(containers) == 0) {
        Py_DECREF(containers);          /* no container written yet: the usual case */
        return 1;
    }
    int result;
    PyObject *key = PyLong_FromVoidPtr(obj);
    if (key == NULL) {
        result = -1;
    }
    else if (PyDict_CheckExact(containers)) {
        PyObject *log;
        result = PyDict_GetItemRef(containers, key, &log);
        if (result >= 0) {
            result = (log == NULL || log == Py_None);
            Py_XDECREF(log);
        }
    }
    else {
        PyObject *log = PyObject_CallMethod(containers, "get", "O", key);
        result = log == NULL ? -1 : log == Py_None;
        Py_XDECREF(log);
    }
    Py_XDECREF(key);
    Py_DECREF(containers);
    return result;
}

/* ``type(obj) in IMMUTABLE_TYPES``: the frozenset, copied at configure() into
 * an array of type pointers (a frozenset never changes). */
#define MAX_IMMUTABLE 32
static PyTypeObject *immutable_types[MAX_IMMUTABLE];
static int immutable_count;

static inline int
is_immutable_type(PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    /* The commonest operands first, by exact type (all of them are in
     * IMMUTABLE_TYPES, which attrkinds defines and configure() copied). */
    if ((type == &PyLong_Type || type == &PyTuple_Type || type == &PyUnicode_Type
         || type == &PyFloat_Type || type == &PyBool_Type || obj == Py_None)
        && immutable_count > 0)
        return 1;
    for (int i = 0; i < immutable_count; i++)
        if (immutable_types[i] == type)
            return 1;
    return 0;
}

/* The prologue of the read barriers: MODE_PLAIN when the plain operation is
 * the answer (tx None or inevitable, obj private to the section, or, when
 * ``immutable_too``, obj of an immutable builtin type), MODE_OPTIMISTIC or
 * MODE_ERROR. */
static int
read_mode(PyObject *tx, PyObject *obj, int immutable_too)
{
    int mode = tx_mode(tx);
    if (mode != MODE_OPTIMISTIC)
        return mode;
    int plain = immutable_too ? is_immutable_type(obj) : 0;
    if (plain == 0)
        plain = is_private(tx, obj);
    if (plain < 0)
        return MODE_ERROR;
    return plain ? MODE_PLAIN : MODE_OPTIMISTIC;
}

/* 1 for a value no barrier needs to see in direct mode: an exact number,
 * string, bytes, bool or None (not a tuple, which may hold shared objects). */
static inline int
is_scalar(PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    return type == &PyLong_Type || type == &PyFloat_Type || type == &PyUnicode_Type
        || type == &PyBool_Type || obj == Py_None || type == &PyBytes_Type;
}

/* 1 when a barrier called in direct mode during a step that has not taken W
 * (step_pending) may touch shared state, so that the step must take W first:
 * every barrier but new (a fresh object), tick, and the value barriers on
 * scalars. Calls decide for themselves (fp_call): calling instrumented code
 * touches nothing by itself. */
static int
step_needs_w(int barrier, PyObject *const *args, Py_ssize_t nargs)
{
    switch (barrier) {
    case B_CURRENT: case B_NEW: case B_TICK: case B_CALL: case B_RECURSIVE_CALLEE:
        return 0;
    case B_BINARY: case B_COMPARE:
        return !(nargs == 4 && is_scalar(args[2]) && is_scalar(args[3]));
    case B_VIEW: case B_OPERAND: case B_DEEP_VIEW: case B_TRUTH: case B_TOUCH:
        return !(nargs == 2 && is_scalar(args[1]));
    default:
        return 1;
    }
}

/* Take W for the rest of this step (see step_pending): 0, or -1 with an exception. */
static int
take_step_w(void)
{
    PyObject *take = Py_NewRef(step_pending);
    PyObject *r = PyObject_CallNoArgs(take);
    Py_DECREF(take);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* The prologue of every barrier that takes a transaction first: the module
 * is configured, the arguments have the shape the C code handles
 * (``args_ok``, which implies at least one argument) and args[0] is None or
 * a Transaction. Returns 1 to go on; 0 when the barrier is done, with
 * *result the Python barrier's answer (or NULL with an exception). */
static int
enter(int barrier, int args_ok, PyObject *const *args, size_t nargsf, PyObject *kwnames,
      PyObject **result)
{
    *result = NULL;
    if (!S.configured) {
        (void)NOT_CONFIGURED();
        return 0;
    }
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    /* (a shape the C code does not handle goes to Python, which does not check) */
    if (step_pending != NULL && nargs >= 1 && args[0] == Py_None
            && (!args_ok || step_needs_w(barrier, args, nargs)) && take_step_w() < 0)
        return 0;
    if (args_ok && (args[0] == Py_None || Py_TYPE(args[0]) == S.tx_type))
        return 1;
    *result = to_python(barrier, args, nargsf, kwnames);
    return 0;
}

/* enter(), then the mode of the read barriers: MODE_PLAIN or MODE_OPTIMISTIC
 * for the barrier to go on with, or MODE_DONE with *result its answer. The
 * mode is that of the object at ``args[obj_at]`` (see read_mode), or of tx
 * alone when obj_at < 0. */
static int
barrier_prologue(int barrier, int args_ok, PyObject *const *args, Py_ssize_t nargs,
                 int obj_at, int immutable_too, PyObject **result)
{
    if (!enter(barrier, args_ok, args, nargs, NULL, result))
        return MODE_DONE;
    int mode = obj_at < 0 ? tx_mode(args[0]) : read_mode(args[0], args[obj_at], immutable_too);
    return mode == MODE_ERROR ? MODE_DONE : mode;
}

/* calls.is_shared_iterator, privacy aside: the type has __next__. */
static inline int
is_iterator(PyObject *obj)
{
    return PyIter_Check(obj);
}

/* A keys, values or items view of a dict (OrderedDict's are subclasses). */
static inline int
is_dict_view(PyObject *obj)
{
    return PyObject_TypeCheck(obj, &PyDictKeys_Type) || PyObject_TypeCheck(obj, &PyDictValues_Type)
        || PyObject_TypeCheck(obj, &PyDictItems_Type);
}

/* 1 for a mutable object that is not a container but that calls.py must see
 * before plain code reads it (calls.read_other_shared): an iterator, whose
 * consumption no abort undoes; a mutable buffer (bytearray, array), whose
 * contents have no versions; a dict view or a mappingproxy, which reads its
 * mapping live. The
 * caller has checked that ``obj`` is not of an immutable type. */
static int
needs_python_read(PyObject *obj)
{
    return is_iterator(obj) || PyObject_CheckBuffer(obj) || is_dict_view(obj)
        || Py_IS_TYPE(obj, &PyDictProxy_Type);
}

/* ``isinstance(obj, (list, dict, set))``, without the ``__class__`` lookups of
 * the general case for exact containers and immutable builtins (whose
 * instances cannot claim another class). */
static inline int
is_container(PyObject *obj)
{
    if (PyList_CheckExact(obj) || PyDict_CheckExact(obj) || PySet_CheckExact(obj))
        return 1;
    if (is_immutable_type(obj))
        return 0;
    return PyObject_IsInstance(obj, S.container_types);
}

/* -- stripes --------------------------------------------------------------- */

/* versions.stripe_of_object(id(obj)) */
static inline Py_ssize_t
stripe_of_object(PyObject *obj)
{
    return (Py_ssize_t)((((uint64_t)(uintptr_t)obj) >> 4) & S.stripe_mask);
}

/* versions.stripe_of_key(id(obj), key); -1 with an exception if key is unhashable.
 * Python computes with unbounded ints and keeps the low bits (the mask), which
 * is what wrapping 64-bit arithmetic gives too. */
static inline Py_ssize_t
stripe_of_key(PyObject *obj, PyObject *key)
{
    Py_hash_t hash = PyObject_Hash(key);
    if (hash == -1 && PyErr_Occurred())
        return -1;
    uint64_t id = ((uint64_t)(uintptr_t)obj) >> 4;
    return (Py_ssize_t)((id ^ ((uint64_t)hash + S.key_salt)) & S.stripe_mask);
}

/* VERSIONS[stripe] as a C integer; -1 with an exception on error. */
static long long
version_of(Py_ssize_t stripe)
{
    PyObject *item = PyList_GetItemRef(S.versions, stripe);
    if (item == NULL)
        return -1;
    long long version = PyLong_AsLongLong(item);
    Py_DECREF(item);
    if (version == -1 && PyErr_Occurred())
        return -1;
    return version;
}

static long long
rv_of(PyObject *tx)
{
    PyObject *rv = slot(tx, S.m_rv);
    if (rv == NULL)
        return -1;
    long long value = PyLong_AsLongLong(rv);
    Py_DECREF(rv);
    if (value == -1 && PyErr_Occurred())
        return -1;
    return value;
}

/* Stripes this thread has added to one read set lately, so that a loop
 * reading the same rows again does not allocate an int and probe the set at
 * every read. The filter holds a strong reference to the set it describes:
 * that set cannot be freed and another made at its address while the
 * entries stand. A read set only grows during an attempt (an inevitable
 * section replaces it, and records no reads after), so "added" stays true. */
#define READ_FILTER_SIZE 1024
static THREAD_LOCAL PyObject *filtered_set = NULL;
static THREAD_LOCAL uint32_t filter_generation = 0;
static THREAD_LOCAL struct { Py_ssize_t stripe; uint32_t generation; }
    read_filter[READ_FILTER_SIZE];

/* ``tx.reads.add(stripe)`` */
static int
add_read(PyObject *tx, Py_ssize_t stripe)
{
    PyObject *reads = slot(tx, S.m_reads);
    if (reads == NULL)
        return -1;
    int exact = PySet_CheckExact(reads);
    if (exact && reads != filtered_set) {
        Py_XSETREF(filtered_set, Py_NewRef(reads));
        if (++filter_generation == 0) {         /* wrapped: forget every entry */
            memset(read_filter, 0, sizeof read_filter);
            filter_generation = 1;
        }
    }
    size_t at = (size_t)stripe & (READ_FILTER_SIZE - 1);
    if (exact && read_filter[at].generation == filter_generation
            && read_filter[at].stripe == stripe) {
        Py_DECREF(reads);
        return 0;
    }
    PyObject *number = PyLong_FromSsize_t(stripe);
    int status = -1;
    if (number != NULL) {
        if (PySet_Check(reads)) {
            status = PySet_Add(reads, number);
        }
        else {
            PyObject *r = PyObject_CallMethodOneArg(reads, S.s_add, number);
            status = r == NULL ? -1 : 0;
            Py_XDECREF(r);
        }
        Py_DECREF(number);
    }
    if (status == 0 && exact) {
        read_filter[at].stripe = stripe;
        read_filter[at].generation = filter_generation;
    }
    Py_DECREF(reads);
    return status;
}

/* ``self.read_count += 1; if not self.read_count % VALIDATE_EVERY[0]: self.check()``
 * (a count is a C integer here: no section reads 2**63 times). */
static int
count_read(PyObject *tx)
{
    PyObject *count = slot(tx, S.m_read_count);
    if (count == NULL)
        return -1;
    long long n = PyLong_AsLongLong(count);
    Py_DECREF(count);
    if (n == -1 && PyErr_Occurred())
        return -1;
    PyObject *next = PyLong_FromLongLong(++n);
    if (next == NULL)
        return -1;
    /* ``self.read_count = next``: a plain store, for the reason given at slot() */
    PyObject **address = (PyObject **)((char *)tx + S.m_read_count->offset);
    PyObject *previous = *address;
    *address = next;
    Py_XDECREF(previous);
    PyObject *every = PyList_GetItemRef(S.validate_every, 0);
    long long period = every == NULL ? -1 : PyLong_AsLongLong(every);
    Py_XDECREF(every);
    if (period <= 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "txn.VALIDATE_EVERY[0] must be a positive int");
        return -1;
    }
    if (n % period)
        return 0;
    PyObject *r = PyObject_CallMethodNoArgs(tx, S.s_check);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* -- the versioned read (Transaction.versioned) ------------------------------ */

typedef PyObject *(*read_op)(PyObject *a, PyObject *b);

static PyObject *
op_getitem(PyObject *obj, PyObject *key)
{
    return PyObject_GetItem(obj, key);
}

static PyObject *
op_getattr(PyObject *obj, PyObject *name)
{
    return PyObject_GetAttr(obj, name);
}

static PyObject *
op_contains(PyObject *container, PyObject *item)
{
    int found = PySequence_Contains(container, item);
    if (found < 0)
        return NULL;
    return PyBool_FromLong(found);
}

/* ``tx.versioned(stripe, op, a, b)``: op(a, b) consistent with the snapshot. */
static PyObject *
versioned(PyObject *tx, Py_ssize_t stripe, read_op op, PyObject *a, PyObject *b)
{
    if (count_read(tx) < 0)
        return NULL;
    for (;;) {
        long long before = version_of(stripe);
        if (before == -1)
            return NULL;
        long long rv = rv_of(tx);
        if (rv == -1)
            return NULL;
        if (before > rv) {
            PyObject *r = PyObject_CallMethod(tx, "extend", "n", stripe);
            if (r == NULL)
                return NULL;
            Py_DECREF(r);
            continue;
        }
        PyObject *value = op(a, b);
        if (value == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_Exception))
                return NULL;
            PyObject *type, *exc, *tb;
            PyErr_Fetch(&type, &exc, &tb);
            long long after = version_of(stripe);
            if (after == -1) {
                Py_XDECREF(type);
                Py_XDECREF(exc);
                Py_XDECREF(tb);
                return NULL;
            }
            if (after != before) {
                Py_XDECREF(type);
                Py_XDECREF(exc);
                Py_XDECREF(tb);
                continue;
            }
            if (add_read(tx, stripe) < 0) {
                Py_XDECREF(type);
                Py_XDECREF(exc);
                Py_XDECREF(tb);
                return NULL;
            }
            PyErr_Restore(type, exc, tb);
            return NULL;
        }
        long long after = version_of(stripe);
        if (after == -1) {
            Py_DECREF(value);
            return NULL;
        }
        if (after == before) {
            if (add_read(tx, stripe) < 0) {
                Py_DECREF(value);
                return NULL;
            }
            return value;
        }
        Py_DECREF(value);
    }
}

/* ``tx.whole_read(obj, op, arg)`` when obj has no redo log (else FALLBACK). */
static PyObject *
whole_read(PyObject *tx, PyObject *obj, read_op op, PyObject *arg)
{
    int none = no_container_log(tx, obj);
    if (none < 0)
        return NULL;
    if (!none)
        return FALLBACK;
    return versioned(tx, stripe_of_object(obj), op, obj, arg);
}

/* ``tx.read_dict_item(d, key)`` for an exact dict with no redo log (else FALLBACK). */
static PyObject *
read_dict_item(PyObject *tx, PyObject *d, PyObject *key)
{
    if (!PyDict_CheckExact(d))
        return FALLBACK;
    int none = no_container_log(tx, d);
    if (none < 0)
        return NULL;
    if (!none)
        return FALLBACK;
    Py_ssize_t stripe = stripe_of_key(d, key);
    if (stripe < 0)
        return NULL;
    return versioned(tx, stripe, op_getitem, d, key);
}

/* -- attributes ---------------------------------------------------------------- */

/* getattr(obj, name, *default) */
static PyObject *
plain_getattr(PyObject *obj, PyObject *name, PyObject *const *deflt)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL && deflt != NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return Py_NewRef(*deflt);
    }
    return value;
}

/* The cached attrkinds.read_kind(type(obj), name): 1 found (kind set), 0 not cached. */
static int
cached_read_kind(PyObject *obj, PyObject *name, long *kind)
{
    PyObject *key = PyTuple_Pack(2, (PyObject *)Py_TYPE(obj), name);
    if (key == NULL)
        return -1;
    PyObject *cached;
    int found = PyDict_GetItemRef(S.read_cache, key, &cached);
    Py_DECREF(key);
    if (found <= 0)
        return found;
    found = 0;
    if (PyTuple_Check(cached) && PyTuple_GET_SIZE(cached) == 2
            && PyLong_CheckExact(PyTuple_GET_ITEM(cached, 0))) {
        *kind = PyLong_AsLong(PyTuple_GET_ITEM(cached, 0));
        found = (*kind == -1 && PyErr_Occurred()) ? -1 : 1;
    }
    Py_DECREF(cached);
    return found;
}

/* Whether tx's attribute redo log has (obj, name): 1, 0, -1 on error. */
static int
attr_logged(PyObject *tx, PyObject *obj, PyObject *name)
{
    PyObject *attrs = slot(tx, S.m_attrs);
    if (attrs == NULL)
        return -1;
    if (!PyDict_CheckExact(attrs)) {
        Py_DECREF(attrs);
        return 1;                       /* unknown shape: let Python decide */
    }
    if (PyDict_GET_SIZE(attrs) == 0) {
        Py_DECREF(attrs);
        return 0;
    }
    PyObject *key = PyLong_FromVoidPtr(obj);
    PyObject *record = NULL;
    int found = key == NULL ? -1 : PyDict_GetItemRef(attrs, key, &record);
    Py_XDECREF(key);
    Py_DECREF(attrs);
    if (found <= 0)
        return found;
    /* record is [obj, {name: value}] */
    found = 1;
    if (PyList_CheckExact(record)) {
        PyObject *names = PyList_GetItemRef(record, 1);
        if (names == NULL) {
            PyErr_Clear();
        }
        else {
            found = PySequence_Contains(names, name);
            Py_DECREF(names);
        }
    }
    Py_DECREF(record);
    return found;
}

static PyObject *
fp_get_attr(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    int mode = barrier_prologue(B_GET_ATTR, nargs >= 3 && nargs <= 4 && PyUnicode_Check(args[2]),
                                args, nargs, 1, 0, &result);
    if (mode == MODE_DONE)
        return result;
    PyObject *tx = args[0], *obj = args[1], *name = args[2];
    PyObject *const *deflt = nargs == 4 ? &args[3] : NULL;
    long kind = -1;
    if (name == S.s_globals || name == S.s_code)  /* a module's dict, a function's code */
        return to_python(B_GET_ATTR, args, nargs, NULL);
    if (mode == MODE_PLAIN) {
        if (tx == Py_None)
            return plain_getattr(obj, name, deflt);
        if (tx_mode(tx) != MODE_OPTIMISTIC) {
            /* Inevitable: plain, except through a non-data descriptor that may
             * store its answer in the instance (barriers._read_nondata_in_place). */
            int cached = cached_read_kind(obj, name, &kind);
            if (cached < 0)
                return NULL;
            if (cached && kind != S.kind_nondata)
                return plain_getattr(obj, name, deflt);
            return to_python(B_GET_ATTR, args, nargs, NULL);
        }
        /* An object private to the section: its own attributes are plain,
         * but a class attribute read through it is shared state (Python's). */
        int cached = cached_read_kind(obj, name, &kind);
        if (cached < 0)
            return NULL;
        if (cached && (kind == S.kind_plain || kind == S.kind_immutable || kind == S.kind_run
                       || kind == S.kind_module))
            return plain_getattr(obj, name, deflt);
        return to_python(B_GET_ATTR, args, nargs, NULL);
    }

    int cached = cached_read_kind(obj, name, &kind);
    if (cached < 0)
        return NULL;
    if (!cached)
        return to_python(B_GET_ATTR, args, nargs, NULL);
    PyObject *value;
    if (kind == S.kind_plain) {
        int logged = attr_logged(tx, obj, name);
        if (logged < 0)
            return NULL;
        if (logged)
            return to_python(B_GET_ATTR, args, nargs, NULL);
        Py_ssize_t stripe = stripe_of_key(obj, name);
        if (stripe < 0)
            return NULL;
        value = versioned(tx, stripe, op_getattr, obj, name);
    }
    else if (kind == S.kind_immutable || kind == S.kind_run) {
        value = PyObject_GetAttr(obj, name);
    }
    else if (kind == S.kind_module && PyModule_Check(obj)) {
        /* A library module no section writes is read plainly
         * (registry.VERSIONED_MODULES, barriers.versioning_module). */
        int versioned = PySet_Contains(S.versioned_modules, obj);
        if (versioned < 0)
            return NULL;
        if (!versioned)
            return plain_getattr(obj, name, deflt);
        PyObject *d = PyModule_GetDict(obj);       /* borrowed, lives with the module */
        value = read_dict_item(tx, d, name);
        if (value == FALLBACK)
            return to_python(B_GET_ATTR, args, nargs, NULL);
        if (value == NULL && PyErr_ExceptionMatches(PyExc_KeyError)) {
            /* module __getattr__, or the proper AttributeError, as this
             * section sees the module (barriers._module_attr) */
            PyErr_Clear();
            return to_python(B_GET_ATTR, args, nargs, NULL);
        }
    }
    else {
        return to_python(B_GET_ATTR, args, nargs, NULL);
    }
    if (value == NULL && deflt != NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return Py_NewRef(*deflt);
    }
    return value;
}

/* set_attr, del_attr, set_item and del_item: an object private to the section
 * (not a class) is written in place, as plain Python would; anything else is
 * Python's. */
static PyObject *
private_write(int barrier, PyObject *const *args, Py_ssize_t nargs)
{
    int attr = barrier == B_SET_ATTR || barrier == B_DEL_ATTR;
    int set = barrier == B_SET_ATTR || barrier == B_SET_ITEM;
    PyObject *result;
    if (!enter(barrier, nargs == (set ? 4 : 3) && (!attr || PyUnicode_Check(args[2])), args,
               nargs, NULL, &result))
        return result;
    if (args[0] == Py_None)             /* direct mode: Python's */
        return to_python(barrier, args, nargs, NULL);
    if (attr && PyType_Check(args[1]))  /* a class may change kinds (barriers._reshape_class) */
        return to_python(barrier, args, nargs, NULL);
    int private = is_private(args[0], args[1]);
    if (private < 0)
        return NULL;
    if (!private)
        return to_python(barrier, args, nargs, NULL);
    PyObject *value = set ? args[3] : NULL;
    int status = attr ? PyObject_SetAttr(args[1], args[2], value)
                      : set ? PyObject_SetItem(args[1], args[2], value)
                            : PyObject_DelItem(args[1], args[2]);
    if (status < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* method_to_call(tx, obj, name), ``obj.name`` called in an ``async def`` body:
 * get_attr, except in a coroutine step that has not taken W (step_pending),
 * where Python may put the lookup off until the step takes W. */
static PyObject *
fp_method_to_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs == 3 && !(args[0] == Py_None && step_pending != NULL))
        return fp_get_attr(module, args, nargs);
    if (!S.configured)
        return NOT_CONFIGURED();
    return to_python(B_METHOD_TO_CALL, args, nargs, NULL);
}

static PyObject *
fp_set_attr(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return private_write(B_SET_ATTR, args, nargs);
}

static PyObject *
fp_del_attr(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return private_write(B_DEL_ATTR, args, nargs);
}

/* -- subscripts ------------------------------------------------------------------ */

static PyObject *
fp_get_item(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    int mode = barrier_prologue(B_GET_ITEM, nargs == 3, args, nargs, 1, 1, &result);
    if (mode == MODE_DONE)
        return result;
    PyObject *tx = args[0], *obj = args[1], *key = args[2];
    if (mode == MODE_PLAIN) {
        /* a dict subclass's __missing__ (a defaultdict's) may insert the key
         * in place: barriers.get_item holds and versions that write */
        if (PyDict_Check(obj) && !PyDict_CheckExact(obj))
            return to_python(B_GET_ITEM, args, nargs, NULL);
        return PyObject_GetItem(obj, key);
    }
    PyObject *value = FALLBACK;
    if (PyDict_CheckExact(obj))
        value = read_dict_item(tx, obj, key);
    else if (PyList_CheckExact(obj))
        value = whole_read(tx, obj, op_getitem, key);
    if (value == FALLBACK)
        return to_python(B_GET_ITEM, args, nargs, NULL);
    return value;
}

static PyObject *
fp_set_item(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return private_write(B_SET_ITEM, args, nargs);
}

static PyObject *
fp_del_item(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return private_write(B_DEL_ITEM, args, nargs);
}

/* -- globals ------------------------------------------------------------------------ */

static PyObject *
fp_get_global(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    int mode = barrier_prologue(B_GET_GLOBAL, nargs == 3 && PyDict_CheckExact(args[1]),
                                args, nargs, -1, 0, &result);
    if (mode == MODE_DONE)
        return result;
    PyObject *tx = args[0], *namespace = args[1], *name = args[2];
    PyObject *value;
    if (mode == MODE_PLAIN) {
        int found = PyDict_GetItemRef(namespace, name, &value);
        if (found < 0)
            return NULL;
        if (found)
            return value;
        /* a builtin, or NameError: Python does it (nothing has happened yet) */
        return to_python(B_GET_GLOBAL, args, nargs, NULL);
    }
    value = read_dict_item(tx, namespace, name);
    if (value == FALLBACK)
        return to_python(B_GET_GLOBAL, args, nargs, NULL);
    if (value != NULL || !PyErr_ExceptionMatches(PyExc_KeyError))
        return value;
    /* The name is not a global (and that read is recorded): a builtin, or NameError. */
    PyErr_Clear();
    int found = PyDict_GetItemRef(S.builtins_dict, name, &value);
    if (found < 0)
        return NULL;
    if (found)
        return value;
    PyObject *message = PyUnicode_FromFormat("name %R is not defined", name);
    if (message == NULL)
        return NULL;
    PyObject *exc = PyObject_CallOneArg(PyExc_NameError, message);
    Py_DECREF(message);
    if (exc == NULL)
        return NULL;
    if (PyObject_SetAttrString(exc, "name", name) < 0) {
        Py_DECREF(exc);
        return NULL;
    }
    PyException_SetCause(exc, NULL);               /* "from None" */
    PyErr_SetObject(PyExc_NameError, exc);
    Py_DECREF(exc);
    return NULL;
}

/* -- iteration, membership, fresh objects ----------------------------------------- */

static PyObject *
fp_iterate(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    int mode = barrier_prologue(B_ITERATE, nargs == 2, args, nargs, 1, 0, &result);
    if (mode == MODE_DONE)
        return result;
    PyObject *obj = args[1];
    if (mode == MODE_PLAIN)
        return Py_NewRef(obj);
    /* A shared container is iterated through its read shadow: Python's. */
    if (PyList_CheckExact(obj) || PyDict_CheckExact(obj) || PySet_CheckExact(obj))
        return to_python(B_ITERATE, args, nargs, NULL);
    /* An immutable builtin cannot be (or pretend to be) a container or a frame. */
    int immutable = is_immutable_type(obj);
    if (immutable < 0)
        return NULL;
    if (!immutable) {
        int special = PyObject_IsInstance(obj, S.container_types);
        if (special == 0)   /* (an iterable: what its __iter__ hands back is Python's) */
            special = needs_python_read(obj) || Py_TYPE(obj)->tp_iter != NULL;
        if (special < 0)
            return NULL;
        if (special)
            return to_python(B_ITERATE, args, nargs, NULL);
    }
    return Py_NewRef(obj);
}

/* 1 for a tuple or a frozenset: immutable itself, but it may hold mutable
 * objects, whose state readers of nested values (repr, ==, sum) reach. */
static inline int
holds_values(PyObject *obj)
{
    return PyTuple_CheckExact(obj) || PyFrozenSet_CheckExact(obj);
}

static int flat_immutable_values(PyObject *obj, int depth);

static PyObject *
fp_contains(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    /* [1, 2] in rows (rows private or not) compares nested values: Python's.
     * So does a needle of that kind in a container without __contains__ (an
     * iterator, an application iterable), which C iterates, comparing the
     * needle with each item, contents included. A set only hashes and
     * compares hashable items; a tuple of atoms compared with anything
     * reads nothing nested. */
    if (nargs == 3) {
        PySequenceMethods *seq = Py_TYPE(args[2])->tp_as_sequence;
        if ((PyTuple_CheckExact(args[2]) || PyList_CheckExact(args[2])
                    || seq == NULL || seq->sq_contains == NULL)
                && (!is_immutable_type(args[1])
                    || (holds_values(args[1]) && !flat_immutable_values(args[1], 0))))
            return to_python(B_CONTAINS, args, nargs, NULL);
    }
    int mode = barrier_prologue(B_CONTAINS, nargs == 3, args, nargs, 2, 1, &result);
    if (mode == MODE_DONE)
        return result;
    PyObject *tx = args[0], *item = args[1], *container = args[2];
    if (mode == MODE_PLAIN)
        return op_contains(container, item);
    PyObject *value = FALLBACK;
    if (PyDict_CheckExact(container)) {
        int none = no_container_log(tx, container);
        if (none < 0)
            return NULL;
        if (none) {
            Py_ssize_t stripe = stripe_of_key(container, item);
            if (stripe < 0)
                return NULL;
            value = versioned(tx, stripe, op_contains, container, item);
        }
    }
    else if (PyList_CheckExact(container) || PySet_CheckExact(container)) {
        value = whole_read(tx, container, op_contains, item);
    }
    if (value == FALLBACK)
        return to_python(B_CONTAINS, args, nargs, NULL);
    return value;
}

/* -- values read by plain Python: view, deep_view, truth, touch; tick ------------------ */

/* The early exits the four value barriers share: 1 when obj is read as it is
 * (tx None or inevitable, an immutable builtin other than a tuple or frozenset,
 * an object private to the section), 0 when Python must decide, -1 with an
 * exception. Tuples and frozensets go to Python only for deep_view (what they
 * hold may be shared and mutable). */
/* 1 when a tuple or frozenset holds only immutable builtins (tuples and
 * frozensets of them included, a few levels deep): deep_view has nothing to
 * record in it. */
static int
flat_immutable_values(PyObject *obj, int depth)
{
    if (depth > 3)
        return 0;
    if (PyFrozenSet_CheckExact(obj)) {
        /* (no public way to walk a set's entries without an iterator) */
        PyObject *iterator = PyObject_GetIter(obj), *item;
        if (iterator == NULL) {
            PyErr_Clear();
            return 0;
        }
        int flat = 1;
        while (flat && (item = PyIter_Next(iterator)) != NULL) {
            flat = holds_values(item) ? flat_immutable_values(item, depth + 1)
                                      : is_immutable_type(item);
            Py_DECREF(item);
        }
        Py_DECREF(iterator);
        PyErr_Clear();
        return flat;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); i++) {
        PyObject *item = PyTuple_GET_ITEM(obj, i);
        if (holds_values(item)) {
            if (!flat_immutable_values(item, depth + 1))
                return 0;
        }
        else if (!is_immutable_type(item)) {
            return 0;
        }
    }
    return 1;
}

static int
value_is_plain(PyObject *tx, PyObject *obj, int tuples_plain)
{
    /* An immutable value is read as it is in every mode: checked first, as
     * the commonest case (numbers in arithmetic) and the cheapest. */
    if (is_immutable_type(obj) && (tuples_plain || !holds_values(obj)
                                   || flat_immutable_values(obj, 0)))
        return 1;
    /* A shared defaultdict read by C code inserts the missing keys it looks
     * up ("%(k)s" % counts): Python hands a copy or holds it, inevitable too. */
    if (tx != Py_None && Py_IS_TYPE(obj, (PyTypeObject *)S.defaultdict_type))
        return 0;
    int mode = tx_mode(tx);
    if (mode == MODE_ERROR)
        return -1;
    if (mode == MODE_PLAIN)
        return 1;
    int private = is_private(tx, obj);
    if (private <= 0 || tuples_plain)
        return private;
    /* deep_view(): a private container may hold shared ones, and a private
     * exception's arguments too (Python scans them) */
    if (PyExceptionInstance_Check(obj))
        return 0;
    int container = is_container(obj);
    return container < 0 ? -1 : !container;
}

static PyObject *
value_barrier(int barrier, int tuples_plain, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    if (!enter(barrier, nargs == 2, args, nargs, NULL, &result))
        return result;
    int plain = value_is_plain(args[0], args[1], tuples_plain);
    if (plain < 0)
        return NULL;
    if (!plain)
        return to_python(barrier, args, nargs, NULL);
    if (barrier == B_TRUTH) {
        int truth = PyObject_IsTrue(args[1]);
        return truth < 0 ? NULL : PyBool_FromLong(truth);
    }
    return Py_NewRef(args[1]);
}

static PyObject *
fp_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return value_barrier(B_VIEW, 1, args, nargs);
}

static PyObject *
fp_operand(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return value_barrier(B_OPERAND, 1, args, nargs);
}

static PyObject *
fp_deep_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return value_barrier(B_DEEP_VIEW, 0, args, nargs);
}

static PyObject *
fp_truth(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return value_barrier(B_TRUTH, 1, args, nargs);
}

/* -- deeply_private: a structure the section built, nothing shared in it ------------- */

/* 1 when obj reaches only immutable builtins (through tuples and frozensets)
 * and exact lists, dicts and sets private to tx; 0 when it reaches anything
 * else or the walk is too long or deep (the Python scan decides then); -1
 * with an exception. Private containers are this thread's alone: nothing
 * changes them during the walk. */
static int
walk_deeply_private(PyObject *tx, PyObject *obj, Py_ssize_t *budget, int depth)
{
    if (--*budget < 0 || depth > 100)
        return 0;
    PyTypeObject *type = Py_TYPE(obj);
    if (type == &PyTuple_Type) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); i++) {
            int r = walk_deeply_private(tx, PyTuple_GET_ITEM(obj, i), budget, depth + 1);
            if (r <= 0)
                return r;
        }
        return 1;
    }
    if (type == &PyFrozenSet_Type)
        return flat_immutable_values(obj, 0);
    if (type == &PySlice_Type)
        return 0;
    if (is_immutable_type(obj))
        return 1;
    if (type != &PyList_Type && type != &PyDict_Type && type != &PySet_Type)
        return 0;
    int private = is_private(tx, obj);
    if (private <= 0)
        return private;
    if (type == &PyList_Type) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(obj); i++) {
            PyObject *item = PyList_GET_ITEM(obj, i);
            /* a row of numbers: one step of the budget per item, no call */
            if (Py_IS_TYPE(item, &PyLong_Type) || Py_IS_TYPE(item, &PyUnicode_Type)
                    || Py_IS_TYPE(item, &PyFloat_Type) || Py_IS_TYPE(item, &PyBool_Type)
                    || item == Py_None) {
                if (--*budget < 0)
                    return 0;
                continue;
            }
            Py_INCREF(item);
            int r = walk_deeply_private(tx, item, budget, depth + 1);
            Py_DECREF(item);
            if (r <= 0)
                return r;
        }
        return 1;
    }
    if (type == &PyDict_Type) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(obj, &pos, &key, &value)) {
            Py_INCREF(key);
            Py_INCREF(value);
            int r = walk_deeply_private(tx, key, budget, depth + 1);
            if (r > 0)
                r = walk_deeply_private(tx, value, budget, depth + 1);
            Py_DECREF(key);
            Py_DECREF(value);
            if (r <= 0)
                return r;
        }
        return 1;
    }
    PyObject *iterator = PyObject_GetIter(obj), *item;
    if (iterator == NULL)
        return -1;
    int r = 1;
    while (r > 0 && (item = PyIter_Next(iterator)) != NULL) {
        r = walk_deeply_private(tx, item, budget, depth + 1);
        Py_DECREF(item);
    }
    Py_DECREF(iterator);
    if (r > 0 && PyErr_Occurred())
        r = -1;
    return r;
}

static PyObject *
fp_deeply_private(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyLong_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "deeply_private(tx, obj, budget)");
        return NULL;
    }
    if (!S.configured || Py_TYPE(args[0]) != S.tx_type)
        Py_RETURN_FALSE;            /* not the C engine's transaction: Python decides */
    Py_ssize_t budget = PyLong_AsSsize_t(args[2]);
    if (budget == -1 && PyErr_Occurred())
        return NULL;
    int r = walk_deeply_private(args[0], args[1], &budget, 0);
    if (r < 0)
        return NULL;
    return PyBool_FromLong(r);
}

static PyObject *
fp_touch(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return value_barrier(B_TOUCH, 1, args, nargs);
}

/* binary(tx, op, left, right) and compare(tx, op, left, right): one call for
 * an operator whose two operands both need view() (deep_view() for compare).
 * When both are read as they are, the operator runs here; otherwise the
 * Python barrier views them. The order of the operators is that of
 * barriers.BINARY_OPERATORS and COMPARE_OPERATORS. */
#define N_BINARY 13
#define N_COMPARE 6
static const int compare_ops[N_COMPARE] = {Py_EQ, Py_NE, Py_LT, Py_LE, Py_GT, Py_GE};

static PyObject *
apply_binary(long op, PyObject *a, PyObject *b)
{
    switch (op) {
    case 0: return PyNumber_Add(a, b);
    case 1: return PyNumber_Subtract(a, b);
    case 2: return PyNumber_Multiply(a, b);
    case 3: return PyNumber_TrueDivide(a, b);
    case 4: return PyNumber_FloorDivide(a, b);
    case 5: return PyNumber_Remainder(a, b);
    case 6: return PyNumber_Power(a, b, Py_None);
    case 7: return PyNumber_Lshift(a, b);
    case 8: return PyNumber_Rshift(a, b);
    case 9: return PyNumber_Or(a, b);
    case 10: return PyNumber_Xor(a, b);
    case 11: return PyNumber_And(a, b);
    default: return PyNumber_MatrixMultiply(a, b);
    }
}

/* What binary() and compare() share: the operator's index when both operands
 * are read as they are (the caller applies it); otherwise -1, with *result the
 * Python barrier's answer (NULL with an exception). */
static long
plain_operator(int barrier, long count, int tuples_plain, PyObject *const *args,
               Py_ssize_t nargs, PyObject **result)
{
    long op = -1;
    if (nargs == 4 && PyLong_CheckExact(args[1])) {
        op = PyLong_AsLong(args[1]);
        if (op < 0 || op >= count) {
            PyErr_Clear();
            op = -1;
        }
    }
    if (!enter(barrier, op >= 0, args, nargs, NULL, result))
        return -1;
    int plain = value_is_plain(args[0], args[2], tuples_plain);
    if (plain > 0)
        plain = value_is_plain(args[0], args[3], tuples_plain);
    if (plain < 0)
        return -1;
    if (!plain) {
        *result = to_python(barrier, args, nargs, NULL);
        return -1;
    }
    return op;
}

static PyObject *
fp_binary(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    long op = plain_operator(B_BINARY, N_BINARY, 1, args, nargs, &result);
    return op < 0 ? result : apply_binary(op, args[2], args[3]);
}

static PyObject *
fp_compare(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    long op = plain_operator(B_COMPARE, N_COMPARE, 0, args, nargs, &result);
    return op < 0 ? result : PyObject_RichCompare(args[2], args[3], compare_ops[op]);
}

/* compare_test(tx, op, left, right): truth(tx, compare(tx, op, left, right)),
 * the test of an if or a while, in one call. A bool result (every builtin
 * comparison) is the answer; anything else goes through truth(). */
static PyObject *
fp_compare_test(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result = fp_compare(module, args, nargs);
    if (result == NULL || PyBool_Check(result))
        return result;
    PyObject *truth_args[2] = {args[0], result};
    PyObject *tested = fp_truth(module, truth_args, 2);
    Py_DECREF(result);
    return tested;
}

/* Back edges of while loops on this thread since the last Transaction.tick. */
static THREAD_LOCAL unsigned int ticks = 0;
#define TICKS_PER_CHECK 64

/* tick(tx): the back edge of a while loop. Transaction.tick (one counted read)
 * runs once every TICKS_PER_CHECK back edges: a loop that only touches locals
 * still re-validates, after at most 64 * VALIDATE_EVERY iterations. */
static PyObject *
fp_tick(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    if (!enter(B_TICK, nargs == 1, args, nargs, NULL, &result))
        return result;
    if (++ticks % TICKS_PER_CHECK)
        Py_RETURN_NONE;
    int mode = tx_mode(args[0]);
    if (mode == MODE_ERROR)
        return NULL;
    if (mode == MODE_OPTIMISTIC && count_read(args[0]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
fp_new(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *result;
    if (!enter(B_NEW, nargs == 2, args, nargs, NULL, &result))
        return result;
    if (args[0] != Py_None && mark_private(args[0], args[1]) < 0)
        return NULL;
    return Py_NewRef(args[1]);
}

/* -- calls ----------------------------------------------------------------------------- */

/* The policy of f if policy.lookup has it cached and f is its own key
 * (functions of modules, builtins, classes); NULL without exception otherwise. */
static PyObject *
cached_policy(PyObject *f)
{
    if (PyCFunction_CheckExact(f)) {
        PyObject *self = PyCFunction_GET_SELF(f);
        if (self != NULL && !PyModule_CheckExact(self))
            return NULL;
    }
    else if (!PyType_Check(f)) {
        return NULL;
    }
    PyObject *rule;
    if (PyDict_GetItemRef(S.policy_cache, f, &rule) < 0)
        PyErr_Clear();                 /* an unhashable class: Python handles it */
    return rule;
}

/* 1 when an argument needs calls.call_reading's care: a shared list, dict or
 * set (read consistently), or one of needs_python_read's objects. */
static int
has_shared_container(PyObject *tx, PyObject *const *args, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arg = args[i];
        if (is_immutable_type(arg))
            continue;
        /* a bound method of a container (max(d, key=d.get)) reads it too */
        if (PyCFunction_Check(arg) && PyCFunction_GET_SELF(arg) != NULL
                && !PyModule_Check(PyCFunction_GET_SELF(arg)))
            arg = PyCFunction_GET_SELF(arg);
        else if (PyMethod_Check(arg))
            arg = PyMethod_GET_SELF(arg);
        int special = is_container(arg);
        /* ... or an instance of a Python class, whose attributes the callee
         * may read (calls.call_reading records them: copy.copy, a dataclass) */
        if (special == 0 && !is_immutable_type(arg))
            special = needs_python_read(arg) || (
                PyType_HasFeature(Py_TYPE(arg), Py_TPFLAGS_HEAPTYPE) && !PyType_Check(arg));
        if (special < 0)
            return -1;
        if (special) {
            int private = is_private(tx, arg);
            if (private <= 0)
                return private < 0 ? -1 : 1;
        }
    }
    return 0;
}

/* 1 for a method bound to an object that is not a module (calls.py's _bound_self). */
static int
bound_to_an_object(PyObject *f)
{
    PyObject *owner = NULL;
    if (PyCFunction_Check(f))
        owner = PyCFunction_GET_SELF(f);
    else if (PyMethod_Check(f))
        owner = PyMethod_GET_SELF(f);
    return owner != NULL && owner != Py_None && !PyModule_Check(owner);
}

/* 1 when every position of ``rule.writes`` is an argument private to tx. */
static int
writes_private_args(PyObject *tx, PyObject *rule, PyObject *const *args, Py_ssize_t n)
{
    PyObject *writes = slot(rule, S.m_writes);
    if (writes == NULL)
        return -1;
    int result = PyTuple_CheckExact(writes);
    for (Py_ssize_t i = 0; result == 1 && i < PyTuple_GET_SIZE(writes); i++) {
        Py_ssize_t index = PyLong_AsSsize_t(PyTuple_GET_ITEM(writes, i));
        if (index == -1 && PyErr_Occurred())
            result = -1;
        else if (index < 0 || index >= n)
            result = 0;
        else
            result = is_private(tx, args[index]);
    }
    Py_DECREF(writes);
    return result;
}

/* 1 when the call policy ``rule`` says its callable makes a new object
 * (its ``fresh`` flag), 0 if not, -1 with an exception. */
static int
makes_fresh(PyObject *rule)
{
    PyObject *flag = slot(rule, S.m_fresh);
    int truth = flag == NULL ? -1 : PyObject_IsTrue(flag);
    Py_XDECREF(flag);
    return truth;
}

/* _fresh(tx, rule, result): a new object becomes private through tx.adopt(),
 * which also moves the attribute writes its __init__ logged onto it. A plain
 * list, dict or set (list(x), sorted(x), dict(pairs)) has no attributes to
 * move: it is marked private here, without the method call. */
static PyObject *
fresh(PyObject *tx, PyObject *rule, PyObject *result)
{
    int truth = makes_fresh(rule);
    if (truth > 0) {
        truth = is_immutable_type(result);
        if (truth == 0 && (PyList_CheckExact(result) || PyDict_CheckExact(result)
                           || PySet_CheckExact(result))) {
            truth = mark_private(tx, result) < 0 ? -1 : 1;
        }
        else if (truth == 0) {
            PyObject *r = PyObject_CallMethodOneArg(tx, S.s_adopt, result);
            truth = r == NULL ? -1 : 1;
            Py_XDECREF(r);
        }
    }
    if (truth < 0) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

/* 1 when ``f`` reads the values nested in its arguments (calls.DEEP_READERS,
 * or a str's format, format_map or join method: calls._STR_READERS);
 * -1 with an exception. */
static int
reads_nested(PyObject *f)
{
    if (PyCFunction_Check(f) && PyCFunction_GET_SELF(f) != NULL
            && PyUnicode_CheckExact(PyCFunction_GET_SELF(f))) {
        const char *name = ((PyCFunctionObject *)f)->m_ml->ml_name;
        return strcmp(name, "format") == 0 || strcmp(name, "format_map") == 0
            || strcmp(name, "join") == 0;
    }
    if (S.deep_readers == NULL)
        return 0;
    int found = PySet_Contains(S.deep_readers, f);
    if (found < 0 && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();                  /* an unhashable callable reads nothing nested */
        return 0;
    }
    return found;
}

/* A method of a list or deque (``f`` is bound to a container) that compares
 * its items: calls.COMPARING_METHODS, whose names this repeats. */
static int
compares_items(PyObject *f)
{
    if (PyAnySet_Check(PyCFunction_GET_SELF(f)))
        return 0;                       /* set.remove finds by hash, compares nothing nested */
    const char *name = ((PyCFunctionObject *)f)->m_ml->ml_name;
    /* (and a dict's update unpacks pairs: calls.pairs_as_read) */
    return strcmp(name, "index") == 0 || strcmp(name, "count") == 0
        || strcmp(name, "remove") == 0 || strcmp(name, "sort") == 0
        || (PyDict_Check(PyCFunction_GET_SELF(f)) && strcmp(name, "update") == 0);
}

/* A method of a Python class whose policy is ``special`` (a handler's
 * ``self.write``): ``rule.handler(tx, f, args, kwargs)``, as
 * calls.call_optimistic calls it; FALLBACK for any other method. */
static PyObject *
special_method_call(PyObject *tx, PyObject *f, PyObject *const *args, Py_ssize_t n,
                    PyObject *kwnames)
{
    PyObject *rule;
    if (PyDict_GetItemRef(S.policy_cache, PyMethod_GET_FUNCTION(f), &rule) < 0)
        PyErr_Clear();                  /* an unhashable function: Python's */
    if (rule == NULL)
        return FALLBACK;
    PyObject *result = FALLBACK, *kind = NULL, *handler = NULL, *positional = NULL,
             *keywords = NULL;
    if (Py_TYPE(rule) != S.policy_type || (kind = slot(rule, S.m_kind)) == NULL)
        goto done;
    if (!PyUnicode_Check(kind) || PyUnicode_CompareWithASCIIString(kind, "special") != 0)
        goto done;
    if ((handler = slot(rule, S.m_handler)) == NULL || handler == Py_None)
        goto done;
    result = NULL;
    if ((positional = PyTuple_New(n)) == NULL || (keywords = PyDict_New()) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(positional, i, Py_NewRef(args[i]));
    for (Py_ssize_t i = 0; kwnames != NULL && i < PyTuple_GET_SIZE(kwnames); i++)
        if (PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0)
            goto done;
    result = PyObject_CallFunctionObjArgs(handler, tx, f, positional, keywords, NULL);
done:
    if (result == FALLBACK && PyErr_Occurred())
        result = NULL;
    Py_XDECREF(kind);
    Py_XDECREF(handler);
    Py_XDECREF(positional);
    Py_XDECREF(keywords);
    Py_DECREF(rule);
    return result;
}

/* 1 for a function written in C (calls._C_FUNCTIONS), a partial, or one
 * of operator's callables (methodcaller, attrgetter, itemgetter): what
 * calls.through_the_barrier wraps. */
static int
is_c_function(PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    return PyCFunction_Check(obj) || type == &PyMethodDescr_Type
        || type == &PyWrapperDescr_Type || type == &PyClassMethodDescr_Type
        || strcmp(type->tp_name, "method-wrapper") == 0
        || strcmp(type->tp_name, "functools.partial") == 0
        || strcmp(type->tp_name, "operator.methodcaller") == 0
        || strcmp(type->tp_name, "operator.attrgetter") == 0
        || strcmp(type->tp_name, "operator.itemgetter") == 0;
}

/* 1 when an argument lets application code run in the call: a Python
 * function or method, or an object of a class made by a class statement
 * (calls._may_hand_back_shared). */
static int
runs_application_code(PyObject *const *args, Py_ssize_t total)
{
    for (Py_ssize_t i = 0; i < total; i++) {
        PyTypeObject *type = Py_TYPE(args[i]);
        if (PyFunction_Check(args[i]) || PyMethod_Check(args[i])
                || !Py_IS_TYPE((PyObject *)type, &PyType_Type)
                || PyType_HasFeature(type, Py_TPFLAGS_HEAPTYPE))
            return 1;
    }
    return 0;
}

/* An optimistic call of an uninstrumented callable; FALLBACK when not handled. */
static PyObject *
optimistic_call(PyObject *tx, PyObject *f, PyObject *const *args, Py_ssize_t n,
                PyObject *kwnames)
{
    if (PyMethod_Check(f) && PyFunction_Check(PyMethod_GET_FUNCTION(f)))
        return special_method_call(tx, f, args, n, kwnames);
    /* type(name, bases, ns) or a metaclass called so makes a class, which
     * enters its bases' __subclasses__() in place: Python decides
     * (calls.call_optimistic). type(x) stays here. */
    if (PyType_Check(f) && PyType_IsSubtype((PyTypeObject *)f, &PyType_Type) && n != 1)
        return FALLBACK;
    /* dict(pairs), OrderedDict(pairs): C unpacks each pair itself, Python hands
     * it the section's reading of each (calls.pairs_as_read) */
    if (PyType_Check(f) && PyType_IsSubtype((PyTypeObject *)f, &PyDict_Type) && n > 0)
        return FALLBACK;
    /* isinstance(x, C) and issubclass with a plain class (metaclass type):
     * answered by the type alone. Other classes go to the Python special
     * (specials._special_isinstance): a Protocol reads x's attributes. */
    if (PyCFunction_CheckExact(f) && n == 2 && kwnames == NULL
            && PyModule_CheckExact(PyCFunction_GET_SELF(f))
            && Py_IS_TYPE(args[1], &PyType_Type)) {
        const char *name = ((PyCFunctionObject *)f)->m_ml->ml_name;
        if (strcmp(name, "isinstance") == 0 || strcmp(name, "issubclass") == 0)
            return PyObject_Vectorcall(f, args, n, NULL);
    }
    /* a method of a private list, dict or set: a plain call (the special
     * handlers of dict.get/setdefault/pop do exactly that too) */
    if (PyCFunction_CheckExact(f)) {
        PyObject *owner = PyCFunction_GET_SELF(f);
        if (owner != NULL && !PyModule_CheckExact(owner)) {
            int container = is_container(owner);
            if (container <= 0)
                return container < 0 ? NULL : FALLBACK;
            int private = is_private(tx, owner);
            if (private <= 0)
                return private < 0 ? NULL : FALLBACK;
            /* mine.sort(), mine.index(row): the items it holds may be shared
             * (calls.COMPARING_METHODS: Python records what they hold) */
            if (compares_items(f))
                return FALLBACK;
            /* mine.extend(shared): the argument is read consistently by Python */
            int shared = has_shared_container(
                tx, args, n + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0));
            if (shared != 0)
                return shared < 0 ? NULL : FALLBACK;
            return PyObject_Vectorcall(f, args, n, kwnames);
        }
    }
    /* a class with a finalizer: Python registers the object before __init__
     * (calls._build_registered) */
    if (PyType_Check(f) && PyType_HasFeature((PyTypeObject *)f, Py_TPFLAGS_HEAPTYPE)
            && ((PyTypeObject *)f)->tp_finalize != NULL)
        return FALLBACK;
    PyObject *rule = cached_policy(f);
    if (rule == NULL)
        return PyErr_Occurred() ? NULL : FALLBACK;
    if (rule == S.irrevocable && PyType_Check(f) && S.class_policies != NULL) {
        /* a class unknown to the table: barriers._class_policy's cached answer */
        Py_DECREF(rule);
        if (PyDict_GetItemRef(S.class_policies, f, &rule) < 0)
            PyErr_Clear();
        if (rule == NULL)
            return FALLBACK;
    }
    if (Py_TYPE(rule) != S.policy_type) {
        Py_DECREF(rule);                /* not a policy.CallPolicy: Python's to read */
        return FALLBACK;
    }
    PyObject *result = FALLBACK;
    PyObject *kind = slot(rule, S.m_kind);
    if (kind == NULL) {
        result = NULL;
        goto done;
    }
    int ok;
    if (PyUnicode_Check(kind) && PyUnicode_CompareWithASCIIString(kind, "pure") == 0)
        ok = 1;
    else if (PyUnicode_Check(kind) && PyUnicode_CompareWithASCIIString(kind, "mutates") == 0)
        /* a method changing its own object (random.Random.randint): Python decides */
        ok = bound_to_an_object(f) ? 0 : writes_private_args(tx, rule, args, n);
    else
        ok = 0;
    if (ok == 1) {
        /* a reader of nested values (sum, sorted, '{}'.format...) given
         * anything but atoms: calls.call_reading records what it reaches */
        int deep = reads_nested(f);
        Py_ssize_t total = n + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
        for (Py_ssize_t i = 0; deep > 0 && i < total; i++) {
            /* (a generator too: what it yields reaches the reader past the
             * barriers, calls._items_read) */
            if (!is_immutable_type(args[i]) || holds_values(args[i])) {
                Py_DECREF(kind);
                Py_DECREF(rule);
                return FALLBACK;
            }
        }
        if (deep < 0) {
            result = NULL;
            Py_DECREF(kind);
            goto done;
        }
        /* a C function handed on (map(next, its), sorted(xs, key=next)) is
         * called from C past the barriers: calls.through_the_barrier */
        for (Py_ssize_t i = 0; i < total; i++) {
            if (is_c_function(args[i])) {
                Py_DECREF(kind);
                Py_DECREF(rule);
                return FALLBACK;
            }
        }
        /* a maker of new objects given application code (json.loads's
         * object_hook, copy.copy of an application object): what it hands
         * back may be shared, calls._fresh decides */
        int fresh_result = makes_fresh(rule);
        if (fresh_result < 0) {
            result = NULL;
            Py_DECREF(kind);
            goto done;
        }
        if (fresh_result && runs_application_code(args, total)) {
            Py_DECREF(kind);
            Py_DECREF(rule);
            return FALLBACK;
        }
        /* keyword values follow the positional arguments in the vector */
        ok = has_shared_container(tx, args, total);
        if (ok == 0) {
            result = PyObject_Vectorcall(f, args, n, kwnames);
            if (result != NULL)
                result = fresh(tx, rule, result);
        }
    }
    if (ok < 0)
        result = NULL;
    Py_DECREF(kind);
done:
    Py_DECREF(rule);
    return result;
}

/* The function an entry wrapper (section.entry) wraps: the one cell of its
 * closure. Not ``__wrapped__``: an application decorator written with
 * functools.wraps sets that on its own wrapper, which is entry-wrapped too. */
static PyObject *
entry_target(PyObject *entry)
{
    PyObject *closure = PyFunction_GET_CLOSURE(entry);
    if (closure == NULL || !PyTuple_Check(closure) || PyTuple_GET_SIZE(closure) != 1) {
        PyErr_SetString(PyExc_SystemError, "an entry wrapper without its one closure cell");
        return NULL;
    }
    return PyCell_Get(PyTuple_GET_ITEM(closure, 0));     /* a new reference */
}

/* recursive_callee(tx, f): what ``walk(n - 1)`` in ``walk`` calls from the
 * application's own frame (barriers.recursive_callee): the plain instrumented
 * function itself, past its entry wrapper; Python decides anything else. */
static PyObject *
fp_recursive_callee(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!S.configured)
        return NOT_CONFIGURED();
    /* self.walk in a method walk: the same, bound to self again */
    PyObject *bound_to = NULL;
    if (nargs == 2 && PyMethod_Check(args[1])
            && Py_IS_TYPE(PyMethod_GET_FUNCTION(args[1]), &PyFunction_Type))
        bound_to = PyMethod_GET_SELF(args[1]);
    if (nargs == 2 && (bound_to != NULL || Py_IS_TYPE(args[1], &PyFunction_Type))) {
        PyObject *target = bound_to != NULL ? PyMethod_GET_FUNCTION(args[1]) : args[1];
        int instrumented;
        if (PyFunction_GET_CODE(target) == S.entry_code) {
            /* what an entry wrapper wraps is the application's */
            target = entry_target(target);
            if (target == NULL)
                return NULL;
            instrumented = Py_IS_TYPE(target, &PyFunction_Type);
        }
        else {
            Py_INCREF(target);
            instrumented = PySet_Contains(S.instrumented_codes, PyFunction_GET_CODE(target));
            if (instrumented < 0) {
                Py_DECREF(target);
                return NULL;
            }
        }
        if (instrumented && !(((PyCodeObject *)PyFunction_GET_CODE(target))->co_flags
                              & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))) {
            if (bound_to == NULL)
                return target;
            PyObject *method = PyMethod_New(target, bound_to);
            Py_DECREF(target);
            return method;
        }
        Py_DECREF(target);
    }
    return to_python(B_RECURSIVE_CALLEE, args, nargs, NULL);
}

static PyObject *
fp_call(PyObject *module, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *entered;
    if (!enter(B_CALL, nargs >= 2, args, nargs, kwnames, &entered))
        return entered;
    PyObject *tx = args[0], *f = args[1];
    PyObject *const *call_args = args + 2;
    Py_ssize_t n = nargs - 2;

    if (PyFunction_Check(f) && Py_IS_TYPE(f, &PyFunction_Type)) {
        PyObject *code = PyFunction_GET_CODE(f);
        if (code == S.entry_code) {
            PyObject *wrapped = entry_target(f);
            if (wrapped == NULL)
                return NULL;
            PyObject *result = PyObject_Vectorcall(wrapped, call_args, n, kwnames);
            Py_DECREF(wrapped);
            return result;
        }
        int instrumented = PySet_Contains(S.instrumented_codes, code);
        if (instrumented < 0)
            return NULL;
        if (instrumented) {
            PyObject *result = PyObject_Vectorcall(f, call_args, n, kwnames);
            if (result != NULL && tx != Py_None) {
                int frame = PyObject_IsInstance(result, S.frame_types);
                if (frame > 0)
                    frame = mark_private(tx, result);
                if (frame < 0)
                    Py_CLEAR(result);
            }
            return result;
        }
    }
    else if (PyMethod_Check(f)) {
        PyObject *func = PyMethod_GET_FUNCTION(f);
        if (Py_IS_TYPE(func, &PyFunction_Type) && PyFunction_GET_CODE(func) == S.entry_code) {
            PyObject *wrapped = entry_target(func);
            if (wrapped == NULL)
                return NULL;
            /* wrapped(f.__self__, *args, **kwargs) */
            Py_ssize_t total = n + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
            PyObject **stack = PyMem_Malloc((total + 1) * sizeof(PyObject *));
            if (stack == NULL) {
                Py_DECREF(wrapped);
                return PyErr_NoMemory();
            }
            stack[0] = PyMethod_GET_SELF(f);
            for (Py_ssize_t i = 0; i < total; i++)
                stack[i + 1] = call_args[i];
            PyObject *result = PyObject_Vectorcall(wrapped, stack, n + 1, kwnames);
            PyMem_Free(stack);
            Py_DECREF(wrapped);
            return result;
        }
    }
    if (tx == Py_None && step_pending != NULL && take_step_w() < 0)
        return NULL;
    int mode = tx_mode(tx);
    if (mode == MODE_ERROR)
        return NULL;
    if (mode == MODE_OPTIMISTIC) {
        PyObject *result = optimistic_call(tx, f, call_args, n, kwnames);
        if (result != FALLBACK)
            return result;
    }
    return to_python(B_CALL, args, nargs, kwnames);
}

/* -- configuration ------------------------------------------------------------------- */

static PyMemberDef *
member_of(PyTypeObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL)
        return NULL;
    PyMemberDef *member = NULL;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type != T_OBJECT_EX)
            member = NULL;
    }
    /* The class keeps the descriptor (and its PyMemberDef) alive. */
    Py_DECREF(descr);
    if (member == NULL)
        PyErr_Format(PyExc_TypeError, "%s.%s is not a __slots__ member", type->tp_name, name);
    return member;
}

static int
long_arg(PyObject *kwargs, const char *name, long *out)
{
    PyObject *value = PyDict_GetItemString(kwargs, name);
    if (value == NULL) {
        PyErr_Format(PyExc_TypeError, "configure() needs %s", name);
        return -1;
    }
    *out = PyLong_AsLong(value);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static PyObject *
object_arg(PyObject *kwargs, const char *name)
{
    PyObject *value = PyDict_GetItemString(kwargs, name);
    if (value == NULL)
        PyErr_Format(PyExc_TypeError, "configure() needs %s", name);
    return Py_XNewRef(value);
}

static PyObject *
fp_configure(PyObject *module, PyObject *args, PyObject *kwargs)
{
    if (S.configured) {
        PyErr_SetString(PyExc_RuntimeError, "_fastpath is configured once per process");
        return NULL;
    }
    if (PyTuple_GET_SIZE(args) != 0 || kwargs == NULL) {
        PyErr_SetString(PyExc_TypeError, "configure() takes keyword arguments only");
        return NULL;
    }
    PyObject *tx_type = NULL, *policy_type = NULL, *python = NULL, *kinds = NULL,
             *builtins = NULL;
    long mask, salt;
    tx_type = object_arg(kwargs, "transaction");
    if (tx_type == NULL || !PyType_Check(tx_type)) {
        if (tx_type != NULL)
            PyErr_SetString(PyExc_TypeError, "transaction must be a class");
        goto error;
    }
    S.tx_type = (PyTypeObject *)tx_type;
    if (!(S.m_rv = member_of(S.tx_type, "rv")) || !(S.m_reads = member_of(S.tx_type, "reads"))
            || !(S.m_private = member_of(S.tx_type, "private"))
            || !(S.m_attrs = member_of(S.tx_type, "attrs"))
            || !(S.m_containers = member_of(S.tx_type, "containers"))
            || !(S.m_inevitable = member_of(S.tx_type, "inevitable"))
            || !(S.m_read_count = member_of(S.tx_type, "read_count")))
        goto error;
    policy_type = object_arg(kwargs, "call_policy");
    if (policy_type == NULL || !PyType_Check(policy_type)) {
        if (policy_type != NULL)
            PyErr_SetString(PyExc_TypeError, "call_policy must be a class");
        goto error;
    }
    S.policy_type = (PyTypeObject *)policy_type;
    if (!(S.m_kind = member_of(S.policy_type, "kind"))
            || !(S.m_writes = member_of(S.policy_type, "writes"))
            || !(S.m_fresh = member_of(S.policy_type, "fresh"))
            || !(S.m_handler = member_of(S.policy_type, "handler")))
        goto error;
    if (!(S.validate_every = object_arg(kwargs, "validate_every"))
            || !PyList_CheckExact(S.validate_every) || PyList_GET_SIZE(S.validate_every) != 1) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "configure(): validate_every must be a one-int list");
        goto error;
    }
    if ((dict_versions_usable = dict_versions()) < 0)
        goto error;
    if (!(S.versions = object_arg(kwargs, "versions")) || !PyList_CheckExact(S.versions)
            || long_arg(kwargs, "stripe_mask", &mask) < 0 || long_arg(kwargs, "key_salt", &salt) < 0
            || !(S.immutable_types = object_arg(kwargs, "immutable_types"))
            || !PyFrozenSet_Check(S.immutable_types)
            || !(S.read_cache = object_arg(kwargs, "read_cache")) || !PyDict_Check(S.read_cache)
            || !(kinds = object_arg(kwargs, "kinds"))
            || !PyArg_ParseTuple(kinds, "lllll", &S.kind_plain, &S.kind_immutable, &S.kind_run,
                                 &S.kind_module, &S.kind_nondata)
            || !(S.policy_cache = object_arg(kwargs, "policy_cache"))
            || !PyDict_Check(S.policy_cache)
            || !(S.irrevocable = object_arg(kwargs, "irrevocable"))
            || !(S.instrumented_codes = object_arg(kwargs, "instrumented_codes"))
            || !PySet_Check(S.instrumented_codes)
            || !(S.versioned_modules = object_arg(kwargs, "versioned_modules"))
            || !PySet_Check(S.versioned_modules)
            || !(S.entry_code = object_arg(kwargs, "entry_code"))
            || !(S.frame_types = object_arg(kwargs, "frame_types"))
            || !PyTuple_Check(S.frame_types)
            || !(python = object_arg(kwargs, "python")) || !PyDict_Check(python)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "configure(): an argument has the wrong type");
        goto error;
    }
    if (PySet_GET_SIZE(S.immutable_types) > MAX_IMMUTABLE) {
        PyErr_SetString(PyExc_ValueError, "configure(): too many immutable types");
        goto error;
    }
    {
        PyObject *iterator = PyObject_GetIter(S.immutable_types), *item;
        if (iterator == NULL)
            goto error;
        immutable_count = 0;
        while ((item = PyIter_Next(iterator)) != NULL) {
            int is_type = PyType_Check(item);
            /* the frozenset (kept by S) keeps the type alive */
            immutable_types[immutable_count++] = (PyTypeObject *)item;
            Py_DECREF(item);
            if (!is_type) {
                PyErr_SetString(PyExc_TypeError, "configure(): immutable_types holds types");
                break;
            }
        }
        Py_DECREF(iterator);
        if (PyErr_Occurred()) {
            immutable_count = 0;
            goto error;
        }
    }
    S.deep_readers = Py_XNewRef(PyDict_GetItemString(kwargs, "deep_readers"));
    if (S.deep_readers != NULL && !PyAnySet_Check(S.deep_readers))
        Py_CLEAR(S.deep_readers);
    S.class_policies = Py_XNewRef(PyDict_GetItemString(kwargs, "class_policies"));
    if (S.class_policies != NULL && !PyDict_Check(S.class_policies))
        Py_CLEAR(S.class_policies);
    S.stripe_mask = (uint64_t)mask;
    S.key_salt = (uint64_t)salt;
    for (int i = 0; i < B_COUNT; i++) {
        PyObject *fn = PyDict_GetItemString(python, barrier_names[i]);
        if (fn == NULL || !PyCallable_Check(fn)) {
            PyErr_Format(PyExc_TypeError, "configure(): python[%s] must be the Python barrier",
                         barrier_names[i]);
            goto error;
        }
        S.python[i] = Py_NewRef(fn);
    }
    S.container_types = Py_XNewRef(PyDict_GetItemString(kwargs, "container_types"));
    if (S.container_types == NULL || !PyTuple_Check(S.container_types)) {
        PyErr_SetString(PyExc_TypeError, "configure(): container_types must be a tuple");
        goto error;
    }
    builtins = PyImport_ImportModule("builtins");
    if (S.container_types == NULL || builtins == NULL)
        goto error;
    if (S.defaultdict_type == NULL) {
        PyObject *collections = PyImport_ImportModule("collections");
        if (collections == NULL)
            goto error;
        S.defaultdict_type = PyObject_GetAttrString(collections, "defaultdict");
        Py_DECREF(collections);
        if (S.defaultdict_type == NULL || !PyType_Check(S.defaultdict_type))
            goto error;
    }
    S.builtins_dict = Py_NewRef(PyModule_GetDict(builtins));
    Py_DECREF(builtins);
    Py_DECREF(python);
    Py_DECREF(kinds);
    S.configured = 1;
    Py_RETURN_NONE;
error:
    /* A failed configure leaves the module unconfigured; the references taken
     * so far are kept (a few objects, once per process). */
    Py_XDECREF(python);
    Py_XDECREF(kinds);
    return NULL;
}

/* -- the module ---------------------------------------------------------------------------- */

/* The layout of a dict view (dictobject.c's _PyDictViewObject, internal
 * since 3.13): the object header, then the dict it reads. */
typedef struct {
    PyObject_HEAD
    PyDictObject *dv_dict;
} DictViewLayout;

/* view_mapping(view): the dict a keys/values/items view reads (calls.read_other_shared). */
static PyObject *
fp_view_mapping(PyObject *module, PyObject *view)
{
    if (!is_dict_view(view)) {
        PyErr_SetString(PyExc_TypeError, "view_mapping() needs a dict view");
        return NULL;
    }
    PyObject *mapping = (PyObject *)((DictViewLayout *)view)->dv_dict;
    return Py_NewRef(mapping != NULL ? mapping : Py_None);
}

static PyMethodDef fp_methods[] = {
    {"view_mapping", fp_view_mapping, METH_O, "The dict a dict view reads."},
    {"configure", (PyCFunction)(void (*)(void))fp_configure, METH_VARARGS | METH_KEYWORDS,
     "configure(**engine): hand over the engine's objects; once, from fastpath.install()."},
    {"current", fp_current, METH_NOARGS, "The transaction of this thread (None outside sections)."},
    {"get_attr", (PyCFunction)(void (*)(void))fp_get_attr, METH_FASTCALL,
     "get_attr(tx, obj, name, *default): barriers.get_attr"},
    {"method_to_call", (PyCFunction)(void (*)(void))fp_method_to_call, METH_FASTCALL,
     "method_to_call(tx, obj, name): barriers.method_to_call"},
    {"set_attr", (PyCFunction)(void (*)(void))fp_set_attr, METH_FASTCALL,
     "set_attr(tx, obj, name, value): barriers.set_attr"},
    {"del_attr", (PyCFunction)(void (*)(void))fp_del_attr, METH_FASTCALL,
     "del_attr(tx, obj, name): barriers.del_attr"},
    {"get_item", (PyCFunction)(void (*)(void))fp_get_item, METH_FASTCALL,
     "get_item(tx, obj, key): barriers.get_item"},
    {"set_item", (PyCFunction)(void (*)(void))fp_set_item, METH_FASTCALL,
     "set_item(tx, obj, key, value): barriers.set_item"},
    {"del_item", (PyCFunction)(void (*)(void))fp_del_item, METH_FASTCALL,
     "del_item(tx, obj, key): barriers.del_item"},
    {"get_global", (PyCFunction)(void (*)(void))fp_get_global, METH_FASTCALL,
     "get_global(tx, namespace, name): barriers.get_global"},
    {"call", (PyCFunction)(void (*)(void))fp_call, METH_FASTCALL | METH_KEYWORDS,
     "call(tx, f, /, *args, **kwargs): barriers.call"},
    {"iterate", (PyCFunction)(void (*)(void))fp_iterate, METH_FASTCALL,
     "iterate(tx, obj): barriers.iterate"},
    {"contains", (PyCFunction)(void (*)(void))fp_contains, METH_FASTCALL,
     "contains(tx, item, container): barriers.contains"},
    {"new", (PyCFunction)(void (*)(void))fp_new, METH_FASTCALL, "new(tx, obj): barriers.new"},
    {"view", (PyCFunction)(void (*)(void))fp_view, METH_FASTCALL, "view(tx, obj): barriers.view"},
    {"recursive_callee", (PyCFunction)(void (*)(void))fp_recursive_callee, METH_FASTCALL,
     "recursive_callee(tx, f): barriers.recursive_callee"},
    {"operand", (PyCFunction)(void (*)(void))fp_operand, METH_FASTCALL,
     "operand(tx, obj): barriers.operand"},
    {"deep_view", (PyCFunction)(void (*)(void))fp_deep_view, METH_FASTCALL,
     "deep_view(tx, obj): barriers.deep_view"},
    {"truth", (PyCFunction)(void (*)(void))fp_truth, METH_FASTCALL,
     "truth(tx, obj): barriers.truth"},
    {"deeply_private", (PyCFunction)(void (*)(void))fp_deeply_private, METH_FASTCALL,
     "deeply_private(tx, obj, budget): True if obj reaches only immutable values and lists, "
     "dicts and sets private to tx (within budget items); False when unsure"},
    {"touch", (PyCFunction)(void (*)(void))fp_touch, METH_FASTCALL,
     "touch(tx, obj): barriers.touch"},
    {"tick", (PyCFunction)(void (*)(void))fp_tick, METH_FASTCALL, "tick(tx): barriers.tick"},
    {"compare_test", (PyCFunction)(void (*)(void))fp_compare_test, METH_FASTCALL,
     "compare_test(tx, op, left, right): barriers.compare_test"},
    {"binary", (PyCFunction)(void (*)(void))fp_binary, METH_FASTCALL,
     "binary(tx, op, left, right): barriers.binary"},
    {"compare", (PyCFunction)(void (*)(void))fp_compare, METH_FASTCALL,
     "compare(tx, op, left, right): barriers.compare"},
    {NULL, NULL, 0, NULL}
};

static int
fp_exec(PyObject *module)
{
    if (PyType_Ready(&TxSlotType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "TxSlot", (PyObject *)&TxSlotType) < 0
            || PyModule_AddIntConstant(module, "PRUNE_PRIVATE_EVERY", PRUNE_PRIVATE_EVERY) < 0)
        return -1;
    if (S.s_check == NULL) {
        if (!(S.s_check = PyUnicode_InternFromString("check"))
                || !(S.s_extend = PyUnicode_InternFromString("extend"))
                || !(S.s_globals = PyUnicode_InternFromString("__globals__"))
                || !(S.s_code = PyUnicode_InternFromString("__code__"))
                || !(S.s_add = PyUnicode_InternFromString("add"))
                || !(S.s_adopt = PyUnicode_InternFromString("adopt")))
            return -1;
    }
    return 0;
}

static PyModuleDef_Slot fp_slots[] = {
    {Py_mod_exec, fp_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* One set of module state and one thread-local per process. */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    /* Safe without the GIL: importing this keeps a free-threaded build GIL-free. */
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL}
};

static struct PyModuleDef fp_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tornado_stm.stm._fastpath",
    .m_doc = "The hot cases of the STM barriers in C; see tornado_stm.stm.fastpath.",
    .m_size = 0,
    .m_methods = fp_methods,
    .m_slots = fp_slots,
};

PyMODINIT_FUNC
PyInit__fastpath(void)
{
    return PyModuleDef_Init(&fp_module);
}
