"""DP-Newton and DP-FC: one-vs-rest logistic regression by noisy full-batch second-order steps.

Mehta, Krichene, Thakurta, Kurakin and Cutkosky (2023), Alg. 1 and 2.
The training function :func:`noisy_second_order_logistic` takes the label
codes first: the estimators call it only through ``PrivateLabels.release``.
Its noise is calibrated beforehand, from public quantities only, by
:func:`~sklearn_labeldp.linear_model._calibration.second_order_params`;
noisy matrices get the symmetric noise of
:func:`~sklearn_labeldp.linear_model._gram_noise.add_symmetric_noise` and are
projected to the PSD cone. The exact sums of every step are
:mod:`~sklearn_labeldp.linear_model._statistics`' kernels, on all the rows
(:class:`~sklearn_labeldp.linear_model._statistics.NumpySecondOrderSums`) or
on every block of rows of a dask array
(:class:`~sklearn_labeldp.linear_model._dask.DaskSecondOrderSums`); the noise
and the step are taken here, in the same order for both.
"""

import numpy as np
from scipy.linalg import cho_solve

from ..utils import is_dask
from ._dask import dask_second_order_sums
from ._gram_noise import add_symmetric_noise, project_psd
from ._losses import LogisticLoss
from ._statistics import NumpySecondOrderSums


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
    codes : ndarray or dask.array.Array of shape (n_samples,)
        Private label codes; only :meth:`PrivateLabels.release` passes them.
    Z : {ndarray, sparse matrix, dask.array.Array} of shape (n_samples, d)
        Public features, rows of norm <= 1. With dask ``codes`` and ``Z``
        (rows chunked alike) the exact sums of each step are reduced
        blockwise (:func:`~sklearn_labeldp.linear_model._dask.dask_second_order_sums`,
        one ``dask.compute`` per step) and the noise and the step are taken
        here, on the client, in the same order as for numpy input.
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
    if is_dask(codes, Z):
        sums = dask_second_order_sums(codes, Z, n_classes=n_classes, solver=solver)
    else:
        sums = NumpySecondOrderSums(codes, Z, n_classes)
    return _second_order_steps(
        sums, n=Z.shape[0], d=Z.shape[1], m=1 if n_classes == 2 else n_classes,
        solver=solver, n_noisy_steps=n_noisy_steps, reg=reg, noise_stds=noise_stds,
        rng=random_state,
    )


def _second_order_steps(sums, *, n, d, m, solver, n_noisy_steps, reg, noise_stds, rng):
    """The noisy steps on the client, from the exact sums of ``sums`` (numpy or dask).

    The noise is drawn in the same order whichever computes the sums: the
    Gram noise once (FC), then every step the gradient's and, for Newton, the
    Hessians' one class after the other.
    """
    eye = np.eye(d)
    if solver == "fc":
        G = sums.gram() / n
        if "gram" in noise_stds:
            G = project_psd(add_symmetric_noise(G, noise_stds["gram"], rng))
        fixed = np.linalg.cholesky(LogisticLoss.c * G + reg * eye)
    theta = np.zeros((m, d))
    for _ in range(n_noisy_steps):
        grad, hessians = sums.step(theta, hessians=solver == "newton")
        grad = grad / n  # (m, d)
        grad += rng.normal(0.0, noise_stds["gradient"], size=grad.shape)
        grad += reg * theta
        if solver == "fc":
            theta -= cho_solve((fixed, True), grad.T).T
            continue
        # The m Hessians form one release; its std per entry is noise_stds["hessian"].
        for j in range(m):
            H = hessians[j] / n
            if "hessian" in noise_stds:
                H = project_psd(add_symmetric_noise(H, noise_stds["hessian"], rng))
            theta[j] -= np.linalg.solve(H + reg * eye, grad[j])
    return theta
