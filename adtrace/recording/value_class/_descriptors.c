/* The compiled twin of descriptors.py (adtrace/recording/compiled.py): GradDescriptor, BackwardDescriptor and
 * RecordedLocalBackward, the hot path of a recorded value-class backward() (every .grad read and written, every
 * _backward read). descriptors.py stays the reference: it binds its own objects here at import (bind()), and
 * each C descriptor holds a pure-Python descriptor of the same hooks and storage (`reference`), which it calls
 * for every rare case (a .grad kept on the class, a value without __dict__, a write not micrograd's grad += c:
 * hooks.grad_written; a _backward missing; __delete__). Each function below says which Python lines it mirrors.
 * Only the documented C API of Python 3.10-3.13; no numpy C API (numbers are tracked through tracked.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include "_state.h"

/* ---- what descriptors.py binds (bind()): its own objects, the reference */
static PyObject *MISSING, *NOT_HELD, *TRACKED_NUMBER, *NUMBER_KINDS, *track, *plain, *PyGrad, *PyBackward, *PLUS;
static PyObject *s_state, *s_frames, *s_quiet, *s_ends, *s_addition, *s_in_place, *s_handed, *s_read, *s_unwritten,
    *s_children, *s_node, *s_grad_written, *s__plain, *s__owner, *s__state, *s_load, *s_load_or_missing,
    *s_no_local_backward, *s_dict, *s_get, *s_delete, *s_hooks, *s_storage, *s_local, *s_name, *s_slot, *s_active,
    *s_run;

static PyTypeObject RecordedLocalBackwardType;
static PyTypeObject *StateType;  /* _hooks.ThreadState (bound), or NULL: its fields read directly */
static PyTypeObject *FrameType;  /* _hooks.Frame (bound), or NULL: the fields of a frame of it (or a subclass) too */
static SlottedKind Slotted;  /* TRACKED_NUMBER's kind with slots (TrackedFloat), bound */

#define IS_STATE(state) (StateType != NULL && Py_TYPE(state) == StateType)
/* (hooks._Frame is a direct subclass: its base compared first, no walk of the MRO) */
#define IS_FRAME(frame) \
    (FrameType != NULL && (Py_TYPE(frame)->tp_base == FrameType || PyObject_TypeCheck(frame, FrameType)))

/* `frame.<field>` (a new reference): a compiled frame's field directly, else the attribute */
static PyObject *frame_get(PyObject *frame, PyObject *field, PyObject *name) {
    return field != NULL ? Py_NewRef(field) : PyObject_GetAttr(frame, name);
}
#define FRAME_GET(frame, field, name) \
    frame_get(frame, IS_FRAME(frame) ? FRAME_FIELD(frame, field) : NULL, name)

/* type(x) in UNTRACKED (tracked.py: int, float, NoneType, exactly) */
static int untracked(PyObject *x) { return PyLong_CheckExact(x) || PyFloat_CheckExact(x) || x == Py_None; }

/* value.__dict__ (a new reference): the value's own, else its class's answer (an AttributeError) */
static PyObject *instance_dict(PyObject *value) {
    if (Py_TYPE(value)->tp_dictoffset != 0)
        return PyObject_GenericGetDict(value, NULL);
    return PyObject_GetAttr(value, s_dict);
}

/* `found = value.__dict__.get(name, MISSING)`: a new reference, or NULL */
static PyObject *dict_get(PyObject *value, PyObject *name, PyObject *otherwise) {
    PyObject *dict = instance_dict(value);
    if (dict == NULL) return NULL;
    PyObject *found = PyDict_GetItemWithError(dict, name);
    if (found == NULL && PyErr_Occurred()) { Py_DECREF(dict); return NULL; }
    found = found ? found : otherwise;
    Py_INCREF(found);
    Py_DECREF(dict);
    return found;
}

/* truth of `obj.name` (state.frames, state.ends, state.quiet): 1, 0, or -1 */
static int attr_true(PyObject *obj, PyObject *name) {
    PyObject *x = PyObject_GetAttr(obj, name);
    if (x == NULL) return -1;
    int truth = PyObject_IsTrue(x);
    Py_DECREF(x);
    return truth;
}

/* truth of `state.quiet`: 1, 0, or -1 */
static int quiet_true(PyObject *state) {
    return IS_STATE(state) ? STATE_FIELD(state, quiet) != 0 : attr_true(state, s_quiet);
}

/* `state.quiet += step` */
static int add_quiet(PyObject *state, long step) {
    if (IS_STATE(state)) {
        STATE_FIELD(state, quiet) += step;
        return 0;
    }
    PyObject *quiet = PyObject_GetAttr(state, s_quiet);
    if (quiet == NULL) return -1;
    long now = PyLong_CheckExact(quiet) ? PyLong_AsLong(quiet) : -1;  /* (an exact small int: its sum made directly) */
    if (now >= 0 && now < 1000000) {
        Py_DECREF(quiet);
        PyObject *sum = PyLong_FromLong(now + step);
        int failed = sum == NULL ? -1 : PyObject_SetAttr(state, s_quiet, sum);
        Py_XDECREF(sum);
        return failed;
    }
    if (now == -1 && PyErr_Occurred()) PyErr_Clear();  /* (an int too large for a long: the generic += below) */
    PyObject *by = PyLong_FromLong(step > 0 ? step : -step);
    PyObject *sum = by ? (step > 0 ? PyNumber_InPlaceAdd(quiet, by) : PyNumber_InPlaceSubtract(quiet, by)) : NULL;
    Py_DECREF(quiet);
    Py_XDECREF(by);
    if (sum == NULL) return -1;
    int failed = PyObject_SetAttr(state, s_quiet, sum);
    Py_DECREF(sum);
    return failed;
}

/* `x, obj.name = obj.name, None`: the old value (new reference), or NULL */
static PyObject *take(PyObject *obj, PyObject *name) {
    if (IS_STATE(obj)) {  /* (the compiled state's field: its reference handed on, None put in its place) */
        PyObject **field = name == s_addition ? &STATE_FIELD(obj, addition) : &STATE_FIELD(obj, in_place);
        PyObject *x = *field;
        *field = Py_NewRef(Py_None);
        return x;
    }
    PyObject *x = PyObject_GetAttr(obj, name);
    if (x == NULL) return NULL;
    if (PyObject_SetAttr(obj, name, Py_None) < 0) { Py_DECREF(x); return NULL; }
    return x;
}

/* ---- the descriptors' common part: what __init__ sets (self.hooks, self.storage, self.local, self.name, ...) */
typedef struct {
    PyObject_HEAD
    PyObject *reference;  /* the pure-Python descriptor of the same hooks and storage: every rare case */
    PyObject *hooks, *storage, *local, *name, *slot;  /* slot: NULL for None (the value's __dict__) */
    PyObject *active, *run;  /* GradDescriptor's hooks.active; BackwardDescriptor's hooks.run_local_backward */
    int ready;  /* __init__ returned: every field above is set (a descriptor made by __new__ alone is refused) */
    PyObject *state;  /* local.state as last read, in the thread whose state's unique id is `thread` (or NULL) */
    PyObject *frames, *ends;  /* its .frames and .ends lists (made once by _ThreadState, never replaced), or NULL */
    uint64_t thread;
    SinkCache sinks;  /* GradDescriptor's: the sink's grad_written, read once per sink */
} Descriptor;

/* `self.local.state` (a new reference): the thread's _ThreadState, which hooks._PerThread makes once per thread and
 * never replaces, kept from the last read in the same thread (a threading.local's attribute costs ~500 instructions;
 * the id of a Python thread state is never reused) */
static PyObject *local_state(Descriptor *self) {
    uint64_t thread = PyThreadState_GetID(PyThreadState_Get());
    if (self->state != NULL && self->thread == thread) return Py_NewRef(self->state);
    PyObject *state = PyObject_GetAttr(self->local, s_state);
    if (state == NULL) return NULL;
    PyObject *frames = PyObject_GetAttr(state, s_frames), *ends = frames ? PyObject_GetAttr(state, s_ends) : NULL;
    if (ends == NULL) {
        Py_XDECREF(frames);
        Py_DECREF(state);
        return NULL;
    }
    if (!PyList_CheckExact(frames) || !PyList_CheckExact(ends)) {  /* (not _ThreadState's lists: read each time) */
        Py_CLEAR(frames);
        Py_CLEAR(ends);
    }
    Py_XSETREF(self->state, Py_NewRef(state));
    Py_XSETREF(self->frames, frames);
    Py_XSETREF(self->ends, ends);
    self->thread = thread;
    return state;
}

/* truth of `state.<list>` (frames, ends) of the state local_state gave: the kept list's length */
static int list_true(Descriptor *self, PyObject *state, PyObject *name) {
    PyObject *list = state == self->state ? (name == s_frames ? self->frames : self->ends) : NULL;
    return list != NULL ? PyList_GET_SIZE(list) > 0 : attr_true(state, name);
}

/* `state.frames` (a new reference) of the state local_state gave: the list kept with it */
static PyObject *frames_of(Descriptor *self, PyObject *state) {
    if (state == self->state && self->frames != NULL) return Py_NewRef(self->frames);
    return PyObject_GetAttr(state, s_frames);
}

/* a descriptor whose __init__ did not run or failed: refused (its fields may be NULL) */
static int not_ready(Descriptor *self) {
    if (self->ready) return 0;
    PyErr_Format(PyExc_TypeError, "%s was not initialised (made without __init__, or its __init__ failed)",
                 Py_TYPE(self)->tp_name);
    return 1;
}

/* __init__(self, hooks, storage): the reference made, and what it read copied (the same objects) */
static int descriptor_init(Descriptor *self, PyObject *args, PyObject *kwargs, PyObject *reference_class) {
    PyObject *hooks, *storage;
    static char *names[] = {"hooks", "storage", NULL};
    self->ready = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO", names, &hooks, &storage)) return -1;
    if (reference_class == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "adtrace's _descriptors twin is not bound (descriptors.py binds it)");
        return -1;
    }
    PyObject *reference = PyObject_CallFunctionObjArgs(reference_class, hooks, storage, NULL);
    if (reference == NULL) return -1;
    Py_XSETREF(self->reference, reference);
    Py_INCREF(hooks);
    Py_XSETREF(self->hooks, hooks);
    Py_INCREF(storage);
    Py_XSETREF(self->storage, storage);
    PyObject *local = PyObject_GetAttr(hooks, s_local);  /* (each checked: no call with an error pending) */
    if (local == NULL) return -1;
    Py_XSETREF(self->local, local);
    Py_CLEAR(self->state);
    Py_CLEAR(self->frames);
    Py_CLEAR(self->ends);
    PyObject *name = PyObject_GetAttr(storage, s_name);
    if (name == NULL) return -1;
    Py_XSETREF(self->name, name);
    PyObject *slot = PyObject_GetAttr(storage, s_slot);
    if (slot == NULL) return -1;
    if (slot == Py_None) Py_CLEAR(slot);
    Py_XSETREF(self->slot, slot);
    if (slot != NULL && Py_TYPE(slot)->tp_descr_get == NULL) {
        PyErr_SetString(PyExc_TypeError, "a storage's slot must be a descriptor");
        return -1;
    }
    return 0;
}

static int descriptor_traverse(Descriptor *self, visitproc visit, void *arg) {
    Py_VISIT(self->reference); Py_VISIT(self->hooks); Py_VISIT(self->storage); Py_VISIT(self->local);
    Py_VISIT(self->name); Py_VISIT(self->slot); Py_VISIT(self->active); Py_VISIT(self->run); Py_VISIT(self->state); Py_VISIT(self->frames);
    Py_VISIT(self->ends);
    SINK_VISIT(self->sinks);
    return 0;
}

static int descriptor_clear(Descriptor *self) {
    Py_CLEAR(self->reference); Py_CLEAR(self->hooks); Py_CLEAR(self->storage); Py_CLEAR(self->local);
    Py_CLEAR(self->name); Py_CLEAR(self->slot); Py_CLEAR(self->active); Py_CLEAR(self->run); Py_CLEAR(self->state); Py_CLEAR(self->frames);
    Py_CLEAR(self->ends);
    sink_forget(&self->sinks);
    return 0;
}

static void descriptor_dealloc(Descriptor *self) {
    PyObject_GC_UnTrack(self);
    descriptor_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* value.__dict__.get(self.name, MISSING) if self.slot is None else self.slot.__get__(value) */
static PyObject *own_entry(Descriptor *self, PyObject *value) {
    if (self->slot == NULL) return dict_get(value, self->name, MISSING);
    return Py_TYPE(self->slot)->tp_descr_get(self->slot, value, (PyObject *)Py_TYPE(value));
}

/* storage.store written out: value.__dict__[self.name] = x if self.slot is None else self.slot.__set__(value, x) */
static int store(Descriptor *self, PyObject *value, PyObject *x) {
    if (self->slot != NULL) {
        descrsetfunc set = Py_TYPE(self->slot)->tp_descr_set;
        if (set == NULL) {
            PyObject *done = PyObject_CallMethod(self->slot, "__set__", "OO", value, x);
            Py_XDECREF(done);
            return done ? 0 : -1;
        }
        return set(self->slot, value, x);
    }
    PyObject *dict = instance_dict(value);
    if (dict == NULL) return -1;
    int failed = PyDict_SetItem(dict, self->name, x);
    Py_DECREF(dict);
    return failed;
}

/* __delete__: self.storage.delete(value), the reference's */
static int delete(Descriptor *self, PyObject *value) {
    PyObject *done = PyObject_CallMethodObjArgs(self->reference, s_delete, value, NULL);
    Py_XDECREF(done);
    return done ? 0 : -1;
}

static PyMemberDef descriptor_members[] = {
    {"reference", T_OBJECT, offsetof(Descriptor, reference), READONLY, "the pure-Python descriptor (rare cases)"},
    {"hooks", T_OBJECT, offsetof(Descriptor, hooks), READONLY, NULL},
    {"storage", T_OBJECT, offsetof(Descriptor, storage), READONLY, NULL},
    {"local", T_OBJECT, offsetof(Descriptor, local), READONLY, NULL},
    {"name", T_OBJECT, offsetof(Descriptor, name), READONLY, NULL},
    {"slot", T_OBJECT, offsetof(Descriptor, slot), READONLY, NULL},  /* (T_OBJECT: NULL reads as None) */
    {NULL}
};

/* ---- GradDescriptor */

static int grad_init(Descriptor *self, PyObject *args, PyObject *kwargs) {
    if (descriptor_init(self, args, kwargs, PyGrad) < 0) return -1;
    Py_XSETREF(self->active, PyObject_GetAttr(self->hooks, s_active));  /* self.active = hooks.active */
    self->ready = self->active != NULL;
    return self->ready ? 0 : -1;
}

/* whether `kind(grad)` is what float_subtype_new makes (a float subclass that defines no __new__ nor __init__, as
 * tracked.py's TrackedFloat, called with an exact float): then float_made does it, without the call's machinery */
static int made_float(PyObject *kind, PyObject *grad) {
    PyTypeObject *type = (PyTypeObject *)kind;
    return PyFloat_CheckExact(grad) && PyType_Check(kind) && PyType_IsSubtype(type, &PyFloat_Type)
        && type->tp_new == PyFloat_Type.tp_new && type->tp_init == PyBaseObject_Type.tp_init;
}

static PyObject *float_made(PyObject *kind, PyObject *grad) {
    PyTypeObject *type = (PyTypeObject *)kind;
    PyObject *made = type->tp_alloc(type, 0);
    if (made != NULL) ((PyFloatObject *)made)->ob_fval = PyFloat_AS_DOUBLE(grad);
    return made;
}

/* Tracked numbers made again: `kind(grad)` with `hold` is an allocation (and a TrackedInt's a __dict__ too) per .grad
 * read inside a local backward, each dropped when it returns. A pool keeps the last few made of TrackedFloat (any
 * float: the value set in place, as float_made does) and of TrackedInt for an int 0 (micrograd's `self.grad = 0`,
 * its __dict__ kept); one is taken again only when the pool holds the only reference to it (and to its __dict__):
 * nothing else can see that it is not new. Its attributes are then set as hold sets a new one's. (No Python
 * counterpart: tracked.py makes each; the pools are let go with the sink, GradDescriptor.forget.) */
static PyObject *float_pool[POOL], *int_pool[POOL];
static PyObject *ZERO;  /* the int 0: CPython's one small int 0 (an int 0 made otherwise is tracked as before) */

/* a number of `pool` of type `kind` that only the pool holds (borrowed), or NULL */
static PyObject *pooled(PyObject **pool, PyObject *kind) {
    for (int i = 0; i < POOL && pool[i] != NULL; i++)
        if (Py_REFCNT(pool[i]) == 1 && (PyObject *)Py_TYPE(pool[i]) == kind) return pool[i];
    return NULL;
}

/* `made` kept by the pool if it has room */
static void keep_pooled(PyObject **pool, PyObject *made) {
    for (int i = 0; i < POOL; i++)
        if (pool[i] == NULL) {
            pool[i] = Py_NewRef(made);
            return;
        }
}

static void pools_clear(void) {
    for (int i = 0; i < POOL; i++) {
        Py_CLEAR(float_pool[i]);
        Py_CLEAR(int_pool[i]);
    }
}

/* a pooled TrackedInt 0's __dict__ (a new reference) when only it holds that dict, else NULL (no error) */
static PyObject *pooled_dict(PyObject *number) {
    PyObject *attributes = PyObject_GenericGetDict(number, NULL);
    if (attributes != NULL && PyDict_CheckExact(attributes) && Py_REFCNT(attributes) == 2) return attributes;
    Py_XDECREF(attributes);
    PyErr_Clear();
    return NULL;
}

/* GradDescriptor.__get__, the lines inside `if state.frames and not state.quiet:` (state: local.state, listening):
 * the number read, tracked; the tracked one put in the frame's handed, or the value's id in its read */
static PyObject *grad_read_in_frame(Descriptor *self, PyObject *value, PyObject *grad, PyObject *state) {
    PyObject *frames = frames_of(self, state), *frame = NULL, *tracked = NULL;
    if (frames == NULL) return NULL;
    Py_ssize_t size = PyList_CheckExact(frames) ? PyList_GET_SIZE(frames) : 0;  /* frame = state.frames[-1] */
    frame = size > 0 ? Py_NewRef(PyList_GET_ITEM(frames, size - 1)) : PySequence_GetItem(frames, -1);
    Py_DECREF(frames);
    if (frame == NULL) return NULL;
    PyObject *kind = PyDict_GetItemWithError(TRACKED_NUMBER, (PyObject *)Py_TYPE(grad));  /* TRACKED_NUMBER.get */
    if (kind != NULL) {  /* tracked = kind(grad); hold(tracked, grad, value, state) */
        PyObject *attributes = NULL, *again;  /* (a pooled one taken again, else a new one, pooled if there is room) */
        int zero = grad == ZERO && ((PyTypeObject *)kind)->tp_dictoffset != 0;
        if ((PyTypeObject *)kind == Slotted.type && PyFloat_CheckExact(grad) && (again = pooled(float_pool, kind))) {
            ((PyFloatObject *)again)->ob_fval = PyFloat_AS_DOUBLE(grad);
            tracked = Py_NewRef(again);
        } else if (zero && (again = pooled(int_pool, kind)) != NULL && (attributes = pooled_dict(again)) != NULL) {
            tracked = Py_NewRef(again);
        } else {
            tracked = made_float(kind, grad) ? float_made(kind, grad) : PyObject_CallOneArg(kind, grad);
            if (tracked != NULL && Py_TYPE(tracked) == Slotted.type && PyFloat_CheckExact(grad))
                keep_pooled(float_pool, tracked);
            else if (tracked != NULL && zero && (PyObject *)Py_TYPE(tracked) == kind)
                keep_pooled(int_pool, tracked);
        }
        if (tracked != NULL && Py_TYPE(tracked) == Slotted.type) {  /* (its slots, set directly) */
            Py_XSETREF(SLOT_AT(tracked, Slotted.plain), Py_NewRef(grad));
            Py_XSETREF(SLOT_AT(tracked, Slotted.owner), Py_NewRef(value));
            Py_XSETREF(SLOT_AT(tracked, Slotted.state), Py_NewRef(state));
        } else {
            if (attributes == NULL) attributes = tracked ? instance_dict(tracked) : NULL;
            int failed = attributes == NULL || PyDict_SetItem(attributes, s__plain, grad) < 0
                || PyDict_SetItem(attributes, s__owner, value) < 0 || PyDict_SetItem(attributes, s__state, state) < 0;
            Py_XDECREF(attributes);
            if (failed) Py_CLEAR(tracked);
        }
    } else if (!PyErr_Occurred()) {  /* tracked = track(grad, value, state) */
        tracked = PyObject_CallFunctionObjArgs(track, grad, value, state, NULL);
    }
    if (tracked != NULL && tracked != grad) {  /* frame.handed.append(tracked) */
        PyObject *handed = FRAME_GET(frame, handed, s_handed), *appended = NULL;
        int failed = handed == NULL;
        if (!failed && PyList_CheckExact(handed)) {
            failed = PyList_Append(handed, tracked) < 0;
        } else if (!failed) {
            appended = PyObject_CallMethod(handed, "append", "O", tracked);
            failed = appended == NULL;
            Py_XDECREF(appended);
        }
        Py_XDECREF(handed);
        if (failed) Py_CLEAR(tracked);
    } else if (tracked != NULL) {  /* if frame.read is None: frame.read = set();  frame.read.add(id(value)) */
        PyObject *read = FRAME_GET(frame, read, s_read), *id = PyLong_FromVoidPtr(value);
        if (read == Py_None) {
            Py_SETREF(read, PySet_New(NULL));
            if (read != NULL && PyObject_SetAttr(frame, s_read, read) < 0) Py_CLEAR(read);
        }
        int failed = read == NULL || id == NULL || PySet_Add(read, id) < 0;
        Py_XDECREF(read);
        Py_XDECREF(id);
        if (failed) Py_CLEAR(tracked);
    }
    Py_DECREF(frame);
    return tracked;
}

/* GradDescriptor.__get__ */
static PyObject *grad_get(Descriptor *self, PyObject *value, PyObject *owner) {
    if (value == NULL || value == Py_None) return Py_NewRef(self);  /* if value is None: return self */
    if (not_ready(self)) return NULL;
    PyObject *grad = own_entry(self, value);
    if (grad == NULL) return NULL;
    if (grad == MISSING) {  /* grad = self.storage.load(value) */
        Py_DECREF(grad);
        grad = PyObject_CallMethodObjArgs(self->storage, s_load, value, NULL);
        if (grad == NULL) return NULL;
    }
    PyObject *state = local_state(self);
    if (state == NULL) { Py_DECREF(grad); return NULL; }
    int frames = list_true(self, state, s_frames), quiet = frames > 0 ? quiet_true(state) : 0;
    PyObject *result = grad;  /* (return grad: its reference handed on) */
    if (frames < 0 || quiet < 0 || (frames && !quiet)) {  /* if state.frames and not state.quiet: */
        result = frames < 0 || quiet < 0 ? NULL : grad_read_in_frame(self, value, grad, state);
        Py_DECREF(grad);
    }
    Py_DECREF(state);
    return result;
}

/* GradDescriptor.__set__'s micrograd `grad += c` inside a local backward (from `if frames and addition is not None
 * and addition[0] is grad and addition[3] == "+":`): 1 told here, 0 not that case (hooks.grad_written tells it),
 * -1 an error. frames: state.frames, true. */
static int told_addition(Descriptor *self, PyObject *value, PyObject *grad, PyObject *previous,
                         PyObject *addition, PyObject *state, PyObject *frames) {
    PyObject *sum = NULL, *sign = NULL, *left = NULL, *right = NULL, *attributes = NULL, *owner = NULL;
    PyObject *held = NULL, *frame = NULL, *children = NULL, *unwritten = NULL, *position = Py_None, *sink = NULL;
    int told = -1, is;
    int quadruple = PyTuple_CheckExact(addition) && PyTuple_GET_SIZE(addition) == 4;  /* (its items read directly) */
    if ((sum = quadruple ? Py_NewRef(PyTuple_GET_ITEM(addition, 0)) : PySequence_GetItem(addition, 0)) == NULL)
        goto done;
    if (sum != grad) { told = 0; goto done; }
    if ((sign = quadruple ? Py_NewRef(PyTuple_GET_ITEM(addition, 3)) : PySequence_GetItem(addition, 3)) == NULL)
        goto done;
    if (sign != PLUS && (is = PyObject_RichCompareBool(sign, PLUS, Py_EQ)) <= 0) { told = is; goto done; }
    /* left, right = addition[1], addition[2]; kind = type(right) */
    if (quadruple) {
        left = Py_NewRef(PyTuple_GET_ITEM(addition, 1));
        right = Py_NewRef(PyTuple_GET_ITEM(addition, 2));
    } else if ((left = PySequence_GetItem(addition, 1)) == NULL || (right = PySequence_GetItem(addition, 2)) == NULL) {
        goto done;
    }
    PyObject *kind = (PyObject *)Py_TYPE(right);
    /* if type(left) in NUMBER_KINDS and (kind in UNTRACKED or kind in NUMBER_KINDS): */
    if ((is = PySet_Contains(NUMBER_KINDS, (PyObject *)Py_TYPE(left))) <= 0) { told = is; goto done; }
    int right_untracked = untracked(right);
    if (!right_untracked && (is = PySet_Contains(NUMBER_KINDS, kind)) <= 0) { told = is; goto done; }
    /* held(left, "_owner") is value and held(left, "_plain", NOT_HELD) is previous */
    if (Py_TYPE(left) == Slotted.type) {  /* (its slots; borrowed: left holds them) */
        owner = SLOT_AT(left, Slotted.owner);
        held = SLOT_AT(left, Slotted.plain);
    } else {  /* (its __dict__'s entries; borrowed: attributes holds them) */
        if ((attributes = instance_dict(left)) == NULL) goto done;
        owner = PyDict_GetItemWithError(attributes, s__owner);
        if (owner == NULL && PyErr_Occurred()) goto done;
        held = owner == value ? PyDict_GetItemWithError(attributes, s__plain) : NULL;
        if (held == NULL && PyErr_Occurred()) goto done;
    }
    if ((owner ? owner : Py_None) != value) { told = 0; goto done; }
    if ((held ? held : NOT_HELD) != previous) { told = 0; goto done; }
    /* frame = frames[-1]; position, children = None, frame.children (frame.position, written out) */
    Py_ssize_t size = PyList_CheckExact(frames) ? PyList_GET_SIZE(frames) : 0;
    if ((frame = size > 0 ? Py_NewRef(PyList_GET_ITEM(frames, size - 1)) : PySequence_GetItem(frames, -1)) == NULL
        || (children = FRAME_GET(frame, children, s_children)) == NULL
        || (unwritten = FRAME_GET(frame, unwritten, s_unwritten)) == NULL)
        goto done;
    /* (frame.position(value), written out for a mask of a long: else hooks.grad_written does it all) */
    long long mask = PyLong_CheckExact(unwritten) ? PyLong_AsLongLong(unwritten) : -1;
    if (mask < 0 || mask >= (1LL << 62)) {
        if (PyErr_Occurred()) PyErr_Clear();
        told = 0;
        goto done;
    }
    for (int at = 0; mask >> at; at++) {  /* the first unwritten position of value among the children */
        if (!(mask >> at & 1)) continue;
        PyObject *child = PyTuple_CheckExact(children) && at < PyTuple_GET_SIZE(children)
            ? Py_NewRef(PyTuple_GET_ITEM(children, at)) : PySequence_GetItem(children, at);
        Py_XDECREF(child);
        if (child == NULL) goto done;
        if (child == value) {  /* frame.unwritten = unwritten & ~(1 << at) */
            PyObject *left_unwritten = PyLong_FromLongLong(mask & ~(1LL << at));
            int failed = left_unwritten == NULL;
            if (!failed && IS_FRAME(frame))  /* (the compiled frame's field: the reference handed on) */
                Py_XSETREF(FRAME_FIELD(frame, unwritten), Py_NewRef(left_unwritten));
            else if (!failed)
                failed = PyObject_SetAttr(frame, s_unwritten, left_unwritten) < 0;
            Py_XDECREF(left_unwritten);
            if (failed || (position = PyLong_FromLong(at)) == NULL) { position = Py_None; goto done; }
            break;
        }
    }
    if (PyContextVar_Get(self->active, NULL, &sink) < 0) goto done;  /* sink = self.active.get() */
    if (sink != NULL && sink != Py_None) {  /* state.quiet += 1; try: sink.grad_written(...) finally: quiet -= 1 */
        if (add_quiet(state, 1) < 0) goto done;
        PyObject *node = FRAME_GET(frame, node, s_node), *contribution = NULL, *called = NULL;
        if (node != NULL)
            contribution = right_untracked ? Py_NewRef(right)
                : Py_TYPE(right) == Slotted.type && SLOT_AT(right, Slotted.plain) != NULL
                ? Py_NewRef(SLOT_AT(right, Slotted.plain)) : PyObject_GetAttr(right, s__plain);
        PyObject *method = contribution == NULL ? NULL : sink_callback(&self->sinks, sink, 0, s_grad_written);
        if (method != NULL) {  /* (read once per sink) */
            PyObject *call[8] = {NULL, node, value, position, previous, contribution, grad, Py_True};
            called = PyObject_Vectorcall(method, call + 1, 7 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
            Py_DECREF(method);
        }
        Py_XDECREF(node);
        Py_XDECREF(contribution);
        Py_XDECREF(called);
        PyObject *type, *error, *traceback;
        PyErr_Fetch(&type, &error, &traceback);
        if (add_quiet(state, -1) < 0) {
            Py_XDECREF(type); Py_XDECREF(error); Py_XDECREF(traceback);
            goto done;
        }
        PyErr_Restore(type, error, traceback);
        if (called == NULL) goto done;
    }
    told = 1;
done:
    if (position != Py_None) Py_DECREF(position);
    Py_XDECREF(sum); Py_XDECREF(sign); Py_XDECREF(left); Py_XDECREF(right); Py_XDECREF(attributes);
    Py_XDECREF(frame); Py_XDECREF(children); Py_XDECREF(unwritten);
    Py_XDECREF(sink);
    return told;
}

/* GradDescriptor.__set__, after `if not state.ends or state.quiet: ... return` (grad plain, state listening) */
static int grad_written(Descriptor *self, PyObject *value, PyObject *grad, PyObject *state) {
    PyObject *previous, *addition = NULL, *in_place = NULL, *frames = NULL;
    int result = -1;
    /* previous = value.__dict__.get(self.name, MISSING) if self.slot is None else MISSING */
    previous = self->slot == NULL ? dict_get(value, self->name, MISSING) : Py_NewRef(MISSING);
    if (previous == NULL) return -1;
    if (previous == MISSING) {  /* previous = self.storage.load_or_missing(value) */
        Py_DECREF(previous);
        previous = PyObject_CallMethodObjArgs(self->storage, s_load_or_missing, value, NULL);
        if (previous == NULL) return -1;
    }
    /* addition, state.addition = state.addition, None; in_place, state.in_place = state.in_place, None */
    if ((addition = take(state, s_addition)) == NULL || (in_place = take(state, s_in_place)) == NULL) goto done;
    if (store(self, value, grad) < 0) goto done;
    if (grad == previous && in_place == grad) { result = 0; goto done; }  /* (self.grad += c in place: told) */
    if ((frames = frames_of(self, state)) == NULL) goto done;
    int has_frames = PyObject_IsTrue(frames);
    if (has_frames < 0) goto done;
    if (has_frames && addition != Py_None) {
        int told = told_addition(self, value, grad, previous, addition, state, frames);
        if (told != 0) { result = told > 0 ? 0 : -1; goto done; }
    }
    /* self.hooks.grad_written(value, previous, grad, addition, state) */
    PyObject *called = PyObject_CallMethodObjArgs(self->hooks, s_grad_written, value, previous, grad, addition, state,
                                                  NULL);
    Py_XDECREF(called);
    result = called ? 0 : -1;
done:
    Py_DECREF(previous); Py_XDECREF(addition); Py_XDECREF(in_place); Py_XDECREF(frames);
    return result;
}

/* GradDescriptor.__set__ (and __delete__: grad NULL) */
static int grad_set(Descriptor *self, PyObject *value, PyObject *grad) {
    if (not_ready(self)) return -1;
    if (grad == NULL) return delete(self, value);
    if (!untracked(grad)) {  /* if type(grad) not in UNTRACKED: grad = plain(grad) */
        grad = PyObject_CallOneArg(plain, grad);
        if (grad == NULL) return -1;
    } else {
        Py_INCREF(grad);
    }
    int result = -1;
    PyObject *state = local_state(self);
    if (state == NULL) goto done;
    int ends = list_true(self, state, s_ends), quiet = ends > 0 ? quiet_true(state) : 0;
    if (ends < 0 || quiet < 0) goto done;
    if (!ends || quiet)  /* if not state.ends or state.quiet: store; return */
        result = store(self, value, grad);
    else
        result = grad_written(self, value, grad, state);
done:
    Py_XDECREF(state);
    Py_DECREF(grad);
    return result;
}

/* forget(): the sink's callbacks kept let go (on the hooks' undo: a sink is not kept alive by hooks taken out) */
static PyObject *descriptor_forget(Descriptor *self, PyObject *unused) {
    sink_forget(&self->sinks);
    pools_clear();
    Py_RETURN_NONE;
}

static PyMethodDef grad_methods[] = {
    {"forget", (PyCFunction)descriptor_forget, METH_NOARGS, "the sink's callbacks kept, let go"},
    {NULL},
};

static PyTypeObject GradDescriptorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._descriptors.GradDescriptor",
    .tp_doc = "descriptors.GradDescriptor, compiled: value.grad, tracked inside a recorded _backward, its writes told.",
    .tp_basicsize = sizeof(Descriptor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)grad_init,
    .tp_dealloc = (destructor)descriptor_dealloc,
    .tp_traverse = (traverseproc)descriptor_traverse,
    .tp_clear = (inquiry)descriptor_clear,
    .tp_members = descriptor_members,
    .tp_descr_get = (descrgetfunc)grad_get,
    .tp_descr_set = (descrsetfunc)grad_set,
    .tp_methods = grad_methods,
};

/* ---- BackwardDescriptor */

static int backward_init(Descriptor *self, PyObject *args, PyObject *kwargs) {
    if (descriptor_init(self, args, kwargs, PyBackward) < 0) return -1;
    Py_XSETREF(self->run, PyObject_GetAttr(self->hooks, s_run));  /* self.run = hooks.run_local_backward */
    self->ready = self->run != NULL;
    return self->ready ? 0 : -1;
}

static PyObject *recorded_local_backward(PyObject *run, PyObject *node, PyObject *closure);

/* BackwardDescriptor.__get__ */
static PyObject *backward_get(Descriptor *self, PyObject *value, PyObject *owner) {
    if (value == NULL || value == Py_None) return Py_NewRef(self);
    if (not_ready(self)) return NULL;
    PyObject *state = local_state(self);  /* listening = state.ends and not state.quiet */
    if (state == NULL) return NULL;
    int ends = list_true(self, state, s_ends), quiet = ends > 0 ? quiet_true(state) : 0;
    Py_DECREF(state);
    if (ends < 0 || quiet < 0) return NULL;
    int listening = ends && !quiet;
    /* closure = value.__dict__[self.name] if self.slot is None else self.slot.__get__(value) */
    PyObject *closure = self->slot == NULL
        ? (Py_TYPE(value)->tp_dictoffset != 0 ? dict_get(value, self->name, MISSING) : Py_NewRef(MISSING))
        : own_entry(self, value);
    if (closure == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        closure = Py_NewRef(MISSING);
    }
    if (closure == NULL) return NULL;
    if (closure == MISSING) {  /* (KeyError, AttributeError): the reference's storage.load and what follows */
        Py_DECREF(closure);
        return PyObject_CallMethod(self->reference, "__get__", "OO", value, owner ? owner : (PyObject *)Py_TYPE(value));
    }
    if (!listening) return closure;
    if (closure == Py_None) {  /* a leaf's None: self.hooks.no_local_backward(value); return None */
        PyObject *done = PyObject_CallMethodObjArgs(self->hooks, s_no_local_backward, value, NULL);
        if (done == NULL) { Py_DECREF(closure); return NULL; }
        Py_DECREF(done);
        return closure;
    }
    PyObject *wrapper = recorded_local_backward(self->run, value, closure);  /* RecordedLocalBackward(self.run, ...) */
    Py_DECREF(closure);
    return wrapper;
}

/* BackwardDescriptor.__set__ (storage.store, written out), __delete__ (closure NULL) */
static int backward_set(Descriptor *self, PyObject *value, PyObject *closure) {
    if (not_ready(self)) return -1;
    if (closure == NULL) return delete(self, value);
    return store(self, value, closure);
}

static PyTypeObject BackwardDescriptorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._descriptors.BackwardDescriptor",
    .tp_doc = "descriptors.BackwardDescriptor, compiled: value._backward, a RecordedLocalBackward inside backward().",
    .tp_basicsize = sizeof(Descriptor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)backward_init,
    .tp_dealloc = (destructor)descriptor_dealloc,
    .tp_traverse = (traverseproc)descriptor_traverse,
    .tp_clear = (inquiry)descriptor_clear,
    .tp_members = descriptor_members,
    .tp_descr_get = (descrgetfunc)backward_get,
    .tp_descr_set = (descrsetfunc)backward_set,
};

/* ---- RecordedLocalBackward: functools.partial(run, node, closure) as descriptors.py makes it; a call is
 * run(node, closure, *args, **kwargs); __wrapped__ is the closure (inspect.unwrap); func, args, keywords a partial's */
typedef struct {
    PyObject_HEAD
    PyObject *run, *node, *closure;
    vectorcallfunc vectorcall;
} Recorded;

static PyObject *recorded_call(Recorded *self, PyObject *const *args, size_t nargsf, PyObject *kwnames);

static PyObject *recorded_local_backward(PyObject *run, PyObject *node, PyObject *closure) {
    Recorded *self = PyObject_GC_New(Recorded, &RecordedLocalBackwardType);
    if (self == NULL) return NULL;
    self->run = Py_NewRef(run);
    self->node = Py_NewRef(node);
    self->closure = Py_NewRef(closure);
    self->vectorcall = (vectorcallfunc)recorded_call;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

/* a call: run(node, closure, *args, **kwargs), the arguments passed on as they came (a keyword node= too) */
static PyObject *recorded_call(Recorded *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), total = n + 2 + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[10], **stack = total + 1 <= 10 ? small : PyMem_Malloc((total + 1) * sizeof(PyObject *));
    if (stack == NULL) return PyErr_NoMemory();
    stack[1] = self->node;  /* (stack[0]: free, for a bound method's self: PY_VECTORCALL_ARGUMENTS_OFFSET) */
    stack[2] = self->closure;
    for (Py_ssize_t i = 0; i < total - 2; i++) stack[3 + i] = args[i];
    PyObject *result = PyObject_Vectorcall(self->run, stack + 1, (n + 2) | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
    if (stack != small) PyMem_Free(stack);
    return result;
}

static PyObject *recorded_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *run, *node, *closure;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "RecordedLocalBackward(run, node, closure) takes no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOO:RecordedLocalBackward", &run, &node, &closure)) return NULL;
    if (type != &RecordedLocalBackwardType) {
        PyErr_SetString(PyExc_TypeError, "RecordedLocalBackward is not subclassed");
        return NULL;
    }
    return recorded_local_backward(run, node, closure);
}

static int recorded_traverse(Recorded *self, visitproc visit, void *arg) {
    Py_VISIT(self->run); Py_VISIT(self->node); Py_VISIT(self->closure);
    return 0;
}

static int recorded_clear(Recorded *self) {
    Py_CLEAR(self->run); Py_CLEAR(self->node); Py_CLEAR(self->closure);
    return 0;
}

static void recorded_dealloc(Recorded *self) {
    PyObject_GC_UnTrack(self);
    recorded_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *recorded_args(Recorded *self, void *unused) { return PyTuple_Pack(2, self->node, self->closure); }
static PyObject *recorded_keywords(Recorded *self, void *unused) { return PyDict_New(); }

static PyObject *recorded_repr(Recorded *self) {
    return PyUnicode_FromFormat("%s(%R, %R, %R)", Py_TYPE(self)->tp_name, self->run, self->node, self->closure);
}

static PyMemberDef recorded_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(Recorded, closure), READONLY, "the value's own closure"},
    {"func", T_OBJECT, offsetof(Recorded, run), READONLY, "hooks.run_local_backward"},
    {NULL}
};

static PyGetSetDef recorded_getset[] = {
    {"args", (getter)recorded_args, NULL, "(node, closure)", NULL},
    {"keywords", (getter)recorded_keywords, NULL, "{}", NULL},
    {NULL}
};

static PyTypeObject RecordedLocalBackwardType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "adtrace.recording.value_class._descriptors.RecordedLocalBackward",
    .tp_doc = "descriptors.RecordedLocalBackward, compiled: value._backward read inside a recorded backward().",
    .tp_basicsize = sizeof(Recorded),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = recorded_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Recorded, vectorcall),
    .tp_dealloc = (destructor)recorded_dealloc,
    .tp_traverse = (traverseproc)recorded_traverse,
    .tp_clear = (inquiry)recorded_clear,
    .tp_repr = (reprfunc)recorded_repr,
    .tp_members = recorded_members,
    .tp_getset = recorded_getset,
};

/* ---- the module */

/* bind(MISSING, NOT_HELD, TRACKED_NUMBER, NUMBER_KINDS, track, plain, GradDescriptor, BackwardDescriptor): descriptors.py's
 * own objects (the reference classes last), once at its import */
static PyObject *bind(PyObject *module, PyObject *args) {
    PyObject *objects[8], *state_type, *frame_type;
    if (!PyArg_ParseTuple(args, "OOO!O!OOOOOO:bind", &objects[0], &objects[1], &PyDict_Type, &objects[2],
                          &PyFrozenSet_Type, &objects[3], &objects[4], &objects[5], &objects[6], &objects[7],
                          &state_type, &frame_type))
        return NULL;
    if (frame_type != Py_None && !(PyType_Check(frame_type)
                                   && ((PyTypeObject *)frame_type)->tp_basicsize == sizeof(FrameObject))) {
        PyErr_SetString(PyExc_TypeError, "bind: the frame type is _hooks.Frame, or None");
        return NULL;
    }
    if (state_type != Py_None && !(PyType_Check(state_type)
                                   && ((PyTypeObject *)state_type)->tp_basicsize == sizeof(ThreadStateObject))) {
        PyErr_SetString(PyExc_TypeError, "bind: the state type is _hooks.ThreadState, or None");
        return NULL;
    }
    PyObject **globals[8] = {&MISSING, &NOT_HELD, &TRACKED_NUMBER, &NUMBER_KINDS, &track, &plain, &PyGrad, &PyBackward};
    for (int i = 0; i < 8; i++) {
        Py_INCREF(objects[i]);
        Py_XSETREF(*globals[i], objects[i]);
    }
    Py_XINCREF(state_type == Py_None ? NULL : state_type);
    Py_XSETREF(StateType, state_type == Py_None ? NULL : (PyTypeObject *)state_type);
    Py_XINCREF(frame_type == Py_None ? NULL : frame_type);
    Py_XSETREF(FrameType, frame_type == Py_None ? NULL : (PyTypeObject *)frame_type);
    PyObject *key, *kind;  /* the kind of TRACKED_NUMBER without a __dict__: its slots' offsets */
    for (Py_ssize_t at = 0; PyDict_Next(TRACKED_NUMBER, &at, &key, &kind);)
        if (PyType_Check(kind) && ((PyTypeObject *)kind)->tp_dictoffset == 0 && slotted_bind(&Slotted, kind) < 0)
            return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "descriptors.py's own objects, the reference: bound once at its import"},
    {NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_descriptors", "The compiled twin of descriptors.py.", -1,
                                    methods};

static int intern(PyObject **name, const char *text) {
    *name = PyUnicode_InternFromString(text);
    return *name ? 0 : -1;
}

PyMODINIT_FUNC PyInit__descriptors(void) {
    struct { PyObject **name; const char *text; } names[] = {
        {&s_state, "state"}, {&s_frames, "frames"}, {&s_quiet, "quiet"}, {&s_ends, "ends"},
        {&s_addition, "addition"}, {&s_in_place, "in_place"}, {&s_handed, "handed"}, {&s_read, "read"},
        {&s_unwritten, "unwritten"}, {&s_children, "children"}, {&s_node, "node"}, {&s_grad_written, "grad_written"},
        {&s__plain, "_plain"}, {&s__owner, "_owner"}, {&s__state, "_state"}, {&s_load, "load"},
        {&s_load_or_missing, "load_or_missing"}, {&s_no_local_backward, "no_local_backward"}, {&s_dict, "__dict__"},
        {&s_get, "get"}, {&s_delete, "__delete__"}, {&s_hooks, "hooks"}, {&s_storage, "storage"}, {&s_local, "local"},
        {&s_name, "name"}, {&s_slot, "slot"}, {&s_active, "active"}, {&s_run, "run_local_backward"}, {&PLUS, "+"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (intern(names[i].name, names[i].text) < 0) return NULL;
    if ((ZERO = PyLong_FromLong(0)) == NULL) return NULL;
    PyTypeObject *types[] = {&GradDescriptorType, &BackwardDescriptorType, &RecordedLocalBackwardType};
    for (int i = 0; i < 3; i++)
        if (PyType_Ready(types[i]) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    PyObject *pool = PyCapsule_New(int_pool, INT_POOL_CAPSULE, NULL);  /* (for _hooks.bind_pool) */
    if (pool == NULL || PyModule_AddObject(m, "int_pool", pool) < 0) {
        Py_XDECREF(pool);
        Py_DECREF(m);
        return NULL;
    }
    const char *type_names[] = {"GradDescriptor", "BackwardDescriptor", "RecordedLocalBackward"};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, type_names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(types[i]);
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
