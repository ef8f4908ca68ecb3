"""Noisy Gram matrices: symmetric Gaussian noise and the projection onto the PSD cone.

Every private linear model that releases a matrix of the form ``sum_i w_i z_i
z_i^T`` (the Gramians and per-class Gramians of DP least squares, the
Hessians of DP-Newton, the Gram matrix of DP-FC; Mehta et al. 2023) releases
it through :func:`add_symmetric_noise` and, after the release, may project it
with :func:`project_psd`. Both are the only implementations in the package.

Symmetric noise. The Gaussian mechanism releases ``M + E`` with ``E`` a full
``p x p`` matrix of iid ``N(0, sd^2)`` entries, calibrated to the Frobenius
sensitivity of ``M`` (one example's ``w z z^T`` has Frobenius norm ``w
||z||^2``). Symmetrising the release, ``((M + E) + (M + E)^T) / 2 = M + (E +
E^T) / 2``, is post-processing: the diagonal keeps variance ``sd^2`` and each
off-diagonal entry gets ``sd^2 / 2``. Mirroring an iid upper triangle instead
is equally private but puts twice that variance on the off-diagonal entries.
"""

import numpy as np


def add_symmetric_noise(M, std, random_state):
    """Add ``(E + E^T) / 2``, ``E`` iid ``N(0, std^2)``, to each matrix of ``M``, in place.

    The matrices (stacked on the leading axes) are updated one at a time, each
    with a ``p x p`` draw of ``random_state.standard_normal`` in the row-major
    order of the leading axes: no noise array of the size of ``M`` is allocated.

    Parameters
    ----------
    M : ndarray of shape (..., p, p), float64
        Symmetric matrices; modified in place (and still exactly symmetric
        afterwards).
    std : float
        ``sd``: the standard deviation of the entries of ``E`` (that of the
        diagonal of the added noise; off-diagonal entries get ``sd / sqrt(2)``).
    random_state : numpy.random.Generator

    Returns
    -------
    M : ndarray of shape (..., p, p)
        The same array, now noisy.
    """
    p = M.shape[-1]
    half = 0.5 * float(std)
    for index in np.ndindex(M.shape[:-2]):
        E = random_state.standard_normal((p, p))
        noise = E + E.T  # exactly symmetric: E_ij + E_ji == E_ji + E_ij in floating point
        noise *= half
        M[index] += noise
    return M


def project_psd(M):
    """Project symmetric matrices (stacked on the leading axes) onto the PSD cone.

    Eigenvalues below 0 are set to 0: the nearest PSD matrix in Frobenius norm.
    Only the lower triangle of each matrix is read.

    Parameters
    ----------
    M : ndarray of shape (..., p, p)
        Symmetric.

    Returns
    -------
    ndarray of shape (..., p, p)
    """
    M = np.asarray(M, dtype=np.float64)
    out = np.empty_like(M)
    flat_in, flat_out = M.reshape(-1, *M.shape[-2:]), out.reshape(-1, *M.shape[-2:])
    for k in range(flat_in.shape[0]):
        flat_out[k] = project_psd_one(flat_in[k])
    return out


def _symmetrize_lower(M):
    """The symmetric matrix whose lower triangle is that of ``M`` (a new array)."""
    out = np.tril(M)
    out += np.tril(M, -1).T
    return out


def project_psd_one(M, *, try_cholesky=True):
    """PSD projection of one symmetric matrix (its lower triangle; ``M`` is not modified).

    With ``M = V diag(w) V^T``, the projection is ``V diag(max(w, 0)) V^T``. Two
    shortcuts give the same matrix (up to rounding) with less work:

    - a matrix that is positive definite (its Cholesky factorisation succeeds)
      is its own projection: no eigendecomposition;
    - with fewer negative than positive eigenvalues, it is ``M - V_- diag(w_-)
      V_-^T`` over the negative ones only, else ``V_+ diag(w_+) V_+^T``; each
      product is a symmetric rank-k update ``S S^T`` with ``S = V_+- sqrt(|w_+-|)``,
      exactly symmetric.

    numpy's LAPACK calls release the GIL (scipy's wrappers hold it), so this runs
    in parallel on a thread pool.

    Parameters
    ----------
    M : ndarray of shape (p, p)
    try_cholesky : bool, default=True
        Try the positive definite shortcut first.

    Returns
    -------
    ndarray of shape (p, p)
    """
    if try_cholesky:
        try:
            np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            pass
        else:
            return _symmetrize_lower(M)
    w, V = np.linalg.eigh(M)  # LAPACK syevd (divide and conquer), as scipy's driver="evd"
    negative = w < 0
    n_negative = int(np.count_nonzero(negative))
    if n_negative == 0:
        return _symmetrize_lower(M)
    if 2 * n_negative < w.size:
        scaled = V[:, negative] * np.sqrt(-w[negative])
        out = scaled @ scaled.T
        out += _symmetrize_lower(M)  # M - V_- diag(w_-) V_-^T, with w_- < 0
        return out
    positive = ~negative
    scaled = V[:, positive] * np.sqrt(w[positive])
    return scaled @ scaled.T
