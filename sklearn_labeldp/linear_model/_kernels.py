"""Kernels for the private linear models: data-independent random Fourier features.

Chaudhuri, Monteleoni and Sarwate (2011, Section 6) make a
private kernel machine out of a private linear one: map every example through a
*fixed* random feature map drawn independently of the data, whose outputs lie in
the unit ball, and train the private linear model on the mapped rows. The map
is public, so the privacy analysis of the linear model is unchanged.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["NormalizedRandomFourierFeatures"]


class NormalizedRandomFourierFeatures(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Random Fourier features of the RBF kernel, scaled to rows of L2 norm at most 1.

    The features are scikit-learn's :class:`~sklearn.kernel_approximation.RBFSampler`
    features divided by ``sqrt(2)``:

    ``z(x) = cos(x W + b) / sqrt(D)``, with ``D = n_components``, the columns
    of ``W`` drawn iid from ``N(0, 2 gamma I)`` and ``b`` iid uniform on
    ``[0, 2 pi)``. ``2 z(x).z(x')`` is an unbiased estimate of the RBF kernel
    ``exp(-gamma ||x - x'||^2)``, so a linear model on ``z`` approximates a
    kernel machine (Rahimi and Recht 2007), and
    ``NormalizedRandomFourierFeatures(...).fit(X).transform(X)`` equals
    ``RBFSampler(...).fit(X).transform(X) / sqrt(2)`` for the same
    ``gamma``, ``n_components`` and ``random_state``.

    **Every output row has L2 norm at most 1.** RBFSampler's features are
    ``sqrt(2 / D) cos(x W + b)``; each of the ``D`` cosines is in ``[-1, 1]``,
    so their squared norm is at most ``(2 / D) D = 2``. Dividing by the
    constant ``sqrt(2)`` gives ``||z(x)||^2 = (1 / D) sum_k cos^2(...) <= 1``
    for every ``x`` whatsoever, huge or not (up to floating-point rounding,
    a relative ``1e-15``). The factor is a constant, not a norm measured on the
    data, so the bound needs no clipping and leaks nothing: the rows feed
    :class:`DPLogisticRegression` or :class:`DPLinearSVC` with
    ``data_norm=1``, where the rare row rounded a hair above 1 is clipped.

    **The map is data-independent.** :meth:`fit` validates ``X`` and reads its
    number of columns (and column names, if any); ``W`` and ``b`` are drawn from
    ``random_state`` as a function of ``n_features_in_``, ``n_components`` and
    ``gamma`` only, never of the values in ``X``. Two matrices of the same shape
    give identical maps. The map is therefore public: using it costs no privacy
    budget, and fitting it on the private training set is safe even under full
    DP. This is why ``gamma`` must be a number: RBFSampler's
    ``gamma="scale"`` sets it from the variance of ``X``, a data-dependent
    choice that is not offered here (choose ``gamma`` from public knowledge of
    the feature scale, e.g. after scaling by a fixed factor).

    Parameters
    ----------
    n_components : int, default=100
        ``D``, the number of random features (the output dimension).
    gamma : float, default=1.0
        Parameter of the RBF kernel ``exp(-gamma ||x - x'||^2)``, > 0.
    random_state : None, int or numpy.random.RandomState, default=None
        Seed of the random map (as in RBFSampler). Use an int for a map that
        is reproducible across fits.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features, n_components)
        ``W``.
    random_offset_ : ndarray of shape (n_components,)
        ``b``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Only when ``X`` has string column names.

    See Also
    --------
    sklearn.kernel_approximation.RBFSampler : The unscaled features (norm up to
        ``sqrt(2)``), with the data-dependent option ``gamma="scale"``.
    DPLogisticRegression, DPLinearSVC : Private linear models to put after it.

    Notes
    -----
    Transformed rows are dense float64 arrays, also for sparse or float32
    input. Finite inputs so large that ``X W`` overflows (entries near
    ``1e308``) raise a :class:`ValueError`. The cost of :meth:`transform` is
    ``O(n_samples n_features D)``.

    References
    ----------
    .. [1] K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially private
       empirical risk minimization. JMLR 12, 2011, Section 6.
    .. [2] A. Rahimi, B. Recht. Random features for large-scale kernel
       machines. NeurIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_labeldp.linear_model import DPLinearSVC
    >>> from sklearn_labeldp.linear_model import NormalizedRandomFourierFeatures
    >>> X = np.array([[0.0, 1.0], [1e9, -3.0], [2.0, 2.0]])
    >>> Z = NormalizedRandomFourierFeatures(50, gamma=0.5, random_state=0).fit_transform(X)
    >>> Z.shape, bool(np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-12))
    ((3, 50), True)
    >>> X, y = make_moons(2000, noise=0.1, random_state=0)
    >>> model = make_pipeline(
    ...     NormalizedRandomFourierFeatures(200, gamma=2.0, random_state=0),
    ...     DPLinearSVC(epsilon=2.0, C=100.0, data_norm=1.0, classes=[0, 1], random_state=0),
    ... ).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0.0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=100, *, gamma=1.0, random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Draw the random map for the number of features of ``X``.

        Only the shape (and column names) of ``X`` is used; its values are
        validated, not read.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        X = validate_data(self, X, accept_sparse="csr")
        rng = check_random_state(self.random_state)
        n_features = X.shape[1]
        # The same draws, in the same order, as RBFSampler.fit with a numeric gamma.
        self.random_weights_ = math.sqrt(2.0 * self.gamma) * rng.normal(
            size=(n_features, self.n_components)
        )
        self.random_offset_ = rng.uniform(0, 2 * np.pi, size=self.n_components)
        self._n_features_out = self.n_components
        return self

    def transform(self, X):
        """Map ``X`` to ``cos(X W + b) / sqrt(n_components)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            Rows of L2 norm at most 1.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # reported below
            projection = np.asarray(safe_sparse_dot(X, self.random_weights_, dense_output=True))
            projection += self.random_offset_
        if not np.all(np.isfinite(projection)):
            raise ValueError(
                "X @ random_weights_ overflowed (entries of X near the float64 limit): "
                "the cosine of an infinite phase is undefined. Scale X by a fixed factor."
            )
        np.cos(projection, out=projection)
        # The fitted width, not the parameter (set_params after fit).
        projection *= 1.0 / math.sqrt(self.random_weights_.shape[1])
        return projection

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.requires_fit = True
        return tags
