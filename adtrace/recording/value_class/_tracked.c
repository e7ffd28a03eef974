/* The compiled twin of tracked.py (adtrace/recording/compiled.py): the operators a tracked int or float runs most
 * inside a recorded _backward (micrograd's `self.grad += out.grad`, `other.data * out.grad`), as C methods put on
 * TrackedFloat and TrackedInt (install(), at tracked.py's import): Tracked.__add__, and the __mul__ and __rmul__
 * that tracked.py's _binary makes. tracked.py stays the reference: each method below does the common case (its
 * operand a plain int or float, a bool, or a tracked number holding its plain one; this number holding its plain
 * one and, for __add__, its state) and hands every other case to the Python method it mirrors, which does it all.
 * A method descriptor (PyDescr_NewMethod) is called by the type's slot without a Python frame.
 * Only the documented C API of Python 3.10-3.13; no numpy C API. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "_state.h"

static PyTypeObject *StateType;  /* _hooks.ThreadState (installed), or NULL: its fields read directly */
static SlottedKind Slotted;  /* the class installed whose attributes are slots (TrackedFloat) */

/* what tracked.py binds (install()): NUMBER_KINDS, the sign "+", and the Python methods mirrored */
static PyObject *NUMBER_KINDS, *PLUS, *py_add, *py_mul, *py_rmul;
static PyObject *s__plain, *s__state, *s_quiet, *s_addition;

/* type(x) in UNTRACKED (int, float, NoneType, exactly) */
static int untracked(PyObject *x) { return PyLong_CheckExact(x) || PyFloat_CheckExact(x) || x == Py_None; }

/* `x._plain` of a tracked number read from its own slot or __dict__ (a new reference); NULL without an error when it
 * holds none (made by type(g)(0): the Python method's __getattr__ decides), NULL with one on an error */
static PyObject *held_plain(PyObject *x) {
    if (Py_TYPE(x) == Slotted.type) return Py_XNewRef(SLOT_AT(x, Slotted.plain));
    PyObject *attributes = PyObject_GenericGetDict(x, NULL);
    if (attributes == NULL) return NULL;
    PyObject *held = PyDict_GetItemWithError(attributes, s__plain);
    Py_XINCREF(held);
    Py_DECREF(attributes);
    return held;
}

/* the plain operand: `other` for an int, float, None or bool (plain(other) is itself), `other._plain` for a tracked
 * number holding it (a new reference); NULL without an error: a case for the Python method */
static PyObject *plain_operand(PyObject *other) {
    if (untracked(other) || PyBool_Check(other)) return Py_NewRef(other);
    int kind = PySet_Contains(NUMBER_KINDS, (PyObject *)Py_TYPE(other));  /* type(other) in NUMBER_KINDS */
    if (kind <= 0) return NULL;
    return held_plain(other);
}

/* the Python method, for a case the C does not do */
static PyObject *handed(PyObject *method, PyObject *self, PyObject *other) {
    if (PyErr_Occurred()) return NULL;
    PyObject *args[2] = {self, other};
    return PyObject_Vectorcall(method, args, 2, NULL);
}

/* Tracked.__add__: `result = self._plain + plain(other)`; the state (this number not detached) notes
 * `state.addition = (result, self, other, "+")` unless quiet; the result returned */
static PyObject *tracked_add(PyObject *self, PyObject *other) {
    PyObject *mine = NULL, *state = NULL, *theirs = NULL, *result = NULL;
    if (Py_TYPE(self) == Slotted.type) {  /* (its slots) */
        mine = Py_XNewRef(SLOT_AT(self, Slotted.plain));
        state = mine ? Py_XNewRef(SLOT_AT(self, Slotted.state)) : NULL;
    } else {
        PyObject *attributes = PyObject_GenericGetDict(self, NULL);
        if (attributes == NULL) return NULL;
        mine = PyDict_GetItemWithError(attributes, s__plain);
        state = mine ? PyDict_GetItemWithError(attributes, s__state) : NULL;
        Py_XINCREF(mine);
        Py_XINCREF(state);
        Py_DECREF(attributes);
    }
    if (state == NULL || state == Py_None || (theirs = plain_operand(other)) == NULL) {  /* detached, or rare */
        Py_XDECREF(mine);
        Py_XDECREF(state);
        return handed(py_add, self, other);
    }
    result = PyNumber_Add(mine, theirs);
    int compiled = StateType != NULL && Py_TYPE(state) == StateType;  /* (its fields read and set directly) */
    PyObject *quiet = result && !compiled ? PyObject_GetAttr(state, s_quiet) : NULL;
    int is_quiet = compiled ? (result ? STATE_FIELD(state, quiet) != 0 : -1) : quiet ? PyObject_IsTrue(quiet) : -1;
    Py_XDECREF(quiet);
    if (is_quiet < 0) {
        Py_CLEAR(result);
    } else if (!is_quiet) {  /* state.addition = (result, self, other, "+") */
        PyObject *addition = PyTuple_Pack(4, result, self, other, PLUS);
        if (addition != NULL && compiled)
            Py_SETREF(STATE_FIELD(state, addition), Py_NewRef(addition));
        else if (addition == NULL || PyObject_SetAttr(state, s_addition, addition) < 0)
            Py_CLEAR(result);
        Py_XDECREF(addition);
    }
    Py_DECREF(mine);
    Py_DECREF(state);
    Py_DECREF(theirs);
    return result;
}

/* _binary's forward (reflected: 0) and reflected (1) for `*`: `self._plain * plain(other)`, `plain(other) * self._plain` */
static PyObject *multiplied(PyObject *self, PyObject *other, int reflected) {
    PyObject *mine = held_plain(self), *theirs = mine ? plain_operand(other) : NULL;
    if (theirs == NULL) {
        Py_XDECREF(mine);
        return handed(reflected ? py_rmul : py_mul, self, other);
    }
    PyObject *result = reflected ? PyNumber_Multiply(theirs, mine) : PyNumber_Multiply(mine, theirs);
    Py_DECREF(mine);
    Py_DECREF(theirs);
    return result;
}

static PyObject *tracked_mul(PyObject *self, PyObject *other) { return multiplied(self, other, 0); }
static PyObject *tracked_rmul(PyObject *self, PyObject *other) { return multiplied(self, other, 1); }

static PyMethodDef operators[] = {
    {"__add__", (PyCFunction)tracked_add, METH_O, "Tracked.__add__, compiled"},
    {"__mul__", (PyCFunction)tracked_mul, METH_O, "Tracked.__mul__, compiled"},
    {"__rmul__", (PyCFunction)tracked_rmul, METH_O, "Tracked.__rmul__, compiled"},
    {NULL}
};

/* install(classes, NUMBER_KINDS, plus, add, mul, rmul[, state type]): tracked.py's objects bound (the Python methods
 * mirrored, then _hooks.ThreadState or None), then each class given (TrackedFloat, TrackedInt) gets the methods above in its own namespace */
static PyObject *install(PyObject *module, PyObject *args) {
    PyObject *classes, *objects[5], *state_type = Py_None;
    if (!PyArg_ParseTuple(args, "O!O!UOOO|O:install", &PyTuple_Type, &classes, &PyFrozenSet_Type, &objects[0],
                          &objects[1], &objects[2], &objects[3], &objects[4], &state_type))
        return NULL;
    if (state_type != Py_None && !(PyType_Check(state_type)
                                   && ((PyTypeObject *)state_type)->tp_basicsize == sizeof(ThreadStateObject))) {
        PyErr_SetString(PyExc_TypeError, "install: the state type is _hooks.ThreadState, or None");
        return NULL;
    }
    Py_XINCREF(state_type == Py_None ? NULL : state_type);
    Py_XSETREF(StateType, state_type == Py_None ? NULL : (PyTypeObject *)state_type);
    PyObject **globals[5] = {&NUMBER_KINDS, &PLUS, &py_add, &py_mul, &py_rmul};
    for (int i = 0; i < 5; i++) {
        Py_INCREF(objects[i]);
        Py_XSETREF(*globals[i], objects[i]);
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(classes); i++) {
        PyObject *cls = PyTuple_GET_ITEM(classes, i);
        if (!PyType_Check(cls)) {
            PyErr_SetString(PyExc_TypeError, "install: each class is a tracked number's");
            return NULL;
        }
        if (((PyTypeObject *)cls)->tp_dictoffset == 0 && slotted_bind(&Slotted, cls) < 0)  /* (else a __dict__) */
            return NULL;
        for (PyMethodDef *def = operators; def->ml_name != NULL; def++) {
            PyObject *method = PyDescr_NewMethod((PyTypeObject *)cls, def);
            int failed = method == NULL || PyObject_SetAttrString(cls, def->ml_name, method) < 0;
            Py_XDECREF(method);
            if (failed) return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install", install, METH_VARARGS, "tracked.py's objects bound, and its classes given the compiled operators"},
    {NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tracked", "The compiled twin of tracked.py.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__tracked(void) {
    if ((s__plain = PyUnicode_InternFromString("_plain")) == NULL
        || (s__state = PyUnicode_InternFromString("_state")) == NULL
        || (s_quiet = PyUnicode_InternFromString("quiet")) == NULL
        || (s_addition = PyUnicode_InternFromString("addition")) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
