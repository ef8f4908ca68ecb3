"""Checks of the arguments of the library's public functions, in one place.

The mechanisms, the accountants and conversions, the priors and the audits
validate their arguments here, so that one mistake gets one message
everywhere. The estimators validate their parameters with scikit-learn's
``_parameter_constraints`` instead. Every mechanism calls these checks before
it draws any randomness, so a bad call never consumes privacy budget or
advances the caller's generator.
"""

import math
from numbers import Integral, Real

import numpy as np

__all__ = [
    "CHUNK_ELEMENTS",
    "check_codes",
    "check_finite",
    "check_int",
    "check_k",
    "check_known_rows",
    "check_label_codes",
    "check_label_range",
    "check_negated_sorted_prior",
    "check_nonnegative",
    "check_option",
    "check_positive",
    "check_prior",
    "check_prior_shape",
    "check_scores",
    "check_unit_interval",
    "check_value_prior",
]

# Rows processed at once: large enough to amortise numpy's per-call overhead,
# small enough that the (rows, K) temporaries stay in cache.
CHUNK_ELEMENTS = 1 << 18

_PRIOR_NAN = "prior contains NaN."
_PRIOR_NEGATIVE = "prior entries must be nonnegative."
_PRIOR_INF = "prior contains inf."
_PRIOR_ZERO_ROW = "every prior row needs a positive entry; found an all-zero row."
# A DP histogram normalised in float64 sums to 1 within a few ulps; anything
# further off is a prior given in the wrong form (counts, a density...).
_PRIOR_SUM_TOLERANCE = 1e-6


def _check_real(value, name):
    # bool is an Integral, hence a Real, but True as an epsilon is a mistake.
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number; got {value!r}.")
    return float(value)


def check_positive(value, name, *, allow_zero=False):
    """Return ``value`` as a float after checking it is finite and > 0 (or >= 0).

    Like every scalar check here, it raises ``TypeError`` for a value that is
    not a number of the right kind (a bool never is: ``True`` as an epsilon is
    a mistake) and ``ValueError`` for one out of range, naming the parameter.

    Parameters
    ----------
    value : float
        An epsilon, a noise scale, a sensitivity, a timeout...
    name : str
        The parameter's name, for the message.
    allow_zero : bool, default=False
        Accept 0 as well.

    Returns
    -------
    float
        The value, converted.

    Examples
    --------
    >>> from sklearn_labeldp.utils import check_positive
    >>> check_positive(2, "epsilon")
    2.0
    >>> check_positive(0.0, "epsilon")
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be a finite number > 0; got 0.0.
    """
    value = _check_real(value, name)
    if not (math.isfinite(value) and (value >= 0 if allow_zero else value > 0)):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}; got {value!r}.")
    return value


def check_unit_interval(value, name, *, include_upper=False):
    """A delta or a confidence level ``name``, as a float in the open interval (0, 1).

    With ``include_upper=True`` the interval is ``(0, 1]``: a sampling rate,
    where 1 is the full batch.

    >>> from sklearn_labeldp.utils import check_unit_interval
    >>> check_unit_interval(1e-5, "delta")
    1e-05
    >>> check_unit_interval(1, "sample_rate", include_upper=True)
    1.0
    >>> check_unit_interval(0, "sample_rate", include_upper=True)
    Traceback (most recent call last):
    ...
    ValueError: sample_rate must lie in (0, 1]; got 0.0.
    """
    value = _check_real(value, name)
    if include_upper:
        if not 0 < value <= 1:
            raise ValueError(f"{name} must lie in (0, 1]; got {value!r}.")
    elif not 0 < value < 1:
        raise ValueError(f"{name} must lie in the open interval (0, 1); got {value!r}.")
    return value


def check_nonnegative(value, name, *, upper=math.inf, include_upper=True):
    """A budget's or a share's ``name``, as a float in ``[0, upper]``.

    ``inf`` is allowed if ``upper`` is: an unlimited budget is an infinite
    epsilon, so infinity is not refused. With ``include_upper=False`` the
    interval is ``[0, upper)``: a fraction of an image's side, a share of the
    epochs...

    >>> import math
    >>> from sklearn_labeldp.utils import check_nonnegative
    >>> check_nonnegative(math.inf, "epsilon"), check_nonnegative(0, "delta", upper=1.0)
    (inf, 0.0)
    >>> check_nonnegative(1, "max_shift", upper=1.0, include_upper=False)
    Traceback (most recent call last):
    ...
    ValueError: max_shift must lie in [0, 1.0); got 1.0.
    """
    value = _check_real(value, name)
    too_large = value > upper if include_upper else value >= upper
    if math.isnan(value) or value < 0 or too_large:
        bracket = "]" if include_upper else ")"
        raise ValueError(f"{name} must lie in [0, {upper}{bracket}; got {value!r}.")
    return value


def check_finite(value, name):
    """A threshold or any other real ``name``, as a float, refusing NaN and infinities.

    >>> from sklearn_labeldp.utils import check_finite
    >>> check_finite(-3, "threshold")
    -3.0
    """
    value = _check_real(value, name)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value!r}.")
    return value


def check_label_range(label_range):
    """Return the public range of real labels as a pair of floats ``(low, high)``, ``low < high``.

    Every randomizer for real labels and every label-DP regressor takes such a
    range: the labels are clipped to it, and its width bounds the sensitivity.

    Parameters
    ----------
    label_range : tuple (low, high)
        Two finite real numbers (not bools), ``low < high``; any pair that
        unpacks into two, such as a list or a 1-d array of length 2.

    Returns
    -------
    tuple of float
        ``(low, high)``.

    Raises
    ------
    ValueError
        If ``label_range`` is not a pair, a bound is NaN or infinite, or
        ``low >= high``.
    TypeError
        If a bound is not a real number.

    Examples
    --------
    >>> from sklearn_labeldp.utils import check_label_range
    >>> check_label_range((0, 30))
    (0.0, 30.0)
    >>> check_label_range((1.0, 1.0))
    Traceback (most recent call last):
    ...
    ValueError: label_range must have low < high; got (1.0, 1.0).
    """
    try:
        low, high = label_range
    except (TypeError, ValueError):
        raise ValueError(
            f"label_range must be a pair (low, high) of finite numbers; got {label_range!r}."
        ) from None
    low = check_finite(low, "label_range[0]")
    high = check_finite(high, "label_range[1]")
    if not low < high:
        raise ValueError(f"label_range must have low < high; got ({low!r}, {high!r}).")
    return low, high


def check_int(value, name, *, minimum):
    """A count ``name`` (classes, queries, groups...), as an int of at least ``minimum``.

    A float is refused even when it is integral, as is a bool.

    >>> from sklearn_labeldp.utils import check_int
    >>> check_int(3, "n_classes", minimum=2)
    3
    >>> check_int(3.0, "n_classes", minimum=2)
    Traceback (most recent call last):
    ...
    TypeError: n_classes must be an int; got 3.0.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}.")
    return int(value)


def check_option(value, name, options):
    """``value`` itself, once found among ``options`` (the names a ``method`` takes...).

    >>> from sklearn_labeldp.utils import check_option
    >>> check_option("cks", "method", ("cks", "classic"))
    'cks'
    """
    if value not in options:
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return value


def check_value_prior(prior, label_range):
    """Return a prior over real label values, sorted, after checking it.

    The randomizers for real labels that minimise a loss under a public prior
    (RR-on-Bins, the unbiased randomizer) and the regressors that use them
    take such a prior: a distribution over finitely many values in the public
    ``label_range``. Like the label range, it must be public (fixed in
    advance, or computed with its own budget); this function cannot check
    that.

    Parameters
    ----------
    prior : tuple (values, probabilities)
        Two nonempty 1-d array-likes of the same length: distinct finite
        values in ``label_range`` and their finite, nonnegative probabilities,
        summing to 1 within ``1e-6``.
    label_range : tuple (low, high)
        The public range of the labels, checked with :func:`check_label_range`.

    Returns
    -------
    values : ndarray of shape (n_values,), float64
        The values, in increasing order.
    probabilities : ndarray of shape (n_values,), float64
        Their probabilities, in the same order, normalised to sum to 1.
    order : ndarray of shape (n_values,), int
        The permutation that sorted the values: ``values == given[order]``.

    Raises
    ------
    TypeError
        If ``prior`` does not unpack into two.
    ValueError
        If the two arrays are not nonempty, 1-d and of the same length, an
        entry is not finite, a probability is negative, the probabilities do
        not sum to 1, a value lies outside ``label_range`` or two values are
        equal; or if ``label_range`` is invalid.

    Examples
    --------
    >>> from sklearn_labeldp.utils import check_value_prior
    >>> check_value_prior(([2.0, 0.0], [0.25, 0.75]), (0, 5))
    (array([0., 2.]), array([0.75, 0.25]), array([1, 0]))
    >>> check_value_prior(([0.0, 9.0], [0.5, 0.5]), (0, 5))
    Traceback (most recent call last):
    ...
    ValueError: prior values must lie in label_range [0.0, 5.0]; they span [0.0, 9.0].
    """
    low, high = check_label_range(label_range)
    try:
        values, probabilities = prior
    except (TypeError, ValueError):
        raise TypeError(
            "prior must be a pair (values, probabilities) of 1-d arrays of the same length."
        ) from None
    values = np.asarray(values, dtype=np.float64)
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if values.ndim != 1 or values.shape != probabilities.shape or values.size == 0:
        raise ValueError(
            "prior must be a pair (values, probabilities) of nonempty 1-d arrays of the same "
            f"length; got shapes {values.shape} and {probabilities.shape}."
        )
    if not (np.isfinite(values).all() and np.isfinite(probabilities).all()):
        raise ValueError("prior values and probabilities must be finite.")
    if (probabilities < 0).any():
        raise ValueError("prior probabilities must be nonnegative.")
    total = float(probabilities.sum())
    if abs(total - 1.0) > _PRIOR_SUM_TOLERANCE:
        raise ValueError(f"prior probabilities must sum to 1; they sum to {total!r}.")
    smallest, largest = float(values.min()), float(values.max())
    if smallest < low or largest > high:
        raise ValueError(
            f"prior values must lie in label_range [{low!r}, {high!r}]; they span "
            f"[{smallest!r}, {largest!r}]."
        )
    order = np.argsort(values, kind="stable")
    values = values[order]
    if (np.diff(values) == 0).any():
        raise ValueError("prior values must be distinct.")
    return values, probabilities[order] / total, order


def check_known_rows(array, what):
    """Check that a dask array's chunk sizes along its rows are known.

    A dask array filtered by a boolean mask has unknown (NaN) chunk sizes, and
    rows can then be neither counted nor aligned with another array's.

    Parameters
    ----------
    array : dask.array.Array
    what : str
        How the message names the array (``"y"``, ``"X"``, ...).

    Raises
    ------
    ValueError
        If any chunk size along the first axis is unknown.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn_labeldp.utils import check_known_rows
    >>> check_known_rows(da.zeros(10, chunks=5), "y")
    """
    if any(math.isnan(size) for size in array.chunks[0]):
        raise ValueError(f"{what} has unknown chunk sizes; call compute_chunk_sizes() first.")


_ENCODE_LABELS = (
    " 0..n_classes-1 (encode labels first, e.g. with sklearn.preprocessing.LabelEncoder)"
)


def check_codes(codes, n_codes, *, name, what, hint=""):
    """Return ``codes`` as a 1-d int64 array of integer codes in ``[0, n_codes)``.

    Integral floats (e.g. from pandas) are accepted; an empty list arrives as
    float64 and is accepted too.

    Parameters
    ----------
    codes : array-like of shape (n_samples,)
    n_codes : int
    name : str
        The argument's name, for the messages.
    what : str
        What a code stands for (``"label"``, ``"group"``), for the messages.
    hint : str, default=""
        Appended to the message of a non-integer dtype.

    Returns
    -------
    ndarray of shape (n_samples,), int64

    Examples
    --------
    >>> from sklearn_labeldp.utils._validation import check_codes
    >>> check_codes([0.0, 2.0], 3, name="groups", what="group")
    array([0, 2])
    """
    codes = np.asarray(codes)
    if codes.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of {what} codes; got shape {codes.shape}.")
    integral_floats = (
        codes.dtype.kind == "f" and np.all(np.isfinite(codes)) and np.all(codes == np.floor(codes))
    )
    if codes.dtype.kind not in "iu" and not integral_floats:
        raise TypeError(f"{name} must hold integer {what} codes{hint}; got dtype {codes.dtype}.")
    # Range first, so a huge float never reaches the int64 cast.
    if codes.size and (codes.min() < 0 or codes.max() >= n_codes):
        raise ValueError(f"{what} codes in {name} must lie in [0, {int(n_codes) - 1}].")
    return codes.astype(np.int64, copy=False)


def check_label_codes(y, n_classes):
    """:func:`check_codes` for the label codes ``y`` of a mechanism, in ``[0, n_classes)``.

    >>> from sklearn_labeldp.utils._validation import check_label_codes
    >>> check_label_codes([0, 3], 3)
    Traceback (most recent call last):
    ...
    ValueError: label codes in y must lie in [0, 2].
    """
    return check_codes(y, n_classes, name="y", what="label", hint=_ENCODE_LABELS)


def check_scores(scores, name, *, rows="n_samples"):
    """Return ``scores`` as a finite float64 array of shape (n_rows, n_classes >= 2).

    The post-processing functions take such a matrix: noisy one-hot vectors,
    noisy counts, regressors' scores.

    Parameters
    ----------
    scores : array-like of shape (n_rows, n_classes)
    name : str
        The argument's name, for the messages.
    rows : str, default="n_samples"
        What the rows are, for the messages.

    Returns
    -------
    ndarray of shape (n_rows, n_classes), float64

    Examples
    --------
    >>> from sklearn_labeldp.utils._validation import check_scores
    >>> check_scores([[1, 0]], "noisy")
    array([[1., 0.]])
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError(
            f"{name} must be a 2-d array ({rows}, n_classes >= 2); got shape {scores.shape}."
        )
    if not np.all(np.isfinite(scores)):
        raise ValueError(f"{name} must be finite.")
    return scores


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


def non_numeric_columns(X):
    """The names of a DataFrame's columns that are neither numeric nor boolean.

    Parameters
    ----------
    X : object
        A pandas or dask DataFrame; anything without ``dtypes`` has none.

    Returns
    -------
    list of str
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        return []
    from pandas.api.types import is_bool_dtype, is_numeric_dtype  # a DataFrame needs pandas

    return [
        str(column) for column, dtype in dtypes.items()
        if not (is_numeric_dtype(dtype) or is_bool_dtype(dtype))
    ]
