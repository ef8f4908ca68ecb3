"""PATE's vote aggregators, registered by name in :data:`AGGREGATORS`.

Each aggregator is a small object with

- ``calibrate(setting)``: the public noise parameters (a dict, merged into the
  fitted ``mechanism_params_``), from a :class:`VoteSetting` and nothing else;
  the noise is the least that keeps the answers within the setting's
  ``(epsilon, delta)``;
- ``privacy_spend(setting, params)``: the leaf :class:`PrivacySpend` of the
  answers, from the same public information;
- ``answer_std(params)``: the standard deviation, in votes, of the noise on
  each bin of the histogram that picks the answer, and
  ``selection_noise(params)``: ``(std, threshold)`` in votes of the step that
  decides which queries are answered, or None; both for the warning that the
  noise drowns the votes;
- ``aggregate(votes, params, random_state)``: the noisy answers to the vote
  histograms of shape (n_queries, n_classes), ``-1`` for a query left
  unanswered; called only inside ``PrivateLabels.release``.

The mechanisms and their calibration are those of
:mod:`sklearn_labeldp.mechanisms`: LNMax (Papernot, Abadi, Erlingsson,
Goodfellow and Talwar 2017), GNMax and Confident-GNMax (Papernot, Song,
Mironov, Raghunathan, Talwar and Erlingsson 2018).
"""

import math
from dataclasses import dataclass

from .. import mechanisms


@dataclass(frozen=True)
class VoteSetting:
    """The public description of one PATE aggregation: everything an aggregator reads.

    Attributes
    ----------
    epsilon, delta : float
        The budget of the answers; ``delta`` is ignored by the pure-DP LNMax.
    n_queries : int
        Number of queries ``Q``, every one paid for.
    n_teachers : int
    threshold : float
        Confident-GNMax's threshold as a fraction of ``n_teachers``.
    sigma_ratio : float
        Confident-GNMax's ``sigma1 / sigma2``.
    """

    epsilon: float
    delta: float
    n_queries: int
    n_teachers: int
    threshold: float
    sigma_ratio: float


class _LNMax:
    """Laplace(``1 / gamma``) noise on every bin: pure ``epsilon = 2 gamma Q``."""

    def calibrate(self, setting):
        return {"gamma": mechanisms.lnmax_gamma(setting.epsilon, setting.n_queries)}

    def privacy_spend(self, setting, params):
        return mechanisms.lnmax_spend(params["gamma"], setting.n_queries)

    def answer_std(self, params):
        return math.sqrt(2.0) / params["gamma"]

    def selection_noise(self, params):
        return None

    def aggregate(self, votes, params, random_state):
        return mechanisms.lnmax(votes, gamma=params["gamma"], random_state=random_state)


class _GNMax:
    """``N(0, sigma^2)`` noise on every bin (``sigma``: ``noise_scale``).

    The ``Q`` noisy histograms are one Gaussian mechanism of ``mu = sqrt(2 Q) /
    sigma`` (a label change moves one vote between two bins of every query's
    histogram: L2 sensitivity ``sqrt(2)``), recorded and calibrated by its exact
    privacy profile (Balle and Wang 2018); ``rho = mu^2 / 2`` zCDP beside it.
    """

    def calibrate(self, setting):
        sigma = mechanisms.gnmax_sigma(setting.epsilon, setting.delta, setting.n_queries)
        return {"noise_scale": sigma}

    def privacy_spend(self, setting, params):
        return mechanisms.gnmax_spend(params["noise_scale"], setting.n_queries, setting.delta)

    def answer_std(self, params):
        return params["noise_scale"]

    def selection_noise(self, params):
        return None

    def aggregate(self, votes, params, random_state):
        return mechanisms.gnmax(votes, sigma=params["noise_scale"], random_state=random_state)


class _ConfidentGNMax:
    """A noisy threshold on the top vote (``sigma1``), then GNMax (``sigma2``).

    Recorded as ``threshold_noise_scale`` (``sigma1``) and ``noise_scale``
    (``sigma2``), the library's key scheme.

    One Gaussian mechanism of ``mu = sqrt(Q / sigma1^2 + 2 Q / sigma2^2)``
    whatever the number answered (as if every query were answered and the
    unselected answers discarded), recorded and calibrated by its exact privacy
    profile (Balle and Wang 2018); ``rho = mu^2 / 2`` zCDP beside it.
    ``params["threshold"]`` is in votes: the fraction times ``n_teachers``.
    """

    def calibrate(self, setting):
        sigma1, sigma2 = mechanisms.confident_gnmax_sigmas(
            setting.epsilon, setting.delta, setting.n_queries, setting.sigma_ratio
        )
        return {
            "threshold_noise_scale": sigma1,
            "noise_scale": sigma2,
            "threshold": setting.threshold * setting.n_teachers,
        }

    def privacy_spend(self, setting, params):
        return mechanisms.confident_gnmax_spend(
            params["threshold_noise_scale"], params["noise_scale"], setting.n_queries, setting.delta
        )

    def answer_std(self, params):
        return params["noise_scale"]

    def selection_noise(self, params):
        return params["threshold_noise_scale"], params["threshold"]

    def aggregate(self, votes, params, random_state):
        return mechanisms.confident_gnmax(
            votes,
            threshold=params["threshold"],
            sigma1=params["threshold_noise_scale"],
            sigma2=params["noise_scale"],
            random_state=random_state,
        )


AGGREGATORS = {
    "lnmax": _LNMax(),
    "gnmax": _GNMax(),
    "confident_gnmax": _ConfidentGNMax(),
}
