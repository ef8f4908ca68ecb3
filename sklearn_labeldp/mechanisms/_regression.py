"""RR-on-Bins: the optimal randomizer for real-valued labels, and the labels' checks.

RR-on-Bins (Ghazi, Kamath, Kumar, Leeman, Manurangsi, Varadarajan and Zhang,
2023) is the eps-label-DP randomizer that minimises the expected regression
loss under a public global prior over label values. Its baselines (Laplace,
Gaussian and staircase noise) are in ``_regression_noise``, which shares the
check of the labels defined here (the label range's and the value prior's are
:func:`~sklearn_labeldp.utils.check_label_range` and
:func:`~sklearn_labeldp.utils.check_value_prior`).

Every randomizer for real labels clips the labels to ``label_range = (low, high)`` first: the
range is public, so clipping is a label-independent map and costs nothing,
and it bounds the sensitivity of the additive mechanisms by ``high - low``.
"""

import math

import numpy as np

from ..utils import (
    check_generator,
    check_label_range,
    check_option,
    check_positive,
    check_value_prior,
    is_dask,
)
from ._dask import map_mechanism
from ._randomized_response import _draw_randomized_response, _keep_probability

__all__ = ["optimal_bins", "rr_on_bins", "rr_on_bins_distribution"]

_LOSSES = ("squared", "absolute")


# --- argument checks ----------------------------------------------------------


def _clipped_labels(y, label_range):
    """``y`` as a 1-d float64 array clipped to the public ``label_range``."""
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("y must be an array of real numbers.") from None
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, one label per example; got shape {y.shape}.")
    if not np.isfinite(y).all():
        raise ValueError("y must be finite (no NaN or inf).")
    return np.clip(y, *label_range)


# --- RR-on-Bins: the bins -----------------------------------------------------


def _bin_costs(v, p, t, loss):
    """Cost and output value of every bin ``[a, b]`` of the support ``v``.

    With ``t = e^-eps``, RR-on-Bins' expected loss is
    ``sum_j C_j / (1 + (m - 1) t)`` over its ``m`` bins, where bin ``j`` with
    output ``o_j`` costs ``C_j = sum_i p_i (t + (1 - t) [i in bin j]) l(o_j, v_i)``
    (Ghazi et al. 2023: every output is drawn with probability ``1 / (e^eps +
    m - 1)``, its own bin's with ``e^eps`` times that). ``o_j`` minimises
    ``C_j``: a weighted mean for squared loss, a weighted median for absolute
    loss. Entry ``[a, b]`` (``a <= b``) is computed from prefix sums, O(1) per
    bin for squared loss and O(log n) (the median's search) for absolute loss.
    """
    n = v.size
    p0 = np.concatenate(([0.0], np.cumsum(p)))
    p1 = np.concatenate(([0.0], np.cumsum(p * v)))
    start = np.arange(n)[:, None]
    stop = np.arange(1, n + 1)[None, :]
    mass = p0[stop] - p0[start]  # negative for start >= stop: no such bin
    weight = np.where(start < stop, t * p0[-1] + (1 - t) * mass, 1.0)
    first = t * p1[-1] + (1 - t) * (p1[stop] - p1[start])
    if loss == "squared":
        p2 = np.concatenate(([0.0], np.cumsum(p * v * v)))
        second = t * p2[-1] + (1 - t) * (p2[stop] - p2[start])
        output = first / weight
        cost = second - first * output
    else:
        # The weighted median: the first m whose cumulative weight reaches half
        # the total, looked for before, inside or after the bin, where the
        # cumulative weight is t p0[m+1], p0[m+1] - (1 - t) p0[a] or
        # t p0[m+1] + (1 - t) mass.
        half = weight / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            before = np.searchsorted(p0[1:], half / t)
            after = np.searchsorted(p0[1:], (half - (1 - t) * mass) / t)
        inside = np.clip(np.searchsorted(p0[1:], half + (1 - t) * p0[start]), start, stop - 1)
        median = np.where(
            t * p0[start] >= half, before, np.where(t * p0[stop] + (1 - t) * mass < half,
                                                    after, inside)
        )
        median = np.clip(median, 0, n - 1)
        in_bin = np.clip(median + 1, start, stop)
        weight_below = t * p0[median + 1] + (1 - t) * (p0[in_bin] - p0[start])
        first_below = t * p1[median + 1] + (1 - t) * (p1[in_bin] - p1[start])
        output = v[median]
        cost = output * (2 * weight_below - weight) + first - 2 * first_below
    cost[start > stop - 1] = np.inf
    return cost, output


def _spread(v, p, loss):
    """``min_o sum_i p_i l(o, v_i)``: every bin costs at least ``t`` times it."""
    if loss == "squared":
        mean = p @ v
        return p @ (v - mean) ** 2
    median = v[min(np.searchsorted(np.cumsum(p), 0.5), v.size - 1)]
    return p @ np.abs(v - median)


def _partition(v, p, t, loss):
    """The optimal contiguous partition of ``v`` into bins, by dynamic programming.

    ``D_k[i]`` is the least total cost of ``k`` bins covering ``v[:i]``;
    ``D_k[i] = min_a D_{k-1}[a] + C[a, i-1]``, one vectorised (n, n) minimum
    per ``k``. The loss of ``k`` bins is ``D_k[n] / (1 + (k - 1) t)``. Since
    every bin costs at least ``t * spread``, no ``k' >= k`` beats the best so
    far once ``k t spread / (1 + (k - 1) t)`` (increasing in ``k``) reaches it,
    and the search stops there.

    Returns
    -------
    starts : list of int
        First index of each bin, ascending.
    outputs : ndarray of shape (n_bins,)
    """
    n = v.size
    cost, output = _bin_costs(v, p, t, loss)
    floor = t * _spread(v, p, loss) * (1 - 1e-12)
    total = np.full(n + 1, np.inf)
    total[0] = 0.0
    columns = np.arange(n)
    choices, best, best_k = [], np.inf, 1
    for k in range(1, n + 1):
        candidates = total[:n, None] + cost
        choice = candidates.argmin(axis=0)
        total = np.concatenate(([np.inf], candidates[choice, columns]))
        choices.append(choice)
        value = total[n] / (1 + (k - 1) * t)
        if value < best:
            best, best_k = value, k
        if k * floor / (1 + (k - 1) * t) >= best:
            break
    starts, outputs, stop = [], [], n
    for k in range(best_k, 0, -1):
        start = int(choices[k - 1][stop - 1])
        starts.append(start)
        outputs.append(output[start, stop - 1])
        stop = start
    return starts[::-1], np.array(outputs[::-1])


def _bins(epsilon, prior, label_range, loss):
    """Checked arguments and RR-on-Bins' bins.

    Returns
    -------
    values : ndarray, the prior's support, in the order given
    thresholds : ndarray of shape (n_bins - 1,)
        A label goes to bin ``searchsorted(thresholds, y)``.
    bin_outputs : ndarray of shape (n_bins,)
    """
    epsilon = check_positive(epsilon, "epsilon")
    label_range = check_label_range(label_range)
    loss = check_option(loss, "loss", _LOSSES)
    values, probabilities, order = check_value_prior(prior, label_range)
    support = probabilities > 0
    v, p = values[support], probabilities[support]
    # Costs are invariant to a shift and scale by a power of two is exact:
    # centring and scaling keeps the prefix-sum differences well conditioned.
    centre = p @ v
    scale = 2.0 ** math.frexp(label_range[1] - label_range[0])[1]
    starts, outputs = _partition((v - centre) / scale, p, math.exp(-epsilon), loss)
    # A label between two bins goes to the bin of the nearest support value
    # with positive probability (the lower one on a tie).
    thresholds = (v[starts[1:]] + v[np.array(starts[1:]) - 1]) / 2 if len(starts) > 1 else []
    unsorted = np.empty_like(values)
    unsorted[order] = values
    return unsorted, np.asarray(thresholds, dtype=np.float64), outputs * scale + centre


def optimal_bins(*, epsilon, prior, label_range, loss="squared"):
    """The bins of RR-on-Bins: its output values and the bin of each prior value.

    Finds the partition of the prior's support into consecutive bins, and the
    output value of each bin, minimising the expected loss of RR-on-Bins
    (Ghazi et al. 2023). For a fixed partition the loss splits over bins and
    each bin's best output is a weighted mean (squared loss) or a weighted
    median (absolute loss) of the support, with weight ``p_i`` inside the bin
    and ``e^-eps p_i`` outside it; a dynamic program over the support, in
    increasing order, finds the best partition for each number of bins. The
    paper proves that an optimal eps-label-DP randomizer is RR-on-Bins with a
    monotone map, so this is optimal among all eps-label-DP randomizers.

    Complexity: with ``n`` support values of positive probability, the bin
    costs take O(n^2) time (O(n^2 log n) for absolute loss) and the dynamic
    program O(n^2) per number of bins, so O(n^3) time in the worst case and
    O(n^2) memory; the search over the number of bins stops as soon as a
    lower bound on the loss of more bins reaches the best found, which for
    small eps is after a few bins. Discretise a continuous prior (e.g. a
    histogram of a few hundred values) before calling it.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, finite and > 0.
    prior : tuple (values, probabilities)
        Public prior over label values: distinct values in ``label_range``
        and their nonnegative probabilities, summing to 1.
    label_range : tuple (low, high)
        Public range of the labels, ``low < high``.
    loss : {"squared", "absolute"}, default="squared"

    Returns
    -------
    outputs : ndarray of shape (n_bins,)
        The output value of each bin, in the order of the bins (ascending
        inputs). For the losses here they are in ascending order too.
    bin_of_value : ndarray of shape (n_values,), int64
        The bin of each prior value, in the order given. A value with
        probability 0 goes to the bin of the nearest value with positive
        probability (the lower one on a tie), and so does any label between
        two bins.

    See Also
    --------
    rr_on_bins : the randomizer.

    References
    ----------
    .. [1] B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi, A. Varadarajan,
       C. Zhang. Regression with label differential privacy. ICLR 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import optimal_bins
    >>> prior = ([0.0, 1.0, 2.0, 3.0], [0.25, 0.25, 0.25, 0.25])
    >>> outputs, bins = optimal_bins(epsilon=1.0, prior=prior, label_range=(0, 3))
    >>> outputs.round(3), bins
    (array([1.038, 1.962]), array([0, 0, 1, 1]))
    >>> outputs, bins = optimal_bins(epsilon=5.0, prior=prior, label_range=(0, 3))
    >>> bins
    array([0, 1, 2, 3])

    Each output lies between the mean of its bin and the prior's mean: with
    little privacy budget the releases shrink towards the mean.
    """
    values, thresholds, outputs = _bins(epsilon, prior, label_range, loss)
    return outputs, np.searchsorted(thresholds, values).astype(np.int64)


def _draw_on_bins(y, *, epsilon, label_range, thresholds, bin_outputs, random_state):
    """RR over the bins of checked arguments: one dask block, or all of ``y``."""
    y = _clipped_labels(y, label_range)
    rng = check_generator(random_state)
    n_bins = bin_outputs.size
    if n_bins == 1:
        return np.full(y.shape[0], bin_outputs[0])
    codes = np.searchsorted(thresholds, y)
    return bin_outputs[_draw_randomized_response(codes, n_bins, epsilon, rng)]


def rr_on_bins(y, *, epsilon, prior, label_range, loss="squared", random_state=None):
    """RR-on-Bins (Ghazi et al. 2023): the optimal eps-label-DP randomizer for regression.

    Given a public prior over label values, :func:`optimal_bins` splits the
    label range into ``m`` consecutive bins with output values ``o_1, ...,
    o_m``. A label (clipped to ``label_range``) is mapped to its bin ``j``;
    the release is ``o_j`` with probability ``e^eps / (e^eps + m - 1)`` and
    each other bin's output with probability ``1 / (e^eps + m - 1)``:
    randomized response over the bins, eps-label-DP because the bins depend on
    the public prior only. Among all eps-label-DP randomizers it minimises the
    expected squared (or absolute) loss between the release and a label drawn
    from the prior.

    Parameters
    ----------
    y : array-like or dask.array.Array of shape (n_samples,)
        Real labels; values outside ``label_range`` are clipped to it. A
        dask array gives a lazy dask array chunked like ``y``, each block
        drawn from its own generator spawned from ``random_state``.
    epsilon : float
        Privacy parameter, finite and > 0.
    prior : tuple (values, probabilities)
        Public prior over label values (see :func:`optimal_bins`), e.g. a
        DP histogram of the labels or a distribution known beforehand.
    label_range : tuple (low, high)
        Public range of the labels, ``low < high``.
    loss : {"squared", "absolute"}, default="squared"
        The loss the bins are optimised for.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,), float64
        The released labels, each one of the bins' output values.

    See Also
    --------
    rr_on_bins_distribution : the exact output law.
    optimal_bins : the bins.

    References
    ----------
    .. [1] B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi, A. Varadarajan,
       C. Zhang. Regression with label differential privacy. ICLR 2023.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import rr_on_bins
    >>> prior = ([0.0, 1.0, 2.0, 3.0], [0.25, 0.25, 0.25, 0.25])
    >>> rr_on_bins([0.0, 3.0, 7.5], epsilon=40.0, prior=prior, label_range=(0, 3),
    ...            random_state=0)
    array([0., 3., 3.])
    """
    values, thresholds, bin_outputs = _bins(epsilon, prior, label_range, loss)
    params = {
        "epsilon": float(epsilon), "label_range": check_label_range(label_range),
        "thresholds": thresholds, "bin_outputs": bin_outputs,
    }
    if is_dask(y):
        return map_mechanism(_draw_on_bins, y, random_state=random_state, **params)
    return _draw_on_bins(y, random_state=random_state, **params)


def rr_on_bins_distribution(*, epsilon, prior, label_range, loss="squared"):
    """Exact output law of :func:`rr_on_bins` for each value of the prior.

    Parameters
    ----------
    epsilon : float
    prior : tuple (values, probabilities)
    label_range : tuple (low, high)
    loss : {"squared", "absolute"}, default="squared"

    Returns
    -------
    outputs : ndarray of shape (n_outputs,)
        The distinct output values, ascending.
    law : ndarray of shape (n_values, n_outputs)
        Entry ``[i, j]`` is ``P(release = outputs[j] | label = values[i])``,
        the prior's values in the order given. A label between two prior
        values follows the law of the one whose bin it goes to (see
        :func:`optimal_bins`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import rr_on_bins_distribution
    >>> prior = ([0.0, 1.0, 2.0, 3.0], [0.25, 0.25, 0.25, 0.25])
    >>> outputs, law = rr_on_bins_distribution(epsilon=np.log(5), prior=prior,
    ...                                        label_range=(0, 3))
    >>> outputs.round(4)
    array([0.8333, 2.1667])
    >>> law.round(4)
    array([[0.8333, 0.1667],
           [0.8333, 0.1667],
           [0.1667, 0.8333],
           [0.1667, 0.8333]])
    """
    values, thresholds, bin_outputs = _bins(epsilon, prior, label_range, loss)
    outputs, column = np.unique(bin_outputs, return_inverse=True)
    n_bins = bin_outputs.size
    keep = _keep_probability(epsilon, n_bins)
    other = math.exp(-epsilon) * keep  # 1 / (e^eps + m - 1)
    # Randomized response over the bins, then each bin's output: bins that
    # share an output value share its probability.
    over_bins = np.full((values.size, n_bins), other)
    over_bins[np.arange(values.size), np.searchsorted(thresholds, values)] = keep
    law = np.zeros((values.size, outputs.size))
    np.add.at(law.T, column, over_bins.T)
    return outputs, law
