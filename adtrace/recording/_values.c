/* The compiled twin of values.py (adtrace/recording/compiled.py): the statistics of an ArraySummary of a
 * float64 array in one loop over its buffer, instead of values.py's argmin, argmax and add.reduce.
 *
 * float64_statistics(array) mirrors values._float64_statistics / values._statistics(array, None) for a
 * non-empty C-contiguous float64 array (read through the buffer protocol: no numpy C API):
 *     low, high = the extremes                      (one loop: min, max, and ...)
 *     mean = float(np.add.reduce(array)) / size    (... the sum in numpy's own pairwise order, bit for bit)
 * and returns (low, high, mean), or None wherever values.py must decide instead (it then runs its own code):
 * a zero extreme (0.0 and -0.0 compare equal: which one numpy keeps depends on its order), a NaN or an
 * infinity (the sum is then not finite: which NaN, which warning), more than PAIRWISE_MAX elements (numpy's
 * reduction may cut its loop into chunks there), or a buffer that is not contiguous float64.
 * A nonzero extreme has its own bits wherever it is found, so any order of the min/max loop gives numpy's. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

#define PW_BLOCKSIZE 128   /* numpy's pairwise summation block (numpy/_core/src/umath/loops_utils.h.src) */
#define PAIRWISE_MAX 8192  /* numpy's default buffer size: at or below it one inner loop sums the whole array */

/* numpy's DOUBLE_pairwise_sum for a contiguous buffer, line by line: below 8 elements a plain loop; up to
 * PW_BLOCKSIZE eight running sums combined as a tree, then the rest; above, two halves (the first a
 * multiple of 8) summed apart. */
static double pairwise_sum(const double *a, Py_ssize_t n)
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

/* The extremes of a non-empty buffer; NaNs never win a comparison (the sum finds them). Eight running
 * extremes, as the sum has eight running sums: independent comparisons, on x86-64 as vector instructions
 * (minpd / maxpd are exactly "x < lo ? x : lo", which the compiler may not turn into them itself). */
#if defined(__SSE2__)
#include <emmintrin.h>

static void extremes(const double *a, Py_ssize_t n, double *low, double *high)
{
    __m128d lo[4], hi[4];
    Py_ssize_t i = 0;
    for (int j = 0; j < 4; j++) {
        lo[j] = hi[j] = _mm_set1_pd(a[0]);
    }
    for (; i + 8 <= n; i += 8) {
        for (int j = 0; j < 4; j++) {
            __m128d x = _mm_loadu_pd(a + i + 2 * j);
            lo[j] = _mm_min_pd(x, lo[j]);
            hi[j] = _mm_max_pd(x, hi[j]);
        }
    }
    double l[8], h[8];
    for (int j = 0; j < 4; j++) {
        _mm_storeu_pd(l + 2 * j, lo[j]);
        _mm_storeu_pd(h + 2 * j, hi[j]);
    }
    for (int j = 1; j < 8; j++) {
        l[0] = l[j] < l[0] ? l[j] : l[0];
        h[0] = h[j] > h[0] ? h[j] : h[0];
    }
    for (; i < n; i++) {
        l[0] = a[i] < l[0] ? a[i] : l[0];
        h[0] = a[i] > h[0] ? a[i] : h[0];
    }
    *low = l[0];
    *high = h[0];
}
#else
static void extremes(const double *a, Py_ssize_t n, double *low, double *high)
{
    double lo = a[0], hi = a[0];
    for (Py_ssize_t i = 1; i < n; i++) {
        lo = a[i] < lo ? a[i] : lo;
        hi = a[i] > hi ? a[i] : hi;
    }
    *low = lo;
    *high = hi;
}
#endif

/* values._float64_statistics's result from one buffer, or None (values.py decides). */
static PyObject *float64_statistics(PyObject *module, PyObject *array)
{
    Py_buffer view;
    if (PyObject_GetBuffer(array, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();  /* not contiguous (a transposed view): values.py's own code */
        Py_RETURN_NONE;
    }
    PyObject *result = NULL;
    Py_ssize_t n = view.len / (Py_ssize_t)sizeof(double);
    if (view.itemsize != sizeof(double) || view.format == NULL || strcmp(view.format, "d") != 0
            || n == 0 || n > PAIRWISE_MAX) {
        result = Py_NewRef(Py_None);
    }
    else {
        const double *a = (const double *)view.buf;
        double low, high;
        extremes(a, n, &low, &high);
        /* np.add.reduce starts from add's identity, 0.0, and adds the pairwise sum of every element */
        double sum = 0. + pairwise_sum(a, n);
        if (low == 0. || high == 0. || !isfinite(sum)) {
            result = Py_NewRef(Py_None);
        }
        else {
            result = Py_BuildValue("(ddd)", low, high, sum / (double)n);
        }
    }
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"float64_statistics", float64_statistics, METH_O,
     "(min, max, mean) of a non-empty C-contiguous float64 array as values.py computes them, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_values", NULL, -1, methods};

PyMODINIT_FUNC PyInit__values(void) { return PyModule_Create(&module); }
