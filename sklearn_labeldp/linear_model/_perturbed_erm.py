"""Objective and output perturbation: one-vs-rest private ERM.

Chaudhuri, Monteleoni and Sarwate (2011), Algorithms 1 (output perturbation)
and 2 (objective perturbation), pure epsilon-DP; with ``delta > 0`` both use
Gaussian noise instead (:func:`gaussian_perturbation_params`), one joint
release of all the one-vs-rest problems calibrated by the Gaussian's exact
privacy profile. The training function :func:`perturbed_erm` takes the label
codes first: the estimators call it only through
``PrivateLabels.release``. Its noise scale and extra regularisation are
calibrated beforehand, from public quantities only, by
:func:`perturbation_params` (below, with the "auto" regularisation and the
whole-example guarantee of the same noise); its noise is
:func:`sample_l2_gamma_noise`'s, and the exact minimiser is
:func:`~sklearn_labeldp.linear_model._minimise.minimise`'s.

Accounting. The ledger's relation is a label change, and both ``privacy``
settings are calibrated for it (:func:`perturbation_params`): with two
classes a label change flips the sign ``y`` of one example's target (same
``z``), which moves its gradient term ``y l'(y f.z) z`` by ``|l'(m) + l'(-m)|
||z|| <= g_label`` (1 logistic, 2 Huber hinge) and its Hessian term by a
rank-``r_label`` matrix (0 logistic, 1 Huber hinge), against ``g = 2``, ``r
= 2`` for substituting a whole example; with ``K > 2`` one-vs-rest problems
a label change moves 2 of them, a whole example all ``K``. The example-level
guarantee of the same noise (:func:`perturbation_example_epsilon`) is
reported beside the label one under ``privacy="full"``.
"""

import math
import warnings

import numpy as np

from ..accounting import calibrate_gaussian_sigma
from ._losses import neighbour_bounds
from ._minimise import minimise
from ._statistics import one_vs_rest_signs


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
    Gamma(d, noise_scale)`` in a uniform direction, one draw per problem; with
    ``params["noise"] == "gaussian"`` (``delta > 0``) ``b ~ N(0, noise_scale^2
    I)`` instead.

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
    if params.get("noise") == "gaussian":
        def draw():
            return random_state.normal(0.0, scale, d)
    else:
        def draw():
            return sample_l2_gamma_noise(d, scale, random_state)
    # Each problem's binary labels in {-1, +1}, from the one-vs-rest targets in {0, 1}.
    all_signs = one_vs_rest_signs(codes, n_classes)
    coef = np.zeros((all_signs.shape[0], d))
    for row, signs in enumerate(all_signs):
        if solver == "objective":
            extra = params["extra_regularization"]
            coef[row], _ = minimise(loss, Z, signs, reg + extra, draw() / n, tol, max_iter)
        else:
            f, _ = minimise(loss, Z, signs, reg, np.zeros(d), tol, max_iter)
            coef[row] = f + draw()
    return coef


# ----------------------------------------------------------------------------- calibration
#
# Public quantities only: (epsilon, n, K, Lambda, the loss's constants).


def output_perturbation_beta(epsilon, n_samples, reg, gradient_sensitivity=2.0):
    """``beta = n Lambda eps / g``: the output noise has density ``exp(-beta ||b||)``.

    The minimiser of ``J`` has L2 sensitivity ``g / (n Lambda)`` when the
    per-example gradient ``y l'(y f.z) z`` changes by at most ``g`` in norm
    (Chaudhuri et al. 2011, Corollary 8: ``g = 2`` for ``|l'| <= 1``,
    ``||z|| <= 1``; ``g`` from
    :func:`~sklearn_labeldp.linear_model._losses.neighbour_bounds`).

    Parameters
    ----------
    epsilon : float
    n_samples : int
    reg : float
        ``Lambda``.
    gradient_sensitivity : float, default=2.0
        ``g``.

    Returns
    -------
    float
    """
    return n_samples * reg * epsilon / gradient_sensitivity


def objective_perturbation_params(epsilon, n_samples, reg, c, *, hessian_rank=2):
    """``(eps', Delta)`` of objective perturbation (Chaudhuri et al. 2011, Alg. 2, amended).

    The proof of Theorem 9 of the paper bounds the ratio of the densities of
    the output under neighbouring data sets by ``e^eps'`` (the noise ``b``,
    density proportional to ``exp(-(eps'/g) ||b||)``, absorbs a per-example
    gradient change of norm <= ``g``; the paper's ``g = 2`` gives its
    ``exp(-(eps'/2) ||b||)``) times the ratio of the Jacobian determinants of
    the map from ``b`` to the minimiser, ``det(A + E) / det(A)`` with ``A >= n
    (Lambda + Delta) I`` and ``E`` the change of the loss Hessian ``sum_i
    l''(y_i f.z_i) z_i z_i^T``. With ``r = hessian_rank`` the rank of ``E`` and
    each of its eigenvalues in ``[-c, c]``, that ratio is at most ``(1 + c / (n
    (Lambda + Delta)))^r``, so for any ``Delta >= 0`` fixed by public
    quantities

        eps' = eps - r log(1 + c / (n (Lambda + Delta)))

    gives eps-DP when ``eps' > 0``:

    - ``r = 2``: substitution of one whole example (the paper's setting:
      ``(1 + c/(n Lambda))^2 = 1 + 2c/(n Lambda) + c^2/(n Lambda)^2``);
    - ``r = 1``: a label change; ``z`` stays, so ``E = (l''(-m) - l''(m)) z
      z^T`` has rank 1;
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


def one_vs_rest_epsilon(epsilon, n_classes):
    """Number of binary problems and the label-change epsilon each runs with.

    Two classes give one problem with the whole epsilon. With ``K > 2``
    classes there are ``K`` one-vs-rest problems and a label change flips the
    binary labels of 2 of them: ``epsilon / 2`` each, under either ``privacy``
    (the ledger's relation is a label change; a whole example, which enters
    all ``K``, is reported by :func:`perturbation_example_epsilon`).

    Parameters
    ----------
    epsilon : float
    n_classes : int

    Returns
    -------
    n_problems : int
    epsilon_per_problem : float
    """
    if n_classes == 2:
        return 1, epsilon
    return n_classes, epsilon / 2


def perturbation_params(solver, *, epsilon, n_samples, n_classes, reg, loss, privacy):
    """The public parameters of objective or output perturbation, calibrated for a label change.

    ``epsilon`` is the label budget under either ``privacy``: the noise and
    ``Delta`` are those of the label-change analysis (``g``, ``r`` of
    :func:`~sklearn_labeldp.linear_model._losses.neighbour_bounds` for a label,
    ``epsilon / 2`` for each of the 2 one-vs-rest problems a label change
    touches). The same noise also protects whole examples (the substitution
    relation of Chaudhuri et al. 2011), with the guarantee
    :func:`perturbation_example_epsilon` that ``privacy="full"`` reports beside
    the label one. Calibrating to the label change rather than the substitution
    shrinks the noise by ``g_full / g_label`` per problem (2 for the logistic
    loss) and, with ``K > 2``, by ``K / 2`` more: the former full-DP
    calibration split ``epsilon`` over all ``K`` problems and charged all of it
    for a label change that costs ``2 / K`` of it.

    Parameters
    ----------
    solver : {"objective", "output"}
    epsilon : float
        Label budget of the whole fit; split by :func:`one_vs_rest_epsilon`.
    n_samples : int
    n_classes : int
    reg : float
        ``Lambda``.
    loss : LogisticLoss or HuberHingeLoss
    privacy : {"label", "full"}
        Does not change the calibration (see above); kept so that every
        calibration reads the same setting.

    Returns
    -------
    dict
        ``n_problems``, ``release_epsilon``, ``regularization``
        (``Lambda``), ``gradient_sensitivity`` (``g``) and ``noise_scale``:
        the noise ``b`` has density proportional to ``exp(-||b|| /
        noise_scale)`` (``g / eps'`` for objective perturbation, ``1 / beta``
        for output perturbation). Objective perturbation adds
        ``hessian_rank`` (``r``), ``curvature_bound`` (``c``),
        ``epsilon_prime`` (``eps'``) and ``extra_regularization``
        (``Delta``).
    """
    n_problems, eps_problem = one_vs_rest_epsilon(epsilon, n_classes)
    g, r = neighbour_bounds(loss, "label")
    params = dict(n_problems=n_problems, release_epsilon=eps_problem, regularization=reg,
                  gradient_sensitivity=g)
    if solver == "output":
        return {**params, "noise_scale": 1.0 / output_perturbation_beta(eps_problem, n_samples,
                                                                          reg, g)}
    eps_prime, extra = objective_perturbation_params(eps_problem, n_samples, reg, loss.c,
                                                     hessian_rank=r)
    return {**params, "hessian_rank": r, "curvature_bound": loss.c, "epsilon_prime": eps_prime,
            "extra_regularization": extra, "noise_scale": g / eps_prime}


def _gaussian_label_change(epsilon, delta, n_classes, loss):
    """``(t, g, s)``: what a label change moves and the Gaussian noise multiplier for it.

    ``t`` one-vs-rest problems touched (1 for two classes, 2 otherwise), ``g``
    the label change's gradient sensitivity per problem; ``s`` is the multiplier of one
    release of sensitivity 1, widened until the exact epsilon of ``mu = 1 /
    s``, the value recorded, is within ``(epsilon, delta)``.
    """
    touched = 1 if n_classes == 2 else 2
    g, _ = neighbour_bounds(loss, "label")
    return touched, g, calibrate_gaussian_sigma(epsilon, delta, 1.0)


def gaussian_perturbation_params(solver, *, epsilon, delta, n_samples, n_classes, reg, loss,
                                 privacy):
    """Objective or output perturbation with Gaussian noise: one joint release, exact profile.

    ``t`` is the number of one-vs-rest problems a label change touches (1 for
    two classes, 2 of the ``K`` otherwise) and ``g`` the change of one
    example's gradient term under it
    (:func:`~sklearn_labeldp.linear_model._losses.neighbour_bounds`).

    - Output perturbation: the minimiser of the ``Lambda``-strongly convex
      ``J`` of one problem moves by at most ``g / (n Lambda)`` (Chaudhuri et
      al. 2011, Corollary 8), so the concatenated minimisers move by at most
      ``sqrt(t) g / (n Lambda)``; released with ``N(0, sigma^2 I)`` noise,
      one Gaussian mechanism of ``mu = sqrt(t) g / (n Lambda sigma)``.
    - Objective perturbation: the release minimises ``J(f) + b.f / n`` with
      ``b ~ N(0, sigma^2 I)``, so ``b = -n grad J(f)`` is a bijection of the
      release. A label change moves ``n grad J`` by at most ``g`` per problem
      touched at every ``f`` and, for a loss with even curvature (the
      logistic loss, ``r = 0``), leaves its Jacobian ``n Hess J`` unchanged:
      the density ratio of the release is exactly that of ``b`` against ``b``
      shifted by at most ``sqrt(t) g``, one Gaussian mechanism of ``mu =
      sqrt(t) g / sigma`` (the Gaussian form of Kifer, Smith and Thakurta
      2012, whose Jacobian term vanishes here). A loss whose curvature moves
      under a label change (``r > 0``) is refused.

    ``mu`` is the largest whose exact privacy profile (Balle and Wang 2018)
    is within ``(epsilon, delta)``
    (:func:`~sklearn_labeldp.accounting.calibrate_gaussian_sigma`). Under
    ``privacy="full"`` the same noise is reported for substituting a whole
    example, which moves every problem's term by ``2``:
    ``example_gaussian_mu = 2 sqrt(m) / (n Lambda sigma)`` (output) or ``2
    sqrt(m) / sigma`` plus, for objective perturbation, the Jacobian's
    ``example_jacobian_epsilon = 2 m log(1 + c / (n Lambda))`` (rank-2
    Hessian changes, Chaudhuri et al. 2011), ``m`` the problems.

    Parameters
    ----------
    solver : {"objective", "output"}
    epsilon, delta : float
        The label budget of the fit, ``delta`` in (0, 1).
    n_samples, n_classes : int
    reg : float
        ``Lambda``.
    loss : LogisticLoss or HuberHingeLoss
    privacy : {"label", "full"}

    Returns
    -------
    dict
        ``n_problems``, ``regularization``, ``gradient_sensitivity`` (``g``),
        ``noise`` (``"gaussian"``), ``noise_scale`` (``sigma``), ``gaussian_mu``
        and ``rho = mu^2 / 2`` (the record's description and zCDP); objective
        perturbation adds ``hessian_rank`` (0) and ``extra_regularization``
        (0); under full DP ``example_gaussian_mu`` (and
        ``example_jacobian_epsilon`` for objective perturbation).
    """
    n_problems = 1 if n_classes == 2 else n_classes
    touched, g, s = _gaussian_label_change(epsilon, delta, n_classes, loss)
    _, r = neighbour_bounds(loss, "label")
    # Output: the minimisers' shift; objective: the gradient's, in units of b.
    units = n_samples * reg if solver == "output" else 1.0
    params = dict(n_problems=n_problems, regularization=reg, gradient_sensitivity=g)
    if solver == "objective":
        if r != 0:
            raise ValueError(
                "Gaussian objective perturbation is offered for losses whose curvature a "
                "label change leaves unchanged (the logistic loss); use solver='output'.")
        params.update(hessian_rank=0, extra_regularization=0.0)
    mu, sigma = 1.0 / s, s * math.sqrt(touched) * g / units
    params.update(noise="gaussian", noise_scale=sigma, gaussian_mu=mu, rho=mu**2 / 2.0)
    if privacy == "full":
        g_full, r_full = neighbour_bounds(loss, "full")
        params["example_gaussian_mu"] = math.sqrt(n_problems) * g_full / (units * sigma)
        if solver == "objective":
            params["example_jacobian_epsilon"] = n_problems * r_full * math.log1p(
                loss.c / (n_samples * reg))
    return params


def perturbation_example_epsilon(solver, params, n_samples):
    """The whole-example (substitution) epsilon of objective or output perturbation's noise.

    Chaudhuri et al. (2011) for substituting one example ``(z, y)`` by ``(z',
    y')`` (``||z||, ||z'|| <= 1``), with the noise actually drawn (density
    proportional to ``exp(-||b|| / noise_scale)``, calibrated for a label
    change by :func:`perturbation_params`), per binary problem:

    - output perturbation: the minimiser of the ``Lambda``-strongly convex
      ``J`` moves by at most ``2 / (n Lambda)`` (their Corollary 8, ``g =
      2``), so ``eps_ex = 2 / (n Lambda noise_scale)``;
    - objective perturbation: the noise absorbs a gradient change of norm
      ``<= 2`` and the Jacobian a Hessian change of rank 2 (their Theorem 9),
      ``eps_ex = 2 / noise_scale + 2 log(1 + c / (n (Lambda + Delta)))``.

    A whole example enters every one of the ``n_problems`` problems, so the
    example-level guarantee is ``n_problems`` times that (pure DP composes by
    addition). With the label calibration this is ``2 / g_label`` times the
    label epsilon per problem plus the Jacobian's term: for the logistic loss
    ``eps_ex = 2 epsilon`` (``K = 2``, output) and ``K epsilon`` (``K > 2``).

    Parameters
    ----------
    solver : {"objective", "output"}
    params : dict
        From :func:`perturbation_params`.
    n_samples : int

    Returns
    -------
    float
    """
    scale, reg = params["noise_scale"], params["regularization"]
    if solver == "output":
        per_problem = 2.0 / (n_samples * reg * scale)
    else:
        per_problem = 2.0 / scale + 2.0 * math.log1p(
            params["curvature_bound"] / (n_samples * (reg + params["extra_regularization"])))
    return params["n_problems"] * per_problem


def gaussian_noise_share(*, epsilon, delta, n_samples, n_classes, n_features, loss):
    """``nu = sqrt(t d) g / (n mu)``: Gaussian objective or output perturbation's noise share.

    The noise ``N(0, sigma^2 I)`` of :func:`gaussian_perturbation_params` has
    expected norm about ``sigma sqrt(d)`` in ``d`` dimensions, in the mean
    gradient's units ``sqrt(t d) g / (n mu)`` for both (objective: ``b / n``;
    output: ``Lambda b``): the analogue of
    :func:`perturbation_noise_share` for the noise actually drawn
    (``t`` problems touched by a label change, ``mu`` the exact profile's at
    ``(epsilon, delta)``). Public quantities only.

    Returns
    -------
    float
    """
    touched, g, s = _gaussian_label_change(epsilon, delta, n_classes, loss)
    return math.sqrt(touched * n_features) * g / (n_samples * (1.0 / s))


def perturbation_noise_share(*, epsilon, n_samples, n_classes, n_features, loss, privacy):
    """``nu = d g / (n eps_problem)``: the expected norm of a perturbation solver's noise
    as a perturbation of the mean gradient of one binary problem.

    Objective and output perturbation (Chaudhuri et al. 2011) draw ``b`` with
    density proportional to ``exp(-eps ||b|| / g)`` in ``d`` dimensions, whose
    norm has mean ``d g / eps``; objective perturbation adds ``b / n`` to the
    mean gradient, output perturbation adds ``b / (n Lambda)`` to the minimiser
    of the ``Lambda``-strongly convex ``J``, i.e. ``b / n`` in the gradient's
    units. ``eps`` is the epsilon of one one-vs-rest problem
    (:func:`one_vs_rest_epsilon`) and ``g`` the gradient sensitivity of a label
    change (:func:`~sklearn_labeldp.linear_model._losses.neighbour_bounds`), the
    relation both ``privacy`` settings are calibrated for
    (:func:`perturbation_params`; ``privacy`` is accepted for a uniform
    signature). Public quantities only.

    Returns
    -------
    float
    """
    _, eps_problem = one_vs_rest_epsilon(epsilon, n_classes)
    g, _ = neighbour_bounds(loss, "label")
    return n_features * g / (n_samples * eps_problem)


def auto_perturbation_regularization(solver, *, epsilon, n_samples, n_classes, n_features, loss,
                                     privacy, fit_intercept=True, delta=0.0):
    """``C="auto"``'s ``Lambda`` for objective and output perturbation, from the noise share.

    With ``nu`` the :func:`perturbation_noise_share` (the expected norm of the
    noise in the mean gradient's units):

    - objective perturbation, logistic loss: ``Lambda = c nu``, ``c = 1/4`` the
      loss's curvature bound. The noise ``b / n`` shifts the minimiser by about
      ``||b / n|| / Lambda``, at most ``1 / c`` in the mapped features' units:
      as in :func:`auto_regularization` (AdaSSP, Wang 2018), as much ridge as
      the noise moves the gradient;
    - objective perturbation, Huber hinge (:class:`DPLinearSVC`):
      :func:`huber_objective_regularization`, which balances the ridge's bias
      against the noise in the excess-risk bound of Chaudhuri et al. (2011)
      and falls back on the hinge's linear zone where the noise outweighs the
      signal in the gradient;
    - output perturbation: ``Lambda = nu``, for which the noise ``b / (n
      Lambda)`` on the released minimiser has expected norm 1 in the mapped
      features' units; the minimiser's own norm is at most ``sqrt(2 log(2) /
      Lambda)`` (logistic; ``J(f*) <= J(0)``), so below this ``Lambda`` the
      noise outgrows the model.
    - with ``delta > 0`` (Gaussian noise), the same rules with the Gaussian's
      share, :func:`gaussian_noise_share` (``c`` times it for objective
      perturbation). For output perturbation it was ahead of the pure-DP
      share's ``Lambda`` in 8 of 12 cells (the digits, wine, breast cancer,
      iris at eps 1, 4, 8, 9 splits; digits at eps 8 0.900 against 0.885),
      behind in one (wine at eps 1, 0.796 against 0.815).

    A larger ``Lambda`` also shrinks the extra regularisation ``Delta`` and the
    Jacobian's share of epsilon when the Hessian moves (``r > 0``). Chaudhuri
    et al. (2011) choose ``Lambda`` on a private holdout; these rules were
    checked against a grid of ``C`` from 1e-4 to 10 on the digits, UCI Adult
    and the synthetic 5-class set (eps 0.5 to 8), where the former fixed ``C =
    1`` lost up to 45 points (output perturbation under label DP, the digits
    at eps = 2: 0.12 against 0.56).

    Returns
    -------
    float
        ``Lambda``.
    """
    if delta > 0:
        nu = gaussian_noise_share(epsilon=epsilon, delta=delta, n_samples=n_samples,
                                  n_classes=n_classes, n_features=n_features, loss=loss)
        return nu if solver == "output" else loss.c * nu
    nu = perturbation_noise_share(epsilon=epsilon, n_samples=n_samples, n_classes=n_classes,
                                  n_features=n_features, loss=loss, privacy=privacy)
    if solver == "output":
        return nu
    if hasattr(loss, "width"):  # the Huber hinge
        return huber_objective_regularization(nu, n_samples, n_features, n_classes,
                                              loss.width, fit_intercept=fit_intercept)
    return loss.c * nu


def huber_objective_regularization(noise_share, n_samples, n_features, n_classes, huber_width,
                                   fit_intercept=True):
    """Objective perturbation's ``Lambda`` for the Huber hinge, from the noise share ``nu``.

    Signal first. The mean gradient at 0 of a one-vs-rest problem, ``-mean_i
    y_i z_i`` in the hinge's linear zone, has a norm of about ``1 / K`` (the
    positive class's share, rows of norm <= 1; :func:`warn_one_vs_rest_noise`
    warns past the same point), against the noise's ``nu`` in the same units.

    - ``nu <= 1 / K``: the gradient's direction is mostly signal, and the
      ridge balances its bias against the noise. The excess-risk analysis of
      objective perturbation (Chaudhuri, Monteleoni and Sarwate 2011, proof of
      their Theorem 18) bounds the loss of the private minimiser ``f_priv`` of
      the ``Lambda``-strongly convex ``J(f) + b.f / n`` against any reference
      predictor ``f0``:

          L(f_priv) <= L(f0) + (Lambda / 2) ||f0||^2 + ||b / n||^2 / Lambda,

      the ridge's bias plus the noise's shift of the minimiser (at most ``||b
      / n|| / Lambda``) times the gradient it works against. With ``||b /
      n||`` at its mean ``nu`` the right-hand side is smallest at ``Lambda =
      sqrt(2) nu / ||f0||``. ``||f0||`` must come from public quantities: on
      standardised features the energy of a mapped row spreads over its ``d``
      coordinates, so its component along the direction that separates the
      classes is about ``||z|| / sqrt(d)``, and a predictor that gives such
      rows the hinge's unit margin has norm ``sqrt(d) / ||z||``. With an
      intercept the mapped row is ``z = [x / R, 1] / sqrt(2)``, whose norm is
      about ``1 / sqrt(2)`` at the bound's median row: ``||f0|| = sqrt(2 d)``
      and ``Lambda = nu / sqrt(d)``; without one ``z = x / R``, ``||f0|| =
      sqrt(d)`` and ``Lambda = sqrt(2) nu / sqrt(d)``.
    - ``1 / K < nu <= 2 / K``: the noise outweighs the signal in the gradient, and
      what a smaller ridge adds beyond the first-order direction is fitted to
      the noise. The minimiser is then kept in the hinge's linear zone ``m < 1
      - h``, where ``J(f) + b.f / n`` is linear plus the ridge and its
      minimiser the noisy class-mean difference ``(mean_i y_i z_i - b / n) /
      Lambda`` (the centroid classifier, whose predictions do not depend on
      ``Lambda``): ``Lambda = nu / (1 - h)``, the smallest ridge at which the
      noise's expected shift ``nu / Lambda`` of a unit row's margin stays in
      that zone. A Huber width ``h >= 1`` has no linear zone around ``m =
      0``; there the curvature rule ``Lambda = nu / (2h)`` (``c nu``) of the
      logistic loss serves.
    - ``nu > 2 / K``: the ridge stays at its value for ``nu = 2 / K``. The
      noise's shift of the margins then outgrows the linear zone, and the
      hinge's flat part ``m > 1 + h`` drops the rows whose margins the noise
      pushes furthest up, which partly cancels it (measured: the digits at
      eps = 0.25 and 0.5, ``nu`` = 8.3 and 4.1 ``/ K``: 0.185 and 0.311
      against the centroid's 0.150 and 0.265; the grid's best at 0.5 is
      0.311; 3 seeds. Wine and iris at eps = 0.25 to 0.75, the other sets
      past ``1 / K``: unchanged, 5 seeds).

    Every branch is at least ``1 / (2n)``, the ridge of scikit-learn's
    default ``C = 1`` (with an intercept): as epsilon grows the first branch
    vanishes, and on separable rows the hinge's minimiser, which the release
    needs exactly, then takes L-BFGS past ``max_iter`` (iris at eps = 1e6).
    At the epsilons of the benchmarks (up to 8) the floor does not bind.

    The former rule ``Lambda = c nu`` at every noise level (``c = 1 / (2h)``,
    1 at the default width) sat between the two regimes: on the digits under
    label DP (``d = 65``, ``n = 1257``, ``K = 10``) the best ``Lambda`` on a
    fine grid was 0.09 to 0.14 ``nu`` at eps = 4 and 8 (``nu`` = 0.05 and
    0.03) and 3.4 and 6.8 ``nu`` at eps = 1 and 2 (``nu`` = 0.21 and 0.10),
    which the first two branches (0.12 ``nu`` and 2 ``nu``) follow; the first
    branch first left out the mapping's ``1 / sqrt(2)`` (``||f0|| =
    sqrt(d)``, 0.18 ``nu``: 0.765 and 0.852 at eps = 4 and 8, now 0.774 and
    0.874, 3 seeds); the third keeps the ridge near ``nu`` deep in the noisy
    regime, where it did better than the centroid. Public quantities only.

    Parameters
    ----------
    noise_share : float
        ``nu`` (:func:`perturbation_noise_share`).
    n_samples : int
    n_features : int
        ``d``, the mapped dimension (the intercept's column included).
    n_classes : int
        ``K``.
    huber_width : float
        ``h``.
    fit_intercept : bool, default=True
        Whether the mapped rows carry the intercept's column (and the
        ``1 / sqrt(2)`` scaling that comes with it).

    Returns
    -------
    float
        ``Lambda``.
    """
    if noise_share <= 1.0 / n_classes:
        reference_norm = math.sqrt((2.0 if fit_intercept else 1.0) * n_features)
        reg = math.sqrt(2.0) * noise_share / reference_norm
    else:
        # Past twice a class's share the ridge stops growing with the noise.
        noise = min(noise_share, 2.0 / n_classes)
        reg = noise / (1.0 - huber_width) if huber_width < 1.0 else noise / (2.0 * huber_width)
    return max(reg, 1.0 / (2.0 * n_samples))


def warn_one_vs_rest_noise(estimator, solver, params, n_samples, n_features, n_classes):
    """One warning when objective or output perturbation's split budget leaves only noise.

    These mechanisms release one noisy minimiser per one-vs-rest problem, each
    with ``epsilon / 2`` of the label budget (under either ``privacy``). Their noise
    ``b`` has density proportional to ``exp(-eps ||b|| / g)`` in ``d``
    dimensions, so ``||b||`` has mean ``d g / eps``; as a perturbation of the
    mean gradient (objective: ``b / n``; output: ``Lambda b`` for the
    ``Lambda``-strongly convex ``J``, with ``b``'s scale ``g / (n Lambda
    eps)``) it has norm about ``d g / (n eps)``. The mean gradient at 0 of a
    one-vs-rest problem owes about ``1 / K`` of its norm to the positive class
    (rows of norm <= 1), so past ``d g / (n eps) > 1 / K`` the noise swamps the
    signal, and the fit says so once. Public quantities only.
    """
    if (solver not in ("objective", "output") or params["n_problems"] < 2
            or params.get("noise") == "gaussian"):  # one joint release: nothing split
        return
    eps = params.get("epsilon_prime", params["release_epsilon"])
    noise_share = n_features * params["gradient_sensitivity"] / (n_samples * eps)
    if noise_share <= 1.0 / n_classes:
        return
    warnings.warn(
        f"{estimator}(solver={solver!r}) splits epsilon over {params['n_problems']} "
        f"one-vs-rest problems ({params['release_epsilon']:.3g} each), and the noise of "
        f"each ({noise_share:.2g} of a gradient's norm, against a class's share of about "
        f"1/{n_classes}) leaves little of the signal: expect an accuracy near chance. "
        "Raise epsilon, or use DPLogisticRegression(solver='newton') or "
        "DPLeastSquaresClassifier, which release one noisy statistic for all classes.",
        UserWarning, stacklevel=7,
    )
