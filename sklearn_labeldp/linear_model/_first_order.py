"""DP-SGD and DP-Adam: one-vs-rest logistic regression by noisy first-order steps.

Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar and Zhang (2016), in the
generalised form of Mehta, Krichene, Thakurta, Kurakin and Cutkosky (2023,
Alg. 1): each step releases a noisy mean gradient and hands it to a
first-order optimiser (SGD or Adam), which is post-processing.

The model is the one DP-Newton and DP-FC fit: per-class sigmoid cross-entropy
on the mapped rows ``z`` (``||z|| <= 1``), ``theta`` of shape ``(m, d)`` with
``m = 1`` for two classes and ``m = K`` otherwise. One example's gradient is
the outer product ``r_i z_i^T`` of its residual ``r_i = sigmoid(theta z_i) -
e_i`` (``e_i`` the one-hot label, or ``[y_i = 1]`` for two classes) and its
row, a rank-one matrix of Frobenius norm ``||r_i|| ||z_i||``: clipping it to
``C`` scales ``r_i`` by ``min(1, C / (||r_i|| ||z_i||))``, and the sum of the
clipped gradients is ``R^T Z`` with the scaled residuals ``R``. Nothing of
size ``n x m x d`` is ever formed.

The training function :func:`noisy_first_order_logistic` takes the label codes
first: the estimators call it only through ``PrivateLabels.release``. Its
noise, sampling rate and clipping norm are calibrated beforehand, from public
quantities only, by
:func:`~sklearn_labeldp.linear_model._calibration.first_order_params`. Every
random draw (the Poisson batches and the noise) comes from the one generator
it is given.
"""

import numpy as np
from scipy.special import expit

from ._preprocessing import row_norms
from ._statistics import one_vs_rest_targets

# Adam's constants (Kingma and Ba 2015), fixed: not parameters of the estimator.
ADAM_BETA1, ADAM_BETA2, ADAM_EPS = 0.9, 0.999, 1e-8


def clipped_residuals(theta, Z, E, z_norms, clip_norm):
    """Residuals whose outer products with the rows are the clipped per-example gradients.

    Example ``i``'s gradient of the summed loss is ``r_i z_i^T`` with ``r_i =
    sigmoid(theta z_i) - e_i``; its Frobenius norm is ``||r_i|| ||z_i||``
    (rank one). Clipping it to ``clip_norm`` multiplies ``r_i`` by ``min(1,
    clip_norm / (||r_i|| ||z_i||))``.

    Parameters
    ----------
    theta : ndarray of shape (m, d)
    Z : {ndarray, sparse matrix} of shape (n, d)
    E : ndarray of shape (n, m)
        Targets
        (:func:`~sklearn_labeldp.linear_model._statistics.one_vs_rest_targets`).
    z_norms : ndarray of shape (n,)
        ``||z_i||``.
    clip_norm : float or None
        ``None``: no clipping.

    Returns
    -------
    ndarray of shape (n, m)
        ``R`` such that ``sum_i clip(r_i z_i^T) = R^T Z``.
    """
    R = expit(np.asarray(Z @ theta.T)) - E
    if clip_norm is None:
        return R
    norms = np.sqrt(np.einsum("ij,ij->i", R, R)) * z_norms
    scale = np.ones_like(norms)
    over = norms > clip_norm
    scale[over] = clip_norm / norms[over]
    R *= scale[:, None]
    return R


def poisson_sample(n_samples, sample_rate, random_state):
    """Indices of a Poisson batch: each row independently with probability ``sample_rate``.

    ``sample_rate = 1`` returns every row without a draw.

    Parameters
    ----------
    n_samples : int
    sample_rate : float
        In (0, 1].
    random_state : numpy.random.Generator

    Returns
    -------
    ndarray of int
    """
    if sample_rate >= 1.0:
        return np.arange(n_samples)
    return np.flatnonzero(random_state.random(n_samples) < sample_rate)


def noisy_gradient(theta, Z, E, z_norms, *, sample_rate, clip_norm, expected_batch_size,
                   noise_std, random_state):
    """One released gradient: ``(sum of clipped per-example gradients of a Poisson batch) / b
    + N(0, noise_std^2)``.

    ``b = expected_batch_size`` (``sample_rate * n``, public) divides the sum,
    never the realised batch size, which is private under add/remove
    neighbours. The noise on the mean, ``noise_std``, is the noise multiplier
    times the sensitivity of the sum, divided by ``b``.

    Parameters
    ----------
    theta : ndarray of shape (m, d)
    Z : {ndarray, sparse matrix} of shape (n, d)
    E : ndarray of shape (n, m)
    z_norms : ndarray of shape (n,)
    sample_rate : float
    clip_norm : float or None
    expected_batch_size : float
    noise_std : float
    random_state : numpy.random.Generator
        The Poisson batch is drawn first, then the noise.

    Returns
    -------
    ndarray of shape (m, d)
    """
    rows = poisson_sample(Z.shape[0], sample_rate, random_state)
    if rows.size < Z.shape[0]:
        Z, E, z_norms = Z[rows], E[rows], z_norms[rows]
    R = clipped_residuals(theta, Z, E, z_norms, clip_norm)
    grad = np.asarray(Z.T @ R).T / expected_batch_size
    grad += random_state.normal(0.0, noise_std, size=grad.shape)
    return grad


def noisy_first_order_logistic(
    codes, *, Z, n_classes, optimizer, n_noisy_steps, reg, learning_rate, sample_rate,
    clip_norm, expected_batch_size, noise_std, random_state,
):
    """Train one-vs-rest logistic regression with DP-SGD or DP-Adam.

    ``T = n_noisy_steps`` steps from ``theta = 0``; each releases
    :func:`noisy_gradient`, adds the gradient ``reg * theta`` of the penalty
    (no label involved), and takes a step of the optimiser:

    - ``"sgd"``: ``theta -= learning_rate * g``;
    - ``"adam"``: Adam with ``beta1 = 0.9``, ``beta2 = 0.999``, ``eps = 1e-8``
      and bias correction.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Private label codes; only :meth:`PrivateLabels.release` passes them.
    Z : {ndarray, sparse matrix} of shape (n_samples, d)
        Rows of norm <= 1.
    n_classes : int
    optimizer : {"sgd", "adam"}
    n_noisy_steps : int
    reg : float
        ``Lambda``.
    learning_rate : float
    sample_rate : float
        Poisson sampling rate ``q``; 1 for full batch.
    clip_norm : float or None
        Per-example gradient clipping norm; ``None`` (label DP, full batch):
        no clipping.
    expected_batch_size : float
        ``q n``.
    noise_std : float
        Std of the noise on each released mean gradient (0: exact, for tests).
    random_state : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_problems, d)
    """
    rng = random_state
    E = one_vs_rest_targets(codes, n_classes)
    z_norms = row_norms(Z)
    theta = np.zeros((E.shape[1], Z.shape[1]))
    if optimizer == "adam":
        first, second = np.zeros_like(theta), np.zeros_like(theta)
    for t in range(1, n_noisy_steps + 1):
        grad = noisy_gradient(
            theta, Z, E, z_norms, sample_rate=sample_rate, clip_norm=clip_norm,
            expected_batch_size=expected_batch_size, noise_std=noise_std, random_state=rng,
        )
        grad += reg * theta
        if optimizer == "sgd":
            theta -= learning_rate * grad
            continue
        first *= ADAM_BETA1
        first += (1.0 - ADAM_BETA1) * grad
        second *= ADAM_BETA2
        second += (1.0 - ADAM_BETA2) * grad**2
        m_hat = first / (1.0 - ADAM_BETA1**t)
        v_hat = second / (1.0 - ADAM_BETA2**t)
        theta -= learning_rate * m_hat / (np.sqrt(v_hat) + ADAM_EPS)
    return theta
