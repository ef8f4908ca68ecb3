"""Poisson-subsampled Gaussian (DP-SGD) accounting through Google's dp-accounting.

Each step of DP-SGD (Abadi et al. 2016) includes every example independently
with probability ``sample_rate``, adds Gaussian noise of std ``noise_multiplier``
times the clipping norm to the sum of clipped per-example gradients, and is the
Poisson-subsampled Gaussian mechanism; ``steps`` of them compose. Neighbouring
datasets differ by adding or removing one example. The accounting itself, Renyi
DP (Mironov 2017; Mironov, Talwar and Zhang 2019) or privacy loss distributions
(Koskela et al. 2020; Doroshenko et al. 2022), is dp-accounting's, installed by
the ``accounting`` extra; :data:`SUBSAMPLED_GAUSSIAN_METHODS` names the two.

A label change replaces one example by another (same features, another
label), so the library's own relation is the replace-one relation:
:func:`subsampled_gaussian_label_epsilon` accounts it directly with
dp-accounting's privacy loss distribution of the replace-one dominating pair
(Zhu, Dong and Wang 2022; Lebeda et al. 2024), which only the PLD accountant
computes; :func:`calibrate_dp_sgd_label_change` is the calibration on it.

:func:`calibrate_dp_sgd` is the one calibration of DP-SGD in the library, for
every estimator that runs it (the network of
:class:`~sklearn_labeldp.nn.DPSGDClassifier` and the Poisson minibatches of
:class:`~sklearn_labeldp.linear_model.DPLogisticRegression`): the label budget
is reached through group privacy
(:mod:`~sklearn_labeldp.accounting._group_privacy`).
"""

import functools
import logging
import math
from numbers import Integral, Real

import numpy as np

from ..utils import check_option, check_positive, check_unit_interval
from ._group_privacy import group_privacy_example_budget

__all__ = [
    "SUBSAMPLED_GAUSSIAN_METHODS",
    "calibrate_dp_sgd",
    "calibrate_dp_sgd_label_change",
    "subsampled_gaussian_epsilon",
    "subsampled_gaussian_label_epsilon",
    "subsampled_gaussian_label_noise_multiplier",
    "subsampled_gaussian_noise_multiplier",
]

# dp-accounting's accountants of the subsampled Gaussian, by the name the
# estimators' `accounting` parameter and the `method` arguments here take.
SUBSAMPLED_GAUSSIAN_METHODS = ("rdp", "pld")
# Relative width of the final bracket of the noise-multiplier bisection.
_NOISE_RTOL = 1e-6
# The bracket search gives up beyond 2**_MAX_DOUBLINGS times its starting value.
_MAX_DOUBLINGS = 60
# Grids of privacy-loss values of the PLD accountant: dp-accounting's default for
# every recorded epsilon, and a 10x coarser one (10x faster, also a pessimistic
# upper bound) for the replace-one calibration's bisection, whose result is then
# checked on the fine grid.
_FINE = 1e-4
_COARSE = 1e-3
# Runs whose (quick) add/remove RDP epsilon exceeds this get grids wider in proportion. The
# composed privacy loss spans a range that grows with the epsilon, and a fixed
# spacing needs memory in proportion: DPSGDClassifier(epsilon=1000) took more than
# 6 GB and epsilon=1e6 was killed for memory. A wider pessimistic grid still bounds
# the loss from above (valid, a little looser); the spacing is a function of the
# run's parameters, so a record's check computes on the grid its calibration used.
_GRID_FREE_EPSILON = 50.0


def _dp_accounting():
    try:
        import dp_accounting
    except ImportError as exc:
        raise ImportError(
            "subsampled Gaussian (DP-SGD) accounting needs the dp-accounting package: "
            "pip install 'sklearn-labeldp[accounting]'."
        ) from exc
    return dp_accounting


def _check_subsampled_gaussian(noise_multiplier, sample_rate, steps):
    """Validated ``(noise_multiplier, sample_rate, steps)`` as ``(float, float, int)``."""
    noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, Real):
        raise TypeError(f"sample_rate must be a real number; got {sample_rate!r}.")
    if not 0 < sample_rate <= 1:
        raise ValueError(f"sample_rate must lie in (0, 1]; got {sample_rate!r}.")
    if isinstance(steps, bool) or not isinstance(steps, Integral):
        raise TypeError(f"steps must be an integer; got {steps!r}.")
    if steps < 1:
        raise ValueError(f"steps must be an integer >= 1; got {steps!r}.")
    return noise_multiplier, float(sample_rate), int(steps)


def _dp_event(noise_multiplier, sample_rate, steps):
    """dp-accounting's event for ``steps`` Poisson-subsampled Gaussian releases."""
    dpa = _dp_accounting()
    return dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(sample_rate, dpa.GaussianDpEvent(noise_multiplier)), steps
    )


# The internal method name of the replace-one accounting (a label change), which
# only the PLD accountant computes; not one of SUBSAMPLED_GAUSSIAN_METHODS.
_REPLACE_ONE = "pld-replace-one"
# The add/remove RDP epsilon on a few orders, a twelfth of the default orders' cost:
# the scale of a run's PLD grid (_GRID_FREE_EPSILON), never a recorded guarantee.
_GRID_SCALE = "rdp-grid-scale"
_GRID_SCALE_ORDERS = (1.1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256)


def _accountant(method, discretization):
    dpa = _dp_accounting()
    if method == "rdp":
        return dpa.rdp.RdpAccountant()
    if method == _GRID_SCALE:
        return dpa.rdp.RdpAccountant(_GRID_SCALE_ORDERS)
    relation = (dpa.NeighboringRelation.REPLACE_ONE if method == _REPLACE_ONE
                else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    return dpa.pld.PLDAccountant(relation, value_discretization_interval=discretization)


@functools.lru_cache(maxsize=256)
def _epsilon(noise_multiplier, sample_rate, steps, delta, method, discretization=_FINE):
    """The conversion on validated inputs (cached: spend records check their epsilon).

    ``discretization`` is the PLD grid's spacing for runs of an ordinary
    epsilon; a run whose add/remove RDP epsilon (on ``_GRID_SCALE_ORDERS``)
    exceeds ``_GRID_FREE_EPSILON`` gets it widened in proportion.
    """
    if method not in ("rdp", _GRID_SCALE):
        scale = _epsilon(noise_multiplier, sample_rate, steps, delta, _GRID_SCALE)
        discretization *= max(1.0, scale / _GRID_FREE_EPSILON)
    event = _dp_event(noise_multiplier, sample_rate, steps)
    # dp-accounting logs a warning for each fractional Renyi order whose series it
    # cannot sum; it leaves that order out of the minimum, which stays a valid bound.
    # At an epsilon in the hundreds a ratio of PLD masses can pass e^709, and numpy
    # warns of the overflow: the ratio becomes inf, so the epsilon returned is inf
    # (a probe judged infeasible: more noise), never too small. Silenced: it alarms
    # a user of DPSGDClassifier(epsilon=500) about nothing.
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        accountant = _accountant(method, discretization)
        with np.errstate(over="ignore"):
            return max(0.0, float(accountant.compose(event).get_epsilon(delta)))
    finally:
        absl.setLevel(level)


def subsampled_gaussian_epsilon(noise_multiplier, sample_rate, steps, delta, method="rdp"):
    """Epsilon of ``steps`` compositions of the Poisson-subsampled Gaussian mechanism.

    The privacy of DP-SGD (Abadi et al. 2016) with Poisson sampling: each step
    includes every example independently with probability ``sample_rate`` and
    adds Gaussian noise of std ``noise_multiplier`` (relative to the L2
    sensitivity, the clipping norm) to the sum. Neighbouring datasets differ by
    adding or removing one example. The computation is dp-accounting's
    ``PoissonSampledDpEvent(GaussianDpEvent)`` self-composed ``steps`` times.

    Parameters
    ----------
    noise_multiplier : float
        Noise std divided by the L2 sensitivity, > 0.
    sample_rate : float
        Poisson sampling probability ``q`` in ``(0, 1]``; ``1`` is full-batch
        and then the run is exactly ``steps / (2 noise_multiplier^2)``-zCDP.
    steps : int
        Number of composed steps, >= 1.
    delta : float
        Target delta in (0, 1).
    method : {"rdp", "pld"}, default="rdp"
        ``"rdp"``: Renyi DP of the subsampled Gaussian (Mironov, Talwar and
        Zhang 2019) at dp-accounting's default orders, composed by addition
        and converted with Canonne, Kamath and Steinke (2020, Prop. 12).
        ``"pld"``: privacy loss distributions (Koskela et al. 2020;
        Doroshenko et al. 2022) with pessimistic discretisation, usually
        tighter.

    Returns
    -------
    float
        An epsilon (>= 0) such that the composition is (epsilon, delta)-DP.

    Raises
    ------
    ValueError
        If an argument is out of range (checked before any computation).
    ImportError
        If dp-accounting (the ``accounting`` extra) is not installed.

    See Also
    --------
    subsampled_gaussian_noise_multiplier : The inverse.

    References
    ----------
    Abadi et al. 2016, "Deep Learning with Differential Privacy".
    Mironov, Talwar and Zhang 2019, "Renyi Differential Privacy of the Sampled
    Gaussian Mechanism".
    Doroshenko et al. 2022, "Connect the Dots: Tighter Discrete Approximations
    of Privacy Loss Distributions".

    Examples
    --------
    Abadi et al.'s setting (q = 0.01, sigma = 4, 100 epochs) reported
    epsilon = 1.26 with the moments accountant:

    >>> from sklearn_labeldp.accounting import subsampled_gaussian_epsilon
    >>> round(subsampled_gaussian_epsilon(4.0, 0.01, 10_000, 1e-5), 2)
    1.04
    >>> round(subsampled_gaussian_epsilon(4.0, 0.01, 10_000, 1e-5, method="pld"), 2)
    0.95
    """
    noise_multiplier, sample_rate, steps = _check_subsampled_gaussian(
        noise_multiplier, sample_rate, steps
    )
    delta = check_unit_interval(delta, "delta")
    check_option(method, "method", SUBSAMPLED_GAUSSIAN_METHODS)
    return _epsilon(noise_multiplier, sample_rate, steps, delta, method)


def subsampled_gaussian_noise_multiplier(target_epsilon, sample_rate, steps, delta, method="rdp"):
    """Smallest noise multiplier (to a relative ``1e-6``) whose DP-SGD run is within a budget.

    The inverse of :func:`subsampled_gaussian_epsilon`. Adding more noise is a
    post-processing of the less noisy release, so the true epsilon does not
    increase with ``noise_multiplier``; the search bisects ``log
    noise_multiplier`` between a multiplier found infeasible and one found
    feasible, and returns the feasible end once the two are within a relative
    ``1e-6``. The returned value is always one whose computed epsilon was at
    most ``target_epsilon`` (whatever the numerical behaviour of the
    accountant), and at most ``1 + 1e-6`` times a multiplier that was found
    to exceed it.

    Parameters
    ----------
    target_epsilon : float
        > 0.
    sample_rate : float
        Poisson sampling probability in ``(0, 1]``.
    steps : int
        Number of composed steps, >= 1.
    delta : float
        Target delta in (0, 1).
    method : {"rdp", "pld"}, default="rdp"
        Accountant, as in :func:`subsampled_gaussian_epsilon`.

    Returns
    -------
    float
        A noise multiplier with
        ``subsampled_gaussian_epsilon(result, sample_rate, steps, delta, method)
        <= target_epsilon``.

    Raises
    ------
    ValueError
        If an argument is out of range, or if no multiplier within a factor
        ``2**60`` of 1 reaches ``target_epsilon``.
    ImportError
        If dp-accounting (the ``accounting`` extra) is not installed.

    References
    ----------
    Abadi et al. 2016, "Deep Learning with Differential Privacy".
    Mironov, Talwar and Zhang 2019, "Renyi Differential Privacy of the Sampled
    Gaussian Mechanism".

    Examples
    --------
    >>> from sklearn_labeldp.accounting import (
    ...     subsampled_gaussian_epsilon, subsampled_gaussian_noise_multiplier)
    >>> sigma = subsampled_gaussian_noise_multiplier(1.0, 0.01, 10_000, 1e-5)
    >>> round(sigma, 3)
    4.126
    >>> subsampled_gaussian_epsilon(sigma, 0.01, 10_000, 1e-5) <= 1.0
    True
    """
    target_epsilon = check_positive(target_epsilon, "target_epsilon")
    _, sample_rate, steps = _check_subsampled_gaussian(1.0, sample_rate, steps)
    delta = check_unit_interval(delta, "delta")
    check_option(method, "method", SUBSAMPLED_GAUSSIAN_METHODS)
    return _noise_multiplier(target_epsilon, sample_rate, steps, delta, method)


def _noise_multiplier(target_epsilon, sample_rate, steps, delta, method, discretization=_FINE):
    """The bisection of :func:`subsampled_gaussian_noise_multiplier` on validated inputs."""

    def feasible(sigma):
        return _epsilon(sigma, sample_rate, steps, delta, method, discretization) <= target_epsilon

    # Invariant once bracketed: feasible(hi) and not feasible(lo).
    lo = hi = 1.0
    for _ in range(_MAX_DOUBLINGS):
        if feasible(hi):
            break
        lo, hi = hi, 2.0 * hi
    else:
        raise ValueError(
            f"no noise multiplier up to {hi} gives epsilon <= {target_epsilon} "
            f"(sample_rate={sample_rate}, steps={steps}, delta={delta}, method={method!r})."
        )
    if lo == hi:
        for _ in range(_MAX_DOUBLINGS):
            lo = hi / 2.0
            if not feasible(lo):
                break
            hi = lo
        else:
            return hi
    while hi / lo > 1.0 + _NOISE_RTOL:
        mid = math.sqrt(lo * hi)
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    return hi


def calibrate_dp_sgd(epsilon, delta, sample_rate, n_steps, method="rdp"):
    """The noise multiplier of a DP-SGD run within a label budget, and its example guarantee.

    DP-SGD with Poisson sampling (Abadi et al. 2016) is accounted for adding or
    removing one example; a label change is a removal followed by an
    addition, so an add/remove guarantee ``(eps_ex, delta_ex)`` gives ``(2
    eps_ex, (1 + e^eps_ex) delta_ex)`` for it (group privacy, Dwork and Roth
    2014). The target is therefore
    :func:`~sklearn_labeldp.accounting.group_privacy_example_budget`'s
    ``eps_ex = epsilon / 2`` (at most 500) and ``delta_ex = delta / (1 +
    e^eps_ex)``; the noise multiplier is
    :func:`subsampled_gaussian_noise_multiplier` for it, and the guarantee
    returned is the one the accountant computes for that multiplier, at most
    the target. Every input is public: a run that cannot be calibrated raises
    before any label is read.

    Parameters
    ----------
    epsilon : float
        Label-DP epsilon budget of the run, > 0.
    delta : float
        Label-DP delta budget, in (0, 1).
    sample_rate : float
        Poisson sampling probability ``q`` in ``(0, 1]``.
    n_steps : int
        Number ``T`` of noisy steps, >= 1.
    method : {"rdp", "pld"}, default="rdp"
        dp-accounting's accountant (:data:`SUBSAMPLED_GAUSSIAN_METHODS`), as in
        :func:`subsampled_gaussian_epsilon`.

    Returns
    -------
    noise_multiplier : float
        Noise std divided by the clipping norm.
    example_epsilon, example_delta : float
        The add/remove guarantee of the run, ``example_epsilon <= epsilon /
        2``; :func:`~sklearn_labeldp.accounting.group_privacy_label_budget`
        turns it into the label-change guarantee charged.

    Raises
    ------
    ValueError
        If an argument is out of range, if no noise multiplier reaches the
        target, or if the accountant computes the run's epsilon as 0 or as a
        non-finite value (no budget can be charged with it). The message
        names public quantities only.
    ImportError
        If dp-accounting (the ``accounting`` extra) is not installed.

    References
    ----------
    Abadi et al. 2016, "Deep Learning with Differential Privacy".
    Dwork and Roth 2014, "The Algorithmic Foundations of Differential
    Privacy", Sec. 2.3 (group privacy).

    Examples
    --------
    >>> from sklearn_labeldp.accounting import calibrate_dp_sgd
    >>> sigma, eps_ex, delta_ex = calibrate_dp_sgd(2.0, 1e-5, 0.01, 1_000)
    >>> round(sigma, 3), eps_ex <= 1.0, round(delta_ex * 1e6, 4)
    (1.598, True, 2.6894)
    """
    example_target, example_delta = group_privacy_example_budget(epsilon, delta)
    noise_multiplier = subsampled_gaussian_noise_multiplier(
        example_target, sample_rate, n_steps, example_delta, method=method
    )
    example_epsilon = subsampled_gaussian_epsilon(
        noise_multiplier, sample_rate, n_steps, example_delta, method=method
    )
    if not (math.isfinite(example_epsilon) and example_epsilon > 0):
        raise ValueError(f"the run's epsilon computes as {example_epsilon!r}")
    return noise_multiplier, example_epsilon, example_delta


def subsampled_gaussian_label_epsilon(noise_multiplier, sample_rate, steps, delta):
    """Epsilon of ``steps`` Poisson-subsampled Gaussian steps for a label change (replace one).

    The label-DP guarantee of DP-SGD accounted directly, without group privacy.
    A label change replaces one example ``(x, y)`` by ``(x, y')``. In each step,
    given the other examples' batch ``B``, the example is included with
    probability ``q`` and the released sum is ``N(S_B + b g, sigma^2 C^2 I)``
    with ``b ~ Bernoulli(q)`` and ``g`` its clipped gradient, ``||g|| <= C``,
    for one label and ``g'`` (``||g'|| <= C``) for the other. The pair of
    one-dimensional laws ``P = q N(-1, sigma^2) + (1 - q) N(0, sigma^2)`` and
    ``Q = q N(1, sigma^2) + (1 - q) N(0, sigma^2)`` (in units of ``C``: the two
    gradients opposite, ``2C`` apart, each ``C`` from the common part) is a
    dominating pair of one step for the replace-one relation under Poisson
    sampling (Lebeda et al. 2024), and dominating pairs compose, adaptively,
    by composing their privacy loss distributions (Zhu, Dong and Wang 2022).
    dp-accounting's PLD accountant with ``NeighboringRelation.REPLACE_ONE``
    builds exactly this pair for ``PoissonSampledDpEvent(q,
    GaussianDpEvent(sigma))`` (its ``sensitivity`` bounds each example's
    contribution, so the two laws sit ``2C`` apart: ``noise_multiplier`` is
    passed unchanged) and composes it ``steps`` times with pessimistic
    discretisation (Doroshenko et al. 2022), an upper bound on the true
    epsilon. With ``sample_rate = 1`` it is the Gaussian mechanism of
    sensitivity ``2C``. Requires dp-accounting >= 0.6.

    Parameters
    ----------
    noise_multiplier : float
        Noise std divided by the clipping norm ``C``, > 0.
    sample_rate : float
        Poisson sampling probability ``q`` in ``(0, 1]``.
    steps : int
        Number of composed steps, >= 1.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float
        An epsilon (>= 0) such that the run is (epsilon, delta)-label-DP.

    Raises
    ------
    ValueError
        If an argument is out of range (checked before any computation).
    ImportError
        If dp-accounting (the ``accounting`` extra) is not installed.

    See Also
    --------
    subsampled_gaussian_epsilon : The add/remove (example-level) guarantee.
    calibrate_dp_sgd_label_change : The calibration on this accounting.

    References
    ----------
    Zhu, Dong and Wang 2022, "Optimal Accounting of Differential Privacy via
    Characteristic Function" (dominating pairs and their composition).
    Lebeda, Regehr, Kamath and Steinke 2024, "Avoiding Pitfalls for Privacy
    Accounting of Subsampled Mechanisms under Composition" (the Gaussian's
    dominating pairs under Poisson sampling for the substitution relation).
    Doroshenko et al. 2022, "Connect the Dots: Tighter Discrete Approximations
    of Privacy Loss Distributions".

    Examples
    --------
    Abadi et al.'s setting: group privacy would record twice the add/remove
    epsilon (about 1.9 with PLD), the direct accounting about as much:

    >>> from sklearn_labeldp.accounting import subsampled_gaussian_label_epsilon
    >>> round(subsampled_gaussian_label_epsilon(4.0, 0.01, 10_000, 1e-5), 2)
    1.99
    >>> round(subsampled_gaussian_label_epsilon(1.0, 0.1, 30, 1e-5), 2)
    5.55
    """
    noise_multiplier, sample_rate, steps = _check_subsampled_gaussian(
        noise_multiplier, sample_rate, steps
    )
    delta = check_unit_interval(delta, "delta")
    return _epsilon(noise_multiplier, sample_rate, steps, delta, _REPLACE_ONE)


def subsampled_gaussian_label_noise_multiplier(target_epsilon, sample_rate, steps, delta):
    """Smallest noise multiplier (to a relative ``1e-6``) whose DP-SGD run is within a label budget.

    The inverse of :func:`subsampled_gaussian_label_epsilon`, by the bisection
    of :func:`subsampled_gaussian_noise_multiplier` on a 10x coarser grid of
    privacy-loss values (also pessimistic, 10x faster): the value returned is
    one whose label-change epsilon, computed as
    :func:`subsampled_gaussian_label_epsilon` does, is at most
    ``target_epsilon``.

    Parameters
    ----------
    target_epsilon : float
        > 0.
    sample_rate : float
        Poisson sampling probability in ``(0, 1]``.
    steps : int
        Number of composed steps, >= 1.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If an argument is out of range, or if no multiplier within a factor
        ``2**60`` of 1 reaches ``target_epsilon``.
    ImportError
        If dp-accounting (the ``accounting`` extra) is not installed.

    Examples
    --------
    >>> from sklearn_labeldp.accounting import (
    ...     subsampled_gaussian_label_epsilon, subsampled_gaussian_label_noise_multiplier)
    >>> sigma = subsampled_gaussian_label_noise_multiplier(2.0, 0.01, 10_000, 1e-5)
    >>> round(sigma, 2), subsampled_gaussian_label_epsilon(sigma, 0.01, 10_000, 1e-5) <= 2.0
    (4.0, True)
    """
    target_epsilon = check_positive(target_epsilon, "target_epsilon")
    _, sample_rate, steps = _check_subsampled_gaussian(1.0, sample_rate, steps)
    delta = check_unit_interval(delta, "delta")
    return _label_noise_multiplier(target_epsilon, sample_rate, steps, delta)[0]


def _label_noise_multiplier(target_epsilon, sample_rate, steps, delta, method=_REPLACE_ONE):
    """``(sigma, its epsilon on the fine grid)`` on validated inputs, for a PLD ``method``.

    The search runs on the coarse grid; its answer stands if the fine grid
    (what is recorded) agrees that it is within the target, else the search is
    redone on the fine grid. The fine-grid epsilon is returned with it, so a
    caller that records it does not compute the same distribution again.
    """
    sigma = _noise_multiplier(target_epsilon, sample_rate, steps, delta, method, _COARSE)
    epsilon = _epsilon(sigma, sample_rate, steps, delta, method)
    if epsilon > target_epsilon:
        sigma = _noise_multiplier(target_epsilon, sample_rate, steps, delta, method)
        epsilon = _epsilon(sigma, sample_rate, steps, delta, method)
    return sigma, epsilon


# A pure function of public numbers, and a privacy loss distribution per call
# (seconds, up to a minute at a huge epsilon): fits with the same data size and
# budget (a search, cross-validation, the estimator checks) calibrate once.
@functools.lru_cache(maxsize=256)
def calibrate_dp_sgd_label_change(epsilon, delta, sample_rate, n_steps):
    """The noise multiplier of a DP-SGD run within a label budget, accounted for a label change.

    Unlike :func:`calibrate_dp_sgd` (the add/remove accounting and group
    privacy), the label budget is met directly: the noise multiplier is
    :func:`subsampled_gaussian_label_noise_multiplier` for ``(epsilon,
    delta)``, and the guarantee returned is the one computed for it. The same
    budget buys less noise (a clipped gradient moves by at most ``2C`` when
    its label changes, where group privacy pays for two ``C`` moves and the
    ``(1 + e^eps_ex)`` factor on delta). The example-level (add/remove)
    guarantee of the same run, at the same ``delta``, is returned beside it
    (dp-accounting's PLD accountant). Every input is public: a run that cannot
    be calibrated raises before any label is read.

    Parameters
    ----------
    epsilon : float
        Label-DP epsilon budget of the run, > 0.
    delta : float
        Label-DP delta budget, in (0, 1).
    sample_rate : float
        Poisson sampling probability ``q`` in ``(0, 1]``.
    n_steps : int
        Number ``T`` of noisy steps, >= 1.

    Returns
    -------
    noise_multiplier : float
        Noise std divided by the clipping norm.
    label_epsilon : float
        :func:`subsampled_gaussian_label_epsilon` of the run at ``delta``, at
        most ``epsilon``.
    example_epsilon : float
        :func:`subsampled_gaussian_epsilon` (``method="pld"``) of the run at
        ``delta``: the add/remove guarantee usually quoted for DP-SGD.

    Raises
    ------
    ValueError
        If an argument is out of range, if no noise multiplier reaches the
        target, or if the run's epsilon computes as 0 or as a non-finite value.
    ImportError
        If dp-accounting (the ``accounting`` extra) is not installed.

    References
    ----------
    Abadi et al. 2016, "Deep Learning with Differential Privacy".
    Zhu, Dong and Wang 2022, "Optimal Accounting of Differential Privacy via
    Characteristic Function".

    Examples
    --------
    >>> from sklearn_labeldp.accounting import calibrate_dp_sgd, calibrate_dp_sgd_label_change
    >>> sigma, label_eps, example_eps = calibrate_dp_sgd_label_change(2.0, 1e-5, 0.01, 1_000)
    >>> round(sigma, 3), label_eps <= 2.0, example_eps < label_eps
    (1.297, True, True)
    >>> sigma < calibrate_dp_sgd(2.0, 1e-5, 0.01, 1_000)[0]   # group privacy: 1.598
    True
    """
    epsilon = check_positive(epsilon, "epsilon")
    _, sample_rate, n_steps = _check_subsampled_gaussian(1.0, sample_rate, n_steps)
    delta = check_unit_interval(delta, "delta")
    noise_multiplier, label_epsilon = _label_noise_multiplier(epsilon, sample_rate, n_steps, delta)
    if not (math.isfinite(label_epsilon) and label_epsilon > 0):
        raise ValueError(f"the run's epsilon computes as {label_epsilon!r}")
    example_epsilon = subsampled_gaussian_epsilon(
        noise_multiplier, sample_rate, n_steps, delta, method="pld"
    )
    return noise_multiplier, label_epsilon, example_epsilon


# --------------------------------------------------------------------- bounded label change
#
# DP-SGD on a model whose per-example gradient moves by less than twice its clipping
# norm when the label changes (the linear models): the two bounds, each example's
# norm <= B and a label change's move <= D, give two dominating pairs, and the smaller
# of their composed epsilons is a valid record.

# The spend key of each dominating pair (the record's description, see _pld.py):
# the replace-one pair +-B, and the add/remove pair of sensitivity D.
_BOUNDED_PAIRS = (("subsampled_gaussian_label", _REPLACE_ONE),
                  ("subsampled_gaussian", "pld"))


def bounded_label_change_epsilon(noise_std, sample_rate, steps, delta, *, norm_bound,
                                 change_bound, straddle):
    """Label-change epsilon of Poisson-subsampled Gaussian steps whose change is bounded twice.

    Each step releases ``sum_{i in batch} g_i + N(0, noise_std^2 I)``, every
    example joining the batch independently with probability ``q``; one
    example's contribution ``g`` (``||g|| <= B = norm_bound``) becomes ``g'``
    (``||g'|| <= B``, ``||g - g'|| <= D = change_bound``) when its label
    changes. Given the others' sum, one step's two laws are ``(1 - q) N(0) + q
    N(g)`` and ``(1 - q) N(0) + q N(g')``: three points ``0, g, g'``. Two
    dominating pairs (Zhu, Dong and Wang 2022) of every such configuration:

    - the replace-one pair ``(1 - q) N(0) + q N(-B)``, ``(1 - q) N(0) + q
      N(B)`` (Lebeda, Regehr, Kamath and Steinke 2024), which needs only the
      norms; it is the worst case when ``D = 2B`` (``g' = -g``);
    - with ``straddle`` (``0, g, g'`` collinear, ``0`` between ``g`` and
      ``g'``, as for a binary logistic loss, where ``g = (p - y) z`` and the
      residuals of the two labels have opposite signs): the add/remove pair of
      sensitivity ``D``, ``N(0)`` and ``(1 - q) N(0) + q N(D)``. With ``g =
      -u e``, ``g' = v e``, ``u + v <= D``, advanced joint convexity (Balle,
      Barthe and Gaboardi 2018) writes the divergence as ``q H(N(-u) || (1 -
      b) N(0) + b N(v))``, which grows as the shared component ``N(0)`` moves
      to an end of the segment: the worst case is ``u = 0`` (or ``v = 0``),
      the add/remove pair (checked numerically in the tests on a grid of
      ``q``, noise and epsilon; the symmetric pair ``u = v = D / 2`` is *not*
      dominating: at ``q = 0.01``, std ``0.5 D``, ``eps = 0.05`` its ``delta``
      is 8 times smaller than the worst configuration's).

    Both dominate every step, whatever the earlier outputs, so the composition
    of either over ``steps`` bounds the run (adaptive composition of dominating
    pairs, Zhu, Dong and Wang 2022, Thm. 10), and the smaller epsilon is a
    valid record. dp-accounting's privacy loss distributions compute both
    (pessimistic discretisation).

    Parameters
    ----------
    noise_std : float
        Noise std on the released sum, in the units of ``B`` and ``D``.
    sample_rate : float
        ``q`` in ``(0, 1]``.
    steps : int
    delta : float
        In (0, 1).
    norm_bound : float
        ``B`` > 0.
    change_bound : float
        ``D`` in ``(0, 2 B]``.
    straddle : bool
        Whether the add/remove pair applies (see above).

    Returns
    -------
    epsilon : float
    key : str
        ``"subsampled_gaussian_label"`` (the replace-one pair gave the
        minimum) or ``"subsampled_gaussian"`` (the add/remove pair did): the
        spend key whose value describes the dominating pair.
    value : tuple
        ``(noise_std / B or noise_std / D, sample_rate, steps)``.

    References
    ----------
    Zhu, Dong and Wang 2022, "Optimal Accounting of Differential Privacy via
    Characteristic Function".
    Lebeda, Regehr, Kamath and Steinke 2024, "Avoiding Pitfalls for Privacy
    Accounting of Subsampled Mechanisms under Composition".
    Balle, Barthe and Gaboardi 2018, "Privacy Amplification by Subsampling:
    Tight Analyses via Couplings and Divergences".

    Examples
    --------
    A binary logistic model's clipped gradients (``B = 1``, ``D = 1``): the
    label change costs the add/remove epsilon of sensitivity 1, below the
    replace-one pair's:

    >>> from sklearn_labeldp.accounting._subsampled import bounded_label_change_epsilon
    >>> eps, key, value = bounded_label_change_epsilon(
    ...     1.0, 0.01, 1_000, 1e-5, norm_bound=1.0, change_bound=1.0, straddle=True)
    >>> round(eps, 2), key
    (1.83, 'subsampled_gaussian')
    """
    noise_std, sample_rate, steps = _check_subsampled_gaussian(noise_std, sample_rate, steps)
    delta = check_unit_interval(delta, "delta")
    norm_bound = check_positive(norm_bound, "norm_bound")
    change_bound = check_positive(change_bound, "change_bound")
    if change_bound > 2.0 * norm_bound:
        raise ValueError(f"change_bound={change_bound!r} exceeds 2 * norm_bound={norm_bound!r}.")
    best = None
    for (key, method), bound in _pairs(straddle, norm_bound, change_bound):
        value = (noise_std / bound, sample_rate, steps)
        epsilon = _epsilon(*value, delta, method)
        if best is None or epsilon < best[0]:
            best = (epsilon, key, value)
    return best


# Above this label epsilon the privacy loss distributions get too fine to build (12 s
# and 0.5 GB at 50, out of memory at 1e9): the calibration falls back to Renyi DP.
_PLD_EPSILON_CAP = 32.0
# The Renyi-DP fallback's target is capped: beyond it the noise is negligible anyway.
_RDP_EPSILON_CAP = 500.0


def _pairs(straddle, norm_bound, change_bound):
    """``((key, method), bound)`` of each dominating pair that applies."""
    pairs = zip(_BOUNDED_PAIRS, (norm_bound, change_bound), strict=True)
    return list(pairs) if straddle else list(pairs)[:1]


@functools.lru_cache(maxsize=256)
def calibrate_bounded_label_change(epsilon, delta, sample_rate, n_steps, norm_bound,
                                   change_bound, straddle):
    """The smallest noise std whose run is within a label budget by
    :func:`bounded_label_change_epsilon`.

    Each dominating pair is calibrated on its own (the bisection of
    :func:`subsampled_gaussian_noise_multiplier` on dp-accounting's privacy loss
    distributions, coarse grid checked on the fine one), scaled back by its
    bound (``B`` or ``D``); the smaller std is taken and recorded with the
    smaller epsilon of the pairs at that std. Public inputs only; cached (a
    search calibrates the same run many times).

    Above a label epsilon of 32 the privacy loss distributions are too fine to
    build; the calibration then uses dp-accounting's Renyi-DP bound of the
    add/remove pair of sensitivity ``D`` (with ``straddle``) or ``2 B``, which
    dominates the replace-one pair ``+-B`` (its configuration ``u = v = B`` is
    one of the straddling family of ``D = 2 B``), at ``min(epsilon, 500)``,
    and returns no description (``key`` and ``value`` None: the record then
    composes by the basic sum).

    Parameters
    ----------
    epsilon : float
        Label budget, > 0.
    delta : float
        In (0, 1).
    sample_rate : float
    n_steps : int
    norm_bound, change_bound : float
    straddle : bool
        As in :func:`bounded_label_change_epsilon`.

    Returns
    -------
    noise_std : float
    label_epsilon : float
        At most ``epsilon``.
    key : str
    value : tuple
        As in :func:`bounded_label_change_epsilon`.

    Raises
    ------
    ValueError
        If an argument is out of range or no noise reaches the target.
    """
    epsilon = check_positive(epsilon, "epsilon")
    _, sample_rate, n_steps = _check_subsampled_gaussian(1.0, sample_rate, n_steps)
    delta = check_unit_interval(delta, "delta")
    if epsilon > _PLD_EPSILON_CAP:
        bound = change_bound if straddle else 2.0 * norm_bound
        target = min(epsilon, _RDP_EPSILON_CAP)
        sigma = _noise_multiplier(target, sample_rate, n_steps, delta, "rdp")
        return bound * sigma, _epsilon(sigma, sample_rate, n_steps, delta, "rdp"), None, None
    stds = [bound * _label_noise_multiplier(epsilon, sample_rate, n_steps, delta, method)[0]
            for (_, method), bound in _pairs(straddle, norm_bound, change_bound)]
    noise_std = min(stds)
    label_epsilon, key, value = bounded_label_change_epsilon(
        noise_std, sample_rate, n_steps, delta, norm_bound=norm_bound,
        change_bound=change_bound, straddle=straddle)
    if not (math.isfinite(label_epsilon) and 0 < label_epsilon <= epsilon):
        raise ValueError(f"the run's epsilon computes as {label_epsilon!r}")
    return noise_std, label_epsilon, key, value


# The params keys of a subsampled-Gaussian leaf: the relation each is accounted for.
_SPEND_KEYS = {"subsampled_gaussian": None, "subsampled_gaussian_label": _REPLACE_ONE}


def subsampled_spend_epsilons(value, delta, key="subsampled_gaussian"):
    """The epsilons at ``delta`` that a record described by ``params[key] = value`` may state.

    ``key`` is ``"subsampled_gaussian"`` (add/remove one example: the RDP or
    the PLD accountant's bound, whichever the record was built with) or
    ``"subsampled_gaussian_label"`` (a label change: the replace-one PLD
    bound). Both sit above the exact value by design (pessimistic
    discretisation, Renyi DP's conversion). Yields them lazily, the cheap RDP
    bound first, after validating ``value = (noise_multiplier, sample_rate,
    steps)``.
    """
    if not isinstance(value, tuple) or len(value) != 3:
        raise ValueError(
            f"params[{key!r}] must be a tuple (noise_multiplier, sample_rate, "
            f"steps); got {value!r}."
        )
    value = _check_subsampled_gaussian(*value)
    delta = check_unit_interval(delta, "delta")
    methods = SUBSAMPLED_GAUSSIAN_METHODS if _SPEND_KEYS[key] is None else (_SPEND_KEYS[key],)
    for method in methods:
        yield _epsilon(*value, delta, method)


def _spend_event(spend):
    """A dp-accounting event whose Renyi DP bounds ``spend``'s, or ``None`` if none does.

    A subsampled-Gaussian leaf is its own event; a record with a zCDP
    guarantee (Gaussian mechanisms, pure-DP spends at ``epsilon^2 / 2``, and
    inner nodes of those) is ``rho``-zCDP, i.e. Renyi DP ``alpha rho`` at every
    order ``alpha`` (Bun and Steinke 2016); any other inner node composes its
    parts sequentially, which also bounds a parallel composition.
    """
    dpa = _dp_accounting()
    if spend.composition == "leaf" and "subsampled_gaussian" in spend.params:
        return _dp_event(*spend.params["subsampled_gaussian"])
    rho = spend.rho
    if rho is not None:
        return dpa.ZCDpEvent(rho)
    if spend.composition == "leaf":
        return None
    events = [_spend_event(part) for part in spend.parts]
    if any(event is None for event in events):
        return None
    return dpa.ComposedDpEvent(events)


def _rdp_epsilon(spends, delta):
    """Epsilon at ``delta`` of the Renyi-DP composition of ``spends``, or ``None``."""
    events = [_spend_event(spend) for spend in spends]
    if any(event is None for event in events):
        return None
    dpa = _dp_accounting()
    accountant = dpa.rdp.RdpAccountant().compose(dpa.ComposedDpEvent(events))
    return max(0.0, float(accountant.get_epsilon(delta)))
