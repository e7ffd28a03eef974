/* The compiled twin of values.py (adtrace/recording/compiled.py): the statistics of an ArraySummary of a
 * float64 array in one loop over its buffer, instead of values.py's argmin, argmax and add.reduce.
 *
 * float64_statistics(array) mirrors values._float64_statistics / values._statistics(array, None) for a
 * non-empty float64 array, contiguous or a strided view numpy reads in C order (through the buffer protocol:
 * no numpy C API):
 *     low, high = the extremes                      (one pass: min, max, and ...)
 *     mean = float(np.add.reduce(array)) / size    (... the sum in numpy's own pairwise order, bit for bit;
 *                                                   on x86-64 each element loaded once for both)
 * and returns (low, high, mean), or None wherever values.py must decide instead (it then runs its own code):
 * a zero extreme (0.0 and -0.0 compare equal: which one numpy keeps depends on its order), a NaN or an
 * infinity (the sum is then not finite: which NaN, which warning), more than PAIRWISE_MAX elements (numpy's
 * reduction may cut its loop into chunks there), a buffer that is not float64, or a strided one read in
 * another order than C order (a transposed view: numpy reads it in memory order).
 * A nonzero extreme has its own bits wherever it is found, so any order of the min/max loop gives numpy's. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

#define PW_BLOCKSIZE 128   /* numpy's pairwise summation block (numpy/_core/src/umath/loops_utils.h.src) */
#define PAIRWISE_MAX 8192  /* numpy's default buffer size: at or below it one inner loop sums the whole array */

/* numpy's DOUBLE_pairwise_sum for a contiguous buffer, line by line: below 8 elements a plain loop; up to
 * PW_BLOCKSIZE eight running sums combined as a tree, then the rest; above, two halves (the first a
 * multiple of 8) summed apart. */
static inline double pairwise_sum(const double *a, Py_ssize_t n)  /* (inline: unused where SSE2 sums below) */
{
    if (n < 8) {
        double res = 0.;
        for (Py_ssize_t i = 0; i < n; i++) {
            res += a[i];
        }
        return res;
    }
    if (n <= PW_BLOCKSIZE) {
        double r[8];
        Py_ssize_t i;
        for (int j = 0; j < 8; j++) {
            r[j] = a[j];
        }
        for (i = 8; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; j++) {
                r[j] += a[i + j];
            }
        }
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) {
            res += a[i];
        }
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* x86-64: the extremes found in the pairwise sum's own pass (one load of each element, not two). Its eight
 * running sums are four vectors of two lanes, each lane adding exactly as numpy's scalar r[j] += a[i + j]
 * does; alongside, eight running extremes, lo = minpd(lo, x) ("lo < x ? lo : x": the accumulator written in
 * place, no register copies). A NaN may win one, but then the sum is NaN too and the result None; a nonzero
 * extreme has its own bits wherever it is found. */
typedef struct {
    __m128d lo[4], hi[4];
} Extremes;

/* pairwise_sum of at least 8 elements, the extremes of every element it adds seen into e (kept in
 * registers through a block: written back once, at its end) */
static double pairwise_sum_seeing(const double *a, Py_ssize_t n, Extremes *e)
{
    if (n <= PW_BLOCKSIZE) {
        __m128d r0 = _mm_loadu_pd(a), r1 = _mm_loadu_pd(a + 2), r2 = _mm_loadu_pd(a + 4), r3 = _mm_loadu_pd(a + 6);
        __m128d lo0 = _mm_min_pd(e->lo[0], r0), lo1 = _mm_min_pd(e->lo[1], r1);
        __m128d lo2 = _mm_min_pd(e->lo[2], r2), lo3 = _mm_min_pd(e->lo[3], r3);
        __m128d hi0 = _mm_max_pd(e->hi[0], r0), hi1 = _mm_max_pd(e->hi[1], r1);
        __m128d hi2 = _mm_max_pd(e->hi[2], r2), hi3 = _mm_max_pd(e->hi[3], r3);
        Py_ssize_t i;
        for (i = 8; i < n - (n % 8); i += 8) {
            __m128d x0 = _mm_loadu_pd(a + i), x1 = _mm_loadu_pd(a + i + 2);
            __m128d x2 = _mm_loadu_pd(a + i + 4), x3 = _mm_loadu_pd(a + i + 6);
            r0 = _mm_add_pd(r0, x0);
            r1 = _mm_add_pd(r1, x1);
            r2 = _mm_add_pd(r2, x2);
            r3 = _mm_add_pd(r3, x3);
            lo0 = _mm_min_pd(lo0, x0);
            lo1 = _mm_min_pd(lo1, x1);
            lo2 = _mm_min_pd(lo2, x2);
            lo3 = _mm_min_pd(lo3, x3);
            hi0 = _mm_max_pd(hi0, x0);
            hi1 = _mm_max_pd(hi1, x1);
            hi2 = _mm_max_pd(hi2, x2);
            hi3 = _mm_max_pd(hi3, x3);
        }
        for (; i < n; i++) {  /* the rest's extremes (its sum: below, after the tree) */
            __m128d x = _mm_set1_pd(a[i]);
            lo0 = _mm_min_pd(lo0, x);
            hi0 = _mm_max_pd(hi0, x);
        }
        e->lo[0] = lo0, e->lo[1] = lo1, e->lo[2] = lo2, e->lo[3] = lo3;
        e->hi[0] = hi0, e->hi[1] = hi1, e->hi[2] = hi2, e->hi[3] = hi3;
        double s[8];
        _mm_storeu_pd(s, r0);
        _mm_storeu_pd(s + 2, r1);
        _mm_storeu_pd(s + 4, r2);
        _mm_storeu_pd(s + 6, r3);
        double res = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
        for (i = n - (n % 8); i < n; i++) {
            res += a[i];
        }
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum_seeing(a, n2, e) + pairwise_sum_seeing(a + n2, n - n2, e);
}

/* the extremes and numpy's pairwise sum of a non-empty buffer, in one pass */
static double statistics(const double *a, Py_ssize_t n, double *low, double *high)
{
    if (n < 8) {  /* pairwise_sum's plain loop */
        double res = 0., lo = a[0], hi = a[0];
        for (Py_ssize_t i = 0; i < n; i++) {
            res += a[i];
            lo = a[i] < lo ? a[i] : lo;
            hi = a[i] > hi ? a[i] : hi;
        }
        *low = lo;
        *high = hi;
        return res;
    }
    Extremes e;
    for (int j = 0; j < 4; j++) {
        e.lo[j] = e.hi[j] = _mm_set1_pd(a[0]);
    }
    double res = pairwise_sum_seeing(a, n, &e);
    double l[8], h[8];
    for (int j = 0; j < 4; j++) {
        _mm_storeu_pd(l + 2 * j, e.lo[j]);
        _mm_storeu_pd(h + 2 * j, e.hi[j]);
    }
    for (int j = 1; j < 8; j++) {
        l[0] = l[j] < l[0] ? l[j] : l[0];
        h[0] = h[j] > h[0] ? h[j] : h[0];
    }
    *low = l[0];
    *high = h[0];
    return res;
}
#else
/* The extremes of a non-empty buffer (NaNs never win a comparison: the sum finds them), then its sum. */
static double statistics(const double *a, Py_ssize_t n, double *low, double *high)
{
    double lo = a[0], hi = a[0];
    for (Py_ssize_t i = 1; i < n; i++) {
        lo = a[i] < lo ? a[i] : lo;
        hi = a[i] > hi ? a[i] : hi;
    }
    *low = lo;
    *high = hi;
    return pairwise_sum(a, n);
}
#endif

/* A strided buffer's elements gathered in C order into `out` (n of them), when that order is the one numpy's
 * reduction reads them in: every axis of more than one element with a positive stride, no smaller than the
 * next such axis's (numpy iterates an operand in memory order, its axes sorted by stride: then C order), and
 * numpy copies them, n <= its buffer size, into one buffer it sums pairwise. 0: not such a buffer. */
static int gather(const Py_buffer *view, double *out)
{
    int ndim = view->ndim;
    Py_ssize_t last = 0;
    for (int k = 0; k < ndim; k++) {
        if (view->shape[k] > 1) {
            if (view->strides[k] <= 0 || (last && view->strides[k] > last)) {
                return 0;
            }
            last = view->strides[k];
        }
    }
    Py_ssize_t index[64] = {0};
    Py_ssize_t inner = ndim ? view->shape[ndim - 1] : 1, step = ndim ? view->strides[ndim - 1] : 0;
    const char *row = (const char *)view->buf;
    for (;;) {
        for (Py_ssize_t i = 0; i < inner; i++) {
            memcpy(out++, row + i * step, sizeof(double));
        }
        int k = ndim - 2;  /* the next row: the odometer over the outer axes */
        for (; k >= 0; k--) {
            row += view->strides[k];
            if (++index[k] < view->shape[k]) {
                break;
            }
            row -= view->strides[k] * view->shape[k];
            index[k] = 0;
        }
        if (k < 0) {
            return 1;
        }
    }
}

static PyObject *float64_name;  /* "float64": the dtype a summary names */

/* values._float64_statistics's result from one buffer, or None (values.py decides); with a tag, the whole stored
 * summary values.stored_summary returns, (tag, shape, "float64", low, high, mean). */
static PyObject *summarized(PyObject *array, PyObject *tag)
{
    Py_buffer view;
    if (PyObject_GetBuffer(array, &view, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        PyErr_Clear();  /* (no strided buffer): values.py's own code */
        Py_RETURN_NONE;
    }
    PyObject *result = NULL;
    Py_ssize_t n = view.len / (Py_ssize_t)sizeof(double);
    double *copy = NULL;
    const double *a = (const double *)view.buf;
    if (view.itemsize != sizeof(double) || view.format == NULL || strcmp(view.format, "d") != 0
            || n == 0 || n > PAIRWISE_MAX || view.ndim > 64) {
        a = NULL;
    }
    else if (!PyBuffer_IsContiguous(&view, 'C')) {  /* a slice, a strided view: summed as numpy's buffer holds it */
        copy = PyMem_Malloc(n * sizeof(double));
        if (copy == NULL) {
            PyBuffer_Release(&view);
            return PyErr_NoMemory();
        }
        a = gather(&view, copy) ? copy : NULL;
    }
    double low = 0., high = 0., sum = 0.;
    if (a != NULL) {
        /* np.add.reduce starts from add's identity, 0.0, and adds the pairwise sum of every element */
        sum = 0. + statistics(a, n, &low, &high);
    }
    if (a == NULL || low == 0. || high == 0. || !isfinite(sum)) {
        result = Py_NewRef(Py_None);
    }
    else {  /* (items set one by one: not Py_BuildValue, its format parsed at every call) */
        int first = tag == NULL ? 0 : 3;
        result = PyTuple_New(first + 3);
        if (result != NULL && tag != NULL) {
            PyObject *shape = PyTuple_New(view.ndim);
            for (int k = 0; shape != NULL && k < view.ndim; k++) {
                PyObject *length = PyLong_FromSsize_t(view.shape[k]);
                if (length == NULL) {
                    Py_CLEAR(shape);
                    break;
                }
                PyTuple_SET_ITEM(shape, k, length);
            }
            PyTuple_SET_ITEM(result, 0, Py_NewRef(tag));
            PyTuple_SET_ITEM(result, 1, shape);
            PyTuple_SET_ITEM(result, 2, Py_NewRef(float64_name));
            if (shape == NULL) {
                Py_CLEAR(result);
            }
        }
        double items[3] = {low, high, sum / (double)n};
        for (int k = 0; result != NULL && k < 3; k++) {
            PyObject *item = PyFloat_FromDouble(items[k]);
            if (item == NULL) {
                Py_CLEAR(result);
                break;
            }
            PyTuple_SET_ITEM(result, first + k, item);
        }
    }
    PyMem_Free(copy);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *float64_statistics(PyObject *module, PyObject *array)
{
    return summarized(array, NULL);
}

static PyObject *float64_summary(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "float64_summary(array, tag) takes two arguments");
        return NULL;
    }
    return summarized(args[0], args[1]);
}

static PyMethodDef methods[] = {
    {"float64_statistics", float64_statistics, METH_O,
     "(min, max, mean) of a non-empty float64 array as values.py computes them, or None."},
    {"float64_summary", (PyCFunction)(void (*)(void))float64_summary, METH_FASTCALL,
     "float64_summary(array, tag): (tag, shape, 'float64', min, max, mean) as values.stored_summary makes it "
     "for a float64 array, or None (values.py decides)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_values", NULL, -1, methods};

PyMODINIT_FUNC PyInit__values(void)
{
    float64_name = PyUnicode_InternFromString("float64");
    return float64_name == NULL ? NULL : PyModule_Create(&module);
}
