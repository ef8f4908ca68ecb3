"""DP-Newton and DP-FC: one-vs-rest logistic regression by noisy full-batch second-order steps.

Mehta, Krichene, Thakurta, Kurakin and Cutkosky (2023), Alg. 1 and 2.
The training function :func:`noisy_second_order_logistic` takes the label
codes first: the estimators call it only through ``PrivateLabels.release``.
Its noise is calibrated beforehand, from public quantities only, by
:func:`~sklearn_labeldp.linear_model._perturbation.second_order_params`;
noisy matrices get the symmetric noise of
:func:`~sklearn_labeldp.linear_model._gram_noise.add_symmetric_noise` and are
projected to the PSD cone.
"""

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve
from scipy.special import expit

from ._gram_noise import add_symmetric_noise, project_psd
from ._losses import LogisticLoss


def _weighted_gram(Z, w):
    if sp.issparse(Z):
        return np.asarray((Z.T @ sp.diags(w) @ Z).todense())
    return (Z * w[:, None]).T @ Z


def gradient_sum(P, Z, E):
    """The released gradient sum ``sum_i (p_i - e_i) z_i^T`` (``m x d``).

    ``P = sigmoid(Z Theta^T)``, ``E`` the targets.

    The only statistic that reads the labels (through ``E``): a label change
    moves it by ``(e_old - e_new) z^T``.
    """
    return np.asarray(Z.T @ (P - E)).T


def hessian_sum(P_j, Z):
    """The released Hessian sum ``sum_i p_ij (1 - p_ij) z_i z_i^T`` of problem ``j``.

    A function of the features and of ``Theta`` (through ``P_j``) only, no label.
    """
    return _weighted_gram(Z, P_j * (1.0 - P_j))


def gram_sum(Z):
    """The released Gram matrix ``G = sum_i z_i z_i^T`` of DP-FC; no label."""
    return _weighted_gram(Z, np.ones(Z.shape[0]))


def noisy_second_order_logistic(
    codes, *, Z, n_classes, solver, n_noisy_steps, reg, noise_stds, random_state
):
    """Train one-vs-rest logistic regression with DP-Newton or DP-FC.

    Minimises ``J(theta_j) = (1/n) sum_i log(1 + exp(-s_ij theta_j.z_i)) +
    (reg/2) ||theta_j||^2`` for each binary problem ``j`` (one when
    ``n_classes`` is 2, else one per class) by ``n_noisy_steps`` full-batch
    steps ``theta -= P^-1 g~`` from ``theta = 0`` (step size 1), where ``g~``
    is the mean gradient plus Gaussian noise:

    - ``"newton"``: ``P`` is the Hessian ``H_j / n`` (noisy when
      ``noise_stds`` has a ``"hessian"`` entry, then projected to the PSD
      cone) plus ``reg I``;
    - ``"fc"``: ``P = c G / n + reg I`` with the logistic loss's curvature
      bound ``c = 1/4`` (``G`` noisy when ``noise_stds`` has a ``"gram"``
      entry): each noiseless step is a majorisation-minimisation step and
      never increases ``J``.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Private label codes; only :meth:`PrivateLabels.release` passes them.
    Z : {ndarray, sparse matrix} of shape (n_samples, d)
        Public features, rows of norm <= 1.
    n_classes : int
    solver : {"newton", "fc"}
    n_noisy_steps : int
    reg : float
    noise_stds : dict
        Std of the Gaussian noise on each released mean: ``"gradient"``
        (every step), and ``"hessian"`` (the per-class Hessians, every step)
        or ``"gram"`` (once) when the curvature is noised too (full DP: it
        protects the features; a label change does not move it). 0 gives the
        exact steps (for tests, no privacy).
    random_state : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_problems, d)
    """
    rng = random_state
    n, d = Z.shape
    if n_classes == 2:
        E = (codes == 1).astype(np.float64)[:, None]
    else:
        E = np.zeros((n, n_classes))
        E[np.arange(n), codes] = 1.0
    m = E.shape[1]
    eye = np.eye(d)
    if solver == "fc":
        G = gram_sum(Z) / n
        if "gram" in noise_stds:
            G = project_psd(add_symmetric_noise(G, noise_stds["gram"], rng))
        fixed = np.linalg.cholesky(LogisticLoss.c * G + reg * eye)
    theta = np.zeros((m, d))
    for _ in range(n_noisy_steps):
        P = expit(np.asarray(Z @ theta.T))
        grad = gradient_sum(P, Z, E) / n  # (m, d)
        grad += rng.normal(0.0, noise_stds["gradient"], size=grad.shape)
        grad += reg * theta
        if solver == "fc":
            theta -= cho_solve((fixed, True), grad.T).T
            continue
        # The m Hessians form one release; its std per entry is noise_stds["hessian"].
        for j in range(m):
            H = hessian_sum(P[:, j], Z) / n
            if "hessian" in noise_stds:
                H = project_psd(add_symmetric_noise(H, noise_stds["hessian"], rng))
            theta[j] -= np.linalg.solve(H + reg * eye, grad[j])
    return theta
