/* The compiled twin of hooks.py (adtrace/recording/compiled.py): the two hooks run once per value.

   InitHook            mirrors the ``__init__`` wrapper made by ``ClassHooks._wrap_init`` (once per value made)
   LocalBackwardRunner mirrors ``ClassHooks.run_local_backward``       (once per ``_backward`` visited)

   hooks.py stays the reference. Each C function below says which Python lines it does; a case the C
   does not handle (children not given as a tuple, too few arguments) is handed to the Python code,
   which does it all. Only documented C API of Python 3.10-3.13. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>  /* offsetof */
#include <structmember.h>
#include "_state.h"

static PyObject *s_state, *s_quiet, *s_frames, *s_addition, *s_in_place, *s_node_created,
    *s_local_backward_started, *s_local_backward_ended, *s_dict, *s_read, *s_handed, *s_node, *s_children,
    *s_unwritten, *s_took, *s_owner, *s_state_key, *s_empty, *s_empty_tuple;

static SlottedKind Slotted;  /* tracked.py's TrackedFloat (bind_tracked): its _owner and _state slots */
static PyObject **int_pool;  /* _descriptors.c's pool of tracked ints 0 (bind_pool), or NULL */

static int int_pooled(PyObject *value) {
    for (int i = 0; int_pool != NULL && i < POOL; i++)
        if (int_pool[i] == value) return 1;
    return 0;
}

/* ---- ThreadState: hooks._ThreadState, its fields in C (read and written directly by this module and
   _descriptors.c; from Python, the same attributes) ---- */

static PyTypeObject ThreadStateType;

#define IS_STATE(state) (Py_TYPE(state) == &ThreadStateType)

static int state_init(ThreadStateObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"written", NULL};
    PyObject *written;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:ThreadState", names, &written)) return -1;
    PyObject *ends = PyList_New(0), *bare = PyList_New(0), *edge_visits = PyList_New(0), *frames = PyList_New(0);
    if (ends == NULL || bare == NULL || edge_visits == NULL || frames == NULL) {
        Py_XDECREF(ends); Py_XDECREF(bare); Py_XDECREF(edge_visits); Py_XDECREF(frames);
        return -1;
    }
    Py_XSETREF(self->written, Py_NewRef(written));
    Py_XSETREF(self->in_place, Py_NewRef(Py_None));
    Py_XSETREF(self->ends, ends);
    Py_XSETREF(self->bare, bare);
    Py_XSETREF(self->edge_visits, edge_visits);
    Py_XSETREF(self->frames, frames);
    Py_XSETREF(self->addition, Py_NewRef(Py_None));
    self->quiet = 0;
    return 0;
}

static PyObject *state_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    ThreadStateObject *self = (ThreadStateObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    PyObject **fields[] = {&self->written, &self->in_place, &self->ends, &self->bare, &self->edge_visits,
                           &self->frames, &self->addition};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) *fields[i] = Py_NewRef(Py_None);
    return (PyObject *)self;
}

static int state_traverse(ThreadStateObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->written); Py_VISIT(self->in_place); Py_VISIT(self->ends); Py_VISIT(self->bare);
    Py_VISIT(self->edge_visits); Py_VISIT(self->frames); Py_VISIT(self->addition);
    return 0;
}

static int state_clear(ThreadStateObject *self) {
    Py_CLEAR(self->written); Py_CLEAR(self->in_place); Py_CLEAR(self->ends); Py_CLEAR(self->bare);
    Py_CLEAR(self->edge_visits); Py_CLEAR(self->frames); Py_CLEAR(self->addition);
    return 0;
}

static void state_dealloc(ThreadStateObject *self) {
    PyObject_GC_UnTrack(self);
    state_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* a field set to NULL (del state.x, or cleared by the collector) reads as AttributeError: T_OBJECT_EX */
static PyMemberDef state_members[] = {
    {"written", T_OBJECT_EX, offsetof(ThreadStateObject, written), 0, NULL},
    {"in_place", T_OBJECT_EX, offsetof(ThreadStateObject, in_place), 0, NULL},
    {"ends", T_OBJECT_EX, offsetof(ThreadStateObject, ends), READONLY, NULL},
    {"bare", T_OBJECT_EX, offsetof(ThreadStateObject, bare), READONLY, NULL},
    {"edge_visits", T_OBJECT_EX, offsetof(ThreadStateObject, edge_visits), READONLY, NULL},
    {"frames", T_OBJECT_EX, offsetof(ThreadStateObject, frames), READONLY, NULL},
    {"addition", T_OBJECT_EX, offsetof(ThreadStateObject, addition), 0, NULL},
    {"quiet", T_PYSSIZET, offsetof(ThreadStateObject, quiet), 0, NULL},
    {NULL},
};

static PyTypeObject ThreadStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._hooks.ThreadState",
    .tp_doc = "hooks._ThreadState, compiled: its fields read and written directly by the compiled hooks.",
    .tp_basicsize = sizeof(ThreadStateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = state_new,
    .tp_init = (initproc)state_init,
    .tp_dealloc = (destructor)state_dealloc,
    .tp_traverse = (traverseproc)state_traverse,
    .tp_clear = (inquiry)state_clear,
    .tp_members = state_members,
};

/* ---- Frame: hooks._Frame's fields in C (hooks.py's _Frame subclasses it with __slots__ = () and the reference's
   methods when the twin is built; its fields read and written directly here and by _descriptors.c) ---- */

static PyTypeObject FrameType;

/* (hooks._Frame is a direct subclass: its base compared first, no walk of the MRO) */
#define IS_FRAME(frame) (Py_TYPE(frame)->tp_base == &FrameType || PyObject_TypeCheck(frame, &FrameType))

static int frame_traverse(FrameObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->node); Py_VISIT(self->children); Py_VISIT(self->unwritten); Py_VISIT(self->read);
    Py_VISIT(self->handed);
    return 0;
}

static int frame_clear(FrameObject *self) {
    Py_CLEAR(self->node); Py_CLEAR(self->children); Py_CLEAR(self->unwritten); Py_CLEAR(self->read);
    Py_CLEAR(self->handed);
    return 0;
}

static void frame_dealloc(FrameObject *self) {
    PyObject_GC_UnTrack(self);
    frame_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* as a slot's: unset (NULL) reads as AttributeError */
static PyMemberDef frame_members[] = {
    {"node", T_OBJECT_EX, offsetof(FrameObject, node), 0, NULL},
    {"children", T_OBJECT_EX, offsetof(FrameObject, children), 0, NULL},
    {"unwritten", T_OBJECT_EX, offsetof(FrameObject, unwritten), 0, NULL},
    {"read", T_OBJECT_EX, offsetof(FrameObject, read), 0, NULL},
    {"handed", T_OBJECT_EX, offsetof(FrameObject, handed), 0, NULL},
    {NULL},
};

static PyTypeObject FrameType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._hooks.Frame",
    .tp_doc = "hooks._Frame's fields, compiled (its methods and __init__ the reference's, in hooks.py's subclass).",
    .tp_basicsize = sizeof(FrameObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)frame_dealloc,
    .tp_traverse = (traverseproc)frame_traverse,
    .tp_clear = (inquiry)frame_clear,
    .tp_members = frame_members,
};

/* ``state.<field> = value`` (the compiled state's field directly) */
static int set_field(PyObject *state, PyObject *name, PyObject **field, PyObject *value) {
    if (IS_STATE(state)) {
        state_set(state, field, value);
        return 0;
    }
    return PyObject_SetAttr(state, name, value);
}

/* ``state.addition = state.in_place = None`` */
static int clear_addition(PyObject *state) {
    return set_field(state, s_addition, IS_STATE(state) ? &STATE_FIELD(state, addition) : NULL, Py_None) < 0
        || set_field(state, s_in_place, IS_STATE(state) ? &STATE_FIELD(state, in_place) : NULL, Py_None) < 0 ? -1 : 0;
}

/* ---- shared helpers ---- */

/* ``hooks.local.state`` (a new reference) */
static PyObject *thread_state(PyObject *local) { return PyObject_GetAttr(local, s_state); }

/* ``hooks.local.state`` kept from the last read in the same thread (``cached``, ``thread``): hooks._PerThread makes
   a thread's state once and never replaces it, and a Python thread state's unique id is never reused (a
   threading.local's attribute costs ~500 instructions) */
static PyObject *cached_state(PyObject *local, PyObject **cached, uint64_t *thread) {
    uint64_t id = PyThreadState_GetID(PyThreadState_Get());
    if (*cached != NULL && *thread == id) return Py_NewRef(*cached);
    PyObject *state = thread_state(local);
    if (state == NULL) return NULL;
    Py_XSETREF(*cached, Py_NewRef(state));
    *thread = id;
    return state;
}

/* ``state.quiet`` as a truth value: 1, 0, or -1 with an error set */
static int is_quiet(PyObject *state) {
    if (IS_STATE(state)) return STATE_FIELD(state, quiet) != 0;
    PyObject *quiet = PyObject_GetAttr(state, s_quiet);
    if (quiet == NULL) return -1;
    int truth = PyObject_IsTrue(quiet);
    Py_DECREF(quiet);
    return truth;
}

/* ``state.quiet += delta`` (an error already set is kept as it is) */
static int add_quiet(PyObject *state, long delta) {
    if (IS_STATE(state)) {  /* (an error already set is kept: nothing here raises) */
        STATE_FIELD(state, quiet) += delta;
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    int failed = -1;
    PyObject *quiet = PyObject_GetAttr(state, s_quiet);
    long now = quiet != NULL && PyLong_CheckExact(quiet) ? PyLong_AsLong(quiet) : -1;
    if (now >= 0 && now < 1000000) {  /* (an exact small int: its sum made directly) */
        PyObject *sum = PyLong_FromLong(now + delta);
        failed = sum == NULL ? -1 : PyObject_SetAttr(state, s_quiet, sum);
        Py_XDECREF(sum);
        Py_CLEAR(quiet);
    } else if (now == -1 && quiet != NULL && PyErr_Occurred()) {
        PyErr_Clear();  /* (an int too large for a long: the generic += below) */
    }
    if (quiet != NULL) {
        PyObject *step = PyLong_FromLong(delta);
        PyObject *sum = step == NULL ? NULL : PyNumber_InPlaceAdd(quiet, step);
        Py_XDECREF(step);
        if (sum != NULL) {
            failed = PyObject_SetAttr(state, s_quiet, sum);
            Py_DECREF(sum);
        }
        Py_DECREF(quiet);
    }
    if (type != NULL || value != NULL) {
        if (failed) PyErr_Clear();
        PyErr_Restore(type, value, traceback);
        return -1;
    }
    return failed;
}

/* ``state.quiet += 1; try: sink.<callback>(*args) finally: state.quiet -= 1`` (hooks.notify, written out; the
   callback read once per sink: ``sinks``, its number ``which`` there) */
static int notify(PyObject *state, SinkCache *sinks, int which, PyObject *sink, PyObject *callback,
                  PyObject *const *args, size_t n) {
    if (n > 4) return -1;
    if (add_quiet(state, 1) < 0) return -1;
    PyObject *call[5] = {NULL, NULL, NULL, NULL, NULL}, *result = NULL;
    for (size_t i = 0; i < n; i++) call[1 + i] = args[i];
    PyObject *method = sink_callback(sinks, sink, which, callback);
    if (method != NULL) {
        result = PyObject_Vectorcall(method, call + 1, n | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        Py_DECREF(method);
    }
    Py_XDECREF(result);
    int failed = add_quiet(state, -1);
    return result == NULL || failed ? -1 : 0;
}

/* ---- InitHook: ClassHooks._wrap_init's __init__ ---- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;      /* functools.wraps' attributes, __adtrace_hook__ */
    PyObject *original;  /* the class's own __init__ */
    PyObject *python;    /* the pure-Python wrapper: what runs for a case handed over */
    PyObject *active, *local, *children, *made;  /* hooks.active, hooks.local, hooks.children, hooks.made */
    PyObject *name, *default_, *op_name, *data_name;  /* shape.children, children_default, op, data */
    Py_ssize_t index;    /* shape.children_index, -1 for None (keyword-only) */
    PyObject *state;     /* hooks.local.state as last read (cached_state) */
    uint64_t thread;
    SinkCache sinks;     /* the sink's node_created, read once per sink */
} InitHook;

/* def __init__(node, *args, **kwargs):  (hooks.py, line by line) */
static PyObject *init_call(InitHook *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1) return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
    PyObject *node = args[0];
    /* if hooks.active.get() is None or hooks.local.state.quiet: return original(node, *args, **kwargs) */
    PyObject *sink;
    if (PyContextVar_Get(self->active, Py_None, &sink) < 0) return NULL;
    int listening = sink != Py_None;
    Py_DECREF(sink);
    if (!listening) return PyObject_Vectorcall(self->original, args, nargsf, kwnames);
    PyObject *state = cached_state(self->local, &self->state, &self->thread);
    if (state == NULL) return NULL;
    int quiet = is_quiet(state);
    if (quiet != 0) {
        Py_DECREF(state);
        return quiet < 0 ? NULL : PyObject_Vectorcall(self->original, args, nargsf, kwnames);
    }
    /* children = args[index] if positional else kwargs.get(name, default) */
    PyObject *children = NULL;
    if (self->index >= 0 && nargs - 1 > self->index) {
        children = args[1 + self->index];
    } else {
        Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t k = 0; k < nkw && children == NULL; k++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            if (key == self->name) children = args[nargs + k];
        }
        for (Py_ssize_t k = 0; k < nkw && children == NULL; k++) {
            int same = PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, k), self->name);
            if (same == -1 && PyErr_Occurred()) { Py_DECREF(state); return NULL; }
            if (same == 0) children = args[nargs + k];
        }
        if (children == NULL) children = self->default_;
    }
    /* anything but a tuple (an iterator read once, a list, a set: ordered by Shape.order): the Python wrapper */
    if (!PyTuple_CheckExact(children)) {
        Py_DECREF(state);
        return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
    }
    Py_INCREF(children);
    PyObject *op = NULL, *data = NULL, *key = NULL, *result = NULL;
    /* original(node, *args, **kwargs) */
    PyObject *returned = PyObject_Vectorcall(self->original, args, nargsf, kwnames);
    if (returned == NULL) goto done;
    Py_DECREF(returned);
    /* op, data = getattr(node, op_name, ""), getattr(node, data_name, None) */
    if ((op = getattr_or(node, self->op_name, s_empty)) == NULL) goto done;
    if ((data = getattr_or(node, self->data_name, Py_None)) == NULL) goto done;
    /* hooks.children[id(node)] = children; hooks.made.append(node) */
    if ((key = PyLong_FromVoidPtr(node)) == NULL) goto done;
    if (PyObject_SetItem(self->children, key, children) < 0) goto done;
    if (PyList_Check(self->made) ? PyList_Append(self->made, node) < 0 : 0) goto done;
    /* sink = hooks.active.get(); if sink is not None: sink.node_created(node, children, op, data), quiet */
    if (PyContextVar_Get(self->active, Py_None, &sink) < 0) goto done;
    if (sink != Py_None) {
        PyObject *call[4] = {node, children, op, data};
        int failed = notify(state, &self->sinks, 0, sink, s_node_created, call, 4);
        Py_DECREF(sink);
        if (failed) goto done;
    } else {
        Py_DECREF(sink);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(key);
    Py_XDECREF(data);
    Py_XDECREF(op);
    Py_DECREF(children);
    Py_DECREF(state);
    return result;
}

static PyObject *init_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"original", "python", "active", "local", "children", "made", "name", "index",
                            "default", "op", "data", NULL};
    PyObject *original, *python, *active, *local, *children, *made, *name, *index, *default_, *op, *data;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOO!UOOUU:InitHook", names, &original, &python, &active,
                                     &local, &children, &PyList_Type, &made, &name, &index, &default_, &op, &data))
        return NULL;
    if (!PyContextVar_CheckExact(active)) {
        PyErr_SetString(PyExc_TypeError, "InitHook: active is a ContextVar");
        return NULL;
    }
    Py_ssize_t at = -1;
    if (index != Py_None) {
        at = PyLong_AsSsize_t(index);
        if (at == -1 && PyErr_Occurred()) return NULL;
        if (at < 0) {
            PyErr_SetString(PyExc_ValueError, "InitHook: index is None or >= 0");
            return NULL;
        }
    }
    InitHook *self = (InitHook *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = (vectorcallfunc)init_call;
    self->index = at;
    PyObject **fields[] = {&self->original, &self->python, &self->active, &self->local, &self->children,
                           &self->made, &self->name, &self->default_, &self->op_name, &self->data_name};
    PyObject *values[] = {original, python, active, local, children, made, name, default_, op, data};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        Py_INCREF(values[i]);
        *fields[i] = values[i];
    }
    PyUnicode_InternInPlace(&self->name);
    return (PyObject *)self;
}

static int init_traverse(InitHook *self, visitproc visit, void *arg) {
    Py_VISIT(self->dict); Py_VISIT(self->original); Py_VISIT(self->python); Py_VISIT(self->active);
    Py_VISIT(self->local); Py_VISIT(self->children); Py_VISIT(self->made); Py_VISIT(self->name);
    Py_VISIT(self->default_); Py_VISIT(self->op_name); Py_VISIT(self->data_name); Py_VISIT(self->state);
    SINK_VISIT(self->sinks);
    return 0;
}

static int init_clear(InitHook *self) {
    Py_CLEAR(self->dict); Py_CLEAR(self->original); Py_CLEAR(self->python); Py_CLEAR(self->active);
    Py_CLEAR(self->local); Py_CLEAR(self->children); Py_CLEAR(self->made); Py_CLEAR(self->name);
    Py_CLEAR(self->default_); Py_CLEAR(self->op_name); Py_CLEAR(self->data_name); Py_CLEAR(self->state);
    sink_forget(&self->sinks);
    return 0;
}

static void init_dealloc(InitHook *self) {
    PyObject_GC_UnTrack(self);
    init_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static void frame_pool_clear(void);

/* forget(): the sink's callbacks kept let go (on the hooks' undo: a sink is not kept alive by hooks taken out), and
   the frames pooled (one still held elsewhere when its visit returned was not emptied: it would keep its node) */
static PyObject *init_forget(InitHook *self, PyObject *unused) {
    sink_forget(&self->sinks);
    frame_pool_clear();
    Py_RETURN_NONE;
}

static PyMethodDef init_methods[] = {
    {"forget", (PyCFunction)init_forget, METH_NOARGS, "the sink's callbacks kept, let go"},
    {NULL},
};

static PyGetSetDef init_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyTypeObject InitHookType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._hooks.InitHook",
    .tp_doc = "ClassHooks._wrap_init's __init__ wrapper, compiled (hooks.py is the reference).",
    .tp_basicsize = sizeof(InitHook),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = init_new,
    .tp_dealloc = (destructor)init_dealloc,
    .tp_traverse = (traverseproc)init_traverse,
    .tp_clear = (inquiry)init_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(InitHook, vectorcall),
    .tp_dictoffset = offsetof(InitHook, dict),
    .tp_descr_get = method_get,
    .tp_getset = init_getset,
    .tp_methods = init_methods,
};

/* ---- LocalBackwardRunner: ClassHooks.run_local_backward ---- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *python;    /* the pure-Python hooks.run_local_backward (bound): for a call with too few arguments */
    PyObject *active, *local, *children;  /* hooks.active, hooks.local, hooks.children */
    PyObject *own_grad;  /* hooks.own_grad: a str, or None */
    PyObject *load_or_missing;  /* hooks.grad.load_or_missing */
    PyObject *missing;   /* descriptors.MISSING */
    PyObject *frame_type;  /* hooks._Frame */
    PyObject *plain;     /* tracked.plain */
    PyObject *state;     /* hooks.local.state as last read (cached_state) */
    uint64_t thread;
    SinkCache sinks;     /* the sink's local_backward_started (0) and local_backward_ended (1), read once per sink */
} Runner;

/* grad = node.__dict__.get(own_grad, MISSING) if own_grad else hooks.grad.load_or_missing(node),
   MISSING on AttributeError (a new reference) */
static PyObject *grad_of(Runner *self, PyObject *node) {
    PyObject *grad;
    if (self->own_grad != Py_None) {  /* (its own __dict__ read directly, as _descriptors.c's instance_dict) */
        PyObject *dict = Py_TYPE(node)->tp_dictoffset != 0 ? PyObject_GenericGetDict(node, NULL)
                                                             : PyObject_GetAttr(node, s_dict);
        if (dict == NULL) {
            grad = NULL;
        } else if (PyDict_CheckExact(dict)) {
            grad = PyDict_GetItemWithError(dict, self->own_grad);
            if (grad == NULL && !PyErr_Occurred()) grad = self->missing;
            Py_XINCREF(grad);
        } else {
            grad = PyObject_CallMethod(dict, "get", "OO", self->own_grad, self->missing);
        }
        Py_XDECREF(dict);
    } else {
        grad = PyObject_CallOneArg(self->load_or_missing, node);
    }
    if (grad == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        Py_INCREF(self->missing);
        grad = self->missing;
    }
    return grad;
}

/* _Frame(node, children), its __init__ written out:
       self.node, self.children = node, children
       self.unwritten = (1 << len(children)) - 1 if children else 0
       self.read, self.handed = None, [] */
/* The frames made again: a _Frame per visit is an allocation (and its handed list another), dropped when the visit
   returns. A pool keeps the last few frames made; one is taken again only when the pool holds the only reference to
   it: nothing else can see that it is not new (its fields are set as __init__ sets a new one's). A frame of the pool
   is emptied when its visit returns (local_backward_finally: no value kept alive by it). */
#define FRAME_POOL 4
static PyObject *frame_pool[FRAME_POOL];

static void frame_pool_clear(void) {
    for (int i = 0; i < FRAME_POOL; i++) Py_CLEAR(frame_pool[i]);
}

static int frame_pooled(PyObject *frame) {
    for (int i = 0; i < FRAME_POOL; i++)
        if (frame_pool[i] == frame) return 1;
    return 0;
}

/* a pooled frame's fields let go (its visit returned, only the pool holds it after the caller): None, an empty list */
static void frame_emptied(PyObject *frame) {
    FrameObject *fields = (FrameObject *)frame;
    Py_XSETREF(fields->node, Py_NewRef(Py_None));
    Py_XSETREF(fields->children, Py_NewRef(Py_None));
    Py_XSETREF(fields->read, Py_NewRef(Py_None));
    if (fields->handed != NULL && PyList_CheckExact(fields->handed) && Py_REFCNT(fields->handed) == 1) {
        if (PyList_GET_SIZE(fields->handed) > 0 && PyList_SetSlice(fields->handed, 0, PY_SSIZE_T_MAX, NULL) < 0)
            PyErr_Clear();  /* (cannot fail for an exact list: its items dropped) */
    } else {
        Py_CLEAR(fields->handed);
    }
}

static PyObject *new_frame(Runner *self, PyObject *node, PyObject *children) {
    PyTypeObject *type = (PyTypeObject *)self->frame_type;
    PyObject *frame = NULL, *handed = NULL;
    for (int i = 0; i < FRAME_POOL && frame_pool[i] != NULL; i++)
        if (Py_REFCNT(frame_pool[i]) == 1 && Py_TYPE(frame_pool[i]) == type) {
            frame = Py_NewRef(frame_pool[i]);
            PyObject *kept = FRAME_FIELD(frame, handed);  /* (emptied when its visit returned) */
            if (kept != NULL && PyList_CheckExact(kept) && Py_REFCNT(kept) == 1 && PyList_GET_SIZE(kept) == 0)
                handed = Py_NewRef(kept);
            break;
        }
    if (frame == NULL) {
        frame = type->tp_new(type, s_empty_tuple, NULL);
        if (frame == NULL) return NULL;
        for (int i = 0; i < FRAME_POOL && IS_FRAME(frame); i++)
            if (frame_pool[i] == NULL) {
                frame_pool[i] = Py_NewRef(frame);
                break;
            }
    }
    int truth = PyObject_IsTrue(children);
    Py_ssize_t n = truth > 0 ? PyObject_Length(children) : 0;
    if (truth < 0 || n < 0) goto failed;
    PyObject *unwritten;
    if (n < 62) {
        unwritten = PyLong_FromLongLong((1LL << n) - 1);
    } else {  /* (1 << n) - 1, for a value of more children */
        PyObject *one = PyLong_FromLong(1), *shift = PyLong_FromSsize_t(n);
        PyObject *power = one && shift ? PyNumber_Lshift(one, shift) : NULL;
        unwritten = power ? PyNumber_Subtract(power, one) : NULL;
        Py_XDECREF(one); Py_XDECREF(shift); Py_XDECREF(power);
    }
    if (unwritten == NULL) goto failed;
    if (handed == NULL) handed = PyList_New(0);
    if (handed != NULL && IS_FRAME(frame)) {  /* (the compiled frame's fields, set directly: references handed on) */
        FrameObject *fields = (FrameObject *)frame;
        Py_XSETREF(fields->node, Py_NewRef(node));
        Py_XSETREF(fields->children, Py_NewRef(children));
        Py_XSETREF(fields->unwritten, unwritten);
        Py_XSETREF(fields->read, Py_NewRef(Py_None));
        Py_XSETREF(fields->handed, handed);
        return frame;
    }
    int failed = handed == NULL
        || PyObject_SetAttr(frame, s_node, node) < 0 || PyObject_SetAttr(frame, s_children, children) < 0
        || PyObject_SetAttr(frame, s_unwritten, unwritten) < 0 || PyObject_SetAttr(frame, s_read, Py_None) < 0
        || PyObject_SetAttr(frame, s_handed, handed) < 0;
    Py_DECREF(unwritten);
    Py_XDECREF(handed);
    handed = NULL;
    if (!failed) return frame;
failed:
    Py_XDECREF(handed);
    Py_DECREF(frame);
    return NULL;
}

/* ``attributes.pop(key, None)``, its result dropped: 0, or -1 with an error set (an exact dict's entry deleted in
   place, once per tracked value handed: no method call) */
static int pop_entry(PyObject *attributes, PyObject *key) {
    if (PyDict_CheckExact(attributes)) {
        int found = PyDict_Contains(attributes, key);
        return found <= 0 ? found : PyDict_DelItem(attributes, key);
    }
    PyObject *popped = PyObject_CallMethod(attributes, "pop", "OO", key, Py_None);
    Py_XDECREF(popped);
    return popped == NULL ? -1 : 0;
}

/* the finally: block of run_local_backward, after its closure ran (``error``: what it raised, or NULL) */
static int local_backward_finally(Runner *self, PyObject *state, PyObject *frames, PyObject *node, PyObject *error) {
    /* frame = state.frames.pop() (an exact list's last item taken directly) */
    PyObject *frame;
    Py_ssize_t size = PyList_CheckExact(frames) ? PyList_GET_SIZE(frames) : 0;
    if (size > 0) {
        frame = Py_NewRef(PyList_GET_ITEM(frames, size - 1));
        if (PyList_SetSlice(frames, size - 1, size, NULL) < 0) { Py_DECREF(frame); return -1; }
    } else {
        frame = PyObject_CallMethod(frames, "pop", NULL);
    }
    if (frame == NULL) return -1;
    int failed = 0;
    Py_ssize_t left = PyObject_Length(frames);
    if (left < 0) {
        failed = -1;
    } else if (left > 0) {
        /* state.frames[-1].took(frame) */
        PyObject *caller = PySequence_GetItem(frames, left - 1);
        PyObject *took = caller == NULL ? NULL : PyObject_CallMethodOneArg(caller, s_took, frame);
        failed = took == NULL ? -1 : 0;
        Py_XDECREF(took);
        Py_XDECREF(caller);
    } else {
        /* for value in frame.handed: vars(value).pop("_owner", None); vars(value).pop("_state", None)  (detach_all) */
        PyObject *handed = IS_FRAME(frame) && FRAME_FIELD(frame, handed) != NULL ? Py_NewRef(FRAME_FIELD(frame, handed))
                                                                                 : PyObject_GetAttr(frame, s_handed);
        /* (a value only this frame holds, its __dict__ only the value: it is freed with the frame, below, and its
           owner and state with it; nothing can see it detached or not) */
        int alone = handed != NULL && PyList_CheckExact(handed) && Py_REFCNT(handed) == 2
            && Py_REFCNT(frame) == 1 + frame_pooled(frame);  /* (a pooled frame is emptied below) */
        /* (an exact list read by index, as its iterator does: no iterator made per visit) */
        int listed = handed != NULL && PyList_CheckExact(handed);
        PyObject *iterator = handed == NULL || listed ? NULL : PyObject_GetIter(handed);
        PyObject *value;
        failed = listed || iterator != NULL ? 0 : -1;
        for (Py_ssize_t at = 0; !failed; at++) {
            if (listed && at >= PyList_GET_SIZE(handed)) break;
            if (!listed && (value = PyIter_Next(iterator)) == NULL) break;
            if (listed) value = Py_NewRef(PyList_GET_ITEM(handed, at));
            if (Py_TYPE(value) == Slotted.type) {  /* (its slots unset, as a __dict__'s entries popped) */
                if (!(alone && Py_REFCNT(value) == 2)) {
                    Py_CLEAR(SLOT_AT(value, Slotted.owner));
                    Py_CLEAR(SLOT_AT(value, Slotted.state));
                }
                Py_DECREF(value);
                continue;
            }
            PyObject *attributes = Py_TYPE(value)->tp_dictoffset != 0 ? PyObject_GenericGetDict(value, NULL)
                                                                        : PyObject_GetAttr(value, s_dict);
            if (alone && attributes != NULL && Py_REFCNT(value) == 3 && PyDict_CheckExact(attributes)
                && Py_REFCNT(attributes) == 2 && int_pooled(value)) {  /* (held by the list, here and the pool alone:
                    its entries set to None rather than popped, for the pool to set them again) */
                failed = PyDict_SetItem(attributes, s_owner, Py_None) < 0
                    || PyDict_SetItem(attributes, s_state_key, Py_None) < 0;
                Py_DECREF(attributes);
                Py_DECREF(value);
                continue;
            }
            if (alone && attributes != NULL && Py_REFCNT(value) == 2 && Py_REFCNT(attributes) == 2) {
                Py_DECREF(attributes);  /* (held by the list and here; the dict by the value and here) */
                Py_DECREF(value);
                continue;
            }
            if (attributes == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {  /* as vars() says it */
                PyErr_Clear();
                PyErr_SetString(PyExc_TypeError, "vars() argument must have __dict__ attribute");
            }
            failed = attributes == NULL || pop_entry(attributes, s_owner) < 0 || pop_entry(attributes, s_state_key) < 0;
            Py_XDECREF(attributes);
            Py_DECREF(value);
        }
        if (!failed && PyErr_Occurred()) failed = -1;
        Py_XDECREF(iterator);
        Py_XDECREF(handed);
    }
    if (Py_REFCNT(frame) == 2 && frame_pooled(frame)) frame_emptied(frame);
    Py_DECREF(frame);
    if (failed) return -1;
    /* state.addition = state.in_place = None */
    if (clear_addition(state) < 0) return -1;
    /* sink = self.active.get(); if sink is not None: sink.local_backward_ended(node, error), quiet */
    PyObject *sink;
    if (PyContextVar_Get(self->active, Py_None, &sink) < 0) return -1;
    if (sink != Py_None) {
        PyObject *call[2] = {node, error == NULL ? Py_None : error};
        failed = notify(state, &self->sinks, 1, sink, s_local_backward_ended, call, 2);
    }
    Py_DECREF(sink);
    return failed;
}

/* def run_local_backward(self, node, closure, /, *args, **kwargs):  (hooks.py, line by line) */
static PyObject *runner_call(Runner *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 2) return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
    PyObject *node = args[0], *closure = args[1];
    PyObject *const *rest = args + 2;
    size_t nrest = (size_t)(nargs - 2);
    /* state = self.local.state; if state.quiet: return closure(*args, **kwargs) */
    PyObject *state = cached_state(self->local, &self->state, &self->thread);
    if (state == NULL) return NULL;
    int quiet = is_quiet(state);
    if (quiet != 0) {
        Py_DECREF(state);
        return quiet < 0 ? NULL : PyObject_Vectorcall(closure, rest, nrest, kwnames);
    }
    /* sink = self.active.get(); if sink is not None: sink.local_backward_started(node, grad), quiet */
    PyObject *sink;
    if (PyContextVar_Get(self->active, Py_None, &sink) < 0) { Py_DECREF(state); return NULL; }
    if (sink != Py_None) {
        PyObject *grad = grad_of(self, node);
        int failed = grad == NULL ? -1 : 0;
        if (!failed) {
            PyObject *call[2] = {node, grad};
            failed = notify(state, &self->sinks, 0, sink, s_local_backward_started, call, 2);
            Py_DECREF(grad);
        }
        if (failed) { Py_DECREF(sink); Py_DECREF(state); return NULL; }
    }
    Py_DECREF(sink);
    /* state.frames.append(_Frame(node, self.children.get(id(node)))); state.addition = state.in_place = None */
    PyObject *frames = IS_STATE(state) ? Py_NewRef(STATE_FIELD(state, frames)) : PyObject_GetAttr(state, s_frames);
    PyObject *frame = NULL, *key = NULL, *children = NULL;
    int failed = frames == NULL || (key = PyLong_FromVoidPtr(node)) == NULL ? -1 : 0;
    if (!failed && PyDict_CheckExact(self->children)) {
        children = PyDict_GetItemWithError(self->children, key);
        Py_XINCREF(children);
        if (children == NULL && !PyErr_Occurred()) { children = Py_None; Py_INCREF(children); }
    } else if (!failed) {
        children = PyObject_CallMethod(self->children, "get", "O", key);
    }
    failed = failed || children == NULL || (frame = new_frame(self, node, children)) == NULL
             || (PyList_CheckExact(frames) ? PyList_Append(frames, frame) : -1) < 0
             || clear_addition(state) < 0;
    Py_XDECREF(frame);
    Py_XDECREF(key);
    Py_XDECREF(children);
    if (failed) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "state.frames is a list");
        Py_XDECREF(frames);
        Py_DECREF(state);
        return NULL;
    }
    /* try: result = closure(*args, **kwargs); return result if result is None else plain(result) */
    PyObject *result = PyObject_Vectorcall(closure, rest, nrest, kwnames);
    if (result != NULL && result != Py_None) {
        PyObject *plain = PyObject_CallOneArg(self->plain, result);
        Py_DECREF(result);
        result = plain;
    }
    /* except BaseException as exc: error = exc; raise   finally: ... */
    PyObject *type = NULL, *error = NULL, *traceback = NULL;
    if (result == NULL) {
        PyErr_Fetch(&type, &error, &traceback);
        PyErr_NormalizeException(&type, &error, &traceback);
        if (traceback != NULL) PyException_SetTraceback(error, traceback);
    }
    if (local_backward_finally(self, state, frames, node, error) < 0) {
        Py_CLEAR(result);
        if (error != NULL) {  /* raised in the finally: block, the closure's error as its __context__ */
            PyObject *type2, *error2, *traceback2;
            PyErr_Fetch(&type2, &error2, &traceback2);
            PyErr_NormalizeException(&type2, &error2, &traceback2);
            if (traceback2 != NULL) PyException_SetTraceback(error2, traceback2);
            PyException_SetContext(error2, error);  /* (steals the reference) */
            error = NULL;
            Py_XDECREF(type);
            Py_XDECREF(traceback);
            type = traceback = NULL;
            PyErr_Restore(type2, error2, traceback2);
        }
    } else if (error != NULL) {
        PyErr_Restore(type, error, traceback);
        type = error = traceback = NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(error);
    Py_XDECREF(traceback);
    Py_DECREF(frames);
    Py_DECREF(state);
    return result;
}

static PyObject *runner_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"python", "active", "local", "children", "own_grad", "load_or_missing", "missing",
                            "frame", "plain", NULL};
    PyObject *values[9];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOOO!O:LocalBackwardRunner", names, &values[0],
                                     &values[1], &values[2], &values[3], &values[4], &values[5], &values[6],
                                     &PyType_Type, &values[7], &values[8]))
        return NULL;
    if (!PyContextVar_CheckExact(values[1]) || !(values[4] == Py_None || PyUnicode_Check(values[4]))) {
        PyErr_SetString(PyExc_TypeError, "LocalBackwardRunner: active is a ContextVar, own_grad a str or None");
        return NULL;
    }
    Runner *self = (Runner *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = (vectorcallfunc)runner_call;
    PyObject **fields[] = {&self->python, &self->active, &self->local, &self->children, &self->own_grad,
                           &self->load_or_missing, &self->missing, &self->frame_type, &self->plain};
    for (size_t i = 0; i < 9; i++) {
        Py_INCREF(values[i]);
        *fields[i] = values[i];
    }
    return (PyObject *)self;
}

static int runner_traverse(Runner *self, visitproc visit, void *arg) {
    Py_VISIT(self->python); Py_VISIT(self->active); Py_VISIT(self->local); Py_VISIT(self->children);
    Py_VISIT(self->own_grad); Py_VISIT(self->load_or_missing); Py_VISIT(self->missing);
    Py_VISIT(self->frame_type); Py_VISIT(self->plain); Py_VISIT(self->state);
    SINK_VISIT(self->sinks);
    return 0;
}

static int runner_clear(Runner *self) {
    Py_CLEAR(self->python); Py_CLEAR(self->active); Py_CLEAR(self->local); Py_CLEAR(self->children);
    Py_CLEAR(self->own_grad); Py_CLEAR(self->load_or_missing); Py_CLEAR(self->missing);
    Py_CLEAR(self->frame_type); Py_CLEAR(self->plain); Py_CLEAR(self->state);
    sink_forget(&self->sinks);
    return 0;
}

static void runner_dealloc(Runner *self) {
    PyObject_GC_UnTrack(self);
    runner_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* forget(): the sink's callbacks kept let go (on the hooks' undo) */
static PyObject *runner_forget(Runner *self, PyObject *unused) {
    sink_forget(&self->sinks);
    Py_RETURN_NONE;
}

static PyMethodDef runner_methods[] = {
    {"forget", (PyCFunction)runner_forget, METH_NOARGS, "the sink's callbacks kept, let go"},
    {NULL},
};

static PyTypeObject RunnerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._hooks.LocalBackwardRunner",
    .tp_doc = "ClassHooks.run_local_backward, compiled (hooks.py is the reference).",
    .tp_basicsize = sizeof(Runner),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = runner_new,
    .tp_dealloc = (destructor)runner_dealloc,
    .tp_traverse = (traverseproc)runner_traverse,
    .tp_clear = (inquiry)runner_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Runner, vectorcall),
    .tp_methods = runner_methods,
};

/* ---- the module ---- */

/* bind_tracked(TrackedFloat): tracked.py's class whose attributes are slots, detached at their offsets */
static PyObject *bind_tracked(PyObject *module, PyObject *cls) {
    if (slotted_bind(&Slotted, cls) < 0) return NULL;
    Py_RETURN_NONE;
}

/* bind_pool(capsule): _descriptors.c's pool of tracked ints 0 (its int_pool) */
static PyObject *bind_pool(PyObject *module, PyObject *capsule) {
    PyObject **pool = PyCapsule_GetPointer(capsule, INT_POOL_CAPSULE);
    if (pool == NULL) return NULL;
    int_pool = pool;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"bind_pool", bind_pool, METH_O, "_descriptors.c's pool of tracked ints 0, detached without popping"},
    {"bind_tracked", bind_tracked, METH_O, "tracked.py's TrackedFloat: its slots _owner and _state unset directly"},
    {NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hooks",
                                    "The compiled twin of hooks.py: InitHook, LocalBackwardRunner.", -1,
                                    module_methods};

static int intern(PyObject **name, const char *text) {
    *name = PyUnicode_InternFromString(text);
    return *name == NULL ? -1 : 0;
}

PyMODINIT_FUNC PyInit__hooks(void) {
    if (intern(&s_state, "state") || intern(&s_quiet, "quiet") || intern(&s_frames, "frames")
        || intern(&s_addition, "addition") || intern(&s_in_place, "in_place")
        || intern(&s_node_created, "node_created") || intern(&s_local_backward_started, "local_backward_started")
        || intern(&s_local_backward_ended, "local_backward_ended") || intern(&s_dict, "__dict__")
        || intern(&s_read, "read") || intern(&s_handed, "handed") || intern(&s_node, "node")
        || intern(&s_children, "children") || intern(&s_unwritten, "unwritten") || intern(&s_took, "took") || intern(&s_owner, "_owner")
        || intern(&s_state_key, "_state") || intern(&s_empty, ""))
        return NULL;
    if ((s_empty_tuple = PyTuple_New(0)) == NULL) return NULL;
    if (PyType_Ready(&InitHookType) < 0 || PyType_Ready(&RunnerType) < 0 || PyType_Ready(&ThreadStateType) < 0
        || PyType_Ready(&FrameType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&InitHookType);
    Py_INCREF(&RunnerType);
    Py_INCREF(&ThreadStateType);
    Py_INCREF(&FrameType);
    if (PyModule_AddObject(m, "InitHook", (PyObject *)&InitHookType) < 0
        || PyModule_AddObject(m, "LocalBackwardRunner", (PyObject *)&RunnerType) < 0
        || PyModule_AddObject(m, "ThreadState", (PyObject *)&ThreadStateType) < 0
        || PyModule_AddObject(m, "Frame", (PyObject *)&FrameType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
