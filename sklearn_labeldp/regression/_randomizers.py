"""The real-valued label randomizers of NoisyLabelRegressor, one row each.

Every row holds what the estimator dispatches on: the release function, the
public parameters it resolves at planning time, the ledger record of the
release, the keyword arguments of the release, the first two moments of the
release given the label (for the post-processing protocol and the debiasing
of RR-on-Bins' shrinkage), and whether it needs a prior. The estimator reads
rows, never names: a new randomizer is a row, its function and its tests
(see "Adding a regression randomizer" in the developers' guide).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..accounting import PrivacySpend, gaussian_rho
from ..mechanisms import (
    gaussian_label,
    gaussian_label_sigma,
    laplace_label,
    optimal_bins,
    rr_on_bins,
    staircase_gamma,
    staircase_label,
    unbiased_randomizer,
)
from ..mechanisms._randomized_response import rr_vote_inflation
from ._moments import (
    rr_on_bins_moments,
    staircase_variance,
    two_output_variance,
    unbiased_variance,
)

__all__ = [
    "RANDOMIZERS",
    "UNIFORM_SPREAD",
    "Randomizer",
    "RandomizerSetting",
    "release_moments",
    "resolve_debias",
    "spread_inflation",
]

# debias="auto" undoes RR-on-Bins' shrinkage when the n releases, once debiased,
# carry as much information as this many noise-free labels: a debiased release
# has its noise variance multiplied by 1 / (p - q)^2, so n releases weigh about
# n (p - q)^2 clean ones. Chosen from benchmarks/regression.py (Friedman #1 with
# 8,000 rows, Adult hours-per-week with 32,561, three seeds, see the user guide):
# debiasing lowered the test MSE wherever n (p - q)^2 >= 66 (Adult from eps 0.1,
# both from eps 0.5: by up to 30% at Friedman's eps 1), was within the seeds'
# spread at 16 (Friedman, eps 0.1) and raised it at 3.9 (Friedman, eps 0.05).
AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES = 50.0

# The squared width of the label range over the variance of labels spread
# evenly over it: the public scale the default k-NN measures noise against.
UNIFORM_SPREAD = 12.0


def spread_inflation(variance):
    """``1 + 12 variance``: a vote of unbiased releases of noise ``variance`` (per squared width).

    A k-NN prediction averages ``k`` releases; with labels spread evenly over
    the range (variance ``width^2 / 12``, the public reference: a label's
    own spread is unknown) and unbiased noise of variance ``variance
    width^2``, it needs ``1 + 12 variance`` times the neighbours of clean
    labels for the same variance.
    """
    return 1.0 + UNIFORM_SPREAD * variance


@dataclass(frozen=True)
class RandomizerSetting:
    """The public quantities a randomizer is planned from.

    Attributes
    ----------
    epsilon : float
        The randomizer's own epsilon (the fit's, less a DP prior's).
    delta : float
        The fit's delta (only the Gaussian spends it).
    label_range : tuple of float
    loss : {"squared", "absolute"}
    """

    epsilon: float
    delta: float
    label_range: tuple
    loss: str

    @property
    def width(self):
        return self.label_range[1] - self.label_range[0]


def _no_params(setting):
    return {}


def _pure_spend(name, setting, params):
    return PrivacySpend.leaf(name, setting.epsilon)


def _no_kwargs(setting, params, prior):
    return {}


def _unit_moments(variance):
    """An unbiased release (``E[z | y] = clip(y)``) of noise variance ``variance(...)``."""
    return lambda setting, params, prior: (1.0, 0.0, variance(setting, params, prior))


@dataclass(frozen=True)
class Randomizer:
    """One randomizer of real labels and everything an estimator needs of it.

    Attributes
    ----------
    name : str
        The ledger record's ``mechanism``.
    release : callable
        ``release(y, *, epsilon, label_range, random_state, **kwargs)``, the
        mechanism of :mod:`sklearn_labeldp.mechanisms`.
    plan : callable (setting) -> dict
        Public parameters resolved before the charge (noise scales), recorded
        in ``mechanism_params_``.
    spend : callable (name, setting, params) -> PrivacySpend
        The release's ledger record, described where a tight total can
        compose it exactly.
    kwargs : callable (setting, params, prior) -> dict
        The release's own keyword arguments besides ``epsilon`` and
        ``label_range``.
    moments : callable (setting, params, prior) -> (scale, shift, shift_squares)
        ``E[z | y] = scale b(y) + shift``, ``E[z^2 | y] = scale b(y)^2 +
        shift_squares`` (see
        :class:`~sklearn_labeldp._target_adapters.ReusableRealTargets`).
    prior_values : int or None
        The most values of a DP histogram prior (the randomizer's cost grows
        with them); ``None``: the randomizer uses no prior.
    bins : callable (setting, prior) -> dict, default=None
        Parameters that follow from the prior (RR-on-Bins' outputs), resolved
        as soon as the prior is known: at planning for a public prior, after
        the DP histogram's release otherwise.
    shrinks : bool, default=False
        Whether the release shrinks towards the prior's mean (``scale < 1``),
        which ``debias`` may undo.
    vote_inflation : callable (setting, params) -> float, default=None
        The factor ``rho >= 1`` by which the release's noise multiplies the
        neighbours of the default k-NN base (``10 rho``, see
        :func:`~sklearn_labeldp.regression._noisy_labels.default_n_neighbors`),
        from public quantities only; ``None``: 1.
    """

    name: str
    release: Callable
    plan: Callable
    spend: Callable
    kwargs: Callable
    moments: Callable
    prior_values: int | None = None
    bins: Callable | None = None
    shrinks: bool = False
    vote_inflation: Callable | None = None

    @property
    def uses_prior(self):
        return self.prior_values is not None


def _gaussian_plan(setting):
    # The noise gaussian_label draws, by the exact profile: the record's budget is
    # then the one its description (gaussian = width / sigma) implies.
    sigma = gaussian_label_sigma(setting.epsilon, setting.delta, setting.width, method="exact")
    return {"noise_scale": sigma, "rho": gaussian_rho(setting.width, sigma),
            "gaussian_mu": setting.width / sigma}


def _gaussian_spend(name, setting, params):
    # One label moves by at most the range: a Gaussian mechanism of sensitivity
    # mu noise stds, described so that a tight total composes it.
    return PrivacySpend.leaf(name, setting.epsilon, setting.delta, rho=params["rho"],
                             description=("gaussian", params["gaussian_mu"]))


RANDOMIZERS = {
    "rr_on_bins": Randomizer(
        name="RR-on-Bins",
        release=rr_on_bins,
        plan=_no_params,
        spend=_pure_spend,
        kwargs=lambda setting, params, prior: {"prior": prior, "loss": setting.loss},
        moments=lambda setting, params, prior: rr_on_bins_moments(params["bin_outputs"],
                                                                  setting.epsilon),
        prior_values=64,
        bins=lambda setting, prior: {"bin_outputs": optimal_bins(
            epsilon=setting.epsilon, prior=prior, label_range=setting.label_range,
            loss=setting.loss)[0]},
        shrinks=True,
        # coth(eps / 2), the square root of two-class randomized response's
        # factor: its bins are fitted to the prior, and the classifiers' full
        # factor overshot (see _noisy_labels.default_n_neighbors).
        vote_inflation=lambda setting, params: math.sqrt(rr_vote_inflation(setting.epsilon, 2)),
    ),
    "unbiased": Randomizer(
        name="optimal unbiased randomizer",
        release=unbiased_randomizer,
        plan=_no_params,
        spend=_pure_spend,
        kwargs=lambda setting, params, prior: {"prior": prior},
        moments=_unit_moments(lambda setting, params, prior: unbiased_variance(
            setting.epsilon, prior, setting.label_range)),
        # As many values as RR-on-Bins: its column generation solves 64 values in
        # at most 0.13 s (benchmarks/unbiased.py); 17 before, when the fixed-grid
        # program grew about cubically with them.
        prior_values=64,
        vote_inflation=lambda setting, params: spread_inflation(
            two_output_variance(setting.epsilon)),
    ),
    "laplace": Randomizer(
        name="Laplace label noise",
        release=laplace_label,
        plan=lambda setting: {"noise_scale": setting.width / setting.epsilon},
        # One label moves by at most the range, epsilon noise scales.
        spend=lambda name, setting, params: PrivacySpend.laplace(setting.epsilon,
                                                                  mechanism=name),
        kwargs=_no_kwargs,
        moments=_unit_moments(lambda setting, params, prior: 2.0 * params["noise_scale"] ** 2),
        vote_inflation=lambda setting, params: spread_inflation(
            2.0 * (params["noise_scale"] / setting.width) ** 2),
    ),
    "gaussian": Randomizer(
        name="Gaussian label noise",
        release=gaussian_label,
        plan=_gaussian_plan,
        spend=_gaussian_spend,
        kwargs=lambda setting, params, prior: {"delta": setting.delta, "method": "exact"},
        moments=_unit_moments(lambda setting, params, prior: params["noise_scale"] ** 2),
        vote_inflation=lambda setting, params: spread_inflation(
            (params["noise_scale"] / setting.width) ** 2),
    ),
    "staircase": Randomizer(
        name="staircase label noise",
        release=staircase_label,
        plan=lambda setting: {"gamma": staircase_gamma(setting.epsilon, loss=setting.loss)},
        spend=_pure_spend,
        kwargs=lambda setting, params, prior: {"gamma": params["gamma"]},
        moments=_unit_moments(lambda setting, params, prior: staircase_variance(
            setting.epsilon, params["gamma"], setting.width)),
        vote_inflation=lambda setting, params: spread_inflation(
            staircase_variance(setting.epsilon, params["gamma"], 1.0)),
    ),
}


def release_moments(mechanism, params, *, prior, label_range):
    """``(scale, shift, shift_squares)`` of a fitted randomizer's release.

    Parameters
    ----------
    mechanism : str
        A key of :data:`RANDOMIZERS`.
    params : dict
        The fit's ``mechanism_params_`` (``"release_epsilon"`` and the row's
        own parameters).
    prior : tuple (values, probabilities) or None
        The prior the randomizer used.
    label_range : tuple of float

    Returns
    -------
    scale, shift, shift_squares : float
        ``E[z | y] = scale b(y) + shift`` and ``E[z^2 | y] = scale b(y)^2 +
        shift_squares``; for the unbiased randomizer, whose variance depends on
        the label, ``shift_squares`` is its variance averaged over the prior.
        The additive mechanisms' releases lie on a lattice of about ``2^-21``
        of the range, which adds about ``step^2 / 12`` to the variance: left
        out, some ``10^-13`` of the squared range.
    """
    # The moments read the randomizer's epsilon, the range and the recorded
    # parameters only; the loss and delta were spent on those parameters.
    setting = RandomizerSetting(params["release_epsilon"], 0.0, tuple(label_range), "squared")
    return RANDOMIZERS[mechanism].moments(setting, params, prior)


def resolve_debias(debias, mechanism, scale, n_samples):
    """The correction of RR-on-Bins' shrinkage that a fit applies.

    Parameters
    ----------
    debias : {"auto", "none", "targets", "predictions"}
        The parameter; a value other than ``"auto"`` is returned as given.
    mechanism : str
        A key of :data:`RANDOMIZERS`.
    scale : float
        ``p - q`` of RR-on-Bins (1 for the unbiased mechanisms).
    n_samples : int
        The number of released labels.

    Returns
    -------
    {"none", "targets", "predictions"}
        ``"auto"`` is ``"none"`` for a randomizer that does not shrink
        (nothing to undo), and for one that does (RR-on-Bins)
        ``"predictions"`` when ``n (p - q)^2 >= 50``
        (:data:`AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES`), else ``"none"``: below,
        the debiased model's variance costs more than the shrinkage.
    """
    if debias != "auto":
        return debias
    if (not RANDOMIZERS[mechanism].shrinks
            or n_samples * scale**2 < AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES):
        return "none"
    return "predictions"
