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
label): that relation, the library's own, is accounted in
:mod:`~sklearn_labeldp.accounting._label_change`, on the primitives here.
:func:`calibrate_dp_sgd` reaches a label budget through group privacy of the
add/remove accounting (:mod:`~sklearn_labeldp.accounting._group_privacy`).
:func:`~sklearn_labeldp.accounting.get_noise_multiplier` is the one public
calibration over the relations.
"""

import functools
import logging
import math

import numpy as np

from ..utils import check_int, check_option, check_positive, check_unit_interval
from ._group_privacy import group_privacy_example_budget

__all__ = [
    "SUBSAMPLED_GAUSSIAN_METHODS",
    "calibrate_dp_sgd",
    "subsampled_gaussian_epsilon",
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
    return (check_positive(noise_multiplier, "noise_multiplier"),
            check_unit_interval(sample_rate, "sample_rate", include_upper=True),
            check_int(steps, "steps", minimum=1))


def _check_run_epsilon(epsilon, upper=math.inf):
    """A calibrated run's computed ``epsilon``, refused unless in ``(0, upper]``.

    Not an argument check: the accountant's result, which no budget can be
    charged with if it is 0, infinite or NaN. The message says so, naming
    public quantities only.
    """
    if not (math.isfinite(epsilon) and 0 < epsilon <= upper):
        raise ValueError(f"the run's epsilon computes as {epsilon!r}")
    return epsilon


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
    return noise_multiplier, _check_run_epsilon(example_epsilon), example_delta


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
            f"description {key!r}: must be a tuple (noise_multiplier, sample_rate, "
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
    description = spend.description
    if description is not None and description.kind == "subsampled_gaussian":
        return _dp_event(*description.value)
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
