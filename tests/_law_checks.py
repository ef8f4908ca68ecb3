"""Checks of a mechanism's output law shared by the mechanism tests."""

import numpy as np
from scipy.stats import chisquare

P_VALUE_FLOOR = 1e-3


def max_likelihood_ratio(law):
    """max over y, y', out of P(out | y) / P(out | y') for a (K, K) law."""
    worst = 1.0
    for out in range(law.shape[1]):
        column = law[:, out]
        possible = column > 0
        if not possible.any():
            continue
        assert possible.all(), f"output {out} is possible for some labels only"
        worst = max(worst, column.max() / column.min())
    return worst


def assert_follows(samples, probabilities, note=""):
    """Chi-square goodness of fit; impossible outputs must never be drawn."""
    n = samples.shape[0]
    counts = np.bincount(samples, minlength=probabilities.shape[0])
    assert counts.shape == probabilities.shape, f"output out of range {note}"
    possible = probabilities > 0
    assert counts[~possible].sum() == 0, f"impossible outputs drawn {note}"
    if possible.sum() == 1:
        assert counts[possible][0] == n
        return
    expected = probabilities[possible] * n
    assert expected.min() >= 5, "too few draws for a chi-square test"
    p_value = chisquare(counts[possible], expected).pvalue
    assert p_value > P_VALUE_FLOOR, f"p = {p_value:.2e} {note}"
