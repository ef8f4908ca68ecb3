"""The optimal unbiased randomizer for real labels (Badanidiyuru et al. 2023).

An unbiased randomizer releases ``M(y)`` with ``E[M(y)] = y`` for every label
``y``: a model fitted by least squares on its outputs estimates ``E[y | x]``
without bias, whatever the noise. Badanidiyuru, Ghazi, Kamath, Kumar, Leeman,
Manurangsi, Varadarajan and Zhang (NeurIPS 2023) find the one of least
variance under a prior by a linear program over a discretised output set;
this module solves that program with scipy's HiGHS and turns its solution
into a law that meets the ``e^eps`` ratio exactly (the program's solution
meets it only up to the solver's tolerance).

A label between two points of the input grid is first rounded at random to
one of them, with the probabilities that keep its mean: a mixture of two rows
of an eps-DP channel, so still eps-DP (each output's probability is a convex
combination of entries of its column, all within a factor ``e^eps`` of each
other), and still unbiased.
"""

import functools
import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ..utils import (
    check_generator,
    check_int,
    check_label_range,
    check_positive,
    check_value_prior,
    is_dask,
)
from ._dask import map_mechanism
from ._regression import _clipped_labels

__all__ = ["unbiased_randomizer", "unbiased_randomizer_distribution"]

# HiGHS's feasibility tolerance: the program's ratio and unbiasedness constraints
# hold to about this (in units of the label range); the repair below makes the
# ratio exact, and the bias stays of this order.
_LP_TOLERANCE = 1e-10
# The repair's mixing weight is taken this much above the least one that works,
# so that the rounding of the mixture itself cannot undo it.
_REPAIR_SAFETY = 1e-9


def _output_grid(values, epsilon, n_outputs):
    """Candidate outputs, in units of the label range (inputs in ``[0, 1]``).

    An unbiased randomizer must release values outside the label range: debiased
    binary randomized response on ``{0, 1}`` releases ``-w`` and ``1 + w`` with
    ``w = 1 / (e^eps - 1)``, and any label in ``[0, 1]`` can be rounded
    unbiasedly to ``{0, 1}`` first, so these two outputs always admit an
    unbiased eps-DP channel. The optimum spreads further: at large epsilon its
    extreme outputs lie several ``w`` beyond the range (on a 33-value prior at
    eps = 8, capping the outputs at ``4 w`` triples the optimal variance). So
    half the grid covers ``[0, 1]`` evenly, and each quarter a tail from
    ``min(w, 1) / 64`` to ``16 w`` beyond one end, geometrically spaced; the
    grid also holds ``-w``, ``1 + w`` and the inputs (the outputs of the
    near-identity channel a large epsilon allows).
    """
    w = 1.0 / math.expm1(epsilon)
    tail = np.geomspace(min(w, 1.0) / 64, 16 * w, max(n_outputs // 4, 1))
    inside = np.linspace(0.0, 1.0, max(n_outputs - 2 * tail.size, 2))
    return np.unique(np.concatenate([-tail, [-w], inside, values, [1 + w], 1 + tail]))


@functools.lru_cache(maxsize=32)
def _solve(epsilon, values, probabilities, n_outputs):
    """The program of Badanidiyuru et al. (2023) on a unit-range grid, and its repair.

    Variables: the channel ``M[i, o]`` (input ``values[i]``, output ``o``) and,
    per output, ``f_o``, a floor for its column. Minimise ``sum_i p_i sum_o
    M[i, o] (o - v_i)^2`` subject to ``sum_o M[i, o] = 1``, ``sum_o o M[i, o] =
    v_i`` (unbiased), ``f_o <= M[i, o] <= e^eps f_o``: the ratio constraints
    between any two inputs, with ``2 n m`` rows instead of ``n^2 m``. Cached:
    the arguments are public numbers, and a fit on the same grid and prior
    solves the same program.

    Returns the outputs (shifted by the repair) and the exact law, unit range.
    """
    values = np.asarray(values)
    probabilities = np.asarray(probabilities)
    outputs = _output_grid(values, epsilon, n_outputs)
    n, m = values.size, outputs.size
    cost = np.concatenate([(probabilities[:, None] * (outputs[None, :] - values[:, None]) ** 2)
                           .ravel(), np.zeros(m)])
    channel = sp.eye(n * m, format="csr")
    floors = sp.kron(np.ones((n, 1)), sp.eye(m), format="csr")
    upper = sp.vstack([sp.hstack([channel, -math.exp(epsilon) * floors]),
                       sp.hstack([-channel, floors])], format="csr")
    rows = sp.kron(sp.eye(n), np.ones((1, m)))
    means = sp.kron(sp.eye(n), outputs[None, :])
    equal = sp.hstack([sp.vstack([rows, means]), sp.csr_matrix((2 * n, m))], format="csr")
    result = linprog(
        cost, A_ub=upper, b_ub=np.zeros(2 * n * m), A_eq=equal,
        b_eq=np.concatenate([np.ones(n), values]), bounds=(0, None), method="highs",
        options={"primal_feasibility_tolerance": _LP_TOLERANCE,
                 "dual_feasibility_tolerance": _LP_TOLERANCE},
    )
    if result.status != 0:  # pragma: no cover - the program is feasible by construction
        raise RuntimeError(f"the unbiased randomizer's linear program failed: {result.message}")
    law = np.maximum(result.x[: n * m].reshape(n, m), 0.0)
    law /= law.sum(axis=1, keepdims=True)
    law, outputs = _repair(law, outputs, epsilon)
    law.setflags(write=False)
    outputs.setflags(write=False)
    return outputs, law, float(result.fun)


def _repair(law, outputs, epsilon):
    """Mix ``law`` with the uniform channel until every column's ratio is within ``e^eps``.

    For a column with largest entry ``a`` and smallest ``b``, the mixture
    ``(1 - lam) M + lam / m`` meets the ratio when ``(1 - lam) (a - e^eps b) <=
    lam (e^eps - 1) / m``, i.e. ``lam >= v / (v + (e^eps - 1) / m)`` with ``v =
    max(0, a - e^eps b)``: the uniform channel is 0-DP, and its share pays for
    the program's violation. The mixture's mean is ``(1 - lam) y + lam c``
    (``c`` the outputs' mean), so the outputs are relabelled ``(o - lam c) / (1
    - lam)``: post-processing, which keeps the law over the outputs and makes
    the release unbiased again. The ratio of the final law is then checked as
    computed in floating point, and ``lam`` grown until it holds.
    """
    m = outputs.size
    e = math.exp(epsilon)
    violation = max(float((law.max(axis=0) - e * law.min(axis=0)).max()), 0.0)
    lam = violation / (violation + math.expm1(epsilon) / m) if violation > 0 else 0.0
    lam = min(1.0, lam * (1 + _REPAIR_SAFETY) + _REPAIR_SAFETY)
    while True:
        mixed = (1.0 - lam) * law + lam / m
        mixed /= mixed.sum(axis=1, keepdims=True)
        if (mixed.max(axis=0) <= e * mixed.min(axis=0)).all():
            break
        lam = min(1.0, 2.0 * lam)
    if lam < 1.0:
        outputs = (outputs - lam * outputs.mean()) / (1.0 - lam)
    return mixed, outputs


def _grid(epsilon, prior, label_range, n_outputs):
    """Checked arguments, the input grid (unit range, sorted) and the solved law."""
    epsilon = check_positive(epsilon, "epsilon")
    low, high = check_label_range(label_range)
    values, probabilities, order = check_value_prior(prior, (low, high))
    scale = high - low
    units = (values - low) / scale
    # The ends of the range are inputs too (probability 0 if the prior has none
    # there): a clipped label anywhere in the range is rounded between two inputs.
    grid = np.unique(np.concatenate([[0.0, 1.0], units]))
    weights = np.zeros(grid.size)
    weights[np.searchsorted(grid, units)] = probabilities
    if n_outputs is None:
        n_outputs = int(min(256, max(64, 3 * grid.size)))
    n_outputs = check_int(n_outputs, "n_outputs", minimum=2)
    outputs, law, _ = _solve(float(epsilon), tuple(grid), tuple(weights), n_outputs)
    return (low, high), values, order, grid, outputs, law


def unbiased_randomizer_distribution(*, epsilon, prior, label_range, n_outputs=None):
    """Exact output law of :func:`unbiased_randomizer` for each value of the prior.

    Solves the linear program of Badanidiyuru et al. (2023): over channels
    from the prior's values (and the ends of ``label_range``) into a fine
    output grid, minimise the expected squared error ``E (M(y) - y)^2`` for
    ``y`` drawn from the prior, subject to unbiasedness (``E M(y) = y`` for
    every value) and the eps-DP ratio ``P(M(y) = o) <= e^eps P(M(y') = o)``.
    The solver meets the constraints up to a tolerance of about ``1e-10``; the
    solution is mixed with the uniform channel by the least weight that makes
    every ratio at most ``e^eps`` exactly as computed, and the outputs are
    shifted to undo the mixture's bias (post-processing).

    An unbiased randomizer must release values beyond the range. With ``w =
    (high - low) / (e^eps - 1)``, half the output grid covers the range
    evenly and each quarter a tail from ``min(w, high - low) / 64`` to ``16
    w`` beyond one end, geometrically spaced; ``low - w`` and ``high + w``
    (debiased binary randomized response, so the program is never worse than
    rounding to the ends) and the prior's values are outputs too. The program
    has ``n (m + 1)`` variables and ``2 n m`` inequalities for ``n`` inputs
    and ``m`` outputs; HiGHS solves 17 inputs by 64 outputs in about half a
    second and 33 by 96 in about five: keep the prior's support small (the
    regressors use at most 17 values). Solutions are cached by their (public)
    arguments.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, finite and > 0.
    prior : tuple (values, probabilities)
        Public prior over label values, as for
        :func:`~sklearn_labeldp.mechanisms.rr_on_bins`.
    label_range : tuple (low, high)
        Public range of the labels, ``low < high``.
    n_outputs : int, default=None
        Size of the output grid before the inputs and ``-w``, ``1 + w`` are
        added (>= 2; see above); ``None`` takes three per input, between 64
        and 256.

    Returns
    -------
    outputs : ndarray of shape (n_released,)
        The output values, ascending: the grid after the repair's shift.
    law : ndarray of shape (n_values, n_released)
        Entry ``[i, j]`` is ``P(release = outputs[j] | label = values[i])``,
        the prior's values in the order given. Every entry is positive and
        every column's largest entry is at most ``e^eps`` times its smallest.

    References
    ----------
    .. [1] A. Badanidiyuru, B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi,
       A. Varadarajan, C. Zhang. Optimal unbiased randomizers for regression with
       label differential privacy. NeurIPS 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import unbiased_randomizer_distribution
    >>> prior = ([0.0, 1.0, 2.0, 3.0], [0.25, 0.25, 0.25, 0.25])
    >>> outputs, law = unbiased_randomizer_distribution(epsilon=1.0, prior=prior,
    ...                                                 label_range=(0, 3))
    >>> bool(np.allclose(law @ outputs, prior[0], atol=1e-6))  # unbiased
    True
    >>> bool((law.max(axis=0) <= np.exp(1.0) * law.min(axis=0)).all())  # exactly eps-DP
    True
    """
    (low, high), values, order, grid, outputs, law = _grid(epsilon, prior, label_range,
                                                           n_outputs)
    rows = np.searchsorted(grid, (values - low) / (high - low))
    return low + (high - low) * outputs, law[rows].copy()


def _draw_unbiased(y, *, label_range, grid, outputs, law, random_state):
    """Round ``y`` at random onto the grid, then draw from the law's rows."""
    low, high = label_range
    y = (_clipped_labels(y, label_range) - low) / (high - low)
    rng = check_generator(random_state)
    below = np.clip(np.searchsorted(grid, y, side="right") - 1, 0, grid.size - 2)
    share = (y - grid[below]) / (grid[below + 1] - grid[below])
    rows = below + (rng.random(y.shape[0]) < share)
    cdf = np.cumsum(law, axis=1)
    cdf[:, -1] = np.inf  # a uniform draw above a rounded total of 1 - 1e-16 stays in range
    # The outputs of each input row are drawn together: a loop over the grid's
    # values (tens), not over the examples.
    released = np.empty(y.shape[0], dtype=np.intp)
    draws = rng.random(y.shape[0])
    for row in np.unique(rows):
        chosen = rows == row
        released[chosen] = np.searchsorted(cdf[row], draws[chosen], side="right")
    return low + (high - low) * outputs[released]


def unbiased_randomizer(y, *, epsilon, prior, label_range, n_outputs=None, random_state=None):
    """The optimal unbiased eps-label-DP randomizer (Badanidiyuru et al. 2023).

    A label, clipped to ``label_range``, is rounded at random to one of the
    two nearest values of the grid (the prior's values and the ends of the
    range) with the probabilities that keep its mean, and a release is drawn
    from that value's row of :func:`unbiased_randomizer_distribution`. So
    ``E[release] = y`` for every label in the range (to the solver's
    tolerance, about ``1e-10`` of the range), with the least variance that an
    unbiased eps-DP channel on the grid allows under the prior. Unbiasedness
    costs variance: RR-on-Bins (:func:`~sklearn_labeldp.mechanisms.rr_on_bins`)
    has a smaller expected squared error, but its releases are shrunk towards
    the prior's mean.

    Parameters
    ----------
    y : array-like or dask.array.Array of shape (n_samples,)
        Real labels; values outside ``label_range`` are clipped to it.
    epsilon : float
        Privacy parameter, finite and > 0.
    prior : tuple (values, probabilities)
        Public prior over label values.
    label_range : tuple (low, high)
        Public range of the labels, ``low < high``.
    n_outputs : int, default=None
        See :func:`unbiased_randomizer_distribution`.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,), float64

    References
    ----------
    .. [1] A. Badanidiyuru, B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi,
       A. Varadarajan, C. Zhang. Optimal unbiased randomizers for regression with
       label differential privacy. NeurIPS 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import unbiased_randomizer
    >>> prior = ([0.0, 1.0, 2.0, 3.0], [0.25, 0.25, 0.25, 0.25])
    >>> noisy = unbiased_randomizer(np.full(20_000, 2.5), epsilon=2.0, prior=prior,
    ...                             label_range=(0, 3), random_state=0)
    >>> bool(abs(noisy.mean() - 2.5) < 0.05)
    True
    """
    (low, high), _, _, grid, outputs, law = _grid(epsilon, prior, label_range, n_outputs)
    params = {"label_range": (low, high), "grid": grid, "outputs": outputs, "law": law}
    if is_dask(y):
        return map_mechanism(_draw_unbiased, y, random_state=random_state, **params)
    return _draw_unbiased(y, random_state=random_state, **params)
