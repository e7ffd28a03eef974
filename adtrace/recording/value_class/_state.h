/* hooks._ThreadState's compiled twin, its layout shared by _hooks.c (which makes the type, ThreadState) and
   _descriptors.c (bound to it at import): each reads and writes the fields directly when a state is of that very
   type, and through attributes otherwise (hooks.py's _ThreadState: the reference, used without the twin). Also the
   small pieces the value-class twins share (getattr_or, method_get). */
#ifndef ADTRACE_VALUE_CLASS_STATE_H
#define ADTRACE_VALUE_CLASS_STATE_H
#include <Python.h>
#include <structmember.h>  /* T_OBJECT_EX */

typedef struct {
    PyObject_HEAD
    PyObject *written, *in_place, *ends, *bare, *edge_visits, *frames, *addition;  /* never NULL */
    Py_ssize_t quiet;
} ThreadStateObject;

#define STATE_FIELD(state, field) (((ThreadStateObject *)(state))->field)

/* hooks._Frame's fields, compiled (_hooks.Frame, the base of hooks.py's _Frame when the twin is built: its methods
   the reference's): read and written directly by _hooks.c and _descriptors.c when a frame is of that type. A field
   is NULL only if deleted (or cleared by the collector): then the attribute path, and its AttributeError. */
typedef struct {
    PyObject_HEAD
    PyObject *node, *children, *unwritten, *read, *handed;
} FrameObject;

#define FRAME_FIELD(frame, field) (((FrameObject *)(frame))->field)

/* `x.<field> = value` of a compiled state (a new reference taken to value, the old one dropped) */
static inline void state_set(PyObject *state, PyObject **field, PyObject *value) {
    (void)state;
    Py_INCREF(value);
    Py_SETREF(*field, value);
}

/* A sink's callbacks read once per sink (hooks.notify reads ``getattr(sink, callback)`` per call: by name, ~150
   instructions more): the last sink seen and its bound callbacks, each read at its first call; another sink (a nested
   recording's fan-out, the next recording's recorder) replaces them, forget() lets them go (on the hooks' undo). A
   sink's callbacks do not change while it records. */
typedef struct {
    PyObject *sink, *callbacks[2];
} SinkCache;

/* ``getattr(sink, name)`` for callback ``which`` (0 or 1) of the cache: a new reference, or NULL with an error set */
static inline PyObject *sink_callback(SinkCache *cache, PyObject *sink, int which, PyObject *name) {
    if (cache->sink == sink && cache->callbacks[which] != NULL) return Py_NewRef(cache->callbacks[which]);
    PyObject *found = PyObject_GetAttr(sink, name);
    if (found == NULL) return NULL;
    if (cache->sink != sink) {  /* (the old ones dropped last: a sink freed here may run code) */
        PyObject *old = cache->sink, *first = cache->callbacks[0], *second = cache->callbacks[1];
        cache->sink = Py_NewRef(sink);
        cache->callbacks[0] = cache->callbacks[1] = NULL;
        Py_XDECREF(old);
        Py_XDECREF(first);
        Py_XDECREF(second);
    }
    Py_XSETREF(cache->callbacks[which], Py_NewRef(found));
    return found;
}

static inline void sink_forget(SinkCache *cache) {
    Py_CLEAR(cache->sink);
    Py_CLEAR(cache->callbacks[0]);
    Py_CLEAR(cache->callbacks[1]);
}

#define SINK_VISIT(cache) do { Py_VISIT((cache).sink); Py_VISIT((cache).callbacks[0]); Py_VISIT((cache).callbacks[1]); } while (0)

/* tracked.py's TrackedFloat: its own attributes ``_plain``, ``_owner``, ``_state`` are slots (no __dict__ per number
   read), read and set here at their offsets, taken from its member descriptors once (slotted_bind); every other
   tracked kind (TrackedInt: an int's subclass has no slots) keeps them in its __dict__. */
typedef struct {
    PyTypeObject *type;  /* NULL until bound */
    Py_ssize_t plain, owner, state;
} SlottedKind;

/* the offsets of ``type``'s slots _plain, _owner and _state: 0, or -1 with an error set */
static inline int slotted_bind(SlottedKind *kind, PyObject *type) {
    const char *names[3] = {"_plain", "_owner", "_state"};
    Py_ssize_t offsets[3];  /* (stored with the type only when all three fit: a failed re-bind changes nothing) */
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "a tracked number's class with slots _plain, _owner, _state");
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        PyObject *member = PyObject_GetAttrString(type, names[i]);
        if (member == NULL) return -1;
        int fits = Py_IS_TYPE(member, &PyMemberDescr_Type)
            && ((PyMemberDescrObject *)member)->d_member->type == T_OBJECT_EX;
        if (fits) offsets[i] = ((PyMemberDescrObject *)member)->d_member->offset;
        Py_DECREF(member);
        if (!fits) {
            PyErr_Format(PyExc_TypeError, "%s is not a slot of the tracked number's class", names[i]);
            return -1;
        }
    }
    kind->plain = offsets[0];
    kind->owner = offsets[1];
    kind->state = offsets[2];
    Py_INCREF(type);
    Py_XSETREF(kind->type, (PyTypeObject *)type);
    return 0;
}

/* the pool of tracked ints 0 that _descriptors.c makes again (its int_pool, a capsule of POOL pointers, NULL where
   empty): _hooks.c detaches one only the pool holds by setting its _owner and _state to None (no entries popped) */
#define POOL 8
#define INT_POOL_CAPSULE "adtrace.recording.value_class._descriptors.int_pool"

#define SLOT_AT(x, offset) (*(PyObject **)((char *)(x) + (offset)))

/* ``getattr(obj, name, default)`` (a new reference; only AttributeError gives the default) */
static inline PyObject *getattr_or(PyObject *obj, PyObject *name, PyObject *default_) {
    PyObject *found = PyObject_GetAttr(obj, name);
    if (found == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        Py_INCREF(default_);
        return default_;
    }
    return found;
}

/* tp_descr_get of a callable set on a class as a method (an __init__ wrapper): bound to the value it is read from,
   as a function is */
static inline PyObject *method_get(PyObject *self, PyObject *obj, PyObject *type) {
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}
#endif
