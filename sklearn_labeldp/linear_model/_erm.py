"""Private ERM for linear classifiers: DPLogisticRegression and DPLinearSVC.

Objective and output perturbation (Chaudhuri, Monteleoni and Sarwate 2011)
for any loss with ``|l'| <= 1`` and ``|l''| <= c``, and, for the logistic
loss, DP-Newton and DP-FC (Mehta, Krichene, Thakurta, Kurakin and Cutkosky
2023).

The whole private training of every binary problem is one function of the
label codes (:func:`perturbed_erm` or
:func:`~sklearn_labeldp.linear_model._newton.noisy_second_order_logistic`),
which the estimators call only through ``PrivateLabels.release``.

Feature map (public, label-independent). With ``R = data_norm`` (by default
``"auto"``, the largest row norm of the training ``X``: free under label DP,
where the features are public, and warned about under full DP), each row
``x`` is first clipped to norm ``R`` (rows inside the ball are unchanged, rows
outside are scaled down to it by their own norm), then mapped to

- ``z = x / R`` without intercept, and
- ``z = [x / R, 1] / sqrt(2)`` with ``fit_intercept=True``: the intercept is
  an extra constant feature and the whole vector stays inside the unit ball.

A model ``f`` on ``z`` is reported in the raw feature space as
``coef_ = f[:p] / (R sqrt(2))`` and ``intercept_ = f[p] / sqrt(2)`` (without
the ``sqrt(2)`` when there is no intercept), so that ``decision_function(X) =
X @ coef_.T + intercept_`` as in scikit-learn. Predictions do not clip: a row
with norm above ``R`` is scored with the same coefficients. The intercept is
regularised like every other coordinate of ``f``.

Regularisation. ``C`` means what it means for scikit-learn's
``LogisticRegression(C, solver="liblinear", intercept_scaling=1)`` on ``x /
R``: the penalty is ``||w||^2 / (2 C n)`` per example on the coefficients ``w``
of ``[x / R, 1]`` (intercept included, as liblinear does). With ``f = sqrt(2)
w`` on ``z`` this is ``Lambda = 1 / (2 C n)`` in ``J``, the ``Lambda`` that
the privacy analysis uses (``1 / (C n)`` without intercept).
"""

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.linalg.blas import ssyrk
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from .._base import BaseLabelDPClassifier, DecisionFunctionPredictMixin
from ..accounting import PrivacySpend, approx_dp_to_zcdp
from ..exceptions import ConvergenceError
from ._newton import newton_fc_noise_multiplier, noisy_second_order_logistic, second_order_plan
from ._preprocessing import clipped_design, plan_row_bound

__all__ = [
    "DPLinearSVC",
    "DPLogisticRegression",
    "HuberHingeLoss",
    "LogisticLoss",
    "neighbour_bounds",
    "objective_perturbation_params",
    "output_perturbation_beta",
    "perturbed_erm",
    "sample_l2_gamma_noise",
]



# ---------------------------------------------------------------------------
# Losses of the margin m = y f.x, y in {-1, +1}: |l'| <= 1 and 0 <= l'' <= c.
# ---------------------------------------------------------------------------


class LogisticLoss:
    """``l(m) = log(1 + exp(-m))``; ``c = 1/4``.

    ``y l'(y m) = sigmoid(m) - [y = 1]``: flipping a label changes the
    per-example gradient ``y l'(y f.x) x`` by exactly ``x`` (norm <= 1, not 2);
    ``l''(m) = sigmoid(m) sigmoid(-m)`` is even, so a flip leaves the loss
    Hessian unchanged (see :func:`neighbour_bounds`).
    """

    c = 0.25
    even_curvature = True
    newton = True  # smooth with l'' > 0: minimised by Newton's method
    label_gradient_sensitivity = 1.0

    def value(self, m):
        return -log_expit(m)

    def derivative(self, m):
        return -expit(-m)

    def second_derivative(self, m):
        return expit(m) * expit(-m)


class HuberHingeLoss:
    """Huber hinge of width ``h`` (Chaudhuri et al. 2011, eq. 7); ``c = 1 / (2h)``.

    ``0`` for ``m > 1 + h``, ``(1 + h - m)^2 / (4h)`` for ``|1 - m| <= h`` and
    ``1 - m`` for ``m < 1 - h``.
    """

    even_curvature = False  # l'' is symmetric about m = 1, not about 0
    # |l'(m) + l'(-m)| reaches 2 (both -1 at m = 0 when h <= 1): no gain from label DP.
    label_gradient_sensitivity = 2.0

    def __init__(self, width):
        self.width = float(width)
        self.c = 1.0 / (2.0 * self.width)

    def value(self, m):
        h = self.width
        return np.where(m > 1 + h, 0.0, np.where(m < 1 - h, 1.0 - m, (1 + h - m) ** 2 / (4 * h)))

    def derivative(self, m):
        h = self.width
        return -np.clip((1 + h - m) / (2 * h), 0.0, 1.0)

    def second_derivative(self, m):
        return np.where(np.abs(1.0 - m) <= self.width, self.c, 0.0)


# ---------------------------------------------------------------------------
# The mechanisms' parameters and noise.
# ---------------------------------------------------------------------------


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

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.linear_model._erm import sample_l2_gamma_noise
    >>> sample_l2_gamma_noise(3, 0.5, np.random.default_rng(0)).shape
    (3,)
    """
    direction = random_state.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    return random_state.gamma(dim, scale) * direction


def output_perturbation_beta(epsilon, n_samples, reg, gradient_sensitivity=2.0):
    """``beta = n Lambda eps / g``: the noise density is ``exp(-beta ||b||)``.

    The minimiser of ``J`` has L2 sensitivity ``g / (n Lambda)`` when the
    per-example gradient ``y l'(y f.x) x`` changes by at most ``g`` in norm
    (Chaudhuri et al. 2011, Corollary 8: ``g = 2`` for ``|l'| <= 1``,
    ``||x|| <= 1``; ``g`` from :func:`neighbour_bounds`).
    """
    return n_samples * reg * epsilon / gradient_sensitivity


def objective_perturbation_params(epsilon, n_samples, reg, c, *, hessian_rank=2):
    """``(eps', Delta)`` of objective perturbation (Chaudhuri et al. 2011, Alg. 2, amended).

    The proof of Theorem 9 of the paper bounds the ratio of the densities of
    the output under neighbouring data sets by ``e^eps'`` (the noise ``b``,
    density proportional to ``exp(-(eps'/g) ||b||)``, absorbs a per-example
    gradient change of norm <= ``g``; the paper's ``g = 2`` gives its
    ``exp(-(eps'/2) ||b||)``; see :func:`neighbour_bounds`) times the ratio of
    the Jacobian determinants of the map from ``b`` to the minimiser, ``det(A
    + E) / det(A)`` with ``A >= n (Lambda + Delta) I`` and ``E`` the change of
    the loss Hessian ``sum_i l''(y_i f.x_i) x_i x_i^T``. With ``r =
    hessian_rank`` the rank of ``E`` and each of its eigenvalues in ``[-c,
    c]``, that ratio is at most ``(1 + c / (n (Lambda + Delta)))^r``, so for
    any ``Delta >= 0`` fixed by public quantities

        eps' = eps - r log(1 + c / (n (Lambda + Delta)))

    gives eps-DP when ``eps' > 0``:

    - ``r = 2``: substitution of one whole example (the paper's setting:
      ``(1 + c/(n Lambda))^2 = 1 + 2c/(n Lambda) + c^2/(n Lambda)^2``);
    - ``r = 1``: a label change; ``x`` stays, so ``E = (l''(-m) - l''(m)) x
      x^T`` has rank 1;
    - ``r = 0``: a label change under a loss with an even ``l''`` (the
      logistic loss): ``E = 0`` and ``eps' = eps``, ``Delta = 0``.

    Branch (``r > 0``): ``Delta = 0`` and ``eps' = eps'(0)`` when ``eps'(0) >=
    eps / 2``; otherwise ``Delta = c / (n (e^(eps/(2r)) - 1)) - Lambda`` (> 0),
    for which ``r log(1 + c / (n (Lambda + Delta))) = eps / 2``, so ``eps' =
    eps / 2``. With ``r = 2`` this is the paper's ``e^(eps/4)``. The paper's
    Algorithm 2 switches at ``eps'(0) > 0`` instead, so that just above 0 it
    keeps almost no budget for the noise (e.g. full DP on Adult at eps = 0.1,
    ``C = 0.1``: ``eps' = 0.0024``) where this rule keeps ``eps / 2``. Both are
    eps-DP for any ``Delta`` fixed by public quantities, and this rule's
    ``eps'`` is never smaller: the two agree when ``eps'(0) >= eps / 2`` or
    ``eps'(0) <= 0``, and in between this one has ``eps / 2 > eps'(0)``.
    ``Delta`` depends on ``(eps, n, Lambda, c, r)`` only, never on the data.

    Parameters
    ----------
    epsilon : float
    n_samples : int
    reg : float
        ``Lambda``.
    c : float
        Bound on ``l''``.
    hessian_rank : {0, 1, 2}, default=2
        ``r`` above.

    Returns
    -------
    eps_prime : float
    extra_reg : float
        ``Delta``.

    Examples
    --------
    >>> from sklearn_labeldp.linear_model._erm import objective_perturbation_params
    >>> objective_perturbation_params(1.0, 100, 0.01, 0.25)  # eps' = 1 - 2 log(1.25)
    (0.5537..., 0.0)
    >>> objective_perturbation_params(1.0, 100, 0.01, 0.25, hessian_rank=0)
    (1.0, 0.0)
    >>> objective_perturbation_params(1.0, 100, 0.005, 0.25)  # eps'(0) = 0.189 < eps / 2
    (0.5, 0.0038020...)
    """
    if hessian_rank == 0:
        return float(epsilon), 0.0
    jacobian = hessian_rank * math.log1p(c / (n_samples * reg))  # eps - eps'(0)
    if jacobian <= epsilon / 2.0:
        return epsilon - jacobian, 0.0
    # c / (n Lambda) > e^(eps/(2r)) - 1 here, so Delta > 0 (the clamp only absorbs a
    # rounding error at the boundary) and the exponent is small (no overflow).
    extra = c / (n_samples * math.expm1(epsilon / (2.0 * hessian_rank))) - reg
    return epsilon / 2.0, max(extra, 0.0)


# ---------------------------------------------------------------------------
# The exact minimiser and the private training function.
# ---------------------------------------------------------------------------


# Newton's method forms a d x d Hessian per step (n d^2 flops); above this d, L-BFGS.
_NEWTON_MAX_DIM = 500


def _factor_preconditioner(hessian):
    """Cholesky factor of the Newton matrix, lifted off the PSD boundary if needed.

    A Hessian formed in single precision can have eigenvalues of about
    ``-d * eps32 * max(diag)`` where the exact one is singular (collinear
    columns such as one-hot blocks plus the intercept) and ``reg`` is smaller
    than that. The matrix only steers the steps, so adding that rounding level
    to the diagonal keeps the method a descent method and changes nothing about
    the minimiser it converges to.
    """
    try:
        return cho_factor(hessian, lower=False, check_finite=False)
    except LinAlgError:
        d = hessian.shape[0]
        lifted = hessian.copy()
        lifted.flat[:: d + 1] += d * np.finfo(np.float32).eps * np.abs(hessian.diagonal()).max()
        return cho_factor(lifted, lower=False, check_finite=False)


def _newton(fun, loss, Z, signs, reg, tol, max_iter):
    """Damped Newton (Armijo backtracking) from 0; ``(f, n_iter, message)``.

    For the logistic loss (smooth, ``l'' > 0``) a handful of steps reach
    ``||grad|| <= tol``, against tens of L-BFGS iterations that each read ``Z``
    twice; the Hessian ``Z^T diag(l''/n) Z + reg I`` (one pass over ``Z``) is
    positive definite, so every step is a descent direction.
    """
    n, d = Z.shape
    # The Hessian only steers the steps (convergence is decided by the float64 gradient),
    # so it is formed in single precision: half the memory traffic, twice the flop rate.
    Z32 = None if sp.issparse(Z) else np.asarray(Z, dtype=np.float32)
    f = np.zeros(d)
    value, grad, margins = fun(f, with_margins=True)
    for it in range(max_iter + 1):
        if np.linalg.norm(grad) <= tol:
            return f, it, "Newton: ||grad|| <= tol"
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
        step = cho_solve(_factor_preconditioner(hessian), grad, check_finite=False)
        slope, t = float(grad @ step), 1.0
        while True:
            candidate = f - t * step
            new_value, new_grad, new_margins = fun(candidate, with_margins=True)
            if new_value <= value - 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        f, value, grad, margins = candidate, new_value, new_grad, new_margins
    return f, max_iter, "Newton: max_iter reached"


def _minimise(loss, Z, signs, reg, linear, tol, max_iter):
    """Minimise ``mean(l(signs * Z f)) + reg/2 ||f||^2 + linear.f`` to ``||grad|| <= tol``.

    Newton's method for the logistic loss in moderate dimension, L-BFGS otherwise.
    Either way the result is accepted only when the gradient norm is at most
    ``tol`` (objective and output perturbation need the exact minimiser).
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
            f, n_iter, message = _newton(fun, loss, Z, signs, reg, tol, max_iter)
        _check_converged(float(np.linalg.norm(fun(f)[1])), tol, max_iter, message)
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
    _check_converged(float(np.linalg.norm(fun(result.x)[1])), tol, max_iter, result.message)
    return result.x, int(result.nit)


def _check_converged(grad_norm, tol, max_iter, message):
    if not grad_norm <= tol:
        raise ConvergenceError(
            f"the minimiser was not found to the gradient-norm tolerance tol={tol:g} within "
            f"max_iter={max_iter} iterations (final ||grad|| = {grad_norm:.3g}; optimiser: "
            f"{message}). The privacy guarantee of objective and output "
            "perturbation holds only for the exact minimiser, so no model is returned: "
            "increase max_iter (or C smaller / tol larger)."
        )


def neighbour_bounds(loss, privacy):
    """``(g, r)``: how much one example's terms can change between neighbours.

    ``g`` bounds the norm of the change of the per-example gradient ``y
    l'(y f.x) x`` and ``r`` the rank of the change of the loss Hessian ``l''(y
    f.x) x x^T`` (eigenvalues in ``[-c, c]``), with ``||x|| <= 1``:

    - ``privacy="full"`` (substitution of ``(x, y)``): ``g = 2``, ``r = 2``
      (Chaudhuri et al. 2011);
    - ``privacy="label"`` (``x`` fixed, ``y -> -y`` in each affected binary
      problem): ``g = sup_m |l'(m) + l'(-m)|``, which is 1 for the logistic loss
      (its residual ``sigmoid(m) - [y = 1]`` moves by exactly 1) and 2 for the
      Huber hinge; ``r = 1`` (``(l''(-m) - l''(m)) x x^T``), or 0 when ``l''`` is
      even (logistic).

    Examples
    --------
    >>> from sklearn_labeldp.linear_model._erm import (
    ...     HuberHingeLoss, LogisticLoss, neighbour_bounds)
    >>> neighbour_bounds(LogisticLoss(), "label"), neighbour_bounds(LogisticLoss(), "full")
    ((1.0, 0), (2.0, 2))
    >>> neighbour_bounds(HuberHingeLoss(0.5), "label")
    (2.0, 1)
    """
    if privacy == "full":
        return 2.0, 2
    return loss.label_gradient_sensitivity, (0 if loss.even_curvature else 1)


def perturbed_erm(
    codes, *, Z, n_classes, loss, solver, epsilon_problem, reg, tol, max_iter, random_state,
    gradient_sensitivity=2.0, hessian_rank=2,
):
    """One-vs-rest private ERM: objective or output perturbation of each binary problem.

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
    epsilon_problem : float
        Epsilon of each binary problem.
    reg : float
        ``Lambda``.
    tol, max_iter
        Of the minimiser; :class:`ConvergenceError` when not met.
    random_state : numpy.random.Generator
    gradient_sensitivity : float, default=2.0
    hessian_rank : {0, 1, 2}, default=2
        ``(g, r)`` of :func:`neighbour_bounds`; the defaults are the paper's
        (whole examples). Objective perturbation draws ``b`` with density
        proportional to ``exp(-(eps'/g) ||b||)``, output perturbation uses
        ``beta = n Lambda eps / g``.

    Returns
    -------
    coef : ndarray of shape (n_problems, d)
        Only the coefficients: the optimiser's iteration count depends on the
        labels and is not covered by the guarantee, so it is not released.
    """
    n, d = Z.shape
    positives = [1] if n_classes == 2 else range(n_classes)
    coef = np.zeros((len(positives), d))
    for row, positive in enumerate(positives):
        signs = np.where(codes == positive, 1.0, -1.0)
        if solver == "objective":
            eps_prime, extra = objective_perturbation_params(
                epsilon_problem, n, reg, loss.c, hessian_rank=hessian_rank
            )
            b = sample_l2_gamma_noise(d, gradient_sensitivity / eps_prime, random_state)
            coef[row], _ = _minimise(loss, Z, signs, reg + extra, b / n, tol, max_iter)
        else:
            f, _ = _minimise(loss, Z, signs, reg, np.zeros(d), tol, max_iter)
            beta = output_perturbation_beta(epsilon_problem, n, reg, gradient_sensitivity)
            coef[row] = f + sample_l2_gamma_noise(d, 1.0 / beta, random_state)
    return coef


# ---------------------------------------------------------------------------
# Estimators.
# ---------------------------------------------------------------------------


def _feature_map(X, data_norm, fit_intercept):
    """``z = [clip(x) / R, 1] / sqrt(2)``, or ``clip(x) / R`` without intercept (module doc)."""
    scale = 1.0 / (data_norm * math.sqrt(2.0)) if fit_intercept else 1.0 / data_norm
    return clipped_design(X, data_norm, intercept=fit_intercept, scale=scale)


class _BasePrivateERM(DecisionFunctionPredictMixin, BaseLabelDPClassifier):
    """Shared fit, split of the budget and predictions of the private linear models."""

    _parameter_constraints: dict = {
        **BaseLabelDPClassifier._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "data_norm": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "privacy": [StrOptions({"label", "full"})],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    _delta = 0.0  # pure-DP solvers; DPLogisticRegression reads its parameter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _plan_fit(self, X, classes, rng):
        # Every check and choice here reads public information only (X, n, the
        # parameters): a configuration error costs no budget, and the bound, Lambda
        # and Delta are fixed before any label is read.
        if self.solver in ("objective", "output"):
            if self._delta != 0:
                raise ValueError(
                    f"solver={self.solver!r} is pure epsilon-DP: delta must be 0.0; got "
                    f"{self._delta!r}. delta applies to solver='newton' or 'fc'."
                )
        elif not 0 < self._delta < 1:
            raise ValueError(
                f"solver={self.solver!r} is (epsilon, delta)-DP through zCDP: delta must lie "
                f"in (0, 1); got {self._delta!r}."
            )
        n = X.shape[0]
        # Lambda on z = [x / R, 1] / sqrt(2) such that the penalty on the coefficients of
        # [x / R, 1] is scikit-learn's ||w||^2 / (2 C n) (module docstring).
        reg = 1.0 / (self.C * n * (2.0 if self.fit_intercept else 1.0))
        spend, params = self._plan_mechanism(n, classes.size, reg)
        data_norm, bound_attributes = plan_row_bound(
            X, self.data_norm, privacy=self.privacy, name="data_norm"
        )
        plan = {"mechanism": params, "data_norm": data_norm, "bound_attributes": bound_attributes}
        return spend, plan

    def _plan_mechanism(self, n, n_classes, reg):
        """The privacy spend and the public parameters of objective or output perturbation."""
        n_problems = 1 if n_classes == 2 else n_classes
        # A label change flips the binary labels of 2 of the K problems; a whole
        # example (features too) enters all of them. One problem when K = 2.
        share = 1 if n_problems == 1 else (2 if self.privacy == "label" else n_problems)
        eps_problem = self.epsilon / share
        loss = self._loss()
        sens, rank = neighbour_bounds(loss, self.privacy)
        params = dict(
            solver=self.solver, privacy=self.privacy, n_problems=n_problems,
            epsilon_per_problem=eps_problem, regularization=reg,
            gradient_sensitivity=sens, hessian_rank=rank,
        )
        if self.solver == "objective":
            eps_prime, extra = objective_perturbation_params(
                eps_problem, n, reg, loss.c, hessian_rank=rank
            )
            params.update(epsilon_prime=eps_prime, extra_regularization=extra, c=loss.c,
                          noise_scale=sens / eps_prime)
            name = "objective perturbation"
        else:
            params.update(beta=output_perturbation_beta(eps_problem, n, reg, sens))
            name = "output perturbation"
        return PrivacySpend.leaf(f"ERM {name}", self.epsilon, **params), params

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        params = plan["mechanism"]
        coef = labels.release(
            perturbed_erm,
            np.arange(labels.n_samples),
            Z=_feature_map(X, plan["data_norm"], self.fit_intercept),
            n_classes=labels.n_classes,
            loss=self._loss(),
            solver=params["solver"],
            epsilon_problem=params["epsilon_per_problem"],
            reg=params["regularization"],
            gradient_sensitivity=params["gradient_sensitivity"],
            hessian_rank=params["hessian_rank"],
            tol=self.tol,
            max_iter=1000 if self.max_iter is None else self.max_iter,
            random_state=mechanism_rng,
        )
        return self._fitted(coef, plan)

    def _fitted(self, coef, plan):
        """The fitted attributes from the coefficients on ``z`` and the public plan.

        ``coef_`` and ``intercept_`` are reported on the raw features.
        """
        data_norm = plan["data_norm"]
        if self.fit_intercept:
            coef = coef / math.sqrt(2.0)
            mapped = {"coef_": coef[:, :-1] / data_norm, "intercept_": coef[:, -1].copy()}
        else:
            mapped = {"coef_": coef / data_norm, "intercept_": np.zeros(coef.shape[0])}
        return {**mapped, "perturbation_": plan["mechanism"], **plan["bound_attributes"]}

    def decision_function(self, X):
        """Signed scores ``X @ coef_.T + intercept_`` (rows are not clipped).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        scores = np.asarray(safe_sparse_dot(X, self.coef_.T)) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores


_COMMON_DOC = """
    Private ERM minimises ``J(f) = (1/n) sum_i l(y_i f.z_i) + (Lambda/2) ||f||^2``
    over features ``z`` in the unit ball, with ``Lambda = 1 / (2 C n)`` (``1 /
    (C n)`` without intercept): at ``epsilon -> inf`` the model is the
    minimiser of scikit-learn's ``C sum_i l(y_i w.u_i) + ||w||^2 / 2`` on ``u =
    [x / data_norm, 1]``, i.e. ``LogisticRegression(C, solver="liblinear",
    intercept_scaling=1)`` on ``x / data_norm``, whose intercept is regularised
    like here. Feature map: rows are clipped to ``data_norm`` (each row by its
    own norm, never rescaled by an amount computed from other rows), divided
    by ``data_norm``, and with ``fit_intercept`` extended by a constant 1 and
    divided by ``sqrt(2)``; ``coef_`` and ``intercept_`` are mapped back to the
    raw features (see the module docstring of ``_erm``).

    Row-norm bound. ``data_norm="auto"`` (the default) takes the largest L2
    row norm of the training ``X``, so no row is clipped. Under label DP the
    features are public and this costs no privacy; ``clipped_fraction_``
    reports the share of rows clipped by a given bound, and a
    :class:`~sklearn_labeldp.linear_model.RowClippingWarning` is issued above
    5% (clipped rows lose their length, which usually costs accuracy). Under
    ``privacy="full"`` the features are private: ``"auto"`` still reads them
    but warns with a :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`
    (pass a public bound), and the clipped share, a statistic of the private
    features, is neither set as an attribute nor put in a warning.

    One-vs-rest: two classes give one binary problem (positive class
    ``classes_[1]``) with the whole epsilon. With ``K > 2`` classes there are K
    problems; under label DP a label change alters the binary labels of 2 of
    them, so each runs with ``epsilon / 2``; under full DP a whole example
    enters all K, so each runs with ``epsilon / K``. The analyses of
    objective and output perturbation (Chaudhuri et al. 2011) are for the
    substitution of one example ``(x, y)``; a label change is a special case
    with smaller bounds (``g`` and ``r`` below: :func:`neighbour_bounds`), which
    the label-DP mechanisms use, each proved by the paper's argument.

    - ``"objective"``: ``b`` has density proportional to ``exp(-(eps'/g)
      ||b||)`` and ``J(f) + b.f / n + (Delta/2) ||f||^2`` is minimised, with
      ``eps' = eps - r log(1 + c/(n (Lambda + Delta)))``. ``r`` bounds the rank
      of the change of the loss Hessian between neighbours: 2 under full DP
      (the paper's ``log(1 + 2c/(n Lambda) + c^2/(n Lambda)^2)``), 1 under label
      DP (``x`` does not change), 0 for the logistic loss under label DP (its
      ``l''`` is even, so a label flip leaves the Hessian unchanged: ``eps' =
      eps``). Branch: ``Delta = 0`` when that ``eps' >= eps / 2``, else
      ``Delta = c / (n (e^(eps/(2r)) - 1)) - Lambda`` and ``eps' = eps / 2``,
      an amendment of the paper's rule (which switches at ``eps' > 0``) that is
      equally private and never leaves less budget for the noise (see
      :func:`objective_perturbation_params`). ``g`` bounds the change of
      one example's gradient ``y l'(y f.z) z``: 2 (the paper's) except for the
      logistic loss under label DP, where the residual ``sigmoid(f.z) - [y =
      1]`` moves by exactly 1 when the label flips, so ``g = 1``.
    - ``"output"``: the exact minimiser of ``J`` plus ``b`` with density
      proportional to ``exp(-beta ||b||)``, ``beta = n Lambda eps / g`` (the
      minimiser moves by at most ``g / (n Lambda)``).

    Both guarantees need the exact minimiser. The fit runs Newton's method
    (logistic loss, at most 500 mapped features) or L-BFGS until the
    gradient norm of the minimised objective is at most ``tol`` and raises
    :class:`ConvergenceError` when ``max_iter`` iterations do not get there (a
    model from an inexact minimiser would carry no guarantee). Whether the
    optimiser converged depends on the labels, so the error itself is a
    (rare) label-dependent event: choose ``max_iter`` generously. The budget
    is charged before training, also when the fit then fails.
"""


class DPLogisticRegression(_BasePrivateERM):
    """Logistic regression with label DP (or full DP): private ERM, DP-Newton or DP-FC.
    {common}
    - ``"newton"`` and ``"fc"`` (Mehta et al. 2023; zCDP, need ``delta`` in (0, 1)):
      ``T = max_iter`` full-batch steps from 0 of all the binary problems at
      once, with Gaussian noise of std ``s * sensitivity / n`` on each released
      sum. ``rho`` is the largest zCDP parameter that converts to
      ``(epsilon, delta)``; under label DP only the gradients read the labels
      (L2 sensitivity ``sqrt(2)`` for K > 2, 1 for K = 2), so ``rho =
      T / (2 s^2)``; under full DP (add/remove one example, as in Mehta et al.)
      the gradient (sensitivity ``sqrt(m)``) and, for Newton, each Hessian
      (``sqrt(m) / 4``) or, for FC, the Gram matrix once (1) are noised:
      ``rho = T / s^2`` (Newton) or ``(T + 1) / (2 s^2)`` (FC). Newton steps by
      the (noisy, PSD-projected) Hessian plus ``Lambda I``; FC by
      ``G / (4n) + Lambda I``, the logistic loss's fixed curvature bound. The
      noisy matrices get symmetric noise ``(E + E^T) / 2`` with ``E`` iid, the
      symmetrised release of ``M + E`` (std ``s * sensitivity / n`` on the
      diagonal, ``1 / sqrt(2)`` of it off the diagonal).
      ``tol`` is not used by these solvers.

    Parameters
    ----------
    epsilon : float, default=1.0
        Label-DP epsilon of the fit (full DP with ``privacy="full"``).
    delta : float, default=0.0
        Must be 0 for ``"objective"`` and ``"output"`` (pure DP); in (0, 1) for
        ``"newton"`` and ``"fc"``.
    C : float, default=1.0
        Inverse regularisation strength, scikit-learn's (see above): ``Lambda =
        1 / (2 C n)`` on ``z``, ``1 / (C n)`` without intercept.
    data_norm : float or "auto", default="auto"
        Bound on the L2 row norms; rows above it are clipped to it. ``"auto"``:
        the largest row norm of the training ``X`` (1 if every row is zero),
        free under label DP; under ``privacy="full"`` give a public bound
        (``"auto"`` then warns, see above).
    solver : {{"objective", "output", "newton", "fc"}}, default="objective"
    privacy : {{"label", "full"}}, default="label"
        ``"label"``: neighbouring datasets differ in one label. ``"full"``:
        they differ in one whole example (substitution for objective/output,
        add/remove for newton/fc); a full-DP fit is also label-DP.
    fit_intercept : bool, default=True
        Fit an intercept as a constant feature inside the norm bound (it is
        regularised).
    max_iter : int, default=None
        Optimiser iterations allowed for objective/output (``None``: 1000); the
        number of steps ``T`` for newton/fc (``None``: 10).
    tol : float, default=1e-6
        Gradient-norm tolerance of the exact minimiser (objective/output).
    classes : array-like, default=None
        All possible labels; ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism. ``None`` draws 128 bits of fresh
        operating-system entropy for every fit, and nothing derived from it
        is kept on the fitted model. ``"secure"`` does the same with an AES
        counter-mode generator (``pip install 'sklearn-labeldp[secure]'``).
        An int, ``RandomState`` or ``Generator`` is a replay key: the model
        keeps it, and whoever knows it and the features can replay the noise
        and recover the labels, so pickling such a fitted model warns
        (:class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`).
    accountant : BudgetAccountant, default=None
        Charged with (epsilon, delta) before any label is used.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) for two classes, else (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : int
        ``T``, for the solvers "newton" and "fc" only. Objective and output
        perturbation do not report their optimiser's iteration count: it
        depends on the labels, and the guarantee covers only the coefficients.
    perturbation_ : dict
        Public parameters of the mechanism (epsilon per problem, eps', Delta,
        beta, noise multiplier, rho, ...).
    data_norm_ : float
        The row-norm bound used (``data_norm``, or the largest row norm for
        ``"auto"``).
    clipped_fraction_ : float
        Label DP only: the share of training rows of norm above ``data_norm_``
        (by more than rounding), which were clipped. Not set under
        ``privacy="full"``, where it would be an unprotected statistic of the
        private features.
    epsilon_ : float
    delta_ : float
    privacy_spend_ : PrivacySpend
    n_features_in_ : int

    References
    ----------
    .. [1] K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially private
       empirical risk minimization. JMLR 12, 2011.
    .. [2] H. Mehta, W. Krichene, A. Thakurta, A. Kurakin, A. Cutkosky.
       Differentially private image classification from features. TMLR 2023:
       DP-Newton and DP-FC, full batch, zCDP.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_labeldp.linear_model._erm import DPLogisticRegression
    >>> X, y = make_classification(2000, 5, random_state=0)
    >>> clf = DPLogisticRegression(epsilon=1.0, C=10.0, classes=[0, 1],
    ...                            random_state=0).fit(X, y)
    >>> clf.coef_.shape, bool(clf.score(X, y) > 0.8), clf.clipped_fraction_
    ((1, 5), True, 0.0)
    """

    _parameter_constraints: dict = {
        **_BasePrivateERM._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="left")],
        "solver": [StrOptions({"objective", "output", "newton", "fc"})],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=0.0,
        C=1.0,
        data_norm="auto",
        solver="objective",
        privacy="label",
        fit_intercept=True,
        max_iter=None,
        tol=1e-6,
        classes=None,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.C = C
        self.data_norm = data_norm
        self.solver = solver
        self.privacy = privacy
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    @property
    def _delta(self):
        return self.delta

    def _loss(self):
        return LogisticLoss()

    def _plan_mechanism(self, n, n_classes, reg):
        if self.solver in ("objective", "output"):
            return super()._plan_mechanism(n, n_classes, reg)
        n_iter = 10 if self.max_iter is None else self.max_iter
        rho = approx_dp_to_zcdp(self.epsilon, self.delta)
        if rho <= 0:
            raise ValueError(f"epsilon={self.epsilon!r} is too small for any positive rho.")
        s = newton_fc_noise_multiplier(rho, self.solver, self.privacy, n_iter)
        m, grad_sens, hess_sens, gram_sens = second_order_plan(n_classes, self.privacy)
        params = dict(
            solver=self.solver, privacy=self.privacy, n_problems=m, regularization=reg,
            n_iter=n_iter, noise_multiplier=s, rho=rho,
            gradient_sensitivity=grad_sens, gradient_std=s * grad_sens / n,
        )
        if self.privacy == "full":
            key = "hessian" if self.solver == "newton" else "gram"
            sens = hess_sens if self.solver == "newton" else gram_sens
            params.update({f"{key}_sensitivity": sens, f"{key}_std": s * sens / n})
        name = "DP-Newton" if self.solver == "newton" else "DP-FC"
        return PrivacySpend.leaf(name, self.epsilon, self.delta, **params), params

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        if self.solver in ("objective", "output"):
            return super()._fit_private(X, labels, plan, fit_params, mechanism_rng, estimator_rng)
        params = plan["mechanism"]
        coef = labels.release(
            noisy_second_order_logistic,
            np.arange(labels.n_samples),
            Z=_feature_map(X, plan["data_norm"], self.fit_intercept),
            n_classes=labels.n_classes,
            solver=self.solver,
            privacy=self.privacy,
            n_iter=params["n_iter"],
            noise_multiplier=params["noise_multiplier"],
            reg=params["regularization"],
            random_state=mechanism_rng,
        )
        return {**self._fitted(coef, plan), "n_iter_": params["n_iter"]}

    def predict_proba(self, X):
        """Class probabilities: the sigmoid of the scores, normalised over classes for K > 2.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        p = expit(scores)
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))


DPLogisticRegression.__doc__ = DPLogisticRegression.__doc__.format(common=_COMMON_DOC)


class DPLinearSVC(_BasePrivateERM):
    """Linear SVM (Huber hinge loss) with label DP (or full DP) by private ERM.
    {common}
    The Huber hinge of width ``h`` is ``0`` for ``m > 1 + h``, ``(1 + h -
    m)^2 / (4h)`` for ``|1 - m| <= h`` and ``1 - m`` below; ``|l'| <= 1`` and
    ``l'' <= c = 1 / (2h)``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Pure epsilon-DP (``delta_ = 0``).
    C : float, default=1.0
        Inverse regularisation strength, scikit-learn's (see above): ``Lambda =
        1 / (2 C n)`` on ``z``, ``1 / (C n)`` without intercept.
    huber_width : float, default=0.5
        ``h`` > 0.
    data_norm : float or "auto", default="auto"
        Bound on the L2 row norms; rows above it are clipped to it. ``"auto"``:
        the largest row norm of the training ``X`` (1 if every row is zero),
        free under label DP; under ``privacy="full"`` give a public bound
        (``"auto"`` then warns, see above).
    solver : {{"objective", "output"}}, default="objective"
    privacy : {{"label", "full"}}, default="label"
        ``"full"``: substitution of one whole example.
    fit_intercept : bool, default=True
    max_iter : int, default=None
        L-BFGS iterations allowed (``None``: 1000).
    tol : float, default=1e-6
        Gradient-norm tolerance of the exact minimiser.
    classes : array-like, default=None
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism. ``None`` draws 128 bits of fresh
        operating-system entropy for every fit, and nothing derived from it
        is kept on the fitted model. ``"secure"`` does the same with an AES
        counter-mode generator (``pip install 'sklearn-labeldp[secure]'``).
        An int, ``RandomState`` or ``Generator`` is a replay key: the model
        keeps it, and whoever knows it and the features can replay the noise
        and recover the labels, so pickling such a fitted model warns
        (:class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`).
    accountant : BudgetAccountant, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    perturbation_ : dict
        Public parameters of the mechanism (epsilon per problem, eps', Delta,
        beta).
    data_norm_ : float
        The row-norm bound used (``data_norm``, or the largest row norm for
        ``"auto"``).
    clipped_fraction_ : float
        Label DP only: the share of training rows of norm above ``data_norm_``
        (by more than rounding), which were clipped. Not set under
        ``privacy="full"``, where it would be an unprotected statistic of the
        private features.
    epsilon_ : float
    delta_ : float
    privacy_spend_ : PrivacySpend
    n_features_in_ : int

    References
    ----------
    .. [1] K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially private
       empirical risk minimization. JMLR 12, 2011.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_labeldp.linear_model._erm import DPLinearSVC
    >>> X, y = make_classification(2000, 5, random_state=0)
    >>> clf = DPLinearSVC(epsilon=1.0, C=10.0, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.coef_.shape, bool(clf.score(X, y) > 0.8)
    ((1, 5), True)
    """

    _parameter_constraints: dict = {
        **_BasePrivateERM._parameter_constraints,
        "huber_width": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"objective", "output"})],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        C=1.0,
        huber_width=0.5,
        data_norm="auto",
        solver="objective",
        privacy="label",
        fit_intercept=True,
        max_iter=None,
        tol=1e-6,
        classes=None,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.C = C
        self.huber_width = huber_width
        self.data_norm = data_norm
        self.solver = solver
        self.privacy = privacy
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    def _loss(self):
        return HuberHingeLoss(self.huber_width)


DPLinearSVC.__doc__ = DPLinearSVC.__doc__.format(common=_COMMON_DOC)
