"""Array summaries under capture ``auto``: the shape, dtype and statistics (min, max, mean) of an
array too large to keep, in their stored forms (``adtrace.values``).

Three ufunc reductions cost about 1 µs each below a few thousand elements, whatever the size: on an
array-bound workload (``benchmarks/``, the LSTM) summaries were most of the recording's cost. So
the common case is summarized in batches (``Batches``): a C-contiguous float64 array of at most
``BATCHED_SIZE`` elements is copied into the next row of a buffer kept per shape, and one
reduction per statistic along the rows computes a whole batch at once, when the buffer is full,
when the recording is read and when it ends. The batch's statistics are written into a pool shared
by all shapes; the stored form names its row there.

Only C-contiguous float64 arrays are batched: the reduction of one row then runs numpy's inner
loop over the same elements in the same order as the reduction of the array alone (no cast, no
buffering), so both ways give the same statistics to the bit (``tests/test_summaries.py``). Other
arrays are summarized at once (``stored_summary``).
"""

import numpy as np

# Tags of the stored forms (see adtrace.values): compared by identity, made at run time
ARRAY_SUMMARY, BATCHED_SUMMARY = ("".join(("<adtrace ", name, ">")) for name in ("ArraySummary", "BatchedSummary"))

BATCHED_SIZE = 4096  # the largest array batched: above it the reductions cost more than their calls
ROWS = 32  # arrays per batch (a buffer of one shape)
REPEATS = 8  # arrays of a shape summarized at once before the shape gets a batch
POOL_ROWS = 64, 1024  # summaries per pool of statistics: the first pool, and at most (doubling)
BUFFER_BYTES = 4 << 20  # the buffers of all open batches together, at most
_FLOAT64 = np.dtype(np.float64)
_DONE = 3  # the pool's column set to 1.0 once a row's statistics are computed


def stored_summary(array):
    """An array's summary in its stored form, computed now: ``(ARRAY_SUMMARY, shape, dtype, min,
    max, mean)``, NaN-aware, complex arrays reduced to their magnitudes."""
    data = np.abs(array) if array.dtype.kind == "c" else array
    if data.size == 0 or data.dtype.kind not in "biuf":
        stats = (float("nan"),) * 3
    else:
        low, high = float(np.minimum.reduce(data, axis=None)), float(np.maximum.reduce(data, axis=None))
        if max(-low, high) * data.size < 1e300:  # finite and no overflow: the sum cannot warn
            total = float(np.add.reduce(data, axis=None, dtype=np.float64))
        else:
            with np.errstate(all="ignore"):
                total = float(np.add.reduce(data, axis=None, dtype=np.float64))
        stats = (low, high, total / data.size)
    return (ARRAY_SUMMARY, array.shape, _dtype_name(array.dtype), *stats)


def batched_statistics(stored):
    """``(min, max, mean)`` of a ``BATCHED_SUMMARY`` stored form, once its batch is computed."""
    pool, row = stored[3], stored[4]
    if pool[row, _DONE] != 1.0:
        raise RuntimeError("adtrace: a batched array summary was read before its batch was computed "
                           "(Batches.compute_all was not called)")
    return float(pool[row, 0]), float(pool[row, 1]), float(pool[row, 2])


class _Batch:
    __slots__ = ("buffer", "size", "count", "rows")

    def __init__(self, shape, size):
        self.buffer = np.empty((ROWS, *shape))
        self.size = size
        self.count = 0
        self.rows = []  # the pool row of each array in the buffer


class Batches:
    """The open batches of one ``Capture``: ``add(array)`` returns the stored form of its summary,
    to be read once ``compute_all()`` has run (the recorder calls it before the recording is read
    and when it ends)."""

    def __init__(self):
        self._open = {}  # shape -> _Batch
        self._bytes = 0  # their buffers' bytes
        self._seen = {}  # shape -> arrays summarized at once so far (a batch costs more when few fill it)
        self._pool = None  # where statistics are written: min, max, mean, done; one row per summary
        self._used = self._rows = 0

    @staticmethod
    def accepts(array):
        """Whether ``add`` can take ``array`` (an ndarray): float64, C-contiguous, small enough."""
        return array.dtype is _FLOAT64 and array.size <= BATCHED_SIZE and array.flags.c_contiguous

    def add(self, array):
        """The stored form of ``array``'s summary: copied into its shape's batch, or computed at
        once for the first arrays of a shape (and of a recording: few arrays, no batch)."""
        shape = array.shape
        batch = self._open.get(shape)
        if batch is None:
            seen = self._seen.get(shape, 0)
            if seen < REPEATS:
                if not seen and len(self._seen) >= 4096:  # (a bounded table)
                    self._seen.clear()
                self._seen[shape] = seen + 1
                return stored_summary(array)
            batch = self._new(shape, array.size)
        if self._used == self._rows:  # a new pool: the open batches' rows are all in the old one
            self.compute_all()
            self._rows = min(2 * self._rows, POOL_ROWS[1]) if self._rows else POOL_ROWS[0]
            self._pool, self._used = np.zeros((self._rows, 4)), 0
        row, position = self._used, batch.count
        self._used = row + 1
        batch.buffer[position] = array
        batch.rows.append(row)
        batch.count = position + 1
        stored = (BATCHED_SUMMARY, shape, "float64", self._pool, row)
        if position + 1 == ROWS:
            self._compute(batch)
        return stored

    def compute_all(self):
        """Compute every open batch (their buffers stay, empty, for the next arrays)."""
        for batch in self._open.values():
            if batch.count:
                self._compute(batch)

    def close(self):
        """Compute every open batch and free the buffers."""
        self.compute_all()
        self._open.clear()
        self._bytes = 0

    def _new(self, shape, size):
        nbytes = ROWS * size * 8
        if self._bytes + nbytes > BUFFER_BYTES:
            self.close()
        batch = self._open[shape] = _Batch(shape, size)
        self._bytes += nbytes
        return batch

    def _compute(self, batch):
        count = batch.count
        data = batch.buffer[:count].reshape(count, batch.size)
        statistics = np.empty((count, 4))
        np.minimum.reduce(data, axis=1, out=statistics[:, 0])
        np.maximum.reduce(data, axis=1, out=statistics[:, 1])
        with np.errstate(all="ignore"):  # (an overflow to inf is the sum; it must not warn)
            np.add.reduce(data, axis=1, dtype=np.float64, out=statistics[:, 2])
        statistics[:, 2] /= batch.size  # IEEE division, as total / size of Python floats
        statistics[:, _DONE] = 1.0
        self._pool[batch.rows] = statistics
        batch.count = 0
        batch.rows = []


_DTYPE_NAMES = {}


def _dtype_name(dtype):
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype)  # str(dtype) is slow; a run sees few dtypes
    return name

