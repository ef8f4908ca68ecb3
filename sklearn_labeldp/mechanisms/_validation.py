"""Input checks shared by the label mechanisms.

Every mechanism validates its inputs before it draws any randomness, so a bad
call never consumes privacy budget or advances the caller's generator.
"""

import math
from numbers import Integral, Real

import numpy as np

# Rows processed at once: large enough to amortise numpy's per-call overhead,
# small enough that the (rows, K) temporaries stay in cache.
CHUNK_ELEMENTS = 1 << 18

_PRIOR_NAN = "prior contains NaN."
_PRIOR_NEGATIVE = "prior entries must be nonnegative."
_PRIOR_INF = "prior contains inf."
_PRIOR_ZERO_ROW = "every prior row needs a positive entry; found an all-zero row."


def check_epsilon(epsilon, name="epsilon"):
    """Return ``epsilon`` as a float after checking it is finite and > 0."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real):
        raise TypeError(f"{name} must be a real number; got {epsilon!r}.")
    epsilon = float(epsilon)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"{name} must be a finite number > 0; got {epsilon!r}.")
    return epsilon


def check_n_classes(n_classes):
    """Return ``n_classes`` as an int after checking it is >= 2."""
    if isinstance(n_classes, bool) or not isinstance(n_classes, Integral):
        raise TypeError(f"n_classes must be an int; got {n_classes!r}.")
    if n_classes < 2:
        raise ValueError(f"n_classes must be >= 2; got {n_classes}.")
    return int(n_classes)


def check_label_codes(y, n_classes):
    """Return ``y`` as a 1-d int64 array of codes in ``[0, n_classes)``."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-d array of label codes; got shape {y.shape}.")
    # Integral floats (e.g. from pandas) are accepted; an empty list arrives as
    # float64 and is accepted too.
    integral_floats = y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.floor(y))
    if y.dtype.kind not in "iu" and not integral_floats:
        raise TypeError(
            "y must hold integer label codes 0..n_classes-1 (encode labels first, "
            f"e.g. with sklearn.preprocessing.LabelEncoder); got dtype {y.dtype}."
        )
    # Range first, so a huge float never reaches the int64 cast.
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"label codes in y must lie in [0, {n_classes - 1}].")
    return y.astype(np.int64, copy=False)


def check_prior_shape(prior, n_samples=None):
    """Return ``prior`` as a float64 array after checking its shape only.

    Callers that sort the prior anyway check its values with
    :func:`check_negated_sorted_prior` on the sorted chunks, saving a pass.
    """
    prior = np.asarray(prior, dtype=np.float64)
    if prior.ndim != 2:
        raise ValueError(
            f"prior must be a 2-d array (n_samples, n_classes); got shape {prior.shape}."
        )
    if n_samples is not None and prior.shape[0] != n_samples:
        raise ValueError(
            f"prior has {prior.shape[0]} rows but there are {n_samples} labels; "
            "give one prior row per example."
        )
    if prior.shape[1] < 2:
        raise ValueError(f"prior must have at least 2 columns (classes); got {prior.shape[1]}.")
    return prior


def check_prior(prior, n_samples=None):
    """Validate a prior matrix for RRWithPrior and RRTop-k.

    Rows need not sum to one: every mechanism here depends on a row only up to
    a positive factor. Entries must be finite and nonnegative, and each row
    must have a positive entry. The prior must not depend on the labels it is
    used with (Ghazi et al. 2021); this function cannot check that.

    Parameters
    ----------
    prior : array-like of shape (n_samples, n_classes)
        One row per example, one column per class, ``n_classes >= 2``.
    n_samples : int, default=None
        If given, the number of rows ``prior`` must have.

    Returns
    -------
    prior : ndarray of shape (n_samples, n_classes), float64

    Raises
    ------
    ValueError
        If the shape is wrong, an entry is NaN, negative or infinite, or a row
        is all zeros.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import check_prior
    >>> check_prior([[1, 3], [0.5, 0.5]])
    array([[1. , 3. ],
           [0.5, 0.5]])
    """
    prior = check_prior_shape(prior, n_samples)
    step = max(1, CHUNK_ELEMENTS // prior.shape[1])
    for start in range(0, prior.shape[0], step):
        chunk = prior[start : start + step]
        # Whole-chunk min and max are contiguous reductions, much cheaper than
        # per-row ones; only the all-zero-row test needs a row-wise pass.
        lowest = chunk.min()  # NaN propagates through min
        if np.isnan(lowest):
            raise ValueError(_PRIOR_NAN)
        if lowest < 0:
            raise ValueError(_PRIOR_NEGATIVE)
        if np.isinf(chunk.max()):
            raise ValueError(_PRIOR_INF)
        if not chunk.any(axis=1).all():
            raise ValueError(_PRIOR_ZERO_ROW)
    return prior


def check_negated_sorted_prior(negated_sorted):
    """Check the values of a prior chunk given as ``np.sort(-chunk, axis=1)``.

    Raises the same errors, in the same order, as :func:`check_prior` does for
    the chunk. Each row's extremes sit in its first and last column (NaN sorts
    last), so the check costs O(rows) instead of a pass over the chunk.
    """
    if negated_sorted.shape[0] == 0:
        return
    minus_row_min = negated_sorted[:, -1]
    if np.isnan(minus_row_min).any():
        raise ValueError(_PRIOR_NAN)
    if (minus_row_min > 0).any():
        raise ValueError(_PRIOR_NEGATIVE)
    minus_row_max = negated_sorted[:, 0]
    if np.isinf(minus_row_max).any():
        raise ValueError(_PRIOR_INF)
    if (minus_row_max >= 0).any():
        raise ValueError(_PRIOR_ZERO_ROW)


def check_k(k, n_samples, n_classes):
    """Return ``k`` as an int64 array of shape (n_samples,) with values in [1, K]."""
    k = np.asarray(k)
    if k.dtype.kind not in "iu":
        raise TypeError(f"k must be an integer or an array of integers; got dtype {k.dtype}.")
    if k.ndim == 0:
        k = np.full(n_samples, int(k), dtype=np.int64)
    elif k.shape != (n_samples,):
        raise ValueError(f"k must be a scalar or have shape ({n_samples},); got {k.shape}.")
    if k.size and (k.min() < 1 or k.max() > n_classes):
        raise ValueError(f"k must lie in [1, {n_classes}].")
    return k.astype(np.int64, copy=False)
