"""DPLeastSquaresClassifier: least squares from noisy sufficient statistics (DP-LS).

The only function that reads the labels is :func:`noisy_least_squares_statistics`,
the Gaussian mechanism on the label-dependent sufficient statistics. Everything
else is either public (the clipped features, and the Gramian ``G`` under label
DP) or post-processing of its output (PSD projection, Cholesky solves).
"""

import math
from functools import partial
from numbers import Real

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import BaseLabelDPClassifier
from .._predict import DecisionFunctionPredictMixin
from ..accounting import PrivacySpend, gaussian_epsilon
from ..utils import check_generator, is_dask
from ._calibration import calibrate_exact_gaussian_releases, gaussian_release_mus
from ._dask import (
    LinearDecisionMixin,
    dask_least_squares_statistics,
    map_design,
    prepare_dask_Xy,
)
from ._gram_noise import add_symmetric_noise, project_psd, project_psd_one
from ._preprocessing import CLASSIFIER_AUTO_QUANTILE, clipped_design, plan_row_bound, row_norms
from ._statistics import dense_gram, least_squares_statistics, map_classes

__all__ = ["DPLeastSquaresClassifier"]

def least_squares_sensitivities(privacy, formulation, data_norm):
    """L2 sensitivity of each noised statistic; its noise std is ``s`` times it.

    Rows have L2 norm at most ``R = data_norm``, so ``x x^T`` has Frobenius norm
    at most ``R^2``. Matrices are released as ``M + E`` with ``E`` a full matrix
    of iid noise of std ``s`` times the sensitivity returned here, then
    symmetrised (post-processing; see
    :func:`~sklearn_labeldp.linear_model._gram_noise.add_symmetric_noise`).

    - ``privacy="label"`` (substitution of one label): the example moves from
      class ``a`` to class ``b``: ``(A_j)_j`` changes by ``-x x^T`` and ``+x x^T``
      (sensitivity ``sqrt(2) R^2``), ``(b_j)_j`` and ``X^T Y`` by ``-x`` and ``+x``
      (``sqrt(2) R``). ``G`` does not depend on labels and is not noised.
    - ``privacy="full"`` (add/remove one example): ``G`` and the one ``A_j`` of
      its class change by ``x x^T`` (``R^2``), ``b_j`` / one column of ``X^T Y``
      by ``x`` (``R``). The fit is still charged for a label change: see
      :func:`least_squares_label_sensitivities`.

    Parameters
    ----------
    privacy : {"label", "full"}
    formulation : {"weighted", "ridge"}
    data_norm : float
        ``R``, the L2 bound on each (augmented) row.

    Returns
    -------
    dict
        Keys among ``"G"``, ``"A"``, ``"b"`` (per-class vectors, or the columns of
        ``X^T Y`` for ``"ridge"``); the statistics absent are released without noise
        (``G`` under label DP) or not at all (``A`` for ``"ridge"``).
    """
    r = float(data_norm)
    factor = math.sqrt(2.0) if privacy == "label" else 1.0
    sensitivities = {"b": factor * r}
    if formulation == "weighted":
        sensitivities["A"] = factor * r**2
    if privacy == "full":
        sensitivities["G"] = r**2
    return sensitivities


def least_squares_label_sensitivities(privacy, formulation, data_norm):
    """Label-change L2 sensitivity of each statistic DP-LS releases.

    A label change keeps the row ``x`` (norm ``<= R``) and moves its example
    from class ``a`` to class ``b``: ``G = sum_i x_i x_i^T`` does not change at
    all (0), ``(A_j)_j`` changes by ``-x x^T`` in ``A_a`` and ``+x x^T`` in
    ``A_b`` (Frobenius norm ``sqrt(||x||^4 + ||x||^4) <= sqrt(2) R^2``), and
    ``(b_j)_j`` (the columns of ``X^T Y``) by ``-x`` and ``+x`` (``sqrt(2)
    R``). These are the noise sensitivities of label DP; under full DP the
    noise is scaled to the add/remove ones (:func:`least_squares_sensitivities`)
    and these give the label-change cost of that noise.

    Parameters
    ----------
    privacy : {"label", "full"}
    formulation : {"weighted", "ridge"}
    data_norm : float

    Returns
    -------
    dict
        Same keys as :func:`least_squares_sensitivities`.
    """
    r = float(data_norm)
    shifts = {"b": math.sqrt(2.0) * r}
    if formulation == "weighted":
        shifts["A"] = math.sqrt(2.0) * r**2
    if privacy == "full":
        shifts["G"] = 0.0
    return shifts


def noisy_least_squares_statistics(
    codes, *, Z, n_classes, privacy, formulation, noise_multiplier, data_norm, random_state
):
    """The Gaussian mechanism of DP-LS: noisy label-dependent sufficient statistics.

    With one-hot targets ``Y`` of the label codes and rows ``z_i`` of ``Z`` (norm
    ``<= data_norm``): ``A_j = sum_{y_i = j} z_i z_i^T``, ``b_j = sum_{y_i = j} z_i``
    (the ``j``-th column of ``Z^T Y``) and ``G = Z^T Z``. Each released statistic
    gets iid Gaussian noise of std ``noise_multiplier`` times its
    :func:`least_squares_sensitivities`; matrices get
    the symmetric noise ``(E + E^T) / 2`` of
    :func:`~sklearn_labeldp.linear_model._gram_noise.add_symmetric_noise` (that std
    on the diagonal, ``1 / sqrt(2)`` of it off the diagonal). For the relation
    the sensitivities are for, the release is ``m / (2 s^2)``-zCDP with ``m``
    the number of noised statistics; for a label change under ``"full"`` it is
    ``(0 + 2 + 2) / (2 s^2)`` (weighted) or ``(0 + 2) / (2 s^2)`` (ridge), from
    :func:`least_squares_label_sensitivities`.

    A dask ``codes`` and ``Z`` (blocks of rows, aligned) are reduced blockwise:
    the exact statistics of every block
    (:func:`~sklearn_labeldp.linear_model._statistics.least_squares_statistics`) are
    summed by a tree reduction and computed, then the noise is added here, on
    the client, from ``random_state`` in the same order as for numpy input
    (:func:`add_statistics_noise`): the same generator gives the same noise.

    Parameters
    ----------
    codes : ndarray or dask.array.Array of shape (n_samples,)
        Label codes in ``[0, n_classes)``; the private input.
    Z : {ndarray, sparse matrix, dask.array.Array} of shape (n_samples, p)
        Rows of L2 norm at most ``data_norm`` (checked).
    n_classes : int
    privacy : {"label", "full"}
        Under ``"label"`` ``G`` is public and not returned; under ``"full"`` it is
        noised and returned.
    formulation : {"weighted", "ridge"}
        ``"ridge"`` releases only ``Z^T Y`` (and ``G`` under full DP).
    noise_multiplier : float
        ``s``; 0 gives the exact statistics (for tests, no privacy).
    data_norm : float
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    dict
        ``"b"``: ndarray (p, n_classes); ``"A"``: ndarray (n_classes, p, p) for
        ``"weighted"``; ``"G"``: ndarray (p, p) under ``"full"``. For dask input
        under ``"label"`` also ``"G_public"``, the exact (label-independent)
        ``Z^T Z`` from the same pass over the blocks. Noisy matrices are
        symmetric but not projected to the PSD cone (post-processing does that).
    """
    if is_dask(codes, Z):
        stats = dask_least_squares_statistics(
            codes, Z, n_classes=n_classes, formulation=formulation, data_norm=data_norm,
            gram=True)
        if privacy == "label":
            # G is label-independent (public) under label DP: it comes out of the same
            # pass over the blocks, from Z alone, and is returned exact, never noised.
            stats["G_public"] = stats.pop("G")
    else:
        stats = least_squares_statistics(
            codes, Z, n_classes=n_classes, formulation=formulation, data_norm=data_norm,
            gram=privacy == "full")
    add_statistics_noise(stats, privacy, formulation, noise_multiplier, data_norm,
                         check_generator(random_state))
    return stats


def add_statistics_noise(stats, privacy, formulation, noise_multiplier, data_norm, rng):
    """Add the Gaussian noise of DP-LS to ``stats`` in place, in one fixed order.

    ``b`` first, then ``A``, then ``G`` (under full DP only), each drawn from
    ``rng`` as in :func:`noisy_least_squares_statistics`: the numpy and the
    dask paths call this same function on the client, so one generator gives
    both paths the same noise.
    """
    if not noise_multiplier > 0:
        return stats
    stds = {
        key: noise_multiplier * sensitivity
        for key, sensitivity in least_squares_sensitivities(privacy, formulation, data_norm).items()
    }
    stats["b"] += stds["b"] * rng.standard_normal(stats["b"].shape)
    if "A" in stds:
        add_symmetric_noise(stats["A"], stds["A"], rng)
    if "G" in stds:
        add_symmetric_noise(stats["G"], stds["G"], rng)
    return stats


# The smallest ``alpha="auto"`` resolves to: scikit-learn's ``Ridge`` default, this
# estimator's former default, so that an almost noiseless fit stays well posed.
AUTO_ALPHA_FLOOR = 1.0


# How much of the noise the ridge covers (adaptive_ridge's noise_norm): AdaSSP's own
# high-probability spectral norm sqrt(2 p) sigma, or the typical norm along one
# direction, sqrt(p / 2) sigma, half of it.
_NOISE_NORM_FACTORS = {"spectral": 2.0, "typical": 0.5}


def adaptive_ridge(*, n_features, noise_stds, privacy, formulation, gram_weight, data_norm,
                   gram, noise_norm):
    """The ``alpha="auto"`` ridge penalty, in the spirit of AdaSSP (Wang 2018).

    AdaSSP sets the ridge penalty of sufficient-statistics perturbation from
    the scale of the noise on the Gram matrix and a lower bound on the smallest
    eigenvalue of the true Gram matrix: enough ridge that the noisy system stays
    well conditioned, no more than the data's own curvature makes necessary.
    Here, with ``p`` the number of columns of the design and ``sigma`` the
    noise std of the diagonal of the system matrix (``sqrt(sigma_A^2 + (w
    sigma_G)^2)`` for ``"weighted"``, ``sigma_G`` for ``"ridge"``; for
    ``"ridge"`` under label DP, whose matrix is exact, the noise of ``X^T Y``
    in the Gram matrix's units, ``sigma_b R``),

        alpha = max(1, c sigma - w lambda_low),

    ``w = 1`` for ``"ridge"``, and ``c`` by ``noise_norm``: ``"spectral"``,
    ``c = sqrt(2 p)``, the symmetric noise's spectral norm, which AdaSSP's
    rule uses in its high-probability form, so that every direction of the
    noisy system stays well conditioned; ``"typical"``, ``c = sqrt(p / 2)``,
    its typical norm applied to a fixed unit vector (each of its ``p`` entries
    has variance about ``sigma^2 / 2``), how far the noise moves the system
    along the solution. :class:`DPLeastSquaresClassifier` uses AdaSSP's
    spectral norm: its ``K`` per-class systems each take their own noise,
    and on the digits and UCI Adult (``benchmarks/defaults.py``, every
    epsilon from 0.5 to 8) it is within 0.7 points of the best penalty of a
    grid where the typical norm fell 4 points short at epsilon 0.5 and 1.
    :class:`DPLeastSquaresRegressor` keeps the typical norm, with which its
    test error was 13% lower on Friedman #1 at epsilon 0.5 (5% higher at
    0.05) and 1.7-2.2% lower on UCI Adult at epsilon 0.5 to 2
    (``benchmarks/regression.py``, 3 seeds).
    ``lambda_low`` bounds the smallest eigenvalue of the Gram matrix ``G``
    from below:

    - label DP: ``G`` is public, its exact smallest eigenvalue (no privacy cost);
    - full DP: from the released noisy ``G~`` (post-processing, no extra
      budget; AdaSSP instead spends a third of its budget on a separate noisy
      eigenvalue): ``max(0, lambda_min(G~) - sqrt(2 p) sigma_G)``, Weyl's
      inequality with the noise's typical spectral norm.

    Parameters
    ----------
    n_features : int
        ``p``, the columns of the design (the intercept's included).
    noise_stds : dict
        ``mechanism_params_["noise_scales"]``.
    privacy, formulation : str
    gram_weight : float
    data_norm : float
    gram : ndarray of shape (p, p)
        The exact ``G`` (label DP) or the released noisy one, before its PSD
        projection (full DP).
    noise_norm : {"spectral", "typical"}
        The noise's norm the ridge covers (see above).

    Returns
    -------
    float
    """
    p = n_features
    sigma_gram = noise_stds.get("G", 0.0)
    weight = gram_weight if formulation == "weighted" else 1.0
    if formulation == "weighted":
        sigma = math.hypot(noise_stds["A"], gram_weight * sigma_gram)
    elif privacy == "full":
        sigma = sigma_gram
    else:
        sigma = noise_stds["b"] * data_norm
    smallest = float(np.linalg.eigvalsh(gram)[0])
    if privacy == "full":
        smallest -= math.sqrt(2.0 * p) * sigma_gram
    lower = weight * max(smallest, 0.0)
    return max(AUTO_ALPHA_FLOOR, math.sqrt(_NOISE_NORM_FACTORS[noise_norm] * p) * sigma - lower)


def _solve_one_class(A_j, b_j, base):
    # Project A~_j to the PSD cone, add w G + alpha I, solve by Cholesky.
    system = project_psd_one(A_j)
    system += base
    factor = np.linalg.cholesky(system)  # lower; numpy releases the GIL
    return cho_solve((factor, True), b_j, check_finite=False)


def _solve_weighted(A, b, base):
    """``theta_j = (PSD(A~_j) + base)^-1 b~_j`` for every class, on a thread pool.

    The noise was drawn before: the result does not depend on the scheduling.
    """
    rows = map_classes(
        lambda j: _solve_one_class(A[j], b[:, j], base), A.shape[0], parallel=A.shape[1] >= 32
    )
    return np.stack(rows)


def _solve_ridge(b, system):
    """``theta = system^-1 b`` for every class: one Cholesky factorisation shared by all."""
    factor = cho_factor(system, lower=True, check_finite=False)
    return cho_solve(factor, b, check_finite=False).T


class DPLeastSquaresClassifier(
    LinearDecisionMixin, DecisionFunctionPredictMixin, BaseLabelDPClassifier
):
    """Least-squares classifier from noisy sufficient statistics (DP-LS).

    Each feature row is clipped to L2 norm ``R = data_norm`` (rows inside the
    ball are left alone, nothing is rescaled by a data-dependent amount); by
    default ``R`` is the median row norm of ``X``, which clips about half of
    the rows along their own direction. With
    one-hot targets, the per-class statistics ``A_j = sum_{y_i=j} x x^T`` and
    ``b_j = sum_{y_i=j} x``, and the Gramian ``G = sum_i x x^T``:

    - ``formulation="weighted"`` (Mehta et al. 2023, Alg. 3): ``theta_j = (A~_j
      + w G~ + alpha I)^-1 b~_j`` with ``w = gram_weight``, the minimiser of
      ``1/2 sum_i [y_ij (x.theta_j - 1)^2 + w (x.theta_j)^2] + alpha/2
      ||theta_j||^2``: every example pulls the score of class ``j`` towards 0
      with weight ``w``, its own class's examples towards 1;
    - ``formulation="ridge"``: one-hot ridge regression, ``theta = (G~ + alpha
      I)^-1 X^T Y~`` with one Cholesky factorisation shared by all classes
      (``gram_weight`` is unused). At ``epsilon -> inf`` this is
      scikit-learn's ``Ridge(alpha, fit_intercept=False)`` on the rows ``z``
      below and the one-hot targets.

    ``privacy="label"`` (features public, one label substituted) noises only
    the label-dependent statistics, with substitution sensitivities:
    ``(A_j)_j`` with std ``s sqrt(2) R^2`` and ``(b_j)_j`` / ``X^T Y`` with std
    ``s sqrt(2) R``; ``G`` is exact. ``privacy="full"`` noises what Alg. 3 does
    for add/remove neighbours: ``G``, ``A_j`` with std ``s R^2`` and ``b_j``
    with ``s R``; for ``"ridge"`` ``G`` (std ``s R^2``) and ``X^T Y`` (std ``s
    R``).

    Privacy. ``(epsilon, delta)`` is the label-DP budget charged on the ledger
    under both settings. A statistic with noise std ``s D`` that a label
    change moves by at most ``D_label`` in L2 norm is a Gaussian mechanism of
    ``D_label / (s D)`` noise stds, and the releases together are one
    Gaussian mechanism of ``mu = sqrt(m) / s`` noise stds (Gaussian DP
    composes by the root sum of squares, Dong, Roth and Su 2022), with ``m``
    = 2 (label, weighted) or 1 (label, ridge). Under full DP a label change
    does not move ``G`` and moves ``(A_j)_j`` and ``(b_j)_j`` by ``sqrt(2)
    R^2`` and ``sqrt(2) R``, twice the add/remove variance each: ``m = 0 + 2 +
    2 = 4`` (full, weighted; the add/remove accounting's 3 would under-record
    it) and ``m = 0 + 2 = 2`` (full, ridge). ``mu`` is the largest value whose
    exact privacy profile (Balle and Wang 2018) is within ``(epsilon,
    delta)``, and ``s = sqrt(m) / mu``; under full DP the noise on ``A_j``,
    ``b_j`` and ``X^T Y`` is exactly label DP's, with ``G`` noised besides.
    The add/remove guarantee of that noise, the Gaussian of ``example_mu =
    sqrt(m_ex) / s`` (``m_ex`` = 3 weighted, 2 ridge) at ``delta``, is
    ``example_epsilon_``: reported, not charged. The zCDP calibration this
    replaces (Canonne, Kamath and Steinke 2020) needed 6-9% more noise at
    ``delta = 1e-5`` (epsilon 8 to 0.5).
    Noise matrices are symmetric, ``(E + E^T) / 2`` with ``E`` iid: the
    Gaussian mechanism releases ``M + E`` and symmetrising is post-processing,
    so the diagonal gets the std above and each off-diagonal entry ``1 /
    sqrt(2)`` of it (half the variance of mirroring an iid upper triangle).
    Noisy Gramians are projected to the PSD cone (negative eigenvalues set to
    0), so every system is positive definite and solved by Cholesky.

    Parameters
    ----------
    epsilon : float, default=1.0
        Label-DP epsilon of the fit, charged to the accountant, > 0 and finite
        (also under ``privacy="full"``).
    delta : float, default=1e-5
        Label-DP delta, in (0, 1).
    privacy : {"label", "full"}, default="label"
        ``"label"``: label DP (the features are public); ``"full"``: the
        features are protected too, by Alg. 3's noise for adding or removing
        one example, reported as ``example_epsilon_``; the budget charged is
        still the label-change guarantee.
    formulation : {"auto", "weighted", "ridge"}, default="auto"
        ``"weighted"``: Mehta et al.'s per-class systems (above); ``"ridge"``:
        ridge regression on the one-hot targets, one noisy release of ``X^T Y``
        and one system shared by all classes. ``"auto"``: ``"ridge"`` under
        ``privacy="label"``, ``"weighted"`` under ``privacy="full"``. Under
        label DP ``G`` is exact, so the weighted systems' only difference is
        the noise on the per-class Gramians ``A_j``: on the digits, UCI Adult
        and two ``make_classification`` sets at epsilon 0.5 to 8 (3 splits)
        the ridge formulation was ahead or level in 19 of 20 cells (the
        digits at epsilon 0.5 / 1 / 2: 0.539 / 0.787 / 0.869 against 0.291 /
        0.607 / 0.820; at most 0.2 points behind) and fits in a quarter of
        the time (no per-class eigendecompositions). Reported as
        ``formulation_``.
    alpha : float or "auto", default="auto"
        Ridge penalty (> 0) added to the diagonal, scikit-learn's
        ``Ridge(alpha=...)``: the statistics are sums over the samples (not
        means). Larger values damp the noise: the symmetric noise ``(E +
        E^T) / 2`` with entries of ``E`` of std ``sigma`` has spectral norm
        about ``sigma sqrt(2 p)``. ``"auto"`` (AdaSSP's adaptive ridge, Wang
        2018): ``max(1, sqrt(2 p) sigma - w lambda_low)`` with ``sigma`` the
        noise std of the system matrix's diagonal and ``lambda_low`` a lower
        bound on the smallest eigenvalue of ``G``: exact under label DP (``G``
        is public), from the released noisy ``G`` under full DP
        (post-processing, no extra budget); see :func:`adaptive_ridge`.
        Reported as ``alpha_``.
    gram_weight : float, default=1.0
        ``w`` (>= 0), the weight of the Gramian ``G`` in every class's system
        of the ``"weighted"`` formulation.
    data_norm : float or "auto", default="auto"
        ``R``, the L2 bound on the feature rows (> 0); rows above it are scaled
        down to it. ``"auto"``: the median of the row norms of the training
        ``X``, which clips about half of the rows, the longest (the largest row
        norm if that median is 0, 1 if every row is zero): long rows do not
        set the noise. Under label DP the features
        are public, so this costs no privacy; under ``privacy="full"`` it reads
        the private features, outside the guarantee, and the fit warns with a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`: pass a public
        bound there (scale the features by a fixed, data-independent factor so
        that most rows are inside).
    fit_intercept : bool, default=True
        Fit an intercept through a constant feature inside the norm bound: the
        clipped row ``x`` (norm <= R) becomes ``z = [x, R] / sqrt(2)``, of norm
        <= R, so the sensitivities are unchanged. The constant column is public.
        ``coef_`` and ``intercept_`` are reported in the units of ``x``
        (``z.theta = x.coef + intercept``); ``alpha`` also shrinks the intercept.
    classes : array-like, default=None
        All possible labels; ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism: fresh entropy for every fit with
        ``None`` or ``"secure"``, nothing of it kept; an int or generator is
        a replay key, and pickling a model fitted with one warns (see
        :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with (epsilon, delta) before any label is used.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
        One row per class, also for two classes; the prediction is the class of
        the largest score ``X @ coef_.T + intercept_``.
    intercept_ : ndarray of shape (n_classes,)
        Zeros when ``fit_intercept=False``.
    mechanism_params_ : dict
        The calibrated parameters of the Gaussian mechanism, all public
        (functions of ``epsilon``, ``delta`` and ``data_norm_``): ``gaussian_mu``
        (``mu``, the fit's sensitivity to a label change in noise stds) and
        ``rho = mu^2 / 2`` (its zCDP parameter), ``noise_multiplier``
        (``s``), and per noised statistic (``"G"``, ``"A"``, ``"b"``) its
        ``sensitivities`` (those the noise is scaled to: add/remove under full
        DP) and ``noise_scales`` (``s`` times the sensitivity). Under full DP
        also ``label_sensitivities`` (label change; 0 for ``"G"``),
        ``example_gaussian_mu`` and ``example_rho`` (the same for adding or
        removing one example). ``alpha``:
        the ridge penalty used, resolved after the release (not in the spend).
    data_norm_ : float
        The bound ``R`` used (``data_norm``, or for ``"auto"`` the median of
        the row norms).
    formulation_ : {"weighted", "ridge"}
        The formulation used: ``formulation``, or the one ``"auto"`` resolved
        to.
    alpha_ : float
        The ridge penalty used: ``alpha``, or the value ``"auto"`` resolved to
        (also ``mechanism_params_["alpha"]``).
    clipped_fraction_ : float
        Label DP only: the share of training rows whose norm exceeded ``R`` (by
        more than rounding) and were clipped: about half for ``"auto"``. Above
        half a fit with a given ``data_norm`` warns with a
        :class:`~sklearn_labeldp.linear_model.RowClippingWarning`. Under full DP
        this share is a statistic of the private features, not covered by the
        guarantee, so it is neither set nor warned about (check it on public
        data of the same kind).
    epsilon_ : float
        Label-DP epsilon of the fit (``epsilon``).
    delta_ : float
        Label-DP delta (``delta``).
    example_epsilon_ : float
        ``privacy="full"`` only: epsilon for adding or removing one whole
        example, the Gaussian of ``example_gaussian_mu`` noise stds at
        ``example_delta_`` (exact profile). Larger or
        smaller than ``epsilon_``: the add/remove and label-change relations
        are not comparable here.
    example_delta_ : float
        ``privacy="full"`` only: ``delta``.
    privacy_spend_ : PrivacySpend
        A leaf at ``(epsilon_, delta_)`` described by ``("gaussian", mu)``, with ``rho``, which
        a tight total composes exactly; under full DP its params
        add ``example_epsilon`` and ``example_delta``.
    n_features_in_ : int

    Notes
    -----
    Predictions use the raw features (as for any scikit-learn linear model),
    not clipped ones: scale test features like the training features.
    Sparse ``X`` is supported; the Gramians are dense ``p x p`` (``n_classes``
    of them for ``"weighted"``). The per-class Gramians, PSD projections and
    Cholesky solves of ``"weighted"`` run on a thread pool with as many workers
    as the BLAS may use threads (set it with ``threadpoolctl.threadpool_limits``),
    one BLAS thread each. A noisy Gramian that is already positive definite is
    its own PSD projection and needs no eigendecomposition.

    References
    ----------
    .. [1] H. Mehta, W. Krichene, A. Thakurta, A. Kurakin, A. Cutkosky.
       Differentially private image classification from features. TMLR 2023
       Algorithm 3.
    .. [2] C. Canonne, G. Kamath, T. Steinke. The discrete Gaussian for
       differential privacy. NeurIPS 2020.
    .. [3] M. Bun, T. Steinke. Concentrated differential privacy:
       simplifications, extensions, and lower bounds. TCC 2016.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn_labeldp.linear_model import DPLeastSquaresClassifier
    >>> X, y = make_blobs(3000, n_features=4, centers=3, random_state=0)
    >>> clf = DPLeastSquaresClassifier(epsilon=1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    >>> clf.coef_.shape, bool(clf.score(X, y) > 0.8), clf.clipped_fraction_
    ((3, 4), True, 0.5)
    >>> clf.formulation_, sorted(clf.mechanism_params_["noise_scales"])  # label DP: G is exact
    ('ridge', ['b'])
    """

    _dp_outputs = ("coef_", "intercept_")
    _derived_attributes = (
        *BaseLabelDPClassifier._derived_attributes,
        "data_norm_",
        "formulation_",
        "alpha_",
        "clipped_fraction_",
        "example_epsilon_",
        "example_delta_",
    )

    _parameter_constraints: dict = {
        **BaseLabelDPClassifier._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "privacy": [StrOptions({"label", "full"})],
        "formulation": [StrOptions({"auto", "weighted", "ridge"})],
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "gram_weight": [Interval(Real, 0, None, closed="left")],
        "data_norm": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "fit_intercept": ["boolean"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        privacy="label",
        formulation="auto",
        alpha="auto",
        gram_weight=1.0,
        data_norm="auto",
        fit_intercept=True,
        classes=None,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.privacy = privacy
        self.formulation = formulation
        self.alpha = alpha
        self.gram_weight = gram_weight
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _formulation(self):
        """``formulation``, or ``"auto"`` resolved from ``privacy`` (see the parameter)."""
        if self.formulation != "auto":
            return self.formulation
        return "ridge" if self.privacy == "label" else "weighted"

    def _noise_multiplier(self, formulation):
        """``s`` and the label-change ``mu``, within (epsilon, delta), and the add/remove mu.

        Each statistic is released once with noise ``s`` times its sensitivity
        (:func:`least_squares_sensitivities`); a label change moves it by at most
        its :func:`least_squares_label_sensitivities`. Only their ratios matter,
        so both are taken at ``R = 1``. ``example_mu`` is ``None`` under label DP.
        """
        sensitivities = least_squares_sensitivities(self.privacy, formulation, 1.0)
        shifts = least_squares_label_sensitivities(self.privacy, formulation, 1.0)
        counts = dict.fromkeys(sensitivities, 1)
        s, mu = calibrate_exact_gaussian_releases(self.epsilon, self.delta, counts,
                                                  sensitivities, shifts)
        example_mu = None
        if self.privacy == "full":
            example_mu = gaussian_release_mus(s, counts, sensitivities, sensitivities)[0]
        return s, mu, example_mu

    def _design(self, X, data_norm, norms=None):
        """Rows clipped to ``data_norm``, with the constant column inside the norm bound.

        ``norms``: the row norms of a numpy or sparse ``X`` from the plan, so
        that ``X`` is read once more, not twice. A dask ``X`` gets the same
        builder on every block of rows, lazily.
        """
        scale = 1.0 / math.sqrt(2.0) if self.fit_intercept else 1.0
        design = partial(clipped_design, max_norm=data_norm, intercept=self.fit_intercept,
                         scale=scale)
        return map_design(design, X) if is_dask(X) else design(X, norms=norms)

    def _prepare_Xy(self, X, y):
        """The base class's, lazy for dask input: shapes and chunks are checked
        without computing ``X`` or ``y``, the labels become a dask array of codes,
        and one small reduction checks they are all in ``classes``."""
        if not is_dask(X, y):
            return super()._prepare_Xy(X, y)
        return prepare_dask_Xy(self, X, y)

    def _plan_fit(self, X, classes, rng):
        formulation = self._formulation()
        s, mu, example_mu = self._noise_multiplier(formulation)
        # The row norms serve the bound and the clipping (_design): one pass over X.
        norms = None if is_dask(X) else row_norms(X)
        data_norm, bound_attributes = plan_row_bound(
            X, self.data_norm, privacy=self.privacy, quantile=CLASSIFIER_AUTO_QUANTILE,
            norms=norms)
        sensitivities = least_squares_sensitivities(self.privacy, formulation, data_norm)
        params = {
            "gaussian_mu": mu,
            "rho": mu**2 / 2.0,
            "noise_multiplier": s,
            "sensitivities": sensitivities,
            "noise_scales": {key: s * value for key, value in sensitivities.items()},
        }
        example = {}
        if self.privacy == "full":
            params["label_sensitivities"] = least_squares_label_sensitivities(
                self.privacy, formulation, data_norm)
            params["example_gaussian_mu"], params["example_rho"] = example_mu, example_mu**2 / 2.0
            example = {"example_epsilon": gaussian_epsilon(example_mu, self.delta),
                       "example_delta": self.delta}
        spend = PrivacySpend.leaf(
            "DP least squares", self.epsilon, self.delta, privacy=self.privacy,
            formulation=formulation, description=("gaussian", mu), **params, **example,
        )
        plan = {"formulation": formulation, "mechanism_params": params, "data_norm": data_norm,
                "row_norms": norms,
                "bound_attributes": bound_attributes,
                "example_attributes": {f"{key}_": value for key, value in example.items()}}
        return spend, plan

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        data_norm, params = plan["data_norm"], plan["mechanism_params"]
        Z = self._design(X, data_norm, plan["row_norms"])
        p, n_classes = Z.shape[1], labels.n_classes
        stats = labels.release(
            noisy_least_squares_statistics,
            np.arange(labels.n_samples),
            failure=(
                f"{type(self).__name__}: computing the noisy sufficient statistics failed "
                "after the budget was charged (e.g. out of memory, or a dask worker lost), "
                "so no model is returned and the budget stays spent. The details are "
                "withheld because they may depend on the labels."
            ),
            Z=Z,
            n_classes=n_classes,
            privacy=self.privacy,
            formulation=plan["formulation"],
            noise_multiplier=params["noise_multiplier"],
            data_norm=data_norm,
            random_state=mechanism_rng,
        )
        # Post-processing of the release (and of the public G under label DP).
        if self.privacy == "full":
            G = stats["G"]
        else:  # public: from Z alone (for dask Z, from the release's pass over the blocks)
            G = stats.pop("G_public") if "G_public" in stats else dense_gram(Z)
        alpha = self.alpha
        if alpha == "auto":
            alpha = adaptive_ridge(
                n_features=p, noise_stds=params["noise_scales"], privacy=self.privacy,
                formulation=plan["formulation"], gram_weight=self.gram_weight,
                data_norm=data_norm, gram=G, noise_norm="spectral")
        params = {**params, "alpha": float(alpha)}
        if self.privacy == "full":
            G = project_psd(G)
        ridge = alpha * np.eye(p)
        if plan["formulation"] == "ridge":
            theta = _solve_ridge(stats["b"], G + ridge)
        else:
            theta = _solve_weighted(stats["A"], stats["b"], self.gram_weight * G + ridge)
        if self.fit_intercept:
            coef = theta[:, :-1] / math.sqrt(2.0)
            intercept = theta[:, -1] * data_norm / math.sqrt(2.0)
        else:
            coef, intercept = theta, np.zeros(n_classes)
        return {
            "coef_": coef,
            "intercept_": intercept,
            "mechanism_params_": params,
            "formulation_": plan["formulation"],
            "alpha_": float(alpha),
            **plan["bound_attributes"],
            **plan["example_attributes"],
        }
