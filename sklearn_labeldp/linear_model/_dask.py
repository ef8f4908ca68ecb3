"""The dask path of the linear models: lazy checks, blockwise sums, lazy predictions.

Two mechanisms fit a dask ``X`` chunked by rows (its columns are put in one
chunk) and a ``y`` chunked like it:
:class:`~sklearn_labeldp.linear_model.DPLeastSquaresClassifier` (DP least
squares) and :class:`~sklearn_labeldp.linear_model.DPLogisticRegression` with
``solver="newton"`` or ``"fc"`` (DP-Newton and DP-FC, private ERM). Nothing
here computes the whole of ``X`` or ``y`` on the client:

- the checks of shapes, dtypes and chunks are lazy (:func:`check_dask_Xy`);
  the values are checked by small reductions computed before the budget is
  charged (finite features with the row-norm bound of
  :func:`~sklearn_labeldp.linear_model._preprocessing.plan_row_bound`, labels
  in ``classes`` by :func:`unknown_labels`), as the numpy path checks them;
- the labels stay a dask array of codes (:func:`encode_dask_labels`) inside
  :class:`~sklearn_labeldp._private_labels.PrivateLabels`, which keeps dask
  codes lazy, and reach a mechanism only through
  :meth:`~sklearn_labeldp._private_labels.PrivateLabels.release`;
- every block of rows gives the exact sums of the numpy kernels of
  :mod:`~sklearn_labeldp.linear_model._statistics`, and a tree reduction adds
  them up in one ``dask.compute``: DP least squares' statistics
  (:func:`dask_least_squares_statistics`, once) and DP-Newton's or DP-FC's
  sums (:class:`DaskSecondOrderSums`, once per step). The mechanism adds the
  noise on the client, in the same order as for numpy input;
- predictions map over the blocks of ``X`` (:func:`dask_decision_function`).

dask itself is imported where it is used: it is an optional extra.
"""

import uuid
from functools import partial

import numpy as np
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted

from .._base import check_classes
from ..utils import check_known_rows, check_option, is_dask
from ._statistics import gram_sum, least_squares_statistics, step_sums

__all__ = [
    "check_dask_Xy",
    "dask_decision_function",
    "linear_scores",
    "dask_least_squares_statistics",
    "dask_second_order_sums",
    "encode_dask_labels",
    "map_design",
    "prepare_dask_Xy",
    "unknown_labels",
]

# Fan-in of the tree reduction of the per-block statistics: each reduction task
# adds at most this many (K p^2 + K p + p^2)-vectors.
SPLIT_EVERY = 8


def _name(prefix):
    return f"{prefix}-{uuid.uuid4().hex}"


def _check_numeric(X, what="X"):
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{what} must hold numbers (a float or int dtype); got dtype {X.dtype}.")
    meta = getattr(X, "_meta", None)
    if meta is not None and not isinstance(meta, np.ndarray):
        raise TypeError(
            f"the blocks of a dask {what} must be numpy arrays; got {type(meta).__name__}."
        )


def check_dask_Xy(estimator, X, y):
    """Lazy validation of a dask ``X`` (and ``y``) for a fit: shapes, dtypes and chunks only.

    Parameters
    ----------
    estimator : estimator
        Gets ``n_features_in_`` (from the shape, nothing is computed).
    X : dask.array.Array or array-like of shape (n_samples, n_features)
    y : dask.array.Array or array-like of shape (n_samples,) or (n_samples, 1)

    Returns
    -------
    X : dask.array.Array
        Float64, chunked by rows with the columns in one chunk.
    y : dask.array.Array of shape (n_samples,)
        Chunked like ``X`` along rows.
    """
    import dask.array as da

    if not isinstance(X, da.Array):
        X = np.asarray(X)
        X = da.from_array(X, chunks=(X.shape[0] if X.ndim else 1, -1), name=_name("X"))
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D array for X; got a dask array of shape {X.shape}.")
    _check_numeric(X)
    check_known_rows(X, "X")
    n_samples, n_features = X.shape
    if n_samples < 1 or n_features < 1:
        raise ValueError(f"X has shape {X.shape}: at least one sample and one feature needed.")
    if X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    if not isinstance(y, da.Array):
        y = np.asarray(y)
        if y.ndim == 0:
            raise ValueError("y must be 1-d; got a scalar.")
        y = da.from_array(y, chunks=(X.chunks[0], *y.shape[1:]), name=_name("y"))
    check_known_rows(y, "y")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d; got shape {y.shape}.")
    if y.shape[0] != n_samples:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n_samples}, "
            f"{y.shape[0]}]."
        )
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk({0: X.chunks[0]})
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    estimator.n_features_in_ = n_features
    return X, y


def _codes_block(y, classes):
    codes = np.clip(np.searchsorted(classes, y), 0, classes.size - 1)
    if y.size and (classes[codes] != y).any():
        raise ValueError(f"y holds labels that are not in `classes` ({classes.tolist()}).")
    return codes.astype(np.intp, copy=False)


def _unknown_block(y, classes):
    codes = np.clip(np.searchsorted(classes, y), 0, classes.size - 1)
    return classes[codes] != y


def encode_dask_labels(estimator, y):
    """The sorted label set (from ``classes``, required) and the lazy codes of a dask ``y``.

    Raises
    ------
    ValueError
        When ``classes`` is None: inferring the label set would read (and
        leak) the labels of a whole dask array before the charge.
    """
    if estimator.classes is None:
        raise ValueError(
            f"{type(estimator).__name__}: pass `classes` when y is a dask array (the label "
            "set is not inferred from a dask y: that would read every label, and reveal "
            "which occur, before the budget is charged)."
        )
    classes = check_classes(estimator.classes)
    codes = y.map_blocks(_codes_block, classes=classes, dtype=np.intp, name=_name("codes"))
    return classes, codes


def prepare_dask_Xy(estimator, X, y):
    """``_prepare_Xy`` of a dask fit: lazy checks of shapes and chunks, the labels as
    a dask array of codes, and one small reduction checking they are all in
    ``classes``; nothing else of ``X`` or ``y`` is computed."""
    X, y = check_dask_Xy(estimator, X, y)
    classes, codes = encode_dask_labels(estimator, y)
    if unknown_labels(y, classes).compute():
        raise ValueError(f"y holds labels that are not in `classes` ({classes.tolist()}).")
    return X, classes, codes


def unknown_labels(y, classes):
    """Lazy: whether ``y`` holds a label outside ``classes`` (the numpy path's check)."""
    return y.map_blocks(_unknown_block, classes=classes, dtype=bool).any()


def map_design(design, X):
    """``design`` (a numpy design builder) on every block of rows of a dask ``X``, lazily."""
    width = design(np.zeros((0, X.shape[1]))).shape[1]
    return X.map_blocks(
        design, chunks=(X.chunks[0], (width,)), dtype=np.float64,
        meta=np.empty((0, 0)), name=_name("design"),
    )


def _keys_shapes(p, n_classes, formulation, gram):
    keys = [("b", (p, n_classes))]
    if formulation == "weighted":
        keys.append(("A", (n_classes, p, p)))
    if gram:
        keys.append(("G", (p, p)))
    return keys


def _block_statistics(codes, Z, *, keys_shapes, **kwargs):
    stats = least_squares_statistics(codes[:, 0], Z, gram="G" in dict(keys_shapes), **kwargs)
    return np.concatenate([stats[key].ravel() for key, _ in keys_shapes])[None, :]


def dask_least_squares_statistics(
    codes, Z, *, n_classes, formulation, data_norm, gram, split_every=SPLIT_EVERY
):
    """The exact DP-LS statistics of dask ``codes`` and ``Z``, by a tree reduction.

    Every block of rows gives the statistics of
    :func:`~sklearn_labeldp.linear_model._statistics.least_squares_statistics`
    (the numpy implementation, which also checks the row norms), flattened
    into one row; the rows are summed by ``sum(axis=0, split_every=...)`` and
    the ``O(K p^2)`` sum is computed (``dask.compute``): this is the one place
    the labels are computed, inside the release of the mechanism.

    Parameters
    ----------
    codes : dask.array.Array of shape (n_samples,)
    Z : dask.array.Array of shape (n_samples, p)
        Chunked like ``codes`` along rows, the columns in one chunk.
    n_classes : int
    formulation : {"weighted", "ridge"}
    data_norm : float
    gram : bool
        Whether to compute ``"G" = Z^T Z`` too (from ``Z`` alone).
    split_every : int, default=8
        Fan-in of the tree reduction.

    Returns
    -------
    dict
        Numpy arrays: ``"b"`` (p, n_classes), ``"A"`` (n_classes, p, p) for
        ``"weighted"``, ``"G"`` (p, p) when ``gram``.
    """
    codes, Z = _aligned(codes, Z)
    keys_shapes = _keys_shapes(Z.shape[1], n_classes, formulation, gram)
    length = sum(int(np.prod(shape)) for _, shape in keys_shapes)
    function = partial(_block_statistics, keys_shapes=keys_shapes, n_classes=n_classes,
                       formulation=formulation, data_norm=data_norm)
    flat = _reduce_rows(function, length, codes[:, None], Z, split_every=split_every,
                        name="ls-statistics")
    stats, start = {}, 0
    for key, shape in keys_shapes:
        size = int(np.prod(shape))
        stats[key] = flat[start : start + size].reshape(shape).copy()
        start += size
    return stats


def _aligned(codes, Z):
    import dask.array as da

    if not isinstance(codes, da.Array) or not isinstance(Z, da.Array):
        raise TypeError("codes and Z must both be dask arrays (or both numpy ones).")
    check_known_rows(codes, "the label codes")
    check_known_rows(Z, "Z")
    if Z.numblocks[1] != 1:
        Z = Z.rechunk({1: -1})
    if codes.chunks[0] != Z.chunks[0]:
        raise ValueError(
            f"the label codes are chunked {codes.chunks[0]} along rows but Z is chunked "
            f"{Z.chunks[0]}; chunk them alike."
        )
    return codes, Z


def _reduce_rows(function, length, *arrays, split_every, name):
    """``function`` on every block of rows of ``arrays`` (one flat row each), summed
    by a tree reduction and computed: one ``dask.compute``."""
    import dask
    import dask.array as da

    parts = da.map_blocks(
        function, *arrays, chunks=((1,) * arrays[-1].numblocks[0], (length,)),
        dtype=np.float64, meta=np.empty((0, 0)), name=_name(name),
    )
    (flat,) = dask.compute(parts.sum(axis=0, split_every=split_every))
    return np.asarray(flat, dtype=np.float64)


def _block_gram(Z):
    return gram_sum(Z).ravel()[None, :]


def _block_step(codes, Z, *, theta, n_classes, hessians):
    grad, hess = step_sums(codes[:, 0], Z, theta, n_classes, hessians)
    flat = [grad.ravel()] if hess is None else [grad.ravel(), hess.ravel()]
    return np.concatenate(flat)[None, :]


class DaskSecondOrderSums:
    """The exact sums of DP-Newton and DP-FC from dask ``codes`` and ``Z``, blockwise.

    :meth:`gram` (FC, once) and :meth:`step` (every step) each run one
    ``dask.compute``: every block of rows gives what
    :func:`~sklearn_labeldp.linear_model._statistics.step_sums` (or
    :func:`~sklearn_labeldp.linear_model._statistics.gram_sum`) gives on
    those rows, the current ``theta`` broadcast to the blocks, and the
    ``O(m d^2)`` flat rows are summed by a tree reduction. The noise and the
    step are taken on the client by the caller.
    """

    def __init__(self, codes, Z, *, n_classes, split_every=SPLIT_EVERY):
        self.codes, self.Z = _aligned(codes, Z)
        self.n_classes, self.split_every = n_classes, split_every

    def gram(self):
        d = self.Z.shape[1]
        flat = _reduce_rows(_block_gram, d * d, self.Z, split_every=self.split_every,
                            name="fc-gram")
        return flat.reshape(d, d)

    def step(self, theta, hessians):
        theta = np.array(theta, dtype=np.float64)  # a snapshot: the caller updates theta
        m, d = theta.shape
        length = m * d + (m * d * d if hessians else 0)
        function = partial(_block_step, theta=theta, n_classes=self.n_classes,
                           hessians=hessians)
        flat = _reduce_rows(function, length, self.codes[:, None], self.Z,
                            split_every=self.split_every, name="second-order-step")
        grad = flat[: m * d].reshape(m, d).copy()
        return grad, (flat[m * d :].reshape(m, d, d).copy() if hessians else None)


def dask_second_order_sums(codes, Z, *, n_classes, solver, split_every=SPLIT_EVERY):
    """The blockwise sums of DP-Newton and DP-FC (:class:`DaskSecondOrderSums`)."""
    check_option(solver, "solver", ("newton", "fc"))
    return DaskSecondOrderSums(codes, Z, n_classes=n_classes, split_every=split_every)


def _check_dask_X_predict(estimator, X):
    _check_numeric(X)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D array for X; got a dask array of shape {X.shape}.")
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    return X.rechunk({1: -1}) if X.numblocks[1] != 1 else X


def linear_scores(X, coef, intercept):
    """``X @ coef.T + intercept`` with the linear models' conventions, on one block.

    A one-row ``coef`` (the ERM models, two classes) gives its 1-d score; a
    two-row one (DP least squares, two classes) the score of the second row
    minus that of the first; otherwise one column per class.
    """
    scores = np.asarray(safe_sparse_dot(X, coef.T, dense_output=True)) + intercept
    if scores.shape[1] == 1:  # one-row coef_ (the ERM models, two classes)
        return scores[:, 0]
    return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores


def dask_decision_function(estimator, X):
    """``X @ coef_.T + intercept_`` over the blocks of a dask ``X`` (lazy).

    Same conventions as the numpy paths: for two classes a 1-d score, positive
    for ``classes_[1]`` (the one row of ``coef_``, or the difference of two).
    """
    X = _check_dask_X_predict(estimator, X)
    coef, intercept = np.asarray(estimator.coef_), np.asarray(estimator.intercept_)
    kwargs = dict(coef=coef, intercept=intercept, dtype=np.float64, name=_name("scores"))
    if coef.shape[0] <= 2:
        return X.map_blocks(linear_scores, drop_axis=1, chunks=(X.chunks[0],), **kwargs)
    return X.map_blocks(linear_scores, chunks=(X.chunks[0], (coef.shape[0],)), **kwargs)


class LinearDecisionMixin:
    """``decision_function`` of the linear classifiers, on numpy, sparse or dask ``X``."""

    def decision_function(self, X):
        """Class scores ``X @ coef_.T + intercept_`` (rows are not clipped).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,) for two classes, else \
(n_samples, n_classes)
            Lazy, chunked like ``X`` along rows, for a dask ``X`` (whatever the
            model was fitted on). For two classes, scikit-learn's convention:
            positive means ``classes_[1]``.
        """
        check_is_fitted(self)
        if is_dask(X):
            return dask_decision_function(self, X)
        X = self._validate_X(X, reset=False)
        return linear_scores(X, self.coef_, self.intercept_)
