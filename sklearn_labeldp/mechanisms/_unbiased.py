"""The optimal unbiased randomizer for real labels (Badanidiyuru et al. 2023).

An unbiased randomizer releases ``M(y)`` with ``E[M(y)] = y`` for every label
``y``: a model fitted by least squares on its outputs estimates ``E[y | x]``
without bias, whatever the noise. Badanidiyuru, Ghazi, Kamath, Kumar, Leeman,
Manurangsi, Varadarajan and Zhang (NeurIPS 2023) find the one of least
variance under a prior by a linear program over a discretised output set.

This module solves the same program with the outputs left free, by column
generation (Gilmore and Gomory 1961). Any eps-DP column ``(P(M(y) = o))_y``
lies between ``f`` and ``e^eps f`` for some ``f``, so it is a mixture of the
box's corners ``f (1 + (e^eps - 1) 1[y in S])``: splitting an output into
such copies changes nothing released. Copies with the same set ``S`` merge
into one output at their weighted mean, which lowers the squared error (the
perspective ``g^2 / f`` is convex), so a channel is a weight ``f_S`` and an
output ``o_S`` per set. The optimal channels have sets that are windows of
consecutive values (Badanidiyuru et al. show one with at most ``2 |Y|``
outputs; the windows slide with the output), so the program is restricted to
windows: the restricted master problem (the channel over the windows found
so far) is solved by HiGHS's primal simplex through ``highspy``, warm-started
as windows are added, and the pricing problem (the window and output of most
negative reduced cost, over all ``n (n + 1) / 2`` windows with the output in
closed form) is a vectorised sweep. The equality rows are written as first
differences across the sorted values, so a window's column has at most six
nonzeros. The program stops when no window's reduced cost is below
``-1e-7`` of the objective, which bounds the gap to the optimum over windows
by as much (the weights sum to at most 1). A grid of more than 64 values
is first solved on one half as fine (its values evenly spread by index, each
value's probability split between its two neighbours there), recursively,
and the fine program starts from that solution: its windows lifted to the
fine grid (the coarse channel interpolated is a mixture of them), and the
windows of least reduced cost under its duals interpolated. The pricing
stays exact over all windows, so the start changes the time, not the
optimum. Every channel it builds is exactly eps-DP by construction (each
column is ``f`` or ``e^eps f``); the repair below only absorbs the rounding
of the row sums.

A label between two points of the input grid is first rounded at random to
one of them, with the probabilities that keep its mean: a mixture of two rows
of an eps-DP channel, so still eps-DP (each output's probability is a convex
combination of entries of its column, all within a factor ``e^eps`` of each
other), and still unbiased.
"""

import functools
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..utils import (
    check_generator,
    check_label_range,
    check_positive,
    check_value_prior,
    is_dask,
)
from ._dask import map_mechanism
from ._regression import _clipped_labels

__all__ = ["unbiased_randomizer", "unbiased_randomizer_distribution"]

# HiGHS's feasibility tolerance: the program's unbiasedness and row sums hold
# to about this (in units of the label range); the repair below makes the
# ratio exact, and the bias stays of this order.
_LP_TOLERANCE = 1e-10
# The master problem's optimality (reduced costs of its own columns) needs less:
# the stopping rule below prices every window exactly, whatever the tolerance,
# and a looser one saves 15-25% of the simplex time (objectives equal to 2e-9).
_DUAL_TOLERANCE = 1e-8
# The repair's mixing weight is taken this much above the least one that works,
# so that the rounding of the mixture itself cannot undo it.
_REPAIR_SAFETY = 1e-9
# Column generation stops when no window's reduced cost is below this share of
# the objective: the objective is then within that share of the optimum.
_GAP = 1e-7
# Windows added per round, per input value; nonbasic windows whose reduced cost
# exceeds this share of the round's most negative one are dropped.
_ADDED_PER_VALUE = 2
_KEPT_REDUCED_COST = 0.1
_MAX_ROUNDS = 2000
# Grids of more than _COARSEST values are first solved on one _COARSENING times
# coarser (recursively); the fine program starts from the coarse windows lifted
# to the fine grid and from the _SEEDED_PER_VALUE windows per value of least
# reduced cost under the coarse duals, interpolated. 1,000 values, eps 0.5-8,
# uniform and peaked priors, 2 shared cores (load 6-7): 0.4-5.5 s against
# 0.9-173 s cold, the same objectives to 2e-8 (benchmarks/unbiased.py).
_COARSEST = 64
_COARSENING = 2
_SEEDED_PER_VALUE = 6


def _window_sums(coefficients, e, starts, ends):
    """``sum_i c_i w_i`` for each window, ``w_i = e`` inside ``[start, end]``, 1 outside.

    ``coefficients`` has one row per coefficient array; returns one row each.
    """
    cumulative = np.concatenate([np.zeros((coefficients.shape[0], 1)),
                                 np.cumsum(coefficients, axis=1)], axis=1)
    inside = cumulative[:, ends + 1] - cumulative[:, starts]
    return cumulative[:, -1:] + (e - 1.0) * inside


def _window_costs(values, probabilities, e, starts, ends, outputs):
    """Expected squared error per unit weight: ``sum_i p_i w_i (o - v_i)^2``."""
    a, b, c = _window_sums(np.stack([probabilities, probabilities * values,
                                     probabilities * values**2]), e, starts, ends)
    return a * outputs**2 - 2.0 * b * outputs + c


def _window_columns(n, e, starts, ends, outputs):
    """The windows' columns in the differenced equality rows (CSC, ``2 n`` rows).

    Rows ``0..n-1`` are the channel's row sums and ``n..2n-1`` its means, each
    replaced by its difference with the row before (the first kept): a window
    ``[a, b]`` then has ``w_0`` in the first row, ``e - 1`` where it starts (if
    ``a > 0``) and ``1 - e`` after it ends (if ``b < n - 1``), times its output
    in the mean rows.
    """
    k = np.arange(starts.size)
    first = np.where(starts == 0, e, 1.0)
    opens, closes = starts > 0, ends < n - 1
    rows = np.concatenate([np.zeros(k.size, dtype=np.intp), starts[opens], ends[closes] + 1])
    columns = np.concatenate([k, k[opens], k[closes]])
    steps = np.concatenate([first, np.full(opens.sum(), e - 1.0), np.full(closes.sum(), 1.0 - e)])
    means = steps * outputs[columns]
    return sp.csc_matrix((np.concatenate([steps, means]),
                          (np.concatenate([rows, rows + n]), np.concatenate([columns, columns]))),
                         shape=(2 * n, k.size))


def _price(values, probabilities, duals, e, windows, count, negative_only=True):
    """The ``count`` windows of least reduced cost, each with its best output.

    Only those of negative reduced cost unless ``negative_only`` is False.

    With ``alpha`` and ``beta`` the duals of the row sums and means (in the
    original rows), a window's reduced cost at output ``o`` is ``sum_i w_i
    h_i(o)``, ``h_i(o) = p_i (o - v_i)^2 - alpha_i - beta_i o``: a quadratic in
    ``o`` minimised in closed form.
    """
    n = values.size
    # Duals of the differenced rows -> duals of the original rows (D^T y).
    alpha, beta = (d - np.append(d[1:], 0.0) for d in (duals[:n], duals[n:]))
    starts, ends = windows
    a, b, c = _window_sums(np.stack([probabilities, -2.0 * probabilities * values - beta,
                                     probabilities * values**2 - alpha]), e, starts, ends)
    outputs = -b / (2.0 * a)
    reduced = c + 0.5 * b * outputs
    count = min(count, reduced.size)
    chosen = np.argpartition(reduced, count - 1)[:count]
    if negative_only:
        chosen = chosen[reduced[chosen] < 0]
    return float(reduced.min()), starts[chosen], ends[chosen], outputs[chosen]


class _Master:
    """The restricted master problem in HiGHS: the channel over the windows so far."""

    def __init__(self, values, probabilities, e):
        import highspy

        self._highspy = highspy
        self.values, self.probabilities, self.e = values, probabilities, e
        n = values.size
        self.model = highspy.Highs()
        self.model.setOptionValue("output_flag", False)
        self.model.setOptionValue("primal_feasibility_tolerance", _LP_TOLERANCE)
        self.model.setOptionValue("dual_feasibility_tolerance", _DUAL_TOLERANCE)
        # Primal simplex: added columns keep the basis primal feasible, so each
        # round continues from it (half the time of HiGHS's default choice at 100
        # values, 6.0 s against 9.5 s at 1,000; benchmarks/unbiased.py).
        self.model.setOptionValue("simplex_strategy", 4)
        # Differenced right-hand sides: row sums 1, 0, ..., 0; means v_0, diff(v).
        rhs = np.concatenate([[1.0], np.zeros(n - 1), values[:1], np.diff(values)])
        empty = np.zeros(0, dtype=np.int32)
        self.model.addRows(2 * n, rhs, rhs, 0, empty, empty, np.zeros(0))
        self.starts = self.ends = np.zeros(0, dtype=np.intp)
        self.outputs = np.zeros(0)

    def add(self, starts, ends, outputs):
        columns = _window_columns(self.values.size, self.e, starts, ends, outputs)
        costs = _window_costs(self.values, self.probabilities, self.e, starts, ends, outputs)
        self.model.addCols(starts.size, costs, np.zeros(starts.size),
                           np.full(starts.size, self._highspy.kHighsInf), columns.nnz,
                           columns.indptr[:-1].astype(np.int32),
                           columns.indices.astype(np.int32), columns.data)
        self.starts = np.concatenate([self.starts, starts])
        self.ends = np.concatenate([self.ends, ends])
        self.outputs = np.concatenate([self.outputs, outputs])

    def solve(self, interior=False):
        """Weights, row duals and objective; a failed warm start is retried cold once.

        ``interior``: by HiGHS's interior point method and crossover (to a
        basis, from which later solves warm-start), for a first solve over
        many columns that are mostly good: at 1,000 values and eps 8 it takes
        a quarter of the primal simplex's time from the slack basis.
        """
        optimal = self._highspy.HighsModelStatus.kOptimal
        if interior:
            self.model.setOptionValue("solver", "ipm")
        self.model.run()
        self.model.setOptionValue("solver", "simplex")
        if self.model.getModelStatus() != optimal:
            self.model.clearSolver()
            self.model.run()
        if self.model.getModelStatus() != optimal:  # pragma: no cover - feasible by construction
            status = self.model.modelStatusToString(self.model.getModelStatus())
            raise RuntimeError(f"the unbiased randomizer's linear program failed: {status}")
        solution = self.model.getSolution()
        return (np.asarray(solution.col_value), np.asarray(solution.row_dual),
                np.asarray(solution.col_dual), self.model.getInfo().objective_function_value)

    def drop(self, unused):
        """Remove nonbasic windows (the basis stays valid)."""
        if unused.any():
            index = np.flatnonzero(unused).astype(np.int32)
            self.model.deleteCols(index.size, index)
            keep = ~unused
            self.starts, self.ends, self.outputs = (self.starts[keep], self.ends[keep],
                                                    self.outputs[keep])


def _coarse_grid(values, probabilities, size):
    """``size`` of the values, evenly spread by index, ends kept, carrying all the mass.

    Each value's probability is split between the two coarse values around
    it in the proportions that keep its mean, so the coarse prior has the
    same mean and nearly the same spread as the fine one.
    """
    coarse = values[np.unique(np.round(np.linspace(0, values.size - 1, size)).astype(np.intp))]
    below = np.clip(np.searchsorted(coarse, values, side="right") - 1, 0, coarse.size - 2)
    share = (values - coarse[below]) / (coarse[below + 1] - coarse[below])
    masses = (np.bincount(below, probabilities * (1.0 - share), coarse.size)
              + np.bincount(below + 1, probabilities * share, coarse.size))
    return coarse, masses


def _refined_duals(coarse, duals, values):
    """Duals of the differenced rows on a coarse grid, interpolated onto a finer one.

    Row ``k >= 1`` of each half is the balance at the boundary between values
    ``k - 1`` and ``k`` (a window starting there minus one ending before),
    so its dual is a potential placed at the boundary's midpoint; the one
    after the last value is 0 and row 0's dual (the first row sum, or mean,
    which every column enters) is kept.
    """
    m = coarse.size
    nodes = np.append((coarse[:-1] + coarse[1:]) / 2, coarse[-1])
    fine = (values[:-1] + values[1:]) / 2
    return np.concatenate([np.concatenate([half[:1],
                                           np.interp(fine, nodes, np.append(half[1:], 0.0))])
                           for half in (duals[:m], duals[m:])])


def _lifted_windows(coarse, values, starts, ends, outputs):
    """The coarse solution's windows on the fine grid, each at its coarse output.

    A fine value between two coarse ones is, in the coarse channel
    interpolated, inside a window with a probability between 0 and 1, so the
    interpolated channel is a mixture of fine windows whose edges fall among
    the fine values around the coarse edges: all of those are returned (a
    few per coarse window). The fine master problem then holds a channel
    about as good as the coarse optimum from its first solve.
    """
    n, m = values.size, coarse.size
    position = np.searchsorted(values, coarse)
    lowest = np.where(starts > 0, position[np.maximum(starts - 1, 0)] + 1, 0)
    highest = np.where(ends < m - 1, position[np.minimum(ends + 1, m - 1)] - 1, n - 1)
    first, last = position[starts], position[ends]
    step = np.arange(int(max((first - lowest).max(), (highest - last).max())) + 1)
    a = (lowest[:, None] + step)[:, :, None]
    b = (last[:, None] + step)[:, None, :]
    keep = (a <= first[:, None, None]) & (b <= highest[:, None, None]) & (a <= b)
    a, b, o = (np.broadcast_to(x, keep.shape)[keep] for x in (a, b, outputs[:, None, None]))
    _, unique = np.unique(a * n + b, return_index=True)
    return a[unique], b[unique], o[unique]


def _optimal_windows(values, probabilities, e):
    """Column generation over windows, started from a coarser grid's solution if large.

    Returns the used windows' starts, ends, outputs and weights, the final
    duals, and the gap left if it stopped at ``_MAX_ROUNDS`` (else None).
    A grid of more than ``_COARSEST`` values is first solved on
    ``_coarse_grid`` (recursively), and the fine master problem starts from
    the coarse windows lifted (``_lifted_windows``) and the windows of least
    reduced cost under the coarse duals, interpolated (``_refined_duals``):
    the optimal windows and outputs change smoothly with the grid, so these
    are close to the optimal ones and few pricing rounds remain.
    """
    n = values.size
    w = 1.0 / (e - 1.0)
    every = np.arange(n)
    windows = np.triu_indices(n)
    master = _Master(values, probabilities, e)
    master.add(np.concatenate([np.zeros(n, dtype=np.intp), every]),
               np.concatenate([every, np.full(n, n - 1)]),
               np.concatenate([np.full(n, -w), np.full(n, 1.0 + w)]))
    if n > _COARSEST:
        coarse, masses = _coarse_grid(values, probabilities,
                                      max(_COARSEST, -(-n // _COARSENING)))
        c_starts, c_ends, c_outputs, _, c_duals, _ = _optimal_windows(coarse, masses, e)
        duals = _refined_duals(coarse, c_duals, values)
        master.add(*_price(values, probabilities, duals, e, windows, _SEEDED_PER_VALUE * n,
                           negative_only=False)[1:])
        master.add(*_lifted_windows(coarse, values, c_starts, c_ends, c_outputs))
    for round_ in range(_MAX_ROUNDS):
        weights, duals, reduced, objective = master.solve(interior=round_ == 0 and n > _COARSEST)
        best, starts, ends, outputs = _price(values, probabilities, duals, e, windows,
                                             _ADDED_PER_VALUE * n)
        if best >= -_GAP * max(1.0, abs(objective)):
            gap = None
            break
        master.drop((weights <= 0) & (reduced > _KEPT_REDUCED_COST * -best))
        master.add(starts, ends, outputs)
    else:  # pragma: no cover - a few dozen rounds in practice
        gap = -best
        weights, duals = master.solve()[:2]
    used = weights > 0
    return (master.starts[used], master.ends[used], master.outputs[used], weights[used], duals,
            gap)


@functools.lru_cache(maxsize=32)
def _solve(epsilon, values, probabilities):
    """The least-variance unbiased eps-DP channel on a unit-range grid, and its repair.

    ``values`` is sorted, starts at 0 and ends at 1. Column generation over
    windows (see the module's docstring), started from the windows that hold
    debiased binary randomized response (prefixes released at ``-w``,
    suffixes at ``1 + w``, ``w = 1 / (e^eps - 1)``), so the first master
    problem is feasible, and on a large grid from the windows a coarser
    grid's solution points to. Cached: the arguments are public numbers, and
    a fit on the same grid and prior solves the same program.

    Returns the outputs (ascending, shifted by the repair), the exact law and
    its expected squared error, unit range.
    """
    values = np.asarray(values)
    probabilities = np.asarray(probabilities)
    e = math.exp(epsilon)
    starts, ends, outputs, weights, _, gap = _optimal_windows(values, probabilities, e)
    if gap is not None:  # pragma: no cover - a few dozen rounds in practice
        warnings.warn(f"the unbiased randomizer's column generation stopped after "
                      f"{_MAX_ROUNDS} rounds, {gap:.2g} from its bound; the channel is "
                      "eps-DP and unbiased but may not have the least variance",
                      ConvergenceWarning, stacklevel=4)
    order = np.argsort(outputs, kind="stable")
    starts, ends = starts[order], ends[order]
    every = np.arange(values.size)
    inside = (every[:, None] >= starts[None, :]) & (every[:, None] <= ends[None, :])
    law = weights[order][None, :] * np.where(inside, e, 1.0)
    law /= law.sum(axis=1, keepdims=True)
    law, outputs = _repair(law, outputs[order], epsilon)
    law.setflags(write=False)
    outputs.setflags(write=False)
    error = float(probabilities @ (law * (outputs[None, :] - values[:, None]) ** 2).sum(axis=1))
    return outputs, law, error


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


def _grid(epsilon, prior, label_range):
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
    outputs, law, _ = _solve(float(epsilon), tuple(grid), tuple(weights))
    return (low, high), values, order, grid, outputs, law


def unbiased_randomizer_distribution(*, epsilon, prior, label_range):
    """Exact output law of :func:`unbiased_randomizer` for each value of the prior.

    Solves the program of Badanidiyuru et al. (2023): over channels from the
    prior's values (and the ends of ``label_range``) to real outputs, minimise
    the expected squared error ``E (M(y) - y)^2`` for ``y`` drawn from the
    prior, subject to unbiasedness (``E M(y) = y`` for every value) and the
    eps-DP ratio ``P(M(y) = o) <= e^eps P(M(y') = o)``. The outputs are not
    fixed in advance: each is chosen with the set of values it favours, by
    column generation over windows of consecutive values (see the module
    :mod:`sklearn_labeldp.mechanisms._unbiased`), to within ``1e-7`` of the
    optimum over such channels. Badanidiyuru et al. show an optimum with at
    most ``2 |Y|`` outputs; the law here has at most that many. A hundred
    values take 0.03 to 0.3 seconds (more at large epsilon, where the
    windows are narrow), a thousand 0.4 to 6 seconds on two busy cores
    (``benchmarks/unbiased.py``).
    Solutions are cached by their (public) arguments.

    Every column of the program's channel is ``f`` or ``e^eps f``, so it is
    eps-DP by construction; its rows sum to 1 up to HiGHS's tolerance (about
    ``1e-10``). The rows are normalised and the law mixed with the uniform
    channel by the least weight that makes every ratio at most ``e^eps``
    exactly as computed, and the outputs shifted to undo the mixture's bias
    (post-processing).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, finite and > 0.
    prior : tuple (values, probabilities)
        Public prior over label values, as for
        :func:`~sklearn_labeldp.mechanisms.rr_on_bins`.
    label_range : tuple (low, high)
        Public range of the labels, ``low < high``.

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
    (low, high), values, order, grid, outputs, law = _grid(epsilon, prior, label_range)
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


def unbiased_randomizer(y, *, epsilon, prior, label_range, random_state=None):
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
    (low, high), _, _, grid, outputs, law = _grid(epsilon, prior, label_range)
    params = {"label_range": (low, high), "grid": grid, "outputs": outputs, "law": law}
    if is_dask(y):
        return map_mechanism(_draw_unbiased, y, random_state=random_state, **params)
    return _draw_unbiased(y, random_state=random_state, **params)
