"""The ``"randomized_response"`` solver and the ``solver="auto"`` rule of the private ERM models.

Under label DP the features are public, so a linear model can be private
without perturbing the optimisation at all: randomize the labels once, by
K-ary randomized response (Warner 1965), and fit the model on them. Each
label is kept with probability ``p = e^eps / (e^eps + K - 1)`` and replaced
by each other class with probability ``q = 1 / (e^eps + K - 1)``; the
release is eps-label-DP (pure, ``delta = 0``), and everything after it is
post-processing of the randomized labels and the public features.

The fit minimises, for every one-vs-rest problem, the regularised loss of
the randomized binary labels ``s_i``, debiased where the loss allows it
(Natarajan, Dhillon, Ravikumar and Tewari 2013, the method of unbiased
estimators): a positive label is flipped with probability ``rho_+ = 1 - p``
and a negative one with ``rho_- = q`` (``rho_+ = rho_- = q`` for two
classes), and

.. math:: \\tilde l(t, s) = \\frac{(1 - \\rho_{-s})\\, l(s t) - \\rho_s\\, l(-s t)}
          {1 - \\rho_+ - \\rho_-}

has the expectation, over the randomization, of the clean loss. For a loss
of even curvature (the logistic loss) ``l(-m) = l(m) - 2 l'(0) m``, so the
debiased loss is the loss plus the linear term ``2 l'(0) rho_s s t / (p - q)``:
convex, with the loss's own Hessian, minimised by the same exact minimiser
as objective perturbation (whose noise is also a linear term). Other losses
(the Huber hinge) are fitted on the randomized labels as they are.

Regularisation and the rule for ``solver="auto"`` come from public
quantities only (n, d, K, epsilon, delta, ``privacy``); see
:func:`randomized_response_regularization` and :func:`auto_solver`.
"""

import math

import numpy as np

from ..mechanisms._randomized_response import (
    _draw_randomized_response,
    _keep_probability,
    rr_vote_inflation,
)
from ._minimise import minimise
from ._perturbed_erm import perturbation_noise_share
from ._statistics import one_vs_rest_signs

__all__ = [
    "AUTO_SOLVER_MAX_CHANGED",
    "AUTO_SOLVER_MAX_INFLATION",
    "AUTO_SOLVER_NOISE_RATIO",
    "auto_solver",
    "debiasing_term",
    "randomized_response_erm",
    "randomized_response_params",
    "randomized_response_regularization",
]

# solver="auto" randomizes the labels for a loss it cannot debias while randomized
# response inflates the variance of the labels by at most this factor (see
# auto_solver) ...
AUTO_SOLVER_MAX_INFLATION = 10.0
# ... and at most this many labels are expected to change.
AUTO_SOLVER_MAX_CHANGED = 1000.0
# For a loss it debiases, while the labels' noise in the mean gradient is at most
# this many times objective perturbation's up to that inflation, and at most equal
# to it beyond (see auto_solver).
AUTO_SOLVER_NOISE_RATIO = 2.0
# The regularisation rule (see randomized_response_regularization): Lambda =
# (rho - 1) min(d, RIDGE_DIMENSION) / (RIDGE_SHARE n) + 1 / (2 CLEAN_C n).
RIDGE_SHARE = 27.0
RIDGE_DIMENSION = 9
CLEAN_C = 100.0


def randomized_response_params(*, epsilon, n_classes, reg):
    """The public parameters of the ``"randomized_response"`` solver.

    Parameters
    ----------
    epsilon : float
        The label-DP epsilon of the one release.
    n_classes : int
    reg : float
        ``Lambda`` on the mapped features.

    Returns
    -------
    dict
        ``n_problems``, ``regularization``, ``release_epsilon``,
        ``keep_probability`` (``p``) and ``flip_probability`` (``q``, to
        each other class).
    """
    keep = float(_keep_probability(epsilon, n_classes))
    return {
        "n_problems": 1 if n_classes == 2 else n_classes,
        "regularization": reg,
        "release_epsilon": epsilon,
        "keep_probability": keep,
        "flip_probability": keep * math.exp(-epsilon),
    }


def randomized_response_regularization(*, epsilon, n_samples, n_classes, n_features):
    """``Lambda`` of the ``"randomized_response"`` solver at ``C="auto"``.

    ``Lambda = min(d, 9) (rho - 1) / (27 n) + 1 / (200 n)``, with ``rho`` the
    factor by which randomized response inflates the variance of a label
    (:func:`~sklearn_labeldp.mechanisms._randomized_response.rr_vote_inflation`)
    and ``d`` the mapped dimension: ``(rho - 1) / (3 n)`` from 9 dimensions
    on. The first term is the ridge of noisy labels. For a ridge fit whose
    labels carry an excess variance ``rho - 1`` the ridge that minimises the
    error of the coefficients is about ``d (rho - 1) / (n ||f0||^2)`` on rows
    of norm 1 (Hsu, Kakade and Zhang 2014 for ridge regression's ``d /
    n``), and once the mapped rows' energy spreads over their coordinates a
    predictor ``f0`` separating the classes by a given margin has
    ``||f0||^2`` proportional to ``d``: the dimension cancels. Below 9
    dimensions the ridge keeps its ``d``, as set on the iris, wine and breast
    cancer data (within the best factor of 3 of a grid from 0.3 to 300 at
    epsilon 1 to 8); from 9 on the constant was set on 10,000 Fashion-MNIST
    images and the digits and checked on the wine, breast cancer and four
    synthetic sets of 20 to 100 features (9 splits, eps 0.5 to 4): where
    the default randomizes the labels it came within 1.5 points of the best
    ``C`` of a grid from 0.01 to 100 (picked on the test parts, an oracle) in
    22 of 26 cells, and within 4.5 in all. The former ``d (rho - 1) / (27 n)`` at every ``d``
    put up to 100 times too much ridge on many features (2,000
    Fashion-MNIST images at eps 1: 0.257 with objective perturbation, which
    its solver rule then took, 0.595 now). The second term is scikit-learn's
    order of ridge on clean labels (``C = 100`` on the mapped features, which
    are divided by the median row norm).

    Parameters
    ----------
    epsilon : float
    n_samples : int
    n_classes : int
    n_features : int
        The mapped dimension (the intercept's column included).

    Returns
    -------
    float
    """
    excess = rr_vote_inflation(epsilon, n_classes) - 1.0
    dimension = min(n_features, RIDGE_DIMENSION)
    return (dimension * excess / (RIDGE_SHARE * n_samples)
            + 1.0 / (2.0 * CLEAN_C * n_samples))


def auto_solver(*, epsilon, delta, n_classes, privacy, n_samples, loss, n_features=None,
                dask=False):
    """The solver of ``solver="auto"``, from public quantities only.

    Under label DP, a loss that is debiased (the logistic loss) compares the
    two noises in the mean gradient's units: randomized response's excess
    variance ``rho - 1`` per row
    (:func:`~sklearn_labeldp.mechanisms._randomized_response.rr_vote_inflation`)
    gives the mean gradient a noise of norm about ``sqrt((rho - 1) / n)``
    (rows of norm at most 1), objective perturbation adds ``nu = d g / (n
    eps_problem)``
    (:func:`~sklearn_labeldp.linear_model._perturbed_erm.perturbation_noise_share`,
    pure DP). The former falls like ``1 / sqrt(n)`` and does not grow with
    ``d`` or ``K``, the latter like ``d / n``: objective perturbation is taken
    where ``sqrt((rho - 1) / n) > r nu``, few features for the rows, with
    ``r = 2`` while ``rho <= 10`` and ``r = 1`` beyond, where the debiased
    loss of strongly randomized labels is the less stable of the two. The
    factor 2 was set on 30 splits (70/30) of the iris, wine, breast cancer
    (140 rows), two ``make_classification`` sets and Gaussian blobs at
    epsilon 1 to 8 (the iris at epsilon 1: 0.758 with randomized labels,
    0.819 with objective perturbation; wine, 13 features, the other way:
    0.867 against 0.770); on 40 cells it was not set on it chose the better
    solver or one within 0.8 points. Beyond ``rho = 10`` objective
    perturbation was taken whatever the noises until version 0.1; with the
    ridge of :func:`randomized_response_regularization` the randomized
    labels win there on many features: 2,000 Fashion-MNIST images at eps
    0.5 / 1: 0.316 / 0.595 against 0.178 / 0.257 (means of 9 splits), wine at
    eps 0.5 0.650 against 0.475, while the digits, breast cancer and a
    10-class synthetic set at eps 0.5 keep objective perturbation. Over 36
    cells (9 data sets of 105 to 2,100 rows and 4 to 784 features, eps 0.5
    to 4; ``benchmarks/defaults_small.py rr-ridge``) the two changes gained
    3.2 points on average, up to 34, and lost at most 0.6.

    A loss that cannot be debiased (the Huber hinge, whose curvature is not
    even) is fitted on the randomized labels as they are, a bias that more
    rows do not remove while objective perturbation's noise shrinks like
    ``1 / n``: it randomizes the labels only while randomized response
    inflates a label's variance by at most 10 (``epsilon >= 0.66`` for two
    classes, ``0.77`` for three, ``1.2`` for ten) and at most 1,000 of them
    are expected to change, ``n (1 - p) <= 1000`` (on UCI Adult, 32,561 rows,
    at epsilon 1 and 2 the randomized labels gave 0.821 and 0.835 against
    objective perturbation's 0.843 and 0.844; on the digits at epsilon 2,
    690 changed labels, 0.835 against 0.685). So does the logistic loss when
    ``n`` or ``d`` is not known (a dask ``X``).

    Under ``privacy="full"`` the labels alone are not enough (objective
    perturbation), and a dask ``X`` with ``delta > 0`` gets DP-Newton, which
    reduces it blockwise.

    Parameters
    ----------
    epsilon, delta : float
    n_classes : int
    privacy : {"label", "full"}
    n_samples : int or None
        Rows of the fit (None for a dask ``X``).
    loss : LogisticLoss or HuberHingeLoss
    n_features : int or None, default=None
        The mapped dimension ``d`` (the intercept's column included); None
        skips the comparison of the two noises.
    dask : bool, default=False
        Whether ``X`` is a dask array.

    Returns
    -------
    str
    """
    if dask and 0 < delta < 1:
        return "newton"
    if privacy != "label":
        return "objective"
    rho = rr_vote_inflation(epsilon, n_classes)
    if loss.even_curvature and n_samples is not None and n_features is not None:
        share = perturbation_noise_share(epsilon=epsilon, n_samples=n_samples,
                                         n_classes=n_classes, n_features=n_features, loss=loss,
                                         privacy=privacy)
        ratio = AUTO_SOLVER_NOISE_RATIO if rho <= AUTO_SOLVER_MAX_INFLATION else 1.0
        if math.sqrt((rho - 1.0) / n_samples) > ratio * share:
            return "objective"
        return "randomized_response"
    if rho > AUTO_SOLVER_MAX_INFLATION:
        return "objective"
    if not loss.even_curvature and (
            n_samples is None
            or n_samples * (1.0 - _keep_probability(epsilon, n_classes)) > AUTO_SOLVER_MAX_CHANGED):
        return "objective"
    return "randomized_response"


def randomized_response_erm(codes, *, Z, n_classes, loss, params, tol, max_iter, random_state):
    """Randomized response on the label codes, then each one-vs-rest problem's minimiser.

    The only read of ``codes`` is the randomized response (the release);
    each binary problem then minimises the debiased loss of the randomized
    labels (module docstring) plus ``Lambda / 2 ||f||^2``.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        The true label codes, read once by the randomized response (only
        :meth:`PrivateLabels.release` passes them).
    Z : {ndarray, sparse matrix} of shape (n_samples, d)
        The mapped public features (every row's norm at most 1).
    n_classes : int
        ``K``: one problem for two classes, else one per class.
    loss : LogisticLoss or HuberHingeLoss
        Debiased when its curvature is even (:func:`debiasing_term`).
    params : dict
        From :func:`randomized_response_params`.
    tol : float
    max_iter : int
        Of the minimiser, which returns its last iterate when they do not
        suffice (the privacy does not rest on the minimiser).
    random_state : numpy.random.Generator

    Returns
    -------
    coef : ndarray of shape (n_problems, d)
    """
    noisy = _draw_randomized_response(codes, n_classes, params["release_epsilon"], random_state)
    all_signs = one_vs_rest_signs(noisy, n_classes)
    coef = np.zeros((all_signs.shape[0], Z.shape[1]))
    for row, signs in enumerate(all_signs):
        linear = debiasing_term(Z, signs, loss, params["keep_probability"],
                                params["flip_probability"])
        # Post-processing of the release: the last iterate is as private as the minimiser.
        coef[row], _ = minimise(loss, Z, signs, params["regularization"], linear, tol, max_iter,
                                exact=False)
    return coef


def debiasing_term(Z, signs, loss, keep, flip):
    """The linear term ``linear`` that makes ``mean(l(s Z f)) + linear.f`` unbiased.

    For a loss of even curvature, ``l(-m) = l(m) - 2 l'(0) m`` and the
    unbiased loss of Natarajan et al. (2013) is ``l(s t) + 2 l'(0) rho_s s t /
    (p - q)`` (module docstring): averaged over the rows, the linear term
    ``(2 l'(0) / (n (p - q))) Z^T (rho_s s)``. Zero for other losses, which
    are fitted as they are.

    Parameters
    ----------
    Z : {ndarray, sparse matrix} of shape (n_samples, d)
    signs : ndarray of shape (n_samples,)
        The randomized binary labels in ``{-1, +1}`` of one one-vs-rest problem.
    loss : LogisticLoss or HuberHingeLoss
    keep, flip : float
        ``p`` and ``q`` of the randomized response: a positive label stays
        positive with probability ``p`` (``rho_+ = 1 - p``), a negative one
        turns positive with probability ``q`` (``rho_- = q``).

    Returns
    -------
    ndarray of shape (d,)
    """
    n, d = Z.shape
    if not loss.even_curvature:
        return np.zeros(d)
    rho = np.where(signs > 0, 1.0 - keep, flip)
    slope = 2.0 * float(loss.derivative(np.zeros(1))[0]) / (keep - flip)
    return slope * np.asarray(Z.T @ (rho * signs)).ravel() / n
