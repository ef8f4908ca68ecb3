"""The exact minimiser of a regularised ERM objective, to a gradient-norm tolerance.

Objective and output perturbation (Chaudhuri, Monteleoni and Sarwate 2011) are
private only for the exact minimiser: :func:`minimise` either returns a point
whose gradient norm is at most ``tol`` or raises
:class:`~sklearn_labeldp.exceptions.ConvergenceError`. ``max_iter`` and
``tol`` of the estimators are this optimiser's and nothing else's. The
estimators call it inside their release, whose seal turns that error into a
:class:`~sklearn_labeldp.exceptions.ReleaseError` with a fixed message: whether
and how the optimiser fails depends on the labels.
"""

import math

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.linalg.blas import ssyrk
from scipy.optimize import minimize
from sklearn.utils.extmath import safe_sparse_dot
from threadpoolctl import threadpool_limits

from ..exceptions import ConvergenceError

# Newton's method forms a d x d Hessian per step (n d^2 flops); above this d, L-BFGS.
_NEWTON_MAX_DIM = 500


def factor_preconditioner(hessian):
    """Cholesky factor of the Newton matrix, lifted off the PSD boundary if needed.

    A Hessian formed in single precision can have eigenvalues of about
    ``-d * eps32 * max(diag)`` where the exact one is singular (collinear
    columns such as one-hot blocks plus the intercept) and ``reg`` is smaller
    than that. The matrix only steers the steps, so adding that rounding level
    to the diagonal keeps the method a descent method and changes nothing about
    the minimiser it converges to.

    Parameters
    ----------
    hessian : ndarray of shape (d, d)
        Symmetric; only the upper triangle is read.

    Returns
    -------
    tuple
        The factor in :func:`scipy.linalg.cho_factor`'s form (upper).
    """
    try:
        return cho_factor(hessian, lower=False, check_finite=False)
    except LinAlgError:
        d = hessian.shape[0]
        lifted = hessian.copy()
        lifted.flat[:: d + 1] += d * np.finfo(np.float32).eps * np.abs(hessian.diagonal()).max()
        return cho_factor(lifted, lower=False, check_finite=False)


def damped_newton(fun, loss, Z, reg, tol, max_iter):
    """Damped Newton (Armijo backtracking) from 0 until ``||grad|| <= tol``.

    For the logistic loss (smooth, ``l'' > 0``) a handful of steps reach
    ``||grad|| <= tol``, against tens of L-BFGS iterations that each read ``Z``
    twice; the Hessian ``Z^T diag(l''/n) Z + reg I`` (one pass over ``Z``) is
    positive definite, so every step is a descent direction.

    Parameters
    ----------
    fun : callable
        ``fun(f, with_margins=True)`` returns the objective, its gradient and
        the margins ``signs * Z f``.
    loss : LogisticLoss
    Z : {ndarray, sparse matrix} of shape (n_samples, d)
    reg : float
        The ridge of the objective (added to the Hessian).
    tol : float
    max_iter : int

    Returns
    -------
    f : ndarray of shape (d,)
    n_iter : int
    """
    n, d = Z.shape
    # The Hessian only steers the steps (convergence is decided by the float64 gradient),
    # so it is formed in single precision: half the memory traffic, twice the flop rate.
    Z32 = None if sp.issparse(Z) else np.asarray(Z, dtype=np.float32)
    f = np.zeros(d)
    value, grad, margins = fun(f, with_margins=True)
    for it in range(max_iter + 1):
        if np.linalg.norm(grad) <= tol:
            return f, it
        if it == max_iter:
            break
        weights = loss.second_derivative(margins) / n
        if Z32 is None:
            hessian = np.asarray((Z.T @ sp.diags(weights) @ Z).todense())
        else:
            scaled = Z32 * np.sqrt(weights, dtype=np.float32)[:, None]
            # Upper triangle of scaled^T scaled (the lower one is not read below).
            hessian = ssyrk(1.0, scaled.T).astype(np.float64)
        hessian.flat[:: d + 1] += reg
        step = cho_solve(factor_preconditioner(hessian), grad, check_finite=False)
        slope, t = float(grad @ step), 1.0
        while True:
            candidate = f - t * step
            new_value, new_grad, new_margins = fun(candidate, with_margins=True)
            if new_value <= value - 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        f, value, grad, margins = candidate, new_value, new_grad, new_margins
    return f, max_iter


def minimise(loss, Z, signs, reg, linear, tol, max_iter, *, exact=True):
    """Minimise ``mean(l(signs * Z f)) + reg/2 ||f||^2 + linear.f`` to ``||grad|| <= tol``.

    Newton's method for the logistic loss in moderate dimension (at most 500
    columns), L-BFGS otherwise. Either way the result is accepted only when the
    gradient norm is at most ``tol`` (objective and output perturbation need
    the exact minimiser).

    Parameters
    ----------
    loss : LogisticLoss or HuberHingeLoss
    Z : {ndarray, sparse matrix} of shape (n_samples, d)
    signs : ndarray of shape (n_samples,)
        The binary labels in ``{-1, +1}``.
    reg : float
    linear : ndarray of shape (d,)
    tol : float
        Gradient-norm tolerance.
    max_iter : int
        Iterations allowed.
    exact : bool, default=True
        Raise when ``max_iter`` iterations do not reach the tolerance (the
        privacy of objective and output perturbation needs the exact
        minimiser); ``False`` returns the last iterate (post-processing of a
        release, where any iterate is as private).

    Returns
    -------
    f : ndarray of shape (d,)
    n_iter : int
        Iterations run (a function of the labels: never released).

    Raises
    ------
    ConvergenceError
        When ``exact`` and ``max_iter`` iterations do not reach ``||grad|| <= tol``. Its
        text names ``tol`` and ``max_iter`` only.
    """
    n, d = Z.shape

    def fun(f, with_margins=False):
        margins = signs * np.asarray(Z @ f)
        value = loss.value(margins).mean() + 0.5 * reg * f @ f + linear @ f
        grad = np.asarray(safe_sparse_dot(Z.T, signs * loss.derivative(margins))) / n
        grad += reg * f + linear
        return (value, grad, margins) if with_margins else (value, grad)

    if getattr(loss, "newton", False) and d <= _NEWTON_MAX_DIM:
        # One BLAS thread: on a shared small machine, threaded d x d products and
        # memory-bound matrix-vector products lose more to contention than they gain.
        with threadpool_limits(limits=1, user_api="blas"):
            f, n_iter = damped_newton(fun, loss, Z, reg, tol, max_iter)
        if exact:
            _check_converged(float(np.linalg.norm(fun(f)[1])), tol, max_iter)
        return f, n_iter

    # L-BFGS-B's internal BLAS calls are on tiny arrays, where thread start-up costs
    # milliseconds per iteration; the matrix-vector products are memory-bound anyway.
    with threadpool_limits(limits=1, user_api="blas"):
        result = minimize(
            fun,
            np.zeros(d),
            jac=True,
            method="L-BFGS-B",
            # The test is ||grad||_2 <= tol; L-BFGS-B's is on the max-norm.
            options={"maxiter": max_iter, "gtol": tol / math.sqrt(d), "ftol": 0.0, "maxcor": 20},
        )
    if exact:
        _check_converged(float(np.linalg.norm(fun(result.x)[1])), tol, max_iter)
    return result.x, int(result.nit)


def _check_converged(grad_norm, tol, max_iter):
    # The text holds public parameters only. The final gradient norm and the
    # optimiser's own message are functions of the labels (matching the norm
    # against the two candidate values of one unknown label recovers it), and
    # this runs inside the release anyway, whose seal replaces the exception.
    if not grad_norm <= tol:
        raise ConvergenceError(
            f"the minimiser was not found to the gradient-norm tolerance tol={tol:g} within "
            f"max_iter={max_iter} iterations. The privacy guarantee of objective and output "
            "perturbation holds only for the exact minimiser, so no model is returned: "
            "increase max_iter (or C smaller / tol larger)."
        )
