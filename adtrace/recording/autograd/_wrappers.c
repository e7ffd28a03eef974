/* The compiled twin of wrappers.py (adtrace/recording/compiled.py), its three per-node paths:
   ``RecordedVJP``, a node's local VJP recorded when called while a recorder is active; ``NodeInit``, the
   wrapper put at VJPNode.__init__; ``AddOutgrads``, the wrapper put at autograd.core.add_outgrads; ``Visits``,
   the iterator over toposort's nodes that tells the recorder of each visit. Each mirrors the Python named in its comment, line by line.
   Under capture structure and auto they write the common case's events themselves (see structure_recorder below;
   under auto they keep its common values too: kept_value).

   ``RecordedVJP(node_id, vjp, active)`` does what wrappers.py's pure-Python
   ``MethodType(recorded_vjp, (node_id, vjp, active))`` does, in one object of 96 bytes instead of a bound
   method, a tuple and an int (160 bytes per node), and without a Python frame per call. The node's id is
   kept as the int the recorder's tables know the node by (no reference to the node: it owns this object, and
   keeps it alive): the very key of its entries when the node was recorded here, so the recorder finds a node it
   meets again by that int (node_key), its dict lookups by identity, with no int made per lookup; and where the C
   wrote the node's row of the table, that row itself (row_of): its visit, local VJP and children read no dict. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <structmember.h>  /* T_OBJECT_EX, READONLY (member descriptors) */
#include "../_labels.h"  /* label_text, pair_text */

typedef struct {
    PyObject_HEAD
    PyObject *key;     /* id(node), an exact int */
    PyObject *vjp;     /* the node's own vjp */
    PyObject *active;  /* the context variable of the hooks' installation that made the node */
    vectorcallfunc vectorcall;
    /* the node's row as the C wrote it at the node's creation (the node table's labels[key], levels.get(key, 0),
       argnums.get(key, UNARY)), and that table's token (NodeTable.token: held, so no other table has it while this
       row is read); all NULL when the Python wrote the row, or none was written. A row is written once, when its
       node is made, and read only while that node is known to be alive (row_of: the node itself; its vjp called: the
       node just visited), since a later row under the same id is another node's: the paths make no dict lookup per
       node they meet again. */
    PyObject *token, *label, *level, *argnums;
} RecordedVJP;

static PyTypeObject RecordedVJPType;

static PyObject *on_vjp_called;  /* the interned name "on_vjp_called" */
static PyObject *before_add_outgrads;  /* the interned name "before_add_outgrads" (defined with AddOutgrads) */
static PyObject *after_add_outgrads;  /* the interned name "after_add_outgrads" (defined with AddOutgrads) */

/* A call's arguments put in parameter order into given[0..n-1], as Python binds them for a function of these
   parameters (`names`, none with a default): the positional ones first, then each keyword at its name. 0, or -1
   with the TypeError Python raises (a wrapper called by keywords is recorded as one called by position). */
static int
bind_arguments(const char *function, const char *const *names, Py_ssize_t n, PyObject *const *args,
               size_t nargsf, PyObject *kwnames, PyObject **given)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments but %zd were given", function, n, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        given[i] = i < nargs ? args[i] : NULL;
    }
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t i = 0;
        while (i < n && !(PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, names[i]) == 0)) {
            i++;
        }
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%S'", function, key);
            return -1;
        }
        if (given[i] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", function, names[i]);
            return -1;
        }
        given[i] = args[nargs + k];
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (given[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument: '%s'", function, names[i]);
            return -1;
        }
    }
    return 0;
}

/* -------------------- capture structure's per-node events, written here -------------------- */

/* Under capture "structure" a callback's work is a few lookups and two or three slots appended to the log; its
   Python frame cost more than the work. So the wrappers write those events themselves, mirroring the structure
   branch of BackwardQueries.on_toposort, .on_vjp_called and .after_add_outgrads (backward.py) line by line, for
   the common case only: a recorder of the class registered by ``structure(...)`` (recorder.py: not a fan-out, not
   a subclass), its callback not replaced on that class (benchmarks' no-op floor, tests' failing callbacks), live,
   keeping no value (or under capture auto, its values by copy: below), its log a plain list, in a pass, the nodes
   named. Any other case calls the Python callback,
   before anything is written: the Python stays the reference and complete. */

static PyTypeObject *recorder_type;  /* recorder.Recorder, once structure() has registered it */
static PyObject *begin_jvp_node_name, *end_jvp_node_name, *add_in_jvp_node_name;  /* (forward mode's, below) */
static PyObject *toposort_function;  /* BackwardQueries.on_toposort (the function Visits is given, bound) */
static PyObject *heads, *no_previous, *unary, *zero, *rev, *fwd;
static PyObject *live_name, *keeps_name, *query_name, *top_name, *labels_name, *values_name, *nodes_name,
    *argnums_name, *level_name, *number_name, *label_name, *parents_name, *position_name, *fail_name,
    *on_toposort_name;

/* the heads written under a tag: by level and query number where both are small ints (the query numbers of every
   recording start at 1: a later recording finds its heads here, with no tuple made and looked up in HEADS per
   pass), else the last few (as packers._head's cells, with a few ways: grad(grad(f)) alternates between levels
   and passes, and a single cell missed nine times in ten), by identity; looked up in HEADS only when neither
   holds this level and query number */
#define HEAD_WAYS 4
#define HEAD_LEVELS 8
#define HEAD_NUMBERS (1 << 20)  /* (a query number above: the ways') */

typedef struct {
    long tag;
    int forward;  /* 1: an event of mode "fwd" (forward mode's), else "rev" */
    int next;  /* the way replaced on the next miss */
    struct {
        PyObject *level, *number, *head;
    } way[HEAD_WAYS];
    unsigned long generation;  /* heads_generation when by_number was filled */
    Py_ssize_t size[HEAD_LEVELS];
    PyObject **by_number[HEAD_LEVELS];  /* [level][number]: the head (strong references, HEADS holds them too) */
} HeadCell;

static PyObject *getitem_name, *setitem_name, *missing_name;  /* (interned) */
static PyTypeObject *heads_type;  /* eventlog._Heads, whose __missing__ head_of does itself (while the class is as
                                     registered: its version tag, heads_version; else HEADS[key] as Python does) */
static unsigned int heads_version;
static unsigned long heads_generation;  /* counts the HEADS structure() was given: a cell filled from another is
                                           emptied */

static inline unsigned int version_of(PyTypeObject *tp);  /* (below, with the fields) */

/* the cell emptied (its heads are another HEADS'), its ways too */
static void
head_reset(HeadCell *cell)
{
    for (int l = 0; l < HEAD_LEVELS; l++) {
        for (Py_ssize_t i = 0; i < cell->size[l]; i++) {
            Py_XDECREF(cell->by_number[l][i]);
        }
        PyMem_Free(cell->by_number[l]);
        cell->by_number[l] = NULL;
        cell->size[l] = 0;
    }
    for (int i = 0; i < HEAD_WAYS; i++) {
        Py_CLEAR(cell->way[i].head);
        Py_CLEAR(cell->way[i].level);
        Py_CLEAR(cell->way[i].number);
    }
    cell->generation = heads_generation;
}

/* head stored at cell->by_number[level][number] (-1 without memory: nothing stored, no error) */
static int
head_keep(HeadCell *cell, long level, long number, PyObject *head)
{
    if (number >= cell->size[level]) {
        Py_ssize_t size = cell->size[level] ? cell->size[level] : 64;
        while (size <= number) {
            size *= 2;
        }
        PyObject **grown = PyMem_Realloc(cell->by_number[level], size * sizeof(PyObject *));
        if (grown == NULL) {
            return -1;
        }
        memset(grown + cell->size[level], 0, (size - cell->size[level]) * sizeof(PyObject *));
        cell->by_number[level] = grown;
        cell->size[level] = size;
    }
    Py_XSETREF(cell->by_number[level][number], Py_NewRef(head));
    return 0;
}

static HeadCell toposort_cell = {1004}, vjp_one_cell = {1005}, vjp_kept_one_cell = {2005}, vjp_cell = {5}, add_first_cell = {1006},
    add_cell = {6};

/* HEADS[(tag, mode, level, number)] (a new reference), its __missing__ (self[key] = key) done here for a dict of the
   type registered: no Python call per new head */
static PyObject *
head_looked_up(HeadCell *cell, PyObject *level, PyObject *number)
{
    PyObject *tag = PyLong_FromLong(cell->tag);
    if (tag == NULL) {
        return NULL;
    }
    PyObject *key = PyTuple_Pack(4, tag, cell->forward ? fwd : rev, level, number);
    Py_DECREF(tag);
    if (key == NULL) {
        return NULL;
    }
    PyObject *head;
    if (Py_IS_TYPE(heads, heads_type) && heads_version != 0 && version_of(heads_type) == heads_version) {
        head = PyDict_GetItemWithError(heads, key);
        if (head == NULL && !PyErr_Occurred()) {
            head = PyDict_SetItem(heads, key, key) < 0 ? NULL : key;
        }
        Py_XINCREF(head);
    } else {
        head = PyObject_GetItem(heads, key);
    }
    Py_DECREF(key);
    return head;
}

/* the head (borrowed: HEADS and the cell hold it) of an event under cell's tag, in pass `query` (a Query): a way's
   (by identity: the pass's own level and number objects), else by level and number, else HEADS' (kept by level
   and number too); either of the last two then put in a way */
static PyObject *
head_of(HeadCell *cell, PyObject *level, PyObject *number)
{
    if (cell->generation != heads_generation) {
        head_reset(cell);
    }
    for (int i = 0; i < HEAD_WAYS; i++) {
        if (cell->way[i].head != NULL && cell->way[i].level == level && cell->way[i].number == number) {
            return cell->way[i].head;
        }
    }
    long at_level = -1, at_number = -1;
    if (PyLong_CheckExact(level) && PyLong_CheckExact(number)) {
        at_level = PyLong_AsLong(level);
        at_number = at_level < 0 || at_level >= HEAD_LEVELS ? -1 : PyLong_AsLong(number);
        if (at_number < 0 || at_number >= HEAD_NUMBERS) {  /* (an overflow's error too) */
            PyErr_Clear();
            at_number = -1;
        }
    }
    PyObject *head = at_number < 0 || at_number >= cell->size[at_level] ? NULL
        : Py_XNewRef(cell->by_number[at_level][at_number]);
    if (head == NULL) {
        head = head_looked_up(cell, level, number);
        if (head == NULL) {
            return NULL;
        }
        if (at_number >= 0) {
            (void)head_keep(cell, at_level, at_number, head);  /* (without memory: the ways' only) */
        }
    }
    int i = cell->next;
    cell->next = (i + 1) % HEAD_WAYS;
    Py_XSETREF(cell->way[i].head, head);
    Py_XSETREF(cell->way[i].level, Py_NewRef(level));
    Py_XSETREF(cell->way[i].number, Py_NewRef(number));
    return head;
}

/* An attribute read or written by the fast paths without PyObject_GetAttr's generic lookup (its type's MRO
   walk and method cache, then the instance's dict or a member descriptor: ~300 instructions): resolved once
   per type (and again when the type changes: its version tag), then a __slots__ member read at its offset, or a
   key of the instance's __dict__ when no class in the MRO has the name. Anything else (a property, a custom
   __getattr__, a type whose version tag is not valid) goes through PyObject_GetAttr, as Python would. */
typedef struct {
    PyObject *name;        /* interned */
    PyTypeObject *type;    /* the type resolved (a strong reference) */
    unsigned int version;  /* its tp_version_tag then (0: not cacheable) */
    Py_ssize_t offset;     /* > 0: a __slots__ member; 0: the instance's __dict__; -1: PyObject_GetAttr */
} Field;

/* tp's version tag when valid, else 0 (Python 3.13 no longer sets Py_TPFLAGS_VALID_VERSION_TAG: a tag is valid
   there when not 0; read through the flag, no field stayed resolved and every read went through PyObject_GetAttr) */
static inline unsigned int
version_of(PyTypeObject *tp)
{
#if PY_VERSION_HEX >= 0x030D0000
    return tp->tp_version_tag;
#else
    return PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) ? tp->tp_version_tag : 0;
#endif
}

static void
field_resolve(Field *f, PyTypeObject *tp)
{
    PyObject *found = _PyType_Lookup(tp, f->name);  /* (borrowed; assigns a version tag if it can) */
    Py_ssize_t offset = -1;
    if (tp->tp_getattro == PyObject_GenericGetAttr && tp->tp_setattro == PyObject_GenericSetAttr) {
        if (found == NULL) {
            offset = tp->tp_dictoffset != 0 ? 0 : -1;
        } else if (Py_IS_TYPE(found, &PyMemberDescr_Type)) {
            PyMemberDef *member = ((PyMemberDescrObject *)found)->d_member;
            offset = member->type == T_OBJECT_EX && !(member->flags & READONLY) ? member->offset : -1;
        }
    }
    Py_XSETREF(f->type, (PyTypeObject *)Py_NewRef(tp));
    f->version = version_of(tp);
    f->offset = offset;
}

static inline Py_ssize_t
field_offset(Field *f, PyObject *obj)
{
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp != f->type || f->version == 0 || version_of(tp) != f->version) {
        field_resolve(f, tp);
    }
    return f->version == 0 ? -1 : f->offset;
}

/* getattr(obj, f.name): a new reference, or NULL with Python's error */
static inline PyObject *
field_get(Field *f, PyObject *obj)
{
    Py_ssize_t offset = field_offset(f, obj);
    if (offset > 0) {
        PyObject *value = *(PyObject **)((char *)obj + offset);
        if (value != NULL) {
            return Py_NewRef(value);
        }
    } else if (offset == 0) {
        PyObject *dict = PyObject_GenericGetDict(obj, NULL);
        PyObject *value = dict == NULL ? NULL : PyDict_GetItemWithError(dict, f->name);
        Py_XINCREF(value);
        Py_XDECREF(dict);
        if (value != NULL || PyErr_Occurred()) {
            return value;
        }
    }
    return PyObject_GetAttr(obj, f->name);  /* (the error Python raises, or the generic case) */
}

/* setattr(obj, f.name, value): 0, or -1 with Python's error */
static inline int
field_set(Field *f, PyObject *obj, PyObject *value)
{
    Py_ssize_t offset = field_offset(f, obj);
    if (offset > 0) {
        PyObject **slot = (PyObject **)((char *)obj + offset);
        PyObject *old = *slot;
        *slot = Py_NewRef(value);
        Py_XDECREF(old);
        return 0;
    }
    return PyObject_SetAttr(obj, f->name, value);
}

/* the fields read: the recorder's (r_), its query's (q_), its node table's (t_), a node's (n_); offset -1 until
   resolved (and while the name is unset) */
static Field r_keep_sites, r_keeps, r_keeps_values, r_labels, r_live, r_nodes, r_query, r_top, r_values;
static Field q_argnums, q_label, q_level, q_number, q_parents, q_position;
static Field t_argnums, t_distinct, t_labels, t_levels, t_made, t_names, t_token;
static Field n_parents, n_vjp;

/* id(node) (a new reference): the int its RecordedVJP keeps (the key of its entries where the node was recorded
   here: found by identity), else a new one */
static PyObject *
node_key(PyObject *node)
{
    Py_ssize_t offset = field_offset(&n_vjp, node);
    PyObject *vjp = offset > 0 ? *(PyObject **)((char *)node + offset) : NULL;
    if (vjp != NULL && Py_IS_TYPE(vjp, &RecordedVJPType)) {
        PyObject *key = ((RecordedVJP *)vjp)->key;  /* (an int of 0 to a pointer's range: recorded_vjp_make) */
        if (PyLong_AsVoidPtr(key) == (void *)node) {  /* (not another node's vjp put here) */
            return Py_NewRef(key);
        }
    }
    return PyLong_FromVoidPtr(node);
}

/* the RecordedVJP of `node` holding its row in the node table whose token is `token` (borrowed), else NULL */
static inline RecordedVJP *
row_of(PyObject *node, PyObject *token)
{
    if (token == NULL) {
        return NULL;
    }
    Py_ssize_t offset = field_offset(&n_vjp, node);
    PyObject *vjp = offset > 0 ? *(PyObject **)((char *)node + offset) : NULL;
    if (vjp == NULL || !Py_IS_TYPE(vjp, &RecordedVJPType) || ((RecordedVJP *)vjp)->token != token) {
        return NULL;
    }
    RecordedVJP *row = (RecordedVJP *)vjp;
    return PyLong_AsVoidPtr(row->key) == (void *)node ? row : NULL;  /* (not another node's vjp put here) */
}

/* recorder.nodes.token (a new reference), or NULL (no error) */
static PyObject *
table_token(PyObject *recorder)
{
    PyObject *nodes = field_get(&r_nodes, recorder);
    PyObject *token = nodes == NULL ? NULL : field_get(&t_token, nodes);
    Py_XDECREF(nodes);
    if (token == NULL) {
        PyErr_Clear();
    }
    return token;
}
static Field r_by_reference, r_inline_size;
static int auto_ready;  /* auto(...) has registered what capture auto's paths read (below) */

/* The callbacks the C writes the common case of, by index; each one's function as the class had it when structure()
   registered it (new references) */
#define CALLBACKS 8
static PyObject *registered[CALLBACKS];

static int
callback_index(PyObject *callback)
{
    return callback == on_toposort_name ? 0 : callback == on_vjp_called ? 1 : callback == after_add_outgrads ? 2
        : callback == before_add_outgrads ? 3 : callback == begin_jvp_node_name ? 5
        : callback == end_jvp_node_name ? 6 : callback == add_in_jvp_node_name ? 7 : 4;  /* 4: on_vjp_node */
}

/* 1 when `recorder` takes the written-out path for `callback` (the recorder's state is checked after), else 0 */
static int
structure_recorder(PyObject *recorder, PyObject *callback)
{
    if (recorder_type == NULL || Py_TYPE(recorder) != recorder_type) {
        return 0;
    }
    /* the last answer, while the class is unchanged (its version tag: assigning to it or to a base clears it) */
    static PyObject *asked[CALLBACKS];
    static unsigned int versions[CALLBACKS];
    static int answers[CALLBACKS];
    int at = callback_index(callback);
    unsigned int version = version_of(recorder_type);
    if (version != 0 && versions[at] == version && asked[at] == callback) {
        return answers[at];
    }
    /* what an attribute read finds along the class's MRO: the function registered, not one replaced on the class
       or on the mixin defining it (BackwardQueries, ForwardMode, Nodes) */
    PyObject *found = _PyType_Lookup(recorder_type, callback);  /* (borrowed, no error set) */
    int answer = found != NULL && found == registered[at];
    asked[at] = callback, versions[at] = version, answers[at] = answer;
    return answer;
}

/* 1 when `recorder` is live and keeps no value (*limit: -1, capture structure) or keeps them by copy (*limit:
   capture auto's inline size), and (`no_sites`) keeps no call site; else 0, no error: the Python callback's */
static int
fast_capture(PyObject *recorder, int no_sites, Py_ssize_t *limit)
{
    *limit = -1;
    PyObject *live = field_get(&r_live, recorder);
    PyObject *keeps = live == Py_True ? field_get(&r_keeps, recorder) : NULL;
    int fast = keeps == Py_False || (keeps == Py_True && auto_ready);
    if (fast && no_sites) {
        PyObject *sites = field_get(&r_keep_sites, recorder);
        fast = sites != NULL && PyObject_IsTrue(sites) == 0;
        Py_XDECREF(sites);
    }
    if (fast && keeps == Py_True) {  /* capture auto: its inline size, not by reference */
        PyObject *by_reference = field_get(&r_by_reference, recorder);
        PyObject *size = by_reference == Py_False ? field_get(&r_inline_size, recorder) : NULL;
        *limit = size != NULL && PyLong_CheckExact(size) ? PyLong_AsSsize_t(size) : -1;
        fast = *limit >= 0;
        Py_XDECREF(by_reference);
        Py_XDECREF(size);
    }
    Py_XDECREF(live);
    Py_XDECREF(keeps);
    if (!fast) {
        PyErr_Clear();
    }
    return fast;
}

static int full_capture(PyObject *recorder, int no_sites);
#define FULL PY_SSIZE_T_MAX  /* *limit under capture full, for the paths that write its common case too */

/* The recorder's state the paths read (new references in *query, *labels, *values), or 0 when the Python
   callback must run: not live, no pass open, its log not a plain list, keeping values by reference (capture
   full) unless `full_ok`. *limit: -1 under capture structure (keeping no value), FULL under capture full, else
   capture auto's inline size. */
static int
structure_state(PyObject *recorder, PyObject **query, PyObject **labels, PyObject **values, Py_ssize_t *limit,
                int full_ok)
{
    *query = *labels = *values = NULL;
    int fast = fast_capture(recorder, 0, limit);
    if (!fast && full_ok && full_capture(recorder, 0)) {
        fast = 1, *limit = FULL;
    }
    if (fast) {
        *query = field_get(&r_query, recorder);
        *labels = *query != NULL && *query != Py_None ? field_get(&r_labels, recorder) : NULL;
        *values = *labels != NULL && PyDict_CheckExact(*labels) ? field_get(&r_values, recorder) : NULL;
        fast = *values != NULL && PyList_CheckExact(*values);
    }
    if (!fast) {
        PyErr_Clear();
        Py_CLEAR(*query);
        Py_CLEAR(*labels);
        Py_CLEAR(*values);
    }
    return fast;
}

/* -------------------- capture auto's kept values, made here -------------------- */

/* Under capture auto the same callbacks also keep values (capture.Keeper): the wrappers keep the common ones
   themselves, as Keeper.__call__ does (a scalar as it is, an outer trace's boxed scalar or array as its stored
   Boxed, a float64 array by values._twin's summary above the inline size, a copy at most). A local VJP's and an
   accumulation's other values (containers, sparse cotangents, subclasses, another dtype's large array, a box whose
   node is not named) go to the recorder's own keep, called from here as its callback calls it (kept_any); a node's
   value and forward mode's go back to the Python callback, before anything is written. */

static PyObject *scalars, *no_reference, *box_types, *ndarray_type, *sparse_type, *boxed_tag, *summary_tag,
    *container_summary_tag,
    *values_module, *copy_name, *size_name, *twin_name, *float64_summary_name, *value_name, *node_name,
    *entries_name, *popped_name, *ingrads_name, *kept_ingrads_name, *by_reference_name, *inline_size_name, *keep_name;
static Field q_entries, q_popped, q_ingrads, q_kept_ingrads, b_value, b_node, r_keep;

static inline int
is_scalar(PyObject *value)  /* type(value) in SCALARS */
{
    PyTypeObject *t = Py_TYPE(value);
    if (t == &PyFloat_Type || t == &PyLong_Type || value == Py_None) {
        return 1;
    }
    int found = PySet_Contains(scalars, (PyObject *)t);
    if (found < 0) {
        PyErr_Clear();
        return 0;
    }
    return found;
}

static inline int
is_box(PyObject *value)  /* type(value) in box_types */
{
    int found = PySet_Contains(box_types, (PyObject *)Py_TYPE(value));
    if (found < 0) {
        PyErr_Clear();
        return 0;
    }
    return found;
}

/* Keeper.box_level(box) (node_table.box_levels) for a box whose node is named: levels.get(key, 0) if key in
   labels (a new reference); NULL (no error) for the Python's other case, state.levels */
static PyObject *
box_level(PyObject *box, PyObject *labels, PyObject *levels)
{
    PyObject *node = field_get(&b_node, box);
    if (node == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *key = PyLong_FromVoidPtr(node);
    Py_DECREF(node);
    int named = key == NULL ? -1 : PyDict_Contains(labels, key);
    PyObject *level = named == 1 ? PyDict_GetItemWithError(levels, key) : NULL;  /* (levels.get: no __missing__) */
    if (named == 1 && level == NULL && !PyErr_Occurred()) {
        level = zero;
    }
    Py_XDECREF(key);
    if (level == NULL) {
        PyErr_Clear();
        return NULL;
    }
    return Py_NewRef(level);
}

/* (BOXED, inner, level): inner and level stolen */
static PyObject *
boxed(PyObject *inner, PyObject *level)
{
    PyObject *kept = inner == NULL || level == NULL ? NULL : PyTuple_Pack(3, boxed_tag, inner, level);
    Py_XDECREF(inner);
    Py_XDECREF(level);
    return kept;
}

/* Keeper's array under capture auto: value.copy() up to `limit` elements, else values._twin.float64_summary(value,
   ARRAY_SUMMARY); NULL (no error) where the Python decides (no twin, or it hands the array back) */
static PyObject *
array_kept(PyObject *value, Py_ssize_t limit)
{
    PyObject *size = PyObject_GetAttr(value, size_name);
    Py_ssize_t n = size != NULL && PyLong_CheckExact(size) ? PyLong_AsSsize_t(size) : -1;
    Py_XDECREF(size);
    PyObject *kept = NULL;
    if (n < 0) {
    } else if (n <= limit) {
        kept = PyObject_CallMethodNoArgs(value, copy_name);
    } else {
        PyObject *twin = PyObject_GetAttr(values_module, twin_name);  /* (read at each call: tests switch it) */
        if (twin != NULL && twin != Py_None) {
            PyObject *call[3] = {twin, value, summary_tag};
            kept = PyObject_VectorcallMethod(float64_summary_name, call, 3, NULL);
            if (kept == Py_None) {
                Py_CLEAR(kept);
            }
        }
        Py_XDECREF(twin);
    }
    if (kept == NULL) {
        PyErr_Clear();
    }
    return kept;
}

/* self.keep(value) under capture auto for the common values (a new reference), or NULL (no error): the Python's */
static PyObject *
kept_value(PyObject *value, Py_ssize_t limit, PyObject *labels, PyObject *levels)
{
    if (Py_TYPE(value) == (PyTypeObject *)ndarray_type) {
        return array_kept(value, limit);
    }
    if (is_box(value)) {
        PyObject *inner = field_get(&b_value, value);
        if (inner == NULL) {
            PyErr_Clear();
            return NULL;
        }
        if (Py_TYPE(inner) == (PyTypeObject *)ndarray_type) {
            Py_SETREF(inner, array_kept(inner, limit));
        } else if (!is_scalar(inner)) {
            Py_CLEAR(inner);
        }
        if (inner == NULL) {
            return NULL;
        }
        return boxed(inner, box_level(value, labels, levels));
    }
    if (is_scalar(value)) {
        return Py_NewRef(value);
    }
    return NULL;
}

/* recorder.keep(value) (a new reference), the call its Python callback makes; NULL with keep's error */
static PyObject *
keep_called(PyObject *recorder, PyObject *value)
{
    PyObject *keep = field_get(&r_keep, recorder);
    if (keep == NULL) {
        return NULL;
    }
    PyObject *kept = PyObject_CallOneArg(keep, value);
    Py_DECREF(keep);
    return kept;
}

/* self.keep(value) under capture auto (a new reference): kept_value's values kept here, any other (a container, a
   sparse cotangent, a subclass, another dtype's large array) by the recorder's own keep (its callback's frame and
   loop saved). NULL with an error where keep raised: the caller's path is abandoned, nothing written yet, and the
   Python callback raises it again (an Exception: recorder.fail) or it propagates (interrupted: not_written) */
static PyObject *
kept_any(PyObject *recorder, PyObject *value, Py_ssize_t limit, PyObject *labels, PyObject *levels)
{
    PyObject *kept = kept_value(value, limit, labels, levels);
    if (kept != NULL || PyErr_Occurred()) {
        return kept;
    }
    return keep_called(recorder, value);
}

/* an outer trace's boxed scalar (BOXED, inner, its level) (inner stolen): by box_level where the box's node is
   named, else by the recorder's keep, whose box_level reads state.levels as the callbacks' branch does */
static PyObject *
boxed_scalar(PyObject *recorder, PyObject *box, PyObject *inner, PyObject *labels, PyObject *levels)
{
    PyObject *level = box_level(box, labels, levels);
    if (level != NULL) {
        return boxed(inner, level);
    }
    Py_DECREF(inner);
    return keep_called(recorder, box);
}

/* at a path's end when nothing was written: 0 and the error cleared (the Python callback runs, and meets it again),
   or -1 with an error that is no Exception (KeyboardInterrupt in a keep: it propagates, as out of the callback) */
static int
not_written(void)
{
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) {
        return -1;
    }
    PyErr_Clear();
    return 0;
}

/* the node table's levels (a new reference), or NULL (no error) */
static PyObject *
levels_of(PyObject *recorder)
{
    PyObject *nodes = field_get(&r_nodes, recorder);
    PyObject *levels = nodes == NULL ? NULL : field_get(&t_levels, nodes);
    Py_XDECREF(nodes);
    if (levels != NULL && !PyDict_Check(levels)) {
        Py_CLEAR(levels);
    }
    if (levels == NULL) {
        PyErr_Clear();
    }
    return levels;
}

/* the except clause of a callback that guards itself: recorder.fail(exc), the error cleared (0), or -1 when
   the error is no Exception (KeyboardInterrupt) or fail itself fails */
static int
structure_failed(PyObject *recorder)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception)) {
        return -1;
    }
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != NULL) {
        PyException_SetTraceback(value, traceback);
    }
    PyObject *done = PyObject_CallMethodOneArg(recorder, fail_name, value);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    if (done == NULL) {
        return -1;
    }
    Py_DECREF(done);
    return 0;
}

/* values.extend(items[:n]) for the exact list `values`: into its spare room at once where it has enough (as
   PyList_Append does for one item, without a call per slot), else one append each (which grows it) */
static int
append_all(PyObject *values, PyObject *const *items, Py_ssize_t n)
{
    PyListObject *list = (PyListObject *)values;
    Py_ssize_t size = Py_SIZE(list);
    if (list->allocated - size >= n) {
        for (Py_ssize_t i = 0; i < n; i++) {
            list->ob_item[size + i] = Py_NewRef(items[i]);
        }
        Py_SET_SIZE(list, size + n);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyList_Append(values, items[i]) < 0) {
            return -1;
        }
    }
    return 0;
}

/* -------------------- capture full's values, kept here -------------------- */

/* Under capture full values are kept by reference. A local VJP's (on_vjp_called) are kept here as its Python keeps
   them: a scalar as it is, an exact ndarray of no base that is not the user's (Keeper.protected) by reference, any
   other by the recorder's keep; each noted as held by the pass (copy_on_write.hold into query.held: an array or a
   Version here, any other kept value by hold itself). A node's value (Nodes.keep_node_value) is kept here when it is
   the common one: a scalar as it is, or an exact ndarray that is no view, none of the call's arguments nor an element of one
   (capture.is_part_of), not the user's (Keeper.protected), made by a primitive that is no accumulator
   (nodes.ACCUMULATORS: their values are shared through Versions); such an array is noted as copy-on-write's own
   (CopyOnWrite.own: its views are kept by reference) and as held by the trace open at its level (hold into
   Nodes.held_in_trace). Any other value goes to the Python callback, before anything is written. */

static PyObject *accumulators, *version_type, *hold_function, *base_name, *keeper_name, *protected_name,
    *copy_on_write_name, *owned_name, *trace_holders_name, *held_name, *version_name, *share_name;
static Field r_keeper, k_protected, r_copy_on_write, c_owned, r_trace_holders, q_held;
static int full_ready;  /* full(...) has registered what capture full's node path reads */

/* 1 when `recorder` is live, keeps values by reference (capture full) and (`no_sites`) keeps no call site; else 0,
   no error */
static int
full_capture(PyObject *recorder, int no_sites)
{
    if (!full_ready || !auto_ready) {
        return 0;
    }
    PyObject *live = field_get(&r_live, recorder);
    PyObject *keeps = live == Py_True ? field_get(&r_keeps, recorder) : NULL;
    PyObject *by_reference = keeps == Py_True ? field_get(&r_by_reference, recorder) : NULL;
    PyObject *sites = by_reference == Py_True && no_sites ? field_get(&r_keep_sites, recorder) : NULL;
    int full = by_reference == Py_True && (!no_sites || (sites != NULL && PyObject_IsTrue(sites) == 0));
    Py_XDECREF(live);
    Py_XDECREF(keeps);
    Py_XDECREF(by_reference);
    Py_XDECREF(sites);
    if (!full) {
        PyErr_Clear();
    }
    return full;
}

/* 1 when `value` is one of `args` or an element of a tuple, list or dict among them (capture.is_part_of), else 0 */
static int
is_part_of(PyObject *value, PyObject *args)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
        PyObject *arg = PyTuple_GET_ITEM(args, i);
        if (arg == value) {
            return 1;
        }
        if (PyTuple_CheckExact(arg) || PyList_CheckExact(arg)) {
            PyObject *const *items = PySequence_Fast_ITEMS(arg);
            for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(arg); j++) {
                if (items[j] == value) {
                    return 1;
                }
            }
        } else if (PyDict_CheckExact(arg)) {
            Py_ssize_t at = 0;
            PyObject *k, *item;
            while (PyDict_Next(arg, &at, &k, &item)) {
                if (item == value) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* 1 when `value` (an exact ndarray) is not the user's: id(value) (`key`) not in the recorder's keeper.protected;
   0, no error, when it is or that cannot be read */
static int
not_protected(PyObject *recorder, PyObject *key)
{
    PyObject *keeper = field_get(&r_keeper, recorder);
    PyObject *protected = keeper == NULL ? NULL : field_get(&k_protected, keeper);
    int mine = protected != NULL && PyDict_CheckExact(protected) && PyDict_Contains(protected, key) == 0;
    Py_XDECREF(keeper);
    Py_XDECREF(protected);
    if (!mine) {
        PyErr_Clear();
    }
    return mine;
}

/* 1 when the exact ndarray `value` is no view (value.base is None), else 0, no error */
static int
no_base(PyObject *value)
{
    PyObject *base = PyObject_GetAttr(value, base_name);
    int none = base == Py_None;
    Py_XDECREF(base);
    if (base == NULL) {
        PyErr_Clear();
    }
    return none;
}

/* self.keep(value) under capture full (a new reference): a scalar, or an exact ndarray of no base that is not the
   user's, kept as it is; any other by the recorder's keep (NULL with its error) */
static PyObject *
full_any(PyObject *recorder, PyObject *value)
{
    if (is_scalar(value)) {
        return Py_NewRef(value);
    }
    if (Py_TYPE(value) == (PyTypeObject *)ndarray_type && no_base(value)) {
        PyObject *key = PyLong_FromVoidPtr(value);
        int mine = key != NULL && not_protected(recorder, key);
        Py_XDECREF(key);
        if (mine) {
            return Py_NewRef(value);
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    return keep_called(recorder, value);
}

/* if type(kept) not in NO_REFERENCE: hold(held, value, kept, position), hold written out for an array or a Version
   (id(value), position appended): 0, or -1 with an error */
static int
held_noted(PyObject *held, PyObject *value, PyObject *kept, PyObject *position)
{
    PyTypeObject *t = Py_TYPE(kept);
    if (t == (PyTypeObject *)ndarray_type || t == (PyTypeObject *)version_type) {
        PyObject *key = PyLong_FromVoidPtr(value);
        int failed = key == NULL || PyList_Append(held, key) < 0 || PyList_Append(held, position) < 0;
        Py_XDECREF(key);
        return failed ? -1 : 0;
    }
    int plain = kept == Py_None || PySet_Contains(no_reference, (PyObject *)t);
    if (plain != 0) {
        return plain < 0 ? -1 : 0;
    }
    PyObject *call[4] = {held, value, kept, position};
    PyObject *done = PyObject_Vectorcall(hold_function, call, 4, NULL);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}

/* The kept value of a node's value under capture full when the C keeps it (a new reference to `value` itself: *owned
   set to 1 for an array, which the caller notes as own and held once the event is written), else NULL, no error */
static PyObject *
full_kept(PyObject *recorder, PyObject *value, PyObject *fun, PyObject *args, PyObject *value_key, int *owned)
{
    *owned = 0;
    if (is_scalar(value)) {
        return Py_NewRef(value);
    }
    if (Py_TYPE(value) != (PyTypeObject *)ndarray_type || !PyTuple_CheckExact(args)) {
        return NULL;
    }
    int accumulator = PySet_Contains(accumulators, fun);
    int kept = accumulator == 0 && no_base(value) && !is_part_of(value, args) && not_protected(recorder, value_key);
    if (!kept) {
        PyErr_Clear();
        return NULL;
    }
    *owned = 1;
    return Py_NewRef(value);
}

/* CopyOnWrite.own(value) and hold(held_in_trace(level), value, value, position) for an array of no base, as
   keep_node_value does: 0, or -1 with an error */
static int
full_noted(PyObject *recorder, PyObject *value, PyObject *value_key, PyObject *level, Py_ssize_t position)
{
    PyObject *cow = field_get(&r_copy_on_write, recorder);
    PyObject *owned = cow == NULL ? NULL : field_get(&c_owned, cow);
    PyObject *holders = owned == NULL ? NULL : field_get(&r_trace_holders, recorder);
    int failed = holders == NULL || PyDict_SetItem(owned, value_key, value) < 0;
    PyObject *held = failed ? NULL : PyDict_GetItemWithError(holders, level);  /* (borrowed) */
    if (held == NULL && !failed && !PyErr_Occurred()) {  /* (held_in_trace: a new list for the level) */
        held = PyList_New(0);
        failed = held == NULL || PyDict_SetItem(holders, level, held) < 0;
        Py_XDECREF(held);  /* (the dict holds it) */
    }
    failed = failed || held == NULL;
    PyObject *at = failed ? NULL : PyLong_FromSsize_t(position);
    failed = at == NULL || !PyList_Check(held) || PyList_Append(held, value_key) < 0 || PyList_Append(held, at) < 0;
    if (failed && !PyErr_Occurred()) {
        PyErr_SetString(PyExc_TypeError, "a trace's held values are not a list");
    }
    Py_XDECREF(at);
    Py_XDECREF(cow);
    Py_XDECREF(owned);
    Py_XDECREF(holders);
    return failed ? -1 : 0;
}

/* Mirrors on_toposort(node)'s structure path (1: written; 0: the Python callback is to run; -1: an error
   fail() did not take):
       key = id(node)
       label = self.labels.get(key)          (None: self.nodes.unrecorded(node), in Python)
       query.parents, query.label, query.position = node.parents, label, 0
       query.argnums = self.nodes.argnums.get(key, UNARY)
       if self.keeps_values:                 (capture auto and full)
           query.popped = query.entries.pop(label, None)
       write(self.values, ToposortYielded, mode="rev", level=query.level, query=query.number, node=label,
             position=VISITS) */
static int
toposort_written(PyObject *recorder, PyObject *node)
{
    PyObject *query, *labels, *values;
    Py_ssize_t limit;
    if (!structure_state(recorder, &query, &labels, &values, &limit, 1)) {
        return 0;
    }
    int result = 0;
    PyObject *key = NULL, *nodes = NULL, *kept = NULL, *parents = NULL, *level = NULL, *number = NULL,
        *entries = NULL, *label, *argnums;
    PyObject *token = table_token(recorder);
    RecordedVJP *written = row_of(node, token);
    Py_XDECREF(token);  /* (compared only) */
    if (written != NULL) {  /* (its row, as written at its creation) */
        label = Py_NewRef(written->label);
        argnums = Py_NewRef(written->argnums);
    } else {
        key = node_key(node);
        label = key == NULL ? NULL : PyDict_GetItemWithError(labels, key);  /* (borrowed) */
        if (label == NULL || !PyObject_IsTrue(label)) {
            goto done;
        }
        Py_INCREF(label);
        nodes = field_get(&r_nodes, recorder);
        kept = nodes == NULL ? NULL : field_get(&t_argnums, nodes);
        argnums = kept != NULL && PyDict_Check(kept) ? PyDict_GetItemWithError(kept, key) : NULL;
        if (argnums == NULL && (kept == NULL || !PyDict_Check(kept) || PyErr_Occurred())) {
            Py_DECREF(label);
            goto done;
        }
        argnums = argnums == NULL ? unary : argnums;
        Py_INCREF(argnums);
    }
    parents = field_get(&n_parents, node);
    level = parents == NULL ? NULL : field_get(&q_level, query);
    number = level == NULL ? NULL : field_get(&q_number, query);
    PyObject *head = number == NULL ? NULL : head_of(&toposort_cell, level, number);
    entries = head == NULL || limit < 0 ? NULL : field_get(&q_entries, query);
    if (head == NULL || (limit >= 0 && (entries == NULL || !PyDict_CheckExact(entries)))) {
        Py_DECREF(label);
        Py_DECREF(argnums);
        goto done;
    }
    /* (from here on, as the Python's try: an error goes to recorder.fail) */
    result = 1;
    PyObject *row[2] = {head, label};
    int failed = field_set(&q_parents, query, parents) < 0 || field_set(&q_label, query, label) < 0
        || field_set(&q_position, query, zero) < 0 || field_set(&q_argnums, query, argnums) < 0;
    if (!failed && entries != NULL) {  /* outgrad = outgrads.pop(node) */
        PyObject *popped = PyDict_GetItemWithError(entries, label);
        Py_XINCREF(popped);
        failed = (popped == NULL && PyErr_Occurred()) || (popped != NULL && PyDict_DelItem(entries, label) < 0)
            || field_set(&q_popped, query, popped == NULL ? Py_None : popped) < 0;
        Py_XDECREF(popped);
    }
    if (failed || append_all(values, row, 2) < 0) {
        result = structure_failed(recorder) < 0 ? -1 : 1;
    }
    Py_DECREF(label);
    Py_DECREF(argnums);
done:
    if (result == 0) {
        PyErr_Clear();
    }
    Py_XDECREF(key);
    Py_XDECREF(nodes);
    Py_XDECREF(kept);
    Py_XDECREF(parents);
    Py_XDECREF(level);
    Py_XDECREF(number);
    Py_XDECREF(entries);
    Py_DECREF(query);
    Py_DECREF(labels);
    Py_DECREF(values);
    return result;
}

/* Mirrors on_vjp_called(node_id, g, ingrads)'s structure path (1, 0, -1 as toposort_written):
       label = self.labels.get(node_id)
       count = len(ingrads)
       nones = _NONES[count] if count < 64 else (None,) * count
       write(self.values, VJPCalled, mode="rev", level=query.level, query=query.number,
             node=label or query.label, outgrad=None, ingrads=nones) */
static int vjp_called_kept(PyObject *, PyObject *, PyObject *, PyObject *, Py_ssize_t, PyObject *, PyObject *,
                           PyObject *);

static int
vjp_called_written(PyObject *recorder, RecordedVJP *vjp, PyObject *g, PyObject *ingrads)
{
    PyObject *query, *labels, *values;
    Py_ssize_t limit;
    if (!structure_state(recorder, &query, &labels, &values, &limit, 1)) {
        return 0;
    }
    /* its row's label where the node is the one just visited (query.label, a label no other node has): alive, so
       labels.get(node_id) is still that row's (a vjp kept and called after its node died finds its id another's) */
    PyObject *visited = vjp->label == NULL ? NULL : field_get(&q_label, query);
    if (visited == NULL) {
        PyErr_Clear();
    }
    Py_XDECREF(visited);  /* (compared only: the query holds it) */
    PyObject *label = visited != NULL && visited == vjp->label ? vjp->label
        : PyDict_GetItemWithError(labels, vjp->key);  /* (borrowed) */
    if (label == NULL && PyErr_Occurred()) {
        PyErr_Clear();
        Py_DECREF(query);
        Py_DECREF(labels);
        Py_DECREF(values);
        return 0;
    }
    if (limit >= 0) {  /* (capture auto, and full: limit FULL) */
        int written = vjp_called_kept(recorder, query, labels, values, limit, label, g, ingrads);
        Py_DECREF(query);
        Py_DECREF(labels);
        Py_DECREF(values);
        return written;
    }
    int result = 0;
    int named = label == NULL ? 0 : PyObject_IsTrue(label);
    PyObject *node = named > 0 ? Py_NewRef(label) : named < 0 ? NULL : field_get(&q_label, query);
    PyObject *level = node == NULL ? NULL : field_get(&q_level, query);
    PyObject *number = level == NULL ? NULL : field_get(&q_number, query);
    Py_ssize_t count = PyTuple_GET_SIZE(ingrads);
    PyObject *head = number == NULL ? NULL : head_of(count == 1 ? &vjp_one_cell : &vjp_cell, level, number);
    if (head != NULL) {
        result = 1;
        PyObject *row[2] = {head, node};
        int failed = append_all(values, row, 2);
        if (!failed && count != 1) {
            PyObject *n = PyLong_FromSsize_t(count);
            PyObject *more[2] = {Py_None, n};
            failed = n == NULL || append_all(values, more, 2) < 0;
            Py_XDECREF(n);
            for (Py_ssize_t i = 0; !failed && i < count; i++) {
                failed = PyList_Append(values, Py_None) < 0;
            }
        }
        if (failed) {
            result = structure_failed(recorder) < 0 ? -1 : 1;
        }
    } else {
        PyErr_Clear();
    }
    Py_XDECREF(node);
    Py_XDECREF(level);
    Py_XDECREF(number);
    Py_DECREF(query);
    Py_DECREF(labels);
    Py_DECREF(values);
    return result;
}

/* Mirrors on_vjp_called(node_id, g, ingrads)'s capture auto path in a pass (1, 0, -1 as toposort_written),
   its values kept here (kept_any: the recorder's keep for the values kept_value leaves; the Python callback runs
   for any other case, before anything is written):
       level, number, label = query.level, query.number, label or query.label
       popped = query and query.popped
       if popped and popped[0] is g:
           outgrad, inner = popped[1], g
           while type(inner) in box_types: inner = inner._value
           unchanged = type(inner) in SCALARS
       else:
           outgrad, unchanged = self.keep(g), True
       kept_ingrads = []; last = last_kept = None
       for i in ingrads: i itself (a scalar), outgrad (i is g and unchanged), last_kept (i is last), an outer
           trace's boxed scalar (BOXED, i._value, its level), else self.keep(i) (last, last_kept = i, kept)
       query.ingrads, query.kept_ingrads = ingrads, kept_ingrads
       write(values, VJPCalled, mode="rev", level=level, query=number, node=label, outgrad=outgrad,
             ingrads=kept_ingrads)
   and its capture full path (limit FULL), its values kept by full_any: unchanged is True (by_reference), no
   last, no boxed scalar of an outer trace written out, and after the write (the Python's before it, at the same
   position) the values held by reference noted in query.held:
       if type(outgrad) not in NO_REFERENCE: hold(held, g, outgrad, position)
       for value, kept in zip(ingrads, kept_ingrads): if type(kept) not in NO_REFERENCE and value is not g:
           hold(held, value, kept, position) */
static int
vjp_called_kept(PyObject *recorder, PyObject *query, PyObject *labels, PyObject *values, Py_ssize_t limit,
                PyObject *label, PyObject *g, PyObject *ingrads)
{
    int full = limit == FULL;
    int result = 0;
    PyObject *node = NULL, *level = NULL, *number = NULL, *levels = NULL, *popped = NULL, *outgrad = NULL,
        *kept = NULL;
    int named = label == NULL ? 0 : PyObject_IsTrue(label);  /* (label: labels.get(node_id), borrowed) */
    node = named > 0 ? Py_NewRef(label) : named < 0 ? NULL : field_get(&q_label, query);
    level = node == NULL ? NULL : field_get(&q_level, query);
    number = level == NULL ? NULL : field_get(&q_number, query);
    levels = number == NULL ? NULL : levels_of(recorder);
    popped = levels == NULL ? NULL : field_get(&q_popped, query);
    if (popped == NULL) {
        goto done;
    }
    int unchanged = 1;
    if (PyTuple_CheckExact(popped) && PyTuple_GET_SIZE(popped) == 2 && PyTuple_GET_ITEM(popped, 0) == g) {
        outgrad = Py_NewRef(PyTuple_GET_ITEM(popped, 1));  /* kept before the rule ran */
        PyObject *inner = Py_NewRef(g);
        while (inner != NULL && is_box(inner)) {
            Py_SETREF(inner, field_get(&b_value, inner));
        }
        if (inner == NULL) {
            goto done;
        }
        unchanged = full || is_scalar(inner);
        Py_DECREF(inner);
    } else if (popped == Py_None || (PyTuple_CheckExact(popped) && PyTuple_GET_SIZE(popped) == 2)) {
        outgrad = full ? full_any(recorder, g) : kept_any(recorder, g, limit, labels, levels);  /* kept now, after it */
        if (outgrad == NULL) {
            goto done;
        }
    } else {
        goto done;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(ingrads);
    kept = PyList_New(count);
    if (kept == NULL) {
        goto done;
    }
    for (Py_ssize_t k = 0; k < count; k++) {  /* (a keep runs Python code: no empty slot for it to meet) */
        PyList_SET_ITEM(kept, k, Py_NewRef(Py_None));
    }
    PyObject *last = NULL, *last_kept = NULL;  /* (borrowed: ingrads and kept hold them) */
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *i = PyTuple_GET_ITEM(ingrads, k), *one;
        if (is_scalar(i)) {
            one = Py_NewRef(i);
        } else if (i == g && unchanged) {
            one = Py_NewRef(outgrad);
        } else if (full) {
            one = full_any(recorder, i);
            if (one == NULL) {
                goto done;
            }
        } else if (last != NULL && i == last) {  /* the same value twice in the output: one summary */
            one = Py_NewRef(last_kept);
        } else {
            PyObject *inner = is_box(i) ? field_get(&b_value, i) : NULL;
            if (inner != NULL && is_scalar(inner)) {  /* an outer trace's number (grad(grad(f))) */
                one = boxed_scalar(recorder, i, inner, labels, levels);
            } else {
                Py_XDECREF(inner);
                PyErr_Clear();
                one = kept_any(recorder, i, limit, labels, levels);
                last = i, last_kept = one;
            }
            if (one == NULL) {
                goto done;
            }
        }
        Py_DECREF(PyList_GET_ITEM(kept, k));  /* (None) */
        PyList_SET_ITEM(kept, k, one);
    }
    PyObject *head;
    PyObject *first = count == 1 ? PyList_GET_ITEM(kept, 0) : NULL;
    int bare = first == Py_None && outgrad == Py_None;
    head = head_of(bare ? &vjp_one_cell : count == 1 ? &vjp_kept_one_cell : &vjp_cell, level, number);
    if (head == NULL) {
        goto done;
    }
    /* (from here on, as the Python's try: an error goes to recorder.fail) */
    result = 1;
    PyObject *position = full ? PyLong_FromSsize_t(PyList_GET_SIZE(values)) : NULL;  /* (where the event starts) */
    int failed = (full && position == NULL) || field_set(&q_ingrads, query, ingrads) < 0
        || field_set(&q_kept_ingrads, query, kept) < 0;
    if (!failed && bare) {
        PyObject *row[2] = {head, node};
        failed = append_all(values, row, 2) < 0;
    } else if (!failed && count == 1) {
        PyObject *row[4] = {head, node, outgrad, first};
        failed = append_all(values, row, 4) < 0;
    } else if (!failed) {
        PyObject *n = PyLong_FromSsize_t(count);
        PyObject *row[4] = {head, node, outgrad, n};
        failed = n == NULL || append_all(values, row, 4) < 0
            || append_all(values, &PyList_GET_ITEM(kept, 0), count) < 0;
        Py_XDECREF(n);
    }
    if (!failed && full) {  /* copy_on_write.hold of each value held by reference */
        PyObject *held = field_get(&q_held, query);
        failed = held == NULL || !PyList_Check(held) || held_noted(held, g, outgrad, position) < 0;
        for (Py_ssize_t k = 0; !failed && k < count; k++) {
            PyObject *i = PyTuple_GET_ITEM(ingrads, k);
            failed = i != g && held_noted(held, i, PyList_GET_ITEM(kept, k), position) < 0;
        }
        if (failed && held != NULL && !PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "a query's held values are not a list");
        }
        Py_XDECREF(held);
    }
    Py_XDECREF(position);
    if (failed) {
        result = structure_failed(recorder) < 0 ? -1 : 1;
    }
done:
    if (result == 0) {
        result = not_written();
    }
    Py_XDECREF(node);
    Py_XDECREF(level);
    Py_XDECREF(number);
    Py_XDECREF(levels);
    Py_XDECREF(popped);
    Py_XDECREF(outgrad);
    Py_XDECREF(kept);
    return result;
}

/* prev_g_flagged[1] if prev_g_flagged else NO_PREVIOUS (borrowed), or NULL (no error) for an entry of another
   shape (the Python's) */
static inline PyObject *
previous_flag_of(PyObject *prev_g_flagged)
{
    if (prev_g_flagged == Py_None) {
        return no_previous;
    }
    if (PyTuple_CheckExact(prev_g_flagged) && PyTuple_GET_SIZE(prev_g_flagged) == 2) {
        return PyTuple_GET_ITEM(prev_g_flagged, 1);
    }
    return NULL;
}

/* labels.get(id(parents[position])) (a new reference; `recorder`'s labels: its row where the node has one here),
   None past the parents (zip stops: an ingrad of no parent), or NULL (no error) for a parent not named
   (nodes.unrecorded, in Python) */
static PyObject *
parent_label_at(PyObject *recorder, PyObject *parents, Py_ssize_t position, PyObject *labels)
{
    if (position >= PyTuple_GET_SIZE(parents)) {
        return Py_NewRef(Py_None);
    }
    PyObject *token = table_token(recorder);
    RecordedVJP *row = row_of(PyTuple_GET_ITEM(parents, position), token);
    Py_XDECREF(token);  /* (compared only) */
    if (row != NULL) {
        return Py_NewRef(row->label);
    }
    PyObject *key = node_key(PyTuple_GET_ITEM(parents, position));
    PyObject *parent = key == NULL ? NULL : PyDict_GetItemWithError(labels, key);
    Py_XDECREF(key);
    if (parent == NULL || PyObject_IsTrue(parent) <= 0) {
        PyErr_Clear();
        return NULL;
    }
    return Py_NewRef(parent);
}

/* The innermost query's fields an accumulation reads, when it is on top (self.top is query: new references,
   position >= 0), else position -1 (no error: the Python's) */
typedef struct {
    PyObject *at, *parents, *argnums, *node, *level, *number;
    Py_ssize_t position;
} QueryStep;

static void
query_step(PyObject *recorder, PyObject *query, QueryStep *step)
{
    PyObject *top = field_get(&r_top, recorder);
    step->at = top == query ? field_get(&q_position, query) : NULL;
    Py_XDECREF(top);
    step->parents = step->at == NULL ? NULL : field_get(&q_parents, query);
    step->argnums = step->parents == NULL ? NULL : field_get(&q_argnums, query);
    step->node = step->argnums == NULL ? NULL : field_get(&q_label, query);
    step->level = step->node == NULL ? NULL : field_get(&q_level, query);
    step->number = step->level == NULL ? NULL : field_get(&q_number, query);
    step->position = step->number != NULL && PyLong_CheckExact(step->at) && PyTuple_CheckExact(step->parents)
        && PyTuple_CheckExact(step->argnums) ? PyLong_AsSsize_t(step->at) : -1;
    if (step->position < 0) {
        PyErr_Clear();
    }
}

static void
query_step_clear(QueryStep *step)
{
    Py_CLEAR(step->at);
    Py_CLEAR(step->parents);
    Py_CLEAR(step->argnums);
    Py_CLEAR(step->node);
    Py_CLEAR(step->level);
    Py_CLEAR(step->number);
}

/* Mirrors after_add_outgrads(prev_g_flagged, previous, g, result)'s structure path (1, 0, -1 as above):
       frame = self.top                      (not the innermost query: in Python)
       position = frame.position
       frame.position = position + 1
       parents, argnums = frame.parents, frame.argnums
       if position < len(parents):
           parent = parents[position]
           parent = self.labels.get(id(parent))   (None: self.nodes.unrecorded(parent), in Python)
       else:
           parent = None
       argnum = argnums[position] if position < len(argnums) else None
       write(self.values, AddOutgrads, mode="rev", level=frame.level, query=frame.number, node=frame.label,
             position=position, parent=parent, argnum=argnum, previous=None,
             previous_flag=prev_g_flagged[1] if prev_g_flagged else NO_PREVIOUS, contribution=None,
             result=None, result_flag=result[1], replaced=False) */
static int add_outgrads_kept(PyObject *, PyObject *, PyObject *, PyObject *, PyObject *);

static int
add_outgrads_written(PyObject *recorder, PyObject *prev_g_flagged, PyObject *previous, PyObject *g, PyObject *sum)
{
    PyObject *previous_flag = previous_flag_of(prev_g_flagged);
    if (previous_flag == NULL) {
        return 0;
    }
    if (!PyTuple_CheckExact(sum) || PyTuple_GET_SIZE(sum) != 2) {
        return 0;
    }
    PyObject *result_flag = PyTuple_GET_ITEM(sum, 1);
    PyObject *query, *labels, *values;
    Py_ssize_t limit;
    if (!structure_state(recorder, &query, &labels, &values, &limit, 1)) {
        return 0;
    }
    if (limit >= 0 || previous != Py_None) {  /* (capture auto and full: add_outgrads_kept) */
        Py_DECREF(query);
        Py_DECREF(labels);
        Py_DECREF(values);
        return limit >= 0 ? add_outgrads_kept(recorder, prev_g_flagged, previous, g, sum) : 0;
    }
    int result = 0;
    QueryStep step;
    query_step(recorder, query, &step);
    PyObject *at = step.at, *parents = step.parents, *argnums = step.argnums, *node = step.node, *level = step.level,
        *number = step.number;
    PyObject *parent = NULL, *next = NULL;
    Py_ssize_t position = step.position;
    if (position < 0) {
        goto done;
    }
    parent = parent_label_at(recorder, parents, position, labels);
    if (parent == NULL) {
        goto done;
    }
    PyObject *argnum = position < PyTuple_GET_SIZE(argnums) ? PyTuple_GET_ITEM(argnums, position) : Py_None;
    int first = position == 0 && argnum == zero && previous_flag == no_previous && result_flag == Py_False;
    PyObject *head = head_of(first ? &add_first_cell : &add_cell, level, number);
    next = head == NULL ? NULL : PyLong_FromSsize_t(position + 1);
    if (next == NULL) {
        Py_CLEAR(parent);
        goto done;
    }
    result = 1;
    int failed = field_set(&q_position, query, next) < 0;
    if (!failed && first) {
        PyObject *row[3] = {head, node, parent};
        failed = append_all(values, row, 3) < 0;
    } else if (!failed) {
        PyObject *row[11] = {head, node, at, parent, argnum, Py_None, previous_flag, Py_None, Py_None, result_flag,
                             Py_False};
        failed = append_all(values, row, 11) < 0;
    }
    if (failed) {
        result = structure_failed(recorder) < 0 ? -1 : 1;
    }
done:
    if (result == 0) {
        PyErr_Clear();
    }
    Py_XDECREF(parent);
    Py_XDECREF(next);
    query_step_clear(&step);
    Py_DECREF(query);
    Py_DECREF(labels);
    Py_DECREF(values);
    return result;
}

/* Mirrors before_add_outgrads(prev_g_flagged, g) under capture auto, in a pass: a new reference to the kept value
   of outgrads.get(parent), or NULL (no error) when the Python callback is to run (nothing done yet):
       value, mutable = prev_g_flagged
       if self.top is query and query.position < len(query.parents):
           seen = query.entries.get(self.labels.get(id(query.parents[query.position])))
           if seen is not None and seen[0] is value: kept = seen[1]
       if kept is None: kept = self.keep(value) */
static PyObject *
before_kept(PyObject *recorder, PyObject *prev_g_flagged)
{
    if (!PyTuple_CheckExact(prev_g_flagged) || PyTuple_GET_SIZE(prev_g_flagged) != 2) {
        return NULL;
    }
    PyObject *value = PyTuple_GET_ITEM(prev_g_flagged, 0);
    PyObject *query, *labels, *values;
    Py_ssize_t limit;
    if (!structure_state(recorder, &query, &labels, &values, &limit, 0)) {
        return NULL;
    }
    PyObject *kept = NULL, *levels = NULL;
    PyObject *top = limit < 0 ? NULL : field_get(&r_top, recorder);
    PyObject *at = top == query ? field_get(&q_position, query) : NULL;
    PyObject *parents = at == NULL ? NULL : field_get(&q_parents, query);
    PyObject *entries = parents == NULL ? NULL : field_get(&q_entries, query);
    Py_ssize_t position = entries != NULL && PyLong_CheckExact(at) ? PyLong_AsSsize_t(at) : -1;
    if (position < 0 || !PyTuple_CheckExact(parents) || !PyDict_CheckExact(entries)) {
        goto done;
    }
    if (position < PyTuple_GET_SIZE(parents)) {
        PyObject *parent = parent_label_at(recorder, parents, position, labels);
        if (parent == NULL) {
            goto done;  /* (a node from before the recording: unrecorded, in Python) */
        }
        PyObject *seen = PyDict_GetItemWithError(entries, parent);  /* (borrowed: entries holds its key too) */
        Py_DECREF(parent);
        if (seen != NULL && PyTuple_CheckExact(seen) && PyTuple_GET_SIZE(seen) == 2
                && PyTuple_GET_ITEM(seen, 0) == value && PyTuple_GET_ITEM(seen, 1) != Py_None) {
            kept = Py_NewRef(PyTuple_GET_ITEM(seen, 1));  /* still true: a copy */
            goto done;
        }
        if (seen != NULL && !PyTuple_CheckExact(seen)) {
            goto done;
        }
    }
    levels = levels_of(recorder);
    kept = levels == NULL ? NULL : kept_value(value, limit, labels, levels);
done:
    PyErr_Clear();
    Py_XDECREF(levels);
    Py_XDECREF(top);
    Py_XDECREF(at);
    Py_XDECREF(parents);
    Py_XDECREF(entries);
    Py_DECREF(query);
    Py_DECREF(labels);
    Py_DECREF(values);
    return kept;
}

static HeadCell add_kept_first_cell = {2006};

/* Mirrors after_add_outgrads(prev_g_flagged, previous, g, result)'s capture auto path in a pass (1, 0, -1 as
   toposort_written), the structure path's lookups and:
       value, mutable = result
       contribution = frame.kept_ingrads[position] if position < len(ingrads) and ingrads[position] is g \
           else self.keep(g)
       kept = contribution (value is g), value (a scalar), an outer trace's boxed scalar (BOXED, value._value, its
           level), else self.keep(value)       (a sparse g added into the entry kept last: in Python)
       write(values, AddOutgrads, ..., previous=previous, previous_flag=previous_flag, contribution=contribution,
             result=kept, result_flag=mutable, replaced=False)
       if parent is not None: frame.entries[parent] = (value, kept)
   and its capture full path (limit FULL): a sparse g added into an entry of a parent in Python (shared_after_sparse_add),
   no boxed scalar of an outer trace written out, the values kept by full_any, then
       if mutable: kept = copy_on_write.version(value) (an array kept as it is), else copy_on_write.share(kept, value)
       hold_accumulation(frame.held, position, prev_g_flagged, previous, g, contribution, value, kept)
   (the holds after the write, at the position where it starts: the Python's before it) */
static int
add_outgrads_kept(PyObject *recorder, PyObject *prev_g_flagged, PyObject *previous, PyObject *g, PyObject *sum)
{
    PyObject *previous_flag = previous_flag_of(prev_g_flagged);
    if (previous_flag == NULL) {
        return 0;
    }
    if (!PyTuple_CheckExact(sum) || PyTuple_GET_SIZE(sum) != 2) {
        return 0;
    }
    PyObject *value = PyTuple_GET_ITEM(sum, 0), *mutable = PyTuple_GET_ITEM(sum, 1);
    PyObject *query, *labels, *values;
    Py_ssize_t limit;
    if (!structure_state(recorder, &query, &labels, &values, &limit, 1)) {
        return 0;
    }
    int full = limit == FULL;
    int result = 0;
    QueryStep step;
    query_step(recorder, query, &step);  /* (capture auto: limit >= 0) */
    PyObject *at = step.at, *parents = step.parents, *argnums = step.argnums, *node = step.node, *level = step.level,
        *number = step.number;
    PyObject *ingrads = NULL, *kept_ingrads = NULL, *entries = NULL, *levels = NULL, *parent = NULL, *next = NULL,
        *contribution = NULL, *kept = NULL, *pair = NULL;
    ingrads = step.position < 0 ? NULL : field_get(&q_ingrads, query);
    kept_ingrads = ingrads == NULL ? NULL : field_get(&q_kept_ingrads, query);
    entries = kept_ingrads == NULL ? NULL : field_get(&q_entries, query);
    levels = entries == NULL ? NULL : levels_of(recorder);
    Py_ssize_t position = levels != NULL ? step.position : -1;
    if (position < 0 || !PyTuple_CheckExact(ingrads)
            || !(PyList_CheckExact(kept_ingrads) || PyTuple_CheckExact(kept_ingrads))
            || PySequence_Fast_GET_SIZE(kept_ingrads) != PyTuple_GET_SIZE(ingrads) || !PyDict_CheckExact(entries)) {
        goto done;
    }
    parent = parent_label_at(recorder, parents, position, labels);
    if (parent == NULL) {
        goto done;
    }
    PyObject *argnum = position < PyTuple_GET_SIZE(argnums) ? PyTuple_GET_ITEM(argnums, position) : Py_None;
    if (full && Py_TYPE(g) == (PyTypeObject *)sparse_type && parent != Py_None && prev_g_flagged != Py_None) {
        goto done;  /* (shared_after_sparse_add, in Python) */
    }
    if (Py_TYPE(g) == (PyTypeObject *)sparse_type && parent != Py_None && prev_g_flagged != Py_None) {
        /* xs[i] of a list or tuple added into the entry kept last as a ContainerSummary: summary_after_sparse_add,
           in Python (which keeps any other result anew, as below: a dict's, an array's). Checked before any keep
           runs: a value handed back is kept once, by the callback. */
        PyObject *seen = PyDict_GetItemWithError(entries, parent);  /* (borrowed) */
        PyObject *was = seen != NULL && PyTuple_CheckExact(seen) && PyTuple_GET_SIZE(seen) == 2
            ? PyTuple_GET_ITEM(seen, 1) : NULL;
        if ((seen == NULL && PyErr_Occurred()) || (seen != NULL && was == NULL)) {
            goto done;
        }
        if (was != NULL && PyTuple_GET_ITEM(seen, 0) == PyTuple_GET_ITEM(prev_g_flagged, 0) && PyTuple_CheckExact(was)
                && (PyTuple_GET_SIZE(was) == 0 || (PyTuple_GET_ITEM(was, 0) == container_summary_tag
                                                   && (PyList_CheckExact(value) || PyTuple_CheckExact(value))))) {
            goto done;
        }
    }
    if (position < PyTuple_GET_SIZE(ingrads) && PyTuple_GET_ITEM(ingrads, position) == g) {
        contribution = Py_NewRef(PySequence_Fast_GET_ITEM(kept_ingrads, position));
    } else {
        contribution = full ? full_any(recorder, g) : kept_any(recorder, g, limit, labels, levels);
    }
    if (contribution == NULL) {
        goto done;
    }
    if (value == g) {
        kept = Py_NewRef(contribution);
    } else if (is_scalar(value)) {
        kept = Py_NewRef(value);
    } else if (full) {
        kept = full_any(recorder, value);
        if (kept == NULL) {
            goto done;
        }
    } else {
        PyObject *inner = is_box(value) ? field_get(&b_value, value) : NULL;
        if (inner != NULL && is_scalar(inner)) {  /* an outer trace's number (grad(grad(f))) */
            kept = boxed_scalar(recorder, value, inner, labels, levels);
        } else {
            Py_XDECREF(inner);
            PyErr_Clear();
            kept = kept_any(recorder, value, limit, labels, levels);
        }
        if (kept == NULL) {
            goto done;
        }
    }
    PyObject *cow = NULL;
    if (full && mutable == Py_True && value != g && !is_scalar(value)) {  /* autograd may write into it later */
        int plain = PySet_Contains(no_reference, (PyObject *)Py_TYPE(kept));
        cow = plain < 0 ? NULL : field_get(&r_copy_on_write, recorder);
        if (cow == NULL) {
            goto done;
        }
        PyObject *shared = kept == value && Py_TYPE(value) == (PyTypeObject *)ndarray_type
            ? PyObject_CallMethodOneArg(cow, version_name, value)
            : plain ? Py_NewRef(kept) : PyObject_CallMethodObjArgs(cow, share_name, kept, value, NULL);
        Py_DECREF(cow);
        if (shared == NULL) {
            goto done;
        }
        Py_SETREF(kept, shared);
    }
    int reference = PySet_Contains(no_reference, (PyObject *)Py_TYPE(kept));
    if (reference < 0) {
        goto done;
    }
    int first = position == 0 && argnum == zero && previous == Py_None && previous_flag == no_previous
        && kept == contribution && reference && mutable == Py_False;
    PyObject *head = head_of(first ? &add_kept_first_cell : &add_cell, level, number);
    next = head == NULL ? NULL : PyLong_FromSsize_t(position + 1);
    pair = next == NULL || parent == Py_None ? NULL : PyTuple_Pack(2, value, kept);
    if (next == NULL || (parent != Py_None && pair == NULL)) {
        goto done;
    }
    /* (from here on, as the Python's try: an error goes to recorder.fail) */
    result = 1;
    PyObject *start = full ? PyLong_FromSsize_t(PyList_GET_SIZE(values)) : NULL;  /* (where the event starts) */
    int failed = (full && start == NULL) || field_set(&q_position, query, next) < 0;
    if (!failed && first) {
        PyObject *row[4] = {head, node, parent, contribution};
        failed = append_all(values, row, 4) < 0;
    } else if (!failed) {
        PyObject *row[11] = {head, node, at, parent, argnum, previous, previous_flag, contribution, kept, mutable,
                             Py_False};
        failed = append_all(values, row, 11) < 0;
    }
    if (!failed && full) {  /* hold_accumulation */
        PyObject *held = field_get(&q_held, query);
        failed = held == NULL || !PyList_Check(held) || held_noted(held, g, contribution, start) < 0
            || (value != g && held_noted(held, value, kept, start) < 0)
            || (previous != Py_None && held_noted(held, PyTuple_GET_ITEM(prev_g_flagged, 0), previous, start) < 0);
        if (failed && held != NULL && !PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "a query's held values are not a list");
        }
        Py_XDECREF(held);
    }
    Py_XDECREF(start);
    if (!failed && pair != NULL) {
        failed = PyDict_SetItem(entries, parent, pair) < 0;
    }
    if (failed) {
        result = structure_failed(recorder) < 0 ? -1 : 1;
    }
done:
    if (result == 0) {
        result = not_written();
    }
    query_step_clear(&step);
    Py_XDECREF(ingrads);
    Py_XDECREF(kept_ingrads);
    Py_XDECREF(entries);
    Py_XDECREF(levels);
    Py_XDECREF(parent);
    Py_XDECREF(next);
    Py_XDECREF(contribution);
    Py_XDECREF(kept);
    Py_XDECREF(pair);
    Py_DECREF(query);
    Py_DECREF(labels);
    Py_DECREF(values);
    return result;
}

static PyObject *keep_sites_name, *made_name, *names_name, *distinct_name, *levels_name, *on_vjp_node_name;

/* nodes.distinct_argnums.setdefault(argnums, argnums) (borrowed: the dict holds it), or NULL with Python's error.
   The last answer is given again for a tuple of the same items (by identity: autograd's argnums are small ints) in
   the same dict: its entries are only ever added, each value its own key (held here, so no other dict has its
   address while it is compared). */
static PyObject *last_distinct, *last_shared;

static PyObject *
distinct_argnums(PyObject *distinct, PyObject *argnums)
{
    if (distinct == last_distinct && PyTuple_CheckExact(argnums)
            && PyTuple_GET_SIZE(argnums) == PyTuple_GET_SIZE(last_shared)) {
        Py_ssize_t i = 0, n = PyTuple_GET_SIZE(argnums);
        while (i < n && PyTuple_GET_ITEM(argnums, i) == PyTuple_GET_ITEM(last_shared, i)) {
            i++;
        }
        if (i == n) {
            return last_shared;
        }
    }
    PyObject *shared = PyDict_SetDefault(distinct, argnums, argnums);
    if (shared != NULL && PyTuple_CheckExact(shared)) {
        Py_INCREF(distinct);
        Py_INCREF(shared);
        Py_XSETREF(last_distinct, distinct);
        Py_XSETREF(last_shared, shared);
    }
    return shared;
}

/* The node table's columns a node's creation reads and writes (new references): 1 when each is of the type the
   paths take (labels, names and distinct_argnums dicts, levels and argnums Sparse dicts, made an int), else 0
   (no error, all cleared: the Python's) */
typedef struct {
    PyObject *nodes, *made, *names, *distinct, *labels, *levels, *argnums;
} NodeColumns;

static void
node_columns_clear(NodeColumns *t)
{
    Py_CLEAR(t->nodes);
    Py_CLEAR(t->made);
    Py_CLEAR(t->names);
    Py_CLEAR(t->distinct);
    Py_CLEAR(t->labels);
    Py_CLEAR(t->levels);
    Py_CLEAR(t->argnums);
}

static int
node_columns(PyObject *recorder, NodeColumns *t)
{
    t->nodes = field_get(&r_nodes, recorder);
    t->made = t->nodes == NULL ? NULL : field_get(&t_made, t->nodes);
    t->names = t->made == NULL ? NULL : field_get(&t_names, t->nodes);
    t->distinct = t->names == NULL ? NULL : field_get(&t_distinct, t->nodes);
    t->labels = t->distinct == NULL ? NULL : field_get(&t_labels, t->nodes);
    t->levels = t->labels == NULL ? NULL : field_get(&t_levels, t->nodes);
    t->argnums = t->levels == NULL ? NULL : field_get(&t_argnums, t->nodes);
    if (t->argnums == NULL || !PyLong_CheckExact(t->made) || !PyDict_CheckExact(t->names)
            || !PyDict_CheckExact(t->distinct) || !PyDict_CheckExact(t->labels) || !PyDict_Check(t->levels)
            || !PyDict_Check(t->argnums)) {
        PyErr_Clear();
        node_columns_clear(t);
        return 0;
    }
    return 1;
}
static HeadCell node_unary_cell = {1001}, node_kept_unary_cell = {2001}, node_cell = {1};

/* Mirrors on_vjp_node(node, value, fun, args, kwargs, argnums, parents)'s structure path (1, 0, -1 as
   toposort_written), for a node of one or two parents, its primitive named before, no call site kept:
       number = nodes.made
       nodes.made = number + 1
       names = nodes.names.get(fun)          (None: nodes.name_of(fun), in Python)
       label = f"v{number}_{names[1]}"
       argnums = nodes.distinct_argnums.setdefault(argnums, argnums)
       parent_labels = the parents' labels.get(id(parent)), joined by a comma   (None: in Python)
       level = levels.get(id(parents[0]), 0)
       labels[key] = label; levels[key] = level and nodes.argnums[key] = argnums where they differ
       write(self.values, NodeCreated, mode="rev", level=level, query=query and query.number, label=label,
             primitive=names[0], argnums=argnums, parents=parent_labels, value=None, site=None) */
static int
vjp_node_written(PyObject *recorder, PyObject *node, PyObject *key, PyObject *value, PyObject *fun,
                 PyObject *args, PyObject *argnums, PyObject *parents, PyObject **row)
{
    if (!PyTuple_CheckExact(parents) || PyTuple_GET_SIZE(parents) < 1 || PyTuple_GET_SIZE(parents) > 2) {
        return 0;
    }
    Py_ssize_t limit;
    int full = 0, owned = 0;  /* capture full (its node values kept by reference); an array noted as own and held */
    if (!fast_capture(recorder, 1, &limit) && !(full = full_capture(recorder, 1))) {
        return 0;
    }
    int result = 0;
    PyObject *values = NULL, *query = NULL, *first = NULL, *second = NULL, *parent_labels = NULL,
        *label = NULL, *next = NULL, *query_number = NULL, *value_kept = NULL, *named = NULL, *value_key = NULL,
        *token = NULL;
    NodeColumns table;
    int columns = node_columns(recorder, &table);
    PyObject *nodes = table.nodes, *number = table.made, *names = table.names, *distinct = table.distinct,
        *labels = table.labels, *levels = table.levels, *kept = table.argnums;  /* (borrowed from table) */
    token = columns ? field_get(&t_token, nodes) : NULL;
    values = token == NULL ? NULL : field_get(&r_values, recorder);
    query = values == NULL ? NULL : field_get(&r_query, recorder);
    if (query == NULL || !PyList_CheckExact(values)) {
        goto done;
    }
    named = PyDict_GetItemWithError(names, fun);
    if (named == NULL || !PyTuple_CheckExact(named) || PyTuple_GET_SIZE(named) != 2) {
        named = NULL;
        goto done;
    }
    Py_INCREF(named);  /* (held: keeping the value below may run Python code) */
    /* capture auto: the value kept (the node, not yet named, is no box's node: its value's boxes are an outer
       trace's) */
    if (full) {  /* capture full: by reference (its id the key own and hold note it by) */
        value_key = PyLong_FromVoidPtr(value);
        value_kept = value_key == NULL ? NULL : full_kept(recorder, value, fun, args, value_key, &owned);
    } else {
        value_kept = limit < 0 ? Py_NewRef(Py_None) : kept_value(value, limit, labels, levels);
    }
    if (value_kept == NULL) {
        goto done;
    }
    /* (a parent's row where it has one here, else the table's lookups) */
    RecordedVJP *parent_row = row_of(PyTuple_GET_ITEM(parents, 0), token);
    PyObject *level;
    if (parent_row != NULL) {
        first = parent_row->label;
        level = parent_row->level;
    } else {
        PyObject *parent_key = node_key(PyTuple_GET_ITEM(parents, 0));
        if (parent_key == NULL) {
            goto done;
        }
        first = PyDict_GetItemWithError(labels, parent_key);
        level = first == NULL ? NULL : PyDict_GetItemWithError(levels, parent_key);
        if (level == NULL && !PyErr_Occurred()) {
            level = zero;
        }
        Py_DECREF(parent_key);
        if (first == NULL || level == NULL || PyObject_IsTrue(first) <= 0) {
            first = NULL;
            goto done;
        }
    }
    Py_INCREF(first);
    Py_INCREF(level);
    if (PyTuple_GET_SIZE(parents) == 2) {
        parent_row = row_of(PyTuple_GET_ITEM(parents, 1), token);
        if (parent_row != NULL) {
            second = parent_row->label;
        } else {
            PyObject *parent_key = node_key(PyTuple_GET_ITEM(parents, 1));
            second = parent_key == NULL ? NULL : PyDict_GetItemWithError(labels, parent_key);
            Py_XDECREF(parent_key);
        }
        if (second == NULL || PyObject_IsTrue(second) <= 0 || !PyUnicode_CheckExact(second)
                || !PyUnicode_CheckExact(first)) {
            second = NULL;
            Py_DECREF(level);
            goto done;
        }
        Py_INCREF(second);
        parent_labels = pair_text(first, second);
    } else {
        parent_labels = Py_NewRef(first);
    }
    Py_ssize_t made = PyLong_AsSsize_t(number);
    PyObject *name = PyTuple_GET_ITEM(named, 1);
    if (parent_labels != NULL && !PyUnicode_CheckExact(name)) {  /* (not made by labels.label_name: in Python) */
        Py_DECREF(level);
        goto done;
    }
    label = parent_labels == NULL || made < 0 ? NULL : label_text(made, name);
    next = label == NULL ? NULL : PyLong_FromSsize_t(made + 1);
    query_number = next == NULL ? NULL : query == Py_None ? Py_NewRef(Py_None) : field_get(&q_number, query);
    PyObject *shared = query_number == NULL ? NULL : distinct_argnums(distinct, argnums);  /* (borrowed) */
    PyObject *head = shared == NULL ? NULL
        : head_of(shared != unary ? &node_cell : value_kept == Py_None ? &node_unary_cell : &node_kept_unary_cell,
                  level, query_number);
    if (head == NULL) {
        Py_DECREF(level);
        goto done;
    }
    /* (from here on, as the Python's try: an error goes to recorder.fail) */
    result = 1;
    Py_ssize_t position = PyList_GET_SIZE(values);  /* (where the event starts: hold notes it) */
    Py_ssize_t known = PyDict_GET_SIZE(labels);
    int failed = field_set(&t_made, nodes, next) < 0 || PyDict_SetItem(labels, key, label) < 0;
    /* a key new to labels has no entry in levels or argnums (each is written after labels, whose entries stay): only
       an id Python reused after a node died has one there, perhaps other than this node's */
    int fresh = !failed && PyDict_GET_SIZE(labels) > known;
    if (!failed) {
        PyObject *was = fresh ? NULL : PyDict_GetItemWithError(levels, key);
        int same = was == NULL ? (PyErr_Occurred() ? -1 : PyObject_RichCompareBool(zero, level, Py_EQ))
            : PyObject_RichCompareBool(was, level, Py_EQ);
        failed = same < 0 || (same == 0 && PyDict_SetItem(levels, key, level) < 0);
    }
    if (!failed) {
        PyObject *was = fresh ? NULL : PyDict_GetItemWithError(kept, key);
        failed = was == NULL && PyErr_Occurred();
        if (!failed && (was == NULL ? unary : was) != shared) {
            failed = PyDict_SetItem(kept, key, shared) < 0;
        }
    }
    if (!failed && shared == unary) {
        PyObject *row[5] = {head, label, PyTuple_GET_ITEM(named, 0), parent_labels, value_kept};
        failed = append_all(values, row, value_kept == Py_None ? 4 : 5) < 0;
    } else if (!failed) {
        PyObject *row[7] = {head, label, PyTuple_GET_ITEM(named, 0), shared, parent_labels, value_kept, Py_None};
        failed = append_all(values, row, 7) < 0;
    }
    if (!failed && owned) {
        failed = full_noted(recorder, value, value_key, level, position) < 0;
    }
    if (failed) {
        result = structure_failed(recorder) < 0 ? -1 : 1;
    } else {  /* the node's row, for its RecordedVJP */
        row[0] = Py_NewRef(token), row[1] = Py_NewRef(label), row[2] = Py_NewRef(level), row[3] = Py_NewRef(shared);
    }
    Py_DECREF(level);
done:
    if (result == 0) {
        PyErr_Clear();
    }
    node_columns_clear(&table);
    Py_XDECREF(token);
    Py_XDECREF(values);
    Py_XDECREF(query);
    Py_XDECREF(first);
    Py_XDECREF(second);
    Py_XDECREF(parent_labels);
    Py_XDECREF(label);
    Py_XDECREF(next);
    Py_XDECREF(query_number);
    Py_XDECREF(value_kept);
    Py_XDECREF(value_key);
    Py_XDECREF(named);
    return result;
}

/* -------------------- forward mode's per-node events, written here -------------------- */

/* Under capture structure and auto the wrapper of JVPNode.__init__ (JVPNodeInit) and AddOutgrads write forward
   mode's common case too, mirroring forward.ForwardMode's begin_jvp_node, end_jvp_node and add_in_jvp_node line
   by line: a recorder as structure_recorder takes, live, keeping no value or capture auto's by copy (no call site
   kept), its log a plain list, a node of one or two named parents, its primitive named before. Every other case
   calls the Python callback, before anything is written. */

static PyTypeObject *jvp_frame_type;  /* forward.JVPFrame, once forward() has registered it */
static PyObject *primitive_jvps;      /* autograd.core.primitive_jvps */
static PyObject *summing_codes;       /* forward.SUMMING_JVP_MAKERS, as a tuple */
static PyObject *frames_name, *fun_name, *name_name, *sums_name, *last_value_name, *last_kept_name, *g_name,
    *abort_jvp_node_name;
static Field r_frames, f_fun, f_label, f_name, f_level, f_argnums, f_parents, f_position, f_sums, f_last_value,
    f_last_kept, n_g;
static HeadCell jvp_node_cell = {9, 1}, jvp_add_first_cell = {1006, 1}, jvp_add_kept_first_cell = {2006, 1},
    jvp_add_cell = {6, 1};

/* The recorder's state forward mode's paths read: 1 with *values (a new reference: its log, a plain list) and
   *limit (-1 under capture structure, else capture auto's inline size), or 0 when the Python callback must run:
   not live, capture full, call sites kept, its log not a plain list (a query need not be open) */
static int
forward_state(PyObject *recorder, PyObject **values, Py_ssize_t *limit)
{
    *values = NULL;
    *limit = -1;
    int fast = jvp_frame_type != NULL && fast_capture(recorder, 1, limit);
    if (fast) {
        *values = field_get(&r_values, recorder);
        fast = *values != NULL && PyList_CheckExact(*values);
    }
    if (!fast) {
        PyErr_Clear();
        Py_CLEAR(*values);
    }
    return fast;
}

static int jvp_frame_resolved;  /* forward() found every slot of JVPFrame a __slots__ member (offsets set) */

/* A JVPFrame's slots are read and set at the offsets of its member descriptors, resolved once when forward()
   registers the class (JVPFrame's __slots__ are fixed: no version tag to check at each read): 1 for a frame of
   that class, else 0 (the Python's) */
static inline int
jvp_frame_slots(PyObject *frame)
{
    return jvp_frame_resolved && Py_TYPE(frame) == jvp_frame_type;
}

/* 1 when every slot's member descriptor was found in JVPFrame's own dict, their offsets set in the fields */
static int
jvp_frame_resolve(PyTypeObject *type)
{
    Field *fields[] = {&f_fun, &f_label, &f_name, &f_level, &f_argnums, &f_parents, &f_position, &f_sums,
                       &f_last_value, &f_last_kept};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        PyObject *found = PyDict_GetItemWithError(type->tp_dict, fields[i]->name);  /* (borrowed) */
        if (found == NULL || !Py_IS_TYPE(found, &PyMemberDescr_Type)) {
            PyErr_Clear();
            return 0;
        }
        PyMemberDef *member = ((PyMemberDescrObject *)found)->d_member;
        if (member->type != T_OBJECT_EX || (member->flags & READONLY) || member->offset <= 0) {
            return 0;
        }
        fields[i]->offset = member->offset;
    }
    return 1;
}

/* a __slots__ member set at its offset (resolved by forward(): it cannot fail) */
static inline void
slot_put(Field *f, PyObject *obj, PyObject *value)
{
    PyObject **slot = (PyObject **)((char *)obj + f->offset);
    Py_XSETREF(*slot, Py_NewRef(value));
}

/* a __slots__ member read at its offset (borrowed; NULL when unset) */
static inline PyObject *
slot_of(Field *f, PyObject *obj)
{
    return *(PyObject **)((char *)obj + f->offset);
}

/* A JVPFrame's slots the paths read (new references: keeping a value may run Python code): 1 when each is set,
   its position an int, its argnums and parents tuples, else 0 (none held) */
typedef struct {
    PyObject *at, *label, *name, *level, *argnums, *parents;
} FrameSlots;

static void
frame_slots_clear(FrameSlots *f)
{
    Py_CLEAR(f->at);
    Py_CLEAR(f->label);
    Py_CLEAR(f->name);
    Py_CLEAR(f->level);
    Py_CLEAR(f->argnums);
    Py_CLEAR(f->parents);
}

static int
frame_slots(PyObject *frame, FrameSlots *f)
{
    if (frame == NULL || !jvp_frame_slots(frame)) {
        f->at = f->label = f->name = f->level = f->argnums = f->parents = NULL;
        return 0;
    }
    f->at = Py_XNewRef(slot_of(&f_position, frame));
    f->label = Py_XNewRef(slot_of(&f_label, frame));
    f->name = Py_XNewRef(slot_of(&f_name, frame));
    f->level = Py_XNewRef(slot_of(&f_level, frame));
    f->argnums = Py_XNewRef(slot_of(&f_argnums, frame));
    f->parents = Py_XNewRef(slot_of(&f_parents, frame));
    if (f->at == NULL || f->label == NULL || f->name == NULL || f->level == NULL || f->argnums == NULL
            || f->parents == NULL || !PyLong_CheckExact(f->at) || !PyTuple_CheckExact(f->argnums)
            || !PyTuple_CheckExact(f->parents)) {
        frame_slots_clear(f);
        return 0;
    }
    return 1;
}

/* query and query.number, the recorder's innermost query's (a new reference), or NULL (no error) */
static PyObject *
query_number_of(PyObject *recorder)
{
    PyObject *query = field_get(&r_query, recorder);
    PyObject *number = query == NULL ? NULL : query == Py_None ? Py_NewRef(Py_None) : field_get(&q_number, query);
    Py_XDECREF(query);
    if (number == NULL) {
        PyErr_Clear();
    }
    return number;
}

/* Mirrors begin_jvp_node(fun, argnums, parents)'s common case (1: *made, a new reference to the frame pushed, or
   None when fail() took an error; 0: the Python callback is to run, nothing done; -1: an error fail() did not
   take), for a node of one or two parents, each named, its primitive named before:
       labels = (labels.get(id(parent)), ...)     (None: nodes.unrecorded(parent), in Python)
       level = nodes.levels[id(parents[0])]
       number = nodes.made
       nodes.made = number + 1
       names = nodes.names.get(fun)                (None: nodes.name_of(fun), in Python)
       sums = capture auto and id(getattr(core.primitive_jvps.get(fun), "__code__", None)) in _SUMMING_IDS
       argnums = nodes.distinct_argnums.setdefault(argnums, argnums)
       label = f"v{number}_{names[1]}"
       frame = JVPFrame(fun, label, names[0], level, argnums, labels, sums)   (allocated here, its slots set)
       self.frames.append(frame)
       self.top = frame */
static int
jvp_begun(PyObject *recorder, PyObject *fun, PyObject *argnums, PyObject *parents, PyObject **made)
{
    *made = NULL;
    if (!PyTuple_CheckExact(parents) || PyTuple_GET_SIZE(parents) < 1 || PyTuple_GET_SIZE(parents) > 2) {
        return 0;
    }
    PyObject *values;
    Py_ssize_t limit;
    if (!forward_state(recorder, &values, &limit)) {
        return 0;
    }
    int result = 0;
    PyObject *frames = NULL, *named = NULL, *level = NULL, *parent_labels = NULL, *label = NULL, *next = NULL,
        *frame = NULL;
    NodeColumns table;
    int columns = node_columns(recorder, &table);
    PyObject *nodes = table.nodes, *labels = table.labels, *levels = table.levels, *number = table.made,
        *names = table.names, *distinct = table.distinct;  /* (borrowed from table) */
    frames = columns ? field_get(&r_frames, recorder) : NULL;
    if (frames == NULL || !PyList_CheckExact(frames)) {
        goto done;
    }
    named = PyDict_GetItemWithError(names, fun);
    if (named == NULL || !PyTuple_CheckExact(named) || PyTuple_GET_SIZE(named) != 2
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(named, 1))) {
        named = NULL;
        goto done;
    }
    Py_INCREF(named);
    Py_ssize_t n = PyTuple_GET_SIZE(parents);
    PyObject *found[2] = {NULL, NULL};  /* (borrowed from labels: no Python code runs before they are packed) */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyLong_FromVoidPtr(PyTuple_GET_ITEM(parents, i));
        found[i] = key == NULL ? NULL : PyDict_GetItemWithError(labels, key);
        if (i == 0 && found[i] != NULL) {
            level = PyDict_GetItemWithError(levels, key);  /* (Sparse's __missing__: its default, 0) */
            level = level != NULL ? Py_NewRef(level) : PyErr_Occurred() ? NULL : Py_NewRef(zero);
        }
        Py_XDECREF(key);
        if (found[i] == NULL || level == NULL || !PyUnicode_CheckExact(found[i]) || PyUnicode_GET_LENGTH(found[i]) == 0) {
            goto done;  /* (a node from before the recording: unrecorded, in Python) */
        }
    }
    parent_labels = PyTuple_Pack(n, found[0], found[1]);
    int sums = 0;
    if (limit >= 0) {  /* capture auto */
        PyObject *maker = PyDict_GetItemWithError(primitive_jvps, fun);  /* (borrowed) */
        if (maker != NULL && !PyFunction_Check(maker)) {
            goto done;  /* (its __code__ read by getattr: in Python) */
        }
        if (maker != NULL) {
            PyObject *code = PyFunction_GET_CODE(maker);
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(summing_codes); i++) {
                sums |= PyTuple_GET_ITEM(summing_codes, i) == code;
            }
        }
    }
    Py_ssize_t count = PyLong_AsSsize_t(number);
    label = parent_labels == NULL || PyErr_Occurred() || count < 0 ? NULL
        : label_text(count, PyTuple_GET_ITEM(named, 1));
    next = label == NULL ? NULL : PyLong_FromSsize_t(count + 1);
    PyObject *shared = next == NULL ? NULL : distinct_argnums(distinct, argnums);  /* (borrowed) */
    frame = shared == NULL ? NULL : jvp_frame_type->tp_alloc(jvp_frame_type, 0);
    if (frame == NULL || !jvp_frame_slots(frame)) {
        goto done;
    }
    slot_put(&f_fun, frame, fun);
    slot_put(&f_label, frame, label);
    slot_put(&f_name, frame, PyTuple_GET_ITEM(named, 0));
    slot_put(&f_level, frame, level);
    slot_put(&f_argnums, frame, shared);
    slot_put(&f_parents, frame, parent_labels);
    slot_put(&f_position, frame, zero);
    slot_put(&f_sums, frame, sums ? Py_True : Py_False);
    slot_put(&f_last_value, frame, Py_None);
    slot_put(&f_last_kept, frame, Py_None);
    /* (from here on, as the Python's try: an error goes to recorder.fail) */
    result = 1;
    if (field_set(&t_made, nodes, next) < 0 || PyList_Append(frames, frame) < 0 || field_set(&r_top, recorder, frame) < 0) {
        result = structure_failed(recorder) < 0 ? -1 : 1;
        *made = result < 0 ? NULL : Py_NewRef(Py_None);
    } else {
        *made = Py_NewRef(frame);
    }
done:
    if (result == 0) {
        PyErr_Clear();
    }
    Py_DECREF(values);
    node_columns_clear(&table);
    Py_XDECREF(frames);
    Py_XDECREF(named);
    Py_XDECREF(level);
    Py_XDECREF(parent_labels);
    Py_XDECREF(label);
    Py_XDECREF(next);
    Py_XDECREF(frame);
    return result;
}

/* Mirrors end_jvp_node(frame, node, value, args)'s common case (1, 0, -1 as jvp_begun): the frame innermost, of
   one or two parents:
       frames.pop(); self.top = frames[-1] if frames else None
       nodes.labels[key] = frame.label
       if frame.level != 0 or key in nodes.levels: nodes.levels[key] = frame.level
       if frame.argnums is not UNARY or key in nodes.argnums: nodes.argnums[key] = frame.argnums
       kept = tangent = None                       (capture structure)
       kept = value if type(value) in SCALARS else self.keep(value)        (capture auto)
       tangent = frame.last_kept if frame.sums and frame.position and node.g is frame.last_value \
           else self.keep(node.g)
       write(self.values, JVPNodeCreated, mode="fwd", level=frame.level, query=query and query.number,
             label=frame.label, primitive=frame.name, argnums=frame.argnums, parents=",".join(frame.parents),
             value=kept, tangent=tangent, site=None) */
static int
jvp_ended(PyObject *recorder, PyObject *frame, PyObject *node, PyObject *value)
{
    FrameSlots slots;
    if (!frame_slots(frame, &slots)) {
        return 0;
    }
    PyObject *label = slots.label, *name = slots.name, *level = slots.level, *argnums = slots.argnums,
        *parents = slots.parents;  /* (borrowed from slots) */
    PyObject *values;
    Py_ssize_t limit;
    if (PyTuple_GET_SIZE(parents) < 1 || PyTuple_GET_SIZE(parents) > 2 || !forward_state(recorder, &values, &limit)) {
        frame_slots_clear(&slots);
        return 0;
    }
    int result = 0;
    PyObject *nodes = NULL, *frames = NULL, *labels = NULL, *levels = NULL, *kept_argnums = NULL, *number = NULL,
        *key = NULL, *parent_labels = NULL, *kept = NULL, *tangent = NULL, *g = NULL;
    nodes = field_get(&r_nodes, recorder);
    frames = nodes == NULL ? NULL : field_get(&r_frames, recorder);
    labels = frames == NULL ? NULL : field_get(&t_labels, nodes);
    levels = labels == NULL ? NULL : field_get(&t_levels, nodes);
    kept_argnums = levels == NULL ? NULL : field_get(&t_argnums, nodes);
    number = kept_argnums == NULL ? NULL : query_number_of(recorder);
    if (number == NULL || !PyList_CheckExact(frames) || !PyDict_CheckExact(labels) || !PyDict_Check(levels)
            || !PyDict_Check(kept_argnums)) {
        goto done;
    }
    if (PyTuple_GET_SIZE(parents) == 2) {
        PyObject *a = PyTuple_GET_ITEM(parents, 0), *b = PyTuple_GET_ITEM(parents, 1);
        parent_labels = PyUnicode_CheckExact(a) && PyUnicode_CheckExact(b) ? pair_text(a, b) : NULL;
    } else {
        parent_labels = PyUnicode_CheckExact(PyTuple_GET_ITEM(parents, 0))
            ? Py_NewRef(PyTuple_GET_ITEM(parents, 0)) : NULL;
    }
    if (parent_labels == NULL) {
        goto done;
    }
    if (limit < 0) {  /* capture structure */
        kept = Py_NewRef(Py_None);
        tangent = Py_NewRef(Py_None);
    } else {
        kept = kept_value(value, limit, labels, levels);
        g = kept == NULL ? NULL : field_get(&n_g, node);
        if (g == NULL) {
            goto done;
        }
        PyObject *position = slot_of(&f_position, frame), *last_value = slot_of(&f_last_value, frame),
            *last_kept = slot_of(&f_last_kept, frame);
        if (slot_of(&f_sums, frame) == Py_True && position != NULL && PyLong_CheckExact(position)
                && position != zero && g == last_value && last_kept != NULL) {
            tangent = Py_NewRef(last_kept);  /* sum_outgrads returned it: already a copy */
        } else {
            tangent = kept_value(g, limit, labels, levels);
        }
        if (tangent == NULL) {
            goto done;
        }
    }
    PyObject *head = head_of(&jvp_node_cell, level, number);
    Py_ssize_t n = PyList_GET_SIZE(frames);
    key = head == NULL ? NULL : PyLong_FromVoidPtr(node);
    if (key == NULL || n == 0 || PyList_GET_ITEM(frames, n - 1) != frame) {
        goto done;  /* (a frame not innermost: self.pop(frame), in Python) */
    }
    /* (from here on, as the Python's try: an error goes to recorder.fail) */
    result = 1;
    int failed = PyList_SetSlice(frames, n - 1, n, NULL) < 0
        || field_set(&r_top, recorder, n > 1 ? PyList_GET_ITEM(frames, n - 2) : Py_None) < 0
        || PyDict_SetItem(labels, key, label) < 0;
    if (!failed) {
        int differs = PyObject_RichCompareBool(level, zero, Py_NE);
        int there = differs == 0 ? PyDict_Contains(levels, key) : 0;
        failed = differs < 0 || there < 0 || ((differs || there) && PyDict_SetItem(levels, key, level) < 0);
    }
    if (!failed) {
        int there = argnums == unary ? PyDict_Contains(kept_argnums, key) : 0;
        failed = there < 0 || ((argnums != unary || there) && PyDict_SetItem(kept_argnums, key, argnums) < 0);
    }
    if (!failed) {
        PyObject *row[8] = {head, label, name, argnums, parent_labels, kept, tangent, Py_None};
        failed = append_all(values, row, 8) < 0;
    }
    if (failed) {
        result = structure_failed(recorder) < 0 ? -1 : 1;
    }
done:
    if (result == 0) {
        PyErr_Clear();
    }
    Py_DECREF(values);
    frame_slots_clear(&slots);
    Py_XDECREF(nodes);
    Py_XDECREF(frames);
    Py_XDECREF(labels);
    Py_XDECREF(levels);
    Py_XDECREF(kept_argnums);
    Py_XDECREF(number);
    Py_XDECREF(key);
    Py_XDECREF(parent_labels);
    Py_XDECREF(kept);
    Py_XDECREF(tangent);
    Py_XDECREF(g);
    return result;
}

/* Mirrors before_add_outgrads(prev_g_flagged, g) with a JVPFrame on top under capture auto: a new reference to
   self.keep(prev_g_flagged[0]), or NULL (no error) when the Python callback is to run (nothing done yet) */
static PyObject *
jvp_before_kept(PyObject *recorder, PyObject *prev_g_flagged)
{
    if (!PyTuple_CheckExact(prev_g_flagged) || PyTuple_GET_SIZE(prev_g_flagged) != 2) {
        return NULL;
    }
    PyObject *values;
    Py_ssize_t limit;
    if (!forward_state(recorder, &values, &limit)) {
        return NULL;
    }
    Py_DECREF(values);
    PyObject *labels = limit < 0 ? NULL : field_get(&r_labels, recorder);
    PyObject *levels = labels != NULL && PyDict_CheckExact(labels) ? levels_of(recorder) : NULL;
    PyObject *kept = levels == NULL ? NULL : kept_value(PyTuple_GET_ITEM(prev_g_flagged, 0), limit, labels, levels);
    PyErr_Clear();
    Py_XDECREF(labels);
    Py_XDECREF(levels);
    return kept;
}

/* Mirrors after_add_outgrads(prev_g_flagged, previous, g, result) with a JVPFrame on top, add_in_jvp_node(frame,
   prev_g_flagged, previous, g, result) (1, 0, -1 as jvp_begun):
       value, mutable = result
       position = frame.position
       frame.position = position + 1
       contribution = kept = None                  (capture structure)
       contribution = self.keep(g); kept = contribution if value is g else self.keep(value)    (capture auto)
       frame.last_value, frame.last_kept = value, kept                                          (capture auto)
       write(self.values, AddOutgrads, mode="fwd", level=frame.level, query=query and query.number,
             node=frame.label, position=position, parent=parents[position] if position < len(parents) else None,
             argnum=argnums[position] if position < len(argnums) else None, previous=previous,
             previous_flag=prev_g_flagged[1] if prev_g_flagged else NO_PREVIOUS, contribution=contribution,
             result=kept, result_flag=mutable, replaced=False) */
static int
jvp_add_written(PyObject *recorder, PyObject *frame, PyObject *prev_g_flagged, PyObject *previous, PyObject *g,
                PyObject *sum)
{
    PyObject *previous_flag = previous_flag_of(prev_g_flagged);
    if (previous_flag == NULL) {
        return 0;
    }
    FrameSlots slots;
    if (!PyTuple_CheckExact(sum) || PyTuple_GET_SIZE(sum) != 2 || !frame_slots(frame, &slots)) {
        return 0;
    }
    PyObject *value = PyTuple_GET_ITEM(sum, 0), *mutable = PyTuple_GET_ITEM(sum, 1);
    PyObject *at = slots.at, *label = slots.label, *level = slots.level, *argnums = slots.argnums,
        *parents = slots.parents;  /* (borrowed from slots) */
    Py_ssize_t position = PyLong_AsSsize_t(at);
    PyObject *values;
    Py_ssize_t limit;
    if (position < 0 || !forward_state(recorder, &values, &limit)) {
        PyErr_Clear();
        frame_slots_clear(&slots);
        return 0;
    }
    int result = 0;
    PyObject *number = NULL, *labels = NULL, *levels = NULL, *contribution = NULL, *kept = NULL, *next = NULL;
    number = query_number_of(recorder);
    if (number == NULL) {
        goto done;
    }
    if (limit < 0) {  /* capture structure */
        contribution = Py_NewRef(Py_None);
        kept = Py_NewRef(Py_None);
    } else {
        labels = field_get(&r_labels, recorder);
        levels = labels != NULL && PyDict_CheckExact(labels) ? levels_of(recorder) : NULL;
        contribution = levels == NULL || Py_TYPE(g) == (PyTypeObject *)sparse_type ? NULL
            : kept_value(g, limit, labels, levels);
        kept = contribution == NULL ? NULL : value == g ? Py_NewRef(contribution)
            : kept_value(value, limit, labels, levels);
        if (kept == NULL) {
            goto done;
        }
    }
    PyObject *parent = position < PyTuple_GET_SIZE(parents) ? PyTuple_GET_ITEM(parents, position) : Py_None;
    PyObject *argnum = position < PyTuple_GET_SIZE(argnums) ? PyTuple_GET_ITEM(argnums, position) : Py_None;
    int reference = PySet_Contains(no_reference, (PyObject *)Py_TYPE(kept));
    if (reference < 0) {
        goto done;
    }
    /* the packer's forms, in its order */
    int plain = position == 0 && argnum == zero && previous == Py_None && previous_flag == Py_None
        && mutable == Py_False;
    int first = plain && contribution == Py_None && kept == Py_None;
    int first_kept = !first && plain && kept == contribution && reference;
    PyObject *head = head_of(first ? &jvp_add_first_cell : first_kept ? &jvp_add_kept_first_cell : &jvp_add_cell,
                             level, number);
    next = head == NULL ? NULL : PyLong_FromSsize_t(position + 1);
    if (next == NULL) {
        goto done;
    }
    /* (from here on, as the Python's try: an error goes to recorder.fail) */
    result = 1;
    slot_put(&f_position, frame, next);
    if (limit >= 0) {
        slot_put(&f_last_value, frame, value);
        slot_put(&f_last_kept, frame, kept);
    }
    int failed;
    if (first) {
        PyObject *row[3] = {head, label, parent};
        failed = append_all(values, row, 3) < 0;
    } else if (first_kept) {
        PyObject *row[4] = {head, label, parent, contribution};
        failed = append_all(values, row, 4) < 0;
    } else {
        PyObject *row[11] = {head, label, at, parent, argnum, previous, previous_flag, contribution, kept, mutable,
                             Py_False};
        failed = append_all(values, row, 11) < 0;
    }
    if (failed) {
        result = structure_failed(recorder) < 0 ? -1 : 1;
    }
done:
    if (result == 0) {
        PyErr_Clear();
    }
    Py_DECREF(values);
    frame_slots_clear(&slots);
    Py_XDECREF(number);
    Py_XDECREF(labels);
    Py_XDECREF(levels);
    Py_XDECREF(contribution);
    Py_XDECREF(kept);
    Py_XDECREF(next);
    return result;
}

/* forward(JVPFrame, primitive_jvps, SUMMING_JVP_MAKERS): the frame class forward mode's paths allocate, and what
   they read to tell a summing JVP maker (forward.py, at import) */
static PyObject *
forward_mode(PyObject *module, PyObject *args)
{
    PyObject *type, *jvps, *makers;
    if (!PyArg_UnpackTuple(args, "forward", 3, 3, &type, &jvps, &makers)) {
        return NULL;
    }
    if (!PyType_Check(type) || !PyType_HasFeature((PyTypeObject *)type, Py_TPFLAGS_HEAPTYPE) || !PyDict_Check(jvps)) {
        PyErr_SetString(PyExc_TypeError, "forward() takes the JVPFrame class, primitive_jvps and the makers' codes");
        return NULL;
    }
    PyObject *codes = PySequence_Tuple(makers);
    if (codes == NULL) {
        return NULL;
    }
    Py_XSETREF(jvp_frame_type, (PyTypeObject *)Py_NewRef(type));
    jvp_frame_resolved = jvp_frame_resolve(jvp_frame_type);
    Py_XSETREF(primitive_jvps, Py_NewRef(jvps));
    Py_XSETREF(summing_codes, codes);
    Py_RETURN_NONE;
}

/* structure(Recorder, on_toposort, HEADS, NO_PREVIOUS, UNARY): the recorder class whose structure events the
   wrappers write (recorder.py, at import); HEADS a dict of a type whose __missing__ makes a key its own head
   (eventlog._Heads: head_of does the same without calling it) */
static PyObject *
structure(PyObject *module, PyObject *args)
{
    PyObject *type, *toposort, *heads_given, *no_previous_given, *unary_given;
    if (!PyArg_UnpackTuple(args, "structure", 5, 5, &type, &toposort, &heads_given, &no_previous_given,
                           &unary_given)) {
        return NULL;
    }
    if (!PyType_Check(type) || !PyType_HasFeature((PyTypeObject *)type, Py_TPFLAGS_HEAPTYPE)) {
        PyErr_SetString(PyExc_TypeError, "structure() takes the recorder's class first");
        return NULL;
    }
    Py_XSETREF(recorder_type, (PyTypeObject *)Py_NewRef(type));
    PyObject *names[CALLBACKS] = {on_toposort_name, on_vjp_called, after_add_outgrads, before_add_outgrads,
                                  on_vjp_node_name, begin_jvp_node_name, end_jvp_node_name, add_in_jvp_node_name};
    for (int i = 0; i < CALLBACKS; i++) {
        Py_XSETREF(registered[i], Py_XNewRef(_PyType_Lookup(recorder_type, names[i])));
    }
    Py_XSETREF(toposort_function, Py_NewRef(toposort));
    if (heads != heads_given) {
        heads_generation++;
    }
    Py_XSETREF(heads, Py_NewRef(heads_given));
    /* (a dict subclass with dict's own __getitem__ and __setitem__, and a __missing__: its own, the contract) */
    PyTypeObject *given = Py_TYPE(heads_given);
    int plain_items = PyDict_Check(heads_given) && !PyDict_CheckExact(heads_given)
        && _PyType_Lookup(given, getitem_name) == _PyType_Lookup(&PyDict_Type, getitem_name)
        && _PyType_Lookup(given, setitem_name) == _PyType_Lookup(&PyDict_Type, setitem_name)
        && _PyType_Lookup(given, missing_name) != NULL;
    Py_XSETREF(heads_type, plain_items ? (PyTypeObject *)Py_NewRef(given) : NULL);
    heads_version = plain_items ? version_of(given) : 0;
    Py_XSETREF(no_previous, Py_NewRef(no_previous_given));
    Py_XSETREF(unary, Py_NewRef(unary_given));
    Py_RETURN_NONE;
}

/* auto(SCALARS, NO_REFERENCE, box_types, ndarray, SparseObject, BOXED, ARRAY_SUMMARY, values): what capture auto's
   paths read to keep values as capture.Keeper does (recorder.py, at import) */
static PyObject *
auto_capture(PyObject *module, PyObject *args)
{
    PyObject *given[9];
    if (!PyArg_UnpackTuple(args, "auto", 9, 9, &given[0], &given[1], &given[2], &given[3], &given[4], &given[5],
                           &given[6], &given[7], &given[8])) {
        return NULL;
    }
    if (!PyAnySet_Check(given[0]) || !PyAnySet_Check(given[1]) || !PyAnySet_Check(given[2])
            || !PyType_Check(given[3]) || !PyType_Check(given[4]) || !PyModule_Check(given[8])) {
        PyErr_SetString(PyExc_TypeError, "auto() takes SCALARS, NO_REFERENCE, box_types (sets), ndarray, "
                        "SparseObject (types), BOXED, ARRAY_SUMMARY, CONTAINER_SUMMARY and the values module");
        return NULL;
    }
    PyObject **slots[9] = {&scalars, &no_reference, &box_types, &ndarray_type, &sparse_type, &boxed_tag,
                           &summary_tag, &container_summary_tag, &values_module};
    for (int i = 0; i < 9; i++) {
        Py_XSETREF(*slots[i], Py_NewRef(given[i]));
    }
    auto_ready = 1;
    Py_RETURN_NONE;
}

/* full(ACCUMULATORS, Version, hold): the primitives whose node values capture full's node path leaves to the Python,
   the Version class and copy_on_write.hold (recorder.py, at import) */
static PyObject *
full_capture_registered(PyObject *module, PyObject *args)
{
    PyObject *given[3];
    if (!PyArg_UnpackTuple(args, "full", 3, 3, &given[0], &given[1], &given[2])) {
        return NULL;
    }
    if (!PyAnySet_Check(given[0]) || !PyType_Check(given[1]) || !PyCallable_Check(given[2])) {
        PyErr_SetString(PyExc_TypeError, "full() takes ACCUMULATORS (a set), Version (a type) and hold");
        return NULL;
    }
    Py_XSETREF(accumulators, Py_NewRef(given[0]));
    Py_XSETREF(version_type, Py_NewRef(given[1]));
    Py_XSETREF(hold_function, Py_NewRef(given[2]));
    full_ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"full", full_capture_registered, METH_VARARGS,
     "full(ACCUMULATORS, Version, hold): what the wrappers read to keep capture full's common values by reference "
     "themselves (a node's, as Nodes.keep_node_value; a local VJP's, as on_vjp_called), the primitives whose node "
     "values they leave to the Python, and what notes a value held by reference (copy_on_write)."},
    {"auto", auto_capture, METH_VARARGS,
     "auto(SCALARS, NO_REFERENCE, box_types, ndarray, SparseObject, BOXED, ARRAY_SUMMARY, CONTAINER_SUMMARY, values): what the "
     "wrappers read to keep capture auto's common values themselves (as capture.Keeper)."},
    {"forward", forward_mode, METH_VARARGS,
     "forward(JVPFrame, primitive_jvps, SUMMING_JVP_MAKERS): the frame class and JVP makers forward mode's paths "
     "read to write its common case themselves (begin_jvp_node, end_jvp_node, add_in_jvp_node)."},
    {"structure", structure, METH_VARARGS,
     "structure(Recorder, on_toposort, HEADS, NO_PREVIOUS, UNARY): the recorder class whose capture structure "
     "events the wrappers write themselves (the common case of on_toposort, on_vjp_called, after_add_outgrads)."},
    {NULL},
};

static const char *const VJP_PARAMETERS[] = {"g"};  /* recorded_vjp(node_vjp, g), node_vjp bound */
static const char *const ADD_OUTGRADS_PARAMETERS[] = {"prev_g_flagged", "g"};

/* Mirrors recorded_vjp(node_vjp, g), line by line:
       node_id, vjp, active = node_vjp
       recorder = active.get()
       if recorder is None:
           return vjp(g)
       ingrads = vjp(g)
       if type(ingrads) is not tuple:
           ingrads = tuple(ingrads)
       recorder.on_vjp_called(node_id, g, ingrads)
       return ingrads */
static PyObject *
recorded_vjp_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    RecordedVJP *self = (RecordedVJP *)callable;
    PyObject *g = NULL;
    if (PyVectorcall_NARGS(nargsf) == 1 && kwnames == NULL) {  /* (as autograd calls it) */
        g = args[0];
    } else if (bind_arguments("recorded_vjp", VJP_PARAMETERS, 1, args, nargsf, kwnames, &g) < 0) {
        return NULL;
    }
    PyObject *recorder = NULL;
    if (PyContextVar_Get(self->active, NULL, &recorder) < 0) {
        return NULL;
    }
    if (recorder == NULL || recorder == Py_None) {
        Py_XDECREF(recorder);
        return PyObject_CallOneArg(self->vjp, g);
    }
    PyObject *ingrads = PyObject_CallOneArg(self->vjp, g);
    if (ingrads != NULL && !PyTuple_CheckExact(ingrads)) {  /* a generator (three or more boxed arguments) */
        PyObject *materialised = PySequence_Tuple(ingrads);
        Py_DECREF(ingrads);
        ingrads = materialised;
    }
    if (ingrads == NULL) {
        Py_DECREF(recorder);
        return NULL;
    }
    PyObject *node_id = Py_NewRef(self->key);
    int written = structure_recorder(recorder, on_vjp_called) ? vjp_called_written(recorder, self, g, ingrads) : 0;
    if (written != 0) {  /* (capture structure's common case: the event written here) */
        Py_DECREF(node_id);
        Py_DECREF(recorder);
        if (written < 0) {
            Py_DECREF(ingrads);
            return NULL;
        }
        return ingrads;
    }
    PyObject *call[4] = {recorder, node_id, g, ingrads};
    PyObject *done = PyObject_VectorcallMethod(on_vjp_called, call, 4, NULL);
    Py_DECREF(node_id);
    Py_DECREF(recorder);
    if (done == NULL) {
        Py_DECREF(ingrads);
        return NULL;
    }
    Py_DECREF(done);
    return ingrads;
}

/* RecordedVJP(node_id, vjp, active): node_id is id(node), an int */
static PyObject *
recorded_vjp_make(PyTypeObject *type, PyObject *node_id, PyObject *vjp, PyObject *active)
{
    void *node = PyLong_AsVoidPtr(node_id);
    if (node == NULL && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t value = PyLong_CheckExact(node_id) ? PyLong_AsSsize_t(node_id) : -1;  /* (an id is >= 0) */
    if (value < 0) {
        PyErr_Clear();
    }
    PyObject *key = value >= 0 ? Py_NewRef(node_id) : PyLong_FromVoidPtr(node);
    RecordedVJP *self = key == NULL ? NULL : PyObject_GC_New(RecordedVJP, type);
    if (self == NULL) {
        Py_XDECREF(key);
        return NULL;
    }
    self->key = key;
    self->vjp = Py_NewRef(vjp);
    self->active = Py_NewRef(active);
    self->vectorcall = recorded_vjp_call;
    self->token = self->label = self->level = self->argnums = NULL;  /* (no row: the Python's tables) */
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

/* the type called (once per node): its vectorcall, no argument tuple */
static PyObject *
recorded_vjp_vectornew(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 3 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "RecordedVJP takes three arguments: node_id, vjp, active");
        return NULL;
    }
    return recorded_vjp_make((PyTypeObject *)type, args[0], args[1], args[2]);
}

static PyObject *
recorded_vjp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *node_id, *vjp, *active;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "RecordedVJP takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "RecordedVJP", 3, 3, &node_id, &vjp, &active)) {
        return NULL;
    }
    return recorded_vjp_make(type, node_id, vjp, active);
}

static int
recorded_vjp_traverse(RecordedVJP *self, visitproc visit, void *arg)
{
    Py_VISIT(self->vjp);
    Py_VISIT(self->active);
    return 0;
}

static int
recorded_vjp_clear(RecordedVJP *self)
{
    Py_CLEAR(self->vjp);
    Py_CLEAR(self->active);
    return 0;
}

static void
recorded_vjp_dealloc(RecordedVJP *self)
{
    PyObject_GC_UnTrack(self);
    recorded_vjp_clear(self);
    Py_CLEAR(self->key);  /* (an int: no cycle goes through it, so not cleared by the collector) */
    Py_CLEAR(self->token);  /* (nor through its row: object(), a str, an int, a tuple of ints) */
    Py_CLEAR(self->label);
    Py_CLEAR(self->level);
    Py_CLEAR(self->argnums);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* (read by tests: the id and the vjp it was made with) */
static PyObject *
recorded_vjp_get_node_id(RecordedVJP *self, void *closure)
{
    return Py_NewRef(self->key);
}

static PyObject *
recorded_vjp_get_vjp(RecordedVJP *self, void *closure)
{
    return Py_NewRef(self->vjp ? self->vjp : Py_None);
}

static PyGetSetDef recorded_vjp_getset[] = {
    {"node_id", (getter)recorded_vjp_get_node_id, NULL, "id(node) of the node whose vjp this is", NULL},
    {"vjp", (getter)recorded_vjp_get_vjp, NULL, "the node's own vjp", NULL},
    {NULL},
};

static PyTypeObject RecordedVJPType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.autograd._wrappers.RecordedVJP",
    .tp_basicsize = sizeof(RecordedVJP),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "RecordedVJP(node_id, vjp, active): wrappers.recorded_vjp bound to (node_id, vjp, active).",
    .tp_new = recorded_vjp_new,
    .tp_vectorcall = recorded_vjp_vectornew,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(RecordedVJP, vectorcall),
    .tp_traverse = (traverseproc)recorded_vjp_traverse,
    .tp_clear = (inquiry)recorded_vjp_clear,
    .tp_dealloc = (destructor)recorded_vjp_dealloc,
    .tp_getset = recorded_vjp_getset,
};

/* -------------------- NodeInit: wrap_vjp_node_init's __init__ -------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *original;  /* autograd's VJPNode.__init__ */
    PyObject *active;    /* the installation's context variable */
    PyObject *python;    /* the pure-Python wrapper: called for a call autograd does not make (keywords) */
    PyObject *dict;      /* functools.wraps's attributes, and the hook's mark (__adtrace_hook__) */
    vectorcallfunc vectorcall;
} NodeInit;

static PyObject *on_vjp_node, *vjp_name;

/* Mirrors wrap_vjp_node_init's __init__(self, value, fun, args, kwargs, parent_argnums, parents) (called
   unbound, self first: the type is a method descriptor), line by line:
       original(self, value, fun, args, kwargs, parent_argnums, parents)
       recorder = active.get()
       if recorder is not None:
           recorder.on_vjp_node(self, value, fun, args, kwargs, parent_argnums, parents)
           self.vjp = RecordedVJP(id(self), self.vjp, active) */
static PyObject *
node_init_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    NodeInit *wrapper = (NodeInit *)callable;
    if (PyVectorcall_NARGS(nargsf) != 7 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        return PyObject_Vectorcall(wrapper->python, args, nargsf, kwnames);
    }
    PyObject *done = PyObject_Vectorcall(wrapper->original, args, 7, NULL);
    if (done == NULL) {
        return NULL;
    }
    Py_DECREF(done);
    PyObject *recorder = NULL;
    if (PyContextVar_Get(wrapper->active, NULL, &recorder) < 0) {
        return NULL;
    }
    if (recorder == NULL || recorder == Py_None) {
        Py_XDECREF(recorder);
        Py_RETURN_NONE;
    }
    PyObject *self = args[0];
    PyObject *key = PyLong_FromVoidPtr(self);  /* id(self): its entries' key, kept by its RecordedVJP */
    if (key == NULL) {
        Py_DECREF(recorder);
        return NULL;
    }
    PyObject *row[4] = {NULL, NULL, NULL, NULL};  /* (the node's row where the C writes it: token, label, level, argnums) */
    int written = structure_recorder(recorder, on_vjp_node_name)
        ? vjp_node_written(recorder, self, key, args[1], args[2], args[3], args[5], args[6], row) : 0;
    if (written == 0) {
        PyObject *call[8] = {recorder, self, args[1], args[2], args[3], args[4], args[5], args[6]};
        done = PyObject_VectorcallMethod(on_vjp_node, call, 8, NULL);
    } else {  /* (capture structure's common case: the event written here) */
        done = written < 0 ? NULL : Py_NewRef(Py_None);
    }
    Py_DECREF(recorder);
    PyObject *vjp = done == NULL ? NULL : field_get(&n_vjp, self);
    Py_XDECREF(done);
    RecordedVJP *recorded = vjp == NULL ? NULL : PyObject_GC_New(RecordedVJP, &RecordedVJPType);
    if (recorded == NULL) {
        Py_DECREF(key);
        Py_XDECREF(vjp);
        for (int i = 0; i < 4; i++) {
            Py_XDECREF(row[i]);
        }
        return NULL;
    }
    recorded->key = key;
    recorded->vjp = vjp;
    recorded->active = Py_NewRef(wrapper->active);
    recorded->vectorcall = recorded_vjp_call;
    recorded->token = row[0], recorded->label = row[1], recorded->level = row[2], recorded->argnums = row[3];
    PyObject_GC_Track(recorded);
    int failed = field_set(&n_vjp, self, (PyObject *)recorded);
    Py_DECREF(recorded);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* NodeInit(original, active, python) */
static PyObject *
node_init_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *original, *active, *python;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "NodeInit takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "NodeInit", 3, 3, &original, &active, &python)) {
        return NULL;
    }
    NodeInit *self = PyObject_GC_New(NodeInit, type);
    if (self == NULL) {
        return NULL;
    }
    self->original = Py_NewRef(original);
    self->active = Py_NewRef(active);
    self->python = Py_NewRef(python);
    self->dict = NULL;
    self->vectorcall = node_init_call;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

/* read as VJPNode.__init__ on a node: bound to it, as a function is (the interpreter's own calls of __init__
   skip the binding: the type is a method descriptor) */
static PyObject *
node_init_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

static int
node_init_traverse(NodeInit *self, visitproc visit, void *arg)
{
    Py_VISIT(self->original);
    Py_VISIT(self->active);
    Py_VISIT(self->python);
    Py_VISIT(self->dict);
    return 0;
}

static int
node_init_clear(NodeInit *self)
{
    Py_CLEAR(self->original);
    Py_CLEAR(self->active);
    Py_CLEAR(self->python);
    Py_CLEAR(self->dict);
    return 0;
}

static void
node_init_dealloc(NodeInit *self)
{
    PyObject_GC_UnTrack(self);
    node_init_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyGetSetDef node_init_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

/* the type of a wrapper put at a node class's __init__ (NodeInit, JVPNodeInit: the same object, another call) */
#define NODE_INIT_TYPE(NAME, DOC, NEW) {                                                                       \
    PyVarObject_HEAD_INIT(NULL, 0)                                                                             \
    .tp_name = "adtrace.recording.autograd._wrappers." NAME,                                                   \
    .tp_basicsize = sizeof(NodeInit),                                                                          \
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR, \
    .tp_doc = DOC,                                                                                             \
    .tp_new = NEW,                                                                                             \
    .tp_call = PyVectorcall_Call,                                                                              \
    .tp_descr_get = node_init_get,                                                                             \
    .tp_vectorcall_offset = offsetof(NodeInit, vectorcall),                                                    \
    .tp_dictoffset = offsetof(NodeInit, dict),                                                                 \
    .tp_getattro = PyObject_GenericGetAttr,                                                                    \
    .tp_setattro = PyObject_GenericSetAttr,                                                                    \
    .tp_traverse = (traverseproc)node_init_traverse,                                                           \
    .tp_clear = (inquiry)node_init_clear,                                                                      \
    .tp_dealloc = (destructor)node_init_dealloc,                                                               \
    .tp_getset = node_init_getset,                                                                             \
}

static PyTypeObject NodeInitType = NODE_INIT_TYPE(
    "NodeInit", "NodeInit(original, active, python): wrappers.wrap_vjp_node_init(original, active)'s __init__.",
    node_init_new);

/* -------------------- JVPNodeInit: wrap_jvp_node_init's __init__ -------------------- */

/* Mirrors wrap_jvp_node_init's __init__(self, value, fun, args, kwargs, parent_argnums, parents) (called unbound,
   self first, as NodeInit), line by line, its callbacks' common case written here (jvp_begun, jvp_ended):
       recorder = active.get()
       if recorder is None:
           return original(self, value, fun, args, kwargs, parent_argnums, parents)
       frame = recorder.begin_jvp_node(fun, parent_argnums, parents)
       try:
           original(self, value, fun, args, kwargs, parent_argnums, parents)
       except BaseException:
           recorder.abort_jvp_node(frame)
           raise
       recorder.end_jvp_node(frame, self, value, args) */
static PyObject *
jvp_node_init_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    NodeInit *wrapper = (NodeInit *)callable;
    if (PyVectorcall_NARGS(nargsf) != 7 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        return PyObject_Vectorcall(wrapper->python, args, nargsf, kwnames);
    }
    PyObject *recorder = NULL;
    if (PyContextVar_Get(wrapper->active, NULL, &recorder) < 0) {
        return NULL;
    }
    if (recorder == NULL || recorder == Py_None) {
        Py_XDECREF(recorder);
        return PyObject_Vectorcall(wrapper->original, args, 7, NULL);
    }
    PyObject *frame = NULL;
    int begun = structure_recorder(recorder, begin_jvp_node_name)
        ? jvp_begun(recorder, args[2], args[5], args[6], &frame) : 0;
    if (begun == 0) {
        PyObject *call[4] = {recorder, args[2], args[5], args[6]};
        frame = PyObject_VectorcallMethod(begin_jvp_node_name, call, 4, NULL);
    }
    if (frame == NULL) {
        Py_DECREF(recorder);
        return NULL;
    }
    PyObject *done = PyObject_Vectorcall(wrapper->original, args, 7, NULL);
    if (done == NULL) {  /* recorder.abort_jvp_node(frame), then the error raised again */
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyObject *call[2] = {recorder, frame};
        PyObject *aborted = PyObject_VectorcallMethod(abort_jvp_node_name, call, 2, NULL);
        if (aborted == NULL) {  /* (its own error raised instead) */
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(traceback);
        } else {
            Py_DECREF(aborted);
            PyErr_Restore(type, value, traceback);
        }
        Py_DECREF(frame);
        Py_DECREF(recorder);
        return NULL;
    }
    Py_DECREF(done);
    int ended = structure_recorder(recorder, end_jvp_node_name) ? jvp_ended(recorder, frame, args[0], args[1]) : 0;
    if (ended == 0) {
        PyObject *call[5] = {recorder, frame, args[0], args[1], args[3]};
        done = PyObject_VectorcallMethod(end_jvp_node_name, call, 5, NULL);
    } else {
        done = ended < 0 ? NULL : Py_NewRef(Py_None);
    }
    Py_DECREF(frame);
    Py_DECREF(recorder);
    if (done == NULL) {
        return NULL;
    }
    Py_DECREF(done);
    Py_RETURN_NONE;
}

/* JVPNodeInit(original, active, python) */
static PyObject *
jvp_node_init_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    NodeInit *self = (NodeInit *)node_init_new(type, args, kwargs);
    if (self != NULL) {
        self->vectorcall = jvp_node_init_call;
    }
    return (PyObject *)self;
}

static PyTypeObject JVPNodeInitType = NODE_INIT_TYPE(
    "JVPNodeInit", "JVPNodeInit(original, active, python): wrappers.wrap_jvp_node_init(original, active)'s __init__.",
    jvp_node_init_new);

/* -------------------- AddOutgrads: wrap_add_outgrads's add_outgrads -------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *original;  /* autograd's add_outgrads */
    PyObject *active;    /* the installation's context variable */
    PyObject *dict;      /* functools.wraps's attributes, and the hook's mark (__adtrace_hook__) */
    vectorcallfunc vectorcall;
} AddOutgrads;

static PyObject *keeps_values_name;

/* Mirrors wrap_add_outgrads's add_outgrads(prev_g_flagged, g), line by line:
       recorder = active.get()
       if recorder is None:
           return original(prev_g_flagged, g)
       previous = recorder.before_add_outgrads(prev_g_flagged, g) if prev_g_flagged and recorder.keeps_values \
           else None
       result = original(prev_g_flagged, g)
       recorder.after_add_outgrads(prev_g_flagged, previous, g, result)
       return result */
static PyObject *
add_outgrads_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    AddOutgrads *self = (AddOutgrads *)callable;
    PyObject *given[2];
    if (PyVectorcall_NARGS(nargsf) == 2 && kwnames == NULL) {  /* (as autograd calls it) */
        given[0] = args[0], given[1] = args[1];
    } else if (bind_arguments("add_outgrads", ADD_OUTGRADS_PARAMETERS, 2, args, nargsf, kwnames, given) < 0) {
        return NULL;
    }
    args = given;
    PyObject *recorder = NULL;
    if (PyContextVar_Get(self->active, NULL, &recorder) < 0) {
        return NULL;
    }
    if (recorder == NULL || recorder == Py_None) {
        Py_XDECREF(recorder);
        return PyObject_Vectorcall(self->original, args, 2, NULL);
    }
    PyObject *prev_g_flagged = args[0], *g = args[1];
    PyObject *previous = NULL;
    int wanted = PyObject_IsTrue(prev_g_flagged);
    if (wanted > 0) {
        PyObject *keeps = field_get(&r_keeps_values, recorder);
        wanted = keeps == NULL ? -1 : PyObject_IsTrue(keeps);
        Py_XDECREF(keeps);
    }
    if (wanted < 0) {
        Py_DECREF(recorder);
        return NULL;
    }
    if (wanted) {
        PyObject *top = structure_recorder(recorder, before_add_outgrads) ? field_get(&r_top, recorder) : NULL;
        if (top == NULL) {
            PyErr_Clear();
        } else if (Py_TYPE(top) == jvp_frame_type) {  /* forward mode: a JVPNode under construction */
            previous = jvp_before_kept(recorder, prev_g_flagged);
        } else {
            previous = before_kept(recorder, prev_g_flagged);
        }
        Py_XDECREF(top);
        if (previous == NULL) {  /* (capture auto's common case: kept in before_kept) */
            PyObject *call[3] = {recorder, prev_g_flagged, g};
            previous = PyObject_VectorcallMethod(before_add_outgrads, call, 3, NULL);
        }
        if (previous == NULL) {
            Py_DECREF(recorder);
            return NULL;
        }
    } else {
        previous = Py_NewRef(Py_None);
    }
    PyObject *result = PyObject_Vectorcall(self->original, args, 2, NULL);
    int written = 0;
    if (result != NULL && structure_recorder(recorder, after_add_outgrads)) {
        PyObject *top = field_get(&r_top, recorder);
        if (top == NULL) {
            PyErr_Clear();
        } else if (Py_TYPE(top) != jvp_frame_type) {
            written = add_outgrads_written(recorder, prev_g_flagged, previous, g, result);
        } else if (structure_recorder(recorder, add_in_jvp_node_name)) {  /* forward mode: add_in_jvp_node's */
            written = jvp_add_written(recorder, top, prev_g_flagged, previous, g, result);
        }
        Py_XDECREF(top);
    }
    if (written < 0) {
        Py_CLEAR(result);
    }
    if (result != NULL && written == 0) {
        PyObject *call[5] = {recorder, prev_g_flagged, previous, g, result};
        PyObject *done = PyObject_VectorcallMethod(after_add_outgrads, call, 5, NULL);
        if (done == NULL) {
            Py_CLEAR(result);
        }
        Py_XDECREF(done);
    }
    Py_DECREF(previous);
    Py_DECREF(recorder);
    return result;
}

/* AddOutgrads(original, active) */
static PyObject *
add_outgrads_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *original, *active;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "AddOutgrads takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "AddOutgrads", 2, 2, &original, &active)) {
        return NULL;
    }
    AddOutgrads *self = PyObject_GC_New(AddOutgrads, type);
    if (self == NULL) {
        return NULL;
    }
    self->original = Py_NewRef(original);
    self->active = Py_NewRef(active);
    self->dict = NULL;
    self->vectorcall = add_outgrads_call;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static int
add_outgrads_traverse(AddOutgrads *self, visitproc visit, void *arg)
{
    Py_VISIT(self->original);
    Py_VISIT(self->active);
    Py_VISIT(self->dict);
    return 0;
}

static int
add_outgrads_clear(AddOutgrads *self)
{
    Py_CLEAR(self->original);
    Py_CLEAR(self->active);
    Py_CLEAR(self->dict);
    return 0;
}

static void
add_outgrads_dealloc(AddOutgrads *self)
{
    PyObject_GC_UnTrack(self);
    add_outgrads_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyGetSetDef add_outgrads_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyTypeObject AddOutgradsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.autograd._wrappers.AddOutgrads",
    .tp_basicsize = sizeof(AddOutgrads),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "AddOutgrads(original, active): wrappers.wrap_add_outgrads(original, active)'s add_outgrads.",
    .tp_new = add_outgrads_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(AddOutgrads, vectorcall),
    .tp_dictoffset = offsetof(AddOutgrads, dict),
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_traverse = (traverseproc)add_outgrads_traverse,
    .tp_clear = (inquiry)add_outgrads_clear,
    .tp_dealloc = (destructor)add_outgrads_dealloc,
    .tp_getset = add_outgrads_getset,
};

/* -------------------- Visits: wrappers._visits -------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *nodes;        /* iter(toposort's nodes) */
    PyObject *on_toposort;  /* the recorder's callback */
} Visits;

/* Mirrors _visits(nodes, on_toposort):
       for node in nodes:
           on_toposort(node)
           yield node */
static PyObject *
visits_next(Visits *self)
{
    PyObject *node = PyIter_Next(self->nodes);
    if (node == NULL) {
        return NULL;  /* exhausted (no error set), or the error of toposort */
    }
    PyObject *on_toposort = self->on_toposort;
    if (PyMethod_Check(on_toposort) && PyMethod_GET_FUNCTION(on_toposort) == toposort_function
            && structure_recorder(PyMethod_GET_SELF(on_toposort), on_toposort_name)) {
        int written = toposort_written(PyMethod_GET_SELF(on_toposort), node);
        if (written != 0) {  /* (capture structure's common case: the event written here) */
            if (written < 0) {
                Py_CLEAR(node);
            }
            return node;
        }
    }
    PyObject *done = PyObject_CallOneArg(on_toposort, node);
    if (done == NULL) {
        Py_DECREF(node);
        return NULL;
    }
    Py_DECREF(done);
    return node;
}

/* Visits(nodes, on_toposort) */
static PyObject *
visits_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *nodes, *on_toposort;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Visits takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "Visits", 2, 2, &nodes, &on_toposort)) {
        return NULL;
    }
    PyObject *iterator = PyObject_GetIter(nodes);
    if (iterator == NULL) {
        return NULL;
    }
    Visits *self = PyObject_GC_New(Visits, type);
    if (self == NULL) {
        Py_DECREF(iterator);
        return NULL;
    }
    self->nodes = iterator;
    self->on_toposort = Py_NewRef(on_toposort);
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static int
visits_traverse(Visits *self, visitproc visit, void *arg)
{
    Py_VISIT(self->nodes);
    Py_VISIT(self->on_toposort);
    return 0;
}

static int
visits_clear(Visits *self)
{
    Py_CLEAR(self->nodes);
    Py_CLEAR(self->on_toposort);
    return 0;
}

static void
visits_dealloc(Visits *self)
{
    PyObject_GC_UnTrack(self);
    visits_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject VisitsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.autograd._wrappers.Visits",
    .tp_basicsize = sizeof(Visits),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Visits(nodes, on_toposort): wrappers._visits(nodes, on_toposort).",
    .tp_new = visits_new,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)visits_next,
    .tp_traverse = (traverseproc)visits_traverse,
    .tp_clear = (inquiry)visits_clear,
    .tp_dealloc = (destructor)visits_dealloc,
};

/* -------------------- the module -------------------- */

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wrappers", NULL, -1, module_methods};

static int
add_type(PyObject *m, const char *name, PyTypeObject *type)
{
    if (PyType_Ready(type) < 0) {
        return -1;
    }
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC
PyInit__wrappers(void)
{
    on_vjp_called = PyUnicode_InternFromString("on_vjp_called");
    before_add_outgrads = PyUnicode_InternFromString("before_add_outgrads");
    after_add_outgrads = PyUnicode_InternFromString("after_add_outgrads");
    keeps_values_name = PyUnicode_InternFromString("keeps_values");
    on_vjp_node = PyUnicode_InternFromString("on_vjp_node");
    vjp_name = PyUnicode_InternFromString("vjp");
    live_name = PyUnicode_InternFromString("live");
    keeps_name = PyUnicode_InternFromString("keeps_values");
    query_name = PyUnicode_InternFromString("query");
    top_name = PyUnicode_InternFromString("top");
    labels_name = PyUnicode_InternFromString("labels");
    values_name = PyUnicode_InternFromString("values");
    nodes_name = PyUnicode_InternFromString("nodes");
    argnums_name = PyUnicode_InternFromString("argnums");
    level_name = PyUnicode_InternFromString("level");
    number_name = PyUnicode_InternFromString("number");
    label_name = PyUnicode_InternFromString("label");
    parents_name = PyUnicode_InternFromString("parents");
    position_name = PyUnicode_InternFromString("position");
    fail_name = PyUnicode_InternFromString("fail");
    on_toposort_name = PyUnicode_InternFromString("on_toposort");
    getitem_name = PyUnicode_InternFromString("__getitem__");
    setitem_name = PyUnicode_InternFromString("__setitem__");
    missing_name = PyUnicode_InternFromString("__missing__");
    if (!getitem_name || !setitem_name || !missing_name) {
        return NULL;
    }
    keep_sites_name = PyUnicode_InternFromString("keep_sites");
    made_name = PyUnicode_InternFromString("made");
    names_name = PyUnicode_InternFromString("names");
    distinct_name = PyUnicode_InternFromString("distinct_argnums");
    levels_name = PyUnicode_InternFromString("levels");
    on_vjp_node_name = PyUnicode_InternFromString("on_vjp_node");
    if (!keep_sites_name || !made_name || !names_name || !distinct_name || !levels_name || !on_vjp_node_name) {
        return NULL;
    }
    copy_name = PyUnicode_InternFromString("copy");
    size_name = PyUnicode_InternFromString("size");
    twin_name = PyUnicode_InternFromString("_twin");
    float64_summary_name = PyUnicode_InternFromString("float64_summary");
    value_name = PyUnicode_InternFromString("_value");
    node_name = PyUnicode_InternFromString("_node");
    entries_name = PyUnicode_InternFromString("entries");
    popped_name = PyUnicode_InternFromString("popped");
    ingrads_name = PyUnicode_InternFromString("ingrads");
    kept_ingrads_name = PyUnicode_InternFromString("kept_ingrads");
    by_reference_name = PyUnicode_InternFromString("by_reference");
    inline_size_name = PyUnicode_InternFromString("inline_size");
    keep_name = PyUnicode_InternFromString("keep");
    if (!keep_name || !copy_name || !size_name || !twin_name || !float64_summary_name || !value_name || !node_name
            || !entries_name || !popped_name || !ingrads_name || !kept_ingrads_name || !by_reference_name
            || !inline_size_name) {
        return NULL;
    }
    q_entries.name = entries_name;
    q_popped.name = popped_name;
    q_ingrads.name = ingrads_name;
    q_kept_ingrads.name = kept_ingrads_name;
    b_value.name = value_name;
    b_node.name = node_name;
    r_by_reference.name = by_reference_name;
    base_name = PyUnicode_InternFromString("base");
    keeper_name = PyUnicode_InternFromString("keeper");
    protected_name = PyUnicode_InternFromString("protected");
    copy_on_write_name = PyUnicode_InternFromString("copy_on_write");
    owned_name = PyUnicode_InternFromString("owned");
    trace_holders_name = PyUnicode_InternFromString("trace_holders");
    held_name = PyUnicode_InternFromString("held");
    version_name = PyUnicode_InternFromString("version");
    share_name = PyUnicode_InternFromString("share");
    if (!version_name || !share_name || !base_name || !keeper_name || !protected_name || !copy_on_write_name || !owned_name || !trace_holders_name
            || !held_name) {
        return NULL;
    }
    q_held.name = held_name;
    r_keeper.name = keeper_name;
    k_protected.name = protected_name;
    r_copy_on_write.name = copy_on_write_name;
    c_owned.name = owned_name;
    r_trace_holders.name = trace_holders_name;
    r_inline_size.name = inline_size_name;
    r_keep.name = keep_name;
    n_parents.name = parents_name;
    n_vjp.name = vjp_name;
    q_argnums.name = argnums_name;
    q_label.name = label_name;
    q_level.name = level_name;
    q_number.name = number_name;
    q_parents.name = parents_name;
    q_position.name = position_name;
    r_keep_sites.name = keep_sites_name;
    r_keeps.name = keeps_name;
    r_keeps_values.name = keeps_values_name;
    r_labels.name = labels_name;
    r_live.name = live_name;
    r_nodes.name = nodes_name;
    r_query.name = query_name;
    r_top.name = top_name;
    r_values.name = values_name;
    t_argnums.name = argnums_name;
    t_distinct.name = distinct_name;
    t_labels.name = labels_name;
    t_levels.name = levels_name;
    t_made.name = made_name;
    t_names.name = names_name;
    t_token.name = PyUnicode_InternFromString("token");
    if (t_token.name == NULL) {
        return NULL;
    }
    rev = PyUnicode_InternFromString("rev");
    zero = PyLong_FromLong(0);
    if (!live_name || !keeps_name || !query_name || !top_name || !labels_name || !values_name || !nodes_name
            || !argnums_name || !level_name || !number_name || !label_name || !parents_name || !position_name
            || !fail_name || !on_toposort_name || !rev || !zero) {
        return NULL;
    }
    if (!on_vjp_called || !before_add_outgrads || !after_add_outgrads || !keeps_values_name || !on_vjp_node
            || !vjp_name) {
        return NULL;
    }
    begin_jvp_node_name = PyUnicode_InternFromString("begin_jvp_node");
    end_jvp_node_name = PyUnicode_InternFromString("end_jvp_node");
    abort_jvp_node_name = PyUnicode_InternFromString("abort_jvp_node");
    add_in_jvp_node_name = PyUnicode_InternFromString("add_in_jvp_node");
    frames_name = PyUnicode_InternFromString("frames");
    fun_name = PyUnicode_InternFromString("fun");
    name_name = PyUnicode_InternFromString("name");
    sums_name = PyUnicode_InternFromString("sums");
    last_value_name = PyUnicode_InternFromString("last_value");
    last_kept_name = PyUnicode_InternFromString("last_kept");
    g_name = PyUnicode_InternFromString("g");
    fwd = PyUnicode_InternFromString("fwd");
    if (!begin_jvp_node_name || !end_jvp_node_name || !abort_jvp_node_name || !add_in_jvp_node_name || !frames_name
            || !fun_name || !name_name || !sums_name || !last_value_name || !last_kept_name || !g_name || !fwd) {
        return NULL;
    }
    r_frames.name = frames_name;
    f_fun.name = fun_name;
    f_label.name = label_name;
    f_name.name = name_name;
    f_level.name = level_name;
    f_argnums.name = argnums_name;
    f_parents.name = parents_name;
    f_position.name = position_name;
    f_sums.name = sums_name;
    f_last_value.name = last_value_name;
    f_last_kept.name = last_kept_name;
    n_g.name = g_name;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (add_type(m, "RecordedVJP", &RecordedVJPType) < 0 || add_type(m, "AddOutgrads", &AddOutgradsType) < 0
            || add_type(m, "Visits", &VisitsType) < 0 || add_type(m, "NodeInit", &NodeInitType) < 0
            || add_type(m, "JVPNodeInit", &JVPNodeInitType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
