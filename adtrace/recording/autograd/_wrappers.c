/* The compiled twin of wrappers.py (adtrace/recording/compiled.py): ``RecordedVJP``, a node's local VJP
   recorded when called while a recorder is active.

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
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "a recorded vjp takes one argument, g");
        return NULL;
    }
    PyObject *g = args[0];
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

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wrappers", NULL, -1, NULL};

PyMODINIT_FUNC
PyInit__wrappers(void)
{
    if (PyType_Ready(&RecordedVJPType) < 0) {
        return NULL;
    }
    on_vjp_called = PyUnicode_InternFromString("on_vjp_called");
    if (on_vjp_called == NULL) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&RecordedVJPType);
    if (PyModule_AddObject(m, "RecordedVJP", (PyObject *)&RecordedVJPType) < 0) {
        Py_DECREF(&RecordedVJPType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
