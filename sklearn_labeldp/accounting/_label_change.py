"""DP-SGD accounted for a label change: the replace-one relation, directly.

A label change replaces one example ``(x, y)`` by ``(x, y')``: the library's
own neighbouring relation. :func:`subsampled_gaussian_label_epsilon` accounts
``steps`` Poisson-subsampled Gaussian steps under it with dp-accounting's
privacy loss distribution of the replace-one dominating pair (Zhu, Dong and
Wang 2022; Lebeda et al. 2024), which only the PLD accountant computes, and
:func:`calibrate_dp_sgd_label_change` is the calibration on it. For models
whose per-example gradient moves by less than twice its clipping norm when the
label changes (the linear models), :func:`bounded_label_change_epsilon` and
:func:`calibrate_bounded_label_change` take the smaller of two dominating
pairs. The add/remove relation and the dp-accounting primitives are in
:mod:`~sklearn_labeldp.accounting._subsampled`.
"""

import functools

from ..utils import check_positive, check_unit_interval
from ._subsampled import (
    _COARSE,
    _REPLACE_ONE,
    _check_run_epsilon,
    _check_subsampled_gaussian,
    _epsilon,
    _noise_multiplier,
    subsampled_gaussian_epsilon,
)

__all__ = [
    "bounded_label_change_epsilon",
    "calibrate_bounded_label_change",
    "calibrate_dp_sgd_label_change",
    "subsampled_gaussian_label_epsilon",
    "subsampled_gaussian_label_noise_multiplier",
]


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
    _check_run_epsilon(label_epsilon)
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

    >>> from sklearn_labeldp.accounting._label_change import bounded_label_change_epsilon
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
    return noise_std, _check_run_epsilon(label_epsilon, upper=epsilon), key, value
