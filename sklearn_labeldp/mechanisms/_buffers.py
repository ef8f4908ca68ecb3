"""Work arrays that the chunks of one mechanism call share.

The mechanisms process a block of labels in row chunks of about
``CHUNK_ELEMENTS`` entries, so that their ``(rows, K)`` temporaries stay in
cache. Allocating those temporaries afresh for every chunk is cheap in a
plain process, where glibc's malloc raises its ``mmap`` threshold to the
size of the arrays it has seen freed and serves them again from its heap.
It is not inside a Dask worker: distributed's nanny starts workers with
``MALLOC_TRIM_THRESHOLD_=65536``, and setting any of glibc's thresholds
turns that adaptation off, so every allocation above 128 KiB becomes a
fresh ``mmap`` whose pages are faulted in (zeroed by the kernel) on first
touch and unmapped on ``free``. A mechanism that allocates a few 2 MiB
temporaries per chunk then spends more time in page faults than in
arithmetic (measured: ``rr_with_prior`` 2 to 3 times slower per block in a
worker than in the client).

A :class:`WorkBuffers` holds the arrays of one call, allocated on first use
and handed out again, as views, to every later chunk: the chunks write into
them with the ``out=`` arguments of numpy's ufuncs and of
:class:`numpy.random.Generator`'s methods. The arithmetic and the order of
the random draws are those of the allocating code, so the outputs are the
same bit for bit.
"""

import math

import numpy as np

__all__ = ["WorkBuffers", "label_positions"]


class WorkBuffers:
    """Named, reusable work arrays for the chunks of one call.

    Each name owns one flat array, grown (never shrunk) to the largest size
    asked for and returned as a C-contiguous view of the requested shape. The
    first chunk of a call is its largest, so every buffer is usually
    allocated once per call.

    A view is valid until the same name is asked for again: two arrays that
    are needed at the same time must have different names.

    Examples
    --------
    >>> buffers = WorkBuffers()
    >>> a = buffers.get("coins", (2, 3))
    >>> b = buffers.get("coins", (4,))
    >>> bool(np.shares_memory(a, b)), a.flags.c_contiguous
    (True, True)
    """

    def __init__(self):
        self._arrays = {}

    def get(self, name, shape, dtype=np.float64):
        """A C-contiguous array of ``shape`` and ``dtype`` (uninitialised) under ``name``."""
        shape = tuple(int(s) for s in np.atleast_1d(shape))
        size = math.prod(shape)
        dtype = np.dtype(dtype)
        flat = self._arrays.get(name)
        if flat is None or flat.dtype != dtype or flat.size < size:
            flat = self._arrays[name] = np.empty(size, dtype=dtype)
        return flat[:size].reshape(shape)

    def arange(self, stop):
        """``np.arange(stop)`` (int64), computed once for the largest ``stop`` asked for."""
        flat = self._arrays.get("__arange__")
        if flat is None or flat.size < stop:
            flat = self._arrays["__arange__"] = np.arange(stop, dtype=np.int64)
        return flat[:stop]

    def row_offsets(self, n_rows, n_columns):
        """``np.arange(n_rows) * n_columns``: the flat index of each row's first entry."""
        key = f"__offsets_{int(n_columns)}__"
        flat = self._arrays.get(key)
        if flat is None or flat.size < n_rows:
            flat = self._arrays[key] = np.arange(n_rows, dtype=np.int64) * n_columns
        return flat[:n_rows]


def label_positions(buffers, labels, n_columns, first_row=0):
    """Flat indices ``(first_row + i) * n_columns + labels[i]`` of each row's label entry.

    The entries ``a[first_row + i, labels[i]]`` of a C-contiguous ``a`` with
    ``n_columns`` columns are ``a.reshape(-1)[label_positions(...)]``: a
    gather without the ``np.arange`` of a fancy index. The result is one of
    ``buffers``' arrays.

    Examples
    --------
    >>> label_positions(WorkBuffers(), np.array([2, 0, 1]), 3, first_row=1)
    array([ 5,  6, 10])
    """
    n_rows = labels.shape[0]
    index = np.add(buffers.row_offsets(n_rows, n_columns), labels,
                   out=buffers.get("label_positions", n_rows, np.int64))
    if first_row:
        index += first_row * n_columns
    return index
