"""Recognising dask arrays without importing dask."""

import sys

__all__ = ["is_dask"]


def is_dask(*arrays):
    """Whether any of ``arrays`` is a dask array, without importing dask.

    A dask array can only exist once :mod:`dask.array` was imported, so a
    process that never imported it pays nothing for this check.

    Parameters
    ----------
    *arrays : objects

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.utils import is_dask
    >>> is_dask(np.zeros(3), [1, 2])
    False
    """
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and any(isinstance(a, dask_array.Array) for a in arrays)
