"""DP-Newton and DP-FC for one-vs-rest logistic regression (Mehta et al. 2023, Algs. 1, 2).

Full batch, ``T`` iterations, Gaussian noise calibrated through zCDP. The
training function :func:`noisy_second_order_logistic` takes the label codes
first: the estimators call it only through ``PrivateLabels.release``.

Sensitivities (rows of ``Z`` have L2 norm <= 1, ``m`` binary problems: 1 when
K = 2, K otherwise; the statistics are sums over examples, divided by the
public ``n``):

- the gradient ``sum_i (sigmoid(Theta z_i) - e_i) z_i^T`` (an ``m x d`` matrix):
  a label change alters one example's term by ``(e_old - e_new) z^T``, of
  Frobenius norm <= sqrt(2) (<= 1 when m = 1); adding or removing a whole
  example changes it by at most sqrt(m) (every residual is in [-1, 1]);
- the Hessians ``sum_i p_ij (1 - p_ij) z_i z_i^T`` and the Gram matrix
  ``G = sum_i z_i z_i^T`` do not read the labels (``Theta`` is a
  post-processing of earlier noisy releases), so under label DP they are
  released without noise; under full DP (add/remove) their sensitivities are
  ``sqrt(m) / 4`` (the m Hessians together) and 1 (``G``), and they are released
  with the symmetric noise of
  :func:`~sklearn_labeldp.linear_model._gram_noise.add_symmetric_noise`, then
  projected to the PSD cone.

References: H. Mehta, W. Krichene, A. Thakurta, A. Kurakin, A. Cutkosky.
Differentially private image classification from features. TMLR 2023.
"""

import math

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve
from scipy.special import expit

from ._gram_noise import add_symmetric_noise, project_psd

__all__ = ["newton_fc_noise_multiplier", "noisy_second_order_logistic", "second_order_plan"]

# Largest second derivative of the logistic loss (beta_H of Mehta et al. 2023).
_BETA_H = 0.25


def _n_gaussian_releases(solver, privacy, n_iter):
    """Number of Gaussian releases of unit zCDP weight ``1 / (2 s^2)``."""
    if privacy == "label":
        return n_iter  # one noisy gradient per iteration; curvature is label-independent
    if solver == "newton":
        return 2 * n_iter  # gradient and Hessian each iteration: rho = T / s^2
    return n_iter + 1  # the gradients and G once: rho = (T + 1) / (2 s^2)


def newton_fc_noise_multiplier(rho, solver, privacy, n_iter):
    """The noise multiplier ``s`` that makes the whole run ``rho``-zCDP.

    Every release adds Gaussian noise of std ``s`` times its L2 sensitivity,
    so each costs ``1 / (2 s^2)`` and the run ``k / (2 s^2)`` for ``k``
    releases (Bun and Steinke 2016: zCDP composes by adding ``rho``).

    Parameters
    ----------
    rho : float
    solver : {"newton", "fc"}
    privacy : {"label", "full"}
    n_iter : int

    Returns
    -------
    float
    """
    return math.sqrt(_n_gaussian_releases(solver, privacy, n_iter) / (2.0 * rho))


def second_order_plan(n_classes, privacy):
    """Number of binary problems and the L2 sensitivities of the released sums.

    Returns
    -------
    n_problems : int
    grad_sensitivity : float
    hessian_sensitivity : float
        Of the ``m`` per-class Hessians together (full DP only; 0 under label DP).
    gram_sensitivity : float
        Of ``G`` (full DP only; 0 under label DP).
    """
    m = 1 if n_classes == 2 else n_classes
    if privacy == "label":
        return m, (1.0 if m == 1 else math.sqrt(2.0)), 0.0, 0.0
    return m, math.sqrt(m), _BETA_H * math.sqrt(m), 1.0


def _weighted_gram(Z, w):
    if sp.issparse(Z):
        return np.asarray((Z.T @ sp.diags(w) @ Z).todense())
    return (Z * w[:, None]).T @ Z


def noisy_second_order_logistic(
    codes, *, Z, n_classes, solver, privacy, n_iter, noise_multiplier, reg, random_state
):
    """Train one-vs-rest logistic regression with DP-Newton or DP-FC.

    Minimises ``J(theta_j) = (1/n) sum_i log(1 + exp(-s_ij theta_j.z_i)) +
    (reg/2) ||theta_j||^2`` for each binary problem ``j`` by ``n_iter``
    full-batch steps ``theta -= P^-1 g~`` from ``theta = 0`` (step size 1):

    - ``"newton"``: ``P`` is the Hessian ``H_j / n`` (noisy under full DP, then
      projected to the PSD cone) plus ``reg I``;
    - ``"fc"``: ``P = beta_H G~ / n + reg I`` with ``beta_H = 1/4``: the fixed
      curvature bound of the logistic loss, so each noiseless step is a
      majorisation-minimisation step and never increases ``J``.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Private label codes; only :meth:`PrivateLabels.release` passes them.
    Z : {ndarray, sparse matrix} of shape (n_samples, d)
        Public features, rows of norm <= 1.
    n_classes : int
    solver : {"newton", "fc"}
    privacy : {"label", "full"}
    n_iter : int
    noise_multiplier : float
        ``s``: each release gets Gaussian noise of std ``s * sensitivity / n``.
    reg : float
    random_state : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_problems, d)
    """
    rng = random_state
    n, d = Z.shape
    m, grad_sens, hess_sens, gram_sens = second_order_plan(n_classes, privacy)
    if m == 1:
        E = (codes == 1).astype(np.float64)[:, None]
    else:
        E = np.zeros((n, m))
        E[np.arange(n), codes] = 1.0
    eye = np.eye(d)
    if solver == "fc":
        G = _weighted_gram(Z, np.ones(n)) / n
        if privacy == "full":
            G = project_psd(add_symmetric_noise(G, noise_multiplier * gram_sens / n, rng))
        fixed = np.linalg.cholesky(_BETA_H * G + reg * eye)
    theta = np.zeros((m, d))
    for _ in range(n_iter):
        P = expit(np.asarray(Z @ theta.T))
        grad = np.asarray(Z.T @ (P - E)).T / n  # (m, d)
        grad += rng.normal(0.0, noise_multiplier * grad_sens / n, size=grad.shape)
        grad += reg * theta
        if solver == "fc":
            theta -= cho_solve((fixed, True), grad.T).T
            continue
        # The m Hessians form one release; its std per entry is s * hess_sens / n.
        for j in range(m):
            H = _weighted_gram(Z, P[:, j] * (1.0 - P[:, j])) / n
            if privacy == "full":
                H = project_psd(add_symmetric_noise(H, noise_multiplier * hess_sens / n, rng))
            theta[j] -= np.linalg.solve(H + reg * eye, grad[j])
    return theta

