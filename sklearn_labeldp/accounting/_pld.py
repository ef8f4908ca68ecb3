"""Tight composition of recorded spends through privacy loss distributions.

Every spend whose record describes its mechanism enters as the privacy loss
distribution (PLD) of a dominating pair of that mechanism (Zhu, Dong and Wang
2022); dominating pairs compose, adaptively, by convolving their PLDs, and the
composition's epsilon at a delta is read off the result (Koskela et al. 2020;
Doroshenko et al. 2022, pessimistic discretisation: an upper bound). The
computation is dp-accounting's (the ``accounting`` extra).

A record is described by

* ``params["randomized_response"] = (epsilon, n_outputs)``: K-ary randomized
  response (Warner 1965), the true label kept with probability ``e^epsilon /
  (e^epsilon + K - 1)``, whose replace-one pair is the pair of its two output
  laws;
* ``params["gaussian"] = mu``: a Gaussian mechanism (or a post-processing of
  one) whose sensitivity is ``mu`` times its noise std, the pair ``N(0, 1)``,
  ``N(mu, 1)``;
* ``params["laplace"] = (epsilon, count)``: ``count`` Laplace releases, each
  moved by at most ``epsilon`` noise scales, the product of ``count`` pairs
  ``Lap(0, 1)``, ``Lap(epsilon, 1)`` (ALIBI's one-hot vector: two coordinates
  at ``epsilon / 2``; a Laplace count: one);
* ``params["rappor"] = epsilon``: RAPPOR's unary encoding, whose label change
  moves two bits, each binary randomized response at ``epsilon / 2``: the
  product of two binary randomized responses' pairs;
* ``params["bounded_range"] = epsilon``: an ``epsilon``-bounded-range
  selection (the exponential mechanism; Durfee and Rogers 2019), the pair
  whose privacy loss has the density ``e^((epsilon + l) / 2) / (2 (e^epsilon -
  1))`` on ``[-epsilon, epsilon]`` (the envelope of Dong, Durfee and Rogers
  2020's two-outcome pairs);
* ``params["subsampled_gaussian"] = (sigma, q, steps)``: a DP-SGD run under
  add/remove, and ``params["subsampled_gaussian_label"]``, the same under a
  label change (replace one), as
  :func:`~sklearn_labeldp.accounting.subsampled_gaussian_label_epsilon`;
* nothing, for a pure ``epsilon``-DP record (``delta = 0``): binary randomized
  response at ``epsilon`` dominates every ``epsilon``-DP mechanism (Kairouz, Oh
  and Viswanath 2015), which makes the composition of such records the optimal
  composition theorem's;
* its parts: a sequential node composes its parts' pairs, a parallel node whose
  parts all have the same description is that description (a label change
  reaches one part).

Anything else (an approximate-DP record without a description, e.g. a
zCDP-converted one) composes by the basic sum beside the rest, and so does any
record of epsilon 700 or more, described or pure: a Gaussian's loss
distribution would need a grid of billions of points there, and
``e^epsilon`` overflows.
"""

import functools
import math

import numpy as np

from ._budget import _DESCRIBED_EPSILON
from ._subsampled import _dp_accounting

__all__ = []

# dp-accounting's default grid of privacy-loss values.
_DISCRETISATION = 1e-4


def _description(spend):
    """A hashable description of a dominating pair of ``spend``, or ``None``.

    ``("rr", epsilon, K)``, ``("gaussian", mu)``, ``("laplace", epsilon,
    count)``, ``("rappor", epsilon)``, ``("br", epsilon)``, ``("sg", sigma, q,
    steps, replace_one)`` or ``("seq", descriptions)``.
    """
    params = spend.params
    if spend.composition == "leaf":
        if spend.epsilon >= _DESCRIBED_EPSILON:
            return None
        if "randomized_response" in params:
            epsilon, n_outputs = params["randomized_response"]
            return ("rr", float(epsilon), int(n_outputs))
        if "subsampled_gaussian_label" in params:
            return ("sg", *params["subsampled_gaussian_label"], True)
        if "subsampled_gaussian" in params:
            return ("sg", *params["subsampled_gaussian"], False)
        if "gaussian" in params:
            return ("gaussian", float(params["gaussian"]))
        if "laplace" in params:
            epsilon, count = params["laplace"]
            return ("laplace", float(epsilon), int(count))
        if "rappor" in params:
            return ("rappor", float(params["rappor"]))
        if "bounded_range" in params:
            return ("br", float(params["bounded_range"]))
        return _pure(spend)
    parts = [_description(part) for part in spend.parts]
    if spend.composition == "sequential" and all(d is not None for d in parts):
        return ("seq", tuple(parts))
    if spend.composition == "parallel" and parts and len(set(parts)) == 1 and parts[0]:
        return parts[0]
    return _pure(spend)


def _pure(spend):
    """Binary randomized response at a pure record's epsilon (KOV 2015), else ``None``."""
    if spend.delta == 0 and spend.epsilon < _DESCRIBED_EPSILON:
        return ("rr", float(spend.epsilon), 2)
    return None


@functools.lru_cache(maxsize=256)
def _pld(description, count=1):
    """dp-accounting's PLD of ``count`` compositions of ``description``."""
    dpa = _dp_accounting()
    pld = dpa.pld.privacy_loss_distribution
    kind = description[0]
    if kind == "seq":
        result = pld.identity(value_discretization_interval=_DISCRETISATION)
        for part in description[1]:
            result = result.compose(_pld(part))
        return result.self_compose(count) if count > 1 else result
    if kind == "rr":
        return _self_compose(_randomized_response(description[1], description[2]), count)
    if kind == "rappor":
        # Two bits move, each binary randomized response at epsilon / 2.
        return _randomized_response(description[1] / 2.0, 2).self_compose(2 * count)
    if kind == "br":
        return _self_compose(_bounded_range(description[1]), count)
    if kind == "laplace":
        _, epsilon, per_record = description
        if epsilon == 0:
            return pld.identity(value_discretization_interval=_DISCRETISATION)
        # Lap(0, 1 / epsilon) against Lap(1, 1 / epsilon): the scale per unit shift.
        one = pld.from_laplace_mechanism(
            1.0 / epsilon, sensitivity=1.0, value_discretization_interval=_DISCRETISATION)
        return _self_compose(one, per_record * count)
    if kind == "gaussian":
        if description[1] == 0:  # a release no label moves
            return pld.identity(value_discretization_interval=_DISCRETISATION)
        # count Gaussians of sensitivity mu are one of sensitivity sqrt(count) mu.
        return pld.from_gaussian_mechanism(
            1.0 / (math.sqrt(count) * description[1]),
            value_discretization_interval=_DISCRETISATION,
        )
    _, sigma, q, steps, replace_one = description
    return _subsampled_step(sigma, q, replace_one).self_compose(steps * count)


def _self_compose(one, count):
    # Composed here, not through SelfComposedDpEvent: dp-accounting 0.6's PLD
    # accountant composes a RandomizedResponseDpEvent once whatever its count.
    return one.self_compose(count) if count > 1 else one


@functools.lru_cache(maxsize=64)
def _randomized_response(epsilon, n_outputs):
    """K-ary randomized response's PLD (replace one: its two output laws)."""
    pld = _dp_accounting().pld.privacy_loss_distribution
    if epsilon == 0:
        return pld.identity(value_discretization_interval=_DISCRETISATION)
    # dp-accounting's parametrisation: with probability noise_parameter the
    # output is uniform over the K buckets, else the true one.
    noise = n_outputs / (math.exp(epsilon) + n_outputs - 1)
    return pld.from_randomized_response(
        noise, n_outputs, value_discretization_interval=_DISCRETISATION,
        neighboring_relation=_dp_accounting().NeighboringRelation.REPLACE_ONE,
    )


@functools.lru_cache(maxsize=64)
def _bounded_range(epsilon):
    """The dominating pair of every ``epsilon``-bounded-range mechanism, as a PLD.

    Its privacy loss has the density ``e^((epsilon + l) / 2) / (2 (e^epsilon -
    1))`` on ``[-epsilon, epsilon]`` under the first law (and, the pair being
    symmetric, the mirror image under the second). Pessimistic discretisation:
    the mass of each grid interval goes to its upper end.
    """
    pld = _dp_accounting().pld.privacy_loss_distribution
    if epsilon == 0:
        return pld.identity(value_discretization_interval=_DISCRETISATION)
    h = _DISCRETISATION
    index = np.arange(math.ceil(-epsilon / h), math.ceil(epsilon / h) + 1)
    upper = np.minimum(index * h, epsilon)
    lower = np.maximum((index - 1) * h, -epsilon)
    # The loss's distribution function is expm1((epsilon + l) / 2) / expm1(epsilon).
    mass = (np.expm1((epsilon + upper) / 2) - np.expm1((epsilon + lower) / 2)) / math.expm1(
        epsilon)
    return pld.PrivacyLossDistribution.create_from_rounded_probability(
        dict(zip(index.tolist(), mass.tolist(), strict=True)), 0.0, h,
        pessimistic_estimate=True, symmetric=True,
    )


@functools.lru_cache(maxsize=64)
def _subsampled_step(sigma, q, replace_one):
    """One Poisson-subsampled Gaussian step's PLD, cached.

    A ceiling check with a slack composes the same DP-SGD run again at every
    spend, with a growing count.
    """
    dpa = _dp_accounting()
    relation = dpa.NeighboringRelation
    return dpa.pld.privacy_loss_distribution.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=_DISCRETISATION,
        neighboring_relation=relation.REPLACE_ONE if replace_one else relation.ADD_OR_REMOVE_ONE,
    )


def tight_total(spends, slack):
    """``(epsilon, delta)`` of ``spends``: the described ones composed exactly, the rest summed.

    ``delta`` is every recorded delta plus ``slack``; the described spends'
    composition is read at their own deltas plus ``slack``, and the other
    spends add their ``(epsilon, delta)`` beside it (basic composition of the
    two groups). Equal descriptions are self-composed (one FFT power instead
    of a chain of convolutions).
    """
    counts = {}
    rest_epsilon, rest_delta, described_delta = [], [], []
    for spend in spends:
        description = _description(spend)
        if description is None:
            rest_epsilon.append(spend.epsilon)
            rest_delta.append(spend.delta)
        else:
            counts[description] = counts.get(description, 0) + 1
            described_delta.append(spend.delta)
    epsilon = math.fsum(rest_epsilon)
    if counts:
        pld = None
        for description, count in counts.items():
            part = _pld(description, count)
            pld = part if pld is None else pld.compose(part)
        pld_delta = min(1.0, math.fsum(described_delta) + slack)
        epsilon += max(0.0, float(pld.get_epsilon_for_delta(pld_delta)))
    return epsilon, min(1.0, math.fsum(rest_delta) + math.fsum(described_delta) + slack)
