"""The row-norm bound and the row clipping shared by the private linear models.

The sensitivity analyses of the linear models assume every feature row has
L2 norm at most a bound that the mechanism may treat as public. Rows above it
are scaled down to the bound; rows inside it are left alone, and no row is
rescaled by an amount computed from the other rows.

Under label DP the features are public, so the bound may be read from them
(``"auto"``: a quantile of the row norms, the median for the classifiers and
the 99th percentile by default) and the share of rows it clips may be
reported. Under full DP both are statistics of the private features: the bound
should be given, and the clipped share is never released.
"""

import math
import warnings

import numpy as np
import scipy.sparse as sp

from ..exceptions import PrivacyLeakWarning, RowClippingWarning
from ..utils import check_positive, is_dask

# Above this share of clipped rows a label-DP fit with a given bound warns (or above
# the share "auto" clips, 1 - quantile, when that is larger): the model then sees a
# distorted picture of the features (every clipped row loses its length).
CLIPPED_FRACTION_WARNING = 0.05

# The "auto" bound is a quantile of the training rows' L2 norms, not their maximum.
# Every sensitivity scales with the bound, so a few outlying rows must not set it: after
# a StandardScaler on one-hot columns, rare categories give a handful of rows many
# times longer than the rest (on UCI Adult the largest norm is about 5 times the 99th
# percentile). AUTO_QUANTILE is the default of plan_row_bound, for models whose fit a
# shortened row biases (a regression's prediction shrinks with its row): about 1% of
# the rows are clipped.
AUTO_QUANTILE = 0.99

# The classifiers' quantile: the median. Every mechanism's noise scales with the bound,
# while a row's share of the signal is its clipped norm min(||x||, R) / R in the mapped
# units: a bound at the median gives half the rows the whole unit norm and shrinks the
# others along their own direction, which changes a linear classifier's scores by a
# positive factor per row and mostly not its decisions. A high quantile lets the
# longest rows set the noise for all: after a StandardScaler, rare one-hot categories
# (UCI Adult) or nearly constant pixels (the digits) make the 99th percentile 2 to 3
# times the median. Measured (test accuracy, label DP, eps = 8, the digits: n = 1257,
# K = 10): DP least squares 0.82 with the 99th percentile (18.9) against 0.90 with the
# median (6.7), DP-Newton 0.79 against 0.89; at eps = 1e4 the median costs nothing
# (DP-Newton 0.957 against 0.939). On UCI Adult at eps = 1 it gained 0.5 to 0.7
# points and at eps = 8 lost at most 0.6.
CLASSIFIER_AUTO_QUANTILE = 0.5

# Rows above the bound by less than this relative amount are not counted as clipped:
# rows normalised to the bound come out of floating point a hair above it, and
# clipping them changes nothing that matters.
_ROUNDING = 1e-9

# plan_row_bound is called by an estimator's _plan_fit; between it and the user's
# call of fit lie _plan_fit, _fit, _fit_or_discard, fit and scikit-learn's
# _fit_context wrapper, so the warnings point at the user's line.
_STACKLEVEL = 7


def plan_row_bound(X, data_norm, *, privacy, quantile=AUTO_QUANTILE, norms=None):
    """Settle the row-norm bound of a fit from public information, before any label is read.

    Parameters
    ----------
    X : {ndarray, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
        The training features. A dask ``X`` is summarised by small
        reductions (:func:`_dask_norm_summary`; ``"auto"`` then takes dask's
        approximate percentile).
    data_norm : float or "auto"
        The estimators' parameter. ``"auto"`` takes the ``quantile``
        (:func:`numpy.quantile`'s linear interpolation) of the L2 row norms of
        ``X``, so that about a share ``1 - quantile`` of the rows are clipped;
        the largest row norm if that quantile is 0 but some row is not, and 1
        when every row is zero.
    privacy : {"label", "full"}
        Under ``"label"`` the features are public: ``"auto"`` is free and the
        share of clipped rows is reported (a :class:`RowClippingWarning` when a
        given bound clips more than ``max(5%, 1 - quantile)`` of them;
        ``"auto"`` never warns). Under ``"full"`` ``"auto"``
        reads the private features, which
        the guarantee does not cover: a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning` says so. The
        clipped share is a statistic of the private features too, so it is
        neither returned nor put in a warning.
    quantile : float, default=AUTO_QUANTILE
        Of ``"auto"``: 0.99 by default, ``CLASSIFIER_AUTO_QUANTILE`` (the
        median) for the classifiers.
    norms : ndarray of shape (n_samples,), default=None
        :func:`row_norms` of a numpy or sparse ``X`` when the caller has them
        (to clip with them too, :func:`clipped_design`); computed here otherwise.

    Returns
    -------
    bound : float
        The bound the fit clips to, > 0.
    attributes : dict
        Fitted attributes: ``"data_norm_"`` (the bound) and, under label DP,
        ``"clipped_fraction_"``: the share of rows of norm above the bound by
        more than a relative ``1e-9`` (rows normalised to the bound and rounded
        a hair above it do not count).
    """
    if is_dask(X):
        summary = _dask_norm_summary(X, data_norm, privacy, quantile)
    else:
        norms = row_norms(X) if norms is None else norms
        summary = {"largest": lambda: float(norms.max()) if norms.size else 0.0,
                   "quantile": lambda: (float(np.quantile(norms, quantile))
                                        if norms.size else 0.0),
                   "fraction": lambda bound: float(np.mean(norms > bound * (1.0 + _ROUNDING)))}
    if isinstance(data_norm, str):  # "auto", the only string the parameter constraints allow
        if privacy == "full":
            warnings.warn(
                "data_norm='auto' with privacy='full' reads a quantile of the private "
                "features' row norms, a release the differential-privacy guarantee does "
                "not cover. Pass a public bound as data_norm.",
                PrivacyLeakWarning,
                stacklevel=_STACKLEVEL,
            )
        largest, typical = summary["largest"](), summary["quantile"]()
        # Mostly zero rows: the largest norm, so that the rest are not clipped
        # to (nearly) nothing; every row zero: 1, any bound clips nothing then.
        bound = typical if typical > 0 else largest if largest > 0 else 1.0
    elif math.isfinite(data_norm) and data_norm > 0:
        bound = float(data_norm)
    else:
        raise ValueError(f"data_norm must be 'auto' or a finite number > 0; got {data_norm!r}.")
    attributes = {"data_norm_": bound}
    if privacy == "label":
        fraction = summary["fraction"](bound)
        # "auto" clips its share 1 - quantile by design and never warns.
        limit = max(CLIPPED_FRACTION_WARNING, 1.0 - quantile)
        if fraction > limit and not isinstance(data_norm, str):
            auto = ("the median row norm" if quantile == 0.5
                    else f"the {100 * quantile:g}th percentile of the row norms")
            warnings.warn(
                f"{fraction:.1%} of the training rows have an L2 norm above data_norm={bound:g} "
                "and were clipped to it, which distorts the features. Under label DP the "
                f"features are public: data_norm='auto' ({auto}) clips about "
                f"{1.0 - quantile:.0%} of the rows.",
                RowClippingWarning,
                stacklevel=_STACKLEVEL,
            )
        attributes["clipped_fraction_"] = fraction
    return bound, attributes


def _dask_norm_summary(X, data_norm, privacy, quantile):
    """The row-norm statistics :func:`plan_row_bound` needs, from a dask ``X``, lazily.

    One ``dask.compute`` over the blocks gives the largest row norm, the
    ``quantile`` by :func:`dask.array.percentile` (approximate:
    it merges per-block percentiles; the bound only has to be public, which
    it is under label DP, and under full DP ``"auto"`` warns anyway), whether
    every entry is finite (the numpy path's input check, made here so that it
    costs no extra pass) and, for a given bound under label DP, the number
    of clipped rows. With ``"auto"`` under label DP the clipped rows are
    counted by a second pass, once the bound is known.
    """
    import dask
    import dask.array as da

    norms = X.map_blocks(row_norms, drop_axis=1, dtype=np.float64)
    lazy = {"finite": da.isfinite(X).all(), "largest": norms.max()}
    auto = isinstance(data_norm, str)
    if auto:
        lazy["quantile"] = da.percentile(norms, [100.0 * quantile]).max()
    n_rows = X.shape[0]

    def count_clipped(bound):
        return (norms > bound * (1.0 + _ROUNDING)).sum()

    if privacy == "label" and not auto and math.isfinite(data_norm) and data_norm > 0:
        lazy["clipped"] = count_clipped(float(data_norm))
    (values,) = dask.compute(lazy)
    if not values["finite"]:
        raise ValueError("Input X contains NaN or infinity.")

    def fraction(bound):
        clipped = values["clipped"] if "clipped" in values else count_clipped(bound).compute()
        return float(clipped) / n_rows if n_rows else 0.0

    return {"largest": lambda: float(values["largest"]) if n_rows else 0.0,
            "quantile": lambda: float(values["quantile"]) if n_rows else 0.0,
            "fraction": fraction}


def clip_rows(X, max_norm, norms=None):
    """Scale every row of ``X`` whose L2 norm exceeds ``max_norm`` down to it.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    max_norm : float
        Public bound, > 0.
    norms : ndarray of shape (n_samples,), default=None
        :func:`row_norms` of ``X``, when known.

    Returns
    -------
    {ndarray, sparse matrix} of shape (n_samples, n_features)
        A new array (float64); rows with norm <= ``max_norm`` are unchanged.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        return sp.diags(row_clip_factors(X, max_norm, norms)) @ X
    X = np.array(X, dtype=np.float64, copy=True)
    X *= row_clip_factors(X, max_norm, norms)[:, None]
    return X


def clipped_design(X, max_norm, *, intercept, scale=1.0, norms=None):
    """``scale * [clip_rows(X, max_norm), max_norm]``: the design of a linear model.

    The constant column (the intercept feature, ``max_norm`` so that it is on
    the scale of the clipped rows) is appended only when ``intercept``. Dense
    input with an intercept is clipped straight into the design: one pass and
    one copy of ``X``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    max_norm : float
        Public bound, > 0.
    intercept : bool
    scale : float, default=1.0
    norms : ndarray of shape (n_samples,), default=None
        :func:`row_norms` of ``X``, when the caller has them already (from
        :func:`plan_row_bound`): the clipping then reads ``X`` once.

    Returns
    -------
    {ndarray, sparse matrix} of shape (n_samples, n_features + intercept)
    """
    if sp.issparse(X) or not intercept:
        Z = clip_rows(X, max_norm, norms)
        if intercept:
            ones = sp.csr_matrix(np.full((Z.shape[0], 1), max_norm))
            Z = sp.hstack([Z, ones], format="csr")
        return Z if scale == 1.0 else Z * scale
    X = np.asarray(X, dtype=np.float64)
    factors = row_clip_factors(X, max_norm, norms)
    design = np.empty((X.shape[0], X.shape[1] + 1))
    np.multiply(X, factors[:, None], out=design[:, :-1])
    design[:, :-1] *= scale
    design[:, -1] = max_norm * scale
    return design


def row_clip_factors(X, max_norm, norms=None):
    """The factor :func:`clip_rows` multiplies each row of ``X`` by.

    1 for rows with L2 norm <= ``max_norm``, ``max_norm / norm`` for the others.
    Each factor reads its own row only (no data-dependent rescaling).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features), float64
    max_norm : float
        Public bound, > 0.
    norms : ndarray of shape (n_samples,), default=None
        :func:`row_norms` of ``X``; computed here when not given.

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    max_norm = check_positive(max_norm, "max_norm")
    norms = row_norms(X) if norms is None else norms
    scale = np.ones_like(norms)
    over = norms > max_norm
    scale[over] = max_norm / norms[over]
    return scale


def row_norms(X):
    """The L2 norm of each row of ``X``.

    The one norm computation of the clipping and of :func:`plan_row_bound`, so
    that the rows the clipping shortens are the rows ``clipped_fraction_``
    counts (up to the rounding allowance).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
    X = np.asarray(X, dtype=np.float64)
    return np.sqrt(np.einsum("ij,ij->i", X, X))
