/* The compiled twin of recorder.py (adtrace/recording/compiled.py): the four callbacks the hooks make per value
   and per visit, as events.

   Core   a base of ``Recorder`` (recorder.py puts it first: ``class Recorder(Core, PythonRecorder)``) holding
          the recorder's hot state as slots that the Python methods read and write as they did their
          attributes (live, thread, values, nothing, keep_sites, _labels, _names, _children, _alive, _passes,
          _count), and the hot path of
            node_created            (a value made: tuple children, a str op whose names are known, each child
                                     labelled, a number's data, no call site kept)
            local_backward_started  (a visit of a pass started, a number's grad)
            grad_written            (a number's write inside a started pass: recorder.py's scalar branch)
            local_backward_ended    (the visit's vjp and add_outgrads events)
          Each writes the same items into the event log's values as recorder.py's inlined writes: the same head
          objects (eventlog.HEADS), the same labels, the same tuples, each event in the stored form its packer
          picks (packers.py). Every other case (arrays, a value not labelled yet, a pass not started, another
          thread, anything of another type than expected) is handed, before anything is changed, to the
          pure-Python method, which does it all; an internal error goes to ``self.fail`` as there.

   recorder.py stays the reference; ``configure`` gives this module its methods, its _Pass and _Visit (their
   slots read where CPython keeps them) and the constants its writes compare with. Only documented C API of
   Python 3.10-3.13 (the member descriptors' offsets: cpython/descrobject.h). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>  /* PyMemberDef, T_OBJECT_EX, T_PYSSIZET (Python 3.10, 3.11) */
#include <pythread.h>
#include <stddef.h>  /* offsetof */
#include "../_labels.h"  /* label_text, pair_text */

typedef struct {
    PyObject_HEAD
    PyObject *live, *thread, *values, *nothing, *keep_sites, *labels, *names, *children, *alive, *passes;
    Py_ssize_t count;
} Core;

/* set by configure */
static PyObject *fb_node_created, *fb_local_backward_started, *fb_grad_written, *fb_local_backward_ended;
static PyTypeObject *pass_type, *visit_type;
static Py_ssize_t p_number, p_started, p_visited, p_visits, p_grads;
static Py_ssize_t v_node, v_label, v_outgrad, v_children, v_writes;
static PyObject *ndarray, *scalars, *no_reference, *heads, *mode, *level, *unary, *visits_form, *zero_form;
static PyObject *positions[4];
static int configured = 0;
static PyObject *s_fail, *s_comma, *s_empty, *s_one;

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* float and int are in SCALARS, and in NO_REFERENCE (configure): an exact float or int is known to be in either
   without a set lookup */
static int numbers_scalar, numbers_no_reference;

/* type(x) in kinds (SCALARS or NO_REFERENCE, numbers: whether float and int are in it): 1, 0, or -1 */
static int kind_in(PyObject *kinds, int numbers, PyObject *x) {
    if (numbers && (PyFloat_CheckExact(x) || PyLong_CheckExact(x))) return 1;
    return PySet_Contains(kinds, (PyObject *)Py_TYPE(x));
}

/* ---- heads: eventlog.HEADS[(tag, mode, level, query)], the last one kept per tag (packers._head) ---- */

enum { H_NODE, H_NODE1, H_NODE2, H_TOPO, H_TOPO1, H_VJP, H_VJP1, H_VJP2, H_ADD, H_ADD1, H_ADD2, N_HEADS };
static const long head_tags[N_HEADS] = {1, 1001, 2001, 4, 1004, 5, 1005, 2005, 6, 1006, 2006};
static PyObject *head_query[N_HEADS], *head_value[N_HEADS];

/* the head (borrowed: the cache holds it), or NULL with an error set */
static PyObject *head(int which, PyObject *query) {
    if (head_value[which] != NULL && head_query[which] == query) return head_value[which];
    PyObject *key = Py_BuildValue("(lOOO)", head_tags[which], mode, level, query);
    if (key == NULL) return NULL;
    PyObject *found = PyObject_GetItem(heads, key);
    Py_DECREF(key);
    if (found == NULL) return NULL;
    Py_INCREF(query);
    Py_XSETREF(head_query[which], query);
    Py_XSETREF(head_value[which], found);
    return found;
}

/* values.extend((head, *items)): 0, or -1 with an error set */
static int extend(PyObject *values, int which, PyObject *query, PyObject **items, Py_ssize_t n) {
    PyObject *found = head(which, query);
    if (found == NULL || PyList_Append(values, found) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyList_Append(values, items[i]) < 0) return -1;
    return 0;
}

/* write(self.values, AddOutgrads, mode=REV, level=0, query=f[0], node=f[1], position=f[2], parent=f[3],
   argnum=f[2], previous=f[4], previous_flag=f[5], contribution=f[6], result=f[7], result_flag=f[8],
   replaced=f[9]) for one write's fields (recorder._add_outgrads) */
static int write_add_outgrads(PyObject *values, PyObject *fields) {
    PyObject **f = &PyTuple_GET_ITEM(fields, 0);
    if (f[2] == zero_form && f[4] == Py_None && f[5] == Py_None && f[8] == Py_False && f[9] == Py_False) {
        if (f[6] == Py_None && f[7] == Py_None) {
            PyObject *items[] = {f[1], f[3]};
            return extend(values, H_ADD1, f[0], items, 2);
        }
        if (f[7] == f[6]) {
            int plain = kind_in(no_reference, numbers_no_reference, f[7]);
            if (plain < 0) return -1;
            if (plain) {
                PyObject *items[] = {f[1], f[3], f[6]};
                return extend(values, H_ADD2, f[0], items, 3);
            }
        }
    }
    PyObject *items[] = {f[1], f[2], f[3], f[2], f[4], f[5], f[6], f[7], f[8], f[9]};
    return extend(values, H_ADD, f[0], items, 10);
}

/* ---- shared steps ---- */

/* the guard and the thread: 1 go on, 0 not live (nothing to do), 2 handed to the Python method */
static int enter(Core *self) {
    if (!configured) return 2;
    if (self->live == Py_False) return 0;
    if (self->live != Py_True || self->thread == NULL || !PyLong_CheckExact(self->thread)) return 2;
    unsigned long thread = PyLong_AsUnsignedLong(self->thread);
    if (thread == (unsigned long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 2;
    }
    if (thread != PyThread_get_thread_ident()) return 2;  /* (elsewhere(), in the Python) */
    if (self->values == NULL || !PyList_CheckExact(self->values) || self->labels == NULL
        || !PyDict_CheckExact(self->labels) || self->passes == NULL || !PyList_CheckExact(self->passes))
        return 2;
    return 1;
}

/* the pure-Python method, called with the same arguments */
static PyObject *hand_back(PyObject *method, PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *stack[8];
    if (method == NULL || nargs > 7) {
        PyErr_SetString(PyExc_TypeError, "the recorder's compiled twin was not configured");
        return NULL;
    }
    stack[0] = self;
    for (Py_ssize_t i = 0; i < nargs; i++) stack[i + 1] = args[i];
    return PyObject_Vectorcall(method, stack, nargs + 1, NULL);
}

/* except Exception as exc: self.fail(exc) (any other exception goes on up, as in Python) */
static PyObject *failed(PyObject *self) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value != NULL && traceback != NULL) PyException_SetTraceback(value, traceback);
    if (value == NULL || !PyErr_GivenExceptionMatches(value, PyExc_Exception)) {
        PyErr_Restore(type, value, traceback);
        return NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    PyObject *called = PyObject_CallMethodOneArg(self, s_fail, value);
    Py_DECREF(value);
    if (called == NULL) return NULL;
    Py_DECREF(called);
    Py_RETURN_NONE;
}

/* labels.get(id(value)): borrowed, NULL when not labelled (-1 in *error when an error is set) */
static PyObject *label_of(PyObject *labels, PyObject *value, int *error) {
    PyObject *key = PyLong_FromVoidPtr(value);
    if (key == NULL) {
        *error = 1;
        return NULL;
    }
    PyObject *label = PyDict_GetItemWithError(labels, key);
    Py_DECREF(key);
    if (label == NULL && PyErr_Occurred()) *error = 1;
    return label;
}

/* labels.get(id(value)) as label_of, the key id(value) kept in *key (a new reference, or NULL with *error set): for a
   second dict read by the same id (no int made twice) */
static PyObject *label_keyed(PyObject *labels, PyObject *value, PyObject **key, int *error) {
    if ((*key = PyLong_FromVoidPtr(value)) == NULL) {
        *error = 1;
        return NULL;
    }
    PyObject *label = PyDict_GetItemWithError(labels, *key);
    if (label == NULL && PyErr_Occurred()) *error = 1;
    return label;
}

/* the running pass (borrowed), NULL when none; *hand set when it is not a _Pass as recorder.py makes it */
static PyObject *running(Core *self, int *hand) {
    Py_ssize_t n = PyList_GET_SIZE(self->passes);
    if (n == 0) return NULL;
    PyObject *run = PyList_GET_ITEM(self->passes, n - 1);
    if (Py_TYPE(run) != pass_type || SLOT(run, p_number) == NULL || SLOT(run, p_started) == NULL
        || SLOT(run, p_visits) == NULL || !PyList_CheckExact(SLOT(run, p_visits)) || SLOT(run, p_grads) == NULL
        || !PyDict_CheckExact(SLOT(run, p_grads)) || SLOT(run, p_visited) == NULL)
        *hand = 1;
    return run;
}

/* ---- the callbacks ---- */

/* Recorder.node_created(node, children, op, data) */
static PyObject *node_created(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *me = (PyObject *)self;
    if (nargs != 4) return hand_back(fb_node_created, me, args, nargs);
    int how = enter(self);
    if (how == 0) Py_RETURN_NONE;
    PyObject *node = args[0], *children = args[1], *op = args[2], *data = args[3], *value;
    if (how == 2 || !PyTuple_CheckExact(children) || PyTuple_GET_SIZE(children) > 3 || !PyUnicode_CheckExact(op)
        || self->keep_sites != Py_False || self->names == NULL || !PyTuple_CheckExact(self->names)
        || PyTuple_GET_SIZE(self->names) != 2 || self->children == NULL || !PyDict_CheckExact(self->children)
        || self->alive == NULL || !PyList_CheckExact(self->alive))
        return hand_back(fb_node_created, me, args, nargs);
    if (self->nothing == Py_True)
        value = Py_None;
    else if (self->nothing == Py_False && Py_TYPE(data) != (PyTypeObject *)ndarray)
        value = data;
    else
        return hand_back(fb_node_created, me, args, nargs);
    Py_ssize_t n = PyTuple_GET_SIZE(children);
    PyObject *by_op = PyTuple_GET_ITEM(self->names, n == 0);  /* self._names[not children] */
    if (!PyDict_CheckExact(by_op)) return hand_back(fb_node_created, me, args, nargs);
    PyObject *names = PyDict_GetItemWithError(by_op, op);
    if (names == NULL && PyErr_Occurred()) return failed(me);
    if (names == NULL || !PyTuple_CheckExact(names) || PyTuple_GET_SIZE(names) != 2
        || !PyUnicode_CheckExact(PyTuple_GET_ITEM(names, 0)))
        return hand_back(fb_node_created, me, args, nargs);  /* (its names reduced there, kept for the next) */
    PyObject *child_labels[3];
    int error = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        child_labels[i] = label_of(self->labels, PyTuple_GET_ITEM(children, i), &error);
        if (error) return failed(me);
        if (child_labels[i] == NULL || !PyUnicode_CheckExact(child_labels[i]))
            return hand_back(fb_node_created, me, args, nargs);  /* (an unrecorded child labelled there) */
    }
    PyObject *query = Py_None;
    int hand = 0;
    PyObject *run = running(self, &hand);
    if (hand) return hand_back(fb_node_created, me, args, nargs);
    if (run != NULL) query = SLOT(run, p_number);
    /* from here on, as recorder.py: the count, the label, the value kept alive, its children, the event */
    Py_ssize_t count = self->count;
    self->count = count + 1;
    PyObject *label = label_text(count, PyTuple_GET_ITEM(names, 0));  /* f"v{count}_{names[0]}" */
    PyObject *key = label == NULL ? NULL : PyLong_FromVoidPtr(node);
    PyObject *parents = NULL, *how_many = NULL;
    int ok = key != NULL && PyDict_SetItem(self->labels, key, label) == 0 && PyList_Append(self->alive, node) == 0
             && (how_many = PyLong_FromSsize_t(n)) != NULL && PyDict_SetItem(self->children, key, how_many) == 0;
    if (ok) {
        if (n == 0) {
            parents = s_empty;
            Py_INCREF(parents);
        } else if (n == 1) {
            parents = child_labels[0];
            Py_INCREF(parents);
        } else if (n == 2) {
            parents = pair_text(child_labels[0], child_labels[1]);  /* f"{a},{b}" */
        } else {
            PyObject *parts = PyTuple_Pack(3, child_labels[0], child_labels[1], child_labels[2]);
            parents = parts == NULL ? NULL : PyUnicode_Join(s_comma, parts);
            Py_XDECREF(parts);
        }
        ok = parents != NULL;
    }
    if (ok) {
        PyObject *argnums = positions[n], *primitive = PyTuple_GET_ITEM(names, 1);
        if (argnums == unary && value == Py_None) {
            PyObject *items[] = {label, primitive, parents};
            ok = extend(self->values, H_NODE1, query, items, 3) == 0;
        } else if (argnums == unary) {
            PyObject *items[] = {label, primitive, parents, value};
            ok = extend(self->values, H_NODE2, query, items, 4) == 0;
        } else {
            PyObject *items[] = {label, primitive, argnums, parents, value, Py_None};
            ok = extend(self->values, H_NODE, query, items, 6) == 0;
        }
    }
    Py_XDECREF(label);
    Py_XDECREF(key);
    Py_XDECREF(how_many);
    Py_XDECREF(parents);
    if (!ok) return failed(me);
    Py_RETURN_NONE;
}

/* The visits made again: a _Visit per visit is an allocation (and its writes list another), dropped when its vjp is
   written. A pool keeps the last few made; one is taken again only when the pool holds the only reference to it
   (nothing else can see that it is not new: its slots are set as __init__ sets a new one's), and is emptied when its
   events are written (no value kept alive by it). */
#define VISIT_POOL 4
static PyObject *visit_pool[VISIT_POOL];

/* a _Visit with its slots unset, its writes an empty list (a new reference), or NULL with an error set */
static PyObject *new_visit(void) {
    for (int i = 0; i < VISIT_POOL && visit_pool[i] != NULL; i++) {
        PyObject *visit = visit_pool[i];
        if (Py_REFCNT(visit) == 1 && Py_TYPE(visit) == visit_type) {
            PyObject *writes = SLOT(visit, v_writes);
            if (writes == NULL || !PyList_CheckExact(writes) || Py_REFCNT(writes) != 1 || PyList_GET_SIZE(writes)) {
                if ((writes = PyList_New(0)) == NULL) return NULL;
                Py_XSETREF(SLOT(visit, v_writes), writes);
            }
            return Py_NewRef(visit);
        }
    }
    PyObject *visit = visit_type->tp_alloc(visit_type, 0);
    if (visit == NULL) return NULL;
    if ((SLOT(visit, v_writes) = PyList_New(0)) == NULL) {
        Py_DECREF(visit);
        return NULL;
    }
    for (int i = 0; i < VISIT_POOL; i++)
        if (visit_pool[i] == NULL) {
            visit_pool[i] = Py_NewRef(visit);
            break;
        }
    return visit;
}

/* a visit of the pool whose events are written, that only the pool will hold: its slots let go, its writes emptied */
static void visit_done(PyObject *visit) {
    int pooled = 0;
    for (int i = 0; i < VISIT_POOL; i++) pooled |= visit_pool[i] == visit;
    if (!pooled || Py_REFCNT(visit) != 2) return;
    Py_CLEAR(SLOT(visit, v_node));
    Py_CLEAR(SLOT(visit, v_label));
    Py_CLEAR(SLOT(visit, v_outgrad));
    Py_CLEAR(SLOT(visit, v_children));
    PyObject *writes = SLOT(visit, v_writes);
    if (writes != NULL && PyList_CheckExact(writes) && Py_REFCNT(writes) == 1 && PyList_GET_SIZE(writes) > 0
        && PyList_SetSlice(writes, 0, PY_SSIZE_T_MAX, NULL) < 0)
        PyErr_Clear();  /* (cannot fail for an exact list) */
}

/* Recorder.local_backward_started(node, grad) */
static PyObject *local_backward_started(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *me = (PyObject *)self;
    if (nargs != 2) return hand_back(fb_local_backward_started, me, args, nargs);
    int how = enter(self);
    if (how == 0) Py_RETURN_NONE;
    if (how == 2) return hand_back(fb_local_backward_started, me, args, nargs);
    PyObject *node = args[0], *grad = args[1], *outgrad;
    int hand = 0, error = 0;
    PyObject *run = running(self, &hand);
    if (run == NULL && !hand) Py_RETURN_NONE;
    if (hand || SLOT(run, p_started) != Py_True || !PyLong_CheckExact(SLOT(run, p_visited)) || self->children == NULL
        || !PyDict_CheckExact(self->children))
        return hand_back(fb_local_backward_started, me, args, nargs);  /* (a pass not started: its seed first) */
    if (self->nothing == Py_True)
        outgrad = Py_None;
    else if (self->nothing == Py_False && Py_TYPE(grad) != (PyTypeObject *)ndarray)
        outgrad = grad;
    else
        return hand_back(fb_local_backward_started, me, args, nargs);
    PyObject *key;  /* id(node), for its label and its children's count */
    PyObject *label = label_keyed(self->labels, node, &key, &error);
    if (error || label == NULL) {
        Py_XDECREF(key);
        return error ? failed(me) : hand_back(fb_local_backward_started, me, args, nargs);
    }
    PyObject *children = PyDict_GetItemWithError(self->children, key);  /* self._children.get(id(node)) */
    Py_DECREF(key);
    if (children == NULL && PyErr_Occurred()) return failed(me);
    if (children == NULL) children = Py_None;
    PyObject *visited = SLOT(run, p_visited);
    PyObject *items[] = {label, visited};
    if (extend(self->values, H_TOPO, SLOT(run, p_number), items, 2) < 0) return failed(me);
    /* (the position given is never VISITS: the full form, H_TOPO) */
    PyObject *next = PyNumber_Add(visited, s_one);  /* run.visited += 1 */
    if (next == NULL) return failed(me);
    Py_SETREF(SLOT(run, p_visited), next);
    /* run.visits.append(_Visit(node, label, outgrad, children)): its slots filled as its __init__ does */
    PyObject *visit = new_visit();
    if (visit == NULL) return failed(me);
    Py_XSETREF(SLOT(visit, v_node), Py_NewRef(node));
    Py_XSETREF(SLOT(visit, v_label), Py_NewRef(label));
    Py_XSETREF(SLOT(visit, v_outgrad), Py_NewRef(outgrad));
    Py_XSETREF(SLOT(visit, v_children), Py_NewRef(children));
    int appended = PyList_Append(SLOT(run, p_visits), visit);
    Py_DECREF(visit);
    if (appended < 0) return failed(me);
    Py_RETURN_NONE;
}

/* the running visit (borrowed) when it is a _Visit as recorder.py makes it, else NULL */
static PyObject *last_visit(PyObject *run) {
    PyObject *visits = SLOT(run, p_visits);
    Py_ssize_t n = PyList_GET_SIZE(visits);
    if (n == 0) return NULL;
    PyObject *visit = PyList_GET_ITEM(visits, n - 1);
    if (Py_TYPE(visit) != visit_type || SLOT(visit, v_node) == NULL || SLOT(visit, v_label) == NULL
        || SLOT(visit, v_outgrad) == NULL || SLOT(visit, v_children) == NULL || SLOT(visit, v_writes) == NULL
        || !PyList_CheckExact(SLOT(visit, v_writes)))
        return NULL;
    return visit;
}

/* Recorder.grad_written(node, target, position, previous, contribution, result, accumulated): a number's write
   in a started pass (recorder.py's scalar branch) */
static PyObject *grad_written(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *me = (PyObject *)self;
    if (nargs != 7) return hand_back(fb_grad_written, me, args, nargs);
    int how = enter(self);
    if (how == 0) Py_RETURN_NONE;
    if (how == 2) return hand_back(fb_grad_written, me, args, nargs);
    PyObject *node = args[0], *target = args[1], *position = args[2], *previous = args[3], *contribution = args[4],
             *result = args[5], *accumulated = args[6];
    int hand = 0, error = 0;
    PyObject *run = running(self, &hand);
    if (run == NULL && !hand) Py_RETURN_NONE;
    if (hand || SLOT(run, p_started) != Py_True || (self->nothing != Py_True && self->nothing != Py_False))
        return hand_back(fb_grad_written, me, args, nargs);  /* (a pass not started: pending, or its seed first) */
    int plain = kind_in(scalars, numbers_scalar, result);
    if (plain > 0) plain = kind_in(scalars, numbers_scalar, previous);
    if (plain < 0) return failed(me);
    if (!plain || Py_TYPE(contribution) == (PyTypeObject *)ndarray)
        return hand_back(fb_grad_written, me, args, nargs);  /* (an array's write: recorder._write) */
    PyObject *visit = last_visit(run);
    if (visit == NULL && PyList_GET_SIZE(SLOT(run, p_visits)) != 0)
        return hand_back(fb_grad_written, me, args, nargs);
    PyObject *node_label = Py_None, *parent;
    if (visit != NULL && node == SLOT(visit, v_node)) {  /* (the running visit's: its label, found when it started) */
        node_label = SLOT(visit, v_label);
    } else if (node != Py_None) {
        node_label = label_of(self->labels, node, &error);
        if (error) return failed(me);
        if (node_label == NULL) return hand_back(fb_grad_written, me, args, nargs);
    }
    PyObject *key;  /* id(target), for its label and run.grads */
    parent = label_keyed(self->labels, target, &key, &error);
    if (error || parent == NULL) {
        Py_XDECREF(key);
        return error ? failed(me) : hand_back(fb_grad_written, me, args, nargs);
    }
    /* from here on, as recorder.py */
    if (self->nothing == Py_True) previous = result = contribution = Py_None;
    PyObject *replaced = Py_None;
    if (accumulated != Py_None) {
        int truth = PyObject_Not(accumulated);
        if (truth < 0) {
            Py_DECREF(key);
            return failed(me);
        }
        replaced = truth ? Py_True : Py_False;
    }
    int stored = PyDict_SetItem(SLOT(run, p_grads), key, result);  /* run.grads[id(target)] = kept */
    Py_DECREF(key);
    if (stored < 0) return failed(me);
    PyObject *fields = PyTuple_Pack(10, SLOT(run, p_number), node_label, position, parent, previous, Py_False,
                                    contribution, result, Py_False, replaced);
    if (fields == NULL) return failed(me);
    int ok;
    if (visit != NULL && node == SLOT(visit, v_node)) {  /* its add_outgrads event after the vjp's */
        ok = PyList_Append(SLOT(visit, v_writes), fields) == 0;
    } else {
        ok = write_add_outgrads(self->values, fields) == 0;
    }
    Py_DECREF(fields);
    if (!ok) return failed(me);
    Py_RETURN_NONE;
}

/* Recorder.local_backward_ended(node, error) */
static PyObject *local_backward_ended(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *me = (PyObject *)self;
    if (nargs != 2) return hand_back(fb_local_backward_ended, me, args, nargs);
    int how = enter(self);
    if (how == 0) Py_RETURN_NONE;
    if (how == 2) return hand_back(fb_local_backward_ended, me, args, nargs);
    PyObject *node = args[0];
    int hand = 0;
    PyObject *run = running(self, &hand);
    if (run == NULL && !hand) Py_RETURN_NONE;
    if (hand) return hand_back(fb_local_backward_ended, me, args, nargs);
    PyObject *visits = SLOT(run, p_visits);
    Py_ssize_t n_visits = PyList_GET_SIZE(visits);
    if (n_visits == 0) Py_RETURN_NONE;
    PyObject *visit = last_visit(run);
    if (visit == NULL) return hand_back(fb_local_backward_ended, me, args, nargs);
    if (SLOT(visit, v_node) != node) Py_RETURN_NONE;
    PyObject *writes = SLOT(visit, v_writes), *children = SLOT(visit, v_children);
    Py_ssize_t n_writes = PyList_GET_SIZE(writes), n_children = 0;
    for (Py_ssize_t i = 0; i < n_writes; i++) {
        PyObject *fields = PyList_GET_ITEM(writes, i);
        if (!PyTuple_CheckExact(fields) || PyTuple_GET_SIZE(fields) != 10
            || (PyTuple_GET_ITEM(fields, 2) != Py_None && !PyLong_CheckExact(PyTuple_GET_ITEM(fields, 2))))
            return hand_back(fb_local_backward_ended, me, args, nargs);  /* (a position: None or an int) */
    }
    if (children != Py_None) {
        if (!PyLong_CheckExact(children)) return hand_back(fb_local_backward_ended, me, args, nargs);
        n_children = PyLong_AsSsize_t(children);
        if (n_children == -1 && PyErr_Occurred()) return failed(me);
        if (n_children < 0) return hand_back(fb_local_backward_ended, me, args, nargs);
    }
    /* visit = run.visits.pop() */
    Py_INCREF(visit);
    if (PyList_SetSlice(visits, n_visits - 1, n_visits, NULL) < 0) {
        Py_DECREF(visit);
        return failed(me);
    }
    int ok = 1;
    PyObject *ingrads = PyTuple_New(children == Py_None ? n_writes : n_children);
    if (ingrads == NULL) ok = 0;
    if (ok && children == Py_None) {  /* the contributions in write order */
        for (Py_ssize_t i = 0; i < n_writes; i++) {
            PyObject *contribution = PyTuple_GET_ITEM(PyList_GET_ITEM(writes, i), 6);
            Py_INCREF(contribution);
            PyTuple_SET_ITEM(ingrads, i, contribution);
        }
    } else if (ok) {  /* visit.ingrads(): each position's first write's contribution, None where none */
        for (Py_ssize_t i = 0; ok && i < n_writes; i++) {
            PyObject *fields = PyList_GET_ITEM(writes, i), *position = PyTuple_GET_ITEM(fields, 2);
            if (position == Py_None) continue;
            Py_ssize_t at = PyLong_AsSsize_t(position);
            if (at == -1 && PyErr_Occurred()) {  /* (beyond a Py_ssize_t: not below the children's count) */
                if (!PyErr_ExceptionMatches(PyExc_OverflowError)) { ok = 0; break; }
                PyErr_Clear();
                continue;
            }
            if (at >= 0 && at < n_children && PyTuple_GET_ITEM(ingrads, at) == NULL)
                PyTuple_SET_ITEM(ingrads, at, Py_NewRef(PyTuple_GET_ITEM(fields, 6)));
        }
        for (Py_ssize_t i = 0; i < n_children; i++)
            if (PyTuple_GET_ITEM(ingrads, i) == NULL) PyTuple_SET_ITEM(ingrads, i, Py_NewRef(Py_None));
    }
    if (ok) {
        PyObject *query = SLOT(run, p_number), *label = SLOT(visit, v_label), *outgrad = SLOT(visit, v_outgrad);
        Py_ssize_t n = PyTuple_GET_SIZE(ingrads);
        if (n == 1 && outgrad == Py_None && PyTuple_GET_ITEM(ingrads, 0) == Py_None) {
            PyObject *items[] = {label};
            ok = extend(self->values, H_VJP1, query, items, 1) == 0;
        } else if (n == 1) {
            PyObject *items[] = {label, outgrad, PyTuple_GET_ITEM(ingrads, 0)};
            ok = extend(self->values, H_VJP2, query, items, 3) == 0;
        } else {
            PyObject *count = PyLong_FromSsize_t(n);
            PyObject *items[] = {label, outgrad, count};
            ok = count != NULL && extend(self->values, H_VJP, query, items, 3) == 0;
            Py_XDECREF(count);
            for (Py_ssize_t i = 0; ok && i < n; i++) ok = PyList_Append(self->values, PyTuple_GET_ITEM(ingrads, i)) == 0;
        }
    }
    /* each write's add_outgrads event, in order (the list read again: a write's event cannot change it) */
    for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(writes); i++)
        ok = write_add_outgrads(self->values, PyList_GET_ITEM(writes, i)) == 0;
    Py_XDECREF(ingrads);
    visit_done(visit);
    Py_DECREF(visit);
    if (!ok) return failed(me);
    Py_RETURN_NONE;
}

/* ---- the type ---- */

static int core_traverse(Core *self, visitproc visit, void *arg) {
    Py_VISIT(self->live);
    Py_VISIT(self->thread);
    Py_VISIT(self->values);
    Py_VISIT(self->nothing);
    Py_VISIT(self->keep_sites);
    Py_VISIT(self->labels);
    Py_VISIT(self->names);
    Py_VISIT(self->children);
    Py_VISIT(self->alive);
    Py_VISIT(self->passes);
    return 0;
}

static int core_clear(Core *self) {
    Py_CLEAR(self->live);
    Py_CLEAR(self->thread);
    Py_CLEAR(self->values);
    Py_CLEAR(self->nothing);
    Py_CLEAR(self->keep_sites);
    Py_CLEAR(self->labels);
    Py_CLEAR(self->names);
    Py_CLEAR(self->children);
    Py_CLEAR(self->alive);
    Py_CLEAR(self->passes);
    return 0;
}

static void core_dealloc(Core *self) {
    PyObject_GC_UnTrack(self);
    core_clear(self);
    for (int i = 0; i < VISIT_POOL; i++)  /* (the visits only the pool holds let go with a recorder: none kept alive) */
        if (visit_pool[i] != NULL && Py_REFCNT(visit_pool[i]) == 1) Py_CLEAR(visit_pool[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define MEMBER(name, field) {name, T_OBJECT_EX, offsetof(Core, field), 0, NULL}
static PyMemberDef core_members[] = {
    MEMBER("live", live), MEMBER("thread", thread), MEMBER("values", values), MEMBER("nothing", nothing),
    MEMBER("keep_sites", keep_sites), MEMBER("_labels", labels), MEMBER("_names", names),
    MEMBER("_children", children), MEMBER("_alive", alive), MEMBER("_passes", passes),
    {"_count", T_PYSSIZET, offsetof(Core, count), 0, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyMethodDef core_methods[] = {
    {"node_created", (PyCFunction)(void (*)(void))node_created, METH_FASTCALL, NULL},
    {"local_backward_started", (PyCFunction)(void (*)(void))local_backward_started, METH_FASTCALL, NULL},
    {"grad_written", (PyCFunction)(void (*)(void))grad_written, METH_FASTCALL, NULL},
    {"local_backward_ended", (PyCFunction)(void (*)(void))local_backward_ended, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._recorder.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The recorder's hot state and the hot path of its four per-value callbacks (recorder.py's Recorder).",
    .tp_traverse = (traverseproc)core_traverse,
    .tp_clear = (inquiry)core_clear,
    .tp_dealloc = (destructor)core_dealloc,
    .tp_members = core_members,
    .tp_methods = core_methods,
    .tp_new = PyType_GenericNew,
};

/* ---- configure ---- */

/* where CPython keeps the slot ``name`` of ``cls`` (a class with __slots__), or -1 with an error set */
static Py_ssize_t slot_offset(PyTypeObject *cls, const char *name) {
    PyObject *descriptor = PyObject_GetAttrString((PyObject *)cls, name);
    if (descriptor == NULL) return -1;
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(descriptor, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descriptor)->d_member;
        if (member->type == T_OBJECT_EX) offset = member->offset;
    }
    Py_DECREF(descriptor);
    if (offset < 0) PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", cls->tp_name, name);
    return offset;
}

static PyObject *configure(PyObject *module, PyObject *args) {
    PyObject *methods, *classes, *constants;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyTuple_Type, &methods, &PyTuple_Type, &classes, &PyTuple_Type, &constants))
        return NULL;
    PyObject *pass, *visit, *position_list;
    if (!PyArg_ParseTuple(methods, "OOOO", &fb_node_created, &fb_local_backward_started, &fb_grad_written,
                          &fb_local_backward_ended)
        || !PyArg_ParseTuple(classes, "O!O!", &PyType_Type, &pass, &PyType_Type, &visit)
        || !PyArg_ParseTuple(constants, "OO!O!O!OOOOOO!", &ndarray, &PyFrozenSet_Type, &scalars, &PyFrozenSet_Type,
                             &no_reference, &PyDict_Type, &heads, &mode, &level, &unary, &visits_form, &zero_form,
                             &PyTuple_Type, &position_list))
        return NULL;
    if (PyTuple_GET_SIZE(position_list) != 4) {
        PyErr_SetString(PyExc_ValueError, "the argnums of 0 to 3 children");
        return NULL;
    }
    PyObject *kept[] = {fb_node_created, fb_local_backward_started, fb_grad_written, fb_local_backward_ended, pass,
                        visit, ndarray, scalars, no_reference, heads, mode, level, unary, visits_form, zero_form};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) Py_INCREF(kept[i]);  /* (kept for good) */
    for (int i = 0; i < 4; i++) {
        positions[i] = PyTuple_GET_ITEM(position_list, i);
        Py_INCREF(positions[i]);
    }
    pass_type = (PyTypeObject *)pass;
    visit_type = (PyTypeObject *)visit;
    if ((p_number = slot_offset(pass_type, "number")) < 0 || (p_started = slot_offset(pass_type, "started")) < 0
        || (p_visited = slot_offset(pass_type, "visited")) < 0 || (p_visits = slot_offset(pass_type, "visits")) < 0
        || (p_grads = slot_offset(pass_type, "grads")) < 0 || (v_node = slot_offset(visit_type, "node")) < 0
        || (v_label = slot_offset(visit_type, "label")) < 0 || (v_outgrad = slot_offset(visit_type, "outgrad")) < 0
        || (v_children = slot_offset(visit_type, "children")) < 0
        || (v_writes = slot_offset(visit_type, "writes")) < 0)
        return NULL;
    int found[4] = {PySet_Contains(scalars, (PyObject *)&PyFloat_Type), PySet_Contains(scalars, (PyObject *)&PyLong_Type),
                    PySet_Contains(no_reference, (PyObject *)&PyFloat_Type),
                    PySet_Contains(no_reference, (PyObject *)&PyLong_Type)};
    if (found[0] < 0 || found[1] < 0 || found[2] < 0 || found[3] < 0) return NULL;
    numbers_scalar = found[0] && found[1];
    numbers_no_reference = found[2] && found[3];
    configured = 1;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure((node_created, local_backward_started, grad_written, local_backward_ended), (_Pass, _Visit), "
     "(ndarray, SCALARS, NO_REFERENCE, HEADS, REV, 0, UNARY, VISITS, the 0 of AddOutgrads' forms, _POSITIONS))"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_recorder",
                                    "The compiled twin of recorder.py: Core, the hot path of four callbacks.", -1,
                                    module_methods};

PyMODINIT_FUNC PyInit__recorder(void) {
    if ((s_fail = PyUnicode_InternFromString("fail")) == NULL || (s_comma = PyUnicode_FromString(",")) == NULL
        || (s_empty = PyUnicode_FromString("")) == NULL || (s_one = PyLong_FromLong(1)) == NULL)
        return NULL;
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
