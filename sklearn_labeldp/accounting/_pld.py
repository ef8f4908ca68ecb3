"""Tight composition of recorded spends through privacy loss distributions.

Every spend whose record describes its mechanism enters as the privacy loss
distribution (PLD) of a dominating pair of that mechanism (Zhu, Dong and Wang
2022); dominating pairs compose, adaptively, by convolving their PLDs, and the
composition's epsilon at a delta is read off the result (Koskela et al. 2020;
Doroshenko et al. 2022, pessimistic discretisation: an upper bound). The
computation is dp-accounting's (the ``accounting`` extra).

A record is described by its ``description``, a
:class:`~sklearn_labeldp.accounting.MechanismDescription` whose kind is a row of
:data:`~sklearn_labeldp.accounting._descriptions.DESCRIPTIONS` (which holds its
validation, the budget it implies and its loss distribution):

* ``("randomized_response", (epsilon, n_outputs))``: K-ary randomized
  response (Warner 1965), the true label kept with probability ``e^epsilon /
  (e^epsilon + K - 1)``, whose replace-one pair is the pair of its two output
  laws;
* ``("gaussian", mu)``: a Gaussian mechanism (or a post-processing of
  one) whose sensitivity is ``mu`` times its noise std, the pair ``N(0, 1)``,
  ``N(mu, 1)``;
* ``("laplace", (epsilon, count))``: ``count`` Laplace releases, each
  moved by at most ``epsilon`` noise scales, the product of ``count`` pairs
  ``Lap(0, 1)``, ``Lap(epsilon, 1)`` (ALIBI's one-hot vector: two coordinates
  at ``epsilon / 2``; a Laplace count: one);
* ``("rappor", epsilon)``: RAPPOR's unary encoding, whose label change
  moves two bits, each binary randomized response at ``epsilon / 2``: the
  product of two binary randomized responses' pairs;
* ``("bounded_range", epsilon)``: an ``epsilon``-bounded-range
  selection (the exponential mechanism; Durfee and Rogers 2019), the pair
  whose privacy loss has the density ``e^((epsilon + l) / 2) / (2 (e^epsilon -
  1))`` on ``[-epsilon, epsilon]`` (the envelope of Dong, Durfee and Rogers
  2020's two-outcome pairs);
* ``("subsampled_gaussian", (sigma, q, steps))``: a DP-SGD run under
  add/remove, and ``"subsampled_gaussian_label"``, the same under a
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

The grid: randomized responses (K-ary, RAPPOR's bits, pure records) are not
discretised by rounding their losses up. K-ary randomized response at
``epsilon`` between two grid points ``a < epsilon <= b`` is dominated by the
mixture that runs it at ``b`` with probability ``lambda`` and at ``a``
otherwise and reveals which: that pair's hockey-stick divergence of order
``e^t`` is the mixture of the two, ``(e^x - e^t)_+ / (e^x + K - 1)`` for ``x =
a, b`` and ``t >= 0``, which is at least the record's for every ``t`` when

    lambda = expm1(epsilon - a) / expm1(b - a) * (e^b + K - 1) / (e^epsilon + K - 1)

(both pairs are symmetric, so ``t >= 0`` suffices), and whose losses ``0, +-a,
+-b`` lie on the grid: the mixtures' composition is computed without a further
rounding. A mixture's mean loss exceeds the record's by ``O(interval^2)``
where rounding each loss up (dp-accounting's pessimistic discretisation,
Meiser and Mohammadi 2018) costs ``O(interval)`` per record, so a ledger of
many records is composed on a grid coarser than dp-accounting's ``1e-4``: a
power of two times ``1e-4`` (at most ``0.0064``) whose estimated cost in the
composed epsilon is at most a thousandth of it and a quarter of what rounding
every record up on ``1e-4`` costs (:meth:`_Parts.steps`; the other records'
distributions, which dp-accounting discretises on the same grid, may cost up
to a step each). The grid is set by the records before a query's last, so
that a charge (the last) composes onto the cached ones. 10,000 distinct
binary randomized responses at epsilon 0.05 to 0.15 compose on ``0.0064`` to
102.661 at delta ``1e-6`` in 0.1 to 0.35 s (on ``0.0004``: 102.612; rounding
each record's losses up on ``1e-4``: 103.111, in 5 to 14 s; two shared cores).
"""

import collections
import math
import threading

import numpy as np
from scipy import signal

from ._budget import _DESCRIBED_EPSILON
from ._descriptions import DESCRIPTIONS, DISCRETISATION
from ._subsampled import _dp_accounting

__all__ = []

# The tail mass a convolution may cut from each end (dp-accounting's default):
# the left tail moves up to the first point kept, the right one to infinity.
_TAIL = 1e-15
# The grid is chosen for an epsilon read at this delta (a smaller one reads it
# further in the tail, where a coarse grid costs more), from these tilts.
_DELTA = 1e-9
_TILTS = np.geomspace(1e-3, 1e4, 64)
# The grid's estimated cost, relative to the composed epsilon, at most.
_TOLERANCE = 1e-3
# The coarsest grid, in steps of DISCRETISATION.
_MAX_STEPS = 64
# Equal randomized responses up to this count are leaves of the batched tree;
# more are composed by repeated squaring.
_REPEAT = 16
# This process's compositions of shared ledgers, by key, the most recently used last.
_SHARED = collections.OrderedDict()
_SHARED_LOCK = threading.Lock()
_SHARED_LEDGERS = 32


def _description(spend):
    """A hashable description of a dominating pair of ``spend``, or ``None``.

    ``(kind, *pair)`` for a leaf with a description (a row of
    :data:`~sklearn_labeldp.accounting._descriptions.DESCRIPTIONS`), ``("randomized_response",
    epsilon, 2)`` for an undescribed pure leaf, or ``("seq", descriptions)``.
    """
    if spend.composition == "leaf":
        if spend.epsilon >= _DESCRIBED_EPSILON:
            return None
        if spend.description is not None:
            return spend.description.pair()
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
        return ("randomized_response", float(spend.epsilon), 2)
    return None


def _tilted(epsilon, n_outputs, counts):
    """Summed log moment generating function of randomized responses' losses, and its slope.

    For K-ary randomized response at ``epsilon`` (arrays, with their
    ``counts``), the loss ``L`` under the first law, at each tilt of
    ``_TILTS``: ``sum log E[e^(t L)]`` and ``sum E_t[L]`` (the mean under the
    tilted law), written without overflow.
    """
    t = _TILTS[None, :]
    e, k, c = epsilon[:, None], n_outputs[:, None], counts[:, None]
    low, middle = np.exp(-e * (1.0 + 2.0 * t)), (k - 2.0) * np.exp(-e * (1.0 + t))
    log_mgf = e * t + np.log1p(low + middle) - np.log1p((k - 1.0) * np.exp(-e))
    slope = e * (1.0 - low) / (1.0 + low + middle)
    return np.sum(c * log_mgf, axis=0), np.sum(c * slope, axis=0)


class _Parts:
    """A multiset of described records, flattened: randomized responses and the rest.

    ``responses`` counts the K-ary randomized responses ``(epsilon, n_outputs)``
    (a row's ``responses``), ``others`` the other leaf descriptions; a
    sequential node adds its parts. :meth:`statistics` summarises them for
    the choice of the grid; :meth:`update` adds another multiset and its
    statistics.
    """

    def __init__(self):
        self.responses = {}
        self.others = {}
        self._statistics = None

    def add(self, description, count=1):
        kind = description[0]
        if kind == "seq":
            for part in description[1]:
                self.add(part, count)
            return
        self._statistics = None
        row = DESCRIPTIONS[kind]
        if row.responses is None:
            self.others[description] = self.others.get(description, 0) + count
            return
        for epsilon, n_outputs, times in row.responses(*description[1:]):
            if epsilon > 0:  # randomized response at 0 releases nothing
                key = (epsilon, n_outputs)
                self.responses[key] = self.responses.get(key, 0) + times * count

    def statistics(self):
        """``(responses, others, log_mgf, slope)``: the counts, and :func:`_tilted`'s sums."""
        if self._statistics is None:
            keys = list(self.responses)
            counts = np.array([self.responses[key] for key in keys], dtype=float)
            self._statistics = (
                int(counts.sum()), sum(self.others.values()),
                *_tilted(np.array([key[0] for key in keys], dtype=float),
                         np.array([key[1] for key in keys], dtype=float), counts))
        return self._statistics

    def update(self, other):
        mine, theirs = self.statistics(), other.statistics()
        for key, count in other.responses.items():
            self.responses[key] = self.responses.get(key, 0) + count
        for key, count in other.others.items():
            self.others[key] = self.others.get(key, 0) + count
        self._statistics = tuple(a + b for a, b in zip(mine, theirs, strict=True))

    def steps(self):
        """The grid's step in units of DISCRETISATION, a power of two.

        A randomized response's mixture costs about ``interval^2 (1 + t) / 8``
        in the composed epsilon read where the composed loss is tilted by
        ``t`` (its log moment generating function grows by about ``t
        interval^2 (1 + t) / 8``, read at the Chernoff point ``t`` whose
        rate is ``log(1 / _DELTA)``); another record's discretisation up to
        half a step. The grid is the coarsest (at most ``_MAX_STEPS``) at
        which these total at most ``_TOLERANCE`` times the epsilon read there
        (the loss at the Chernoff point) and a quarter of what rounding every
        record's losses up on ``DISCRETISATION`` costs (half a step each).
        Where the rate never reaches ``log(1 / _DELTA)`` (few records: the
        epsilon is read near the largest loss, where the mixtures cost up to
        a step each), the grid is ``DISCRETISATION``.
        """
        responses, others, log_mgf, slope = self.statistics()
        rate = _TILTS * slope - log_mgf
        reached = np.flatnonzero(rate >= math.log(1.0 / _DELTA))
        if responses == 0 or len(reached) == 0:
            return 1
        tilt, epsilon = _TILTS[reached[0]], slope[reached[0]]
        a = responses * (1.0 + tilt) / 8.0
        b = others / 2.0
        c = min(_TOLERANCE * epsilon, (responses + others) * DISCRETISATION / 8.0)
        interval = 2.0 * c / (b + math.sqrt(b * b + 4.0 * a * c))
        target = min(_MAX_STEPS, interval / DISCRETISATION)
        return 1 << int(math.floor(math.log2(target))) if target >= 1 else 1


def _mixtures(epsilon, n_outputs, interval):
    """The grid losses and masses of the mixtures dominating K-ary randomized responses.

    For each ``epsilon`` (an array, with ``n_outputs``), the mixture of
    randomized response at the grid points ``a < epsilon <= b`` (see the
    module notes): ``(index, mass)``, both of shape ``(n, 5)``, the losses
    ``-b, -a, 0, a, b`` in grid steps and their masses under the first law.
    """
    upper = np.ceil(epsilon / interval)
    upper += upper * interval < epsilon  # b >= epsilon despite the division's rounding
    lower = upper - 1.0
    b, a = upper * interval, lower * interval
    others = n_outputs - 1.0
    # (e^b + K - 1) / (e^epsilon + K - 1), written without overflow.
    ratio = np.exp(b - epsilon) * (1.0 + others * np.exp(-b)) / (1.0 + others * np.exp(-epsilon))
    weight = np.expm1(epsilon - a) / np.expm1(b - a) * ratio
    weight = np.minimum(1.0, weight * (1.0 + 1e-12))  # never below the least that dominates

    def laws(x):  # the masses of the losses x, -x and 0 of randomized response at x
        tail = np.exp(-x)
        norm = 1.0 + others * tail
        return 1.0 / norm, tail / norm, (n_outputs - 2.0) * tail / norm

    top_b, bottom_b, middle_b = laws(b)
    top_a, bottom_a, middle_a = laws(a)
    rest = 1.0 - weight
    mass = np.stack([weight * bottom_b, rest * bottom_a, weight * middle_b + rest * middle_a,
                     rest * top_a, weight * top_b], axis=1)
    index = np.stack([-upper, -lower, np.zeros_like(upper), lower, upper], axis=1)
    return index.astype(np.int64), mass


def _truncate(lower, probs, infinity):
    """Cut the columns of ``probs`` (rows of masses) whose tail mass is below ``_TAIL / 2``.

    The cut is the same for every row, within each row's allowance: a row's
    left tail is added to its first column kept (its losses rounded up), its
    right tail to its ``infinity`` (Koskela et al. 2020; dp-accounting's
    pessimistic truncation).
    """
    left = np.cumsum(probs, axis=1)
    right = np.cumsum(probs[:, ::-1], axis=1)
    cut_left = int(np.min(np.sum(left <= _TAIL / 2, axis=1)))
    cut_right = int(np.min(np.sum(right <= _TAIL / 2, axis=1)))
    cut_right = min(cut_right, probs.shape[1] - cut_left - 1)
    if cut_left == 0 and cut_right == 0:
        return lower, probs, infinity
    kept = probs[:, cut_left:probs.shape[1] - cut_right].copy()
    if cut_left:
        kept[:, 0] += left[:, cut_left - 1]
    if cut_right:
        infinity = infinity + right[:, cut_right - 1]
    return lower + cut_left, kept, infinity


def _convolve(first, second):
    """Row by row, the distributions of the sums: a batch of convolutions, truncated."""
    lower = first[0] + second[0]
    probs = signal.fftconvolve(first[1], second[1], axes=1)
    np.maximum(probs, 0.0, out=probs)  # the transform's rounding, around 1e-17
    infinity = first[2] + second[2] - first[2] * second[2]
    return _truncate(lower, probs, infinity)


def _compose_rows(lower, probs, infinity):
    """The composition of a batch of rows (``probs`` of shape ``(n, width)``), pairwise.

    A balanced tree: each level convolves the rows in pairs as one batch, so
    ``n`` leaves cost ``log2(n)`` batched transforms.
    """
    while len(probs) > 1:
        if len(probs) % 2:  # an odd row out pairs with the identity
            one = np.zeros((1, probs.shape[1]))
            one[0, 0] = 1.0
            lower = np.append(lower, 0)
            probs = np.vstack([probs, one])
            infinity = np.append(infinity, 0.0)
        lower, probs, infinity = _convolve((lower[0::2], probs[0::2], infinity[0::2]),
                                           (lower[1::2], probs[1::2], infinity[1::2]))
    return lower, probs, infinity


def _power(row, count):
    """``count`` compositions of one row, by repeated squaring."""
    result = None
    while count:
        if count & 1:
            result = row if result is None else _convolve(result, row)
        count >>= 1
        if count:
            row = _convolve(row, row)
    return result


def _responses_pld(responses, interval):
    """dp-accounting's PLD of the composed dominating mixtures of ``responses``.

    ``responses`` maps ``(epsilon, n_outputs)`` to a count. The mixtures' leaf
    rows are built at once; rows of similar width (within a factor of two)
    are composed as one batch, counts above ``_REPEAT`` by squaring, and the
    results pairwise.
    """
    keys = list(responses)
    epsilon = np.array([key[0] for key in keys], dtype=float)
    n_outputs = np.array([key[1] for key in keys], dtype=float)
    counts = np.array([responses[key] for key in keys])
    index, mass = _mixtures(epsilon, n_outputs, interval)
    # Each leaf's own tails: the left one up to its first loss kept, the right to infinity.
    left, right = np.cumsum(mass, axis=1), np.cumsum(mass[:, ::-1], axis=1)[:, ::-1]
    first = np.sum(left <= _TAIL / 2, axis=1)
    last = 4 - np.sum(right <= _TAIL / 2, axis=1)
    rows = np.arange(len(keys))
    infinity = np.where(last < 4, right[rows, np.minimum(last + 1, 4)], 0.0)
    kept = (np.arange(5) >= first[:, None]) & (np.arange(5) <= last[:, None])
    moved = np.where(first > 0, left[rows, np.maximum(first - 1, 0)], 0.0)
    mass = np.where(kept, mass, 0.0)
    mass[rows, first] += moved
    lower = index[rows, first]
    width = index[rows, last] - lower + 1

    parts = []
    repeated = counts > _REPEAT
    for i in np.flatnonzero(repeated):
        row = np.zeros((1, width[i]))
        np.add.at(row[0], np.clip(index[i] - lower[i], 0, width[i] - 1), mass[i])
        parts.append(_power((lower[i:i + 1], row, infinity[i:i + 1]), int(counts[i])))
    single = np.repeat(np.flatnonzero(~repeated), counts[~repeated])
    size = np.ceil(np.log2(width[single])).astype(int)
    for group in np.unique(size):
        members = single[size == group]
        columns = int(width[members].max())
        batch = np.zeros((len(members), columns))
        np.add.at(batch, (np.arange(len(members))[:, None],
                          np.clip(index[members] - lower[members, None], 0, columns - 1)),
                  mass[members])
        parts.append(_compose_rows(lower[members], batch, infinity[members]))
    parts.sort(key=lambda part: part[1].shape[1])
    while len(parts) > 1:
        pairs = [_convolve(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = pairs + parts[len(pairs) * 2:]
    lower, probs, infinity = parts[0]
    pmf = _dp_accounting().pld.pld_pmf.DensePLDPmf(
        interval, int(lower[0]), probs[0], float(infinity[0]), True)
    return _dp_accounting().pld.privacy_loss_distribution.PrivacyLossDistribution(pmf)


def _composed(parts, steps):
    """dp-accounting's PLD of ``parts`` (a :class:`_Parts`) on the grid of ``steps`` steps.

    The responses' mixtures are composed by :func:`_responses_pld`, each other
    description's ``count`` copies by its row's ``pld``; those are then
    composed pairwise, a balanced tree (``O(N log k)`` for ``k`` distributions
    whose composition has ``N`` grid points, where a chain costs ``O(N k)``).
    """
    interval = steps * DISCRETISATION
    plds = [DESCRIPTIONS[description[0]].pld(*description[1:], count, interval)
            for description, count in parts.others.items()]
    if parts.responses:
        plds.append(_responses_pld(parts.responses, interval))
    if not plds:
        return _dp_accounting().pld.privacy_loss_distribution.identity(
            value_discretization_interval=interval)
    while len(plds) > 1:
        pairs = [plds[i].compose(plds[i + 1]) for i in range(0, len(plds) - 1, 2)]
        plds = pairs + plds[len(pairs) * 2:]
    return plds[0]


class Composition:
    """The composed PLD of an append-only ledger's described records, kept between calls.

    A ledger only grows, so the composition of its records so far is the
    prefix of every later query: a query composes the cached prefix with the
    records added since (a charge: one record), instead of the whole ledger.
    The cache holds the composition of all but a query's last description (a
    charge's candidate, which may be refused), on the grid those records set
    (see the module notes); a query whose descriptions do not extend the
    cached ones, or whose records move the grid, rebuilds it. Composition is
    associative, so the result is the same composition as a rebuild, up to
    the pessimistic truncation of each convolution (an upper bound either
    way).

    A ledger that processes share (an SQLite file, a Dask scheduler) has one
    per process: :meth:`shared` by the ledger's key, which is what a pickled
    one carries, so that a process rebuilds the composition once, on its first
    query, whichever handles it unpickles; an unshared one pickles as an empty
    cache.
    """

    def __init__(self, key=None):
        self._key = key
        self._lock = threading.Lock()
        self._descriptions = ()
        self._parts = _Parts()
        self._steps = None
        self._pld = None

    @classmethod
    def shared(cls, key):
        """This process's composition of the ledger ``key`` (``None``: a new, unshared one)."""
        if key is None:
            return cls()
        with _SHARED_LOCK:
            composition = _SHARED.pop(key, None) or cls(key)
            _SHARED[key] = composition  # the most recent last
            while len(_SHARED) > _SHARED_LEDGERS:
                _SHARED.popitem(last=False)
        return composition

    def __reduce__(self):
        # A module-level function: cloudpickle (dask's, joblib's) would pickle the
        # bound classmethod by value, with the module's lock among its globals.
        return (_shared_composition, (self._key,))

    def pld(self, descriptions):
        """The PLD of ``descriptions`` (a non-empty list), extending the cache."""
        prefix = tuple(descriptions[:-1])
        with self._lock:
            known = len(self._descriptions)
            if self._pld is None or prefix[:known] != self._descriptions:
                known, self._parts, self._steps, self._pld = 0, _Parts(), None, None
            if len(prefix) > known or self._pld is None:
                added = _Parts()
                for description in prefix[known:]:
                    added.add(description)
                self._parts.update(added)
                steps = self._parts.steps()
                if steps == self._steps:
                    self._pld = self._pld.compose(_composed(added, steps))
                else:
                    self._pld = _composed(self._parts, steps)
                self._descriptions, self._steps = prefix, steps
            base, steps = self._pld, self._steps
        last = _Parts()
        last.add(descriptions[-1])
        return base.compose(_composed(last, steps))


def tight_total(spends, slack, composition=None):
    """``(epsilon, delta)`` of ``spends``: the described ones composed exactly, the rest summed.

    ``delta`` is every recorded delta plus ``slack``; the described spends'
    composition is read at their own deltas plus ``slack``, and the other
    spends add their ``(epsilon, delta)`` beside it (basic composition of the
    two groups). ``composition``, a :class:`Composition`, keeps the composed
    records between calls on a growing ledger; without one the composition
    is built afresh.
    """
    descriptions = []
    rest_epsilon, rest_delta, described_delta = [], [], []
    for spend in spends:
        description = _description(spend)
        if description is None:
            rest_epsilon.append(spend.epsilon)
            rest_delta.append(spend.delta)
        else:
            descriptions.append(description)
            described_delta.append(spend.delta)
    epsilon = math.fsum(rest_epsilon)
    if descriptions:
        pld = (composition or Composition()).pld(descriptions)
        pld_delta = min(1.0, math.fsum(described_delta) + slack)
        epsilon += max(0.0, float(pld.get_epsilon_for_delta(pld_delta)))
    return epsilon, min(1.0, math.fsum(rest_delta) + math.fsum(described_delta) + slack)


def _shared_composition(key):
    """:meth:`Composition.shared`, by reference for the pickles of a composition."""
    return Composition.shared(key)
