/* The compiled twin of wrappers.py (adtrace/recording/compiled.py), its three per-node paths:
   ``RecordedVJP``, a node's local VJP recorded when called while a recorder is active; ``NodeInit``, the
   wrapper put at VJPNode.__init__; ``AddOutgrads``, the wrapper put at autograd.core.add_outgrads; ``Visits``,
   the iterator over toposort's nodes that tells the recorder of each visit. Each mirrors the Python named in its comment, line by line.

   ``RecordedVJP(node_id, vjp, active)`` does what wrappers.py's pure-Python
   ``MethodType(recorded_vjp, (node_id, vjp, active))`` does, in one object of 64 bytes instead of a bound
   method, a tuple and an int (160 bytes per node), and without a Python frame per call. The node's id is
   kept as the address it stands for (no reference: the node owns this object, and keeps it alive). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
    PyObject_HEAD
    void *node;        /* id(node), as an address */
    PyObject *vjp;     /* the node's own vjp */
    PyObject *active;  /* the context variable of the hooks' installation that made the node */
    vectorcallfunc vectorcall;
} RecordedVJP;

static PyObject *on_vjp_called;  /* the interned name "on_vjp_called" */

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
    PyObject *node_id = PyLong_FromVoidPtr(self->node);
    if (node_id == NULL) {
        Py_DECREF(recorder);
        Py_DECREF(ingrads);
        return NULL;
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
    RecordedVJP *self = PyObject_GC_New(RecordedVJP, type);
    if (self == NULL) {
        return NULL;
    }
    self->node = node;
    self->vjp = Py_NewRef(vjp);
    self->active = Py_NewRef(active);
    self->vectorcall = recorded_vjp_call;
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
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* (read by tests: the id and the vjp it was made with) */
static PyObject *
recorded_vjp_get_node_id(RecordedVJP *self, void *closure)
{
    return PyLong_FromVoidPtr(self->node);
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
    PyObject *call[8] = {recorder, self, args[1], args[2], args[3], args[4], args[5], args[6]};
    done = PyObject_VectorcallMethod(on_vjp_node, call, 8, NULL);
    Py_DECREF(recorder);
    if (done == NULL) {
        return NULL;
    }
    Py_DECREF(done);
    PyObject *vjp = PyObject_GetAttr(self, vjp_name);
    if (vjp == NULL) {
        return NULL;
    }
    RecordedVJP *recorded = PyObject_GC_New(RecordedVJP, &RecordedVJPType);
    if (recorded == NULL) {
        Py_DECREF(vjp);
        return NULL;
    }
    recorded->node = (void *)self;  /* id(self) */
    recorded->vjp = vjp;
    recorded->active = Py_NewRef(wrapper->active);
    recorded->vectorcall = recorded_vjp_call;
    PyObject_GC_Track(recorded);
    int failed = PyObject_SetAttr(self, vjp_name, (PyObject *)recorded);
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

static PyTypeObject NodeInitType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.autograd._wrappers.NodeInit",
    .tp_basicsize = sizeof(NodeInit),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "NodeInit(original, active, python): wrappers.wrap_vjp_node_init(original, active)'s __init__.",
    .tp_new = node_init_new,
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = node_init_get,
    .tp_vectorcall_offset = offsetof(NodeInit, vectorcall),
    .tp_dictoffset = offsetof(NodeInit, dict),
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_traverse = (traverseproc)node_init_traverse,
    .tp_clear = (inquiry)node_init_clear,
    .tp_dealloc = (destructor)node_init_dealloc,
    .tp_getset = node_init_getset,
};

/* -------------------- AddOutgrads: wrap_add_outgrads's add_outgrads -------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *original;  /* autograd's add_outgrads */
    PyObject *active;    /* the installation's context variable */
    PyObject *dict;      /* functools.wraps's attributes, and the hook's mark (__adtrace_hook__) */
    vectorcallfunc vectorcall;
} AddOutgrads;

static PyObject *before_add_outgrads, *after_add_outgrads, *keeps_values_name;

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
        PyObject *keeps = PyObject_GetAttr(recorder, keeps_values_name);
        wanted = keeps == NULL ? -1 : PyObject_IsTrue(keeps);
        Py_XDECREF(keeps);
    }
    if (wanted < 0) {
        Py_DECREF(recorder);
        return NULL;
    }
    if (wanted) {
        PyObject *call[3] = {recorder, prev_g_flagged, g};
        previous = PyObject_VectorcallMethod(before_add_outgrads, call, 3, NULL);
        if (previous == NULL) {
            Py_DECREF(recorder);
            return NULL;
        }
    } else {
        previous = Py_NewRef(Py_None);
    }
    PyObject *result = PyObject_Vectorcall(self->original, args, 2, NULL);
    if (result != NULL) {
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
    PyObject *done = PyObject_CallOneArg(self->on_toposort, node);
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

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wrappers", NULL, -1, NULL};

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
    if (!on_vjp_called || !before_add_outgrads || !after_add_outgrads || !keeps_values_name || !on_vjp_node
            || !vjp_name) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (add_type(m, "RecordedVJP", &RecordedVJPType) < 0 || add_type(m, "AddOutgrads", &AddOutgradsType) < 0
            || add_type(m, "Visits", &VisitsType) < 0 || add_type(m, "NodeInit", &NodeInitType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
