/* Node labels as text, made directly: `f"v{count}_{name}"` and `f"{a},{b}"` (PyUnicode_FromFormat parses its format
   on every call: ~1,500 instructions, twice per node or value made). Shared by the autograd wrappers' twin
   (autograd/_wrappers.c) and the value-class recorder's (value_class/_recorder.c), whose Python references
   make the same labels with f-strings. */
#ifndef ADTRACE_RECORDING_LABELS_H
#define ADTRACE_RECORDING_LABELS_H
#include <Python.h>
#include <string.h>

/* `f"v{count}_{name}"` (name: an exact str) */
static PyObject *label_text(Py_ssize_t count, PyObject *name) {
    char head[32];
    int at = (int)sizeof(head);
    head[--at] = '_';
    size_t digits = count < 0 ? 0 : (size_t)count;  /* (a count is never negative) */
    do {
        head[--at] = (char)('0' + digits % 10);
        digits /= 10;
    } while (digits);
    head[--at] = 'v';
    Py_ssize_t n_head = (Py_ssize_t)sizeof(head) - at, n_name = PyUnicode_GET_LENGTH(name);
    PyObject *text = PyUnicode_New(n_head + n_name, PyUnicode_MAX_CHAR_VALUE(name));
    if (text == NULL) return NULL;
    if (PyUnicode_IS_ASCII(name)) {  /* (most names: the bytes copied, no call per part) */
        Py_UCS1 *data = PyUnicode_1BYTE_DATA(text);
        memcpy(data, head + at, (size_t)n_head);
        memcpy(data + n_head, PyUnicode_1BYTE_DATA(name), (size_t)n_name);
        return text;
    }
    int kind = PyUnicode_KIND(text);
    void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < n_head; i++) PyUnicode_WRITE(kind, data, i, (Py_UCS4)(unsigned char)head[at + i]);
    if (PyUnicode_CopyCharacters(text, n_head, name, 0, n_name) < 0) {
        Py_DECREF(text);
        return NULL;
    }
    return text;
}

/* `f"{a},{b}"` (exact strs) */
static PyObject *pair_text(PyObject *a, PyObject *b) {
    Py_ssize_t n_a = PyUnicode_GET_LENGTH(a), n_b = PyUnicode_GET_LENGTH(b);
    Py_UCS4 max_a = PyUnicode_MAX_CHAR_VALUE(a), max_b = PyUnicode_MAX_CHAR_VALUE(b);
    PyObject *text = PyUnicode_New(n_a + 1 + n_b, max_a > max_b ? max_a : max_b);
    if (text == NULL) return NULL;
    if (PyUnicode_IS_ASCII(a) && PyUnicode_IS_ASCII(b)) {  /* (most labels) */
        Py_UCS1 *data = PyUnicode_1BYTE_DATA(text);
        memcpy(data, PyUnicode_1BYTE_DATA(a), (size_t)n_a);
        data[n_a] = ',';
        memcpy(data + n_a + 1, PyUnicode_1BYTE_DATA(b), (size_t)n_b);
        return text;
    }
    PyUnicode_WRITE(PyUnicode_KIND(text), PyUnicode_DATA(text), n_a, ',');
    if (PyUnicode_CopyCharacters(text, 0, a, 0, n_a) < 0 || PyUnicode_CopyCharacters(text, n_a + 1, b, 0, n_b) < 0) {
        Py_DECREF(text);
        return NULL;
    }
    return text;
}

#endif
