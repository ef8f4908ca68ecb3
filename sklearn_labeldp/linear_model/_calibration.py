"""Calibration of every private linear model's mechanism from public quantities only.

Every function here reads ``(epsilon, delta, n, the number of classes, the
regularisation, the loss's constants, the neighbour relation, the step count
and batch size)`` and nothing else: the parameters it returns are fixed
before any label is read, and a fitted model exposes them as
``mechanism_params_``. The mechanisms that use them live elsewhere
(:mod:`~sklearn_labeldp.linear_model._perturbed_erm`,
:mod:`~sklearn_labeldp.linear_model._second_order`,
:mod:`~sklearn_labeldp.linear_model._first_order`,
:mod:`~sklearn_labeldp.linear_model._least_squares`).

- Objective and output perturbation (Chaudhuri, Monteleoni and Sarwate 2011),
  pure epsilon-DP: :func:`perturbation_params` (calibrated for a label change
  under either ``privacy``) and :func:`perturbation_example_epsilon` (the
  whole-example guarantee of the same noise), defined beside the mechanism in
  :mod:`~sklearn_labeldp.linear_model._perturbed_erm` and importable here.
- Gaussian releases: :func:`calibrate_exact_gaussian_releases` by the
  Gaussian's exact privacy profile (Balle and Wang 2018; DP least squares,
  DP-Newton, DP-FC and full-batch DP-SGD, whose records are described by
  ``("gaussian", mu)``) and :func:`gaussian_release_mus`. (They were calibrated in zCDP, Bun
  and Steinke 2016, with 4-11% more noise; ``benchmarks/accounting_linear.py``
  compares the two.)
- DP-Newton and DP-FC (Mehta, Krichene, Thakurta, Kurakin and Cutkosky 2023):
  :func:`second_order_params`.
- DP-SGD and DP-Adam (Abadi et al. 2016; Mehta et al. 2023, Alg. 1): full
  batch by the exact Gaussian, Poisson minibatches by the label change's
  dominating pairs
  (:func:`~sklearn_labeldp.accounting._label_change.calibrate_bounded_label_change`,
  privacy loss distributions, no group privacy): :func:`first_order_params`.

Whatever ``privacy`` is, ``(epsilon, delta)`` is the budget charged on the
ledger, whose neighbouring relation is the change of one label, and the noise
is calibrated so that the label-change guarantee is within it (and, where the
analysis allows, no tighter than it: the noise is what the label change
needs). Under ``privacy="full"`` the mechanisms also protect whole examples,
for the relation of their papers, and that guarantee of the same noise is
reported beside the label one (the estimators' ``example_epsilon_``): the
substitution of one example for objective and output perturbation, adding or
removing one for the Gaussian solvers.
"""

import math

from ..accounting import calibrate_gaussian_sigma
from ..accounting._label_change import calibrate_bounded_label_change
from ._losses import LogisticLoss

# Objective and output perturbation are calibrated beside their mechanism, in
# _perturbed_erm; their names stay importable from here with every other calibration.
from ._perturbed_erm import (  # noqa: F401
    auto_perturbation_regularization,
    objective_perturbation_params,
    one_vs_rest_epsilon,
    output_perturbation_beta,
    perturbation_example_epsilon,
    perturbation_noise_share,
    perturbation_params,
    warn_one_vs_rest_noise,
)

# ----------------------------------------------------------------------------- Gaussian
#
# Every fit is charged on the library's ledger, whose neighbouring relation is the
# change of one label. The Gaussian mechanisms below are accounted for that relation
# by the exact Gaussian profile (Balle and Wang 2018; the releases compose as one
# Gaussian) under privacy="label" *and* under privacy="full":
# under "full" each released statistic keeps the noise Mehta et al. (2023) calibrate
# to its add/remove sensitivity (noise std = s times it), and s is chosen so that the
# label-change guarantee of the run, computed from the label-change sensitivity of
# every release, is within (epsilon, delta) with the least noise. The add/remove
# guarantee the same noise gives (``example_gaussian_mu``, ``example_rho``) is reported
# beside it, never charged in its place:
# an add/remove (eps, delta) guarantee is not an (eps, delta) guarantee for changing
# a label, which is a removal followed by an addition: applying the add/remove
# inequality twice gives only (2 eps, (1 + e^eps) delta) (group privacy, Dwork and
# Roth 2014, Sec. 2.3). An analysis from the label-change sensitivities is often
# tighter than that: a label change keeps the features, so statistics of the features
# alone (a Gram matrix, the Hessians) do not move at all.


def _release_weight(counts, noise_sensitivities, shifts):
    """``W = sum_k counts[k] (shifts[k] / noise_sensitivities[k])^2``.

    Release ``k`` is made ``counts[k]`` times, each time with Gaussian noise of
    std ``s * noise_sensitivities[k]`` on every coordinate, and two
    neighbouring datasets move it by at most ``shifts[k]`` in L2 norm, given
    the earlier outputs: ``shifts[k] / (s noise_sensitivities[k])`` noise
    stds. A release the neighbours do not move (shift 0) costs nothing; one
    whose shift is its noise sensitivity adds exactly ``counts[k]``.
    """
    return math.fsum(
        counts[k] * (1.0 if shifts[k] == noise_sensitivities[k]
                     else (shifts[k] / noise_sensitivities[k]) ** 2)
        for k in counts
    )


def calibrate_exact_gaussian_releases(epsilon, delta, counts, noise_sensitivities, shifts):
    """The smallest noise multiplier within ``(epsilon, delta)`` by the Gaussian's exact profile.

    Release ``k``, made ``counts[k]`` times with Gaussian noise of std ``s *
    noise_sensitivities[k]``, is a Gaussian mechanism whose shift given the
    earlier outputs is at most ``shifts[k]``, i.e. ``shifts[k] / (s
    noise_sensitivities[k])`` noise stds. The releases compose adaptively
    into exactly one Gaussian mechanism of ``mu = sqrt(W) / s`` noise stds,
    ``W = sum_k counts[k] (shifts[k] / noise_sensitivities[k])^2`` (Gaussian differential
    privacy composes by the root sum of squares, Dong, Roth and Su 2022, Cor.
    3.3), whose tight ``(epsilon, delta)`` curve is the exact privacy profile
    ``delta(eps) = Phi(-eps / mu + mu / 2) - e^eps Phi(-eps / mu - mu / 2)``
    (Balle and Wang 2018, Thm. 8). ``mu`` is the largest value whose profile
    is within ``(epsilon, delta)`` (PATE's calibration, the same profile), and
    ``s = sqrt(W) / mu``. The zCDP calibration it replaces (Canonne, Kamath
    and Steinke 2020) needs 4-11% more noise for the same ``(epsilon,
    delta)`` (epsilon 0.1 to 16, delta 1e-8 to 1e-5). The record is described by
    ``("gaussian", mu)``, which
    :meth:`~sklearn_labeldp.accounting.BudgetAccountant.total` composes
    exactly with other described spends.

    Parameters
    ----------
    epsilon : float
    delta : float
        In (0, 1).
    counts, noise_sensitivities, shifts : dict
        Keyed by release; ``shifts`` are those of the relation the guarantee
        is for (a label change, for the ledger).

    Returns
    -------
    noise_multiplier : float
    mu : float
        ``sqrt(W) / s``; the run is ``mu^2 / 2``-zCDP as well.

    Raises
    ------
    ValueError
        If ``epsilon`` is too small for any Gaussian noise at ``delta``.
    """
    weight = _release_weight(counts, noise_sensitivities, shifts)
    # Widened until the exact epsilon of mu = sqrt(W) / s, the very value returned and
    # recorded, is within budget.
    s = calibrate_gaussian_sigma(epsilon, delta, weight)
    return s, math.sqrt(weight) / s


def gaussian_release_mus(noise_multiplier, counts, noise_sensitivities, shifts):
    """``(mu, rho)`` of the releases for ``shifts``: ``mu = sqrt(W) / s``, ``rho = mu^2 / 2``."""
    mu = math.sqrt(_release_weight(counts, noise_sensitivities, shifts)) / noise_multiplier
    return mu, mu**2 / 2.0


def logistic_label_sensitivity(n_classes):
    """Label-change L2 bound of one example's unclipped gradient ``(sigmoid(theta z) - e) z^T``.

    A label change keeps ``z`` and ``theta`` and replaces the target ``e``: the
    term moves by ``(e_old - e_new) z^T``, of Frobenius norm ``||e_old - e_new||
    ||z|| <= sqrt(2)`` (two one-hot vectors), and ``<= 1`` with two classes
    (one problem, ``e`` in {0, 1}).

    Parameters
    ----------
    n_classes : int

    Returns
    -------
    float
    """
    return 1.0 if n_classes == 2 else math.sqrt(2.0)


def second_order_sensitivities(solver, n_classes, privacy):
    """L2 sensitivities of the sums DP-Newton or DP-FC releases (rows of norm <= 1).

    The noise of each release is ``s`` times the sensitivity returned here, for
    the relation of ``privacy``. With ``m`` binary problems (1 when K = 2, K
    otherwise):

    - the gradient ``sum_i (sigmoid(Theta z_i) - e_i) z_i^T`` (an ``m x d``
      matrix): a label change alters one example's term by ``(e_old - e_new)
      z^T``, of Frobenius norm <= sqrt(2) (<= 1 when m = 1,
      :func:`logistic_label_sensitivity`); adding or removing a whole example
      changes it by at most sqrt(m) (every residual is in [-1, 1]);
    - the Hessians ``sum_i p_ij (1 - p_ij) z_i z_i^T`` (Newton) and the Gram
      matrix ``G = sum_i z_i z_i^T`` (FC) do not read the labels (``Theta`` is
      a post-processing of earlier noisy releases): under label DP they are
      released without noise; under full DP (add/remove, Mehta et al. 2023)
      their sensitivities are ``sqrt(m) / 4`` (the m Hessians together) and 1.

    Parameters
    ----------
    solver : {"newton", "fc"}
    n_classes : int
    privacy : {"label", "full"}

    Returns
    -------
    n_problems : int
    sensitivities : dict
        ``"gradient"``, and under full DP ``"hessian"`` (Newton) or ``"gram"``
        (FC).
    """
    m = 1 if n_classes == 2 else n_classes
    if privacy == "label":
        return m, {"gradient": logistic_label_sensitivity(n_classes)}
    if solver == "newton":
        return m, {"gradient": math.sqrt(m), "hessian": LogisticLoss.c * math.sqrt(m)}
    return m, {"gradient": math.sqrt(m), "gram": 1.0}


def second_order_label_sensitivities(solver, n_classes, privacy):
    """Label-change L2 sensitivity of each statistic DP-Newton or DP-FC releases.

    The gradient sum moves by ``(e_old - e_new) z^T`` (norm <= sqrt(2), 1
    for two classes). The Hessians ``sum_i p_ij (1 - p_ij) z_i z_i^T`` and the
    Gram matrix ``sum_i z_i z_i^T`` are functions of the features and of
    ``Theta`` only, and ``Theta`` is a function of the earlier outputs: given
    those, a label change does not move them at all (sensitivity 0). So under
    full DP only the gradients cost label privacy.

    Parameters
    ----------
    solver, n_classes, privacy
        As in :func:`second_order_sensitivities`.

    Returns
    -------
    dict
        Same keys as :func:`second_order_sensitivities`.
    """
    shifts = {"gradient": logistic_label_sensitivity(n_classes)}
    if privacy == "full":
        shifts["hessian" if solver == "newton" else "gram"] = 0.0
    return shifts


def second_order_release_counts(solver, privacy, n_noisy_steps):
    """How many times each statistic is released: ``T`` gradients; under full DP also
    the Hessians every step (Newton) or ``G`` once (FC).

    Returns
    -------
    dict
        Same keys as :func:`second_order_sensitivities`.
    """
    counts = {"gradient": n_noisy_steps}
    if privacy == "full":
        counts.update({"hessian": n_noisy_steps} if solver == "newton" else {"gram": 1})
    return counts


def second_order_params(solver, *, epsilon, delta, n_samples, n_classes, reg, privacy,
                        n_noisy_steps):
    """The public parameters of DP-Newton or DP-FC at ``(epsilon, delta)`` for a label change.

    Each release gets noise of std ``s`` times its
    :func:`second_order_sensitivities` (divided by the public ``n``: the
    released statistics are means). ``s`` is
    :func:`calibrate_exact_gaussian_releases` for the label-change shifts
    :func:`second_order_label_sensitivities`: the run is one Gaussian mechanism
    of ``mu`` noise stds for a label change (exact profile, Balle and Wang
    2018), ``mu`` the largest within ``(epsilon, delta)``:

    - label DP: ``mu^2 = T / s^2`` (the gradients only);
    - full DP: ``mu^2 = T Delta_label^2 / (m s^2)`` with ``Delta_label`` = 1
      (two classes) or ``sqrt(2)``: the gradient's noise is ``s sqrt(m)`` and a
      label change moves it by ``Delta_label``, while the Hessians and ``G``
      do not move. The noise is then the gradient noise of label DP, plus the
      curvature's. The add/remove guarantee of the same noise is the Gaussian
      of ``example_gaussian_mu^2 = 2 T / s^2`` (Newton) or ``(T + 1) / s^2``
      (FC), Mehta et al.'s releases, reported and not charged.

    Parameters
    ----------
    solver : {"newton", "fc"}
    epsilon : float
        Label-DP budget of the fit.
    delta : float
        In (0, 1).
    n_samples : int
    n_classes : int
    reg : float
        ``Lambda``.
    privacy : {"label", "full"}
    n_noisy_steps : int

    Returns
    -------
    dict
        ``n_problems``, ``regularization``, ``n_noisy_steps``, ``gaussian_mu``
        (``mu``, label change) and ``rho = mu^2 / 2``, ``noise_multiplier``
        (``s``), ``sensitivities`` (of the sums, see
        :func:`second_order_sensitivities`) and ``noise_scales`` (of the noise on
        each released mean, same keys); under full DP also
        ``label_sensitivities``, ``example_gaussian_mu`` and ``example_rho``
        (add/remove).
    """
    n_problems, sensitivities = second_order_sensitivities(solver, n_classes, privacy)
    shifts = second_order_label_sensitivities(solver, n_classes, privacy)
    counts = second_order_release_counts(solver, privacy, n_noisy_steps)
    s, mu = calibrate_exact_gaussian_releases(epsilon, delta, counts, sensitivities, shifts)
    params = dict(
        n_problems=n_problems, regularization=reg, n_noisy_steps=n_noisy_steps,
        rho=mu**2 / 2.0, gaussian_mu=mu, noise_multiplier=s, sensitivities=sensitivities,
        noise_scales={key: s * value / n_samples for key, value in sensitivities.items()},
    )
    if privacy == "full":
        params["label_sensitivities"] = shifts
        params["example_gaussian_mu"], params["example_rho"] = gaussian_release_mus(
            s, counts, sensitivities, sensitivities)
    return params


# The learning rates of DP-SGD and DP-Adam when ``learning_rate=None``. SGD: 4 is
# 1 / c with c = 1/4 the logistic loss's curvature bound; on rows of norm <= 1, J is
# (1/4 + Lambda)-smooth, so a noiseless step of 4 <= 2 / (1/4 + Lambda) never
# increases it while Lambda <= 1/4 (for Lambda = 0 it is DP-FC's step with G / n <= I).
# Adam: its steps are about learning_rate per coordinate whatever the gradient's
# scale; 0.1 moves the coefficients of the mapped rows far enough in tens of steps.
DEFAULT_LEARNING_RATES = {"sgd": 4.0, "adam": 0.1}

def first_order_sensitivity(n_classes, privacy, max_grad_norm):
    """The clipping norm and the L2 sensitivity the noise of DP-SGD/DP-Adam is scaled to.

    One example's gradient of the per-class sigmoid cross-entropy is ``r z^T``
    (``m x d``, ``m = 1`` for two classes, else ``K``), with residual ``r =
    sigmoid(theta z) - e`` in ``(-1, 1)^m`` and ``||z|| <= 1``:

    - label DP (``z`` stays, the label changes): the sum changes by ``(e_old -
      e_new) z^T``, of Frobenius norm ``<= sqrt(2)`` (``<= 1`` when ``m = 1``):
      no clipping is needed;
    - full DP (add or remove one example): each per-example gradient is
      clipped to ``C = max_grad_norm`` in Frobenius norm, and the sum changes
      by at most ``C``, the sensitivity the noise is scaled to (its label-change
      sensitivity is :func:`first_order_label_sensitivity`). ``None`` takes
      ``C = sqrt(m)``, the bound ``||r|| ||z|| <= sqrt(m)`` that every gradient
      already satisfies (nothing is clipped, and the sensitivity is DP-Newton's
      ``sqrt(m)``).

    Parameters
    ----------
    n_classes : int
    privacy : {"label", "full"}
    max_grad_norm : float or None

    Returns
    -------
    max_grad_norm : float or None
        The clipping norm ``C`` used: ``None`` under label DP (no clipping).
    sensitivity : float
    """
    m = 1 if n_classes == 2 else n_classes
    if privacy == "label":
        return None, logistic_label_sensitivity(n_classes)
    clip = math.sqrt(m) if max_grad_norm is None else float(max_grad_norm)
    return clip, clip


def first_order_label_sensitivity(n_classes, clip_norm):
    """Label-change L2 sensitivity of the summed (clipped) gradient: ``min(2 C, Delta)``.

    ``Delta = sqrt(2)`` (1 for two classes) is the unclipped bound
    (:func:`logistic_label_sensitivity`). A label change replaces one term
    ``clip_C(g_old)`` of the sum by ``clip_C(g_new)``, where ``g = (sigmoid(theta
    z) - e) z^T`` and ``clip_C(g) = g min(1, C / ||g||_F)``. Both have norm at
    most ``C``, so they differ by at most ``2 C``; and ``clip_C`` is the
    Euclidean projection onto the Frobenius ball of radius ``C``, a closed
    convex set, hence 1-Lipschitz, so they differ by at most ``||g_old -
    g_new||_F = ||e_old - e_new|| ||z|| <= Delta``. ``2 C`` is attained with
    two classes when both gradients are clipped (they point in opposite
    directions, ``r_old < 0 < r_new``), ``Delta`` when neither is.

    Parameters
    ----------
    n_classes : int
    clip_norm : float or None
        ``None``: no clipping, ``Delta``.

    Returns
    -------
    float
    """
    unclipped = logistic_label_sensitivity(n_classes)
    return unclipped if clip_norm is None else min(2.0 * clip_norm, unclipped)


def first_order_params(optimizer, *, epsilon, delta, n_samples, n_classes, reg, privacy,
                       n_noisy_steps, batch_size, max_grad_norm, learning_rate):
    """The public parameters of DP-SGD or DP-Adam at the label budget ``(epsilon, delta)``.

    Each of the ``T = n_noisy_steps`` steps releases the sum of the (clipped)
    per-example gradients of a batch plus Gaussian noise of std ``s`` times its
    sensitivity (:func:`first_order_sensitivity`), divided by the expected
    batch size ``q n``:

    - full batch (``batch_size=None``, ``q = 1``): a label change moves each
      release by at most ``Delta_label``, the sensitivity itself under label
      DP and :func:`first_order_label_sensitivity` ``min(2 C, Delta)`` under
      full DP, so the run is one Gaussian mechanism of ``mu = sqrt(T)
      Delta_label / (s sensitivity)`` noise stds for a label change, ``mu``
      the largest whose exact profile (Balle and Wang 2018) is within
      ``(epsilon, delta)`` (:func:`calibrate_exact_gaussian_releases`). Under
      full DP the same noise is the Gaussian of ``example_gaussian_mu = sqrt(T) /
      s`` for adding or removing one example (reported, not charged).
    - Poisson minibatches (``batch_size = b``, ``q = b / n``, full DP only):
      ``T`` compositions of the Poisson-subsampled Gaussian mechanism (Abadi et
      al. 2016), accounted for the label change directly (no group privacy)
      by
      :func:`~sklearn_labeldp.accounting._label_change.calibrate_bounded_label_change`:
      every clipped gradient has norm ``<= B = min(C, sqrt(m))`` and a label
      change moves it by ``<= D = min(2 C, Delta)``, so the replace-one pair
      ``+-B`` dominates each step and, with two classes (the gradients ``(p -
      y) z`` of the two labels point in opposite directions along ``z``, with
      ``0`` between them), so does the add/remove pair of sensitivity ``D``
      (Zhu, Dong and Wang 2022; Lebeda et al. 2024); ``s`` is the smallest
      noise multiplier within ``(epsilon, delta)`` by either, and the leaf
      records the pair that gave the smaller epsilon
      (``"subsampled_gaussian_label"`` or ``"subsampled_gaussian"``, composed
      exactly by the ledger). For two classes and ``C >= 1/2`` the label
      change costs the add/remove epsilon of sensitivity 1, about half of what
      group privacy charged. Under label DP no minibatch is offered: refused.

    Every check here reads public quantities only, so a bad configuration
    raises before any budget is charged.

    Parameters
    ----------
    optimizer : {"sgd", "adam"}
    epsilon, delta, n_samples, n_classes, reg, privacy, n_noisy_steps
        As in :func:`second_order_params`: the label-DP budget of the fit
        (``delta`` in (0, 1)), the public sizes, ``Lambda``, the relation of
        the example-level guarantee and ``T``.
    batch_size : int or None
        Expected batch size ``b`` (``1 <= b <= n``); ``None``: full batch.
    max_grad_norm : float or None
        Per-example clipping norm under full DP (see
        :func:`first_order_sensitivity`); unused under label DP.
    learning_rate : float or None
        ``None``: ``DEFAULT_LEARNING_RATES[optimizer]``.

    Returns
    -------
    dict
        ``n_problems``, ``regularization``, ``n_noisy_steps``, ``learning_rate``,
        ``sample_rate`` (``q``), ``expected_batch_size`` (``q n``),
        ``max_grad_norm`` (the clipping norm ``C`` used, the parameter's value
        or its default; ``None`` under label DP), ``noise_multiplier`` (``s``),
        ``sensitivities`` and ``noise_scales`` (key ``"gradient"``: the
        sensitivity of the summed gradient the noise is scaled to, and the std
        of the noise on each released mean, ``s * sensitivity / (q n)``); for
        full batch ``gaussian_mu`` (``mu``, label change) and ``rho = mu^2 / 2``
        and, under full DP, ``label_sensitivities``, ``example_gaussian_mu`` and
        ``example_rho`` (add/remove); for Poisson minibatches
        ``label_epsilon`` and ``dominating_pair``, the record's description:
        ``("subsampled_gaussian_label", (noise std / bound, q, T))`` or the
        same with ``"subsampled_gaussian"``.

    Raises
    ------
    ValueError
        A minibatch under label DP, ``batch_size > n_samples``, or an epsilon
        too small for any noise.
    """
    if batch_size is not None:
        if privacy == "label":
            raise ValueError(
                f"batch_size={batch_size!r}: minibatch DP-SGD is offered under "
                "privacy='full', whose per-example clipping (max_grad_norm) bounds each "
                "example's share of a Poisson batch; use batch_size=None (full batch) for "
                "label DP."
            )
        if batch_size > n_samples:
            raise ValueError(
                f"batch_size={batch_size!r} is larger than the number of training samples "
                f"({n_samples}); it is the expected size of a Poisson batch."
            )
    m = 1 if n_classes == 2 else n_classes
    clip_norm, sensitivity = first_order_sensitivity(n_classes, privacy, max_grad_norm)
    sensitivities = {"gradient": sensitivity}
    shifts = {"gradient": first_order_label_sensitivity(n_classes, clip_norm)}
    sample_rate = 1.0 if batch_size is None else batch_size / n_samples
    params = dict(n_problems=m, regularization=reg, n_noisy_steps=n_noisy_steps)
    if sample_rate == 1.0:
        counts = {"gradient": n_noisy_steps}
        s, mu = calibrate_exact_gaussian_releases(epsilon, delta, counts, sensitivities, shifts)
        params.update(gaussian_mu=mu, rho=mu**2 / 2.0)
        if privacy == "full":
            params["example_gaussian_mu"], params["example_rho"] = gaussian_release_mus(
                s, counts, sensitivities, sensitivities)
    else:
        # Every clipped gradient has norm <= min(C, sqrt(m)) (|r_j| < 1, ||z|| <= 1).
        std, params["label_epsilon"], key, value = calibrate_bounded_label_change(
            epsilon, delta, sample_rate, n_noisy_steps, min(clip_norm, math.sqrt(m)),
            shifts["gradient"], m == 1)
        s = std / clip_norm
        if key is not None:
            params["dominating_pair"] = (key, value)
    expected = sample_rate * n_samples
    lr = DEFAULT_LEARNING_RATES[optimizer] if learning_rate is None else float(learning_rate)
    params = dict(
        params, learning_rate=lr, sample_rate=sample_rate, expected_batch_size=expected,
        max_grad_norm=clip_norm, noise_multiplier=s, sensitivities=sensitivities,
        noise_scales={"gradient": s * sensitivity / expected},
    )
    if privacy == "full" and sample_rate == 1.0:
        params["label_sensitivities"] = shifts
    return params


# ----------------------------------------------------------------------------- "auto" defaults
#
# The hyperparameters that the noise level should set, resolved before any label is
# read from public quantities only: n, the mapped dimension d, the number of classes,
# (epsilon, delta), the neighbour relation and the other (given or resolved) parameters.

# C="auto" for DP-SGD and DP-Adam: scikit-learn's default, their former one.
# n_noisy_steps="auto" keeps their noise in check, and auto_regularization's Lambda on
# top of it cost accuracy (UCI Adult at (1, 1e-5), label DP, DP-SGD: 0.785 against
# 0.83 with C = 1).
DEFAULT_AUTO_C = 1.0

# n_noisy_steps="auto" for DP-Newton and DP-FC: a second-order method converges in a few
# steps (Mehta et al. 2023 run a handful), and every step costs its share of the budget:
# on UCI Adult at (1, 1e-5) under full DP, 3, 5 and 10 steps gave 0.836, 0.833 and 0.829
# (medians of 3 seeds, with C="auto"), and 5 leaves room for harder problems.
SECOND_ORDER_AUTO_STEPS = 5

# C="auto" for DP-Newton under label DP: the signal gamma of auto_regularization's
# bias-variance ridge c sigma^2 / gamma (set on small data, see there).
NEWTON_LABEL_SIGNAL = 0.01

# n_noisy_steps="auto" for DP-SGD and DP-Adam is clipped to this range: at least the
# former default, and at most a step count that keeps a fit within seconds on 10^5 rows.
FIRST_ORDER_AUTO_STEPS = (10, 1000)

# The std per coefficient, in the mapped features' units (rows of norm <= 1), within
# which the accumulated noise of DP-SGD's steps is kept by n_noisy_steps="auto".
FIRST_ORDER_NOISE_RADIUS = 1.0


def auto_first_order_steps(optimizer, *, epsilon, delta, n_samples, n_classes, n_features,
                           privacy, max_grad_norm, learning_rate):
    """``n_noisy_steps="auto"`` of full-batch (and minibatch) DP-SGD and DP-Adam.

    Noisy gradient descent from 0 with step ``eta`` adds, after ``T`` steps, a
    random walk ``eta sum_t e_t`` to every coefficient, of std ``eta sqrt(T)
    sigma_T = eta T sigma_1`` per coordinate, where ``sigma_T = sqrt(T)
    sigma_1`` is the noise std on each entry of a released mean gradient when
    the budget is split over ``T`` steps (Gaussians compose by the root sum of
    squares: the noise multiplier grows like ``sqrt(T)``). So the noise grows
    like ``T`` while the optimisation error of a smooth convex loss falls like
    ``1 / T`` (Bassily, Smith and Thakurta 2014 balance the two the same way
    for DP-GD, whose ``T`` grows like ``n^2 eps^2 / d``; here, with the step
    fixed at the smoothness's ``1 / beta``, the balance is linear in ``n``).
    The rule takes the largest ``T`` whose accumulated noise stays within
    ``D = 1`` per coefficient in the mapped features' units (rows of norm <= 1,
    where the coefficients of a useful model are of order 1):

        T = D / (eta sigma_1),    sigma_1 = s_1 S / n,

    ``s_1`` the noise multiplier of a one-step run at ``(epsilon, delta)`` and
    ``S`` the sensitivity, i.e. ``T = D n mu / eta`` under label DP with two
    classes (``mu`` the largest within ``(epsilon, delta)`` by the exact
    profile, ``s_1 = 1 / mu``). A bound on the noise's total norm instead
    (``D`` over all ``m d`` coefficients, this rule divided by ``sqrt(m d)``)
    stopped at 10 to 60 steps where 100 to 1000 were best (test accuracy, label
    DP: the digits at eps = 8, 13 steps 0.80 against 0.90 with 300; the
    synthetic 5-class set at eps = 1, 59 steps 0.555 against 0.570 with 300;
    UCI Adult at eps = 1, 192 steps 0.835 against 0.845 with 1000). ``eta`` is
    the learning rate of DP-SGD; DP-Adam, whose steps are about
    ``learning_rate`` per coordinate whatever the scale, uses DP-SGD's default
    step ``4`` in the rule, and takes at least ``(D / learning_rate)^2``
    steps (100 at its default rate 0.1): where the gradient is mostly noise,
    Adam's normalised steps are a random walk of about ``learning_rate`` per
    coordinate whatever the noise's scale, which stays within ``D`` for that
    many steps, while the rule's ``T`` (which assumes steps proportional to
    the noise) stops at its floor of 10 on small data. On six sets of 105 to
    140 rows at eps 0.5, 1 and 2 (9 splits), 10 steps were 3 to 22 points
    under the best of 10 to 1000 steps (wine at eps 0.5: 0.537 against
    0.759), 100 steps within 2.2 points in 15 of 18 cells (at most 7.4, the
    same cell: 0.685). ``T`` is clipped to ``[10, 1000]``. Poisson
    minibatches use the same ``T``: amplification by sampling keeps the noise
    on a step's mean at about its full-batch value for the same ``T`` (Abadi et
    al. 2016: ``eps`` grows like ``q sqrt(T) / s``, while the mean's noise is
    ``s / (q n)``).

    Parameters
    ----------
    optimizer : {"sgd", "adam"}
    epsilon, delta, n_samples, n_classes : as in :func:`first_order_params`
    n_features : int
        ``d``, the mapped features (the intercept's column included); the
        rule does not depend on it (kept for a uniform signature).
    privacy : {"label", "full"}
    max_grad_norm, learning_rate : float or None

    Returns
    -------
    int
    """
    clip_norm, sensitivity = first_order_sensitivity(n_classes, privacy, max_grad_norm)
    shifts = {"gradient": first_order_label_sensitivity(n_classes, clip_norm)}
    s_1, _ = calibrate_exact_gaussian_releases(epsilon, delta, {"gradient": 1},
                                               {"gradient": sensitivity}, shifts)
    sigma_1 = s_1 * sensitivity / n_samples
    eta = DEFAULT_LEARNING_RATES["sgd"]
    if optimizer == "sgd" and learning_rate is not None:
        eta = float(learning_rate)
    steps = FIRST_ORDER_NOISE_RADIUS / (eta * sigma_1)
    if optimizer == "adam":
        # Adam's noise-dominated steps are a walk of about its rate per coordinate
        # whatever the noise's scale: within D after (D / rate)^2 steps.
        rate = DEFAULT_LEARNING_RATES["adam"] if learning_rate is None else float(learning_rate)
        steps = max(steps, (FIRST_ORDER_NOISE_RADIUS / rate) ** 2)
    low, high = FIRST_ORDER_AUTO_STEPS
    return int(min(max(math.floor(steps), low), high))


def auto_regularization(noise_std, n_features, signal=None):
    """``C="auto"``'s ``Lambda`` for the Gaussian solvers, from the gradient noise's scale.

    Mehta et al. (2023) sweep the regularisation of DP-Newton and DP-FC. The
    rule here follows AdaSSP (Wang 2018): add to the curvature as much ridge
    as the noise on it moves the system, so the noisy system stays well
    conditioned. Under full DP DP-Newton's Hessians get symmetric noise of
    std ``c sigma`` per entry (``c = 1/4`` the logistic loss's curvature
    bound, ``sigma = noise_scales["gradient"]``, both scaled to ``sqrt(m)``);
    applied to a fixed unit vector (the direction of the solution) it has norm
    about ``sqrt(d / 2) c sigma``, half its spectral norm ``sqrt(2 d) c sigma``
    (the same factor as
    :func:`~sklearn_labeldp.linear_model._least_squares.adaptive_ridge`):

        Lambda = c sqrt(d / 2) sigma.

    On UCI Adult at (1, 1e-5) under full DP (DP-Newton, 10 steps) this
    ``Lambda`` gave an accuracy of 0.829, twice it 0.814 and four times it
    0.788 (medians of 3 seeds).

    The same ``Lambda`` is used for DP-FC (whose Gram noise has std ``c s /
    n``, at most ``c sigma``) and, under label DP, where the curvature is
    exact and ``Lambda`` bounds the amplification ``||e|| / Lambda`` of the
    gradient noise ``e`` by a step, to about ``sqrt(2) / c`` in the mapped
    features' units.

    DP-Newton under label DP (``signal`` given) takes at least the ridge of
    one regularised Newton step's bias-variance balance (Hoerl and Kennard
    1970): in a direction of curvature ``h`` where the mean gradient has the
    component ``g_k``, the ridge that minimises the step's squared error is
    ``sigma^2 h / g_k^2``. At the start ``h = c lambda_k``, ``lambda_k`` the
    Gram matrix's eigenvalue in that direction (``c = 1/4``, the curvature
    at 0); the signal ``g_k^2 / lambda_k`` is not public, and a fixed
    ``gamma`` stands for it (in the mapped features' units, which put every
    row in the unit ball):

        Lambda = c max(sqrt(d / 2) sigma, sigma^2 / gamma),   gamma = 0.01,

    which differs from the rule above only where the noise is large, ``sigma
    > sqrt(d / 2) gamma``: on small data at small epsilon (on UCI Adult it
    never does, from epsilon 0.05 up). ``gamma`` was chosen among 0.01,
    0.018 and 0.03 on the iris, wine, breast cancer (140 rows), two
    ``make_classification`` sets and three-class Gaussian blobs of 105-140
    training rows at epsilon 0.5 to 4, ``delta = 1e-5`` (15 splits). Over
    30 splits at epsilon 0.5 to 8 it raised the mean test accuracy there by
    up to 4.4 points (the blobs at epsilon 2: 0.836 to 0.876; the iris at
    epsilon 2: 0.721 to 0.765) and lowered none by more than 0.8; on data it
    was not chosen on (three digits, two blobs, ``make_classification``
    variants, 126-140 rows) it gained up to 7.8 points (two blobs at
    epsilon 1: 0.798 to 0.877) and lost at most 1.6 (at epsilon 0.5: 0.604
    to 0.588), and on 398 and 1,400 rows it left ``Lambda`` as it was. The
    best ridge is not a function of public quantities alone: the blobs'
    features with the labels of a linear rule instead of the clusters' (same
    ``n``, ``d``, ``K``, ``X``) wanted a ``Lambda`` 2 to 16 times smaller
    (epsilon 1 to 4).

    The estimators report ``Lambda`` as ``C_``, the scikit-learn ``C`` of
    this ``Lambda``.

    Parameters
    ----------
    noise_std : float
        Std of the noise on each entry of a released mean gradient.
    n_features : int
        ``d``, the mapped features (the intercept's column included).
    signal : float or None, default=None
        ``gamma``: with a value, ``Lambda`` is at least ``c noise_std^2 /
        signal`` (label-DP DP-Newton's :data:`NEWTON_LABEL_SIGNAL`).

    Returns
    -------
    float
    """
    reg = LogisticLoss.c * math.sqrt(n_features / 2.0) * noise_std
    if signal is not None:
        reg = max(reg, LogisticLoss.c * noise_std ** 2 / signal)
    return reg
