"""Ledger descriptions: one row per kind of mechanism a record can describe.

A record (:class:`~sklearn_labeldp.accounting.PrivacySpend`) may describe the
mechanism that ran exactly, in its own field ``description``: a
:class:`MechanismDescription`, a kind (a key of :data:`DESCRIPTIONS`) and its
value, kept apart from the record's free-form public ``params``. The kind's row
holds everything the accounting does with it:

* ``epsilons(value, delta)``: the epsilon(s) a record at ``delta`` may state
  (the rule its ``PrivacySpend`` constructor uses), after validating
  ``value``; a record stating any other budget is refused, so that the plain
  sum (its budget) and the tight composition (its description) never
  disagree;
* ``pure``: whether the record's delta must be 0;
* ``pair(value)``: the hashable arguments of a dominating pair of the
  mechanism (Zhu, Dong and Wang 2022);
* either ``responses(*pair)``: for a mechanism that is a product of K-ary
  randomized responses, their ``(epsilon, n_outputs, count)`` (``_pld.py``
  composes those itself, on a grid of its choice), or ``pld(*pair, count,
  interval)``: dp-accounting's privacy loss distribution of ``count``
  compositions of that pair on the grid of losses ``interval``.

An unknown kind is refused with the list of the known ones. A new kind is a
row, its ``PrivacySpend`` constructor and its tests (see "A mechanism's exact
description for tight totals" in the developers' guide).
"""

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..utils import check_int, check_nonnegative, check_positive
from ._gaussian import gaussian_epsilon
from ._subsampled import _dp_accounting, subsampled_spend_epsilons

__all__ = ["DESCRIPTIONS", "DISCRETISATION", "Description", "MechanismDescription"]

# dp-accounting's default grid of privacy-loss values.
DISCRETISATION = 1e-4


@dataclass(frozen=True)
class Description:
    """One kind of described mechanism (see the module docstring)."""

    epsilons: Callable
    pure: bool
    pair: Callable
    pld: Callable | None = None
    responses: Callable | None = None


@dataclass(frozen=True)
class MechanismDescription:
    """The exact description of a record's mechanism: a kind of :data:`DESCRIPTIONS` and its value.

    A record carrying one is composed through its dominating pair by
    :meth:`~sklearn_labeldp.accounting.BudgetAccountant.total` with a
    ``slack``, and its budget must be one that the description implies at
    the record's delta (the record is refused otherwise). The
    ``PrivacySpend`` constructor named after each kind builds both.

    Parameters
    ----------
    kind : str
        One of ``"randomized_response"`` (value ``(epsilon, n_outputs)``),
        ``"subsampled_gaussian_label"`` and ``"subsampled_gaussian"``
        (``(noise_multiplier, sample_rate, steps)``), ``"gaussian"`` (``mu``),
        ``"laplace"`` (``(epsilon, count)``), ``"rappor"`` and
        ``"bounded_range"`` (``epsilon``).
    value : object
        The kind's parameters, validated when a record is built with it.

    Examples
    --------
    >>> from sklearn_labeldp.accounting import MechanismDescription, PrivacySpend
    >>> spend = PrivacySpend.leaf("RR", 0.5, description=("randomized_response", (0.5, 3)))
    >>> spend.description
    MechanismDescription(kind='randomized_response', value=(0.5, 3))
    >>> MechanismDescription("gausian", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: unknown mechanism description kind 'gausian'; the known kinds are ...
    """

    kind: str
    value: object

    def __post_init__(self):
        if self.kind not in DESCRIPTIONS:
            raise ValueError(
                f"unknown mechanism description kind {self.kind!r}; the known kinds are "
                f"{', '.join(map(repr, DESCRIPTIONS))}."
            )

    @property
    def row(self):
        """The kind's :class:`Description` row."""
        return DESCRIPTIONS[self.kind]

    def implied(self, delta):
        """The ``(epsilon, delta)`` budgets a record at ``delta`` may state (checks ``value``)."""
        row = self.row
        # A generator: a row may compute its costlier bounds only if asked for them.
        return ((epsilon, 0.0 if row.pure else delta)
                for epsilon in row.epsilons(self.value, delta))

    def pair(self):
        """The hashable ``(kind, *arguments)`` of a dominating pair of the mechanism."""
        return (self.kind, *self.row.pair(self.value))


# ----------------------------------------------------------------- validation


def _epsilon(key, epsilon):
    return check_positive(epsilon, f"description {key!r}: epsilon", allow_zero=True)


def _two(key, value, names):
    if not isinstance(value, tuple) or len(value) != 2:
        raise ValueError(f"description {key!r}: must be a tuple ({names}); got {value!r}.")
    return value


def _count(key, name, count, minimum):
    return check_int(count, f"description {key!r}: {name}", minimum=minimum)


# --------------------------------------------------------- loss distributions


def _identity(interval):
    return _dp_accounting().pld.privacy_loss_distribution.identity(
        value_discretization_interval=interval)


def _self_compose(one, count):
    # Composed here, not through SelfComposedDpEvent: dp-accounting 0.6's PLD
    # accountant composes a RandomizedResponseDpEvent once whatever its count.
    return one.self_compose(count) if count > 1 else one


@functools.lru_cache(maxsize=64)
def _bounded_range(epsilon, interval):
    """The dominating pair of every ``epsilon``-bounded-range mechanism, as a PLD.

    Its privacy loss has the density ``e^((epsilon + l) / 2) / (2 (e^epsilon -
    1))`` on ``[-epsilon, epsilon]`` under the first law (and, the pair being
    symmetric, the mirror image under the second). Pessimistic discretisation:
    the mass of each grid interval goes to its upper end.
    """
    if epsilon == 0:
        return _identity(interval)
    h = interval
    index = np.arange(math.ceil(-epsilon / h), math.ceil(epsilon / h) + 1)
    upper = np.minimum(index * h, epsilon)
    lower = np.maximum((index - 1) * h, -epsilon)
    # The loss's distribution function is expm1((epsilon + l) / 2) / expm1(epsilon).
    mass = (np.expm1((epsilon + upper) / 2) - np.expm1((epsilon + lower) / 2)) / math.expm1(
        epsilon)
    return _dp_accounting().pld.privacy_loss_distribution.PrivacyLossDistribution.\
        create_from_rounded_probability(
            dict(zip(index.tolist(), mass.tolist(), strict=True)), 0.0, h,
            pessimistic_estimate=True, symmetric=True,
        )


@functools.lru_cache(maxsize=64)
def _subsampled_step(sigma, q, replace_one, interval):
    """One Poisson-subsampled Gaussian step's PLD, cached.

    A ceiling check with a slack composes the same DP-SGD run again at every
    spend, with a growing count.
    """
    dpa = _dp_accounting()
    relation = dpa.NeighboringRelation
    return dpa.pld.privacy_loss_distribution.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=interval,
        neighboring_relation=relation.REPLACE_ONE if replace_one else relation.ADD_OR_REMOVE_ONE,
    )


def _laplace_pld(epsilon, per_record, count, interval):
    if epsilon == 0:
        return _identity(interval)
    # Lap(0, 1 / epsilon) against Lap(1, 1 / epsilon): the scale per unit shift.
    one = _dp_accounting().pld.privacy_loss_distribution.from_laplace_mechanism(
        1.0 / epsilon, sensitivity=1.0, value_discretization_interval=interval)
    return _self_compose(one, per_record * count)


def _gaussian_pld(mu, count, interval):
    if mu == 0:  # a release no label moves
        return _identity(interval)
    # count Gaussians of sensitivity mu are one of sensitivity sqrt(count) mu.
    return _dp_accounting().pld.privacy_loss_distribution.from_gaussian_mechanism(
        1.0 / (math.sqrt(count) * mu), value_discretization_interval=interval)


# ----------------------------------------------------------------- the rows


def _randomized_response_epsilons(value, delta):
    epsilon, n_outputs = _two("randomized_response", value, "epsilon, n_outputs")
    _count("randomized_response", "n_outputs", n_outputs, 2)
    return [_epsilon("randomized_response", epsilon)]


def _laplace_epsilons(value, delta):
    epsilon, count = _two("laplace", value, "epsilon, count")
    return [_epsilon("laplace", epsilon) * _count("laplace", "count", count, 1)]


def _gaussian_epsilons(mu, delta):
    # The exact privacy profile at the record's delta (Balle and Wang 2018).
    mu = check_nonnegative(mu, "description 'gaussian'")
    return [gaussian_epsilon(mu, delta) if delta > 0 or mu == 0 else math.inf]


def _subsampled(key, replace_one):
    return Description(
        # Lazy: the cheap Renyi-DP bound first, the PLD's only if needed.
        epsilons=lambda value, delta: subsampled_spend_epsilons(value, delta, key),
        pure=False,
        pair=lambda value: (*(float(v) for v in value[:2]), int(value[2]), replace_one),
        pld=lambda sigma, q, steps, replace, count, interval: _subsampled_step(
            sigma, q, replace, interval).self_compose(steps * count),
    )


def _pure_epsilon_row(key, **composition):
    return Description(
        epsilons=lambda epsilon, delta: [_epsilon(key, epsilon)],
        pure=True,
        pair=lambda epsilon: (float(epsilon),),
        **composition,
    )


DESCRIPTIONS = {
    # K-ary randomized response (Warner 1965): its two output laws.
    "randomized_response": Description(
        epsilons=_randomized_response_epsilons,
        pure=True,
        pair=lambda value: (float(value[0]), int(value[1])),
        responses=lambda epsilon, n_outputs: ((epsilon, n_outputs, 1),),
    ),
    # DP-SGD under a label change (replace one), then under add/remove.
    "subsampled_gaussian_label": _subsampled("subsampled_gaussian_label", True),
    "subsampled_gaussian": _subsampled("subsampled_gaussian", False),
    # A Gaussian of sensitivity mu noise stds: N(0, 1) against N(mu, 1).
    "gaussian": Description(
        epsilons=_gaussian_epsilons,
        pure=False,
        pair=lambda mu: (float(mu),),
        pld=_gaussian_pld,
    ),
    # count Laplace releases, each moved by at most epsilon noise scales.
    "laplace": Description(
        epsilons=_laplace_epsilons,
        pure=True,
        pair=lambda value: (float(value[0]), int(value[1])),
        pld=_laplace_pld,
    ),
    # RAPPOR: two bits move, each binary randomized response at epsilon / 2.
    "rappor": _pure_epsilon_row("rappor", responses=lambda epsilon: ((epsilon / 2.0, 2, 2),)),
    # An epsilon-bounded-range selection (Durfee and Rogers 2019).
    "bounded_range": _pure_epsilon_row(
        "bounded_range", pld=lambda epsilon, count, interval: _self_compose(
            _bounded_range(epsilon, interval), count)),
}
