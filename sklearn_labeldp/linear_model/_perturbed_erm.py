"""Objective and output perturbation: one-vs-rest private ERM with pure epsilon-DP.

Chaudhuri, Monteleoni and Sarwate (2011), Algorithms 1 (output perturbation)
and 2 (objective perturbation). The training function :func:`perturbed_erm`
takes the label codes first: the estimators call it only through
``PrivateLabels.release``. Its noise scale and extra regularisation are
calibrated beforehand, from public quantities only, by
:func:`~sklearn_labeldp.linear_model._calibration.perturbation_params`; its
noise is :func:`sample_l2_gamma_noise`'s, and the exact minimiser is
:func:`~sklearn_labeldp.linear_model._minimise.minimise`'s.
"""

import numpy as np

from ._minimise import minimise
from ._statistics import one_vs_rest_targets


def sample_l2_gamma_noise(dim, scale, random_state):
    """A vector with density proportional to ``exp(-||b|| / scale)`` in ``R^dim``.

    Its norm is ``Gamma(shape=dim, scale=scale)`` and its direction uniform on
    the sphere (a normalised standard Gaussian vector).

    Parameters
    ----------
    dim : int
    scale : float
    random_state : numpy.random.Generator

    Returns
    -------
    ndarray of shape (dim,)
    """
    direction = random_state.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    return random_state.gamma(dim, scale) * direction


def perturbed_erm(codes, *, Z, n_classes, loss, solver, params, tol, max_iter, random_state):
    """One-vs-rest private ERM: objective or output perturbation of each binary problem.

    Objective perturbation minimises ``J(f) + b.f / n + (Delta/2) ||f||^2``;
    output perturbation releases ``argmin J + b``. Either way ``||b|| ~
    Gamma(d, noise_scale)`` in a uniform direction, one draw per problem.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Private label codes; only :meth:`PrivateLabels.release` passes them.
    Z : {ndarray, sparse matrix} of shape (n_samples, d)
        Public features, rows of norm <= 1.
    n_classes : int
        One binary problem (``codes == 1`` positive) when 2, else one per class.
    loss : LogisticLoss or HuberHingeLoss
    solver : {"objective", "output"}
    params : dict
        From :func:`~sklearn_labeldp.linear_model._calibration.perturbation_params`:
        ``regularization`` (``Lambda``), ``noise_scale`` and, for
        ``"objective"``, ``extra_regularization`` (``Delta``).
    tol : float
    max_iter : int
        Of the exact minimiser; :class:`~sklearn_labeldp.exceptions.ConvergenceError`
        when not met (a :class:`~sklearn_labeldp.exceptions.ReleaseError` with
        :meth:`~sklearn_labeldp.linear_model._solvers._Perturbation.failure`'s
        text outside the release).
    random_state : numpy.random.Generator

    Returns
    -------
    coef : ndarray of shape (n_problems, d)
        Only the coefficients: the optimiser's iteration count depends on the
        labels and is not covered by the guarantee, so it is not released.
    """
    n, d = Z.shape
    reg, scale = params["regularization"], params["noise_scale"]
    # Each problem's binary labels in {-1, +1}, from the one-vs-rest targets in {0, 1}.
    all_signs = np.ascontiguousarray(2.0 * one_vs_rest_targets(codes, n_classes).T - 1.0)
    coef = np.zeros((all_signs.shape[0], d))
    for row, signs in enumerate(all_signs):
        if solver == "objective":
            b = sample_l2_gamma_noise(d, scale, random_state)
            extra = params["extra_regularization"]
            coef[row], _ = minimise(loss, Z, signs, reg + extra, b / n, tol, max_iter)
        else:
            f, _ = minimise(loss, Z, signs, reg, np.zeros(d), tol, max_iter)
            coef[row] = f + sample_l2_gamma_noise(d, scale, random_state)
    return coef
