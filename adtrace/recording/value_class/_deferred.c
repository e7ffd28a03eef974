/* The compiled twin of deferred.py (adtrace/recording/compiled.py): the helpers a recompiled class calls.

   LogFields  the fields of deferred.Log the helpers read and write (its base when the twin is built)
   Helpers    one installation's _adtrace_add, _adtrace_sub and _adtrace_visit (its methods add, sub, visit),
              and its ``local`` (Installed.local: each thread's Log, None once the hooks are undone)
   Init       the ``__init__`` wrapper made by the template's make_init (once per value made)

   deferred.py's template stays the reference. Each C function below says which Python lines it does and
   appends the same records to the same log; a case the C does not handle (a closure not of the recompiled
   code, children not given as a tuple, a log not of LogFields) is handed to the template's function, which
   does it all. _adtrace_set (the seed, once per backward()) and backward() stay Python. Only documented C API
   of Python 3.10-3.13. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>  /* offsetof */
#include <structmember.h>
#include "_state.h"  /* getattr_or, method_get */

static PyObject *s_log, *s_switch, *s_flush, *s_empty;
static PyObject *k_node, *k_visit, *k_left, *k_add, *k_leaf, *k_unary, *k_binary;  /* deferred.py's kinds */

/* ---- LogFields: deferred.Log's hot fields in C (from Python, the same attributes) ---- */

typedef struct {
    PyObject_HEAD
    PyObject *items, *sink, *eager;  /* never NULL unless deleted */
    Py_ssize_t depth, quiet;
} LogFields;

static PyTypeObject LogFieldsType;

static PyObject *fields_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    LogFields *self = (LogFields *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    if ((self->items = PyList_New(0)) == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->sink = Py_NewRef(Py_None);
    self->eager = Py_NewRef(Py_False);
    return (PyObject *)self;
}

static int fields_traverse(LogFields *self, visitproc visit, void *arg) {
    Py_VISIT(self->items); Py_VISIT(self->sink); Py_VISIT(self->eager);
    return 0;
}

static int fields_clear(LogFields *self) {
    Py_CLEAR(self->items); Py_CLEAR(self->sink); Py_CLEAR(self->eager);
    return 0;
}

static void fields_dealloc(LogFields *self) {
    PyObject_GC_UnTrack(self);
    fields_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef fields_members[] = {
    {"items", T_OBJECT_EX, offsetof(LogFields, items), 0, NULL},
    {"sink", T_OBJECT_EX, offsetof(LogFields, sink), 0, NULL},
    {"eager", T_OBJECT_EX, offsetof(LogFields, eager), 0, NULL},
    {"depth", T_PYSSIZET, offsetof(LogFields, depth), 0, NULL},
    {"quiet", T_PYSSIZET, offsetof(LogFields, quiet), 0, NULL},
    {NULL},
};

static PyTypeObject LogFieldsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._deferred.LogFields",
    .tp_doc = "deferred.Log's items, sink, eager, depth and quiet, compiled: read and written directly by the helpers.",
    .tp_basicsize = sizeof(LogFields),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = fields_new,
    .tp_dealloc = (destructor)fields_dealloc,
    .tp_traverse = (traverseproc)fields_traverse,
    .tp_clear = (inquiry)fields_clear,
    .tp_members = fields_members,
};

#define LOG(log) ((LogFields *)(log))

/* ---- Helpers ---- */

#define CODES 16  /* the recompiled codes last found in ``known``, compared by identity first */

typedef struct {
    PyObject_HEAD
    PyObject *active;     /* hooks.active: the ContextVar of the sink */
    PyObject *local;      /* Installed.local: a threading.local whose ``log`` is the thread's Log; None once undone */
    PyObject *known;      /* Rewritten.known: the codes whose closures run as they are */
    PyObject *grad, *local_name;  /* the shape's grad and local backward attributes */
    PyObject *missing, *keep, *kept;  /* descriptors.MISSING, deferred._keep, deferred._kept */
    PyObject *add_py, *sub_py, *visit_py;  /* the template's functions: what runs for a case handed over */
    PyObject *log;        /* ``local.log`` as last read, in thread ``thread`` (let go when ``local`` is set) */
    uint64_t thread;
    PyObject *codes[CODES];  /* (held: a code equal to one of ``known`` may be another object, freed with its closure) */
    int ncodes;
} Helpers;

static PyTypeObject HelpersType;

/* ``installed.local.log`` of this thread (a new reference), or NULL: None without an error (undone) */
static PyObject *current_log(Helpers *self) {
    if (self->local == NULL || self->local == Py_None) return NULL;
    uint64_t id = PyThreadState_GetID(PyThreadState_Get());
    if (self->log != NULL && self->thread == id) return Py_NewRef(self->log);
    PyObject *local = Py_NewRef(self->local);
    PyObject *log = PyObject_GetAttr(local, s_log);  /* (may run Python code: a thread's first Log, made) */
    if (log != NULL && self->local == local) {  /* (not undone meanwhile: else nothing kept) */
        Py_XSETREF(self->log, Py_NewRef(log));
        self->thread = id;
    }
    Py_DECREF(local);
    return log;
}

/* whether ``value`` is a float or an int, exactly (the template's ``type(x) is float or type(x) is int``) */
#define PLAIN(value) (PyFloat_CheckExact(value) || PyLong_CheckExact(value))

/* if sink is not log.sink: log.switch(sink) */
static int switched(PyObject *log, PyObject *sink) {
    if (sink == LOG(log)->sink) return 0;
    PyObject *done = PyObject_CallMethodOneArg(log, s_switch, sink);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}

/* log.items += (values...); if log.eager: log.flush() */
static int append(PyObject *log, PyObject **values, int n) {
    PyObject *items = LOG(log)->items;
    if (items == NULL || !PyList_CheckExact(items)) {
        PyErr_SetString(PyExc_TypeError, "Log.items is a list");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (PyList_Append(items, values[i]) < 0) return -1;
    PyObject *flag = LOG(log)->eager;
    if (flag == NULL) {
        PyErr_SetString(PyExc_AttributeError, "Log has no eager");
        return -1;
    }
    int eager = flag == Py_True ? 1 : flag == Py_False ? 0 : PyObject_IsTrue(flag);
    if (eager <= 0) return eager;
    PyObject *done = PyObject_CallMethodNoArgs(log, s_flush);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}

/* The log to write into now (a new reference), or NULL: without an error, none (no sink, undone, not in a
   backward() when ``in_pass``, or quiet); ``*handed``: the log is not of LogFields (the template's function runs). */
static PyObject *listening(Helpers *self, PyObject **sink, int in_pass, int *handed) {
    *handed = 0;
    if (PyContextVar_Get(self->active, Py_None, sink) < 0) return NULL;
    if (*sink == Py_None) return NULL;
    PyObject *log = current_log(self);
    if (log == NULL) return NULL;
    if (!PyObject_TypeCheck(log, &LogFieldsType)) {
        *handed = 1;
        Py_DECREF(log);
        return NULL;
    }
    if ((in_pass && LOG(log)->depth == 0) || LOG(log)->quiet != 0) {
        Py_DECREF(log);
        return NULL;
    }
    return log;
}

/* def _adtrace_add(target, previous, contribution) / _adtrace_sub: (the template, line by line) */
static PyObject *accumulate(Helpers *self, PyObject *const *args, Py_ssize_t nargs, int negative) {
    if (nargs != 3) return PyObject_Vectorcall(negative ? self->sub_py : self->add_py, args, nargs, NULL);
    PyObject *target = args[0], *previous = args[1], *contribution = args[2];
    /* result = previous; result += contribution (-= for sub); target.grad = result */
    PyObject *result = negative ? PyNumber_InPlaceSubtract(previous, contribution)
                                : PyNumber_InPlaceAdd(previous, contribution);
    if (result == NULL) return NULL;
    if (PyObject_SetAttr(target, self->grad, result) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    /* sink = active.get(); if sink is not None: ... if log is not None and log.depth and not log.quiet: */
    PyObject *sink = NULL, *kept = NULL, *negated = NULL;
    int handed, failed = 1;
    PyObject *log = listening(self, &sink, 1, &handed);
    if (log == NULL) {
        failed = PyErr_Occurred() != NULL;
        if (handed) {  /* (a log not made by deferred.Log, which is LogFields' when the twin is built: not reached) */
            PyErr_SetString(PyExc_TypeError, "the log is not a deferred.Log");
            failed = 1;
        }
        goto done;
    }
    if (switched(log, sink) < 0) goto done;
    if (negative) {  /* contribution = -contribution */
        if ((negated = PyNumber_Negative(contribution)) == NULL) goto done;
        contribution = negated;
    }
    PyObject *record[5] = {k_add, target, previous, contribution, result};
    if (!PLAIN(result)) {  /* previous, contribution, result = kept(previous, contribution, result) */
        kept = PyObject_CallFunctionObjArgs(self->kept, previous, contribution, result, NULL);
        if (kept == NULL) goto done;
        if (!PyTuple_CheckExact(kept) || PyTuple_GET_SIZE(kept) != 3) {
            PyErr_SetString(PyExc_TypeError, "kept() returns three values");
            goto done;
        }
        for (int i = 0; i < 3; i++) record[2 + i] = PyTuple_GET_ITEM(kept, i);
    }
    failed = append(log, record, 5) < 0;
done:
    Py_XDECREF(kept);
    Py_XDECREF(negated);
    Py_XDECREF(log);
    Py_XDECREF(sink);
    Py_DECREF(result);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

static PyObject *helpers_add(Helpers *self, PyObject *const *args, Py_ssize_t nargs) {
    return accumulate(self, args, nargs, 0);
}

static PyObject *helpers_sub(Helpers *self, PyObject *const *args, Py_ssize_t nargs) {
    return accumulate(self, args, nargs, 1);
}

/* whether ``code`` is in ``known`` (1, 0, -1 with an error): the codes found before compared by identity first */
static int is_known(Helpers *self, PyObject *code) {
    for (int i = 0; i < self->ncodes; i++)
        if (self->codes[i] == code) return 1;
    int found = PySet_Contains(self->known, code);
    if (found == 1 && self->ncodes < CODES) self->codes[self->ncodes++] = Py_NewRef(code);
    return found;
}

/* the finally: block of _adtrace_visit: the LEFT record (0, or -1 with an error set) */
static int visit_finally(Helpers *self, PyObject *log, PyObject *node, PyObject *error) {
    PyObject *sink;
    if (PyContextVar_Get(self->active, Py_None, &sink) < 0) return -1;
    int failed = 0;
    if (sink != Py_None) {
        PyObject *record[3] = {k_left, node, error == NULL ? Py_None : error};
        failed = switched(log, sink) < 0 || append(log, record, 3) < 0;
    }
    Py_DECREF(sink);
    return failed ? -1 : 0;
}

/* def _adtrace_visit(node): (the template, line by line, for a closure of recompiled code; else handed over) */
static PyObject *helpers_visit(Helpers *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1) return PyObject_Vectorcall(self->visit_py, args, nargs, NULL);
    PyObject *node = args[0], *sink = NULL;
    int handed;
    PyObject *log = listening(self, &sink, 1, &handed);
    if (log == NULL) {
        Py_XDECREF(sink);
        if (PyErr_Occurred()) return NULL;
        if (handed) return PyObject_Vectorcall(self->visit_py, args, nargs, NULL);
        return PyObject_CallMethodNoArgs(node, self->local_name);  /* return node._backward() */
    }
    /* closure = node._backward; run = closure if closure.__code__ in known (else: the template's function) */
    PyObject *closure = PyObject_GetAttr(node, self->local_name), *grad = NULL, *result = NULL;
    int known = closure == NULL ? -1 : PyFunction_Check(closure) ? is_known(self, PyFunction_GetCode(closure)) : 0;
    if (known <= 0) {
        Py_DECREF(log);
        Py_DECREF(sink);
        Py_XDECREF(closure);
        return known < 0 ? NULL : PyObject_Vectorcall(self->visit_py, args, nargs, NULL);
    }
    if (switched(log, sink) < 0) goto done;
    /* grad = getattr(node, grad, MISSING), kept if not a float or an int; log.items += (VISIT, node, grad) */
    grad = PyObject_GetAttr(node, self->grad);
    if (grad == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) goto done;
        PyErr_Clear();
        grad = Py_NewRef(self->missing);
    }
    if (!PLAIN(grad)) {
        Py_SETREF(grad, PyObject_CallOneArg(self->keep, grad));
        if (grad == NULL) goto done;
    }
    PyObject *record[3] = {k_visit, node, grad};
    if (append(log, record, 3) < 0) goto done;
    /* try: return run()   except BaseException as exc: error = exc; raise   finally: (visit_finally) */
    result = PyObject_CallNoArgs(closure);
    PyObject *type = NULL, *error = NULL, *traceback = NULL;
    if (result == NULL) {
        PyErr_Fetch(&type, &error, &traceback);
        PyErr_NormalizeException(&type, &error, &traceback);
        if (traceback != NULL) PyException_SetTraceback(error, traceback);
    }
    /* (the closure's error is the exception handled while the finally: block runs, as in Python: one raised
       there has it as its __context__, chained by Python itself) */
    PyObject *handled[3] = {NULL, NULL, NULL};
    if (error != NULL) {
        PyErr_GetExcInfo(&handled[0], &handled[1], &handled[2]);
        PyErr_SetExcInfo(Py_NewRef(type), Py_NewRef(error), Py_XNewRef(traceback));
    }
    int failed = visit_finally(self, log, node, error);
    if (error != NULL) PyErr_SetExcInfo(handled[0], handled[1], handled[2]);  /* (steals them) */
    if (failed < 0) {
        Py_CLEAR(result);
    } else if (error != NULL) {
        PyErr_Restore(type, error, traceback);
        type = error = traceback = NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(error);
    Py_XDECREF(traceback);
done:
    Py_XDECREF(grad);
    Py_DECREF(closure);
    Py_DECREF(log);
    Py_DECREF(sink);
    return result;
}

static PyObject *helpers_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"active", "local", "known", "grad", "local_name", "missing", "keep", "kept", "add",
                            "sub", "visit", NULL};
    PyObject *values[11];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO!UUOOOOOO:Helpers", names, &values[0], &values[1],
                                     &PyFrozenSet_Type, &values[2], &values[3], &values[4], &values[5], &values[6],
                                     &values[7], &values[8], &values[9], &values[10]))
        return NULL;
    if (!PyContextVar_CheckExact(values[0])) {
        PyErr_SetString(PyExc_TypeError, "Helpers: active is a ContextVar");
        return NULL;
    }
    if (k_add == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Helpers: kinds() not called (deferred.py calls it at import)");
        return NULL;
    }
    Helpers *self = (Helpers *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    PyObject **fields[] = {&self->active, &self->local, &self->known, &self->grad, &self->local_name,
                           &self->missing, &self->keep, &self->kept, &self->add_py, &self->sub_py, &self->visit_py};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) *fields[i] = Py_NewRef(values[i]);
    PyUnicode_InternInPlace(&self->grad);
    PyUnicode_InternInPlace(&self->local_name);
    return (PyObject *)self;
}

static int helpers_traverse(Helpers *self, visitproc visit, void *arg) {
    Py_VISIT(self->active); Py_VISIT(self->local); Py_VISIT(self->known); Py_VISIT(self->grad);
    Py_VISIT(self->local_name); Py_VISIT(self->missing); Py_VISIT(self->keep); Py_VISIT(self->kept);
    Py_VISIT(self->add_py); Py_VISIT(self->sub_py); Py_VISIT(self->visit_py); Py_VISIT(self->log);
    for (int i = 0; i < self->ncodes; i++) Py_VISIT(self->codes[i]);
    return 0;
}

static int helpers_clear(Helpers *self) {
    for (; self->ncodes > 0; self->ncodes--) Py_CLEAR(self->codes[self->ncodes - 1]);
    Py_CLEAR(self->active); Py_CLEAR(self->local); Py_CLEAR(self->known); Py_CLEAR(self->grad);
    Py_CLEAR(self->local_name); Py_CLEAR(self->missing); Py_CLEAR(self->keep); Py_CLEAR(self->kept);
    Py_CLEAR(self->add_py); Py_CLEAR(self->sub_py); Py_CLEAR(self->visit_py); Py_CLEAR(self->log);
    return 0;
}

static void helpers_dealloc(Helpers *self) {
    PyObject_GC_UnTrack(self);
    helpers_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *helpers_get_local(Helpers *self, void *closure) {
    return Py_NewRef(self->local == NULL ? Py_None : self->local);
}

/* installed.local = value: the log last read let go (None: undone, and no log kept alive by a value made while
   recording, whose closures call these helpers) */
static int helpers_set_local(Helpers *self, PyObject *value, void *closure) {
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "local cannot be deleted");
        return -1;
    }
    Py_CLEAR(self->log);
    Py_XSETREF(self->local, Py_NewRef(value));
    return 0;
}

static PyGetSetDef helpers_getset[] = {
    {"local", (getter)helpers_get_local, (setter)helpers_set_local, "each thread's Log (None once undone)", NULL},
    {NULL},
};

static PyMethodDef helpers_methods[] = {
    {"add", (PyCFunction)(void (*)(void))helpers_add, METH_FASTCALL, "_adtrace_add(target, previous, contribution)"},
    {"sub", (PyCFunction)(void (*)(void))helpers_sub, METH_FASTCALL, "_adtrace_sub(target, previous, contribution)"},
    {"visit", (PyCFunction)(void (*)(void))helpers_visit, METH_FASTCALL, "_adtrace_visit(node)"},
    {NULL},
};

static PyTypeObject HelpersType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._deferred.Helpers",
    .tp_doc = "One installation's helpers, compiled (deferred.py's template is the reference); ``local`` is "
              "Installed.local.",
    .tp_basicsize = sizeof(Helpers),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = helpers_new,
    .tp_dealloc = (destructor)helpers_dealloc,
    .tp_traverse = (traverseproc)helpers_traverse,
    .tp_clear = (inquiry)helpers_clear,
    .tp_getset = helpers_getset,
    .tp_methods = helpers_methods,
};

/* ---- Init: the template's make_init's __init__ ---- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;      /* functools.update_wrapper's attributes, __adtrace_hook__ */
    PyObject *helpers;   /* the installation's Helpers (its active, local, keep) */
    PyObject *original;  /* the class's own __init__ */
    PyObject *python;    /* the template's wrapper: what runs for a case handed over */
    PyObject *name, *default_, *op_name, *data_name;  /* shape.children, children_default, op, data */
    Py_ssize_t index;    /* shape.children_index, -1 for None (keyword-only) */
} Init;

/* def __init__(node, *args, **kwargs):  (the template's make_init, line by line) */
static PyObject *init_call(Init *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1) return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
    for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE(kwnames); k++)  /* (its TypeError) */
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "node") == 0)
            return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
    Helpers *helpers = (Helpers *)self->helpers;
    PyObject *node = args[0], *sink = NULL;
    /* sink = active.get(); log = installed.local.log; if None or log.quiet: return original(node, ...) */
    int handed;
    PyObject *log = listening(helpers, &sink, 0, &handed);
    if (log == NULL) {
        Py_XDECREF(sink);
        if (PyErr_Occurred()) return NULL;
        return PyObject_Vectorcall(handed ? self->python : self->original, args, nargsf, kwnames);
    }
    /* children = args[index] if positional else kwargs.get(name, default) */
    PyObject *children = NULL;
    if (self->index >= 0 && nargs - 1 > self->index) {
        children = args[1 + self->index];
    } else {
        Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t k = 0; k < nkw && children == NULL; k++)
            if (PyTuple_GET_ITEM(kwnames, k) == self->name) children = args[nargs + k];
        for (Py_ssize_t k = 0; k < nkw && children == NULL; k++) {
            int same = PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, k), self->name);
            if (same == -1 && PyErr_Occurred()) {
                Py_DECREF(log);
                Py_DECREF(sink);
                return NULL;
            }
            if (same == 0) children = args[nargs + k];
        }
        if (children == NULL) children = self->default_;
    }
    /* anything but a tuple (an iterator read once, a list, a set: ordered): the template's wrapper */
    if (!PyTuple_CheckExact(children)) {
        Py_DECREF(log);
        Py_DECREF(sink);
        return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
    }
    Py_INCREF(children);
    PyObject *op = NULL, *data = NULL, *result = NULL;
    /* original(node, *args, **kwargs) */
    PyObject *returned = PyObject_Vectorcall(self->original, args, nargsf, kwnames);
    if (returned == NULL) goto done;
    Py_DECREF(returned);
    /* op, data = getattr(node, op_name, ""), getattr(node, data_name, None); data kept if not a float or an int */
    if ((op = getattr_or(node, self->op_name, s_empty)) == NULL) goto done;
    if ((data = getattr_or(node, self->data_name, Py_None)) == NULL) goto done;
    if (!PLAIN(data)) {
        Py_SETREF(data, PyObject_CallOneArg(helpers->keep, data));
        if (data == NULL) goto done;
    }
    if (switched(log, sink) < 0) goto done;
    /* log.items += (NODE, node, children, op, data), or BINARY, UNARY, LEAF with the children as items */
    Py_ssize_t n = PyTuple_GET_SIZE(children);
    int failed;
    if (n == 2) {
        PyObject *record[6] = {k_binary, node, PyTuple_GET_ITEM(children, 0), PyTuple_GET_ITEM(children, 1), op, data};
        failed = append(log, record, 6);
    } else if (n == 1) {
        PyObject *record[5] = {k_unary, node, PyTuple_GET_ITEM(children, 0), op, data};
        failed = append(log, record, 5);
    } else if (n == 0) {
        PyObject *record[4] = {k_leaf, node, op, data};
        failed = append(log, record, 4);
    } else {
        PyObject *record[5] = {k_node, node, children, op, data};
        failed = append(log, record, 5);
    }
    if (failed < 0) goto done;
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(data);
    Py_XDECREF(op);
    Py_DECREF(children);
    Py_DECREF(log);
    Py_DECREF(sink);
    return result;
}

static PyObject *init_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"helpers", "original", "python", "name", "index", "default", "op", "data", NULL};
    PyObject *helpers, *original, *python, *name, *index, *default_, *op, *data;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOUOOUU:Init", names, &HelpersType, &helpers, &original,
                                     &python, &name, &index, &default_, &op, &data))
        return NULL;
    Py_ssize_t at = -1;
    if (index != Py_None) {
        at = PyLong_AsSsize_t(index);
        if (at == -1 && PyErr_Occurred()) return NULL;
        if (at < 0) {
            PyErr_SetString(PyExc_ValueError, "Init: index is None or >= 0");
            return NULL;
        }
    }
    Init *self = (Init *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = (vectorcallfunc)init_call;
    self->index = at;
    PyObject **fields[] = {&self->helpers, &self->original, &self->python, &self->name, &self->default_,
                           &self->op_name, &self->data_name};
    PyObject *values[] = {helpers, original, python, name, default_, op, data};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) *fields[i] = Py_NewRef(values[i]);
    PyUnicode_InternInPlace(&self->name);
    return (PyObject *)self;
}

static int init_traverse(Init *self, visitproc visit, void *arg) {
    Py_VISIT(self->dict); Py_VISIT(self->helpers); Py_VISIT(self->original); Py_VISIT(self->python);
    Py_VISIT(self->name); Py_VISIT(self->default_); Py_VISIT(self->op_name); Py_VISIT(self->data_name);
    return 0;
}

static int init_clear(Init *self) {
    Py_CLEAR(self->dict); Py_CLEAR(self->helpers); Py_CLEAR(self->original); Py_CLEAR(self->python);
    Py_CLEAR(self->name); Py_CLEAR(self->default_); Py_CLEAR(self->op_name); Py_CLEAR(self->data_name);
    return 0;
}

static void init_dealloc(Init *self) {
    PyObject_GC_UnTrack(self);
    init_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyGetSetDef init_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyTypeObject InitType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._deferred.Init",
    .tp_doc = "The template's make_init's __init__ wrapper, compiled (deferred.py is the reference).",
    .tp_basicsize = sizeof(Init),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = init_new,
    .tp_dealloc = (destructor)init_dealloc,
    .tp_traverse = (traverseproc)init_traverse,
    .tp_clear = (inquiry)init_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Init, vectorcall),
    .tp_dictoffset = offsetof(Init, dict),
    .tp_descr_get = method_get,
    .tp_getset = init_getset,
};

/* ---- the module ---- */

/* kinds(NODE, VISIT, LEFT, ADD, LEAF, UNARY, BINARY): deferred.py's record kinds, the objects it writes */
static PyObject *set_kinds(PyObject *module, PyObject *args) {
    PyObject *node, *visit, *left, *add, *leaf, *unary, *binary;
    if (!PyArg_ParseTuple(args, "OOOOOOO:kinds", &node, &visit, &left, &add, &leaf, &unary, &binary)) return NULL;
    Py_XSETREF(k_node, Py_NewRef(node));
    Py_XSETREF(k_visit, Py_NewRef(visit));
    Py_XSETREF(k_left, Py_NewRef(left));
    Py_XSETREF(k_add, Py_NewRef(add));
    Py_XSETREF(k_leaf, Py_NewRef(leaf));
    Py_XSETREF(k_unary, Py_NewRef(unary));
    Py_XSETREF(k_binary, Py_NewRef(binary));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"kinds", set_kinds, METH_VARARGS, "deferred.py's record kinds NODE, VISIT, LEFT, ADD, LEAF, UNARY, BINARY"},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_deferred",
                                    "The compiled twin of deferred.py: LogFields, Helpers, Init.", -1,
                                    module_methods};

PyMODINIT_FUNC PyInit__deferred(void) {
    if ((s_log = PyUnicode_InternFromString("log")) == NULL || (s_switch = PyUnicode_InternFromString("switch")) == NULL
        || (s_flush = PyUnicode_InternFromString("flush")) == NULL || (s_empty = PyUnicode_InternFromString("")) == NULL)
        return NULL;
    if (PyType_Ready(&LogFieldsType) < 0 || PyType_Ready(&HelpersType) < 0 || PyType_Ready(&InitType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    PyTypeObject *types[] = {&LogFieldsType, &HelpersType, &InitType};
    const char *names[] = {"LogFields", "Helpers", "Init"};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(types[i]);
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
