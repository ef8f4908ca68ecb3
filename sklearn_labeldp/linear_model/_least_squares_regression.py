"""DPLeastSquaresRegressor: ridge regression from noisy sufficient statistics.

Under label DP the features are public, so ``G = Z^T Z`` is exact and only
``b = Z^T t`` (``t`` the labels scaled to ``[-1, 1]``) is noised: the one
function that reads the labels is :func:`noisy_ridge_statistics`. Everything
else is public or post-processing of its output.
"""

import math
from numbers import Real

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ..accounting import PrivacySpend, gaussian_epsilon
from ..mechanisms._regression import _clipped_labels
from ..regression._base import BaseLabelDPRegressor
from ..utils import check_generator, row_blocks_on_dask
from ..utils._dask import real_values
from ._calibration import calibrate_exact_gaussian_releases, gaussian_release_mus
from ._gram_noise import add_symmetric_noise, project_psd
from ._least_squares import adaptive_ridge
from ._preprocessing import clipped_design, plan_row_bound
from ._statistics import dense_gram

__all__ = ["DPLeastSquaresRegressor", "noisy_ridge_statistics"]


def ridge_sensitivities(privacy, data_norm):
    """L2 sensitivities of ``b = Z^T t`` and ``G``: labels in ``[-1, 1]``, rows of norm ``<= R``.

    Returns two dicts, ``noise`` (what the noise is scaled to) and ``label``
    (how far a label change moves each statistic). A label change keeps
    ``z`` and moves ``t`` by at most 2: ``b`` moves by ``2 R`` and ``G`` not
    at all. Under ``privacy="full"`` (add or remove one example) ``b`` moves
    by ``R`` and ``G`` by ``||z z^T||_F <= R^2``, and both are noised.
    """
    r = float(data_norm)
    if privacy == "label":
        return {"b": 2.0 * r}, {"b": 2.0 * r}
    return {"b": r, "G": r * r}, {"b": 2.0 * r, "G": 0.0}


def noisy_ridge_statistics(y, *, Z, label_range, privacy, noise_multiplier, data_norm,
                           random_state):
    """The Gaussian mechanism of DP least squares for real labels.

    Labels are clipped to ``label_range`` and scaled to ``t = (y - c) / h`` in
    ``[-1, 1]`` (``c`` the centre of the range, ``h`` its half-width: public).
    Releases ``b = Z^T t`` plus iid ``N(0, (s D_b)^2)`` noise and, under full
    DP, ``G = Z^T Z`` plus the symmetric noise of
    :func:`~sklearn_labeldp.linear_model._gram_noise.add_symmetric_noise` with
    std ``s D_G``, the ``D`` of :func:`ridge_sensitivities`.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Real labels; the private input.
    Z : {ndarray, sparse matrix} of shape (n_samples, p)
        Rows of L2 norm at most ``data_norm``.
    label_range : tuple (low, high)
    privacy : {"label", "full"}
    noise_multiplier : float
        ``s``; 0 gives the exact statistics (tests only).
    data_norm : float
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    dict
        ``"b"``: ndarray (p,); under ``"full"`` also ``"G"``: ndarray (p, p),
        symmetric, not projected to the PSD cone.
    """
    low, high = label_range
    t = (_clipped_labels(y, label_range) - (low + high) / 2) / ((high - low) / 2)
    stats = {"b": np.asarray(safe_sparse_dot(Z.T, t), dtype=np.float64).ravel()}
    if privacy == "full":
        stats["G"] = dense_gram(Z)
    rng = check_generator(random_state)
    if noise_multiplier > 0:
        noise, _ = ridge_sensitivities(privacy, data_norm)
        stats["b"] += noise_multiplier * noise["b"] * rng.standard_normal(stats["b"].shape)
        if privacy == "full":
            add_symmetric_noise(stats["G"], noise_multiplier * noise["G"], rng)
    return stats


class DPLeastSquaresRegressor(BaseLabelDPRegressor):
    """Ridge regression from noisy sufficient statistics, label DP or full DP.

    Each feature row is clipped to L2 norm ``R = data_norm`` (by default the
    99th percentile of the row norms) and, with ``fit_intercept``, becomes
    ``z = [x, R] / sqrt(2)`` (norm ``<= R``). Labels are clipped to the public
    ``label_range`` and scaled to ``t`` in ``[-1, 1]``. The model is ``theta
    = (G + alpha I)^-1 b`` with ``G = Z^T Z`` and ``b = Z^T t``:

    - ``privacy="label"`` (features public, one label changed): ``G`` is
      exact and only ``b`` is noised, with std ``s 2 R`` (a label change
      moves ``t`` by at most 2): one Gaussian release, the label-DP form of
      least squares from features (Mehta et al. 2023) that
      :class:`DPLeastSquaresClassifier` applies per class;
    - ``privacy="full"`` (add or remove one example): ``G`` (std ``s R^2``)
      and ``b`` (std ``s R``) are both noised (Wang 2018's sufficient
      statistics perturbation), ``G`` then projected to the PSD cone.

    ``s`` is the smallest noise whose releases, one Gaussian mechanism of
    ``mu`` noise stds for a label change (Dong, Roth and Su 2022), are within
    ``(epsilon, delta)`` by the Gaussian's exact privacy profile (Balle and
    Wang 2018): the ledger is charged for label DP under both settings, and
    the record's description ``("gaussian", mu)`` lets a tight total compose it exactly.
    ``alpha="auto"`` is the adaptive ridge rule of
    :class:`DPLeastSquaresClassifier` (in the spirit of AdaSSP, Wang 2018),
    from the noise level and the smallest eigenvalue of ``G`` (exact
    under label DP, the noisy one under full DP): public or post-processing;
    it covers the noise's typical norm along one direction, ``sqrt(p / 2)``
    noise stds, where the classifier covers its spectral norm.

    Parameters
    ----------
    epsilon : float, default=1.0
        > 0.
    delta : float, default=1e-5
        In (0, 1).
    label_range : tuple (low, high), default=None
        Public range of the labels; labels outside it are clipped. ``None``
        takes the smallest and largest label of ``y`` and warns with a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    privacy : {"label", "full"}, default="label"
    alpha : float or "auto", default="auto"
        Ridge penalty, > 0, on ``theta`` (in the units of ``z`` and ``t``).
    data_norm : float or "auto", default="auto"
        ``R`` (> 0); ``"auto"`` is the 99th percentile of the training rows'
        norms: free under label DP, outside the guarantee under full DP (the
        fit warns; give a public bound there).
    fit_intercept : bool, default=True
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism (see :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with ``(epsilon, delta)`` before any label is read.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        Predictions are ``X @ coef_ + intercept_`` (in the units of ``y``).
    alpha_ : float
        The ridge penalty used.
    data_norm_ : float
    clipped_fraction_ : float
        Label DP only: the share of rows clipped to ``data_norm_``.
    label_range_ : tuple of float
    mechanism_params_ : dict
        ``gaussian_mu`` (``mu``) and ``rho = mu^2 / 2``, ``noise_multiplier``,
        ``sensitivities``, ``noise_scales``, and under full DP
        ``label_sensitivities``, ``example_gaussian_mu`` and ``example_rho``;
        ``alpha``.
    epsilon_, delta_ : float
    example_epsilon_, example_delta_ : float
        ``privacy="full"`` only: the guarantee for adding or removing one
        example.
    privacy_spend_ : PrivacySpend
    n_features_in_ : int

    References
    ----------
    .. [1] H. Mehta, W. Krichene, A. Thakurta, A. Kurakin, A. Cutkosky.
       Differentially private image classification from features. TMLR 2023.
    .. [2] Y.-X. Wang. Revisiting differentially private linear regression:
       optimal and adaptive prediction and estimation in unbounded domain. UAI 2018.
    .. [3] B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi, A. Varadarajan,
       C. Zhang. Regression with label differential privacy. ICLR 2023.

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn_labeldp import DPLeastSquaresRegressor
    >>> X, y = make_regression(5000, n_features=5, noise=5.0, random_state=0)
    >>> reg = DPLeastSquaresRegressor(epsilon=1.0, label_range=(-400, 400),
    ...                               random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9), sorted(reg.mechanism_params_["noise_scales"])
    (True, ['b'])
    """

    _dp_outputs = ("coef_", "intercept_")
    _derived_attributes = (
        *BaseLabelDPRegressor._derived_attributes,
        "mechanism_params_.*",
        "label_range_.*",
        "data_norm_",
        "alpha_",
        "clipped_fraction_",
        "example_epsilon_",
        "example_delta_",
    )

    _parameter_constraints: dict = {
        **BaseLabelDPRegressor._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "privacy": [StrOptions({"label", "full"})],
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "data_norm": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, *, epsilon=1.0, delta=1e-5, label_range=None, privacy="label",
                 alpha="auto", data_norm="auto", fit_intercept=True, random_state=None,
                 accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.label_range = label_range
        self.privacy = privacy
        self.alpha = alpha
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _validate_X(self, X, *, reset):
        return validate_data(self, X, accept_sparse=["csr", "csc"], reset=reset,
                             dtype=np.float64)

    def _plan_fit(self, X, label_range, rng):
        noise, label = ridge_sensitivities(self.privacy, 1.0)
        counts = dict.fromkeys(noise, 1)
        s, mu = calibrate_exact_gaussian_releases(self.epsilon, self.delta, counts, noise,
                                                  label)
        data_norm, bound_attributes = plan_row_bound(X, self.data_norm, privacy=self.privacy)
        sensitivities = ridge_sensitivities(self.privacy, data_norm)[0]
        params = {"gaussian_mu": mu, "rho": mu**2 / 2.0, "noise_multiplier": s,
                  "sensitivities": sensitivities,
                  "noise_scales": {key: s * value for key, value in sensitivities.items()}}
        example = {}
        if self.privacy == "full":
            params["label_sensitivities"] = ridge_sensitivities(self.privacy, data_norm)[1]
            params["example_gaussian_mu"], params["example_rho"] = gaussian_release_mus(
                s, counts, noise, noise)
            example = {
                "example_epsilon": gaussian_epsilon(params["example_gaussian_mu"], self.delta),
                "example_delta": self.delta}
        spend = PrivacySpend.leaf("DP least squares regression", self.epsilon, self.delta,
                                  privacy=self.privacy, description=("gaussian", mu),
                                  **params, **example)
        plan = {"params": params, "data_norm": data_norm, "label_range": label_range,
                "attributes": {**bound_attributes,
                               **{f"{key}_": value for key, value in example.items()}}}
        return spend, plan

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        data_norm, params, label_range = plan["data_norm"], plan["params"], plan["label_range"]
        scale = 1.0 / math.sqrt(2.0) if self.fit_intercept else 1.0
        Z = clipped_design(X, data_norm, intercept=self.fit_intercept, scale=scale)
        stats = labels.release(
            noisy_ridge_statistics, np.arange(labels.n_samples),
            failure=(f"{type(self).__name__}: computing the noisy sufficient statistics failed "
                     "after the budget was charged; the details are withheld because they may "
                     "depend on the labels, and the budget stays spent."),
            Z=Z, label_range=label_range, privacy=self.privacy,
            noise_multiplier=params["noise_multiplier"], data_norm=data_norm,
            random_state=mechanism_rng,
        )
        # Post-processing of the release and of the public Gram matrix.
        G = stats["G"] if self.privacy == "full" else dense_gram(Z)
        alpha = self.alpha
        if alpha == "auto":
            alpha = adaptive_ridge(n_features=Z.shape[1], noise_stds=params["noise_scales"],
                                   privacy=self.privacy, formulation="ridge", gram_weight=1.0,
                                   data_norm=data_norm, gram=G, noise_norm="typical")
        if self.privacy == "full":
            G = project_psd(G)
        factor = cho_factor(G + alpha * np.eye(Z.shape[1]), lower=True, check_finite=False)
        theta = cho_solve(factor, stats["b"], check_finite=False)
        low, high = label_range
        half, centre = (high - low) / 2, (high + low) / 2
        if self.fit_intercept:
            coef, intercept = theta[:-1] * scale, theta[-1] * data_norm * scale
        else:
            coef, intercept = theta, 0.0
        return {"coef_": coef * half, "intercept_": float(intercept * half + centre),
                "alpha_": float(alpha), "mechanism_params_": {**params, "alpha": float(alpha)},
                **plan["attributes"]}

    @row_blocks_on_dask(real_values)
    def predict(self, X):
        """Predict ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,), float64
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return np.asarray(safe_sparse_dot(X, self.coef_), dtype=np.float64).ravel() + \
            self.intercept_
