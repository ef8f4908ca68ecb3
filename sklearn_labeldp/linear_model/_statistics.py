"""The exact sums the linear models' Gaussian mechanisms release: numpy kernels of both paths.

Every function here computes exact (noiseless) sums over the rows it is given
and nothing else: the numpy path calls it once on all the rows, the dask path
(:mod:`~sklearn_labeldp.linear_model._dask`) on every block of rows and adds
the blocks' results up. The noise is added once, to the total, by the
mechanism that called it, so a sum has one implementation whichever path
computes it and both paths release the same statistic.

- DP least squares (Mehta, Krichene, Thakurta, Kurakin and Cutkosky 2023,
  Alg. 3): :func:`least_squares_statistics`, the per-class Gramians ``A_j``,
  the class sums ``b_j`` and the Gramian ``G``.
- DP-Newton and DP-FC (the same paper, Alg. 1 and 2): :func:`step_sums`, the
  gradient sum of one step and the Hessian sums, and :func:`gram_sum`, DP-FC's
  Gram matrix; :class:`NumpySecondOrderSums` serves them to the steps as
  :class:`~sklearn_labeldp.linear_model._dask.DaskSecondOrderSums` does for a
  dask array.
- :func:`one_vs_rest_targets`: the targets of the per-class sigmoid
  cross-entropy that DP-Newton, DP-FC, DP-SGD and DP-Adam fit.

The functions that read label codes are called only inside a mechanism, which
runs in ``PrivateLabels.release``.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from joblib import cpu_count
from scipy.special import expit
from sklearn.utils.extmath import safe_sparse_dot
from threadpoolctl import threadpool_info, threadpool_limits

__all__ = [
    "NumpySecondOrderSums",
    "dense_gram",
    "gradient_sum",
    "gram_sum",
    "hessian_sum",
    "least_squares_statistics",
    "map_classes",
    "one_vs_rest_signs",
    "one_vs_rest_targets",
    "step_sums",
]


def one_vs_rest_targets(codes, n_classes):
    """The targets ``E`` of the per-class sigmoid cross-entropy: ``(n, 1)`` or one-hot ``(n, K)``.

    Two classes make one binary problem whose target is ``[code == 1]``;
    ``K > 2`` classes make ``K`` one-vs-rest problems with one-hot targets.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Label codes in ``[0, n_classes)``.
    n_classes : int

    Returns
    -------
    ndarray of shape (n_samples, m)
        ``m = 1`` for two classes, else ``n_classes``.
    """
    codes = np.asarray(codes)
    if n_classes == 2:
        return (codes == 1).astype(np.float64)[:, None]
    E = np.zeros((codes.shape[0], n_classes))
    E[np.arange(codes.shape[0]), codes] = 1.0
    return E


def one_vs_rest_signs(codes, n_classes):
    """Each one-vs-rest problem's binary labels in ``{-1, +1}``, shape ``(m, n)``, C-ordered.

    The rows of :func:`one_vs_rest_targets`' transpose, mapped from ``{0, 1}``
    to ``{-1, +1}``: what the exact minimiser reads, one row per problem.
    """
    return np.ascontiguousarray(2.0 * one_vs_rest_targets(codes, n_classes).T - 1.0)


# ----------------------------------------------------------------------------- least squares


def dense_gram(Z):
    """``Z^T Z`` as a dense float64 array (``Z`` dense or sparse).

    The Gramian ``G`` of DP least squares (public under label DP) and its
    per-class Gramians (:func:`least_squares_statistics`).
    """
    G = safe_sparse_dot(Z.T, Z, dense_output=True)
    return np.asarray(G.toarray() if sp.issparse(G) else G, dtype=np.float64)


def least_squares_statistics(codes, Z, *, n_classes, formulation, data_norm, gram):
    """The exact sufficient statistics of DP-LS (no noise): ``b``, ``A`` and ``G``.

    The one implementation of the sums, used by the numpy path on the whole of
    ``Z`` and by the dask path on every block (whose results are then summed).

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
    Z : {ndarray, sparse matrix} of shape (n_samples, p)
        Rows of L2 norm at most ``data_norm`` (checked).
    n_classes : int
    formulation : {"weighted", "ridge"}
        ``"A"`` is computed for ``"weighted"`` only.
    data_norm : float
    gram : bool
        Whether to compute ``"G" = Z^T Z`` (from ``Z`` alone).

    Returns
    -------
    dict
        ``"b"`` (p, n_classes), ``"A"`` (n_classes, p, p), ``"G"`` (p, p).
    """
    codes = np.asarray(codes, dtype=np.intp)
    if formulation == "weighted":
        A, b, largest = _class_statistics(Z, codes, n_classes)
        stats = {"b": b, "A": A}
    else:
        stats, largest = {"b": _class_sums(Z, codes, n_classes)}, _largest_squared_norm(Z)
    if largest > data_norm**2 * (1 + 1e-9):
        raise ValueError("the rows of Z must have L2 norm <= data_norm; clip them first.")
    if gram:
        # Under full DP the mechanism also releases G, from the features alone: sum_j A_j
        # would equal it only up to rounding that depends on the labels (the order of the
        # sum), and the ledger is charged for a label change that does not move G at all.
        stats["G"] = dense_gram(Z)
    return stats


def _largest_squared_norm(Z):
    """The largest squared L2 norm of the rows of ``Z`` (0 without rows)."""
    if sp.issparse(Z):
        sq_norms = np.asarray(Z.multiply(Z).sum(axis=1)).ravel()
    else:
        sq_norms = np.einsum("ij,ij->i", Z, Z)
    return float(sq_norms.max(initial=0.0))


def _class_sums(Z, codes, n_classes):
    """``b = Z^T Y``, ``Y`` the one-hot targets of ``codes``: one column per class."""
    n = Z.shape[0]
    one_hot = sp.csr_matrix(
        (np.ones(n), (np.arange(n), codes)), shape=(n, n_classes), dtype=np.float64
    )
    # Z^T Y through the sparse one-hot: O(nnz(Z)) instead of a dense n x p x K product.
    return np.asarray(safe_sparse_dot(one_hot.T, Z, dense_output=True)).T.copy()


def _class_statistics(Z, codes, n_classes):
    """``A_j = Z_j^T Z_j`` and ``b_j`` for the rows ``Z_j`` of each class, and the longest row.

    Dense rows are gathered class by class into a buffer the size of the largest
    class, which stays in cache (no sorted copy of ``Z``): ``rows.T @ rows`` is a
    symmetric rank-k update (numpy calls ``syrk``), and the class sum ``b_j`` and
    the rows' norms (the mechanism's check of the bound) are read from the same
    cached rows instead of two more passes over ``Z``. ``b_j`` adds the rows in
    their order in ``Z``, as the sparse product of :func:`_class_sums` does, so
    both give the same sums. The classes run on :func:`map_classes`' thread
    pool, one buffer per thread.

    Returns
    -------
    A : ndarray of shape (n_classes, p, p)
    b : ndarray of shape (p, n_classes)
    largest : float
        :func:`_largest_squared_norm` of ``Z``.
    """
    p = Z.shape[1]
    A = np.empty((n_classes, p, p))
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=n_classes)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    if sp.issparse(Z):
        Z_sorted = Z[order]
        for j in range(n_classes):
            A[j] = dense_gram(Z_sorted[bounds[j] : bounds[j + 1]])
        return A, _class_sums(Z, codes, n_classes), _largest_squared_norm(Z)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    sums = np.empty((n_classes, p))
    largest = np.zeros(n_classes)
    local = threading.local()

    def class_statistics(j):
        if not hasattr(local, "buffer"):
            local.buffer = np.empty((int(counts.max(initial=0)), p))
        rows = local.buffer[: counts[j]]
        np.take(Z, order[bounds[j] : bounds[j + 1]], axis=0, out=rows)
        np.matmul(rows.T, rows, out=A[j])
        np.add.reduce(rows, axis=0, out=sums[j])
        largest[j] = _largest_squared_norm(rows)

    map_classes(class_statistics, n_classes, parallel=p >= 32)
    return A, np.ascontiguousarray(sums.T), float(largest.max(initial=0.0))


def _n_blas_threads():
    """Threads the BLAS may use now: the caller's ``threadpool_limits`` are respected."""
    counts = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    return max(counts) if counts else cpu_count(only_physical_cores=False)


def map_classes(function, n_classes, *, parallel=True):
    """``[function(j) for j in range(n_classes)]``, on a thread pool.

    The per-class problems are small dense ones (p x p) that a multithreaded BLAS
    does not speed up much one at a time (and slows down a lot when the cores are
    shared with other processes): they run side by side instead, as many as the
    BLAS has threads now, with one BLAS thread each. numpy's BLAS and LAPACK calls
    release the GIL. Each class's result depends on nothing but its inputs, so
    it does not depend on the scheduling.
    """
    n_threads = max(1, min(n_classes, _n_blas_threads())) if parallel else 1
    if n_threads == 1:
        return [function(j) for j in range(n_classes)]
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(n_threads) as pool:
        return list(pool.map(function, range(n_classes)))


# ----------------------------------------------------------------------------- second order


def _weighted_gram(Z, w, buffer=None):
    """``Z^T diag(w) Z``; a dense ``Z``'s weighted copy goes into ``buffer`` when given."""
    if sp.issparse(Z):
        return np.asarray((Z.T @ sp.diags(w) @ Z).todense())
    return np.multiply(Z, w[:, None], out=buffer).T @ Z


def gradient_sum(P, Z, E):
    """The released gradient sum ``sum_i (p_i - e_i) z_i^T`` (``m x d``).

    ``P = sigmoid(Z Theta^T)``, ``E`` the targets (:func:`one_vs_rest_targets`).

    The only statistic that reads the labels (through ``E``): a label change
    moves it by ``(e_old - e_new) z^T``.
    """
    return np.asarray(Z.T @ (P - E)).T


def hessian_sum(P_j, Z, buffer=None):
    """The released Hessian sum ``sum_i p_ij (1 - p_ij) z_i z_i^T`` of problem ``j``.

    A function of the features and of ``Theta`` (through ``P_j``) only, no label.
    ``buffer``, an array shaped like a dense ``Z``, receives the weighted copy
    of ``Z`` instead of a fresh array.
    """
    return _weighted_gram(Z, P_j * (1.0 - P_j), buffer)


def gram_sum(Z):
    """The released Gram matrix ``G = sum_i z_i z_i^T`` of DP-FC; no label.

    Formed as :func:`hessian_sum`'s weighted Gramian with unit weights, as
    DP-FC's noisy steps have always been computed (not through :func:`dense_gram`,
    whose BLAS call may round differently).
    """
    return _weighted_gram(Z, np.ones(Z.shape[0]))


def step_sums(codes, Z, theta, n_classes, hessians):
    """The exact sums of one DP-Newton or DP-FC step on the rows ``Z``.

    Parameters
    ----------
    codes : ndarray of shape (n_rows,)
    Z : {ndarray, sparse matrix} of shape (n_rows, d)
    theta : ndarray of shape (m, d)
    n_classes : int
    hessians : bool
        Whether to compute the ``m`` Hessian sums too (DP-Newton).

    Returns
    -------
    grad : ndarray of shape (m, d)
        :func:`gradient_sum`.
    hessians : ndarray of shape (m, d, d) or None
        :func:`hessian_sum` of every problem, for ``hessians``.
    """
    P = np.asarray(Z @ theta.T)
    expit(P, out=P)
    grad = gradient_sum(P, Z, one_vs_rest_targets(codes, n_classes))
    if not hessians:
        return grad, None
    # One weighted copy of Z at a time, in one array: m fresh (n, d) arrays
    # per step would each be a new mmap, faulted in page by page, in a Dask
    # worker (distributed sets MALLOC_TRIM_THRESHOLD_).
    buffer = None if sp.issparse(Z) else np.empty(Z.shape)
    return grad, np.stack([hessian_sum(P[:, j], Z, buffer) for j in range(theta.shape[0])])


class NumpySecondOrderSums:
    """The exact sums of every DP-Newton or DP-FC step from in-memory ``codes`` and ``Z``.

    The numpy counterpart of
    :class:`~sklearn_labeldp.linear_model._dask.DaskSecondOrderSums`: the
    noisy steps ask either for :meth:`gram` (DP-FC, once) and :meth:`step`
    (every step), and add the noise themselves.
    """

    def __init__(self, codes, Z, n_classes):
        self.codes, self.Z, self.n_classes = codes, Z, n_classes

    def gram(self):
        return gram_sum(self.Z)

    def step(self, theta, hessians):
        return step_sums(self.codes, self.Z, theta, self.n_classes, hessians)
