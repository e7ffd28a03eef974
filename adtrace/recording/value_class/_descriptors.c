/* The compiled twin of descriptors.py (adtrace/recording/compiled.py): placeholder module, filled by the twin's work. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_descriptors", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__descriptors(void) { return PyModule_Create(&module); }
