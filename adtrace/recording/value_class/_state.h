/* hooks._ThreadState's compiled twin, its layout shared by _hooks.c (which makes the type, ThreadState) and
   _descriptors.c (bound to it at import): each reads and writes the fields directly when a state is of that very
   type, and through attributes otherwise (hooks.py's _ThreadState: the reference, used without the twin). */
#ifndef ADTRACE_VALUE_CLASS_STATE_H
#define ADTRACE_VALUE_CLASS_STATE_H
#include <Python.h>

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
#endif
