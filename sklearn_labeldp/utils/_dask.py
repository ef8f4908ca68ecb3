"""Recognising dask collections without importing dask, and dask DataFrames as arrays."""

import functools
import pickle
import sys
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..exceptions import PrivacyLeakWarning
from ._validation import non_numeric_columns

__all__ = [
    "class_labels",
    "class_probabilities",
    "dask_frames_as_arrays",
    "is_dask",
    "is_dask_frame",
    "map_row_blocks",
    "real_values",
    "row_blocks_on_dask",
]


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


def map_row_blocks(method, X, *, n_columns=None, dtype=None):
    """``method`` applied lazily to each block of rows of the dask array ``X``.

    For predictions, which are computed row by row: the feature axis is
    merged into one chunk so that every call sees whole rows, and the result
    is chunked like ``X`` along rows. ``method`` runs in the workers on numpy
    blocks.

    Parameters
    ----------
    method : callable
        Maps an ndarray of shape (n_rows, n_features) to an ndarray of shape
        (n_rows,) or (n_rows, n_columns).
    X : dask.array.Array of shape (n_samples, n_features)
    n_columns : int, default=None
        The columns of ``method``'s output; None for a 1-d output.
    dtype : dtype, default=None
        Of the output.

    Returns
    -------
    dask.array.Array of shape (n_samples,) or (n_samples, n_columns)
    """
    X = X.rechunk({1: -1})
    kwargs = {"dtype": dtype}
    if dtype is not None:
        # Given the output's type, dask need not call ``method`` on an empty
        # block to guess it (a fitted model refuses 0 rows; dask hid the error).
        kwargs["meta"] = np.empty((0,) if n_columns is None else (0, 0), dtype=dtype)
    if n_columns is None:
        return X.map_blocks(method, drop_axis=1, chunks=(X.chunks[0],), **kwargs)
    return X.map_blocks(method, chunks=(X.chunks[0], (n_columns,)), **kwargs)


class _RowBlockMethod:
    """A fitted model's prediction method, as dask ships it to its workers.

    Calling it calls the model's method by name (through any
    ``available_if``). Dask pickles it to tokenize the graph and to send it to
    the workers; that pickle stays inside the user's computation, so the
    model's replay-key :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`
    (meant for a user who pickles a seeded model to release it) is not raised
    for it, on every ``predict``.
    """

    def __init__(self, model, name):
        self.model = model
        self.name = name

    def __call__(self, block):
        return getattr(self.model, self.name)(block)

    def __reduce__(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            blob = pickle.dumps(self.model, protocol=pickle.HIGHEST_PROTOCOL)
        return _unpickled_method, (blob, self.name)


def _unpickled_method(blob, name):
    return _RowBlockMethod(pickle.loads(blob), name)


def class_labels(estimator):
    """The output of a classifier's ``predict``: 1-d, of ``classes_``'s dtype."""
    return None, estimator.classes_.dtype


def class_probabilities(estimator):
    """The output of ``predict_proba``: one float64 column per entry of ``classes_``."""
    return estimator.classes_.size, np.float64


def real_values(estimator):
    """The output of a regressor's ``predict``: 1-d, float64."""
    return None, np.float64


def row_blocks_on_dask(output=None):
    """Decorator: on a dask ``X``, a prediction method maps itself over blocks of rows.

    The decorated method keeps its path for every other ``X``; given a dask
    array it checks that the estimator is fitted and that ``X`` has
    ``n_features_in_`` columns (when the estimator records it), and returns,
    lazily, :func:`map_row_blocks` of itself, whose blocks call the method
    again on numpy rows (in the workers, on a cluster, which receive the
    pickled fitted estimator). Under scikit-learn's ``available_if``, put it
    below ``available_if``, which then hides the method as before.

    Parameters
    ----------
    output : callable, default=None
        ``output(estimator)`` gives ``(n_columns, dtype)`` of the method's
        output from fitted attributes (``n_columns`` None for a 1-d output),
        e.g. ``lambda est: (None, est.classes_.dtype)`` for a classifier's
        ``predict``. None reads them from the method's output on one row of
        zeros (public), for methods whose shape depends on the final model
        (a ``decision_function`` is 1-d for two classes).

    Returns
    -------
    callable
        The decorator.

    Raises
    ------
    ValueError
        From the decorated method, when ``X`` is a dask array whose number of
        columns is not the estimator's ``n_features_in_``: at the call, not
        when the blocks are computed.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator, RegressorMixin
    >>> from sklearn_labeldp.utils import row_blocks_on_dask
    >>> class Doubler(RegressorMixin, BaseEstimator):
    ...     def fit(self, X, y=None):
    ...         self.n_features_in_ = np.shape(X)[1]
    ...         return self
    ...     @row_blocks_on_dask(lambda est: (None, np.float64))
    ...     def predict(self, X):
    ...         return 2.0 * np.asarray(X, dtype=np.float64)[:, 0]
    >>> X = np.ones((4, 3))
    >>> Doubler().fit(X).predict(X)
    array([2., 2., 2., 2.])

    On a dask array (``dask.array.from_array(X, chunks=2)``), ``predict``
    returns a dask array of two blocks of two rows.
    """

    def decorate(method):
        @functools.wraps(method)
        def on_rows(self, X):
            if not is_dask(X):
                return method(self, X)
            check_is_fitted(self)
            expected = getattr(self, "n_features_in_", None)
            # Blocks would only fail when computed, far from this call (an
            # unknown width, nan, is left to them).
            if expected is not None and not np.isnan(X.shape[1]) and X.shape[1] != expected:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                                 f"expecting {expected} features as input.")
            if output is None:
                probe = method(self, np.zeros((1, X.shape[1]), dtype=X.dtype))
                n_columns, dtype = (None if probe.ndim == 1 else probe.shape[1]), probe.dtype
            else:
                n_columns, dtype = output(self)
            # The method by name, not ``method``: a worker calls the estimator's
            # own method (through any ``available_if``).
            return map_row_blocks(_RowBlockMethod(self, method.__name__), X,
                                  n_columns=n_columns, dtype=dtype)

        return on_rows

    return decorate


def is_dask_frame(*objects):
    """Whether any of ``objects`` is a dask DataFrame or Series, without importing dask.

    Parameters
    ----------
    *objects : objects

    Returns
    -------
    bool
    """
    frames = sys.modules.get("dask.dataframe")
    return frames is not None and any(
        isinstance(obj, (frames.DataFrame, frames.Series)) for obj in objects
    )


def dask_frames_as_arrays(X, y, *, owner):
    """A dask DataFrame ``X`` and Series ``y`` as dask arrays with known chunks.

    Estimators that fit dask arrays blockwise (the linear models) take a dask
    DataFrame of numeric columns as the array of its values. Computing the
    partitions' lengths reads nothing but row counts, which are public.

    Parameters
    ----------
    X, y : dask DataFrame/Series or array-like
        Converted when they are dask DataFrames or Series; returned as given
        otherwise.
    owner : str
        The estimator's name, for the error message.

    Returns
    -------
    X, y : dask arrays or the inputs as given
    feature_names : ndarray of str or None
        ``X``'s column names when they are all strings (scikit-learn's rule for
        ``feature_names_in_``), else None.

    Raises
    ------
    TypeError
        When ``X`` has a column that is not numeric: the linear models need
        numbers, and encoding is the user's public preprocessing.
    """
    if not is_dask_frame(X, y):
        return X, y, None
    feature_names = None
    if is_dask_frame(X) and X.ndim == 2:
        if len(X.columns) and all(isinstance(c, str) for c in X.columns):
            feature_names = np.asarray(X.columns, dtype=object)
        not_numeric = non_numeric_columns(X)
        if not_numeric:
            raise TypeError(
                f"{owner} fits a dask DataFrame as the dask array of its values, so every "
                f"column must be numeric; got non-numeric columns {not_numeric}. Encode them "
                "first (e.g. `ddf.categorize()` and `dask.dataframe.get_dummies`, with "
                "categories known from public information), or fit a pandas DataFrame "
                "through a ColumnTransformer pipeline."
            )
    with warnings.catch_warnings():
        # dask says it turns a string dtype into object; that is what the labels need
        warnings.filterwarnings("ignore", message="Dask currently has limited support")
        X, y = (obj.to_dask_array(lengths=True) if is_dask_frame(obj) else obj for obj in (X, y))
    return X, y, feature_names

