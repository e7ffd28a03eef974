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

/* `x.<field> = value` of a compiled state (a new reference taken to value, the old one dropped) */
static inline void state_set(PyObject *state, PyObject **field, PyObject *value) {
    (void)state;
    Py_INCREF(value);
    Py_SETREF(*field, value);
}
#endif
